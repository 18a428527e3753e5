/* runlab/record.h: the experiment recorder engine. A recorder reserves a new run
 * directory, takes messages from any thread into bounded queues without ever blocking,
 * and writes them from its own thread into an MCAP file, classifying each message as
 * inside or outside the START..STOP window; it ends COMPLETE, INTERRUPTED or FAILED and
 * never loses data silently. docs/record.md describes states, layout and manifest. */
#ifndef RUNLAB_RECORD_H
#define RUNLAB_RECORD_H

#include "runlab/export.h"
#include "runlab/mcap.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rl_map_read_options; /* runlab/map.h */

/* Recorder states. IDLE -> ARMED (prepare) -> RECORDING (begin) -> COMPLETE (finish
 * after STOP) / INTERRUPTED (cancel, or finish without STOP) / FAILED (writer error,
 * queue overflow, free space below the minimum, writer stalled, or rl_recorder_fail). The last three are
 * terminal: a recorder records one run. */
typedef enum rl_record_state {
    RL_RECORD_IDLE = 0,
    RL_RECORD_ARMED = 1,
    RL_RECORD_RECORDING = 2,
    RL_RECORD_COMPLETE = 3,
    RL_RECORD_INTERRUPTED = 4,
    RL_RECORD_FAILED = 5
} rl_record_state;

/* "IDLE", "ARMED", ... Never NULL; thread-safe. */
RL_API const char *rl_record_state_name(rl_record_state state);

/* The bag's compression: the MCAP writer's kinds (runlab/mcap.h), under the recorder's
 * names. */
typedef rl_mcap_compression rl_record_compression;
#define RL_RECORD_COMPRESSION_NONE RL_MCAP_COMPRESSION_NONE
#define RL_RECORD_COMPRESSION_ZSTD RL_MCAP_COMPRESSION_ZSTD
#define RL_RECORD_COMPRESSION_LZ4 RL_MCAP_COMPRESSION_LZ4

/* "none", "zstd", "lz4". Never NULL. */
RL_API const char *rl_record_compression_name(rl_record_compression c);

/* The compression named `name` ("none", "zstd" or "lz4", as rl_record_compression_name
 * spells them) into *out. RL_EINVAL for any other text (or NULL), with a message that
 * quotes it; *out is then unchanged. Thread-safe. */
RL_API int rl_record_compression_from_name(const char *name, rl_record_compression *out);

/* The levels rl_record_options.compression_level may take with compression `c`: zstd
 * -7..22, lz4 0..12, none 0 (0 is always the writer's default). Into *min and *max;
 * RL_EINVAL for an unknown `c`. Thread-safe. */
RL_API int rl_record_compression_level_range(rl_record_compression c, int *min, int *max);

/* The one check of a compression level: RL_OK when `level` is in `c`'s range, else
 * RL_EINVAL with a message saying the level and the range ("20 is not 0..12 for lz4"),
 * which callers prefix with where the level came from. Thread-safe. */
RL_API int rl_record_compression_level_check(rl_record_compression c, long long level);

/* What the heartbeat and rl_recorder_status report. Strings are owned by the recorder
 * and stay valid until rl_recorder_free (`run_dir`, `run_id` are "" until a prepare has
 * succeeded, also while one is under way in another thread, and never change after,
 * `reason` is "" until a terminal state). */
typedef struct rl_record_status {
    rl_record_state state;
    const char *host;
    const char *run_id;
    const char *run_dir;
    const char *reason;
    int64_t stamp_ns;          /* wall clock when the status was taken */
    uint64_t received;         /* messages handed to rl_recorder_push and accepted or dropped */
    uint64_t inside;           /* classified inside START..STOP */
    uint64_t outside;          /* classified outside (written or not, see keep_outside) */
    uint64_t written;          /* messages written to the bag; after a write error, only
                                  those that reached the file (the rest are dropped). With
                                  keep_outside, large messages are written before the
                                  write delay classifies them: while running, written may
                                  exceed inside + outside; at the end they agree */
    uint64_t dropped;          /* accepted messages that will never be in the bag, and
                                  after a failure the messages refused until the run's
                                  finish (or cancel, or free): not recorded either */
    uint64_t bytes;            /* payload bytes received */
    uint64_t queued_messages;  /* accepted and not yet written (queue, and the write
                                  delay when keep_outside is 0) */
    uint64_t queued_bytes;
    uint64_t pauses;           /* pauses of the whole process seen (SIGSTOP, a suspended
                                  machine): not writer stalls, and never a failure */
    int closing;               /* a finish or cancel is waiting for the writer */
    char manifest_error[256];  /* "" or why manifest.json could not be written */
} rl_record_status;

