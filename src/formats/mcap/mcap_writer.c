/* The MCAP writer: records go to a file descriptor through a small output buffer, with at
 * most two chunks held in memory (the one being filled and the one a worker thread is
 * compressing); on close it writes DataEnd, the summary (repeated
 * schemas/channels, statistics, metadata/attachment/chunk indexes), summary offsets and
 * the footer. The byte layout follows the reference TypeScript writer exactly. */
#include "core/text.h"
#include "mcap_internal.h"

#include "runlab/error.h"
#include "runlab/hash.h"
#include "runlab/provenance.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

enum {
    OUT_FLUSH_AT = 64 * 1024, /* output buffer is written once it holds this much */
    NIDS = 65536
};

/* A record copy owned by the writer: its encoding, and the record parsed back from it
 * (so every pointer refers to `mem`). */
typedef struct owned_rec {
    uint8_t *mem;
    size_t len;
    rl_mcap_record rec;
} owned_rec;

typedef struct chan_entry {
    owned_rec r;
    uint64_t message_count;
} chan_entry;

typedef struct msg_index {
    uint16_t channel_id;
    mcap_buf entries;
} msg_index;

typedef struct chunk_index_entry {
    rl_mcap_chunk_index ci;
    uint8_t *offsets; /* serialised message_index_offsets */
} chunk_index_entry;

typedef struct att_index_entry {
    rl_mcap_attachment_index ai;
    uint8_t *strings;
} att_index_entry;

typedef struct meta_index_entry {
    rl_mcap_metadata_index mi;
    uint8_t *name;
} meta_index_entry;

enum phase { PHASE_DATA, PHASE_SUMMARY, PHASE_DONE };

/* One chunk: its records, compressed form and message index. */
typedef struct chunk_state {
    mcap_buf chunk, comp;
    uint64_t start_time, end_time;
    size_t messages;
    msg_index *mi;
    size_t mi_count, mi_init, mi_cap; /* mi[0..mi_init) have initialised buffers */
    uint32_t mi_slot[NIDS];           /* channel id -> index in mi + 1 */
    int compressed, crc_done;         /* comp (the worker's part) and crc are done */
    uint32_t crc;                     /* of the uncompressed records (0 when off) */
    void *zstd_ctx;                   /* reused by every chunk compressed in this state */
} chunk_state;

struct rl_mcap_writer {
    int fd, owns_fd, failed;
    rl_mcap_writer_options o;
    uint64_t written; /* bytes handed to write(2) */
    mcap_buf out;     /* bytes not yet written */
    enum phase phase;
    uint32_t data_crc, summary_crc;

    /* A full chunk is compressed by a worker thread while the caller CRCs it, fills the
     * other chunk and writes the previous one: compression then overlaps the encoding of
     * messages, the CRCs and the I/O, which stay on the caller's thread (so only it
     * touches the descriptor, the output and the indexes). The worker touches nothing but
     * `job`'s comp and compressed. Uncompressed chunks need no worker.
     * add_message hands a chunk over and writes the one handed over before; every other
     * call first writes the pending chunk (settle), so the file's byte order is that of
     * the calls. */
    chunk_state cs[2];
    chunk_state *cur;     /* the open chunk */
    chunk_state *pending; /* handed to the worker and not yet written, or NULL */
    pthread_t thread;
    int thread_started, quit;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    chunk_state *job; /* what the worker works on, NULL when it is idle */
    int job_rc;       /* its result, with the worker's error message */
    char job_msg[256];

    /* summary tables */
    owned_rec *schemas;
    size_t schema_count, schema_cap;
    uint32_t schema_slot[NIDS];
    chan_entry *channels;
    size_t channel_count, channel_cap;
    uint32_t channel_slot[NIDS];
    uint16_t *stat_order; /* channels in order of their first message */
    size_t stat_order_count, stat_order_cap;
    uint64_t message_count, msg_start, msg_end;
    uint32_t attachment_count, metadata_count, chunk_count;
    chunk_index_entry *chunk_idx;
    size_t chunk_idx_count, chunk_idx_cap;
    att_index_entry *att_idx;
    size_t att_idx_count, att_idx_cap;
    meta_index_entry *meta_idx;
    size_t meta_idx_count, meta_idx_cap;
};

void rl_mcap_writer_options_default(rl_mcap_writer_options *o)
{
    memset(o, 0, sizeof *o);
    o->profile = "";
    o->library = NULL; /* "runlab <version>" */
    o->use_chunks = 1;
    o->chunk_size = 1024 * 1024;
    o->compression = RL_MCAP_COMPRESSION_ZSTD;
    o->message_index = o->chunk_index = o->statistics = 1;
    o->repeated_schemas = o->repeated_channels = 1;
    o->attachment_index = o->metadata_index = o->summary_offsets = 1;
    o->chunk_crc = o->data_section_crc = o->summary_crc = o->attachment_crc = 1;
}

/* Room for one more of `count` elements of `size` bytes (checked growth in core/text.h). */
static int grow(void **arr, size_t *cap, size_t count, size_t size)
{
    return rl_grow_array(arr, cap, count + 1, size, "mcap writer");
}

/* ---- Output ----------------------------------------------------------------------- */

static int fail(rl_mcap_writer *w, int rc)
{
    w->failed = 1;
    return rc;
}

