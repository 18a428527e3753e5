/* A publisher written from Cyclone DDS alone (idlc's code for bench/idl/lab_capacity.idl),
 * held to a fixed rate, and a plain subscriber, for bench/bench_lab_capacity.c. Not a
 * benchmark itself (hence not named bench_*.c, which `make bench` runs).
 * Usage: lab_capacity_pub DOMAIN SIZE RATE SECONDS zeros|random [batch]
 *        lab_capacity_pub --sub DOMAIN SECONDS   (the plain subscriber, see subscribe)
 * Waits (30 s at most) until a reader matches, then writes RATE x SECONDS samples (SECONDS
 * a decimal; seq 0, 1, ...; payload SIZE bytes: zeros, or random bytes that differ from
 * sample to sample and do not compress) on a reliable, keep-all, volatile writer, as
 * `ddsperf pub` uses. Pacing: sample k is due at k / RATE s; after each wake-up it writes
 * every sample due, then sleeps until the next is due, so a publisher held back catches
 * up and the average is the rate asked whenever the path can take it. `batch`: Cyclone
 * packs each wake-up's samples into as few packets as it can (flushed before sleeping).
 * Then waits for the acknowledgements (30 s at most) and prints one line:
 * "written N errors E seconds T acked 0|1 cpu C" (T: from the first write to the last;
 * C: this process's CPU seconds over the same time). Exits 0 when every sample was written
 * and acknowledged, 1 otherwise, 2 on bad arguments. */
#include "lab_capacity.h"

#include <dds/dds.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define TOPIC "RunlabBenchCapacity"
/* Random payloads are cut from a pool this large, one after the other, so no two samples
 * within a compression window (a 1 MiB chunk) share bytes. */
#define POOL_BYTES (64u << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void sleep_until(double t)
{
    double wait = t - now_s();
    if (wait <= 0)
        return;
    struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
    nanosleep(&ts, NULL);
}

/* xorshift64*: fast, and nothing a compressor finds a pattern in. */
static void fill_random(uint8_t *p, size_t n)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        uint64_t v = x * 0x2545F4914F6CDD1Dull;
        memcpy(p + i, &v, 8);
    }
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* `--sub DOMAIN SECONDS`: a plain subscriber of the same topic (reliable, keep-all) that
 * takes and discards, for the bench's baseline: what DDS delivers with no recorder behind
 * it. Ends once a writer has come and gone, or after SECONDS; prints
 * "received N gaps G cpu C". */
static int subscribe(long domain, double seconds)
{
    dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    if (pp < 0) {
        fprintf(stderr, "lab_capacity_pub: participant: %s\n", dds_strretcode(pp));
        return 1;
    }
    dds_entity_t tp = dds_create_topic(pp, &runlab_bench_CapacitySample_desc, TOPIC, NULL, NULL);
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
    dds_entity_t rd = tp < 0 ? tp : dds_create_reader(pp, tp, q, NULL);
    dds_delete_qos(q);
    dds_entity_t ws = dds_create_waitset(pp);
    dds_entity_t cond = rd < 0 ? rd : dds_create_readcondition(rd, DDS_ANY_STATE);
    if (rd < 0 || ws < 0 || cond < 0 || dds_waitset_attach(ws, cond, 0) < 0) {
        fprintf(stderr, "lab_capacity_pub: reader: %s\n", dds_strretcode(rd < 0 ? rd : cond));
        return 1;
    }
    enum { BATCH = 256 };
    void *samples[BATCH];
    dds_sample_info_t si[BATCH];
    unsigned long long received = 0, gaps = 0;
    uint64_t last = 0;
    int have_last = 0, matched_once = 0;
    double end = now_s() + seconds, c0 = cpu_s();
    while (now_s() < end) {
        (void)dds_waitset_wait(ws, NULL, 0, DDS_MSECS(50));
        dds_return_t n;
        do {
            memset(samples, 0, sizeof samples);
            n = dds_take(rd, samples, si, BATCH, BATCH);
            for (dds_return_t i = 0; i < n; i++) {
                if (!si[i].valid_data)
                    continue;
                uint64_t seq = ((const runlab_bench_CapacitySample *)samples[i])->seq;
                gaps += have_last && seq != last + 1;
                last = seq;
                have_last = 1;
                received++;
            }
            if (n > 0)
                dds_return_loan(rd, samples, n);
        } while (n == BATCH);
        dds_subscription_matched_status_t st;
        if (dds_get_subscription_matched_status(rd, &st) == 0) {
            matched_once |= st.current_count > 0;
            if (matched_once && st.current_count == 0 && n <= 0)
                break;
        }
    }
    printf("received %llu gaps %llu cpu %.3f\n", received, gaps, cpu_s() - c0);
    fflush(stdout);
    dds_delete(pp);
    return 0;
}

