/* Messages as table rows (runlab/msgdef.h "Tables"): the flat column list of a type —
 * leaves by full path, short fixed arrays expanded, sequences and unions as one JSON cell —
 * and a visitor of the decoder that fills one row's cells. */
#include "cdr_internal.h"

#include "core/text.h"
#include "runlab/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_COLUMNS = 1 << 20 };

static int expanded(const rl_msg_type *ty)
{
    return ty->kind == RL_MSG_STRUCT || (ty->kind == RL_MSG_ARRAY && ty->bound <= RL_MSG_MAX_EXPANDED);
}

/* Number of columns of type t (capped at MAX_COLUMNS + 1). */
static size_t count_columns(const rl_msgdef *d, uint32_t t, int depth)
{
    const rl_msg_type *ty = &d->types[t];
    if (!expanded(ty) || depth > 100)
        return 1;
    if (ty->kind == RL_MSG_ARRAY) {
        size_t e = count_columns(d, ty->elem, depth + 1);
        return e > MAX_COLUMNS / (ty->bound ? ty->bound : 1) ? MAX_COLUMNS + 1 : e * ty->bound;
    }
    size_t n = 0;
    for (size_t i = 0; i < ty->nmembers && n <= MAX_COLUMNS; i++)
        if (!ty->members[i].hidden)
            n += count_columns(d, ty->members[i].type, depth + 1);
    return n;
}

typedef struct col_builder {
    char **names;
    size_t n, cap;
    char path[CDR_PATH_MAX];
    size_t plen;
} col_builder;

static int add_columns(const rl_msgdef *d, uint32_t t, col_builder *b)
{
    const rl_msg_type *ty = &d->types[t];
    if (!expanded(ty)) {
        char *name = strdup(b->plen ? b->path : "value");
        if (!name || msgdef_push((void **)&b->names, &b->n, &b->cap, sizeof name, &name) < 0) {
            free(name);
            return rl_error_set(RL_ENOMEM, "columns: out of memory");
        }
        return RL_OK;
    }
    size_t saved = b->plen;
    size_t n = ty->kind == RL_MSG_ARRAY ? ty->bound : ty->nmembers;
    for (size_t i = 0; i < n; i++) {
        int w;
        uint32_t et = ty->elem;
        if (ty->kind == RL_MSG_ARRAY) {
            w = snprintf(b->path + saved, sizeof b->path - saved, "[%zu]", i);
        } else {
            if (ty->members[i].hidden)
                continue;
            et = ty->members[i].type;
            w = snprintf(b->path + saved, sizeof b->path - saved, "%s%s", saved ? "." : "",
                         ty->members[i].name);
        }
        if (w < 0 || (size_t)w >= sizeof b->path - saved)
            return rl_error_set(RL_ERANGE, "columns: field path longer than %d bytes", CDR_PATH_MAX);
        b->plen = saved + (size_t)w;
        int rc = add_columns(d, et, b);
        b->plen = saved;
        b->path[saved] = '\0';
        if (rc < 0)
            return rc;
    }
    return RL_OK;
}

void rl_msg_columns_free(char **names, size_t count)
{
    for (size_t i = 0; names && i < count; i++)
        free(names[i]);
    free(names);
}

int rl_msg_columns(const rl_msgdef *def, char ***names, size_t *count)
{
    if (!def || !names || !count)
        return rl_error_set(RL_EINVAL, "columns: NULL argument");
    *names = NULL;
    *count = 0;
    if (count_columns(def, def->root, 0) > MAX_COLUMNS)
        return rl_error_set(RL_ERANGE, "columns: the type has more than %d leaf fields", MAX_COLUMNS);
    col_builder b = {0};
    int rc = add_columns(def, def->root, &b);
    if (rc < 0) {
        rl_msg_columns_free(b.names, b.n);
        return rc;
    }
    *names = b.names;
    *count = b.n;
    return RL_OK;
}

typedef struct row_state {
    const rl_msgdef *def;
    rl_msg_row *row;
    cdr_json_out j;
    size_t cell;
    int capturing;
} row_state;

