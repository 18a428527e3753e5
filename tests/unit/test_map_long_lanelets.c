/* Compiling lanelets of many vertices (issue 29 item 3): 20,000 collinear points per bound,
 * bounds crossing once, bounds zig-zagging across each other; each compile under an alarm
 * (the old code was quadratic: minutes), its queries equal to brute force's, and a bound
 * over RL_MAP_MAX_BOUND_POINTS refused naming file, line and lanelet. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/map.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { COMPILE_SECONDS = 120 }; /* wall time per compile; the old code took minutes */

typedef enum { COLLINEAR, BOWTIE, ZIGZAG } shape;

static rl_map_point shape_point(shape s, int side, size_t i, size_t n)
{
    switch (s) {
    case COLLINEAR: return (rl_map_point){(double)i * 0.01, side ? 0.0 : 3.0};
    case BOWTIE: {
        double f = (double)i / (double)(n - 1);
        return (rl_map_point){(double)i, side ? 3.0 * f : 3.0 - 3.0 * f};
    }
    default: return (rl_map_point){(double)i + (side ? 0.5 : 0.0), i % 2 ? 1000.0 : 0.0};
    }
}

static rl_map_source *one_lanelet(shape s, size_t n)
{
    rl_map_source *src = calloc(1, sizeof *src);
    assert_non_null(src);
    src->lanelets = calloc(1, sizeof *src->lanelets);
    assert_non_null(src->lanelets);
    src->format = RL_MAP_FORMAT_COMMONROAD;
    src->projection = RL_MAP_PROJ_NONE;
    src->num_lanelets = 1;
    rl_map_source_lanelet *ll = &src->lanelets[0];
    ll->id = 7;
    ll->line = 3;
    ll->one_way = -1;
    ll->speed_limit = NAN;
    ll->left = malloc(n * sizeof *ll->left);
    ll->right = malloc(n * sizeof *ll->right);
    assert_non_null(ll->left);
    assert_non_null(ll->right);
    ll->num_left = ll->num_right = n;
    for (size_t i = 0; i < n; i++) {
        ll->left[i] = shape_point(s, 0, i, n);
        ll->right[i] = shape_point(s, 1, i, n);
    }
    return src;
}

static void free_source(rl_map_source *src)
{
    free(src->lanelets[0].left);
    free(src->lanelets[0].right);
    free(src->lanelets);
    free(src);
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double uniform(double lo, double hi)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

/* Compiles within COMPILE_SECONDS (SIGALRM ends the test otherwise) and checks queries
 * against brute force at random points and boxes over the lanelet's bounding box. */
static void compile_and_check(shape s, size_t n)
{
    rl_map_source *src = one_lanelet(s, n);
    void *bytes = NULL;
    size_t len = 0;
    alarm(COMPILE_SECONDS);
    int rc = rl_map_compile(src, NULL, &bytes, &len);
    alarm(0);
    if (rc != RL_OK)
        fail_msg("shape %d, %zu points: %s", (int)s, n, rl_error_last());
    rl_map *m = NULL;
    assert_int_equal(rl_map_open_mem(bytes, len, 0, &m), RL_OK);
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    for (size_t i = 0; i < n; i++)
        for (int side = 0; side < 2; side++) {
            rl_map_point p = shape_point(s, side, i, n);
            x0 = fmin(x0, p.x), y0 = fmin(y0, p.y), x1 = fmax(x1, p.x), y1 = fmax(y1, p.y);
        }
    for (int k = 0; k < 300; k++) {
        double x = uniform(x0 - 1, x1 + 1), y = uniform(y0 - 1, y1 + 1);
        if (rl_map_point_drivable(m, x, y) != rl_map_point_drivable_brute(m, x, y))
            fail_msg("shape %d: point (%.6f, %.6f): indexed and brute force differ", (int)s, x, y);
        rl_map_box b = {x, y, uniform(-3.2, 3.2), 0.3, 0.15};
        if (rl_map_footprint_inside(m, &b, 0) != rl_map_footprint_inside_brute(m, &b))
            fail_msg("shape %d: box at (%.6f, %.6f): indexed and brute force differ", (int)s, x,
                     y);
    }
    rl_map_close(m);
    free(bytes);
    free_source(src);
}

static void test_collinear(void **state)
{
    (void)state;
    compile_and_check(COLLINEAR, RL_MAP_MAX_BOUND_POINTS);
}

static void test_bowtie(void **state)
{
    (void)state;
    compile_and_check(BOWTIE, 4000);
}

static void test_zigzag(void **state)
{
    (void)state;
    compile_and_check(ZIGZAG, 4000);
}

static void test_limit(void **state)
{
    (void)state;
    rl_map_source *src = one_lanelet(COLLINEAR, RL_MAP_MAX_BOUND_POINTS + 1);
    src->name = (char *)"long.xml";
    void *bytes = NULL;
    size_t len = 0;
    assert_int_equal(rl_map_compile(src, NULL, &bytes, &len), RL_ERANGE);
    assert_null(bytes);
    char want[160];
    snprintf(want, sizeof want, "long.xml:3: lanelet 7: %d left and %d right bound points; at most %d",
             RL_MAP_MAX_BOUND_POINTS + 1, RL_MAP_MAX_BOUND_POINTS + 1, RL_MAP_MAX_BOUND_POINTS);
    if (!strstr(rl_error_last(), want))
        fail_msg("error '%s' lacks '%s'", rl_error_last(), want);
    src->name = NULL;
    free_source(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collinear),
        cmocka_unit_test(test_bowtie),
        cmocka_unit_test(test_zigzag),
        cmocka_unit_test(test_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
