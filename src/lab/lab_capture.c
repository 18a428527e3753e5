/* The recorder's capture of discovered topics: watches DCPSPublication, and for each writer
 * whose topic matches a pattern makes a raw-bytes reader in the writer's partitions, of the
 * reliability and durability the writer offers (lab_capture_qos.c), with the schema from the
 * writer's type information (XTypes type lookup, so types runlab was not built with are
 * recorded too); its readers' receive path (lab_capture_receive.c) hands the raw CDR of
 * every sample to the recorder engine in batches; type lookup runs on a small pool of worker
 * threads, so that one writer whose type lookup stalls (its node died mid-discovery) does not
 * hold up the subscription of every other topic. */
#include "lab/lab_capture_receive.h"
#include "lab/lab_internal.h"

#include "runlab/error.h"
#include "runlab/msgdef.h"
#include "runlab/log.h"
#include "runlab/time.h"

#include <dds/ddsi/ddsi_serdata.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long type lookup may wait for the writer's type objects. */
#define TYPE_LOOKUP_TIMEOUT DDS_SECS(3)

/* Subscribing threads: each type lookup blocks up to TYPE_LOOKUP_TIMEOUT, and a lab brings
   tens of topics at once (every vehicle's state, observation and command when it starts). */
#define SUBSCRIBE_WORKERS 4

/* One discovered writer (several writers of one topic, type and partition set share one:
 * its group). A group's writers may offer different reliability and durability: each
 * writer is recorded by the first of the group's readers that fits it, and a writer that
 * none fits gets a reader of its own class (so a best-effort writer beside reliable ones is
 * recorded, and the reliable ones stay reliable). */
typedef struct publication {
    char *topic, *type, *partitions; /* partitions joined by '\n' ("" = default) */
    dds_qos_t *qos;                  /* the first writer's QoS (with its type information) */
    int keyed;
    int state; /* 0 not matched by any pattern, 1 subscribed, 2 failed (logged once) */
    int busy;  /* a worker is subscribing it or adding readers (no other worker takes it) */
    int64_t busy_since_ns; /* rl_mono_ns() when that began */
    unsigned offered;  /* classes the group's writers offer (bits 1 << class) */
    unsigned readers;  /* classes of the readers made for it (bits 1 << class) */
    char *failure;     /* why (some of) its writers are not recorded, or NULL */
    /* Once subscribed (worker only): what a further reader of the group shares. */
    uint16_t topic_id;
    dds_entity_t topic_entity, subscriber;
    struct publication *next;
} publication;

struct lab_capture {
    dds_entity_t participant;
    dds_guid_t self;
    rl_recorder *rec;
    rl_lab_schema *schemas;
    size_t schema_count;
    dds_entity_t discovery;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t workers[SUBSCRIBE_WORKERS];
    int workers_started, stop, rescan;
    publication *pubs;       /* every distinct writer seen */
    publication *pending;    /* new ones, for the workers */
    char **patterns;
    int *asked;              /* per pattern: asked for (lab_capture_add_pattern) */
    size_t pattern_count, pattern_cap;
    int settled;             /* the run's unmatched list was said (lab_capture_settle) */
    int vehicles[256];       /* the prepared vehicles (lab_capture_expect_vehicles) */
    size_t vehicle_count;
    subscription *subs;      /* owned; readers are the participant's */
    atomic_size_t topic_count;
    atomic_int released;     /* lab_capture_release_held ran: nothing is held any more */
    atomic_uint_least64_t ready_seen[4]; /* vehicle ids 0..255 whose READY came (bits) */
};

static int matches(lab_capture *c, const char *topic)
{
    for (size_t i = 0; i < c->pattern_count; i++)
        if (rl_lab_topic_match(c->patterns[i], topic))
            return 1;
    return 0;
}

/* ---- subscribing ------------------------------------------------------------------- */

static const char *config_schema(lab_capture *c, const char *type)
{
    for (size_t i = 0; i < c->schema_count; i++)
        if (strcmp(c->schemas[i].type_name, type) == 0)
            return c->schemas[i].idl;
    return NULL;
}

/* The topic the reader reads: raw bytes whatever the writer's type (lab_rawtype.c). A
 * reader without type information matches any writer by type name, and Cyclone then skips
 * what a typed reader costs per sample (key extraction and hashing, normalising the CDR),
 * none of which a recorder that keeps the bytes as they came needs. */
static int raw_reader_topic(lab_capture *c, publication *p, dds_entity_t *topic)
{
    struct ddsi_sertype *st = lab_rawtype_new(p->type, p->keyed);
    if (!st)
        return rl_error_set(RL_ENOMEM, "out of memory");
    struct ddsi_sertype *mine = st;
    *topic = dds_create_topic_sertype(c->participant, p->topic, &st, NULL, NULL, NULL);
    if (*topic < 0) {
        mine->ops->free(mine);
        return lab_dds_fail(*topic, "create topic");
    }
    return RL_OK;
}

