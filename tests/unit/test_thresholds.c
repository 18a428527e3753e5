/* Every threshold that turns a status, tested at its boundary, one nanosecond (or byte)
 * below it and one above, with made-up times instead of the clock: the recorder's stall
 * limit (writer and fsync), its pause threshold and its minimum free space; the bench
 * harness's time limit (max_time + grace, the 30 s setup allowance of docs/bench.md) and
 * its memory limit; the experiment's heartbeat timeout; the recorder node's control flow
 * timeout. */
#include "rl_test.h"

#include "engines/bench_internal.h"
#include "engines/record_watch.h"
#include "lab/lab_control.h"
#include "runlab/lab.h"

#define MS 1000000ll

/* The writer makes progress at t = 0 and then none: quiet time equal to the limit is
 * allowed, one nanosecond more is a stall. Ticks come every 50 ms, as in the monitor. */
static rec_watch_step quiet_for(int64_t limit, int64_t quiet)
{
    rec_watch w;
    const int64_t tick = 50 * MS;
    rec_watch_init(&w, 0, limit, tick);
    rec_watch_tick(&w, 1, 1, 0); /* progress at t = 1, seen at once */
    int64_t t = 1;
    while (t + tick < quiet + 1) {
        t += tick;
        assert_false(rec_watch_tick(&w, t, 1, 0).stalled);
    }
    return rec_watch_tick(&w, quiet + 1, 1, 0);
}

static void stall_limit_boundary(void **state)
{
    (void)state;
    const int64_t limit = 2000 * MS;
    rec_watch_step s = quiet_for(limit, limit - 1);
    assert_int_equal(s.quiet_ns, limit - 1);
    assert_false(s.stalled);
    s = quiet_for(limit, limit);
    assert_int_equal(s.quiet_ns, limit);
    assert_false(s.stalled);
    s = quiet_for(limit, limit + 1);
    assert_int_equal(s.quiet_ns, limit + 1);
    assert_true(s.stalled);
    assert_int_equal(s.paused_ns, 0);
    /* Progress resets the count: quiet since the new stamp only. */
    rec_watch w;
    rec_watch_init(&w, 0, limit, 50 * MS);
    for (int64_t t = 50 * MS; t <= 3000 * MS; t += 50 * MS) {
        s = rec_watch_tick(&w, t, t - 10 * MS, 0); /* progress 10 ms before every tick */
        assert_int_equal(s.quiet_ns, 10 * MS);
        assert_false(s.stalled);
    }
}

/* One fsync in flight since `since`: a stall when it has lasted longer than the limit. */
static void fsync_stall_boundary(void **state)
{
    (void)state;
    const int64_t limit = 1000 * MS, tick = 50 * MS;
    for (int64_t d = -1; d <= 1; d++) {
        rec_watch w;
        rec_watch_init(&w, 0, limit, tick);
        rec_watch_step s = {0};
        int64_t since = 5, t = 0;
        /* progress keeps coming (the writer is fine); only the fsync hangs */
        while (t + tick < since + limit + d) {
            t += tick;
            s = rec_watch_tick(&w, t, t, since);
        }
        s = rec_watch_tick(&w, since + limit + d, since + limit + d, since);
        assert_int_equal(s.sync_quiet_ns, limit + d);
        assert_false(s.stalled);
        if (d > 0)
            assert_true(s.sync_stalled);
        else
            assert_false(s.sync_stalled);
    }
    /* The fsync returns: nothing in flight, nothing counted. */
    rec_watch w;
    rec_watch_init(&w, 0, limit, tick);
    rec_watch_step s = rec_watch_tick(&w, 40 * MS, 40 * MS, 0);
    assert_int_equal(s.sync_quiet_ns, 0);
    assert_false(s.sync_stalled);
}

/* A gap between two wakes longer than the pause threshold is a pause of the whole process
 * (SIGSTOP, a suspended machine): counted as a pause, not as the writer's stall. */
