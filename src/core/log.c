/* Leveled stderr logging behind runlab/log.h.
 * The threshold is the one piece of process-wide mutable state here: logging is a
 * property of the process (like stderr itself), so it is an atomic global. */
#include "runlab/log.h"

#include "runlab/error.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* -1 until first use, then the threshold; read RUNLAB_LOG lazily so no init call is needed. */
static atomic_int log_threshold = -1;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

int rl_log_level_parse(const char *name, rl_log_level *out)
{
    for (int i = 0; i < 4; i++) {
        if (name && strcmp(name, level_names[i]) == 0) {
            *out = (rl_log_level)i;
            return RL_OK;
        }
    }
    return rl_error_set(RL_EINVAL, "log level '%s': expected error, warn, info or debug",
                        name ? name : "(null)");
}

rl_log_level rl_log_get_level(void)
{
    int level = atomic_load(&log_threshold);
    if (level < 0) {
        rl_log_level parsed = RL_LOG_WARN;
        const char *env = getenv("RUNLAB_LOG");
        if (env && rl_log_level_parse(env, &parsed) != RL_OK)
            parsed = RL_LOG_WARN;
        int expected = -1;
        atomic_compare_exchange_strong(&log_threshold, &expected, (int)parsed);
        level = atomic_load(&log_threshold);
    }
    return (rl_log_level)level;
}

void rl_log_set_level(rl_log_level level) { atomic_store(&log_threshold, (int)level); }

void rl_log(rl_log_level level, const char *fmt, ...)
{
    if ((int)level > (int)rl_log_get_level())
        return;
    char line[2048];
    int n = snprintf(line, sizeof line, "runlab[%s]: ", level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, line, len);
    (void)ignored;
}
