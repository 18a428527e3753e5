/* The control flow's vehicle watchdog: one best-effort reader per watched vehicle's
 * rt/vehicle/<id>/state (so it matches reliable and best-effort writers alike) notes when
 * each vehicle last spoke; a vehicle silent for longer than the timeout since the watch was
 * armed (START) is reported lost, once. */
#include "lab/lab_internal.h"

#include "runlab/error.h"
#include "runlab/time.h"

#include "runlab_msgs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct watched {
    rl_lab_vehicle_watch *w;
    int id;
    dds_entity_t reader;
    int64_t last_seen_mono_ns; /* under w->mu; 0: none yet */
    uint64_t states;           /* under w->mu */
    int lost;                  /* reported already; under w->mu */
} watched;

struct rl_lab_vehicle_watch {
    dds_entity_t participant;
    pthread_mutex_t mu;
    int64_t armed_mono_ns; /* under mu; 0: not armed */
    size_t n;
    watched v[];
};

static void on_state(dds_entity_t reader, void *arg)
{
    lab_handoff_acquire();
    watched *v = arg;
    void *samples[8] = {0};
    dds_sample_info_t si[8];
    dds_return_t n;
    while ((n = dds_take(reader, samples, si, 8, 8)) > 0) {
        int valid = 0;
        for (int i = 0; i < n; i++)
            valid += si[i].valid_data;
        dds_return_loan(reader, samples, n);
        if (!valid)
            continue;
        int64_t now = rl_mono_ns();
        pthread_mutex_lock(&v->w->mu);
        v->last_seen_mono_ns = now;
        v->states += (uint64_t)valid;
        pthread_mutex_unlock(&v->w->mu);
    }
    lab_handoff_publish(); /* for rl_lab_vehicle_watch_free, after dds_delete waited for us */
}

static int watch_start(rl_lab_vehicle_watch *w, int domain)
{
    int rc = lab_participant(domain, &w->participant);
    if (rc < 0)
        return rc;
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1);
    dds_qset_durability(q, DDS_DURABILITY_VOLATILE);
    rc = RL_OK;
    for (size_t i = 0; i < w->n && rc == RL_OK; i++) {
        char name[64];
        rl_lab_vehicle_topic(w->v[i].id, "state", name, sizeof name);
        dds_entity_t t = dds_create_topic(w->participant, &runlab_msgs_msg_dds__VehicleState__desc,
                                          name, NULL, NULL);
        lab_handoff_publish();
        dds_listener_t *l = dds_create_listener(&w->v[i]);
        dds_lset_data_available(l, on_state);
        w->v[i].reader = t < 0 ? t : dds_create_reader(w->participant, t, q, l);
        dds_delete_listener(l);
        if (w->v[i].reader < 0)
            rc = lab_dds_fail(w->v[i].reader, name);
    }
    dds_delete_qos(q);
    return rc;
}

int rl_lab_vehicle_watch_new(rl_lab_vehicle_watch **out, int domain, const int *vehicles,
                             size_t n)
{
    if (n > 256)
        return rl_error_set(RL_EINVAL, "vehicle watch: at most 256 vehicles, not %zu", n);
    for (size_t i = 0; i < n; i++)
        if (vehicles[i] < 0 || vehicles[i] > 255)
            return rl_error_set(RL_EINVAL, "vehicle watch: vehicle id %d: must be 0..255",
                                vehicles[i]);
    rl_lab_vehicle_watch *w = calloc(1, sizeof *w + n * sizeof w->v[0]);
    if (!w)
        return rl_error_set(RL_ENOMEM, "out of memory");
    pthread_mutex_init(&w->mu, NULL);
    w->n = n;
    for (size_t i = 0; i < n; i++) {
        w->v[i].w = w;
        w->v[i].id = vehicles[i];
    }
    int rc = watch_start(w, domain);
    if (rc < 0) {
        char msg[512];
        lab_copy(msg, sizeof msg, rl_error_last());
        rl_lab_vehicle_watch_free(w);
        return rl_error_set(rc, "vehicle watch: %s", msg);
    }
    *out = w;
    return RL_OK;
}

void rl_lab_vehicle_watch_free(rl_lab_vehicle_watch *w)
{
    if (!w)
        return;
    if (w->participant > 0)
        dds_delete(w->participant); /* waits for listeners still running */
    lab_handoff_acquire();
    pthread_mutex_destroy(&w->mu);
    free(w);
}

void rl_lab_vehicle_watch_arm(rl_lab_vehicle_watch *w, int64_t now_mono_ns)
{
    pthread_mutex_lock(&w->mu);
    w->armed_mono_ns = now_mono_ns;
    pthread_mutex_unlock(&w->mu);
}

bool rl_lab_vehicle_silent(int64_t last_seen_mono_ns, int64_t armed_mono_ns,
                           int64_t now_mono_ns, int64_t timeout_ns)
{
    int64_t since = last_seen_mono_ns > armed_mono_ns ? last_seen_mono_ns : armed_mono_ns;
    return now_mono_ns - since > timeout_ns;
}

size_t rl_lab_vehicle_watch_check(rl_lab_vehicle_watch *w, int64_t now_mono_ns,
                                  int64_t timeout_ns, rl_lab_vehicle_loss *out, size_t cap)
{
    size_t found = 0;
    pthread_mutex_lock(&w->mu);
    int64_t armed = w->armed_mono_ns;
    for (size_t i = 0; armed && i < w->n && found < cap; i++) {
        watched *v = &w->v[i];
        if (v->lost || !rl_lab_vehicle_silent(v->last_seen_mono_ns, armed, now_mono_ns, timeout_ns))
            continue;
        v->lost = 1;
        int64_t since = v->last_seen_mono_ns > armed ? v->last_seen_mono_ns : armed;
        out[found++] = (rl_lab_vehicle_loss){
            .vehicle = v->id,
            .last_state_mono_ns = v->last_seen_mono_ns > armed ? v->last_seen_mono_ns : 0,
            .silent_ns = now_mono_ns - since,
        };
    }
    pthread_mutex_unlock(&w->mu);
    return found;
}

uint64_t rl_lab_vehicle_watch_states(rl_lab_vehicle_watch *w, int vehicle)
{
    uint64_t n = 0;
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i].id == vehicle)
            n = w->v[i].states;
    pthread_mutex_unlock(&w->mu);
    return n;
}
