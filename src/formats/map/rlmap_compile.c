/* Compiles a map source into the runtime map's bytes (layout in map_internal.h):
 * lanelets sorted by id with their bounds, centre line and polygon, routing links, a
 * uniform grid whose cells list the lanelets touching them (and mark cells lying wholly
 * inside one, their depth and extents), the boundary cells' edge records, the area sum and
 * the union area. Deterministic: same source, same bytes. */
#include "map_internal.h"

#include "core/text.h"
#include "runlab/error.h"
#include "runlab/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CELLS = 1u << 21, UNION_ROWS = 8192 };
/* Edge visits the boundary records may cost in all (a few seconds at most). Real maps use
 * a small part of it (the lab map 0.19 M, Lanelet2's mapping_example 0.04 M); a map beyond it
 * keeps the cells after that point unmarked, where the footprint test reads whole polygons:
 * the same answers, found more slowly. */
#define BOUNDARY_WORK_MAX ((uint64_t)1 << 25)
/* Edges one lanelet's record of one cell may list (a record holds up to UINT16_MAX): a
 * lanelet's few edges near the cell in a real map; a long straight lanelet lists every
 * edge to the right of the cell in its rows, n per cell, n x n in all. Past it the cell is
 * left unmarked, as past the work budget. */
#define LOCAL_MAX_EDGES 1024
#define MAX_COORD RL_MAP_MAX_COORD

typedef struct compile_ctx {
    const rl_map_source *src;
    uint32_t *order; /* lanelet index -> source index */
    rlmap_lanelet *lanelets;
    rl_map_point *points;
    size_t num_points, cap_points;
    uint32_t *links;
    size_t num_links, cap_links;
    rl_buf strings;
    uint64_t *entries; /* cell << 33 | lanelet << 1 | full, sorted before writing */
    size_t num_entries, cap_entries;
    double x0, y0, cell;
    uint32_t nx, ny;
} compile_ctx;

static int cmp_id(const void *a, const void *b, void *ctx)
{
    const rl_map_source *src = ctx;
    int64_t x = src->lanelets[*(const uint32_t *)a].id, y = src->lanelets[*(const uint32_t *)b].id;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int push_points(compile_ctx *c, const rl_map_point *p, size_t n, uint32_t *off,
                       uint32_t *count)
{
    if (c->num_points + n > UINT32_MAX)
        return rl_error_set(RL_ERANGE, "map has too many points");
    int rc = rl_grow_array((void **)&c->points, &c->cap_points, c->num_points + n,
                           sizeof *c->points, "map points");
    if (rc < 0)
        return rc;
    memcpy(c->points + c->num_points, p, n * sizeof *p);
    *off = (uint32_t)c->num_points;
    *count = (uint32_t)n;
    c->num_points += n;
    return RL_OK;
}

static double polyline_length(const rl_map_point *p, size_t n)
{
    double len = 0;
    for (size_t i = 0; i + 1 < n; i++)
        len += hypot(p[i + 1].x - p[i].x, p[i + 1].y - p[i].y);
    return len;
}

/* A walk along a polyline by arc-length fraction, for fractions in increasing order: each
 * call resumes at the segment where the last one stopped, so m points along n vertices
 * cost n + m (one walk from the start per point cost n * m: seconds for 20 k vertices).
 * The sums are the same, in the same order, as a walk from the start. */
typedef struct polyline_walk {
    const rl_map_point *p;
    size_t n, i;
    double total, acc;
} polyline_walk;

/* Point at fraction t (not below the previous call's) of the walk's polyline. */
static rl_map_point point_at(polyline_walk *w, double t)
{
    const rl_map_point *p = w->p;
    if (w->n == 1 || w->total <= 0)
        return p[0];
    double want = t * w->total;
    for (; w->i + 1 < w->n; w->i++) {
        size_t i = w->i;
        double seg = hypot(p[i + 1].x - p[i].x, p[i + 1].y - p[i].y);
        if (w->acc + seg >= want && seg > 0) {
            double u = (want - w->acc) / seg;
            return (rl_map_point){p[i].x + u * (p[i + 1].x - p[i].x),
                                  p[i].y + u * (p[i + 1].y - p[i].y)};
        }
        w->acc += seg;
    }
    return p[w->n - 1];
}

/* Arc-length fractions of a polyline's vertices, appended to f. */
static size_t vertex_fractions(const rl_map_point *p, size_t n, double total, double *f)
{
    double acc = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            acc += hypot(p[i].x - p[i - 1].x, p[i].y - p[i - 1].y);
        f[i] = total > 0 ? acc / total : 0;
    }
    return n;
}

/* The centre line: the file's, else c(t) = (left(t) + right(t)) / 2 with t the fraction of
 * each bound's arc length, exactly (a vertex at every fraction where either bound has one,
 * and at t = 0.5, the lane centre). */
static int add_centre(compile_ctx *c, const rl_map_source_lanelet *ll, rlmap_lanelet *out)
{
    if (ll->num_centre > 0)
        return push_points(c, ll->centre, ll->num_centre, &out->centre_off, &out->centre_n);
    size_t n = ll->num_left + ll->num_right + 1;
    double *f = malloc(n * sizeof *f);
    rl_map_point *tmp = malloc(n * sizeof *tmp);
    if (!f || !tmp) {
        free(f);
        free(tmp);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    double ll_len = polyline_length(ll->left, ll->num_left);
    double lr_len = polyline_length(ll->right, ll->num_right);
    size_t k = vertex_fractions(ll->left, ll->num_left, ll_len, f);
    k += vertex_fractions(ll->right, ll->num_right, lr_len, f + k);
    f[k++] = 0.5;
    qsort(f, k, sizeof *f, cmp_double);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m > 0 && f[i] - f[m - 1] < 1e-12)
            continue;
        f[m++] = f[i];
    }
    polyline_walk wl = {.p = ll->left, .n = ll->num_left, .total = ll_len};
    polyline_walk wr = {.p = ll->right, .n = ll->num_right, .total = lr_len};
    for (size_t i = 0; i < m; i++) { /* f is sorted: both walks go forward only */
        rl_map_point a = point_at(&wl, f[i]);
        rl_map_point b = point_at(&wr, f[i]);
        tmp[i] = (rl_map_point){(a.x + b.x) / 2, (a.y + b.y) / 2};
    }
    int rc = push_points(c, tmp, m, &out->centre_off, &out->centre_n);
    free(f);
    free(tmp);
    return rc;
}

