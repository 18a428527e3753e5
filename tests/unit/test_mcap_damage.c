/* Damage that the MCAP tools must account for exactly (issue 11, items 8-12): files built
 * with the runlab writer whose chunk layout the test computes itself (offsets from the
 * writer's positions and the record sizes of the specification), then damaged at chosen
 * bytes; the messages kept, lost, suspect and copied must be exactly those the damage hit. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/hash.h"
#include "runlab/mcap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
    PAY = 100,                  /* payload bytes of every message */
    MSG_REC = 9 + 22 + PAY,     /* a Message record: prefix, fixed fields, payload */
    CHUNK_HEAD = 9 + 8 + 8 + 8 + 4 + 4, /* prefix, times, size, crc, compression length */
    MAX_CHUNKS = 8,
    MAX_MSGS = 4096
};

static rl_mcap_bytes B(const char *s)
{
    rl_mcap_bytes b = {(const uint8_t *)s, strlen(s)};
    return b;
}

/* Payload of message `seq`: pseudo-random, no zero byte (so zeroed bytes are visible). */
static void payload(uint32_t seq, uint8_t *buf)
{
    uint32_t s = seq * 2654435761u + 7;
    for (size_t i = 0; i < PAY; i++) {
        s = s * 1664525u + 1013904223u;
        buf[i] = (uint8_t)((s >> 24) | 1);
    }
}

/* A recording and where its chunks lie, computed from the writer's positions. */
typedef struct layout {
    uint8_t *data;
    size_t len;
    size_t nchunks, total;
    uint64_t chunk_off[MAX_CHUNKS], chunk_len[MAX_CHUNKS], group_end[MAX_CHUNKS];
    uint32_t first_seq[MAX_CHUNKS], count[MAX_CHUNKS];
    uint64_t data_end; /* offset of the DataEnd record */
} layout;

typedef struct build_opts {
    rl_mcap_compression compression;
    int chunk_crc, data_crc;
    size_t nchunks;
    const uint32_t *counts;
} build_opts;

/* Messages of the two channels alternate (seq % 2), so a chunk of n messages has two
 * MessageIndex records: 9 + 2 + 4 + 16 per entry each. */
static uint64_t index_bytes(uint32_t first, uint32_t n)
{
    uint64_t total = 0;
    for (uint32_t ch = 0; ch < 2; ch++) {
        uint32_t k = 0;
        for (uint32_t i = first; i < first + n; i++)
            k += i % 2 == ch;
        if (k)
            total += 9 + 2 + 4 + 16 * (uint64_t)k;
    }
    return total;
}

static void build(layout *l, const build_opts *b)
{
    memset(l, 0, sizeof *l);
    char *dir = rl_test_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/rec.mcap", dir);
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.profile = "ros2";
    o.compression = b->compression;
    o.chunk_size = 64 << 20; /* chunks end where the test says */
    o.chunk_crc = b->chunk_crc;
    o.data_section_crc = b->data_crc;
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_path(&w, path, &o), RL_OK);
    uint64_t start = rl_mcap_writer_position(w);
    rl_mcap_schema s = {1, B("pkg/Blob"), B("ros2msg"), B("uint8[] data")};
    assert_int_equal(rl_mcap_writer_add_schema(w, &s), RL_OK);
    for (uint16_t c = 1; c <= 2; c++) {
        rl_mcap_channel ch;
        memset(&ch, 0, sizeof ch);
        ch.id = c;
        ch.schema_id = 1;
        ch.topic = B(c == 1 ? "/a" : "/b");
        ch.message_encoding = B("cdr");
        assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_OK);
    }
    uint32_t seq = 0;
    uint8_t buf[PAY];
    for (size_t k = 0; k < b->nchunks; k++) {
        l->first_seq[k] = seq;
        l->count[k] = b->counts[k];
        for (uint32_t i = 0; i < b->counts[k]; i++, seq++) {
            payload(seq, buf);
            rl_mcap_message m = {(uint16_t)(1 + seq % 2), seq, 1000000 + seq, 2000000 + seq,
                                 {buf, PAY}};
            assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_OK);
        }
        assert_int_equal(rl_mcap_writer_end_chunk(w), RL_OK);
        uint64_t end = rl_mcap_writer_position(w);
        l->chunk_off[k] = start;
        l->chunk_len[k] = end - start - index_bytes(l->first_seq[k], l->count[k]);
        l->group_end[k] = end;
        start = end;
    }
    l->data_end = start;
    l->nchunks = b->nchunks;
    l->total = seq;
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
    l->data = (uint8_t *)rl_test_read_file(path, &l->len);
    rl_test_tmpdir_free(dir);
    /* The layout holds: each chunk starts with a Chunk record of the computed length. */
    for (size_t k = 0; k < l->nchunks; k++) {
        assert_int_equal(l->data[l->chunk_off[k]], RL_MCAP_OP_CHUNK);
        uint64_t blen = 0;
        for (int i = 7; i >= 0; i--)
            blen = blen << 8 | l->data[l->chunk_off[k] + 1 + (size_t)i];
        assert_int_equal(9 + blen, l->chunk_len[k]);
    }
    assert_int_equal(l->data[l->data_end], RL_MCAP_OP_DATA_END);
}

