/* The recorder engine behind runlab/record.h: the state machine, the bounded queue that
 * producers fill without waiting, the writer thread (write delay, START..STOP
 * classification, periodic flush), the monitor thread (heartbeat, stall checks; never
 * the disk) and the disk thread (manifests it asks for, free space). The writer starts
 * and stops a durability thread that fsyncs the bag after each flush. The run's files (lock, directory, manifest) are record_dir.h's, below this. */
#include "engines/record_internal.h"
#include "engines/record_watch.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/msgdef.h"
#include "runlab/provenance.h"
#include "runlab/time.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { WRITER_MAX_SLEEP_MS = 5, FREE_CHECK_INTERVAL_MS = 1000 };
/* Batches whose payloads average this many bytes or more are written ahead of the write
 * delay (write_ahead). bench_record, engine sustained / bare writer, alternating builds:
 * 10 KB zstd 98 % held -> 124 % written ahead; 100 B zstd 90 % held -> 78-84 %. */
enum { WRITE_AHEAD_MIN_PAYLOAD = 1024 };
/* How often a long writer pass gives room back to the queue and takes new messages.
 * Measured with bench_record, 100 B: every 4096 messages (about 0.6 ms) held the
 * uncompressed case near 80 % of the bare writer, every 65536 (about 10 ms) the zstd case
 * near 90 %; every 2 ms keeps both at the bare writer's rate. */
#define SETTLE_INTERVAL_NS (2 * 1000000ll)

void rl_record_options_default(rl_record_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_queued_messages = 1000000;
    o->max_queued_bytes = 512ull << 20;
    o->write_delay_ns = 100 * 1000000ll;
    o->flush_interval_ns = 1000 * 1000000ll;
    o->stall_limit_ns = 2000 * 1000000ll;
    o->heartbeat_interval_ns = 250 * 1000000ll;
    o->minimum_free_bytes = 256ull << 20;
    o->keep_outside = 1;
    o->compression = RL_RECORD_COMPRESSION_ZSTD;
    o->chunk_size = 1u << 20;
}

static int check_options(const rl_record_options *o)
{
    if (o->lab_domain < 0 || o->lab_domain > 232)
        return rl_error_set(RL_EINVAL, "recorder option lab_domain: %d is outside 0..232",
                            o->lab_domain);
    if (o->max_queued_messages < 1)
        return rl_error_set(RL_EINVAL, "recorder option max_queued_messages: must be >= 1");
    if (o->max_queued_bytes < 1)
        return rl_error_set(RL_EINVAL, "recorder option max_queued_bytes: must be >= 1");
    if (o->write_delay_ns < 0 || o->write_delay_ns > 60 * 1000000000ll)
        return rl_error_set(RL_EINVAL, "recorder option write_delay: must be 0..60 s");
    if (o->flush_interval_ns < 1000000 || o->flush_interval_ns > 1000000000ll)
        return rl_error_set(RL_EINVAL,
                            "recorder option flush_interval: must be 1 ms..1 s (the open "
                            "chunk is flushed at least once a second)");
    if (o->stall_limit_ns < 200 * 1000000ll)
        return rl_error_set(RL_EINVAL, "recorder option stall_limit: must be >= 200 ms");
    if (o->heartbeat_interval_ns < 10 * 1000000ll || o->heartbeat_interval_ns > 10000000000ll)
        return rl_error_set(RL_EINVAL, "recorder option heartbeat_interval: must be 10 ms..10 s");
    if ((unsigned)o->compression > RL_RECORD_COMPRESSION_LZ4)
        return rl_error_set(RL_EINVAL, "recorder option compression: unknown value %d",
                            (int)o->compression);
    if (o->compression_level < (o->compression == RL_RECORD_COMPRESSION_ZSTD ? -7 : 0) ||
        o->compression_level > (o->compression == RL_RECORD_COMPRESSION_ZSTD  ? 22
                                : o->compression == RL_RECORD_COMPRESSION_LZ4 ? 12
                                                                              : 0))
        return rl_error_set(RL_EINVAL, "recorder option compression_level: %d is out of range "
                            "for %s (zstd -7..22, lz4 0..12, none 0)", o->compression_level,
                            rl_record_compression_name(o->compression));
    if (o->chunk_size < 1024 || o->chunk_size > (1ull << 30))
        return rl_error_set(RL_EINVAL, "recorder option chunk_size: must be 1 KiB..1 GiB");
    return RL_OK;
}

/* ---- the manifest ---------------------------------------------------------------------- */

/* Writes manifest.json from the state as it is now. Any thread but the monitor: this
 * waits for the disk. A failure is remembered for the heartbeat and status (and cleared
 * by the next success). */
static int write_manifest(rl_recorder *r)
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
static void grow_manifest_room(rl_recorder *r)
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
static void request_manifest(rl_recorder *r)
{
    pthread_mutex_lock(&r->disk_mu);
    r->manifest_req++;
    pthread_cond_signal(&r->disk_wake);
    pthread_mutex_unlock(&r->disk_mu);
}

/* Whether a run that ended has changes its last manifest does not show (late counts, qos,
 * unmatched): the manifest is then due again. */
static int manifest_behind(rl_recorder *r)
{
    pthread_mutex_lock(&r->manifest_mu);
    /* A run that ended was prepared: its directory is set and no longer changes. */
    int behind = atomic_load(&r->state) >= RL_RECORD_COMPLETE && r->info.run_dir[0] &&
                 atomic_load(&r->changes) != r->changes_written;
    pthread_mutex_unlock(&r->manifest_mu);
    return behind;
}

