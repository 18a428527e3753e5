/* The streaming JSON writer behind runlab/json.h: emits to a FILE* or a growing buffer,
 * checks nesting as it goes, and turns any byte string into valid JSON (escapes, U+FFFD
 * for invalid UTF-8). Also home of the strict UTF-8 decoder and the shortest round-trip
 * double formatting that the JSON and YAML modules share. */
#include "json_internal.h"
#include "runlab/number.h"

#include "runlab/error.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Shared helpers ----------------------------------------------------------------- */


size_t rl_format_double(double v, char *buf)
{
    size_t n = rl_format_f64(v, buf, RL_DOUBLE_BUF);
    /* JSON and YAML readers type "1" as an integer: keep a double a double. */
    if (!strpbrk(buf, ".eEn") && n + 2 < RL_DOUBLE_BUF) {
        memcpy(buf + n, ".0", 3);
        n += 2;
    }
    return n;
}

/* ---- Writer --------------------------------------------------------------------------- */

enum { FRAME_OBJECT = 1, FRAME_ARRAY = 2 };

struct frame {
    int kind;
    bool key_pending; /* object: a key was written and its value is due */
    size_t count;     /* members or elements written so far */
};

struct rl_json_writer {
    FILE *file;
    char *buf;
    size_t len, cap;
    int style;
    struct frame *stack;
    size_t depth, stack_cap;
    bool root_done;
    bool failed; /* an I/O or memory error happened; the output is incomplete */
};

static int writer_new(rl_json_writer **out, FILE *file, int style)
{
    if (!out)
        return rl_error_set(RL_EINVAL, "json writer: NULL output pointer");
    *out = NULL;
    if (style != RL_JSON_COMPACT && style != RL_JSON_PRETTY)
        return rl_error_set(RL_EINVAL, "json writer: unknown style %d", style);
    rl_json_writer *w = calloc(1, sizeof *w);
    if (!w)
        return rl_error_set(RL_ENOMEM, "json writer: out of memory");
    w->file = file;
    w->style = style;
    *out = w;
    return RL_OK;
}

int rl_json_writer_new_file(rl_json_writer **out, FILE *file, int style)
{
    if (!file)
        return rl_error_set(RL_EINVAL, "json writer: NULL file");
    return writer_new(out, file, style);
}

int rl_json_writer_new_buffer(rl_json_writer **out, int style)
{
    return writer_new(out, NULL, style);
}

void rl_json_writer_free(rl_json_writer *w)
{
    if (!w)
        return;
    free(w->buf);
    free(w->stack);
    free(w);
}

static int put(rl_json_writer *w, const char *data, size_t n)
{
    if (n == 0)
        return RL_OK;
    if (w->file) {
        if (fwrite(data, 1, n, w->file) != n) {
            w->failed = true;
            return rl_error_set_errno(RL_EIO, errno, "json writer: write failed");
        }
        return RL_OK;
    }
    if (n >= SIZE_MAX - w->len) {
        w->failed = true;
        return rl_error_set(RL_ERANGE, "json writer: output too large");
    }
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n + 1)
            cap = cap > SIZE_MAX / 2 ? w->len + n + 1 : cap * 2;
        char *nb = realloc(w->buf, cap);
        if (!nb) {
            w->failed = true;
            return rl_error_set(RL_ENOMEM, "json writer: cannot grow buffer to %zu bytes", cap);
        }
        w->buf = nb;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, data, n);
    w->len += n;
    w->buf[w->len] = '\0';
    return RL_OK;
}

static int put_str(rl_json_writer *w, const char *s) { return put(w, s, strlen(s)); }

static int newline_indent(rl_json_writer *w, size_t level)
{
    static const char spaces[] = "                                ";
    int rc = put(w, "\n", 1);
    size_t n = level * 2;
    while (rc == RL_OK && n > 0) {
        size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
        rc = put(w, spaces, k);
        n -= k;
    }
    return rc;
}

