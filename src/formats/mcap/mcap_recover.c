/* MCAP recovery: rewrites a truncated or damaged file through the writer, keeping every
 * record that reads intact and rebuilding indexes, statistics and summary; damaged
 * stretches are skipped by resynchronising on the next well-formed record and reported
 * with their byte ranges. Resynchronising and recognising copied chunks are helpers it
 * shares with the doctor and the indexed reader (mcap_scan.c). */
#include "core/text.h"
#include "mcap_internal.h"

#include "runlab/error.h"
#include "runlab/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcap_map.h"

enum { NIDS = 65536, MAX_LOST_ENTRIES = 10000, PROGRESS_EVERY = 256 };

/* ---- Exact copies of messages -------------------------------------------------------- */

/* The messages written so far, by the first 16 bytes of the SHA-256 of their record body
 * (channel, sequence, both times, payload): a stretch of the data section written twice
 * holds the same Message records twice, and kept twice they can fill output chunks that
 * are exact copies of each other. 32 bytes per message kept; a false match needs a
 * 128-bit collision. */
typedef struct msg_key {
    uint64_t a, b; /* a == b == 0: empty */
} msg_key;

typedef struct msg_set {
    msg_key *slots;
    size_t cap, count;
} msg_set;

static int msg_set_grow(msg_set *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 1024;
    msg_key *n = calloc(ncap, sizeof *n);
    if (!n)
        return rl_error_set(RL_ENOMEM, "mcap recover: out of memory (message set)");
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slots[i].a && !s->slots[i].b)
            continue;
        size_t j = (size_t)(s->slots[i].a & (ncap - 1));
        while (n[j].a || n[j].b)
            j = (j + 1) & (ncap - 1);
        n[j] = s->slots[i];
    }
    free(s->slots);
    s->slots = n;
    s->cap = ncap;
    return RL_OK;
}

/* 1 when a message with this record body was added before, 0 when not (it is now). */
static int msg_set_find_or_add(msg_set *s, rl_mcap_bytes body)
{
    if (2 * (s->count + 1) > s->cap) {
        int rc = msg_set_grow(s);
        if (rc < 0)
            return rc;
    }
    uint8_t d[RL_SHA256_LEN];
    int rc = rl_sha256(body.data, body.len, d);
    if (rc < 0)
        return rc;
    msg_key k;
    memcpy(&k.a, d, 8);
    memcpy(&k.b, d + 8, 8);
    if (!k.a && !k.b)
        k.b = 1;
    size_t j = (size_t)(k.a & (s->cap - 1));
    for (; s->slots[j].a || s->slots[j].b; j = (j + 1) & (s->cap - 1))
        if (s->slots[j].a == k.a && s->slots[j].b == k.b)
            return 1;
    s->slots[j] = k;
    s->count++;
    return 0;
}

/* ---- Recovery ----------------------------------------------------------------------- */

/* An entry of a message index: where a message sits in its chunk's records. */
typedef struct idx_ent {
    uint64_t offset, log_time;
    uint16_t channel;
} idx_ent;

/* A record read from a chunk, kept until the chunk's damage is known. */
typedef struct inner_rec {
    size_t at, end;
    rl_mcap_record rec;
} inner_rec;

/* A damaged stretch [start, end) of a chunk's records, and why. */
typedef struct span {
    size_t start, end;
    char why[160];
} span;

typedef struct owned_rec {
    uint8_t *mem;
    rl_mcap_record rec;
} owned_rec;

typedef struct rctx {
    const uint8_t *data;
    size_t len;
    uint64_t max_chunk;
    const rl_mcap_recover_options *opts;
    rl_mcap_recover_report *rep;
    int pass; /* 1: collect schemas and channels; 2: write */
    owned_rec **schemas, **channels; /* by id, first definition wins */
    uint8_t *schema_added, *channel_added, *unknown_reported;
    int saw_chunk, saw_top_message;
    rl_mcap_compression first_comp;
    uint64_t max_usize;
    char *profile, *library;
    rl_mcap_writer *w;
    int saw_footer;
    /* what the MessageIndex records that follow belong to */
    enum { AFTER_NONE, AFTER_INTACT, AFTER_LOST, AFTER_DAMAGE, AFTER_HANDLED } after;
    uint64_t records;
    mcap_chunk_set seen; /* chunks of this pass, for exact copies */
    msg_set written;     /* messages written (pass 2), for exact copies */
    int copying;         /* the last message was a copy of one written before */
    /* The message indexes after the chunk being read, sorted by offset, and the channels
     * they cover (a bitmap). */
    idx_ent *ents;
    size_t nents, ents_cap;
    uint8_t *indexed;
    int check_index; /* the chunk's records are not vouched for by a matching CRC */
    /* The Statistics of an intact summary: how many messages and chunks were written. */
    int have_stats, stats_trusted;
    uint64_t stats_messages, stats_chunks;
    /* The messages of the last chunk read, to tell its message indexes from a lost one's. */
    idx_ent *last_msgs;
    size_t nlast, last_cap;
    inner_rec *recs; /* the records of the chunk being read */
    size_t nrecs, recs_cap;
    span *spans; /* its damaged stretches */
    size_t nspans, spans_cap;
} rctx;

