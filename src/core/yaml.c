/* YAML behind runlab/yaml.h. Reading drives libfyaml's event parser and builds json-c
 * objects itself, which gives exact control over the YAML 1.2 core schema, duplicate
 * keys, alias expansion limits and error positions. Plain scalars are typed by
 * yaml_scalar.c; writing is yaml_write.c's. */
#include "runlab/yaml.h"

#include "json_internal.h"
#include "yaml_internal.h"
#include "runlab/number.h"
#include "runlab/error.h"
#include "runlab/fs.h"

#include <inttypes.h>
#include <libfyaml.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Aliases are expanded into copies; this bounds the nodes they may add in total, so a
 * "billion laughs" document fails quickly instead of exhausting memory. */
enum { YAML_MAX_ALIAS_NODES = 1000000 };

/* ---- Reader ------------------------------------------------------------------------ */

struct anchor {
    char *name;
    json_object *node; /* a reference held by the table */
    size_t nodes, height;
};

struct frame {
    json_object *node; /* owned until the container ends and joins its parent */
    bool is_map;
    char *key;         /* map: the key whose value is due, or NULL */
    char *anchor;
    size_t nodes, height;
};

struct builder {
    const char *name;
    const char *src; /* the text being parsed, for quoted scalars */
    size_t src_len;
    rl_buf sq;       /* the last quoted scalar decoded by token_text */
    struct frame *stack;
    size_t depth, stack_cap;
    struct anchor *anchors;
    size_t n_anchors, anchors_cap;
    json_object *root;
    bool have_root;
    size_t alias_nodes;
    int documents;
};

