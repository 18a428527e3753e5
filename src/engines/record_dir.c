/* The recorder's files, below its state machine (see record_dir.h): the host-wide
 * (host, lab domain) lock, the run directory with its run-id reservation and lock, the
 * map copies with their SHA-256, config/recorder.json, config/nodes.json and
 * manifest.json (always written atomically, with room for it kept on the disk). */
#include "engines/record_dir.h"
#include "engines/record_watch.h"

#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/fs.h"
#include "runlab/hash.h"
#include "runlab/provenance.h"
#include "runlab/time.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

const char *rl_record_state_name(rl_record_state s)
{
    switch (s) {
    case RL_RECORD_IDLE: return "IDLE";
    case RL_RECORD_ARMED: return "ARMED";
    case RL_RECORD_RECORDING: return "RECORDING";
    case RL_RECORD_COMPLETE: return "COMPLETE";
    case RL_RECORD_INTERRUPTED: return "INTERRUPTED";
    case RL_RECORD_FAILED: return "FAILED";
    }
    return "UNKNOWN";
}

const char *rl_record_compression_name(rl_record_compression c)
{
    switch (c) {
    case RL_RECORD_COMPRESSION_NONE: return "none";
    case RL_RECORD_COMPRESSION_ZSTD: return "zstd";
    case RL_RECORD_COMPRESSION_LZ4: return "lz4";
    }
    return "unknown";
}

int rl_record_compression_from_name(const char *name, rl_record_compression *out)
{
    static const rl_record_compression all[] = {
        RL_RECORD_COMPRESSION_NONE, RL_RECORD_COMPRESSION_ZSTD, RL_RECORD_COMPRESSION_LZ4};
    for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
        if (strcmp(name, rl_record_compression_name(all[i])) == 0) {
            *out = all[i];
            return RL_OK;
        }
    return rl_error_set(RL_EINVAL, "'%s' is not none, zstd or lz4", name ? name : "(null)");
}

/* Per kind: what zstd (ZSTD_minCLevel() is far lower, but below -7 a chunk grows more than
 * it saves time) and LZ4 frames (LZ4HC_CLEVEL_MAX) accept; none takes only 0. */
static const struct {
    int min, max;
} level_range[] = {
    [RL_RECORD_COMPRESSION_NONE] = {0, 0},
    [RL_RECORD_COMPRESSION_ZSTD] = {-7, 22},
    [RL_RECORD_COMPRESSION_LZ4] = {0, 12},
};

int rl_record_compression_level_range(rl_record_compression c, int *min, int *max)
{
    if ((unsigned)c >= sizeof level_range / sizeof level_range[0])
        return rl_error_set(RL_EINVAL, "compression: unknown value %d", (int)c);
    *min = level_range[c].min;
    *max = level_range[c].max;
    return RL_OK;
}

int rl_record_compression_level_check(rl_record_compression c, long long level)
{
    int min, max;
    int rc = rl_record_compression_level_range(c, &min, &max);
    if (rc < 0)
        return rc;
    if (level >= min && level <= max)
        return RL_OK;
    if (c == RL_RECORD_COMPRESSION_NONE)
        return rl_error_set(RL_EINVAL, "%lld is not allowed without compression (only 0)",
                            level);
    return rl_error_set(RL_EINVAL, "%lld is not %d..%d for %s", level, min, max,
                        rl_record_compression_name(c));
}

int rl_record_home(const char *home, char *out, size_t cap)
{
    const char *h = home;
    const char *suffix = "";
    if (!h || !*h) {
        h = getenv("RUNLAB_HOME");
        if (!h || !*h) {
            h = getenv("HOME");
            suffix = "/runlab";
        }
    }
    if (!h || !*h)
        return rl_error_set(RL_ENOENT, "runlab home: neither RUNLAB_HOME nor HOME is set");
    int n = snprintf(out, cap, "%s%s", h, suffix);
    if (n < 0 || (size_t)n >= cap)
        return rl_error_set(RL_ERANGE, "runlab home: path too long");
    return RL_OK;
}

int rl_record_check_run_id(const char *id)
{
    if (!id)
        return rl_error_set(RL_EINVAL, "run id: missing");
    int rc = rl_path_check_name(id, "run id");
    if (rc < 0)
        return rc;
    size_t n = strlen(id);
    if (n > RL_RECORD_RUN_ID_MAX)
        return rl_error_set(RL_EINVAL, "run id: %zu bytes, at most %d allowed", n,
                            RL_RECORD_RUN_ID_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_' || c == '.';
        if (!ok)
            return rl_error_set(RL_EINVAL,
                                "run id: byte %zu (0x%02x) is not allowed; use letters, "
                                "digits, '-', '_' and '.'",
                                i, c);
    }
    if (id[0] == '.')
        return rl_error_set(RL_EINVAL, "run id: must not start with '.'");
    return RL_OK;
}

