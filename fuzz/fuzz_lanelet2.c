/* libFuzzer target for the Lanelet2 OSM reader: reads the input with automatic and metric
 * positions, requires a positioned RL_EPARSE message on failure, and compiles, opens and
 * queries every map it accepts (indexed answers equal brute force). */
#include "map_exercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const rl_map_projection projs[] = {RL_MAP_PROJ_AUTO, RL_MAP_PROJ_METRIC};
    for (size_t i = 0; i < 2; i++) {
        rl_map_read_options o;
        rl_map_read_options_init(&o);
        o.quiet = true;
        o.projection = projs[i];
        rl_map_source *src = NULL;
        int rc = rl_lanelet2_read_mem((const char *)data, size, "fuzz.osm", &o, &src);
        if (rc != RL_OK) {
            MAP_CHECK(src == NULL);
            MAP_CHECK(rc == RL_EPARSE || rc == RL_ERANGE || rc == RL_ENOMEM || rc == RL_EINVAL);
            MAP_CHECK(strncmp(rl_error_last(), "fuzz.osm", 8) == 0 || rc != RL_EPARSE);
            continue;
        }
        exercise_source(src, data, size);
        rl_map_source_free(src);
    }
    return 0;
}
