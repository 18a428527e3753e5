/* One-pass field extraction (rl_msg_extract_*) against hand-computed values and against
 * rl_msg_path_get, path by path: hand-made payloads in both byte orders and both XCDR
 * versions, every encapsulation kind (final, appendable, mutable), nested and @appendable /
 * @mutable types, sequences read by index and whole ("[]"), unions, optionals, every cut of
 * every payload and every one-byte corruption; paths a schema lacks; callback stops. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/msgdef.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rl_msgdef *parse_idl(const char *name, const char *text)
{
    rl_msgdef *d = NULL;
    int rc = rl_msgdef_parse(&d, "omgidl", name, text, strlen(text));
    if (rc != RL_OK)
        fail_msg("%s", rl_error_last());
    return d;
}

static int same_value(const rl_msg_value *a, const rl_msg_value *b)
{
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case RL_MSG_STRING:
    case RL_MSG_WSTRING:
        return a->v.s.ptr == b->v.s.ptr && a->v.s.len == b->v.s.len;
    case RL_MSG_BOOL:
        return a->v.b == b->v.b;
    case RL_MSG_FLOAT32:
    case RL_MSG_FLOAT64:
        return memcmp(&a->v.f, &b->v.f, sizeof a->v.f) == 0;
    default:
        return a->v.u == b->v.u;
    }
}

/* One path's extracted field must be what rl_msg_path_get reads (absent where it says
 * RL_ENOENT); returns 0 when they agree. */
static int agrees(const rl_msgdef *d, const char *path, const rl_msg_field *f, const uint8_t *p,
                  size_t len)
{
    rl_msg_path *mp = NULL;
    if (rl_msg_path_compile(&mp, d, path) != RL_OK)
        return f->present ? -1 : 0;
    rl_msg_value v;
    int rc = rl_msg_path_get(mp, p, len, &v);
    rl_msg_path_free(mp);
    if (rc == RL_ENOENT)
        return f->present ? -1 : 0;
    if (rc != RL_OK || !f->present || !same_value(&v, &f->value))
        return -1;
    double x = NAN;
    (void)rl_msg_value_f64(&v, &x);
    return (isnan(x) && isnan(f->f)) || x == f->f ? 0 : -1;
}

/* "[]" elements seen by the callback, checked against rl_msg_path_get with "[i]". */
typedef struct elem_check {
    const rl_msg_extract *ex;
    const rl_msgdef *d;
    const char *const *paths;
    size_t npaths;
    const uint8_t *p;
    size_t len;
    size_t seen, stop_after; /* stop_after: 1-based element that stops (returns 3); 0 never */
    int bad;
} elem_check;

static void expand(const char *path, size_t i, char *out, size_t cap)
{
    const char *w = strstr(path, "[]");
    snprintf(out, cap, "%.*s[%zu]%s", (int)(w - path), path, i, w + 2);
}

static int on_elem(void *ctx, size_t index, const rl_msg_field *f)
{
    elem_check *e = ctx;
    if (index != e->seen)
        e->bad = 1;
    e->seen++;
    for (size_t k = 0; k < e->npaths; k++) {
        if (!strstr(e->paths[k], "[]") || rl_msg_extract_status(e->ex, k, NULL) != RL_OK)
            continue;
        char path[256];
        expand(e->paths[k], index, path, sizeof path);
        if (agrees(e->d, path, &f[k], e->p, e->len) != 0) {
            print_message("element %zu of '%s' disagrees\n", index, e->paths[k]);
            e->bad = 1;
        }
    }
    return e->seen == e->stop_after ? 3 : 0;
}

/* Extracts `paths` from the payload and from every cut and one-byte corruption of it:
 * whenever extraction succeeds, every field (and every "[]" element) agrees with
 * rl_msg_path_get; when it fails, its message names a field and a byte offset and some
 * path's rl_msg_path_get (or an element's) fails too. Returns how many runs succeeded. */