/* ---- lock ------------------------------------------------------------------------------ */

const char *rl_rec_default_lock_dir(void)
{
    /* The same answer for root and every user, so that all meet on one file: /run/lock
     * only where anyone may create files in it (Debian, Fedora), else /tmp. */
    struct stat st;
    if (stat("/run/lock", &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 01777) == 01777)
        return "/run/lock";
    return "/tmp";
}

/* Opens the lock file without following links and without O_CREAT on an existing file
 * (fs.protected_regular refuses that, even to root, for another user's file in a sticky
 * directory). *writable says whether the owner line can be written. */
static int open_lock_file(const char *path, int *writable)
{
    for (int attempt = 0; attempt < 16; attempt++) {
        *writable = 1;
        int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == EACCES) {
            *writable = 0; /* someone tightened its mode: a descriptor is all flock needs */
            fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd >= 0)
            return fd;
        if (errno != ENOENT)
            return -1;
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) {
            /* 0666 whatever the umask: the next recorder may be another user. */
            if (fchmod(fd, 0666) != 0) {
                /* Still usable by this user and root. */
            }
            return fd;
        }
        if (errno != EEXIST)
            return -1;
    }
    errno = EAGAIN;
    return -1;
}

int rl_rec_lock_acquire(rec_lock *l, const char *lock_dir, const char *host, int lab_domain)
{
    l->fd = -1;
    const char *dir = lock_dir && *lock_dir ? lock_dir : rl_rec_default_lock_dir();
    if (lock_dir && *lock_dir) {
        int rc = rl_fs_mkdirs(dir);
        if (rc < 0)
            return rl_error_prefix(rc, "recorder lock directory %s", dir);
    }
    char sane[RL_NAME_MAX + 1];
    rl_path_sanitize_name(host, sane);
    int n = snprintf(l->path, sizeof l->path, "%s/runlab-recorder_%s_domain%d.lock", dir, sane,
                     lab_domain);
    if (n < 0 || (size_t)n >= sizeof l->path)
        return rl_error_set(RL_ERANGE, "recorder lock: path too long");
    for (int attempt = 0; attempt < 16; attempt++) {
        int writable = 0;
        int fd = open_lock_file(l->path, &writable);
        if (fd < 0)
            return rl_error_set_errno(RL_EIO, errno, "recorder lock %s", l->path);
        struct stat st, again;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
            close(fd);
            return rl_error_set(RL_EIO, "recorder lock %s: not a plain file (remove it)",
                                l->path);
        }
        /* flock, not a pid check: the kernel drops the lock when its owner dies, so a
         * lock left behind by a crash (or kill -9) is never stale. The pid is for people. */
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            char holder[256] = "";
            ssize_t got = pread(fd, holder, sizeof holder - 1, 0);
            close(fd);
            if (e != EWOULDBLOCK)
                return rl_error_set_errno(RL_EIO, e, "recorder lock %s", l->path);
            holder[got > 0 ? got : 0] = '\0';
            holder[strcspn(holder, "\n")] = '\0';
            return rl_error_set(RL_EBUSY,
                                "another recorder is running for host %s, lab domain %d (%s); "
                                "lock file %s",
                                host, lab_domain, holder[0] ? holder : "holder unknown",
                                l->path);
        }
        /* Locked, but the name may have been removed and made again meanwhile: then the
         * lock is on a file nobody else will open. Take the current one instead. */
        if (stat(l->path, &again) != 0 || again.st_ino != st.st_ino || again.st_dev != st.st_dev) {
            close(fd);
            continue;
        }
        if (writable) {
            char line[512], iso[RL_TIME_ISO_LEN] = "";
            rl_time_format_iso(rl_time_now_ns(), iso, sizeof iso);
            n = snprintf(line, sizeof line, "pid %ld on %s since %s\n", (long)getpid(), host,
                         iso);
            if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) {
                /* The lock holds without the owner line. */
            }
        }
        l->fd = fd;
        return RL_OK;
    }
    return rl_error_set(RL_EIO, "recorder lock %s: replaced again and again", l->path);
}