static int write_all(rl_mcap_writer *w, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(w->fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            return fail(w, rl_error_set_errno(e == ENOSPC || e == EDQUOT ? RL_ENOSPC : RL_EIO, e,
                                              "mcap writer: write at byte %llu",
                                              (unsigned long long)w->written));
        }
        p += n;
        len -= (size_t)n;
        w->written += (uint64_t)n;
    }
    return RL_OK;
}

static int drain(rl_mcap_writer *w)
{
    int rc = write_all(w, w->out.data, w->out.len);
    w->out.len = 0;
    return rc;
}

static uint64_t pos(const rl_mcap_writer *w)
{
    return w->written + w->out.len;
}

static void account(rl_mcap_writer *w, const uint8_t *p, size_t len)
{
    if (w->phase == PHASE_DATA)
        w->data_crc = rl_crc32(w->data_crc, p, len);
    else if (w->phase == PHASE_SUMMARY)
        w->summary_crc = rl_crc32(w->summary_crc, p, len);
}

static int emit_bytes(rl_mcap_writer *w, const void *data, size_t len)
{
    account(w, data, len);
    int rc = mcap_buf_append(&w->out, data, len);
    if (rc < 0)
        return fail(w, rc);
    return w->out.len >= OUT_FLUSH_AT ? drain(w) : RL_OK;
}

/* Encodes one record into the output; returns its full length through `len_out`. */
static int emit_record(rl_mcap_writer *w, const rl_mcap_record *rec, uint64_t *len_out)
{
    size_t n = rl_mcap_record_encode(rec, NULL, 0);
    int rc = mcap_buf_reserve(&w->out, n);
    if (rc < 0)
        return fail(w, rc);
    uint8_t *dst = w->out.data + w->out.len;
    rl_mcap_record_encode(rec, dst, n);
    account(w, dst, n);
    w->out.len += n;
    if (len_out)
        *len_out = n;
    return w->out.len >= OUT_FLUSH_AT ? drain(w) : RL_OK;
}

static int own_record(const rl_mcap_record *in, owned_rec *out)
{
    size_t n = rl_mcap_record_encode(in, NULL, 0);
    out->mem = malloc(n);
    if (!out->mem)
        return rl_error_set(RL_ENOMEM, "mcap writer: out of memory");
    out->len = n;
    rl_mcap_record_encode(in, out->mem, n);
    return rl_mcap_record_parse(in->opcode, out->mem + RL_MCAP_RECORD_PREFIX,
                                n - RL_MCAP_RECORD_PREFIX, &out->rec);
}

/* 1 when `in` encodes to the same bytes as `have`. */
static int same_record(const rl_mcap_record *in, const owned_rec *have)
{
    size_t n = rl_mcap_record_encode(in, NULL, 0);
    if (n != have->len)
        return 0;
    uint8_t *tmp = malloc(n);
    if (!tmp)
        return 0;
    rl_mcap_record_encode(in, tmp, n);
    int same = memcmp(tmp, have->mem, n) == 0;
    free(tmp);
    return same;
}

/* ---- Open ------------------------------------------------------------------------- */

static int check_state_quick(rl_mcap_writer *w)
{
    if (!w)
        return rl_error_set(RL_EINVAL, "mcap writer: NULL writer");
    if (w->failed)
        return rl_error_set(RL_ESTATE,
                            "mcap writer: an earlier write failed; the writer is unusable");
    if (w->phase != PHASE_DATA)
        return rl_error_set(RL_ESTATE, "mcap writer: already closed");
    return RL_OK;
}

static int settle(rl_mcap_writer *w);

/* check_state_quick, then the pending chunk is written: every call but add_message. */
static int check_state(rl_mcap_writer *w)
{
    int rc = check_state_quick(w);
    return rc < 0 ? rc : settle(w);
}

int rl_mcap_writer_open_fd(rl_mcap_writer **out, int fd, const rl_mcap_writer_options *opts)
{
    *out = NULL;
    if (fd < 0)
        return rl_error_set(RL_EINVAL, "mcap writer: invalid file descriptor %d", fd);
    rl_mcap_writer_options def;
    if (!opts) {
        rl_mcap_writer_options_default(&def);
        opts = &def;
    }
    if (opts->compression != RL_MCAP_COMPRESSION_NONE &&
        opts->compression != RL_MCAP_COMPRESSION_ZSTD &&
        opts->compression != RL_MCAP_COMPRESSION_LZ4)
        return rl_error_set(RL_EINVAL, "mcap writer: unknown compression %d",
                            (int)opts->compression);
    rl_mcap_writer *w = calloc(1, sizeof *w);
    if (!w)
        return rl_error_set(RL_ENOMEM, "mcap writer: out of memory");
    w->fd = fd;
    w->o = *opts;
    w->cur = &w->cs[0];
    /* Message and chunk indexes describe chunks: without chunks they are off. */
    if (!w->o.use_chunks)
        w->o.message_index = w->o.chunk_index = 0;
    w->msg_start = UINT64_MAX;
    rl_mcap_record h;
    memset(&h, 0, sizeof h);
    h.opcode = RL_MCAP_OP_HEADER;
    h.u.header.profile = rl_mcap_bytes_of(opts->profile);
    char lib[128];
    if (!opts->library)
        snprintf(lib, sizeof lib, "runlab %s", rl_version_string());
    h.u.header.library = rl_mcap_bytes_of(opts->library ? opts->library : lib);
    int rc = emit_bytes(w, rl_mcap_magic, RL_MCAP_MAGIC_LEN);
    if (rc == RL_OK)
        rc = emit_record(w, &h, NULL);
    if (rc == RL_OK)
        rc = drain(w);
    if (rc < 0) {
        rl_mcap_writer_free(w);
        return rc;
    }
    *out = w;
    return RL_OK;
}

