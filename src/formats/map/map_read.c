/* The map family's entries for files of any format: rl_map_source_read_file detects the
 * format and hands the bytes to the Lanelet2 or CommonRoad reader; rl_map_load opens a
 * runtime map as it is or reads, compiles and opens a source. They only call down (the
 * readers, rlmap_compile.c, rlmap_load.c); none of those calls back. */
#include "map_internal.h"

#include "runlab/error.h"
#include "runlab/fs.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

enum { MAP_MAX_FILE = 1u << 30 };

int rl_map_source_read_file(const char *path, const rl_map_read_options *o, rl_map_source **out)
{
    char *data = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = rl_fs_read_all(path, MAP_MAX_FILE, &data, &len);
    if (rc < 0)
        return rc;
    switch (rl_map_detect_format(data, len)) {
    case RL_MAP_FORMAT_LANELET2: rc = rl_lanelet2_read_mem(data, len, path, o, out); break;
    case RL_MAP_FORMAT_COMMONROAD: rc = rl_commonroad_read_mem(data, len, path, o, out); break;
    case RL_MAP_FORMAT_RUNTIME:
        rc = rl_error_set(RL_EINVAL, "%s: a compiled runtime map, not a map source", path);
        break;
    default:
        rc = rl_error_set(RL_EPARSE,
                          "%s: not a map file (expected an <osm> or <commonRoad> XML root)", path);
    }
    free(data);
    return rc;
}

int rl_map_load(const char *path, const rl_map_read_options *o, rl_map **out,
                rl_map_source **src_out)
{
    *out = NULL;
    if (src_out)
        *src_out = NULL;
    uint8_t magic[8] = {0};
    int fd = rl_fs_open_input(path, NULL);
    if (fd < 0)
        return fd;
    ssize_t got = read(fd, magic, sizeof magic);
    close(fd);
    if (got == (ssize_t)sizeof magic && rl_map_detect_format(magic, 8) == RL_MAP_FORMAT_RUNTIME)
        return rl_map_open_file(path, out);
    rl_map_source *src = NULL;
    int rc = rl_map_source_read_file(path, o, &src);
    void *bytes = NULL;
    size_t len = 0;
    if (rc == RL_OK)
        rc = rl_map_compile(src, NULL, &bytes, &len);
    if (rc == RL_OK)
        rc = rl_map_open_mem(bytes, len, 0, out);
    if (rc < 0) {
        free(bytes);
        rl_map_source_free(src);
        return rc;
    }
    (*out)->owned = bytes;
    if (src_out)
        *src_out = src;
    else
        rl_map_source_free(src);
    return RL_OK;
}
