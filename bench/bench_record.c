/* Benchmark of the recorder engine: sustained messages per second through the whole
 * engine (push from a producer thread, bounded queue, 100 ms write delay, writer thread,
 * MCAP) with zero drops, against the bare MCAP writer on the same messages in the same
 * run; 100-byte and 10 KB messages, uncompressed and zstd. Target: engine >= 80 % of bare. */
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/mcap.h"
#include "runlab/record.h"
#include "runlab/time.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void fill_payload(unsigned char *buf, size_t len, uint64_t seq)
{
    /* Half structured, half varying: compressible like real sensor messages, not trivially. */
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(i < len / 2 ? i * 7 : (seq * 2654435761u + i * 40503u) >> 13);
    if (len >= 8)
        memcpy(buf, &seq, 8);
}

static int bench_bare(const char *dir, size_t size, rl_record_compression comp, uint64_t n,
                      double *rate)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/bare.mcap", dir);
    rl_mcap_writer_options wo;
    rl_mcap_writer_options_default(&wo);
    wo.compression = comp == RL_RECORD_COMPRESSION_ZSTD ? RL_MCAP_COMPRESSION_ZSTD
                                                        : RL_MCAP_COMPRESSION_NONE;
    unsigned char *buf = malloc(size);
    rl_mcap_writer *w = NULL;
    int rc = buf ? rl_mcap_writer_open_path(&w, path, &wo) : RL_ENOMEM;
    rl_mcap_channel ch = {0};
    ch.id = 0;
    ch.topic.data = (const uint8_t *)"/bench";
    ch.topic.len = 6;
    ch.message_encoding.data = (const uint8_t *)"raw";
    ch.message_encoding.len = 3;
    if (rc == RL_OK)
        rc = rl_mcap_writer_add_channel(w, &ch);
    int64_t t0 = rl_mono_ns(), last_flush = t0;
    for (uint64_t i = 0; rc == RL_OK && i < n; i++) {
        fill_payload(buf, size, i);
        rl_mcap_message m = {0};
        m.sequence = (uint32_t)i;
        m.log_time = m.publish_time = (uint64_t)rl_time_now_ns();
        m.data.data = buf;
        m.data.len = size;
        rc = rl_mcap_writer_add_message(w, &m);
        /* The same durability as the engine: a flush (chunk end + fsync) every second. */
        if ((i & 1023) == 0 && rl_mono_ns() - last_flush >= 1000000000ll) {
            rc = rl_mcap_writer_flush(w);
            last_flush = rl_mono_ns();
        }
    }
    /* Durable at the end, as the engine's close is (chunk end + fsync). */
    if (w && rc == RL_OK)
        rc = rl_mcap_writer_flush(w);
    if (w) {
        int crc = rl_mcap_writer_close(w);
        if (rc == RL_OK)
            rc = crc;
    }
    double secs = (double)(rl_mono_ns() - t0) / 1e9;
    *rate = (double)n / secs;
    free(buf);
    unlink(path);
    return rc;
}

/* `e2e`: all messages over the whole time from the first push to the end of finish;
 * `rate` (sustained): the same without the one-off 100 ms write delay. */
