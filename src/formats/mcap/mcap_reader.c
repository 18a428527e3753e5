/* The streamed MCAP reader: walks a mapped file (or caller bytes) record by record,
 * descending into chunks (read with pread into a reused buffer, so resident memory stays
 * at the chunk in use), checking every length against the bytes left and every CRC.
 * Errors are sticky and name the byte offset and record type, so a damaged file can be
 * scanned up to the damage (and past it with rl_mcap_reader_seek). Also file mapping. */
#include "mcap_internal.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "mcap_map.h"

/* A Chunk record this much larger than max_chunk_size (compressed data can outgrow its
 * input slightly) is left to the mapping, where decompression refuses it. */
#define CHUNK_RECORD_SLACK ((uint64_t)1 << 20)

/* The next Chunk record, read and decompressed on a thread of its own while the caller
 * walks the current chunk (rl_mcap_reader_options.decompress_ahead). It has buffers and
 * contexts of its own, swapped with the reader's when the reader gets there; `ok` is 0
 * when anything failed, and the reader then does the work itself, so any error is the one
 * it would have reported without the thread. */
typedef struct chunk_ahead {
    const mcap_file *file;
    uint64_t max_size;
    int verify_crc;
    size_t at, len; /* the record, prefix included */
    pthread_t tid;
    int running, ok;
    uint8_t *copy, *expanded;
    size_t copy_cap, expanded_cap;
    mcap_decoder dec;
    const uint8_t *out; /* the chunk's records, in copy or expanded */
    size_t out_len;
} chunk_ahead;

struct rl_mcap_reader {
    rl_mcap_reader_options o;
    chunk_ahead ahead;
    mcap_file file;
    const uint8_t *data;
    size_t len;
    size_t pos; /* next top-level record */
    size_t released; /* mapped bytes before this were handed back (mcap_file_passed) */
    int started, after_footer, done;
    int err;
    uint64_t err_offset;
    char errmsg[1024];
    /* the chunk being expanded */
    int in_chunk;
    const uint8_t *cbuf;
    size_t clen, cpos;
    uint64_t chunk_offset;
    /* kept between chunks: a Chunk record read with pread, the decompressed records and the
     * decompression contexts (allocating and creating them per chunk cost page faults) */
    uint8_t *copy, *expanded;
    size_t copy_cap, expanded_cap;
    mcap_decoder dec;
    /* CRC of the data section's bytes [0, crc_upto), summed as records pass (verify_crcs),
     * so DataEnd's check needs no second read of the file */
    uint32_t crc;
    size_t crc_upto;
    /* conditions that did not stop reading: how many, and the first one's text */
    size_t warnings;
    char warning[512];
};

void rl_mcap_reader_options_default(rl_mcap_reader_options *o)
{
    memset(o, 0, sizeof *o);
    o->chunks = RL_MCAP_CHUNKS_EXPAND;
    o->verify_crcs = 1;
    o->max_chunk_size = (uint64_t)4 << 30;
}

/* ---- File mapping (shared with the indexed reader) ---------------------------------- */

int mcap_file_open(mcap_file *f, const char *path)
{
    memset(f, 0, sizeof *f);
    uint64_t size = 0;
    int fd = rl_fs_open_input(path, &size); /* refuses FIFOs and devices without blocking */
    if (fd < 0)
        return fd;
    if (size == 0) {
        close(fd);
        f->data = (const uint8_t *)"";
        return RL_OK;
    }
    if (size > SIZE_MAX / 2) {
        close(fd);
        return rl_error_set(RL_ERANGE, "%s: %llu bytes, too large to map", path,
                            (unsigned long long)size);
    }
    void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
        f->fd = fd;
        f->map = m;
        f->map_len = (size_t)size;
        f->data = m;
        f->len = f->map_len;
        return RL_OK;
    }
    close(fd);
    /* Not mappable (a file system without mmap): read it whole, bounded by its size. */
    char *buf = NULL;
    size_t n = 0;
    int rc = rl_fs_read_all(path, (size_t)size, &buf, &n);
    if (rc < 0)
        return rc;
    f->owned = (uint8_t *)buf;
    f->data = f->owned;
    f->len = n;
    return RL_OK;
}

