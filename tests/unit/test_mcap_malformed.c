/* Malformed MCAP input: files cut at every byte and with every byte flipped (never a
 * crash, always a clear error naming a byte offset), huge length fields (refused before
 * any allocation), CRC mismatches, trailing data, unknown opcodes and padded records,
 * record encode/parse round trips of every record type, and the summary read alone
 * through the footer. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/mcap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rl_mcap_bytes B(const char *s)
{
    rl_mcap_bytes b = {(const uint8_t *)s, strlen(s)};
    return b;
}

/* A small complete file in memory. */
static uint8_t *small_file_crc(rl_mcap_compression comp, int chunked, int summary_crc,
                               size_t *len)
{
    char *dir = rl_test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/s.mcap", dir);
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.compression = comp;
    o.use_chunks = chunked;
    o.chunk_size = 200;
    o.summary_crc = summary_crc;
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_path(&w, path, &o), RL_OK);
    rl_mcap_schema s = {1, B("S"), B("jsonschema"), B("{}")};
    assert_int_equal(rl_mcap_writer_add_schema(w, &s), RL_OK);
    rl_mcap_channel ch;
    memset(&ch, 0, sizeof ch);
    ch.id = 1;
    ch.schema_id = 1;
    ch.topic = B("/t");
    ch.message_encoding = B("json");
    assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_OK);
    for (uint32_t i = 0; i < 12; i++) {
        rl_mcap_message m = {1, i, 100 - i, 0, B("{\"value\": 12345}")};
        assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_OK);
    }
    rl_mcap_attachment a;
    memset(&a, 0, sizeof a);
    a.name = B("a");
    a.media_type = B("b");
    a.data = B("xyz");
    assert_int_equal(rl_mcap_writer_add_attachment(w, &a), RL_OK);
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
    uint8_t *buf = (uint8_t *)rl_test_read_file(path, len);
    rl_test_tmpdir_free(dir);
    return buf;
}

static uint8_t *small_file(rl_mcap_compression comp, int chunked, size_t *len)
{
    return small_file_crc(comp, chunked, 1, len);
}

/* Reads all of `data` with the streamed reader; returns the final status. */
static int stream_all(const uint8_t *data, size_t len, size_t *records)
{
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open_mem(&r, data, len, NULL), RL_OK);
    rl_mcap_record rec;
    int rc;
    size_t n = 0;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1)
        n++;
    if (rc < 0) {
        /* Sticky: the same error again. */
        assert_int_equal(rl_mcap_reader_next(r, &rec), rc);
    }
    rl_mcap_reader_close(r);
    if (records)
        *records = n;
    return rc;
}

/* Opens with the indexed reader and reads every message; any status is acceptable, only
 * crashes (caught by the sanitizers) and hangs are not. */
static void indexed_all(const uint8_t *data, size_t len)
{
    rl_mcap_indexed *x = NULL;
    if (rl_mcap_indexed_open_mem(&x, data, len, 1 << 20) < 0) {
        assert_true(rl_error_last()[0] != '\0');
        return;
    }
    for (int rev = 0; rev < 2; rev++) {
        rl_mcap_query q;
        rl_mcap_query_default(&q);
        q.reverse = rev;
        rl_mcap_message_iter *it = NULL;
        assert_int_equal(rl_mcap_indexed_messages(x, &q, &it), RL_OK);
        rl_mcap_message m;
        int rc, guard = 0;
        while ((rc = rl_mcap_message_iter_next(it, &m, NULL)) == 1)
            assert_true(++guard < 1000);
        rl_mcap_message_iter_free(it);
    }
    rl_mcap_indexed_close(x);
}

static void test_truncated_at_every_byte(void **state)
{
    (void)state;
    for (int mode = 0; mode < 4; mode++) {
        size_t len;
        uint8_t *f = small_file(mode == 2   ? RL_MCAP_COMPRESSION_ZSTD
                                : mode == 3 ? RL_MCAP_COMPRESSION_LZ4
                                            : RL_MCAP_COMPRESSION_NONE,
                                mode != 0, &len);
        size_t full = 0;
        assert_int_equal(stream_all(f, len, &full), 0);
        assert_true(full > 10);
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees any overread */
            memcpy(copy, f, cut);
            int rc = stream_all(copy, cut, NULL);
            assert_true(rc < 0);
            const char *msg = rl_error_last();
            if (!strstr(msg, "byte ")) {
                print_message("cut at %zu: message without offset: %s\n", cut, msg);
                fail();
            }
            indexed_all(copy, cut);
            free(copy);
        }
        free(f);
    }
}