static void pause_threshold_boundary(void **state)
{
    (void)state;
    const int64_t limit = 2000 * MS, tick = 50 * MS;
    assert_int_equal(rec_watch_pause_threshold(limit, tick), 1000 * MS); /* half the limit */
    assert_int_equal(rec_watch_pause_threshold(300 * MS, tick), 200 * MS); /* four ticks */
    assert_int_equal(rec_watch_pause_threshold(400 * MS, tick), 200 * MS);
    assert_int_equal(rec_watch_pause_threshold(402 * MS, tick), 201 * MS);
    const int64_t thr = 1000 * MS;
    for (int64_t d = -1; d <= 1; d++) {
        rec_watch w;
        rec_watch_init(&w, 0, limit, tick);
        rec_watch_tick(&w, 1, 1, 0); /* progress seen at t = 1, as it happened */
        rec_watch_step s = rec_watch_tick(&w, 1 + thr + d, 1, 0);
        if (d > 0) {
            assert_int_equal(s.paused_ns, thr + d);
            assert_int_equal(s.quiet_ns, 0); /* paused time is not watched time */
        } else {
            assert_int_equal(s.paused_ns, 0);
            assert_int_equal(s.quiet_ns, thr + d);
        }
    }
    /* A long pause never makes a stall on its own: 10 s asleep, then ticks again. */
    rec_watch w;
    rec_watch_init(&w, 0, limit, tick);
    rec_watch_tick(&w, 1, 1, 0);
    rec_watch_step s = rec_watch_tick(&w, 1 + 10000 * MS, 1, 0);
    assert_int_equal(s.paused_ns, 10000 * MS);
    assert_false(s.stalled);
    s = rec_watch_tick(&w, 1 + 10050 * MS, 1, 0);
    assert_int_equal(s.quiet_ns, 50 * MS);
    assert_false(s.stalled);
}

static void free_space_boundary(void **state)
{
    (void)state;
    const uint64_t min = 256ull << 20;
    assert_true(rec_free_space_low(min - 1, min));
    assert_false(rec_free_space_low(min, min));
    assert_false(rec_free_space_low(min + 1, min));
    assert_false(rec_free_space_low(0, 0)); /* a minimum of 0 turns the check off */
    assert_true(rec_free_space_low(0, 1));
}

#define S 1000000000ll

/* max_time 2 s, grace 0.5 s: killed at 2.5 s after the start of solving, not before. */
static void bench_time_limit_boundary(void **state)
{
    (void)state;
    const int64_t fork = 1000 * S;
    /* An in-process child before "begin": 2.5 s plus the 30 s setup allowance from fork. */
    assert_int_equal(rl_bench_deadline_ns(false, fork, 0, 2, 0.5), fork + 32500000000ll);
    /* After "begin" at fork + 3 s: 2.5 s from there, allowance gone. */
    int64_t d = rl_bench_deadline_ns(false, fork, fork + 3 * S, 2, 0.5);
    assert_int_equal(d, fork + 5500000000ll);
    assert_false(rl_bench_time_up(d - 1, d));
    assert_true(rl_bench_time_up(d, d));
    assert_true(rl_bench_time_up(d + 1, d));
    /* An executable that never says "start": 2.5 s from fork. */
    assert_int_equal(rl_bench_deadline_ns(true, fork, 0, 2, 0.5), fork + 2500000000ll);
    /* Its "start" restarts the clock: 10 s or 29 s in, 2.5 s from there; from 30 s in, the
     * setup allowance caps it at fork + 32.5 s. */
    assert_int_equal(rl_bench_deadline_ns(true, fork, fork + 10 * S, 2, 0.5), fork + 12500000000ll);
    assert_int_equal(rl_bench_deadline_ns(true, fork, fork + 29 * S, 2, 0.5), fork + 31500000000ll);
    assert_int_equal(rl_bench_deadline_ns(true, fork, fork + 30 * S, 2, 0.5), fork + 32500000000ll);
    assert_int_equal(rl_bench_deadline_ns(true, fork, fork + 31 * S, 2, 0.5), fork + 32500000000ll);
    /* grace 0: the deadline is max_time itself. */
    assert_int_equal(rl_bench_deadline_ns(false, fork, fork + S, 1.25, 0), fork + 2250000000ll);
}

