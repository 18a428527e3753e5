/* Tests of runlab/json.h: parse errors with exact positions, strictness beyond json-c,
 * typed getters and their messages, the streaming writer's escaping of hostile byte
 * strings, nesting checks, number formatting, and whole-document round trips. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_object *parse_ok(const char *text)
{
    json_object *o = NULL;
    int rc = rl_json_parse(text, strlen(text), "t.json", &o);
    if (rc != RL_OK)
        fail_msg("parse of '%s' failed: %s", text, rl_error_last());
    return o;
}

static void expect_parse_error(const char *text, size_t len, const char *msg)
{
    json_object *o = (json_object *)1;
    int rc = rl_json_parse(text, len, "t.json", &o);
    assert_int_equal(rc, RL_EPARSE);
    assert_null(o);
    assert_string_equal(rl_error_last(), msg);
}
#define PARSE_ERR(lit, msg) expect_parse_error(lit, sizeof(lit) - 1, msg)

static void test_parse_values(void **state)
{
    (void)state;
    json_object *o = parse_ok(" {\"a\": [1, -2.5e3, true, null, \"x\\u00e9\"], \"b\": {}}\n");
    assert_true(json_object_is_type(o, json_type_object));
    json_object *a = NULL;
    assert_int_equal(rl_json_get_array(o, "a", &a), RL_OK);
    assert_int_equal(json_object_array_length(a), 5);
    assert_int_equal(json_object_get_int64(json_object_array_get_idx(a, 0)), 1);
    assert_true(json_object_get_double(json_object_array_get_idx(a, 1)) == -2500.0);
    assert_null(json_object_array_get_idx(a, 3));
    assert_string_equal(json_object_get_string(json_object_array_get_idx(a, 4)), "x\xc3\xa9");
    json_object_put(o);

    /* Top-level scalars, including ones that end only at the end of input. */
    o = parse_ok("42");
    assert_int_equal(json_object_get_int64(o), 42);
    json_object_put(o);
    o = parse_ok("18446744073709551615");
    assert_int_equal(json_object_get_uint64(o), UINT64_MAX);
    json_object_put(o);
    o = parse_ok("-9223372036854775808");
    assert_true(json_object_get_int64(o) == INT64_MIN);
    json_object_put(o);
    o = NULL;
    assert_int_equal(rl_json_parse("null", 4, "t", &o), RL_OK);
    assert_null(o);

    /* Embedded NUL via escape keeps its length. */
    o = parse_ok("\"a\\u0000b\"");
    assert_int_equal(json_object_get_string_len(o), 3);
    assert_memory_equal(json_object_get_string(o), "a\0b", 3);
    json_object_put(o);
}

static void test_parse_errors_positions(void **state)
{
    (void)state;
    PARSE_ERR("", "t.json:1:1: byte 0: empty input (no JSON value)");
    PARSE_ERR(" \n\t", "t.json:2:2: byte 3: empty input (no JSON value)");
    PARSE_ERR("{\n  \"a\": tru\n}", "t.json:2:11: byte 12: boolean expected");
    PARSE_ERR("[1,]", "t.json:1:4: byte 3: unexpected character");
    PARSE_ERR("[1, 2", "t.json:1:6: byte 5: unexpected end of data");
    PARSE_ERR("{\"a\":1}\n x", "t.json:2:2: byte 9: unexpected character");
    PARSE_ERR("1 2", "t.json:1:3: byte 2: unexpected character");
    PARSE_ERR("1\0", "t.json:1:2: byte 1: unexpected data after the JSON value");
    PARSE_ERR("\"\xff\"", "t.json:1:2: byte 1: invalid utf-8 string");
    /* What json-c tolerates even in strict mode. */
    PARSE_ERR("[NaN]", "t.json:1:2: byte 1: invalid literal (JSON has only true, false and null)");
    PARSE_ERR("-Infinity", "t.json:1:1: byte 0: invalid number");
    PARSE_ERR("{'a': 1}", "t.json:1:2: byte 1: single-quoted string (JSON needs '\"')");
    PARSE_ERR("[1.]", "t.json:1:2: byte 1: invalid number (digits must follow '.')");
    PARSE_ERR("[18446744073709551616]",
              "t.json:1:2: byte 1: integer out of range (-2^63 .. 2^64-1)");
    PARSE_ERR("\n-9223372036854775809",
              "t.json:2:1: byte 1: integer out of range (-2^63 .. 2^64-1)");
    PARSE_ERR("[1.5e400]", "t.json:1:2: byte 1: number out of range for a double");
    /* Raw control characters inside a string (U+0000 .. U+001F must be escaped): the
     * second and the last of them. */
    PARSE_ERR("[\"a\x01\"]", "t.json:1:4: byte 3: control character in string");
    PARSE_ERR("[\"a\x1f\"]", "t.json:1:4: byte 3: control character in string");

    /* Nesting is bounded rather than exhausting the stack. */
    char deep[600];
    memset(deep, '[', sizeof deep);
    json_object *o = NULL;
    assert_int_equal(rl_json_parse(deep, sizeof deep, "d", &o), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "nesting too deep"));

    assert_int_equal(rl_json_parse(NULL, 0, "t", NULL), RL_EINVAL);
}

