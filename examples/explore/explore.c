/* The example exploration agent (explore.h): world generation, ray-cast sensing, the
 * next-best-view planning layer, the backtracking layer and the replanning loop, logged
 * through runlab/perflog.h. Uses only runlab's public headers. */
#include "explore.h"

#include "runlab/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { UNKNOWN = 0, FREE = 1, OCC = 2 };

/* splitmix64: small, fast and the same on every platform, so runs are reproducible. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int rng_int(uint64_t *s, int n)
{
    return (int)(rng_next(s) % (uint64_t)n);
}

struct agent {
    explore_config cfg;
    int w, h, n;
    unsigned char *world; /* 1 = obstacle */
    unsigned char *known; /* UNKNOWN / FREE / OCC */
    int *dist, *parent, *queue, *cands, *history, *path;
    int nhistory;
    int pos;
    int range; /* sensor range in cells */
    uint64_t rng;
    int reachable_free, seen_free;
    double gain, gain_planning, gain_backtracking, cost, length, duration;
    int64_t nodes;
    int rows; /* CSV rows written */
    rl_perflog *pl;
    struct {
        int visited, length, duration, cost, plan_total;
        int p_update, p_expand, p_eval, p_plan, p_selected, p_gain, p_value, p_cands;
        int b_plan, b_selected, b_depth, b_gain;
    } col;
};

void explore_config_init(explore_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->scene = 1;
    cfg->seed = 1;
    cfg->width = 48;
    cfg->height = 32;
    cfg->cell_size = 0.5;
    cfg->sensor_range = 3.0;
    cfg->speed = 1.0;
    cfg->stop_time = 1.0;
    cfg->cost = EXPLORE_COST_TIME;
    cfg->budget = 200;
    cfg->num_candidates = 24;
    cfg->local_radius = 6.0;
    cfg->backtracking = true;
    cfg->goal_fraction = 0.95;
    cfg->log_performance = true;
    cfg->max_cycles = 5000;
}

const char *explore_planner_name(const explore_config *cfg)
{
    return cfg->backtracking ? "nbv" : "nbv_nobt";
}

/* Border walls and rectangular obstacles drawn from the scene id; the start is kept free. */
static void make_world(struct agent *a)
{
    uint64_t s = 0x5CE7E000ull + (uint64_t)a->cfg.scene * 7919u;
    for (int y = 0; y < a->h; y++)
        for (int x = 0; x < a->w; x++)
            a->world[y * a->w + x] = (x == 0 || y == 0 || x == a->w - 1 || y == a->h - 1);
    int rects = 6 + a->cfg.scene % 5;
    for (int r = 0; r < rects; r++) {
        int rw = 2 + rng_int(&s, 7), rh = 2 + rng_int(&s, 7);
        int x0 = 1 + rng_int(&s, a->w - 2), y0 = 1 + rng_int(&s, a->h - 2);
        for (int y = y0; y < y0 + rh && y < a->h - 1; y++)
            for (int x = x0; x < x0 + rw && x < a->w - 1; x++)
                a->world[y * a->w + x] = 1;
    }
    /* Two long walls with a door each make backtracking worth having. */
    int wx = a->w / 3 + rng_int(&s, a->w / 3), door = 2 + rng_int(&s, a->h - 5);
    for (int y = 1; y < a->h - 1; y++)
        a->world[y * a->w + wx] = !(y >= door && y < door + 3);
    int wy = a->h / 3 + rng_int(&s, a->h / 3),
        door2 = wx + 2 + rng_int(&s, a->w - wx - 5 > 1 ? a->w - wx - 5 : 1);
    for (int x = wx; x < a->w - 1; x++)
        a->world[wy * a->w + x] = !(x >= door2 && x < door2 + 3);
    int sx = 3, sy = a->h / 2;
    for (int y = sy - 2; y <= sy + 2; y++)
        for (int x = sx - 2; x <= sx + 2; x++)
            a->world[y * a->w + x] = 0;
    a->pos = sy * a->w + sx;
}

