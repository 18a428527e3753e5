/* runlab's example planners and problems (see rlx.h): sampling-based planners for point
 * robots and rigid bodies among boxes, written against runlab/bench.h only, so they double
 * as a worked example of the planner vtable, progress properties and run properties. The
 * planners see the robot only through its state space (distance, interpolation, sampling,
 * validity), so one RRT serves points in 2D/3D, SE(2) rectangles and yawing 3D boxes. */
#include "rlx.h"
#include "rlx_internal.h"

#include "runlab/error.h"
#include "runlab/time.h"

#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- geometry ------------------------------------------------------------------------ */

static bool in_box(const box *b, const double *q, int dim)
{
    for (int i = 0; i < dim; i++)
        if (q[i] < b->lo[i] || q[i] > b->hi[i])
            return false;
    return true;
}

/* The rectangle's two unit axes. */
static void rect_axes(const rlx_rect *r, double u[2][2])
{
    double c = cos(r->theta), s = sin(r->theta);
    u[0][0] = c, u[0][1] = s;
    u[1][0] = -s, u[1][1] = c;
}

/* Separating-axis test. Two convex polygons are disjoint iff their projections on some
 * edge normal are; a rectangle has two, so four axes decide. Touching counts as overlap,
 * as for a point on a box's face. */
bool rlx_rect_overlap(const rlx_rect *a, const rlx_rect *b)
{
    double ua[2][2], ub[2][2];
    rect_axes(a, ua);
    rect_axes(b, ub);
    double d[2] = {b->cx - a->cx, b->cy - a->cy};
    const double *axes[4] = {ua[0], ua[1], ub[0], ub[1]};
    for (int k = 0; k < 4; k++) {
        const double *n = axes[k];
        double ra = a->hx * fabs(ua[0][0] * n[0] + ua[0][1] * n[1]) +
                    a->hy * fabs(ua[1][0] * n[0] + ua[1][1] * n[1]);
        double rb = b->hx * fabs(ub[0][0] * n[0] + ub[0][1] * n[1]) +
                    b->hy * fabs(ub[1][0] * n[0] + ub[1][1] * n[1]);
        if (fabs(d[0] * n[0] + d[1] * n[1]) > ra + rb)
            return false;
    }
    return true;
}

static void rect_corners(const rlx_rect *r, double c[4][2])
{
    double u[2][2];
    rect_axes(r, u);
    static const double SX[4] = {1, -1, -1, 1}, SY[4] = {1, 1, -1, -1};
    for (int k = 0; k < 4; k++) {
        c[k][0] = r->cx + SX[k] * r->hx * u[0][0] + SY[k] * r->hy * u[1][0];
        c[k][1] = r->cy + SX[k] * r->hx * u[0][1] + SY[k] * r->hy * u[1][1];
    }
}

static double point_segment_distance(const double *p, const double *a, const double *b)
{
    double ab[2] = {b[0] - a[0], b[1] - a[1]}, ap[2] = {p[0] - a[0], p[1] - a[1]};
    double l2 = ab[0] * ab[0] + ab[1] * ab[1];
    double t = l2 > 0 ? fmax(0, fmin(1, (ap[0] * ab[0] + ap[1] * ab[1]) / l2)) : 0;
    return hypot(ap[0] - t * ab[0], ap[1] - t * ab[1]);
}

/* Between disjoint convex polygons the nearest points include a vertex of one, so the
 * distance is the least vertex-to-edge distance both ways. */
double rlx_rect_distance(const rlx_rect *a, const rlx_rect *b)
{
    if (rlx_rect_overlap(a, b))
        return 0;
    double ca[4][2], cb[4][2];
    rect_corners(a, ca);
    rect_corners(b, cb);
    double best = INFINITY;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            best = fmin(best, point_segment_distance(ca[i], cb[j], cb[(j + 1) % 4]));
            best = fmin(best, point_segment_distance(cb[i], ca[j], ca[(j + 1) % 4]));
        }
    return best;
}

/* The footprint of a rigid body at state q (the xy rectangle) and of an obstacle. */
static rlx_rect body_rect(const rlx_problem *p, const double *q)
{
    return (rlx_rect){q[0], q[1], p->half[0], p->half[1], q[p->yaw]};
}

static rlx_rect box_rect(const box *b)
{
    return (rlx_rect){(b->lo[0] + b->hi[0]) / 2, (b->lo[1] + b->hi[1]) / 2,
                      (b->hi[0] - b->lo[0]) / 2, (b->hi[1] - b->lo[1]) / 2, 0};
}

/* Gap between the body's z extent and the box's (negative when they overlap). */
static double z_gap(const rlx_problem *p, const double *q, const box *b)
{
    return fmax(b->lo[2] - (q[2] + p->half[2]), (q[2] - p->half[2]) - b->hi[2]);
}

/* A box that only yaws and an axis-aligned box share the z axis, so of the 15 axes of the
 * 3D separating-axis test only x, y, z and the body's two horizontal axes remain (the edge
 * cross products are all among them): the boxes overlap iff their z extents and their
 * footprints do. The test is exact, not an approximation. */
static bool body_hits(const rlx_problem *p, const double *q, const box *b)
{
    if (p->wdim == 3 && z_gap(p, q, b) > 0)
        return false;
    rlx_rect r = body_rect(p, q), o = box_rect(b);
    return rlx_rect_overlap(&r, &o);
}

/* The box grown by m on every side: it contains every point within m of the box. */
static box grow(const box *b, double m)
{
    box g;
    for (int i = 0; i < MAX_WDIM; i++)
        g.lo[i] = b->lo[i] - m, g.hi[i] = b->hi[i] + m;
    return g;
}

/* Euclidean distance between the body and a box: between two prisms over the same axis
 * it splits into the footprints' distance and the z gap. */
static double body_distance(const rlx_problem *p, const double *q, const box *b)
{
    rlx_rect r = body_rect(p, q), o = box_rect(b);
    double dxy = rlx_rect_distance(&r, &o);
    double dz = p->wdim == 3 ? fmax(z_gap(p, q, b), 0) : 0;
    return hypot(dxy, dz);
}

/* ---- the state space ----------------------------------------------------------------- */

/* b - a wrapped into [-pi, pi): the shorter way round. */
static double angle_diff(double a, double b)
{
    double d = fmod(b - a + M_PI, 2 * M_PI);
    if (d < 0)
        d += 2 * M_PI;
    return d - M_PI;
}

static double wrap_angle(double a)
{
    return angle_diff(0, a);
}

/* sqrt(|dp|^2 + (w dtheta)^2) with the heading difference taken the shorter way round.
 * w is the footprint's circumradius, so w dtheta bounds how far a corner moves when the
 * body turns: a distance bounds the displacement of every point of the body (within a
 * factor sqrt 2), which makes one motion-check resolution mean the same for turns and
 * translations. */
