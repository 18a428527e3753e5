/* The CDR decoder driven by the message type model (runlab/msgdef.h): encapsulation
 * header, XCDR1 and XCDR2 alignment, DHEADERs, EMHEADERs and XCDR1 parameter lists,
 * optional members; the tree walker feeds a visitor (rl_msg_decode in cdr_decode.c picks it or
 * the plan). Every length is checked against the bytes left; nothing is allocated per message. */
#include "cdr_internal.h"

#include "runlab/error.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum {
    PID_EXTENDED = 0x3f01,
    PID_SENTINEL = 0x3f02,
    EMPTY_ELEM_MAX = 1 << 20 /* elements of a type that takes no bytes */
};

/* ---- Reading ------------------------------------------------------------------------ */

/* Whether values in the byte order `big_endian` need swapping on this host. */
static int swap_for(int big_endian)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return !big_endian;
#else
    return big_endian;
#endif
}

static int rd_u32(cdr_dec *d, uint32_t *out)
{
    int rc = cdr_align(d, 4);
    if (rc == RL_OK && (rc = cdr_need(d, 4)) == RL_OK) {
        *out = cdr_ld32(d, d->buf + d->pos);
        d->pos += 4;
    }
    return rc;
}

/* Reads a string, an enum or a primitive: a leaf of the type tree. */
int cdr_read_leaf(cdr_dec *d, const rl_msg_type *ty, rl_msg_value *out)
{
    if (ty->kind == RL_MSG_ENUM) {
        uint32_t v;
        int rc = rd_u32(d, &v);
        out->kind = RL_MSG_ENUM;
        out->v.i = (int32_t)v;
        return rc;
    }
    if (ty->kind == RL_MSG_WSTRING)
        return cdr_read_wstring(d, ty, out);
    if (ty->kind != RL_MSG_STRING)
        return cdr_read_prim(d, ty->kind, out);
    size_t at = d->pos;
    uint32_t n;
    int rc = rd_u32(d, &n);
    if (rc < 0)
        return rc;
    if (n > d->end - d->pos) {
        char msg[96];
        d->pos = at;
        snprintf(msg, sizeof msg, "string length %u exceeds the %zu bytes left", n, d->end - d->pos);
        return cdr_fail(d, RL_EPARSE, msg);
    }
    out->kind = RL_MSG_STRING;
    out->v.s.wunit = 0;
    out->v.s.wbig_endian = false;
    out->v.s.ptr = (const char *)d->buf + d->pos;
    out->v.s.len = n && d->buf[d->pos + n - 1] == '\0' ? n - 1 : n;
    d->pos += n;
    if (ty->bound && out->v.s.len > ty->bound) {
        char msg[96];
        d->pos = at;
        snprintf(msg, sizeof msg, "string of %zu bytes exceeds its bound %u", out->v.s.len, ty->bound);
        return cdr_fail(d, RL_EPARSE, msg);
    }
    return RL_OK;
}

/* ---- Structure ------------------------------------------------------------------------ */

rl_msg_ext cdr_ext(const cdr_dec *d, const rl_msg_type *ty)
{
    return ty->ext != RL_MSG_EXT_DEFAULT ? ty->ext : d->top_ext;
}

/* Reads a DHEADER and restricts the decoder to the bytes it covers. */
int cdr_dheader(cdr_dec *d, cdr_frame *f)
{
    uint32_t size;
    int rc = rd_u32(d, &size);
    if (rc < 0)
        return rc;
    if (size > d->end - d->pos) {
        char msg[96];
        d->pos -= 4;
        snprintf(msg, sizeof msg, "DHEADER size %u exceeds the %zu bytes left", size, d->end - d->pos - 4);
        return cdr_fail(d, RL_EPARSE, msg);
    }
    f->end = d->end;
    f->body_start = d->pos;
    f->body_end = d->pos + size;
    d->end = f->body_end;
    return RL_OK;
}

/* Closes a DHEADER frame: the bytes it covers are consumed whatever was read. */
void cdr_frame_close(cdr_dec *d, const cdr_frame *f)
{
    d->pos = f->body_end;
    d->end = f->end;
}

/* Finds member `id` in an XCDR2 mutable body [start, end): *data and *size of its value
 * (for length codes 5..7 the value starts at the NEXTINT, which is part of it). */
