/* The decoding plan (src/formats/msg/cdr_plan.c) against the tree walker it stands in for:
 * for many schemas (nested structs, arrays and sequences of structs, strings, enums,
 * unions, optionals, multi-dimensional arrays, long paths, indices past 9 and 99), both
 * byte orders and both XCDR versions, every payload, every cut of it and every one-byte
 * corruption must give the same events (path, name, index, count, value), the same status
 * and the same error message; a visitor stopping at each event stops both alike. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/msgdef.h"
#include "formats/msg/cdr_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t values_seen; /* VALUES events in complete decodings: the mode is exercised */

typedef struct event_log {
    char *text;
    size_t len, cap;
    size_t events, stop_at; /* stop_at: 1-based event that answers 5; 0 never */
    int expand; /* VALUES events written as the VALUE events of their elements */
    size_t values_events;
} event_log;

static void log_add(event_log *l, const char *s, size_t n)
{
    if (l->len + n + 1 > l->cap) {
        l->cap = (l->len + n + 1) * 2;
        l->text = realloc(l->text, l->cap);
        assert_non_null(l->text);
    }
    memcpy(l->text + l->len, s, n);
    l->len += n;
    l->text[l->len] = '\0';
}

static void log_value(event_log *l, const rl_msg_value *x);

/* The log's pieces without printf (which was most of this test's time): text, and a
 * number in base 10 or 16 followed by a separator. */
static void log_str(event_log *l, const char *s)
{
    log_add(l, s, strlen(s));
}

