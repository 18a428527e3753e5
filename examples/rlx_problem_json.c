/* A built-in problem as the JSON document `runlab bench` gives executable planners
 * (RUNLAB_PROBLEM_FILE, format "runlab-problem/1", described in docs/bench.md): enough for
 * a planner in any language to rebuild the problem exactly (bounds, robot, start, goal,
 * tolerance, resolution, every obstacle). */
#include "rlx_internal.h"

#include "runlab/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
    char *s;
    size_t n, cap;
    bool failed;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= b->cap - b->n) {
        b->failed = true;
        return;
    }
    b->n += (size_t)k;
}

/* v exactly: the shortest of 15 to 17 significant digits that reads back as v. */
static void put_num(sbuf *b, double v)
{
    char s[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(s, sizeof s, "%.*g", digits, v);
        if (strtod(s, NULL) == v)
            break;
    }
    put(b, "%s", s);
}

static void put_array(sbuf *b, const double *v, int n)
{
    put(b, "[");
    for (int i = 0; i < n; i++) {
        put(b, "%s", i ? ", " : "");
        put_num(b, v[i]);
    }
    put(b, "]");
}

char *rlx_problem_json(const rlx_problem *p)
{
    /* 64 boxes of two 3-arrays of 17-digit numbers stay far below this */
    sbuf b = {malloc(32768), 0, 32768, false};
    if (!b.s) {
        rl_error_set(RL_ENOMEM, "out of memory");
        return NULL;
    }
    static const char *const KIND[] = {"point", "rigid", "car"};
    static const char *const DISTANCE[] = {"euclidean", "weighted_yaw", "dubins"};
    double lo[MAX_WDIM] = {0, 0, 0}, hi[MAX_WDIM] = {1, 1, 1};
    put(&b, "{\n  \"format\": \"runlab-problem/1\",\n  \"name\": \"%s\",\n", p->name);
    put(&b, "  \"workspace\": {\"dimension\": %d, \"low\": ", p->wdim);
    put_array(&b, lo, p->wdim);
    put(&b, ", \"high\": ");
    put_array(&b, hi, p->wdim);
    put(&b, "},\n  \"state\": {\"dimension\": %d, \"coordinates\": [", p->dim);
    static const char *const AXIS[] = {"x", "y", "z"};
    for (int i = 0; i < p->dim; i++)
        put(&b, "%s\"%s\"", i ? ", " : "", i == p->yaw ? "yaw" : AXIS[i]);
    put(&b, "]},\n  \"robot\": {\"kind\": \"%s\"", KIND[p->robot]);
    if (p->robot != ROBOT_POINT) {
        double size[MAX_WDIM];
        for (int i = 0; i < p->wdim; i++)
            size[i] = 2 * p->half[i];
        put(&b, ", \"size\": ");
        put_array(&b, size, p->wdim);
    }
    if (p->robot == ROBOT_CAR) {
        put(&b, ", \"turning_radius\": ");
        put_num(&b, p->turning_radius);
        put(&b, ", \"direction\": \"forward\"");
    }
    put(&b, "},\n  \"start\": ");
    put_array(&b, p->start, p->dim);
    put(&b, ",\n  \"goal\": ");
    put_array(&b, p->goal, p->dim);
    put(&b, ",\n  \"goal_tolerance\": ");
    put_num(&b, p->goal_radius);
    put(&b, ",\n  \"distance\": {\"kind\": \"%s\"", DISTANCE[p->robot]);
    if (p->robot == ROBOT_RIGID) {
        put(&b, ", \"yaw_weight\": ");
        put_num(&b, p->yaw_weight);
    }
    put(&b, "},\n  \"resolution\": ");
    put_num(&b, p->resolution);
    put(&b, ",\n  \"clearance\": ");
    put_num(&b, p->margin);
    put(&b, ",\n  \"obstacles\": [");
    for (size_t k = 0; k < p->n_boxes; k++) {
        put(&b, "%s\n    {\"shape\": \"box\", \"min\": ", k ? "," : "");
        put_array(&b, p->boxes[k].lo, p->wdim);
        put(&b, ", \"max\": ");
        put_array(&b, p->boxes[k].hi, p->wdim);
        put(&b, "}");
    }
    put(&b, "\n  ]\n}\n");
    if (b.failed) {
        free(b.s);
        rl_error_set(RL_EINVAL, "problem '%s' is too large to describe", p->name);
        return NULL;
    }
    return b.s;
}