int cdr_find_emheader(cdr_dec *d, size_t start, size_t end, uint32_t id, size_t *data,
                      size_t *size)
{
    d->pos = start;
    while (d->pos < end) {
        size_t pad = (4 - (d->pos - d->origin) % 4) % 4;
        if (pad >= end - d->pos)
            break; /* padding after the last member */
        uint32_t em;
        int rc = rd_u32(d, &em);
        if (rc < 0)
            return rc;
        size_t at = d->pos - 4;
        uint32_t lc = em >> 28 & 7, mid = em & 0x0fffffffu;
        uint64_t sz;
        size_t val = d->pos;
        if (lc < 4) {
            sz = (uint64_t)1 << lc;
        } else {
            if ((rc = cdr_need(d, 4)) < 0)
                return rc;
            uint64_t next = cdr_ld32(d, d->buf + d->pos);
            if (lc == 4) {
                sz = next;
                val = d->pos + 4;
            } else {
                sz = 4 + next * (lc == 5 ? 1 : lc == 6 ? 4 : 8);
            }
        }
        if (sz > end - val) {
            char msg[128];
            d->pos = at;
            snprintf(msg, sizeof msg, "member id %u: EMHEADER length %llu exceeds the %zu bytes left",
                     mid, (unsigned long long)sz, end - val);
            return cdr_fail(d, RL_EPARSE, msg);
        }
        if (mid == id) {
            *data = val;
            *size = (size_t)sz;
            return 1;
        }
        d->pos = val + (size_t)sz;
    }
    return 0;
}

/* Finds member `id` in an XCDR1 parameter list starting at `start`; *after is the end of
 * the list (past the sentinel). */
int cdr_find_param(cdr_dec *d, size_t start, uint32_t id, size_t *data, size_t *size,
                   size_t *after)
{
    d->pos = start;
    int found = 0;
    for (;;) {
        int rc = cdr_align(d, 4);
        if (rc < 0 || (rc = cdr_need(d, 4)) < 0)
            return rc;
        size_t at = d->pos;
        uint32_t pid = cdr_ld16(d, d->buf + d->pos) & 0x3fffu;
        uint32_t len = cdr_ld16(d, d->buf + d->pos + 2);
        d->pos += 4;
        if (pid == PID_SENTINEL)
            break;
        if (pid == PID_EXTENDED) {
            if ((rc = cdr_need(d, 8)) < 0)
                return rc;
            pid = cdr_ld32(d, d->buf + d->pos) & 0x0fffffffu;
            len = cdr_ld32(d, d->buf + d->pos + 4);
            d->pos += 8;
        }
        if (len > d->end - d->pos) {
            char msg[128];
            d->pos = at;
            snprintf(msg, sizeof msg, "parameter id %u: length %u exceeds the %zu bytes left", pid,
                     len, d->end - at - 4);
            return cdr_fail(d, RL_EPARSE, msg);
        }
        if (pid == id && !found) {
            found = 1;
            *data = d->pos;
            *size = len;
        }
        d->pos += len;
    }
    *after = d->pos;
    return found;
}

/* Positions the decoder at member `m`'s value of a final or appendable struct. Sets
 * *present to 0 for an absent optional member (or one cut off by an appendable DHEADER). */
int cdr_member_enter(cdr_dec *d, const rl_msg_member *m, cdr_frame *f, int *present)
{
    *present = 1;
    f->end = d->end;
    f->origin = d->origin;
    f->body_end = SIZE_MAX;
    if (d->pos >= d->end && d->in_appendable) {
        *present = 0;
        return RL_OK;
    }
    if (!m->optional)
        return RL_OK;
    if (d->v2) {
        rl_msg_value flag;
        int rc = cdr_read_prim(d, RL_MSG_BOOL, &flag);
        *present = rc == RL_OK && flag.v.b;
        return rc;
    }
    /* XCDR1: a parameter header; length 0 means absent */
    int rc = cdr_align(d, 4);
    if (rc < 0 || (rc = cdr_need(d, 4)) < 0)
        return rc;
    uint32_t len = cdr_ld16(d, d->buf + d->pos + 2);
    uint32_t pid = cdr_ld16(d, d->buf + d->pos) & 0x3fffu;
    d->pos += 4;
    if (pid == PID_EXTENDED) {
        if ((rc = cdr_need(d, 8)) < 0)
            return rc;
        len = cdr_ld32(d, d->buf + d->pos + 4);
        d->pos += 8;
    }
    if (len > d->end - d->pos)
        return cdr_fail(d, RL_EPARSE, "optional member's parameter length exceeds the bytes left");
    *present = len != 0;
    f->body_end = d->pos + len;
    d->end = f->body_end;
    d->origin = d->pos;
    return RL_OK;
}