static int bench_engine(const char *dir, size_t size, rl_record_compression comp, uint64_t n,
                        double *rate, double *e2e, uint64_t *dropped)
{
    static int counter;
    rl_record_options o;
    rl_record_options_default(&o);
    o.home = dir;
    o.lock_dir = dir; /* a benchmark is no lab recording: its own lock, not the host's */
    o.minimum_free_bytes = 0;
    o.compression = comp;
    rl_recorder *r = NULL;
    uint16_t t = 0;
    unsigned char *buf = malloc(size);
    int rc = buf ? rl_recorder_new(&r, &o) : RL_ENOMEM;
    if (rc == RL_OK)
        rc = rl_recorder_add_topic(r, "/bench", "", "", NULL, 0, "raw", &t);
    char id[32];
    snprintf(id, sizeof id, "bench-%d-%d", (int)getpid(), ++counter);
    rl_record_run run = {.run_id = id};
    if (rc == RL_OK)
        rc = rl_recorder_prepare(r, &run);
    if (rc == RL_OK)
        rc = rl_recorder_begin(r);
    if (rc == RL_OK)
        rc = rl_recorder_mark_start(r, 0);
    int64_t t0 = rl_mono_ns();
    for (uint64_t i = 0; rc == RL_OK && i < n; i++) {
        fill_payload(buf, size, i);
        int64_t now = rl_time_now_ns();
        rc = rl_recorder_push(r, t, now, now, buf, size);
        /* The engine never blocks; a producer that wants zero drops keeps under the limits,
         * with a margin far above the 256 messages it pushes between two looks. (Half the
         * limits, as before, capped the engine by Little's law: every message stays queued
         * for the 100 ms write delay, and 500 k / 0.1 s is 5 M msg/s.) */
        if ((i & 255) == 0) {
            rl_record_status s;
            for (;;) {
                rl_recorder_status(r, &s);
                if (s.queued_bytes < o.max_queued_bytes - o.max_queued_bytes / 16 &&
                    s.queued_messages < o.max_queued_messages - o.max_queued_messages / 16)
                    break;
                struct timespec ts = {0, 200000};
                nanosleep(&ts, NULL);
            }
        }
    }
    if (rc == RL_OK)
        rc = rl_recorder_mark_stop(r, INT64_MAX);
    if (rc == RL_OK)
        rc = rl_recorder_finish(r, NULL);
    double secs = (double)(rl_mono_ns() - t0) / 1e9;
    *e2e = (double)n / secs;
    /* The write delay is latency, paid once: the first message is written 100 ms after
     * its push, the last (STOP decides it) right away. Without it, the rate compares
     * with the bare writer's, which also includes closing the bag durably. */
    double busy = secs - (double)o.write_delay_ns / 1e9;
    *rate = busy > 0 ? (double)n / busy : *e2e;
    rl_record_status s;
    if (r) {
        rl_recorder_status(r, &s);
        *dropped = s.dropped;
        if (rc == RL_OK && s.written != n)
            rc = rl_error_set(RL_ERR, "wrote %llu of %llu", (unsigned long long)s.written,
                              (unsigned long long)n);
        char rm[PATH_MAX];
        snprintf(rm, sizeof rm, "%s", rl_recorder_run_dir(r));
        rl_recorder_free(r);
        if (rm[0])
            rl_fs_remove_tree(rm);
    }
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    char dir[PATH_MAX];
    if (rl_fs_mkdtemp("runlab-bench-record-", dir, sizeof dir) < 0) {
        fprintf(stderr, "bench_record: %s\n", rl_error_last());
        return 1;
    }
    static const size_t sizes[] = {100, 10240};
    static const uint64_t counts[] = {6000000, 60000};
    static const rl_record_compression comps[] = {RL_RECORD_COMPRESSION_NONE,
                                                  RL_RECORD_COMPRESSION_ZSTD};
    int status = 0;
    printf("bench_record: engine (queue + 100 ms write delay + writer thread + MCAP) vs bare "
           "MCAP writer, best of 3, %ld online CPUs\n", sysconf(_SC_NPROCESSORS_ONLN));
    for (size_t s = 0; s < 2; s++) {
        for (size_t c = 0; c < 2; c++) {
            /* Optional filter for profiling one case: bench_record [bytes [none|zstd]]. */
            if ((argc > 1 && strtoull(argv[1], NULL, 10) != sizes[s]) ||
                (argc > 2 && strcmp(argv[2], rl_record_compression_name(comps[c])) != 0))
                continue;
            /* Best of three, alternating, so that a burst of load from other processes on
             * the machine does not decide the comparison. */
            double bare = 0, eng = 0, e2e = 0;
            uint64_t dropped = 0;
            int rc = RL_OK;
            for (int rep = 0; rc == RL_OK && rep < 3; rep++) {
                double b = 0, e = 0, ee = 0;
                uint64_t d = 0;
                rc = bench_bare(dir, sizes[s], comps[c], counts[s], &b);
                if (rc == RL_OK)
                    rc = bench_engine(dir, sizes[s], comps[c], counts[s], &e, &ee, &d);
                bare = b > bare ? b : bare;
                eng = e > eng ? e : eng;
                e2e = ee > e2e ? ee : e2e;
                dropped += d;
            }
            if (rc < 0) {
                printf("  %6zu B %-4s  error: %s\n", sizes[s], rl_record_compression_name(comps[c]),
                       rl_error_last());
                status = 1;
                continue;
            }
            printf("  %6zu B %-4s %8llu msgs  bare %9.0f msg/s %6.1f MB/s | engine sustained "
                   "%9.0f msg/s %5.1f %% | end-to-end %9.0f msg/s %5.1f %% | dropped %llu\n",
                   sizes[s], rl_record_compression_name(comps[c]),
                   (unsigned long long)counts[s], bare, bare * (double)sizes[s] / 1e6, eng,
                   100.0 * eng / bare, e2e, 100.0 * e2e / bare, (unsigned long long)dropped);
        }
    }
    rl_fs_remove_tree(dir);
    return status;
}
