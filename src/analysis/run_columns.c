/* Column memory of the run loader (run_columns.h): 32 MiB slabs whose pages are mapped in
 * one call per block, each block carrying a 64-byte header that names its slab; a slab is
 * unmapped when its reference count (one per block plus one for the arena filling it)
 * drops to zero. Big blocks and the single-run loader use malloc. */
#include "analysis/run_columns.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

enum { SLAB_BYTES = 32 << 20, HUGE_PAGE = 2 << 20, HEADER = 64 };

struct rl_column_slab {
    atomic_size_t refs;
};

/* Sits in the HEADER bytes before each block. */
struct block_header {
    struct rl_column_slab *slab; /* NULL: the block (with its header) came from malloc */
};

/* Maps in the pages of [p, p + len) with one system call, instead of one fault per page
 * as they are first written. Only a hint. */
static void populate(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = 4096;
    uintptr_t a = (uintptr_t)p & ~(page - 1);
    uintptr_t b = ((uintptr_t)p + len + page - 1) & ~(page - 1);
    (void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)len;
#endif
}

/* A new slab aligned to 2 MiB (the mapping is trimmed to it), so that where transparent
 * huge pages are on for all memory the kernel can back it with them. It is not advised as
 * transparent huge pages: with the kernel's usual `defrag=madvise`, an advised region is
 * compacted on fault, and after writing the CSVs the page cache is fragmented enough that
 * this stalled loading. bench_runs: loader CPU 4.5-4.9 s with the advice, 2.7 s without;
 * zeroing huge pages had been 30 % of all samples in `perf`. */
static struct rl_column_slab *slab_new(void)
{
    size_t len = (size_t)SLAB_BYTES + HUGE_PAGE;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *base = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (base > m)
        munmap(m, (size_t)(base - m));
    size_t tail = (size_t)(m + len - (base + SLAB_BYTES));
    if (tail)
        munmap(base + SLAB_BYTES, tail);
    struct rl_column_slab *slab = (struct rl_column_slab *)base;
    atomic_init(&slab->refs, 1);
    return slab;
}

static void slab_put(struct rl_column_slab *slab)
{
    if (slab && atomic_fetch_sub_explicit(&slab->refs, 1, memory_order_acq_rel) == 1)
        munmap(slab, SLAB_BYTES);
}

void *rl_columns_alloc(rl_column_arena *arena, size_t bytes)
{
    if (bytes > SIZE_MAX - 2 * HEADER)
        return NULL;
    size_t need = HEADER + ((bytes + HEADER - 1) & ~(size_t)(HEADER - 1));
    if (!arena || need > SLAB_BYTES / 4) {
        char *m = aligned_alloc(HEADER, need);
        if (!m)
            return NULL;
        ((struct block_header *)m)->slab = NULL;
        populate(m + HEADER, bytes);
        return m + HEADER;
    }
    if (!arena->slab || (size_t)(arena->limit - arena->next) < need) {
        struct rl_column_slab *slab = slab_new();
        if (!slab)
            return NULL;
        slab_put(arena->slab);
        arena->slab = slab;
        arena->next = (char *)slab + HEADER;
        arena->limit = (char *)slab + SLAB_BYTES;
    }
    char *m = arena->next;
    arena->next += need;
    atomic_fetch_add_explicit(&arena->slab->refs, 1, memory_order_relaxed);
    ((struct block_header *)m)->slab = arena->slab;
    populate(m + HEADER, bytes);
    return m + HEADER;
}

void rl_columns_free(void *block)
{
    if (!block)
        return;
    char *m = (char *)block - HEADER;
    struct rl_column_slab *slab = ((struct block_header *)m)->slab;
    if (slab)
        slab_put(slab);
    else
        free(m);
}

void rl_column_arena_release(rl_column_arena *arena)
{
    slab_put(arena->slab);
    arena->slab = NULL;
    arena->next = arena->limit = NULL;
}
