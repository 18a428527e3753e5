/* libFuzzer target for the MCAP readers, doctor and recovery: the streamed reader (chunks
 * expanded, and raw with resynchronisation past errors), the indexed reader (forward,
 * reverse, a time and topic query, its warnings), the summary read alone through the
 * footer, the doctor, and recover (keeping or dropping suspect messages) — whose output
 * must be a file the doctor finds clean and that holds exactly the messages recovery says
 * it kept. Both readers also read the input as a file (a memfd opened by path: mapped,
 * chunks read with pread; the streamed one also decompressing the next chunk on its
 * thread), and must yield exactly what they yield from memory. */
#include "runlab/error.h"
#include "runlab/mcap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__,       \
                    __LINE__, #cond, rl_error_last());                                   \
            abort();                                                                     \
        }                                                                                \
    } while (0)

enum { MAX_CHUNK = 16 << 20 };

/* A running digest of what a reader yields, to compare the memory and the file paths. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001B3ull + (v >> 7);
}

static uint64_t mix_bytes(uint64_t h, rl_mcap_bytes b)
{
    h = mix(h, b.len);
    for (size_t i = 0; i < b.len; i++)
        h = mix(h, b.data[i]);
    return h;
}

/* Reads the input streamed from memory (`path` NULL) or from the file `path`; returns the
 * digest of every record and status. */
static uint64_t streamed(const uint8_t *data, size_t size, rl_mcap_chunk_mode mode,
                         const char *path, int ahead)
{
    rl_mcap_reader_options o;
    rl_mcap_reader_options_default(&o);
    o.chunks = mode;
    o.decompress_ahead = ahead;
    o.max_chunk_size = MAX_CHUNK;
    rl_mcap_reader *r = NULL;
    if (path)
        CHECK(rl_mcap_reader_open(&r, path, &o) == RL_OK);
    else
        CHECK(rl_mcap_reader_open_mem(&r, data, size, &o) == RL_OK);
    uint64_t h = 0;
    rl_mcap_record rec;
    for (int steps = 0; steps < 100000; steps++) {
        int rc = rl_mcap_reader_next(r, &rec);
        h = mix(h, (uint64_t)(int64_t)rc);
        if (rc == 0)
            break;
        if (rc < 0) {
            CHECK(rl_error_last()[0] != '\0');
            uint64_t at = rl_mcap_reader_offset(r);
            h = mix(h, at);
            if (mode != RL_MCAP_CHUNKS_RAW || at + 1 >= size || at < 8)
                break;
            CHECK(rl_mcap_reader_seek(r, at + 1) == RL_OK); /* crawl past the damage */
            continue;
        }
        CHECK(rec.body.len <= size);
        if (rec.chunk_offset == RL_MCAP_NO_CHUNK)
            CHECK(rec.offset < size);
        h = mix(mix(mix(h, rec.opcode), rec.offset), rec.chunk_offset);
        h = mix_bytes(h, rec.body);
    }
    h = mix(h, rl_mcap_reader_warning_count(r));
    rl_mcap_reader_close(r);
    return h;
}

static uint64_t drain(rl_mcap_indexed *x, const rl_mcap_query *q)
{
    rl_mcap_message_iter *it = NULL;
    if (rl_mcap_indexed_messages(x, q, &it) != RL_OK)
        return 1;
    uint64_t h = 0;
    rl_mcap_message m;
    const rl_mcap_channel *ch = NULL;
    uint64_t last = 0;
    int have = 0, rc;
    for (int steps = 0; steps < 100000 && (rc = rl_mcap_message_iter_next(it, &m, &ch)) != 0;
         steps++) {
        h = mix(h, (uint64_t)(int64_t)rc);
        if (rc < 0)
            continue; /* a damaged chunk; iteration goes on past it */
        h = mix(mix(mix(h, m.log_time), m.channel_id), m.sequence);
        h = mix_bytes(h, m.data);
        CHECK(ch == NULL || ch->id == m.channel_id); /* NULL: channel never defined */
        if (q && (m.log_time < q->start_time || m.log_time > q->end_time))
            CHECK(0);
        if (have && !(q && q->reverse))
            CHECK(m.log_time >= last);
        if (have && q && q->reverse)
            CHECK(m.log_time <= last);
        last = m.log_time;
        have = 1;
    }
    rl_mcap_message_iter_free(it);
    return h;
}

/* Reads the input indexed, from memory (`path` NULL) or the file; returns the digest. */
static uint64_t indexed(const uint8_t *data, size_t size, const char *path)
{
    rl_mcap_indexed *x = NULL;
    int rc = path ? rl_mcap_indexed_open(&x, path, MAX_CHUNK)
                  : rl_mcap_indexed_open_mem(&x, data, size, MAX_CHUNK);
    if (rc != RL_OK)
        return (uint64_t)(int64_t)rc;
    const char *const *warnings = NULL;
    size_t nw = rl_mcap_indexed_warnings(x, &warnings);
    for (size_t i = 0; i < nw; i++)
        CHECK(strncmp(warnings[i], "byte ", 5) == 0);
    uint64_t h = mix(0, nw);
    rl_mcap_query q;
    rl_mcap_query_default(&q);
    h = mix(h, drain(x, &q));
    q.reverse = 1;
    h = mix(h, drain(x, &q));
    const rl_mcap_channel *chans = NULL;
    size_t n = rl_mcap_indexed_channels(x, &chans);
    char topic[64] = "";
    if (n && chans[0].topic.len < sizeof topic)
        memcpy(topic, chans[0].topic.data, chans[0].topic.len), topic[chans[0].topic.len] = 0;
    const char *topics[1] = {topic};
    rl_mcap_query_default(&q);
    q.start_time = 10;
    q.end_time = UINT64_MAX / 2;
    q.topics = topics;
    q.topic_count = 1;
    h = mix(h, drain(x, &q));
    rl_mcap_indexed_close(x);
    return h;
}

