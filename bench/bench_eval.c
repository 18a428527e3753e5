/* Benchmark of `runlab evaluate` (issue 15, item 7; issue 36, item 3): a recording of 20
 * vehicles for 10 min (state at 50 Hz, observations, trajectory commands) made by `runlab
 * sim --offline` on the lab map, evaluated with every metric, against reading the same bag
 * alone without decoding (`runlab mcap cat FILE > /dev/null`) in the same run, the two
 * alternating. Prints the median wall and CPU time of each, the CPU ratio against the target
 * (evaluation <= 2x the read), each phase's CPU and share (decode, metrics, figures,
 * report), what decoding and the metrics alone come to against the read (the least the
 * evaluation can cost without figures), the evaluation with SVG figures alone (--figures
 * svg: no PNG rasterised) against the read, and each metric's time on its own.
 * RL_BENCH_EVAL_VEHICLES / RL_BENCH_EVAL_SECONDS make it smaller for a try. */
#include "runlab/error.h"
#include "runlab/eval.h"
#include "runlab/fs.h"
#include "runlab/time.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define REPEATS 5

typedef struct timing {
    double wall, cpu; /* s */
    int status;       /* exit code, or -1 */
} timing;

/* Runs argv with stdout to `out_path` (NULL: /dev/null), stderr to /dev/null. */
static timing run(char *const argv[], const char *out_path)
{
    timing t = {0, 0, -1};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path ? out_path : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    int64_t t0 = rl_mono_ns();
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return t;
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0)
        return t;
    t.wall = (double)(rl_mono_ns() - t0) / 1e9;
    t.cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
            (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    t.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* REPEATS runs of a and of b, alternating (a load that comes and goes falls on both alike);
 * the median wall and the median CPU time of each, the status of the last run. */
static void medians_of(char *const a_argv[], char *const b_argv[], timing *a, timing *b)
{
    double aw[REPEATS], ac[REPEATS], bw[REPEATS], bc[REPEATS];
    for (int i = 0; i < REPEATS; i++) {
        *a = run(a_argv, NULL);
        *b = run(b_argv, NULL);
        if (a->status < 0 || b->status < 0)
            return;
        aw[i] = a->wall, ac[i] = a->cpu, bw[i] = b->wall, bc[i] = b->cpu;
    }
    a->wall = median(aw, REPEATS), a->cpu = median(ac, REPEATS);
    b->wall = median(bw, REPEATS), b->cpu = median(bc, REPEATS);
}

/* The last non-empty line of a file (the run directory `runlab sim` prints last). */
static int last_line(const char *path, char *out, size_t cap)
{
    char *text;
    size_t len;
    if (rl_fs_read_all(path, 1 << 20, &text, &len) != RL_OK)
        return -1;
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = 0;
    char *start = strrchr(text, '\n');
    start = start ? start + 1 : text;
    snprintf(out, cap, "%s", start);
    free(text);
    return out[0] ? 0 : -1;
}

/* The 1-minute load average (-1 when /proc/loadavg cannot be read). */
static double load_average(void)
{
    double v = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && atoi(v) > 0 ? atoi(v) : dflt;
}

int main(void)
{
    int vehicles = env_int("RL_BENCH_EVAL_VEHICLES", 20);
    int seconds = env_int("RL_BENCH_EVAL_SECONDS", 600);
    char tmp[4096], out_path[4200], run_dir[4096], bag[4300], nveh[16], dur[16];
    if (rl_fs_mkdtemp("runlab-bench-eval", tmp, sizeof tmp) != RL_OK) {
        fprintf(stderr, "bench_eval: %s\n", rl_error_last());
        return 1;
    }
    snprintf(out_path, sizeof out_path, "%s/sim.out", tmp);
    snprintf(nveh, sizeof nveh, "%d", vehicles);
    snprintf(dur, sizeof dur, "%d", seconds);
    struct stat sb;
    const char *map = RL_SOURCE_DIR "/../shared/maps/LabMapCommonRoad.xml";
    bool have_map = stat(map, &sb) == 0;
    char *sim_argv[] = {RL_RUNLAB_BIN, "sim",    "--offline", tmp,  "--vehicles",
                        nveh,          "--seed", "1",         "--duration", dur,
                        have_map ? "--map" : NULL, (char *)map, NULL};
    printf("bench_eval: recording %d vehicles x %d s with runlab sim --offline%s ...\n",
           vehicles, seconds, have_map ? " on the lab map" : " (no ../shared: no map)");
    fflush(stdout);
    timing sim = run(sim_argv, out_path);
    if (sim.status != 0 || last_line(out_path, run_dir, sizeof run_dir) != 0) {
        fprintf(stderr, "bench_eval: runlab sim failed (exit %d)\n", sim.status);
        rl_fs_remove_tree(tmp);
        return 1;
    }
    /* The bag: the run's only file under bag/. */
    char find_cmd[4400];
    snprintf(find_cmd, sizeof find_cmd, "ls \"%s\"/bag/*.mcap", run_dir);
    FILE *p = popen(find_cmd, "r");
    if (!p || !fgets(bag, sizeof bag, p)) {
        fprintf(stderr, "bench_eval: no bag in %s\n", run_dir);
        if (p)
            pclose(p);
        rl_fs_remove_tree(tmp);
        return 1;
    }
    pclose(p);
    bag[strcspn(bag, "\n")] = 0;
    stat(bag, &sb);
    printf("  recording: %.1f s wall; bag %.1f MB\n", sim.wall, (double)sb.st_size / 1e6);

    char *cat_argv[] = {RL_RUNLAB_BIN, "mcap", "cat", bag, NULL};
    char *eval_argv[] = {RL_RUNLAB_BIN, "evaluate", run_dir, NULL};
    timing cat, ev;
    double load0 = load_average();
    medians_of(cat_argv, eval_argv, &cat, &ev);
    if (cat.status != 0 || ev.status < 0 || ev.status > 1) {
        fprintf(stderr, "bench_eval: mcap cat exit %d, evaluate exit %d\n", cat.status,
                ev.status);
        rl_fs_remove_tree(tmp);
        return 1;
    }
    double ratio = ev.wall / cat.wall;
    printf("  load average %.2f before, %.2f after (/proc/loadavg, 1 min)\n", load0,
           load_average());
    printf("  runlab mcap cat FILE > /dev/null : %7.3f s wall, %7.3f s CPU (median of %d)\n",
           cat.wall, cat.cpu, REPEATS);
    printf("  runlab evaluate RUN (all metrics): %7.3f s wall, %7.3f s CPU (median of %d), "
           "exit %d\n",
           ev.wall, ev.cpu, REPEATS, ev.status);
    double cpu_ratio = ev.cpu / cat.cpu;
    printf("  evaluation / read: %.2fx CPU (target <= 2x, issue 36: %s), %.2fx wall\n",
           cpu_ratio, cpu_ratio <= 2 ? "met" : "MISSED", ratio);
    /* The same evaluation with SVG figures alone (the report inlines them): what rasterising
       the PNGs adds, and the ratio without it, against a read measured beside it. */
    char *svg_argv[] = {RL_RUNLAB_BIN, "evaluate", run_dir, "--figures", "svg", NULL};
    timing cat2, svg;
    medians_of(cat_argv, svg_argv, &cat2, &svg);
    if (cat2.status == 0 && svg.status >= 0 && svg.status <= 1) {
        double svg_ratio = svg.cpu / cat2.cpu;
        printf("  runlab evaluate RUN --figures svg: %7.3f s wall, %7.3f s CPU (median of %d; "
               "read beside it %.3f s CPU)\n",
               svg.wall, svg.cpu, REPEATS, cat2.cpu);
        printf("  evaluation --figures svg / read: %.2fx CPU (target <= 2x: %s), %.2fx wall\n",
               svg_ratio, svg_ratio <= 2 ? "met" : "MISSED", svg.wall / cat2.wall);
    } else {
        printf("  evaluate --figures svg: exit %d (mcap cat exit %d)\n", svg.status, cat2.status);
    }
    /* Where the evaluation's time goes: one more evaluation in this process, its phases
       timed by the library (rl_eval_result.phase_*). */
    rl_eval_options eo = {0};
    rl_eval_result res;
    if (rl_eval_run(run_dir, &eo, &res) == RL_OK) {
        double total = 0, total_wall = 0;
        for (int ph = 0; ph < RL_EVAL_PHASE_COUNT; ph++)
            total += res.phase_cpu_s[ph], total_wall += res.phase_wall_s[ph];
        printf("  where evaluate's time goes (in-process, %.3f s CPU, %.3f s wall):\n", total,
               total_wall);
        for (int ph = 0; ph < RL_EVAL_PHASE_COUNT; ph++)
            printf("    %-8s %7.3f s CPU (%2.0f %%), %7.3f s wall\n", rl_eval_phase_name(ph),
                   res.phase_cpu_s[ph], total > 0 ? 100 * res.phase_cpu_s[ph] / total : 0.0,
                   res.phase_wall_s[ph]);
        /* Decoding and the metrics must happen whatever the figures cost: against the read,
           the least this evaluation can cost. */
        double floor_s = res.phase_cpu_s[RL_EVAL_PHASE_DECODE] + res.phase_cpu_s[RL_EVAL_PHASE_METRICS];
        printf("  decode + metrics alone: %.3f s CPU = %.2fx the read's CPU (decode alone %.2fx)\n",
               floor_s, floor_s / cat.cpu, res.phase_cpu_s[RL_EVAL_PHASE_DECODE] / cat.cpu);
        rl_eval_result_free(&res);
    } else {
        printf("  (in-process evaluation failed: %s)\n", rl_error_last());
    }
    /* Each metric alone (the run is decoded each time): what it adds over the others. */
    for (size_t i = 0; i < rl_eval_metric_count(); i++) {
        char *one_argv[] = {RL_RUNLAB_BIN, "evaluate", "--metrics",
                            (char *)rl_eval_metric_name(i), run_dir, NULL};
        timing one = run(one_argv, NULL);
        printf("    --metrics %-20s %7.3f s wall, %7.3f s CPU (exit %d)\n",
               rl_eval_metric_name(i), one.wall, one.cpu, one.status);
    }
    rl_fs_remove_tree(tmp);
    return 0;
}