void rl_rec_lock_release(rec_lock *l)
{
    if (l->fd < 0)
        return;
    /* The file stays: unlinking it would let a waiter lock a name another process is
     * about to recreate. Emptying it says nobody holds it. */
    if (ftruncate(l->fd, 0) != 0) {
        /* Read-only descriptor: the lock itself goes away with it. */
    }
    close(l->fd);
    l->fd = -1;
}

/* ---- helpers ----------------------------------------------------------------------------- */

/* The text of a manifest or config file, ending in a newline: through runlab's JSON writer,
 * which turns any byte string into valid JSON (invalid UTF-8 becomes U+FFFD), so the strict
 * reader always reads back what was written (json-c's own serialiser copies raw bytes: a
 * topic name with invalid UTF-8 from a damaged bag made a repaired manifest unreadable). */
char *rl_rec_json_text(json_object *o, const char *path, size_t *len)
{
    char *buf = NULL;
    if (rl_json_to_string(o, &buf, len) < 0) {
        rl_error_prefix(rl_error_last_code(), "%s", path);
        return NULL;
    }
    return buf;
}

static int write_json(const char *path, json_object *o)
{
    size_t len = 0;
    char *buf = rl_rec_json_text(o, path, &len);
    if (!buf)
        return rl_error_last_code();
    int rc = rl_fs_write_atomic(path, buf, len, 0644);
    free(buf);
    if (rc < 0)
        rl_error_prefix(rc, "%s", path);
    return rc;
}

static json_object *str_or_null(const char *s)
{
    return s && *s ? json_object_new_string(s) : NULL;
}

static json_object *stamp_json(int64_t ns)
{
    if (ns == RL_REC_UNSET)
        return NULL;
    char iso[RL_TIME_ISO_LEN];
    if (rl_time_format_iso(ns, iso, sizeof iso) < 0)
        return json_object_new_int64(ns);
    return json_object_new_string(iso);
}

static json_object *recorder_config_json(const rec_run_info *info, const rl_record_options *o)
{
    json_object *c = json_object_new_object();
    json_object_object_add(c, "home", json_object_new_string(info->home));
    json_object_object_add(c, "lock_file", json_object_new_string(info->lock_path));
    json_object_object_add(c, "lab_domain", json_object_new_int(o->lab_domain));
    json_object_object_add(c, "max_queued_messages",
                           json_object_new_int64((int64_t)o->max_queued_messages));
    json_object_object_add(c, "max_queued_bytes", json_object_new_int64((int64_t)o->max_queued_bytes));
    json_object_object_add(c, "write_delay_ms", json_object_new_double((double)o->write_delay_ns / 1e6));
    json_object_object_add(c, "flush_interval_ms",
                           json_object_new_double((double)o->flush_interval_ns / 1e6));
    json_object_object_add(c, "stall_limit_ms", json_object_new_double((double)o->stall_limit_ns / 1e6));
    json_object_object_add(c, "heartbeat_interval_ms",
                           json_object_new_double((double)o->heartbeat_interval_ns / 1e6));
    json_object_object_add(c, "minimum_free_bytes",
                           json_object_new_int64((int64_t)o->minimum_free_bytes));
    json_object_object_add(c, "keep_outside", json_object_new_boolean(o->keep_outside != 0));
    json_object_object_add(c, "compression",
                           json_object_new_string(rl_record_compression_name(o->compression)));
    json_object_object_add(c, "chunk_size", json_object_new_int64((int64_t)o->chunk_size));
    json_object_object_add(c, "bag_format", json_object_new_string(info->sink_name));
    json_object_object_add(c, "bag_profile", json_object_new_string(info->bag_profile));
    return c;
}

static int reserve_run_id(rec_run_info *info, const char *experiments)
{
    char ids[PATH_MAX], target[PATH_MAX];
    int n = snprintf(ids, sizeof ids, "%s/.run-ids", experiments);
    if (n < 0 || (size_t)n >= sizeof ids)
        return rl_error_set(RL_ERANGE, "run directory: path too long");
    int rc = rl_fs_mkdirs(ids);
    if (rc < 0)
        return rc;
    rc = rl_path_join(info->id_link, sizeof info->id_link, ids, info->run_id);
    if (rc < 0)
        return rc;
    n = snprintf(target, sizeof target, "../%s", info->run_name);
    if (n < 0 || (size_t)n >= sizeof target)
        return rl_error_set(RL_ERANGE, "run directory: name too long");
    /* symlink(2) creates the name or fails, atomically: of two recorders racing for one
     * run id exactly one gets it, whatever their clocks say. */
    if (symlink(target, info->id_link) != 0) {
        int e = errno;
        if (e != EEXIST)
            return rl_error_set_errno(RL_EIO, e, "run id reservation %s", info->id_link);
        char held[PATH_MAX] = "";
        ssize_t len = readlink(info->id_link, held, sizeof held - 1);
        held[len > 0 ? len : 0] = '\0';
        info->id_link[0] = '\0';
        return rl_error_set(RL_EEXIST, "run id '%s' is already used by %s/%s; run ids are never "
                            "reused", info->run_id, experiments,
                            strncmp(held, "../", 3) == 0 ? held + 3 : held);
    }
    return RL_OK;
}

