/* Rendering tests of runlab/plot.h: every plot kind to PNG, SVG and PDF; the PNG decodes
 * at the expected size and is not blank; the SVG is well-formed XML (expat) with its
 * labels as <text>; NaN counting, empty and single-point series, decimation that keeps a
 * one-sample spike, legend placement and SVG escaping. */
#include "rl_test.h"

#include "analysis/plot_internal.h"

#include "runlab/error.h"
#include "runlab/plot.h"
#include "runlab/yaml.h"

#include <cairo.h>
#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- SVG inspection through expat -------------------------------------------------- */
typedef struct svg_info {
    int ntext, npath, in_text;
    char text[16384]; /* all <text> contents, '\n'-separated */
    size_t tlen;
    char root[16];
} svg_info;

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    (void)attrs;
    svg_info *s = ud;
    if (!s->root[0])
        snprintf(s->root, sizeof s->root, "%s", name);
    if (strcmp(name, "text") == 0) {
        s->ntext++;
        s->in_text = 1;
    } else if (strcmp(name, "path") == 0) {
        s->npath++;
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    svg_info *s = ud;
    if (strcmp(name, "text") == 0) {
        s->in_text = 0;
        if (s->tlen + 1 < sizeof s->text)
            s->text[s->tlen++] = '\n';
        s->text[s->tlen] = '\0';
    }
}

static void XMLCALL on_chars(void *ud, const XML_Char *c, int len)
{
    svg_info *s = ud;
    if (!s->in_text)
        return;
    for (int i = 0; i < len && s->tlen + 2 < sizeof s->text; i++)
        s->text[s->tlen++] = c[i];
    s->text[s->tlen] = '\0';
}

static void parse_svg(const char *data, size_t len, svg_info *out)
{
    memset(out, 0, sizeof *out);
    XML_Parser p = XML_ParserCreate("UTF-8");
    assert_non_null(p);
    XML_SetUserData(p, out);
    XML_SetElementHandler(p, on_start, on_end);
    XML_SetCharacterDataHandler(p, on_chars);
    if (XML_Parse(p, data, (int)len, 1) != XML_STATUS_OK)
        fail_msg("SVG not well-formed: %s at line %lu", XML_ErrorString(XML_GetErrorCode(p)),
                 (unsigned long)XML_GetCurrentLineNumber(p));
    XML_ParserFree(p);
    assert_string_equal(out->root, "svg");
}

static bool svg_has_text(const svg_info *s, const char *line)
{
    const char *p = s->text;
    size_t n = strlen(line);
    while ((p = strstr(p, line)) != NULL) {
        if ((p == s->text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
            return true;
        p++;
    }
    return false;
}

/* ---- PNG inspection ---------------------------------------------------------------- */
typedef struct png_info {
    int w, h;
    double variance;  /* of grey levels */
    long colored;     /* pixels with clear chroma (data, not text or grid) */
    int top_of_color; /* first row with a pixel close to `probe`, -1 if none */
} png_info;

static void inspect_png(const char *path, unsigned probe, png_info *out)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    assert_int_equal(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    out->w = cairo_image_surface_get_width(s);
    out->h = cairo_image_surface_get_height(s);
    const unsigned char *d = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    double sum = 0, sum2 = 0;
    out->colored = 0;
    out->top_of_color = -1;
    int pr = (probe >> 16) & 0xFF, pg = (probe >> 8) & 0xFF, pb = probe & 0xFF;
    for (int y = 0; y < out->h; y++) {
        const uint32_t *row = (const uint32_t *)(d + (size_t)y * (size_t)stride);
        for (int x = 0; x < out->w; x++) {
            int r = (row[x] >> 16) & 0xFF, g = (row[x] >> 8) & 0xFF, b = row[x] & 0xFF;
            double grey = 0.299 * r + 0.587 * g + 0.114 * b;
            sum += grey;
            sum2 += grey * grey;
            int mx = r > g ? (r > b ? r : b) : (g > b ? g : b);
            int mn = r < g ? (r < b ? r : b) : (g < b ? g : b);
            if (mx - mn > 60)
                out->colored++;
            if (out->top_of_color < 0 && abs(r - pr) < 40 && abs(g - pg) < 40 && abs(b - pb) < 40)
                out->top_of_color = y;
        }
    }
    double n = (double)out->w * out->h;
    out->variance = sum2 / n - (sum / n) * (sum / n);
    cairo_surface_destroy(s);
}

/* Saves fig as PNG, SVG and PDF in dir/name.*; checks each and returns the SVG text. */
static char *save_all(rl_figure *fig, const char *dir, const char *name, int w, int h,
                      png_info *png, svg_info *svg)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.png", dir, name);
    if (rl_figure_save(fig, path, RL_PLOT_AUTO) != RL_OK)
        fail_msg("save %s: %s", path, rl_error_last());
    inspect_png(path, 0x0072B2, png);
    assert_int_equal(png->w, w);
    assert_int_equal(png->h, h);
    assert_true(png->variance > 50); /* not blank */

    snprintf(path, sizeof path, "%s/%s.svg", dir, name);
    if (rl_figure_save(fig, path, RL_PLOT_AUTO) != RL_OK)
        fail_msg("save %s: %s", path, rl_error_last());
    size_t len;
    char *data = rl_test_read_file(path, &len);
    parse_svg(data, len, svg);
    assert_true(svg->ntext > 3);

    snprintf(path, sizeof path, "%s/%s.pdf", dir, name);
    if (rl_figure_save(fig, path, RL_PLOT_AUTO) != RL_OK)
        fail_msg("save %s: %s", path, rl_error_last());
    size_t plen;
    char *pdf = rl_test_read_file(path, &plen);
    assert_true(plen > 500 && memcmp(pdf, "%PDF-", 5) == 0);
    free(pdf);
    return data;
}

static rl_figure *one_panel(rl_axes **ax, const char *title)
{
    rl_figure *f = NULL;
    assert_int_equal(rl_figure_new(&f, 1, 1), RL_OK);
    assert_int_equal(rl_figure_set_size_px(f, 480, 360, 100), RL_OK);
    *ax = rl_figure_axes(f, 0, 0);
    assert_non_null(*ax);
    assert_int_equal(rl_axes_set_title(*ax, title), RL_OK);
    assert_int_equal(rl_axes_set_xlabel(*ax, "Time", "s"), RL_OK);
    assert_int_equal(rl_axes_set_ylabel(*ax, "Cost", "m"), RL_OK);
    return f;
}

static double noise(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xFFFF) / 65536.0 - 0.5;
}

enum { K_LINE, K_BAND, K_STEP, K_SCATTER, K_BOX, K_ECDF, K_BAR, K_STACKED, K_HBAR, K_HIST, NKINDS };
static const char *const KIND_NAMES[NKINDS] = {"line", "band", "step",    "scatter", "box",
                                               "ecdf", "bar",  "stacked", "hbar",    "hist"};

