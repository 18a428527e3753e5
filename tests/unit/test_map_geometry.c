/* Tests of the map module on small hand-made maps whose answers are worked out by hand
 * (depths, distances, arc lengths, footprints across a shared edge, a gap and a concave
 * corner), of the indexed queries against brute force over every polygon, of the runtime
 * map's format (deterministic bytes, CRC, truncation, version, mmap), and of the readers'
 * errors and rules (deleted objects, 64-bit ids, local_x/local_y, metric, dangling refs). */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/hash.h"
#include "runlab/map.h"

#include "formats/map/map_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct built {
    rl_map_source *src;
    rl_map *map;
    void *bytes;
    size_t len;
} built;

static built build(const char *xml, bool commonroad)
{
    built b = {0};
    rl_map_read_options o;
    rl_map_read_options_init(&o);
    o.quiet = true;
    int rc = commonroad ? rl_commonroad_read_mem(xml, strlen(xml), "test.xml", &o, &b.src)
                        : rl_lanelet2_read_mem(xml, strlen(xml), "test.osm", &o, &b.src);
    if (rc != RL_OK)
        fail_msg("%s", rl_error_last());
    assert_int_equal(rl_map_compile(b.src, NULL, &b.bytes, &b.len), RL_OK);
    assert_int_equal(rl_map_open_mem(b.bytes, b.len, 0, &b.map), RL_OK);
    return b;
}

static void unbuild(built *b)
{
    rl_map_close(b->map);
    free(b->bytes);
    rl_map_source_free(b->src);
}

/* A CommonRoad lanelet from (x0, y0) to (x1, y1) bounds given as two straight lines. */
static void cr_lanelet(char *buf, size_t cap, int id, double lx0, double ly0, double lx1,
                       double ly1, double rx0, double ry0, double rx1, double ry1,
                       const char *extra)
{
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n,
             "<lanelet id=\"%d\"><leftBound><point><x>%g</x><y>%g</y></point>"
             "<point><x>%g</x><y>%g</y></point></leftBound><rightBound><point><x>%g</x><y>%g</y>"
             "</point><point><x>%g</x><y>%g</y></point></rightBound>%s</lanelet>\n",
             id, lx0, ly0, lx1, ly1, rx0, ry0, rx1, ry1, extra);
}

/* A: [0,10]x[0,1] driving +x; B: its successor [10,20]x[0,1]; C: [0,10]x[1.0005,2], a
 * lane beside A with a 0.5 mm gap; E: [0,1]x[1,10] driving +y, the L's other arm. */
static built lab_map(void)
{
    static char xml[8192];
    snprintf(xml, sizeof xml,
             "<?xml version=\"1.0\"?>\n<commonRoad commonRoadVersion=\"2020a\" "
             "benchmarkID=\"T-1\">\n");
    cr_lanelet(xml, sizeof xml, 1, 0, 1, 10, 1, 0, 0, 10, 0,
               "<successor ref=\"2\"/><adjacentLeft ref=\"3\" drivingDir=\"same\"/>"
               "<laneletType>urban</laneletType>");
    cr_lanelet(xml, sizeof xml, 2, 10, 1, 20, 1, 10, 0, 20, 0, "<predecessor ref=\"1\"/>");
    cr_lanelet(xml, sizeof xml, 3, 0, 2, 10, 2, 0, 1.0005, 10, 1.0005,
               "<adjacentRight ref=\"1\" drivingDir=\"same\"/>");
    cr_lanelet(xml, sizeof xml, 4, 0, 1, 0, 10, 1, 1, 1, 10, "");
    size_t n = strlen(xml);
    snprintf(xml + n, sizeof xml - n,
             "<obstacle id=\"9\"><role>static</role><type>parkedVehicle</type></obstacle>\n"
             "</commonRoad>\n");
    return build(xml, true);
}

static size_t idx_of(const rl_map *m, int64_t id)
{
    size_t i;
    assert_int_equal(rl_map_lanelet_find(m, id, &i), RL_OK);
    return i;
}