static void test_flipped_bytes_never_crash(void **state)
{
    (void)state;
    for (int mode = 0; mode < 4; mode++) {
        size_t len;
        uint8_t *f = small_file(mode == 2   ? RL_MCAP_COMPRESSION_ZSTD
                                : mode == 3 ? RL_MCAP_COMPRESSION_LZ4
                                            : RL_MCAP_COMPRESSION_NONE,
                                mode != 0, &len);
        uint8_t *copy = malloc(len);
        size_t errors = 0;
        for (size_t i = 0; i < len; i++) {
            static const uint8_t flips[] = {0x01, 0x80, 0xFF};
            for (size_t k = 0; k < 3; k++) {
                memcpy(copy, f, len);
                copy[i] ^= flips[k];
                int rc = stream_all(copy, len, NULL);
                if (rc < 0) {
                    errors++;
                    assert_non_null(strstr(rl_error_last(), "byte "));
                }
                indexed_all(copy, len);
            }
        }
        /* CRCs and structure catch most flips (those in CRC-free padding do not exist). */
        assert_true(errors > len);
        free(copy);
        free(f);
    }
}

static size_t put_record(uint8_t *p, uint8_t op, uint64_t len)
{
    p[0] = op;
    for (int i = 0; i < 8; i++)
        p[1 + i] = (uint8_t)(len >> (8 * i));
    return 9;
}

static void test_huge_lengths_are_refused(void **state)
{
    (void)state;
    uint8_t f[256];
    memset(f, 0, sizeof f);
    memcpy(f, rl_mcap_magic, 8);
    /* A record claiming 2^63 bytes. */
    put_record(f + 8, RL_MCAP_OP_HEADER, (uint64_t)1 << 63);
    assert_int_equal(stream_all(f, 64, NULL), RL_ETRUNCATED);
    assert_non_null(
        strstr(rl_error_last(), "byte 8: Header record: length 9223372036854775808 exceeds"));

    /* A string length of 4 GiB inside a 10-byte body. */
    put_record(f + 8, RL_MCAP_OP_HEADER, 10);
    memset(f + 17, 0xFF, 4);
    assert_int_equal(stream_all(f, 64, NULL), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "byte 8: Header record: field profile"));

    /* A zstd chunk declaring 1 TiB uncompressed: refused by the limit, nothing allocated. */
    memset(f + 8, 0, sizeof f - 8);
    put_record(f + 8, RL_MCAP_OP_HEADER, 8);
    size_t at = 25;
    size_t body = 8 + 8 + 8 + 4 + 4 + 4 + 8 + 16;
    at += put_record(f + at, RL_MCAP_OP_CHUNK, body);
    uint64_t huge = (uint64_t)1 << 40;
    for (int i = 0; i < 8; i++)
        f[at + 16 + i] = (uint8_t)(huge >> (8 * i));
    f[at + 28] = 4;
    memcpy(f + at + 32, "zstd", 4);
    f[at + 36] = 16;
    rl_mcap_reader_options o;
    rl_mcap_reader_options_default(&o);
    o.max_chunk_size = 1 << 20;
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open_mem(&r, f, at + body + 20, &o), RL_OK);
    rl_mcap_record rec;
    assert_int_equal(rl_mcap_reader_next(r, &rec), 1);
    assert_int_equal(rl_mcap_reader_next(r, &rec), RL_ERANGE);
    assert_non_null(strstr(rl_error_last(), "byte 25: Chunk record"));
    assert_int_equal(rl_mcap_reader_offset(r), 25);
    rl_mcap_reader_close(r);

    /* Within the limit but beyond what 16 zstd bytes can expand to: refused unallocated. */
    o.max_chunk_size = 0;
    f[at + 16 + 5] = 0;
    f[at + 16 + 3] = 0x40; /* 1 GiB, under the default 4 GiB limit */
    assert_int_equal(rl_mcap_reader_open_mem(&r, f, at + body + 20, &o), RL_OK);
    assert_int_equal(rl_mcap_reader_next(r, &rec), 1);
    assert_int_equal(rl_mcap_reader_next(r, &rec), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "impossible from 16 zstd bytes"));
    rl_mcap_reader_close(r);
    o.max_chunk_size = 1 << 20;

    /* The same chunk as "lz4" and as uncompressed with a size mismatch. */
    memcpy(f + at + 32, "lz4\0", 4);
    f[at + 28] = 3;
    assert_int_equal(rl_mcap_reader_open_mem(&r, f, at + body + 20, &o), RL_OK);
    assert_int_equal(rl_mcap_reader_next(r, &rec), 1);
    assert_true(rl_mcap_reader_next(r, &rec) < 0);
    rl_mcap_reader_close(r);

    /* Unknown compression. */
    memcpy(f + at + 32, "brot", 4);
    f[at + 28] = 4;
    for (int i = 0; i < 8; i++)
        f[at + 16 + i] = 0;
    f[at + 16] = 16;
    assert_int_equal(rl_mcap_reader_open_mem(&r, f, at + body + 20, &o), RL_OK);
    assert_int_equal(rl_mcap_reader_next(r, &rec), 1);
    assert_int_equal(rl_mcap_reader_next(r, &rec), RL_EUNSUPPORTED);
    rl_mcap_reader_close(r);

    /* A message index whose array is not a whole number of entries. */
    uint8_t mi[4 + 2 + 4 + 15];
    memset(mi, 0, sizeof mi);
    mi[2] = 15;
    assert_int_equal(rl_mcap_record_parse(RL_MCAP_OP_MESSAGE_INDEX, mi, 2 + 4 + 15, &rec),
                     RL_EPARSE);
}

