/* The ros2msg schema parser: the text MCAP's ros2 profile stores (the main definition,
 * then each dependency after a line of '=' and "MSG: pkg/Type"), `.srv` services and the
 * rosbag2 service event type (<Srv>_Event), into the type model of runlab/msgdef.h. */
#include "msgdef_internal.h"

#include "runlab/error.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SECTIONS = 4096, MAX_NAME = 256 };

typedef struct section {
    char name[MAX_NAME]; /* "pkg/msg/Type" */
    const char *start, *end;
    size_t first_line; /* line number of the section's first line (1-based) */
    uint32_t type;
} section;

typedef struct ros2_parser {
    rl_msgdef *d;
    const char *schema;
    section *secs;
    size_t nsecs, cap;
} ros2_parser;

static int perr(const ros2_parser *p, size_t line, size_t col, const char *what)
{
    return rl_error_set(RL_EPARSE, "schema '%s': line %zu, column %zu: %s", p->schema, line, col,
                        what);
}

/* "pkg/Type" or "pkg/msg/Type" -> "pkg/msg/Type"; a bare "Type" gets package `pkg`. */
static int full_name(const char *ref, size_t n, const char *pkg, size_t pkg_len, char *out)
{
    const char *slash = memchr(ref, '/', n);
    int w;
    if (!slash) {
        if (n == 6 && memcmp(ref, "Header", 6) == 0 && !(pkg_len == 8 && !memcmp(pkg, "std_msgs", 8)))
            w = snprintf(out, MAX_NAME, "std_msgs/msg/Header");
        else
            w = snprintf(out, MAX_NAME, "%.*s/msg/%.*s", (int)pkg_len, pkg, (int)n, ref);
    } else if (memchr(slash + 1, '/', (size_t)(ref + n - slash - 1))) {
        w = snprintf(out, MAX_NAME, "%.*s", (int)n, ref);
    } else {
        w = snprintf(out, MAX_NAME, "%.*s/msg/%.*s", (int)(slash - ref), ref,
                     (int)(ref + n - slash - 1), slash + 1);
    }
    return w > 0 && w < MAX_NAME ? RL_OK : RL_ERANGE;
}

static size_t pkg_len_of(const char *full)
{
    const char *s = strchr(full, '/');
    return s ? (size_t)(s - full) : 0;
}

static section *find_section(ros2_parser *p, const char *full)
{
    for (size_t i = 0; i < p->nsecs; i++)
        if (strcmp(p->secs[i].name, full) == 0)
            return &p->secs[i];
    return NULL;
}

static int add_section(ros2_parser *p, const char *name, const char *start, const char *end,
                       size_t line)
{
    if (p->nsecs >= MAX_SECTIONS)
        return perr(p, line, 1, "too many MSG sections");
    section s = {.start = start, .end = end, .first_line = line};
    size_t n = strlen(name);
    if (n >= sizeof s.name)
        return perr(p, line, 1, "type name too long");
    memcpy(s.name, name, n + 1);
    return msgdef_push((void **)&p->secs, &p->nsecs, &p->cap, sizeof s, &s);
}

/* Built-in definitions used when the text does not carry them. */
static const struct {
    const char *name, *text;
} builtins[] = {
    {"builtin_interfaces/msg/Time", "int32 sec\nuint32 nanosec\n"},
    {"builtin_interfaces/msg/Duration", "int32 sec\nuint32 nanosec\n"},
    {"service_msgs/msg/ServiceEventInfo",
     "uint8 REQUEST_SENT = 0\nuint8 REQUEST_RECEIVED = 1\nuint8 RESPONSE_SENT = 2\n"
     "uint8 RESPONSE_RECEIVED = 3\nuint8 event_type\nbuiltin_interfaces/Time stamp\n"
     "char[16] client_gid\nint64 sequence_number\n"},
};

static int parse_uint(const char *s, size_t n, uint32_t *out)
{
    if (n == 0 || n > 10)
        return RL_EPARSE;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return RL_EPARSE;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > UINT32_MAX)
        return RL_EPARSE;
    *out = (uint32_t)v;
    return RL_OK;
}

static const struct {
    const char *name;
    rl_msg_kind kind;
} prim_words[] = {
    {"bool", RL_MSG_BOOL},       {"byte", RL_MSG_OCTET},      {"char", RL_MSG_CHAR},
    {"int8", RL_MSG_INT8},       {"uint8", RL_MSG_UINT8},     {"int16", RL_MSG_INT16},
    {"uint16", RL_MSG_UINT16},   {"int32", RL_MSG_INT32},     {"uint32", RL_MSG_UINT32},
    {"int64", RL_MSG_INT64},     {"uint64", RL_MSG_UINT64},   {"float32", RL_MSG_FLOAT32},
    {"float64", RL_MSG_FLOAT64}, {"string", RL_MSG_STRING},   {"wstring", RL_MSG_WSTRING},
};

