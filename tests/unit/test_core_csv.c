/* Tests of runlab/csv.h: the RFC 4180 reader (dialect, line/column/byte of every error,
 * never reading past the bound), the writer's quoting, reader(writer(x)) == x for random
 * byte strings, and the shortest round-trip formatting of doubles. */
#include "rl_test.h"

#include "runlab/csv.h"
#include "runlab/error.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

/* Rendered rows of the last parse: fields joined by '|', each row ended by '\n'. */
static char rendered[8192];

/* Parses `len` bytes copied into a heap buffer of exactly that size, so ASan and valgrind
 * catch any read past the end (the data is not NUL-terminated). Renders the rows read into
 * `rendered` and returns the last rl_csv_next result (0 when the input was read to its end). */
static int parse_n(const char *s, size_t len, const rl_csv_options *o)
{
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    if (len)
        memcpy(copy, s, len);
    rl_csv_reader *r = NULL;
    assert_int_equal(rl_csv_open_mem(&r, copy, len, "t.csv", o), RL_OK);
    size_t used = 0;
    rendered[0] = '\0';
    rl_csv_row row;
    int rc;
    while ((rc = rl_csv_next(r, &row)) == 1) {
        for (size_t i = 0; i < row.count; i++) {
            const rl_csv_field *f = &row.fields[i];
            assert_int_equal(f->data[f->len], '\0');
            assert_true(used + f->len + 2 < sizeof rendered);
            memcpy(rendered + used, f->data, f->len);
            used += f->len;
            rendered[used++] = i + 1 < row.count ? '|' : '\n';
        }
        rendered[used] = '\0';
    }
    rl_csv_close(r);
    free(copy);
    return rc;
}

static int parse(const char *s, const rl_csv_options *o)
{
    return parse_n(s, strlen(s), o);
}

/* Asserts that `s` fails with `code` and exactly `msg`, after rendering `before`. */
static void expect_error(const char *s, const rl_csv_options *o, int code, const char *before,
                         const char *msg)
{
    int rc = parse(s, o);
    assert_int_equal(rc, code);
    assert_string_equal(rl_error_last(), msg);
    assert_string_equal(rendered, before);
}

static void test_core_csv_simple_rows(void **state)
{
    (void)state;
    assert_int_equal(parse("a,b,c\n1,2,3\n", NULL), 0);
    assert_string_equal(rendered, "a|b|c\n1|2|3\n");

    const char *s = "id,x\n7,8\n";
    rl_csv_reader *r = NULL;
    rl_csv_row row;
    assert_int_equal(rl_csv_open_mem(&r, s, strlen(s), NULL, NULL), RL_OK);
    assert_int_equal(rl_csv_next(r, &row), 1);
    assert_int_equal(row.count, 2);
    assert_int_equal(row.line, 1);
    assert_int_equal(row.byte_offset, 0);
    assert_int_equal(rl_csv_next(r, &row), 1);
    assert_int_equal(row.line, 2);
    assert_int_equal(row.byte_offset, 5);
    assert_string_equal(row.fields[0].data, "7");
    assert_int_equal(rl_csv_next(r, &row), 0);
    assert_int_equal(rl_csv_next(r, &row), 0); /* end stays end */
    rl_csv_close(r);
}

static void test_core_csv_quotes(void **state)
{
    (void)state;
    assert_int_equal(parse("\"a,b\",\"say \"\"hi\"\"\",\"\",\"\"\"\"\n", NULL), 0);
    assert_string_equal(rendered, "a,b|say \"hi\"||\"\n");
    /* Quoted fields at the end of input, with and without a newline. */
    assert_int_equal(parse("x,\"y\"", NULL), 0);
    assert_string_equal(rendered, "x|y\n");
    assert_int_equal(parse("\"\"", NULL), 0);
    assert_string_equal(rendered, "\n");
}

