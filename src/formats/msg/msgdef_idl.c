/* The OMG IDL schema parser (MCAP "omgidl"): modules, structs (inheritance flattened),
 * enums (@value), unions with a discriminator and default, typedefs, constants with
 * integer expressions, multi-dimensional arrays, sequence<T[, N]>, string<N>, and the
 * XTypes annotations, into the type model of runlab/msgdef.h. #include and #pragma lines
 * are skipped; unknown annotations are ignored. */
#include "msgdef_internal.h"

#include "runlab/error.h"

#include <openssl/evp.h>

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_NAME = 512, MAX_NEST = 64 };

typedef enum tok_kind { T_END, T_ID, T_INT, T_FLOAT, T_STRING, T_CHAR, T_PUNCT } tok_kind;

typedef struct token {
    tok_kind kind;
    const char *p;
    size_t n;
    size_t line, col;
} token;

typedef enum sym_kind { S_TYPE, S_CONST, S_FORWARD } sym_kind;

typedef struct symbol {
    char *name; /* fully qualified */
    sym_kind kind;
    uint32_t type;
    int has_int;
    int64_t ival;
} symbol;

typedef struct idl_parser {
    rl_msgdef *d;
    const char *schema;
    const char *text, *end, *cur;
    size_t line, col;
    token tok;
    symbol *syms;
    size_t nsyms, csyms;
    msgdef_names sym_index; /* fully qualified name -> index in syms */
    char scope[MAX_NAME];
    int nest;
    bool module_autoid_hash; /* @autoid(HASH) of the innermost module that says (XTypes 7.3.1.2.1.1) */
    /* What a struct or union without an extensibility annotation is: FINAL (what Cyclone's
     * idlc makes of it and puts in its type objects), else @default_extensibility of the
     * innermost module that says. Never RL_MSG_EXT_DEFAULT: an IDL type's kind is its own,
     * not its container's nor the payload header's. */
    rl_msg_ext module_ext;
    int in_template; /* inside <...>: ">>" closes, it is no shift */
} idl_parser;

/* Annotations of one declaration. */
typedef struct annots {
    rl_msg_ext ext;
    rl_msg_ext default_ext; /* @default_extensibility(...) on a module; DEFAULT when absent */
    bool key, optional, has_id, has_value, is_default;
    uint32_t id;
    int64_t value;
    int64_t bit_bound; /* @bit_bound; 0 none */
    char *default_value;
    bool has_autoid;  /* @autoid on a struct or module */
    bool autoid_hash; /* ... with HASH (else SEQUENTIAL) */
    bool has_hashid;  /* @hashid on a member: its id from `hashid`, or its name when empty */
    char hashid[MAX_NAME];
} annots;

static int perr(idl_parser *p, const token *t, const char *what)
{
    if (t->kind == T_END)
        return rl_error_set(RL_EPARSE, "schema '%s': line %zu, column %zu: %s, found the end of the text",
                            p->schema, t->line, t->col, what);
    return rl_error_set(RL_EPARSE, "schema '%s': line %zu, column %zu: %s, found '%.*s'", p->schema,
                        t->line, t->col, what, (int)(t->n > 40 ? 40 : t->n), t->p);
}

/* ---- Lexer ------------------------------------------------------------------------------ */

static void advance_char(idl_parser *p)
{
    if (*p->cur == '\n') {
        p->line++;
        p->col = 1;
    } else {
        p->col++;
    }
    p->cur++;
}

static int next(idl_parser *p)
{
    for (;;) {
        while (p->cur < p->end && isspace((unsigned char)*p->cur))
            advance_char(p);
        if (p->cur + 1 < p->end && p->cur[0] == '/' && p->cur[1] == '/') {
            while (p->cur < p->end && *p->cur != '\n')
                advance_char(p);
        } else if (p->cur + 1 < p->end && p->cur[0] == '/' && p->cur[1] == '*') {
            token t = {T_PUNCT, p->cur, 2, p->line, p->col};
            advance_char(p);
            advance_char(p);
            while (p->cur + 1 < p->end && !(p->cur[0] == '*' && p->cur[1] == '/'))
                advance_char(p);
            if (p->cur + 1 >= p->end)
                return perr(p, &t, "comment not closed");
            advance_char(p);
            advance_char(p);
        } else if (p->cur < p->end && *p->cur == '#' && p->col == 1) {
            /* #include, #pragma, #ifndef ...: a preprocessor line, tolerated */
            while (p->cur < p->end && *p->cur != '\n')
                advance_char(p);
        } else if (p->cur < p->end && *p->cur == '#') {
            const char *b = p->cur;
            while (b > p->text && (b[-1] == ' ' || b[-1] == '\t'))
                b--;
            if (b != p->text && b[-1] != '\n')
                break;
            while (p->cur < p->end && *p->cur != '\n')
                advance_char(p);
        } else {
            break;
        }
    }
    token *t = &p->tok;
    t->p = p->cur;
    t->line = p->line;
    t->col = p->col;
    if (p->cur >= p->end) {
        t->kind = T_END;
        t->n = 0;
        return RL_OK;
    }
    char c = *p->cur;
    if (isalpha((unsigned char)c) || c == '_') {
        while (p->cur < p->end && (isalnum((unsigned char)*p->cur) || *p->cur == '_'))
            advance_char(p);
        t->kind = T_ID;
    } else if (isdigit((unsigned char)c) || (c == '.' && p->cur + 1 < p->end && isdigit((unsigned char)p->cur[1]))) {
        t->kind = T_INT;
        if (c == '0' && p->cur + 1 < p->end && (p->cur[1] == 'x' || p->cur[1] == 'X')) {
            advance_char(p);
            advance_char(p);
            while (p->cur < p->end && isxdigit((unsigned char)*p->cur))
                advance_char(p);
        } else {
            while (p->cur < p->end && (isalnum((unsigned char)*p->cur) || *p->cur == '.' ||
                                       ((*p->cur == '-' || *p->cur == '+') &&
                                        (p->cur[-1] == 'e' || p->cur[-1] == 'E')))) {
                if (*p->cur == '.' || *p->cur == 'e' || *p->cur == 'E')
                    t->kind = T_FLOAT;
                advance_char(p);
            }
        }
    } else if (c == '"' || c == '\'') {
        t->kind = c == '"' ? T_STRING : T_CHAR;
        advance_char(p);
        while (p->cur < p->end && *p->cur != c && *p->cur != '\n') {
            if (*p->cur == '\\' && p->cur + 1 < p->end)
                advance_char(p);
            advance_char(p);
        }
        if (p->cur >= p->end || *p->cur != c)
            return perr(p, t, c == '"' ? "string not closed" : "character not closed");
        advance_char(p);
    } else {
        t->kind = T_PUNCT;
        if (p->cur + 1 < p->end && ((c == ':' && p->cur[1] == ':') || (c == '<' && p->cur[1] == '<') ||
                                    (c == '>' && p->cur[1] == '>')))
            advance_char(p);
        advance_char(p);
    }
    t->n = (size_t)(p->cur - t->p);
    return RL_OK;
}

