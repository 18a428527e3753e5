/* runlab/bench.h: benchmarking motion planners the way OMPL's Benchmark class does. */
#ifndef RUNLAB_BENCH_H
#define RUNLAB_BENCH_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
int rl_bench_import_logs(const char *const *paths, size_t n, const char *db_path);
#ifdef __cplusplus
}
#endif
#endif
