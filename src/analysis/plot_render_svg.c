/* The SVG renderer: writes SVG 1.1 elements directly, so text stays <text> (cairo 1.16's
 * SVG surface turns glyphs into outlines). Shapes are paths with 2-decimal coordinates;
 * clipping uses clipPath ids with a caller-chosen prefix so figures can share a page. */
#include "analysis/plot_internal.h"

#include "runlab/error.h"

#include <stdio.h>
#include <stdlib.h>

struct rl_svg_rend {
    rl_rend base;
    rl_buf *b;
    char prefix[40];
    int nclip;
    int depth;
};

static rl_buf *B(rl_rend *r)
{
    return ((rl_svg_rend *)r)->b;
}

static void put_color(rl_buf *b, const char *attr, const rl_rgba *c)
{
    rl_buf_printf(b, " %s=\"#%02x%02x%02x\"", attr, (unsigned)(c->r * 255 + 0.5),
                  (unsigned)(c->g * 255 + 0.5), (unsigned)(c->b * 255 + 0.5));
    if (c->a < 0.999) {
        rl_buf_printf(b, " %s-opacity=\"", attr);
        rl_buf_put_num(b, c->a);
        rl_buf_puts(b, "\"");
    }
}

static void put_paint(rl_buf *b, const rl_rgba *fill, const rl_pen *pen)
{
    if (fill)
        put_color(b, "fill", fill);
    else
        rl_buf_puts(b, " fill=\"none\"");
    if (pen && pen->width > 0) {
        put_color(b, "stroke", &pen->color);
        rl_buf_puts(b, " stroke-width=\"");
        rl_buf_put_num(b, pen->width);
        rl_buf_puts(b, "\"");
        if (pen->round)
            rl_buf_puts(b, " stroke-linecap=\"round\" stroke-linejoin=\"round\"");
        if (pen->dash && pen->ndash > 0) {
            rl_buf_puts(b, " stroke-dasharray=\"");
            for (int i = 0; i < pen->ndash; i++) {
                if (i)
                    rl_buf_puts(b, ",");
                rl_buf_put_num(b, pen->dash[i]);
            }
            rl_buf_puts(b, "\"");
        }
    }
}

static void s_path(rl_rend *r, const double *xy, size_t n, bool closed, const rl_rgba *fill,
                   const rl_pen *pen)
{
    rl_buf *b = B(r);
    if (n == 0)
        return;
    rl_buf_puts(b, "<path d=\"M");
    for (size_t i = 0; i < n; i++) {
        if (i)
            rl_buf_puts(b, i == 1 ? "L" : " ");
        rl_buf_put_num(b, xy[2 * i]);
        rl_buf_puts(b, " ");
        rl_buf_put_num(b, xy[2 * i + 1]);
    }
    if (closed)
        rl_buf_puts(b, "Z");
    rl_buf_puts(b, "\"");
    put_paint(b, fill, pen);
    rl_buf_puts(b, "/>\n");
}

static void s_circle(rl_rend *r, double cx, double cy, double radius, const rl_rgba *fill,
                     const rl_pen *pen)
{
    rl_buf *b = B(r);
    rl_buf_puts(b, "<circle cx=\"");
    rl_buf_put_num(b, cx);
    rl_buf_puts(b, "\" cy=\"");
    rl_buf_put_num(b, cy);
    rl_buf_puts(b, "\" r=\"");
    rl_buf_put_num(b, radius);
    rl_buf_puts(b, "\"");
    put_paint(b, fill, pen);
    rl_buf_puts(b, "/>\n");
}

static void s_text(rl_rend *r, double x, double y, const char *utf8, double size, bool bold,
                   const rl_rgba *color, double ha, double angle_deg)
{
    rl_buf *b = B(r);
    rl_buf_puts(b, "<text x=\"");
    rl_buf_put_num(b, x);
    rl_buf_puts(b, "\" y=\"");
    rl_buf_put_num(b, y);
    rl_buf_puts(b, "\" font-size=\"");
    rl_buf_put_num(b, size);
    rl_buf_puts(b, "\"");
    if (bold)
        rl_buf_puts(b, " font-weight=\"bold\"");
    if (ha > 0.75)
        rl_buf_puts(b, " text-anchor=\"end\"");
    else if (ha > 0.25)
        rl_buf_puts(b, " text-anchor=\"middle\"");
    if (angle_deg != 0) {
        rl_buf_puts(b, " transform=\"rotate(");
        rl_buf_put_num(b, -angle_deg);
        rl_buf_puts(b, " ");
        rl_buf_put_num(b, x);
        rl_buf_puts(b, " ");
        rl_buf_put_num(b, y);
        rl_buf_puts(b, ")\"");
    }
    if (color->r > 0.01 || color->g > 0.01 || color->b > 0.01 || color->a < 0.999)
        put_color(b, "fill", color);
    rl_buf_puts(b, ">");
    rl_buf_put_escaped(b, utf8);
    rl_buf_puts(b, "</text>\n");
}

static void s_clip_push(rl_rend *r, double x, double y, double w, double h)
{
    rl_svg_rend *s = (rl_svg_rend *)r;
    int id = ++s->nclip;
    rl_buf_printf(s->b, "<clipPath id=\"%s-c%d\"><rect x=\"", s->prefix, id);
    rl_buf_put_num(s->b, x);
    rl_buf_puts(s->b, "\" y=\"");
    rl_buf_put_num(s->b, y);
    rl_buf_puts(s->b, "\" width=\"");
    rl_buf_put_num(s->b, w);
    rl_buf_puts(s->b, "\" height=\"");
    rl_buf_put_num(s->b, h);
    rl_buf_printf(s->b, "\"/></clipPath>\n<g clip-path=\"url(#%s-c%d)\">\n", s->prefix, id);
    s->depth++;
}

static void s_clip_pop(rl_rend *r)
{
    rl_svg_rend *s = (rl_svg_rend *)r;
    if (s->depth > 0) {
        rl_buf_puts(s->b, "</g>\n");
        s->depth--;
    }
}

static const rl_rend_ops svg_ops = {s_path, s_circle, s_text, s_clip_push, s_clip_pop};

int rl_svg_rend_begin(rl_svg_rend **out, rl_buf *buf, double w_pt, double h_pt, double w_px,
                      double h_px, const char *id_prefix)
{
    rl_svg_rend *s = calloc(1, sizeof *s);
    if (!s)
        return rl_error_set(RL_ENOMEM, "plot: out of memory");
    s->base.ops = &svg_ops;
    s->b = buf;
    snprintf(s->prefix, sizeof s->prefix, "%s", id_prefix ? id_prefix : "rl");
    rl_buf_puts(buf, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"");
    rl_buf_put_num(buf, w_px);
    rl_buf_puts(buf, "\" height=\"");
    rl_buf_put_num(buf, h_px);
    rl_buf_puts(buf, "\" viewBox=\"0 0 ");
    rl_buf_put_num(buf, w_pt);
    rl_buf_puts(buf, " ");
    rl_buf_put_num(buf, h_pt);
    /* Fonts with DejaVu's metrics first, so the layout measured with DejaVu still fits. */
    rl_buf_puts(buf, "\" font-family=\"'DejaVu Sans', Verdana, 'Bitstream Vera Sans', "
                     "sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    *out = s;
    return RL_OK;
}

rl_rend *rl_svg_rend_base(rl_svg_rend *s)
{
    return &s->base;
}

void rl_svg_rend_end(rl_svg_rend *s)
{
    if (!s)
        return;
    while (s->depth > 0)
        s_clip_pop(&s->base);
    rl_buf_puts(s->b, "</svg>\n");
    free(s);
}
