/* Locale-independent number text behind runlab/number.h: the shortest round-trip decimal
 * form of a double (Ryū, number_ryu.c), shared by the CSV, JSON and YAML writers and the
 * message JSON so a value is spelled the same in every file, and strtod pinned to the C
 * locale. */
#include "runlab/number.h"

#include "core/number_digits.h"
#include "core/text.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The "C" locale object, created once: number text must not follow LC_NUMERIC. */
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale_obj;

static void c_locale_init(void) { c_locale_obj = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

static locale_t c_locale(void)
{
    pthread_once(&c_locale_once, c_locale_init);
    return c_locale_obj;
}

double rl_parse_f64(const char *s, char **end)
{
    locale_t loc = c_locale();
    if (loc == (locale_t)0)
        return strtod(s, end);
    return strtod_l(s, end, loc);
}

/* Powers of ten that are exact doubles (5^22 < 2^53). */
static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 u128;

/* Powers of five that fit in 64 bits: 10^k = 5^k * 2^k, and the 2^k is exact. */
static const uint64_t pow5_u64[28] = {
    1ull,
    5ull,
    25ull,
    125ull,
    625ull,
    3125ull,
    15625ull,
    78125ull,
    390625ull,
    1953125ull,
    9765625ull,
    48828125ull,
    244140625ull,
    1220703125ull,
    6103515625ull,
    30517578125ull,
    152587890625ull,
    762939453125ull,
    3814697265625ull,
    19073486328125ull,
    95367431640625ull,
    476837158203125ull,
    2384185791015625ull,
    11920928955078125ull,
    59604644775390625ull,
    298023223876953125ull,
    1490116119384765625ull,
    7450580596923828125ull,
};
#endif

/* 2^k as a double, for -1022 <= k <= 1023. */
static double pow2(int k)
{
    uint64_t bits = (uint64_t)(1023 + k) << 52;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* m * 10^e (m > 0) correctly rounded, or false when that cannot be decided here. With
 * m <= 2^53 and |e| <= 22 both operands are exact doubles and one IEEE operation rounds
 * once (Clinger's fast path). Beyond, with 128-bit integers and |e| <= 27, as
 * m * 5^e * 2^e (5^27 < 2^63): a product m * 5^e < 2^127 is exact and converts to double
 * with one rounding; for a quotient, m is shifted up so that q = (m << s) / 5^-e has 63 or
 * 64 bits (one machine division), a nonzero remainder is kept as a sticky low bit (never a
 * midpoint: those end in 10 zero bits) and q rounds once to double. The power of two
 * then scales exactly: results stay within 1e-27..1e47, always normal. No floating-point
 * tricks that an emulator or another FPU could change. */
static bool scale_exact(uint64_t m, int e, double *out)
{
    if (m <= ((uint64_t)1 << 53) && e >= -22 && e <= 22) {
        double v = (double)m;
        *out = e < 0 ? v / pow10_exact[-e] : v * pow10_exact[e];
        return true;
    }
#ifdef __SIZEOF_INT128__
    if (e >= 0 && e <= 27) {
        *out = (double)((u128)m * pow5_u64[e]) * pow2(e);
        return true;
    }
    if (e < 0 && e >= -27) {
        /* n = m << shift with bits(n) = bits(d) + 63: the quotient has 63 or 64 bits and
         * fits one 64-bit word, so a single 128-by-64-bit division gives it. */
        uint64_t d = pow5_u64[-e];
        int shift = (64 - __builtin_clzll(d)) + 63 - (64 - __builtin_clzll(m));
        u128 n = (u128)m << shift;
        uint64_t q, r;
#if defined(__x86_64__)
        __asm__("divq %4" : "=a"(q), "=d"(r) : "a"((uint64_t)n), "d"((uint64_t)(n >> 64)), "rm"(d));
#else
        q = (uint64_t)(n / d);
        r = (uint64_t)(n % d);
#endif
        if (r)
            q |= 1;
        *out = (double)q * pow2(-shift + e); /* shift <= 126, e >= -27 */
        return true;
    }
#endif
    return false;
}

bool rl_scale_decimal(uint64_t m, int e, double *out)
{
    return scale_exact(m, e, out);
}

/* The digits of an exponent after its 'e' (with an optional sign), added to *exp10 (capped
 * far beyond any double's range); NULL when no digit follows. */
static const char *scan_exponent(const char *q, const char *end, long *exp10)
{
    bool eneg = false;
    if (q < end && (*q == '-' || *q == '+')) {
        eneg = *q == '-';
        q++;
    }
    const char *e0 = q;
    long e = 0;
    while (q < end && rl_is_digit(*q)) {
        if (e < 100000)
            e = e * 10 + (*q - '0');
        q++;
    }
    if (q == e0)
        return NULL;
    *exp10 += eneg ? -e : e;
    return q;
}

/* The end of a decimal whose digits gave m * 10^exp10 (at most 19 digits in m), p just past
 * them: the exponent, then the value when it is exact here. */
static const char *scan_finish(const char *p, const char *end, uint64_t m, long exp10, bool neg,
                               double *out)
{
    if (p < end && (*p == 'x' || *p == 'X'))
        return NULL; /* strtod reads "0x..." as hexadecimal */
    if (p < end && (*p == 'e' || *p == 'E')) {
        p = scan_exponent(p + 1, end, &exp10);
        if (!p)
            return NULL; /* "1e" or "1e+": strtod stops before the 'e'; leave it to strtod */
    }
    double v;
    if (m == 0) {
        v = 0.0; /* every digit was zero: zero whatever the exponent */
    } else if (exp10 < -27 || exp10 > 27 || !scale_exact(m, (int)exp10, &v)) {
        return NULL;
    }
    *out = neg ? -v : v;
    return p;
}

/* The digit-by-digit reader, for texts with more than 19 significant digits (it keeps the
 * first 19 and notes whether a nonzero digit was dropped). */
static const char *scan_decimal_careful(const char *s, const char *end, double *out)
{
    const char *p = s;
    bool neg = false;
    if (p < end && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    uint64_t m = 0;
    int digits = 0;   /* significant digits taken into m (leading zeros are not) */
    bool lost = false; /* a nonzero digit did not fit in m */
    long exp10 = 0;
    const char *d0 = p;
    while (p < end && (unsigned)(*p - '0') < 10) {
        if (digits < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            digits += m != 0;
        } else {
            lost |= *p != '0';
            exp10++;
        }
        p++;
    }
    bool any = p > d0;
    if (p < end && *p == '.') {
        p++;
        const char *f0 = p;
        while (p < end && (unsigned)(*p - '0') < 10) {
            if (digits < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                digits += m != 0;
                exp10--;
            } else {
                lost |= *p != '0';
            }
            p++;
        }
        any = any || p > f0;
    }
    if (!any)
        return NULL;
    if (lost)
        return NULL;
    return scan_finish(p, end, m, exp10, neg, out);
}

static inline char lower(char c) { return (char)(c | 0x20); }

/* "nan" and "inf" (any case) as strtod reads them, or NULL for the longer forms
 * ("nan(...)", "infinity") that strtod reads further: those go to strtod. */
static const char *scan_special(const char *p, const char *end, bool neg, double *out)
{
    if (end - p < 3)
        return NULL;
    char a = lower(p[0]), b = lower(p[1]), c = lower(p[2]);
    const char *q = p + 3;
    double v;
    if (a == 'n' && b == 'a' && c == 'n') {
        if (q < end && *q == '(')
            return NULL;
        v = (double)NAN;
    } else if (a == 'i' && b == 'n' && c == 'f') {
        if (q < end && lower(*q) == 'i')
            return NULL;
        v = (double)INFINITY;
    } else {
        return NULL;
    }
    *out = neg ? -v : v;
    return q;
}

const char *rl_scan_decimal(const char *s, const char *end, double *out)
{
    const char *p = s;
    bool neg = false;
    if (p < end && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    if (p < end && !rl_is_digit(*p) && *p != '.')
        return scan_special(p, end, neg, out);
    /* All digits go into m (wrapping past 19 digits, when the careful reader takes over);
     * leading zeros are not significant and are skipped first. */
    const char *d0 = p;
    while (p < end && *p == '0')
        p++;
    const char *i0 = p;
    uint64_t m = 0;
    p = rl_take_digits(p, end, &m);
    long significant = p - i0;
    bool any = p > d0;
    long exp10 = 0;
    if (p < end && *p == '.') {
        p++;
        const char *f0 = p;
        if (significant == 0)
            while (p < end && *p == '0')
                p++;
        const char *fs = p;
        p = rl_take_digits(p, end, &m);
        significant += p - fs;
        exp10 = -(long)(p - f0);
        any = any || p > f0;
    }
    if (!any)
        return NULL;
    if (significant > 19)
        return scan_decimal_careful(s, end, out);
    return scan_finish(p, end, m, exp10, neg, out);
}

/* A decimal of up to 6 significant digits survives a float's round trip (1 for
 * subnormals), so when %.6g reads back it is the shortest (%g drops trailing zeros); else
 * one more digit at a time, and 9 always does. */
size_t rl_shortest_f32(float v, char *buf)
{
    enum { CAP = 32 };
    locale_t loc = c_locale();
    locale_t old = loc != (locale_t)0 ? uselocale(loc) : (locale_t)0;
    int n = 0;
    for (int p = fpclassify(v) == FP_SUBNORMAL ? 1 : 6;; p++) {
        n = snprintf(buf, CAP, "%.*g", p, (double)v);
        if (p >= 9 || (float)strtod(buf, NULL) == v)
            break;
    }
    if (old != (locale_t)0)
        uselocale(old);
    return n > 0 ? (size_t)n : 0;
}

size_t rl_format_f64(double v, char *buf, size_t cap)
{
    char tmp[40];
    size_t n;
    if (isnan(v)) {
        memcpy(tmp, "nan", 4);
        n = 3;
    } else if (isinf(v)) {
        n = v < 0 ? 4 : 3;
        memcpy(tmp, v < 0 ? "-inf" : "inf", n + 1);
    } else {
        n = rl_shortest_f64(v, tmp);
    }
    if (cap > 0) {
        size_t k = n < cap ? n : cap - 1;
        memcpy(buf, tmp, k);
        buf[k] = '\0';
    }
    return n;
}
