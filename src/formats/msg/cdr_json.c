/* Canonical JSON of a decoded CDR message (rl_msg_to_json): a visitor of the decoder that
 * appends to a caller-kept buffer — exact 64-bit integers, shortest floats (float32 as
 * float32), "NaN"/"Infinity" strings, RFC 8259 string escapes, unions as {"_d": …}. */
#include "cdr_internal.h"

#include "core/text.h"
#include "runlab/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef cdr_json_out json_out;

int cdr_json_reserve(json_out *j, size_t n)
{
    if (j->oom)
        return RL_ENOMEM;
    if (j->len + n + 1 <= *j->cap)
        return RL_OK;
    size_t ncap = *j->cap ? *j->cap : 256;
    while (ncap < j->len + n + 1) {
        if (ncap > SIZE_MAX / 2) {
            j->oom = 1;
            return rl_error_set(RL_ENOMEM, "message JSON: too large");
        }
        ncap *= 2;
    }
    char *nb = realloc(*j->buf, ncap);
    if (!nb) {
        j->oom = 1;
        return rl_error_set(RL_ENOMEM, "message JSON: out of memory");
    }
    *j->buf = nb;
    *j->cap = ncap;
    return RL_OK;
}

static void put(json_out *j, const char *s, size_t n)
{
    if (cdr_json_reserve(j, n) == RL_OK) {
        memcpy(*j->buf + j->len, s, n);
        j->len += n;
    }
}