static int check_usable(rl_json_writer *w)
{
    if (!w)
        return rl_error_set(RL_EINVAL, "json writer: NULL writer");
    if (w->failed)
        return rl_error_set(RL_ESTATE, "json writer: an earlier write failed");
    return RL_OK;
}

/* Everything that precedes a value: state checks, the comma and the indentation. */
static int before_value(rl_json_writer *w, const char *what)
{
    int rc = check_usable(w);
    if (rc != RL_OK)
        return rc;
    if (w->depth == 0) {
        if (w->root_done)
            return rl_error_set(RL_ESTATE, "json writer: %s after the complete top-level value",
                                what);
        return RL_OK;
    }
    struct frame *f = &w->stack[w->depth - 1];
    if (f->kind == FRAME_OBJECT) {
        if (!f->key_pending)
            return rl_error_set(RL_ESTATE, "json writer: %s inside an object where a key is due",
                                what);
        f->key_pending = false;
        return RL_OK;
    }
    if (f->count > 0 && (rc = put(w, ",", 1)) != RL_OK)
        return rc;
    f->count++;
    if (w->style == RL_JSON_PRETTY)
        return newline_indent(w, w->depth);
    return RL_OK;
}

static void after_value(rl_json_writer *w)
{
    if (w->depth == 0)
        w->root_done = true;
}

static int begin(rl_json_writer *w, int kind)
{
    int rc = before_value(w, kind == FRAME_OBJECT ? "begin_object" : "begin_array");
    if (rc != RL_OK)
        return rc;
    if (w->depth == w->stack_cap) {
        size_t cap = w->stack_cap ? w->stack_cap * 2 : 16;
        struct frame *ns = realloc(w->stack, cap * sizeof *ns);
        if (!ns) {
            w->failed = true;
            return rl_error_set(RL_ENOMEM, "json writer: out of memory for nesting");
        }
        w->stack = ns;
        w->stack_cap = cap;
    }
    w->stack[w->depth++] = (struct frame){.kind = kind};
    return put(w, kind == FRAME_OBJECT ? "{" : "[", 1);
}

static int end(rl_json_writer *w, int kind)
{
    const char *what = kind == FRAME_OBJECT ? "end_object" : "end_array";
    int rc = check_usable(w);
    if (rc != RL_OK)
        return rc;
    if (w->depth == 0)
        return rl_error_set(RL_ESTATE, "json writer: %s with nothing open", what);
    struct frame *f = &w->stack[w->depth - 1];
    if (f->kind != kind)
        return rl_error_set(RL_ESTATE, "json writer: %s inside an %s", what,
                            f->kind == FRAME_OBJECT ? "object" : "array");
    if (f->key_pending)
        return rl_error_set(RL_ESTATE, "json writer: end_object after a key without a value");
    size_t count = f->count;
    w->depth--;
    if (count > 0 && w->style == RL_JSON_PRETTY && (rc = newline_indent(w, w->depth)) != RL_OK)
        return rc;
    if ((rc = put(w, kind == FRAME_OBJECT ? "}" : "]", 1)) != RL_OK)
        return rc;
    after_value(w);
    return RL_OK;
}

int rl_json_begin_object(rl_json_writer *w) { return begin(w, FRAME_OBJECT); }
int rl_json_end_object(rl_json_writer *w) { return end(w, FRAME_OBJECT); }
int rl_json_begin_array(rl_json_writer *w) { return begin(w, FRAME_ARRAY); }
int rl_json_end_array(rl_json_writer *w) { return end(w, FRAME_ARRAY); }

/* The quoted, escaped form of a byte string. Runs of bytes that pass unchanged are
 * written in one piece. */