static void test_core_csv_embedded_newlines(void **state)
{
    (void)state;
    const char *s = "h1,h2\n\"x\ny\",1\n\"p\r\nq\",2\nz,\"\n\n\"\nend,3";
    rl_csv_reader *r = NULL;
    rl_csv_row row;
    assert_int_equal(rl_csv_open_mem(&r, s, strlen(s), "t.csv", NULL), RL_OK);
    const uint64_t lines[] = {1, 2, 4, 6, 9};
    const size_t offsets[] = {0, 6, 14, 23, 30};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(rl_csv_next(r, &row), 1);
        assert_int_equal(row.line, lines[i]);
        assert_int_equal(row.byte_offset, offsets[i]);
    }
    assert_int_equal(rl_csv_next(r, &row), 0);
    rl_csv_close(r);
    assert_int_equal(parse(s, NULL), 0);
    assert_string_equal(rendered, "h1|h2\nx\ny|1\np\r\nq|2\nz|\n\n\nend|3\n");

    /* Positions after an embedded newline: line 3 begins at byte 7 with "y". */
    expect_error("a,b\n\"x\ny\"z,1\n", NULL, RL_EPARSE, "a|b\n",
                 "t.csv:3:3: byte 9: 'z' after the closing quote of a field");
}

static void test_core_csv_crlf(void **state)
{
    (void)state;
    assert_int_equal(parse("a,b\r\n1,2\r\n", NULL), 0);
    assert_string_equal(rendered, "a|b\n1|2\n");
    assert_int_equal(parse("a,b\r\n1,2\n3,\"4\"\r\n5,6", NULL), 0);
    assert_string_equal(rendered, "a|b\n1|2\n3|4\n5|6\n");
}

static void test_core_csv_bom(void **state)
{
    (void)state;
    const char *s = "\xEF\xBB\xBF" "a,b\n1,2";
    rl_csv_reader *r = NULL;
    rl_csv_row row;
    assert_int_equal(rl_csv_open_mem(&r, s, strlen(s), "t.csv", NULL), RL_OK);
    assert_int_equal(rl_csv_next(r, &row), 1);
    assert_int_equal(row.fields[0].len, 1);
    assert_string_equal(row.fields[0].data, "a");
    assert_int_equal(row.byte_offset, 3);
    rl_csv_close(r);
    /* Columns on line 1 count from after the BOM; byte offsets include it. */
    expect_error("\xEF\xBB\xBF" "a\"b", NULL, RL_EPARSE, "",
                 "t.csv:1:2: byte 4: quote inside an unquoted field");
    assert_int_equal(parse("\xEF\xBB\xBF", NULL), 0);
    assert_string_equal(rendered, "");
    /* Only a whole BOM at the very start is skipped. */
    assert_int_equal(parse("\xEF\xBB", NULL), 0);
    assert_string_equal(rendered, "\xEF\xBB\n");
    assert_int_equal(parse("x\n\xEF\xBB\xBF", NULL), 0);
    assert_string_equal(rendered, "x\n\xEF\xBB\xBF\n");
}

static void test_core_csv_empty_fields_and_lines(void **state)
{
    (void)state;
    assert_int_equal(parse(",,\n,,\n", NULL), 0);
    assert_string_equal(rendered, "||\n||\n");
    assert_int_equal(parse("a,\n,b", NULL), 0);
    assert_string_equal(rendered, "a|\n|b\n");
    /* A blank line inside the input is a row of one empty field. */
    assert_int_equal(parse("a\n\nb\n", NULL), 0);
    assert_string_equal(rendered, "a\n\nb\n");
    expect_error("a,b\n\n", NULL, RL_EPARSE, "a|b\n",
                 "t.csv:2:1: byte 4: row has 1 field, header has 2");
}

static void test_core_csv_empty_and_header_only(void **state)
{
    (void)state;
    assert_int_equal(parse_n("", 0, NULL), 0);
    assert_string_equal(rendered, "");
    rl_csv_reader *r = NULL;
    rl_csv_row row;
    assert_int_equal(rl_csv_open_mem(&r, NULL, 0, "t.csv", NULL), RL_OK);
    assert_int_equal(rl_csv_next(r, &row), 0);
    rl_csv_close(r);
    assert_int_equal(parse("a,b\n", NULL), 0);
    assert_string_equal(rendered, "a|b\n");
}

static void test_core_csv_trailing_newline(void **state)
{
    (void)state;
    assert_int_equal(parse("a\nb", NULL), 0);
    assert_string_equal(rendered, "a\nb\n");
    assert_int_equal(parse("a\nb\n", NULL), 0);
    assert_string_equal(rendered, "a\nb\n");
    assert_int_equal(parse("a\nb\r\n", NULL), 0);
    assert_string_equal(rendered, "a\nb\n");
    /* Only one final newline is dropped: a second is an empty row. */
    assert_int_equal(parse("a\nb\n\n", NULL), 0);
    assert_string_equal(rendered, "a\nb\n\n");
    assert_int_equal(parse("\n", NULL), 0);
    assert_string_equal(rendered, "\n");
}