/* The schema from the config; else, when the writer sends no type information, runlab's own
 * (or none: the bytes are kept all the same, and a warning says so). */
static int config_topic(lab_capture *c, publication *p, uint16_t *topic_id)
{
    char *own = NULL;
    const char *idl = config_schema(c, p->type);
    if (!idl)
        idl = own = lab_builtin_schema(p->type);
    if (!idl)
        rl_log(RL_LOG_WARN, "recorder: %s: its writer sends no type information and the config "
               "has no schema for %s; recording it without a schema", p->topic, p->type);
    int rc = rl_recorder_add_topic(c->rec, p->topic, idl ? p->type : "", idl ? "omgidl" : "",
                                   idl, idl ? strlen(idl) : 0, "cdr", topic_id);
    free(own);
    return rc;
}

int lab_schema_has_char(const char *idl, const char *type)
{
    rl_msgdef *d = NULL;
    if (rl_msgdef_parse(&d, "omgidl", type, idl, strlen(idl)) < 0)
        return 0;
    /* Every type the root reaches (members, array and sequence elements, union cases and
     * discriminators), each looked at once: a type shared by many members (writers' type
     * information is outside input) costs no more than once. The table starts with one
     * entry per primitive kind whether the schema uses it or not, so only what the root
     * reaches counts. Out of memory: no warning (0). */
    size_t n = rl_msgdef_type_count(d);
    uint32_t *todo = malloc((n ? n : 1) * sizeof *todo);
    uint8_t *seen = calloc(n ? n : 1, 1);
    size_t k = 0;
    uint32_t root = rl_msgdef_root(d);
    if (todo && seen && root < n) {
        todo[k++] = root;
        seen[root] = 1;
    }
    int found = 0;
    while (k > 0 && !found) {
        const rl_msg_type *ty = rl_msgdef_type(d, todo[--k]);
        if (!ty)
            continue;
        found = ty->kind == RL_MSG_CHAR;
        bool has_elem = ty->kind == RL_MSG_ARRAY || ty->kind == RL_MSG_SEQUENCE ||
                        ty->kind == RL_MSG_UNION;
        bool has_members = ty->kind == RL_MSG_STRUCT || ty->kind == RL_MSG_UNION;
        for (size_t i = has_elem ? 0 : 1; i <= (has_members ? ty->nmembers : 0); i++) {
            uint32_t next = i == 0 ? ty->elem : ty->members[i - 1].type;
            if (next < n && !seen[next]) {
                seen[next] = 1;
                todo[k++] = next;
            }
        }
    }
    free(todo);
    free(seen);
    rl_msgdef_free(d);
    return found;
}

/* The schema from the writer's type information (XTypes type lookup, blocking). */
static int typed_topic(lab_capture *c, publication *p, const dds_typeinfo_t *ti,
                       uint16_t *topic_id)
{
    dds_topic_descriptor_t *desc = NULL;
    dds_return_t drc = dds_create_topic_descriptor(DDS_FIND_SCOPE_GLOBAL, c->participant, ti,
                                                   TYPE_LOOKUP_TIMEOUT, &desc);
    if (drc < 0)
        return lab_dds_fail(drc, "type lookup");
    char *idl = NULL;
    int rc = rl_lab_schema_from_type_mapping(desc->type_mapping.data, desc->type_mapping.sz,
                                             desc->m_typename, &idl);
    if (rc == RL_OK && lab_schema_has_char(idl, desc->m_typename))
        rl_log(RL_LOG_WARN, "recorder: %s: %s has char members by its type information; Cyclone "
               "0.10.2's idlc says char for int8 too, so if they are int8, negative values read "
               "as 128..255: give the type's schema in the recorder's config (docs/msgdef.md)",
               p->topic, desc->m_typename);
    if (rc == RL_OK) {
        rc = rl_recorder_add_topic(c->rec, p->topic, desc->m_typename, "omgidl", idl,
                                   strlen(idl), "cdr", topic_id);
        free(idl);
    }
    dds_delete_topic_descriptor(desc);
    return rc;
}

/* The writer QoS a requested-incompatible event names beyond reliability and durability
 * (ownership, deadline, ...): no reader of the recorder's can match that writer, and its
 * samples are lost. Reliability and durability are not counted: a writer offering less
 * than one reader asks gets a reader of its own (add_readers). */
static void on_incompatible(dds_entity_t reader, const dds_requested_incompatible_qos_status_t st,
                            void *arg)
{
    (void)reader;
    lab_handoff_acquire();
    subscription *s = arg;
    if (st.last_policy_id == DDS_RELIABILITY_QOS_POLICY_ID ||
        st.last_policy_id == DDS_DURABILITY_QOS_POLICY_ID)
        return;
    atomic_fetch_add(&s->incompatible, 1);
    atomic_store(&s->incompatible_policy, st.last_policy_id);
    rl_log(RL_LOG_WARN, "recorder: %s: a writer's QoS does not fit the recorder's reader (%s); "
           "its samples are not recorded", atomic_load(&s->topic_name),
           lab_qos_policy_name((dds_qos_policy_id_t)st.last_policy_id));
    lab_handoff_publish();
}

