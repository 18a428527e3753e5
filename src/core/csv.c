/* The RFC 4180 CSV reader and writer behind runlab/csv.h.
 * The reader walks a bounded byte range once, copying each row's decoded fields into one
 * scratch buffer so they can be NUL-terminated without writing into the caller's input;
 * a streamed file is that range as a window slid over the file (rl_csv_open_stream).
 * The writer builds each row in memory and hands it to stdio with one fwrite. */
#include "runlab/csv.h"

#include "runlab/error.h"
#include "runlab/fs.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    DEFAULT_MAX_FIELDS = 65536,
    ERR_CAP = 1024, /* as large as the thread-local slot in error.c */
    MIN_SCRATCH = 256,
};
#define DEFAULT_MAX_FIELD_LEN ((size_t)64 << 20)

void rl_csv_options_init(rl_csv_options *opts)
{
    opts->delimiter = ',';
    opts->require_uniform = true;
    opts->max_fields = DEFAULT_MAX_FIELDS;
    opts->max_field_len = DEFAULT_MAX_FIELD_LEN;
}

/* ------------------------------------------------------------------------------------ */
/* Reader                                                                               */
/* ------------------------------------------------------------------------------------ */

struct rl_csv_reader {
    const char *data;
    size_t len;
    size_t pos;        /* next byte to read */
    uint64_t line;     /* 1-based line of `pos` */
    size_t line_start; /* offset of the first byte of that line (after the BOM on line 1) */
    rl_csv_options opts;
    size_t expected;   /* field count of the first row; 0 before it */
    unsigned char special[256]; /* bytes that end an unquoted field */
    char *name;
    char *owned;       /* the file buffer of rl_csv_open_file, the window of a stream */

    /* A stream (rl_csv_open_stream): `data` is `owned`, holding the file's bytes from
     * offset `base` on, `len` of them; `fd` is -1 for a whole buffer. */
    int fd;
    uint64_t base;
    uint64_t file_left; /* bytes of the size at open not read yet */
    size_t window_cap, window_max;

    /* The current row: decoded bytes with a NUL after each field. Fields are recorded as
     * offsets while the row is built, because growing the scratch moves it. */
    char *scratch;
    size_t scratch_cap;
    size_t *offs;
    rl_csv_field *fields;
    size_t fields_cap;

    int err_code; /* sticky: once a row fails, every later call repeats the error */
    char err_msg[ERR_CAP];
};

/* Records the error at input offset `at` (on line `line` starting at `lstart`). */
static int fail_at(rl_csv_reader *r, int code, size_t at, uint64_t line, size_t lstart,
                   const char *what)
{
    snprintf(r->err_msg, sizeof r->err_msg, "%s:%" PRIu64 ":%zu: byte %" PRIu64 ": %s",
             r->name, line, at - lstart + 1, r->base + at, what);
    r->err_code = code;
    return rl_error_set(code, "%s", r->err_msg);
}

static int fail_here(rl_csv_reader *r, int code, size_t at, const char *what)
{
    return fail_at(r, code, at, r->line, r->line_start, what);
}

/* Describes byte `c` for a message: 'x' when printable, else its hex value. */
static void describe_byte(unsigned char c, char *out, size_t cap)
{
    if (c >= 0x20 && c < 0x7f && c != '\'')
        snprintf(out, cap, "'%c'", c);
    else
        snprintf(out, cap, "byte 0x%02x", c);
}

int rl_csv_open_mem(rl_csv_reader **out, const char *data, size_t len, const char *name,
                    const rl_csv_options *opts)
{
    *out = NULL;
    rl_csv_options o;
    if (opts)
        o = *opts;
    else
        rl_csv_options_init(&o);
    if (!data && len > 0)
        return rl_error_set(RL_EINVAL, "csv: NULL data with length %zu", len);
    if (o.delimiter == '"' || o.delimiter == '\r' || o.delimiter == '\n' || o.delimiter == '\0')
        return rl_error_set(RL_EINVAL, "csv: delimiter byte 0x%02x is not allowed",
                            (unsigned char)o.delimiter);
    if (o.max_fields == 0)
        return rl_error_set(RL_EINVAL, "csv: max_fields must be at least 1");
    rl_csv_reader *r = calloc(1, sizeof *r);
    if (!r)
        return rl_error_set(RL_ENOMEM, "csv: out of memory");
    r->name = strdup(name ? name : "<memory>");
    if (!r->name) {
        free(r);
        return rl_error_set(RL_ENOMEM, "csv: out of memory");
    }
    r->data = data ? data : "";
    r->len = len;
    r->fd = -1;
    r->opts = o;
    r->line = 1;
    r->special[(unsigned char)o.delimiter] = r->special['"'] = 1;
    r->special['\r'] = r->special['\n'] = 1;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        r->pos = r->line_start = 3;
    *out = r;
    return RL_OK;
}