/* The input as a file: a memfd, opened by its /proc path (mapped; chunks read with pread).
 * Both readers must yield from it exactly what they yield from memory. */
static void as_file(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-mcap-input", MFD_CLOEXEC);
    CHECK(fd >= 0);
    CHECK(size == 0 || write(fd, data, size) == (ssize_t)size);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    static const rl_mcap_chunk_mode modes[] = {RL_MCAP_CHUNKS_EXPAND, RL_MCAP_CHUNKS_BOTH};
    for (size_t i = 0; i < 2; i++) {
        uint64_t from_memory = streamed(data, size, modes[i], NULL, 0);
        CHECK(streamed(data, size, modes[i], path, 0) == from_memory);
        /* The next chunk decompressed on the reader's thread: the same records and errors. */
        CHECK(streamed(data, size, modes[i], path, 1) == from_memory);
    }
    CHECK(indexed(data, size, path) == indexed(data, size, NULL));
    close(fd);
}

/* The summary read alone: with and without the CRC, the bounds it gives lie within the
 * file and its records walk to their end or to an error naming a byte; when the indexed
 * reader used the summary and found Statistics there, so does the summary alone. */
static void summary_alone(const uint8_t *data, size_t size)
{
    for (int crc = 0; crc < 2; crc++) {
        size_t start = 1, end = 1;
        int rc = rl_mcap_summary_find(data, size, crc, &start, &end);
        if (rc < 0)
            CHECK(strncmp(rl_error_last(), "byte ", 5) == 0);
        if (rc != 1) {
            CHECK(start == 0 && end == 0);
            continue;
        }
        CHECK(start >= 8 && start <= end && end < size);
        rl_mcap_record rec;
        size_t pos = start;
        for (int steps = 0; steps < 100000 && (rc = rl_mcap_records_next(data, end, &pos, &rec)) == 1;
             steps++)
            CHECK(rec.offset >= start && pos <= end);
        if (rc < 0)
            CHECK(strncmp(rl_error_last(), "byte ", 5) == 0);
        rl_mcap_statistics st;
        rc = rl_mcap_summary_statistics(data, size, crc, &st);
        if (rc == 1) {
            CHECK(st.channel_message_counts.len <= size);
            size_t p = 0;
            uint16_t id;
            uint64_t n;
            while (rl_mcap_map_u16u64_next(st.channel_message_counts, &p, &id, &n) == 1)
                ;
        }
    }
    rl_mcap_indexed *x = NULL;
    rl_mcap_statistics st;
    if (rl_mcap_indexed_open_mem(&x, data, size, MAX_CHUNK) == RL_OK) {
        const rl_mcap_statistics *is = rl_mcap_indexed_statistics(x);
        if (rl_mcap_indexed_used_summary(x) && is)
            CHECK(rl_mcap_summary_statistics(data, size, 1, &st) == 1);
        rl_mcap_indexed_close(x);
    }
}

static void recover_and_check(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-mcap", MFD_CLOEXEC);
    CHECK(fd >= 0);
    rl_mcap_recover_options o;
    memset(&o, 0, sizeof o);
    o.max_chunk_size = MAX_CHUNK;
    o.keep_suspect = size & 1; /* both ways of treating messages from damaged regions */
    rl_mcap_recover_report rep;
    int rc = rl_mcap_recover_mem(data, size, fd, &o, &rep);
    if (rc == RL_OK) {
        CHECK(rep.messages_suspect == 0 || rep.notice_count > 0);
        CHECK(!rep.input_complete || (rep.messages_lost == 0 && rep.bytes_lost == 0 &&
                                      rep.notice_count == 0));
        off_t len = lseek(fd, 0, SEEK_END);
        CHECK(len > 0 && (uint64_t)len == rep.output_size);
        uint8_t *out = malloc((size_t)len);
        CHECK(out && pread(fd, out, (size_t)len, 0) == len);
        rl_mcap_doctor_report dr;
        CHECK(rl_mcap_doctor_mem(out, (size_t)len, &dr) == RL_OK);
        if (dr.count)
            fprintf(stderr, "recovered file: byte %llu: %s\n",
                    (unsigned long long)dr.violations[0].offset, dr.violations[0].what);
        CHECK(dr.count == 0 && dr.dropped == 0);
        CHECK(dr.messages == rep.messages_kept);
        rl_mcap_doctor_report_free(&dr);
        free(out);
        rl_mcap_recover_report_free(&rep);
    } else {
        CHECK(rc == RL_EPARSE || rc == RL_ENOMEM);
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    streamed(data, size, RL_MCAP_CHUNKS_EXPAND, NULL, 0);
    streamed(data, size, RL_MCAP_CHUNKS_RAW, NULL, 0);
    as_file(data, size); /* the indexed reader, from the file and from memory */
    summary_alone(data, size);
    rl_mcap_doctor_report dr;
    if (rl_mcap_doctor_mem(data, size, &dr) == RL_OK)
        rl_mcap_doctor_report_free(&dr);
    recover_and_check(data, size);
    return 0;
}
