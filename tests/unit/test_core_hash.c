/* Tests of runlab/hash.h against published test vectors (FIPS 180-2 SHA-256, the CRC-32
 * check value) and of file hashing against the buffer result. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/hash.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex_of(const void *data, size_t len, char hex[RL_SHA256_HEX_LEN + 1])
{
    uint8_t d[RL_SHA256_LEN];
    assert_int_equal(rl_sha256(data, len, d), RL_OK);
    rl_sha256_hex(d, hex);
}

static void test_sha256_vectors(void **state)
{
    (void)state;
    char hex[RL_SHA256_HEX_LEN + 1];
    hex_of("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    hex_of(two, strlen(two), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_sha256_incremental_and_file(void **state)
{
    (void)state;
    /* One million 'a' (FIPS 180-2 vector), hashed in odd-sized pieces and from a file. */
    size_t n = 1000000;
    char *buf = malloc(n);
    memset(buf, 'a', n);
    rl_sha256_ctx *ctx;
    assert_int_equal(rl_sha256_begin(&ctx), RL_OK);
    for (size_t off = 0; off < n;) {
        size_t piece = 1 + (off * 7) % 9973;
        if (piece > n - off)
            piece = n - off;
        assert_int_equal(rl_sha256_update(ctx, buf + off, piece), RL_OK);
        off += piece;
    }
    uint8_t d[RL_SHA256_LEN];
    char hex[RL_SHA256_HEX_LEN + 1];
    assert_int_equal(rl_sha256_finish(ctx, d), RL_OK);
    rl_sha256_hex(d, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    char *dir = rl_test_tmpdir();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/a.bin", dir);
    rl_test_write_file(path, buf, n);
    uint64_t size = 0;
    memset(d, 0, sizeof d);
    assert_int_equal(rl_sha256_file(path, d, &size), RL_OK);
    assert_int_equal(size, n);
    rl_sha256_hex(d, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    snprintf(path, sizeof path, "%s/missing", dir);
    assert_int_equal(rl_sha256_file(path, d, NULL), RL_ENOENT);
    assert_non_null(strstr(rl_error_last(), "missing"));
    rl_test_tmpdir_free(dir);
    free(buf);
}

static void test_crc32(void **state)
{
    (void)state;
    assert_int_equal(rl_crc32(0, "123456789", 9), 0xCBF43926u);
    assert_int_equal(rl_crc32(0, "", 0), 0);
    /* Continuation over a split equals the whole. */
    uint32_t part = rl_crc32(0, "12345", 5);
    assert_int_equal(rl_crc32(part, "6789", 4), 0xCBF43926u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_sha256_incremental_and_file),
        cmocka_unit_test(test_crc32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
