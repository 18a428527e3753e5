/* Tests of the schema parsers (runlab/msgdef.h): every ros2msg and IDL construct into the
 * type model, errors naming line and column, services and rosbag2 service events; and the
 * decoding of IDL types (appendable with optional members, mutable, unions, enums,
 * multi-dimensional arrays, inheritance) from hand-computed payloads. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/msgdef.h"
#include "msg_roundtrip.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rl_msgdef *parse_ok(const char *enc, const char *name, const char *text)
{
    rl_msgdef *d = NULL;
    int rc = rl_msgdef_parse(&d, enc, name, text, strlen(text));
    if (rc != RL_OK)
        print_message("parse failed: %s\n", rl_error_last());
    assert_int_equal(rc, RL_OK);
    return d;
}

static void parse_fails(const char *enc, const char *name, const char *text, const char *msg)
{
    rl_msgdef *d = NULL;
    assert_int_equal(rl_msgdef_parse(&d, enc, name, text, strlen(text)), RL_EPARSE);
    assert_null(d);
    if (!strstr(rl_error_last(), msg))
        print_message("error: %s\nexpected: %s\n", rl_error_last(), msg);
    assert_non_null(strstr(rl_error_last(), msg));
}

static void format_is(const rl_msgdef *d, const char *expected)
{
    char *text = NULL;
    assert_int_equal(rl_msgdef_format(d, &text), RL_OK);
    if (strcmp(text, expected) != 0)
        print_message("got:\n%s", text);
    assert_string_equal(text, expected);
    free(text);
}

static void json_is(const rl_msgdef *d, const uint8_t *p, size_t n, const char *expected)
{
    uint8_t *copy = malloc(n);
    assert_non_null(copy);
    memcpy(copy, p, n);
    char *buf = NULL;
    size_t cap = 0, len = 0;
    int rc = rl_msg_to_json(d, copy, n, &buf, &cap, &len);
    if (rc != RL_OK)
        print_message("decode failed: %s\n", rl_error_last());
    assert_int_equal(rc, RL_OK);
    assert_string_equal(buf, expected);
    msg_roundtrip(d, p, expected);
    free(buf);
    free(copy);
}

#define SEP "================================================================================\n"

static void test_ros2_constructs(void **state)
{
    (void)state;
    rl_msgdef *d = parse_ok("ros2msg", "pkg/msg/All",
                            "# a comment line\n"
                            "bool a\nbyte b\nchar c\nint8 d\nuint8 e\nint16 f\nuint16 g  # trailing\n"
                            "int32 h\nuint32 i\nint64 j\nuint64 k\nfloat32 l\nfloat64 m\nstring n\n"
                            "wstring o\nstring<=5 p\nint32[3] q\nint32[] r\nint32[<=4] s\n"
                            "string<=5[<=3] t\n"
                            "int32 X=5\nint32 Y = -3 # comment\nstring S=a # not a comment\n"
                            "float64 u 1.5\nstring v \"hi # there\"\n"
                            "Sub w\npkg/Sub x\nother/Thing y\nHeader h2\nbuiltin_interfaces/Duration z\n"
                            SEP "MSG: pkg/Sub\nThing t\n"
                            SEP "MSG: other/msg/Thing\nint8 v\n"
                            SEP "MSG: pkg/Thing\nuint8 w\n"
                            SEP "MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n");
    format_is(d, "struct pkg/msg/Thing\n  uint8 w\n"
                 "struct pkg/msg/Sub\n  pkg/msg/Thing t\n"
                 "struct other/msg/Thing\n  int8 v\n"
                 "struct builtin_interfaces/msg/Time\n  int32 sec\n  uint32 nanosec\n"
                 "struct std_msgs/msg/Header\n  builtin_interfaces/msg/Time stamp\n  string frame_id\n"
                 "struct builtin_interfaces/msg/Duration\n  int32 sec\n  uint32 nanosec\n"
                 "struct pkg/msg/All\n"
                 "  const int32 X = 5\n  const int32 Y = -3\n  const string S = a # not a comment\n"
                 "  bool a\n  octet b\n  char c\n  int8 d\n  uint8 e\n  int16 f\n  uint16 g\n  int32 h\n"
                 "  uint32 i\n  int64 j\n  uint64 k\n  float32 l\n  float64 m\n  string n\n  wstring o\n"
                 "  string<=5 p\n  int32[3] q\n  int32[] r\n  int32[<=4] s\n  string<=5[<=3] t\n"
                 "  float64 u 1.5\n  string v \"hi # there\"\n  pkg/msg/Sub w\n  pkg/msg/Sub x\n"
                 "  other/msg/Thing y\n  std_msgs/msg/Header h2\n  builtin_interfaces/msg/Duration z\n");
    uint32_t idx;
    assert_int_equal(rl_msgdef_find(d, "pkg/msg/Sub", &idx), RL_OK);
    const rl_msg_type *root = rl_msgdef_type(d, rl_msgdef_root(d));
    assert_string_equal(root->name, "pkg/msg/All");
    assert_int_equal(root->nconstants, 3);
    assert_string_equal(root->members[20].name, "u");
    assert_string_equal(root->members[20].default_value, "1.5");
    assert_int_equal(rl_msgdef_find(d, "nope", &idx), RL_ENOENT);
    rl_msgdef_free(d);
    /* an empty message has rosidl's hidden uint8 */
    d = parse_ok("ros2msg", "std_msgs/msg/Empty", "# nothing\n");
    const uint8_t p[] = {0x00, 0x01, 0x00, 0x00, 0x00};
    json_is(d, p, sizeof p, "{}");
    rl_msgdef_free(d);
}

