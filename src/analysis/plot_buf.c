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

void rl_buf_put_num(rl_buf *b, double v)
{
    if (!isfinite(v))
        v = 0;
    char tmp[48];
    int n = snprintf(tmp, sizeof tmp, "%.2f", v);
    if (n <= 0)
        return;
    while (n > 0 && tmp[n - 1] == '0')
        n--;
    if (n > 0 && tmp[n - 1] == '.')
        n--;
    if (n == 2 && tmp[0] == '-' && tmp[1] == '0')
        tmp[0] = '0', n = 1;
    rl_buf_put(b, tmp, (size_t)n);
}

