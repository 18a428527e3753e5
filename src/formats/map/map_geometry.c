/* Geometry on an open runtime map: which lanelets hold a point (grid lookup; cells lying
 * wholly inside a lanelet answer without a polygon test), signed distance to the drivable
 * area (ring search over the grid), arc-length coordinates along a lanelet, footprints
 * inside the union of lanelets, and oriented rectangles against each other. */
#include "map_internal.h"

#include <stdlib.h>
#include <string.h>

#define BOUNDARY_EPS 1e-9 /* metres: a point this close to an edge is on it */

/* fmin and fmax for numbers that are never NaN, inline (the library's are calls): the same
 * results as glibc's on x86-64, which also give y when x == y. */
static inline double min_of(double x, double y)
{
    return x < y ? x : y;
}

static inline double max_of(double x, double y)
{
    return x > y ? x : y;
}

/* The cell holding (x, y); false outside the grid. A point within the boundary tolerance
 * outside the grid belongs to the border cell (it may lie on a lanelet's edge there). */
static bool grid_cell(const rl_map *m, double x, double y, uint32_t *ix, uint32_t *iy)
{
    const rlmap_header *h = m->h;
    double u = (x - h->grid_x0) / h->cell, v = (y - h->grid_y0) / h->cell;
    double eps = BOUNDARY_EPS / h->cell;
    if (!(u >= -eps && u < h->nx + eps && v >= -eps && v < h->ny + eps))
        return false;
    *ix = u < 0 ? 0 : u >= h->nx ? h->nx - 1 : (uint32_t)u;
    *iy = v < 0 ? 0 : v >= h->ny ? h->ny - 1 : (uint32_t)v;
    return true;
}

bool rl_map_point_in_lanelet(const rl_map *map, size_t idx, double x, double y)
{
    const rlmap_lanelet *L = &map->lanelets[idx];
    if (!(x >= L->bbox[0] - BOUNDARY_EPS && x <= L->bbox[2] + BOUNDARY_EPS &&
          y >= L->bbox[1] - BOUNDARY_EPS && y <= L->bbox[3] + BOUNDARY_EPS))
        return false;
    const rl_map_point *p = map->points + L->poly_off;
    return rl_map_pip(p, L->poly_n, x, y) || rl_map_poly_dist(p, L->poly_n, x, y) <= BOUNDARY_EPS;
}

size_t rl_map_lanelets_at(const rl_map *map, double x, double y, uint32_t *out, size_t cap)
{
    uint32_t ix, iy;
    if (!grid_cell(map, x, y, &ix, &iy))
        return 0;
    size_t cell = (size_t)iy * map->h->nx + ix, n = 0;
    for (uint32_t k = map->cell_start[cell]; k < map->cell_start[cell + 1]; k++) {
        uint32_t e = map->entries[k], idx = e & ~RLMAP_ENTRY_FULL;
        if ((e & RLMAP_ENTRY_FULL) || rl_map_point_in_lanelet(map, idx, x, y)) {
            if (n < cap)
                out[n] = idx;
            n++;
        }
    }
    return n;
}

bool rl_map_point_drivable(const rl_map *map, double x, double y)
{
    uint32_t ix, iy;
    if (!grid_cell(map, x, y, &ix, &iy))
        return false;
    size_t cell = (size_t)iy * map->h->nx + ix;
    if (map->cell_flags[cell] & (RLMAP_CELL_COVERED | RLMAP_CELL_IN_UNION))
        return true;
    for (uint32_t k = map->cell_start[cell]; k < map->cell_start[cell + 1]; k++)
        if (rl_map_point_in_lanelet(map, map->entries[k] & ~RLMAP_ENTRY_FULL, x, y))
            return true;
    return false;
}

bool rl_map_point_drivable_brute(const rl_map *map, double x, double y)
{
    for (size_t i = 0; i < map->h->num_lanelets; i++)
        if (rl_map_point_in_lanelet(map, i, x, y))
            return true;
    return false;
}

static double lanelet_dist(const rl_map *map, size_t idx, double x, double y)
{
    const rlmap_lanelet *L = &map->lanelets[idx];
    return rl_map_poly_dist(map->points + L->poly_off, L->poly_n, x, y);
}

/* Lower bound of the distance from (x, y) to a lanelet: the distance to its bounding box. */
static double bbox_dist(const rlmap_lanelet *L, double x, double y)
{
    double dx = fmax(fmax(L->bbox[0] - x, x - L->bbox[2]), 0);
    double dy = fmax(fmax(L->bbox[1] - y, y - L->bbox[3]), 0);
    return sqrt(dx * dx + dy * dy);
}

enum { RING_MAX = 4, SEEN_WORDS = 256 };

typedef struct nearest_search {
    double x, y, best;
    long bi;
    uint64_t seen[SEEN_WORDS]; /* lanelets measured already (when they are few enough) */
    bool use_seen;
} nearest_search;

/* Measures lanelet idx unless done already or its bounding box is farther than the best. */
static void nearest_try(const rl_map *map, nearest_search *s, uint32_t idx)
{
    if (s->use_seen) {
        uint64_t bit = (uint64_t)1 << (idx & 63);
        if (s->seen[idx >> 6] & bit)
            return;
        s->seen[idx >> 6] |= bit;
    }
    /* The margin keeps a lanelet whose rounded box distance exceeds its distance. */
    if (bbox_dist(&map->lanelets[idx], s->x, s->y) - 1e-9 > s->best)
        return;
    double d = lanelet_dist(map, idx, s->x, s->y);
    if (d < s->best || (d == s->best && (long)idx < s->bi)) {
        s->best = d;
        s->bi = idx;
    }
}

