/* The cairo renderer (PNG and PDF) and the text measurer every backend's layout uses.
 * Fonts go through cairo's toy API with DejaVu Sans and unhinted metrics, so a label
 * measures the same at any DPI and in the SVG writer as on a cairo surface. Long opaque
 * polylines on an image are stroked by plot_stroke.c. */
#include "analysis/plot_internal.h"

#include "runlab/error.h"

#include <cairo.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct rl_measure {
    cairo_surface_t *surface;
    cairo_t *cr;
};

/* Every use of fonts (selecting one, measuring, drawing text) holds this lock: different
 * figures may be drawn on different threads, and the toy font API's faces, with their
 * FreeType faces, are shared by all cairo contexts of the process (TSan saw two threads
 * inside one FreeType face). Text is a small part of drawing a figure, so figures still
 * draw in parallel. */
static pthread_mutex_t font_lock = PTHREAD_MUTEX_INITIALIZER;

static void set_font(cairo_t *cr, double size, bool bold)
{
    cairo_select_font_face(cr, RL_PLOT_FONT, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

static void unhinted(cairo_t *cr)
{
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_set_font_options(cr, fo);
    cairo_font_options_destroy(fo);
}

int rl_measure_new(rl_measure **out)
{
    rl_measure *m = calloc(1, sizeof *m);
    if (!m)
        return rl_error_set(RL_ENOMEM, "plot: out of memory");
    m->surface = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
    m->cr = cairo_create(m->surface);
    if (cairo_status(m->cr) != CAIRO_STATUS_SUCCESS) {
        rl_measure_free(m);
        return rl_error_set(RL_ENOMEM, "plot: cannot create a cairo context");
    }
    unhinted(m->cr);
    *out = m;
    return RL_OK;
}

void rl_measure_free(rl_measure *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&font_lock); /* drops the context's font references */
    if (m->cr)
        cairo_destroy(m->cr);
    if (m->surface)
        cairo_surface_destroy(m->surface);
    pthread_mutex_unlock(&font_lock);
    free(m);
}

double rl_measure_text(rl_measure *m, const char *utf8, double size, bool bold)
{
    pthread_mutex_lock(&font_lock);
    set_font(m->cr, size, bold);
    cairo_text_extents_t te;
    cairo_text_extents(m->cr, utf8, &te);
    pthread_mutex_unlock(&font_lock);
    return te.x_advance;
}

void rl_measure_font(rl_measure *m, double size, double *ascent, double *descent)
{
    pthread_mutex_lock(&font_lock);
    set_font(m->cr, size, false);
    cairo_font_extents_t fe;
    cairo_font_extents(m->cr, &fe);
    /* Cap height of digits and capitals, not the font's ascent (which includes room for
     * accents): centring labels on it looks right. */
    cairo_text_extents_t te;
    cairo_text_extents(m->cr, "0H", &te);
    pthread_mutex_unlock(&font_lock);
    if (ascent)
        *ascent = -te.y_bearing;
    if (descent)
        *descent = fe.descent;
}

enum { CLIP_DEPTH = 8 };

struct rl_cairo_rend {
    rl_rend base;
    cairo_t *cr;
    /* Long polylines on an image are stroked by plot_stroke.c: the image's stroker, the
     * clips pushed (device pixels; each within the one before), the last colour's pixel. */
    rl_stroker *stroker;
    bool no_stroker; /* creating it failed: cairo strokes everything */
    double clips[CLIP_DEPTH][4];
    int nclips; /* may exceed CLIP_DEPTH: the deeper clips are not known, cairo strokes */
    rl_rgba pixel_color;
    uint32_t pixel;
    bool pixel_known;
    double *dev; /* the polyline in device pixels */
    size_t dev_cap;
};

static cairo_t *ctx(rl_rend *r)
{
    return ((rl_cairo_rend *)r)->cr;
}

static void fill_stroke(cairo_t *cr, const rl_rgba *fill, const rl_pen *pen)
{
    if (fill) {
        cairo_set_source_rgba(cr, fill->r, fill->g, fill->b, fill->a);
        if (pen && pen->width > 0)
            cairo_fill_preserve(cr);
        else
            cairo_fill(cr);
    }
    if (pen && pen->width > 0) {
        cairo_set_source_rgba(cr, pen->color.r, pen->color.g, pen->color.b, pen->color.a);
        cairo_set_line_width(cr, pen->width);
        cairo_set_dash(cr, pen->dash, pen->dash ? pen->ndash : 0, 0);
        cairo_set_line_cap(cr, pen->round ? CAIRO_LINE_CAP_ROUND : CAIRO_LINE_CAP_BUTT);
        cairo_set_line_join(cr, pen->round ? CAIRO_LINE_JOIN_ROUND : CAIRO_LINE_JOIN_MITER);
        cairo_stroke(cr);
    }
    cairo_new_path(cr);
}

/* Segments per stroke when cairo rasterises a long polyline in pieces (c_path). */
enum { STROKE_PIECE = 8 };

/* Whether the open polyline can be stroked otherwise than as one cairo path with the same
 * picture, by plot_stroke.c or (when opaque) by cairo in pieces: on a raster surface, with
 * round caps and joins (the stroke of a polyline is then the union of the strokes of its
 * pieces, or of its segments: a round cap covers what the join did) and solid (a dash
 * pattern would restart). plot_stroke.c paints the union once, so a translucent line is
 * as cairo paints it; cairo in pieces would darken it where the pieces meet. Only
 * anti-aliased rims differ. */
static bool stroke_otherwise(cairo_t *cr, size_t n, bool closed, const rl_rgba *fill,
                             const rl_pen *pen)
{
    return n > 2 * STROKE_PIECE && !closed && !fill && pen && pen->width > 0 && pen->round &&
           !pen->dash && pen->color.a > 0 &&
           cairo_surface_get_type(cairo_get_target(cr)) == CAIRO_SURFACE_TYPE_IMAGE;
}

/* The premultiplied ARGB32 pixel cairo paints for an opaque colour (asked of cairo, so
 * the inside of a stroke is the colour cairo would give it). */
static uint32_t color_pixel(rl_cairo_rend *c, const rl_rgba *color)
{
    if (c->pixel_known && memcmp(&c->pixel_color, color, sizeof *color) == 0)
        return c->pixel;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    cairo_t *cr = cairo_create(s);
    cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
    cairo_set_source_rgba(cr, color->r, color->g, color->b, color->a);
    cairo_paint(cr);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    uint32_t px = 0;
    if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS)
        memcpy(&px, cairo_image_surface_get_data(s), sizeof px);
    cairo_surface_destroy(s);
    c->pixel_color = *color;
    c->pixel = px;
    c->pixel_known = true;
    return px;
}

