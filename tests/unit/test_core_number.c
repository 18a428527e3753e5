/* Tests of runlab/number.h's fast decimal reader against the C library's strtod: random
 * decimals of every length and exponent, random doubles printed at 15-20 digits, and the
 * hard cases (exact midpoints between neighbouring doubles, 2^53 + 1, the subnormal
 * boundaries, long runs of zeros). The expected value is always glibc's strtod. */
#include "rl_test.h"

#include "runlab/number.h"

#include "core/number_scan.h"
#include "core/text.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static uint64_t bits_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* The fast reader must stop where strtod stops and give the same bits, or decline. Returns
 * whether it took the text. */
static bool check_one(const char *s)
{
    char *end;
    double want = strtod(s, &end);
    double got = 12345.0;
    const char *stop = rl_scan_decimal(s, s + strlen(s), &got);
    /* The inlined reader of bulk loaders takes exactly what rl_scan_decimal takes. */
    double got_inline = 12345.0;
    const char *stop_inline = rl_scan_decimal_inline(s, s + strlen(s), &got_inline);
    if (stop_inline != stop || (stop && bits_of(got_inline) != bits_of(got))) {
        print_error("'%s': rl_scan_decimal_inline differs from rl_scan_decimal\n", s);
        fail();
    }
    if (!stop)
        return false;
    if (stop != end || bits_of(got) != bits_of(want)) {
        print_error("'%s': strtod %.17g (%zu bytes), rl_scan_decimal %.17g (%zu bytes)\n", s,
                    want, (size_t)(end - s), got, (size_t)(stop - s));
        fail();
    }
    return true;
}

static void test_hard_cases(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "9007199254740993", "9007199254740993.0", "-9007199254740993", "9007199254740992",
        "9007199254740994", "9007199254740995", "18014398509481987", "18014398509481986",
        "9223372036854775807", "9223372036854775808", "18446744073709551615",
        "1844674407370955161", "9999999999999999999", "99999999999999999999",
        "0.1e-5", "0.10e-5", "00000.1e-5", "0.1E-5", "1e-6", "0.000001", "-0.1e-5", "+0.1e-5",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124",
        "1.00000000000000011102230246251565404236316680908203126",
        "1.0000000000000001110", "1.0000000000000001111", "1.000000000000000111",
        "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
        "2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014e-308",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "1e23", "8.98846567431158e307", "1e22", "1e-22", "123456789012345678e-27",
        "123456789012345678e27", "1234567890123456789e-27", "1234567890123456789e27",
        "0.000000000000000000000000000000000000000000000000000000000000001",
        "0.0000000000000000000000000000", "-0.0", "-0", "0e999999", "-0e-999999", "0.",
        ".5", "5.", "-.5e1", "1e", "1e+", "1e-", "1.5.3", "1,5", "0x10", "0X1p4", "00x1",
        "1000000000000000000000000000000", "1000000000000000000000", "100000000000000000000",
        "0.30000000000000004", "0.3000000000000000444089209850062616169452667236328125",
        "7.0e-10", "3.4028235e38", "4.35679e-3", "2.9802322387695312e-8",
        "0.0008194830000000001", "0.4428119962103665", "145.75", "123.456e-7",
        "nan", "-nan", "+nan", "NaN", "NAN", "nan(123)", "nan(", "na", "inf", "-inf", "+inf",
        "INF", "Inf", "infinity", "-Infinity", "infx", "nanx", "in", "-", "+", ".", "-.",
        "12345678", "123456789", "1234567890123456", "12345678.87654321", "0.12345678",
        "00000000.000000001", "0000000000000000000001.5", "1.00000000", "99999999.99999999",
        "1234567a", "1234567.a", "9999999999999999999.5", "0.00000000000000000001234",
        "1e-19", "1.8446744073709551615", "18446744073709551.615e-3", "1000000000000000000e-19",
        "9999999999999999999e-19", "1e-1", "3e-1", "7e-19", "1234567890123456789e-1",
        "1.5e-100000000000", "1.5e+100000000000", "0.00039560500000000005",
        "9.905700000000001e-05", "1e-27", "1e-28", "1e27", "1e28", "18446744073709551615e-27",
        "1844674407370955161e27", "9007199254740993e-27", "9007199254740993e27",
        "7450580596923828125e-27", "4.9406564584124654e-27", "1.7976931348623157e27",
        /* the inline reader's exponent (at most 3 digits there) and "nan" */
        "1e999", "1e0999", "1e-0005", "1.5e+022", "1.5e022", "0e1000", "0e100", "-0e5", "1e5x",
        "1.5e5.5", "1e+5", "5e-324", "1e-22x", "12e-", "nan1", "nan,", "-0.19053072575479746",
        "0.19053072575479746e2", "19053072575479746e-28", "1905307257547974600e8",
        /* an integer part that wraps to 0 mod 2^64 (found by fuzz_number) */
        "1804700000000000000000000000000000000000000000000000000000000000000000000.050658",
        "10000000000000000000000000000000000000000000000000000000000000000.5",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_one(cases[i]);
    /* The common forms are taken, not declined, exact midpoints (2^53 + 1) and 17-19
     * digit mantissas included. */
    assert_true(check_one("9007199254740993"));
    assert_true(check_one("9007199254740994.5"));
    assert_true(check_one("1.0000000000000001110"));
    assert_true(check_one("1844674407370955161"));
    assert_false(check_one("18446744073709551615")); /* 20 digits: strtod */
    assert_true(check_one("0.1e-5"));
    assert_true(check_one("0.4428119962103665"));
    assert_true(check_one("0.0008194830000000001"));
    assert_true(check_one("nan"));
    assert_true(check_one("-nan"));
    assert_true(check_one("-inf"));
    assert_true(check_one("INF"));
    assert_false(check_one("infinity")); /* strtod reads the longer form: left to it */
    assert_false(check_one("nan(1)"));
    assert_true(check_one("12345678.87654321"));
    assert_true(check_one("9999999999999999999e-19"));
    assert_true(check_one("0.00039560500000000005")); /* 17 digits, 10^-20: 5^20 < 2^64 */
    assert_true(check_one("9007199254740993e-27"));
    assert_true(check_one("1844674407370955161e27"));
    assert_false(check_one("1e"));
    assert_false(check_one("0x10"));
}

