/* Reads and describes the recorder's configuration file (recorder_config.h), for
 * `runlab recorder --config` and `runlab experiment --recorder-config`. */
#include "recorder_config.h"

#include "cli.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_PATTERNS = RECORDER_CONFIG_MAX_PATTERNS, MAX_SCHEMAS = RECORDER_CONFIG_MAX_SCHEMAS };

void recorder_config_free(recorder_config *c)
{
    for (size_t i = 0; i < c->schema_count; i++)
        free(c->idl_texts[i]);
    if (c->doc)
        json_object_put(c->doc);
}

/* Reads --config (for `cmd`: recorder, or experiment's --recorder-config): every problem
 * names the file and key. */
int read_recorder_config(const char *cmd, const char *path, recorder_config *c)
{
    int rc = cli_read_spec(cmd, path, &c->doc);
    if (rc != RL_EXIT_OK)
        return rc;
    json_object *arr = NULL;
    rc = rl_json_get_array(c->doc, "topics", &arr);
    if (rc == RL_EPARSE)
        return cli_fail(cmd, "%s: %s", path, rl_error_last());
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
        json_object *t = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(t, json_type_string))
            return cli_fail(cmd, "%s: topics[%zu]: expected a string", path, i);
        if (c->pattern_count == MAX_PATTERNS)
            return cli_fail(cmd, "%s: topics: more than %d", path, MAX_PATTERNS);
        c->patterns[c->pattern_count++] = json_object_get_string(t);
    }
    arr = NULL;
    rc = rl_json_get_array(c->doc, "schemas", &arr);
    if (rc == RL_EPARSE)
        return cli_fail(cmd, "%s: %s", path, rl_error_last());
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
        json_object *s = json_object_array_get_idx(arr, i);
        const char *type = NULL, *idl = NULL, *idl_file = NULL;
        if (!json_object_is_type(s, json_type_object) ||
            rl_json_get_string(s, "type", &type) < 0)
            return cli_fail(cmd, "%s: schemas[%zu]: expected a mapping with key type",
                            path, i);
        if (c->schema_count == MAX_SCHEMAS)
            return cli_fail(cmd, "%s: schemas: more than %d", path, MAX_SCHEMAS);
        (void)rl_json_get_string(s, "idl", &idl);
        (void)rl_json_get_string(s, "idl_file", &idl_file);
        char *text = NULL;
        if (!idl && idl_file) {
            size_t len = 0;
            if (rl_fs_read_all(idl_file, 1 << 20, &text, &len) < 0)
                return cli_fail(cmd, "%s: schemas[%zu].idl_file: %s", path, i,
                                rl_error_last());
            idl = text;
        }
        if (!idl)
            return cli_fail(cmd, "%s: schemas[%zu]: needs idl or idl_file", path, i);
        c->idl_texts[c->schema_count] = text;
        c->schemas[c->schema_count].type_name = type;
        c->schemas[c->schema_count].idl = idl;
        c->schema_count++;
    }
    rc = rl_json_get_string(c->doc, "lock_dir", &c->lock_dir);
    if (rc == RL_EPARSE)
        return cli_fail(cmd, "%s: %s", path, rl_error_last());
    /* The bag's compression, as `runlab record --compression` sets it: a lab trades CPU
     * against disk bytes here (docs/lab.md); `none` needs a disk that takes the raw rate. */
    const char *comp = NULL;
    rc = rl_json_get_string(c->doc, "compression", &comp);
    if (rc == RL_EPARSE)
        return cli_fail(cmd, "%s: %s", path, rl_error_last());
    if (comp) {
        if (rl_record_compression_from_name(comp, &c->engine.compression) != RL_OK)
            return cli_fail(cmd, "%s: compression: %s", path, rl_error_last());
    }
    int64_t level = 0;
    rc = rl_json_get_int64(c->doc, "compression_level", &level);
    if (rc == RL_EPARSE)
        return cli_fail(cmd, "%s: %s", path, rl_error_last());
    if (rc == RL_OK) {
        if (rl_record_compression_level_check(c->engine.compression, level) != RL_OK)
            return cli_fail(cmd, "%s: compression_level: %s", path, rl_error_last());
        c->engine.compression_level = (int)level;
    }
    /* The engine's queue limits, as `runlab record --max-queued-*` sets them: what a burst
     * above the disk's rate may hold before the run fails (docs/lab.md, Recorder capacity). */
    static const char *const queue_keys[] = {"max_queued_messages", "max_queued_bytes"};
    uint64_t *queue_limits[] = {&c->engine.max_queued_messages, &c->engine.max_queued_bytes};
    for (int k = 0; k < 2; k++) {
        int64_t v = 0;
        rc = rl_json_get_int64(c->doc, queue_keys[k], &v);
        if (rc == RL_EPARSE)
            return cli_fail(cmd, "%s: %s", path, rl_error_last());
        if (rc == RL_OK && v < 1)
            return cli_fail(cmd, "%s: %s: %lld is not a positive count", path, queue_keys[k],
                            (long long)v);
        if (rc == RL_OK)
            *queue_limits[k] = (uint64_t)v;
    }
    double timeout = 0;
    rc = rl_json_get_double(c->doc, "control_flow_timeout", &timeout);
    if (rc == RL_EPARSE || (rc == RL_OK && !(timeout == 0 || (timeout >= 0.5 && timeout <= 3600))))
        return cli_fail(cmd, "%s: control_flow_timeout: expected seconds, 0 (never) or "
                        "0.5..3600", path);
    if (rc == RL_OK)
        c->control_timeout_ns = (int64_t)(timeout * 1e9);
    return RL_EXIT_OK;
}

/* What a recorder config hands the recorder, for a start banner: the schemas by type name,
 * the bag's compression and the lock folder. */
void print_recorder_config(const char *who, const char *path, const recorder_config *c)
{
    fprintf(stderr, "%s: recorder config %s: ", who, path);
    if (!c->schema_count)
        fprintf(stderr, "no schemas");
    for (size_t i = 0; i < c->schema_count; i++)
        fprintf(stderr, "%s%s", i ? ", " : "schemas ", c->schemas[i].type_name);
    char level[32] = "";
    if (c->engine.compression_level)
        snprintf(level, sizeof level, " level %d", c->engine.compression_level);
    fprintf(stderr, "; %zu topic pattern(s); bag compression %s%s; lock folder %s\n",
            c->pattern_count, rl_record_compression_name(c->engine.compression), level,
            c->lock_dir ? c->lock_dir : "the default");
}
