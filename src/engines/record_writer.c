/* The recorder's writer thread (record.c starts and joins it): takes the queue in batches,
 * holds each message for the write delay, classifies it against START..STOP, writes it to
 * the sink, flushes at least every flush interval, and at the end closes the bag. The
 * fsyncs after each flush are the durability thread's (record_sync.c). */
#include "engines/record_internal.h"

#include "runlab/error.h"
#include "runlab/time.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WRITER_MAX_SLEEP_MS = 5 };
/* Batches whose payloads average this many bytes or more are written ahead of the write
 * delay (write_ahead). bench_record, engine sustained / bare writer, alternating builds:
 * 10 KB zstd 98 % held -> 124 % written ahead; 100 B zstd 90 % held -> 78-84 %. */
enum { WRITE_AHEAD_MIN_PAYLOAD = 1024 };
/* How often a long writer pass gives room back to the queue and takes new messages.
 * Measured with bench_record, 100 B: every 4096 messages (about 0.6 ms) held the
 * uncompressed case near 80 % of the bare writer, every 65536 (about 10 ms) the zstd case
 * near 90 %; every 2 ms keeps both at the bare writer's rate. */
#define SETTLE_INTERVAL_NS (2 * 1000000ll)

static int ensure_channel(rl_recorder *r, rec_topic *t, uint16_t id)
{
    if (t->channel_added)
        return RL_OK;
    int rc = r->sink->add_channel(r->sink_ctx, id, t->name, t->schema_name, t->schema_encoding,
                                  t->schema_data, t->schema_len, t->message_encoding);
    if (rc == RL_OK) {
        t->channel_added = 1;
        rec_grow_manifest_room(r);
    }
    return rc;
}

/* The messages the writer holds for the write delay, oldest first. When messages outside
 * the window are written too (keep_outside, the default), the writer writes each one as it
 * takes it and holds only what classifying it needs: its payload is then copied into the
 * chunk while it is still in cache, and its memory goes back to the queue at once (at
 * 10 KB over DDS, 100 ms of payloads in flight were 80 MB, read back long out of cache).
 * Otherwise the whole message waits, since the decision says whether it is written. An
 * array, not the queue's linked list: it lets the writer prefetch the next held messages
 * instead of chasing one miss at a time. */
typedef struct pending {
    rec_msg *m;         /* held whole, or NULL: written when taken */
    int64_t taken_mono; /* when the writer took it from the queue */
    int64_t receive_ns;
    uint16_t topic;
    uint8_t written;    /* taken and written (not dropped): counted inside or outside */
} pending;

typedef struct pending_ring {
    pending *v;
    size_t cap, head, count; /* cap is a power of two */
} pending_ring;

static int ring_push(pending_ring *pr, const pending *item)
{
    if (pr->count == pr->cap) {
        size_t ncap = pr->cap ? 2 * pr->cap : 4096;
        pending *nv = malloc(ncap * sizeof *nv);
        if (!nv)
            return -1;
        for (size_t i = 0; i < pr->count; i++)
            nv[i] = pr->v[(pr->head + i) & (pr->cap - 1)];
        free(pr->v);
        pr->v = nv;
        pr->cap = ncap;
        pr->head = 0;
    }
    pr->v[(pr->head + pr->count) & (pr->cap - 1)] = *item;
    pr->count++;
    return 0;
}

static const pending *ring_front(const pending_ring *pr)
{
    return pr->count ? &pr->v[pr->head] : NULL;
}

static void ring_pop(pending_ring *pr)
{
    pr->head = (pr->head + 1) & (pr->cap - 1);
    pr->count--;
}

/* Returns blocks the writer has passed to the pool (caller holds mu); what does not fit
 * is handed back in `*spill` to be freed after unlocking. */
static void give_back(rl_recorder *r, rec_block **done, rec_block **spill)
{
    while (*done) {
        rec_block *b = *done;
        *done = b->next;
        if (r->block_pool_count < REC_BLOCK_POOL_MAX) {
            b->next = r->block_pool;
            r->block_pool = b;
            r->block_pool_count++;
        } else {
            b->next = *spill;
            *spill = b;
        }
    }
}