/* Nearest lanelet to a point outside all of them (the smallest index among equally near
 * ones): rings of cells around the point's (clamped) cell while few, until no unvisited
 * cell can hold anything nearer; past RING_MAX rings every lanelet whose bounding box is
 * not farther than the best so far (a point far from the lanes would visit thousands of
 * cells, each listing the same few lanelets). */
static void nearest_outside(const rl_map *map, double x, double y, rl_map_where *out)
{
    const rlmap_header *h = map->h;
    double fx = floor((x - h->grid_x0) / h->cell), fy = floor((y - h->grid_y0) / h->cell);
    long cx = fx < 0 ? 0 : fx >= h->nx ? (long)h->nx - 1 : (long)fx;
    long cy = fy < 0 ? 0 : fy >= h->ny ? (long)h->ny - 1 : (long)fy;
    nearest_search s; /* not zero-initialised: only the words in use are cleared */
    s.x = x;
    s.y = y;
    s.best = INFINITY;
    s.bi = -1;
    s.use_seen = h->num_lanelets <= 64u * SEEN_WORDS;
    if (s.use_seen)
        memset(s.seen, 0, ((h->num_lanelets + 63) / 64) * sizeof s.seen[0]);
    bool done = false;
    for (long r = 0; r <= RING_MAX && !done; r++) {
        for (long yy = cy - r; yy <= cy + r; yy++) {
            if (yy < 0 || yy >= (long)h->ny)
                continue;
            bool edge_row = yy == cy - r || yy == cy + r;
            for (long xx = cx - r; xx <= cx + r; xx += edge_row ? 1 : 2 * r) {
                if (xx >= 0 && xx < (long)h->nx) {
                    size_t cell = (size_t)yy * h->nx + (size_t)xx;
                    for (uint32_t k = map->cell_start[cell]; k < map->cell_start[cell + 1]; k++)
                        nearest_try(map, &s, map->entries[k] & ~RLMAP_ENTRY_FULL);
                }
                if (r == 0)
                    break;
            }
        }
        bool whole =
            cx - r <= 0 && cy - r <= 0 && cx + r >= (long)h->nx - 1 && cy + r >= (long)h->ny - 1;
        done = s.best <= (double)r * h->cell || whole;
    }
    for (uint32_t i = 0; !done && i < h->num_lanelets; i++)
        nearest_try(map, &s, i);
    out->inside = false;
    out->nearest = s.bi;
    out->distance = s.bi < 0 ? -INFINITY : -s.best;
}

void rl_map_where_is(const rl_map *map, double x, double y, rl_map_where *out)
{
    out->inside = false;
    out->nearest = -1;
    out->distance = NAN;
    if (!isfinite(x) || !isfinite(y) || map->h->num_lanelets == 0)
        return;
    uint32_t ix, iy;
    if (grid_cell(map, x, y, &ix, &iy)) {
        size_t cell = (size_t)iy * map->h->nx + ix;
        double deepest = -1;
        for (uint32_t k = map->cell_start[cell]; k < map->cell_start[cell + 1]; k++) {
            uint32_t e = map->entries[k], idx = e & ~RLMAP_ENTRY_FULL;
            if (!(e & RLMAP_ENTRY_FULL) && !rl_map_point_in_lanelet(map, idx, x, y))
                continue;
            double d = lanelet_dist(map, idx, x, y);
            if (d > deepest) {
                deepest = d;
                out->nearest = idx;
            }
        }
        if (out->nearest >= 0) {
            out->inside = true;
            out->distance = deepest;
            return;
        }
    }
    nearest_outside(map, x, y, out);
}

/* Closest point of a polyline: distance, and the segment and parameter it lies on. */
static double polyline_closest(const rl_map_point *p, size_t n, double x, double y, size_t *seg,
                               double *t)
{
    double best = INFINITY;
    *seg = 0;
    *t = 0;
    if (n == 1)
        return hypot(x - p[0].x, y - p[0].y);
    for (size_t i = 0; i + 1 < n; i++) {
        double u, d = rl_map_seg_dist2(x, y, p[i], p[i + 1], &u);
        if (d < best) {
            best = d;
            *seg = i;
            *t = u;
        }
    }
    return sqrt(best);
}

void rl_map_lanelet_frenet(const rl_map *map, size_t idx, double x, double y, rl_map_frenet *out)
{
    const rlmap_lanelet *L = &map->lanelets[idx];
    const rl_map_point *c = map->points + L->centre_off;
    size_t seg, dummy_seg;
    double t, dummy_t;
    double d = polyline_closest(c, L->centre_n, x, y, &seg, &t);
    double s = 0;
    for (size_t i = 0; i < seg; i++)
        s += hypot(c[i + 1].x - c[i].x, c[i + 1].y - c[i].y);
    double dx = 0, dy = 0;
    if (L->centre_n > 1) {
        dx = c[seg + 1].x - c[seg].x;
        dy = c[seg + 1].y - c[seg].y;
        s += t * hypot(dx, dy);
    }
    out->s = s;
    out->length = L->length;
    out->heading = atan2(dy, dx);
    out->offset = rl_map_cross(dx, dy, x - c[seg].x, y - c[seg].y) < 0 ? -d : d;
    out->dist_left =
        polyline_closest(map->points + L->left_off, L->left_n, x, y, &dummy_seg, &dummy_t);
    out->dist_right =
        polyline_closest(map->points + L->right_off, L->right_n, x, y, &dummy_seg, &dummy_t);
}