static int own(const rl_mcap_record *in, owned_rec **out)
{
    size_t n = rl_mcap_record_encode(in, NULL, 0);
    owned_rec *o = calloc(1, sizeof *o);
    uint8_t *mem = malloc(n);
    if (!o || !mem) {
        free(o);
        free(mem);
        return rl_error_set(RL_ENOMEM, "mcap recover: out of memory");
    }
    rl_mcap_record_encode(in, mem, n);
    o->mem = mem;
    int rc = rl_mcap_record_parse(in->opcode, mem + RL_MCAP_RECORD_PREFIX,
                                  n - RL_MCAP_RECORD_PREFIX, &o->rec);
    if (rc < 0) {
        free(mem);
        free(o);
        return rc;
    }
    *out = o;
    return RL_OK;
}

/* Appends to one of the report's lists (the first MAX_LOST_ENTRIES entries are kept). */
static int list_add(rl_mcap_lost_range **list, size_t *count, uint64_t offset, uint64_t length,
                    const char *why)
{
    if (*count >= MAX_LOST_ENTRIES)
        return RL_OK;
    if ((*count & (*count - 1)) == 0) { /* grow at powers of two */
        size_t ncap = *count ? *count * 2 : 8;
        rl_mcap_lost_range *p = realloc(*list, ncap * sizeof *p);
        if (!p)
            return rl_error_set(RL_ENOMEM, "mcap recover: out of memory");
        *list = p;
    }
    rl_mcap_lost_range *e = &(*list)[(*count)++];
    e->offset = offset;
    e->length = length;
    snprintf(e->what, sizeof e->what, "%s", why);
    return RL_OK;
}

static int note_loss(rctx *c, uint64_t offset, uint64_t length, const char *why)
{
    c->rep->bytes_lost += length;
    return list_add(&c->rep->lost, &c->rep->lost_count, offset, length, why);
}

static int notice(rctx *c, uint64_t offset, uint64_t length, const char *why)
{
    return list_add(&c->rep->notices, &c->rep->notice_count, offset, length, why);
}

static int ensure_schema(rctx *c, uint16_t id)
{
    if (c->schema_added[id])
        return 1;
    if (!c->schemas[id])
        return 0;
    int rc = rl_mcap_writer_add_schema(c->w, &c->schemas[id]->rec.u.schema);
    if (rc < 0)
        return rc;
    c->schema_added[id] = 1;
    c->rep->schemas_kept++;
    return 1;
}

/* Adds channel `id` (and its schema) to the output: 1 done, 0 impossible, <0 error. */
static int ensure_channel(rctx *c, uint16_t id)
{
    if (c->channel_added[id])
        return 1;
    owned_rec *ch = c->channels[id];
    if (!ch)
        return 0;
    uint16_t sid = ch->rec.u.channel.schema_id;
    if (sid != 0) {
        int rc = ensure_schema(c, sid);
        if (rc <= 0)
            return rc;
    }
    int rc = rl_mcap_writer_add_channel(c->w, &ch->rec.u.channel);
    if (rc < 0)
        return rc;
    c->channel_added[id] = 1;
    c->rep->channels_kept++;
    return 1;
}

