/* Geometry of the evaluation's motion metrics on plain arrays (see eval_geometry.h): the
 * trajectory reference, the active command, pose resampling, pair distances, intervals and
 * footprints against the lab area and the lanelets. No I/O and no decoding here, so each
 * piece is tested against hand-worked answers. */
#include "eval/eval_geometry.h"

#include "runlab/error.h"

#include <math.h>
#include <stdlib.h>

bool rl_eg_hermite(const rl_eg_traj_point *pts, size_t n, double t, double *x, double *y,
                   double *vx, double *vy)
{
    if (n == 0 || !(t >= pts[0].t) || !(t <= pts[n - 1].t))
        return false;
    /* The last point whose time is <= t. */
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (pts[mid].t <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    const rl_eg_traj_point *p0 = &pts[lo];
    if (lo == n - 1 || p0->t == t) {
        *x = p0->px, *y = p0->py, *vx = p0->vx, *vy = p0->vy;
        return true;
    }
    const rl_eg_traj_point *p1 = &pts[lo + 1];
    double h = p1->t - p0->t, s = (t - p0->t) / h;
    double s2 = s * s, s3 = s2 * s;
    double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s, h01 = -2 * s3 + 3 * s2,
           h11 = s3 - s2;
    double d00 = 6 * s2 - 6 * s, d10 = 3 * s2 - 4 * s + 1, d01 = -6 * s2 + 6 * s,
           d11 = 3 * s2 - 2 * s;
    *x = h00 * p0->px + h10 * h * p0->vx + h01 * p1->px + h11 * h * p1->vx;
    *y = h00 * p0->py + h10 * h * p0->vy + h01 * p1->py + h11 * h * p1->vy;
    *vx = (d00 * p0->px + d01 * p1->px) / h + d10 * p0->vx + d11 * p1->vx;
    *vy = (d00 * p0->py + d01 * p1->py) / h + d10 * p0->vy + d11 * p1->vy;
    return true;
}

static int activation_cmp(const void *pa, const void *pb)
{
    const rl_eg_activation *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

size_t rl_eg_activations(const rl_eg_command *cmds, size_t n, rl_eg_activation *out)
{
    /* A command can be chosen from max(received, valid_after) on; sweeping those times in
     * order and keeping the best (latest valid_after, then latest received) so far gives
     * the choice at every time. */
    for (size_t i = 0; i < n; i++)
        out[i] = (rl_eg_activation){fmax(cmds[i].received, cmds[i].valid_after), i};
    qsort(out, n, sizeof *out, activation_cmp);
    size_t count = 0;
    bool have = false;
    size_t best = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = out[k].index;
        double t = out[k].t;
        if (have && (cmds[i].valid_after < cmds[best].valid_after ||
                     (cmds[i].valid_after == cmds[best].valid_after && i < best)))
            continue;
        best = i, have = true;
        if (count > 0 && out[count - 1].t == t)
            out[count - 1].index = i;
        else
            out[count++] = (rl_eg_activation){t, i};
    }
    return count;
}

size_t rl_eg_active_at(const rl_eg_activation *act, size_t n, size_t *cursor, double t)
{
    size_t c = *cursor;
    while (c < n && act[c].t <= t)
        c++;
    *cursor = c;
    return c == 0 ? SIZE_MAX : act[c - 1].index;
}

static double wrap_angle(double a)
{
    a = fmod(a + M_PI, 2 * M_PI);
    if (a < 0)
        a += 2 * M_PI;
    return a - M_PI;
}

bool rl_eg_pose_at(const rl_eg_pose *poses, size_t n, size_t *cursor, double t, double max_gap,
                   rl_eg_pose *out)
{
    size_t c = *cursor;
    while (c + 1 < n && poses[c + 1].t <= t)
        c++;
    *cursor = c;
    if (n == 0 || poses[c].t > t)
        return false;
    const rl_eg_pose *a = &poses[c];
    if (a->t == t) {
        *out = *a;
        return true;
    }
    if (c + 1 >= n)
        return false;
    const rl_eg_pose *b = &poses[c + 1];
    double h = b->t - a->t;
    if (h > max_gap)
        return false;
    double s = (t - a->t) / h;
    out->t = t;
    out->x = a->x + s * (b->x - a->x);
    out->y = a->y + s * (b->y - a->y);
    out->yaw = wrap_angle(a->yaw + s * wrap_angle(b->yaw - a->yaw));
    return true;
}

void rl_eg_resample(const rl_eg_pose *poses, size_t n, double t0, double step, size_t count,
                    double max_gap, rl_eg_pose *out, uint8_t *valid)
{
    size_t cursor = 0;
    for (size_t i = 0; i < count; i++) {
        double t = t0 + (double)i * step;
        valid[i] = rl_eg_pose_at(poses, n, &cursor, t, max_gap, &out[i]) ? 1 : 0;
        if (!valid[i])
            out[i] = (rl_eg_pose){t, NAN, NAN, NAN};
    }
}

rl_map_box rl_eg_footprint(const rl_eg_pose *p, double length, double width)
{
    return (rl_map_box){p->x, p->y, p->yaw, length, width};
}

/* Distance from a point (dx, dy from the rectangle's centre) to a rectangle of half sizes
 * hl x hw whose length axis is (c, s). */
static double point_rect_distance(double dx, double dy, double c, double s, double hl, double hw)
{
    double lx = fabs(dx * c + dy * s) - hl, ly = fabs(-dx * s + dy * c) - hw;
    lx = lx > 0 ? lx : 0;
    ly = ly > 0 ? ly : 0;
    return sqrt(lx * lx + ly * ly);
}

static double rect_distance(const rl_eg_pose *a, double ca, double sa, const rl_eg_pose *b,
                            double cb, double sb, double length, double width)
{
    double hl = length / 2, hw = width / 2;
    double dx = b->x - a->x, dy = b->y - a->y;
    /* Separating axes: the two rectangles' length and width directions. */
    const double axes[4][2] = {{ca, sa}, {-sa, ca}, {cb, sb}, {-sb, cb}};
    bool separated = false;
    for (int k = 0; k < 4 && !separated; k++) {
        double ux = axes[k][0], uy = axes[k][1];
        double ea = hl * fabs(ca * ux + sa * uy) + hw * fabs(-sa * ux + ca * uy);
        double eb = hl * fabs(cb * ux + sb * uy) + hw * fabs(-sb * ux + cb * uy);
        separated = fabs(dx * ux + dy * uy) > ea + eb;
    }
    if (!separated)
        return 0;
    /* Apart, two convex polygons are closest at a corner of one of them. */
    double best = INFINITY;
    for (int i = 0; i < 4; i++) {
        double u = (i & 1) ? hl : -hl, v = (i & 2) ? hw : -hw;
        double ax = a->x + u * ca - v * sa, ay = a->y + u * sa + v * ca;
        double bx = b->x + u * cb - v * sb, by = b->y + u * sb + v * cb;
        best = fmin(best, point_rect_distance(ax - b->x, ay - b->y, cb, sb, hl, hw));
        best = fmin(best, point_rect_distance(bx - a->x, by - a->y, ca, sa, hl, hw));
    }
    return best;
}

double rl_eg_rect_distance(const rl_eg_pose *a, const rl_eg_pose *b, double length, double width)
{
    return rect_distance(a, cos(a->yaw), sin(a->yaw), b, cos(b->yaw), sin(b->yaw), length, width);
}

void rl_eg_pair_distance(const rl_eg_pose *a, const uint8_t *va, const rl_eg_pose *b,
                         const uint8_t *vb, size_t n, double length, double width,
                         double exact_within, double *dist)
{
    for (size_t i = 0; i < n; i++) {
        const double csa[1][2] = {{cos(a[i].yaw), sin(a[i].yaw)}};
        const double csb[1][2] = {{cos(b[i].yaw), sin(b[i].yaw)}};
        rl_eg_pair_distance_trig(&a[i], &va[i], csa, &b[i], &vb[i], csb, 1, length, width,
                                 exact_within, &dist[i]);
    }
}

void rl_eg_yaw_trig(const rl_eg_pose *p, size_t n, double (*cs)[2])
{
    for (size_t i = 0; i < n; i++)
        cs[i][0] = cos(p[i].yaw), cs[i][1] = sin(p[i].yaw);
}

void rl_eg_pair_distance_trig(const rl_eg_pose *a, const uint8_t *va, const double (*csa)[2],
                              const rl_eg_pose *b, const uint8_t *vb, const double (*csb)[2],
                              size_t n, double length, double width, double exact_within,
                              double *dist)
{
    double diameter = hypot(length, width);
    for (size_t i = 0; i < n; i++) {
        if (!va[i] || !vb[i]) {
            dist[i] = NAN;
            continue;
        }
        double dx = a[i].x - b[i].x, dy = a[i].y - b[i].y;
        double clear = sqrt(dx * dx + dy * dy) - diameter;
        if (clear > exact_within) {
            dist[i] = clear;
            continue;
        }
        dist[i] = rect_distance(&a[i], csa[i][0], csa[i][1], &b[i], csb[i][0], csb[i][1], length,
                                width);
    }
}

size_t rl_eg_pair_distance_near(const rl_eg_pose *a, const uint8_t *va, const double (*csa)[2],
                                const rl_eg_pose *b, const uint8_t *vb, const double (*csb)[2],
                                size_t n, double length, double width, double exact_within,
                                double min_distance, double *dist)
{
    /* Each rectangle lies in its circumscribed circle, so the distance is at least the
     * circles' clearance, which is also what rl_eg_pair_distance_trig gives beyond
     * exact_within. The minimum over all times is at most any distance found, first at the
     * time the centres come closest: a time whose clearance lies above both that and
     * min_distance (by far more than rounding) can neither be the first minimum nor a
     * collision. */
    double diameter = hypot(length, width);
    double closest2 = INFINITY;
    size_t at = n;
    for (size_t i = 0; i < n; i++) {
        double dx = a[i].x - b[i].x, dy = a[i].y - b[i].y, d2 = dx * dx + dy * dy;
        if (va[i] && vb[i] && d2 < closest2)
            closest2 = d2, at = i;
    }
    if (at == n || !(sqrt(closest2) - diameter <= exact_within)) {
        /* Never within exact_within: the clearances themselves are the answer. */
        rl_eg_pair_distance_trig(a, va, csa, b, vb, csb, n, length, width, exact_within, dist);
        return 0;
    }
    double upper = rect_distance(&a[at], csa[at][0], csa[at][1], &b[at], csb[at][0], csb[at][1],
                                 length, width);
    /* Beyond centre distance `reach` the clearance, a lower bound of the value there,
     * exceeds max(upper, min_distance): compared squared, with a margin far above
     * rounding. */
    double margin = 1e-9 * (1 + diameter), reach2 = 0;
    size_t exact = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || dist[i - 1] < upper) {
            upper = i == 0 ? upper : dist[i - 1];
            double reach = fmax(upper, min_distance) + diameter + margin;
            reach2 = reach * reach;
        }
        if (!va[i] || !vb[i]) {
            dist[i] = NAN;
            continue;
        }
        double dx = a[i].x - b[i].x, dy = a[i].y - b[i].y, d2 = dx * dx + dy * dy;
        if (d2 > reach2) {
            dist[i] = INFINITY;
            continue;
        }
        double clear = sqrt(d2) - diameter;
        if (clear > exact_within) {
            dist[i] = clear;
            continue;
        }
        dist[i] = rect_distance(&a[i], csa[i][0], csa[i][1], &b[i], csb[i][0], csb[i][1], length,
                                width);
        exact++;
    }
    return exact;
}

