/* Adaptive benchmarks in the engine: runs every planner round-robin up to each look of a
 * stopping rule, asks the rule, and keeps the decision trail for the manifest. The
 * statistics are the rule's (runlab/adaptive.h, above the engine). */
#include "engines/bench_adaptive.h"

#include "runlab/error.h"

#include <stdlib.h>
#include <string.h>

int rl_bench_execute_adaptive(rl_bench *b, rl_bench_request *req, const rl_bench_stop_rule *rule,
                              const rl_bench_adaptive_keys *keys, json_object **trail)
{
    *trail = NULL;
    if (!rule || !rule->decide || rule->n_looks == 0)
        return rl_error_set(RL_EINVAL, "adaptive benchmark: no stopping rule given");
    if (strcmp(keys->goal, "ranking") == 0 && rl_bench_planner_count(b) < 2)
        return rl_error_set(RL_EINVAL, "goal ranking: needs at least two planners");
    json_object *looks = json_object_new_array();
    char why[512] = "";
    bool stop = false;
    int rc = RL_OK;
    size_t k = 0;
    req->round_robin = true; /* every planner had the same chances at each decision */
    for (; k < rule->n_looks && !stop && rc == RL_OK; k++) {
        req->run_count = rule->looks[k];
        if ((rc = rl_bench_execute(b, req)) < 0)
            break;
        char *look = NULL;
        rc = rule->decide(rule->ud, k, rl_bench_results(b), &stop, &look, why, sizeof why);
        if (rc == RL_OK && look) {
            json_object *j = json_tokener_parse(look);
            if (j)
                json_object_array_add(looks, j);
        }
        free(look);
    }
    if (rc < 0) {
        json_object_put(looks);
        return rc;
    }
    json_object *t = json_object_new_object();
    json_object_object_add(t, "stopped", json_object_new_string(why));
    json_object_object_add(t, "settled", json_object_new_boolean(stop));
    json_object_object_add(t, "runs_per_planner", json_object_new_int64(req->run_count));
    json_object_object_add(t, "goal", json_object_new_string(keys->goal));
    json_object_object_add(t, "attribute", json_object_new_string(keys->attribute));
    json_object_object_add(t, "confidence", json_object_new_double(keys->confidence));
    json_object_object_add(t, "min_runs", json_object_new_int64(keys->min_runs));
    json_object_object_add(t, "max_runs", json_object_new_int64(keys->max_runs));
    if (strcmp(keys->goal, "ci") == 0)
        json_object_object_add(t, "relative_width", json_object_new_double(keys->relative_width));
    if (strcmp(keys->goal, "success") == 0)
        json_object_object_add(t, "width", json_object_new_double(keys->width));
    json_object_object_add(t, "looks", looks);
    *trail = t;
    return RL_OK;
}
