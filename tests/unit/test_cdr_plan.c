/* The decoding plan (src/formats/cdr_plan.c) against the tree walker it stands in for:
 * for many schemas (nested structs, arrays and sequences of structs, strings, enums,
 * unions, optionals, multi-dimensional arrays, long paths, indices past 9 and 99), both
 * byte orders and both XCDR versions, every payload, every cut of it and every one-byte
 * corruption must give the same events (path, name, index, count, value), the same status
 * and the same error message; a visitor stopping at each event stops both alike. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/msgdef.h"
#include "formats/cdr_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct event_log {
    char *text;
    size_t len, cap;
    size_t events, stop_at; /* stop_at: 1-based event that answers 5; 0 never */
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

static int log_visit(void *ctx, const rl_msg_visit *v)
{
    event_log *l = ctx;
    char line[1024];
    int n = snprintf(line, sizeof line, "%d|%s|%zu|%s|%zu|%zu|%d|", (int)v->event, v->path,
                     v->path_len, v->name ? v->name : "-", v->index, v->count,
                     (int)(v->type ? v->type->kind : 0));
    assert_int_equal(strlen(v->path), v->path_len);
    log_add(l, line, (size_t)n);
    if (v->event == RL_MSG_VALUE) {
        const rl_msg_value *x = &v->value;
        if (x->kind == RL_MSG_STRING || x->kind == RL_MSG_WSTRING)
            log_add(l, x->v.s.ptr, x->v.s.len);
        else {
            unsigned long long bits = 0;
            if (x->kind == RL_MSG_BOOL)
                bits = x->v.b;
            else if (x->kind == RL_MSG_FLOAT32 || x->kind == RL_MSG_FLOAT64)
                memcpy(&bits, &x->v.f, sizeof bits);
            else
                bits = x->v.u; /* integers and enums fill all 64 bits */
            n = snprintf(line, sizeof line, "%d:%llx", (int)x->kind, bits);
            log_add(l, line, (size_t)n);
        }
    }
    log_add(l, "\n", 1);
    return ++l->events == l->stop_at ? 5 : 0;
}

/* Decodes with the plan and with the tree walker; everything must agree. */
static void same_both_ways(const rl_msgdef *d, const uint8_t *bytes, size_t len, size_t stop_at)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, bytes, len);
    event_log a = {.stop_at = stop_at}, b = {.stop_at = stop_at};
    log_add(&a, "", 0);
    log_add(&b, "", 0);
    int ra = rl_msg_decode(d, copy, len, log_visit, &a);
    char ea[1024];
    snprintf(ea, sizeof ea, "%s", ra < 0 ? rl_error_last() : "");
    int rb = cdr_decode_tree(d, copy, len, log_visit, &b);
    const char *eb = rb < 0 ? rl_error_last() : "";
    if (ra != rb || strcmp(ea, eb) != 0 || strcmp(a.text, b.text) != 0) {
        size_t k = 0; /* the first line that differs */
        while (a.text[k] && a.text[k] == b.text[k])
            k++;
        while (k > 0 && a.text[k - 1] != '\n')
            k--;
        fail_msg("plan and tree differ (len %zu, stop %zu): %d '%s' vs %d '%s'\n%s---\n%s", len,
                 stop_at, ra, ea, rb, eb, a.text + k, b.text + k);
    }
    free(a.text);
    free(b.text);
    free(copy);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ros2_nested),
        cmocka_unit_test(test_long_arrays_and_paths),
        cmocka_unit_test(test_idl_mixed),
        cmocka_unit_test(test_service_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