static int put_quoted(rl_json_writer *w, const char *bytes, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)bytes;
    int rc = put(w, "\"", 1);
    size_t run = 0; /* start of the pending unchanged run */
    size_t i = 0;
    while (rc == RL_OK && i < len) {
        unsigned char c = s[i];
        char esc[8];
        const char *rep = NULL;
        size_t rep_len = 2, adv = 1;
        if (c == '"')
            rep = "\\\"";
        else if (c == '\\')
            rep = "\\\\";
        else if (c == '\b')
            rep = "\\b";
        else if (c == '\f')
            rep = "\\f";
        else if (c == '\n')
            rep = "\\n";
        else if (c == '\r')
            rep = "\\r";
        else if (c == '\t')
            rep = "\\t";
        else if (c < 0x20) {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            rep = esc;
            rep_len = 6;
        } else if (c >= 0x80) {
            uint32_t cp;
            adv = rl_utf8_decode(s + i, len - i, &cp);
            if (adv == 0) {
                rep = "\xEF\xBF\xBD"; /* U+FFFD REPLACEMENT CHARACTER */
                rep_len = 3;
                adv = 1;
            }
        }
        if (rep) {
            rc = put(w, bytes + run, i - run);
            if (rc == RL_OK)
                rc = put(w, rep, rep_len);
            run = i + adv;
        }
        i += adv;
    }
    if (rc == RL_OK)
        rc = put(w, bytes + run, len - run);
    if (rc == RL_OK)
        rc = put(w, "\"", 1);
    return rc;
}

int rl_json_key(rl_json_writer *w, const char *key)
{
    int rc = check_usable(w);
    if (rc != RL_OK)
        return rc;
    if (!key)
        return rl_error_set(RL_EINVAL, "json writer: NULL key");
    if (w->depth == 0 || w->stack[w->depth - 1].kind != FRAME_OBJECT)
        return rl_error_set(RL_ESTATE, "json writer: key '%s' outside an object", key);
    struct frame *f = &w->stack[w->depth - 1];
    if (f->key_pending)
        return rl_error_set(RL_ESTATE, "json writer: key '%s' where a value is due", key);
    if (f->count > 0 && (rc = put(w, ",", 1)) != RL_OK)
        return rc;
    if (w->style == RL_JSON_PRETTY && (rc = newline_indent(w, w->depth)) != RL_OK)
        return rc;
    if ((rc = put_quoted(w, key, strlen(key))) != RL_OK)
        return rc;
    if ((rc = put_str(w, w->style == RL_JSON_PRETTY ? ": " : ":")) != RL_OK)
        return rc;
    f->count++;
    f->key_pending = true;
    return RL_OK;
}

static int scalar(rl_json_writer *w, const char *what, const char *text, size_t len)
{
    int rc = before_value(w, what);
    if (rc == RL_OK)
        rc = put(w, text, len);
    if (rc == RL_OK)
        after_value(w);
    return rc;
}

int rl_json_string_n(rl_json_writer *w, const char *bytes, size_t len)
{
    if (!bytes && len > 0)
        return rl_error_set(RL_EINVAL, "json writer: NULL string");
    int rc = before_value(w, "string");
    if (rc == RL_OK)
        rc = put_quoted(w, bytes ? bytes : "", len);
    if (rc == RL_OK)
        after_value(w);
    return rc;
}

int rl_json_string(rl_json_writer *w, const char *s)
{
    if (!s)
        return rl_error_set(RL_EINVAL, "json writer: NULL string");
    return rl_json_string_n(w, s, strlen(s));
}

int rl_json_int64(rl_json_writer *w, int64_t v)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%" PRId64, v);
    return scalar(w, "integer", buf, (size_t)n);
}

int rl_json_uint64(rl_json_writer *w, uint64_t v)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%" PRIu64, v);
    return scalar(w, "integer", buf, (size_t)n);
}

int rl_json_double(rl_json_writer *w, double v)
{
    if (!isfinite(v))
        return scalar(w, "number", "null", 4);
    char buf[RL_DOUBLE_BUF];
    size_t n = rl_format_double(v, buf);
    return scalar(w, "number", buf, n);
}

