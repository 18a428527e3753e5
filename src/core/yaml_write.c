/* The YAML emitter behind rl_yaml_to_string and rl_yaml_write_file: block style, with a
 * string quoted whenever the reader's scalar resolver (yaml_scalar.c) or YAML 1.1 would
 * read it as something else, so output reads back equal. */
#include "runlab/yaml.h"

#include "json_internal.h"
#include "yaml_internal.h"
#include "runlab/error.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Emitter ----------------------------------------------------------------------- */

static void sb_indent(rl_buf *sb, size_t n)
{
    static const char spaces[] = "                                ";
    while (n > 0) {
        size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
        rl_buf_put(sb, spaces, k);
        n -= k;
    }
}

/* Code points YAML allows unescaped (its c-printable set), minus the BOM and the line
 * separators that some readers treat as line breaks. */
static bool yaml_printable(uint32_t cp)
{
    return (cp >= 0x20 && cp <= 0x7E) || (cp >= 0xA0 && cp <= 0xD7FF) ||
           (cp >= 0xE000 && cp <= 0xFFFD && cp != 0xFEFF) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

/* Whether the string can be written plain and read back as the same string. Deliberately
 * conservative: anything doubtful is quoted, which costs only two characters. */
static bool plain_safe(const char *s, size_t n)
{
    if (n == 0 || strchr("-?:,[]{}#&*!|>'\"%@`. +0123456789", s[0]) || s[n - 1] == ' ')
        return false;
    struct scalar sc;
    rl_yaml_resolve_plain(s, n, &sc);
    if (sc.kind != SK_STRING)
        return false;
    /* YAML 1.1 readers take these as booleans; quoting keeps the file portable. */
    static const char *const yaml11[] = {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No",
                                         "NO", "on", "On", "ON", "off", "Off", "OFF"};
    for (size_t i = 0; i < sizeof yaml11 / sizeof *yaml11; i++)
        if (rl_yaml_eq(s, n, yaml11[i]))
            return false;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (u[i] >= 0x80) {
            uint32_t cp;
            size_t k = rl_utf8_decode(u + i, n - i, &cp);
            /* U+2028/2029 are line breaks to YAML 1.1 readers. */
            if (k == 0 || !yaml_printable(cp) || cp == 0x2028 || cp == 0x2029)
                return false;
            i += k;
            continue;
        }
        char c = s[i];
        if (c < 0x20 || c == 0x7F || strchr(",[]{}", c))
            return false;
        if (c == ':' && (i + 1 == n || s[i + 1] == ' '))
            return false;
        if (c == '#' && s[i - 1] == ' ')
            return false;
        i++;
    }
    return true;
}

static void emit_quoted(rl_buf *sb, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *u = (const unsigned char *)s;
    rl_buf_put(sb, "\"", 1);
    size_t run = 0, i = 0;
    while (i < n) {
        uint32_t cp = u[i];
        size_t adv = 1;
        if (cp >= 0x80) {
            adv = rl_utf8_decode(u + i, n - i, &cp);
            if (adv == 0) {
                /* Not UTF-8: YAML text cannot carry the byte, so it is replaced. */
                rl_buf_put(sb, s + run, i - run);
                rl_buf_put(sb, "\xEF\xBF\xBD", 3);
                run = ++i;
                continue;
            }
        }
        char esc[12];
        const char *rep = NULL;
        if (cp == '"')
            rep = "\\\"";
        else if (cp == '\\')
            rep = "\\\\";
        else if (cp == 0)
            rep = "\\0";
        else if (cp == '\t')
            rep = "\\t";
        else if (cp == '\n')
            rep = "\\n";
        else if (cp == '\r')
            rep = "\\r";
        else if (cp == 0x2028)
            rep = "\\L";
        else if (cp == 0x2029)
            rep = "\\P";
        else if (!yaml_printable(cp)) {
            if (cp <= 0xFF)
                snprintf(esc, sizeof esc, "\\x%c%c", hex[cp >> 4], hex[cp & 15]);
            else
                snprintf(esc, sizeof esc, "\\u%04" PRIX32, cp);
            rep = esc;
        }
        if (rep) {
            rl_buf_put(sb, s + run, i - run);
            rl_buf_puts(sb, rep);
            run = i + adv;
        }
        i += adv;
    }
    rl_buf_put(sb, s + run, n - run);
    rl_buf_put(sb, "\"", 1);
}

static void emit_string(rl_buf *sb, const char *s, size_t n)
{
    if (plain_safe(s, n))
        rl_buf_put(sb, s, n);
    else
        emit_quoted(sb, s, n);
}

