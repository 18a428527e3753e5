/* Bounds of a message definition checked by the CDR decoder at, just below and just above
 * their value: a bounded string (string<=N) and a bounded sequence (T[<=N]) of exactly N
 * decode, N + 1 is refused with a message naming the field. Payloads are built by hand
 * here (XCDR1 little-endian), not by runlab's encoder. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/msgdef.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rl_msgdef *parse(const char *text)
{
    rl_msgdef *d = NULL;
    assert_int_equal(rl_msgdef_parse(&d, "ros2msg", "t/msg/B", text, strlen(text)), RL_OK);
    return d;
}

/* Decodes a hand-made payload from an exactly sized heap copy; returns the status and the
 * JSON (or "" on failure) in `json`. */
static int decode(const rl_msgdef *d, const uint8_t *p, size_t n, char *json, size_t cap)
{
    uint8_t *copy = malloc(n);
    assert_non_null(copy);
    memcpy(copy, p, n);
    char *buf = NULL;
    size_t bcap = 0, len = 0;
    int rc = rl_msg_to_json(d, copy, n, &buf, &bcap, &len);
    snprintf(json, cap, "%s", rc == RL_OK ? buf : "");
    free(buf);
    free(copy);
    return rc;
}

static size_t put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
    return 4;
}

/* string<=3 s: lengths 2, 3 and 4 characters (CDR length counts the NUL). */
static void test_string_bound(void **state)
{
    (void)state;
    rl_msgdef *d = parse("string<=3 s\n");
    for (uint32_t chars = 2; chars <= 4; chars++) {
        uint8_t p[32] = {0x00, 0x01, 0x00, 0x00};
        size_t n = 4;
        n += put_u32(p + n, chars + 1);
        memcpy(p + n, "abcd", chars);
        n += chars;
        p[n++] = '\0';
        char json[128];
        int rc = decode(d, p, n, json, sizeof json);
        if (chars <= 3) {
            assert_int_equal(rc, RL_OK);
            char want[64];
            snprintf(want, sizeof want, "{\"s\":\"%.*s\"}", (int)chars, "abcd");
            assert_string_equal(json, want);
        } else {
            assert_true(rc < 0);
            print_message("refused: %s\n", rl_error_last());
            assert_non_null(strstr(rl_error_last(), "bound"));
        }
    }
    rl_msgdef_free(d);
}

/* int16[<=3] a: 2, 3 and 4 elements. */
static void test_sequence_bound(void **state)
{
    (void)state;
    rl_msgdef *d = parse("int16[<=3] a\n");
    for (uint32_t count = 2; count <= 4; count++) {
        uint8_t p[32] = {0x00, 0x01, 0x00, 0x00};
        size_t n = 4;
        n += put_u32(p + n, count);
        for (uint32_t i = 0; i < count; i++)
            p[n++] = (uint8_t)(i + 1), p[n++] = 0;
        char json[128];
        int rc = decode(d, p, n, json, sizeof json);
        if (count <= 3) {
            assert_int_equal(rc, RL_OK);
            assert_string_equal(json, count == 2 ? "{\"a\":[1,2]}" : "{\"a\":[1,2,3]}");
        } else {
            assert_true(rc < 0);
            print_message("refused: %s\n", rl_error_last());
        }
    }
    rl_msgdef_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_bound),
        cmocka_unit_test(test_sequence_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