int rl_mcap_writer_open_path(rl_mcap_writer **out, const char *path,
                             const rl_mcap_writer_options *opts)
{
    *out = NULL;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return rl_error_set_errno(errno == ENOENT ? RL_ENOENT : RL_EIO, errno,
                                  "mcap writer: create %s", path);
    int rc = rl_mcap_writer_open_fd(out, fd, opts);
    if (rc < 0) {
        close(fd);
        return rl_error_prefix(rc, "%s", path);
    }
    (*out)->owns_fd = 1;
    return RL_OK;
}

/* ---- Chunks ----------------------------------------------------------------------- */

/* The worker's part of closing a chunk: compression. Writes only cs->comp and
 * cs->compressed, so it may run beside the caller reading the records. */
static int compress_chunk(const rl_mcap_writer *w, chunk_state *cs)
{
    if (w->o.compression != RL_MCAP_COMPRESSION_NONE) {
        int rc = mcap_compress(w->o.compression, w->o.compression_level, cs->chunk.data,
                               cs->chunk.len, &cs->comp, &cs->zstd_ctx);
        if (rc < 0)
            return rc;
    }
    cs->compressed = 1;
    return RL_OK;
}

static void crc_chunk(const rl_mcap_writer *w, chunk_state *cs)
{
    cs->crc = w->o.chunk_crc ? rl_crc32(0, cs->chunk.data, cs->chunk.len) : 0;
    cs->crc_done = 1;
}

/* Closes chunk `cs` on the caller's thread: compressed (unless the worker did) and CRC'd,
 * written with its message index, entered in the chunk index, then emptied for reuse. */
static int close_chunk_state(rl_mcap_writer *w, chunk_state *cs)
{
    if (cs->chunk.len == 0)
        return RL_OK;
    if (!cs->compressed) {
        int rc = compress_chunk(w, cs);
        if (rc < 0)
            return fail(w, rc);
    }
    if (!cs->crc_done)
        crc_chunk(w, cs);
    const uint8_t *recs = cs->chunk.data;
    size_t recs_len = cs->chunk.len;
    if (w->o.compression != RL_MCAP_COMPRESSION_NONE) {
        recs = cs->comp.data;
        recs_len = cs->comp.len;
    }
    rl_mcap_record c;
    memset(&c, 0, sizeof c);
    c.opcode = RL_MCAP_OP_CHUNK;
    rl_mcap_chunk *ch = &c.u.chunk;
    ch->message_start_time = cs->messages ? cs->start_time : 0;
    ch->message_end_time = cs->messages ? cs->end_time : 0;
    ch->uncompressed_size = cs->chunk.len;
    ch->uncompressed_crc = cs->crc;
    ch->compression = rl_mcap_bytes_of(mcap_compression_name(w->o.compression));
    ch->records.data = recs;
    ch->records.len = recs_len;

    uint64_t chunk_start = pos(w);
    uint64_t chunk_len = 0;
    int rc;
    /* Large chunks skip the output buffer: prefix and fields, then the records as is. */
    size_t n = rl_mcap_record_encode(&c, NULL, 0);
    if (recs_len >= OUT_FLUSH_AT) {
        rl_mcap_record head = c;
        head.u.chunk.records.len = 0;
        uint8_t tmp[128];
        size_t hn = rl_mcap_record_encode(&head, tmp, sizeof tmp);
        if (hn > sizeof tmp)
            return fail(w, rl_error_set(RL_ERR, "mcap writer: chunk header too long"));
        /* Patch the record length and the records length for the real size. */
        mcap_wr64(tmp + 1, (uint64_t)(n - RL_MCAP_RECORD_PREFIX));
        mcap_wr64(tmp + hn - 8, (uint64_t)recs_len);
        rc = emit_bytes(w, tmp, hn);
        if (rc == RL_OK)
            rc = drain(w);
        if (rc == RL_OK) {
            /* Uncompressed records were just CRC'd for the chunk: extend the data-section
             * CRC arithmetically instead of reading them a second time. */
            if (w->phase == PHASE_DATA && ch->uncompressed_crc != 0 && recs == cs->chunk.data)
                w->data_crc = (uint32_t)crc32_combine(w->data_crc, ch->uncompressed_crc,
                                                      (z_off_t)recs_len);
            else
                account(w, recs, recs_len);
            rc = write_all(w, recs, recs_len);
        }
        chunk_len = n;
    } else {
        rc = emit_record(w, &c, &chunk_len);
    }
    if (rc < 0)
        return rc;
    w->chunk_count++;

    uint8_t *offsets = NULL;
    size_t offsets_len = 0;
    uint64_t mi_start = pos(w), mi_len = 0;
    if (w->o.message_index && cs->mi_count) {
        offsets_len = 10 * cs->mi_count;
        offsets = malloc(offsets_len);
        if (!offsets)
            return fail(w, rl_error_set(RL_ENOMEM, "mcap writer: out of memory"));
        for (size_t i = 0; i < cs->mi_count; i++) {
            rl_mcap_record m;
            memset(&m, 0, sizeof m);
            m.opcode = RL_MCAP_OP_MESSAGE_INDEX;
            m.u.message_index.channel_id = cs->mi[i].channel_id;
            m.u.message_index.entries.data = cs->mi[i].entries.data;
            m.u.message_index.entries.len = cs->mi[i].entries.len;
            mcap_wr16(offsets + 10 * i, cs->mi[i].channel_id);
            mcap_wr64(offsets + 10 * i + 2, mi_start + mi_len);
            uint64_t l = 0;
            rc = emit_record(w, &m, &l);
            if (rc < 0) {
                free(offsets);
                return rc;
            }
            mi_len += l;
        }
    }
    if (w->o.chunk_index) {
        rc = grow((void **)&w->chunk_idx, &w->chunk_idx_cap, w->chunk_idx_count,
                  sizeof *w->chunk_idx);
        if (rc < 0) {
            free(offsets);
            return fail(w, rc);
        }
        chunk_index_entry *e = &w->chunk_idx[w->chunk_idx_count++];
        memset(e, 0, sizeof *e);
        e->offsets = offsets;
        e->ci.message_start_time = ch->message_start_time;
        e->ci.message_end_time = ch->message_end_time;
        e->ci.chunk_start_offset = chunk_start;
        e->ci.chunk_length = chunk_len;
        e->ci.message_index_offsets.data = offsets;
        e->ci.message_index_offsets.len = offsets_len;
        e->ci.message_index_length = mi_len;
        e->ci.compression = rl_mcap_bytes_of(mcap_compression_name(w->o.compression));
        e->ci.compressed_size = recs_len;
        e->ci.uncompressed_size = cs->chunk.len;
    } else {
        free(offsets);
    }
    for (size_t i = 0; i < cs->mi_count; i++) {
        cs->mi_slot[cs->mi[i].channel_id] = 0;
        cs->mi[i].entries.len = 0;
    }
    cs->mi_count = 0;
    cs->chunk.len = 0;
    cs->messages = 0;
    cs->compressed = cs->crc_done = 0;
    return RL_OK;
}

