/* The indexed MCAP reader: opens a file through footer and summary (or, when those are
 * missing or broken, one linear scan of the data section), then answers message queries
 * in log-time order (or reverse) with time and topic filters by merging the messages of
 * only those chunks that can hold matching messages, loading a chunk only when its time
 * range reaches the merge front. */
#include "core/text.h"
#include "mcap_internal.h"
#include "mcap_map.h"

#include "runlab/error.h"
#include "runlab/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NIDS = 65536, MAX_WARNINGS = 32 };

/* A message outside any chunk, found by the linear scan. */
typedef struct loose_msg {
    uint64_t log_time, offset;
    uint16_t channel_id;
} loose_msg;

struct rl_mcap_indexed {
    mcap_file file;
    const uint8_t *data;
    size_t len;
    uint64_t max_chunk;
    int used_summary;
    uint8_t **mems; /* owned record copies */
    size_t nmems, mems_cap;
    rl_mcap_schema *schemas;
    size_t nschemas, schemas_cap;
    rl_mcap_channel *channels;
    size_t nchannels, channels_cap;
    uint32_t schema_slot[NIDS], channel_slot[NIDS]; /* id -> index + 1, after sorting */
    rl_mcap_statistics stats;
    int has_stats;
    rl_mcap_chunk_index *chunks;
    size_t nchunks, chunks_cap;
    rl_mcap_attachment_index *atts;
    size_t natts, atts_cap;
    rl_mcap_metadata_index *metas;
    size_t nmetas, metas_cap;
    loose_msg *loose;
    size_t nloose, loose_cap;
    uint64_t chunks_loaded;
    int verify_crcs; /* check chunks' uncompressed_crc when loading them; default 1 */
    char *warnings[MAX_WARNINGS]; /* conditions that did not stop reading */
    size_t nwarnings;
};

/* Keeps a warning (the first MAX_WARNINGS; later ones are dropped, and so is one that
 * cannot be copied: warnings never make opening fail). */
static void add_warning(rl_mcap_indexed *x, const char *msg)
{
    if (x->nwarnings < MAX_WARNINGS && (x->warnings[x->nwarnings] = strdup(msg)) != NULL)
        x->nwarnings++;
}

/* Room for one more of `count` elements of `size` bytes (checked growth in core/text.h). */
static int grow(void **arr, size_t *cap, size_t count, size_t size)
{
    return rl_grow_array(arr, cap, count + 1, size, "mcap indexed reader");
}

/* Keeps the first Schema/Channel of each id, copied so it outlives decompressed chunks. */
static int keep_record(rl_mcap_indexed *x, const rl_mcap_record *rec)
{
    uint16_t id = rec->opcode == RL_MCAP_OP_SCHEMA ? rec->u.schema.id : rec->u.channel.id;
    if (rec->opcode == RL_MCAP_OP_SCHEMA && id == 0)
        return RL_OK; /* invalid per spec: ignored */
    uint32_t *slot = rec->opcode == RL_MCAP_OP_SCHEMA ? x->schema_slot : x->channel_slot;
    if (slot[id])
        return RL_OK;
    int rc = grow((void **)&x->mems, &x->mems_cap, x->nmems, sizeof *x->mems);
    if (rc < 0)
        return rc;
    uint8_t *mem = malloc(rec->body.len ? rec->body.len : 1);
    if (!mem)
        return rl_error_set(RL_ENOMEM, "mcap indexed reader: out of memory");
    if (rec->body.len)
        memcpy(mem, rec->body.data, rec->body.len);
    x->mems[x->nmems++] = mem;
    rl_mcap_record copy;
    rc = rl_mcap_record_parse(rec->opcode, mem, rec->body.len, &copy);
    if (rc < 0)
        return rc;
    if (rec->opcode == RL_MCAP_OP_SCHEMA) {
        if ((rc = grow((void **)&x->schemas, &x->schemas_cap, x->nschemas, sizeof *x->schemas)) < 0)
            return rc;
        x->schemas[x->nschemas++] = copy.u.schema;
        slot[id] = (uint32_t)x->nschemas;
    } else {
        if ((rc = grow((void **)&x->channels, &x->channels_cap, x->nchannels,
                       sizeof *x->channels)) < 0)
            return rc;
        x->channels[x->nchannels++] = copy.u.channel;
        slot[id] = (uint32_t)x->nchannels;
    }
    return RL_OK;
}