static void test_core_csv_error_unterminated_quote(void **state)
{
    (void)state;
    expect_error("a,b\n1,\"xy\nz\n", NULL, RL_EPARSE, "a|b\n",
                 "t.csv:2:3: byte 6: unterminated quoted field (the quote opened here)");
    expect_error("\"", NULL, RL_EPARSE, "",
                 "t.csv:1:1: byte 0: unterminated quoted field (the quote opened here)");
    expect_error("\"a\"\"", NULL, RL_EPARSE, "",
                 "t.csv:1:1: byte 0: unterminated quoted field (the quote opened here)");
}

static void test_core_csv_error_quote_in_unquoted(void **state)
{
    (void)state;
    expect_error("a,b\nxy\"z,1\n", NULL, RL_EPARSE, "a|b\n",
                 "t.csv:2:3: byte 6: quote inside an unquoted field");
    expect_error(" \"a\"", NULL, RL_EPARSE, "",
                 "t.csv:1:2: byte 1: quote inside an unquoted field");
}

static void test_core_csv_error_after_closing_quote(void **state)
{
    (void)state;
    expect_error("a,b\n\"x\"y,1\n", NULL, RL_EPARSE, "a|b\n",
                 "t.csv:2:4: byte 7: 'y' after the closing quote of a field");
    expect_error("\"x\" ,1\n", NULL, RL_EPARSE, "",
                 "t.csv:1:4: byte 3: ' ' after the closing quote of a field");
    expect_error("\"x\"\x01", NULL, RL_EPARSE, "",
                 "t.csv:1:4: byte 3: byte 0x01 after the closing quote of a field");
}

static void test_core_csv_error_lone_cr(void **state)
{
    (void)state;
    expect_error("a,b\r1,2\n", NULL, RL_EPARSE, "",
                 "t.csv:1:4: byte 3: carriage return not followed by line feed (lone CR)");
    expect_error("a,b\n\"1\"\r", NULL, RL_EPARSE, "a|b\n",
                 "t.csv:2:4: byte 7: carriage return not followed by line feed (lone CR)");
    expect_error("x\ra", NULL, RL_EPARSE, "",
                 "t.csv:1:2: byte 1: carriage return not followed by line feed (lone CR)");
    /* Inside quotes a CR is data. */
    assert_int_equal(parse("\"a\rb\"\n", NULL), 0);
    assert_string_equal(rendered, "a\rb\n");
}

static void test_core_csv_error_ragged(void **state)
{
    (void)state;
    expect_error("a,b,c,d\n1,2,3\n", NULL, RL_EPARSE, "a|b|c|d\n",
                 "t.csv:2:1: byte 8: row has 3 fields, header has 4");
    expect_error("a,b\n1,2\n\"x\ny\",2,3\n", NULL, RL_EPARSE, "a|b\n1|2\n",
                 "t.csv:3:1: byte 8: row has 3 fields, header has 2");
    rl_csv_options o;
    rl_csv_options_init(&o);
    o.require_uniform = false;
    assert_int_equal(parse("a,b,c,d\n1,2,3\n4\n", &o), 0);
    assert_string_equal(rendered, "a|b|c|d\n1|2|3\n4\n");
}

static void test_core_csv_error_limits(void **state)
{
    (void)state;
    rl_csv_options o;
    rl_csv_options_init(&o);
    o.max_field_len = 3;
    o.max_fields = 3;
    assert_int_equal(parse("abc,\"a\"\"\",\"xyz\"\n", &o), 0); /* exactly at the limits */
    assert_string_equal(rendered, "abc|a\"|xyz\n");
    expect_error("abc,abcd\n", &o, RL_ERANGE, "",
                 "t.csv:1:5: byte 4: field longer than max_field_len");
    expect_error("a\n\"ab\"\"c\"\n", &o, RL_ERANGE, "a\n",
                 "t.csv:2:1: byte 2: quoted field longer than max_field_len");
    expect_error("a\n\"abc\"\"\"\n", &o, RL_ERANGE, "a\n",
                 "t.csv:2:1: byte 2: quoted field longer than max_field_len");
    expect_error("a,b,c,d\n", &o, RL_ERANGE, "",
                 "t.csv:1:7: byte 6: row has more than 3 fields (max_fields)");
}