/* File offset of message `i` of uncompressed chunk `k` (k >= 1: only messages inside). */
static uint64_t msg_off(const layout *l, size_t k, uint32_t i)
{
    return l->chunk_off[k] + CHUNK_HEAD + 8 + (uint64_t)i * MSG_REC;
}

typedef struct outcome {
    rl_mcap_recover_report rep;
    uint8_t seen[MAX_MSGS]; /* messages in the output, by sequence */
    int intact[MAX_MSGS];   /* their payload is the one written */
    size_t messages;
} outcome;

/* Recovers `data` and reads the output back, checking it is a clean file. */
static void recover(const uint8_t *data, size_t len, int keep_suspect, outcome *out)
{
    memset(out, 0, sizeof *out);
    int fd = memfd_create("recovered", MFD_CLOEXEC);
    assert_true(fd >= 0);
    rl_mcap_recover_options o;
    memset(&o, 0, sizeof o);
    o.keep_suspect = keep_suspect;
    assert_int_equal(rl_mcap_recover_mem(data, len, fd, &o, &out->rep), RL_OK);
    off_t n = lseek(fd, 0, SEEK_END);
    uint8_t *bytes = malloc((size_t)n);
    assert_non_null(bytes);
    assert_int_equal(pread(fd, bytes, (size_t)n, 0), n);
    close(fd);
    rl_mcap_doctor_report dr;
    assert_int_equal(rl_mcap_doctor_mem(bytes, (size_t)n, &dr), RL_OK);
    assert_int_equal(dr.count, 0);
    rl_mcap_doctor_report_free(&dr);
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open_mem(&r, bytes, (size_t)n, NULL), RL_OK);
    rl_mcap_record rec;
    int rc;
    uint8_t want[PAY];
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
        if (rec.opcode == RL_MCAP_OP_HEADER)
            assert_memory_equal(rec.u.header.profile.data, "ros2", 4);
        if (rec.opcode != RL_MCAP_OP_MESSAGE)
            continue;
        uint32_t seq = rec.u.message.sequence;
        assert_true(seq < MAX_MSGS);
        assert_false(out->seen[seq]); /* never twice */
        out->seen[seq] = 1;
        payload(seq, want);
        out->intact[seq] = rec.u.message.data.len == PAY && memcmp(rec.u.message.data.data, want, PAY) == 0;
        out->messages++;
    }
    assert_int_equal(rc, 0);
    rl_mcap_reader_close(r);
    free(bytes);
}

static void done(outcome *o)
{
    rl_mcap_recover_report_free(&o->rep);
}

static int any_text_has(const rl_mcap_lost_range *l, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (strstr(l[i].what, what))
            return 1;
    return 0;
}

/* No message says its offset twice ("byte 60: byte 60: ..."). */
static void offsets_said_once(const rl_mcap_doctor_report *d)
{
    for (size_t i = 0; i < d->count; i++) {
        char twice[64];
        snprintf(twice, sizeof twice, "byte %llu:", (unsigned long long)d->violations[i].offset);
        if (strstr(d->violations[i].what, twice))
            fail_msg("offset repeated in: %s", d->violations[i].what);
    }
}

static const uint32_t counts4[] = {30, 92, 40, 50};

