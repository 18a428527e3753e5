/* MCAP recovery: a real recording (4 channels, each compression, several chunks, > 100 KB)
 * cut at every 4 KiB boundary keeps every message of every complete chunk; a writer
 * killed with SIGKILL after flushes keeps everything flushed; corrupted bytes lose only
 * the chunk they hit, reported with its byte range; complete files come back whole. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/mcap.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { NCHAN = 4, NMSG = 1500 };

static rl_mcap_bytes B(const char *s)
{
    rl_mcap_bytes b = {(const uint8_t *)s, strlen(s)};
    return b;
}

/* Payload of message `seq`: pseudo-random so compressed chunks stay large. */
static size_t payload(uint32_t seq, uint8_t *buf)
{
    uint32_t s = seq * 2654435761u + 1;
    size_t n = 40 + seq % 160;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        buf[i] = (uint8_t)(s >> 24);
    }
    return n;
}

static void add_defs(rl_mcap_writer *w)
{
    rl_mcap_schema s = {1, B("pkg/Sample"), B("ros2msg"), B("uint8[] data")};
    assert_int_equal(rl_mcap_writer_add_schema(w, &s), RL_OK);
    static const char *const topics[NCHAN] = {"/imu", "/camera", "/odom", "/log"};
    for (uint16_t c = 0; c < NCHAN; c++) {
        rl_mcap_channel ch;
        memset(&ch, 0, sizeof ch);
        ch.id = (uint16_t)(c + 1);
        ch.schema_id = c == 3 ? 0 : 1;
        ch.topic = B(topics[c]);
        ch.message_encoding = B("cdr");
        assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_OK);
    }
}

static int add_msg(rl_mcap_writer *w, uint32_t seq)
{
    uint8_t buf[256];
    rl_mcap_message m;
    memset(&m, 0, sizeof m);
    m.channel_id = (uint16_t)(1 + seq % NCHAN);
    m.sequence = seq;
    m.log_time = 1000000000ull + (uint64_t)seq * 1000;
    m.publish_time = m.log_time + 1;
    m.data.data = buf;
    m.data.len = payload(seq, buf);
    return rl_mcap_writer_add_message(w, &m);
}

static void write_recording(const char *path, rl_mcap_compression c)
{
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.compression = c;
    o.chunk_size = 12 * 1024;
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_path(&w, path, &o), RL_OK);
    add_defs(w);
    rl_mcap_kv kv = {B("robot"), B("r1")};
    rl_mcap_metadata md = {B("run"), {NULL, 0}, &kv, 1};
    assert_int_equal(rl_mcap_writer_add_metadata(w, &md), RL_OK);
    for (uint32_t seq = 0; seq < NMSG; seq++) {
        assert_int_equal(add_msg(w, seq), RL_OK);
        if (seq == NMSG / 2) {
            rl_mcap_attachment a;
            memset(&a, 0, sizeof a);
            a.name = B("calib.yaml");
            a.media_type = B("text/yaml");
            a.data = B("fx: 500\nfy: 500\n");
            assert_int_equal(rl_mcap_writer_add_attachment(w, &a), RL_OK);
        }
    }
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
}

/* For each message of the original: the byte offset at which its chunk ends. */
static void chunk_ends(const uint8_t *data, size_t len, uint64_t *end_of_seq)
{
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    ro.chunks = RL_MCAP_CHUNKS_BOTH;
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open_mem(&r, data, len, &ro), RL_OK);
    rl_mcap_record rec;
    uint64_t cur_end = 0;
    int rc;
    size_t n = 0;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
        if (rec.opcode == RL_MCAP_OP_CHUNK)
            cur_end = rec.offset + RL_MCAP_RECORD_PREFIX + rec.body.len;
        else if (rec.opcode == RL_MCAP_OP_MESSAGE) {
            assert_true(rec.u.message.sequence < NMSG);
            end_of_seq[rec.u.message.sequence] = cur_end;
            n++;
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, NMSG);
    rl_mcap_reader_close(r);
}

/* Reads a recovered file: complete, doctor-clean, every message intact. Marks seqs seen;
 * returns the message count. */
