/* The message-schema type model (runlab/msgdef.h): building the type table the parsers
 * fill, lookups, the check that no struct contains itself by value, and the normalised
 * text `runlab mcap schema` prints. */
#include "msgdef_internal.h"

#include "core/text.h"
#include "runlab/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const prim_names[] = {
    [RL_MSG_BOOL] = "bool",       [RL_MSG_OCTET] = "octet",     [RL_MSG_CHAR] = "char",
    [RL_MSG_INT8] = "int8",       [RL_MSG_UINT8] = "uint8",     [RL_MSG_INT16] = "int16",
    [RL_MSG_UINT16] = "uint16",   [RL_MSG_INT32] = "int32",     [RL_MSG_UINT32] = "uint32",
    [RL_MSG_INT64] = "int64",     [RL_MSG_UINT64] = "uint64",   [RL_MSG_FLOAT32] = "float32",
    [RL_MSG_FLOAT64] = "float64", [RL_MSG_STRING] = "string",   [RL_MSG_WSTRING] = "wstring",
};

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
            rl_msgdef_free(d);
            return RL_ENOMEM;
        }
    }
    *out = d;
    return RL_OK;
}

void rl_msgdef_free(rl_msgdef *d)
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
    cdr_plan_free(d->plan);
    free(d->schema);
    free(d);
}

size_t rl_msgdef_type_count(const rl_msgdef *d) { return d ? d->ntypes : 0; }

const rl_msg_type *rl_msgdef_type(const rl_msgdef *d, uint32_t index)
{
    return d && index < d->ntypes ? &d->types[index] : NULL;
}

uint32_t rl_msgdef_root(const rl_msgdef *d) { return d ? d->root : 0; }

const rl_msg_constant *rl_msgdef_constants(const rl_msgdef *d, size_t *count)
{
    if (count)
        *count = d ? d->nconstants : 0;
    return d ? d->constants : NULL;
}