static void put_u64(json_out *j, uint64_t v, int neg)
{
    char tmp[24];
    size_t n = sizeof tmp;
    do {
        tmp[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (neg)
        tmp[--n] = '-';
    put(j, tmp + n, sizeof tmp - n);
}

static void put_i64(json_out *j, int64_t v)
{
    if (v < 0)
        put_u64(j, (uint64_t)0 - (uint64_t)v, 1);
    else
        put_u64(j, (uint64_t)v, 0);
}

static void put_float(json_out *j, double v, int is_f32)
{
    if (isnan(v)) {
        put(j, "\"NaN\"", 5);
        return;
    }
    if (isinf(v)) {
        if (v > 0)
            put(j, "\"Infinity\"", 10);
        else
            put(j, "\"-Infinity\"", 11);
        return;
    }
    if (cdr_json_reserve(j, 40) < 0)
        return;
    char *buf = *j->buf + j->len;
    /* number.c's formatters, as every other file runlab writes: '.' whatever the locale */
    size_t n = is_f32 ? rl_shortest_f32((float)v, buf) : rl_shortest_f64(v, buf);
    size_t k = 0;
    while (k < n && buf[k] != '.' && buf[k] != 'e')
        k++;
    if (k == n) { /* keep a float a float: 1 -> 1.0, -0 -> -0.0 */
        memcpy(buf + n, ".0", 3);
        n += 2;
    }
    j->len += n;
}

/* The characters of a string, escaped, without the quotes. */
static void put_string_body(json_out *j, const char *s, size_t n)
{
    if (cdr_json_reserve(j, n) < 0)
        return;
    size_t run = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            run++;
            continue;
        }
        put(j, s + i - run, run);
        run = 0;
        if (c < 0x80) {
            char esc[8];
            const char *e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                          : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
            if (!e) {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                e = esc;
            }
            put(j, e, strlen(e));
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = rl_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (k == 0) {
            put(j, "\xef\xbf\xbd", 3); /* U+FFFD for a byte that is not UTF-8 */
            i++;
        } else {
            put(j, s + i, k);
            i += k;
        }
    }
    put(j, s + n - run, run);
}

static void put_string(json_out *j, const char *s, size_t n)
{
    if (cdr_json_reserve(j, n + 2) < 0)
        return;
    put(j, "\"", 1);
    put_string_body(j, s, n);
    put(j, "\"", 1);
}

/* A wstring as a JSON string: its code units converted to UTF-8, then escaped. */
static void put_wstring(json_out *j, const rl_msg_value *v)
{
    char chunk[256];
    if (cdr_json_reserve(j, 2) < 0)
        return;
    put(j, "\"", 1);
    for (size_t i = 0, k; (k = cdr_wstring_utf8_chunk(v, &i, chunk, sizeof chunk)) > 0;)
        put_string_body(j, chunk, k);
    if (cdr_json_reserve(j, 1) == 0)
        put(j, "\"", 1);
}

void cdr_json_put_value(json_out *j, const rl_msg_value *v)
{
    switch (v->kind) {
    case RL_MSG_BOOL:
        if (v->v.b)
            put(j, "true", 4);
        else
            put(j, "false", 5);
        return;
    case RL_MSG_OCTET:
    case RL_MSG_CHAR:
    case RL_MSG_UINT8:
    case RL_MSG_UINT16:
    case RL_MSG_UINT32:
    case RL_MSG_UINT64:
        put_u64(j, v->v.u, 0);
        return;
    case RL_MSG_FLOAT32:
        put_float(j, v->v.f, 1);
        return;
    case RL_MSG_FLOAT64:
        put_float(j, v->v.f, 0);
        return;
    case RL_MSG_STRING:
        put_string(j, v->v.s.ptr, v->v.s.len);
        return;
    case RL_MSG_WSTRING:
        put_wstring(j, v);
        return;
    default:
        put_i64(j, v->v.i);
    }
}

/* All the elements of an array of primitives (RL_MSG_DECODE_ARRAYS), comma-separated: one
 * call instead of one per element. */
static int put_values(json_out *j, const rl_msg_visit *v)
{
    rl_msg_value x;
    for (size_t i = 0; i < v->count; i++) {
        if (i)
            put(j, ",", 1);
        rl_msg_values_get(v, i, &x);
        cdr_json_put_value(j, &x);
    }
    if (v->count)
        j->first[j->depth] = 0;
    return j->oom ? RL_ENOMEM : 0;
}

int cdr_json_visit(void *ctx, const rl_msg_visit *v)
{
    json_out *j = ctx;
    if (v->event == RL_MSG_VALUES)
        return put_values(j, v);
    if (v->event == RL_MSG_END_STRUCT || v->event == RL_MSG_END_ARRAY) {
        j->depth--;
        put(j, v->event == RL_MSG_END_STRUCT ? "}" : "]", 1);
        return j->oom ? RL_ENOMEM : 0;
    }
    if (j->depth > 0) {
        /* the separator and the key in one reservation, written in place */
        size_t name_len = v->name ? strlen(v->name) : 0;
        if (cdr_json_reserve(j, name_len + 4) < 0)
            return RL_ENOMEM;
        char *p = *j->buf + j->len;
        if (!j->first[j->depth])
            *p++ = ',';
        j->first[j->depth] = 0;
        if (v->name) {
            *p++ = '"';
            memcpy(p, v->name, name_len);
            p += name_len;
            *p++ = '"';
            *p++ = ':';
        }
        j->len = (size_t)(p - *j->buf);
    }
    switch (v->event) {
    case RL_MSG_BEGIN_STRUCT:
    case RL_MSG_BEGIN_ARRAY:
        if (j->depth + 1 >= CDR_JSON_MAX_DEPTH)
            return rl_error_set(RL_ERANGE, "message JSON: nested deeper than %d levels", CDR_JSON_MAX_DEPTH);
        j->depth++;
        j->first[j->depth] = 1;
        put(j, v->event == RL_MSG_BEGIN_STRUCT ? "{" : "[", 1);
        break;
    case RL_MSG_ABSENT:
        put(j, "null", 4);
        break;
    default:
        cdr_json_put_value(j, &v->value);
    }
    return j->oom ? RL_ENOMEM : 0;
}

int rl_msg_to_json(const rl_msgdef *def, const uint8_t *data, size_t len, char **buf,
                   size_t *cap, size_t *out_len)
{
    if (!buf || !cap)
        return rl_error_set(RL_EINVAL, "message JSON: NULL buffer");
    json_out j = {.buf = buf, .cap = cap};
    int rc = rl_msg_decode_flags(def, data, len, RL_MSG_DECODE_ARRAYS, cdr_json_visit, &j);
    if (rc == RL_OK && cdr_json_reserve(&j, 0) == RL_OK)
        (*buf)[j.len] = '\0';
    else if (rc == RL_OK)
        rc = RL_ENOMEM;
    if (out_len)
        *out_len = rc == RL_OK ? j.len : 0;
    return rc < 0 ? rc : RL_OK;
}
