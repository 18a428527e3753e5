/* The run's map for the recorder's prepare (record_dir.h): a runtime map is stored as it
 * is, a Lanelet2 or CommonRoad original is read and compiled first and stored beside its
 * runtime map, so every run directory holds map/runtime_map.bin whatever it was given,
 * and the manifest can name both hashes, the format and the frame. */
#include "engines/record_dir.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"
#include "runlab/map.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static const char *format_name(rl_map_format f)
{
    switch (f) {
    case RL_MAP_FORMAT_LANELET2: return "lanelet2";
    case RL_MAP_FORMAT_COMMONROAD: return "commonroad";
    case RL_MAP_FORMAT_RUNTIME: return "runtime";
    case RL_MAP_FORMAT_UNKNOWN: break;
    }
    return "unknown";
}

static void hex_of(const uint8_t digest[RL_SHA256_LEN], char hex[65])
{
    rl_sha256_hex(digest, hex);
}

/* Facts of a loaded map that the manifest names, apart from the stored files' hashes. */
static void describe_loaded(const struct rl_map *map, rec_map_info *mi)
{
    rl_map_info info;
    rl_map_get_info(map, &info);
    mi->present = 1;
    snprintf(mi->format, sizeof mi->format, "%s", format_name(info.source_format));
    snprintf(mi->projection, sizeof mi->projection, "%s", rl_map_projection_name(info.projection));
    mi->has_origin = info.projection == RL_MAP_PROJ_LTP || info.projection == RL_MAP_PROJ_UTM ||
                     info.projection == RL_MAP_PROJ_SMERC;
    mi->origin_lat = mi->has_origin ? info.origin_lat : 0;
    mi->origin_lon = mi->has_origin ? info.origin_lon : 0;
    hex_of(info.source_sha256, mi->source_sha256);
}

int rl_rec_map_open(const rl_record_run *run, rec_map_input *in, rec_map_info *mi)
{
    memset(in, 0, sizeof *in);
    memset(mi, 0, sizeof *mi);
    if (!run->map_path) {
        if (run->original_map_path)
            return rl_error_set(RL_EINVAL, "original map %s given without a map",
                                run->original_map_path);
        return RL_OK;
    }
    int rc = check_regular_file(run->map_path, "map");
    if (rc < 0)
        return rc;
    if (run->original_map_path && (rc = check_regular_file(run->original_map_path,
                                                           "original map")) < 0)
        return rc;
    rl_map_read_options ro;
    if (run->map_options) {
        ro = *run->map_options;
    } else {
        rl_map_read_options_init(&ro);
        ro.quiet = true; /* degenerate lanelets are the map's business, not the run's */
    }
    rl_map_source *src = NULL;
    rc = rl_map_load(run->map_path, &ro, &in->map, &src);
    if (rc < 0)
        return rl_error_prefix(rc, "map");
    describe_loaded(in->map, mi);
    snprintf(mi->frame, sizeof mi->frame, "%s", run->map_frame ? run->map_frame : "map");
    const char *original = src ? run->map_path : run->original_map_path;
    rl_map_source_free(src);
    if (src && run->original_map_path) {
        rc = rl_error_set(RL_EINVAL,
                          "original map %s: %s is an original map itself (give a runtime map "
                          "with an original, or the original alone)",
                          run->original_map_path, run->map_path);
    } else if (!src && run->original_map_path) {
        /* The pair must belong together: the runtime map records its source's hash. */
        uint8_t d[RL_SHA256_LEN];
        char hex[65];
        rc = rl_sha256_file(run->original_map_path, d, NULL);
        if (rc == RL_OK) {
            hex_of(d, hex);
            if (strcmp(hex, mi->source_sha256) != 0)
                rc = rl_error_set(RL_EINVAL,
                                  "original map %s (sha256 %s) is not the source of runtime map "
                                  "%s (compiled from sha256 %s)",
                                  run->original_map_path, hex, run->map_path, mi->source_sha256);
        }
    }
    if (rc == RL_OK && original) {
        rl_path_sanitize_name(base_name(original), mi->original_file);
        if (strcmp(mi->original_file, RL_REC_RUNTIME_MAP_NAME) == 0)
            rc = rl_error_set(RL_EINVAL, "original map %s: the name %s is the runtime map's",
                              original, RL_REC_RUNTIME_MAP_NAME);
        in->original_path = original;
    }
    if (rc < 0)
        rl_rec_map_close(in);
    return rc;
}

void rl_rec_map_close(rec_map_input *in)
{
    rl_map_close(in->map);
    in->map = NULL;
}

