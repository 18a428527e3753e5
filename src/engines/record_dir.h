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

enum { RL_RECORD_RUN_ID_MAX = 64 };

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

/* What prepare makes and the manifest names; read-only once prepare has returned. */
typedef struct rec_run_info {
    char home[PATH_MAX];
    char host[256];
    char version[32];
    int lab_domain;
    long pid;
    char lock_path[PATH_MAX];
    char sink_name[16];
    char run_id[RL_RECORD_RUN_ID_MAX + 1];
    char run_dir[PATH_MAX];
    char run_name[PATH_MAX];
    char bag_path[PATH_MAX];
    char bag_rel[PATH_MAX];
    char id_link[PATH_MAX];
    int *vehicles;
    size_t vehicle_count;
    char *planner, *map_frame;
    char map_file[RL_NAME_MAX + 1], original_map_file[RL_NAME_MAX + 1];
    char map_sha256[65];
    uint64_t map_bytes;
    int has_map, has_original_map;
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

/* Removes a run directory that was never armed and forgets it. */
void rl_rec_discard_dir(rec_run_info *info);

/* ---- manifest.json --------------------------------------------------------------------- */

typedef struct rec_topic_counts {
    const char *topic, *schema, *message_encoding;
    uint64_t received, inside, outside, written, dropped, bytes;
} rec_topic_counts;

/* A manifest as plain data. */
typedef struct rec_manifest {
    rl_record_state state;
    const char *reason;
    int64_t prepare_ns, begin_ns, start_ns, stop_ns, finish_ns;
    const rec_topic_counts *topics;
    size_t topic_count;
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
int rl_rec_write_with_reserve(const char *path, const char *text, size_t len, int *reserve_fd,
                              const char *reserve_path);

#endif
