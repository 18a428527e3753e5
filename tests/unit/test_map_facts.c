/* Tests of the map readers, runtime map and point queries against the facts measured
 * independently of runlab in ../shared/maps (the facts files and README.md): element counts,
 * re-oriented bounds, bounding boxes, widths, areas, union areas, sample points inside or
 * outside with their margins, projections, footprints and vehicle pairs. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/map.h"

#include "formats/map/map_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FACT_TOL 1.5e-6 /* facts are rounded to 6 decimals */

static json_object *load_facts(const char *shared, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/maps/facts/%s", shared, name);
    json_object *o = NULL;
    if (rl_json_read_file(path, 64u << 20, &o) != RL_OK)
        fail_msg("%s", rl_error_last());
    return o;
}

static json_object *get(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v))
        fail_msg("facts: no key '%s'", key);
    return v;
}

static double num(json_object *o, const char *key)
{
    return json_object_get_double(get(o, key));
}

static void near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: got %.9f, want %.9f (tolerance %g)", what, got, want, tol);
}

typedef struct loaded {
    rl_map_source *src;
    rl_map *map;
    void *bytes;
} loaded;

static loaded load_map(const char *shared, const char *file, rl_map_projection proj, bool align)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/maps/%s", shared, file);
    rl_map_read_options o;
    rl_map_read_options_init(&o);
    o.projection = proj;
    o.align_bounds = align;
    o.quiet = true;
    loaded l = {0};
    if (rl_map_source_read_file(path, &o, &l.src) != RL_OK)
        fail_msg("%s", rl_error_last());
    size_t len;
    assert_int_equal(rl_map_compile(l.src, NULL, &l.bytes, &len), RL_OK);
    assert_int_equal(rl_map_open_mem(l.bytes, len, 0, &l.map), RL_OK);
    return l;
}

static void unload(loaded *l)
{
    rl_map_close(l->map);
    free(l->bytes);
    rl_map_source_free(l->src);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* min / median (numpy's: mean of the middle two for even n) / max of v. */
static void check_stats(double *v, size_t n, json_object *want, const char *what)
{
    qsort(v, n, sizeof *v, cmp_double);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    char label[128];
    snprintf(label, sizeof label, "%s min", what);
    near(v[0], num(want, "min"), FACT_TOL, label);
    snprintf(label, sizeof label, "%s median", what);
    near(med, num(want, "median"), FACT_TOL, label);
    snprintf(label, sizeof label, "%s max", what);
    near(v[n - 1], num(want, "max"), FACT_TOL, label);
    assert_int_equal(n, json_object_get_int64(get(want, "n")));
}

static bool id_in(json_object *arr, int64_t id)
{
    for (size_t i = 0; i < json_object_array_length(arr); i++)
        if (json_object_get_int64(json_object_array_get_idx(arr, i)) == id)
            return true;
    return false;
}

/* Geometry facts ("geometry_aligned" or "geometry_as_in_file") from the source's
 * lanelets and the compiled map. */
static void check_geometry(const loaded *l, json_object *g, const char *what)
{
    const rl_map_source *src = l->src;
    size_t n = src->num_lanelets;
    double *sw = calloc(n, sizeof *sw), *ew = calloc(n, sizeof *ew),
           *area = calloc(n, sizeof *area);
    rl_map_point *poly = NULL;
    size_t cw = 0, points = 0;
    double sum = 0, bb[4] = {INFINITY, INFINITY, -INFINITY, -INFINITY};
    json_object *crossing = get(g, "self_crossing_lanelets"),
                *zero = get(g, "zero_start_width_lanelets");
    size_t zero_seen = 0;
    for (size_t i = 0; i < n; i++) {
        const rl_map_source_lanelet *ll = &src->lanelets[i];
        size_t k = ll->num_left + ll->num_right;
        poly = realloc(poly, k * sizeof *poly);
        rl_map_polygon_build(ll, poly);
        for (size_t j = 0; j < k; j++) {
            bb[0] = fmin(bb[0], poly[j].x);
            bb[1] = fmin(bb[1], poly[j].y);
            bb[2] = fmax(bb[2], poly[j].x);
            bb[3] = fmax(bb[3], poly[j].y);
        }
        double a = rl_map_polygon_signed_area(poly, k);
        cw += a < 0;
        area[i] = fabs(a);
        sum += area[i];
        points += k;
        sw[i] = hypot(ll->left[0].x - ll->right[0].x, ll->left[0].y - ll->right[0].y);
        ew[i] = hypot(ll->left[ll->num_left - 1].x - ll->right[ll->num_right - 1].x,
                      ll->left[ll->num_left - 1].y - ll->right[ll->num_right - 1].y);
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)ll->id);
        json_object *want = NULL;
        size_t got = rl_map_polygon_self_crossings(poly, k);
        size_t expect = json_object_object_get_ex(crossing, key, &want)
                            ? (size_t)json_object_get_int64(want)
                            : 0;
        if (got != expect)
            fail_msg("%s: lanelet %s: %zu self-crossings, want %zu", what, key, got, expect);
        if (sw[i] == 0) {
            assert_true(id_in(zero, ll->id));
            zero_seen++;
        }
    }
    assert_int_equal(zero_seen, json_object_array_length(zero));
    json_object *bbox = get(g, "bbox");
    near(bb[0], num(bbox, "xmin"), FACT_TOL, "bbox xmin");
    near(bb[1], num(bbox, "ymin"), FACT_TOL, "bbox ymin");
    near(bb[2], num(bbox, "xmax"), FACT_TOL, "bbox xmax");
    near(bb[3], num(bbox, "ymax"), FACT_TOL, "bbox ymax");
    near(sum, num(g, "area_sum_abs"), FACT_TOL * 10, "area sum");
    assert_int_equal(cw, json_object_get_int64(get(g, "n_clockwise_polygons")));
    assert_int_equal(points, json_object_get_int64(get(g, "bound_point_count")));
    check_stats(sw, n, get(g, "start_width"), "start width");
    check_stats(ew, n, get(g, "end_width"), "end width");
    check_stats(area, n, get(g, "area_per_lanelet"), "lanelet area");
    free(sw);
    free(ew);
    free(area);
    free(poly);
}

