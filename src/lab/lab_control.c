/* The recorder node's watch over its control flow: which control heartbeats arm the timeout
 * of a run and when its silence ends the run (docs/lab.md, "Control flow lost"), and whether
 * the control pipe of the process that started the node has reached end of file. */
#include "lab/lab_control.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static int live(rl_record_state state)
{
    return state == RL_RECORD_ARMED || state == RL_RECORD_RECORDING;
}

void lab_control_watch_init(lab_control_watch *w, int64_t timeout_ns)
{
    memset(w, 0, sizeof *w);
    w->timeout_ns = timeout_ns;
}

void lab_control_beat(lab_control_watch *w, const char *hb_run_id, const char *source,
                      const char *host, int pid, const char *run_id, rl_record_state state,
                      int64_t now_ns)
{
    if (!hb_run_id || !hb_run_id[0] || !run_id || strcmp(hb_run_id, run_id) != 0 ||
        !live(state))
        return;
    copy(w->run_id, sizeof w->run_id, hb_run_id);
    copy(w->source, sizeof w->source, source);
    copy(w->host, sizeof w->host, host);
    w->pid = pid;
    w->last_seen_ns = now_ns;
}

int lab_control_lost(const lab_control_watch *w, const char *run_id, rl_record_state state,
                     int64_t now_ns, char *why, size_t cap)
{
    if (w->timeout_ns <= 0 || !live(state) || !run_id || !run_id[0] ||
        strcmp(w->run_id, run_id) != 0)
        return 0;
    int64_t quiet = now_ns - w->last_seen_ns;
    if (quiet <= w->timeout_ns)
        return 0;
    snprintf(why, cap, "control flow lost: no heartbeat from %s (host %s, pid %d) for %lld ms",
             w->source[0] ? w->source : "the control flow", w->host, w->pid,
             (long long)(quiet / 1000000));
    return 1;
}

int lab_control_fd_closed(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = poll(&p, 1, 0);
    if (n <= 0)
        return 0; /* nothing yet (or EINTR: asked again next time) */
    if (p.revents & (POLLERR | POLLNVAL))
        return 1;
    if (p.revents & POLLIN) {
        /* Data, or end of file: read tells them apart (it does not block after POLLIN). */
        char buf[256];
        ssize_t got = read(fd, buf, sizeof buf);
        if (got == 0)
            return 1;
        if (got > 0 || errno == EINTR || errno == EAGAIN)
            return 0;
        return 1;
    }
    return (p.revents & POLLHUP) != 0;
}
