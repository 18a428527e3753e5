/* The built-in problems are hard in the ways planners differ on (issue 16, item 19): a
 * narrow passage off the straight line, a maze, a car with a turning radius. For each the
 * straight line from start to goal is blocked, and the built-in planners still solve it
 * within an iteration budget (never a time bound: the outcome holds on a loaded machine).
 * Also the car's Dubins curves against hand-computed cases and their own end states. */
#include "rl_test.h"

#include "rlx.h"
#include "rlx_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *const HARD[] = {"narrow2d", "narrow3d", "maze2d", "car2d"};
enum { N_HARD = sizeof HARD / sizeof HARD[0], BUDGET = 20000 };
#define SAFETY_SECONDS 600.0

/* The robot at evenly spaced points of the segment from the start's position to the goal's
 * (a body heading along the segment): some point is in collision. */
static bool straight_line_blocked(const rlx_problem *p)
{
    int dim = rlx_problem_dimension(p), wdim = rlx_problem_is_rigid(p) ? dim - 1 : dim;
    double st[4], go[4], q[4];
    rlx_problem_start_goal(p, st, go);
    for (int k = 0; k <= 2000; k++) {
        double t = k / 2000.0;
        for (int i = 0; i < wdim; i++)
            q[i] = st[i] + t * (go[i] - st[i]);
        if (dim > wdim)
            q[wdim] = atan2(go[1] - st[1], go[0] - st[0]);
        if (!rlx_state_valid(p, q))
            return true;
    }
    return false;
}

static void test_straight_line_is_blocked(void **state)
{
    (void)state;
    for (int i = 0; i < N_HARD; i++) {
        rlx_problem *p = rlx_problem_new(HARD[i]);
        assert_non_null(p);
        double st[4], go[4];
        rlx_problem_start_goal(p, st, go);
        assert_true(rlx_state_valid(p, st));
        assert_true(rlx_state_valid(p, go));
        if (!straight_line_blocked(p))
            fail_msg("%s: the straight line from start to goal is free", HARD[i]);
        rlx_problem_free(p);
    }
}

static void test_planners_solve_within_budget(void **state)
{
    (void)state;
    /* what each planner solves with two seeds in BUDGET iterations (PRM's car roadmap
     * needs curves both ways and is left out; RRT* spends its whole budget rewiring) */
    static const struct {
        const char *problem, *kind;
    } CASES[] = {{"narrow2d", "rrtconnect"}, {"narrow2d", "rrt"},        {"narrow2d", "prm"},
                 {"maze2d", "rrtconnect"},   {"maze2d", "rrt"},          {"narrow3d", "rrtconnect"},
                 {"car2d", "rrtconnect"},    {"car2d", "rrt"}};
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
        rlx_problem *p = rlx_problem_new(CASES[c].problem);
        for (uint64_t seed = 1; seed <= 2; seed++) {
            double *q = NULL;
            size_t n = 0;
            int st = rlx_solve(p, CASES[c].kind, seed * 7919, SAFETY_SECONDS, BUDGET, true, &q, &n);
            if (st != RL_RUN_EXACT)
                fail_msg("%s on %s, seed %llu: status %d", CASES[c].kind, CASES[c].problem,
                         (unsigned long long)seed, st);
            /* checked as the planners check (point robots: OMPL's discrete check) */
            if (!rlx_path_valid(p, q, n, rlx_problem_resolution(p)))
                fail_msg("%s on %s: path in collision", CASES[c].kind, CASES[c].problem);
            free(q);
        }
        rlx_problem_free(p);
    }
}

/* A car's path is collision-free as a continuous motion: re-checked ten times finer. */
static void test_car_paths_hold_finer(void **state)
{
    (void)state;
    rlx_problem *p = rlx_problem_new("car2d");
    assert_true(rlx_problem_is_rigid(p));
    assert_int_equal(rlx_problem_dimension(p), 3);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        double *q = NULL;
        size_t n = 0;
        assert_int_equal(rlx_solve(p, "rrtconnect", seed, SAFETY_SECONDS, BUDGET, true, &q, &n),
                         RL_RUN_EXACT);
        assert_true(rlx_path_valid(p, q, n, rlx_problem_resolution(p) / 10));
        free(q);
    }
    rlx_problem_free(p);
}

static void near(const double *q, double x, double y, double yaw)
{
    assert_true(fabs(q[0] - x) < 1e-9 && fabs(q[1] - y) < 1e-9);
    assert_true(fabs(remainder(q[2] - yaw, 2 * M_PI)) < 1e-9);
}

static void test_dubins(void **state)
{
    (void)state;
    rlx_dubins d;
    double q[3];
    /* straight ahead */
    rlx_dubins_shortest((double[]){0, 0, 0}, (double[]){1, 0, 0}, 0.1, &d);
    assert_true(fabs(rlx_dubins_length(&d) - 1) < 1e-12);
    /* a U-turn to the left: half a circle of radius rho */
    rlx_dubins_shortest((double[]){0, 0, 0}, (double[]){0, 0.2, M_PI}, 0.1, &d);
    assert_true(fabs(rlx_dubins_length(&d) - M_PI * 0.1) < 1e-9);
    rlx_dubins_at(&d, M_PI * 0.05, q); /* a quarter circle: at (rho, rho) heading up */
    near(q, 0.1, 0.1, M_PI / 2);
    /* the car cannot reverse: a state right behind takes a loop, longer than 2 pi rho */
    rlx_dubins_shortest((double[]){0, 0, 0}, (double[]){-0.05, 0, 0}, 0.1, &d);
    assert_true(rlx_dubins_length(&d) > 2 * M_PI * 0.1);
    /* the same state: no motion */
    rlx_dubins_shortest((double[]){0.3, 0.3, 1}, (double[]){0.3, 0.3, 1}, 0.1, &d);
    assert_true(rlx_dubins_length(&d) == 0);
    /* random pairs: each curve ends at its goal state and is no shorter than the line; a
     * curve to a point on itself is its own prefix (a sub-curve of a shortest curve is
     * shortest) */
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    for (int k = 0; k < 5000; k++) {
        double a[3], b[3], m[3];
        for (int i = 0; i < 3; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            a[i] = (double)(s >> 11) / 9007199254740992.0;
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            b[i] = (double)(s >> 11) / 9007199254740992.0;
        }
        a[2] = 2 * M_PI * a[2] - M_PI, b[2] = 2 * M_PI * b[2] - M_PI;
        rlx_dubins_shortest(a, b, 0.1, &d);
        double len = rlx_dubins_length(&d);
        rlx_dubins_at(&d, len, q);
        near(q, b[0], b[1], b[2]);
        assert_true(len >= hypot(b[0] - a[0], b[1] - a[1]) - 1e-12);
        rlx_dubins_at(&d, 0.4 * len, m);
        rlx_dubins pre;
        rlx_dubins_shortest(a, m, 0.1, &pre);
        assert_true(rlx_dubins_length(&pre) <= 0.4 * len + 1e-7);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dubins),
        cmocka_unit_test(test_straight_line_is_blocked),
        cmocka_unit_test(test_planners_solve_within_budget),
        cmocka_unit_test(test_car_paths_hold_finer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