void cdr_member_leave(cdr_dec *d, const cdr_frame *f)
{
    if (f->body_end != SIZE_MAX)
        d->pos = f->body_end;
    d->end = f->end;
    d->origin = f->origin;
}


static int dec_member_value(cdr_dec *d, const rl_msg_member *m, int present)
{
    if (!present)
        return cdr_emit(d, RL_MSG_ABSENT, &d->def->types[m->type], m->name, 0, 0, NULL);
    return cdr_decode_value(d, m->type, m->name, 0);
}

int cdr_decode_member(cdr_dec *d, const rl_msg_member *m)
{
    size_t saved = cdr_push_name(d, m->name);
    cdr_frame f;
    int present;
    int rc = cdr_member_enter(d, m, &f, &present);
    if (rc == RL_OK && m->hidden)
        rc = present ? cdr_skip_value(d, m->type) : RL_OK;
    else if (rc == RL_OK)
        rc = dec_member_value(d, m, present);
    cdr_member_leave(d, &f);
    cdr_pop(d, saved);
    return rc;
}

static int dec_struct_members(cdr_dec *d, const rl_msg_type *ty)
{
    rl_msg_ext ext = cdr_ext(d, ty);
    int rc = RL_OK;
    if (ext == RL_MSG_EXT_MUTABLE && d->v2) {
        cdr_frame f;
        if ((rc = cdr_dheader(d, &f)) < 0)
            return rc;
        for (size_t i = 0; i < ty->nmembers && rc == RL_OK && !d->stopped && d->fn; i++) {
            const rl_msg_member *m = &ty->members[i];
            size_t data = 0, size = 0;
            size_t saved = cdr_push_name(d, m->name);
            int found = cdr_find_emheader(d, f.body_start, f.body_end, m->id, &data, &size);
            if (found < 0) {
                rc = found;
            } else {
                size_t end = d->end;
                d->pos = data;
                d->end = data + size;
                rc = dec_member_value(d, m, found);
                d->end = end;
            }
            cdr_pop(d, saved);
        }
        cdr_frame_close(d, &f);
        return rc;
    }
    if (ext == RL_MSG_EXT_MUTABLE) {
        size_t start = d->pos, after = 0, data = 0, size = 0;
        for (size_t i = 0; i < ty->nmembers && rc == RL_OK && !d->stopped && d->fn; i++) {
            const rl_msg_member *m = &ty->members[i];
            size_t saved = cdr_push_name(d, m->name);
            int found = cdr_find_param(d, start, m->id, &data, &size, &after);
            if (found < 0) {
                rc = found;
            } else {
                size_t end = d->end, origin = d->origin;
                d->pos = data;
                d->end = data + size;
                d->origin = data;
                rc = dec_member_value(d, m, found);
                d->end = end;
                d->origin = origin;
            }
            cdr_pop(d, saved);
        }
        if (rc == RL_OK && (ty->nmembers == 0 || !d->fn)) {
            uint32_t none = UINT32_MAX;
            rc = cdr_find_param(d, start, none, &data, &size, &after);
        }
        d->pos = after;
        return rc < 0 ? rc : RL_OK;
    }
    cdr_frame df = {0};
    int appendable = ext == RL_MSG_EXT_APPENDABLE && d->v2;
    int was_in = d->in_appendable;
    if (appendable) {
        if ((rc = cdr_dheader(d, &df)) < 0)
            return rc;
        if (!d->fn) { /* skipping: the DHEADER says how far */
            cdr_frame_close(d, &df);
            return RL_OK;
        }
    }
    d->in_appendable = appendable;
    for (size_t i = 0; i < ty->nmembers && rc == RL_OK && !d->stopped; i++)
        rc = cdr_decode_member(d, &ty->members[i]);
    d->in_appendable = was_in;
    if (appendable && rc == RL_OK)
        cdr_frame_close(d, &df);
    return rc;
}