static int cmp_schema(const void *a, const void *b)
{
    const rl_mcap_schema *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_channel(const void *a, const void *b)
{
    const rl_mcap_channel *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* Sorts schemas and channels by id and rebuilds the id tables. */
static void finish_tables(rl_mcap_indexed *x)
{
    if (x->nschemas)
        qsort(x->schemas, x->nschemas, sizeof *x->schemas, cmp_schema);
    if (x->nchannels)
        qsort(x->channels, x->nchannels, sizeof *x->channels, cmp_channel);
    memset(x->schema_slot, 0, sizeof x->schema_slot);
    memset(x->channel_slot, 0, sizeof x->channel_slot);
    for (size_t i = 0; i < x->nschemas; i++)
        x->schema_slot[x->schemas[i].id] = (uint32_t)i + 1;
    for (size_t i = 0; i < x->nchannels; i++)
        x->channel_slot[x->channels[i].id] = (uint32_t)i + 1;
}

static void reset_tables(rl_mcap_indexed *x)
{
    for (size_t i = 0; i < x->nmems; i++)
        free(x->mems[i]);
    x->nmems = x->nschemas = x->nchannels = x->nchunks = x->natts = x->nmetas = x->nloose = 0;
    x->has_stats = 0;
    memset(x->schema_slot, 0, sizeof x->schema_slot);
    memset(x->channel_slot, 0, sizeof x->channel_slot);
}

/* ---- Summary ---------------------------------------------------------------------- */

/* Reads footer and summary. Returns RL_OK when the summary indexes every message, 1 when
 * footer or summary is missing or damaged, 2 when the summary is intact but incomplete
 * (its statistics stay valid). In both latter cases the data section is scanned. */
static int load_summary(rl_mcap_indexed *x)
{
    x->has_stats = 0;
    size_t pos, fpos;
    if (rl_mcap_summary_find(x->data, x->len, 1, &pos, &fpos) != 1) {
        rl_error_clear(); /* not an error here: the data section is scanned instead */
        return 1;
    }
    rl_mcap_record rec;
    int rc;
    while ((rc = rl_mcap_records_next(x->data, fpos, &pos, &rec)) == 1) {
        switch (rec.opcode) {
        case RL_MCAP_OP_SCHEMA:
        case RL_MCAP_OP_CHANNEL:
            if ((rc = keep_record(x, &rec)) < 0)
                return rc;
            break;
        case RL_MCAP_OP_STATISTICS:
            x->stats = rec.u.statistics;
            x->has_stats = 1;
            break;
        case RL_MCAP_OP_CHUNK_INDEX:
            if ((rc = grow((void **)&x->chunks, &x->chunks_cap, x->nchunks, sizeof *x->chunks)) < 0)
                return rc;
            x->chunks[x->nchunks++] = rec.u.chunk_index;
            break;
        case RL_MCAP_OP_ATTACHMENT_INDEX:
            if ((rc = grow((void **)&x->atts, &x->atts_cap, x->natts, sizeof *x->atts)) < 0)
                return rc;
            x->atts[x->natts++] = rec.u.attachment_index;
            break;
        case RL_MCAP_OP_METADATA_INDEX:
            if ((rc = grow((void **)&x->metas, &x->metas_cap, x->nmetas, sizeof *x->metas)) < 0)
                return rc;
            x->metas[x->nmetas++] = rec.u.metadata_index;
            break;
        default: break;
        }
    }
    if (rc < 0) {
        x->has_stats = 0;
        return 1;
    }
    for (size_t i = 0; i < x->nchunks; i++) {
        const rl_mcap_chunk_index *ci = &x->chunks[i];
        if (ci->chunk_start_offset > x->len || ci->chunk_length > x->len - ci->chunk_start_offset) {
            x->has_stats = 0;
            return 1;
        }
    }
    /* Messages are indexed only through chunk indexes; without any, only statistics
     * saying there are no messages spare the scan. */
    if (x->nchunks == 0 && !(x->has_stats && x->stats.message_count == 0))
        return 2;
    /* The summary must also hold every channel the indexes name and every schema those
     * channels use (writers may leave them out); otherwise the scan finds them. */
    if (x->nchunks && x->nchannels == 0)
        return 2;
    for (size_t i = 0; i < x->nchunks; i++) {
        size_t p = 0;
        uint16_t ch;
        uint64_t off;
        while (rl_mcap_map_u16u64_next(x->chunks[i].message_index_offsets, &p, &ch, &off) == 1)
            if (!x->channel_slot[ch])
                return 2;
    }
    if (x->has_stats) {
        size_t p = 0;
        uint16_t ch;
        uint64_t n;
        while (rl_mcap_map_u16u64_next(x->stats.channel_message_counts, &p, &ch, &n) == 1)
            if (!x->channel_slot[ch])
                return 2;
    }
    for (size_t i = 0; i < x->nchannels; i++)
        if (x->channels[i].schema_id && !x->schema_slot[x->channels[i].schema_id])
            return 2;
    return RL_OK;
}

/* ---- Linear scan ------------------------------------------------------------------ */

static int scan(rl_mcap_indexed *x)
{
    rl_mcap_reader_options o;
    rl_mcap_reader_options_default(&o);
    o.chunks = RL_MCAP_CHUNKS_BOTH;
    o.max_chunk_size = x->max_chunk;
    rl_mcap_reader *r = NULL;
    int rc = rl_mcap_reader_open_mem(&r, x->data, x->len, &o);
    if (rc < 0)
        return rc;
    rl_mcap_record rec;
    mcap_chunk_set seen = {0};
    uint64_t skip_chunk = RL_MCAP_NO_CHUNK; /* an exact copy of an earlier chunk */
    size_t released = 0;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
        int in_chunk = rec.chunk_offset != RL_MCAP_NO_CHUNK;
        if (!in_chunk)
            mcap_file_passed(&x->file, (size_t)rec.offset, &released);
        if (in_chunk && rec.chunk_offset == skip_chunk)
            continue;
        switch (rec.opcode) {
        case RL_MCAP_OP_SCHEMA:
        case RL_MCAP_OP_CHANNEL: rc = keep_record(x, &rec); break;
        case RL_MCAP_OP_MESSAGE:
            if (in_chunk)
                break;
            if ((rc = grow((void **)&x->loose, &x->loose_cap, x->nloose, sizeof *x->loose)) < 0)
                break;
            x->loose[x->nloose].log_time = rec.u.message.log_time;
            x->loose[x->nloose].offset = rec.offset;
            x->loose[x->nloose].channel_id = rec.u.message.channel_id;
            x->nloose++;
            break;
        case RL_MCAP_OP_CHUNK: {
            if (in_chunk)
                break;
            uint64_t length = RL_MCAP_RECORD_PREFIX + rec.body.len;
            uint64_t orig = mcap_chunk_set_find_or_add(&seen, x->data, rec.offset, length);
            if (orig != UINT64_MAX) {
                /* Its messages would come twice; a reader takes them once. */
                char msg[200];
                snprintf(msg, sizeof msg,
                         "byte %llu: Chunk record: an exact copy of the chunk at byte %llu; its "
                         "messages are read once",
                         (unsigned long long)rec.offset, (unsigned long long)orig);
                add_warning(x, msg);
                skip_chunk = rec.offset;
                break;
            }
            if ((rc = grow((void **)&x->chunks, &x->chunks_cap, x->nchunks, sizeof *x->chunks)) < 0)
                break;
            rl_mcap_chunk_index *ci = &x->chunks[x->nchunks++];
            memset(ci, 0, sizeof *ci);
            ci->message_start_time = rec.u.chunk.message_start_time;
            ci->message_end_time = rec.u.chunk.message_end_time;
            ci->chunk_start_offset = rec.offset;
            ci->chunk_length = RL_MCAP_RECORD_PREFIX + rec.body.len;
            ci->compression = rec.u.chunk.compression;
            ci->compressed_size = rec.u.chunk.records.len;
            ci->uncompressed_size = rec.u.chunk.uncompressed_size;
            break;
        }
        case RL_MCAP_OP_ATTACHMENT: {
            if (in_chunk)
                break;
            if ((rc = grow((void **)&x->atts, &x->atts_cap, x->natts, sizeof *x->atts)) < 0)
                break;
            rl_mcap_attachment_index *a = &x->atts[x->natts++];
            a->offset = rec.offset;
            a->length = RL_MCAP_RECORD_PREFIX + rec.body.len;
            a->log_time = rec.u.attachment.log_time;
            a->create_time = rec.u.attachment.create_time;
            a->data_size = rec.u.attachment.data.len;
            a->name = rec.u.attachment.name;
            a->media_type = rec.u.attachment.media_type;
            break;
        }
        case RL_MCAP_OP_METADATA: {
            if (in_chunk)
                break;
            if ((rc = grow((void **)&x->metas, &x->metas_cap, x->nmetas, sizeof *x->metas)) < 0)
                break;
            rl_mcap_metadata_index *m = &x->metas[x->nmetas++];
            m->offset = rec.offset;
            m->length = RL_MCAP_RECORD_PREFIX + rec.body.len;
            m->name = rec.u.metadata.name;
            break;
        }
        default: break;
        }
        if (rc < 0 || rec.opcode == RL_MCAP_OP_DATA_END)
            break;
    }
    /* A file that just ends early (a writer that was killed) is served up to its last
     * complete record; any other damage is an error. */
    if (rc == RL_ETRUNCATED)
        rc = RL_OK;
    if (rl_mcap_reader_warning(r))
        add_warning(x, rl_mcap_reader_warning(r));
    mcap_chunk_set_free(&seen);
    rl_mcap_reader_close(r);
    return rc < 0 ? rc : RL_OK;
}

/* ---- Open / tables ------------------------------------------------------------------ */

static int open_common(rl_mcap_indexed *x)
{
    if (x->len < RL_MCAP_MAGIC_LEN || memcmp(x->data, rl_mcap_magic, RL_MCAP_MAGIC_LEN) != 0)
        return rl_error_set(RL_EPARSE, "byte 0: not an MCAP file (no leading magic)");
    int rc = load_summary(x);
    if (rc < 0)
        return rc;
    if (rc == RL_OK) {
        x->used_summary = 1;
    } else {
        rl_mcap_statistics stats = x->stats;
        int has_stats = x->has_stats;
        reset_tables(x);
        rc = scan(x);
        if (rc < 0)
            return rc;
        /* Statistics from an intact summary remain true. */
        x->stats = stats;
        x->has_stats = has_stats;
    }
    finish_tables(x);
    return RL_OK;
}

static rl_mcap_indexed *new_indexed(uint64_t max_chunk)
{
    rl_mcap_indexed *x = calloc(1, sizeof *x);
    if (x) {
        x->max_chunk = max_chunk ? max_chunk : (uint64_t)4 << 30;
        x->verify_crcs = 1;
    }
    return x;
}

int rl_mcap_indexed_open(rl_mcap_indexed **out, const char *path, uint64_t max_chunk_size)
{
    *out = NULL;
    rl_mcap_indexed *x = new_indexed(max_chunk_size);
    if (!x)
        return rl_error_set(RL_ENOMEM, "mcap indexed reader: out of memory");
    int rc = mcap_file_open(&x->file, path);
    if (rc == RL_OK) {
        x->data = x->file.data;
        x->len = x->file.len;
        rc = open_common(x);
        if (rc < 0)
            rl_error_prefix(rc, "%s", path);
    }
    if (rc < 0) {
        rl_mcap_indexed_close(x);
        return rc;
    }
    *out = x;
    return RL_OK;
}

int rl_mcap_indexed_open_mem(rl_mcap_indexed **out, const void *data, size_t len,
                             uint64_t max_chunk_size)
{
    *out = NULL;
    rl_mcap_indexed *x = new_indexed(max_chunk_size);
    if (!x)
        return rl_error_set(RL_ENOMEM, "mcap indexed reader: out of memory");
    x->data = data ? data : (const void *)"";
    x->len = data ? len : 0;
    int rc = open_common(x);
    if (rc < 0) {
        rl_mcap_indexed_close(x);
        return rc;
    }
    *out = x;
    return RL_OK;
}

void rl_mcap_indexed_close(rl_mcap_indexed *x)
{
    if (!x)
        return;
    reset_tables(x);
    for (size_t i = 0; i < x->nwarnings; i++)
        free(x->warnings[i]);
    free(x->mems);
    free(x->schemas);
    free(x->channels);
    free(x->chunks);
    free(x->atts);
    free(x->metas);
    free(x->loose);
    mcap_file_close(&x->file);
    free(x);
}

int rl_mcap_indexed_used_summary(const rl_mcap_indexed *x)
{
    return x->used_summary;
}

size_t rl_mcap_indexed_warnings(const rl_mcap_indexed *x, const char *const **out)
{
    *out = (const char *const *)x->warnings;
    return x->nwarnings;
}

size_t rl_mcap_indexed_schemas(const rl_mcap_indexed *x, const rl_mcap_schema **out)
{
    *out = x->schemas;
    return x->nschemas;
}

size_t rl_mcap_indexed_channels(const rl_mcap_indexed *x, const rl_mcap_channel **out)
{
    *out = x->channels;
    return x->nchannels;
}

const rl_mcap_schema *rl_mcap_indexed_schema(const rl_mcap_indexed *x, uint16_t id)
{
    return x->schema_slot[id] ? &x->schemas[x->schema_slot[id] - 1] : NULL;
}

const rl_mcap_channel *rl_mcap_indexed_channel(const rl_mcap_indexed *x, uint16_t id)
{
    return x->channel_slot[id] ? &x->channels[x->channel_slot[id] - 1] : NULL;
}

const rl_mcap_statistics *rl_mcap_indexed_statistics(const rl_mcap_indexed *x)
{
    return x->has_stats ? &x->stats : NULL;
}

size_t rl_mcap_indexed_chunk_indexes(const rl_mcap_indexed *x, const rl_mcap_chunk_index **out)
{
    *out = x->chunks;
    return x->nchunks;
}

size_t rl_mcap_indexed_attachment_indexes(const rl_mcap_indexed *x,
                                          const rl_mcap_attachment_index **out)
{
    *out = x->atts;
    return x->natts;
}

size_t rl_mcap_indexed_metadata_indexes(const rl_mcap_indexed *x,
                                        const rl_mcap_metadata_index **out)
{
    *out = x->metas;
    return x->nmetas;
}

void rl_mcap_indexed_set_verify_crcs(rl_mcap_indexed *x, int verify)
{
    x->verify_crcs = verify != 0;
}

uint64_t rl_mcap_indexed_chunks_loaded(const rl_mcap_indexed *x)
{
    return x->chunks_loaded;
}

void rl_mcap_query_default(rl_mcap_query *q)
{
    memset(q, 0, sizeof *q);
    q->end_time = UINT64_MAX;
}

/* ---- Message iteration ------------------------------------------------------------ */

/* A message position. Order: log_time, then file position (`prim` is the chunk's file
 * offset, or the message's own for loose messages), then offset inside the chunk. */
typedef struct entry {
    uint64_t t, prim, off;
} entry;

/* The sorted matching messages of one loaded chunk (or of all loose messages). */
typedef struct source {
    const uint8_t *buf;
    size_t len;
    int owned; /* `buf` is in `expanded` */
    uint64_t chunk_offset; /* for messages: RL_MCAP_NO_CHUNK when loose */
    entry *ents;
    size_t n, i;
    mcap_file *file;              /* with the mapped range below, released when done */
    size_t mapped_from, mapped_to; /* an uncompressed chunk's bytes in the mapping */
    uint8_t *copy;                 /* the chunk record read with pread, when `buf` is in it */
    size_t copy_cap;
    uint8_t *expanded; /* the decompressed records, when `buf` is in it */
    size_t expanded_cap;
} source;

enum { SPARE_BUFFERS = 4 }; /* a chunk's copy and its records, of the chunk loaded and the next */

struct rl_mcap_message_iter {
    rl_mcap_indexed *x;
    rl_mcap_query q;
    int all_channels;
    uint8_t wanted[NIDS / 8];
    size_t *pending; /* chunk indexes to load, in merge order */
    size_t npending, next;
    source **heap;
    size_t nheap;
    source *retired; /* exhausted; freed at the next call (its data is still lent out) */
    /* buffers kept for the next chunks (allocation costs page faults), and the
     * decompression contexts, created once per iteration */
    uint8_t *spare[SPARE_BUFFERS];
    size_t spare_cap[SPARE_BUFFERS];
    mcap_decoder dec;
};

static int entry_before(const entry *a, const entry *b, int reverse)
{
    int lt;
    if (a->t != b->t)
        lt = a->t < b->t;
    else if (a->prim != b->prim)
        lt = a->prim < b->prim;
    else
        lt = a->off < b->off;
    return reverse ? !lt : lt;
}

static int cmp_entry_fwd(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->prim != y->prim)
        return x->prim < y->prim ? -1 : 1;
    return (x->off > y->off) - (x->off < y->off);
}