static double dist(const rlx_problem *p, const double *a, const double *b)
{
    if (p->robot == ROBOT_CAR) { /* forward only: the shortest Dubins curve's length */
        rlx_dubins d;
        rlx_dubins_shortest(a, b, p->turning_radius, &d);
        return rlx_dubins_length(&d);
    }
    double s = 0;
    for (int i = 0; i < p->dim; i++) {
        double d = i == p->yaw ? p->yaw_weight * angle_diff(a[i], b[i]) : b[i] - a[i];
        s += d * d;
    }
    return sqrt(s);
}

/* The state a fraction t of the way from a to b: straight in position, the shorter way
 * round in heading. */
static void interpolate(const rlx_problem *p, const double *a, const double *b, double t,
                        double *out)
{
    if (p->robot == ROBOT_CAR) {
        rlx_dubins d;
        rlx_dubins_shortest(a, b, p->turning_radius, &d);
        memset(out, 0, MAX_DIM * sizeof *out);
        rlx_dubins_at(&d, t * rlx_dubins_length(&d), out);
        return;
    }
    for (int i = 0; i < MAX_DIM; i++)
        out[i] = i >= p->dim   ? 0
                 : i == p->yaw ? wrap_angle(a[i] + t * angle_diff(a[i], b[i]))
                               : a[i] + t * (b[i] - a[i]);
}

/* Whether the robot at q is in bounds and clear of the obstacles; a rigid body must also
 * stay `margin` away from them (conservatively: from boxes grown by margin). */
static bool valid_margin(const rlx_problem *p, const double *q, double margin)
{
    if (p->robot == ROBOT_POINT) {
        for (int i = 0; i < p->dim; i++)
            if (q[i] < 0 || q[i] > 1)
                return false;
        for (size_t k = 0; k < p->n_boxes; k++)
            if (in_box(&p->boxes[k], q, p->dim))
                return false;
        return true;
    }
    /* the whole body inside [0,1]^wdim */
    double c[4][2], lo = margin, hi = 1 - margin;
    rlx_rect r = body_rect(p, q);
    rect_corners(&r, c);
    for (int k = 0; k < 4; k++)
        if (c[k][0] < lo || c[k][0] > hi || c[k][1] < lo || c[k][1] > hi)
            return false;
    if (p->wdim == 3 && (q[2] - p->half[2] < lo || q[2] + p->half[2] > hi))
        return false;
    for (size_t k = 0; k < p->n_boxes; k++) {
        box g = grow(&p->boxes[k], margin);
        if (body_hits(p, q, &g))
            return false;
    }
    return true;
}

static bool valid(const rlx_problem *p, const double *q)
{
    return valid_margin(p, q, 0);
}

/* Distance from the robot to the nearest obstacle (the workspace's walls excluded). */
static double clearance(const rlx_problem *p, const double *q)
{
    double best = INFINITY;
    for (size_t k = 0; k < p->n_boxes; k++) {
        if (p->robot != ROBOT_POINT) {
            best = fmin(best, body_distance(p, q, &p->boxes[k]));
            continue;
        }
        double s = 0;
        for (int i = 0; i < p->dim; i++) {
            double d = fmax(fmax(p->boxes[k].lo[i] - q[i], q[i] - p->boxes[k].hi[i]), 0);
            s += d * d;
        }
        best = fmin(best, sqrt(s));
    }
    return best;
}

/* Checks states along the motion no further apart than res (in the distance above), both
 * ends included, each with the given margin. */
static bool motion_valid(const rlx_problem *p, const double *a, const double *b, double res,
                         double margin)
{
    rlx_dubins curve; /* a car's: computed once for the whole motion */
    double d;
    if (p->robot == ROBOT_CAR) {
        rlx_dubins_shortest(a, b, p->turning_radius, &curve);
        d = rlx_dubins_length(&curve);
    } else {
        d = dist(p, a, b);
    }
    int n = (int)ceil(d / res);
    double q[MAX_DIM] = {0};
    for (int s = 1; s <= n; s++) {
        if (p->robot == ROBOT_CAR)
            rlx_dubins_at(&curve, d * s / n, q);
        else
            interpolate(p, a, b, (double)s / n, q);
        if (!valid_margin(p, q, margin))
            return false;
    }
    return valid_margin(p, a, margin);
}

/* The planners' motion check. Checking states only can let a turning body clip an
 * obstacle's corner between two of them, and a finer re-check would then find the path in
 * collision. Every state of a motion is within res/2 (in dist) of a checked one, and by
 * the choice of the heading weight no point of the body is then more than sqrt(2) res/2
 * from where it was checked; so rigid bodies are checked with that margin (set at
 * creation), and a motion that passes is free as a continuous motion, at any resolution.
 * Point robots keep the plain discrete check of OMPL's DiscreteMotionValidator. */
