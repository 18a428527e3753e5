/* `runlab recorder`: the recorder node on a DDS domain until SIGINT/SIGTERM (runlab/lab.h),
 * configured by --config (recorder_config.c) and --topic; prints each run's directory as
 * that run ends. `runlab experiment` (cmd_lab.c) starts it with --control-fd. */
#include "cli.h"
#include "recorder_config.h"

#include "runlab/error.h"
#include "runlab/lab.h"

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Set by the signal handler, read by the serving loop. */
static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
    g_signal = sig;
}

enum { MAX_PATTERNS = RECORDER_CONFIG_MAX_PATTERNS };

/* ---- runlab recorder ------------------------------------------------------------------ */

static void recorder_usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab recorder [--domain D] [--home DIR] [--config FILE] [--topic PATTERN]...\n"
            "                       [--control-fd FD]\n\n"
            "Runs the lab's recorder node on DDS domain D (default 0) until Ctrl-C or SIGTERM:\n"
            "services /lab/evaluation/{prepare,begin,finish}_recording, the heartbeat\n"
            "/lab/evaluation/recording_state every 250 ms, and recording of the lab's topics\n"
            "(rt/lab/..., rt/clock, rt/diagnostics, rt/tf), the prepared vehicles' topics\n"
            "(rt/vehicle/<id>/...) and every PATTERN ('*' wildcards, DDS names: rt/... for ROS 2\n"
            "topics) into $RUNLAB_HOME/experiments/<UTC time>_<run id>/ as raw CDR with omgidl\n"
            "schemas from the writers' type information. One recorder per host and domain:\n"
            "a second is refused and the holder named. The middleware is configured by\n"
            "CYCLONEDDS_URI as usual.\n\n"
            "Options:\n"
            "  --domain D       DDS domain id 0..232 (default 0)\n"
            "  --home DIR       runlab home (default $RUNLAB_HOME, else ~/runlab)\n"
            "  --config FILE    YAML/JSON: topics: [PATTERN...], schemas: [{type: NAME, idl: TEXT\n"
            "                   or idl_file: PATH}], lock_dir: DIR, compression: none|zstd|lz4\n"
            "                   (default zstd), compression_level: N (zstd -7..22, default 1;\n"
            "                   lz4 0..12, default 0), control_flow_timeout: SEC (default 1.5;\n"
            "                   0: never; else 0.5..3600)\n"
            "  --topic PATTERN  a further DDS topic pattern to record (repeatable)\n"
            "  --control-fd FD  the read end of a pipe held by the process that started the\n"
            "                   recorder (runlab experiment passes it): when that process ends,\n"
            "                   however it ends, a run still going ends INTERRUPTED (\"control\n"
            "                   flow lost\") and the recorder exits\n"
            "  -h, --help       this help\n\n"
            "A run whose control flow publishes its heartbeat (/lab/evaluation/control_heartbeat,\n"
            "as runlab experiment does) ends INTERRUPTED (\"control flow lost\") when that\n"
            "heartbeat is silent for control_flow_timeout; the recorder serves on.\n\n"
            "Prints each run's directory on a line of its own as that run ends (a run still\n"
            "going at Ctrl-C ends INTERRUPTED and is printed last).\n"
            "Exit codes: 0 stopped cleanly, 1 could not start (e.g. another recorder), 2 usage.\n");
}

