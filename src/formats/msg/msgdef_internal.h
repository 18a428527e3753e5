/* Internal side of the message-schema model (runlab/msgdef.h): the mutable builder the
 * ros2msg and IDL parsers fill, shared helpers for their error messages, and the
 * decoder's view of a type (CDR size and alignment of primitives). */
#ifndef RUNLAB_SRC_FORMATS_MSGDEF_INTERNAL_H
#define RUNLAB_SRC_FORMATS_MSGDEF_INTERNAL_H

#include "runlab/msgdef.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A string -> uint32 hash (msgdef_names.c); zero-initialised is empty. Keys are copied. */
typedef struct msgdef_names {
    struct msgdef_name_slot *slots;
    size_t cap, n;
} msgdef_names;
/* Looks `key` (len bytes) up; true and *value (when not NULL) when present. */
bool msgdef_names_get(const msgdef_names *h, const char *key, size_t len, uint32_t *value);
/* Sets key -> value (replacing a present key's value). RL_ENOMEM on failure. */
int msgdef_names_put(msgdef_names *h, const char *key, size_t len, uint32_t value);
void msgdef_names_free(msgdef_names *h);

/* Limits on a schema (docs/msgdef.md): its text, and what one type may hold. */
enum {
    MSGDEF_MAX_TEXT = 16 << 20,    /* bytes of schema text */
    MSGDEF_MAX_MEMBERS = 1 << 20,  /* members, enumerators or constants of one type */
    MSGDEF_MAX_NESTING = 256       /* types nested: structs, unions, arrays, sequences (the
                                      decoder stops payloads at 100) */
};

/* Primitive kinds occupy type indices 1..RL_MSG_WSTRING; index 0 is unused. */
enum { MSGDEF_FIRST_USER_TYPE = RL_MSG_WSTRING + 1 };

struct rl_msgdef {
    rl_msg_type *types;
    size_t ntypes, cap;
    uint32_t root;
    char *schema; /* schema name, for messages */
    size_t *min_size; /* per type: fewest payload bytes a value can take (msgdef_finish) */
    rl_msg_constant *constants; /* IDL module-level constants */
    size_t nconstants, cconstants;
    struct cdr_plan *plan; /* the root type flattened for decoding (cdr_plan.c) */
    bool wstring_ros; /* ros2msg: wstrings as ROS 2 type supports write them (cdr_wstring.c) */
    msgdef_names shapes; /* unnamed string/array/sequence types by shape, while parsing */
};

/* A decoding plan (cdr_plan.c), built by rl_msgdef_parse once a schema has parsed. */
typedef struct cdr_plan cdr_plan;
int cdr_plan_build(const rl_msgdef *def, cdr_plan **out);
void cdr_plan_free(cdr_plan *p);

/* Adds a type (copied; the caller's member/constant arrays are taken over) and returns
 * its index in *index. */
int msgdef_add_type(rl_msgdef *d, const rl_msg_type *t, uint32_t *index);
/* Index of the string type with bound `bound` (RL_MSG_STRING / RL_MSG_WSTRING for 0). */
int msgdef_string_type(rl_msgdef *d, rl_msg_kind kind, uint32_t bound, uint32_t *index);
/* Index of ARRAY/SEQUENCE of `elem` with `bound` (shared when it already exists). */
int msgdef_array_type(rl_msgdef *d, rl_msg_kind kind, uint32_t elem, uint32_t bound, bool inner,
                      uint32_t *index);
/* A new empty definition holding the primitive types. */
int msgdef_new(rl_msgdef **out, const char *schema);
/* Frees a definition's types, constants and names (not its decoding plan, which
 * rl_msgdef_free frees first). NULL is a no-op. */
void msgdef_destroy(rl_msgdef *d);
/* Checks that no struct contains itself by value (which no payload could end) and sets
 * the root. */
int msgdef_finish(rl_msgdef *d, uint32_t root);

/* Appends an element to a growable array of `elem` bytes (*arr, *n, *cap). */
int msgdef_push(void **arr, size_t *n, size_t *cap, size_t elem, const void *item);

char *msgdef_strndup(const char *s, size_t n);

/* CDR size of a primitive kind (bool..float64), 0 for anything else. */
size_t msgdef_prim_size(rl_msg_kind k);

/* The ros2msg and IDL parsers (msgdef_ros2.c, msgdef_idl.c). */
int msgdef_parse_ros2(rl_msgdef *d, const char *name, const char *text, size_t len);
int msgdef_parse_idl(rl_msgdef *d, const char *name, const char *text, size_t len);

#endif
