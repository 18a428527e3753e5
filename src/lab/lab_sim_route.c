/* The simulator's routes: closed loops along lanelet centre lines, found by always taking
 * the rightmost successor in the routing graph (on the CPM lab map: one loop around each of
 * the four blocks, right turns only), kept when they stay clear of each other and of
 * themselves; an open route when the graph has no such loop; or the spec's waypoints. */
#include "lab/lab_sim.h"

#include "runlab/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LOOP_CLEARANCE 0.3 /* m between the centre lines of two loops, and within one */
#define MIN_LOOP_LENGTH 2.0

void sim_path_free(sim_path *p)
{
    free(p->xy);
    free(p->s);
    memset(p, 0, sizeof *p);
}

void sim_routes_free(sim_routes *r)
{
    for (size_t i = 0; i < r->count; i++)
        sim_path_free(&r->paths[i]);
    free(r->paths);
    r->paths = NULL;
    r->count = 0;
}

/* Arc lengths and centroid; drops repeated points. RL_EINVAL below 2 distinct points. */
static int path_finish(sim_path *p)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (k && hypot(p->xy[2 * i] - p->xy[2 * k - 2], p->xy[2 * i + 1] - p->xy[2 * k - 1]) < 1e-6)
            continue;
        p->xy[2 * k] = p->xy[2 * i];
        p->xy[2 * k + 1] = p->xy[2 * i + 1];
        k++;
    }
    if (p->closed && k > 1 && hypot(p->xy[0] - p->xy[2 * k - 2], p->xy[1] - p->xy[2 * k - 1]) < 1e-6)
        k--;
    p->n = k;
    if (k < 2)
        return rl_error_set(RL_EINVAL, "sim: a route needs at least 2 distinct points");
    p->s = malloc(k * sizeof *p->s);
    if (!p->s)
        return rl_error_set(RL_ENOMEM, "out of memory");
    p->s[0] = 0;
    p->cx = p->xy[0] / (double)k;
    p->cy = p->xy[1] / (double)k;
    for (size_t i = 1; i < k; i++) {
        p->s[i] = p->s[i - 1] + hypot(p->xy[2 * i] - p->xy[2 * i - 2], p->xy[2 * i + 1] - p->xy[2 * i - 1]);
        p->cx += p->xy[2 * i] / (double)k;
        p->cy += p->xy[2 * i + 1] / (double)k;
    }
    p->length = p->s[k - 1];
    if (p->closed)
        p->length += hypot(p->xy[0] - p->xy[2 * k - 2], p->xy[1] - p->xy[2 * k - 1]);
    return RL_OK;
}

/* Unit direction at vertex i: through its neighbours (ends of open paths: their segment). */
static void vertex_tangent(const sim_path *p, size_t i, double *tx, double *ty)
{
    size_t a = i, b = i;
    if (p->closed) {
        a = (i + p->n - 1) % p->n;
        b = (i + 1) % p->n;
    } else {
        a = i ? i - 1 : 0;
        b = i + 1 < p->n ? i + 1 : i;
    }
    double dx = p->xy[2 * b] - p->xy[2 * a], dy = p->xy[2 * b + 1] - p->xy[2 * a + 1];
    double len = hypot(dx, dy);
    *tx = len > 0 ? dx / len : 1;
    *ty = len > 0 ? dy / len : 0;
}

