/* runlab/csv.h: a strict, fast RFC 4180 CSV reader and a writer.
 * The reader works over a bounded byte range (never reads past it), accepts quoted
 * fields with embedded delimiters, quotes and newlines, LF or CRLF line ends and a
 * leading UTF-8 BOM, and reports every error with file name, line, column and byte
 * offset. The writer quotes exactly the fields that need it. */
#ifndef RUNLAB_CSV_H
#define RUNLAB_CSV_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "runlab/number.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One field of the current row, decoded (surrounding quotes removed, doubled quotes
 * undone). `data` points into the reader's scratch buffer: each row is copied there once
 * as it is parsed, so every field can be NUL-terminated without writing into the caller's
 * input. Fields may contain NUL bytes; `len` is authoritative. Valid until the next
 * rl_csv_next or rl_csv_close. */
typedef struct rl_csv_field {
    const char *data;
    size_t len;
} rl_csv_field;

typedef struct rl_csv_row {
    const rl_csv_field *fields;
    size_t count;
    uint64_t line;        /* 1-based physical line where the row starts */
    uint64_t byte_offset; /* offset of the row's first byte in the input (BOM included) */
} rl_csv_row;

typedef struct rl_csv_options {
    char delimiter;        /* default ',' */
    bool require_uniform;  /* every row must have as many fields as the first (default true) */
    size_t max_fields;     /* refuse rows with more fields (default 65536) */
    size_t max_field_len;  /* refuse longer fields (default 64 MiB) */
} rl_csv_options;

/* Defaults as documented in rl_csv_options. */
RL_API void rl_csv_options_init(rl_csv_options *opts);

typedef struct rl_csv_reader rl_csv_reader;

/* Reads `len` bytes at `data` (not copied: it must outlive the reader; it need not be
 * NUL-terminated). `name` is used in error messages ("runs.csv"; NULL gives "<memory>").
 * `opts` may be NULL for defaults. Returns RL_OK, RL_ENOMEM, or RL_EINVAL for a delimiter
 * of '"', CR, LF or NUL, or max_fields 0. */
RL_API int rl_csv_open_mem(rl_csv_reader **out, const char *data, size_t len, const char *name,
                    const rl_csv_options *opts);

/* Reads a whole file (at most `max_bytes`, else RL_ERANGE) and parses it; the reader owns
 * the buffer. */
RL_API int rl_csv_open_file(rl_csv_reader **out, const char *path, size_t max_bytes,
                     const rl_csv_options *opts);

/* The longest row rl_csv_open_stream reads (its window grows to hold one row at most). */
#define RL_CSV_STREAM_MAX_ROW ((size_t)64 << 20)

/* Reads the file through a window of `window` bytes (at least 4 KiB) slid over it, so
 * memory stays bounded whatever the file's size: a row longer than the window makes it
 * grow, up to RL_CSV_STREAM_MAX_ROW (then RL_ERANGE naming the line). The file is opened
 * as rl_fs_open_input does (regular files only, never blocking) and read no further than
 * its size at open. Rows, errors and messages are as for a whole buffer (offsets count
 * from the start of the file); a row's fields are valid until the next call. */
RL_API int rl_csv_open_stream(rl_csv_reader **out, const char *path, size_t window,
                       const rl_csv_options *opts);

/* Advances to the next row. Returns 1 with `row` filled, 0 at end of input, or a negative
 * code (RL_EPARSE, RL_ERANGE) with a message "name:line:column: byte N: what" (column and
 * N count bytes from 1 and 0; column 1 of line 1 is the byte after a BOM). After an
 * error the reader stays at the failing row: further calls return the same error
 * (RL_ENOMEM excepted: it is not sticky). Line ends are LF or CRLF; a CR not followed by
 * LF outside quotes is an error. An empty last line (final newline) is not a row; any
 * other empty line is a row of one empty field. */
RL_API int rl_csv_next(rl_csv_reader *r, rl_csv_row *row);

RL_API void rl_csv_close(rl_csv_reader *r);

/* Writer. Output goes to a FILE* the caller owns (the writer never closes it). */
typedef struct rl_csv_writer rl_csv_writer;

/* `delimiter` 0 means ','. `crlf` selects "\r\n" line ends (RFC 4180) instead of "\n". */
RL_API int rl_csv_writer_new(rl_csv_writer **out, FILE *file, char delimiter, bool crlf);

/* Appends one field to the current row, quoting it when it contains the delimiter, a quote,
 * CR or LF, or leading/trailing spaces (and a first field of the file starting with a UTF-8
 * BOM, which a reader would drop). The row is built in memory and written by
 * rl_csv_end_row with one fwrite. Errors: RL_ENOMEM, RL_EINVAL. */
RL_API int rl_csv_write_field(rl_csv_writer *w, const char *data, size_t len);
RL_API int rl_csv_write_str(rl_csv_writer *w, const char *s);
/* Numbers: integers exactly; doubles in the shortest form that reads back identically;
 * NaN as "nan", infinities as "inf" / "-inf". */
RL_API int rl_csv_write_i64(rl_csv_writer *w, int64_t v);
RL_API int rl_csv_write_f64(rl_csv_writer *w, double v);
/* Ends the current row and writes it: RL_EIO when the FILE refuses it, RL_ESTATE for a
 * row without fields (CSV cannot express one). A row of a single empty field is written
 * as "" so it does not look like a blank line. */
RL_API int rl_csv_end_row(rl_csv_writer *w);
/* Writes a whole row of `n` NUL-terminated strings. */
RL_API int rl_csv_write_row(rl_csv_writer *w, const char *const *fields, size_t n);
/* Frees the writer; a row not ended with rl_csv_end_row is discarded. */
RL_API void rl_csv_writer_free(rl_csv_writer *w);

/* rl_format_f64, the number form the writer uses, is declared in runlab/number.h. */

#ifdef __cplusplus
}
#endif
#endif
