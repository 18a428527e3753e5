/* The lab's part of `runlab demo`: a recorded simulated experiment over DDS on loopback —
 * a recorder node, four simulated vehicles on the CPM lab map (data/maps) and the control
 * flow (prepare, READY, begin, START, 3 s, STOP, finish) in one process, then the run's
 * counters and topics, and the lab loop's payoff: `runlab list` of the demo's runs and
 * `runlab evaluate` of the one just recorded. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/lab.h"
#include "runlab/mcap.h"
#include "runlab/time.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

/* Loopback only, no multicast: the demo never sends traffic off this machine. */
static const char loopback_config[] =
    "<CycloneDDS><Domain id=\"any\"><General><Interfaces><NetworkInterface name=\"lo\"/>"
    "</Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery>"
    "<ParticipantIndex>auto</ParticipantIndex><Peers><Peer address=\"127.0.0.1\"/></Peers>"
    "</Discovery></Domain></CycloneDDS>";

typedef struct sim_thread {
    rl_lab_sim_options opts;
    atomic_int stop;
    int rc;
    char error[512];
} sim_thread;

static int sim_should_stop(void *user)
{
    return atomic_load(&((sim_thread *)user)->stop);
}

static void *sim_main(void *arg)
{
    sim_thread *t = arg;
    t->rc = rl_lab_sim_run(&t->opts, sim_should_stop, t);
    if (t->rc < 0)
        snprintf(t->error, sizeof t->error, "%s", rl_error_last());
    return NULL;
}

/* A domain no other demo on this host uses right now (ids above the tests' 100..230). */
static int claim_domain(int *fd)
{
    for (int d = 231; d <= 232; d++) {
        char path[256];
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/runlab-demo-domain-%d.lock", tmp ? tmp : "/tmp", d);
        *fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0666);
        if (*fd >= 0 && flock(*fd, LOCK_EX | LOCK_NB) == 0)
            return d;
        if (*fd >= 0)
            close(*fd);
    }
    *fd = -1;
    return -1;
}

/* The bag's topics as a table: topic, messages, schema, the columns as wide as their
 * longest entry. */
static void list_topics(const char *run_dir, const char *run_id)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/bag/%s.mcap", run_dir, run_id);
    rl_mcap_indexed *idx = NULL;
    if (rl_mcap_indexed_open(&idx, path, 0) < 0)
        return;
    const rl_mcap_channel *ch = NULL;
    size_t n = rl_mcap_indexed_channels(idx, &ch);
    const rl_mcap_statistics *st = rl_mcap_indexed_statistics(idx);
    int width = (int)strlen("TOPIC");
    for (size_t i = 0; i < n; i++)
        if ((int)ch[i].topic.len > width && ch[i].topic.len < 200)
            width = (int)ch[i].topic.len;
    printf("    %-*s %8s  %s\n", width, "TOPIC", "MESSAGES", "SCHEMA");
    for (size_t i = 0; i < n; i++) {
        uint64_t count = 0;
        size_t pos = 0;
        uint16_t id;
        uint64_t c;
        while (st && rl_mcap_map_u16u64_next(st->channel_message_counts, &pos, &id, &c) == 1)
            if (id == ch[i].id)
                count = c;
        const rl_mcap_schema *sc = rl_mcap_indexed_schema(idx, ch[i].schema_id);
        printf("    %-*.*s %8llu  %.*s\n", width, (int)ch[i].topic.len,
               (const char *)ch[i].topic.data, (unsigned long long)count,
               sc ? (int)sc->name.len : 1, sc ? (const char *)sc->name.data : "-");
    }
    rl_mcap_indexed_close(idx);
}

/* The lab loop's payoff, as a user would type it: the runs recorded so far, then an
 * evaluation of this one. Whatever its verdict, an evaluation that ran is a result; only
 * one that could not run (usage, unreadable run: exit 2) fails the demo. */
static int list_and_evaluate(const char *home, const char *run_dir)
{
    printf("\n  $ runlab list %s\n", home);
    fflush(stdout);
    char *list_argv[] = {"list", (char *)home, NULL};
    if (cmd_list(2, list_argv) != RL_EXIT_OK)
        return RL_EXIT_FAILURE;
    printf("\n  $ runlab evaluate %s\n", run_dir);
    fflush(stdout);
    char *eval_argv[] = {"evaluate", (char *)run_dir, NULL};
    int ec = cmd_evaluate(2, eval_argv);
    fflush(stdout);
    return ec == RL_EXIT_USAGE ? RL_EXIT_FAILURE : RL_EXIT_OK;
}

