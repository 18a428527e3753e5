/* Benchmark of `runlab evaluate --summary` (issue 28, item 10) on a home of 500 short runs:
 * 20 recordings of `runlab sim --offline` (3 vehicles x 5 s, various seeds and faults),
 * each copied 25 times under its own directory name (recording 500 would take most of the
 * time and measure the simulator). Times, on the same runs:
 *   loop    a shell loop of `runlab evaluate RUN` over every run (an evaluation each);
 *   reuse   `runlab evaluate --summary --home H` right after: every evaluation reused;
 *   fresh   `runlab evaluate --summary --home H --config C` with another configuration,
 *           so that every run is evaluated again, in parallel (one per core).
 * Targets: reuse < 10% of loop; fresh < loop. RL_BENCH_SUMMARY_RUNS (a multiple of 20
 * is kept) makes it smaller for a try. */
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/time.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { DISTINCT = 20 };

/* Runs argv (stdout to out_path or /dev/null, stderr to /dev/null); its exit code, or -1.
 * *wall gets its wall time in seconds. */
static int run(char *const argv[], const char *out_path, double *wall)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path ? out_path : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    int64_t t0 = rl_mono_ns();
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    int st;
    if (rc != 0 || waitpid(pid, &st, 0) < 0)
        return -1;
    if (wall)
        *wall = (double)(rl_mono_ns() - t0) / 1e9;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The last line of a file (the run directory `runlab sim` prints last). */
static int last_line(const char *path, char *out, size_t cap)
{
    char *text;
    size_t len;
    if (rl_fs_read_all(path, 1 << 20, &text, &len) != RL_OK)
        return -1;
    while (len > 0 && text[len - 1] == '\n')
        text[--len] = 0;
    char *start = strrchr(text, '\n');
    snprintf(out, cap, "%s", start ? start + 1 : text);
    free(text);
    return out[0] ? 0 : -1;
}

int main(void)
{
    const char *env = getenv("RL_BENCH_SUMMARY_RUNS");
    int total = env && atoi(env) >= DISTINCT ? atoi(env) / DISTINCT * DISTINCT : 500;
    int copies = total / DISTINCT;
    char tmp[4096], home[4200], out_path[4300], cfg[4300];
    if (rl_fs_mkdtemp("runlab-bench-summary", tmp, sizeof tmp) != RL_OK) {
        fprintf(stderr, "bench_summary: %s\n", rl_error_last());
        return 1;
    }
    snprintf(home, sizeof home, "%s/home", tmp);
    snprintf(out_path, sizeof out_path, "%s/sim.out", tmp);
    snprintf(cfg, sizeof cfg, "%s/config.yaml", tmp);
    const char *map = RL_SOURCE_DIR "/../shared/maps/LabMapCommonRoad.xml";
    struct stat sb;
    bool have_map = stat(map, &sb) == 0;
    static const char *const faults[] = {NULL, "speeding:2:1:4", "drift:1:1:4", "leave_lane:3:1:4",
                                         "late_observation:2:1:4"};
    printf("bench_summary: %d runs (%d recordings of runlab sim --offline, 3 vehicles x 5 s, "
           "each copied %d times)%s\n",
           total, DISTINCT, copies, have_map ? "" : " (no ../shared: the repository's map)");
    fflush(stdout);
    int status = 1;
    for (int i = 0; i < DISTINCT; i++) {
        char seed[16];
        snprintf(seed, sizeof seed, "%d", i + 1);
        const char *fault = faults[i % 5];
        char *argv[16] = {RL_RUNLAB_BIN, "sim", "--offline", home, "--vehicles", "3",
                          "--duration", "5", "--seed", seed};
        int k = 10;
        if (have_map)
            argv[k++] = "--map", argv[k++] = (char *)map;
        if (fault)
            argv[k++] = "--fault", argv[k++] = (char *)fault;
        argv[k] = NULL;
        char dir[4096];
        if (run(argv, out_path, NULL) != 0 || last_line(out_path, dir, sizeof dir) != 0) {
            fprintf(stderr, "bench_summary: runlab sim failed\n");
            goto out;
        }
        for (int c = 2; c <= copies; c++) { /* "<UTC>_<run id>-cN": a run of its own name */
            char copy[4200];
            snprintf(copy, sizeof copy, "%s-c%d", dir, c);
            char *cp[] = {"/bin/cp", "-r", dir, copy, NULL};
            if (run(cp, NULL, NULL) != 0) {
                fprintf(stderr, "bench_summary: cp -r failed\n");
                goto out;
            }
        }
    }
    char loop[8800];
    snprintf(loop, sizeof loop,
             "for d in \"%s\"/experiments/*/; do \"%s\" evaluate \"$d\" >/dev/null || :; done", home,
             RL_RUNLAB_BIN);
    char *sh[] = {"/bin/sh", "-c", loop, NULL};
    double t_loop, t_reuse, t_fresh;
    if (run(sh, NULL, &t_loop) != 0) {
        fprintf(stderr, "bench_summary: the shell loop failed\n");
        goto out;
    }
    char *reuse[] = {RL_RUNLAB_BIN, "evaluate", "--summary", "--home", home, NULL};
    int rc_reuse = run(reuse, NULL, &t_reuse);
    FILE *f = fopen(cfg, "w"); /* another configuration: every evaluation is made again */
    if (!f) {
        perror(cfg);
        goto out;
    }
    fputs("states_speed:\n  max_speed: 3.5\n", f);
    fclose(f);
    char *fresh[] = {RL_RUNLAB_BIN, "evaluate", "--summary", "--home", home, "--config", cfg, NULL};
    int rc_fresh = run(fresh, NULL, &t_fresh);
    if (rc_reuse < 0 || rc_reuse == 2 || rc_fresh < 0 || rc_fresh == 2) {
        fprintf(stderr, "bench_summary: --summary exit %d / %d\n", rc_reuse, rc_fresh);
        goto out;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double r1 = t_reuse / t_loop, r2 = t_fresh / t_loop;
    printf("  shell loop of runlab evaluate RUN    : %8.2f s wall (%d runs)\n", t_loop, total);
    printf("  --summary, every evaluation reused  : %8.2f s wall\n", t_reuse);
    printf("  --summary, every run evaluated (%ld cores): %8.2f s wall\n", cores, t_fresh);
    printf("  reused summary / loop: %.3fx (target < 0.10: %s)\n", r1, r1 < 0.10 ? "MET" : "MISSED");
    printf("  evaluating summary / loop: %.2fx (target < 1: %s)\n", r2, r2 < 1 ? "MET" : "MISSED");
    status = 0;
out:
    rl_fs_remove_tree(tmp);
    return status;
}