int rl_csv_open_file(rl_csv_reader **out, const char *path, size_t max_bytes,
                     const rl_csv_options *opts)
{
    *out = NULL;
    char *buf = NULL;
    size_t n = 0;
    int rc = rl_fs_read_all(path, max_bytes, &buf, &n);
    if (rc != RL_OK)
        return rc;
    rc = rl_csv_open_mem(out, buf, n, path, opts);
    if (rc != RL_OK) {
        free(buf);
        return rc;
    }
    (*out)->owned = buf;
    return RL_OK;
}

/* Moves the unread bytes from `keep` on to the window's front and reads more of the file
 * behind them, doubling the window first when `grow` (a row did not fit; the caller has
 * checked window_max). RL_OK, RL_ENOMEM or RL_EIO. */
static int stream_fill(rl_csv_reader *r, size_t keep, bool grow)
{
    size_t have = r->len - keep;
    if (keep > 0)
        memmove(r->owned, r->owned + keep, have);
    r->base += keep;
    r->pos -= keep;
    r->line_start -= keep;
    r->len = have;
    if (grow) {
        size_t cap = r->window_cap * 2 < r->window_max ? r->window_cap * 2 : r->window_max;
        char *p = realloc(r->owned, cap);
        if (!p)
            return rl_error_set(RL_ENOMEM, "%s: out of memory for a %zu-byte window", r->name,
                                cap);
        r->owned = p;
        r->window_cap = cap;
    }
    while (r->len < r->window_cap && r->file_left > 0) {
        size_t want = r->window_cap - r->len;
        if (want > r->file_left)
            want = (size_t)r->file_left;
        ssize_t n = read(r->fd, r->owned + r->len, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rl_error_set_errno(RL_EIO, errno, "%s: read", r->name);
        if (n == 0) {
            r->file_left = 0; /* it shrank: what is there is the file */
            break;
        }
        r->len += (size_t)n;
        r->file_left -= (uint64_t)n;
    }
    r->data = r->owned;
    return RL_OK;
}

int rl_csv_open_stream(rl_csv_reader **out, const char *path, size_t window,
                       const rl_csv_options *opts)
{
    *out = NULL;
    uint64_t size = 0;
    int fd = rl_fs_open_input(path, &size);
    if (fd < 0)
        return fd;
    int rc = rl_csv_open_mem(out, "", 0, path, opts);
    if (rc != RL_OK) {
        close(fd);
        return rc;
    }
    rl_csv_reader *r = *out;
    r->fd = fd;
    r->file_left = size;
    r->window_cap = window < 4096 ? 4096 : window;
    r->window_max = RL_CSV_STREAM_MAX_ROW > r->window_cap ? RL_CSV_STREAM_MAX_ROW : r->window_cap;
    r->owned = malloc(r->window_cap);
    rc = r->owned ? stream_fill(r, 0, false)
                  : rl_error_set(RL_ENOMEM, "%s: out of memory", path);
    if (rc != RL_OK) {
        rl_csv_close(r);
        *out = NULL;
        return rc;
    }
    if (r->len >= 3 && memcmp(r->data, "\xEF\xBB\xBF", 3) == 0)
        r->pos = r->line_start = 3;
    return RL_OK;
}

void rl_csv_close(rl_csv_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->scratch);
    free(r->offs);
    free(r->fields);
    free(r->owned);
    free(r->name);
    free(r);
}