static void test_hand_cases(void **state)
{
    (void)state;
    built b = lab_map();
    const rl_map *m = b.map;
    assert_int_equal(rl_map_lanelet_count(m), 4);
    size_t a = idx_of(m, 1), bb = idx_of(m, 2), c = idx_of(m, 3), e = idx_of(m, 4);
    assert_string_equal(rl_map_lanelet_subtype(m, a), "urban");
    assert_true(fabs(rl_map_lanelet_area(m, a) - 10) < 1e-12);
    assert_true(fabs(rl_map_lanelet_start_width(m, a) - 1) < 1e-12);
    const uint32_t *links;
    assert_int_equal(rl_map_successors(m, a, &links), 1);
    assert_int_equal(links[0], bb);
    assert_int_equal(rl_map_predecessors(m, bb, &links), 1);
    assert_int_equal(links[0], a);
    assert_int_equal(rl_map_adjacent(m, a, true), (long)c);
    assert_int_equal(rl_map_adjacent(m, c, false), (long)a);
    assert_int_equal(rl_map_adjacent(m, a, false), -1);
    assert_int_equal(b.src->num_objects, 1);
    assert_string_equal(b.src->objects[0].subtype, "parkedVehicle");

    rl_map_where w;
    rl_map_where_is(m, 5, 0.3, &w); /* depth: 0.3 to the right bound */
    assert_true(w.inside && fabs(w.distance - 0.3) < 1e-12 && w.nearest == (long)a);
    rl_map_where_is(m, 5, -0.25, &w);
    assert_true(!w.inside && fabs(w.distance + 0.25) < 1e-12 && w.nearest == (long)a);
    rl_map_where_is(m, 25, 0.5, &w); /* beyond B's end: clearance 5 */
    assert_true(!w.inside && fabs(w.distance + 5) < 1e-12 && w.nearest == (long)bb);
    rl_map_where_is(m, -3, -4, &w); /* corner (0,0): 3-4-5 */
    assert_true(!w.inside && fabs(w.distance + 5) < 1e-12);
    rl_map_where_is(m, 3, 5, &w); /* between the L's arms: to E's right edge x = 1: 2 */
    assert_true(!w.inside && fabs(w.distance + 2) < 1e-12 && w.nearest == (long)e);

    uint32_t ids[8];
    assert_int_equal(rl_map_lanelets_at(m, 10, 0.5, ids, 8), 2); /* shared edge: both */
    assert_true(ids[0] == a && ids[1] == bb);
    assert_int_equal(rl_map_lanelets_at(m, 0, 0, ids, 8), 1);      /* a corner counts */
    assert_int_equal(rl_map_lanelets_at(m, 5, 1.0002, ids, 8), 0); /* in the gap */
    assert_false(rl_map_point_drivable(m, 5, 1.0002));
    /* Just below the map (less than a grid cell): on no lanelet, though the cell above is. */
    assert_false(rl_map_point_drivable(m, 5, -0.03));
    assert_int_equal(rl_map_lanelets_at(m, 5, -0.03, ids, 8), 0);
    assert_true(rl_map_point_drivable(m, 5, 0)); /* on A's edge */
    assert_true(rl_map_point_in_lanelet(m, a, 5, 1));
    assert_false(rl_map_point_in_lanelet(m, a, 5, 1 + 1e-6));

    rl_map_frenet f;
    rl_map_lanelet_frenet(m, a, 4, 0.8, &f);
    assert_true(fabs(f.s - 4) < 1e-12 && fabs(f.length - 10) < 1e-12);
    assert_true(fabs(f.offset - 0.3) < 1e-12 && fabs(f.heading) < 1e-12);
    assert_true(fabs(f.dist_left - 0.2) < 1e-12 && fabs(f.dist_right - 0.8) < 1e-12);
    rl_map_lanelet_frenet(m, e, 0.5, 7, &f);
    assert_true(fabs(f.s - 6) < 1e-12 && fabs(f.heading - M_PI / 2) < 1e-12);

    /* Footprints. Across A and B's shared edge: inside. */
    rl_map_box box = {10, 0.5, 0, 4, 0.6};
    assert_true(rl_map_footprint_inside(m, &box, 0));
    assert_true(rl_map_footprint_inside_brute(m, &box));
    /* Sticking out of A's right side by 0.1: outside. */
    box = (rl_map_box){5, 0.5, 0, 2, 1.2};
    assert_false(rl_map_footprint_inside(m, &box, 0));
    assert_false(rl_map_footprint_inside_brute(m, &box));
    assert_false(rl_map_footprint_inside(m, &box, 0.001));
    /* Across the 0.5 mm gap between A and C: outside, unless gaps under 1 mm close. */
    box = (rl_map_box){5, 1.0, 0, 2, 1.0};
    assert_false(rl_map_footprint_inside(m, &box, 0));
    assert_false(rl_map_footprint_inside_brute(m, &box));
    assert_true(rl_map_footprint_inside(m, &box, 0.001));
    assert_false(rl_map_footprint_inside(m, &box, 0.0004));
    /* Corners in both arms of the L, the middle over the concave corner: all four corners
     * inside, the footprint not. */
    box = (rl_map_box){2.75, 2.75, atan2(4.5, -4.5), hypot(4.5, 4.5), 0.2};
    rl_map_point cs[4];
    rl_map_box_corners(&box, cs);
    for (int k = 0; k < 4; k++)
        assert_true(rl_map_point_drivable(m, cs[k].x, cs[k].y));
    assert_false(rl_map_footprint_inside(m, &box, 0));
    assert_false(rl_map_footprint_inside_brute(m, &box));
    /* Rotated in A's interior: inside; off the map: outside. */
    box = (rl_map_box){5, 0.5, 0.3, 0.5, 0.3};
    assert_true(rl_map_footprint_inside(m, &box, 0));
    assert_true(rl_map_footprint_inside_brute(m, &box));
    box = (rl_map_box){50, 50, 0, 1, 1};
    assert_false(rl_map_footprint_inside(m, &box, 0));
    assert_false(rl_map_footprint_inside_brute(m, &box));
    unbuild(&b);
}

/* A lanelet that widens from 2 m to 3 m: its start and end widths and its area. */
static void test_lanelet_widths(void **state)
{
    (void)state;
    static char xml[2048];
    snprintf(xml, sizeof xml,
             "<?xml version=\"1.0\"?>\n<commonRoad commonRoadVersion=\"2020a\" "
             "benchmarkID=\"T-1\">\n");
    cr_lanelet(xml, sizeof xml, 1, 0, 2, 10, 3, 0, 0, 10, 0, "");
    size_t n = strlen(xml);
    snprintf(xml + n, sizeof xml - n, "</commonRoad>\n");
    built b = build(xml, true);
    size_t a = idx_of(b.map, 1);
    assert_true(fabs(rl_map_lanelet_start_width(b.map, a) - 2) < 1e-12);
    assert_true(fabs(rl_map_lanelet_end_width(b.map, a) - 3) < 1e-12);
    assert_true(fabs(rl_map_lanelet_area(b.map, a) - 25) < 1e-9);
    unbuild(&b);
}