/* Waits until the worker is idle; its result: RL_OK or an error (message set). */
static int wait_worker(rl_mcap_writer *w)
{
    if (!w->thread_started)
        return RL_OK;
    pthread_mutex_lock(&w->lock);
    while (w->job)
        pthread_cond_wait(&w->cv, &w->lock);
    int rc = w->job_rc;
    w->job_rc = RL_OK;
    pthread_mutex_unlock(&w->lock);
    if (rc < 0)
        return fail(w, rl_error_set(rc, "%s", w->job_msg));
    return RL_OK;
}

/* Writes the chunk handed to the worker, once it is compressed. */
static int settle(rl_mcap_writer *w)
{
    if (!w->pending)
        return RL_OK;
    int rc = wait_worker(w);
    chunk_state *cs = w->pending;
    w->pending = NULL;
    return rc < 0 ? rc : close_chunk_state(w, cs);
}

/* Closes the open chunk, after the pending one (file order). */
static int close_chunk(rl_mcap_writer *w)
{
    int rc = settle(w);
    return rc < 0 ? rc : close_chunk_state(w, w->cur);
}

static void *worker_main(void *arg)
{
    rl_mcap_writer *w = arg;
    pthread_setname_np(pthread_self(), "rl-compress"); /* else the creator's name */
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->job && !w->quit)
            pthread_cond_wait(&w->cv, &w->lock);
        if (!w->job)
            break;
        chunk_state *cs = w->job;
        pthread_mutex_unlock(&w->lock);
        int rc = compress_chunk(w, cs);
        if (rc < 0)
            snprintf(w->job_msg, sizeof w->job_msg, "%s", rl_error_last());
        pthread_mutex_lock(&w->lock);
        w->job_rc = rc;
        w->job = NULL;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static int start_worker(rl_mcap_writer *w)
{
    if (pthread_mutex_init(&w->lock, NULL) != 0)
        return 0;
    if (pthread_cond_init(&w->cv, NULL) != 0) {
        pthread_mutex_destroy(&w->lock);
        return 0;
    }
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->lock);
        return 0;
    }
    w->thread_started = 1;
    return 1;
}

/* The open chunk is full: it goes to the worker, and meanwhile it is CRC'd and the chunk
 * handed over before is written; that one's emptied buffers become the open chunk.
 * Uncompressed chunks, or all without a worker (thread creation failed), are closed
 * here. */
static int submit_chunk(rl_mcap_writer *w)
{
    if (w->o.compression == RL_MCAP_COMPRESSION_NONE)
        return close_chunk(w);
    int rc = wait_worker(w);
    if (rc < 0)
        return rc;
    if (!w->thread_started && !start_worker(w))
        return close_chunk(w);
    chunk_state *prev = w->pending;
    pthread_mutex_lock(&w->lock);
    w->job = w->pending = w->cur;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->lock);
    w->cur = w->cur == &w->cs[0] ? &w->cs[1] : &w->cs[0];
    crc_chunk(w, w->pending); /* reads the records the worker compresses */
    return prev ? close_chunk_state(w, prev) : RL_OK;
}

/* Writes a Schema/Channel/Message into the open chunk or straight to the output. */
static int put_data_record(rl_mcap_writer *w, const rl_mcap_record *rec)
{
    if (!w->o.use_chunks)
        return emit_record(w, rec, NULL);
    int rc = mcap_buf_append_record(&w->cur->chunk, rec);
    return rc < 0 ? fail(w, rc) : RL_OK;
}

