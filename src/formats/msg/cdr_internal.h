/* Internal interface of the CDR decoder (cdr.c), shared with the field-path reader
 * (msgpath.c) and the JSON writer (cdr_json.c): the decoder state and the steps that
 * open structs, unions, arrays and members one at a time. */
#ifndef RUNLAB_SRC_FORMATS_CDR_INTERNAL_H
#define RUNLAB_SRC_FORMATS_CDR_INTERNAL_H

#include "msgdef_internal.h"

#include "runlab/error.h"

#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

int cdr_open(cdr_dec *d, const rl_msgdef *def, const uint8_t *data, size_t len);
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
/* A wstring (cdr_wstring.c): its length, bound and UTF-16 checked; the value points at
 * the code units. */
int cdr_read_wstring(cdr_dec *d, const rl_msg_type *ty, rl_msg_value *out);
/* Converts whole code points of a wstring value, from code unit *i on, to UTF-8 in out (at
 * most cap bytes, cap >= 4); returns the bytes written (0 at the end) and advances *i. */
size_t cdr_wstring_utf8_chunk(const rl_msg_value *v, size_t *i, char *out, size_t cap);
int cdr_read_leaf(cdr_dec *d, const rl_msg_type *ty, rl_msg_value *out);
size_t cdr_push_name(cdr_dec *d, const char *name);
size_t cdr_push_index(cdr_dec *d, size_t i);
static inline void cdr_pop(cdr_dec *d, size_t saved)
{
    d->plen = saved;
    d->path[saved] = '\0';
}
rl_msg_ext cdr_ext(const cdr_dec *d, const rl_msg_type *ty);
int cdr_dheader(cdr_dec *d, cdr_frame *f);
void cdr_frame_close(cdr_dec *d, const cdr_frame *f);
int cdr_find_emheader(cdr_dec *d, size_t start, size_t end, uint32_t id, size_t *data,
                      size_t *size);
int cdr_find_param(cdr_dec *d, size_t start, uint32_t id, size_t *data, size_t *size,
                   size_t *after);
int cdr_member_enter(cdr_dec *d, const rl_msg_member *m, cdr_frame *f, int *present);
void cdr_member_leave(cdr_dec *d, const cdr_frame *f);
const rl_msg_member *cdr_union_case(const rl_msg_type *ty, int64_t disc);
int64_t cdr_value_as_i64(const rl_msg_value *v);
int cdr_union_begin(cdr_dec *d, const rl_msg_type *ty, cdr_frame *f, rl_msg_value *disc);
uint32_t cdr_innermost(const rl_msgdef *def, uint32_t t);
int cdr_array_begin(cdr_dec *d, const rl_msg_type *ty, cdr_frame *f, size_t *count);
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

/* The tree walker: decodes (and reports) a value of type t whose path is already pushed;
 * a member of a final or appendable struct (pushes its name, handles @optional). */
int cdr_decode_value(cdr_dec *d, uint32_t t, const char *name, size_t index);
int cdr_decode_member(cdr_dec *d, const rl_msg_member *m);
/* Decodes a value of type t without reporting it (moves past it). */
int cdr_skip_value(cdr_dec *d, uint32_t t);

/* The decoding plan of a schema (cdr_plan.c; struct cdr_plan is declared in
 * msgdef_internal.h): runs the root type for a payload whose encapsulation is final. */
int cdr_plan_run(cdr_dec *d, const cdr_plan *p);
/* rl_msg_decode without the plan: the tree walker alone (the reference the plan is tested
 * against). */
int cdr_decode_tree(const rl_msgdef *def, const uint8_t *data, size_t len, unsigned flags,
                    rl_msg_visit_fn fn, void *ctx);

/* The canonical JSON writer (cdr_json.c) as a visitor: appends to *buf (capacity *cap)
 * from `len` on; zero-initialise the rest. */
enum { CDR_JSON_MAX_DEPTH = 256 };
typedef struct cdr_json_out {
    char **buf;
    size_t *cap, len;
    int oom;
    int depth;
    unsigned char first[CDR_JSON_MAX_DEPTH];
} cdr_json_out;
int cdr_json_visit(void *ctx, const rl_msg_visit *v);
void cdr_json_put_value(cdr_json_out *j, const rl_msg_value *v);
/* The C numeric locale on this thread while numbers are written (returns the old one for
 * cdr_c_numeric_leave); '.' as the decimal point whatever the application set. */
locale_t cdr_c_numeric_enter(void);
void cdr_c_numeric_leave(locale_t old);
/* Room for n more bytes and a NUL; RL_ENOMEM (sticky) otherwise. */
int cdr_json_reserve(cdr_json_out *j, size_t n);

#endif