static void test_boxes(void **state)
{
    (void)state;
    rl_map_box a = {0, 0, 0, 2, 1}, b = {3, 0, 0, 2, 1};
    assert_false(rl_map_box_overlap(&a, &b));
    assert_true(fabs(rl_map_box_distance(&a, &b) - 1) < 1e-12);
    b = (rl_map_box){0, 3, M_PI / 2, 2, 1}; /* B spans y 2..4: gap 1.5 above A's top 0.5 */
    assert_true(fabs(rl_map_box_distance(&a, &b) - 1.5) < 1e-12);
    /* Corner (2, 1.5) of B against A's corner (1, 0.5): sqrt(2). */
    b = (rl_map_box){2.5, 2, 0, 1, 1};
    assert_true(fabs(rl_map_box_distance(&a, &b) - sqrt(2)) < 1e-9);
    /* A cross: no corner of either lies inside the other, yet they overlap. */
    a = (rl_map_box){0, 0, 0, 4, 0.5};
    b = (rl_map_box){0, 0, M_PI / 2, 4, 0.5};
    assert_true(rl_map_box_overlap(&a, &b));
    assert_true(rl_map_box_distance(&a, &b) == 0);

    /* Against brute force: distance between the boxes' outlines sampled every 1 mm, and
     * overlap when a sample of one outline lies inside the other. */
    uint64_t s = 12345;
    for (int t = 0; t < 200; t++) {
        double r[8];
        for (int k = 0; k < 8; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            r[k] = (double)(s >> 11) * 0x1.0p-53;
        }
        a = (rl_map_box){0, 0, r[0] * 6.3, 0.5 + r[1], 0.2 + r[2] * 0.5};
        b = (rl_map_box){r[3] * 3 - 1.5, r[4] * 3 - 1.5, r[5] * 6.3, 0.5 + r[6], 0.2 + r[7] * 0.5};
        rl_map_point pa[4], pb[4];
        rl_map_box_corners(&a, pa);
        rl_map_box_corners(&b, pb);
        double best = INFINITY;
        bool crossing = false;
        for (int i = 0; i < 4; i++) {
            rl_map_point p0 = pa[i], p1 = pa[(i + 1) % 4];
            int steps = (int)ceil(hypot(p1.x - p0.x, p1.y - p0.y) / 0.001);
            for (int k = 0; k <= steps; k++) {
                double u = (double)k / steps, x = p0.x + u * (p1.x - p0.x),
                       y = p0.y + u * (p1.y - p0.y);
                /* inside B: |projections| within half sizes */
                double dx = x - b.x, dy = y - b.y;
                double along = dx * cos(b.yaw) + dy * sin(b.yaw),
                       across = -dx * sin(b.yaw) + dy * cos(b.yaw);
                if (fabs(along) <= b.length / 2 && fabs(across) <= b.width / 2)
                    crossing = true;
                for (int j = 0; j < 4; j++) {
                    rl_map_point q0 = pb[j], q1 = pb[(j + 1) % 4];
                    double ex = q1.x - q0.x, ey = q1.y - q0.y;
                    double tt = ((x - q0.x) * ex + (y - q0.y) * ey) / (ex * ex + ey * ey);
                    tt = tt < 0 ? 0 : tt > 1 ? 1 : tt;
                    best = fmin(best, hypot(q0.x + tt * ex - x, q0.y + tt * ey - y));
                }
            }
        }
        double d = rl_map_box_distance(&a, &b);
        if (crossing) {
            assert_true(rl_map_box_overlap(&a, &b));
        } else if (best > 0.002) {
            assert_false(rl_map_box_overlap(&a, &b));
            assert_true(fabs(d - best) < 0.001);
        }
    }
}

/* Indexed answers equal brute force over every polygon, on the CPM lab map. */
static void test_index_vs_brute(void **state)
{
    (void)state;
    RL_TEST_REQUIRE_SHARED(shared, "indexed vs brute-force queries (LabMapCommonRoad.xml)");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/maps/LabMapCommonRoad.xml", shared);
    rl_map *m;
    assert_int_equal(rl_map_load(path, NULL, &m, NULL), RL_OK);
    size_t n = rl_map_lanelet_count(m);
    uint64_t s = 99;
    uint32_t got[64];
    size_t inside = 0;
    for (int t = 0; t < 20000; t++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double x = (double)(s >> 11) * 0x1.0p-53 * 4.7 - 0.1;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double y = (double)(s >> 11) * 0x1.0p-53 * 4.2 - 0.1;
        bool brute = rl_map_point_drivable_brute(m, x, y);
        assert_int_equal(rl_map_point_drivable(m, x, y), brute);
        inside += brute;
        size_t k = rl_map_lanelets_at(m, x, y, got, 64), q = 0;
        double depth = -1, clearance = INFINITY;
        for (size_t i = 0; i < n; i++) {
            const rl_map_point *poly;
            size_t pn = rl_map_lanelet_line(m, i, RL_MAP_POLYGON, &poly);
            double d = INFINITY;
            for (size_t e = 0, f = pn - 1; e < pn; f = e++) {
                double ex = poly[e].x - poly[f].x, ey = poly[e].y - poly[f].y;
                double tt = ((x - poly[f].x) * ex + (y - poly[f].y) * ey) / (ex * ex + ey * ey);
                tt = tt < 0 ? 0 : tt > 1 ? 1 : tt;
                d = fmin(d, hypot(poly[f].x + tt * ex - x, poly[f].y + tt * ey - y));
            }
            if (rl_map_point_in_lanelet(m, i, x, y)) {
                assert_true(q < k && got[q] == i);
                q++;
                depth = fmax(depth, d);
            } else {
                clearance = fmin(clearance, d);
            }
        }
        assert_int_equal(q, k);
        rl_map_where w;
        rl_map_where_is(m, x, y, &w);
        assert_int_equal(w.inside, brute);
        assert_true(fabs(w.distance - (brute ? depth : -clearance)) < 1e-12);
    }
    assert_true(inside > 2000 && inside < 18000); /* both answers are exercised */

    /* Footprints of the lab's cars at random poses near lanes: a "yes" means every edge
     * point (sampled every 0.2 mm) is on a lanelet; a "no" means some sample is off the
     * lanelets or within 0.2 mm of their edge. */
    size_t yes = 0;
    for (int t = 0; t < 800; t++) {
        double r[3];
        for (int k = 0; k < 3; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            r[k] = (double)(s >> 11) * 0x1.0p-53;
        }
        rl_map_box box = {0.1 + r[0] * 4.3, 0.1 + r[1] * 3.8, r[2] * 6.283, 0.22, 0.107};
        if (!rl_map_point_drivable(m, box.x, box.y))
            continue;
        bool ours = rl_map_footprint_inside(m, &box, 0);
        rl_map_point c[4];
        rl_map_box_corners(&box, c);
        bool all_in = true, near_edge = false;
        for (int i = 0; i < 4; i++)
            for (int k = 0; k <= 1100; k++) {
                double u = k / 1100.0;
                double x = c[i].x + u * (c[(i + 1) % 4].x - c[i].x),
                       y = c[i].y + u * (c[(i + 1) % 4].y - c[i].y);
                rl_map_where w;
                rl_map_where_is(m, x, y, &w);
                all_in &= w.inside;
                near_edge |= fabs(w.distance) < 2e-4;
            }
        if (ours)
            assert_true(all_in);
        else
            assert_true(!all_in || near_edge);
        yes += ours;
    }
    assert_true(yes > 20);
    rl_map_close(m);
}

