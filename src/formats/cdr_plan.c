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

static int compile_struct(plan_builder *b, uint32_t t, const char *name, int nest)
{
    const rl_msg_type *ty = &b->def->types[t];
    plan_op op = {.code = OP_BEGIN_STRUCT, .type = t, .name = name,
                  .name_len = name ? strlen(name) : 0};
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
    plan_op op = {.type = t, .name = name, .name_len = name ? strlen(name) : 0};
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

static inline size_t push_name(cdr_dec *d, const plan_op *op)
{
    size_t saved = d->plen, dot = saved != 0;
    if (op->name && saved + dot + op->name_len < sizeof d->path) {
        char *p = d->path + saved;
        if (dot)
            *p++ = '.';
        memcpy(p, op->name, op->name_len);
        p[op->name_len] = '\0';
        d->plen = saved + dot + op->name_len;
    }
    return saved;
}

static inline void pop(cdr_dec *d, size_t saved)
{
    d->plen = saved;
    d->path[saved] = '\0';
}

/* A primitive at p (bounds and alignment checked by the caller). */
static inline void load_prim(const cdr_dec *d, unsigned kind, const uint8_t *p, rl_msg_value *v)
{
    v->kind = (rl_msg_kind)kind;
    switch (kind) {
    case RL_MSG_BOOL:
        v->v.b = p[0] != 0;
        break;
    case RL_MSG_INT8:
        v->v.i = (int8_t)p[0];
        break;
    case RL_MSG_INT16:
        v->v.i = (int16_t)cdr_ld16(d, p);
        break;
    case RL_MSG_UINT16:
        v->v.u = cdr_ld16(d, p);
        break;
    case RL_MSG_INT32:
        v->v.i = (int32_t)cdr_ld32(d, p);
        break;
    case RL_MSG_UINT32:
        v->v.u = cdr_ld32(d, p);
        break;
    case RL_MSG_INT64:
        v->v.i = (int64_t)cdr_ld64(d, p);
        break;
    case RL_MSG_UINT64:
        v->v.u = cdr_ld64(d, p);
        break;
    case RL_MSG_FLOAT32: {
        uint32_t bits = cdr_ld32(d, p);
        float f;
        memcpy(&f, &bits, 4);
        v->v.f = f;
        break;
    }
    case RL_MSG_FLOAT64: {
        uint64_t bits = cdr_ld64(d, p);
        memcpy(&v->v.f, &bits, 8);
        break;
    }
    default: /* octet, char, uint8 */
        v->v.u = p[0];
    }
}

static int nest_in(cdr_dec *d)
{
    return ++d->depth > CDR_MAX_DEPTH
               ? cdr_fail(d, RL_ERANGE, "types nested deeper than 100 levels")
               : RL_OK;
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
            load_prim(d, op->kind, d->buf + d->pos, &v);
            d->pos += op->size;
            if ((rc = cdr_emit(d, RL_MSG_VALUE, &types[op->type], op->name, at, 0, &v)) != 0)
                return rc;
            pop(d, saved);
            break;
        }
        case OP_LEAF: {
            size_t saved = push_name(d, op);
            if ((rc = cdr_read_leaf(d, &types[op->type], &v)) < 0 ||
                (rc = cdr_emit(d, RL_MSG_VALUE, &types[op->type], op->name, at, 0, &v)) != 0)
                return rc;
            pop(d, saved);
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
            pop(d, stack[--sp]);
            break;
        case OP_PRIM_ARRAY:
        case OP_ARRAY: {
            size_t saved = push_name(d, op);
            if ((rc = nest_in(d)) < 0 || (rc = run_array(d, ops, op, at)) != 0)
                return rc;
            d->depth--;
            pop(d, saved);
            if (op->code == OP_ARRAY)
                i = op->body_end - 1;
            break;
        }
        case OP_VALUE_SLOW: {
            size_t saved = push_name(d, op);
            if ((rc = cdr_decode_value(d, op->type, op->name, at)) != 0)
                return rc;
            pop(d, saved);
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
    if (op->code == OP_PRIM_ARRAY) {
        /* aligned and checked for count elements by cdr_array_begin */
        const rl_msg_type *et = &d->def->types[op->elem];
        for (size_t i = 0; i < count; i++) {
            rl_msg_value v;
            size_t saved = cdr_push_index(d, i);
            load_prim(d, op->kind, d->buf + d->pos, &v);
            d->pos += op->size;
            if ((rc = cdr_emit(d, RL_MSG_VALUE, et, NULL, i, 0, &v)) != 0)
                return rc;
            cdr_pop(d, saved);
        }
        count = 0; /* as the tree walker reports it */
    } else {
        uint32_t body = (uint32_t)(op - ops) + 1;
        for (size_t i = 0; i < count; i++) {
            size_t saved = cdr_push_index(d, i);
            if ((rc = run(d, ops, body, op->body_end, i)) != 0)
                return rc;
            cdr_pop(d, saved);
        }
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
