/* Promises of the headers and docs that no other test read (issue 30 item 10, the table in
 * docs/testing.md "Promises and the tests that read them"): every enum value's name and its
 * way back, the docs' status and reason tables against the code, the map's projections in
 * both directions of each axis, its format detection at the exact length of each magic, and
 * the message table's array expansion at its limit. */
#include "rl_test.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/bench_internal.h"
#include "runlab/bench.h"
#include "runlab/error.h"
#include "runlab/eval.h"
#include "runlab/map.h"
#include "runlab/msgdef.h"
#include "runlab/runs.h"

/* docs/<name> from the source tree (RUNLAB_SOURCE, set by ctest). */
static char *read_doc(const char *name)
{
    const char *src = getenv("RUNLAB_SOURCE");
    assert_non_null(src);
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/%s", src, name);
    return rl_test_read_file(path, NULL);
}

/* The text after the line starting with `heading`; fails the test when it is not there. */
static char *after_line(char *doc, const char *heading)
{
    char *p = strstr(doc, heading);
    if (!p)
        fail_msg("the docs no longer have '%s'", heading);
    return p;
}

/* bench.h: "0..8 are OMPL's PlannerStatus values" with OMPL's own words
 * (ompl::base::PlannerStatus::asString), 9.. runlab's; out of range reads as unknown. */
static void test_bench_status_names_every_value(void **state)
{
    (void)state;
    static const char *const want[RL_RUN_STATUS_COUNT] = {
        "Unknown status", "Invalid start",        "Invalid goal",   "Unrecognized goal type",
        "Timeout",        "Approximate solution", "Exact solution", "Crash",
        "Abort",          "Infeasible",           "Out of memory",  "Error"};
    for (int s = 0; s < RL_RUN_STATUS_COUNT; s++)
        assert_string_equal(rl_bench_status_name((rl_bench_status)s), want[s]);
    assert_string_equal(rl_bench_status_name(RL_RUN_STATUS_COUNT), "Unknown status");
    assert_string_equal(rl_bench_status_name((rl_bench_status)-1), "Unknown status");
    /* The words of results.json go back to the same status, every one of them. */
    for (int s = 0; s < RL_RUN_STATUS_COUNT; s++) {
        rl_bench_status back = RL_RUN_STATUS_COUNT;
        const char *w = rl_bench_status_word((rl_bench_status)s);
        if (rl_bench_status_from_word(w, &back) != RL_OK || back != (rl_bench_status)s)
            fail_msg("status %d: word '%s' reads back as %d", s, w, (int)back);
    }
    rl_bench_status back;
    assert_int_equal(rl_bench_status_from_word("Exact", &back), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "Exact"));
}

/* docs/bench.md "## Statuses": each row's value and name are what the log writes. */
static void test_bench_status_table_of_the_docs(void **state)
{
    (void)state;
    char *doc = read_doc("bench.md");
    char *p = after_line(doc, "## Statuses");
    char *end = strstr(p + 1, "\n## ");
    int rows = 0;
    for (char *line = strchr(p, '\n'); line && (!end || line < end); line = strchr(line + 1, '\n')) {
        int value;
        char name[64];
        if (sscanf(line + 1, "| %d | %63[^|]|", &value, name) != 2)
            continue;
        for (size_t n = strlen(name); n > 0 && name[n - 1] == ' '; n--)
            name[n - 1] = '\0';
        assert_true(value >= 0 && value < RL_RUN_STATUS_COUNT);
        if (strcmp(rl_bench_status_name((rl_bench_status)value), name) != 0)
            fail_msg("docs/bench.md says status %d is '%s', the log writes '%s'", value, name,
                     rl_bench_status_name((rl_bench_status)value));
        rows++;
    }
    assert_true(rows >= 7); /* Timeout .. Error */
    free(doc);
}