static int push_links(compile_ctx *c, const rl_map_idmap *ids, const int64_t *refs, size_t n,
                      uint32_t *off, uint32_t *count)
{
    int rc = rl_grow_array((void **)&c->links, &c->cap_links, c->num_links + n, sizeof *c->links,
                           "map links");
    if (rc < 0)
        return rc;
    *off = (uint32_t)c->num_links;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = rl_map_idmap_get(ids, refs[i]);
        if (k != UINT32_MAX)
            c->links[c->num_links++] = k;
    }
    *count = (uint32_t)(c->num_links - *off);
    return RL_OK;
}

/* "file:line: " of a lanelet in its source (as the readers' messages start), or "" for a
 * source built in memory without a name. */
static void source_place(const rl_map_source *src, const rl_map_source_lanelet *ll, char *out,
                         size_t cap)
{
    if (src->name && ll->line)
        snprintf(out, cap, "%s:%llu: ", src->name, (unsigned long long)ll->line);
    else if (src->name)
        snprintf(out, cap, "%s: ", src->name);
    else
        out[0] = '\0';
}

static int build_lanelet(compile_ctx *c, const rl_map_idmap *ids, uint32_t idx)
{
    const rl_map_source_lanelet *ll = &c->src->lanelets[c->order[idx]];
    rlmap_lanelet *out = &c->lanelets[idx];
    memset(out, 0, sizeof *out);
    out->id = ll->id;
    if (ll->num_left > RL_MAP_MAX_BOUND_POINTS || ll->num_right > RL_MAP_MAX_BOUND_POINTS) {
        char at[300];
        source_place(c->src, ll, at, sizeof at);
        return rl_error_set(RL_ERANGE,
                            "%slanelet %lld: %zu left and %zu right bound points; at most %d per "
                            "bound (split the lanelet)",
                            at, (long long)ll->id, ll->num_left, ll->num_right,
                            RL_MAP_MAX_BOUND_POINTS);
    }
    int rc = push_points(c, ll->left, ll->num_left, &out->left_off, &out->left_n);
    if (rc == RL_OK)
        rc = push_points(c, ll->right, ll->num_right, &out->right_off, &out->right_n);
    if (rc == RL_OK)
        rc = add_centre(c, ll, out);
    if (rc < 0)
        return rc;
    size_t n = ll->num_left + ll->num_right;
    rl_map_point *poly = malloc(n * sizeof *poly);
    if (!poly)
        return rl_error_set(RL_ENOMEM, "out of memory");
    rl_map_polygon_build(ll, poly);
    for (size_t i = 0; i < n; i++)
        if (!(fabs(poly[i].x) <= MAX_COORD && fabs(poly[i].y) <= MAX_COORD)) {
            rl_map_point bad = poly[i];
            free(poly);
            char at[300];
            source_place(c->src, ll, at, sizeof at);
            return rl_error_set(RL_ERANGE,
                                "%slanelet %lld: coordinate (%g, %g) is not a finite "
                                "position within %g m of the origin",
                                at, (long long)ll->id, bad.x, bad.y, MAX_COORD);
        }
    rc = push_points(c, poly, n, &out->poly_off, &out->poly_n);
    double area = fabs(rl_map_polygon_signed_area(poly, n));
    size_t crossings = rl_map_polygon_self_crossings(poly, n);
    out->bbox[0] = out->bbox[1] = INFINITY;
    out->bbox[2] = out->bbox[3] = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        out->bbox[0] = fmin(out->bbox[0], poly[i].x);
        out->bbox[1] = fmin(out->bbox[1], poly[i].y);
        out->bbox[2] = fmax(out->bbox[2], poly[i].x);
        out->bbox[3] = fmax(out->bbox[3], poly[i].y);
    }
    free(poly);
    if (rc < 0)
        return rc;
    out->area = area;
    out->start_width = hypot(ll->left[0].x - ll->right[0].x, ll->left[0].y - ll->right[0].y);
    out->end_width = hypot(ll->left[ll->num_left - 1].x - ll->right[ll->num_right - 1].x,
                           ll->left[ll->num_left - 1].y - ll->right[ll->num_right - 1].y);
    out->length = polyline_length(c->points + out->centre_off, out->centre_n);
    out->speed_limit = ll->speed_limit;
    out->flags = (out->start_width == 0 || out->end_width == 0 ? RL_MAP_LANELET_ZERO_WIDTH : 0) |
                 (area < 1e-9 ? RL_MAP_LANELET_ZERO_AREA : 0) |
                 (crossings ? RL_MAP_LANELET_SELF_CROSSING : 0) |
                 (ll->left_inverted ? RL_MAP_LANELET_LEFT_INVERTED : 0) |
                 (ll->right_inverted ? RL_MAP_LANELET_RIGHT_INVERTED : 0) |
                 (ll->one_way == 1 ? RL_MAP_LANELET_ONE_WAY : 0);
    out->subtype = 0;
    if (ll->subtype && ll->subtype[0]) {
        out->subtype = (uint32_t)c->strings.len;
        rl_buf_put(&c->strings, ll->subtype, strlen(ll->subtype) + 1);
        if (c->strings.err)
            return c->strings.err;
    }
    rc = push_links(c, ids, ll->successors, ll->num_successors, &out->succ_off, &out->succ_n);
    if (rc == RL_OK)
        rc = push_links(c, ids, ll->predecessors, ll->num_predecessors, &out->pred_off,
                        &out->pred_n);
    uint32_t k;
    out->adj_left =
        ll->has_adjacent_left && (k = rl_map_idmap_get(ids, ll->adjacent_left)) != UINT32_MAX
            ? (int32_t)k
            : -1;
    out->adj_right =
        ll->has_adjacent_right && (k = rl_map_idmap_get(ids, ll->adjacent_right)) != UINT32_MAX
            ? (int32_t)k
            : -1;
    return rc;
}