size_t rl_eg_closest_approaches(const double *t, const double *d, size_t n, double near,
                                double end_factor, double *at, double *ad)
{
    size_t k = 0;
    bool in = false;
    for (size_t i = 0; i < n; i++) {
        double v = d[i];
        if (isnan(v) || (in && v > near * end_factor)) {
            in = false;
        } else if (!in && v <= near) {
            in = true;
            at[k] = t[i];
            ad[k++] = v;
        } else if (in && v < ad[k - 1]) {
            at[k - 1] = t[i];
            ad[k - 1] = v;
        }
    }
    return k;
}

int rl_eg_intervals(const double *t, const uint8_t *bad, const double *value, size_t n,
                    double max_gap, double min_duration, rl_eg_interval **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    size_t cap = 0;
    rl_eg_interval cur = {0};
    bool open = false;
    for (size_t i = 0; i <= n; i++) {
        bool continues = i < n && bad[i] && open && t[i] - t[i - 1] <= max_gap;
        if (open && !continues) {
            if (cur.t1 - cur.t0 >= min_duration) {
                if (*count == cap) {
                    size_t ncap = cap ? cap * 2 : 8;
                    rl_eg_interval *grown = realloc(*out, ncap * sizeof *grown);
                    if (!grown) {
                        free(*out);
                        *out = NULL;
                        *count = 0;
                        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for intervals");
                    }
                    *out = grown;
                    cap = ncap;
                }
                (*out)[(*count)++] = cur;
            }
            open = false;
        }
        if (i == n || !bad[i])
            continue;
        double v = value ? value[i] : NAN;
        if (!open) {
            cur = (rl_eg_interval){t[i], t[i], v, t[i], i, i};
            open = true;
            continue;
        }
        cur.t1 = t[i];
        cur.last = i;
        if (v > cur.worst || (isnan(cur.worst) && !isnan(v)))
            cur.worst = v, cur.worst_t = t[i];
    }
    return RL_OK;
}

