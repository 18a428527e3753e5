/* libFuzzer target for the CommonRoad XML reader: a positioned RL_EPARSE message on
 * failure; every accepted map is compiled, opened and queried (indexed answers equal
 * brute force). */
#include "map_exercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rl_map_read_options o;
    rl_map_read_options_init(&o);
    o.quiet = true;
    rl_map_source *src = NULL;
    int rc = rl_commonroad_read_mem((const char *)data, size, "fuzz.xml", &o, &src);
    if (rc != RL_OK) {
        MAP_CHECK(src == NULL);
        MAP_CHECK(rc == RL_EPARSE || rc == RL_ERANGE || rc == RL_ENOMEM);
        MAP_CHECK(strncmp(rl_error_last(), "fuzz.xml", 8) == 0 || rc != RL_EPARSE);
        return 0;
    }
    exercise_source(src, data, size);
    rl_map_source_free(src);
    return 0;
}