/* The indexed footprint test gives brute force's answer (tolerance 0) box by box, on the
 * CPM lab map: the lab's cars at poses along the lanes (a random point of a lanelet's
 * centre line, up to 4 cm sideways, up to 0.3 rad turned; many near the lane edges, where
 * cells are tested exactly) and at uniform random poses; a yes of brute force stays a yes
 * when gaps may close. */
static void test_footprint_vs_brute(void **state)
{
    (void)state;
    RL_TEST_REQUIRE_SHARED(shared, "footprints indexed vs brute force (LabMapCommonRoad.xml)");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/maps/LabMapCommonRoad.xml", shared);
    rl_map *m;
    assert_int_equal(rl_map_load(path, NULL, &m, NULL), RL_OK);
    size_t nl = rl_map_lanelet_count(m);
    uint64_t s = 7;
    size_t yes = 0, no = 0;
    for (int t = 0; t < 3000; t++) {
        double r[5];
        for (int k = 0; k < 5; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            r[k] = (double)(s >> 11) * 0x1.0p-53;
        }
        rl_map_box box;
        if (t % 3 == 2) {
            box = (rl_map_box){r[0] * 4.6 - 0.05, r[1] * 4.1 - 0.05, r[2] * 6.283, 0.22, 0.107};
        } else {
            const rl_map_point *c;
            size_t k = rl_map_lanelet_line(m, (size_t)(r[0] * (double)nl) % nl, RL_MAP_CENTRE, &c);
            assert_true(k >= 2);
            size_t i = (size_t)(r[1] * (double)(k - 1)) % (k - 1);
            double yaw = atan2(c[i + 1].y - c[i].y, c[i + 1].x - c[i].x), off = (r[3] - 0.5) * 0.08;
            box = (rl_map_box){c[i].x + r[2] * (c[i + 1].x - c[i].x) - off * sin(yaw),
                               c[i].y + r[2] * (c[i + 1].y - c[i].y) + off * cos(yaw),
                               yaw + (r[4] - 0.5) * 0.6, 0.22, 0.107};
        }
        bool brute = rl_map_footprint_inside_brute(m, &box);
        if (rl_map_footprint_inside(m, &box, 0) != brute)
            fail_msg("box %d (%.17g, %.17g, yaw %.17g): indexed %d, brute force %d", t, box.x,
                     box.y, box.yaw, !brute, brute);
        if (brute) {
            assert_true(rl_map_footprint_inside(m, &box, 1e-6));
            assert_true(rl_map_footprint_inside(m, &box, 0.001));
        }
        yes += brute;
        no += !brute;
    }
    assert_true(yes > 500 && no > 500); /* both answers are exercised */
    rl_map_close(m);
}

static void test_runtime_format(void **state)
{
    (void)state;
    built b = lab_map();
    built again = lab_map();
    assert_int_equal(b.len, again.len);
    assert_memory_equal(b.bytes, again.bytes, b.len); /* deterministic */
    unbuild(&again);

    char *dir = rl_test_tmpdir();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/runtime_map.bin", dir);
    rl_test_write_file(path, b.bytes, b.len);
    rl_map *m;
    assert_int_equal(rl_map_open_file(path, &m), RL_OK);
    rl_map_info in, in2;
    rl_map_get_info(m, &in);
    rl_map_get_info(b.map, &in2);
    assert_memory_equal(in.sha256, in2.sha256, 32);
    uint8_t d[32];
    rl_sha256(b.bytes, b.len, d);
    assert_memory_equal(in.sha256, d, 32);
    assert_int_equal(in.lanelets, 4);
    assert_int_equal(in.obstacles, 1);
    assert_true(fabs(in.area_sum - (10 + 10 + 9.995 + 9)) < 1e-9);
    /* Union: C and E overlap on [0,1]x[1.0005,2]; the rest meet only at edges. Rows of
     * 10 m / 8192 against horizontal edges: within a few row heights times 10 m. */
    assert_true(fabs(in.area_union - (in.area_sum - 0.9995)) < 0.02);
    rl_map_close(m);
    assert_int_equal(rl_map_load(path, NULL, &m, NULL), RL_OK); /* runtime map by magic */
    rl_map_close(m);

    uint8_t *copy = malloc(b.len + 8);
    memcpy(copy, b.bytes, b.len);
    copy[b.len - 20] ^= 1; /* a data byte: CRC */
    assert_int_equal(rl_map_open_mem(copy, b.len, 0, &m), RL_ECRC);
    assert_non_null(strstr(rl_error_last(), "CRC"));
    memcpy(copy, b.bytes, b.len);
    assert_int_equal(rl_map_open_mem(copy, b.len - 8, 0, &m), RL_EPARSE); /* truncated */
    copy[8] = 99;                                                         /* version */
    assert_int_equal(rl_map_open_mem(copy, b.len, RL_MAP_OPEN_NO_CRC, &m), RL_EUNSUPPORTED);
    memcpy(copy, b.bytes, b.len);
    memset(copy + 256, 0xff, 16); /* first lanelet's id and point ranges, CRC unchecked */
    assert_int_equal(rl_map_open_mem(copy, b.len, RL_MAP_OPEN_NO_CRC, &m), RL_EPARSE);
    free(copy);
    rl_test_write_file(path, "RLMAP", 5);
    assert_int_equal(rl_map_open_file(path, &m), RL_EPARSE);
    rl_test_tmpdir_free(dir);
    unbuild(&b);
}

