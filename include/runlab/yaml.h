/* runlab/yaml.h: YAML reading and writing through libfyaml, with json-c objects as the
 * document model (the same as runlab/json.h), so any document can be written as JSON or
 * YAML. Reading follows the YAML 1.2 core schema for scalars (null, bool, int, float,
 * string); quoted scalars are always strings. Errors give file, line and column. */
#ifndef RUNLAB_YAML_H
#define RUNLAB_YAML_H

#include "runlab/export.h"

#include <stddef.h>

#include <json-c/json.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses one YAML document from `len` bytes; `name` appears in error messages. Duplicate
 * keys, anchors to undefined aliases and multiple documents are errors. On success `*out`
 * is a new reference owned by the caller (json_object_put); an empty document is null
 * (`*out` == NULL). Also errors: non-scalar or alias keys, keys containing NUL, tags
 * other than "!" and the core ones (!!str !!int !!float !!bool !!null !!map !!seq),
 * numbers out of range (RL_ERANGE), and aliases that would expand to more than a
 * million copied nodes (RL_ERANGE). Aliases become independent copies. Nothing is
 * printed; the message is "name:line:col: what". */
RL_API int rl_yaml_parse(const char *text, size_t len, const char *name, json_object **out);

/* Reads a file of at most `max_bytes` and parses it. */
RL_API int rl_yaml_read_file(const char *path, size_t max_bytes, json_object **out);

/* Emits `obj` as block-style YAML (keys in insertion order; strings quoted whenever they
 * would otherwise read back as another type or are not plain-safe) into a new string
 * owned by the caller (free()). Reading the output back gives an equal document, except
 * that bytes which are not valid UTF-8 (YAML is Unicode text) become U+FFFD. */
RL_API int rl_yaml_to_string(json_object *obj, char **out, size_t *out_len);

/* Writes `obj` as YAML to `path` atomically (rl_fs_write_atomic). */
RL_API int rl_yaml_write_file(const char *path, json_object *obj);

#ifdef __cplusplus
}
#endif
#endif