void mcap_file_release(mcap_file *f, size_t from, size_t to)
{
    if (!f->map || f->map_len < MCAP_RELEASE_MIN || to > f->map_len)
        return;
    long ps = sysconf(_SC_PAGESIZE);
    size_t page = ps > 0 ? (size_t)ps : 4096;
    size_t a = (from + page - 1) / page * page, b = to / page * page;
    if (b > a)
        (void)madvise((uint8_t *)f->map + a, b - a, MADV_DONTNEED);
}

void mcap_file_passed(mcap_file *f, size_t pos, size_t *released)
{
    if (!f->map || f->map_len < MCAP_RELEASE_MIN || pos < *released + 2 * MCAP_RELEASE_STEP)
        return;
    size_t upto = pos - MCAP_RELEASE_STEP; /* the current record and its neighbours stay */
    mcap_file_release(f, *released, upto);
    *released = upto;
}

int mcap_file_pread(const mcap_file *f, void *buf, size_t len, size_t at)
{
    if (!f->map)
        return rl_error_set(RL_EINVAL, "mcap file: pread on a file that is not mapped");
    uint8_t *out = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(f->fd, out + done, len - done, (off_t)(at + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rl_error_set_errno(RL_EIO, errno, "byte %zu: read", at + done);
        if (n == 0)
            return rl_error_set(RL_ETRUNCATED, "byte %zu: file ends (shorter than when opened)",
                                at + done);
        done += (size_t)n;
    }
    return RL_OK;
}

int mcap_file_pread_into(const mcap_file *f, uint8_t **buf, size_t *cap, size_t len,
                         size_t at)
{
    if (*cap < len) {
        free(*buf);
        *cap = 0;
        if (!(*buf = malloc(len)))
            return rl_error_set(RL_ENOMEM, "byte %zu: out of memory for a %zu-byte record",
                                at, len);
        *cap = len;
    }
    return mcap_file_pread(f, *buf, len, at);
}

void mcap_file_close(mcap_file *f)
{
    if (f->map) {
        munmap(f->map, f->map_len);
        close(f->fd);
    }
    free(f->owned);
    memset(f, 0, sizeof *f);
}

/* ---- Reader ----------------------------------------------------------------------- */

static int new_reader(rl_mcap_reader **out, const rl_mcap_reader_options *opts)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return rl_error_set(RL_ENOMEM, "mcap reader: out of memory");
    if (opts)
        (*out)->o = *opts;
    else
        rl_mcap_reader_options_default(&(*out)->o);
    if ((*out)->o.max_chunk_size == 0)
        (*out)->o.max_chunk_size = (uint64_t)4 << 30;
    return RL_OK;
}

int rl_mcap_reader_open(rl_mcap_reader **out, const char *path, const rl_mcap_reader_options *opts)
{
    int rc = new_reader(out, opts);
    if (rc < 0)
        return rc;
    rc = mcap_file_open(&(*out)->file, path);
    if (rc < 0) {
        free(*out);
        *out = NULL;
        return rc;
    }
    (*out)->data = (*out)->file.data;
    (*out)->len = (*out)->file.len;
    return RL_OK;
}

int rl_mcap_reader_open_mem(rl_mcap_reader **out, const void *data, size_t len,
                            const rl_mcap_reader_options *opts)
{
    int rc = new_reader(out, opts);
    if (rc < 0)
        return rc;
    (*out)->data = data ? data : (const void *)"";
    (*out)->len = data ? len : 0;
    return RL_OK;
}

static void leave_chunk(rl_mcap_reader *r)
{
    r->cbuf = NULL;
    r->in_chunk = 0;
    r->clen = r->cpos = 0;
}