/* The type table: every type of the schema (the primitives, unnamed, and the named
 * types, each once), the root among them, NULL past the end. */
static void test_type_table(void **state)
{
    (void)state;
    rl_msgdef *d = parse_ok("ros2msg", "pkg/msg/Outer",
                            "pkg/Inner a\npkg/Inner b\nint8 c\n" SEP "MSG: pkg/Inner\nint32 x\n");
    size_t n = rl_msgdef_type_count(d);
    assert_true(n >= 2);
    size_t outer = 0, inner = 0;
    for (uint32_t i = 0; i < n; i++) {
        assert_non_null(rl_msgdef_type(d, i));
        const char *name = rl_msgdef_type(d, i)->name; /* NULL for primitives */
        outer += name && strcmp(name, "pkg/msg/Outer") == 0;
        inner += name && strcmp(name, "pkg/msg/Inner") == 0;
    }
    assert_int_equal(outer, 1);
    assert_int_equal(inner, 1);
    assert_true(rl_msgdef_root(d) < n);
    assert_string_equal(rl_msgdef_type(d, rl_msgdef_root(d))->name, "pkg/msg/Outer");
    assert_null(rl_msgdef_type(d, (uint32_t)n));
    assert_int_equal(rl_msgdef_type_count(NULL), 0);
    rl_msgdef_free(d);
}

static void test_ros2_errors(void **state)
{
    (void)state;
    parse_fails("ros2msg", "pkg/msg/T", "int32 a\nfoo b\n", "schema 'pkg/msg/T': line 2, column 1: unknown type 'pkg/msg/foo'");
    parse_fails("ros2msg", "pkg/msg/T", "int32[x] a\n", "line 1, column 7: expected an array length");
    parse_fails("ros2msg", "pkg/msg/T", "int32 a\nint32\n", "line 2, column 6: expected a field name");
    parse_fails("ros2msg", "pkg/msg/T", "int32 a\n" SEP "int8 b\n", "line 3, column 1: expected 'MSG: pkg/Type'");
    parse_fails("ros2msg", "pkg/msg/T", "string<=0 a\n", "line 1, column 9: expected a string bound");
    parse_fails("ros2msg", "pkg/msg/T", "int32<=3 a\n", "expected '<=N' only after string");
    parse_fails("ros2msg", "pkg/msg/T", "T self\n", "type 'pkg/msg/T' contains itself");
    parse_fails("ros2msg", "pkg/msg/T", "A a\n" SEP "MSG: pkg/A\nT back\n", "contains itself");
    parse_fails("ros2msg", "pkg/msg/T", "int32 X=\n", "line 1, column 9: expected the constant's value");
    parse_fails("ros2msg", "nopackage", "int32 a\n", "expected a name 'pkg/msg/Type'");
    /* a recursive type through a sequence is fine */
    rl_msgdef *d = parse_ok("ros2msg", "pkg/msg/Tree", "Tree[] children\nint32 v\n");
    const uint8_t p[] = {0x00, 0x01, 0x00, 0x00, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0};
    json_is(d, p, sizeof p, "{\"children\":[{\"children\":[],\"v\":7}],\"v\":9}");
    rl_msgdef_free(d);
    rl_msgdef *none = NULL;
    assert_int_equal(rl_msgdef_parse(&none, "protobuf", "x", "", 0), RL_EUNSUPPORTED);
}