static void log_num(event_log *l, unsigned long long v, unsigned base, char sep)
{
    char digits[24];
    size_t n = sizeof digits;
    digits[--n] = sep;
    do {
        digits[--n] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    log_add(l, digits + n, sizeof digits - n);
}

/* Element i of a VALUES event read from its bytes as the header documents them (packed,
 * the kind's CDR size, the payload's byte order), independently of the decoder. */
static rl_msg_value element_of(const rl_msg_visit *v, size_t i)
{
    static const size_t sizes[] = {[RL_MSG_BOOL] = 1, [RL_MSG_OCTET] = 1, [RL_MSG_CHAR] = 1,
                                   [RL_MSG_INT8] = 1, [RL_MSG_UINT8] = 1, [RL_MSG_INT16] = 2,
                                   [RL_MSG_UINT16] = 2, [RL_MSG_INT32] = 4, [RL_MSG_UINT32] = 4,
                                   [RL_MSG_INT64] = 8, [RL_MSG_UINT64] = 8, [RL_MSG_FLOAT32] = 4,
                                   [RL_MSG_FLOAT64] = 8};
    rl_msg_kind k = v->value.kind;
    assert_true(k >= RL_MSG_BOOL && k <= RL_MSG_FLOAT64);
    size_t size = sizes[k];
    const uint8_t *p = v->elems + i * size;
    uint64_t u = 0; /* the bytes as an unsigned integer of `size` bytes */
    for (size_t b = 0; b < size; b++)
        u |= (uint64_t)p[v->big_endian ? b : size - 1 - b] << (8 * (size - 1 - b));
    rl_msg_value x = {.kind = k};
    int shift = (int)(64 - 8 * size);
    switch (k) {
    case RL_MSG_BOOL:
        x.v.b = u != 0;
        break;
    case RL_MSG_INT8:
    case RL_MSG_INT16:
    case RL_MSG_INT32:
    case RL_MSG_INT64:
        x.v.i = (int64_t)(u << shift) >> shift;
        break;
    case RL_MSG_FLOAT32: {
        uint32_t b32 = (uint32_t)u;
        float f;
        memcpy(&f, &b32, 4);
        x.v.f = f;
        break;
    }
    case RL_MSG_FLOAT64:
        memcpy(&x.v.f, &u, 8);
        break;
    default:
        x.v.u = u;
    }
    return x;
}

/* A VALUES event as the per-element VALUE events it stands for; also checks that
 * rl_msg_values_get and rl_msg_values_f64 give the same elements. */
static void log_expanded(event_log *l, const rl_msg_visit *v)
{
    assert_int_equal(v->type->kind, v->value.kind);
    assert_int_equal(rl_msg_values_get(v, v->count, &(rl_msg_value){0}), RL_ERANGE);
    for (size_t i = 0; i < v->count; i++) {
        char path[CDR_PATH_MAX + 32];
        int pn = snprintf(path, sizeof path, "%s[%zu]", v->path, i);
        if ((size_t)pn >= CDR_PATH_MAX) /* the decoder leaves the index off such paths */
            pn = snprintf(path, sizeof path, "%s", v->path);
        log_num(l, RL_MSG_VALUE, 10, '|');
        log_str(l, path);
        log_str(l, "|");
        log_num(l, (unsigned)pn, 10, '|');
        log_str(l, "-|");
        log_num(l, i, 10, '|');
        log_str(l, "0|");
        log_num(l, (unsigned)v->type->kind, 10, '|');
        rl_msg_value x = element_of(v, i), y;
        assert_int_equal(rl_msg_values_get(v, i, &y), RL_OK);
        assert_int_equal(y.kind, x.kind);
        assert_memory_equal(&y.v, &x.v, x.kind == RL_MSG_BOOL ? sizeof(bool) : 8);
        double f = 0, g = -1;
        assert_int_equal(rl_msg_values_f64(v, i, &f, 1), 1);
        assert_int_equal(rl_msg_value_f64(&x, &g), RL_OK);
        assert_memory_equal(&f, &g, sizeof f);
        log_value(l, &x);
        log_add(l, "\n", 1);
    }
}

static int log_visit(void *ctx, const rl_msg_visit *v)
{
    event_log *l = ctx;
    if (v->event == RL_MSG_VALUES) {
        l->values_events++;
        if (l->expand) {
            log_expanded(l, v);
            return 0;
        }
    }
    log_num(l, (unsigned)v->event, 10, '|');
    log_str(l, v->path);
    log_str(l, "|");
    log_num(l, v->path_len, 10, '|');
    log_str(l, v->name ? v->name : "-");
    log_str(l, "|");
    log_num(l, v->index, 10, '|');
    log_num(l, v->count, 10, '|');
    log_num(l, (unsigned)(v->type ? v->type->kind : 0), 10, '|');
    assert_int_equal(strlen(v->path), v->path_len);
    if (v->event == RL_MSG_VALUE)
        log_value(l, &v->value);
    if (v->event == RL_MSG_VALUES) /* not expanded: the raw elements and byte order */
        for (size_t i = 0; i < v->count; i++)
        {
            rl_msg_value x = element_of(v, i);
            log_value(l, &x);
        }
    log_add(l, "\n", 1);
    return ++l->events == l->stop_at ? 5 : 0;
}

static void log_value(event_log *l, const rl_msg_value *x)
{
    if (x->kind == RL_MSG_STRING || x->kind == RL_MSG_WSTRING) {
        log_add(l, x->v.s.ptr, x->v.s.len);
        return;
    }
    unsigned long long bits = 0;
    if (x->kind == RL_MSG_BOOL)
        bits = x->v.b;
    else if (x->kind == RL_MSG_FLOAT32 || x->kind == RL_MSG_FLOAT64)
        memcpy(&bits, &x->v.f, sizeof bits);
    else
        bits = x->v.u; /* integers and enums fill all 64 bits */
    log_num(l, (unsigned)x->kind, 10, ':');
    log_num(l, bits, 16, ';');
}

/* One decoding: the plan or the tree walker, per element or with RL_MSG_DECODE_ARRAYS
 * (expanded or not); its status and error message. */
typedef struct run_kind {
    int plan, values, expand;
    const char *what;
} run_kind;

static int decode_as(const run_kind *k, const rl_msgdef *d, const uint8_t *p, size_t len,
                     event_log *l, char *err, size_t err_cap)
{
    l->expand = k->expand;
    log_add(l, "", 0);
    unsigned flags = k->values ? RL_MSG_DECODE_ARRAYS : 0;
    int rc = k->plan ? (flags ? rl_msg_decode_flags(d, p, len, flags, log_visit, l)
                              : rl_msg_decode(d, p, len, log_visit, l))
                     : cdr_decode_tree(d, p, len, flags, log_visit, l);
    snprintf(err, err_cap, "%s", rc < 0 ? rl_error_last() : "");
    return rc;
}

/* Decodes with `kb` as the reference, then with each of ka[0..n); events, status and error
 * message must agree. */
static void same_as(const run_kind *const *ka, size_t n, const run_kind *kb, const rl_msgdef *d,
                    const uint8_t *bytes, size_t len, size_t stop_at)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, bytes, len);
    event_log b = {.stop_at = stop_at};
    char ea[1024], eb[1024];
    int rb = decode_as(kb, d, copy, len, &b, eb, sizeof eb);
    for (size_t i = 0; i < n; i++) {
        event_log a = {.stop_at = stop_at};
        int ra = decode_as(ka[i], d, copy, len, &a, ea, sizeof ea);
        if (ra != rb || strcmp(ea, eb) != 0 || strcmp(a.text, b.text) != 0) {
            size_t k = 0; /* the first line that differs */
            while (a.text[k] && a.text[k] == b.text[k])
                k++;
            while (k > 0 && a.text[k - 1] != '\n')
                k--;
            fail_msg("%s and %s differ (len %zu, stop %zu): %d '%s' vs %d '%s'\n%s---\n%s",
                     ka[i]->what, kb->what, len, stop_at, ra, ea, rb, eb, a.text + k, b.text + k);
        }
        if (ka[i]->values && ra == RL_OK)
            values_seen += a.values_events;
        free(a.text);
    }
    free(b.text);
    free(copy);
}

