/* libFuzzer target for the readers of run directories on disk (issue 29 item 14): the input
 * lays out a recorder home and a perflog run in which each file or folder is a regular file,
 * a directory, a FIFO, a link to a file, to a folder, to /dev/zero, a dangling link, a link
 * to itself or to an ancestor; then the run loader (rl_runs_load), `runlab list`'s reader
 * (rl_eval_list_runs) and the evaluation's loader (eval_load) read it. Nothing may block,
 * crash, leak or read without end: a FIFO or /dev/zero where a file belongs is refused at
 * once, so a hang is a "timeout-" finding. */
#include "eval/eval_load.h"
#include "runlab/error.h"
#include "runlab/eval.h"
#include "runlab/fs.h"
#include "runlab/runs.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The places of the tree, relative to the scratch directory; parents before children. */
static const char *const entries[] = {
    "home/experiments/20260101T000000Z_r1",
    "home/experiments/20260101T000000Z_r1/manifest.json",
    "home/experiments/20260101T000000Z_r1/bag",
    "home/experiments/20260101T000000Z_r1/bag/run.mcap",
    "home/experiments/20260101T000000Z_r1/map",
    "home/experiments/20260101T000000Z_r1/map/runtime_map.bin",
    "home/experiments/20260101T000000Z_r1/evaluations",
    "home/experiments/20260101T000000Z_r1/evaluations/20260101T000100Z",
    "home/experiments/20260101T000000Z_r1/evaluations/20260101T000100Z/summary.json",
    "home/experiments/20260101T000000Z_r2",
    "runs/p1",
    "runs/p1/performance_log.csv",
    "runs/p1/run_manifest.yaml",
    "runs/p1/episode_summary.yaml",
    "runs/p2",
};
enum { NUM_ENTRIES = sizeof entries / sizeof entries[0] };

enum kind {
    K_ABSENT, K_REGULAR, K_DIR, K_FIFO, K_LINK_FILE, K_LINK_DIR, K_LINK_ZERO, K_LINK_DANGLING,
    K_LINK_SELF, K_LINK_UP, K_COUNT
};

static char g_root[PATH_MAX], g_outside_dir[PATH_MAX + 16];

static int make(const char *path, enum kind k, const uint8_t *body, size_t n)
{
    switch (k) {
    case K_ABSENT: return 0;
    case K_REGULAR: {
        FILE *f = fopen(path, "wb");
        if (!f)
            return -1;
        if (n)
            fwrite(body, 1, n, f);
        return fclose(f);
    }
    case K_DIR: return mkdir(path, 0755);
    case K_FIFO: return mkfifo(path, 0644);
    case K_LINK_FILE: return symlink("../outside.txt", path);
    case K_LINK_DIR: return symlink(g_outside_dir, path); /* never a tree outside the scratch */
    case K_LINK_ZERO: return symlink("/dev/zero", path);
    case K_LINK_DANGLING: return symlink("no-such-entry", path);
    case K_LINK_SELF: return symlink(strrchr(path, '/') + 1, path);
    case K_LINK_UP: return symlink("..", path);
    default: return -1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[PATH_MAX], path[PATH_MAX + 128];
    if (!g_root[0] && rl_fs_mkdtemp("runlab-fuzz-tree-", g_root, sizeof g_root) != RL_OK)
        abort();
    snprintf(dir, sizeof dir, "%s/t", g_root);
    rl_fs_remove_tree(dir);
    if (mkdir(dir, 0755) != 0)
        abort();
    snprintf(path, sizeof path, "%s/outside.txt", dir);
    make(path, K_REGULAR, (const uint8_t *)"x,y\n1,2\n", 8);
    snprintf(g_outside_dir, sizeof g_outside_dir, "%s/outside", dir);
    if (mkdir(g_outside_dir, 0755) != 0)
        abort();
    snprintf(path, sizeof path, "%s/outside/run_manifest.yaml", dir);
    make(path, K_REGULAR, (const uint8_t *)"random_seed: 3\n", 15);
    static const char *const fixed[] = {"home", "home/experiments", "runs"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, fixed[i]);
        if (mkdir(path, 0755) != 0)
            abort();
    }
    /* The input: one byte per entry (its kind), then the bodies of regular files, split at
     * "|||" in entry order. */
    size_t head = size < NUM_ENTRIES ? size : NUM_ENTRIES;
    const uint8_t *body = data + head;
    size_t left = size - head;
    for (size_t e = 0; e < NUM_ENTRIES; e++) {
        enum kind k = e < head ? (enum kind)(data[e] % K_COUNT) : K_DIR;
        const char *name = strrchr(entries[e], '/') + 1;
        bool is_dir = strchr(name, '.') == NULL; /* folders have no dot in their names */
        if (k == K_DIR && !is_dir)
            k = K_REGULAR;
        if (k == K_REGULAR && is_dir)
            k = K_DIR;
        size_t n = 0;
        while (n < left && !(n + 3 <= left && memcmp(body + n, "|||", 3) == 0))
            n++;
        snprintf(path, sizeof path, "%s/%s", dir, entries[e]);
        (void)make(path, k, body, k == K_REGULAR ? n : 0); /* a missing parent: ENOENT */
        if (k == K_REGULAR) {
            size_t step = n + 3 <= left ? n + 3 : left;
            body += step;
            left -= step;
        }
    }

    rl_run_limits lim = {.max_line_bytes = 4096, .threads = 1};
    snprintf(path, sizeof path, "%s/runs", dir);
    const char *roots[] = {path};
    rl_run_set *set = NULL;
    if (rl_runs_load(roots, 1, &lim, &set) != RL_OK)
        abort();
    for (size_t i = 0; i < set->count; i++)
        if (set->runs[i]->status > RL_RUN_SKIPPED)
            abort();
    rl_run_set_free(set);

    snprintf(path, sizeof path, "%s/home", dir);
    rl_eval_listed_run *runs = NULL;
    size_t count = 0;
    if (rl_eval_list_runs(path, &runs, &count) == RL_OK)
        rl_eval_list_free(runs, count);

    snprintf(path, sizeof path, "%s/%s", dir, entries[0]);
    eval_loaded *l = NULL;
    if (eval_load(path, &l) == RL_OK)
        eval_loaded_free(l);
    return 0;
}