/* Version 2's sections: the cell extents promise only wholly drivable cells; the boundary
 * sections are present, and every damaged count, rank or index in them is refused when the
 * map is opened (the CRC off, as a crafted file would pass it). */
static void test_boundary_sections(void **state)
{
    (void)state;
    built b = lab_map();
    rlmap_header h;
    memcpy(&h, b.bytes, sizeof h);
    assert_int_equal(h.version, 2);
    assert_true(h.num_boundary_cells > 0 && h.num_local_records >= h.num_boundary_cells);
    assert_true(h.num_local_edges > 0);
    rlmap_layout at;
    rlmap_layout_of(&h, &at);
    assert_int_equal(at.total, b.len);
    /* Every rectangle the cell extents promise is wholly drivable, inside the grid. */
    const uint8_t *flags = (const uint8_t *)b.bytes + at.flags;
    const uint16_t *ext = (const uint16_t *)((const uint8_t *)b.bytes + at.extents);
    size_t longer = 0;
    for (long y = 0; y < (long)h.ny; y++)
        for (long x = 0; x < (long)h.nx; x++) {
            int k = flags[y * (long)h.nx + x] >> RLMAP_DEPTH_SHIFT, s = k - 1;
            if (k == 0) {
                assert_int_equal(ext[y * (long)h.nx + x], 0);
                continue;
            }
            for (int d = 0; d < 4; d++) {
                int e = rlmap_extent_cells(ext[y * (long)h.nx + x] >> (4 * d));
                e = e > s ? e : s;
                longer += e > s;
                long x0 = d == 1 ? x - e : x - s, x1 = d == 0 ? x + e : x + s;
                long y0 = d == 3 ? y - e : y - s, y1 = d == 2 ? y + e : y + s;
                assert_true(x0 >= 0 && y0 >= 0 && x1 < (long)h.nx && y1 < (long)h.ny);
                for (long yy = y0; yy <= y1; yy++)
                    for (long xx = x0; xx <= x1; xx++)
                        assert_true(flags[yy * (long)h.nx + xx] &
                                    (RLMAP_CELL_COVERED | RLMAP_CELL_IN_UNION));
            }
        }
    assert_true(longer > 0);
    uint8_t *copy = malloc(b.len);
    rl_map *m;
    struct {
        size_t at;
        uint32_t value;
        const char *says;
    } damage[] = {
        {at.local_edges, UINT32_MAX, "local edge 0"},     /* a point past the polygon */
        {at.locals, h.num_local_edges, "local record 0"}, /* first edge past the list */
        {at.locals + 4, 2u << 16, "local record 0"},      /* parity 2 */
        {at.blocks + 8, 1, "boundary block 0"},           /* the first rank */
        {at.boundary_starts, 1, "boundary starts"},       /* not starting at 0 */
        {offsetof(rlmap_header, num_boundary_cells), h.num_boundary_cells + 1, "sections need"},
    };
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        memcpy(copy, b.bytes, b.len);
        memcpy(copy + damage[i].at, &damage[i].value, 4);
        assert_int_not_equal(rl_map_open_mem(copy, b.len, RL_MAP_OPEN_NO_CRC, &m), RL_OK);
        if (!strstr(rl_error_last(), damage[i].says))
            fail_msg("damage %zu: %s", i, rl_error_last());
    }
    /* A version 1 map (before the boundary sections) is refused by its version. */
    memcpy(copy, b.bytes, b.len);
    copy[8] = 1;
    assert_int_equal(rl_map_open_mem(copy, b.len, RL_MAP_OPEN_NO_CRC, &m), RL_EUNSUPPORTED);
    assert_non_null(strstr(rl_error_last(), "version 1 (this runlab reads 2)"));
    free(copy);
    unbuild(&b);
}

static const char osm_head[] = "<?xml version='1.0' encoding='UTF-8'?>\n"
                               "<osm version='0.6' generator='JOSM'>\n"
                               "<bounds minlat='0' minlon='0' maxlat='1' maxlon='1'/>\n";

static int read_osm(const char *body, rl_map_source **src, rl_map_projection proj)
{
    static char xml[16384];
    snprintf(xml, sizeof xml, "%s%s</osm>\n", osm_head, body);
    rl_map_read_options o;
    rl_map_read_options_init(&o);
    o.quiet = true;
    o.projection = proj;
    return rl_lanelet2_read_mem(xml, strlen(xml), "t.osm", &o, src);
}

/* Two lanelets in metres (metric), the first's left bound stored backwards, a deleted
 * way and node, double-quoted attributes, a 64-bit id, and the second following the first. */
static const char osm_two[] =
    "<node id='1' lat='1' lon='0'/><node id='2' lat='1' lon='10'/><node id='3' lat='0' lon='0'/>"
    "<node id='4' lat='0' lon='10'/><node id='5' lat='1' lon='20'/><node id='6' lat='0' lon='20'/>"
    "<node id='7' action='delete' lat='5' lon='5'/>\n"
    "<way id='10'><nd ref='2'/><nd ref='1'/></way><way id='11'><nd ref='3'/><nd ref='4'/></way>\n"
    "<way id='12'><nd ref='2'/><nd ref='5'/></way><way id=\"13\"><nd ref=\"4\"/><nd "
    "ref=\"6\"/></way>\n"
    "<way id='14' action='delete'><nd ref='7'/></way>\n"
    "<relation id='9217047218277094766'><member type='way' ref='10' role='left'/>"
    "<member type='way' ref='11' role='right'/><tag k='type' v='lanelet'/>"
    "<tag k='subtype' v='road'/><tag k='one_way' v='yes'/><tag k='speed_limit' "
    "v='30'/></relation>\n"
    "<relation id='-5'><member type='way' ref='12' role='left'/>"
    "<member type='way' ref='13' role='right'/><tag k='type' v='lanelet'/></relation>\n"
    "<relation id='77' action='delete'><member type='way' ref='14' role='left'/>"
    "<tag k='type' v='lanelet'/></relation>\n"
    "<relation id='80'><member type='relation' ref='5' role='refers'/>"
    "<tag k='type' v='regulatory_element'/><tag k='subtype' v='traffic_light'/></relation>\n";

