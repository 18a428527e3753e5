/* Internals of benchmark specs shared by bench_spec.c (reading a spec, building its
 * planners) and bench_dir.c (the benchmark directory): the spec as read and its source
 * for error messages. Not part of the public API. */
#ifndef RUNLAB_ENGINES_BENCH_SPEC_H
#define RUNLAB_ENGINES_BENCH_SPEC_H

#include "runlab/bench.h"

#include <json-c/json.h>

/* Where a spec came from: errors name its file and line. */
typedef struct spec_src {
    char *path; /* as given, or DIR/spec.json when resumed */
    char *text; /* the YAML text for line numbers (NULL when resumed) */
    char *dir;  /* absolute directory of the spec: relative commands resolve from it */
} spec_src;

/* The top-level keys as read; strings point into `root`. */
typedef struct spec {
    json_object *root;
    const char *experiment, *problem, *out;
    int64_t seed, jobs;
    rl_bench_request req;
    bool adaptive;               /* runs: auto */
    rl_bench_adaptive_keys adapt; /* read whether adaptive or not */
} spec_keys;

struct rl_bench_spec {
    spec_src src;
    spec_keys sp;
    json_object *doc;   /* owned: the spec, or the spec.json holding it */
    int64_t started_ns; /* a resumed benchmark's first start (0: a new one) */
    unsigned shard_index, shard_count; /* a resumed shard's (spec.json "shard"; 0: none) */
};

/* Checks the document's top-level keys, types and ranges into *sp (defaults first). */
int rl_bench_spec_read(const spec_src *s, json_object *root, spec_keys *sp);
/* Adds the spec's planners and parameters to `b`. `problem` is the built-in problem
 * (NULL: none; `problem_why` says why). Errors name the spec's file, line and key. */
int rl_bench_spec_add_planners(const spec_src *s, const spec_keys *sp, rl_bench *b,
                               const rl_bench_builtins *builtins, void *problem,
                               const char *problem_why);

/* rl_bench_run_spec with members added to manifest.json (`manifest_extra`, may be NULL:
 * then a shard's run adds "shard"); rl_bench_merge gives its "shards" through it. */
int rl_bench_run_spec_with(const rl_bench_spec *spec, const rl_bench_run_opts *opts,
                           json_object *manifest_extra, rl_bench_session **out);

#endif