static int cmp_entry_rev(const void *a, const void *b)
{
    return cmp_entry_fwd(b, a);
}

/* Hands back a buffer: kept among the spares in place of an empty or a smaller one. */
static void give_buffer(rl_mcap_message_iter *it, uint8_t *buf, size_t cap)
{
    size_t smallest = 0;
    for (size_t i = 1; i < SPARE_BUFFERS; i++)
        if (it->spare_cap[i] < it->spare_cap[smallest])
            smallest = i;
    if (cap > it->spare_cap[smallest]) {
        free(it->spare[smallest]);
        it->spare[smallest] = buf;
        it->spare_cap[smallest] = cap;
    } else {
        free(buf);
    }
}

/* Takes a spare buffer for `len` bytes: the smallest that holds them, else the largest
 * (to be replaced by the caller); NULL/0 when none is kept. */
static uint8_t *take_buffer(rl_mcap_message_iter *it, size_t len, size_t *cap)
{
    size_t pick = SPARE_BUFFERS;
    for (size_t i = 0; i < SPARE_BUFFERS; i++) {
        if (!it->spare[i])
            continue;
        int fits = it->spare_cap[i] >= len;
        if (pick == SPARE_BUFFERS)
            pick = i;
        else if (fits && (it->spare_cap[pick] < len || it->spare_cap[i] < it->spare_cap[pick]))
            pick = i;
        else if (!fits && it->spare_cap[pick] < len && it->spare_cap[i] > it->spare_cap[pick])
            pick = i;
    }
    if (pick == SPARE_BUFFERS) {
        *cap = 0;
        return NULL;
    }
    uint8_t *buf = it->spare[pick];
    *cap = it->spare_cap[pick];
    it->spare[pick] = NULL;
    it->spare_cap[pick] = 0;
    return buf;
}