static void test_crc_mismatches(void **state)
{
    (void)state;
    size_t len;
    uint8_t *f = small_file(RL_MCAP_COMPRESSION_NONE, 1, &len);
    /* A byte of a message payload inside the first (uncompressed) chunk. */
    uint8_t *p = memmem(f, len, "12345", 5);
    assert_non_null(p);
    p[0] = '9';
    assert_int_equal(stream_all(f, len, NULL), RL_ECRC);
    assert_non_null(strstr(rl_error_last(), "Chunk record: chunk CRC mismatch"));
    p[0] = '1';
    /* The attachment's data: its own CRC, then the data section CRC. */
    p = memmem(f, len, "xyz", 3);
    p[0] = 'X';
    assert_int_equal(stream_all(f, len, NULL), RL_ECRC);
    assert_non_null(strstr(rl_error_last(), "Attachment record: CRC mismatch"));
    p[0] = 'x';
    /* The footer's summary CRC. */
    f[len - 8 - 4] ^= 1;
    assert_int_equal(stream_all(f, len, NULL), RL_ECRC);
    assert_non_null(strstr(rl_error_last(), "summary CRC mismatch"));
    /* The indexed reader then falls back to scanning, and still finds all messages. */
    rl_mcap_indexed *x = NULL;
    assert_int_equal(rl_mcap_indexed_open_mem(&x, f, len, 0), RL_OK);
    assert_int_equal(rl_mcap_indexed_used_summary(x), 0);
    rl_mcap_message_iter *it = NULL;
    assert_int_equal(rl_mcap_indexed_messages(x, NULL, &it), RL_OK);
    rl_mcap_message m;
    int n = 0;
    uint64_t last = 0;
    while (rl_mcap_message_iter_next(it, &m, NULL) == 1) {
        assert_true(m.log_time >= last);
        last = m.log_time;
        n++;
    }
    assert_int_equal(n, 12);
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(x);
    f[len - 8 - 4] ^= 1;
    assert_int_equal(stream_all(f, len, NULL), 0);
    free(f);
}

/* The indexed reader checks chunk CRCs by default and skips them when told to: a payload
 * byte changed inside a chunk is RL_ECRC, or, unchecked, served as it now stands. */
