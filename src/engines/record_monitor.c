/* The recorder's monitor thread (record.c starts and joins it): heartbeats and the stall
 * checks the writer cannot make on itself. It never touches the disk; what it needs
 * written it asks the disk thread (record_disk.c) for. */
#include "engines/record_internal.h"
#include "engines/record_watch.h"

#include "runlab/time.h"

/* The monitor: heartbeats, and the checks the writer cannot make on itself (a writer
 * stuck in a write cannot notice that it is stuck). It never touches the disk: what it
 * needs written (the manifest of a run it failed) it asks the disk thread for, so the
 * heartbeat goes on while the disk hangs. A stall is counted in time the monitor itself
 * watched: when the monitor was not scheduled for long, the whole process was paused
 * (SIGSTOP, a suspended machine), the writer with it, and that time is no stall. */
void *rec_monitor_main(void *arg)
{
    pthread_setname_np(pthread_self(), "rl-monitor"); /* for top -H, perf, gdb */
    rl_recorder *r = arg;
    int64_t next_beat = rl_mono_ns();
    int last_state = -1;
    int64_t tick = r->opts.heartbeat_interval_ns < 50000000ll ? r->opts.heartbeat_interval_ns
                                                              : 50000000ll;
    rec_watch watch;
    rec_watch_init(&watch, next_beat, r->opts.stall_limit_ns, tick);
    pthread_mutex_lock(&r->mu);
    while (!r->monitor_stop) {
        int64_t now = rl_mono_ns();
        struct timespec ts;
        rec_abs_deadline(&ts, now + tick);
        pthread_cond_timedwait(&r->wake_monitor, &r->mu, &ts);
        if (r->monitor_stop)
            break;
        int st = atomic_load(&r->state);
        int running = (st == RL_RECORD_ARMED || st == RL_RECORD_RECORDING) && r->writer_started &&
                      !atomic_load(&r->writer_done);
        pthread_mutex_unlock(&r->mu);
        now = rl_mono_ns();
        rec_watch_step w = rec_watch_tick(&watch, now, atomic_load(&r->progress_mono),
                                          atomic_load(&r->sync_since_mono));
        if (w.paused_ns) {
            atomic_fetch_add(&r->pauses, 1);
            atomic_fetch_add(&r->paused_ns, w.paused_ns);
        }
        if (running) {
            if (w.stalled &&
                rec_fail_run(r, "writer stalled for %lld ms (stall limit %lld ms)",
                         (long long)(w.quiet_ns / 1000000),
                         (long long)(r->opts.stall_limit_ns / 1000000)))
                rec_request_manifest(r); /* the writer may never come back to do it */
            if (w.sync_stalled &&
                rec_fail_run(r, "fsync stalled for %lld ms (stall limit %lld ms)",
                         (long long)(w.sync_quiet_ns / 1000000),
                         (long long)(r->opts.stall_limit_ns / 1000000)))
                rec_request_manifest(r); /* the writer waits for the fsync to close */
        }
        st = atomic_load(&r->state);
        if (r->opts.heartbeat && (now >= next_beat || st != last_state)) {
            rl_record_status s;
            rl_recorder_status(r, &s);
            r->opts.heartbeat(&s, r->opts.heartbeat_user);
            last_state = st;
            if (now >= next_beat)
                next_beat += r->opts.heartbeat_interval_ns;
            if (next_beat < now)
                next_beat = now + r->opts.heartbeat_interval_ns;
        }
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    /* A run that ended just before the recorder was freed still gets its last beat. */
    if (r->opts.heartbeat && atomic_load(&r->state) != last_state) {
        rl_record_status s;
        rl_recorder_status(r, &s);
        r->opts.heartbeat(&s, r->opts.heartbeat_user);
    }
    return NULL;
}