/* Tells the engine how the topic of `topic_id` is read (the manifest's "qos"). On the
 * worker that holds the publication busy. */
static void describe_topic(lab_capture *c, uint16_t topic_id)
{
    unsigned classes[64];
    size_t n = 0;
    pthread_mutex_lock(&c->mu);
    for (subscription *s = c->subs; s && n < 64; s = s->next) /* newest first */
        if ((uint16_t)atomic_load(&s->topic_id) == topic_id)
            classes[n++] = s->reader_class;
    pthread_mutex_unlock(&c->mu);
    char text[1024];
    if (n && lab_qos_describe(classes, n, text, sizeof text) == 0 &&
        rl_recorder_set_topic_qos(c->rec, topic_id, text) < 0)
        rl_log(RL_LOG_WARN, "recorder: %s", rl_error_last());
}

/* Makes one reader of `reader_class` for `p`'s group, whose earlier readers' classes are
 * `earlier` (it skips the writers they fit). On the worker holding `p` busy, without the lock. */
static int make_reader(lab_capture *c, publication *p, unsigned reader_class, unsigned earlier)
{
    dds_qos_t *q = lab_qos_reader(reader_class);
    subscription *s = calloc(1, sizeof *s);
    if (!s) {
        dds_delete_qos(q);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    atomic_store(&s->rec, c->rec);
    atomic_store(&s->topic_id, p->topic_id);
    atomic_store(&s->durable, (reader_class & LAB_CLASS_DURABLE) != 0);
    atomic_store(&s->released, &c->released);
    atomic_store(&s->earlier, earlier);
    atomic_store(&s->topic_name, (const char *)p->topic);
    if (strcmp(p->topic, RL_LAB_TOPIC_READY) == 0)
        atomic_store(&s->ready_seen, c->ready_seen);
    s->reader_class = reader_class;
    pthread_mutex_init(&s->held_mu, NULL);
    pthread_mutex_init(&s->verdict_mu, NULL);
    lab_handoff_publish();
    dds_listener_t *l = dds_create_listener(s);
    dds_lset_data_available(l, lab_receive_on_samples);
    dds_lset_requested_incompatible_qos(l, on_incompatible);
    dds_entity_t parent = p->subscriber ? p->subscriber : c->participant;
    dds_entity_t rd = dds_create_reader(parent, p->topic_entity, q, l);
    dds_delete_listener(l);
    dds_delete_qos(q);
    if (rd < 0) {
        pthread_mutex_destroy(&s->held_mu);
        pthread_mutex_destroy(&s->verdict_mu);
        free(s);
        return lab_dds_fail(rd, "create reader");
    }
    s->reader = rd;
    /* The group's first reader owns the subscriber and topic they share. */
    s->subscriber = earlier ? 0 : p->subscriber;
    s->topic = earlier ? 0 : p->topic_entity;
    pthread_mutex_lock(&c->mu);
    s->next = c->subs;
    c->subs = s;
    p->readers |= 1u << reader_class;
    pthread_mutex_unlock(&c->mu);
    if (!earlier)
        atomic_fetch_add(&c->topic_count, 1);
    rl_log(RL_LOG_INFO, "recorder: recording %s (%s), %s %s%s", p->topic, p->type,
           lab_qos_reliability_name(reader_class), lab_qos_durability_name(reader_class),
           earlier ? " (for the writers that fit no earlier reader)" : "");
    return RL_OK;
}

/* Adds the readers `p`'s writers need (none fits a class offered). On the worker holding
 * `p` busy. */
static int add_readers(lab_capture *c, publication *p)
{
    pthread_mutex_lock(&c->mu);
    unsigned offered = p->offered, readers = p->readers;
    pthread_mutex_unlock(&c->mu);
    unsigned need[LAB_CLASS_COUNT];
    size_t n = lab_qos_readers_needed(offered, readers, need);
    int rc = RL_OK;
    for (size_t i = 0; i < n && rc == RL_OK; i++) {
        rc = make_reader(c, p, need[i], readers);
        readers |= 1u << need[i];
    }
    if (n)
        describe_topic(c, p->topic_id);
    return rc;
}

/* Makes the topic, schema, subscriber and readers for `p`. Runs on the worker holding `p`
 * busy, without the lock held. */
static int subscribe(lab_capture *c, publication *p)
{
    dds_builtintopic_endpoint_t ep = {.topic_name = p->topic, .type_name = p->type, .qos = p->qos};
    const dds_typeinfo_t *ti = NULL;
    dds_entity_t topic = 0;
    uint16_t topic_id = 0;
    int rc;
    /* A schema in the config wins over the writer's type information, which can be wrong:
       Cyclone 0.10.2's idlc describes int8 as char (docs/msgdef.md). */
    if (config_schema(c, p->type) || dds_builtintopic_get_endpoint_type_info(&ep, &ti) < 0 || !ti)
        rc = config_topic(c, p, &topic_id);
    else
        rc = typed_topic(c, p, ti, &topic_id);
    if (rc == RL_OK)
        rc = raw_reader_topic(c, p, &topic);
    if (rc < 0)
        return rc;

    /* The writer's partitions, or it would not match. */
    dds_entity_t subscriber = 0;
    uint32_t np = 0;
    char **parts = NULL;
    if (dds_qget_partition(p->qos, &np, &parts) && np > 0) {
        dds_qos_t *sq = dds_create_qos();
        dds_qset_partition(sq, np, (const char **)parts);
        subscriber = dds_create_subscriber(c->participant, sq, NULL);
        dds_delete_qos(sq);
    }
    for (uint32_t i = 0; i < np; i++)
        dds_free(parts[i]);
    dds_free(parts);
    if (subscriber < 0) {
        (void)dds_delete(topic);
        return lab_dds_fail(subscriber, "create subscriber");
    }
    p->topic_id = topic_id;
    p->topic_entity = topic;
    p->subscriber = subscriber;
    rc = add_readers(c, p);
    pthread_mutex_lock(&c->mu);
    int none = p->readers == 0;
    pthread_mutex_unlock(&c->mu);
    if (none) { /* nothing shares them */
        if (subscriber)
            (void)dds_delete(subscriber);
        (void)dds_delete(topic);
    }
    return rc;
}

/* A publication no worker holds and one has to act on: a new group that a pattern matches, or a
 * subscribed one whose writers offer a class none of its readers fits. Under the lock. */
static publication *next_todo(lab_capture *c)
{
    unsigned need[LAB_CLASS_COUNT];
    for (publication *p = c->pubs; p; p = p->next)
        if (!p->busy &&
            ((p->state == 0 && matches(c, p->topic)) ||
             (p->state == 1 && lab_qos_readers_needed(p->offered, p->readers, need) > 0)))
            return p;
    return NULL;
}

/* Remembers why `p` (or some of its writers) is not recorded, for the unmatched list. */
static void note_failure(lab_capture *c, publication *p, const char *why)
{
    char *copy = strdup(why);
    pthread_mutex_lock(&c->mu);
    if (copy) {
        free(p->failure);
        p->failure = copy;
    }
    pthread_mutex_unlock(&c->mu);
}

static void *worker_main(void *arg)
{
    pthread_setname_np(pthread_self(), "rl-subscribe"); /* for top -H, perf, gdb */
    lab_capture *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        /* New writers join the list; a rescan (new pattern) looks at all of them again. */
        while (c->pending) {
            publication *p = c->pending;
            c->pending = p->next;
            p->next = c->pubs;
            c->pubs = p;
        }
        publication *todo = next_todo(c);
        if (!todo) {
            c->rescan = 0;
            while (!c->stop && !c->pending && !c->rescan)
                pthread_cond_wait(&c->wake, &c->mu);
            continue;
        }
        int fresh = todo->state == 0;
        todo->state = 1;
        todo->busy = 1;
        todo->busy_since_ns = rl_mono_ns();
        pthread_mutex_unlock(&c->mu);
        int rc = fresh ? subscribe(c, todo) : add_readers(c, todo);
        /* A writer found after the run ended is no loss: said, but not as a warning. */
        if (rc < 0) {
            rl_log(rl_recorder_state(c->rec) >= RL_RECORD_COMPLETE ? RL_LOG_INFO : RL_LOG_WARN,
                   "recorder: not recording %s%s: %s", todo->topic,
                   fresh ? "" : " (writers of another QoS)", rl_error_last());
            note_failure(c, todo, rl_error_last());
        }
        pthread_mutex_lock(&c->mu);
        todo->busy = 0;
        if (rc < 0 && !todo->readers) {
            todo->state = 2; /* never tried again: said once */
        } else if (rc < 0) {
            /* Its other writers are recorded; the class that got no reader is not asked for
               again until another writer offers it. */
            unsigned need[LAB_CLASS_COUNT];
            size_t n = lab_qos_readers_needed(todo->offered, todo->readers, need);
            for (size_t i = 0; i < n; i++)
                todo->offered &= ~(1u << need[i]);
        }
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ---- discovery --------------------------------------------------------------------- */

static char *join_partitions(const dds_qos_t *qos)
{
    uint32_t n = 0;
    char **ps = NULL;
    size_t len = 1;
    if (qos && dds_qget_partition(qos, &n, &ps))
        for (uint32_t i = 0; i < n; i++)
            len += strlen(ps[i]) + 1;
    char *out = malloc(len);
    if (out) {
        out[0] = '\0';
        for (uint32_t i = 0; i < n; i++) {
            if (i)
                strcat(out, "\n");
            strcat(out, ps[i]);
        }
    }
    for (uint32_t i = 0; i < n; i++)
        dds_free(ps[i]);
    dds_free(ps);
    return out;
}

static int same_pub(const publication *p, const dds_builtintopic_endpoint_t *ep, const char *parts)
{
    return strcmp(p->topic, ep->topic_name) == 0 && strcmp(p->type, ep->type_name) == 0 &&
           strcmp(p->partitions, parts) == 0;
}

static void on_publication(dds_entity_t reader, void *arg)
{
    lab_handoff_acquire();
    lab_capture *c = arg;
    void *samples[16] = {0};
    dds_sample_info_t si[16];
    dds_guid_t self;
    pthread_mutex_lock(&c->mu); /* written under it before this reader existed */
    self = c->self;
    pthread_mutex_unlock(&c->mu);
    for (;;) {
        dds_return_t n = dds_take(reader, samples, si, 16, 16);
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++) {
            const dds_builtintopic_endpoint_t *ep = samples[i];
            if (!si[i].valid_data || si[i].instance_state != DDS_IST_ALIVE ||
                memcmp(&ep->participant_key, &self, sizeof self) == 0 ||
                strncmp(ep->topic_name, "DCPS", 4) == 0)
                continue;
            char *parts = join_partitions(ep->qos);
            if (!parts)
                continue;
            rl_log(RL_LOG_DEBUG, "recorder: discovered a writer of %s (%s)", ep->topic_name,
                   ep->type_name);
            unsigned offers = 1u << lab_qos_writer_class(ep->qos);
            pthread_mutex_lock(&c->mu);
            publication *known = NULL;
            for (publication *p = c->pubs; p && !known; p = p->next)
                known = same_pub(p, ep, parts) ? p : NULL;
            for (publication *p = c->pending; p && !known; p = p->next)
                known = same_pub(p, ep, parts) ? p : NULL;
            /* Another writer of a known group: a class of QoS none of the group's readers
               fits gets a reader of its own (a worker makes it). */
            if (known && (known->offered | offers) != known->offered) {
                known->offered |= offers;
                c->rescan = 1;
                pthread_cond_broadcast(&c->wake);
            }
            publication *np = known ? NULL : calloc(1, sizeof *np);
            if (np) {
                np->offered = offers;
                np->topic = strdup(ep->topic_name);
                np->type = strdup(ep->type_name);
                np->partitions = parts;
                parts = NULL;
                np->qos = dds_create_qos();
                if (ep->qos)
                    dds_copy_qos(np->qos, ep->qos);
                /* GUID entity kind 0x02: writer with key, 0x03: without. */
                np->keyed = ep->key.v[15] == 0x02;
                if (np->topic && np->type) {
                    np->next = c->pending;
                    c->pending = np;
                    pthread_cond_broadcast(&c->wake);
                } else {
                    free(np->topic);
                    free(np->type);
                    free(np->partitions);
                    dds_delete_qos(np->qos);
                    free(np);
                }
            }
            pthread_mutex_unlock(&c->mu);
            free(parts);
        }
        dds_return_loan(reader, samples, n);
    }
    lab_handoff_publish();
}

int lab_capture_new(lab_capture **out, dds_entity_t participant, rl_recorder *rec,
                    const rl_lab_schema *schemas, size_t schema_count)
{
    lab_capture *c = calloc(1, sizeof *c);
    if (!c)
        return rl_error_set(RL_ENOMEM, "out of memory");
    c->participant = participant;
    c->rec = rec;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->wake, NULL);
    int rc = RL_OK;
    if (schema_count) {
        c->schemas = calloc(schema_count, sizeof *c->schemas);
        if (!c->schemas)
            rc = rl_error_set(RL_ENOMEM, "out of memory");
        for (size_t i = 0; rc == RL_OK && i < schema_count; i++) {
            c->schemas[i].type_name = strdup(schemas[i].type_name);
            c->schemas[i].idl = strdup(schemas[i].idl);
            c->schema_count = i + 1;
            if (!c->schemas[i].type_name || !c->schemas[i].idl)
                rc = rl_error_set(RL_ENOMEM, "out of memory");
        }
    }
    pthread_mutex_lock(&c->mu);
    dds_return_t drc = dds_get_guid(participant, &c->self);
    pthread_mutex_unlock(&c->mu);
    if (rc == RL_OK && drc < 0)
        rc = lab_dds_fail(drc, "participant GUID");
    for (int i = 0; rc == RL_OK && i < SUBSCRIBE_WORKERS; i++)
        if (pthread_create(&c->workers[i], NULL, worker_main, c) != 0)
            rc = rl_error_set(RL_ERR, "cannot start the discovery workers");
        else
            c->workers_started++;
    if (rc == RL_OK) {
        lab_handoff_publish();
        dds_listener_t *l = dds_create_listener(c);
        dds_lset_data_available(l, on_publication);
        c->discovery = dds_create_reader(participant, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL, l);
        dds_delete_listener(l);
        if (c->discovery < 0)
            rc = lab_dds_fail(c->discovery, "DCPSPublication reader");
    }
    if (rc < 0) {
        if (c->discovery > 0)
            dds_delete(c->discovery);
        lab_capture_free(c);
        return rc;
    }
    *out = c;
    return RL_OK;
}

