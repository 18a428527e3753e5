/* Benchmark of the recorder node over DDS (loopback only, a domain of its own): one
 * `ddsperf pub` (reliable, keep-all, as fast as it can) runs through the whole measurement of
 * a size, and its subscriber alternates: `ddsperf sub` for a phase, then runlab's recorder for
 * a phase (ABBA order over REPS pairs, so a drifting machine load favours neither). Both are
 * measured the same way: samples received over the same steady window (WINDOW seconds,
 * starting a second after the subscriber started), loss as sequence gaps (ddsperf's own
 * count; for the recorder, gaps per key in the bag, plus the engine's drops). Prints per size
 * the medians, the median of the per-pair ratios, and CPU per million samples (the recorder
 * process over its window; ddsperf sub over its whole life). Skips without ddsperf.
 * BENCH_LAB_THREADS=1 also prints, per phase, each thread's CPU per sample over the window
 * (from /proc), for both subscribers and the publisher: where the recorder spends more than
 * ddsperf sub.
 * Usage: bench_lab [--domain N] [SIZE...] (default 100 10000); the domain also from
 * $RUNLAB_BENCH_DOMAIN, default 232. */
#include "runlab/error.h"
#include "runlab/lab.h"
#include "runlab/mcap.h"
#include "runlab/time.h"
#include "bench_lab_common.h"
#include "bench_util.h"

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

#define WINDOW 3 /* seconds measured per phase */
#define REPS 5   /* phase pairs per size */

static int domain; /* --domain N, $RUNLAB_BENCH_DOMAIN or 232 (bench_lab_common.h) */