/* Item 8: one chunk written twice, in a file with a data-section CRC. */
static void test_duplicate_chunk(void **state)
{
    (void)state;
    layout l;
    build_opts b = {RL_MCAP_COMPRESSION_ZSTD, 1, 1, 4, counts4};
    build(&l, &b);
    /* Chunk 1 and its message indexes, copied right after them. */
    size_t k = 1, glen = (size_t)(l.group_end[k] - l.chunk_off[k]);
    size_t len = l.len + glen;
    uint8_t *f = malloc(len);
    assert_non_null(f);
    memcpy(f, l.data, (size_t)l.group_end[k]);
    memcpy(f + l.group_end[k], l.data + l.chunk_off[k], glen);
    memcpy(f + l.group_end[k] + glen, l.data + l.group_end[k], l.len - (size_t)l.group_end[k]);

    /* Readers serve every message once, with warnings, not an error. */
    rl_mcap_indexed *x = NULL;
    assert_int_equal(rl_mcap_indexed_open_mem(&x, f, len, 0), RL_OK);
    const char *const *warn = NULL;
    size_t nw = rl_mcap_indexed_warnings(x, &warn);
    assert_int_equal(nw, 2);
    assert_non_null(strstr(warn[0], "an exact copy of the chunk at byte"));
    assert_non_null(strstr(warn[1], "data section CRC mismatch"));
    rl_mcap_message_iter *it = NULL;
    assert_int_equal(rl_mcap_indexed_messages(x, NULL, &it), RL_OK);
    rl_mcap_message m;
    uint8_t seen[MAX_MSGS] = {0};
    size_t n = 0;
    int rc;
    while ((rc = rl_mcap_message_iter_next(it, &m, NULL)) == 1) {
        assert_false(seen[m.sequence]);
        seen[m.sequence] = 1;
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, l.total);
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(x);

    /* The streamed reader reads every record of the data section; the CRC is a warning. */
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open_mem(&r, f, len, NULL), RL_OK);
    rl_mcap_record rec;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1 && rec.opcode != RL_MCAP_OP_DATA_END)
        ;
    assert_int_equal(rc, 1);
    assert_int_equal(rl_mcap_reader_warning_count(r), 1);
    rl_mcap_reader_close(r);

    /* Recovery keeps the copy's messages once and says so. */
    outcome o;
    recover(f, len, 0, &o);
    assert_int_equal(o.messages, l.total);
    assert_int_equal(o.rep.messages_kept, l.total);
    assert_int_equal(o.rep.chunks_duplicate, 1);
    assert_int_equal(o.rep.messages_duplicate, l.count[k]);
    assert_int_equal(o.rep.messages_lost, 0);
    assert_int_equal(o.rep.bytes_lost, 0);
    assert_int_equal(o.rep.input_complete, 0);
    assert_true(any_text_has(o.rep.notices, o.rep.notice_count, "an exact copy of the chunk"));
    done(&o);

    /* The doctor: one cause, what follows from it counted on its line. */
    rl_mcap_doctor_report d;
    assert_int_equal(rl_mcap_doctor_mem(f, len, &d), RL_OK);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.violations[0].offset, l.group_end[k]);
    assert_non_null(strstr(d.violations[0].what, "an exact copy of the chunk at byte"));
    assert_true(d.violations[0].consequences > 0);
    assert_int_equal(d.messages, l.total);
    rl_mcap_doctor_report_free(&d);
    free(f);
    free(l.data);
}

static uint64_t mcap_test_rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t mcap_test_rd32(const uint8_t *p)
{
    return (uint32_t)mcap_test_rd64((const uint8_t[8]){p[0], p[1], p[2], p[3], 0, 0, 0, 0});
}

/* Number of warnings the streamed reader gives over the whole file (it must reach the end). */
static size_t streamed_warnings(const uint8_t *data, size_t len)
{
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open_mem(&r, data, len, NULL), RL_OK);
    rl_mcap_record rec;
    int rc;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1)
        ;
    if (rc != 0)
        fprintf(stderr, "streamed read: %s\n", rl_error_last());
    assert_int_equal(rc, 0);
    size_t n = rl_mcap_reader_warning_count(r);
    rl_mcap_reader_close(r);
    return n;
}

