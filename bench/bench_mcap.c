/* Benchmark of the MCAP writer and readers: 1,000,000 messages of 100 bytes and 1,000 of
 * 1 MiB over 4 channels, written unchunked, chunked uncompressed, zstd and lz4, then read
 * back; beside them, in the same run, a plain buffered write() of the same payload bytes
 * (and of as many bytes as the MCAP file has) and the compressor alone on the very chunks
 * the writer produced, so the codec's own overhead shows as a ratio. Ends with an indexed
 * time-range query on the 1 GiB file that must load only the chunks in range, then the
 * resident memory of whole-file reads of 0.5 and 2 GiB files (RUNLAB_BENCH_NO_LARGE=1
 * skips it; RUNLAB_BENCH_MEMORY_ONLY=1 runs only it). Files go to $TMPDIR (default /tmp),
 * deleted after.
 * Small-message timings are the best of 3 runs (writer, plain write and compressor alike).
 * The two targets on the writer are judged in CPU time (all threads), which a busy machine
 * does not inflate as it does wall time: the chunked uncompressed writer against a plain
 * write of the file's own bytes (>= 0.5 of its rate), and what compression adds to the
 * writer against the compressor alone on the same chunks (<= 1.15). */
#include "runlab/error.h"
#include "runlab/mcap.h"

#include "bench_util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

enum { NCHAN = 4, POOL = 4096, BUFSZ = 64 * 1024 };

typedef struct workload {
    const char *name;
    size_t count, size;
} workload;

/* CPU seconds (all threads) of the last plain_write, write_mcap or compressor_alone: the
 * writer's compression worker runs beside the caller, so on a busy machine its wall time
 * says more about the neighbours than about the work; the ratios that judge the writer
 * against its parts are taken in CPU time. */
static double last_cpu_s;

static void die(const char *what)
{
    fprintf(stderr, "bench_mcap: %s: %s\n", what, rl_error_last());
    exit(1);
}

/* Sensor-like bytes: half slowly changing counters, half noise (zstd ratio about 2). */
static void fill(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        p[i] = (i & 4) ? (uint8_t)((s * 0x2545F4914F6CDD1Dull) >> 56) : (uint8_t)(i >> 9);
    }
}

typedef struct payloads {
    uint8_t *mem;
    size_t size, n;
} payloads;

static const uint8_t *payload(const payloads *p, size_t i)
{
    return p->mem + (i % p->n) * p->size;
}

static double mb(double bytes)
{
    return bytes / 1e6;
}

static const char *tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

/* Plain buffered write(): `total` bytes taken message by message from the payload pool,
 * copied into a 64 KiB buffer and written when full. With total = the payload it is the
 * "same payload bytes" baseline; with total = the MCAP file's size, the "same number of
 * bytes as the writer writes" baseline (the file is 1.47x the payload for 100-byte
 * messages: record headers and index entries). */
static double plain_write(const char *path, const workload *w, const payloads *p, double total)
{
    uint8_t *buf = malloc(BUFSZ);
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (!buf || fd < 0)
        die("plain write setup");
    double c0 = bench_cpu_s();
    double t0 = bench_now_s();
    size_t used = 0;
    size_t remaining = (size_t)total;
    for (size_t i = 0; remaining; i++) {
        const uint8_t *src = payload(p, i);
        size_t left = w->size < remaining ? w->size : remaining;
        remaining -= left;
        while (left) {
            size_t n = left < BUFSZ - used ? left : BUFSZ - used;
            memcpy(buf + used, src, n);
            used += n;
            src += n;
            left -= n;
            if (used == BUFSZ) {
                if (write(fd, buf, used) != (ssize_t)used)
                    die("plain write");
                used = 0;
            }
        }
    }
    if (used && write(fd, buf, used) != (ssize_t)used)
        die("plain write");
    double t = bench_now_s() - t0;
    last_cpu_s = bench_cpu_s() - c0;
    close(fd);
    unlink(path);
    free(buf);
    return t;
}

static double best_plain(const char *path, const workload *w, const payloads *p, double total,
                         int reps)
{
    double best = 0, best_cpu = 0;
    for (int r = 0; r < reps; r++) {
        double t = plain_write(path, w, p, total);
        best = r == 0 || t < best ? t : best;
        best_cpu = r == 0 || last_cpu_s < best_cpu ? last_cpu_s : best_cpu;
    }
    last_cpu_s = best_cpu;
    return best;
}

