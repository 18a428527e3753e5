/* Loading runs as every command over run directories does (cli.h): the roots checked
 * (cli_check_roots), a progress bar on a terminal for many runs (cli_on_run_loaded), and
 * both around rl_runs_load (cli_load_runs: `runlab plot gain-cost|normalized-gain|timing`;
 * `runlab runs` streams with rl_runs_each). A helper of the commands; it calls none. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/progress.h"
#include "runlab/runs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Below this many runs a load is quick and a progress line would only be noise. */
enum { PROGRESS_MIN_RUNS = 100 };

void cli_on_run_loaded(size_t done, size_t total, const char *path, void *user)
{
    (void)path;
    struct cli_load_progress *lp = user;
    if (!lp->tried) {
        lp->tried = true;
        if (total >= PROGRESS_MIN_RUNS && isatty(STDERR_FILENO))
            (void)rl_progress_new(&lp->bar, stderr, "runs", total, 1);
    }
    if (lp->bar)
        rl_progress_update(lp->bar, done, NULL);
}

int cli_check_roots(const char *cmd, char **roots, size_t num_roots)
{
    for (size_t i = 0; i < num_roots; i++) {
        struct stat st;
        if (stat(roots[i], &st) != 0)
            return cli_fail(cmd, "%s: %s", roots[i], strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return cli_fail(cmd, "%s: not a directory", roots[i]);
    }
    return RL_EXIT_OK;
}

int cli_load_runs(const char *cmd, char **roots, size_t num_roots, struct rl_run_set **set)
{
    int crc = cli_check_roots(cmd, roots, num_roots);
    if (crc != RL_EXIT_OK)
        return crc;
    struct cli_load_progress lp = {NULL, false};
    int rc = rl_runs_load_progress((const char *const *)roots, num_roots, NULL, cli_on_run_loaded,
                                   &lp, set);
    rl_progress_finish(lp.bar);
    return rc == RL_OK ? RL_EXIT_OK : cli_fail(cmd, "%s", rl_error_last());
}
