/* Pieces of `runlab experiment`'s control flow kept apart from its sequence in cmd_lab.c:
 * which vehicles (the given ids, or those that report READY), which map (given, announced on
 * rt/lab/map, or the lab's configured default), the vehicle watchdog's sentences and records,
 * and the repair of a run whose recorder died. CLI-private. */
#ifndef RUNLAB_CLI_EXPERIMENT_FLOW_H
#define RUNLAB_CLI_EXPERIMENT_FLOW_H

#include "runlab/lab.h"

#include <json-c/json.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* How long the READY set must stay unchanged before an experiment without --vehicles takes
 * it: a simulator's vehicles all report at once, and late joiners get READY transient-local
 * within discovery. */
#define EXP_READY_SETTLE_NS 1000000000ll

typedef enum exp_wait_result {
    EXP_WAIT_OK = 0,
    EXP_WAIT_TIMEOUT,     /* given ids still missing (why says which) */
    EXP_WAIT_NO_VEHICLE,  /* none reported READY at all */
    EXP_WAIT_INTERRUPTED, /* *stop_flag became nonzero */
} exp_wait_result;

/* "1, 2, 3" into `out` (cap bytes; stops before an id that does not fit). */
void exp_format_ids(const int *ids, size_t n, char *out, size_t cap);

/* With `given` ids (n_given > 0): waits up to `timeout_ns` until each reported READY and
 * copies them to `out`. Without: takes the vehicles that report READY within `timeout_ns`,
 * once the set has stayed the same for EXP_READY_SETTLE_NS (or the timeout ends) — up to
 * `cap` ids into `out`, `*n` of them. `why` (cap `why_cap`) says what is missing. Polls
 * `stop_flag` every 100 ms. */
exp_wait_result exp_wait_vehicles(rl_lab_client *cl, const int *given, size_t n_given,
                                  int64_t timeout_ns, volatile sig_atomic_t *stop_flag, int *out,
                                  size_t cap, size_t *n, char *why, size_t why_cap);

/* The run's map: `given` (--map or the spec) when set; else the map announced on rt/lab/map
 * (waiting up to `announce_wait_ns`); else $RUNLAB_LAB_MAP (the lab's configured default);
 * else none. Copies the path to `out` and returns where it came from ("given",
 * "announced on rt/lab/map", "RUNLAB_LAB_MAP"), or NULL for no map. */
const char *exp_choose_map(rl_lab_client *cl, const char *given, int64_t announce_wait_ns,
                           char *out, size_t cap);

/* One sentence naming lost vehicles and when, for the reason and the manifest:
 * "vehicle 2 lost 5.71 s after START: no state for 1.52 s (last state 4.19 s after START)";
 * vehicles whose last states lie within 100 ms of each other share one clause ("vehicles
 * 1, 2 lost ...", with the latest last state and the shortest silence among them), others
 * are joined by "; ". `start_mono_ns`, `now_mono_ns` on rl_mono_ns's clock. */
void exp_loss_sentence(const rl_lab_vehicle_loss *lost, size_t n, int64_t start_mono_ns,
                       int64_t now_mono_ns, char *out, size_t cap);

/* Appends one record per lost vehicle to the JSON array `arr`: vehicle, after_start_s,
 * last_state_after_start_s (null: none since START), silent_ms. */
void exp_loss_records(json_object *arr, const rl_lab_vehicle_loss *lost, size_t n,
                      int64_t start_mono_ns, int64_t now_mono_ns);

/* After the recorder died, repairs the run it was driving (runlab record --repair's logic):
 * bag recovered, manifest FAILED with `reason` word for word and counts from the bag.
 * Prints what was done (or why not) on stderr. */
void exp_repair_run(const char *run_dir, const char *reason);

#endif
