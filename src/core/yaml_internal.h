/* Internals of runlab/yaml.h shared by the reader (yaml.c), the emitter (yaml_write.c) and
 * the scalar resolver both use (yaml_scalar.c): the emitter quotes exactly the strings
 * the reader would resolve to something else, so output reads back equal. */
#ifndef RUNLAB_YAML_INTERNAL_H
#define RUNLAB_YAML_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds the height of the built tree (aliases nest copies inside copies), keeping the
 * recursive json-c free and the emitter's recursion shallow. */
enum { YAML_MAX_DEPTH = 1000 };

/* How a plain (unquoted) scalar resolves under the YAML 1.2 core schema. */
enum scalar_kind { SK_NULL, SK_BOOL, SK_INT, SK_UINT, SK_FLOAT, SK_STRING, SK_RANGE };

struct scalar {
    enum scalar_kind kind;
    bool b;
    int64_t i;
    uint64_t u;
    double d;
};

/* Whether the `n` bytes at `s` are exactly the string `lit`. */
bool rl_yaml_eq(const char *s, size_t n, const char *lit);
/* Resolves the plain scalar of `n` bytes at `s` (YAML 1.2 core schema). */
void rl_yaml_resolve_plain(const char *s, size_t n, struct scalar *out);

#endif