static bool motion_ok(const rlx_problem *p, const double *a, const double *b)
{
    return motion_valid(p, a, b, p->resolution, p->margin);
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform over the state space's bounds: [0,1] per position coordinate, [-pi, pi) for the
 * heading. */
static void sample(const rlx_problem *pr, uint64_t *rng, double *q)
{
    for (int i = 0; i < MAX_DIM; i++)
        q[i] = i >= pr->dim ? 0 : i == pr->yaw ? M_PI * (2 * rng_unit(rng) - 1) : rng_unit(rng);
}

/* ---- problems ------------------------------------------------------------------------ */

static const char *const PROBLEMS[] = {
    "maze2d",       "narrow2d",       "narrow3d",          "cluttered2d",       "cluttered3d",
    "maze2d_rigid", "narrow2d_rigid", "cluttered2d_rigid", "cluttered3d_rigid", "car2d",
    NULL};

const char *const *rlx_problem_names(void)
{
    return PROBLEMS;
}

static void add_box(rlx_problem *p, double x0, double y0, double z0, double x1, double y1,
                    double z1)
{
    if (p->n_boxes >= MAX_BOXES)
        return;
    box *b = &p->boxes[p->n_boxes++];
    b->lo[0] = x0, b->lo[1] = y0, b->lo[2] = z0;
    b->hi[0] = x1, b->hi[1] = y1, b->hi[2] = z1;
}

/* Makes p a rigid body of the given size (full extents), heading `yaw0` at the start and
 * `yaw1` at the goal. */
static void make_rigid(rlx_problem *p, double lx, double ly, double lz, double yaw0, double yaw1)
{
    p->robot = ROBOT_RIGID;
    p->yaw = p->wdim;
    p->dim = p->wdim + 1;
    p->half[0] = lx / 2, p->half[1] = ly / 2, p->half[2] = p->wdim == 3 ? lz / 2 : 0;
    p->yaw_weight = hypot(p->half[0], p->half[1]);
    p->margin = p->resolution * M_SQRT1_2;
    p->start[p->yaw] = wrap_angle(yaw0);
    p->goal[p->yaw] = wrap_angle(yaw1);
}

/* Makes p a forward-only car: a rigid lx x ly rectangle in SE(2) whose motions are Dubins
 * curves of turning radius rho. Along a curve a point of the body at distance r from the
 * reference point moves at most (1 + r / rho) per unit of arc length, and every state is
 * within res/2 of a checked one, so states are kept that far from obstacles. */
static void make_car(rlx_problem *p, double lx, double ly, double rho, double yaw0, double yaw1)
{
    make_rigid(p, lx, ly, 0, yaw0, yaw1);
    p->robot = ROBOT_CAR;
    p->turning_radius = rho;
    p->margin = (1 + p->yaw_weight / rho) * p->resolution / 2 * 1.001;
}

/* A field of random boxes of half sizes 0.02 to 0.02 + span, the same every time (it is
 * part of the problem, not of a run), kept `margin` away from the start and the goal on
 * some axis. */
static void cluttered(rlx_problem *p, size_t count, double span, double margin)
{
    uint64_t s = 12345;
    while (p->n_boxes < count) {
        box b;
        for (int i = 0; i < MAX_WDIM; i++) {
            double c = rng_unit(&s), h = 0.02 + span * rng_unit(&s);
            b.lo[i] = i < p->wdim ? c - h : 0;
            b.hi[i] = i < p->wdim ? c + h : 0;
        }
        box grown;
        for (int i = 0; i < MAX_WDIM; i++)
            grown.lo[i] = b.lo[i] - margin, grown.hi[i] = b.hi[i] + margin;
        if (in_box(&grown, p->start, p->wdim) || in_box(&grown, p->goal, p->wdim))
            continue;
        p->boxes[p->n_boxes++] = b;
    }
}

static void describe(rlx_problem *p)
{
    char *d = p->describe;
    size_t cap = sizeof p->describe;
    int n;
    if (p->robot == ROBOT_POINT)
        n = snprintf(d, cap, "Problem %s: point robot in [0,1]^%d\nstart:", p->name, p->wdim);
    else if (p->robot == ROBOT_CAR)
        n = snprintf(d, cap,
                     "Problem %s: car, a %g x %g rectangle in [0,1]^2, state (x, y, yaw), "
                     "forward only with turning radius %g (Dubins curves)\n"
                     "collision: separating-axis test against the boxes, body inside the "
                     "bounds\nstart:",
                     p->name, 2 * p->half[0], 2 * p->half[1], p->turning_radius);
    else if (p->wdim == 2)
        n = snprintf(d, cap,
                     "Problem %s: rigid %g x %g rectangle in [0,1]^2, state (x, y, yaw) in SE(2)\n"
                     "collision: separating-axis test against the boxes, body inside the "
                     "bounds\nstart:",
                     p->name, 2 * p->half[0], 2 * p->half[1]);
    else
        n = snprintf(d, cap,
                     "Problem %s: rigid %g x %g x %g box in [0,1]^3, state (x, y, z, yaw)\n"
                     "collision: exact separating-axis test (z extents and footprints) against "
                     "the boxes, body inside the bounds\nstart:",
                     p->name, 2 * p->half[0], 2 * p->half[1], 2 * p->half[2]);
    for (int i = 0; i < p->dim; i++)
        n += snprintf(d + n, cap - (size_t)n, " %g", p->start[i]);
    n += snprintf(d + n, cap - (size_t)n, "\ngoal:");
    for (int i = 0; i < p->dim; i++)
        n += snprintf(d + n, cap - (size_t)n, " %g", p->goal[i]);
    if (p->robot == ROBOT_RIGID)
        n += snprintf(d + n, cap - (size_t)n,
                      "\ndistance: sqrt(|d(position)|^2 + (%g dyaw)^2), yaw the shorter way round",
                      p->yaw_weight);
    if (p->robot == ROBOT_CAR)
        n += snprintf(d + n, cap - (size_t)n,
                      "\ndistance: length of the shortest forward Dubins curve (not symmetric)");
    n += snprintf(
        d + n, cap - (size_t)n,
        "\ngoal radius: %g\nobstacles: %zu axis-aligned boxes\nmotion check resolution: %g",
        p->goal_radius, p->n_boxes, p->resolution);
    if (p->robot != ROBOT_POINT)
        n += snprintf(d + n, cap - (size_t)n,
                      ", states kept %g from obstacles so that motions are free continuously",
                      p->margin);
    snprintf(d + n, cap - (size_t)n, "\n");
}

rlx_problem *rlx_problem_new(const char *name)
{
    rlx_problem *p = calloc(1, sizeof *p);
    if (!p) {
        rl_error_set(RL_ENOMEM, "out of memory");
        return NULL;
    }
    snprintf(p->name, sizeof p->name, "%s", name);
    p->robot = ROBOT_POINT;
    p->yaw = -1;
    p->goal_radius = 0.02;
    p->resolution = 0.005;
    if (strcmp(name, "maze2d") == 0 || strcmp(name, "maze2d_rigid") == 0) {
        p->wdim = p->dim = 2;
        /* five walls with gaps on alternating sides */
        for (int w = 0; w < 5; w++) {
            double y = 0.15 + 0.17 * w;
            if (w % 2 == 0)
                add_box(p, 0.0, y, 0, 0.85, y + 0.03, 0);
            else
                add_box(p, 0.15, y, 0, 1.0, y + 0.03, 0);
        }
        if (name[6] == '_') {
            /* 0.14 long: too long to turn round in a 0.14 high corridor, so it turns in the
             * 0.15 wide columns by the gaps; it ends facing the other way. */
            p->start[0] = 0.12, p->start[1] = 0.075;
            p->goal[0] = 0.5, p->goal[1] = 0.93;
            make_rigid(p, 0.14, 0.03, 0, 0, M_PI);
        } else {
            p->start[0] = 0.05, p->start[1] = 0.05;
            p->goal[0] = 0.95, p->goal[1] = 0.95;
        }
    } else if (strcmp(name, "narrow2d") == 0) {
        /* a 0.03 wide, 0.1 long passage through a wall; start and goal are off its axis,
         * on either side, so the straight line between them hits the wall */
        p->wdim = p->dim = 2;
        p->start[0] = 0.1, p->start[1] = 0.2;
        p->goal[0] = 0.9, p->goal[1] = 0.8;
        add_box(p, 0.45, 0.0, 0, 0.55, 0.485, 0);
        add_box(p, 0.45, 0.515, 0, 0.55, 1.0, 0);
    } else if (strcmp(name, "narrow2d_rigid") == 0) {
        /* a 0.06 slot in a 0.06 thick wall; the 0.12 x 0.03 body starts and ends across
         * it, so it must turn to within about 10 degrees of the slot's axis to pass */
        p->wdim = p->dim = 2;
        p->start[0] = 0.2, p->start[1] = 0.5;
        p->goal[0] = 0.8, p->goal[1] = 0.5;
        add_box(p, 0.47, 0.0, 0, 0.53, 0.47, 0);
        add_box(p, 0.47, 0.53, 0, 0.53, 1.0, 0);
        make_rigid(p, 0.12, 0.03, 0, M_PI / 2, M_PI / 2);
    } else if (strcmp(name, "narrow3d") == 0) {
        p->wdim = p->dim = 3;
        p->start[0] = 0.1, p->start[1] = 0.15, p->start[2] = 0.85;
        /* start and goal in the same corner on either side: the straight line between
         * them hits the wall far from its hole */
        p->goal[0] = 0.9, p->goal[1] = 0.15, p->goal[2] = 0.85;
        double h0 = 0.47, h1 = 0.53; /* a square hole in a wall */
        add_box(p, 0.48, 0, 0, 0.52, h0, 1);
        add_box(p, 0.48, h1, 0, 0.52, 1, 1);
        add_box(p, 0.48, h0, 0, 0.52, h1, h0);
        add_box(p, 0.48, h0, h1, 0.52, h1, 1);
    } else if (strcmp(name, "cluttered2d") == 0 || strcmp(name, "cluttered3d") == 0) {
        p->wdim = p->dim = name[9] == '2' ? 2 : 3;
        for (int i = 0; i < p->dim; i++)
            p->start[i] = 0.05, p->goal[i] = 0.95;
        cluttered(p, p->dim == 2 ? 30 : 40, 0.05, 0.05);
    } else if (strcmp(name, "cluttered2d_rigid") == 0 || strcmp(name, "cluttered3d_rigid") == 0) {
        p->wdim = p->dim = name[9] == '2' ? 2 : 3;
        double e = p->wdim == 2 ? 0.1 : 0.15; /* clear of the bounds in any heading */
        for (int i = 0; i < p->wdim; i++)
            p->start[i] = e, p->goal[i] = 1 - e;
        make_rigid(p, p->wdim == 2 ? 0.12 : 0.2, 0.04, 0.04, 0, M_PI / 2);
        /* boxes keep clear of the body at the start and goal in any heading */
        cluttered(p, p->wdim == 2 ? 30 : 60, p->wdim == 2 ? 0.05 : 0.08,
                  0.01 + fmax(p->yaw_weight, p->half[2]));
    } else if (strcmp(name, "car2d") == 0) {
        /* a car, forward only with a turning radius, starts facing away from the goal and
         * must turn round, pass a gap in a wall off the straight line and end heading down */
        p->wdim = p->dim = 2;
        p->start[0] = 0.2, p->start[1] = 0.25;
        p->goal[0] = 0.8, p->goal[1] = 0.3;
        add_box(p, 0.45, 0.0, 0, 0.55, 0.6, 0);
        add_box(p, 0.45, 0.8, 0, 0.55, 1.0, 0);
        make_car(p, 0.08, 0.04, 0.1, M_PI, -M_PI / 2);
    } else {
        char list[256];
        size_t n = 0;
        list[0] = '\0';
        for (int i = 0; PROBLEMS[i] && n < sizeof list; i++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", PROBLEMS[i]);
        free(p);
        rl_error_set(RL_ENOENT, "unknown problem '%s' (built-in: %s)", name, list);
        return NULL;
    }
    describe(p);
    return p;
}

void rlx_problem_free(rlx_problem *p)
{
    free(p);
}

const char *rlx_problem_describe(const rlx_problem *p)
{
    return p->describe;
}

int rlx_problem_dimension(const rlx_problem *p)
{
    return p->dim;
}

size_t rlx_problem_obstacles(const rlx_problem *p)
{
    return p->n_boxes;
}

bool rlx_problem_is_rigid(const rlx_problem *p)
{
    return p->robot != ROBOT_POINT;
}

bool rlx_state_valid(const rlx_problem *p, const double *q)
{
    double s[MAX_DIM] = {0};
    memcpy(s, q, (size_t)p->dim * sizeof *q);
    return valid(p, s);
}

void rlx_problem_start_goal(const rlx_problem *p, double *start, double *goal)
{
    memcpy(start, p->start, (size_t)p->dim * sizeof *start);
    memcpy(goal, p->goal, (size_t)p->dim * sizeof *goal);
}

/* ---- trees and paths ------------------------------------------------------------------ */

typedef struct tree {
    double *q; /* n * MAX_DIM */
    int *parent;
    double *cost;
    size_t n, cap;
} tree;

static int tree_add(tree *t, const double *q, int parent, double cost)
{
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 1024;
        double *nq = realloc(t->q, nc * MAX_DIM * sizeof *nq);
        if (!nq)
            return -1;
        t->q = nq;
        int *np = realloc(t->parent, nc * sizeof *np);
        if (!np)
            return -1;
        t->parent = np;
        double *ncst = realloc(t->cost, nc * sizeof *ncst);
        if (!ncst)
            return -1;
        t->cost = ncst;
        t->cap = nc;
    }
    memcpy(t->q + t->n * MAX_DIM, q, MAX_DIM * sizeof *q);
    t->parent[t->n] = parent;
    t->cost[t->n] = cost;
    return (int)t->n++;
}

static void tree_free(tree *t)
{
    free(t->q);
    free(t->parent);
    free(t->cost);
    memset(t, 0, sizeof *t);
}

static size_t nearest(const tree *t, const rlx_problem *pr, const double *q)
{
    size_t best = 0;
    double bd = INFINITY;
    for (size_t i = 0; i < t->n; i++) {
        double d = dist(pr, t->q + i * MAX_DIM, q);
        if (d < bd)
            bd = d, best = i;
    }
    return best;
}

typedef struct path {
    double *q;
    size_t n;
} path;

static void path_from_tree(const tree *t, int leaf, path *out, bool reverse)
{
    size_t n = 0;
    for (int i = leaf; i >= 0; i = t->parent[i])
        n++;
    out->q = malloc((n ? n : 1) * MAX_DIM * sizeof(double));
    out->n = n;
    if (!out->q) {
        out->n = 0;
        return;
    }
    size_t k = 0;
    for (int i = leaf; i >= 0; i = t->parent[i], k++)
        memcpy(out->q + (reverse ? k : n - 1 - k) * MAX_DIM, t->q + (size_t)i * MAX_DIM,
               MAX_DIM * sizeof(double));
}

static double path_length(const rlx_problem *pr, const path *p)
{
    double s = 0;
    for (size_t i = 1; i < p->n; i++)
        s += dist(pr, p->q + (i - 1) * MAX_DIM, p->q + i * MAX_DIM);
    return s;
}

/* OMPL's PathGeometric::smoothness: squared discrete curvature summed over vertices, with
 * the state space's distance (so a turn on the spot counts, as in OMPL's SE(2)). */
static double path_smoothness(const rlx_problem *pr, const path *p)
{
    double s = 0;
    for (size_t i = 2; i < p->n; i++) {
        const double *q0 = p->q + (i - 2) * MAX_DIM, *q1 = p->q + (i - 1) * MAX_DIM,
                     *q2 = p->q + i * MAX_DIM;
        double a = dist(pr, q0, q1), b = dist(pr, q1, q2), c = dist(pr, q0, q2);
        if (a > 1e-12 && b > 1e-12) {
            double cosv = fmax(-1, fmin(1, (a * a + b * b - c * c) / (2 * a * b)));
            double k = 2 * (M_PI - acos(cosv)) / (a + b);
            s += k * k;
        }
    }
    return s;
}

static double path_clearance(const rlx_problem *pr, const path *p)
{
    double c = INFINITY;
    for (size_t i = 0; i < p->n; i++)
        c = fmin(c, clearance(pr, p->q + i * MAX_DIM));
    return c;
}

static bool path_valid(const rlx_problem *pr, const path *p, double res)
{
    for (size_t i = 1; i < p->n; i++)
        if (!motion_valid(pr, p->q + (i - 1) * MAX_DIM, p->q + i * MAX_DIM, res, 0))
            return false;
    return p->n > 0;
}

/* Shortcutting: join two random vertices when the straight motion is free. */
static void path_simplify(const rlx_problem *pr, path *p, uint64_t *rng, int attempts)
{
    for (int a = 0; a < attempts && p->n > 2; a++) {
        size_t i = (size_t)(rng_unit(rng) * (double)p->n),
               j = (size_t)(rng_unit(rng) * (double)p->n);
        if (i > j) {
            size_t t = i;
            i = j;
            j = t;
        }
        if (j >= p->n || j - i < 2)
            continue;
        if (motion_ok(pr, p->q + i * MAX_DIM, p->q + j * MAX_DIM)) {
            memmove(p->q + (i + 1) * MAX_DIM, p->q + j * MAX_DIM,
                    (p->n - j) * MAX_DIM * sizeof(double));
            p->n -= j - i - 1;
        }
    }
}

/* ---- planners ---------------------------------------------------------------------- */

typedef enum kind {
    K_RRT,
    K_RRTCONNECT,
    K_RRTSTAR,
    K_PRM,
    K_CRASH,
    K_ABORT,
    K_HANG,
    K_MEMHOG,
    K_EXIT
} kind;

static const char *const KINDS[] = {"rrt",   "rrtconnect", "rrtstar", "prm",  "crash",
                                    "abort", "hang",       "memhog",  "exit", NULL};

const char *const *rlx_planner_kinds(void)
{
    return KINDS;
}

typedef struct planner {
    rl_bench_planner base;
    kind k;
    char *name;
    double range, goal_bias, rewire_factor, mb;
    long max_iterations; /* 0: none; a budget that gives the same outcome under any load */
    int knn, simplify_attempts;
    bool simplify;
    /* the last run's outcome, for run_properties */
    path sol;
    bool approximate;
    double difference;
    size_t graph_states, graph_motions;
} planner;

static const char *const STAR_PROGRESS[] = {"best cost", "iterations"};
static const rl_bench_type STAR_TYPES[] = {RL_BENCH_REAL, RL_BENCH_INTEGER};
static const char *const PRM_PROGRESS[] = {"milestone count", "edge count"};
static const rl_bench_type PRM_TYPES[] = {RL_BENCH_INTEGER, RL_BENCH_INTEGER};

/* Where a planner's run stands: inside the harness (run) or in this process (rlx_solve,
 * with its own deadline and iteration budget), so the same planners serve both. */
typedef struct runctx {
    rl_bench_run *run;
    int64_t deadline_ns;
    long iterations_left; /* < 0: no budget; each planner loop asks once per iteration */
} runctx;

static bool should_stop(runctx *rc)
{
    if (rc->iterations_left == 0)
        return true;
    if (rc->iterations_left > 0)
        rc->iterations_left--;
    return rc->run ? rl_bench_run_should_stop(rc->run) : rl_mono_ns() >= rc->deadline_ns;
}

static void progress(runctx *rc, size_t index, double value)
{
    if (rc->run)
        rl_bench_run_progress(rc->run, index, value);
}

/* At most `range` from `from` towards `to`. */
static void steer(const rlx_problem *pr, const double *from, const double *to, double range,
                  double *out)
{
    double d = dist(pr, from, to);
    interpolate(pr, from, to, d > range ? range / d : 1, out);
}

static rl_bench_status solve_rrt(planner *pl, const rlx_problem *pr, runctx *run, uint64_t *rng)
{
    tree t = {0};
    bool have_start = tree_add(&t, pr->start, -1, 0) >= 0; /* else out of memory at once */
    int best = 0;
    double best_d = dist(pr, pr->start, pr->goal), q[MAX_DIM], nq[MAX_DIM];
    bool star = pl->k == K_RRTSTAR, solved = false;
    int goal_node = -1;
    long iterations = 0;
    while (have_start && !should_stop(run)) {
        iterations++;
        if (rng_unit(rng) < pl->goal_bias)
            memcpy(q, pr->goal, sizeof q);
        else
            sample(pr, rng, q);
        size_t nn = nearest(&t, pr, q);
        steer(pr, t.q + nn * MAX_DIM, q, pl->range, nq);
        if (!motion_ok(pr, t.q + nn * MAX_DIM, nq))
            continue;
        int parent = (int)nn;
        double cost = t.cost[nn] + dist(pr, t.q + nn * MAX_DIM, nq);
        double radius = 0;
        if (star) {
            double n = (double)t.n + 1;
            radius = fmin(pl->range, pl->rewire_factor * pow(log(n) / n, 1.0 / pr->dim));
            for (size_t i = 0; i < t.n; i++) { /* choose the cheapest parent nearby */
                double d = dist(pr, t.q + i * MAX_DIM, nq);
                if (d < radius && t.cost[i] + d < cost && motion_ok(pr, t.q + i * MAX_DIM, nq))
                    parent = (int)i, cost = t.cost[i] + d;
            }
        }
        int id = tree_add(&t, nq, parent, cost);
        if (id < 0)
            break;
        pl->graph_motions++;
        if (star) {
            for (size_t i = 0; i + 1 < t.n; i++) { /* rewire through the new node */
                double d = dist(pr, nq, t.q + i * MAX_DIM);
                if (d < radius && cost + d < t.cost[i] && motion_ok(pr, nq, t.q + i * MAX_DIM)) {
                    double delta = t.cost[i] - (cost + d);
                    t.parent[i] = id;
                    for (size_t k = 0; k < t.n; k++) /* costs below i drop by delta */
                        for (int a = t.parent[k]; a >= 0; a = t.parent[a])
                            if ((size_t)a == i) {
                                t.cost[k] -= delta;
                                break;
                            }
                    t.cost[i] = cost + d;
                }
            }
        }
        double dg = dist(pr, nq, pr->goal);
        if (dg < best_d)
            best_d = dg, best = id;
        if (dg <= pr->goal_radius) {
            solved = true;
            if (goal_node < 0 || t.cost[id] < t.cost[goal_node])
                goal_node = id;
            if (!star)
                break;
        }
        if (star && (iterations & 63) == 0) {
            progress(run, 0, goal_node >= 0 ? t.cost[goal_node] : INFINITY);
            progress(run, 1, (double)iterations);
        }
    }
    pl->graph_states = t.n;
    pl->approximate = !solved;
    pl->difference = solved ? 0 : best_d;
    if (have_start)
        path_from_tree(&t, solved ? goal_node : best, &pl->sol, false);
    if (star && run->run)
        rl_bench_run_set_int(run->run, "iterations", iterations);
    if (star && goal_node >= 0 && run->run)
        rl_bench_run_set_real(run->run, "best cost", t.cost[goal_node]);
    tree_free(&t);
    return solved ? RL_RUN_EXACT : pl->sol.n > 1 ? RL_RUN_APPROXIMATE : RL_RUN_TIMEOUT;
}

/* RRT-Connect's goal tree grows backwards: its motions go from a new state into the tree.
 * For a car (a distance that is not symmetric) nearness, steering and the motion check then
 * run the other way; for the symmetric spaces both ways are the same, and the forward forms
 * are kept. */
static size_t nearest_dir(const tree *t, const rlx_problem *pr, const double *q, bool forward)
{
    if (forward || pr->robot != ROBOT_CAR)
        return nearest(t, pr, q);
    size_t best = 0;
    double bd = INFINITY;
    for (size_t i = 0; i < t->n; i++) {
        double d = dist(pr, q, t->q + i * MAX_DIM);
        if (d < bd)
            bd = d, best = i;
    }
    return best;
}

/* Backwards: the state `range` before `node` on the curve from `to` into it (`to` itself
 * when nearer). */
static void steer_dir(const rlx_problem *pr, const double *node, const double *to, double range,
                      double *out, bool forward)
{
    if (pr->robot != ROBOT_CAR) {
        steer(pr, node, to, range, out);
        return;
    }
    double d = forward ? dist(pr, node, to) : dist(pr, to, node);
    if (d <= range) /* exactly the target, so that the trees meet in one state */
        memcpy(out, to, MAX_DIM * sizeof *out);
    else if (forward)
        interpolate(pr, node, to, range / d, out);
    else
        interpolate(pr, to, node, 1 - range / d, out);
}

static bool motion_dir(const rlx_problem *pr, const double *node, const double *q, bool forward)
{
    return forward ? motion_ok(pr, node, q) : motion_ok(pr, q, node);
}

static rl_bench_status solve_connect(planner *pl, const rlx_problem *pr, runctx *run, uint64_t *rng)
{
    tree a = {0}, b = {0};
    /* Out of memory ends the search as running out of time does, in every planner here. */
    bool out_of_memory = tree_add(&a, pr->start, -1, 0) < 0 || tree_add(&b, pr->goal, -1, 0) < 0;
    tree *ta = &a, *tb = &b;
    bool solved = false;
    int ia = -1, ib = -1;
    double q[MAX_DIM], nq[MAX_DIM];
    while (!solved && !out_of_memory && !should_stop(run)) {
        sample(pr, rng, q);
        bool fa = ta == &a; /* whether ta is the start's tree (grown forwards) */
        size_t nn = nearest_dir(ta, pr, q, fa);
        steer_dir(pr, ta->q + nn * MAX_DIM, q, pl->range, nq, fa);
        if (motion_dir(pr, ta->q + nn * MAX_DIM, nq, fa)) {
            int added = tree_add(ta, nq, (int)nn, 0);
            if (added < 0) {
                out_of_memory = true;
                break;
            }
            pl->graph_motions++;
            /* connect: grow the other tree towards the new state until blocked */
            int last = (int)nearest_dir(tb, pr, nq, !fa);
            for (;;) {
                double step[MAX_DIM];
                steer_dir(pr, tb->q + (size_t)last * MAX_DIM, nq, pl->range, step, !fa);
                if (!motion_dir(pr, tb->q + (size_t)last * MAX_DIM, step, !fa))
                    break;
                last = tree_add(tb, step, last, 0);
                if (last < 0) {
                    out_of_memory = true;
                    break;
                }
                pl->graph_motions++;
                if (pr->robot == ROBOT_CAR ? memcmp(step, nq, sizeof step) == 0
                                           : dist(pr, step, nq) < 1e-9) {
                    solved = true;
                    ia = added;
                    ib = last;
                    break;
                }
            }
            if (solved && ta != &a) { /* keep ia in the start tree */
                int t = ia;
                ia = ib;
                ib = t;
            }
        }
        tree *tmp = ta;
        ta = tb;
        tb = tmp;
    }
    pl->graph_states = a.n + b.n;
    if (solved) {
        path pa, pb;
        path_from_tree(&a, ia, &pa, false);
        path_from_tree(&b, ib, &pb, true);
        pl->sol.n = pa.n + pb.n - 1;
        pl->sol.q = malloc(pl->sol.n * MAX_DIM * sizeof(double));
        if (pl->sol.q) {
            memcpy(pl->sol.q, pa.q, pa.n * MAX_DIM * sizeof(double));
            memcpy(pl->sol.q + pa.n * MAX_DIM, pb.q + MAX_DIM,
                   (pb.n - 1) * MAX_DIM * sizeof(double));
        } else {
            pl->sol.n = 0;
        }
        free(pa.q);
        free(pb.q);
    }
    tree_free(&a);
    tree_free(&b);
    pl->approximate = false;
    return solved ? RL_RUN_EXACT : RL_RUN_TIMEOUT;
}

static size_t uf_find(size_t *uf, size_t i)
{
    while (uf[i] != i)
        i = uf[i] = uf[uf[i]];
    return i;
}

static rl_bench_status solve_prm(planner *pl, const rlx_problem *pr, runctx *run, uint64_t *rng)
{
    tree m = {0}; /* milestones; parent/cost unused */
    size_t cap_e = 0, n_e = 0, *ea = NULL, *eb = NULL, *uf = NULL;
    bool have_ends = tree_add(&m, pr->start, -1, 0) >= 0 && tree_add(&m, pr->goal, -1, 0) >= 0;
    bool solved = false;
    size_t uf_cap = 0;
    double q[MAX_DIM];
    size_t k = (size_t)pl->knn;
    size_t *nbr = malloc(k * sizeof *nbr);
    double *nd = malloc(k * sizeof *nd);
    for (size_t it = 0; have_ends && !solved && !should_stop(run) && nbr && nd; it++) {
        size_t id;
        if (it == 0)
            id = 0; /* connect start and goal first */
        else if (it == 1)
            id = 1;
        else {
            sample(pr, rng, q);
            if (!valid_margin(pr, q, pr->margin))
                continue;
            int r = tree_add(&m, q, -1, 0);
            if (r < 0)
                break;
            id = (size_t)r;
        }
        if (m.n > uf_cap) {
            size_t nc = uf_cap ? uf_cap * 2 : 1024;
            size_t *nu = realloc(uf, nc * sizeof *nu);
            if (!nu)
                break;
            uf = nu;
            for (size_t i = uf_cap; i < nc; i++)
                uf[i] = i;
            uf_cap = nc;
        }
        /* k nearest milestones */
        size_t cnt = 0;
        for (size_t i = 0; i < m.n; i++) {
            if (i == id)
                continue;
            double d = dist(pr, m.q + i * MAX_DIM, m.q + id * MAX_DIM);
            size_t pos = cnt < k ? cnt++ : k;
            while (pos > 0 && nd[pos - 1] > d) {
                if (pos < k)
                    nbr[pos] = nbr[pos - 1], nd[pos] = nd[pos - 1];
                pos--;
            }
            if (pos < k)
                nbr[pos] = i, nd[pos] = d;
        }
        for (size_t j = 0; j < cnt; j++) {
            if (uf_find(uf, nbr[j]) == uf_find(uf, id) && j > 0)
                continue;
            if (!motion_ok(pr, m.q + nbr[j] * MAX_DIM, m.q + id * MAX_DIM))
                continue;
            /* the roadmap is undirected: a car's edge must be drivable both ways */
            if (pr->robot == ROBOT_CAR && !motion_ok(pr, m.q + id * MAX_DIM, m.q + nbr[j] * MAX_DIM))
                continue;
            if (n_e == cap_e) {
                cap_e = cap_e ? cap_e * 2 : 1024;
                size_t *na = realloc(ea, cap_e * sizeof *na);
                if (na)
                    ea = na;
                size_t *nb = realloc(eb, cap_e * sizeof *nb);
                if (nb)
                    eb = nb;
                if (!na || !nb)
                    break;
            }
            ea[n_e] = nbr[j];
            eb[n_e++] = id;
            uf[uf_find(uf, nbr[j])] = uf_find(uf, id);
        }
        progress(run, 0, (double)m.n);
        progress(run, 1, (double)n_e);
        solved = uf_find(uf, 0) == uf_find(uf, 1);
    }
    pl->graph_states = m.n;
    pl->graph_motions = n_e;
    if (solved) { /* Dijkstra over the roadmap, O(V^2) is fine at these sizes */
        double *dd = malloc(m.n * sizeof *dd);
        int *prev = malloc(m.n * sizeof *prev);
        bool *done = calloc(m.n, sizeof *done);
        if (dd && prev && done) {
            for (size_t i = 0; i < m.n; i++)
                dd[i] = INFINITY, prev[i] = -1;
            dd[0] = 0;
            for (;;) {
                size_t u = m.n;
                for (size_t i = 0; i < m.n; i++)
                    if (!done[i] && isfinite(dd[i]) && (u == m.n || dd[i] < dd[u]))
                        u = i;
                if (u == m.n || u == 1)
                    break;
                done[u] = true;
                for (size_t e = 0; e < n_e; e++) {
                    size_t v = ea[e] == u ? eb[e] : eb[e] == u ? ea[e] : m.n;
                    if (v == m.n)
                        continue;
                    double w = dd[u] + dist(pr, m.q + u * MAX_DIM, m.q + v * MAX_DIM);
                    if (w < dd[v])
                        dd[v] = w, prev[v] = (int)u;
                }
            }
            tree pt = {0};
            pt.q = m.q;
            pt.parent = prev;
            pt.n = m.n;
            path_from_tree(&pt, 1, &pl->sol, false);
        }
        free(dd);
        free(prev);
        free(done);
    }
    free(nbr);
    free(nd);
    free(ea);
    free(eb);
    free(uf);
    tree_free(&m);
    pl->approximate = false;
    return solved ? RL_RUN_EXACT : RL_RUN_TIMEOUT;
}

static void *volatile memhog_sink;

/* One solve, in the harness's run process or in this one (rlx_solve). */
static rl_bench_status solve(planner *pl, const rlx_problem *pr, runctx *run, uint64_t seed)
{
    uint64_t rng = seed;
    free(pl->sol.q);
    memset(&pl->sol, 0, sizeof pl->sol);
    pl->graph_states = pl->graph_motions = 0;
    if (pl->k <= K_PRM && !valid_margin(pr, pr->start, pr->margin))
        return RL_RUN_INVALID_START;
    if (pl->k <= K_PRM && !valid_margin(pr, pr->goal, pr->margin))
        return RL_RUN_INVALID_GOAL;
    switch (pl->k) {
    case K_RRT:
    case K_RRTSTAR: return solve_rrt(pl, pr, run, &rng);
    case K_RRTCONNECT: return solve_connect(pl, pr, run, &rng);
    case K_PRM: return solve_prm(pl, pr, run, &rng);
    case K_CRASH: raise(SIGSEGV); return RL_RUN_CRASH;
    case K_ABORT: abort();
    case K_HANG:
        for (;;)
            pause();
    case K_MEMHOG:
        for (size_t total = 0; total < (size_t)(pl->mb * 1048576.0); total += 1 << 20) {
            char *p = malloc(1 << 20);
            if (!p)
                return RL_RUN_OUT_OF_MEMORY;
            memset(p, 1, 1 << 20); /* touched, so it is resident */
            /* chained through a volatile pointer so the allocations cannot be elided */
            void *prev = memhog_sink;
            memcpy(p, &prev, sizeof prev);
            memhog_sink = p;
        }
        return RL_RUN_EXACT;
    case K_EXIT: exit(3);
    }
    return RL_RUN_UNKNOWN;
}

static rl_bench_status planner_solve(void *self, void *problem, rl_bench_run *run)
{
    planner *pl = self;
    runctx rc = {run, 0, pl->max_iterations > 0 ? pl->max_iterations : -1};
    return solve(self, problem, &rc, rl_bench_run_seed(run));
}

static void planner_props(void *self, void *problem, rl_bench_run *run)
{
    planner *pl = self;
    const rlx_problem *pr = problem;
    rl_bench_run_set_int(run, "graph states", (int64_t)pl->graph_states);
    rl_bench_run_set_int(run, "graph motions", (int64_t)pl->graph_motions);
    if (pl->sol.n == 0)
        return;
    path *p = &pl->sol;
    rl_bench_run_set_bool(run, "approximate solution", pl->approximate);
    rl_bench_run_set_real(run, "solution difference", pl->difference);
    rl_bench_run_set_real(run, "solution length", path_length(pr, p));
    rl_bench_run_set_int(run, "solution segments", (int64_t)(p->n - 1));
    rl_bench_run_set_real(run, "solution smoothness", path_smoothness(pr, p));
    rl_bench_run_set_real(run, "solution clearance", path_clearance(pr, p));
    /* the result re-checked at a five times finer resolution */
    rl_bench_run_set_bool(run, "correct solution", path_valid(pr, p, pr->resolution / 5));
    if (pl->simplify && !pl->approximate) {
        uint64_t rng = rl_bench_run_seed(run) ^ 0x5eed;
        double t0 = rl_bench_run_elapsed(run);
        path_simplify(pr, p, &rng, pl->simplify_attempts);
        rl_bench_run_set_real(run, "simplification time", rl_bench_run_elapsed(run) - t0);
        rl_bench_run_set_real(run, "simplified solution length", path_length(pr, p));
        rl_bench_run_set_int(run, "simplified solution segments", (int64_t)(p->n - 1));
        rl_bench_run_set_real(run, "simplified solution smoothness", path_smoothness(pr, p));
        rl_bench_run_set_real(run, "simplified solution clearance", path_clearance(pr, p));
        rl_bench_run_set_bool(run, "simplified correct solution",
                              path_valid(pr, p, pr->resolution / 5));
    }
}

static void planner_settings(void *self, rl_bench_setting_fn emit, void *ctx)
{
    planner *pl = self;
    char buf[64];
    if (pl->k > K_PRM) {
        snprintf(buf, sizeof buf, "%g", pl->mb);
        if (pl->k == K_MEMHOG)
            emit(ctx, "mb", buf);
        return;
    }
    if (pl->k == K_RRT || pl->k == K_RRTSTAR) {
        snprintf(buf, sizeof buf, "%g", pl->goal_bias);
        emit(ctx, "goal_bias", buf);
    }
    if (pl->k == K_PRM) {
        snprintf(buf, sizeof buf, "%d", pl->knn);
        emit(ctx, "max_nearest_neighbors", buf);
    } else {
        snprintf(buf, sizeof buf, "%g", pl->range);
        emit(ctx, "range", buf);
    }
    if (pl->k == K_RRTSTAR) {
        snprintf(buf, sizeof buf, "%g", pl->rewire_factor);
        emit(ctx, "rewire_factor", buf);
    }
    emit(ctx, "simplify", pl->simplify ? "1" : "0");
    if (pl->max_iterations > 0) {
        snprintf(buf, sizeof buf, "%ld", pl->max_iterations);
        emit(ctx, "max_iterations", buf);
    }
}

static void planner_clear(void *self)
{
    planner *pl = self;
    free(pl->sol.q);
    memset(&pl->sol, 0, sizeof pl->sol);
}

static void planner_free(void *self)
{
    planner *pl = self;
    if (!pl)
        return;
    free(pl->sol.q);
    free(pl->name);
    free(pl);
}

static int parse_num(const char *key, const char *v, double lo, double hi, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !(d >= lo && d <= hi))
        return rl_error_set(RL_EINVAL, "setting '%s': '%s' is not a number in [%g, %g]", key, v, lo,
                            hi);
    *out = d;
    return RL_OK;
}

