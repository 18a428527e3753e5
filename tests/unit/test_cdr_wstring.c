/* wstring in CDR (src/formats/msg/cdr_wstring.c) against hand-made payloads with known bytes:
 * omgidl in the XTypes 1.3 layout (uint32 byte count, 2-byte UTF-16 code units, no NUL;
 * the bytes Cyclone DDS writes, the same under XCDR1 and XCDR2), ros2msg in the ROS 2 type
 * supports' layout (uint32 count of code units, 4 bytes each), both byte orders; a
 * surrogate pair; JSON as UTF-8; the encoder writing exactly those bytes; bad UTF-16 (lone
 * surrogates, odd lengths, units above 0xffff, bounds) failing with the field and offset. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/msgdef.h"

#include <stdlib.h>
#include <string.h>

static const char idl[] = "module w { struct W { wstring a; wstring<2> b; char tail; }; };";

static rl_msgdef *parse(const char *enc, const char *name, const char *text)
{
    rl_msgdef *d = NULL;
    if (rl_msgdef_parse(&d, enc, name, text, strlen(text)) != RL_OK)
        fail_msg("parse: %s", rl_error_last());
    return d;
}

/* Decodes to the expected JSON, and the encoder (same kind) writes the same bytes back
 * (up to the padding to a multiple of 4 it adds, counted in the options byte). */
static void both_ways(const rl_msgdef *d, const uint8_t *p, size_t n, const char *json)
{
    uint8_t *copy = malloc(n);
    assert_non_null(copy);
    memcpy(copy, p, n);
    char *buf = NULL;
    size_t cap = 0, len = 0;
    if (rl_msg_to_json(d, copy, n, &buf, &cap, &len) != RL_OK)
        fail_msg("decode: %s", rl_error_last());
    assert_string_equal(buf, json);
    uint8_t *enc = NULL;
    size_t elen = 0;
    if (rl_msg_encode_json_text(d, json, strlen(json), p[1], &enc, &elen) != RL_OK)
        fail_msg("encode: %s", rl_error_last());
    assert_true(elen >= n && elen - n < 4);
    assert_int_equal(enc[3] & 3, elen - n);
    assert_memory_equal(enc + 4, p + 4, n - 4);
    free(enc);
    free(buf);
    free(copy);
}

static void decode_fails(const rl_msgdef *d, const uint8_t *p, size_t n, const char *msg)
{
    char *buf = NULL;
    size_t cap = 0, len = 0;
    assert_int_equal(rl_msg_to_json(d, p, n, &buf, &cap, &len), RL_EPARSE);
    if (!strstr(rl_error_last(), msg))
        fail_msg("error: %s\nexpected: %s", rl_error_last(), msg);
    free(buf);
}

static void test_idl_layout(void **state)
{
    (void)state;
    rl_msgdef *d = parse("omgidl", "w::W", idl);
    /* a = "ab", b = U+1D11E (the surrogate pair d834 dd1e), tail = 'x' */
    const uint8_t xcdr1_le[] = {0x00, 0x01, 0, 0, 4, 0, 0, 0, 0x61, 0, 0x62, 0,
                                4, 0, 0, 0, 0x34, 0xd8, 0x1e, 0xdd, 0x78};
    const uint8_t xcdr2_le[] = {0x00, 0x07, 0, 0, 4, 0, 0, 0, 0x61, 0, 0x62, 0,
                                4, 0, 0, 0, 0x34, 0xd8, 0x1e, 0xdd, 0x78};
    const uint8_t xcdr2_be[] = {0x00, 0x06, 0, 0, 0, 0, 0, 4, 0, 0x61, 0, 0x62,
                                0, 0, 0, 4, 0xd8, 0x34, 0xdd, 0x1e, 0x78};
    const uint8_t xcdr1_be_empty[] = {0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x79};
    const char *json = "{\"a\":\"ab\",\"b\":\"\xf0\x9d\x84\x9e\",\"tail\":120}";
    both_ways(d, xcdr1_le, sizeof xcdr1_le, json);
    both_ways(d, xcdr2_le, sizeof xcdr2_le, json);
    both_ways(d, xcdr2_be, sizeof xcdr2_be, json);
    both_ways(d, xcdr1_be_empty, sizeof xcdr1_be_empty, "{\"a\":\"\",\"b\":\"\",\"tail\":121}");

    /* typed access: the raw code units, and UTF-8 through rl_msg_wstring_utf8 */
    rl_msg_path *path = NULL;
    assert_int_equal(rl_msg_path_compile(&path, d, "b"), RL_OK);
    rl_msg_value v;
    assert_int_equal(rl_msg_path_get(path, xcdr2_be, sizeof xcdr2_be, &v), RL_OK);
    assert_int_equal(v.kind, RL_MSG_WSTRING);
    assert_int_equal(v.v.s.len, 4);
    assert_int_equal(v.v.s.wunit, 2);
    assert_true(v.v.s.wbig_endian);
    char out[8];
    assert_int_equal(rl_msg_wstring_utf8(&v, out, sizeof out), 4);
    assert_string_equal(out, "\xf0\x9d\x84\x9e");
    assert_int_equal(rl_msg_wstring_utf8(&v, out, 4), 4); /* no room: nothing cut in half */
    assert_string_equal(out, "");
    assert_int_equal(rl_msg_wstring_utf8(&v, NULL, 0), 4);
    rl_msg_path_free(path);
    rl_msgdef_free(d);
}

