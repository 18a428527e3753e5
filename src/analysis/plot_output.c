/* Output of figures: PNG through a cairo image surface (encoded by plot_png.c), PDF
 * through a cairo PDF surface, SVG through the direct SVG writer. All three run the same rl_plot_draw; files are
 * written atomically from memory so a failed render never leaves a half figure. */
#include "analysis/plot_internal.h"

#include "runlab/error.h"
#include "runlab/fs.h"

#include <cairo-pdf.h>
#include <cairo.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static cairo_status_t to_buf(void *closure, const unsigned char *data, unsigned int len)
{
    rl_buf *b = closure;
    rl_buf_put(b, (const char *)data, len);
    return b->err ? CAIRO_STATUS_NO_MEMORY : CAIRO_STATUS_SUCCESS;
}

static int draw_cairo(rl_figure *fig, cairo_t *cr, double scale)
{
    rl_measure *m = NULL;
    rl_cairo_rend *cren = NULL;
    int rc = rl_measure_new(&m);
    if (rc == RL_OK)
        rc = rl_cairo_rend_new(&cren, cr);
    if (rc == RL_OK) {
        cairo_scale(cr, scale, scale);
        cairo_set_source_rgb(cr, 1, 1, 1);
        cairo_paint(cr);
        rc = rl_plot_draw(fig, rl_cairo_rend_base(cren), m);
    }
    rl_cairo_rend_free(cren);
    rl_measure_free(m);
    if (rc == RL_OK && cairo_status(cr) != CAIRO_STATUS_SUCCESS)
        rc = rl_error_set(RL_ERR, "plot: cairo: %s", cairo_status_to_string(cairo_status(cr)));
    return rc;
}

static int render_png(rl_figure *fig, rl_buf *out)
{
    int w = (int)lround(fig->w_in * fig->dpi), h = (int)lround(fig->h_in * fig->dpi);
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(s);
        return rl_error_set(RL_ENOMEM, "plot: cannot create a %dx%d image", w, h);
    }
    cairo_t *cr = cairo_create(s);
    int rc = draw_cairo(fig, cr, w / (fig->w_in * 72));
    cairo_destroy(cr);
    if (rc == RL_OK) {
        cairo_surface_flush(s);
        rc = rl_png_encode_argb32(cairo_image_surface_get_data(s), w, h,
                                  cairo_image_surface_get_stride(s), out);
    }
    cairo_surface_destroy(s);
    return rc;
}

static int render_pdf(rl_figure *fig, rl_buf *out)
{
    cairo_surface_t *s =
        cairo_pdf_surface_create_for_stream(to_buf, out, fig->w_in * 72, fig->h_in * 72);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(s);
        return rl_error_set(RL_ENOMEM, "plot: cannot create a PDF surface");
    }
    cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "runlab");
    if (fig->title)
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, fig->title);
    cairo_t *cr = cairo_create(s);
    int rc = draw_cairo(fig, cr, 1.0);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    if (rc == RL_OK && cairo_surface_status(s) != CAIRO_STATUS_SUCCESS)
        rc = rl_error_set(RL_ERR, "plot: PDF: %s", cairo_status_to_string(cairo_surface_status(s)));
    cairo_surface_destroy(s);
    return rc;
}

static int render_svg(rl_figure *fig, const char *id_prefix, rl_buf *out)
{
    if (id_prefix) {
        size_t n = strlen(id_prefix);
        if (n == 0 || n > 32 ||
            strspn(id_prefix, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
                              "QRSTUVWXYZ0123456789-_") != n)
            return rl_error_set(RL_EINVAL,
                                "plot: SVG id prefix '%s' must be 1..32 letters, "
                                "digits, '-' or '_'",
                                id_prefix);
    }
    rl_measure *m = NULL;
    rl_svg_rend *svg = NULL;
    int rc = rl_measure_new(&m);
    if (rc < 0)
        return rc;
    rl_buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
    rc = rl_svg_rend_begin(&svg, out, fig->w_in * 72, fig->h_in * 72, lround(fig->w_in * fig->dpi),
                           lround(fig->h_in * fig->dpi), id_prefix);
    if (rc == RL_OK) {
        if (fig->title) {
            rl_buf_puts(out, "<title>");
            rl_buf_put_escaped(out, fig->title);
            rl_buf_puts(out, "</title>\n");
        }
        rc = rl_plot_draw(fig, rl_svg_rend_base(svg), m);
        rl_svg_rend_end(svg);
    }
    rl_measure_free(m);
    if (rc == RL_OK && out->err)
        rc = rl_error_set(RL_ENOMEM, "plot: out of memory writing SVG");
    return rc;
}

static rl_plot_format format_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/'))
        return RL_PLOT_AUTO;
    if (strcasecmp(dot, ".png") == 0)
        return RL_PLOT_PNG;
    if (strcasecmp(dot, ".svg") == 0)
        return RL_PLOT_SVG;
    if (strcasecmp(dot, ".pdf") == 0)
        return RL_PLOT_PDF;
    return RL_PLOT_AUTO;
}

int rl_figure_save(rl_figure *fig, const char *path, rl_plot_format format)
{
    if (!fig || !path || !*path)
        return rl_error_set(RL_EINVAL, "plot: NULL figure or empty path");
    if (format == RL_PLOT_AUTO)
        format = format_of(path);
    rl_buf b = {0};
    int rc;
    switch (format) {
    case RL_PLOT_PNG: rc = render_png(fig, &b); break;
    case RL_PLOT_SVG: rc = render_svg(fig, NULL, &b); break;
    case RL_PLOT_PDF: rc = render_pdf(fig, &b); break;
    default:
        return rl_error_set(RL_EINVAL, "%s: unknown figure format (use .png, .svg or .pdf)", path);
    }
    if (rc == RL_OK && b.err)
        rc = rl_error_set(RL_ENOMEM, "plot: out of memory");
    if (rc == RL_OK)
        rc = rl_fs_write_atomic(path, b.data, b.len, 0644);
    else
        rl_error_prefix(rc, "%s", path);
    rl_buf_free(&b);
    return rc;
}

int rl_figure_to_svg(rl_figure *fig, const char *id_prefix, char **out, size_t *out_len)
{
    if (!fig || !out)
        return rl_error_set(RL_EINVAL, "plot: NULL argument");
    rl_buf b = {0};
    int rc = render_svg(fig, id_prefix, &b);
    if (rc < 0) {
        rl_buf_free(&b);
        return rc;
    }
    *out = b.data;
    if (out_len)
        *out_len = b.len;
    return RL_OK;
}
