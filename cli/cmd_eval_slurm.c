/* `runlab evaluate --slurm RUN... | --runs-from FILE`: offline evaluations of many runs as a
 * Slurm array job (each task evaluates its batch of runs, each writing its new evaluation
 * directory in its run as `runlab evaluate` does) and a summary job after it that writes
 * `runlab evaluate --summary` of all of them (reusing those evaluations) and
 * evaluations.csv, one row per run and check. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/eval.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/time.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_TASKS = 1000, DEFAULT_TASKS = 100 };

static void usage(void)
{
    printf("Usage: runlab evaluate --slurm RUN... [--runs-from FILE] [--batch B]\n"
           "                       [--config FILE] [--figures png,svg|svg] [--out-dir ROOT]\n"
           "                       [--partition P] [--time T]\n"
           "                       [--cpus-per-task C] [--mem M] [--array-limit L] [--dry-run]\n\n"
           "Evaluates many runs on a Slurm cluster. Makes ROOT/evaluate_<stamp>/ (ROOT default\n"
           "./eval-results) with runs.txt (the runs' absolute directories), slurm/array.sbatch\n"
           "(an array job: task K evaluates runs (K-1)*B+1 .. K*B, each into a new\n"
           "RUN/evaluations/<UTC>/ as runlab evaluate does; status/task-K.tsv gets each run's\n"
           "exit code) and slurm/summary.sbatch (after the array, however it ended: runlab\n"
           "evaluate --summary of all the runs into DIR/summary/, which reuses their new\n"
           "evaluations and evaluates any run a task missed, and DIR/evaluations.csv, one row\n"
           "per run and check). Submits both unless --dry-run; prints the job ids and DIR.\n\n"
           "  --runs-from FILE   more runs, one directory or run id per line (# comments)\n"
           "  --batch B          runs per task (default: the runs spread over at most 100 tasks)\n"
           "  --config FILE      the evaluation configuration, for every run and the summary\n"
           "  --figures F        each run's figures as runlab evaluate --figures writes them\n"
           "                     (png,svg, the default, or svg alone: no PNG rasterised)\n"
           "  --partition P, --time T, --cpus-per-task C, --mem M, --array-limit L, --dry-run\n"
           "                     as for runlab bench --slurm\n\n"
           "The runs, ROOT and this runlab must be at the same paths on the nodes. A task fails\n"
           "only when a run cannot be evaluated (exit 2), not on a FAIL or INCOMPLETE verdict.\n"
           "Exit codes: 0 written (and submitted), 1 failed, 2 usage or a run not found.\n");
}

/* Adds the runs of `path` (one per line; blank lines and # comments skipped). */
static int read_runs_file(const char *path, char ***runs, size_t *n, size_t *cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return rl_error_set_errno(RL_EIO, errno, "%s", path);
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int rc = RL_OK;
    size_t lineno = 0;
    while (rc == RL_OK && (len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        char *t = line + strspn(line, " \t");
        if (!*t || *t == '#')
            continue;
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 64;
            char **g = realloc(*runs, nc * sizeof *g);
            if (!g) {
                rc = rl_error_set(RL_ENOMEM, "out of memory");
                break;
            }
            *runs = g;
            *cap = nc;
        }
        char dir[PATH_MAX];
        if (rl_eval_resolve_run(t, NULL, dir, sizeof dir) < 0)
            rc = rl_error_set(RL_ENOENT, "%s:%zu: %s", path, lineno, rl_error_last());
        else if (!((*runs)[*n] = strdup(dir)))
            rc = rl_error_set(RL_ENOMEM, "out of memory");
        else
            (*n)++;
    }
    free(line);
    fclose(f);
    return rc;
}

