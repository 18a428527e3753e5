/* runlab/bench_report.h: the HTML report of a benchmark directory (report.html beside
 * results.json): status rates, box plots of time, memory and solution length, best-cost
 * curves, medians with distribution-free 95% confidence intervals and a rank-sum test of
 * time against the best planner. Lives in the analysis layer, above the bench engine:
 * it reads only the directory's results.json. */
#ifndef RUNLAB_BENCH_REPORT_H
#define RUNLAB_BENCH_REPORT_H

#include "runlab/export.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Options of rl_bench_report_write; zero-initialise (or pass NULL) for the defaults. */
typedef struct rl_bench_report_opts {
    int argc; /* command line for the figure records; argc 0 reads /proc/self/cmdline */
    char *const *argv;
} rl_bench_report_opts;

/* Reads `dir`/results.json (as written by rl_bench_write_json) and (re)writes
 * `dir`/report.html and, in `dir`/figures/, every figure as PNG and SVG with its .yaml
 * record (rl_figure_record_write). The report is self-contained: figures are inlined as
 * SVG and it references no network resource. When `path_out` is not NULL the report's
 * path is copied there (truncated to `cap`).
 * Returns RL_OK; RL_ENOENT/RL_EIO when results.json cannot be read, RL_EPARSE when it is
 * not a benchmark's results (the message names the key), RL_ENOMEM, or the I/O error of a
 * write. Files are written atomically, so a failure leaves earlier ones intact.
 * Thread-safe for different directories (figures and reports are per call). */
RL_API int rl_bench_report_write(const char *dir, const rl_bench_report_opts *opts, char *path_out,
                          size_t cap);

#ifdef __cplusplus
}
#endif
#endif
