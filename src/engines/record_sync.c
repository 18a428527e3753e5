/* The recorder's durability thread: fsyncs the bag after the writer's flushes, so that the
 * writer (and behind it the queue) never waits for the disk. The writer thread
 * (record_writer.c) starts it, wakes it after each flush and stops it before the close. */
#include "engines/record_internal.h"

#include "runlab/error.h"
#include "runlab/time.h"

/* The durability thread: one fsync after each flush of the writer, coalescing flushes
 * that happen while an fsync is under way. Kept off the writer because an fsync can take
 * most of a second on a busy disk, and a writer that waits lets the queue and the pool of
 * recycled messages overflow. Stops at the first error (the run is FAILED) or when the
 * writer asks before closing the bag, whose close syncs it anyway. */
void *rec_sync_main(void *arg)
{
    pthread_setname_np(pthread_self(), "rl-sync"); /* for top -H, perf, gdb */
    rl_recorder *r = arg;
    void *ctx = r->sink_ctx; /* set before the writer started; cleared after we are joined */
    pthread_mutex_lock(&r->sync_mu);
    for (;;) {
        while (!r->sync_stop && r->synced_gen == r->flush_gen)
            pthread_cond_wait(&r->sync_wake, &r->sync_mu);
        if (r->sync_stop)
            break;
        uint64_t gen = r->flush_gen;
        atomic_store(&r->sync_since_mono, rl_mono_ns());
        pthread_mutex_unlock(&r->sync_mu);
        int rc = r->sink->sync(ctx);
        atomic_store(&r->sync_since_mono, 0);
        if (rc < 0) {
            atomic_store(&r->sync_failed, 1);
            rec_fail_run(r, "writer: %s", rl_error_last());
            return NULL;
        }
        pthread_mutex_lock(&r->sync_mu);
        r->synced_gen = gen;
    }
    pthread_mutex_unlock(&r->sync_mu);
    return NULL;
}

/* After a flush: wakes the durability thread, or syncs here if it could not be started.
 * Returns RL_OK or the sync error. */
int rec_request_sync(rl_recorder *r, int threaded)
{
    if (!r->sink->sync)
        return RL_OK;
    if (!threaded)
        return r->sink->sync(r->sink_ctx);
    pthread_mutex_lock(&r->sync_mu);
    r->flush_gen++;
    pthread_cond_signal(&r->sync_wake);
    pthread_mutex_unlock(&r->sync_mu);
    return RL_OK;
}