rl_bench_planner *rlx_planner_new(const char *kind_name, const char *name, const char *const *keys,
                                  const char *const *values, size_t n)
{
    int k = -1;
    for (int i = 0; KINDS[i]; i++)
        if (strcmp(kind_name, KINDS[i]) == 0)
            k = i;
    if (k < 0) {
        rl_error_set(RL_ENOENT,
                     "unknown planner '%s' (built-in: rrt, rrtconnect, rrtstar, prm; for tests: "
                     "crash, abort, hang, memhog, exit)",
                     kind_name);
        return NULL;
    }
    planner *pl = calloc(1, sizeof *pl);
    if (!pl || !(pl->name = strdup(name))) {
        free(pl);
        rl_error_set(RL_ENOMEM, "out of memory");
        return NULL;
    }
    pl->k = (kind)k;
    pl->range = 0.1;
    pl->goal_bias = 0.05;
    pl->rewire_factor = 1.5;
    pl->knn = 10;
    pl->mb = 1e6;
    pl->simplify = true;
    pl->simplify_attempts = 100;
    for (size_t i = 0; i < n; i++) {
        double d = 0;
        int rc;
        if (strcmp(keys[i], "range") == 0)
            rc = parse_num(keys[i], values[i], 1e-6, 10, &pl->range);
        else if (strcmp(keys[i], "goal_bias") == 0)
            rc = parse_num(keys[i], values[i], 0, 1, &pl->goal_bias);
        else if (strcmp(keys[i], "rewire_factor") == 0)
            rc = parse_num(keys[i], values[i], 0, 100, &pl->rewire_factor);
        else if (strcmp(keys[i], "max_nearest_neighbors") == 0 || strcmp(keys[i], "k") == 0)
            rc = parse_num(keys[i], values[i], 1, 1000, &d), pl->knn = (int)d;
        else if (strcmp(keys[i], "mb") == 0)
            rc = parse_num(keys[i], values[i], 0, 1e7, &pl->mb);
        else if (strcmp(keys[i], "max_iterations") == 0)
            rc = parse_num(keys[i], values[i], 0, 1e12, &d), pl->max_iterations = (long)d;
        else if (strcmp(keys[i], "simplify") == 0)
            rc = parse_num(keys[i], values[i], 0, 1, &d), pl->simplify = d != 0;
        else
            rc = rl_error_set(RL_EINVAL, "planner '%s' (%s) has no setting '%s'", name, kind_name,
                              keys[i]);
        if (rc < 0) {
            planner_free(pl);
            return NULL;
        }
    }
    pl->base.name = pl->name;
    pl->base.self = pl;
    pl->base.settings = planner_settings;
    pl->base.solve = planner_solve;
    pl->base.run_properties = planner_props;
    pl->base.clear = planner_clear;
    pl->base.free = planner_free;
    if (pl->k == K_RRTSTAR) {
        pl->base.n_progress = 2;
        pl->base.progress_names = STAR_PROGRESS;
        pl->base.progress_types = STAR_TYPES;
    } else if (pl->k == K_PRM) {
        pl->base.n_progress = 2;
        pl->base.progress_names = PRM_PROGRESS;
        pl->base.progress_types = PRM_TYPES;
    }
    return &pl->base;
}