static void source_free(rl_mcap_message_iter *it, source *s)
{
    if (!s)
        return;
    if (!s->owned && s->file)
        mcap_file_release(s->file, s->mapped_from, s->mapped_to);
    if (s->copy)
        give_buffer(it, s->copy, s->copy_cap);
    if (s->expanded)
        give_buffer(it, s->expanded, s->expanded_cap);
    free(s->ents);
    free(s);
}

static int wants(const rl_mcap_message_iter *it, uint16_t ch, uint64_t t)
{
    if (t < it->q.start_time || t > it->q.end_time)
        return 0;
    return it->all_channels || (it->wanted[ch >> 3] >> (ch & 7) & 1);
}

static int heap_less(const rl_mcap_message_iter *it, size_t a, size_t b)
{
    const source *x = it->heap[a], *y = it->heap[b];
    return entry_before(&x->ents[x->i], &y->ents[y->i], it->q.reverse);
}

static void heap_swap(rl_mcap_message_iter *it, size_t a, size_t b)
{
    source *t = it->heap[a];
    it->heap[a] = it->heap[b];
    it->heap[b] = t;
}

static void sift_down(rl_mcap_message_iter *it, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < it->nheap && heap_less(it, l, m))
            m = l;
        if (r < it->nheap && heap_less(it, r, m))
            m = r;
        if (m == i)
            return;
        heap_swap(it, i, m);
        i = m;
    }
}

