/* runlab/lab.h: the lab over DDS (Cyclone DDS, named the ROS 2 way). The recorder node puts
 * the recorder engine (runlab/record.h) on the network: prepare/begin/finish services, a
 * heartbeat, and recording of discovered topics as raw CDR with omgidl schemas made from the
 * writers' type information. The client drives a recorder (the experiment's control flow).
 * The middleware is configured as Cyclone always is, through CYCLONEDDS_URI. docs/lab.md
 * lists topics, types and their ROS 2 equivalents. */
#ifndef RUNLAB_LAB_H
#define RUNLAB_LAB_H

#include "runlab/export.h"

#include "runlab/record.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ROS 2 names --------------------------------------------------------------------- */

/* DDS names of the lab's topics and services (ROS 2 names: "/lab/system_trigger", ...). */
#define RL_LAB_TOPIC_TRIGGER "rt/lab/system_trigger"
#define RL_LAB_TOPIC_STOP_REQUEST "rt/lab/stop_request"
#define RL_LAB_TOPIC_READY "rt/lab/ready_status"
#define RL_LAB_TOPIC_MAP "rt/lab/map"
#define RL_LAB_TOPIC_PARAMETERS "rt/lab/parameters"
#define RL_LAB_TOPIC_CLOCK "rt/clock"
#define RL_LAB_TOPIC_RECORDING_STATE "rt/lab/evaluation/recording_state"
#define RL_LAB_TOPIC_CONTROL_HEARTBEAT "rt/lab/evaluation/control_heartbeat"
#define RL_LAB_SERVICE_PREPARE "/lab/evaluation/prepare_recording"
#define RL_LAB_SERVICE_BEGIN "/lab/evaluation/begin_recording"
#define RL_LAB_SERVICE_FINISH "/lab/evaluation/finish_recording"
/* A finish reason that starts with exactly this prefix ends the run FAILED, with the rest
 * of the reason as the manifest's (docs/lab.md, "finish"); any other reason ends it
 * INTERRUPTED, "" COMPLETE. */
#define RL_LAB_FINISH_FAILED_PREFIX "FAILED: "

/* ROS 2 topic "/x/y" -> DDS topic "rt/x/y" (the name must start with '/').
 * RL_EINVAL for a name without a leading '/', RL_ERANGE when `cap` is too small. */
RL_API int rl_lab_ros_topic(const char *ros_name, char *out, size_t cap);

/* ROS 2 type "pkg/msg/T" (or "pkg/srv/S_Request") -> "pkg::msg::dds_::T_". RL_EINVAL when the
 * name does not have three '/'-separated parts, RL_ERANGE when `cap` is too small. */
RL_API int rl_lab_ros_type(const char *ros_type, char *out, size_t cap);

/* ROS 2 service "/s" -> request topic "rq/sRequest" and reply topic "rr/sReply" (each out
 * buffer `cap` bytes). Errors as rl_lab_ros_topic. */
RL_API int rl_lab_ros_service(const char *ros_service, char *request_topic, char *reply_topic,
                       size_t cap);

/* 1 when DDS topic name `topic` matches `pattern`, where '*' stands for any run of bytes
 * (also '/'), else 0. Thread-safe. */
RL_API int rl_lab_topic_match(const char *pattern, const char *topic);

/* DDS topic names of a vehicle's topics: "rt/vehicle/<id>/<what>" with `what` one of
 * "state", "observation", "command_trajectory", "command_path_tracking",
 * "command_speed_curvature", "command_direct". RL_ERANGE when `cap` is too small. */
RL_API int rl_lab_vehicle_topic(int vehicle_id, const char *what, char *out, size_t cap);

/* ---- Schemas from type information -------------------------------------------------- */