static void add_kind(rl_axes *ax, int kind)
{
    enum { N = 200 };
    double x[N], y[N], lo[N], hi[N];
    unsigned seed = 7;
    static const char *const cats[] = {"alpha", "beta", "gamma"};
    for (int s = 0; s < 2; s++) {
        char label[32];
        snprintf(label, sizeof label, "series %c", 'A' + s);
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = label;
        for (int i = 0; i < N; i++) {
            x[i] = i * 0.05;
            y[i] = sin(x[i]) + s + 0.2 * noise(&seed);
            lo[i] = y[i] - 0.3;
            hi[i] = y[i] + 0.3;
        }
        double vals[3] = {3 + s, 5 - s, 2.5};
        switch (kind) {
        case K_LINE: assert_int_equal(rl_axes_line(ax, x, y, N, &o), RL_OK); break;
        case K_BAND:
            o.band_lo = lo;
            o.band_hi = hi;
            assert_int_equal(rl_axes_line(ax, x, y, N, &o), RL_OK);
            break;
        case K_STEP: assert_int_equal(rl_axes_step(ax, x, y, 20, &o), RL_OK); break;
        case K_SCATTER: assert_int_equal(rl_axes_scatter(ax, x, y, N, &o), RL_OK); break;
        case K_BOX:
            y[0] = 40; /* an outlier */
            o.notch = s == 1;
            assert_int_equal(rl_axes_box(ax, label, y, N, &o), RL_OK);
            break;
        case K_ECDF: assert_int_equal(rl_axes_ecdf(ax, y, N, &o), RL_OK); break;
        case K_BAR:
        case K_STACKED:
        case K_HBAR:
            if (kind != K_BAR)
                rl_axes_set_bar_mode(ax, RL_BAR_STACKED, kind == K_HBAR);
            assert_int_equal(rl_axes_bar(ax, s == 0 ? cats : NULL, 3, vals, &o), RL_OK);
            break;
        case K_HIST: assert_int_equal(rl_axes_hist(ax, y, N, &o), RL_OK); break;
        }
    }
}

static void test_every_kind_png_svg_pdf(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    for (int k = 0; k < NKINDS; k++) {
        rl_axes *ax;
        char title[64];
        snprintf(title, sizeof title, "Kind %s", KIND_NAMES[k]);
        rl_figure *f = one_panel(&ax, title);
        add_kind(ax, k);
        png_info png;
        svg_info svg;
        char *data = save_all(f, dir, KIND_NAMES[k], 480, 360, &png, &svg);
        /* Data in palette colours is drawn, not only text and axes. */
        if (png.colored < 300)
            fail_msg("%s: only %ld coloured pixels", KIND_NAMES[k], png.colored);
        assert_true(svg_has_text(&svg, title));
        if (k == K_HBAR) {
            assert_true(svg_has_text(&svg, "Time [s]"));
        } else {
            assert_true(svg_has_text(&svg, "Cost [m]"));
            if (k != K_BOX && k != K_BAR && k != K_STACKED)
                assert_true(svg_has_text(&svg, "Time [s]"));
        }
        if (k == K_BOX)
            assert_true(svg_has_text(&svg, "series A") && svg_has_text(&svg, "series B"));
        else if (k == K_BAR || k == K_STACKED || k == K_HBAR)
            assert_true(svg_has_text(&svg, "gamma"));
        if (k != K_BOX)
            assert_true(svg_has_text(&svg, "series B")); /* legend */
        free(data);
        rl_figure_free(f);
    }
    rl_test_tmpdir_free(dir);
}

/* Decoded by cairo: a PNG from rl_png_encode_argb32 holds the pixels of the one cairo's own
 * writer makes of the same image, for an opaque image and one with every kind of alpha. */
static void decoded_equal(const char *a_path, const char *b_path)
{
    cairo_surface_t *a = cairo_image_surface_create_from_png(a_path);
    cairo_surface_t *b = cairo_image_surface_create_from_png(b_path);
    assert_int_equal(cairo_surface_status(a), CAIRO_STATUS_SUCCESS);
    assert_int_equal(cairo_surface_status(b), CAIRO_STATUS_SUCCESS);
    assert_int_equal(cairo_image_surface_get_format(a), cairo_image_surface_get_format(b));
    int w = cairo_image_surface_get_width(a), h = cairo_image_surface_get_height(a);
    assert_int_equal(w, cairo_image_surface_get_width(b));
    assert_int_equal(h, cairo_image_surface_get_height(b));
    for (int y = 0; y < h; y++)
        assert_memory_equal(cairo_image_surface_get_data(a) +
                                (size_t)y * (size_t)cairo_image_surface_get_stride(a),
                            cairo_image_surface_get_data(b) +
                                (size_t)y * (size_t)cairo_image_surface_get_stride(b),
                            4 * (size_t)w);
    cairo_surface_destroy(a);
    cairo_surface_destroy(b);
}

static void test_png_encoder_matches_cairo(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char ours[4096], theirs[4096];
    snprintf(ours, sizeof ours, "%s/ours.png", dir);
    snprintf(theirs, sizeof theirs, "%s/theirs.png", dir);
    uint32_t seed = 12345;
    for (int opaque = 0; opaque < 2; opaque++) {
        int w = 37, h = 23;
        cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
        unsigned char *d = cairo_image_surface_get_data(s);
        int stride = cairo_image_surface_get_stride(s);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                seed = seed * 1103515245u + 12345u;
                uint32_t a = opaque ? 255 : (x % 3 == 0 ? 0 : x % 3 == 1 ? 255 : (seed >> 24));
                uint32_t px = a << 24;
                for (int k = 0; k < 3; k++) {
                    seed = seed * 1103515245u + 12345u;
                    px |= (a ? (seed >> 16) % (a + 1) : 0) << (8 * k); /* premultiplied */
                }
                ((uint32_t *)(void *)(d + (size_t)y * (size_t)stride))[x] = px;
            }
        cairo_surface_mark_dirty(s);
        assert_int_equal(cairo_surface_write_to_png(s, theirs), CAIRO_STATUS_SUCCESS);
        rl_buf b = {0};
        assert_int_equal(rl_png_encode_argb32(d, w, h, stride, &b), RL_OK);
        FILE *f = fopen(ours, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
        fclose(f);
        rl_buf_free(&b);
        decoded_equal(ours, theirs);
        cairo_surface_destroy(s);
    }
    rl_buf b = {0};
    assert_int_equal(rl_png_encode_argb32(NULL, 0, 5, 0, &b), RL_EINVAL);
    rl_buf_free(&b);
    rl_test_tmpdir_free(dir);
}

/* The grid at the major ticks is on by default and off when asked: the same figure's SVG
 * has strokes in the grid's light grey only with it. */