/* bench.h: type words, case-sensitive; DOUBLE is REAL and STRING is TEXT; "?" otherwise. */
static void test_bench_type_words(void **state)
{
    (void)state;
    static const char *const want[] = {"BOOLEAN", "INTEGER", "REAL", "ENUM", "TEXT"};
    for (int t = 0; t < 5; t++) {
        rl_bench_type back = (rl_bench_type)-1;
        assert_string_equal(rl_bench_type_name((rl_bench_type)t), want[t]);
        assert_int_equal(rl_bench_type_parse(want[t], &back), RL_OK);
        assert_int_equal(back, t);
    }
    assert_string_equal(rl_bench_type_name((rl_bench_type)5), "?");
    rl_bench_type t = RL_BENCH_BOOLEAN;
    assert_int_equal(rl_bench_type_parse("DOUBLE", &t), RL_OK);
    assert_int_equal(t, RL_BENCH_REAL);
    assert_int_equal(rl_bench_type_parse("STRING", &t), RL_OK);
    assert_int_equal(t, RL_BENCH_TEXT);
    assert_int_equal(rl_bench_type_parse("real", &t), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "'real'"));
}

/* eval.h: "PASS", "FAIL", "INSUFFICIENT", "UNAVAILABLE", "N/A"; "?" out of range. These are
 * the keys of summary.json's counts and the status column of checks.csv. */
static void test_eval_status_names_every_value(void **state)
{
    (void)state;
    static const char *const want[RL_EVAL_STATUS_COUNT] = {"PASS", "FAIL", "INSUFFICIENT",
                                                           "UNAVAILABLE", "N/A"};
    for (int s = 0; s < RL_EVAL_STATUS_COUNT; s++)
        assert_string_equal(rl_eval_status_name((rl_eval_status)s), want[s]);
    assert_string_equal(rl_eval_status_name(RL_EVAL_STATUS_COUNT), "?");
    assert_string_equal(rl_eval_status_name((rl_eval_status)-1), "?");
}

/* runs.h and docs/perflog.md: each reason's snake_case name, the one the docs' table and
 * the messages use; "unknown" out of range; the three statuses. */
static void test_run_reason_names_every_value(void **state)
{
    (void)state;
    static const char *const want[RL_REASON_COUNT] = {
        "no_csv",        "csv_unreadable", "csv_empty",   "csv_too_large",
        "no_rows",       "truncated_row",  "bad_rows",    "non_numeric",
        "nul_bytes",     "long_lines",     "no_manifest", "bad_manifest",
        "fingerprint_mismatch", "columns_mismatch", "no_summary", "bad_summary",
        "timer_nesting"};
    for (int r = 0; r < RL_REASON_COUNT; r++)
        assert_string_equal(rl_run_reason_name((rl_run_reason)r), want[r]);
    assert_string_equal(rl_run_reason_name(RL_REASON_COUNT), "unknown");
    assert_string_equal(rl_run_status_name(RL_RUN_PARSED), "parsed");
    assert_string_equal(rl_run_status_name(RL_RUN_DEGRADED), "degraded");
    assert_string_equal(rl_run_status_name(RL_RUN_SKIPPED), "skipped");

    /* docs/perflog.md's reason table names every reason, and only those. */
    char *doc = read_doc("perflog.md");
    char *p = after_line(doc, "| reason | when |");
    char *end = strstr(p, "\n\n");
    assert_non_null(end);
    *end = '\0';
    bool seen[RL_REASON_COUNT] = {false};
    for (char *line = strchr(p, '\n'); line; line = strchr(line + 1, '\n')) {
        char *cell_end = strchr(line + 2, '|');
        if (!cell_end || strncmp(line + 1, "|---", 4) == 0)
            continue;
        for (char *q = strchr(line, '`'); q && q < cell_end; q = strchr(q + 1, '`')) {
            char *close = strchr(q + 1, '`');
            assert_non_null(close);
            int found = -1;
            for (int r = 0; r < RL_REASON_COUNT; r++)
                if ((size_t)(close - q - 1) == strlen(want[r]) &&
                    strncmp(q + 1, want[r], strlen(want[r])) == 0)
                    found = r;
            if (found < 0)
                fail_msg("docs/perflog.md names reason '%.*s', which runs.h does not have",
                         (int)(close - q - 1), q + 1);
            seen[found] = true;
            q = close;
        }
    }
    for (int r = 0; r < RL_REASON_COUNT; r++)
        if (!seen[r])
            fail_msg("docs/perflog.md's reason table does not name '%s'", want[r]);
    free(doc);
}

