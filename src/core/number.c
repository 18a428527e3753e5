/* Locale-independent number text behind runlab/number.h: the shortest round-trip decimal
 * form of a double, shared by the CSV, JSON and YAML writers so a value is spelled the
 * same in every file, and strtod pinned to the C locale. */
#include "runlab/number.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
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

static bool same_bits(double a, double b)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

size_t rl_format_f64(double v, char *buf, size_t cap)
{
    char tmp[40];
    int n;
    if (isnan(v)) {
        n = snprintf(tmp, sizeof tmp, "nan");
    } else if (isinf(v)) {
        n = snprintf(tmp, sizeof tmp, v < 0 ? "-inf" : "inf");
    } else {
        /* Any decimal of up to DBL_DIG (15) digits survives a trip through a normal double,
         * so when %.15g reads back it is already the shortest form; 16 and 17 pick the
         * nearest decimal of that length, which reads back whenever any does. Subnormals
         * have fewer bits, so every length is tried from 1. */
        int p = fpclassify(v) == FP_SUBNORMAL ? 1 : 15;
        /* snprintf follows the thread's locale: switch this thread to "C" meanwhile. */
        locale_t loc = c_locale();
        locale_t old = loc != (locale_t)0 ? uselocale(loc) : (locale_t)0;
        for (;; p++) {
            n = snprintf(tmp, sizeof tmp, "%.*g", p, v);
            if (p >= 17 || same_bits(rl_parse_f64(tmp, NULL), v))
                break;
        }
        if (old != (locale_t)0)
            uselocale(old);
    }
    if (cap > 0) {
        size_t k = (size_t)n < cap ? (size_t)n : cap - 1;
        memcpy(buf, tmp, k);
        buf[k] = '\0';
    }
    return (size_t)n;
}
