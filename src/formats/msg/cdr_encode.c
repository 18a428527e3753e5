/* The CDR encoder (rl_msg_encode_json): a JSON value in the canonical form of
 * rl_msg_to_json, written as CDR by the message type model — XCDR1 or XCDR2, either byte
 * order, DHEADERs, EMHEADERs (length code 4 with NEXTINT) and XCDR1 parameter lists. */
#include "msgdef_internal.h"

#include "core/text.h"

#include "runlab/error.h"
#include "runlab/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ENC_MAX_DEPTH = 100, ENC_PATH_MAX = 512 };

typedef struct enc {
    const rl_msgdef *def;
    uint8_t *buf;
    size_t len, cap, origin;
    int be, v2, oom;
    rl_msg_ext top_ext;
    int depth;
    size_t plen;
    char path[ENC_PATH_MAX];
} enc;

static int efail(enc *e, const char *what)
{
    return rl_error_set(RL_EINVAL, "field '%s': %s", e->plen ? e->path : "(root)", what);
}

static int reserve(enc *e, size_t n)
{
    if (e->len + n <= e->cap)
        return RL_OK;
    size_t ncap = e->cap ? e->cap : 256;
    while (ncap < e->len + n) {
        if (ncap > SIZE_MAX / 4)
            return rl_error_set(RL_ENOMEM, "cdr encoder: message too large");
        ncap *= 2;
    }
    uint8_t *nb = realloc(e->buf, ncap);
    if (!nb)
        return rl_error_set(RL_ENOMEM, "cdr encoder: out of memory");
    e->buf = nb;
    e->cap = ncap;
    return RL_OK;
}

static int pad(enc *e, size_t n)
{
    if (e->v2 && n > 4)
        n = 4;
    size_t k = (n - (e->len - e->origin) % n) % n;
    int rc = k ? reserve(e, k) : RL_OK;
    if (rc == RL_OK && k) {
        memset(e->buf + e->len, 0, k);
        e->len += k;
    }
    return rc;
}

static void store(enc *e, size_t at, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        e->buf[at + (e->be ? n - 1 - i : i)] = (uint8_t)(v >> (8 * i));
}

static int put(enc *e, uint64_t v, size_t n)
{
    int rc = pad(e, n);
    if (rc == RL_OK && (rc = reserve(e, n)) == RL_OK) {
        store(e, e->len, v, n);
        e->len += n;
    }
    return rc;
}

/* A uint32 to fill in later (DHEADER, NEXTINT); returns its offset. */
static int placeholder(enc *e, size_t *at)
{
    int rc = pad(e, 4);
    *at = e->len;
    return rc == RL_OK ? put(e, 0, 4) : rc;
}

static size_t push_name(enc *e, const char *name)
{
    size_t saved = e->plen;
    int w = snprintf(e->path + e->plen, sizeof e->path - e->plen, "%s%s", e->plen ? "." : "", name);
    if (w > 0 && (size_t)w < sizeof e->path - e->plen)
        e->plen += (size_t)w;
    e->path[e->plen] = '\0';
    return saved;
}

static size_t push_index(enc *e, size_t i)
{
    size_t saved = e->plen;
    int w = snprintf(e->path + e->plen, sizeof e->path - e->plen, "[%zu]", i);
    if (w > 0 && (size_t)w < sizeof e->path - e->plen)
        e->plen += (size_t)w;
    e->path[e->plen] = '\0';
    return saved;
}

static void pop(enc *e, size_t saved)
{
    e->plen = saved;
    e->path[saved] = '\0';
}

static rl_msg_ext ext_of(const enc *e, const rl_msg_type *t)
{
    return t->ext != RL_MSG_EXT_DEFAULT ? t->ext : e->top_ext;
}

