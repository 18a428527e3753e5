/* The adaptive section of the benchmark report (bench_report_adaptive.c), called by
 * bench_report.c. Not public. */
#ifndef RUNLAB_ANALYSIS_BENCH_REPORT_ADAPTIVE_H
#define RUNLAB_ANALYSIS_BENCH_REPORT_ADAPTIVE_H

#include "runlab/report.h"

/* When DIR/manifest.json has an "adaptive" record (runs: auto), adds "Why the benchmark
 * stopped": the sentence and the decision at every look. Nothing otherwise (also when
 * the manifest is missing or unreadable: the report still stands). RL_OK or the
 * report's errors. */
int rl_bench_report_adaptive(rl_report *r, const char *dir);

#endif
