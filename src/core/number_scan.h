/* The inner loop of the exact decimal reader (runlab/number.h's rl_scan_decimal), inlined
 * into bulk readers (the run loader's rows): the common plain decimal of at most 19 digits
 * read 8 digits at a time and finished in one IEEE division; everything else goes to
 * rl_scan_decimal. Internal to the library. */
#ifndef RL_CORE_NUMBER_SCAN_H
#define RL_CORE_NUMBER_SCAN_H

#include "runlab/number.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline bool rl_is_digit(char c) { return (unsigned char)(c - '0') < 10; }

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight ASCII digits at p as their value, or false when one byte is not a digit: the bytes
 * are checked and combined in a register (2 digits, then 4, then 8 at a time). Needs
 * p + 8 <= end. */
static inline bool rl_eight_digits(const char *p, uint64_t *value)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
    if (((x & 0xF0F0F0F0F0F0F0F0ull) | (((x + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) !=
        0x3333333333333333ull)
        return false;
    x -= 0x3030303030303030ull;
    x = x * 10 + (x >> 8); /* byte pairs: d0*10+d1 in every other byte */
    x = (((x & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
         (((x >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
        32;
    *value = x;
    return true;
}
#define RL_HAVE_EIGHT_DIGITS 1
#endif

/* Appends the digits at p to *m (wrapping past 19 digits: callers count them); returns the
 * first non-digit. Eight at a time where it can. */
static inline const char *rl_take_digits(const char *p, const char *end, uint64_t *m)
{
    uint64_t v = *m;
#ifdef RL_HAVE_EIGHT_DIGITS
    uint64_t eight;
    while (end - p >= 8 && rl_eight_digits(p, &eight)) {
        v = v * 100000000u + eight;
        p += 8;
    }
#endif
    while (p < end && rl_is_digit(*p)) {
        v = v * 10 + (uint64_t)(*p - '0');
        p++;
    }
    *m = v;
    return p;
}

/* Skips the '0' bytes at p; eight at a time where it can. */
static inline const char *rl_skip_zeros(const char *p, const char *end)
{
#ifdef RL_HAVE_EIGHT_DIGITS
    while (end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, sizeof x);
        x ^= 0x3030303030303030ull;
        if (x)
            return p + (__builtin_ctzll(x) >> 3);
        p += 8;
    }
#endif
    while (p < end && *p == '0')
        p++;
    return p;
}

/* m * 10^e correctly rounded for m < 10^19 and |e| <= 27 (128-bit integers), false when it
 * cannot be decided here (rl_scan_decimal's scaling, out of line). */
bool rl_scale_decimal(uint64_t m, int e, double *out);

/* rl_scan_decimal, with its common cases inline: "nan", and [-]digits[.digits][e[+-]digits]
 * of at most 19 digits (leading zeros of a number below 1 not counted) whose decimal
 * exponent is within +-27, not followed by 'x'. Exact: at most 2^53 and within +-22,
 * Clinger's fast path (one correctly rounded operation on two exact doubles); else the
 * 128-bit scaling of rl_scale_decimal. Same contract as rl_scan_decimal. */
static inline const char *rl_scan_decimal_inline(const char *s, const char *end, double *out)
{
    static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *p = s;
    if (end - p >= 3 && p[0] == 'n' && p[1] == 'a' && p[2] == 'n' && (end - p == 3 || p[3] != '(')) {
        *out = (double)NAN; /* as strtod reads "nan" (a planner's "not yet" cell) */
        return p + 3;
    }
    bool neg = p < end && *p == '-';
    p += neg;
    const char *d0 = p;
    uint64_t m = 0;
    p = rl_take_digits(p, end, &m);
    long digits = p - d0, frac = 0;
    if (p < end && *p == '.') {
        const char *f0 = ++p;
        /* 0.000ddd: the zeros are not significant. Only with at most 19 digits before the
         * point does m == 0 mean they were all zeros: past that m wraps, and can wrap to 0
         * (18047 followed by 68 zeros is 0 mod 2^64). */
        if (m == 0 && digits <= 19) {
            p = rl_skip_zeros(p, end);
            digits = 0;
        }
        const char *fs = p;
        p = rl_take_digits(p, end, &m);
        digits += p - fs;
        frac = p - f0;
        if (p == f0 && f0 - 1 == d0)
            return rl_scan_decimal(s, end, out); /* "." alone */
    }
    if (p == d0 || digits > 19)
        return rl_scan_decimal(s, end, out);
    long e = -frac;
    if (p < end && (*p | 0x20) == 'e') { /* an exponent of at most 3 digits */
        const char *q = p + 1;
        bool eneg = q < end && *q == '-';
        q += q < end && (*q == '-' || *q == '+');
        const char *e0 = q;
        long x = 0;
        while (q < end && rl_is_digit(*q) && q - e0 < 3)
            x = x * 10 + (*q++ - '0');
        if (q == e0 || (q < end && rl_is_digit(*q)))
            return rl_scan_decimal(s, end, out);
        e += eneg ? -x : x;
        p = q;
    }
    if (p < end && (*p | 0x20) == 'x')
        return rl_scan_decimal(s, end, out);
    double v;
    if (m == 0) {
        v = 0.0;
    } else if (m <= ((uint64_t)1 << 53) && e >= -22 && e <= 22) {
        v = e < 0 ? (double)m / pow10[-e] : (double)m * pow10[e];
    } else if (e < -27 || e > 27 || !rl_scale_decimal(m, (int)e, &v)) {
        return rl_scan_decimal(s, end, out);
    }
    *out = neg ? -v : v;
    return p;
}

#endif