/* osm_two's lanes are 1 m wide in metres; read as lat/lon, 1 degree of latitude (about
 * 111 km) wide: one warning naming the file and suggesting the metric projection. */
static void test_absurd_width_warning(void **state)
{
    (void)state;
    rl_map_source *src = NULL;
    assert_int_equal(read_osm(osm_two, &src, RL_MAP_PROJ_LTP), RL_OK);
    size_t wide = 0;
    for (size_t i = 0; i < src->num_warnings; i++)
        if (strstr(src->warnings[i], "wider than 100 m")) {
            wide++;
            assert_non_null(strstr(src->warnings[i], "t.osm: 2 of 2 lanelets"));
            assert_non_null(strstr(src->warnings[i], "--projection metric"));
        }
    assert_int_equal(wide, 1);
    rl_map_source_free(src);
    src = NULL;
    assert_int_equal(read_osm(osm_two, &src, RL_MAP_PROJ_METRIC), RL_OK);
    for (size_t i = 0; i < src->num_warnings; i++)
        assert_null(strstr(src->warnings[i], "wider than"));
    rl_map_source_free(src);
}

static void test_lanelet2_rules(void **state)
{
    (void)state;
    rl_map_source *src = NULL;
    /* lat 0..1, lon 0..20 are valid lat/lon: auto picks ltp; metric is asked for. */
    assert_int_equal(read_osm(osm_two, &src, RL_MAP_PROJ_METRIC), RL_OK);
    assert_int_equal(src->num_lanelets, 2);
    assert_int_equal(src->counts.nodes, 6);
    assert_int_equal(src->counts.deleted_nodes, 1);
    assert_int_equal(src->counts.deleted_ways, 1);
    assert_int_equal(src->counts.deleted_relations, 1);
    const rl_map_source_lanelet *a = &src->lanelets[0];
    assert_true(a->id == 9217047218277094766ll);
    assert_true(a->left_inverted && !a->right_inverted);
    assert_true(a->left[0].x == 0 && a->left[0].y == 1); /* now in driving direction */
    assert_string_equal(a->subtype, "road");
    assert_int_equal(a->one_way, 1);
    assert_true(a->speed_limit == 30);
    assert_int_equal(a->num_successors, 1);
    assert_true(a->successors[0] == -5);
    assert_int_equal(src->num_objects, 1);
    assert_string_equal(src->objects[0].kind, "regulatory_element");
    void *bytes;
    size_t len;
    rl_map *m;
    assert_int_equal(rl_map_compile(src, NULL, &bytes, &len), RL_OK);
    assert_int_equal(rl_map_open_mem(bytes, len, 0, &m), RL_OK);
    assert_true(rl_map_lanelet_id(m, 0) == -5); /* sorted by id */
    assert_true(rl_map_lanelet_flags(m, 1) & RL_MAP_LANELET_LEFT_INVERTED);
    assert_true(rl_map_lanelet_flags(m, 1) & RL_MAP_LANELET_ONE_WAY);
    rl_map_close(m);
    free(bytes);
    rl_map_source_free(src);

    assert_int_equal(read_osm(osm_two, &src, RL_MAP_PROJ_AUTO), RL_OK);
    assert_int_equal(src->projection, RL_MAP_PROJ_LTP);
    /* LTP: lat 1 deg above the origin lat is R * pi / 180 north of it. */
    assert_true(fabs(src->lanelets[0].left[0].y - (1 - 49) * 6378137.0 * M_PI / 180) < 1e-6);
    rl_map_source_free(src);

    /* Coordinates outside lat/lon: metric detected. */
    assert_int_equal(read_osm("<node id='1' lat='100' lon='0'/><node id='2' lat='0' lon='0'/>",
                              &src, RL_MAP_PROJ_AUTO),
                     RL_OK);
    assert_int_equal(src->projection, RL_MAP_PROJ_METRIC);
    rl_map_source_free(src);

    /* local_x/local_y on every node: used. */
    assert_int_equal(read_osm("<node id='1' lat='49' lon='8'><tag k='local_x' v='3.5'/>"
                              "<tag k='local_y' v='-2'/></node>",
                              &src, RL_MAP_PROJ_AUTO),
                     RL_OK);
    assert_int_equal(src->projection, RL_MAP_PROJ_LOCAL);
    rl_map_source_free(src);
}

static void expect_error(int rc, const char *want)
{
    assert_int_equal(rc, RL_EPARSE);
    if (!strstr(rl_error_last(), want))
        fail_msg("error '%s' does not contain '%s'", rl_error_last(), want);
}

