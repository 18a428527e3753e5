/* The CDR decoder's innermost steps that are not inline (cdr_prim.h): the error at the
 * decoder's position, one primitive, and the field path. The tree walker (cdr.c), the plan
 * (cdr_plan.c) and the wstring reader build on them. */
#include "cdr_prim.h"

#include "runlab/error.h"

#include <stdio.h>
#include <string.h>

int cdr_fail(cdr_dec *d, int code, const char *what)
{
    return rl_error_set(code, "field '%s': byte offset %zu: %s", d->plen ? d->path : "(root)",
                        d->pos, what);
}

int cdr_fail_need(cdr_dec *d, size_t n)
{
    char msg[96];
    snprintf(msg, sizeof msg, "needs %zu bytes, %zu left", n, d->end - d->pos);
    return cdr_fail(d, RL_ETRUNCATED, msg);
}

int cdr_read_prim(cdr_dec *d, rl_msg_kind k, rl_msg_value *out)
{
    size_t n = msgdef_prim_size(k);
    if (!n)
        return cdr_fail(d, RL_EINVAL, "not a primitive type");
    int rc = cdr_align(d, n);
    if (rc < 0 || (rc = cdr_need(d, n)) < 0)
        return rc;
    cdr_load_prim(d, k, d->buf + d->pos, out);
    d->pos += n;
    return RL_OK;
}

size_t cdr_push_name(cdr_dec *d, const char *name)
{
    size_t saved = d->plen;
    size_t n = strlen(name);
    size_t dot = d->plen ? 1 : 0;
    if (d->plen + dot + n < sizeof d->path) {
        if (dot)
            d->path[d->plen] = '.';
        memcpy(d->path + d->plen + dot, name, n + 1);
        d->plen += dot + n;
    }
    return saved;
}

size_t cdr_push_index(cdr_dec *d, size_t i)
{
    size_t saved = d->plen;
    char digits[24];
    size_t n = 0;
    do { /* no snprintf: this runs for every array element */
        digits[n++] = (char)('0' + i % 10);
        i /= 10;
    } while (i);
    if (d->plen + n + 3 > sizeof d->path)
        return saved;
    char *p = d->path + d->plen;
    *p++ = '[';
    while (n)
        *p++ = digits[--n];
    *p++ = ']';
    *p = '\0';
    d->plen = (size_t)(p - d->path);
    return saved;
}
