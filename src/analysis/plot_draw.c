/* Layout and drawing of figures: axis ranges, tick choice that measures its labels so
 * they never overlap, panel margins aligned across the grid, per-pixel-column decimation
 * of long lines, legend placement in the emptiest corner (or outside), and the drawing of
 * every series kind. Everything goes through rl_rend, so PNG, SVG and PDF agree. */
#include "analysis/plot_internal.h"

#include "runlab/error.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sizes in points, close to matplotlib's defaults at 6.4 x 4.8 in. */
#define FS_TICK     9.0
#define FS_LABEL    10.0
#define FS_TITLE    11.0
#define FS_SUPTITLE 12.5
#define FS_LEGEND   9.0
#define FS_NOTE     8.0
#define TICK_LEN    3.5
#define PAD         4.0
#define MAX_TICKS   40
#define COORD_LIMIT 1e6

static const rl_rgba C_BLACK = {0, 0, 0, 1};
static const rl_rgba C_TEXT = {0.1, 0.1, 0.1, 1};
static const rl_rgba C_SPINE = {0.2, 0.2, 0.2, 1};
static const rl_rgba C_GRID = {0.88, 0.88, 0.88, 1};
static const rl_rgba C_NOTE = {0.35, 0.35, 0.35, 1};
static const rl_rgba C_WHITE = {1, 1, 1, 1};

static const double DASH_DASHED[] = {5.5, 2.5};
static const double DASH_DOTTED[] = {1.2, 2.2};
static const double DASH_DASHDOT[] = {6, 2.2, 1.2, 2.2};

static rl_rgba palette_rgba(int i, double a)
{
    unsigned c = rl_plot_palette(i);
    rl_rgba r = {((c >> 16) & 0xFF) / 255.0, ((c >> 8) & 0xFF) / 255.0, (c & 0xFF) / 255.0, a};
    return r;
}

static rl_rgba rgb_rgba(unsigned c, double a)
{
    rl_rgba r = {((c >> 16) & 0xFF) / 255.0, ((c >> 8) & 0xFF) / 255.0, (c & 0xFF) / 255.0, a};
    return r;
}

/* A series' own colour (its palette slot or the rgb it was given). */
static rl_rgba series_rgba(const rl_series *s, double a)
{
    return rgb_rgba(s->rgb, a);
}

static rl_pen series_pen(const rl_series *s, bool dashed)
{
    rl_pen p = {series_rgba(s, 1), s->opts.line_width > 0 ? s->opts.line_width : 1.5, NULL,
                0, true};
    if (s->opts.alpha > 0 && s->opts.alpha <= 1)
        p.color.a = s->opts.alpha;
    if (dashed) {
        switch (s->dash) {
        case 1:
            p.dash = DASH_DASHED;
            p.ndash = 2;
            break;
        case 2:
            p.dash = DASH_DOTTED;
            p.ndash = 2;
            break;
        case 3:
            p.dash = DASH_DASHDOT;
            p.ndash = 4;
            break;
        default: break;
        }
    }
    return p;
}

/* ---- Growable vector of points --------------------------------------------------------- */
typedef struct dvec {
    double *v;
    size_t n, cap; /* in points (pairs) */
    bool oom;
} dvec;

static void dv_push(dvec *d, double x, double y)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        double *p = realloc(d->v, cap * 2 * sizeof(double));
        if (!p) {
            d->oom = true;
            return;
        }
        d->v = p;
        d->cap = cap;
    }
    if (isnan(x))
        x = 0; /* never reached with finite limits; a NaN must not reach cairo */
    if (isnan(y))
        y = 0;
    if (x > COORD_LIMIT)
        x = COORD_LIMIT;
    if (x < -COORD_LIMIT)
        x = -COORD_LIMIT;
    if (y > COORD_LIMIT)
        y = COORD_LIMIT;
    if (y < -COORD_LIMIT)
        y = -COORD_LIMIT;
    d->v[2 * d->n] = x;
    d->v[2 * d->n + 1] = y;
    d->n++;
}

/* ---- Coordinate transforms ---------------------------------------------------------- */
typedef struct xform {
    double d0, d1; /* data limits (log10 of them on log axes) */
    double p0, p1; /* page coordinates of d0 and d1 */
    bool log;
} xform;

static double xf(const xform *t, double v)
{
    if (t->log)
        v = v > 0 ? log10(v) : -INFINITY;
    return t->p0 + (v - t->d0) / (t->d1 - t->d0) * (t->p1 - t->p0);
}

/* ---- Per-pixel-column decimation --------------------------------------------------------
 * Points arrive in page coordinates with x non-decreasing. Per column of one device pixel
 * the first, lowest, highest and last points are kept in their original order, which is
 * exactly what a rasteriser would draw; everything else in the column is invisible. */
typedef struct decim {
    dvec *out;
    double x0, colw;
    long col;
    bool open;
    double fx, fy, lx, ly, mnx, mny, mxx, mxy;
    size_t fi, li, mni, mxi, i;
    bool sorted;
} decim;

static void dec_flush(decim *d)
{
    if (!d->open)
        return;
    dv_push(d->out, d->fx, d->fy);
    /* Screen y grows downward, but order by index so the line's path is preserved. */
    if (d->mni < d->mxi) {
        if (d->mni != d->fi && d->mni != d->li)
            dv_push(d->out, d->mnx, d->mny);
        if (d->mxi != d->fi && d->mxi != d->li)
            dv_push(d->out, d->mxx, d->mxy);
    } else {
        if (d->mxi != d->fi && d->mxi != d->li)
            dv_push(d->out, d->mxx, d->mxy);
        if (d->mni != d->fi && d->mni != d->li && d->mni != d->mxi)
            dv_push(d->out, d->mnx, d->mny);
    }
    if (d->li != d->fi)
        dv_push(d->out, d->lx, d->ly);
    d->open = false;
}

static void dec_push(decim *d, double x, double y)
{
    size_t i = d->i++;
    if (!d->sorted) {
        /* Unordered x (a trajectory): drop points within a quarter pixel of the last. */
        if (d->open && fabs(x - d->lx) < d->colw * 0.25 && fabs(y - d->ly) < d->colw * 0.25)
            return;
        dv_push(d->out, x, y);
        d->open = true;
        d->lx = x;
        d->ly = y;
        return;
    }
    double c = floor((x - d->x0) / d->colw);
    if (!(c >= -1))
        c = -1; /* also NaN */
    if (c > 1e7)
        c = 1e7;
    long col = (long)c;
    if (!d->open || col != d->col) {
        dec_flush(d);
        d->open = true;
        d->col = col;
        d->fx = d->lx = d->mnx = d->mxx = x;
        d->fy = d->ly = d->mny = d->mxy = y;
        d->fi = d->li = d->mni = d->mxi = i;
        return;
    }
    d->lx = x;
    d->ly = y;
    d->li = i;
    if (y < d->mny) {
        d->mny = y;
        d->mnx = x;
        d->mni = i;
    }
    if (y > d->mxy) {
        d->mxy = y;
        d->mxx = x;
        d->mxi = i;
    }
}

static void dec_finish(decim *d)
{
    if (d->sorted)
        dec_flush(d);
    d->open = false;
}

/* ---- Layout -------------------------------------------------------------------------- */
typedef struct tickset {
    double v[MAX_TICKS];
    char label[MAX_TICKS][96];
    double w[MAX_TICKS];
    int n;
    double step;
    double minor[MAX_TICKS * 10];
    int nminor;
    double offset;         /* subtracted from every label (tiny span, large values) */
    char offset_label[48]; /* "+1.7G", drawn once at the end of the axis */
    bool rotate;           /* category labels at 45 degrees */
    int every;             /* category axis: label every k-th */
} tickset;

typedef struct legend_entry {
    const rl_series *s;
    bool band;
    char text[160]; /* the label, shortened to fit */
} legend_entry;

typedef struct panel {
    rl_axes *ax;
    double cx, cy, cw, ch;         /* cell */
    double ml, mr, mt, mb;         /* margins */
    double px, py, pw, ph;         /* plot area */
    double xlo, xhi, ylo, yhi;     /* view limits (data units) */
    double xlo0, xhi0, ylo0, yhi0; /* limits before an equal-aspect widening */
    bool xcat, ycat, empty;
    xform tx, ty;
    tickset xt, yt;
    legend_entry *leg;
    int nleg;
    double leg_w, leg_h, leg_x, leg_y;
    bool leg_outside, leg_inside;
} panel;

typedef struct ctx {
    rl_figure *fig;
    rl_rend *r;
    rl_measure *m;
    double W, H; /* page size, pt */
    double colw; /* one device pixel, pt */
    double cap_tick, cap_label, cap_title;
    panel *p;
    int np;
    size_t nonpos;
    bool oom;
} ctx;

static bool has_kind(const rl_axes *ax, rl_kind k)
{
    for (size_t i = 0; i < ax->nseries; i++)
        if (ax->series[i]->kind == k)
            return true;
    return false;
}