static void test_ros2_layout(void **state)
{
    (void)state;
    rl_msgdef *d = parse("ros2msg", "t/msg/W", "wstring w\nuint8 t\nwstring<=1 s\n");
    /* w = "aé" as two 4-byte units, t = 7, s = "" */
    const uint8_t le[] = {0x00, 0x01, 0, 0, 2, 0, 0, 0, 0x61, 0, 0, 0, 0xe9, 0, 0, 0,
                          7, 0, 0, 0, 0, 0, 0, 0};
    const uint8_t be[] = {0x00, 0x00, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0x61, 0, 0, 0, 0xe9,
                          7, 0, 0, 0, 0, 0, 0, 0};
    both_ways(d, le, sizeof le, "{\"w\":\"a\xc3\xa9\",\"t\":7,\"s\":\"\"}");
    both_ways(d, be, sizeof be, "{\"w\":\"a\xc3\xa9\",\"t\":7,\"s\":\"\"}");
    /* a code unit above 0xffff */
    const uint8_t wide[] = {0x00, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 7, 0, 0, 0, 0, 0, 0, 0};
    decode_fails(d, wide, sizeof wide,
                 "field 'w': byte offset 8: wstring code unit 0x10000 is not a UTF-16 code unit");
    /* s over its bound of 1 */
    const uint8_t over[] = {0x00, 0x01, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0,
                            0x61, 0, 0, 0, 0x62, 0, 0, 0};
    decode_fails(d, over, sizeof over, "field 's': byte offset 12: wstring of 2 code units exceeds its bound 1");
    rl_msgdef_free(d);
}

static void test_bad_utf16(void **state)
{
    (void)state;
    rl_msgdef *d = parse("omgidl", "w::W", idl);
    const uint8_t lone_low[] = {0x00, 0x01, 0, 0, 4, 0, 0, 0, 0x61, 0, 0x1e, 0xdd,
                                0, 0, 0, 0, 0x78};
    decode_fails(d, lone_low, sizeof lone_low,
                 "field 'a': byte offset 10: wstring: low surrogate 0xdd1e without a high one");
    const uint8_t lone_high[] = {0x00, 0x01, 0, 0, 4, 0, 0, 0, 0x34, 0xd8, 0x61, 0,
                                 0, 0, 0, 0, 0x78};
    decode_fails(d, lone_high, sizeof lone_high,
                 "field 'a': byte offset 8: wstring: high surrogate 0xd834 not followed by a low one");
    const uint8_t high_at_end[] = {0x00, 0x01, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0x34, 0xd8, 0x78};
    decode_fails(d, high_at_end, sizeof high_at_end,
                 "field 'b': byte offset 12: wstring: high surrogate 0xd834 not followed by a low one");
    const uint8_t odd[] = {0x00, 0x01, 0, 0, 3, 0, 0, 0, 0x61, 0, 0x62, 0, 0x78};
    decode_fails(d, odd, sizeof odd, "field 'a': byte offset 4: wstring length 3 is odd");
    const uint8_t huge[] = {0x00, 0x01, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0x61, 0};
    decode_fails(d, huge, sizeof huge, "field 'a': byte offset 4: wstring of 2147483647 code units exceeds the 2 bytes left");
    const uint8_t bound[] = {0x00, 0x01, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0x61, 0, 0x62, 0, 0x63, 0, 0x78};
    decode_fails(d, bound, sizeof bound, "field 'b': byte offset 8: wstring of 3 code units exceeds its bound 2");
    /* every cut of a good payload fails cleanly */
    const uint8_t good[] = {0x00, 0x01, 0, 0, 4, 0, 0, 0, 0x61, 0, 0x62, 0,
                            4, 0, 0, 0, 0x34, 0xd8, 0x1e, 0xdd, 0x78};
    for (size_t cut = 0; cut < sizeof good; cut++) {
        uint8_t *p = malloc(cut ? cut : 1);
        assert_non_null(p);
        memcpy(p, good, cut);
        char *buf = NULL;
        size_t cap = 0, len = 0;
        assert_true(rl_msg_to_json(d, p, cut, &buf, &cap, &len) < 0);
        free(buf);
        free(p);
    }
    /* the encoder: over the bound (counted in code units: the pair is two) */
    uint8_t *enc = NULL;
    size_t n = 0;
    const char *over = "{\"a\":\"\",\"b\":\"x\xf0\x9d\x84\x9e\",\"tail\":1}";
    assert_int_equal(rl_msg_encode_json_text(d, over, strlen(over), RL_CDR_LE, &enc, &n), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "field 'b': wstring longer than its bound"));
    rl_msgdef_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idl_layout),
        cmocka_unit_test(test_ros2_layout),
        cmocka_unit_test(test_bad_utf16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
