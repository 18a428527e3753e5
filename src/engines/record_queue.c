/* The producer side of the recorder engine (runlab/record.h): rl_recorder_push and
 * rl_recorder_push_many put messages into the bounded queue that the writer thread
 * (record_writer.c) takes from. Small payloads are copied into shared blocks, large ones into
 * allocations of their own, and a payload the producer hands over is kept without a copy.
 * A push never waits for room: a message beyond the limits is dropped, counted, and fails
 * the run. */
#include "engines/record_internal.h"

#include "runlab/error.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A message that was handed over and cannot be queued: received and dropped. */
static void count_refused_under_lock(rec_topic *t, size_t len)
{
    rec_bump(&t->received, 1);
    rec_bump(&t->bytes, len);
    atomic_fetch_add(&t->dropped, 1);
}

/* Room for a message header and `len` bytes in the fill block, starting a block (from the
 * pool if it has one) when it is full; caller holds mu. The block given up stays with the
 * queue: the writer returns it once it has passed its last message. NULL when out of
 * memory. */
static rec_msg *block_alloc(rl_recorder *r, size_t len)
{
    size_t need = (offsetof(rec_msg, data) + len + 15) & ~(size_t)15;
    rec_block *b = r->fill_block;
    if (!b || REC_BLOCK_SIZE - offsetof(rec_block, data) - b->used < need) {
        if (r->block_pool) {
            b = r->block_pool;
            r->block_pool = b->next;
            r->block_pool_count--;
        } else if (!(b = malloc(REC_BLOCK_SIZE))) {
            return NULL;
        }
        b->used = 0;
        r->fill_block = b;
    }
    rec_msg *m = (rec_msg *)(void *)(b->data + b->used);
    b->used += need;
    m->block = b;
    return m;
}

/* Whether a message goes into a block (under the lock): a small payload is copied there,
 * a handed-over one needs only its header there. */
static int goes_in_block(const rl_record_msg *msg)
{
    return msg->release || msg->len <= REC_SMALL;
}

/* Under mu: the message's room in a block, its payload copied or its hand-over noted. */
static rec_msg *block_room_locked(rl_recorder *r, const rl_record_msg *msg)
{
    rec_msg *m = block_alloc(r, msg->release ? sizeof(rec_handed) : msg->len);
    if (!m)
        return NULL;
    m->handed = msg->release != NULL;
    if (m->handed)
        *(rec_handed *)(void *)m->data =
            (rec_handed){.bytes = msg->data, .release = msg->release, .ctx = msg->release_ctx};
    else if (msg->len)
        memcpy(m->data, msg->data, msg->len);
    return m;
}

/* Under mu: appends the message whose room is ready and counts it. Counted under the lock
 * so that the writer can never account for a message (inside, outside, written) before it
 * is counted as received. */
static void enqueue_locked(rl_recorder *r, rec_topic *t, uint16_t topic_id, rec_msg *m,
                           const rl_record_msg *msg)
{
    m->receive_ns = msg->receive_ns;
    m->publish_ns = msg->publish_ns;
    m->len = msg->len;
    m->topic = topic_id;
    r->qv[r->qcount++] = m;
    r->queued_msgs++;
    r->queued_bytes += msg->len;
    rec_bump(&t->received, 1);
    rec_bump(&t->bytes, msg->len);
}

static int valid_msg(const rl_record_msg *msg)
{
    return msg->receive_ns >= 0 && msg->publish_ns >= 0 && (!msg->len || msg->data);
}

