/* MCAP writer -> reader round trips: every compression, chunked and not, every index
 * option on and off; out-of-order log times; the indexed reader's order (forward and
 * reverse, ties in file order), topic and time filters, chunks touched by a narrow query;
 * attachments and metadata; flush durability; write errors and API misuse. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/mcap.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct exp_msg {
    uint16_t channel;
    uint32_t seq;
    uint64_t log_time;
    size_t len;
} exp_msg;

static const char *const topics[] = {"/a", "/b", "/c"};

static rl_mcap_bytes B(const char *s)
{
    rl_mcap_bytes b = {(const uint8_t *)s, strlen(s)};
    return b;
}

static uint8_t payload_byte(uint32_t seq, size_t i)
{
    return (uint8_t)(seq * 31u + i * 7u);
}

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Writes `n` messages over three channels (the third schemaless), one attachment and
 * one metadata record; fills `out` in write order. `monotonic` gives increasing times. */
static void write_sample(const char *path, const rl_mcap_writer_options *o, size_t n, int monotonic,
                         exp_msg *out)
{
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_path(&w, path, o), RL_OK);
    rl_mcap_schema s = {1, B("pkg/Msg"), B("ros2msg"), B("int32 x")};
    assert_int_equal(rl_mcap_writer_add_schema(w, &s), RL_OK);
    rl_mcap_kv kv[2] = {{B("qos"), B("reliable")}, {B("k"), B("v")}};
    for (uint16_t c = 0; c < 3; c++) {
        rl_mcap_channel ch;
        memset(&ch, 0, sizeof ch);
        ch.id = (uint16_t)(c + 1);
        ch.schema_id = c == 2 ? 0 : 1;
        ch.topic = B(topics[c]);
        ch.message_encoding = B("cdr");
        ch.metadata_kv = c == 0 ? kv : NULL;
        ch.metadata_kv_count = c == 0 ? 2 : 0;
        assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_OK);
    }
    uint8_t *buf = malloc(400);
    uint32_t seed = 12345;
    for (size_t i = 0; i < n; i++) {
        rl_mcap_message m;
        m.channel_id = (uint16_t)(1 + lcg(&seed) % 3);
        m.sequence = (uint32_t)i;
        m.log_time = monotonic ? 1000 + 10 * (uint64_t)i : lcg(&seed) % 5000; /* ties too */
        m.publish_time = m.log_time + 1;
        size_t len = lcg(&seed) % 300;
        for (size_t k = 0; k < len; k++)
            buf[k] = payload_byte(m.sequence, k);
        m.data.data = buf;
        m.data.len = len;
        assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_OK);
        out[i].channel = m.channel_id;
        out[i].seq = m.sequence;
        out[i].log_time = m.log_time;
        out[i].len = len;
        if (i == n / 2) {
            rl_mcap_attachment a;
            memset(&a, 0, sizeof a);
            a.log_time = 7;
            a.create_time = 3;
            a.name = B("calib.yaml");
            a.media_type = B("text/yaml");
            a.data = B("fx: 1.0\n");
            assert_int_equal(rl_mcap_writer_add_attachment(w, &a), RL_OK);
            rl_mcap_metadata md;
            memset(&md, 0, sizeof md);
            md.name = B("robot");
            md.metadata_kv = kv;
            md.metadata_kv_count = 2;
            assert_int_equal(rl_mcap_writer_add_metadata(w, &md), RL_OK);
        }
    }
    free(buf);
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
}

static void check_payload(const rl_mcap_message *m, const exp_msg *e)
{
    assert_int_equal(m->channel_id, e->channel);
    assert_int_equal(m->sequence, e->seq);
    assert_int_equal(m->log_time, e->log_time);
    assert_int_equal(m->publish_time, e->log_time + 1);
    assert_int_equal(m->data.len, e->len);
    for (size_t k = 0; k < e->len; k++)
        assert_int_equal(m->data.data[k], payload_byte(e->seq, k));
}

/* Streamed: every message in write order, the other records present, CRCs checked; with
 * `ahead`, the next chunk decompressed on the reader's thread. */