static void test_indexed_crc_option(void **state)
{
    (void)state;
    static const rl_mcap_compression comps[] = {RL_MCAP_COMPRESSION_NONE,
                                                RL_MCAP_COMPRESSION_ZSTD};
    for (size_t c = 0; c < 2; c++) {
        size_t len;
        uint8_t *f = small_file(comps[c], 1, &len);
        if (comps[c] == RL_MCAP_COMPRESSION_NONE) {
            uint8_t *p = memmem(f, len, "12345", 5);
            assert_non_null(p);
            p[0] = '9';
        }
        for (int verify = 1; verify >= 0; verify--) {
            rl_mcap_indexed *x = NULL;
            assert_int_equal(rl_mcap_indexed_open_mem(&x, f, len, 0), RL_OK);
            assert_int_equal(rl_mcap_indexed_used_summary(x), 1);
            const rl_mcap_chunk_index *ci = NULL;
            assert_true(rl_mcap_indexed_chunk_indexes(x, &ci) > 1);
            if (comps[c] == RL_MCAP_COMPRESSION_ZSTD)
                assert_int_equal(ci[0].compression.len, 4);
            if (!verify)
                rl_mcap_indexed_set_verify_crcs(x, 0);
            rl_mcap_message_iter *it = NULL;
            assert_int_equal(rl_mcap_indexed_messages(x, NULL, &it), RL_OK);
            rl_mcap_message m;
            int rc, n = 0, nines = 0;
            while ((rc = rl_mcap_message_iter_next(it, &m, NULL)) == 1) {
                n++;
                nines += m.data.len > 10 && m.data.data[10] == '9';
            }
            if (comps[c] == RL_MCAP_COMPRESSION_NONE && verify) {
                assert_int_equal(rc, RL_ECRC);
                assert_non_null(strstr(rl_error_last(), "chunk CRC mismatch"));
            } else {
                assert_int_equal(rc, 0);
                assert_int_equal(n, 12);
                assert_int_equal(nines, comps[c] == RL_MCAP_COMPRESSION_NONE ? 1 : 0);
            }
            rl_mcap_message_iter_free(it);
            rl_mcap_indexed_close(x);
        }
        free(f);
    }
}

/* A damaged chunk found through the index is an error naming it; iterating on skips it. */
static void test_indexed_skips_damaged_chunk(void **state)
{
    (void)state;
    size_t len;
    uint8_t *f = small_file(RL_MCAP_COMPRESSION_NONE, 1, &len);
    uint8_t *p = memmem(f, len, "12345", 5);
    assert_non_null(p);
    p[0] = '9';
    rl_mcap_indexed *x = NULL;
    assert_int_equal(rl_mcap_indexed_open_mem(&x, f, len, 0), RL_OK);
    assert_int_equal(rl_mcap_indexed_used_summary(x), 1);
    const rl_mcap_chunk_index *ci;
    assert_true(rl_mcap_indexed_chunk_indexes(x, &ci) > 2);
    rl_mcap_message_iter *it = NULL;
    assert_int_equal(rl_mcap_indexed_messages(x, NULL, &it), RL_OK);
    rl_mcap_message m;
    int rc, got = 0, errors = 0;
    while ((rc = rl_mcap_message_iter_next(it, &m, NULL)) != 0) {
        if (rc < 0) {
            assert_int_equal(rc, RL_ECRC);
            assert_non_null(strstr(rl_error_last(), "Chunk record: chunk CRC mismatch"));
            errors++;
        } else {
            got++;
        }
        assert_true(errors + got < 100);
    }
    assert_int_equal(errors, 1);
    assert_true(got > 0 && got < 12);
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(x);
    free(f);
}

