/* The CDR decoder's state and its innermost steps (cdr_prim.c and inline here): bounds,
 * alignment, byte order, primitives, the field path and the events a visitor gets. Every
 * CDR source builds on these; they call nothing above them. */
#ifndef RUNLAB_SRC_FORMATS_MSG_CDR_PRIM_H
#define RUNLAB_SRC_FORMATS_MSG_CDR_PRIM_H

#include "msgdef_internal.h"

#include "runlab/error.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { CDR_PATH_MAX = 512, CDR_MAX_DEPTH = 100 /* nested types a payload may have */ };

typedef struct cdr_dec {
    const rl_msgdef *def;
    const uint8_t *buf;
    size_t pos, end; /* offsets in buf; end is the current limit (DHEADER, member) */
    size_t origin;   /* alignment origin */
    int be, v2;
    int swap; /* the payload's byte order is not the host's */
    rl_msg_ext top_ext; /* extensibility the encapsulation header declares */
    int in_appendable;  /* members may be cut off by the enclosing DHEADER */
    int depth, stopped;
    int values; /* RL_MSG_DECODE_ARRAYS: arrays of primitives as one VALUES event */
    rl_msg_visit_fn fn; /* NULL: skipping */
    void *ctx;
    size_t plen;
    char path[CDR_PATH_MAX]; /* must stay last: cdr_open clears what precedes it */
} cdr_dec;

/* A saved limit: DHEADER bodies, optional members' parameter headers. */
typedef struct cdr_frame {
    size_t end, origin, body_start, body_end; /* body_end SIZE_MAX: none */
} cdr_frame;

int cdr_fail(cdr_dec *d, int code, const char *what);
/* The error of cdr_need: `n` bytes wanted, fewer left. */
int cdr_fail_need(cdr_dec *d, size_t n);

/* ---- The innermost steps, inline: they run for every value ---- */

static inline int cdr_need(cdr_dec *d, size_t n)
{
    return n > d->end - d->pos ? cdr_fail_need(d, n) : 0;
}

/* Pads to a multiple of n (1, 2, 4 or 8; XCDR2 aligns 8-byte values to 4). */
static inline int cdr_align(cdr_dec *d, size_t n)
{
    if (d->v2 && n > 4)
        n = 4;
    size_t pad = (0 - (d->pos - d->origin)) & (n - 1);
    if (pad > d->end - d->pos)
        return cdr_fail(d, RL_ETRUNCATED, "payload ends in alignment padding");
    d->pos += pad;
    return 0;
}

static inline uint16_t cdr_ld16(const cdr_dec *d, const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return d->swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t cdr_ld32(const cdr_dec *d, const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return d->swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t cdr_ld64(const cdr_dec *d, const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return d->swap ? __builtin_bswap64(v) : v;
}
int cdr_read_prim(cdr_dec *d, rl_msg_kind k, rl_msg_value *out);

size_t cdr_push_name(cdr_dec *d, const char *name);
size_t cdr_push_index(cdr_dec *d, size_t i);
static inline void cdr_pop(cdr_dec *d, size_t saved)
{
    d->plen = saved;
    d->path[saved] = '\0';
}

/* The primitive of kind (bool .. float64) at p; bounds and alignment checked by the caller. */
static inline void cdr_load_prim(const cdr_dec *d, unsigned kind, const uint8_t *p,
                                 rl_msg_value *v)
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

/* A value as a double: rl_msg_value_f64's conversion (NaN for a string, where it reports
 * an error), inline for the extractor, which converts every field of every element. */
static inline double cdr_value_f64(const rl_msg_value *v)
{
    switch (v->kind) {
    case RL_MSG_FLOAT32:
    case RL_MSG_FLOAT64:
        return v->v.f;
    case RL_MSG_STRING:
    case RL_MSG_WSTRING:
        return NAN;
    case RL_MSG_BOOL:
        return v->v.b;
    case RL_MSG_OCTET:
    case RL_MSG_CHAR:
    case RL_MSG_UINT8:
    case RL_MSG_UINT16:
    case RL_MSG_UINT32:
    case RL_MSG_UINT64:
        return (double)v->v.u;
    default:
        return (double)v->v.i;
    }
}

/* A visit record at the decoder's path, every field set one by one: an initializer
 * zeroing the whole record compiles to a `rep stos`, whose start-up cost was a third of
 * the plan's time per event (perf). */
static inline void cdr_visit_init(rl_msg_visit *v, const cdr_dec *d, rl_msg_event ev,
                                  const rl_msg_type *ty, const char *name, size_t index,
                                  size_t count)
{
    v->event = ev;
    v->path = d->path;
    v->path_len = d->plen;
    v->name = name;
    v->index = index;
    v->type = ty;
    v->count = count;
    v->value.kind = (rl_msg_kind)0;
    v->value.v.s.ptr = NULL;
    v->value.v.s.len = 0;
    v->elems = NULL;
    v->big_endian = false;
}

/* Reports one event to the visitor (nothing when skipping); a positive answer stops. */
static inline int cdr_emit(cdr_dec *d, rl_msg_event ev, const rl_msg_type *ty, const char *name,
                           size_t index, size_t count, const rl_msg_value *value)
{
    if (!d->fn)
        return RL_OK;
    rl_msg_visit v;
    cdr_visit_init(&v, d, ev, ty, name, index, count);
    if (value)
        v.value = *value;
    int rc = d->fn(d->ctx, &v);
    if (rc > 0)
        d->stopped = rc;
    return rc;
}

/* Reports the `count` primitives of type `et` at `elems` as one VALUES event (the array's
 * path, name and index). */
static inline int cdr_emit_values(cdr_dec *d, const rl_msg_type *et, const char *name,
                                  size_t index, size_t count, const uint8_t *elems)
{
    rl_msg_visit v;
    cdr_visit_init(&v, d, RL_MSG_VALUES, et, name, index, count);
    v.value.kind = et->kind;
    v.elems = elems;
    v.big_endian = d->be != 0;
    int rc = d->fn(d->ctx, &v);
    if (rc > 0)
        d->stopped = rc;
    return rc;
}

#endif