static int is(const idl_parser *p, const char *s)
{
    return p->tok.kind != T_END && p->tok.kind != T_STRING && strlen(s) == p->tok.n &&
           memcmp(p->tok.p, s, p->tok.n) == 0;
}

static int expect(idl_parser *p, const char *s)
{
    if (!is(p, s)) {
        char msg[64];
        snprintf(msg, sizeof msg, "expected '%s'", s);
        return perr(p, &p->tok, msg);
    }
    return next(p);
}

static int ident(idl_parser *p, char *out, size_t cap, const char *what)
{
    if (p->tok.kind != T_ID || p->tok.n >= cap) {
        char msg[96];
        snprintf(msg, sizeof msg, "expected %s", what);
        return perr(p, &p->tok, msg);
    }
    memcpy(out, p->tok.p, p->tok.n);
    out[p->tok.n] = '\0';
    return next(p);
}

/* ---- Symbols ---------------------------------------------------------------------------- */

static int add_symbol(idl_parser *p, const char *name, sym_kind kind, uint32_t type, int has_int,
                      int64_t ival)
{
    uint32_t i;
    if (msgdef_names_get(&p->sym_index, name, strlen(name), &i)) {
        if (p->syms[i].kind == S_FORWARD && kind == S_TYPE) {
            p->syms[i].kind = S_TYPE;
            return RL_OK;
        }
        if (kind == S_FORWARD)
            return RL_OK;
        return rl_error_set(RL_EPARSE, "schema '%s': line %zu: '%s' is declared twice", p->schema,
                            p->tok.line, name);
    }
    if (p->nsyms >= UINT32_MAX / 2)
        return rl_error_set(RL_ERANGE, "schema '%s': too many names", p->schema);
    symbol s = {.name = strdup(name), .kind = kind, .type = type, .has_int = has_int, .ival = ival};
    if (!s.name)
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    int rc = msgdef_names_put(&p->sym_index, name, strlen(name), (uint32_t)p->nsyms);
    if (rc == RL_OK)
        rc = msgdef_push((void **)&p->syms, &p->nsyms, &p->csyms, sizeof s, &s);
    if (rc < 0)
        free(s.name);
    return rc;
}

static symbol *find_symbol(idl_parser *p, const char *full)
{
    uint32_t i;
    return msgdef_names_get(&p->sym_index, full, strlen(full), &i) ? &p->syms[i] : NULL;
}

static int scoped(const idl_parser *p, const char *name, char *out)
{
    int n = p->scope[0] ? snprintf(out, MAX_NAME, "%s::%s", p->scope, name)
                        : snprintf(out, MAX_NAME, "%s", name);
    return n > 0 && n < MAX_NAME ? RL_OK : RL_ERANGE;
}

/* Finds `name` (maybe "a::B", maybe "::a::B") from the current scope outwards. */
static symbol *lookup(idl_parser *p, const char *name)
{
    char full[MAX_NAME * 2];
    if (name[0] == ':' && name[1] == ':')
        name += 2;
    else {
        char sc[MAX_NAME];
        memcpy(sc, p->scope, sizeof sc);
        for (;;) {
            if (sc[0])
                snprintf(full, sizeof full, "%s::%s", sc, name);
            else
                snprintf(full, sizeof full, "%s", name);
            symbol *found = find_symbol(p, full);
            if (found)
                return found;
            if (!sc[0])
                return NULL;
            char *last = NULL;
            for (char *s = strstr(sc, "::"); s; s = strstr(s + 2, "::"))
                last = s;
            if (last)
                *last = '\0';
            else
                sc[0] = '\0';
        }
    }
    return find_symbol(p, name);
}

static int scoped_name(idl_parser *p, char *out)
{
    size_t n = 0;
    out[0] = '\0';
    if (is(p, "::")) {
        memcpy(out, "::", 3);
        n = 2;
        int rc = next(p);
        if (rc < 0)
            return rc;
    }
    for (;;) {
        if (p->tok.kind != T_ID || n + p->tok.n + 3 >= MAX_NAME)
            return perr(p, &p->tok, "expected a name");
        memcpy(out + n, p->tok.p, p->tok.n);
        n += p->tok.n;
        out[n] = '\0';
        int rc = next(p);
        if (rc < 0)
            return rc;
        if (!is(p, "::"))
            return RL_OK;
        memcpy(out + n, "::", 3);
        n += 2;
        if ((rc = next(p)) < 0)
            return rc;
    }
}

/* ---- Constant expressions (integers) ------------------------------------------------------ */

static int expr_or(idl_parser *p, int64_t *v);