void rl_map_box_corners(const rl_map_box *b, rl_map_point out[4])
{
    double c = cos(b->yaw), s = sin(b->yaw), hl = b->length / 2, hw = b->width / 2;
    out[0] = (rl_map_point){b->x + hl * c - hw * s, b->y + hl * s + hw * c};
    out[1] = (rl_map_point){b->x + hl * c + hw * s, b->y + hl * s - hw * c};
    out[2] = (rl_map_point){b->x - hl * c + hw * s, b->y - hl * s - hw * c};
    out[3] = (rl_map_point){b->x - hl * c - hw * s, b->y - hl * s + hw * c};
}

enum { MAX_CANDIDATES = 256 };
typedef struct candidates {
    uint32_t idx[MAX_CANDIDATES];
    size_t n;
    bool overflow;
} candidates;

/* The lanelets a cell lists (each once: the compiler writes one entry per lanelet and
 * cell), in the cell's order; false (and overflow set) past MAX_CANDIDATES. */
static bool collect_candidates(const rl_map *map, size_t cell, candidates *c)
{
    c->n = 0;
    c->overflow = false;
    for (uint32_t k = map->cell_start[cell]; k < map->cell_start[cell + 1]; k++) {
        if (c->n == MAX_CANDIDATES) {
            c->overflow = true;
            return false;
        }
        c->idx[c->n++] = map->entries[k] & ~RLMAP_ENTRY_FULL;
    }
    return true;
}

