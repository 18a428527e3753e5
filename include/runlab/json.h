/* runlab/json.h: JSON in runlab. Reading parses into json-c objects (json-c is the
 * document model for JSON and YAML alike) with errors that give file, line, column and
 * byte offset; typed lookups name the key that is missing or of the wrong type. A
 * streaming writer emits JSON of any size with correct escaping of any byte string. */
#ifndef RUNLAB_JSON_H
#define RUNLAB_JSON_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Reading ---------------------------------------------------------------------- */

/* Parses exactly one JSON value from `len` bytes (trailing whitespace allowed, anything
 * else is an error). `name` appears in messages ("manifest.json:3:14: byte 40: ...").
 * On success `*out` is a new reference owned by the caller (json_object_put); the
 * literal `null` gives `*out` == NULL (json-c's null). Stricter than json-c alone: NaN,
 * Infinity, single quotes, "1." and integers beyond int64/uint64 are errors. Duplicate
 * keys keep the last value (json-c's behaviour). */
RL_API int rl_json_parse(const char *text, size_t len, const char *name, json_object **out);

/* Reads and parses a file of at most `max_bytes` (RL_ERANGE before allocating if larger). */
RL_API int rl_json_read_file(const char *path, size_t max_bytes, json_object **out);

/* Typed lookups of `key` in object `obj`. They return RL_OK, RL_ENOENT when the key is
 * absent, or RL_EPARSE when the value has another type; messages name the key and the
 * type found. Returned strings/objects are borrowed from `obj`. Integers must be JSON
 * integers (no fraction) within range; doubles accept integers too. */
RL_API int rl_json_get_string(json_object *obj, const char *key, const char **out);
RL_API int rl_json_get_int64(json_object *obj, const char *key, int64_t *out);
RL_API int rl_json_get_double(json_object *obj, const char *key, double *out);
RL_API int rl_json_get_bool(json_object *obj, const char *key, bool *out);
RL_API int rl_json_get_object(json_object *obj, const char *key, json_object **out);
RL_API int rl_json_get_array(json_object *obj, const char *key, json_object **out);

/* Serialises `obj` (pretty, 2-space indent, keys in insertion order, newline at the end)
 * into a new NUL-terminated string owned by the caller (free()). */
RL_API int rl_json_to_string(json_object *obj, char **out, size_t *out_len);

/* Writes `obj` as pretty JSON to `path` atomically (rl_fs_write_atomic). */
RL_API int rl_json_write_file(const char *path, json_object *obj);

/* ---- Streaming writer ----------------------------------------------------------------
 * Emits JSON incrementally to a FILE* or to a growing memory buffer, checking nesting as
 * it goes (a value where a key is due, or an unbalanced end, is RL_ESTATE). Strings are
 * byte strings: valid UTF-8 passes through; control characters, '"' and '\\' are
 * escaped; bytes that are not valid UTF-8 become U+FFFD, so output is always valid JSON.
 * NaN and infinities, which JSON cannot express, are written as null. Not thread-safe. */
typedef struct rl_json_writer rl_json_writer;

enum { RL_JSON_COMPACT = 0, RL_JSON_PRETTY = 1 };

/* Writer to a FILE* owned by the caller. */
RL_API int rl_json_writer_new_file(rl_json_writer **out, FILE *file, int style);
/* Writer to an internal buffer; take it with rl_json_writer_buffer. */
RL_API int rl_json_writer_new_buffer(rl_json_writer **out, int style);

RL_API int rl_json_begin_object(rl_json_writer *w);
RL_API int rl_json_end_object(rl_json_writer *w);
RL_API int rl_json_begin_array(rl_json_writer *w);
RL_API int rl_json_end_array(rl_json_writer *w);
/* Object key; must be followed by exactly one value. */
RL_API int rl_json_key(rl_json_writer *w, const char *key);
RL_API int rl_json_string(rl_json_writer *w, const char *s);
RL_API int rl_json_string_n(rl_json_writer *w, const char *bytes, size_t len);
RL_API int rl_json_int64(rl_json_writer *w, int64_t v);
RL_API int rl_json_uint64(rl_json_writer *w, uint64_t v);
/* Shortest form that reads back to the same double; non-finite values as null. */
RL_API int rl_json_double(rl_json_writer *w, double v);
RL_API int rl_json_bool(rl_json_writer *w, bool v);
RL_API int rl_json_null(rl_json_writer *w);
/* Writes `len` bytes of ready-made JSON text as one value (a decoded message, say); the
 * caller guarantees it is one valid JSON value. */
RL_API int rl_json_raw(rl_json_writer *w, const char *json, size_t len);
/* Writes a whole json-c value (object, array or scalar) at the current position. */
RL_API int rl_json_value(rl_json_writer *w, json_object *value);

/* Checks that every object and array was closed and flushes; RL_ESTATE otherwise. For a
 * file writer a trailing newline is written. */
RL_API int rl_json_writer_finish(rl_json_writer *w);
/* The buffer of a buffer writer (NUL-terminated, owned by the writer). */
RL_API const char *rl_json_writer_buffer(rl_json_writer *w, size_t *len);
RL_API void rl_json_writer_free(rl_json_writer *w);

#ifdef __cplusplus
}
#endif
#endif