static double write_mcap(const char *path, const workload *w, const payloads *p, int chunked,
                         rl_mcap_compression c)
{
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.use_chunks = chunked;
    o.compression = c;
    /* A fresh file each time, as for the plain write: truncating an existing file makes
     * ext4 start writeback on close (auto_da_alloc), which would be timed here. */
    unlink(path);
    double c0 = bench_cpu_s();
    double t0 = bench_now_s();
    rl_mcap_writer *wr = NULL;
    if (rl_mcap_writer_open_path(&wr, path, &o) < 0)
        die("open writer");
    static const char *const topics[NCHAN] = {"/camera", "/lidar", "/imu", "/odom"};
    rl_mcap_schema s = {1, {(const uint8_t *)"bench/Blob", 10}, {(const uint8_t *)"ros2msg", 7},
                        {(const uint8_t *)"uint8[] data", 12}};
    if (rl_mcap_writer_add_schema(wr, &s) < 0)
        die("schema");
    for (uint16_t i = 0; i < NCHAN; i++) {
        rl_mcap_channel ch;
        memset(&ch, 0, sizeof ch);
        ch.id = (uint16_t)(i + 1);
        ch.schema_id = 1;
        ch.topic.data = (const uint8_t *)topics[i];
        ch.topic.len = strlen(topics[i]);
        ch.message_encoding.data = (const uint8_t *)"cdr";
        ch.message_encoding.len = 3;
        if (rl_mcap_writer_add_channel(wr, &ch) < 0)
            die("channel");
    }
    rl_mcap_message m;
    memset(&m, 0, sizeof m);
    for (size_t i = 0; i < w->count; i++) {
        m.channel_id = (uint16_t)(1 + i % NCHAN);
        m.sequence = (uint32_t)i;
        m.log_time = m.publish_time = 1700000000ull + i * 1000000ull;
        m.data.data = payload(p, i);
        m.data.len = w->size;
        if (rl_mcap_writer_add_message(wr, &m) < 0)
            die("add message");
    }
    if (rl_mcap_writer_close(wr) < 0)
        die("close writer");
    double t = bench_now_s() - t0;
    last_cpu_s = bench_cpu_s() - c0;
    return t;
}

static double read_streamed(const char *path, size_t expect)
{
    double t0 = bench_now_s();
    rl_mcap_reader *r = NULL;
    if (rl_mcap_reader_open(&r, path, NULL) < 0)
        die("open reader");
    rl_mcap_record rec;
    size_t n = 0;
    uint64_t sum = 0;
    int rc;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1)
        if (rec.opcode == RL_MCAP_OP_MESSAGE) {
            n++;
            sum += rec.u.message.data.data[0];
        }
    if (rc < 0 || n != expect)
        die("streamed read");
    rl_mcap_reader_close(r);
    if (sum == 1) /* keeps the payload touch from being optimised away */
        fputc(' ', stderr);
    return bench_now_s() - t0;
}

/* All messages through the indexed reader in log-time order, chunk CRCs checked or not. */
static double read_indexed(const char *path, size_t expect, int verify_crcs)
{
    double t0 = bench_now_s();
    rl_mcap_indexed *x = NULL;
    if (rl_mcap_indexed_open(&x, path, 0) < 0)
        die("indexed open");
    rl_mcap_indexed_set_verify_crcs(x, verify_crcs);
    rl_mcap_message_iter *it = NULL;
    if (rl_mcap_indexed_messages(x, NULL, &it) < 0)
        die("indexed query");
    rl_mcap_message m;
    size_t n = 0;
    uint64_t sum = 0;
    int rc;
    while ((rc = rl_mcap_message_iter_next(it, &m, NULL)) == 1) {
        n++;
        sum += m.data.data[0];
    }
    if (rc < 0 || n != expect)
        die("indexed read");
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(x);
    if (sum == 1)
        fputc(' ', stderr);
    return bench_now_s() - t0;
}

/* Peak resident memory above the current, while `read` reads the file. */
static double peak_rss_mb(double (*read)(const char *, size_t, int), const char *path,
                          size_t expect, int arg)
{
    bench_reset_peak_rss();
    long long before = bench_proc_status_bytes("VmRSS");
    read(path, expect, arg);
    return mb((double)(bench_proc_status_bytes("VmHWM") - before));
}

static double read_streamed_any(const char *path, size_t expect, int unused)
{
    (void)unused;
    return read_streamed(path, expect);
}

/* Resident memory of whole-file reads at 0.5 and 2 GiB (4 KiB messages, chunked,
 * uncompressed: the case where messages are served straight from the mapped file). It
 * must not grow with the file. Skipped when the disk has too little room. */
