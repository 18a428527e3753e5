/* Benchmark of sharding (issue 34, item 5): the same short runs as one `runlab bench` and as
 * 4 shards (`--shard K/4`, one after the other, as 4 nodes would run them) joined by `bench
 * merge`, in CPU time (user + system of every process) and wall time, order A B B A so that a
 * drift of the machine's load falls on both. Target: sharding + merge within 5 % of the one
 * process. RL_BENCH_SHARDS_RUNS sets the runs (default 10000: 2 planners x 5000 runs of the
 * example PRM on narrow2d, each a few milliseconds). */
#include "runlab/time.h"

#include <stdbool.h>

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { SHARDS = 4 };

/* Runs argv quietly; adds its CPU seconds to *cpu. The exit code or -1. */
static int run(char *const argv[], double *cpu)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0)
        return -1;
    *cpu += (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
            (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

typedef struct timing {
    double wall, cpu;
} timing;

static int one_process(const char *spec, const char *root, timing *t)
{
    char *argv[] = {RL_RUNLAB_BIN, "bench", (char *)spec, "--out-dir", (char *)root, NULL};
    int64_t t0 = rl_mono_ns();
    t->cpu = 0;
    int rc = run(argv, &t->cpu);
    t->wall = (double)(rl_mono_ns() - t0) / 1e9;
    return rc;
}

static int sharded(const char *spec, const char *root, timing *t)
{
    int64_t t0 = rl_mono_ns();
    t->cpu = 0;
    char shard[32], merge_out[4200];
    for (int k = 1; k <= SHARDS; k++) {
        snprintf(shard, sizeof shard, "%d/%d", k, SHARDS);
        char *argv[] = {RL_RUNLAB_BIN, "bench", (char *)spec, "--shard", shard,
                        "--out-dir", (char *)root, NULL};
        if (run(argv, &t->cpu) != 0)
            return -1;
    }
    char *dirs[SHARDS];
    for (int k = 1; k <= SHARDS; k++) {
        dirs[k - 1] = malloc(4200);
        snprintf(dirs[k - 1], 4200, "%.4000s/shards_overhead_shard-%d-of-%d", root, k, SHARDS);
    }
    snprintf(merge_out, sizeof merge_out, "%.4000s/merged", root);
    char *argv[] = {RL_RUNLAB_BIN, "bench", "merge", dirs[0], dirs[1], dirs[2], dirs[3],
                    "--out", merge_out, NULL};
    int rc = run(argv, &t->cpu);
    for (int k = 0; k < SHARDS; k++)
        free(dirs[k]);
    t->wall = (double)(rl_mono_ns() - t0) / 1e9;
    return rc;
}

int main(void)
{
    const char *env = getenv("RL_BENCH_SHARDS_RUNS");
    long runs = env ? atol(env) : 10000;
    if (runs < 2)
        runs = 2;
    char tmp[] = "/tmp/runlab-bench-shards-XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    char spec[4200], root[4200], cmd[8600];
    snprintf(spec, sizeof spec, "%s/spec.yaml", tmp);
    FILE *f = fopen(spec, "w");
    if (!f)
        return 1;
    fprintf(f, "experiment: shards overhead\nproblem: narrow2d\nseed: 1\nmax_time: 1\n"
               "runs: %ld\nsave_console_output: false\nplanners:\n"
               "  - {name: PRM, planner: prm}\n  - {name: PRM2, planner: prm}\n", runs / 2);
    fclose(f);
    printf("bench_shards: %ld runs (2 planners x %ld), one process against %d shards + merge, "
           "order A B B A\n", runs / 2 * 2, runs / 2, SHARDS);
    timing a[2], b[2];
    int bad = 0;
    for (int i = 0; i < 4 && !bad; i++) {
        bool single = i == 0 || i == 3;
        snprintf(root, sizeof root, "%s/r%d", tmp, i);
        timing *t = single ? &a[i == 3] : &b[i - 1];
        bad = single ? one_process(spec, root, t) != 0 : sharded(spec, root, t) != 0;
        printf("  %-22s wall %7.2f s  cpu %7.2f s\n", single ? "one process" : "4 shards + merge",
               t->wall, t->cpu);
        fflush(stdout);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_shards: could not remove %s\n", tmp);
    if (bad) {
        printf("  a runlab bench failed: no figure\n");
        return 1;
    }
    double cpu_a = (a[0].cpu + a[1].cpu) / 2, cpu_b = (b[0].cpu + b[1].cpu) / 2;
    double wall_a = (a[0].wall + a[1].wall) / 2, wall_b = (b[0].wall + b[1].wall) / 2;
    double over_cpu = 100.0 * (cpu_b / cpu_a - 1), over_wall = 100.0 * (wall_b / wall_a - 1);
    printf("  overhead of sharding + merge: CPU %+.1f %%, wall %+.1f %% (target <= 5 %%: %s)\n",
           over_cpu, over_wall, over_cpu <= 5.0 && over_wall <= 5.0 ? "met" : "MISSED");
    return 0;
}