/* Copies `src` to `dst` (new file, fsynced) and hashes the bytes on the way. */
static int copy_and_hash(const char *src, const char *dst, char hex[65], uint64_t *size)
{
    uint64_t src_size = 0;
    int in = rl_fs_open_input(src, &src_size); /* a FIFO or a device is refused */
    if (in < 0)
        return rl_error_prefix(in, "map");
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
    while (rc == RL_OK && total < src_size) { /* no further than the size at open */
        size_t want = src_size - total < sizeof buf ? (size_t)(src_size - total) : sizeof buf;
        ssize_t n = read(in, buf, want);
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
        hex_of(digest, hex);
        *size = total;
    }
    return rc;
}

int rl_rec_map_store(const rec_map_input *in, const char *run_dir, rec_map_info *mi)
{
    if (!in->map)
        return RL_OK;
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/map/%s", run_dir, RL_REC_RUNTIME_MAP_NAME);
    if (n < 0 || (size_t)n >= sizeof path)
        return rl_error_set(RL_ERANGE, "map path too long");
    size_t len = 0;
    const void *bytes = rl_map_bytes(in->map, &len);
    uint8_t d[RL_SHA256_LEN];
    int rc = rl_fs_write_atomic(path, bytes, len, 0644);
    if (rc < 0)
        return rl_error_prefix(rc, "%s", path);
    if ((rc = rl_sha256(bytes, len, d)) < 0)
        return rc;
    hex_of(d, mi->runtime_sha256);
    mi->runtime_bytes = len;
    if (!in->original_path)
        return RL_OK;
    n = snprintf(path, sizeof path, "%s/map/%s", run_dir, mi->original_file);
    if (n < 0 || (size_t)n >= sizeof path)
        return rl_error_set(RL_ERANGE, "map path too long");
    char hex[65];
    if ((rc = copy_and_hash(in->original_path, path, hex, &mi->source_bytes)) < 0)
        return rc;
    /* The file read at open and the one copied now must be the same bytes. */
    if (strcmp(hex, mi->source_sha256) != 0)
        return rl_error_set(RL_EIO, "map %s changed while the run was prepared (sha256 %s, "
                            "read as %s)", in->original_path, hex, mi->source_sha256);
    return RL_OK;
}

int rl_rec_map_describe(const char *run_dir, const char *frame, rec_map_info *mi)
{
    memset(mi, 0, sizeof *mi);
    char dir[PATH_MAX], path[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s/map", run_dir);
    if (n < 0 || (size_t)n >= sizeof dir ||
        (size_t)snprintf(path, sizeof path, "%s/%s", dir, RL_REC_RUNTIME_MAP_NAME) >= sizeof path)
        return rl_error_set(RL_ERANGE, "%s: map path too long", run_dir);
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return RL_OK;
    rl_map_read_options ro;
    rl_map_read_options_init(&ro);
    ro.quiet = true;
    struct rl_map *map = NULL;
    rl_map_source *src = NULL;
    int rc = rl_map_load(path, &ro, &map, &src);
    rl_map_source_free(src);
    if (rc < 0)
        return rl_error_prefix(rc, "map");
    describe_loaded(map, mi);
    rl_map_close(map);
    snprintf(mi->frame, sizeof mi->frame, "%s", frame ? frame : "map");
    uint8_t d[RL_SHA256_LEN];
    if ((rc = rl_sha256_file(path, d, &mi->runtime_bytes)) < 0)
        return rc;
    hex_of(d, mi->runtime_sha256);
    /* The original is whichever other file in map/ has the hash the runtime map records. */
    DIR *dp = opendir(dir);
    if (!dp)
        return RL_OK;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, RL_REC_RUNTIME_MAP_NAME) == 0 ||
            strlen(e->d_name) >= sizeof mi->original_file)
            continue;
        char other[PATH_MAX];
        uint64_t size = 0;
        char hex[65];
        if ((size_t)snprintf(other, sizeof other, "%s/%s", dir, e->d_name) >= sizeof other ||
            stat(other, &st) != 0 || !S_ISREG(st.st_mode) || rl_sha256_file(other, d, &size) != RL_OK)
            continue;
        hex_of(d, hex);
        if (strcmp(hex, mi->source_sha256) == 0) {
            memcpy(mi->original_file, e->d_name, strlen(e->d_name) + 1); /* length checked above */
            mi->source_bytes = size;
            break;
        }
    }
    closedir(dp);
    return RL_OK;
}