static void memory_by_size(void)
{
    static const double gib[] = {0.5, 2.0};
    printf("\nresident memory of whole-file reads (4 KiB messages, chunked, uncompressed)\n");
    for (size_t k = 0; k < 2; k++) {
        workload w = {"large file", (size_t)(gib[k] * (1 << 30)) / 4096, 4096};
        struct statvfs sv;
        double need = gib[k] * 2.5 * (1 << 30);
        if (statvfs(tmpdir(), &sv) == 0 && (double)sv.f_bavail * (double)sv.f_frsize < need) {
            printf("  %.1f GiB: skipped, less than %.1f GB free in %s\n", gib[k], need / 1e9,
                   tmpdir());
            continue;
        }
        payloads p = {NULL, 4096, 64};
        p.mem = malloc(p.n * p.size);
        if (!p.mem)
            die("malloc payloads");
        for (size_t i = 0; i < p.n; i++)
            fill(p.mem + i * p.size, p.size, i + 1);
        char path[512];
        snprintf(path, sizeof path, "%s/bench_mcap_%d_large.mcap", tmpdir(), (int)getpid());
        write_mcap(path, &w, &p, 1, RL_MCAP_COMPRESSION_NONE);
        free(p.mem);
        double streamed = peak_rss_mb(read_streamed_any, path, w.count, 0);
        double indexed = peak_rss_mb(read_indexed, path, w.count, 1);
        printf("  %.1f GiB file: peak RSS growth while reading: streamed %.0f MB, indexed "
               "(log-time order) %.0f MB\n",
               gib[k], streamed, indexed);
        unlink(path);
    }
}

/* The compressor alone on the chunks the writer produced: each chunk is decompressed
 * (untimed, so it is warm in cache as the writer's freshly built chunk is) and compressed
 * once; the time is the best over `reps` passes of the summed compressions, the same
 * best-of-n rule as the writer's. */
static double compressor_alone(const char *path, rl_mcap_compression c, int reps)
{
    double best = 0, best_cpu = 0;
    uint8_t *out = NULL;
    size_t cap = 0;
    for (int rep = 0; rep < reps; rep++) {
        double cpu = 0;
        rl_mcap_reader_options ro;
        rl_mcap_reader_options_default(&ro);
        ro.chunks = RL_MCAP_CHUNKS_RAW;
        rl_mcap_reader *r = NULL;
        if (rl_mcap_reader_open(&r, path, &ro) < 0)
            die("open reader");
        rl_mcap_record rec;
        double t = 0;
        while (rl_mcap_reader_next(r, &rec) == 1) {
            if (rec.opcode != RL_MCAP_OP_CHUNK)
                continue;
            const uint8_t *buf;
            size_t n;
            int owned;
            if (rl_mcap_chunk_decompress(&rec.u.chunk, UINT64_MAX, 0, &buf, &n, &owned) < 0)
                die("decompress");
            size_t bound = c == RL_MCAP_COMPRESSION_ZSTD ? ZSTD_compressBound(n)
                                                         : LZ4F_compressFrameBound(n, NULL) + 64;
            if (bound > cap) {
                free(out);
                cap = bound;
                out = malloc(cap);
                if (!out)
                    die("malloc");
            }
            double c0 = bench_cpu_s();
            double t0 = bench_now_s();
            if (c == RL_MCAP_COMPRESSION_ZSTD) {
                if (ZSTD_isError(ZSTD_compress(out, cap, buf, n, RL_MCAP_ZSTD_DEFAULT_LEVEL)))
                    die("zstd");
            } else {
                LZ4F_preferences_t prefs;
                memset(&prefs, 0, sizeof prefs);
                prefs.frameInfo.contentSize = n;
                prefs.frameInfo.blockMode = LZ4F_blockIndependent; /* as the writer */
                if (LZ4F_isError(LZ4F_compressFrame(out, cap, buf, n, &prefs)))
                    die("lz4");
            }
            t += bench_now_s() - t0;
            cpu += bench_cpu_s() - c0;
            if (owned)
                free((void *)buf);
        }
        rl_mcap_reader_close(r);
        best = rep == 0 || t < best ? t : best;
        best_cpu = rep == 0 || cpu < best_cpu ? cpu : best_cpu;
    }
    free(out);
    last_cpu_s = best_cpu;
    return best;
}