static void free_blocks(rec_block *b)
{
    while (b) {
        rec_block *next = b->next;
        free(b);
        b = next;
    }
}
typedef struct writer_ctx {
    rl_recorder *r;
    int have_start, have_stop;
    int64_t start, stop;
    int sink_failed, unflushed;
    uint64_t done_msgs, done_bytes; /* leave the queue counters at the next lock */
    rec_block *cur_block;           /* block of the last message finished */
    rec_block *done_blocks;         /* blocks passed, for the pool at the next lock */
    pending_ring pend;              /* taken off the queue, waiting out the write delay */
    size_t ahead;                   /* the first `ahead` of them are written (keep_outside) */
    int large_batch;                /* a batch of large payloads was taken: write ahead */
    rec_msg **batch;                /* swapped with the queue's array */
    size_t batch_cap, batch_count;
} writer_ctx;

static int is_inside(const writer_ctx *w, int64_t stamp)
{
    return w->have_start && stamp >= w->start && (!w->have_stop || stamp <= w->stop);
}

/* Writes one message; 1 when written, 0 when dropped (the bag failed, before or now). */
static int write_msg(writer_ctx *w, const rec_msg *m)
{
    rl_recorder *r = w->r;
    rec_topic *t = r->topics[m->topic];
    if (w->sink_failed) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return 0;
    }
    int rc = ensure_channel(r, t, m->topic);
    if (rc == RL_OK)
        rc = r->sink->write(r->sink_ctx, m->topic, ++t->sequence, (uint64_t)m->receive_ns,
                            (uint64_t)m->publish_ns, rec_msg_bytes(m), m->len);
    if (rc < 0) {
        w->sink_failed = 1;
        rec_fail_run(r, "writer: %s", rl_error_last());
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return 0;
    }
    rec_bump(&t->written, 1);
    w->unflushed = 1;
    return 1;
}

/* Releases a message's memory once the writer is done with it: a handed-over payload goes
 * back, a message of its own is freed, a block is released once a message of a later
 * block comes, since messages are finished in queue order. */
static void release_msg(writer_ctx *w, rec_msg *m)
{
    w->done_msgs++;
    w->done_bytes += m->len;
    rec_msg_release(m);
    if (!m->block) {
        free(m);
    } else if (m->block != w->cur_block) {
        if (w->cur_block) {
            w->cur_block->next = w->done_blocks;
            w->done_blocks = w->cur_block;
        }
        w->cur_block = m->block;
    }
}

/* Decides a held message: inside or outside the window, then (a whole message) written
 * or only counted, and released. */
static void finish_held(writer_ctx *w, const pending *p)
{
    rec_topic *t = w->r->topics[p->topic];
    int inside = is_inside(w, p->receive_ns);
    if (!p->m) {
        if (p->written)
            rec_bump(inside ? &t->inside : &t->outside, 1);
        return;
    }
    if (inside || w->r->opts.keep_outside) {
        if (write_msg(w, p->m))
            rec_bump(inside ? &t->inside : &t->outside, 1);
    } else if (!w->sink_failed) {
        rec_bump(&t->outside, 1);
    } else {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
    }
    release_msg(w, p->m);
}

static void pop_held(writer_ctx *w)
{
    ring_pop(&w->pend);
    if (w->ahead)
        w->ahead--;
}

/* Under mu: hands the room of finished messages back to the queue and the blocks they
 * emptied to the pool; blocks beyond the pool go to `*spill`, to be freed unlocked. */
static void settle_locked(writer_ctx *w, rec_block **spill)
{
    rl_recorder *r = w->r;
    r->queued_msgs -= w->done_msgs;
    r->queued_bytes -= w->done_bytes;
    w->done_msgs = w->done_bytes = 0;
    give_back(r, &w->done_blocks, spill);
}

/* Under mu: takes the whole queue as the next batch (an O(1) swap of arrays) and the
 * START/STOP stamps as they stand now. */
static void take_queue_locked(writer_ctx *w)
{
    rl_recorder *r = w->r;
    rec_msg **taken = r->qv;
    size_t taken_cap = r->qcap;
    w->batch_count = r->qcount;
    r->qv = w->batch;
    r->qcap = w->batch_cap;
    r->qcount = 0;
    w->batch = taken;
    w->batch_cap = taken_cap;
    w->have_start = r->start_ns != RL_REC_UNSET;
    w->have_stop = r->stop_ns != RL_REC_UNSET;
    w->start = r->start_ns;
    w->stop = r->stop_ns;
}