static size_t check_output(const char *path, uint8_t *seen)
{
    rl_mcap_doctor_report dr;
    assert_int_equal(rl_mcap_doctor(path, &dr), RL_OK);
    if (dr.count)
        fail_msg("recovered file has %zu violations, first: byte %llu: %s", dr.count,
                 (unsigned long long)dr.violations[0].offset, dr.violations[0].what);
    rl_mcap_doctor_report_free(&dr);
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open(&r, path, NULL), RL_OK);
    rl_mcap_record rec;
    int rc;
    size_t n = 0;
    uint8_t buf[256];
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
        if (rec.opcode != RL_MCAP_OP_MESSAGE)
            continue;
        uint32_t seq = rec.u.message.sequence;
        assert_true(seq < NMSG);
        size_t want = payload(seq, buf);
        assert_int_equal(rec.u.message.data.len, want);
        assert_memory_equal(rec.u.message.data.data, buf, want);
        assert_int_equal(rec.u.message.channel_id, 1 + seq % NCHAN);
        assert_false(seen[seq]);
        seen[seq] = 1;
        n++;
    }
    if (rc != 0)
        fail_msg("recovered file unreadable: %s", rl_error_last());
    rl_mcap_reader_close(r);
    return n;
}

static void cut_everywhere(rl_mcap_compression c)
{
    char *dir = rl_test_tmpdir();
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/rec.mcap", dir);
    snprintf(out, sizeof out, "%s/out.mcap", dir);
    write_recording(in, c);
    size_t len = 0;
    uint8_t *data = (uint8_t *)rl_test_read_file(in, &len);
    assert_true(len > 100 * 1024);
    uint64_t *end_of_seq = calloc(NMSG, sizeof *end_of_seq);
    uint8_t *seen = calloc(NMSG, 1);
    assert_non_null(end_of_seq);
    assert_non_null(seen);
    chunk_ends(data, len, end_of_seq);
    size_t cuts = 0;
    for (size_t cut = 4096; cut < len + 4096; cut += 4096) {
        size_t n = cut < len ? cut : len; /* the last pass is the whole file */
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        rl_mcap_recover_report rep;
        int rc = rl_mcap_recover_mem(data, n, fd, NULL, &rep);
        close(fd);
        if (rc != RL_OK)
            fail_msg("cut at %zu: %s", n, rl_error_last());
        assert_int_equal(rep.input_complete, n == len);
        assert_int_equal(rep.input_size, n);
        if (n < len)
            assert_true(rep.lost_count >= 1 || rep.bytes_lost == 0);
        memset(seen, 0, NMSG);
        size_t got = check_output(out, seen);
        assert_int_equal(got, rep.messages_kept);
        size_t need = 0;
        for (uint32_t s = 0; s < NMSG; s++) {
            if (end_of_seq[s] <= n) {
                need++;
                if (!seen[s])
                    fail_msg("cut at %zu: message %u of a complete chunk (ends %llu) lost", n, s,
                             (unsigned long long)end_of_seq[s]);
            }
        }
        assert_true(got >= need);
        if (n == len) {
            assert_int_equal(got, NMSG);
            assert_int_equal(rep.attachments_kept, 1);
            assert_int_equal(rep.lost_count, 0);
        }
        assert_int_equal(rep.metadata_kept, 1);
        rl_mcap_recover_report_free(&rep);
        cuts++;
    }
    assert_true(cuts > 25);
    free(seen);
    free(end_of_seq);
    free(data);
    rl_test_tmpdir_free(dir);
}

static void test_cut_every_4k_zstd(void **state)
{
    (void)state;
    cut_everywhere(RL_MCAP_COMPRESSION_ZSTD);
}

static void test_cut_every_4k_lz4(void **state)
{
    (void)state;
    cut_everywhere(RL_MCAP_COMPRESSION_LZ4);
}

static void test_cut_every_4k_none(void **state)
{
    (void)state;
    cut_everywhere(RL_MCAP_COMPRESSION_NONE);
}