static void test_reader_errors(void **state)
{
    (void)state;
    rl_map_source *src = NULL;
    expect_error(read_osm("<node id='1' lat='1' lon='2'>", &src, RL_MAP_PROJ_AUTO), "t.osm:4:");
    expect_error(read_osm("<node id='12x' lat='1' lon='2'/>", &src, RL_MAP_PROJ_AUTO),
                 "not a 64-bit integer");
    expect_error(
        read_osm("<node id='9223372036854775808' lat='1' lon='2'/>", &src, RL_MAP_PROJ_AUTO),
        "not a 64-bit integer");
    expect_error(read_osm("<node id='1' lat='north' lon='2'/>", &src, RL_MAP_PROJ_AUTO),
                 "node 1: lat/lon");
    expect_error(
        read_osm("<node id='1' lat='1' lon='2'/><way id='5'><nd ref='1'/></way>"
                 "<relation id='8'><member type='way' ref='5' role='left'/>"
                 "<member type='way' ref='6' role='right'/><tag k='type' v='lanelet'/></relation>",
                 &src, RL_MAP_PROJ_AUTO),
        "relation 8 (lanelet): member way 6 (role right) not found");
    expect_error(
        read_osm("<node id='1' lat='1' lon='2'/><way id='5'><nd ref='1'/><nd ref='3'/></way>"
                 "<relation id='8'><member type='way' ref='5' role='left'/>"
                 "<member type='way' ref='5' role='right'/><tag k='type' v='lanelet'/></relation>",
                 &src, RL_MAP_PROJ_AUTO),
        "node 3 not found");
    expect_error(read_osm("<node id='1' lat='1' lon='2'/><node id='1' lat='1' lon='2'/>", &src,
                          RL_MAP_PROJ_AUTO),
                 "id also used on line");
    const char *cr = "<commonRoad><lanelet id=\"1\"><leftBound><point><x>0</x><y>1</y></point>"
                     "</leftBound><rightBound><point><x>0</x><y>0</y></point></rightBound>"
                     "<successor ref=\"42\"/></lanelet></commonRoad>";
    expect_error(rl_commonroad_read_mem(cr, strlen(cr), "c.xml", NULL, &src), "no such lanelet");
    cr = "<commonRoad><lanelet id=\"1\"><leftBound><point><x>zero</x><y>1</y></point>"
         "</leftBound></lanelet></commonRoad>";
    expect_error(rl_commonroad_read_mem(cr, strlen(cr), "c.xml", NULL, &src), "is not a number");
    cr = "<commonRoad><lanelet id=\"1\"></lanelet>";
    expect_error(rl_commonroad_read_mem(cr, strlen(cr), "c.xml", NULL, &src), "malformed XML");
    cr = "<osm/>";
    expect_error(rl_commonroad_read_mem(cr, strlen(cr), "c.xml", NULL, &src),
                 "expected <commonRoad>");
    assert_null(src);

    /* Positions that no projection should give (1e12 m) are refused when compiling. */
    cr = "<commonRoad><lanelet id=\"3\"><leftBound><point><x>1e12</x><y>1</y></point>"
         "</leftBound><rightBound><point><x>0</x><y>0</y></point></rightBound></lanelet></"
         "commonRoad>";
    assert_int_equal(rl_commonroad_read_mem(cr, strlen(cr), "c.xml", NULL, &src), RL_OK);
    void *far_bytes = NULL;
    size_t far_len;
    assert_int_equal(rl_map_compile(src, NULL, &far_bytes, &far_len), RL_ERANGE);
    assert_non_null(strstr(rl_error_last(), "lanelet 3: coordinate"));
    assert_null(far_bytes);
    rl_map_source_free(src);

    /* Degenerate lanelets are kept, each with a warning naming it. */
    cr = "<commonRoad><lanelet id=\"7\"><leftBound><point><x>0</x><y>0</y></point>"
         "<point><x>1</x><y>0</y></point></leftBound><rightBound><point><x>0</x><y>0</y></point>"
         "<point><x>1</x><y>0</y></point></rightBound></lanelet></commonRoad>";
    rl_map_read_options o;
    rl_map_read_options_init(&o);
    o.quiet = true;
    assert_int_equal(rl_commonroad_read_mem(cr, strlen(cr), "c.xml", &o, &src), RL_OK);
    assert_int_equal(src->num_lanelets, 1);
    assert_int_equal(src->num_warnings, 2);
    assert_non_null(strstr(src->warnings[0], "lanelet 7: zero width"));
    assert_non_null(strstr(src->warnings[1], "lanelet 7: zero area"));
    void *bytes;
    size_t len;
    rl_map *m;
    assert_int_equal(rl_map_compile(src, NULL, &bytes, &len), RL_OK);
    assert_int_equal(rl_map_open_mem(bytes, len, 0, &m), RL_OK);
    assert_true(rl_map_point_drivable(m, 0.5, 0)); /* on its (collapsed) boundary */
    assert_false(rl_map_point_drivable(m, 0.5, 0.1));
    rl_map_where w;
    rl_map_where_is(m, 0.5, 0.1, &w);
    assert_true(fabs(w.distance + 0.1) < 1e-12);
    rl_map_close(m);
    free(bytes);
    rl_map_source_free(src);
}

/* The memo gives rl_map_footprint_inside's answer for every pose: `poses` random poses
 * over [x0, x1] x [y0, y1], each met again later (a lap) nudged by under a cell, so that
 * remembered slots answer too; both gap tolerances. Returns how many were inside. */
static size_t memo_matches(const rl_map *m, double x0, double y0, double x1, double y1,
                           size_t poses, unsigned seed)
{
    size_t inside = 0;
    for (int tol = 0; tol < 2; tol++) {
        double gap = tol ? 0.01 : 0;
        rl_map_inside_memo *memo = NULL;
        assert_int_equal(rl_map_inside_memo_new(m, 0.22, 0.107, &memo), RL_OK);
        unsigned r = seed;
        rl_map_box *laps = malloc(poses * sizeof *laps);
        assert_non_null(laps);
        for (size_t i = 0; i < 2 * poses; i++) {
            rl_map_box b;
            if (i < poses) {
                b = (rl_map_box){x0 + (x1 - x0) * (rand_r(&r) / (double)RAND_MAX),
                                 y0 + (y1 - y0) * (rand_r(&r) / (double)RAND_MAX),
                                 (rand_r(&r) / (double)RAND_MAX - 0.5) * 8, 0.22, 0.107};
                laps[i] = b;
            } else {
                b = laps[i - poses];
                b.x += 0.002 * (rand_r(&r) / (double)RAND_MAX - 0.5);
                b.yaw += 0.004 * (rand_r(&r) / (double)RAND_MAX - 0.5);
            }
            bool want = rl_map_footprint_inside(m, &b, gap);
            if (rl_map_footprint_inside_memo(memo, &b, gap) != want)
                fail_msg("pose %zu (%.9f, %.9f, yaw %.9f), tolerance %g: memo %d, walk %d", i,
                         b.x, b.y, b.yaw, gap, !want, want);
            inside += want && tol == 0;
        }
        /* Another size than the memo's: answered without it, the same. */
        rl_map_box other = {laps[0].x, laps[0].y, laps[0].yaw, 0.5, 0.2};
        assert_int_equal(rl_map_footprint_inside_memo(memo, &other, gap),
                         rl_map_footprint_inside(m, &other, gap));
        free(laps);
        rl_map_inside_memo_free(memo);
    }
    return inside;
}

