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

/* Vehicles whose last states lie this close together fell silent together (a simulator
 * killed: its vehicles publish in one tick) and share one clause. */
#define TOGETHER_NS 100000000ll

void exp_loss_sentence(const rl_lab_vehicle_loss *lost, size_t n, int64_t start_mono_ns,
                       int64_t now_mono_ns, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    char *done = calloc(n ? n : 1, 1);
    if (!done)
        return;
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        /* This vehicle and every later one silent together with it: the clause says the
         * latest last state among them and the shortest silence, true of each. */
        int ids[256];
        size_t k = 0;
        int64_t last = lost[i].last_state_mono_ns, silent = lost[i].silent_ns;
        for (size_t j = i; j < n && k < 256; j++) {
            int64_t d = lost[j].last_state_mono_ns - lost[i].last_state_mono_ns;
            if (done[j] || (j > i && (d > TOGETHER_NS || d < -TOGETHER_NS ||
                                      !lost[j].last_state_mono_ns != !lost[i].last_state_mono_ns)))
                continue;
            done[j] = 1;
            ids[k++] = lost[j].vehicle;
            if (lost[j].last_state_mono_ns > last)
                last = lost[j].last_state_mono_ns;
            if (lost[j].silent_ns < silent)
                silent = lost[j].silent_ns;
        }
        char list[512], when[64] = "none since START";
        exp_format_ids(ids, k, list, sizeof list);
        if (last)
            snprintf(when, sizeof when, "last state %.2f s after START",
                     (double)(last - start_mono_ns) / 1e9);
        int w = snprintf(out + used, cap - used,
                         "%svehicle%s %s lost %.2f s after START: no state for %.2f s (%s)",
                         used ? "; " : "", k == 1 ? "" : "s", list,
                         (double)(now_mono_ns - start_mono_ns) / 1e9, (double)silent / 1e9, when);
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
    free(done);
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
