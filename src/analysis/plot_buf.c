/* The growable byte buffer behind the SVG writer and the HTML report writer, with the XML
 * escaping both need (one escaper, so HTML and SVG agree on what is safe) and compact
 * number formatting for coordinates. */
#include "analysis/plot_internal.h"

#include "runlab/error.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void rl_buf_put_escaped(rl_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *end = p + strlen(s);
    while (*p) {
        const unsigned char *run = p;
        while (*p && *p >= 0x20 && *p < 0x7F && *p != '&' && *p != '<' && *p != '>' && *p != '"' &&
               *p != '\'')
            p++;
        rl_buf_put(b, (const char *)run, (size_t)(p - run));
        if (!*p)
            break;
        switch (*p) {
        case '&':
            rl_buf_puts(b, "&amp;");
            p++;
            continue;
        case '<':
            rl_buf_puts(b, "&lt;");
            p++;
            continue;
        case '>':
            rl_buf_puts(b, "&gt;");
            p++;
            continue;
        case '"':
            rl_buf_puts(b, "&quot;");
            p++;
            continue;
        case '\'':
            rl_buf_puts(b, "&#39;");
            p++;
            continue;
        default: break;
        }
        if (*p == '\t' || *p == '\n') {
            rl_buf_put(b, (const char *)p, 1);
            p++;
        } else if (*p < 0x20 || *p == 0x7F) {
            /* XML 1.0 cannot carry most control characters even as references. */
            rl_buf_puts(b, "\xEF\xBF\xBD");
            p++;
        } else {
            uint32_t cp;
            size_t n = rl_utf8_decode(p, (size_t)(end - p), &cp);
            if (n == 0) {
                rl_buf_puts(b, "\xEF\xBF\xBD");
                p++;
            } else {
                rl_buf_put(b, (const char *)p, n);
                p += n;
            }
        }
    }
}

/* "%.2f" of v with trailing zeros (and a bare point) trimmed, "-0" as "0": the slow way,
 * for the cases the fast one cannot decide. */
static void put_num_printf(rl_buf *b, double v)
{
    char tmp[330]; /* "-", DBL_MAX's 309 digits, ".00" */
    int n = snprintf(tmp, sizeof tmp, "%.2f", v);
    if (n <= 0 || (size_t)n >= sizeof tmp)
        return;
    while (n > 0 && tmp[n - 1] == '0')
        n--;
    if (n > 0 && tmp[n - 1] == '.')
        n--;
    if (n == 2 && tmp[0] == '-' && tmp[1] == '0')
        tmp[0] = '0', n = 1;
    rl_buf_put(b, tmp, (size_t)n);
}

void rl_buf_put_num(rl_buf *b, double v)
{
    if (!isfinite(v))
        v = 0;
    /* An SVG holds hundreds of thousands of coordinates, and snprintf's exact decimal
     * conversion is most of the cost of writing them. Below 2^31 hundredths, v * 100 is
     * within 2.5e-7 of its exact value, so unless that lies within 1e-6 of a half, rounding
     * it to the nearest integer is what "%.2f" does; near a half (and for larger values)
     * snprintf decides. */
    double x = fabs(v) * 100;
    if (!(x < 2147483648.0)) {
        put_num_printf(b, v);
        return;
    }
    double whole = floor(x), frac = x - whole;
    if (fabs(frac - 0.5) < 1e-6) {
        put_num_printf(b, v);
        return;
    }
    unsigned long h = (unsigned long)whole + (frac > 0.5); /* hundredths */
    char tmp[24], *p = tmp + sizeof tmp;
    unsigned long ip = h / 100, fp = h % 100;
    if (fp) {
        if (fp % 10)
            *--p = (char)('0' + fp % 10);
        *--p = (char)('0' + fp / 10);
        *--p = '.';
    }
    do {
        *--p = (char)('0' + ip % 10);
        ip /= 10;
    } while (ip);
    if (v < 0 && h)
        *--p = '-';
    rl_buf_put(b, p, (size_t)(tmp + sizeof tmp - p));
}
