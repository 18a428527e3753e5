/* Tests of the evaluation's geometry (src/eval/eval_geometry.c) on hand-worked cases: Hermite
 * values and slopes from the basis polynomials, the controller's choice of command over a
 * worked timeline, interpolated poses across gaps and the yaw wrap, rectangle distances
 * worked from the car's dimensions, intervals with gaps and minimum durations, and
 * footprints against a square with a notch and a one-lanelet map. */
#include "one_lane_map.h"
#include "rl_test.h"

#include "eval/eval_geometry.h"
#include "runlab/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void test_hermite(void **state)
{
    (void)state;
    double x, y, vx, vy;
    /* Constant velocity: the spline is the straight line. */
    rl_eg_traj_point line[] = {{0, 0, 0, 1, 0}, {2, 2, 0, 1, 0}};
    assert_true(rl_eg_hermite(line, 2, 1.0, &x, &y, &vx, &vy));
    NEAR(x, 1), NEAR(y, 0), NEAR(vx, 1), NEAR(vy, 0);
    /* From rest to rest over 1 s and 1 m: x = 3s^2 - 2s^3, x' = 6s - 6s^2. */
    rl_eg_traj_point rest[] = {{0, 0, 0, 0, 0}, {1, 1, 0, 0, 0}};
    assert_true(rl_eg_hermite(rest, 2, 0.25, &x, &y, &vx, &vy));
    NEAR(x, 3 * 0.0625 - 2 * 0.015625), NEAR(vx, 6 * 0.25 - 6 * 0.0625);
    assert_true(rl_eg_hermite(rest, 2, 0.5, &x, &y, &vx, &vy));
    NEAR(x, 0.5), NEAR(vx, 1.5);
    /* Only a start velocity, segment of 2 s: y = h * (s^3 - 2s^2 + s) * v0 = 2 * 0.125. */
    rl_eg_traj_point loop[] = {{10, 0, 0, 0, 1}, {12, 0, 0, 0, 0}};
    assert_true(rl_eg_hermite(loop, 2, 11, &x, &y, &vx, &vy));
    NEAR(x, 0), NEAR(y, 0.25);
    /* dy/dt at s = 0.5: d10 * v0 = (0.75 - 2 + 1) * 1. */
    NEAR(vy, -0.25);
    /* Outside the points: no reference; the ends themselves are answered. */
    assert_false(rl_eg_hermite(loop, 2, 9.999, &x, &y, &vx, &vy));
    assert_false(rl_eg_hermite(loop, 2, 12.001, &x, &y, &vx, &vy));
    assert_false(rl_eg_hermite(loop, 0, 10, &x, &y, &vx, &vy));
    assert_true(rl_eg_hermite(loop, 2, 12, &x, &y, &vx, &vy));
    NEAR(vy, 0);
    /* Three points: the second segment is used after the middle point; equal times take
     * the later point. */
    rl_eg_traj_point three[] = {{0, 0, 0, 1, 0}, {1, 1, 0, 1, 0}, {1, 5, 5, 0, 0},
                                {3, 5, 7, 0, 1}};
    assert_true(rl_eg_hermite(three, 4, 1, &x, &y, &vx, &vy));
    NEAR(x, 5), NEAR(y, 5);
    assert_true(rl_eg_hermite(three, 4, 2, &x, &y, &vx, &vy));
    /* s = 0.5, h = 2: y = 0.5*5 + 0.5*7 + (-0.125)*2*1 = 5.75. */
    NEAR(x, 5), NEAR(y, 5.75);
    assert_true(rl_eg_hermite(three, 4, 0.5, &x, &y, &vx, &vy));
    NEAR(x, 0.5);
}