typedef struct range {
    double lo, hi;
    bool any, stick_lo, stick_hi;
} range;

static void rg_add(range *r, double v, bool log)
{
    if (!isfinite(v) || (log && !(v > 0)))
        return;
    if (!r->any || v < r->lo)
        r->lo = v;
    if (!r->any || v > r->hi)
        r->hi = v;
    r->any = true;
}

/* Values drawn on the value axis of bars: 0 and each bar's end (stacked: running sums). */
static void bar_value_range(const rl_axes *ax, range *r, bool log)
{
    for (size_t c = 0; c < ax->ncat; c++) {
        double pos = 0, neg = 0;
        for (size_t i = 0; i < ax->nseries; i++) {
            const rl_series *s = ax->series[i];
            if (s->kind != RL_K_BAR || c >= s->ncat || isnan(s->values[c]))
                continue;
            double v = s->values[c];
            if (ax->bar_mode == RL_BAR_STACKED) {
                if (v >= 0)
                    pos += v;
                else
                    neg += v;
                rg_add(r, v >= 0 ? pos : neg, log);
            } else {
                rg_add(r, v, log);
            }
        }
    }
    if (!log) {
        rg_add(r, 0, false);
        if (r->lo == 0)
            r->stick_lo = true;
        if (r->hi == 0)
            r->stick_hi = true;
    }
}

/* rg_add of every point of a line, step or scatter series on one axis (with its band on
 * y), in their order; kept in the series. */
static void points_range(range *r, rl_series *s, bool is_x, bool log)
{
    int a = is_x ? 0 : 1, l = log ? 1 : 0;
    if (!s->ext_known[a][l]) {
        range e = {0, 0, false, false, false};
        for (size_t k = 0; k < s->n; k++) {
            rg_add(&e, is_x ? s->x[k] : s->y[k], log);
            if (!is_x && s->lo) {
                rg_add(&e, s->lo[k], log);
                rg_add(&e, s->hi[k], log);
            }
        }
        s->ext_lo[a][l] = e.lo;
        s->ext_hi[a][l] = e.hi;
        s->ext_any[a][l] = e.any;
        s->ext_known[a][l] = true;
    }
    /* The first lowest and first highest, added in turn, leave `r` as every point would
     * (rg_add keeps the first of equal values). */
    if (s->ext_any[a][l]) {
        rg_add(r, s->ext_lo[a][l], log);
        rg_add(r, s->ext_hi[a][l], log);
    }
}

static range data_range(rl_axes *ax, bool is_x)
{
    range r = {0, 0, false, false, false};
    bool log = (is_x ? ax->xa.scale : ax->ya.scale) == RL_SCALE_LOG;
    bool bar_value_axis = has_kind(ax, RL_K_BAR) && (is_x == ax->bar_horizontal);
    if (bar_value_axis)
        bar_value_range(ax, &r, log);
    for (size_t i = 0; i < ax->nseries; i++) {
        rl_series *s = ax->series[i];
        switch (s->kind) {
        case RL_K_LINE:
        case RL_K_STEP:
        case RL_K_SCATTER:
            points_range(&r, s, is_x, log);
            break;
        case RL_K_ECDF:
            if (is_x) {
                if (s->n) {
                    rg_add(&r, s->x[0], log);
                    rg_add(&r, s->x[s->n - 1], log);
                }
            } else {
                rg_add(&r, log ? 1.0 / (double)(s->n ? s->n : 1) : 0, log);
                rg_add(&r, 1, log);
            }
            break;
        case RL_K_HIST:
            if (is_x) {
                rg_add(&r, s->edges[0], log);
                rg_add(&r, s->edges[s->nbins], log);
            } else {
                for (size_t k = 0; k < s->nbins; k++)
                    if (s->y[k] > 0)
                        rg_add(&r, s->y[k], log);
                if (!log) {
                    rg_add(&r, 0, false);
                    r.stick_lo = true;
                }
            }
            break;
        case RL_K_BOX:
            if (!is_x && s->box.n) {
                rg_add(&r, s->box.wlo, log);
                rg_add(&r, s->box.whi, log);
                for (size_t k = 0; k < s->box.noutliers; k++)
                    rg_add(&r, s->box.outliers[k], log);
                if (s->opts.notch) {
                    rg_add(&r, s->box.notch_lo, log);
                    rg_add(&r, s->box.notch_hi, log);
                }
            }
            break;
        case RL_K_BAR: break;
        }
    }
    return r;
}

/* Counts values a log axis cannot show, for the figure's note. */
static size_t count_nonpos(const rl_axes *ax)
{
    bool lx = ax->xa.scale == RL_SCALE_LOG, ly = ax->ya.scale == RL_SCALE_LOG;
    if (!lx && !ly)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < ax->nseries; i++) {
        const rl_series *s = ax->series[i];
        if (s->kind == RL_K_LINE || s->kind == RL_K_STEP || s->kind == RL_K_SCATTER ||
            s->kind == RL_K_ECDF) {
            for (size_t k = 0; k < s->n; k++)
                if (!isnan(s->x[k]) && ((lx && !(s->x[k] > 0)) || (ly && !(s->y[k] > 0))))
                    n++;
        } else if (s->kind == RL_K_BOX && ly) {
            /* Box statistics need the linear values; a box with non-positive parts is
             * drawn clipped, and its non-positive outliers counted. */
            for (size_t k = 0; k < s->box.noutliers; k++)
                if (!(s->box.outliers[k] > 0))
                    n++;
        }
    }
    return n;
}

static void finish_range(const rl_axis *a, range r, bool cat, double ncat, double *lo, double *hi)
{
    bool log = a->scale == RL_SCALE_LOG && !cat;
    if (cat) {
        r.lo = -0.5;
        r.hi = ncat - 0.5;
        if (ncat < 1)
            r.hi = 0.5;
        r.any = true;
        r.stick_lo = r.stick_hi = true;
    }
    if (!r.any) {
        r.lo = log ? 1 : 0;
        r.hi = log ? 10 : 1;
        r.stick_lo = r.stick_hi = true;
    }
    double l = log ? log10(r.lo) : r.lo, h = log ? log10(r.hi) : r.hi;
    /* A span too small to divide (all values equal, or equal but for the last bits, or
     * denormal) is treated as a single value. */
    double mag = fmax(fabs(l), fabs(h));
    if (h - l <= mag * 1e-12 || h - l < 1e-290) {
        l = h = (l + h) / 2;
        if (fabs(l) < 1e-290)
            l = h = 0;
    }
    if (l == h) {
        double d = log ? 0.5 : (l != 0 ? fabs(l) * 0.1 : 1);
        l -= d;
        h += d;
    } else {
        double m = 0.05 * (h - l);
        if (!r.stick_lo)
            l -= m;
        if (!r.stick_hi)
            h += m;
    }
    if (log) {
        l = pow(10, l);
        h = pow(10, h);
    }
    if (!isnan(a->fixed_lo) && (!log || a->fixed_lo > 0))
        l = a->fixed_lo;
    if (!isnan(a->fixed_hi) && (!log || a->fixed_hi > 0))
        h = a->fixed_hi;
    if (!(l < h)) {
        /* A fixed end on the wrong side of the data: open up the other end. */
        if (!isnan(a->fixed_lo))
            h = log ? l * 10 : l + 1;
        else
            l = log ? h / 10 : h - 1;
    }
    *lo = l;
    *hi = h;
}

static void set_xforms(panel *P)
{
    bool lx = P->ax->xa.scale == RL_SCALE_LOG && !P->xcat;
    bool ly = P->ax->ya.scale == RL_SCALE_LOG && !P->ycat;
    P->tx =
        (xform){lx ? log10(P->xlo) : P->xlo, lx ? log10(P->xhi) : P->xhi, P->px, P->px + P->pw, lx};
    P->ty =
        (xform){ly ? log10(P->ylo) : P->ylo, ly ? log10(P->yhi) : P->yhi, P->py + P->ph, P->py, ly};
}

/* Shortens `label` in place to at most `maxw` points at `size`, ending it with "…"
 * (whole UTF-8 characters only), so one long name cannot squeeze the plot area away or
 * run off the page. Returns the width. */
static double fit_text(ctx *C, char *label, size_t cap, double size, bool bold, double maxw)
{
    double w = rl_measure_text(C->m, label, size, bold);
    if (w <= maxw)
        return w;
    size_t n = strlen(label);
    while (n > 0) {
        do
            n--;
        while (n > 0 && ((unsigned char)label[n] & 0xC0) == 0x80);
        if (n + 4 > cap)
            continue;
        memcpy(label + n, "\xE2\x80\xA6", 4);
        w = rl_measure_text(C->m, label, size, bold);
        if (w <= maxw)
            return w;
    }
    return rl_measure_text(C->m, label, size, bold);
}

static double fit_label(ctx *C, char *label, size_t cap, double maxw)
{
    return fit_text(C, label, cap, FS_TICK, false, maxw);
}

/* Ticks for one axis that fit `len` points: the densest 1-2-5 set whose labels keep a gap
 * of at least `gap` (x: label widths; y: label heights). */