static void emit_scalar(rl_buf *sb, json_object *v)
{
    char buf[RL_DOUBLE_BUF];
    switch (json_object_get_type(v)) {
    case json_type_null: rl_buf_puts(sb, "null"); return;
    case json_type_boolean: rl_buf_puts(sb, json_object_get_boolean(v) ? "true" : "false"); return;
    case json_type_int: {
        int64_t i = json_object_get_int64(v);
        if (i == INT64_MAX)
            snprintf(buf, sizeof buf, "%" PRIu64, json_object_get_uint64(v));
        else
            snprintf(buf, sizeof buf, "%" PRId64, i);
        rl_buf_puts(sb, buf);
        return;
    }
    case json_type_double: {
        double d = json_object_get_double(v);
        if (isnan(d))
            rl_buf_puts(sb, ".nan");
        else if (isinf(d))
            rl_buf_puts(sb, d > 0 ? ".inf" : "-.inf");
        else
            rl_buf_put(sb, buf, rl_format_double(d, buf));
        return;
    }
    case json_type_string:
        emit_string(sb, json_object_get_string(v), (size_t)json_object_get_string_len(v));
        return;
    case json_type_object: rl_buf_puts(sb, "{}"); return;
    case json_type_array: rl_buf_puts(sb, "[]"); return;
    }
}

static bool is_block(json_object *v)
{
    return (json_object_is_type(v, json_type_object) && json_object_object_length(v) > 0) ||
           (json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0);
}

/* Implicit keys are limited to 1024 characters; longer ones use the explicit "? " form. */
enum { IMPLICIT_KEY_MAX = 1000 };

static int emit_block(rl_buf *sb, json_object *v, size_t indent, bool first_inline,
                      int depth);

/* After "key:" or "- " or ":": the value, inline when scalar, else on following lines. */
static int emit_after(rl_buf *sb, json_object *v, size_t indent, int depth)
{
    if (is_block(v)) {
        rl_buf_put(sb, "\n", 1);
        return emit_block(sb, v, indent + 2, false, depth + 1);
    }
    rl_buf_put(sb, " ", 1);
    emit_scalar(sb, v);
    rl_buf_put(sb, "\n", 1);
    return RL_OK;
}

static int emit_block(rl_buf *sb, json_object *v, size_t indent, bool first_inline,
                      int depth)
{
    if (depth > YAML_MAX_DEPTH)
        return rl_error_set(RL_ERANGE, "yaml emit: value nested deeper than %d levels",
                            YAML_MAX_DEPTH);
    bool first = true;
    int rc = RL_OK;
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, key, child)
        {
            if (!first || !first_inline)
                sb_indent(sb, indent);
            first = false;
            size_t before = sb->len;
            emit_string(sb, key, strlen(key));
            if (sb->len - before > IMPLICIT_KEY_MAX) {
                /* Rewrite as an explicit key. */
                char *k = sb->err ? NULL : strndup(sb->data + before, sb->len - before);
                sb->len = before;
                rl_buf_put(sb, "? ", 2);
                if (!k) {
                    sb->err = rl_error_set(RL_ENOMEM, "yaml emit: out of memory");
                    return rl_error_set(RL_ENOMEM, "yaml emit: out of memory");
                }
                rl_buf_puts(sb, k);
                free(k);
                rl_buf_put(sb, "\n", 1);
                sb_indent(sb, indent);
            }
            rl_buf_put(sb, ":", 1);
            if ((rc = emit_after(sb, child, indent, depth)) != RL_OK)
                return rc;
        }
        return RL_OK;
    }
    size_t n = json_object_array_length(v);
    for (size_t i = 0; i < n; i++) {
        json_object *child = json_object_array_get_idx(v, i);
        if (!first || !first_inline)
            sb_indent(sb, indent);
        first = false;
        rl_buf_put(sb, "-", 1);
        if (is_block(child)) {
            /* Compact nesting: the child's first line shares the "- " line. */
            rl_buf_put(sb, " ", 1);
            if ((rc = emit_block(sb, child, indent + 2, true, depth + 1)) != RL_OK)
                return rc;
        } else if ((rc = emit_after(sb, child, indent, depth)) != RL_OK) {
            return rc;
        }
    }
    return RL_OK;
}

int rl_yaml_to_string(json_object *obj, char **out, size_t *out_len)
{
    if (!out)
        return rl_error_set(RL_EINVAL, "yaml emit: NULL output pointer");
    *out = NULL;
    rl_buf sb = {0};
    int rc = RL_OK;
    if (is_block(obj)) {
        rc = emit_block(&sb, obj, 0, false, 0);
    } else {
        emit_scalar(&sb, obj);
        rl_buf_put(&sb, "\n", 1);
    }
    if (rc == RL_OK && sb.err)
        rc = rl_error_set(RL_ENOMEM, "yaml emit: out of memory");
    if (rc != RL_OK) {
        free(sb.data);
        return rc;
    }
    *out = sb.data;
    if (out_len)
        *out_len = sb.len;
    return RL_OK;
}

int rl_yaml_write_file(const char *path, json_object *obj)
{
    return rl_doc_write_file(path, obj, rl_yaml_to_string, "yaml");
}