/* The streamed reader takes an uncompressed chunk's records into the data-section CRC
 * through the chunk's own CRC (crc32_combine) rather than summing them twice: the sum
 * must stay exact, both over an intact file and over bytes of the chunk record that its
 * CRC does not cover. */
static void test_data_section_crc_uncompressed_chunks(void **state)
{
    (void)state;
    layout l;
    build_opts b = {RL_MCAP_COMPRESSION_NONE, 1, 1, 4, counts4};
    build(&l, &b);
    assert_int_equal(streamed_warnings(l.data, l.len), 0);
    /* A bit of chunk 1's message_start_time: the chunk CRC covers only the records. */
    l.data[l.chunk_off[1] + 9 + 2] ^= 0x04;
    assert_int_equal(streamed_warnings(l.data, l.len), 1);
    l.data[l.chunk_off[1] + 9 + 2] ^= 0x04;
    /* A bit of the last chunk's records, with its CRC made to match: the chunk reads as
     * intact, the data section does not. */
    size_t k = l.nchunks - 1, body = (size_t)l.chunk_off[k] + 9;
    size_t clen = mcap_test_rd32(l.data + body + 28);
    size_t records = body + 32 + clen + 8;
    size_t usize = (size_t)mcap_test_rd64(l.data + body + 16);
    l.data[records + usize - 1] ^= 0x01; /* the last message's last payload byte */
    uint32_t crc = rl_crc32(0, l.data + records, usize);
    for (int i = 0; i < 4; i++)
        l.data[body + 24 + i] = (uint8_t)(crc >> (8 * i));
    assert_int_equal(streamed_warnings(l.data, l.len), 1);
    free(l.data);
}

/* Items 8 and 11: one flipped bit in DataEnd's CRC is one violation, and no reader error. */
static void test_data_end_crc_bit(void **state)
{
    (void)state;
    layout l;
    build_opts b = {RL_MCAP_COMPRESSION_LZ4, 1, 1, 4, counts4};
    build(&l, &b);
    l.data[l.data_end + 9] ^= 0x10;
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open_mem(&r, l.data, l.len, NULL), RL_OK);
    rl_mcap_record rec;
    int rc;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1)
        ;
    assert_int_equal(rc, 0);
    assert_int_equal(rl_mcap_reader_warning_count(r), 1);
    assert_non_null(strstr(rl_mcap_reader_warning(r), "DataEnd record: data section CRC mismatch"));
    rl_mcap_reader_close(r);
    rl_mcap_doctor_report d;
    assert_int_equal(rl_mcap_doctor_mem(l.data, l.len, &d), RL_OK);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.violations[0].offset, l.data_end);
    assert_int_equal(d.violations[0].consequences, 0);
    offsets_said_once(&d);
    rl_mcap_doctor_report_free(&d);
    outcome o;
    recover(l.data, l.len, 0, &o);
    assert_int_equal(o.messages, l.total);
    assert_int_equal(o.rep.messages_lost, 0);
    assert_int_equal(o.rep.input_complete, 0); /* the input was not undamaged */
    done(&o);
    free(l.data);
}

/* Item 9: a chunk whose compressed bytes are damaged, in a file without a data-section
 * CRC: the report and the headline flag must reflect the loss. */
static void test_damaged_compressed_chunk(void **state)
{
    (void)state;
    layout l;
    build_opts b = {RL_MCAP_COMPRESSION_ZSTD, 1, 0, 4, counts4};
    build(&l, &b);
    size_t k = 2;
    /* The zstd frame's magic, first bytes of the records field ("zstd" is 4 bytes). */
    uint64_t records = l.chunk_off[k] + CHUNK_HEAD + 4 + 8;
    memset(l.data + records, 0xEE, 4);
    outcome o;
    recover(l.data, l.len, 0, &o);
    assert_int_equal(o.rep.input_complete, 0);
    assert_int_equal(o.rep.chunks_lost, 1);
    assert_int_equal(o.rep.messages_lost, l.count[k]);
    assert_int_equal(o.rep.messages_kept, l.total - l.count[k]);
    assert_int_equal(o.messages, l.total - l.count[k]);
    for (uint32_t i = 0; i < l.count[k]; i++)
        assert_false(o.seen[l.first_seq[k] + i]);
    assert_int_equal(o.rep.lost_count, 1);
    assert_int_equal(o.rep.lost[0].offset, l.chunk_off[k]);
    assert_int_equal(o.rep.lost[0].length, l.chunk_len[k]);
    done(&o);
    free(l.data);
}

