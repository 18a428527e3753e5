/* The figure model behind runlab/plot.h: figures, panels and series. Adding a series
 * copies the caller's data, drops non-finite values (counting them for the figure's note)
 * and precomputes what the kind needs (ECDF ranks, histogram bins, box statistics). */
#include "analysis/plot_internal.h"

#include "runlab/error.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const unsigned okabe_ito[RL_PLOT_PALETTE_SIZE] = {0x0072B2, 0xE69F00, 0x009E73, 0xD55E00,
                                                         0xCC79A7, 0x56B4E9, 0x000000, 0xF0E442};

unsigned rl_plot_palette(int i)
{
    int k = i % RL_PLOT_PALETTE_SIZE;
    if (k < 0)
        k += RL_PLOT_PALETTE_SIZE;
    return okabe_ito[k];
}

/* Okabe-Ito without vermillion and black, then six of Paul Tol's (muted and dark) colours
 * that are neither red nor grey-black: twelve vehicles tell apart before colours repeat. */
static const unsigned vehicle_colors[RL_PLOT_VEHICLE_COLORS] = {
    0x0072B2, 0xE69F00, 0x009E73, 0xCC79A7, 0x56B4E9, 0xF0E442,
    0x332288, 0x44AA99, 0x999933, 0x882255, 0x8C510A, 0x7F7F7F};

unsigned rl_plot_vehicle_color(int k)
{
    int i = k % RL_PLOT_VEHICLE_COLORS;
    if (i < 0)
        i += RL_PLOT_VEHICLE_COLORS;
    return vehicle_colors[i];
}

void rl_series_opts_init(rl_series_opts *o)
{
    memset(o, 0, sizeof *o);
    o->color = RL_PLOT_AUTO_STYLE;
    o->dash = RL_PLOT_AUTO_STYLE;
    o->marker = RL_MARKER_AUTO;
}

/* Values beyond +-1e300 count as infinite: a plot range over them could not be divided
 * into pixels without overflowing. */
static bool drawable(double v)
{
    return fabs(v) <= 1e300;
}

