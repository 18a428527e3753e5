/* The series of a panel drawn through rl_rend: colours and pens, per-pixel-column
 * decimation of long lines, every series kind, and the occupancy grid the same drawing
 * fills when plot_legend.c looks for the emptiest corner. Called by plot_draw.c and
 * plot_legend.c. */
#include "analysis/plot_draw.h"

#include "runlab/error.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double DASH_DASHED[] = {5.5, 2.5};
static const double DASH_DOTTED[] = {1.2, 2.2};
static const double DASH_DASHDOT[] = {6, 2.2, 1.2, 2.2};

rl_rgba rl_plot_palette_rgba(int i, double a)
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
rl_rgba rl_plot_series_rgba(const rl_series *s, double a)
{
    return rgb_rgba(s->rgb, a);
}

rl_pen rl_plot_series_pen(const rl_series *s, bool dashed)
{
    rl_pen p = {rl_plot_series_rgba(s, 1), s->opts.line_width > 0 ? s->opts.line_width : 1.5, NULL,
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

/* ---- Occupancy grid for legend placement ---------------------------------------------- */
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

int rl_plot_occ_count(const occ *o, double x0, double y0, double x1, double y1)
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
            o->hit[k] = rl_plot_occ_count(o, o->boxes[k][0], o->boxes[k][1], o->boxes[k][2],
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
void rl_plot_rect_path(rl_rend *r, double x0, double y0, double x1, double y1, const rl_rgba *fill,
                       const rl_pen *pen)
{
    double xy[8] = {x0, y0, x1, y0, x1, y1, x0, y1};
    r->ops->path(r, xy, 4, true, fill, pen);
}

void rl_plot_line2(rl_rend *r, double x0, double y0, double x1, double y1, const rl_pen *pen)
{
    double xy[4] = {x0, y0, x1, y1};
    r->ops->path(r, xy, 2, false, NULL, pen);
}

void rl_plot_draw_marker(rl_rend *r, rl_marker mk, double x, double y, double size,
                         const rl_rgba *fill, const rl_pen *edge)
{
    double h = size / 2;
    switch (mk) {
    case RL_MARKER_NONE:
    case RL_MARKER_AUTO: return;
    case RL_MARKER_CIRCLE: r->ops->circle(r, x, y, h, fill, edge); return;
    case RL_MARKER_SQUARE: {
        double s = h * 0.886; /* same area as the circle */
        rl_plot_rect_path(r, x - s, y - s, x + s, y + s, fill, edge);
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
            rl_plot_line2(r, x - s, y, x + s, y, &p);
            rl_plot_line2(r, x, y - s, x, y + s, &p);
        } else {
            rl_plot_line2(r, x - s, y - s, x + s, y + s, &p);
            rl_plot_line2(r, x - s, y + s, x + s, y - s, &p);
        }
        return;
    }
    }
}

double rl_plot_marker_size(const rl_series *s)
{
    return s->opts.marker_size > 0 ? s->opts.marker_size : 4.5;
}

/* ---- Series drawing ------------------------------------------------------------------ */
static void draw_band(ctx *C, panel *P, const rl_series *s, occ *o)
{
    runs hi = {0}, lo = {0};
    series_runs(C, P, s, 2, &hi);
    series_runs(C, P, s, 1, &lo);
    rl_rgba fill = rl_plot_series_rgba(s, 0.22);
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
    rl_pen pen = rl_plot_series_pen(s, true);
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
            rl_plot_draw_marker(C->r, s->marker, xf(&P->tx, s->x[i]), xf(&P->ty, s->y[i]), rl_plot_marker_size(s),
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
    rl_rgba fill = rl_plot_series_rgba(s, s->opts.alpha > 0 ? s->opts.alpha : 0.8);
    double ms = rl_plot_marker_size(s), slack = ms;
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
            rl_plot_draw_marker(C->r, s->marker, px, py, ms, &fill, NULL);
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
        rl_rgba fill = rl_plot_series_rgba(s, s->opts.alpha > 0 ? s->opts.alpha : 0.4);
        C->r->ops->path(C->r, poly.v, poly.n, true, &fill, NULL);
    } else if (!o) {
        rl_pen pen = rl_plot_series_pen(s, false);
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
    rl_rgba edge_c = own ? rl_plot_series_rgba(s, 1) : rl_plot_palette_rgba(0, 1);
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
    rl_rgba fill = own ? rl_plot_series_rgba(s, 0.25) : rl_plot_palette_rgba(0, 0.25);
    rl_pen med_pen = {rl_plot_palette_rgba(3, 1), 1.8, NULL, 0, false};
    if (own && s->rgb == rl_plot_palette(3))
        med_pen.color = C_BLACK;
    rl_plot_line2(C->r, xc, yq1, xc, ywl, &pen);
    rl_plot_line2(C->r, xc, yq3, xc, ywh, &pen);
    rl_plot_line2(C->r, xc - cw, ywl, xc + cw, ywl, &pen);
    rl_plot_line2(C->r, xc - cw, ywh, xc + cw, ywh, &pen);
    double nw = 0;
    if (s->opts.notch) {
        double nlo = fmax(b->notch_lo, b->q1), nhi = fmin(b->notch_hi, b->q3);
        double yl = xf(&P->ty, nlo), yh = xf(&P->ty, nhi);
        nw = hw * 0.5;
        double xy[] = {xc - hw, yq1, xc + hw, yq1, xc + hw, yl, xc + hw - nw, ym, xc + hw, yh,
                       xc + hw, yq3, xc - hw, yq3, xc - hw, yh, xc - hw + nw, ym, xc - hw, yl};
        C->r->ops->path(C->r, xy, 10, true, &fill, &pen);
    } else {
        rl_plot_rect_path(C->r, xc - hw, yq3, xc + hw, yq1, &fill, &pen);
    }
    rl_plot_line2(C->r, xc - hw + nw, ym, xc + hw - nw, ym, &med_pen);
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
            rl_rgba fill = rl_plot_series_rgba(s, s->opts.alpha > 0 ? s->opts.alpha : 1);
            /* A thin white edge separates stacked and adjacent bars. */
            rl_pen edge = {C_WHITE, 0.6, NULL, 0, false};
            rl_plot_rect_path(C->r, x0, y0, x1, y1, &fill, &edge);
        }
    }
}

void rl_plot_draw_series(ctx *C, panel *P, occ *o)
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
