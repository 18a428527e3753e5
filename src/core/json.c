/* JSON reading and whole-document writing behind runlab/json.h. json-c's tokener builds
 * the document; a second strict pass rejects what json-c tolerates but JSON forbids
 * (NaN, single quotes, "1.", out-of-range numbers), and every error names the place as
 * "name:line:col: byte N: what". Typed getters name the key and the type found. */
#include "json_internal.h"
#include "runlab/number.h"

#include "runlab/error.h"
#include "runlab/fs.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Deep enough for any configuration or result file, shallow enough for json-c's
 * recursive free. */
enum { JSON_MAX_DEPTH = 256 };

static int parse_error(const char *name, const char *text, size_t off, const char *what)
{
    size_t line = 1, col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return rl_error_set(RL_EPARSE, "%s:%zu:%zu: byte %zu: %s", name, line, col, off, what);
}

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Checks one number token at text[*pos] against RFC 8259's grammar and range. */
static int check_number(const char *name, const char *text, size_t len, size_t *pos)
{
    size_t start = *pos, i = *pos;
    bool is_int = true;
    if (i < len && text[i] == '-')
        i++;
    if (i < len && text[i] == '0') {
        i++;
    } else if (i < len && is_digit(text[i])) {
        while (i < len && is_digit(text[i]))
            i++;
    } else {
        return parse_error(name, text, start, "invalid number");
    }
    if (i < len && text[i] == '.') {
        is_int = false;
        i++;
        if (i >= len || !is_digit(text[i]))
            return parse_error(name, text, start, "invalid number (digits must follow '.')");
        while (i < len && is_digit(text[i]))
            i++;
    }
    if (i < len && (text[i] == 'e' || text[i] == 'E')) {
        is_int = false;
        i++;
        if (i < len && (text[i] == '+' || text[i] == '-'))
            i++;
        if (i >= len || !is_digit(text[i]))
            return parse_error(name, text, start, "invalid number (exponent without digits)");
        while (i < len && is_digit(text[i]))
            i++;
    }
    if (i < len && (is_digit(text[i]) || text[i] == '.' || (text[i] | 0x20) == 'e' ||
                    text[i] == '-' || text[i] == '+'))
        return parse_error(name, text, start, "invalid number");
    char tmp[64];
    size_t n = i - start;
    /* json-c silently clamps integers beyond 64 bits and turns huge literals into
     * infinity; both would change the data, so they are errors here. */
    if (is_int) {
        bool neg = text[start] == '-';
        size_t digits = n - (neg ? 1 : 0);
        bool ok = digits <= 20;
        if (ok) {
            memcpy(tmp, text + start, n);
            tmp[n] = '\0';
            errno = 0;
            if (neg)
                (void)strtoll(tmp, NULL, 10);
            else
                (void)strtoull(tmp, NULL, 10);
            ok = errno == 0;
        }
        if (!ok)
            return parse_error(name, text, start,
                               "integer out of range (-2^63 .. 2^64-1)");
    } else {
        char *heap = NULL, *p = tmp;
        if (n >= sizeof tmp) {
            heap = malloc(n + 1);
            if (!heap)
                return rl_error_set(RL_ENOMEM, "%s: out of memory", name);
            p = heap;
        }
        memcpy(p, text + start, n);
        p[n] = '\0';
        double d = rl_parse_f64(p, NULL);
        free(heap);
        if (isinf(d))
            return parse_error(name, text, start, "number out of range for a double");
    }
    *pos = i;
    return RL_OK;
}

/* The strict pass over text json-c has accepted. The structure is known to be sound,
 * so only tokens need checking. */
static int check_strict(const char *name, const char *text, size_t len)
{
    size_t i = 0;
    while (i < len) {
        char c = text[i];
        if (is_ws(c) || c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':') {
            i++;
        } else if (c == '"') {
            i++;
            while (i < len && text[i] != '"') {
                unsigned char b = (unsigned char)text[i];
                if (b < 0x20)
                    return parse_error(name, text, i, "control character in string");
                if (b == '\\') {
                    char e = i + 1 < len ? text[i + 1] : '\0';
                    if (e == 'u') {
                        for (size_t k = 2; k < 6; k++)
                            if (i + k >= len || !is_hex(text[i + k]))
                                return parse_error(name, text, i, "invalid \\u escape");
                        i += 6;
                        continue;
                    }
                    if (!strchr("\"\\/bfnrt", e) || e == '\0')
                        return parse_error(name, text, i, "invalid escape in string");
                    i += 2;
                    continue;
                }
                i++;
            }
            i++;
        } else if (c == '-' || is_digit(c)) {
            int rc = check_number(name, text, len, &i);
            if (rc != RL_OK)
                return rc;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            size_t s = i;
            while (i < len && ((text[i] >= 'a' && text[i] <= 'z') ||
                               (text[i] >= 'A' && text[i] <= 'Z')))
                i++;
            size_t n = i - s;
            if (!((n == 4 && !memcmp(text + s, "true", 4)) ||
                  (n == 5 && !memcmp(text + s, "false", 5)) ||
                  (n == 4 && !memcmp(text + s, "null", 4))))
                return parse_error(name, text, s,
                                   "invalid literal (JSON has only true, false and null)");
        } else if (c == '\'') {
            return parse_error(name, text, i, "single-quoted string (JSON needs '\"')");
        } else {
            return parse_error(name, text, i, "unexpected character");
        }
    }
    return RL_OK;
}

