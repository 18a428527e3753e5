/* Internals of adaptive benchmarks: the engine's loop of batches and looks
 * (bench_adaptive.c), called by the benchmark directory (bench_dir.c). Not public. */
#ifndef RUNLAB_ENGINES_BENCH_ADAPTIVE_H
#define RUNLAB_ENGINES_BENCH_ADAPTIVE_H

#include "runlab/bench.h"

#include <json-c/json.h>

/* Runs `b` round-robin look by look (req->run_count set to each look's runs; the journal
 * keeps what earlier batches and sessions ran, so a resume replays the same decisions on
 * the same runs and carries on) until rule->decide says stop or the looks are over.
 * *trail (caller frees) gets {"stopped": why, "runs_per_planner", "settled", "looks": [...]}
 * with `keys` (the spec's adaptive keys). Errors of rl_bench_execute or of the rule. */
int rl_bench_execute_adaptive(rl_bench *b, rl_bench_request *req, const rl_bench_stop_rule *rule,
                              const rl_bench_adaptive_keys *keys, json_object **trail);

#endif