static void choose_ticks(ctx *C, tickset *t, const rl_axis *a, bool cat, const rl_axes *ax,
                         double lo, double hi, double len, bool horizontal)
{
    memset(t, 0, sizeof *t);
    t->every = 1;
    if (cat) {
        int n = (int)ax->ncat;
        if (n > MAX_TICKS)
            t->every = (n + MAX_TICKS - 1) / MAX_TICKS;
        double slot = len / fabs(hi - lo);
        double maxw = 0, limit = C->W / C->fig->cols * 0.3;
        for (int i = 0; i < n && t->n < MAX_TICKS; i += t->every) {
            t->v[t->n] = i;
            snprintf(t->label[t->n], sizeof t->label[0], "%s", ax->categories[i]);
            t->w[t->n] = fit_label(C, t->label[t->n], sizeof t->label[0], limit);
            if (t->w[t->n] > maxw)
                maxw = t->w[t->n];
            t->n++;
        }
        if (horizontal && maxw + 4 > slot * t->every) {
            t->rotate = true;
            /* Rotated labels need a line height each; thin them if even that is too much. */
            while (FS_TICK * 1.3 > slot * t->every && t->every < n) {
                t->every++;
            }
            if (t->every > 1) {
                int k = 0;
                for (int i = 0; i < n && k < MAX_TICKS; i += t->every, k++) {
                    t->v[k] = i;
                    snprintf(t->label[k], sizeof t->label[0], "%s", ax->categories[i]);
                    t->w[k] = fit_label(C, t->label[k], sizeof t->label[0], limit);
                }
                t->n = k;
            }
        }
        return;
    }
    bool log = a->scale == RL_SCALE_LOG;
    /* A span tiny against the values (timestamps, 1e5 + 0.01 noise) would need long
     * labels that differ only in their last digits: label v - offset instead and show
     * the offset once, as matplotlib does. */
    double span = hi - lo, amax = fmax(fabs(lo), fabs(hi));
    if (!log && span > 0 && amax / span >= 1e4) {
        double unit = pow(10, ceil(log10(span)) + 1);
        t->offset = round((lo + hi) / 2 / unit) * unit;
        char num[40];
        rl_plot_format_tick(t->offset, unit, num, sizeof num);
        if (strncmp(num, "\xE2\x88\x92", 3) == 0)
            snprintf(t->offset_label, sizeof t->offset_label, "%s", num);
        else
            snprintf(t->offset_label, sizeof t->offset_label, "+%s", num);
    }
    /* About one tick per 50 pt along x and 30 pt along y, but never fewer than four
     * allowed (small panels) nor more than ten (busy axes); the overlap check below has
     * the last word. */
    double target = horizontal ? 50.0 : 30.0;
    int max_t = (int)(len / target) + 1;
    if (max_t < 4)
        max_t = 4;
    if (max_t > 10)
        max_t = 10;
    for (; max_t >= 2; max_t--) {
        double step = 0;
        int n = log ? rl_plot_ticks_log(lo, hi, max_t, t->v, MAX_TICKS)
                    : rl_plot_ticks_linear(lo, hi, max_t, t->v, MAX_TICKS, &step);
        if (n > MAX_TICKS)
            n = MAX_TICKS;
        t->n = n;
        t->step = step;
        /* Decades beyond 0.01 .. 10^4 read best as powers of ten; mixing "100µ" and
         * "0.01" on one axis does not. */
        bool pow10 = false;
        if (log && n >= 2 &&
            fabs(log10(t->v[1] / t->v[0]) - round(log10(t->v[1] / t->v[0]))) < 1e-6)
            for (int i = 0; i < n; i++)
                if (t->v[i] < 0.999e-2 || t->v[i] > 1.001e4)
                    pow10 = true;
        for (int i = 0; i < n; i++) {
            if (pow10) {
                rl_plot_format_pow10(t->v[i], t->label[i], sizeof t->label[0]);
                t->w[i] = rl_measure_text(C->m, t->label[i], FS_TICK, false);
                continue;
            }
            double st = step;
            if (log) {
                /* Each log label needs the precision of its own decade. */
                st = pow(10, floor(log10(t->v[i]) + 1e-9));
            }
            double lv = t->v[i] - t->offset;
            if (fabs(lv) < st * 1e-9)
                lv = 0;
            rl_plot_format_tick(lv, st, t->label[i], sizeof t->label[0]);
            t->w[i] = rl_measure_text(C->m, t->label[i], FS_TICK, false);
        }
        /* Overlap check in page units. */
        bool ok = true;
        for (int i = 1; i < n && ok; i++) {
            double p0, p1;
            if (log) {
                p0 = (log10(t->v[i - 1]) - log10(lo)) / (log10(hi) - log10(lo)) * len;
                p1 = (log10(t->v[i]) - log10(lo)) / (log10(hi) - log10(lo)) * len;
            } else {
                p0 = (t->v[i - 1] - lo) / (hi - lo) * len;
                p1 = (t->v[i] - lo) / (hi - lo) * len;
            }
            double need = horizontal ? (t->w[i - 1] + t->w[i]) / 2 + FS_TICK * 0.9 : FS_TICK * 1.8;
            if (p1 - p0 < need)
                ok = false;
        }
        if (ok)
            break;
    }
    if (log) {
        /* Minor ticks at 2..9 x 10^k when the decades are not thinned. */
        double d0 = floor(log10(lo)), d1 = ceil(log10(hi));
        bool decades_only = t->n >= 2 && fabs(log10(t->v[1] / t->v[0]) - 1) < 1e-6;
        if ((decades_only || t->n < 2) && d1 - d0 < 30)
            for (double d = d0; d <= d1; d++)
                for (int k = 2; k <= 9 && t->nminor < MAX_TICKS * 10; k++) {
                    double v = k * pow(10, d);
                    if (v >= lo && v <= hi)
                        t->minor[t->nminor++] = v;
                }
    }
}

static double max_w(const tickset *t)
{
    double m = 0;
    for (int i = 0; i < t->n; i++)
        if (t->w[i] > m)
            m = t->w[i];
    return m;
}

static void axis_label_text(const rl_axis *a, char *buf, size_t cap)
{
    if (a->label && a->unit)
        snprintf(buf, cap, "%s [%s]", a->label, a->unit);
    else if (a->label)
        snprintf(buf, cap, "%s", a->label);
    else if (a->unit)
        snprintf(buf, cap, "[%s]", a->unit);
    else
        buf[0] = '\0';
}

static void build_legend(ctx *C, panel *P)
{
    rl_axes *ax = P->ax;
    P->nleg = 0;
    P->leg_w = P->leg_h = 0;
    if (ax->legend == RL_LEGEND_NONE)
        return;
    free(P->leg);
    P->leg = calloc(ax->nseries ? ax->nseries : 1, sizeof *P->leg);
    if (!P->leg) {
        C->oom = true;
        return;
    }
    double wmax = 0;
    for (size_t i = 0; i < ax->nseries; i++) {
        const rl_series *s = ax->series[i];
        if (!s->label)
            continue;
        legend_entry *e = &P->leg[P->nleg++];
        e->s = s;
        e->band = s->lo != NULL;
        snprintf(e->text, sizeof e->text, "%s", s->label);
        double w =
            fit_text(C, e->text, sizeof e->text, FS_LEGEND, false, C->W / C->fig->cols * 0.4);
        if (w > wmax)
            wmax = w;
    }
    if (P->nleg == 0)
        return;
    P->leg_w = 6 + 22 + 6 + wmax + 6;
    P->leg_h = 4 + P->nleg * FS_LEGEND * 1.45 + 3;
}

/* Margins from the current ticks and labels. */
static void panel_margins(ctx *C, panel *P)
{
    rl_axes *ax = P->ax;
    char buf[512];
    double ml = PAD + TICK_LEN + 3 + max_w(&P->yt);
    axis_label_text(&ax->ya, buf, sizeof buf);
    if (buf[0])
        ml += C->cap_label + 0.25 * FS_LABEL + 8;
    double xtick_h = C->cap_tick;
    if (P->xt.rotate) {
        double w = max_w(&P->xt);
        if (w > P->ch * 0.4)
            w = P->ch * 0.4;
        xtick_h = w * 0.7071 + C->cap_tick * 0.7071;
    }
    double mb = TICK_LEN + 4 + xtick_h + PAD + 0.25 * FS_TICK;
    axis_label_text(&ax->xa, buf, sizeof buf);
    if (buf[0] || P->xt.offset_label[0])
        mb += C->cap_label + 0.25 * FS_LABEL + 7;
    double mt = PAD + C->cap_tick * 0.6;
    if (P->yt.offset_label[0])
        mt = PAD + C->cap_tick + 0.3 * FS_TICK + 5;
    if (ax->title)
        mt = PAD + C->cap_title + 0.3 * FS_TITLE + 8;
    double mr = PAD + 6;
    if (P->xt.n > 0 && !P->xt.rotate)
        mr = fmax(mr, P->xt.w[P->xt.n - 1] / 2 + 2);
    if (P->leg_outside && P->nleg > 0)
        mr = PAD + 8 + P->leg_w;
    P->ml = ml;
    P->mr = mr;
    P->mt = mt;
    P->mb = mb;
}

