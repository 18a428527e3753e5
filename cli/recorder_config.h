/* The recorder's configuration file (`runlab recorder --config`, `runlab experiment`'s
 * --recorder-config), shared by cli/cmd_recorder.c, which hands it to the node, and
 * cli/cmd_lab.c, which checks it before starting its recorder. Helpers only: they call
 * no command back. */
#ifndef RUNLAB_CLI_RECORDER_CONFIG_H
#define RUNLAB_CLI_RECORDER_CONFIG_H

#include "runlab/lab.h"
#include "runlab/record.h"

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

enum { RECORDER_CONFIG_MAX_PATTERNS = 64, RECORDER_CONFIG_MAX_SCHEMAS = 64 };

/* A read config: the strings point into `doc` (and `idl_texts`), owned until
 * recorder_config_free. Zero it, or set control_timeout_ns to -1 and the engine defaults,
 * before reading. */
typedef struct recorder_config {
    json_object *doc;
    const char *patterns[RECORDER_CONFIG_MAX_PATTERNS];
    size_t pattern_count;
    rl_lab_schema schemas[RECORDER_CONFIG_MAX_SCHEMAS];
    char *idl_texts[RECORDER_CONFIG_MAX_SCHEMAS];
    size_t schema_count;
    const char *lock_dir;
    rl_record_options engine; /* the defaults, with compression and its level from the file */
    int64_t control_timeout_ns; /* -1: not in the file */
} recorder_config;

/* Frees what read_recorder_config allocated; `c` itself is the caller's. */
void recorder_config_free(recorder_config *c);

/* Reads the config at `path` into `c` for command `cmd` (its error lines name it):
 * topics, schemas, lock_dir, compression, compression_level, control_flow_timeout. Every
 * problem names the file and key. Returns an RL_EXIT_* code. */
int read_recorder_config(const char *cmd, const char *path, recorder_config *c);

/* Prints to stderr, for `who`'s start banner, what the config at `path` hands the
 * recorder: schemas by type name, pattern count, bag compression, lock folder. */
void print_recorder_config(const char *who, const char *path, const recorder_config *c);

#endif
