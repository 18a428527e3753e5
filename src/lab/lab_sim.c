/* The simulator's vehicles and its built-in planner. The planner moves a reference along
 * each vehicle's route (lab_sim_route.c) on a timetable and sends it as trajectory commands
 * (timed points with velocities, cubic Hermite between them); each vehicle's controller
 * tracks the active command (the latest whose valid-after stamp has passed) with the centre
 * of its rectangle, the pose it reports. The lab's 1:18 car is a kinematic bicycle
 * (wheelbase 0.15 m). Faults change the planner (speeding, leave_lane, leave_area) or the
 * vehicle (drift, collision) or its messages (stall_topic, late_observation). */
#include "lab/lab_sim.h"

#include "runlab/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STEER 0.45      /* rad */
#define MAX_ACCEL 1.5       /* m/s^2, the vehicle's */
#define PLAN_ACCEL 1.0      /* m/s^2, the planner's timetable */
#define MAX_SPEED 4.5       /* m/s */
#define TRACK_GAIN 4.0      /* 1/s, position feedback of the controller */
#define SUBSTEP 0.005       /* s, the controller's and the model's step */
#define PLAN_DT 0.02        /* s, the planner's step */
#define CMD_SPACING 0.1     /* s between trajectory points */
#define SPEEDING_FACTOR 3.5 /* times the set speed */
#define SPEEDING_ACCEL 3.0  /* m/s^2 of the planner and the vehicle while speeding */
#define LANE_OFFSET 0.25    /* m to the right when leaving the lane */
#define LANE_RAMP 1.0       /* s to move over */
#define DRIFT_MAX 0.25      /* m to the right of the commanded trajectory */
#define DRIFT_RATE 0.25     /* m/s */
#define EXIT_BEYOND 0.3     /* m beyond the lab area's corner (both axes) */
#define CHASE_SPEED_MAX 2.9 /* m/s: a chaser stays under the evaluation's 3.0 m/s */
#define CHASE_ACCEL 2.9     /* m/s^2 of a chaser */
#define CHASE_HOLD_DISTANCE 0.35 /* m (centres): closer, the chaser holds on its partner */
#define CHASE_HEADING_GAIN 10.0 /* 1/s: a chaser's yaw rate per rad of heading error */
#define CHASE_HOLD_EXCESS 0.5 /* m/s above its partner's speed at the most while holding */
#define CHASE_MARGIN 0.2    /* m: an intercept point stays this far inside the lab area */
#define MIN_SPACING 0.5     /* m between vehicles sharing a route */
#define EXTERNAL_HOLD_NS 500000000ll /* a speed/direct command drives this long */
#define PATH_END_HOLD_NS 1000000000ll /* a path's end is held this long */
#define LATE_OBSERVATION_S 0.5
/* Rear axle to the centre of the rectangle. */
#define AXLE_TO_CENTRE (RL_LAB_CAR_LENGTH / 2 - RL_LAB_CAR_REAR_OVERHANG)

static const char *const fault_names[] = {"collision", "leave_lane", "leave_area", "speeding",
                                          "stall_topic", "late_observation", "drift"};

const char *rl_lab_fault_name(rl_lab_fault_kind kind)
{
    return (unsigned)kind < sizeof fault_names / sizeof fault_names[0] ? fault_names[kind] : "?";
}

int rl_lab_fault_parse(const char *text, rl_lab_fault *out)
{
    char kind[32];
    const char *colon = strchr(text, ':');
    if (!colon || (size_t)(colon - text) >= sizeof kind)
        return rl_error_set(RL_EINVAL, "fault \"%s\": expected KIND:VEHICLE:T0[:T1]", text);
    memcpy(kind, text, (size_t)(colon - text));
    kind[colon - text] = '\0';
    int k = -1;
    for (size_t i = 0; i < sizeof fault_names / sizeof fault_names[0]; i++)
        if (strcmp(kind, fault_names[i]) == 0)
            k = (int)i;
    if (k < 0)
        return rl_error_set(RL_EINVAL,
                            "fault \"%s\": unknown kind \"%s\" (collision, leave_lane, leave_area, "
                            "speeding, stall_topic, late_observation, drift)",
                            text, kind);
    char *end = NULL;
    long v = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end != ':' || v < 1 || v > 255)
        return rl_error_set(RL_EINVAL, "fault \"%s\": vehicle: expected an id 1..255", text);
    const char *p = end + 1;
    double t0 = strtod(p, &end), t1 = -1;
    if (end == p || !(t0 >= 0) || (*end && *end != ':'))
        return rl_error_set(RL_EINVAL, "fault \"%s\": T0: expected seconds >= 0", text);
    if (*end == ':') {
        p = end + 1;
        t1 = strtod(p, &end);
        if (end == p || *end || !(t1 >= t0))
            return rl_error_set(RL_EINVAL, "fault \"%s\": T1: expected seconds >= T0", text);
    }
    out->kind = (rl_lab_fault_kind)k;
    out->vehicle = (int)v;
    out->t0 = t0;
    out->t1 = t1;
    return RL_OK;
}

void rl_lab_sim_options_default(rl_lab_sim_options *o)
{
    memset(o, 0, sizeof *o);
    o->vehicles = 4;
    o->seed = 1;
    o->speed = 1.0;
    o->state_rate_hz = 50;
    o->observation_rate_hz = 20;
}

