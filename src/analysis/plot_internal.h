/* Internals of the plot module shared by its source files: the figure model, a growable
 * byte buffer, and the renderer interface. Layout and drawing (plot_draw.c and its helpers,
 * plot_draw.h) talk only to rl_rend, which has a cairo implementation (PNG, PDF) and a
 * direct SVG writer, so every format comes from one code path while SVG text stays <text>. */
#ifndef RUNLAB_PLOT_INTERNAL_H
#define RUNLAB_PLOT_INTERNAL_H

#include "core/text.h"
#include "runlab/plot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Byte buffer (core/text.h) plus the XML side of it ------------------------- */
/* Appends `s` escaped for XML/HTML text and attributes (&<>"' and control characters;
 * invalid UTF-8 becomes U+FFFD). */
void rl_buf_put_escaped(rl_buf *b, const char *s);
/* Appends a coordinate with at most 2 decimals, trailing zeros trimmed. */
void rl_buf_put_num(rl_buf *b, double v);

/* Appends a PNG of a cairo ARGB32 image (w x h pixels, rows `stride` bytes apart), the
 * pixels cairo's own writer stores (plot_png.c). */
int rl_png_encode_argb32(const unsigned char *data, int w, int h, int stride, rl_buf *out);

/* ---- Renderer ------------------------------------------------------------------------
 * Coordinates are points (1/72 in) from the top-left corner, y down. */
typedef struct rl_rgba {
    double r, g, b, a;
} rl_rgba;

typedef struct rl_pen {
    rl_rgba color;
    double width;       /* pt */
    const double *dash; /* on/off lengths in pt, NULL for solid */
    int ndash;
    bool round; /* round caps and joins (lines); miter otherwise (boxes) */
} rl_pen;

typedef struct rl_rend rl_rend;
typedef struct rl_rend_ops {
    /* Open or closed polyline of n points (xy interleaved); fill and pen may be NULL. */
    void (*path)(rl_rend *r, const double *xy, size_t n, bool closed, const rl_rgba *fill,
                 const rl_pen *pen);
    void (*circle)(rl_rend *r, double cx, double cy, double radius, const rl_rgba *fill,
                   const rl_pen *pen);
    /* Text with its baseline at y; ha 0 / 0.5 / 1 puts x at the left / centre / right;
     * the text is rotated by angle_deg (counter-clockwise) about (x, y). */
    void (*text)(rl_rend *r, double x, double y, const char *utf8, double size, bool bold,
                 const rl_rgba *color, double ha, double angle_deg);
    void (*clip_push)(rl_rend *r, double x, double y, double w, double h);
    void (*clip_pop)(rl_rend *r);
} rl_rend_ops;

struct rl_rend {
    const rl_rend_ops *ops;
};

/* Text metrics from cairo's toy font API (DejaVu Sans), unhinted so they do not depend on
 * the output scale; used by layout for every backend. Not thread-safe per instance. */
typedef struct rl_measure rl_measure;
int rl_measure_new(rl_measure **out);
void rl_measure_free(rl_measure *m);
/* Advance width; ascent/descent of the font (not of the string) at `size`. */
double rl_measure_text(rl_measure *m, const char *utf8, double size, bool bold);
void rl_measure_font(rl_measure *m, double size, double *ascent, double *descent);

#define RL_PLOT_FONT "DejaVu Sans"

/* SVG backend: writes into `out` (a document with a <svg> root of width_px x height_px
 * showing w_pt x h_pt user units). */
typedef struct rl_svg_rend rl_svg_rend;
int rl_svg_rend_begin(rl_svg_rend **out, rl_buf *buf, double w_pt, double h_pt, double w_px,
                      double h_px, const char *id_prefix);
rl_rend *rl_svg_rend_base(rl_svg_rend *s);
void rl_svg_rend_end(rl_svg_rend *s);

/* Strokes open polylines with round caps and joins in one colour onto an ARGB32 image of
 * w x h pixels (plot_stroke.c): `xy` and `width` in device pixels, `argb` the
 * premultiplied pixel of the colour (opaque or translucent), `clip` = {x0, y0, x1, y1} in pixels (fractional edges
 * are anti-aliased). The union of the segments is painted once. One stroker per image;
 * not thread-safe per instance. */