static int expr_primary(idl_parser *p, int64_t *v)
{
    token t = p->tok;
    int rc;
    if (is(p, "(")) {
        int saved = p->in_template;
        p->in_template = 0;
        if ((rc = next(p)) < 0 || (rc = expr_or(p, v)) < 0)
            return rc;
        p->in_template = saved;
        return expect(p, ")");
    }
    if (is(p, "-") || is(p, "+") || is(p, "~")) {
        char op = *p->tok.p;
        if ((rc = next(p)) < 0 || (rc = expr_primary(p, v)) < 0)
            return rc;
        *v = op == '-' ? (int64_t)(0 - (uint64_t)*v) : op == '~' ? ~*v : *v;
        return RL_OK;
    }
    if (t.kind == T_INT) {
        char buf[64];
        if (t.n >= sizeof buf)
            return perr(p, &t, "integer too long");
        memcpy(buf, t.p, t.n);
        buf[t.n] = '\0';
        size_t n = t.n;
        while (n && (buf[n - 1] == 'l' || buf[n - 1] == 'L' || buf[n - 1] == 'u' || buf[n - 1] == 'U'))
            buf[--n] = '\0';
        char *endp;
        unsigned long long u = strtoull(buf, &endp, buf[0] == '0' && buf[1] != 'x' && buf[1] != 'X' && buf[1] ? 8 : 0);
        if (*endp)
            return perr(p, &t, "expected an integer");
        *v = (int64_t)u;
        return next(p);
    }
    if (t.kind == T_CHAR && t.n >= 3) {
        *v = (unsigned char)t.p[1];
        return next(p);
    }
    if (is(p, "TRUE") || is(p, "FALSE")) {
        *v = is(p, "TRUE");
        return next(p);
    }
    if (t.kind == T_ID || is(p, "::")) {
        char name[MAX_NAME];
        if ((rc = scoped_name(p, name)) < 0)
            return rc;
        symbol *s = lookup(p, name);
        if (!s || !s->has_int) {
            char msg[MAX_NAME + 64];
            snprintf(msg, sizeof msg, "expected an integer constant or enumerator ('%s' is not one)", name);
            return perr(p, &t, msg);
        }
        *v = s->ival;
        return RL_OK;
    }
    return perr(p, &t, "expected an integer expression");
}

static int expr_mul(idl_parser *p, int64_t *v)
{
    int rc = expr_primary(p, v);
    while (rc == RL_OK && (is(p, "*") || is(p, "/") || is(p, "%"))) {
        char op = *p->tok.p;
        token t = p->tok;
        int64_t r;
        if ((rc = next(p)) < 0 || (rc = expr_primary(p, &r)) < 0)
            return rc;
        if (op != '*' && r == 0)
            return perr(p, &t, "division by zero");
        *v = op == '*' ? (int64_t)((uint64_t)*v * (uint64_t)r)
             : op == '/' ? (r == -1 ? (int64_t)(0 - (uint64_t)*v) : *v / r)
                         : (r == -1 ? 0 : *v % r);
    }
    return rc;
}

static int expr_add(idl_parser *p, int64_t *v)
{
    int rc = expr_mul(p, v);
    while (rc == RL_OK && (is(p, "+") || is(p, "-"))) {
        char op = *p->tok.p;
        int64_t r;
        if ((rc = next(p)) < 0 || (rc = expr_mul(p, &r)) < 0)
            return rc;
        *v = op == '+' ? (int64_t)((uint64_t)*v + (uint64_t)r) : (int64_t)((uint64_t)*v - (uint64_t)r);
    }
    return rc;
}

static int expr_shift(idl_parser *p, int64_t *v)
{
    int rc = expr_add(p, v);
    while (rc == RL_OK && (is(p, "<<") || (is(p, ">>") && !p->in_template))) {
        int left = is(p, "<<");
        int64_t r;
        if ((rc = next(p)) < 0 || (rc = expr_add(p, &r)) < 0)
            return rc;
        r &= 63;
        *v = left ? (int64_t)((uint64_t)*v << r) : (int64_t)((uint64_t)*v >> r);
    }
    return rc;
}

static int expr_or(idl_parser *p, int64_t *v)
{
    int rc = expr_shift(p, v);
    while (rc == RL_OK && (is(p, "|") || is(p, "&") || is(p, "^"))) {
        char op = *p->tok.p;
        int64_t r;
        if ((rc = next(p)) < 0 || (rc = expr_shift(p, &r)) < 0)
            return rc;
        *v = op == '|' ? (*v | r) : op == '&' ? (*v & r) : (*v ^ r);
    }
    return rc;
}

static int positive_bound(idl_parser *p, uint32_t *out)
{
    token t = p->tok;
    int64_t v;
    int rc = expr_or(p, &v);
    p->in_template = 0;
    if (rc < 0)
        return rc;
    if (v <= 0 || v > (int64_t)UINT32_MAX)
        return perr(p, &t, "expected a bound of 1..4294967295");
    *out = (uint32_t)v;
    return RL_OK;
}

/* ---- Annotations -------------------------------------------------------------------------- */

/* The text of an annotation's parameters: "(...)" with nesting, without the parentheses. */
static int annotation_params(idl_parser *p, const char **b, size_t *n)
{
    *b = NULL;
    *n = 0;
    if (!is(p, "("))
        return RL_OK;
    token open = p->tok;
    int depth = 0;
    const char *start = p->cur;
    for (;;) {
        if (p->tok.kind == T_END)
            return perr(p, &open, "annotation parameters not closed");
        if (is(p, "("))
            depth++;
        if (is(p, ")") && --depth == 0) {
            *b = start;
            *n = (size_t)(p->tok.p - start);
            return next(p);
        }
        int rc = next(p);
        if (rc < 0)
            return rc;
    }
}

