/* Entry point of the runlab command: dispatches `runlab <command> [options]` to the
 * subcommands, answers --help and --version, and maps failures to the exit codes
 * 0 ok / 1 failure / 2 usage. */
#include "cli.h"

#include "runlab/plot.h"
#include "runlab/provenance.h"

#include <stdarg.h>
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
    {"experiment", cmd_experiment, "run a recorded lab experiment over DDS (recorder, START, STOP)"},
    {"explore", cmd_explore, "run the example grid exploration agent (one run or a sweep)"},
    {"mcap", cmd_mcap, "inspect, check, repair and filter MCAP recordings"},
    {"plot", cmd_plot, "draw CSV columns as a PNG, SVG or PDF figure"},
    {"record", cmd_record, "record an experiment run (synthetic load or MCAP replay)"},
    {"recorder", cmd_recorder, "the lab's recorder node on a DDS domain (services, heartbeat)"},
    {"runs", cmd_runs, "list run directories with status and reasons; 'runs report' counts them"},
    {"sim", cmd_sim, "simulated lab vehicles on DDS, or written offline into a run"},
    {"version", cmd_version, "print version and build provenance"},
};

int cli_fail(const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "runlab: %s: ", what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return RL_EXIT_FAILURE;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "runlab: %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'runlab %s --help'.\n", cmd);
    va_end(ap);
    return RL_EXIT_USAGE;
}

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return false;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return true;
    }
    return false;
}

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
