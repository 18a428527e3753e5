/* The example rigid-body problems (examples/rlx.c): the separating-axis test against known
 * rectangle pairs and a brute-force point sampling, and every rigid problem solved by each
 * planner in this process, the same path for the same seed, each path collision-free when
 * re-checked at a ten times finer resolution. */
#include "rl_test.h"

#include "rlx.h"
#include "runlab/bench.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *const RIGID[] = {"narrow2d_rigid", "maze2d_rigid", "cluttered2d_rigid",
                                    "cluttered3d_rigid"};
enum { N_RIGID = sizeof RIGID / sizeof RIGID[0] };

static void test_sat_known_pairs(void **state)
{
    (void)state;
    const double d45 = M_PI / 4;
    /* unit squares (half 0.5) side by side: apart, touching, overlapping */
    rlx_rect a = {0, 0, 0.5, 0.5, 0};
    assert_false(rlx_rect_overlap(&a, &(rlx_rect){1.01, 0, 0.5, 0.5, 0}));
    assert_true(rlx_rect_overlap(&a, &(rlx_rect){1.0, 0, 0.5, 0.5, 0}));
    assert_true(rlx_rect_overlap(&a, &(rlx_rect){0.9, 0.9, 0.5, 0.5, 0}));
    /* a square turned 45 degrees reaches sqrt(2)/2 along x: overlaps at 1.2, not at 1.22 */
    assert_true(rlx_rect_overlap(&a, &(rlx_rect){1.2, 0, 0.5, 0.5, d45}));
    assert_false(rlx_rect_overlap(&a, &(rlx_rect){1.22, 0, 0.5, 0.5, d45}));
    /* the corner case the axis-aligned boxes would miss: two diamonds whose bounding boxes
     * overlap, separated along the diagonal (only a rotated axis separates them) */
    rlx_rect r1 = {0, 0, 0.5, 0.1, d45}, r2 = {0.3, -0.3, 0.5, 0.1, d45};
    assert_false(rlx_rect_overlap(&r1, &r2));
    assert_true(rlx_rect_overlap(&r1, &(rlx_rect){0.1, -0.1, 0.5, 0.1, d45}));
    /* a long thin bar crossing a square without any corner inside it */
    assert_true(rlx_rect_overlap(&a, &(rlx_rect){0, 0, 2, 0.05, 0.3}));
    /* the same bar turned by pi is the same set */
    rlx_rect bar = {1.5, 0, 0.8, 0.05, 0.2}, flipped = bar;
    flipped.theta += M_PI;
    assert_int_equal(rlx_rect_overlap(&a, &bar), rlx_rect_overlap(&a, &flipped));
    /* distances */
    assert_true(fabs(rlx_rect_distance(&a, &(rlx_rect){2, 0, 0.5, 0.5, 0}) - 1) < 1e-12);
    assert_true(fabs(rlx_rect_distance(&a, &(rlx_rect){2, 2, 0.5, 0.5, 0}) - sqrt(2)) < 1e-12);
    assert_true(fabs(rlx_rect_distance(&a, &(rlx_rect){2, 0, 0.5, 0.5, d45}) - (1.5 - sqrt(0.5))) <
                1e-12);
    /* inscribed circles of radius 0.5 overlap when the centres are 0.85 apart */
    assert_true(rlx_rect_distance(&a, &(rlx_rect){0.6, 0.6, 0.5, 0.5, 1}) == 0);
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static double unit(uint64_t *s)
{
    return (double)(next(s) >> 11) / 9007199254740992.0;
}

static bool inside(const rlx_rect *r, double x, double y)
{
    double c = cos(r->theta), s = sin(r->theta), dx = x - r->cx, dy = y - r->cy;
    return fabs(c * dx + s * dy) <= r->hx && fabs(-s * dx + c * dy) <= r->hy;
}

/* A grid of points over each rectangle: any point of one inside the other means overlap;
 * pairs the grid finds disjoint while SAT says they overlap must be very close. */
static void test_sat_against_sampling(void **state)
{
    (void)state;
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    int overlaps = 0, apart = 0;
    for (int trial = 0; trial < 3000; trial++) {
        rlx_rect r[2];
        for (int k = 0; k < 2; k++)
            r[k] = (rlx_rect){unit(&s), unit(&s), 0.02 + 0.2 * unit(&s), 0.02 + 0.2 * unit(&s),
                              2 * M_PI * unit(&s)};
        bool found = false;
        for (int k = 0; k < 2 && !found; k++) {
            double c = cos(r[k].theta), sn = sin(r[k].theta);
            for (int i = 0; i <= 40 && !found; i++)
                for (int j = 0; j <= 40 && !found; j++) {
                    double u = r[k].hx * (2.0 * i / 40 - 1), v = r[k].hy * (2.0 * j / 40 - 1);
                    found = inside(&r[1 - k], r[k].cx + c * u - sn * v, r[k].cy + sn * u + c * v);
                }
        }
        bool sat = rlx_rect_overlap(&r[0], &r[1]);
        if (found)
            assert_true(sat);
        if (sat && !found)
            assert_true(rlx_rect_distance(&r[0], &r[1]) == 0);
        if (!sat) /* then the distance is positive and no sample got inside */
            assert_true(rlx_rect_distance(&r[0], &r[1]) > 0);
        overlaps += sat, apart += !sat;
    }
    assert_true(overlaps > 300 && apart > 300); /* both cases were exercised */
}

static void test_problems_are_rigid(void **state)
{
    (void)state;
    for (int i = 0; i < N_RIGID; i++) {
        rlx_problem *p = rlx_problem_new(RIGID[i]);
        assert_non_null(p);
        assert_true(rlx_problem_is_rigid(p));
        assert_int_equal(rlx_problem_dimension(p), strstr(RIGID[i], "3d") ? 4 : 3);
        double st[4], go[4];
        rlx_problem_start_goal(p, st, go);
        assert_true(rlx_state_valid(p, st));
        assert_true(rlx_state_valid(p, go));
        rlx_problem_free(p);
    }
    /* listed for the command, and the point problems are still point problems */
    bool listed = false;
    for (const char *const *n = rlx_problem_names(); *n; n++)
        listed |= strcmp(*n, "cluttered3d_rigid") == 0;
    assert_true(listed);
    rlx_problem *p = rlx_problem_new("narrow2d");
    assert_false(rlx_problem_is_rigid(p));
    assert_int_equal(rlx_problem_dimension(p), 2);
    rlx_problem_free(p);
    assert_null(rlx_problem_new("nope_rigid"));
}

/* narrow2d_rigid: the body is across the slot at the start; turned along it, it fits. */
static void test_narrow_needs_turning(void **state)
{
    (void)state;
    rlx_problem *p = rlx_problem_new("narrow2d_rigid");
    assert_non_null(p);
    assert_false(rlx_state_valid(p, (double[]){0.5, 0.5, M_PI / 2}));
    assert_true(rlx_state_valid(p, (double[]){0.5, 0.5, 0}));
    assert_true(rlx_state_valid(p, (double[]){0.5, 0.5, M_PI - 0.01})); /* wraps */
    assert_false(rlx_state_valid(p, (double[]){0.5, 0.5, 0.5}));
    /* the straight motion from start to goal keeps the heading and hits the wall */
    double st[3], go[3], line[6];
    rlx_problem_start_goal(p, st, go);
    memcpy(line, st, sizeof st);
    memcpy(line + 3, go, sizeof go);
    assert_false(rlx_path_valid(p, line, 2, 0.001));
    rlx_problem_free(p);
}

#define SAFETY_SECONDS 600.0
enum { SOLVE_ITERATIONS = 1000000, RRTSTAR_ITERATIONS = 3000 };

static void solve_checked(const rlx_problem *p, const char *name, const char *kind, uint64_t seed,
                          double **q, size_t *n)
{
    /* Bounded by iterations, with a time limit only as a safety net: the outcome is the
     * same on a loaded machine. */
    int st = rlx_solve(p, kind, seed, SAFETY_SECONDS, SOLVE_ITERATIONS, true, q, n);
    if (st != RL_RUN_EXACT)
        fail_msg("%s on %s, seed %llu: status %d", kind, name, (unsigned long long)seed, st);
    assert_true(*n >= 2);
    int dim = rlx_problem_dimension(p);
    double st0[4], go[4];
    rlx_problem_start_goal(p, st0, go);
    assert_memory_equal(*q, st0, (size_t)dim * sizeof(double));
    if (!rlx_path_valid(p, *q, *n, rlx_problem_resolution(p) / 10))
        fail_msg("%s on %s: path in collision at a finer resolution", kind, name);
    for (int i = 0; i < dim; i++) /* headings stay wrapped */
        if (i == dim - 1)
            for (size_t k = 0; k < *n; k++)
                assert_true((*q)[k * (size_t)dim + (size_t)i] >= -M_PI &&
                            (*q)[k * (size_t)dim + (size_t)i] < M_PI);
}

static void test_rrtconnect_solves_deterministically(void **state)
{
    (void)state;
    for (int i = 0; i < N_RIGID; i++) {
        rlx_problem *p = rlx_problem_new(RIGID[i]);
        double *a, *b;
        size_t na, nb;
        solve_checked(p, RIGID[i], "rrtconnect", 7, &a, &na);
        solve_checked(p, RIGID[i], "rrtconnect", 7, &b, &nb);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, na * (size_t)rlx_problem_dimension(p) * sizeof *a);
        free(a);
        free(b);
        rlx_problem_free(p);
    }
}

