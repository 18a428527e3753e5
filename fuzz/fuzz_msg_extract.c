/* libFuzzer target for one-pass field extraction (rl_msg_extract_*, runlab/msgdef.h): the
 * first byte chooses a schema and its path list (nested, appendable and mutable types,
 * sequences by index and whole with "[]", unions, optionals, strings), the rest is the
 * payload. Nothing may crash or read out of bounds; when extraction succeeds every field
 * and every "[]" element must equal rl_msg_path_get's, and when it fails some path's
 * rl_msg_path_get must fail too. */
#include "runlab/error.h"
#include "runlab/msgdef.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_PATHS = 12 };

static const struct {
    const char *name, *text;
    const char *paths[MAX_PATHS];
} cases[] = {
    {"h::S",
     "module h { @final struct H { uint64 stamp; uint64 valid; };\n"
     "@final struct P { double x; double y; double yaw; };\n"
     "@final struct T { uint64 t; double px; double py; };\n"
     "@final struct S { H header; uint8 id; P pose; double speed; sequence<T> pts; string s; };};\n",
     {"header.stamp", "pose.x", "pose.y", "pose.yaw", "speed", "pts[].t", "pts[].py"}},
    {"h::S", NULL, /* the same schema: fixed offsets (above), and a string to walk to here */
     {"id", "pose.yaw", "s", "pts[1].px"}},
    {"t::M",
     "module t { enum Color { RED, GREEN, @value(7) BLUE };\n"
     "struct Pt { double x; float y; int16 k; };\n"
     "@appendable struct App { long a; @optional string s; double w; };\n"
     "@mutable struct Mut { @id(5) uint32 u; @id(2) Pt p; };\n"
     "union V switch (long) { case 1: double d; case 2: string s; default: uint8 o; };\n"
     "struct M { uint64 stamp; string name; Pt pose; sequence<Pt> pts; long fixed[3];\n"
     "  sequence<uint16> us; Color c; @optional long long opt; V v; App app; Mut mut;\n"
     "  sequence<App, 4> apps; boolean flag; }; };\n",
     {"stamp", "pose.k", "pts[1].y", "pts[3].x", "fixed[2]", "us[1]", "c", "opt", "v.s", "app.s",
      "mut.p.k", "apps[].w"}},
    {"t::M", NULL, /* the same schema, other paths */
     {"name", "pts[].y", "pts[].k", "v.d", "v.o", "app.w", "mut.u", "apps[1].a", "flag"}},
};

enum { NCASES = sizeof cases / sizeof cases[0] };

static int same(const rl_msg_field *f, int rc, const rl_msg_value *v)
{
    if (rc == RL_ENOENT)
        return !f->present;
    if (rc != RL_OK || !f->present || f->value.kind != v->kind)
        return 0;
    if (v->kind == RL_MSG_STRING)
        return f->value.v.s.ptr == v->v.s.ptr && f->value.v.s.len == v->v.s.len;
    if (v->kind == RL_MSG_BOOL)
        return f->value.v.b == v->v.b;
    if (v->kind == RL_MSG_FLOAT32 || v->kind == RL_MSG_FLOAT64)
        return memcmp(&f->value.v.f, &v->v.f, sizeof v->v.f) == 0;
    return f->value.v.u == v->v.u;
}

typedef struct fz {
    const rl_msgdef *def;
    const char *const *paths;
    const uint8_t *p;
    size_t len, seen;
} fz;

/* rl_msg_path_get of path k ("[]" read as "[index]"); RL_ENOENT also when it does not compile. */
static int get(const fz *z, size_t k, size_t index, rl_msg_value *v)
{
    char path[128];
    const char *w = strstr(z->paths[k], "[]");
    if (w)
        snprintf(path, sizeof path, "%.*s[%zu]%s", (int)(w - z->paths[k]), z->paths[k], index, w + 2);
    else
        snprintf(path, sizeof path, "%s", z->paths[k]);
    rl_msg_path *mp = NULL;
    if (rl_msg_path_compile(&mp, z->def, path) != RL_OK)
        return RL_ENOENT;
    int rc = rl_msg_path_get(mp, z->p, z->len, v);
    rl_msg_path_free(mp);
    return rc;
}

static int on_elem(void *ctx, size_t index, const rl_msg_field *f)
{
    fz *z = ctx;
    z->seen = index + 1;
    for (size_t k = 0; k < MAX_PATHS && z->paths[k]; k++) {
        rl_msg_value v;
        if (strstr(z->paths[k], "[]") && !same(&f[k], get(z, k, index, &v), &v)) {
            fprintf(stderr, "element %zu of '%s' differs from rl_msg_path_get\n", index, z->paths[k]);
            abort();
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rl_msgdef *defs[NCASES];
    static rl_msg_extract *ex[NCASES];
    static int ready;
    if (!ready) {
        for (size_t i = 0; i < NCASES; i++) {
            const char *text = cases[i].text ? cases[i].text : cases[i - 1].text;
            size_t n = 0;
            while (n < MAX_PATHS && cases[i].paths[n])
                n++;
            if (rl_msgdef_parse(&defs[i], "omgidl", cases[i].name, text, strlen(text)) != RL_OK ||
                rl_msg_extract_compile(&ex[i], defs[i], cases[i].paths, n) != RL_OK)
                abort(); /* a fixed schema that does not parse is a bug */
        }
        ready = 1;
    }
    if (size < 1)
        return 0;
    size_t which = data[0] % NCASES;
    uint8_t *copy = malloc(size - 1 ? size - 1 : 1); /* exactly the payload: overreads caught */
    if (!copy)
        return 0;
    memcpy(copy, data + 1, size - 1);
    fz z = {defs[which], cases[which].paths, copy, size - 1, 0};
    rl_msg_field f[MAX_PATHS];
    int rc = rl_msg_extract_run(ex[which], copy, size - 1, f, on_elem, &z);
    size_t n = rl_msg_extract_count(ex[which]);
    int some_fails = 0;
    for (size_t k = 0; k < n; k++) {
        rl_msg_value v;
        int is_all = strstr(cases[which].paths[k], "[]") != NULL;
        if (rc == RL_OK && !is_all && !same(&f[k], get(&z, k, 0, &v), &v)) {
            fprintf(stderr, "'%s' differs from rl_msg_path_get\n", cases[which].paths[k]);
            abort();
        }
        for (size_t e = 0; rc < 0 && e < (is_all ? 2u : 1u); e++) {
            int prc = get(&z, k, z.seen + e, &v);
            some_fails |= prc < 0 && prc != RL_ENOENT;
        }
    }
    if (rc < 0 && !some_fails) {
        fprintf(stderr, "extraction failed (%s) where every path reads\n", rl_error_last());
        abort();
    }
    free(copy);
    return 0;
}