static void test_active_command(void **state)
{
    (void)state;
    /* Worked timeline (received, valid_after):
     *  c0 (0, 1): valid from 1       c1 (0.5, 0.5): from 0.5
     *  c2 (2, 1.5): from 2, newer than c0
     *  c3 (2.5, 0.8): arrives late with an older stamp: never chosen
     *  c4 (3, 4): from 4             c5 (5, 4): same stamp as c4, received later: from 5 */
    rl_eg_command cmds[] = {{0, 1}, {0.5, 0.5}, {2, 1.5}, {2.5, 0.8}, {3, 4}, {5, 4}};
    rl_eg_activation act[6];
    size_t n = rl_eg_activations(cmds, 6, act);
    assert_int_equal(n, 5);
    const double want_t[] = {0.5, 1, 2, 4, 5};
    const size_t want_i[] = {1, 0, 2, 4, 5};
    for (size_t i = 0; i < n; i++) {
        NEAR(act[i].t, want_t[i]);
        assert_int_equal(act[i].index, want_i[i]);
    }
    size_t cur = 0;
    assert_true(rl_eg_active_at(act, n, &cur, 0.2) == SIZE_MAX);
    assert_int_equal(rl_eg_active_at(act, n, &cur, 0.9), 1);
    assert_int_equal(rl_eg_active_at(act, n, &cur, 1.0), 0);
    assert_int_equal(rl_eg_active_at(act, n, &cur, 1.99), 0);
    assert_int_equal(rl_eg_active_at(act, n, &cur, 3.0), 2);
    assert_int_equal(rl_eg_active_at(act, n, &cur, 4.5), 4);
    assert_int_equal(rl_eg_active_at(act, n, &cur, 100), 5);
    /* Two commands at the same instant: one change point, the later received. */
    rl_eg_command same[] = {{1, 1}, {1, 1}};
    assert_int_equal(rl_eg_activations(same, 2, act), 1);
    assert_int_equal(act[0].index, 1);
    assert_int_equal(rl_eg_activations(same, 0, act), 0);
}

static void test_pose_interpolation(void **state)
{
    (void)state;
    rl_eg_pose p[] = {{0, 0, 0, 3.0}, {1, 1, 2, -3.0}, {3, 3, 2, 0}};
    rl_eg_pose o;
    size_t cur = 0;
    assert_false(rl_eg_pose_at(p, 3, &cur, -1, 1.5, &o));
    assert_true(rl_eg_pose_at(p, 3, &cur, 0.5, 1.5, &o));
    NEAR(o.x, 0.5), NEAR(o.y, 1);
    /* 3.0 to -3.0 the short way passes pi, not 0. */
    NEAR(cos(o.yaw), -1);
    assert_true(rl_eg_pose_at(p, 3, &cur, 0.75, 1.5, &o));
    NEAR(o.yaw, 3.0 + 0.75 * (2 * M_PI - 6.0) - 2 * M_PI);
    /* Samples 2 s apart, more than max_gap: unknown; the exact sample time is known. */
    assert_false(rl_eg_pose_at(p, 3, &cur, 2, 1.5, &o));
    assert_true(rl_eg_pose_at(p, 3, &cur, 3, 1.5, &o));
    NEAR(o.x, 3);
    assert_false(rl_eg_pose_at(p, 3, &cur, 3.5, 1.5, &o));
    /* With a larger max_gap the gap is bridged. */
    cur = 0;
    assert_true(rl_eg_pose_at(p, 3, &cur, 2, 2.5, &o));
    NEAR(o.x, 2), NEAR(o.y, 2);

    rl_eg_pose r[5];
    uint8_t v[5];
    rl_eg_resample(p, 3, -0.5, 1.0, 5, 1.5, r, v);
    const uint8_t want[] = {0, 1, 0, 0, 0}; /* -0.5, 0.5, 1.5, 2.5, 3.5 */
    assert_memory_equal(v, want, 5);
    NEAR(r[1].x, 0.5);
    assert_true(isnan(r[0].x));
}

