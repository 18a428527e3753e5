/* The recorder's files: the (host, lab domain) lock, the run directory with its run-id
 * reservation, the map copies with their SHA-256, config/recorder.json,
 * config/nodes.json and manifest.json (always written atomically). */
#include "engines/record_internal.h"

#include "runlab/error.h"
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

/* ---- lock ------------------------------------------------------------------------------ */

int rl_rec_lock_acquire(rl_recorder *r)
{
    int rc = rl_fs_mkdirs(r->lock_dir);
    if (rc < 0)
        return rl_error_prefix(rc, "recorder lock directory %s", r->lock_dir);
    char host[RL_NAME_MAX + 1];
    rl_path_sanitize_name(r->host, host);
    int n = snprintf(r->lock_path, sizeof r->lock_path, "%s/recorder_%s_domain%d.lock",
                     r->lock_dir, host, r->opts.lab_domain);
    if (n < 0 || (size_t)n >= sizeof r->lock_path)
        return rl_error_set(RL_ERANGE, "recorder lock: path too long");
    int fd = open(r->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return rl_error_set_errno(RL_EIO, errno, "recorder lock %s", r->lock_path);
    /* flock, not a pid check: the kernel drops the lock when its owner dies, so a lock
     * left behind by a crash (or kill -9) is never stale. The pid is only for people. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char holder[256] = "";
        ssize_t got = pread(fd, holder, sizeof holder - 1, 0);
        close(fd);
        if (e != EWOULDBLOCK)
            return rl_error_set_errno(RL_EIO, e, "recorder lock %s", r->lock_path);
        holder[got > 0 ? got : 0] = '\0';
        holder[strcspn(holder, "\n")] = '\0';
        return rl_error_set(RL_EBUSY,
                            "another recorder is running for host %s, lab domain %d (%s); "
                            "lock file %s",
                            r->host, r->opts.lab_domain, holder[0] ? holder : "holder unknown",
                            r->lock_path);
    }
    char line[512], iso[RL_TIME_ISO_LEN] = "";
    rl_time_format_iso(rl_time_now_ns(), iso, sizeof iso);
    n = snprintf(line, sizeof line, "pid %ld on %s since %s\n", (long)getpid(), r->host, iso);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) {
        int e = errno;
        close(fd);
        return rl_error_set_errno(RL_EIO, e, "recorder lock %s: writing the owner", r->lock_path);
    }
    r->lock_fd = fd;
    return RL_OK;
}

void rl_rec_lock_release(rl_recorder *r)
{
    if (r->lock_fd < 0)
        return;
    /* The file stays: unlinking it would let a waiter lock a name another process is
     * about to recreate. Emptying it says nobody holds it. */
    if (ftruncate(r->lock_fd, 0) != 0) {
        /* Nothing to do: the lock itself goes away with the descriptor. */
    }
    close(r->lock_fd);
    r->lock_fd = -1;
}

/* ---- helpers ----------------------------------------------------------------------------- */

static int write_json(const char *path, json_object *o)
{
    size_t len = 0;
    const char *text = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE,
        &len);
    if (!text)
        return rl_error_set(RL_ENOMEM, "%s: cannot serialise JSON", path);
    char *buf = malloc(len + 1);
    if (!buf)
        return rl_error_set(RL_ENOMEM, "%s: out of memory", path);
    memcpy(buf, text, len);
    buf[len] = '\n';
    int rc = rl_fs_write_atomic(path, buf, len + 1, 0644);
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

/* Copies `src` to `dst` (new file) and hashes the bytes on the way. */
static int copy_and_hash(const char *src, const char *dst, char hex[65], uint64_t *size)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return rl_error_set_errno(errno == ENOENT ? RL_ENOENT : RL_EIO, errno, "map %s", src);
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        close(in);
        return rl_error_set_errno(RL_EIO, e, "map copy %s", dst);
    }
    rl_sha256_ctx *ctx = NULL;
    int rc = rl_sha256_begin(&ctx);
    char buf[65536];
    uint64_t total = 0;
    while (rc == RL_OK) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = rl_error_set_errno(RL_EIO, errno, "map %s: read", src);
            break;
        }
        if (n == 0)
            break;
        rc = rl_sha256_update(ctx, buf, (size_t)n);
        for (ssize_t off = 0; rc == RL_OK && off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                rc = rl_error_set_errno(errno == ENOSPC ? RL_ENOSPC : RL_EIO, errno,
                                        "map copy %s: write", dst);
            else
                off += w;
        }
        total += (uint64_t)n;
    }
    if (rc == RL_OK && fsync(out) != 0)
        rc = rl_error_set_errno(RL_EIO, errno, "map copy %s: fsync", dst);
    if (close(out) != 0 && rc == RL_OK)
        rc = rl_error_set_errno(RL_EIO, errno, "map copy %s: close", dst);
    close(in);
    uint8_t digest[RL_SHA256_LEN];
    if (ctx) {
        int frc = rl_sha256_finish(ctx, rc == RL_OK ? digest : NULL);
        if (rc == RL_OK)
            rc = frc;
    }
    if (rc == RL_OK) {
        rl_sha256_hex(digest, hex);
        *size = total;
    }
    return rc;
}

