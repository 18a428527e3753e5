/* Memory for the run loader's column blocks (internal to src/analysis/runs.c): blocks
 * carved from 2 MiB-page slabs, shared by reference count, so loading thousands of runs
 * maps a few huge pages instead of faulting in 4 KiB pages one by one (costly under
 * virtualisation). */
#ifndef RL_ANALYSIS_RUN_COLUMNS_H
#define RL_ANALYSIS_RUN_COLUMNS_H

#include <stddef.h>

/* One loading thread's current slab. Zero-initialise; rl_column_arena_release at the end.
 * Used by one thread at a time. */
typedef struct rl_column_arena {
    struct rl_column_slab *slab;
    char *next, *limit;
} rl_column_arena;

/* A block of `bytes` (64-byte aligned, its pages mapped in), from the arena's slab when it
 * is small enough, else from malloc; `arena` may be NULL (malloc). NULL when out of
 * memory. Free with rl_columns_free from any thread. */
void *rl_columns_alloc(rl_column_arena *arena, size_t bytes);
/* Frees a block of rl_columns_alloc (NULL: nothing); its slab goes when its last block and
 * its arena are gone. Thread-safe. */
void rl_columns_free(void *block);
/* Drops the arena's hold on its slab (the blocks stay valid). */
void rl_column_arena_release(rl_column_arena *arena);

#endif