static void test_pair_distance(void **state)
{
    (void)state;
    const double L = RL_EG_CAR_LENGTH, W = RL_EG_CAR_WIDTH;
    rl_eg_pose a[6] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {2, 0, 0, 0},
                       {3, 0, 0, 0}, {4, 0, 0, 0}, {5, 0, 0, 0}};
    rl_eg_pose b[6] = {{0, 0.5, 0, 0},         /* behind one another: 0.5 - 0.22 */
                       {1, 0, 0.2, 0},         /* side by side: 0.2 - 0.107 */
                       {2, 0.2, 0, M_PI / 2},  /* crosswise: 0.2 - 0.0535 - 0.11 */
                       {3, 0.1, 0.05, 0.3},    /* overlapping */
                       {4, 0.5, 0, 0},         /* as the first, but b is unknown */
                       {5, 3.0, 4.0, 1.0}};    /* far: circle clearance 5 - diagonal */
    uint8_t va[6] = {1, 1, 1, 1, 1, 1}, vb[6] = {1, 1, 1, 1, 0, 1};
    double d[6];
    rl_eg_pair_distance(a, va, b, vb, 6, L, W, 1.0, d);
    NEAR(d[0], 0.5 - 0.22);
    NEAR(d[1], 0.2 - 0.107);
    NEAR(d[2], 0.2 - 0.0535 - 0.11);
    NEAR(d[3], 0);
    assert_true(isnan(d[4]));
    NEAR(d[5], 5 - hypot(L, W));
    /* The rectangle distance agrees with the map module's (separating axes and every
     * corner-to-edge distance) over pseudo-random pairs, near and overlapping ones. */
    unsigned seed = 12345;
    for (int k = 0; k < 20000; k++) {
        double r[6];
        for (int j = 0; j < 6; j++) {
            seed = seed * 1103515245u + 12345u;
            r[j] = (double)((seed >> 8) & 0xffff) / 65536.0;
        }
        rl_eg_pose p = {0, 0.6 * r[0] - 0.3, 0.6 * r[1] - 0.3, 2 * M_PI * r[2]};
        rl_eg_pose q = {0, 0.6 * r[3] - 0.3, 0.6 * r[4] - 0.3, 2 * M_PI * r[5]};
        rl_map_box bp = rl_eg_footprint(&p, L, W), bq = rl_eg_footprint(&q, L, W);
        NEAR(rl_eg_rect_distance(&p, &q, L, W), rl_map_box_distance(&bp, &bq));
    }
    /* With no exact band, the first pair gets the circle clearance too. */
    rl_eg_pair_distance(a, va, b, vb, 1, L, W, 0.0, d);
    NEAR(d[0], 0.5 - hypot(L, W));
    /* With the yaws' cos and sin computed once per pose: the same numbers, bit for bit. */
    enum { N = 4000 };
    rl_eg_pose *pa = malloc(N * sizeof *pa), *pb = malloc(N * sizeof *pb);
    uint8_t *ka = malloc(N), *kb = malloc(N);
    double(*ta)[2] = malloc(N * sizeof *ta), (*tb)[2] = malloc(N * sizeof *tb);
    double *d1 = malloc(N * sizeof *d1), *d2 = malloc(N * sizeof *d2);
    for (int k = 0; k < N; k++) {
        double r[6];
        for (int j = 0; j < 6; j++) {
            seed = seed * 1103515245u + 12345u;
            r[j] = (double)((seed >> 8) & 0xffff) / 65536.0;
        }
        pa[k] = (rl_eg_pose){k, 1.6 * r[0] - 0.8, 1.6 * r[1] - 0.8, 7 * r[2] - 3.5};
        pb[k] = (rl_eg_pose){k, 1.6 * r[3] - 0.8, 1.6 * r[4] - 0.8, 7 * r[5] - 3.5};
        ka[k] = k % 17 != 0;
        kb[k] = k % 23 != 0;
    }
    rl_eg_yaw_trig(pa, N, ta);
    rl_eg_yaw_trig(pb, N, tb);
    rl_eg_pair_distance(pa, ka, pb, kb, N, L, W, 1.0, d1);
    rl_eg_pair_distance_trig(pa, ka, (const double(*)[2])ta, pb, kb, (const double(*)[2])tb, N,
                             L, W, 1.0, d2);
    size_t exact = 0;
    for (int k = 0; k < N; k++) {
        assert_memory_equal(&d1[k], &d2[k], sizeof d1[k]);
        exact += ka[k] && kb[k] && d1[k] < 1.0;
    }
    assert_true(exact > N / 2);
    free(pa), free(pb), free(ka), free(kb), free(ta), free(tb), free(d1), free(d2);
}

