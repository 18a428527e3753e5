/* `runlab bench` on a cluster: `--shard K/N` parsing, `bench merge SHARDS... --out DIR`
 * (rl_bench_merge), `bench SPEC --slurm` (writes an sbatch array job of N shards and a
 * merge job depending on it, and submits both) and `bench status DIR` (the shards'
 * progress from their directories, and the jobs' states from sacct where it is). */
#include "cli.h"

#include "runlab/bench.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/time.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Slurm's default MaxArraySize is 1001: array ids 1..1000. */
enum { MAX_SHARDS_SLURM = 1000, MAX_SHARDS = 100000 };

int cli_parse_shard(const char *text, unsigned *k, unsigned *n)
{
    char *end1, *end2;
    errno = 0;
    unsigned long kk = strtoul(text, &end1, 10);
    if (end1 == text || *end1 != '/' || text[0] == '-')
        return -1;
    unsigned long nn = strtoul(end1 + 1, &end2, 10);
    if (errno || end2 == end1 + 1 || *end2 || end1[1] == '-' || nn < 1 || nn > MAX_SHARDS ||
        kk < 1 || kk > nn)
        return -1;
    *k = (unsigned)kk;
    *n = (unsigned)nn;
    return 0;
}

/* ---- bench merge SHARDS... --out DIR ------------------------------------------------ */

int cli_bench_merge_out(int argc, char **argv)
{
    const char *cmd = "bench merge";
    const char *out = NULL;
    bool force = false;
    const char **dirs = calloc((size_t)argc + 1, sizeof *dirs);
    size_t n = 0;
    if (!dirs)
        return cli_fail(cmd, "out of memory");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strncmp(argv[i], "--out=", 6) == 0) {
            out = argv[i] + 6;
        } else if (strcmp(argv[i], "--force") == 0) {
            force = true;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            free(dirs);
            printf("Usage: runlab bench merge SHARD_DIR... --out DIR [--force]\n\n"
                   "Joins the N shards of one benchmark (made by runlab bench SPEC --shard\n"
                   "K/N, on any machines) into DIR: the OMPL log, results.db, results.csv,\n"
                   "results.json, manifest.json and report.html a run of the spec on one\n"
                   "machine writes, apart from timings and hosts; the manifest's \"shards\"\n"
                   "lists each shard's directory, host, CPU model and runlab version. DIR is\n"
                   "made, or may exist without a benchmark in it.\n\n"
                   "Refused, naming the shards: shards of different specs or of different N,\n"
                   "a shard given twice, missing shards, an unfinished shard (finish it with\n"
                   "runlab bench --resume SHARD_DIR), shards of different runlab versions\n"
                   "(unless --force).\n\n"
                   "Exit codes: 0 merged, 1 refused or failed, 2 usage.\n");
            return RL_EXIT_OK;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            free(dirs);
            return cli_usage_error(cmd, "unknown option '%s'", argv[i]);
        } else {
            dirs[n++] = argv[i];
        }
    }
    if (!out || !n) {
        free(dirs);
        return cli_usage_error(cmd, "need SHARD_DIR... and --out DIR");
    }
    cli_bench_job job = {.merge_dirs = dirs, .n_merge = n, .merge_out = out, .force = force};
    int rc = cli_bench_run(&job);
    free(dirs);
    return rc;
}

/* ---- bench status DIR ---------------------------------------------------------------- */

/* A shard directory as `status` sees it. */
typedef struct shard_view {
    char dir[PATH_MAX];
    unsigned index, count;
    long cells;    /* from the finished manifest; -1 unknown */
    size_t runs;   /* runs in its journal */
    bool finished; /* manifest.json */
    bool running;  /* its .lock is held by a harness */
} shard_view;

static bool lock_held(const char *dir)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%.4000s/.lock", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct flock probe = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    bool held = fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
    close(fd);
    return held;
}

static size_t count_runs(const char *dir)
{
    char path[PATH_MAX + 32], line[256];
    snprintf(path, sizeof path, "%.4000s/journal.tsv", dir);
    FILE *f = fopen(path, "r");
    size_t n = 0;
    bool at_start = true;
    while (f && fgets(line, sizeof line, f)) {
        if (at_start && strncmp(line, "run\t", 4) == 0)
            n++;
        at_start = strchr(line, '\n') != NULL; /* a long line goes on in the next read */
    }
    if (f)
        fclose(f);
    return n;
}

