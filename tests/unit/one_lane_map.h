/* A one-lanelet map for the evaluation's geometry tests: a CommonRoad lanelet covering
 * [0,10] x [0,1] (right bound y = 0, left bound y = 1), read, compiled and opened in memory
 * through the public map API. Header-only (static). */
#ifndef RL_TEST_ONE_LANE_MAP_H
#define RL_TEST_ONE_LANE_MAP_H

#include "rl_test.h"
#include "runlab/error.h"
#include "runlab/map.h"

#include <stdlib.h>
#include <string.h>

typedef struct one_lane_map {
    rl_map_source *src;
    void *bytes;
    size_t len;
    rl_map *map;
} one_lane_map;

static void one_lane_map_open(one_lane_map *m)
{
    static const char xml[] =
        "<?xml version=\"1.0\"?>\n<commonRoad commonRoadVersion=\"2020a\" benchmarkID=\"T-1\">"
        "<lanelet id=\"1\"><leftBound><point><x>0</x><y>1</y></point><point><x>10</x><y>1</y>"
        "</point></leftBound><rightBound><point><x>0</x><y>0</y></point><point><x>10</x>"
        "<y>0</y></point></rightBound></lanelet></commonRoad>\n";
    rl_map_read_options o;
    rl_map_read_options_init(&o);
    o.quiet = true;
    assert_int_equal(rl_commonroad_read_mem(xml, strlen(xml), "t.xml", &o, &m->src), RL_OK);
    assert_int_equal(rl_map_compile(m->src, NULL, &m->bytes, &m->len), RL_OK);
    assert_int_equal(rl_map_open_mem(m->bytes, m->len, 0, &m->map), RL_OK);
}

static void one_lane_map_close(one_lane_map *m)
{
    rl_map_close(m->map);
    free(m->bytes);
    rl_map_source_free(m->src);
    memset(m, 0, sizeof *m);
}

#endif
