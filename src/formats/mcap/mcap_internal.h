/* Private helpers shared by the MCAP sources (src/formats/mcap/mcap_*.c): little-endian
 * access done byte by byte (no unaligned casts), a growable byte buffer, and the
 * compressors used by the writer. Not part of the public API. */
#ifndef RUNLAB_MCAP_INTERNAL_H
#define RUNLAB_MCAP_INTERNAL_H

#include "runlab/mcap.h"

#include <stddef.h>
#include <stdint.h>

static inline uint16_t mcap_rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t mcap_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t mcap_rd64(const uint8_t *p)
{
    return (uint64_t)mcap_rd32(p) | ((uint64_t)mcap_rd32(p + 4) << 32);
}

static inline void mcap_wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void mcap_wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void mcap_wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A Message record's fixed fields: channel_id, sequence, log_time, publish_time. */
enum { MCAP_MESSAGE_FIXED = 2 + 4 + 8 + 8 };

/* Decodes a Message body of `len` >= MCAP_MESSAGE_FIXED bytes (the caller checks). */
static inline void mcap_message_decode(const uint8_t *body, size_t len, rl_mcap_message *m)
{
    m->channel_id = mcap_rd16(body);
    m->sequence = mcap_rd32(body + 2);
    m->log_time = mcap_rd64(body + 6);
    m->publish_time = mcap_rd64(body + 14);
    m->data.data = body + MCAP_MESSAGE_FIXED;
    m->data.len = len - MCAP_MESSAGE_FIXED;
}

/* Growable buffer; memory is released with mcap_buf_free. */
typedef struct mcap_buf {
    uint8_t *data;
    size_t len, cap;
} mcap_buf;

/* Ensures room for `extra` more bytes. RL_OK or RL_ENOMEM (message set). */
int mcap_buf_reserve(mcap_buf *b, size_t extra);
int mcap_buf_append(mcap_buf *b, const void *data, size_t len);
/* Appends one encoded record. */
int mcap_buf_append_record(mcap_buf *b, const rl_mcap_record *rec);
void mcap_buf_free(mcap_buf *b);

/* Compresses `len` bytes into `out` (replacing its content). `zstd_ctx`, when not NULL,
 * holds a zstd context kept between calls (created on first use; free it with
 * mcap_compress_ctx_free): creating one per chunk costs more than compressing a small one.
 * One context serves one thread at a time. */
int mcap_compress(rl_mcap_compression c, int level, const uint8_t *src, size_t len, mcap_buf *out,
                  void **zstd_ctx);
void mcap_compress_ctx_free(void *zstd_ctx);

/* Chunk decompression contexts kept by one reader between chunks (creating a zstd context
 * per chunk costs about as much as decompressing a small chunk). Zero-initialise; contexts
 * are created on first use; free with mcap_decoder_free. One thread at a time. */
typedef struct mcap_decoder {
    void *zstd; /* ZSTD_DCtx */
    void *lz4;  /* LZ4F_dctx */
} mcap_decoder;

void mcap_decoder_free(mcap_decoder *dec);

/* As rl_mcap_chunk_decompress, with the contexts of `dec` and into the caller's buffer
 * `*buf` of `*cap` bytes (NULL/0 at first; replaced by a larger one when the chunk does not
 * fit, and kept by the caller, who frees it). `*out` points into `*buf` for a compressed
 * chunk and at chunk->records for a stored one. Same checks and errors. */
int mcap_chunk_decompress_into(const rl_mcap_chunk *chunk, uint64_t max_size, int verify_crc,
                               mcap_decoder *dec, uint8_t **buf, size_t *cap,
                               const uint8_t **out, size_t *out_len);

/* Compression name as written in Chunk records. */
const char *mcap_compression_name(rl_mcap_compression c);

/* `msg` without a leading "byte N: " (for callers that name the place themselves, so a
 * message never says the offset twice). */
const char *mcap_skip_byte_prefix(const char *msg);

/* Damage handling shared by recover, doctor and the indexed reader (mcap_scan.c). */

/* 1 when a well-formed top-level record starts at `pos` (known opcode other than
 * Header, length within the file, body parses, and what follows is another plausible
 * record prefix, the closing magic or the end of the file; a Chunk must also decompress
 * and match its CRC). */
int mcap_record_plausible_at(const uint8_t *data, size_t len, size_t pos, uint64_t max_chunk);

/* Where to continue after the top-level record at `at` failed: past it when its framing
 * is intact (a CRC or body error), else the next plausible record after `at`, else `len`. */
size_t mcap_resync(const uint8_t *data, size_t len, size_t at, uint64_t max_chunk);
/* Whether the record prefix at `pos` could start a record: a known opcode and a length
 * that fits in the `len` bytes (mcap_scan.c). */
int mcap_prefix_plausible(const uint8_t *data, size_t len, size_t pos);

/* Exact copies of Chunk records (a chunk written twice): a set of the chunks seen, by
 * their byte range in one buffer. Zero-initialise; free with mcap_chunk_set_free. */
typedef struct mcap_chunk_slot {
    uint64_t hash, offset, length;
} mcap_chunk_slot;

typedef struct mcap_chunk_set {
    mcap_chunk_slot *slots;
    size_t cap, count;
} mcap_chunk_set;

/* The offset of an earlier chunk whose record (`length` bytes with the prefix) equals the
 * one at `offset` of `data`; otherwise remembers this one and returns UINT64_MAX (also when
 * out of memory, when copies are merely not recognised). */
uint64_t mcap_chunk_set_find_or_add(mcap_chunk_set *s, const uint8_t *data, uint64_t offset,
                                    uint64_t length);
void mcap_chunk_set_free(mcap_chunk_set *s);

#endif
