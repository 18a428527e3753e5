/* Tests of runlab/report.h: escaping of every data string, right-aligned numbers, sortable
 * tables, badges with colour and text, inline SVG figures with unique ids, links that must
 * stay beside the report, no network references, and state errors. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/plot.h"
#include "runlab/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void test_escape(void **state)
{
    (void)state;
    char *s = NULL;
    assert_int_equal(rl_html_escape("<a href='x'>&\"</a>", &s), RL_OK);
    assert_string_equal(s, "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
    free(s);
    assert_int_equal(rl_html_escape("ok \xC3\xA9 \xE2\x88\x92 bad:\xFF\xC3 ctl:\x01\x7F nl\n", &s),
                     RL_OK);
    assert_string_equal(s, "ok \xC3\xA9 \xE2\x88\x92 bad:\xEF\xBF\xBD\xEF\xBF\xBD ctl:"
                           "\xEF\xBF\xBD\xEF\xBF\xBD nl\n");
    free(s);
    /* Overlong encodings and surrogates are invalid UTF-8 too. */
    assert_int_equal(rl_html_escape("\xC0\xBC\xED\xA0\x80", &s), RL_OK);
    assert_null(strchr(s, '<'));
    assert_int_equal(count(s, "\xEF\xBF\xBD"), 5);
    free(s);
    assert_int_equal(rl_html_escape(NULL, &s), RL_OK);
    assert_string_equal(s, "");
    free(s);
}

static rl_figure *small_figure(void)
{
    rl_figure *f = NULL;
    assert_int_equal(rl_figure_new(&f, 1, 1), RL_OK);
    rl_figure_set_size_px(f, 400, 300, 100);
    double x[3] = {1, 2, 3}, y[3] = {2, 1, 3};
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    rl_axes_set_title(ax, "fig <title>");
    assert_int_equal(rl_axes_line(ax, x, y, 3, NULL), RL_OK);
    return f;
}