static int check_regular_file(const char *path, const char *what)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return rl_error_set_errno(errno == ENOENT ? RL_ENOENT : RL_EIO, errno, "%s %s", what,
                                  path);
    if (!S_ISREG(st.st_mode))
        return rl_error_set(RL_EINVAL, "%s %s: not a regular file", what, path);
    return RL_OK;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static json_object *recorder_config_json(const rl_recorder *r)
{
    const rl_record_options *o = &r->opts;
    json_object *c = json_object_new_object();
    json_object_object_add(c, "home", json_object_new_string(r->home));
    json_object_object_add(c, "lock_file", json_object_new_string(r->lock_path));
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
    json_object_object_add(c, "bag_format",
                           json_object_new_string(r->sink ? r->sink->name : "none"));
    return c;
}

static int reserve_run_id(rl_recorder *r, const char *experiments)
{
    char ids[PATH_MAX], target[PATH_MAX];
    int n = snprintf(ids, sizeof ids, "%s/.run-ids", experiments);
    if (n < 0 || (size_t)n >= sizeof ids)
        return rl_error_set(RL_ERANGE, "run directory: path too long");
    int rc = rl_fs_mkdirs(ids);
    if (rc < 0)
        return rc;
    rc = rl_path_join(r->id_link, sizeof r->id_link, ids, r->run_id);
    if (rc < 0)
        return rc;
    n = snprintf(target, sizeof target, "../%s", r->run_name);
    if (n < 0 || (size_t)n >= sizeof target)
        return rl_error_set(RL_ERANGE, "run directory: name too long");
    /* symlink(2) creates the name or fails, atomically: of two recorders racing for one
     * run id exactly one gets it, whatever their clocks say. */
    if (symlink(target, r->id_link) != 0) {
        int e = errno;
        if (e != EEXIST)
            return rl_error_set_errno(RL_EIO, e, "run id reservation %s", r->id_link);
        char held[PATH_MAX] = "";
        ssize_t len = readlink(r->id_link, held, sizeof held - 1);
        held[len > 0 ? len : 0] = '\0';
        r->id_link[0] = '\0';
        return rl_error_set(RL_EEXIST, "run id '%s' is already used by %s/%s; run ids are never "
                            "reused", r->run_id, experiments,
                            strncmp(held, "../", 3) == 0 ? held + 3 : held);
    }
    return RL_OK;
}

