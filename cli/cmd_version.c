/* `runlab version` / `runlab --version`: the version with its git sha, and with
 * --verbose the whole build and machine provenance as YAML-like lines. */
#include "cli.h"

#include "runlab/provenance.h"

#include <stdio.h>
#include <string.h>

int cmd_version(int argc, char **argv)
{
    bool verbose = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("Usage: runlab version [--verbose]\n\n"
                   "Prints runlab's version and the git commit it was built from.\n"
                   "  -v, --verbose  also print build type, compiler, host, CPU and OS\n");
            return RL_EXIT_OK;
        }
        if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0)
            verbose = true;
        else
            return cli_usage_error("version", "unknown option '%s'", argv[i]);
    }
    printf("runlab %s\n", rl_version_string());
    if (verbose) {
        rl_provenance p;
        rl_provenance_collect(&p);
        printf("git_sha: %s\ngit_dirty: %s\nbuild_type: %s\ncompiler: %s\nhost: %s\n"
               "cpu_model: %s\ncpu_cores: %d\nos: %s\n",
               p.git_sha, p.git_dirty ? "true" : "false", p.build_type, p.compiler, p.host,
               p.cpu_model, p.cpu_cores, p.os);
    }
    return RL_EXIT_OK;
}
