/* Decoding plans: a schema's root type flattened once, when the schema is parsed, into a
 * list of steps with member names, primitive sizes and nesting ready, so that rl_msg_decode
 * of a final-extensibility payload (plain CDR/CDR2, what ROS 2 writes) runs one loop instead
 * of walking the type tree member by member. What is rarer (unions, @optional members,
 * appendable and mutable types, recursive types) is one step handing over to the tree
 * walker in cdr.c; events, paths, offsets and errors are the same either way. */
#include "cdr_internal.h"

#include "runlab/error.h"

#include <stdlib.h>
#include <string.h>

enum {
    PLAN_MAX_NEST = 32,   /* structs inlined inside one another (deeper: the tree walker) */
    PLAN_MAX_OPS = 8192   /* past this many steps, types are left to the tree walker */
};

typedef enum op_code {
    OP_PRIM,         /* a primitive member or element */
    OP_LEAF,         /* a string, wstring or enum */
    OP_BEGIN_STRUCT, /* a final struct inlined: its members follow, then OP_END_STRUCT */
    OP_END_STRUCT,
    OP_PRIM_ARRAY,   /* an array or sequence of primitives */
    OP_ARRAY,        /* of anything else: the element's steps follow, up to body_end */
    OP_VALUE_SLOW,   /* a value the tree walker decodes */
    OP_MEMBER_SLOW   /* a member the tree walker decodes (@optional, hidden) */
} op_code;

typedef struct plan_op {
    uint8_t code;
    uint8_t kind;        /* OP_PRIM, OP_PRIM_ARRAY: the primitive kind */
    uint8_t size;        /* its CDR size */
    uint32_t type;       /* the value's type */
    uint32_t elem;       /* OP_PRIM_ARRAY: the element type */
    uint32_t body_end;   /* OP_ARRAY: the first step after the element's steps */
    size_t name_len;
    const char *name;    /* member name; NULL for an array element (owned by the schema) */
    char seg[24];        /* ".name" NUL-padded when it fits in 16 bytes, for a fixed-size copy */
    const rl_msg_member *member; /* OP_MEMBER_SLOW */
} plan_op;

struct cdr_plan {
    plan_op *ops;
    size_t nops, cap;
};

typedef struct plan_builder {
    const rl_msgdef *def;
    cdr_plan *plan;
    unsigned char *on_stack; /* per type: being inlined (a recursive type is not inlined again) */
} plan_builder;

void cdr_plan_free(cdr_plan *p)
{
    if (!p)
        return;
    free(p->ops);
    free(p);
}

static int add_op(plan_builder *b, const plan_op *op, uint32_t *at)
{
    cdr_plan *p = b->plan;
    if (p->nops == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 32;
        plan_op *n = realloc(p->ops, ncap * sizeof *n);
        if (!n)
            return rl_error_set(RL_ENOMEM, "schema: out of memory");
        p->ops = n;
        p->cap = ncap;
    }
    if (at)
        *at = (uint32_t)p->nops;
    p->ops[p->nops++] = *op;
    return RL_OK;
}

static int compile_value(plan_builder *b, uint32_t t, const char *name, int nest);

static void set_name(plan_op *op, const char *name)
{
    op->name = name;
    op->name_len = name ? strlen(name) : 0;
    if (name && op->name_len < 15) {
        op->seg[0] = '.';
        memcpy(op->seg + 1, name, op->name_len);
    }
}

static int compile_struct(plan_builder *b, uint32_t t, const char *name, int nest)
{
    const rl_msg_type *ty = &b->def->types[t];
    plan_op op = {.code = OP_BEGIN_STRUCT, .type = t};
    set_name(&op, name);
    int rc = add_op(b, &op, NULL);
    b->on_stack[t] = 1;
    for (size_t i = 0; i < ty->nmembers && rc == RL_OK; i++) {
        const rl_msg_member *m = &ty->members[i];
        if (m->optional || m->hidden) {
            plan_op slow = {.code = OP_MEMBER_SLOW, .type = m->type, .member = m};
            rc = add_op(b, &slow, NULL);
        } else {
            rc = compile_value(b, m->type, m->name, nest + 1);
        }
    }
    b->on_stack[t] = 0;
    op.code = OP_END_STRUCT;
    return rc < 0 ? rc : add_op(b, &op, NULL);
}