/* Unlocked: moves the batch taken into the pending ring, stamped with one clock read (one
 * per batch instead of one per push: clock_gettime was the largest single cost of a
 * 100-byte push). The writer takes the queue at least every WRITER_MAX_SLEEP_MS, and
 * during a long pass every SETTLE_INTERVAL_NS, so a message is held at least the write
 * delay and at most a few milliseconds longer; classification only gets more patient. */
static void hold_batch(writer_ctx *w)
{
    if (!w->batch_count)
        return;
    int64_t taken = rl_mono_ns();
    uint64_t bytes = 0;
    for (size_t i = 0; i < w->batch_count; i++) {
        rec_msg *m = w->batch[i];
        bytes += m->len;
        pending p = {.m = m, .taken_mono = taken, .receive_ns = m->receive_ns, .topic = m->topic};
        if (ring_push(&w->pend, &p) < 0) {
            /* Out of memory for the ring: the rest cannot be held, the run cannot keep its
             * promises. FAILED means drain: finish everything now, in queue order (blocks
             * are released in that order). */
            rec_fail_run(w->r, "writer: out of memory holding messages for the write delay");
            for (; w->pend.count; pop_held(w))
                finish_held(w, ring_front(&w->pend));
            for (; i < w->batch_count; i++) {
                m = w->batch[i];
                p = (pending){.m = m, .receive_ns = m->receive_ns, .topic = m->topic};
                finish_held(w, &p);
            }
            break;
        }
    }
    if (bytes >= (uint64_t)WRITE_AHEAD_MIN_PAYLOAD * w->batch_count)
        w->large_batch = 1;
    w->batch_count = 0;
}

/* Inside a long pass, every SETTLE_INTERVAL_NS: gives back room and blocks, and takes
 * what was queued meanwhile. Both used to wait for the end of the pass, and a batch that
 * became due at once then kept the queue full for the whole pass (producers refused), and
 * the next batch, taken only after it, kept the writer and the compressor idle for a
 * whole write delay: the engine ran at a third of the bare writer's rate in bursts. */
static void settle_and_take(writer_ctx *w)
{
    rec_block *spill = NULL;
    pthread_mutex_lock(&w->r->mu);
    settle_locked(w, &spill);
    take_queue_locked(w);
    pthread_mutex_unlock(&w->r->mu);
    free_blocks(spill);
    if (!w->sink_failed && atomic_load(&w->r->sync_failed))
        w->sink_failed = 1; /* as between passes: a bag that cannot be synced is not written */
    hold_batch(w);
}

/* Flushes (chunk end, then an fsync on the durability thread) when something was written
 * and the flush interval has passed since the last flush. */
static void flush_if_due(writer_ctx *w, int64_t *last_flush, int64_t now, int sync_threaded)
{
    rl_recorder *r = w->r;
    if (!w->unflushed || w->sink_failed || now - *last_flush < r->opts.flush_interval_ns)
        return;
    if (r->sink->flush(r->sink_ctx) < 0 || rec_request_sync(r, sync_threaded) < 0) {
        w->sink_failed = 1;
        rec_fail_run(r, "writer: flush: %s", rl_error_last());
    }
    *last_flush = rl_mono_ns();
    atomic_store(&r->progress_mono, *last_flush);
    w->unflushed = 0;
}

/* Where a writer pass stands, for pass_tick. */
typedef struct pass_clock {
    unsigned n;
    int64_t now, last_settle;
    int64_t *last_flush;
    int sync_threaded;
} pass_clock;

/* After each message of a pass: every 64 a sign of life, and every SETTLE_INTERVAL_NS room
 * and blocks back to the queue, what was queued meanwhile taken, a flush when due. A pass
 * can go on as long as the producers keep up with it; the flush interval still holds. */
static void pass_tick(writer_ctx *w, pass_clock *c)
{
    if ((++c->n & 63) != 0)
        return;
    c->now = rl_mono_ns();
    atomic_store(&w->r->progress_mono, c->now);
    if (c->now - c->last_settle >= SETTLE_INTERVAL_NS) {
        settle_and_take(w);
        flush_if_due(w, c->last_flush, c->now, c->sync_threaded);
        c->last_settle = c->now;
    }
}

/* With keep_outside, once a batch of large payloads was taken: writes every held message
 * not written yet, in queue order, while its payload is in cache; only its classification
 * waits out the write delay. Small payloads are written when decided, as before: for
 * them the second pass over the held messages cost more than the cache saved. */