/* One message, every case: refusals are counted and said, the queue's array grows. */
static int push_one(rl_recorder *r, uint16_t topic_id, const rl_record_msg *msg)
{
    if (msg->receive_ns < 0 || msg->publish_ns < 0)
        return rl_error_set(RL_EINVAL, "recorder push: negative stamp");
    if (msg->len && !msg->data)
        return rl_error_set(RL_EINVAL, "recorder push: data missing");
    rec_topic *t = r->topics[topic_id];
    size_t len = msg->len;
    /* Large payloads are copied before taking the lock, small ones into a block under it
     * (a copy of at most REC_SMALL bytes is cheaper than a malloc and a free, and the blocks
     * are reused). */
    int in_block = goes_in_block(msg);
    rec_msg *m = NULL;
    if (!in_block) {
        m = malloc(sizeof *m + len);
        if (!m) {
            pthread_mutex_lock(&r->mu);
            count_refused_under_lock(t, len);
            pthread_mutex_unlock(&r->mu);
            rec_fail_run(r, "out of memory queueing a message on %s", t->name);
            return rl_error_set(RL_ENOMEM, "recorder push: out of memory");
        }
        memcpy(m->data, msg->data, len);
        m->block = NULL;
        m->handed = 0;
    }

    pthread_mutex_lock(&r->mu);
    if (!r->accepting) {
        int st = atomic_load(&r->state);
        /* A FAILED run still counts what reaches it until its finish: the manifest then
           says how much was not recorded. */
        int counted = r->late_counting;
        if (counted)
            count_refused_under_lock(t, len);
        pthread_mutex_unlock(&r->mu);
        free(m);
        if (counted)
            atomic_fetch_add(&r->changes, 1);
        return rl_error_set(RL_ESTATE, "recorder push: not accepting messages (%s%s%s)%s",
                            rl_record_state_name((rl_record_state)st),
                            st == RL_RECORD_FAILED ? ": " : "",
                            st == RL_RECORD_FAILED ? r->reason : "",
                            counted ? "; counted as dropped" : "");
    }
    if (r->queued_msgs + 1 > r->opts.max_queued_messages ||
        r->queued_bytes + len > r->opts.max_queued_bytes) {
        int by_count = r->queued_msgs + 1 > r->opts.max_queued_messages;
        count_refused_under_lock(t, len);
        pthread_mutex_unlock(&r->mu);
        free(m);
        rec_fail_run(r, "queue overflow on %s: %s reached", t->name,
                     by_count ? "max_queued_messages" : "max_queued_bytes");
        return rl_error_set(RL_EBUSY, "recorder push: queue full (%s), message on %s dropped",
                            by_count ? "max_queued_messages" : "max_queued_bytes", t->name);
    }
    if (r->qcount == r->qcap) {
        /* Rare: the writer hands back its array, so both settle at the size needed. */
        size_t ncap = r->qcap ? 2 * r->qcap : 1024;
        rec_msg **nv = realloc(r->qv, ncap * sizeof *nv);
        if (!nv) {
            count_refused_under_lock(t, len);
            pthread_mutex_unlock(&r->mu);
            free(m);
            rec_fail_run(r, "out of memory queueing a message on %s", t->name);
            return rl_error_set(RL_ENOMEM, "recorder push: out of memory");
        }
        r->qv = nv;
        r->qcap = ncap;
    }
    if (in_block && !(m = block_room_locked(r, msg))) {
        count_refused_under_lock(t, len);
        pthread_mutex_unlock(&r->mu);
        rec_fail_run(r, "out of memory queueing a message on %s", t->name);
        return rl_error_set(RL_ENOMEM, "recorder push: out of memory");
    }
    enqueue_locked(r, t, topic_id, m, msg);
    /* With a write delay nothing queued now can be written before the writer's next
     * timed wake-up (at most WRITER_MAX_SLEEP_MS away), so waking it per push would only
     * make both threads trade context switches. */
    int wake = r->writer_sleeping && r->opts.write_delay_ns == 0;
    pthread_mutex_unlock(&r->mu);
    if (wake)
        pthread_cond_signal(&r->wake_writer);
    return RL_OK;
}

int rl_recorder_push(rl_recorder *r, uint16_t topic_id, int64_t receive_ns, int64_t publish_ns,
                     const void *data, size_t len)
{
    unsigned nt = atomic_load_explicit(&r->ntopics, memory_order_acquire);
    if (topic_id >= nt)
        return rl_error_set(RL_EINVAL, "recorder push: unknown topic id %u", topic_id);
    rl_record_msg msg = {.receive_ns = receive_ns, .publish_ns = publish_ns, .data = data,
                         .len = len};
    return push_one(r, topic_id, &msg);
}

/* Under mu: queues one message that goes in a block when the queue takes it as it is
 * (accepting, within the limits, room in the array and a block); 0 otherwise, and nothing
 * changed: the caller unlocks and lets push_one decide and count that message. */
static int queue_in_block_locked(rl_recorder *r, rec_topic *t, uint16_t topic_id,
                                 const rl_record_msg *msg)
{
    if (!r->accepting || r->queued_msgs + 1 > r->opts.max_queued_messages ||
        r->queued_bytes + msg->len > r->opts.max_queued_bytes || r->qcount == r->qcap)
        return 0;
    rec_msg *m = block_room_locked(r, msg);
    if (!m)
        return 0;
    enqueue_locked(r, t, topic_id, m, msg);
    return 1;
}

int rl_recorder_push_many(rl_recorder *r, uint16_t topic_id, const rl_record_msg *msgs,
                          size_t count, size_t *queued)
{
    *queued = 0;
    unsigned nt = atomic_load_explicit(&r->ntopics, memory_order_acquire);
    if (topic_id >= nt)
        return rl_error_set(RL_EINVAL, "recorder push: unknown topic id %u", topic_id);
    rec_topic *t = r->topics[topic_id];
    size_t i = 0;
    while (i < count) {
        if (valid_msg(&msgs[i]) && goes_in_block(&msgs[i])) {
            int wake = 0;
            pthread_mutex_lock(&r->mu);
            for (; i < count; i++) {
                if (!valid_msg(&msgs[i]) || !goes_in_block(&msgs[i]) ||
                    !queue_in_block_locked(r, t, topic_id, &msgs[i]))
                    break;
                wake = 1;
            }
            wake = wake && r->writer_sleeping && r->opts.write_delay_ns == 0;
            pthread_mutex_unlock(&r->mu);
            if (wake)
                pthread_cond_signal(&r->wake_writer);
            *queued = i;
            if (i == count)
                break;
        }
        /* A large one, or one the fast path left to the general one (which refuses it,
           counts it and says why, or queues it after growing the queue's array). */
        int rc = push_one(r, topic_id, &msgs[i]);
        if (rc < 0)
            return rc;
        *queued = ++i;
    }
    return RL_OK;
}
