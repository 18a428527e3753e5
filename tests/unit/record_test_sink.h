/* An in-memory bag writer for the recorder tests: keeps what the writer thread wrote
 * (topic, sequence, stamps, first payload byte), counts flushes and syncs, and on request
 * fails the n-th write or the syncs, or blocks writes or syncs until released, to drive
 * the FAILED paths and show that a slow fsync does not hold up the writer. Like a real
 * bag, written messages reach "the file" (what scan reports) only at a flush or a close
 * without an earlier error. Header-only (static) so several test programs can use it. */
#ifndef RECORD_TEST_SINK_H
#define RECORD_TEST_SINK_H

#include "engines/record_internal.h"
#include "runlab/error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct mem_written {
    uint16_t channel;
    uint32_t sequence;
    uint64_t log_time, publish_time;
    size_t len;
    unsigned char first;
} mem_written;

typedef struct mem_sink {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    mem_written *msgs;
    size_t count, cap;
    size_t in_file;      /* messages that reached the file: flushed, or closed cleanly */
    int write_failed;    /* a write failed: the close then writes nothing more */
    int channels, flushes, opened, closed;
    long fail_at;        /* fail the write with this 1-based index (0: never) */
    int block;           /* writes wait while set */
    int fail_open;       /* open fails with RL_EIO */
    int blocked_now;     /* a write is waiting */
    int syncs;           /* syncs completed */
    int block_sync;      /* syncs wait while set */
    int sync_blocked;    /* a sync is waiting */
    int fail_sync;       /* syncs fail with RL_EIO */
    long write_sleep_us; /* each write takes this long (a slow disk or compressor) */
} mem_sink;

static void mem_sink_init(mem_sink *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
}

static void mem_sink_destroy(mem_sink *s)
{
    free(s->msgs);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

static void mem_sink_release(mem_sink *s)
{
    pthread_mutex_lock(&s->mu);
    s->block = 0;
    s->block_sync = 0;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static int mem_open(void **ctx, const char *path, const rl_record_options *opts, void *user)
{
    (void)path;
    (void)opts;
    mem_sink *s = user;
    if (s->fail_open)
        return rl_error_set(RL_EIO, "test sink: cannot open");
    s->opened++;
    *ctx = s;
    return RL_OK;
}

static int mem_add_channel(void *ctx, uint16_t id, const char *topic, const char *sn,
                           const char *se, const void *sd, size_t sl, const char *me)
{
    (void)id, (void)topic, (void)sn, (void)se, (void)sd, (void)sl, (void)me;
    mem_sink *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->channels++;
    pthread_mutex_unlock(&s->mu);
    return RL_OK;
}

static int mem_write(void *ctx, uint16_t ch, uint32_t seq, uint64_t lt, uint64_t pt,
                     const void *data, size_t len)
{
    mem_sink *s = ctx;
    pthread_mutex_lock(&s->mu);
    while (s->block) {
        s->blocked_now = 1;
        pthread_cond_wait(&s->cv, &s->mu);
    }
    s->blocked_now = 0;
    if (s->write_sleep_us > 0) {
        struct timespec nap = {0, s->write_sleep_us * 1000L};
        nanosleep(&nap, NULL);
    }
    if (s->fail_at && (long)s->count + 1 >= s->fail_at) {
        s->write_failed = 1;
        pthread_mutex_unlock(&s->mu);
        return rl_error_set(RL_ENOSPC, "test sink: no space left on device");
    }
    if (s->count == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->msgs = realloc(s->msgs, s->cap * sizeof *s->msgs);
    }
    mem_written *w = &s->msgs[s->count++];
    w->channel = ch;
    w->sequence = seq;
    w->log_time = lt;
    w->publish_time = pt;
    w->len = len;
    w->first = len ? ((const unsigned char *)data)[0] : 0;
    pthread_mutex_unlock(&s->mu);
    return RL_OK;
}

static int mem_flush(void *ctx)
{
    mem_sink *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->flushes++;
    s->in_file = s->count;
    pthread_mutex_unlock(&s->mu);
    return RL_OK;
}

static int mem_sync(void *ctx)
{
    mem_sink *s = ctx;
    pthread_mutex_lock(&s->mu);
    while (s->block_sync) {
        s->sync_blocked = 1;
        pthread_cond_wait(&s->cv, &s->mu);
    }
    s->sync_blocked = 0;
    int rc = s->fail_sync ? rl_error_set(RL_EIO, "mem sink: fsync: input/output error") : RL_OK;
    if (rc == RL_OK)
        s->syncs++;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int mem_close(void *ctx)
{
    mem_sink *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->closed++;
    int failed = s->write_failed;
    if (!failed)
        s->in_file = s->count;
    pthread_mutex_unlock(&s->mu);
    return failed ? rl_error_set(RL_ENOSPC, "test sink: no space left on device") : RL_OK;
}

static void mem_abandon(void *ctx)
{
    (void)mem_close(ctx);
}

static int mem_scan(const char *path, void *user,
                    void (*fn)(void *arg, uint16_t channel, uint64_t log_time), void *arg)
{
    (void)path;
    mem_sink *s = user;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->in_file; i++)
        fn(arg, s->msgs[i].channel, s->msgs[i].log_time);
    pthread_mutex_unlock(&s->mu);
    return RL_OK;
}

static const rl_record_sink_ops mem_sink_ops = {
    "mem", mem_open, mem_add_channel, mem_write, mem_flush, mem_close, mem_abandon, mem_sync,
    mem_scan,
};

static int mem_sink_get(mem_sink *s, int which)
{
    pthread_mutex_lock(&s->mu);
    int v = which == 0   ? (int)s->count
            : which == 1 ? s->flushes
            : which == 2 ? s->blocked_now
            : which == 3 ? s->syncs
                         : s->sync_blocked;
    pthread_mutex_unlock(&s->mu);
    return v;
}

#endif