static int resolve_section(ros2_parser *p, const char *full, uint32_t *type);

/* Parses the type token at tok[0..n) of a line of section `sec`. */
static int parse_type(ros2_parser *p, const section *sec, const char *tok, size_t n, size_t line,
                      size_t col, uint32_t *out)
{
    const char *br = memchr(tok, '[', n);
    size_t base_n = br ? (size_t)(br - tok) : n;
    const char *le = NULL;
    for (size_t i = 0; i + 1 < base_n; i++)
        if (tok[i] == '<' && tok[i + 1] == '=') {
            le = tok + i;
            break;
        }
    size_t word_n = le ? (size_t)(le - tok) : base_n;
    uint32_t base = 0;
    for (size_t i = 0; i < sizeof prim_words / sizeof prim_words[0]; i++)
        if (strlen(prim_words[i].name) == word_n && memcmp(prim_words[i].name, tok, word_n) == 0)
            base = prim_words[i].kind;
    if (le) {
        uint32_t bound;
        if (base != RL_MSG_STRING && base != RL_MSG_WSTRING)
            return perr(p, line, col, "expected '<=N' only after string or wstring");
        if (parse_uint(le + 2, (size_t)(tok + base_n - le - 2), &bound) < 0 || bound == 0)
            return perr(p, line, col + (size_t)(le - tok) + 2, "expected a string bound (1..4294967295)");
        int rc = msgdef_string_type(p->d, (rl_msg_kind)base, bound, &base);
        if (rc < 0)
            return rc;
    } else if (!base) {
        for (size_t i = 0; i < word_n; i++)
            if (!isalnum((unsigned char)tok[i]) && tok[i] != '_' && tok[i] != '/')
                return perr(p, line, col + i, "expected a type name (letters, digits, '_', '/')");
        if (word_n == 0 || !isalpha((unsigned char)tok[0]))
            return perr(p, line, col, "expected a type name");
        char full[MAX_NAME];
        if (full_name(tok, word_n, sec->name, pkg_len_of(sec->name), full) < 0)
            return perr(p, line, col, "type name too long");
        int rc = resolve_section(p, full, &base);
        if (rc == RL_ENOENT) {
            char msg[MAX_NAME + 64];
            snprintf(msg, sizeof msg, "unknown type '%s' (no MSG: section defines it)", full);
            return perr(p, line, col, msg);
        }
        if (rc < 0)
            return rc;
    }
    if (!br) {
        *out = base;
        return RL_OK;
    }
    const char *close = memchr(br, ']', (size_t)(tok + n - br));
    if (!close || close != tok + n - 1)
        return perr(p, line, col + (size_t)(br - tok), "expected ']' closing the array bound");
    const char *in = br + 1;
    size_t in_n = (size_t)(close - in);
    rl_msg_kind kind = RL_MSG_ARRAY;
    uint32_t bound = 0;
    if (in_n == 0) {
        kind = RL_MSG_SEQUENCE;
    } else if (in_n >= 2 && in[0] == '<' && in[1] == '=') {
        kind = RL_MSG_SEQUENCE;
        if (parse_uint(in + 2, in_n - 2, &bound) < 0 || bound == 0)
            return perr(p, line, col + (size_t)(in - tok) + 2, "expected a sequence bound (1..4294967295)");
    } else if (parse_uint(in, in_n, &bound) < 0 || bound == 0) {
        return perr(p, line, col + (size_t)(in - tok), "expected an array length, '<=N' or ']'");
    }
    return msgdef_array_type(p->d, kind, base, bound, false, out);
}

static const char *skip_ws(const char *s, const char *e)
{
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    return s;
}

