/* The simulator's model, shared by its DDS loop and its offline writer (lab_sim_run.c):
 * routes along the map's lanelet centre lines (lab_sim_route.c), the built-in planner that
 * turns them into trajectory commands, and kinematic bicycles of the lab's 1:18 car whose
 * controller tracks the active command (lab_sim.c), with the injected faults. Not public API. */
#ifndef RUNLAB_SRC_LAB_SIM_H
#define RUNLAB_SRC_LAB_SIM_H

#include "runlab/lab.h"
#include "runlab/map.h"

#include "runlab_msgs.h"

#include <stddef.h>
#include <stdint.h>

/* A path as a polyline with arc lengths; closed paths wrap around. */
typedef struct sim_path {
    double *xy;    /* x,y pairs, owned */
    double *s;     /* arc length at each point */
    size_t n;
    double length; /* closed: including the segment back to the first point */
    int closed;
    double cx, cy; /* centroid of the points */
} sim_path;

/* Point, unit tangent and arc length clamped/wrapped, at arc length s. */
void sim_path_at(const sim_path *p, double s, double *x, double *y, double *tx, double *ty);
/* Arc length of the path point nearest to (x, y). */
double sim_path_nearest(const sim_path *p, double x, double y);
void sim_path_free(sim_path *p);

/* The routes of a map: closed loops through the routing graph that keep apart from each
 * other (or one open route when the graph has no usable loop). */
typedef struct sim_routes {
    sim_path *paths;
    size_t count;
} sim_routes;

/* Builds the routes of `map`. RL_OK, RL_ENOENT (no route at all), RL_ENOMEM. */
int sim_routes_from_map(const rl_map *map, sim_routes *out);
/* One closed route through the given points. */
int sim_routes_from_waypoints(const double *xy, size_t n, sim_routes *out);
void sim_routes_free(sim_routes *r);

enum { SIM_CMD_POINTS = 11, SIM_CMD_QUEUE = 4 };
/* The most points a command from outside may hold (a larger one is dropped). */
#define SIM_MAX_EXTERNAL_POINTS 100000u

/* A trajectory command as the vehicle keeps it (points owned here, not by a message). */
typedef struct sim_command {
    int64_t valid_after;
    runlab_msgs_msg_dds__TrajectoryPoint_ *pts;
    uint32_t n;
    int external; /* from another participant, not the built-in planner */
} sim_command;

/* PLAN_EXIT: straight out over a corner (leave_area); PLAN_BACK: after it, backing along
 * the same line to where it left the route; PLAN_RETURN: straight to the route point
 * (gx, gy) after commands from outside. */
typedef enum sim_plan_mode { PLAN_ROUTE = 0, PLAN_EXIT, PLAN_BACK, PLAN_RETURN } sim_plan_mode;

/* The built-in planner's state of one vehicle: where the reference is on its route. */
typedef struct sim_plan {
    double t;      /* s after START this state is at */
    double s, v;   /* arc length and speed along the route */
    double s_max;  /* open routes: where this vehicle stops */
    sim_plan_mode mode;
    double px, py; /* EXIT / RETURN: reference position, moving to (gx, gy) */
    double gx, gy;
    double leave_area_t0; /* when the current EXIT began (-1: none yet) */
    double ex, ey;        /* EXIT: where the reference left the route */
} sim_plan;

/* External commands (DDS): speed + curvature or direct, latest only. */
typedef struct sim_external {
    int kind; /* 0 none, 1 speed+curvature, 2 direct */
    int64_t valid_after, received;
    double a, b; /* speed, curvature / throttle, steering */
} sim_external;

typedef struct sim_vehicle {
    int id;
    size_t route;
    double x, y, yaw, v; /* rear axle, m, rad, m/s */
    double steer, accel, odo;
    sim_plan plan;
    sim_command queue[SIM_CMD_QUEUE]; /* newest last */
    size_t queued;
    int external;  /* 1 while commands from outside drive it (DDS) */
    int64_t external_until;
    sim_external ext;
    int chase;     /* collision: index of the chased vehicle + 1, 0 none */
    double hist[64][3]; /* centre pose per state tick, ring (observations) */
    uint64_t hist_n;
} sim_vehicle;