static const run_kind plan_elems = {1, 0, 0, "plan"}, tree_elems = {0, 0, 0, "tree walker"},
                      plan_values = {1, 1, 0, "plan (arrays)"},
                      tree_values = {0, 1, 0, "tree walker (arrays)"},
                      plan_values_expanded = {1, 1, 1, "plan (arrays, expanded)"},
                      tree_values_expanded = {0, 1, 1, "tree walker (arrays, expanded)"};

/* The plan against the tree walker per element; with RL_MSG_DECODE_ARRAYS, both ways
 * expanded against the tree walker per element (the elements the VALUES events point at
 * are exactly those of the VALUE events, errors the same), and for stop points the plan
 * against the tree walker unexpanded. */
static void same_both_ways(const rl_msgdef *d, const uint8_t *bytes, size_t len, size_t stop_at)
{
    if (stop_at == 0) { /* (the tree walker with arrays: on the whole payload, below) */
        const run_kind *const all[] = {&plan_elems, &plan_values_expanded};
        same_as(all, 2, &tree_elems, d, bytes, len, 0);
        return;
    }
    const run_kind *const per_elem[] = {&plan_elems}, *const arrays[] = {&plan_values};
    same_as(per_elem, 1, &tree_elems, d, bytes, len, stop_at);
    same_as(arrays, 1, &tree_values, d, bytes, len, stop_at);
}

/* A payload of `json` in each final encapsulation kind, then its cuts and corruptions. */
static void check_schema(const char *encoding, const char *name, const char *text, const char *json)
{
    rl_msgdef *d = NULL;
    if (rl_msgdef_parse(&d, encoding, name, text, strlen(text)) != RL_OK)
        fail_msg("%s: %s", name, rl_error_last());
    const int kinds[] = {RL_CDR_LE, RL_CDR_BE, RL_CDR2_LE, RL_CDR2_BE, RL_D_CDR2_LE};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        uint8_t *p = NULL;
        size_t n = 0;
        if (rl_msg_encode_json_text(d, json, strlen(json), kinds[k], &p, &n) != RL_OK)
            fail_msg("%s: encode: %s", name, rl_error_last());
        size_t events = 0;
        event_log count = {0};
        log_add(&count, "", 0);
        assert_int_equal(rl_msg_decode(d, p, n, log_visit, &count), RL_OK);
        events = count.events;
        free(count.text);
        for (size_t stop = 0; stop <= events; stop++)
            same_both_ways(d, p, n, stop);
        const run_kind *const tree_arrays[] = {&tree_values_expanded};
        same_as(tree_arrays, 1, &tree_elems, d, p, n, 0);
        for (size_t cut = 0; cut < n; cut++)
            same_both_ways(d, p, cut, 0);
        for (size_t at = 4; at < n; at++) {
            const uint8_t flips[] = {0xff, 0x80};
            for (size_t f = 0; f < sizeof flips; f++) {
                uint8_t saved = p[at];
                p[at] ^= flips[f];
                same_both_ways(d, p, n, 0);
                p[at] = saved;
            }
        }
        free(p);
    }
    rl_msgdef_free(d);
}

#define SEP "================================================================================\n"