/* The compiled map's summary agrees with the same facts. */
static void check_info(const loaded *l, json_object *g, double union_want, double union_tol)
{
    rl_map_info in;
    rl_map_get_info(l->map, &in);
    json_object *bbox = get(g, "bbox");
    near(in.xmin, num(bbox, "xmin"), FACT_TOL, "info xmin");
    near(in.ymax, num(bbox, "ymax"), FACT_TOL, "info ymax");
    near(in.area_sum, num(g, "area_sum_abs"), FACT_TOL * 10, "info area sum");
    near(in.width_median, num(get(g, "start_width"), "median"), FACT_TOL, "info median width");
    near(in.area_union, union_want, union_tol, "union area");
    assert_int_equal(in.lanelets, l->src->num_lanelets);
}

static void check_realigned(const loaded *l, json_object *facts)
{
    json_object *re = get(facts, "lanelets_realigned_by_lanelet2_heuristic");
    size_t flipped = 0;
    for (size_t i = 0; i < l->src->num_lanelets; i++) {
        const rl_map_source_lanelet *ll = &l->src->lanelets[i];
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)ll->id);
        json_object *want = NULL;
        bool wl = false, wr = false;
        if (json_object_object_get_ex(re, key, &want)) {
            wl = json_object_get_boolean(get(want, "left_inverted"));
            wr = json_object_get_boolean(get(want, "right_inverted"));
        }
        if (ll->left_inverted != wl || ll->right_inverted != wr)
            fail_msg("lanelet %s: inverted left %d right %d, want %d %d", key, ll->left_inverted,
                     ll->right_inverted, wl, wr);
        flipped += ll->left_inverted || ll->right_inverted;
    }
    assert_int_equal(flipped, json_object_object_length(re));
}

/* Sample points: inside or not, the containing lanelets, depth or clearance, and for lane
 * centres the heading and the distances to the lanelet's own bounds. Facts list the
 * lanelets containing a point by the strict even-odd rule; runlab counts the boundary as
 * inside, so it may add lanelets whose boundary passes through the point, and no others. */