/* Exact midpoints between neighbouring doubles (their full decimal expansion), and the
 * decimals just below and above them at 17-20 significant digits. */
static void test_midpoints(void **state)
{
    (void)state;
    for (int k = 0; k < 6000; k++) {
        double d;
        uint64_t b = rnd();
        int kind = k % 3;
        if (kind == 0) /* any finite double */
            b &= 0x7FEFFFFFFFFFFFFFull;
        else if (kind == 1) /* numbers a log holds: 1e-12 .. 1e12 */
            b = (b & 0x000FFFFFFFFFFFFFull) | ((uint64_t)(1023 - 40 + (int)(rnd() % 80)) << 52);
        else /* integers of 2^53 .. 2^64: the midpoints are integers too */
            b = (b & 0x000FFFFFFFFFFFFFull) | ((uint64_t)(1023 + 53 + (int)(rnd() % 11)) << 52);
        memcpy(&d, &b, sizeof d);
        double next = nextafter(d, INFINITY);
        if (!isfinite(next))
            continue;
        long double mid = ((long double)d + (long double)next) / 2; /* exact in 64 bits */
        char full[1200];
        snprintf(full, sizeof full, "%.*Le", 800, mid);
        check_one(full);
        /* Truncated to n digits (below the midpoint), and the last digit raised (above). */
        for (int n = 15; n <= 20; n++) {
            char t[64], mant[32];
            const char *e = strchr(full, 'e');
            size_t take = (size_t)n + 1; /* "d." then n - 1 digits */
            memcpy(mant, full, take);
            mant[take] = '\0';
            snprintf(t, sizeof t, "%s%s", mant, e);
            check_one(t);
            int i = (int)take - 1;
            while (i >= 0 && (mant[i] == '9' || mant[i] == '.')) {
                if (mant[i] == '9')
                    mant[i] = '0';
                i--;
            }
            if (i >= 0) {
                mant[i]++;
                snprintf(t, sizeof t, "%s%s", mant, e);
                check_one(t);
            }
        }
        if (kind == 2) { /* as a plain integer, as perflog's counters are written */
            char t[64];
            snprintf(t, sizeof t, "%.0Lf", mid);
            check_one(t);
            snprintf(t, sizeof t, "%.0Lf", mid + 1);
            check_one(t);
        }
    }
}

/* Random decimal text: 1-25 digits with a point anywhere (or none), leading zeros,
 * trailing zeros, and an exponent from none to +-350. Every text with at most 15
 * significant digits and a small enough exponent must be taken. */
static void test_random_decimals(void **state)
{
    (void)state;
    size_t taken = 0, clinger = 0, clinger_taken = 0;
    for (int k = 0; k < 100000; k++) {
        char s[96];
        size_t n = 0;
        if (rnd() % 4 == 0)
            s[n++] = rnd() % 2 ? '-' : '+';
        int lead = rnd() % 5 == 0 ? (int)(rnd() % 30) : 0;
        int digits = 1 + (int)(rnd() % 25);
        int point = (int)(rnd() % (uint64_t)(lead + digits + 2)) - 1; /* -1: no point */
        int trail = rnd() % 5 == 0 ? (int)(rnd() % 8) : 0;
        int sig = 0, pos = 0, frac_digits = 0;
        bool seen_point = false;
        for (int i = 0; i < lead + digits + trail; i++, pos++) {
            if (pos == point) {
                s[n++] = '.';
                seen_point = true;
            }
            char c = i < lead || i >= lead + digits ? '0' : (char)('0' + rnd() % 10);
            if (i == lead && c == '0')
                c = '1';
            if (i >= lead && i < lead + digits)
                sig++;
            if (seen_point)
                frac_digits++;
            s[n++] = c;
        }
        int e = 0;
        if (rnd() % 2) {
            e = (int)(rnd() % 701) - 350;
            if (rnd() % 3 == 0)
                e = (int)(rnd() % 61) - 30;
            n += (size_t)snprintf(s + n, sizeof s - n, "%c%d", rnd() % 2 ? 'e' : 'E', e);
        } else {
            s[n] = '\0';
        }
        bool took = check_one(s);
        taken += took;
        /* Clinger's range: <= 15 digits and a decimal exponent within 22 once the digits
         * are an integer. Trailing zeros count as digits here, so stay conservative. */
        int exp10 = e - frac_digits;
        if (sig + trail <= 15 && exp10 >= -22 && exp10 <= 22) {
            clinger++;
            clinger_taken += took;
        }
    }
    assert_true(clinger > 3000);
    assert_int_equal(clinger_taken, clinger);
    assert_true(taken > clinger);
}