/* A Schema, Channel or Message, at the top level or inside a chunk. */
static int handle_data(rctx *c, const rl_mcap_record *rec, uint64_t offset)
{
    if (rec->opcode == RL_MCAP_OP_SCHEMA) {
        uint16_t id = rec->u.schema.id;
        if (c->pass == 1)
            return id == 0 || c->schemas[id] ? RL_OK : own(rec, &c->schemas[id]);
        int rc = id ? ensure_schema(c, id) : 0;
        return rc < 0 ? rc : RL_OK;
    }
    if (rec->opcode == RL_MCAP_OP_CHANNEL) {
        uint16_t id = rec->u.channel.id;
        if (c->pass == 1)
            return c->channels[id] ? RL_OK : own(rec, &c->channels[id]);
        int rc = ensure_channel(c, id);
        return rc < 0 ? rc : RL_OK;
    }
    if (rec->opcode != RL_MCAP_OP_MESSAGE || c->pass == 1)
        return RL_OK;
    uint16_t id = rec->u.message.channel_id;
    int rc = ensure_channel(c, id);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        c->rep->messages_lost++;
        if (c->unknown_reported[id])
            return RL_OK;
        c->unknown_reported[id] = 1;
        char why[200];
        if (c->channels[id])
            snprintf(why, sizeof why,
                     "byte %llu: messages on channel %u dropped: its schema %u is never defined",
                     (unsigned long long)offset, id, c->channels[id]->rec.u.channel.schema_id);
        else
            snprintf(why, sizeof why,
                     "byte %llu: messages on channel %u dropped: the channel is never defined",
                     (unsigned long long)offset, id);
        return note_loss(c, offset, 0, why);
    }
    int copy = msg_set_find_or_add(&c->written, rec->body);
    if (copy < 0)
        return copy;
    if (copy) { /* kept once; the first of a run of copies is listed */
        c->rep->messages_duplicate++;
        if (c->copying)
            return RL_OK;
        c->copying = 1;
        char why[200];
        snprintf(why, sizeof why,
                 "byte %llu: Message record: a copy, byte for byte, of a message kept before "
                 "(channel %u, sequence %u); it and the copies right after it are kept once",
                 (unsigned long long)offset, id, rec->u.message.sequence);
        return notice(c, offset, 0, why);
    }
    c->copying = 0;
    rc = rl_mcap_writer_add_message(c->w, &rec->u.message);
    if (rc == RL_OK)
        c->rep->messages_kept++;
    return rc;
}

/* ---- Chunks ------------------------------------------------------------------------- */

static int cmp_ent(const void *a, const void *b)
{
    const idx_ent *x = a, *y = b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

static const idx_ent *find_ent(const idx_ent *e, size_t n, uint64_t offset)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && e[lo].offset == offset ? &e[lo] : NULL;
}

/* Reads the MessageIndex records right after the chunk that ends at `end` (those that
 * parse), so that damage inside the chunk can be located and its messages counted. */
static int read_following_index(rctx *c, size_t end)
{
    c->nents = 0;
    memset(c->indexed, 0, NIDS / 8);
    size_t pos = end;
    rl_mcap_record mi;
    while (pos < c->len && c->data[pos] == RL_MCAP_OP_MESSAGE_INDEX &&
           rl_mcap_records_next(c->data, c->len, &pos, &mi) == 1) {
        uint16_t ch = mi.u.message_index.channel_id;
        c->indexed[ch >> 3] |= (uint8_t)(1u << (ch & 7));
        for (size_t i = 0; i < mi.u.message_index.count; i++) {
            if (rl_grow_array((void **)&c->ents, &c->ents_cap, c->nents + 1, sizeof *c->ents,
                              "mcap recover") < 0)
                return RL_ENOMEM;
            idx_ent *e = &c->ents[c->nents++];
            rl_mcap_message_index_entry(&mi.u.message_index, i, &e->log_time, &e->offset);
            e->channel = ch;
        }
    }
    if (c->nents > 1)
        qsort(c->ents, c->nents, sizeof *c->ents, cmp_ent);
    return RL_OK;
}

/* 1 when the message at `at` agrees with the message index (or the index says nothing
 * about its place and channel). */
static int index_agrees(const rctx *c, size_t at, const rl_mcap_message *m)
{
    const idx_ent *e = find_ent(c->ents, c->nents, at);
    if (e)
        return e->channel == m->channel_id && e->log_time == m->log_time;
    return !(c->indexed[m->channel_id >> 3] >> (m->channel_id & 7) & 1);
}

static int inner_op_ok(uint8_t op)
{
    return op == RL_MCAP_OP_SCHEMA || op == RL_MCAP_OP_CHANNEL || op == RL_MCAP_OP_MESSAGE ||
           op >= 0x80;
}

/* A record of a chunk that reads and belongs there: NULL, or why not. */
static const char *inner_problem(rctx *c, const uint8_t *buf, size_t n, size_t at, size_t *next,
                                 rl_mcap_record *out, char *why, size_t cap)
{
    *next = at;
    if (rl_mcap_records_next(buf, n, next, out) < 0) {
        snprintf(why, cap, "%s", mcap_skip_byte_prefix(rl_error_last()));
        return why;
    }
    if (!inner_op_ok(out->opcode)) {
        snprintf(why, cap, "a %s record cannot be inside a chunk", rl_mcap_opcode_name(out->opcode));
        return why;
    }
    if (out->opcode == RL_MCAP_OP_MESSAGE && c->check_index && !index_agrees(c, at, &out->u.message)) {
        snprintf(why, cap, "a Message (channel %u, log time %llu) its message index does not list",
                 out->u.message.channel_id, (unsigned long long)out->u.message.log_time);
        return why;
    }
    return NULL;
}

/* Where intact records resume after damage at `at`: the next place the message index
 * names that holds its message, else the next place two sound records follow each other
 * (or one ends the chunk), else the end. */