static void test_grid_on_and_off(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    size_t grey[2];
    for (int on = 0; on < 2; on++) {
        rl_axes *ax;
        rl_figure *f = one_panel(&ax, "Grid");
        add_kind(ax, 0);
        if (!on)
            assert_int_equal(rl_axes_set_grid(ax, false), RL_OK);
        char path[4096];
        snprintf(path, sizeof path, "%s/grid%d.svg", dir, on);
        if (rl_figure_save(f, path, RL_PLOT_AUTO) != RL_OK)
            fail_msg("save %s: %s", path, rl_error_last());
        char *svg = rl_test_read_file(path, NULL);
        grey[on] = 0;
        for (const char *p = svg; (p = strstr(p, "stroke=\"#e0e0e0\"")); p++) /* 0.88 grey */
            grey[on]++;
        free(svg);
        rl_figure_free(f);
    }
    assert_int_equal(grey[0], 0);
    assert_true(grey[1] > 4); /* a line at each major tick of both axes */
    rl_test_tmpdir_free(dir);
}

static void test_multi_panel_and_log(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    rl_figure *f = NULL;
    assert_int_equal(rl_figure_new(&f, 2, 3), RL_OK);
    assert_int_equal(rl_figure_set_size_in(f, 9, 5, 80), RL_OK);
    assert_int_equal(rl_figure_set_title(f, "Six panels"), RL_OK);
    for (int i = 0; i < 6; i++)
        add_kind(rl_figure_axes(f, i / 3, i % 3), i);
    rl_axes *lg = rl_figure_axes(f, 0, 0);
    assert_int_equal(rl_axes_set_yscale(lg, RL_SCALE_LOG), RL_OK);
    assert_null(rl_figure_axes(f, 2, 0));
    assert_null(rl_figure_axes(f, 0, 3));
    png_info png;
    svg_info svg;
    char *data = save_all(f, dir, "six", 720, 400, &png, &svg);
    assert_true(svg_has_text(&svg, "Six panels"));
    /* sin(x) goes negative: those values cannot sit on a log axis and are counted. */
    assert_true(rl_figure_skipped(f) > 0);
    assert_non_null(strstr(svg.text, "non-positive"));
    free(data);
    rl_figure_free(f);
    rl_test_tmpdir_free(dir);
}

static void test_nan_counted_in_note(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    rl_axes *ax;
    rl_figure *f = one_panel(&ax, "gaps");
    double x[10], y[10];
    for (int i = 0; i < 10; i++) {
        x[i] = i;
        y[i] = i * i;
    }
    y[2] = NAN;
    y[5] = INFINITY;
    x[7] = -INFINITY;
    assert_int_equal(rl_axes_line(ax, x, y, 10, NULL), RL_OK);
    double v[4] = {1, NAN, 2, 3};
    assert_int_equal(rl_axes_hist(rl_figure_axes(f, 0, 0), v, 4, NULL), RL_OK);
    assert_int_equal(rl_figure_skipped(f), 4);
    png_info png;
    svg_info svg;
    char *data = save_all(f, dir, "gaps", 480, 360, &png, &svg);
    assert_true(svg_has_text(&svg, "Not drawn: 4 NaN or infinite values"));
    /* Every path coordinate is a plain number: no NaN or infinity leaked into drawing. */
    for (const char *p = data; (p = strstr(p, " d=\"")) != NULL;) {
        p += 4;
        size_t n = strcspn(p, "\"");
        assert_int_equal(strspn(p, "0123456789.-MLZ "), n);
        p += n;
    }
    free(data);
    rl_figure_free(f);
    rl_test_tmpdir_free(dir);
}

static void test_empty_and_single_point(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    rl_axes *ax;
    rl_figure *f = one_panel(&ax, "empty");
    assert_int_equal(rl_axes_line(ax, NULL, NULL, 0, NULL), RL_OK);
    png_info png;
    svg_info svg;
    char *data = save_all(f, dir, "empty", 480, 360, &png, &svg);
    assert_true(svg_has_text(&svg, "no data"));
    free(data);
    rl_figure_free(f);

    f = one_panel(&ax, "single");
    double x = 3, y = 42;
    assert_int_equal(rl_axes_line(ax, &x, &y, 1, NULL), RL_OK);
    data = save_all(f, dir, "single", 480, 360, &png, &svg);
    /* The lone point is drawn (as a dot) in the series colour. */
    assert_true(png.top_of_color >= 0);
    assert_true(svg_has_text(&svg, "42"));
    free(data);
    rl_figure_free(f);

    /* All-NaN data is an empty panel with a note, not garbage. */
    f = one_panel(&ax, "all nan");
    double nx[3] = {NAN, NAN, NAN};
    assert_int_equal(rl_axes_scatter(ax, nx, nx, 3, NULL), RL_OK);
    data = save_all(f, dir, "allnan", 480, 360, &png, &svg);
    assert_true(svg_has_text(&svg, "Not drawn: 3 NaN or infinite values"));
    free(data);
    rl_figure_free(f);
    rl_test_tmpdir_free(dir);
}

static void test_million_points_keep_spike(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    rl_axes *ax;
    rl_figure *f = one_panel(&ax, "spike");
    enum { N = 1000000 };
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = 0;
    }
    y[N / 2 + 17] = 1; /* one sample among a million */
    assert_int_equal(rl_axes_line(ax, x, y, N, NULL), RL_OK);
    free(x);
    free(y);
    png_info png;
    svg_info svg;
    char *data = save_all(f, dir, "spike", 480, 360, &png, &svg);
    /* The spike reaches the top of the plot area (y limit 1.05): well above the middle. */
    assert_true(png.top_of_color >= 0 && png.top_of_color < 360 / 4);
    /* Decimated: a few points per pixel column, not a million. */
    assert_true(strlen(data) < 200000);
    free(data);
    rl_figure_free(f);
    rl_test_tmpdir_free(dir);
}

static void test_svg_escapes_text(void **state)
{
    (void)state;
    rl_axes *ax;
    rl_figure *f = one_panel(&ax, "a < b & \"c\" 'd' > e");
    double x[2] = {0, 1}, y[2] = {0, 1};
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.label = "</text><script>x";
    assert_int_equal(rl_axes_line(ax, x, y, 2, &o), RL_OK);
    assert_int_equal(rl_axes_set_xlabel(ax, "bad \x01 byte \xff", NULL), RL_OK);
    char *svg = NULL;
    size_t len = 0;
    assert_int_equal(rl_figure_to_svg(f, "t1", &svg, &len), RL_OK);
    svg_info info;
    parse_svg(svg, len, &info);
    assert_true(svg_has_text(&info, "a < b & \"c\" 'd' > e"));
    assert_true(svg_has_text(&info, "</text><script>x"));
    assert_true(svg_has_text(&info, "bad \xEF\xBF\xBD byte \xEF\xBF\xBD"));
    assert_null(strstr(svg, "<script"));
    assert_non_null(strstr(svg, "id=\"t1-c1\""));
    free(svg);
    assert_int_equal(rl_figure_to_svg(f, "bad id!", &svg, &len), RL_EINVAL);
    rl_figure_free(f);
}