static void test_core_csv_error_is_sticky(void **state)
{
    (void)state;
    const char *s = "a\n\"b\nc";
    rl_csv_reader *r = NULL;
    rl_csv_row row;
    assert_int_equal(rl_csv_open_mem(&r, s, strlen(s), "t.csv", NULL), RL_OK);
    assert_int_equal(rl_csv_next(r, &row), 1);
    assert_int_equal(rl_csv_next(r, &row), RL_EPARSE);
    rl_error_clear();
    assert_int_equal(rl_csv_next(r, &row), RL_EPARSE);
    assert_string_equal(rl_error_last(),
                        "t.csv:2:1: byte 2: unterminated quoted field (the quote opened here)");
    rl_csv_close(r);
}

static void test_core_csv_options(void **state)
{
    (void)state;
    rl_csv_options o;
    rl_csv_options_init(&o);
    assert_int_equal(o.delimiter, ',');
    assert_true(o.require_uniform);
    assert_int_equal(o.max_fields, 65536);
    assert_int_equal(o.max_field_len, (size_t)64 << 20);
    o.delimiter = '\t';
    assert_int_equal(parse("a,b\t\"c\td\"\n", &o), 0);
    assert_string_equal(rendered, "a,b|c\td\n");
    o.delimiter = ';';
    assert_int_equal(parse("1,5;2\n", &o), 0);
    assert_string_equal(rendered, "1,5|2\n");
    rl_csv_reader *r = NULL;
    o.delimiter = '"';
    assert_int_equal(rl_csv_open_mem(&r, "", 0, "t", &o), RL_EINVAL);
    assert_null(r);
    o.delimiter = ',';
    o.max_fields = 0;
    assert_int_equal(rl_csv_open_mem(&r, "", 0, "t", &o), RL_EINVAL);
}

/* The word-at-a-time scan must stop at the right byte wherever it falls in a word. */
static void test_core_csv_scan_every_position(void **state)
{
    (void)state;
    const char stops[] = {',', '"', '\r', '\n'};
    char buf[40], want[64];
    for (size_t k = 0; k < sizeof stops; k++) {
        for (size_t at = 0; at < 24; at++) {
            memset(buf, 'x', sizeof buf);
            buf[at] = stops[k];
            size_t n = at + 5;
            int rc = parse_n(buf, n, NULL);
            if (stops[k] == ',' || stops[k] == '\n') {
                assert_int_equal(rc, 0);
                snprintf(want, sizeof want, "%.*s%c%.*s\n", (int)at, buf,
                         stops[k] == ',' ? '|' : '\n', 4, "xxxx");
                assert_string_equal(rendered, want);
            } else if (at == 0 && stops[k] == '"') {
                assert_int_equal(rc, RL_EPARSE); /* unterminated */
            } else {
                assert_int_equal(rc, RL_EPARSE);
                char tail[48];
                snprintf(tail, sizeof tail, ":1:%zu: byte %zu:", at + 1, at);
                assert_non_null(strstr(rl_error_last(), tail));
            }
        }
    }
    /* Bytes with the high bit set next to a delimiter (borrow propagation). */
    assert_int_equal(parse("\x80\xff\x81,\xfe\x01\x7f\x80\xff\xff\xff\xff\xff,\xff", NULL), 0);
    assert_string_equal(rendered, "\x80\xff\x81|\xfe\x01\x7f\x80\xff\xff\xff\xff\xff|\xff\n");
}

/* Every prefix of a document exercising each construct parses without reading past its
 * end (exact-size buffers), and never yields more rows than the whole. */
static void test_core_csv_bounds_every_prefix(void **state)
{
    (void)state;
    const char *doc = "\xEF\xBB\xBFname,value,note\r\n"
                      "alpha,1.5,\"has, comma\"\r\n"
                      "beta,2,\"line\nbreak \"\"q\"\"\"\n"
                      "gamma,,\n"
                      "\"\",\"\",\"\"";
    size_t len = strlen(doc);
    rl_csv_options o;
    rl_csv_options_init(&o);
    o.require_uniform = false;
    for (size_t n = 0; n <= len; n++) {
        int rc = parse_n(doc, n, &o);
        assert_true(rc == 0 || rc == RL_EPARSE);
    }
    assert_int_equal(parse_n(doc, len, NULL), 0);
    assert_string_equal(rendered, "name|value|note\nalpha|1.5|has, comma\n"
                                  "beta|2|line\nbreak \"q\"\ngamma||\n||\n");
}