/* What judging a pair reads of its distances: the first minimum (value and time), whether
 * any time is known, and the times within min_distance. */
typedef struct pair_view {
    double min;
    int min_at;
    size_t known;
    size_t within;
} pair_view;

static pair_view view_pair(const double *d, int n, double min_distance, uint8_t *within)
{
    pair_view v = {INFINITY, -1, 0, 0};
    for (int k = 0; k < n; k++) {
        bool known = !isnan(d[k]);
        v.known += known;
        within[k] = known && d[k] <= min_distance;
        v.within += within[k];
        if (known && d[k] < v.min)
            v.min = d[k], v.min_at = k;
    }
    return v;
}

/* rl_eg_pair_distance_near against the whole series: the same first minimum (bit for bit)
 * at the same time, the same times within min_distance, the same known times, and every
 * value it computes exactly the same; on pairs following each other round a circuit (the
 * lab's case: most times skipped), crossing, far apart, and at random. */
static void test_pair_distance_near(void **state)
{
    (void)state;
    enum { N = 3000 };
    const double L = 0.22, W = 0.1;
    rl_eg_pose *pa = malloc(N * sizeof *pa), *pb = malloc(N * sizeof *pb);
    uint8_t *ka = malloc(N), *kb = malloc(N), *w1 = malloc(N), *w2 = malloc(N);
    double(*ta)[2] = malloc(N * sizeof *ta), (*tb)[2] = malloc(N * sizeof *tb);
    double *d1 = malloc(N * sizeof *d1), *d2 = malloc(N * sizeof *d2);
    uint32_t seed = 99;
    size_t skipped = 0, total = 0;
    for (int kind = 0; kind < 4; kind++)
        for (int rep = 0; rep < 6; rep++) {
            for (int k = 0; k < N; k++) {
                double r[6];
                for (int j = 0; j < 6; j++) {
                    seed = seed * 1103515245u + 12345u;
                    r[j] = (double)((seed >> 8) & 0xffff) / 65536.0;
                }
                double t = 0.02 * k, gap = 0.25 + 0.1 * rep + 0.05 * sin(0.3 * t);
                if (kind == 0) { /* b follows a round a circle of 1 m */
                    double ua = t * 0.8, ub = ua - gap;
                    pa[k] = (rl_eg_pose){t, cos(ua), sin(ua), ua + M_PI / 2};
                    pb[k] = (rl_eg_pose){t, cos(ub), sin(ub), ub + M_PI / 2};
                } else if (kind == 1) { /* crossing paths: they touch now and then */
                    pa[k] = (rl_eg_pose){t, 0.8 * sin(0.5 * t), 0, 0};
                    pb[k] = (rl_eg_pose){t, 0.05 * rep, 0.8 * cos(0.37 * t), M_PI / 2};
                } else if (kind == 2) { /* far apart */
                    pa[k] = (rl_eg_pose){t, 0, 0, r[0]};
                    pb[k] = (rl_eg_pose){t, 1.5 + r[1], 0, r[2]};
                } else {
                    pa[k] = (rl_eg_pose){t, 1.6 * r[0] - 0.8, 1.6 * r[1] - 0.8, 7 * r[2] - 3.5};
                    pb[k] = (rl_eg_pose){t, 1.6 * r[3] - 0.8, 1.6 * r[4] - 0.8, 7 * r[5] - 3.5};
                }
                ka[k] = k % 17 != 0;
                kb[k] = k % 23 != 0;
            }
            rl_eg_yaw_trig(pa, N, ta);
            rl_eg_yaw_trig(pb, N, tb);
            const double min_distances[] = {0, 0.02, -1};
            for (int m = 0; m < 3; m++) {
                double md = min_distances[m];
                rl_eg_pair_distance_trig(pa, ka, (const double(*)[2])ta, pb, kb,
                                         (const double(*)[2])tb, N, L, W, 1.0, d1);
                size_t exact = rl_eg_pair_distance_near(pa, ka, (const double(*)[2])ta, pb, kb,
                                                        (const double(*)[2])tb, N, L, W, 1.0, md,
                                                        d2);
                pair_view v1 = view_pair(d1, N, md, w1), v2 = view_pair(d2, N, md, w2);
                assert_memory_equal(&v1.min, &v2.min, sizeof v1.min);
                assert_int_equal(v1.min_at, v2.min_at);
                assert_int_equal(v1.known, v2.known);
                assert_int_equal(v1.within, v2.within);
                assert_memory_equal(w1, w2, N);
                size_t computed = 0;
                for (int k = 0; k < N; k++)
                    if (isfinite(d2[k])) {
                        assert_memory_equal(&d1[k], &d2[k], sizeof d1[k]);
                        computed++;
                    }
                assert_true(exact <= computed);
                total += v1.known;
                skipped += v1.known - computed;
            }
        }
    /* Following each other, almost every time is decided without the exact distance. */
    assert_true(skipped > total / 4);
    free(pa), free(pb), free(ka), free(kb), free(w1), free(w2), free(ta), free(tb);
    free(d1), free(d2);
}