static void *ahead_work(void *arg)
{
    chunk_ahead *a = arg;
    a->ok = 0;
    rl_mcap_record rec;
    if (mcap_file_pread_into(a->file, &a->copy, &a->copy_cap, a->len, a->at) < 0 ||
        rl_mcap_record_parse(RL_MCAP_OP_CHUNK, a->copy + RL_MCAP_RECORD_PREFIX,
                             a->len - RL_MCAP_RECORD_PREFIX, &rec) < 0 ||
        mcap_chunk_decompress_into(&rec.u.chunk, a->max_size, a->verify_crc, &a->dec,
                                   &a->expanded, &a->expanded_cap, &a->out, &a->out_len) < 0)
        return NULL;
    a->ok = 1;
    return NULL;
}

static void ahead_join(chunk_ahead *a)
{
    if (a->running)
        pthread_join(a->tid, NULL);
    a->running = 0;
}

/* Whether the top-level record at `at` is a Chunk the reader would copy with pread
 * (rl_mcap_reader_next); its length, prefix included, in *len. */
static bool chunk_to_copy(const rl_mcap_reader *r, size_t at, size_t *len)
{
    if (r->o.chunks == RL_MCAP_CHUNKS_RAW || !r->file.map || at > r->len ||
        r->len - at < RL_MCAP_RECORD_PREFIX || r->data[at] != RL_MCAP_OP_CHUNK)
        return false;
    uint64_t blen = mcap_rd64(r->data + at + 1);
    if (blen > r->len - at - RL_MCAP_RECORD_PREFIX || blen > r->o.max_chunk_size + CHUNK_RECORD_SLACK)
        return false;
    *len = RL_MCAP_RECORD_PREFIX + (size_t)blen;
    return true;
}

/* Starts reading and decompressing the next Chunk record, if it follows at `at` after
 * nothing but MessageIndex records (as in files written with message indexes). */
static void ahead_start(rl_mcap_reader *r, size_t at)
{
    chunk_ahead *a = &r->ahead;
    size_t len;
    if (!r->o.decompress_ahead || a->running)
        return;
    while (at <= r->len && r->len - at >= RL_MCAP_RECORD_PREFIX &&
           r->data[at] == RL_MCAP_OP_MESSAGE_INDEX) {
        uint64_t blen = mcap_rd64(r->data + at + 1);
        if (blen > r->len - at - RL_MCAP_RECORD_PREFIX)
            return;
        at += RL_MCAP_RECORD_PREFIX + (size_t)blen;
    }
    if (!chunk_to_copy(r, at, &len))
        return;
    a->file = &r->file;
    a->max_size = r->o.max_chunk_size;
    a->verify_crc = r->o.verify_crcs;
    a->at = at;
    a->len = len;
    a->ok = 0;
    a->running = pthread_create(&a->tid, NULL, ahead_work, a) == 0;
}

/* Takes the chunk read ahead, if it is the one at `at` (`len` bytes) and it succeeded:
 * its buffers become the reader's (the reader's go to the next one) and *out, *out_len
 * are its records. */
static bool ahead_take(rl_mcap_reader *r, size_t at, size_t len, const uint8_t **out,
                       size_t *out_len)
{
    chunk_ahead *a = &r->ahead;
    if (!a->running)
        return false;
    ahead_join(a);
    if (!a->ok || a->at != at || a->len != len)
        return false;
    uint8_t *copy = r->copy, *expanded = r->expanded;
    size_t copy_cap = r->copy_cap, expanded_cap = r->expanded_cap;
    r->copy = a->copy, r->copy_cap = a->copy_cap;
    r->expanded = a->expanded, r->expanded_cap = a->expanded_cap;
    a->copy = copy, a->copy_cap = copy_cap;
    a->expanded = expanded, a->expanded_cap = expanded_cap;
    *out = a->out;
    *out_len = a->out_len;
    a->ok = 0;
    return true;
}

void rl_mcap_reader_close(rl_mcap_reader *r)
{
    if (!r)
        return;
    ahead_join(&r->ahead);
    free(r->ahead.copy);
    free(r->ahead.expanded);
    mcap_decoder_free(&r->ahead.dec);
    leave_chunk(r);
    free(r->copy);
    free(r->expanded);
    mcap_decoder_free(&r->dec);
    mcap_file_close(&r->file);
    free(r);
}

