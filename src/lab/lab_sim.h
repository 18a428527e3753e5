/* The simulator's model, shared by its DDS loop and its offline writer (lab_sim_run.c):
 * kinematic bicycles of the lab's 1:18 car following a closed path by pure pursuit, with
 * the injected faults, and the messages they publish. Not public API. */
#ifndef RUNLAB_SRC_LAB_SIM_H
#define RUNLAB_SRC_LAB_SIM_H

#include "runlab/lab.h"

#include "runlab_msgs.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sim_vehicle {
    int id;
    double x, y, yaw, v; /* rear axle, m, rad, m/s */
    double steer, accel, odo;
    size_t target;       /* index of the path point being pursued */
} sim_vehicle;

typedef struct lab_sim {
    rl_lab_sim_options o;
    double *path; /* x,y pairs, owned */
    size_t npath;
    sim_vehicle *veh;
    uint64_t rng;
} lab_sim;

/* Checks the options and places the vehicles along the path. RL_EINVAL, RL_ENOMEM. */
int lab_sim_init(lab_sim *s, const rl_lab_sim_options *o);
void lab_sim_free(lab_sim *s);

/* 1 when fault `kind` is active on vehicle `id` at `t` s after START. */
int lab_sim_fault(const lab_sim *s, int id, rl_lab_fault_kind kind, double t);

/* Advances every vehicle by `dt` s; `driving` 0 brakes to a stand. `t`: s after START. */
void lab_sim_step(lab_sim *s, double t, double dt, int driving);

/* The messages of vehicle `i` (0-based) at `stamp_ns`, `t` s after START. */
void lab_sim_state(const lab_sim *s, size_t i, int64_t stamp_ns, runlab_msgs_msg_dds__VehicleState_ *m);
void lab_sim_observation(lab_sim *s, size_t i, int64_t stamp_ns, double t,
                         runlab_msgs_msg_dds__VehicleObservation_ *m);

#endif
