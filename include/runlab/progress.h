/* runlab/progress.h: progress reporting for long work (benchmarks, loading thousands of
 * runs, recovery). On a terminal it redraws one line — a bar, counts, rate and ETA — at
 * most 10 times a second; otherwise it prints a plain line at every 10% and at the end,
 * so logs and CI output stay readable. */
#ifndef RUNLAB_PROGRESS_H
#define RUNLAB_PROGRESS_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rl_progress rl_progress;

/* Starts reporting `total` units of work labelled `label` ("runs") to `out` (usually
 * stderr; not closed). `total` 0 means unknown: counts and rate without bar or ETA.
 * `force_tty` -1 detects with isatty(), 0 forces plain lines, 1 forces redraws.
 * Returns RL_OK or RL_ENOMEM. A progress object is used from one thread at a time. */
RL_API int rl_progress_new(rl_progress **out, FILE *stream, const char *label, uint64_t total,
                    int force_tty);

/* Sets the number of units done (monotonic; smaller values are ignored) and an optional
 * short note shown after the counts ("RRTConnect run 7"; NULL keeps the last). Draws
 * only when due, so it is cheap to call for every unit. */
RL_API void rl_progress_update(rl_progress *p, uint64_t done, const char *note);

/* Formats the ETA for `remaining_s` seconds as "42s", "3m05s" or "2h07m" into buf. */
RL_API void rl_progress_format_duration(double seconds, char *buf, size_t cap);

/* Draws the final state (ends the terminal line) and frees. NULL is accepted. */
RL_API void rl_progress_finish(rl_progress *p);

#ifdef __cplusplus
}
#endif
#endif
