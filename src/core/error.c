/* Thread-local last-error slot behind runlab/error.h.
 * Each thread owns one fixed buffer, so setting an error never allocates and
 * never fails, even when the error being reported is an allocation failure. */
#include "runlab/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { RL_ERROR_MSG_CAP = 1024 };

static _Thread_local char last_message[RL_ERROR_MSG_CAP];
static _Thread_local int last_code;

/* Appends ": <tail>" to the message of length `used`, truncating at the slot's end
 * (truncation is the documented behaviour, so no snprintf whose warning would say so). */
static void append_reason(int used, const char *tail)
{
    if (used < 0 || (size_t)used >= sizeof last_message - 1)
        return;
    size_t pos = (size_t)used;
    const char *parts[2] = {": ", tail};
    for (int i = 0; i < 2; i++)
        for (const char *p = parts[i]; *p && pos < sizeof last_message - 1; p++)
            last_message[pos++] = *p;
    last_message[pos] = '\0';
}

const char *rl_status_name(int code)
{
    switch (code) {
    case RL_OK: return "OK";
    case RL_ERR: return "ERR";
    case RL_EINVAL: return "EINVAL";
    case RL_ENOMEM: return "ENOMEM";
    case RL_EIO: return "EIO";
    case RL_ENOENT: return "ENOENT";
    case RL_EEXIST: return "EEXIST";
    case RL_EPARSE: return "EPARSE";
    case RL_ERANGE: return "ERANGE";
    case RL_ENOSPC: return "ENOSPC";
    case RL_ESTATE: return "ESTATE";
    case RL_ETIMEOUT: return "ETIMEOUT";
    case RL_ECRC: return "ECRC";
    case RL_EUNSUPPORTED: return "EUNSUPPORTED";
    case RL_EBUSY: return "EBUSY";
    case RL_ETRUNCATED: return "ETRUNCATED";
    default: return "UNKNOWN";
    }
}

/* Messages are formatted into a local buffer and then copied, because callers may pass
 * rl_error_last() itself as an argument ("%s: %s", path, rl_error_last()), and formatting
 * straight into the buffer that argument points to is undefined (it garbled messages). */
int rl_error_set(int code, const char *fmt, ...)
{
    char msg[RL_ERROR_MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_message, msg, sizeof last_message);
    last_code = code;
    return code;
}

int rl_error_set_errno(int code, int errnum, const char *fmt, ...)
{
    char reason[256];
    /* strerror_r (GNU variant) may return a static string rather than fill `reason`. */
    const char *why = strerror_r(errnum, reason, sizeof reason);
    char msg[RL_ERROR_MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_message, msg, sizeof last_message);
    append_reason(n, why);
    last_code = code;
    return code;
}

int rl_error_prefix(int code, const char *fmt, ...)
{
    char old[RL_ERROR_MSG_CAP];
    memcpy(old, last_message, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    if (old[0] != '\0')
        append_reason(n, old);
    last_code = code;
    return code;
}

const char *rl_error_last(void) { return last_message; }

int rl_error_last_code(void) { return last_code; }

void rl_error_clear(void)
{
    last_message[0] = '\0';
    last_code = RL_OK;
}
