/* What the lab benchmarks (bench_lab.c, bench_lab_capacity.c) share: the loopback-only
 * Cyclone DDS configuration they set, and the DDS domain they run in: `--domain N`, else
 * $RUNLAB_BENCH_DOMAIN, else 232 (outside the tests' 100..230); and each thread's CPU from
 * /proc, by thread name. Header-only (static inline), like bench_util.h. */
#ifndef RL_BENCH_LAB_COMMON_H
#define RL_BENCH_LAB_COMMON_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define BENCH_LAB_DEFAULT_DOMAIN 232

/* Loopback only: no multicast, unicast discovery of peers on 127.0.0.1. */
static const char bench_lab_loopback_config[] =
    "<CycloneDDS><Domain id=\"any\"><General><Interfaces><NetworkInterface name=\"lo\"/>"
    "</Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery>"
    "<ParticipantIndex>auto</ParticipantIndex><Peers><Peer address=\"127.0.0.1\"/></Peers>"
    "</Discovery></Domain></CycloneDDS>";

/* A DDS domain id (0..232) from `text`, or -1. */
static inline int bench_lab_parse_domain(const char *text)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);
    return *text && !*end && v >= 0 && v <= 232 ? (int)v : -1;
}

/* The domain to run in: takes `--domain N` (or `--domain=N`) out of argv (so the caller
 * parses the rest), else $RUNLAB_BENCH_DOMAIN, else BENCH_LAB_DEFAULT_DOMAIN. On a bad
 * value prints what and where on stderr (prefixed with `prog`) and returns -1. */
static inline int bench_lab_domain(const char *prog, int *argc, char **argv)
{
    const char *text = NULL, *where = NULL;
    for (int i = 1; i < *argc; i++) {
        int used = 0;
        if (strcmp(argv[i], "--domain") == 0) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "%s: --domain needs a value (a DDS domain id 0..232)\n", prog);
                return -1;
            }
            text = argv[i + 1];
            used = 2;
        } else if (strncmp(argv[i], "--domain=", 9) == 0) {
            text = argv[i] + 9;
            used = 1;
        }
        if (used) {
            where = "--domain";
            memmove(&argv[i], &argv[i + used], (size_t)(*argc - i - used + 1) * sizeof *argv);
            *argc -= used;
            i--;
        }
    }
    if (!text && (text = getenv("RUNLAB_BENCH_DOMAIN")) && *text)
        where = "RUNLAB_BENCH_DOMAIN";
    if (!where)
        return BENCH_LAB_DEFAULT_DOMAIN;
    int domain = bench_lab_parse_domain(text);
    if (domain < 0)
        fprintf(stderr, "%s: %s: '%s' is not a DDS domain id (0..232)\n", prog, where, text);
    return domain;
}

/* CPU ticks (user + system) of each thread of process `pid` by thread name, summed over
 * threads of one name (BENCH_LAB_THREADS, bench_lab_capacity --threads). */
#define MAX_NAMES 32
typedef struct thread_cpu {
    size_t n;
    char name[MAX_NAMES][20];
    unsigned long long ticks[MAX_NAMES];
} thread_cpu;

static inline void read_thread_cpu(pid_t pid, thread_cpu *tc)
{
    memset(tc, 0, sizeof *tc);
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[600], line[1024];
        snprintf(path, sizeof path, "%s/%s/stat", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t got = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[got] = 0;
        char *open = strchr(line, '('), *close = strrchr(line, ')');
        if (!open || !close || close < open)
            continue;
        char name[20];
        size_t len = (size_t)(close - open - 1) < sizeof name - 1 ? (size_t)(close - open - 1)
                                                                  : sizeof name - 1;
        memcpy(name, open + 1, len);
        name[len] = 0;
        unsigned long long ut = 0, st = 0; /* fields 14 and 15 */
        if (sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) !=
            2)
            continue;
        size_t k = 0;
        while (k < tc->n && strcmp(tc->name[k], name) != 0)
            k++;
        if (k == tc->n) {
            if (tc->n == MAX_NAMES)
                continue;
            snprintf(tc->name[tc->n++], sizeof tc->name[0], "%s", name);
        }
        tc->ticks[k] += ut + st;
    }
    closedir(d);
}

/* Prints each thread name's CPU µs per sample between a and b (threads that started after
 * a count from zero). */
static inline void print_thread_cpu(const char *who, const thread_cpu *a, const thread_cpu *b,
                                    double samples)
{
    if (samples <= 0)
        return;
    double tick_us = 1e6 / (double)sysconf(_SC_CLK_TCK), total = 0;
    printf("  %-11s us/sample:", who);
    for (size_t i = 0; i < b->n; i++) {
        unsigned long long before = 0;
        for (size_t j = 0; j < a->n; j++)
            if (strcmp(a->name[j], b->name[i]) == 0)
                before = a->ticks[j];
        double us = (double)(b->ticks[i] - before) * tick_us / samples;
        total += us;
        if (us >= 0.05)
            printf(" %s %.2f", b->name[i], us);
    }
    printf(" | total %.2f\n", total);
}

#endif
