/* Shortest round-trip text of a double, fast, for every writer (rl_format_f64: CSV, JSON,
 * YAML, the message JSON): the Ryū algorithm (Ulf Adams, PLDI 2018) — the shortest decimal
 * inside the double's rounding interval, from 128-bit products with powers of 5 — written
 * from the paper's description, with its power-of-5 tables computed once at first use
 * from exact big integers. The text is spelled as printf's %g would spell that decimal. */
#include "core/text.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

enum { POW5_BITS = 125, POW5_TABLE = 326, POW5_INV_TABLE = 342, BIG_WORDS = 16 };

__extension__ typedef unsigned __int128 u128; /* gcc and clang on 64-bit targets */

static uint64_t pow5_split[POW5_TABLE][2], pow5_inv_split[POW5_INV_TABLE][2];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

/* ---- exact big integers for the tables (little-endian 64-bit words) ---- */

typedef struct big {
    uint64_t w[BIG_WORDS];
} big;

static int big_bits(const big *a)
{
    for (int i = BIG_WORDS - 1; i >= 0; i--)
        if (a->w[i])
            return i * 64 + 64 - __builtin_clzll(a->w[i]);
    return 0;
}

static void big_mul_small(big *a, uint64_t m)
{
    u128 carry = 0;
    for (int i = 0; i < BIG_WORDS; i++) {
        u128 t = (u128)a->w[i] * m + carry;
        a->w[i] = (uint64_t)t;
        carry = t >> 64;
    }
}

static int big_bit(const big *a, int i) { return (int)(a->w[i / 64] >> (i % 64) & 1); }

static void big_set_bit(big *a, int i) { a->w[i / 64] |= (uint64_t)1 << (i % 64); }

static void big_shl1(big *a)
{
    for (int i = BIG_WORDS - 1; i > 0; i--)
        a->w[i] = a->w[i] << 1 | a->w[i - 1] >> 63;
    a->w[0] <<= 1;
}