/* Strokes a long round polyline with plot_stroke.c instead of cairo; false when it
 * cannot (a transform other than a scale, clips too deep, out of memory), and cairo must. */
static bool stroke_own(rl_cairo_rend *c, const double *xy, size_t n, const rl_pen *pen)
{
    cairo_surface_t *target = cairo_get_target(c->cr);
    cairo_matrix_t m;
    cairo_get_matrix(c->cr, &m);
    if (c->no_stroker || c->nclips > CLIP_DEPTH || m.xy != 0 || m.yx != 0 || m.xx != m.yy ||
        !(m.xx > 0) || cairo_image_surface_get_format(target) != CAIRO_FORMAT_ARGB32)
        return false;
    int w = cairo_image_surface_get_width(target), h = cairo_image_surface_get_height(target);
    if (!c->stroker && rl_stroker_new(&c->stroker, w, h) != RL_OK) {
        c->no_stroker = true;
        return false;
    }
    if (n > c->dev_cap) {
        double *d = realloc(c->dev, 2 * n * sizeof *d);
        if (!d)
            return false;
        c->dev = d;
        c->dev_cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        c->dev[2 * i] = m.xx * xy[2 * i] + m.x0;
        c->dev[2 * i + 1] = m.yy * xy[2 * i + 1] + m.y0;
    }
    double whole[4] = {0, 0, w, h};
    const double *clip = c->nclips > 0 ? c->clips[c->nclips - 1] : whole;
    uint32_t px = color_pixel(c, &pen->color);
    cairo_surface_flush(target);
    rl_stroker_polyline(c->stroker, cairo_image_surface_get_data(target),
                        cairo_image_surface_get_stride(target), c->dev, n, pen->width * m.xx, px,
                        clip);
    cairo_surface_mark_dirty(target);
    return true;
}