static void test_legend_avoids_data(void **state)
{
    (void)state;
    /* Data fills the upper half: the legend must go to a lower corner. */
    rl_axes *ax;
    rl_figure *f = one_panel(&ax, "legend");
    enum { N = 400 };
    double x[N], y[N];
    unsigned seed = 3;
    for (int i = 0; i < N; i++) {
        x[i] = i % 20 + noise(&seed);
        y[i] = 10 + (i / 20) * 0.5 + noise(&seed);
    }
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.label = "cloud";
    assert_int_equal(rl_axes_scatter(ax, x, y, N, &o), RL_OK);
    double lx[2] = {0, 19}, ly[2] = {9, 9};
    assert_int_equal(rl_axes_set_ylim(ax, 0, 21), RL_OK);
    o.label = "floor";
    assert_int_equal(rl_axes_line(ax, lx, ly, 2, &o), RL_OK);
    char *svg = NULL;
    size_t len;
    assert_int_equal(rl_figure_to_svg(f, NULL, &svg, &len), RL_OK);
    /* The legend text "cloud" sits in the lower half of the 259 pt tall page. */
    const char *t = strstr(svg, ">cloud</text>");
    assert_non_null(t);
    const char *tag = t;
    while (tag > svg && strncmp(tag, "<text", 5) != 0)
        tag--;
    const char *yattr = strstr(tag, " y=\"");
    assert_non_null(yattr);
    double ypos = atof(yattr + 4);
    if (!(ypos > 259.2 / 2))
        fail_msg("legend at y = %g pt, expected the lower half", ypos);
    free(svg);

    /* With data in every corner and edge middle it moves outside, right of the plot. */
    double cx[5] = {1, 18, 1, 18, 9.5}, cy[5] = {1.5, 1.5, 19.5, 19.5, 1.5};
    o.label = "corners";
    assert_int_equal(rl_axes_scatter(ax, cx, cy, 5, &o), RL_OK);
    assert_int_equal(rl_figure_to_svg(f, NULL, &svg, &len), RL_OK);
    t = strstr(svg, ">corners</text>");
    assert_non_null(t);
    while (t > svg && strncmp(t, "<text", 5) != 0)
        t--;
    const char *xattr = strstr(t, " x=\"");
    assert_non_null(xattr);
    double xpos = atof(xattr + 4);
    /* Outside: right of every x tick label of a 345.6 pt wide page's plot area. */
    if (!(xpos > 345.6 * 0.6))
        fail_msg("outside legend text at x = %g pt", xpos);
    const char *last_tick = strstr(svg, ">20</text>");
    assert_non_null(last_tick);
    free(svg);
    rl_figure_free(f);
}

/* The y attribute of the <text> element holding exactly `label`, or NAN. */
static double text_y(const char *svg, const char *label)
{
    char needle[128];
    snprintf(needle, sizeof needle, ">%s</text>", label);
    const char *t = strstr(svg, needle);
    if (!t)
        return NAN;
    while (t > svg && strncmp(t, "<text", 5) != 0)
        t--;
    const char *yattr = strstr(t, " y=\"");
    return yattr ? atof(yattr + 4) : NAN;
}

/* A legend outside with more entries than its panel is high (a lab's 20 vehicles and a
 * limit, 900 x 380 px) goes on in a second column: every entry lies on the page. */
static void test_legend_outside_in_columns(void **state)
{
    (void)state;
    rl_figure *f;
    assert_int_equal(rl_figure_new(&f, 1, 1), RL_OK);
    assert_int_equal(rl_figure_set_size_px(f, 900, 380, 100), RL_OK);
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    assert_int_equal(rl_axes_set_legend(ax, RL_LEGEND_OUTSIDE), RL_OK);
    double x[2] = {0, 600}, y[2];
    char label[32];
    rl_series_opts o;
    for (int v = 1; v <= 21; v++) {
        rl_series_opts_init(&o);
        snprintf(label, sizeof label, "vehicle %d", v);
        o.label = label;
        y[0] = y[1] = v;
        assert_int_equal(rl_axes_line(ax, x, y, 2, &o), RL_OK);
    }
    char *svg = NULL;
    size_t len;
    assert_int_equal(rl_figure_to_svg(f, NULL, &svg, &len), RL_OK);
    double page_h = 380 * 72.0 / 100; /* pt */
    for (int v = 1; v <= 21; v++) {
        snprintf(label, sizeof label, "vehicle %d", v);
        double ty = text_y(svg, label);
        if (!(ty > 0 && ty < page_h))
            fail_msg("legend entry %s at y = %g pt, the page is %g pt high", label, ty, page_h);
    }
    /* Two columns of 11 and 10, the second starting level with the first. */
    assert_true(fabs(text_y(svg, "vehicle 12") - text_y(svg, "vehicle 1")) < 0.01);
    free(svg);
    rl_figure_free(f);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    rl_figure *f = NULL;
    assert_int_equal(rl_figure_new(&f, 0, 1), RL_EINVAL);
    assert_int_equal(rl_figure_new(&f, 1, 1), RL_OK);
    assert_int_equal(rl_figure_set_size_in(f, 0.1, 4, 100), RL_EINVAL);
    assert_int_equal(rl_figure_set_size_px(f, 640, 480, 5), RL_EINVAL);
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    assert_int_equal(rl_axes_set_xlim(ax, 2, 1), RL_EINVAL);
    assert_int_equal(rl_axes_set_xlim(ax, NAN, 1), RL_OK);
    double v[2] = {1, 2};
    assert_int_equal(rl_axes_line(ax, NULL, v, 2, NULL), RL_EINVAL);
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.band_lo = v;
    assert_int_equal(rl_axes_line(ax, v, v, 2, &o), RL_EINVAL);
    const char *cats[2] = {"a", "b"};
    assert_int_equal(rl_axes_bar(ax, cats, 2, v, NULL), RL_OK);
    assert_int_equal(rl_axes_bar(ax, NULL, 3, v, NULL), RL_EINVAL);
    assert_int_equal(rl_axes_box(ax, "x", v, 2, NULL), RL_ESTATE);
    assert_int_equal(rl_figure_save(f, "/tmp/x.gif", RL_PLOT_AUTO), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "x.gif"));
    assert_true(rl_figure_save(f, "/nonexistent-dir/x.png", RL_PLOT_AUTO) < 0);
    assert_non_null(strstr(rl_error_last(), "/nonexistent-dir/x.png"));
    rl_figure_free(f);
}