/* A recorder that flushes now and then and is killed with SIGKILL mid-chunk. */
static void test_writer_killed(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/killed.mcap", dir);
    snprintf(out, sizeof out, "%s/out.mcap", dir);
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pfd[0]);
        rl_mcap_writer_options o;
        rl_mcap_writer_options_default(&o);
        o.chunk_size = 8 * 1024;
        rl_mcap_writer *w = NULL;
        if (rl_mcap_writer_open_path(&w, in, &o) != RL_OK)
            _exit(3);
        add_defs(w);
        for (uint32_t seq = 0; seq < NMSG; seq++) {
            if (add_msg(w, seq) != RL_OK)
                _exit(4);
            if (seq % 100 == 99) {
                if (rl_mcap_writer_flush(w) != RL_OK)
                    _exit(5);
                uint32_t done = seq + 1;
                if (write(pfd[1], &done, sizeof done) != (ssize_t)sizeof done)
                    _exit(6);
            }
        }
        for (;;) /* keep the last chunk open until killed */
            pause();
    }
    close(pfd[1]);
    uint32_t flushed = 0, v;
    for (int i = 0; i < 7 && read(pfd[0], &v, sizeof v) == (ssize_t)sizeof v; i++)
        flushed = v;
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    close(pfd[0]);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(flushed, 700);

    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    rl_mcap_recover_report rep;
    assert_int_equal(rl_mcap_recover_fd(in, fd, NULL, &rep), RL_OK);
    close(fd);
    assert_int_equal(rep.input_complete, 0);
    uint8_t *seen = calloc(NMSG, 1);
    size_t got = check_output(out, seen);
    assert_true(got >= flushed);
    for (uint32_t s = 0; s < flushed; s++)
        assert_true(seen[s]);
    assert_int_equal(rep.channels_kept, NCHAN);
    assert_int_equal(rep.schemas_kept, 1);
    free(seen);
    rl_mcap_recover_report_free(&rep);
    rl_test_tmpdir_free(dir);
}

/* Flipped bytes inside one chunk lose that chunk only; a smashed length field is skipped
 * by resynchronising on the next record. */
static void test_damage_in_the_middle(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/rec.mcap", dir);
    snprintf(out, sizeof out, "%s/out.mcap", dir);
    write_recording(in, RL_MCAP_COMPRESSION_ZSTD);
    size_t len = 0;
    uint8_t *data = (uint8_t *)rl_test_read_file(in, &len);
    rl_mcap_indexed *x = NULL;
    assert_int_equal(rl_mcap_indexed_open_mem(&x, data, len, 0), RL_OK);
    const rl_mcap_chunk_index *ci = NULL;
    size_t nci = rl_mcap_indexed_chunk_indexes(x, &ci);
    assert_true(nci > 6);
    uint64_t c2 = ci[2].chunk_start_offset, c2len = ci[2].chunk_length;
    uint64_t c5 = ci[5].chunk_start_offset;
    rl_mcap_indexed_close(x);
    data[c2 + c2len - 10] ^= 0x5a;    /* inside chunk 2's compressed records */
    data[c5 + 1 + 6] = 0x7f;          /* chunk 5's length becomes absurd */
    for (int pass = 0; pass < 2; pass++) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        rl_mcap_recover_report rep;
        if (pass == 0)
            assert_int_equal(rl_mcap_recover_mem(data, len, fd, NULL, &rep), RL_OK);
        else
            assert_int_equal(rl_mcap_recover_fd(in, fd, NULL, &rep), RL_OK);
        close(fd);
        assert_int_equal(rep.input_complete, 0);
        assert_int_equal(rep.chunks_lost, 2);
        assert_true(rep.lost_count >= 2);
        assert_int_equal(rep.lost[0].offset, c2);
        assert_int_equal(rep.lost[0].length, c2len);
        assert_non_null(strstr(rep.lost[0].what, "Chunk"));
        assert_int_equal(rep.lost[1].offset, c5);
        assert_true(rep.messages_lost > 0); /* from chunk 2's message indexes */
        uint8_t *seen = calloc(NMSG, 1);
        size_t got = check_output(out, seen);
        assert_int_equal(got, rep.messages_kept);
        assert_true(got + rep.messages_lost <= NMSG);
        assert_true(got > NMSG / 2);
        assert_int_equal(rep.attachments_kept, 1);
        free(seen);
        rl_mcap_recover_report_free(&rep);
        if (pass == 0) /* again with the same file through the path API */
            rl_test_write_file(in, data, len);
    }
    /* Not MCAP at all is an error, not a recovery. */
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_int_equal(rl_mcap_recover_mem("hello, world", 12, fd, NULL, NULL), RL_EPARSE);
    /* A file cut inside the magic becomes an empty, valid file. */
    assert_int_equal(rl_mcap_recover_mem(data, 5, fd, NULL, NULL), RL_OK);
    close(fd);
    uint8_t *seen = calloc(NMSG, 1);
    assert_int_equal(check_output(out, seen), 0);
    free(seen);
    free(data);
    rl_test_tmpdir_free(dir);
}