static void test_ros2_nested(void **state)
{
    (void)state;
    check_schema("ros2msg", "t/msg/S",
                 "std_msgs/Header header\nP[] ps\nP[2] fixed\nint16[<=3] xs\nstring<=4 s\n"
                 "bool[2] bs\nuint64[] us\nstring[] names\nfloat32 f\nint8 i8\nchar c\nbyte b\n"
                 SEP "MSG: t/P\nstring name\nfloat32[] v\nint8 a\nQ q\n"
                 SEP "MSG: t/Q\nfloat64 x\nuint32 y\n"
                 SEP "MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n",
                 "{\"header\":{\"stamp\":{\"sec\":-5,\"nanosec\":7},\"frame_id\":\"map\"},"
                 "\"ps\":[{\"name\":\"a\",\"v\":[1.5,2],\"a\":-3,\"q\":{\"x\":0.25,\"y\":9}},"
                 "{\"name\":\"\",\"v\":[],\"a\":4,\"q\":{\"x\":-1,\"y\":1}}],"
                 "\"fixed\":[{\"name\":\"f\",\"v\":[3],\"a\":1,\"q\":{\"x\":1,\"y\":2}},"
                 "{\"name\":\"g\",\"v\":[],\"a\":2,\"q\":{\"x\":3,\"y\":4}}],"
                 "\"xs\":[1,-2],\"s\":\"abcd\",\"bs\":[true,false],\"us\":[18446744073709551615],"
                 "\"names\":[\"x\",\"yz\"],\"f\":0.5,\"i8\":-128,\"c\":65,\"b\":255}");
}

static void test_long_arrays_and_paths(void **state)
{
    (void)state;
    /* member names of 403 and 185 bytes: with "deep." the path passes 512 bytes */
    char long_a[404], long_b[186];
    memset(long_a, 'a', sizeof long_a - 1);
    long_a[sizeof long_a - 1] = '\0';
    memset(long_b, 'b', sizeof long_b - 1);
    long_b[sizeof long_b - 1] = '\0';
    /* 120 elements: indices past 9 and 99; names long enough to overflow the path */
    char json[16384];
    size_t n = (size_t)snprintf(json, sizeof json, "{\"vals\":[");
    for (int i = 0; i < 120; i++)
        n += (size_t)snprintf(json + n, sizeof json - n, "%s%d", i ? "," : "", i * 3);
    n += (size_t)snprintf(json + n, sizeof json - n, "],\"pts\":[");
    for (int i = 0; i < 105; i++)
        n += (size_t)snprintf(json + n, sizeof json - n, "%s{\"x\":%d}", i ? "," : "", i);
    snprintf(json + n, sizeof json - n, "],\"deep\":{\"%s\":{\"%s\":{\"ws\":[1,2,3,4,5,6,7,8,9,10,"
             "11,12]}}}}",
             long_a, long_b);
    char text[4096];
    snprintf(text, sizeof text,
             "int32[] vals\nt/P[] pts\nt/A deep\n" SEP "MSG: t/P\nint64 x\n" SEP
             "MSG: t/A\nt/B %s\n" SEP "MSG: t/B\nt/C %s\n" SEP "MSG: t/C\nuint16[12] ws\n",
             long_a, long_b);
    check_schema("ros2msg", "t/msg/L", text, json);
}

static void test_idl_mixed(void **state)
{
    (void)state;
    check_schema("omgidl", "U::S",
                 "module U { enum E { A, @value(7) B };\n"
                 " union V switch (E) { case A: long l; case B: string s; };\n"
                 " @appendable struct In { long a; @optional string s; };\n"
                 " struct F { short h; double d; };\n"
                 " @final struct S { V v; sequence<V, 3> vs; long m[2][3]; F fs[2];\n"
                 "   sequence<F> fq; In in; @optional long o; E e; sequence<E> es;\n"
                 "   sequence<sequence<octet>> bytes; };\n};\n",
                 "{\"v\":{\"_d\":7,\"s\":\"hi\"},\"vs\":[{\"_d\":0,\"l\":-1},{\"_d\":7,\"s\":\"\"}],"
                 "\"m\":[[1,2,3],[4,5,6]],\"fs\":[{\"h\":1,\"d\":0.5},{\"h\":-1,\"d\":2}],"
                 "\"fq\":[{\"h\":3,\"d\":1e300}],\"in\":{\"a\":5,\"s\":\"opt\"},\"o\":12,\"e\":7,"
                 "\"es\":[0,7,0],\"bytes\":[[1,2],[],[255]]}");
    check_schema("omgidl", "U::S",
                 "module U { struct R; struct R { long x; sequence<R> kids; };\n"
                 " struct S { R r; @optional double z; };\n};\n",
                 "{\"r\":{\"x\":1,\"kids\":[{\"x\":2,\"kids\":[]},{\"x\":3,\"kids\":[{\"x\":4,"
                 "\"kids\":[]}]}]},\"z\":null}");
}