static void panel_area(panel *P)
{
    P->px = P->cx + P->ml;
    P->py = P->cy + P->mt;
    P->pw = fmax(10, P->cw - P->ml - P->mr);
    P->ph = fmax(10, P->ch - P->mt - P->mb);
    if (P->ax->equal && !P->xcat && !P->ycat && !P->tx.log && !P->ty.log &&
        P->ax->xa.scale == RL_SCALE_LINEAR && P->ax->ya.scale == RL_SCALE_LINEAR) {
        /* One data unit is as long on x as on y: widen the axis that has room to spare
         * (matplotlib's adjustable='datalim'), always from the original limits. */
        double sx = P->pw / (P->xhi0 - P->xlo0), sy = P->ph / (P->yhi0 - P->ylo0);
        P->xlo = P->xlo0;
        P->xhi = P->xhi0;
        P->ylo = P->ylo0;
        P->yhi = P->yhi0;
        if (sx > sy) {
            double half = P->pw / sy / 2, mid = (P->xlo0 + P->xhi0) / 2;
            P->xlo = mid - half;
            P->xhi = mid + half;
        } else {
            double half = P->ph / sx / 2, mid = (P->ylo0 + P->yhi0) / 2;
            P->ylo = mid - half;
            P->yhi = mid + half;
        }
    }
}

static void panel_ticks(ctx *C, panel *P)
{
    rl_axes *ax = P->ax;
    choose_ticks(C, &P->xt, &ax->xa, P->xcat, ax, P->xlo, P->xhi, P->pw, true);
    choose_ticks(C, &P->yt, &ax->ya, P->ycat, ax, P->ylo, P->yhi, P->ph, false);
}

/* Lays out every panel: margins are unified per grid column (left/right) and row
 * (top/bottom) so plot areas line up, then ticks are re-chosen for the final sizes. */
static void layout(ctx *C, double top, double bottom)
{
    rl_figure *f = C->fig;
    double cw = C->W / f->cols, ch = (C->H - top - bottom) / f->rows;
    for (int i = 0; i < C->np; i++) {
        panel *P = &C->p[i];
        P->cx = (i % f->cols) * cw;
        P->cy = top + (i / f->cols) * ch;
        P->cw = cw;
        P->ch = ch;
        P->pw = cw * 0.75;
        P->ph = ch * 0.75;
    }
    for (int iter = 0; iter < 3; iter++) {
        for (int i = 0; i < C->np; i++) {
            panel_ticks(C, &C->p[i]);
            panel_margins(C, &C->p[i]);
        }
        for (int i = 0; i < C->np; i++) {
            int r = i / f->cols, c = i % f->cols;
            double ml = 0, mr = 0, mt = 0, mb = 0;
            for (int k = 0; k < C->np; k++) {
                panel *Q = &C->p[k];
                if (k % f->cols == c) {
                    ml = fmax(ml, Q->ml);
                    mr = fmax(mr, Q->mr);
                }
                if (k / f->cols == r) {
                    mt = fmax(mt, Q->mt);
                    mb = fmax(mb, Q->mb);
                }
            }
            C->p[i].ml = ml;
            C->p[i].mr = mr;
            C->p[i].mt = mt;
            C->p[i].mb = mb;
        }
        for (int i = 0; i < C->np; i++) {
            panel_area(&C->p[i]);
            set_xforms(&C->p[i]);
        }
    }
}

/* ---- Occupancy grid for legend placement -------------------------------------------- */
#define OCC_CELL 3.0
typedef struct occ {
    unsigned char *g;
    int w, h;
    double x0, y0;
    /* The candidate legend boxes (x0, y0, x1, y1) and which hold data already: once all
     * do, the legend goes outside whatever else is drawn, and drawing stops. */
    double boxes[8][4];
    int nboxes;
    bool hit[8];
} occ;

static void occ_mark(occ *o, double x, double y)
{
    if (!isfinite(x) || !isfinite(y))
        return;
    int i = (int)floor((x - o->x0) / OCC_CELL), j = (int)floor((y - o->y0) / OCC_CELL);
    if (i >= 0 && j >= 0 && i < o->w && j < o->h)
        o->g[j * o->w + i] = 1;
}

static void occ_segment(occ *o, double x0, double y0, double x1, double y1)
{
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
        return;
    double len = hypot(x1 - x0, y1 - y0);
    int steps = (int)(len / (OCC_CELL * 0.5)) + 1;
    if (steps > 4000)
        steps = 4000;
    for (int k = 0; k <= steps; k++) {
        double t = (double)k / steps;
        occ_mark(o, x0 + t * (x1 - x0), y0 + t * (y1 - y0));
    }
}

static void occ_rect(occ *o, double x0, double y0, double x1, double y1)
{
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
        return;
    x0 = fmax(fmin(x0, COORD_LIMIT), -COORD_LIMIT);
    x1 = fmax(fmin(x1, COORD_LIMIT), -COORD_LIMIT);
    y0 = fmax(fmin(y0, COORD_LIMIT), -COORD_LIMIT);
    y1 = fmax(fmin(y1, COORD_LIMIT), -COORD_LIMIT);
    if (x0 > x1) {
        double t = x0;
        x0 = x1;
        x1 = t;
    }
    if (y0 > y1) {
        double t = y0;
        y0 = y1;
        y1 = t;
    }
    int i0 = (int)floor((x0 - o->x0) / OCC_CELL), i1 = (int)floor((x1 - o->x0) / OCC_CELL);
    int j0 = (int)floor((y0 - o->y0) / OCC_CELL), j1 = (int)floor((y1 - o->y0) / OCC_CELL);
    if (i0 < 0)
        i0 = 0;
    if (j0 < 0)
        j0 = 0;
    if (i1 >= o->w)
        i1 = o->w - 1;
    if (j1 >= o->h)
        j1 = o->h - 1;
    for (int j = j0; j <= j1; j++)
        for (int i = i0; i <= i1; i++)
            o->g[j * o->w + i] = 1;
}

static int occ_count(const occ *o, double x0, double y0, double x1, double y1)
{
    int i0 = (int)floor((x0 - o->x0) / OCC_CELL), i1 = (int)floor((x1 - o->x0) / OCC_CELL);
    int j0 = (int)floor((y0 - o->y0) / OCC_CELL), j1 = (int)floor((y1 - o->y0) / OCC_CELL);
    if (i0 < 0)
        i0 = 0;
    if (j0 < 0)
        j0 = 0;
    if (i1 >= o->w)
        i1 = o->w - 1;
    if (j1 >= o->h)
        j1 = o->h - 1;
    int n = 0;
    for (int j = j0; j <= j1; j++)
        for (int i = i0; i <= i1; i++)
            n += o->g[j * o->w + i];
    return n;
}

/* Whether every candidate box holds data: marks only add, so more series cannot free one. */
static bool occ_settled(occ *o)
{
    if (!o || o->nboxes == 0)
        return false;
    bool all = true;
    for (int k = 0; k < o->nboxes; k++) {
        if (!o->hit[k])
            o->hit[k] = occ_count(o, o->boxes[k][0], o->boxes[k][1], o->boxes[k][2],
                                  o->boxes[k][3]) > 0;
        all = all && o->hit[k];
    }
    return all;
}

/* ---- Series geometry ------------------------------------------------------------------
 * Each line-like series becomes runs of page coordinates (split at gaps), decimated.
 * The same geometry feeds drawing and the legend's occupancy grid. */
typedef struct runs {
    dvec pts;
    size_t *start; /* run k is pts[start[k] .. start[k+1]) */
    size_t nruns, cap;
    bool oom;
} runs;

static void runs_begin(runs *R)
{
    if (R->nruns + 2 > R->cap) {
        size_t cap = R->cap ? R->cap * 2 : 16;
        size_t *p = realloc(R->start, cap * sizeof *p);
        if (!p) {
            R->oom = true;
            return;
        }
        R->start = p;
        R->cap = cap;
    }
    R->start[R->nruns] = R->pts.n;
}

static void runs_end(runs *R)
{
    if (R->oom || !R->start)
        return;
    if (R->pts.n > R->start[R->nruns]) {
        R->nruns++;
        R->start[R->nruns] = R->pts.n;
    }
}

static void runs_free(runs *R)
{
    free(R->pts.v);
    free(R->start);
    memset(R, 0, sizeof *R);
}

static void series_runs_make(ctx *C, const panel *P, const rl_series *s, int which, runs *R);

/* What the runs of a series' points depend on besides the points. */
static void runs_key(const ctx *C, const panel *P, double key[13])
{
    const double k[13] = {P->tx.d0, P->tx.d1, P->tx.p0, P->tx.p1, P->tx.log, P->ty.d0, P->ty.d1,
                          P->ty.p0, P->ty.p1, P->ty.log, P->px, P->pw, C->colw};
    memcpy(key, k, sizeof k);
}

