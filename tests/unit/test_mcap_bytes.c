/* Tests of the rl_mcap_bytes helpers: comparison of two byte ranges (NULs inside, empty
 * ones with or without a pointer, a prefix is not equal), a C string seen as bytes, and
 * the NUL-terminated copy. */
#include "rl_test.h"

#include "runlab/mcap.h"

#include <stdlib.h>
#include <string.h>

static void test_eq(void **state)
{
    (void)state;
    rl_mcap_bytes cdr = rl_mcap_bytes_of("cdr");
    assert_int_equal(cdr.len, 3);
    assert_true(rl_mcap_bytes_eq(cdr, rl_mcap_bytes_of("cdr")));
    assert_false(rl_mcap_bytes_eq(cdr, rl_mcap_bytes_of("cd")));  /* a prefix */
    assert_false(rl_mcap_bytes_eq(cdr, rl_mcap_bytes_of("cdrx")));
    assert_false(rl_mcap_bytes_eq(cdr, rl_mcap_bytes_of("cdR")));
    rl_mcap_bytes none = {NULL, 0};
    assert_true(rl_mcap_bytes_eq(none, rl_mcap_bytes_of("")));
    assert_true(rl_mcap_bytes_eq(rl_mcap_bytes_of(NULL), none));
    assert_false(rl_mcap_bytes_eq(none, cdr));
    static const uint8_t a[] = {'a', 0, 'b'}, b[] = {'a', 0, 'c'};
    rl_mcap_bytes ra = {a, 3}, rb = {b, 3};
    assert_true(rl_mcap_bytes_eq(ra, ra));
    assert_false(rl_mcap_bytes_eq(ra, rb)); /* differs after the NUL */
    assert_false(rl_mcap_bytes_eq(ra, rl_mcap_bytes_of("a")));
}

static void test_dup(void **state)
{
    (void)state;
    static const uint8_t text[] = {'z', 's', 't', 'd', '!'};
    rl_mcap_bytes b = {text, 4};
    char *s = rl_mcap_bytes_dup(b);
    assert_string_equal(s, "zstd");
    free(s);
    rl_mcap_bytes none = {NULL, 0};
    s = rl_mcap_bytes_dup(none);
    assert_string_equal(s, "");
    free(s);
    static const uint8_t nul[] = {'a', 0, 'b'};
    rl_mcap_bytes withnul = {nul, 3};
    s = rl_mcap_bytes_dup(withnul);
    assert_int_equal(memcmp(s, "a\0b", 4), 0); /* all three bytes, then the NUL */
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eq),
        cmocka_unit_test(test_dup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
