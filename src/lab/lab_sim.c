/* The simulator's vehicles: the lab's 1:18 car as a kinematic bicycle (wheelbase 0.15 m;
 * the pose reported is the centre of its 0.22 m x 0.107 m rectangle), driving a closed path
 * by pure pursuit at a set speed, and the faults injected on chosen vehicles and times. */
#include "lab/lab_sim.h"

#include "runlab/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOOKAHEAD 0.3        /* m, pure pursuit */
#define MAX_STEER 0.45       /* rad */
#define MAX_ACCEL 2.0        /* m/s^2 */
#define LANE_OFFSET 0.35     /* m to the side when leaving the lane */
#define DRIFT_BIAS 0.12      /* rad of steering bias */
#define LATE_OBSERVATION_NS 500000000ll
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
    o->speed = 0.5;
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

int lab_sim_init(lab_sim *s, const rl_lab_sim_options *o)
{
    memset(s, 0, sizeof *s);
    if (o->vehicles < 1 || o->vehicles > 64)
        return rl_error_set(RL_EINVAL, "sim: vehicles: %d is not 1..64", o->vehicles);
    if (!(o->speed >= 0 && o->speed <= 5) || !(o->state_rate_hz >= 1 && o->state_rate_hz <= 1000) ||
        !(o->observation_rate_hz > 0 && o->observation_rate_hz <= o->state_rate_hz))
        return rl_error_set(RL_EINVAL, "sim: speed 0..5 m/s, state rate 1..1000 Hz, observation "
                                       "rate up to the state rate");
    if (o->waypoints && o->waypoint_count < 3)
        return rl_error_set(RL_EINVAL, "sim: waypoints: at least 3 points");
    for (size_t i = 0; i < o->fault_count; i++)
        if (o->faults[i].vehicle > o->vehicles)
            return rl_error_set(RL_EINVAL, "sim: fault %s on vehicle %d: there are %d vehicles",
                                rl_lab_fault_name(o->faults[i].kind), o->faults[i].vehicle,
                                o->vehicles);
    s->o = *o;
    s->npath = o->waypoints ? o->waypoint_count : 72;
    s->path = malloc(2 * s->npath * sizeof *s->path);
    s->veh = calloc((size_t)o->vehicles, sizeof *s->veh);
    if (!s->path || !s->veh) {
        lab_sim_free(s);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < s->npath; i++) {
        if (o->waypoints) {
            s->path[2 * i] = o->waypoints[2 * i];
            s->path[2 * i + 1] = o->waypoints[2 * i + 1];
        } else {
            double a = 2 * M_PI * (double)i / (double)s->npath;
            s->path[2 * i] = 2.25 + 1.2 * cos(a);
            s->path[2 * i + 1] = 2.0 + 1.2 * sin(a);
        }
    }
    s->rng = o->seed ? o->seed : 1;
    for (int k = 0; k < o->vehicles; k++) {
        sim_vehicle *v = &s->veh[k];
        size_t at = (size_t)k * s->npath / (size_t)o->vehicles, next = (at + 1) % s->npath;
        double dx = s->path[2 * next] - s->path[2 * at], dy = s->path[2 * next + 1] - s->path[2 * at + 1];
        v->id = k + 1;
        v->yaw = atan2(dy, dx);
        /* The centre on the path, with a few mm of placement error. */
        v->x = s->path[2 * at] - AXLE_TO_CENTRE * cos(v->yaw) + 0.01 * (uniform(s) - 0.5);
        v->y = s->path[2 * at + 1] - AXLE_TO_CENTRE * sin(v->yaw) + 0.01 * (uniform(s) - 0.5);
        v->target = next;
    }
    return RL_OK;
}

