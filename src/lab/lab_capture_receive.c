/* The capture's receive path: Cyclone's data-available listener of every capture reader
 * takes raw CDR in batches and hands it to the recorder engine without a copy where it
 * can, holds transient-local samples the IDLE recorder refuses until prepare, skips the
 * writers an earlier reader of the group records, and notes the vehicles seen READY. */
#include "lab/lab_capture_receive.h"

#include "runlab/error.h"
#include "runlab/time.h"

#include <dds/ddsi/ddsi_serdata.h>

#include <stdlib.h>
#include <string.h>

/* Samples taken per dds_takecdr call on the receive path at the most (one lock of the
 * engine's queue per call, see lab_receive_on_samples). */
#define TAKE_BATCH 256

/* Keeps a sample the IDLE recorder refused (transient-local topics only). Once the held
 * samples were handed over, the recorder takes it itself. */
static void hold(subscription *s, rl_recorder *rec, uint16_t topic_id,
                 const dds_sample_info_t *si, int64_t now, int64_t published, const void *data,
                 size_t len)
{
    pthread_mutex_lock(&s->held_mu);
    if (atomic_load(atomic_load(&s->released))) {
        pthread_mutex_unlock(&s->held_mu);
        (void)rl_recorder_push(rec, topic_id, now, published, data, len);
        return;
    }
    void *copy = malloc(len ? len : 1);
    if (!copy) {
        pthread_mutex_unlock(&s->held_mu);
        return;
    }
    memcpy(copy, data, len);
    size_t k = 0;
    while (k < s->nheld && !(s->held[k].writer == si->publication_handle &&
                             s->held[k].instance == si->instance_handle))
        k++;
    if (k == s->nheld && s->nheld == HELD_MAX) { /* full: the oldest goes */
        free(s->held[0].data);
        memmove(&s->held[0], &s->held[1], (HELD_MAX - 1) * sizeof s->held[0]);
        k = --s->nheld;
    }
    if (k == s->nheld)
        s->nheld++;
    else
        free(s->held[k].data);
    s->held[k] = (held_sample){si->publication_handle, si->instance_handle, now, published, copy,
                               len};
    pthread_mutex_unlock(&s->held_mu);
}

/* What the IDLE recorder refused with `rc`: a transient-local sample is held. Otherwise
 * (queue full: the run turns FAILED and says so; ended: nothing to record any more) the
 * refusal needs nothing more here. */
static void refused(subscription *s, rl_recorder *rec, uint16_t topic_id, int rc,
                    const dds_sample_info_t *si, const rl_record_msg *m)
{
    if (rc == RL_ESTATE && atomic_load(&s->durable) && rl_recorder_state(rec) == RL_RECORD_IDLE)
        hold(s, rec, topic_id, si, m->receive_ns, m->publish_ns, m->data, m->len);
}

/* Hands a batch of samples to the engine under one lock of its queue; a refused one is
 * held when it has to be (refused above), its handed-over payload given back (the engine
 * refused it, so it is still ours), and the rest go on, again in batches. */
static void deliver(subscription *s, rl_recorder *rec, uint16_t topic_id,
                    const dds_sample_info_t *const *si, const rl_record_msg *m, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t done = 0;
        int rc = rl_recorder_push_many(rec, topic_id, &m[i], n - i, &done);
        i += done;
        if (rc == RL_OK)
            break;
        refused(s, rec, topic_id, rc, si[i], &m[i]);
        if (m[i].release)
            m[i].release(m[i].release_ctx);
        i++;
    }
}

/* The vehicle id of a ReadyStatus sample as raw XCDR1 bytes ({string source_id; uint8
 * vehicle_id; ...} behind the 4-byte encapsulation header), or -1. */