/* Breadth-first search from `from` over cells for which `passable` holds; fills dist
 * (-1 unreachable) and parent. Returns the number of cells reached. */
static int bfs(struct agent *a, int from, const unsigned char *grid, unsigned char free_value)
{
    for (int i = 0; i < a->n; i++)
        a->dist[i] = -1;
    int head = 0, tail = 0;
    a->dist[from] = 0;
    a->parent[from] = from;
    a->queue[tail++] = from;
    static const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
    while (head < tail) {
        int c = a->queue[head++], cx = c % a->w, cy = c / a->w;
        for (int k = 0; k < 4; k++) {
            int nx = cx + dx[k], ny = cy + dy[k];
            if (nx < 0 || ny < 0 || nx >= a->w || ny >= a->h)
                continue;
            int nb = ny * a->w + nx;
            if (a->dist[nb] >= 0 || grid[nb] != free_value)
                continue;
            a->dist[nb] = a->dist[c] + 1;
            a->parent[nb] = c;
            a->queue[tail++] = nb;
        }
    }
    return tail;
}

/* Casts rays from cell `c` to every cell of the footprint. With `apply`, marks what the
 * sensor sees in `known` (rays stop at real obstacles) and returns the newly seen cells;
 * without, counts unknown cells a ray reaches through non-obstacle known cells (the
 * optimistic expected gain of a viewpoint). */
static int cast(struct agent *a, int c, bool apply)
{
    int cx = c % a->w, cy = c / a->w, r = a->range, count = 0;
    unsigned char *mark = apply ? NULL : a->world + a->n; /* scratch: cells counted */
    if (mark)
        memset(mark, 0, (size_t)a->n);
    for (int ty = cy - r; ty <= cy + r; ty++)
        for (int tx = cx - r; tx <= cx + r; tx++) {
            if ((tx - cx) * (tx - cx) + (ty - cy) * (ty - cy) > r * r)
                continue;
            /* Bresenham from (cx, cy) to (tx, ty). */
            int x = cx, y = cy, ddx = abs(tx - cx), ddy = -abs(ty - cy);
            int sx = cx < tx ? 1 : -1, sy = cy < ty ? 1 : -1, err = ddx + ddy;
            while (x != tx || y != ty) {
                int e2 = 2 * err;
                if (e2 >= ddy) {
                    err += ddy;
                    x += sx;
                }
                if (e2 <= ddx) {
                    err += ddx;
                    y += sy;
                }
                if (x < 0 || y < 0 || x >= a->w || y >= a->h)
                    break;
                int i = y * a->w + x;
                if (apply) {
                    if (a->known[i] == UNKNOWN) {
                        a->known[i] = a->world[i] ? OCC : FREE;
                        count++;
                        if (a->known[i] == FREE)
                            a->seen_free++;
                    }
                    if (a->world[i])
                        break;
                } else {
                    if (a->known[i] == OCC)
                        break;
                    if (a->known[i] == UNKNOWN && !mark[i]) {
                        mark[i] = 1;
                        count++;
                    }
                }
            }
        }
    if (apply)
        a->known[c] = FREE;
    return count;
}

static double step_cost(const struct agent *a)
{
    return a->cfg.cost == EXPLORE_COST_TIME ? a->cfg.cell_size / a->cfg.speed : a->cfg.cell_size;
}

static double path_cost(const struct agent *a, int steps)
{
    double c = steps * step_cost(a);
    return a->cfg.cost == EXPLORE_COST_TIME ? c + a->cfg.stop_time : c;
}

