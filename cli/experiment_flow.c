/* `runlab experiment`'s choices and records beside its sequence (cmd_lab.c): the vehicles
 * that take part, the run's map, the sentences and records of vehicles lost mid-run, and
 * the repair of a run whose recorder died, so its manifest says what the experiment saw. */
#include "experiment_flow.h"

#include "runlab/error.h"
#include "runlab/record.h"
#include "runlab/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000l};
    nanosleep(&ts, NULL);
}

void exp_format_ids(const int *ids, size_t n, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(out + used, cap - used, "%s%d", i ? ", " : "", ids[i]);
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
}

exp_wait_result exp_wait_vehicles(rl_lab_client *cl, const int *given, size_t n_given,
                                  int64_t timeout_ns, volatile sig_atomic_t *stop_flag, int *out,
                                  size_t cap, size_t *n, char *why, size_t why_cap)
{
    int64_t deadline = rl_mono_ns() + timeout_ns;
    why[0] = '\0';
    *n = 0;
    if (n_given) {
        for (;;) {
            int64_t left = deadline - rl_mono_ns();
            int64_t slice = left < 100000000ll ? (left > 0 ? left : 0) : 100000000ll;
            if (rl_lab_client_wait_ready(cl, given, n_given, slice) == RL_OK)
                break;
            if (*stop_flag)
                return EXP_WAIT_INTERRUPTED;
            if (rl_mono_ns() >= deadline) {
                snprintf(why, why_cap, "%s", rl_error_last());
                return EXP_WAIT_TIMEOUT;
            }
        }
        for (size_t i = 0; i < n_given && i < cap; i++)
            out[i] = given[i];
        *n = n_given < cap ? n_given : cap;
        return EXP_WAIT_OK;
    }
    /* No list: whoever reports READY, once the set has settled. */
    size_t seen = 0;
    int64_t changed = 0;
    for (;;) {
        size_t now_n = rl_lab_client_ready_vehicles(cl, out, cap);
        int64_t now = rl_mono_ns();
        if (now_n != seen) {
            seen = now_n;
            changed = now;
        }
        if (seen && now - changed >= EXP_READY_SETTLE_NS)
            break;
        if (now >= deadline)
            break;
        if (*stop_flag)
            return EXP_WAIT_INTERRUPTED;
        nap_ms(100);
    }
    if (!seen) {
        snprintf(why, why_cap, "no vehicle reported READY on %s within %.1f s", RL_LAB_TOPIC_READY,
                 (double)timeout_ns / 1e9);
        return EXP_WAIT_NO_VEHICLE;
    }
    *n = seen < cap ? seen : cap;
    return EXP_WAIT_OK;
}

const char *exp_choose_map(rl_lab_client *cl, const char *given, int64_t announce_wait_ns,
                           char *out, size_t cap)
{
    if (given && given[0]) {
        snprintf(out, cap, "%s", given);
        return "given";
    }
    rl_lab_map_announcement a;
    if (rl_lab_client_wait_map(cl, announce_wait_ns, &a) == RL_OK) {
        snprintf(out, cap, "%s", a.path);
        return "announced on " RL_LAB_TOPIC_MAP;
    }
    const char *lab = getenv("RUNLAB_LAB_MAP");
    if (lab && lab[0]) {
        snprintf(out, cap, "%s", lab);
        return "RUNLAB_LAB_MAP";
    }
    out[0] = '\0';
    return NULL;
}

void exp_loss_sentence(const rl_lab_vehicle_loss *lost, size_t n, int64_t start_mono_ns,
                       int64_t now_mono_ns, char *out, size_t cap)
{
    /* Vehicles whose details read the same (a simulator killed: all at once) share one
     * clause: "vehicles 1, 2, 3 lost ...". */
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n;) {
        char detail[160], next[160], last[64] = "none since START";
        if (lost[i].last_state_mono_ns)
            snprintf(last, sizeof last, "last state %.2f s after START",
                     (double)(lost[i].last_state_mono_ns - start_mono_ns) / 1e9);
        snprintf(detail, sizeof detail, "lost %.2f s after START: no state for %.2f s (%s)",
                 (double)(now_mono_ns - start_mono_ns) / 1e9, (double)lost[i].silent_ns / 1e9,
                 last);
        int ids[256];
        size_t k = 0;
        ids[k++] = lost[i].vehicle;
        size_t j = i + 1;
        for (; j < n && k < 256; j++) {
            char nlast[64] = "none since START";
            if (lost[j].last_state_mono_ns)
                snprintf(nlast, sizeof nlast, "last state %.2f s after START",
                         (double)(lost[j].last_state_mono_ns - start_mono_ns) / 1e9);
            snprintf(next, sizeof next, "lost %.2f s after START: no state for %.2f s (%s)",
                     (double)(now_mono_ns - start_mono_ns) / 1e9,
                     (double)lost[j].silent_ns / 1e9, nlast);
            if (strcmp(next, detail) != 0)
                break;
            ids[k++] = lost[j].vehicle;
        }
        char list[512];
        exp_format_ids(ids, k, list, sizeof list);
        int w = snprintf(out + used, cap - used, "%svehicle%s %s %s", i ? "; " : "",
                         k == 1 ? "" : "s", list, detail);
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
        i = j;
    }
}

void exp_loss_records(json_object *arr, const rl_lab_vehicle_loss *lost, size_t n,
                      int64_t start_mono_ns, int64_t now_mono_ns)
{
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "vehicle", json_object_new_int(lost[i].vehicle));
        json_object_object_add(o, "after_start_s",
                               json_object_new_double((double)(now_mono_ns - start_mono_ns) / 1e9));
        json_object_object_add(o, "last_state_after_start_s",
                               lost[i].last_state_mono_ns
                                   ? json_object_new_double(
                                         (double)(lost[i].last_state_mono_ns - start_mono_ns) / 1e9)
                                   : NULL);
        json_object_object_add(o, "silent_ms",
                               json_object_new_int64(lost[i].silent_ns / 1000000));
        json_object_array_add(arr, o);
    }
}

void exp_repair_run(const char *run_dir, const char *reason)
{
    rl_record_repair_report rep;
    if (rl_record_repair_as(run_dir, RL_RECORD_FAILED, reason, &rep) < 0)
        fprintf(stderr, "runlab: experiment: the run could not be repaired: %s\n",
                rl_error_last());
    else
        fprintf(stderr, "runlab experiment: %s\n", rep.what);
}