static void check_streamed(const char *path, const exp_msg *exp, size_t n, int with_crc,
                           int ahead)
{
    rl_mcap_reader *r = NULL;
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    ro.decompress_ahead = ahead;
    assert_int_equal(rl_mcap_reader_open(&r, path, &ro), RL_OK);
    rl_mcap_record rec;
    size_t got = 0, att = 0, meta = 0, channels = 0;
    int rc;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
        if (rec.opcode == RL_MCAP_OP_MESSAGE) {
            assert_true(got < n);
            check_payload(&rec.u.message, &exp[got]);
            got++;
        } else if (rec.opcode == RL_MCAP_OP_ATTACHMENT) {
            att++;
            assert_memory_equal(rec.u.attachment.data.data, "fx: 1.0\n", 8);
            assert_int_equal(rec.u.attachment.crc,
                             with_crc ? rl_mcap_attachment_crc(&rec.u.attachment) : 0);
        } else if (rec.opcode == RL_MCAP_OP_METADATA) {
            meta++;
            size_t pos = 0;
            rl_mcap_bytes k, v;
            assert_int_equal(rl_mcap_map_str_next(rec.u.metadata.metadata, &pos, &k, &v), 1);
            assert_memory_equal(k.data, "qos", 3);
            assert_memory_equal(v.data, "reliable", 8);
        } else if (rec.opcode == RL_MCAP_OP_CHANNEL) {
            channels++;
        } else if (rec.opcode == RL_MCAP_OP_HEADER) {
            /* Default header: empty profile, library "runlab <version>". */
            assert_int_equal(rec.u.header.profile.len, 0);
            assert_true(rec.u.header.library.len > 8);
            assert_memory_equal(rec.u.header.library.data, "runlab 0.", 9);
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(got, n);
    assert_int_equal(att, 1);
    assert_int_equal(meta, 1);
    assert_true(channels >= 3);
    rl_mcap_reader_close(r);
}

/* The expected indexed order: stable sort of write order by log time. */
static size_t *sorted_order(const exp_msg *exp, size_t n)
{
    size_t *idx = malloc(n * sizeof *idx);
    for (size_t i = 0; i < n; i++) {
        size_t at = i;
        while (at > 0 && exp[idx[at - 1]].log_time > exp[i].log_time) {
            idx[at] = idx[at - 1];
            at--;
        }
        idx[at] = i;
    }
    return idx;
}

static void check_query(rl_mcap_indexed *x, const exp_msg *exp, const size_t *order, size_t n,
                        uint64_t start, uint64_t end, const char *topic, int reverse)
{
    rl_mcap_query q;
    rl_mcap_query_default(&q);
    q.start_time = start;
    q.end_time = end;
    q.reverse = reverse;
    const char *tl[1] = {topic};
    if (topic) {
        q.topics = tl;
        q.topic_count = 1;
    }
    rl_mcap_message_iter *it = NULL;
    assert_int_equal(rl_mcap_indexed_messages(x, &q, &it), RL_OK);
    size_t want = 0;
    for (size_t j = 0; j < n; j++) {
        size_t i = order[reverse ? n - 1 - j : j];
        const exp_msg *e = &exp[i];
        if (e->log_time < start || e->log_time > end ||
            (topic && strcmp(topics[e->channel - 1], topic) != 0))
            continue;
        rl_mcap_message m;
        const rl_mcap_channel *ch = NULL;
        assert_int_equal(rl_mcap_message_iter_next(it, &m, &ch), 1);
        check_payload(&m, e);
        assert_non_null(ch);
        assert_int_equal(ch->id, e->channel);
        want++;
    }
    rl_mcap_message m;
    assert_int_equal(rl_mcap_message_iter_next(it, &m, NULL), 0);
    rl_mcap_message_iter_free(it);
    assert_true(want > 0 || start > end);
}

static void check_indexed(const char *path, const rl_mcap_writer_options *o, const exp_msg *exp,
                          size_t n)
{
    rl_mcap_indexed *x = NULL;
    assert_int_equal(rl_mcap_indexed_open(&x, path, 0), RL_OK);
    int indexed = o->use_chunks && o->chunk_index && o->repeated_channels && o->repeated_schemas;
    assert_int_equal(rl_mcap_indexed_used_summary(x), indexed);
    const rl_mcap_channel *chans;
    const rl_mcap_schema *schemas;
    assert_int_equal(rl_mcap_indexed_channels(x, &chans), 3);
    assert_int_equal(rl_mcap_indexed_schemas(x, &schemas), 1);
    assert_memory_equal(chans[1].topic.data, "/b", 2);
    assert_int_equal(chans[2].schema_id, 0);
    const rl_mcap_statistics *st = rl_mcap_indexed_statistics(x);
    if (o->statistics) {
        assert_non_null(st);
        assert_int_equal(st->message_count, n);
        assert_int_equal(st->channel_count, 3);
        assert_int_equal(st->attachment_count, 1);
        uint64_t total = 0, v;
        uint16_t k;
        size_t pos = 0;
        while (rl_mcap_map_u16u64_next(st->channel_message_counts, &pos, &k, &v) == 1)
            total += v;
        assert_int_equal(total, n);
    } else {
        assert_null(st);
    }
    const rl_mcap_attachment_index *ai;
    size_t na = rl_mcap_indexed_attachment_indexes(x, &ai);
    if (o->attachment_index || !indexed)
        assert_int_equal(na, 1);
    if (na) {
        /* The index points at the Attachment record. */
        rl_mcap_reader *r = NULL;
        assert_int_equal(rl_mcap_reader_open(&r, path, NULL), RL_OK);
        assert_int_equal(rl_mcap_reader_seek(r, ai[0].offset), RL_OK);
        rl_mcap_record rec;
        assert_int_equal(rl_mcap_reader_next(r, &rec), 1);
        assert_int_equal(rec.opcode, RL_MCAP_OP_ATTACHMENT);
        assert_int_equal(rec.body.len + 9, ai[0].length);
        rl_mcap_reader_close(r);
    }
    size_t *order = sorted_order(exp, n);
    check_query(x, exp, order, n, 0, UINT64_MAX, NULL, 0);
    check_query(x, exp, order, n, 0, UINT64_MAX, NULL, 1);
    check_query(x, exp, order, n, 0, UINT64_MAX, "/b", 0);
    check_query(x, exp, order, n, 1200, 2400, NULL, 0);
    check_query(x, exp, order, n, 1200, 2400, "/c", 1);
    check_query(x, exp, order, n, exp[3].log_time, exp[3].log_time, NULL, 0);
    free(order);
    rl_mcap_indexed_close(x);
}

static void test_roundtrip_all_options(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/rt.mcap", dir);
    enum { N = 400 };
    exp_msg exp[N];
    static const rl_mcap_compression comps[] = {RL_MCAP_COMPRESSION_NONE, RL_MCAP_COMPRESSION_ZSTD,
                                                RL_MCAP_COMPRESSION_LZ4};
    size_t files = 0;
    for (int chunked = 0; chunked < 2; chunked++)
        for (size_t c = 0; c < 3; c++)
            for (int small = 0; small < 2; small++)
                for (unsigned flags = 0; flags < 6; flags++) {
                    if (!chunked && (c > 0 || small))
                        continue;
                    rl_mcap_writer_options o;
                    rl_mcap_writer_options_default(&o);
                    o.use_chunks = chunked;
                    o.compression = comps[c];
                    o.compression_level = small ? 1 : 0;
                    o.chunk_size = small ? 700 : 1024 * 1024;
                    /* flag sets: all on, all off, and mixtures */
                    int on = flags == 0 ? 1 : flags == 1 ? 0 : -1;
                    o.message_index = on >= 0 ? on : (int)(flags & 1);
                    o.chunk_index = on >= 0 ? on : (int)((flags >> 1) & 1) || flags == 5;
                    o.statistics = on >= 0 ? on : (int)(flags & 1);
                    o.repeated_schemas = o.repeated_channels =
                        on >= 0 ? on : (int)((flags >> 1) & 1);
                    o.attachment_index = o.metadata_index = on >= 0 ? on : (int)(flags & 1);
                    o.summary_offsets = on >= 0 ? on : (int)((flags >> 2) & 1);
                    o.chunk_crc = o.data_section_crc = o.summary_crc = o.attachment_crc =
                        flags != 3;
                    write_sample(path, &o, N, 0, exp);
                    check_streamed(path, exp, N, o.attachment_crc, 0);
                    check_streamed(path, exp, N, o.attachment_crc, 1);
                    check_indexed(path, &o, exp, N);
                    files++;
                }
    assert_int_equal(files, 6 + 3 * 2 * 6);
    rl_test_tmpdir_free(dir);
}

/* A narrow time range decompresses only the chunks that overlap it. */
static void test_narrow_query_loads_few_chunks(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/mono.mcap", dir);
    enum { N = 2000 };
    static exp_msg exp[N];
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.chunk_size = 4096;
    write_sample(path, &o, N, 1, exp);
    rl_mcap_indexed *x = NULL;
    assert_int_equal(rl_mcap_indexed_open(&x, path, 0), RL_OK);
    const rl_mcap_chunk_index *ci;
    size_t nchunks = rl_mcap_indexed_chunk_indexes(x, &ci);
    assert_true(nchunks > 50);
    rl_mcap_query q;
    rl_mcap_query_default(&q);
    q.start_time = 1000 + 10 * 1000;
    q.end_time = 1000 + 10 * 1020;
    rl_mcap_message_iter *it = NULL;
    assert_int_equal(rl_mcap_indexed_messages(x, &q, &it), RL_OK);
    rl_mcap_message m;
    size_t got = 0;
    while (rl_mcap_message_iter_next(it, &m, NULL) == 1) {
        assert_int_equal(m.sequence, 1000 + got);
        got++;
    }
    assert_int_equal(got, 21);
    assert_true(rl_mcap_indexed_chunks_loaded(x) <= 3);
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(x);
    rl_test_tmpdir_free(dir);
}

/* Messages larger than the output buffer, chunked (compressed and not) and unchunked. */
static void test_large_messages(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/big.mcap", dir);
    size_t big = 300 * 1024;
    uint8_t *data = malloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = (uint8_t)(i * 13 + (i >> 9));
    for (int mode = 0; mode < 4; mode++) {
        rl_mcap_writer_options o;
        rl_mcap_writer_options_default(&o);
        o.use_chunks = mode != 0;
        o.compression = mode == 2   ? RL_MCAP_COMPRESSION_ZSTD
                        : mode == 3 ? RL_MCAP_COMPRESSION_LZ4
                                    : RL_MCAP_COMPRESSION_NONE;
        rl_mcap_writer *w = NULL;
        assert_int_equal(rl_mcap_writer_open_path(&w, path, &o), RL_OK);
        rl_mcap_channel ch;
        memset(&ch, 0, sizeof ch);
        ch.id = 7;
        ch.topic = B("/big");
        ch.message_encoding = B("raw");
        assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_OK);
        for (uint32_t i = 0; i < 5; i++) {
            rl_mcap_message m = {7, i, 100 - i, 100 - i, {data, big - i}};
            assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_OK);
        }
        assert_int_equal(rl_mcap_writer_close(w), RL_OK);
        rl_mcap_indexed *x = NULL;
        assert_int_equal(rl_mcap_indexed_open(&x, path, 0), RL_OK);
        rl_mcap_message_iter *it = NULL;
        assert_int_equal(rl_mcap_indexed_messages(x, NULL, &it), RL_OK);
        rl_mcap_message m;
        for (uint32_t i = 0; i < 5; i++) {
            assert_int_equal(rl_mcap_message_iter_next(it, &m, NULL), 1);
            assert_int_equal(m.sequence, 4 - i); /* log times were decreasing */
            assert_int_equal(m.data.len, big - m.sequence);
            assert_memory_equal(m.data.data, data, m.data.len);
        }
        assert_int_equal(rl_mcap_message_iter_next(it, &m, NULL), 0);
        rl_mcap_message_iter_free(it);
        rl_mcap_indexed_close(x);
    }
    free(data);
    rl_test_tmpdir_free(dir);
}