static int get_int(enc *e, json_object *v, const rl_msg_type *t, int64_t lo, uint64_t hi, uint64_t *out)
{
    if (json_object_is_type(v, json_type_boolean)) {
        *out = (uint64_t)json_object_get_boolean(v);
        return RL_OK;
    }
    if (json_object_is_type(v, json_type_string) && t && t->kind == RL_MSG_ENUM) {
        const char *s = json_object_get_string(v);
        for (size_t i = 0; i < t->nmembers; i++)
            if (strcmp(t->members[i].name, s) == 0) {
                *out = (uint64_t)t->members[i].value;
                return RL_OK;
            }
        return efail(e, "not an enumerator of the field's enum");
    }
    if (!json_object_is_type(v, json_type_int))
        return efail(e, "expected an integer");
    int64_t i = json_object_get_int64(v);
    if (i == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX) {
        uint64_t u = json_object_get_uint64(v);
        if (u > hi)
            return efail(e, "integer out of the field's range");
        *out = u;
        return RL_OK;
    }
    if (i < lo || (i > 0 && (uint64_t)i > hi))
        return efail(e, "integer out of the field's range");
    *out = (uint64_t)i;
    return RL_OK;
}

static int enc_float(enc *e, json_object *v, double *out)
{
    if (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) {
        *out = json_object_get_double(v);
        return RL_OK;
    }
    if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        if (strcmp(s, "NaN") == 0)
            *out = NAN;
        else if (strcmp(s, "Infinity") == 0)
            *out = INFINITY;
        else if (strcmp(s, "-Infinity") == 0)
            *out = -INFINITY;
        else
            return efail(e, "expected a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
        return RL_OK;
    }
    return efail(e, "expected a number");
}


/* A wstring from UTF-8 text, in the layout the schema's world uses (cdr_wstring.c):
 * XTypes (omgidl) a byte count and 2-byte UTF-16 code units, ROS 2 (ros2msg) a count of
 * code units each in 4 bytes; no NUL. */
static int enc_wstring(enc *e, const rl_msg_type *t, json_object *v)
{
    if (!json_object_is_type(v, json_type_string))
        return efail(e, "expected a string");
    const unsigned char *s = (const unsigned char *)json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v), units = 0;
    for (size_t i = 0, k; i < n; i += k) {
        uint32_t cp;
        if ((k = rl_utf8_decode(s + i, n - i, &cp)) == 0)
            return efail(e, "a wstring must be valid UTF-8");
        units += cp >= 0x10000 ? 2 : 1;
    }
    if (t->bound && units > t->bound)
        return efail(e, "wstring longer than its bound");
    size_t unit = e->def->wstring_ros ? 4 : 2;
    if (units > UINT32_MAX / 2)
        return efail(e, "wstring too long");
    int rc = put(e, unit == 2 ? units * 2 : units, 4);
    for (size_t i = 0, k; i < n && rc == RL_OK; i += k) {
        uint32_t cp;
        k = rl_utf8_decode(s + i, n - i, &cp);
        if (cp >= 0x10000) {
            rc = put(e, 0xd800 + ((cp - 0x10000) >> 10), unit);
            cp = 0xdc00 + ((cp - 0x10000) & 0x3ff);
        }
        if (rc == RL_OK)
            rc = put(e, cp, unit);
    }
    return rc;
}