/* Writes a self-contained OMG IDL text (no preprocessor lines; dependencies first, each in
 * its modules) for `type_name` ("mod::sub::T") from an XCDR2-serialised XTypes TypeMapping
 * (`type_mapping`, `len` bytes, as Cyclone DDS carries it in a topic descriptor), with
 * @final/@appendable/@mutable, @key, @optional and @external as the type objects say.
 * Struct inheritance is flattened (the base's members first). `*out` is malloc'd; free it.
 * Errors: RL_EPARSE (bytes that are no TypeMapping), RL_ENOENT (`type_name` or a dependency
 * missing in the mapping), RL_EUNSUPPORTED (maps, bitsets, bitmasks, annotations, wide
 * strings, recursive types: the message names the type), RL_ENOMEM. Thread-safe. */
RL_API int rl_lab_schema_from_type_mapping(const void *type_mapping, size_t len, const char *type_name,
                                    char **out);

/* ---- Recorder node ------------------------------------------------------------------- */

/* A schema for a type whose writers send no type information (ROS 2's rmw_cyclonedds,
 * idlc -t): recorded with this omgidl text. */
typedef struct rl_lab_schema {
    const char *type_name; /* DDS type name, e.g. "std_msgs::msg::dds_::String_" */
    const char *idl;       /* omgidl text defining it */
} rl_lab_schema;

typedef struct rl_lab_recorder_options {
    int domain;                 /* DDS domain id 0..232, also the engine's lab domain */
    const char *home;           /* engine option (NULL: $RUNLAB_HOME or ~/runlab) */
    const char *lock_dir;       /* engine option (NULL: <home>/locks) */
    const char *const *patterns; /* further DDS topic patterns to record ('*' wildcards) */
    size_t pattern_count;
    const rl_lab_schema *schemas; /* schemas for writers without type information */
    size_t schema_count;
    int64_t heartbeat_interval_ns; /* default 250 ms */
    int64_t peer_wait_ns;       /* how long to listen for another recorder's heartbeat on the
                                   domain before starting; default 1.5 s */
    int64_t control_timeout_ns; /* a run whose control flow has published a heartbeat naming
                                   it (rt/lab/evaluation/control_heartbeat) ends INTERRUPTED
                                   ("control flow lost") once that heartbeat is silent for
                                   longer than this; default 1.5 s; 0: never; else 0.5 s..1 h.
                                   A control flow that never published one is never timed
                                   out. */
    int control_fd;             /* > 0: a descriptor (the read end of a pipe whose write end
                                   the process that started the node holds) that reaches end
                                   of file when that process ends, however it ends: the node
                                   then ends a run still ARMED or RECORDING INTERRUPTED
                                   ("control flow lost") and rl_lab_recorder_control_closed
                                   says so. The node never closes it. 0 or negative: none
                                   (descriptor 0 cannot be one). Default none. */
    const rl_record_options *engine; /* further engine options (NULL: defaults); home,
                                        lock_dir, lab_domain, heartbeat are set from above */
} rl_lab_recorder_options;

/* Defaults: domain 0, no patterns or schemas, no control descriptor, the intervals above.
 * Thread-safe. */
RL_API void rl_lab_recorder_options_default(rl_lab_recorder_options *opts);

typedef struct rl_lab_recorder rl_lab_recorder;

/* Starts a recorder node: takes the engine's (host, domain) lock, listens `peer_wait_ns` for
 * another recorder's heartbeat on the domain, then serves the three services, publishes
 * the heartbeat and records every topic that matches: the lab's topics (everything under
 * rt/lab/, rt/clock, rt/diagnostics, rt/tf), the prepared vehicles' topics (everything under
 * rt/vehicle/<id>/) and the configured patterns. Its threads (and Cyclone's) run until rl_lab_recorder_free.
 * A node records any number of runs, one at a time: a prepare after a run ended (COMPLETE,
 * INTERRUPTED, FAILED) replaces the engine and subscribes afresh (new readers, so
 * transient-local samples come again; the last run's vehicles are dropped), letting the
 * (host, domain) lock go and taking it again in between.
 * Errors: RL_EBUSY (another recorder holds the host lock or answers on the domain; the
 * message names its host and pid), RL_EINVAL (options), RL_EIO (DDS could not start: the
 * message has Cyclone's reason), RL_ENOMEM. */
RL_API int rl_lab_recorder_new(rl_lab_recorder **out, const rl_lab_recorder_options *opts);