/* The active case of a union for discriminator value `disc`; NULL when none. */
const rl_msg_member *cdr_union_case(const rl_msg_type *ty, int64_t disc)
{
    const rl_msg_member *def = NULL;
    for (size_t i = 0; i < ty->nmembers; i++) {
        const rl_msg_member *m = &ty->members[i];
        for (size_t l = 0; l < m->nlabels; l++)
            if (m->labels[l] == disc)
                return m;
        if (m->is_default_case)
            def = m;
    }
    return def;
}

int64_t cdr_value_as_i64(const rl_msg_value *v)
{
    switch (v->kind) {
    case RL_MSG_BOOL:
        return v->v.b;
    case RL_MSG_OCTET:
    case RL_MSG_CHAR:
    case RL_MSG_UINT8:
    case RL_MSG_UINT16:
    case RL_MSG_UINT32:
    case RL_MSG_UINT64:
        return (int64_t)v->v.u;
    default:
        return v->v.i;
    }
}

/* Opens a union: DHEADER (appendable/mutable under XCDR2) and the discriminator. */
int cdr_union_begin(cdr_dec *d, const rl_msg_type *ty, cdr_frame *f, rl_msg_value *disc)
{
    f->body_end = SIZE_MAX;
    f->end = d->end;
    int rc;
    if (d->v2 && cdr_ext(d, ty) != RL_MSG_EXT_FINAL && (rc = cdr_dheader(d, f)) < 0)
        return rc;
    return cdr_read_leaf(d, &d->def->types[ty->elem], disc);
}

static int dec_union(cdr_dec *d, const rl_msg_type *ty, uint32_t t, const char *name,
                     size_t index)
{
    cdr_frame f;
    rl_msg_value disc;
    int rc = cdr_union_begin(d, ty, &f, &disc);
    if (rc < 0)
        return rc;
    if ((rc = cdr_emit(d, RL_MSG_BEGIN_STRUCT, &d->def->types[t], name, index, 0, NULL)) != 0)
        return rc;
    size_t saved = cdr_push_name(d, "_d");
    rc = cdr_emit(d, RL_MSG_VALUE, &d->def->types[ty->elem], "_d", 0, 0, &disc);
    cdr_pop(d, saved);
    const rl_msg_member *m = cdr_union_case(ty, cdr_value_as_i64(&disc));
    if (rc == RL_OK && m) {
        saved = cdr_push_name(d, m->name);
        rc = cdr_decode_value(d, m->type, m->name, 0);
        cdr_pop(d, saved);
    }
    if (rc == RL_OK && f.body_end != SIZE_MAX)
        cdr_frame_close(d, &f);
    return rc != RL_OK ? rc : cdr_emit(d, RL_MSG_END_STRUCT, &d->def->types[t], name, index, 0, NULL);
}

/* The innermost element type of a (multi-dimensional) array. */
uint32_t cdr_innermost(const rl_msgdef *def, uint32_t t)
{
    const rl_msg_type *ty = &def->types[t];
    while (ty->kind == RL_MSG_ARRAY && def->types[ty->elem].inner_dim) {
        t = ty->elem;
        ty = &def->types[t];
    }
    return ty->elem;
}

/* Opens an array or sequence: its DHEADER (XCDR2, non-primitive elements) and length.
 * Checks the count against the bytes left. */
int cdr_array_begin(cdr_dec *d, const rl_msg_type *ty, cdr_frame *f, size_t *count)
{
    f->body_end = SIZE_MAX;
    f->end = d->end;
    const rl_msgdef *def = d->def;
    uint32_t elem = ty->elem;
    size_t esize = msgdef_prim_size(def->types[elem].kind);
    int rc;
    if (d->v2 && !ty->inner_dim && !msgdef_prim_size(def->types[cdr_innermost(def, (uint32_t)(ty - def->types))].kind) &&
        (rc = cdr_dheader(d, f)) < 0)
        return rc;
    if (ty->kind == RL_MSG_ARRAY) {
        *count = ty->bound;
    } else {
        uint32_t n;
        size_t at = d->pos;
        if ((rc = rd_u32(d, &n)) < 0)
            return rc;
        if (ty->bound && n > ty->bound) {
            char msg[96];
            d->pos = at;
            snprintf(msg, sizeof msg, "sequence length %u exceeds its bound %u", n, ty->bound);
            return cdr_fail(d, RL_EPARSE, msg);
        }
        *count = n;
    }
    size_t lower = esize ? esize : def->min_size[elem] ? 1 : 0;
    size_t left = d->end - d->pos;
    if ((lower && *count > left / lower) || (!lower && *count > EMPTY_ELEM_MAX)) {
        char msg[128];
        snprintf(msg, sizeof msg, "%zu elements cannot fit in the %zu bytes left", *count, left);
        return cdr_fail(d, RL_EPARSE, msg);
    }
    if (esize && *count && (rc = cdr_align(d, esize)) < 0)
        return rc;
    if (esize && (rc = cdr_need(d, *count * esize)) < 0)
        return rc;
    return RL_OK;
}