void rl_rec_run_info_init(rec_run_info *info)
{
    memset(info, 0, sizeof *info);
    info->dir_fd = -1;
    info->reserve_fd = -1;
}

void rl_rec_run_info_free(rec_run_info *info)
{
    if (info->reserve_fd >= 0)
        close(info->reserve_fd);
    if (info->dir_fd >= 0)
        close(info->dir_fd);
    info->reserve_fd = info->dir_fd = -1;
    free(info->vehicles);
    free(info->planner);
    free(info->scenario);
    info->vehicles = NULL;
    info->planner = NULL;
    info->scenario = NULL;
}

int rl_rec_check_object(const char *json, const char *what)
{
    enum json_tokener_error jerr = json_tokener_success;
    json_object *o = json_tokener_parse_verbose(json, &jerr);
    int ok = jerr == json_tokener_success && json_object_is_type(o, json_type_object);
    json_object_put(o);
    return ok ? RL_OK
              : rl_error_set(RL_EINVAL, "%s: %s", what,
                             jerr != json_tokener_success ? json_tokener_error_desc(jerr)
                                                          : "not a JSON object");
}

int rl_rec_write_nodes(const rec_run_info *info, const char *nodes_json)
{
    json_object *nodes = json_tokener_parse(nodes_json);
    if (!json_object_is_type(nodes, json_type_object)) {
        json_object_put(nodes);
        return rl_error_set(RL_EINVAL, "node parameter snapshots: not a JSON object");
    }
    char path[PATH_MAX];
    int rc = rl_path_join_rel(path, sizeof path, info->run_dir, "config/nodes.json");
    if (rc == RL_OK)
        rc = write_json(path, nodes);
    json_object_put(nodes);
    return rc;
}

void rl_rec_discard_dir(rec_run_info *info)
{
    if (info->reserve_fd >= 0)
        close(info->reserve_fd);
    if (info->dir_fd >= 0)
        close(info->dir_fd);
    info->reserve_fd = info->dir_fd = -1;
    info->reserve_bytes = 0;
    if (info->run_dir[0])
        rl_fs_remove_tree(info->run_dir);
    info->run_dir[0] = '\0';
    info->bag_path[0] = '\0';
}

/* The run directory's own lock: held by its recorder for its whole life, so that
 * `runlab record --repair` can tell a dead recorder from a live one. */
