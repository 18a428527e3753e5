/* The files of a recorder run, below the recorder's state machine (record.c uses this;
 * this knows nothing of it): the host-wide (host, lab domain) lock, the run directory with
 * its run-id reservation and its own lock, the map copies, the config files, and
 * manifest.json, written atomically from plain data, with room kept for it on the disk. */
#ifndef RUNLAB_RECORD_DIR_H
#define RUNLAB_RECORD_DIR_H

#include "runlab/fs.h"
#include "runlab/record.h"

#include <limits.h>
#include <stdint.h>

enum { RL_RECORD_RUN_ID_MAX = 64, RL_REC_GENERATED_ID_TRIES = 1000 };

/* Marks a stamp that has not happened yet. */
#define RL_REC_UNSET INT64_MIN

/* ---- the one-recorder lock ----------------------------------------------------------- */

typedef struct rec_lock {
    int fd;
    char path[PATH_MAX];
} rec_lock;

/* The host-wide directory of recorder locks: /run/lock when it is a world-writable
 * sticky directory, else /tmp; the same answer for every user of the host. */
const char *rl_rec_default_lock_dir(void);

/* Takes the lock of (host, lab_domain): an flock(2) on
 * "<lock_dir>/runlab-recorder_<host>_domain<N>.lock" (lock_dir NULL: the default above),
 * made mode 0666 so that root and other users can take it after us, holding the owner's
 * pid. RL_EBUSY when another process holds it (message names it), RL_EIO otherwise. */
int rl_rec_lock_acquire(rec_lock *l, const char *lock_dir, const char *host, int lab_domain);
void rl_rec_lock_release(rec_lock *l);

/* ---- the run directory ----------------------------------------------------------------- */

/* The run's map as stored in map/ and named in the manifest (record_map.c). */
typedef struct rec_map_info {
    int present;
    char frame[RL_NAME_MAX + 1];           /* frame name, "map" unless given */
    char original_file[RL_NAME_MAX + 1];   /* name of the stored original, "" when none */
    char runtime_sha256[65];               /* of map/runtime_map.bin's bytes */
    char source_sha256[65];                /* of the original (the runtime map's record of
                                              it when no original was given) */
    uint64_t runtime_bytes, source_bytes;  /* source_bytes 0 when no original is stored */
    char format[16];                       /* "lanelet2", "commonroad" (the source's) */
    char projection[16];                   /* rl_map_projection_name */
    double origin_lat, origin_lon;
    int has_origin;                        /* geographic projections only */
} rec_map_info;

/* Name of the runtime map inside map/. */
#define RL_REC_RUNTIME_MAP_NAME "runtime_map.bin"

/* A run's map while prepare runs: opened (an original read and compiled in memory)
 * before anything is made on disk, stored once the directory exists. */
typedef struct rec_map_input {
    struct rl_map *map;         /* NULL: no map */
    const char *original_path;  /* the original to store beside it, or NULL */
} rec_map_input;

/* Opens run->map_path (a runtime map, or a Lanelet2 / CommonRoad file compiled with
 * run->map_options) and checks run->original_map_path against it; fills everything of
 * `mi` but the stored files' hashes. Errors name the file (and line for XML). */
int rl_rec_map_open(const rl_record_run *run, rec_map_input *in, rec_map_info *mi);
/* Writes map/runtime_map.bin and the original into `run_dir`, hashing what was written. */
int rl_rec_map_store(const rec_map_input *in, const char *run_dir, rec_map_info *mi);
void rl_rec_map_close(rec_map_input *in);
/* Describes the map already stored in `run_dir`/map, for a manifest rebuilt by repair:
 * the runtime map's facts and hash, and the original when another file there has the
 * source hash the runtime map records. `frame` NULL means "map". No runtime map: RL_OK
 * with mi->present 0; an unreadable one: the map reader's error. */
int rl_rec_map_describe(const char *run_dir, const char *frame, rec_map_info *mi);
/* The manifest's "map" object (NULL when mi->present is 0); the caller owns it. */
struct json_object *rl_rec_manifest_map_json(const rec_map_info *mi);

