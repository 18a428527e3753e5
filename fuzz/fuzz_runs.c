/* libFuzzer target for the run loader (runlab/runs.h): the input is split at "|||" into
 * performance_log.csv, run_manifest.yaml and episode_summary.yaml of a scratch run
 * directory, which is then loaded; checks the loader's invariants on whatever comes back. */
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/runs.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_dir[PATH_MAX];

static void put(const char *name, const uint8_t *p, size_t n, int present)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    unlink(path);
    if (!present)
        return;
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (n)
        fwrite(p, 1, n, f);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_dir[0] && rl_fs_mkdtemp("runlab-fuzz-runs-", g_dir, sizeof g_dir) != RL_OK)
        abort();
    static const char *const names[3] = {"performance_log.csv", "run_manifest.yaml",
                                         "episode_summary.yaml"};
    size_t start = 0;
    int part = 0;
    for (size_t i = 0; part < 3; i++) {
        bool at_end = i >= size;
        if (at_end || (i + 3 <= size && memcmp(data + i, "|||", 3) == 0)) {
            put(names[part], data + start, i - start, 1);
            part++;
            start = i + 3;
            i += 2;
            if (at_end)
                break;
        }
    }
    for (; part < 3; part++)
        put(names[part], NULL, 0, 0);
    rl_run_limits lim = {.max_line_bytes = 4096};
    rl_run *run = NULL;
    if (rl_run_load(g_dir, &lim, &run) != RL_OK)
        abort();
    if (run->status > RL_RUN_SKIPPED)
        abort();
    if ((run->status == RL_RUN_PARSED) != (run->reasons == 0))
        abort();
    if (run->status != RL_RUN_SKIPPED && (run->num_rows == 0 || !run->columns))
        abort();
    double sink = 0;
    for (size_t j = 0; run->columns && j < run->num_columns; j++)
        for (size_t i = 0; i < run->num_rows; i++)
            sink += run->columns[j][i];
    (void)sink;
    rl_run_free(run);
    return 0;
}