/* After flush, everything added is on disk and readable although the file has no end. */
static void test_flush_makes_data_readable(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/live.mcap", dir);
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_path(&w, path, NULL), RL_OK);
    rl_mcap_channel ch;
    memset(&ch, 0, sizeof ch);
    ch.id = 1;
    ch.topic = B("/x");
    ch.message_encoding = B("raw");
    assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_OK);
    for (uint32_t i = 0; i < 100; i++) {
        rl_mcap_message m = {1, i, i, i, B("hello")};
        assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_OK);
    }
    assert_int_equal(rl_mcap_writer_flush(w), RL_OK);

    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open(&r, path, NULL), RL_OK);
    rl_mcap_record rec;
    int rc, msgs = 0;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1)
        msgs += rec.opcode == RL_MCAP_OP_MESSAGE;
    assert_int_equal(msgs, 100);
    assert_int_equal(rc, RL_ETRUNCATED);
    assert_non_null(strstr(rl_error_last(), "ends before the Footer"));
    rl_mcap_reader_close(r);

    /* The indexed reader falls back to a scan of the unfinished file. */
    rl_mcap_indexed *x = NULL;
    assert_int_equal(rl_mcap_indexed_open(&x, path, 0), RL_OK);
    assert_int_equal(rl_mcap_indexed_used_summary(x), 0);
    rl_mcap_message_iter *it = NULL;
    assert_int_equal(rl_mcap_indexed_messages(x, NULL, &it), RL_OK);
    rl_mcap_message m;
    msgs = 0;
    while (rl_mcap_message_iter_next(it, &m, NULL) == 1)
        msgs++;
    assert_int_equal(msgs, 100);
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(x);
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
    rl_test_tmpdir_free(dir);
}

