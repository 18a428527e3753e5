/* cli_load_runs (cli.h): the run loader as every command over run directories calls it
 * (`runlab runs`, `runlab plot gain-cost|normalized-gain|timing`): roots checked, a
 * progress bar on a terminal for many runs. A helper of the commands; it calls none. */
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

struct load_progress {
    rl_progress *bar;
    bool tried;
};

static void on_run_loaded(size_t done, size_t total, const char *path, void *user)
{
    (void)path;
    struct load_progress *lp = user;
    if (!lp->tried) {
        lp->tried = true;
        if (total >= PROGRESS_MIN_RUNS && isatty(STDERR_FILENO))
            (void)rl_progress_new(&lp->bar, stderr, "runs", total, 1);
    }
    if (lp->bar)
        rl_progress_update(lp->bar, done, NULL);
}

int cli_load_runs(const char *cmd, char **roots, size_t num_roots, struct rl_run_set **set)
{
    /* A root that is not there is the user's mistake, not an empty result. */
    for (size_t i = 0; i < num_roots; i++) {
        struct stat st;
        if (stat(roots[i], &st) != 0)
            return cli_fail(cmd, "%s: %s", roots[i], strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return cli_fail(cmd, "%s: not a directory", roots[i]);
    }
    struct load_progress lp = {NULL, false};
    int rc = rl_runs_load_progress((const char *const *)roots, num_roots, NULL, on_run_loaded,
                                   &lp, set);
    rl_progress_finish(lp.bar);
    return rc == RL_OK ? RL_EXIT_OK : cli_fail(cmd, "%s", rl_error_last());
}