/* After a change a manifest shows: a run that ended (its writer done) gets it rewritten by
 * the disk thread; a run going on shows it in its next manifest anyway. */
static void note_change(rl_recorder *r)
{
    atomic_fetch_add(&r->changes, 1);
    pthread_mutex_lock(&r->mu);
    int due = atomic_load(&r->state) >= RL_RECORD_COMPLETE && atomic_load(&r->writer_done);
    pthread_mutex_unlock(&r->mu);
    if (due)
        request_manifest(r);
}

/* ---- lifetime ------------------------------------------------------------------------ */

static void *monitor_main(void *arg);
static void *disk_main(void *arg);

int rl_recorder_new(rl_recorder **out, const rl_record_options *opts)
{
    *out = NULL;
    rl_record_options def;
    if (!opts) {
        rl_record_options_default(&def);
        opts = &def;
    }
    int rc = check_options(opts);
    if (rc < 0)
        return rc;
    rl_recorder *r = calloc(1, sizeof *r);
    if (!r)
        return rl_error_set(RL_ENOMEM, "recorder: out of memory");
    r->opts = *opts;
    rl_rec_run_info_init(&r->info);
    r->lock.fd = -1;
    rc = rl_record_home(opts->home, r->info.home, sizeof r->info.home);
    if (rc == RL_OK && opts->lock_dir && *opts->lock_dir &&
        snprintf(r->lock_dir, sizeof r->lock_dir, "%s", opts->lock_dir) >= (int)sizeof r->lock_dir)
        rc = rl_error_set(RL_ERANGE, "recorder lock directory: path too long");
    if (rc == RL_OK && opts->bag_profile &&
        snprintf(r->bag_profile_opt, sizeof r->bag_profile_opt, "%s", opts->bag_profile) >=
            (int)sizeof r->bag_profile_opt)
        rc = rl_error_set(RL_EINVAL, "recorder option bag_profile: longer than %zu bytes",
                          sizeof r->bag_profile_opt - 1);
    if (rc < 0) {
        free(r);
        return rc;
    }
    r->opts.home = r->info.home;
    r->opts.lock_dir = r->lock_dir[0] ? r->lock_dir : NULL;
    r->opts.bag_profile = opts->bag_profile ? r->bag_profile_opt : NULL;
    atomic_init(&r->profile_ros2, opts->bag_profile && strcmp(opts->bag_profile, "ros2") == 0);
    rl_provenance prov;
    rl_provenance_collect(&prov);
    snprintf(r->info.version, sizeof r->info.version, "%s", prov.version);
    if (gethostname(r->info.host, sizeof r->info.host - 1) != 0 || !r->info.host[0])
        snprintf(r->info.host, sizeof r->info.host, "unknown");
    r->info.lab_domain = opts->lab_domain;
    r->info.pid = (long)getpid();
    pthread_mutex_init(&r->mu, NULL);
    pthread_mutex_init(&r->topic_mu, NULL);
    pthread_mutex_init(&r->manifest_mu, NULL);
    pthread_mutex_init(&r->join_mu, NULL);
    pthread_mutex_init(&r->disk_mu, NULL);
    pthread_mutex_init(&r->sync_mu, NULL);
    pthread_cond_init(&r->sync_wake, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->wake_writer, &ca);
    pthread_cond_init(&r->wake_monitor, &ca);
    pthread_cond_init(&r->disk_wake, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&r->state, RL_RECORD_IDLE);
    atomic_init(&r->ntopics, 0u);
    atomic_init(&r->progress_mono, rl_mono_ns());
    atomic_init(&r->writer_done, 0);
    atomic_init(&r->sync_since_mono, 0);
    atomic_init(&r->sync_failed, 0);
    atomic_init(&r->pauses, 0);
    atomic_init(&r->paused_ns, 0);
    r->prepare_ns = r->begin_ns = r->start_ns = r->stop_ns = r->finish_ns = RL_REC_UNSET;
    r->sink = rl_record_default_sink;
    snprintf(r->info.sink_name, sizeof r->info.sink_name, "%s", r->sink->name);

    rc = rl_rec_lock_acquire(&r->lock, r->opts.lock_dir, r->info.host, opts->lab_domain);
    snprintf(r->info.lock_path, sizeof r->info.lock_path, "%s", r->lock.path);
    if (rc == RL_OK) {
        if (pthread_create(&r->monitor, NULL, monitor_main, r) != 0)
            rc = rl_error_set(RL_ERR, "recorder: cannot start the monitor thread");
        else
            r->monitor_started = 1;
    }
    if (rc < 0) {
        rl_recorder_free(r);
        return rc;
    }
    *out = r;
    return RL_OK;
}

rl_record_state rl_recorder_state(const rl_recorder *r)
{
    return (rl_record_state)atomic_load(&((rl_recorder *)r)->state);
}

/* The run's names are written by prepare (in whatever thread calls it) before the state
 * leaves IDLE, and never again: read only after seeing another state (the state is
 * stored after them, so the load orders the reads), they are never read while written.
 * In IDLE a prepare may be filling them (or a refused one emptying them): "". */
static const char *run_name(const rl_recorder *r, const char *s)
{
    return atomic_load(&((rl_recorder *)r)->state) == RL_RECORD_IDLE ? "" : s;
}

const char *rl_recorder_run_dir(const rl_recorder *r)
{
    return run_name(r, r->info.run_dir);
}