static void test_figure_record(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    rl_axes *ax;
    rl_figure *f = one_panel(&ax, "recorded");
    double x[2] = {0, 1};
    assert_int_equal(rl_axes_line(ax, x, x, 2, NULL), RL_OK);
    char png[4096], svg[4096], yaml[4096];
    snprintf(png, sizeof png, "%s/fig.png", dir);
    snprintf(svg, sizeof svg, "%s/fig.svg", dir);
    snprintf(yaml, sizeof yaml, "%s/fig.yaml", dir);
    assert_int_equal(rl_figure_save(f, png, RL_PLOT_AUTO), RL_OK);
    assert_int_equal(rl_figure_save(f, svg, RL_PLOT_AUTO), RL_OK);
    char *argv[3] = {"runlab", "plot", "x y.csv"};
    const char *inputs[1] = {"data/x y.csv"};
    rl_figure_record rec = {3, argv, inputs, 1, "a test figure"};
    assert_int_equal(rl_figure_record_write(png, &rec), RL_OK);
    json_object *doc = NULL;
    assert_int_equal(rl_yaml_read_file(yaml, 1 << 20, &doc), RL_OK);
    json_object *v;
    assert_true(json_object_object_get_ex(doc, "figures", &v));
    assert_int_equal(json_object_array_length(v), 2);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 0)), "fig.png");
    assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 1)), "fig.svg");
    assert_true(json_object_object_get_ex(doc, "command", &v));
    assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 2)), "x y.csv");
    assert_true(json_object_object_get_ex(doc, "inputs", &v));
    assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 0)), "data/x y.csv");
    assert_true(json_object_object_get_ex(doc, "created_utc", &v));
    const char *t = json_object_get_string(v);
    assert_true(strlen(t) == 30 && t[10] == 'T' && t[29] == 'Z');
    assert_true(json_object_object_get_ex(doc, "git_sha", &v));
    assert_true(json_object_object_get_ex(doc, "runlab_version", &v));
    assert_true(json_object_object_get_ex(doc, "provenance", &v));
    assert_true(json_object_object_get_ex(doc, "description", &v));
    json_object_put(doc);

    /* Without argv the record takes the process's own command line. */
    rl_figure_record none = {0};
    assert_int_equal(rl_figure_record_write(svg, &none), RL_OK);
    assert_int_equal(rl_yaml_read_file(yaml, 1 << 20, &doc), RL_OK);
    assert_true(json_object_object_get_ex(doc, "command", &v));
    assert_true(json_object_array_length(v) >= 1);
    assert_non_null(
        strstr(json_object_get_string(json_object_array_get_idx(v, 0)), "test_plot_render"));
    json_object_put(doc);
    assert_int_equal(rl_figure_record_write("", &none), RL_EINVAL);
    rl_figure_free(f);
    rl_test_tmpdir_free(dir);
}

static void test_equal_aspect(void **state)
{
    (void)state;
    /* A unit circle in a wide panel: with equal aspect, x must be widened well past +-1. */
    rl_figure *f = NULL;
    assert_int_equal(rl_figure_new(&f, 1, 1), RL_OK);
    assert_int_equal(rl_figure_set_size_px(f, 600, 250, 100), RL_OK);
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    double x[64], y[64];
    for (int i = 0; i < 64; i++) {
        x[i] = cos(i * 2 * M_PI / 63);
        y[i] = sin(i * 2 * M_PI / 63);
    }
    assert_int_equal(rl_axes_line(ax, x, y, 64, NULL), RL_OK);
    char *svg = NULL;
    size_t len;
    assert_int_equal(rl_figure_to_svg(f, NULL, &svg, &len), RL_OK);
    assert_null(strstr(svg, ">2</text>"));
    free(svg);
    assert_int_equal(rl_axes_set_equal_aspect(ax, true), RL_OK);
    assert_int_equal(rl_figure_to_svg(f, NULL, &svg, &len), RL_OK);
    assert_non_null(strstr(svg, ">2</text>"));
    assert_non_null(strstr(svg, ">\xE2\x88\x92"
                                "2</text>"));
    free(svg);
    rl_figure_free(f);
}

static void test_extreme_values(void **state)
{
    (void)state;
    /* Values no plot range can hold are counted as infinite; denormal, huge-but-equal and
     * equal-but-for-rounding values draw without NaN reaching the renderer. */
    const double cases[][3] = {{1e308, -1e308, 0},
                               {1e-320, 2e-320, 3e-320},
                               {1e300, 1e300, 1e300},
                               {-0.0, 0.0, 1e-300},
                               {1, 1 + 1e-15, 1 + 2e-15}};
    /* Case 0: two unplottable values in each of line, scatter and histogram, and the
     * point (0, 0) on the log panel; case 3: (-0, -0) and (0, 0) on the log panel. */
    const size_t skipped[] = {7, 0, 0, 2, 0};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        rl_figure *f = NULL;
        assert_int_equal(rl_figure_new(&f, 1, 2), RL_OK);
        double x[3] = {0, 1, 2};
        assert_int_equal(rl_axes_line(rl_figure_axes(f, 0, 0), x, cases[c], 3, NULL), RL_OK);
        rl_axes *a = rl_figure_axes(f, 0, 1);
        assert_int_equal(rl_axes_set_yscale(a, RL_SCALE_LOG), RL_OK);
        assert_int_equal(rl_axes_scatter(a, cases[c], cases[c], 3, NULL), RL_OK);
        assert_int_equal(rl_axes_hist(a, cases[c], 3, NULL), RL_OK);
        char *svg = NULL;
        size_t len;
        if (rl_figure_to_svg(f, NULL, &svg, &len) != RL_OK)
            fail_msg("case %zu: %s", c, rl_error_last());
        svg_info info;
        parse_svg(svg, len, &info);
        for (const char *p = svg; (p = strstr(p, " d=\"")) != NULL;) {
            p += 4;
            size_t n = strcspn(p, "\"");
            assert_int_equal(strspn(p, "0123456789.-MLZ "), n);
            p += n;
        }
        assert_null(strstr(svg, "nan"));
        free(svg);
        if (rl_figure_skipped(f) != skipped[c])
            fail_msg("case %zu: %zu skipped, want %zu", c, rl_figure_skipped(f), skipped[c]);
        rl_figure_free(f);
    }
}

static double wild(unsigned *seed)
{
    double u = noise(seed) + 0.5;
    if (u < 0.03)
        return NAN;
    if (u < 0.05)
        return u < 0.04 ? INFINITY : -INFINITY;
    if (u < 0.07)
        return 0;
    if (u < 0.09)
        return 1e299 * noise(seed);
    if (u < 0.11)
        return 1e-310 * noise(seed);
    return pow(10, 6 * noise(seed)) * (noise(seed) < 0.3 ? -1 : 1);
}