static void test_trailing_data_and_unknown_records(void **state)
{
    (void)state;
    size_t len;
    uint8_t *f = small_file(RL_MCAP_COMPRESSION_ZSTD, 1, &len);
    uint8_t *g = malloc(len + 3);
    memcpy(g, f, len);
    memcpy(g + len, "abc", 3);
    assert_int_equal(stream_all(g, len + 3, NULL), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "3 bytes after the closing magic"));
    rl_mcap_reader_options o;
    rl_mcap_reader_options_default(&o);
    o.allow_trailing_data = 1;
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open_mem(&r, g, len + 3, &o), RL_OK);
    rl_mcap_record rec;
    int rc;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
    }
    assert_int_equal(rc, 0);
    rl_mcap_reader_close(r);
    free(g);
    free(f);

    /* Magic, Header padded with 3 bytes, a private record 0x80, a Message, then a
     * truncated end: the reader yields all three records with their bodies. */
    uint8_t h[128];
    size_t at = 0;
    memcpy(h, rl_mcap_magic, 8);
    at = 8;
    at += put_record(h + at, RL_MCAP_OP_HEADER, 8 + 3);
    memset(h + at, 0, 8);
    memcpy(h + at + 8, "\x01\xFF\xFF", 3);
    at += 11;
    at += put_record(h + at, 0x80, 5);
    memcpy(h + at, "hello", 5);
    at += 5;
    at += put_record(h + at, RL_MCAP_OP_MESSAGE, 22 + 2);
    memset(h + at, 0, 22);
    h[at] = 9;
    memcpy(h + at + 22, "hi", 2);
    at += 24;
    assert_int_equal(rl_mcap_reader_open_mem(&r, h, at, NULL), RL_OK);
    assert_int_equal(rl_mcap_reader_next(r, &rec), 1);
    assert_int_equal(rec.opcode, RL_MCAP_OP_HEADER);
    assert_int_equal(rec.u.header.profile.len, 0);
    assert_int_equal(rec.body.len, 11);
    assert_int_equal(rl_mcap_reader_next(r, &rec), 1);
    assert_int_equal(rec.opcode, 0x80);
    assert_string_equal(rl_mcap_opcode_name(rec.opcode), "Unknown");
    assert_memory_equal(rec.body.data, "hello", 5);
    assert_int_equal(rec.offset, 28);
    assert_int_equal(rl_mcap_reader_next(r, &rec), 1);
    assert_int_equal(rec.u.message.channel_id, 9);
    assert_memory_equal(rec.u.message.data.data, "hi", 2);
    assert_int_equal(rl_mcap_reader_next(r, &rec), RL_ETRUNCATED);
    /* Seeking clears the error and re-reads from a record boundary. */
    assert_int_equal(rl_mcap_reader_seek(r, 28), RL_OK);
    assert_int_equal(rl_mcap_reader_next(r, &rec), 1);
    assert_int_equal(rec.opcode, 0x80);
    assert_int_equal(rl_mcap_reader_seek(r, at + 1), RL_ERANGE);
    rl_mcap_reader_close(r);

    /* Not an MCAP file at all. */
    assert_int_equal(stream_all((const uint8_t *)"PK\3\4 not mcap", 14, NULL), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "byte 0: not an MCAP file"));
}