static int lock_run_dir(rec_run_info *info)
{
    info->dir_fd = open(info->run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (info->dir_fd < 0)
        return rl_error_set_errno(RL_EIO, errno, "%s", info->run_dir);
    /* Blocking: a listing may probe the lock for a moment (rl_record_run_unfinished). */
    while (flock(info->dir_fd, LOCK_EX) != 0)
        if (errno != EINTR)
            return rl_error_set_errno(RL_EIO, errno, "%s: lock", info->run_dir);
    return RL_OK;
}

int rl_rec_prepare_dir(rec_run_info *info, const rl_record_options *opts,
                       const rl_record_run *run)
{
    int64_t now = rl_time_now_ns();
    info->named_ns = now;
    char compact[RL_TIME_COMPACT_LEN];
    int rc = rl_time_format_compact(now, compact, sizeof compact);
    if (rc < 0)
        return rc;
    if (run->run_id) {
        rc = rl_record_check_run_id(run->run_id);
        if (rc < 0)
            return rc;
        snprintf(info->run_id, sizeof info->run_id, "%s", run->run_id);
    } else {
        snprintf(info->run_id, sizeof info->run_id, "run-%s-%ld", compact, info->pid);
    }
    if (run->vehicle_count && !run->vehicles)
        return rl_error_set(RL_EINVAL, "recorder prepare: vehicle list missing");
    if (run->scenario_json && (rc = rl_rec_check_object(run->scenario_json, "scenario")) < 0)
        return rc;

    rec_map_input map_in = {0};
    json_object *nodes = NULL;
    if (run->nodes_json) {
        enum json_tokener_error jerr = json_tokener_success;
        nodes = json_tokener_parse_verbose(run->nodes_json, &jerr);
        if (jerr != json_tokener_success || !json_object_is_type(nodes, json_type_object)) {
            json_object_put(nodes);
            return rl_error_set(RL_EINVAL, "node parameter snapshots: %s",
                                jerr != json_tokener_success ? json_tokener_error_desc(jerr)
                                                             : "not a JSON object");
        }
    } else {
        nodes = json_object_new_object();
    }
    /* The map is read (an original compiled) before anything is made: a map that does
     * not read reserves no run id. */
    if ((rc = rl_rec_map_open(run, &map_in, &info->map)) < 0)
        goto out_nodes;

    char experiments[PATH_MAX];
    int n = snprintf(experiments, sizeof experiments, "%s/experiments", info->home);
    if (n < 0 || (size_t)n >= sizeof experiments) {
        rc = rl_error_set(RL_ERANGE, "run directory: path too long");
        goto out_nodes;
    }
    if ((rc = rl_fs_mkdirs(experiments)) < 0)
        goto out_nodes;
    uint64_t free_bytes = 0;
    if ((rc = rl_fs_free_bytes(experiments, &free_bytes)) < 0)
        goto out_nodes;
    if (rec_free_space_low(free_bytes, opts->minimum_free_bytes)) {
        rc = rl_error_set(RL_ENOSPC, "%s: %llu bytes free, minimum_free_bytes is %llu",
                          experiments, (unsigned long long)free_bytes,
                          (unsigned long long)opts->minimum_free_bytes);
        goto out_nodes;
    }
    /* A generated id is per second and process: a second run in the same second (another
     * recorder in this process, or a pid reused) takes the next free "-2", "-3", ...; a
     * given id is the caller's and is refused when used. */
    char base_id[RL_RECORD_RUN_ID_MAX + 1];
    snprintf(base_id, sizeof base_id, "%s", info->run_id);
    for (int k = 1;; k++) {
        if (k > 1) {
            char next[RL_RECORD_RUN_ID_MAX + 16];
            size_t n_next = (size_t)snprintf(next, sizeof next, "%s-%d", base_id, k);
            if (n_next > RL_RECORD_RUN_ID_MAX)
                break; /* never for a generated id; rc is the RL_EEXIST before */
            memcpy(info->run_id, next, n_next + 1);
        }
        snprintf(info->run_name, sizeof info->run_name, "%s_%s", compact, info->run_id);
        rc = reserve_run_id(info, experiments);
        if (rc != RL_EEXIST || run->run_id || k == RL_REC_GENERATED_ID_TRIES)
            break;
    }
    if (rc < 0)
        goto out_nodes;
    rc = rl_fs_mkdir_new(experiments, info->run_name, RL_MKDIR_FAIL_IF_EXISTS, info->run_dir,
                         sizeof info->run_dir);
    if (rc < 0) {
        /* Someone else's directory (made without a reservation): not ours to point at. */
        unlink(info->id_link);
        info->run_dir[0] = '\0';
        goto out_nodes;
    }
    rc = lock_run_dir(info);

    static const char *const subdirs[] = {"bag", "map", "config", "evaluations"};
    char path[PATH_MAX];
    for (size_t i = 0; rc == RL_OK && i < sizeof subdirs / sizeof subdirs[0]; i++) {
        rc = rl_path_join(path, sizeof path, info->run_dir, subdirs[i]);
        if (rc == RL_OK && mkdir(path, 0755) != 0)
            rc = rl_error_set_errno(RL_EIO, errno, "%s", path);
    }
    /* The room for the manifest first: from here on a disk that fills up can still take
     * the final manifest. */
    if (rc == RL_OK && (rc = rl_rec_reserve(info, 64 * 1024)) < 0)
        rl_error_prefix(rc, "%s: keeping room for the manifest", info->run_dir);
    if (rc == RL_OK)
        rc = rl_rec_map_store(&map_in, info->run_dir, &info->map);
    if (rc == RL_OK) {
        info->vehicle_count = run->vehicle_count;
        if (run->vehicle_count) {
            info->vehicles = malloc(run->vehicle_count * sizeof *info->vehicles);
            if (!info->vehicles)
                rc = rl_error_set(RL_ENOMEM, "recorder prepare: out of memory");
            else
                memcpy(info->vehicles, run->vehicles, run->vehicle_count * sizeof *info->vehicles);
        }
        info->planner = run->planner ? strdup(run->planner) : NULL;
        info->scenario = run->scenario_json ? strdup(run->scenario_json) : NULL;
        if ((run->planner && !info->planner) || (run->scenario_json && !info->scenario))
            rc = rl_error_set(RL_ENOMEM, "recorder prepare: out of memory");
    }
    if (rc == RL_OK) {
        snprintf(info->bag_rel, sizeof info->bag_rel, "bag/%s.%s", info->run_id, info->sink_name);
        rc = rl_path_join_rel(info->bag_path, sizeof info->bag_path, info->run_dir, info->bag_rel);
    }
    if (rc == RL_OK) {
        json_object *cfg = recorder_config_json(info, opts);
        rc = rl_path_join_rel(path, sizeof path, info->run_dir, "config/recorder.json");
        if (rc == RL_OK)
            rc = cfg ? write_json(path, cfg) : rl_error_set(RL_ENOMEM, "out of memory");
        json_object_put(cfg);
    }
    if (rc == RL_OK) {
        rc = rl_path_join_rel(path, sizeof path, info->run_dir, "config/nodes.json");
        if (rc == RL_OK)
            rc = write_json(path, nodes);
    }
    if (rc < 0) {
        /* The half-made directory is ours (mkdir and the reservation say so) and was never
         * armed: remove it. The run id stays reserved; the link then dangles. */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", rl_error_last());
        rl_rec_discard_dir(info);
        rl_error_set(rc, "%s", msg);
    }
out_nodes:
    rl_rec_map_close(&map_in);
    json_object_put(nodes);
    return rc;
}

/* ---- manifest ------------------------------------------------------------------------------ */

/* The manifest's "map": null, or both files with their hashes and the frame. */
json_object *rl_rec_manifest_map_json(const rec_map_info *mi)
{
    if (!mi->present)
        return NULL;
    json_object *map = json_object_new_object();
    json_object_object_add(map, "file", json_object_new_string("map/" RL_REC_RUNTIME_MAP_NAME));
    json_object_object_add(map, "sha256", json_object_new_string(mi->runtime_sha256));
    json_object_object_add(map, "runtime_map_sha256", json_object_new_string(mi->runtime_sha256));
    json_object_object_add(map, "bytes", json_object_new_int64((int64_t)mi->runtime_bytes));
    json_object *orig = NULL;
    if (mi->original_file[0]) {
        char rel[RL_NAME_MAX + 8];
        snprintf(rel, sizeof rel, "map/%s", mi->original_file);
        orig = json_object_new_string(rel);
    }
    json_object_object_add(map, "original_file", orig);
    json_object_object_add(map, "source_sha256", json_object_new_string(mi->source_sha256));
    json_object_object_add(map, "source_bytes",
                           mi->original_file[0] ? json_object_new_int64((int64_t)mi->source_bytes)
                                                : NULL);
    json_object_object_add(map, "source_format", json_object_new_string(mi->format));
    json_object_object_add(map, "frame", json_object_new_string(mi->frame));
    json_object_object_add(map, "projection", json_object_new_string(mi->projection));
    json_object *origin = NULL;
    if (mi->has_origin) {
        origin = json_object_new_object();
        json_object_object_add(origin, "lat", json_object_new_double(mi->origin_lat));
        json_object_object_add(origin, "lon", json_object_new_double(mi->origin_lon));
    }
    json_object_object_add(map, "origin", origin);
    return map;
}

static json_object *manifest_json(const rec_run_info *info, const rec_manifest *s)
{
    json_object *m = json_object_new_object();
    if (!m)
        return NULL;
    json_object_object_add(m, "format", json_object_new_string("runlab.record.manifest"));
    json_object_object_add(m, "format_version", json_object_new_int(1));
    json_object_object_add(m, "run_id", json_object_new_string(info->run_id));
    json_object_object_add(m, "directory", json_object_new_string(info->run_name));
    json_object_object_add(m, "host", json_object_new_string(info->host));
    json_object_object_add(m, "lab_domain", json_object_new_int(info->lab_domain));
    json_object_object_add(m, "state", json_object_new_string(rl_record_state_name(s->state)));
    json_object *result = NULL;
    if (s->state >= RL_RECORD_COMPLETE) {
        result = json_object_new_object();
        json_object_object_add(result, "state",
                               json_object_new_string(rl_record_state_name(s->state)));
        json_object_object_add(result, "reason", json_object_new_string(s->reason ? s->reason : ""));
    }
    json_object_object_add(m, "result", result);

    json_object *veh = json_object_new_array();
    for (size_t i = 0; i < info->vehicle_count; i++)
        json_object_array_add(veh, json_object_new_int(info->vehicles[i]));
    json_object_object_add(m, "vehicles", veh);
    json_object_object_add(m, "planner", str_or_null(info->planner));
    json_object_object_add(m, "scenario",
                           info->scenario ? json_tokener_parse(info->scenario) : NULL);

    json_object *map = rl_rec_manifest_map_json(&info->map);
    json_object_object_add(m, "map", map);

    json_object *st = json_object_new_object();
    json_object_object_add(st, "prepare", stamp_json(s->prepare_ns));
    json_object_object_add(st, "begin", stamp_json(s->begin_ns));
    json_object_object_add(st, "start", stamp_json(s->start_ns));
    json_object_object_add(st, "stop", stamp_json(s->stop_ns));
    json_object_object_add(st, "finish", stamp_json(s->finish_ns));
    json_object_object_add(m, "stamps", st);

    json_object *bag = json_object_new_object();
    json_object_object_add(bag, "file", json_object_new_string(info->bag_rel));
    json_object_object_add(bag, "format", json_object_new_string(info->sink_name));
    json_object_object_add(bag, "profile", json_object_new_string(info->bag_profile));
    json_object_object_add(bag, "compression",
                           json_object_new_string(rl_record_compression_name(s->compression)));
    json_object_object_add(bag, "keep_outside", json_object_new_boolean(s->keep_outside != 0));
    json_object_object_add(m, "bag", bag);

    uint64_t tot[6] = {0};
    static const char *const names[6] = {"received", "inside", "outside", "written", "dropped",
                                         "bytes"};
    json_object *topics = json_object_new_array();
    for (size_t i = 0; i < s->topic_count; i++) {
        const rec_topic_counts *t = &s->topics[i];
        uint64_t v[6] = {t->received, t->inside, t->outside, t->written, t->dropped, t->bytes};
        json_object *o = json_object_new_object();
        json_object_object_add(o, "topic", json_object_new_string(t->topic));
        json_object_object_add(o, "schema", json_object_new_string(t->schema));
        json_object_object_add(o, "message_encoding", json_object_new_string(t->message_encoding));
        /* Checked to be an object when it was set (rl_recorder_set_topic_qos). */
        json_object_object_add(o, "qos", t->qos_json ? json_tokener_parse(t->qos_json) : NULL);
        for (int k = 0; k < 6; k++) {
            json_object_object_add(o, names[k], json_object_new_int64((int64_t)v[k]));
            tot[k] += v[k];
        }
        json_object_array_add(topics, o);
    }
    json_object *totals = json_object_new_object();
    for (int k = 0; k < 6; k++)
        json_object_object_add(totals, names[k], json_object_new_int64((int64_t)tot[k]));
    json_object_object_add(m, "totals", totals);
    json_object_object_add(m, "topics", topics);
    json_object *unmatched = json_object_new_array();
    for (size_t i = 0; i < s->unmatched_count; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(s->unmatched[i].name));
        json_object_object_add(o, "reason", json_object_new_string(s->unmatched[i].reason));
        json_object_array_add(unmatched, o);
    }
    json_object_object_add(m, "unmatched", unmatched);

    json_object *rec = json_object_new_object();
    json_object_object_add(rec, "pid", json_object_new_int64(info->pid));
    json_object_object_add(rec, "pauses", json_object_new_int64((int64_t)s->pauses));
    json_object_object_add(rec, "paused_ms", json_object_new_int64(s->paused_ns / 1000000));
    json_object_object_add(m, "recorder", rec);

    json_object *rl = json_object_new_object();
    json_object_object_add(rl, "version", json_object_new_string(info->version));
    json_object_object_add(rl, "build_revision", json_object_new_string(rl_build_sha()));
    json_object_object_add(rl, "build_dirty", json_object_new_boolean(rl_build_is_dirty()));
    json_object_object_add(m, "runlab", rl);
    return m;
}

