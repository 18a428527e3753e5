/* runlab/plot.h: figures drawn by runlab itself (cairo), for papers and reports.
 * A figure is a grid of panels (axes); each panel holds series of one or more kinds (line
 * with optional shaded band, step, scatter, box, ECDF, bar / stacked bar, histogram) and
 * is saved as PNG, SVG (text stays <text>) or PDF from one layout and drawing code path.
 * Input arrays are copied; NaN and infinite values (and any beyond +-1e300, which no axis
 * range can hold) are skipped and counted in a note. */
#ifndef RUNLAB_PLOT_H
#define RUNLAB_PLOT_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rl_figure rl_figure;
typedef struct rl_axes rl_axes;

/* Output formats. RL_PLOT_AUTO picks the format from the file name's extension. */
typedef enum rl_plot_format {
    RL_PLOT_AUTO = 0,
    RL_PLOT_PNG,
    RL_PLOT_SVG,
    RL_PLOT_PDF
} rl_plot_format;

typedef enum rl_plot_scale { RL_SCALE_LINEAR = 0, RL_SCALE_LOG = 1 } rl_plot_scale;

/* Where a panel's legend goes. BEST takes the inside corner that covers the least data
 * and moves the legend outside (right of the panel) when every corner covers some. Outside,
 * entries that would run past the foot of the panel's cell go on in further columns. */
typedef enum rl_legend_pos {
    RL_LEGEND_BEST = 0,
    RL_LEGEND_OUTSIDE,
    RL_LEGEND_UPPER_RIGHT,
    RL_LEGEND_UPPER_LEFT,
    RL_LEGEND_LOWER_LEFT,
    RL_LEGEND_LOWER_RIGHT,
    RL_LEGEND_NONE
} rl_legend_pos;

/* How several rl_axes_bar series in one panel are arranged. */
typedef enum rl_bar_mode { RL_BAR_GROUPED = 0, RL_BAR_STACKED = 1 } rl_bar_mode;

/* Markers for scatter (and optionally line) series. AUTO cycles by series index, so shape
 * is a second cue beside colour. */
typedef enum rl_marker {
    RL_MARKER_AUTO = -1,
    RL_MARKER_NONE = 0,
    RL_MARKER_CIRCLE,
    RL_MARKER_SQUARE,
    RL_MARKER_TRIANGLE,
    RL_MARKER_DIAMOND,
    RL_MARKER_TRIANGLE_DOWN,
    RL_MARKER_PLUS,
    RL_MARKER_CROSS
} rl_marker;

enum {
    RL_PLOT_AUTO_STYLE = -1, /* colour / dash chosen from the series index */
    RL_PLOT_PALETTE_SIZE = 8 /* Okabe-Ito colours, see rl_plot_palette */
};

/* Options of one series. Initialise with rl_series_opts_init; every field has a sensible
 * default so only the ones that matter need setting. Strings and arrays are copied. */
typedef struct rl_series_opts {
    const char *label;  /* legend entry; NULL or "" for none */
    int color;          /* palette index 0..7, or RL_PLOT_AUTO_STYLE (default) */
    bool use_rgb;       /* draw in `rgb` instead of the palette colour (default false) */
    unsigned rgb;       /* 0xRRGGBB, used when use_rgb (e.g. rl_plot_vehicle_color) */
    bool below_lines;   /* scatter: drawn under the panel's lines, not over them (marks
                           a track should stay readable through); default false */
    int dash;           /* 0 solid, 1 dashed, 2 dotted, 3 dash-dot; AUTO cycles */
    double line_width;  /* pt; 0 = default (1.5) */
    rl_marker marker;   /* line default NONE, scatter default AUTO */
    double marker_size; /* pt (diameter); 0 = default (4.5) */
    double alpha;       /* 0 = default (1 for lines, 0.8 scatter, 0.55 histograms) */
    /* Line: a shaded band from band_lo[i] to band_hi[i] (both or neither). */
    const double *band_lo;
    const double *band_hi;
    /* Box: draw notches at median +- 1.57 IQR / sqrt(n) (McGill et al.). */
    bool notch;
    /* Histogram: number of bins (0 = Freedman-Diaconis, at most 200) and density
     * normalisation (area 1) instead of counts. */
    int bins;
    bool density;
} rl_series_opts;

/* Fills `opts` with the defaults (automatic colour, dash and marker; no label). */
RL_API void rl_series_opts_init(rl_series_opts *opts);

/* ---- Figures ------------------------------------------------------------------------
 * Figures are not thread-safe; different figures may be used from different threads.
 * Every function returns RL_OK or a negative rl_status with a message (runlab/error.h). */

