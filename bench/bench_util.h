/* Helpers shared by the benchmark programs: the monotonic clock, medians, CPU time and
 * this process's resident memory. Header-only (static inline) so each bench stays one
 * program built from one source. */
#ifndef RL_BENCH_UTIL_H
#define RL_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (the upper one for even n); sorts v in place. */
static inline double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    return v[n / 2];
}

/* CPU seconds (user + system) of this process so far, all threads. */
static inline double bench_cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* A field of /proc/self/status in bytes ("VmRSS", "VmHWM"), -1 when unknown. */
static inline long long bench_proc_status_bytes(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long long kb = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ':')
            kb = atoll(line + kl + 1);
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* Resets VmHWM (the peak) to the current VmRSS, so a later VmHWM is the peak since now. */
static inline void bench_reset_peak_rss(void)
{
    FILE *cr = fopen("/proc/self/clear_refs", "w");
    if (cr) {
        fputs("5", cr);
        fclose(cr);
    }
}

#endif