static int stream_count(const char *path)
{
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open(&r, path, NULL), RL_OK);
    rl_mcap_record rec;
    int rc, msgs = 0;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1)
        msgs += rec.opcode == RL_MCAP_OP_MESSAGE;
    assert_int_equal(rc, RL_ETRUNCATED);
    rl_mcap_reader_close(r);
    return msgs;
}

/* end_chunk is flush without the fsync: the same bytes reach the file, each call ends a
 * chunk of its own, and the writer goes on to a complete, doctor-clean file. */
static void test_end_chunk_writes_without_closing(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/live.mcap", dir);
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_path(&w, path, NULL), RL_OK);
    rl_mcap_channel ch;
    memset(&ch, 0, sizeof ch);
    ch.id = 1;
    ch.topic = B("/x");
    ch.message_encoding = B("raw");
    assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_OK);
    uint32_t seq = 0;
    for (int round = 1; round <= 2; round++) {
        for (int i = 0; i < 100; i++, seq++) {
            rl_mcap_message m = {1, seq, seq, seq, B("hello")};
            assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_OK);
        }
        assert_int_equal(rl_mcap_writer_end_chunk(w), RL_OK);
        assert_int_equal(stream_count(path), 100 * round);
    }
    assert_int_equal(rl_mcap_writer_end_chunk(w), RL_OK); /* nothing open: no empty chunk */
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
    rl_mcap_doctor_report rep;
    assert_int_equal(rl_mcap_doctor(path, &rep), RL_OK);
    assert_int_equal(rep.count, 0);
    assert_int_equal(rep.messages, 200);
    assert_int_equal(rep.chunks, 2);
    rl_mcap_doctor_report_free(&rep);
    rl_test_tmpdir_free(dir);
}

