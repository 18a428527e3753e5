/* Entry point of the runlab command: dispatches `runlab <command> [options]` to the
 * subcommands, answers --help and --version, and maps failures to the exit codes
 * 0 ok / 1 failure / 2 usage. */
#include "cli.h"

#include "runlab/plot.h"
#include "runlab/provenance.h"

#include <stdio.h>
#include <string.h>

struct command {
    const char *name;
    rl_cli_fn fn;
    const char *summary;
};

static const struct command commands[] = {
    {"bench", cmd_bench, "benchmark planners in isolated runs; import and merge OMPL results"},
    {"demo", cmd_demo, "show what runlab does, on built-in data (the `make run` job)"},
    {"evaluate", cmd_evaluate, "evaluate a recorded run offline: checks, report, figures"},
    {"experiment", cmd_experiment, "run a recorded lab experiment over DDS (recorder, START, STOP)"},
    {"explore", cmd_explore, "run the example grid exploration agent (one run or a sweep)"},
    {"list", cmd_list, "list the recorded runs under RUNLAB_HOME with their evaluations"},
    {"map", cmd_map, "compile Lanelet2/CommonRoad maps; map info, point queries, drawings"},
    {"mcap", cmd_mcap, "inspect, check, repair and filter MCAP recordings"},
    {"plot", cmd_plot, "draw figures: CSV columns; gain-cost, normalized-gain, timing of runs"},
    {"record", cmd_record, "record an experiment run (synthetic load or MCAP replay)"},
    {"recorder", cmd_recorder, "the lab's recorder node on a DDS domain (services, heartbeat)"},
    {"runs", cmd_runs, "list run directories with status and reasons; 'runs report' counts them"},
    {"sim", cmd_sim, "simulated lab vehicles on DDS, or written offline into a run"},
    {"version", cmd_version, "print version and build provenance"},
};

static void print_usage(FILE *out)
{
    fprintf(out, "Usage: runlab <command> [options]\n"
                 "       runlab --version | --help\n\n"
                 "runlab benchmarks planners, records experiments, logs planning performance\n"
                 "and evaluates runs.\n\nCommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun 'runlab <command> --help' for a command's options.\n"
                 "Exit codes: 0 success, 1 failure, 2 usage error.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return RL_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_usage(stdout);
        return RL_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
        return cmd_version(1, argv + 1);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0) {
            int rc = commands[i].fn(argc - 1, argv + 1);
            /* Font caches of cairo/fontconfig, so leak checkers see a clean exit. */
            rl_plot_release_caches();
            return rc;
        }
    fprintf(stderr, "runlab: %s: unknown command\nTry 'runlab --help'.\n", name);
    return RL_EXIT_USAGE;
}