/* The planning layer: sample viewpoints near the robot, best gain per cost. */
static int plan_nbv(struct agent *a, double *value)
{
    rl_perflog *pl = a->pl;
    rl_perflog_timer_start(pl, a->col.p_expand);
    int ncand = 0, local = (int)(a->cfg.local_radius / a->cfg.cell_size);
    for (int i = 0; i < a->n; i++)
        if (a->dist[i] > 0 && a->dist[i] <= local)
            a->cands[ncand++] = i;
    int best = -1;
    double best_u = 0;
    for (int k = 0; k < a->cfg.num_candidates && ncand > 0; k++) {
        int c = a->cands[rng_int(&a->rng, ncand)];
        rl_perflog_timer_start(pl, a->col.p_eval);
        int g = cast(a, c, false);
        rl_perflog_timer_stop(pl, a->col.p_eval);
        rl_perflog_count(pl, a->col.p_cands, 1);
        double u = g * a->cfg.cell_size * a->cfg.cell_size / path_cost(a, a->dist[c]);
        if (g > 0 && (best < 0 || u > best_u)) {
            best = c;
            best_u = u;
        }
    }
    rl_perflog_timer_stop(pl, a->col.p_expand);
    *value = best_u;
    return best;
}

/* The backtracking layer: the most recent viewpoint that still sees unknown cells, else
 * the nearest frontier anywhere. */
static int plan_backtrack(struct agent *a, int *depth)
{
    for (int k = a->nhistory - 1; k >= 0; k--) {
        int c = a->history[k];
        if (a->dist[c] > 0 && cast(a, c, false) > 0) {
            *depth = a->nhistory - k;
            return c;
        }
    }
    int best = -1;
    for (int i = 0; i < a->n; i++) {
        if (a->dist[i] <= 0 || (best >= 0 && a->dist[i] >= a->dist[best]))
            continue;
        int x = i % a->w, y = i / a->w;
        if ((x > 0 && a->known[i - 1] == UNKNOWN) || (x < a->w - 1 && a->known[i + 1] == UNKNOWN) ||
            (y > 0 && a->known[i - a->w] == UNKNOWN) ||
            (y < a->h - 1 && a->known[i + a->w] == UNKNOWN))
            best = i;
    }
    *depth = a->nhistory;
    return best;
}

/* Moves along the BFS path to `target`, sensing at every cell; stops when the budget is
 * spent. Returns true when the budget ran out. */
static int extract_path(struct agent *a, int target)
{
    int len = 0;
    for (int c = target; c != a->pos; c = a->parent[c])
        a->path[len++] = c;
    return len;
}

static bool execute(struct agent *a, int len, double *gain_out)
{
    double before = a->gain, cell_area = a->cfg.cell_size * a->cfg.cell_size;
    bool out = false;
    for (int k = len - 1; k >= 0; k--) {
        a->pos = a->path[k];
        a->cost += step_cost(a);
        a->length += a->cfg.cell_size;
        a->duration += a->cfg.cell_size / a->cfg.speed;
        a->gain += cast(a, a->pos, true) * cell_area;
        if (a->cfg.budget > 0 && a->cost >= a->cfg.budget) {
            out = true;
            break;
        }
    }
    if (!out && a->cfg.cost == EXPLORE_COST_TIME) {
        a->cost += a->cfg.stop_time;
        a->duration += a->cfg.stop_time;
        out = a->cfg.budget > 0 && a->cost >= a->cfg.budget;
    }
    a->nodes++;
    if (a->nhistory < a->n)
        a->history[a->nhistory++] = a->pos;
    *gain_out = a->gain - before;
    return out;
}

