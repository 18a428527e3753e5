/* libFuzzer target for opening runtime maps: the input (copied to aligned memory) is
 * opened with the CRC check off, so mutations reach the structural checks; a map that
 * opens must answer every query without reading out of bounds. */
#include "map_exercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t *copy = malloc(size / 8 * 8 + 8);
    MAP_CHECK(copy != NULL);
    if (size)
        memcpy(copy, data, size);
    rl_map *m = NULL;
    int rc = rl_map_open_mem(copy, size, RL_MAP_OPEN_NO_CRC, &m);
    if (rc == RL_OK) {
        exercise_map(m, data, size, false);
        rl_map_close(m);
    } else {
        MAP_CHECK(m == NULL);
        MAP_CHECK(rc == RL_EPARSE || rc == RL_EUNSUPPORTED || rc == RL_EINVAL || rc == RL_ECRC);
    }
    /* With the CRC on, only the compiled bytes themselves open. */
    if (rl_map_open_mem(copy, size, 0, &m) == RL_OK)
        rl_map_close(m);
    free(copy);
    return 0;
}
