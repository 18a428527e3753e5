/* The recorder monitor's stall and pause arithmetic (record_watch.h), kept apart from
 * the monitor thread so that each threshold can be tested at its boundary with made-up
 * times instead of a loaded machine's real ones. */
#include "engines/record_watch.h"

int64_t rec_watch_pause_threshold(int64_t stall_limit_ns, int64_t tick_ns)
{
    int64_t t = stall_limit_ns / 2;
    return t > 4 * tick_ns ? t : 4 * tick_ns;
}

void rec_watch_init(rec_watch *w, int64_t now_ns, int64_t stall_limit_ns, int64_t tick_ns)
{
    *w = (rec_watch){.stall_limit_ns = stall_limit_ns,
                     .paused_after_ns = rec_watch_pause_threshold(stall_limit_ns, tick_ns),
                     .last_wake_ns = now_ns};
}

rec_watch_step rec_watch_tick(rec_watch *w, int64_t now_ns, int64_t progress, int64_t syncing)
{
    rec_watch_step s = {0};
    int64_t gap = now_ns - w->last_wake_ns, watched = gap;
    w->last_wake_ns = now_ns;
    if (gap > w->paused_after_ns) {
        s.paused_ns = gap;
        watched = 0; /* the writer was paused with us: none of that time is its stall */
    }
    /* New progress: quiet since it, but never more than we watched of that time. */
    if (progress != w->seen_progress) {
        w->seen_progress = progress;
        w->quiet_ns = now_ns - progress < watched ? now_ns - progress : watched;
    } else {
        w->quiet_ns += watched;
    }
    if (!syncing)
        w->sync_quiet_ns = 0;
    else if (syncing != w->seen_sync)
        w->sync_quiet_ns = now_ns - syncing < watched ? now_ns - syncing : watched;
    else
        w->sync_quiet_ns += watched;
    w->seen_sync = syncing;
    s.quiet_ns = w->quiet_ns;
    s.sync_quiet_ns = w->sync_quiet_ns;
    s.stalled = w->quiet_ns > w->stall_limit_ns;
    s.sync_stalled = syncing && w->sync_quiet_ns > w->stall_limit_ns;
    return s;
}

bool rec_free_space_low(uint64_t free_bytes, uint64_t minimum_free_bytes)
{
    return free_bytes < minimum_free_bytes;
}