static int save_map(struct agent *a, int k)
{
    enum { S = 4 };
    int w = a->w * S, h = a->h * S;
    char head[32];
    int hl = snprintf(head, sizeof head, "P5\n%d %d\n255\n", w, h);
    size_t size = (size_t)hl + (size_t)w * (size_t)h;
    unsigned char *img = malloc(size);
    if (!img)
        return rl_error_set(RL_ENOMEM, "explore: out of memory");
    memcpy(img, head, (size_t)hl);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int i = (y / S) * a->w + x / S;
            unsigned char v = a->known[i] == FREE ? 255 : a->known[i] == OCC ? 0 : 150;
            if (i == a->pos)
                v = 60;
            img[(size_t)hl + (size_t)y * (size_t)w + (size_t)x] = v;
        }
    int rc = rl_perflog_save_map(a->pl, k, img, size, "pgm", a->cost, a->length, a->duration);
    free(img);
    return rc;
}

static int declare(struct agent *a)
{
    rl_perflog *pl = a->pl;
    const char *cu = a->cfg.cost == EXPLORE_COST_TIME ? "s" : "m";
    int rc = rl_perflog_add_layer(pl, "planning", "next_best_view");
    if (rc == RL_OK && a->cfg.backtracking)
        rc = rl_perflog_add_layer(pl, "backtracking", "history_backtracker");
#define D(layer, name, type, unit, parent, id)                                                     \
    if (rc == RL_OK)                                                                               \
    rc = rl_perflog_declare(pl, layer, name, type, unit, parent, &a->col.id)
    D(NULL, "TotalVisitedNodes", RL_COL_TOTAL, "count", NULL, visited);
    D(NULL, "TotalPathLength", RL_COL_TOTAL, "m", NULL, length);
    D(NULL, "TotalPathDuration", RL_COL_TOTAL, "s", NULL, duration);
    D(NULL, "TotalCost", RL_COL_TOTAL, cu, NULL, cost);
    D(NULL, "PlanPathTotal", RL_COL_TIMER, "s", NULL, plan_total);
    D("planning", "UpdateTime", RL_COL_TIMER, "s", NULL, p_update);
    D("planning", "ExpandTime", RL_COL_TIMER, "s", NULL, p_expand);
    D("planning", "EvaluateNode", RL_COL_TIMER, "s", "planning.ExpandTime", p_eval);
    D("planning", "PlanPathTime", RL_COL_TIMER, "s", "PlanPathTotal", p_plan);
    D("planning", "TimesSelected", RL_COL_TOTAL, "count", NULL, p_selected);
    D("planning", "RealAccumulatedGain", RL_COL_GAUGE, "m2", NULL, p_gain);
    D("planning", "PlannedValue", RL_COL_GAUGE, "none", NULL, p_value);
    D("planning", "NumCandidates", RL_COL_COUNTER, "count", NULL, p_cands);
    if (a->cfg.backtracking) {
        D("backtracking", "PlanPathTime", RL_COL_TIMER, "s", "PlanPathTotal", b_plan);
        D("backtracking", "TimesSelected", RL_COL_TOTAL, "count", NULL, b_selected);
        D("backtracking", "HistoryDepth", RL_COL_GAUGE, "count", NULL, b_depth);
        D("backtracking", "RealAccumulatedGain", RL_COL_GAUGE, "m2", NULL, b_gain);
    } else {
        a->col.b_plan = a->col.b_selected = a->col.b_depth = a->col.b_gain = -1;
    }
#undef D
    const explore_config *c = &a->cfg;
    if (rc == RL_OK)
        rc = rl_perflog_param_i64(pl, "scene", c->scene);
    if (rc == RL_OK)
        rc = rl_perflog_param_i64(pl, "seed", (int64_t)c->seed);
    if (rc == RL_OK)
        rc = rl_perflog_param_i64(pl, "width", c->width);
    if (rc == RL_OK)
        rc = rl_perflog_param_i64(pl, "height", c->height);
    if (rc == RL_OK)
        rc = rl_perflog_param_f64(pl, "cell_size", c->cell_size);
    if (rc == RL_OK)
        rc = rl_perflog_param_f64(pl, "sensor_range", c->sensor_range);
    if (rc == RL_OK)
        rc = rl_perflog_param_f64(pl, "speed", c->speed);
    if (rc == RL_OK)
        rc = rl_perflog_param_str(pl, "cost", c->cost == EXPLORE_COST_TIME ? "time" : "distance");
    if (rc == RL_OK)
        rc = rl_perflog_param_f64(pl, "planning.local_radius", c->local_radius);
    if (rc == RL_OK)
        rc = rl_perflog_param_i64(pl, "planning.num_candidates", c->num_candidates);
    if (rc == RL_OK)
        rc = rl_perflog_param_f64(pl, "goal_fraction", c->goal_fraction);
    return rc;
}