/* Makes room for `need` bytes of scratch, doubling so a row costs amortised O(1) per byte. */
static int reserve_scratch(rl_csv_reader *r, size_t need)
{
    if (need <= r->scratch_cap)
        return RL_OK;
    size_t cap = r->scratch_cap ? r->scratch_cap : MIN_SCRATCH;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(r->scratch, cap);
    if (!p)
        return rl_error_set(RL_ENOMEM, "%s: out of memory for a %zu-byte row", r->name, need);
    r->scratch = p;
    r->scratch_cap = cap;
    return RL_OK;
}

/* Room for field number `n` (0-based); the caller has checked it against max_fields. */
static int reserve_fields(rl_csv_reader *r, size_t n)
{
    if (n < r->fields_cap)
        return RL_OK;
    size_t cap = r->fields_cap ? r->fields_cap * 2 : 16;
    if (cap > r->opts.max_fields)
        cap = r->opts.max_fields;
    if (cap <= n)
        cap = n + 1;
    if (cap > SIZE_MAX / sizeof(rl_csv_field))
        return rl_error_set(RL_ENOMEM, "%s: too many fields", r->name);
    size_t *o = realloc(r->offs, cap * sizeof *o);
    if (!o)
        return rl_error_set(RL_ENOMEM, "%s: out of memory", r->name);
    r->offs = o;
    rl_csv_field *f = realloc(r->fields, cap * sizeof *f);
    if (!f)
        return rl_error_set(RL_ENOMEM, "%s: out of memory", r->name);
    r->fields = f;
    r->fields_cap = cap;
    return RL_OK;
}

/* Appends `n` input bytes to the row's scratch. */
static int append(rl_csv_reader *r, size_t *used, const char *src, size_t n)
{
    /* +1 keeps room for the NUL that ends the field. */
    if (n > SIZE_MAX - *used - 1)
        return rl_error_set(RL_ENOMEM, "%s: row too large", r->name);
    if (*used + n + 1 > r->scratch_cap) {
        int rc = reserve_scratch(r, *used + n + 1);
        if (rc != RL_OK)
            return rc;
    }
    memcpy(r->scratch + *used, src, n);
    *used += n;
    return RL_OK;
}

/* Offset of the first byte in [p, end) that ends an unquoted field (the delimiter, a quote,
 * CR or LF), or `end`. Eight bytes at a time: a word holds one of the four bytes exactly
 * when (word ^ repeated byte) has a zero byte, which the classic haszero expression finds. */
static size_t scan_unquoted(const unsigned char *base, size_t p, size_t end, unsigned char delim,
                            const unsigned char *special)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    const uint64_t vd = ones * delim, vq = ones * '"', vr = ones * '\r', vn = ones * '\n';
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, base + p, 8);
        uint64_t a = w ^ vd, b = w ^ vq, c = w ^ vr, d = w ^ vn;
        uint64_t hit = ((a - ones) & ~a) | ((b - ones) & ~b) | ((c - ones) & ~c) |
                       ((d - ones) & ~d);
        if (hit & highs) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            /* The lowest flagged byte is always a true match (borrows only run upward). */
            return p + (size_t)(__builtin_ctzll(hit & highs) >> 3);
#else
            break;
#endif
        }
        p += 8;
    }
    while (p < end && !special[base[p]])
        p++;
    return p;
}

/* Consumes the line end at `r->pos` (LF or CRLF); a CR without LF is an error. */
static int end_of_line(rl_csv_reader *r)
{
    if (r->data[r->pos] == '\r') {
        if (r->pos + 1 >= r->len || r->data[r->pos + 1] != '\n')
            return fail_here(r, RL_EPARSE, r->pos,
                             "carriage return not followed by line feed (lone CR)");
        r->pos++;
    }
    r->pos++;
    r->line++;
    r->line_start = r->pos;
    return RL_OK;
}