/* Item 10: bytes zeroed from the middle of message j of an uncompressed chunk without
 * CRC into message j+1. j+1's record is destroyed; j reads as a valid record but its
 * payload's end is zeros: it is suspect, dropped unless kept on request. */
static void test_zeroed_message_is_suspect(void **state)
{
    (void)state;
    layout l;
    build_opts b = {RL_MCAP_COMPRESSION_NONE, 0, 0, 4, counts4};
    build(&l, &b);
    size_t k = 1;
    uint32_t j = 5;
    uint64_t from = msg_off(&l, k, j) + 31 + PAY / 2;
    memset(l.data + from, 0, PAY); /* to 19 bytes into j+1's payload */
    uint32_t sj = l.first_seq[k] + j;
    for (int keep = 0; keep <= 1; keep++) {
        outcome o;
        recover(l.data, l.len, keep, &o);
        assert_int_equal(o.rep.input_complete, 0);
        assert_int_equal(o.rep.messages_suspect, 1);
        assert_int_equal(o.rep.messages_lost, keep ? 1 : 2);
        assert_int_equal(o.rep.messages_kept, l.total - (keep ? 1 : 2));
        assert_int_equal(o.rep.messages_salvaged, l.count[k] - 2);
        assert_false(o.seen[sj + 1]);
        assert_int_equal(o.seen[sj], keep);
        if (keep)
            assert_false(o.intact[sj]); /* kept as it was read: the zeros included */
        for (uint32_t s = 0; s < l.total; s++)
            if (s != sj && s != sj + 1)
                assert_true(o.seen[s] && o.intact[s]);
        assert_true(any_text_has(o.rep.notices, o.rep.notice_count, "suspect Message"));
        /* The damaged bytes are reported where they are in the file. */
        assert_int_equal(o.rep.lost_count, 1);
        assert_int_equal(o.rep.lost[0].offset, from);
        assert_int_equal(o.rep.lost[0].offset + o.rep.lost[0].length, msg_off(&l, k, j + 2));
        done(&o);
    }
    free(l.data);
}

/* Item 10: four corrupted bytes in an uncompressed chunk of 900 messages with a CRC. */
static void test_four_bytes_in_900(void **state)
{
    (void)state;
    static const uint32_t counts[] = {10, 900, 10};
    layout l;
    build_opts b = {RL_MCAP_COMPRESSION_NONE, 1, 1, 3, counts};
    build(&l, &b);
    size_t k = 1;
    uint32_t j = 400, sj = l.first_seq[k] + j;
    /* (a) in message j's length field: the damage shows where it is; only j is lost. */
    uint8_t *f = malloc(l.len);
    assert_non_null(f);
    memcpy(f, l.data, l.len);
    memset(f + msg_off(&l, k, j) + 1 + 3, 0xA5, 4);
    outcome o;
    recover(f, l.len, 0, &o);
    assert_int_equal(o.rep.messages_lost, 1);
    assert_int_equal(o.rep.messages_kept, l.total - 1);
    assert_int_equal(o.rep.messages_salvaged, 899);
    assert_int_equal(o.rep.messages_suspect, 0);
    assert_false(o.seen[sj]);
    for (uint32_t s = 0; s < l.total; s++)
        if (s != sj)
            assert_true(o.seen[s] && o.intact[s]);
    assert_int_equal(o.rep.lost_count, 1);
    assert_int_equal(o.rep.lost[0].offset, msg_off(&l, k, j));
    assert_int_equal(o.rep.lost[0].length, MSG_REC);
    done(&o);
    /* (b) in message j's payload: only the chunk CRC knows, not where: all 900 are
     * suspect, dropped by default, kept (and listed) on request. */
    memcpy(f, l.data, l.len);
    memset(f + msg_off(&l, k, j) + 31 + 10, 0xA5, 4);
    recover(f, l.len, 0, &o);
    assert_int_equal(o.rep.messages_suspect, 900);
    assert_int_equal(o.rep.messages_lost, 900);
    assert_int_equal(o.rep.messages_kept, l.total - 900);
    assert_true(o.rep.notice_count >= 900); /* and the data-section CRC */
    done(&o);
    recover(f, l.len, 1, &o);
    assert_int_equal(o.rep.messages_suspect, 900);
    assert_int_equal(o.rep.messages_lost, 0);
    assert_int_equal(o.rep.messages_kept, l.total);
    assert_false(o.intact[sj]);
    done(&o);
    free(f);
    free(l.data);
}

