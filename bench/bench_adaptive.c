/* Benchmark of adaptive benchmarking (issue 35, item 5): on the example problems, the runs
 * per planner an adaptive benchmark (runs: auto, defaults) needs against the fixed 100, at
 * equal accuracy. Real runs of 100 would take too long 500 times over, so: one real fixed
 * benchmark of 100 runs per planner (rrt, rrtconnect, prm) per problem gives each planner's
 * measured time distribution; 500 adaptive and fixed benchmarks are then simulated by
 * resampling those runs (a bootstrap world whose true ranking is known: the pairwise
 * stochastic order of the measured samples). One real `runlab bench --adaptive` per
 * problem shows where a real adaptive benchmark stopped. RL_BENCH_ADAPTIVE_PROBLEMS
 * (comma-separated) picks other problems. */
#include "runlab/adaptive.h"
#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/time.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { SIMS = 500, MAXP = 8, FIXED = 100 };

/* Runs argv with stdout to out_path; the exit code or -1. */
static int run(char *const argv[], const char *out_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The last line of a file (the benchmark directory runlab printed). */
static int last_line(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[4096];
    out[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0])
            snprintf(out, cap, "%s", line);
    }
    fclose(f);
    return out[0] ? 0 : -1;
}

typedef struct sample {
    char name[64];
    double t[FIXED];
    size_t n;
} sample;

/* Every planner's times from DIR/results.json (+infinity for a run without an exact
 * solution, as the adaptive rule counts it). */
static size_t read_times(const char *dir, sample *s)
{
    char path[4200];
    json_object *root, *pls;
    if (snprintf(path, sizeof path, "%s/results.json", dir) >= (int)sizeof path ||
        rl_json_read_file(path, 256u << 20, &root) < 0)
        return 0;
    size_t np = 0;
    if (json_object_object_get_ex(root, "planners", &pls))
        for (size_t p = 0; p < json_object_array_length(pls) && np < MAXP; p++, np++) {
            json_object *pl = json_object_array_get_idx(pls, p), *nm, *runs;
            json_object_object_get_ex(pl, "name", &nm);
            snprintf(s[np].name, sizeof s[np].name, "%s", json_object_get_string(nm));
            json_object_object_get_ex(pl, "runs", &runs);
            s[np].n = 0;
            for (size_t r = 0; r < json_object_array_length(runs) && r < FIXED; r++) {
                json_object *run = json_object_array_get_idx(runs, r), *st, *props, *t;
                json_object_object_get_ex(run, "status", &st);
                json_object_object_get_ex(run, "properties", &props);
                bool exact = strcmp(json_object_get_string(st), "Exact solution") == 0;
                s[np].t[s[np].n++] = exact && json_object_object_get_ex(props, "time", &t)
                                         ? json_object_get_double(t)
                                         : INFINITY;
            }
        }
    json_object_put(root);
    return np;
}

static uint64_t next_u64(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The true order in the bootstrap world: -1 when a tends smaller, +1 larger, 0 neither. */
static int true_order(const sample *a, const sample *b)
{
    double less = 0, more = 0;
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < b->n; j++)
            less += a->t[i] < b->t[j], more += a->t[i] > b->t[j];
    return less > more ? -1 : more > less ? 1 : 0;
}

/* One simulated benchmark with options o (min == max: a fixed count); *runs gets the runs
 * per planner at the stop; true when it ranked every pair, and correctly. */
static bool simulate(const rl_adapt_opts *o, const sample *s, size_t np, int truth[MAXP][MAXP],
                     uint64_t seed, unsigned *runs)
{
    static double buf[MAXP][RL_ADAPT_MAX_RUNS > 400 ? 400 : RL_ADAPT_MAX_RUNS];
    const double *v[MAXP];
    for (size_t i = 0; i < o->max_runs; i++)
        for (size_t p = 0; p < np; p++)
            buf[p][i] = s[p].t[next_u64(&seed) % s[p].n];
    for (size_t p = 0; p < np; p++)
        v[p] = buf[p];
    unsigned looks[RL_ADAPT_MAX_LOOKS];
    size_t nl = rl_adapt_looks(o, looks, RL_ADAPT_MAX_LOOKS);
    bool right = false;
    for (size_t k = 0; k < nl; k++) {
        rl_adapt_decision d;
        if (rl_adapt_decide(o, k, nl, v, NULL, np, looks[k], &d) < 0)
            return false;
        *runs = looks[k];
        bool stop = d.settled || k + 1 == nl;
        if (stop) {
            right = d.settled;
            for (size_t i = 0; i < d.n_pairs; i++)
                right &= d.pairs[i].order == truth[d.pairs[i].a][d.pairs[i].b];
        }
        rl_adapt_decision_free(&d);
        if (stop)
            break;
    }
    return right;
}