static int parse_int_text(idl_parser *p, const char *b, size_t n, int64_t *v)
{
    /* evaluate the parameter text with a sub-parser (shares the symbol table) */
    idl_parser sub = *p;
    sub.text = sub.cur = b;
    sub.end = b + n;
    int rc = next(&sub);
    if (rc == RL_OK)
        rc = expr_or(&sub, v);
    if (rc == RL_OK && sub.tok.kind != T_END)
        rc = perr(&sub, &sub.tok, "expected the end of the annotation parameter");
    return rc;
}

static int annotations(idl_parser *p, annots *a)
{
    memset(a, 0, sizeof *a);
    while (is(p, "@")) {
        int rc = next(p);
        char name[MAX_NAME];
        if (rc < 0 || (rc = scoped_name(p, name)) < 0)
            return rc;
        token at = p->tok;
        const char *pb;
        size_t pn;
        if ((rc = annotation_params(p, &pb, &pn)) < 0)
            return rc;
        int64_t v = 0;
        if (strcmp(name, "final") == 0)
            a->ext = RL_MSG_EXT_FINAL;
        else if (strcmp(name, "appendable") == 0)
            a->ext = RL_MSG_EXT_APPENDABLE;
        else if (strcmp(name, "mutable") == 0)
            a->ext = RL_MSG_EXT_MUTABLE;
        else if (strcmp(name, "extensibility") == 0) {
            a->ext = pn >= 5 && strstr(pb, "FINAL") && strstr(pb, "FINAL") < pb + pn ? RL_MSG_EXT_FINAL
                   : pn >= 7 && strstr(pb, "MUTABLE") && strstr(pb, "MUTABLE") < pb + pn ? RL_MSG_EXT_MUTABLE
                                                                                           : RL_MSG_EXT_APPENDABLE;
        } else if (strcmp(name, "default_extensibility") == 0) {
            a->default_ext = pn && memmem(pb, pn, "FINAL", 5)        ? RL_MSG_EXT_FINAL
                           : pn && memmem(pb, pn, "APPENDABLE", 10) ? RL_MSG_EXT_APPENDABLE
                           : pn && memmem(pb, pn, "MUTABLE", 7)     ? RL_MSG_EXT_MUTABLE
                                                                    : RL_MSG_EXT_DEFAULT;
            if (a->default_ext == RL_MSG_EXT_DEFAULT)
                return perr(p, &at, "expected @default_extensibility(FINAL), (APPENDABLE) or (MUTABLE)");
        } else if (strcmp(name, "key") == 0)
            a->key = !(pn && memmem(pb, pn, "FALSE", 5));
        else if (strcmp(name, "optional") == 0)
            a->optional = !(pn && memmem(pb, pn, "FALSE", 5));
        else if (strcmp(name, "id") == 0 || strcmp(name, "value") == 0) {
            if (!pn)
                return perr(p, &at, "expected '(' and a value after the annotation");
            if ((rc = parse_int_text(p, pb, pn, &v)) < 0)
                return rc;
            if (name[0] == 'i') {
                if (v < 0 || v > 0x0fffffff)
                    return perr(p, &at, "expected an @id of 0..268435455");
                a->has_id = true;
                a->id = (uint32_t)v;
            } else {
                a->has_value = true;
                a->value = v;
            }
        } else if (strcmp(name, "autoid") == 0) {
            a->has_autoid = true;
            a->autoid_hash = pn && memmem(pb, pn, "HASH", 4); /* else SEQUENTIAL */
        } else if (strcmp(name, "hashid") == 0) {
            a->has_hashid = true;
            const char *q = pn ? memchr(pb, '"', pn) : NULL;
            const char *e = q ? memchr(q + 1, '"', pn - (size_t)(q + 1 - pb)) : NULL;
            if (pn && (!q || !e || (size_t)(e - q - 1) >= sizeof a->hashid))
                return perr(p, &at, "expected @hashid or @hashid(\"name\")");
            if (q && e)
                snprintf(a->hashid, sizeof a->hashid, "%.*s", (int)(e - q - 1), q + 1);
        } else if (strcmp(name, "bit_bound") == 0 && pn) {
            if ((rc = parse_int_text(p, pb, pn, &v)) < 0)
                return rc;
            a->bit_bound = v;
        } else if (strcmp(name, "default") == 0 && pn) {
            free(a->default_value);
            a->default_value = msgdef_strndup(pb, pn);
            if (!a->default_value)
                return rl_error_set(RL_ENOMEM, "schema: out of memory");
        }
        /* @verbatim, @topic, @nested, @unit, @range and unknown ones: kept out */
    }
    return RL_OK;
}

/* ---- Types -------------------------------------------------------------------------------- */

static const struct {
    const char *words;
    rl_msg_kind kind;
} base_types[] = {
    {"boolean", RL_MSG_BOOL},     {"octet", RL_MSG_OCTET},       {"char", RL_MSG_CHAR},
    {"wchar", RL_MSG_UINT16},     {"int8", RL_MSG_INT8},         {"uint8", RL_MSG_UINT8},
    {"int16", RL_MSG_INT16},      {"uint16", RL_MSG_UINT16},     {"int32", RL_MSG_INT32},
    {"uint32", RL_MSG_UINT32},    {"int64", RL_MSG_INT64},       {"uint64", RL_MSG_UINT64},
    {"float", RL_MSG_FLOAT32},    {"double", RL_MSG_FLOAT64},    {"short", RL_MSG_INT16},
    {"long", RL_MSG_INT32},
};

static int type_spec(idl_parser *p, uint32_t *out);

/* '>' closing a template; the lexer reads ">>" (sequence<sequence<long>>) as one token,
 * which is split here: one '>' consumed, the other left as the current token. */
static int close_angle(idl_parser *p)
{
    if (is(p, ">>")) {
        p->tok.p++;
        p->tok.n = 1;
        p->tok.col++;
        return RL_OK;
    }
    return expect(p, ">");
}