/* Closest approaches: one point per pass at its first minimum; noise at the edge stays one
 * approach; an unknown distance ends one; a distance that never comes near gives none. */
static void test_closest_approaches(void **state)
{
    (void)state;
    const double t[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
    const double d[] = {0.9, 0.5, 0.3, 0.2, 0.2, 0.52, 0.48, 0.7, 0.4, NAN, 0.35, 0.45, 0.9, 0.1};
    double at[14], ad[14];
    size_t k = rl_eg_closest_approaches(t, d, 14, 0.5, 1.1, at, ad);
    assert_int_equal(k, 4);
    /* 0.5 .. 0.48: one approach (0.52 and 0.48 are noise within 1.1 x 0.5), closest first at 3 */
    assert_true(at[0] == 3 && ad[0] == 0.2);
    assert_true(at[1] == 8 && ad[1] == 0.4); /* ended by 0.7, then by the unknown distance */
    assert_true(at[2] == 10 && ad[2] == 0.35);
    assert_true(at[3] == 13 && ad[3] == 0.1);
    const double far[] = {0.6, 0.9, NAN, 0.51};
    assert_int_equal(rl_eg_closest_approaches(t, far, 4, 0.5, 1.1, at, ad), 0);
    assert_int_equal(rl_eg_closest_approaches(t, d, 0, 0.5, 1.1, at, ad), 0);
}

static void test_intervals(void **state)
{
    (void)state;
    double t[12];
    for (int i = 0; i < 11; i++)
        t[i] = i * 0.1;
    t[11] = 2.0; /* a gap of 1 s before the last sample */
    uint8_t bad[12] = {0, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1, 1};
    double val[12] = {0, 0, 3, 5, 4, 0, 0, 9, 0, 0, 7, 8};
    rl_eg_interval *iv;
    size_t n;
    assert_int_equal(rl_eg_intervals(t, bad, val, 12, 0.15, 0.15, &iv, &n), RL_OK);
    assert_int_equal(n, 1); /* [0.2, 0.4]; 0.7, 1.0 and 2.0 alone last 0 s */
    NEAR(iv[0].t0, 0.2), NEAR(iv[0].t1, 0.4), NEAR(iv[0].worst, 5), NEAR(iv[0].worst_t, 0.3);
    assert_int_equal(iv[0].first, 2);
    assert_int_equal(iv[0].last, 4);
    free(iv);
    assert_int_equal(rl_eg_intervals(t, bad, val, 12, 0.15, 0, &iv, &n), RL_OK);
    assert_int_equal(n, 4); /* the gap splits 1.0 from 2.0 */
    NEAR(iv[1].t0, 0.7), NEAR(iv[2].t0, 1.0), NEAR(iv[2].t1, 1.0), NEAR(iv[3].t0, 2.0);
    NEAR(iv[3].worst, 8);
    free(iv);
    /* A larger max_gap joins them. */
    assert_int_equal(rl_eg_intervals(t, bad, NULL, 12, 1.5, 0.5, &iv, &n), RL_OK);
    assert_int_equal(n, 1);
    NEAR(iv[0].t0, 1.0), NEAR(iv[0].t1, 2.0);
    assert_true(isnan(iv[0].worst));
    free(iv);
    assert_int_equal(rl_eg_intervals(t, bad, val, 0, 0.15, 0, &iv, &n), RL_OK);
    assert_int_equal(n, 0);
    assert_null(iv);
}

static void test_outside_polygon(void **state)
{
    (void)state;
    const double L = RL_EG_CAR_LENGTH, W = RL_EG_CAR_WIDTH;
    /* A 4 m square with a 2 cm wide notch cut down from the top to y = 2. */
    rl_map_point poly[] = {{0, 0}, {4, 0}, {4, 4}, {2.01, 4}, {2.01, 2}, {1.99, 2}, {1.99, 4},
                           {0, 4}};
    rl_map_box b = {1, 1, 0.7, L, W};
    NEAR(rl_eg_outside_polygon(&b, poly, 8, 0.01), 0);
    b = (rl_map_box){3.95, 1, 0, L, W}; /* front at x = 4.06 */
    NEAR(rl_eg_outside_polygon(&b, poly, 8, 0.01), 0.06);
    b = (rl_map_box){3, 0, M_PI / 2, L, W}; /* rear at y = -0.11 */
    NEAR(rl_eg_outside_polygon(&b, poly, 8, 0.01), 0.11);
    b = (rl_map_box){0, 4, M_PI / 4, L, W}; /* over the corner: the rear-right corner */
    rl_map_point c[4];
    rl_map_box_corners(&b, c);
    double worst = 0;
    for (int i = 0; i < 4; i++) {
        double ox = fmax(0, -c[i].x), oy = fmax(0, c[i].y - 4);
        worst = fmax(worst, hypot(ox, oy));
    }
    NEAR(rl_eg_outside_polygon(&b, poly, 8, 0.01), worst);
    /* Straddling the notch: all corners inside; a sample of the top edge (1 cm apart) lies in
     * the 2 cm notch, at most 1 cm from its walls. */
    b = (rl_map_box){2, 2, 0, L, W};
    double r = rl_eg_outside_polygon(&b, poly, 8, 0.01);
    assert_true(r > 0.001 && r <= 0.01 + 1e-12);
    /* Sampled too coarsely to see it: the notch's corner inside the rectangle still says. */
    NEAR(rl_eg_outside_polygon(&b, poly, 8, 0.1), 0.1 / 16);
    /* Touching the boundary from inside is inside. */
    b = (rl_map_box){4 - L / 2, 1, 0, L, W};
    NEAR(rl_eg_outside_polygon(&b, poly, 8, 0.01), 0);
}

static void test_outside_lanelets(void **state)
{
    (void)state;
    one_lane_map m; /* one lanelet, [0,10] x [0,1] */
    one_lane_map_open(&m);
    rl_map *map = m.map;
    const double L = RL_EG_CAR_LENGTH, W = RL_EG_CAR_WIDTH;
    rl_map_box b = {5, 0.5, 0.3, L, W};
    NEAR(rl_eg_outside_lanelets(map, NULL, &b, 0, 0.01), 0);
    b = (rl_map_box){5, 0.95, 0, L, W}; /* left side at y = 1.0035 */
    NEAR(rl_eg_outside_lanelets(map, NULL, &b, 0, 0.01), 0.0035);
    b = (rl_map_box){10.05, 0.5, 0, L, W}; /* front at x = 10.16 */
    NEAR(rl_eg_outside_lanelets(map, NULL, &b, 0, 0.01), 0.16);
    b = (rl_map_box){5, -1, M_PI / 2, L, W}; /* wholly outside: rear at y = -1.11 */
    NEAR(rl_eg_outside_lanelets(map, NULL, &b, 0, 0.01), 1.11);
    one_lane_map_close(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hermite),          cmocka_unit_test(test_active_command),
        cmocka_unit_test(test_pose_interpolation), cmocka_unit_test(test_pair_distance),
        cmocka_unit_test(test_pair_distance_near),
        cmocka_unit_test(test_closest_approaches),
        cmocka_unit_test(test_intervals),        cmocka_unit_test(test_outside_polygon),
        cmocka_unit_test(test_outside_lanelets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
