/* Benchmark of the map module: point-in-drivable-area and footprint-inside queries on the
 * CPM lab map (indexed, against testing every polygon in the same run, whose answers must
 * be the same: a mismatch is reported and makes the benchmark fail), compiling
 * Lanelet2's mapping_example.osm (against parsing its XML with expat alone), and opening
 * a runtime map (mmap + checks). One core; each figure the median of five runs, timed in
 * the thread's CPU time so that other processes on a shared machine do not count. */
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/map.h"
#include "bench_util.h"

#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    RUNS = 5,
    POINTS = 1 << 20,
    BOXES = 1 << 18,
    BRUTE_POINTS = 1 << 15,
    BRUTE_BOXES = 2000,
    WHERE_POINTS = 1 << 16
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double unit(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
}

/* The map files: RUNLAB_SHARED, else ../shared beside the source tree (the bench runs in
 * the build directory); the lab map also from the repository's data/maps. */
static const char *find(const char *const *candidates, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (candidates[i] && access(candidates[i], R_OK) == 0)
            return candidates[i];
    return NULL;
}

static volatile size_t sink;
static size_t mismatches; /* indexed answers differing from brute force's */

static void mismatch(const char *what, size_t i, bool indexed, bool brute)
{
    if (mismatches++ < 10)
        printf("bench_map: MISMATCH: %s %zu: indexed %d, brute force %d\n", what, i, indexed,
               brute);
}

static void bench_points(const rl_map *m)
{
    rl_map_info in;
    rl_map_get_info(m, &in);
    double *xy = malloc(2 * POINTS * sizeof *xy);
    for (size_t i = 0; i < POINTS; i++) {
        xy[2 * i] = in.xmin + unit() * (in.xmax - in.xmin);
        xy[2 * i + 1] = in.ymin + unit() * (in.ymax - in.ymin);
    }
    double idx_rate[RUNS], brute_rate[RUNS];
    size_t inside = 0;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_s();
        size_t n = 0;
        for (size_t i = 0; i < POINTS; i++)
            n += rl_map_point_drivable(m, xy[2 * i], xy[2 * i + 1]);
        double t1 = now_s();
        size_t nb = 0;
        for (size_t i = 0; i < BRUTE_POINTS; i++)
            nb += rl_map_point_drivable_brute(m, xy[2 * i], xy[2 * i + 1]);
        double t2 = now_s();
        for (size_t i = 0; r == 0 && i < BRUTE_POINTS; i++) {
            bool a = rl_map_point_drivable(m, xy[2 * i], xy[2 * i + 1]);
            bool b = rl_map_point_drivable_brute(m, xy[2 * i], xy[2 * i + 1]);
            if (a != b)
                mismatch("point", i, a, b);
        }
        idx_rate[r] = POINTS / (t1 - t0);
        brute_rate[r] = BRUTE_POINTS / (t2 - t1);
        inside = n;
        sink += n + nb;
    }
    double a = bench_median(idx_rate, RUNS), b = bench_median(brute_rate, RUNS);
    printf("map points: %d uniform in the CPM lab map's bbox, %.0f%% on lanelets\n", POINTS,
           100.0 * (double)inside / POINTS);
    printf("map point-in-drivable (indexed): %.1f M queries/s (median of %d)\n", a / 1e6, RUNS);
    printf("map point-in-drivable (brute force, every polygon): %.2f M queries/s\n", b / 1e6);
    printf("map point-in-drivable indexed / brute force: %.0fx\n", a / b);
    /* Signed distance (the evaluation may ask it per state): the same points. */
    double where_us[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_s(), sum = 0;
        for (size_t i = 0; i < WHERE_POINTS; i++) {
            rl_map_where w;
            rl_map_where_is(m, xy[2 * i], xy[2 * i + 1], &w);
            sum += w.distance;
        }
        where_us[r] = (now_s() - t0) / WHERE_POINTS * 1e6;
        sink += (size_t)(sum != 0);
    }
    printf("map where_is (signed distance, the same uniform points): %.2f us per call (median of "
           "%d)\n",
           bench_median(where_us, RUNS), RUNS);
    free(xy);
}

/* Footprints of the lab's cars (0.22 x 0.107 m) at poses along the lanes: a random point
 * of a random lanelet's centre line, heading along it, shifted up to 3 cm sideways and
 * turned up to 0.2 rad (the evaluation's workload); on the centre lines exactly; and at
 * uniform random poses. */