static size_t resume_after(rctx *c, const uint8_t *buf, size_t n, size_t at)
{
    char why[160];
    rl_mcap_record r;
    size_t next;
    if (c->nents) {
        for (size_t i = 0; i < c->nents; i++)
            if (c->ents[i].offset > at && c->ents[i].offset < n &&
                !inner_problem(c, buf, n, (size_t)c->ents[i].offset, &next, &r, why, sizeof why))
                return (size_t)c->ents[i].offset;
        return n;
    }
    for (size_t p = at + 1; p + RL_MCAP_RECORD_PREFIX <= n; p++) {
        if (!inner_op_ok(buf[p]) || inner_problem(c, buf, n, p, &next, &r, why, sizeof why))
            continue;
        size_t after;
        if (next == n || !inner_problem(c, buf, n, next, &after, &r, why, sizeof why))
            return p;
    }
    return n;
}

/* Where the damage found at `at` began: a wiped block (8 or more equal bytes from `at`)
 * reaches back over the equal bytes before it, into the record they end. */
static size_t damage_start(const uint8_t *buf, size_t n, size_t at)
{
    if (n - at < 8)
        return at;
    for (size_t i = 1; i < 8; i++)
        if (buf[at + i] != buf[at])
            return at;
    size_t s = at;
    while (s > 0 && buf[s - 1] == buf[at])
        s--;
    return s;
}

/* Splits a chunk's records into sound records and damaged stretches. */
static int split_records(rctx *c, const uint8_t *buf, size_t n)
{
    c->nrecs = c->nspans = 0;
    size_t pos = 0;
    while (pos < n) {
        size_t next;
        rl_mcap_record in;
        char why[160];
        if (!inner_problem(c, buf, n, pos, &next, &in, why, sizeof why)) {
            if (rl_grow_array((void **)&c->recs, &c->recs_cap, c->nrecs + 1, sizeof *c->recs,
                              "mcap recover") < 0)
                return RL_ENOMEM;
            c->recs[c->nrecs].at = pos;
            c->recs[c->nrecs].end = next;
            c->recs[c->nrecs++].rec = in;
            pos = next;
            continue;
        }
        if (rl_grow_array((void **)&c->spans, &c->spans_cap, c->nspans + 1, sizeof *c->spans,
                          "mcap recover") < 0)
            return RL_ENOMEM;
        span *sp = &c->spans[c->nspans++];
        sp->start = damage_start(buf, n, pos);
        sp->end = resume_after(c, buf, n, pos);
        snprintf(sp->why, sizeof sp->why, "%s", why);
        pos = sp->end;
    }
    return RL_OK;
}

static int overlaps_damage(const rctx *c, const inner_rec *r)
{
    for (size_t i = 0; i < c->nspans; i++)
        if (r->at < c->spans[i].end && r->end > c->spans[i].start)
            return 1;
    return 0;
}

static int remember_message(rctx *c, size_t at, const rl_mcap_message *m)
{
    if (rl_grow_array((void **)&c->last_msgs, &c->last_cap, c->nlast + 1, sizeof *c->last_msgs,
                      "mcap recover") < 0)
        return RL_ENOMEM;
    idx_ent *e = &c->last_msgs[c->nlast++];
    e->offset = at;
    e->log_time = m->log_time;
    e->channel = m->channel_id;
    return RL_OK;
}

/* Keeps the sound records of a chunk and reports its damage. `damaged` says the chunk is
 * known to be damaged (its CRC or size failed); `file_base` is the file offset of buf[0]
 * for an uncompressed chunk, UINT64_MAX otherwise. */
