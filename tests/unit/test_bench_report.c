/* The benchmark report (runlab/bench_report.h) on a small real benchmark of test planners
 * (quick, anytime with a "best cost" progress property, crashing): report.html has every
 * section, the CI and rank-sum tables, inline SVG and no network references; figures/ has
 * PNG, SVG and a record per figure; headless Chromium renders it (skipped without it). */
#include "rl_test.h"

#include "runlab/bench.h"
#include "runlab/bench_report.h"
#include "runlab/error.h"
#include "runlab/plot.h"

#include <cairo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The planners sleep rather than spin and are bounded by steps, not by the time limit, so
 * their statuses and their order (quick's median time well below anytime's minimum)
 * hold however little CPU they get on a loaded machine. */
static void nap(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
}

static rl_bench_status solve_quick(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem;
    double u = (double)(rl_bench_run_seed(run) % 1000) / 1000.0;
    nap(0.002 + 0.004 * u);
    rl_bench_run_set_real(run, "solution length", 2.0 + u);
    return RL_RUN_EXACT;
}

static const char *const PROGRESS_NAMES[] = {"best cost"};
static const rl_bench_type PROGRESS_TYPES[] = {RL_BENCH_REAL};

enum { ANYTIME_STEPS = 20 }; /* improvements after the first solution, 5 ms apart */

static rl_bench_status solve_anytime(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem;
    double u = (double)(rl_bench_run_seed(run) % 1000) / 1000.0, cost = 3.0 + u;
    nap(0.01 + 0.02 * u); /* time to a first solution */
    for (int i = 0; i < ANYTIME_STEPS && !rl_bench_run_should_stop(run); i++) {
        cost = 1.5 + (cost - 1.5) * 0.9;
        rl_bench_run_progress(run, 0, cost);
        nap(0.005);
    }
    rl_bench_run_set_real(run, "best cost", cost);
    rl_bench_run_set_real(run, "solution length", cost);
    return RL_RUN_EXACT;
}

static rl_bench_status solve_crash(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem, (void)run;
    raise(SIGSEGV);
    return RL_RUN_EXACT;
}

static rl_bench_planner *mk(const char *name,
                            rl_bench_status (*solve)(void *, void *, rl_bench_run *))
{
    rl_bench_planner *p = calloc(1, sizeof *p);
    p->name = name;
    p->self = p;
    p->solve = solve;
    p->free = free;
    if (solve == solve_anytime) {
        p->n_progress = 1;
        p->progress_names = PROGRESS_NAMES;
        p->progress_types = PROGRESS_TYPES;
    }
    return p;
}

static char *g_dir;

