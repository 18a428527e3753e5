/* Schemas that once made runlab work without bound (issue 29): arrays and sequences of
 * types that take no payload bytes are refused at parse time, naming the member and the
 * type; large enums and structs parse in time linear in their size; a schema's text and
 * a type's member count have limits with a clear error. Every test runs under an alarm,
 * so a hang is a failure, not a stuck run. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/msgdef.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Generous for a sanitizer build on a loaded machine; the quadratic parser took minutes. */
enum { TEST_SECONDS = 60 };

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: test_msgdef_limits: a test ran past its time limit\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

static int arm(void **state)
{
    (void)state;
    signal(SIGALRM, on_alarm);
    alarm(TEST_SECONDS);
    return 0;
}

static int disarm(void **state)
{
    (void)state;
    alarm(0);
    return 0;
}

static int parse_idl(const char *text, size_t len, rl_msgdef **d)
{
    *d = NULL;
    return rl_msgdef_parse(d, "omgidl", "T", text, len);
}

static void refused(const char *text, const char *msg)
{
    rl_msgdef *d;
    int rc = parse_idl(text, strlen(text), &d);
    if (rc == RL_OK || !strstr(rl_error_last(), msg))
        print_message("schema: %s\nrc %d, error: %s\nexpected: %s\n", text, rc, rl_error_last(), msg);
    assert_int_equal(rc, RL_EPARSE);
    assert_null(d);
    assert_non_null(strstr(rl_error_last(), msg));
}

static void accepted(const char *text)
{
    rl_msgdef *d;
    int rc = parse_idl(text, strlen(text), &d);
    if (rc != RL_OK)
        print_message("schema: %s\nerror: %s\n", text, rl_error_last());
    assert_int_equal(rc, RL_OK);
    rl_msgdef_free(d);
}

/* The finding: an array of a billion empty structs costs no payload bytes, so decoding
 * looped for hours. Refused at parse time, naming member, holder and element type. */
static void test_array_of_empty_structs_refused(void **state)
{
    (void)state;
    refused("struct E_ {}; struct T { long x; E_ pad[1000000][1000]; };",
            "schema 'T': member 'pad' of 'T': an array of 'E_', a type that takes no bytes in CDR");
    /* a sequence: 4 billion elements in a 4-byte count */
    refused("struct E_ {}; struct T { sequence<E_> s; };",
            "member 's' of 'T': a sequence of 'E_', a type that takes no bytes");
    /* a sequence of sequences of them */
    refused("struct E_ {}; struct T { long x; sequence<sequence<E_> > s; };",
            "member 's' of 'T': a sequence of 'E_'");
    /* a struct whose members take no bytes: nested, 50 k of 50 k is 2.5 billion values in
     * no bytes (what fuzz_msgdef's generated schemas found) */
    refused("struct E_ {}; struct W { E_ a; E_ b; }; struct T { long x; W w; };",
            "schema 'T': struct 'W': its members take no bytes in CDR");
    refused("struct E_ {}; @appendable struct W { E_ a; }; struct T { long x; W w; };",
            "struct 'W': its members take no bytes");
    /* through a typedef, appendable (no DHEADER in XCDR1), in a union case */
    refused("@appendable struct E_ {}; typedef E_ EA[2]; struct T { EA x; };",
            "member 'x' of 'T': an array of 'E_'");
    refused("struct E_ {}; union U switch (long) { case 1: E_ e[5]; }; struct T { U u; };",
            "member 'e' of 'U': an array of 'E_'");
}

/* What takes at least a byte stays accepted: an empty struct held once, a mutable empty
 * struct (DHEADER or sentinel), a struct of optional members (presence flag or header). */
