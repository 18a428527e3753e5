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

static bool buf_reserve(rl_buf *b, size_t extra)
{
    if (b->err)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->err = RL_ENOMEM;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void rl_buf_put(rl_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void rl_buf_puts(rl_buf *b, const char *s)
{
    rl_buf_put(b, s, strlen(s));
}

void rl_buf_printf(rl_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->err = RL_ERR;
        return;
    }
    if ((size_t)n < sizeof small) {
        rl_buf_put(b, small, (size_t)n);
        return;
    }
    if (!buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not valid (overlong
 * forms, surrogates and code points above U+10FFFF are invalid too). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

void rl_buf_put_escaped(rl_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
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
            size_t n = utf8_len(p);
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

void rl_buf_free(rl_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