void sim_path_at(const sim_path *p, double s, double *x, double *y, double *tx, double *ty)
{
    if (p->closed) {
        s = fmod(s, p->length);
        if (s < 0)
            s += p->length;
    } else {
        s = s < 0 ? 0 : s > p->length ? p->length : s;
    }
    /* The segment [i, i+1] holding s (the closing one for i = n-1). */
    size_t lo = 0, hi = p->n - 1;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (p->s[mid] <= s)
            lo = mid;
        else
            hi = mid - 1;
    }
    size_t i = lo, j = (i + 1) % p->n;
    if (!p->closed && i == p->n - 1) {
        i = p->n - 2;
        j = p->n - 1;
    }
    double seg = (j == 0 ? p->length : p->s[j]) - p->s[i];
    double f = seg > 0 ? (s - p->s[i]) / seg : 0;
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    *x = p->xy[2 * i] + f * (p->xy[2 * j] - p->xy[2 * i]);
    *y = p->xy[2 * i + 1] + f * (p->xy[2 * j + 1] - p->xy[2 * i + 1]);
    double ax, ay, bx, by;
    vertex_tangent(p, i, &ax, &ay);
    vertex_tangent(p, j, &bx, &by);
    double dx = ax + f * (bx - ax), dy = ay + f * (by - ay), len = hypot(dx, dy);
    *tx = len > 0 ? dx / len : ax;
    *ty = len > 0 ? dy / len : ay;
}

double sim_path_nearest(const sim_path *p, double x, double y)
{
    double best = INFINITY, best_s = 0;
    size_t segs = p->closed ? p->n : p->n - 1;
    for (size_t i = 0; i < segs; i++) {
        size_t j = (i + 1) % p->n;
        double ax = p->xy[2 * i], ay = p->xy[2 * i + 1];
        double dx = p->xy[2 * j] - ax, dy = p->xy[2 * j + 1] - ay, l2 = dx * dx + dy * dy;
        double f = l2 > 0 ? ((x - ax) * dx + (y - ay) * dy) / l2 : 0;
        f = f < 0 ? 0 : f > 1 ? 1 : f;
        double d = hypot(ax + f * dx - x, ay + f * dy - y);
        if (d < best) {
            best = d;
            best_s = p->s[i] + f * sqrt(l2);
        }
    }
    return best_s;
}

int sim_routes_from_waypoints(const double *xy, size_t n, sim_routes *out)
{
    memset(out, 0, sizeof *out);
    out->paths = calloc(1, sizeof *out->paths);
    sim_path *p = out->paths;
    if (!p || !(p->xy = malloc(2 * n * sizeof *p->xy))) {
        sim_routes_free(out);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    out->count = 1;
    memcpy(p->xy, xy, 2 * n * sizeof *xy);
    p->n = n;
    p->closed = 1;
    int rc = path_finish(p);
    if (rc < 0)
        sim_routes_free(out);
    return rc;
}

/* ---- loops in the routing graph -------------------------------------------------------- */

/* The successor of lanelet `idx` that turns furthest to the right, measured by the
 * direction from its start to its end against the end direction of `idx`; -1 when none. */
static long rightmost_successor(const rl_map *map, size_t idx)
{
    const uint32_t *succ = NULL;
    size_t ns = rl_map_successors(map, idx, &succ);
    const rl_map_point *c = NULL;
    size_t nc = rl_map_lanelet_line(map, idx, RL_MAP_CENTRE, &c);
    if (!ns || nc < 2)
        return -1;
    double heading = atan2(c[nc - 1].y - c[nc - 2].y, c[nc - 1].x - c[nc - 2].x);
    long best = -1;
    double best_turn = INFINITY;
    for (size_t k = 0; k < ns; k++) {
        const rl_map_point *q = NULL;
        size_t nq = rl_map_lanelet_line(map, succ[k], RL_MAP_CENTRE, &q);
        if (nq < 2)
            continue;
        double turn = remainder(atan2(q[nq - 1].y - q[0].y, q[nq - 1].x - q[0].x) - heading, 2 * M_PI);
        if (turn < best_turn - 1e-9 || (fabs(turn - best_turn) <= 1e-9 && (long)succ[k] < best)) {
            best_turn = turn;
            best = (long)succ[k];
        }
    }
    return best;
}

/* The centre lines of `seq` (lanelet indices) joined into one path. */
static int path_of_lanelets(const rl_map *map, const size_t *seq, size_t n, int closed,
                            sim_path *p)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const rl_map_point *c = NULL;
        total += rl_map_lanelet_line(map, seq[i], RL_MAP_CENTRE, &c);
    }
    memset(p, 0, sizeof *p);
    p->xy = malloc((total ? total : 1) * 2 * sizeof *p->xy);
    if (!p->xy)
        return rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const rl_map_point *c = NULL;
        size_t nc = rl_map_lanelet_line(map, seq[i], RL_MAP_CENTRE, &c);
        for (size_t k = 0; k < nc; k++) {
            p->xy[2 * p->n] = c[k].x;
            p->xy[2 * p->n + 1] = c[k].y;
            p->n++;
        }
    }
    p->closed = closed;
    return path_finish(p);
}