static int sequence_or_string(idl_parser *p, uint32_t *out)
{
    int rc;
    if (is(p, "sequence")) {
        uint32_t elem, bound = 0;
        if ((rc = next(p)) < 0 || (rc = expect(p, "<")) < 0 || (rc = type_spec(p, &elem)) < 0)
            return rc;
        p->in_template = 1;
        if (is(p, ",") && ((rc = next(p)) < 0 || (rc = positive_bound(p, &bound)) < 0))
            return rc;
        p->in_template = 0;
        if ((rc = close_angle(p)) < 0)
            return rc;
        return msgdef_array_type(p->d, RL_MSG_SEQUENCE, elem, bound, false, out);
    }
    rl_msg_kind k = is(p, "string") ? RL_MSG_STRING : RL_MSG_WSTRING;
    uint32_t bound = 0;
    if ((rc = next(p)) < 0)
        return rc;
    p->in_template = is(p, "<");
    if (is(p, "<") && ((rc = next(p)) < 0 || (rc = positive_bound(p, &bound)) < 0 ||
                       (rc = close_angle(p)) < 0))
        return rc;
    return msgdef_string_type(p->d, k, bound, out);
}

static int type_spec(idl_parser *p, uint32_t *out)
{
    int rc;
    if (is(p, "sequence") || is(p, "string") || is(p, "wstring"))
        return sequence_or_string(p, out);
    if (is(p, "unsigned")) {
        if ((rc = next(p)) < 0)
            return rc;
        if (is(p, "short")) {
            *out = RL_MSG_UINT16;
            return next(p);
        }
        if (!is(p, "long"))
            return perr(p, &p->tok, "expected 'short' or 'long' after 'unsigned'");
        if ((rc = next(p)) < 0)
            return rc;
        if (is(p, "long")) {
            *out = RL_MSG_UINT64;
            return next(p);
        }
        *out = RL_MSG_UINT32;
        return RL_OK;
    }
    if (is(p, "long")) {
        if ((rc = next(p)) < 0)
            return rc;
        if (is(p, "long")) {
            *out = RL_MSG_INT64;
            return next(p);
        }
        if (is(p, "double"))
            return perr(p, &p->tok, "'long double' is not supported");
        *out = RL_MSG_INT32;
        return RL_OK;
    }
    for (size_t i = 0; i < sizeof base_types / sizeof base_types[0]; i++)
        if (is(p, base_types[i].words)) {
            *out = base_types[i].kind;
            return next(p);
        }
    if (is(p, "bool") || is(p, "byte") || is(p, "float32") || is(p, "float64")) {
        *out = is(p, "bool") ? RL_MSG_BOOL : is(p, "byte") ? RL_MSG_OCTET
             : is(p, "float32") ? RL_MSG_FLOAT32 : RL_MSG_FLOAT64;
        return next(p);
    }
    token t = p->tok;
    char name[MAX_NAME];
    if ((rc = scoped_name(p, name)) < 0)
        return perr(p, &t, "expected a type");
    symbol *s = lookup(p, name);
    if (!s || s->kind == S_CONST) {
        char msg[MAX_NAME + 32];
        snprintf(msg, sizeof msg, "unknown type '%s'", name);
        return perr(p, &t, msg);
    }
    *out = s->type;
    return RL_OK;
}

/* Array dimensions after a declarator's name: [2][3] -> ARRAY(2, ARRAY(3, base, inner)). */
static int array_dims(idl_parser *p, uint32_t base, uint32_t *out)
{
    uint32_t dims[16];
    size_t nd = 0;
    int rc;
    while (is(p, "[")) {
        if (nd == 16)
            return perr(p, &p->tok, "more than 16 array dimensions");
        if ((rc = next(p)) < 0 || (rc = positive_bound(p, &dims[nd++])) < 0 || (rc = expect(p, "]")) < 0)
            return rc;
    }
    uint32_t t = base;
    for (size_t i = nd; i-- > 0;)
        if ((rc = msgdef_array_type(p->d, RL_MSG_ARRAY, t, dims[i], i > 0, &t)) < 0)
            return rc;
    *out = t;
    return RL_OK;
}

/* ---- Declarations ------------------------------------------------------------------------- */

static int definitions(idl_parser *p, const char *closing);

static void free_members(rl_msg_member *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((void *)m[i].name);
        free((void *)m[i].default_value);
        free((void *)m[i].labels);
    }
    free(m);
}

/* Creates (or finds the forward declaration of) the named struct/union type. */
static int declare_type(idl_parser *p, const char *name, rl_msg_kind kind, uint32_t *idx)
{
    char full[MAX_NAME];
    if (scoped(p, name, full) < 0)
        return perr(p, &p->tok, "name too long");
    symbol *s = lookup(p, name);
    if (s && s->kind == S_FORWARD && strcmp(s->name, full) == 0) {
        *idx = s->type;
        return RL_OK;
    }
    rl_msg_type t = {.kind = kind, .name = strdup(full)};
    if (!t.name)
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    int rc = msgdef_add_type(p->d, &t, idx);
    if (rc < 0) {
        free((void *)t.name);
        return rc;
    }
    return add_symbol(p, full, S_FORWARD, *idx, 0, 0);
}

/* The member id XTypes 1.3 (7.3.1.2.1.1) gives a name under @autoid(HASH) or @hashid: the
 * first four bytes of the MD5 digest of the name (UTF-8, no NUL), little-endian, masked to
 * 28 bits. */
static int hashed_member_id(const char *name, uint32_t *id)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_Digest(name, strlen(name), digest, &n, EVP_md5(), NULL) != 1 || n < 4)
        return rl_error_set(RL_EUNSUPPORTED, "schema: MD5 (for @autoid(HASH)) is not available");
    *id = ((uint32_t)digest[0] | (uint32_t)digest[1] << 8 | (uint32_t)digest[2] << 16 |
           (uint32_t)digest[3] << 24) & 0x0fffffffu;
    return RL_OK;
}