static void test_getters(void **state)
{
    (void)state;
    json_object *o = parse_ok("{\"cpu_cores\": \"8\", \"n\": 3, \"f\": 2.0, \"g\": 2.5,"
                              " \"big\": 18446744073709551615, \"e\": 1e19, \"b\": true,"
                              " \"s\": \"x\", \"nul\": null, \"o\": {}, \"a\": []}");
    int64_t i = 0;
    double d = 0;
    bool b = false;
    const char *s = NULL;
    json_object *v = NULL;

    assert_int_equal(rl_json_get_int64(o, "cpu_cores", &i), RL_EPARSE);
    assert_string_equal(rl_error_last(), "key 'cpu_cores': expected integer, found string");
    assert_int_equal(rl_json_get_int64(o, "missing", &i), RL_ENOENT);
    assert_string_equal(rl_error_last(), "key 'missing': missing");
    assert_int_equal(rl_json_get_int64(o, "n", &i), RL_OK);
    assert_int_equal(i, 3);
    assert_int_equal(rl_json_get_int64(o, "f", &i), RL_OK);
    assert_int_equal(i, 2);
    assert_int_equal(rl_json_get_int64(o, "g", &i), RL_EPARSE);
    assert_string_equal(rl_error_last(), "key 'g': expected integer, found number 2.5");
    assert_int_equal(rl_json_get_int64(o, "big", &i), RL_ERANGE);
    assert_string_equal(rl_error_last(),
                        "key 'big': 18446744073709551615 is out of the int64 range");
    assert_int_equal(rl_json_get_int64(o, "e", &i), RL_ERANGE);
    assert_int_equal(rl_json_get_int64(o, "nul", &i), RL_EPARSE);
    assert_string_equal(rl_error_last(), "key 'nul': expected integer, found null");

    assert_int_equal(rl_json_get_double(o, "n", &d), RL_OK);
    assert_true(d == 3.0);
    assert_int_equal(rl_json_get_double(o, "big", &d), RL_OK);
    assert_true(d == 18446744073709551615.0);
    assert_int_equal(rl_json_get_double(o, "s", &d), RL_EPARSE);
    assert_string_equal(rl_error_last(), "key 's': expected number, found string");

    assert_int_equal(rl_json_get_bool(o, "b", &b), RL_OK);
    assert_true(b);
    assert_int_equal(rl_json_get_bool(o, "n", &b), RL_EPARSE);
    assert_string_equal(rl_error_last(), "key 'n': expected boolean, found integer");
    assert_int_equal(rl_json_get_string(o, "s", &s), RL_OK);
    assert_string_equal(s, "x");
    assert_int_equal(rl_json_get_string(o, "o", &s), RL_EPARSE);
    assert_string_equal(rl_error_last(), "key 'o': expected string, found object");
    assert_int_equal(rl_json_get_object(o, "o", &v), RL_OK);
    assert_true(json_object_is_type(v, json_type_object));
    assert_int_equal(rl_json_get_object(o, "a", &v), RL_EPARSE);
    assert_string_equal(rl_error_last(), "key 'a': expected object, found array");
    assert_int_equal(rl_json_get_array(o, "a", &v), RL_OK);
    assert_int_equal(rl_json_get_array(o, "g", &v), RL_EPARSE);
    assert_string_equal(rl_error_last(), "key 'g': expected array, found number");

    json_object *arr = NULL;
    rl_json_get_array(o, "a", &arr);
    assert_int_equal(rl_json_get_int64(arr, "x", &i), RL_EINVAL);
    assert_string_equal(rl_error_last(), "key 'x': looked up in a array, not an object");
    json_object_put(o);
}