const char *rl_recorder_bag_path(const rl_recorder *r)
{
    return run_name(r, r->info.bag_path);
}

int rl_recorder_set_sink(rl_recorder *r, const rl_record_sink_ops *ops, void *user)
{
    pthread_mutex_lock(&r->mu);
    int rc = RL_OK;
    if (atomic_load(&r->state) != RL_RECORD_IDLE)
        rc = rl_error_set(RL_ESTATE, "recorder: the sink can only be set in IDLE");
    else {
        r->sink = ops;
        r->sink_user = user;
        snprintf(r->info.sink_name, sizeof r->info.sink_name, "%s", ops ? ops->name : "none");
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

/* Moves ARMED/RECORDING to FAILED with `reason`; returns 1 if this call did it. The
 * writer notices and finishes the bag and the manifest. */
int rec_fail_run(rl_recorder *r, const char *fmt, ...)
{
    int did = 0;
    pthread_mutex_lock(&r->mu);
    int st = atomic_load(&r->state);
    if (st == RL_RECORD_ARMED || st == RL_RECORD_RECORDING) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->reason, sizeof r->reason, fmt, ap);
        va_end(ap);
        atomic_store(&r->state, RL_RECORD_FAILED);
        r->accepting = 0;
        r->late_counting = 1; /* until finish, cancel or free: the manifest says what came */
        r->finish_ns = rl_time_now_ns();
        did = 1;
        pthread_cond_signal(&r->wake_writer);
        pthread_cond_signal(&r->wake_monitor);
    }
    pthread_mutex_unlock(&r->mu);
    return did;
}

/* Joins the writer once; `join_mu` orders a finish and a wait that both want to. */
static void join_writer(rl_recorder *r)
{
    pthread_mutex_lock(&r->join_mu);
    pthread_mutex_lock(&r->mu);
    int started = r->writer_started;
    pthread_mutex_unlock(&r->mu);
    if (started) {
        pthread_join(r->writer, NULL);
        pthread_mutex_lock(&r->mu);
        r->writer_started = 0;
        pthread_mutex_unlock(&r->mu);
    }
    pthread_mutex_unlock(&r->join_mu);
}

int rl_recorder_wait(rl_recorder *r)
{
    int st = atomic_load(&r->state);
    if (st < RL_RECORD_COMPLETE)
        return rl_error_set(RL_ESTATE, "recorder wait: the run is still %s",
                            rl_record_state_name((rl_record_state)st));
    join_writer(r);
    return RL_OK;
}

void rl_recorder_free(rl_recorder *r)
{
    if (!r)
        return;
    int st = atomic_load(&r->state);
    if (st == RL_RECORD_ARMED || st == RL_RECORD_RECORDING)
        (void)rl_recorder_cancel(r, "recorder closed while recording");
    pthread_mutex_lock(&r->mu);
    r->late_counting = 0;
    r->stop_req = 1;
    r->monitor_stop = 1;
    pthread_cond_signal(&r->wake_writer);
    pthread_cond_signal(&r->wake_monitor);
    pthread_mutex_unlock(&r->mu);
    join_writer(r);
    if (r->monitor_started)
        pthread_join(r->monitor, NULL);
    if (r->disk_started) {
        pthread_mutex_lock(&r->disk_mu);
        r->disk_stop = 1;
        pthread_cond_signal(&r->disk_wake);
        pthread_mutex_unlock(&r->disk_mu);
        pthread_join(r->disk, NULL);
    }
    /* The last word on a run that ended: what came after its manifest (a FAILED run's late
     * counts, a description given since) is written now. */
    if (manifest_behind(r))
        (void)write_manifest(r);
    if (r->sink_ctx && r->sink)
        r->sink->abandon(r->sink_ctx);
    /* Messages left in the queue (only if the writer never ran): blocks appear in queue
     * order, each in one run, and the last is the fill block, freed below. */
    rec_block *prev = NULL;
    for (size_t i = 0; i < r->qcount; i++) {
        rec_msg *m = r->qv[i];
        rec_msg_release(m);
        if (!m->block)
            free(m);
        else if (m->block != prev) {
            if (prev && prev != r->fill_block)
                free(prev);
            prev = m->block;
        }
    }
    if (prev && prev != r->fill_block)
        free(prev);
    free(r->qv);
    free(r->fill_block);
    while (r->block_pool) {
        rec_block *b = r->block_pool;
        r->block_pool = b->next;
        free(b);
    }
    unsigned nt = atomic_load(&r->ntopics);
    for (size_t i = 0; i < r->unmatched_count; i++) {
        free((char *)r->unmatched[i].name);
        free((char *)r->unmatched[i].reason);
    }
    free(r->unmatched);
    for (unsigned i = 0; i < nt; i++) {
        rec_topic *t = r->topics[i];
        free(t->qos_json);
        free(t->name);
        free(t->schema_name);
        free(t->schema_encoding);
        free(t->message_encoding);
        free(t->schema_data);
        free(t);
    }
    rl_rec_lock_release(&r->lock);
    rl_rec_run_info_free(&r->info);
    pthread_cond_destroy(&r->wake_writer);
    pthread_cond_destroy(&r->wake_monitor);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->topic_mu);
    pthread_mutex_destroy(&r->manifest_mu);
    pthread_mutex_destroy(&r->join_mu);
    pthread_mutex_destroy(&r->disk_mu);
    pthread_cond_destroy(&r->disk_wake);
    pthread_cond_destroy(&r->sync_wake);
    pthread_mutex_destroy(&r->sync_mu);
    free(r);
}

