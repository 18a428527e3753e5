/* Internals of the capture (lab_capture.c) shared with its receive path
 * (lab_capture_receive.c): a reader's context on Cyclone's receive threads, the samples it
 * holds before prepare, and the listener that hands samples to the recorder engine. */
#ifndef RUNLAB_SRC_LAB_CAPTURE_RECEIVE_H
#define RUNLAB_SRC_LAB_CAPTURE_RECEIVE_H

#include "lab/lab_internal.h"

#include <pthread.h>
#include <stdatomic.h>

/* A transient-local sample that arrived before prepare (the recorder IDLE): kept, the
 * latest per writer and instance, and handed to the engine with its own receive time once
 * the bag is open. READY and other latched state published before prepare are then in the
 * bag, as a late-joining rosbag2 would have them. */
enum { HELD_MAX = 64 };
typedef struct held_sample {
    dds_instance_handle_t writer, instance;
    int64_t receive_ns, publish_ns;
    void *data;
    size_t len;
} held_sample;

/* A writer as a reader with earlier readers in its group saw it: its samples are the
 * reader's to record, or another reader's. */
typedef struct writer_verdict {
    dds_instance_handle_t writer;
    int mine;
} writer_verdict;

/* A reader made for a topic; the receive path's context. */
/* Its fields are set before the reader exists and read on Cyclone's threads; Cyclone's hand-over
 * of the listener argument is invisible to ThreadSanitizer, so they are atomics. */
typedef struct subscription {
    _Atomic(rl_recorder *) rec;
    atomic_uint topic_id;
    atomic_int durable;                /* transient-local: samples before prepare are held */
    _Atomic(atomic_int *) released;    /* the capture's: held samples were handed over */
    _Atomic(atomic_uint_least64_t *) ready_seen; /* rt/lab/ready_status only: the
                                                    capture's set of vehicles seen READY */
    /* Classes of the readers of its group made before it: a writer one of them fits is
       theirs, and its samples are skipped here (0: every sample is this reader's). */
    atomic_uint earlier;
    /* Writers beyond reliability and durability that the reader could not match (ownership,
       deadline, ...), counted by the listener, and the last policy. */
    atomic_uint incompatible, incompatible_policy;
    _Atomic(const char *) topic_name; /* the publication's, for messages */
    unsigned reader_class;
    /* Writers (instance handles) seen by a reader with `earlier`, and whether they are its. */
    pthread_mutex_t verdict_mu;
    writer_verdict verdicts[16];
    size_t nverdicts, next_verdict;
    /* Subscriber and topic are the first reader's of the group (deleted with it); 0 for the
       others. Subscriber 0 is also the participant's default. */
    dds_entity_t reader, subscriber, topic;
    pthread_mutex_t held_mu;
    held_sample held[HELD_MAX];
    size_t nheld;
    struct subscription *next;
} subscription;

/* The data-available listener of a capture reader (`arg`: its subscription): takes the raw
 * CDR in batches and hands it to the subscription's recorder engine, holding what the IDLE
 * recorder refuses on a transient-local topic and noting READY vehicles. Runs on Cyclone's
 * receive threads; reads the subscription's atomics, takes its mutexes. */
void lab_receive_on_samples(dds_entity_t reader, void *arg);

#endif