static char *dup_or_null(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

/* Replaces *slot with a copy of s; false when out of memory. */
static bool set_str(char **slot, const char *s)
{
    char *c = NULL;
    if (s && *s && !(c = strdup(s)))
        return false;
    free(*slot);
    *slot = c;
    return true;
}

int rl_figure_new(rl_figure **out, int rows, int cols)
{
    if (!out || rows < 1 || rows > 16 || cols < 1 || cols > 16)
        return rl_error_set(RL_EINVAL, "plot: figure needs 1..16 rows and columns, got %dx%d", rows,
                            cols);
    rl_figure *f = calloc(1, sizeof *f);
    if (!f || !(f->axes = calloc((size_t)rows * (size_t)cols, sizeof *f->axes))) {
        free(f);
        return rl_error_set(RL_ENOMEM, "plot: out of memory");
    }
    f->rows = rows;
    f->cols = cols;
    f->w_in = 6.4;
    f->h_in = 4.8;
    f->dpi = 100;
    for (int i = 0; i < rows * cols; i++) {
        rl_axes *ax = &f->axes[i];
        ax->fig = f;
        ax->grid = true;
        ax->xa.fixed_lo = ax->xa.fixed_hi = NAN;
        ax->ya.fixed_lo = ax->ya.fixed_hi = NAN;
    }
    *out = f;
    return RL_OK;
}

static void series_free(rl_series *s)
{
    if (!s)
        return;
    free(s->label);
    free(s->x);
    free(s->y);
    free(s->lo);
    free(s->hi);
    free(s->edges);
    free(s->box.outliers);
    free(s->values);
    free(s->runs_pts);
    free(s->runs_start);
    free(s);
}

void rl_figure_free(rl_figure *fig)
{
    if (!fig)
        return;
    for (int i = 0; i < fig->rows * fig->cols; i++) {
        rl_axes *ax = &fig->axes[i];
        for (size_t k = 0; k < ax->nseries; k++)
            series_free(ax->series[k]);
        free(ax->series);
        for (size_t k = 0; k < ax->ncat; k++)
            free(ax->categories[k]);
        free(ax->categories);
        free(ax->title);
        free(ax->xa.label);
        free(ax->xa.unit);
        free(ax->ya.label);
        free(ax->ya.unit);
    }
    free(fig->axes);
    free(fig->title);
    free(fig);
}

int rl_figure_set_size_in(rl_figure *fig, double w, double h, double dpi)
{
    if (!(w >= 1 && w <= 100 && h >= 1 && h <= 100 && dpi >= 36 && dpi <= 1200))
        return rl_error_set(RL_EINVAL,
                            "plot: size %gx%g in at %g dpi is out of range "
                            "(1..100 in, 36..1200 dpi)",
                            w, h, dpi);
    fig->w_in = w;
    fig->h_in = h;
    fig->dpi = dpi;
    return RL_OK;
}

int rl_figure_set_size_px(rl_figure *fig, int w, int h, double dpi)
{
    if (!(dpi >= 36 && dpi <= 1200))
        return rl_error_set(RL_EINVAL, "plot: dpi %g out of range 36..1200", dpi);
    return rl_figure_set_size_in(fig, w / dpi, h / dpi, dpi);
}

int rl_figure_set_title(rl_figure *fig, const char *title)
{
    return set_str(&fig->title, title) ? RL_OK : rl_error_set(RL_ENOMEM, "plot: out of memory");
}

rl_axes *rl_figure_axes(rl_figure *fig, int row, int col)
{
    if (!fig || row < 0 || col < 0 || row >= fig->rows || col >= fig->cols)
        return NULL;
    return &fig->axes[row * fig->cols + col];
}

size_t rl_figure_skipped(const rl_figure *fig)
{
    return fig->skipped + fig->skipped_draw;
}

int rl_axes_set_title(rl_axes *ax, const char *title)
{
    return set_str(&ax->title, title) ? RL_OK : rl_error_set(RL_ENOMEM, "plot: out of memory");
}

static int set_label(rl_axis *a, const char *label, const char *unit)
{
    if (!set_str(&a->label, label) || !set_str(&a->unit, unit))
        return rl_error_set(RL_ENOMEM, "plot: out of memory");
    return RL_OK;
}

int rl_axes_set_xlabel(rl_axes *ax, const char *label, const char *unit)
{
    return set_label(&ax->xa, label, unit);
}

int rl_axes_set_ylabel(rl_axes *ax, const char *label, const char *unit)
{
    return set_label(&ax->ya, label, unit);
}

static int set_scale(rl_axis *a, rl_plot_scale s)
{
    if (s != RL_SCALE_LINEAR && s != RL_SCALE_LOG)
        return rl_error_set(RL_EINVAL, "plot: unknown axis scale %d", (int)s);
    a->scale = s;
    return RL_OK;
}

int rl_axes_set_xscale(rl_axes *ax, rl_plot_scale s)
{
    return set_scale(&ax->xa, s);
}

int rl_axes_set_yscale(rl_axes *ax, rl_plot_scale s)
{
    return set_scale(&ax->ya, s);
}

static int set_lim(rl_axis *a, double lo, double hi)
{
    if (isinf(lo) || isinf(hi) || (!isnan(lo) && !isnan(hi) && !(lo < hi)))
        return rl_error_set(RL_EINVAL, "plot: axis limits %g..%g: need finite lo < hi", lo, hi);
    a->fixed_lo = lo;
    a->fixed_hi = hi;
    return RL_OK;
}

int rl_axes_set_xlim(rl_axes *ax, double lo, double hi)
{
    return set_lim(&ax->xa, lo, hi);
}

int rl_axes_set_ylim(rl_axes *ax, double lo, double hi)
{
    return set_lim(&ax->ya, lo, hi);
}

int rl_axes_set_legend(rl_axes *ax, rl_legend_pos pos)
{
    if ((int)pos < RL_LEGEND_BEST || pos > RL_LEGEND_NONE)
        return rl_error_set(RL_EINVAL, "plot: unknown legend position %d", (int)pos);
    ax->legend = pos;
    return RL_OK;
}

int rl_axes_set_bar_mode(rl_axes *ax, rl_bar_mode mode, bool horizontal)
{
    if (mode != RL_BAR_GROUPED && mode != RL_BAR_STACKED)
        return rl_error_set(RL_EINVAL, "plot: unknown bar mode %d", (int)mode);
    ax->bar_mode = mode;
    ax->bar_horizontal = horizontal;
    return RL_OK;
}

int rl_axes_set_equal_aspect(rl_axes *ax, bool on)
{
    ax->equal = on;
    return RL_OK;
}

int rl_axes_set_grid(rl_axes *ax, bool on)
{
    ax->grid = on;
    return RL_OK;
}

/* ---- Series ---------------------------------------------------------------------- */

static rl_series *series_new(rl_axes *ax, rl_kind kind, const rl_series_opts *opts)
{
    rl_series_opts def;
    if (!opts) {
        rl_series_opts_init(&def);
        opts = &def;
    }
    if (ax->nseries == ax->capseries) {
        size_t cap = ax->capseries ? ax->capseries * 2 : 8;
        rl_series **p = realloc(ax->series, cap * sizeof *p);
        if (!p)
            return NULL;
        ax->series = p;
        ax->capseries = cap;
    }
    rl_series *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->kind = kind;
    s->opts = *opts;
    s->opts.label = NULL;
    s->opts.band_lo = s->opts.band_hi = NULL;
    if (opts->label && *opts->label && !(s->label = dup_or_null(opts->label))) {
        free(s);
        return NULL;
    }
    /* Automatic styles count only the series that take a colour slot of their own. */
    int idx = 0;
    for (size_t i = 0; i < ax->nseries; i++)
        if (ax->series[i]->kind != RL_K_BOX)
            idx++;
    s->index = idx;
    s->color = opts->color >= 0 ? opts->color % RL_PLOT_PALETTE_SIZE : idx % RL_PLOT_PALETTE_SIZE;
    s->rgb = opts->use_rgb ? opts->rgb & 0xFFFFFFu : rl_plot_palette(s->color);
    s->dash = opts->dash >= 0 ? opts->dash % 4 : idx % 4;
    if (opts->marker == RL_MARKER_AUTO)
        s->marker = kind == RL_K_SCATTER ? (rl_marker)(1 + idx % 7) : RL_MARKER_NONE;
    else
        s->marker = opts->marker;
    return s;
}

static int add_series(rl_axes *ax, rl_series *s)
{
    ax->series[ax->nseries++] = s;
    return RL_OK;
}

static int oom(rl_series *s)
{
    series_free(s);
    return rl_error_set(RL_ENOMEM, "plot: out of memory");
}

static int check_args(rl_axes *ax, const void *a, const void *b, size_t n)
{
    if (!ax)
        return rl_error_set(RL_EINVAL, "plot: NULL axes");
    if (n > 0 && (!a || !b))
        return rl_error_set(RL_EINVAL, "plot: NULL data for %zu points", n);
    if (n > SIZE_MAX / (4 * sizeof(double)))
        return rl_error_set(RL_ERANGE, "plot: too many points (%zu)", n);
    return RL_OK;
}

static int add_xy(rl_axes *ax, rl_kind kind, const double *x, const double *y, size_t n,
                  const rl_series_opts *opts)
{
    int rc = check_args(ax, x, y, n);
    if (rc < 0)
        return rc;
    bool band = opts && opts->band_lo && opts->band_hi && kind == RL_K_LINE;
    rl_series *s = series_new(ax, kind, opts);
    if (!s)
        return rl_error_set(RL_ENOMEM, "plot: out of memory");
    size_t cap = n ? n : 1;
    s->x = malloc(cap * sizeof(double));
    s->y = malloc(cap * sizeof(double));
    if (band) {
        s->lo = malloc(cap * sizeof(double));
        s->hi = malloc(cap * sizeof(double));
    }
    if (!s->x || !s->y || (band && (!s->lo || !s->hi)))
        return oom(s);
    size_t m = 0;
    bool sorted = true;
    double last_x = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!drawable(x[i]) || !drawable(y[i]) ||
            (band && (!drawable(opts->band_lo[i]) || !drawable(opts->band_hi[i])))) {
            ax->fig->skipped++;
            /* Lines break at a gap instead of bridging it: one NaN marker per gap. */
            if (kind != RL_K_SCATTER && m > 0 && !isnan(s->x[m - 1])) {
                s->x[m] = s->y[m] = NAN;
                if (band)
                    s->lo[m] = s->hi[m] = NAN;
                m++;
            }
            continue;
        }
        if (m > 0 && x[i] < last_x)
            sorted = false;
        last_x = x[i];
        s->x[m] = x[i];
        s->y[m] = y[i];
        if (band) {
            s->lo[m] = opts->band_lo[i];
            s->hi[m] = opts->band_hi[i];
        }
        m++;
    }
    s->n = m;
    s->x_sorted = sorted;
    return add_series(ax, s);
}