static int enc_leaf(enc *e, const rl_msg_type *t, json_object *v)
{
    uint64_t u = 0;
    int rc;
    switch (t->kind) {
    case RL_MSG_BOOL:
        if (!json_object_is_type(v, json_type_boolean) && !json_object_is_type(v, json_type_int))
            return efail(e, "expected true or false");
        return put(e, json_object_get_boolean(v) ? 1 : 0, 1);
    case RL_MSG_OCTET:
    case RL_MSG_CHAR:
    case RL_MSG_UINT8:
        return (rc = get_int(e, v, NULL, 0, UINT8_MAX, &u)) < 0 ? rc : put(e, u, 1);
    case RL_MSG_INT8:
        return (rc = get_int(e, v, NULL, INT8_MIN, INT8_MAX, &u)) < 0 ? rc : put(e, u, 1);
    case RL_MSG_INT16:
        return (rc = get_int(e, v, NULL, INT16_MIN, INT16_MAX, &u)) < 0 ? rc : put(e, u, 2);
    case RL_MSG_UINT16:
        return (rc = get_int(e, v, NULL, 0, UINT16_MAX, &u)) < 0 ? rc : put(e, u, 2);
    case RL_MSG_INT32:
        return (rc = get_int(e, v, NULL, INT32_MIN, INT32_MAX, &u)) < 0 ? rc : put(e, u, 4);
    case RL_MSG_ENUM:
        return (rc = get_int(e, v, t, INT32_MIN, UINT32_MAX, &u)) < 0 ? rc : put(e, u, 4);
    case RL_MSG_UINT32:
        return (rc = get_int(e, v, NULL, 0, UINT32_MAX, &u)) < 0 ? rc : put(e, u, 4);
    case RL_MSG_INT64:
        return (rc = get_int(e, v, NULL, INT64_MIN, INT64_MAX, &u)) < 0 ? rc : put(e, u, 8);
    case RL_MSG_UINT64:
        return (rc = get_int(e, v, NULL, 0, UINT64_MAX, &u)) < 0 ? rc : put(e, u, 8);
    case RL_MSG_FLOAT32:
    case RL_MSG_FLOAT64: {
        double d = 0;
        if ((rc = enc_float(e, v, &d)) < 0)
            return rc;
        if (t->kind == RL_MSG_FLOAT32) {
            float f = (float)d;
            uint32_t bits;
            memcpy(&bits, &f, 4);
            return put(e, bits, 4);
        }
        uint64_t bits;
        memcpy(&bits, &d, 8);
        return put(e, bits, 8);
    }
    case RL_MSG_STRING: {
        if (!json_object_is_type(v, json_type_string))
            return efail(e, "expected a string");
        size_t n = (size_t)json_object_get_string_len(v);
        if (t->bound && n > t->bound)
            return efail(e, "string longer than its bound");
        if (n >= UINT32_MAX)
            return efail(e, "string too long");
        if ((rc = put(e, n + 1, 4)) < 0 || (rc = reserve(e, n + 1)) < 0)
            return rc;
        memcpy(e->buf + e->len, json_object_get_string(v), n);
        e->buf[e->len + n] = 0;
        e->len += n + 1;
        return RL_OK;
    }
    default:
        return enc_wstring(e, t, v);
    }
}

static int enc_value(enc *e, uint32_t t, json_object *v);

static int enc_member_value(enc *e, const rl_msg_member *m, json_object *v)
{
    size_t saved = push_name(e, m->name);
    int rc = enc_value(e, m->type, v);
    pop(e, saved);
    return rc;
}

static int enc_struct(enc *e, const rl_msg_type *ty, json_object *v)
{
    if (!json_object_is_type(v, json_type_object))
        return efail(e, "expected an object");
    rl_msg_ext ext = ext_of(e, ty);
    size_t dh = 0;
    int rc = RL_OK;
    if (e->v2 && ext != RL_MSG_EXT_FINAL && (rc = placeholder(e, &dh)) < 0)
        return rc;
    for (size_t i = 0; i < ty->nmembers && rc == RL_OK; i++) {
        const rl_msg_member *m = &ty->members[i];
        if (m->hidden) {
            rc = put(e, 0, 1);
            continue;
        }
        json_object *mv = NULL;
        int has = json_object_object_get_ex(v, m->name, &mv) && mv;
        if (!has && !m->optional) {
            size_t saved = push_name(e, m->name);
            rc = efail(e, "missing member");
            pop(e, saved);
            break;
        }
        if (ext == RL_MSG_EXT_MUTABLE) {
            if (!has)
                continue;
            if (e->v2) { /* EMHEADER with length code 4: NEXTINT = the member's size */
                size_t nx;
                if ((rc = put(e, (uint64_t)4 << 28 | m->id, 4)) < 0 || (rc = placeholder(e, &nx)) < 0 ||
                    (rc = enc_member_value(e, m, mv)) < 0)
                    break;
                store(e, nx, e->len - nx - 4, 4);
            } else { /* parameter header, extended for large ids */
                if ((rc = pad(e, 4)) < 0)
                    break;
                size_t hdr = e->len, origin = e->origin;
                int ext_pid = m->id >= 0x3f00;
                if ((rc = put(e, ext_pid ? 0x3f01 : m->id, 2)) < 0 || (rc = put(e, ext_pid ? 8 : 0, 2)) < 0)
                    break;
                if (ext_pid && ((rc = put(e, m->id, 4)) < 0 || (rc = put(e, 0, 4)) < 0))
                    break;
                size_t start = e->len;
                e->origin = start;
                rc = enc_member_value(e, m, mv);
                e->origin = origin;
                if (rc < 0)
                    break;
                size_t n = e->len - start;
                if (!ext_pid && n > UINT16_MAX) {
                    rc = efail(e, "member longer than a parameter header can say");
                    break;
                }
                if (ext_pid)
                    store(e, hdr + 8, n, 4);
                else
                    store(e, hdr + 2, n, 2);
            }
            continue;
        }
        if (m->optional && e->v2) {
            if ((rc = put(e, has ? 1 : 0, 1)) == RL_OK && has)
                rc = enc_member_value(e, m, mv);
        } else if (m->optional) {
            size_t hdr, origin = e->origin;
            if ((rc = pad(e, 4)) < 0)
                break;
            hdr = e->len;
            if ((rc = put(e, m->id < 0x3f00 ? m->id : 0, 2)) < 0 || (rc = put(e, 0, 2)) < 0 || !has)
                continue;
            size_t start = e->len;
            e->origin = start;
            rc = enc_member_value(e, m, mv);
            e->origin = origin;
            if (rc == RL_OK && e->len - start > UINT16_MAX)
                rc = efail(e, "optional member too long");
            if (rc == RL_OK)
                store(e, hdr + 2, e->len - start, 2);
        } else {
            rc = enc_member_value(e, m, mv);
        }
    }
    if (rc == RL_OK && ext == RL_MSG_EXT_MUTABLE && !e->v2 && (rc = pad(e, 4)) == RL_OK)
        rc = put(e, 0x3f02, 2) == RL_OK ? put(e, 0, 2) : RL_ENOMEM;
    if (rc == RL_OK && e->v2 && ext != RL_MSG_EXT_FINAL)
        store(e, dh, e->len - dh - 4, 4);
    return rc;
}