/* Reads DIR as a shard; false when it is none. */
static bool read_shard_view(const char *dir, shard_view *v)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%.4000s/spec.json", dir);
    json_object *saved = NULL, *sh = NULL, *k = NULL, *n = NULL;
    if (rl_json_read_file(path, (size_t)64 << 20, &saved) < 0) {
        rl_error_clear();
        return false;
    }
    bool ok = json_object_object_get_ex(saved, "shard", &sh) &&
              json_object_object_get_ex(sh, "index", &k) &&
              json_object_object_get_ex(sh, "count", &n);
    if (ok) {
        memset(v, 0, sizeof *v);
        snprintf(v->dir, sizeof v->dir, "%s", dir);
        v->index = (unsigned)json_object_get_int64(k);
        v->count = (unsigned)json_object_get_int64(n);
        v->cells = -1;
        snprintf(path, sizeof path, "%.4000s/manifest.json", dir);
        json_object *m = NULL, *msh = NULL, *c = NULL;
        if (rl_json_read_file(path, (size_t)64 << 20, &m) == RL_OK) {
            v->finished = true;
            if (json_object_object_get_ex(m, "shard", &msh) &&
                json_object_object_get_ex(msh, "cells", &c))
                v->cells = (long)json_object_get_int64(c);
            json_object_put(m);
        }
        rl_error_clear();
        v->runs = count_runs(dir);
        v->running = !v->finished && lock_held(dir);
    }
    json_object_put(saved);
    return ok;
}

