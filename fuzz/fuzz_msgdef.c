/* libFuzzer target for the schema parsers (runlab/msgdef.h): the first byte chooses
 * ros2msg or omgidl text (the rest is the schema text), or an IDL schema generated from
 * the rest: empty structs, huge array bounds and nested arrays, sequences of anything,
 * enums and structs of up to 30 k names from a few bytes. A schema that parses must
 * format, and decode a few payloads and compile a field path without crashing, and each
 * input must finish within the smoke run's -timeout (fuzz/CMakeLists.txt), which flags
 * work that grows faster than the schema (a quadratic parser took a minute on 30 k names;
 * an array of empty structs decoded for hours). */
#include "runlab/error.h"
#include "runlab/msgdef.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { GEN_MAX_TYPES = 64, GEN_MAX_NAMES = 30000, GEN_MAX_TEXT = 4 << 20 };

typedef struct gen {
    const uint8_t *p, *end;
    char *text;
    size_t len, cap;
    int ntypes; /* types T0..T{ntypes-1} defined so far */
    int failed;
} gen;

static unsigned take(gen *g, unsigned bytes)
{
    unsigned v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v = v << 8 | (g->p < g->end ? *g->p++ : 0);
    return v;
}

static void put(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(gen *g, const char *fmt, ...)
{
    if (g->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g->text + g->len, g->cap - g->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= g->cap - g->len)
        g->failed = 1;
    else
        g->len += (size_t)n;
}

/* A type for a member or element, from one byte: a primitive, a string with a bound, an
 * earlier type, or an array (up to 3 dimensions, bounds up to 2^32 - 1) or sequence of one. */
static void gen_type(gen *g, char *out, size_t cap, int *dims_left)
{
    unsigned c = take(g, 1), prev = g->ntypes ? take(g, 1) % (unsigned)g->ntypes : 0;
    switch (g->ntypes ? c % 6 : c % 2) {
    case 0:
        snprintf(out, cap, "%s", (const char *[]){"long", "octet", "double", "boolean"}[c / 6 % 4]);
        break;
    case 1:
        snprintf(out, cap, "string<%u>", take(g, 4) | 1);
        break;
    case 2:
    case 3:
        snprintf(out, cap, "T%u", prev);
        break;
    case 4:
        snprintf(out, cap, "sequence<T%u>", prev);
        break;
    default:
        snprintf(out, cap, "sequence<T%u, %u>", prev, take(g, 4) | 1);
    }
    *dims_left = c & 0x80 ? (int)(c >> 5 & 3) : 0;
}

/* A count of names: mostly a few (fast inputs), up to GEN_MAX_NAMES when the high bit says. */
static unsigned gen_count(gen *g)
{
    unsigned v = take(g, 2);
    return (v & 0x8000 ? (v & 0x7fff) % GEN_MAX_NAMES : v % 64) + 1;
}

static void gen_member(gen *g, const char *name)
{
    char t[64];
    int dims;
    gen_type(g, t, sizeof t, &dims);
    put(g, " %s%s %s", take(g, 1) & 1 ? "@optional " : "", t, name);
    for (int d = 0; d < dims; d++)
        put(g, "[%u]", take(g, 4) | 1); /* huge bounds: 0x7fffffff elements of no bytes */
    put(g, ";");
}

/* Builds IDL text from the input; the root is struct T holding one of every type. */
static char *generate(const uint8_t *data, size_t size, size_t *len)
{
    gen g = {.p = data, .end = data + size, .cap = GEN_MAX_TEXT};
    if (!(g.text = malloc(g.cap)))
        return NULL;
    g.text[0] = '\0';
    while (g.p < g.end && g.ntypes < GEN_MAX_TYPES && !g.failed) {
        unsigned op = take(&g, 1), n;
        const char *ext = (const char *[]){"", "@final ", "@appendable ", "@mutable "}[op >> 6];
        int t = g.ntypes;
        switch (op % 5) {
        case 0: /* empty struct */
            put(&g, "%sstruct T%d {};\n", ext, t);
            break;
        case 1: /* a few members of assorted types */
            n = take(&g, 1) % 8;
            put(&g, "%sstruct T%d {", ext, t);
            for (unsigned i = 0; i < n; i++) {
                char name[16];
                snprintf(name, sizeof name, "m%u", i);
                gen_member(&g, name);
            }
            put(&g, "};\n");
            break;
        case 2: /* an enum of up to 30 k enumerators */
            n = gen_count(&g);
            put(&g, "enum T%d {", t);
            for (unsigned i = 0; i < n; i++)
                put(&g, "%sT%d_%u", i ? "," : "", t, i);
            put(&g, "};\n");
            break;
        case 3: { /* a struct of up to 30 k members of one type */
            n = gen_count(&g);
            char ty[64];
            int dims;
            gen_type(&g, ty, sizeof ty, &dims);
            put(&g, "%sstruct T%d {", ext, t);
            for (unsigned i = 0; i < n; i++)
                put(&g, " %s m%u%s;", ty, i, dims ? "[2]" : "");
            put(&g, "};\n");
            break;
        }
        default: /* a typedef of an array with huge dimensions */
            if (!t)
                continue;
            put(&g, "typedef T%u T%d", take(&g, 1) % (unsigned)t, t);
            for (unsigned d = 0, nd = take(&g, 1) % 3 + 1; d < nd; d++)
                put(&g, "[%u]", take(&g, 4) | 1);
            put(&g, ";\n");
        }
        g.ntypes++;
    }
    put(&g, "struct T {");
    for (int t = 0; t < g.ntypes; t++)
        put(&g, " T%d f%d;", t, t);
    put(&g, " long last; };\n");
    if (g.failed) {
        free(g.text);
        return NULL;
    }
    *len = g.len;
    return g.text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int idl = data[0] & 1, generated = data[0] & 2;
    rl_msgdef *d = NULL;
    const char *text_in = (const char *)data + 1;
    size_t text_len = size - 1;
    char *made = NULL;
    if (generated) {
        if (!(made = generate(data + 1, size - 1, &text_len)))
            return 0;
        text_in = made;
        idl = 1;
    }
    int prc = rl_msgdef_parse(&d, idl ? "omgidl" : "ros2msg", idl ? "T" : "pkg/msg/T", text_in,
                              text_len);
    free(made);
    if (prc != RL_OK)
        return 0;
    char *text = NULL;
    if (rl_msgdef_format(d, &text) == RL_OK)
        free(text);
    static const uint8_t payloads[][24] = {
        {0x00, 0x01, 0x00, 0x00, 1, 0, 0, 0, 2, 0, 0, 0, 'a', 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0},
        {0x00, 0x09, 0x00, 0x00, 8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0x00, 0x0b, 0x00, 0x00, 8, 0, 0, 0, 0, 0, 0, 0x20, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0x00, 0x02, 0x00, 0x00, 0, 0, 4, 0, 1, 2, 3, 4, 0x3f, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    };
    char *buf = NULL;
    size_t cap = 0, n;
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++)
        rl_msg_to_json(d, payloads[i], sizeof payloads[i], &buf, &cap, &n);
    free(buf);
    const rl_msg_type *root = rl_msgdef_type(d, rl_msgdef_root(d));
    if (root && root->nmembers) {
        rl_msg_path *p = NULL;
        if (rl_msg_path_compile(&p, d, root->members[0].name) == RL_OK) {
            rl_msg_value v;
            rl_msg_path_get(p, payloads[0], sizeof payloads[0], &v);
            rl_msg_path_free(p);
        }
    }
    rl_msgdef_free(d);
    return 0;
}
