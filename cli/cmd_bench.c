/* `runlab bench`: run a benchmark from a spec, import OMPL logs, merge results. */
#include "cli.h"
#include "runlab/bench.h"
#include "runlab/error.h"
#include <stdio.h>
#include <string.h>

static int cmd_import(int argc, char **argv)
{
    const char *db = NULL;
    const char *logs[256];
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
            db = argv[++i];
        else if (n < 256)
            logs[n++] = argv[i];
    }
    if (!db || !n)
        return cli_usage_error("bench import", "need LOG... and --db OUT.db");
    if (rl_bench_import_logs(logs, n, db) < 0)
        return cli_fail("bench import", "%s", rl_error_last());
    return RL_EXIT_OK;
}

int cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "import") == 0)
        return cmd_import(argc - 1, argv + 1);
    return cli_usage_error("bench", "usage");
}