/* Called from the recorder's monitor thread every heartbeat interval (and once when a
 * terminal state is reached). Must not call rl_recorder_free; other rl_recorder_* calls
 * are allowed. `status` is only valid during the call. */
typedef void (*rl_record_heartbeat_fn)(const rl_record_status *status, void *user);

/* Settings; start from rl_record_options_default. All are written to
 * config/recorder.json. Strings are copied by rl_recorder_new. */
typedef struct rl_record_options {
    const char *home;               /* NULL: $RUNLAB_HOME, else ~/runlab */
    const char *lock_dir;           /* NULL (use this): the host-wide lock directory,
                                       /run/lock or /tmp, whatever the home; another
                                       directory only isolates tests or sandboxes */
    int lab_domain;                 /* the lab's domain id (0..232); one recorder each */
    uint64_t max_queued_messages;   /* default 1 000 000 */
    uint64_t max_queued_bytes;      /* payload bytes; default 512 MiB */
    int64_t write_delay_ns;         /* default 100 ms; a message is held at least this long
                                       (counted from when the writer takes it off the queue:
                                       within 5 ms of the push, 2 ms while it is busy, later
                                       only while a write is held up by the disk) before it
                                       is decided */
    int64_t flush_interval_ns;      /* default and maximum 1 s */
    int64_t stall_limit_ns;         /* writer making no progress this long: FAILED; 2 s.
                                       Counted in time the process ran: a pause of the
                                       whole process (SIGSTOP, suspend) is no stall */
    int64_t heartbeat_interval_ns;  /* default 250 ms */
    uint64_t minimum_free_bytes;    /* default 256 MiB; checked at prepare and every second */
    int keep_outside;               /* 1 (default): also write messages outside the window */
    rl_record_compression compression; /* default zstd */
    int compression_level;          /* 0 (default): the MCAP writer's (zstd 1, lz4 0);
                                       zstd -7..22, lz4 0..12, none 0
                                       (rl_record_compression_level_range) */
    uint64_t chunk_size;            /* MCAP chunk size, default 1 MiB */
    const char *bag_profile;        /* MCAP header profile, at most 63 bytes. NULL (default):
                                       decided at prepare, "ros2" when at least one topic is
                                       registered by then and every registered topic has a
                                       ros2msg or ros2idl schema and cdr messages, else ""
                                       (omgidl schemas, as the lab's, need ""). Once the bag
                                       says "ros2", a topic that does not fit is refused */
    rl_record_heartbeat_fn heartbeat; /* optional */
    void *heartbeat_user;
} rl_record_options;

/* Fills `opts` with the defaults above (home and lock_dir NULL, domain 0, no
 * heartbeat). Never fails; thread-safe. */
RL_API void rl_record_options_default(rl_record_options *opts);

/* What prepare is told about the run. Everything is copied. */
typedef struct rl_record_run {
    const char *run_id;             /* NULL: generated ("run-<time>-<pid>", or with "-2",
                                       "-3", ... when a run of this process took it in
                                       the same second); a given id is never changed */
    const int *vehicles;            /* vehicle ids, `vehicle_count` of them */
    size_t vehicle_count;
    const char *planner;            /* optional */
    const char *map_path;           /* optional: a runtime map, stored as
                                       map/runtime_map.bin, or a Lanelet2 OSM / CommonRoad
                                       XML file (told apart by content), compiled into
                                       map/runtime_map.bin and stored beside it under its
                                       own name */
    const char *original_map_path;  /* optional, only with a runtime map_path: its
                                       original, stored too; must be the file the runtime
                                       map was compiled from (same SHA-256) */
    const struct rl_map_read_options *map_options; /* reading an original (projection,
                                       origin); NULL: runlab/map.h's defaults */
    const char *map_frame;          /* frame of the map; NULL: "map" */
    const char *nodes_json;         /* JSON text: parameter snapshots; NULL = {} */
    const char *scenario_json;      /* JSON object text: what the run was set up to do
                                       (simulator faults, seed, vehicles, routes; the
                                       control flow's options), the manifest's
                                       "scenario"; NULL: null */
} rl_record_run;

typedef struct rl_recorder rl_recorder;