/* The engine's status (strings as rl_record_status says, but valid only until the next run is
 * prepared, which replaces the engine, or free). Thread-safe. */
RL_API void rl_lab_recorder_status(rl_lab_recorder *n, rl_record_status *out);

/* The state of the current (or last) run, and its run directory copied into `run_dir`
 * (cap bytes, NUL-terminated, truncated to fit; "" before the first prepare). Unlike
 * rl_lab_recorder_status, nothing returned depends on the node afterwards. Thread-safe. */
RL_API rl_record_state rl_lab_recorder_run(rl_lab_recorder *n, char *run_dir, size_t cap);

/* True once the node's control descriptor (options.control_fd) has reached end of file and
 * the run it was driving, if any, has been ended INTERRUPTED ("control flow lost") with its
 * bag closed and manifest written. The node goes on serving; `runlab recorder` exits.
 * Thread-safe. */
RL_API bool rl_lab_recorder_control_closed(rl_lab_recorder *n);

/* Number of DDS topics being recorded (readers made). Thread-safe. */
RL_API size_t rl_lab_recorder_topic_count(rl_lab_recorder *n);

/* Transient-local samples (READY, the map announcement, ...) received before prepare and
 * held for the bag: the latest per writer and instance, written with their own receive
 * times once prepare has opened it. 0 after a prepare. Thread-safe. */
RL_API size_t rl_lab_recorder_held_count(rl_lab_recorder *n);

/* Stops serving, cancels a recording still running (INTERRUPTED, reason "recorder
 * stopped"), waits for the bag to be closed, leaves the domain and frees. NULL is ignored.
 * Not concurrently with other calls on `n`. */
RL_API void rl_lab_recorder_free(rl_lab_recorder *n);

/* ---- Client (the control flow's side) ------------------------------------------------ */

typedef struct rl_lab_client rl_lab_client;

/* Joins `domain` with the service clients, the heartbeat reader, the trigger writer and the
 * ready-status reader. Errors: RL_EINVAL, RL_EIO (DDS), RL_ENOMEM. */
RL_API int rl_lab_client_new(rl_lab_client **out, int domain);

/* Stops the control heartbeat, leaves the domain and frees. NULL is ignored. */
RL_API void rl_lab_client_free(rl_lab_client *c);

/* A service's answer. */
typedef struct rl_lab_reply {
    int ok;                 /* 1 when the recorder did it */
    char message[512];      /* why not ("" when ok) */
    rl_record_state state;  /* the recorder's state after the call */
    char run_id[80];
    char run_dir[1024];
} rl_lab_reply;

/* Calls prepare / begin / finish and waits for the reply, up to `timeout_ns` in all
 * (including waiting for the service to be discovered). finish without a reason means the
 * run ran its course: COMPLETE when START was marked, with STOP from `stop_stamp_ns`, else
 * the STOP trigger, else (none published) the time the recorder handled finish, which the
 * manifest's reason then says; INTERRUPTED ("finished without START") when START never
 * was. With a reason (e.g. "SIGINT") it ends INTERRUPTED with that reason; with one that
 * starts with RL_LAB_FINISH_FAILED_PREFIX ("FAILED: vehicle 2 lost ...") it ends FAILED
 * with the rest as the reason (the bag still closed properly, its counts final).
 * RL_OK with `out` filled, also when
 * the recorder refused (out->ok == 0); RL_ETIMEOUT when no answer came; RL_EIO (DDS).
 * `stop_stamp_ns` is STOP's stamp or 0; `reason` may be NULL. One call at a time per client. */
RL_API int rl_lab_client_prepare(rl_lab_client *c, const rl_record_run *run, int64_t timeout_ns,
                          rl_lab_reply *out);
RL_API int rl_lab_client_begin(rl_lab_client *c, const char *run_id, int64_t timeout_ns,
                        rl_lab_reply *out);
RL_API int rl_lab_client_finish(rl_lab_client *c, const char *run_id, int64_t stop_stamp_ns,
                         const char *reason, int64_t timeout_ns, rl_lab_reply *out);

