/* Small DDS helpers of the lab module: Cyclone return codes as runlab errors, the lab's QoS
 * profiles (reliable; transient-local for state that late joiners need) and waiting until
 * an endpoint is matched before the first sample, so volatile requests are not lost; the
 * endpoints of a service's two sides. */
#include "lab/lab_internal.h"

#include "runlab/error.h"
#include "runlab/time.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

int lab_dds_fail(dds_return_t rc, const char *what)
{
    int code = rc == DDS_RETCODE_TIMEOUT ? RL_ETIMEOUT : RL_EIO;
    return rl_error_set(code, "%s: %s", what, dds_strretcode(rc));
}

int lab_participant(int domain, dds_entity_t *out)
{
    if (domain < 0 || domain > 232)
        return rl_error_set(RL_EINVAL, "DDS domain %d: must be 0..232", domain);
    /* The enclave in USER_DATA, as rmw_cyclonedds sets it: ROS 2's graph files the
       participant's nodes (lab_ros_graph.c) under it. */
    static const char enclave[] = "enclave=/;";
    dds_qos_t *q = dds_create_qos();
    dds_qset_userdata(q, enclave, sizeof enclave - 1);
    dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, q, NULL);
    dds_delete_qos(q);
    if (pp < 0)
        return lab_dds_fail(pp, "cannot join the DDS domain (check CYCLONEDDS_URI)");
    *out = pp;
    return RL_OK;
}

dds_qos_t *lab_qos(int transient_local, int depth)
{
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    if (depth > 0)
        dds_qset_history(q, DDS_HISTORY_KEEP_LAST, depth);
    else
        dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
    if (transient_local) {
        dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
        /* What a late joiner gets is the durability service's history (as rmw sets it). */
        dds_qset_durability_service(q, 0, depth > 0 ? DDS_HISTORY_KEEP_LAST : DDS_HISTORY_KEEP_ALL,
                                    depth > 0 ? depth : 1, DDS_LENGTH_UNLIMITED,
                                    DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
    } else {
        dds_qset_durability(q, DDS_DURABILITY_VOLATILE);
    }
    dds_qset_writer_data_lifecycle(q, false);
    return q;
}

int lab_wait_matched(dds_entity_t entity, int is_writer, int64_t deadline_ns)
{
    for (;;) {
        uint32_t count = 0;
        dds_return_t rc;
        if (is_writer) {
            dds_publication_matched_status_t st;
            rc = dds_get_publication_matched_status(entity, &st);
            count = st.current_count;
        } else {
            dds_subscription_matched_status_t st;
            rc = dds_get_subscription_matched_status(entity, &st);
            count = st.current_count;
        }
        if (rc < 0)
            return lab_dds_fail(rc, "matched status");
        if (count > 0)
            return RL_OK;
        if (rl_mono_ns() >= deadline_ns)
            return rl_error_set(RL_ETIMEOUT, "no matching %s appeared",
                                is_writer ? "reader" : "writer");
        dds_sleepfor(DDS_MSECS(5));
    }
}

void lab_copy(char *dst, size_t cap, const char *src)
{
    if (!cap)
        return;
    if (!src)
        src = "";
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Process-wide by nature: the hand-over point between any thread and Cyclone's. */
static atomic_uint handoff;

void lab_handoff_publish(void)
{
    atomic_fetch_add_explicit(&handoff, 1, memory_order_release);
}

void lab_handoff_acquire(void)
{
    (void)atomic_load_explicit(&handoff, memory_order_acquire);
}

int lab_service_endpoints(dds_entity_t participant, const char *ros_name,
                          const dds_topic_descriptor_t *req, const dds_topic_descriptor_t *rep,
                          int server, dds_entity_t *request, dds_entity_t *reply)
{
    char rq[256], rr[256];
    int rc = rl_lab_ros_service(ros_name, rq, rr, sizeof rq);
    if (rc < 0)
        return rc;
    dds_entity_t tq = dds_create_topic(participant, req, rq, NULL, NULL);
    dds_entity_t tr = dds_create_topic(participant, rep, rr, NULL, NULL);
    if (tq < 0 || tr < 0)
        return lab_dds_fail(tq < 0 ? tq : tr, "service topics");
    dds_qos_t *q = lab_qos(0, 0);
    *request = server ? dds_create_reader(participant, tq, q, NULL)
                      : dds_create_writer(participant, tq, q, NULL);
    *reply = server ? dds_create_writer(participant, tr, q, NULL)
                    : dds_create_reader(participant, tr, q, NULL);
    dds_delete_qos(q);
    if (*request < 0 || *reply < 0)
        return lab_dds_fail(*request < 0 ? *request : *reply, "service endpoints");
    return RL_OK;
}