static int enc_union(enc *e, const rl_msg_type *ty, json_object *v)
{
    if (!json_object_is_type(v, json_type_object))
        return efail(e, "expected an object with \"_d\"");
    json_object *d = NULL;
    if (!json_object_object_get_ex(v, "_d", &d) || !d)
        return efail(e, "union without \"_d\"");
    size_t dh = 0;
    int rc = RL_OK;
    if (e->v2 && ext_of(e, ty) != RL_MSG_EXT_FINAL && (rc = placeholder(e, &dh)) < 0)
        return rc;
    size_t saved = push_name(e, "_d");
    const rl_msg_type *dt = &e->def->types[ty->elem];
    rc = enc_leaf(e, dt, d);
    pop(e, saved);
    if (rc < 0)
        return rc;
    int64_t disc;
    if (dt->kind == RL_MSG_ENUM && json_object_is_type(d, json_type_string)) {
        uint64_t u = 0;
        get_int(e, d, dt, INT32_MIN, UINT32_MAX, &u);
        disc = (int32_t)u;
    } else {
        disc = json_object_get_int64(d);
    }
    const rl_msg_member *c = NULL, *def = NULL;
    for (size_t i = 0; i < ty->nmembers && !c; i++) {
        for (size_t l = 0; l < ty->members[i].nlabels; l++)
            if (ty->members[i].labels[l] == disc)
                c = &ty->members[i];
        if (ty->members[i].is_default_case)
            def = &ty->members[i];
    }
    if (!c)
        c = def;
    if (c) {
        json_object *mv = NULL;
        if (!json_object_object_get_ex(v, c->name, &mv) || !mv) {
            saved = push_name(e, c->name);
            rc = efail(e, "missing the member the discriminator selects");
            pop(e, saved);
            return rc;
        }
        if ((rc = enc_member_value(e, c, mv)) < 0)
            return rc;
    }
    if (e->v2 && ext_of(e, ty) != RL_MSG_EXT_FINAL)
        store(e, dh, e->len - dh - 4, 4);
    return RL_OK;
}

static uint32_t innermost(const rl_msgdef *def, uint32_t t)
{
    const rl_msg_type *ty = &def->types[t];
    while (ty->kind == RL_MSG_ARRAY && def->types[ty->elem].inner_dim)
        ty = &def->types[ty->elem];
    return ty->elem;
}

