/* `runlab bench`: its options and subcommands. A spec (with --resume, --shard) runs as one
 * session of bench_session.c (the engine owns the directory); --slurm, `bench merge --out`
 * and `bench status` go to cmd_bench_cluster.c; `bench import` turns OMPL logs into a
 * database, `bench merge --db` joins benchmark directories' logs into one, `bench report`
 * rewrites a directory's report.html. */
#include "cli.h"

#include "runlab/bench.h"
#include "runlab/bench_report.h"
#include "runlab/error.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_LOGS = 4096 };

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab bench SPEC.yaml [--out-dir ROOT] [-j N] [--adaptive] [--shard K/N]\n"
            "       runlab bench SPEC.yaml --slurm [--shards N] [--partition P] [--time T]\n"
            "                  [--cpus-per-task C] [--mem M] [--array-limit L] [--dry-run]\n"
            "       runlab bench --resume DIR\n"
            "       runlab bench merge SHARD_DIR... --out DIR [--force]\n"
            "       runlab bench status DIR\n"
            "       runlab bench import LOG... --db OUT.db\n"
            "       runlab bench merge DIR... --db OUT.db\n"
            "       runlab bench report DIR\n\n"
            "Benchmarks motion planners as OMPL's Benchmark does, each run in its own process:\n"
            "a run that crashes, aborts, hangs past max_time or exceeds max_mem is recorded with\n"
            "its own status and costs that run only. Results go to a new directory under ROOT\n"
            "(OMPL log, results.db in OMPL's schema for Planner Arena, results.csv, console/,\n"
            "manifest.json, report.html with figures/); its path is the last line of standard\n"
            "output. `bench report DIR` rewrites DIR/report.html from DIR/results.json.\n\n"
            "Options:\n"
            "  --out-dir ROOT where the benchmark directory is created (default: the spec's\n"
            "                 'out', else ./bench-results); --out is the old spelling\n"
            "  -j, --jobs N   runs in parallel (default 1, or the spec's 'jobs'). Parallel runs\n"
            "                 share CPU cores, caches and memory bandwidth, so their times and\n"
            "                 memory are perturbed and not comparable with serial runs; use it\n"
            "                 for smoke tests and sweeps, not for published timings.\n"
            "  --resume DIR   finish an interrupted benchmark: runs in DIR's journal are kept,\n"
            "                 the missing ones run, the outputs are rewritten\n"
            "  --shard K/N    run only the K-th of N slices of the (planner, run) cells, into\n"
            "                 ROOT/<experiment>_shard-K-of-N (run again, it resumes); each\n"
            "                 cell keeps its seed; `bench merge SHARDS... --out DIR` joins\n"
            "                 the N shards into one benchmark (docs/bench.md, on a cluster)\n"
            "  --slurm        write and submit a Slurm array job of N shards and a merge job\n"
            "                 (`runlab bench --slurm --help`); `bench status DIR` follows it\n"
            "  --adaptive     runs: auto whatever the spec's runs say: run every planner\n"
            "                 round-robin and stop when the spec's goal (ranking, ci, success)\n"
            "                 is reached at its confidence, or at max_runs; the manifest and\n"
            "                 report say why it stopped (docs/bench.md, adaptive benchmarks)\n"
            "  --db OUT.db    (import, merge) the database to create or extend\n"
            "  -h, --help     this help\n\n"
            "Spec keys: experiment, problem, planners (name + planner or command, settings,\n"
            "progress), seed, max_time, max_mem, runs (0 = until max_time of summed run time,\n"
            "auto = adaptive), time_between_updates, simplify, save_console_output, jobs, grace,\n"
            "parameters, out; with runs: auto also confidence (0.95), min_runs (10), max_runs\n"
            "(200), goal (ranking|ci|success), attribute (time), relative_width (0.1), width\n"
            "(0.05).\n"
            "See docs/bench.md.\n");
}

/* ---- import and merge ------------------------------------------------------------------ */

