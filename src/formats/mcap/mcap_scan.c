/* Scanning damaged MCAP bytes, shared by recovery (mcap_recover.c), the doctor and the
 * indexed reader: whether a well-formed record plausibly starts at an offset, the next such
 * record after damage, and a set of the chunks seen that recognises exact copies. It calls
 * no reader or writer. */
#include "mcap_internal.h"

#include "runlab/error.h"

#include <stdlib.h>
#include <string.h>

/* ---- Resynchronisation -------------------------------------------------------------- */

static int magic_at(const uint8_t *data, size_t len, size_t pos)
{
    return len - pos >= RL_MCAP_MAGIC_LEN && memcmp(data + pos, rl_mcap_magic, RL_MCAP_MAGIC_LEN) == 0;
}

/* A record prefix that could start a record: known opcode and a length that fits. */
int mcap_prefix_plausible(const uint8_t *data, size_t len, size_t pos)
{
    if (len - pos < RL_MCAP_RECORD_PREFIX)
        return 0;
    uint8_t op = data[pos];
    if (op < RL_MCAP_OP_FOOTER || op > RL_MCAP_OP_DATA_END)
        return 0;
    return mcap_rd64(data + pos + 1) <= len - pos - RL_MCAP_RECORD_PREFIX;
}

/* What follows a record: another record, the closing magic, the end, or a cut prefix. */
static int follower_plausible(const uint8_t *data, size_t len, size_t next)
{
    return next == len || len - next < RL_MCAP_RECORD_PREFIX || magic_at(data, len, next) ||
           mcap_prefix_plausible(data, len, next);
}

int mcap_record_plausible_at(const uint8_t *data, size_t len, size_t pos, uint64_t max_chunk)
{
    if (pos >= len || !mcap_prefix_plausible(data, len, pos))
        return 0;
    uint8_t op = data[pos];
    size_t blen = (size_t)mcap_rd64(data + pos + 1);
    size_t next = pos + RL_MCAP_RECORD_PREFIX + blen;
    if (op == RL_MCAP_OP_FOOTER ? !magic_at(data, len, next)
                                : !follower_plausible(data, len, next))
        return 0;
    rl_mcap_record rec;
    if (rl_mcap_record_parse(op, data + pos + RL_MCAP_RECORD_PREFIX, blen, &rec) < 0)
        return 0;
    if (op == RL_MCAP_OP_CHUNK) {
        const uint8_t *buf = NULL;
        size_t n = 0;
        int owned = 0;
        if (rl_mcap_chunk_decompress(&rec.u.chunk, max_chunk, 1, &buf, &n, &owned) < 0)
            return 0;
        if (owned)
            free((void *)buf);
    }
    return 1;
}

size_t mcap_resync(const uint8_t *data, size_t len, size_t at, uint64_t max_chunk)
{
    if (at >= len)
        return len;
    if (mcap_prefix_plausible(data, len, at)) {
        size_t next = at + RL_MCAP_RECORD_PREFIX + (size_t)mcap_rd64(data + at + 1);
        if (follower_plausible(data, len, next))
            return next;
    }
    for (size_t p = at + 1; p + RL_MCAP_RECORD_PREFIX <= len; p++)
        if (mcap_record_plausible_at(data, len, p, max_chunk))
            return p;
    return len;
}

/* ---- Exact copies of chunks ---------------------------------------------------------- */

/* FNV-1a over the record's head (prefix, times, sizes, CRC) and tail: equal records hash
 * equal; different ones almost never do, and a collision only costs a memcmp. */
static uint64_t chunk_hash(const uint8_t *rec, uint64_t length)
{
    uint64_t h = 1469598103934665603ull;
    size_t head = length < 64 ? (size_t)length : 64, tail = length < 96 ? 0 : 32;
    for (size_t i = 0; i < head; i++)
        h = (h ^ rec[i]) * 1099511628211ull;
    for (size_t i = (size_t)length - tail; i < length; i++)
        h = (h ^ rec[i]) * 1099511628211ull;
    return h ? h : 1;
}

static int chunk_set_grow(mcap_chunk_set *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 64;
    mcap_chunk_slot *n = calloc(ncap, sizeof *n);
    if (!n)
        return 0;
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slots[i].hash)
            continue;
        size_t j = (size_t)(s->slots[i].hash & (ncap - 1));
        while (n[j].hash)
            j = (j + 1) & (ncap - 1);
        n[j] = s->slots[i];
    }
    free(s->slots);
    s->slots = n;
    s->cap = ncap;
    return 1;
}

uint64_t mcap_chunk_set_find_or_add(mcap_chunk_set *s, const uint8_t *data, uint64_t offset,
                                    uint64_t length)
{
    if (2 * (s->count + 1) > s->cap && !chunk_set_grow(s))
        return UINT64_MAX;
    const uint8_t *rec = data + offset;
    uint64_t h = chunk_hash(rec, length);
    size_t j = (size_t)(h & (s->cap - 1));
    for (; s->slots[j].hash; j = (j + 1) & (s->cap - 1)) {
        const mcap_chunk_slot *e = &s->slots[j];
        if (e->hash == h && e->length == length && e->offset != offset &&
            memcmp(data + e->offset, rec, (size_t)length) == 0)
            return e->offset;
        if (e->offset == offset)
            return UINT64_MAX; /* seen before (a second pass) */
    }
    s->slots[j].hash = h;
    s->slots[j].offset = offset;
    s->slots[j].length = length;
    s->count++;
    return UINT64_MAX;
}

void mcap_chunk_set_free(mcap_chunk_set *s)
{
    free(s->slots);
    memset(s, 0, sizeof *s);
}