static int ready_vehicle(const uint8_t *b, size_t len)
{
    if (len < 9 || b[0] != 0x00 || (b[1] != 0x00 && b[1] != 0x01))
        return -1;
    uint32_t n = b[1] ? (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 |
                            (uint32_t)b[7] << 24
                      : (uint32_t)b[7] | (uint32_t)b[6] << 8 | (uint32_t)b[5] << 16 |
                            (uint32_t)b[4] << 24;
    return n < len && 8 + (size_t)n < len ? b[8 + n] : -1;
}

/* Whether samples of `writer` are this reader's to record: not when one of the group's
 * earlier readers fits the writer (it records them). Decided once per writer from the QoS
 * it offers, so two readers never both record a writer. */
static int writer_is_mine(subscription *s, dds_entity_t reader, dds_instance_handle_t writer,
                          unsigned earlier)
{
    pthread_mutex_lock(&s->verdict_mu);
    for (size_t i = 0; i < s->nverdicts; i++)
        if (s->verdicts[i].writer == writer) {
            int mine = s->verdicts[i].mine;
            pthread_mutex_unlock(&s->verdict_mu);
            return mine;
        }
    pthread_mutex_unlock(&s->verdict_mu);
    dds_builtintopic_endpoint_t *ep = dds_get_matched_publication_data(reader, writer);
    int mine = 1; /* a writer gone meanwhile: its sample is kept rather than lost */
    if (ep) {
        mine = !lab_qos_fits_any(earlier, lab_qos_writer_class(ep->qos));
        dds_builtintopic_free_endpoint(ep); /* the struct too */
    }
    pthread_mutex_lock(&s->verdict_mu);
    size_t cap = sizeof s->verdicts / sizeof s->verdicts[0];
    s->verdicts[s->next_verdict] = (writer_verdict){writer, mine};
    s->next_verdict = (s->next_verdict + 1) % cap;
    if (s->nverdicts < cap)
        s->nverdicts++;
    pthread_mutex_unlock(&s->verdict_mu);
    return mine;
}

/* The engine is done with a sample handed over without a copy. */
static void release_sample(void *serdata)
{
    ddsi_serdata_unref(serdata);
}

void lab_receive_on_samples(dds_entity_t reader, void *arg)
{
    lab_handoff_acquire();
    subscription *s = arg;
    rl_recorder *rec = atomic_load(&s->rec);
    uint16_t topic_id = (uint16_t)atomic_load(&s->topic_id);
    unsigned earlier = atomic_load(&s->earlier);
    struct ddsi_serdata *bufs[TAKE_BATCH];
    dds_sample_info_t si[TAKE_BATCH];
    /* lab_rawtype's samples are handed to the engine as they are (one piece, freed by a
       plain free whenever the last reference goes, whatever became of the reader): the
       engine keeps a reference until it has written the bytes, so the receive thread
       copies nothing. Samples of other kinds are copied. */
    void *copies[TAKE_BATCH];
    rl_record_msg msgs[TAKE_BATCH];
    const dds_sample_info_t *infos[TAKE_BATCH];
    /* Cyclone calls this for every sample it delivers (one at a time, in the thread that
       delivers it, which on loopback is nearly always one sample per call), so the take
       that comes back short has emptied the reader and there is no second take to find
       nothing: that second call cost as much as the first. A sample delivered meanwhile
       calls this again once this call returns. */
    for (dds_return_t n = TAKE_BATCH; n == TAKE_BATCH;) {
        n = dds_takecdr(reader, bufs, TAKE_BATCH, si, DDS_ANY_STATE);
        if (n <= 0)
            break;
        int64_t now = rl_time_now_ns();
        size_t k = 0;
        for (int i = 0; i < n; i++) {
            if (!si[i].valid_data ||
                (earlier && !writer_is_mine(s, reader, si[i].publication_handle, earlier)))
                continue;
            size_t size = ddsi_serdata_size(bufs[i]);
            msgs[k] = (rl_record_msg){
                .receive_ns = now,
                .publish_ns = si[i].source_timestamp > 0 ? si[i].source_timestamp : now,
                .len = size,
            };
            copies[k] = NULL;
            const void *bytes = lab_rawtype_bytes(bufs[i]);
            if (bytes) {
                msgs[k].data = bytes;
                msgs[k].release = release_sample;
                msgs[k].release_ctx = bufs[i];
                bufs[i] = NULL; /* the reference goes with the message */
            } else {
                if (!(copies[k] = malloc(size ? size : 1)))
                    continue;
                ddsi_serdata_to_ser(bufs[i], 0, size, copies[k]);
                msgs[k].data = copies[k];
            }
            infos[k++] = &si[i];
        }
        atomic_uint_least64_t *seen = atomic_load(&s->ready_seen);
        for (size_t j = 0; seen && j < k; j++) {
            int id = ready_vehicle(msgs[j].data, msgs[j].len);
            if (id >= 0)
                atomic_fetch_or(&seen[id / 64], (uint_least64_t)1 << (id % 64));
        }
        if (k)
            deliver(s, rec, topic_id, infos, msgs, k);
        for (size_t j = 0; j < k; j++)
            free(copies[j]);
        for (int i = 0; i < n; i++)
            if (bufs[i])
                ddsi_serdata_unref(bufs[i]);
    }
    lab_handoff_publish(); /* for the free after dds_delete waited for us */
}