static int yerr(struct builder *b, int code, const struct fy_mark *m, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int yerr(struct builder *b, int code, const struct fy_mark *m, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (m && m->line >= 0)
        return rl_error_set(code, "%s:%d:%d: %s", b->name, m->line + 1, m->column + 1, what);
    return rl_error_set(code, "%s: %s", b->name, what);
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* `digits` hex digits at p (within end) as a code point; false when they are not. */
static bool hex_escape(const char *p, const char *end, int digits, uint32_t *cp)
{
    if (end - p < digits)
        return false;
    uint32_t v = 0;
    for (int i = 0; i < digits; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return false;
        v = v * 16 + (uint32_t)d;
    }
    *cp = v;
    return true;
}

static bool is_break(char c)
{
    return c == '\n' || c == '\r';
}

/* Past one line break (\n, \r\n or \r) at p. */
static const char *skip_break(const char *p, const char *end)
{
    return p + (p[0] == '\r' && p + 1 < end && p[1] == '\n' ? 2 : 1);
}

/* Folds at a line break at `p`: skips it, the empty lines after it and the next line's
 * leading white space, and appends what they stand for: after an escaped break one
 * newline per empty line; otherwise a space when no line is empty, else one newline per
 * empty line. Returns where the next line's content starts. */
static const char *fold_break(rl_buf *out, const char *p, const char *end, bool escaped)
{
    p = skip_break(p, end);
    size_t empty = 0;
    for (;;) {
        while (p < end && is_blank(*p))
            p++;
        if (p < end && is_break(*p)) {
            empty++;
            p = skip_break(p, end);
            continue;
        }
        break;
    }
    if (!escaped && empty == 0)
        rl_buf_put(out, " ", 1);
    for (; empty; empty--)
        rl_buf_put(out, "\n", 1);
    return p;
}

/* The value of a single-quoted scalar from its source text between the quotes, by YAML
 * 1.2's rules: two quotes are one; line breaks fold as in every flow scalar. libfyaml 0.7
 * gets runs of doubled quotes wrong ('x''''y' reads as x''' instead of x''y) and leaks
 * memory on them, so these scalars do not go through fy_token_get_text. False when
 * memory runs out. */
static bool decode_single_quoted(rl_buf *out, const char *p, size_t n)
{
    const char *end = p + n;
    out->len = 0;
    rl_buf_put(out, "", 0);
    size_t keep = 0; /* output length without the line's trailing white space */
    while (p < end) {
        char c = *p;
        if (is_break(c)) {
            out->len = keep; /* white space before a line break goes */
            p = fold_break(out, p, end, false);
            keep = out->len;
            continue;
        }
        rl_buf_put(out, p, 1);
        p += c == '\'' && p + 1 < end && p[1] == '\'' ? 2 : 1;
        if (!is_blank(c))
            keep = out->len;
    }
    return !out->err;
}

/* The value of a double-quoted scalar from its source text between the quotes, by YAML
 * 1.2's rules: escapes, folding as for single quotes, and an escaped line break joining
 * lines without a space. libfyaml 0.7 loses text after an escaped line break followed by
 * empty lines ("a\<LF><LF>b" reads as "a\n" instead of "a\nb") and leaks memory there.
 * False for anything unexpected, so that libfyaml's text is used instead. */
static bool decode_double_quoted(rl_buf *out, const char *p, size_t n)
{
    const char *end = p + n;
    out->len = 0;
    rl_buf_put(out, "", 0);
    size_t keep = 0; /* output length without the line's trailing literal white space */
    while (p < end) {
        char c = *p;
        if (is_break(c)) {
            out->len = keep; /* literal white space before a line break goes */
            p = fold_break(out, p, end, false);
            keep = out->len;
            continue;
        }
        if (c != '\\') {
            rl_buf_put(out, p, 1);
            p++;
            if (!is_blank(c))
                keep = out->len;
            continue;
        }
        if (p + 1 >= end)
            return false;
        char e = p[1];
        p += 2;
        uint32_t cp;
        switch (e) {
        case '0': rl_buf_put(out, "\0", 1); break;
        case 'a': rl_buf_put(out, "\a", 1); break;
        case 'b': rl_buf_put(out, "\b", 1); break;
        case 't':
        case '\t': rl_buf_put(out, "\t", 1); break;
        case 'n': rl_buf_put(out, "\n", 1); break;
        case 'v': rl_buf_put(out, "\v", 1); break;
        case 'f': rl_buf_put(out, "\f", 1); break;
        case 'r': rl_buf_put(out, "\r", 1); break;
        case 'e': rl_buf_put(out, "\x1b", 1); break;
        case ' ': rl_buf_put(out, " ", 1); break;
        case '"': rl_buf_put(out, "\"", 1); break;
        case '/': rl_buf_put(out, "/", 1); break;
        case '\\': rl_buf_put(out, "\\", 1); break;
        case 'N': rl_buf_put_utf8(out, 0x85); break;
        case '_': rl_buf_put_utf8(out, 0xA0); break;
        case 'L': rl_buf_put_utf8(out, 0x2028); break;
        case 'P': rl_buf_put_utf8(out, 0x2029); break;
        case 'x':
        case 'u':
        case 'U': {
            int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            if (!hex_escape(p, end, digits, &cp) || cp > 0x10FFFF ||
                (cp >= 0xD800 && cp <= 0xDFFF))
                return false;
            rl_buf_put_utf8(out, cp);
            p += digits;
            break;
        }
        case '\n':
        case '\r':
            /* An escaped line break: the white space before the backslash stays. */
            p = fold_break(out, p - 1, end, true);
            break;
        default: return false;
        }
        keep = out->len;
    }
    return !out->err;
}

static const char *token_text(struct builder *b, struct fy_token *t, size_t *len)
{
    enum fy_scalar_style style =
        t && b->src && fy_token_get_type(t) == FYTT_SCALAR ? fy_token_scalar_style(t) : FYSS_ANY;
    if (style == FYSS_SINGLE_QUOTED || style == FYSS_DOUBLE_QUOTED) {
        char q = style == FYSS_SINGLE_QUOTED ? '\'' : '"';
        /* The marks enclose the text between the quotes; the quotes are checked so that
         * a mark that does not mean what it seems falls back to libfyaml's text. */
        const struct fy_mark *sm = fy_token_start_mark(t), *em = fy_token_end_mark(t);
        if (sm && em && sm->input_pos >= 1 && sm->input_pos <= em->input_pos &&
            em->input_pos < b->src_len && b->src[sm->input_pos - 1] == q &&
            b->src[em->input_pos] == q &&
            (style == FYSS_SINGLE_QUOTED
                 ? decode_single_quoted(&b->sq, b->src + sm->input_pos,
                                        em->input_pos - sm->input_pos)
                 : decode_double_quoted(&b->sq, b->src + sm->input_pos,
                                        em->input_pos - sm->input_pos))) {
            *len = b->sq.len;
            return b->sq.data ? b->sq.data : "";
        }
    }
    const char *s = t ? fy_token_get_text(t, len) : NULL;
    if (!s) {
        *len = 0;
        return "";
    }
    return s;
}

/* Copies a token's text into a C string, refusing NUL bytes (json-c keys and anchor
 * names are C strings). */
static int token_cstr(struct builder *b, struct fy_token *t, const struct fy_mark *m,
                      const char *what, char **out)
{
    size_t n;
    const char *s = token_text(b, t, &n);
    if (memchr(s, '\0', n))
        return yerr(b, RL_EUNSUPPORTED, m, "%s contains a NUL character", what);
    *out = strndup(s, n);
    if (!*out)
        return rl_error_set(RL_ENOMEM, "%s: out of memory", b->name);
    return RL_OK;
}

static void free_anchor_name(char **p)
{
    free(*p);
    *p = NULL;
}

static int register_anchor(struct builder *b, char **name, json_object *node, size_t nodes,
                           size_t height)
{
    if (!*name)
        return RL_OK;
    if (b->n_anchors == b->anchors_cap) {
        size_t cap = b->anchors_cap ? b->anchors_cap * 2 : 8;
        struct anchor *na = realloc(b->anchors, cap * sizeof *na);
        if (!na)
            return rl_error_set(RL_ENOMEM, "%s: out of memory", b->name);
        b->anchors = na;
        b->anchors_cap = cap;
    }
    b->anchors[b->n_anchors++] =
        (struct anchor){.name = *name, .node = json_object_get(node), .nodes = nodes,
                        .height = height};
    *name = NULL;
    return RL_OK;
}

/* Attaches a finished value (ownership passes in) to the open container or the root. */
static int attach(struct builder *b, json_object *v, size_t nodes, size_t height,
                  const struct fy_mark *m)
{
    if (b->depth + height > YAML_MAX_DEPTH) {
        json_object_put(v);
        return yerr(b, RL_ERANGE, m, "document nested deeper than %d levels", YAML_MAX_DEPTH);
    }
    if (b->depth == 0) {
        b->root = v;
        b->have_root = true;
        return RL_OK;
    }
    struct frame *f = &b->stack[b->depth - 1];
    int rc = 0;
    if (f->is_map) {
        rc = json_object_object_add(f->node, f->key, v);
        free(f->key);
        f->key = NULL;
    } else {
        rc = json_object_array_add(f->node, v);
    }
    if (rc != 0) {
        json_object_put(v);
        return rl_error_set(RL_ENOMEM, "%s: out of memory", b->name);
    }
    f->nodes += nodes;
    if (height + 1 > f->height)
        f->height = height + 1;
    return RL_OK;
}

static bool at_key(const struct builder *b)
{
    return b->depth > 0 && b->stack[b->depth - 1].is_map && !b->stack[b->depth - 1].key;
}

/* The event's tag (NULL when untagged) and, for messages about it, where it starts. */
static void tag_of(struct builder *b, struct fy_event *e, const char **tag, size_t *len,
                   const struct fy_mark **where)
{
    struct fy_token *t = fy_event_get_tag_token(e);
    *tag = t ? token_text(b, t, len) : NULL;
    const struct fy_mark *tm = t ? fy_token_start_mark(t) : NULL;
    if (tm)
        *where = tm;
}

static const char core_prefix[] = "tag:yaml.org,2002:";

/* The core tag's suffix ("str", "map"), or NULL when `tag` is not a core tag. */
static const char *core_suffix(const char *tag, size_t len, size_t *suffix_len)
{
    size_t p = sizeof core_prefix - 1;
    if (len <= p || memcmp(tag, core_prefix, p) != 0)
        return NULL;
    *suffix_len = len - p;
    return tag + p;
}

static int scalar_value(struct builder *b, struct fy_event *e, const struct fy_mark *m,
                        json_object **out)
{
    struct fy_token *t = fy_event_get_token(e);
    size_t n;
    const char *s = token_text(b, t, &n);
    const char *tag;
    size_t tag_len = 0, sl = 0;
    tag_of(b, e, &tag, &tag_len, &m);
    struct scalar sc;
    if (tag && !(tag_len == 1 && tag[0] == '!')) {
        const char *suf = core_suffix(tag, tag_len, &sl);
        if (!suf)
            return yerr(b, RL_EUNSUPPORTED, m, "unsupported tag '%.*s'", (int)tag_len, tag);
        if (rl_yaml_eq(suf, sl, "str")) {
            sc.kind = SK_STRING;
        } else {
            rl_yaml_resolve_plain(s, n, &sc);
            bool ok = (rl_yaml_eq(suf, sl, "null") && sc.kind == SK_NULL) ||
                      (rl_yaml_eq(suf, sl, "bool") && sc.kind == SK_BOOL) ||
                      (rl_yaml_eq(suf, sl, "int") && (sc.kind == SK_INT || sc.kind == SK_UINT)) ||
                      (rl_yaml_eq(suf, sl, "float") &&
                       (sc.kind == SK_FLOAT || sc.kind == SK_INT || sc.kind == SK_UINT));
            if (!ok)
                return yerr(b, RL_EPARSE, m, "'%.*s' is not a valid !!%.*s", (int)(n > 60 ? 60 : n),
                            s, (int)sl, suf);
            if (rl_yaml_eq(suf, sl, "float") && sc.kind != SK_FLOAT) {
                sc.d = sc.kind == SK_INT ? (double)sc.i : (double)sc.u;
                sc.kind = SK_FLOAT;
            }
        }
    } else if (tag || fy_token_scalar_style(t) != FYSS_PLAIN) {
        sc.kind = SK_STRING; /* quoted, block and "!"-tagged scalars are never typed */
    } else {
        rl_yaml_resolve_plain(s, n, &sc);
    }
    switch (sc.kind) {
    case SK_NULL: *out = NULL; return RL_OK;
    case SK_BOOL: *out = json_object_new_boolean(sc.b); break;
    case SK_INT: *out = json_object_new_int64(sc.i); break;
    case SK_UINT: *out = json_object_new_uint64(sc.u); break;
    case SK_FLOAT: *out = json_object_new_double(sc.d); break;
    case SK_STRING:
        if (n > INT32_MAX)
            return yerr(b, RL_ERANGE, m, "scalar of %zu bytes is too long", n);
        *out = json_object_new_string_len(s, (int)n);
        break;
    case SK_RANGE:
        return yerr(b, RL_ERANGE, m, "number '%.*s' is out of range", (int)(n > 60 ? 60 : n), s);
    }
    if (!*out)
        return rl_error_set(RL_ENOMEM, "%s: out of memory", b->name);
    return RL_OK;
}

static int take_anchor(struct builder *b, struct fy_event *e, const struct fy_mark *m,
                       char **out)
{
    *out = NULL;
    struct fy_token *a = fy_event_get_anchor_token(e);
    if (!a)
        return RL_OK;
    return token_cstr(b, a, m, "anchor name", out);
}

static int on_scalar(struct builder *b, struct fy_event *e, const struct fy_mark *m)
{
    char *anchor = NULL;
    int rc = take_anchor(b, e, m, &anchor);
    if (rc != RL_OK)
        return rc;
    if (at_key(b)) {
        struct frame *f = &b->stack[b->depth - 1];
        char *key = NULL;
        rc = token_cstr(b, fy_event_get_token(e), m, "mapping key", &key);
        if (rc == RL_OK && json_object_object_get_ex(f->node, key, NULL))
            rc = yerr(b, RL_EPARSE, m, "duplicate key '%s'", key);
        json_object *kv = NULL;
        if (rc == RL_OK && anchor) {
            kv = json_object_new_string(key);
            rc = kv ? register_anchor(b, &anchor, kv, 1, 0)
                    : rl_error_set(RL_ENOMEM, "%s: out of memory", b->name);
            json_object_put(kv);
        }
        if (rc != RL_OK) {
            free(key);
            free(anchor);
            return rc;
        }
        f->key = key;
        return RL_OK;
    }
    json_object *v = NULL;
    rc = scalar_value(b, e, m, &v);
    if (rc == RL_OK)
        rc = register_anchor(b, &anchor, v, 1, 0);
    free(anchor);
    if (rc != RL_OK) {
        json_object_put(v);
        return rc;
    }
    return attach(b, v, 1, 0, m);
}

static int on_start(struct builder *b, struct fy_event *e, const struct fy_mark *m, bool is_map)
{
    if (at_key(b))
        return yerr(b, RL_EUNSUPPORTED, m, "%s used as a mapping key (keys must be scalars)",
                    is_map ? "mapping" : "sequence");
    const char *tag;
    size_t tag_len = 0, sl = 0;
    const struct fy_mark *tm = m;
    tag_of(b, e, &tag, &tag_len, &tm);
    if (tag) {
        const char *suf = core_suffix(tag, tag_len, &sl);
        if (!suf || !rl_yaml_eq(suf, sl, is_map ? "map" : "seq"))
            return yerr(b, RL_EUNSUPPORTED, tm, "unsupported tag '%.*s' on a %s", (int)tag_len,
                        tag, is_map ? "mapping" : "sequence");
    }
    if (b->depth >= YAML_MAX_DEPTH)
        return yerr(b, RL_ERANGE, m, "document nested deeper than %d levels", YAML_MAX_DEPTH);
    if (b->depth == b->stack_cap) {
        size_t cap = b->stack_cap ? b->stack_cap * 2 : 16;
        struct frame *ns = realloc(b->stack, cap * sizeof *ns);
        if (!ns)
            return rl_error_set(RL_ENOMEM, "%s: out of memory", b->name);
        b->stack = ns;
        b->stack_cap = cap;
    }
    struct frame f = {.is_map = is_map, .nodes = 1};
    int rc = take_anchor(b, e, m, &f.anchor);
    if (rc != RL_OK)
        return rc;
    f.node = is_map ? json_object_new_object() : json_object_new_array();
    if (!f.node) {
        free(f.anchor);
        return rl_error_set(RL_ENOMEM, "%s: out of memory", b->name);
    }
    b->stack[b->depth++] = f;
    return RL_OK;
}

static int on_end(struct builder *b, const struct fy_mark *m)
{
    if (b->depth == 0)
        return yerr(b, RL_EPARSE, m, "unbalanced end of collection");
    struct frame f = b->stack[--b->depth];
    free(f.key);
    int rc = register_anchor(b, &f.anchor, f.node, f.nodes, f.height);
    free_anchor_name(&f.anchor);
    if (rc != RL_OK) {
        json_object_put(f.node);
        return rc;
    }
    return attach(b, f.node, f.nodes, f.height, m);
}

static int on_alias(struct builder *b, struct fy_event *e, const struct fy_mark *m)
{
    size_t n;
    const char *name = token_text(b, fy_event_get_token(e), &n);
    if (at_key(b))
        return yerr(b, RL_EUNSUPPORTED, m, "alias '*%.*s' used as a mapping key", (int)n, name);
    const struct anchor *a = NULL;
    for (size_t i = b->n_anchors; i-- > 0;) { /* the latest definition wins */
        if (rl_yaml_eq(name, n, b->anchors[i].name)) {
            a = &b->anchors[i];
            break;
        }
    }
    if (!a)
        return yerr(b, RL_EPARSE, m, "undefined alias '*%.*s'", (int)n, name);
    if (a->nodes > YAML_MAX_ALIAS_NODES - b->alias_nodes)
        return yerr(b, RL_ERANGE, m, "aliases expand to more than %d nodes",
                    YAML_MAX_ALIAS_NODES);
    b->alias_nodes += a->nodes;
    json_object *copy = NULL;
    if (a->node && json_object_deep_copy(a->node, &copy, NULL) != 0)
        return rl_error_set(RL_ENOMEM, "%s: out of memory", b->name);
    return attach(b, copy, a->nodes, a->height, m);
}

static int on_event(struct builder *b, struct fy_event *e)
{
    const struct fy_mark *m = fy_event_start_mark(e);
    switch (e->type) {
    case FYET_DOCUMENT_START:
        if (++b->documents > 1)
            return yerr(b, RL_EUNSUPPORTED, m, "a second document (one document per input)");
        return RL_OK;
    case FYET_SCALAR: {
        /* libfyaml marks a quoted scalar at its first character inside the quote;
         * point at the quote, where the scalar begins for the reader. */
        struct fy_mark qm;
        enum fy_scalar_style st = fy_token_scalar_style(fy_event_get_token(e));
        if (m && m->column > 0 && (st == FYSS_SINGLE_QUOTED || st == FYSS_DOUBLE_QUOTED)) {
            qm = *m;
            qm.column--;
            m = &qm;
        }
        return on_scalar(b, e, m);
    }
    case FYET_MAPPING_START: return on_start(b, e, m, true);
    case FYET_SEQUENCE_START: return on_start(b, e, m, false);
    case FYET_MAPPING_END:
    case FYET_SEQUENCE_END: return on_end(b, m);
    case FYET_ALIAS: {
        struct fy_mark am; /* likewise, an alias is marked after its '*' */
        if (m && m->column > 0) {
            am = *m;
            am.column--;
            m = &am;
        }
        return on_alias(b, e, m);
    }
    default: return RL_OK;
    }
}

static void builder_free(struct builder *b)
{
    for (size_t i = 0; i < b->depth; i++) {
        json_object_put(b->stack[i].node);
        free(b->stack[i].key);
        free(b->stack[i].anchor);
    }
    free(b->stack);
    for (size_t i = 0; i < b->n_anchors; i++) {
        free(b->anchors[i].name);
        json_object_put(b->anchors[i].node);
    }
    free(b->anchors);
    free(b->sq.data);
    json_object_put(b->root);
}

static void diag_discard(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    (void)diag, (void)user, (void)buf, (void)len;
}

/* libfyaml's first collected error as "name:line:col: what". */
static int syntax_error(struct builder *b, struct fy_diag *diag)
{
    void *iter = NULL;
    struct fy_diag_error *de;
    while ((de = fy_diag_errors_iterate(diag, &iter)) != NULL) {
        if (de->type < FYET_ERROR)
            continue;
        if (de->line > 0)
            return rl_error_set(RL_EPARSE, "%s:%d:%d: %s", b->name, de->line, de->column,
                                de->msg ? de->msg : "syntax error");
        return rl_error_set(RL_EPARSE, "%s: %s", b->name, de->msg ? de->msg : "syntax error");
    }
    return rl_error_set(RL_EPARSE, "%s: YAML syntax error", b->name);
}

/* YAML text must be UTF-8 without NUL bytes. Checked before libfyaml sees it: libfyaml
 * 0.7 (Debian 12) loops forever on a directive line holding invalid UTF-8 ("%\xd1\n"),
 * and a parse must never hang, whatever the input. */
static int check_encoding(const char *text, size_t len, const char *name)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = s[i] < 0x80 ? 1 : rl_utf8_decode(s + i, len - i, &cp);
        if (n == 0 || s[i] == 0)
            return rl_error_set(RL_EPARSE, "%s:%zu:%zu: byte %zu: %s", name, line,
                                i - line_start + 1, i,
                                s[i] == 0 ? "NUL byte (not allowed in YAML)"
                                          : "invalid UTF-8 sequence");
        if (s[i] == '\n') {
            line++;
            line_start = i + 1;
        }
        i += n;
    }
    return RL_OK;
}

