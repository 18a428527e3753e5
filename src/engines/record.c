/* The recorder engine behind runlab/record.h: options, the state machine and its
 * transitions, topics, status. It starts the recorder's threads, each in a file of its own:
 * the writer (record_writer.c, with its durability thread in record_sync.c), the monitor
 * (record_monitor.c) and the disk thread with the manifest writes (record_disk.c); the
 * producers' side of the queue is record_queue.c, the run's files record_dir.h's. */
#include "engines/record_internal.h"

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
    if (rl_record_compression_level_check(o->compression, o->compression_level) != RL_OK)
        return rl_error_set(RL_EINVAL, "recorder option compression_level: %s", rl_error_last());
    if (o->chunk_size < 1024 || o->chunk_size > (1ull << 30))
        return rl_error_set(RL_EINVAL, "recorder option chunk_size: must be 1 KiB..1 GiB");
    return RL_OK;
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
        rec_request_manifest(r);
}

/* ---- lifetime ------------------------------------------------------------------------ */

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
        if (pthread_create(&r->monitor, NULL, rec_monitor_main, r) != 0)
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
    if (rec_manifest_behind(r))
        (void)rec_write_manifest(r);
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

/* ---- status ---------------------------------------------------------------------------- */

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
        rc = rec_write_manifest(r);
        if (rc == RL_OK) {
            atomic_store(&r->progress_mono, rl_mono_ns());
            pthread_mutex_lock(&r->mu);
            if (pthread_create(&r->writer, NULL, rec_writer_main, r) != 0)
                rc = rl_error_set(RL_ERR, "recorder prepare: cannot start the writer thread");
            else
                r->writer_started = 1;
            pthread_mutex_unlock(&r->mu);
        }
        if (rc == RL_OK) {
            if (pthread_create(&r->disk, NULL, rec_disk_main, r) != 0)
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
                (void)rec_write_manifest(r); /* else the writer does, after closing the bag */
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
        (void)rec_write_manifest(r);
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
        (void)rec_write_manifest(r);
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
        rec_request_manifest(r); /* so that a repair after a crash knows the window */
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
        rec_request_manifest(r);
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
    return rec_write_manifest(r);
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