static void indexed_range(const char *path, const workload *w)
{
    double t0 = bench_now_s();
    rl_mcap_indexed *x = NULL;
    if (rl_mcap_indexed_open(&x, path, 0) < 0)
        die("indexed open");
    const rl_mcap_chunk_index *ci = NULL;
    size_t nchunks = rl_mcap_indexed_chunk_indexes(x, &ci);
    rl_mcap_query q;
    rl_mcap_query_default(&q);
    uint64_t base = 1700000000ull;
    q.start_time = base + (w->count / 2) * 1000000ull;
    q.end_time = q.start_time + 9 * 1000000ull; /* 10 messages */
    rl_mcap_message_iter *it = NULL;
    if (rl_mcap_indexed_messages(x, &q, &it) < 0)
        die("query");
    rl_mcap_message m;
    size_t n = 0;
    int rc;
    while ((rc = rl_mcap_message_iter_next(it, &m, NULL)) == 1)
        n++;
    if (rc < 0)
        die("query next");
    rl_mcap_message_iter_free(it);
    size_t in_range = 0;
    for (size_t i = 0; i < nchunks; i++)
        in_range += ci[i].message_end_time >= q.start_time && ci[i].message_start_time <= q.end_time;
    uint64_t loaded = rl_mcap_indexed_chunks_loaded(x);
    printf("  indexed range query on the %.2f GB file: %zu messages, %" PRIu64 " of %zu chunks "
           "loaded (%zu overlap the range) in %.3f s -> %s\n",
           mb((double)w->count * (double)w->size) / 1e3, n, loaded, nchunks, in_range,
           bench_now_s() - t0, loaded == in_range ? "only chunks in range" : "EXTRA CHUNKS LOADED");
    rl_mcap_indexed_close(x);
}