/* Random doubles in the forms writers produce: %.15g, %.16g, %.17g and the shortest
 * round-trip form of rl_format_f64; each must read back exactly as strtod reads it. */
static void test_printed_doubles(void **state)
{
    (void)state;
    size_t taken = 0, total = 0;
    for (int k = 0; k < 30000; k++) {
        double d;
        uint64_t b = rnd();
        if (k % 2)
            b = (b & 0x800FFFFFFFFFFFFFull) | ((uint64_t)(1023 - 30 + (int)(rnd() % 60)) << 52);
        memcpy(&d, &b, sizeof d);
        if (!isfinite(d))
            continue;
        char s[64];
        for (int p = 15; p <= 20; p++) {
            snprintf(s, sizeof s, "%.*g", p, d);
            taken += check_one(s);
            total++;
        }
        rl_format_f64(d, s, sizeof s);
        taken += check_one(s);
        total++;
    }
    /* Half the doubles lie in 1e-9..1e9, where every form up to 19 digits is taken. */
    assert_true(taken > total / 3);
}

/* The reader stops at `end` even inside a run of digits: each text is copied into a
 * buffer of exactly its length (no NUL, so ASan sees any read past it) and cut at every
 * length; the value must be strtod's of the cut text. */
static void test_end_bound(void **state)
{
    (void)state;
    static const char *const texts[] = {"1234567890123456789", "0.12345678901234567",
                                        "-98765432.123456789e-3", "00000000000000001.5",
                                        "12345678,9", "nan,1", "-inf\n", "1e-7"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        size_t len = strlen(texts[i]);
        for (size_t cut = 1; cut <= len; cut++) {
            char *exact = malloc(cut);
            char copy[64];
            assert_non_null(exact);
            memcpy(exact, texts[i], cut);
            memcpy(copy, texts[i], cut);
            copy[cut] = '\0';
            char *want_end;
            double want = strtod(copy, &want_end), got;
            const char *stop = rl_scan_decimal(exact, exact + cut, &got);
            double got_inline;
            assert_ptr_equal(rl_scan_decimal_inline(exact, exact + cut, &got_inline), stop);
            if (stop) {
                assert_int_equal(stop - exact, want_end - copy);
                assert_true(bits_of(got) == bits_of(want));
            }
            free(exact);
        }
    }
}

/* Float32 text (the message JSON's): some exact spellings, then for floats of every
 * exponent the text reads back to the same float and no %g with fewer digits does. */
static void test_shortest_f32(void **state)
{
    (void)state;
    char buf[32];
    const struct {
        float v;
        const char *text;
    } exact[] = {{0.1f, "0.1"},           {1.0f, "1"},      {-0.0f, "-0"},
                 {16777217.0f, "16777216"}, {FLT_MAX, "3.4028235e+38"},
                 {1e-45f, "1e-45"},         {1.0f / 3, "0.33333334"}};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        size_t n = rl_shortest_f32(exact[i].v, buf);
        assert_string_equal(buf, exact[i].text);
        assert_int_equal(n, strlen(exact[i].text));
    }
    uint32_t x = 12345;
    for (int k = 0; k < 100000; k++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        float v;
        memcpy(&v, &x, sizeof v);
        if (!isfinite(v))
            continue;
        rl_shortest_f32(v, buf);
        float back = strtof(buf, NULL);
        if (memcmp(&back, &v, sizeof v) != 0)
            fail_msg("%a printed as %s reads back as %a", (double)v, buf, (double)back);
        char shorter[32];
        for (int p = 1; p < 9; p++) {
            snprintf(shorter, sizeof shorter, "%.*g", p, (double)v);
            if (strlen(shorter) >= strlen(buf))
                break;
            if (strtof(shorter, NULL) == v)
                fail_msg("%a printed as %s, but %s is shorter", (double)v, buf, shorter);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hard_cases),
        cmocka_unit_test(test_midpoints),
        cmocka_unit_test(test_random_decimals),
        cmocka_unit_test(test_printed_doubles),
        cmocka_unit_test(test_end_bound),
        cmocka_unit_test(test_shortest_f32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