static int read_chunk_records(rctx *c, const rl_mcap_record *chunk, const uint8_t *buf,
                              size_t n, const char *damaged, uint64_t file_base)
{
    int rc = split_records(c, buf, n);
    if (rc < 0)
        return rc;
    /* Damage that the CRC proves but no record shows cannot be placed: all is suspect. */
    int all_suspect = damaged && c->nspans == 0;
    int salvage = damaged || c->nspans;
    c->nlast = 0;
    unsigned long long coff = (unsigned long long)chunk->offset;
    for (size_t i = 0; i < c->nrecs && rc == RL_OK; i++) {
        inner_rec *r = &c->recs[i];
        if (r->rec.opcode != RL_MCAP_OP_MESSAGE) {
            /* A Schema or Channel that parses is used even from a damaged chunk: without
             * it every message of its channel, in every chunk, would be lost. */
            rc = handle_data(c, &r->rec, chunk->offset);
            continue;
        }
        if (all_suspect || overlaps_damage(c, r)) {
            if (c->pass == 1)
                continue;
            const rl_mcap_message *m = &r->rec.u.message;
            int keep = c->opts && c->opts->keep_suspect;
            char why[240];
            snprintf(why, sizeof why,
                     "byte %llu: inside Chunk record at records offset %zu: suspect Message "
                     "(channel %u, sequence %u, log time %llu) %s: %s",
                     coff, r->at, m->channel_id, m->sequence, (unsigned long long)m->log_time,
                     all_suspect ? "in a chunk whose damage could not be located"
                                 : "overlapping damaged bytes",
                     keep ? "kept (--keep-suspect)" : "dropped");
            c->rep->messages_suspect++;
            rc = notice(c, file_base == UINT64_MAX ? chunk->offset : file_base + r->at, 0, why);
            if (rc == RL_OK && keep)
                rc = handle_data(c, &r->rec, chunk->offset);
            else if (rc == RL_OK)
                c->rep->messages_lost++;
            continue;
        }
        uint64_t before = c->rep->messages_kept;
        rc = handle_data(c, &r->rec, chunk->offset);
        if (rc == RL_OK)
            rc = remember_message(c, r->at, &r->rec.u.message);
        if (salvage && c->pass == 2 && c->rep->messages_kept > before)
            c->rep->messages_salvaged++;
    }
    if (c->pass == 1 || rc < 0)
        return rc;
    for (size_t i = 0; i < c->nspans && rc == RL_OK; i++) {
        const span *sp = &c->spans[i];
        uint64_t lost_msgs = 0;
        for (size_t j = 0; j < c->nents; j++)
            if (c->ents[j].offset >= sp->start && c->ents[j].offset < sp->end) {
                int parsed = 0;
                for (size_t k = 0; k < c->nrecs && !parsed; k++)
                    parsed = c->recs[k].at == c->ents[j].offset;
                lost_msgs += !parsed;
            }
        c->rep->messages_lost += lost_msgs;
        char why[240];
        snprintf(why, sizeof why,
                 "byte %llu: inside Chunk record, records bytes %zu..%zu: %s (%llu indexed "
                 "messages lost)",
                 coff, sp->start, sp->end, sp->why, (unsigned long long)lost_msgs);
        if (file_base == UINT64_MAX)
            rc = note_loss(c, chunk->offset, 0, why);
        else
            rc = note_loss(c, file_base + sp->start, sp->end - sp->start, why);
    }
    if (rc == RL_OK && all_suspect)
        rc = note_loss(c, chunk->offset, 0, damaged);
    return rc;
}

static int count_messages(const uint8_t *buf, size_t n)
{
    size_t pos = 0;
    rl_mcap_record in;
    int count = 0;
    while (rl_mcap_records_next(buf, n, &pos, &in) == 1)
        count += in.opcode == RL_MCAP_OP_MESSAGE;
    return count;
}

static int handle_chunk(rctx *c, const rl_mcap_record *rec)
{
    const rl_mcap_chunk *ch = &rec->u.chunk;
    uint64_t total = RL_MCAP_RECORD_PREFIX + (uint64_t)rec->body.len;
    uint64_t orig = mcap_chunk_set_find_or_add(&c->seen, c->data, rec->offset, total);
    const uint8_t *buf = NULL;
    size_t n = 0;
    int owned = 0;
    int rc = rl_mcap_chunk_decompress(ch, c->max_chunk, 1, &buf, &n, &owned);
    if (rc == RL_ENOMEM)
        return rc;
    if (orig != UINT64_MAX) { /* a chunk written twice: its messages are kept once */
        c->after = AFTER_HANDLED;
        if (c->pass == 2) {
            c->rep->chunks_duplicate++;
            int msgs = rc == RL_OK ? count_messages(buf, n) : 0;
            c->rep->messages_duplicate += (uint64_t)msgs;
            char why[200];
            snprintf(why, sizeof why,
                     "byte %llu: Chunk record: an exact copy of the chunk at byte %llu; its %d "
                     "messages are kept once",
                     (unsigned long long)rec->offset, (unsigned long long)orig, msgs);
            rc = notice(c, rec->offset, total, why);
        } else {
            rc = RL_OK;
        }
        if (owned)
            free((void *)buf);
        return rc;
    }
    char damaged[240] = "";
    uint64_t file_base = UINT64_MAX;
    if (rc < 0) {
        rl_error_prefix(rc, "byte %llu: Chunk record", (unsigned long long)rec->offset);
        snprintf(damaged, sizeof damaged, "%s", rl_error_last());
        if (ch->compression.len == 0) {
            /* Uncompressed: its records are there to be read one by one. */
            buf = ch->records.data;
            n = ch->records.len;
            rc = RL_OK;
        } else if (rc == RL_ECRC) {
            /* Decompressed fine but the bytes differ from what was written. */
            rc = rl_mcap_chunk_decompress(ch, c->max_chunk, 0, &buf, &n, &owned);
        }
    }
    if (ch->compression.len == 0)
        file_base = (uint64_t)(ch->records.data - c->data);
    if (rc < 0) {
        if (rc == RL_ENOMEM)
            return rc;
        c->after = AFTER_LOST;
        if (c->pass == 1)
            return RL_OK;
        c->rep->chunks_lost++;
        return note_loss(c, rec->offset, total, damaged);
    }
    c->after = AFTER_INTACT;
    if (c->pass == 1 && !c->saw_chunk) {
        c->saw_chunk = 1;
        c->first_comp = rl_mcap_bytes_eq(ch->compression, rl_mcap_bytes_of("zstd"))
                            ? RL_MCAP_COMPRESSION_ZSTD
                        : rl_mcap_bytes_eq(ch->compression, rl_mcap_bytes_of("lz4"))
                            ? RL_MCAP_COMPRESSION_LZ4
                            : RL_MCAP_COMPRESSION_NONE;
    }
    if (c->pass == 1 && n > c->max_usize)
        c->max_usize = n;
    if (c->pass == 2)
        c->rep->chunks_read++;
    c->check_index = damaged[0] || ch->uncompressed_crc == 0;
    rc = read_following_index(c, (size_t)(rec->offset + total));
    if (rc == RL_OK)
        rc = read_chunk_records(c, rec, buf, n, damaged[0] ? damaged : NULL, file_base);
    if (rc == RL_OK && (damaged[0] || c->nspans))
        c->after = AFTER_HANDLED;
    if (owned)
        free((void *)buf);
    return rc;
}