int rl_axes_line(rl_axes *ax, const double *x, const double *y, size_t n,
                 const rl_series_opts *opts)
{
    if (opts && (!opts->band_lo) != (!opts->band_hi))
        return rl_error_set(RL_EINVAL, "plot: a band needs both band_lo and band_hi");
    return add_xy(ax, RL_K_LINE, x, y, n, opts);
}

int rl_axes_step(rl_axes *ax, const double *x, const double *y, size_t n,
                 const rl_series_opts *opts)
{
    return add_xy(ax, RL_K_STEP, x, y, n, opts);
}

int rl_axes_scatter(rl_axes *ax, const double *x, const double *y, size_t n,
                    const rl_series_opts *opts)
{
    return add_xy(ax, RL_K_SCATTER, x, y, n, opts);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Finite values of v, sorted, in a new array; counts the others as skipped. */
static double *finite_sorted(rl_axes *ax, const double *v, size_t n, size_t *m_out)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (!d)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (drawable(v[i]))
            d[m++] = v[i];
        else
            ax->fig->skipped++;
    }
    qsort(d, m, sizeof *d, cmp_double);
    *m_out = m;
    return d;
}

double rl_plot_quantile_sorted(const double *d, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)floor(pos);
    if (i + 1 >= n)
        return d[n - 1];
    double f = pos - (double)i;
    return d[i] + f * (d[i + 1] - d[i]);
}

