/* `make bench` figures for the isolated benchmark harness: per-run overhead of a planner
 * that returns at once (called in-process vs run in its own process), accuracy of the
 * memory measurement for a planner that touches N MB, and how close to max_time a
 * planner that never checks the time limit is killed. */
#include "runlab/bench.h"
#include "runlab/error.h"
#include "runlab/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static rl_bench_status solve_nop(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem, (void)run;
    return RL_RUN_EXACT;
}

static rl_bench_status solve_touch(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)run;
    size_t mb = *(const size_t *)problem;
    /* volatile: the stores must happen, so every page is resident */
    volatile char *p = malloc(mb << 20);
    if (!p)
        return RL_RUN_ERROR;
    for (size_t i = 0; i < mb << 20; i += 4096)
        p[i] = 1;
    return RL_RUN_EXACT;
}

static rl_bench_status solve_deaf(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem, (void)run;
    for (;;)
        pause(); /* never checks rl_bench_run_should_stop */
    return RL_RUN_EXACT;
}

static rl_bench_planner planner(const char *name,
                                rl_bench_status (*solve)(void *, void *, rl_bench_run *))
{
    rl_bench_planner p = {0};
    p.name = name;
    p.solve = solve;
    return p;
}

static const char *prop(const rl_bench_run_data *r, const char *name)
{
    for (size_t i = 0; i < r->n_props; i++)
        if (strcmp(r->props[i].name, name) == 0)
            return r->props[i].value;
    return "nan";
}

static int run_one(rl_bench_planner *p, void *problem, unsigned runs, double max_time,
                   double max_mem, rl_bench **out)
{
    rl_bench *b = rl_bench_new("bench", problem, NULL);
    rl_bench_planner *copy = malloc(sizeof *copy);
    *copy = *p;
    copy->self = copy;
    copy->free = free;
    rl_bench_add_planner(b, copy);
    rl_bench_request req;
    rl_bench_request_init(&req);
    req.run_count = runs;
    req.max_time = max_time;
    req.max_mem = max_mem;
    req.save_console_output = false;
    int rc = rl_bench_execute(b, &req);
    if (rc < 0)
        fprintf(stderr, "bench_harness: %s\n", rl_error_last());
    *out = b;
    return rc;
}

int main(void)
{
    printf("== bench_harness: isolated benchmark runs ==\n");
    /* 1. overhead of a planner that returns at once */
    enum { N = 300 };
    rl_bench_planner nop = planner("nop", solve_nop);
    int64_t t0 = rl_mono_ns();
    rl_bench_status (*volatile call)(void *, void *, rl_bench_run *) = nop.solve;
    for (int i = 0; i < N * 100; i++)
        call(NULL, NULL, NULL);
    double inproc_us = (double)(rl_mono_ns() - t0) / (N * 100) / 1e3;
    rl_bench *b;
    t0 = rl_mono_ns();
    if (run_one(&nop, NULL, N, 1.0, 1024, &b) < 0)
        return 1;
    double iso_ms = (double)(rl_mono_ns() - t0) / N / 1e6;
    rl_bench_free(b);
    printf("per-run overhead: in-process call %.3f us, isolated run %.3f ms (target <= 2 ms) %s\n",
           inproc_us, iso_ms, iso_ms <= 2.0 ? "OK" : "OVER");

    /* 2. memory accuracy */
    static const size_t sizes[] = {10, 100, 1000};
    for (size_t i = 0; i < 3; i++) {
        size_t mb = sizes[i];
        rl_bench_planner touch = planner("touch", solve_touch);
        if (run_one(&touch, &mb, 3, 10.0, 4096, &b) < 0)
            return 1;
        const rl_bench_experiment *e = rl_bench_results(b);
        double worst = 0, sum = 0;
        for (size_t r = 0; r < e->planners[0].n_runs; r++) {
            double m = strtod(prop(&e->planners[0].runs[r], "memory"), NULL);
            sum += m;
            {
                double d = m - (double)mb;
                if (d < 0)
                    d = -d;
                if (d > worst)
                    worst = d;
            }
        }
        printf("memory: touched %4zu MB, reported %.2f MB (mean of 3), worst error %.2f MB "
               "(target 2) %s\n",
               mb, sum / 3, worst, worst <= 2.0 ? "OK" : "OVER");
        rl_bench_free(b);
    }

    /* 3. time limit for a planner that never checks it */
    rl_bench_planner deaf = planner("deaf", solve_deaf);
    if (run_one(&deaf, NULL, 3, 0.5, 1024, &b) < 0)
        return 1;
    const rl_bench_experiment *e = rl_bench_results(b);
    double worst = 0;
    for (size_t r = 0; r < e->planners[0].n_runs; r++) {
        double t = strtod(prop(&e->planners[0].runs[r], "wall time"), NULL);
        if (t > worst)
            worst = t;
    }
    printf("time limit: max_time 0.5 s, non-polling planner killed after %.3f s at worst "
           "(target <= 0.7 s), status %s %s\n",
           worst, rl_bench_status_name(e->planners[0].runs[0].status),
           worst <= 0.7 ? "OK" : "OVER");
    rl_bench_free(b);
    return 0;
}