static size_t check_payload(const rl_msgdef *d, const char *const *paths, size_t npaths,
                            const uint8_t *payload, size_t len)
{
    rl_msg_extract *ex = NULL;
    assert_int_equal(rl_msg_extract_compile(&ex, d, paths, npaths), RL_OK);
    rl_msg_field f[32];
    assert_true(npaths <= 32);
    uint8_t *buf = malloc(len + 1);
    assert_non_null(buf);
    size_t ok = 0;
    for (size_t variant = 0; variant <= len + len * 2; variant++) {
        size_t n = len;
        memcpy(buf, payload, len);
        if (variant < len) {
            n = variant; /* a cut */
        } else if (variant > len) {
            size_t at = (variant - len - 1) / 2; /* a corruption: 0xff or a flipped low bit */
            buf[at] = (variant - len - 1) % 2 ? (uint8_t)(buf[at] ^ 1) : 0xff;
        }
        elem_check e = {ex, d, paths, npaths, buf, n, 0, 0, 0};
        int rc = rl_msg_extract_run(ex, buf, n, f, on_elem, &e);
        if (rc == RL_OK) {
            ok++;
            assert_false(e.bad);
            for (size_t k = 0; k < npaths; k++)
                if (!strstr(paths[k], "[]") && agrees(d, paths[k], &f[k], buf, n) != 0)
                    fail_msg("variant %zu: path '%s' disagrees with rl_msg_path_get", variant,
                             paths[k]);
            continue;
        }
        assert_true(rc < 0);
        const char *msg = rl_error_last();
        assert_true(strstr(msg, "byte offset") != NULL);
        int some_fails = 0; /* "[]": the element it failed in, or (skipping its rest) the next */
        for (size_t k = 0; k < 2 * npaths && !some_fails; k++) {
            const char *pk = paths[k / 2];
            if (rl_msg_extract_status(ex, k / 2, NULL) != RL_OK || (k % 2 && !strstr(pk, "[]")))
                continue;
            char path[256];
            snprintf(path, sizeof path, "%s", pk);
            if (strstr(pk, "[]"))
                expand(pk, e.seen + k % 2, path, sizeof path);
            rl_msg_path *mp = NULL;
            rl_msg_value v;
            if (rl_msg_path_compile(&mp, d, path) != RL_OK)
                continue; /* past a fixed array's end */
            int prc = rl_msg_path_get(mp, buf, n, &v);
            rl_msg_path_free(mp);
            some_fails = prc < 0 && prc != RL_ENOENT;
        }
        if (!some_fails)
            fail_msg("variant %zu: extraction failed (%s) but every path reads", variant, msg);
    }
    free(buf);
    rl_msg_extract_free(ex);
    return ok;
}

/* ---- Hand-made payloads ----------------------------------------------------------- */

static const char state_idl[] =
    "module h { @final struct H { uint64 stamp; uint64 valid; };\n"
    "@final struct P { double x; double y; };\n"
    "@final struct S { H header; uint8 id; P pose; float speed; string name; }; };\n";

static void put(uint8_t *p, const void *v, size_t n, int be)
{
    const uint8_t *b = v;
    for (size_t i = 0; i < n; i++)
        p[i] = be ? b[n - 1 - i] : b[i];
}

/* S with stamp 0x0102030405060708, valid 5, id 9, pose (1.5, -2), speed 0.25, name "ab",
 * laid out by hand: XCDR1 aligns the doubles to 8 from offset 4, XCDR2 to 4. */
static size_t state_payload(uint8_t *p, int be, int v2)
{
    memset(p, 0, 64);
    p[1] = (uint8_t)((v2 ? 6 : 0) | (be ? 0 : 1));
    uint64_t stamp = 0x0102030405060708ull, valid = 5;
    double x = 1.5, y = -2;
    float speed = 0.25f;
    uint32_t slen = 3;
    put(p + 4, &stamp, 8, be);
    put(p + 12, &valid, 8, be);
    p[20] = 9;
    size_t at = v2 ? 24 : 28; /* 21 -> 4-aligned 24 / 8-aligned from 4: 28 */
    put(p + at, &x, 8, be);
    put(p + at + 8, &y, 8, be);
    put(p + at + 16, &speed, 4, be);
    put(p + at + 20, &slen, 4, be);
    memcpy(p + at + 24, "ab", 3);
    return at + 27;
}