/* Creates an IDLE recorder and takes the lock of (host, lab domain), whatever the home:
 * a lock file "/run/lock/runlab-recorder_<host>_domain<N>.lock" (/tmp where /run/lock is
 * not world-writable), mode 0666 so root and every user meet on it, holding the owner's
 * pid. The lock is an flock(2), so a crashed owner never leaves a stale lock behind.
 * Errors: RL_EINVAL (bad options, message names the field), RL_EBUSY (another recorder
 * holds the lock; the message names its pid), RL_EIO, RL_ENOMEM. */
RL_API int rl_recorder_new(rl_recorder **out, const rl_record_options *opts);

/* Stops the threads (a recording still running is cancelled first, ending
 * INTERRUPTED), releases the lock and frees. Waits for the writer thread, so a writer
 * stalled in the kernel delays it. NULL is ignored. Not concurrently with other calls. */
RL_API void rl_recorder_free(rl_recorder *r);

/* IDLE -> ARMED. Checks free space, reserves the run id (a run id is used by one run
 * only, ever: "experiments/.run-ids/<id>" points to its directory), creates
 * "<home>/experiments/<UTC compact time>_<run id>/" with bag/, map/, config/,
 * evaluations/, stores the map (an original is read and compiled before anything is
 * made, so a bad map reserves nothing; manifest "map": both SHA-256, format, projection,
 * origin, frame; docs/record.md), writes
 * config/recorder.json, config/nodes.json and manifest.json, opens the bag and starts
 * the writer. On an error the state stays IDLE and a half-made directory is removed
 * (the run id stays reserved); only if the first manifest or the writer thread cannot be
 * made after the bag was opened, the run is FAILED. Errors: RL_ESTATE (not IDLE),
 * RL_EINVAL (hostile run id, bad nodes JSON, original not the runtime map's source),
 * RL_EEXIST (run id already used, or the directory exists), RL_ENOSPC, RL_ENOENT (map),
 * RL_EPARSE / RL_ECRC / RL_EUNSUPPORTED (a map that does not read: file, line or byte
 * offset in the message), RL_EIO. */
RL_API int rl_recorder_prepare(rl_recorder *r, const rl_record_run *run);

/* Replaces the run's parameter snapshots (config/nodes.json, rewritten atomically) and its
 * scenario (the manifest's "scenario", rewritten with it) after prepare: snapshots from
 * nodes that answered later. Either may be NULL (left as it is). ARMED or RECORDING, else
 * RL_ESTATE; RL_EINVAL for text that is no JSON object; RL_EIO, RL_ENOMEM. Thread-safe. */
RL_API int rl_recorder_set_nodes(rl_recorder *r, const char *nodes_json, const char *scenario_json);

/* ARMED -> RECORDING (the acknowledgement after which START is published); rewrites the
 * manifest so that it says so even after a crash. RL_ESTATE otherwise.
 * All transitions (prepare, begin, mark_*, finish, cancel) are thread-safe: they are
 * serialised inside, and one that loses a race is refused like any illegal one. */
RL_API int rl_recorder_begin(rl_recorder *r);

/* Marks the START / STOP stamps (ns since the epoch, as message stamps; the manifest is
 * rewritten with them by the recorder's disk thread, never by the caller). May be called
 * after messages stamped later have been pushed, within the write delay. START only in
 * RECORDING and once; STOP only after START, once, and not before START's stamp.
 * Refusals (RL_ESTATE, RL_EINVAL) change nothing. Thread-safe. */
RL_API int rl_recorder_mark_start(rl_recorder *r, int64_t stamp_ns);
RL_API int rl_recorder_mark_stop(rl_recorder *r, int64_t stamp_ns);

/* RECORDING -> COMPLETE when STOP was marked, else INTERRUPTED (`reason`, or "finished
 * without STOP"). Writes every queued message, closes the bag and rewrites the
 * manifest. RL_ESTATE in other states (a FAILED run says why). On a writer error during
 * the drain the run ends FAILED and the error is returned.
 * A FAILED run goes on counting the messages pushed to it (received and dropped, per
 * topic) so that its manifest says how much was not recorded; finish (or cancel) ends
 * that count and has the manifest rewritten with it (by the recorder's disk thread, so
 * the call never waits for the disk), and still returns RL_ESTATE saying why the run
 * failed. rl_recorder_free ends it too. */
RL_API int rl_recorder_finish(rl_recorder *r, const char *reason);