static int enc_array(enc *e, uint32_t t, const rl_msg_type *ty, json_object *v)
{
    if (!json_object_is_type(v, json_type_array))
        return efail(e, "expected an array");
    size_t n = json_object_array_length(v);
    if (ty->kind == RL_MSG_ARRAY && n != ty->bound) {
        char msg[96];
        snprintf(msg, sizeof msg, "array of %zu elements, the field has %u", n, ty->bound);
        return efail(e, msg);
    }
    if (ty->kind == RL_MSG_SEQUENCE && ((ty->bound && n > ty->bound) || n > UINT32_MAX))
        return efail(e, "sequence longer than its bound");
    size_t dh = 0;
    int rc = RL_OK;
    int dheader = e->v2 && !ty->inner_dim && !msgdef_prim_size(e->def->types[innermost(e->def, t)].kind);
    if (dheader && (rc = placeholder(e, &dh)) < 0)
        return rc;
    if (ty->kind == RL_MSG_SEQUENCE && (rc = put(e, n, 4)) < 0)
        return rc;
    for (size_t i = 0; i < n && rc == RL_OK; i++) {
        size_t saved = push_index(e, i);
        rc = enc_value(e, ty->elem, json_object_array_get_idx(v, i));
        pop(e, saved);
    }
    if (rc == RL_OK && dheader)
        store(e, dh, e->len - dh - 4, 4);
    return rc;
}

static int enc_value(enc *e, uint32_t t, json_object *v)
{
    const rl_msg_type *ty = &e->def->types[t];
    if (!v)
        return efail(e, "null where a value is needed");
    if (++e->depth > ENC_MAX_DEPTH)
        return efail(e, "nested deeper than 100 levels");
    int rc;
    switch (ty->kind) {
    case RL_MSG_STRUCT:
        rc = enc_struct(e, ty, v);
        break;
    case RL_MSG_UNION:
        rc = enc_union(e, ty, v);
        break;
    case RL_MSG_ARRAY:
    case RL_MSG_SEQUENCE:
        rc = enc_array(e, t, ty, v);
        break;
    default:
        rc = enc_leaf(e, ty, v);
    }
    e->depth--;
    return rc;
}

int rl_msg_encode_json(const rl_msgdef *def, struct json_object *value, int kind, uint8_t **out,
                       size_t *len)
{
    if (!def || !out || !len)
        return rl_error_set(RL_EINVAL, "cdr encoder: NULL argument");
    *out = NULL;
    *len = 0;
    static const rl_msg_ext exts[12] = {RL_MSG_EXT_FINAL, RL_MSG_EXT_FINAL, RL_MSG_EXT_MUTABLE,
                                        RL_MSG_EXT_MUTABLE, 0, 0, RL_MSG_EXT_FINAL, RL_MSG_EXT_FINAL,
                                        RL_MSG_EXT_APPENDABLE, RL_MSG_EXT_APPENDABLE,
                                        RL_MSG_EXT_MUTABLE, RL_MSG_EXT_MUTABLE};
    if (kind < 0 || kind > 11 || exts[kind] == 0)
        return rl_error_set(RL_EINVAL, "cdr encoder: unknown encapsulation kind %d", kind);
    enc e = {.def = def, .be = (kind & 1) == 0, .v2 = kind >= 6, .top_ext = exts[kind], .origin = 4};
    int rc = put(&e, (uint64_t)kind, 2);
    if (rc == RL_OK)
        rc = put(&e, 0, 2);
    if (rc == RL_OK) {
        e.buf[0] = 0; /* the header is big-endian whatever the payload's order */
        e.buf[1] = (uint8_t)kind;
        rc = enc_value(&e, def->root, value);
    }
    /* pad to a multiple of 4 and say so in the options, as DDS writers do */
    size_t tail = (4 - e.len % 4) % 4;
    if (rc == RL_OK && (rc = reserve(&e, tail)) == RL_OK) {
        memset(e.buf + e.len, 0, tail);
        e.len += tail;
        e.buf[3] = (uint8_t)tail;
    }
    if (rc < 0) {
        free(e.buf);
        return rc;
    }
    *out = e.buf;
    *len = e.len;
    return RL_OK;
}

int rl_msg_encode_json_text(const rl_msgdef *def, const char *json, size_t json_len, int kind,
                            uint8_t **out, size_t *len)
{
    json_object *v = NULL;
    int rc = rl_json_parse(json, json_len, "message", &v);
    if (rc < 0)
        return rc;
    if (!v)
        return rl_error_set(RL_EINVAL, "message: null is not a message");
    rc = rl_msg_encode_json(def, v, kind, out, len);
    json_object_put(v);
    return rc;
}