static void bench_footprints(const rl_map *m)
{
    rl_map_info in;
    rl_map_get_info(m, &in);
    rl_map_box *lane = malloc(BOXES * sizeof *lane), *any = malloc(BOXES * sizeof *any);
    rl_map_box *centred = malloc(BOXES * sizeof *centred);
    size_t nl = rl_map_lanelet_count(m);
    for (size_t i = 0; i < BOXES; i++) {
        const rl_map_point *c;
        size_t k = rl_map_lanelet_line(m, (size_t)(unit() * nl) % nl, RL_MAP_CENTRE, &c);
        size_t s = k > 1 ? (size_t)(unit() * (k - 1)) % (k - 1) : 0;
        rl_map_point a = c[s], b = c[s + (k > 1)];
        double u = unit(), yaw = atan2(b.y - a.y, b.x - a.x), off = (unit() - 0.5) * 0.06;
        lane[i] = (rl_map_box){a.x + u * (b.x - a.x) - off * sin(yaw),
                               a.y + u * (b.y - a.y) + off * cos(yaw), yaw + (unit() - 0.5) * 0.4,
                               0.22, 0.107};
        centred[i] = (rl_map_box){a.x + u * (b.x - a.x), a.y + u * (b.y - a.y), yaw, 0.22, 0.107};
        any[i] = (rl_map_box){in.xmin + unit() * (in.xmax - in.xmin),
                              in.ymin + unit() * (in.ymax - in.ymin), unit() * 6.283, 0.22, 0.107};
    }
    const struct {
        const char *name;
        rl_map_box *boxes;
        double tol;
    } sets[5] = {{"poses on lane centre lines, gap tolerance 1 mm", centred, 0.001},
                 {"poses along lanes, gap tolerance 1 um", lane, 1e-6},
                 {"poses along lanes, gap tolerance 0", lane, 0},
                 {"poses along lanes, gap tolerance 1 mm", lane, 0.001},
                 {"uniform random poses, gap tolerance 1 um", any, 1e-6}};
    for (int s = 0; s < 5; s++) {
        double rate[RUNS];
        size_t yes = 0;
        for (int r = 0; r < RUNS; r++) {
            double t0 = now_s();
            size_t n = 0;
            for (size_t i = 0; i < BOXES; i++)
                n += rl_map_footprint_inside(m, &sets[s].boxes[i], sets[s].tol);
            rate[r] = BOXES / (now_s() - t0);
            yes = n;
        }
        printf("map footprint-inside, %s (%.0f%% inside): %.2f M queries/s (median of %d)\n",
               sets[s].name, 100.0 * yes / BOXES, bench_median(rate, RUNS) / 1e6, RUNS);
    }
    /* Baseline: the first footprints along lanes and uniform ones, tolerance 0, by brute
     * force (each edge split where it crosses any lanelet edge, every piece tested against
     * every polygon); each answer must be the indexed one. */
    double rate[RUNS], fast_rate[RUNS];
    size_t agree = 0;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_s();
        size_t n = 0;
        for (size_t i = 0; i < BRUTE_BOXES; i++)
            n += rl_map_footprint_inside_brute(m, i % 2 ? &any[i] : &lane[i]);
        double t1 = now_s();
        for (size_t i = 0; i < BRUTE_BOXES; i++)
            n += rl_map_footprint_inside(m, i % 2 ? &any[i] : &lane[i], 0);
        rate[r] = BRUTE_BOXES / (t1 - t0);
        fast_rate[r] = BRUTE_BOXES / (now_s() - t1);
        sink += n;
    }
    for (size_t i = 0; i < BRUTE_BOXES; i++) {
        const rl_map_box *b = i % 2 ? &any[i] : &lane[i];
        bool x = rl_map_footprint_inside(m, b, 0), y = rl_map_footprint_inside_brute(m, b);
        agree += x == y;
        if (x != y)
            mismatch("footprint", i, x, y);
    }
    double a = bench_median(fast_rate, RUNS), bb = bench_median(rate, RUNS);
    printf("map footprint-inside brute force (every lanelet edge; %d poses, half along lanes, "
           "half uniform, tolerance 0): %.4f M queries/s; indexed on the same: %.2f M/s (%.0fx); "
           "answers equal: %zu of %d\n",
           BRUTE_BOXES, bb / 1e6, a / 1e6, a / bb, agree, BRUTE_BOXES);
    free(lane);
    free(centred);
    free(any);
}