static void c_path(rl_rend *r, const double *xy, size_t n, bool closed, const rl_rgba *fill,
                   const rl_pen *pen)
{
    cairo_t *cr = ctx(r);
    if (n == 0)
        return;
    if (stroke_otherwise(cr, n, closed, fill, pen)) {
        /* cairo's scan converter samples 15 sub-rows of each pixel row for every edge
         * crossing it: for thin lines over a dense series or a track lapping a circuit
         * most of drawing a figure (the evaluation's map figure drew in 0.21 s, with
         * plot_stroke.c in 0.08 s). */
        if (stroke_own((rl_cairo_rend *)r, xy, n, pen))
            return;
        /* It also keeps every edge of a path that crosses a row in its active list: a long
         * opaque line rasterises several times slower whole than in short pieces. */
        for (size_t j = 0; pen->color.a >= 1 && j + 1 < n; j += STROKE_PIECE) {
            size_t last = j + STROKE_PIECE < n - 1 ? j + STROKE_PIECE : n - 1;
            cairo_move_to(cr, xy[2 * j], xy[2 * j + 1]);
            for (size_t i = j + 1; i <= last; i++)
                cairo_line_to(cr, xy[2 * i], xy[2 * i + 1]);
            fill_stroke(cr, NULL, pen);
        }
        if (pen->color.a >= 1)
            return;
    }
    cairo_move_to(cr, xy[0], xy[1]);
    for (size_t i = 1; i < n; i++)
        cairo_line_to(cr, xy[2 * i], xy[2 * i + 1]);
    if (closed)
        cairo_close_path(cr);
    fill_stroke(cr, fill, pen);
}

static void c_circle(rl_rend *r, double cx, double cy, double radius, const rl_rgba *fill,
                     const rl_pen *pen)
{
    cairo_t *cr = ctx(r);
    cairo_new_sub_path(cr);
    cairo_arc(cr, cx, cy, radius, 0, 2 * M_PI);
    fill_stroke(cr, fill, pen);
}

static void c_text(rl_rend *r, double x, double y, const char *utf8, double size, bool bold,
                   const rl_rgba *color, double ha, double angle_deg)
{
    cairo_t *cr = ctx(r);
    pthread_mutex_lock(&font_lock);
    set_font(cr, size, bold);
    cairo_text_extents_t te;
    cairo_text_extents(cr, utf8, &te);
    cairo_save(cr);
    cairo_translate(cr, x, y);
    if (angle_deg != 0)
        cairo_rotate(cr, -angle_deg * M_PI / 180.0);
    cairo_move_to(cr, -ha * te.x_advance, 0);
    cairo_set_source_rgba(cr, color->r, color->g, color->b, color->a);
    cairo_show_text(cr, utf8);
    cairo_restore(cr);
    pthread_mutex_unlock(&font_lock);
    cairo_new_path(cr);
}

static void c_clip_push(rl_rend *r, double x, double y, double w, double h)
{
    rl_cairo_rend *c = (rl_cairo_rend *)r;
    cairo_t *cr = c->cr;
    cairo_save(cr);
    cairo_rectangle(cr, x, y, w, h);
    cairo_clip(cr);
    if (c->nclips < CLIP_DEPTH) {
        double x0 = x, y0 = y, x1 = x + w, y1 = y + h;
        cairo_user_to_device(cr, &x0, &y0);
        cairo_user_to_device(cr, &x1, &y1);
        double *k = c->clips[c->nclips];
        k[0] = fmin(x0, x1), k[1] = fmin(y0, y1), k[2] = fmax(x0, x1), k[3] = fmax(y0, y1);
        if (c->nclips > 0) {
            const double *o = c->clips[c->nclips - 1];
            k[0] = fmax(k[0], o[0]), k[1] = fmax(k[1], o[1]);
            k[2] = fmin(k[2], o[2]), k[3] = fmin(k[3], o[3]);
        }
    }
    c->nclips++;
}

static void c_clip_pop(rl_rend *r)
{
    rl_cairo_rend *c = (rl_cairo_rend *)r;
    if (c->nclips > 0)
        c->nclips--;
    cairo_restore(c->cr);
}

static const rl_rend_ops cairo_ops = {c_path, c_circle, c_text, c_clip_push, c_clip_pop};

int rl_cairo_rend_new(rl_cairo_rend **out, void *cairo_context)
{
    rl_cairo_rend *c = calloc(1, sizeof *c);
    if (!c)
        return rl_error_set(RL_ENOMEM, "plot: out of memory");
    c->base.ops = &cairo_ops;
    c->cr = cairo_context;
    unhinted(c->cr);
    *out = c;
    return RL_OK;
}

rl_rend *rl_cairo_rend_base(rl_cairo_rend *c)
{
    return &c->base;
}

void rl_cairo_rend_free(rl_cairo_rend *c)
{
    if (!c)
        return;
    rl_stroker_free(c->stroker);
    free(c->dev);
    free(c);
}

void rl_plot_release_caches(void)
{
    cairo_debug_reset_static_data();
    /* FcFini through dlsym: fontconfig is loaded as cairo's dependency, and linking it
     * directly would add a build dependency for this one call. */
    void *sym = dlsym(RTLD_DEFAULT, "FcFini");
    if (sym) {
        void (*fc_fini)(void);
        memcpy(&fc_fini, &sym, sizeof fc_fini);
        fc_fini();
    }
}