static void test_core_csv_open_file(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[4200], msg[4400];
    snprintf(path, sizeof path, "%s/runs.csv", dir);
    rl_test_write_file(path, "a,b\n1,\"2\n", 9);
    rl_csv_reader *r = NULL;
    rl_csv_row row;
    assert_int_equal(rl_csv_open_file(&r, path, 1024, NULL), RL_OK);
    assert_int_equal(rl_csv_next(r, &row), 1);
    assert_string_equal(row.fields[1].data, "b");
    assert_int_equal(rl_csv_next(r, &row), RL_EPARSE);
    snprintf(msg, sizeof msg,
             "%s:2:3: byte 6: unterminated quoted field (the quote opened here)", path);
    assert_string_equal(rl_error_last(), msg);
    rl_csv_close(r);
    assert_int_equal(rl_csv_open_file(&r, path, 8, NULL), RL_ERANGE);
    assert_null(r);
    snprintf(path, sizeof path, "%s/missing.csv", dir);
    assert_true(rl_csv_open_file(&r, path, 1024, NULL) < 0);
    assert_null(r);
    rl_test_tmpdir_free(dir);
}

/* Runs `fn` on a writer over a memory stream and returns what it wrote (malloc'd). */
static char *written(int (*fn)(rl_csv_writer *), char delim, bool crlf, size_t *len)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    assert_non_null(f);
    rl_csv_writer *w = NULL;
    assert_int_equal(rl_csv_writer_new(&w, f, delim, crlf), RL_OK);
    assert_int_equal(fn(w), RL_OK);
    rl_csv_writer_free(w);
    fclose(f);
    if (len)
        *len = n;
    return out;
}

static int write_quoting(rl_csv_writer *w)
{
    const char *row[] = {"plain", "a,b", "q\"x", "cr\r", "lf\n", " lead", "trail ", "", "in side"};
    int rc = rl_csv_write_row(w, row, 9);
    rc = rc ? rc : rl_csv_write_field(w, "", 0);
    rc = rc ? rc : rl_csv_end_row(w);
    rc = rc ? rc : rl_csv_write_field(w, "n\0l", 3);
    rc = rc ? rc : rl_csv_write_i64(w, INT64_MIN);
    rc = rc ? rc : rl_csv_write_f64(w, 0.1);
    rc = rc ? rc : rl_csv_write_f64(w, -INFINITY);
    return rc ? rc : rl_csv_end_row(w);
}

static int write_bom_first(rl_csv_writer *w)
{
    int rc = rl_csv_write_str(w, "\xEF\xBB\xBFx");
    rc = rc ? rc : rl_csv_write_str(w, "\xEF\xBB\xBFy");
    rc = rc ? rc : rl_csv_end_row(w);
    rc = rc ? rc : rl_csv_write_str(w, "\xEF\xBB\xBFz");
    return rc ? rc : rl_csv_end_row(w);
}

static int write_semicolon(rl_csv_writer *w)
{
    const char *row[] = {"1,5", "a;b"};
    return rl_csv_write_row(w, row, 2);
}

static void test_core_csv_writer_quoting(void **state)
{
    (void)state;
    size_t n;
    char *s = written(write_quoting, 0, false, &n);
    const char want[] = "plain,\"a,b\",\"q\"\"x\",\"cr\r\",\"lf\n\",\" lead\",\"trail \",,in side\n"
                        "\"\"\n"
                        "n\0l,-9223372036854775808,0.1,-inf\n";
    assert_int_equal(n, sizeof want - 1);
    assert_memory_equal(s, want, n);
    free(s);
    s = written(write_bom_first, ',', true, &n);
    assert_string_equal(s, "\"\xEF\xBB\xBFx\",\xEF\xBB\xBFy\r\n\xEF\xBB\xBFz\r\n");
    free(s);
    s = written(write_semicolon, ';', false, &n);
    assert_string_equal(s, "1,5;\"a;b\"\n");
    free(s);

    rl_csv_writer *w = NULL;
    assert_int_equal(rl_csv_writer_new(&w, stdout, '"', false), RL_EINVAL);
    assert_int_equal(rl_csv_writer_new(&w, stdout, ',', false), RL_OK);
    assert_int_equal(rl_csv_end_row(w), RL_ESTATE);
    rl_csv_writer_free(w);
}

