/* Internals of the recorder engine shared by record.c (state machine), its threads' files
 * and the sinks: the recorder struct and the small sink interface through which the
 * writer thread writes the bag, so the state machine and queues can be tested with an
 * in-memory or failing sink. The run's files are record_dir.h's, which knows nothing of
 * this struct. */
#ifndef RUNLAB_RECORD_INTERNAL_H
#define RUNLAB_RECORD_INTERNAL_H

#include "engines/record_dir.h"
#include "runlab/fs.h"
#include "runlab/record.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

enum {
    RL_RECORD_MAX_TOPICS = 4096,
    /* Payloads up to this size are copied into blocks, under the queue's lock; larger ones
       get an allocation of their own, copied before the lock. Blocks come back to a pool,
       so a steady stream of messages costs no fresh memory: at 10 KB, one malloc each made
       the heap grow and shrink, and page faults were a fifth of the recorder's time. */
    REC_SMALL = 64 * 1024,
    REC_BLOCK_SIZE = 1 << 20,  /* bytes of one block (headers and payloads) */
    /* Emptied blocks kept for reuse at most (64 MiB): what is in flight during the write
       delay at a few hundred MB/s. */
    REC_BLOCK_POOL_MAX = 64
};

/* Where the writer thread writes messages. Only the writer thread calls write, flush and
 * add_channel; open runs in prepare, before the thread starts. Functions return RL_OK or a
 * negative status with the error message set. `flush` makes what was written readable
 * after a kill (ends the open chunk, writes it); `sync` (may be NULL) makes what flush
 * wrote survive a power loss (fsync); it runs on the durability thread, concurrently with
 * write and flush, and never once close has begun. `close` finishes the file durably and
 * frees the context whatever happens; `abandon` frees it without finishing (prepare
 * errors). `scan` (may be NULL) reads a closed bag back and calls `fn` for every message
 * that is readable in it: after a write error, only those count as written. */
typedef struct rl_record_sink_ops {
    const char *name; /* file extension of the bag: "mcap" */
    int (*open)(void **ctx, const char *path, const rl_record_options *opts, void *user);
    int (*add_channel)(void *ctx, uint16_t id, const char *topic, const char *schema_name,
                       const char *schema_encoding, const void *schema_data, size_t schema_len,
                       const char *message_encoding);
    int (*write)(void *ctx, uint16_t channel, uint32_t sequence, uint64_t log_time,
                 uint64_t publish_time, const void *data, size_t len);
    int (*flush)(void *ctx);
    int (*close)(void *ctx);
    void (*abandon)(void *ctx);
    int (*sync)(void *ctx);
    int (*scan)(const char *path, void *user,
                void (*fn)(void *arg, uint16_t channel, uint64_t log_time), void *arg);
} rl_record_sink_ops;

/* The MCAP sink (record_sink_mcap.c). */
extern const rl_record_sink_ops *const rl_record_default_sink;

/* Replaces the sink (tests). Only in IDLE; RL_ESTATE otherwise. */
int rl_recorder_set_sink(rl_recorder *r, const rl_record_sink_ops *ops, void *user);

/* Small messages are appended to large blocks instead of getting an allocation each: a
 * push is then a bump of an offset (malloc and the writer's cross-thread free were most
 * of a 100-byte push), and the writer reads the messages it holds for the write delay,
 * long out of cache, sequentially, where the hardware prefetcher keeps up. Pushes fill
 * blocks under `mu` in queue order, so the writer, which consumes the queue in order, is
 * done with a block as soon as it meets a message of a later one. */
typedef struct rec_block {
    struct rec_block *next; /* in the pool */
    size_t used;
    _Alignas(16) unsigned char data[];
} rec_block;

/* A message waiting in the queue or in the write delay. The payload follows the header,
 * in a block (`block` set) or in an allocation of its own (`block` NULL, large ones). */
