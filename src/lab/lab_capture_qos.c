/* The capture's QoS rules (lab_capture.c uses these; they know nothing of it): which class
 * of reader (reliable or best effort, transient-local or volatile) a discovered writer
 * needs, which readers a topic's writers need so that each writer is received with the
 * guarantees it offers, the reader QoS of a class, the manifest's words for them, and the
 * list of what a run did not record. */
#include "lab/lab_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned lab_qos_writer_class(const dds_qos_t *qos)
{
    /* What a writer offers when its QoS does not say: DDS's defaults for a writer. */
    dds_reliability_kind_t rel = DDS_RELIABILITY_RELIABLE;
    dds_duration_t blocking = 0;
    dds_durability_kind_t dur = DDS_DURABILITY_VOLATILE;
    if (qos) {
        (void)dds_qget_reliability(qos, &rel, &blocking);
        (void)dds_qget_durability(qos, &dur);
    }
    return (rel == DDS_RELIABILITY_RELIABLE ? LAB_CLASS_RELIABLE : 0u) |
           (dur != DDS_DURABILITY_VOLATILE ? LAB_CLASS_DURABLE : 0u);
}

int lab_qos_class_fits(unsigned reader_class, unsigned writer_class)
{
    /* Request/offered: a reader asks for no more than the writer offers. */
    return (reader_class & ~writer_class & (LAB_CLASS_RELIABLE | LAB_CLASS_DURABLE)) == 0;
}

int lab_qos_fits_any(unsigned reader_mask, unsigned writer_class)
{
    for (unsigned c = 0; c < LAB_CLASS_COUNT; c++)
        if ((reader_mask & (1u << c)) && lab_qos_class_fits(c, writer_class))
            return 1;
    return 0;
}

size_t lab_qos_readers_needed(unsigned offered_mask, unsigned reader_mask,
                              unsigned out[LAB_CLASS_COUNT])
{
    /* Strongest first (reliable transient-local, reliable volatile, best-effort
       transient-local, best effort volatile): a writer is recorded by the first reader
       that fits it, so it gets the strongest guarantees a reader offers it. */
    static const unsigned order[LAB_CLASS_COUNT] = {
        LAB_CLASS_RELIABLE | LAB_CLASS_DURABLE, LAB_CLASS_RELIABLE, LAB_CLASS_DURABLE, 0};
    size_t n = 0;
    for (size_t i = 0; i < LAB_CLASS_COUNT; i++) {
        unsigned c = order[i];
        if ((offered_mask & (1u << c)) && !lab_qos_fits_any(reader_mask, c)) {
            out[n++] = c;
            reader_mask |= 1u << c;
        }
    }
    return n;
}

dds_qos_t *lab_qos_reader(unsigned reader_class)
{
    /* Keep-all: nothing is replaced in the reader's cache before the listener takes it. */
    dds_qos_t *q = lab_qos((reader_class & LAB_CLASS_DURABLE) != 0, 0);
    if (!(reader_class & LAB_CLASS_RELIABLE))
        dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
    dds_qset_data_representation(q, 2,
                                 (dds_data_representation_id_t[]){DDS_DATA_REPRESENTATION_XCDR1,
                                                                   DDS_DATA_REPRESENTATION_XCDR2});
    return q;
}

const char *lab_qos_reliability_name(unsigned c)
{
    return (c & LAB_CLASS_RELIABLE) ? "reliable" : "best_effort";
}

const char *lab_qos_durability_name(unsigned c)
{
    return (c & LAB_CLASS_DURABLE) ? "transient_local" : "volatile";
}

const char *lab_qos_policy_name(dds_qos_policy_id_t id)
{
    switch (id) {
    case DDS_RELIABILITY_QOS_POLICY_ID: return "reliability";
    case DDS_DURABILITY_QOS_POLICY_ID: return "durability";
    case DDS_DEADLINE_QOS_POLICY_ID: return "deadline";
    case DDS_LATENCYBUDGET_QOS_POLICY_ID: return "latency budget";
    case DDS_OWNERSHIP_QOS_POLICY_ID: return "ownership";
    case DDS_LIVELINESS_QOS_POLICY_ID: return "liveliness";
    case DDS_DESTINATIONORDER_QOS_POLICY_ID: return "destination order";
    case DDS_PRESENTATION_QOS_POLICY_ID: return "presentation";
    case DDS_DATA_REPRESENTATION_QOS_POLICY_ID: return "data representation";
    case DDS_TYPE_CONSISTENCY_ENFORCEMENT_QOS_POLICY_ID: return "type consistency";
    default: return "another policy";
    }
}

int lab_qos_describe(const unsigned *newest_first, size_t count, char *out, size_t cap)
{
    /* Oldest first, each class once. */
    unsigned classes[LAB_CLASS_COUNT];
    size_t n = 0;
    for (size_t i = count; i-- > 0;) {
        int seen = 0;
        for (size_t j = 0; j < n && !seen; j++)
            seen = classes[j] == newest_first[i];
        if (!seen && n < LAB_CLASS_COUNT)
            classes[n++] = newest_first[i];
    }
    size_t used = 0;
    int w = 0;
    for (size_t i = 0; i < n && w >= 0 && used < cap; i++) {
        const char *open = i == 0 ? "{" : i == 1 ? ", \"other_readers\": [{" : ", {";
        w = snprintf(out + used, cap - used,
                     "%s\"reliability\": \"%s\", \"durability\": \"%s\", \"history\": "
                     "\"keep_all\"%s",
                     open, lab_qos_reliability_name(classes[i]),
                     lab_qos_durability_name(classes[i]), i == 0 ? "" : "}");
        used += w > 0 ? (size_t)w : 0;
    }
    if (w >= 0 && used < cap)
        w = snprintf(out + used, cap - used, "%s}", n > 1 ? "]" : "");
    used += w > 0 ? (size_t)w : 0;
    return n == 0 || w < 0 || used >= cap ? -1 : 0;
}

void lab_unmatched_add(lab_unmatched *l, const char *name, const char *fmt, ...)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        rl_record_unmatched *nv = cap <= 1024 ? realloc(l->v, cap * sizeof *nv) : NULL;
        if (!nv) {
            l->failed = 1;
            return;
        }
        l->v = nv;
        l->cap = cap;
    }
    char reason[1024], name_copy[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    lab_copy(name_copy, sizeof name_copy, name);
    char *n = strdup(name_copy), *r = strdup(reason);
    if (!n || !r) {
        free(n);
        free(r);
        l->failed = 1;
        return;
    }
    l->v[l->n++] = (rl_record_unmatched){n, r};
}

void lab_unmatched_free(lab_unmatched *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free((char *)l->v[i].name);
        free((char *)l->v[i].reason);
    }
    free(l->v);
    *l = (lab_unmatched){0};
}