static void test_footprint_memo(void **state)
{
    (void)state;
    built b = lab_map(); /* lanelets 1 and 3 apart by 0.5 mm: a gap the tolerance closes */
    size_t inside = memo_matches(b.map, -0.5, -0.5, 20.5, 10.5, 20000, 7);
    /* The poses must exercise both answers, or the comparison says little. */
    if (inside < 2000 || inside > 18000)
        fail_msg("%zu of 20000 random footprints inside: not a fair mix", inside);
    /* Near the edges and the gap, where the slots' boxes do not fit. */
    memo_matches(b.map, 0.05, 0.9, 9.95, 1.1, 20000, 11);

    rl_map_inside_memo *memo = NULL;
    assert_int_equal(rl_map_inside_memo_new(b.map, 0, 0.1, &memo), RL_EINVAL);
    assert_null(memo);
    rl_map_box nan_box = {NAN, 1, 0, 0.22, 0.107};
    assert_int_equal(rl_map_inside_memo_new(b.map, 0.22, 0.107, &memo), RL_OK);
    assert_false(rl_map_footprint_inside_memo(memo, &nan_box, 0));
    rl_map_inside_memo_free(memo);
    rl_map_inside_memo_free(NULL);
    unbuild(&b);
}

/* A lane whose outer edge lies 2 mm below a grid line (the grid starts at the lowest
 * point of all lanelets, the other lane's edge): the cells wholly inside it begin 2 mm
 * from its edge, so a slot's box grown by less than a pose can stray would answer inside
 * for poses whose edge crosses the lane's. Swept outward, each bin met first from inside;
 * cars of many widths, so that the bins' rows fall at every offset from the edge. */
static void test_footprint_memo_edge(void **state)
{
    (void)state;
    static char xml[4096];
    snprintf(xml, sizeof xml,
             "<?xml version=\"1.0\"?>\n<commonRoad commonRoadVersion=\"2020a\" "
             "benchmarkID=\"T-1\">\n");
    cr_lanelet(xml, sizeof xml, 1, 0, 1.123, 10, 1.123, 0, 0.123, 10, 0.123, "");
    cr_lanelet(xml, sizeof xml, 2, 20, 1, 30, 1, 20, 0, 30, 0, "");
    size_t n = strlen(xml);
    snprintf(xml + n, sizeof xml - n, "</commonRoad>\n");
    built b = build(xml, true);
    rl_map_info info;
    rl_map_get_info(b.map, &info);
    assert_true(info.cell_size > 0.004); /* the edge's 2 mm are within a cell of the line */
    size_t out = 0;
    for (int wk = 0; wk < 46; wk++) {
        double width = 0.08 + 0.001 * wk, half = width / 2, edge = 0.123;
        rl_map_inside_memo *memo = NULL;
        assert_int_equal(rl_map_inside_memo_new(b.map, 0.22, width, &memo), RL_OK);
        for (int k = 0; k < 12; k++) {
            double x = 1 + 0.37 * k, yaw = 0.0003 * (k % 5);
            for (double y = edge + half + 0.04; y > edge + half - 0.012; y -= 0.0002) {
                rl_map_box box = {x, y, yaw, 0.22, width};
                bool want = rl_map_footprint_inside(b.map, &box, 0);
                out += !want;
                if (rl_map_footprint_inside_memo(memo, &box, 0) != want)
                    fail_msg("edge sweep (%.6f, %.6f, yaw %.4f, width %.3f): memo %d, walk %d",
                             x, y, yaw, width, !want, want);
            }
        }
        rl_map_inside_memo_free(memo);
    }
    assert_true(out > 1000);
    unbuild(&b);
}

/* The lab's own map (../shared): poses along its lanes, as a vehicle drives them. */
static void test_footprint_memo_lab_map(void **state)
{
    (void)state;
    RL_TEST_REQUIRE_SHARED(shared, "the lab map (LabMapCommonRoad.xml)");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/maps/LabMapCommonRoad.xml", shared);
    rl_map_read_options o;
    rl_map_read_options_init(&o);
    o.quiet = true;
    rl_map_source *src = NULL;
    if (rl_map_source_read_file(path, &o, &src) != RL_OK)
        fail_msg("%s", rl_error_last());
    void *bytes = NULL;
    size_t len = 0;
    rl_map *m = NULL;
    assert_int_equal(rl_map_compile(src, NULL, &bytes, &len), RL_OK);
    assert_int_equal(rl_map_open_mem(bytes, len, 0, &m), RL_OK);
    rl_map_info info;
    rl_map_get_info(m, &info);
    size_t inside = memo_matches(m, info.xmin, info.ymin, info.xmax, info.ymax, 30000, 5);
    if (inside < 1000)
        fail_msg("%zu of 30000 random footprints on the lab map inside", inside);
    rl_map_close(m);
    free(bytes);
    rl_map_source_free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases),     cmocka_unit_test(test_boxes),
        cmocka_unit_test(test_lanelet_widths),
        cmocka_unit_test(test_index_vs_brute), cmocka_unit_test(test_footprint_vs_brute),
        cmocka_unit_test(test_footprint_memo), cmocka_unit_test(test_footprint_memo_edge),
        cmocka_unit_test(test_footprint_memo_lab_map),
        cmocka_unit_test(test_runtime_format), cmocka_unit_test(test_boundary_sections),
        cmocka_unit_test(test_lanelet2_rules), cmocka_unit_test(test_absurd_width_warning),
        cmocka_unit_test(test_reader_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
