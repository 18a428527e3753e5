/* The recorder node's watch over the control flow that drives its run (lab_control.c): the
 * control heartbeat's arming rule and timeout, apart from DDS and the clock so that the
 * boundary can be tested with made-up times, and the check of the control descriptor. */
#ifndef RUNLAB_SRC_LAB_CONTROL_H
#define RUNLAB_SRC_LAB_CONTROL_H

#include "runlab/record.h"

#include <stddef.h>
#include <stdint.h>

typedef struct lab_control_watch {
    int64_t timeout_ns;   /* 0: heartbeats never time out */
    char run_id[80];      /* the run a heartbeat named last; "" before any */
    char source[80], host[256];
    int pid;
    int64_t last_seen_ns; /* monotonic: when the node took that heartbeat */
} lab_control_watch;

/* An unarmed watch with the node's control timeout. */
void lab_control_watch_init(lab_control_watch *w, int64_t timeout_ns);

/* A heartbeat from `source` (on `host`, `pid`) naming `hb_run_id`, taken at `now_ns`. It
 * counts only when it names the node's current run `run_id` while that run is ARMED or
 * RECORDING: a control flow arms the timeout for its run by its first heartbeat, and a
 * heartbeat of another control flow, run or an ended run changes nothing. */
void lab_control_beat(lab_control_watch *w, const char *hb_run_id, const char *source,
                      const char *host, int pid, const char *run_id, rl_record_state state,
                      int64_t now_ns);

/* 1 when the node's run `run_id` (ARMED or RECORDING) has lost its control flow at `now_ns`:
 * a heartbeat named it and none has come for longer than the timeout (silence of exactly
 * the timeout is not yet a loss). `why` (cap bytes) then says so: "control flow lost: no
 * heartbeat from <source> (host H, pid P) for N ms". Else 0. */
int lab_control_lost(const lab_control_watch *w, const char *run_id, rl_record_state state,
                     int64_t now_ns, char *why, size_t cap);

/* 1 when descriptor `fd` has reached end of file or hung up (the writer is gone), else 0;
 * never blocks. Bytes written into it are read and ignored. */
int lab_control_fd_closed(int fd);

#endif