typedef struct rl_stroker rl_stroker;
int rl_stroker_new(rl_stroker **out, int w, int h);
void rl_stroker_free(rl_stroker *s);
void rl_stroker_polyline(rl_stroker *s, unsigned char *data, int stride, const double *xy,
                         size_t n, double width, uint32_t argb, const double clip[4]);

/* Cairo backend over an existing cairo context (PNG image or PDF surface). */
typedef struct rl_cairo_rend rl_cairo_rend;
int rl_cairo_rend_new(rl_cairo_rend **out, void *cairo_context);
rl_rend *rl_cairo_rend_base(rl_cairo_rend *c);
void rl_cairo_rend_free(rl_cairo_rend *c);

/* ---- Figure model -------------------------------------------------------------------- */
typedef enum rl_kind {
    RL_K_LINE,
    RL_K_STEP,
    RL_K_SCATTER,
    RL_K_ECDF,
    RL_K_HIST,
    RL_K_BOX,
    RL_K_BAR
} rl_kind;

typedef struct rl_box_stats {
    double q1, med, q3, wlo, whi, notch_lo, notch_hi;
    double *outliers;
    size_t noutliers, n;
} rl_box_stats;

typedef struct rl_series {
    rl_kind kind;
    char *label;
    rl_series_opts opts; /* band pointers cleared; data lives below */
    int index;           /* order of the series in its panel: drives automatic styles */
    int color, dash;
    unsigned rgb; /* the colour drawn: opts.rgb or the palette's colour `color` */
    rl_marker marker;
    /* Line, step, scatter, ecdf: finite points. ECDF: x sorted, y = rank / n. */
    double *x, *y, *lo, *hi;
    size_t n;
    bool x_sorted;
    /* The points' finite extent per axis (0 x, 1 y, with the band) and scale (0 linear,
     * 1 log: positive only), kept at the first layout (a series never changes): a figure
     * is laid out once per format, and a long series took a scan each time. */
    double ext_lo[2][2], ext_hi[2][2];
    bool ext_any[2][2], ext_known[2][2];
    /* The line's decimated runs in page coordinates (plot_series.c) for the layout in
     * runs_key: the PNG and the SVG of a figure share one layout. */
    double runs_key[13];
    double *runs_pts; /* runs_npts points, x y interleaved */
    size_t runs_npts, *runs_start, runs_n; /* run k: points runs_start[k] .. [k + 1] */
    /* Histogram: nbins bars from edges[i] to edges[i+1] with heights y[i]. */
    double *edges;
    size_t nbins;
    /* Box: one box at category slot `slot`. */
    rl_box_stats box;
    int slot;
    /* Bar: values per category (NaN = no bar). */
    double *values;
    size_t ncat;
} rl_series;

typedef struct rl_axis {
    char *label, *unit;
    rl_plot_scale scale;
    double fixed_lo, fixed_hi; /* NaN = auto */
} rl_axis;

struct rl_axes {
    rl_figure *fig;
    char *title;
    rl_axis xa, ya;
    rl_legend_pos legend;
    rl_bar_mode bar_mode;
    bool bar_horizontal;
    bool grid;
    bool equal; /* same length per data unit on x and y */
    rl_series **series;
    size_t nseries, capseries;
    char **categories; /* box names or bar categories */
    size_t ncat;
    int nboxes;
    size_t skipped_nonpos; /* counted at draw time */
};

struct rl_figure {
    int rows, cols;
    double w_in, h_in, dpi;
    char *title;
    rl_axes *axes;
    size_t skipped; /* NaN / inf at insertion */
    size_t skipped_draw;
};

/* Draws the whole figure with `r`; `m` measures text. Returns RL_OK or RL_ENOMEM. */
int rl_plot_draw(rl_figure *fig, rl_rend *r, rl_measure *m);

/* Quartile by linear interpolation (type 7) of sorted data. */
double rl_plot_quantile_sorted(const double *sorted, size_t n, double q);

#endif