/* The runs kept in the series for this layout, copied into R; false when there are none. */
static bool runs_cached(const ctx *C, const panel *P, const rl_series *s, runs *R)
{
    double key[13];
    runs_key(C, P, key);
    if (!s->runs_start || memcmp(key, s->runs_key, sizeof key) != 0)
        return false;
    size_t cap = s->runs_n + 2;
    R->pts.v = malloc((s->runs_npts ? s->runs_npts : 1) * 2 * sizeof(double));
    R->start = malloc(cap * sizeof *R->start);
    if (!R->pts.v || !R->start) {
        free(R->pts.v);
        free(R->start);
        memset(R, 0, sizeof *R);
        return false;
    }
    memcpy(R->pts.v, s->runs_pts, s->runs_npts * 2 * sizeof(double));
    memcpy(R->start, s->runs_start, (s->runs_n + 1) * sizeof *R->start);
    R->pts.n = R->pts.cap = s->runs_npts;
    R->nruns = s->runs_n;
    R->cap = cap;
    return true;
}

/* Keeps a copy of R in the series (a cache: the series' data do not change, and a figure
 * is drawn once per format). */
static void runs_keep(const ctx *C, const panel *P, const rl_series *cs, const runs *R)
{
    rl_series *s = (rl_series *)cs; /* only the cache changes */
    free(s->runs_pts);
    free(s->runs_start);
    s->runs_pts = NULL;
    s->runs_start = NULL;
    if (R->oom || !R->start)
        return;
    double *pts = malloc((R->pts.n ? R->pts.n : 1) * 2 * sizeof(double));
    size_t *start = malloc((R->nruns + 1) * sizeof *start);
    if (!pts || !start) {
        free(pts);
        free(start);
        return;
    }
    memcpy(pts, R->pts.v, R->pts.n * 2 * sizeof(double));
    memcpy(start, R->start, (R->nruns + 1) * sizeof *start);
    runs_key(C, P, s->runs_key);
    s->runs_pts = pts;
    s->runs_npts = R->pts.n;
    s->runs_start = start;
    s->runs_n = R->nruns;
}

/* `which`: 0 = (x, y), 1 = (x, lo), 2 = (x, hi). Steps are expanded to their corners. */
static void series_runs(ctx *C, const panel *P, const rl_series *s, int which, runs *R)
{
    if (which == 0 && runs_cached(C, P, s, R))
        return;
    series_runs_make(C, P, s, which, R);
    if (which == 0)
        runs_keep(C, P, s, R);
}

static void series_runs_make(ctx *C, const panel *P, const rl_series *s, int which, runs *R)
{
    const double *ys = which == 1 ? s->lo : which == 2 ? s->hi : s->y;
    decim d = {0};
    d.out = &R->pts;
    d.x0 = P->px;
    d.colw = C->colw;
    d.sorted = s->x_sorted;
    bool step = s->kind == RL_K_STEP || s->kind == RL_K_ECDF;
    bool in_run = false;
    double prev_py = 0;
    if (s->kind == RL_K_ECDF && s->n > 0) {
        /* The CDF is 0 left of the first sample and 1 right of the last. */
        runs_begin(R);
        in_run = true;
        double y0 = P->ty.log ? xf(&P->ty, 1.0 / (double)s->n) : xf(&P->ty, 0);
        dec_push(&d, P->px - 1, y0);
        prev_py = y0;
    }
    for (size_t i = 0; i < s->n; i++) {
        double x = s->x[i], y = ys[i];
        bool bad = isnan(x) || (P->tx.log && !(x > 0)) || (P->ty.log && !(y > 0));
        if (bad) {
            if (in_run) {
                dec_finish(&d);
                runs_end(R);
                in_run = false;
            }
            continue;
        }
        double px = xf(&P->tx, x), py = xf(&P->ty, y);
        if (!in_run) {
            runs_begin(R);
            in_run = true;
        } else if (step) {
            dec_push(&d, px, prev_py);
        }
        dec_push(&d, px, py);
        prev_py = py;
    }
    if (in_run && step && s->n > 0) {
        /* Extend the last step to the right edge (ECDF) or leave it (step lines). */
        if (s->kind == RL_K_ECDF)
            dec_push(&d, P->px + P->pw + 1, prev_py);
    }
    if (in_run) {
        dec_finish(&d);
        runs_end(R);
    }
    if (R->pts.oom)
        R->oom = true;
    if (R->oom)
        C->oom = true;
}

/* ---- Drawing primitives -------------------------------------------------------------- */
static void rect_path(rl_rend *r, double x0, double y0, double x1, double y1, const rl_rgba *fill,
                      const rl_pen *pen)
{
    double xy[8] = {x0, y0, x1, y0, x1, y1, x0, y1};
    r->ops->path(r, xy, 4, true, fill, pen);
}

static void line2(rl_rend *r, double x0, double y0, double x1, double y1, const rl_pen *pen)
{
    double xy[4] = {x0, y0, x1, y1};
    r->ops->path(r, xy, 2, false, NULL, pen);
}

static void draw_marker(rl_rend *r, rl_marker mk, double x, double y, double size,
                        const rl_rgba *fill, const rl_pen *edge)
{
    double h = size / 2;
    switch (mk) {
    case RL_MARKER_NONE:
    case RL_MARKER_AUTO: return;
    case RL_MARKER_CIRCLE: r->ops->circle(r, x, y, h, fill, edge); return;
    case RL_MARKER_SQUARE: {
        double s = h * 0.886; /* same area as the circle */
        rect_path(r, x - s, y - s, x + s, y + s, fill, edge);
        return;
    }
    case RL_MARKER_TRIANGLE:
    case RL_MARKER_TRIANGLE_DOWN: {
        double k = mk == RL_MARKER_TRIANGLE ? 1 : -1, s = h * 1.2;
        double xy[6] = {
            x, y - k * s, x + s * 0.866, y + k * s * 0.5, x - s * 0.866, y + k * s * 0.5};
        r->ops->path(r, xy, 3, true, fill, edge);
        return;
    }
    case RL_MARKER_DIAMOND: {
        double s = h * 1.15;
        double xy[8] = {x, y - s, x + s * 0.8, y, x, y + s, x - s * 0.8, y};
        r->ops->path(r, xy, 4, true, fill, edge);
        return;
    }
    case RL_MARKER_PLUS:
    case RL_MARKER_CROSS: {
        rl_pen p = {*fill, size * 0.22, NULL, 0, false};
        p.color.a = 1;
        double s = mk == RL_MARKER_PLUS ? h : h * 0.8;
        if (mk == RL_MARKER_PLUS) {
            line2(r, x - s, y, x + s, y, &p);
            line2(r, x, y - s, x, y + s, &p);
        } else {
            line2(r, x - s, y - s, x + s, y + s, &p);
            line2(r, x - s, y + s, x + s, y - s, &p);
        }
        return;
    }
    }
}

static double marker_size(const rl_series *s)
{
    return s->opts.marker_size > 0 ? s->opts.marker_size : 4.5;
}

/* ---- Series drawing ------------------------------------------------------------------ */
static void draw_band(ctx *C, panel *P, const rl_series *s, occ *o)
{
    runs hi = {0}, lo = {0};
    series_runs(C, P, s, 2, &hi);
    series_runs(C, P, s, 1, &lo);
    rl_rgba fill = series_rgba(s, 0.22);
    if (hi.nruns == lo.nruns) {
        for (size_t k = 0; k < hi.nruns; k++) {
            size_t a = hi.start[k], b = hi.start[k + 1], c = lo.start[k], e = lo.start[k + 1];
            dvec poly = {0};
            for (size_t i = a; i < b; i++)
                dv_push(&poly, hi.pts.v[2 * i], hi.pts.v[2 * i + 1]);
            for (size_t i = e; i > c; i--)
                dv_push(&poly, lo.pts.v[2 * (i - 1)], lo.pts.v[2 * (i - 1) + 1]);
            if (poly.oom)
                C->oom = true;
            else if (o)
                for (size_t i = a; i < b && i - a < e - c; i++)
                    occ_segment(o, hi.pts.v[2 * i], hi.pts.v[2 * i + 1], lo.pts.v[2 * (c + i - a)],
                                lo.pts.v[2 * (c + i - a) + 1]);
            else if (poly.n >= 3)
                C->r->ops->path(C->r, poly.v, poly.n, true, &fill, NULL);
            free(poly.v);
        }
    }
    runs_free(&hi);
    runs_free(&lo);
}

