/* `runlab explore`: runs the example grid exploration agent (examples/explore) for one
 * scene and seed, or a sweep over scenes x planners x seeds written below <root>/<task>/,
 * printing one line per run with its end reason, cost, gain and run directory. */
#include "cli.h"

#include "explore.h"
#include "runlab/error.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "Usage: runlab explore [options]\n"
                 "       runlab explore --sweep [--scenes LIST] [--seeds LIST] [--planners LIST] "
                 "[options]\n\n"
                 "Runs the example 2D grid exploration agent and logs every planning cycle\n"
                 "(docs/perflog.md) below ROOT/[TASK/]grid/sNN/PLANNER/YYYYmmdd_HHMMSS/.\n\n"
                 "  --root DIR        data root (default: $RUNLAB_DATA_ROOT, else ~/runlab_data)\n"
                 "  --task NAME       extra directory level below the root (sweep default: sweep)\n"
                 "  --scene N         scene id 1..999 (default 1)\n"
                 "  --seed N          random seed (default 1)\n"
                 "  --planner NAME    nbv (planning + backtracking, default) or nbv_nobt\n"
                 "  --budget B        cost budget, 0 = unbounded (default 200)\n"
                 "  --cost KIND       time (default) or distance\n"
                 "  --maps N          save N map snapshots (PGM)\n"
                 "  --size WxH        grid size in cells (default 48x32, at most 2000x2000)\n"
                 "  --no-log          no performance_log.csv (manifest and summary only)\n"
                 "  --sweep           run every combination of --scenes, --seeds, --planners\n"
                 "  --scenes LIST     comma-separated scene ids (default 1,2,3)\n"
                 "  --seeds LIST      comma-separated seeds (default 1,2)\n"
                 "  --planners LIST   comma-separated planners (default nbv,nbv_nobt)\n"
                 "                    (a LIST option may repeat: the values add up)\n"
                 "  -h, --help        show this help\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
        return -1;
    *out = v;
    return 0;
}

/* Appends the comma-separated unsigned numbers of `s` to out[*n..cap) (a repeated list
 * option adds up, docs/cli.md). An empty element ("1,,2", ",1", "1,") is an error: it is
 * a typo, not a request for fewer runs. */
static int parse_list(const char *s, uint64_t *out, int *n, int cap)
{
    char buf[256];
    if (!*s || snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf)
        return -1;
    for (char *t = buf;;) {
        char *comma = strchr(t, ',');
        if (comma)
            *comma = '\0';
        if (!*t || *n >= cap || parse_u64(t, &out[*n]) != 0)
            return -1;
        (*n)++;
        if (!comma)
            return 0;
        t = comma + 1;
    }
}

static int run_one(explore_config *cfg)
{
    explore_result r;
    if (explore_run(cfg, &r) != RL_OK)
        return cli_fail("explore", "%s", rl_error_last());
    printf("s%02d %-8s seed %-3llu %-16s %4d cycles  total cost " CLI_NUM_FMT_W(8)
           "  final gain " CLI_NUM_FMT_W(8) " m2  %s\n",
           cfg->scene,
           explore_planner_name(cfg), (unsigned long long)cfg->seed,
           rl_end_reason_name(r.end_reason), r.cycles, r.total_cost, r.gain, r.run_dir);
    fflush(stdout);
    if (r.end_reason == RL_END_STOPPED && rl_perflog_stop_requested())
        return cli_fail("explore", "stopped by a signal; summary written in %s", r.run_dir);
    return RL_EXIT_OK;
}

