/* The vehicle colours of runlab/plot.h: twelve distinct colours, none of them the
 * violation colour or black; a series given an rgb is drawn (and its legend sample) in that
 * colour in the SVG; a scatter asked to lie below the lines comes before them. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/plot.h"

#include <stdlib.h>
#include <string.h>

static void test_vehicle_colors_distinct(void **state)
{
    (void)state;
    for (int i = 0; i < RL_PLOT_VEHICLE_COLORS; i++) {
        unsigned c = rl_plot_vehicle_color(i);
        assert_true(c <= 0xFFFFFFu);
        assert_int_not_equal(c, RL_PLOT_VIOLATION_COLOR);
        assert_int_not_equal(c, RL_PLOT_LIMIT_COLOR);
        assert_int_not_equal(c, 0xFFFFFFu);
        for (int j = 0; j < i; j++)
            assert_int_not_equal(c, rl_plot_vehicle_color(j));
    }
    /* Cycles, also for negative keys. */
    assert_int_equal(rl_plot_vehicle_color(RL_PLOT_VEHICLE_COLORS + 3), rl_plot_vehicle_color(3));
    assert_int_equal(rl_plot_vehicle_color(-1),
                     rl_plot_vehicle_color(RL_PLOT_VEHICLE_COLORS - 1));
    /* The first vehicles keep Okabe-Ito's blue, orange, green; the fourth is reddish
       purple (not the vermillion of the marks). */
    assert_int_equal(rl_plot_vehicle_color(0), rl_plot_palette(0));
    assert_int_equal(rl_plot_vehicle_color(3), rl_plot_palette(4));
}

static char *svg_of(rl_figure *fig)
{
    char *svg = NULL;
    size_t len = 0;
    assert_int_equal(rl_figure_to_svg(fig, NULL, &svg, &len), RL_OK);
    return svg;
}

static void test_rgb_series_and_marks_below(void **state)
{
    (void)state;
    rl_figure *fig;
    assert_int_equal(rl_figure_new(&fig, 1, 1), RL_OK);
    rl_axes *ax = rl_figure_axes(fig, 0, 0);
    double x[3] = {0, 1, 2}, y[3] = {0, 1, 0};
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.label = "track";
    o.use_rgb = true;
    o.rgb = 0x123456;
    assert_int_equal(rl_axes_line(ax, x, y, 3, &o), RL_OK);
    rl_series_opts_init(&o);
    o.label = "marks";
    o.use_rgb = true;
    o.rgb = RL_PLOT_VIOLATION_COLOR;
    o.marker = RL_MARKER_CROSS;
    o.below_lines = true;
    assert_int_equal(rl_axes_scatter(ax, x, y, 3, &o), RL_OK);
    char *svg = svg_of(fig);
    const char *line = strstr(svg, "stroke=\"#123456\""), *mark = strstr(svg, "stroke=\"#d55e00\"");
    assert_non_null(line);
    assert_non_null(mark);
    assert_true(mark < line); /* under the line */
    free(svg);
    /* Without below_lines the marks come after (on top), as before. */
    rl_figure_free(fig);
    assert_int_equal(rl_figure_new(&fig, 1, 1), RL_OK);
    ax = rl_figure_axes(fig, 0, 0);
    rl_series_opts_init(&o);
    o.use_rgb = true;
    o.rgb = 0x123456;
    assert_int_equal(rl_axes_line(ax, x, y, 3, &o), RL_OK);
    rl_series_opts_init(&o);
    o.use_rgb = true;
    o.rgb = RL_PLOT_VIOLATION_COLOR;
    o.marker = RL_MARKER_CROSS;
    assert_int_equal(rl_axes_scatter(ax, x, y, 3, &o), RL_OK);
    svg = svg_of(fig);
    assert_true(strstr(svg, "stroke=\"#d55e00\"") > strstr(svg, "stroke=\"#123456\""));
    free(svg);
    rl_figure_free(fig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vehicle_colors_distinct),
        cmocka_unit_test(test_rgb_series_and_marks_below),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rl_plot_release_caches();
    return rc;
}