int rl_rec_prepare_dir(rl_recorder *r, const rl_record_run *run)
{
    int64_t now = rl_time_now_ns();
    char compact[RL_TIME_COMPACT_LEN];
    int rc = rl_time_format_compact(now, compact, sizeof compact);
    if (rc < 0)
        return rc;
    if (run->run_id) {
        rc = rl_record_check_run_id(run->run_id);
        if (rc < 0)
            return rc;
        snprintf(r->run_id, sizeof r->run_id, "%s", run->run_id);
    } else {
        snprintf(r->run_id, sizeof r->run_id, "run-%s-%ld", compact, (long)getpid());
    }
    if (run->vehicle_count && !run->vehicles)
        return rl_error_set(RL_EINVAL, "recorder prepare: vehicle list missing");

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
    if (run->map_path && (rc = check_regular_file(run->map_path, "map")) < 0)
        goto out_nodes;
    if (run->original_map_path &&
        (rc = check_regular_file(run->original_map_path, "original map")) < 0)
        goto out_nodes;

    char experiments[PATH_MAX];
    int n = snprintf(experiments, sizeof experiments, "%s/experiments", r->home);
    if (n < 0 || (size_t)n >= sizeof experiments) {
        rc = rl_error_set(RL_ERANGE, "run directory: path too long");
        goto out_nodes;
    }
    if ((rc = rl_fs_mkdirs(experiments)) < 0)
        goto out_nodes;
    uint64_t free_bytes = 0;
    if ((rc = rl_fs_free_bytes(experiments, &free_bytes)) < 0)
        goto out_nodes;
    if (free_bytes < r->opts.minimum_free_bytes) {
        rc = rl_error_set(RL_ENOSPC, "%s: %llu bytes free, minimum_free_bytes is %llu",
                          experiments, (unsigned long long)free_bytes,
                          (unsigned long long)r->opts.minimum_free_bytes);
        goto out_nodes;
    }
    snprintf(r->run_name, sizeof r->run_name, "%s_%s", compact, r->run_id);
    if ((rc = reserve_run_id(r, experiments)) < 0)
        goto out_nodes;
    rc = rl_fs_mkdir_new(experiments, r->run_name, RL_MKDIR_FAIL_IF_EXISTS, r->run_dir,
                         sizeof r->run_dir);
    if (rc < 0) {
        /* Someone else's directory (made without a reservation): not ours to point at. */
        unlink(r->id_link);
        r->run_dir[0] = '\0';
        goto out_nodes;
    }

    static const char *const subdirs[] = {"bag", "map", "config", "evaluations"};
    char path[PATH_MAX];
    for (size_t i = 0; rc == RL_OK && i < sizeof subdirs / sizeof subdirs[0]; i++) {
        rc = rl_path_join(path, sizeof path, r->run_dir, subdirs[i]);
        if (rc == RL_OK && mkdir(path, 0755) != 0)
            rc = rl_error_set_errno(RL_EIO, errno, "%s", path);
    }
    if (rc == RL_OK && run->map_path) {
        rl_path_sanitize_name(base_name(run->map_path), r->map_file);
        n = snprintf(path, sizeof path, "%s/map/%s", r->run_dir, r->map_file);
        rc = (n < 0 || (size_t)n >= sizeof path) ? rl_error_set(RL_ERANGE, "map path too long")
                                                 : copy_and_hash(run->map_path, path,
                                                                 r->map_sha256, &r->map_bytes);
        r->has_map = rc == RL_OK;
    }
    if (rc == RL_OK && run->original_map_path) {
        rl_path_sanitize_name(base_name(run->original_map_path), r->original_map_file);
        if (r->has_map && strcmp(r->original_map_file, r->map_file) == 0)
            rc = rl_error_set(RL_EINVAL, "original map %s has the runtime map's file name",
                              run->original_map_path);
        char hex[65];
        uint64_t sz;
        n = snprintf(path, sizeof path, "%s/map/%s", r->run_dir, r->original_map_file);
        if (rc == RL_OK)
            rc = (n < 0 || (size_t)n >= sizeof path)
                     ? rl_error_set(RL_ERANGE, "map path too long")
                     : copy_and_hash(run->original_map_path, path, hex, &sz);
        r->has_original_map = rc == RL_OK;
    }
    if (rc == RL_OK) {
        r->vehicle_count = run->vehicle_count;
        if (run->vehicle_count) {
            r->vehicles = malloc(run->vehicle_count * sizeof *r->vehicles);
            if (!r->vehicles)
                rc = rl_error_set(RL_ENOMEM, "recorder prepare: out of memory");
            else
                memcpy(r->vehicles, run->vehicles, run->vehicle_count * sizeof *r->vehicles);
        }
        r->planner = run->planner ? strdup(run->planner) : NULL;
        r->map_frame = run->map_frame ? strdup(run->map_frame) : NULL;
        if ((run->planner && !r->planner) || (run->map_frame && !r->map_frame))
            rc = rl_error_set(RL_ENOMEM, "recorder prepare: out of memory");
    }
    if (rc == RL_OK) {
        snprintf(r->bag_rel, sizeof r->bag_rel, "bag/%s.%s", r->run_id,
                 r->sink ? r->sink->name : "bag");
        rc = rl_path_join_rel(r->bag_path, sizeof r->bag_path, r->run_dir, r->bag_rel);
    }
    if (rc == RL_OK) {
        json_object *cfg = recorder_config_json(r);
        rc = rl_path_join_rel(path, sizeof path, r->run_dir, "config/recorder.json");
        if (rc == RL_OK)
            rc = cfg ? write_json(path, cfg) : rl_error_set(RL_ENOMEM, "out of memory");
        json_object_put(cfg);
    }
    if (rc == RL_OK) {
        rc = rl_path_join_rel(path, sizeof path, r->run_dir, "config/nodes.json");
        if (rc == RL_OK)
            rc = write_json(path, nodes);
    }
    if (rc < 0) {
        /* The half-made directory is ours (mkdir and the reservation say so) and was never
         * armed: remove it. The run id stays reserved; the link then dangles. */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", rl_error_last());
        rl_fs_remove_tree(r->run_dir);
        r->run_dir[0] = '\0';
        r->bag_path[0] = '\0';
        rl_error_set(rc, "%s", msg);
    }
out_nodes:
    json_object_put(nodes);
    return rc;
}

/* ---- manifest ------------------------------------------------------------------------------ */