int lab_capture_add_pattern(lab_capture *c, const char *pattern, int asked)
{
    char *copy = strdup(pattern);
    if (!copy)
        return rl_error_set(RL_ENOMEM, "out of memory");
    pthread_mutex_lock(&c->mu);
    int rc = RL_OK;
    for (size_t i = 0; i < c->pattern_count; i++)
        if (strcmp(c->patterns[i], pattern) == 0) {
            c->asked[i] |= asked != 0;
            pthread_mutex_unlock(&c->mu);
            free(copy);
            return RL_OK;
        }
    if (c->pattern_count == c->pattern_cap) {
        size_t cap = c->pattern_cap ? c->pattern_cap * 2 : 8;
        char **np = realloc(c->patterns, cap * sizeof *np);
        if (np)
            c->patterns = np;
        int *na = np ? realloc(c->asked, cap * sizeof *na) : NULL;
        if (na)
            c->asked = na;
        if (!np || !na)
            rc = rl_error_set(RL_ENOMEM, "out of memory");
        else
            c->pattern_cap = cap;
    }
    if (rc == RL_OK) {
        c->asked[c->pattern_count] = asked != 0;
        c->patterns[c->pattern_count++] = copy;
        copy = NULL;
        c->rescan = 1;
        pthread_cond_broadcast(&c->wake);
    }
    pthread_mutex_unlock(&c->mu);
    free(copy);
    return rc;
}

