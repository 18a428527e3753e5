/* MCAP doctor: healthy files (every writer option set, every official conformance file
 * when ../shared is present) pass; each injected violation — a bad chunk CRC, a wrong
 * statistics count, a chunk index pointing elsewhere, a wrong message index offset, a
 * truncated file — is found, alone, at the right byte offset. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/mcap.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static rl_mcap_bytes B(const char *s)
{
    rl_mcap_bytes b = {(const uint8_t *)s, strlen(s)};
    return b;
}

/* Writes 600 messages over 3 channels with an attachment and metadata into `path`. */
static void write_file(const char *path, const rl_mcap_writer_options *o)
{
    rl_mcap_writer *w = NULL;
    assert_int_equal(rl_mcap_writer_open_path(&w, path, o), RL_OK);
    rl_mcap_schema s = {1, B("pkg/Msg"), B("ros2msg"), B("int32 x")};
    assert_int_equal(rl_mcap_writer_add_schema(w, &s), RL_OK);
    static const char *const topics[] = {"/a", "/b", "/c"};
    for (uint16_t c = 0; c < 3; c++) {
        rl_mcap_channel ch;
        memset(&ch, 0, sizeof ch);
        ch.id = (uint16_t)(c + 1);
        ch.schema_id = c == 2 ? 0 : 1;
        ch.topic = B(topics[c]);
        ch.message_encoding = B("cdr");
        assert_int_equal(rl_mcap_writer_add_channel(w, &ch), RL_OK);
    }
    uint8_t buf[64];
    for (uint32_t i = 0; i < 600; i++) {
        memset(buf, (int)i, sizeof buf);
        rl_mcap_message m = {(uint16_t)(1 + i % 3), i, 5000 + (uint64_t)(i * 7 % 600) * 10, i,
                             {buf, 16 + i % 48}};
        assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_OK);
        if (i == 300) {
            rl_mcap_attachment a;
            memset(&a, 0, sizeof a);
            a.name = B("a.txt");
            a.media_type = B("text/plain");
            a.data = B("attached");
            assert_int_equal(rl_mcap_writer_add_attachment(w, &a), RL_OK);
            rl_mcap_kv kv = {B("k"), B("v")};
            rl_mcap_metadata md = {B("meta"), {NULL, 0}, &kv, 1};
            assert_int_equal(rl_mcap_writer_add_metadata(w, &md), RL_OK);
        }
    }
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
}

static void expect_clean(const char *path)
{
    rl_mcap_doctor_report r;
    assert_int_equal(rl_mcap_doctor(path, &r), RL_OK);
    if (r.count)
        fail_msg("%s: %zu violations, first: byte %llu: %s", path, r.count,
                 (unsigned long long)r.violations[0].offset, r.violations[0].what);
    rl_mcap_doctor_report_free(&r);
}

static void test_healthy_files(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/f.mcap", dir);
    for (int variant = 0; variant < 6; variant++) {
        rl_mcap_writer_options o;
        rl_mcap_writer_options_default(&o);
        o.chunk_size = 2048;
        if (variant == 1)
            o.compression = RL_MCAP_COMPRESSION_LZ4;
        if (variant == 2)
            o.compression = RL_MCAP_COMPRESSION_NONE;
        if (variant == 3)
            o.use_chunks = 0;
        if (variant == 4) {
            o.message_index = o.chunk_index = o.statistics = o.summary_offsets = 0;
            o.chunk_crc = o.data_section_crc = o.summary_crc = 0;
        }
        if (variant == 5)
            o.repeated_channels = o.repeated_schemas = o.attachment_index = 0;
        write_file(path, &o);
        expect_clean(path);
        rl_mcap_doctor_report r;
        assert_int_equal(rl_mcap_doctor(path, &r), RL_OK);
        assert_int_equal(r.messages, 600);
        rl_mcap_doctor_report_free(&r);
    }
    rl_test_tmpdir_free(dir);
}

static size_t walk_conformance(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        size_t l = strlen(e->d_name);
        if (S_ISDIR(st.st_mode))
            n += walk_conformance(path);
        else if (l > 5 && strcmp(e->d_name + l - 5, ".mcap") == 0) {
            expect_clean(path);
            n++;
        }
    }
    closedir(d);
    return n;
}

static void test_conformance_files_pass(void **state)
{
    (void)state;
    RL_TEST_REQUIRE_SHARED(shared, "mcap doctor on the conformance files");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/mcap-conformance/data", shared);
    struct stat st;
    if (stat(dir, &st) != 0) {
        print_message("SKIP: mcap-conformance/data not present\n");
        skip();
    }
    size_t n = walk_conformance(dir);
    print_message("doctor: %zu conformance files clean\n", n);
    assert_true(n >= 400);
}

/* ---- injected violations ------------------------------------------------------------ */

typedef struct fixture {
    char *dir;
    char path[512];
    uint8_t *data;
    size_t len;
} fixture;

/* A file without data-section and summary CRCs, so that patching one field breaks one
 * invariant only; chunks uncompressed so their bytes can be patched in place. */
