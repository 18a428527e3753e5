/* Benchmark of perflog's per-cycle calls with logging off (log_performance = false), which
 * the header promises cost "a branch only": timer start/stop, a counter and a total, timed
 * against a baseline of the same number of calls to an empty out-of-line function in the
 * same run. Prints the ratio (target <= 3) and ns per call, medians of 7 rounds. */
#include "runlab/error.h"
#include "runlab/perflog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { N = 2000000, ROUNDS = 7 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The baseline: what any call into a library costs. `noinline` and the volatile sink keep
 * the compiler from removing it. */
static volatile int sink;
__attribute__((noinline)) static void empty_call(rl_perflog *pl, int id)
{
    (void)pl;
    sink = id;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_perflog: %s: %s\n", what, rl_error_last());
    exit(1);
}

int main(void)
{
    char root[] = "/tmp/runlab-bench-perflog-XXXXXX";
    if (!mkdtemp(root))
        return 1;
    rl_perflog_config cfg;
    rl_perflog_config_init(&cfg);
    cfg.root = root;
    cfg.task = "bench";
    cfg.dataset = "none";
    cfg.scene = "s";
    cfg.planner = "p";
    cfg.log_performance = false;
    rl_perflog *pl;
    int timer, counter, total;
    if (rl_perflog_new(&pl, &cfg) < 0 ||
        rl_perflog_declare(pl, NULL, "T", RL_COL_TIMER, "s", NULL, &timer) < 0 ||
        rl_perflog_declare(pl, NULL, "C", RL_COL_COUNTER, "count", NULL, &counter) < 0 ||
        rl_perflog_declare(pl, NULL, "S", RL_COL_TOTAL, "count", NULL, &total) < 0 ||
        rl_perflog_start(pl) < 0)
        die("setup");
    double off[ROUNDS], base[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_s();
        for (int i = 0; i < N; i++) {
            empty_call(pl, timer);
            empty_call(pl, timer);
            empty_call(pl, counter);
            empty_call(pl, total);
        }
        base[r] = (now_s() - t0) / (4.0 * N) * 1e9;
        t0 = now_s();
        for (int i = 0; i < N; i++) {
            rl_perflog_timer_start(pl, timer);
            rl_perflog_timer_stop(pl, timer);
            rl_perflog_count(pl, counter, 1);
            rl_perflog_add(pl, total, 1.0);
        }
        off[r] = (now_s() - t0) / (4.0 * N) * 1e9;
    }
    qsort(off, ROUNDS, sizeof *off, cmp_double);
    qsort(base, ROUNDS, sizeof *base, cmp_double);
    double ratio = off[ROUNDS / 2] / base[ROUNDS / 2];
    printf("perflog logging off: %.2f ns per call, empty call %.2f ns: ratio %.2f (target <= 3) %s\n",
           off[ROUNDS / 2], base[ROUNDS / 2], ratio, ratio <= 3 ? "ok" : "MISSED");
    rl_perflog_free(pl);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_perflog: could not remove %s\n", root);
    return 0;
}