/* Squared distance from p to segment ab. */
static double seg_dist2(rl_map_point p, rl_map_point a, rl_map_point b)
{
    double dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
    double u = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0;
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    double ex = a.x + u * dx - p.x, ey = a.y + u * dy - p.y;
    return ex * ex + ey * ey;
}

/* Distance to the polygon's boundary, and whether p is inside (boundary inside). */
static double polygon_where(rl_map_point p, const rl_map_point *poly, size_t n, bool *inside)
{
    bool in = false;
    double best = INFINITY;
    for (size_t i = 0, j = n - 1; i < n; j = i++) {
        rl_map_point a = poly[j], b = poly[i];
        if ((b.y > p.y) != (a.y > p.y) &&
            p.x < (a.x - b.x) * (p.y - b.y) / (a.y - b.y) + b.x)
            in = !in;
        double d2 = seg_dist2(p, a, b);
        best = d2 < best ? d2 : best; /* fmin's answer (never NaN here), without the call */
    }
    double d = sqrt(best);
    *inside = in || d <= 1e-12;
    return d;
}

/* Calls visit(ctx, point) for every corner and every edge point `step` apart; stops and
 * returns the largest value seen. */
typedef double (*outside_fn)(const void *ctx, rl_map_point p);

static double sample_footprint(const rl_map_box *b, double step, outside_fn fn, const void *ctx)
{
    rl_map_point c[4];
    rl_map_box_corners(b, c);
    double worst = 0;
    for (int e = 0; e < 4; e++) {
        rl_map_point a = c[e], z = c[(e + 1) % 4];
        double len = hypot(z.x - a.x, z.y - a.y);
        size_t k = (size_t)ceil(len / step);
        if (k < 1)
            k = 1;
        for (size_t i = 0; i < k; i++) {
            double s = (double)i / (double)k;
            rl_map_point p = {a.x + s * (z.x - a.x), a.y + s * (z.y - a.y)};
            worst = fmax(worst, fn(ctx, p));
        }
    }
    return worst;
}