static void check_points(const loaded *l, json_object *pts, const char *what)
{
    const rl_map *m = l->map;
    for (size_t i = 0; i < json_object_array_length(pts); i++) {
        json_object *p = json_object_array_get_idx(pts, i);
        json_object *xy = get(p, "point");
        double x = json_object_get_double(json_object_array_get_idx(xy, 0));
        double y = json_object_get_double(json_object_array_get_idx(xy, 1));
        bool inside = json_object_get_boolean(get(p, "inside"));
        char label[160];
        snprintf(label, sizeof label, "%s (%g, %g)", what, x, y);
        rl_map_where w;
        rl_map_where_is(m, x, y, &w);
        if (w.inside != inside || rl_map_point_drivable(m, x, y) != inside ||
            rl_map_point_drivable_brute(m, x, y) != inside)
            fail_msg("%s: inside %d, want %d", label, w.inside, inside);
        uint32_t idx[64];
        size_t k = rl_map_lanelets_at(m, x, y, idx, 64);
        json_object *want = get(p, "lanelets");
        for (size_t j = 0; j < json_object_array_length(want); j++) {
            size_t wi;
            int64_t id = json_object_get_int64(json_object_array_get_idx(want, j));
            assert_int_equal(rl_map_lanelet_find(m, id, &wi), RL_OK);
            bool found = false;
            for (size_t q = 0; q < k; q++)
                found |= idx[q] == wi;
            if (!found)
                fail_msg("%s: lanelet %lld missing", label, (long long)id);
        }
        for (size_t q = 0; q < k; q++) {
            if (id_in(want, rl_map_lanelet_id(m, idx[q])))
                continue;
            const rl_map_point *poly;
            size_t pn = rl_map_lanelet_line(m, idx[q], RL_MAP_POLYGON, &poly);
            if (rl_map_poly_dist(poly, pn, x, y) > 1e-9)
                fail_msg("%s: lanelet %lld reported but not containing", label,
                         (long long)rl_map_lanelet_id(m, idx[q]));
        }
        json_object *v = NULL;
        if (json_object_object_get_ex(p, "depth", &v))
            near(w.distance, json_object_get_double(v), FACT_TOL, label);
        if (json_object_object_get_ex(p, "clearance", &v))
            near(-w.distance, json_object_get_double(v), FACT_TOL, label);
        if (json_object_object_get_ex(p, "of_lanelet", &v)) {
            size_t li;
            assert_int_equal(rl_map_lanelet_find(m, json_object_get_int64(v), &li), RL_OK);
            rl_map_frenet f;
            rl_map_lanelet_frenet(m, li, x, y, &f);
            near(f.dist_left, num(p, "dist_to_own_left_bound"), FACT_TOL, "distance to left bound");
            near(f.dist_right, num(p, "dist_to_own_right_bound"), FACT_TOL,
                 "distance to right bound");
            double dh = remainder(f.heading - num(p, "heading"), 2 * M_PI);
            if (fabs(dh) > 0.02)
                fail_msg("%s: heading %.6f, want %.6f", label, f.heading, num(p, "heading"));
            near(f.s / f.length, 0.5, 0.05, "lane centre at half length");
        }
    }
}

static size_t count_objects(const rl_map_source *src, const char *kind)
{
    size_t n = 0;
    for (size_t i = 0; i < src->num_objects; i++)
        n += strcmp(src->objects[i].kind, kind) == 0;
    return n;
}

static void check_subtypes(const rl_map_source *src, json_object *want)
{
    json_object_object_foreach(want, key, val)
    {
        size_t n = 0;
        for (size_t i = 0; i < src->num_lanelets; i++)
            n += src->lanelets[i].subtype && strcmp(src->lanelets[i].subtype, key) == 0;
        if (n != (size_t)json_object_get_int64(val))
            fail_msg("subtype %s: %zu lanelets, want %lld", key, n,
                     (long long)json_object_get_int64(val));
    }
}

static void check_osm_counts(const loaded *l, json_object *f)
{
    const rl_map_source *s = l->src;
    assert_int_equal(s->counts.nodes, num(f, "n_nodes"));
    assert_int_equal(s->counts.ways, num(f, "n_ways"));
    assert_int_equal(s->counts.relations, num(f, "n_relations"));
    json_object *del = get(f, "elements_with_action_delete");
    assert_int_equal(s->counts.deleted_nodes, num(del, "node"));
    assert_int_equal(s->counts.deleted_ways, num(del, "way"));
    assert_int_equal(s->counts.deleted_relations, num(del, "relation"));
    assert_int_equal(s->num_lanelets, num(f, "n_lanelets"));
    json_object_object_foreach(get(f, "relation_types"), key, val)
    {
        if (strcmp(key, "lanelet") != 0)
            assert_int_equal(count_objects(s, key), json_object_get_int64(val));
    }
    check_subtypes(s, get(f, "lanelet_subtypes"));
    size_t centre = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < s->num_lanelets; i++) {
        centre += s->lanelets[i].num_centre > 0;
        lo = s->lanelets[i].id < lo ? s->lanelets[i].id : lo;
        hi = s->lanelets[i].id > hi ? s->lanelets[i].id : hi;
    }
    assert_int_equal(centre, num(f, "n_lanelets_with_centerline"));
    json_object *range = get(f, "lanelet_id_range");
    assert_true(lo == json_object_get_int64(json_object_array_get_idx(range, 0)));
    assert_true(hi == json_object_get_int64(json_object_array_get_idx(range, 1)));
}

