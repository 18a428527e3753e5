/* MCAP doctor: checks a whole file against the specification's invariants (placement of
 * records, CRCs, chunk times and sizes, message indexes, chunk/attachment/metadata
 * indexes, statistics, summary offsets, footer) and lists every violation with its byte
 * offset, skipping unreadable stretches the way recovery does. */
#include "core/text.h"
#include "mcap_internal.h"

#include "runlab/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcap_map.h"

enum { NIDS = 65536, MAX_VIOLATIONS = 1000 };

typedef struct so_ref {
    rl_mcap_summary_offset so;
    uint64_t offset;
} so_ref;

typedef struct mi_ref {
    uint16_t channel;
    uint64_t offset, length;
} mi_ref;

typedef struct chunk_info {
    uint64_t offset, length, start, end, csize, usize;
    uint8_t comp[8];
    size_t comp_len;
    size_t mi_first, mi_count; /* in d->mis */
    int readable;
} chunk_info;

typedef struct msg_ref {
    uint64_t offset, log_time;
    uint16_t channel;
    uint8_t indexed;
} msg_ref;

typedef struct def {
    uint8_t *mem;
    size_t len;
} def;

typedef struct named_ref {
    uint64_t offset, length, log_time, create_time, data_size;
    char *name, *media_type; /* NUL-terminated for messages; may hold NULs */
    size_t name_len, media_len;
} named_ref;

enum section { SEC_DATA, SEC_SUMMARY, SEC_OFFSETS, SEC_END };

typedef struct dctx {
    const uint8_t *data;
    size_t len;
    rl_mcap_doctor_report *rep;
    uint64_t max_chunk;
    enum section sec;
    uint8_t prev_op;
    int saw_header, saw_data_end, saw_footer;
    uint64_t summary_first, offsets_first; /* offsets of the first records, 0 if none */
    /* definitions by id */
    def *schemas, *channels;
    uint8_t *reported_channel;
    uint64_t *per_channel;
    uint64_t messages, msg_start, msg_end;
    uint64_t attachments, metadata;
    /* chunks and the message indexes after them */
    chunk_info *chunks;
    size_t chunk_count, chunk_cap;
    mi_ref *mis;
    size_t mi_count, mi_cap;
    msg_ref *cur; /* messages of the last chunk */
    size_t cur_count, cur_cap;
    int cur_valid;
    named_ref *atts, *metas;
    size_t att_count, att_cap, meta_count, meta_cap;
    /* summary content */
    int stats_seen;
    rl_mcap_statistics stats;
    uint64_t stats_offset;
    size_t chunk_index_count, att_index_count, meta_index_count;
    so_ref *sos;
    size_t so_count, so_cap;
    uint64_t footer_offset;
    rl_mcap_footer footer;
    int oom;
    int has_cause;     /* damage was found: later violations are its consequences */
    size_t cause;      /* index of the latest cause in the report, SIZE_MAX if not kept */
    size_t data_schemas, data_channels; /* ids first defined in the data section */
    mcap_chunk_set seen; /* chunks, for exact copies */
    size_t reader_warnings;
    rl_mcap_reader *reader;
} dctx;

/* Appends to a list of violations or warnings (the first MAX_VIOLATIONS are kept; the
 * rest are counted in `dropped`). Returns its index, or SIZE_MAX when not kept. */
static size_t list_add(dctx *d, rl_mcap_violation **list, size_t *count, size_t *dropped,
                       uint64_t offset, const char *fmt, va_list ap)
    __attribute__((format(printf, 6, 0)));

static size_t list_add(dctx *d, rl_mcap_violation **list, size_t *count, size_t *dropped,
                       uint64_t offset, const char *fmt, va_list ap)
{
    if (*count >= MAX_VIOLATIONS) {
        (*dropped)++;
        return SIZE_MAX;
    }
    if ((*count & (*count - 1)) == 0) {
        size_t ncap = *count ? *count * 2 : 8;
        rl_mcap_violation *p = realloc(*list, ncap * sizeof *p);
        if (!p) {
            d->oom = 1;
            return SIZE_MAX;
        }
        *list = p;
    }
    rl_mcap_violation *v = &(*list)[*count];
    memset(v, 0, sizeof *v);
    v->offset = offset;
    vsnprintf(v->what, sizeof v->what, fmt, ap);
    return (*count)++;
}

/* A violation. After damage (a cause, see vio_cause) it is counted as a consequence of the
 * latest cause instead of listed: one cause is one violation. */