/* ddsperf pub (for `seconds`, size `size`) or sub (WINDOW + 2 s), its stdout to out_path. */
static pid_t spawn_ddsperf(int pub, int size, int seconds, const char *out_path)
{
    char dur[16], dom[16], sz[16];
    snprintf(dur, sizeof dur, "%d", seconds);
    snprintf(dom, sizeof dom, "%d", domain);
    snprintf(sz, sizeof sz, "%d", size);
    char *pub_argv[] = {"ddsperf", "-D", dur, "-i", dom, "pub", "size", sz, NULL};
    char *sub_argv[] = {"ddsperf", "-D", dur, "-i", dom, "sub", NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, "ddsperf", &fa, NULL, pub ? pub_argv : sub_argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0 ? pid : -1;
}

static double ru_seconds(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
           (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

/* ddsperf sub's rate over WINDOW seconds from its first report on (the reports give the
 * time since it started and the running total); its lost count at the end. */
static double ddsperf_rate(const char *path, unsigned long long *lost, unsigned long long *total)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[512];
    double t_first = -1, t_end = -1;
    unsigned long long n_first = 0, n_end = 0;
    *lost = 0;
    *total = 0;
    while (fgets(line, sizeof line, f)) {
        double t;
        unsigned long long all, lost_all;
        const char *p = strchr(line, ']');
        if (!p || sscanf(p + 1, " %lf size %*d total %llu lost %llu", &t, &all, &lost_all) != 3)
            continue;
        *lost = lost_all;
        *total = all;
        if (t_first < 0) {
            t_first = t;
            n_first = all;
        } else if (t - t_first <= WINDOW + 0.5) {
            t_end = t;
            n_end = all;
        }
    }
    fclose(f);
    return t_end > t_first && t_first >= 0 ? (double)(n_end - n_first) / (t_end - t_first) : 0;
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
        if (last[key] >= 0 && seq != (uint32_t)last[key] + 1) {
            gaps++;
            if (getenv("BENCH_LAB_DEBUG"))
                fprintf(stderr, "gap: key %u after %lld: %u (message %llu)\n", key,
                        (long long)last[key], seq, *msgs);
        }
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
    return ru_seconds(&ru);
}

static pid_t publisher; /* ddsperf pub of the size being measured, for BENCH_LAB_THREADS */

typedef struct phase {
    double rate, cpu_per_million;
    unsigned long long lost; /* ddsperf: its count; recorder: bag gaps + drops */
    int ok;
} phase;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static phase ddsperf_phase(const char *tmp)
{
    phase ph = {0};
    if (getenv("BENCH_LAB_RECORDER_ONLY")) { /* for profiling the recorder alone */
        ph.rate = 1;
        ph.ok = 1;
        return ph;
    }
    char out[4096];
    snprintf(out, sizeof out, "%s/sub.txt", tmp);
    pid_t sub = spawn_ddsperf(0, 0, WINDOW + 2, out);
    if (sub < 0)
        return ph;
    int threads = getenv("BENCH_LAB_THREADS") != NULL;
    thread_cpu ta, tb, pa, pb;
    double t_threads = 0;
    if (threads) { /* ddsperf's window: from its first report (after a second) on */
        sleep_ms(1000);
        read_thread_cpu(sub, &ta);
        read_thread_cpu(publisher, &pa);
        double t0 = bench_now_s();
        sleep_ms(WINDOW * 1000);
        read_thread_cpu(sub, &tb);
        read_thread_cpu(publisher, &pb);
        t_threads = bench_now_s() - t0;
    }
    struct rusage ru;
    int status = 0;
    if (wait4(sub, &status, 0, &ru) != sub)
        return ph;
    unsigned long long total = 0;
    ph.rate = ddsperf_rate(out, &ph.lost, &total);
    ph.cpu_per_million = total ? ru_seconds(&ru) * 1e6 / (double)total : 0;
    ph.ok = ph.rate > 0;
    if (threads) {
        print_thread_cpu("ddsperf sub", &ta, &tb, ph.rate * t_threads);
        print_thread_cpu("its pub", &pa, &pb, ph.rate * t_threads);
    }
    return ph;
}

static phase recorder_phase(rl_lab_client *cl, const char *tmp, int size, int rep)
{
    phase ph = {0};
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.domain = domain;
    o.home = tmp;
    o.peer_wait_ns = 0;
    const char *patterns[] = {"DDSPerfRDataKS"}; /* ddsperf pub size N: KeyedSeq */
    o.patterns = patterns;
    o.pattern_count = 1;
    /* BENCH_LAB_COMPRESSION=none|lz4|zstd: the bag's compression (default: the engine's). */
    rl_record_options eng;
    rl_record_options_default(&eng);
    const char *comp = getenv("BENCH_LAB_COMPRESSION");
    if (comp) {
        if (rl_record_compression_from_name(comp, &eng.compression) != RL_OK)
            fprintf(stderr, "bench_lab: BENCH_LAB_COMPRESSION: %s; using zstd\n", rl_error_last());
        o.engine = &eng;
    }
    rl_lab_recorder *node = NULL;
    if (rl_lab_recorder_new(&node, &o) < 0) {
        fprintf(stderr, "bench_lab: %s\n", rl_error_last());
        return ph;
    }
    char run_id[32];
    snprintf(run_id, sizeof run_id, "bench-%d-%d", size, rep);
    rl_record_run run = {.run_id = run_id};
    rl_lab_reply rep1, rep2;
    if (rl_lab_client_prepare(cl, &run, 30000000000ll, &rep1) < 0 || !rep1.ok ||
        rl_lab_client_begin(cl, run_id, 30000000000ll, &rep2) < 0 || !rep2.ok) {
        fprintf(stderr, "bench_lab: prepare/begin: %s\n", rep1.ok ? rl_error_last() : rep1.message);
        rl_lab_recorder_free(node);
        return ph;
    }
    rl_lab_client_trigger(cl, RL_LAB_START, rl_time_now_ns());
    /* Like ddsperf sub: the window starts a second after the subscriber started. */
    sleep_ms(1000);
    rl_record_status st;
    rl_lab_recorder_status(node, &st);
    uint64_t r0 = st.received;
    int threads = getenv("BENCH_LAB_THREADS") != NULL;
    thread_cpu ta, tb, pa, pb;
    if (threads) {
        read_thread_cpu(getpid(), &ta);
        read_thread_cpu(publisher, &pa);
    }
    int64_t t0 = rl_mono_ns();
    double c0 = cpu_seconds();
    sleep_ms(WINDOW * 1000);
    rl_lab_recorder_status(node, &st);
    if (threads) {
        read_thread_cpu(getpid(), &tb);
        read_thread_cpu(publisher, &pb);
    }
    double secs = (double)(rl_mono_ns() - t0) / 1e9, cpu = cpu_seconds() - c0;
    uint64_t got = st.received - r0;
    rl_lab_client_trigger(cl, RL_LAB_STOP, rl_time_now_ns());
    /* The reader stays until the node goes: finish first, then free (the samples arriving
       in between are refused, not lost: the run has ended). */
    rl_lab_client_finish(cl, run_id, rl_time_now_ns(), NULL, 60000000000ll, &rep2);
    rl_lab_recorder_status(node, &st);
    unsigned long long msgs = 0;
    unsigned long long gaps = bag_gaps(rep1.run_dir, run_id, &msgs);
    rl_lab_recorder_free(node);
    ph.rate = (double)got / secs;
    ph.lost = gaps + st.dropped;
    ph.cpu_per_million = got ? cpu * 1e6 / (double)got : 0;
    if (threads) {
        print_thread_cpu("recorder", &ta, &tb, (double)got);
        print_thread_cpu("its pub", &pa, &pb, (double)got);
    }
    ph.ok = rep2.ok && gaps != (unsigned long long)-1 && msgs > 0;
    if (!ph.ok)
        fprintf(stderr, "bench_lab: run %s: finish %s, %llu messages in the bag\n", run_id,
                rep2.ok ? "ok" : rep2.message, msgs);
    return ph;
}

static int run_size(int size, const char *tmp)
{
    rl_lab_client *cl = NULL;
    if (rl_lab_client_new(&cl, domain) < 0) {
        fprintf(stderr, "bench_lab: %s\n", rl_error_last());
        return -1;
    }
    char pub_out[4096];
    snprintf(pub_out, sizeof pub_out, "%s/pub.txt", tmp);
    pid_t pub = spawn_ddsperf(1, size, 3600, pub_out);
    publisher = pub;
    if (pub < 0) {
        rl_lab_client_free(cl);
        return -1;
    }
    double sub_rate[REPS], rec_rate[REPS], ratio[REPS], sub_cpu[REPS], rec_cpu[REPS];
    unsigned long long sub_lost = 0, rec_lost = 0;
    int rc = 0;
    for (int k = 0; k < REPS && rc == 0; k++) {
        phase a, b;
        if (k % 2 == 0) {
            a = ddsperf_phase(tmp);
            b = recorder_phase(cl, tmp, size, k);
        } else {
            b = recorder_phase(cl, tmp, size, k);
            a = ddsperf_phase(tmp);
        }
        if (!a.ok || !b.ok) {
            rc = -1;
            break;
        }
        printf("lab %6d B pair %d: ddsperf sub %9.0f /s (lost %llu) | recorder %9.0f /s = %5.1f %% "
               "(lost %llu)\n",
               size, k + 1, a.rate, a.lost, b.rate, 100 * b.rate / a.rate, b.lost);
        fflush(stdout);
        sub_rate[k] = a.rate;
        rec_rate[k] = b.rate;
        ratio[k] = b.rate / a.rate;
        sub_cpu[k] = a.cpu_per_million;
        rec_cpu[k] = b.cpu_per_million;
        sub_lost += a.lost;
        rec_lost += b.lost;
    }
    kill(pub, SIGTERM);
    waitpid(pub, NULL, 0);
    rl_lab_client_free(cl);
    /* A write the publisher gave up on (a reader that did not acknowledge within its blocking
       time, on a saturated machine) is a sequence gap for every subscriber, not a loss of
       the subscriber's: say so when ddsperf pub reported one. */
    FILE *pf = fopen(pub_out, "r");
    char line[512];
    unsigned long long pub_errors = 0;
    while (pf && fgets(line, sizeof line, pf))
        pub_errors += strstr(line, "error") != NULL || strstr(line, "timeout") != NULL;
    if (pf)
        fclose(pf);
    if (pub_errors)
        printf("lab %6d B: ddsperf pub reported %llu write errors or timeouts (gaps for every "
               "subscriber)\n", size, pub_errors);
    if (rc == 0)
        printf("lab %6d B: medians of %d pairs: ddsperf sub %9.0f samples/s (lost %llu) | "
               "recorder %9.0f samples/s = %5.1f %% of ddsperf (lost %llu: %s); CPU s per "
               "million samples: recorder %.2f, ddsperf sub %.2f\n",
               size, REPS, bench_median(sub_rate, REPS), sub_lost, bench_median(rec_rate, REPS),
               100 * bench_median(ratio, REPS), rec_lost, rec_lost ? "LOSS" : "zero loss",
               bench_median(rec_cpu, REPS), bench_median(sub_cpu, REPS));
    return rc;
}

int main(int argc, char **argv)
{
    if ((domain = bench_lab_domain("bench_lab", &argc, argv)) < 0)
        return 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            puts("usage: bench_lab [--domain N] [SIZE...]\n"
                 "  the recorder against ddsperf sub on loopback, per sample size in bytes;\n"
                 "  the DDS domain from --domain, else RUNLAB_BENCH_DOMAIN, else 232");
            return 0;
        }
        char *end = NULL;
        long size = strtol(argv[i], &end, 10);
        if (!*argv[i] || *end || size <= 0 || size > (16 << 20)) {
            fprintf(stderr, "bench_lab: argument %d: '%s' is not a sample size in bytes\n"
                            "usage: bench_lab [--domain N] [SIZE...]\n", i, argv[i]);
            return 2;
        }
    }
    if (system("command -v ddsperf >/dev/null 2>&1") != 0) {
        printf("lab: skipped (ddsperf not installed: cyclonedds-tools)\n");
        return 0;
    }
    setenv("CYCLONEDDS_URI", bench_lab_loopback_config, 1);
    double load[3] = {0};
    if (getloadavg(load, 3) == 3)
        printf("lab: load average %.2f %.2f %.2f on %ld cores; DDS domain %d (loopback)\n",
               load[0], load[1], load[2], sysconf(_SC_NPROCESSORS_ONLN), domain);
    char tmp[] = "/tmp/runlab-bench-lab-XXXXXX";
    if (!mkdtemp(tmp))
        return 1;
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc && rc == 0; i++)
            rc = run_size(atoi(argv[i]), tmp) < 0;
    } else {
        rc = run_size(100, tmp) < 0 || run_size(10000, tmp) < 0;
    }
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    (void)system(cmd);
    return rc;
}