/* A new figure of rows x cols panels (1..16 each), 6.4 x 4.8 inches at 100 dpi. */
RL_API int rl_figure_new(rl_figure **out, int rows, int cols);
/* Frees the figure, its panels and all copied data; NULL is a no-op. */
RL_API void rl_figure_free(rl_figure *fig);

/* Size in inches at `dpi` dots per inch (dpi 36..1200; sizes 1..100 in). Text and line
 * widths are in points (1/72 in), so a larger dpi gives a sharper, not a smaller, figure. */
RL_API int rl_figure_set_size_in(rl_figure *fig, double width_in, double height_in, double dpi);
/* Size in pixels at `dpi` (the PNG has exactly this size; SVG uses it as width/height). */
RL_API int rl_figure_set_size_px(rl_figure *fig, int width_px, int height_px, double dpi);
/* Figure title (suptitle) above every panel; NULL removes it. */
RL_API int rl_figure_set_title(rl_figure *fig, const char *title);

/* Panel at (row, col), borrowed from the figure; NULL when out of range. */
RL_API rl_axes *rl_figure_axes(rl_figure *fig, int row, int col);

/* Number of values skipped so far because they were NaN or infinite (or not positive
 * on a log axis, counted when the figure is drawn). */
RL_API size_t rl_figure_skipped(const rl_figure *fig);

/* Renders to `path`; `format` AUTO uses the extension (.png, .svg, .pdf, else RL_EINVAL).
 * PNG and SVG files are written atomically. */
RL_API int rl_figure_save(rl_figure *fig, const char *path, rl_plot_format format);

/* Renders to SVG in memory: a new NUL-terminated string owned by the caller (free()).
 * `id_prefix` (letters, digits, '-', '_'; NULL = "rl") keeps clip-path ids unique when
 * several figures are inlined in one HTML page. */
RL_API int rl_figure_to_svg(rl_figure *fig, const char *id_prefix, char **out, size_t *out_len);

/* ---- Panels ------------------------------------------------------------------------
 * Setters copy their strings (NULL clears) and return RL_OK, RL_EINVAL for a value out of
 * range, or RL_ENOMEM. */

RL_API int rl_axes_set_title(rl_axes *ax, const char *title);
/* Axis label and unit, drawn as "label [unit]"; either may be NULL. */
RL_API int rl_axes_set_xlabel(rl_axes *ax, const char *label, const char *unit);
RL_API int rl_axes_set_ylabel(rl_axes *ax, const char *label, const char *unit);
/* Log axes draw only positive values; the others are skipped and counted. */
RL_API int rl_axes_set_xscale(rl_axes *ax, rl_plot_scale scale);
RL_API int rl_axes_set_yscale(rl_axes *ax, rl_plot_scale scale);
/* Fixed limits; NaN for either end keeps it automatic. lo must be < hi when both set. */
RL_API int rl_axes_set_xlim(rl_axes *ax, double lo, double hi);
RL_API int rl_axes_set_ylim(rl_axes *ax, double lo, double hi);
RL_API int rl_axes_set_legend(rl_axes *ax, rl_legend_pos pos);
/* Bars: grouped or stacked, vertical (default) or horizontal. */
RL_API int rl_axes_set_bar_mode(rl_axes *ax, rl_bar_mode mode, bool horizontal);
/* Equal aspect (trajectories, maps): one data unit has the same length on x and y; the
 * limits of the axis with room to spare are widened. Linear axes only; fixed limits of
 * that axis are widened too. Default off. */
RL_API int rl_axes_set_equal_aspect(rl_axes *ax, bool on);
/* Light grid at the major ticks (default on). */
RL_API int rl_axes_set_grid(rl_axes *ax, bool on);

/* ---- Series -------------------------------------------------------------------------
 * `opts` may be NULL for defaults. Points with a non-finite x or y are skipped (and
 * counted); n == 0 is allowed and draws nothing (an empty panel keeps its axes). */

/* Polyline through (x[i], y[i]) in the given order; with band_lo/band_hi a shaded band
 * behind it. Long lines are decimated per pixel column (first, min, max, last kept), so
 * the drawing is identical to the full line and a million points render fast. */
RL_API int rl_axes_line(rl_axes *ax, const double *x, const double *y, size_t n,
                 const rl_series_opts *opts);
/* Step line: the value y[i] holds from x[i] to x[i+1] ("post" steps). */
RL_API int rl_axes_step(rl_axes *ax, const double *x, const double *y, size_t n,
                 const rl_series_opts *opts);
RL_API int rl_axes_scatter(rl_axes *ax, const double *x, const double *y, size_t n,
                    const rl_series_opts *opts);
