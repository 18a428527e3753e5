/* Screenshot test of an HTML report in headless Chromium: the page opens from a file with
 * no server and renders visibly (not blank, figure colours present). Skips (77) when no
 * Chromium is installed. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/plot.h"
#include "runlab/report.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char chromium[1024];

static bool find_chromium(void)
{
    static const char *const names[] = {"chromium", "chromium-browser", "google-chrome"};
    const char *path = getenv("PATH");
    if (!path)
        return false;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const char *p = path;
        while (*p) {
            size_t n = strcspn(p, ":");
            snprintf(chromium, sizeof chromium, "%.*s/%s", (int)n, p, names[k]);
            if (n > 0 && access(chromium, X_OK) == 0)
                return true;
            p += n;
            if (*p)
                p++;
        }
    }
    return false;
}

static void build_report(const char *path)
{
    rl_report *r = NULL;
    assert_int_equal(rl_report_new(&r, "Screenshot check"), RL_OK);
    rl_report_paragraph(r, "A sample report rendered by headless Chromium.");
    rl_report_status(r, "Latency", RL_BADGE_PASS);
    rl_report_status(r, "Drops", RL_BADGE_FAIL);
    const char *hdr[3] = {"planner", "time [ms]", "success"};
    rl_report_table_begin(r, "Results", hdr, 3, RL_TABLE_SORTABLE);
    const char *a[3] = {"RRT*", "12.5", "98%"}, *b[3] = {"PRM*", "8.1", "91%"};
    rl_report_table_row(r, a);
    rl_report_table_row(r, b);
    rl_report_table_end(r);
    rl_figure *f = NULL;
    assert_int_equal(rl_figure_new(&f, 1, 1), RL_OK);
    rl_figure_set_size_px(f, 700, 420, 100);
    double x[50], y[50];
    for (int i = 0; i < 50; i++) {
        x[i] = i;
        y[i] = sin(i * 0.2);
    }
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.line_width = 4;
    rl_axes_line(rl_figure_axes(f, 0, 0), x, y, 50, &o);
    assert_int_equal(rl_report_figure(r, f, "A sine"), RL_OK);
    rl_figure_free(f);
    assert_int_equal(rl_report_write(r, path), RL_OK);
    rl_report_free(r);
}

static void test_screenshot_not_blank(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char html[1024], shot[1024], profile[1024], cmd[16384];
    snprintf(html, sizeof html, "%s/report.html", dir);
    snprintf(shot, sizeof shot, "%s/shot.png", dir);
    snprintf(profile, sizeof profile, "%s/profile", dir);
    build_report(html);
    snprintf(cmd, sizeof cmd,
             "timeout 120 '%s' --headless --no-sandbox --disable-gpu --disable-quic "
             "--no-first-run --disable-background-networking --disable-component-update "
             "--disable-sync --user-data-dir='%s' --screenshot='%s' --window-size=1200,900 "
             "'file://%s' >'%s/chromium.log' 2>&1",
             chromium, profile, shot, html, dir);
    int rc = system(cmd);
    if (access(shot, R_OK) != 0) {
        char log[4096];
        snprintf(log, sizeof log, "%s/chromium.log", dir);
        size_t n;
        char *text = rl_test_read_file(log, &n);
        fail_msg("chromium (exit %d) wrote no screenshot:\n%.2000s", rc, text);
    }
    cairo_surface_t *s = cairo_image_surface_create_from_png(shot);
    assert_int_equal(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    assert_int_equal(w, 1200);
    assert_int_equal(h, 900);
    const unsigned char *d = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    double sum = 0, sum2 = 0;
    long blue = 0, green_badge = 0;
    for (int y = 0; y < h; y++) {
        const uint32_t *row = (const uint32_t *)(d + (size_t)y * (size_t)stride);
        for (int x = 0; x < w; x++) {
            int r = (row[x] >> 16) & 0xFF, g = (row[x] >> 8) & 0xFF, b = row[x] & 0xFF;
            double grey = 0.299 * r + 0.587 * g + 0.114 * b;
            sum += grey;
            sum2 += grey * grey;
            if (abs(r - 0x00) < 30 && abs(g - 0x72) < 30 && abs(b - 0xB2) < 30)
                blue++; /* the figure's line (Okabe-Ito blue) */
            if (abs(r - 0xE6) < 12 && abs(g - 0xF4) < 12 && abs(b - 0xEA) < 12)
                green_badge++; /* the PASS badge background */
        }
    }
    double n = (double)w * h, var = sum2 / n - (sum / n) * (sum / n);
    cairo_surface_destroy(s);
    if (var < 100 || blue < 500 || green_badge < 50)
        fail_msg("screenshot looks blank or incomplete: variance %.1f, %ld line pixels, "
                 "%ld badge pixels",
                 var, blue, green_badge);
    rl_test_tmpdir_free(dir);
}

int main(void)
{
    if (!find_chromium()) {
        printf("FAIL: test_report_chromium: no chromium on PATH (scripts/install-deps.sh installs it)\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_screenshot_not_blank),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    rl_plot_release_caches();
    return failed;
}