static int dec_array(cdr_dec *d, const rl_msg_type *ty, uint32_t t, const char *name,
                     size_t index)
{
    cdr_frame f;
    size_t count;
    int rc = cdr_array_begin(d, ty, &f, &count);
    if (rc < 0)
        return rc;
    const rl_msg_type *et = &d->def->types[ty->elem];
    size_t esize = msgdef_prim_size(et->kind);
    if (!d->fn && (esize || f.body_end != SIZE_MAX)) { /* skipping: jump */
        if (f.body_end != SIZE_MAX)
            cdr_frame_close(d, &f);
        else
            d->pos += count * esize;
        return RL_OK;
    }
    if ((rc = cdr_emit(d, RL_MSG_BEGIN_ARRAY, &d->def->types[t], name, index, count, NULL)) != 0)
        return rc;
    if (esize && d->values) { /* checked and aligned by cdr_array_begin: one event */
        const uint8_t *elems = d->buf + d->pos;
        d->pos += count * esize;
        if ((rc = cdr_emit_values(d, et, name, index, count, elems)) != 0)
            return rc;
        count = 0;
    } else if (esize) { /* primitives: checked and aligned by cdr_array_begin, read in a tight loop */
        for (size_t i = 0; i < count && rc == RL_OK && !d->stopped; i++) {
            rl_msg_value v;
            size_t saved = cdr_push_index(d, i);
            rc = cdr_read_prim(d, et->kind, &v);
            if (rc == RL_OK)
                rc = cdr_emit(d, RL_MSG_VALUE, et, NULL, i, 0, &v);
            cdr_pop(d, saved);
        }
        count = 0;
    }
    for (size_t i = 0; i < count && rc == RL_OK && !d->stopped; i++) {
        size_t saved = cdr_push_index(d, i);
        rc = cdr_decode_value(d, ty->elem, NULL, i);
        cdr_pop(d, saved);
    }
    if (rc != RL_OK)
        return rc;
    if (f.body_end != SIZE_MAX) {
        if (d->pos > f.body_end)
            return cdr_fail(d, RL_EPARSE, "array elements run past their DHEADER");
        cdr_frame_close(d, &f);
    }
    return cdr_emit(d, RL_MSG_END_ARRAY, &d->def->types[t], name, index, count, NULL);
}

int cdr_decode_value(cdr_dec *d, uint32_t t, const char *name, size_t index)
{
    const rl_msg_type *ty = &d->def->types[t];
    int rc;
    switch (ty->kind) {
    case RL_MSG_STRUCT:
        if (++d->depth > CDR_MAX_DEPTH)
            return cdr_fail(d, RL_ERANGE, "types nested deeper than 100 levels");
        rc = cdr_emit(d, RL_MSG_BEGIN_STRUCT, ty, name, index, 0, NULL);
        if (rc == RL_OK)
            rc = dec_struct_members(d, ty);
        if (rc == RL_OK && !d->stopped)
            rc = cdr_emit(d, RL_MSG_END_STRUCT, ty, name, index, 0, NULL);
        d->depth--;
        return rc;
    case RL_MSG_UNION:
        if (++d->depth > CDR_MAX_DEPTH)
            return cdr_fail(d, RL_ERANGE, "types nested deeper than 100 levels");
        rc = dec_union(d, ty, t, name, index);
        d->depth--;
        return rc;
    case RL_MSG_ARRAY:
    case RL_MSG_SEQUENCE:
        if (++d->depth > CDR_MAX_DEPTH)
            return cdr_fail(d, RL_ERANGE, "types nested deeper than 100 levels");
        rc = dec_array(d, ty, t, name, index);
        d->depth--;
        return rc;
    default: {
        rl_msg_value v;
        rc = cdr_read_leaf(d, ty, &v);
        return rc < 0 ? rc : cdr_emit(d, RL_MSG_VALUE, ty, name, index, 0, &v);
    }
    }
}