static void draw_lines(ctx *C, panel *P, const rl_series *s, occ *o)
{
    runs R = {0};
    series_runs(C, P, s, 0, &R);
    rl_pen pen = series_pen(s, true);
    rl_rgba mfill = pen.color;
    for (size_t k = 0; k < R.nruns; k++) {
        size_t a = R.start[k], n = R.start[k + 1] - a;
        const double *v = R.pts.v + 2 * a;
        if (o) {
            for (size_t i = 0; i + 1 < n; i++)
                occ_segment(o, v[2 * i], v[2 * i + 1], v[2 * i + 2], v[2 * i + 3]);
            if (n == 1)
                occ_mark(o, v[0], v[1]);
            continue;
        }
        if (n >= 2)
            C->r->ops->path(C->r, v, n, false, NULL, &pen);
        /* A lone point (a one-sample run) would be invisible as a line. */
        if (n == 1 && s->marker == RL_MARKER_NONE)
            C->r->ops->circle(C->r, v[0], v[1], pen.width * 1.3, &mfill, NULL);
    }
    if (!o && s->marker != RL_MARKER_NONE && s->kind == RL_K_LINE) {
        for (size_t i = 0; i < s->n; i++) {
            if (isnan(s->x[i]) || (P->tx.log && !(s->x[i] > 0)) || (P->ty.log && !(s->y[i] > 0)))
                continue;
            draw_marker(C->r, s->marker, xf(&P->tx, s->x[i]), xf(&P->ty, s->y[i]), marker_size(s),
                        &mfill, NULL);
        }
    }
    runs_free(&R);
}

static void draw_scatter(ctx *C, panel *P, const rl_series *s, occ *o)
{
    /* One marker per device pixel per series: more would be drawn over each other. */
    int gw = (int)ceil(P->pw / C->colw) + 3, gh = (int)ceil(P->ph / C->colw) + 3;
    unsigned char *seen = calloc((size_t)gw * (size_t)gh, 1);
    if (!seen) {
        C->oom = true;
        return;
    }
    rl_rgba fill = series_rgba(s, s->opts.alpha > 0 ? s->opts.alpha : 0.8);
    double ms = marker_size(s), slack = ms;
    for (size_t i = 0; i < s->n; i++) {
        double x = s->x[i], y = s->y[i];
        if ((P->tx.log && !(x > 0)) || (P->ty.log && !(y > 0)))
            continue;
        double px = xf(&P->tx, x), py = xf(&P->ty, y);
        /* Written as "not inside" so a NaN is skipped too. */
        if (!(px >= P->px - slack && px <= P->px + P->pw + slack && py >= P->py - slack &&
              py <= P->py + P->ph + slack))
            continue;
        int gx = (int)((px - P->px + slack) / (P->pw + 2 * slack) * (gw - 1));
        int gy = (int)((py - P->py + slack) / (P->ph + 2 * slack) * (gh - 1));
        unsigned char *cell = &seen[(size_t)gy * (size_t)gw + (size_t)gx];
        if (*cell)
            continue;
        *cell = 1;
        if (o)
            occ_rect(o, px - ms / 2, py - ms / 2, px + ms / 2, py + ms / 2);
        else
            draw_marker(C->r, s->marker, px, py, ms, &fill, NULL);
    }
    free(seen);
}

/* Fill and outline are separate passes: every outline goes over every fill, so each
 * histogram's shape stays readable where they overlap. */
static void draw_hist(ctx *C, panel *P, const rl_series *s, occ *o, bool outline)
{
    double base = P->ty.log ? P->ylo : 0;
    dvec poly = {0};
    double yb = xf(&P->ty, base);
    dv_push(&poly, xf(&P->tx, s->edges[0]), yb);
    for (size_t i = 0; i < s->nbins; i++) {
        double v = s->y[i] > 0 || !P->ty.log ? s->y[i] : base;
        double yt = xf(&P->ty, v);
        double x0 = xf(&P->tx, s->edges[i]), x1 = xf(&P->tx, s->edges[i + 1]);
        dv_push(&poly, x0, yt);
        dv_push(&poly, x1, yt);
        if (o && s->y[i] > 0)
            occ_rect(o, x0, yt, x1, yb);
    }
    dv_push(&poly, xf(&P->tx, s->edges[s->nbins]), yb);
    if (poly.oom) {
        C->oom = true;
    } else if (!o && !outline) {
        rl_rgba fill = series_rgba(s, s->opts.alpha > 0 ? s->opts.alpha : 0.4);
        C->r->ops->path(C->r, poly.v, poly.n, true, &fill, NULL);
    } else if (!o) {
        rl_pen pen = series_pen(s, false);
        pen.width = s->opts.line_width > 0 ? s->opts.line_width : 1.2;
        pen.round = false;
        C->r->ops->path(C->r, poly.v, poly.n, false, NULL, &pen);
    }
    free(poly.v);
}

static void draw_box(ctx *C, panel *P, const rl_series *s, occ *o)
{
    const rl_box_stats *b = &s->box;
    double xc = xf(&P->tx, s->slot);
    double slotw = fabs(xf(&P->tx, 1) - xf(&P->tx, 0));
    double hw = fmin(slotw * 0.25, 40), cw = hw * 0.5;
    bool own = s->opts.color >= 0 || s->opts.use_rgb;
    rl_rgba edge_c = own ? series_rgba(s, 1) : palette_rgba(0, 1);
    if (b->n == 0) {
        if (!o)
            C->r->ops->text(C->r, xc, P->py + P->ph - 6, "n = 0", FS_NOTE, false, &C_NOTE, 0.5, 0);
        return;
    }
    double yq1 = xf(&P->ty, b->q1), yq3 = xf(&P->ty, b->q3), ym = xf(&P->ty, b->med);
    double ywl = xf(&P->ty, b->wlo), ywh = xf(&P->ty, b->whi);
    if (o) {
        occ_rect(o, xc - hw, yq3, xc + hw, yq1);
        occ_segment(o, xc, ywl, xc, ywh);
        for (size_t k = 0; k < b->noutliers; k++)
            occ_mark(o, xc, xf(&P->ty, b->outliers[k]));
        return;
    }
    rl_pen pen = {edge_c, 1.1, NULL, 0, false};
    rl_rgba fill = own ? series_rgba(s, 0.25) : palette_rgba(0, 0.25);
    rl_pen med_pen = {palette_rgba(3, 1), 1.8, NULL, 0, false};
    if (own && s->rgb == rl_plot_palette(3))
        med_pen.color = C_BLACK;
    line2(C->r, xc, yq1, xc, ywl, &pen);
    line2(C->r, xc, yq3, xc, ywh, &pen);
    line2(C->r, xc - cw, ywl, xc + cw, ywl, &pen);
    line2(C->r, xc - cw, ywh, xc + cw, ywh, &pen);
    double nw = 0;
    if (s->opts.notch) {
        double nlo = fmax(b->notch_lo, b->q1), nhi = fmin(b->notch_hi, b->q3);
        double yl = xf(&P->ty, nlo), yh = xf(&P->ty, nhi);
        nw = hw * 0.5;
        double xy[] = {xc - hw, yq1, xc + hw, yq1, xc + hw, yl, xc + hw - nw, ym, xc + hw, yh,
                       xc + hw, yq3, xc - hw, yq3, xc - hw, yh, xc - hw + nw, ym, xc - hw, yl};
        C->r->ops->path(C->r, xy, 10, true, &fill, &pen);
    } else {
        rect_path(C->r, xc - hw, yq3, xc + hw, yq1, &fill, &pen);
    }
    line2(C->r, xc - hw + nw, ym, xc + hw - nw, ym, &med_pen);
    rl_pen open = {edge_c, 0.9, NULL, 0, false};
    for (size_t k = 0; k < b->noutliers; k++) {
        double v = b->outliers[k];
        if (P->ty.log && !(v > 0))
            continue;
        C->r->ops->circle(C->r, xc, xf(&P->ty, v), 2.3, NULL, &open);
    }
}

static void draw_bars(ctx *C, panel *P, occ *o)
{
    rl_axes *ax = P->ax;
    int nb = 0;
    for (size_t i = 0; i < ax->nseries; i++)
        if (ax->series[i]->kind == RL_K_BAR)
            nb++;
    if (nb == 0)
        return;
    bool stacked = ax->bar_mode == RL_BAR_STACKED, hz = ax->bar_horizontal;
    const xform *tv = hz ? &P->tx : &P->ty, *tc = hz ? &P->ty : &P->tx;
    double base_v = tv->log ? (hz ? P->xlo : P->ylo) : 0;
    double group = 0.8, w = stacked ? group : group / nb;
    for (size_t c = 0; c < ax->ncat; c++) {
        double pos = 0, neg = 0;
        int k = 0;
        for (size_t i = 0; i < ax->nseries; i++) {
            const rl_series *s = ax->series[i];
            if (s->kind != RL_K_BAR)
                continue;
            int slot = k++;
            double v = s->values[c];
            if (isnan(v) || (tv->log && !(v > 0)))
                continue;
            double v0, v1;
            if (stacked) {
                if (v >= 0) {
                    v0 = pos;
                    pos += v;
                    v1 = pos;
                } else {
                    v0 = neg;
                    neg += v;
                    v1 = neg;
                }
                if (tv->log && v0 == 0)
                    v0 = base_v;
            } else {
                v0 = base_v;
                v1 = v;
            }
            double c0 = (double)c - group / 2 + (stacked ? 0 : slot * w);
            double a0 = xf(tc, c0), a1 = xf(tc, c0 + w), b0 = xf(tv, v0), b1 = xf(tv, v1);
            double x0 = hz ? b0 : a0, x1 = hz ? b1 : a1, y0 = hz ? a0 : b0, y1 = hz ? a1 : b1;
            if (o) {
                occ_rect(o, x0, y0, x1, y1);
                continue;
            }
            rl_rgba fill = series_rgba(s, s->opts.alpha > 0 ? s->opts.alpha : 1);
            /* A thin white edge separates stacked and adjacent bars. */
            rl_pen edge = {C_WHITE, 0.6, NULL, 0, false};
            rect_path(C->r, x0, y0, x1, y1, &fill, &edge);
        }
    }
}