static void test_write_error_is_reported(void **state)
{
    (void)state;
    int fd = open("/dev/full", O_WRONLY);
    if (fd < 0) {
        print_message("SKIP: /dev/full not available\n");
        skip();
    }
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_fd(&w, fd, NULL), RL_ENOSPC);
    assert_null(w);
    assert_non_null(strstr(rl_error_last(), "No space"));
    close(fd);

    /* A pipe whose reader is gone: EPIPE is an I/O error (SIGPIPE ignored here). */
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[0]);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    assert_int_equal(rl_mcap_writer_open_fd(&w, p[1], NULL), RL_EIO);
    signal(SIGPIPE, old);
    close(p[1]);
}

/* Full chunks are compressed by the writer's worker thread and written later: records
 * added afterwards (attachments) still follow them in the file, the position counts
 * them, and a failed write is reported with its own message. */
/* Threads of this process named `name` (their /proc comm). */
static int threads_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[600], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = e->d_name[0] == '.' ? NULL : fopen(path, "r");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = 0;
        fclose(f);
        n += strcmp(comm, name) == 0;
    }
    closedir(d);
    return n;
}

static void test_worker_chunks_keep_order_and_errors(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/order.mcap", dir);
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.chunk_size = 200;
    o.compression = RL_MCAP_COMPRESSION_LZ4;
    uint8_t payload[300];
    memset(payload, 7, sizeof payload);
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_path(&w, path, &o), RL_OK);
    rl_mcap_channel ch;
    memset(&ch, 0, sizeof ch);
    ch.id = 1;
    ch.topic = B("/x");
    ch.message_encoding = B("raw");
    assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_OK);
    for (uint32_t i = 0; i < 5; i++) {
        rl_mcap_message m = {1, i, i, i, {payload, sizeof payload}};
        assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_OK);
    }
    rl_mcap_attachment a;
    memset(&a, 0, sizeof a);
    a.name = B("a");
    a.media_type = B("text/plain");
    a.data = B("x");
    assert_int_equal(rl_mcap_writer_add_attachment(w, &a), RL_OK);
    rl_mcap_message last = {1, 5, 5, 5, B("tail")};
    assert_int_equal(rl_mcap_writer_add_message(w, &last), RL_OK);
    assert_int_equal(rl_mcap_writer_flush(w), RL_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(rl_mcap_writer_position(w), (uint64_t)st.st_size);
    /* The worker names itself (for top -H and perf) before its first chunk. */
    assert_int_equal(threads_named("rl-compress"), 1);
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
    assert_int_equal(threads_named("rl-compress"), 0);

    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open(&r, path, NULL), RL_OK);
    rl_mcap_record rec;
    int rc, msgs = 0, att_after = -1;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
        if (rec.opcode == RL_MCAP_OP_MESSAGE)
            assert_int_equal(rec.u.message.sequence, (uint32_t)msgs++);
        if (rec.opcode == RL_MCAP_OP_ATTACHMENT)
            att_after = msgs;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(msgs, 6);
    assert_int_equal(att_after, 5);
    rl_mcap_reader_close(r);

    /* The reader of a pipe goes away: writing a chunk fails with EPIPE. */
    int p[2];
    assert_int_equal(pipe(p), 0);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    assert_int_equal(rl_mcap_writer_open_fd(&w, p[1], &o), RL_OK);
    close(p[0]);
    assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_OK);
    rc = RL_OK;
    for (uint32_t i = 0; i < 100 && rc == RL_OK; i++) {
        rl_mcap_message m = {1, i, i, i, {payload, sizeof payload}};
        rc = rl_mcap_writer_add_message(w, &m);
    }
    if (rc == RL_OK)
        rc = rl_mcap_writer_flush(w);
    assert_int_equal(rc, RL_EIO);
    assert_non_null(strstr(rl_error_last(), "write at byte"));
    rl_mcap_message m = {1, 0, 0, 0, B("x")};
    assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_ESTATE);
    rl_mcap_writer_free(w);
    signal(SIGPIPE, old);
    close(p[1]);
    rl_test_tmpdir_free(dir);
}

