/* Reading a run's files without trusting them (regular files only, bounded, never blocking
 * on a FIFO), and noting on the run what was wrong: the lowest layer of the run loader,
 * used by run_csv.c, run_load.c and runs.c. */
#include "runlab/runs.h"

#include "runlab/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/runs_internal.h" /* last: it renames the files' shared functions */

const char *const reason_names[RL_REASON_COUNT] = {
    "no_csv",
    "csv_unreadable",
    "csv_empty",
    "csv_too_large",
    "no_rows",
    "truncated_row",
    "bad_rows",
    "non_numeric",
    "nul_bytes",
    "long_lines",
    "no_manifest",
    "bad_manifest",
    "fingerprint_mismatch",
    "columns_mismatch",
    "no_summary",
    "bad_summary",
    "timer_nesting",
};

/* Adds a reason and a message. Out of memory for the message only loses the message. */
__attribute__((format(printf, 3, 4))) void note(rl_run *run, rl_run_reason reason,
                                                const char *fmt, ...)
{
    run->reasons |= 1u << reason;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    char **nm = realloc(run->messages, (run->num_messages + 1) * sizeof *nm);
    if (!nm)
        return;
    run->messages = nm;
    char *s = malloc(strlen(reason_names[reason]) + strlen(buf) + 3);
    if (!s)
        return;
    sprintf(s, "%s: %s", reason_names[reason], buf);
    run->messages[run->num_messages++] = s;
}

/* ---- reading files without trusting them ----------------------------------------------- */

/* Reads a regular file whole. O_NONBLOCK so a FIFO planted under a run's file name cannot
 * hang the loader; anything but a regular file is unreadable. `why` gets the reason. */
void file_buf_release(struct file_buf *fb)
{
    free(fb->data);
    rl_column_arena_release(&fb->arena);
}

/* Reads a regular file whole into `fb` (grown as needed), NUL-terminated. */
enum read_result read_file_into(const char *path, size_t max, struct file_buf *fb,
                                size_t *len, char *why, size_t why_cap)
{
    *len = 0;
    why[0] = '\0';
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        struct stat lst;
        if (e == ENOENT && lstat(path, &lst) != 0)
            return READ_MISSING;
        snprintf(why, why_cap, "%s", strerror(e));
        return READ_UNREADABLE;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_cap, "not a regular file");
        close(fd);
        return READ_UNREADABLE;
    }
    if ((uint64_t)st.st_size > max) {
        snprintf(why, why_cap, "%lld bytes, limit %zu", (long long)st.st_size, max);
        close(fd);
        return READ_TOO_LARGE;
    }
    size_t size = (size_t)st.st_size;
    if (size + 1 > fb->cap) {
        free(fb->data);
        fb->data = malloc(size + 1);
        fb->cap = fb->data ? size + 1 : 0;
    }
    char *buf = fb->data;
    if (!buf) {
        snprintf(why, why_cap, "out of memory for %zu bytes", size);
        close(fd);
        return READ_UNREADABLE;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(why, why_cap, "%s", strerror(errno));
            close(fd);
            return READ_UNREADABLE;
        }
        if (r == 0)
            break; /* shrank while reading: take what is there */
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *len = got;
    return READ_OK;
}

/* Reads a regular file whole into a new buffer (*out, to free). */
enum read_result read_file(const char *path, size_t max, char **out, size_t *len, char *why,
                           size_t why_cap)
{
    struct file_buf fb = {0};
    enum read_result r = read_file_into(path, max, &fb, len, why, why_cap);
    *out = r == READ_OK ? fb.data : NULL;
    if (r != READ_OK)
        free(fb.data);
    return r;
}