/* Parses a quoted field whose opening quote is at r->pos into scratch at *used. */
static int parse_quoted(rl_csv_reader *r, size_t *used)
{
    const size_t open = r->pos;
    const uint64_t open_line = r->line;
    const size_t open_lstart = r->line_start;
    const size_t start = *used;
    const size_t max = r->opts.max_field_len;
    size_t p = open + 1;
    for (;;) {
        const char *q = memchr(r->data + p, '"', r->len - p);
        if (!q)
            return fail_at(r, RL_EPARSE, open, open_line, open_lstart,
                           "unterminated quoted field (the quote opened here)");
        size_t n = (size_t)(q - r->data) - p;
        /* Embedded newlines move the line count on, so later positions stay right. */
        const char *nl = memchr(r->data + p, '\n', n);
        if (nl) {
            const char *last = nl;
            while (nl) {
                r->line++;
                last = nl;
                nl = memchr(nl + 1, '\n', (size_t)(q - nl - 1));
            }
            r->line_start = (size_t)(last - r->data) + 1;
        }
        if (n > max - (*used - start))
            return fail_at(r, RL_ERANGE, open, open_line, open_lstart,
                           "quoted field longer than max_field_len");
        int rc = append(r, used, r->data + p, n);
        if (rc != RL_OK)
            return rc;
        p = (size_t)(q - r->data) + 1;
        if (p < r->len && r->data[p] == '"') {
            if (*used - start >= max)
                return fail_at(r, RL_ERANGE, open, open_line, open_lstart,
                               "quoted field longer than max_field_len");
            rc = append(r, used, "\"", 1);
            if (rc != RL_OK)
                return rc;
            p++;
            continue;
        }
        r->pos = p;
        return RL_OK;
    }
}

static int parse_row(rl_csv_reader *r, rl_csv_row *row)
{
    if (r->pos >= r->len)
        return 0;

    /* Kept to report a ragged row at its start and to rewind after running out of memory. */
    const size_t row_pos = r->pos, row_lstart = r->line_start;
    const uint64_t row_line = r->line;
    const unsigned char delim = (unsigned char)r->opts.delimiter;

    size_t used = 0, count = 0;
    bool row_done = false;
    int rc = RL_OK;
    while (!row_done) {
        if (count >= r->opts.max_fields) {
            char what[96];
            snprintf(what, sizeof what, "row has more than %zu fields (max_fields)",
                     r->opts.max_fields);
            rc = fail_here(r, RL_ERANGE, r->pos, what);
            break;
        }
        rc = reserve_fields(r, count);
        if (rc != RL_OK)
            break;
        r->offs[count] = used;
        const size_t fstart = r->pos;
        if (r->pos < r->len && r->data[r->pos] == '"') {
            rc = parse_quoted(r, &used);
            if (rc != RL_OK)
                break;
        } else {
            size_t end = scan_unquoted((const unsigned char *)r->data, r->pos, r->len, delim,
                                       r->special);
            if (end - fstart > r->opts.max_field_len) {
                rc = fail_here(r, RL_ERANGE, fstart, "field longer than max_field_len");
                break;
            }
            if (end < r->len && r->data[end] == '"') {
                rc = fail_here(r, RL_EPARSE, end, "quote inside an unquoted field");
                break;
            }
            rc = append(r, &used, r->data + fstart, end - fstart);
            if (rc != RL_OK)
                break;
            r->pos = end;
        }
        /* Every path above called append, which always leaves room for this NUL. */
        r->fields[count].len = used - r->offs[count];
        r->scratch[used++] = '\0';
        count++;

        if (r->pos >= r->len) {
            row_done = true;
        } else {
            unsigned char c = (unsigned char)r->data[r->pos];
            if (c == delim) {
                r->pos++;
            } else if (c == '\n' || c == '\r') {
                rc = end_of_line(r);
                if (rc != RL_OK)
                    break;
                row_done = true;
            } else {
                /* Only a closing quote can be followed by anything else. */
                char b[16], what[80];
                describe_byte(c, b, sizeof b);
                snprintf(what, sizeof what, "%s after the closing quote of a field", b);
                rc = fail_here(r, RL_EPARSE, r->pos, what);
                break;
            }
        }
    }
    if (rc == RL_OK && r->opts.require_uniform) {
        if (r->expected == 0) {
            r->expected = count;
        } else if (count != r->expected) {
            char what[96];
            snprintf(what, sizeof what, "row has %zu field%s, header has %zu", count,
                     count == 1 ? "" : "s", r->expected);
            rc = fail_at(r, RL_EPARSE, row_pos, row_line, row_lstart, what);
        }
    }
    if (rc != RL_OK) {
        if (!r->err_code) { /* out of memory: not sticky, retrying may succeed */
            r->pos = row_pos;
            r->line = row_line;
            r->line_start = row_lstart;
        }
        return rc;
    }
    for (size_t i = 0; i < count; i++)
        r->fields[i].data = r->scratch + r->offs[i];
    row->fields = r->fields;
    row->count = count;
    row->line = row_line;
    row->byte_offset = r->base + row_pos;
    return 1;
}

