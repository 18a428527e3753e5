/* The builder of the message-schema model (runlab/msgdef.h) that both parsers fill
 * (msgdef_ros2.c, msgdef_idl.c): the type table, shared string and array shapes, the
 * checks a finished schema must pass (no struct containing itself, bounded nesting,
 * minimum payload sizes) and the CDR size of primitives. It calls no parser and no decoder. */
#include "msgdef_internal.h"

#include "core/text.h"
#include "runlab/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t msgdef_prim_size(rl_msg_kind k)
{
    switch (k) {
    case RL_MSG_BOOL:
    case RL_MSG_OCTET:
    case RL_MSG_CHAR:
    case RL_MSG_INT8:
    case RL_MSG_UINT8:
        return 1;
    case RL_MSG_INT16:
    case RL_MSG_UINT16:
        return 2;
    case RL_MSG_INT32:
    case RL_MSG_UINT32:
    case RL_MSG_FLOAT32:
        return 4;
    case RL_MSG_INT64:
    case RL_MSG_UINT64:
    case RL_MSG_FLOAT64:
        return 8;
    default:
        return 0;
    }
}

char *msgdef_strndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

int msgdef_push(void **arr, size_t *n, size_t *cap, size_t elem, const void *item)
{
    int rc = rl_grow_array(arr, cap, *n + 1, elem, "schema");
    if (rc < 0)
        return rc;
    memcpy((char *)*arr + *n * elem, item, elem);
    (*n)++;
    return RL_OK;
}

int msgdef_add_type(rl_msgdef *d, const rl_msg_type *t, uint32_t *index)
{
    if (d->ntypes >= UINT32_MAX / 2)
        return rl_error_set(RL_ERANGE, "schema '%s': too many types", d->schema);
    int rc = msgdef_push((void **)&d->types, &d->ntypes, &d->cap, sizeof *t, t);
    if (rc < 0)
        return rc;
    *index = (uint32_t)(d->ntypes - 1);
    return RL_OK;
}

int msgdef_string_type(rl_msgdef *d, rl_msg_kind kind, uint32_t bound, uint32_t *index)
{
    if (bound == 0) {
        *index = kind;
        return RL_OK;
    }
    char key[64];
    int n = snprintf(key, sizeof key, "s%d:%u", (int)kind, bound);
    if (msgdef_names_get(&d->shapes, key, (size_t)n, index))
        return RL_OK;
    rl_msg_type t = {.kind = kind, .bound = bound};
    int rc = msgdef_add_type(d, &t, index);
    return rc < 0 ? rc : msgdef_names_put(&d->shapes, key, (size_t)n, *index);
}

int msgdef_array_type(rl_msgdef *d, rl_msg_kind kind, uint32_t elem, uint32_t bound, bool inner,
                      uint32_t *index)
{
    char key[64];
    int n = snprintf(key, sizeof key, "a%d:%u:%u:%d", (int)kind, elem, bound, (int)inner);
    if (msgdef_names_get(&d->shapes, key, (size_t)n, index))
        return RL_OK;
    rl_msg_type t = {.kind = kind, .elem = elem, .bound = bound, .inner_dim = inner};
    int rc = msgdef_add_type(d, &t, index);
    return rc < 0 ? rc : msgdef_names_put(&d->shapes, key, (size_t)n, *index);
}

int msgdef_new(rl_msgdef **out, const char *schema)
{
    rl_msgdef *d = calloc(1, sizeof *d);
    if (!d || !(d->schema = strdup(schema))) {
        free(d);
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    }
    for (uint32_t k = 0; k < MSGDEF_FIRST_USER_TYPE; k++) {
        rl_msg_type t = {.kind = k ? (rl_msg_kind)k : RL_MSG_BOOL};
        uint32_t idx;
        if (msgdef_add_type(d, &t, &idx) < 0) {
            msgdef_destroy(d);
            return RL_ENOMEM;
        }
    }
    *out = d;
    return RL_OK;
}

void msgdef_destroy(rl_msgdef *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->ntypes; i++) {
        rl_msg_type *t = &d->types[i];
        free((void *)t->name);
        for (size_t m = 0; m < t->nmembers; m++) {
            free((void *)t->members[m].name);
            free((void *)t->members[m].default_value);
            free((void *)t->members[m].labels);
        }
        free((void *)t->members);
        for (size_t c = 0; c < t->nconstants; c++) {
            free((void *)t->constants[c].name);
            free((void *)t->constants[c].value);
        }
        free((void *)t->constants);
    }
    free(d->types);
    for (size_t c = 0; c < d->nconstants; c++) {
        free((void *)d->constants[c].name);
        free((void *)d->constants[c].value);
    }
    free(d->constants);
    free(d->min_size);
    msgdef_names_free(&d->shapes);
    free(d->schema);
    free(d);
}

