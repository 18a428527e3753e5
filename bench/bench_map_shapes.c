/* Benchmark of map compile time against one lanelet's vertex count (issue 29 item 3):
 * collinear, bow-tie and zig-zag lanelets at n and 4n points per bound, t(4n)/t(n) beside a
 * baseline of the same vertices in lanelets of 20 from the same run (n log n ~4.7, quadratic
 * 16); thread CPU time, median of three. */
#include "runlab/error.h"
#include "runlab/map.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RUNS = 3, N = 2000 };

typedef enum { COLLINEAR, BOWTIE, ZIGZAG, SHORT_LANELETS } shape;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Bound point i of n for the shape; left (side 0) or right (side 1). */
static rl_map_point shape_point(shape s, int side, size_t i, size_t n)
{
    switch (s) {
    case COLLINEAR: return (rl_map_point){(double)i * 0.01, side ? 0.0 : 3.0};
    case BOWTIE: {
        double f = n > 1 ? (double)i / (double)(n - 1) : 0;
        return (rl_map_point){(double)i, side ? 3.0 * f : 3.0 - 3.0 * f};
    }
    case ZIGZAG: return (rl_map_point){(double)i + (side ? 0.5 : 0.0), i % 2 ? 1000.0 : 0.0};
    default: return (rl_map_point){(double)i, side ? 0.0 : 3.0};
    }
}

/* A source of `lanelets` lanelets of `per_bound` points per bound; short lanelets are laid
 * side by side in rows. NULL when out of memory. */
static rl_map_source *make_source(shape s, size_t lanelets, size_t per_bound)
{
    rl_map_source *src = calloc(1, sizeof *src);
    if (!src || !(src->lanelets = calloc(lanelets, sizeof *src->lanelets)))
        return free(src), NULL;
    src->format = RL_MAP_FORMAT_COMMONROAD;
    src->projection = RL_MAP_PROJ_NONE;
    src->num_lanelets = lanelets;
    for (size_t k = 0; k < lanelets; k++) {
        rl_map_source_lanelet *ll = &src->lanelets[k];
        ll->id = (int64_t)k + 1;
        ll->one_way = -1;
        ll->speed_limit = NAN;
        ll->left = malloc(per_bound * sizeof *ll->left);
        ll->right = malloc(per_bound * sizeof *ll->right);
        if (!ll->left || !ll->right)
            return NULL; /* a benchmark: the process ends */
        ll->num_left = ll->num_right = per_bound;
        double dx = (double)(k % 100) * (double)per_bound, dy = (double)(k / 100) * 4.0;
        for (size_t i = 0; i < per_bound; i++) {
            rl_map_point l = shape_point(s, 0, i, per_bound), r = shape_point(s, 1, i, per_bound);
            ll->left[i] = (rl_map_point){l.x + dx, l.y + dy};
            ll->right[i] = (rl_map_point){r.x + dx, r.y + dy};
        }
    }
    return src;
}

static void free_source(rl_map_source *src)
{
    for (size_t k = 0; k < src->num_lanelets; k++) {
        free(src->lanelets[k].left);
        free(src->lanelets[k].right);
    }
    free(src->lanelets);
    free(src);
}

/* Median compile time in seconds; negative on failure. */
static double time_compile(shape s, size_t lanelets, size_t per_bound)
{
    rl_map_source *src = make_source(s, lanelets, per_bound);
    if (!src)
        return -1;
    double t[RUNS];
    for (int r = 0; r < RUNS; r++) {
        void *bytes = NULL;
        size_t len = 0;
        double t0 = now_s();
        int rc = rl_map_compile(src, NULL, &bytes, &len);
        t[r] = now_s() - t0;
        free(bytes);
        if (rc < 0) {
            fprintf(stderr, "bench_map_shapes: %s\n", rl_error_last());
            free_source(src);
            return -1;
        }
    }
    free_source(src);
    qsort(t, RUNS, sizeof *t, cmp_double);
    return t[RUNS / 2];
}

int main(void)
{
    static const char *const names[] = {"collinear", "bow tie (bounds cross once)",
                                        "zig-zag (bounds cross 4n times)"};
    int failed = 0;
    /* Baseline: 2 x 4N vertices as lanelets of 20 points per bound, as a real map. */
    double base = time_compile(SHORT_LANELETS, 4 * N / 20, 20);
    if (base < 0)
        return 1;
    printf("map compile baseline: %d lanelets of 20 points per bound: %.1f ms (median of %d)\n",
           4 * N / 20, base * 1e3, RUNS);
    for (shape s = COLLINEAR; s <= ZIGZAG; s++) {
        double a = time_compile(s, 1, N), b = time_compile(s, 1, 4 * N);
        if (a < 0 || b < 0)
            return 1;
        double growth = b / a;
        printf("map compile one %s lanelet: %d points per bound %.1f ms, %d points %.1f ms: "
               "t(4n)/t(n) %.1f (n log n ~4.7, quadratic 16); %.1fx the baseline\n",
               names[s], N, a * 1e3, 4 * N, b * 1e3, growth, b / base);
        if (growth > 8) {
            printf("bench_map_shapes: FAILED: %s grows faster than n log n\n", names[s]);
            failed = 1;
        }
    }
    return failed;
}