/* ---- Adding records --------------------------------------------------------------- */

/* Strings and 4-byte-prefixed fields cannot exceed UINT32_MAX bytes in the format. */
static int check_len(rl_mcap_bytes b, const char *what)
{
    if ((uint64_t)b.len > UINT32_MAX)
        return rl_error_set(RL_ERANGE,
                            "mcap writer: %s of %zu bytes exceeds the format's 4 GiB limit", what,
                            b.len);
    return RL_OK;
}

int rl_mcap_writer_add_schema(rl_mcap_writer *w, const rl_mcap_schema *schema)
{
    int rc = check_state(w);
    if (rc < 0)
        return rc;
    if (schema->id == 0)
        return rl_error_set(RL_EINVAL, "mcap writer: schema id 0 is reserved for 'no schema'");
    if ((rc = check_len(schema->name, "schema name")) < 0 ||
        (rc = check_len(schema->encoding, "schema encoding")) < 0 ||
        (rc = check_len(schema->data, "schema data")) < 0)
        return rc;
    rl_mcap_record r;
    memset(&r, 0, sizeof r);
    r.opcode = RL_MCAP_OP_SCHEMA;
    r.u.schema = *schema;
    uint32_t slot = w->schema_slot[schema->id];
    if (slot) {
        if (same_record(&r, &w->schemas[slot - 1]))
            return RL_OK;
        return rl_error_set(RL_EEXIST, "mcap writer: schema id %u already added with other content",
                            schema->id);
    }
    rc = grow((void **)&w->schemas, &w->schema_cap, w->schema_count, sizeof *w->schemas);
    if (rc < 0)
        return rc;
    owned_rec *o = &w->schemas[w->schema_count];
    rc = own_record(&r, o);
    if (rc < 0) {
        free(o->mem);
        return rc;
    }
    w->schema_count++;
    w->schema_slot[schema->id] = (uint32_t)w->schema_count;
    return put_data_record(w, &o->rec);
}

int rl_mcap_writer_add_channel(rl_mcap_writer *w, const rl_mcap_channel *channel)
{
    int rc = check_state(w);
    if (rc < 0)
        return rc;
    if ((rc = check_len(channel->topic, "topic")) < 0 ||
        (rc = check_len(channel->message_encoding, "message encoding")) < 0)
        return rc;
    if (channel->schema_id != 0 && !w->schema_slot[channel->schema_id])
        return rl_error_set(RL_EINVAL, "mcap writer: channel %u refers to unknown schema %u",
                            channel->id, channel->schema_id);
    rl_mcap_record r;
    memset(&r, 0, sizeof r);
    r.opcode = RL_MCAP_OP_CHANNEL;
    r.u.channel = *channel;
    uint32_t slot = w->channel_slot[channel->id];
    if (slot) {
        if (same_record(&r, &w->channels[slot - 1].r))
            return RL_OK;
        return rl_error_set(
            RL_EEXIST, "mcap writer: channel id %u already added with other content", channel->id);
    }
    rc = grow((void **)&w->channels, &w->channel_cap, w->channel_count, sizeof *w->channels);
    if (rc < 0)
        return rc;
    chan_entry *e = &w->channels[w->channel_count];
    memset(e, 0, sizeof *e);
    rc = own_record(&r, &e->r);
    if (rc < 0) {
        free(e->r.mem);
        return rc;
    }
    w->channel_count++;
    w->channel_slot[channel->id] = (uint32_t)w->channel_count;
    return put_data_record(w, &e->r.rec);
}

/* The hot path: a Message record encoded in place (the generic encoder costs several
 * times more per small message than copying its bytes, see bench/bench_mcap.c). */
static int put_message(rl_mcap_writer *w, const rl_mcap_message *msg)
{
    enum { FIXED = 2 + 4 + 8 + 8 };
    size_t n = RL_MCAP_RECORD_PREFIX + FIXED + msg->data.len;
    mcap_buf *dst = w->o.use_chunks ? &w->cur->chunk : &w->out;
    int rc = mcap_buf_reserve(dst, n);
    if (rc < 0)
        return fail(w, rc);
    uint8_t *p = dst->data + dst->len;
    p[0] = RL_MCAP_OP_MESSAGE;
    mcap_wr64(p + 1, (uint64_t)(FIXED + msg->data.len));
    mcap_wr16(p + 9, msg->channel_id);
    mcap_wr32(p + 11, msg->sequence);
    mcap_wr64(p + 15, msg->log_time);
    mcap_wr64(p + 23, msg->publish_time);
    if (msg->data.len)
        memcpy(p + RL_MCAP_RECORD_PREFIX + FIXED, msg->data.data, msg->data.len);
    dst->len += n;
    if (w->o.use_chunks)
        return RL_OK;
    account(w, p, n);
    return w->out.len >= OUT_FLUSH_AT ? drain(w) : RL_OK;
}