static void bench_compile(const char *osm)
{
    char *data;
    size_t len;
    if (rl_fs_read_all(osm, 1u << 30, &data, &len) < 0) {
        fprintf(stderr, "bench_map: %s\n", rl_error_last());
        return;
    }
    double parse[RUNS], compile[RUNS];
    size_t bytes = 0;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_s();
        XML_Parser p = XML_ParserCreate(NULL);
        XML_Parse(p, data, (int)len, 1);
        XML_ParserFree(p);
        double t1 = now_s();
        rl_map_read_options o;
        rl_map_read_options_init(&o);
        o.quiet = true;
        rl_map_source *src = NULL;
        void *out = NULL;
        if (rl_lanelet2_read_mem(data, len, osm, &o, &src) < 0 ||
            rl_map_compile(src, NULL, &out, &bytes) < 0) {
            fprintf(stderr, "bench_map: %s\n", rl_error_last());
            exit(1);
        }
        double t2 = now_s();
        parse[r] = t1 - t0;
        compile[r] = t2 - t1;
        rl_map_source_free(src);
        free(out);
    }
    double a = bench_median(parse, RUNS), b = bench_median(compile, RUNS);
    printf("map compile mapping_example.osm (%zu KB -> %zu KB): %.1f ms (median of %d)\n",
           len >> 10, bytes >> 10, b * 1e3, RUNS);
    printf("map expat parse alone of the same file: %.1f ms; compile / parse: %.1fx\n", a * 1e3,
           b / a);
    free(data);
}

static void bench_open(const char *xml)
{
    rl_map_source *src = NULL;
    void *bytes = NULL;
    size_t len = 0;
    char dir[4096], path[4200];
    if (rl_map_source_read_file(xml, NULL, &src) < 0 ||
        rl_map_compile(src, NULL, &bytes, &len) < 0 ||
        rl_fs_mkdtemp("bench_map", dir, sizeof dir) < 0) {
        fprintf(stderr, "bench_map: %s\n", rl_error_last());
        exit(1);
    }
    snprintf(path, sizeof path, "%s/runtime_map.bin", dir);
    rl_fs_write_atomic(path, bytes, len, 0644);
    double t[RUNS * 20];
    for (int r = 0; r < RUNS * 20; r++) {
        double t0 = now_s();
        rl_map *m;
        if (rl_map_open_file(path, &m) < 0) {
            fprintf(stderr, "bench_map: %s\n", rl_error_last());
            exit(1);
        }
        sink += rl_map_lanelet_count(m);
        rl_map_close(m);
        t[r] = now_s() - t0;
    }
    printf("map open runtime map (CPM lab, %zu KB, mmap + CRC + checks): %.3f ms (median of %d)\n",
           len >> 10, bench_median(t, RUNS * 20) * 1e3, RUNS * 20);
    rl_fs_remove_tree(dir);
    rl_map_source_free(src);
    free(bytes);
}

int main(void)
{
    const char *env = getenv("RUNLAB_SHARED");
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s/maps/LabMapCommonRoad.xml", env ? env : "../../shared");
    snprintf(b, sizeof b, "%s/maps/mapping_example.osm", env ? env : "../../shared");
    const char *lab_candidates[] = {"../data/maps/LabMapCommonRoad.xml", a};
    const char *lab = find(lab_candidates, 2);
    const char *osm = find((const char *const[]){b}, 1);
    if (!lab) {
        printf("map benchmarks: skipped (no LabMapCommonRoad.xml in data/maps or ../shared)\n");
        return 0;
    }
    rl_map *m;
    if (rl_map_load(lab, NULL, &m, NULL) < 0) {
        fprintf(stderr, "bench_map: %s\n", rl_error_last());
        return 1;
    }
    bench_points(m);
    bench_footprints(m);
    rl_map_close(m);
    bench_open(lab);
    if (osm)
        bench_compile(osm);
    else
        printf("map compile benchmark: skipped (no ../shared/maps/mapping_example.osm)\n");
    if (mismatches) {
        printf("bench_map: FAILED: %zu indexed answers differ from brute force's\n", mismatches);
        return 1;
    }
    return 0;
}