static int reserve_path(const char *run_dir, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/%s", run_dir, RL_REC_RESERVE_NAME);
    return n < 0 || (size_t)n >= cap ? rl_error_set(RL_ERANGE, "%s: path too long", run_dir)
                                     : RL_OK;
}

int rl_rec_reserve(rec_run_info *info, uint64_t bytes)
{
    if (!info->run_dir[0])
        return RL_OK;
    if (info->reserve_fd >= 0 && bytes <= info->reserve_bytes)
        return RL_OK;
    char path[PATH_MAX];
    int rc = reserve_path(info->run_dir, path, sizeof path);
    if (rc < 0)
        return rc;
    if (info->reserve_fd < 0) {
        info->reserve_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (info->reserve_fd < 0)
            return rl_error_set_errno(errno == ENOSPC ? RL_ENOSPC : RL_EIO, errno, "%s", path);
        info->reserve_bytes = 0;
    }
    /* Real blocks (posix_fallocate writes zeros where the filesystem cannot preallocate):
     * writing over them later needs none. */
    int e = posix_fallocate(info->reserve_fd, 0, (off_t)bytes);
    if (e != 0)
        return rl_error_set_errno(e == ENOSPC ? RL_ENOSPC : RL_EIO, e, "%s: %llu bytes", path,
                                  (unsigned long long)bytes);
    info->reserve_bytes = bytes;
    return RL_OK;
}