static int big_cmp(const big *a, const big *b)
{
    for (int i = BIG_WORDS - 1; i >= 0; i--)
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

static void big_sub(big *a, const big *b)
{
    uint64_t borrow = 0;
    for (int i = 0; i < BIG_WORDS; i++) {
        uint64_t x = a->w[i], y = b->w[i];
        uint64_t d = x - y - borrow;
        borrow = (x < y) || (x - y < borrow);
        a->w[i] = d;
    }
}

/* Bits [lo, lo + 128) of a as two words. */
static void big_window(const big *a, int lo, uint64_t out[2])
{
    out[0] = out[1] = 0;
    for (int i = 0; i < 128; i++)
        if (lo + i >= 0 && lo + i < BIG_WORDS * 64 && big_bit(a, lo + i))
            out[i / 64] |= (uint64_t)1 << (i % 64);
}

static int pow5bits(int e) { return (int)(((uint32_t)e * 1217359u) >> 19) + 1; }
static uint32_t log10_pow2(int e) { return ((uint32_t)e * 78913u) >> 18; }
static uint32_t log10_pow5(int e) { return ((uint32_t)e * 732923u) >> 20; }

static void make_tables(void)
{
    big p5;
    memset(&p5, 0, sizeof p5);
    p5.w[0] = 1;
    for (int i = 0; i < POW5_INV_TABLE; i++) {
        int len = big_bits(&p5); /* == pow5bits(i) */
        if (i < POW5_TABLE) /* 5^i scaled to exactly POW5_BITS bits (truncated) */
            big_window(&p5, len - POW5_BITS, pow5_split[i]);
        /* floor(2^(len - 1 + POW5_BITS) / 5^i) + 1, by binary long division */
        int k = len - 1 + POW5_BITS;
        big rem, quo;
        memset(&rem, 0, sizeof rem);
        memset(&quo, 0, sizeof quo);
        for (int b = k; b >= 0; b--) {
            big_shl1(&rem);
            if (b == k)
                rem.w[0] |= 1;
            if (big_cmp(&rem, &p5) >= 0) {
                big_sub(&rem, &p5);
                big_set_bit(&quo, b);
            }
        }
        big_window(&quo, 0, pow5_inv_split[i]);
        if (++pow5_inv_split[i][0] == 0)
            pow5_inv_split[i][1]++;
        big_mul_small(&p5, 5);
    }
}

/* ---- Ryū ---- */

static uint64_t mul_shift(uint64_t m, const uint64_t mul[2], int j)
{
    u128 b0 = (u128)m * mul[0], b2 = (u128)m * mul[1];
    return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
}

static int pow5_factor(uint64_t v)
{
    int n = 0;
    while (v && v % 5 == 0) {
        v /= 5;
        n++;
    }
    return n;
}

/* The shortest decimal digits * 10^exp that reads back to the finite, nonzero double
 * with the given mantissa and biased exponent. */
static void ryu(uint64_t mant, uint32_t bexp, uint64_t *digits, int *exp10)
{
    int e2;
    uint64_t m2;
    if (bexp == 0) {
        e2 = 1 - 1023 - 52 - 2;
        m2 = mant;
    } else {
        e2 = (int)bexp - 1023 - 52 - 2;
        m2 = (uint64_t)1 << 52 | mant;
    }
    int accept = (m2 & 1) == 0;
    uint64_t mv = 4 * m2;
    uint32_t mm_shift = mant != 0 || bexp <= 1;
    uint64_t vr, vp, vm;
    int e10;
    int vm_zeros = 0, vr_zeros = 0;
    if (e2 >= 0) {
        uint32_t q = log10_pow2(e2) - (e2 > 3);
        e10 = (int)q;
        int k = POW5_BITS + pow5bits((int)q) - 1;
        int i = -e2 + (int)q + k;
        vr = mul_shift(4 * m2, pow5_inv_split[q], i);
        vp = mul_shift(4 * m2 + 2, pow5_inv_split[q], i);
        vm = mul_shift(4 * m2 - 1 - mm_shift, pow5_inv_split[q], i);
        if (q <= 21) {
            if (mv % 5 == 0)
                vr_zeros = pow5_factor(mv) >= (int)q;
            else if (accept)
                vm_zeros = pow5_factor(mv - 1 - mm_shift) >= (int)q;
            else
                vp -= pow5_factor(mv + 2) >= (int)q;
        }
    } else {
        uint32_t q = log10_pow5(-e2) - (-e2 > 1);
        e10 = (int)q + e2;
        int i = -e2 - (int)q;
        int k = pow5bits(i) - POW5_BITS;
        int j = (int)q - k;
        vr = mul_shift(4 * m2, pow5_split[i], j);
        vp = mul_shift(4 * m2 + 2, pow5_split[i], j);
        vm = mul_shift(4 * m2 - 1 - mm_shift, pow5_split[i], j);
        if (q <= 1) {
            vr_zeros = 1;
            if (accept)
                vm_zeros = mm_shift == 1;
            else
                vp--;
        } else if (q < 63) {
            vr_zeros = (mv & (((uint64_t)1 << q) - 1)) == 0;
        }
    }
    int removed = 0;
    unsigned last = 0;
    uint64_t out;
    if (vm_zeros || vr_zeros) {
        while (vp / 10 > vm / 10) {
            vm_zeros &= vm % 10 == 0;
            vr_zeros &= last == 0;
            last = (unsigned)(vr % 10);
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
        if (vm_zeros)
            while (vm % 10 == 0) {
                vr_zeros &= last == 0;
                last = (unsigned)(vr % 10);
                vr /= 10;
                vp /= 10;
                vm /= 10;
                removed++;
            }
        if (vr_zeros && last == 5 && vr % 2 == 0)
            last = 4; /* exactly ...5: round to even */
        out = vr + ((vr == vm && (!accept || !vm_zeros)) || last >= 5);
    } else {
        int up = 0;
        if (vp / 100 > vm / 100) { /* two digits at a time first (most doubles) */
            up = vr % 100 >= 50;
            vr /= 100;
            vp /= 100;
            vm /= 100;
            removed += 2;
        }
        while (vp / 10 > vm / 10) {
            up = vr % 10 >= 5;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
        out = vr + (vr == vm || up);
    }
    *digits = out;
    *exp10 = e10 + removed;
}

static int decimal_length(uint64_t v)
{
    static const uint64_t pow10[] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull,
                                     1000000ull, 10000000ull, 100000000ull, 1000000000ull,
                                     10000000000ull, 100000000000ull, 1000000000000ull,
                                     10000000000000ull, 100000000000000ull,
                                     1000000000000000ull, 10000000000000000ull,
                                     100000000000000000ull, 1000000000000000000ull};
    int n = 1;
    while (n < 19 && v >= pow10[n])
        n++;
    return n;
}

static const char two_digits[201] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
    "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/* The nd digits of v (< 10^8 here) into dig, two at a time in 32-bit arithmetic. */
static void put_digits32(uint32_t v, int nd, char *dig)
{
    int i = nd;
    while (v >= 100) {
        uint32_t q = v / 100, r = v - q * 100;
        i -= 2;
        memcpy(dig + i, two_digits + 2 * r, 2);
        v = q;
    }
    if (v >= 10)
        memcpy(dig + i - 2, two_digits + 2 * v, 2);
    else if (i > 0)
        dig[i - 1] = (char)('0' + v);
}

/* The nd digits of v into dig, eight at a time from the right in 32-bit arithmetic. */
static void put_digits(uint64_t v, int nd, char *dig)
{
    while (nd > 8) {
        uint64_t q = v / 100000000;
        memset(dig + nd - 8, '0', 8);
        put_digits32((uint32_t)(v - q * 100000000), 8, dig + nd - 8);
        v = q;
        nd -= 8;
    }
    put_digits32((uint32_t)v, nd, dig);
}

size_t rl_shortest_f64(double v, char *buf)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    int neg = (int)(bits >> 63);
    uint64_t mant = bits & (((uint64_t)1 << 52) - 1);
    uint32_t bexp = (uint32_t)(bits >> 52) & 0x7ff;
    char *p = buf;
    if (neg)
        *p++ = '-';
    if (bexp == 0 && mant == 0) {
        *p++ = '0';
        *p = '\0';
        return (size_t)(p - buf);
    }
    pthread_once(&tables_once, make_tables);
    uint64_t d;
    int e;
    ryu(mant, bexp, &d, &e);
    char dig[24];
    int nd = decimal_length(d);
    put_digits(d, nd, dig);
    int x = e + nd - 1; /* decimal exponent of the first digit */
    int prec = bexp == 0 ? nd : nd > 15 ? nd : 15; /* the %.Pg that gives these digits */
    if (x < -4 || x >= prec) {
        *p++ = dig[0];
        if (nd > 1) {
            *p++ = '.';
            memcpy(p, dig + 1, (size_t)nd - 1);
            p += nd - 1;
        }
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        if (ax >= 100)
            *p++ = (char)('0' + ax / 100);
        *p++ = (char)('0' + ax / 10 % 10);
        *p++ = (char)('0' + ax % 10);
    } else if (x >= 0) {
        for (int i = 0; i <= x || i < nd; i++) {
            if (i == x + 1)
                *p++ = '.';
            *p++ = i < nd ? dig[i] : '0';
        }
    } else {
        *p++ = '0';
        *p++ = '.';
        for (int i = -1; i > x; i--)
            *p++ = '0';
        memcpy(p, dig, (size_t)nd);
        p += nd;
    }
    *p = '\0';
    return (size_t)(p - buf);
}