static void test_service_event(void **state)
{
    (void)state;
    check_schema("ros2msg", "t/srv/Add_Event", "int64 a\nint64 b\n---\nint64 sum\n",
                 "{\"info\":{\"event_type\":1,\"stamp\":{\"sec\":1,\"nanosec\":2},"
                 "\"client_gid\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],\"sequence_number\":3},"
                 "\"request\":[{\"a\":1,\"b\":2}],\"response\":[]}");
}

/* Arrays of every primitive kind (a covariance among them), fixed and variable, empty and
 * not, nested in a sequence of structs: the VALUES events give the elements of the VALUE
 * events, in both byte orders and both XCDR versions (8-byte elements aligned to 8 or 4). */
static void test_primitive_arrays(void **state)
{
    (void)state;
    values_seen = 0;
    check_schema("ros2msg", "t/msg/A",
                 "int8 pad\nfloat64[9] covariance\nbool[] bs\nbyte[3] octets\nchar[] cs\n"
                 "int8[2] i8\nuint8[] u8\nint16[] i16\nuint16[2] u16\nint32[] i32\nuint32[1] u32\n"
                 "int64[] i64\nuint64[2] u64\nfloat32[] f32\nfloat64[] empty\nt/R[] rows\n"
                 SEP "MSG: t/R\nint8 tag\nfloat64[<=4] v\n",
                 "{\"pad\":1,\"covariance\":[0.1,-0.0,1e300,-2.5,4,5,6,7,\"NaN\"],\"bs\":[true,false,true],"
                 "\"octets\":[0,128,255],\"cs\":[65],\"i8\":[-128,127],\"u8\":[],\"i16\":[-32768,7],"
                 "\"u16\":[65535,1],\"i32\":[-2147483648],\"u32\":[4294967295],"
                 "\"i64\":[-9223372036854775808,9223372036854775807],"
                 "\"u64\":[18446744073709551615,0],\"f32\":[0.1,\"-Infinity\"],\"empty\":[],"
                 "\"rows\":[{\"tag\":3,\"v\":[1.5,2.5]},{\"tag\":4,\"v\":[]}]}");
    assert_true(values_seen > 0);
}

static int ignore_visit(void *ctx, const rl_msg_visit *v)
{
    (void)ctx;
    (void)v;
    return 0;
}

static void test_decode_flags(void **state)
{
    (void)state;
    rl_msgdef *d = NULL;
    const char *text = "float64[2] xy\n";
    assert_int_equal(rl_msgdef_parse(&d, "ros2msg", "t/msg/F", text, strlen(text)), RL_OK);
    const uint8_t le[] = {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0xc0};
    assert_int_equal(rl_msg_decode_flags(d, le, sizeof le, 0x80, ignore_visit, NULL), RL_EINVAL);
    assert_int_equal(rl_msg_decode_flags(d, le, sizeof le, RL_MSG_DECODE_ARRAYS, ignore_visit,
                                         NULL),
                     RL_OK);
    rl_msg_visit not_values = {.event = RL_MSG_VALUE};
    rl_msg_value x;
    double f[2];
    assert_int_equal(rl_msg_values_get(&not_values, 0, &x), RL_EINVAL);
    assert_int_equal(rl_msg_values_f64(&not_values, 0, f, 2), 0);
    /* hand-made: 1.0 and -2.0 little-endian; the second half only */
    rl_msg_visit v = {.event = RL_MSG_VALUES, .count = 2, .elems = le + 4};
    v.value.kind = RL_MSG_FLOAT64;
    assert_int_equal(rl_msg_values_f64(&v, 1, f, 2), 1);
    assert_true(f[0] == -2.0);
    assert_int_equal(rl_msg_values_f64(&v, 2, f, 2), 0);
    rl_msgdef_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ros2_nested),
        cmocka_unit_test(test_long_arrays_and_paths),
        cmocka_unit_test(test_idl_mixed),
        cmocka_unit_test(test_service_event),
        cmocka_unit_test(test_primitive_arrays),
        cmocka_unit_test(test_decode_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