static const char *const add_two_ints = "int64 a\nint64 b\n---\nint64 sum\n";

/* A rosbag2 service event: info, request[<=1], response[<=1]; laid out by hand (CDR_LE). */
static void test_ros2_service_event(void **state)
{
    (void)state;
    rl_msgdef *d = parse_ok("ros2msg", "example_interfaces/srv/AddTwoInts_Event", add_two_ints);
    uint8_t p[72] = {0x00, 0x01, 0x00, 0x00, 1, 0, 0, 0, 10, 0, 0, 0, 20, 0, 0, 0};
    p[16] = 0xab;      /* client_gid[0] at rel 12 */
    p[36] = 3;         /* sequence_number at rel 32 */
    p[44] = 1;         /* request: 1 element at rel 40 */
    p[52] = 2;         /* a at rel 48 */
    p[60] = 3;         /* b at rel 56 */
    /* response: 0 elements at rel 64 */
    json_is(d, p, 72,
            "{\"info\":{\"event_type\":1,\"stamp\":{\"sec\":10,\"nanosec\":20},\"client_gid\":[171,0,0,0,0,"
            "0,0,0,0,0,0,0,0,0,0,0],\"sequence_number\":3},\"request\":[{\"a\":2,\"b\":3}],\"response\":[]}");
    double v;
    assert_int_equal(rl_msg_get_f64(d, p, 72, "request[0].b", &v), RL_OK);
    assert_true(v == 3.0);
    assert_int_equal(rl_msg_get_f64(d, p, 72, "response[0].sum", &v), RL_ENOENT);
    rl_msgdef_free(d);
    /* the bare service name also means the event; _Request picks the request */
    d = parse_ok("ros2msg", "example_interfaces/srv/AddTwoInts", add_two_ints);
    assert_string_equal(rl_msgdef_type(d, rl_msgdef_root(d))->name, "example_interfaces/srv/AddTwoInts_Event");
    rl_msgdef_free(d);
    d = parse_ok("ros2msg", "example_interfaces/srv/AddTwoInts_Request", add_two_ints);
    const uint8_t q[] = {0x00, 0x01, 0x00, 0x00, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
    json_is(d, q, sizeof q, "{\"a\":1,\"b\":2}");
    rl_msgdef_free(d);
    parse_fails("ros2msg", "p/srv/S", "int8 a\n---\nint8 b\n---\n", "line 4, column 1: a service has one '---' line");
}

static const char *const idl_text =
    "#include \"other.idl\"\n"
    "#pragma once\n"
    "// geometry\n"
    "module m {\n"
    "  const long N = (1 << 2) - 2;\n"
    "  const string NAME = \"x\";\n"
    "  enum Kind { A, @value(7) B, C };\n"
    "  /* a base */\n"
    "  @final struct Base { @key long id; };\n"
    "  @appendable struct Pt : Base { double x; @optional string<8> name; Kind k; };\n"
    "  union U switch (short) { case 1: case 2: long l; case 3: string s; default: octet o; };\n"
    "  typedef short Grid[N][2];\n"
    "  @final struct F { U u; Grid m; sequence<Kind> ks; };\n"
    "  @mutable struct M { @id(10) double x; @optional long o; sequence<Pt, 2> pts; };\n"
    "  @final struct O { @optional long a; long b; };\n"
    "  @topic @verbatim(language=\"c\", text=\"x\") @unknown_thing(1) struct Plain { m::Kind k; ::m::U u; };\n"
    "};\n";

static void test_idl_constructs(void **state)
{
    (void)state;
    rl_msgdef *d = parse_ok("omgidl", "m::M", idl_text);
    format_is(d, "const int32 m::N = (1 << 2) - 2\nconst string m::NAME = \"x\"\n"
                 "enum m::Kind\n  A = 0\n  B = 7\n  C = 8\n"
                 "@appendable struct m::Pt\n  @key int32 id\n  float64 x\n  @optional string<=8 name\n  m::Kind k\n"
                 "@mutable struct m::M\n  @id(10) float64 x\n  @id(11) @optional int32 o\n  @id(12) m::Pt[<=2] pts\n");
    rl_msgdef_free(d);
    d = parse_ok("omgidl", "m::F", idl_text);
    format_is(d, "const int32 m::N = (1 << 2) - 2\nconst string m::NAME = \"x\"\n"
                 "@final union m::U switch (int16)\n  case 1: case 2: int32 l\n  case 3: string s\n  default: octet o\n"
                 "enum m::Kind\n  A = 0\n  B = 7\n  C = 8\n"
                 "@final struct m::F\n  m::U u\n  int16[2][2] m\n  m::Kind[] ks\n");
    size_t nc;
    assert_non_null(rl_msgdef_constants(d, &nc));
    assert_int_equal(nc, 2);
    rl_msgdef_free(d);
    /* nested templates: ">>" closes two */
    rl_msgdef *nested = parse_ok("omgidl", "N", "struct N { sequence<sequence<long, 2>> v; sequence<string<4>> s; };");
    format_is(nested, "@final struct N\n  int32[<=2][] v\n  string<=4[] s\n");
    const uint8_t np[] = {0x00, 0x01, 0x00, 0x00, 1, 0, 0, 0, 2, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0, 0,
                          1, 0, 0, 0, 3, 0, 0, 0, 'a', 'b', 0};
    json_is(nested, np, sizeof np, "{\"v\":[[7,8]],\"s\":[\"ab\"]}");
    rl_msgdef_free(nested);
    /* the root may be named by its last part when that is unambiguous */
    d = parse_ok("omgidl", "Plain", idl_text);
    rl_msgdef_free(d);
}

static void test_idl_errors(void **state)
{
    (void)state;
    parse_fails("omgidl", "T", "struct T { long a }", "schema 'T': line 1, column 19: expected ';', found '}'");
    parse_fails("omgidl", "T", "struct T {\n  Foo a;\n};", "line 2, column 3: unknown type 'Foo', found 'Foo'");
    parse_fails("omgidl", "T", "struct T { long a[0]; };", "line 1, column 19: expected a bound of 1..4294967295");
    parse_fails("omgidl", "T", "struct T { long a; long a; };", "line 1, column 25: member declared twice");
    parse_fails("omgidl", "T", "struct T { long a; };\nstruct T { long b; };", "line 2");
    parse_fails("omgidl", "T", "struct T { long a; }", "line 1, column 21: expected ';', found the end of the text");
    parse_fails("omgidl", "T", "struct T { long a; }; /* open", "comment not closed");
    parse_fails("omgidl", "T", "union U switch (double) { case 1: long a; }; struct T { U u; };",
                "expected an integer, char, boolean or enum discriminator");
    parse_fails("omgidl", "X", "struct T { long a; };", "the text defines no struct of that name");
    parse_fails("omgidl", "T", "struct S; struct T { S s; };", "'S' is declared but never defined");
    parse_fails("omgidl", "T", "struct T { T t; };", "contains itself");
    parse_fails("omgidl", "T", "const long Z = 1 / 0; struct T { long a; };", "division by zero");
    parse_fails("omgidl", "T", "interface T { };", "expected module, struct, enum, union, typedef or const");
    /* refused rather than decoded wrongly: enums narrower than 32 bits */
    parse_fails("omgidl", "T", "@bit_bound(8) enum E { A, B };\nstruct T { E e; };",
                "line 1, column 15: an enum with @bit_bound other than 32 is not supported");
    rl_msgdef *d = parse_ok("omgidl", "T", "@bit_bound(32) enum E { A };\n@autoid(SEQUENTIAL) struct T { E e; };");
    rl_msgdef_free(d);
}

/* @autoid(HASH) and @hashid: the member ids Cyclone DDS 0.10.2's idlc computes for
 *   module m { @mutable @autoid(HASH) struct H { long alpha; double beta;
 *     @hashid("zeta") long gamma; @hashid long delta; }; };
 * (its generated DDS_OP_PLM operands: 54728492, 13269912, 119955682, 145472611), not ids
 * computed by runlab; then a hand-made PL_CDR2 payload with those ids decodes. */
static void test_idl_autoid_hash(void **state)
{
    (void)state;
    rl_msgdef *d = parse_ok("omgidl", "m::H",
                            "module m { @mutable @autoid(HASH) struct H { long alpha; double beta;\n"
                            "  @hashid(\"zeta\") long gamma; @hashid long delta; @id(7) long eps; }; };");
    const rl_msg_type *t = rl_msgdef_type(d, rl_msgdef_root(d));
    assert_int_equal(t->nmembers, 5);
    assert_int_equal(t->members[0].id, 54728492u);
    assert_int_equal(t->members[1].id, 13269912u);
    assert_int_equal(t->members[2].id, 119955682u);
    assert_int_equal(t->members[3].id, 145472611u);
    assert_int_equal(t->members[4].id, 7u); /* @id wins */
    /* PL_CDR2 LE: DHEADER 44, then EMHEADERs (length code 2 or 3, the id) in another order */
    const uint8_t p[] = {0x00, 0x0b, 0x00, 0x00, 44, 0, 0, 0,
                         0x98, 0x7b, 0xca, 0x30, 0, 0, 0, 0, 0, 0, 0x04, 0x40, /* beta = 2.5 */
                         0x2c, 0x17, 0x43, 0x23, 0xfe, 0xff, 0xff, 0xff,       /* alpha = -2 */
                         0x63, 0xbc, 0xab, 0x28, 4, 0, 0, 0,                   /* delta = 4 */
                         0xe2, 0x60, 0x26, 0x27, 3, 0, 0, 0,                   /* gamma = 3 */
                         0x07, 0, 0, 0x20, 9, 0, 0, 0};                        /* eps = 9 */
    json_is(d, p, sizeof p, "{\"alpha\":-2,\"beta\":2.5,\"gamma\":3,\"delta\":4,\"eps\":9}");
    rl_msgdef_free(d);
    parse_fails("omgidl", "T", "struct T { @hashid(zeta) long a; };", "expected @hashid or @hashid(\"name\")");
    /* @autoid on a module holds for every struct inside it, nested modules included, that
     * does not say its own; ids as idlc 0.10.2 generates them for
     *   @autoid(HASH) module m { module n { @mutable struct H { long alpha; double beta; }; };
     *     @mutable @autoid(SEQUENTIAL) struct S { long alpha; double beta; }; };
     * (DDS_OP_PLM operands 54728492, 13269912 for H; 0, 1 for S). */
    static const char module_autoid[] =
        "@autoid(HASH) module m { module n { @mutable struct H { long alpha; double beta; }; };\n"
        "  @mutable @autoid(SEQUENTIAL) struct S { long alpha; double beta; }; };\n"
        "module o { @mutable struct U { long alpha; double beta; }; };";
    static const char *const roots[3] = {"m::n::H", "m::S", "o::U"};
    static const uint32_t ids[3][2] = {{54728492u, 13269912u}, {0, 1}, {0, 1}};
    for (int k = 0; k < 3; k++) {
        d = parse_ok("omgidl", roots[k], module_autoid);
        t = rl_msgdef_type(d, rl_msgdef_root(d));
        assert_int_equal(t->nmembers, 2);
        assert_int_equal(t->members[0].id, ids[k][0]);
        assert_int_equal(t->members[1].id, ids[k][1]);
        rl_msgdef_free(d);
    }
}

/* XCDR2 appendable with an optional member: DHEADER, presence byte. */
static void test_idl_appendable_optional(void **state)
{
    (void)state;
    rl_msgdef *d = parse_ok("omgidl", "m::Pt", idl_text);
    const uint8_t present[] = {0x00, 0x09, 0x00, 0x00, 28, 0, 0, 0, 5, 0, 0, 0,
                               0, 0, 0, 0, 0, 0, 0x04, 0x40,                  /* x = 2.5 at rel 8 */
                               1, 0, 0, 0, 3, 0, 0, 0, 'a', 'b', 0, 0,        /* name present */
                               7, 0, 0, 0};                                   /* k = B */
    json_is(d, present, sizeof present, "{\"id\":5,\"x\":2.5,\"name\":\"ab\",\"k\":7}");
    const uint8_t absent[] = {0x00, 0x09, 0x00, 0x00, 20, 0, 0, 0, 5, 0, 0, 0,
                              0, 0, 0, 0, 0, 0, 0x04, 0x40, 0, 0, 0, 0, 7, 0, 0, 0};
    json_is(d, absent, sizeof absent, "{\"id\":5,\"x\":2.5,\"name\":null,\"k\":7}");
    rl_msg_path *path = NULL;
    rl_msg_value v;
    assert_int_equal(rl_msg_path_compile(&path, d, "name"), RL_OK);
    assert_int_equal(rl_msg_path_get(path, absent, sizeof absent, &v), RL_ENOENT);
    assert_int_equal(rl_msg_path_get(path, present, sizeof present, &v), RL_OK);
    assert_int_equal(v.v.s.len, 2);
    rl_msg_path_free(path);
    double k;
    assert_int_equal(rl_msg_get_f64(d, absent, sizeof absent, "k", &k), RL_OK);
    assert_true(k == 7.0);
    rl_msgdef_free(d);
}

/* A union, a typedef'd two-dimensional array and a sequence of enums (XCDR2: DHEADER). */
static void test_idl_union_arrays(void **state)
{
    (void)state;
    rl_msgdef *d = parse_ok("omgidl", "m::F", idl_text);
    const uint8_t p[] = {0x00, 0x07, 0x00, 0x00, 3, 0, 0, 0, 2, 0, 0, 0, 'z', 0,
                         1, 0, 2, 0, 3, 0, 4, 0, 0, 0,                      /* m, pad */
                         12, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0};  /* ks */
    json_is(d, p, sizeof p, "{\"u\":{\"_d\":3,\"s\":\"z\"},\"m\":[[1,2],[3,4]],\"ks\":[0,7]}");
    const uint8_t q[] = {0x00, 0x07, 0x00, 0x00, 9, 0, 0xee, 0,         /* _d = 9: default, o */
                         0, 0, 0, 0, 0, 0, 0, 0,                            /* m at rel 4 */
                         4, 0, 0, 0, 0, 0, 0, 0};                           /* ks: DHEADER 4, n = 0 */
    json_is(d, q, sizeof q, "{\"u\":{\"_d\":9,\"o\":238},\"m\":[[0,0],[0,0]],\"ks\":[]}");
    double v;
    assert_int_equal(rl_msg_get_f64(d, p, sizeof p, "m[1][0]", &v), RL_OK);
    assert_true(v == 3.0);
    assert_int_equal(rl_msg_get_f64(d, p, sizeof p, "ks[1]", &v), RL_OK);
    assert_true(v == 7.0);
    assert_int_equal(rl_msg_get_f64(d, p, sizeof p, "u.l", &v), RL_ENOENT);
    assert_non_null(strstr(rl_error_last(), "union case not active"));
    rl_msgdef_free(d);
}

/* XCDR2 mutable: members in any order, an absent optional, a nested appendable sequence. */
/* A struct or union without an extensibility annotation is final (idlc's default), whatever
 * encloses it; @default_extensibility on a module changes that for the types inside it
 * (nested modules too) that say nothing; a derived struct says what its base says. The
 * ros2msg types keep the kind of the payload's header (rmw writes them as final CDR). */
static void test_idl_default_extensibility(void **state)
{
    (void)state;
    rl_msgdef *d = parse_ok("omgidl", "o::D",
                            "@default_extensibility(APPENDABLE) module m {\n"
                            "  struct A { long x; };\n"
                            "  module n { union U switch (long) { case 1: long v; }; };\n"
                            "  @mutable struct C { long z; m::n::U u; };\n"
                            "  @default_extensibility(MUTABLE) module k { struct E : m::A { long e; }; struct G { long g; }; };\n"
                            "};\n"
                            "module o { struct D { m::C c; }; };\n");
    format_is(d, "@appendable union m::n::U switch (int32)\n  case 1: int32 v\n"
                 "@mutable struct m::C\n  @id(0) int32 z\n  @id(1) m::n::U u\n"
                 "@final struct o::D\n  m::C c\n");
    static const struct {
        const char *name;
        rl_msg_ext ext;
    } kinds[] = {{"m::A", RL_MSG_EXT_APPENDABLE}, {"m::k::E", RL_MSG_EXT_APPENDABLE}, {"m::k::G", RL_MSG_EXT_MUTABLE}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        uint32_t t = 0;
        assert_int_equal(rl_msgdef_find(d, kinds[i].name, &t), RL_OK);
        assert_int_equal(rl_msgdef_type(d, t)->ext, kinds[i].ext);
    }
    rl_msgdef_free(d);
    parse_fails("omgidl", "T", "@default_extensibility(SOMETIMES) module m { struct T { long a; }; };",
                "line 1, column 23: expected @default_extensibility(FINAL), (APPENDABLE) or (MUTABLE)");
    rl_msgdef *r = parse_ok("ros2msg", "p/msg/T", "int32 a\n");
    assert_int_equal(rl_msgdef_type(r, rl_msgdef_root(r))->ext, RL_MSG_EXT_DEFAULT);
    rl_msgdef_free(r);
}

static void test_idl_mutable(void **state)
{
    (void)state;
    rl_msgdef *d = parse_ok("omgidl", "m::M", idl_text);
    const uint8_t p[] = {0x00, 0x0b, 0x00, 0x00, 36, 0, 0, 0,
                         12, 0, 0, 0x40, 16, 0, 0, 0,                     /* pts: LC4, 16 bytes */
                         12, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0,             /* seq DHEADER 12, n=1, Pt DHEADER 4 */
                         9, 0, 0, 0,                                       /* Pt.id = 9, the rest cut */
                         10, 0, 0, 0x30, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};   /* x: LC3, 1.0 */
    json_is(d, p, sizeof p, "{\"x\":1.0,\"o\":null,\"pts\":[{\"id\":9,\"x\":null,\"name\":null,\"k\":null}]}");
    double v;
    assert_int_equal(rl_msg_get_f64(d, p, sizeof p, "x", &v), RL_OK);
    assert_true(v == 1.0);
    assert_int_equal(rl_msg_get_f64(d, p, sizeof p, "pts[0].id", &v), RL_OK);
    assert_true(v == 9.0);
    assert_int_equal(rl_msg_get_f64(d, p, sizeof p, "o", &v), RL_ENOENT);
    rl_msgdef_free(d);
}

/* XCDR1 optional member of a final struct: a parameter header, length 0 when absent. */
static void test_idl_xcdr1_optional(void **state)
{
    (void)state;
    rl_msgdef *d = parse_ok("omgidl", "m::O", idl_text);
    const uint8_t present[] = {0x00, 0x01, 0x00, 0x00, 0, 0, 4, 0, 42, 0, 0, 0, 1, 0, 0, 0};
    json_is(d, present, sizeof present, "{\"a\":42,\"b\":1}");
    const uint8_t absent[] = {0x00, 0x01, 0x00, 0x00, 0, 0, 0, 0, 1, 0, 0, 0};
    json_is(d, absent, sizeof absent, "{\"a\":null,\"b\":1}");
    rl_msgdef_free(d);
}

/* The encoding table: the pairs it decodes, everything else refused with both names, and
 * rl_msgdef_parse going through it (ros2idl, which the parser cannot read, is refused). */
static void test_codec_table(void **state)
{
    (void)state;
    const rl_msg_codec *ros = rl_msg_codec_find("ros2msg", "cdr");
    const rl_msg_codec *idl = rl_msg_codec_find("omgidl", "cdr");
    assert_non_null(ros);
    assert_non_null(idl);
    assert_true(ros != idl);
    assert_string_equal(rl_msg_codec_schema_encoding(idl), "omgidl");
    assert_string_equal(rl_msg_codec_message_encoding(idl), "cdr");
    assert_true(rl_msg_codec_ros2_profile(ros));
    assert_false(rl_msg_codec_ros2_profile(idl));
    assert_false(rl_msg_codec_ros2_profile(NULL));
    assert_true(rl_msg_codec_find_bytes("omgidl!", 6, "cdrx", 3) == idl);
    const char *refused[][2] = {{"ros2idl", "cdr"}, {"ros2msg", "json"}, {"omgidl", ""},
                                {"", "cdr"}, {"ROS2MSG", "cdr"}, {"ros2msg", "cdr2"}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_null(rl_msg_codec_find(refused[i][0], refused[i][1]));
        assert_int_equal(rl_error_last_code(), RL_EUNSUPPORTED);
        char want[96];
        snprintf(want, sizeof want, "schema encoding '%s' with message encoding '%s' is not decoded",
                 refused[i][0], refused[i][1]);
        assert_non_null(strstr(rl_error_last(), want));
        assert_non_null(strstr(rl_error_last(), "(ros2msg/cdr, omgidl/cdr are)"));
    }
    assert_null(rl_msg_codec_find_bytes("ros\x01", 4, NULL, 0));
    assert_non_null(strstr(rl_error_last(), "'ros\\x01' with message encoding ''"));
    rl_msgdef *d = NULL;
    const char *ros2idl = "module pkg { module msg { struct T { long a; }; }; };";
    assert_int_equal(rl_msgdef_parse(&d, "ros2idl", "pkg/msg/T", ros2idl, strlen(ros2idl)),
                     RL_EUNSUPPORTED);
    assert_null(d);
    assert_non_null(strstr(rl_error_last(), "schema 'pkg/msg/T': schema encoding 'ros2idl'"));
    assert_int_equal(rl_msg_codec_parse(NULL, &d, "T", "", 0), RL_EINVAL);
    /* The same schema through the codec and through rl_msgdef_parse: the same types. */
    const char *wide = "struct T { wstring w; long a; };";
    assert_int_equal(rl_msg_codec_parse(idl, &d, "T", wide, strlen(wide)),
                     RL_OK);
    char *a = NULL, *b = NULL;
    assert_int_equal(rl_msgdef_format(d, &a), RL_OK);
    rl_msgdef_free(d);
    assert_int_equal(rl_msgdef_parse(&d, "omgidl", "T", wide, strlen(wide)),
                     RL_OK);
    assert_int_equal(rl_msgdef_format(d, &b), RL_OK);
    assert_string_equal(a, b);
    free(a);
    free(b);
    rl_msgdef_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ros2_constructs),
        cmocka_unit_test(test_ros2_errors),
        cmocka_unit_test(test_type_table),
        cmocka_unit_test(test_ros2_service_event),
        cmocka_unit_test(test_idl_constructs),
        cmocka_unit_test(test_idl_errors),
        cmocka_unit_test(test_idl_appendable_optional),
        cmocka_unit_test(test_idl_autoid_hash),
        cmocka_unit_test(test_idl_union_arrays),
        cmocka_unit_test(test_idl_mutable),
        cmocka_unit_test(test_idl_default_extensibility),
        cmocka_unit_test(test_idl_xcdr1_optional),
        cmocka_unit_test(test_codec_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