int cmd_recorder(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        recorder_usage(stdout);
        return RL_EXIT_OK;
    }
    static const struct option opts[] = {{"domain", required_argument, NULL, 'd'},
                                         {"home", required_argument, NULL, 'H'},
                                         {"config", required_argument, NULL, 'c'},
                                         {"topic", required_argument, NULL, 't'},
                                         {"control-fd", required_argument, NULL, 'C'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int domain = 0, control_fd = 0;
    const char *home = NULL, *config = NULL;
    const char *topics[MAX_PATTERNS];
    size_t ntopics = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            if (cli_parse_domain("recorder", optarg, &domain) != RL_EXIT_OK)
                return RL_EXIT_USAGE;
            break;
        case 'H': home = optarg; break;
        case 'c': config = optarg; break;
        case 't':
            if (ntopics == MAX_PATTERNS)
                return cli_usage_error("recorder", "more than %d --topic patterns", MAX_PATTERNS);
            topics[ntopics++] = optarg;
            break;
        case 'C': {
            double fd = 0;
            if (cli_parse_number("recorder", "--control-fd", optarg, 1, 65535, 1, &fd) !=
                RL_EXIT_OK)
                return RL_EXIT_USAGE;
            control_fd = (int)fd;
            if (fcntl(control_fd, F_GETFD) < 0)
                return cli_usage_error("recorder", "--control-fd %d: not an open descriptor",
                                       control_fd);
            break;
        }
        default:
            return cli_usage_error("recorder", "unknown or incomplete option '%s'",
                                   argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("recorder", "unexpected argument '%s'", argv[optind]);

    recorder_config cfg = {.control_timeout_ns = -1};
    rl_record_options_default(&cfg.engine);
    if (config) {
        int ec = read_recorder_config("recorder", config, &cfg);
        if (ec != RL_EXIT_OK) {
            recorder_config_free(&cfg);
            return ec;
        }
    }
    for (size_t i = 0; i < ntopics && cfg.pattern_count < MAX_PATTERNS; i++)
        cfg.patterns[cfg.pattern_count++] = topics[i];

    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.domain = domain;
    o.home = home;
    o.lock_dir = cfg.lock_dir;
    o.patterns = cfg.patterns;
    o.pattern_count = cfg.pattern_count;
    o.schemas = cfg.schemas;
    o.schema_count = cfg.schema_count;
    o.engine = &cfg.engine;
    if (cfg.control_timeout_ns >= 0)
        o.control_timeout_ns = cfg.control_timeout_ns;
    o.control_fd = control_fd;
    /* With a control pipe our stdout is likely the control flow's: if that went away, a
       run directory printed into it must not kill the recorder (EPIPE instead). */
    if (control_fd > 0)
        signal(SIGPIPE, SIG_IGN);

    struct sigaction old[2];
    cli_catch_signals(on_signal, old);
    rl_lab_recorder *node = NULL;
    if (rl_lab_recorder_new(&node, &o) < 0) {
        int ec = cli_fail("recorder", "%s", rl_error_last());
        recorder_config_free(&cfg);
        cli_restore_signals(old);
        return ec;
    }
    /* The compression the node was given (o.engine), not the config's text. */
    char level[32] = "";
    if (o.engine->compression_level)
        snprintf(level, sizeof level, " level %d", o.engine->compression_level);
    fprintf(stderr, "runlab recorder: serving DDS domain %d (pid %d), bag compression %s%s; "
            "queue limits %llu messages, %.0f MiB; Ctrl-C stops\n",
            domain, (int)getpid(), rl_record_compression_name(o.engine->compression), level,
            (unsigned long long)o.engine->max_queued_messages,
            (double)o.engine->max_queued_bytes / (1024.0 * 1024.0));
    /* Each run's directory is printed once the run has ended, so that a script reading
       the output line by line learns of every run while the node goes on serving. */
    char run_dir[4096], printed[4096] = "";
    while (!g_signal) {
        if (rl_lab_recorder_control_closed(node)) {
            fprintf(stderr, "runlab recorder: the process that started it has ended (control "
                    "pipe closed); stopping\n");
            break;
        }
        cli_sleep_ms(50);
        rl_record_state state = rl_lab_recorder_run(node, run_dir, sizeof run_dir);
        if (run_dir[0] && strcmp(run_dir, printed) != 0 &&
            (state == RL_RECORD_COMPLETE || state == RL_RECORD_INTERRUPTED ||
             state == RL_RECORD_FAILED)) {
            printf("%s\n", run_dir);
            fflush(stdout);
            snprintf(printed, sizeof printed, "%s", run_dir);
        }
    }
    /* A run still going ends INTERRUPTED as the node stops. */
    rl_lab_recorder_run(node, run_dir, sizeof run_dir);
    rl_lab_recorder_free(node);
    recorder_config_free(&cfg);
    cli_restore_signals(old);
    if (run_dir[0] && strcmp(run_dir, printed) != 0)
        printf("%s\n", run_dir);
    return RL_EXIT_OK;
}