static void test_mapping_example(void **state)
{
    (void)state;
    RL_TEST_REQUIRE_SHARED(shared, "map facts (mapping_example.osm)");
    json_object *all = load_facts(shared, "mapping_example.json");
    static const struct {
        const char *key;
        rl_map_projection proj;
    } projs[] = {{"ltp", RL_MAP_PROJ_LTP}, {"smerc", RL_MAP_PROJ_SMERC}, {"utm", RL_MAP_PROJ_UTM}};
    json_object *ltp = get(all, "ltp");
    for (size_t k = 0; k < 3; k++) {
        json_object *f = get(all, projs[k].key);
        loaded l = load_map(shared, "mapping_example.osm", projs[k].proj, true);
        assert_int_equal(l.src->projection, projs[k].proj);
        check_osm_counts(&l, f);
        check_realigned(&l, f);
        check_geometry(&l, get(f, "geometry_aligned"), projs[k].key);
        for (size_t i = 0; i < l.src->num_warnings; i++) /* real lat/lon: lanes of metres */
            assert_null(strstr(l.src->warnings[i], "wider than"));
        /* Union facts are LTP only (raster 0.25 m; README: 19595 +- 5). */
        if (k == 0)
            check_info(&l, get(f, "geometry_aligned"), 19595, 6);
        if (k == 0)
            check_points(&l, get(ltp, "sample_points_ltp"), "mapping_example");
        /* Every sample point, given as lat/lon, has the same answer in each projection. */
        json_object *pts = get(ltp, "sample_points_ltp");
        for (size_t i = 0; i < json_object_array_length(pts); i++) {
            json_object *p = json_object_array_get_idx(pts, i), *ll = get(p, "latlon");
            rl_map_point q;
            assert_int_equal(
                rl_map_project(projs[k].proj, 49, 8.4,
                               json_object_get_double(json_object_array_get_idx(ll, 0)),
                               json_object_get_double(json_object_array_get_idx(ll, 1)), &q),
                RL_OK);
            const char *key = k == 0 ? "inside" : k == 1 ? "inside_smerc" : "inside_utm";
            assert_int_equal(rl_map_point_drivable(l.map, q.x, q.y),
                             json_object_get_boolean(get(p, key)));
        }
        unload(&l);
        /* Read as in the file (no re-orientation), the broken geometry of the facts. */
        l = load_map(shared, "mapping_example.osm", projs[k].proj, false);
        check_geometry(&l, get(f, "geometry_as_in_file"), "as in file");
        unload(&l);
    }
    /* The projections of two nodes, one with an id above 2^63 - 2^53. */
    json_object *ex = get(ltp, "node_projection_examples");
    for (size_t i = 0; i < json_object_array_length(ex); i++) {
        json_object *e = json_object_array_get_idx(ex, i);
        for (size_t k = 0; k < 3; k++) {
            rl_map_point q;
            assert_int_equal(
                rl_map_project(projs[k].proj, 49, 8.4, num(e, "lat"), num(e, "lon"), &q), RL_OK);
            json_object *want = get(e, projs[k].key);
            near(q.x, json_object_get_double(json_object_array_get_idx(want, 0)), FACT_TOL,
                 "projected x");
            near(q.y, json_object_get_double(json_object_array_get_idx(want, 1)), FACT_TOL,
                 "projected y");
        }
    }
    json_object_put(all);
}