typedef struct polygon_ctx {
    const rl_map_point *poly;
    size_t n;
} polygon_ctx;

static double polygon_outside(const void *ctx, rl_map_point p)
{
    const polygon_ctx *pc = ctx;
    bool inside;
    double d = polygon_where(p, pc->poly, pc->n, &inside);
    return inside ? 0 : d;
}

/* Proper crossing of segments ab and cd (touching does not count). */
static bool segments_cross(rl_map_point a, rl_map_point b, rl_map_point c, rl_map_point d)
{
    double d1 = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
    double d2 = (b.x - a.x) * (d.y - a.y) - (b.y - a.y) * (d.x - a.x);
    double d3 = (d.x - c.x) * (a.y - c.y) - (d.y - c.y) * (a.x - c.x);
    double d4 = (d.x - c.x) * (b.y - c.y) - (d.y - c.y) * (b.x - c.x);
    return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
}

double rl_eg_outside_polygon(const rl_map_box *b, const rl_map_point *poly, size_t n, double step)
{
    if (n < 3)
        return 0;
    /* Most footprints lie well inside: their circumscribed circle does. */
    bool centre_inside;
    double clearance = polygon_where((rl_map_point){b->x, b->y}, poly, n, &centre_inside);
    /* max(l, w) <= hypot(l, w) <= l + w decide most without the call. */
    double lo = fmax(fabs(b->length), fabs(b->width)), hi = fabs(b->length) + fabs(b->width);
    if (centre_inside && (clearance >= 0.5 * hi ||
                          (clearance >= 0.5 * lo && clearance >= 0.5 * hypot(b->length, b->width))))
        return 0;
    polygon_ctx ctx = {poly, n};
    double worst = sample_footprint(b, step, polygon_outside, &ctx);
    if (worst > 0)
        return worst;
    /* Every sample inside: the polygon may still poke into the rectangle between them. */
    rl_map_point c[4];
    rl_map_box_corners(b, c);
    double cy = cos(b->yaw), sy = sin(b->yaw);
    for (size_t i = 0; i < n; i++) {
        double dx = poly[i].x - b->x, dy = poly[i].y - b->y;
        double lx = dx * cy + dy * sy, ly = -dx * sy + dy * cy;
        if (fabs(lx) < b->length / 2 - 1e-12 && fabs(ly) < b->width / 2 - 1e-12)
            return step / 16;
        for (int e = 0; e < 4; e++)
            if (segments_cross(poly[i], poly[(i + 1) % n], c[e], c[(e + 1) % 4]))
                return step / 16;
    }
    return 0;
}