const uint8_t *rl_mcap_reader_data(const rl_mcap_reader *r, size_t *len)
{
    *len = r->len;
    return r->data;
}

uint64_t rl_mcap_reader_offset(const rl_mcap_reader *r)
{
    return r->err ? r->err_offset : r->pos;
}

int rl_mcap_reader_seek(rl_mcap_reader *r, uint64_t offset)
{
    if (offset < RL_MCAP_MAGIC_LEN || offset > r->len)
        return rl_error_set(RL_ERANGE, "mcap reader: seek to byte %llu outside 8..%zu",
                            (unsigned long long)offset, r->len);
    ahead_join(&r->ahead);
    leave_chunk(r);
    r->pos = (size_t)offset;
    r->started = 1;
    r->after_footer = r->done = 0;
    r->err = 0;
    return RL_OK;
}

/* Records the current thread error as the reader's sticky error. */
static int stick(rl_mcap_reader *r, int rc, uint64_t offset)
{
    r->err = rc;
    r->err_offset = offset;
    snprintf(r->errmsg, sizeof r->errmsg, "%s", rl_error_last());
    return rc;
}

static int check_magic_at(const rl_mcap_reader *r, size_t pos)
{
    return r->len - pos >= RL_MCAP_MAGIC_LEN &&
           memcmp(r->data + pos, rl_mcap_magic, RL_MCAP_MAGIC_LEN) == 0;
}

/* True when all `n` bytes at `p` are zero. */
static bool zero_tail(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

/* Notes a condition that does not stop reading; the first one's text is kept. */
static void warn(rl_mcap_reader *r, const char *msg)
{
    if (r->warnings++ == 0)
        snprintf(r->warning, sizeof r->warning, "%s", msg);
}

size_t rl_mcap_reader_warning_count(const rl_mcap_reader *r)
{
    return r->warnings;
}

const char *rl_mcap_reader_warning(const rl_mcap_reader *r)
{
    return r->warnings ? r->warning : NULL;
}

/* Checks what a record claims about the bytes around it (CRCs). */
static int verify_record(rl_mcap_reader *r, const rl_mcap_record *rec, size_t at)
{
    if (!r->o.verify_crcs)
        return RL_OK;
    if (rec->opcode == RL_MCAP_OP_ATTACHMENT && rec->u.attachment.crc != 0) {
        uint32_t crc = rl_mcap_attachment_crc(&rec->u.attachment);
        if (crc != rec->u.attachment.crc)
            return rl_error_set(RL_ECRC,
                                "byte %zu: Attachment record: CRC mismatch: stored %u, computed %u",
                                at, rec->u.attachment.crc, crc);
    } else if (rec->opcode == RL_MCAP_OP_DATA_END && rec->u.data_end.data_section_crc != 0) {
        /* Every record before it was read and checked (chunk and attachment CRCs
         * included), so a mismatch here costs the reader nothing: a warning, not an error
         * (a chunk written twice, bytes changed in an index, padding). */
        /* Summed as the records passed; what was not (after a seek) is summed here in
         * steps, each handed back once summed. */
        uint32_t crc = 0;
        size_t off = 0;
        if (r->crc_upto && r->crc_upto <= at) {
            crc = r->crc;
            off = r->crc_upto;
        }
        for (; off < at; off += MCAP_RELEASE_STEP) {
            size_t n = at - off < MCAP_RELEASE_STEP ? at - off : MCAP_RELEASE_STEP;
            crc = rl_crc32(crc, r->data + off, n);
            mcap_file_release(&r->file, off, off + n);
        }
        if (crc != rec->u.data_end.data_section_crc) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "byte %zu: DataEnd record: data section CRC mismatch: stored %u, computed "
                     "%u (every record before it read intact)",
                     at, rec->u.data_end.data_section_crc, crc);
            warn(r, msg);
        }
    } else if (rec->opcode == RL_MCAP_OP_FOOTER && rec->u.footer.summary_crc != 0) {
        uint64_t start = rec->u.footer.summary_start ? rec->u.footer.summary_start : at;
        if (start > at)
            return rl_error_set(RL_EPARSE,
                                "byte %zu: Footer record: summary_start %llu is after the footer",
                                at, (unsigned long long)start);
        if (rec->body.len < 16)
            return RL_OK;
        uint32_t crc =
            rl_crc32(0, r->data + start, at + RL_MCAP_RECORD_PREFIX + 16 - (size_t)start);
        if (crc != rec->u.footer.summary_crc)
            return rl_error_set(
                RL_ECRC, "byte %zu: Footer record: summary CRC mismatch: stored %u, computed %u",
                at, rec->u.footer.summary_crc, crc);
    }
    return RL_OK;
}