int rl_mcap_writer_add_message(rl_mcap_writer *w, const rl_mcap_message *msg)
{
    int rc = check_state_quick(w);
    if (rc < 0)
        return rc;
    uint32_t slot = w->channel_slot[msg->channel_id];
    if (!slot)
        return rl_error_set(RL_EINVAL, "mcap writer: message on unknown channel %u",
                            msg->channel_id);
    chan_entry *ch = &w->channels[slot - 1];
    if (ch->message_count == 0) {
        rc = grow((void **)&w->stat_order, &w->stat_order_cap, w->stat_order_count,
                  sizeof *w->stat_order);
        if (rc < 0)
            return rc;
    }
    chunk_state *cs = w->cur;
    if (w->o.use_chunks && w->o.message_index && !cs->mi_slot[msg->channel_id]) {
        if (cs->mi_count == cs->mi_init) {
            rc = grow((void **)&cs->mi, &cs->mi_cap, cs->mi_count, sizeof *cs->mi);
            if (rc < 0)
                return rc;
            memset(&cs->mi[cs->mi_init++], 0, sizeof *cs->mi);
        }
        rc = mcap_buf_reserve(&cs->mi[cs->mi_count].entries, 16);
        if (rc < 0)
            return rc;
        cs->mi[cs->mi_count].channel_id = msg->channel_id;
        cs->mi[cs->mi_count].entries.len = 0;
        cs->mi_count++;
        cs->mi_slot[msg->channel_id] = (uint32_t)cs->mi_count;
    }
    uint64_t offset_in_chunk = cs->chunk.len;
    rc = put_message(w, msg);
    if (rc < 0)
        return rc;
    if (w->o.use_chunks) {
        if (w->o.message_index) {
            mcap_buf *ix = &cs->mi[cs->mi_slot[msg->channel_id] - 1].entries;
            if (ix->cap - ix->len < 16 && (rc = mcap_buf_reserve(ix, 16)) < 0)
                return fail(w, rc);
            mcap_wr64(ix->data + ix->len, msg->log_time);
            mcap_wr64(ix->data + ix->len + 8, offset_in_chunk);
            ix->len += 16;
        }
        if (cs->messages == 0 || msg->log_time < cs->start_time)
            cs->start_time = msg->log_time;
        if (cs->messages == 0 || msg->log_time > cs->end_time)
            cs->end_time = msg->log_time;
        cs->messages++;
    }
    if (ch->message_count++ == 0)
        w->stat_order[w->stat_order_count++] = msg->channel_id;
    if (w->message_count == 0 || msg->log_time < w->msg_start)
        w->msg_start = msg->log_time;
    if (w->message_count == 0 || msg->log_time > w->msg_end)
        w->msg_end = msg->log_time;
    w->message_count++;
    if (w->o.use_chunks && cs->chunk.len > w->o.chunk_size)
        return submit_chunk(w);
    return RL_OK;
}

/* Copies strings an index entry keeps into one owned block. */
static uint8_t *copy_strings(rl_mcap_bytes *a, rl_mcap_bytes *b)
{
    size_t n = a->len + (b ? b->len : 0);
    uint8_t *mem = malloc(n ? n : 1);
    if (!mem)
        return NULL;
    if (a->len)
        memcpy(mem, a->data, a->len);
    a->data = mem;
    if (b) {
        if (b->len)
            memcpy(mem + a->len, b->data, b->len);
        b->data = mem + a->len;
    }
    return mem;
}

int rl_mcap_writer_add_attachment(rl_mcap_writer *w, const rl_mcap_attachment *a)
{
    int rc = check_state(w);
    if (rc < 0)
        return rc;
    if ((rc = check_len(a->name, "attachment name")) < 0 ||
        (rc = check_len(a->media_type, "media type")) < 0)
        return rc;
    if (w->o.attachment_index) {
        rc = grow((void **)&w->att_idx, &w->att_idx_cap, w->att_idx_count, sizeof *w->att_idx);
        if (rc < 0)
            return rc;
    }
    rl_mcap_record r;
    memset(&r, 0, sizeof r);
    r.opcode = RL_MCAP_OP_ATTACHMENT;
    r.u.attachment = *a;
    r.u.attachment.crc = w->o.attachment_crc ? rl_mcap_attachment_crc(a) : 0;
    uint64_t offset = pos(w), length = 0;
    if (w->o.attachment_index) {
        att_index_entry *e = &w->att_idx[w->att_idx_count];
        memset(e, 0, sizeof *e);
        e->ai.name = a->name;
        e->ai.media_type = a->media_type;
        e->strings = copy_strings(&e->ai.name, &e->ai.media_type);
        if (!e->strings)
            return rl_error_set(RL_ENOMEM, "mcap writer: out of memory");
    }
    rc = emit_record(w, &r, &length);
    if (rc < 0) {
        if (w->o.attachment_index)
            free(w->att_idx[w->att_idx_count].strings);
        return rc;
    }
    w->attachment_count++;
    if (w->o.attachment_index) {
        att_index_entry *e = &w->att_idx[w->att_idx_count++];
        e->ai.offset = offset;
        e->ai.length = length;
        e->ai.log_time = a->log_time;
        e->ai.create_time = a->create_time;
        e->ai.data_size = a->data.len;
    }
    return RL_OK;
}