/* ---- topics and pushes ------------------------------------------------------------------ */

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

static int same_str(const char *a, const char *b)
{
    return strcmp(a, b ? b : "") == 0;
}

/* A topic the MCAP ros2 profile allows and runlab reads back: a named schema whose
 * encoding pair the codec table decodes under that profile (ros2msg/cdr). */
static int fits_ros2(const char *schema_name, const char *schema_encoding,
                     const char *message_encoding)
{
    return schema_name && *schema_name &&
           rl_msg_codec_ros2_profile(rl_msg_codec_find(schema_encoding, message_encoding));
}

/* Decides the bag's profile at prepare (see rl_record_options.bag_profile). */
static void decide_profile(rl_recorder *r)
{
    if (r->opts.bag_profile) {
        snprintf(r->info.bag_profile, sizeof r->info.bag_profile, "%s", r->opts.bag_profile);
        return;
    }
    pthread_mutex_lock(&r->topic_mu);
    unsigned n = atomic_load(&r->ntopics);
    int ros2 = n > 0;
    for (unsigned i = 0; ros2 && i < n; i++)
        ros2 = fits_ros2(r->topics[i]->schema_name, r->topics[i]->schema_encoding,
                         r->topics[i]->message_encoding);
    /* Under topic_mu: a topic registered from now on is checked against the decision. */
    atomic_store(&r->profile_ros2, ros2);
    pthread_mutex_unlock(&r->topic_mu);
    snprintf(r->info.bag_profile, sizeof r->info.bag_profile, "%s", ros2 ? "ros2" : "");
}

int rl_recorder_add_topic(rl_recorder *r, const char *topic, const char *schema_name,
                          const char *schema_encoding, const void *schema_data,
                          size_t schema_len, const char *message_encoding, uint16_t *out_id)
{
    if (!topic || !*topic)
        return rl_error_set(RL_EINVAL, "recorder topic: empty name");
    if (schema_len && !schema_data)
        return rl_error_set(RL_EINVAL, "recorder topic %s: schema data missing", topic);
    int st = atomic_load(&r->state);
    if (st != RL_RECORD_IDLE && st != RL_RECORD_ARMED && st != RL_RECORD_RECORDING)
        return rl_error_set(RL_ESTATE, "recorder topic %s: the run is %s", topic,
                            rl_record_state_name((rl_record_state)st));
    pthread_mutex_lock(&r->topic_mu);
    unsigned n = atomic_load(&r->ntopics);
    int rc = RL_OK;
    for (unsigned i = 0; i < n; i++) {
        rec_topic *t = r->topics[i];
        if (strcmp(t->name, topic) != 0)
            continue;
        if (same_str(t->schema_name, schema_name) &&
            same_str(t->schema_encoding, schema_encoding) &&
            same_str(t->message_encoding, message_encoding) && t->schema_len == schema_len &&
            (schema_len == 0 || memcmp(t->schema_data, schema_data, schema_len) == 0)) {
            *out_id = (uint16_t)i;
        } else {
            rc = rl_error_set(RL_EEXIST,
                              "recorder topic %s: already registered with another schema "
                              "or encoding",
                              topic);
        }
        pthread_mutex_unlock(&r->topic_mu);
        return rc;
    }
    if (atomic_load(&r->profile_ros2) &&
        !fits_ros2(schema_name, schema_encoding, message_encoding)) {
        pthread_mutex_unlock(&r->topic_mu);
        return rl_error_set(RL_EINVAL,
                            "recorder topic %s: the bag's profile is ros2, which needs a "
                            "ros2msg schema and cdr messages (schema encoding '%s', "
                            "message encoding '%s'); choose the bag_profile",
                            topic, schema_encoding ? schema_encoding : "",
                            message_encoding ? message_encoding : "");
    }
    if (n >= RL_RECORD_MAX_TOPICS) {
        pthread_mutex_unlock(&r->topic_mu);
        return rl_error_set(RL_ERANGE, "recorder topic %s: more than %d topics", topic,
                            RL_RECORD_MAX_TOPICS);
    }
    rec_topic *t = calloc(1, sizeof *t);
    if (t) {
        t->name = strdup(topic);
        t->schema_name = dup_or_empty(schema_name);
        t->schema_encoding = dup_or_empty(schema_encoding);
        t->message_encoding = dup_or_empty(message_encoding);
        t->schema_data = malloc(schema_len ? schema_len : 1);
        t->schema_len = schema_len;
    }
    if (!t || !t->name || !t->schema_name || !t->schema_encoding || !t->message_encoding ||
        !t->schema_data) {
        if (t) {
            free(t->name);
            free(t->schema_name);
            free(t->schema_encoding);
            free(t->message_encoding);
            free(t->schema_data);
            free(t);
        }
        pthread_mutex_unlock(&r->topic_mu);
        return rl_error_set(RL_ENOMEM, "recorder topic %s: out of memory", topic);
    }
    if (schema_len)
        memcpy(t->schema_data, schema_data, schema_len);
    r->topics[n] = t;
    /* What its entry adds to a manifest (JSON escaping may double a name). */
    r->manifest_estimate +=
        2 * (strlen(t->name) + strlen(t->schema_name) + strlen(t->message_encoding)) + 400;
    /* Release: a pusher that sees the new count also sees the initialised topic. */
    atomic_store_explicit(&r->ntopics, n + 1, memory_order_release);
    pthread_mutex_unlock(&r->topic_mu);
    *out_id = (uint16_t)n;
    return RL_OK;
}