static int cmd_import(int argc, char **argv, bool merge)
{
    const char *db = NULL, *cmd = merge ? "bench merge" : "bench import";
    const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    size_t n = 0;
    if (!inputs)
        return cli_fail(cmd, "out of memory");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0) {
            if (i + 1 >= argc) {
                free(inputs);
                return cli_usage_error(cmd, "--db needs a file name");
            }
            db = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            free(inputs);
            if (merge)
                printf("Usage: runlab bench merge DIR... --db OUT.db\n\n"
                       "Adds the OMPL log of each benchmark directory to OUT.db (created if\n"
                       "missing) as OMPL's ompl_benchmark_statistics.py would, views included.\n"
                       "An experiment OUT.db already holds (same name, host, date and seed) is\n"
                       "skipped with a warning, so merging twice never doubles a run.\n"
                       "Prints OUT.db's path. Exit codes: 0 ok, 1 unreadable input, 2 usage.\n");
            else
                printf("Usage: runlab bench import LOG... --db OUT.db\n\n"
                       "Reads OMPL benchmark logs (OMPL's own or runlab's) into OUT.db (created\n"
                       "if missing) in OMPL's schema, as ompl_benchmark_statistics.py does;\n"
                       "Planner Arena opens the result. An experiment OUT.db already holds is\n"
                       "skipped with a warning. Errors name the log's file and line.\n"
                       "Prints OUT.db's path. Exit codes: 0 ok, 1 unreadable input, 2 usage.\n");
            return RL_EXIT_OK;
        } else {
            inputs[n++] = argv[i];
        }
    }
    if (!db || !n) {
        free(inputs);
        return cli_usage_error(cmd, merge ? "need DIR... and --db OUT.db"
                                          : "need LOG... and --db OUT.db");
    }
    char **logs = calloc(MAX_LOGS, sizeof *logs);
    size_t nl = 0;
    for (size_t i = 0; i < n && logs; i++) {
        if (!merge) {
            logs[nl++] = strdup(inputs[i]);
            continue;
        }
        /* a benchmark directory: its OMPL log(s), in name order */
        struct dirent **ents;
        int k = scandir(inputs[i], &ents, NULL, alphasort);
        if (k < 0) {
            int rc = cli_fail(cmd, "%s: %s", inputs[i], strerror(errno));
            for (size_t j = 0; j < nl; j++)
                free(logs[j]);
            free(logs);
            free(inputs);
            return rc;
        }
        size_t before = nl;
        for (int j = 0; j < k; j++) {
            size_t l = strlen(ents[j]->d_name);
            if (l > 4 && strcmp(ents[j]->d_name + l - 4, ".log") == 0 && nl < MAX_LOGS) {
                char p[PATH_MAX];
                snprintf(p, sizeof p, "%s/%s", inputs[i], ents[j]->d_name);
                logs[nl++] = strdup(p);
            }
            free(ents[j]);
        }
        free(ents);
        if (nl == before) {
            int rc = cli_fail(cmd, "%s: no benchmark log (*.log) in this directory", inputs[i]);
            for (size_t j = 0; j < nl; j++)
                free(logs[j]);
            free(logs);
            free(inputs);
            return rc;
        }
    }
    int rc = logs ? rl_bench_import_logs((const char *const *)logs, nl, db)
                  : rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t j = 0; logs && j < nl; j++)
        free(logs[j]);
    free(logs);
    free(inputs);
    if (rc < 0)
        return cli_fail(cmd, "%s", rl_error_last());
    printf("%s\n", db);
    return RL_EXIT_OK;
}

/* `bench report DIR`: (re)writes DIR/report.html and DIR/figures/ from DIR/results.json. */
static int cmd_report(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("Usage: runlab bench report DIR\n\n"
               "Rewrites DIR/report.html and DIR/figures/ from DIR/results.json alone, so it\n"
               "also works on a copied or merged-in benchmark directory. Prints the report's\n"
               "path. Exit codes: 0 ok, 1 DIR has no readable results.json, 2 usage.\n");
        return RL_EXIT_OK;
    }
    if (argc != 2)
        return cli_usage_error("bench report", "expected one benchmark directory");
    char report[PATH_MAX];
    if (rl_bench_report_write(argv[1], NULL, report, sizeof report) < 0)
        return cli_fail("bench report", "%s", rl_error_last());
    printf("%s\n", report);
    return RL_EXIT_OK;
}

/* The benchmark part of `runlab demo`: four built-in planners and one that crashes on
 * the maze, written under `out_parent`. */