static void run(const workload *w)
{
    payloads p;
    p.size = w->size;
    p.n = w->size >= 65536 ? 8 : POOL;
    p.mem = malloc(p.n * p.size);
    if (!p.mem)
        die("malloc payloads");
    for (size_t i = 0; i < p.n; i++)
        fill(p.mem + i * p.size, p.size, i + 1);
    double bytes = (double)w->count * (double)w->size;
    char path[512];
    char plain_path[512];
    snprintf(path, sizeof path, "%s/bench_mcap_%d.mcap", tmpdir(), (int)getpid());
    snprintf(plain_path, sizeof plain_path, "%s/bench_mcap_%d.plain", tmpdir(), (int)getpid());
    printf("\n%s: %zu messages of %zu bytes over %d channels (%.0f MB of payload)\n", w->name,
           w->count, w->size, NCHAN, mb(bytes));
    /* The small workload is quick: best of 3 tames the noise of a shared machine. */
    int reps = w->size < 65536 ? 3 : 1;
    double plain = best_plain(plain_path, w, &p, bytes, reps);
    double plain_cpu = last_cpu_s;
    printf("  %-27s %9.3f s  %12.0f msg/s  %8.1f MB/s\n", "plain buffered write()", plain,
           (double)w->count / plain, mb(bytes) / plain);
    static const struct {
        const char *name;
        int chunked;
        rl_mcap_compression c;
    } modes[] = {{"unchunked", 0, RL_MCAP_COMPRESSION_NONE},
                 {"chunked, uncompressed", 1, RL_MCAP_COMPRESSION_NONE},
                 {"chunked, zstd", 1, RL_MCAP_COMPRESSION_ZSTD},
                 {"chunked, lz4", 1, RL_MCAP_COMPRESSION_LZ4}};
    double cw_uncompressed = 0, cf_uncompressed = 0; /* CPU: chunked writer, its file */
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
        double tw = write_mcap(path, w, &p, modes[k].chunked, modes[k].c);
        double cw = last_cpu_s;
        for (int r = 1; r < reps; r++) {
            double t = write_mcap(path, w, &p, modes[k].chunked, modes[k].c);
            tw = t < tw ? t : tw;
            cw = last_cpu_s < cw ? last_cpu_s : cw;
        }
        FILE *f = fopen(path, "rb");
        long fsize = 0;
        if (f && fseek(f, 0, SEEK_END) == 0)
            fsize = ftell(f);
        if (f)
            fclose(f);
        double tr = read_streamed(path, w->count);
        double ti = 0, ti_nocrc = 0;
        if (modes[k].chunked) {
            ti = read_indexed(path, w->count, 1);
            ti_nocrc = read_indexed(path, w->count, 0);
            for (int r = 1; r < reps; r++) {
                double a = read_indexed(path, w->count, 1), b = read_indexed(path, w->count, 0);
                ti = a < ti ? a : ti;
                ti_nocrc = b < ti_nocrc ? b : ti_nocrc;
            }
        }
        printf("  write %-21s %9.3f s  %12.0f msg/s  %8.1f MB/s  (%.2fx plain write; file %.0f MB; "
               "CPU %.3f s)\n",
               modes[k].name, tw, (double)w->count / tw, mb(bytes) / tw, tw / plain,
               mb((double)fsize), cw);
        printf("  read  %-21s %9.3f s  %12.0f msg/s  %8.1f MB/s\n", modes[k].name, tr,
               (double)w->count / tr, mb(bytes) / tr);
        if (modes[k].chunked) {
            printf("  indexed, log order, CRC   %9.3f s  %12.0f msg/s  %8.1f MB/s\n", ti,
                   (double)w->count / ti, mb(bytes) / ti);
            printf("  indexed, log order, no CRC%9.3f s  %12.0f msg/s  %8.1f MB/s\n", ti_nocrc,
                   (double)w->count / ti_nocrc, mb(bytes) / ti_nocrc);
        }
        if (modes[k].c != RL_MCAP_COMPRESSION_NONE) {
            double tc = compressor_alone(path, modes[k].c, reps);
            double cc = last_cpu_s;
            /* The writer also writes the file the compressor alone does not: its share is
               the plain write of as many bytes (the file's pages are dropped first). */
            unlink(path);
            best_plain(plain_path, w, &p, (double)fsize, reps);
            double cf = last_cpu_s;
            printf("  %-27s %9.3f s  %12s        %8.1f MB/s  (wall: writer / compressor = %.2f)\n",
                   modes[k].c == RL_MCAP_COMPRESSION_ZSTD ? "zstd alone, same chunks"
                                                          : "lz4 alone, same chunks",
                   tc, "", mb(bytes) / tc, tw / tc);
            /* What compression adds to the writer, against the compressor alone: the
               writer's CPU less that of the same writer uncompressed (records, indexes,
               chunk CRC, file), the smaller file's write given back. */
            double added = cw - (cw_uncompressed - cf_uncompressed + cf);
            printf("  -> writer CPU %.3f s = uncompressed writer %.3f s - its file write %.3f s + "
                   "this file's write %.3f s + compression %.3f s; compression / compressor "
                   "alone %.3f s = %.2f (target <= 1.15): %s\n",
                   cw, cw_uncompressed, cf_uncompressed, cf, added, cc, added / cc,
                   added / cc <= 1.15 ? "met" : "MISSED");
        }
        if (modes[k].chunked && modes[k].c == RL_MCAP_COMPRESSION_NONE) {
            if (w->size >= 65536)
                indexed_range(path, w);
            /* Without the MCAP file's dirty pages, as the payload-bytes write had none. */
            unlink(path);
            double plain_file = best_plain(plain_path, w, &p, (double)fsize, reps);
            cw_uncompressed = cw;
            cf_uncompressed = last_cpu_s;
            printf("  %-27s %9.3f s  %12s        %8.1f MB/s  (%.0f MB, the file's size)\n",
                   "plain write, file bytes", plain_file, "", mb((double)fsize) / plain_file,
                   mb((double)fsize));
            /* The file holds more bytes than the payload (record headers, indexes): against
               the payload-bytes write the writer can reach at most plain / plain_file even if
               building records cost nothing, so the target is judged against the write of the
               file's own bytes, and the bound is printed beside it. */
            double file_rate = cf_uncompressed / cw;
            printf("  -> chunked uncompressed writer rate / plain write of the file's bytes, in "
                   "CPU (target >= 0.50): %.2f: %s (of the payload-bytes write %.2f, at most %.2f "
                   "for a file %.2fx the payload; in wall time %.2f and %.2f)\n",
                   file_rate, file_rate >= 0.5 ? "met" : "MISSED", plain_cpu / cw,
                   plain_cpu / cf_uncompressed, (double)fsize / bytes, plain_file / tw,
                   plain / tw);
        }
        unlink(path);
    }
    free(p.mem);
}

int main(void)
{
    static const workload loads[] = {{"small messages", 1000000, 100},
                                     {"large messages", 1000, 1 << 20}};
    printf("bench_mcap: runlab MCAP writer and readers (files in %s, deleted after)\n", tmpdir());
    double t0 = bench_now_s();
    for (size_t i = 0; i < sizeof loads / sizeof loads[0] && !getenv("RUNLAB_BENCH_MEMORY_ONLY");
         i++)
        run(&loads[i]);
    if (!getenv("RUNLAB_BENCH_NO_LARGE"))
        memory_by_size();
    printf("\nbench_mcap: total %.1f s\n", bench_now_s() - t0);
    return 0;
}