static int compile_value(plan_builder *b, uint32_t t, const char *name, int nest)
{
    const rl_msgdef *def = b->def;
    const rl_msg_type *ty = &def->types[t];
    plan_op op = {.type = t};
    set_name(&op, name);
    size_t size = msgdef_prim_size(ty->kind);
    switch (ty->kind) {
    case RL_MSG_STRUCT:
        if ((ty->ext == RL_MSG_EXT_DEFAULT || ty->ext == RL_MSG_EXT_FINAL) && !b->on_stack[t] &&
            nest < PLAN_MAX_NEST && b->plan->nops < PLAN_MAX_OPS)
            return compile_struct(b, t, name, nest);
        op.code = OP_VALUE_SLOW;
        return add_op(b, &op, NULL);
    case RL_MSG_ARRAY:
    case RL_MSG_SEQUENCE: {
        size_t esize = msgdef_prim_size(def->types[ty->elem].kind);
        if (esize) {
            op.code = OP_PRIM_ARRAY;
            op.elem = ty->elem;
            op.kind = (uint8_t)def->types[ty->elem].kind;
            op.size = (uint8_t)esize;
            return add_op(b, &op, NULL);
        }
        if (nest >= PLAN_MAX_NEST || b->plan->nops >= PLAN_MAX_OPS) {
            op.code = OP_VALUE_SLOW;
            return add_op(b, &op, NULL);
        }
        uint32_t at;
        op.code = OP_ARRAY;
        int rc = add_op(b, &op, &at);
        if (rc == RL_OK)
            rc = compile_value(b, ty->elem, NULL, nest + 1);
        if (rc == RL_OK)
            b->plan->ops[at].body_end = (uint32_t)b->plan->nops;
        return rc;
    }
    case RL_MSG_STRING:
    case RL_MSG_WSTRING:
    case RL_MSG_ENUM:
        op.code = OP_LEAF;
        return add_op(b, &op, NULL);
    default:
        if (size) {
            op.code = OP_PRIM;
            op.kind = (uint8_t)ty->kind;
            op.size = (uint8_t)size;
        } else {
            op.code = OP_VALUE_SLOW; /* unions */
        }
        return add_op(b, &op, NULL);
    }
}

int cdr_plan_build(const rl_msgdef *def, cdr_plan **out)
{
    *out = NULL;
    plan_builder b = {.def = def};
    b.plan = calloc(1, sizeof *b.plan);
    b.on_stack = calloc(def->ntypes, 1);
    int rc = b.plan && b.on_stack ? compile_value(&b, def->root, NULL, 0)
                                  : rl_error_set(RL_ENOMEM, "schema: out of memory");
    free(b.on_stack);
    if (rc < 0) {
        cdr_plan_free(b.plan);
        return rc;
    }
    *out = b.plan;
    return RL_OK;
}

/* ---- Running a plan ---- */

/* As cdr_push_name: most names are copied as 16 fixed bytes (two moves, no call). */
static inline size_t push_name(cdr_dec *d, const plan_op *op)
{
    size_t saved = d->plen, dot = saved != 0, n = dot + op->name_len;
    if (!op->name || saved + n >= sizeof d->path)
        return saved;
    char *p = d->path + saved;
    if (op->name_len < 15 && saved + 16 <= sizeof d->path) {
        memcpy(p, op->seg + 1 - dot, 16); /* ".name", then NULs */
    } else {
        if (dot)
            *p++ = '.';
        memcpy(p, op->name, op->name_len + 1);
    }
    d->plen = saved + n;
    return saved;
}

static inline void load_f64(const cdr_dec *d, const uint8_t *p, rl_msg_value *v)
{
    uint64_t bits = cdr_ld64(d, p);
    memcpy(&v->v.f, &bits, 8);
}