static void sift_up(rl_mcap_message_iter *it, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_less(it, i, p))
            return;
        heap_swap(it, i, p);
        i = p;
    }
}

/* Adds a source to the merge. `in_file_order` says its entries are in file order with
 * log times that never decrease (as writers log), so they need no sort: forward they
 * are already in merge order and reverse merely reversed (equal times then come last in
 * file first, as the reverse order wants). */
static int push_source(rl_mcap_message_iter *it, source *s, int in_file_order)
{
    if (s->n == 0) {
        source_free(it, s);
        return RL_OK;
    }
    if (!in_file_order) {
        qsort(s->ents, s->n, sizeof *s->ents, it->q.reverse ? cmp_entry_rev : cmp_entry_fwd);
    } else if (it->q.reverse) {
        for (size_t a = 0, b = s->n - 1; a < b; a++, b--) {
            entry e = s->ents[a];
            s->ents[a] = s->ents[b];
            s->ents[b] = e;
        }
    }
    it->heap[it->nheap++] = s;
    sift_up(it, it->nheap - 1);
    return RL_OK;
}

/* Bytes of a Message body before its data: channel_id, sequence, log_time, publish_time. */
/* Steps over the record at `*pos` inside a chunk: 1 for a Message (its channel and log
 * time set), 2 for any other record, 0 at the end, < 0 when damaged. Messages, nearly
 * every record of a chunk, are read in place; other records (and any damaged record, for
 * its error message) go through the full parser, which checks them. */