/* ---- in-process use ------------------------------------------------------------------ */

/* Paths outside this file are packed: rlx_problem_dimension values per state. */
static int path_unpack(const rlx_problem *p, const double *states, size_t n, path *out)
{
    out->n = n;
    out->q = calloc(n ? n : 1, MAX_DIM * sizeof(double));
    if (!out->q)
        return rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        memcpy(out->q + i * MAX_DIM, states + i * (size_t)p->dim, (size_t)p->dim * sizeof(double));
    return RL_OK;
}

bool rlx_path_valid(const rlx_problem *p, const double *states, size_t n, double resolution)
{
    path pa;
    if (!(resolution > 0) || path_unpack(p, states, n, &pa) < 0)
        return false;
    bool ok = path_valid(p, &pa, resolution);
    free(pa.q);
    return ok;
}

double rlx_problem_resolution(const rlx_problem *p)
{
    return p->resolution;
}

int rlx_solve(const rlx_problem *p, const char *kind_name, uint64_t seed, double max_time,
              long max_iterations, bool simplify, double **states, size_t *n)
{
    *states = NULL;
    *n = 0;
    rl_bench_planner *base = rlx_planner_new(kind_name, kind_name, NULL, NULL, 0);
    if (!base)
        return rl_error_last_code();
    planner *pl = base->self;
    if (pl->k > K_PRM) {
        planner_free(pl);
        return rl_error_set(RL_EINVAL, "planner '%s' cannot run outside the harness", kind_name);
    }
    runctx rc = {NULL, rl_mono_ns() + (int64_t)(max_time * 1e9),
                 max_iterations > 0 ? max_iterations : -1};
    rl_bench_status st = solve(pl, p, &rc, seed);
    if (simplify && st == RL_RUN_EXACT) {
        uint64_t rng = seed ^ 0x5eed;
        path_simplify(p, &pl->sol, &rng, pl->simplify_attempts);
    }
    int rc_out = (int)st;
    if (pl->sol.n > 0) {
        *states = malloc(pl->sol.n * (size_t)p->dim * sizeof **states);
        if (!*states) {
            rc_out = rl_error_set(RL_ENOMEM, "out of memory");
        } else {
            for (size_t i = 0; i < pl->sol.n; i++)
                memcpy(*states + i * (size_t)p->dim, pl->sol.q + i * MAX_DIM,
                       (size_t)p->dim * sizeof **states);
            *n = pl->sol.n;
        }
    }
    planner_free(pl);
    return rc_out;
}