/* How often rl_lab_client_drive publishes the control heartbeat. */
#define RL_LAB_CONTROL_HEARTBEAT_PERIOD_NS (250 * 1000000ll)

/* Publishes the control flow's heartbeat (rt/lab/evaluation/control_heartbeat: `source_id`,
 * this host and pid, `run_id`) at once and then every RL_LAB_CONTROL_HEARTBEAT_PERIOD_NS from
 * a thread of the client, so that the recorder ends the run INTERRUPTED ("control flow
 * lost") if this process dies or hangs up without finishing it. Call it with the run id of
 * prepare's reply; a later call names another run; `run_id` NULL or "" stops publishing
 * (call it after finish). It returns once the first heartbeat naming the run is
 * acknowledged by the readers matched (waiting up to 1 s for a recorder to match the
 * heartbeat's writer, made at the first call, and up to 1 s for the acknowledgement: an
 * older recorder does not read it). `source_id` NULL: "runlab client". Strings are copied.
 * One call at a time per client, as the service calls.
 * RL_EINVAL (run id or source longer than 79 bytes), RL_EIO (DDS), RL_ERR (no thread). */
RL_API int rl_lab_client_drive(rl_lab_client *c, const char *run_id, const char *source_id);

/* System trigger kinds, as on the wire. */
typedef enum rl_lab_trigger { RL_LAB_START = 1, RL_LAB_STOP = 2 } rl_lab_trigger;

/* Publishes START or STOP with `stamp_ns` on rt/lab/system_trigger (reliable,
 * transient-local, keep-last 1, so a late joiner still sees the last one). RL_EIO. */
RL_API int rl_lab_client_trigger(rl_lab_client *c, rl_lab_trigger kind, int64_t stamp_ns);

/* The last recording-state heartbeat seen. */
typedef struct rl_lab_heartbeat {
    rl_record_state state;
    char host[256];
    int pid;
    int domain;
    char run_id[80];
    char run_dir[1024];
    char reason[512];
    int64_t stamp_ns;
    uint64_t received, inside, outside, written, dropped, bytes, queued_messages, queued_bytes;
    uint32_t topics;
    int64_t seen_mono_ns;   /* rl_mono_ns() when it arrived */
    uint64_t count;         /* heartbeats seen by this client so far */
} rl_lab_heartbeat;

/* Waits up to `timeout_ns` for a heartbeat newer than the `count`-th (0: any) and copies the
 * newest into `out`. RL_OK, RL_ETIMEOUT (out untouched). Thread-safe. */
RL_API int rl_lab_client_wait_heartbeat(rl_lab_client *c, uint64_t count, int64_t timeout_ns,
                                 rl_lab_heartbeat *out);

/* Whether the recorder is lost to the control flow: no heartbeat for longer than
 * `timeout_ns` (1.5 s for `runlab experiment`) at `now_mono_ns` (rl_mono_ns()). Silence of
 * exactly the timeout is not yet a loss. Pure; thread-safe. */
RL_API bool rl_lab_heartbeat_lost(const rl_lab_heartbeat *hb, int64_t now_mono_ns, int64_t timeout_ns);

/* Waits up to `timeout_ns` until each of the `n` vehicle ids has published a ready status.
 * RL_OK, or RL_ETIMEOUT with the message listing the vehicles still missing. */
RL_API int rl_lab_client_wait_ready(rl_lab_client *c, const int *vehicles, size_t n,
                             int64_t timeout_ns);

/* The vehicle ids that have published a ready status since the client joined, ascending:
 * up to `cap` of them into `out`; returns how many there are (may exceed `cap`).
 * Thread-safe. */
RL_API size_t rl_lab_client_ready_vehicles(rl_lab_client *c, int *out, size_t cap);

/* A map announcement (rt/lab/map, transient-local: what the simulator or the lab's map
 * server drives on). */
typedef struct rl_lab_map_announcement {
    char path[1024];   /* the map file, absolute on the announcer's host */
    char sha256[65];   /* hex SHA-256 of its bytes */
    int64_t stamp_ns;
} rl_lab_map_announcement;

