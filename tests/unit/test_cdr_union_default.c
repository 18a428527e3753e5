/* Issue 30 item 4: a union whose `default` branch is listed before (or between) the cases.
 * The case whose label matches the discriminator is the active one wherever the default
 * stands; the default is active only when no label matches. Read through every path that
 * picks a union's case: decoding to JSON, encoding from JSON, field paths (rl_msg_path_get)
 * and extraction. The bytes are XCDR1 little-endian, written by hand from the CDR rules
 * (discriminator int32, then the case: int32, or a float64 aligned to 8, or a string). */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/msgdef.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The default first (U), and between two cases (V). */
static const char idl[] =
    "module t {\n"
    "  union U switch (long) { default: long other; case 1: double one; case 2: string two; };\n"
    "  union V switch (long) { case 1: double one; default: long other; case 2: string two; };\n"
    "  @final struct S { U u; V v; };\n"
    "};\n";

static rl_msgdef *parse(void)
{
    rl_msgdef *d = NULL;
    if (rl_msgdef_parse(&d, "omgidl", "t::S", idl, strlen(idl)) != RL_OK)
        fail_msg("parse: %s", rl_error_last());
    return d;
}

/* Encapsulation CDR_LE, then u and v with the same discriminator `disc`. */
static size_t payload(int32_t disc, uint8_t *out)
{
    size_t n = 0;
    const uint8_t head[] = {0x00, 0x01, 0x00, 0x00};
    memcpy(out, head, 4), n = 4;
    for (int k = 0; k < 2; k++) {
        while ((n - 4) % 4)
            out[n++] = 0;
        memcpy(out + n, &disc, 4), n += 4;
        if (disc == 2) { /* string "ab": length 3 with the NUL */
            const uint8_t s[] = {3, 0, 0, 0, 'a', 'b', 0};
            memcpy(out + n, s, sizeof s), n += sizeof s;
        } else if (disc == 1) { /* double 1.5, aligned to 8 from the body's start */
            while ((n - 4) % 8)
                out[n++] = 0;
            double x = 1.5;
            memcpy(out + n, &x, 8), n += 8;
        } else { /* long -5 */
            int32_t x = -5;
            memcpy(out + n, &x, 4), n += 4;
        }
    }
    return n;
}

static void test_label_wins_over_an_earlier_default(void **state)
{
    (void)state;
    rl_msgdef *d = parse();
    static const struct {
        int32_t disc;
        const char *json, *path_u, *path_v;
    } cases[] = {
        {2, "{\"u\":{\"_d\":2,\"two\":\"ab\"},\"v\":{\"_d\":2,\"two\":\"ab\"}}", "u.two", "v.two"},
        {1, "{\"u\":{\"_d\":1,\"one\":1.5},\"v\":{\"_d\":1,\"one\":1.5}}", "u.one", "v.one"},
        {7, "{\"u\":{\"_d\":7,\"other\":-5},\"v\":{\"_d\":7,\"other\":-5}}", "u.other",
         "v.other"},
    };
    static const char *const members[] = {"u.two", "u.one", "u.other", "v.two", "v.one", "v.other"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t bytes[64];
        size_t n = payload(cases[i].disc, bytes);
        /* Decoding. */
        char *buf = NULL;
        size_t cap = 0, len = 0;
        if (rl_msg_to_json(d, bytes, n, &buf, &cap, &len) != RL_OK)
            fail_msg("discriminator %d: decode failed: %s", cases[i].disc, rl_error_last());
        if (strcmp(buf, cases[i].json) != 0)
            fail_msg("discriminator %d: decoded JSON reads %s, want %s", cases[i].disc, buf,
                     cases[i].json);
        free(buf);
        /* Encoding the same JSON gives the same bytes. */
        uint8_t *enc = NULL;
        size_t elen = 0;
        if (rl_msg_encode_json_text(d, cases[i].json, strlen(cases[i].json), RL_CDR_LE, &enc,
                                    &elen) != RL_OK)
            fail_msg("discriminator %d: encode failed: %s", cases[i].disc, rl_error_last());
        /* The encoder pads the payload to 4 bytes and says how many in the header's
           options (as Cyclone does): the body is the same. */
        size_t pad = (4 - n % 4) % 4;
        if (elen != n + pad || memcmp(enc + 4, bytes + 4, n - 4) != 0 || enc[3] != pad)
            fail_msg("discriminator %d: encoded %zu bytes (padding %u), not the %zu + %zu of "
                     "the CDR rules",
                     cases[i].disc, elen, enc[3], n, pad);
        free(enc);
        /* Field paths: the active case is present, the other members are not. */
        for (size_t m = 0; m < sizeof members / sizeof members[0]; m++) {
            rl_msg_path *p = NULL;
            assert_int_equal(rl_msg_path_compile(&p, d, members[m]), RL_OK);
            rl_msg_value v;
            int rc = rl_msg_path_get(p, bytes, n, &v);
            bool active = strcmp(members[m], cases[i].path_u) == 0 ||
                          strcmp(members[m], cases[i].path_v) == 0;
            if ((rc == RL_OK) != active)
                fail_msg("discriminator %d: path %s read rc %d (want %s)", cases[i].disc,
                         members[m], rc, active ? "present" : "absent, RL_ENOENT");
            if (active && strstr(members[m], "other")) {
                double f = 0;
                assert_int_equal(rl_msg_value_f64(&v, &f), RL_OK);
                if (f != -5)
                    fail_msg("discriminator %d: %s read %g, want -5", cases[i].disc, members[m], f);
            }
            rl_msg_path_free(p);
        }
        /* Extraction: the same answers in one walk. */
        rl_msg_extract *x = NULL;
        assert_int_equal(rl_msg_extract_compile(&x, d, members, 6), RL_OK);
        rl_msg_field f[6];
        assert_int_equal(rl_msg_extract_run(x, bytes, n, f, NULL, NULL), RL_OK);
        for (size_t m = 0; m < 6; m++) {
            bool active = strcmp(members[m], cases[i].path_u) == 0 ||
                          strcmp(members[m], cases[i].path_v) == 0;
            if (f[m].present != active)
                fail_msg("discriminator %d: extracted %s present %d, want %d", cases[i].disc,
                         members[m], f[m].present, active);
        }
        rl_msg_extract_free(x);
    }
    rl_msgdef_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_wins_over_an_earlier_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