static void test_types_that_take_bytes_accepted(void **state)
{
    (void)state;
    accepted("struct E_ {}; struct T { E_ e; long x; };");
    accepted("struct E_ {}; struct W { E_ a; E_ b; octet o; }; struct T { W w[4]; };");
    accepted("struct E_ {}; @mutable struct W { E_ a; E_ b; }; struct T { W w[4]; };");
    accepted("struct T {};"); /* the root may be empty: a payload is {} */
    accepted("@mutable struct E_ {}; struct T { E_ pad[3]; sequence<E_> s; };");
    accepted("struct O { @optional long a; }; struct T { O pad[3]; sequence<O> s; };");
    accepted("struct E_ {}; struct O { @optional E_ e; }; struct T { O pad[3]; };");
    accepted("struct E_ {}; union U switch (long) { case 1: E_ e; }; struct T { sequence<U> s; };");

    rl_msgdef *d;
    const char *text = "struct E_ {}; struct T { E_ e; long x; };";
    assert_int_equal(parse_idl(text, strlen(text), &d), RL_OK);
    uint8_t payload[] = {0x00, 0x01, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00}; /* CDR_LE, x = 7 */
    char *buf = NULL;
    size_t cap = 0, len = 0;
    assert_int_equal(rl_msg_to_json(d, payload, sizeof payload, &buf, &cap, &len), RL_OK);
    assert_string_equal(buf, "{\"e\":{},\"x\":7}");
    free(buf);
    rl_msgdef_free(d);
}

static char *enum_schema(size_t n, size_t *len)
{
    char *s = malloc(n * 16 + 64);
    assert_non_null(s);
    size_t k = (size_t)sprintf(s, "enum E {");
    for (size_t i = 0; i < n; i++)
        k += (size_t)sprintf(s + k, "%sE%zu", i ? "," : "", i);
    k += (size_t)sprintf(s + k, "}; struct T { E e; };");
    *len = k;
    return s;
}

static char *struct_schema(size_t n, size_t *len)
{
    char *s = malloc(n * 24 + 64);
    assert_non_null(s);
    size_t k = (size_t)sprintf(s, "struct T {");
    for (size_t i = 0; i < n; i++) /* every other member with an array type of its own */
        k += (size_t)(i % 2 ? sprintf(s + k, "long m%zu;", i) : sprintf(s + k, "long m%zu[%zu];", i, i + 1));
    k += (size_t)sprintf(s + k, "};");
    *len = k;
    return s;
}

/* 200 k enumerators and 400 k members took minutes to parse (names compared with every
 * earlier name); now well under a second in a Release build. Bounded by the alarm. */
static void test_large_schemas_parse_in_linear_time(void **state)
{
    (void)state;
    size_t len;
    char *text = enum_schema(200000, &len);
    rl_msgdef *d;
    assert_int_equal(parse_idl(text, len, &d), RL_OK);
    const rl_msg_type *e = rl_msgdef_type(d, rl_msgdef_type(d, rl_msgdef_root(d))->members[0].type);
    assert_int_equal(e->nmembers, 200000);
    assert_string_equal(e->members[199999].name, "E199999");
    rl_msgdef_free(d);
    free(text);

    text = struct_schema(400000, &len);
    assert_int_equal(parse_idl(text, len, &d), RL_OK);
    assert_int_equal(rl_msgdef_type(d, rl_msgdef_root(d))->nmembers, 400000);
    rl_msgdef_free(d);
    free(text);

    /* duplicates are still found, the last name against the first */
    text = enum_schema(1000, &len);
    memcpy(strstr(text, "}; struct") - 4, "E0,E", 4); /* ...,E999 -> ...,E0,E */
    text[len] = '\0';
    assert_int_not_equal(parse_idl(text, len, &d), RL_OK);
    assert_non_null(strstr(rl_error_last(), "declared twice"));
    free(text);
}

