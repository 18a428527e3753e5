/* Internal helpers shared by the JSON reader and writer and the YAML module: strict
 * UTF-8 decoding, locale-independent shortest round-trip doubles, handing over a buffer
 * writer's memory without a copy, and the one read and write path of document files.
 * Not part of the public API. */
#ifndef RUNLAB_JSON_INTERNAL_H
#define RUNLAB_JSON_INTERNAL_H

#include "runlab/json.h"

#include <stddef.h>
#include <stdint.h>

#include "core/text.h"


enum { RL_DOUBLE_BUF = 40 };

/* rl_format_f64 of finite `v`, always with a '.' or an exponent so it reads back as a
 * float and not an integer ("1.0", "0.1", "1e+300", "-0.0"). `buf` holds RL_DOUBLE_BUF
 * bytes. Returns the length. */
size_t rl_format_double(double v, char *buf);

/* Takes the buffer of a finished buffer writer: the caller owns it (free()); the writer
 * is left empty. Returns NULL when the writer has no buffer or memory ran out. */
char *rl_json_writer_take_buffer(rl_json_writer *w, size_t *len);

/* Serialises `obj` with `to_string` and writes it to `path` atomically; the one write
 * path of rl_json_write_file and rl_yaml_write_file. `what` names the format in errors. */
int rl_doc_write_file(const char *path, json_object *obj,
                      int (*to_string)(json_object *, char **, size_t *), const char *what);

/* Reads a file of at most `max_bytes` and parses it with `parse` (name = path); the one
 * read path of rl_json_read_file and rl_yaml_read_file. `what` names the format. */
int rl_doc_read_file(const char *path, size_t max_bytes, json_object **out,
                     int (*parse)(const char *, size_t, const char *, json_object **),
                     const char *what);

#endif