static inline void load_f32(const cdr_dec *d, const uint8_t *p, rl_msg_value *v)
{
    uint32_t bits = cdr_ld32(d, p);
    float f;
    memcpy(&f, &bits, 4);
    v->v.f = f;
}

static int nest_in(cdr_dec *d)
{
    return ++d->depth > CDR_MAX_DEPTH
               ? cdr_fail(d, RL_ERANGE, "types nested deeper than 100 levels")
               : RL_OK;
}

/* Element indices "[i]" for consecutive i, without division: written once after the
 * array's path and counted up in place there (the element's own steps push and pop
 * behind it). Far down a long path, where "[i]" might not fit, cdr_push_index per element. */
enum { INDEX_ROOM = 24 };

static inline void index_first(cdr_dec *d, size_t saved)
{
    if (saved + INDEX_ROOM <= sizeof d->path) {
        memcpy(d->path + saved, "[0]", 4);
        d->plen = saved + 3;
    } else {
        cdr_push_index(d, 0);
    }
}

static inline void index_next(cdr_dec *d, size_t saved, size_t i)
{
    if (saved + INDEX_ROOM > sizeof d->path) {
        cdr_pop(d, saved);
        cdr_push_index(d, i);
        return;
    }
    char *p = d->path;
    size_t k = d->plen - 1; /* the ']' */
    while (k > saved + 1 && p[k - 1] == '9')
        p[--k] = '0';
    if (k > saved + 1) {
        p[k - 1]++;
        return;
    }
    for (size_t j = d->plen + 1; j > saved + 1; j--) /* 99 -> 100: one more digit */
        p[j] = p[j - 1];
    p[saved + 1] = '1';
    d->plen++;
}

static int run_array(cdr_dec *d, const plan_op *ops, const plan_op *op, size_t index);

/* Runs steps [from, to) for one value (`index`: its element index when it is one). Returns
 * RL_OK, the visitor's stop value or a negative status. */
static int run(cdr_dec *d, const plan_op *ops, uint32_t from, uint32_t to, size_t index)
{
    const rl_msg_type *types = d->def->types;
    size_t stack[PLAN_MAX_NEST + 1];
    int sp = 0;
    for (uint32_t i = from; i < to; i++) {
        const plan_op *op = &ops[i];
        size_t at = op->name ? 0 : index;
        rl_msg_value v;
        int rc;
        switch ((op_code)op->code) {
        case OP_PRIM: {
            size_t saved = push_name(d, op);
            if ((rc = cdr_align(d, op->size)) < 0 || (rc = cdr_need(d, op->size)) < 0)
                return rc;
            rl_msg_visit vis;
            cdr_visit_init(&vis, d, RL_MSG_VALUE, &types[op->type], op->name, at, 0);
            cdr_load_prim(d, op->kind, d->buf + d->pos, &vis.value);
            d->pos += op->size;
            if ((rc = d->fn(d->ctx, &vis)) != 0) {
                if (rc > 0)
                    d->stopped = rc;
                return rc;
            }
            cdr_pop(d, saved);
            break;
        }
        case OP_LEAF: {
            size_t saved = push_name(d, op);
            if ((rc = cdr_read_leaf(d, &types[op->type], &v)) < 0 ||
                (rc = cdr_emit(d, RL_MSG_VALUE, &types[op->type], op->name, at, 0, &v)) != 0)
                return rc;
            cdr_pop(d, saved);
            break;
        }
        case OP_BEGIN_STRUCT:
            stack[sp++] = push_name(d, op);
            if ((rc = nest_in(d)) < 0 ||
                (rc = cdr_emit(d, RL_MSG_BEGIN_STRUCT, &types[op->type], op->name, at, 0, NULL)) != 0)
                return rc;
            break;
        case OP_END_STRUCT:
            if ((rc = cdr_emit(d, RL_MSG_END_STRUCT, &types[op->type], op->name, at, 0, NULL)) != 0)
                return rc;
            d->depth--;
            cdr_pop(d, stack[--sp]);
            break;
        case OP_PRIM_ARRAY:
        case OP_ARRAY: {
            size_t saved = push_name(d, op);
            if ((rc = nest_in(d)) < 0 || (rc = run_array(d, ops, op, at)) != 0)
                return rc;
            d->depth--;
            cdr_pop(d, saved);
            if (op->code == OP_ARRAY)
                i = op->body_end - 1;
            break;
        }
        case OP_VALUE_SLOW: {
            size_t saved = push_name(d, op);
            if ((rc = cdr_decode_value(d, op->type, op->name, at)) != 0)
                return rc;
            cdr_pop(d, saved);
            break;
        }
        case OP_MEMBER_SLOW:
            if ((rc = cdr_decode_member(d, op->member)) != 0)
                return rc;
            break;
        }
    }
    return RL_OK;
}