/* max_mem 100 MB above the baseline: 102400 kB more is allowed, one kB more is not. */
static void bench_memory_limit_boundary(void **state)
{
    (void)state;
    const long base = 5000;
    assert_false(rl_bench_memory_over(base + 102399, base, 100));
    assert_false(rl_bench_memory_over(base + 102400, base, 100));
    assert_true(rl_bench_memory_over(base + 102401, base, 100));
    assert_false(rl_bench_memory_over(base - 10, base, 0)); /* below the baseline */
    assert_true(rl_bench_memory_over(1, 0, 0));
    assert_false(rl_bench_memory_over(512, 0, 0.5));
    assert_true(rl_bench_memory_over(513, 0, 0.5));
}

/* `runlab experiment` gives up on the recorder after 1.5 s without a heartbeat. */
static void heartbeat_timeout_boundary(void **state)
{
    (void)state;
    const int64_t timeout = 1500 * MS;
    rl_lab_heartbeat hb = {.seen_mono_ns = 77 * S};
    assert_false(rl_lab_heartbeat_lost(&hb, hb.seen_mono_ns + timeout - 1, timeout));
    assert_false(rl_lab_heartbeat_lost(&hb, hb.seen_mono_ns + timeout, timeout));
    assert_true(rl_lab_heartbeat_lost(&hb, hb.seen_mono_ns + timeout + 1, timeout));
    assert_false(rl_lab_heartbeat_lost(&hb, hb.seen_mono_ns, timeout));
}

/* The recorder node ends a run whose control flow's heartbeat is silent for longer than
 * the timeout (1.5 s by default); only a heartbeat naming the run, while it is ARMED or
 * RECORDING, arms it. */
static void control_timeout_boundary(void **state)
{
    (void)state;
    const int64_t timeout = 1500 * MS, seen = 77 * S;
    char why[512];
    lab_control_watch w;
    lab_control_watch_init(&w, timeout);
#define LOST(run, st, now) lab_control_lost(&w, run, st, now, why, sizeof why)
    const rl_record_state rec = RL_RECORD_RECORDING;
    assert_false(LOST("r1", rec, seen + 100 * S)); /* never armed */
    lab_control_beat(&w, "r0", "flow", "h", 7, "r1", rec, seen); /* names another run */
    assert_false(LOST("r1", rec, seen + 100 * S));
    lab_control_beat(&w, "r1", "flow", "h", 7, "r1", RL_RECORD_COMPLETE, seen); /* ended */
    assert_false(LOST("r1", rec, seen + 100 * S));
    lab_control_beat(&w, "r1", "flow", "h", 7, "r1", RL_RECORD_ARMED, seen);
    assert_false(LOST("r1", rec, seen + timeout - 1));
    assert_false(LOST("r1", rec, seen + timeout));
    assert_true(LOST("r1", rec, seen + timeout + 1));
    assert_string_equal(why, "control flow lost: no heartbeat from flow (host h, pid 7) for "
                             "1500 ms");
    assert_true(LOST("r1", RL_RECORD_ARMED, seen + timeout + 1));
    /* An ended run, or the next one, is not this control flow's to lose. */
    assert_false(LOST("r1", RL_RECORD_INTERRUPTED, seen + timeout + 1));
    assert_false(LOST("r2", rec, seen + timeout + 1));
    /* A timeout of 0 never fires. */
    lab_control_watch_init(&w, 0);
    lab_control_beat(&w, "r1", "flow", "h", 7, "r1", rec, seen);
    assert_false(LOST("r1", rec, seen + 3600 * S));
#undef LOST
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stall_limit_boundary),
        cmocka_unit_test(fsync_stall_boundary),
        cmocka_unit_test(pause_threshold_boundary),
        cmocka_unit_test(free_space_boundary),
        cmocka_unit_test(bench_time_limit_boundary),
        cmocka_unit_test(bench_memory_limit_boundary),
        cmocka_unit_test(heartbeat_timeout_boundary),
        cmocka_unit_test(control_timeout_boundary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