static void test_hand_made_state(void **state)
{
    (void)state;
    rl_msgdef *d = parse_idl("h::S", state_idl);
    static const char *const paths[] = {"header.stamp", "pose.x",  "pose.y", "speed",
                                        "id",           "name",    "pose.x", "header.valid"};
    rl_msg_extract *ex = NULL;
    assert_int_equal(rl_msg_extract_compile(&ex, d, paths, 8), RL_OK);
    assert_int_equal(rl_msg_extract_count(ex), 8);
    for (int be = 0; be < 2; be++) {
        for (int v2 = 0; v2 < 2; v2++) {
            uint8_t p[64];
            size_t n = state_payload(p, be, v2);
            rl_msg_field f[8];
            assert_int_equal(rl_msg_extract_run(ex, p, n, f, NULL, NULL), RL_OK);
            for (int k = 0; k < 8; k++)
                assert_true(f[k].present);
            assert_int_equal(f[0].value.kind, RL_MSG_UINT64);
            assert_true(f[0].value.v.u == 0x0102030405060708ull);
            assert_true(f[1].f == 1.5 && f[6].f == 1.5 && f[2].f == -2 && f[3].f == 0.25);
            assert_int_equal(f[3].value.kind, RL_MSG_FLOAT32);
            assert_true(f[4].value.v.u == 9 && f[4].f == 9);
            assert_int_equal(f[5].value.v.s.len, 2);
            assert_memory_equal(f[5].value.v.s.ptr, "ab", 2);
            assert_true(isnan(f[5].f));
            assert_true(f[7].value.v.u == 5);
            /* cut inside pose.y: the error names the field and the offset */
            size_t y_at = (v2 ? 24u : 28u) + 8;
            assert_int_equal(rl_msg_extract_run(ex, p, y_at + 3, f, NULL, NULL), RL_ETRUNCATED);
            char want[128];
            snprintf(want, sizeof want, "field 'pose.y': byte offset %zu: needs 8 bytes, 3 left",
                     y_at);
            assert_string_equal(rl_error_last(), want);
            assert_true(f[1].present && f[1].f == 1.5); /* read before the cut */
            check_payload(d, paths, 8, p, n);
        }
    }
    rl_msg_extract_free(ex);
    rl_msgdef_free(d);
}

/* A bad string length is RL_EPARSE naming the string's field, as rl_msg_path_get says. */
static void test_bad_string_length(void **state)
{
    (void)state;
    rl_msgdef *d = parse_idl("h::S", state_idl);
    static const char *const paths[] = {"name", "speed"};
    rl_msg_extract *ex = NULL;
    assert_int_equal(rl_msg_extract_compile(&ex, d, paths, 2), RL_OK);
    uint8_t p[64];
    size_t n = state_payload(p, 0, 0);
    p[48] = 0xff; /* string length 0x000000ff */
    rl_msg_field f[2];
    assert_int_equal(rl_msg_extract_run(ex, p, n, f, NULL, NULL), RL_EPARSE);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", rl_error_last());
    rl_msg_path *mp = NULL;
    rl_msg_value v;
    assert_int_equal(rl_msg_path_compile(&mp, d, "name"), RL_OK);
    assert_int_equal(rl_msg_path_get(mp, p, n, &v), RL_EPARSE);
    assert_string_equal(msg, rl_error_last());
    assert_string_equal(msg, "field 'name': byte offset 48: string length 255 exceeds the 7 bytes left");
    rl_msg_path_free(mp);
    rl_msg_extract_free(ex);
    rl_msgdef_free(d);
}

/* ---- Every encapsulation kind ------------------------------------------------------- */

static const char mixed_idl[] =
    "module t { enum Color { RED, GREEN, @value(7) BLUE };\n"
    "struct Pt { double x; float y; int16 k; };\n"
    "@appendable struct App { long a; @optional string s; double w; };\n"
    "@mutable struct Mut { @id(5) uint32 u; @id(2) Pt p; };\n"
    "union V switch (long) { case 1: double d; case 2: string s; default: uint8 o; };\n"
    "struct M { uint64 stamp; string name; Pt pose; sequence<Pt> pts; long fixed[3];\n"
    "  sequence<uint16> us; Color c; @optional long long opt; V v; App app; Mut mut;\n"
    "  sequence<App, 4> apps; boolean flag; }; };\n";