/* Item 11: a 4 KiB block of zeros over the start of a 92-message compressed chunk. */
static void test_zero_block(void **state)
{
    (void)state;
    layout l;
    build_opts b = {RL_MCAP_COMPRESSION_ZSTD, 1, 1, 4, counts4};
    build(&l, &b);
    size_t k = 1;
    assert_int_equal(l.count[k], 92);
    assert_true(l.chunk_len[k] > 4096 + 64); /* random payloads do not compress */
    memset(l.data + l.chunk_off[k], 0, 4096);
    outcome o;
    recover(l.data, l.len, 0, &o);
    assert_int_equal(o.rep.messages_lost, 92);
    assert_int_equal(o.rep.messages_kept, l.total - 92);
    assert_int_equal(o.rep.chunks_lost, 1);
    assert_int_equal(o.rep.bytes_lost, l.chunk_len[k]);
    assert_int_equal(o.rep.lost_count, 1);
    assert_int_equal(o.rep.lost[0].offset, l.chunk_off[k]);
    assert_non_null(strstr(o.rep.lost[0].what, "opcode 0x00"));
    for (uint32_t s = 0; s < l.total; s++)
        assert_int_equal(o.seen[s], s < l.first_seq[k] || s >= l.first_seq[k] + 92);
    done(&o);
    rl_mcap_doctor_report d;
    assert_int_equal(rl_mcap_doctor_mem(l.data, l.len, &d), RL_OK);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.violations[0].offset, l.chunk_off[k]);
    assert_true(d.violations[0].consequences > 0);
    offsets_said_once(&d);
    rl_mcap_doctor_report_free(&d);
    /* Zeros over chunks 2 and 3 with their message indexes: no index is left to count
     * their messages; the intact summary's statistics do. */
    memset(l.data + l.chunk_off[2], 0, (size_t)(l.group_end[3] - l.chunk_off[2]));
    recover(l.data, l.len, 0, &o);
    assert_int_equal(o.rep.messages_kept, l.total - 92 - l.count[2] - l.count[3]);
    assert_int_equal(o.rep.messages_lost, 92 + l.count[2] + l.count[3]);
    assert_int_equal(o.rep.chunks_lost, 3);
    assert_int_equal(o.rep.bytes_lost, l.chunk_len[1] + l.group_end[3] - l.chunk_off[2]);
    done(&o);
    free(l.data);
}

/* Item 10/11: damage inside a chunk's records is said with its place once. */
static void test_inner_damage_message(void **state)
{
    (void)state;
    layout l;
    build_opts b = {RL_MCAP_COMPRESSION_NONE, 0, 0, 4, counts4};
    build(&l, &b);
    memset(l.data + msg_off(&l, 2, 3), 0, 1); /* an opcode becomes 0x00 */
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open_mem(&r, l.data, l.len, NULL), RL_OK);
    rl_mcap_record rec;
    int rc;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1)
        ;
    assert_int_equal(rc, RL_EPARSE);
    char want[128];
    snprintf(want, sizeof want,
             "byte %llu: inside Chunk record at records offset %llu: opcode 0x00",
             (unsigned long long)l.chunk_off[2], (unsigned long long)(3 * MSG_REC));
    if (strncmp(rl_error_last(), want, strlen(want)) != 0)
        fail_msg("got: %s", rl_error_last());
    rl_mcap_reader_close(r);
    /* The indexed reader says it the same way, and goes on past the chunk. */
    rl_mcap_indexed *x = NULL;
    assert_int_equal(rl_mcap_indexed_open_mem(&x, l.data, l.len, 0), RL_OK);
    rl_mcap_message_iter *it = NULL;
    assert_int_equal(rl_mcap_indexed_messages(x, NULL, &it), RL_OK);
    rl_mcap_message m;
    size_t got = 0, errors = 0;
    while ((rc = rl_mcap_message_iter_next(it, &m, NULL)) != 0) {
        if (rc < 0) {
            errors++;
            if (strncmp(rl_error_last(), want, strlen(want)) != 0)
                fail_msg("indexed reader: %s", rl_error_last());
        } else {
            got++;
        }
    }
    assert_int_equal(errors, 1);
    assert_int_equal(got, l.total - l.count[2]);
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(x);
    rl_mcap_doctor_report d;
    assert_int_equal(rl_mcap_doctor_mem(l.data, l.len, &d), RL_OK);
    assert_int_equal(d.count, 1);
    offsets_said_once(&d);
    rl_mcap_doctor_report_free(&d);
    free(l.data);
}