/* map.h: every projection's name parses back to it; names are case-sensitive; "?" out of
 * range; an unknown name is refused with a message naming it. */
static void test_map_projection_names_every_value(void **state)
{
    (void)state;
    static const char *const want[] = {"auto", "ltp", "utm", "smerc", "metric", "local", "none"};
    for (int p = RL_MAP_PROJ_AUTO; p <= RL_MAP_PROJ_NONE; p++) {
        rl_map_projection back = (rl_map_projection)-1;
        assert_string_equal(rl_map_projection_name((rl_map_projection)p), want[p]);
        if (rl_map_projection_parse(want[p], &back) != RL_OK || back != (rl_map_projection)p)
            fail_msg("projection '%s' does not parse back to %d", want[p], p);
    }
    assert_string_equal(rl_map_projection_name((rl_map_projection)(RL_MAP_PROJ_NONE + 1)), "?");
    rl_map_projection back;
    assert_int_equal(rl_map_projection_parse("UTM", &back), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "'UTM'"));
}

/* map.h: LTP is x = R cos(lat0) dlon, y = R dlat (east and north positive, the origin at
 * 0, 0); UTM and SMERC subtract the projected origin and keep the same directions; the
 * metric projections do not take lat/lon. */
static void test_map_projection_directions(void **state)
{
    (void)state;
    const double R = 6378137.0, DEG = M_PI / 180, lat0 = 49.0, lon0 = 8.4, d = 0.001;
    rl_map_point q;
    assert_int_equal(rl_map_project(RL_MAP_PROJ_LTP, lat0, lon0, lat0 + d, lon0 - 2 * d, &q),
                     RL_OK);
    assert_float_equal(q.y, R * d * DEG, 1e-6);
    assert_float_equal(q.x, -R * cos(lat0 * DEG) * 2 * d * DEG, 1e-6);
    const rl_map_projection geo[] = {RL_MAP_PROJ_LTP, RL_MAP_PROJ_UTM, RL_MAP_PROJ_SMERC};
    for (size_t k = 0; k < 3; k++) {
        rl_map_point o, n, s, e, w;
        assert_int_equal(rl_map_project(geo[k], lat0, lon0, lat0, lon0, &o), RL_OK);
        assert_int_equal(rl_map_project(geo[k], lat0, lon0, lat0 + d, lon0, &n), RL_OK);
        assert_int_equal(rl_map_project(geo[k], lat0, lon0, lat0 - d, lon0, &s), RL_OK);
        assert_int_equal(rl_map_project(geo[k], lat0, lon0, lat0, lon0 + d, &e), RL_OK);
        assert_int_equal(rl_map_project(geo[k], lat0, lon0, lat0, lon0 - d, &w), RL_OK);
        const char *name = rl_map_projection_name(geo[k]);
        if (fabs(o.x) > 1e-6 || fabs(o.y) > 1e-6)
            fail_msg("%s: the origin projects to %.9f, %.9f, not 0, 0", name, o.x, o.y);
        /* 0.001 degree is about 111 m north and 73 m east at 49 degrees. */
        if (!(n.y > 100 && n.y < 120 && s.y < -100 && s.y > -120 && e.x > 65 && e.x < 80 &&
              w.x < -65 && w.x > -80))
            fail_msg("%s: north %.3f, south %.3f, east %.3f, west %.3f", name, n.y, s.y, e.x,
                     w.x);
    }
    const rl_map_projection metric[] = {RL_MAP_PROJ_AUTO, RL_MAP_PROJ_METRIC, RL_MAP_PROJ_LOCAL,
                                        RL_MAP_PROJ_NONE};
    for (size_t k = 0; k < 4; k++)
        assert_int_equal(rl_map_project(metric[k], lat0, lon0, lat0, lon0, &q), RL_EINVAL);
}

/* map.h: the format from the first bytes; each magic at exactly its own length, one byte
 * short of it, and after an XML declaration and a comment. */
