/* Locale-independent number text behind runlab/number.h: the shortest round-trip decimal
 * form of a double (Ryū, number_ryu.c), shared by the CSV, JSON and YAML writers and the
 * message JSON so a value is spelled the same in every file, and strtod pinned to the C
 * locale. */
#include "runlab/number.h"

#include "core/text.h"

#include <locale.h>
#include <math.h>
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

/* Powers of ten that fit in 64 bits. */
static const uint64_t pow10_u64[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};
#endif

/* m * 10^e (m > 0) correctly rounded, or false when that cannot be decided here. With
 * m <= 2^53 and |e| <= 22 both operands are exact doubles and one IEEE operation rounds
 * once (Clinger's fast path). Beyond, with 128-bit integers and |e| <= 19: a product
 * m * 10^e < 2^128 is exact and converts to double with one rounding; for a quotient, m is
 * shifted up to 127 bits so that q = (m << s) / 10^-e has at least 63 bits, a nonzero
 * remainder is kept as a sticky low bit (never a midpoint: those end in 10 zero bits), q
 * rounds once to double and the exact power of two 2^-s scales it. Results stay within
 * 1e-19..1e39: always normal, so the scaling is exact. No floating-point tricks that an
 * emulator or another FPU could change. */
static bool scale_exact(uint64_t m, int e, double *out)
{
    if (m <= ((uint64_t)1 << 53) && e >= -22 && e <= 22) {
        double v = (double)m;
        *out = e < 0 ? v / pow10_exact[-e] : v * pow10_exact[e];
        return true;
    }
#ifdef __SIZEOF_INT128__
    if (e >= 0 && e <= 19) {
        *out = (double)((u128)m * pow10_u64[e]);
        return true;
    }
    if (e < 0 && e >= -19) {
        int bits = 64 - __builtin_clzll(m);
        int shift = 127 - bits;
        u128 n = (u128)m << shift;
        u128 d = pow10_u64[-e];
        u128 q = n / d;
        if (n % d)
            q |= 1;
        uint64_t scale_bits = (uint64_t)(1023 - shift) << 52; /* 2^-shift, shift <= 126 */
        double scale;
        memcpy(&scale, &scale_bits, sizeof scale);
        *out = (double)q * scale;
        return true;
    }
#endif
    return false;
}

const char *rl_scan_decimal(const char *s, const char *end, double *out)
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
    if (p < end && (*p == 'x' || *p == 'X'))
        return NULL; /* strtod reads "0x..." as hexadecimal */
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        bool eneg = false;
        if (q < end && (*q == '-' || *q == '+')) {
            eneg = *q == '-';
            q++;
        }
        const char *e0 = q;
        long e = 0;
        while (q < end && (unsigned)(*q - '0') < 10) {
            if (e < 100000)
                e = e * 10 + (*q - '0');
            q++;
        }
        if (q == e0)
            return NULL; /* "1e" or "1e+": strtod stops before the 'e'; leave it to strtod */
        exp10 += eneg ? -e : e;
        p = q;
    }
    double v;
    if (m == 0) {
        v = 0.0; /* every digit was zero: zero whatever the exponent */
    } else if (lost || exp10 < -22 || exp10 > 22 || !scale_exact(m, (int)exp10, &v)) {
        return NULL;
    }
    *out = neg ? -v : v;
    return p;
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