/* The entries of a MessageIndex after damage: of the last chunk read (all point at its
 * messages), or of a chunk lost in the damage. */
static int indexes_last_chunk(const rctx *c, const rl_mcap_message_index *mi)
{
    for (size_t i = 0; i < mi->count; i++) {
        uint64_t t, off;
        rl_mcap_message_index_entry(mi, i, &t, &off);
        const idx_ent *e = find_ent(c->last_msgs, c->nlast, off);
        if (!e || e->channel != mi->channel_id || e->log_time != t)
            return 0;
    }
    return 1;
}

static int handle_top(rctx *c, const rl_mcap_record *rec)
{
    if (rec->opcode != RL_MCAP_OP_MESSAGE_INDEX && rec->opcode != RL_MCAP_OP_CHUNK)
        c->after = AFTER_NONE;
    switch (rec->opcode) {
    case RL_MCAP_OP_HEADER:
        if (c->pass == 1 && !c->profile) {
            c->profile = rl_mcap_bytes_dup(rec->u.header.profile);
            c->library = rl_mcap_bytes_dup(rec->u.header.library);
            if (!c->profile || !c->library)
                return rl_error_set(RL_ENOMEM, "mcap recover: out of memory");
        }
        return RL_OK;
    case RL_MCAP_OP_SCHEMA:
    case RL_MCAP_OP_CHANNEL:
        return handle_data(c, rec, rec->offset);
    case RL_MCAP_OP_MESSAGE:
        c->saw_top_message = 1;
        return handle_data(c, rec, rec->offset);
    case RL_MCAP_OP_CHUNK:
        return handle_chunk(c, rec);
    case RL_MCAP_OP_MESSAGE_INDEX:
        if (c->after == AFTER_DAMAGE && !indexes_last_chunk(c, &rec->u.message_index)) {
            /* The index of a chunk that the damage destroyed. */
            c->after = AFTER_LOST;
            if (c->pass == 2)
                c->rep->chunks_lost++;
        }
        if (c->pass == 2 && c->after == AFTER_LOST)
            c->rep->messages_lost += rec->u.message_index.count;
        return RL_OK;
    case RL_MCAP_OP_ATTACHMENT:
        if (c->pass == 2) {
            int rc = rl_mcap_writer_add_attachment(c->w, &rec->u.attachment);
            if (rc == RL_OK)
                c->rep->attachments_kept++;
            return rc;
        }
        return RL_OK;
    case RL_MCAP_OP_METADATA:
        if (c->pass == 2) {
            int rc = rl_mcap_writer_add_metadata(c->w, &rec->u.metadata);
            if (rc == RL_OK)
                c->rep->metadata_kept++;
            return rc;
        }
        return RL_OK;
    case RL_MCAP_OP_STATISTICS:
        c->stats_messages = rec->u.statistics.message_count;
        c->stats_chunks = rec->u.statistics.chunk_count;
        c->have_stats = 1;
        return RL_OK;
    case RL_MCAP_OP_FOOTER:
        /* The reader checked the summary CRC: its statistics describe the file as written. */
        c->saw_footer = 1;
        c->stats_trusted = c->have_stats;
        return RL_OK;
    default:
        return RL_OK; /* indexes, statistics, summary: rebuilt by the writer */
    }
}