static void test_every_planner_paths_are_free(void **state)
{
    (void)state;
    static const char *const KINDS[] = {"rrt", "prm", "rrtconnect"};
    for (int i = 0; i < N_RIGID; i++) {
        rlx_problem *p = rlx_problem_new(RIGID[i]);
        for (int k = 0; k < 3; k++)
            for (uint64_t seed = 1; seed <= 2; seed++) {
                double *q;
                size_t n;
                solve_checked(p, RIGID[i], KINDS[k], seed, &q, &n);
                free(q);
            }
        /* RRT* runs to its budget: whatever it has then must be free too */
        double *q;
        size_t n;
        int st = rlx_solve(p, "rrtstar", 1, SAFETY_SECONDS, RRTSTAR_ITERATIONS, true, &q, &n);
        assert_true(st == RL_RUN_EXACT || st == RL_RUN_APPROXIMATE);
        assert_true(rlx_path_valid(p, q, n, rlx_problem_resolution(p) / 10));
        free(q);
        rlx_problem_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sat_known_pairs),
        cmocka_unit_test(test_sat_against_sampling),
        cmocka_unit_test(test_problems_are_rigid),
        cmocka_unit_test(test_narrow_needs_turning),
        cmocka_unit_test(test_rrtconnect_solves_deterministically),
        cmocka_unit_test(test_every_planner_paths_are_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