/* Perimeter samples of a footprint: at most this many. */
#define PERIMETER_CAP 1024

/* How far a point lies off the lanelets (0 on them). */
static double clearance(const rl_map *map, rl_map_point p)
{
    rl_map_where w;
    rl_map_where_is(map, p.x, p.y, &w);
    return w.inside ? 0 : -w.distance;
}

double rl_eg_outside_lanelets(const rl_map *map, rl_map_inside_memo *memo, const rl_map_box *b,
                              double gap_tolerance, double step)
{
    if (memo ? rl_map_footprint_inside_memo(memo, b, gap_tolerance)
             : rl_map_footprint_inside(map, b, gap_tolerance))
        return 0;
    /* The clearance of a point (rl_map_where_is) costs far more than whether it is on a
     * lanelet, so the clearance is taken only where the worst can be: at the corners that
     * are out and in the middle of every stretch of the perimeter that is out. */
    rl_map_point c[4];
    rl_map_box_corners(b, c);
    double perimeter = 2 * (b->length + b->width);
    if (perimeter / step > PERIMETER_CAP - 8)
        step = perimeter / (PERIMETER_CAP - 8);
    rl_map_point pts[PERIMETER_CAP];
    uint8_t out[PERIMETER_CAP], corner[PERIMETER_CAP];
    size_t n = 0;
    for (int e = 0; e < 4; e++) {
        rl_map_point a = c[e], z = c[(e + 1) % 4];
        size_t k = (size_t)ceil(hypot(z.x - a.x, z.y - a.y) / step);
        if (k < 1)
            k = 1;
        for (size_t i = 0; i < k && n < PERIMETER_CAP; i++, n++) {
            double s = (double)i / (double)k;
            pts[n] = (rl_map_point){a.x + s * (z.x - a.x), a.y + s * (z.y - a.y)};
            out[n] = !rl_map_point_drivable(map, pts[n].x, pts[n].y);
            corner[n] = i == 0 ? 1 : i == k / 2 ? 2 : 0; /* 1 corner, 2 edge middle */
        }
    }
    double worst = 0;
    size_t start = n; /* a sample that is in: no stretch out runs past it */
    for (size_t i = 0; i < n && start == n; i++)
        if (!out[i])
            start = i;
    if (start == n) { /* all out: the corners and the middle of each edge */
        for (size_t i = 0; i < n; i++)
            if (corner[i] == 1 || corner[i] == 2)
                worst = fmax(worst, clearance(map, pts[i]));
        return worst > 0 ? worst : step / 16;
    }
    for (size_t j = 0; j < n;) {
        size_t i = (start + j) % n;
        if (!out[i]) {
            j++;
            continue;
        }
        size_t len = 0;
        while (j + len < n && out[(start + j + len) % n])
            len++;
        size_t mid = (i + len / 2) % n;
        for (size_t q = 0; q < len; q++) {
            size_t k = (i + q) % n;
            if (corner[k] == 1 || k == mid)
                worst = fmax(worst, clearance(map, pts[k]));
        }
        j += len;
    }
    return worst > 0 ? worst : step / 16;
}