int rl_csv_next(rl_csv_reader *r, rl_csv_row *row)
{
    if (!r || !row)
        return rl_error_set(RL_EINVAL, "csv: NULL reader or row");
    if (r->err_code)
        return rl_error_set(r->err_code, "%s", r->err_msg);
    if (r->fd < 0)
        return parse_row(r, row);
    /* A stream: the row is parsed in the window; when the parse came to the window's end
     * (or failed) with more of the file left, the row may be cut, so it is parsed again
     * from its start with more of the file behind it: the window is refilled, and doubled
     * when the row already fills it, up to window_max. */
    bool again = false;
    for (;;) {
        bool last_try = false;
        if (r->file_left > 0 && (again || r->len - r->pos < r->window_cap / 2)) {
            size_t keep = r->line_start < r->pos ? r->line_start : r->pos;
            bool full = again && keep == 0 && r->len == r->window_cap;
            if (full && r->window_cap >= r->window_max) {
                last_try = true;
            } else {
                int rc = stream_fill(r, keep, full);
                if (rc != RL_OK)
                    return rc;
            }
        }
        const size_t pos = r->pos, lstart = r->line_start, expected = r->expected;
        const uint64_t line = r->line;
        int got = parse_row(r, row);
        bool whole = got > 0 && r->pos + 1 < r->len;
        if (r->file_left == 0 || whole || (last_try && got < 0))
            return got;
        r->pos = pos;
        r->line_start = lstart;
        r->line = line;
        r->expected = expected;
        r->err_code = 0;
        if (last_try) {
            char what[96];
            snprintf(what, sizeof what, "row longer than %zu bytes (the reader's limit)",
                     r->window_max);
            return fail_here(r, RL_ERANGE, r->pos, what);
        }
        again = true;
    }
}

/* ------------------------------------------------------------------------------------ */
/* Writer                                                                               */
/* ------------------------------------------------------------------------------------ */

struct rl_csv_writer {
    FILE *file;
    char delimiter;
    bool crlf;
    bool first_row;         /* nothing written yet: a leading BOM must be protected */
    bool lone_empty;        /* the row so far is one empty field, written as nothing */
    size_t fields;          /* fields in the current row */
    char *buf;              /* the current row */
    size_t used, cap;
    unsigned char special[256]; /* bytes that force quotes */
};

int rl_csv_writer_new(rl_csv_writer **out, FILE *file, char delimiter, bool crlf)
{
    *out = NULL;
    if (!file)
        return rl_error_set(RL_EINVAL, "csv writer: NULL file");
    if (delimiter == 0)
        delimiter = ',';
    if (delimiter == '"' || delimiter == '\r' || delimiter == '\n')
        return rl_error_set(RL_EINVAL, "csv writer: delimiter byte 0x%02x is not allowed",
                            (unsigned char)delimiter);
    rl_csv_writer *w = calloc(1, sizeof *w);
    if (!w)
        return rl_error_set(RL_ENOMEM, "csv writer: out of memory");
    w->file = file;
    w->delimiter = delimiter;
    w->crlf = crlf;
    w->first_row = true;
    w->special[(unsigned char)delimiter] = w->special['"'] = 1;
    w->special['\r'] = w->special['\n'] = 1;
    *out = w;
    return RL_OK;
}

void rl_csv_writer_free(rl_csv_writer *w)
{
    if (!w)
        return;
    free(w->buf);
    free(w);
}

static int wreserve(rl_csv_writer *w, size_t extra)
{
    if (extra <= w->cap - w->used)
        return RL_OK;
    if (extra > SIZE_MAX / 2 - w->used)
        return rl_error_set(RL_ENOMEM, "csv writer: row too large");
    size_t cap = w->cap ? w->cap : 256;
    while (cap - w->used < extra)
        cap *= 2;
    char *p = realloc(w->buf, cap);
    if (!p)
        return rl_error_set(RL_ENOMEM, "csv writer: out of memory");
    w->buf = p;
    w->cap = cap;
    return RL_OK;
}