/* ARMED or RECORDING -> INTERRUPTED with `reason` (e.g. "SIGINT"). Queued messages are
 * still written and the bag is closed properly. RL_ESTATE in other states (on a FAILED run
 * it ends the count of messages refused after the failure, as finish does). */
RL_API int rl_recorder_cancel(rl_recorder *r, const char *reason);

/* ARMED or RECORDING -> FAILED with `reason` (copied; NULL or "" reads "failed"): for a
 * failure the caller saw, such as a vehicle lost mid-run. Unlike a failure of the recorder
 * itself, nothing is lost: queued messages are still written, the bag is closed with its
 * footer, the counts are final when it returns (none counted after it) and the manifest
 * says FAILED with `reason`. RL_ESTATE in other states, as cancel (on a run that FAILED
 * by itself it ends the late count and keeps that run's reason); RL_EIO when the writer
 * failed during the drain (the run is then FAILED with the writer's reason). Thread-safe;
 * one end call (finish, cancel or fail) wins, the others get RL_ESTATE. */
RL_API int rl_recorder_fail(rl_recorder *r, const char *reason);

/* Registers a topic and returns its id through `out_id` (ids are dense, from 0). The same
 * topic name again returns the existing id when schema and encoding are equal,
 * RL_EEXIST otherwise. `schema_name` may be "" (no schema); `schema_data` is copied.
 * Allowed in IDLE, ARMED and RECORDING. Thread-safe. At most 4096 topics (RL_ERANGE).
 * RL_EINVAL when the bag's profile is "ros2" (given, or decided at prepare) and the topic
 * has no ros2msg / ros2idl schema or no cdr message encoding. */
RL_API int rl_recorder_add_topic(rl_recorder *r, const char *topic, const char *schema_name,
                          const char *schema_encoding, const void *schema_data,
                          size_t schema_len, const char *message_encoding, uint16_t *out_id);

/* Describes how a topic's messages are received, for the manifest: `qos_json` is a JSON
 * object (at most 1024 bytes of text) that the manifest's entry of the topic carries as
 * "qos". The recorder checks that it is a JSON object and does not interpret it: it is the
 * producer's vocabulary (the lab's recorder node states its DDS reader's reliability,
 * durability and history there, docs/lab.md). NULL removes it; a later call replaces it.
 * Allowed in every state; a run already ended has its manifest rewritten (by the disk
 * thread) when the description changed. Thread-safe. RL_ENOENT (unknown topic id),
 * RL_EINVAL (not a JSON object, or too long: the message says which), RL_ENOMEM. */
RL_API int rl_recorder_set_topic_qos(rl_recorder *r, uint16_t topic_id, const char *qos_json);

/* Something the recorder was asked to record that yielded nothing (or not everything):
 * `name` (a topic or a pattern of topics) and `reason`, both at most 1024 bytes. */
typedef struct rl_record_unmatched {
    const char *name;
    const char *reason;
} rl_record_unmatched;

/* Replaces the run's list of what it was asked to record and did not (the manifest's
 * "unmatched": entries of name and reason, in this order). Everything is copied; at most
 * 1024 entries. The next manifest carries the list; a run already ended has its manifest
 * rewritten (by the disk thread) when the list changed. Allowed in every state.
 * Thread-safe. RL_EINVAL (too many entries, a NULL or too long string), RL_ENOMEM. */
RL_API int rl_recorder_set_unmatched(rl_recorder *r, const rl_record_unmatched *items, size_t count);

/* Hands one message to the recorder: copied into the queue, never blocks for space.
 * `receive_ns` is the log time (and the stamp classified against START..STOP),
 * `publish_ns` the publish time; both >= 0. Accepted in ARMED and RECORDING. When the
 * queue limits would be exceeded the message is dropped, counted for its topic, the run
 * turns FAILED and RL_EBUSY is returned. RL_ESTATE in other states; the message is not
 * counted, except in a FAILED run until its finish, cancel or free (see rl_recorder_finish),
 * where it is counted received and dropped for its topic. RL_EINVAL for an unknown topic
 * id or a negative stamp. Thread-safe. */
RL_API int rl_recorder_push(rl_recorder *r, uint16_t topic_id, int64_t receive_ns, int64_t publish_ns,
                     const void *data, size_t len);

/* Gives a payload handed over with rl_record_msg.release back to its producer. */
typedef void (*rl_record_release_fn)(void *ctx);

