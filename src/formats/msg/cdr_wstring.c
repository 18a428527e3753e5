/* wstring in CDR: read (validated as UTF-16, errors naming the field and byte offset) in
 * the layout of the schema's world — XTypes 1.3 for omgidl (a uint32 byte count, 2-byte
 * UTF-16 code units, no NUL), ROS 2 type supports for ros2msg (a uint32 count of code
 * units, each in 4 bytes, no NUL) — and converted to UTF-8 for JSON, tables and callers. */
#include "cdr_internal.h"

#include "runlab/error.h"

#include <stdio.h>
#include <string.h>

/* Code unit i of a wstring value, from its raw bytes. */
static uint32_t unit_at(const rl_msg_value *v, size_t i)
{
    const unsigned char *p = (const unsigned char *)v->v.s.ptr + i * v->v.s.wunit;
    uint32_t u = 0;
    for (unsigned b = 0; b < v->v.s.wunit; b++)
        u |= (uint32_t)p[v->v.s.wbig_endian ? b : v->v.s.wunit - 1 - b]
             << (8 * (v->v.s.wunit - 1 - b));
    return u;
}

static int fail_at(cdr_dec *d, size_t at, const char *what)
{
    d->pos = at;
    return cdr_fail(d, RL_EPARSE, what);
}

int cdr_read_wstring(cdr_dec *d, const rl_msg_type *ty, rl_msg_value *out)
{
    int rc = cdr_align(d, 4);
    if (rc < 0 || (rc = cdr_need(d, 4)) < 0)
        return rc;
    size_t at = d->pos; /* errors about the length name the length's offset */
    uint32_t n = cdr_ld32(d, d->buf + d->pos);
    d->pos += 4;
    unsigned unit = d->def->wstring_ros ? 4 : 2;
    char msg[128];
    if (unit == 2 && n % 2) {
        snprintf(msg, sizeof msg, "wstring length %u is odd (a byte count of 2-byte code units)", n);
        return fail_at(d, at, msg);
    }
    size_t units = unit == 2 ? n / 2 : n, left = d->end - d->pos;
    if (units > left / unit) {
        snprintf(msg, sizeof msg, "wstring of %zu code units exceeds the %zu bytes left", units, left);
        return fail_at(d, at, msg);
    }
    if (ty->bound && units > ty->bound) {
        snprintf(msg, sizeof msg, "wstring of %zu code units exceeds its bound %u", units, ty->bound);
        return fail_at(d, at, msg);
    }
    out->kind = RL_MSG_WSTRING;
    out->v.s.ptr = (const char *)d->buf + d->pos;
    out->v.s.len = units * unit;
    out->v.s.wunit = (unsigned char)unit;
    out->v.s.wbig_endian = d->be != 0;
    for (size_t i = 0; i < units; i++) {
        uint32_t u = unit_at(out, i);
        size_t where = d->pos + i * unit;
        if (u > 0xffff) {
            snprintf(msg, sizeof msg, "wstring code unit 0x%x is not a UTF-16 code unit", u);
            return fail_at(d, where, msg);
        }
        if (u >= 0xd800 && u <= 0xdbff) {
            uint32_t next = i + 1 < units ? unit_at(out, i + 1) : 0;
            if (next < 0xdc00 || next > 0xdfff) {
                snprintf(msg, sizeof msg, "wstring: high surrogate 0x%04x not followed by a low one", u);
                return fail_at(d, where, msg);
            }
            i++;
        } else if (u >= 0xdc00 && u <= 0xdfff) {
            snprintf(msg, sizeof msg, "wstring: low surrogate 0x%04x without a high one", u);
            return fail_at(d, where, msg);
        }
    }
    d->pos += units * unit;
    return RL_OK;
}

size_t cdr_wstring_utf8_chunk(const rl_msg_value *v, size_t *i, char *out, size_t cap)
{
    size_t units = v->v.s.wunit ? v->v.s.len / v->v.s.wunit : 0, n = 0;
    while (*i < units && n + 4 <= cap) {
        uint32_t cp = unit_at(v, *i), k = 1;
        if (cp >= 0xd800 && cp <= 0xdbff && *i + 1 < units) {
            uint32_t lo = unit_at(v, *i + 1);
            if (lo >= 0xdc00 && lo <= 0xdfff) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                k = 2;
            }
        }
        if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0xffff * (k == 2 ? 17u : 1u))
            cp = 0xfffd; /* not from a decoded payload: rl_msg_value filled by hand */
        *i += k;
        unsigned char *o = (unsigned char *)out + n;
        if (cp < 0x80) {
            o[0] = (unsigned char)cp;
            n += 1;
        } else if (cp < 0x800) {
            o[0] = (unsigned char)(0xc0 | cp >> 6);
            o[1] = (unsigned char)(0x80 | (cp & 0x3f));
            n += 2;
        } else if (cp < 0x10000) {
            o[0] = (unsigned char)(0xe0 | cp >> 12);
            o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
            o[2] = (unsigned char)(0x80 | (cp & 0x3f));
            n += 3;
        } else {
            o[0] = (unsigned char)(0xf0 | cp >> 18);
            o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
            o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
            o[3] = (unsigned char)(0x80 | (cp & 0x3f));
            n += 4;
        }
    }
    return n;
}

size_t rl_msg_wstring_utf8(const rl_msg_value *v, char *out, size_t cap)
{
    size_t total = 0, written = 0, full = 0;
    if (v && v->kind == RL_MSG_STRING) {
        total = v->v.s.len;
        written = cap ? (total < cap ? total : cap - 1) : 0;
        if (written)
            memcpy(out, v->v.s.ptr, written);
    } else if (v && v->kind == RL_MSG_WSTRING && (v->v.s.wunit == 2 || v->v.s.wunit == 4)) {
        char chunk[256];
        for (size_t i = 0, k; (k = cdr_wstring_utf8_chunk(v, &i, chunk, sizeof chunk)) > 0;) {
            if (!full && written + k < cap) {
                memcpy(out + written, chunk, k);
                written += k;
            } else {
                full = 1; /* stop at a whole chunk rather than leave a gap */
            }
            total += k;
        }
    }
    if (cap)
        out[written] = '\0';
    return total;
}
