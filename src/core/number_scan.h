/* The inner loop of the exact decimal reader (runlab/number.h's rl_scan_decimal), inlined
 * into bulk readers (the run loader's rows): the common plain decimal of at most 19 digits
 * read 8 digits at a time and finished in one IEEE division; everything else goes to
 * rl_scan_decimal (number.c). It calls down into number.c and number_digits.h; number.c
 * does not include it. Internal to the library. */
#ifndef RL_CORE_NUMBER_SCAN_H
#define RL_CORE_NUMBER_SCAN_H

#include "core/number_digits.h"
#include "runlab/number.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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