int rl_yaml_parse(const char *text, size_t len, const char *name, json_object **out)
{
    if (!out)
        return rl_error_set(RL_EINVAL, "yaml parse: NULL output pointer");
    *out = NULL;
    if (!name)
        name = "<yaml>";
    if (!text && len > 0)
        return rl_error_set(RL_EINVAL, "%s: NULL text", name);
    if (!text)
        text = "";
    int rc = check_encoding(text, len, name);
    if (rc < 0)
        return rc;

    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL; /* never print: the message goes to rl_error_set */
    dcfg.output_fn = diag_discard;
    dcfg.colorize = false;
    struct fy_diag *diag = fy_diag_create(&dcfg);
    if (!diag)
        return rl_error_set(RL_ENOMEM, "%s: cannot create YAML diagnostics", name);
    fy_diag_set_collect_errors(diag, true);
    struct fy_parse_cfg cfg = {
        .flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2 | FYPCF_JSON_NONE,
        .diag = diag,
    };
    struct fy_parser *fyp = fy_parser_create(&cfg);
    if (!fyp) {
        fy_diag_destroy(diag);
        return rl_error_set(RL_ENOMEM, "%s: cannot create YAML parser", name);
    }
    struct builder b = {.name = name, .src = text, .src_len = len};
    rc = RL_OK;
    if (fy_parser_set_string(fyp, text, len) != 0) {
        rc = rl_error_set(RL_ENOMEM, "%s: cannot set up YAML input", name);
    } else {
        struct fy_event *e;
        while ((e = fy_parser_parse(fyp)) != NULL) {
            if (rc == RL_OK)
                rc = on_event(&b, e);
            fy_parser_event_free(fyp, e);
            /* After our own error keep reading: a syntax error later in the input is
             * the real cause when it made the parser emit odd events. */
        }
        if (fy_parser_get_stream_error(fyp))
            rc = syntax_error(&b, diag);
    }
    if (rc == RL_OK && b.depth != 0)
        rc = rl_error_set(RL_EPARSE, "%s: unexpected end of input", name);
    if (rc == RL_OK) {
        *out = b.root;
        b.root = NULL;
    }
    builder_free(&b);
    fy_parser_destroy(fyp);
    fy_diag_destroy(diag);
    return rc;
}

int rl_yaml_read_file(const char *path, size_t max_bytes, json_object **out)
{
    return rl_doc_read_file(path, max_bytes, out, rl_yaml_parse, "yaml");
}