size_t lab_capture_backlog(lab_capture *c, char *text, size_t cap)
{
    size_t waiting = 0;
    const publication *oldest = NULL;
    pthread_mutex_lock(&c->mu);
    int64_t now = rl_mono_ns();
    for (int list = 0; list < 2; list++)
        for (const publication *p = list ? c->pending : c->pubs; p; p = p->next) {
            int matched = matches(c, p->topic);
            if (matched && (list || p->state == 0 || p->busy))
                waiting++;
            if (matched && !list && p->busy &&
                (!oldest || p->busy_since_ns < oldest->busy_since_ns))
                oldest = p;
        }
    if (cap && oldest)
        snprintf(text, cap, "%zu discovered writer group(s) not yet subscribed; the longest "
                 "subscription under way, %s, for %.1f s", waiting, oldest->topic,
                 (double)(now - oldest->busy_since_ns) / 1e9);
    else if (cap)
        snprintf(text, cap, "%zu discovered writer group(s) not yet subscribed", waiting);
    pthread_mutex_unlock(&c->mu);
    return waiting;
}

void lab_capture_expect_vehicles(lab_capture *c, const int *ids, size_t count)
{
    pthread_mutex_lock(&c->mu);
    c->vehicle_count = count < 256 ? count : 256;
    memcpy(c->vehicles, ids, c->vehicle_count * sizeof ids[0]);
    pthread_mutex_unlock(&c->mu);
}