static int by_index(const void *a, const void *b)
{
    const shard_view *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The Slurm jobs of DIR (slurm/jobs.json) as sacct reports them, when sacct is there. */
static void print_slurm_states(const char *dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%.4000s/slurm/jobs.json", dir);
    json_object *jobs = NULL, *a = NULL, *m = NULL;
    if (rl_json_read_file(path, 1 << 20, &jobs) < 0) {
        rl_error_clear();
        return;
    }
    const char *array = json_object_object_get_ex(jobs, "array_job", &a)
                            ? json_object_get_string(a) : "";
    const char *merge = json_object_object_get_ex(jobs, "merge_job", &m)
                            ? json_object_get_string(m) : "";
    printf("Slurm jobs: array %s, merge %s\n", array, merge);
    char command[512];
    snprintf(command, sizeof command,
             "sacct -n -P -X -o JobID,State -j '%.100s,%.100s' 2>/dev/null", array, merge);
    bool ids_ok = strspn(array, "0123456789_") == strlen(array) &&
                  strspn(merge, "0123456789_") == strlen(merge);
    FILE *p = ids_ok && access("/usr/bin/sacct", X_OK) == 0 ? popen(command, "r") : NULL;
    char line[256];
    size_t shown = 0;
    while (p && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        char *bar = strchr(line, '|');
        if (!bar)
            continue;
        *bar = '\0';
        printf("  %-20s %s\n", line, bar + 1);
        shown++;
    }
    if (p)
        pclose(p);
    if (!shown && ids_ok && access("/usr/bin/squeue", X_OK) == 0) {
        /* no accounting: squeue knows the jobs until they end */
        snprintf(command, sizeof command,
                 "squeue -h -o '%%i %%T' -j '%.100s,%.100s' 2>/dev/null", array, merge);
        p = popen(command, "r");
        while (p && fgets(line, sizeof line, p)) {
            line[strcspn(line, "\n")] = '\0';
            char *sp = strchr(line, ' ');
            if (!sp)
                continue;
            *sp = '\0';
            printf("  %-20s %s\n", line, sp + 1);
            shown++;
        }
        if (p)
            pclose(p);
        if (!shown)
            printf("  (no job in squeue, and sacct has no record: accounting is off; the "
                   "jobs have ended)\n");
    } else if (!shown) {
        printf("  (neither sacct nor squeue answered: the shards' directories below are the "
               "record)\n");
    }
    json_object_put(jobs);
}

int cli_bench_status(int argc, char **argv)
{
    const char *cmd = "bench status";
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("Usage: runlab bench status DIR\n\n"
               "The shards of a sharded benchmark: DIR is the directory runlab bench --slurm\n"
               "made (its shards/ are read), a directory of shard directories, or one shard.\n"
               "Per shard: done, running (a harness holds it), stopped (runs done so far;\n"
               "finish it with runlab bench --resume SHARD_DIR) or missing; then the Slurm\n"
               "jobs' states from sacct, where it is installed, and whether DIR is merged.\n"
               "Exit codes: 0 every shard done, 1 some not done (or DIR unreadable), 2 usage.\n");
        return RL_EXIT_OK;
    }
    if (argc != 2)
        return cli_usage_error(cmd, "expected one directory");
    const char *dir = argv[1];
    char shards_dir[PATH_MAX];
    snprintf(shards_dir, sizeof shards_dir, "%.4000s/shards", dir);
    size_t cap = 64, n = 0;
    shard_view *v = calloc(cap, sizeof *v);
    if (!v)
        return cli_fail(cmd, "out of memory");
    if (read_shard_view(dir, &v[0])) {
        n = 1;
    } else {
        const char *scan = access(shards_dir, F_OK) == 0 ? shards_dir : dir;
        DIR *d = opendir(scan);
        if (!d) {
            free(v);
            return cli_fail(cmd, "%s: %s", scan, strerror(errno));
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char sub[PATH_MAX];
            if ((size_t)snprintf(sub, sizeof sub, "%s/%s", scan, e->d_name) >= sizeof sub)
                continue;
            if (n == cap) {
                shard_view *g = realloc(v, 2 * cap * sizeof *v);
                if (!g)
                    break;
                v = g;
                cap *= 2;
            }
            if (read_shard_view(sub, &v[n]))
                n++;
        }
        closedir(d);
    }
    print_slurm_states(dir);
    if (!n) {
        free(v);
        printf("no shard directories yet in %s\n", dir);
        return RL_EXIT_FAILURE;
    }
    qsort(v, n, sizeof *v, by_index);
    unsigned count = v[0].count;
    size_t done = 0, running = 0, stopped = 0;
    printf("%-8s %-9s %6s  %s\n", "SHARD", "STATE", "RUNS", "DIRECTORY");
    unsigned next = 1;
    for (size_t i = 0; i < n; i++) {
        for (; next < v[i].index && next <= count; next++)
            printf("%u/%-6u %-9s %6s  %s\n", next, count, "missing", "-", "(not started)");
        next = v[i].index + 1;
        const char *state = v[i].finished ? "done" : v[i].running ? "running" : "stopped";
        done += v[i].finished;
        running += v[i].running;
        stopped += !v[i].finished && !v[i].running;
        char runs[32];
        if (v[i].cells >= 0)
            snprintf(runs, sizeof runs, "%zu/%ld", v[i].runs, v[i].cells);
        else
            snprintf(runs, sizeof runs, "%zu", v[i].runs);
        printf("%u/%-6u %-9s %6s  %s\n", v[i].index, v[i].count, state, runs, v[i].dir);
    }
    for (; next <= count; next++)
        printf("%u/%-6u %-9s %6s  %s\n", next, count, "missing", "-", "(not started)");
    char manifest[PATH_MAX + 32];
    snprintf(manifest, sizeof manifest, "%.4000s/manifest.json", dir);
    bool merged = n > 1 && access(manifest, F_OK) == 0;
    printf("%zu of %u shards done, %zu running, %zu stopped, %zu missing%s\n", done, count,
           running, stopped, (size_t)count - (done + running + stopped),
           merged ? "; merged" : "");
    free(v);
    return done == count ? RL_EXIT_OK : RL_EXIT_FAILURE;
}

/* ---- bench SPEC --slurm ---------------------------------------------------------------- */