static int struct_def(idl_parser *p, const annots *ta)
{
    char name[MAX_NAME];
    int rc = next(p);
    if (rc < 0 || (rc = ident(p, name, sizeof name, "a struct name")) < 0)
        return rc;
    uint32_t idx;
    if ((rc = declare_type(p, name, RL_MSG_STRUCT, &idx)) < 0)
        return rc;
    if (is(p, ";")) /* forward declaration */
        return RL_OK;
    rl_msg_member *members = NULL;
    size_t nm = 0, cm = 0;
    msgdef_names member_names = {0}; /* for "member declared twice" in constant time */
    uint32_t next_id = 0;
    rl_msg_ext base_ext = RL_MSG_EXT_DEFAULT; /* a derived struct says what its base says */
    if (is(p, ":")) {
        token t;
        char base[MAX_NAME];
        if ((rc = next(p)) < 0)
            return rc;
        t = p->tok;
        if ((rc = scoped_name(p, base)) < 0)
            return rc;
        symbol *s = lookup(p, base);
        if (!s || s->kind != S_TYPE || p->d->types[s->type].kind != RL_MSG_STRUCT)
            return perr(p, &t, "expected a defined struct to inherit from");
        const rl_msg_type *bt = &p->d->types[s->type];
        base_ext = bt->ext;
        for (size_t i = 0; i < bt->nmembers; i++) {
            rl_msg_member m = bt->members[i];
            m.name = strdup(m.name);
            m.default_value = m.default_value ? strdup(m.default_value) : NULL;
            if (!m.name || msgdef_push((void **)&members, &nm, &cm, sizeof m, &m) < 0 ||
                msgdef_names_put(&member_names, m.name, strlen(m.name), 0) < 0) {
                if (nm == 0 || members[nm - 1].name != m.name) {
                    free((void *)m.name);
                    free((void *)m.default_value);
                }
                free_members(members, nm);
                msgdef_names_free(&member_names);
                return rl_error_set(RL_ENOMEM, "schema: out of memory");
            }
            next_id = m.id + 1;
        }
    }
    if ((rc = expect(p, "{")) < 0) {
        free_members(members, nm);
        msgdef_names_free(&member_names);
        return rc;
    }
    while (rc == RL_OK && !is(p, "}")) {
        annots a;
        uint32_t base;
        rc = annotations(p, &a);
        if (rc == RL_OK)
            rc = type_spec(p, &base);
        for (int first = 1; rc == RL_OK && (first || is(p, ",")); first = 0) {
            if (!first && (rc = next(p)) < 0)
                break;
            char mname[MAX_NAME];
            uint32_t mt;
            token at = p->tok;
            if ((rc = ident(p, mname, sizeof mname, "a member name")) < 0 ||
                (rc = array_dims(p, base, &mt)) < 0)
                break;
            if (msgdef_names_get(&member_names, mname, strlen(mname), NULL)) {
                rc = perr(p, &at, "member declared twice");
                break;
            }
            if ((rc = msgdef_names_put(&member_names, mname, strlen(mname), 0)) < 0)
                break;
            rl_msg_member m = {.name = strdup(mname), .type = mt, .optional = a.optional, .key = a.key,
                               .id = a.has_id ? a.id : next_id};
            bool hashed = ta->has_autoid ? ta->autoid_hash : p->module_autoid_hash;
            if (!a.has_id && (a.has_hashid || hashed) &&
                (rc = hashed_member_id(a.has_hashid && a.hashid[0] ? a.hashid : mname, &m.id)) < 0) {
                free((void *)m.name);
                break;
            }
            next_id = m.id + 1;
            if (a.default_value)
                m.default_value = strdup(a.default_value);
            if (!m.name || msgdef_push((void **)&members, &nm, &cm, sizeof m, &m) < 0) {
                free((void *)m.name);
                free((void *)m.default_value);
                rc = rl_error_set(RL_ENOMEM, "schema: out of memory");
            }
        }
        free(a.default_value);
        if (rc == RL_OK)
            rc = expect(p, ";");
    }
    if (rc == RL_OK)
        rc = next(p); /* '}' */
    msgdef_names_free(&member_names);
    if (rc < 0) {
        free_members(members, nm);
        return rc;
    }
    rl_msg_type *t = &p->d->types[idx];
    if (t->members) {
        free_members(members, nm);
        return perr(p, &p->tok, "struct defined twice");
    }
    t->members = members;
    t->nmembers = nm;
    t->ext = ta->ext ? ta->ext : base_ext ? base_ext : p->module_ext;
    char full[MAX_NAME];
    scoped(p, name, full);
    return add_symbol(p, full, S_TYPE, idx, 0, 0);
}