/* A description's longest text and the unmatched list's size (record.h). */
enum { QOS_JSON_MAX = 1024, UNMATCHED_MAX = 1024, UNMATCHED_TEXT_MAX = 1024 };

int rl_recorder_set_topic_qos(rl_recorder *r, uint16_t topic_id, const char *qos_json)
{
    unsigned nt = atomic_load_explicit(&r->ntopics, memory_order_acquire);
    if (topic_id >= nt)
        return rl_error_set(RL_ENOENT, "recorder: no topic with id %u", topic_id);
    rec_topic *t = r->topics[topic_id];
    char *copy = NULL;
    if (qos_json) {
        size_t len = strnlen(qos_json, QOS_JSON_MAX + 1);
        if (len > QOS_JSON_MAX)
            return rl_error_set(RL_EINVAL, "recorder topic %s: qos description longer than %d "
                                "bytes", t->name, QOS_JSON_MAX);
        enum json_tokener_error jerr = json_tokener_success;
        json_object *o = json_tokener_parse_verbose(qos_json, &jerr);
        int is_object = jerr == json_tokener_success && json_object_is_type(o, json_type_object);
        json_object_put(o);
        if (!is_object)
            return rl_error_set(RL_EINVAL, "recorder topic %s: qos description is not a JSON "
                                "object (%s)", t->name,
                                jerr != json_tokener_success ? json_tokener_error_desc(jerr)
                                                             : "another JSON value");
        if (!(copy = strdup(qos_json)))
            return rl_error_set(RL_ENOMEM, "recorder topic %s: out of memory", t->name);
    }
    pthread_mutex_lock(&r->topic_mu);
    int same = (!copy && !t->qos_json) || (copy && t->qos_json && strcmp(copy, t->qos_json) == 0);
    size_t old_len = t->qos_json ? strlen(t->qos_json) : 0;
    free(t->qos_json);
    t->qos_json = copy;
    if (copy && strlen(copy) > old_len)
        r->manifest_estimate += 2 * (strlen(copy) - old_len);
    pthread_mutex_unlock(&r->topic_mu);
    if (!same)
        note_change(r);
    return RL_OK;
}

static void free_unmatched(rl_record_unmatched *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)v[i].name);
        free((char *)v[i].reason);
    }
    free(v);
}

int rl_recorder_set_unmatched(rl_recorder *r, const rl_record_unmatched *items, size_t count)
{
    if (count > UNMATCHED_MAX)
        return rl_error_set(RL_EINVAL, "recorder: %zu unmatched entries (at most %d)", count,
                            UNMATCHED_MAX);
    if (count && !items)
        return rl_error_set(RL_EINVAL, "recorder: unmatched entries missing");
    for (size_t i = 0; i < count; i++)
        if (!items[i].name || !items[i].reason ||
            strnlen(items[i].name, UNMATCHED_TEXT_MAX + 1) > UNMATCHED_TEXT_MAX ||
            strnlen(items[i].reason, UNMATCHED_TEXT_MAX + 1) > UNMATCHED_TEXT_MAX)
            return rl_error_set(RL_EINVAL, "recorder: unmatched entry %zu: name and reason "
                                "must be given, each at most %d bytes", i, UNMATCHED_TEXT_MAX);
    rl_record_unmatched *copy = count ? calloc(count, sizeof *copy) : NULL;
    if (count && !copy)
        return rl_error_set(RL_ENOMEM, "recorder: out of memory");
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; i++) {
        copy[i].name = strdup(items[i].name);
        copy[i].reason = strdup(items[i].reason);
        if (!copy[i].name || !copy[i].reason) {
            free_unmatched(copy, count);
            return rl_error_set(RL_ENOMEM, "recorder: out of memory");
        }
        bytes += 2 * (strlen(items[i].name) + strlen(items[i].reason)) + 64;
    }
    pthread_mutex_lock(&r->topic_mu);
    int same = count == r->unmatched_count;
    for (size_t i = 0; same && i < count; i++)
        same = strcmp(copy[i].name, r->unmatched[i].name) == 0 &&
               strcmp(copy[i].reason, r->unmatched[i].reason) == 0;
    rl_record_unmatched *old = r->unmatched;
    size_t old_count = r->unmatched_count;
    r->unmatched = copy;
    r->unmatched_count = count;
    r->manifest_estimate = r->manifest_estimate - r->unmatched_bytes + bytes;
    r->unmatched_bytes = bytes;
    pthread_mutex_unlock(&r->topic_mu);
    free_unmatched(old, old_count);
    if (!same)
        note_change(r);
    return RL_OK;
}

/* ---- the writer thread ------------------------------------------------------------------ */

static void abs_deadline(struct timespec *ts, int64_t mono_ns)
{
    ts->tv_sec = (time_t)(mono_ns / 1000000000ll);
    ts->tv_nsec = (long)(mono_ns % 1000000000ll);
}