int rl_axes_ecdf(rl_axes *ax, const double *values, size_t n, const rl_series_opts *opts)
{
    int rc = check_args(ax, values, values, n);
    if (rc < 0)
        return rc;
    rl_series *s = series_new(ax, RL_K_ECDF, opts);
    if (!s)
        return rl_error_set(RL_ENOMEM, "plot: out of memory");
    size_t m;
    if (!(s->x = finite_sorted(ax, values, n, &m)) ||
        !(s->y = malloc((m ? m : 1) * sizeof(double))))
        return oom(s);
    for (size_t i = 0; i < m; i++)
        s->y[i] = (double)(i + 1) / (double)m;
    s->n = m;
    s->x_sorted = true;
    return add_series(ax, s);
}

int rl_axes_hist(rl_axes *ax, const double *values, size_t n, const rl_series_opts *opts)
{
    int rc = check_args(ax, values, values, n);
    if (rc < 0)
        return rc;
    if (opts && (opts->bins < 0 || opts->bins > 10000))
        return rl_error_set(RL_EINVAL, "plot: histogram bins %d out of range 0..10000", opts->bins);
    rl_series *s = series_new(ax, RL_K_HIST, opts);
    if (!s)
        return rl_error_set(RL_ENOMEM, "plot: out of memory");
    size_t m;
    double *d = finite_sorted(ax, values, n, &m);
    if (!d)
        return oom(s);
    size_t nb = opts && opts->bins > 0 ? (size_t)opts->bins : 0;
    double lo = m ? d[0] : 0, hi = m ? d[m - 1] : 1;
    if (hi - lo <= fmax(fabs(lo), fabs(hi)) * 1e-12) { /* one value, up to rounding */
        double pad = fmax(0.5, fabs(lo) * 0.05);
        lo -= pad;
        hi += pad;
    }
    if (nb == 0) {
        /* Freedman-Diaconis; Sturges when the IQR is zero. */
        double iqr =
            m ? rl_plot_quantile_sorted(d, m, 0.75) - rl_plot_quantile_sorted(d, m, 0.25) : 0;
        double w = iqr > 0 ? 2 * iqr / cbrt((double)m) : 0;
        nb = w > 0 ? (size_t)ceil((hi - lo) / w) : (size_t)ceil(log2((double)(m ? m : 1)) + 1);
        if (nb < 1)
            nb = 1;
        if (nb > 200)
            nb = 200;
    }
    s->edges = malloc((nb + 1) * sizeof(double));
    s->y = calloc(nb, sizeof(double));
    if (!s->edges || !s->y) {
        free(d);
        return oom(s);
    }
    double w = (hi - lo) / (double)nb;
    for (size_t i = 0; i <= nb; i++)
        s->edges[i] = lo + w * (double)i;
    s->edges[nb] = hi;
    for (size_t i = 0; i < m; i++) {
        size_t b = (size_t)((d[i] - lo) / w);
        if (b >= nb)
            b = nb - 1;
        s->y[b] += 1;
    }
    if (opts && opts->density && m > 0)
        for (size_t i = 0; i < nb; i++)
            s->y[i] /= (double)m * w;
    s->nbins = nb;
    s->n = m;
    free(d);
    return add_series(ax, s);
}