static void test_map_detect_format_at_each_length(void **state)
{
    (void)state;
    static const char magic[8] = "RLMAP\r\n\x1a";
    assert_int_equal(rl_map_detect_format(magic, 8), RL_MAP_FORMAT_RUNTIME);
    assert_int_equal(rl_map_detect_format(magic, 7), RL_MAP_FORMAT_UNKNOWN);
    assert_int_equal(rl_map_detect_format("<osm", 4), RL_MAP_FORMAT_LANELET2);
    assert_int_equal(rl_map_detect_format("<os", 3), RL_MAP_FORMAT_UNKNOWN);
    assert_int_equal(rl_map_detect_format("<commonRoad", 11), RL_MAP_FORMAT_COMMONROAD);
    assert_int_equal(rl_map_detect_format("<commonRoa", 10), RL_MAP_FORMAT_UNKNOWN);
    const char *xml = "<?xml version=\"1.0\"?>\n<!-- exported -->\n<commonRoad>";
    assert_int_equal(rl_map_detect_format(xml, strlen(xml)), RL_MAP_FORMAT_COMMONROAD);
    const char *osm = "<?xml version='1.0' encoding='UTF-8'?>\n<osm version=\"0.6\">";
    assert_int_equal(rl_map_detect_format(osm, strlen(osm)), RL_MAP_FORMAT_LANELET2);
    assert_int_equal(rl_map_detect_format("<gpx>", 5), RL_MAP_FORMAT_UNKNOWN);
    assert_int_equal(rl_map_detect_format("", 0), RL_MAP_FORMAT_UNKNOWN);
}

/* map.h: the read options' defaults. */
static void test_map_read_option_defaults(void **state)
{
    (void)state;
    rl_map_read_options o;
    memset(&o, 0xa5, sizeof o);
    rl_map_read_options_init(&o);
    assert_int_equal(o.projection, RL_MAP_PROJ_AUTO);
    assert_true(o.origin_lat == 49.0 && o.origin_lon == 8.4);
    assert_true(o.align_bounds);
    assert_false(o.quiet);
}

/* msgdef.h: fixed arrays of up to RL_MSG_MAX_EXPANDED elements are expanded into one column
 * per element ("a[0]" ..), longer ones are one column of canonical JSON: N - 1, N, N + 1. */
static void test_msg_table_expansion_limit(void **state)
{
    (void)state;
    const size_t sizes[] = {RL_MSG_MAX_EXPANDED - 1, RL_MSG_MAX_EXPANDED,
                            RL_MSG_MAX_EXPANDED + 1};
    for (size_t k = 0; k < 3; k++) {
        char text[64];
        snprintf(text, sizeof text, "uint8[%zu] a\nint32 b\n", sizes[k]);
        rl_msgdef *def = NULL;
        assert_int_equal(rl_msgdef_parse(&def, "ros2msg", "t/msg/A", text, strlen(text)),
                         RL_OK);
        char **names = NULL;
        size_t n = 0;
        assert_int_equal(rl_msg_columns(def, &names, &n), RL_OK);
        bool expanded = sizes[k] <= RL_MSG_MAX_EXPANDED;
        size_t want = expanded ? sizes[k] + 1 : 2;
        if (n != want)
            fail_msg("uint8[%zu]: %zu columns, want %zu", sizes[k], n, want);
        char last[32];
        snprintf(last, sizeof last, "a[%zu]", sizes[k] - 1);
        assert_string_equal(names[0], expanded ? "a[0]" : "a");
        if (expanded)
            assert_string_equal(names[n - 2], last);
        assert_string_equal(names[n - 1], "b");
        rl_msg_columns_free(names, n);
        rl_msgdef_free(def);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bench_status_names_every_value),
        cmocka_unit_test(test_bench_status_table_of_the_docs),
        cmocka_unit_test(test_bench_type_words),
        cmocka_unit_test(test_eval_status_names_every_value),
        cmocka_unit_test(test_run_reason_names_every_value),
        cmocka_unit_test(test_map_projection_names_every_value),
        cmocka_unit_test(test_map_projection_directions),
        cmocka_unit_test(test_map_detect_format_at_each_length),
        cmocka_unit_test(test_map_read_option_defaults),
        cmocka_unit_test(test_msg_table_expansion_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
