/* runlab/log.h: leveled logging to stderr for the library and the command.
 * Lines look like "runlab[warn]: message". The threshold is process-wide and can be
 * set from RUNLAB_LOG (error, warn, info, debug) or by rl_log_set_level. */
#ifndef RUNLAB_LOG_H
#define RUNLAB_LOG_H

#include "runlab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rl_log_level {
    RL_LOG_ERROR = 0,
    RL_LOG_WARN = 1,
    RL_LOG_INFO = 2,
    RL_LOG_DEBUG = 3
} rl_log_level;

/* Sets the process-wide threshold: messages above it are dropped. Thread-safe (atomic). */
RL_API void rl_log_set_level(rl_log_level level);

/* Current threshold. Defaults to RL_LOG_WARN, or RUNLAB_LOG's value when set. */
RL_API rl_log_level rl_log_get_level(void);

/* Parses "error", "warn", "info" or "debug". Returns RL_OK or RL_EINVAL (message set). */
RL_API int rl_log_level_parse(const char *name, rl_log_level *out);

/* Writes one line to stderr when `level` passes the threshold. A whole line is written
 * with a single write(2), so lines from several threads do not interleave. */
RL_API void rl_log(rl_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define rl_log_error(...) rl_log(RL_LOG_ERROR, __VA_ARGS__)
#define rl_log_warn(...) rl_log(RL_LOG_WARN, __VA_ARGS__)
#define rl_log_info(...) rl_log(RL_LOG_INFO, __VA_ARGS__)
#define rl_log_debug(...) rl_log(RL_LOG_DEBUG, __VA_ARGS__)

#ifdef __cplusplus
}
#endif
#endif
