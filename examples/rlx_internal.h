/* rlx's internals shared by its files (rlx.c: problems, state spaces, planners;
 * rlx_problem_json.c: the problem as JSON; rlx_dubins.c: the car's Dubins curves). Not part
 * of rlx.h: the layout may change. */
#ifndef RLX_INTERNAL_H
#define RLX_INTERNAL_H

#include "rlx.h"

#include <stdbool.h>
#include <stddef.h>

/* MAX_DIM: coordinates of a state (x, y, z, yaw at most); MAX_WDIM: of the workspace. */
enum { MAX_DIM = 4, MAX_WDIM = 3, MAX_BOXES = 64 };

typedef struct box {
    double lo[MAX_WDIM], hi[MAX_WDIM];
} box;

/* The robot. A point's state is its position. A rigid body is a rectangle (2D) or a box
 * (3D) centred on its position, with a heading (yaw, about z) as one more coordinate: SE(2)
 * in 2D and position + yaw in 3D, the configuration space of ground and most aerial
 * robots. A car is a rigid rectangle in SE(2) that moves forward only, along arcs of at
 * least its turning radius and straight lines (a Dubins car): its motions are Dubins
 * curves and its distance their length, which is not symmetric. Obstacles are
 * axis-aligned boxes. */
typedef enum robot_kind { ROBOT_POINT, ROBOT_RIGID, ROBOT_CAR } robot_kind;

struct rlx_problem {
    robot_kind robot;
    int wdim;              /* workspace dimension, 2 or 3: a state's first wdim coordinates */
    int dim;               /* state dimension: wdim, plus 1 for a rigid body's heading */
    int yaw;               /* index of the heading in a state (radians in [-pi, pi)), -1 for none */
    double half[MAX_WDIM]; /* a rigid body's half extents along its own axes */
    double yaw_weight;     /* distance per radian of heading (see dist) */
    double turning_radius; /* a car's least turning radius */
    double margin;         /* clearance the planners demand of checked states (motion_ok) */
    double start[MAX_DIM], goal[MAX_DIM], goal_radius, resolution;
    box boxes[MAX_BOXES];
    size_t n_boxes;
    char name[32];
    char describe[4096];
};

/* A Dubins curve: from `start` (x, y, yaw), three segments (L: left arc, R: right arc, S:
 * straight) of the given lengths, in units of the turning radius `rho`. */
typedef struct rlx_dubins {
    double start[3], rho, seg[3];
    char word[4]; /* "LSL", "RSR", "LSR", "RSL", "RLR" or "LRL" */
} rlx_dubins;

/* The shortest Dubins curve from a to b with turning radius rho > 0 (always exists). */
void rlx_dubins_shortest(const double *a, const double *b, double rho, rlx_dubins *out);
/* Its length (in the workspace's units). */
double rlx_dubins_length(const rlx_dubins *d);
/* The state (x, y, yaw in [-pi, pi)) at arc length s along it, 0 <= s <= length. */
void rlx_dubins_at(const rlx_dubins *d, double s, double *q);

#endif