static void test_api_misuse(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/misuse.mcap", dir);
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_path(&w, path, NULL), RL_OK);
    rl_mcap_schema s0 = {0, B("n"), B("e"), B("")};
    assert_int_equal(rl_mcap_writer_add_schema(w, &s0), RL_EINVAL);
    rl_mcap_schema s1 = {1, B("n"), B("e"), B("d")};
    assert_int_equal(rl_mcap_writer_add_schema(w, &s1), RL_OK);
    assert_int_equal(rl_mcap_writer_add_schema(w, &s1), RL_OK); /* identical repeat */
    rl_mcap_schema s1b = {1, B("other"), B("e"), B("d")};
    assert_int_equal(rl_mcap_writer_add_schema(w, &s1b), RL_EEXIST);
    rl_mcap_channel ch;
    memset(&ch, 0, sizeof ch);
    ch.id = 3;
    ch.schema_id = 9;
    ch.topic = B("/t");
    assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_EINVAL);
    rl_mcap_message m = {4, 0, 0, 0, B("x")};
    assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "unknown channel 4"));
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
    rl_test_tmpdir_free(dir);
}

/* Every record of a streamed file, as text: opcode, offset, and the message's channel,
 * sequence and payload sum; then the end (0 or the error and its message). */
static char *stream_text(const char *path, int ahead, size_t seek_after)
{
    rl_mcap_reader *r = NULL;
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    ro.decompress_ahead = ahead;
    assert_int_equal(rl_mcap_reader_open(&r, path, &ro), RL_OK);
    size_t cap = 1 << 20, len = 0, count = 0;
    char *text = malloc(cap);
    rl_mcap_record rec;
    int rc;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
        unsigned sum = 0;
        if (rec.opcode == RL_MCAP_OP_MESSAGE)
            for (size_t k = 0; k < rec.u.message.data.len; k++)
                sum += rec.u.message.data.data[k];
        assert_true(cap - len > 100);
        len += (size_t)snprintf(text + len, cap - len, "%d %llu %u %u\n", rec.opcode,
                                (unsigned long long)rec.offset,
                                rec.opcode == RL_MCAP_OP_MESSAGE ? rec.u.message.sequence : 0u,
                                sum);
        if (++count == seek_after) /* back to the start while a chunk is read ahead */
            assert_int_equal(rl_mcap_reader_seek(r, 8), RL_OK);
    }
    len += (size_t)snprintf(text + len, cap - len, "end %d %s\n", rc, rc < 0 ? rl_error_last() : "");
    rl_mcap_reader_close(r);
    return text;
}

