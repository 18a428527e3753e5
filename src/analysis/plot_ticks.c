/* Tick positions and tick labels: 1-2-5 steps for linear axes, decades (thinned or filled
 * with 2 and 5) for log axes, and labels with SI prefixes for very large or small values.
 * Pure functions, so the choices are unit-tested directly. */
#include "runlab/plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int ticks_for_step(double lo, double hi, double step, double *ticks, int cap)
{
    double k0 = ceil(lo / step - 1e-9), k1 = floor(hi / step + 1e-9);
    int n = 0;
    for (double k = k0; k <= k1 && n < 1000; k++, n++) {
        if (n < cap) {
            /* k * step, not repeated addition, so 0.6 stays 0.6 and not 0.6000000001. */
            double v = k * step;
            if (fabs(v) < step * 1e-9)
                v = 0;
            ticks[n] = v;
        }
    }
    return n;
}

int rl_plot_ticks_linear(double lo, double hi, int max_ticks, double *ticks, int cap, double *step)
{
    if (!isfinite(lo) || !isfinite(hi) || lo > hi || cap < 1)
        return 0;
    if (max_ticks < 2)
        max_ticks = 2;
    if (lo == hi) {
        ticks[0] = lo;
        if (step)
            *step = lo != 0 ? pow(10, floor(log10(fabs(lo)))) : 1;
        return 1;
    }
    double span = hi - lo;
    double e = floor(log10(span / max_ticks));
    static const double mult[] = {1, 2, 5};
    for (int d = 0; d < 40; d++) {
        for (int i = 0; i < 3; i++) {
            double s = mult[i] * pow(10, e + d - 1);
            double k0 = ceil(lo / s - 1e-9), k1 = floor(hi / s + 1e-9);
            if (k1 - k0 + 1 <= max_ticks) {
                if (step)
                    *step = s;
                return ticks_for_step(lo, hi, s, ticks, cap);
            }
        }
    }
    return 0;
}

int rl_plot_ticks_log(double lo, double hi, int max_ticks, double *ticks, int cap)
{
    if (!(lo > 0) || !isfinite(lo) || !isfinite(hi) || hi < lo || cap < 1)
        return 0;
    if (max_ticks < 2)
        max_ticks = 2;
    double d0 = ceil(log10(lo) - 1e-9), d1 = floor(log10(hi) + 1e-9);
    int n = 0;
    if (d1 - d0 < 2) {
        /* Less than two decades: 1, 2, 5 in each decade, then thinned to 1 and 5 or 1. */
        static const double sets[3][3] = {{1, 2, 5}, {1, 5, 0}, {1, 0, 0}};
        static const int set_n[3] = {3, 2, 1};
        for (int s = 0; s < 3; s++) {
            n = 0;
            for (double d = floor(log10(lo)); d <= d1; d++)
                for (int i = 0; i < set_n[s]; i++) {
                    double v = sets[s][i] * pow(10, d);
                    if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) {
                        if (n < cap)
                            ticks[n] = v;
                        n++;
                    }
                }
            if (n <= max_ticks && n >= 2)
                return n < cap ? n : cap;
        }
        if (n >= 1)
            return n < cap ? n : cap;
    }
    double every = 1;
    while ((floor(d1 / every) - ceil(d0 / every) + 1) > max_ticks)
        every++;
    for (double d = ceil(d0 / every) * every; d <= d1; d += every) {
        if (n < cap)
            ticks[n] = pow(10, d);
        n++;
    }
    if (n == 0) {
        /* Inside one decade without a power of ten: fall back to nice linear ticks. */
        double st;
        return rl_plot_ticks_linear(lo, hi, max_ticks, ticks, cap, &st);
    }
    return n < cap ? n : cap;
}

/* Decimals needed to write multiples of `step` exactly (0.2 -> 1, 0.25 -> 2, 5 -> 0). */
static int decimals_for(double step)
{
    for (int d = 0; d < 9; d++) {
        double s = step * pow(10, d);
        if (fabs(s - round(s)) < 1e-6 * fmax(1, s))
            return d;
    }
    return 9;
}