/* Every record type encodes and parses back to the same fields. */
static void test_encode_parse_every_record(void **state)
{
    (void)state;
    uint8_t map_u16[20] = {1, 0, 5, 0, 0, 0, 0, 0, 0, 0, 2, 0, 6, 0, 0, 0, 0, 0, 0, 0};
    uint8_t entries[32] = {1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 2};
    rl_mcap_kv kv[1] = {{B("key"), B("val")}};
    rl_mcap_record recs[15];
    memset(recs, 0, sizeof recs);
    for (int i = 0; i < 15; i++)
        recs[i].opcode = (uint8_t)(i + 1);
    recs[0].u.header = (rl_mcap_header){B("ros2"), B("lib")};
    recs[1].u.footer = (rl_mcap_footer){11, 22, 33};
    recs[2].u.schema = (rl_mcap_schema){4, B("n"), B("e"), B("data")};
    recs[3].u.channel.id = 5;
    recs[3].u.channel.schema_id = 4;
    recs[3].u.channel.topic = B("/t");
    recs[3].u.channel.message_encoding = B("cdr");
    recs[3].u.channel.metadata_kv = kv;
    recs[3].u.channel.metadata_kv_count = 1;
    recs[4].u.message = (rl_mcap_message){5, 6, 7, 8, B("payload")};
    recs[5].u.chunk = (rl_mcap_chunk){1, 2, 3, 4, B(""), B("abc")};
    recs[6].u.message_index = (rl_mcap_message_index){5, {entries, 32}, 2};
    recs[7].u.chunk_index = (rl_mcap_chunk_index){1, 2, 3, 4, {map_u16, 20}, 5, B("zstd"), 6, 7};
    recs[8].u.attachment = (rl_mcap_attachment){1, 2, B("a"), B("b"), B("c"), 0};
    recs[8].u.attachment.crc = rl_mcap_attachment_crc(&recs[8].u.attachment);
    recs[9].u.attachment_index = (rl_mcap_attachment_index){1, 2, 3, 4, 5, B("n"), B("m")};
    recs[10].u.statistics = (rl_mcap_statistics){1, 2, 3, 4, 5, 6, 7, 8, {map_u16, 20}};
    recs[11].u.metadata.name = B("md");
    recs[11].u.metadata.metadata_kv = kv;
    recs[11].u.metadata.metadata_kv_count = 1;
    recs[12].u.metadata_index = (rl_mcap_metadata_index){1, 2, B("md")};
    recs[13].u.summary_offset = (rl_mcap_summary_offset){8, 100, 200};
    recs[14].u.data_end.data_section_crc = 0xDEADBEEF;
    for (int i = 0; i < 15; i++) {
        size_t n = rl_mcap_record_encode(&recs[i], NULL, 0);
        uint8_t *buf = malloc(n);
        assert_int_equal(rl_mcap_record_encode(&recs[i], buf, n), n);
        assert_int_equal(buf[0], i + 1);
        size_t pos = 0;
        rl_mcap_record back;
        assert_int_equal(rl_mcap_records_next(buf, n, &pos, &back), 1);
        assert_int_equal(pos, n);
        /* Re-encoding the parsed record gives the same bytes. */
        uint8_t *again = malloc(n);
        assert_int_equal(rl_mcap_record_encode(&back, again, n), n);
        assert_memory_equal(buf, again, n);
        /* Every proper prefix of the body fails to parse (no field may be missing),
         * except for records whose last field is free-length. */
        if (back.opcode != RL_MCAP_OP_MESSAGE)
            for (size_t cut = 0; cut + 9 < n; cut++)
                assert_int_equal(rl_mcap_record_parse(back.opcode, buf + 9, cut, &back), RL_EPARSE);
        free(again);
        free(buf);
    }
    /* Spot checks of parsed values. */
    size_t n = rl_mcap_record_encode(&recs[3], NULL, 0);
    uint8_t *buf = malloc(n);
    rl_mcap_record_encode(&recs[3], buf, n);
    rl_mcap_record ch;
    assert_int_equal(rl_mcap_record_parse(RL_MCAP_OP_CHANNEL, buf + 9, n - 9, &ch), RL_OK);
    size_t pos = 0;
    rl_mcap_bytes k, v;
    assert_int_equal(rl_mcap_map_str_next(ch.u.channel.metadata, &pos, &k, &v), 1);
    assert_memory_equal(v.data, "val", 3);
    assert_int_equal(rl_mcap_map_str_next(ch.u.channel.metadata, &pos, &k, &v), 0);
    free(buf);
    uint64_t t, off;
    rl_mcap_message_index_entry(&recs[6].u.message_index, 0, &t, &off);
    assert_int_equal(t, 1);
    assert_int_equal(off, 9);
    /* Encoding into a too small buffer writes nothing and reports the size. */
    uint8_t small[4] = {0xAA, 0xAA, 0xAA, 0xAA};
    assert_int_equal(rl_mcap_record_encode(&recs[0], small, sizeof small), 9 + 4 + 4 + 4 + 3);
    assert_int_equal(small[0], 0xAA);
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A chunk index whose time range leaves out messages the chunk holds (found by the fuzzer):
 * the reader must not emit them out of log-time order; it reports the chunk as damaged and
 * the messages it does emit stay ordered. */
static void test_chunk_index_time_range_lies(void **state)
{
    (void)state;
    size_t len;
    uint8_t *f = small_file_crc(RL_MCAP_COMPRESSION_NONE, 1, 0, &len);
    rl_mcap_indexed *x = NULL;
    assert_int_equal(rl_mcap_indexed_open_mem(&x, f, len, 0), RL_OK);
    const rl_mcap_chunk_index *ci;
    size_t n = rl_mcap_indexed_chunk_indexes(x, &ci);
    assert_true(n > 2);
    /* the last chunk index: its body starts start(8) end(8) offset(8) */
    uint8_t want[24];
    put_le64(want, ci[n - 1].message_start_time);
    put_le64(want + 8, ci[n - 1].message_end_time);
    put_le64(want + 16, ci[n - 1].chunk_start_offset);
    uint64_t hi = ci[n - 1].message_end_time;
    assert_true(ci[n - 1].message_start_time < hi);
    rl_mcap_indexed_close(x);
    uint8_t *body = memmem(f, len, want, sizeof want);
    assert_non_null(body);
    put_le64(body, hi); /* claims to start at its last message */

    assert_int_equal(rl_mcap_indexed_open_mem(&x, f, len, 0), RL_OK);
    assert_int_equal(rl_mcap_indexed_used_summary(x), 1);
    rl_mcap_message_iter *it = NULL;
    assert_int_equal(rl_mcap_indexed_messages(x, NULL, &it), RL_OK);
    rl_mcap_message m;
    int rc, got = 0, errors = 0;
    uint64_t last = 0;
    while ((rc = rl_mcap_message_iter_next(it, &m, NULL)) != 0) {
        if (rc < 0) {
            assert_non_null(strstr(rl_error_last(), "outside the chunk's declared range"));
            errors++;
        } else {
            assert_true(got == 0 || m.log_time >= last);
            last = m.log_time;
            got++;
        }
        assert_true(errors + got < 100);
    }
    assert_int_equal(errors, 1);
    assert_true(got > 0 && got < 12);
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(x);
    free(f);
}

/* The summary read alone through the footer (rl_mcap_summary_find / _statistics): found
 * and right on a complete file, found even when the data section is wiped (nothing before
 * the summary is read), 0 without a summary or Statistics record, and a clear error naming
 * a byte for a cut file, a flipped summary byte (CRC) or a footer pointing outside. */
static uint8_t *summary_file(int summary, int statistics, size_t *len)
{
    char *dir = rl_test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/s.mcap", dir);
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.chunk_size = 200;
    o.statistics = statistics;
    if (!summary)
        o.chunk_index = o.repeated_schemas = o.repeated_channels = o.attachment_index =
            o.metadata_index = o.summary_offsets = 0;
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_path(&w, path, &o), RL_OK);
    rl_mcap_schema sc = {1, B("S"), B("jsonschema"), B("{}")};
    assert_int_equal(rl_mcap_writer_add_schema(w, &sc), RL_OK);
    for (uint16_t c = 1; c <= 2; c++) {
        rl_mcap_channel ch;
        memset(&ch, 0, sizeof ch);
        ch.id = (uint16_t)(c * 7);
        ch.schema_id = 1;
        ch.topic = B(c == 1 ? "/a" : "/b");
        ch.message_encoding = B("json");
        assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_OK);
    }
    for (uint32_t i = 0; i < 30; i++) { /* 20 on /a (id 7), 10 on /b (id 14) */
        rl_mcap_message m = {(uint16_t)(i % 3 == 2 ? 14 : 7), i, 1000 + i, 0, B("{\"v\": 1}")};
        assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_OK);
    }
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
    uint8_t *buf = (uint8_t *)rl_test_read_file(path, len);
    rl_test_tmpdir_free(dir);
    return buf;
}

