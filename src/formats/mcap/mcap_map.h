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
    int fd; /* the mapped file's descriptor, open while `map` is set (for pread) */
    uint8_t *owned;
} mcap_file;

int mcap_file_open(mcap_file *f, const char *path);
/* Copies `len` bytes at `at` of a mapped file into `buf` with pread(2), without touching
 * the mapping (no page faults, nothing left resident). RL_OK; RL_EIO or RL_ETRUNCATED
 * (file shorter than when mapped), with a message, otherwise; RL_EINVAL when not mapped. */
int mcap_file_pread(const mcap_file *f, void *buf, size_t len, size_t at);
/* mcap_file_pread into a buffer kept between calls (`*buf`, `*cap` bytes), replaced by a
 * larger one first when it is too small (its old bytes are not kept). Errors as
 * mcap_file_pread, plus RL_ENOMEM naming the record at `at`. */
int mcap_file_pread_into(const mcap_file *f, uint8_t **buf, size_t *cap, size_t len,
                         size_t at);
/* Lets the kernel drop the resident pages of [from, to) of a mapped file (whole pages
 * inside the range), so reading a large file does not keep every page read counted in
 * the process's memory. The bytes stay readable (pages come back from the page cache on
 * the next access), so pointers into the range remain valid. No-op for files read into
 * memory and for files under MCAP_RELEASE_MIN bytes. */
void mcap_file_release(mcap_file *f, size_t from, size_t to);
/* For a reader moving forward: releases everything before `pos` less a margin, in steps
 * of MCAP_RELEASE_STEP bytes; `*released` is how far was released already. */
void mcap_file_passed(mcap_file *f, size_t pos, size_t *released);
#define MCAP_RELEASE_MIN ((size_t)64 << 20)
#define MCAP_RELEASE_STEP ((size_t)16 << 20)
void mcap_file_close(mcap_file *f);

#endif