int demo_lab(const char *out_dir, int domain)
{
    printf("== Lab over DDS: a simulated experiment, recorded (loopback) ==\n");
    if (!getenv("CYCLONEDDS_URI"))
        setenv("CYCLONEDDS_URI", loopback_config, 1);
    int lock_fd = -1;
    if (domain < 0 && (domain = claim_domain(&lock_fd)) < 0)
        return cli_fail("demo", "no free DDS domain for the lab demo (another demo runs); "
                                "name one with --domain D");
    const int64_t s = 1000000000ll;
    int rc = RL_EXIT_FAILURE;
    rl_lab_recorder *node = NULL;
    rl_lab_client *cl = NULL;
    sim_thread sim = {0};
    pthread_t sim_tid;
    int sim_started = 0;
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.domain = domain;
    o.home = out_dir;
    o.peer_wait_ns = s / 2;
    if (rl_lab_recorder_new(&node, &o) < 0 || rl_lab_client_new(&cl, domain) < 0) {
        cli_fail("demo", "%s", rl_error_last());
        goto done;
    }
    char map[4096];
    if (!cli_default_map(map, sizeof map)) {
        cli_fail("demo", "the lab map data/maps/LabMapCommonRoad.xml is not beside the executable");
        goto done;
    }
    rl_lab_sim_options_default(&sim.opts);
    sim.opts.domain = domain;
    sim.opts.vehicles = 4;
    sim.opts.map_path = map;
    if (pthread_create(&sim_tid, NULL, sim_main, &sim) != 0) {
        cli_fail("demo", "cannot start the simulator thread");
        goto done;
    }
    sim_started = 1;
    const int vehicles[] = {1, 2, 3, 4};
    rl_record_run run = {.run_id = NULL, .vehicles = vehicles, .vehicle_count = 4,
                         .planner = "runlab sim", .map_path = map};
    rl_lab_reply rep, r2;
    if (rl_lab_client_prepare(cl, &run, 30 * s, &rep) < 0 || !rep.ok ||
        rl_lab_client_wait_ready(cl, vehicles, 4, 30 * s) < 0 ||
        rl_lab_client_begin(cl, rep.run_id, 30 * s, &r2) < 0 || !r2.ok) {
        cli_fail("demo", "%s", rep.ok && r2.ok ? rl_error_last() : rep.message);
        goto done;
    }
    printf("  DDS domain %d: recorder ARMED, 4 vehicles READY on the CPM lab map, recording\n",
           domain);
    int64_t start = rl_time_now_ns();
    rl_lab_client_trigger(cl, RL_LAB_START, start);
    struct timespec three = {3, 0};
    nanosleep(&three, NULL);
    int64_t stop = rl_time_now_ns();
    rl_lab_client_trigger(cl, RL_LAB_STOP, stop);
    if (rl_lab_client_finish(cl, rep.run_id, stop, NULL, 30 * s, &r2) < 0 || !r2.ok) {
        cli_fail("demo", "finish: %s", r2.ok ? rl_error_last() : r2.message);
        goto done;
    }
    rl_lab_heartbeat hb;
    uint64_t seen = 0;
    /* The heartbeat that says so (the recorder publishes it right after finishing). */
    while (rl_lab_client_wait_heartbeat(cl, seen, 5 * s, &hb) == RL_OK &&
           hb.state != RL_RECORD_COMPLETE)
        seen = hb.count;
    printf("  run %s: %s; heartbeat: %llu received, %llu inside START..STOP, %llu written, "
           "%llu dropped, %u topics\n",
           r2.run_id, rl_record_state_name(r2.state), (unsigned long long)hb.received,
           (unsigned long long)hb.inside, (unsigned long long)hb.written,
           (unsigned long long)hb.dropped, (unsigned)hb.topics);
    list_topics(r2.run_dir, r2.run_id);
    printf("  %s\n", r2.run_dir);
    rc = r2.state == RL_RECORD_COMPLETE ? list_and_evaluate(out_dir, r2.run_dir)
                                        : RL_EXIT_FAILURE;
done:
    if (sim_started) {
        atomic_store(&sim.stop, 1);
        pthread_join(sim_tid, NULL);
    }
    rl_lab_client_free(cl);
    rl_lab_recorder_free(node);
    if (lock_fd >= 0)
        close(lock_fd);
    return rc;
}
