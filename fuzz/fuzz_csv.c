/* libFuzzer target for the CSV reader and writer: reads every row of the input under two
 * dialects (strict defaults; ';' with small limits and ragged rows allowed), checks the
 * reader's invariants, then writes the rows read back out and requires the re-read to give
 * exactly the same fields. The input repeated past 12 KiB is also read as a file through
 * rl_csv_open_stream's 4 KiB window, which must give the same rows, offsets and error. */
#include "runlab/csv.h"
#include "runlab/error.h"
#include "runlab/fs.h"

#include <limits.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant is a finding: report it and stop so libFuzzer saves the input. */
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__,       \
                    __LINE__, #cond, rl_error_last());                                   \
            abort();                                                                     \
        }                                                                                \
    } while (0)

/* Rows flattened as: field count, then per field its length and bytes. */
typedef struct flat {
    char *buf;
    size_t used, cap;
} flat;

static void put(flat *f, const void *src, size_t n)
{
    if (f->cap - f->used < n) {
        size_t cap = f->cap ? f->cap : 256;
        while (cap - f->used < n)
            cap *= 2;
        f->buf = realloc(f->buf, cap);
        CHECK(f->buf != NULL);
        f->cap = cap;
    }
    memcpy(f->buf + f->used, src, n);
    f->used += n;
}

static void put_row(flat *f, const rl_csv_row *row)
{
    put(f, &row->count, sizeof row->count);
    for (size_t i = 0; i < row->count; i++) {
        put(f, &row->fields[i].len, sizeof row->fields[i].len);
        put(f, row->fields[i].data, row->fields[i].len);
    }
}

/* Reads all rows of `data`, flattening them into `out`; returns the number of rows. The
 * input ends at the first error, whose invariants are checked. */
static size_t read_all(const char *data, size_t size, const rl_csv_options *o, flat *out,
                       int *final_rc)
{
    rl_csv_reader *r = NULL;
    CHECK(rl_csv_open_mem(&r, data, size, "fuzz.csv", o) == RL_OK);
    rl_csv_row row;
    size_t rows = 0;
    uint64_t last_line = 0;
    int rc;
    while ((rc = rl_csv_next(r, &row)) == 1) {
        CHECK(row.count >= 1 && row.count <= o->max_fields);
        CHECK(row.line > last_line);
        CHECK(row.byte_offset < size);
        last_line = row.line;
        for (size_t i = 0; i < row.count; i++) {
            CHECK(row.fields[i].len <= o->max_field_len);
            CHECK(row.fields[i].data[row.fields[i].len] == '\0');
        }
        put_row(out, &row);
        rows++;
    }
    if (rc < 0) {
        CHECK(rc == RL_EPARSE || rc == RL_ERANGE);
        CHECK(strncmp(rl_error_last(), "fuzz.csv:", 9) == 0);
        CHECK(strstr(rl_error_last(), ": byte ") != NULL);
        char first[1024];
        snprintf(first, sizeof first, "%s", rl_error_last());
        CHECK(rl_csv_next(r, &row) == rc); /* sticky */
        CHECK(strcmp(first, rl_error_last()) == 0);
    } else {
        CHECK(rc == 0);
        CHECK(rl_csv_next(r, &row) == 0);
    }
    rl_csv_close(r);
    *final_rc = rc;
    return rows;
}

/* Writes the flattened rows with the writer, then re-reads them. */
static void roundtrip(const flat *rows, size_t nrows, const rl_csv_options *o, bool crlf)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    CHECK(f != NULL);
    rl_csv_writer *w = NULL;
    CHECK(rl_csv_writer_new(&w, f, o->delimiter, crlf) == RL_OK);
    const char *p = rows->buf;
    for (size_t r = 0; r < nrows; r++) {
        size_t count;
        memcpy(&count, p, sizeof count);
        p += sizeof count;
        for (size_t i = 0; i < count; i++) {
            size_t len;
            memcpy(&len, p, sizeof len);
            p += sizeof len;
            CHECK(rl_csv_write_field(w, p, len) == RL_OK);
            p += len;
        }
        CHECK(rl_csv_end_row(w) == RL_OK);
    }
    rl_csv_writer_free(w);
    CHECK(fclose(f) == 0);

    /* An exact-size copy, so a read past the end is caught. */
    char *copy = malloc(tlen ? tlen : 1);
    CHECK(copy != NULL);
    memcpy(copy, text, tlen);
    flat again = {0};
    int rc;
    size_t n = read_all(copy, tlen, o, &again, &rc);
    if (rc != 0 || n != nrows)
        fprintf(stderr, "re-read of %zu written bytes: %s\n", tlen, rl_error_last());
    CHECK(rc == 0);
    CHECK(n == nrows);
    CHECK(again.used == rows->used);
    CHECK(again.used == 0 || memcmp(again.buf, rows->buf, again.used) == 0);
    free(again.buf);
    free(copy);
    free(text);
}

static void run(const char *data, size_t size, const rl_csv_options *o, bool crlf)
{
    flat rows = {0};
    int rc;
    size_t n = read_all(data, size, o, &rows, &rc);
    roundtrip(&rows, n, o, crlf);
    free(rows.buf);
}

/* Rows, line numbers and byte offsets of every row, then the final code and message. */
static void read_flat(rl_csv_reader *r, flat *out)
{
    rl_csv_row row;
    int rc;
    while ((rc = rl_csv_next(r, &row)) == 1) {
        put(out, &row.line, sizeof row.line);
        put(out, &row.byte_offset, sizeof row.byte_offset);
        put_row(out, &row);
    }
    put(out, &rc, sizeof rc);
    if (rc < 0)
        put(out, rl_error_last(), strlen(rl_error_last()));
    rl_csv_close(r);
}

static void stream_same_as_whole(const char *data, size_t size, const rl_csv_options *o)
{
    static char dir[PATH_MAX];
    if (!dir[0])
        CHECK(rl_fs_mkdtemp("runlab-fuzz-csv-", dir, sizeof dir) == RL_OK);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/in.csv", dir);
    size_t reps = size ? 12288 / size + 1 : 1, len = size * reps;
    char *big = malloc(len ? len : 1);
    CHECK(big != NULL);
    for (size_t i = 0; i < reps; i++)
        memcpy(big + i * size, data, size);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(len == 0 || fwrite(big, 1, len, f) == len);
    CHECK(fclose(f) == 0);
    flat whole = {0}, streamed = {0};
    rl_csv_reader *r = NULL;
    CHECK(rl_csv_open_mem(&r, big, len, path, o) == RL_OK);
    read_flat(r, &whole);
    CHECK(rl_csv_open_stream(&r, path, 4096, o) == RL_OK);
    read_flat(r, &streamed);
    CHECK(whole.used == streamed.used);
    CHECK(memcmp(whole.buf, streamed.buf, whole.used) == 0);
    free(whole.buf);
    free(streamed.buf);
    free(big);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rl_csv_options o;
    rl_csv_options_init(&o);
    run((const char *)data, size, &o, false);
    stream_same_as_whole((const char *)data, size, &o);

    o.delimiter = ';';
    o.require_uniform = false;
    o.max_fields = 8;
    o.max_field_len = 16;
    run((const char *)data, size, &o, true);
    return 0;
}
