/* Drawing a runtime map with cairo: lanelet polygons filled, bounds stroked, the lab area
 * framed, optionally each lanelet's id at its centre; one path to SVG, PNG and PDF
 * (the file's extension decides). */
#include "runlab/error.h"
#include "runlab/map.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { LONG_SIDE_PX = 1200, MARGIN_PX = 20 };

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static void trace(cairo_t *cr, const rl_map_point *p, size_t n, bool close)
{
    for (size_t i = 0; i < n; i++) {
        if (i == 0)
            cairo_move_to(cr, p[i].x, p[i].y);
        else
            cairo_line_to(cr, p[i].x, p[i].y);
    }
    if (close)
        cairo_close_path(cr);
}

static void draw(cairo_t *cr, const rl_map *map, const rl_map_info *in, double scale, bool ids)
{
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    /* Map frame: y up, lab area's corner at the margin. */
    cairo_translate(cr, MARGIN_PX, MARGIN_PX + (in->area_ymax - in->area_ymin) * scale);
    cairo_scale(cr, scale, -scale);
    cairo_translate(cr, -in->area_xmin, -in->area_ymin);
    double px = 1 / scale;
    size_t n = rl_map_lanelet_count(map);
    const rl_map_point *p;
    for (size_t i = 0; i < n; i++) {
        size_t k = rl_map_lanelet_line(map, i, RL_MAP_POLYGON, &p);
        trace(cr, p, k, true);
        uint32_t f = rl_map_lanelet_flags(map, i);
        if (f & (RL_MAP_LANELET_ZERO_AREA | RL_MAP_LANELET_SELF_CROSSING))
            cairo_set_source_rgba(cr, 0.85, 0.2, 0.2, 0.35);
        else
            cairo_set_source_rgba(cr, 0.55, 0.6, 0.7, 0.35);
        cairo_fill(cr);
    }
    cairo_set_line_width(cr, 0.8 * px);
    for (size_t i = 0; i < n; i++) {
        cairo_set_source_rgb(cr, 0.15, 0.15, 0.2);
        size_t k = rl_map_lanelet_line(map, i, RL_MAP_LEFT, &p);
        trace(cr, p, k, false);
        k = rl_map_lanelet_line(map, i, RL_MAP_RIGHT, &p);
        trace(cr, p, k, false);
        cairo_stroke(cr);
    }
    cairo_set_source_rgb(cr, 0.2, 0.4, 0.8);
    cairo_set_line_width(cr, 1.5 * px);
    cairo_rectangle(cr, in->area_xmin, in->area_ymin, in->area_xmax - in->area_xmin,
                    in->area_ymax - in->area_ymin);
    cairo_stroke(cr);
    if (!ids)
        return;
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    for (size_t i = 0; i < n; i++) {
        size_t k = rl_map_lanelet_line(map, i, RL_MAP_CENTRE, &p);
        rl_map_point c = p[k / 2];
        char label[24];
        snprintf(label, sizeof label, "%lld", (long long)rl_map_lanelet_id(map, i));
        cairo_save(cr);
        cairo_translate(cr, c.x, c.y);
        cairo_scale(cr, px, -px); /* text upright, in pixels */
        cairo_set_font_size(cr, 9);
        cairo_move_to(cr, 0, 0);
        cairo_show_text(cr, label);
        cairo_restore(cr);
    }
}

int rl_map_draw(const rl_map *map, const char *path, bool ids)
{
    rl_map_info in;
    rl_map_get_info(map, &in);
    double w = in.area_xmax - in.area_xmin, h = in.area_ymax - in.area_ymin;
    if (!(w > 0) || !(h > 0))
        return rl_error_set(RL_EINVAL, "%s: the map has no extent to draw", path);
    double scale = LONG_SIDE_PX / fmax(w, h);
    double wpx = ceil(w * scale) + 2 * MARGIN_PX, hpx = ceil(h * scale) + 2 * MARGIN_PX;
    cairo_surface_t *s;
    bool png = ends_with(path, ".png");
    if (png)
        s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)wpx, (int)hpx);
    else if (ends_with(path, ".svg"))
        s = cairo_svg_surface_create(path, wpx, hpx);
    else if (ends_with(path, ".pdf"))
        s = cairo_pdf_surface_create(path, wpx, hpx);
    else
        return rl_error_set(RL_EINVAL, "%s: expected a .svg, .png or .pdf file name", path);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        int rc =
            rl_error_set(RL_EIO, "%s: %s", path, cairo_status_to_string(cairo_surface_status(s)));
        cairo_surface_destroy(s);
        return rc;
    }
    cairo_t *cr = cairo_create(s);
    draw(cr, map, &in, scale, ids);
    cairo_destroy(cr);
    cairo_status_t st = CAIRO_STATUS_SUCCESS;
    if (png)
        st = cairo_surface_write_to_png(s, path);
    cairo_surface_finish(s);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS)
        return rl_error_set(RL_EIO, "%s: %s", path, cairo_status_to_string(st));
    return RL_OK;
}
