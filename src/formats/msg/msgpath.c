/* Field paths over CDR payloads ("pose.pose.position.x", "transforms[0].header.stamp.sec"):
 * compiled once against a schema into member/index steps, then read from each payload by
 * skipping what lies before the field instead of decoding the whole message. */
#include "cdr_internal.h"

#include "core/text.h"
#include "runlab/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct path_step {
    int is_index;
    size_t n; /* member position or element index */
} path_step;

struct rl_msg_path {
    const rl_msgdef *def;
    path_step *steps;
    size_t nsteps;
    char *text;
};

void rl_msg_path_free(rl_msg_path *p)
{
    if (!p)
        return;
    free(p->steps);
    free(p->text);
    free(p);
}

static int compile_steps(rl_msg_path *p, const char *path)
{
    const rl_msgdef *def = p->def;
    uint32_t t = def->root;
    size_t cap = 0;
    const char *s = path;
    int expect_name = 1;
    while (*s) {
        const rl_msg_type *ty = &def->types[t];
        path_step st = {0};
        if (*s == '[') {
            char *endp;
            if (!isdigit((unsigned char)s[1]))
                return rl_error_set(RL_EINVAL, "field path '%s': column %zu: expected an index",
                                    path, (size_t)(s - path) + 2);
            unsigned long long idx = strtoull(s + 1, &endp, 10);
            if (*endp != ']')
                return rl_error_set(RL_EINVAL, "field path '%s': column %zu: expected ']'", path,
                                    (size_t)(endp - path) + 1);
            if (ty->kind != RL_MSG_ARRAY && ty->kind != RL_MSG_SEQUENCE)
                return rl_error_set(RL_ENOENT, "field path '%s': '%.*s' is not an array", path,
                                    (int)(s - path), path);
            if ((ty->kind == RL_MSG_ARRAY || ty->bound) && idx >= ty->bound)
                return rl_error_set(RL_ENOENT, "field path '%s': index %llu is past the bound %u",
                                    path, idx, ty->bound);
            st.is_index = 1;
            st.n = (size_t)idx;
            t = ty->elem;
            s = endp + 1;
            expect_name = 0;
        } else {
            if (!expect_name) {
                if (*s != '.')
                    return rl_error_set(RL_EINVAL, "field path '%s': column %zu: expected '.' or '['",
                                        path, (size_t)(s - path) + 1);
                s++;
            }
            const char *e = s;
            while (*e && *e != '.' && *e != '[')
                e++;
            if (e == s)
                return rl_error_set(RL_EINVAL, "field path '%s': column %zu: expected a field name",
                                    path, (size_t)(s - path) + 1);
            if (ty->kind != RL_MSG_STRUCT && ty->kind != RL_MSG_UNION)
                return rl_error_set(RL_ENOENT, "field path '%s': '%.*s' has no fields", path,
                                    (int)(s - path), path);
            size_t m = 0;
            while (m < ty->nmembers &&
                   !(strlen(ty->members[m].name) == (size_t)(e - s) &&
                     memcmp(ty->members[m].name, s, (size_t)(e - s)) == 0))
                m++;
            if (m == ty->nmembers)
                return rl_error_set(RL_ENOENT, "field path '%s': %s '%s' has no field '%.*s'", path,
                                    ty->kind == RL_MSG_UNION ? "union" : "type", ty->name,
                                    (int)(e - s), s);
            st.n = m;
            t = ty->members[m].type;
            s = e;
            expect_name = 0;
        }
        int rc = rl_grow_array((void **)&p->steps, &cap, p->nsteps + 1, sizeof st, "field path");
        if (rc < 0)
            return rc;
        p->steps[p->nsteps++] = st;
    }
    rl_msg_kind k = def->types[t].kind;
    if (p->nsteps == 0 || (k > RL_MSG_WSTRING && k != RL_MSG_ENUM))
        return rl_error_set(RL_ENOENT, "field path '%s': does not end at a primitive, string or "
                                       "enum field", path);
    return RL_OK;
}

int rl_msg_path_compile(rl_msg_path **out, const rl_msgdef *def, const char *path)
{
    if (!out || !def || !path)
        return rl_error_set(RL_EINVAL, "field path: NULL argument");
    *out = NULL;
    rl_msg_path *p = calloc(1, sizeof *p);
    if (!p || !(p->text = strdup(path))) {
        free(p);
        return rl_error_set(RL_ENOMEM, "field path: out of memory");
    }
    p->def = def;
    int rc = compile_steps(p, path);
    if (rc < 0) {
        rl_msg_path_free(p);
        return rc;
    }
    *out = p;
    return RL_OK;
}