/* What prepare makes and the manifest names; read-only once prepare has returned. */
typedef struct rec_run_info {
    char home[PATH_MAX];
    char host[256];
    char version[32];
    int lab_domain;
    long pid;
    char lock_path[PATH_MAX];
    char sink_name[16];
    char bag_profile[64];  /* the MCAP header profile, decided at prepare */
    char run_id[RL_RECORD_RUN_ID_MAX + 1];
    int64_t named_ns;      /* the UTC time the directory's name gives (prepare's stamp) */
    char run_dir[PATH_MAX];
    char run_name[PATH_MAX];
    char bag_path[PATH_MAX];
    char bag_rel[PATH_MAX];
    char id_link[PATH_MAX];
    int *vehicles;
    size_t vehicle_count;
    char *planner;
    char *scenario;  /* JSON object text for the manifest's "scenario", or NULL */
    rec_map_info map;
    int dir_fd;      /* the run directory, flock'ed while its recorder lives */
    int reserve_fd;  /* the room kept for the manifest, -1 when none */
    uint64_t reserve_bytes;
} rec_run_info;

/* Empties `info` (descriptors -1). */
void rl_rec_run_info_init(rec_run_info *info);
/* Closes the descriptors (releasing the run directory's lock), frees the strings. */
void rl_rec_run_info_free(rec_run_info *info);

/* Everything prepare does on disk before the bag is opened: checks, run-id reservation,
 * the directory and its lock, maps, configs, and the room for the manifest. `info` has
 * home, host, version, lab_domain, pid, lock_path and sink_name set. On error removes
 * what it created except the reserved run id. */
int rl_rec_prepare_dir(rec_run_info *info, const rl_record_options *opts,
                       const rl_record_run *run);

/* Checks that `json` is a JSON object (`what` names it in the error): RL_EINVAL. */
int rl_rec_check_object(const char *json, const char *what);
/* Writes `nodes_json` (checked) as config/nodes.json of the run. */
int rl_rec_write_nodes(const rec_run_info *info, const char *nodes_json);

/* Removes a run directory that was never armed and forgets it. */
void rl_rec_discard_dir(rec_run_info *info);

/* ---- manifest.json --------------------------------------------------------------------- */

typedef struct rec_topic_counts {
    const char *topic, *schema, *message_encoding;
    const char *qos_json; /* a JSON object's text for "qos", or NULL (null) */
    uint64_t received, inside, outside, written, dropped, bytes;
} rec_topic_counts;

/* A manifest as plain data. */
typedef struct rec_manifest {
    rl_record_state state;
    const char *reason;
    int64_t prepare_ns, begin_ns, start_ns, stop_ns, finish_ns;
    const rec_topic_counts *topics;
    size_t topic_count;
    const rl_record_unmatched *unmatched; /* "unmatched": what yielded nothing */
    size_t unmatched_count;
    uint64_t pauses;          /* whole-process pauses seen by the monitor */
    int64_t paused_ns;        /* their total length */
    int keep_outside;
    rl_record_compression compression;
} rec_manifest;

/* Writes manifest.json atomically (temporary file, fsync, rename). When that fails for a
 * final manifest (terminal state; a full disk), it is written into the room kept for it
 * and renamed into place, which needs no new blocks. A final manifest gives the room
 * back; others grow it with the manifest. Not thread-safe: callers serialise. */
int rl_rec_manifest_write(rec_run_info *info, const rec_manifest *m);

/* Grows the room kept for the manifest to at least `bytes` (fallocate). Best effort:
 * returns RL_OK or the error, changes nothing on error. */
int rl_rec_reserve(rec_run_info *info, uint64_t bytes);

/* Name of the room file inside a run directory. */
#define RL_REC_RESERVE_NAME ".manifest.reserve"

/* Writes `text` (len bytes) as `path` atomically; on failure falls back to the room file
 * `reserve_fd` (preallocated, at `reserve_path`), which is consumed then (*reserve_fd
 * becomes -1). */
/* A JSON document as the text runlab writes it (valid UTF-8, a newline at the end); NULL with
 * the error set (prefixed by `path`). The caller frees it. */
char *rl_rec_json_text(struct json_object *o, const char *path, size_t *len);

int rl_rec_write_with_reserve(const char *path, const char *text, size_t len, int *reserve_fd,
                              const char *reserve_path);

#endif