/* Records that only describe others: losing them loses no data. */
static int is_index_op(uint8_t op)
{
    return op == RL_MCAP_OP_FOOTER || op == RL_MCAP_OP_MESSAGE_INDEX ||
           op == RL_MCAP_OP_CHUNK_INDEX || op == RL_MCAP_OP_ATTACHMENT_INDEX ||
           op == RL_MCAP_OP_STATISTICS || op == RL_MCAP_OP_METADATA_INDEX ||
           op == RL_MCAP_OP_SUMMARY_OFFSET || op == RL_MCAP_OP_DATA_END;
}

/* One pass over the input; returns RL_OK or a fatal error (writing, memory). */
static int recover_pass(rctx *c, int *damaged)
{
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    ro.chunks = RL_MCAP_CHUNKS_RAW;
    ro.allow_trailing_data = 1;
    ro.max_chunk_size = c->max_chunk;
    rl_mcap_reader *r = NULL;
    int rc = rl_mcap_reader_open_mem(&r, c->data, c->len, &ro);
    if (rc < 0)
        return rc;
    c->after = AFTER_NONE;
    c->saw_footer = 0;
    mcap_chunk_set_free(&c->seen);
    *damaged = 0;
    uint64_t base = c->pass == 1 ? 0 : c->len;
    for (;;) {
        rl_mcap_record rec;
        rc = rl_mcap_reader_next(r, &rec);
        if (rc == 0)
            break;
        if (c->opts && c->opts->progress && ++c->records % PROGRESS_EVERY == 0)
            c->opts->progress(c->opts->progress_ctx, base + rl_mcap_reader_offset(r),
                              2 * (uint64_t)c->len);
        if (rc > 0) {
            rc = handle_top(c, &rec);
            if (rc < 0)
                break;
            continue;
        }
        if (rc == RL_ENOMEM)
            break;
        *damaged = 1;
        size_t at = (size_t)rl_mcap_reader_offset(r);
        if (at >= c->len) { /* the file just stops before its footer */
            rc = RL_OK;
            break;
        }
        uint8_t op = c->data[at];
        size_t next = mcap_resync(c->data, c->len, at, c->max_chunk);
        int framed = mcap_prefix_plausible(c->data, c->len, at) &&
                     next == at + RL_MCAP_RECORD_PREFIX + (size_t)mcap_rd64(c->data + at + 1);
        /* Message indexes after a lost chunk count its messages; after damage of unknown
         * extent, those that do not index the last chunk read do. */
        if (!(framed && is_index_op(op)))
            c->after = op == RL_MCAP_OP_CHUNK ? AFTER_LOST : AFTER_DAMAGE; /* counted below */
        if (c->pass == 2 && !(framed && is_index_op(op))) {
            if (op == RL_MCAP_OP_CHUNK)
                c->rep->chunks_lost++;
            else if (op == RL_MCAP_OP_ATTACHMENT)
                c->rep->attachments_lost++;
            else if (op == RL_MCAP_OP_METADATA)
                c->rep->metadata_lost++;
            rc = note_loss(c, at, next - at, rl_error_last());
            if (rc < 0)
                break;
        }
        rc = RL_OK;
        if (next >= c->len || (framed && op == RL_MCAP_OP_FOOTER))
            break;
        if (at < RL_MCAP_MAGIC_LEN) /* no leading magic: nothing to resynchronise from */
            break;
        rl_mcap_reader_seek(r, next);
    }
    /* Bytes changed where nothing else checks them (an index): nothing lost, but the
     * input was not undamaged. */
    if (rc == RL_OK && c->pass == 2 && rl_mcap_reader_warning(r))
        rc = notice(c, 0, 0, rl_mcap_reader_warning(r));
    rl_mcap_reader_close(r);
    return rc;
}

static void free_ctx(rctx *c)
{
    for (size_t i = 0; i < NIDS; i++) {
        if (c->schemas && c->schemas[i]) {
            free(c->schemas[i]->mem);
            free(c->schemas[i]);
        }
        if (c->channels && c->channels[i]) {
            free(c->channels[i]->mem);
            free(c->channels[i]);
        }
    }
    free(c->schemas);
    free(c->channels);
    free(c->schema_added);
    free(c->channel_added);
    free(c->unknown_reported);
    free(c->indexed);
    free(c->ents);
    free(c->last_msgs);
    free(c->recs);
    free(c->spans);
    mcap_chunk_set_free(&c->seen);
    free(c->written.slots);
    free(c->profile);
    free(c->library);
}