static void slurm_usage(void)
{
    printf("Usage: runlab bench SPEC.yaml --slurm [--out-dir ROOT] [--shards N]\n"
           "                  [--partition P] [--time T] [--cpus-per-task C] [--mem M]\n"
           "                  [--array-limit L] [--dry-run]\n\n"
           "Makes ROOT/<experiment>_<stamp>/ with slurm/array.sbatch (a Slurm array job of N\n"
           "tasks, task K running runlab bench SPEC --shard K/N --out-dir DIR/shards) and\n"
           "slurm/merge.sbatch (runlab bench merge of the N shards into DIR, submitted with\n"
           "--dependency=afterany on the array), submits both with sbatch unless --dry-run,\n"
           "and prints the job ids and DIR. runlab bench status DIR follows the shards.\n\n"
           "  --shards N          array tasks (default: about one hour of max_time per task,\n"
           "                      at most one per cell and 1000)\n"
           "  --partition P, --time T, --cpus-per-task C, --mem M\n"
           "                      passed to Slurm as #SBATCH lines (--time also for merge)\n"
           "  --array-limit L     at most L tasks at once (--array=1-N%%L)\n"
           "  --dry-run           write the scripts, submit nothing\n\n"
           "SPEC.yaml and this runlab are named by absolute path: the nodes must see both\n"
           "(and ROOT) at the same paths, as on a shared file system. Exit codes: 0 written\n"
           "(and submitted), 1 failed, 2 usage.\n");
}