size_t lab_capture_topic_count(lab_capture *c)
{
    return atomic_load(&c->topic_count);
}

int lab_capture_ready_seen(lab_capture *c, int vehicle)
{
    if (vehicle < 0 || vehicle > 255)
        return 0;
    return (atomic_load(&c->ready_seen[vehicle / 64]) >> (vehicle % 64)) & 1;
}

size_t lab_capture_held_count(lab_capture *c)
{
    size_t n = 0;
    pthread_mutex_lock(&c->mu);
    for (subscription *s = c->subs; s; s = s->next) {
        pthread_mutex_lock(&s->held_mu);
        n += s->nheld;
        pthread_mutex_unlock(&s->held_mu);
    }
    pthread_mutex_unlock(&c->mu);
    return n;
}

size_t lab_capture_release_held(lab_capture *c)
{
    atomic_store(&c->released, 1);
    size_t n = 0;
    pthread_mutex_lock(&c->mu);
    for (subscription *s = c->subs; s; s = s->next) {
        pthread_mutex_lock(&s->held_mu);
        rl_recorder *rec = atomic_load(&s->rec);
        uint16_t topic_id = (uint16_t)atomic_load(&s->topic_id);
        for (size_t k = 0; k < s->nheld; k++) {
            held_sample *h = &s->held[k];
            if (rl_recorder_push(rec, topic_id, h->receive_ns, h->publish_ns, h->data, h->len) ==
                RL_OK)
                n++;
            free(h->data);
        }
        s->nheld = 0;
        pthread_mutex_unlock(&s->held_mu);
    }
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* ---- what the run did not record ------------------------------------------------------ */

/* One reader as lab_capture_settle sees it. */
typedef struct reader_view {
    dds_entity_t reader;
    const char *topic;
    unsigned incompatible;
    dds_qos_policy_id_t policy;
    int matched; /* ever matched a writer */
} reader_view;

/* Whether a reader of a topic `pat` matches ever matched a writer; if not, whether one
 * had writers whose QoS it could not match (and the policy). */
static int recorded(const reader_view *rv, size_t nrv, const char *pat, int *incompatible,
                    dds_qos_policy_id_t *policy)
{
    int matched = 0;
    *incompatible = 0;
    *policy = DDS_INVALID_QOS_POLICY_ID;
    for (size_t k = 0; k < nrv; k++)
        if (rl_lab_topic_match(pat, rv[k].topic)) {
            matched |= rv[k].matched;
            if (rv[k].incompatible) {
                *incompatible = 1;
                *policy = rv[k].policy;
            }
        }
    return matched;
}

/* Under the lock: adds the entry of `pat`, which no reader recorded, saying why. */
static void explain_unrecorded(lab_capture *c, const char *pat, int incompatible,
                               dds_qos_policy_id_t policy, lab_unmatched *l)
{
    const publication *found = NULL, *failed = NULL, *waiting = NULL;
    for (int list = 0; list < 2; list++)
        for (const publication *p = list ? c->pending : c->pubs; p; p = p->next)
            if (rl_lab_topic_match(pat, p->topic)) {
                found = found ? found : p;
                failed = failed ? failed : (p->failure ? p : NULL);
                waiting = waiting ? waiting : (list || p->state == 0 || p->busy ? p : NULL);
            }
    if (!found)
        lab_unmatched_add(l, pat, "no writer discovered during the run");
    else if (waiting && !failed)
        lab_unmatched_add(l, pat, "writers were discovered (%s), but the recorder was "
                          "still subscribing to them (type lookup) when the run ended",
                          waiting->topic);
    else if (failed)
        lab_unmatched_add(l, pat, "%s: not recorded: %s", failed->topic, failed->failure);
    else if (incompatible)
        lab_unmatched_add(l, pat, "writers were discovered, but their QoS does not fit the "
                      "recorder's readers (%s)", lab_qos_policy_name(policy));
    else
        lab_unmatched_add(l, pat, "writers were discovered (%s), but none matched the "
                      "recorder's readers", found->topic);
}

/* `pattern`'s form for one vehicle when it stands for a kind of topic of every vehicle: it
 * starts "rt/vehicle/" and a '*' that '/' or its end follows; the '*' is put as `id`, so
 * the observation pattern gives "rt/vehicle/3/observation" and "rt/vehicle/" + '*' gives
 * "rt/vehicle/3/" + '*'. 1, or 0 when it has no such form (or it does not fit `cap`). */
static int vehicle_form(const char *pattern, int id, char *out, size_t cap)
{
    static const char prefix[] = "rt/vehicle/*";
    if (strncmp(pattern, prefix, sizeof prefix - 1) != 0)
        return 0;
    const char *rest = pattern + sizeof prefix - 1;
    if (*rest != '/' && *rest != '\0')
        return 0;
    int n = snprintf(out, cap, "rt/vehicle/%d%s", id, *rest ? rest : "/*");
    return n > 0 && (size_t)n < cap;
}

/* Under the lock: the entries (asked patterns that no reader matched a writer for, topics
 * with writers no reader could match or with a reader that could not be made). A pattern
 * of every vehicle's topic of a kind that a prepared vehicle's topic was recorded for also
 * names each prepared vehicle whose topic of that kind was not (rt/vehicle/3/observation
 * when only vehicles 1 and 2 published theirs); one that no prepared vehicle's topic was
 * recorded for stays one entry (a command type the lab does not use). */
static void collect_unmatched(lab_capture *c, const reader_view *rv, size_t nrv,
                              lab_unmatched *l)
{
    for (size_t i = 0; i < c->pattern_count; i++) {
        if (!c->asked[i])
            continue;
        const char *pat = c->patterns[i];
        int incompatible;
        dds_qos_policy_id_t policy;
        if (!recorded(rv, nrv, pat, &incompatible, &policy)) {
            explain_unrecorded(c, pat, incompatible, policy, l);
            continue;
        }
        char form[1024];
        int any = 0;
        for (size_t v = 0; v < c->vehicle_count && !any; v++)
            any = vehicle_form(pat, c->vehicles[v], form, sizeof form) &&
                  recorded(rv, nrv, form, &incompatible, &policy);
        for (size_t v = 0; any && v < c->vehicle_count; v++)
            if (vehicle_form(pat, c->vehicles[v], form, sizeof form) &&
                !recorded(rv, nrv, form, &incompatible, &policy))
                explain_unrecorded(c, form, incompatible, policy, l);
    }
    for (size_t k = 0; k < nrv; k++)
        if (rv[k].incompatible)
            lab_unmatched_add(l, rv[k].topic, "%u writer(s) offered QoS the recorder's reader cannot "
                          "match (%s); their samples were not recorded", rv[k].incompatible,
                          lab_qos_policy_name(rv[k].policy));
    for (const publication *p = c->pubs; p; p = p->next)
        if (p->failure && matches(c, p->topic))
            lab_unmatched_add(l, p->topic, "not recorded: %s", p->failure);
}

void lab_capture_settle(lab_capture *c, int final)
{
    /* The readers first (DDS is asked about them without the lock). */
    size_t nrv = 0, cap = 0;
    pthread_mutex_lock(&c->mu);
    if (c->settled) { /* the run's list is final: later writers are not the run's */
        pthread_mutex_unlock(&c->mu);
        return;
    }
    for (subscription *s = c->subs; s; s = s->next)
        cap++;
    reader_view *rv = calloc(cap ? cap : 1, sizeof *rv);
    for (subscription *s = c->subs; rv && s; s = s->next)
        if (s->reader > 0)
            rv[nrv++] = (reader_view){.reader = s->reader,
                                      .topic = atomic_load(&s->topic_name),
                                      .incompatible = atomic_load(&s->incompatible),
                                      .policy = (dds_qos_policy_id_t)
                                          atomic_load(&s->incompatible_policy)};
    pthread_mutex_unlock(&c->mu);
    if (!rv) {
        rl_log(RL_LOG_WARN, "recorder: out of memory listing what was not recorded");
        return;
    }
    for (size_t k = 0; k < nrv; k++) {
        dds_subscription_matched_status_t st;
        rv[k].matched = dds_get_subscription_matched_status(rv[k].reader, &st) == DDS_RETCODE_OK &&
                        st.total_count > 0;
    }
    lab_unmatched l = {0};
    pthread_mutex_lock(&c->mu);
    collect_unmatched(c, rv, nrv, &l);
    int say = final && !c->settled;
    c->settled |= final;
    pthread_mutex_unlock(&c->mu);
    free(rv);
    if (l.failed)
        rl_log(RL_LOG_WARN, "recorder: out of memory listing what was not recorded");
    if (rl_recorder_set_unmatched(c->rec, l.v, l.n) < 0)
        rl_log(RL_LOG_WARN, "recorder: %s", rl_error_last());
    if (say) {
        rl_record_status st;
        rl_recorder_status(c->rec, &st);
        for (size_t i = 0; i < l.n; i++)
            rl_log(RL_LOG_WARN, "recorder: run %s: %s matched no writer: %s", st.run_id,
                   l.v[i].name, l.v[i].reason);
    }
    lab_unmatched_free(&l);
}

static void free_pubs(publication *p)
{
    while (p) {
        publication *next = p->next;
        free(p->topic);
        free(p->type);
        free(p->partitions);
        free(p->failure);
        dds_delete_qos(p->qos);
        free(p);
        p = next;
    }
}

void lab_capture_stop(lab_capture *c)
{
    if (!c)
        return;
    lab_handoff_acquire(); /* the listeners ended when the participant was deleted */
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->wake);
    pthread_mutex_unlock(&c->mu);
    for (int i = 0; i < c->workers_started; i++)
        pthread_join(c->workers[i], NULL);
    c->workers_started = 0;
}