static int ensure_channel(rl_recorder *r, rec_topic *t, uint16_t id)
{
    if (t->channel_added)
        return RL_OK;
    int rc = r->sink->add_channel(r->sink_ctx, id, t->name, t->schema_name, t->schema_encoding,
                                  t->schema_data, t->schema_len, t->message_encoding);
    if (rc == RL_OK) {
        t->channel_added = 1;
        grow_manifest_room(r);
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

/* The durability thread: one fsync after each flush of the writer, coalescing flushes
 * that happen while an fsync is under way. Kept off the writer because an fsync can take
 * most of a second on a busy disk, and a writer that waits lets the queue and the pool of
 * recycled messages overflow. Stops at the first error (the run is FAILED) or when the
 * writer asks before closing the bag, whose close syncs it anyway. */
static void *sync_main(void *arg)
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
static int request_sync(rl_recorder *r, int threaded)
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

/* What the writer carries from one message to the next. */
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
    if (r->sink->flush(r->sink_ctx) < 0 || request_sync(r, sync_threaded) < 0) {
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
static void *writer_main(void *arg)
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
    int sync_threaded = r->sink->sync && pthread_create(&syncer, NULL, sync_main, r) == 0;

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
            abs_deadline(&ts, deadline);
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
        (void)write_manifest(r);
    pthread_mutex_lock(&r->mu);
    pthread_cond_signal(&r->wake_monitor);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* ---- the monitor thread ------------------------------------------------------------------ */

void rl_recorder_status(rl_recorder *r, rl_record_status *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&r->mu);
    out->state = (rl_record_state)atomic_load(&r->state);
    out->queued_messages = r->queued_msgs;
    out->queued_bytes = r->queued_bytes;
    out->closing = r->closing && !r->accepting &&
                   (out->state == RL_RECORD_ARMED || out->state == RL_RECORD_RECORDING);
    snprintf(out->manifest_error, sizeof out->manifest_error, "%s", r->manifest_error);
    pthread_mutex_unlock(&r->mu);
    out->host = r->info.host;
    out->run_id = out->state == RL_RECORD_IDLE ? "" : r->info.run_id;
    out->run_dir = out->state == RL_RECORD_IDLE ? "" : r->info.run_dir;
    out->pauses = atomic_load(&r->pauses);
    /* The reason is written once, when the state becomes terminal, before the state. */
    out->reason = out->state >= RL_RECORD_COMPLETE ? r->reason : "";
    out->stamp_ns = rl_time_now_ns();
    unsigned nt = atomic_load_explicit(&r->ntopics, memory_order_acquire);
    for (unsigned i = 0; i < nt; i++) {
        rec_topic *t = r->topics[i];
        out->received += atomic_load(&t->received);
        out->inside += atomic_load(&t->inside);
        out->outside += atomic_load(&t->outside);
        out->written += atomic_load(&t->written);
        out->dropped += atomic_load(&t->dropped);
        out->bytes += atomic_load(&t->bytes);
    }
}

int rl_recorder_topic_stats(rl_recorder *r, uint16_t id, rl_record_topic_stats *out)
{
    unsigned nt = atomic_load_explicit(&r->ntopics, memory_order_acquire);
    if (id >= nt)
        return rl_error_set(RL_ENOENT, "recorder: no topic with id %u", id);
    rec_topic *t = r->topics[id];
    out->topic = t->name;
    out->received = atomic_load(&t->received);
    out->inside = atomic_load(&t->inside);
    out->outside = atomic_load(&t->outside);
    out->written = atomic_load(&t->written);
    out->dropped = atomic_load(&t->dropped);
    out->bytes = atomic_load(&t->bytes);
    return RL_OK;
}

/* The monitor: heartbeats, and the checks the writer cannot make on itself (a writer
 * stuck in a write cannot notice that it is stuck). It never touches the disk: what it
 * needs written (the manifest of a run it failed) it asks the disk thread for, so the
 * heartbeat goes on while the disk hangs. A stall is counted in time the monitor itself
 * watched: when the monitor was not scheduled for long, the whole process was paused
 * (SIGSTOP, a suspended machine), the writer with it, and that time is no stall. */
static void *monitor_main(void *arg)
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
        abs_deadline(&ts, now + tick);
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
                request_manifest(r); /* the writer may never come back to do it */
            if (w.sync_stalled &&
                rec_fail_run(r, "fsync stalled for %lld ms (stall limit %lld ms)",
                         (long long)(w.sync_quiet_ns / 1000000),
                         (long long)(r->opts.stall_limit_ns / 1000000)))
                request_manifest(r); /* the writer waits for the fsync to close */
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

/* The disk thread: the manifest writes the monitor asks for, and the free-space check
 * every second (statvfs can hang on a dead network filesystem). */
static void *disk_main(void *arg)
{
    pthread_setname_np(pthread_self(), "rl-disk"); /* for top -H, perf, gdb */
    rl_recorder *r = arg;
    int64_t next_free_check = rl_mono_ns() + FREE_CHECK_INTERVAL_MS * 1000000ll;
    pthread_mutex_lock(&r->disk_mu);
    while (!r->disk_stop) {
        if (r->manifest_req == r->manifest_done) {
            struct timespec ts;
            abs_deadline(&ts, next_free_check);
            pthread_cond_timedwait(&r->disk_wake, &r->disk_mu, &ts);
            if (r->disk_stop)
                break;
        }
        if (r->manifest_req != r->manifest_done) {
            uint64_t req = r->manifest_req;
            pthread_mutex_unlock(&r->disk_mu);
            (void)write_manifest(r);
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
        if (atomic_load(&r->writer_done) && manifest_behind(r))
            (void)write_manifest(r);
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

/* ---- transitions ---------------------------------------------------------------------- */

int rl_recorder_prepare(rl_recorder *r, const rl_record_run *run)
{
    if (!run)
        return rl_error_set(RL_EINVAL, "recorder prepare: no run description");
    pthread_mutex_lock(&r->mu);
    int st = atomic_load(&r->state);
    if (st != RL_RECORD_IDLE || r->closing) {
        pthread_mutex_unlock(&r->mu);
        return rl_error_set(RL_ESTATE, "recorder prepare: refused in state %s (only from IDLE)",
                            rl_record_state_name((rl_record_state)st));
    }
    /* `closing` keeps concurrent transitions out while the directory is made. */
    r->closing = 1;
    pthread_mutex_unlock(&r->mu);

    int rc = RL_OK;
    if (!r->sink)
        rc = rl_error_set(RL_EUNSUPPORTED, "recorder prepare: no bag writer available");
    if (rc == RL_OK) {
        decide_profile(r);
        rc = rl_rec_prepare_dir(&r->info, &r->opts, run);
    }
    if (rc == RL_OK) {
        rl_record_options so = r->opts;
        so.bag_profile = r->info.bag_profile;
        rc = r->sink->open(&r->sink_ctx, r->info.bag_path, &so, r->sink_user);
        if (rc < 0) {
            /* Nothing was armed: the directory goes, as for any other prepare error (the
             * run id stays reserved). */
            rl_error_prefix(rc, "recorder prepare: %s", r->info.bag_path);
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", rl_error_last());
            r->sink_ctx = NULL;
            rl_rec_discard_dir(&r->info);
            rl_error_set(rc, "%s", msg);
        }
    }
    if (rc == RL_OK) {
        pthread_mutex_lock(&r->mu);
        /* The stamp the directory is named after: a second boundary between making the
           directory and arming must not make the two disagree. */
        r->prepare_ns = r->info.named_ns;
        atomic_store(&r->state, RL_RECORD_ARMED);
        r->accepting = 1;
        pthread_mutex_unlock(&r->mu);
        rc = write_manifest(r);
        if (rc == RL_OK) {
            atomic_store(&r->progress_mono, rl_mono_ns());
            pthread_mutex_lock(&r->mu);
            if (pthread_create(&r->writer, NULL, writer_main, r) != 0)
                rc = rl_error_set(RL_ERR, "recorder prepare: cannot start the writer thread");
            else
                r->writer_started = 1;
            pthread_mutex_unlock(&r->mu);
        }
        if (rc == RL_OK) {
            if (pthread_create(&r->disk, NULL, disk_main, r) != 0)
                rc = rl_error_set(RL_ERR, "recorder prepare: cannot start the disk thread");
            else
                r->disk_started = 1;
        }
        if (rc < 0) {
            /* The directory exists now and stays (never reused); the run is FAILED. */
            char msg[512];
            snprintf(msg, sizeof msg, "%s", rl_error_last());
            pthread_mutex_lock(&r->mu);
            int writer = r->writer_started;
            pthread_mutex_unlock(&r->mu);
            if (!writer) {
                r->sink->abandon(r->sink_ctx);
                r->sink_ctx = NULL;
            }
            rec_fail_run(r, "prepare: %s", msg);
            if (!writer)
                (void)write_manifest(r); /* else the writer does, after closing the bag */
            rl_error_set(rc, "%s", msg);
        }
    }
    if (atomic_load(&r->state) == RL_RECORD_IDLE) /* refused: no bag, nothing decided */
        atomic_store(&r->profile_ros2, r->opts.bag_profile && strcmp(r->opts.bag_profile,
                                                                      "ros2") == 0);
    pthread_mutex_lock(&r->mu);
    r->closing = 0;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int rl_recorder_set_nodes(rl_recorder *r, const char *nodes_json, const char *scenario_json)
{
    int rc = RL_OK;
    if ((nodes_json && (rc = rl_rec_check_object(nodes_json, "node parameter snapshots")) < 0) ||
        (scenario_json && (rc = rl_rec_check_object(scenario_json, "scenario")) < 0))
        return rc;
    char *scenario = scenario_json ? strdup(scenario_json) : NULL;
    if (scenario_json && !scenario)
        return rl_error_set(RL_ENOMEM, "recorder: out of memory");
    /* manifest_mu: the manifest's writers read info->scenario under it. */
    pthread_mutex_lock(&r->manifest_mu);
    int st = atomic_load(&r->state);
    if (st != RL_RECORD_ARMED && st != RL_RECORD_RECORDING) {
        rc = rl_error_set(RL_ESTATE, "recorder set nodes: refused in state %s (only ARMED or "
                          "RECORDING)", rl_record_state_name((rl_record_state)st));
    } else {
        if (nodes_json)
            rc = rl_rec_write_nodes(&r->info, nodes_json);
        if (rc == RL_OK && scenario) {
            free(r->info.scenario);
            r->info.scenario = scenario;
            scenario = NULL;
        }
    }
    pthread_mutex_unlock(&r->manifest_mu);
    free(scenario);
    if (rc == RL_OK && scenario_json)
        (void)write_manifest(r);
    return rc;
}

int rl_recorder_begin(rl_recorder *r)
{
    pthread_mutex_lock(&r->mu);
    int st = atomic_load(&r->state);
    int rc = RL_OK;
    if (st != RL_RECORD_ARMED || r->closing)
        rc = rl_error_set(RL_ESTATE, "recorder begin: refused in state %s (only from ARMED)",
                          rl_record_state_name((rl_record_state)st));
    else {
        r->begin_ns = rl_time_now_ns();
        atomic_store(&r->state, RL_RECORD_RECORDING);
    }
    pthread_mutex_unlock(&r->mu);
    /* After a crash the manifest then says the run had begun. A failed rewrite leaves the
     * prepare-time manifest, which is still whole; the run goes on. */
    if (rc == RL_OK)
        (void)write_manifest(r);
    return rc;
}

/* Under mu: START and STOP are marked only while RECORDING and not closing. */
static int mark_refused_locked(rl_recorder *r, const char *mark)
{
    int st = atomic_load(&r->state);
    if (st == RL_RECORD_RECORDING && !r->closing)
        return 0;
    rl_error_set(RL_ESTATE, "recorder %s: refused in state %s (only in RECORDING)", mark,
                 rl_record_state_name((rl_record_state)st));
    return 1;
}

int rl_recorder_mark_start(rl_recorder *r, int64_t stamp)
{
    pthread_mutex_lock(&r->mu);
    int rc = RL_OK;
    if (mark_refused_locked(r, "START"))
        rc = RL_ESTATE;
    else if (r->start_ns != RL_REC_UNSET)
        rc = rl_error_set(RL_ESTATE, "recorder START: already marked");
    else if (stamp < 0)
        rc = rl_error_set(RL_EINVAL, "recorder START: negative stamp");
    else
        r->start_ns = stamp;
    pthread_mutex_unlock(&r->mu);
    if (rc == RL_OK)
        request_manifest(r); /* so that a repair after a crash knows the window */
    return rc;
}

int rl_recorder_mark_stop(rl_recorder *r, int64_t stamp)
{
    pthread_mutex_lock(&r->mu);
    int rc = RL_OK;
    if (mark_refused_locked(r, "STOP"))
        rc = RL_ESTATE;
    else if (r->start_ns == RL_REC_UNSET)
        rc = rl_error_set(RL_ESTATE, "recorder STOP: refused before START");
    else if (r->stop_ns != RL_REC_UNSET)
        rc = rl_error_set(RL_ESTATE, "recorder STOP: already marked");
    else if (stamp < r->start_ns)
        rc = rl_error_set(RL_EINVAL, "recorder STOP: stamp %lld is before START %lld",
                          (long long)stamp, (long long)r->start_ns);
    else {
        r->stop_ns = stamp;
        pthread_cond_signal(&r->wake_writer); /* every queued message is decided now */
    }
    pthread_mutex_unlock(&r->mu);
    if (rc == RL_OK)
        request_manifest(r);
    return rc;
}

/* Drains and closes: stops accepting, lets the writer write everything and exit, then
 * sets the terminal state unless the run FAILED meanwhile. */
enum end_kind { END_FINISH, END_CANCEL, END_FAIL };

static int end_run(rl_recorder *r, int allowed_mask, const char *verb, const char *reason,
                   enum end_kind kind)
{
    pthread_mutex_lock(&r->mu);
    int st = atomic_load(&r->state);
    if (!(allowed_mask & (1 << st)) || r->closing) {
        /* The control flow's end of a FAILED run: what came after the failure is counted
           up to here, and the manifest says so. */
        int ended_count = st == RL_RECORD_FAILED && r->late_counting;
        r->late_counting = 0;
        int rc = st == RL_RECORD_FAILED
                     ? rl_error_set(RL_ESTATE, "recorder %s: refused, the run FAILED: %s", verb,
                                    r->reason)
                     : rl_error_set(RL_ESTATE, "recorder %s: refused in state %s%s", verb,
                                    rl_record_state_name((rl_record_state)st),
                                    r->closing ? " (another finish is under way)" : "");
        pthread_mutex_unlock(&r->mu);
        if (ended_count) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", rl_error_last());
            note_change(r);
            rl_error_set(rc, "%s", msg);
        }
        return rc;
    }
    r->closing = 1;
    r->accepting = 0;
    r->stop_req = 1;
    pthread_cond_signal(&r->wake_writer);
    pthread_mutex_unlock(&r->mu);

    join_writer(r);

    pthread_mutex_lock(&r->mu);
    int rc = RL_OK;
    if (atomic_load(&r->state) == RL_RECORD_FAILED) {
        rc = rl_error_set(RL_EIO, "recorder %s: the run FAILED: %s", verb, r->reason);
        pthread_mutex_unlock(&r->mu);
        return rc;
    }
    int complete = kind == END_FINISH && r->stop_ns != RL_REC_UNSET;
    const char *fallback = kind == END_FAIL     ? "failed"
                           : kind == END_CANCEL ? "cancelled"
                           : complete           ? "finished"
                                                : "finished without STOP";
    snprintf(r->reason, sizeof r->reason, "%s", reason && *reason ? reason : fallback);
    r->finish_ns = rl_time_now_ns();
    /* A failure the caller saw ends the run as the writer's own would, but after a clean
       drain: the bag has its footer and the counts are final (nothing counted late). */
    atomic_store(&r->state, kind == END_FAIL ? RL_RECORD_FAILED
                            : complete       ? RL_RECORD_COMPLETE
                                             : RL_RECORD_INTERRUPTED);
    pthread_cond_signal(&r->wake_monitor);
    pthread_mutex_unlock(&r->mu);
    return write_manifest(r);
}

int rl_recorder_finish(rl_recorder *r, const char *reason)
{
    return end_run(r, 1 << RL_RECORD_RECORDING, "finish", reason, END_FINISH);
}

int rl_recorder_cancel(rl_recorder *r, const char *reason)
{
    return end_run(r, (1 << RL_RECORD_ARMED) | (1 << RL_RECORD_RECORDING), "cancel", reason,
                   END_CANCEL);
}

int rl_recorder_fail(rl_recorder *r, const char *reason)
{
    return end_run(r, (1 << RL_RECORD_ARMED) | (1 << RL_RECORD_RECORDING), "fail", reason,
                   END_FAIL);
}