int cli_bench_slurm(int argc, char **argv)
{
    const char *cmd = "bench --slurm";
    static const struct option opts[] = {
        {"slurm", no_argument, NULL, 'S'},          {"out-dir", required_argument, NULL, 'o'},
        {"shards", required_argument, NULL, 'n'},   {"partition", required_argument, NULL, 's'},
        {"time", required_argument, NULL, 's'},     {"cpus-per-task", required_argument, NULL, 's'},
        {"mem", required_argument, NULL, 's'},      {"array-limit", required_argument, NULL, 's'},
        {"dry-run", no_argument, NULL, 's'},        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    cli_slurm_opts so = {0};
    const char *out_root = NULL;
    long shards = 0;
    int c, at;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, &at)) != -1) {
        double num;
        switch (c) {
        case 'S': break;
        case 'o': out_root = optarg; break;
        case 'n':
            if (cli_parse_number(cmd, "--shards", optarg, 1, MAX_SHARDS_SLURM, 1, &num) !=
                RL_EXIT_OK)
                return RL_EXIT_USAGE;
            shards = (long)num;
            break;
        case 's':
            if (cli_slurm_option(cmd, opts[at].name, optarg, &so) < 0)
                return RL_EXIT_USAGE;
            break;
        case 'h': slurm_usage(); return RL_EXIT_OK;
        default: return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind + 1 != argc)
        return cli_usage_error(cmd, "expected one SPEC.yaml");
    rl_bench_spec *spec = NULL;
    if (rl_bench_spec_load(argv[optind], &spec) < 0)
        return cli_fail("bench", "%s", rl_error_last());
    size_t planners = 0;
    unsigned runs = 0;
    double max_time = 0;
    rl_bench_spec_shape(spec, &planners, &runs, &max_time);
    rl_bench_adaptive_keys ak;
    if (rl_bench_spec_adaptive(spec, &ak) || runs == 0) {
        rl_bench_spec_free(spec);
        return cli_fail(cmd, "%s: %s cannot be split into shards", argv[optind],
                        runs == 0 ? "runs: 0 (until max_time is spent)"
                                  : "an adaptive benchmark (runs: auto)");
    }
    size_t cells = planners * runs;
    unsigned n = shards > 0 ? (unsigned)shards : 0;
    if (!n) { /* about an hour of the worst case per task */
        double hours = (double)cells * max_time / 3600.0;
        n = (unsigned)fmin(fmin(ceil(hours), (double)cells), MAX_SHARDS_SLURM);
        if (n < 1)
            n = 1;
    }
    if (n > cells)
        n = (unsigned)cells;
    char spec_abs[PATH_MAX], self[PATH_MAX], path[PATH_MAX + 64];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!realpath(argv[optind], spec_abs) || sl <= 0) {
        rl_bench_spec_free(spec);
        return cli_fail(cmd, "%s: %s", argv[optind], strerror(errno));
    }
    self[sl] = '\0';
    const char *root = out_root ? out_root : "bench-results";
    char stamp[RL_TIME_DIRSTAMP_LEN], name[256], safe[RL_NAME_MAX + 1];
    rl_time_format_dirstamp(rl_time_now_ns(), stamp, sizeof stamp);
    rl_path_sanitize_name(rl_bench_spec_experiment(spec), safe);
    rl_bench_spec_free(spec);
    for (char *p = safe; *p; p++)
        if (*p == ' ')
            *p = '_';
    snprintf(name, sizeof name, "%.100s_%s", safe, stamp);
    char abs_dir[PATH_MAX], slurm_dir[PATH_MAX], shards_dir[PATH_MAX];
    int rc = cli_slurm_job_dir(root, name, "shards", abs_dir, slurm_dir, shards_dir);
    if (rc < 0)
        return cli_fail(cmd, "%s", rl_error_last());
    char comment[2048], job[128], output[PATH_MAX + 32], *body = NULL;
    size_t body_len = 0;
    /* the array job: task K runs shard K/N */
    FILE *b = open_memstream(&body, &body_len);
    if (!b)
        return cli_fail(cmd, "out of memory");
    fputs("set -eu\nexec ", b);
    cli_shell_quote(b, self);
    fputs(" bench ", b);
    cli_shell_quote(b, spec_abs);
    fprintf(b, " --shard \"${SLURM_ARRAY_TASK_ID}/%u\" --out-dir ", n);
    cli_shell_quote(b, shards_dir);
    fputc('\n', b);
    fclose(b);
    snprintf(comment, sizeof comment,
             "# Written by runlab bench --slurm: shard $SLURM_ARRAY_TASK_ID of %u of the\n"
             "# benchmark %.600s (%zu planners x %u runs).\n",
             n, spec_abs, planners, runs);
    snprintf(job, sizeof job, "runlab-bench-%.60s", safe);
    snprintf(output, sizeof output, "%s/shard-%%a.out", slurm_dir);
    snprintf(path, sizeof path, "%s/array.sbatch", slurm_dir);
    rc = cli_slurm_script(path, comment, job, &so, n, output, body);
    free(body);
    body = NULL;
    /* the merge job, after the array however it ended */
    char merge_path[PATH_MAX + 64];
    snprintf(merge_path, sizeof merge_path, "%s/merge.sbatch", slurm_dir);
    b = rc == RL_OK ? open_memstream(&body, &body_len) : NULL;
    if (b) {
        fputs("set -eu\nexec ", b);
        cli_shell_quote(b, self);
        fputs(" bench merge ", b);
        cli_shell_quote(b, shards_dir);
        fprintf(b, "/*_shard-*-of-%u --out ", n);
        cli_shell_quote(b, abs_dir);
        fputc('\n', b);
        fclose(b);
        snprintf(comment, sizeof comment,
                 "# Written by runlab bench --slurm: joins the %u shards into this benchmark\n"
                 "# directory once the array job has ended (afterany: a failed shard is named).\n",
                 n);
        snprintf(job, sizeof job, "runlab-merge-%.60s", safe);
        snprintf(output, sizeof output, "%s/merge.out", slurm_dir);
        rc = cli_slurm_script(merge_path, comment, job, &so, 0, output, body);
        free(body);
    } else if (rc == RL_OK) {
        rc = rl_error_set(RL_ENOMEM, "out of memory");
    }
    if (rc < 0)
        return cli_fail(cmd, "%s", rl_error_last());
    printf("%zu cells (%zu planners x %u runs) in %u shard(s)\n", cells, planners, runs, n);
    printf("array job: %s\nmerge job: %s\n", path, merge_path);
    if (so.dry_run) {
        printf("--dry-run: nothing submitted (sbatch %s, then sbatch "
               "--dependency=afterany:ID %s)\n%s\n", path, merge_path, abs_dir);
        return RL_EXIT_OK;
    }
    char array_id[64], merge_id[64];
    if (cli_slurm_submit_pair(slurm_dir, path, merge_path, "merge_job", "shards", n, array_id,
                              merge_id, sizeof array_id) < 0)
        return cli_fail(cmd, "%s", rl_error_last());
    printf("submitted: array job %s (%u tasks), merge job %s (after the array)\n%s\n", array_id,
           n, merge_id, abs_dir);
    return RL_EXIT_OK;
}