static void make_fixture(fixture *f)
{
    f->dir = rl_test_tmpdir();
    snprintf(f->path, sizeof f->path, "%s/f.mcap", f->dir);
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.chunk_size = 2048;
    o.compression = RL_MCAP_COMPRESSION_NONE;
    o.data_section_crc = o.summary_crc = 0;
    write_file(f->path, &o);
    f->data = (uint8_t *)rl_test_read_file(f->path, &f->len);
    expect_clean(f->path);
}

static void free_fixture(fixture *f)
{
    free(f->data);
    rl_test_tmpdir_free(f->dir);
}

/* Offset of the n-th top-level record with `opcode`. */
static uint64_t find_record(const fixture *f, uint8_t opcode, int nth)
{
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    ro.chunks = RL_MCAP_CHUNKS_RAW;
    rl_mcap_reader *r = NULL;
    assert_int_equal(rl_mcap_reader_open_mem(&r, f->data, f->len, &ro), RL_OK);
    rl_mcap_record rec;
    uint64_t at = 0;
    while (rl_mcap_reader_next(r, &rec) == 1)
        if (rec.opcode == opcode && nth-- == 0) {
            at = rec.offset;
            break;
        }
    rl_mcap_reader_close(r);
    assert_true(at > 0);
    return at;
}

/* Doctor on the patched bytes finds exactly one violation, at `offset`, saying `what`. */
static void expect_one(const fixture *f, uint64_t offset, const char *what)
{
    rl_mcap_doctor_report r;
    assert_int_equal(rl_mcap_doctor_mem(f->data, f->len, &r), RL_OK);
    for (size_t i = 0; i < r.count; i++)
        print_message("  violation: byte %llu: %s\n", (unsigned long long)r.violations[i].offset,
                      r.violations[i].what);
    assert_int_equal(r.count, 1);
    assert_int_equal(r.violations[0].offset, offset);
    if (!strstr(r.violations[0].what, what))
        fail_msg("expected '%s' in '%s'", what, r.violations[0].what);
    rl_mcap_doctor_report_free(&r);
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void test_bad_chunk_crc(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f);
    uint64_t c = find_record(&f, RL_MCAP_OP_CHUNK, 3);
    uint64_t blen = 0;
    for (int i = 7; i >= 0; i--)
        blen = blen << 8 | f.data[c + 1 + i];
    f.data[c + RL_MCAP_RECORD_PREFIX + blen - 1] ^= 0xff; /* last payload byte */
    expect_one(&f, c, "CRC");
    free_fixture(&f);
}

static void test_wrong_statistics_count(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f);
    uint64_t s = find_record(&f, RL_MCAP_OP_STATISTICS, 0);
    put64(f.data + s + RL_MCAP_RECORD_PREFIX, 599); /* message_count */
    expect_one(&f, s, "message_count 599");
    free_fixture(&f);
}

static void test_chunk_index_points_elsewhere(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f);
    uint64_t ci = find_record(&f, RL_MCAP_OP_CHUNK_INDEX, 1);
    uint64_t other = find_record(&f, RL_MCAP_OP_MESSAGE_INDEX, 0);
    /* chunk_start_offset follows the two times */
    put64(f.data + ci + RL_MCAP_RECORD_PREFIX + 16, other);
    expect_one(&f, ci, "is not a Chunk record");
    free_fixture(&f);
}

static void test_message_index_offset_wrong(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f);
    uint64_t mi = find_record(&f, RL_MCAP_OP_MESSAGE_INDEX, 4);
    /* channel (2), entries length (4), then (log_time, offset) pairs: bump entry 1's offset */
    uint8_t *off = f.data + mi + RL_MCAP_RECORD_PREFIX + 2 + 4 + 16 + 8;
    off[0] = (uint8_t)(off[0] + 3);
    expect_one(&f, mi, "do not point at a message");
    free_fixture(&f);
}

static void test_truncated_and_garbage(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f);
    rl_mcap_doctor_report r;
    assert_int_equal(rl_mcap_doctor_mem(f.data, f.len / 2, &r), RL_OK);
    assert_true(r.count >= 1);
    int found = 0;
    for (size_t i = 0; i < r.count; i++)
        found |= strstr(r.violations[i].what, "Footer") != NULL;
    assert_true(found);
    rl_mcap_doctor_report_free(&r);
    assert_int_equal(rl_mcap_doctor_mem("not mcap at all", 15, &r), RL_OK);
    assert_true(r.count >= 1);
    assert_int_equal(r.violations[0].offset, 0);
    rl_mcap_doctor_report_free(&r);
    assert_int_equal(rl_mcap_doctor("/nonexistent/x.mcap", &r), RL_ENOENT);
    free_fixture(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_healthy_files),
        cmocka_unit_test(test_conformance_files_pass),
        cmocka_unit_test(test_bad_chunk_crc),
        cmocka_unit_test(test_wrong_statistics_count),
        cmocka_unit_test(test_chunk_index_points_elsewhere),
        cmocka_unit_test(test_message_index_offset_wrong),
        cmocka_unit_test(test_truncated_and_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