static int enum_def(idl_parser *p, const annots *ta)
{
    /* an enum of @bit_bound 1..16 takes 1 or 2 bytes in XCDR2: not read, so refused */
    if (ta->bit_bound && ta->bit_bound != 32)
        return perr(p, &p->tok, "an enum with @bit_bound other than 32 is not supported");
    char name[MAX_NAME], full[MAX_NAME];
    int rc = next(p);
    if (rc < 0 || (rc = ident(p, name, sizeof name, "an enum name")) < 0)
        return rc;
    if (scoped(p, name, full) < 0)
        return perr(p, &p->tok, "name too long");
    if ((rc = expect(p, "{")) < 0)
        return rc;
    rl_msg_member *members = NULL;
    size_t nm = 0, cm = 0;
    int64_t value = 0;
    while (rc == RL_OK) {
        annots a;
        char ename[MAX_NAME], efull[MAX_NAME * 2];
        rc = annotations(p, &a);
        free(a.default_value);
        if (rc < 0 || (rc = ident(p, ename, sizeof ename, "an enumerator")) < 0)
            break;
        if (a.has_value)
            value = a.value;
        rl_msg_member m = {.name = strdup(ename), .value = value, .id = (uint32_t)nm};
        if (!m.name || msgdef_push((void **)&members, &nm, &cm, sizeof m, &m) < 0) {
            free((void *)m.name);
            rc = rl_error_set(RL_ENOMEM, "schema: out of memory");
            break;
        }
        /* enumerators live in the enclosing scope, and as E::A */
        char sname[MAX_NAME];
        if (scoped(p, ename, sname) < 0 || snprintf(efull, sizeof efull, "%s::%s", full, ename) < 0) {
            rc = perr(p, &p->tok, "name too long");
            break;
        }
        if ((rc = add_symbol(p, sname, S_CONST, RL_MSG_INT32, 1, value)) < 0 ||
            (rc = add_symbol(p, efull, S_CONST, RL_MSG_INT32, 1, value)) < 0)
            break;
        value++;
        if (!is(p, ","))
            break;
        rc = next(p);
    }
    if (rc == RL_OK)
        rc = expect(p, "}");
    if (rc < 0) {
        free_members(members, nm);
        return rc;
    }
    rl_msg_type t = {.kind = RL_MSG_ENUM, .name = strdup(full), .members = members, .nmembers = nm};
    uint32_t idx;
    if (!t.name || (rc = msgdef_add_type(p->d, &t, &idx)) < 0) {
        free((void *)t.name);
        free_members(members, nm);
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    }
    return add_symbol(p, full, S_TYPE, idx, 0, 0);
}

static int union_def(idl_parser *p, const annots *ta)
{
    char name[MAX_NAME];
    int rc = next(p);
    if (rc < 0 || (rc = ident(p, name, sizeof name, "a union name")) < 0)
        return rc;
    uint32_t idx, disc;
    if ((rc = declare_type(p, name, RL_MSG_UNION, &idx)) < 0)
        return rc;
    if (is(p, ";"))
        return RL_OK;
    token dt;
    annots da;
    if ((rc = expect(p, "switch")) < 0 || (rc = expect(p, "(")) < 0 || (rc = annotations(p, &da)) < 0)
        return rc;
    free(da.default_value);
    dt = p->tok;
    if ((rc = type_spec(p, &disc)) < 0 || (rc = expect(p, ")")) < 0 || (rc = expect(p, "{")) < 0)
        return rc;
    rl_msg_kind dk = p->d->types[disc].kind;
    if (!(dk == RL_MSG_ENUM || dk == RL_MSG_BOOL || dk == RL_MSG_CHAR || dk == RL_MSG_OCTET ||
          (dk >= RL_MSG_INT8 && dk <= RL_MSG_UINT64)))
        return perr(p, &dt, "expected an integer, char, boolean or enum discriminator");
    rl_msg_member *members = NULL;
    size_t nm = 0, cm = 0;
    while (rc == RL_OK && !is(p, "}")) {
        int64_t *labels = NULL;
        size_t nl = 0, cl = 0;
        bool is_default = false;
        if (!is(p, "case") && !is(p, "default"))
            rc = perr(p, &p->tok, "expected 'case' or 'default'");
        while (rc == RL_OK && (is(p, "case") || is(p, "default"))) {
            if (is(p, "default")) {
                is_default = true;
                if ((rc = next(p)) == RL_OK)
                    rc = expect(p, ":");
                continue;
            }
            int64_t v;
            if ((rc = next(p)) < 0 || (rc = expr_or(p, &v)) < 0)
                break;
            if ((rc = msgdef_push((void **)&labels, &nl, &cl, sizeof v, &v)) == RL_OK)
                rc = expect(p, ":");
        }
        annots a = {0};
        uint32_t mt;
        char mname[MAX_NAME];
        if (rc == RL_OK)
            rc = annotations(p, &a);
        if (rc == RL_OK)
            rc = type_spec(p, &mt);
        if (rc == RL_OK)
            rc = ident(p, mname, sizeof mname, "a union member name");
        if (rc == RL_OK)
            rc = array_dims(p, mt, &mt);
        if (rc == RL_OK)
            rc = expect(p, ";");
        free(a.default_value);
        if (rc < 0) {
            free(labels);
            break;
        }
        rl_msg_member m = {.name = strdup(mname), .type = mt, .labels = labels, .nlabels = nl,
                           .is_default_case = is_default, .id = a.has_id ? a.id : (uint32_t)nm + 1};
        if (!m.name || msgdef_push((void **)&members, &nm, &cm, sizeof m, &m) < 0) {
            free((void *)m.name);
            free(labels);
            rc = rl_error_set(RL_ENOMEM, "schema: out of memory");
        }
    }
    if (rc == RL_OK)
        rc = next(p);
    if (rc < 0) {
        free_members(members, nm);
        return rc;
    }
    rl_msg_type *t = &p->d->types[idx];
    t->members = members;
    t->nmembers = nm;
    t->elem = disc;
    t->ext = ta->ext ? ta->ext : p->module_ext;
    char full[MAX_NAME];
    scoped(p, name, full);
    return add_symbol(p, full, S_TYPE, idx, 0, 0);
}

static int typedef_def(idl_parser *p)
{
    uint32_t base;
    int rc = next(p);
    if (rc < 0 || (rc = type_spec(p, &base)) < 0)
        return rc;
    for (int first = 1; first || is(p, ","); first = 0) {
        char name[MAX_NAME], full[MAX_NAME];
        uint32_t t;
        if ((!first && (rc = next(p)) < 0) || (rc = ident(p, name, sizeof name, "a typedef name")) < 0 ||
            (rc = array_dims(p, base, &t)) < 0)
            return rc;
        if (scoped(p, name, full) < 0)
            return perr(p, &p->tok, "name too long");
        if ((rc = add_symbol(p, full, S_TYPE, t, 0, 0)) < 0)
            return rc;
    }
    return RL_OK;
}