/* One message for rl_recorder_push_many. Without `release` (NULL), `data` is copied and
 * the caller keeps it. With `release`, a message the recorder queues is handed over
 * without a copy: `data` must stay valid and unchanged until the recorder calls
 * release(release_ctx), which it does exactly once, from any of its threads, when it has
 * written or dropped the message, and at the latest before rl_recorder_free returns. A
 * message it refuses (or does not reach) stays the caller's: release is not called. */
typedef struct rl_record_msg {
    int64_t receive_ns, publish_ns;
    const void *data;
    size_t len;
    rl_record_release_fn release; /* optional */
    void *release_ctx;
} rl_record_msg;

/* Hands `count` messages of one topic to the recorder in order, exactly as `count` calls of
 * rl_recorder_push would (but for handed-over payloads, above), taking the queue's lock once
 * for a run of small or handed-over messages (a receive path that takes samples in batches
 * pays one lock per batch, not per sample).
 * Stops at the first message refused: `*queued` (required) says how many were queued
 * before it, and the return value is what rl_recorder_push returned for it (counted the
 * same way); RL_OK when all were queued. Thread-safe. */
RL_API int rl_recorder_push_many(rl_recorder *r, uint16_t topic_id, const rl_record_msg *msgs,
                          size_t count, size_t *queued);

/* In a terminal state, waits until the writer thread has written or dropped everything
 * and closed the bag; the counters and manifest are final afterwards (a FAILED run is
 * finished by the writer on its own). RL_ESTATE before a terminal state. */
RL_API int rl_recorder_wait(rl_recorder *r);

/* Current state; thread-safe. */
RL_API rl_record_state rl_recorder_state(const rl_recorder *r);

/* Fills `out` with the current status (see rl_record_status for string lifetimes).
 * Thread-safe. */
RL_API void rl_recorder_status(rl_recorder *r, rl_record_status *out);

/* Per-topic counters. Returns RL_OK, or RL_ENOENT when `topic_id` is not registered.
 * `topic` points into the recorder (valid until free). Thread-safe. */
typedef struct rl_record_topic_stats {
    const char *topic;
    uint64_t received, inside, outside, written, dropped, bytes;
} rl_record_topic_stats;
RL_API int rl_recorder_topic_stats(rl_recorder *r, uint16_t topic_id, rl_record_topic_stats *out);

/* Path of the run directory and of the bag file inside it: "" until a prepare has
 * succeeded (also while one runs in another thread), then fixed. Valid until free;
 * thread-safe. */
RL_API const char *rl_recorder_run_dir(const rl_recorder *r);
RL_API const char *rl_recorder_bag_path(const rl_recorder *r);

/* Checks a run id as prepare does: rl_path_check_name plus at most 64 bytes, and only
 * letters, digits, '-', '_', '.' (a run id also ends up in topic names and URLs).
 * RL_OK or RL_EINVAL with a message naming the offending byte. */
RL_API int rl_record_check_run_id(const char *run_id);

/* What rl_record_repair did. */
typedef struct rl_record_repair_report {
    int repaired;            /* 1: manifest.json was rewritten; 0: nothing to do */
    char previous_state[16]; /* the manifest's state before, "MISSING" or "UNREADABLE" */
    char bag[16];            /* the bag: "complete", "recovered", "empty" or "missing" */
    uint64_t messages;       /* messages in the bag afterwards */
    uint64_t bytes_lost;     /* bytes of the bag that recovery could not use */
    char what[1024];         /* one line saying what was done */
} rl_record_repair_report;

/* Repairs the run directory of a recorder that died (kill -9, crash, power loss): an
 * unfinished bag is recovered in place (rl_mcap_recover_fd into a temporary file, renamed
 * over it), and a manifest that is missing, unreadable or not final (ARMED, RECORDING) is
 * rewritten as INTERRUPTED ("recorder died; repaired ...") with the counts of what the bag
 * holds and a "repair" record; leftovers (manifest.json.tmp.*, the manifest's room) are
 * removed. A finished run with a complete bag is left alone (`repaired` 0). Errors:
 * RL_EBUSY (its recorder is still running: it holds the run directory's lock), RL_EINVAL
 * (not a recorder run directory), RL_ENOENT, RL_EIO, RL_ENOSPC. Not concurrently with
 * itself on one directory (the lock refuses the second). */
RL_API int rl_record_repair(const char *run_dir, rl_record_repair_report *out);