static int start_cell(row_state *s)
{
    if (s->cell >= s->row->ncols)
        return rl_error_set(RL_ERANGE, "row: more cells than columns");
    s->row->offsets[s->cell++] = s->j.len;
    return RL_OK;
}

static int row_visit(void *ctx, const rl_msg_visit *v)
{
    row_state *s = ctx;
    if (s->capturing) {
        int rc = cdr_json_visit(&s->j, v);
        if (s->j.depth == 0)
            s->capturing = 0;
        return rc;
    }
    int rc;
    switch (v->event) {
    case RL_MSG_BEGIN_STRUCT:
    case RL_MSG_BEGIN_ARRAY:
        if (v->path_len == 0 || expanded(v->type))
            return 0;
        if ((rc = start_cell(s)) < 0)
            return rc;
        s->capturing = 1;
        return cdr_json_visit(&s->j, v);
    case RL_MSG_END_STRUCT:
    case RL_MSG_END_ARRAY:
        return 0;
    case RL_MSG_ABSENT: {
        size_t k = count_columns(s->def, (uint32_t)(v->type - s->def->types), 0);
        for (size_t i = 0; i < k; i++)
            if ((rc = start_cell(s)) < 0)
                return rc;
        return 0;
    }
    default:
        if ((rc = start_cell(s)) < 0)
            return rc;
        if (v->value.kind == RL_MSG_STRING) {
            if (cdr_json_reserve(&s->j, v->value.v.s.len) < 0)
                return RL_ENOMEM;
            memcpy(*s->j.buf + s->j.len, v->value.v.s.ptr, v->value.v.s.len);
            s->j.len += v->value.v.s.len;
            return 0;
        }
        if (v->value.kind == RL_MSG_WSTRING) { /* raw UTF-8, as strings */
            size_t n = rl_msg_wstring_utf8(&v->value, NULL, 0);
            if (cdr_json_reserve(&s->j, n + 1) < 0)
                return RL_ENOMEM;
            s->j.len += rl_msg_wstring_utf8(&v->value, *s->j.buf + s->j.len, n + 1);
            return 0;
        }
        size_t at = s->j.len;
        cdr_json_put_value(&s->j, &v->value);
        if (s->j.len > at + 1 && (*s->j.buf)[at] == '"') { /* "NaN" -> NaN */
            memmove(*s->j.buf + at, *s->j.buf + at + 1, s->j.len - at - 2);
            s->j.len -= 2;
        }
        return s->j.oom ? RL_ENOMEM : 0;
    }
}

int rl_msg_row_decode(const rl_msgdef *def, const uint8_t *data, size_t len, rl_msg_row *row)
{
    if (!def || !row)
        return rl_error_set(RL_EINVAL, "row: NULL argument");
    if (!row->offsets) {
        size_t n = count_columns(def, def->root, 0);
        if (n > MAX_COLUMNS)
            return rl_error_set(RL_ERANGE, "row: the type has more than %d leaf fields", MAX_COLUMNS);
        row->offsets = malloc((n + 1) * sizeof *row->offsets);
        if (!row->offsets)
            return rl_error_set(RL_ENOMEM, "row: out of memory");
        row->ncols = n;
    }
    row_state s = {.def = def, .row = row, .j = {.buf = &row->buf, .cap = &row->cap}};
    int rc = rl_msg_decode(def, data, len, row_visit, &s);
    if (rc == RL_OK && s.cell != row->ncols)
        rc = rl_error_set(RL_ERANGE, "row: %zu cells for %zu columns", s.cell, row->ncols);
    if (rc == RL_OK && cdr_json_reserve(&s.j, 0) < 0)
        rc = RL_ENOMEM;
    if (rc == RL_OK) {
        row->offsets[row->ncols] = s.j.len;
        (*s.j.buf)[s.j.len] = '\0';
    }
    return rc < 0 ? rc : RL_OK;
}

void rl_msg_row_free(rl_msg_row *row)
{
    if (!row)
        return;
    free(row->buf);
    free(row->offsets);
    memset(row, 0, sizeof *row);
}