int main(int argc, char **argv)
{
    long domain, size, rate;
    char *end = NULL;
    if (argc == 4 && strcmp(argv[1], "--sub") == 0) {
        double secs = strtod(argv[3], &end);
        if (parse_long(argv[2], 0, 232, &domain) < 0 || !*argv[3] || *end ||
            !(secs >= 0.01 && secs <= 3600)) {
            fprintf(stderr, "usage: lab_capacity_pub --sub DOMAIN(0..232) SECONDS\n");
            return 2;
        }
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
        return getppid() == 1 ? 1 : subscribe(domain, secs);
    }
    end = NULL;
    double seconds = argc >= 6 ? strtod(argv[4], &end) : 0;
    int batch = argc == 7 && strcmp(argv[6], "batch") == 0;
    if ((argc != 6 && !batch) || parse_long(argv[1], 0, 232, &domain) < 0 ||
        parse_long(argv[2], 0, 16 << 20, &size) < 0 ||
        parse_long(argv[3], 1, 100000000, &rate) < 0 || !*argv[4] || *end ||
        !(seconds >= 0.01 && seconds <= 3600) ||
        (strcmp(argv[5], "zeros") != 0 && strcmp(argv[5], "random") != 0)) {
        fprintf(stderr, "usage: lab_capacity_pub DOMAIN(0..232) SIZE(bytes) RATE(/s) "
                        "SECONDS(0.01..3600) zeros|random [batch]\n");
        return 2;
    }
    (void)prctl(PR_SET_PDEATHSIG, SIGTERM); /* a bench that died does not leave us running */
    if (getppid() == 1)
        return 1;
    int random = strcmp(argv[5], "random") == 0;
    size_t pool_len = random ? POOL_BYTES : (size_t)size;
    uint8_t *pool = calloc(pool_len ? pool_len : 1, 1);
    if (!pool) {
        fprintf(stderr, "lab_capacity_pub: out of memory\n");
        return 1;
    }
    if (random)
        fill_random(pool, pool_len);

    dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    if (pp < 0) {
        fprintf(stderr, "lab_capacity_pub: participant: %s\n", dds_strretcode(pp));
        return 1;
    }
    dds_entity_t tp = dds_create_topic(pp, &runlab_bench_CapacitySample_desc, TOPIC, NULL, NULL);
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
    dds_qset_durability(q, DDS_DURABILITY_VOLATILE);
    /* Cyclone packs the samples of a wake-up into as few packets as it can; a writer
       takes the setting when it is created (one set later writes a packet per sample). */
    if (batch)
        dds_write_set_batch(true);
    dds_entity_t w = tp < 0 ? tp : dds_create_writer(pp, tp, q, NULL);
    dds_delete_qos(q);
    if (w < 0) {
        fprintf(stderr, "lab_capacity_pub: writer: %s\n", dds_strretcode(w));
        return 1;
    }
    int matched = 0;
    for (int i = 0; i < 3000 && !matched; i++) {
        dds_publication_matched_status_t st;
        matched = dds_get_publication_matched_status(w, &st) == 0 && st.current_count > 0;
        if (!matched)
            dds_sleepfor(DDS_MSECS(10));
    }
    if (!matched) {
        fprintf(stderr, "lab_capacity_pub: no reader matched in 30 s\n");
        return 1;
    }

    uint64_t total = (uint64_t)((double)rate * seconds + 0.5), written = 0, errors = 0;
    uint64_t span = pool_len - (size_t)size + 1; /* random: offsets 0..span-1 */
    runlab_bench_CapacitySample s = {
        .payload = {._maximum = (uint32_t)size, ._length = (uint32_t)size, ._release = false}};
    double c0 = cpu_s(), t0 = now_s(), t_last = t0;
    uint64_t seq = 0;
    while (seq < total) {
        double t = now_s();
        uint64_t due = (uint64_t)((t - t0) * (double)rate) + 1;
        if (due > total)
            due = total;
        for (; seq < due; seq++) {
            s.seq = seq;
            s.payload._buffer = random ? pool + (seq * (uint64_t)size) % span : pool;
            if (dds_write(w, &s) < 0)
                errors++;
            else
                written++;
        }
        if (batch)
            dds_write_flush(w);
        t_last = now_s();
        if (seq < total)
            sleep_until(t0 + (double)seq / (double)rate);
    }
    double secs = t_last - t0, cpu = cpu_s() - c0;
    int acked = dds_wait_for_acks(w, DDS_SECS(30)) == DDS_RETCODE_OK;
    printf("written %llu errors %llu seconds %.6f acked %d cpu %.3f\n", (unsigned long long)written,
           (unsigned long long)errors, secs, acked, cpu);
    fflush(stdout);
    dds_delete(pp);
    free(pool);
    return errors == 0 && acked ? 0 : 1;
}