static void draw_series(ctx *C, panel *P, occ *o)
{
    rl_axes *ax = P->ax;
    /* Areas first (bands, histograms, bars, boxes), then lines, then markers on top. */
    for (size_t i = 0; i < ax->nseries; i++) {
        const rl_series *s = ax->series[i];
        if (s->kind == RL_K_LINE && s->lo)
            draw_band(C, P, s, o);
        else if (s->kind == RL_K_HIST)
            draw_hist(C, P, s, o, false);
        else if (s->kind == RL_K_BOX)
            draw_box(C, P, s, o);
    }
    draw_bars(C, P, o);
    for (size_t i = 0; i < ax->nseries && !o; i++)
        if (ax->series[i]->kind == RL_K_HIST)
            draw_hist(C, P, ax->series[i], NULL, true);
    /* Into the occupancy grid, the lines and markers (a figure's bulk) only until every
     * candidate legend box holds data. Markers asked to lie under the lines come first. */
    for (size_t i = 0; i < ax->nseries && !occ_settled(o); i++)
        if (ax->series[i]->kind == RL_K_SCATTER && ax->series[i]->opts.below_lines)
            draw_scatter(C, P, ax->series[i], o);
    for (size_t i = 0; i < ax->nseries && !occ_settled(o); i++) {
        const rl_series *s = ax->series[i];
        if (s->kind == RL_K_LINE || s->kind == RL_K_STEP || s->kind == RL_K_ECDF)
            draw_lines(C, P, s, o);
    }
    for (size_t i = 0; i < ax->nseries && !occ_settled(o); i++)
        if (ax->series[i]->kind == RL_K_SCATTER && !ax->series[i]->opts.below_lines)
            draw_scatter(C, P, ax->series[i], o);
}

/* ---- Legend ------------------------------------------------------------------------- */
static void place_legend(ctx *C, panel *P)
{
    P->leg_inside = false;
    if (P->nleg == 0)
        return;
    double inset = 6;
    double xl = P->px + inset, xr = P->px + P->pw - inset - P->leg_w;
    double yt = P->py + inset, yb = P->py + P->ph - inset - P->leg_h;
    double xc = P->px + (P->pw - P->leg_w) / 2, yc = P->py + (P->ph - P->leg_h) / 2;
    /* Corners first (in matplotlib's order), then the middles of the edges. */
    double corners[8][2] = {{xr, yt}, {xl, yt}, {xl, yb}, {xr, yb},
                            {xc, yt}, {xc, yb}, {xr, yc}, {xl, yc}};
    rl_legend_pos pos = P->ax->legend;
    if (pos >= RL_LEGEND_UPPER_RIGHT && pos <= RL_LEGEND_LOWER_RIGHT) {
        int k = pos - RL_LEGEND_UPPER_RIGHT;
        P->leg_x = corners[k][0];
        P->leg_y = corners[k][1];
        P->leg_inside = true;
        return;
    }
    if (pos == RL_LEGEND_OUTSIDE)
        return;
    if (P->leg_w + 2 * inset > P->pw || P->leg_h + 2 * inset > P->ph) {
        P->leg_outside = true;
        return;
    }
    occ o = {0};
    o.x0 = P->px;
    o.y0 = P->py;
    o.w = (int)ceil(P->pw / OCC_CELL) + 1;
    o.h = (int)ceil(P->ph / OCC_CELL) + 1;
    o.g = calloc((size_t)o.w * (size_t)o.h, 1);
    if (!o.g) {
        C->oom = true;
        return;
    }
    o.nboxes = 8;
    for (int k = 0; k < 8; k++) {
        o.boxes[k][0] = corners[k][0] - 2;
        o.boxes[k][1] = corners[k][1] - 2;
        o.boxes[k][2] = corners[k][0] + P->leg_w + 2;
        o.boxes[k][3] = corners[k][1] + P->leg_h + 2;
    }
    draw_series(C, P, &o);
    int best = -1, best_n = 0;
    for (int k = 0; k < 8; k++) {
        int n = occ_count(&o, o.boxes[k][0], o.boxes[k][1], o.boxes[k][2], o.boxes[k][3]);
        if (best < 0 || n < best_n) {
            best = k;
            best_n = n;
        }
    }
    free(o.g);
    if (best_n > 0) {
        P->leg_outside = true;
        return;
    }
    P->leg_x = corners[best][0];
    P->leg_y = corners[best][1];
    P->leg_inside = true;
}

static void draw_legend(ctx *C, panel *P)
{
    if (P->nleg == 0 || (!P->leg_inside && !P->leg_outside))
        return;
    rl_rend *r = C->r;
    double x = P->leg_x, y = P->leg_y;
    if (P->leg_outside) {
        x = P->px + P->pw + 10;
        y = P->py;
    }
    rl_rgba bg = {1, 1, 1, 0.9};
    rl_pen frame = {{0.8, 0.8, 0.8, 1}, 0.6, NULL, 0, false};
    rect_path(r, x, y, x + P->leg_w, y + P->leg_h, &bg, &frame);
    double row = FS_LEGEND * 1.45;
    for (int i = 0; i < P->nleg; i++) {
        const rl_series *s = P->leg[i].s;
        double cy = y + 4 + row * (i + 0.5);
        double hx0 = x + 6, hx1 = x + 28;
        rl_rgba col = s->kind == RL_K_BOX && s->opts.color < 0 && !s->opts.use_rgb
                          ? palette_rgba(0, 1)
                          : series_rgba(s, 1);
        switch (s->kind) {
        case RL_K_LINE:
        case RL_K_STEP:
        case RL_K_ECDF: {
            if (P->leg[i].band) {
                rl_rgba f = series_rgba(s, 0.22);
                rect_path(r, hx0, cy - 4.5, hx1, cy + 4.5, &f, NULL);
            }
            rl_pen pen = series_pen(s, true);
            line2(r, hx0, cy, hx1, cy, &pen);
            if (s->marker != RL_MARKER_NONE)
                draw_marker(r, s->marker, (hx0 + hx1) / 2, cy, marker_size(s), &col, NULL);
            break;
        }
        case RL_K_SCATTER: {
            rl_rgba f = series_rgba(s, s->opts.alpha > 0 ? s->opts.alpha : 0.8);
            draw_marker(r, s->marker, (hx0 + hx1) / 2, cy, marker_size(s) * 1.2, &f, NULL);
            break;
        }
        case RL_K_HIST:
        case RL_K_BAR:
        case RL_K_BOX: {
            double a = s->kind == RL_K_HIST ? 0.4 : s->kind == RL_K_BOX ? 0.25 : 1;
            if (s->opts.alpha > 0 && s->opts.alpha <= 1)
                a = s->opts.alpha;
            rl_rgba f = col;
            f.a = a;
            rl_pen e = {col, 1, NULL, 0, false};
            rect_path(r, hx0 + 5, cy - 4.5, hx1 - 5, cy + 4.5, &f, s->kind == RL_K_BAR ? NULL : &e);
            break;
        }
        }
        r->ops->text(r, x + 34, cy + C->cap_tick / 2, P->leg[i].text, FS_LEGEND, false, &C_TEXT, 0,
                     0);
    }
}

/* ---- Axes, ticks, labels ------------------------------------------------------------- */
static void draw_axes_frame(ctx *C, panel *P)
{
    rl_rend *r = C->r;
    rl_axes *ax = P->ax;
    rl_pen grid = {C_GRID, 0.6, NULL, 0, false};
    if (ax->grid) {
        for (int i = 0; i < P->yt.n && !P->ycat; i++) {
            double y = xf(&P->ty, P->yt.v[i]);
            line2(r, P->px, y, P->px + P->pw, y, &grid);
        }
        for (int i = 0; i < P->xt.n && !P->xcat; i++) {
            double x = xf(&P->tx, P->xt.v[i]);
            line2(r, x, P->py, x, P->py + P->ph, &grid);
        }
    }
}