static void write_ahead(writer_ctx *w, pass_clock *c)
{
    pending_ring *pend = &w->pend;
    if (!w->r->opts.keep_outside || !w->large_batch)
        return;
    w->large_batch = 0;
    while (w->ahead < pend->count) {
        /* Looked up each time: a tick may grow the ring. */
        pending *p = &pend->v[(pend->head + w->ahead) & (pend->cap - 1)];
        p->written = (uint8_t)write_msg(w, p->m);
        release_msg(w, p->m);
        p->m = NULL;
        w->ahead++;
        pass_tick(w, c);
    }
}

/* What a scan of the closed bag found readable, per topic. */
typedef struct bag_count {
    unsigned ntopics;
    uint64_t *readable, *readable_inside;
    int have_start, have_stop;
    int64_t start, stop;
} bag_count;

static void count_readable(void *arg, uint16_t channel, uint64_t log_time)
{
    bag_count *c = arg;
    if (channel >= c->ntopics)
        return;
    c->readable[channel]++;
    int64_t t = (int64_t)log_time;
    if (c->have_start && t >= c->start && (!c->have_stop || t <= c->stop))
        c->readable_inside[channel]++;
}

/* After a write or close error: counts as written only the messages that reached the
 * bag (a scan of the closed file; the chunk that was being filled, or handed to the
 * compressor, when the error came, never did), per topic, and moves the rest to dropped.
 * Writer thread, after the close. */
static void recount_from_bag(rl_recorder *r)
{
    if (!r->sink->scan || !r->info.bag_path[0])
        return;
    bag_count c;
    memset(&c, 0, sizeof c);
    c.ntopics = atomic_load_explicit(&r->ntopics, memory_order_acquire);
    c.readable = calloc(c.ntopics + 1, sizeof *c.readable);
    c.readable_inside = calloc(c.ntopics + 1, sizeof *c.readable_inside);
    if (!c.readable || !c.readable_inside) {
        free(c.readable);
        free(c.readable_inside);
        return;
    }
    pthread_mutex_lock(&r->mu);
    c.have_start = r->start_ns != RL_REC_UNSET;
    c.have_stop = r->stop_ns != RL_REC_UNSET;
    c.start = r->start_ns;
    c.stop = r->stop_ns;
    pthread_mutex_unlock(&r->mu);
    /* A bag that cannot even be opened for reading holds nothing readable. */
    if (r->sink->scan(r->info.bag_path, r->sink_user, count_readable, &c) < 0) {
        memset(c.readable, 0, (c.ntopics + 1) * sizeof *c.readable);
        memset(c.readable_inside, 0, (c.ntopics + 1) * sizeof *c.readable_inside);
    }
    for (unsigned i = 0; i < c.ntopics; i++) {
        rec_topic *t = r->topics[i];
        uint64_t written = atomic_load(&t->written);
        if (c.readable[i] >= written)
            continue;
        uint64_t lost = written - c.readable[i];
        uint64_t inside = atomic_load(&t->inside), outside = atomic_load(&t->outside);
        uint64_t lost_inside = inside > c.readable_inside[i] ? inside - c.readable_inside[i] : 0;
        if (lost_inside > lost)
            lost_inside = lost;
        uint64_t lost_outside = lost - lost_inside;
        if (lost_outside > outside)
            lost_outside = outside;
        atomic_store(&t->inside, inside - lost_inside);
        atomic_store(&t->outside, outside - lost_outside);
        atomic_store(&t->written, c.readable[i]);
        atomic_fetch_add(&t->dropped, lost);
    }
    free(c.readable);
    free(c.readable_inside);
}

/* The writer: takes the queue in batches, holds each message for the write delay (or
 * until START/STOP already decide it), classifies and writes it, flushes at least every
 * flush interval, and on stop or failure writes what is left, closes the bag and (for a
 * failure) the manifest. */