static void test_lab_reduced(void **state)
{
    (void)state;
    RL_TEST_REQUIRE_SHARED(shared, "map facts (lab_reduced.osm)");
    json_object *f = load_facts(shared, "lab_reduced.json");
    loaded l = load_map(shared, "lab_reduced.osm", RL_MAP_PROJ_METRIC, true);
    check_osm_counts(&l, f);
    check_realigned(&l, f);
    check_geometry(&l, get(f, "geometry_aligned"), "lab_reduced");
    check_info(&l, get(f, "geometry_aligned"), 9.206, 0.003);
    check_points(&l, get(f, "landmark_points"), "lab_reduced landmark");
    check_points(&l, get(f, "grid_samples"), "lab_reduced grid");
    check_points(&l, get(f, "grid_samples_of_commonroad_map"), "lab_reduced (CommonRoad grid)");
    check_points(&l, get(f, "lane_centre_points"), "lab_reduced lane centre");
    unload(&l);
    l = load_map(shared, "lab_reduced.osm", RL_MAP_PROJ_METRIC, false);
    check_geometry(&l, get(f, "geometry_as_in_file"), "lab_reduced as in file");
    unload(&l);
    /* AUTO reads these metres as lat/lon near the default origin: a different frame. */
    l = load_map(shared, "lab_reduced.osm", RL_MAP_PROJ_AUTO, true);
    assert_int_equal(l.src->projection, RL_MAP_PROJ_LTP);
    /* Its 0.15 m lanes become 0.15 degree (km) wide ones: a warning names the file and
     * suggests the metric projection. */
    size_t wide = 0;
    for (size_t i = 0; i < l.src->num_warnings; i++)
        if (strstr(l.src->warnings[i], "wider than")) {
            wide++;
            assert_non_null(strstr(l.src->warnings[i], "lab_reduced.osm"));
            assert_non_null(strstr(l.src->warnings[i], "128 of 128 lanelets"));
            assert_non_null(strstr(l.src->warnings[i], "--projection metric"));
        }
    assert_int_equal(wide, 1);
    unload(&l);
    l = load_map(shared, "lab_reduced.osm", RL_MAP_PROJ_METRIC, true);
    for (size_t i = 0; i < l.src->num_warnings; i++)
        assert_null(strstr(l.src->warnings[i], "wider than"));
    unload(&l);
    json_object_put(f);
}