int cdr_open(cdr_dec *d, const rl_msgdef *def, const uint8_t *data, size_t len)
{
    memset(d, 0, offsetof(cdr_dec, path));
    d->path[0] = '\0';
    d->def = def;
    d->buf = data;
    d->end = len;
    if (!def || (!data && len))
        return rl_error_set(RL_EINVAL, "cdr: NULL argument");
    if (len < 4)
        return rl_error_set(RL_ETRUNCATED, "byte offset 0: payload of %zu bytes has no 4-byte "
                                           "encapsulation header", len);
    unsigned id = (unsigned)data[0] << 8 | data[1];
    static const struct {
        int v2;
        rl_msg_ext ext;
    } kinds[12] = {{0, RL_MSG_EXT_FINAL},      {0, RL_MSG_EXT_FINAL},      {0, RL_MSG_EXT_MUTABLE},
                   {0, RL_MSG_EXT_MUTABLE},    {0, 0},                     {0, 0},
                   {1, RL_MSG_EXT_FINAL},      {1, RL_MSG_EXT_FINAL},      {1, RL_MSG_EXT_APPENDABLE},
                   {1, RL_MSG_EXT_APPENDABLE}, {1, RL_MSG_EXT_MUTABLE},    {1, RL_MSG_EXT_MUTABLE}};
    if (id >= 12 || kinds[id].ext == 0)
        return rl_error_set(RL_EPARSE, "byte offset 0: unknown encapsulation kind 0x%04x", id);
    d->v2 = kinds[id].v2;
    d->top_ext = kinds[id].ext;
    d->be = (id & 1) == 0;
    d->swap = swap_for(d->be);
    size_t pad = data[3] & 3u;
    if (len - 4 < pad)
        return rl_error_set(RL_EPARSE, "byte offset 3: encapsulation padding %zu exceeds the payload", pad);
    d->end = len - pad;
    d->pos = 4;
    d->origin = 4;
    return RL_OK;
}

int cdr_skip_value(cdr_dec *d, uint32_t t)
{
    rl_msg_visit_fn fn = d->fn;
    d->fn = NULL;
    int rc = cdr_decode_value(d, t, NULL, 0);
    d->fn = fn;
    return rc;
}

int rl_msg_value_f64(const rl_msg_value *v, double *out)
{
    if (!v || !out)
        return rl_error_set(RL_EINVAL, "value: NULL argument");
    if (v->kind == RL_MSG_STRING || v->kind == RL_MSG_WSTRING)
        return rl_error_set(RL_EINVAL, "value: a string is not a number");
    *out = cdr_value_f64(v);
    return RL_OK;
}

int rl_msg_values_get(const rl_msg_visit *v, size_t i, rl_msg_value *out)
{
    if (!v || !out || v->event != RL_MSG_VALUES)
        return rl_error_set(RL_EINVAL, "values: not a VALUES event");
    if (i >= v->count)
        return rl_error_set(RL_ERANGE, "values: element %zu of %zu", i, v->count);
    size_t size = msgdef_prim_size(v->value.kind);
    cdr_dec d; /* only the byte order is read */
    d.swap = swap_for(v->big_endian);
    cdr_load_prim(&d, v->value.kind, v->elems + i * size, out);
    return RL_OK;
}

size_t rl_msg_values_f64(const rl_msg_visit *v, size_t first, double *out, size_t n)
{
    if (!v || v->event != RL_MSG_VALUES || first >= v->count)
        return 0;
    if (n > v->count - first)
        n = v->count - first;
    rl_msg_value x;
    if (v->value.kind == RL_MSG_FLOAT64) { /* the common case without a call per element */
        const uint8_t *p = v->elems + first * 8;
        int swap = swap_for(v->big_endian);
        for (size_t i = 0; i < n; i++, p += 8) {
            uint64_t bits;
            memcpy(&bits, p, 8);
            if (swap)
                bits = __builtin_bswap64(bits);
            memcpy(&out[i], &bits, 8);
        }
        return n;
    }
    for (size_t i = 0; i < n; i++) {
        rl_msg_values_get(v, first + i, &x);
        rl_msg_value_f64(&x, &out[i]);
    }
    return n;
}