int cmd_explore(int argc, char **argv)
{
    explore_config cfg;
    explore_config_init(&cfg);
    bool sweep = false, nbv = true, nobt = false, planners_set = false;
    bool scenes_set = false, seeds_set = false;
    uint64_t scenes[64] = {1, 2, 3}, seeds[64] = {1, 2}, v;
    int nscenes = 3, nseeds = 2;
    static const struct option opts[] = {
        {"root", required_argument, NULL, 'r'},    {"task", required_argument, NULL, 't'},
        {"scene", required_argument, NULL, 's'},   {"seed", required_argument, NULL, 'S'},
        {"planner", required_argument, NULL, 'p'}, {"budget", required_argument, NULL, 'b'},
        {"cost", required_argument, NULL, 'c'},    {"maps", required_argument, NULL, 'm'},
        {"size", required_argument, NULL, 'z'},    {"no-log", no_argument, NULL, 'n'},
        {"sweep", no_argument, NULL, 'w'},         {"scenes", required_argument, NULL, 'A'},
        {"seeds", required_argument, NULL, 'B'},   {"planners", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},          {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'r': cfg.root = optarg; break;
        case 't': cfg.task = optarg; break;
        case 's':
            if (parse_u64(optarg, &v) || v < 1 || v > 999)
                return cli_usage_error("explore", "--scene must be 1..999, not '%s'", optarg);
            cfg.scene = (int)v;
            break;
        case 'S':
            if (parse_u64(optarg, &cfg.seed))
                return cli_usage_error("explore", "--seed must be a number, not '%s'", optarg);
            break;
        case 'p':
        case 'P': {
            if (!planners_set || c == 'p')
                nbv = nobt = false;
            planners_set = true;
            char buf[128];
            if (snprintf(buf, sizeof buf, "%s", optarg) >= (int)sizeof buf)
                return cli_usage_error("explore", "planner list too long");
            for (char *t = buf, *comma; t; t = comma ? comma + 1 : NULL) {
                if ((comma = strchr(t, ',')) != NULL)
                    *comma = '\0';
                if (!*t)
                    return cli_usage_error("explore", "--planners: empty name in '%s'", optarg);
                if (strcmp(t, "nbv") == 0)
                    nbv = true;
                else if (strcmp(t, "nbv_nobt") == 0)
                    nobt = true;
                else
                    return cli_usage_error("explore", "unknown planner '%s' (nbv, nbv_nobt)", t);
            }
            if (c == 'p' && nbv == nobt)
                return cli_usage_error("explore", "--planner takes one name; use --planners");
            break;
        }
        case 'b': {
            char *end;
            cfg.budget = strtod(optarg, &end);
            if (end == optarg || *end || cfg.budget < 0)
                return cli_usage_error("explore", "--budget must be a number >= 0, not '%s'",
                                       optarg);
            break;
        }
        case 'c':
            if (strcmp(optarg, "time") == 0)
                cfg.cost = EXPLORE_COST_TIME;
            else if (strcmp(optarg, "distance") == 0)
                cfg.cost = EXPLORE_COST_DISTANCE;
            else
                return cli_usage_error("explore", "--cost is time or distance, not '%s'", optarg);
            break;
        case 'm':
            if (parse_u64(optarg, &v) || v > 1000)
                return cli_usage_error("explore", "--maps must be 0..1000, not '%s'", optarg);
            cfg.num_maps = (int)v;
            break;
        case 'z': {
            int w = 0, h = 0;
            char tail;
            if (sscanf(optarg, "%dx%d%c", &w, &h, &tail) != 2 || w < 12 || h < 12 || w > 2000 ||
                h > 2000)
                return cli_usage_error("explore",
                                       "--size must be WxH with 12..2000 cells, not '%s'", optarg);
            cfg.width = w;
            cfg.height = h;
            break;
        }
        case 'n': cfg.log_performance = false; break;
        case 'w': sweep = true; break;
        case 'A':
            if (!scenes_set)
                nscenes = 0;
            scenes_set = true;
            if (parse_list(optarg, scenes, &nscenes, 64) < 0)
                return cli_usage_error("explore",
                                       "--scenes: bad list '%s' (comma-separated numbers, no "
                                       "empty element, at most 64)",
                                       optarg);
            break;
        case 'B':
            if (!seeds_set)
                nseeds = 0;
            seeds_set = true;
            if (parse_list(optarg, seeds, &nseeds, 64) < 0)
                return cli_usage_error("explore",
                                       "--seeds: bad list '%s' (comma-separated numbers, no "
                                       "empty element, at most 64)",
                                       optarg);
            break;
        case 'h': usage(stdout); return RL_EXIT_OK;
        default: return cli_usage_error("explore", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("explore", "unexpected argument '%s'", argv[optind]);
    if (!sweep) {
        cfg.backtracking = !(planners_set && nobt && !nbv);
        return run_one(&cfg);
    }
    if (!planners_set)
        nobt = true;
    if (!cfg.task)
        cfg.task = "sweep";
    for (int i = 0; i < nscenes; i++)
        if (scenes[i] < 1 || scenes[i] > 999)
            return cli_usage_error("explore", "scene ids must be 1..999");
    int failures = 0;
    for (int i = 0; i < nscenes; i++)
        for (int p = 0; p < 2; p++) {
            if ((p == 0 && !nbv) || (p == 1 && !nobt))
                continue;
            for (int s = 0; s < nseeds; s++) {
                cfg.scene = (int)scenes[i];
                cfg.seed = seeds[s];
                cfg.backtracking = p == 0;
                if (run_one(&cfg) != RL_EXIT_OK)
                    failures++;
                if (rl_perflog_stop_requested())
                    return cli_fail("explore", "sweep interrupted");
            }
        }
    return failures ? cli_fail("explore", "%d run(s) failed", failures) : RL_EXIT_OK;
}