static void test_full_report(void **state)
{
    (void)state;
    rl_report *r = NULL;
    assert_int_equal(rl_report_new(&r, "Run <42> & co"), RL_OK);
    assert_int_equal(rl_report_heading(r, 2, "Summary \"quoted\""), RL_OK);
    assert_int_equal(rl_report_paragraph(r, "<script>alert('x')</script>"), RL_OK);
    assert_int_equal(rl_report_status(r, "Latency budget", RL_BADGE_PASS), RL_OK);
    assert_int_equal(rl_report_status(r, "Coverage", RL_BADGE_INSUFFICIENT), RL_OK);
    assert_int_equal(rl_report_kv_begin(r, "Setup"), RL_OK);
    assert_int_equal(rl_report_kv(r, "planner", "RRT* <fast>"), RL_OK);
    assert_int_equal(rl_report_kv_end(r), RL_OK);
    const char *hdr[4] = {"planner", "time [ms]", "success", "status"};
    assert_int_equal(rl_report_table_begin(r, "Results", hdr, 4, RL_TABLE_SORTABLE), RL_OK);
    const char *row1[4] = {"PRM*", "12.5", "98%", "ok"};
    assert_int_equal(rl_report_table_row(r, row1), RL_OK);
    const char *row2[4] = {"B&B", "-3e2", "n/a", NULL};
    assert_int_equal(rl_report_table_row(r, row2), RL_OK);
    rl_report_cell cells[4] = {{RL_CELL_LINK, "log", "runs/a b.csv", RL_BADGE_NA},
                               {RL_CELL_TEXT, "inf", NULL, RL_BADGE_NA},
                               {RL_CELL_BADGE, NULL, NULL, RL_BADGE_FAIL},
                               {RL_CELL_BADGE, NULL, NULL, RL_BADGE_UNAVAILABLE}};
    assert_int_equal(rl_report_table_row_cells(r, cells), RL_OK);
    assert_int_equal(rl_report_table_end(r), RL_OK);
    rl_figure *f = small_figure();
    assert_int_equal(rl_report_figure(r, f, "Figure 1: cost"), RL_OK);
    assert_int_equal(rl_report_figure(r, f, NULL), RL_OK);
    rl_figure_free(f);
    assert_int_equal(rl_report_link(r, "fig.png", "PNG"), RL_OK);
    assert_int_equal(rl_report_link(r, "sub/fig.svg", NULL), RL_OK);
    assert_int_equal(rl_report_link(r, "sub/\xc3\xa9t\xc3\xa9 100%#?.svg", "odd"), RL_OK);
    assert_int_equal(rl_report_status(r, "Other", RL_BADGE_NA), RL_OK);

    char *html = NULL;
    size_t len = 0;
    assert_int_equal(rl_report_to_string(r, &html, &len), RL_OK);
    assert_int_equal(strlen(html), len);
    assert_true(strncmp(html, "<!DOCTYPE html>", 15) == 0);
    assert_non_null(strstr(html, "<title>Run &lt;42&gt; &amp; co</title>"));
    assert_non_null(strstr(html, "<h2>Summary &quot;quoted&quot;</h2>"));
    assert_non_null(strstr(html, "<p>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</p>"));
    assert_non_null(strstr(html, "RRT* &lt;fast&gt;"));
    /* Numbers right-aligned with a sort key; text and "n/a" not. */
    assert_non_null(strstr(html, "<td class=\"num\" data-v=\"12.5\">12.5</td>"));
    assert_non_null(strstr(html, "<td class=\"num\" data-v=\"98\">98%</td>"));
    assert_non_null(strstr(html, "<td class=\"num\" data-v=\"-300\">-3e2</td>"));
    assert_non_null(strstr(html, "<td><span class=\"w\">n/a</span></td>")); /* kept whole */
    assert_non_null(strstr(html, "<td>inf</td>"));
    assert_non_null(strstr(html, "<td>B&amp;B</td>"));
    /* Badges: colour class and the word. */
    assert_non_null(strstr(html, "<span class=\"badge pass\">PASS</span>"));
    assert_non_null(strstr(html, "<span class=\"badge fail\">FAIL</span>"));
    assert_non_null(strstr(html, "<span class=\"badge insufficient\">INSUFFICIENT</span>"));
    assert_non_null(strstr(html, "<span class=\"badge unavailable\">UNAVAILABLE</span>"));
    assert_non_null(strstr(html, "<span class=\"badge na\">N/A</span>"));
    /* Links: percent-encoded (UTF-8 bytes, space, %, #, ?), on one line. */
    assert_non_null(strstr(html, "<a href=\"sub/%C3%A9t%C3%A9%20100%25%23%3F.svg\">odd</a>"));
    assert_non_null(strstr(html, "<a href=\"runs/a%20b.csv\">log</a>"));
    assert_non_null(strstr(html, "<p class=\"links\"><a href=\"fig.png\">PNG</a> <a "
                                 "href=\"sub/fig.svg\">sub/fig.svg</a> <a "
                                 "href=\"sub/%C3%A9t%C3%A9%20100%25%23%3F.svg\">odd</a> </p>"));
    /* Figures inline, without XML declarations, with distinct clip ids. */
    assert_int_equal(count(html, "<svg "), 2);
    assert_null(strstr(html, "<?xml"));
    assert_non_null(strstr(html, "id=\"fig1-c1\""));
    assert_non_null(strstr(html, "id=\"fig2-c1\""));
    assert_non_null(strstr(html, ">fig &lt;title&gt;</text>"));
    assert_non_null(strstr(html, "<figcaption>Figure 1: cost</figcaption>"));
    /* Sorting script inline; nothing fetched from the network. The only URL is the SVG
     * namespace name, which browsers never fetch. */
    assert_int_equal(count(html, "<script>"), 1);
    assert_null(strstr(html, "<script src"));
    assert_int_equal(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    assert_null(strstr(html, "@import"));
    assert_non_null(strstr(html, "@media print"));
    free(html);

    char *dir = rl_test_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/r.html", dir);
    assert_int_equal(rl_report_write(r, path), RL_OK);
    size_t flen;
    char *disk = rl_test_read_file(path, &flen);
    assert_int_equal(flen, len);
    free(disk);
    rl_test_tmpdir_free(dir);
    rl_report_free(r);
}

/* A figure drawn once as SVG and inlined: the page holds what the renderer draws with the
 * report's id prefix, and text that looks like a clip id stays as it is. */
static void test_figure_from_svg(void **state)
{
    (void)state;
    rl_figure *f = small_figure();
    rl_axes_set_xlabel(rl_figure_axes(f, 0, 0), "url(#rl-c1) rl-c1", NULL);
    char *plain = NULL, *fig2 = NULL;
    assert_int_equal(rl_figure_to_svg(f, NULL, &plain, NULL), RL_OK);
    assert_int_equal(rl_figure_to_svg(f, "fig2", &fig2, NULL), RL_OK);
    rl_report *r = NULL;
    assert_int_equal(rl_report_new(&r, "svg"), RL_OK);
    assert_int_equal(rl_report_figure(r, f, NULL), RL_OK);
    assert_int_equal(rl_report_figure_svg(r, plain, "drawn once"), RL_OK);
    assert_int_equal(rl_report_figure_svg(r, NULL, NULL), RL_EINVAL);
    char *html = NULL;
    assert_int_equal(rl_report_to_string(r, &html, NULL), RL_OK);
    char expect[65536];
    snprintf(expect, sizeof expect, "<figure>\n%s<figcaption>drawn once</figcaption>\n</figure>",
             strstr(fig2, "<svg"));
    assert_non_null(strstr(html, expect));
    assert_int_equal(count(html, "url(#rl-c1) rl-c1</text>"), 2);
    assert_null(strstr(html, "id=\"rl-c"));
    assert_int_equal(count(html, "clip-path=\"url(#fig2-c1)\""), 1);
    free(html);
    free(plain);
    free(fig2);
    rl_report_free(r);
    rl_figure_free(f);
}

static void test_no_script_without_sortable(void **state)
{
    (void)state;
    rl_report *r = NULL;
    assert_int_equal(rl_report_new(&r, "t"), RL_OK);
    const char *hdr[1] = {"a"};
    assert_int_equal(rl_report_table_begin(r, NULL, hdr, 1, 0), RL_OK);
    const char *row[1] = {"1"};
    assert_int_equal(rl_report_table_row(r, row), RL_OK);
    assert_int_equal(rl_report_table_end(r), RL_OK);
    char *html = NULL;
    assert_int_equal(rl_report_to_string(r, &html, NULL), RL_OK);
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "sortable\""));
    free(html);
    rl_report_free(r);
}