int rl_mcap_recover_mem(const void *data, size_t len, int out_fd,
                        const rl_mcap_recover_options *opts, rl_mcap_recover_report *report)
{
    rl_mcap_recover_report local;
    if (!report)
        report = &local;
    memset(report, 0, sizeof *report);
    report->input_size = len;
    const uint8_t *d = data ? data : (const uint8_t *)"";
    if (!data)
        len = 0;
    size_t head = len < RL_MCAP_MAGIC_LEN ? len : RL_MCAP_MAGIC_LEN;
    if (memcmp(d, rl_mcap_magic, head) != 0)
        return rl_error_set(RL_EPARSE, "mcap recover: byte 0: not an MCAP file (no leading magic)");

    rctx c;
    memset(&c, 0, sizeof c);
    c.data = d;
    c.len = len;
    c.opts = opts;
    c.rep = report;
    c.max_chunk = opts && opts->max_chunk_size ? opts->max_chunk_size : (uint64_t)4 << 30;
    c.schemas = calloc(NIDS, sizeof *c.schemas);
    c.channels = calloc(NIDS, sizeof *c.channels);
    c.schema_added = calloc(NIDS, 1);
    c.channel_added = calloc(NIDS, 1);
    c.unknown_reported = calloc(NIDS, 1);
    c.indexed = calloc(NIDS / 8, 1);
    int rc = RL_OK;
    if (!c.schemas || !c.channels || !c.schema_added || !c.channel_added || !c.unknown_reported ||
        !c.indexed)
        rc = rl_error_set(RL_ENOMEM, "mcap recover: out of memory");
    int damaged = 0;
    if (rc == RL_OK && len > RL_MCAP_MAGIC_LEN) {
        c.pass = 1;
        rc = recover_pass(&c, &damaged);
    }
    if (rc == RL_OK) {
        rl_mcap_writer_options wo;
        if (opts && opts->writer) {
            wo = *opts->writer;
        } else {
            rl_mcap_writer_options_default(&wo);
            wo.profile = c.profile ? c.profile : "";
            wo.library = c.library;
            if (c.saw_chunk) {
                wo.compression = c.first_comp;
                if (c.max_usize > 0)
                    wo.chunk_size = c.max_usize;
            } else if (c.saw_top_message) {
                wo.use_chunks = 0;
            }
        }
        off_t start = lseek(out_fd, 0, SEEK_CUR);
        rc = rl_mcap_writer_open_fd(&c.w, out_fd, &wo);
        if (rc == RL_OK && len > RL_MCAP_MAGIC_LEN) {
            c.pass = 2;
            rc = recover_pass(&c, &damaged);
        }
        if (rc == RL_OK) {
            rc = rl_mcap_writer_close(c.w);
            c.w = NULL;
            off_t end = lseek(out_fd, 0, SEEK_CUR);
            if (start >= 0 && end >= start)
                report->output_size = (uint64_t)(end - start);
        }
        rl_mcap_writer_free(c.w);
    }
    if (rc == RL_OK && c.stats_trusted) {
        /* Damage that swallowed whole chunks with their message indexes leaves no index
         * to count: the statistics still know how many there were. */
        if (c.stats_messages > report->messages_kept &&
            c.stats_messages - report->messages_kept > report->messages_lost)
            report->messages_lost = c.stats_messages - report->messages_kept;
        if (c.stats_chunks > report->chunks_read &&
            c.stats_chunks - report->chunks_read > report->chunks_lost)
            report->chunks_lost = c.stats_chunks - report->chunks_read;
    }
    if (rc == RL_OK) {
        if (len <= RL_MCAP_MAGIC_LEN) {
            damaged = 1;
            rc = note_loss(&c, 0, len, "file ends inside the leading magic or right after it");
        }
        report->input_complete = !damaged && c.saw_footer && report->lost_count == 0 &&
                                 report->bytes_lost == 0 && report->messages_lost == 0 &&
                                 report->notice_count == 0 && report->chunks_lost == 0;
    }
    free_ctx(&c);
    if (report == &local)
        rl_mcap_recover_report_free(&local);
    return rc;
}

int rl_mcap_recover_fd(const char *in_path, int out_fd, const rl_mcap_recover_options *opts,
                       rl_mcap_recover_report *report)
{
    mcap_file f;
    int rc = mcap_file_open(&f, in_path);
    if (rc < 0) {
        if (report)
            memset(report, 0, sizeof *report);
        return rc;
    }
    rc = rl_mcap_recover_mem(f.data, f.len, out_fd, opts, report);
    if (rc < 0)
        rl_error_prefix(rc, "%s", in_path);
    mcap_file_close(&f);
    return rc;
}

void rl_mcap_recover_report_free(rl_mcap_recover_report *report)
{
    if (!report)
        return;
    free(report->lost);
    report->lost = NULL;
    report->lost_count = 0;
    free(report->notices);
    report->notices = NULL;
    report->notice_count = 0;
}