int rl_msgdef_find(const rl_msgdef *d, const char *name, uint32_t *index)
{
    for (size_t i = MSGDEF_FIRST_USER_TYPE; d && name && i < d->ntypes; i++)
        if (d->types[i].name && strcmp(d->types[i].name, name) == 0) {
            if (index)
                *index = (uint32_t)i;
            return RL_OK;
        }
    return rl_error_set(RL_ENOENT, "schema: no type '%s'", name ? name : "(null)");
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

int rl_msgdef_parse(rl_msgdef **out, const char *encoding, const char *name, const char *text,
                    size_t len)
{
    if (!out || !encoding || !name || (!text && len))
        return rl_error_set(RL_EINVAL, "schema: NULL argument");
    *out = NULL;
    if (len > MSGDEF_MAX_TEXT)
        return rl_error_set(RL_ERANGE, "schema '%s': %zu bytes of text, more than the %d MiB a "
                                       "schema may have", name, len, MSGDEF_MAX_TEXT >> 20);
    rl_msgdef *d = NULL;
    int rc = msgdef_new(&d, name);
    if (rc < 0)
        return rc;
    d->wstring_ros = strcmp(encoding, "ros2msg") == 0;
    if (d->wstring_ros)
        rc = msgdef_parse_ros2(d, name, text ? text : "", len);
    else if (strcmp(encoding, "omgidl") == 0)
        rc = msgdef_parse_idl(d, name, text ? text : "", len);
    else
        rc = rl_error_set(RL_EUNSUPPORTED, "schema '%s': encoding '%s' is not supported "
                                           "(ros2msg, omgidl)", name, encoding);
    if (rc == RL_OK)
        rc = cdr_plan_build(d, &d->plan);
    if (rc < 0) {
        rl_msgdef_free(d);
        return rc;
    }
    *out = d;
    return RL_OK;
}

/* ---- Normalised text ------------------------------------------------------------------ */

static void put_type_name(rl_buf *b, const rl_msgdef *d, uint32_t t)
{
    const rl_msg_type *ty = &d->types[t];
    if (ty->name) {
        rl_buf_puts(b, ty->name);
        return;
    }
    switch (ty->kind) {
    case RL_MSG_STRING:
    case RL_MSG_WSTRING:
        rl_buf_puts(b, prim_names[ty->kind]);
        if (ty->bound)
            rl_buf_printf(b, "<=%u", ty->bound);
        return;
    case RL_MSG_ARRAY:
    case RL_MSG_SEQUENCE:
        if (ty->kind == RL_MSG_ARRAY) { /* dimensions outer to inner: int32[6][2] */
            uint32_t e = ty->elem;
            while (d->types[e].kind == RL_MSG_ARRAY && d->types[e].inner_dim)
                e = d->types[e].elem;
            put_type_name(b, d, e);
            for (const rl_msg_type *a = ty;; a = &d->types[a->elem]) {
                rl_buf_printf(b, "[%u]", a->bound);
                if (a->elem == e)
                    break;
            }
            return;
        }
        put_type_name(b, d, ty->elem);
        if (ty->bound)
            rl_buf_printf(b, "[<=%u]", ty->bound);
        else
            rl_buf_puts(b, "[]");
        return;
    default:
        rl_buf_puts(b, ty->kind <= RL_MSG_WSTRING ? prim_names[ty->kind] : "?");
    }
}

/* The text of one named type (its dependencies are written before it). */
static void format_one(rl_buf *b, const rl_msgdef *d, const rl_msg_type *ty)
{
    static const char *const ext_names[] = {"", "@final ", "@appendable ", "@mutable "};
    const char *what = ty->kind == RL_MSG_ENUM ? "enum" : ty->kind == RL_MSG_UNION ? "union" : "struct";
    rl_buf_printf(b, "%s%s %s", ext_names[ty->ext], what, ty->name);
    if (ty->kind == RL_MSG_UNION) {
        rl_buf_puts(b, " switch (");
        put_type_name(b, d, ty->elem);
        rl_buf_puts(b, ")");
    }
    rl_buf_puts(b, "\n");
    for (size_t c = 0; c < ty->nconstants; c++) {
        rl_buf_puts(b, "  const ");
        put_type_name(b, d, ty->constants[c].type);
        rl_buf_printf(b, " %s = %s\n", ty->constants[c].name, ty->constants[c].value);
    }
    for (size_t m = 0; m < ty->nmembers; m++) {
        const rl_msg_member *mb = &ty->members[m];
        rl_buf_puts(b, "  ");
        if (ty->kind == RL_MSG_ENUM) {
            rl_buf_printf(b, "%s = %lld\n", mb->name, (long long)mb->value);
            continue;
        }
        if (ty->kind == RL_MSG_UNION) {
            for (size_t l = 0; l < mb->nlabels; l++)
                rl_buf_printf(b, "case %lld: ", (long long)mb->labels[l]);
            if (mb->is_default_case)
                rl_buf_puts(b, "default: ");
        }
        if (ty->ext == RL_MSG_EXT_MUTABLE)
            rl_buf_printf(b, "@id(%u) ", mb->id);
        if (mb->key)
            rl_buf_puts(b, "@key ");
        if (mb->optional)
            rl_buf_puts(b, "@optional ");
        put_type_name(b, d, mb->type);
        rl_buf_printf(b, " %s", mb->name);
        if (mb->default_value)
            rl_buf_printf(b, " %s", mb->default_value);
        rl_buf_puts(b, "\n");
    }
}

typedef struct format_frame {
    uint32_t type;
    size_t next; /* the next dependency to visit: the discriminator (unions), then members */
} format_frame;

/* Pushes the named type behind t (through arrays and sequences) when not written yet. */
static int format_push(const rl_msgdef *d, uint32_t t, unsigned char *done, format_frame *stack,
                       size_t *sp)
{
    while (d->types[t].kind == RL_MSG_ARRAY || d->types[t].kind == RL_MSG_SEQUENCE)
        t = d->types[t].elem;
    if (!d->types[t].name || done[t])
        return 0;
    done[t] = 1;
    stack[(*sp)++] = (format_frame){.type = t};
    return 1;
}

/* Writes t and what it depends on, dependencies first, with an explicit stack (a chain of
 * types through sequences is as long as the schema, too deep for recursion). Each named
 * type is pushed once, so the stack holds at most ntypes frames. */
static int format_type(rl_buf *b, const rl_msgdef *d, uint32_t t, unsigned char *done)
{
    format_frame *stack = malloc(d->ntypes * sizeof *stack);
    if (!stack)
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    size_t sp = 0;
    format_push(d, t, done, stack, &sp);
    while (sp) {
        format_frame *f = &stack[sp - 1];
        const rl_msg_type *ty = &d->types[f->type];
        size_t ndeps = (ty->kind == RL_MSG_UNION) + (ty->kind == RL_MSG_ENUM ? 0 : ty->nmembers);
        if (f->next < ndeps) {
            size_t i = f->next++;
            uint32_t dep = ty->kind == RL_MSG_UNION ? (i == 0 ? ty->elem : ty->members[i - 1].type)
                                                    : ty->members[i].type;
            format_push(d, dep, done, stack, &sp);
            continue;
        }
        format_one(b, d, ty);
        sp--;
    }
    free(stack);
    return RL_OK;
}

int rl_msgdef_format(const rl_msgdef *d, char **out)
{
    if (!d || !out)
        return rl_error_set(RL_EINVAL, "schema: NULL argument");
    unsigned char *done = calloc(d->ntypes, 1);
    if (!done)
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    rl_buf b = {0};
    for (size_t c = 0; c < d->nconstants; c++) {
        rl_buf_puts(&b, "const ");
        put_type_name(&b, d, d->constants[c].type);
        rl_buf_printf(&b, " %s = %s\n", d->constants[c].name, d->constants[c].value);
    }
    int rc = format_type(&b, d, d->root, done);
    free(done);
    if (rc < 0) {
        free(rl_buf_take(&b, NULL));
        return rc;
    }
    size_t n;
    *out = rl_buf_take(&b, &n);
    return *out ? RL_OK : RL_ENOMEM;
}