static const char *const mixed_paths[] = {
    "stamp",  "name",   "pose.x",  "pose.y",   "pose.k",   "pts[1].y", "pts[5].x",
    "fixed[2]", "us[1]", "us[3]",  "c",        "opt",      "v.d",      "v.s",
    "v.o",    "app.a",  "app.s",   "app.w",    "mut.u",    "mut.p.k",  "apps[0].w",
    "apps[1].s", "flag", "pose.x"};
enum { NMIXED = sizeof mixed_paths / sizeof mixed_paths[0] };

static const char *const mixed_json[] = {
    "{\"stamp\":1767225600000000123,\"name\":\"abc\",\"pose\":{\"x\":1.5,\"y\":-2.25,\"k\":-7},"
    "\"pts\":[{\"x\":1,\"y\":2,\"k\":3},{\"x\":4,\"y\":5.5,\"k\":6},{\"x\":7,\"y\":8,\"k\":9}],"
    "\"fixed\":[1,-2,3],\"us\":[10,20],\"c\":7,\"opt\":null,\"v\":{\"_d\":2,\"s\":\"hi\"},"
    "\"app\":{\"a\":4,\"s\":\"q\",\"w\":0.5},\"mut\":{\"u\":11,\"p\":{\"x\":1,\"y\":1,\"k\":12}},"
    "\"apps\":[{\"a\":1,\"s\":null,\"w\":2},{\"a\":3,\"s\":\"z\",\"w\":4}],\"flag\":true}",
    "{\"stamp\":1,\"name\":\"\",\"pose\":{\"x\":0,\"y\":0,\"k\":0},\"pts\":[],"
    "\"fixed\":[0,0,0],\"us\":[],\"c\":0,\"opt\":-42,\"v\":{\"_d\":9,\"o\":200},"
    "\"app\":{\"a\":0,\"s\":null,\"w\":0},\"mut\":{\"u\":0,\"p\":{\"x\":0,\"y\":0,\"k\":0}},"
    "\"apps\":[],\"flag\":false}",
};

static const int kinds[] = {RL_CDR_LE,    RL_CDR_BE,     RL_PL_CDR_LE,  RL_PL_CDR_BE,
                            RL_CDR2_LE,   RL_CDR2_BE,    RL_D_CDR2_LE,  RL_D_CDR2_BE,
                            RL_PL_CDR2_LE, RL_PL_CDR2_BE};

static void test_every_kind_agrees_with_path_get(void **state)
{
    (void)state;
    rl_msgdef *d = parse_idl("t::M", mixed_idl);
    for (size_t j = 0; j < sizeof mixed_json / sizeof mixed_json[0]; j++) {
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            uint8_t *p = NULL;
            size_t n = 0;
            assert_int_equal(rl_msg_encode_json_text(d, mixed_json[j], strlen(mixed_json[j]),
                                                     kinds[k], &p, &n),
                             RL_OK);
            assert_true(check_payload(d, mixed_paths, NMIXED, p, n) > 0);
            /* whole sequences, with fields before and after them */
            static const char *const whole[] = {"stamp", "pts[].x", "pts[].k", "flag", "pts[].y"};
            assert_true(check_payload(d, whole, 5, p, n) > 0);
            static const char *const apps[] = {"apps[].s", "apps[].w", "mut.u"};
            assert_true(check_payload(d, apps, 3, p, n) > 0);
            free(p);
        }
    }
    rl_msgdef_free(d);
}

/* Values the test knows (first message, little-endian XCDR2 mutable) and the "[]" walk. */
typedef struct collected {
    double x[8];
    size_t n;
} collected;

static int collect(void *ctx, size_t index, const rl_msg_field *f)
{
    collected *c = ctx;
    assert_int_equal(index, c->n);
    assert_true(f[1].present);
    c->x[c->n++] = f[1].f;
    return 0;
}

