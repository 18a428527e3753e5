/* Shared by the map fuzz targets: runs every query of an opened runtime map at a few
 * points and boxes derived from the input, and checks that the indexed answers equal the
 * brute-force ones. A broken invariant aborts so libFuzzer keeps the input. */
#ifndef RUNLAB_FUZZ_MAP_EXERCISE_H
#define RUNLAB_FUZZ_MAP_EXERCISE_H

#include "runlab/error.h"
#include "runlab/map.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAP_CHECK(cond)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__,      \
                    #cond, rl_error_last());                                                       \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* `consistent`: the map was compiled here, so its index must agree with its polygons. */
static inline void exercise_map(const rl_map *m, const uint8_t *data, size_t size, bool consistent)
{
    rl_map_info in;
    rl_map_get_info(m, &in);
    size_t n = rl_map_lanelet_count(m);
    for (unsigned k = 0; k < 16; k++) {
        uint8_t b0 = size ? data[(k * 7) % size] : 0, b1 = size ? data[(k * 13 + 1) % size] : 0;
        double x = in.xmin + (in.xmax - in.xmin) * (b0 / 255.0) * 1.2 - 0.1 * (in.xmax - in.xmin);
        double y = in.ymin + (in.ymax - in.ymin) * (b1 / 255.0) * 1.2 - 0.1 * (in.ymax - in.ymin);
        bool inside = rl_map_point_drivable(m, x, y);
        bool brute = rl_map_point_drivable_brute(m, x, y);
        uint32_t ids[8];
        size_t c = rl_map_lanelets_at(m, x, y, ids, 8);
        rl_map_where w;
        rl_map_where_is(m, x, y, &w);
        if (consistent) {
            MAP_CHECK(inside == brute);
            MAP_CHECK((c > 0) == inside);
            MAP_CHECK(w.inside == inside);
        }
        if (n) {
            size_t i = (size_t)(b0 + b1) % n;
            rl_map_frenet f;
            rl_map_lanelet_frenet(m, i, x, y, &f);
            const uint32_t *links;
            size_t ns = rl_map_successors(m, i, &links);
            for (size_t j = 0; j < ns; j++)
                MAP_CHECK(links[j] < n);
        }
        rl_map_box box = {x, y, b0 * 0.05, 0.01 + b1 * 0.001, 0.01 + b0 * 0.0005};
        (void)rl_map_footprint_inside(m, &box, (k & 1) ? 0.001 : 0);
    }
}

/* Compiles a source read from fuzz input, opens it and exercises it. */
static inline void exercise_source(const rl_map_source *src, const uint8_t *data, size_t size)
{
    void *bytes = NULL;
    size_t len = 0;
    int rc = rl_map_compile(src, NULL, &bytes, &len);
    if (rc != RL_OK) {
        MAP_CHECK(rc == RL_ERANGE || rc == RL_ENOMEM || rc == RL_EINVAL);
        return;
    }
    rl_map *m = NULL;
    MAP_CHECK(rl_map_open_mem(bytes, len, 0, &m) == RL_OK);
    MAP_CHECK(rl_map_lanelet_count(m) == src->num_lanelets);
    exercise_map(m, data, size, true);
    rl_map_close(m);
    free(bytes);
}

#endif