static int next_in_chunk(const uint8_t *buf, size_t len, size_t *pos, uint16_t *ch, uint64_t *t)
{
    size_t at = *pos;
    if (at < len && len - at >= RL_MCAP_RECORD_PREFIX && buf[at] == RL_MCAP_OP_MESSAGE) {
        uint64_t blen = mcap_rd64(buf + at + 1);
        if (blen >= MCAP_MESSAGE_FIXED && blen <= len - at - RL_MCAP_RECORD_PREFIX) {
            const uint8_t *body = buf + at + RL_MCAP_RECORD_PREFIX;
            *ch = mcap_rd16(body);
            *t = mcap_rd64(body + 6);
            *pos = at + RL_MCAP_RECORD_PREFIX + (size_t)blen;
            return 1;
        }
    }
    rl_mcap_record rec;
    int rc = rl_mcap_records_next(buf, len, pos, &rec);
    if (rc <= 0)
        return rc;
    if (rec.opcode != RL_MCAP_OP_MESSAGE)
        return 2;
    *ch = rec.u.message.channel_id;
    *t = rec.u.message.log_time;
    return 1;
}

/* Reads the Chunk record of `ci` into a buffer with pread (`*copy`, `*copy_cap`): reading
 * a chunk through the mapping costs page faults and, to keep resident memory bounded, a
 * madvise per chunk, and leaves its bytes cold in the cache for the scan that follows.
 * Returns 1 with `rec` parsed from the copy; 0 when the copy cannot serve (a file read
 * into memory, a chunk larger than the limit, a read error, or a record that does not
 * parse: the mapping path then reports it with its file offset). */
static int read_chunk_copy(rl_mcap_message_iter *it, const rl_mcap_chunk_index *ci,
                           rl_mcap_record *rec, uint8_t **copy, size_t *copy_cap)
{
    rl_mcap_indexed *x = it->x;
    *copy = NULL;
    if (!x->file.map || ci->chunk_length > x->max_chunk || ci->chunk_length < RL_MCAP_RECORD_PREFIX)
        return 0;
    size_t len = (size_t)ci->chunk_length;
    size_t cap;
    uint8_t *buf = take_buffer(it, len, &cap);
    size_t p = 0;
    if (mcap_file_pread_into(&x->file, &buf, &cap, len, (size_t)ci->chunk_start_offset) ==
            RL_OK &&
        rl_mcap_records_next(buf, len, &p, rec) == 1 && rec->opcode == RL_MCAP_OP_CHUNK) {
        *copy = buf;
        *copy_cap = cap;
        return 1;
    }
    give_buffer(it, buf, cap);
    return 0;
}