static void test_commonroad(void **state)
{
    (void)state;
    RL_TEST_REQUIRE_SHARED(shared, "map facts (LabMapCommonRoad.xml)");
    json_object *f = load_facts(shared, "LabMapCommonRoad.json");
    loaded l = load_map(shared, "LabMapCommonRoad.xml", RL_MAP_PROJ_AUTO, true);
    const rl_map_source *s = l.src;
    assert_int_equal(s->format, RL_MAP_FORMAT_COMMONROAD);
    assert_int_equal(s->num_lanelets, num(f, "n_lanelets"));
    assert_int_equal(s->counts.points, num(f, "n_points_total"));
    json_object *ec = get(f, "element_counts");
    size_t pred = 0, succ = 0, adjl = 0, adjr = 0;
    for (size_t i = 0; i < s->num_lanelets; i++) {
        pred += s->lanelets[i].num_predecessors;
        succ += s->lanelets[i].num_successors;
        adjl += s->lanelets[i].has_adjacent_left;
        adjr += s->lanelets[i].has_adjacent_right;
        assert_int_equal(s->lanelets[i].num_left, s->lanelets[i].num_right);
    }
    assert_int_equal(pred, num(ec, "predecessor"));
    assert_int_equal(succ, num(ec, "successor"));
    assert_int_equal(adjl, num(ec, "adjacentLeft"));
    assert_int_equal(adjr, num(ec, "adjacentRight"));
    rl_map_info in;
    rl_map_get_info(l.map, &in);
    assert_int_equal(in.successors_total, succ);
    json_object *root = get(f, "root_attributes");
    json_object_object_foreach(root, key, val)
    {
        bool found = false;
        for (size_t i = 0; i < s->num_meta; i++)
            found |= strcmp(s->meta_keys[i], key) == 0 &&
                     strcmp(s->meta_values[i], json_object_get_string(val)) == 0;
        if (!found)
            fail_msg("meta data %s='%s' missing", key, json_object_get_string(val));
    }
    json_object *g = get(f, "geometry");
    json_object *bbox = get(g, "bbox");
    near(in.xmin, num(bbox, "xmin"), FACT_TOL, "xmin");
    near(in.ymin, num(bbox, "ymin"), FACT_TOL, "ymin");
    near(in.xmax, num(bbox, "xmax"), FACT_TOL, "xmax");
    near(in.ymax, num(bbox, "ymax"), FACT_TOL, "ymax");
    near(in.area_sum, num(g, "area_sum_abs"), FACT_TOL * 10, "area sum");
    near(in.width_min, 0.15, FACT_TOL, "width min");
    near(in.width_max, 0.15, FACT_TOL, "width max");
    near(in.end_width_min, 0.15, FACT_TOL, "end width min");
    near(in.end_width_max, 0.15, FACT_TOL, "end width max");
    near(in.area_union, 9.216, 0.002, "union area");
    assert_int_equal(in.degenerate, 0);
    check_geometry(&l, g, "commonroad");
    check_points(&l, get(f, "landmark_points"), "commonroad landmark");
    check_points(&l, get(f, "grid_samples"), "commonroad grid");
    check_points(&l, get(f, "lane_centre_points"), "commonroad lane centre");

    /* Footprints: whole rectangle on the drivable area, and each corner's margin. */
    json_object *fc = get(f, "footprint_checks");
    for (size_t i = 0; i < json_object_array_length(fc); i++) {
        json_object *c = json_object_array_get_idx(fc, i), *pose = get(c, "pose");
        rl_map_box b = {json_object_get_double(json_object_array_get_idx(pose, 0)),
                        json_object_get_double(json_object_array_get_idx(pose, 1)),
                        json_object_get_double(json_object_array_get_idx(pose, 2)),
                        num(c, "length"), num(c, "width")};
        rl_map_point corners[4];
        rl_map_box_corners(&b, corners);
        json_object *ins = get(c, "corners_inside"), *mar = get(c, "corner_margins"),
                    *cw = get(c, "corners");
        for (int k = 0; k < 4; k++) {
            json_object *want = json_object_array_get_idx(cw, (size_t)k);
            near(corners[k].x, json_object_get_double(json_object_array_get_idx(want, 0)), 1e-5,
                 "corner x");
            near(corners[k].y, json_object_get_double(json_object_array_get_idx(want, 1)), 1e-5,
                 "corner y");
            rl_map_where w;
            rl_map_where_is(l.map, corners[k].x, corners[k].y, &w);
            assert_int_equal(w.inside,
                             json_object_get_boolean(json_object_array_get_idx(ins, (size_t)k)));
            near(fabs(w.distance),
                 json_object_get_double(json_object_array_get_idx(mar, (size_t)k)), 1e-5,
                 "corner margin");
        }
        bool all = json_object_get_boolean(get(c, "all_corners_inside"));
        if (rl_map_footprint_inside(l.map, &b, 0) != all ||
            rl_map_footprint_inside(l.map, &b, 0.001) != all)
            fail_msg("footprint '%s': inside should be %d", json_object_get_string(get(c, "label")),
                     all);
    }
    /* Vehicle pairs: overlap and distance by separating axes. */
    json_object *vp = get(f, "vehicle_pairs_0.22x0.107");
    for (size_t i = 0; i < json_object_array_length(vp); i++) {
        json_object *c = json_object_array_get_idx(vp, i), *pa = get(c, "pose_a"),
                    *pb = get(c, "pose_b");
        rl_map_box a = {json_object_get_double(json_object_array_get_idx(pa, 0)),
                        json_object_get_double(json_object_array_get_idx(pa, 1)),
                        json_object_get_double(json_object_array_get_idx(pa, 2)), 0.22, 0.107};
        rl_map_box b = {json_object_get_double(json_object_array_get_idx(pb, 0)),
                        json_object_get_double(json_object_array_get_idx(pb, 1)),
                        json_object_get_double(json_object_array_get_idx(pb, 2)), 0.22, 0.107};
        double d = rl_map_box_distance(&a, &b);
        near(d, num(c, "distance"), 2e-6, "vehicle pair distance");
        if (fabs(b.x - 1.22) < 1e-12 && b.y == 1.0)
            continue; /* the exact touch: the facts leave it to the tolerance */
        assert_int_equal(rl_map_box_overlap(&a, &b), json_object_get_boolean(get(c, "overlap")));
        assert_int_equal(rl_map_box_overlap(&b, &a), json_object_get_boolean(get(c, "overlap")));
    }
    unload(&l);
    json_object_put(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mapping_example),
        cmocka_unit_test(test_lab_reduced),
        cmocka_unit_test(test_commonroad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
