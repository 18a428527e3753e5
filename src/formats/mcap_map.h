/* Private: a whole MCAP file made readable in memory, mapped read-only when possible and
 * read into a buffer otherwise (pipes). Shared by the streamed and the indexed reader. */
#ifndef RUNLAB_MCAP_MAP_H
#define RUNLAB_MCAP_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct mcap_file {
    const uint8_t *data;
    size_t len;
    void *map;
    size_t map_len;
    uint8_t *owned;
} mcap_file;

int mcap_file_open(mcap_file *f, const char *path);
void mcap_file_close(mcap_file *f);

#endif