static void test_schema_size_limits(void **state)
{
    (void)state;
    /* text: 16 MiB is the most a schema may have */
    size_t big = (16u << 20) + 1;
    char *text = malloc(big);
    assert_non_null(text);
    memset(text, ' ', big);
    rl_msgdef *d;
    assert_int_equal(parse_idl(text, big, &d), RL_ERANGE);
    assert_non_null(strstr(rl_error_last(), "schema 'T': 16777217 bytes of text, more than the 16 MiB"));
    free(text);

    /* members: 1,048,576 per type */
    size_t len;
    text = malloc((1u << 20) * 14 + 64);
    assert_non_null(text);
    len = (size_t)sprintf(text, "struct T {");
    for (size_t i = 0; i <= (1u << 20); i++)
        len += (size_t)sprintf(text + len, "long m%zu;", i);
    len += (size_t)sprintf(text + len, "};");
    assert_true(len <= (16u << 20));
    assert_int_equal(parse_idl(text, len, &d), RL_ERANGE);
    assert_non_null(strstr(rl_error_last(), "type 'T' has 1048577 members, more than the 1048576"));
    free(text);
}

/* A schema of n structs, each holding the previous one by value or in a sequence. */
static char *chain_schema(size_t n, bool sequence, size_t *len)
{
    char *s = malloc(n * 48 + 64);
    assert_non_null(s);
    size_t k = (size_t)sprintf(s, "struct S0 { long x; };");
    for (size_t i = 1; i < n; i++)
        k += (size_t)sprintf(s + k, sequence ? "struct S%zu { sequence<S%zu> a; };" : "struct S%zu { S%zu a; };",
                             i, i - 1);
    k += (size_t)sprintf(s + k, "struct T { S%zu a; };", n - 1);
    *len = k;
    return s;
}

/* Nesting is bounded (256 levels; the decoder stops payloads at 100), so no walk of the
 * type tree recurses with the schema's size; a chain through sequences (each type on its
 * own not deep) formats with an explicit stack: 100 k levels overflowed the stack of
 * `runlab mcap schema` (rl_msgdef_format) before. */
static void test_deep_nesting(void **state)
{
    (void)state;
    size_t len;
    rl_msgdef *d;
    char *text = chain_schema(300, false, &len);
    assert_int_equal(parse_idl(text, len, &d), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "schema 'T': types nested more than 256 deep"));
    free(text);
    text = chain_schema(255, false, &len); /* T and 255 structs: 256 levels */
    assert_int_equal(parse_idl(text, len, &d), RL_OK);
    rl_msgdef_free(d);
    free(text);
    /* typedefs of sequences of sequences, 300 deep */
    text = malloc(300 * 64 + 64);
    assert_non_null(text);
    len = (size_t)sprintf(text, "typedef sequence<long> Q0;");
    for (int i = 1; i < 300; i++)
        len += (size_t)sprintf(text + len, "typedef sequence<Q%d> Q%d;", i - 1, i);
    len += (size_t)sprintf(text + len, "struct T { Q299 q; };");
    assert_int_equal(parse_idl(text, len, &d), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "types nested more than 256 deep"));
    free(text);

    text = chain_schema(100000, true, &len);
    assert_int_equal(parse_idl(text, len, &d), RL_OK);
    char *formatted = NULL;
    assert_int_equal(rl_msgdef_format(d, &formatted), RL_OK);
    assert_non_null(strstr(formatted, "struct S0\n  int32 x\n"));
    assert_non_null(strstr(formatted, "struct T\n  S99999 a\n"));
    assert_true(strstr(formatted, "struct S0\n") < strstr(formatted, "struct S1\n")); /* dependencies first */
    free(formatted);
    rl_msgdef_free(d);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_array_of_empty_structs_refused, arm, disarm),
        cmocka_unit_test_setup_teardown(test_types_that_take_bytes_accepted, arm, disarm),
        cmocka_unit_test_setup_teardown(test_large_schemas_parse_in_linear_time, arm, disarm),
        cmocka_unit_test_setup_teardown(test_schema_size_limits, arm, disarm),
        cmocka_unit_test_setup_teardown(test_deep_nesting, arm, disarm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