static void test_random_figures(void **state)
{
    (void)state;
    /* Random kinds, sizes, scales and hostile values: every render must succeed and give
     * well-formed SVG with plain-number coordinates. */
    unsigned seed = 12345;
    enum { MAXN = 300 };
    double x[MAXN], y[MAXN], lo[MAXN], hi[MAXN];
    static const char *const cats[] = {"a", "b", "c", "d", "e"};
    for (int it = 0; it < 120; it++) {
        rl_figure *f = NULL;
        int rows = 1 + (int)((noise(&seed) + 0.5) * 2), cols = 1 + (int)((noise(&seed) + 0.5) * 3);
        assert_int_equal(rl_figure_new(&f, rows, cols), RL_OK);
        assert_int_equal(rl_figure_set_size_px(f, 200 + it * 7, 150 + it * 3, 72 + it), RL_OK);
        for (int p = 0; p < rows * cols; p++) {
            rl_axes *ax = rl_figure_axes(f, p / cols, p % cols);
            if (noise(&seed) > 0.3)
                rl_axes_set_xscale(ax, RL_SCALE_LOG);
            if (noise(&seed) > 0.3)
                rl_axes_set_yscale(ax, RL_SCALE_LOG);
            if (noise(&seed) > 0.4)
                rl_axes_set_equal_aspect(ax, true);
            int nser = (int)((noise(&seed) + 0.5) * 4);
            int kind = (int)((noise(&seed) + 0.5) * 7);
            for (int k = 0; k < nser; k++) {
                size_t n = (size_t)((noise(&seed) + 0.5) * MAXN);
                for (size_t i = 0; i < n; i++) {
                    x[i] = noise(&seed) > 0.2 ? (double)i : wild(&seed);
                    y[i] = wild(&seed);
                    lo[i] = y[i] - 1;
                    hi[i] = y[i] + 1;
                }
                rl_series_opts o;
                rl_series_opts_init(&o);
                o.label = k % 2 ? "odd" : "even";
                o.notch = k % 2;
                o.density = k % 2;
                if (k == 1) {
                    o.band_lo = lo;
                    o.band_hi = hi;
                }
                int rc = RL_OK;
                switch (kind) {
                case 0: rc = rl_axes_line(ax, x, y, n, &o); break;
                case 1: rc = rl_axes_step(ax, x, y, n, &o); break;
                case 2: rc = rl_axes_scatter(ax, x, y, n, &o); break;
                case 3: rc = rl_axes_ecdf(ax, y, n, &o); break;
                case 4: rc = rl_axes_hist(ax, y, n, &o); break;
                case 5: rc = rl_axes_box(ax, "box", y, n, &o); break;
                default:
                    rl_axes_set_bar_mode(ax, k % 2 ? RL_BAR_STACKED : RL_BAR_GROUPED, it % 2);
                    rc = rl_axes_bar(ax, cats, 5, y, &o);
                    break;
                }
                assert_int_equal(rc, RL_OK);
            }
        }
        char *svg = NULL;
        size_t len;
        if (rl_figure_to_svg(f, NULL, &svg, &len) != RL_OK)
            fail_msg("iteration %d: %s", it, rl_error_last());
        svg_info info;
        parse_svg(svg, len, &info);
        for (const char *p = svg; (p = strstr(p, " d=\"")) != NULL;) {
            p += 4;
            size_t n = strcspn(p, "\"");
            if (strspn(p, "0123456789.-MLZ ") != n)
                fail_msg("iteration %d: bad path data %.60s", it, p);
            p += n;
        }
        free(svg);
        rl_figure_free(f);
    }
}

static void test_long_text_shortened(void **state)
{
    (void)state;
    rl_axes *ax;
    rl_figure *f = one_panel(&ax, "A title far too long for a panel only four point eight "
                                  "inches wide, which would run off both edges of the page");
    double x[2] = {0, 1};
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.label = "a legend label that is long enough to take half of the figure's width";
    assert_int_equal(rl_axes_line(ax, x, x, 2, &o), RL_OK);
    char *svg = NULL;
    size_t len;
    assert_int_equal(rl_figure_to_svg(f, NULL, &svg, &len), RL_OK);
    svg_info info;
    parse_svg(svg, len, &info);
    assert_true(svg_has_text(&info, "Time [s]"));
    assert_non_null(strstr(info.text, "A title far too long"));
    assert_non_null(strstr(info.text, "\xE2\x80\xA6\n"));
    assert_null(strstr(info.text, "both edges of the page"));
    assert_null(strstr(info.text, "half of the figure's width"));
    free(svg);
    rl_figure_free(f);
}

/* ---- Tick labels never overlap ------------------------------------------------------ */
typedef struct label_pos {
    double x, y, size;
    char anchor; /* 's'tart, 'm'iddle, 'e'nd */
    char text[64];
} label_pos;

typedef struct label_list {
    label_pos v[512];
    int n, cur;
} label_list;

static void XMLCALL lab_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    label_list *l = ud;
    l->cur = -1;
    if (strcmp(name, "text") != 0 || l->n >= 512)
        return;
    label_pos *p = &l->v[l->n];
    memset(p, 0, sizeof *p);
    p->anchor = 's';
    bool rotated = false;
    for (int i = 0; attrs[i]; i += 2) {
        if (!strcmp(attrs[i], "x"))
            p->x = atof(attrs[i + 1]);
        else if (!strcmp(attrs[i], "y"))
            p->y = atof(attrs[i + 1]);
        else if (!strcmp(attrs[i], "font-size"))
            p->size = atof(attrs[i + 1]);
        else if (!strcmp(attrs[i], "text-anchor"))
            p->anchor = attrs[i + 1][0];
        else if (!strcmp(attrs[i], "transform"))
            rotated = true;
    }
    if (!rotated)
        l->cur = l->n++;
}

static void XMLCALL lab_end(void *ud, const XML_Char *name)
{
    (void)name;
    ((label_list *)ud)->cur = -1;
}

static void XMLCALL lab_chars(void *ud, const XML_Char *c, int len)
{
    label_list *l = ud;
    if (l->cur < 0)
        return;
    label_pos *p = &l->v[l->cur];
    size_t have = strlen(p->text);
    for (int i = 0; i < len && have + 1 < sizeof p->text; i++)
        p->text[have++] = c[i];
    p->text[have] = '\0';
}