static void agent_free(struct agent *a)
{
    free(a->world);
    free(a->known);
    free(a->dist);
    free(a->parent);
    free(a->queue);
    free(a->cands);
    free(a->history);
    free(a->path);
    rl_perflog_free(a->pl);
}

/* One replanning cycle; returns true when the episode ends, with the reason. */
static bool cycle(struct agent *a, rl_end_reason *why)
{
    rl_perflog *pl = a->pl;
    rl_perflog_timer_start(pl, a->col.p_update);
    bfs(a, a->pos, a->known, FREE);
    rl_perflog_timer_stop(pl, a->col.p_update);

    double value = 0;
    int target = plan_nbv(a, &value);
    bool by_backtracking = false;
    int len = 0;
    rl_perflog_timer_start(pl, a->col.plan_total);
    rl_perflog_timer_start(pl, a->col.p_plan);
    if (target >= 0)
        len = extract_path(a, target);
    rl_perflog_timer_stop(pl, a->col.p_plan);
    if (target < 0 && a->cfg.backtracking) {
        int depth = 0;
        rl_perflog_timer_start(pl, a->col.b_plan);
        target = plan_backtrack(a, &depth);
        if (target >= 0)
            len = extract_path(a, target);
        rl_perflog_timer_stop(pl, a->col.b_plan);
        rl_perflog_set(pl, a->col.b_depth, depth);
        by_backtracking = target >= 0;
    }
    rl_perflog_timer_stop(pl, a->col.plan_total);
    rl_perflog_set(pl, a->col.p_value, value);
    if (target < 0) {
        *why = RL_END_NO_STEP;
        return true;
    }
    rl_perflog_add(pl, by_backtracking ? a->col.b_selected : a->col.p_selected, 1);
    double g = 0;
    bool spent = execute(a, len, &g);
    if (by_backtracking)
        a->gain_backtracking += g;
    else
        a->gain_planning += g;

    rl_perflog_set(pl, a->col.visited, (double)a->nodes);
    rl_perflog_set(pl, a->col.length, a->length);
    rl_perflog_set(pl, a->col.duration, a->duration);
    rl_perflog_set(pl, a->col.cost, a->cost);
    int k = rl_perflog_map_due(pl, a->cost, false);
    if (k >= 0 && save_map(a, k) != RL_OK)
        rl_error_clear(); /* a snapshot is optional; the episode goes on */
    rl_episode_totals t = {a->cost, a->length, a->duration, a->nodes};
    rl_perflog_set_totals(pl, &t);
    /* Each layer's gain column holds what the summary's real_accumulated_gain holds for
     * it, after this cycle's move: the row pairs the cost with the gain it bought, and
     * the last row is the run's final gain (docs/perflog.md, "A run's numbers"). */
    rl_perflog_set(pl, a->col.p_gain, a->gain_planning);
    rl_perflog_set_gain(pl, "planning", a->gain_planning);
    if (a->cfg.backtracking) {
        rl_perflog_set(pl, a->col.b_gain, a->gain_backtracking);
        rl_perflog_set_gain(pl, "backtracking", a->gain_backtracking);
    }
    int rc = rl_perflog_cycle_end(pl);
    a->rows++;
    if (rc == 1 || rc < 0) {
        *why = RL_END_STOPPED;
        return true;
    }
    if (spent) {
        *why = RL_END_BUDGET_EXHAUSTED;
        return true;
    }
    if (a->seen_free >= a->cfg.goal_fraction * a->reachable_free) {
        *why = RL_END_GOAL_REACHED;
        return true;
    }
    return false;
}