/* Empirical CDF of `n` samples (a step from 0 to 1). */
RL_API int rl_axes_ecdf(rl_axes *ax, const double *values, size_t n, const rl_series_opts *opts);
/* Histogram of `n` samples; several histograms in one panel overlap translucently. */
RL_API int rl_axes_hist(rl_axes *ax, const double *values, size_t n, const rl_series_opts *opts);
/* One box (Tukey: box Q1..Q3, median line, whiskers to the most extreme sample within
 * 1.5 IQR, outliers as points) of `n` samples, placed at the next category slot and named
 * `name` on the category axis. Boxes and bars cannot share a panel (RL_ESTATE). */
RL_API int rl_axes_box(rl_axes *ax, const char *name, const double *values, size_t n,
                const rl_series_opts *opts);
/* One bar series: values[i] for categories[i], i < ncat. The first bar series of a panel
 * sets the categories; later ones must have the same ncat and may pass categories NULL.
 * Non-finite values draw no bar and are counted. */
RL_API int rl_axes_bar(rl_axes *ax, const char *const *categories, size_t ncat, const double *values,
                const rl_series_opts *opts);

/* ---- Palette and ticks ------------------------------------------------------------ */

/* Okabe-Ito colour `i` (mod 8) as 0xRRGGBB: blue, orange, bluish green, vermillion,
 * reddish purple, sky blue, black, yellow. */
RL_API unsigned rl_plot_palette(int i);

/* The colours that stand for vehicles, the same in every figure (time plots, maps):
 * rl_plot_vehicle_color(k) for the k-th vehicle (k >= 0; cycles after
 * RL_PLOT_VEHICLE_COLORS) as 0xRRGGBB. None of them is RL_PLOT_VIOLATION_COLOR (marks of
 * violations) or black (limits, maps), so a mark or a limit is never read as a vehicle.
 * Pure, thread-safe. */
enum { RL_PLOT_VEHICLE_COLORS = 12 };
RL_API unsigned rl_plot_vehicle_color(int k);
#define RL_PLOT_VIOLATION_COLOR 0xD55E00u /* Okabe-Ito vermillion */
#define RL_PLOT_LIMIT_COLOR 0x000000u     /* limits and thresholds (dashed) */

/* "Nice" ticks for [lo, hi]: multiples of the smallest step 1, 2 or 5 x 10^k that gives at
 * most `max_ticks` (>= 2) ticks inside the range. Writes up to `cap` values and the step;
 * returns the count (>= 1 for a finite lo <= hi, 0 otherwise). Pure, thread-safe. */
RL_API int rl_plot_ticks_linear(double lo, double hi, int max_ticks, double *ticks, int cap, double *step);
/* Log-axis ticks for [lo, hi] (lo > 0): powers of ten, every k-th decade so at most
 * `max_ticks` remain; when the range spans less than two decades, 2x and 5x are added. */
RL_API int rl_plot_ticks_log(double lo, double hi, int max_ticks, double *ticks, int cap);
/* Tick label for `v` on an axis with tick spacing `step`: SI prefixes (k, M, G, m, µ, n)
 * when |v| >= 1e4 or |v| < 1e-2, otherwise fixed decimals as the step needs; "−" (U+2212)
 * as minus sign. Returns the length written (truncated to cap - 1). */
RL_API size_t rl_plot_format_tick(double v, double step, char *buf, size_t cap);

/* "10" with a superscript exponent ("10⁻³") for the power of ten nearest to v > 0: the
 * labels of log axes that span beyond 0.01 .. 10^4. Returns the length written. */
RL_API size_t rl_plot_format_pow10(double v, char *buf, size_t cap);

/* Frees the process-wide font caches that cairo and fontconfig keep after the first text
 * is measured, so leak checkers (ASan, valgrind) see a clean exit. Call once at process
 * end, when no thread draws or uses cairo or fontconfig any more; drawing afterwards
 * still works (the caches are rebuilt). Never fails. */
RL_API void rl_plot_release_caches(void);

/* ---- Figure records ---------------------------------------------------------------
 * Beside "dir/name.ext" writes "dir/name.yaml": the figure files present with that stem
 * (name.png, name.svg, name.pdf), the command line, the inputs, the UTC time, runlab's
 * version and git sha, and the host provenance. Call it after saving every format. */
typedef struct rl_figure_record {
    int argc; /* command line; argc 0 reads /proc/self/cmdline */
    char *const *argv;
    const char *const *inputs; /* input files or directories (may be NULL) */
    size_t ninputs;
    const char *description; /* free text (may be NULL) */
} rl_figure_record;

/* Writes the record for `figure_path` (its extension is replaced by .yaml) atomically.
 * `rec` may be NULL (command line from /proc/self/cmdline, no inputs). Returns RL_OK,
 * RL_EINVAL for an empty path, RL_ENOMEM, or the I/O error of the write. Thread-safe. */
RL_API int rl_figure_record_write(const char *figure_path, const rl_figure_record *rec);

#ifdef __cplusplus
}
#endif
#endif