/* ---- Item 12: schemas and channels only in the summary, as libmcap writes them ------- */

typedef struct fbuf {
    uint8_t data[1 << 16];
    size_t len;
} fbuf;

static uint64_t put_rec(fbuf *f, const rl_mcap_record *rec)
{
    uint64_t at = f->len;
    size_t n = rl_mcap_record_encode(rec, NULL, 0);
    assert_true(n <= sizeof f->data - f->len);
    assert_int_equal(rl_mcap_record_encode(rec, f->data + f->len, n), n);
    f->len += n;
    return at;
}

static void put_u16u64(uint8_t *p, uint16_t k, uint64_t v)
{
    p[0] = (uint8_t)k;
    p[1] = (uint8_t)(k >> 8);
    for (int i = 0; i < 8; i++)
        p[2 + i] = (uint8_t)(v >> (8 * i));
}

/* A rosbag2 bag written through libmcap: four topics registered, messages on two. The
 * data section defines the two used schemas and channels; the summary repeats all four;
 * the statistics count the data section's (schema_count 2, channel_count 2). */
static void build_libmcap_like(fbuf *f, uint16_t schema_count)
{
    f->len = 0;
    memcpy(f->data, rl_mcap_magic, RL_MCAP_MAGIC_LEN);
    f->len = RL_MCAP_MAGIC_LEN;
    rl_mcap_record rec;
    memset(&rec, 0, sizeof rec);
    rec.opcode = RL_MCAP_OP_HEADER;
    rec.u.header.profile = B("ros2");
    rec.u.header.library = B("libmcap 1.4.0");
    put_rec(f, &rec);
    static const char *const types[4] = {"std_msgs/msg/String", "std_msgs/msg/Int32",
                                         "rcl_interfaces/srv/GetParameters_Event",
                                         "example_interfaces/srv/AddTwoInts_Event"};
    static const char *const topics[4] = {"/chatter", "/count", "/get_parameters/_service_event",
                                          "/add_two_ints/_service_event"};
    rl_mcap_record schemas[4], channels[4];
    for (uint16_t i = 0; i < 4; i++) {
        memset(&schemas[i], 0, sizeof schemas[i]);
        schemas[i].opcode = RL_MCAP_OP_SCHEMA;
        schemas[i].u.schema = (rl_mcap_schema){(uint16_t)(i + 1), B(types[i]), B("ros2msg"),
                                               B("string data")};
        memset(&channels[i], 0, sizeof channels[i]);
        channels[i].opcode = RL_MCAP_OP_CHANNEL;
        channels[i].u.channel.id = (uint16_t)(i + 1);
        channels[i].u.channel.schema_id = (uint16_t)(i + 1);
        channels[i].u.channel.topic = B(topics[i]);
        channels[i].u.channel.message_encoding = B("cdr");
    }
    /* Data section: schemas/channels 1 and 2 before their first messages, unchunked. */
    uint64_t first = 0, last = 0;
    for (uint16_t i = 0; i < 2; i++) {
        put_rec(f, &schemas[i]);
        put_rec(f, &channels[i]);
    }
    for (uint32_t s = 0; s < 6; s++) {
        memset(&rec, 0, sizeof rec);
        rec.opcode = RL_MCAP_OP_MESSAGE;
        rec.u.message = (rl_mcap_message){(uint16_t)(1 + s % 2), s, 100 + s, 100 + s, B("hi")};
        put_rec(f, &rec);
        if (s == 0)
            first = 100 + s;
        last = 100 + s;
    }
    memset(&rec, 0, sizeof rec);
    rec.opcode = RL_MCAP_OP_DATA_END;
    rec.u.data_end.data_section_crc = rl_crc32(0, f->data, f->len);
    put_rec(f, &rec);
    /* Summary: every schema, every channel, statistics. */
    uint64_t summary = f->len;
    for (int i = 0; i < 4; i++)
        put_rec(f, &schemas[i]);
    uint64_t chan_group = f->len;
    for (int i = 0; i < 4; i++)
        put_rec(f, &channels[i]);
    uint64_t stats_group = f->len;
    uint8_t counts[20];
    put_u16u64(counts, 1, 3);
    put_u16u64(counts + 10, 2, 3);
    memset(&rec, 0, sizeof rec);
    rec.opcode = RL_MCAP_OP_STATISTICS;
    rec.u.statistics.message_count = 6;
    rec.u.statistics.schema_count = schema_count;
    rec.u.statistics.channel_count = 2;
    rec.u.statistics.message_start_time = first;
    rec.u.statistics.message_end_time = last;
    rec.u.statistics.channel_message_counts = (rl_mcap_bytes){counts, sizeof counts};
    put_rec(f, &rec);
    uint64_t offsets = f->len;
    const uint64_t groups[3][3] = {{RL_MCAP_OP_SCHEMA, summary, chan_group - summary},
                                   {RL_MCAP_OP_CHANNEL, chan_group, stats_group - chan_group},
                                   {RL_MCAP_OP_STATISTICS, stats_group, offsets - stats_group}};
    for (int i = 0; i < 3; i++) {
        memset(&rec, 0, sizeof rec);
        rec.opcode = RL_MCAP_OP_SUMMARY_OFFSET;
        rec.u.summary_offset = (rl_mcap_summary_offset){(uint8_t)groups[i][0], groups[i][1],
                                                        groups[i][2]};
        put_rec(f, &rec);
    }
    memset(&rec, 0, sizeof rec);
    rec.opcode = RL_MCAP_OP_FOOTER;
    rec.u.footer.summary_start = summary;
    rec.u.footer.summary_offset_start = offsets;
    uint64_t footer = put_rec(f, &rec);
    /* The summary CRC covers summary start .. the footer's summary_offset_start field. */
    uint32_t crc = rl_crc32(0, f->data + summary, (size_t)(footer + 9 + 16 - summary));
    for (int i = 0; i < 4; i++)
        f->data[footer + 9 + 16 + (size_t)i] = (uint8_t)(crc >> (8 * i));
    memcpy(f->data + f->len, rl_mcap_magic, RL_MCAP_MAGIC_LEN);
    f->len += RL_MCAP_MAGIC_LEN;
}