/* Smallest distance between points of a and b; within one path (a == b), only between
 * points more than 3 * LOOP_CLEARANCE apart along it. */
static double path_clearance(const sim_path *a, const sim_path *b)
{
    double best = INFINITY;
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < b->n; j++) {
            if (a == b) {
                double ds = fabs(a->s[i] - a->s[j]);
                if (fmin(ds, a->length - ds) < 3 * LOOP_CLEARANCE)
                    continue;
            }
            best = fmin(best, hypot(a->xy[2 * i] - b->xy[2 * j], a->xy[2 * i + 1] - b->xy[2 * j + 1]));
        }
    return best;
}

static int add_path(sim_routes *r, sim_path *p)
{
    sim_path *grown = realloc(r->paths, (r->count + 1) * sizeof *grown);
    if (!grown) {
        sim_path_free(p);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    r->paths = grown;
    r->paths[r->count++] = *p;
    return RL_OK;
}

int sim_routes_from_map(const rl_map *map, sim_routes *out)
{
    memset(out, 0, sizeof *out);
    size_t n = rl_map_lanelet_count(map);
    size_t *walk = malloc((n ? n : 1) * sizeof *walk), *seen_at = malloc((n ? n : 1) * sizeof *seen_at);
    if (!walk || !seen_at) {
        free(walk);
        free(seen_at);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    int rc = RL_OK;
    sim_path open_best = {0};
    for (size_t start = 0; rc == RL_OK && start < n; start++) {
        /* Walk rightmost successors until a lanelet repeats or the graph ends. */
        for (size_t i = 0; i < n; i++)
            seen_at[i] = SIZE_MAX;
        size_t len = 0;
        long cur = (long)start;
        while (cur >= 0 && seen_at[cur] == SIZE_MAX) {
            seen_at[cur] = len;
            walk[len++] = (size_t)cur;
            cur = rightmost_successor(map, (size_t)cur);
        }
        sim_path p;
        if (cur < 0) { /* a dead end: a candidate open route */
            if (path_of_lanelets(map, walk, len, 0, &p) == RL_OK && p.length > open_best.length) {
                sim_path_free(&open_best);
                open_best = p;
            } else {
                sim_path_free(&p);
            }
            continue;
        }
        /* Each loop once: from its smallest lanelet index, when the walk began on it. */
        size_t first = seen_at[cur], lowest = first;
        for (size_t i = first; i < len; i++)
            if (walk[i] < walk[lowest])
                lowest = i;
        if (first != 0 || walk[lowest] != start)
            continue;
        size_t *cyc = walk + first;
        rc = path_of_lanelets(map, cyc, len - first, 1, &p);
        if (rc < 0)
            break;
        int keep = p.length >= MIN_LOOP_LENGTH && path_clearance(&p, &p) >= LOOP_CLEARANCE;
        for (size_t k = 0; keep && k < out->count; k++)
            keep = path_clearance(&p, &out->paths[k]) >= LOOP_CLEARANCE;
        if (keep)
            rc = add_path(out, &p);
        else
            sim_path_free(&p);
    }
    free(walk);
    free(seen_at);
    if (rc == RL_OK && out->count == 0 && open_best.n >= 2) {
        rc = add_path(out, &open_best);
        open_best.xy = NULL;
        open_best.s = NULL;
    }
    sim_path_free(&open_best);
    if (rc == RL_OK && out->count == 0)
        rc = rl_error_set(RL_ENOENT, "sim: the map has no route along lanelet centre lines");
    if (rc < 0)
        sim_routes_free(out);
    return rc;
}