static void test_tick_labels_do_not_overlap(void **state)
{
    (void)state;
    /* Long labels (SI values with decimals) on narrow and wide panels, several DPIs. */
    cairo_surface_t *cs = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
    cairo_t *cr = cairo_create(cs);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    const int widths[] = {220, 300, 480, 900};
    const double ranges[][2] = {{1.23e6, 1.2345e6}, {-0.00123, 0.00456}, {0, 7}, {1e3, 5e9}};
    for (size_t w = 0; w < 4; w++) {
        for (size_t r = 0; r < 4; r++) {
            rl_figure *f = NULL;
            assert_int_equal(rl_figure_new(&f, 1, 1), RL_OK);
            assert_int_equal(rl_figure_set_size_px(f, widths[w], 300, 100), RL_OK);
            rl_axes *ax = rl_figure_axes(f, 0, 0);
            if (r == 3)
                rl_axes_set_xscale(ax, RL_SCALE_LOG);
            double x[2] = {ranges[r][0], ranges[r][1]}, y[2] = {0, 1};
            assert_int_equal(rl_axes_line(ax, x, y, 2, NULL), RL_OK);
            char *svg = NULL;
            size_t len;
            assert_int_equal(rl_figure_to_svg(f, NULL, &svg, &len), RL_OK);
            label_list *l = calloc(1, sizeof *l);
            assert_non_null(l);
            l->cur = -1;
            XML_Parser p = XML_ParserCreate("UTF-8");
            XML_SetUserData(p, l);
            XML_SetElementHandler(p, lab_start, lab_end);
            XML_SetCharacterDataHandler(p, lab_chars);
            assert_int_equal(XML_Parse(p, svg, (int)len, 1), XML_STATUS_OK);
            XML_ParserFree(p);
            /* The x tick labels: centred, 9 pt, on the lowest row of such labels. */
            double row = 0;
            for (int i = 0; i < l->n; i++)
                if (l->v[i].anchor == 'm' && l->v[i].size == 9 && l->v[i].y > row)
                    row = l->v[i].y;
            double prev_right = -1e9;
            int count = 0;
            for (int i = 0; i < l->n; i++) {
                label_pos *lp = &l->v[i];
                if (lp->anchor != 'm' || lp->size != 9 || lp->y != row)
                    continue;
                cairo_set_font_size(cr, lp->size);
                cairo_text_extents_t te;
                cairo_text_extents(cr, lp->text, &te);
                double left = lp->x - te.x_advance / 2, right = lp->x + te.x_advance / 2;
                if (left < prev_right)
                    fail_msg("width %d, range %zu: label '%s' overlaps its neighbour", widths[w], r,
                             lp->text);
                prev_right = right;
                count++;
            }
            if (count < 2)
                fail_msg("width %d, range %zu: only %d x tick labels", widths[w], r, count);
            free(l);
            free(svg);
            rl_figure_free(f);
        }
    }
    cairo_destroy(cr);
    cairo_surface_destroy(cs);
}

/* SVG coordinates: rl_buf_put_num writes what "%.2f" does (trimmed, "-0" as "0") for
 * every value, ties and near-ties of the rounding included (its fast path decides only
 * where the product by 100 cannot cross a half). */
static void num_reference(double v, char *out, size_t cap)
{
    if (!isfinite(v))
        v = 0;
    int n = snprintf(out, cap, "%.2f", v);
    while (n > 0 && out[n - 1] == '0')
        n--;
    if (n > 0 && out[n - 1] == '.')
        n--;
    if (n == 2 && out[0] == '-' && out[1] == '0')
        out[0] = '0', n = 1;
    out[n] = 0;
}

static void check_num(double v)
{
    char want[400];
    num_reference(v, want, sizeof want);
    rl_buf b = {0};
    rl_buf_put_num(&b, v);
    rl_buf_put(&b, "", 1);
    if (strcmp(b.data, want) != 0) {
        print_message("%.17g: %s, printf says %s\n", v, b.data, want);
        fail();
    }
    rl_buf_free(&b);
}

static void test_svg_numbers_match_printf(void **state)
{
    (void)state;
    static const double special[] = {0, -0.0, 0.005, -0.005, 0.125, -0.125, 0.135, 1.005,
                                     2.675, 0.995, 99.995, 0.5, 0.25, 1e-9, -1e-9, 12.3,
                                     21474836.47, 21474836.48, 21474836.485, 1e10, -1e300,
                                     NAN, INFINITY, -INFINITY, 4503599627370497.0};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        check_num(special[i]);
    /* Every half-hundredth (ties and the doubles either side of them). */
    for (long k = -400000; k <= 400000; k += 7) {
        double t = (double)k / 200;
        check_num(t);
        check_num(nextafter(t, INFINITY));
        check_num(nextafter(t, -INFINITY));
    }
    uint64_t seed = 42;
    for (int i = 0; i < 300000; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(seed >> 11) / 9007199254740992.0;
        double mag = pow(10, (double)(i % 14) - 4); /* 1e-4 .. 1e9 */
        check_num((i & 1 ? -1 : 1) * u * mag);
    }
}

/* ---- The stroker of long polylines (plot_stroke.c) against cairo --------------------- */
typedef struct stroke_diff {
    int max_diff;       /* largest channel difference */
    long solid, solid_differ; /* pixels cairo paints fully in the colour; of them the
                                 stroker's that are not */
    long outside_inked; /* stroker pixels changed outside the clip */
    double ink_cairo, ink_ours;
} stroke_diff;

/* A curve that laps itself and leaves the clip on every side, stroked by cairo (round caps
 * and joins, clipped, as plot_render_cairo.c does) and by the stroker onto white, in a
 * colour of opacity `alpha` (one path: where it crosses itself it is painted once). */
static stroke_diff stroke_both(double width, const double clip[4], double alpha)
{
    enum { W = 300, H = 200, N = 600 };
    static double xy[2 * N];
    for (int i = 0; i < N; i++) {
        double t = 2 * M_PI * i / (N - 1);
        xy[2 * i] = 150 + 165 * sin(3 * t) + 3 * sin(40 * t);
        xy[2 * i + 1] = 100 + 110 * sin(2 * t + 0.4);
    }
    const double rgb[3] = {0.12, 0.47, 0.71};
    cairo_surface_t *sa = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, W, H);
    cairo_surface_t *sb = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, W, H);
    cairo_surface_t *s1 = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    cairo_t *a = cairo_create(sa), *b = cairo_create(sb), *c1 = cairo_create(s1);
    cairo_set_source_rgb(a, 1, 1, 1);
    cairo_paint(a);
    cairo_set_source_rgb(b, 1, 1, 1);
    cairo_paint(b);
    /* The stroker's pixel (premultiplied, as plot_render_cairo.c asks cairo for it), and
       the one cairo paints inside the line on white. */
    cairo_set_operator(c1, CAIRO_OPERATOR_SOURCE);
    cairo_set_source_rgba(c1, rgb[0], rgb[1], rgb[2], alpha);
    cairo_paint(c1);
    cairo_surface_flush(s1);
    uint32_t source, pixel;
    memcpy(&source, cairo_image_surface_get_data(s1), sizeof source);
    cairo_set_operator(c1, CAIRO_OPERATOR_OVER);
    cairo_set_source_rgb(c1, 1, 1, 1);
    cairo_paint(c1);
    cairo_set_source_rgba(c1, rgb[0], rgb[1], rgb[2], alpha);
    cairo_paint(c1);
    cairo_surface_flush(s1);
    memcpy(&pixel, cairo_image_surface_get_data(s1), sizeof pixel);
    cairo_rectangle(a, clip[0], clip[1], clip[2] - clip[0], clip[3] - clip[1]);
    cairo_clip(a);
    cairo_move_to(a, xy[0], xy[1]);
    for (int i = 1; i < N; i++)
        cairo_line_to(a, xy[2 * i], xy[2 * i + 1]);
    cairo_set_source_rgba(a, rgb[0], rgb[1], rgb[2], alpha);
    cairo_set_line_width(a, width);
    cairo_set_line_cap(a, CAIRO_LINE_CAP_ROUND);
    cairo_set_line_join(a, CAIRO_LINE_JOIN_ROUND);
    cairo_stroke(a);
    cairo_surface_flush(sa);
    cairo_surface_flush(sb);
    rl_stroker *st;
    assert_int_equal(rl_stroker_new(&st, W, H), RL_OK);
    rl_stroker_polyline(st, cairo_image_surface_get_data(sb), cairo_image_surface_get_stride(sb),
                        xy, N, width, source, clip);
    rl_stroker_free(st);
    stroke_diff d = {0};
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const unsigned char *pa = cairo_image_surface_get_data(sa) +
                                      (size_t)y * (size_t)cairo_image_surface_get_stride(sa) + 4 * x;
            const unsigned char *pb = cairo_image_surface_get_data(sb) +
                                      (size_t)y * (size_t)cairo_image_surface_get_stride(sb) + 4 * x;
            uint32_t va, vb;
            memcpy(&va, pa, 4);
            memcpy(&vb, pb, 4);
            for (int k = 0; k < 4; k++) {
                int diff = abs((int)pa[k] - (int)pb[k]);
                d.max_diff = diff > d.max_diff ? diff : d.max_diff;
            }
            d.solid += va == pixel;
            d.solid_differ += va == pixel && vb != pixel;
            bool outside = x + 1 <= clip[0] || x >= clip[2] || y + 1 <= clip[1] || y >= clip[3];
            d.outside_inked += outside && vb != 0xFFFFFFFFu;
            d.ink_cairo += 255 - (va & 0xFF); /* blue channel: 255 on white, 181 in the line
                                                 (opaque) */
            d.ink_ours += 255 - (vb & 0xFF);
        }
    cairo_destroy(a);
    cairo_destroy(b);
    cairo_destroy(c1);
    cairo_surface_destroy(sa);
    cairo_surface_destroy(sb);
    cairo_surface_destroy(s1);
    return d;
}