/* Decompressing ahead changes nothing a caller sees: the same records at the same offsets,
 * on a file of many chunks (zstd and lz4), after a seek, and the same error, after the same
 * records, when a chunk in the middle is damaged. */
static void test_decompress_ahead_is_invisible(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/ahead.mcap", dir);
    enum { N = 600 };
    exp_msg exp[N];
    static const rl_mcap_compression comps[] = {RL_MCAP_COMPRESSION_ZSTD, RL_MCAP_COMPRESSION_LZ4,
                                                RL_MCAP_COMPRESSION_NONE};
    for (size_t c = 0; c < 3; c++)
        for (int damaged = 0; damaged < 2; damaged++) {
            rl_mcap_writer_options o;
            rl_mcap_writer_options_default(&o);
            o.compression = comps[c];
            o.chunk_size = 2000;
            write_sample(path, &o, N, 1, exp);
            if (damaged) { /* the last byte of the records of the chunk in the middle */
                rl_mcap_reader_options ro;
                rl_mcap_reader_options_default(&ro);
                ro.chunks = RL_MCAP_CHUNKS_RAW;
                rl_mcap_reader *r = NULL;
                assert_int_equal(rl_mcap_reader_open(&r, path, &ro), RL_OK);
                long ends[256];
                size_t nchunks = 0;
                rl_mcap_record rec;
                while (rl_mcap_reader_next(r, &rec) == 1)
                    if (rec.opcode == RL_MCAP_OP_CHUNK && nchunks < 256)
                        ends[nchunks++] = (long)rl_mcap_reader_offset(r);
                rl_mcap_reader_close(r);
                assert_true(nchunks > 10);
                FILE *f = fopen(path, "r+b");
                assert_non_null(f);
                long at = ends[nchunks / 2] - 1;
                fseek(f, at, SEEK_SET);
                int ch = fgetc(f);
                fseek(f, at, SEEK_SET);
                fputc(ch ^ 0x5a, f);
                fclose(f);
            }
            char *plain = stream_text(path, 0, 0), *ahead = stream_text(path, 1, 0);
            assert_string_equal(plain, ahead);
            assert_true(strlen(plain) > N * 8);
            if ((strstr(plain, "end 0 ") == NULL) != damaged)
                fail_msg("compression %zu, damaged %d:\n%s", c, damaged, strstr(plain, "end "));
            free(plain), free(ahead);
            plain = stream_text(path, 0, N / 3);
            ahead = stream_text(path, 1, N / 3);
            assert_string_equal(plain, ahead);
            free(plain), free(ahead);
        }
    rl_test_tmpdir_free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_all_options),
        cmocka_unit_test(test_narrow_query_loads_few_chunks),
        cmocka_unit_test(test_large_messages),
        cmocka_unit_test(test_flush_makes_data_readable),
        cmocka_unit_test(test_end_chunk_writes_without_closing),
        cmocka_unit_test(test_write_error_is_reported),
        cmocka_unit_test(test_worker_chunks_keep_order_and_errors),
        cmocka_unit_test(test_api_misuse),
        cmocka_unit_test(test_decompress_ahead_is_invisible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
