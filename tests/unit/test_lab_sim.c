/* Tests of the simulator's offline mode (no network): message counts per vehicle and topic
 * computed from rates and duration, the same bag bytes for the same seed, and each fault's
 * effect seen in the recorded states and observations, which are decoded here by hand from
 * their XCDR1 bytes (independently of Cyclone and of runlab's writer). */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/lab.h"
#include "runlab/mcap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_fault_parse(void **state)
{
    (void)state;
    rl_lab_fault f;
    assert_int_equal(rl_lab_fault_parse("collision:2:3.5", &f), RL_OK);
    assert_int_equal(f.kind, RL_LAB_FAULT_COLLISION);
    assert_int_equal(f.vehicle, 2);
    assert_true(f.t0 == 3.5 && f.t1 < 0);
    assert_int_equal(rl_lab_fault_parse("stall_topic:1:1:2.5", &f), RL_OK);
    assert_int_equal(f.kind, RL_LAB_FAULT_STALL_TOPIC);
    assert_true(f.t0 == 1 && f.t1 == 2.5);
    assert_int_equal(rl_lab_fault_parse("teleport:1:1", &f), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "unknown kind"));
    assert_int_equal(rl_lab_fault_parse("drift:0:1", &f), RL_EINVAL);
    assert_int_equal(rl_lab_fault_parse("drift:1:-1", &f), RL_EINVAL);
    assert_int_equal(rl_lab_fault_parse("drift:1:3:2", &f), RL_EINVAL);
    assert_int_equal(rl_lab_fault_parse("drift:1", &f), RL_EINVAL);
    assert_string_equal(rl_lab_fault_name(RL_LAB_FAULT_LATE_OBSERVATION), "late_observation");
}

/* What the checks need of one vehicle's recorded messages. */
typedef struct track {
    int states, observations;
    double max_speed, min_x, min_y, max_x, max_y;
    int64_t stall_from, stall_to;  /* states stamped in [from, to] (ns after START) */
    int states_in_window;
    int late_observations;         /* create_stamp == valid_after - 0.5 s */
    double cx[1024], cy[1024];     /* centre per state tick (the first 1024) */
} track;

enum { MAXV = 4 };

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static double f64(const uint8_t *p)
{
    uint64_t u = le64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

#define START_NS (1767225600ll * 1000000000ll)

/* Reads the bag of an offline run into per-vehicle tracks; returns a checksum of all
 * message bytes in file order (to compare two runs). */
static uint64_t read_run(const char *run_dir, track *tr, int64_t stall_from, int64_t stall_to)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", run_dir);
    char *manifest = rl_test_read_file(path, NULL);
    assert_non_null(strstr(manifest, "\"state\": \"COMPLETE\""));
    const char *id = strstr(manifest, "\"run_id\": \"");
    assert_non_null(id);
    id += strlen("\"run_id\": \"");
    snprintf(path, sizeof path, "%s/bag/%.*s.mcap", run_dir, (int)(strchr(id, '"') - id), id);
    free(manifest);

    memset(tr, 0, MAXV * sizeof *tr);
    for (int v = 0; v < MAXV; v++) {
        tr[v].min_x = tr[v].min_y = INFINITY;
        tr[v].max_x = tr[v].max_y = -INFINITY;
    }
    int kind_of_channel[64] = {0}; /* 1 state, 2 observation */
    int vehicle_of_channel[64] = {0};
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    rl_mcap_reader *r = NULL;
    if (rl_mcap_reader_open(&r, path, &ro) < 0)
        fail_msg("%s", rl_error_last());
    rl_mcap_record rec;
    uint64_t sum = 1469598103934665603ull;
    while (rl_mcap_reader_next(r, &rec) == 1) {
        if (rec.opcode == RL_MCAP_OP_CHANNEL && rec.u.channel.id < 64) {
            char topic[128];
            snprintf(topic, sizeof topic, "%.*s", (int)rec.u.channel.topic.len,
                     (const char *)rec.u.channel.topic.data);
            int v = 0;
            char what[32] = "";
            if (sscanf(topic, "rt/vehicle/%d/%31s", &v, what) == 2 && v >= 1 && v <= MAXV) {
                vehicle_of_channel[rec.u.channel.id] = v;
                kind_of_channel[rec.u.channel.id] = strcmp(what, "state") == 0 ? 1 : 2;
            }
        } else if (rec.opcode == RL_MCAP_OP_MESSAGE) {
            const rl_mcap_message *m = &rec.u.message;
            for (size_t i = 0; i < m->data.len; i++)
                sum = (sum ^ m->data.data[i]) * 1099511628211ull;
            int ch = m->channel_id < 64 ? m->channel_id : 0;
            if (!vehicle_of_channel[ch])
                continue;
            track *t = &tr[vehicle_of_channel[ch] - 1];
            const uint8_t *b = m->data.data + 4; /* after the encapsulation header */
            assert_true(m->data.data[1] == 0x01); /* CDR little endian */
            int64_t create = (int64_t)le64(b), valid = (int64_t)le64(b + 8);
            assert_int_equal(b[16], vehicle_of_channel[ch]);
            double x = f64(b + 24), y = f64(b + 32);
            if (kind_of_channel[ch] == 1) {
                assert_int_equal(m->data.len, 4 + 105); /* 2x8 + 1 + 7 pad + 3x8 + 7x8 + 1 */
                if (t->states < 1024) {
                    t->cx[t->states] = x;
                    t->cy[t->states] = y;
                }
                t->states++;
                double speed = f64(b + 48);
                t->max_speed = fmax(t->max_speed, speed);
                t->min_x = fmin(t->min_x, x);
                t->min_y = fmin(t->min_y, y);
                t->max_x = fmax(t->max_x, x);
                t->max_y = fmax(t->max_y, y);
                if (create - START_NS >= stall_from && create - START_NS <= stall_to)
                    t->states_in_window++;
            } else {
                assert_int_equal(m->data.len, 4 + 48);
                t->observations++;
                if (valid - create == 500000000ll)
                    t->late_observations++;
            }
        }
    }
    rl_mcap_reader_close(r);
    return sum;
}