void lab_sim_free(lab_sim *s)
{
    free(s->path);
    free(s->veh);
    s->path = NULL;
    s->veh = NULL;
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

static void centre(const sim_vehicle *v, double *cx, double *cy)
{
    *cx = v->x + AXLE_TO_CENTRE * cos(v->yaw);
    *cy = v->y + AXLE_TO_CENTRE * sin(v->yaw);
}

/* The point vehicle `v` steers towards, with the faults that change it. */
static void aim(lab_sim *s, sim_vehicle *v, double t, double *tx, double *ty)
{
    while (hypot(s->path[2 * v->target] - v->x, s->path[2 * v->target + 1] - v->y) < LOOKAHEAD)
        v->target = (v->target + 1) % s->npath;
    size_t a = v->target, b = (a + 1) % s->npath;
    *tx = s->path[2 * a];
    *ty = s->path[2 * a + 1];
    if (lab_sim_fault(s, v->id, RL_LAB_FAULT_LEAVE_LANE, t)) {
        double dx = s->path[2 * b] - *tx, dy = s->path[2 * b + 1] - *ty, n = hypot(dx, dy);
        if (n > 0) { /* to the right of the direction of travel */
            *tx += LANE_OFFSET * dy / n;
            *ty -= LANE_OFFSET * dx / n;
        }
    }
    if (lab_sim_fault(s, v->id, RL_LAB_FAULT_LEAVE_AREA, t)) {
        *tx = -1.0;
        *ty = -1.0;
    }
    if (lab_sim_fault(s, v->id, RL_LAB_FAULT_COLLISION, t)) {
        double best = INFINITY, cx, cy;
        centre(v, &cx, &cy);
        for (int k = 0; k < s->o.vehicles; k++) {
            if (s->veh[k].id == v->id)
                continue;
            double ox, oy;
            centre(&s->veh[k], &ox, &oy);
            if (hypot(ox - cx, oy - cy) < best) {
                best = hypot(ox - cx, oy - cy);
                *tx = ox;
                *ty = oy;
            }
        }
    }
}

void lab_sim_step(lab_sim *s, double t, double dt, int driving)
{
    for (int k = 0; k < s->o.vehicles; k++) {
        sim_vehicle *v = &s->veh[k];
        double tx, ty;
        aim(s, v, t, &tx, &ty);
        double alpha = atan2(ty - v->y, tx - v->x) - v->yaw;
        double dist = hypot(tx - v->x, ty - v->y);
        double steer = atan2(2 * RL_LAB_CAR_WHEELBASE * sin(alpha), dist > 1e-6 ? dist : 1e-6);
        if (lab_sim_fault(s, v->id, RL_LAB_FAULT_DRIFT, t))
            steer += DRIFT_BIAS;
        v->steer = steer > MAX_STEER ? MAX_STEER : steer < -MAX_STEER ? -MAX_STEER : steer;
        double want = driving ? s->o.speed : 0;
        if (driving && lab_sim_fault(s, v->id, RL_LAB_FAULT_SPEEDING, t))
            want *= 3;
        /* A chaser as fast as its target never reaches it: on a collision course it drives
           twice the set speed. */
        if (driving && lab_sim_fault(s, v->id, RL_LAB_FAULT_COLLISION, t))
            want *= 2;
        double a = 4.0 * (want - v->v);
        v->accel = a > MAX_ACCEL ? MAX_ACCEL : a < -MAX_ACCEL ? -MAX_ACCEL : a;
        v->v += v->accel * dt;
        /* The speed controller only approaches zero; a car that slow stands. */
        if (v->v < 0 || (want == 0 && v->v < 0.005))
            v->v = 0;
        v->x += v->v * cos(v->yaw) * dt;
        v->y += v->v * sin(v->yaw) * dt;
        v->yaw = remainder(v->yaw + v->v / RL_LAB_CAR_WHEELBASE * tan(v->steer) * dt, 2 * M_PI);
        v->odo += v->v * dt;
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
    int64_t seen = stamp_ns;
    if (lab_sim_fault(s, v->id, RL_LAB_FAULT_LATE_OBSERVATION, t))
        seen -= LATE_OBSERVATION_NS;
    m->header.create_stamp = (uint64_t)seen;
    m->header.valid_after_stamp = (uint64_t)stamp_ns;
    m->vehicle_id = (uint8_t)v->id;
    centre(v, &m->pose.x, &m->pose.y);
    /* The positioning system's noise: about 2 mm and 0.01 rad. */
    m->pose.x += 0.004 * (uniform(s) - 0.5);
    m->pose.y += 0.004 * (uniform(s) - 0.5);
    m->pose.yaw = v->yaw + 0.02 * (uniform(s) - 0.5);
}