/* Waits up to `timeout_ns` for a map announcement and copies the newest into `out`.
 * RL_OK, RL_ETIMEOUT (out untouched). Thread-safe. */
RL_API int rl_lab_client_wait_map(rl_lab_client *c, int64_t timeout_ns, rl_lab_map_announcement *out);

/* ---- Vehicle watch (the control flow's watchdog) -------------------------------------- */

/* Watches each vehicle's rt/vehicle/<id>/state with a best-effort reader of its own
 * participant (it matches reliable and best-effort writers) and notes when each vehicle last
 * published. The experiment's control flow uses it to stop a run whose vehicle fell silent. */
typedef struct rl_lab_vehicle_watch rl_lab_vehicle_watch;

/* Joins `domain` and watches the `n` (<= 256) vehicle ids 0..255. Not armed yet: nothing is
 * lost before rl_lab_vehicle_watch_arm. Errors: RL_EINVAL, RL_EIO (DDS), RL_ENOMEM. */
RL_API int rl_lab_vehicle_watch_new(rl_lab_vehicle_watch **out, int domain, const int *vehicles,
                             size_t n);

/* Leaves the domain and frees. NULL is ignored. Not concurrently with other calls on `w`. */
RL_API void rl_lab_vehicle_watch_free(rl_lab_vehicle_watch *w);

/* Starts the clock (rl_mono_ns(), normally at START): from now on a vehicle that publishes
 * no state for longer than the timeout is lost; a vehicle silent since before counts from
 * here. Thread-safe. */
RL_API void rl_lab_vehicle_watch_arm(rl_lab_vehicle_watch *w, int64_t now_mono_ns);

/* A vehicle found lost. */
typedef struct rl_lab_vehicle_loss {
    int vehicle;
    int64_t last_state_mono_ns; /* its last state (rl_mono_ns clock); 0: none since armed */
    int64_t silent_ns;          /* silence when found: since the last state, or since armed */
} rl_lab_vehicle_loss;

/* Vehicles newly lost at `now_mono_ns` (silent for longer than `timeout_ns` since their last
 * state or since armed, whichever is later): up to `cap` into `out`, each vehicle reported
 * once in the watch's life; returns how many. None before arming. Thread-safe. */
RL_API size_t rl_lab_vehicle_watch_check(rl_lab_vehicle_watch *w, int64_t now_mono_ns,
                                  int64_t timeout_ns, rl_lab_vehicle_loss *out, size_t cap);

/* State messages received from `vehicle` so far (0 for a vehicle not watched). Thread-safe. */
RL_API uint64_t rl_lab_vehicle_watch_states(rl_lab_vehicle_watch *w, int vehicle);

/* Whether a vehicle last heard at `last_seen_mono_ns` (0: never) is lost at `now_mono_ns`
 * for a watch armed at `armed_mono_ns`: silent for longer than `timeout_ns` since the later
 * of the two. Silence of exactly the timeout is not yet a loss. Pure; thread-safe. */
RL_API bool rl_lab_vehicle_silent(int64_t last_seen_mono_ns, int64_t armed_mono_ns,
                           int64_t now_mono_ns, int64_t timeout_ns);

/* ---- Simulator ------------------------------------------------------------------------ */

/* The lab's 1:18 car (m): the pose is the centre of this rectangle. */
#define RL_LAB_CAR_LENGTH 0.22
#define RL_LAB_CAR_WIDTH 0.107
#define RL_LAB_CAR_WHEELBASE 0.15
#define RL_LAB_CAR_FRONT_OVERHANG 0.04
#define RL_LAB_CAR_REAR_OVERHANG 0.03

/* Faults the simulator injects, each on one vehicle from T0 (s after START) to T1 (or the
 * end). docs/lab.md gives each one's exact effect: collision (an intercept course onto the
 * vehicle it reaches soonest), leave_lane (commanded 0.25 m to the right), leave_area
 * (commanded out over the nearest corner of the lab area), speeding (commanded 3.5 times the speed), stall_topic (no
 * state messages), late_observation (observations 0.5 s old), drift (the vehicle drifts
 * 0.25 m to the right of its commanded trajectory). */
