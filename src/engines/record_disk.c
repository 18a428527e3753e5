/* The recorder's disk side: manifest.json written from the recorder's state (by any thread
 * but the monitor), and the disk thread that writes the manifests the monitor asks for and
 * checks free space, so that nothing the monitor does waits for the disk. The file format
 * itself is record_dir.h's. */
#include "engines/record_internal.h"
#include "engines/record_watch.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FREE_CHECK_INTERVAL_MS = 1000 };

/* Writes manifest.json from the state as it is now. Any thread but the monitor: this
 * waits for the disk. A failure is remembered for the heartbeat and status (and cleared
 * by the next success). */
int rec_write_manifest(rl_recorder *r)
{
    if (r->test_manifest_hook)
        r->test_manifest_hook(r->test_hook_user);
    pthread_mutex_lock(&r->manifest_mu);
    /* Taken first: a change made while this manifest is written makes the next one due. */
    uint64_t changes = atomic_load(&r->changes);
    unsigned nt = atomic_load_explicit(&r->ntopics, memory_order_acquire);
    rec_topic_counts *tc = calloc(nt ? nt : 1, sizeof *tc);
    char **qos = calloc(nt ? nt : 1, sizeof *qos);
    rl_record_unmatched *unmatched = NULL;
    size_t unmatched_count = 0;
    int copied = tc && qos;
    /* Copies, so that the disk write holds no lock a producer needs. */
    pthread_mutex_lock(&r->topic_mu);
    for (unsigned i = 0; copied && i < nt; i++)
        if (r->topics[i]->qos_json && !(qos[i] = strdup(r->topics[i]->qos_json)))
            copied = 0;
    if (copied && r->unmatched_count) {
        unmatched = calloc(r->unmatched_count, sizeof *unmatched);
        copied = unmatched != NULL;
        for (size_t i = 0; copied && i < r->unmatched_count; i++) {
            unmatched[i].name = strdup(r->unmatched[i].name);
            unmatched[i].reason = strdup(r->unmatched[i].reason);
            unmatched_count = i + 1;
            copied = unmatched[i].name && unmatched[i].reason;
        }
    }
    pthread_mutex_unlock(&r->topic_mu);
    rec_manifest m;
    memset(&m, 0, sizeof m);
    char reason[sizeof r->reason];
    pthread_mutex_lock(&r->mu);
    m.state = (rl_record_state)atomic_load(&r->state);
    snprintf(reason, sizeof reason, "%s", m.state >= RL_RECORD_COMPLETE ? r->reason : "");
    m.prepare_ns = r->prepare_ns;
    m.begin_ns = r->begin_ns;
    m.start_ns = r->start_ns;
    m.stop_ns = r->stop_ns;
    m.finish_ns = r->finish_ns;
    pthread_mutex_unlock(&r->mu);
    m.reason = reason;
    m.keep_outside = r->opts.keep_outside;
    m.compression = r->opts.compression;
    m.pauses = atomic_load(&r->pauses);
    m.paused_ns = atomic_load(&r->paused_ns);
    int rc = RL_OK;
    if (!copied) {
        rc = rl_error_set(RL_ENOMEM, "manifest: out of memory");
    } else {
        for (unsigned i = 0; i < nt; i++) {
            rec_topic *t = r->topics[i];
            rec_topic_counts *c = &tc[i];
            c->topic = t->name;
            c->schema = t->schema_name;
            c->message_encoding = t->message_encoding;
            c->received = atomic_load(&t->received);
            c->inside = atomic_load(&t->inside);
            c->outside = atomic_load(&t->outside);
            c->written = atomic_load(&t->written);
            c->dropped = atomic_load(&t->dropped);
            c->bytes = atomic_load(&t->bytes);
            c->qos_json = qos[i];
        }
        m.topics = tc;
        m.topic_count = nt;
        m.unmatched = unmatched;
        m.unmatched_count = unmatched_count;
        rc = rl_rec_manifest_write(&r->info, &m);
    }
    if (rc == RL_OK)
        r->changes_written = changes;
    for (unsigned i = 0; qos && i < nt; i++)
        free(qos[i]);
    free(qos);
    for (size_t i = 0; i < unmatched_count; i++) {
        free((char *)unmatched[i].name);
        free((char *)unmatched[i].reason);
    }
    free(unmatched);
    free(tc);
    pthread_mutex_lock(&r->mu);
    if (rc < 0)
        snprintf(r->manifest_error, sizeof r->manifest_error, "%s", rl_error_last());
    else
        r->manifest_error[0] = '\0';
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_unlock(&r->manifest_mu);
    return rc;
}