static void test_links_stay_local(void **state)
{
    (void)state;
    rl_report *r = NULL;
    assert_int_equal(rl_report_new(&r, "t"), RL_OK);
    const char *bad[] = {"http://example.com/x",
                         "https://x",
                         "javascript:alert(1)",
                         "/etc/passwd",
                         "../up.html",
                         "a/../../b",
                         "",
                         "file:///etc",
                         "a\nb",
                         "\\\\server\\share"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (rl_report_link(r, bad[i], "x") != RL_EINVAL)
            fail_msg("link '%s' accepted", bad[i]);
    assert_int_equal(rl_report_link(r, "ok..name.txt", NULL), RL_OK);
    assert_int_equal(rl_report_link(r, "dir/a:b.txt", NULL), RL_OK);
    rl_report_cell c = {RL_CELL_LINK, "x", "http://evil", RL_BADGE_NA};
    const char *hdr[1] = {"a"};
    assert_int_equal(rl_report_table_begin(r, NULL, hdr, 1, 0), RL_OK);
    assert_int_equal(rl_report_table_row_cells(r, &c), RL_EINVAL);
    assert_int_equal(rl_report_table_end(r), RL_OK);
    rl_report_free(r);
}

static void test_state_errors(void **state)
{
    (void)state;
    rl_report *r = NULL;
    assert_int_equal(rl_report_new(&r, NULL), RL_OK);
    assert_int_equal(rl_report_kv(r, "a", "b"), RL_ESTATE);
    assert_int_equal(rl_report_table_row(r, NULL), RL_ESTATE);
    assert_int_equal(rl_report_table_end(r), RL_ESTATE);
    assert_int_equal(rl_report_heading(r, 7, "x"), RL_EINVAL);
    const char *hdr[1] = {"a"};
    assert_int_equal(rl_report_table_begin(r, NULL, hdr, 0, 0), RL_EINVAL);
    assert_int_equal(rl_report_kv_begin(r, NULL), RL_OK);
    assert_int_equal(rl_report_paragraph(r, "x"), RL_ESTATE);
    char *html = NULL;
    assert_int_equal(rl_report_to_string(r, &html, NULL), RL_ESTATE);
    assert_int_equal(rl_report_kv_end(r), RL_OK);
    assert_int_equal(rl_report_to_string(r, &html, NULL), RL_OK);
    assert_non_null(strstr(html, "<title>runlab report</title>"));
    free(html);
    assert_string_equal(rl_badge_name(RL_BADGE_NA), "N/A");
    assert_string_equal(rl_badge_name((rl_badge)42), "?");
    rl_report_free(r);
}

/* Folded blocks, figures with an anchor and links to it, and words that keep whole. */
static void test_details_anchors_words(void **state)
{
    (void)state;
    rl_report *r = NULL;
    assert_int_equal(rl_report_new(&r, "t"), RL_OK);
    assert_int_equal(rl_report_details_end(r), RL_ESTATE);
    assert_int_equal(rl_report_details_begin(r, "states_speed: 2 checks <PASS>"), RL_OK);
    assert_int_equal(rl_report_details_begin(r, "nested"), RL_ESTATE);
    char *html = NULL;
    assert_int_equal(rl_report_to_string(r, &html, NULL), RL_ESTATE); /* still open */
    const char *hdr[2] = {"check", "reason"};
    assert_int_equal(rl_report_table_begin(r, NULL, hdr, 2, 0), RL_OK);
    assert_int_equal(rl_report_details_end(r), RL_ESTATE); /* the table is open */
    rl_report_cell cells[2] = {{RL_CELL_LINK, "speed", "#fig-speed", RL_BADGE_NA},
                               {RL_CELL_TEXT, "6.86-9.10 s on rt/vehicle/2/state and a "
                                              "very long sentence after it",
                                NULL, RL_BADGE_NA}};
    assert_int_equal(rl_report_table_row_cells(r, cells), RL_OK);
    cells[0].href = "#no space";
    assert_int_equal(rl_report_table_row_cells(r, cells), RL_EINVAL);
    cells[0].href = "#";
    assert_int_equal(rl_report_table_row_cells(r, cells), RL_EINVAL);
    assert_int_equal(rl_report_table_end(r), RL_OK);
    assert_int_equal(rl_report_details_end(r), RL_OK);
    const char *svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>";
    assert_int_equal(rl_report_figure_svg_at(r, svg, "Speed", "fig-speed"), RL_OK);
    assert_int_equal(rl_report_figure_svg_at(r, svg, NULL, "bad\"id"), RL_EINVAL);
    assert_int_equal(rl_report_figure_svg_at(r, svg, NULL, ""), RL_EINVAL);
    assert_int_equal(rl_report_to_string(r, &html, NULL), RL_OK);
    assert_non_null(strstr(html, "<details><summary>states_speed: 2 checks &lt;PASS&gt;</summary>"));
    assert_non_null(strstr(html, "</table></div>\n</details>"));
    assert_non_null(strstr(html, "<a href=\"#fig-speed\">speed</a>"));
    assert_non_null(strstr(html, "<figure id=\"fig-speed\">"));
    assert_int_equal(count(html, "<figure"), 1);
    assert_non_null(strstr(html, "beforeprint")); /* printing opens the folded blocks */
    /* Words with '-' or '/' are kept on one line; the text is unchanged. */
    assert_non_null(strstr(html, "<td class=\"prose\"><span class=\"w\">6.86-9.10</span> s on "
                                 "<span class=\"w\">rt/vehicle/2/state</span> and a very long"));
    free(html);
    rl_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_full_report),
        cmocka_unit_test(test_figure_from_svg),
        cmocka_unit_test(test_no_script_without_sortable),
        cmocka_unit_test(test_links_stay_local),
        cmocka_unit_test(test_state_errors),
        cmocka_unit_test(test_details_anchors_words),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    rl_plot_release_caches();
    return failed;
}