typedef enum rl_lab_fault_kind {
    RL_LAB_FAULT_COLLISION = 0,
    RL_LAB_FAULT_LEAVE_LANE,
    RL_LAB_FAULT_LEAVE_AREA,
    RL_LAB_FAULT_SPEEDING,
    RL_LAB_FAULT_STALL_TOPIC,
    RL_LAB_FAULT_LATE_OBSERVATION,
    RL_LAB_FAULT_DRIFT
} rl_lab_fault_kind;

typedef struct rl_lab_fault {
    rl_lab_fault_kind kind;
    int vehicle;   /* 1-based */
    double t0, t1; /* seconds after START; t1 < 0: until the end */
} rl_lab_fault;

/* Parses "KIND:VEHICLE:T0[:T1]" (kinds: collision, leave_lane, leave_area, speeding,
 * stall_topic, late_observation, drift). RL_EINVAL with the part named. Thread-safe. */
RL_API int rl_lab_fault_parse(const char *text, rl_lab_fault *out);

/* "collision", ... Never NULL. */
RL_API const char *rl_lab_fault_name(rl_lab_fault_kind kind);

typedef struct rl_lab_sim_options {
    int domain;              /* DDS domain (DDS mode) */
    int vehicles;            /* 1..64, numbered from 1; default 4 */
    double duration;         /* s after START; <= 0: until STOP (DDS) / 10 s (offline) */
    uint64_t seed;           /* starting places and sensor noise; default 1 */
    const rl_lab_fault *faults;
    size_t fault_count;
    const char *map_path;    /* Lanelet2, CommonRoad or runtime map: the vehicles follow loops
                                along its lanelet centre lines (offline: it goes into the run
                                directory). NULL: waypoints are needed. */
    const double *waypoints; /* closed path as x,y pairs (m) driven instead of the map's
                                routes; NULL: the map's */
    size_t waypoint_count;   /* pairs, >= 3 */
    double speed;            /* m/s, default 1.0 (0 < speed <= 3) */
    double state_rate_hz;    /* default 50 */
    double observation_rate_hz; /* the positioning system's rate, default 20 */
    const char *run_id;      /* offline: NULL = generated */
} rl_lab_sim_options;

RL_API void rl_lab_sim_options_default(rl_lab_sim_options *opts);

/* Runs the vehicles on `opts->domain`: announces the map (rt/lab/map, transient-local: the
 * absolute path and SHA-256 of `map_path`, when there is one), each vehicle publishes READY (rt/lab/ready_status), stands
 * until START (rt/lab/system_trigger), then drives its route: the built-in planner publishes
 * rt/vehicle/<id>/command_trajectory every 0.2 s and the vehicle's controller tracks the
 * active one, publishing rt/vehicle/<id>/state at state_rate_hz and
 * rt/vehicle/<id>/observation at observation_rate_hz. Commands from other participants on
 * command_trajectory, command_speed_curvature or command_direct override the route while
 * they arrive. Brakes to a stand at STOP; returns after STOP, after `duration` past START,
 * or when `should_stop(user)` returns nonzero (polled every step). RL_OK, RL_EINVAL
 * (options), map errors, RL_EIO (DDS). */
RL_API int rl_lab_sim_run(const rl_lab_sim_options *opts, int (*should_stop)(void *user), void *user);

/* The same vehicles without DDS, faster than real time and deterministic for a seed: writes
 * a run through the recorder engine into `home` (NULL: $RUNLAB_HOME or ~/runlab), with READY,
 * START at 0 s and STOP at `duration` on rt/lab/system_trigger, commands, states and
 * observations as raw CDR with omgidl schemas, and the map (runtime map and original). The
 * run directory goes to `run_dir` (`cap` bytes). Errors as rl_recorder_prepare, RL_EINVAL,
 * map errors. */
RL_API int rl_lab_sim_offline(const rl_lab_sim_options *opts, const char *home, char *run_dir,
                       size_t cap);

#ifdef __cplusplus
}
#endif
#endif