int rl_json_parse(const char *text, size_t len, const char *name, json_object **out)
{
    if (!out)
        return rl_error_set(RL_EINVAL, "json parse: NULL output pointer");
    *out = NULL;
    if (!name)
        name = "<json>";
    if (!text && len > 0)
        return rl_error_set(RL_EINVAL, "%s: NULL text", name);
    if (len > INT_MAX)
        return rl_error_set(RL_ERANGE, "%s: %zu bytes, more than the JSON reader's limit of %d",
                            name, len, INT_MAX);
    size_t first = 0;
    while (first < len && is_ws(text[first]))
        first++;
    if (first == len)
        return parse_error(name, text, len, "empty input (no JSON value)");

    struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
    if (!tok)
        return rl_error_set(RL_ENOMEM, "%s: out of memory", name);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *obj = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error err = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (!obj && err == json_tokener_continue) {
        /* A top-level number or literal ends only at a delimiter; a NUL supplies it, and
         * anything still incomplete at the end of the input is reported there. */
        obj = json_tokener_parse_ex(tok, "", 1);
        err = json_tokener_get_error(tok);
        end = len;
    }
    json_tokener_free(tok);
    if (err != json_tokener_success)
        return parse_error(name, text, end < len ? end : len, json_tokener_error_desc(err));
    for (size_t i = end; i < len; i++) {
        if (!is_ws(text[i])) {
            json_object_put(obj);
            return parse_error(name, text, i, "unexpected data after the JSON value");
        }
    }
    int rc = check_strict(name, text, end);
    if (rc != RL_OK) {
        json_object_put(obj);
        return rc;
    }
    *out = obj;
    return RL_OK;
}

int rl_doc_read_file(const char *path, size_t max_bytes, json_object **out,
                     int (*parse)(const char *, size_t, const char *, json_object **),
                     const char *what)
{
    if (!out || !path)
        return rl_error_set(RL_EINVAL, "%s read: NULL argument", what);
    *out = NULL;
    char *buf = NULL;
    size_t n = 0;
    int rc = rl_fs_read_all(path, max_bytes, &buf, &n);
    if (rc != RL_OK)
        return rc;
    rc = parse(buf, n, path, out);
    free(buf);
    return rc;
}

int rl_json_read_file(const char *path, size_t max_bytes, json_object **out)
{
    return rl_doc_read_file(path, max_bytes, out, rl_json_parse, "json");
}

/* ---- Typed getters ---------------------------------------------------------------- */

static const char *type_name(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: return "null";
    case json_type_boolean: return "boolean";
    case json_type_double: return "number";
    case json_type_int: return "integer";
    case json_type_object: return "object";
    case json_type_array: return "array";
    case json_type_string: return "string";
    }
    return "unknown";
}

static int lookup(json_object *obj, const char *key, json_type want, const char *want_name,
                  json_object **val)
{
    if (!key)
        return rl_error_set(RL_EINVAL, "json get: NULL key");
    if (!json_object_is_type(obj, json_type_object))
        return rl_error_set(RL_EINVAL, "key '%s': looked up in a %s, not an object", key,
                            obj ? type_name(obj) : "NULL document");
    json_object *v = NULL;
    if (!json_object_object_get_ex(obj, key, &v))
        return rl_error_set(RL_ENOENT, "key '%s': missing", key);
    bool ok = json_object_is_type(v, want) ||
              (want == json_type_double && json_object_is_type(v, json_type_int));
    if (!ok)
        return rl_error_set(RL_EPARSE, "key '%s': expected %s, found %s", key, want_name,
                            type_name(v));
    *val = v;
    return RL_OK;
}

