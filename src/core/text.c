/* Small text utilities shared inside the library: a growable byte buffer (the one every
 * writer of generated text uses), strict UTF-8 decoding, and array growth that checks the
 * size arithmetic before it allocates. */
#include "core/text.h"

#include "runlab/error.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t rl_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t need;
    uint32_t v;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
        v = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        v = c & 0x0Fu;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        v = c & 0x07u;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else {
        return 0; /* continuation byte, C0/C1 overlong lead, or F5..FF */
    }
    if (len < need)
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    v = (v << 6) | (s[1] & 0x3Fu);
    for (size_t i = 2; i < need; i++) {
        if ((s[i] & 0xC0u) != 0x80u)
            return 0;
        v = (v << 6) | (s[i] & 0x3Fu);
    }
    *cp = v;
    return need;
}

void rl_buf_put_utf8(rl_buf *out, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    rl_buf_put(out, u, n);
}

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
        b->err = rl_error_set(RL_ENOMEM, "out of memory growing a buffer to %zu bytes", cap);
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

void rl_buf_free(rl_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void rl_buf_putc(rl_buf *b, char c)
{
    rl_buf_put(b, &c, 1);
}

char *rl_buf_take(rl_buf *b, size_t *len)
{
    if (b->err) {
        rl_buf_free(b);
        return NULL;
    }
    if (!b->data && !buf_reserve(b, 0))
        return NULL;
    char *out = b->data;
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return out;
}

int rl_grow_array(void **arr, size_t *cap, size_t need, size_t elem, const char *what)
{
    if (need <= *cap)
        return RL_OK;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return rl_error_set(RL_ERANGE, "%s: %zu elements are too many", what, need);
        ncap *= 2;
    }
    if (elem && ncap > SIZE_MAX / elem)
        return rl_error_set(RL_ERANGE, "%s: %zu elements of %zu bytes are too many", what, ncap,
                            elem);
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return rl_error_set(RL_ENOMEM, "%s: out of memory for %zu elements", what, ncap);
    *arr = p;
    *cap = ncap;
    return RL_OK;
}