static bool needs_quotes(const rl_csv_writer *w, const char *data, size_t len)
{
    if (len == 0)
        return false;
    if (data[0] == ' ' || data[len - 1] == ' ')
        return true;
    /* The reader drops a BOM at the very start of the input, so a first field beginning
     * with one is quoted to survive the round trip. */
    if (w->first_row && w->fields == 0 && len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        return true;
    /* The bytes that force quotes are exactly those that end an unquoted field. */
    return scan_unquoted((const unsigned char *)data, 0, len, (unsigned char)w->delimiter,
                         w->special) != len;
}

int rl_csv_write_field(rl_csv_writer *w, const char *data, size_t len)
{
    if (!w || (!data && len > 0))
        return rl_error_set(RL_EINVAL, "csv writer: NULL writer or data");
    bool quote = needs_quotes(w, data, len);
    size_t extra = 1 + len;
    if (quote) {
        size_t quotes = 0;
        for (const char *q = memchr(data, '"', len); q;
             q = memchr(q + 1, '"', len - (size_t)(q + 1 - data)))
            quotes++;
        extra += 2 + quotes;
    }
    if (extra < len) /* wrapped */
        return rl_error_set(RL_ENOMEM, "csv writer: field too large");
    int rc = wreserve(w, extra);
    if (rc != RL_OK)
        return rc;
    if (w->fields > 0)
        w->buf[w->used++] = w->delimiter;
    if (!quote) {
        if (len)
            memcpy(w->buf + w->used, data, len);
        w->used += len;
    } else {
        char *o = w->buf + w->used;
        *o++ = '"';
        for (size_t i = 0; i < len; i++) {
            if (data[i] == '"')
                *o++ = '"';
            *o++ = data[i];
        }
        *o++ = '"';
        w->used = (size_t)(o - w->buf);
    }
    w->lone_empty = w->fields == 0 && len == 0;
    w->fields++;
    return RL_OK;
}

int rl_csv_write_str(rl_csv_writer *w, const char *s)
{
    if (!s)
        return rl_error_set(RL_EINVAL, "csv writer: NULL string");
    return rl_csv_write_field(w, s, strlen(s));
}

int rl_csv_write_i64(rl_csv_writer *w, int64_t v)
{
    char b[32];
    int n = snprintf(b, sizeof b, "%" PRId64, v);
    return rl_csv_write_field(w, b, (size_t)n);
}

int rl_csv_write_f64(rl_csv_writer *w, double v)
{
    char b[32];
    size_t n = rl_format_f64(v, b, sizeof b);
    return rl_csv_write_field(w, b, n);
}

int rl_csv_end_row(rl_csv_writer *w)
{
    if (!w)
        return rl_error_set(RL_EINVAL, "csv writer: NULL writer");
    if (w->fields == 0)
        return rl_error_set(RL_ESTATE, "csv writer: a row needs at least one field");
    int rc = wreserve(w, 4);
    if (rc != RL_OK)
        return rc;
    /* A row of one empty field would be a blank line, which many readers skip. */
    if (w->fields == 1 && w->lone_empty) {
        w->buf[w->used++] = '"';
        w->buf[w->used++] = '"';
    }
    if (w->crlf)
        w->buf[w->used++] = '\r';
    w->buf[w->used++] = '\n';
    size_t n = w->used;
    w->used = 0;
    w->fields = 0;
    w->lone_empty = false;
    w->first_row = false;
    if (fwrite(w->buf, 1, n, w->file) != n)
        return rl_error_set(RL_EIO, "csv writer: write failed");
    return RL_OK;
}

int rl_csv_write_row(rl_csv_writer *w, const char *const *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = rl_csv_write_str(w, fields[i]);
        if (rc != RL_OK)
            return rc;
    }
    return rl_csv_end_row(w);
}

/* ------------------------------------------------------------------------------------ */
/* Numbers                                                                              */
/* ------------------------------------------------------------------------------------ */