int rl_json_get_string(json_object *obj, const char *key, const char **out)
{
    json_object *v;
    int rc = lookup(obj, key, json_type_string, "string", &v);
    if (rc == RL_OK)
        *out = json_object_get_string(v);
    return rc;
}

int rl_json_get_int64(json_object *obj, const char *key, int64_t *out)
{
    if (!key)
        return rl_error_set(RL_EINVAL, "json get: NULL key");
    json_object *v = NULL;
    if (json_object_is_type(obj, json_type_object) && json_object_object_get_ex(obj, key, &v) &&
        json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        /* 2^63 is exact in a double, so both bounds are exact comparisons. */
        if (!isfinite(d) || d != floor(d))
            return rl_error_set(RL_EPARSE, "key '%s': expected integer, found number %.17g",
                                key, d);
        if (d < -9223372036854775808.0 || d >= 9223372036854775808.0)
            return rl_error_set(RL_ERANGE, "key '%s': %.17g is out of the int64 range", key, d);
        *out = (int64_t)d;
        return RL_OK;
    }
    int rc = lookup(obj, key, json_type_int, "integer", &v);
    if (rc != RL_OK)
        return rc;
    int64_t i = json_object_get_int64(v);
    if (i == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX)
        return rl_error_set(RL_ERANGE, "key '%s': %" PRIu64 " is out of the int64 range", key,
                            json_object_get_uint64(v));
    *out = i;
    return RL_OK;
}

int rl_json_get_double(json_object *obj, const char *key, double *out)
{
    json_object *v;
    int rc = lookup(obj, key, json_type_double, "number", &v);
    if (rc != RL_OK)
        return rc;
    if (json_object_is_type(v, json_type_int)) {
        int64_t i = json_object_get_int64(v);
        *out = i == INT64_MAX ? (double)json_object_get_uint64(v) : (double)i;
    } else {
        *out = json_object_get_double(v);
    }
    return RL_OK;
}

int rl_json_get_bool(json_object *obj, const char *key, bool *out)
{
    json_object *v;
    int rc = lookup(obj, key, json_type_boolean, "boolean", &v);
    if (rc == RL_OK)
        *out = json_object_get_boolean(v);
    return rc;
}

int rl_json_get_object(json_object *obj, const char *key, json_object **out)
{
    json_object *v;
    int rc = lookup(obj, key, json_type_object, "object", &v);
    if (rc == RL_OK)
        *out = v;
    return rc;
}

int rl_json_get_array(json_object *obj, const char *key, json_object **out)
{
    json_object *v;
    int rc = lookup(obj, key, json_type_array, "array", &v);
    if (rc == RL_OK)
        *out = v;
    return rc;
}

/* ---- Whole documents -------------------------------------------------------------- */

int rl_json_to_string(json_object *obj, char **out, size_t *out_len)
{
    if (!out)
        return rl_error_set(RL_EINVAL, "json to_string: NULL output pointer");
    *out = NULL;
    rl_json_writer *w = NULL;
    int rc = rl_json_writer_new_buffer(&w, RL_JSON_PRETTY);
    if (rc != RL_OK)
        return rc;
    rc = rl_json_value(w, obj);
    if (rc == RL_OK)
        rc = rl_json_writer_finish(w);
    size_t len = 0;
    char *buf = NULL;
    if (rc == RL_OK) {
        buf = rl_json_writer_take_buffer(w, &len);
        char *nb = buf ? realloc(buf, len + 2) : NULL;
        if (!nb) {
            free(buf);
            rc = rl_error_set(RL_ENOMEM, "json to_string: out of memory");
        } else {
            buf = nb;
            buf[len++] = '\n';
            buf[len] = '\0';
        }
    }
    rl_json_writer_free(w);
    if (rc != RL_OK)
        return rc;
    *out = buf;
    if (out_len)
        *out_len = len;
    return RL_OK;
}

int rl_doc_write_file(const char *path, json_object *obj,
                      int (*to_string)(json_object *, char **, size_t *), const char *what)
{
    if (!path)
        return rl_error_set(RL_EINVAL, "%s write: NULL path", what);
    char *s = NULL;
    size_t n = 0;
    int rc = to_string(obj, &s, &n);
    if (rc != RL_OK)
        return rl_error_prefix(rc, "%s", path);
    rc = rl_fs_write_atomic(path, s, n, 0644);
    free(s);
    return rc;
}

int rl_json_write_file(const char *path, json_object *obj)
{
    return rl_doc_write_file(path, obj, rl_json_to_string, "json");
}