typedef struct rec_msg {
    int64_t receive_ns, publish_ns;
    size_t len;
    rec_block *block;
    uint16_t topic;
    uint8_t handed; /* the payload stayed the producer's: `data` holds a rec_handed */
    _Alignas(8) unsigned char data[];
} rec_msg;

/* Where a payload handed over without a copy (rl_record_msg.release) is, and how it goes
 * back to its producer. */
typedef struct rec_handed {
    const unsigned char *bytes;
    rl_record_release_fn release;
    void *ctx;
} rec_handed;

static inline const unsigned char *rec_msg_bytes(const rec_msg *m)
{
    return m->handed ? ((const rec_handed *)(const void *)m->data)->bytes : m->data;
}

/* Gives a handed-over payload back to its producer; called once per message, when the
 * writer is done with it or the recorder discards it. */
static inline void rec_msg_release(rec_msg *m)
{
    if (m->handed) {
        const rec_handed *h = (const rec_handed *)(const void *)m->data;
        h->release(h->ctx);
    }
}

typedef struct rec_topic {
    char *name, *schema_name, *schema_encoding, *message_encoding;
    unsigned char *schema_data;
    size_t schema_len;
    /* Counters are atomics: pushes update them from any thread, the writer from its own,
     * and status readers from a third, without a common lock on the hot path. The
     * writer's own are on another cache line so the two sides do not bounce one line. */
    _Atomic uint64_t received, bytes, dropped;
    _Alignas(64) _Atomic uint64_t inside, outside, written;
    char *qos_json;  /* the producer's description of how it receives (topic_mu), or NULL */
    /* Writer thread only. */
    uint32_t sequence;
    int channel_added;
} rec_topic;

struct rl_recorder {
    rl_record_options opts; /* strings point to the copies below */
    char lock_dir[PATH_MAX];
    char bag_profile_opt[64];   /* the bag_profile option's copy */
    _Atomic int profile_ros2;   /* the bag says "ros2": topics must fit (set at new or prepare) */
    rec_lock lock;
    /* Set by prepare, read-only afterwards (but for the manifest's room, which only
     * the manifest writer touches, under manifest_mu). */
    rec_run_info info;

    /* `mu` guards the state, the stamps, the reason and the queue. */
    pthread_mutex_t mu;
    pthread_cond_t wake_writer;
    pthread_cond_t wake_monitor;
    _Atomic int state;
    char reason[512];
    int64_t prepare_ns, begin_ns, start_ns, stop_ns, finish_ns;
    int accepting;  /* pushes are taken (ARMED/RECORDING and no finish under way) */
    int late_counting; /* FAILED, and pushes refused are still counted (until finish,
                          cancel or free: rl_recorder_finish) */
    int closing;    /* a finish or cancel is under way */
    int stop_req;   /* writer: write everything and exit */
    int writer_sleeping;
    int monitor_stop;
    /* The queue: an array of pointers the writer swaps for its empty one, so taking a
     * batch is O(1) and never touches the messages. */
    rec_msg **qv;
    size_t qcount, qcap;
    /* The block pushes append small messages to, and emptied blocks for reuse (a fresh
     * 1 MiB allocation costs 256 page faults). */
    rec_block *fill_block;
    rec_block *block_pool;
    size_t block_pool_count;
    uint64_t queued_msgs, queued_bytes; /* queue + write delay */

    /* The durability thread fsyncs the bag after each writer flush, so that the writer
     * (and behind it the queue) never waits for the disk. `sync_mu` guards these. */
    pthread_mutex_t sync_mu;
    pthread_cond_t sync_wake;
    uint64_t flush_gen, synced_gen; /* flushes done by the writer / covered by an fsync */
    int sync_stop;
    _Atomic int64_t sync_since_mono; /* start of the fsync under way, 0 if none (stalls) */
    _Atomic int sync_failed;

    pthread_t writer, monitor, disk;
    int writer_started, monitor_started, disk_started;
    _Atomic int64_t progress_mono; /* writer's last sign of life */
    _Atomic int writer_done;