static size_t put_minus(char *buf, size_t cap, const char *digits)
{
    /* "−" (U+2212) is the typographic minus; a hyphen looks too short next to digits. */
    if (digits[0] == '-')
        return (size_t)snprintf(buf, cap, "\xE2\x88\x92%s", digits + 1);
    return (size_t)snprintf(buf, cap, "%s", digits);
}

size_t rl_plot_format_tick(double v, double step, char *buf, size_t cap)
{
    if (cap == 0)
        return 0;
    if (!isfinite(v)) {
        size_t n = (size_t)snprintf(buf, cap, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return n < cap ? n : cap - 1;
    }
    if (!(step > 0) || !isfinite(step))
        step = fabs(v) > 0 ? fabs(v) : 1;
    char tmp[64];
    double a = fabs(v);
    size_t n;
    if (v == 0) {
        /* Zero takes the axis's decimals ("0.0" beside "0.2"), except on SI axes. */
        int dec = step >= 1e-2 && step < 1e4 ? decimals_for(step) : 0;
        n = (size_t)snprintf(buf, cap, "%.*f", dec, 0.0);
    } else if (a >= 1e4 || a < 1e-2) {
        static const struct {
            double scale;
            const char *prefix;
        } si[] = {{1e15, "P"}, {1e12, "T"},        {1e9, "G"},  {1e6, "M"},   {1e3, "k"},  {1, ""},
                  {1e-3, "m"}, {1e-6, "\xC2\xB5"}, {1e-9, "n"}, {1e-12, "p"}, {1e-15, "f"}};
        size_t k = 0;
        while (k + 1 < sizeof si / sizeof si[0] && a < si[k].scale * (1 - 1e-9))
            k++;
        double scaled = v / si[k].scale;
        /* Enough decimals for the step at this prefix, trailing zeros trimmed. */
        int dec = decimals_for(step / si[k].scale);
        if (dec > 6)
            dec = 6;
        int len = snprintf(tmp, sizeof tmp, "%.*f", dec, scaled);
        if (dec > 0) {
            while (len > 0 && tmp[len - 1] == '0')
                tmp[--len] = '\0';
            if (len > 0 && tmp[len - 1] == '.')
                tmp[--len] = '\0';
        }
        char digits[80];
        snprintf(digits, sizeof digits, "%s%s", tmp, si[k].prefix);
        n = put_minus(buf, cap, digits);
    } else {
        int dec = decimals_for(step);
        snprintf(tmp, sizeof tmp, "%.*f", dec, v);
        if (strspn(tmp, "-0.") == strlen(tmp)) /* "-0.0" */
            snprintf(tmp, sizeof tmp, "%.*f", dec, 0.0);
        n = put_minus(buf, cap, tmp);
    }
    return n < cap ? n : cap - 1;
}

size_t rl_plot_format_pow10(double v, char *buf, size_t cap)
{
    static const char *const sup[10] = {
        "\xE2\x81\xB0", "\xC2\xB9",     "\xC2\xB2",     "\xC2\xB3",     "\xE2\x81\xB4",
        "\xE2\x81\xB5", "\xE2\x81\xB6", "\xE2\x81\xB7", "\xE2\x81\xB8", "\xE2\x81\xB9"};
    if (cap == 0)
        return 0;
    if (!(v > 0) || !isfinite(v))
        return rl_plot_format_tick(v, 1, buf, cap);
    int e = (int)lround(log10(v));
    char tmp[64] = "10";
    size_t n = 2;
    if (e < 0) {
        memcpy(tmp + n, "\xE2\x81\xBB", 3); /* superscript minus */
        n += 3;
        e = -e;
    }
    char digits[16];
    int nd = snprintf(digits, sizeof digits, "%d", e);
    for (int i = 0; i < nd; i++) {
        size_t l = strlen(sup[digits[i] - '0']);
        memcpy(tmp + n, sup[digits[i] - '0'], l);
        n += l;
    }
    tmp[n] = '\0';
    size_t w = (size_t)snprintf(buf, cap, "%s", tmp);
    return w < cap ? w : cap - 1;
}