/* Strips a comment ('#' outside quotes) and trailing blanks from [s, e). */
static const char *strip_comment(const char *s, const char *e)
{
    char quote = 0;
    const char *p = s;
    for (; p < e; p++) {
        if (quote) {
            if (*p == quote)
                quote = 0;
        } else if (*p == '"' || *p == '\'') {
            quote = *p;
        } else if (*p == '#') {
            break;
        }
    }
    while (p > s && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\r'))
        p--;
    return p;
}

static int parse_fields(ros2_parser *p, section *sec)
{
    rl_msg_member *members = NULL;
    rl_msg_constant *consts = NULL;
    size_t nm = 0, cm = 0, nc = 0, cc = 0;
    int rc = RL_OK;
    size_t line = sec->first_line;
    for (const char *s = sec->start; s < sec->end && rc == RL_OK; line++) {
        const char *eol = memchr(s, '\n', (size_t)(sec->end - s));
        if (!eol)
            eol = sec->end;
        const char *lb = s;
        s = eol < sec->end ? eol + 1 : eol;
        const char *b = skip_ws(lb, eol);
        if (b == eol || *b == '#')
            continue;
        const char *te = b;
        while (te < eol && *te != ' ' && *te != '\t')
            te++;
        uint32_t type;
        rc = parse_type(p, sec, b, (size_t)(te - b), line, (size_t)(b - lb) + 1, &type);
        if (rc < 0)
            break;
        const char *nb = skip_ws(te, eol);
        const char *ne = nb;
        while (ne < eol && (isalnum((unsigned char)*ne) || *ne == '_'))
            ne++;
        if (ne == nb || !isalpha((unsigned char)*nb)) {
            rc = perr(p, line, (size_t)(nb - lb) + 1, "expected a field name after the type");
            break;
        }
        const char *rest = skip_ws(ne, eol);
        int is_const = rest < eol && *rest == '=';
        const char *vb = is_const ? skip_ws(rest + 1, eol) : rest;
        const rl_msg_type *ty = &p->d->types[type];
        int is_string = ty->kind == RL_MSG_STRING || ty->kind == RL_MSG_WSTRING;
        const char *ve = is_const && is_string ? eol : strip_comment(vb, eol);
        if (is_const && is_string)
            while (ve > vb && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
                ve--;
        if (!is_const && vb < ve && *vb != '#' && ne < eol && *ne != ' ' && *ne != '\t') {
            rc = perr(p, line, (size_t)(ne - lb) + 1, "expected a blank, '=' or the end of the line after the field name");
            break;
        }
        if (is_const) {
            if (vb == ve) {
                rc = perr(p, line, (size_t)(vb - lb) + 1, "expected the constant's value after '='");
                break;
            }
            if (ty->kind > RL_MSG_WSTRING) {
                rc = perr(p, line, (size_t)(b - lb) + 1, "expected a primitive or string type for a constant");
                break;
            }
            rl_msg_constant c = {.name = msgdef_strndup(nb, (size_t)(ne - nb)), .type = type,
                                 .value = msgdef_strndup(vb, (size_t)(ve - vb))};
            if (!c.name || !c.value ||
                msgdef_push((void **)&consts, &nc, &cc, sizeof c, &c) < 0) {
                free((void *)c.name);
                free((void *)c.value);
                rc = rl_error_set(RL_ENOMEM, "schema: out of memory");
            }
            continue;
        }
        rl_msg_member m = {.name = msgdef_strndup(nb, (size_t)(ne - nb)), .type = type,
                           .id = (uint32_t)nm};
        if (vb < ve)
            m.default_value = msgdef_strndup(vb, (size_t)(ve - vb));
        if (!m.name || (vb < ve && !m.default_value) ||
            msgdef_push((void **)&members, &nm, &cm, sizeof m, &m) < 0) {
            free((void *)m.name);
            free((void *)m.default_value);
            rc = rl_error_set(RL_ENOMEM, "schema: out of memory");
        }
    }
    /* rosidl gives an empty message one uint8 so that every type has a size. */
    if (rc == RL_OK && nm == 0) {
        rl_msg_member m = {.name = strdup("structure_needs_at_least_one_member"),
                           .type = RL_MSG_UINT8, .hidden = true};
        if (!m.name || msgdef_push((void **)&members, &nm, &cm, sizeof m, &m) < 0) {
            free((void *)m.name);
            rc = rl_error_set(RL_ENOMEM, "schema: out of memory");
        }
    }
    rl_msg_type *t = &p->d->types[sec->type];
    t->members = members;
    t->nmembers = nm;
    t->constants = consts;
    t->nconstants = nc;
    return rc;
}

/* Index of the struct `full`, parsing its section on first use (depth-first, so a type
 * is complete before its user; a cycle finds the placeholder and is caught later). */
static int resolve_section(ros2_parser *p, const char *full, uint32_t *type)
{
    section *sec = find_section(p, full);
    if (!sec) {
        for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
            if (strcmp(builtins[i].name, full) == 0) {
                int rc = add_section(p, full, builtins[i].text,
                                     builtins[i].text + strlen(builtins[i].text), 1);
                if (rc < 0)
                    return rc;
                sec = &p->secs[p->nsecs - 1];
            }
        if (!sec)
            return RL_ENOENT;
    }
    if (sec->type) {
        *type = sec->type;
        return RL_OK;
    }
    rl_msg_type t = {.kind = RL_MSG_STRUCT, .name = strdup(full)};
    uint32_t idx;
    if (!t.name)
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    int rc = msgdef_add_type(p->d, &t, &idx);
    if (rc < 0) {
        free((void *)t.name);
        return rc;
    }
    size_t si = (size_t)(sec - p->secs);
    p->secs[si].type = idx;
    section copy = p->secs[si]; /* parse_fields may grow p->secs */
    rc = parse_fields(p, &copy);
    *type = idx;
    return rc;
}

static int is_rule_line(const char *b, const char *e)
{
    b = skip_ws(b, e);
    if (b == e || *b != '=')
        return 0;
    while (b < e && *b == '=')
        b++;
    return skip_ws(b, e) == e;
}

/* Splits the text into the main section and the MSG: sections; the main one may hold a
 * service ("---" lines), whose parts become <Srv>_Request / _Response sections. */
static int split_sections(ros2_parser *p, const char *root, const char *text, size_t len,
                          int *is_service)
{
    const char *end = text + len, *s = text;
    const char *cur_start = text;
    size_t cur_line = 1, line = 1;
    char cur_name[MAX_NAME];
    snprintf(cur_name, sizeof cur_name, "%s", root);
    const char *dash = NULL;
    size_t dash_line = 0;
    *is_service = 0;
    int in_main = 1;
    while (s < end) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        const char *le = eol ? eol : end;
        const char *next = eol ? eol + 1 : end;
        if (is_rule_line(s, le)) {
            /* closes the current section; "MSG: name" must follow */
            int rc = RL_OK;
            if (in_main && dash) {
                char nm[MAX_NAME + 16];
                snprintf(nm, sizeof nm, "%s_Request", cur_name);
                rc = add_section(p, nm, cur_start, dash, cur_line);
                const char *after = memchr(dash, '\n', (size_t)(end - dash));
                snprintf(nm, sizeof nm, "%s_Response", cur_name);
                if (rc == RL_OK)
                    rc = add_section(p, nm, after ? after + 1 : s, s, dash_line + 1);
            } else {
                rc = add_section(p, cur_name, cur_start, s, cur_line);
            }
            if (rc < 0)
                return rc;
            in_main = 0;
            line++;
            s = next;
            /* skip blank lines up to the MSG: line */
            while (s < end) {
                const char *e2 = memchr(s, '\n', (size_t)(end - s));
                const char *l2 = e2 ? e2 : end;
                if (skip_ws(s, l2) != l2)
                    break;
                s = e2 ? e2 + 1 : end;
                line++;
            }
            const char *e2 = s < end ? memchr(s, '\n', (size_t)(end - s)) : NULL;
            const char *l2 = e2 ? e2 : end;
            const char *b = skip_ws(s, l2);
            if ((size_t)(l2 - b) < 4 || memcmp(b, "MSG:", 4) != 0)
                return perr(p, line, (size_t)(b - s) + 1, "expected 'MSG: pkg/Type' after a line of '='");
            const char *nb = skip_ws(b + 4, l2);
            const char *ne = l2;
            while (ne > nb && (ne[-1] == ' ' || ne[-1] == '\t' || ne[-1] == '\r'))
                ne--;
            if (ne == nb || full_name(nb, (size_t)(ne - nb), "", 0, cur_name) < 0 ||
                !memchr(nb, '/', (size_t)(ne - nb)))
                return perr(p, line, (size_t)(nb - s) + 1, "expected a type name 'pkg/Type' after 'MSG:'");
            line++;
            s = e2 ? e2 + 1 : end;
            cur_start = s;
            cur_line = line;
            continue;
        }
        const char *b = skip_ws(s, le);
        if (in_main && le - b >= 3 && memcmp(b, "---", 3) == 0 && skip_ws(b + 3, le) == le) {
            if (dash)
                return perr(p, line, 1, "a service has one '---' line; found a second");
            dash = b;
            dash_line = line;
            *is_service = 1;
        }
        s = next;
        line++;
    }
    if (in_main && dash) {
        char nm[MAX_NAME + 16];
        snprintf(nm, sizeof nm, "%s_Request", cur_name);
        int rc = add_section(p, nm, cur_start, dash, cur_line);
        const char *after = memchr(dash, '\n', (size_t)(end - dash));
        snprintf(nm, sizeof nm, "%s_Response", cur_name);
        return rc < 0 ? rc : add_section(p, nm, after ? after + 1 : end, end, dash_line + 1);
    }
    return add_section(p, cur_name, cur_start, end, cur_line);
}

static int strip_suffix(char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    if (n > k && strcmp(s + n - k, suffix) == 0) {
        s[n - k] = '\0';
        return 1;
    }
    return 0;
}

/* The rosbag2 service event: info, request[<=1], response[<=1]. */
static int make_event(ros2_parser *p, const char *srv, uint32_t *root)
{
    char nm[MAX_NAME + 16];
    uint32_t info, req, resp, req_seq, resp_seq;
    int rc = resolve_section(p, "service_msgs/msg/ServiceEventInfo", &info);
    snprintf(nm, sizeof nm, "%s_Request", srv);
    if (rc == RL_OK)
        rc = resolve_section(p, nm, &req);
    snprintf(nm, sizeof nm, "%s_Response", srv);
    if (rc == RL_OK)
        rc = resolve_section(p, nm, &resp);
    if (rc == RL_OK)
        rc = msgdef_array_type(p->d, RL_MSG_SEQUENCE, req, 1, false, &req_seq);
    if (rc == RL_OK)
        rc = msgdef_array_type(p->d, RL_MSG_SEQUENCE, resp, 1, false, &resp_seq);
    if (rc < 0)
        return rc;
    rl_msg_member *m = calloc(3, sizeof *m);
    snprintf(nm, sizeof nm, "%s_Event", srv);
    rl_msg_type t = {.kind = RL_MSG_STRUCT, .name = strdup(nm), .members = m, .nmembers = 3};
    const char *names[3] = {"info", "request", "response"};
    uint32_t types[3] = {info, req_seq, resp_seq};
    int ok = m && t.name;
    for (int i = 0; ok && i < 3; i++) {
        m[i].name = strdup(names[i]);
        m[i].type = types[i];
        m[i].id = (uint32_t)i;
        ok = m[i].name != NULL;
    }
    if (!ok || msgdef_add_type(p->d, &t, root) < 0) {
        for (int i = 0; m && i < 3; i++)
            free((void *)m[i].name);
        free(m);
        free((void *)t.name);
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    }
    return RL_OK;
}

int msgdef_parse_ros2(rl_msgdef *d, const char *name, const char *text, size_t len)
{
    ros2_parser p = {.d = d, .schema = name};
    char root[MAX_NAME];
    size_t nlen = strlen(name);
    if (nlen == 0 || full_name(name, nlen, "", 0, root) < 0 || !strchr(name, '/')) {
        rl_error_set(RL_EPARSE, "schema '%s': expected a name 'pkg/msg/Type'", name);
        return RL_EPARSE;
    }
    /* "pkg/srv/X_Event" (or _Request/_Response, or the bare service) names the service X. */
    char srv[MAX_NAME];
    snprintf(srv, sizeof srv, "%s", root);
    int want = strip_suffix(srv, "_Event") ? 1 : strip_suffix(srv, "_Request") ? 2
                                             : strip_suffix(srv, "_Response") ? 3 : 0;
    int is_service = 0;
    int rc = split_sections(&p, want ? srv : root, text, len, &is_service);
    uint32_t r = 0;
    if (rc == RL_OK && is_service) {
        char nm[MAX_NAME + 16];
        const char *base = want ? srv : root;
        if (want == 2 || want == 3) {
            snprintf(nm, sizeof nm, "%s%s", base, want == 2 ? "_Request" : "_Response");
            rc = resolve_section(&p, nm, &r);
        } else {
            rc = make_event(&p, base, &r);
        }
    } else if (rc == RL_OK) {
        if (want && !find_section(&p, root)) /* a message whose name merely ends so */
            snprintf(p.secs[0].name, sizeof p.secs[0].name, "%s", root);
        rc = resolve_section(&p, p.secs[0].name, &r);
    }
    /* parse every remaining section too, so errors anywhere in the text are reported */
    for (size_t i = 0; rc == RL_OK && i < p.nsecs; i++) {
        uint32_t ignored;
        char nm[MAX_NAME];
        memcpy(nm, p.secs[i].name, sizeof nm);
        rc = resolve_section(&p, nm, &ignored);
    }
    free(p.secs);
    if (rc == RL_ENOENT)
        rc = rl_error_set(RL_EPARSE, "schema '%s': unknown type", name);
    return rc < 0 ? rc : msgdef_finish(d, r);
}