static void test_core_csv_writer_io_error(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "w");
    if (!f) {
        print_message("SKIP: /dev/full cannot be opened here (%s)\n", strerror(errno));
        skip();
    }
    setvbuf(f, NULL, _IONBF, 0);
    rl_csv_writer *w = NULL;
    assert_int_equal(rl_csv_writer_new(&w, f, ',', false), RL_OK);
    assert_int_equal(rl_csv_write_str(w, "x"), RL_OK);
    assert_int_equal(rl_csv_end_row(w), RL_EIO);
    rl_csv_writer_free(w);
    fclose(f);
}

/* xorshift64*: reproducible without depending on the C library's rand. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static void test_core_csv_writer_roundtrip_random(void **state)
{
    (void)state;
    /* Bytes that matter to CSV come up often; any other byte sometimes. */
    const char alphabet[] = {',', '"', '\r', '\n', ' ', 'a', '\0', ';', '\xEF', '\xBB', '\xBF'};
    enum { ROWS = 40, MAXF = 6, MAXLEN = 12 };
    for (int iter = 0; iter < 300; iter++) {
        char fields[ROWS][MAXF][MAXLEN];
        size_t lens[ROWS][MAXF], counts[ROWS];
        char delim = iter % 3 == 0 ? ';' : ',';
        char *out = NULL;
        size_t outlen = 0;
        FILE *f = open_memstream(&out, &outlen);
        assert_non_null(f);
        rl_csv_writer *w = NULL;
        assert_int_equal(rl_csv_writer_new(&w, f, delim, iter % 2), RL_OK);
        size_t rows = rng() % ROWS;
        for (size_t r = 0; r < rows; r++) {
            counts[r] = 1 + rng() % MAXF;
            for (size_t i = 0; i < counts[r]; i++) {
                lens[r][i] = rng() % MAXLEN;
                for (size_t k = 0; k < lens[r][i]; k++) {
                    uint64_t x = rng();
                    fields[r][i][k] = x % 4 ? alphabet[(x >> 8) % sizeof alphabet]
                                            : (char)(x >> 16);
                }
                assert_int_equal(rl_csv_write_field(w, fields[r][i], lens[r][i]), RL_OK);
            }
            assert_int_equal(rl_csv_end_row(w), RL_OK);
        }
        rl_csv_writer_free(w);
        fclose(f);

        rl_csv_options o;
        rl_csv_options_init(&o);
        o.delimiter = delim;
        o.require_uniform = false;
        char *copy = malloc(outlen ? outlen : 1);
        assert_non_null(copy);
        memcpy(copy, out, outlen);
        rl_csv_reader *rd = NULL;
        assert_int_equal(rl_csv_open_mem(&rd, copy, outlen, "rt", &o), RL_OK);
        rl_csv_row row;
        for (size_t r = 0; r < rows; r++) {
            int rc = rl_csv_next(rd, &row);
            if (rc != 1)
                fail_msg("iteration %d row %zu: %s", iter, r, rl_error_last());
            assert_int_equal(row.count, counts[r]);
            for (size_t i = 0; i < counts[r]; i++) {
                assert_int_equal(row.fields[i].len, lens[r][i]);
                assert_memory_equal(row.fields[i].data, fields[r][i], lens[r][i]);
            }
        }
        assert_int_equal(rl_csv_next(rd, &row), 0);
        rl_csv_close(rd);
        free(copy);
        free(out);
    }
}