/* Depth-first search for a struct that contains itself through members held by value
 * (fixed arrays included; sequences and optionals break the cycle), and for types nested
 * deeper than MSGDEF_MAX_NESTING (structs, unions, arrays and sequences, as the decoder
 * counts them against its own limit of 100): *height is the most levels inside t, kept per
 * struct or union (heights[]) so that a type reached again is not walked again. Bounding
 * the nesting bounds the recursion here and in every later walk of the type tree. */
static int check_cycles(const rl_msgdef *d, uint32_t t, unsigned char *state, uint16_t *heights,
                        unsigned depth, unsigned *height)
{
    const rl_msg_type *ty = &d->types[t];
    unsigned levels = 0; /* arrays and sequences around the value */
    bool by_value = true;
    while (ty->kind == RL_MSG_ARRAY || ty->kind == RL_MSG_SEQUENCE) {
        by_value = by_value && ty->kind == RL_MSG_ARRAY;
        t = ty->elem;
        ty = &d->types[t];
        levels++;
    }
    depth += levels;
    *height = levels;
    if (depth > MSGDEF_MAX_NESTING)
        goto too_deep;
    if ((ty->kind != RL_MSG_STRUCT && ty->kind != RL_MSG_UNION) || !by_value)
        return RL_OK; /* a sequence ends a cycle: its elements are checked as types of their own */
    if (state[t] == 1)
        return rl_error_set(RL_EPARSE, "schema '%s': type '%s' contains itself", d->schema,
                            ty->name ? ty->name : "?");
    if (state[t] == 0) {
        if (depth >= MSGDEF_MAX_NESTING)
            goto too_deep;
        state[t] = 1;
        unsigned h = 0;
        for (size_t m = 0; m < ty->nmembers; m++) {
            if (ty->members[m].optional)
                continue;
            unsigned below;
            int rc = check_cycles(d, ty->members[m].type, state, heights, depth + 1, &below);
            if (rc < 0)
                return rc;
            if (below > h)
                h = below;
        }
        state[t] = 2;
        heights[t] = (uint16_t)(h + 1);
    }
    *height = levels + heights[t];
    if (depth + heights[t] <= MSGDEF_MAX_NESTING)
        return RL_OK;
too_deep:
    return rl_error_set(RL_EPARSE, "schema '%s': types nested more than %d deep (structs, unions, "
                                   "arrays and sequences; at '%s')",
                        d->schema, MSGDEF_MAX_NESTING, ty->name ? ty->name : "?");
}

static size_t min_size_of(rl_msgdef *d, uint32_t t)
{
    if (d->min_size[t] != SIZE_MAX)
        return d->min_size[t];
    const rl_msg_type *ty = &d->types[t];
    size_t n = 0;
    switch (ty->kind) {
    case RL_MSG_STRING:
    case RL_MSG_WSTRING:
    case RL_MSG_SEQUENCE:
    case RL_MSG_ENUM:
        n = 4;
        break;
    case RL_MSG_ARRAY: {
        size_t e = min_size_of(d, ty->elem);
        n = e && ty->bound > SIZE_MAX / 2 / e ? SIZE_MAX / 2 : e * ty->bound;
        break;
    }
    case RL_MSG_UNION:
        n = min_size_of(d, ty->elem);
        break;
    case RL_MSG_STRUCT:
        for (size_t m = 0; m < ty->nmembers && n < SIZE_MAX / 4; m++)
            n += ty->members[m].optional ? 0 : min_size_of(d, ty->members[m].type);
        break;
    default:
        n = msgdef_prim_size(ty->kind);
    }
    d->min_size[t] = n;
    return n;
}

/* Whether a value of type t can take no payload bytes at all under some encoding: a
 * struct with no members (or only such members) that is not mutable (a mutable struct has
 * a DHEADER or a sentinel; an appendable one has no DHEADER in XCDR1), or an array of such.
 * Strings, sequences, enums, unions and primitives take at least one byte, and so does an
 * @optional member of a struct that is not mutable (its presence flag or header).
 * state: 0 unknown, 1 no, 2 yes. Recursion follows members held by value only, which
 * check_cycles has found acyclic. */
static bool takes_no_bytes(const rl_msgdef *d, uint32_t t, unsigned char *state)
{
    if (state[t])
        return state[t] == 2;
    const rl_msg_type *ty = &d->types[t];
    bool none = false;
    if (ty->kind == RL_MSG_ARRAY) {
        none = takes_no_bytes(d, ty->elem, state);
    } else if (ty->kind == RL_MSG_STRUCT && ty->ext != RL_MSG_EXT_MUTABLE) {
        none = true;
        for (size_t m = 0; m < ty->nmembers && none; m++)
            none = !ty->members[m].optional && takes_no_bytes(d, ty->members[m].type, state);
    }
    state[t] = none ? 2 : 1;
    return none;
}

