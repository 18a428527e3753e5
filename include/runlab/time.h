/* runlab/time.h: UTC wall-clock stamps in the forms runlab writes (ISO 8601 with
 * nanoseconds, compact forms for directory names) and a monotonic clock for durations.
 * Time values are int64 nanoseconds since the Unix epoch (UTC), as in MCAP. */
#ifndef RUNLAB_TIME_H
#define RUNLAB_TIME_H

#include "runlab/export.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Buffer sizes including the terminating NUL. */
enum {
    RL_TIME_ISO_LEN = 31,     /* "2026-11-29T20:15:00.123456789Z" */
    RL_TIME_COMPACT_LEN = 17, /* "20261129T201500Z" */
    RL_TIME_DIRSTAMP_LEN = 16 /* "20261129_201500" */
};

/* Wall-clock time now, ns since the epoch (CLOCK_REALTIME). Thread-safe. */
RL_API int64_t rl_time_now_ns(void);

/* Monotonic time, ns from an arbitrary origin (CLOCK_MONOTONIC); for durations only. */
RL_API int64_t rl_mono_ns(void);

/* Formats `ns` as "YYYY-mm-ddTHH:MM:SS.nnnnnnnnnZ" (always 9 fraction digits).
 * Returns RL_OK, or RL_ERANGE when the year is outside 0000..9999 or `cap` is too small. */
RL_API int rl_time_format_iso(int64_t ns, char *buf, size_t cap);

/* "YYYYmmddTHHMMSSZ", the form of run directory names. Seconds are truncated. */
RL_API int rl_time_format_compact(int64_t ns, char *buf, size_t cap);

/* "YYYYmmdd_HHMMSS" (UTC), the form of per-run perflog directory names. */
RL_API int rl_time_format_dirstamp(int64_t ns, char *buf, size_t cap);

/* Parses ISO 8601 UTC: "YYYY-mm-ddTHH:MM:SS[.f{1,9}](Z|+00:00)". Other offsets are
 * accepted and converted to UTC. Returns RL_OK, RL_EPARSE with the offending byte
 * offset in the message, or RL_ERANGE (naming the text) for an instant 64-bit nanoseconds
 * cannot hold: before 1677-09-21T00:12:43.145224192Z or after 2262-04-11T23:47:16.854775807Z
 * (*out_ns is then left alone). */
RL_API int rl_time_parse_iso(const char *text, int64_t *out_ns);

#ifdef __cplusplus
}
#endif
#endif