/* Decompresses chunk `ci` and collects its matching messages. */
static int load_chunk(rl_mcap_message_iter *it, const rl_mcap_chunk_index *ci)
{
    rl_mcap_indexed *x = it->x;
    uint64_t at = ci->chunk_start_offset;
    rl_mcap_record rec;
    uint8_t *copy;
    size_t copy_cap = 0;
    int rc = read_chunk_copy(it, ci, &rec, &copy, &copy_cap);
    if (rc == 0) {
        size_t pos = (size_t)at;
        rc = rl_mcap_records_next(x->data, (size_t)(at + ci->chunk_length), &pos, &rec);
        if (rc == 0)
            rc = rl_error_set(RL_EPARSE, "byte %llu: chunk index points past the end",
                              (unsigned long long)at);
        if (rc < 0)
            return rc;
        if (rec.opcode != RL_MCAP_OP_CHUNK)
            return rl_error_set(RL_EPARSE,
                                "byte %llu: chunk index points at a %s record, not a Chunk",
                                (unsigned long long)at, rl_mcap_opcode_name(rec.opcode));
    }
    source *s = calloc(1, sizeof *s);
    if (!s) {
        if (copy)
            give_buffer(it, copy, copy_cap);
        return rl_error_set(RL_ENOMEM, "mcap indexed reader: out of memory");
    }
    s->chunk_offset = at;
    size_t want = rec.u.chunk.compression.len && rec.u.chunk.uncompressed_size <= x->max_chunk
                      ? (size_t)rec.u.chunk.uncompressed_size
                      : 0;
    uint8_t *expanded = want ? take_buffer(it, want, &s->expanded_cap) : NULL;
    rc = mcap_chunk_decompress_into(&rec.u.chunk, x->max_chunk, x->verify_crcs, &it->dec,
                                    &expanded, &s->expanded_cap, &s->buf, &s->len);
    if (expanded && s->buf == expanded)
        s->expanded = expanded; /* the messages are in it */
    else if (expanded)
        give_buffer(it, expanded, s->expanded_cap);
    s->owned = s->expanded != NULL;
    if (copy && !s->owned) {
        s->copy = copy; /* the messages are in it */
        s->copy_cap = copy_cap;
    } else if (copy) {
        give_buffer(it, copy, copy_cap);
    }
    if (rc < 0) {
        source_free(it, s);
        return rl_error_prefix(rc, "byte %llu: Chunk record", (unsigned long long)at);
    }
    x->chunks_loaded++;
    if (!copy) {
        /* The chunk's bytes in the mapping are needed until its messages are served when
         * they are the messages (uncompressed), else no more. The message indexes after
         * the chunk are not read here: released with it. */
        uint64_t to = at + ci->chunk_length;
        if (to <= x->file.map_len && ci->message_index_length <= x->file.map_len - to)
            to += ci->message_index_length;
        if (s->owned) {
            mcap_file_release(&x->file, (size_t)at, (size_t)to);
        } else {
            s->file = &x->file;
            s->mapped_from = (size_t)at;
            s->mapped_to = (size_t)to;
        }
    }
    size_t cap = 0, p = 0, inner = 0;
    uint16_t ch;
    uint64_t t;
    int in_order = 1; /* log times never decrease in file order */
    while ((inner = p, rc = next_in_chunk(s->buf, s->len, &p, &ch, &t)) > 0) {
        if (rc != 1)
            continue;
        /* The merge opens a chunk when it reaches the chunk's declared start time, so a
         * message outside the declared range would come out of order: such a chunk is
         * damaged (its index or header lies), and reported like any damaged chunk. */
        if (t < ci->message_start_time || t > ci->message_end_time) {
            rc = rl_error_set(RL_EPARSE,
                              "Message record: log time %llu outside the chunk's declared "
                              "range %llu..%llu",
                              (unsigned long long)t, (unsigned long long)ci->message_start_time,
                              (unsigned long long)ci->message_end_time);
            break;
        }
        if (!wants(it, ch, t))
            continue;
        if (s->n == cap && (rc = grow((void **)&s->ents, &cap, s->n, sizeof *s->ents)) < 0)
            break;
        if (s->n && t < s->ents[s->n - 1].t)
            in_order = 0;
        s->ents[s->n].t = t;
        s->ents[s->n].prim = at;
        s->ents[s->n].off = inner;
        s->n++;
    }
    if (rc < 0) {
        source_free(it, s);
        return rl_error_set(rc, "byte %llu: inside Chunk record at records offset %zu: %s",
                            (unsigned long long)at, inner, mcap_skip_byte_prefix(rl_error_last()));
    }
    return push_source(it, s, in_order);
}

static int chunk_may_match(const rl_mcap_message_iter *it, const rl_mcap_chunk_index *ci)
{
    /* Chunks without messages store 0/0 times but may still be listed; time ranges are
     * inclusive like the query's. */
    if (ci->message_end_time < it->q.start_time || ci->message_start_time > it->q.end_time)
        return 0;
    if (it->all_channels || ci->message_index_offsets.len == 0)
        return 1;
    size_t pos = 0;
    uint16_t ch;
    uint64_t off;
    while (rl_mcap_map_u16u64_next(ci->message_index_offsets, &pos, &ch, &off) == 1)
        if (it->wanted[ch >> 3] >> (ch & 7) & 1)
            return 1;
    return 0;
}

static int cmp_pending(const void *a, const void *b, void *ctx)
{
    const rl_mcap_message_iter *it = ctx;
    const rl_mcap_chunk_index *x = &it->x->chunks[*(const size_t *)a],
                              *y = &it->x->chunks[*(const size_t *)b];
    if (it->q.reverse) {
        if (x->message_end_time != y->message_end_time)
            return x->message_end_time > y->message_end_time ? -1 : 1;
        return x->chunk_start_offset > y->chunk_start_offset
                   ? -1
                   : x->chunk_start_offset < y->chunk_start_offset;
    }
    if (x->message_start_time != y->message_start_time)
        return x->message_start_time < y->message_start_time ? -1 : 1;
    return x->chunk_start_offset < y->chunk_start_offset
               ? -1
               : x->chunk_start_offset > y->chunk_start_offset;
}

