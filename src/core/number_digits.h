/* The digit steps of the decimal reader, shared by the exact reader (number.c) and its
 * inline fast path (number_scan.h): a digit test, eight digits at a time, runs of digits
 * and zeros, and the declaration of the out-of-line 128-bit scaling. Internal to the
 * library; it calls nothing above it. */
#ifndef RL_CORE_NUMBER_DIGITS_H
#define RL_CORE_NUMBER_DIGITS_H

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

#endif