    pthread_mutex_t topic_mu; /* registration, topics' qos_json and `unmatched`; readers
                                 of the topics use the atomic count */
    rl_record_unmatched *unmatched; /* owned copies (topic_mu) */
    size_t unmatched_count;
    uint64_t unmatched_bytes;       /* its share of manifest_estimate (topic_mu) */
    /* Bumped by whatever a manifest shows that can change after the run ended (late counts,
     * qos, unmatched); `changes_written` is its value when the last manifest was taken
     * (manifest_mu). A run that ended has its manifest rewritten when they differ. */
    _Atomic uint64_t changes;
    uint64_t changes_written;
    rec_topic *topics[RL_RECORD_MAX_TOPICS];
    _Atomic unsigned ntopics;

    const rl_record_sink_ops *sink;
    void *sink_user;
    void *sink_ctx;

    /* The disk thread writes manifests that the monitor asks for and checks free
     * space, so that the monitor (heartbeat, stall checks) never waits for the disk.
     * `disk_mu` guards the request counters. */
    pthread_mutex_t disk_mu;
    pthread_cond_t disk_wake;
    uint64_t manifest_req, manifest_done;
    int disk_stop;

    pthread_mutex_t manifest_mu;  /* one manifest write at a time; the manifest's room */
    char manifest_error[256];     /* why the last manifest write failed; "" (under mu) */
    uint64_t manifest_estimate;   /* bytes a manifest with every topic may need (topic_mu) */
    pthread_mutex_t join_mu;

    /* Monitor only: whole-process pauses (the monitor itself was not scheduled). */
    _Atomic uint64_t pauses;
    _Atomic int64_t paused_ns;

    /* Tests: called before every manifest write, on the thread that writes it. */
    void (*test_manifest_hook)(void *user);
    void *test_hook_user;
};

/* Adds to a counter that only one party changes at a time: `received` and `bytes` only
 * under `mu`, `inside`, `outside` and `written` only in the writer thread. A load and a
 * store instead of a locked read-modify-write, which is measurably cheaper per message;
 * readers still see whole values. */
static inline void rec_bump(_Atomic uint64_t *c, uint64_t v)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

/* Moves ARMED/RECORDING to FAILED with the reason; returns 1 if this call did it. The
 * writer notices and finishes the bag and the manifest (record_writer.c). */
int rec_fail_run(rl_recorder *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An absolute CLOCK_MONOTONIC deadline for pthread_cond_timedwait (the recorder's
 * condition variables are made with that clock). */
static inline void rec_abs_deadline(struct timespec *ts, int64_t mono_ns)
{
    ts->tv_sec = (time_t)(mono_ns / 1000000000ll);
    ts->tv_nsec = (long)(mono_ns % 1000000000ll);
}

/* The recorder's threads, started with the recorder as argument: the writer
 * (record_writer.c; started by prepare, joined by finish, cancel or free), the monitor
 * (record_monitor.c) and the disk thread (record_disk.c; both for the recorder's life),
 * and the durability thread (record_sync.c; the writer's own). */
void *rec_writer_main(void *arg);
void *rec_monitor_main(void *arg);
void *rec_disk_main(void *arg);
void *rec_sync_main(void *arg);

/* After a flush: wakes the durability thread (`threaded`), or syncs here. Writer thread. */
int rec_request_sync(rl_recorder *r, int threaded);

/* The manifest (record_disk.c). rec_write_manifest writes it from the state as it is now
 * (any thread but the monitor: it waits for the disk); rec_request_manifest asks the disk
 * thread for one and never waits; rec_manifest_behind says whether a run that ended has
 * changes its last manifest does not show; rec_grow_manifest_room keeps the reserved room
 * in step with the topics (writer thread). */
int rec_write_manifest(rl_recorder *r);
void rec_request_manifest(rl_recorder *r);
int rec_manifest_behind(rl_recorder *r);
void rec_grow_manifest_room(rl_recorder *r);

#endif