static int add_entry(compile_ctx *c, size_t cell, uint32_t idx, bool full)
{
    int rc = rl_grow_array((void **)&c->entries, &c->cap_entries, c->num_entries + 1,
                           sizeof *c->entries, "grid index");
    if (rc < 0)
        return rc;
    c->entries[c->num_entries++] = ((uint64_t)cell << 33) | ((uint64_t)idx << 1) | full;
    return RL_OK;
}

/* Does segment ab touch the (slightly enlarged) cell (ix, iy)? Separating axes: the
 * cell's corners all strictly on one side of the segment's line. */
static bool segment_touches_cell(const compile_ctx *c, rl_map_point a, rl_map_point b, uint32_t ix,
                                 uint32_t iy)
{
    double eps = c->cell * 1e-7;
    double x0 = c->x0 + ix * c->cell - eps, x1 = c->x0 + (ix + 1) * c->cell + eps;
    double y0 = c->y0 + iy * c->cell - eps, y1 = c->y0 + (iy + 1) * c->cell + eps;
    if (fmax(a.x, b.x) < x0 || fmin(a.x, b.x) > x1 || fmax(a.y, b.y) < y0 || fmin(a.y, b.y) > y1)
        return false;
    double dx = b.x - a.x, dy = b.y - a.y;
    double s0 = rl_map_cross(dx, dy, x0 - a.x, y0 - a.y),
           s1 = rl_map_cross(dx, dy, x1 - a.x, y0 - a.y);
    double s2 = rl_map_cross(dx, dy, x0 - a.x, y1 - a.y),
           s3 = rl_map_cross(dx, dy, x1 - a.x, y1 - a.y);
    return !((s0 > 0 && s1 > 0 && s2 > 0 && s3 > 0) || (s0 < 0 && s1 < 0 && s2 < 0 && s3 < 0));
}

static uint32_t cell_x(const compile_ctx *c, double x)
{
    double f = floor((x - c->x0) / c->cell);
    return f < 0 ? 0 : f >= c->nx ? c->nx - 1 : (uint32_t)f;
}

static uint32_t cell_y(const compile_ctx *c, double y)
{
    double f = floor((y - c->y0) / c->cell);
    return f < 0 ? 0 : f >= c->ny ? c->ny - 1 : (uint32_t)f;
}

/* x where the polygon's edges cross the horizontal line y (the even-odd rule's edges). */
static size_t row_crossings(const rl_map_point *p, size_t n, double y, double *xs)
{
    size_t k = 0;
    for (size_t i = 0, j = n - 1; i < n; j = i++)
        if ((p[i].y > y) != (p[j].y > y))
            xs[k++] = p[j].x + (y - p[j].y) * (p[i].x - p[j].x) / (p[i].y - p[j].y);
    qsort(xs, k, sizeof *xs, cmp_double);
    return k;
}