static void test_known_values(void **state)
{
    (void)state;
    rl_msgdef *d = parse_idl("t::M", mixed_idl);
    static const char *const paths[] = {"stamp", "pts[].x", "v.s", "v.d", "opt", "app.s", "fixed[2]", "c"};
    rl_msg_extract *ex = NULL;
    assert_int_equal(rl_msg_extract_compile(&ex, d, paths, 8), RL_OK);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        uint8_t *p = NULL;
        size_t n = 0;
        assert_int_equal(rl_msg_encode_json_text(d, mixed_json[0], strlen(mixed_json[0]), kinds[k],
                                                 &p, &n),
                         RL_OK);
        rl_msg_field f[8];
        collected c = {{0}, 0};
        assert_int_equal(rl_msg_extract_run(ex, p, n, f, collect, &c), RL_OK);
        assert_true(f[0].value.v.u == 1767225600000000123ull);
        assert_int_equal(c.n, 3);
        assert_true(c.x[0] == 1 && c.x[1] == 4 && c.x[2] == 7);
        assert_true(f[1].present && f[1].f == 7); /* the last element's */
        assert_true(f[2].present && f[2].value.v.s.len == 2);
        assert_memory_equal(f[2].value.v.s.ptr, "hi", 2);
        assert_false(f[3].present); /* inactive union case */
        assert_false(f[4].present); /* absent optional */
        assert_true(isnan(f[4].f));
        assert_true(f[5].present && f[5].value.v.s.len == 1);
        assert_true(f[6].value.v.i == 3 && f[6].value.kind == RL_MSG_INT32);
        assert_true(f[7].value.kind == RL_MSG_ENUM && f[7].value.v.i == 7);
        free(p);
    }
    rl_msg_extract_free(ex);
    rl_msgdef_free(d);
}

/* The lab's message shapes (final structs of fixed-size fields, then a sequence of fixed-size
 * structs): read by fixed offsets after one length check. Values, cuts and corruptions
 * (counts and DHEADERs past the end, elements cut) must still agree with rl_msg_path_get. */
static const char cmd_idl[] =
    "module c { @final struct H { uint64 create; uint64 valid; };\n"
    "@final struct T { uint64 t; double px; double py; float w; boolean b; };\n"
    "@final struct C { H header; uint8 id; double fixed[2]; sequence<T, 5> pts; string tail; };};\n";

static void test_fixed_offsets(void **state)
{
    (void)state;
    rl_msgdef *d = parse_idl("c::C", cmd_idl);
    static const char *const whole[] = {"header.create", "header.valid", "id", "fixed[1]",
                                        "pts[].t", "pts[].px", "pts[].py", "pts[].w", "pts[].b"};
    static const char *const state_paths[] = {"header.valid", "fixed[0]", "id"};
    static const char *const json[] = {
        "{\"header\":{\"create\":7,\"valid\":8},\"id\":3,\"fixed\":[0.5,-1],\"pts\":["
        "{\"t\":100,\"px\":1,\"py\":2,\"w\":0.5,\"b\":true},"
        "{\"t\":200,\"px\":3,\"py\":4,\"w\":1.5,\"b\":false},"
        "{\"t\":300,\"px\":5,\"py\":6,\"w\":2.5,\"b\":true}],\"tail\":\"x\"}",
        "{\"header\":{\"create\":1,\"valid\":2},\"id\":0,\"fixed\":[0,0],\"pts\":[],"
        "\"tail\":\"\"}"};
    static const int fixed_kinds[] = {RL_CDR_LE, RL_CDR_BE, RL_CDR2_LE, RL_CDR2_BE, RL_D_CDR2_LE};
    rl_msg_extract *ex = NULL;
    assert_int_equal(rl_msg_extract_compile(&ex, d, whole, 9), RL_OK);
    for (size_t j = 0; j < 2; j++) {
        for (size_t k = 0; k < sizeof fixed_kinds / sizeof fixed_kinds[0]; k++) {
            uint8_t *p = NULL;
            size_t n = 0;
            assert_int_equal(rl_msg_encode_json_text(d, json[j], strlen(json[j]), fixed_kinds[k],
                                                     &p, &n),
                             RL_OK);
            rl_msg_field f[9];
            elem_check e = {ex, d, whole, 9, p, n, 0, 0, 0};
            assert_int_equal(rl_msg_extract_run(ex, p, n, f, on_elem, &e), RL_OK);
            assert_int_equal(e.seen, j == 0 ? 3 : 0);
            assert_false(e.bad);
            assert_true(f[0].value.v.u == (j == 0 ? 7u : 1u) && f[3].f == (j == 0 ? -1 : 0));
            if (j == 0) /* the last element's */
                assert_true(f[4].value.v.u == 300 && f[6].f == 6 && f[7].f == 2.5 &&
                            f[8].value.v.b);
            else
                assert_false(f[4].present);
            assert_true(check_payload(d, whole, 9, p, n) > 0);
            assert_true(check_payload(d, state_paths, 3, p, n) > 0);
            free(p);
        }
    }
    rl_msg_extract_free(ex);
    rl_msgdef_free(d);
}

