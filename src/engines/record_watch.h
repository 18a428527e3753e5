/* The recorder monitor's judgement of the writer, apart from the clock: how long the
 * writer has gone without progress (or sat in one fsync) in time the monitor watched,
 * and which gaps between the monitor's wakes were pauses of the whole process.
 * record_monitor.c feeds it the monotonic times it reads (record_disk.c asks it about free
 * space); tests feed it times at each boundary. */
#ifndef RUNLAB_RECORD_WATCH_H
#define RUNLAB_RECORD_WATCH_H

#include <stdbool.h>
#include <stdint.h>

typedef struct rec_watch {
    int64_t stall_limit_ns;  /* quiet for longer than this is a stall */
    int64_t paused_after_ns; /* a gap between wakes longer than this is a pause */
    int64_t last_wake_ns;
    int64_t seen_progress, seen_sync; /* the stamps seen at the previous tick */
    int64_t quiet_ns, sync_quiet_ns;  /* watched time without progress / in one fsync */
} rec_watch;

/* What one tick found. */
typedef struct rec_watch_step {
    int64_t paused_ns;  /* > 0: the whole process was paused this long (not watched) */
    bool stalled;       /* the writer made no progress for longer than the stall limit */
    bool sync_stalled;  /* one fsync has lasted longer than the stall limit */
    int64_t quiet_ns, sync_quiet_ns;
} rec_watch_step;

/* The pause threshold: half the stall limit, and never under four ticks (a monitor that
 * misses a few ticks on a loaded machine has not been paused). */
int64_t rec_watch_pause_threshold(int64_t stall_limit_ns, int64_t tick_ns);

/* Starts watching at `now_ns` (the monitor's first wake). */
void rec_watch_init(rec_watch *w, int64_t now_ns, int64_t stall_limit_ns, int64_t tick_ns);

/* One wake of the monitor at `now_ns`: `progress` is the writer's last progress stamp,
 * `syncing` the start of the fsync in flight (0: none). A stall is reported on every
 * tick while it lasts; the caller acts on the first. Pure arithmetic: no clock, no lock. */
rec_watch_step rec_watch_tick(rec_watch *w, int64_t now_ns, int64_t progress, int64_t syncing);

/* Whether `free_bytes` on the run's filesystem is below the recorder's minimum (the
 * minimum itself is enough). */
bool rec_free_space_low(uint64_t free_bytes, uint64_t minimum_free_bytes);

#endif