static int absent(cdr_dec *d, const char *what)
{
    return rl_error_set(RL_ENOENT, "field '%s': %s", d->path, what);
}

static int enter_struct_member(cdr_dec *d, const rl_msg_type *ty, size_t mi)
{
    const rl_msg_member *m = &ty->members[mi];
    rl_msg_ext ext = cdr_ext(d, ty);
    cdr_frame f;
    int rc;
    if (ext == RL_MSG_EXT_MUTABLE) {
        size_t data = 0, size = 0, after = 0;
        int found;
        if (d->v2) {
            if ((rc = cdr_dheader(d, &f)) < 0)
                return rc;
            found = cdr_find_emheader(d, f.body_start, f.body_end, m->id, &data, &size);
        } else {
            found = cdr_find_param(d, d->pos, m->id, &data, &size, &after);
            d->origin = data;
        }
        cdr_push_name(d, m->name);
        if (found <= 0)
            return found < 0 ? found : absent(d, "member not present");
        d->pos = data;
        d->end = data + size;
        return RL_OK;
    }
    if (ext == RL_MSG_EXT_APPENDABLE && d->v2) {
        if ((rc = cdr_dheader(d, &f)) < 0)
            return rc;
    }
    d->in_appendable = ext == RL_MSG_EXT_APPENDABLE && d->v2;
    for (size_t j = 0; j < mi; j++) {
        int present;
        size_t saved = cdr_push_name(d, ty->members[j].name);
        rc = cdr_member_enter(d, &ty->members[j], &f, &present);
        if (rc == RL_OK && present)
            rc = cdr_skip_value(d, ty->members[j].type);
        cdr_member_leave(d, &f);
        cdr_pop(d, saved);
        if (rc < 0)
            return rc;
    }
    cdr_push_name(d, m->name);
    int present;
    if ((rc = cdr_member_enter(d, m, &f, &present)) < 0)
        return rc;
    return present ? RL_OK : absent(d, "optional member not present");
}

int rl_msg_path_get(const rl_msg_path *p, const uint8_t *data, size_t len, rl_msg_value *out)
{
    if (!p || !out)
        return rl_error_set(RL_EINVAL, "field path: NULL argument");
    cdr_dec d;
    int rc = cdr_open(&d, p->def, data, len);
    if (rc < 0)
        return rc;
    uint32_t t = p->def->root;
    for (size_t i = 0; i < p->nsteps; i++) {
        const rl_msg_type *ty = &p->def->types[t];
        const path_step *st = &p->steps[i];
        cdr_frame f;
        if (ty->kind == RL_MSG_STRUCT) {
            if ((rc = enter_struct_member(&d, ty, st->n)) < 0)
                return rc;
            t = ty->members[st->n].type;
        } else if (ty->kind == RL_MSG_UNION) {
            rl_msg_value disc;
            if ((rc = cdr_union_begin(&d, ty, &f, &disc)) < 0)
                return rc;
            const rl_msg_member *m = &ty->members[st->n];
            cdr_push_name(&d, m->name);
            if (cdr_union_case(ty, cdr_value_as_i64(&disc)) != m)
                return absent(&d, "union case not active");
            t = m->type;
        } else {
            size_t count;
            if ((rc = cdr_array_begin(&d, ty, &f, &count)) < 0)
                return rc;
            cdr_push_index(&d, st->n);
            if (st->n >= count)
                return absent(&d, "index past the sequence's length");
            size_t esize = msgdef_prim_size(p->def->types[ty->elem].kind);
            if (esize)
                d.pos += st->n * esize; /* checked by cdr_array_begin */
            for (size_t k = 0; !esize && k < st->n; k++)
                if ((rc = cdr_skip_value(&d, ty->elem)) < 0)
                    return rc;
            t = ty->elem;
        }
    }
    return cdr_read_leaf(&d, &p->def->types[t], out);
}

int rl_msg_get_f64(const rl_msgdef *def, const uint8_t *data, size_t len, const char *path,
                   double *out)
{
    rl_msg_path *p = NULL;
    int rc = rl_msg_path_compile(&p, def, path);
    rl_msg_value v;
    if (rc == RL_OK && (rc = rl_msg_path_get(p, data, len, &v)) == RL_OK)
        rc = rl_msg_value_f64(&v, out);
    rl_msg_path_free(p);
    return rc;
}