/* A stretch of the data section written twice (here: the Message records of sequences 5
 * to 9 of an unchunked file, repeated right after themselves) holds each message twice:
 * recovery keeps each once, counts the copies, lists where the copying starts, and its
 * output passes the doctor (kept twice, the copies could fill output chunks that are
 * exact copies of each other; fuzz_mcap found such files). */
static void test_copied_stretch_kept_once(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/flat.mcap", dir);
    snprintf(out, sizeof out, "%s/out.mcap", dir);
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.use_chunks = 0;
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_path(&w, in, &o), RL_OK);
    add_defs(w);
    for (uint32_t seq = 0; seq < 20; seq++)
        assert_int_equal(add_msg(w, seq), RL_OK);
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
    size_t len = 0;
    uint8_t *data = (uint8_t *)rl_test_read_file(in, &len);
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open_mem(&r, data, len, NULL), RL_OK);
    rl_mcap_record rec;
    uint64_t from = 0, to = 0;
    while (rl_mcap_reader_next(r, &rec) == 1)
        if (rec.opcode == RL_MCAP_OP_MESSAGE && rec.u.message.sequence == 5)
            from = rec.offset;
        else if (rec.opcode == RL_MCAP_OP_MESSAGE && rec.u.message.sequence == 10)
            to = rec.offset;
    rl_mcap_reader_close(r);
    assert_true(from > 0 && to > from);
    size_t copied_len = len + (size_t)(to - from);
    uint8_t *copied = malloc(copied_len);
    assert_non_null(copied);
    memcpy(copied, data, (size_t)to);
    memcpy(copied + to, data + from, (size_t)(to - from));
    memcpy(copied + to + (to - from), data + to, len - (size_t)to);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    rl_mcap_recover_report rep;
    assert_int_equal(rl_mcap_recover_mem(copied, copied_len, fd, NULL, &rep), RL_OK);
    close(fd);
    assert_int_equal(rep.messages_kept, 20);
    assert_int_equal(rep.messages_duplicate, 5);
    assert_int_equal(rep.chunks_duplicate, 0);
    size_t copy_notes = 0;
    for (size_t i = 0; i < rep.notice_count; i++)
        if (strstr(rep.notices[i].what, "a copy, byte for byte")) {
            copy_notes++;
            assert_int_equal(rep.notices[i].offset, to);
            assert_non_null(strstr(rep.notices[i].what, "sequence 5"));
        }
    assert_int_equal(copy_notes, 1);
    uint8_t *seen = calloc(NMSG, 1);
    assert_int_equal(check_output(out, seen), 20); /* doctor-clean, each message once */
    free(seen);
    rl_mcap_recover_report_free(&rep);
    free(copied);
    free(data);
    rl_test_tmpdir_free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_every_4k_zstd),
        cmocka_unit_test(test_cut_every_4k_lz4),
        cmocka_unit_test(test_cut_every_4k_none),
        cmocka_unit_test(test_writer_killed),
        cmocka_unit_test(test_damage_in_the_middle),
        cmocka_unit_test(test_copied_stretch_kept_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