/* ---- Compilation: paths a schema lacks, refused combinations, callback stops -------- */

static void test_missing_paths_and_refusals(void **state)
{
    (void)state;
    rl_msgdef *d = parse_idl("t::M", mixed_idl);
    static const char *const paths[] = {"stamp",   "speed",   "pose.z",   "pts[].x", "us[].x",
                                        "apps[].a", "pts[0].y", "pts[][", "fixed[3]"};
    rl_msg_extract *ex = NULL;
    assert_int_equal(rl_msg_extract_compile(&ex, d, paths, 9), RL_OK);
    const char *why;
    assert_int_equal(rl_msg_extract_status(ex, 0, &why), RL_OK);
    assert_null(why);
    assert_int_equal(rl_msg_extract_status(ex, 1, &why), RL_ENOENT);
    assert_string_equal(why, "field path 'speed': type 't::M' has no field 'speed'");
    assert_int_equal(rl_msg_extract_status(ex, 2, &why), RL_ENOENT);
    assert_string_equal(why, "field path 'pose.z': type 't::Pt' has no field 'z'");
    assert_int_equal(rl_msg_extract_status(ex, 3, &why), RL_OK);
    assert_int_equal(rl_msg_extract_status(ex, 4, &why), RL_ENOENT); /* uint16 has no fields */
    assert_int_equal(rl_msg_extract_status(ex, 5, &why), RL_EUNSUPPORTED);
    assert_non_null(strstr(why, "another sequence"));
    assert_int_equal(rl_msg_extract_status(ex, 6, &why), RL_EUNSUPPORTED);
    assert_non_null(strstr(why, "both whole"));
    assert_int_equal(rl_msg_extract_status(ex, 7, &why), RL_EINVAL);
    assert_int_equal(rl_msg_extract_status(ex, 8, &why), RL_ENOENT); /* past the bound 3 */
    assert_int_equal(rl_msg_extract_status(ex, 9, &why), RL_EINVAL);
    uint8_t *p = NULL;
    size_t n = 0;
    assert_int_equal(rl_msg_encode_json_text(d, mixed_json[0], strlen(mixed_json[0]), RL_CDR_LE,
                                             &p, &n),
                     RL_OK);
    rl_msg_field f[9];
    assert_int_equal(rl_msg_extract_run(ex, p, n, f, NULL, NULL), RL_OK);
    for (int k = 0; k < 9; k++)
        assert_int_equal(f[k].present, k == 0 || k == 3);
    assert_true(f[3].f == 7);
    /* a callback's stop value comes back, after the element it stopped at */
    elem_check e = {ex, d, paths, 9, p, n, 0, 2, 0};
    assert_int_equal(rl_msg_extract_run(ex, p, n, f, on_elem, &e), 3);
    assert_int_equal(e.seen, 2);
    assert_false(e.bad);
    free(p);
    rl_msg_extract_free(ex);
    /* no paths at all: nothing is read, any payload with a header is fine */
    assert_int_equal(rl_msg_extract_compile(&ex, d, NULL, 0), RL_OK);
    uint8_t hdr[4] = {0, 1, 0, 0};
    assert_int_equal(rl_msg_extract_run(ex, hdr, 4, NULL, NULL, NULL), RL_OK);
    assert_int_equal(rl_msg_extract_run(ex, hdr, 3, NULL, NULL, NULL), RL_ETRUNCATED);
    rl_msg_extract_free(ex);
    assert_int_equal(rl_msg_extract_compile(NULL, d, paths, 1), RL_EINVAL);
    rl_msgdef_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_made_state),
        cmocka_unit_test(test_bad_string_length),
        cmocka_unit_test(test_every_kind_agrees_with_path_get),
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_fixed_offsets),
        cmocka_unit_test(test_missing_paths_and_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
