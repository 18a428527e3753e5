/* runlab/error.h: the error convention of every runlab function.
 * Functions return 0 (RL_OK) on success or a negative rl_status code on failure, and
 * on failure leave a human-readable message in a thread-local slot (libgit2's pattern).
 * Messages say where (file, line, byte offset, key) and what. */
#ifndef RUNLAB_ERROR_H
#define RUNLAB_ERROR_H

#include "runlab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. All failures are negative so `if (rc < 0)` catches every one. */
typedef enum rl_status {
    RL_OK = 0,
    RL_ERR = -1,          /* unspecified failure */
    RL_EINVAL = -2,       /* invalid argument from the caller */
    RL_ENOMEM = -3,       /* allocation failed */
    RL_EIO = -4,          /* operating-system I/O error (errno is in the message) */
    RL_ENOENT = -5,       /* file, key or item not found */
    RL_EEXIST = -6,       /* already exists and must not be overwritten */
    RL_EPARSE = -7,       /* malformed input; the message gives file, line/offset and what */
    RL_ERANGE = -8,       /* value or length out of the allowed range */
    RL_ENOSPC = -9,       /* not enough free disk space */
    RL_ESTATE = -10,      /* operation illegal in the object's current state */
    RL_ETIMEOUT = -11,    /* time limit reached */
    RL_ECRC = -12,        /* checksum mismatch */
    RL_EUNSUPPORTED = -13,/* valid input using a feature runlab does not support */
    RL_EBUSY = -14,       /* resource held by someone else (lock file, another process) */
    RL_ETRUNCATED = -15   /* input ends before a complete item */
} rl_status;

/* Short fixed name of a status ("EPARSE"). Never NULL; thread-safe. */
RL_API const char *rl_status_name(int code);

/* Records a formatted message as this thread's last error and returns `code`, so a
 * failing function can `return rl_error_set(RL_EINVAL, "run id '%s': ...", id);`.
 * Messages longer than the slot (1 KiB) are truncated. Thread-safe (thread-local). */
RL_API int rl_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Like rl_error_set, with ": <strerror(errnum)>" appended. Returns `code`. */
RL_API int rl_error_set_errno(int code, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends context to this thread's last message ("<context>: <old message>") and
 * returns `code`; used by callers to add the file name or key a callee did not know. */
RL_API int rl_error_prefix(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* This thread's last error message; "" when none. The pointer stays valid until the
 * next rl_error_* call on this thread. Thread-safe. */
RL_API const char *rl_error_last(void);

/* This thread's last error code; RL_OK when none. */
RL_API int rl_error_last_code(void);

/* Forgets this thread's last error. */
RL_API void rl_error_clear(void);

#ifdef __cplusplus
}
#endif
#endif
