/* libFuzzer target for `runlab record --repair` (rl_record_repair and
 * rl_record_run_unfinished): the input is split at "|||" into manifest.json,
 * config/recorder.json and the bag of a scratch run directory killed mid-run; the repair
 * must return RL_OK or an error, never crash, and a manifest it wrote must be a JSON
 * object saying a final state. */
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/record.h"

#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_root[PATH_MAX];

static void put(const char *dir, const char *name, const uint8_t *p, size_t n)
{
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (n && fwrite(p, 1, n, f) != n)
        abort();
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_root[0] && rl_fs_mkdtemp("runlab-fuzz-repair-", g_root, sizeof g_root) != RL_OK)
        abort();
    char exp[PATH_MAX + 32], dir[2 * PATH_MAX], sub[3 * PATH_MAX];
    snprintf(exp, sizeof exp, "%s/experiments", g_root);
    snprintf(dir, sizeof dir, "%s/20261201T000000Z_r1", exp);
    rl_fs_remove_tree(exp);
    if (mkdir(exp, 0755) != 0 || mkdir(dir, 0755) != 0)
        abort();
    static const char *const names[3] = {"manifest.json", "config/recorder.json", "bag/r1.mcap"};
    snprintf(sub, sizeof sub, "%s/config", dir);
    mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/bag", dir);
    mkdir(sub, 0755);
    size_t start = 0;
    int part = 0;
    for (size_t i = 0; part < 3 && start <= size; i++) {
        int at_end = i >= size;
        if (at_end || (i + 3 <= size && memcmp(data + i, "|||", 3) == 0)) {
            if (i > start || part == 2)
                put(dir, names[part], data + start, i - start);
            part++;
            start = i + 3;
            i += 2;
            if (at_end)
                break;
        }
    }
    char why[PATH_MAX + 256];
    (void)rl_record_run_unfinished(dir, why, sizeof why);
    rl_record_repair_report rep;
    int rc = rl_record_repair(dir, &rep);
    if (rc > 0)
        abort();
    if (rc == RL_OK && rep.repaired) {
        char path[3 * PATH_MAX];
        snprintf(path, sizeof path, "%s/manifest.json", dir);
        json_object *m = json_object_from_file(path);
        json_object *st = NULL;
        if (!m || !json_object_object_get_ex(m, "state", &st))
            abort();
        const char *s = json_object_get_string(st);
        if (!s || (strcmp(s, "INTERRUPTED") && strcmp(s, "COMPLETE") && strcmp(s, "FAILED")))
            abort();
        json_object_put(m);
        if (rl_record_run_unfinished(dir, why, sizeof why))
            abort();
    }
    return 0;
}