/* Sorts the few parameters of a segment (mostly 2 to 6): insertion sort, no calls. */
static void sort_params(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* rl_map_point_in_lanelet over the candidates: the even-odd tests of all first, the
 * distance to a boundary (1e-9 m counts as inside) only when none holds the point. */
static bool inside_candidates(const rl_map *map, const candidates *c, double x, double y)
{
    if (c->overflow)
        return rl_map_point_drivable(map, x, y);
    bool near[MAX_CANDIDATES];
    size_t nn = 0;
    for (size_t i = 0; i < c->n; i++) {
        const rlmap_lanelet *L = &map->lanelets[c->idx[i]];
        near[i] = x >= L->bbox[0] - BOUNDARY_EPS && x <= L->bbox[2] + BOUNDARY_EPS &&
                  y >= L->bbox[1] - BOUNDARY_EPS && y <= L->bbox[3] + BOUNDARY_EPS;
        if (near[i] && rl_map_pip(map->points + L->poly_off, L->poly_n, x, y))
            return true;
        nn += near[i];
    }
    for (size_t i = 0; nn > 0 && i < c->n; i++)
        if (near[i] && lanelet_dist(map, c->idx[i], x, y) <= BOUNDARY_EPS)
            return true;
    return false;
}

/* An outside stretch of an edge is a closed gap when all of it lies within tol/2 of the
 * drivable area. Walked in steps: from a point at clearance d <= 7/16 tol the next
 * tol/2 - d (at least tol/16) is within tol/2 for sure. So gaps narrower than 7/8 of the
 * tolerance always close and gaps wider than the tolerance never do. */
/* The lanelets are the candidates c, or those of boundary cell lc, whose listed edges give
 * each lanelet's distance when it is below the distance to the cell's border (the nearest
 * edge is listed then: the same value). r: the rectangle of the cell holding ab whose
 * lanelets c or lc are (all of them), or NULL. */
typedef struct local_cell local_cell;
static double local_dist(const rl_map *map, const local_cell *lc, size_t k, double x, double y);
static size_t local_count(const local_cell *lc);
static uint32_t local_index(const local_cell *lc, size_t k);

static bool gap_closed(const rl_map *map, const candidates *c, const local_cell *lc,
                       const double *r, rl_map_point a, rl_map_point b, double t0, double t1,
                       double tol)
{
    if (!(tol > 0))
        return false;
    double len = hypot(b.x - a.x, b.y - a.y), t = t0;
    if (!(len > 0))
        t1 = t0;
    size_t n = lc ? local_count(lc) : c && !c->overflow ? c->n : 0;
    for (int k = 0; k < 100000; k++) {
        double tt = fmin(t, t1);
        double x = a.x + tt * (b.x - a.x), y = a.y + tt * (b.y - a.y), d = INFINITY;
        double border = r ? fmin(fmin(x - r[0], r[2] - x), fmin(y - r[1], r[3] - y)) : 0;
        /* The distance to any one lanelet bounds the clearance; exact only when needed. */
        for (size_t i = 0; i < n && !(d <= tol * 7 / 16); i++) {
            double di = lc ? local_dist(map, lc, i, x, y) : INFINITY;
            if (!(di < border))
                di = lanelet_dist(map, lc ? local_index(lc, i) : c->idx[i], x, y);
            d = fmin(d, di);
        }
        /* In a cell (r), every lanelet it does not list lies beyond the cell's border: when
         * the border and the cell's lanelets are all farther than 7/16 tol (and than the
         * boundary tolerance, so the point is in none), so is the exact clearance below. */
        if (!(d <= tol * 7 / 16) && r && fmin(d, border) > fmax(tol * 7 / 16, 2 * BOUNDARY_EPS))
            return false;
        if (!(d <= tol * 7 / 16)) {
            rl_map_where w = {.inside = rl_map_point_drivable(map, x, y), .distance = 0};
            if (!w.inside)
                nearest_outside(map, x, y, &w);
            d = w.inside ? 0 : -w.distance;
        }
        if (!(d <= tol * 7 / 16))
            return false;
        if (tt >= t1)
            return true;
        t += (tol / 2 - d) / len;
    }
    return false;
}

/* Segment parameters, on the stack while few. */
typedef struct params {
    double *v;
    size_t n, cap;
    bool failed;
    double stack[128];
} params;

static void params_push(params *p, double t)
{
    if (p->n == p->cap) {
        size_t cap = p->cap * 2;
        double *g = p->v == p->stack ? malloc(cap * sizeof *g) : realloc(p->v, cap * sizeof *g);
        if (!g) {
            p->failed = true;
            return;
        }
        if (p->v == p->stack)
            memcpy(g, p->stack, p->n * sizeof *g);
        p->v = g;
        p->cap = cap;
    }
    p->v[p->n++] = t;
}

/* An empty list holding the segment's two ends, 0 and 1 (not zeroed: the stack array is
 * 1 KB). */
static void params_start(params *ts)
{
    ts->n = 0;
    ts->cap = 128;
    ts->failed = false;
    ts->v = ts->stack;
    params_push(ts, 0);
    params_push(ts, 1);
}

static void params_free(params *p)
{
    if (p->v != p->stack)
        free(p->v);
}

/* Parameters t in (lo, hi) where segment ab crosses an edge of the candidate lanelets. */
static void crossings(const rl_map *map, const candidates *c, rl_map_point a, rl_map_point b,
                      double lo, double hi, params *out)
{
    double dx = b.x - a.x, dy = b.y - a.y;
    double xlo = fmin(a.x, b.x), xhi = fmax(a.x, b.x), ylo = fmin(a.y, b.y), yhi = fmax(a.y, b.y);
    size_t ncand = c->overflow ? map->h->num_lanelets : c->n;
    for (size_t i = 0; i < ncand; i++) {
        const rlmap_lanelet *L = &map->lanelets[c->overflow ? i : c->idx[i]];
        if (L->bbox[2] < xlo || L->bbox[0] > xhi || L->bbox[3] < ylo || L->bbox[1] > yhi)
            continue; /* then every edge's box misses the segment's */
        const rl_map_point *p = map->points + L->poly_off;
        for (size_t e = 0, f = L->poly_n - 1; e < L->poly_n; f = e++) {
            if ((p[e].x < xlo && p[f].x < xlo) || (p[e].x > xhi && p[f].x > xhi) ||
                (p[e].y < ylo && p[f].y < ylo) || (p[e].y > yhi && p[f].y > yhi))
                continue; /* the edge's box misses the segment's */
            double ex = p[e].x - p[f].x, ey = p[e].y - p[f].y;
            double den = rl_map_cross(dx, dy, ex, ey);
            if (den == 0)
                continue;
            double t = rl_map_cross(p[f].x - a.x, p[f].y - a.y, ex, ey) / den;
            double u = rl_map_cross(p[f].x - a.x, p[f].y - a.y, dx, dy) / den;
            if (t > lo && t < hi && u >= 0 && u <= 1)
                params_push(out, t);
        }
    }
}

/* A point of a cell lies farther than 7/16 tol from every lanelet, so no gap closes
 * there: the lanelets touching the cell are farther, and any other is beyond the cell. */
static bool far_outside(const rl_map *map, const candidates *c, const double *r, double x, double y,
                        double tol)
{
    double d = fmin(fmin(x - r[0], r[2] - x), fmin(y - r[1], r[3] - y));
    for (size_t i = 0; i < c->n && d > tol * 7 / 16; i++)
        d = fmin(d, lanelet_dist(map, c->idx[i], x, y));
    return d > tol * 7 / 16;
}

/* Exact test of segment ab against the candidates: split where it crosses lanelet edges;
 * each piece is then wholly inside or wholly outside every lanelet, so its middle decides.
 * Outside pieces may be closed gaps (tol > 0). */
static bool segment_inside(const rl_map *map, const candidates *c, rl_map_point a, rl_map_point b,
                           double tol, const double *cell_rect)
{
    params ts;
    params_start(&ts);
    crossings(map, c, a, b, 0, 1, &ts);
    if (ts.failed) {
        params_free(&ts);
        return false;
    }
    sort_params(ts.v, ts.n);
    bool ok = true;
    for (size_t i = 0; i + 1 < ts.n && ok; i++) {
        if (ts.v[i + 1] <= ts.v[i])
            continue;
        double t = (ts.v[i] + ts.v[i + 1]) / 2;
        double x = a.x + t * (b.x - a.x), y = a.y + t * (b.y - a.y);
        if (inside_candidates(map, c, x, y))
            continue;
        if (!(tol > 0) || (cell_rect && !c->overflow && far_outside(map, c, cell_rect, x, y, tol)))
            ok = false;
        else
            ok = gap_closed(map, c, NULL, c->overflow ? NULL : cell_rect, a, b, ts.v[i],
                            ts.v[i + 1], tol);
    }
    params_free(&ts);
    return ok;
}

/* ---- The same exact tests in a boundary cell, from its local records (map_internal.h)
 * instead of whole polygons. For points of the cell they give the same answers: every
 * edge that a piece inside the cell can cross, or that lies within the boundary tolerance
 * of a point of the cell, is listed; the even-odd count of the others is the record's
 * parity; and an edge not listed lies farther from a point of the cell than the cell's
 * border does, so it never is the nearest where far_outside looks. */
struct local_cell {
    const uint32_t *entries; /* the cell's entries, one record each */
    const rlmap_local *rec;
    size_t n;
};

static size_t local_count(const local_cell *lc)
{
    return lc->n;
}

static uint32_t local_index(const local_cell *lc, size_t k)
{
    return lc->entries[k] & ~RLMAP_ENTRY_FULL;
}

/* The polygon point an edge (given by its end point) starts from. */
static inline uint32_t edge_from(const rlmap_lanelet *L, uint32_t e)
{
    return e == L->poly_off ? L->poly_off + L->poly_n - 1 : e - 1;
}

static inline const rlmap_lanelet *local_lanelet(const rl_map *map, const local_cell *lc, size_t k)
{
    return &map->lanelets[local_index(lc, k)];
}

/* rl_map_pip of record k's lanelet (the same arithmetic per edge). */
static bool local_pip(const rl_map *map, const local_cell *lc, size_t k, double x, double y)
{
    const rlmap_lanelet *L = local_lanelet(map, lc, k);
    const rlmap_local *r = &lc->rec[k];
    bool in = r->parity;
    for (uint32_t i = r->first_edge; i < r->first_edge + r->num_edges; i++) {
        uint32_t e = map->local_edges[i];
        rl_map_point pi = map->points[e], pj = map->points[edge_from(L, e)];
        if ((pi.y > y) != (pj.y > y)) {
            double xi = pj.x + (y - pj.y) * (pi.x - pj.x) / (pi.y - pj.y);
            if (x < xi)
                in = !in;
        }
    }
    return in;
}

/* Distance to record k's listed edges (lanelet_dist where it is below the distance to the
 * cell's border). */
static double local_dist(const rl_map *map, const local_cell *lc, size_t k, double x, double y)
{
    const rlmap_lanelet *L = local_lanelet(map, lc, k);
    const rlmap_local *r = &lc->rec[k];
    double best = INFINITY;
    for (uint32_t i = r->first_edge; i < r->first_edge + r->num_edges; i++) {
        uint32_t e = map->local_edges[i];
        double d = rl_map_seg_dist2(x, y, map->points[edge_from(L, e)], map->points[e], NULL);
        if (d < best)
            best = d;
    }
    return sqrt(best);
}

/* crossings over the listed edges, for the whole piece (t in (0, 1)). */
static void local_crossings(const rl_map *map, const local_cell *lc, rl_map_point a, rl_map_point b,
                            params *out)
{
    double dx = b.x - a.x, dy = b.y - a.y;
    double xlo = min_of(a.x, b.x), xhi = max_of(a.x, b.x);
    double ylo = min_of(a.y, b.y), yhi = max_of(a.y, b.y);
    for (size_t k = 0; k < lc->n; k++) {
        const rlmap_lanelet *L = local_lanelet(map, lc, k);
        const rlmap_local *r = &lc->rec[k];
        for (uint32_t i = r->first_edge; i < r->first_edge + r->num_edges; i++) {
            uint32_t e = map->local_edges[i];
            rl_map_point pe = map->points[e], pf = map->points[edge_from(L, e)];
            if ((pe.x < xlo && pf.x < xlo) || (pe.x > xhi && pf.x > xhi) ||
                (pe.y < ylo && pf.y < ylo) || (pe.y > yhi && pf.y > yhi))
                continue;
            double ex = pe.x - pf.x, ey = pe.y - pf.y;
            double den = rl_map_cross(dx, dy, ex, ey);
            if (den == 0)
                continue;
            double t = rl_map_cross(pf.x - a.x, pf.y - a.y, ex, ey) / den;
            double u = rl_map_cross(pf.x - a.x, pf.y - a.y, dx, dy) / den;
            if (t > 0 && t < 1 && u >= 0 && u <= 1)
                params_push(out, t);
        }
    }
}

/* inside_candidates from the records. */
static bool local_inside(const rl_map *map, const local_cell *lc, double x, double y)
{
    bool near[MAX_CANDIDATES];
    size_t nn = 0;
    for (size_t k = 0; k < lc->n; k++) {
        const rlmap_lanelet *L = local_lanelet(map, lc, k);
        near[k] = x >= L->bbox[0] - BOUNDARY_EPS && x <= L->bbox[2] + BOUNDARY_EPS &&
                  y >= L->bbox[1] - BOUNDARY_EPS && y <= L->bbox[3] + BOUNDARY_EPS;
        if (near[k] && local_pip(map, lc, k, x, y))
            return true;
        nn += near[k];
    }
    for (size_t k = 0; nn > 0 && k < lc->n; k++)
        if (near[k] && local_dist(map, lc, k, x, y) <= BOUNDARY_EPS)
            return true;
    return false;
}

/* far_outside from the records. */
static bool local_far_outside(const rl_map *map, const local_cell *lc, const double *r, double x,
                              double y, double tol)
{
    double d = fmin(fmin(x - r[0], r[2] - x), fmin(y - r[1], r[3] - y));
    for (size_t k = 0; k < lc->n && d > tol * 7 / 16; k++)
        d = fmin(d, local_dist(map, lc, k, x, y));
    return d > tol * 7 / 16;
}

/* segment_inside for a piece inside a boundary cell (rectangle r). */
static bool local_segment_inside(const rl_map *map, const local_cell *lc, rl_map_point a,
                                 rl_map_point b, double tol, const double *r)
{
    params ts;
    params_start(&ts);
    local_crossings(map, lc, a, b, &ts);
    if (ts.failed) {
        params_free(&ts);
        return false;
    }
    sort_params(ts.v, ts.n);
    bool ok = true;
    for (size_t i = 0; i + 1 < ts.n && ok; i++) {
        if (ts.v[i + 1] <= ts.v[i])
            continue;
        double t = (ts.v[i] + ts.v[i + 1]) / 2;
        double x = a.x + t * (b.x - a.x), y = a.y + t * (b.y - a.y);
        if (local_inside(map, lc, x, y))
            continue;
        if (!(tol > 0) || local_far_outside(map, lc, r, x, y, tol)) {
            ok = false;
        } else {
            ok = gap_closed(map, NULL, lc, r, a, b, ts.v[i], ts.v[i + 1], tol);
        }
    }
    params_free(&ts);
    return ok;
}

/* Clips segment ab to the rectangle (Liang-Barsky): the parameter range inside it. */
static bool clip(rl_map_point a, rl_map_point b, const double r[4], double *t0, double *t1)
{
    double d[2] = {b.x - a.x, b.y - a.y}, o[2] = {a.x, a.y};
    *t0 = 0;
    *t1 = 1;
    for (int k = 0; k < 2; k++) {
        double lo = r[k], hi = r[k + 2];
        if (d[k] == 0) {
            if (o[k] < lo || o[k] > hi)
                return false;
            continue;
        }
        double u = (lo - o[k]) / d[k], v = (hi - o[k]) / d[k];
        if (u > v) {
            double w = u;
            u = v;
            v = w;
        }
        *t0 = max_of(*t0, u);
        *t1 = min_of(*t1, v);
    }
    return *t0 < *t1;
}

bool rl_map_cell_in_union(const rl_map *map, size_t cell)
{
    const rlmap_header *h = map->h;
    candidates c; /* filled by collect_candidates (not zeroed: it is 1 KB) */
    collect_candidates(map, cell, &c);
    if (c.n == 0 || c.overflow)
        return false;
    size_t ix = cell % h->nx, iy = cell / h->nx;
    const double r[4] = {h->grid_x0 + ix * h->cell, h->grid_y0 + iy * h->cell,
                         h->grid_x0 + (ix + 1) * h->cell, h->grid_y0 + (iy + 1) * h->cell};
    const rl_map_point q[4] = {{r[0], r[1]}, {r[2], r[1]}, {r[2], r[3]}, {r[0], r[3]}};
    /* The cell's outline lies in the union ... */
    for (int k = 0; k < 4; k++)
        if (!segment_inside(map, &c, q[k], q[(k + 1) % 4], 0, NULL))
            return false;
    /* ... and no hole of the union lies within it: beside every piece of every lanelet edge
     * inside the cell (split where edges cross), both sides are in the union. */
    double eps = h->cell * 1e-6;
    for (size_t i = 0; i < c.n; i++) {
        const rlmap_lanelet *L = &map->lanelets[c.idx[i]];
        const rl_map_point *p = map->points + L->poly_off;
        for (size_t e = 0, f = L->poly_n - 1; e < L->poly_n; f = e++) {
            double t0, t1, len = hypot(p[e].x - p[f].x, p[e].y - p[f].y);
            if (len == 0 || !clip(p[f], p[e], r, &t0, &t1))
                continue;
            params ts;
            ts.n = 0;
            ts.cap = 128;
            ts.failed = false;
            ts.v = ts.stack;
            params_push(&ts, t0);
            params_push(&ts, t1);
            crossings(map, &c, p[f], p[e], t0, t1, &ts);
            if (ts.failed) {
                params_free(&ts);
                return false;
            }
            sort_params(ts.v, ts.n);
            double nx = -(p[e].y - p[f].y) / len * eps, ny = (p[e].x - p[f].x) / len * eps;
            bool ok = true;
            for (size_t k = 0; k + 1 < ts.n && ok; k++) {
                double t = (ts.v[k] + ts.v[k + 1]) / 2;
                double mx = p[f].x + t * (p[e].x - p[f].x), my = p[f].y + t * (p[e].y - p[f].y);
                for (int side = -1; side <= 1 && ok; side += 2) {
                    double x = mx + side * nx, y = my + side * ny;
                    if (x > r[0] && x < r[2] && y > r[1] && y < r[3])
                        ok = inside_candidates(map, &c, x, y);
                }
            }
            params_free(&ts);
            if (!ok)
                return false;
        }
    }
    return true;
}

/* One footprint edge, cell by cell: a cell the lanelets cover wholly passes at once; in
 * any other cell the piece of the edge inside it is tested exactly against the lanelets
 * touching that cell. */
typedef struct edge_walk {
    rl_map_point a, b;
    double tol;
} edge_walk;

static bool edge_piece_inside(const rl_map *map, size_t cell, void *ctx)
{
    if (map->cell_flags[cell] & (RLMAP_CELL_COVERED | RLMAP_CELL_IN_UNION))
        return true;
    const edge_walk *w = ctx;
    const rlmap_header *h = map->h;
    size_t ix = cell % h->nx, iy = cell / h->nx;
    const double r[4] = {h->grid_x0 + ix * h->cell, h->grid_y0 + iy * h->cell,
                         h->grid_x0 + (ix + 1) * h->cell, h->grid_y0 + (iy + 1) * h->cell};
    double t0, t1;
    if (!clip(w->a, w->b, r, &t0, &t1))
        return true; /* only a corner touched: the neighbouring cells hold those points */
    double dx = w->b.x - w->a.x, dy = w->b.y - w->a.y;
    rl_map_point p = {w->a.x + t0 * dx, w->a.y + t0 * dy}, q = {w->a.x + t1 * dx, w->a.y + t1 * dy};
    long bi = rlmap_boundary_index(map, cell);
    size_t first = map->cell_start[cell], n = map->cell_start[cell + 1] - first;
    if (bi >= 0 && n <= MAX_CANDIDATES) {
        local_cell lc = {map->entries + first, map->locals + map->boundary_start[bi], n};
        return local_segment_inside(map, &lc, p, q, w->tol, r);
    }
    candidates c; /* filled by collect_candidates (not zeroed: it is 1 KB) */
    collect_candidates(map, cell, &c);
    return segment_inside(map, &c, p, q, w->tol, r);
}

/* How far p lies outside the grid's rectangle (0 inside). */
static double outside_grid(const rlmap_header *h, rl_map_point p)
{
    double x1 = h->grid_x0 + h->nx * h->cell, y1 = h->grid_y0 + h->ny * h->cell;
    double dx = fmax(fmax(h->grid_x0 - p.x, p.x - x1), 0);
    double dy = fmax(fmax(h->grid_y0 - p.y, p.y - y1), 0);
    return hypot(dx, dy);
}

/* One footprint edge being walked, in cell units: from (u0, v0) along (du, dv) for t in
 * [0, 1]; t > 1 when done. */
typedef struct edge_cursor {
    edge_walk w;
    double u0, v0, du, dv, inv_len, tiny, t;
    /* Per axis, the exit of a square of `reach` cells around cell i lies at
     * (i + side + sign * reach - u) * inv_d along the edge: the division done once. */
    double side_u, side_v, sign_u, sign_v, inv_du, inv_dv;
    unsigned extent_shift_u, extent_shift_v; /* the cell extents' codes along the edge */
} edge_cursor;

/* Sets up the walk of edge ab; false when the edge is a point (then *point_ok holds its
 * answer). */
static bool edge_start(const rl_map *map, rl_map_point a, rl_map_point b, double tol,
                       edge_cursor *e, bool *point_ok)
{
    const rlmap_header *h = map->h;
    double inv = map->inv_cell;
    e->w = (edge_walk){a, b, tol};
    e->u0 = (a.x - h->grid_x0) * inv;
    e->v0 = (a.y - h->grid_y0) * inv;
    e->du = (b.x - a.x) * inv;
    e->dv = (b.y - a.y) * inv;
    e->t = 0;
    double len = sqrt(e->du * e->du + e->dv * e->dv);
    if (!(len > 0)) {
        *point_ok = rl_map_point_drivable(map, a.x, a.y);
        return false;
    }
    e->inv_len = 1 / len;
    e->tiny = 1e-9 * inv * e->inv_len; /* 1 nm: the boundary tolerance */
    /* Along an axis the edge does not move, the exit is never reached: a positive
     * distance times infinity. */
    e->side_u = e->du < 0 ? 0 : 1;
    e->sign_u = e->du < 0 ? -1 : 1;
    e->side_v = e->dv < 0 ? 0 : 1;
    e->sign_v = e->dv < 0 ? -1 : 1;
    e->extent_shift_u = e->du < 0 ? 4 : 0;
    e->extent_shift_v = e->dv < 0 ? 12 : 8;
    /* Both reciprocals from one division while the product is a normal number. */
    double uv = e->du * e->dv;
    if (fabs(uv) >= 1e-280 && fabs(uv) <= 1e280) {
        double r = 1 / uv;
        e->inv_du = e->dv * r;
        e->inv_dv = e->du * r;
    } else {
        e->inv_du = e->du == 0 ? INFINITY : 1 / e->du;
        e->inv_dv = e->dv == 0 ? INFINITY : 1 / e->dv;
    }
    return true;
}

/* One step of an edge's walk: strides through cells far from anything not drivable (a
 * cell of depth k >= 1 has only wholly drivable cells within k - 1 cells around it: a
 * square of 2k - 1 cells, inside the grid since border cells have depth 1; its extents
 * stretch that square along each axis direction into a rectangle, wholly drivable too), so
 * the edge is drivable until it leaves the longer of the two rectangles in its directions
 * (both contain the cell, so the piece up to there lies in one); in a cell not wholly
 * drivable (depth 0) the piece of the edge inside it is tested exactly. 1: go on, 0: the
 * edge is inside, -1: it is not. */
static int edge_step(const rl_map *map, edge_cursor *e)
{
    const rlmap_header *h = map->h;
    double u = e->u0 + e->t * e->du, v = e->v0 + e->t * e->dv;
    if (!(u >= 0 && u < h->nx && v >= 0 && v < h->ny)) { /* the edge leaves the grid */
        /* The grid holds every lanelet, so a point d outside it has clearance >= d, and
         * no gap closes past tol/2 (gap_closed): the farthest point of the edge from the
         * grid is an end. */
        double out = fmax(outside_grid(h, e->w.a), outside_grid(h, e->w.b));
        if (!(out <= e->w.tol / 2))
            return -1;
        return gap_closed(map, NULL, NULL, NULL, e->w.a, e->w.b, 0, 1, e->w.tol) ? 0 : -1;
    }
    uint32_t ix = (uint32_t)u, iy = (uint32_t)v;
    size_t cell = (size_t)iy * h->nx + ix;
    int depth = map->cell_flags[cell] >> RLMAP_DEPTH_SHIFT;
    if (depth == 0 && !edge_piece_inside(map, cell, &e->w))
        return -1;
    int reach = depth > 0 ? depth - 1 : 0, ex = reach, ey = reach;
    if (depth > 0) {
        unsigned x = map->cell_extents[cell];
        int cx = rlmap_extent_cells(x >> e->extent_shift_u);
        int cy = rlmap_extent_cells(x >> e->extent_shift_v);
        ex = cx > reach ? cx : reach;
        ey = cy > reach ? cy : reach;
    }
    /* On to where the edge leaves the square of `reach` cells around this one, or the
     * longer of the rectangles the extents promise along each axis. */
    double bu = (double)ix + e->side_u - u, bv = (double)iy + e->side_v - v;
    double tu = (bu + e->sign_u * reach) * e->inv_du, tv = (bv + e->sign_v * reach) * e->inv_dv;
    double tue = (bu + e->sign_u * ex) * e->inv_du, tve = (bv + e->sign_v * ey) * e->inv_dv;
    double th = tue < tv ? tue : tv, tvv = tu < tve ? tu : tve;
    double step = th > tvv ? th : tvv;
    e->t += (step > 0 ? step : 0) + e->tiny;
    return e->t <= 1;
}

bool rl_map_footprint_inside(const rl_map *map, const rl_map_box *b, double gap_tolerance)
{
    if (!isfinite(b->x) || !isfinite(b->y) || !isfinite(b->yaw) || !isfinite(b->length) ||
        !isfinite(b->width))
        return false;
    rl_map_point c[4];
    rl_map_box_corners(b, c);
    /* The four edges walked in turn, a cell each: their cells' flags are fetched from
     * memory in parallel (each edge's next cell depends on its last one's depth). */
    edge_cursor e[4];
    edge_cursor *walking[4];
    size_t n = 0;
    for (int i = 0; i < 4; i++) {
        bool point_ok = true;
        if (edge_start(map, c[i], c[(i + 1) % 4], gap_tolerance, &e[i], &point_ok))
            walking[n++] = &e[i];
        else if (!point_ok)
            return false;
    }
    while (n > 0) {
        for (size_t i = 0; i < n;) {
            int r = edge_step(map, walking[i]);
            if (r < 0)
                return false;
            if (r == 0)
                walking[i] = walking[--n];
            else
                i++;
        }
    }
    return true;
}

bool rl_map_footprint_inside_brute(const rl_map *map, const rl_map_box *b)
{
    if (!isfinite(b->x) || !isfinite(b->y) || !isfinite(b->yaw) || !isfinite(b->length) ||
        !isfinite(b->width))
        return false;
    rl_map_point c[4];
    rl_map_box_corners(b, c);
    bool ok = true;
    for (int k = 0; k < 4 && ok; k++) {
        rl_map_point a = c[k], z = c[(k + 1) % 4];
        double dx = z.x - a.x, dy = z.y - a.y;
        params ts;
        params_start(&ts);
        for (size_t i = 0; i < map->h->num_lanelets; i++) {
            const rlmap_lanelet *L = &map->lanelets[i];
            const rl_map_point *p = map->points + L->poly_off;
            for (size_t e = 0, f = L->poly_n - 1; e < L->poly_n; f = e++) {
                double ex = p[e].x - p[f].x, ey = p[e].y - p[f].y;
                double den = rl_map_cross(dx, dy, ex, ey);
                if (den == 0)
                    continue;
                double t = rl_map_cross(p[f].x - a.x, p[f].y - a.y, ex, ey) / den;
                double u = rl_map_cross(p[f].x - a.x, p[f].y - a.y, dx, dy) / den;
                if (t > 0 && t < 1 && u >= 0 && u <= 1)
                    params_push(&ts, t);
            }
        }
        sort_params(ts.v, ts.n);
        ok = !ts.failed;
        for (size_t i = 0; i + 1 < ts.n && ok; i++) {
            double t = (ts.v[i] + ts.v[i + 1]) / 2;
            if (ts.v[i + 1] > ts.v[i])
                ok = rl_map_point_drivable_brute(map, a.x + t * dx, a.y + t * dy);
        }
        params_free(&ts);
    }
    return ok;
}

/* Projections of both boxes' corners on the axis; true when they are separated. */
static bool separated_on(const rl_map_point *pa, const rl_map_point *pb, double ax, double ay)
{
    double amin = INFINITY, amax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;
    for (int i = 0; i < 4; i++) {
        double u = pa[i].x * ax + pa[i].y * ay, v = pb[i].x * ax + pb[i].y * ay;
        amin = fmin(amin, u);
        amax = fmax(amax, u);
        bmin = fmin(bmin, v);
        bmax = fmax(bmax, v);
    }
    return amax < bmin - BOUNDARY_EPS || bmax < amin - BOUNDARY_EPS;
}

bool rl_map_box_overlap(const rl_map_box *a, const rl_map_box *b)
{
    rl_map_point pa[4], pb[4];
    rl_map_box_corners(a, pa);
    rl_map_box_corners(b, pb);
    const double axes[4][2] = {{cos(a->yaw), sin(a->yaw)},
                               {-sin(a->yaw), cos(a->yaw)},
                               {cos(b->yaw), sin(b->yaw)},
                               {-sin(b->yaw), cos(b->yaw)}};
    for (int i = 0; i < 4; i++)
        if (separated_on(pa, pb, axes[i][0], axes[i][1]))
            return false;
    return true;
}

double rl_map_box_distance(const rl_map_box *a, const rl_map_box *b)
{
    if (rl_map_box_overlap(a, b))
        return 0;
    rl_map_point pa[4], pb[4];
    rl_map_box_corners(a, pa);
    rl_map_box_corners(b, pb);
    double best = INFINITY;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            best = fmin(best, rl_map_seg_dist2(pa[i].x, pa[i].y, pb[j], pb[(j + 1) % 4], NULL));
            best = fmin(best, rl_map_seg_dist2(pb[i].x, pb[i].y, pa[j], pa[(j + 1) % 4], NULL));
        }
    return sqrt(best);
}