void lab_capture_close(lab_capture *c)
{
    if (!c)
        return;
    lab_capture_stop(c);
    if (c->discovery > 0)
        (void)dds_delete(c->discovery);
    c->discovery = 0;
    /* Deleting a reader waits for its listener to return: after this loop nothing pushes
       into the recorder any more. */
    for (subscription *s = c->subs; s; s = s->next) {
        (void)dds_delete(s->reader);
        if (s->subscriber > 0)
            (void)dds_delete(s->subscriber);
        (void)dds_delete(s->topic);
        s->reader = s->subscriber = s->topic = 0;
    }
    lab_handoff_acquire();
}

void lab_capture_free(lab_capture *c)
{
    if (!c)
        return;
    lab_capture_stop(c);
    free_pubs(c->pubs);
    free_pubs(c->pending);
    for (subscription *s = c->subs; s;) {
        subscription *next = s->next;
        for (size_t k = 0; k < s->nheld; k++)
            free(s->held[k].data);
        pthread_mutex_destroy(&s->held_mu);
        pthread_mutex_destroy(&s->verdict_mu);
        free(s);
        s = next;
    }
    for (size_t i = 0; i < c->pattern_count; i++)
        free(c->patterns[i]);
    free(c->patterns);
    free(c->asked);
    for (size_t i = 0; i < c->schema_count; i++) {
        free((char *)c->schemas[i].type_name);
        free((char *)c->schemas[i].idl);
    }
    free(c->schemas);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->mu);
    free(c);
    /* Samples the engine still holds go back to the pool when it is done with them. */
    lab_rawtype_pool_trim();
}
