/* `runlab evaluate --summary [RUN...]`: one report over many runs (rl_eval_summary), the
 * runs named or those of a home chosen by `runlab list`'s filters; also the filter options
 * both commands share. Exit 0 every run PASS, 1 one FAILs, 3 none fails but not all PASS. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/eval.h"
#include "runlab/plot.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_INCOMPLETE = 3 };

bool cli_filter_option(int c, struct rl_eval_run_filter *f, bool *any)
{
    const char **slot[] = {&f->state,   &f->result,  &f->since, &f->until,
                           &f->vehicle, &f->planner, &f->fault};
    if (c < 0x100 || c > 0x106)
        return false;
    *slot[c - 0x100] = optarg;
    *any = true;
    return true;
}

static void summary_usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab evaluate --summary RUN... [OPTIONS]\n"
            "       runlab evaluate --summary [--home HOME] [FILTERS] [OPTIONS]\n\n"
            "One report over many runs: the runs named (directories or run ids), or every run\n"
            "of HOME ($RUNLAB_HOME, else ~/runlab) that the filters of `runlab list` take\n"
            "(--state, --result, --since, --until, --vehicle, --planner, --fault; see\n"
            "`runlab list --help`). Writes one new directory (HOME/summaries/<UTC>, \"_2\" ...\n"
            "when taken; never an existing one): report.html (the runs that do not pass\n"
            "first, each linked to its own evaluation's report; pass rate per check, overall\n"
            "and per group), checks.csv (one row per run and check: run, metric, check,\n"
            "vehicles, status, value, ...), summary.json (per run its result and evaluation;\n"
            "per check its pass rate overall and per group; config_sha256), figures/ (pass\n"
            "rates, each check's worst value per run) and runs/ (a relative link to each\n"
            "run's evaluation).\n\n"
            "A run's latest full evaluation is reused when it ran with this configuration\n"
            "(config.yaml's SHA-256) and the run's own map; the other runs are evaluated now\n"
            "(a new RUN/evaluations/<UTC> each), several at once. A pass rate counts the runs\n"
            "where every vehicle passes the check, over the runs where it was judged.\n\n"
            "  --home HOME        the runs of this home (without RUN)\n"
            "  --group-by FIELD   planner (default), scenario (the faults as given), fault\n"
            "                     (their kinds), seed, state, vehicles, or any manifest field\n"
            "                     as a path (\"scenario.runlab_sim.seed\")\n"
            "  --config FILE      the evaluation configuration (as `runlab evaluate`)\n"
            "  -j, --jobs N       evaluations at once (default: one per core)\n"
            "  --out DIR          write the summary to DIR, which must not exist\n\n"
            "Exit codes: 0 every run PASS; 1 a run FAILs; 3 none FAILs but some run is\n"
            "INCOMPLETE or could not be evaluated; 2 usage, no run, or the summary cannot be\n"
            "written.\n");
}

int cmd_evaluate_summary(int argc, char **argv)
{
    static const struct option longopts[] = {{"summary", no_argument, NULL, 'S'},
                                             {"home", required_argument, NULL, 'H'},
                                             {"group-by", required_argument, NULL, 'g'},
                                             {"config", required_argument, NULL, 'c'},
                                             {"jobs", required_argument, NULL, 'j'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_FILTER_OPTIONS,
                                             {NULL, 0, NULL, 0}};
    rl_eval_summary_options o = {0};
    rl_eval_run_filter filter = {0};
    bool filtered = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hj:", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'h': summary_usage(stdout); return RL_EXIT_OK;
        case 'S': break;
        case 'H': o.home = optarg; break;
        case 'g': o.group_by = optarg; break;
        case 'c': o.config_path = optarg; break;
        case 'o': o.out_dir = optarg; break;
        case 'j':
            o.jobs = (int)strtol(optarg, &end, 10);
            if (*end || end == optarg || o.jobs < 1 || o.jobs > 256)
                return cli_usage_error("evaluate", "--jobs '%s': a number 1..256", optarg);
            break;
        default:
            if (cli_filter_option(c, &filter, &filtered))
                break;
            return cli_usage_error("evaluate", "unknown option or missing value '%s'",
                                   argv[optind - 1]);
        }
    }
    size_t nnamed = (size_t)(argc - optind);
    if (nnamed && (filtered || o.home))
        return cli_usage_error("evaluate", "--summary takes RUN... or --home and filters, not both");
    char (*named)[PATH_MAX] = nnamed ? calloc(nnamed, sizeof *named) : NULL;
    const char **dirs = NULL;
    rl_eval_listed_run *listed = NULL;
    size_t nlisted = 0;
    int code = RL_EXIT_USAGE;
    if (nnamed) {
        dirs = calloc(nnamed, sizeof *dirs);
        for (size_t i = 0; named && dirs && i < nnamed; i++) {
            if (rl_eval_resolve_run(argv[optind + (int)i], NULL, named[i], PATH_MAX) < 0) {
                fprintf(stderr, "runlab: evaluate: ");
                cli_print_escaped(stderr, rl_error_last());
                fprintf(stderr, "\n");
                goto out;
            }
            dirs[i] = named[i];
        }
        o.nruns = nnamed;
    } else {
        if (rl_eval_list_runs(o.home, &listed, &nlisted) < 0 ||
            (filtered && rl_eval_list_filter(listed, &nlisted, &filter) < 0)) {
            cli_usage_error("evaluate", "%s", rl_error_last());
            goto out;
        }
        dirs = calloc(nlisted ? nlisted : 1, sizeof *dirs);
        for (size_t i = 0; dirs && i < nlisted; i++)
            dirs[i] = listed[i].dir;
        o.nruns = nlisted;
        if (nlisted == 0) {
            fprintf(stderr, "runlab: evaluate: --summary: no run%s\n",
                    filtered ? " matches the filters" : " under the home");
            goto out;
        }
    }
    if (!dirs || (nnamed && !named)) {
        code = cli_fail("evaluate", "out of memory");
        goto out;
    }
    o.runs = dirs;
    o.argc = argc;
    o.argv = argv;
    rl_eval_summary_result res;
    int rc = rl_eval_summary(&o, &res);
    rl_plot_release_caches();
    if (rc < 0) {
        fprintf(stderr, "runlab: evaluate: --summary: ");
        cli_print_escaped(stderr, rl_error_last());
        fprintf(stderr, "\n");
        goto out;
    }
    printf("summary: %zu runs: %zu PASS, %zu FAIL, %zu INCOMPLETE, %zu not evaluated; %zu "
           "evaluations reused, %zu made\n",
           res.nruns, res.verdicts[RL_EVAL_VERDICT_PASS], res.verdicts[RL_EVAL_VERDICT_FAIL],
           res.verdicts[RL_EVAL_VERDICT_INCOMPLETE], res.errors, res.reused, res.evaluated);
    printf("%s\n", res.dir);
    code = res.verdicts[RL_EVAL_VERDICT_FAIL]                         ? RL_EXIT_FAILURE
           : res.verdicts[RL_EVAL_VERDICT_INCOMPLETE] || res.errors ? EXIT_INCOMPLETE
                                                                      : RL_EXIT_OK;
    rl_eval_summary_result_free(&res);
out:
    free(named);
    free(dirs);
    rl_eval_list_free(listed, nlisted);
    return code;
}
