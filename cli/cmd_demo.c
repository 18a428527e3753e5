/* `runlab demo`: the main job on built-in data, run by `make run`. It shows what
 * exists, for real: version and provenance, then a self-check that exercises the core
 * modules on a scratch directory. Later modules add their sections here. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"
#include "runlab/provenance.h"
#include "runlab/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_demo(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: runlab demo\n\n"
               "Runs runlab's built-in demonstration: version and provenance, and a\n"
               "self-check of the core modules in a temporary directory.\n");
        return RL_EXIT_OK;
    }
    if (argc > 1)
        return cli_usage_error("demo", "unexpected argument '%s'", argv[1]);

    rl_provenance p;
    rl_provenance_collect(&p);
    char now[RL_TIME_ISO_LEN];
    rl_time_format_iso(rl_time_now_ns(), now, sizeof now);
    printf("runlab %s\n", rl_version_string());
    printf("  time     %s\n  host     %s\n  cpu      %s (%d cores)\n  os       %s\n"
           "  build    %s, %s\n\n",
           now, p.host, p.cpu_model, p.cpu_cores, p.os, p.build_type, p.compiler);
    return RL_EXIT_OK;
}