static json_object *manifest_json(rl_recorder *r)
{
    rec_snapshot s;
    rl_rec_snapshot(r, &s);
    json_object *m = json_object_new_object();
    if (!m)
        return NULL;
    json_object_object_add(m, "format", json_object_new_string("runlab.record.manifest"));
    json_object_object_add(m, "format_version", json_object_new_int(1));
    json_object_object_add(m, "run_id", json_object_new_string(r->run_id));
    json_object_object_add(m, "directory", json_object_new_string(r->run_name));
    json_object_object_add(m, "host", json_object_new_string(r->host));
    json_object_object_add(m, "lab_domain", json_object_new_int(r->opts.lab_domain));
    json_object_object_add(m, "state", json_object_new_string(rl_record_state_name(s.state)));
    json_object *result = NULL;
    if (s.state >= RL_RECORD_COMPLETE) {
        result = json_object_new_object();
        json_object_object_add(result, "state",
                               json_object_new_string(rl_record_state_name(s.state)));
        json_object_object_add(result, "reason", json_object_new_string(s.reason));
    }
    json_object_object_add(m, "result", result);

    json_object *veh = json_object_new_array();
    for (size_t i = 0; i < r->vehicle_count; i++)
        json_object_array_add(veh, json_object_new_int(r->vehicles[i]));
    json_object_object_add(m, "vehicles", veh);
    json_object_object_add(m, "planner", str_or_null(r->planner));

    json_object *map = NULL;
    if (r->has_map) {
        char rel[RL_NAME_MAX + 8];
        map = json_object_new_object();
        snprintf(rel, sizeof rel, "map/%s", r->map_file);
        json_object_object_add(map, "file", json_object_new_string(rel));
        json_object_object_add(map, "sha256", json_object_new_string(r->map_sha256));
        json_object_object_add(map, "bytes", json_object_new_int64((int64_t)r->map_bytes));
        json_object_object_add(map, "frame", str_or_null(r->map_frame));
        json_object *orig = NULL;
        if (r->has_original_map) {
            snprintf(rel, sizeof rel, "map/%s", r->original_map_file);
            orig = json_object_new_string(rel);
        }
        json_object_object_add(map, "original_file", orig);
    }
    json_object_object_add(m, "map", map);

    json_object *st = json_object_new_object();
    json_object_object_add(st, "prepare", stamp_json(s.prepare_ns));
    json_object_object_add(st, "begin", stamp_json(s.begin_ns));
    json_object_object_add(st, "start", stamp_json(s.start_ns));
    json_object_object_add(st, "stop", stamp_json(s.stop_ns));
    json_object_object_add(st, "finish", stamp_json(s.finish_ns));
    json_object_object_add(m, "stamps", st);

    json_object *bag = json_object_new_object();
    json_object_object_add(bag, "file", json_object_new_string(r->bag_rel));
    json_object_object_add(bag, "format", json_object_new_string(r->sink ? r->sink->name : "none"));
    json_object_object_add(bag, "compression",
                           json_object_new_string(rl_record_compression_name(r->opts.compression)));
    json_object_object_add(bag, "keep_outside", json_object_new_boolean(r->opts.keep_outside != 0));
    json_object_object_add(m, "bag", bag);

    uint64_t tot[6] = {0};
    static const char *const names[6] = {"received", "inside", "outside", "written", "dropped",
                                         "bytes"};
    json_object *topics = json_object_new_array();
    unsigned nt = atomic_load_explicit(&r->ntopics, memory_order_acquire);
    for (unsigned i = 0; i < nt; i++) {
        rl_record_topic_stats ts;
        rl_recorder_topic_stats(r, (uint16_t)i, &ts);
        rec_topic *t = r->topics[i];
        uint64_t v[6] = {ts.received, ts.inside, ts.outside, ts.written, ts.dropped, ts.bytes};
        json_object *o = json_object_new_object();
        json_object_object_add(o, "topic", json_object_new_string(t->name));
        json_object_object_add(o, "schema", json_object_new_string(t->schema_name));
        json_object_object_add(o, "message_encoding", json_object_new_string(t->message_encoding));
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

    json_object *rl = json_object_new_object();
    json_object_object_add(rl, "version", json_object_new_string(r->version));
    json_object_object_add(rl, "build_revision", json_object_new_string(rl_build_sha()));
    json_object_object_add(rl, "build_dirty", json_object_new_boolean(rl_build_is_dirty()));
    json_object_object_add(m, "runlab", rl);
    return m;
}

int rl_rec_write_manifest(rl_recorder *r)
{
    if (!r->run_dir[0])
        return rl_error_set(RL_ESTATE, "manifest: no run directory");
    pthread_mutex_lock(&r->manifest_mu);
    char path[PATH_MAX];
    int rc = rl_path_join(path, sizeof path, r->run_dir, "manifest.json");
    json_object *m = rc == RL_OK ? manifest_json(r) : NULL;
    if (rc == RL_OK)
        rc = m ? write_json(path, m) : rl_error_set(RL_ENOMEM, "manifest: out of memory");
    json_object_put(m);
    pthread_mutex_unlock(&r->manifest_mu);
    return rc;
}