static double accuracy(const rl_adapt_opts *o, const sample *s, size_t np,
                       int truth[MAXP][MAXP], double *mean_runs)
{
    unsigned right = 0;
    double runs = 0;
    for (unsigned i = 0; i < SIMS; i++) {
        unsigned n = 0;
        right += simulate(o, s, np, truth, 1000003ull * (i + 1), &n);
        runs += n;
    }
    if (mean_runs)
        *mean_runs = runs / SIMS;
    return (double)right / SIMS;
}

static void one_problem(const char *runlab, const char *problem, const char *tmp)
{
    char spec[4200], outf[4200], dir[4200], root[4200];
    snprintf(spec, sizeof spec, "%s/%s.yaml", tmp, problem);
    snprintf(outf, sizeof outf, "%s/out.txt", tmp);
    snprintf(root, sizeof root, "%s/res", tmp);
    FILE *f = fopen(spec, "w");
    if (!f)
        return;
    fprintf(f, "experiment: adaptive bench %s\nproblem: %s\nseed: 7\nmax_time: 1.0\n"
               "runs: %d\nplanners:\n  - {name: RRT, planner: rrt}\n"
               "  - {name: RRTConnect, planner: rrtconnect}\n  - {name: PRM, planner: prm}\n",
            problem, problem, FIXED);
    fclose(f);
    int64_t t0 = rl_mono_ns();
    char *argv[] = {(char *)runlab, "bench", spec, "--out-dir", root, NULL};
    if (run(argv, outf) < 0 || last_line(outf, dir, sizeof dir) < 0) {
        printf("%-12s real benchmark failed\n", problem);
        return;
    }
    double fixed_wall = (double)(rl_mono_ns() - t0) / 1e9;
    sample s[MAXP];
    size_t np = read_times(dir, s);
    if (np < 2)
        return;
    int truth[MAXP][MAXP];
    for (size_t a = 0; a < np; a++)
        for (size_t b = 0; b < np; b++)
            truth[a][b] = true_order(&s[a], &s[b]);
    rl_adapt_opts o;
    rl_adapt_opts_init(&o);
    double mean_runs;
    double acc = accuracy(&o, s, np, truth, &mean_runs);
    rl_adapt_opts fx = o;
    fx.min_runs = fx.max_runs = FIXED;
    double acc100 = accuracy(&fx, s, np, truth, NULL);
    unsigned equal = 0;
    for (unsigned n = 5; n <= 200 && !equal; n += 5) {
        fx.min_runs = fx.max_runs = n;
        if (accuracy(&fx, s, np, truth, NULL) >= acc)
            equal = n;
    }
    /* one real adaptive benchmark */
    t0 = rl_mono_ns();
    char *argv2[] = {(char *)runlab, "bench", spec, "--adaptive", "--out-dir", root, NULL};
    char why[1024] = "(failed)", line[1024];
    if (run(argv2, outf) >= 0) {
        FILE *g = fopen(outf, "r");
        while (g && fgets(line, sizeof line, g))
            if (strncmp(line, "Stopped: ", 9) == 0) {
                line[strcspn(line, "\n")] = '\0';
                snprintf(why, sizeof why, "%s", line + 9);
            }
        if (g)
            fclose(g);
    }
    double adaptive_wall = (double)(rl_mono_ns() - t0) / 1e9;
    char eq[32];
    if (equal)
        snprintf(eq, sizeof eq, "%u", equal);
    else
        snprintf(eq, sizeof eq, ">200");
    printf("%-12s %10.1f %8.1f%% %9.1f%% %12s %7.0f%% %8.1fs %8.1fs  %s\n", problem, mean_runs,
           100 * acc, 100 * acc100, eq, 100 * (1 - mean_runs / FIXED), fixed_wall,
           adaptive_wall, why);
}

int main(void)
{
    const char *runlab = getenv("RUNLAB") ? getenv("RUNLAB") : RL_RUNLAB_BIN;
    const char *list = getenv("RL_BENCH_ADAPTIVE_PROBLEMS");
    char problems[512];
    snprintf(problems, sizeof problems, "%s", list ? list : "maze2d,narrow2d,cluttered2d");
    char tmp[] = "/tmp/rl_bench_adaptive_XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    printf("adaptive benchmarking (runs: auto, confidence 0.95, 10..200 runs, goal ranking) vs "
           "fixed %d runs per planner,\nplanners RRT, RRTConnect, PRM; accuracy = ranking "
           "every pair correctly, from %d benchmarks simulated\nby resampling one real "
           "benchmark of %d runs per planner (real runs 500 times over would take hours)\n",
           FIXED, SIMS, FIXED);
    printf("%-12s %10s %9s %10s %12s %8s %9s %9s  %s\n", "problem", "adapt runs", "accuracy",
           "fixed-100", "fixed-equal", "saved", "real 100", "real auto", "real adaptive stop");
    char *save = NULL;
    for (char *p = strtok_r(problems, ",", &save); p; p = strtok_r(NULL, ",", &save))
        one_problem(runlab, p, tmp);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    return 0;
}