int rl_mcap_indexed_messages(rl_mcap_indexed *x, const rl_mcap_query *q, rl_mcap_message_iter **out)
{
    *out = NULL;
    rl_mcap_message_iter *it = calloc(1, sizeof *it);
    if (!it)
        return rl_error_set(RL_ENOMEM, "mcap indexed reader: out of memory");
    it->x = x;
    if (q)
        it->q = *q;
    else
        rl_mcap_query_default(&it->q);
    it->q.topics = NULL; /* only used here: the caller's array need not outlive the call */
    it->all_channels = !q || !q->topics;
    if (!it->all_channels) {
        for (size_t c = 0; c < x->nchannels; c++)
            for (size_t t = 0; t < q->topic_count; t++) {
                const rl_mcap_bytes *topic = &x->channels[c].topic;
                if (strlen(q->topics[t]) == topic->len &&
                    memcmp(q->topics[t], topic->data, topic->len) == 0) {
                    uint16_t id = x->channels[c].id;
                    it->wanted[id >> 3] |= (uint8_t)(1u << (id & 7));
                }
            }
    }
    int rc = RL_OK;
    it->pending = malloc((x->nchunks + 1) * sizeof *it->pending);
    it->heap = malloc((x->nchunks + 1) * sizeof *it->heap);
    if (!it->pending || !it->heap)
        rc = rl_error_set(RL_ENOMEM, "mcap indexed reader: out of memory");
    for (size_t i = 0; rc == RL_OK && i < x->nchunks; i++)
        if (chunk_may_match(it, &x->chunks[i]))
            it->pending[it->npending++] = i;
    if (rc == RL_OK && it->npending > 1)
        qsort_r(it->pending, it->npending, sizeof *it->pending, cmp_pending, it);
    if (rc == RL_OK && x->nloose) {
        source *s = calloc(1, sizeof *s);
        if (!s)
            rc = rl_error_set(RL_ENOMEM, "mcap indexed reader: out of memory");
        else {
            s->buf = x->data;
            s->len = x->len;
            s->chunk_offset = RL_MCAP_NO_CHUNK;
            s->ents = malloc(x->nloose * sizeof *s->ents);
            if (!s->ents) {
                free(s);
                rc = rl_error_set(RL_ENOMEM, "mcap indexed reader: out of memory");
            } else {
                int in_order = 1; /* the scan found them in file order */
                for (size_t i = 0; i < x->nloose; i++)
                    if (wants(it, x->loose[i].channel_id, x->loose[i].log_time)) {
                        if (s->n && x->loose[i].log_time < s->ents[s->n - 1].t)
                            in_order = 0;
                        s->ents[s->n].t = x->loose[i].log_time;
                        s->ents[s->n].prim = s->ents[s->n].off = x->loose[i].offset;
                        s->n++;
                    }
                rc = push_source(it, s, in_order);
            }
        }
    }
    if (rc < 0) {
        rl_mcap_message_iter_free(it);
        return rc;
    }
    *out = it;
    return RL_OK;
}

int rl_mcap_message_iter_next(rl_mcap_message_iter *it, rl_mcap_message *msg,
                              const rl_mcap_channel **channel)
{
    source_free(it, it->retired);
    it->retired = NULL;
    /* Load every chunk that may hold a message ordered before the current front. */
    while (it->next < it->npending) {
        const rl_mcap_chunk_index *ci = &it->x->chunks[it->pending[it->next]];
        if (it->nheap) {
            const source *top = it->heap[0];
            uint64_t t = top->ents[top->i].t;
            if (!it->q.reverse && ci->message_start_time > t)
                break;
            if (it->q.reverse && ci->message_end_time < t)
                break;
        }
        it->next++;
        int rc = load_chunk(it, ci);
        if (rc < 0)
            return rc;
    }
    if (it->nheap == 0)
        return 0;
    source *s = it->heap[0];
    const entry *e = &s->ents[s->i];
    /* Checked when the source was loaded; checked again cheaply in case the mapped file
     * changed since. */
    size_t at = (size_t)e->off;
    const uint8_t *r = s->buf + at;
    uint64_t blen;
    if (at > s->len || s->len - at < RL_MCAP_RECORD_PREFIX || r[0] != RL_MCAP_OP_MESSAGE ||
        (blen = mcap_rd64(r + 1)) < MCAP_MESSAGE_FIXED || blen > s->len - at - RL_MCAP_RECORD_PREFIX)
        return rl_error_set(RL_EPARSE, "byte %zu: mcap indexed reader: message vanished", at);
    mcap_message_decode(r + RL_MCAP_RECORD_PREFIX, (size_t)blen, msg);
    if (channel)
        *channel = rl_mcap_indexed_channel(it->x, msg->channel_id);
    if (++s->i == s->n) {
        it->heap[0] = it->heap[--it->nheap];
        it->retired = s;
    }
    if (it->nheap)
        sift_down(it, 0);
    return 1;
}

void rl_mcap_message_iter_free(rl_mcap_message_iter *it)
{
    if (!it)
        return;
    source_free(it, it->retired);
    for (size_t i = 0; i < it->nheap; i++)
        source_free(it, it->heap[i]);
    free(it->heap);
    free(it->pending);
    for (size_t i = 0; i < SPARE_BUFFERS; i++)
        free(it->spare[i]);
    mcap_decoder_free(&it->dec);
    free(it);
}