int rl_mcap_writer_add_metadata(rl_mcap_writer *w, const rl_mcap_metadata *m)
{
    int rc = check_state(w);
    if (rc < 0)
        return rc;
    if (w->o.metadata_index) {
        rc = grow((void **)&w->meta_idx, &w->meta_idx_cap, w->meta_idx_count, sizeof *w->meta_idx);
        if (rc < 0)
            return rc;
    }
    rl_mcap_record r;
    memset(&r, 0, sizeof r);
    r.opcode = RL_MCAP_OP_METADATA;
    r.u.metadata = *m;
    uint64_t offset = pos(w), length = 0;
    rc = emit_record(w, &r, &length);
    if (rc < 0)
        return rc;
    w->metadata_count++;
    if (w->o.metadata_index) {
        meta_index_entry *e = &w->meta_idx[w->meta_idx_count];
        memset(e, 0, sizeof *e);
        e->mi.offset = offset;
        e->mi.length = length;
        e->mi.name = m->name;
        e->name = copy_strings(&e->mi.name, NULL);
        if (!e->name)
            return fail(w, rl_error_set(RL_ENOMEM, "mcap writer: out of memory"));
        w->meta_idx_count++;
    }
    return RL_OK;
}

/* The write half of a flush, for callers that fsync elsewhere (the recorder does it on
 * another thread so that its writer never waits for the disk). */
int rl_mcap_writer_end_chunk(rl_mcap_writer *w)
{
    int rc = check_state(w);
    if (rc == RL_OK)
        rc = close_chunk(w);
    if (rc == RL_OK)
        rc = drain(w);
    return rc;
}

int rl_mcap_writer_flush(rl_mcap_writer *w)
{
    int rc = check_state(w);
    if (rc == RL_OK)
        rc = close_chunk(w);
    if (rc == RL_OK)
        rc = drain(w);
    if (rc == RL_OK && fsync(w->fd) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP) {
        int e = errno;
        rc = fail(w, rl_error_set_errno(e == ENOSPC ? RL_ENOSPC : RL_EIO, e, "mcap writer: fsync"));
    }
    return rc;
}

/* One summary group: its records are emitted by the caller between begin and end. */
typedef struct group {
    uint8_t opcode;
    uint64_t start, length;
} group;

static int emit_summary(rl_mcap_writer *w)
{
    int rc = close_chunk(w);
    if (rc < 0)
        return rc;

    rl_mcap_record r;
    memset(&r, 0, sizeof r);
    r.opcode = RL_MCAP_OP_DATA_END;
    r.u.data_end.data_section_crc = w->o.data_section_crc ? w->data_crc : 0;
    w->phase = PHASE_DONE;
    if ((rc = emit_record(w, &r, NULL)) < 0)
        return rc;

    w->phase = PHASE_SUMMARY;
    w->summary_crc = 0;
    uint64_t summary_start = pos(w);
    group groups[6];
    size_t ngroups = 0;
#define GROUP_BEGIN(op)                                                                            \
    do {                                                                                           \
        groups[ngroups].opcode = (op);                                                             \
        groups[ngroups].start = pos(w);                                        \
    } while (0)
#define GROUP_END()                                                                                \
    do {                                                                                           \
        groups[ngroups].length = pos(w) - groups[ngroups].start;               \
        if (groups[ngroups].length)                                                                \
            ngroups++;                                                                             \
    } while (0)

    if (w->o.repeated_schemas) {
        GROUP_BEGIN(RL_MCAP_OP_SCHEMA);
        for (size_t i = 0; i < w->schema_count && rc == RL_OK; i++)
            rc = emit_record(w, &w->schemas[i].rec, NULL);
        GROUP_END();
    }
    if (w->o.repeated_channels && rc == RL_OK) {
        GROUP_BEGIN(RL_MCAP_OP_CHANNEL);
        for (size_t i = 0; i < w->channel_count && rc == RL_OK; i++)
            rc = emit_record(w, &w->channels[i].r.rec, NULL);
        GROUP_END();
    }
    if (w->o.statistics && rc == RL_OK) {
        uint8_t *counts = malloc(10 * w->stat_order_count + 1);
        if (!counts)
            return fail(w, rl_error_set(RL_ENOMEM, "mcap writer: out of memory"));
        for (size_t i = 0; i < w->stat_order_count; i++) {
            uint16_t id = w->stat_order[i];
            mcap_wr16(counts + 10 * i, id);
            mcap_wr64(counts + 10 * i + 2, w->channels[w->channel_slot[id] - 1].message_count);
        }
        memset(&r, 0, sizeof r);
        r.opcode = RL_MCAP_OP_STATISTICS;
        rl_mcap_statistics *st = &r.u.statistics;
        st->message_count = w->message_count;
        st->schema_count = (uint16_t)w->schema_count;
        st->channel_count = (uint32_t)w->channel_count;
        st->attachment_count = w->attachment_count;
        st->metadata_count = w->metadata_count;
        st->chunk_count = w->chunk_count;
        st->message_start_time = w->message_count ? w->msg_start : 0;
        st->message_end_time = w->message_count ? w->msg_end : 0;
        st->channel_message_counts.data = counts;
        st->channel_message_counts.len = 10 * w->stat_order_count;
        GROUP_BEGIN(RL_MCAP_OP_STATISTICS);
        rc = emit_record(w, &r, NULL);
        GROUP_END();
        free(counts);
    }
    if (w->o.metadata_index && rc == RL_OK) {
        GROUP_BEGIN(RL_MCAP_OP_METADATA_INDEX);
        for (size_t i = 0; i < w->meta_idx_count && rc == RL_OK; i++) {
            memset(&r, 0, sizeof r);
            r.opcode = RL_MCAP_OP_METADATA_INDEX;
            r.u.metadata_index = w->meta_idx[i].mi;
            rc = emit_record(w, &r, NULL);
        }
        GROUP_END();
    }
    if (w->o.attachment_index && rc == RL_OK) {
        GROUP_BEGIN(RL_MCAP_OP_ATTACHMENT_INDEX);
        for (size_t i = 0; i < w->att_idx_count && rc == RL_OK; i++) {
            memset(&r, 0, sizeof r);
            r.opcode = RL_MCAP_OP_ATTACHMENT_INDEX;
            r.u.attachment_index = w->att_idx[i].ai;
            rc = emit_record(w, &r, NULL);
        }
        GROUP_END();
    }
    if (w->o.chunk_index && rc == RL_OK) {
        GROUP_BEGIN(RL_MCAP_OP_CHUNK_INDEX);
        for (size_t i = 0; i < w->chunk_idx_count && rc == RL_OK; i++) {
            memset(&r, 0, sizeof r);
            r.opcode = RL_MCAP_OP_CHUNK_INDEX;
            r.u.chunk_index = w->chunk_idx[i].ci;
            rc = emit_record(w, &r, NULL);
        }
        GROUP_END();
    }
#undef GROUP_BEGIN
#undef GROUP_END
    if (rc < 0)
        return rc;
    uint64_t summary_offset_start = pos(w);
    int have_summary = summary_offset_start != summary_start;
    int have_offsets = 0;
    if (w->o.summary_offsets) {
        for (size_t i = 0; i < ngroups && rc == RL_OK; i++) {
            memset(&r, 0, sizeof r);
            r.opcode = RL_MCAP_OP_SUMMARY_OFFSET;
            r.u.summary_offset.group_opcode = groups[i].opcode;
            r.u.summary_offset.group_start = groups[i].start;
            r.u.summary_offset.group_length = groups[i].length;
            rc = emit_record(w, &r, NULL);
            have_offsets = 1;
        }
    }
    if (rc < 0)
        return rc;

    /* The footer's CRC covers the summary and the footer's own first fields. */
    uint8_t footer[RL_MCAP_RECORD_PREFIX + RL_MCAP_FOOTER_BODY];
    footer[0] = RL_MCAP_OP_FOOTER;
    mcap_wr64(footer + 1, RL_MCAP_FOOTER_BODY);
    mcap_wr64(footer + 9, have_summary ? summary_start : 0);
    mcap_wr64(footer + 17, have_offsets ? summary_offset_start : 0);
    uint32_t crc = rl_crc32(w->summary_crc, footer, 25);
    mcap_wr32(footer + 25, w->o.summary_crc ? crc : 0);
    w->phase = PHASE_DONE;
    if ((rc = emit_bytes(w, footer, sizeof footer)) < 0)
        return rc;
    if ((rc = emit_bytes(w, rl_mcap_magic, RL_MCAP_MAGIC_LEN)) < 0)
        return rc;
    return drain(w);
}