static void test_stroker_matches_cairo(void **state)
{
    (void)state;
    const double clip[4] = {20.3, 15.6, 270.8, 180.2};
    const double widths[] = {0.7, 1.0, 1.67, 2.08, 4.0};
    for (size_t i = 0; i < sizeof widths / sizeof *widths; i++) {
        stroke_diff d = stroke_both(widths[i], clip, 1.0);
        /* Nothing outside the clip; the inside the very colour cairo paints; the ink within
         * 1 %; a rim pixel off by at most 96 of 255 (where two strands share a pixel, the
         * stroker takes the larger coverage, not their sum). */
        assert_int_equal(d.outside_inked, 0);
        assert_true(d.solid_differ <= 5 + d.solid / 100);
        assert_true(fabs(d.ink_ours - d.ink_cairo) <= 0.01 * d.ink_cairo);
        assert_true(d.max_diff <= 96);
    }
}

/* A translucent colour (the evaluation's map figures: white halos at 0.85, pale tracks at
 * 0.45) is painted as cairo paints one path of it: the inside the same pixel over white,
 * opaque, not darker where the curve crosses itself; the rims within the same bounds. */
static void test_stroker_matches_cairo_translucent(void **state)
{
    (void)state;
    const double clip[4] = {20.3, 15.6, 270.8, 180.2};
    const double widths[] = {1.0, 2.4, 5.0};
    const double alphas[] = {0.45, 0.85};
    for (size_t a = 0; a < sizeof alphas / sizeof *alphas; a++)
        for (size_t i = 0; i < sizeof widths / sizeof *widths; i++) {
            stroke_diff d = stroke_both(widths[i], clip, alphas[a]);
            assert_int_equal(d.outside_inked, 0);
            if (widths[i] > 2) /* a line of 1 px has hardly a pixel it covers whole */
                assert_true(d.solid > 500);
            assert_true(d.solid_differ <= 5 + d.solid / 100);
            assert_true(fabs(d.ink_ours - d.ink_cairo) <= 0.01 * d.ink_cairo);
            assert_true(d.max_diff <= 96);
        }
}

/* A figure drawn again (its SVG, a PNG, its SVG once more) gives the same SVG as a fresh
 * figure of the same data drawn once: what a series keeps from its first layout (its
 * extent, its decimated runs) changes nothing. */
static void dense_figure(rl_figure **out)
{
    enum { N = 200000 };
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(rl_figure_new(out, 1, 1), RL_OK);
    rl_axes *ax = rl_figure_axes(*out, 0, 0);
    rl_axes_set_legend(ax, RL_LEGEND_BEST);
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < N; i++) {
            x[i] = i * 0.01;
            y[i] = sin(i * 0.001 * (k + 1)) + ((i * 7919 + k) % 101) * 0.002;
        }
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = k == 0 ? "a" : k == 1 ? "b" : "c";
        assert_int_equal(rl_axes_line(ax, x, y, N, &o), RL_OK);
    }
    free(x);
    free(y);
}

static void test_redraw_same_svg(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir(), png[4096];
    snprintf(png, sizeof png, "%s/dense.png", dir);
    rl_figure *f, *g;
    dense_figure(&f);
    dense_figure(&g);
    char *s1, *s2, *s3;
    size_t l1, l2, l3;
    assert_int_equal(rl_figure_to_svg(f, NULL, &s1, &l1), RL_OK);
    assert_int_equal(rl_figure_save(f, png, RL_PLOT_PNG), RL_OK);
    assert_int_equal(rl_figure_to_svg(f, NULL, &s2, &l2), RL_OK);
    assert_int_equal(rl_figure_to_svg(g, NULL, &s3, &l3), RL_OK);
    assert_int_equal(l1, l2);
    assert_memory_equal(s1, s2, l1);
    assert_int_equal(l1, l3);
    assert_memory_equal(s1, s3, l1);
    free(s1), free(s2), free(s3);
    rl_figure_free(f);
    rl_figure_free(g);
    rl_test_tmpdir_free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_png_svg_pdf),
        cmocka_unit_test(test_png_encoder_matches_cairo),
        cmocka_unit_test(test_stroker_matches_cairo),
        cmocka_unit_test(test_stroker_matches_cairo_translucent),
        cmocka_unit_test(test_redraw_same_svg),
        cmocka_unit_test(test_multi_panel_and_log),
        cmocka_unit_test(test_grid_on_and_off),
        cmocka_unit_test(test_nan_counted_in_note),
        cmocka_unit_test(test_empty_and_single_point),
        cmocka_unit_test(test_million_points_keep_spike),
        cmocka_unit_test(test_svg_escapes_text),
        cmocka_unit_test(test_legend_avoids_data),
        cmocka_unit_test(test_legend_outside_in_columns),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_figure_record),
        cmocka_unit_test(test_equal_aspect),
        cmocka_unit_test(test_extreme_values),
        cmocka_unit_test(test_random_figures),
        cmocka_unit_test(test_long_text_shortened),
        cmocka_unit_test(test_tick_labels_do_not_overlap),
        cmocka_unit_test(test_svg_numbers_match_printf),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    rl_plot_release_caches();
    return failed;
}