static int run_array(cdr_dec *d, const plan_op *ops, const plan_op *op, size_t at)
{
    const rl_msg_type *ty = &d->def->types[op->type];
    cdr_frame f;
    size_t count;
    int rc = cdr_array_begin(d, ty, &f, &count);
    if (rc < 0 || (rc = cdr_emit(d, RL_MSG_BEGIN_ARRAY, ty, op->name, at, count, NULL)) != 0)
        return rc;
    size_t saved = d->plen;
    if (op->code == OP_PRIM_ARRAY && d->values) { /* checked and aligned: one event */
        const uint8_t *elems = d->buf + d->pos;
        d->pos += count * op->size;
        if ((rc = cdr_emit_values(d, &d->def->types[op->elem], op->name, at, count, elems)) != 0)
            return rc;
        count = 0;
    } else if (op->code == OP_PRIM_ARRAY) {
        if (count)
            index_first(d, saved);
        /* aligned and checked for count elements by cdr_array_begin; one visit record,
         * updated per element */
        rl_msg_visit v;
        cdr_visit_init(&v, d, RL_MSG_VALUE, &d->def->types[op->elem], NULL, 0, 0);
        const uint8_t *p = d->buf + d->pos;
        d->pos += count * op->size;
        v.value.kind = (rl_msg_kind)op->kind;
        /* one loop per kind, so that the kind is not looked at per element */
#define ELEMENT_LOOP(size, load)                                                                   \
    for (size_t i = 0; i < count; p += (size)) {                                                 \
        v.index = i;                                                                               \
        v.path_len = d->plen;                                                                      \
        load;                                                                                      \
        if ((rc = d->fn(d->ctx, &v)) != 0) {                                                       \
            if (rc > 0)                                                                            \
                d->stopped = rc;                                                                   \
            return rc;                                                                             \
        }                                                                                          \
        if (++i < count)                                                                           \
            index_next(d, saved, i);                                                               \
    }
        switch (op->kind) {
        case RL_MSG_FLOAT64:
            ELEMENT_LOOP(8, load_f64(d, p, &v.value))
            break;
        case RL_MSG_FLOAT32:
            ELEMENT_LOOP(4, load_f32(d, p, &v.value))
            break;
        default:
            ELEMENT_LOOP(op->size, cdr_load_prim(d, op->kind, p, &v.value))
        }
#undef ELEMENT_LOOP
        cdr_pop(d, saved);
        count = 0; /* as the tree walker reports it */
    } else {
        if (count)
            index_first(d, saved);
        uint32_t body = (uint32_t)(op - ops) + 1;
        for (size_t i = 0; i < count;) {
            if ((rc = run(d, ops, body, op->body_end, i)) != 0)
                return rc;
            if (++i < count)
                index_next(d, saved, i);
        }
        cdr_pop(d, saved);
    }
    if (f.body_end != SIZE_MAX) {
        if (d->pos > f.body_end)
            return cdr_fail(d, RL_EPARSE, "array elements run past their DHEADER");
        cdr_frame_close(d, &f);
    }
    return cdr_emit(d, RL_MSG_END_ARRAY, ty, op->name, at, count, NULL);
}

int cdr_plan_run(cdr_dec *d, const cdr_plan *p)
{
    return run(d, p->ops, 0, (uint32_t)p->nops, 0);
}
