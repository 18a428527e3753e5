/* Layout of a figure: axis ranges and view limits, tick choice that measures its labels so
 * they never overlap, legend entries and the size of their box, and panel margins aligned
 * across the grid. Called by rl_plot_draw (plot_draw.c); draws nothing. */
#include "analysis/plot_draw.h"

#include "runlab/error.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool rl_plot_has_kind(const rl_axes *ax, rl_kind k)
{
    for (size_t i = 0; i < ax->nseries; i++)
        if (ax->series[i]->kind == k)
            return true;
    return false;
}

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

range rl_plot_data_range(rl_axes *ax, bool is_x)
{
    range r = {0, 0, false, false, false};
    bool log = (is_x ? ax->xa.scale : ax->ya.scale) == RL_SCALE_LOG;
    bool bar_value_axis = rl_plot_has_kind(ax, RL_K_BAR) && (is_x == ax->bar_horizontal);
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
size_t rl_plot_count_nonpos(const rl_axes *ax)
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

void rl_plot_finish_range(const rl_axis *a, range r, bool cat, double ncat, double *lo, double *hi)
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
double rl_plot_fit_text(ctx *C, char *label, size_t cap, double size, bool bold, double maxw)
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
    return rl_plot_fit_text(C, label, cap, FS_TICK, false, maxw);
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

double rl_plot_max_w(const tickset *t)
{
    double m = 0;
    for (int i = 0; i < t->n; i++)
        if (t->w[i] > m)
            m = t->w[i];
    return m;
}

void rl_plot_axis_label_text(const rl_axis *a, char *buf, size_t cap)
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

/* The legend box with `rows` entries per column (as many columns as that takes). */
static void legend_columns(panel *P, int rows)
{
    rows = rows < 1 ? 1 : rows > P->nleg ? P->nleg : rows;
    int cols = (P->nleg + rows - 1) / rows;
    P->leg_rows = (P->nleg + cols - 1) / cols; /* the columns as even as they can be */
    P->leg_w = cols * P->leg_colw;
    P->leg_h = 4 + P->leg_rows * FS_LEGEND * 1.45 + 3;
}

void rl_plot_build_legend(ctx *C, panel *P)
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
            rl_plot_fit_text(C, e->text, sizeof e->text, FS_LEGEND, false, C->W / C->fig->cols * 0.4);
        if (w > wmax)
            wmax = w;
    }
    if (P->nleg == 0)
        return;
    P->leg_colw = 6 + 22 + 6 + wmax + 6;
    legend_columns(P, P->nleg);
}

/* Margins from the current ticks and labels. */
static void panel_margins(ctx *C, panel *P)
{
    rl_axes *ax = P->ax;
    char buf[512];
    double ml = PAD + TICK_LEN + 3 + rl_plot_max_w(&P->yt);
    rl_plot_axis_label_text(&ax->ya, buf, sizeof buf);
    if (buf[0])
        ml += C->cap_label + 0.25 * FS_LABEL + 8;
    double xtick_h = C->cap_tick;
    if (P->xt.rotate) {
        double w = rl_plot_max_w(&P->xt);
        if (w > P->ch * 0.4)
            w = P->ch * 0.4;
        xtick_h = w * 0.7071 + C->cap_tick * 0.7071;
    }
    double mb = TICK_LEN + 4 + xtick_h + PAD + 0.25 * FS_TICK;
    rl_plot_axis_label_text(&ax->xa, buf, sizeof buf);
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
    if (P->leg_outside && P->nleg > 0) {
        /* Outside, the legend runs from the plot's top to the foot of its cell; entries
           that would not fit there go into further columns instead of off the figure (a
           lab's 20 vehicles and a limit in a panel 2.6 in high). */
        double row = FS_LEGEND * 1.45;
        legend_columns(P, (int)floor((P->ch - mt - 7 - 2) / row));
        mr = PAD + 8 + P->leg_w;
    } else if (P->nleg > 0) {
        legend_columns(P, P->nleg);
    }
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
void rl_plot_layout(ctx *C, double top, double bottom)
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