static void draw_ticks(ctx *C, panel *P)
{
    rl_rend *r = C->r;
    rl_axes *ax = P->ax;
    rl_pen spine = {C_SPINE, 0.8, NULL, 0, false};
    rl_pen tick = {C_SPINE, 0.8, NULL, 0, false};
    rl_pen minor = {C_SPINE, 0.6, NULL, 0, false};
    double x0 = P->px, x1 = P->px + P->pw, y0 = P->py, y1 = P->py + P->ph;
    /* Left and bottom spines only: the open frame reads cleaner in print. */
    line2(r, x0, y1, x1, y1, &spine);
    line2(r, x0, y0, x0, y1, &spine);
    for (int i = 0; i < P->xt.n; i++) {
        double x = xf(&P->tx, P->xt.v[i]);
        line2(r, x, y1, x, y1 + TICK_LEN, &tick);
        if (P->xt.rotate)
            r->ops->text(r, x + C->cap_tick * 0.35, y1 + TICK_LEN + 3, P->xt.label[i], FS_TICK,
                         false, &C_TEXT, 1, 45);
        else
            r->ops->text(r, x, y1 + TICK_LEN + 3 + C->cap_tick, P->xt.label[i], FS_TICK, false,
                         &C_TEXT, 0.5, 0);
    }
    for (int i = 0; i < P->xt.nminor; i++) {
        double x = xf(&P->tx, P->xt.minor[i]);
        line2(r, x, y1, x, y1 + TICK_LEN * 0.55, &minor);
    }
    for (int i = 0; i < P->yt.n; i++) {
        double y = xf(&P->ty, P->yt.v[i]);
        line2(r, x0 - TICK_LEN, y, x0, y, &tick);
        r->ops->text(r, x0 - TICK_LEN - 3, y + C->cap_tick / 2, P->yt.label[i], FS_TICK, false,
                     &C_TEXT, 1, 0);
    }
    for (int i = 0; i < P->yt.nminor; i++) {
        double y = xf(&P->ty, P->yt.minor[i]);
        line2(r, x0 - TICK_LEN * 0.55, y, x0, y, &minor);
    }
    char buf[512];
    double xtick_h = C->cap_tick;
    if (P->xt.rotate) {
        double w = fmin(max_w(&P->xt), P->ch * 0.4);
        xtick_h = w * 0.7071 + C->cap_tick * 0.7071;
    }
    double xlabel_y = y1 + TICK_LEN + 4 + xtick_h + 0.25 * FS_TICK + 7 + C->cap_label;
    axis_label_text(&ax->xa, buf, sizeof buf);
    if (buf[0]) {
        fit_text(C, buf, sizeof buf, FS_LABEL, false, P->pw);
        r->ops->text(r, P->px + P->pw / 2, xlabel_y, buf, FS_LABEL, false, &C_TEXT, 0.5, 0);
    }
    if (P->xt.offset_label[0])
        r->ops->text(r, x1, xlabel_y, P->xt.offset_label, FS_TICK, false, &C_TEXT, 1, 0);
    if (P->yt.offset_label[0])
        r->ops->text(r, x0, y0 - 5, P->yt.offset_label, FS_TICK, false, &C_TEXT, 0, 0);
    axis_label_text(&ax->ya, buf, sizeof buf);
    if (buf[0]) {
        fit_text(C, buf, sizeof buf, FS_LABEL, false, P->ph);
        double x = x0 - TICK_LEN - 3 - max_w(&P->yt) - 8 - 0.25 * FS_LABEL;
        r->ops->text(r, x, P->py + P->ph / 2, buf, FS_LABEL, false, &C_TEXT, 0.5, 90);
    }
    if (ax->title) {
        snprintf(buf, sizeof buf, "%s", ax->title);
        fit_text(C, buf, sizeof buf, FS_TITLE, true, P->cw - 2 * PAD);
        /* Centred over the plot area unless that would push it past the cell's edges. */
        double w = rl_measure_text(C->m, buf, FS_TITLE, true);
        double cx = P->px + P->pw / 2;
        cx = fmin(cx, P->cx + P->cw - PAD - w / 2);
        cx = fmax(cx, P->cx + PAD + w / 2);
        r->ops->text(r, cx, P->py - 8, buf, FS_TITLE, true, &C_TEXT, 0.5, 0);
    }
}

static void draw_panel(ctx *C, panel *P)
{
    rl_rend *r = C->r;
    draw_axes_frame(C, P);
    r->ops->clip_push(r, P->px, P->py, P->pw, P->ph);
    draw_series(C, P, NULL);
    r->ops->clip_pop(r);
    if (P->empty)
        r->ops->text(r, P->px + P->pw / 2, P->py + P->ph / 2 + C->cap_label / 2, "no data",
                     FS_LABEL, false, &C_NOTE, 0.5, 0);
    draw_ticks(C, P);
    draw_legend(C, P);
}

static bool panel_empty(const rl_axes *ax)
{
    for (size_t i = 0; i < ax->nseries; i++) {
        const rl_series *s = ax->series[i];
        if (s->n > 0 || s->kind == RL_K_BAR || (s->kind == RL_K_BOX && s->box.n > 0))
            return false;
    }
    return true;
}

int rl_plot_draw(rl_figure *fig, rl_rend *r, rl_measure *m)
{
    ctx C = {0};
    C.fig = fig;
    C.r = r;
    C.m = m;
    C.W = fig->w_in * 72;
    C.H = fig->h_in * 72;
    C.colw = 72.0 / fig->dpi;
    C.np = fig->rows * fig->cols;
    rl_measure_font(m, FS_TICK, &C.cap_tick, NULL);
    rl_measure_font(m, FS_LABEL, &C.cap_label, NULL);
    rl_measure_font(m, FS_TITLE, &C.cap_title, NULL);
    C.p = calloc((size_t)C.np, sizeof *C.p);
    if (!C.p)
        return rl_error_set(RL_ENOMEM, "plot: out of memory");

    size_t nonpos = 0;
    for (int i = 0; i < C.np; i++) {
        panel *P = &C.p[i];
        rl_axes *ax = &fig->axes[i];
        P->ax = ax;
        bool box = has_kind(ax, RL_K_BOX), bar = has_kind(ax, RL_K_BAR);
        P->xcat = box || (bar && !ax->bar_horizontal);
        P->ycat = bar && ax->bar_horizontal;
        P->empty = panel_empty(ax);
        finish_range(&ax->xa, data_range(ax, true), P->xcat, (double)ax->ncat, &P->xlo, &P->xhi);
        finish_range(&ax->ya, data_range(ax, false), P->ycat, (double)ax->ncat, &P->ylo, &P->yhi);
        if (P->ycat) {
            /* First category at the top, as a reader expects of a horizontal bar list. */
            double t = P->ylo;
            P->ylo = P->yhi;
            P->yhi = t;
        }
        P->xlo0 = P->xlo;
        P->xhi0 = P->xhi;
        P->ylo0 = P->ylo;
        P->yhi0 = P->yhi;
        nonpos += count_nonpos(ax);
        build_legend(&C, P);
        P->leg_outside = ax->legend == RL_LEGEND_OUTSIDE;
    }
    fig->skipped_draw = nonpos;

    char note[256] = "";
    if (fig->skipped && nonpos)
        snprintf(note, sizeof note,
                 "Not drawn: %zu NaN or infinite value%s, %zu non-positive "
                 "value%s on log axes",
                 fig->skipped, fig->skipped == 1 ? "" : "s", nonpos, nonpos == 1 ? "" : "s");
    else if (fig->skipped)
        snprintf(note, sizeof note, "Not drawn: %zu NaN or infinite value%s", fig->skipped,
                 fig->skipped == 1 ? "" : "s");
    else if (nonpos)
        snprintf(note, sizeof note, "Not drawn: %zu non-positive value%s on log axes", nonpos,
                 nonpos == 1 ? "" : "s");

    double top = 0, bottom = 0, cap_sup;
    rl_measure_font(m, FS_SUPTITLE, &cap_sup, NULL);
    if (fig->title)
        top = PAD + cap_sup + 8;
    if (note[0])
        bottom = FS_NOTE * 1.6;

    layout(&C, top, bottom);
    /* Legends: a BEST legend that finds no free corner moves outside; lay out again for
     * the narrower plot area. */
    bool relayout = false;
    for (int i = 0; i < C.np; i++) {
        bool was_outside = C.p[i].leg_outside;
        place_legend(&C, &C.p[i]);
        if (C.p[i].leg_outside && !was_outside)
            relayout = true;
    }
    if (relayout)
        layout(&C, top, bottom);

    if (fig->title) {
        char t[512];
        snprintf(t, sizeof t, "%s", fig->title);
        fit_text(&C, t, sizeof t, FS_SUPTITLE, true, C.W - 2 * PAD);
        r->ops->text(r, C.W / 2, PAD + cap_sup + 2, t, FS_SUPTITLE, true, &C_TEXT, 0.5, 0);
    }
    for (int i = 0; i < C.np; i++)
        draw_panel(&C, &C.p[i]);
    if (note[0])
        r->ops->text(r, PAD + 2, C.H - FS_NOTE * 0.55, note, FS_NOTE, false, &C_NOTE, 0, 0);

    for (int i = 0; i < C.np; i++)
        free(C.p[i].leg);
    free(C.p);
    if (C.oom)
        return rl_error_set(RL_ENOMEM, "plot: out of memory while drawing");
    return RL_OK;
}