static int const_def(idl_parser *p)
{
    uint32_t type;
    char name[MAX_NAME], full[MAX_NAME];
    int rc = next(p);
    if (rc < 0 || (rc = type_spec(p, &type)) < 0 || (rc = ident(p, name, sizeof name, "a constant name")) < 0 ||
        (rc = expect(p, "=")) < 0)
        return rc;
    if (scoped(p, name, full) < 0)
        return perr(p, &p->tok, "name too long");
    rl_msg_kind k = p->d->types[type].kind;
    const char *vb = p->tok.p;
    int64_t v = 0;
    int has_int = 0;
    if ((k >= RL_MSG_OCTET && k <= RL_MSG_UINT64) || k == RL_MSG_ENUM || k == RL_MSG_BOOL) {
        if ((rc = expr_or(p, &v)) < 0)
            return rc;
        has_int = 1;
    } else {
        while (p->tok.kind != T_END && !is(p, ";"))
            if ((rc = next(p)) < 0)
                return rc;
    }
    const char *ve = p->tok.p;
    while (ve > vb && isspace((unsigned char)ve[-1]))
        ve--;
    rl_msg_constant c = {.name = strdup(full), .type = type, .value = msgdef_strndup(vb, (size_t)(ve - vb))};
    if (!c.name || !c.value ||
        msgdef_push((void **)&p->d->constants, &p->d->nconstants, &p->d->cconstants, sizeof c, &c) < 0) {
        free((void *)c.name);
        free((void *)c.value);
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    }
    return add_symbol(p, full, S_CONST, type, has_int, v);
}

static int module_def(idl_parser *p, const annots *ma)
{
    char name[MAX_NAME];
    int rc = next(p);
    if (rc < 0 || (rc = ident(p, name, sizeof name, "a module name")) < 0 || (rc = expect(p, "{")) < 0)
        return rc;
    if (++p->nest > MAX_NEST)
        return perr(p, &p->tok, "modules nested too deeply");
    char saved[MAX_NAME], inner[MAX_NAME];
    memcpy(saved, p->scope, sizeof saved);
    if (scoped(p, name, inner) < 0)
        return perr(p, &p->tok, "name too long");
    memcpy(p->scope, inner, sizeof inner);
    /* A module's @autoid and @default_extensibility hold for the types inside it that do not
       say their own. */
    bool saved_autoid = p->module_autoid_hash;
    if (ma->has_autoid)
        p->module_autoid_hash = ma->autoid_hash;
    rl_msg_ext saved_ext = p->module_ext;
    if (ma->default_ext)
        p->module_ext = ma->default_ext;
    rc = definitions(p, "}");
    p->module_ext = saved_ext;
    p->module_autoid_hash = saved_autoid;
    memcpy(p->scope, saved, sizeof saved);
    p->nest--;
    return rc < 0 ? rc : next(p);
}

static int definitions(idl_parser *p, const char *closing)
{
    int rc = RL_OK;
    while (rc == RL_OK) {
        if (closing ? is(p, closing) : p->tok.kind == T_END)
            return RL_OK;
        if (p->tok.kind == T_END)
            return perr(p, &p->tok, "expected '}' closing the module");
        annots a;
        if ((rc = annotations(p, &a)) < 0)
            return rc;
        free(a.default_value);
        if (is(p, "module"))
            rc = module_def(p, &a);
        else if (is(p, "struct"))
            rc = struct_def(p, &a);
        else if (is(p, "enum"))
            rc = enum_def(p, &a);
        else if (is(p, "union"))
            rc = union_def(p, &a);
        else if (is(p, "typedef"))
            rc = typedef_def(p);
        else if (is(p, "const"))
            rc = const_def(p);
        else
            return perr(p, &p->tok, "expected module, struct, enum, union, typedef or const");
        if (rc == RL_OK)
            rc = expect(p, ";");
    }
    return rc;
}

int msgdef_parse_idl(rl_msgdef *d, const char *name, const char *text, size_t len)
{
    idl_parser p = {.d = d, .schema = name, .text = text, .end = text + len, .cur = text, .line = 1, .col = 1,
                    .module_ext = RL_MSG_EXT_FINAL};
    int rc = next(&p);
    if (rc == RL_OK)
        rc = definitions(&p, NULL);
    uint32_t root = 0;
    if (rc == RL_OK) {
        /* the root: the fully qualified name, else the one struct whose last part matches */
        const char *want = strncmp(name, "::", 2) == 0 ? name + 2 : name;
        int found = 0;
        for (size_t i = 0; i < p.nsyms && !found; i++)
            if (p.syms[i].kind == S_TYPE && strcmp(p.syms[i].name, want) == 0 &&
                d->types[p.syms[i].type].kind == RL_MSG_STRUCT) {
                root = p.syms[i].type;
                found = 1;
            }
        for (size_t i = 0; i < p.nsyms && !found; i++) {
            const char *n = p.syms[i].name;
            size_t nl = strlen(n), wl = strlen(want);
            if (p.syms[i].kind == S_TYPE && d->types[p.syms[i].type].kind == RL_MSG_STRUCT &&
                nl > wl + 2 && strcmp(n + nl - wl, want) == 0 && n[nl - wl - 1] == ':') {
                if (found == 1) {
                    found = 2;
                    break;
                }
                root = p.syms[i].type;
                found = 1;
            }
        }
        if (found != 1)
            rc = rl_error_set(RL_EPARSE, "schema '%s': the text defines no struct of that name", name);
        for (size_t i = 0; rc == RL_OK && i < p.nsyms; i++)
            if (p.syms[i].kind == S_FORWARD)
                rc = rl_error_set(RL_EPARSE, "schema '%s': '%s' is declared but never defined", name,
                                  p.syms[i].name);
    }
    for (size_t i = 0; i < p.nsyms; i++)
        free(p.syms[i].name);
    free(p.syms);
    msgdef_names_free(&p.sym_index);
    return rc < 0 ? rc : msgdef_finish(d, root);
}