static int fsync_dir_of(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir)
        *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return rl_error_set_errno(RL_EIO, errno, "%s", dir);
    int rc = fsync(fd) == 0 ? RL_OK : rl_error_set_errno(RL_EIO, errno, "%s: fsync", dir);
    close(fd);
    return rc;
}

int rl_rec_write_with_reserve(const char *path, const char *text, size_t len, int *reserve_fd,
                              const char *reserve_file)
{
    int rc = rl_fs_write_atomic(path, text, len, 0644);
    if (rc == RL_OK || !reserve_fd || *reserve_fd < 0)
        return rc;
    /* The disk refused new blocks: write over the room kept for this, shrink it to the
     * text and rename it into place. Neither needs a new block. */
    char first[512];
    snprintf(first, sizeof first, "%s", rl_error_last());
    int fd = *reserve_fd;
    const char *p = text;
    size_t left = len;
    off_t off = 0;
    int e = 0;
    while (left && !e) {
        ssize_t w = pwrite(fd, p, left, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            e = w < 0 ? errno : EIO;
        else
            p += w, left -= (size_t)w, off += w;
    }
    if (!e && ftruncate(fd, (off_t)len) != 0)
        e = errno;
    if (!e && fsync(fd) != 0)
        e = errno;
    if (!e && fchmod(fd, 0644) != 0)
        e = errno;
    if (!e && rename(reserve_file, path) != 0)
        e = errno;
    if (e)
        return rl_error_set_errno(e == ENOSPC ? RL_ENOSPC : RL_EIO, e,
                                  "%s (after: %s): writing into the room kept for it", path,
                                  first);
    close(fd);
    *reserve_fd = -1;
    return fsync_dir_of(path);
}

int rl_rec_manifest_write(rec_run_info *info, const rec_manifest *s)
{
    if (!info->run_dir[0])
        return rl_error_set(RL_ESTATE, "manifest: no run directory");
    char path[PATH_MAX], reserve[PATH_MAX];
    int rc = rl_path_join(path, sizeof path, info->run_dir, "manifest.json");
    if (rc == RL_OK)
        rc = reserve_path(info->run_dir, reserve, sizeof reserve);
    if (rc < 0)
        return rc;
    json_object *m = manifest_json(info, s);
    size_t len = 0;
    char *text = m ? rl_rec_json_text(m, path, &len) : NULL;
    json_object_put(m);
    if (!text)
        return rl_error_set(RL_ENOMEM, "%s: out of memory", path);
    /* Only a final manifest may use the room: one written while the run goes on (a full
     * disk at START) would leave none for the end, which matters more. */
    int final = s->state >= RL_RECORD_COMPLETE;
    int had_reserve = info->reserve_fd >= 0;
    rc = rl_rec_write_with_reserve(path, text, len, final ? &info->reserve_fd : NULL, reserve);
    free(text);
    if (rc < 0)
        return rc;
    if (had_reserve && info->reserve_fd < 0)
        info->reserve_bytes = 0;
    if (final && info->reserve_fd >= 0) {
        /* The run is over: the room goes back (a FAILED run's later rewrite, with the
         * counts after the bag was closed, needs none: the bag no longer grows). */
        close(info->reserve_fd);
        info->reserve_fd = -1;
        info->reserve_bytes = 0;
        unlink(reserve);
    } else if (!final) {
        /* Room for the next one (a manifest grows with its topics); best effort. */
        (void)rl_rec_reserve(info, 4 * (uint64_t)len + 64 * 1024);
    }
    return RL_OK;
}