int rl_json_bool(rl_json_writer *w, bool v)
{
    return v ? scalar(w, "boolean", "true", 4) : scalar(w, "boolean", "false", 5);
}

int rl_json_null(rl_json_writer *w) { return scalar(w, "null", "null", 4); }

int rl_json_raw(rl_json_writer *w, const char *json, size_t len)
{
    if (!json || len == 0)
        return rl_error_set(RL_EINVAL, "json writer: empty raw value");
    return scalar(w, "value", json, len);
}

/* Far deeper than any real document; stops a json-c value that contains itself. */
enum { VALUE_MAX_DEPTH = 1000 };

static int write_value(rl_json_writer *w, json_object *v, int depth)
{
    if (depth > VALUE_MAX_DEPTH)
        return rl_error_set(RL_ERANGE, "json writer: value nested deeper than %d levels",
                            VALUE_MAX_DEPTH);
    int rc;
    switch (json_object_get_type(v)) {
    case json_type_null:
        return rl_json_null(w);
    case json_type_boolean:
        return rl_json_bool(w, json_object_get_boolean(v));
    case json_type_double:
        return rl_json_double(w, json_object_get_double(v));
    case json_type_int: {
        /* json-c keeps integers above INT64_MAX as uint64 and clamps them in
         * json_object_get_int64. */
        int64_t i = json_object_get_int64(v);
        if (i == INT64_MAX)
            return rl_json_uint64(w, json_object_get_uint64(v));
        return rl_json_int64(w, i);
    }
    case json_type_string:
        return rl_json_string_n(w, json_object_get_string(v),
                                (size_t)json_object_get_string_len(v));
    case json_type_array: {
        if ((rc = rl_json_begin_array(w)) != RL_OK)
            return rc;
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++)
            if ((rc = write_value(w, json_object_array_get_idx(v, i), depth + 1)) != RL_OK)
                return rc;
        return rl_json_end_array(w);
    }
    case json_type_object: {
        if ((rc = rl_json_begin_object(w)) != RL_OK)
            return rc;
        json_object_object_foreach(v, key, child)
        {
            if ((rc = rl_json_key(w, key)) != RL_OK)
                return rc;
            if ((rc = write_value(w, child, depth + 1)) != RL_OK)
                return rc;
        }
        return rl_json_end_object(w);
    }
    }
    return rl_error_set(RL_EINVAL, "json writer: unknown json-c type");
}

int rl_json_value(rl_json_writer *w, json_object *value)
{
    int rc = check_usable(w);
    if (rc != RL_OK)
        return rc;
    return write_value(w, value, 0);
}

int rl_json_writer_finish(rl_json_writer *w)
{
    int rc = check_usable(w);
    if (rc != RL_OK)
        return rc;
    if (w->depth > 0)
        return rl_error_set(RL_ESTATE, "json writer: finish with %zu unclosed %s", w->depth,
                            w->depth == 1 ? "container" : "containers");
    if (!w->root_done)
        return rl_error_set(RL_ESTATE, "json writer: finish before any value was written");
    if (w->file) {
        if ((rc = put(w, "\n", 1)) != RL_OK)
            return rc;
        if (fflush(w->file) != 0) {
            w->failed = true;
            return rl_error_set_errno(RL_EIO, errno, "json writer: flush failed");
        }
    }
    return RL_OK;
}

const char *rl_json_writer_buffer(rl_json_writer *w, size_t *len)
{
    if (len)
        *len = w && w->buf ? w->len : 0;
    return w && w->buf ? w->buf : "";
}

char *rl_json_writer_take_buffer(rl_json_writer *w, size_t *len)
{
    if (!w->buf) {
        w->buf = malloc(1);
        if (w->buf)
            w->buf[0] = '\0';
    }
    char *b = w->buf;
    if (len)
        *len = w->len;
    w->buf = NULL;
    w->len = w->cap = 0;
    return b;
}