static void expect_f64(double v, const char *want)
{
    char buf[32];
    size_t n = rl_format_f64(v, buf, sizeof buf);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void check_f64_roundtrip(double v)
{
    char buf[32];
    size_t n = rl_format_f64(v, buf, sizeof buf);
    assert_int_equal(n, strlen(buf));
    if (isnan(v)) {
        assert_string_equal(buf, "nan");
        return;
    }
    double back = strtod(buf, NULL);
    if (memcmp(&back, &v, sizeof v) != 0)
        fail_msg("%a formatted as %s reads back as %a", v, buf, back);
    /* Shortest: one significant digit fewer must not read back. Significant digits run
     * from the first non-zero digit to the last ("100" has one: %.1g gives 1e+02). */
    size_t digits = 0, run = 0;
    bool started = false;
    for (const char *p = buf; *p && *p != 'e'; p++) {
        if (*p < '0' || *p > '9')
            continue;
        started = started || *p != '0';
        if (started) {
            run++;
            if (*p != '0')
                digits = run;
        }
    }
    if (isfinite(v) && v != 0 && digits > 1) {
        char shorter[512];
        snprintf(shorter, sizeof shorter, "%.*g", (int)digits - 1, v);
        double s = strtod(shorter, NULL);
        if (memcmp(&s, &v, sizeof v) == 0)
            fail_msg("%a formatted as %s but %s also reads back", v, buf, shorter);
    }
}

static void test_core_csv_format_f64(void **state)
{
    (void)state;
    expect_f64(0.0, "0");
    expect_f64(-0.0, "-0");
    expect_f64(0.1, "0.1");
    expect_f64(1.0 / 3.0, "0.3333333333333333");
    expect_f64(0.1 + 0.2, "0.30000000000000004");
    expect_f64(1e23, "1e+23");
    expect_f64(NAN, "nan");
    expect_f64(-NAN, "nan");
    expect_f64(INFINITY, "inf");
    expect_f64(-INFINITY, "-inf");
    expect_f64(4.9406564584124654e-324, "5e-324");
    expect_f64(DBL_MAX, "1.7976931348623157e+308");
    char small[4];
    assert_int_equal(rl_format_f64(-INFINITY, small, sizeof small), 4);
    assert_string_equal(small, "-in");

    const double special[] = {0.0, -0.0, DBL_MIN, -DBL_MIN, DBL_MAX, DBL_TRUE_MIN, -DBL_TRUE_MIN,
                              DBL_MIN / 3, 2.2250738585072009e-308, 1e-310, 123456789012345678.0,
                              DBL_EPSILON, 1 + DBL_EPSILON, 9007199254740993.0, INFINITY, -INFINITY,
                              NAN};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        check_f64_roundtrip(special[i]);
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = rng();
        if (i % 4 == 0)
            bits &= 0x800FFFFFFFFFFFFFull; /* subnormals */
        double v;
        memcpy(&v, &bits, sizeof v);
        check_f64_roundtrip(v);
    }
}

/* Doubles through the whole writer and reader, as a results file would carry them. */
static void test_core_csv_f64_through_csv(void **state)
{
    (void)state;
    const double vals[] = {NAN, INFINITY, -INFINITY, -0.0, 5e-324, 0.1, 1e300, -2.5};
    enum { N = sizeof vals / sizeof vals[0] };
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    assert_non_null(f);
    rl_csv_writer *w = NULL;
    assert_int_equal(rl_csv_writer_new(&w, f, ',', true), RL_OK);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(rl_csv_write_f64(w, vals[i]), RL_OK);
    assert_int_equal(rl_csv_end_row(w), RL_OK);
    rl_csv_writer_free(w);
    fclose(f);
    assert_string_equal(out, "nan,inf,-inf,-0,5e-324,0.1,1e+300,-2.5\r\n");
    rl_csv_reader *r = NULL;
    rl_csv_row row;
    assert_int_equal(rl_csv_open_mem(&r, out, outlen, "f", NULL), RL_OK);
    assert_int_equal(rl_csv_next(r, &row), 1);
    assert_int_equal(row.count, N);
    for (size_t i = 0; i < N; i++) {
        double back = strtod(row.fields[i].data, NULL);
        if (isnan(vals[i]))
            assert_true(isnan(back));
        else
            assert_memory_equal(&back, &vals[i], sizeof back);
    }
    rl_csv_close(r);
    free(out);
}

/* Parses `data` whole and as a stream of a 4 KiB window from a file; both must give the
 * same rows, line numbers, offsets and final result (0, or the same error message). */