void *rec_writer_main(void *arg)
{
    pthread_setname_np(pthread_self(), "rl-writer"); /* for top -H, perf, gdb */
    rl_recorder *r = arg;
    writer_ctx w = {0};
    w.r = r;
    pending_ring *pend = &w.pend;
    int64_t last_flush = rl_mono_ns();
    const int64_t delay = r->opts.write_delay_ns;
    pthread_t syncer;
    /* Without the thread (it could not be started) the writer syncs after each flush
     * itself: slower, but the durability promise holds. */
    int sync_threaded = r->sink->sync && pthread_create(&syncer, NULL, rec_sync_main, r) == 0;

    for (;;) {
        rec_block *spill = NULL;
        pthread_mutex_lock(&r->mu);
        settle_locked(&w, &spill);
        for (;;) {
            int st = atomic_load(&r->state);
            if (r->qcount || r->stop_req || st == RL_RECORD_FAILED)
                break;
            int64_t now = rl_mono_ns();
            int64_t deadline = now + WRITER_MAX_SLEEP_MS * 1000000ll;
            if (pend->count) {
                int64_t due = ring_front(pend)->taken_mono + delay;
                if (due <= now)
                    break;
                if (due < deadline)
                    deadline = due;
            }
            if (w.unflushed) {
                int64_t fdue = last_flush + r->opts.flush_interval_ns;
                if (fdue <= now)
                    break;
                if (fdue < deadline)
                    deadline = fdue;
            }
            struct timespec ts;
            rec_abs_deadline(&ts, deadline);
            r->writer_sleeping = 1;
            int wrc = pthread_cond_timedwait(&r->wake_writer, &r->mu, &ts);
            r->writer_sleeping = 0;
            atomic_store(&r->progress_mono, rl_mono_ns());
            if (wrc == ETIMEDOUT)
                break;
        }
        take_queue_locked(&w);
        int failed = atomic_load(&r->state) == RL_RECORD_FAILED;
        int drain = r->stop_req || failed;
        if (drain && !w.batch_count && !pend->count) {
            pthread_mutex_unlock(&r->mu);
            free_blocks(spill);
            break;
        }
        pthread_mutex_unlock(&r->mu);
        free_blocks(spill);
        if (!w.sink_failed && atomic_load(&r->sync_failed))
            w.sink_failed = 1; /* the bag can no longer be made durable: stop writing it */
        hold_batch(&w);
        int64_t now = rl_mono_ns();
        atomic_store(&r->progress_mono, now);
        pass_clock c = {.now = now, .last_settle = now, .last_flush = &last_flush,
                        .sync_threaded = sync_threaded};
        write_ahead(&w, &c);
        while (pend->count) {
            const pending held = *ring_front(pend);
            if (!drain) {
                int decided = w.have_stop || (w.have_start && held.receive_ns < w.start);
                if (!decided && held.taken_mono + delay > c.now)
                    break;
            }
            pop_held(&w);
            if (pend->count > 8) {
                rec_msg *ahead = pend->v[(pend->head + 8) & (pend->cap - 1)].m;
                if (ahead) {
                    __builtin_prefetch(ahead);
                    __builtin_prefetch(ahead->data);
                }
            }
            finish_held(&w, &held);
            pass_tick(&w, &c);
        }
        now = rl_mono_ns();
        atomic_store(&r->progress_mono, now);
        flush_if_due(&w, &last_flush, now, sync_threaded);
    }
    /* Everything is finished: the last block goes too, unless pushes still fill it (it is
     * then freed with the recorder). */
    rec_block *spill = NULL;
    pthread_mutex_lock(&r->mu);
    r->queued_msgs -= w.done_msgs;
    r->queued_bytes -= w.done_bytes;
    if (w.cur_block && w.cur_block != r->fill_block) {
        w.cur_block->next = w.done_blocks;
        w.done_blocks = w.cur_block;
    }
    give_back(r, &w.done_blocks, &spill);
    pthread_mutex_unlock(&r->mu);
    free_blocks(spill);
    free(pend->v);
    free(w.batch);
    if (sync_threaded) {
        pthread_mutex_lock(&r->sync_mu);
        r->sync_stop = 1;
        pthread_cond_signal(&r->sync_wake);
        pthread_mutex_unlock(&r->sync_mu);
        pthread_join(syncer, NULL);
    }

    /* Close the bag whatever happened: after a write error the sink keeps what was flushed
     * readable and the close only reports the old error. */
    void *ctx = r->sink_ctx;
    r->sink_ctx = NULL;
    int close_failed = 0;
    if (ctx) {
        int rc = r->sink->close(ctx);
        close_failed = rc < 0;
        if (rc < 0 && !w.sink_failed)
            rec_fail_run(r, "writer: closing the bag: %s", rl_error_last());
    }
    if (w.sink_failed || close_failed)
        recount_from_bag(r);
    atomic_store(&r->writer_done, 1);
    if (atomic_load(&r->state) == RL_RECORD_FAILED)
        (void)rec_write_manifest(r);
    pthread_mutex_lock(&r->mu);
    pthread_cond_signal(&r->wake_monitor);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}