typedef struct lab_sim {
    rl_lab_sim_options o;
    rl_map *map; /* NULL with waypoints only */
    sim_routes routes;
    double area[4]; /* xmin, ymin, xmax, ymax of the lab area */
    sim_vehicle *veh;
    uint64_t rng;
} lab_sim;

/* Checks the options, loads the map, builds the routes and places the vehicles.
 * RL_EINVAL, RL_ENOENT, RL_ENOMEM, map errors. */
int lab_sim_init(lab_sim *s, const rl_lab_sim_options *o);
void lab_sim_free(lab_sim *s);

/* The collision fault's partner of vehicle index `k`: the other vehicle it reaches soonest
 * on an intercept course at the chase speed, as index + 1 (0: no other vehicle). */
int lab_sim_collision_partner(const lab_sim *s, size_t k);

/* 1 when fault `kind` is active on vehicle `id` at `t` s after START. */
int lab_sim_fault(const lab_sim *s, int id, rl_lab_fault_kind kind, double t);

/* The built-in planner: a command for vehicle `i` at `t` s after START (start_ns: START's
 * stamp), points every 0.1 s for 1 s, also handed to the vehicle. Advances the plan to t.
 * `m->trajectory_points._buffer` points into the vehicle's queue (valid until the next
 * command for that vehicle). */
void lab_sim_plan(lab_sim *s, size_t i, double t, int64_t start_ns,
                  runlab_msgs_msg_dds__VehicleCommandTrajectory_ *m);

/* Hands vehicle `i` a command from outside (copied). `now_ns` is when it arrived. */
void lab_sim_take_command(lab_sim *s, size_t i, const runlab_msgs_msg_dds__VehicleCommandTrajectory_ *m,
                          int64_t now_ns);
/* The timed trajectory a path-tracking command stands for: the first point at the command's
 * valid-after stamp, the next ones as far apart in time as their arc lengths at the
 * commanded speed, velocities along each pose's yaw, zero at the last point, which is then
 * held for 1 s. Points whose `s` does not increase are skipped. `pts` holds path._length + 1
 * points; returns how many were
 * written, 0 for an empty or non-finite path or a speed not above zero (no command). */
uint32_t lab_sim_path_points(const runlab_msgs_msg_dds__VehicleCommandPathTracking_ *m,
                             runlab_msgs_msg_dds__TrajectoryPoint_ *pts);
/* Hands vehicle `i` a path-tracking command from outside as lab_sim_path_points makes it. */
void lab_sim_take_path(lab_sim *s, size_t i,
                       const runlab_msgs_msg_dds__VehicleCommandPathTracking_ *m, int64_t now_ns);
void lab_sim_take_external(lab_sim *s, size_t i, int kind, int64_t valid_after, double a,
                           double b, int64_t now_ns);

/* Advances every vehicle from `now_ns` by `dt` s (t: s after START at now_ns); `driving` 0
 * brakes to a stand. */
void lab_sim_step(lab_sim *s, int64_t now_ns, double t, double dt, int driving);

/* Notes every vehicle's pose of this state tick (the positioning system's history): call
 * once per tick, before the messages. */
void lab_sim_record(lab_sim *s);

/* The messages of vehicle `i` (0-based) at `stamp_ns`, `t` s after START. */
void lab_sim_state(const lab_sim *s, size_t i, int64_t stamp_ns, runlab_msgs_msg_dds__VehicleState_ *m);
void lab_sim_observation(lab_sim *s, size_t i, int64_t stamp_ns, double t,
                         runlab_msgs_msg_dds__VehicleObservation_ *m);

/* Cubic Hermite interpolation of trajectory points at `t_ns` (held at the ends). */
void lab_sim_hermite(const runlab_msgs_msg_dds__TrajectoryPoint_ *pts, size_t n, int64_t t_ns,
                     double *px, double *py, double *vx, double *vy);

#endif