/* xorshift64*: deterministic noise for a seed. */
static double uniform(lab_sim *s)
{
    uint64_t x = s->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->rng = x;
    return (double)((x * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static double smoothstep(double x)
{
    x = clamp(x, 0, 1);
    return x * x * (3 - 2 * x);
}

static void centre(const sim_vehicle *v, double *cx, double *cy)
{
    *cx = v->x + AXLE_TO_CENTRE * cos(v->yaw);
    *cy = v->y + AXLE_TO_CENTRE * sin(v->yaw);
}

static int check_options(const rl_lab_sim_options *o)
{
    if (o->vehicles < 1 || o->vehicles > 64)
        return rl_error_set(RL_EINVAL, "sim: vehicles: %d is not 1..64", o->vehicles);
    if (!(o->speed > 0 && o->speed <= 3) || !(o->state_rate_hz >= 1 && o->state_rate_hz <= 1000) ||
        !(o->observation_rate_hz > 0 && o->observation_rate_hz <= o->state_rate_hz))
        return rl_error_set(RL_EINVAL, "sim: speed above 0 up to 3 m/s, state rate 1..1000 Hz, "
                                       "observation rate up to the state rate");
    if (o->waypoints && o->waypoint_count < 3)
        return rl_error_set(RL_EINVAL, "sim: waypoints: at least 3 points");
    if (!o->waypoints && !o->map_path)
        return rl_error_set(RL_EINVAL, "sim: neither a map nor waypoints to drive along");
    for (size_t i = 0; i < o->fault_count; i++) {
        const rl_lab_fault *f = &o->faults[i];
        if (f->vehicle > o->vehicles)
            return rl_error_set(RL_EINVAL, "sim: fault %s on vehicle %d: there are %d vehicles",
                                rl_lab_fault_name(f->kind), f->vehicle, o->vehicles);
        if (f->kind == RL_LAB_FAULT_COLLISION && o->vehicles < 2)
            return rl_error_set(RL_EINVAL, "sim: fault collision on vehicle %d: no other "
                                "vehicle to collide with", f->vehicle);
        /* A window that opens after the run ended injects nothing: a mistake to say. */
        if (o->duration > 0 && f->t0 >= o->duration)
            return rl_error_set(RL_EINVAL, "sim: fault %s on vehicle %d from %g s: the run ends "
                                "%g s after START", rl_lab_fault_name(f->kind), f->vehicle,
                                f->t0, o->duration);
    }
    return RL_OK;
}

/* Spreads the vehicles over the routes (vehicle k on route k mod count), equally spaced on
 * each from a phase drawn from the seed; open routes hold them one behind the other. */
static int place_vehicles(lab_sim *s)
{
    size_t nr = s->routes.count;
    for (size_t r = 0; r < nr; r++) {
        const sim_path *p = &s->routes.paths[r];
        size_t c = 0;
        for (int k = 0; k < s->o.vehicles; k++)
            c += (size_t)k % nr == r;
        if (!c)
            continue;
        double spacing = p->closed ? p->length / (double)c : 2 * MIN_SPACING;
        if (spacing < MIN_SPACING || (!p->closed && p->length < (double)c * spacing))
            return rl_error_set(RL_EINVAL,
                                "sim: %d vehicles do not fit: route %zu (%.1f m) would take %zu, "
                                "%.1f m apart",
                                s->o.vehicles, r + 1, p->length, c, spacing);
        double phase = p->closed ? uniform(s) * p->length : 0;
        size_t i = 0;
        for (int k = 0; k < s->o.vehicles; k++) {
            if ((size_t)k % nr != r)
                continue;
            sim_vehicle *v = &s->veh[k];
            v->route = r;
            v->plan.s = p->closed ? phase + (double)i * spacing : (double)(c - 1 - i) * spacing;
            v->plan.s_max = p->closed ? INFINITY : p->length - (double)i * spacing;
            double x, y, tx, ty;
            sim_path_at(p, v->plan.s, &x, &y, &tx, &ty);
            v->yaw = atan2(ty, tx);
            /* The centre on the route, with a few mm of placement error. */
            x += 0.004 * (uniform(s) - 0.5);
            y += 0.004 * (uniform(s) - 0.5);
            v->x = x - AXLE_TO_CENTRE * cos(v->yaw);
            v->y = y - AXLE_TO_CENTRE * sin(v->yaw);
            i++;
        }
    }
    return RL_OK;
}

int lab_sim_init(lab_sim *s, const rl_lab_sim_options *o)
{
    memset(s, 0, sizeof *s);
    int rc = check_options(o);
    if (rc < 0)
        return rc;
    s->o = *o;
    s->rng = o->seed ? o->seed : 1;
    s->veh = calloc((size_t)o->vehicles, sizeof *s->veh);
    if (!s->veh)
        return rl_error_set(RL_ENOMEM, "out of memory");
    if (o->map_path && (rc = rl_map_load(o->map_path, NULL, &s->map, NULL)) < 0) {
        rl_error_prefix(rc, "sim: map %s", o->map_path);
        lab_sim_free(s);
        return rc;
    }
    rc = o->waypoints ? sim_routes_from_waypoints(o->waypoints, o->waypoint_count, &s->routes)
                      : sim_routes_from_map(s->map, &s->routes);
    if (rc == RL_OK && s->map) {
        rl_map_info info;
        rl_map_get_info(s->map, &info);
        s->area[0] = info.area_xmin;
        s->area[1] = info.area_ymin;
        s->area[2] = info.area_xmax;
        s->area[3] = info.area_ymax;
    } else if (rc == RL_OK) { /* the waypoints' bounding box, 0.5 m wider */
        s->area[0] = s->area[1] = INFINITY;
        s->area[2] = s->area[3] = -INFINITY;
        for (size_t i = 0; i < o->waypoint_count; i++) {
            s->area[0] = fmin(s->area[0], o->waypoints[2 * i] - 0.5);
            s->area[1] = fmin(s->area[1], o->waypoints[2 * i + 1] - 0.5);
            s->area[2] = fmax(s->area[2], o->waypoints[2 * i] + 0.5);
            s->area[3] = fmax(s->area[3], o->waypoints[2 * i + 1] + 0.5);
        }
    }
    for (int k = 0; k < o->vehicles; k++) {
        s->veh[k].id = k + 1;
        s->veh[k].plan.mode = PLAN_ROUTE;
    }
    if (rc == RL_OK)
        rc = place_vehicles(s);
    if (rc < 0)
        lab_sim_free(s);
    return rc;
}

void lab_sim_free(lab_sim *s)
{
    for (int k = 0; s->veh && k < s->o.vehicles; k++)
        for (size_t i = 0; i < s->veh[k].queued; i++)
            free(s->veh[k].queue[i].pts);
    free(s->veh);
    s->veh = NULL;
    sim_routes_free(&s->routes);
    rl_map_close(s->map);
    s->map = NULL;
}

int lab_sim_fault(const lab_sim *s, int id, rl_lab_fault_kind kind, double t)
{
    for (size_t i = 0; i < s->o.fault_count; i++) {
        const rl_lab_fault *f = &s->o.faults[i];
        if (f->vehicle == id && f->kind == kind && t >= f->t0 && (f->t1 < 0 || t <= f->t1))
            return 1;
    }
    return 0;
}

/* 0..1: how far a fault of `kind` has moved vehicle `id` over at `t`, ramping in over
 * `ramp` s from T0 and out over `ramp` s from T1. */
static double fault_ramp(const lab_sim *s, int id, rl_lab_fault_kind kind, double t, double ramp)
{
    double r = 0;
    for (size_t i = 0; i < s->o.fault_count; i++) {
        const rl_lab_fault *f = &s->o.faults[i];
        if (f->vehicle != id || f->kind != kind)
            continue;
        double in = smoothstep((t - f->t0) / ramp);
        double out = f->t1 < 0 ? 1 : 1 - smoothstep((t - f->t1) / ramp);
        r = fmax(r, fmin(in, out));
    }
    return r;
}

/* ---- the planner --------------------------------------------------------------------- */

/* Where the planner's reference of vehicle `v` is, and its velocity. */
static void plan_ref(const lab_sim *s, const sim_vehicle *v, const sim_plan *p, double *x,
                     double *y, double *vx, double *vy)
{
    if (p->mode != PLAN_ROUTE) {
        double dx = p->gx - p->px, dy = p->gy - p->py, d = hypot(dx, dy);
        *x = p->px;
        *y = p->py;
        *vx = d > 1e-9 ? p->v * dx / d : 0;
        *vy = d > 1e-9 ? p->v * dy / d : 0;
        return;
    }
    double tx, ty;
    sim_path_at(&s->routes.paths[v->route], p->s, x, y, &tx, &ty);
    double off = LANE_OFFSET * fault_ramp(s, v->id, RL_LAB_FAULT_LEAVE_LANE, p->t, LANE_RAMP);
    double doff = LANE_OFFSET *
                  (fault_ramp(s, v->id, RL_LAB_FAULT_LEAVE_LANE, p->t + 1e-3, LANE_RAMP) -
                   fault_ramp(s, v->id, RL_LAB_FAULT_LEAVE_LANE, p->t - 1e-3, LANE_RAMP)) / 2e-3;
    /* To the right of the direction of travel: (ty, -tx). */
    *x += off * ty;
    *y -= off * tx;
    *vx = p->v * tx + doff * ty;
    *vy = p->v * ty - doff * tx;
}

/* The corner of the lab area nearest to the vehicle's route, EXIT_BEYOND outside. */
static void exit_goal(const lab_sim *s, const sim_vehicle *v, double *gx, double *gy)
{
    const sim_path *p = &s->routes.paths[v->route];
    double mx = (s->area[0] + s->area[2]) / 2, my = (s->area[1] + s->area[3]) / 2;
    *gx = p->cx >= mx ? s->area[2] + EXIT_BEYOND : s->area[0] - EXIT_BEYOND;
    *gy = p->cy >= my ? s->area[3] + EXIT_BEYOND : s->area[1] - EXIT_BEYOND;
}

/* Moves the reference straight towards (gx, gy); 1 on arrival. `brake` stops it there. */
static int plan_line(sim_plan *p, double speed, int brake, double h)
{
    double dx = p->gx - p->px, dy = p->gy - p->py, d = hypot(dx, dy);
    double want = brake ? fmin(speed, sqrt(2 * PLAN_ACCEL * d)) : speed;
    p->v += clamp(want - p->v, -PLAN_ACCEL * h, PLAN_ACCEL * h);
    double step = p->v * h;
    if (d <= step || d < 1e-9) {
        p->px = p->gx;
        p->py = p->gy;
        return 1;
    }
    p->px += step * dx / d;
    p->py += step * dy / d;
    return 0;
}

/* One planner step of `h` s: the timetable along the route, and the faults that change it. */
static void plan_step(const lab_sim *s, const sim_vehicle *v, sim_plan *p, double h)
{
    const sim_path *path = &s->routes.paths[v->route];
    int leave_area = lab_sim_fault(s, v->id, RL_LAB_FAULT_LEAVE_AREA, p->t);
    if (leave_area && p->mode != PLAN_EXIT) {
        double vx, vy;
        plan_ref(s, v, p, &p->px, &p->py, &vx, &vy);
        exit_goal(s, v, &p->gx, &p->gy);
        p->ex = p->px;
        p->ey = p->py;
        p->mode = PLAN_EXIT;
    } else if (!leave_area && p->mode == PLAN_EXIT) {
        /* The way back: the car cannot turn round out there without going further out, so
           it backs along the line it came, to where it left its route, and drives on. */
        p->gx = p->ex;
        p->gy = p->ey;
        p->v = 0;
        p->mode = PLAN_BACK;
    }
    if (p->mode == PLAN_EXIT) {
        (void)plan_line(p, s->o.speed, 1, h);
    } else if (p->mode == PLAN_BACK) {
        if (plan_line(p, s->o.speed, 1, h)) {
            p->s = sim_path_nearest(path, p->px, p->py);
            p->v = 0;
            p->mode = PLAN_ROUTE;
        }
    } else if (p->mode == PLAN_RETURN) {
        if (plan_line(p, s->o.speed, 0, h))
            p->mode = PLAN_ROUTE;
    } else {
        double want = s->o.speed, accel = PLAN_ACCEL;
        if (lab_sim_fault(s, v->id, RL_LAB_FAULT_SPEEDING, p->t)) {
            want *= SPEEDING_FACTOR;
            accel = SPEEDING_ACCEL;
        }
        if (!path->closed)
            want = fmin(want, sqrt(2 * PLAN_ACCEL * fmax(0, p->s_max - p->s)));
        p->v += clamp(want - p->v, -accel * h, accel * h);
        p->s += p->v * h;
        if (!path->closed && p->s > p->s_max)
            p->s = p->s_max;
    }
    p->t += h;
}

static void plan_advance(const lab_sim *s, const sim_vehicle *v, sim_plan *p, double t)
{
    while (p->t + 1e-9 < t)
        plan_step(s, v, p, PLAN_DT);
}

/* Keeps a command in the vehicle's queue (the oldest goes when it is full); takes `pts`. */
static sim_command *queue_push(sim_vehicle *v, int64_t valid_after,
                               runlab_msgs_msg_dds__TrajectoryPoint_ *pts, uint32_t n)
{
    if (v->queued == SIM_CMD_QUEUE) {
        size_t oldest = 0;
        for (size_t i = 1; i < v->queued; i++)
            if (v->queue[i].valid_after < v->queue[oldest].valid_after)
                oldest = i;
        free(v->queue[oldest].pts);
        memmove(&v->queue[oldest], &v->queue[oldest + 1],
                (v->queued - oldest - 1) * sizeof v->queue[0]);
        v->queued--;
    }
    sim_command *c = &v->queue[v->queued++];
    c->valid_after = valid_after;
    c->pts = pts;
    c->n = n;
    c->external = 0;
    return c;
}

static int64_t stamp_at(int64_t start_ns, double t)
{
    return start_ns + (int64_t)llround(t * 1e9);
}

void lab_sim_plan(lab_sim *s, size_t i, double t, int64_t start_ns,
                  runlab_msgs_msg_dds__VehicleCommandTrajectory_ *m)
{
    sim_vehicle *v = &s->veh[i];
    plan_advance(s, v, &v->plan, t);
    runlab_msgs_msg_dds__TrajectoryPoint_ *pts = calloc(SIM_CMD_POINTS, sizeof *pts);
    memset(m, 0, sizeof *m);
    m->vehicle_id = (uint8_t)v->id;
    m->header.create_stamp = m->header.valid_after_stamp = (uint64_t)stamp_at(start_ns, t);
    if (!pts)
        return; /* out of memory: no command this time; the vehicle keeps the last one */
    sim_plan p = v->plan;
    for (int k = 0; k < SIM_CMD_POINTS; k++) {
        plan_advance(s, v, &p, t + k * CMD_SPACING);
        pts[k].t = (uint64_t)stamp_at(start_ns, t + k * CMD_SPACING);
        /* The velocity from the positions the reference takes next (second order), so that
           points and velocities agree also where a fault moves it off the route. */
        double x[3], y[3], vx, vy;
        sim_plan q = p;
        for (int j = 0; j < 3; j++) {
            if (j)
                plan_step(s, v, &q, PLAN_DT);
            plan_ref(s, v, &q, &x[j], &y[j], &vx, &vy);
        }
        pts[k].px = x[0];
        pts[k].py = y[0];
        pts[k].vx = (-3 * x[0] + 4 * x[1] - x[2]) / (2 * PLAN_DT);
        pts[k].vy = (-3 * y[0] + 4 * y[1] - y[2]) / (2 * PLAN_DT);
    }
    sim_command *c = queue_push(v, (int64_t)m->header.valid_after_stamp, pts, SIM_CMD_POINTS);
    m->trajectory_points._buffer = c->pts;
    m->trajectory_points._length = m->trajectory_points._maximum = c->n;
}

/* Queues `pts` (taken) as vehicle `i`'s command from outside: the built-in planner's
 * commands give way at once, also those valid later; the vehicle follows the outside
 * commands until the last point's stamp. */
static void take_external_points(lab_sim *s, size_t i, int64_t valid_after,
                                 runlab_msgs_msg_dds__TrajectoryPoint_ *pts, uint32_t n,
                                 int64_t now_ns)
{
    sim_vehicle *v = &s->veh[i];
    size_t kept = 0;
    for (size_t k = 0; k < v->queued; k++) {
        if (v->queue[k].external)
            v->queue[kept++] = v->queue[k];
        else
            free(v->queue[k].pts);
    }
    v->queued = kept;
    queue_push(v, valid_after, pts, n)->external = 1;
    int64_t until = (int64_t)pts[n - 1].t;
    v->external = 1;
    v->external_until = until > now_ns ? until : now_ns;
}

void lab_sim_take_command(lab_sim *s, size_t i, const runlab_msgs_msg_dds__VehicleCommandTrajectory_ *m,
                          int64_t now_ns)
{
    uint32_t n = m->trajectory_points._length;
    if (!n || n > SIM_MAX_EXTERNAL_POINTS)
        return;
    runlab_msgs_msg_dds__TrajectoryPoint_ *pts = malloc(n * sizeof *pts);
    if (!pts)
        return;
    memcpy(pts, m->trajectory_points._buffer, n * sizeof *pts);
    take_external_points(s, i, (int64_t)m->header.valid_after_stamp, pts, n, now_ns);
}

uint32_t lab_sim_path_points(const runlab_msgs_msg_dds__VehicleCommandPathTracking_ *m,
                             runlab_msgs_msg_dds__TrajectoryPoint_ *pts)
{
    const runlab_msgs_msg_dds__PathPoint_ *path = m->path._buffer;
    uint32_t n = m->path._length, out = 0;
    double speed = m->speed;
    if (!n || n > SIM_MAX_EXTERNAL_POINTS || !(speed > 0) || !isfinite(speed))
        return 0;
    const int64_t t0 = (int64_t)m->header.valid_after_stamp;
    double s_last = 0;
    for (uint32_t k = 0; k < n; k++) {
        const runlab_msgs_msg_dds__PathPoint_ *p = &path[k];
        if (!isfinite(p->s) || !isfinite(p->pose.x) || !isfinite(p->pose.y) ||
            !isfinite(p->pose.yaw))
            return 0;
        /* A point that does not advance along the path would need an infinite speed. */
        if (out && !(p->s > s_last))
            continue;
        double dt = (p->s - (out ? s_last : p->s)) / speed;
        int64_t t = out ? (int64_t)pts[out - 1].t + (int64_t)llround(dt * 1e9) : t0;
        pts[out++] = (runlab_msgs_msg_dds__TrajectoryPoint_){
            .t = (uint64_t)t, .px = p->pose.x, .py = p->pose.y,
            .vx = speed * cos(p->pose.yaw), .vy = speed * sin(p->pose.yaw)};
        s_last = p->s;
    }
    /* The path ends at a stand, held for a while before the built-in planner takes over
       again (as a speed or direct command is held): a last point repeated. */
    if (out) {
        pts[out - 1].vx = pts[out - 1].vy = 0;
        pts[out] = pts[out - 1];
        pts[out].t += PATH_END_HOLD_NS;
        out++;
    }
    return out;
}

void lab_sim_take_path(lab_sim *s, size_t i,
                       const runlab_msgs_msg_dds__VehicleCommandPathTracking_ *m, int64_t now_ns)
{
    uint32_t n = m->path._length;
    if (!n || n > SIM_MAX_EXTERNAL_POINTS)
        return;
    runlab_msgs_msg_dds__TrajectoryPoint_ *pts = malloc(((size_t)n + 1) * sizeof *pts);
    if (!pts)
        return;
    n = lab_sim_path_points(m, pts);
    if (!n) {
        free(pts);
        return;
    }
    take_external_points(s, i, (int64_t)m->header.valid_after_stamp, pts, n, now_ns);
}

void lab_sim_take_external(lab_sim *s, size_t i, int kind, int64_t valid_after, double a,
                           double b, int64_t now_ns)
{
    sim_vehicle *v = &s->veh[i];
    v->ext = (sim_external){.kind = kind, .valid_after = valid_after, .received = now_ns, .a = a, .b = b};
    v->external = 1;
    if (v->external_until < now_ns + EXTERNAL_HOLD_NS)
        v->external_until = now_ns + EXTERNAL_HOLD_NS;
}

void lab_sim_hermite(const runlab_msgs_msg_dds__TrajectoryPoint_ *pts, size_t n, int64_t t_ns,
                     double *px, double *py, double *vx, double *vy)
{
    if (t_ns <= (int64_t)pts[0].t || n == 1) {
        size_t k = t_ns <= (int64_t)pts[0].t ? 0 : n - 1;
        *px = pts[k].px;
        *py = pts[k].py;
        *vx = *vy = 0;
        if (t_ns == (int64_t)pts[0].t) {
            *vx = pts[0].vx;
            *vy = pts[0].vy;
        }
        return;
    }
    size_t k = 0;
    while (k + 1 < n && (int64_t)pts[k + 1].t < t_ns)
        k++;
    if (k + 1 == n) { /* after the last point: held there */
        *px = pts[n - 1].px;
        *py = pts[n - 1].py;
        *vx = *vy = 0;
        return;
    }
    const runlab_msgs_msg_dds__TrajectoryPoint_ *a = &pts[k], *b = &pts[k + 1];
    double T = (double)((int64_t)b->t - (int64_t)a->t) / 1e9;
    if (!(T > 0)) {
        *px = b->px;
        *py = b->py;
        *vx = b->vx;
        *vy = b->vy;
        return;
    }
    double u = (double)(t_ns - (int64_t)a->t) / 1e9 / T, u2 = u * u, u3 = u2 * u;
    double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2,
           h11 = u3 - u2;
    double d00 = 6 * u2 - 6 * u, d10 = 3 * u2 - 4 * u + 1, d01 = -6 * u2 + 6 * u,
           d11 = 3 * u2 - 2 * u;
    *px = h00 * a->px + h10 * T * a->vx + h01 * b->px + h11 * T * b->vx;
    *py = h00 * a->py + h10 * T * a->vy + h01 * b->py + h11 * T * b->vy;
    *vx = (d00 * a->px + d01 * b->px) / T + d10 * a->vx + d11 * b->vx;
    *vy = (d00 * a->py + d01 * b->py) / T + d10 * a->vy + d11 * b->vy;
}

/* ---- the vehicles ---------------------------------------------------------------------- */

/* The command active at `now_ns`: the latest whose valid-after stamp has passed. */
static const sim_command *active_command(const sim_vehicle *v, int64_t now_ns)
{
    const sim_command *best = NULL;
    for (size_t i = 0; i < v->queued; i++)
        if (v->queue[i].valid_after <= now_ns && (!best || v->queue[i].valid_after >= best->valid_after))
            best = &v->queue[i];
    return best;
}

/* Drives the centre towards reference (rx, ry) moving at (rvx, rvy): the centre's velocity
 * is set to the reference's plus a pull towards it, which a car realises with its speed
 * (along the heading) and its yaw rate (across, through the lever from the rear axle). */
static void track(sim_vehicle *v, double rx, double ry, double rvx, double rvy, double vmax,
                  double *v_want, double *steer)
{
    double cx, cy;
    centre(v, &cx, &cy);
    double ux = rvx + TRACK_GAIN * (rx - cx), uy = rvy + TRACK_GAIN * (ry - cy);
    double un = hypot(ux, uy);
    if (un > vmax) {
        ux *= vmax / un;
        uy *= vmax / un;
        un = vmax;
    }
    double c = cos(v->yaw), s = sin(v->yaw);
    double along = ux * c + uy * s, across = -ux * s + uy * c;
    /* A reference moving backwards (leave_area's way back, along the line the car came):
       the car backs straight, its heading kept. */
    if (rvx * c + rvy * s < -0.05 * hypot(rvx, rvy) && hypot(rvx, rvy) > 0.05) {
        *v_want = fmin(along, 0);
        *steer = 0;
        return;
    }
    /* A car turns only while it moves: with a moving goal aside or behind, creep while
       turning; a goal standing behind is stopped at, not circled. */
    int moving = hypot(rvx, rvy) > 0.05;
    *v_want = fmax(along, moving && un > 0.02 ? 0.3 * un : 0);
    double yaw_rate = across / AXLE_TO_CENTRE;
    double vv = fmax(fabs(v->v), 0.05);
    *steer = atan(RL_LAB_CAR_WHEELBASE * yaw_rate / vv);
}

/* A chaser (or one on its way back) aims at a point inside the lab area but swings wide: where it would
 * stop (its braking distance and 0.15 m more ahead) lies within 0.2 m of the area's edge or
 * beyond, it slows and turns hard towards the middle of the area. */
static void keep_inside(const lab_sim *s, const sim_vehicle *v, double *v_want, double *steer)
{
    double cx, cy, c = cos(v->yaw), sn = sin(v->yaw);
    centre(v, &cx, &cy);
    double ahead = v->v * v->v / (2 * MAX_ACCEL) + 0.15;
    double px = cx + ahead * c, py = cy + ahead * sn, m = 0.2;
    if (px > s->area[0] + m && px < s->area[2] - m && py > s->area[1] + m && py < s->area[3] - m)
        return;
    double mx = (s->area[0] + s->area[2]) / 2 - cx, my = (s->area[1] + s->area[3]) / 2 - cy;
    *steer = -mx * sn + my * c >= 0 ? MAX_STEER : -MAX_STEER;
    *v_want = fmin(*v_want, 0.5);
}

/* Where vehicle `j` will be `tau` s from now: along its route at its speed while it drives
 * on the route (its centre within 0.1 m of it), else straight on along its heading. */
static void predict(const lab_sim *s, size_t j, double tau, double *px, double *py)
{
    const sim_vehicle *o = &s->veh[j];
    const sim_path *path = &s->routes.paths[o->route];
    double ox, oy, rx, ry, tx, ty;
    centre(o, &ox, &oy);
    double s0 = sim_path_nearest(path, ox, oy);
    sim_path_at(path, s0, &rx, &ry, &tx, &ty);
    if (!o->chase && !o->external && hypot(rx - ox, ry - oy) < 0.1) {
        sim_path_at(path, s0 + o->v * tau, px, py, &tx, &ty);
        return;
    }
    *px = ox + o->v * cos(o->yaw) * tau;
    *py = oy + o->v * sin(o->yaw) * tau;
}

/* The intercept course of vehicle `k` on vehicle `j` at `speed`: the time tau at which a
 * straight run from k's centre meets j's predicted place (fixed point of tau = |P(tau) -
 * c| / speed; j is slower than a chaser, so it converges), and that place. */
static double intercept(const lab_sim *s, size_t k, size_t j, double speed, double *px,
                        double *py)
{
    double cx, cy;
    centre(&s->veh[k], &cx, &cy);
    double tau = 0;
    for (int it = 0; it < 30; it++) {
        predict(s, j, tau, px, py);
        double next = hypot(*px - cx, *py - cy) / speed;
        if (fabs(next - tau) < 1e-4) {
            tau = next;
            break;
        }
        tau = next;
    }
    return tau;
}

/* The chaser's partner: the other vehicle it reaches soonest on an intercept course at
 * the chase speed (the lower index for equal times); its index + 1, 0 when alone. */
int lab_sim_collision_partner(const lab_sim *s, size_t k)
{
    double best = INFINITY, px, py;
    int partner = 0;
    for (int j = 0; j < s->o.vehicles; j++) {
        if ((size_t)j == k)
            continue;
        double tau = intercept(s, k, (size_t)j, CHASE_SPEED_MAX, &px, &py);
        if (tau < best - 1e-9) {
            best = tau;
            partner = j + 1;
        }
    }
    return partner;
}

/* The collision fault's controller: far from its partner the chaser steers on an
 * intercept course (towards where the partner will be when the chaser gets there, kept
 * inside the lab area) at the chase speed; close to it, it holds its centre on the
 * partner's (position and velocity tracked, as the built-in controller tracks a command). */
static void chase(lab_sim *s, size_t k, double *v_want, double *steer)
{
    sim_vehicle *v = &s->veh[k];
    const sim_vehicle *o = &s->veh[v->chase - 1];
    double cx, cy, ox, oy;
    centre(v, &cx, &cy);
    centre(o, &ox, &oy);
    if (hypot(ox - cx, oy - cy) < CHASE_HOLD_DISTANCE) {
        track(v, ox, oy, o->v * cos(o->yaw), o->v * sin(o->yaw), o->v + CHASE_HOLD_EXCESS, v_want,
              steer);
        return;
    }
    double px, py;
    (void)intercept(s, k, (size_t)v->chase - 1, CHASE_SPEED_MAX, &px, &py);
    px = clamp(px, s->area[0] + CHASE_MARGIN, s->area[2] - CHASE_MARGIN);
    py = clamp(py, s->area[1] + CHASE_MARGIN, s->area[3] - CHASE_MARGIN);
    /* Turning onto the course as fast as the steering allows, then straight on: a yaw
       rate proportional to the heading error (the shortest way for a car whose turning
       circle does not depend on its speed). */
    double err = remainder(atan2(py - cy, px - cx) - v->yaw, 2 * M_PI);
    double yaw_rate = CHASE_HEADING_GAIN * err, vv = fmax(fabs(v->v), 0.05);
    *steer = clamp(atan(RL_LAB_CAR_WHEELBASE * yaw_rate / vv), -MAX_STEER, MAX_STEER);
    /* Arriving no faster than it can brake to the partner's speed on the way left. */
    double d = hypot(ox - cx, oy - cy), closing = sqrt(2 * CHASE_ACCEL * fmax(0, d - 0.1));
    *v_want = fmin(CHASE_SPEED_MAX, o->v + closing);
}

/* Speed and steering wanted by vehicle `k` at `now_ns`. */
static void control(lab_sim *s, size_t k, int64_t now_ns, double t, int driving, double *v_want,
                    double *steer)
{
    sim_vehicle *v = &s->veh[k];
    *v_want = 0;
    *steer = v->steer;
    if (!driving)
        return;
    if (lab_sim_fault(s, v->id, RL_LAB_FAULT_COLLISION, t)) {
        if (!v->chase)
            v->chase = lab_sim_collision_partner(s, k);
        if (v->chase) {
            chase(s, k, v_want, steer);
            return;
        }
    } else {
        v->chase = 0;
    }
    if (v->external && v->ext.kind && now_ns - v->ext.received < EXTERNAL_HOLD_NS &&
        v->ext.valid_after <= now_ns) {
        if (v->ext.kind == 1) {
            *v_want = clamp(v->ext.a, 0, MAX_SPEED);
            *steer = atan(RL_LAB_CAR_WHEELBASE * v->ext.b);
        } else {
            *v_want = clamp(v->ext.a, -1, 1) * 2.0;
            *steer = clamp(v->ext.b, -1, 1) * MAX_STEER;
        }
        return;
    }
    const sim_command *c = active_command(v, now_ns);
    if (!c)
        return;
    double rx, ry, rvx, rvy;
    lab_sim_hermite(c->pts, c->n, now_ns, &rx, &ry, &rvx, &rvy);
    double drift = DRIFT_MAX * fault_ramp(s, v->id, RL_LAB_FAULT_DRIFT, t, DRIFT_MAX / DRIFT_RATE);
    if (drift > 0) { /* to the right of the reference's direction (else the heading) */
        double n = hypot(rvx, rvy), tx = n > 1e-3 ? rvx / n : cos(v->yaw),
               ty = n > 1e-3 ? rvy / n : sin(v->yaw);
        rx += drift * ty;
        ry -= drift * tx;
    }
    /* Far from its reference (after a fault) it goes back no faster than 0.5 m/s above it. */
    double ref_speed = hypot(rvx, rvy), cx, cy;
    track(v, rx, ry, rvx, rvy, fmin(MAX_SPEED, fmax(1.2 * ref_speed, ref_speed + 0.5)), v_want,
          steer);
    centre(v, &cx, &cy);
    if (hypot(rx - cx, ry - cy) > 0.3 && !lab_sim_fault(s, v->id, RL_LAB_FAULT_LEAVE_AREA, t))
        keep_inside(s, v, v_want, steer); /* on its way back from a chase */
}

void lab_sim_step(lab_sim *s, int64_t now_ns, double t, double dt, int driving)
{
    int n = (int)ceil(dt / SUBSTEP - 1e-9);
    double h = dt / (n > 0 ? n : 1);
    for (int k = 0; k < s->o.vehicles; k++) {
        sim_vehicle *v = &s->veh[k];
        if (v->external && now_ns >= v->external_until) {
            /* Commands from outside stopped: the planner takes over where the vehicle is. */
            v->external = 0;
            v->ext.kind = 0;
            double cx, cy;
            centre(v, &cx, &cy);
            const sim_path *p = &s->routes.paths[v->route];
            v->plan.s = sim_path_nearest(p, cx, cy);
            double tx, ty;
            sim_path_at(p, v->plan.s, &v->plan.gx, &v->plan.gy, &tx, &ty);
            v->plan.px = cx;
            v->plan.py = cy;
            v->plan.v = 0;
            v->plan.t = t;
            v->plan.mode = PLAN_RETURN;
        }
    }
    for (int i = 0; i < (n > 0 ? n : 1); i++) {
        int64_t at = now_ns + (int64_t)llround(i * h * 1e9);
        double ti = t + i * h;
        for (int k = 0; k < s->o.vehicles; k++) {
            sim_vehicle *v = &s->veh[k];
            double want, steer;
            control(s, (size_t)k, at, ti, driving, &want, &steer);
            want = clamp(want, -MAX_SPEED, MAX_SPEED);
            double old = v->v, accel = MAX_ACCEL;
            if (driving && lab_sim_fault(s, v->id, RL_LAB_FAULT_SPEEDING, ti))
                accel = SPEEDING_ACCEL;
            if (driving && v->chase)
                accel = CHASE_ACCEL;
            v->v += clamp(want - v->v, -accel * h, accel * h);
            /* The speed controller only approaches zero; a car that slow stands. */
            if (want == 0 && fabs(v->v) < 0.005)
                v->v = 0;
            v->steer = clamp(steer, -MAX_STEER, MAX_STEER);
            v->accel = (v->v - old) / h;
            v->x += v->v * cos(v->yaw) * h;
            v->y += v->v * sin(v->yaw) * h;
            v->yaw = remainder(v->yaw + v->v / RL_LAB_CAR_WHEELBASE * tan(v->steer) * h, 2 * M_PI);
            v->odo += fabs(v->v) * h;
        }
    }
}

void lab_sim_record(lab_sim *s)
{
    for (int k = 0; k < s->o.vehicles; k++) {
        sim_vehicle *v = &s->veh[k];
        double *e = v->hist[v->hist_n % 64];
        centre(v, &e[0], &e[1]);
        e[2] = v->yaw;
        v->hist_n++;
    }
}

void lab_sim_state(const lab_sim *s, size_t i, int64_t stamp_ns, runlab_msgs_msg_dds__VehicleState_ *m)
{
    const sim_vehicle *v = &s->veh[i];
    double yaw_rate = v->v / RL_LAB_CAR_WHEELBASE * tan(v->steer);
    memset(m, 0, sizeof *m);
    m->header.create_stamp = (uint64_t)stamp_ns;
    m->header.valid_after_stamp = (uint64_t)stamp_ns;
    m->vehicle_id = (uint8_t)v->id;
    centre(v, &m->pose.x, &m->pose.y);
    m->pose.yaw = v->yaw;
    m->speed = v->v;
    m->imu_acceleration_forward = v->accel;
    m->imu_acceleration_left = v->v * yaw_rate;
    m->imu_yaw_rate = yaw_rate;
    m->odometer_distance = v->odo;
    m->battery_voltage = 8.2 - 0.002 * v->odo;
    m->motor_current = 0.3 + 0.4 * fabs(v->accel);
    m->is_real = false;
}

void lab_sim_observation(lab_sim *s, size_t i, int64_t stamp_ns, double t,
                         runlab_msgs_msg_dds__VehicleObservation_ *m)
{
    const sim_vehicle *v = &s->veh[i];
    memset(m, 0, sizeof *m);
    /* The camera saw the vehicle one state tick ago (0.5 s when late), at that tick's pose. */
    uint64_t lag = 1;
    if (lab_sim_fault(s, v->id, RL_LAB_FAULT_LATE_OBSERVATION, t))
        lag = (uint64_t)llround(LATE_OBSERVATION_S * s->o.state_rate_hz);
    if (lag > 63)
        lag = 63;
    if (lag + 1 > v->hist_n)
        lag = v->hist_n ? v->hist_n - 1 : 0;
    const double *e = v->hist[(v->hist_n - 1 - lag) % 64];
    m->header.create_stamp = (uint64_t)(stamp_ns - (int64_t)llround((double)lag * 1e9 / s->o.state_rate_hz));
    m->header.valid_after_stamp = (uint64_t)stamp_ns;
    m->vehicle_id = (uint8_t)v->id;
    m->pose.x = e[0];
    m->pose.y = e[1];
    m->pose.yaw = e[2];
    /* The positioning system's noise: about 2 mm and 0.01 rad. */
    m->pose.x += 0.004 * (uniform(s) - 0.5);
    m->pose.y += 0.004 * (uniform(s) - 0.5);
    m->pose.yaw += 0.02 * (uniform(s) - 0.5);
}