int cmd_evaluate_slurm(int argc, char **argv)
{
    const char *cmd = "evaluate --slurm";
    static const struct option opts[] = {
        {"slurm", no_argument, NULL, 'S'},         {"runs-from", required_argument, NULL, 'f'},
        {"batch", required_argument, NULL, 'b'},   {"config", required_argument, NULL, 'c'},
        {"out-dir", required_argument, NULL, 'o'}, {"partition", required_argument, NULL, 's'},
        {"time", required_argument, NULL, 's'},    {"cpus-per-task", required_argument, NULL, 's'},
        {"mem", required_argument, NULL, 's'},     {"array-limit", required_argument, NULL, 's'},
        {"dry-run", no_argument, NULL, 's'},       {"figures", required_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    cli_slurm_opts so = {0};
    const char *out_root = "eval-results", *config = NULL;
    rl_eval_figures figures = RL_EVAL_FIGURES_PNG_SVG;
    const char *files[64];
    size_t nfiles = 0;
    long batch = 0;
    int c, at;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, &at)) != -1) {
        double num;
        switch (c) {
        case 'S': break;
        case 'f':
            if (nfiles == sizeof files / sizeof files[0])
                return cli_usage_error(cmd, "at most 64 --runs-from files");
            files[nfiles++] = optarg;
            break;
        case 'b':
            if (cli_parse_number(cmd, "--batch", optarg, 1, 1e6, 1, &num) != RL_EXIT_OK)
                return RL_EXIT_USAGE;
            batch = (long)num;
            break;
        case 'c': config = optarg; break;
        case 'F':
            if (cli_parse_figures(cmd, optarg, &figures) != RL_EXIT_OK)
                return RL_EXIT_USAGE;
            break;
        case 'o': out_root = optarg; break;
        case 's':
            if (cli_slurm_option(cmd, opts[at].name, optarg, &so) < 0)
                return RL_EXIT_USAGE;
            break;
        case 'h': usage(); return RL_EXIT_OK;
        default: return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    char **runs = NULL;
    size_t n = 0, cap = 0;
    int rc = RL_OK;
    for (int i = optind; i < argc && rc == RL_OK; i++) {
        char dir[PATH_MAX];
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            char **g = realloc(runs, nc * sizeof *g);
            if (!g) {
                rc = rl_error_set(RL_ENOMEM, "out of memory");
                break;
            }
            runs = g;
            cap = nc;
        }
        if (rl_eval_resolve_run(argv[i], NULL, dir, sizeof dir) < 0)
            rc = RL_ENOENT;
        else if (!(runs[n] = strdup(dir)))
            rc = rl_error_set(RL_ENOMEM, "out of memory");
        else
            n++;
    }
    for (size_t i = 0; i < nfiles && rc == RL_OK; i++)
        rc = read_runs_file(files[i], &runs, &n, &cap);
    char config_abs[PATH_MAX] = "";
    if (rc == RL_OK && config && !realpath(config, config_abs))
        rc = rl_error_set_errno(RL_ENOENT, errno, "--config %s", config);
    if (rc == RL_OK && n == 0)
        rc = rl_error_set(RL_EINVAL, "no RUN given (RUN... or --runs-from FILE)");
    if (rc < 0) {
        int code = cli_usage_error(cmd, "%s", rl_error_last());
        for (size_t i = 0; i < n; i++)
            free(runs[i]);
        free(runs);
        return code;
    }
    unsigned tasks;
    if (batch > 0) {
        tasks = (unsigned)((n + (size_t)batch - 1) / (size_t)batch);
    } else {
        tasks = (unsigned)(n < DEFAULT_TASKS ? n : DEFAULT_TASKS);
        batch = (long)((n + tasks - 1) / tasks);
        tasks = (unsigned)((n + (size_t)batch - 1) / (size_t)batch);
    }
    if (tasks > MAX_TASKS) {
        for (size_t i = 0; i < n; i++)
            free(runs[i]);
        free(runs);
        return cli_usage_error(cmd, "%u tasks of %ld runs: more than Slurm's default "
                               "MaxArraySize allows (1000); give a larger --batch", tasks, batch);
    }
    char self[PATH_MAX], abs_dir[PATH_MAX], slurm_dir[PATH_MAX],
        status_dir[PATH_MAX], path[PATH_MAX + 64];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    self[sl > 0 ? sl : 0] = '\0';
    char stamp[RL_TIME_DIRSTAMP_LEN], name[64];
    rl_time_format_dirstamp(rl_time_now_ns(), stamp, sizeof stamp);
    snprintf(name, sizeof name, "evaluate_%s", stamp);
    rc = sl > 0 ? cli_slurm_job_dir(out_root, name, "status", abs_dir, slurm_dir, status_dir)
                : rl_error_set_errno(RL_EIO, errno, "/proc/self/exe");
    char runs_path[PATH_MAX + 32];
    snprintf(runs_path, sizeof runs_path, "%s/runs.txt", abs_dir);
    FILE *f = rc == RL_OK ? fopen(runs_path, "w") : NULL;
    if (rc == RL_OK && !f)
        rc = rl_error_set_errno(RL_EIO, errno, "%s", runs_path);
    for (size_t i = 0; f && i < n; i++)
        fprintf(f, "%s\n", runs[i]);
    if (f && fclose(f) != 0)
        rc = rl_error_set_errno(RL_EIO, errno, "%s", runs_path);
    for (size_t i = 0; i < n; i++)
        free(runs[i]);
    free(runs);
    if (rc < 0)
        return cli_fail(cmd, "%s", rl_error_last());

    /* the array job: task K evaluates its batch, one exit code per run in status/ */
    char comment[1024], job[64], output[PATH_MAX + 32], *body = NULL;
    size_t body_len = 0;
    FILE *b = open_memstream(&body, &body_len);
    if (!b)
        return cli_fail(cmd, "out of memory");
    fprintf(b, "set -u\nfirst=$(( (SLURM_ARRAY_TASK_ID - 1) * %ld + 1 ))\n"
               "last=$(( SLURM_ARRAY_TASK_ID * %ld ))\nstatus=0\n", batch, batch);
    fputs("while IFS= read -r run; do\n    ", b);
    cli_shell_quote(b, self);
    fputs(" evaluate \"$run\"", b);
    if (*config_abs) {
        fputs(" --config ", b);
        cli_shell_quote(b, config_abs);
    }
    if (figures == RL_EVAL_FIGURES_SVG)
        fputs(" --figures svg", b);
    fputs("\n    rc=$?\n    printf '%s\\t%d\\n' \"$run\" \"$rc\" >>", b);
    cli_shell_quote(b, status_dir);
    fputs("\"/task-$SLURM_ARRAY_TASK_ID.tsv\"\n"
          "    [ \"$rc\" -eq 2 ] && status=1 # could not be evaluated (1, 3: verdicts)\n"
          "done < <(sed -n \"${first},${last}p\" ", b);
    cli_shell_quote(b, runs_path);
    fputs(")\nexit \"$status\"\n", b);
    fclose(b);
    snprintf(comment, sizeof comment,
             "# Written by runlab evaluate --slurm: task $SLURM_ARRAY_TASK_ID evaluates %ld of\n"
             "# the %zu runs of runs.txt.\n", batch, n);
    snprintf(job, sizeof job, "runlab-evaluate");
    snprintf(output, sizeof output, "%s/task-%%a.out", slurm_dir);
    snprintf(path, sizeof path, "%s/array.sbatch", slurm_dir);
    rc = cli_slurm_script(path, comment, job, &so, tasks, output, body);
    free(body);
    body = NULL;

    /* the summary job: every run's latest evaluation, reused */
    char summary_path[PATH_MAX + 64];
    snprintf(summary_path, sizeof summary_path, "%s/summary.sbatch", slurm_dir);
    b = rc == RL_OK ? open_memstream(&body, &body_len) : NULL;
    if (b) {
        fputs("set -u\nmapfile -t runs < ", b);
        cli_shell_quote(b, runs_path);
        fputc('\n', b);
        cli_shell_quote(b, self);
        fputs(" evaluate --summary \"${runs[@]}\" --out ", b);
        cli_shell_quote(b, abs_dir);
        fputs("/summary", b);
        if (*config_abs) {
            fputs(" --config ", b);
            cli_shell_quote(b, config_abs);
        }
        fputs("\nrc=$?\n# exit 1 and 3 are verdicts (a run FAILs, or is INCOMPLETE), not failures\n"
              "[ -f ", b);
        cli_shell_quote(b, abs_dir);
        fputs("/summary/checks.csv ] && cp ", b);
        cli_shell_quote(b, abs_dir);
        fputs("/summary/checks.csv ", b);
        cli_shell_quote(b, abs_dir);
        fputs("/evaluations.csv\n[ \"$rc\" -eq 2 ] && exit 2\nexit 0\n", b);
        fclose(b);
        snprintf(comment, sizeof comment,
                 "# Written by runlab evaluate --slurm: the summary of the %zu runs once the\n"
                 "# array job has ended (afterany).\n", n);
        snprintf(output, sizeof output, "%s/summary.out", slurm_dir);
        rc = cli_slurm_script(summary_path, comment, "runlab-evaluate-summary", &so, 0, output,
                              body);
        free(body);
    } else if (rc == RL_OK) {
        rc = rl_error_set(RL_ENOMEM, "out of memory");
    }
    if (rc < 0)
        return cli_fail(cmd, "%s", rl_error_last());
    printf("%zu runs in %u task(s) of up to %ld\narray job: %s\nsummary job: %s\n", n, tasks,
           batch, path, summary_path);
    if (so.dry_run) {
        printf("--dry-run: nothing submitted\n%s\n", abs_dir);
        return RL_EXIT_OK;
    }
    char array_id[64], summary_id[64];
    if (cli_slurm_submit_pair(slurm_dir, path, summary_path, "summary_job", "runs", (long)n,
                              array_id, summary_id, sizeof array_id) < 0)
        return cli_fail(cmd, "%s", rl_error_last());
    printf("submitted: array job %s (%u tasks), summary job %s (after the array)\n%s\n",
           array_id, tasks, summary_id, abs_dir);
    return RL_EXIT_OK;
}