/* Refuses arrays and sequences whose elements can take no bytes: no length check could
 * bound their count (`E pad[1000000][1000]` of an empty struct E is a billion elements in
 * no bytes, a sequence of them up to 4 billion in 4 bytes), so decoding one payload would
 * take hours and its JSON be unbounded. Refuses as well a struct that has members but
 * takes no bytes (members that are empty structs): nested, such structs multiply what
 * decodes from nothing (50 k members of a struct of 50 k empty structs are 2.5 billion
 * values). What remains that takes no bytes is a struct without members, one value. */
static int check_zero_size_elements(const rl_msgdef *d, unsigned char *state)
{
    for (uint32_t i = MSGDEF_FIRST_USER_TYPE; i < d->ntypes; i++) {
        const rl_msg_type *ty = &d->types[i];
        if (ty->kind != RL_MSG_STRUCT && ty->kind != RL_MSG_UNION)
            continue;
        for (size_t m = 0; m < ty->nmembers; m++) {
            for (uint32_t t = ty->members[m].type;
                 d->types[t].kind == RL_MSG_ARRAY || d->types[t].kind == RL_MSG_SEQUENCE;
                 t = d->types[t].elem) {
                uint32_t e = d->types[t].elem;
                if (!takes_no_bytes(d, e, state))
                    continue;
                while (d->types[e].kind == RL_MSG_ARRAY)
                    e = d->types[e].elem;
                return rl_error_set(RL_EPARSE,
                                    "schema '%s': member '%s' of '%s': %s of '%s', a type that "
                                    "takes no bytes in CDR (a struct without members, or with only "
                                    "such members): its "
                                    "length could not be bounded by the payload",
                                    d->schema, ty->members[m].name, ty->name ? ty->name : "?",
                                    d->types[t].kind == RL_MSG_ARRAY ? "an array" : "a sequence",
                                    d->types[e].name ? d->types[e].name : "?");
            }
        }
        if (ty->kind == RL_MSG_STRUCT && ty->nmembers && takes_no_bytes(d, i, state))
            return rl_error_set(RL_EPARSE,
                                "schema '%s': struct '%s': its members take no bytes in CDR "
                                "(structs without members): held by value, such structs would "
                                "multiply what decodes from no bytes",
                                d->schema, ty->name ? ty->name : "?");
    }
    return RL_OK;
}

int msgdef_finish(rl_msgdef *d, uint32_t root)
{
    if (root >= d->ntypes || d->types[root].kind != RL_MSG_STRUCT)
        return rl_error_set(RL_EPARSE, "schema '%s': the root is not a struct", d->schema);
    for (size_t i = MSGDEF_FIRST_USER_TYPE; i < d->ntypes; i++)
        if (d->types[i].nmembers > MSGDEF_MAX_MEMBERS || d->types[i].nconstants > MSGDEF_MAX_MEMBERS)
            return rl_error_set(RL_ERANGE, "schema '%s': type '%s' has %zu %s, more than the %d a "
                                           "type may have", d->schema,
                                d->types[i].name ? d->types[i].name : "?",
                                d->types[i].nmembers > MSGDEF_MAX_MEMBERS ? d->types[i].nmembers
                                                                          : d->types[i].nconstants,
                                d->types[i].nmembers > MSGDEF_MAX_MEMBERS
                                    ? (d->types[i].kind == RL_MSG_ENUM ? "enumerators" : "members")
                                    : "constants",
                                MSGDEF_MAX_MEMBERS);
    unsigned char *state = calloc(d->ntypes, 1);
    uint16_t *heights = calloc(d->ntypes, sizeof *heights);
    if (!state || !heights) {
        free(state);
        free(heights);
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    }
    int rc = RL_OK;
    for (uint32_t i = MSGDEF_FIRST_USER_TYPE; i < d->ntypes && rc == RL_OK; i++) {
        unsigned height;
        rc = check_cycles(d, i, state, heights, 0, &height);
    }
    free(heights);
    if (rc == RL_OK) {
        memset(state, 0, d->ntypes);
        rc = check_zero_size_elements(d, state);
    }
    free(state);
    d->root = root;
    if (rc == RL_OK) {
        d->min_size = malloc(d->ntypes * sizeof *d->min_size);
        if (!d->min_size)
            return rl_error_set(RL_ENOMEM, "schema: out of memory");
        for (size_t i = 0; i < d->ntypes; i++)
            d->min_size[i] = SIZE_MAX;
        for (uint32_t i = 0; i < d->ntypes; i++)
            min_size_of(d, i);
    }
    return rc;
}