/* rl_record_repair for a caller that knows why the recorder died (the control flow that
 * drove it): an unfinished run is rewritten as `final_state` (RL_RECORD_INTERRUPTED or
 * RL_RECORD_FAILED) with `reason` as the result's reason, word for word (NULL or "": the
 * repair's own sentence, as rl_record_repair). A finished run is left alone as there.
 * Errors as rl_record_repair, and RL_EINVAL for another `final_state`. */
RL_API int rl_record_repair_as(const char *run_dir, rl_record_state final_state, const char *reason,
                        rl_record_repair_report *out);

/* Adds (or replaces) the top-level key `key` of a finished run's manifest.json with the JSON
 * value `json_text` (at most 64 KiB), written atomically: for what the control flow knew and
 * the recorder did not (the vehicles lost during the run). Only keys the manifest's schema
 * allows the control flow to set are accepted: "vehicle_losses". Errors: RL_EBUSY (the
 * run's recorder still holds the directory), RL_EINVAL (another key, text that is no JSON,
 * a run that has not finished), RL_ENOENT, RL_EIO. Not concurrently with a repair of the
 * same directory (the lock refuses the second). */
RL_API int rl_record_manifest_note(const char *run_dir, const char *key, const char *json_text);

struct json_object; /* json-c's; runlab/json.h reads it */

/* stamps absent from a manifest, or not ISO 8601 UTC text */
#define RL_RECORD_MANIFEST_NO_STAMP INT64_MIN

/* A run's manifest.json as rl_record_manifest_read read it back: the fields its readers
 * use, each NULL (strings), RL_RECORD_MANIFEST_NO_STAMP, NAN, 0 or empty when the manifest
 * lacks it or holds it with another type (a hand-edited or older manifest is read as far
 * as it goes), and the whole document for anything else. docs/record.md describes the
 * keys. The strings point into `doc` and live as long as it does. */
typedef struct rl_record_manifest {
    struct json_object *doc; /* the whole manifest, a JSON object, owned. A caller keeping
                                it past rl_record_manifest_free takes it over by setting
                                this to NULL first (then json_object_put is its own) */
    const char *format;      /* "format": "runlab.record.manifest" for a recorder's */
    const char *run_id;      /* "run_id" */
    const char *state;       /* "state" as written: ARMED, RECORDING, COMPLETE, ... */
    const char *reason;      /* "result"."reason": why the run ended so */
    const char *planner;     /* "planner" */
    const char *start;       /* "stamps"."start": ISO 8601 UTC text of START */
    int64_t start_ns;        /* "stamps"."start" and "stop" in ns since the epoch */
    int64_t stop_ns;
    double planned_duration_s; /* "planned_duration_s" when finite and > 0, else NAN */
    const char *bag_file;    /* "bag"."file", relative to the run directory */
    const char *map_sha256;  /* "map"."runtime_map_sha256", else "map"."sha256" */
    int64_t recorder_pid;    /* "recorder"."pid", 0 when absent */
    int *vehicles;           /* the integers of "vehicles", in order (others skipped); owned */
    size_t vehicle_count;
} rl_record_manifest;

/* Reads `run_dir`/manifest.json (at most 64 MiB, strict JSON as rl_json_parse) into *out,
 * which the caller frees with rl_record_manifest_free, also after an error (out is then
 * empty). Errors: RL_ENOENT (no manifest.json), RL_ERANGE (too large, or a path too long),
 * RL_EPARSE (not JSON, or not a JSON object), RL_EIO, RL_ENOMEM; the message names the
 * file. It takes no lock: a manifest is always replaced whole (rename), so a reader sees
 * the old one or the new one. Thread-safe for distinct `out`. */
RL_API int rl_record_manifest_read(const char *run_dir, rl_record_manifest *out);

/* Frees what rl_record_manifest_read gave (the document unless taken over, the vehicles)
 * and empties *m. NULL is a no-op. */
RL_API void rl_record_manifest_free(rl_record_manifest *m);

/* 1 when `run_dir` is a recorder run that has not finished (no manifest, or one in
 * ARMED or RECORDING), with a one-line description in `why` (recording in progress, or
 * recorder gone and how to repair); 0 for finished runs and other directories. Never
 * fails; changes nothing (it holds the run directory's lock shared for a moment to see
 * whether its recorder lives). */
RL_API int rl_record_run_unfinished(const char *run_dir, char *why, size_t cap);

/* Resolves the runlab home: `home` if not NULL, else $RUNLAB_HOME, else $HOME/runlab.
 * RL_ERANGE when `cap` is too small, RL_ENOENT when neither variable is set. */
RL_API int rl_record_home(const char *home, char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