static void same_as_whole(const char *dir, const char *data, size_t len, bool uniform)
{
    char path[512];
    snprintf(path, sizeof path, "%s/s.csv", dir);
    rl_test_write_file(path, data, len);
    rl_csv_options o;
    rl_csv_options_init(&o);
    o.require_uniform = uniform;
    rl_csv_reader *a = NULL, *b = NULL;
    assert_int_equal(rl_csv_open_mem(&a, data, len, path, &o), RL_OK);
    assert_int_equal(rl_csv_open_stream(&b, path, 4096, &o), RL_OK);
    for (;;) {
        rl_csv_row ra, rb;
        int ga = rl_csv_next(a, &ra);
        char ea[1100];
        snprintf(ea, sizeof ea, "%s", ga < 0 ? rl_error_last() : "");
        int gb = rl_csv_next(b, &rb);
        assert_int_equal(ga, gb);
        if (ga < 0)
            assert_string_equal(ea, rl_error_last());
        if (ga <= 0)
            break;
        assert_int_equal(ra.count, rb.count);
        assert_int_equal(ra.line, rb.line);
        assert_int_equal(ra.byte_offset, rb.byte_offset);
        for (size_t i = 0; i < ra.count; i++) {
            assert_int_equal(ra.fields[i].len, rb.fields[i].len);
            assert_memory_equal(ra.fields[i].data, rb.fields[i].data, ra.fields[i].len);
        }
    }
    rl_csv_close(a);
    rl_csv_close(b);
}

/* rl_csv_open_stream (issue 29 item 6): rows cut by the window's edge at every place (in
 * a quoted field, between CR and LF, at a delimiter), rows longer than the window, and
 * errors late in the file read exactly as from one buffer. */
static void test_core_csv_stream_matches_whole(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    srand(29);
    for (int round = 0; round < 60; round++) {
        size_t cap = 200000, len = 0;
        char *buf = malloc(cap + 60000);
        assert_non_null(buf);
        if (round % 7 == 0)
            len += (size_t)sprintf(buf, "\xEF\xBB\xBF");
        while (len < cap) {
            for (int f = 0; f < 3; f++) {
                int kind = rand() % 10;
                if (kind == 0) { /* quoted, with a newline, a CRLF and a doubled quote */
                    len += (size_t)sprintf(buf + len, "\"a\nb\r\nc\"\"d%d\"", rand() % 1000);
                } else if (kind == 1 && round % 3 == 0) { /* longer than the window */
                    size_t n = 4000 + (size_t)(rand() % 9000);
                    memset(buf + len, 'x', n);
                    len += n;
                } else {
                    len += (size_t)sprintf(buf + len, "%d.%d", rand() % 100000, rand() % 100);
                }
                buf[len++] = f < 2 ? ',' : '\n';
                if (f == 2 && rand() % 4 == 0) {
                    buf[len - 1] = '\r';
                    buf[len++] = '\n';
                }
            }
        }
        if (round % 5 == 1) /* an error past the first window */
            len += (size_t)sprintf(buf + len, "1,2\"x,3\n");
        if (round % 5 == 2)
            len += (size_t)sprintf(buf + len, "1,\"open,3\n4,5,6\n");
        if (round % 5 == 3)
            len += (size_t)sprintf(buf + len, "1,2\n");
        if (round % 5 == 4)
            len -= 1; /* no final newline */
        same_as_whole(dir, buf, len, round % 2 == 0);
        free(buf);
    }
    rl_test_tmpdir_free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_csv_simple_rows),
        cmocka_unit_test(test_core_csv_quotes),
        cmocka_unit_test(test_core_csv_embedded_newlines),
        cmocka_unit_test(test_core_csv_crlf),
        cmocka_unit_test(test_core_csv_bom),
        cmocka_unit_test(test_core_csv_empty_fields_and_lines),
        cmocka_unit_test(test_core_csv_empty_and_header_only),
        cmocka_unit_test(test_core_csv_trailing_newline),
        cmocka_unit_test(test_core_csv_error_unterminated_quote),
        cmocka_unit_test(test_core_csv_error_quote_in_unquoted),
        cmocka_unit_test(test_core_csv_error_after_closing_quote),
        cmocka_unit_test(test_core_csv_error_lone_cr),
        cmocka_unit_test(test_core_csv_error_ragged),
        cmocka_unit_test(test_core_csv_error_limits),
        cmocka_unit_test(test_core_csv_error_is_sticky),
        cmocka_unit_test(test_core_csv_options),
        cmocka_unit_test(test_core_csv_scan_every_position),
        cmocka_unit_test(test_core_csv_bounds_every_prefix),
        cmocka_unit_test(test_core_csv_open_file),
        cmocka_unit_test(test_core_csv_stream_matches_whole),
        cmocka_unit_test(test_core_csv_writer_quoting),
        cmocka_unit_test(test_core_csv_writer_io_error),
        cmocka_unit_test(test_core_csv_writer_roundtrip_random),
        cmocka_unit_test(test_core_csv_format_f64),
        cmocka_unit_test(test_core_csv_f64_through_csv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