/* Keeps the manifest's room in step with the topics (writer thread: it may wait for the
 * disk). */
void rec_grow_manifest_room(rl_recorder *r)
{
    pthread_mutex_lock(&r->topic_mu);
    uint64_t need = 2 * r->manifest_estimate + 64 * 1024;
    pthread_mutex_unlock(&r->topic_mu);
    pthread_mutex_lock(&r->manifest_mu);
    if (r->info.reserve_fd >= 0 && need > r->info.reserve_bytes)
        (void)rl_rec_reserve(&r->info, need);
    pthread_mutex_unlock(&r->manifest_mu);
}

/* Asks the disk thread for a manifest write; never waits. */
void rec_request_manifest(rl_recorder *r)
{
    pthread_mutex_lock(&r->disk_mu);
    r->manifest_req++;
    pthread_cond_signal(&r->disk_wake);
    pthread_mutex_unlock(&r->disk_mu);
}

/* Whether a run that ended has changes its last manifest does not show (late counts, qos,
 * unmatched): the manifest is then due again. */
int rec_manifest_behind(rl_recorder *r)
{
    pthread_mutex_lock(&r->manifest_mu);
    /* A run that ended was prepared: its directory is set and no longer changes. */
    int behind = atomic_load(&r->state) >= RL_RECORD_COMPLETE && r->info.run_dir[0] &&
                 atomic_load(&r->changes) != r->changes_written;
    pthread_mutex_unlock(&r->manifest_mu);
    return behind;
}

/* The disk thread: the manifest writes the monitor asks for, and the free-space check
 * every second (statvfs can hang on a dead network filesystem). */
void *rec_disk_main(void *arg)
{
    pthread_setname_np(pthread_self(), "rl-disk"); /* for top -H, perf, gdb */
    rl_recorder *r = arg;
    int64_t next_free_check = rl_mono_ns() + FREE_CHECK_INTERVAL_MS * 1000000ll;
    pthread_mutex_lock(&r->disk_mu);
    while (!r->disk_stop) {
        if (r->manifest_req == r->manifest_done) {
            struct timespec ts;
            rec_abs_deadline(&ts, next_free_check);
            pthread_cond_timedwait(&r->disk_wake, &r->disk_mu, &ts);
            if (r->disk_stop)
                break;
        }
        if (r->manifest_req != r->manifest_done) {
            uint64_t req = r->manifest_req;
            pthread_mutex_unlock(&r->disk_mu);
            (void)rec_write_manifest(r);
            pthread_mutex_lock(&r->disk_mu);
            r->manifest_done = req;
            continue;
        }
        int64_t now = rl_mono_ns();
        if (now < next_free_check)
            continue;
        next_free_check = now + FREE_CHECK_INTERVAL_MS * 1000000ll;
        pthread_mutex_unlock(&r->disk_mu);
        /* A FAILED run's late counts reach the manifest within a second, so a recorder
           killed before the run's finish leaves them nearly complete. */
        if (atomic_load(&r->writer_done) && rec_manifest_behind(r))
            (void)rec_write_manifest(r);
        int st = atomic_load(&r->state);
        if (st == RL_RECORD_ARMED || st == RL_RECORD_RECORDING) {
            uint64_t free_bytes = 0;
            /* Atomic so that tests can simulate a filling disk by raising it. */
            uint64_t minimum = __atomic_load_n(&r->opts.minimum_free_bytes, __ATOMIC_RELAXED);
            if (rl_fs_free_bytes(r->info.run_dir, &free_bytes) == RL_OK &&
                rec_free_space_low(free_bytes, minimum))
                rec_fail_run(r, "free space %llu bytes below minimum_free_bytes %llu",
                         (unsigned long long)free_bytes, (unsigned long long)minimum);
        }
        pthread_mutex_lock(&r->disk_mu);
    }
    pthread_mutex_unlock(&r->disk_mu);
    return NULL;
}