int rl_mcap_reader_next(rl_mcap_reader *r, rl_mcap_record *rec)
{
    if (r->err)
        return rl_error_set(r->err, "%s", r->errmsg);
    if (r->done)
        return 0;
    if (!r->started) {
        if (!check_magic_at(r, 0)) {
            int code = r->len < RL_MCAP_MAGIC_LEN && memcmp(r->data, rl_mcap_magic, r->len) == 0
                           ? RL_ETRUNCATED
                           : RL_EPARSE;
            return stick(r, rl_error_set(code, "byte 0: not an MCAP file (no leading magic)"), 0);
        }
        r->started = 1;
        r->pos = RL_MCAP_MAGIC_LEN;
        if (r->o.verify_crcs) {
            r->crc = rl_crc32(0, r->data, RL_MCAP_MAGIC_LEN);
            r->crc_upto = RL_MCAP_MAGIC_LEN;
        }
    }
    for (;;) {
        if (r->in_chunk) {
            if (r->cpos < r->clen) {
                size_t inner = r->cpos;
                int rc = rl_mcap_records_next(r->cbuf, r->clen, &r->cpos, rec);
                if (rc < 0) {
                    rl_error_set(rc, "byte %llu: inside Chunk record at records offset %zu: %s",
                                 (unsigned long long)r->chunk_offset, inner,
                                 mcap_skip_byte_prefix(rl_error_last()));
                    return stick(r, rc, r->chunk_offset);
                }
                rec->chunk_offset = r->chunk_offset;
                return 1;
            }
            leave_chunk(r);
        }
        size_t at = r->pos;
        if (r->after_footer) {
            if (!check_magic_at(r, at))
                return stick(
                    r,
                    rl_error_set(r->len - at < RL_MCAP_MAGIC_LEN ? RL_ETRUNCATED : RL_EPARSE,
                                 "byte %zu: no closing magic after the Footer", at),
                    at);
            r->pos = at + RL_MCAP_MAGIC_LEN;
            if (r->pos != r->len && !r->o.allow_trailing_data)
                return stick(r,
                             rl_error_set(RL_EPARSE, "byte %zu: %zu bytes after the closing magic",
                                          r->pos, r->len - r->pos),
                             r->pos);
            r->done = 1;
            return 0;
        }
        if (at < r->len && r->data[at] == 0 && zero_tail(r->data + at, r->len - at)) {
            /* Space a file system pre-allocated and a crashed writer never filled: the data
               ends here, as in a file cut at this byte. Zeros followed by anything else are
               damage, reported below by the record parser with their offset. */
            char msg[200];
            snprintf(msg, sizeof msg,
                     "byte %zu: the remaining %zu bytes are all zero (a zero-filled tail); "
                     "read as the end of the data",
                     at, r->len - at);
            warn(r, msg);
            return stick(r,
                         rl_error_set(RL_ETRUNCATED,
                                      "byte %zu: file ends before the Footer (zero-filled tail "
                                      "of %zu bytes)",
                                      at, r->len - at),
                         at);
        }
        if (r->len - at < RL_MCAP_RECORD_PREFIX) {
            if (at == r->len)
                return stick(
                    r, rl_error_set(RL_ETRUNCATED, "byte %zu: file ends before the Footer", at),
                    at);
            return stick(r,
                         rl_error_set(RL_ETRUNCATED,
                                      "byte %zu: %s record: file ends inside the record prefix", at,
                                      rl_mcap_opcode_name(r->data[at])),
                         at);
        }
        uint8_t op = r->data[at];
        uint64_t blen = mcap_rd64(r->data + at + 1);
        size_t left = r->len - at - RL_MCAP_RECORD_PREFIX;
        if (blen > left)
            return stick(r,
                         rl_error_set(RL_ETRUNCATED,
                                      "byte %zu: %s record: length %llu exceeds the %zu bytes left",
                                      at, rl_mcap_opcode_name(op), (unsigned long long)blen, left),
                         at);
        const uint8_t *bytes = r->data + at; /* the record, prefix included */
        const uint8_t *buf = NULL; /* the chunk's records when read ahead */
        size_t n = 0, copy_len;
        bool taken = false;
        if (op == RL_MCAP_OP_CHUNK && chunk_to_copy(r, at, &copy_len)) {
            taken = ahead_take(r, at, copy_len, &buf, &n);
            /* Copied into the reader's reused buffer with pread: read through the mapping,
               its pages would count as the process's memory until handed back (up to the
               release window, tens of MB) and cost a page fault each. */
            int rc = taken ? RL_OK
                           : mcap_file_pread_into(&r->file, &r->copy, &r->copy_cap, copy_len, at);
            if (rc < 0)
                return stick(r, rc, at);
            bytes = r->copy;
        }
        int rc = rl_mcap_record_parse(op, bytes + RL_MCAP_RECORD_PREFIX, (size_t)blen, rec);
        if (rc < 0)
            return stick(r, rl_error_prefix(rc, "byte %zu", at), at);
        rec->offset = at;
        rc = verify_record(r, rec, at);
        if (rc < 0)
            return stick(r, rc, at);
        size_t record_len = RL_MCAP_RECORD_PREFIX + (size_t)blen;
        /* An uncompressed chunk's records are its uncompressed bytes, whose CRC the chunk
           check below computes: the data-section CRC takes it over with crc32_combine
           instead of summing the same bytes a second time (a third of a plain read's
           time), once that check has passed. */
        bool combine_chunk_crc = r->o.verify_crcs && r->crc_upto == at &&
                                 op == RL_MCAP_OP_CHUNK && r->o.chunks != RL_MCAP_CHUNKS_RAW &&
                                 rec->u.chunk.compression.len == 0 &&
                                 rec->u.chunk.uncompressed_crc != 0 &&
                                 rec->u.chunk.records.len == rec->u.chunk.uncompressed_size;
        if (r->o.verify_crcs && r->crc_upto == at && !combine_chunk_crc) {
            r->crc = rl_crc32(r->crc, bytes, record_len);
            r->crc_upto = at + record_len;
        }
        r->pos = at + RL_MCAP_RECORD_PREFIX + (size_t)blen;
        mcap_file_passed(&r->file, at, &r->released);
        if (op == RL_MCAP_OP_FOOTER)
            r->after_footer = 1;
        if (op != RL_MCAP_OP_CHUNK || r->o.chunks == RL_MCAP_CHUNKS_RAW)
            return 1;
        if (!taken)
            rc = mcap_chunk_decompress_into(&rec->u.chunk, r->o.max_chunk_size, r->o.verify_crcs,
                                            &r->dec, &r->expanded, &r->expanded_cap, &buf, &n);
        if (rc < 0) {
            r->pos = at;
            return stick(r, rl_error_prefix(rc, "byte %zu: Chunk record", at), at);
        }
        if (combine_chunk_crc) {
            const uint8_t *records = rec->u.chunk.records.data;
            size_t head = (size_t)(records - bytes), tail = record_len - head - n;
            uint32_t crc = rl_crc32(r->crc, bytes, head);
            crc = (uint32_t)crc32_combine(crc, rec->u.chunk.uncompressed_crc, (z_off_t)n);
            r->crc = rl_crc32(crc, records + n, tail);
            r->crc_upto = at + record_len;
        }
        r->in_chunk = 1;
        r->cbuf = buf;
        r->clen = n;
        r->cpos = 0;
        r->chunk_offset = at;
        ahead_start(r, r->pos);
        if (r->o.chunks == RL_MCAP_CHUNKS_BOTH)
            return 1;
    }
}
