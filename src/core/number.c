/* Locale-independent number text behind runlab/number.h: the shortest round-trip decimal
 * form of a double (Ryū, number_ryu.c), shared by the CSV, JSON and YAML writers and the
 * message JSON so a value is spelled the same in every file, and strtod pinned to the C
 * locale. */
#include "runlab/number.h"

#include "core/text.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
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
