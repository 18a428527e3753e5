/* Resolution of plain YAML scalars under the YAML 1.2 core schema (null, booleans,
 * integers in three bases, floats, .inf and .nan): used by the reader (yaml.c) to type
 * what it reads and by the emitter (yaml_write.c) to decide what needs quotes. */
#include "yaml_internal.h"

#include "runlab/number.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool rl_yaml_eq(const char *s, size_t n, const char *lit)
{
    return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

static bool all_in(const char *s, size_t n, const char *set)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\0' || !strchr(set, s[i]))
            return false;
    return true;
}

/* Accumulates digits of `base` into a uint64; false on overflow. */
static bool parse_unsigned(const char *s, size_t n, unsigned base, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = (unsigned char)s[i];
        unsigned d = c <= '9' ? c - '0' : (c | 0x20u) - 'a' + 10;
        if (v > (UINT64_MAX - d) / base)
            return false;
        v = v * base + d;
    }
    *out = v;
    return true;
}

static bool is_float_syntax(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    size_t int_digits = 0, frac_digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++, int_digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, frac_digits++;
    }
    if (int_digits == 0 && frac_digits == 0)
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t exp_digits = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, exp_digits++;
        if (exp_digits == 0)
            return false;
    }
    return i == n;
}

/* Types a plain scalar. SK_RANGE marks a number that does not fit (an error when read,
 * and a reason to quote when written). */
void rl_yaml_resolve_plain(const char *s, size_t n, struct scalar *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0 || rl_yaml_eq(s, n, "~") || rl_yaml_eq(s, n, "null") || rl_yaml_eq(s, n, "Null") || rl_yaml_eq(s, n, "NULL")) {
        out->kind = SK_NULL;
        return;
    }
    if (rl_yaml_eq(s, n, "true") || rl_yaml_eq(s, n, "True") || rl_yaml_eq(s, n, "TRUE")) {
        out->kind = SK_BOOL;
        out->b = true;
        return;
    }
    if (rl_yaml_eq(s, n, "false") || rl_yaml_eq(s, n, "False") || rl_yaml_eq(s, n, "FALSE")) {
        out->kind = SK_BOOL;
        return;
    }
    /* Integers: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+ */
    uint64_t u;
    bool neg = false, is_int = false, fits = false;
    if (n > 2 && s[0] == '0' && s[1] == 'o' && all_in(s + 2, n - 2, "01234567")) {
        is_int = true;
        fits = parse_unsigned(s + 2, n - 2, 8, &u);
    } else if (n > 2 && s[0] == '0' && s[1] == 'x' &&
               all_in(s + 2, n - 2, "0123456789abcdefABCDEF")) {
        is_int = true;
        fits = parse_unsigned(s + 2, n - 2, 16, &u);
    } else {
        size_t k = s[0] == '-' || s[0] == '+' ? 1 : 0;
        if (all_in(s + k, n - k, "0123456789")) {
            is_int = true;
            neg = s[0] == '-';
            fits = parse_unsigned(s + k, n - k, 10, &u);
        }
    }
    if (is_int) {
        if (!fits) {
            out->kind = SK_RANGE;
        } else if (neg) {
            if (u > (uint64_t)INT64_MAX + 1) {
                out->kind = SK_RANGE;
            } else {
                out->kind = SK_INT;
                out->i = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
            }
        } else if (u <= (uint64_t)INT64_MAX) {
            out->kind = SK_INT;
            out->i = (int64_t)u;
        } else {
            out->kind = SK_UINT;
            out->u = u;
        }
        return;
    }
    if (rl_yaml_eq(s, n, ".inf") || rl_yaml_eq(s, n, ".Inf") || rl_yaml_eq(s, n, ".INF") || rl_yaml_eq(s, n, "+.inf") ||
        rl_yaml_eq(s, n, "+.Inf") || rl_yaml_eq(s, n, "+.INF")) {
        out->kind = SK_FLOAT;
        out->d = INFINITY;
        return;
    }
    if (rl_yaml_eq(s, n, "-.inf") || rl_yaml_eq(s, n, "-.Inf") || rl_yaml_eq(s, n, "-.INF")) {
        out->kind = SK_FLOAT;
        out->d = -INFINITY;
        return;
    }
    if (rl_yaml_eq(s, n, ".nan") || rl_yaml_eq(s, n, ".NaN") || rl_yaml_eq(s, n, ".NAN")) {
        out->kind = SK_FLOAT;
        out->d = NAN;
        return;
    }
    if (is_float_syntax(s, n)) {
        char small[64];
        char *buf = n < sizeof small ? small : malloc(n + 1);
        if (!buf) {
            out->kind = SK_RANGE; /* reported as out of range; only under memory failure */
            return;
        }
        memcpy(buf, s, n);
        buf[n] = '\0';
        out->d = rl_parse_f64(buf, NULL);
        if (buf != small)
            free(buf);
        out->kind = isinf(out->d) ? SK_RANGE : SK_FLOAT;
        return;
    }
    out->kind = SK_STRING;
}