static void test_summary_only_definitions(void **state)
{
    (void)state;
    static fbuf f;
    build_libmcap_like(&f, 2);
    rl_mcap_doctor_report d;
    assert_int_equal(rl_mcap_doctor_mem(f.data, f.len, &d), RL_OK);
    for (size_t i = 0; i < d.count; i++)
        print_message("violation: %s\n", d.violations[i].what);
    assert_int_equal(d.count, 0);
    assert_int_equal(d.warning_count, 2);
    assert_non_null(strstr(d.warnings[0].what, "schema_count 2 counts the schemas of the data "
                                                "section; 2 more appear only in the summary"));
    assert_non_null(strstr(d.warnings[1].what, "channel_count 2"));
    rl_mcap_doctor_report_free(&d);
    /* A count that matches neither reading stays a violation. */
    build_libmcap_like(&f, 3);
    assert_int_equal(rl_mcap_doctor_mem(f.data, f.len, &d), RL_OK);
    int found = 0;
    for (size_t i = 0; i < d.count; i++)
        found |= strstr(d.violations[i].what, "schema_count 3, but the file has 4 schemas") != NULL;
    assert_true(found);
    rl_mcap_doctor_report_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duplicate_chunk),
        cmocka_unit_test(test_data_end_crc_bit),
        cmocka_unit_test(test_data_section_crc_uncompressed_chunks),
        cmocka_unit_test(test_damaged_compressed_chunk),
        cmocka_unit_test(test_zeroed_message_is_suspect),
        cmocka_unit_test(test_four_bytes_in_900),
        cmocka_unit_test(test_zero_block),
        cmocka_unit_test(test_inner_damage_message),
        cmocka_unit_test(test_summary_only_definitions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