/* Writes one string with a compact buffer writer and returns a copy of the output. */
static char *escaped(const char *bytes, size_t len)
{
    rl_json_writer *w = NULL;
    assert_int_equal(rl_json_writer_new_buffer(&w, RL_JSON_COMPACT), RL_OK);
    assert_int_equal(rl_json_string_n(w, bytes, len), RL_OK);
    assert_int_equal(rl_json_writer_finish(w), RL_OK);
    char *s = strdup(rl_json_writer_buffer(w, NULL));
    rl_json_writer_free(w);
    return s;
}
#define ESC(lit, want)                                                                   \
    do {                                                                                 \
        char *got_ = escaped(lit, sizeof(lit) - 1);                                      \
        assert_string_equal(got_, want);                                                 \
        free(got_);                                                                      \
    } while (0)

static void test_writer_escaping(void **state)
{
    (void)state;
    ESC("plain", "\"plain\"");
    ESC("q\"b\\s/", "\"q\\\"b\\\\s/\"");
    ESC("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
    ESC("\x01", "\"\\u0001\"");
    ESC("\x1f", "\"\\u001f\"");
    ESC("a\0b", "\"a\\u0000b\"");
    ESC("\x7f", "\"\x7f\"");                              /* DEL passes */
    ESC("\xc3\xa9", "\"\xc3\xa9\"");                      /* é */
    ESC("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");      /* U+1F600 */
    ESC("\xef\xbf\xbf", "\"\xef\xbf\xbf\"");              /* U+FFFF is valid UTF-8 */
    ESC("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");      /* U+10FFFF */
    ESC("\xff", "\"\xef\xbf\xbd\"");
    ESC("\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"");      /* overlong '/' */
    ESC("\xe0\x80\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* overlong, 3 bytes */
    ESC("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* U+D800 */
    ESC("\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* >10FFFF */
    ESC("a\xe2\x82", "\"a\xef\xbf\xbd\xef\xbf\xbd\"");    /* truncated at the end */
    ESC("\xe2\x82z", "\"\xef\xbf\xbd\xef\xbf\xbdz\"");    /* truncated before ASCII */
    ESC("\x80x", "\"\xef\xbf\xbdx\"");                    /* lone continuation byte */

    /* Every single byte value produces output that json-c reads back. */
    for (int c = 0; c < 256; c++) {
        char in = (char)c;
        char *s = escaped(&in, 1);
        json_object *o = NULL;
        assert_int_equal(rl_json_parse(s, strlen(s), "esc", &o), RL_OK);
        assert_true(json_object_is_type(o, json_type_string));
        if (c < 0x80)
            assert_true(json_object_get_string_len(o) == 1 && json_object_get_string(o)[0] == in);
        else
            assert_string_equal(json_object_get_string(o), "\xef\xbf\xbd");
        json_object_put(o);
        free(s);
    }
}

static char *fmt_double(double v)
{
    rl_json_writer *w = NULL;
    assert_int_equal(rl_json_writer_new_buffer(&w, RL_JSON_COMPACT), RL_OK);
    assert_int_equal(rl_json_double(w, v), RL_OK);
    char *s = strdup(rl_json_writer_buffer(w, NULL));
    rl_json_writer_free(w);
    return s;
}
#define DBL(v, want)                                                                     \
    do {                                                                                 \
        char *got_ = fmt_double(v);                                                      \
        assert_string_equal(got_, want);                                                 \
        free(got_);                                                                      \
    } while (0)

static void test_writer_doubles(void **state)
{
    (void)state;
    DBL(0.1, "0.1");
    DBL(1.0, "1.0");
    DBL(-0.0, "-0.0");
    DBL(1.0 / 3.0, "0.3333333333333333");
    DBL(0.1 + 0.2, "0.30000000000000004");
    DBL(1e300, "1e+300");
    DBL(5e-324, "5e-324");
    DBL(2.2250738585072014e-308, "2.2250738585072014e-308");
    DBL(9007199254740993.0, "9007199254740992.0");
    DBL(123456789.125, "123456789.125");
    DBL(NAN, "null");
    DBL(INFINITY, "null");
    DBL(-INFINITY, "null");

    /* Random bit patterns read back exactly. */
    srand(7);
    for (int k = 0; k < 20000; k++) {
        uint64_t bits = 0;
        for (int j = 0; j < 4; j++)
            bits = (bits << 16) ^ (uint64_t)(rand() & 0xffff);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            continue;
        char *s = fmt_double(v);
        json_object *o = NULL;
        assert_int_equal(rl_json_parse(s, strlen(s), "dbl", &o), RL_OK);
        assert_true(json_object_is_type(o, json_type_double));
        assert_true(json_object_get_double(o) == v);
        assert_true(strlen(s) <= 24);
        json_object_put(o);
        free(s);
    }
}

static void test_writer_pretty_and_compact(void **state)
{
    (void)state;
    for (int style = 0; style < 2; style++) {
        rl_json_writer *w = NULL;
        assert_int_equal(rl_json_writer_new_buffer(&w, style), RL_OK);
        assert_int_equal(rl_json_begin_object(w), RL_OK);
        assert_int_equal(rl_json_key(w, "a"), RL_OK);
        assert_int_equal(rl_json_int64(w, -5), RL_OK);
        assert_int_equal(rl_json_key(w, "b"), RL_OK);
        assert_int_equal(rl_json_begin_array(w), RL_OK);
        assert_int_equal(rl_json_uint64(w, UINT64_MAX), RL_OK);
        assert_int_equal(rl_json_bool(w, false), RL_OK);
        assert_int_equal(rl_json_begin_object(w), RL_OK);
        assert_int_equal(rl_json_end_object(w), RL_OK);
        assert_int_equal(rl_json_begin_array(w), RL_OK);
        assert_int_equal(rl_json_end_array(w), RL_OK);
        assert_int_equal(rl_json_end_array(w), RL_OK);
        assert_int_equal(rl_json_key(w, "k\"\n"), RL_OK);
        assert_int_equal(rl_json_null(w), RL_OK);
        assert_int_equal(rl_json_end_object(w), RL_OK);
        assert_int_equal(rl_json_writer_finish(w), RL_OK);
        size_t len = 0;
        const char *out = rl_json_writer_buffer(w, &len);
        if (style == RL_JSON_COMPACT)
            assert_string_equal(out, "{\"a\":-5,\"b\":[18446744073709551615,false,{},[]],"
                                     "\"k\\\"\\n\":null}");
        else
            assert_string_equal(out, "{\n  \"a\": -5,\n  \"b\": [\n    18446744073709551615,\n"
                                     "    false,\n    {},\n    []\n  ],\n  \"k\\\"\\n\": null\n}");
        assert_int_equal(len, strlen(out));
        rl_json_writer_free(w);
    }
}

static void test_writer_state_errors(void **state)
{
    (void)state;
    rl_json_writer *w = NULL;
    assert_int_equal(rl_json_writer_new_buffer(&w, RL_JSON_PRETTY), RL_OK);
    assert_int_equal(rl_json_writer_finish(w), RL_ESTATE);
    assert_string_equal(rl_error_last(), "json writer: finish before any value was written");
    assert_int_equal(rl_json_key(w, "k"), RL_ESTATE);
    assert_string_equal(rl_error_last(), "json writer: key 'k' outside an object");
    assert_int_equal(rl_json_end_array(w), RL_ESTATE);
    assert_string_equal(rl_error_last(), "json writer: end_array with nothing open");
    assert_int_equal(rl_json_begin_object(w), RL_OK);
    assert_int_equal(rl_json_int64(w, 1), RL_ESTATE);
    assert_string_equal(rl_error_last(),
                        "json writer: integer inside an object where a key is due");
    assert_int_equal(rl_json_key(w, "a"), RL_OK);
    assert_int_equal(rl_json_key(w, "b"), RL_ESTATE);
    assert_string_equal(rl_error_last(), "json writer: key 'b' where a value is due");
    assert_int_equal(rl_json_end_object(w), RL_ESTATE);
    assert_string_equal(rl_error_last(), "json writer: end_object after a key without a value");
    assert_int_equal(rl_json_begin_array(w), RL_OK);
    assert_int_equal(rl_json_end_object(w), RL_ESTATE);
    assert_string_equal(rl_error_last(), "json writer: end_object inside an array");
    assert_int_equal(rl_json_writer_finish(w), RL_ESTATE);
    assert_string_equal(rl_error_last(), "json writer: finish with 2 unclosed containers");
    assert_int_equal(rl_json_end_array(w), RL_OK);
    assert_int_equal(rl_json_end_object(w), RL_OK);
    assert_int_equal(rl_json_string(w, "again"), RL_ESTATE);
    assert_string_equal(rl_error_last(),
                        "json writer: string after the complete top-level value");
    assert_int_equal(rl_json_writer_finish(w), RL_OK);
    assert_string_equal(rl_json_writer_buffer(w, NULL), "{\n  \"a\": []\n}");
    rl_json_writer_free(w);

    assert_int_equal(rl_json_writer_new_buffer(&w, 7), RL_EINVAL);
    assert_null(w);
}

static void test_writer_file(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/out.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    rl_json_writer *w = NULL;
    assert_int_equal(rl_json_writer_new_file(&w, f, RL_JSON_COMPACT), RL_OK);
    assert_int_equal(rl_json_begin_array(w), RL_OK);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(rl_json_int64(w, i), RL_OK);
    assert_int_equal(rl_json_end_array(w), RL_OK);
    assert_int_equal(rl_json_writer_finish(w), RL_OK);
    size_t blen = 1;
    assert_string_equal(rl_json_writer_buffer(w, &blen), "");
    assert_int_equal(blen, 0);
    rl_json_writer_free(w);
    fclose(f);
    size_t len = 0;
    char *text = rl_test_read_file(path, &len);
    assert_int_equal(text[len - 1], '\n');
    json_object *o = NULL;
    assert_int_equal(rl_json_read_file(path, 1 << 20, &o), RL_OK);
    assert_int_equal(json_object_array_length(o), 10000);
    assert_int_equal(json_object_get_int64(json_object_array_get_idx(o, 9999)), 9999);
    json_object_put(o);
    free(text);

    assert_int_equal(rl_json_read_file(path, 100, &o), RL_ERANGE);
    rl_test_write_file(path, "{\n\"a\": }", 8);
    assert_int_equal(rl_json_read_file(path, 1 << 20, &o), RL_EPARSE);
    char want[4200];
    snprintf(want, sizeof want, "%s:2:6: byte 7: unexpected character", path);
    assert_string_equal(rl_error_last(), want);
    rl_test_tmpdir_free(dir);
}

static void test_to_string_and_file(void **state)
{
    (void)state;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "z", json_object_new_double(0.1));
    json_object_object_add(o, "a", json_object_new_double(1.0));
    json_object_object_add(o, "m", json_object_new_string_len("x\0\xff", 3));
    json_object_object_add(o, "u", json_object_new_uint64(UINT64_MAX));
    json_object_object_add(o, "n", NULL);
    char *s = NULL;
    size_t n = 0;
    assert_int_equal(rl_json_to_string(o, &s, &n), RL_OK);
    assert_string_equal(s, "{\n  \"z\": 0.1,\n  \"a\": 1.0,\n  \"m\": \"x\\u0000\xef\xbf\xbd\",\n"
                           "  \"u\": 18446744073709551615,\n  \"n\": null\n}\n");
    assert_int_equal(n, strlen(s));
    free(s);

    char *dir = rl_test_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/doc.json", dir);
    assert_int_equal(rl_json_write_file(path, o), RL_OK);
    json_object *back = NULL;
    assert_int_equal(rl_json_read_file(path, 1 << 20, &back), RL_OK);
    double d = 0;
    assert_int_equal(rl_json_get_double(back, "z", &d), RL_OK);
    assert_true(d == 0.1);
    assert_true(json_object_is_type(json_object_object_get(back, "a"), json_type_double));
    json_object_put(back);
    snprintf(path, sizeof path, "%s/missing/doc.json", dir);
    assert_true(rl_json_write_file(path, o) < 0);
    rl_test_tmpdir_free(dir);
    json_object_put(o);

    /* Scalars and null at the top level. */
    assert_int_equal(rl_json_to_string(NULL, &s, &n), RL_OK);
    assert_string_equal(s, "null\n");
    free(s);

    /* A value containing itself is refused, not followed forever. */
    json_object *a = json_object_new_array();
    json_object_array_add(a, json_object_get(a));
    assert_int_equal(rl_json_to_string(a, &s, &n), RL_ERANGE);
    assert_null(s);
    /* Break the cycle so the reference counts can reach zero. */
    json_object_array_del_idx(a, 0, 1);
    json_object_put(a);
}

/* Random documents: serialise, parse, compare. */
static json_object *random_value(unsigned *seed, int depth)
{
    static const char *const pieces[] = {"a", "\"", "\\", "\n", "\x01", "\x7f", "\xc3\xa9",
                                         "\xf0\x9f\x98\x80", "/", " ", "\t", "\0", "{", "u"};
    int kind = rand_r(seed) % (depth > 3 ? 5 : 7);
    switch (kind) {
    case 0: return NULL;
    case 1: return json_object_new_boolean(rand_r(seed) & 1);
    case 2: {
        uint64_t u = ((uint64_t)rand_r(seed) << 33) ^ ((uint64_t)rand_r(seed) << 2) ^
                     (uint64_t)rand_r(seed);
        if (rand_r(seed) % 4 == 0)
            return json_object_new_uint64(u | (1ULL << 63));
        return json_object_new_int64((int64_t)(u >> 1) * (rand_r(seed) & 1 ? -1 : 1));
    }
    case 3: {
        uint64_t bits = 0;
        for (int j = 0; j < 4; j++)
            bits = (bits << 16) ^ (uint64_t)(rand_r(seed) & 0xffff);
        double v;
        memcpy(&v, &bits, sizeof v);
        return json_object_new_double(isfinite(v) ? v : 0.5);
    }
    case 4: {
        char buf[128];
        size_t n = 0;
        int parts = rand_r(seed) % 8;
        for (int i = 0; i < parts; i++) {
            const char *p = pieces[rand_r(seed) % (sizeof pieces / sizeof *pieces)];
            size_t pl = p[0] ? strlen(p) : 1;
            memcpy(buf + n, p, pl);
            n += pl;
        }
        return json_object_new_string_len(buf, (int)n);
    }
    case 5: {
        json_object *a = json_object_new_array();
        int n = rand_r(seed) % 5;
        for (int i = 0; i < n; i++)
            json_object_array_add(a, random_value(seed, depth + 1));
        return a;
    }
    default: {
        json_object *o = json_object_new_object();
        int n = rand_r(seed) % 5;
        for (int i = 0; i < n; i++) {
            char key[48];
            snprintf(key, sizeof key, "k%d\"\n%d", i, rand_r(seed) % 10);
            json_object_object_add(o, key, random_value(seed, depth + 1));
        }
        return o;
    }
    }
}

static void test_random_round_trip(void **state)
{
    (void)state;
    unsigned seed = 12345;
    for (int k = 0; k < 500; k++) {
        json_object *o = random_value(&seed, 0);
        char *s = NULL;
        size_t n = 0;
        assert_int_equal(rl_json_to_string(o, &s, &n), RL_OK);
        json_object *back = (json_object *)1;
        if (rl_json_parse(s, n, "rt", &back) != RL_OK)
            fail_msg("%s\n%s", rl_error_last(), s);
        if (!json_object_equal(o, back))
            fail_msg("round trip differs:\n%s", s);
        json_object_put(back);
        json_object_put(o);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_values),
        cmocka_unit_test(test_parse_errors_positions),
        cmocka_unit_test(test_getters),
        cmocka_unit_test(test_writer_escaping),
        cmocka_unit_test(test_writer_doubles),
        cmocka_unit_test(test_writer_pretty_and_compact),
        cmocka_unit_test(test_writer_state_errors),
        cmocka_unit_test(test_writer_file),
        cmocka_unit_test(test_to_string_and_file),
        cmocka_unit_test(test_random_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