int rl_mcap_writer_close(rl_mcap_writer *w)
{
    if (!w)
        return rl_error_set(RL_EINVAL, "mcap writer: NULL writer");
    int rc = check_state(w);
    if (rc == RL_OK)
        rc = emit_summary(w);
    if (w->owns_fd) {
        if (close(w->fd) != 0 && rc == RL_OK)
            rc = rl_error_set_errno(RL_EIO, errno, "mcap writer: close");
        w->owns_fd = 0;
    }
    w->phase = PHASE_DONE;
    rl_mcap_writer_free(w);
    return rc;
}

void rl_mcap_writer_free(rl_mcap_writer *w)
{
    if (!w)
        return;
    if (w->thread_started) {
        pthread_mutex_lock(&w->lock);
        w->quit = 1;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL); /* after the chunk it may be writing */
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->lock);
    }
    if (w->owns_fd)
        close(w->fd);
    mcap_buf_free(&w->out);
    for (int k = 0; k < 2; k++) {
        chunk_state *cs = &w->cs[k];
        mcap_buf_free(&cs->chunk);
        mcap_buf_free(&cs->comp);
        mcap_compress_ctx_free(cs->zstd_ctx);
        for (size_t i = 0; i < cs->mi_init; i++)
            mcap_buf_free(&cs->mi[i].entries);
        free(cs->mi);
    }
    for (size_t i = 0; i < w->schema_count; i++)
        free(w->schemas[i].mem);
    free(w->schemas);
    for (size_t i = 0; i < w->channel_count; i++)
        free(w->channels[i].r.mem);
    free(w->channels);
    free(w->stat_order);
    for (size_t i = 0; i < w->chunk_idx_count; i++)
        free(w->chunk_idx[i].offsets);
    free(w->chunk_idx);
    for (size_t i = 0; i < w->att_idx_count; i++)
        free(w->att_idx[i].strings);
    free(w->att_idx);
    for (size_t i = 0; i < w->meta_idx_count; i++)
        free(w->meta_idx[i].name);
    free(w->meta_idx);
    free(w);
}

/* Public: a chunk handed to the worker is written first, so the offset is exact (the
 * writer is const to callers but its own object, hence the cast; an error fails the
 * writer and is reported by the next call). */
uint64_t rl_mcap_writer_position(const rl_mcap_writer *w)
{
    rl_mcap_writer *mw = (rl_mcap_writer *)w;
    if (!mw->failed)
        settle(mw);
    return pos(w);
}