static int add_category(rl_axes *ax, const char *name)
{
    char **p = realloc(ax->categories, (ax->ncat + 1) * sizeof *p);
    if (!p)
        return RL_ENOMEM;
    ax->categories = p;
    if (!(p[ax->ncat] = strdup(name ? name : "")))
        return RL_ENOMEM;
    ax->ncat++;
    return RL_OK;
}

static bool has_kind(const rl_axes *ax, rl_kind k)
{
    for (size_t i = 0; i < ax->nseries; i++)
        if (ax->series[i]->kind == k)
            return true;
    return false;
}

int rl_axes_box(rl_axes *ax, const char *name, const double *values, size_t n,
                const rl_series_opts *opts)
{
    int rc = check_args(ax, values, values, n);
    if (rc < 0)
        return rc;
    if (has_kind(ax, RL_K_BAR))
        return rl_error_set(RL_ESTATE, "plot: boxes and bars cannot share a panel");
    rl_series *s = series_new(ax, RL_K_BOX, opts);
    if (!s)
        return rl_error_set(RL_ENOMEM, "plot: out of memory");
    size_t m;
    double *d = finite_sorted(ax, values, n, &m);
    if (!d)
        return oom(s);
    rl_box_stats *b = &s->box;
    b->n = m;
    if (m > 0) {
        b->q1 = rl_plot_quantile_sorted(d, m, 0.25);
        b->med = rl_plot_quantile_sorted(d, m, 0.5);
        b->q3 = rl_plot_quantile_sorted(d, m, 0.75);
        double iqr = b->q3 - b->q1;
        double lo_fence = b->q1 - 1.5 * iqr, hi_fence = b->q3 + 1.5 * iqr;
        size_t i0 = 0, i1 = m - 1;
        while (i0 < m && d[i0] < lo_fence)
            i0++;
        while (i1 > 0 && d[i1] > hi_fence)
            i1--;
        b->wlo = d[i0];
        b->whi = d[i1];
        b->noutliers = i0 + (m - 1 - i1);
        b->outliers = malloc((b->noutliers ? b->noutliers : 1) * sizeof(double));
        if (!b->outliers) {
            free(d);
            return oom(s);
        }
        size_t k = 0;
        for (size_t i = 0; i < i0; i++)
            b->outliers[k++] = d[i];
        for (size_t i = i1 + 1; i < m; i++)
            b->outliers[k++] = d[i];
        double half = 1.57 * iqr / sqrt((double)m);
        b->notch_lo = b->med - half;
        b->notch_hi = b->med + half;
    }
    free(d);
    s->slot = ax->nboxes;
    if (add_category(ax, name) != RL_OK)
        return oom(s);
    ax->nboxes++;
    return add_series(ax, s);
}

int rl_axes_bar(rl_axes *ax, const char *const *categories, size_t ncat, const double *values,
                const rl_series_opts *opts)
{
    int rc = check_args(ax, values, values, ncat);
    if (rc < 0)
        return rc;
    if (ncat == 0 || ncat > 10000)
        return rl_error_set(RL_EINVAL, "plot: bar series needs 1..10000 categories, got %zu", ncat);
    if (has_kind(ax, RL_K_BOX))
        return rl_error_set(RL_ESTATE, "plot: boxes and bars cannot share a panel");
    bool first = !has_kind(ax, RL_K_BAR);
    if (first && !categories)
        return rl_error_set(RL_EINVAL, "plot: the first bar series needs category names");
    if (!first && ncat != ax->ncat)
        return rl_error_set(RL_EINVAL, "plot: bar series has %zu categories, the panel has %zu",
                            ncat, ax->ncat);
    rl_series *s = series_new(ax, RL_K_BAR, opts);
    if (!s || !(s->values = malloc(ncat * sizeof(double))))
        return oom(s);
    for (size_t i = 0; i < ncat; i++) {
        s->values[i] = values[i];
        if (!drawable(values[i])) {
            s->values[i] = NAN;
            ax->fig->skipped++;
        }
    }
    s->ncat = ncat;
    if (first)
        for (size_t i = 0; i < ncat; i++)
            if (add_category(ax, categories[i]) != RL_OK)
                return oom(s);
    return add_series(ax, s);
}