static int setup(void **state)
{
    (void)state;
    g_dir = rl_test_tmpdir();
    rl_bench *b = rl_bench_new("report test", NULL, "a test problem");
    if (!b)
        return -1;
    rl_bench_set_seed(b, 11);
    rl_bench_add_planner(b, mk("quick <q>", solve_quick));
    rl_bench_add_planner(b, mk("anytime", solve_anytime));
    rl_bench_add_planner(b, mk("crashing", solve_crash));
    rl_bench_request req;
    rl_bench_request_init(&req);
    req.max_time = 5.0; /* generous: only statuses and the planners' order are asserted */
    req.run_count = 8;
    req.time_between_updates = 0.01;
    req.save_console_output = false;
    char path[1024];
    snprintf(path, sizeof path, "%s/results.json", g_dir);
    int rc = rl_bench_execute(b, &req);
    if (rc == RL_OK)
        rc = rl_bench_write_json(rl_bench_results(b), path);
    rl_bench_free(b);
    if (rc != RL_OK)
        fprintf(stderr, "setup: %s\n", rl_error_last());
    return rc == RL_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rl_test_tmpdir_free(g_dir);
    return 0;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void test_report_contents(void **state)
{
    (void)state;
    char out[1024], path[1024];
    assert_int_equal(rl_bench_report_write(g_dir, NULL, out, sizeof out), RL_OK);
    snprintf(path, sizeof path, "%s/report.html", g_dir);
    assert_string_equal(out, path);
    size_t len;
    char *html = rl_test_read_file(path, &len);
    static const char *const want[] = {
        "<h2>Summary</h2>", "<h2>Solved and status rates</h2>",
        "<h2>Time, memory and solution length</h2>", "<h2>Best cost over time</h2>",
        "<h2>Medians and confidence intervals</h2>",
        "<h2>Rank-sum test of time against the best planner</h2>", "<h2>Methods</h2>",
        "time 95% CI [s]", "memory 95% CI [MB]", "length 95% CI", "p (two-sided)",
        "Best planner: quick &lt;q&gt;", "best (reference)", "Mann", "Binomial(n, 1/2)",
        "tie-corrected", "Exact solution", "Crash", "figures/best_cost.png"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(html, want[i]))
            fail_msg("report.html lacks '%s'", want[i]);
    assert_null(strstr(html, "quick <q>")); /* escaped everywhere, also in the SVG */
    assert_int_equal(count(html, "<svg"), 3);
    assert_int_equal(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    assert_null(strstr(html, "https://"));
    /* 8 runs: every CI is available (n >= 6), shown as "lo - hi". */
    assert_null(strstr(html, "n/a (n ="));
    assert_true(count(html, "\xC2\xA0\xE2\x80\x93\xE2\x81\xA0\xC2\xA0") >= 6);
    free(html);
    static const char *const figs[] = {"status", "distributions", "best_cost"};
    static const char *const exts[] = {"png", "svg", "yaml"};
    for (size_t i = 0; i < 3; i++)
        for (size_t k = 0; k < 3; k++) {
            snprintf(path, sizeof path, "%s/figures/%s.%s", g_dir, figs[i], exts[k]);
            if (access(path, R_OK) != 0)
                fail_msg("missing %s", path);
        }
    snprintf(path, sizeof path, "%s/figures/best_cost.yaml", g_dir);
    char *rec = rl_test_read_file(path, &len);
    assert_non_null(strstr(rec, "results.json"));
    assert_non_null(strstr(rec, "best_cost.svg"));
    free(rec);
    /* Rewriting is fine (bench report DIR, --resume). */
    assert_int_equal(rl_bench_report_write(g_dir, NULL, NULL, 0), RL_OK);
}

static void test_report_errors(void **state)
{
    (void)state;
    char *d = rl_test_tmpdir();
    assert_true(rl_bench_report_write(d, NULL, NULL, 0) < 0);
    assert_non_null(strstr(rl_error_last(), "results.json"));
    char path[1024];
    snprintf(path, sizeof path, "%s/results.json", d);
    rl_test_write_file(path, "{\"experiment\": 3}", 17);
    assert_int_equal(rl_bench_report_write(d, NULL, NULL, 0), RL_EPARSE);
    assert_int_equal(rl_bench_report_write(NULL, NULL, NULL, 0), RL_EINVAL);
    rl_test_tmpdir_free(d);
}

/* figures/ as a link out of the benchmark directory (issue 29 item 7): refused, nothing is
 * drawn at the link's target. */
static void test_report_figures_link(void **state)
{
    (void)state;
    char *d = rl_test_tmpdir();
    char from[1024], path[1100], outside[1024];
    snprintf(from, sizeof from, "%s/results.json", g_dir);
    size_t len;
    char *json = rl_test_read_file(from, &len);
    snprintf(path, sizeof path, "%s/results.json", d);
    rl_test_write_file(path, json, len);
    free(json);
    snprintf(outside, sizeof outside, "%s/outside", d);
    assert_int_equal(mkdir(outside, 0755), 0);
    snprintf(path, sizeof path, "%s/figures", d);
    assert_int_equal(symlink(outside, path), 0);
    assert_int_equal(rl_bench_report_write(d, NULL, NULL, 0), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "figures: is a symbolic link"));
    snprintf(path, sizeof path, "%s/status.png", outside);
    assert_int_not_equal(access(path, F_OK), 0);
    rl_test_tmpdir_free(d);
}

static bool find_chromium(char *out, size_t cap)
{
    static const char *const names[] = {"chromium", "chromium-browser", "google-chrome"};
    const char *path = getenv("PATH");
    for (size_t k = 0; path && k < sizeof names / sizeof names[0]; k++) {
        for (const char *p = path; *p;) {
            size_t n = strcspn(p, ":");
            snprintf(out, cap, "%.*s/%s", (int)n, p, names[k]);
            if (n > 0 && access(out, X_OK) == 0)
                return true;
            p += n;
            if (*p)
                p++;
        }
    }
    return false;
}

static void test_report_chromium(void **state)
{
    (void)state;
    char chromium[1024];
    if (!find_chromium(chromium, sizeof chromium)) {
        fail_msg("no chromium on PATH (scripts/install-deps.sh installs it)");
    }
    assert_int_equal(rl_bench_report_write(g_dir, NULL, NULL, 0), RL_OK);
    char shot[1100], cmd[8192];
    snprintf(shot, sizeof shot, "%s/shot.png", g_dir);
    snprintf(cmd, sizeof cmd,
             "timeout 120 '%s' --headless --no-sandbox --disable-gpu --disable-quic "
             "--no-first-run --disable-background-networking --disable-component-update "
             "--disable-sync --user-data-dir='%s/profile' --screenshot='%s' "
             "--window-size=1200,2000 'file://%s/report.html' >'%s/chromium.log' 2>&1",
             chromium, g_dir, shot, g_dir, g_dir);
    int rc = system(cmd);
    if (access(shot, R_OK) != 0)
        fail_msg("chromium (exit %d) wrote no screenshot (see %s/chromium.log)", rc, g_dir);
    cairo_surface_t *s = cairo_image_surface_create_from_png(shot);
    assert_int_equal(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    assert_int_equal(w, 1200);
    assert_int_equal(h, 2000);
    const unsigned char *d = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    long green = 0, red = 0, text = 0;
    for (int y = 0; y < h; y++) {
        const uint32_t *row = (const uint32_t *)(d + (size_t)y * (size_t)stride);
        for (int x = 0; x < w; x++) {
            int r = (row[x] >> 16) & 0xFF, g = (row[x] >> 8) & 0xFF, b = row[x] & 0xFF;
            if (abs(r - 0x00) < 20 && abs(g - 0x9E) < 20 && abs(b - 0x73) < 20)
                green++; /* "Exact solution" bars */
            if (abs(r - 0xD5) < 20 && abs(g - 0x5E) < 20 && abs(b - 0x00) < 20)
                red++; /* "Crash" bar */
            if (r < 60 && g < 60 && b < 60)
                text++;
        }
    }
    cairo_surface_destroy(s);
    if (green < 5000 || red < 2000 || text < 5000)
        fail_msg("screenshot incomplete: %ld solved-bar, %ld crash-bar, %ld text pixels", green,
                 red, text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_contents),
        cmocka_unit_test(test_report_errors),
        cmocka_unit_test(test_report_figures_link),
        cmocka_unit_test(test_report_chromium),
    };
    int failed = cmocka_run_group_tests(tests, setup, teardown);
    rl_plot_release_caches();
    return failed;
}