static void check_counts(const rl_mcap_statistics *st)
{
    assert_int_equal(st->message_count, 30);
    assert_int_equal(st->channel_count, 2);
    assert_int_equal(st->message_start_time, 1000);
    assert_int_equal(st->message_end_time, 1029);
    size_t pos = 0, n = 0;
    uint16_t id;
    uint64_t count;
    while (rl_mcap_map_u16u64_next(st->channel_message_counts, &pos, &id, &count) == 1) {
        assert_int_equal(count, id == 7 ? 20 : id == 14 ? 10 : 0);
        n++;
    }
    assert_int_equal(n, 2);
}

static void test_summary_alone(void **state)
{
    (void)state;
    size_t len, start, end;
    uint8_t *f = summary_file(1, 1, &len);
    const size_t tail = RL_MCAP_RECORD_PREFIX + RL_MCAP_FOOTER_BODY + RL_MCAP_MAGIC_LEN;
    assert_int_equal(rl_mcap_summary_find(f, len, 1, &start, &end), 1);
    assert_int_equal(end, len - tail);
    assert_true(start > RL_MCAP_MAGIC_LEN && start < end);
    /* The summary's records, in file offsets; the footer is not among them. */
    rl_mcap_record rec;
    size_t pos = start, stats = 0, channels = 0;
    int rc;
    while ((rc = rl_mcap_records_next(f, end, &pos, &rec)) == 1) {
        assert_true(rec.offset >= start && rec.offset < end);
        assert_int_not_equal(rec.opcode, RL_MCAP_OP_FOOTER);
        stats += rec.opcode == RL_MCAP_OP_STATISTICS;
        channels += rec.opcode == RL_MCAP_OP_CHANNEL;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(stats, 1);
    assert_int_equal(channels, 2);
    rl_mcap_statistics st;
    assert_int_equal(rl_mcap_summary_statistics(f, len, 1, &st), 1);
    check_counts(&st);

    /* Nothing before the summary is read: a wiped data section changes nothing. */
    uint8_t *wiped = malloc(len);
    memcpy(wiped, f, len);
    memset(wiped + RL_MCAP_MAGIC_LEN, 0xEE, start - RL_MCAP_MAGIC_LEN);
    assert_int_equal(rl_mcap_summary_statistics(wiped, len, 1, &st), 1);
    check_counts(&st);

    /* Cut anywhere: an error naming a byte (never a scan, never a crash). */
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees any overread */
        memcpy(copy, f, cut);
        int r = rl_mcap_summary_statistics(copy, cut, 1, &st);
        assert_true(r < 0);
        assert_non_null(strstr(rl_error_last(), "byte "));
        assert_int_equal(rl_mcap_summary_find(copy, cut, 1, &start, &end), r);
        assert_true(start == 0 && end == 0);
        free(copy);
    }
    assert_int_equal(rl_mcap_summary_find(f, len - 1, 1, &start, &end), RL_ETRUNCATED);
    assert_int_equal(rl_mcap_summary_find(f + 1, len - 1, 1, &start, &end), RL_EPARSE);

    /* A flipped summary byte fails the summary CRC; unchecked, any answer but no crash. */
    assert_int_equal(rl_mcap_summary_find(f, len, 1, &start, &end), 1);
    for (size_t i = start; i < end; i++) {
        memcpy(wiped, f, len);
        wiped[i] ^= 0x80;
        assert_int_equal(rl_mcap_summary_statistics(wiped, len, 1, &st), RL_ECRC);
        assert_non_null(strstr(rl_error_last(), "summary CRC mismatch"));
        int r = rl_mcap_summary_statistics(wiped, len, 0, &st);
        assert_true(r == 1 || r == 0 || rl_error_last()[0] != '\0');
    }

    /* A footer whose summary_start points past itself or into the magic. */
    uint8_t *footer = wiped + len - tail + RL_MCAP_RECORD_PREFIX;
    memcpy(wiped, f, len);
    put_le64(footer, len);
    assert_int_equal(rl_mcap_summary_find(wiped, len, 0, &start, &end), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "summary_start"));
    put_le64(footer, 3);
    assert_int_equal(rl_mcap_summary_find(wiped, len, 0, &start, &end), RL_EPARSE);
    free(wiped);
    free(f);

    /* No summary at all; a summary without Statistics. */
    f = summary_file(0, 0, &len);
    assert_int_equal(rl_mcap_summary_find(f, len, 1, &start, &end), 0);
    assert_int_equal(rl_mcap_summary_statistics(f, len, 1, &st), 0);
    assert_int_equal(st.message_count, 0);
    free(f);
    f = summary_file(1, 0, &len);
    assert_int_equal(rl_mcap_summary_find(f, len, 1, &start, &end), 1);
    assert_int_equal(rl_mcap_summary_statistics(f, len, 1, &st), 0);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_at_every_byte),
        cmocka_unit_test(test_flipped_bytes_never_crash),
        cmocka_unit_test(test_huge_lengths_are_refused),
        cmocka_unit_test(test_crc_mismatches),
        cmocka_unit_test(test_indexed_crc_option),
        cmocka_unit_test(test_indexed_skips_damaged_chunk),
        cmocka_unit_test(test_chunk_index_time_range_lies),
        cmocka_unit_test(test_trailing_data_and_unknown_records),
        cmocka_unit_test(test_encode_parse_every_record),
        cmocka_unit_test(test_summary_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