/* Index entries of one lanelet: cells its edges touch, then cells wholly inside. */
static int index_lanelet(compile_ctx *c, uint32_t idx, uint32_t *mark, double *xs)
{
    const rlmap_lanelet *L = &c->lanelets[idx];
    const rl_map_point *p = c->points + L->poly_off;
    size_t n = L->poly_n;
    int rc = RL_OK;
    for (size_t i = 0, j = n - 1; i < n && rc == RL_OK; j = i++) {
        uint32_t ix0 = cell_x(c, fmin(p[i].x, p[j].x)), ix1 = cell_x(c, fmax(p[i].x, p[j].x));
        uint32_t iy0 = cell_y(c, fmin(p[i].y, p[j].y)), iy1 = cell_y(c, fmax(p[i].y, p[j].y));
        ix0 -= ix0 > 0;
        iy0 -= iy0 > 0;
        ix1 += ix1 + 1 < c->nx;
        iy1 += iy1 + 1 < c->ny;
        for (uint32_t iy = iy0; iy <= iy1 && rc == RL_OK; iy++)
            for (uint32_t ix = ix0; ix <= ix1 && rc == RL_OK; ix++) {
                size_t cell = (size_t)iy * c->nx + ix;
                if (mark[cell] != idx + 1 && segment_touches_cell(c, p[j], p[i], ix, iy)) {
                    mark[cell] = idx + 1;
                    rc = add_entry(c, cell, idx, false);
                }
            }
    }
    uint32_t iy0 = cell_y(c, L->bbox[1]), iy1 = cell_y(c, L->bbox[3]);
    for (uint32_t iy = iy0; iy <= iy1 && rc == RL_OK; iy++) {
        double yc = c->y0 + (iy + 0.5) * c->cell;
        size_t k = row_crossings(p, n, yc, xs);
        for (size_t m = 0; m + 1 < k && rc == RL_OK; m += 2) {
            double f = ceil((xs[m] - c->x0) / c->cell - 0.5);
            uint32_t ix = f < 0 ? 0 : (uint32_t)f;
            for (; ix < c->nx && c->x0 + (ix + 0.5) * c->cell <= xs[m + 1] && rc == RL_OK; ix++) {
                size_t cell = (size_t)iy * c->nx + ix;
                if (mark[cell] != idx + 1) {
                    mark[cell] = idx + 1;
                    rc = add_entry(c, cell, idx, true);
                }
            }
        }
    }
    return rc;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Area of the union: exact covered length of horizontal lines through the middle of
 * UNION_ROWS equal rows (intervals merged over all lanelets), times the row height. */
static double union_area(const compile_ctx *c, size_t n, double ymin, double ymax, double *xs,
                         double *iv)
{
    if (n == 0 || !(ymax > ymin))
        return 0;
    double h = (ymax - ymin) / UNION_ROWS, total = 0;
    for (size_t r = 0; r < UNION_ROWS; r++) {
        double y = ymin + (r + 0.5) * h;
        size_t ni = 0;
        for (size_t i = 0; i < n; i++) {
            const rlmap_lanelet *L = &c->lanelets[i];
            if (y < L->bbox[1] || y > L->bbox[3])
                continue;
            size_t k = row_crossings(c->points + L->poly_off, L->poly_n, y, xs);
            for (size_t m = 0; m + 1 < k; m += 2) {
                iv[2 * ni] = xs[m];
                iv[2 * ni + 1] = xs[m + 1];
                ni++;
            }
        }
        qsort(iv, ni, 2 * sizeof *iv, cmp_double); /* by start */
        double covered = 0, cur_a = 0, cur_b = -INFINITY;
        for (size_t i = 0; i < ni; i++) {
            if (iv[2 * i] > cur_b) {
                if (cur_b > cur_a)
                    covered += cur_b - cur_a;
                cur_a = iv[2 * i];
                cur_b = iv[2 * i + 1];
            } else if (iv[2 * i + 1] > cur_b) {
                cur_b = iv[2 * i + 1];
            }
        }
        if (cur_b > cur_a)
            covered += cur_b - cur_a;
        total += covered * h;
    }
    return total;
}

static void choose_grid(compile_ctx *c, const double bbox[4], size_t n)
{
    double w = bbox[2] - bbox[0], h = bbox[3] - bbox[1];
    double *widths = malloc((n ? n : 1) * sizeof *widths);
    double med = 0;
    if (widths && n) {
        for (size_t i = 0; i < n; i++)
            widths[i] = c->lanelets[i].start_width;
        qsort(widths, n, sizeof *widths, cmp_double);
        med = widths[n / 2];
    }
    free(widths);
    double cell = fmax(med / 16, sqrt(w * h / (double)(MAX_CELLS / 2)));
    if (!(cell > 0) || !isfinite(cell))
        cell = fmax(fmax(w, h) / 64, 1.0);
    while ((floor(w / cell) + 1) * (floor(h / cell) + 1) > MAX_CELLS)
        cell *= 1.25;
    c->cell = cell;
    c->x0 = bbox[0];
    c->y0 = bbox[1];
    c->nx = (uint32_t)floor(w / cell) + 1;
    c->ny = (uint32_t)floor(h / cell) + 1;
}

static int build_index(compile_ctx *c, size_t n, size_t max_poly)
{
    size_t cells = (size_t)c->nx * c->ny;
    uint32_t *mark = calloc(cells, sizeof *mark);
    double *xs = malloc((max_poly + 1) * sizeof *xs);
    if (!mark || !xs) {
        free(mark);
        free(xs);
        return rl_error_set(RL_ENOMEM, "out of memory for the grid index");
    }
    int rc = RL_OK;
    for (size_t i = 0; i < n && rc == RL_OK; i++)
        rc = index_lanelet(c, (uint32_t)i, mark, xs);
    free(mark);
    free(xs);
    if (rc == RL_OK && c->num_entries > UINT32_MAX)
        rc = rl_error_set(RL_ERANGE, "grid index too large");
    if (rc == RL_OK && c->num_entries)
        qsort(c->entries, c->num_entries, sizeof *c->entries, cmp_u64);
    return rc;
}

/* Chessboard distance (in cells, at most RLMAP_DEPTH_MAX) of each cell to the nearest
 * cell not on the drivable area or to the grid's edge, in the flags' upper bits: every
 * cell nearer than that to this one lies wholly on the drivable area. Two-pass chamfer. */
static int mark_depth(uint8_t *flags, uint32_t nx, uint32_t ny)
{
    size_t cells = (size_t)nx * ny;
    uint8_t *d = malloc(cells);
    if (!d)
        return rl_error_set(RL_ENOMEM, "out of memory");
    for (uint32_t y = 0; y < ny; y++)
        for (uint32_t x = 0; x < nx; x++) {
            size_t i = (size_t)y * nx + x;
            if (!(flags[i] & (RLMAP_CELL_COVERED | RLMAP_CELL_IN_UNION))) {
                d[i] = 0;
                continue;
            }
            int m = 0;
            if (x > 0 && y > 0 && x + 1 < nx) {
                m = d[i - 1];
                m = d[i - nx - 1] < m ? d[i - nx - 1] : m;
                m = d[i - nx] < m ? d[i - nx] : m;
                m = d[i - nx + 1] < m ? d[i - nx + 1] : m;
            }
            d[i] = (uint8_t)(m + 1 > RLMAP_DEPTH_MAX ? RLMAP_DEPTH_MAX : m + 1);
        }
    for (uint32_t y = ny; y-- > 0;)
        for (uint32_t x = nx; x-- > 0;) {
            size_t i = (size_t)y * nx + x;
            if (d[i] == 0)
                continue;
            int m = 0;
            if (x > 0 && x + 1 < nx && y + 1 < ny) {
                m = d[i + 1];
                m = d[i + nx + 1] < m ? d[i + nx + 1] : m;
                m = d[i + nx] < m ? d[i + nx] : m;
                m = d[i + nx - 1] < m ? d[i + nx - 1] : m;
            }
            if (m + 1 < d[i])
                d[i] = (uint8_t)(m + 1);
        }
    for (size_t i = 0; i < cells; i++)
        flags[i] = (uint8_t)((flags[i] & 3u) | (d[i] << RLMAP_DEPTH_SHIFT));
    free(d);
    return RL_OK;
}

/* The cell extents (map_internal.h) from the final flags: from each wholly drivable cell,
 * how far the rectangle of its depth's rows (columns) stays wholly drivable along each
 * axis direction, up to 32 cells. Lanes along an axis give the footprint walk long strides
 * there, where the depth's square would allow only a cell or two beside a boundary. */
static int mark_extents(const uint8_t *flags, uint32_t nx, uint32_t ny, uint16_t *ext)
{
    size_t cells = (size_t)nx * ny;
    uint8_t *run = malloc(4 * cells); /* drivable cells from here up, down, right, left */
    if (!run)
        return rl_error_set(RL_ENOMEM, "out of memory");
    uint8_t *up = run, *down = run + cells, *right = run + 2 * cells, *left = run + 3 * cells;
#define DRIVABLE(i) ((flags[i] & (RLMAP_CELL_COVERED | RLMAP_CELL_IN_UNION)) != 0)
#define MORE(r)     ((uint8_t)((r) < 255 ? (r) + 1 : 255))
    for (size_t y = ny; y-- > 0;)
        for (size_t x = 0; x < nx; x++) {
            size_t i = y * nx + x;
            up[i] = DRIVABLE(i) ? MORE(y + 1 < ny ? up[i + nx] : 0) : 0;
        }
    for (size_t y = 0; y < ny; y++)
        for (size_t x = 0; x < nx; x++) {
            size_t i = y * nx + x;
            down[i] = DRIVABLE(i) ? MORE(y > 0 ? down[i - nx] : 0) : 0;
            left[i] = DRIVABLE(i) ? MORE(x > 0 ? left[i - 1] : 0) : 0;
        }
    for (size_t y = 0; y < ny; y++)
        for (size_t x = nx; x-- > 0;) {
            size_t i = y * nx + x;
            right[i] = DRIVABLE(i) ? MORE(x + 1 < nx ? right[i + 1] : 0) : 0;
        }
    for (size_t y = 0; y < ny; y++)
        for (size_t x = 0; x < nx; x++) {
            size_t i = y * nx + x;
            unsigned k = flags[i] >> RLMAP_DEPTH_SHIFT;
            ext[i] = 0;
            if (k == 0)
                continue;
            long s = (long)k - 1, need = s + 1, r[4];
            /* Along x: the next column's s rows either side drivable; along y alike. */
            for (r[0] = s; r[0] < 32 && x + r[0] + 1 < nx; r[0]++) {
                size_t j = i + (size_t)r[0] + 1;
                if (up[j] < need || down[j] < need)
                    break;
            }
            for (r[1] = s; r[1] < 32 && (long)x - r[1] - 1 >= 0; r[1]++) {
                size_t j = i - (size_t)r[1] - 1;
                if (up[j] < need || down[j] < need)
                    break;
            }
            for (r[2] = s; r[2] < 32 && y + r[2] + 1 < ny; r[2]++) {
                size_t j = i + ((size_t)r[2] + 1) * nx;
                if (right[j] < need || left[j] < need)
                    break;
            }
            for (r[3] = s; r[3] < 32 && (long)y - r[3] - 1 >= 0; r[3]++) {
                size_t j = i - ((size_t)r[3] + 1) * nx;
                if (right[j] < need || left[j] < need)
                    break;
            }
            for (int d = 0; d < 4; d++) {
                unsigned code = 0;
                while (r[d] > s && code < 15 && rlmap_extent_cells(code + 1) <= r[d])
                    code++;
                ext[i] |= (uint16_t)(code << (4 * d));
            }
        }
#undef DRIVABLE
#undef MORE
    free(run);
    return RL_OK;
}

/* Marks the cells the lanelets cover together (not one alone), on the map just laid out:
 * the footprint test's fast path and the point test's use them; then each cell's depth
 * and extents. */
static int mark_union_cells(uint8_t *out, size_t total, uint8_t *flags, uint16_t *ext)
{
    rl_map *m;
    int rc = rl_map_open_mem(out, total, RL_MAP_OPEN_NO_CRC, &m);
    if (rc < 0)
        return rc;
    size_t cells = (size_t)m->h->nx * m->h->ny;
    for (size_t i = 0; i < cells; i++)
        if (!(flags[i] & RLMAP_CELL_COVERED) && m->cell_start[i + 1] - m->cell_start[i] > 1 &&
            rl_map_cell_in_union(m, i))
            flags[i] |= RLMAP_CELL_IN_UNION;
    rc = mark_depth(flags, m->h->nx, m->h->ny);
    if (rc == RL_OK)
        rc = mark_extents(flags, m->h->nx, m->h->ny, ext);
    rl_map_close(m);
    return rc;
}

/* The boundary sections (map_internal.h): for each cell not wholly drivable that lists
 * lanelets, per lanelet, the polygon edges the footprint test must read there. */
typedef struct boundary_data {
    rlmap_cell_block *blocks;
    size_t num_blocks;
    uint32_t *starts; /* num_cells + 1 */
    size_t num_cells, cap_starts;
    rlmap_local *locals;
    size_t num_locals, cap_locals;
    uint32_t *edges;
    size_t num_edges, cap_edges;
    uint64_t work; /* edges visited so far (bounded by BOUNDARY_WORK_MAX) */
} boundary_data;

static void boundary_free(boundary_data *d)
{
    free(d->blocks);
    free(d->starts);
    free(d->locals);
    free(d->edges);
}

/* Does segment ab touch the rectangle r (x0, y0, x1, y1)? Separating axes. */
static bool segment_touches_rect(rl_map_point a, rl_map_point b, const double r[4])
{
    if (fmax(a.x, b.x) < r[0] || fmin(a.x, b.x) > r[2] || fmax(a.y, b.y) < r[1] ||
        fmin(a.y, b.y) > r[3])
        return false;
    double dx = b.x - a.x, dy = b.y - a.y;
    double s0 = rl_map_cross(dx, dy, r[0] - a.x, r[1] - a.y);
    double s1 = rl_map_cross(dx, dy, r[2] - a.x, r[1] - a.y);
    double s2 = rl_map_cross(dx, dy, r[0] - a.x, r[3] - a.y);
    double s3 = rl_map_cross(dx, dy, r[2] - a.x, r[3] - a.y);
    return !((s0 > 0 && s1 > 0 && s2 > 0 && s3 > 0) || (s0 < 0 && s1 < 0 && s2 < 0 && s3 < 0));
}

/* Lanelet L's record for the cell r (x0, y0, x1, y1): listed are the edges touching the
 * cell grown by RLMAP_LOCAL_MARGIN, and those with an end point in its rows (grown alike)
 * unless wholly left of it. Every other edge adds the same to the even-odd count (a ray
 * to +x, as rl_map_pip) of every point of the cell: it spans the rows wholly left or
 * right of the cell, or misses them. So its count at the cell's middle is the parity.
 * False when the lanelet lists more edges than a record holds. */
static int local_record(const rl_map *m, const rlmap_lanelet *L, const double r[4],
                        boundary_data *d, bool *fits)
{
    const double M = RLMAP_LOCAL_MARGIN;
    const double g[4] = {r[0] - M, r[1] - M, r[2] + M, r[3] + M};
    double xc = (r[0] + r[2]) / 2, yc = (r[1] + r[3]) / 2;
    const rl_map_point *p = m->points + L->poly_off;
    rlmap_local rec = {.first_edge = (uint32_t)d->num_edges};
    size_t listed = 0;
    for (size_t e = 0, f = L->poly_n - 1; e < L->poly_n; f = e++) {
        bool in_rows = (p[e].y >= g[1] && p[e].y <= g[3]) || (p[f].y >= g[1] && p[f].y <= g[3]);
        bool left = p[e].x < g[0] && p[f].x < g[0];
        if (segment_touches_rect(p[f], p[e], g) || (in_rows && !left)) {
            int rc = rl_grow_array((void **)&d->edges, &d->cap_edges, d->num_edges + 1,
                                   sizeof *d->edges, "map boundary edges");
            if (rc < 0)
                return rc;
            d->edges[d->num_edges++] = L->poly_off + (uint32_t)e;
            if (++listed > LOCAL_MAX_EDGES) { /* the caller drops the cell's records */
                *fits = false;
                return RL_OK;
            }
        } else if ((p[e].y > yc) != (p[f].y > yc) &&
                   xc < p[f].x + (yc - p[f].y) * (p[e].x - p[f].x) / (p[e].y - p[f].y)) {
            rec.parity ^= 1;
        }
    }
    *fits = d->num_edges <= UINT32_MAX;
    rec.num_edges = (uint16_t)listed;
    int rc = rl_grow_array((void **)&d->locals, &d->cap_locals, d->num_locals + 1,
                           sizeof *d->locals, "map boundary records");
    if (rc == RL_OK)
        d->locals[d->num_locals++] = rec;
    return rc;
}

/* Builds the boundary sections of the map laid out in `out` (its flags final). A cell
 * listing more lanelets than the footprint test takes from a cell, or a record too
 * large, is left unmarked: the test reads whole polygons there. */
static int build_boundary(const uint8_t *out, size_t total, boundary_data *d)
{
    rl_map *m;
    int rc = rl_map_open_mem(out, total, RL_MAP_OPEN_NO_CRC, &m);
    if (rc < 0)
        return rc;
    const rlmap_header *h = m->h;
    size_t cells = (size_t)h->nx * h->ny;
    d->num_blocks = (cells + 63) / 64;
    d->blocks = calloc(d->num_blocks, sizeof *d->blocks);
    rc = d->blocks ? rl_grow_array((void **)&d->starts, &d->cap_starts, 1, sizeof *d->starts,
                                   "map boundary cells")
                   : rl_error_set(RL_ENOMEM, "out of memory");
    if (rc == RL_OK)
        d->starts[0] = 0;
    for (size_t cell = 0; cell < cells && rc == RL_OK; cell++) {
        uint32_t n = m->cell_start[cell + 1] - m->cell_start[cell];
        if (n == 0 || n > 256 || (m->cell_flags[cell] & (RLMAP_CELL_COVERED | RLMAP_CELL_IN_UNION)))
            continue;
        size_t ix = cell % h->nx, iy = cell / h->nx;
        const double r[4] = {h->grid_x0 + ix * h->cell, h->grid_y0 + iy * h->cell,
                             h->grid_x0 + (ix + 1) * h->cell, h->grid_y0 + (iy + 1) * h->cell};
        /* Each record visits every edge of its lanelet: a lanelet of many vertices over
           many cells (long edges zig-zagging across the map) would cost cells x vertices,
           minutes for a few thousand vertices. Past the budget, cells stay unmarked. */
        uint64_t cost = 0;
        for (uint32_t k = m->cell_start[cell]; k < m->cell_start[cell + 1]; k++)
            cost += m->lanelets[m->entries[k] & ~RLMAP_ENTRY_FULL].poly_n;
        if (d->work + cost > BOUNDARY_WORK_MAX)
            continue;
        d->work += cost;
        size_t locals0 = d->num_locals, edges0 = d->num_edges;
        bool fits = true;
        for (uint32_t k = m->cell_start[cell]; k < m->cell_start[cell + 1] && rc == RL_OK && fits;
             k++)
            rc = local_record(m, &m->lanelets[m->entries[k] & ~RLMAP_ENTRY_FULL], r, d, &fits);
        if (rc == RL_OK && !fits) {
            d->num_locals = locals0;
            d->num_edges = edges0;
            continue;
        }
        if (rc == RL_OK)
            rc = rl_grow_array((void **)&d->starts, &d->cap_starts, d->num_cells + 2,
                               sizeof *d->starts, "map boundary cells");
        if (rc == RL_OK) {
            d->blocks[cell >> 6].bits |= (uint64_t)1 << (cell & 63);
            d->starts[++d->num_cells] = (uint32_t)d->num_locals;
        }
    }
    uint32_t rank = 0;
    for (size_t b = 0; rc == RL_OK && b < d->num_blocks; b++) {
        d->blocks[b].rank = rank;
        rank += (uint32_t)__builtin_popcountll(d->blocks[b].bits);
    }
    if (rc == RL_OK && (d->num_locals > UINT32_MAX || d->num_edges > UINT32_MAX))
        rc = rl_error_set(RL_ERANGE, "map boundary index too large");
    rl_map_close(m);
    return rc;
}

int rl_map_compile(const rl_map_source *src, const rl_map_compile_options *o, void **bytes_out,
                   size_t *len_out)
{
    *bytes_out = NULL;
    *len_out = 0;
    size_t n = src->num_lanelets;
    if (n >= INT32_MAX)
        return rl_error_set(RL_ERANGE, "%zu lanelets are too many", n);
    compile_ctx c = {.src = src};
    rl_map_idmap ids = {0};
    double *xs = NULL, *iv = NULL;
    uint8_t *out = NULL;
    rl_buf_put(&c.strings, "", 1); /* offset 0: the empty string */
    int rc = c.strings.err;
    c.order = malloc((n ? n : 1) * sizeof *c.order);
    c.lanelets = calloc(n ? n : 1, sizeof *c.lanelets);
    if (rc == RL_OK && (!c.order || !c.lanelets))
        rc = rl_error_set(RL_ENOMEM, "out of memory");
    if (rc == RL_OK) {
        for (size_t i = 0; i < n; i++)
            c.order[i] = (uint32_t)i;
        qsort_r(c.order, n, sizeof *c.order, cmp_id, (void *)src);
        rc = rl_map_idmap_init(&ids, n);
    }
    for (size_t i = 0; rc == RL_OK && i < n; i++) {
        uint32_t prev;
        rl_map_idmap_put(&ids, src->lanelets[c.order[i]].id, (uint32_t)i, &prev);
        if (prev != UINT32_MAX) {
            const rl_map_source_lanelet *a = &src->lanelets[c.order[prev]],
                                        *b = &src->lanelets[c.order[i]];
            if (a->line > b->line) { /* name the later one, pointing back to the first */
                const rl_map_source_lanelet *t = a;
                a = b;
                b = t;
            }
            char at[300];
            source_place(src, b, at, sizeof at);
            rc = a->line ? rl_error_set(RL_EINVAL, "%slanelet %lld: id also used on line %llu",
                                        at, (long long)b->id, (unsigned long long)a->line)
                         : rl_error_set(RL_EINVAL, "%slanelet id %lld appears twice", at,
                                        (long long)b->id);
        }
    }
    size_t max_poly = 0;
    for (size_t i = 0; rc == RL_OK && i < n; i++) {
        rc = build_lanelet(&c, &ids, (uint32_t)i);
        if (c.lanelets[i].poly_n > max_poly)
            max_poly = c.lanelets[i].poly_n;
    }
    double bbox[4] = {0, 0, 0, 0}, area_sum = 0;
    if (rc == RL_OK && n) {
        bbox[0] = bbox[1] = INFINITY;
        bbox[2] = bbox[3] = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            bbox[0] = fmin(bbox[0], c.lanelets[i].bbox[0]);
            bbox[1] = fmin(bbox[1], c.lanelets[i].bbox[1]);
            bbox[2] = fmax(bbox[2], c.lanelets[i].bbox[2]);
            bbox[3] = fmax(bbox[3], c.lanelets[i].bbox[3]);
            area_sum += c.lanelets[i].area;
        }
        if (!(isfinite(bbox[0]) && isfinite(bbox[1]) && isfinite(bbox[2]) && isfinite(bbox[3])))
            rc = rl_error_set(RL_ERANGE, "map coordinates are not finite");
    }
    double area_union = 0;
    if (rc == RL_OK) {
        choose_grid(&c, bbox, n);
        rc = build_index(&c, n, max_poly);
    }
    if (rc == RL_OK) {
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
            total += c.lanelets[i].poly_n;
        xs = malloc((max_poly + 1) * sizeof *xs);
        iv = malloc((total + 2) * sizeof *iv);
        if (!xs || !iv)
            rc = rl_error_set(RL_ENOMEM, "out of memory");
        else
            area_union = union_area(&c, n, bbox[1], bbox[3], xs, iv);
    }
    size_t cells = (size_t)c.nx * c.ny;
    size_t off_lanelets = RLMAP_HEADER_SIZE;
    size_t off_points = off_lanelets + n * sizeof(rlmap_lanelet);
    size_t off_links = off_points + c.num_points * sizeof(rl_map_point);
    size_t off_starts = off_links + rlmap_pad8(c.num_links * 4);
    size_t off_entries = off_starts + rlmap_pad8((cells + 1) * 4);
    size_t off_flags = off_entries + rlmap_pad8(c.num_entries * 4);
    size_t off_extents = off_flags + rlmap_pad8(cells);
    size_t off_strings = off_extents + rlmap_pad8(cells * 2);
    /* Laid out first with no boundary cells (all-zero blocks, one zero start), so that
     * the union flags can be worked out on the map; the boundary sections come after. */
    size_t off_blocks = off_strings + rlmap_pad8(c.strings.len);
    size_t total = off_blocks + (cells + 63) / 64 * sizeof(rlmap_cell_block) + 8;
    boundary_data bd = {0};
    if (rc == RL_OK && !(out = calloc(1, total)))
        rc = rl_error_set(RL_ENOMEM, "out of memory for a %zu-byte runtime map", total);
    if (rc == RL_OK) {
        memcpy(out + off_lanelets, c.lanelets, n * sizeof(rlmap_lanelet));
        if (c.num_points)
            memcpy(out + off_points, c.points, c.num_points * sizeof(rl_map_point));
        if (c.num_links)
            memcpy(out + off_links, c.links, c.num_links * 4);
        uint32_t *starts = (uint32_t *)(out + off_starts);
        uint32_t *entries = (uint32_t *)(out + off_entries);
        uint8_t *flags = out + off_flags;
        for (size_t i = 0; i < c.num_entries; i++) {
            size_t cell = (size_t)(c.entries[i] >> 33);
            uint32_t e = (uint32_t)((c.entries[i] >> 1) & 0x7fffffffu) |
                         (c.entries[i] & 1 ? RLMAP_ENTRY_FULL : 0);
            entries[i] = e;
            starts[cell + 1]++;
            if (e & RLMAP_ENTRY_FULL)
                flags[cell] |= RLMAP_CELL_COVERED;
        }
        for (size_t i = 0; i < cells; i++)
            starts[i + 1] += starts[i];
        memcpy(out + off_strings, c.strings.data, c.strings.len);

        rlmap_header h;
        memset(&h, 0, sizeof h);
        memcpy(h.magic, RLMAP_MAGIC, 8);
        h.version = RLMAP_VERSION;
        h.header_size = RLMAP_HEADER_SIZE;
        h.file_size = total;
        h.source_format = (uint32_t)src->format;
        h.projection = (uint32_t)src->projection;
        h.origin_lat = src->origin_lat;
        h.origin_lon = src->origin_lon;
        memcpy(h.source_sha256, src->source_sha256, 32);
        memcpy(h.bbox, bbox, sizeof bbox);
        bool own_area = o && (o->area_xmax > o->area_xmin || o->area_ymax > o->area_ymin);
        h.area[0] = own_area ? o->area_xmin : bbox[0];
        h.area[1] = own_area ? o->area_ymin : bbox[1];
        h.area[2] = own_area ? o->area_xmax : bbox[2];
        h.area[3] = own_area ? o->area_ymax : bbox[3];
        h.area_sum = area_sum;
        h.area_union = area_union;
        h.grid_x0 = c.x0;
        h.grid_y0 = c.y0;
        h.cell = c.cell;
        h.nx = c.nx;
        h.ny = c.ny;
        h.num_lanelets = (uint32_t)n;
        h.num_points = (uint32_t)c.num_points;
        h.num_links = (uint32_t)c.num_links;
        h.num_entries = (uint32_t)c.num_entries;
        h.strings_len = (uint32_t)c.strings.len;
        for (size_t i = 0; i < src->num_objects; i++) {
            const char *k = src->objects[i].kind;
            h.num_regulatory += strcmp(k, "regulatory_element") == 0;
            h.num_areas += strcmp(k, "multipolygon") == 0 || strcmp(k, "area") == 0;
            h.num_obstacles += strstr(k, "bstacle") != NULL;
        }
        memcpy(out, &h, sizeof h);
        rc = mark_union_cells(out, total, flags, (uint16_t *)(out + off_extents));
        if (rc == RL_OK)
            rc = build_boundary(out, total, &bd);
        rlmap_layout at;
        h.num_boundary_cells = (uint32_t)bd.num_cells;
        h.num_local_records = (uint32_t)bd.num_locals;
        h.num_local_edges = (uint32_t)bd.num_edges;
        rlmap_layout_of(&h, &at);
        uint8_t *grown = rc == RL_OK ? calloc(1, at.total) : NULL;
        if (rc == RL_OK && !grown)
            rc = rl_error_set(RL_ENOMEM, "out of memory for a %llu-byte runtime map",
                              (unsigned long long)at.total);
        if (rc == RL_OK) {
            memcpy(grown, out, off_blocks);
            free(out);
            out = grown;
            total = at.total;
            memcpy(out + at.blocks, bd.blocks, bd.num_blocks * sizeof *bd.blocks);
            memcpy(out + at.boundary_starts, bd.starts, (bd.num_cells + 1) * sizeof *bd.starts);
            if (bd.num_locals)
                memcpy(out + at.locals, bd.locals, bd.num_locals * sizeof *bd.locals);
            if (bd.num_edges)
                memcpy(out + at.local_edges, bd.edges, bd.num_edges * sizeof *bd.edges);
            h.file_size = total;
            h.crc32 = rl_crc32(0, out + RLMAP_HEADER_SIZE, total - RLMAP_HEADER_SIZE);
            h.header_crc = rl_crc32(0, &h, offsetof(rlmap_header, header_crc));
            memcpy(out, &h, sizeof h);
        }
    }
    boundary_free(&bd);
    rl_map_idmap_free(&ids);
    free(c.order);
    free(c.lanelets);
    free(c.points);
    free(c.links);
    free(c.entries);
    rl_buf_free(&c.strings);
    free(xs);
    free(iv);
    if (rc < 0) {
        free(out);
        return rc;
    }
    *bytes_out = out;
    *len_out = total;
    return RL_OK;
}