int explore_run(const explore_config *cfg, explore_result *out)
{
    memset(out, 0, sizeof *out);
    if (!cfg || cfg->width < 12 || cfg->height < 12 || cfg->width > 2000 || cfg->height > 2000 ||
        cfg->cell_size <= 0 || cfg->sensor_range < cfg->cell_size || cfg->speed <= 0 ||
        cfg->num_candidates < 1 || cfg->scene < 1 || cfg->scene > 999 || cfg->max_cycles < 1)
        return rl_error_set(RL_EINVAL, "explore: configuration out of range");
    struct agent a;
    memset(&a, 0, sizeof a);
    a.cfg = *cfg;
    a.w = cfg->width;
    a.h = cfg->height;
    a.n = a.w * a.h;
    a.range = (int)(cfg->sensor_range / cfg->cell_size);
    a.rng = cfg->seed * 0xD1B54A32D192ED03ull + 1;
    size_t n = (size_t)a.n;
    a.world = calloc(2 * n, 1); /* second half: scratch for cast() */
    a.known = calloc(n, 1);
    a.dist = calloc(n, sizeof(int));
    a.parent = calloc(n, sizeof(int));
    a.queue = calloc(n, sizeof(int));
    a.cands = calloc(n, sizeof(int));
    a.history = calloc(n, sizeof(int));
    a.path = calloc(n, sizeof(int));
    if (!a.world || !a.known || !a.dist || !a.parent || !a.queue || !a.cands || !a.history ||
        !a.path) {
        agent_free(&a);
        return rl_error_set(RL_ENOMEM, "explore: out of memory");
    }
    make_world(&a);
    a.reachable_free = bfs(&a, a.pos, a.world, 0);

    char scene[16];
    snprintf(scene, sizeof scene, "s%02d", cfg->scene);
    rl_perflog_config pc;
    rl_perflog_config_init(&pc);
    pc.root = cfg->root;
    pc.task = cfg->task;
    pc.dataset = "grid";
    pc.scene = scene;
    pc.planner = explore_planner_name(cfg);
    pc.log_performance = cfg->log_performance;
    pc.cost_budget = cfg->budget > 0 ? cfg->budget : INFINITY;
    pc.random_seed = cfg->seed;
    pc.num_maps_to_save = cfg->num_maps;
    int rc = rl_perflog_new(&a.pl, &pc);
    if (rc == RL_OK)
        rc = declare(&a);
    if (rc == RL_OK)
        rc = rl_perflog_start(a.pl);
    if (rc == RL_OK)
        rc = rl_perflog_handle_signals(a.pl, 0);
    if (rc != RL_OK) {
        agent_free(&a);
        return rc;
    }
    snprintf(out->run_dir, sizeof out->run_dir, "%s", rl_perflog_run_dir(a.pl));
    a.gain = cast(&a, a.pos, true) * cfg->cell_size * cfg->cell_size;
    a.gain_planning = a.gain;

    rl_end_reason why = RL_END_STOPPED;
    int cycles = 0;
    while (cycles < cfg->max_cycles) {
        cycles++;
        if (cycle(&a, &why))
            break;
    }
    int k = rl_perflog_map_due(a.pl, a.cost, true);
    if (k >= 0)
        save_map(&a, k);
    rc = rl_perflog_end(a.pl, why);
    out->end_reason = why;
    out->cycles = a.rows;
    out->total_cost = a.cost;
    out->path_length = a.length;
    out->path_duration = a.duration;
    out->gain = a.gain_planning + a.gain_backtracking; /* the run's final gain */
    out->visited_nodes = a.nodes;
    agent_free(&a);
    return rc;
}