int cli_bench_demo(const char *out_parent)
{
    static const char DEMO_SPEC[] = "experiment: demo maze\n"
                                    "problem: maze2d\n"
                                    "seed: 1\n"
                                    "max_time: 0.3\n"
                                    "max_mem: 512\n"
                                    "runs: 8\n"
                                    "parameters: {walls: 5}\n"
                                    "planners:\n"
                                    "  - {name: RRT, planner: rrt}\n"
                                    "  - {name: RRTConnect, planner: rrtconnect}\n"
                                    "  - {name: RRTstar, planner: rrtstar}\n"
                                    "  - {name: PRM, planner: prm}\n"
                                    "  - {name: crashing planner, planner: crash}\n";
    rl_bench_spec *spec = NULL;
    if (rl_bench_spec_parse(DEMO_SPEC, sizeof DEMO_SPEC - 1, "<demo spec>", NULL, &spec) < 0)
        return cli_fail("demo", "%s", rl_error_last());
    printf("Benchmark (runlab bench): 5 planners x 8 runs on a 2-D maze, each run in its own "
           "process\n");
    fflush(stdout);
    char report[PATH_MAX] = "";
    cli_bench_job job = {.spec = spec, .out_root = out_parent, .jobs = 1, .quiet = true,
                         .report_out = report, .report_cap = sizeof report};
    int rc = cli_bench_run(&job);
    rl_bench_spec_free(spec);
    if (rc == RL_EXIT_OK)
        printf("Benchmark report: %s\n", report);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "import") == 0)
        return cmd_import(argc - 1, argv + 1, false);
    if (argc >= 2 && strcmp(argv[1], "merge") == 0) {
        /* --out DIR: shards joined into one benchmark; --db: OMPL logs into a database */
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--out") == 0 || strncmp(argv[i], "--out=", 6) == 0 ||
                strcmp(argv[i], "--force") == 0)
                return cli_bench_merge_out(argc - 1, argv + 1);
        return cmd_import(argc - 1, argv + 1, true);
    }
    if (argc >= 2 && strcmp(argv[1], "status") == 0)
        return cli_bench_status(argc - 1, argv + 1);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--slurm") == 0)
            return cli_bench_slurm(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    static const struct option opts[] = {{"out-dir", required_argument, NULL, 'o'},
                                         {"out", required_argument, NULL, 'o'}, /* old name */
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"resume", required_argument, NULL, 'r'},
                                         {"adaptive", no_argument, NULL, 'a'},
                                         {"shard", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL, *resume = NULL;
    bool adaptive = false;
    long jobs = 0;
    unsigned shard_k = 0, shard_n = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:j:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'j': {
            char *end;
            jobs = strtol(optarg, &end, 10);
            if (*end || jobs < 1 || jobs > 256)
                return cli_usage_error("bench", "-j %s: expected 1..256", optarg);
            break;
        }
        case 'r': resume = optarg; break;
        case 'a': adaptive = true; break;
        case 's':
            if (cli_parse_shard(optarg, &shard_k, &shard_n) < 0)
                return cli_usage_error("bench", "--shard %s: expected K/N with 1 <= K <= N <= "
                                       "100000 (e.g. --shard 3/8)", optarg);
            break;
        case 'h': usage(stdout); return RL_EXIT_OK;
        default: return cli_usage_error("bench", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (resume && shard_n)
        return cli_usage_error("bench", "--resume DIR keeps the shard DIR was made for; give "
                               "no --shard");
    if (resume) {
        if (optind != argc)
            return cli_usage_error("bench", "--resume DIR takes no spec (DIR has spec.json)");
        rl_bench_spec *spec = NULL;
        if (rl_bench_spec_load_dir(resume, &spec) < 0)
            return cli_fail("bench", "--resume %s: %s", resume, rl_error_last());
        cli_bench_job job = {.spec = spec, .jobs = jobs, .resume_dir = resume};
        int r = cli_bench_run(&job);
        rl_bench_spec_free(spec);
        return r;
    }
    if (optind + 1 != argc)
        return cli_usage_error("bench", "expected one SPEC.yaml (or import, merge, --resume)");
    rl_bench_spec *spec = NULL;
    if (rl_bench_spec_load(argv[optind], &spec) < 0)
        return cli_fail("bench", "%s", rl_error_last());
    cli_bench_job job = {.spec = spec, .out_root = out, .jobs = jobs, .adaptive = adaptive,
                         .shard_index = shard_k, .shard_count = shard_n};
    int r = cli_bench_run(&job);
    rl_bench_spec_free(spec);
    return r;
}