static void run_offline(const char *home, rl_lab_sim_options *o, char *dir)
{
    if (rl_lab_sim_offline(o, home, dir, 4096) < 0)
        fail_msg("%s", rl_error_last());
}

static void test_offline_counts_and_determinism(void **state)
{
    (void)state;
    char *home = rl_test_tmpdir();
    rl_lab_sim_options o;
    rl_lab_sim_options_default(&o);
    o.vehicles = 3;
    o.duration = 4;
    o.seed = 7;
    char a[4096], b[4096];
    track ta[MAXV], tb[MAXV];
    run_offline(home, &o, a);
    run_offline(home, &o, b);
    assert_string_not_equal(a, b); /* two runs, two directories */
    uint64_t sa = read_run(a, ta, -1, -1), sb = read_run(b, tb, -1, -1);
    assert_true(sa == sb);
    /* 4 s at 50 Hz: ticks 0..200; observations at 20 Hz: 1 + floor(200 * 20 / 50). */
    for (int v = 0; v < 3; v++) {
        assert_int_equal(ta[v].states, 201);
        assert_int_equal(ta[v].observations, 81);
        assert_true(ta[v].max_speed > 0.45 && ta[v].max_speed < 0.55);
        /* On the 1.2 m circle about (2.25, 2.0), within a few cm. */
        for (int i = 0; i < ta[v].states && i < 1024; i++) {
            double r = hypot(ta[v].cx[i] - 2.25, ta[v].cy[i] - 2.0);
            if (!(r > 1.1 && r < 1.3))
                fail_msg("vehicle %d tick %d: %.3f m from the centre", v + 1, i, r);
        }
    }
    /* Another seed places and measures a little differently. */
    o.seed = 8;
    run_offline(home, &o, b);
    assert_true(read_run(b, tb, -1, -1) != sa);
    rl_test_tmpdir_free(home);
}

static void test_offline_faults(void **state)
{
    (void)state;
    char *home = rl_test_tmpdir();
    rl_lab_fault faults[4];
    assert_int_equal(rl_lab_fault_parse("stall_topic:1:1:2", &faults[0]), RL_OK);
    assert_int_equal(rl_lab_fault_parse("late_observation:2:0", &faults[1]), RL_OK);
    assert_int_equal(rl_lab_fault_parse("speeding:3:1", &faults[2]), RL_OK);
    assert_int_equal(rl_lab_fault_parse("leave_area:4:0", &faults[3]), RL_OK);
    rl_lab_sim_options o;
    rl_lab_sim_options_default(&o);
    o.vehicles = 4;
    o.duration = 12;
    o.faults = faults;
    o.fault_count = 4;
    char dir[4096];
    track t[MAXV];
    run_offline(home, &o, dir);
    read_run(dir, t, 1000000000ll, 2000000000ll);
    /* stall_topic: no states stamped in [1 s, 2 s] (51 ticks), the rest there. */
    assert_int_equal(t[0].states_in_window, 0);
    assert_int_equal(t[0].states, 601 - 51);
    assert_int_equal(t[1].states, 601);
    /* late_observation: every observation of vehicle 2 stamped 0.5 s early, none of others. */
    assert_int_equal(t[1].late_observations, t[1].observations);
    assert_int_equal(t[0].late_observations, 0);
    /* speeding: three times the set 0.5 m/s. */
    assert_true(t[2].max_speed > 1.4);
    assert_true(t[0].max_speed < 0.55);
    /* leave_area: vehicle 4 leaves the 4.5 m x 4.0 m lab; the others stay inside. */
    assert_true(t[3].min_x < 0 || t[3].min_y < 0);
    for (int v = 0; v < 3; v++)
        assert_true(t[v].min_x > 0 && t[v].min_y > 0 && t[v].max_x < 4.5 && t[v].max_y < 4.0);
    rl_test_tmpdir_free(home);
}

/* collision: vehicle 2 steers into vehicle 1; their centres come closer than a car length,
 * which they never do without the fault. */
static void test_offline_collision(void **state)
{
    (void)state;
    char *home = rl_test_tmpdir();
    rl_lab_sim_options o;
    rl_lab_sim_options_default(&o);
    o.vehicles = 2;
    o.duration = 15;
    char dir[4096];
    track t[MAXV];
    double closest[2];
    for (int with = 0; with < 2; with++) {
        rl_lab_fault f;
        assert_int_equal(rl_lab_fault_parse("collision:2:0", &f), RL_OK);
        o.faults = with ? &f : NULL;
        o.fault_count = with ? 1 : 0;
        run_offline(home, &o, dir);
        read_run(dir, t, -1, -1);
        closest[with] = INFINITY;
        for (int i = 0; i < t[0].states && i < 751 && i < 1024; i++)
            closest[with] = fmin(closest[with], hypot(t[0].cx[i] - t[1].cx[i], t[0].cy[i] - t[1].cy[i]));
    }
    assert_true(closest[0] > 1.0);
    if (!(closest[1] < RL_LAB_CAR_LENGTH))
        fail_msg("closest approach with the fault: %.3f m", closest[1]);
    rl_test_tmpdir_free(home);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_parse),
        cmocka_unit_test(test_offline_counts_and_determinism),
        cmocka_unit_test(test_offline_faults),
        cmocka_unit_test(test_offline_collision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
