/* Benchmark of the recorder node over DDS (loopback): the same `ddsperf pub` (reliable,
 * keep-all, as fast as it can) received first by `ddsperf sub`, then by runlab's recorder,
 * at 100 B and 10 KB. Prints samples/s of each, the recorder's share of ddsperf's rate, its
 * losses (sequence gaps per key in the bag, and the engine's drop count) and its CPU time per
 * million samples. Skips when ddsperf is not installed. */
#include "runlab/error.h"
#include "runlab/lab.h"
#include "runlab/mcap.h"
#include "runlab/time.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define SECONDS 6
#define DOMAIN 232

static const char loopback_config[] =
    "<CycloneDDS><Domain id=\"any\"><General><Interfaces><NetworkInterface name=\"lo\"/>"
    "</Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery>"
    "<ParticipantIndex>auto</ParticipantIndex><Peers><Peer address=\"127.0.0.1\"/></Peers>"
    "</Discovery></Domain></CycloneDDS>";

static pid_t spawn_ddsperf(const char *mode, int size, const char *out_path)
{
    char dur[16], dom[16], sz[16];
    snprintf(dur, sizeof dur, "%d", SECONDS + 2);
    snprintf(dom, sizeof dom, "%d", DOMAIN);
    snprintf(sz, sizeof sz, "%d", size);
    char *pub_argv[] = {"ddsperf", "-D", dur, "-i", dom, "pub", "size", sz, NULL};
    char *sub_argv[] = {"ddsperf", "-D", dur, "-i", dom, "sub", NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, "ddsperf", &fa, NULL, strcmp(mode, "pub") == 0 ? pub_argv : sub_argv,
                          environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0 ? pid : -1;
}

/* Mean of ddsperf sub's per-second "delta" counts, leaving out the first report. */
static double ddsperf_rate(const char *path, unsigned long long *lost)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[512];
    double sum = 0, t_prev = -1;
    int n = 0;
    *lost = 0;
    while (fgets(line, sizeof line, f)) {
        double t;
        unsigned long long total, lost_total, delta;
        const char *p = strchr(line, ']');
        if (!p || sscanf(p + 1, " %lf size %*d total %llu lost %llu delta %llu", &t, &total,
                         &lost_total, &delta) != 4)
            continue;
        *lost = lost_total;
        if (t_prev >= 0 && t > t_prev) {
            sum += (double)delta / (t - t_prev);
            n++;
        }
        t_prev = t;
    }
    fclose(f);
    return n > 1 ? sum / n : 0;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Sequence gaps per key value in the bag's KeyedSeq messages (after each key's first; the
 * samples before the recorder's reader matched are not there: the writer is volatile). */
static unsigned long long bag_gaps(const char *run_dir, const char *run_id, unsigned long long *msgs)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/bag/%s.mcap", run_dir, run_id);
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    rl_mcap_reader *r = NULL;
    *msgs = 0;
    if (rl_mcap_reader_open(&r, path, &ro) < 0)
        return (unsigned long long)-1;
    static int64_t last[1024];
    for (int i = 0; i < 1024; i++)
        last[i] = -1;
    unsigned long long gaps = 0;
    int data_channel = -1;
    rl_mcap_record rec;
    while (rl_mcap_reader_next(r, &rec) == 1) {
        if (rec.opcode == RL_MCAP_OP_CHANNEL && rec.u.channel.topic.len == 14 &&
            memcmp(rec.u.channel.topic.data, "DDSPerfRDataKS", 14) == 0)
            data_channel = rec.u.channel.id;
        if (rec.opcode != RL_MCAP_OP_MESSAGE || rec.u.message.channel_id != data_channel ||
            rec.u.message.data.len < 12)
            continue;
        const uint8_t *b = rec.u.message.data.data + 4; /* KeyedSeq: seq, keyval, ... */
        uint32_t seq = le32(b), key = le32(b + 4) % 1024;
        if (last[key] >= 0 && seq != (uint32_t)last[key] + 1)
            gaps++;
        last[key] = seq;
        (*msgs)++;
    }
    rl_mcap_reader_close(r);
    return gaps;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static int run_size(int size, const char *tmp)
{
    char out[4096];
    snprintf(out, sizeof out, "%s/sub.txt", tmp);
    pid_t sub = spawn_ddsperf("sub", size, out);
    char pub_out[4096];
    snprintf(pub_out, sizeof pub_out, "%s/pub.txt", tmp);
    pid_t pub = spawn_ddsperf("pub", size, pub_out);
    if (sub < 0 || pub < 0)
        return -1;
    waitpid(sub, NULL, 0);
    waitpid(pub, NULL, 0);
    unsigned long long sub_lost = 0;
    double sub_rate = ddsperf_rate(out, &sub_lost);

    /* The recorder on the same publisher. */
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.domain = DOMAIN;
    o.home = tmp;
    o.peer_wait_ns = 0;
    const char *patterns[] = {"DDSPerfRDataKS"}; /* ddsperf pub size N: KeyedSeq */
    o.patterns = patterns;
    o.pattern_count = 1;
    rl_lab_recorder *node = NULL;
    rl_lab_client *cl = NULL;
    if (rl_lab_recorder_new(&node, &o) < 0 || rl_lab_client_new(&cl, DOMAIN) < 0) {
        fprintf(stderr, "bench_lab: %s\n", rl_error_last());
        return -1;
    }
    char run_id[32];
    snprintf(run_id, sizeof run_id, "bench-%d", size);
    rl_record_run run = {.run_id = run_id};
    rl_lab_reply rep, r2;
    if (rl_lab_client_prepare(cl, &run, 30000000000ll, &rep) < 0 || !rep.ok ||
        rl_lab_client_begin(cl, run_id, 30000000000ll, &r2) < 0 || !r2.ok) {
        fprintf(stderr, "bench_lab: prepare/begin: %s\n", rep.ok ? rl_error_last() : rep.message);
        return -1;
    }
    rl_lab_client_trigger(cl, RL_LAB_START, rl_time_now_ns());
    pub = spawn_ddsperf("pub", size, pub_out);
    rl_record_status st;
    /* From the first sample on, SECONDS-2 seconds of steady state. */
    for (int i = 0; i < 1000; i++) {
        rl_lab_recorder_status(node, &st);
        if (st.received > 1000)
            break;
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
    }
    uint64_t r0 = st.received;
    int64_t t0 = rl_mono_ns();
    double c0 = cpu_seconds();
    struct timespec span = {SECONDS - 2, 0};
    nanosleep(&span, NULL);
    rl_lab_recorder_status(node, &st);
    double secs = (double)(rl_mono_ns() - t0) / 1e9, cpu = cpu_seconds() - c0;
    double rec_rate = (double)(st.received - r0) / secs;
    waitpid(pub, NULL, 0);
    rl_lab_client_trigger(cl, RL_LAB_STOP, rl_time_now_ns());
    rl_lab_client_finish(cl, run_id, rl_time_now_ns(), NULL, 60000000000ll, &r2);
    rl_lab_recorder_status(node, &st);
    unsigned long long dropped = st.dropped, msgs = 0;
    unsigned long long gaps = bag_gaps(rep.run_dir, run_id, &msgs);
    rl_lab_client_free(cl);
    rl_lab_recorder_free(node);
    printf("lab %6d B: ddsperf sub %9.0f samples/s (lost %llu) | recorder %9.0f samples/s = %5.1f %% "
           "of ddsperf, %llu recorded, %llu sequence gaps, %llu dropped, CPU %.2f s per million "
           "samples\n",
           size, sub_rate, sub_lost, rec_rate, sub_rate > 0 ? 100 * rec_rate / sub_rate : 0, msgs,
           gaps, dropped, (st.received - r0) ? cpu * 1e6 / (double)(rec_rate * secs) : 0);
    return 0;
}

int main(void)
{
    if (system("command -v ddsperf >/dev/null 2>&1") != 0) {
        printf("lab: skipped (ddsperf not installed: cyclonedds-tools)\n");
        return 0;
    }
    setenv("CYCLONEDDS_URI", loopback_config, 1);
    char tmp[] = "/tmp/runlab-bench-lab-XXXXXX";
    if (!mkdtemp(tmp))
        return 1;
    int rc = run_size(100, tmp) < 0 || run_size(10000, tmp) < 0;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    (void)system(cmd);
    return rc;
}