static void vio(dctx *d, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void vio(dctx *d, uint64_t offset, const char *fmt, ...)
{
    rl_mcap_doctor_report *r = d->rep;
    if (d->has_cause) {
        if (d->cause != SIZE_MAX)
            r->violations[d->cause].consequences++;
        else
            r->dropped++;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    list_add(d, &r->violations, &r->count, &r->dropped, offset, fmt, ap);
    va_end(ap);
}

/* Damage itself (unreadable bytes, a chunk that fails, a chunk written twice): listed,
 * and what it breaks elsewhere (indexes, statistics, offsets, CRCs) counts against it. */
static void vio_cause(dctx *d, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void vio_cause(dctx *d, uint64_t offset, const char *fmt, ...)
{
    rl_mcap_doctor_report *r = d->rep;
    va_list ap;
    va_start(ap, fmt);
    d->cause = list_add(d, &r->violations, &r->count, &r->dropped, offset, fmt, ap);
    va_end(ap);
    d->has_cause = 1;
}

/* Not a violation of the specification, but worth knowing ("warning:" lines). */
static void warn(dctx *d, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void warn(dctx *d, uint64_t offset, const char *fmt, ...)
{
    size_t dropped = 0;
    va_list ap;
    va_start(ap, fmt);
    list_add(d, &d->rep->warnings, &d->rep->warning_count, &dropped, offset, fmt, ap);
    va_end(ap);
}

/* Room for one more element; on failure the doctor records that it ran out of memory. */
static int grow(dctx *d, void **arr, size_t *cap, size_t count, size_t size)
{
    if (rl_grow_array(arr, cap, count + 1, size, "mcap doctor") == RL_OK)
        return 1;
    d->oom = 1;
    return 0;
}

static const char *op_name(uint8_t op)
{
    return rl_mcap_opcode_name(op);
}

/* Remembers a Schema/Channel definition, or compares it with the first one. */
static void define(dctx *d, def *table, uint16_t id, const rl_mcap_record *rec, uint64_t off,
                   int in_summary)
{
    size_t n = rl_mcap_record_encode(rec, NULL, 0);
    def *e = &table[id];
    if (e->mem) {
        uint8_t *tmp = malloc(n);
        if (!tmp) {
            d->oom = 1;
            return;
        }
        rl_mcap_record_encode(rec, tmp, n);
        if (n != e->len || memcmp(tmp, e->mem, n) != 0)
            vio(d, off, "%s record: id %u %s differs from its first definition", op_name(rec->opcode),
                id, in_summary ? "repeated in the summary" : "redefined");
        free(tmp);
        return;
    }
    e->mem = malloc(n);
    if (!e->mem) {
        d->oom = 1;
        return;
    }
    if (!in_summary) {
        if (table == d->schemas)
            d->data_schemas++;
        else
            d->data_channels++;
    }
    e->len = n;
    rl_mcap_record_encode(rec, e->mem, n);
}

static void data_record(dctx *d, const rl_mcap_record *rec, uint64_t off, int in_chunk)
{
    switch (rec->opcode) {
    case RL_MCAP_OP_SCHEMA:
        if (rec->u.schema.id == 0)
            vio(d, off, "Schema record: id 0 is reserved");
        else
            define(d, d->schemas, rec->u.schema.id, rec, off, d->sec != SEC_DATA);
        break;
    case RL_MCAP_OP_CHANNEL: {
        uint16_t sid = rec->u.channel.schema_id;
        if (sid != 0 && !d->schemas[sid].mem)
            vio(d, off, "Channel record: channel %u refers to schema %u, not defined before it",
                rec->u.channel.id, sid);
        define(d, d->channels, rec->u.channel.id, rec, off, d->sec != SEC_DATA);
        break;
    }
    case RL_MCAP_OP_MESSAGE: {
        const rl_mcap_message *m = &rec->u.message;
        if (!d->channels[m->channel_id].mem && !d->reported_channel[m->channel_id]) {
            d->reported_channel[m->channel_id] = 1;
            vio(d, off, "Message record: channel %u is not defined before its first message",
                m->channel_id);
        }
        if (d->messages == 0 || m->log_time < d->msg_start)
            d->msg_start = m->log_time;
        if (d->messages == 0 || m->log_time > d->msg_end)
            d->msg_end = m->log_time;
        d->messages++;
        d->per_channel[m->channel_id]++;
        break;
    }
    default:
        if (in_chunk && rec->opcode < 0x80)
            vio(d, off, "%s record inside a chunk (only Schema, Channel and Message belong there)",
                op_name(rec->opcode));
        break;
    }
}

static void check_chunk(dctx *d, const rl_mcap_record *rec)
{
    const rl_mcap_chunk *ch = &rec->u.chunk;
    if (!grow(d, (void **)&d->chunks, &d->chunk_cap, d->chunk_count, sizeof *d->chunks))
        return;
    chunk_info *ci = &d->chunks[d->chunk_count++];
    memset(ci, 0, sizeof *ci);
    ci->offset = rec->offset;
    ci->length = RL_MCAP_RECORD_PREFIX + (uint64_t)rec->body.len;
    ci->start = ch->message_start_time;
    ci->end = ch->message_end_time;
    ci->csize = ch->records.len;
    ci->usize = ch->uncompressed_size;
    ci->comp_len = ch->compression.len < sizeof ci->comp ? ch->compression.len : sizeof ci->comp;
    memcpy(ci->comp, ch->compression.data, ci->comp_len);
    ci->mi_first = d->mi_count;
    d->cur_count = 0;
    d->cur_valid = 0;
    uint64_t orig = mcap_chunk_set_find_or_add(&d->seen, d->data, ci->offset, ci->length);
    if (orig != UINT64_MAX) {
        /* Its messages are not counted twice; what the copy shifts or breaks elsewhere
         * (offsets, CRCs, indexes) follows from it. */
        vio_cause(d, rec->offset, "Chunk record: an exact copy of the chunk at byte %llu",
                  (unsigned long long)orig);
        return;
    }
    const uint8_t *buf = NULL;
    size_t n = 0;
    int owned = 0;
    int rc = rl_mcap_chunk_decompress(ch, d->max_chunk, 1, &buf, &n, &owned);
    if (rc == RL_ECRC) {
        /* Reported once; the records are still walked so that the checks which count
         * them (indexes, statistics) do not report the same damage again. */
        vio_cause(d, rec->offset, "Chunk record: %s", rl_error_last());
        rc = rl_mcap_chunk_decompress(ch, d->max_chunk, 0, &buf, &n, &owned);
        if (rc < 0)
            return;
    } else if (rc < 0) {
        if (rc == RL_ENOMEM)
            d->oom = 1;
        vio_cause(d, rec->offset, "Chunk record: %s", rl_error_last());
        return;
    }
    ci->readable = 1;
    d->cur_valid = 1;
    size_t pos = 0;
    uint64_t lo = 0, hi = 0;
    size_t count = 0;
    rl_mcap_record in;
    for (;;) {
        size_t at = pos;
        rc = rl_mcap_records_next(buf, n, &pos, &in);
        if (rc == 0)
            break;
        if (rc < 0) {
            vio_cause(d, rec->offset, "Chunk record: records offset %zu: %s", at,
                      mcap_skip_byte_prefix(rl_error_last()));
            break;
        }
        data_record(d, &in, rec->offset, 1);
        if (in.opcode != RL_MCAP_OP_MESSAGE)
            continue;
        uint64_t t = in.u.message.log_time;
        if (count == 0 || t < lo)
            lo = t;
        if (count == 0 || t > hi)
            hi = t;
        count++;
        if (!grow(d, (void **)&d->cur, &d->cur_cap, d->cur_count, sizeof *d->cur))
            break;
        msg_ref *m = &d->cur[d->cur_count++];
        m->offset = at;
        m->log_time = t;
        m->channel = in.u.message.channel_id;
        m->indexed = 0;
    }
    if (owned)
        free((void *)buf);
    if (count && (ch->message_start_time != lo || ch->message_end_time != hi))
        vio(d, rec->offset,
            "Chunk record: message times %llu..%llu, but its messages span %llu..%llu",
            (unsigned long long)ch->message_start_time, (unsigned long long)ch->message_end_time,
            (unsigned long long)lo, (unsigned long long)hi);
}

static msg_ref *find_msg(dctx *d, uint64_t offset)
{
    size_t lo = 0, hi = d->cur_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->cur[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->cur_count && d->cur[lo].offset == offset ? &d->cur[lo] : NULL;
}

static void check_message_index(dctx *d, const rl_mcap_record *rec)
{
    const rl_mcap_message_index *mi = &rec->u.message_index;
    if (d->prev_op != RL_MCAP_OP_CHUNK && d->prev_op != RL_MCAP_OP_MESSAGE_INDEX) {
        vio(d, rec->offset, "MessageIndex record: not directly after a Chunk or MessageIndex");
        return;
    }
    if (!d->chunk_count)
        return;
    chunk_info *ci = &d->chunks[d->chunk_count - 1];
    for (size_t i = ci->mi_first; i < d->mi_count; i++)
        if (d->mis[i].channel == mi->channel_id)
            vio(d, rec->offset, "MessageIndex record: second index for channel %u of one chunk",
                mi->channel_id);
    if (grow(d, (void **)&d->mis, &d->mi_cap, d->mi_count, sizeof *d->mis)) {
        mi_ref *m = &d->mis[d->mi_count++];
        m->channel = mi->channel_id;
        m->offset = rec->offset;
        m->length = RL_MCAP_RECORD_PREFIX + (uint64_t)rec->body.len;
        ci->mi_count++;
    }
    if (!d->cur_valid)
        return;
    size_t bad = 0;
    uint64_t first_bad = 0;
    for (size_t i = 0; i < mi->count; i++) {
        uint64_t t, off;
        rl_mcap_message_index_entry(mi, i, &t, &off);
        msg_ref *m = find_msg(d, off);
        if (!m || m->channel != mi->channel_id || m->log_time != t) {
            if (bad++ == 0)
                first_bad = i;
            continue;
        }
        m->indexed = 1;
    }
    if (bad) {
        uint64_t t, off;
        rl_mcap_message_index_entry(mi, (size_t)first_bad, &t, &off);
        vio(d, rec->offset,
            "MessageIndex record: channel %u: %zu of %zu entries do not point at a message of "
            "that channel and log time (first: entry %llu, offset %llu, log_time %llu)",
            mi->channel_id, bad, mi->count, (unsigned long long)first_bad,
            (unsigned long long)off, (unsigned long long)t);
    }
    size_t have = 0;
    for (size_t i = 0; i < d->cur_count; i++)
        have += d->cur[i].channel == mi->channel_id;
    if (have != mi->count)
        vio(d, rec->offset,
            "MessageIndex record: channel %u: %zu entries, but the chunk holds %zu messages of it",
            mi->channel_id, mi->count, have);
}

/* After the message indexes of a chunk: when it has any, every channel needs one. */
static void end_of_chunk_group(dctx *d)
{
    if (!d->chunk_count || !d->cur_valid)
        return;
    chunk_info *ci = &d->chunks[d->chunk_count - 1];
    if (ci->mi_count == 0)
        return;
    for (size_t i = 0; i < d->cur_count; i++) {
        uint16_t c = d->cur[i].channel;
        int found = 0;
        for (size_t j = ci->mi_first; j < ci->mi_first + ci->mi_count && !found; j++)
            found = d->mis[j].channel == c;
        if (!found) {
            vio(d, ci->offset, "Chunk record: channel %u has messages but no MessageIndex", c);
            break;
        }
    }
    d->cur_valid = 0;
}

static chunk_info *find_chunk(dctx *d, uint64_t offset)
{
    size_t lo = 0, hi = d->chunk_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->chunks[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->chunk_count && d->chunks[lo].offset == offset ? &d->chunks[lo] : NULL;
}

static void check_chunk_index(dctx *d, const rl_mcap_record *rec)
{
    const rl_mcap_chunk_index *x = &rec->u.chunk_index;
    d->chunk_index_count++;
    chunk_info *ci = find_chunk(d, x->chunk_start_offset);
    if (!ci) {
        vio(d, rec->offset, "ChunkIndex record: chunk_start_offset %llu is not a Chunk record",
            (unsigned long long)x->chunk_start_offset);
        return;
    }
    if (x->chunk_length != ci->length || x->compressed_size != ci->csize ||
        x->uncompressed_size != ci->usize ||
        !rl_mcap_bytes_eq(x->compression, (rl_mcap_bytes){ci->comp, ci->comp_len}))
        vio(d, rec->offset,
            "ChunkIndex record: chunk at %llu: length/sizes/compression (%llu, %llu, %llu) "
            "differ from the chunk's (%llu, %llu, %llu)",
            (unsigned long long)ci->offset, (unsigned long long)x->chunk_length,
            (unsigned long long)x->compressed_size, (unsigned long long)x->uncompressed_size,
            (unsigned long long)ci->length, (unsigned long long)ci->csize,
            (unsigned long long)ci->usize);
    if (x->message_start_time != ci->start || x->message_end_time != ci->end)
        vio(d, rec->offset,
            "ChunkIndex record: chunk at %llu: times %llu..%llu differ from the chunk's %llu..%llu",
            (unsigned long long)ci->offset, (unsigned long long)x->message_start_time,
            (unsigned long long)x->message_end_time, (unsigned long long)ci->start,
            (unsigned long long)ci->end);
    size_t pos = 0, n = 0;
    uint16_t ch;
    uint64_t off;
    uint64_t total = 0;
    while (rl_mcap_map_u16u64_next(x->message_index_offsets, &pos, &ch, &off) == 1) {
        n++;
        int ok = 0;
        for (size_t j = ci->mi_first; j < ci->mi_first + ci->mi_count; j++)
            if (d->mis[j].channel == ch && d->mis[j].offset == off)
                ok = 1;
        if (!ok)
            vio(d, rec->offset,
                "ChunkIndex record: chunk at %llu: message index offset %llu for channel %u is "
                "not that channel's MessageIndex",
                (unsigned long long)ci->offset, (unsigned long long)off, ch);
    }
    for (size_t j = ci->mi_first; j < ci->mi_first + ci->mi_count; j++)
        total += d->mis[j].length;
    if (n != ci->mi_count)
        vio(d, rec->offset,
            "ChunkIndex record: chunk at %llu: %zu message index offsets, but %zu MessageIndex "
            "records follow the chunk",
            (unsigned long long)ci->offset, n, ci->mi_count);
    if (x->message_index_length != total)
        vio(d, rec->offset,
            "ChunkIndex record: chunk at %llu: message_index_length %llu, but the indexes take %llu",
            (unsigned long long)ci->offset, (unsigned long long)x->message_index_length,
            (unsigned long long)total);
}

/* A name kept by remember_named, as bytes (it may hold NULs). */
static rl_mcap_bytes kept(const char *s, size_t len)
{
    return (rl_mcap_bytes){(const uint8_t *)s, len};
}

static void remember_named(dctx *d, named_ref **arr, size_t *count, size_t *cap,
                           const rl_mcap_record *rec, rl_mcap_bytes name, rl_mcap_bytes media)
{
    if (!grow(d, (void **)arr, cap, *count, sizeof **arr))
        return;
    named_ref *e = &(*arr)[*count];
    memset(e, 0, sizeof *e);
    e->offset = rec->offset;
    e->length = RL_MCAP_RECORD_PREFIX + (uint64_t)rec->body.len;
    e->name = rl_mcap_bytes_dup(name);
    e->media_type = rl_mcap_bytes_dup(media);
    if (!e->name || !e->media_type) {
        free(e->name);
        free(e->media_type);
        d->oom = 1;
        return;
    }
    e->name_len = name.len;
    e->media_len = media.len;
    if (rec->opcode == RL_MCAP_OP_ATTACHMENT) {
        e->log_time = rec->u.attachment.log_time;
        e->create_time = rec->u.attachment.create_time;
        e->data_size = rec->u.attachment.data.len;
    }
    (*count)++;
}

static named_ref *find_named(named_ref *arr, size_t count, uint64_t offset)
{
    for (size_t i = 0; i < count; i++)
        if (arr[i].offset == offset)
            return &arr[i];
    return NULL;
}

static void check_attachment_index(dctx *d, const rl_mcap_record *rec)
{
    const rl_mcap_attachment_index *x = &rec->u.attachment_index;
    d->att_index_count++;
    named_ref *a = find_named(d->atts, d->att_count, x->offset);
    if (!a) {
        vio(d, rec->offset, "AttachmentIndex record: offset %llu is not an Attachment record",
            (unsigned long long)x->offset);
        return;
    }
    if (x->length != a->length || x->log_time != a->log_time || x->create_time != a->create_time ||
        x->data_size != a->data_size || !rl_mcap_bytes_eq(x->name, kept(a->name, a->name_len)) ||
        !rl_mcap_bytes_eq(x->media_type, kept(a->media_type, a->media_len)))
        vio(d, rec->offset,
            "AttachmentIndex record: fields differ from the Attachment at %llu ('%s')",
            (unsigned long long)a->offset, a->name);
}

static void check_metadata_index(dctx *d, const rl_mcap_record *rec)
{
    const rl_mcap_metadata_index *x = &rec->u.metadata_index;
    d->meta_index_count++;
    named_ref *m = find_named(d->metas, d->meta_count, x->offset);
    if (!m) {
        vio(d, rec->offset, "MetadataIndex record: offset %llu is not a Metadata record",
            (unsigned long long)x->offset);
        return;
    }
    if (x->length != m->length || !rl_mcap_bytes_eq(x->name, kept(m->name, m->name_len)))
        vio(d, rec->offset, "MetadataIndex record: length or name differ from the Metadata at %llu",
            (unsigned long long)m->offset);
}

static int allowed(enum section sec, uint8_t op)
{
    if (op >= 0x80)
        return sec != SEC_OFFSETS;
    switch (sec) {
    case SEC_DATA:
        return op == RL_MCAP_OP_SCHEMA || op == RL_MCAP_OP_CHANNEL || op == RL_MCAP_OP_MESSAGE ||
               op == RL_MCAP_OP_CHUNK || op == RL_MCAP_OP_MESSAGE_INDEX ||
               op == RL_MCAP_OP_ATTACHMENT || op == RL_MCAP_OP_METADATA ||
               op == RL_MCAP_OP_DATA_END;
    case SEC_SUMMARY:
        return op == RL_MCAP_OP_SCHEMA || op == RL_MCAP_OP_CHANNEL ||
               op == RL_MCAP_OP_STATISTICS || op == RL_MCAP_OP_CHUNK_INDEX ||
               op == RL_MCAP_OP_ATTACHMENT_INDEX || op == RL_MCAP_OP_METADATA_INDEX ||
               op == RL_MCAP_OP_SUMMARY_OFFSET || op == RL_MCAP_OP_FOOTER;
    case SEC_OFFSETS:
        return op == RL_MCAP_OP_SUMMARY_OFFSET || op == RL_MCAP_OP_FOOTER;
    default:
        return 0;
    }
}

static void top_record(dctx *d, const rl_mcap_record *rec)
{
    uint8_t op = rec->opcode;
    uint64_t off = rec->offset;
    if (d->prev_op == RL_MCAP_OP_CHUNK || d->prev_op == RL_MCAP_OP_MESSAGE_INDEX)
        if (op != RL_MCAP_OP_MESSAGE_INDEX)
            end_of_chunk_group(d);
    if (!d->saw_header) {
        d->saw_header = 1;
        if (op != RL_MCAP_OP_HEADER)
            vio(d, off, "%s record: the first record must be the Header", op_name(op));
        else {
            d->prev_op = op;
            return;
        }
    } else if (op == RL_MCAP_OP_HEADER) {
        vio(d, off, "Header record: a second Header");
        d->prev_op = op;
        return;
    }
    if (op == RL_MCAP_OP_FOOTER && d->sec == SEC_DATA)
        vio(d, off, "Footer record: no DataEnd record before it");
    if (d->sec == SEC_SUMMARY && op == RL_MCAP_OP_SUMMARY_OFFSET) {
        d->sec = SEC_OFFSETS;
        d->offsets_first = off;
    }
    if (op != RL_MCAP_OP_FOOTER && !allowed(d->sec, op))
        vio(d, off, "%s record: not allowed in the %s", op_name(op),
            d->sec == SEC_DATA      ? "data section"
            : d->sec == SEC_SUMMARY ? "summary section"
                                    : "summary offset section");
    if (d->sec == SEC_SUMMARY && !d->summary_first && op != RL_MCAP_OP_FOOTER)
        d->summary_first = off;
    switch (op) {
    case RL_MCAP_OP_SCHEMA:
    case RL_MCAP_OP_CHANNEL:
    case RL_MCAP_OP_MESSAGE:
        data_record(d, rec, off, 0);
        break;
    case RL_MCAP_OP_CHUNK:
        check_chunk(d, rec);
        break;
    case RL_MCAP_OP_MESSAGE_INDEX:
        check_message_index(d, rec);
        break;
    case RL_MCAP_OP_ATTACHMENT:
        d->attachments++;
        remember_named(d, &d->atts, &d->att_count, &d->att_cap, rec, rec->u.attachment.name,
                       rec->u.attachment.media_type);
        break;
    case RL_MCAP_OP_METADATA: {
        rl_mcap_bytes none = {NULL, 0};
        d->metadata++;
        remember_named(d, &d->metas, &d->meta_count, &d->meta_cap, rec, rec->u.metadata.name,
                       none);
        break;
    }
    case RL_MCAP_OP_DATA_END:
        if (d->saw_data_end)
            vio(d, off, "DataEnd record: a second DataEnd");
        if (d->reader && rl_mcap_reader_warning_count(d->reader) > d->reader_warnings) {
            d->reader_warnings = rl_mcap_reader_warning_count(d->reader);
            vio(d, off, "%s", mcap_skip_byte_prefix(rl_mcap_reader_warning(d->reader)));
        }
        d->saw_data_end = 1;
        d->sec = SEC_SUMMARY;
        break;
    case RL_MCAP_OP_STATISTICS:
        if (d->stats_seen++)
            vio(d, off, "Statistics record: more than one");
        else {
            d->stats = rec->u.statistics;
            d->stats_offset = off;
        }
        break;
    case RL_MCAP_OP_CHUNK_INDEX:
        check_chunk_index(d, rec);
        break;
    case RL_MCAP_OP_ATTACHMENT_INDEX:
        check_attachment_index(d, rec);
        break;
    case RL_MCAP_OP_METADATA_INDEX:
        check_metadata_index(d, rec);
        break;
    case RL_MCAP_OP_SUMMARY_OFFSET:
        if (grow(d, (void **)&d->sos, &d->so_cap, d->so_count, sizeof *d->sos)) {
            d->sos[d->so_count].so = rec->u.summary_offset;
            d->sos[d->so_count++].offset = off;
        }
        break;
    case RL_MCAP_OP_FOOTER:
        d->saw_footer = 1;
        d->footer = rec->u.footer;
        d->footer_offset = off;
        d->sec = SEC_END;
        break;
    default:
        break;
    }
    d->prev_op = op;
}

/* Statistics schema_count / channel_count. libmcap (and so rosbag2) repeats in the summary
 * schemas and channels that no message used and counts only those of the data section;
 * the specification allows either reading, so that is a warning, not a violation. */
static void count_check(dctx *d, uint64_t off, const char *field, uint64_t stated, size_t all,
                        size_t in_data, const char *what)
{
    if (stated == all)
        return;
    if (stated == in_data)
        warn(d, off,
             "Statistics record: %s %llu counts the %s of the data section; %zu more appear "
             "only in the summary",
             field, (unsigned long long)stated, what, all - in_data);
    else
        vio(d, off, "Statistics record: %s %llu, but the file has %zu %s (%zu in the data section)",
            field, (unsigned long long)stated, all, what, in_data);
}

static void final_checks(dctx *d)
{
    if (d->prev_op == RL_MCAP_OP_CHUNK || d->prev_op == RL_MCAP_OP_MESSAGE_INDEX)
        end_of_chunk_group(d);
    if (d->saw_footer) {
        uint64_t want_ss = d->summary_first;
        if (d->footer.summary_start != want_ss)
            vio(d, d->footer_offset,
                "Footer record: summary_start %llu, but the summary section starts at %llu",
                (unsigned long long)d->footer.summary_start, (unsigned long long)want_ss);
        if (d->footer.summary_offset_start != d->offsets_first)
            vio(d, d->footer_offset,
                "Footer record: summary_offset_start %llu, but the summary offsets start at %llu",
                (unsigned long long)d->footer.summary_offset_start,
                (unsigned long long)d->offsets_first);
    }
    for (size_t i = 0; i < d->so_count; i++) {
        const rl_mcap_summary_offset *so = &d->sos[i].so;
        uint64_t lo = d->summary_first, hi = d->offsets_first;
        if (!lo || hi < lo || so->group_start < lo || so->group_length > hi - lo ||
            so->group_start - lo > hi - lo - so->group_length) {
            vio(d, d->sos[i].offset,
                "SummaryOffset record: group %s at %llu+%llu lies outside the summary section",
                op_name(so->group_opcode), (unsigned long long)so->group_start,
                (unsigned long long)so->group_length);
            continue;
        }
        const uint8_t *g = d->data + so->group_start;
        size_t glen = (size_t)so->group_length, pos = 0;
        rl_mcap_record rec;
        int rc;
        size_t n = 0;
        while ((rc = rl_mcap_records_next(g, glen, &pos, &rec)) == 1) {
            n++;
            if (rec.opcode != so->group_opcode) {
                vio(d, d->sos[i].offset,
                    "SummaryOffset record: group %s at %llu holds a %s record at %llu",
                    op_name(so->group_opcode), (unsigned long long)so->group_start,
                    op_name(rec.opcode), (unsigned long long)(so->group_start + rec.offset));
                break;
            }
        }
        if (rc < 0)
            vio(d, d->sos[i].offset,
                "SummaryOffset record: group %s at %llu+%llu does not end on a record boundary",
                op_name(so->group_opcode), (unsigned long long)so->group_start,
                (unsigned long long)so->group_length);
        else if (n == 0)
            vio(d, d->sos[i].offset, "SummaryOffset record: group %s is empty",
                op_name(so->group_opcode));
        if (rc >= 0 && (so->group_start + so->group_length < hi) &&
            d->data[so->group_start + so->group_length] == so->group_opcode)
            vio(d, d->sos[i].offset,
                "SummaryOffset record: group %s at %llu stops before the next %s record",
                op_name(so->group_opcode), (unsigned long long)so->group_start,
                op_name(so->group_opcode));
    }
    if (d->chunk_index_count && d->chunk_index_count != d->chunk_count)
        vio(d, d->summary_first, "summary: %zu ChunkIndex records for %zu chunks",
            d->chunk_index_count, d->chunk_count);
    if (d->att_index_count && d->att_index_count != d->att_count)
        vio(d, d->summary_first, "summary: %zu AttachmentIndex records for %zu attachments",
            d->att_index_count, d->att_count);
    if (d->meta_index_count && d->meta_index_count != d->meta_count)
        vio(d, d->summary_first, "summary: %zu MetadataIndex records for %zu metadata records",
            d->meta_index_count, d->meta_count);
    if (!d->stats_seen)
        return;
    const rl_mcap_statistics *s = &d->stats;
    uint64_t off = d->stats_offset;
    size_t nschemas = 0, nchannels = 0;
    for (size_t i = 0; i < NIDS; i++) {
        nschemas += d->schemas[i].mem != NULL;
        nchannels += d->channels[i].mem != NULL;
    }
#define STAT(field, actual, what)                                                                  \
    if ((uint64_t)s->field != (uint64_t)(actual))                                                  \
    vio(d, off, "Statistics record: " #field " %llu, but the file has %llu " what,                 \
        (unsigned long long)s->field, (unsigned long long)(actual))
    STAT(message_count, d->messages, "messages");
    count_check(d, off, "schema_count", s->schema_count, nschemas, d->data_schemas, "schemas");
    count_check(d, off, "channel_count", s->channel_count, nchannels, d->data_channels,
                "channels");
    STAT(attachment_count, d->attachments, "attachments");
    STAT(metadata_count, d->metadata, "metadata records");
    STAT(chunk_count, d->chunk_count, "chunks");
    STAT(message_start_time, d->messages ? d->msg_start : 0, "as first log time");
    STAT(message_end_time, d->messages ? d->msg_end : 0, "as last log time");
#undef STAT
    size_t pos = 0;
    uint16_t ch;
    uint64_t n;
    uint8_t *listed = calloc(NIDS, 1);
    if (!listed) {
        d->oom = 1;
        return;
    }
    while (rl_mcap_map_u16u64_next(s->channel_message_counts, &pos, &ch, &n) == 1) {
        listed[ch] = 1;
        if (n != d->per_channel[ch])
            vio(d, off,
                "Statistics record: channel %u: %llu messages counted, but the file has %llu", ch,
                (unsigned long long)n, (unsigned long long)d->per_channel[ch]);
    }
    if (s->channel_message_counts.len)
        for (size_t i = 0; i < NIDS; i++)
            if (d->per_channel[i] && !listed[i]) {
                vio(d, off, "Statistics record: channel %zu has messages but no count", i);
                break;
            }
    free(listed);
}

static void free_ctx(dctx *d)
{
    for (size_t i = 0; i < NIDS; i++) {
        if (d->schemas)
            free(d->schemas[i].mem);
        if (d->channels)
            free(d->channels[i].mem);
    }
    free(d->schemas);
    free(d->channels);
    free(d->reported_channel);
    free(d->per_channel);
    free(d->chunks);
    free(d->mis);
    free(d->cur);
    for (size_t i = 0; i < d->att_count; i++) {
        free(d->atts[i].name);
        free(d->atts[i].media_type);
    }
    for (size_t i = 0; i < d->meta_count; i++) {
        free(d->metas[i].name);
        free(d->metas[i].media_type);
    }
    free(d->atts);
    free(d->metas);
    free(d->sos);
    mcap_chunk_set_free(&d->seen);
}

int rl_mcap_doctor_mem(const void *data, size_t len, rl_mcap_doctor_report *report)
{
    memset(report, 0, sizeof *report);
    dctx d;
    memset(&d, 0, sizeof d);
    d.data = data ? data : (const uint8_t *)"";
    d.len = data ? len : 0;
    d.rep = report;
    d.max_chunk = (uint64_t)4 << 30;
    d.schemas = calloc(NIDS, sizeof *d.schemas);
    d.channels = calloc(NIDS, sizeof *d.channels);
    d.reported_channel = calloc(NIDS, 1);
    d.per_channel = calloc(NIDS, sizeof *d.per_channel);
    rl_mcap_reader *r = NULL;
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    ro.chunks = RL_MCAP_CHUNKS_RAW;
    int rc = RL_OK;
    if (!d.schemas || !d.channels || !d.reported_channel || !d.per_channel)
        rc = rl_error_set(RL_ENOMEM, "mcap doctor: out of memory");
    if (rc == RL_OK)
        rc = rl_mcap_reader_open_mem(&r, d.data, d.len, &ro);
    d.reader = r;
    int said_end = 0; /* a truncation said where the file ends */
    while (rc == RL_OK && !d.oom) {
        rl_mcap_record rec;
        int n = rl_mcap_reader_next(r, &rec);
        if (n == 0)
            break;
        if (n > 0) {
            report->records++;
            top_record(&d, &rec);
            continue;
        }
        if (n == RL_ENOMEM) {
            d.oom = 1;
            break;
        }
        size_t at = (size_t)rl_mcap_reader_offset(r);
        const char *why = mcap_skip_byte_prefix(rl_error_last());
        if (at >= d.len || at < RL_MCAP_MAGIC_LEN) {
            vio_cause(&d, at, "%s", why);
            said_end = at >= d.len;
            break;
        }
        uint8_t op = d.data[at];
        size_t next = mcap_resync(d.data, d.len, at, d.max_chunk);
        /* An intact record that only describes others (a footer whose summary CRC fails
         * because a copied chunk shifted the summary) follows from earlier damage. */
        int framed = d.len - at >= RL_MCAP_RECORD_PREFIX &&
                     mcap_rd64(d.data + at + 1) <= d.len - at - RL_MCAP_RECORD_PREFIX &&
                     next == at + RL_MCAP_RECORD_PREFIX + (size_t)mcap_rd64(d.data + at + 1);
        if (framed && op != RL_MCAP_OP_CHUNK && op != RL_MCAP_OP_ATTACHMENT &&
            op != RL_MCAP_OP_METADATA && op != RL_MCAP_OP_MESSAGE && op >= RL_MCAP_OP_FOOTER &&
            op <= RL_MCAP_OP_DATA_END) {
            vio(&d, at, "%s", why);
        } else if (n == RL_ETRUNCATED && next >= d.len) {
            vio_cause(&d, at, "%s: the file ends there, without a Footer (truncated)", why);
            said_end = 1;
        } else {
            vio_cause(&d, at, "%s", why);
        }
        if (next >= d.len)
            break;
        if (op == RL_MCAP_OP_FOOTER && next == at + RL_MCAP_RECORD_PREFIX + RL_MCAP_FOOTER_BODY) {
            d.saw_footer = 1; /* its CRC failed; the closing magic is the reader's */
            break;
        }
        /* The failed record's offsets would mislead the placement checks that follow. */
        if (op == RL_MCAP_OP_CHUNK) {
            d.prev_op = RL_MCAP_OP_CHUNK;
            d.cur_valid = 0;
            rl_mcap_record cr;
            size_t blen = (size_t)mcap_rd64(d.data + at + 1);
            if (next == at + RL_MCAP_RECORD_PREFIX + blen &&
                rl_mcap_record_parse(op, d.data + at + RL_MCAP_RECORD_PREFIX, blen, &cr) == RL_OK &&
                grow(&d, (void **)&d.chunks, &d.chunk_cap, d.chunk_count, sizeof *d.chunks)) {
                chunk_info *ci = &d.chunks[d.chunk_count++];
                memset(ci, 0, sizeof *ci);
                ci->offset = at;
                ci->length = next - at;
                ci->mi_first = d.mi_count;
            }
        }
        rl_mcap_reader_seek(r, next);
    }
    if (rc == RL_OK && !d.oom) {
        if (report->records && !d.saw_footer && !said_end)
            vio(&d, d.len, "file ends without a Footer");
        final_checks(&d);
    }
    report->messages = d.messages;
    report->chunks = d.chunk_count;
    if (rc == RL_OK && d.oom)
        rc = rl_error_set(RL_ENOMEM, "mcap doctor: out of memory");
    rl_mcap_reader_close(r);
    free_ctx(&d);
    if (rc < 0)
        rl_mcap_doctor_report_free(report);
    return rc;
}

int rl_mcap_doctor(const char *path, rl_mcap_doctor_report *report)
{
    memset(report, 0, sizeof *report);
    mcap_file f;
    int rc = mcap_file_open(&f, path);
    if (rc < 0)
        return rc;
    rc = rl_mcap_doctor_mem(f.data, f.len, report);
    mcap_file_close(&f);
    return rc;
}

void rl_mcap_doctor_report_free(rl_mcap_doctor_report *report)
{
    if (!report)
        return;
    free(report->violations);
    report->violations = NULL;
    report->count = 0;
    free(report->warnings);
    report->warnings = NULL;
    report->warning_count = 0;
}
