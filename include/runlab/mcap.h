/* runlab/mcap.h: MCAP (mcap.dev) in pure C: record (de)serialisation, a writer with
 * chunking, compression (zstd, LZ4 frame), indexes, statistics and summary; a streamed
 * reader that walks a file record by record (also usable to scan damaged files, every
 * record and error carries its byte offset); and an indexed reader that reads messages in
 * log-time order through the summary, falling back to a linear scan. */
#ifndef RUNLAB_MCAP_H
#define RUNLAB_MCAP_H

#include "runlab/export.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Format constants ------------------------------------------------------------ */

enum {
    RL_MCAP_MAGIC_LEN = 8,     /* 89 4D 43 41 50 30 0D 0A at both ends of a file */
    RL_MCAP_RECORD_PREFIX = 9, /* opcode (1) + body length (8) */
    RL_MCAP_FOOTER_BODY = 20,  /* the footer's fixed body length */
    RL_MCAP_MAX_CHANNEL_ID = 65535
};

/* The 8 magic bytes. */
RL_API extern const uint8_t rl_mcap_magic[RL_MCAP_MAGIC_LEN];

/* Record opcodes of the specification. 0x80-0xFF are private records; readers pass
 * every opcode they do not know to the caller as a record with only `body` set. */
typedef enum rl_mcap_opcode {
    RL_MCAP_OP_HEADER = 0x01,
    RL_MCAP_OP_FOOTER = 0x02,
    RL_MCAP_OP_SCHEMA = 0x03,
    RL_MCAP_OP_CHANNEL = 0x04,
    RL_MCAP_OP_MESSAGE = 0x05,
    RL_MCAP_OP_CHUNK = 0x06,
    RL_MCAP_OP_MESSAGE_INDEX = 0x07,
    RL_MCAP_OP_CHUNK_INDEX = 0x08,
    RL_MCAP_OP_ATTACHMENT = 0x09,
    RL_MCAP_OP_ATTACHMENT_INDEX = 0x0A,
    RL_MCAP_OP_STATISTICS = 0x0B,
    RL_MCAP_OP_METADATA = 0x0C,
    RL_MCAP_OP_METADATA_INDEX = 0x0D,
    RL_MCAP_OP_SUMMARY_OFFSET = 0x0E,
    RL_MCAP_OP_DATA_END = 0x0F
} rl_mcap_opcode;

/* Spec name of an opcode ("Chunk", "MessageIndex"); "Unknown" for others. Never NULL. */
RL_API const char *rl_mcap_opcode_name(unsigned opcode);

/* ---- Records ---------------------------------------------------------------------
 * Parsed records never own memory: every string and byte field points into the buffer
 * that was parsed (a mapped file, a decompressed chunk, the caller's bytes). Strings are
 * not NUL-terminated. Maps and arrays stay in their serialised form (`rl_mcap_bytes`)
 * and are read with the iterators below; the parser has already validated them. */

typedef struct rl_mcap_bytes {
    const uint8_t *data;
    size_t len;
} rl_mcap_bytes;

/* The bytes of NUL-terminated `s` (without its NUL), borrowed: valid while `s` is. NULL
 * gives empty bytes. For comparing a field with text: rl_mcap_bytes_eq(ch->message_encoding,
 * rl_mcap_bytes_of("cdr")). Thread-safe. */
RL_API rl_mcap_bytes rl_mcap_bytes_of(const char *s);

/* 1 when `a` and `b` hold the same bytes (either may hold NULs; data may be NULL when len
 * is 0), else 0. Thread-safe. */
RL_API int rl_mcap_bytes_eq(rl_mcap_bytes a, rl_mcap_bytes b);

/* A NUL-terminated copy of `b` (malloc'd, the caller frees), NULL when out of memory. A
 * field holding NUL bytes reads, as a C string, up to the first. Thread-safe. */
RL_API char *rl_mcap_bytes_dup(rl_mcap_bytes b);

/* One string->string map entry, for building Channel and Metadata records. */
typedef struct rl_mcap_kv {
    rl_mcap_bytes key;
    rl_mcap_bytes value;
} rl_mcap_kv;

typedef struct rl_mcap_header {
    rl_mcap_bytes profile, library;
} rl_mcap_header;

typedef struct rl_mcap_footer {
    uint64_t summary_start, summary_offset_start;
    uint32_t summary_crc;
} rl_mcap_footer;

typedef struct rl_mcap_schema {
    uint16_t id;
    rl_mcap_bytes name, encoding, data;
} rl_mcap_schema;

/* `metadata` is the serialised Map<string,string>. When encoding, a non-NULL
 * `metadata_kv` (with `metadata_kv_count` entries, in that order) is used instead. */
typedef struct rl_mcap_channel {
    uint16_t id, schema_id;
    rl_mcap_bytes topic, message_encoding, metadata;
    const rl_mcap_kv *metadata_kv;
    size_t metadata_kv_count;
} rl_mcap_channel;

typedef struct rl_mcap_message {
    uint16_t channel_id;
    uint32_t sequence;
    uint64_t log_time, publish_time;
    rl_mcap_bytes data;
} rl_mcap_message;

typedef struct rl_mcap_chunk {
    uint64_t message_start_time, message_end_time, uncompressed_size;
    uint32_t uncompressed_crc;
    rl_mcap_bytes compression; /* "", "zstd" or "lz4" */
    rl_mcap_bytes records;     /* the (compressed) records field */
} rl_mcap_chunk;

/* `entries` holds `count` pairs (log_time, offset), 16 bytes each; read with
 * rl_mcap_message_index_entry. */
typedef struct rl_mcap_message_index {
    uint16_t channel_id;
    rl_mcap_bytes entries;
    size_t count;
} rl_mcap_message_index;

typedef struct rl_mcap_chunk_index {
    uint64_t message_start_time, message_end_time, chunk_start_offset, chunk_length;
    rl_mcap_bytes message_index_offsets; /* serialised Map<uint16,uint64> */
    uint64_t message_index_length;
    rl_mcap_bytes compression;
    uint64_t compressed_size, uncompressed_size;
} rl_mcap_chunk_index;

typedef struct rl_mcap_attachment {
    uint64_t log_time, create_time;
    rl_mcap_bytes name, media_type, data;
    uint32_t crc; /* as stored; when encoding, see rl_mcap_record_encode */
} rl_mcap_attachment;

typedef struct rl_mcap_attachment_index {
    uint64_t offset, length, log_time, create_time, data_size;
    rl_mcap_bytes name, media_type;
} rl_mcap_attachment_index;

typedef struct rl_mcap_statistics {
    uint64_t message_count;
    uint16_t schema_count;
    uint32_t channel_count, attachment_count, metadata_count, chunk_count;
    uint64_t message_start_time, message_end_time;
    rl_mcap_bytes channel_message_counts; /* serialised Map<uint16,uint64> */
} rl_mcap_statistics;

/* `metadata` / `metadata_kv` as in rl_mcap_channel. */
typedef struct rl_mcap_metadata {
    rl_mcap_bytes name, metadata;
    const rl_mcap_kv *metadata_kv;
    size_t metadata_kv_count;
} rl_mcap_metadata;

typedef struct rl_mcap_metadata_index {
    uint64_t offset, length;
    rl_mcap_bytes name;
} rl_mcap_metadata_index;

typedef struct rl_mcap_summary_offset {
    uint8_t group_opcode;
    uint64_t group_start, group_length;
} rl_mcap_summary_offset;

typedef struct rl_mcap_data_end {
    uint32_t data_section_crc;
} rl_mcap_data_end;

/* Marks a record that is not inside a chunk (rl_mcap_record.chunk_offset). */
#define RL_MCAP_NO_CHUNK UINT64_MAX

/* One record. `body` is the whole body as stored, including bytes after the known
 * fields (newer writers may append fields; readers skip them). For an unknown opcode
 * only `opcode`, `offset`, `chunk_offset` and `body` are meaningful. */
typedef struct rl_mcap_record {
    uint8_t opcode;
    /* Byte offset of the opcode: in the file for top-level records; for a record inside
     * a chunk, within the chunk's uncompressed records (the chunk is at chunk_offset). */
    uint64_t offset;
    uint64_t chunk_offset;
    rl_mcap_bytes body;
    union {
        rl_mcap_header header;
        rl_mcap_footer footer;
        rl_mcap_schema schema;
        rl_mcap_channel channel;
        rl_mcap_message message;
        rl_mcap_chunk chunk;
        rl_mcap_message_index message_index;
        rl_mcap_chunk_index chunk_index;
        rl_mcap_attachment attachment;
        rl_mcap_attachment_index attachment_index;
        rl_mcap_statistics statistics;
        rl_mcap_metadata metadata;
        rl_mcap_metadata_index metadata_index;
        rl_mcap_summary_offset summary_offset;
        rl_mcap_data_end data_end;
    } u;
} rl_mcap_record;

/* Parses the body of one record (`len` bytes at `body`) into `out` (opcode and body set,
 * offset 0, chunk_offset RL_MCAP_NO_CHUNK). Every length field is checked against the
 * bytes left before use, so any input is safe. Unknown opcodes succeed with only the body;
 * opcode 0x00, which the specification leaves invalid, is RL_EPARSE (zeroed bytes).
 * Returns RL_OK or RL_EPARSE ("<Type> record: <field>: ...", no offset: callers that know
 * it prefix it). Thread-safe; allocates nothing. */
RL_API int rl_mcap_record_parse(uint8_t opcode, const uint8_t *body, size_t len, rl_mcap_record *out);

/* Serialises `rec` (opcode, length, body) into `out` when `cap` is large enough, and
 * returns the number of bytes the record takes (like snprintf: call with cap 0 to size).
 * The union member of `rec->opcode` is used; for unknown opcodes `rec->body` is copied.
 * Attachment crc: the stored `crc` field is written as given (compute it with
 * rl_mcap_attachment_crc, or pass 0 for "no crc"). Thread-safe; allocates nothing. */
RL_API size_t rl_mcap_record_encode(const rl_mcap_record *rec, uint8_t *out, size_t cap);

/* CRC-32 of an attachment's fields log_time..data, as stored in its crc field. */
RL_API uint32_t rl_mcap_attachment_crc(const rl_mcap_attachment *a);

/* Iterators over validated serialised maps. `*pos` starts at 0. They return 1 with an
 * entry, 0 at the end, RL_EPARSE if the bytes are malformed (never for maps from
 * rl_mcap_record_parse). */
RL_API int rl_mcap_map_str_next(rl_mcap_bytes map, size_t *pos, rl_mcap_bytes *key, rl_mcap_bytes *value);
RL_API int rl_mcap_map_u16u64_next(rl_mcap_bytes map, size_t *pos, uint16_t *key, uint64_t *value);

/* Entry `i` (< mi->count) of a message index. */
RL_API void rl_mcap_message_index_entry(const rl_mcap_message_index *mi, size_t i, uint64_t *log_time,
                                 uint64_t *offset);

/* Next record of a buffer of concatenated records (a decompressed chunk): parses the
 * record at `*pos` into `out` (offset = *pos, chunk_offset RL_MCAP_NO_CHUNK) and advances
 * `*pos`. Returns 1 with a record, 0 when `*pos == len`, RL_EPARSE/RL_ETRUNCATED naming
 * the offset and record type. Thread-safe. */
RL_API int rl_mcap_records_next(const uint8_t *buf, size_t len, size_t *pos, rl_mcap_record *out);

/* Decompresses a chunk's records. For compression "" no copy is made: `*out` points at
 * chunk->records and `*owned` is 0. Otherwise a buffer of exactly uncompressed_size bytes
 * is allocated (`*owned` 1, free() it), after checking uncompressed_size <= `max_size`.
 * The CRC is checked when `verify_crc` and uncompressed_crc != 0. Errors: RL_EUNSUPPORTED
 * (unknown compression), RL_ERANGE (too large), RL_EPARSE (corrupt or size mismatch),
 * RL_ECRC, RL_ENOMEM. Thread-safe. */
RL_API int rl_mcap_chunk_decompress(const rl_mcap_chunk *chunk, uint64_t max_size, int verify_crc,
                             const uint8_t **out, size_t *out_len, int *owned);

/* ---- Writer ----------------------------------------------------------------------- */

typedef enum rl_mcap_compression {
    RL_MCAP_COMPRESSION_NONE = 0,
    RL_MCAP_COMPRESSION_ZSTD = 1,
    RL_MCAP_COMPRESSION_LZ4 = 2
} rl_mcap_compression;

/* runlab's zstd level when none is given: level 1 writes 1.1-3.7 times faster than zstd's
 * own default (3) on poses, point clouds and images, for files 0-4 % larger (docs/mcap.md,
 * "Compression level"; bench/bench_zstd.c), and is the official C++ writer's default. */
#define RL_MCAP_ZSTD_DEFAULT_LEVEL 1

/* Writer options; start from rl_mcap_writer_options_default. Booleans are 0/1. */
typedef struct rl_mcap_writer_options {
    const char *profile;             /* Header profile (NUL-terminated), default "" */
    const char *library;             /* Header library; NULL (default): "runlab <version>" */
    int use_chunks;                  /* default 1 */
    uint64_t chunk_size;             /* uncompressed bytes after which a chunk closes; 1 MiB */
    rl_mcap_compression compression; /* default ZSTD */
    int compression_level;           /* 0: RL_MCAP_ZSTD_DEFAULT_LEVEL for zstd, 0 for lz4 */
    int message_index;               /* MessageIndex records after each chunk; default 1 */
    int chunk_index;                 /* ChunkIndex records in the summary; default 1 */
    int statistics;                  /* default 1 */
    int repeated_schemas;            /* Schema records repeated in the summary; default 1 */
    int repeated_channels;           /* default 1 */
    int attachment_index;            /* default 1 */
    int metadata_index;              /* default 1 */
    int summary_offsets;             /* default 1 */
    int chunk_crc;                   /* compute Chunk uncompressed_crc (else 0); default 1 */
    int data_section_crc;            /* DataEnd crc; default 1 */
    int summary_crc;                 /* Footer crc; default 1 */
    int attachment_crc;              /* Attachment crc; default 1 */
} rl_mcap_writer_options;

RL_API void rl_mcap_writer_options_default(rl_mcap_writer_options *opts);

/* A writer. Not thread-safe: one thread at a time per writer (different writers are
 * independent). With compressed chunks the writer starts one worker thread of its own
 * (named rl-compress; joined by close and free),
 * which compresses a full chunk while the caller fills the next. Memory is bounded: two
 * chunks (uncompressed and compressed) with their message indexes, and the summary tables (schemas, channels, one entry per chunk,
 * attachment and metadata). After any write error the writer is failed: every later call
 * returns RL_ESTATE, and what was written before the last successful flush stays
 * readable by the streamed reader. */
typedef struct rl_mcap_writer rl_mcap_writer;

/* Starts a file on `fd` (not owned; not closed; need not be seekable: positions are
 * counted, so pipes such as stdout work). Writes magic and Header at once. `opts` NULL
 * means defaults; the options are copied. Errors: RL_EINVAL (bad options), RL_ENOMEM,
 * RL_EIO/RL_ENOSPC. */
RL_API int rl_mcap_writer_open_fd(rl_mcap_writer **out, int fd, const rl_mcap_writer_options *opts);

/* Creates (or truncates) `path` with mode 0644 and starts a file on it; the writer owns
 * the descriptor and closes it in rl_mcap_writer_close / rl_mcap_writer_free. */
RL_API int rl_mcap_writer_open_path(rl_mcap_writer **out, const char *path,
                             const rl_mcap_writer_options *opts);

/* Adds a Schema (id >= 1, chosen by the caller, unique) or a Channel (unique id; its
 * schema_id 0 or an added schema). They are written at once: into the open chunk with
 * chunking, else directly. The writer copies what it keeps for the summary. Errors:
 * RL_EINVAL (id 0, unknown schema), RL_EEXIST (id already used with other content; an
 * identical repeat is accepted and ignored), RL_ENOMEM, RL_EIO, RL_ENOSPC. */
RL_API int rl_mcap_writer_add_schema(rl_mcap_writer *w, const rl_mcap_schema *schema);
RL_API int rl_mcap_writer_add_channel(rl_mcap_writer *w, const rl_mcap_channel *channel);

/* Adds a message on an added channel (RL_EINVAL otherwise). Log times may be in any
 * order. With chunking, the chunk is closed once its uncompressed size exceeds
 * chunk_size: uncompressed, it is written and indexed at once; compressed, it goes to the
 * worker and is written and indexed when the next chunk closes or by any other call
 * (which keeps the file in call order). An error of the worker is reported by a later
 * call. */
RL_API int rl_mcap_writer_add_message(rl_mcap_writer *w, const rl_mcap_message *msg);

/* Adds an Attachment or Metadata record, always outside chunks (the open chunk stays
 * open). The attachment crc is computed when the option is on; `a->crc` is ignored. */
RL_API int rl_mcap_writer_add_attachment(rl_mcap_writer *w, const rl_mcap_attachment *a);
RL_API int rl_mcap_writer_add_metadata(rl_mcap_writer *w, const rl_mcap_metadata *m);

/* Ends the open chunk, writes everything buffered and fsyncs (descriptors that cannot
 * be synced, such as pipes, are only written). Afterwards everything added so far is
 * durable and readable by the streamed reader. */
RL_API int rl_mcap_writer_flush(rl_mcap_writer *w);

/* Ends the open chunk (Chunk record and its message indexes) and writes everything
 * buffered, without fsync: afterwards everything added so far is in the file for the
 * streamed reader and for rl_mcap_recover_*, and survives the process being killed, but
 * not a power loss until the descriptor is synced. fsync(2) on the descriptor from
 * another thread while the writer goes on is safe; that is what it is for. */
RL_API int rl_mcap_writer_end_chunk(rl_mcap_writer *w);

/* Byte offset at which the next record will be written (bytes written + buffered); a
 * chunk in the worker's hands is written first. */
RL_API uint64_t rl_mcap_writer_position(const rl_mcap_writer *w);

/* Ends the open chunk, writes DataEnd, the summary, summary offsets, Footer and magic,
 * closes an owned descriptor and frees the writer (always, even on error). Does not
 * fsync a borrowed descriptor (call rl_mcap_writer_flush first for that). */
RL_API int rl_mcap_writer_close(rl_mcap_writer *w);

/* Frees the writer without finishing the file (error paths). NULL is ignored. */
RL_API void rl_mcap_writer_free(rl_mcap_writer *w);

/* ---- Streamed reader -------------------------------------------------------------- */

/* What the streamed reader does with Chunk records. */
typedef enum rl_mcap_chunk_mode {
    RL_MCAP_CHUNKS_EXPAND = 0, /* yield the chunk's records, not the Chunk (default) */
    RL_MCAP_CHUNKS_BOTH = 1,   /* yield the Chunk record, then its records */
    RL_MCAP_CHUNKS_RAW = 2     /* yield the Chunk record only; nothing is decompressed */
} rl_mcap_chunk_mode;

typedef struct rl_mcap_reader_options {
    rl_mcap_chunk_mode chunks;
    int verify_crcs;         /* chunk, attachment, data-section and summary CRCs; default 1 */
    uint64_t max_chunk_size; /* largest uncompressed chunk accepted; default 4 GiB */
    int allow_trailing_data; /* bytes after the closing magic: 0 = error (default) */
    /* 1: while the caller walks a chunk of a mapped file, the next Chunk record is read and
     * decompressed on a thread the reader starts (and joins before it goes on, seeks or is
     * closed), so decompression overlaps the caller's work. The records, their order and
     * every error are the same as without it; two chunks' buffers are kept instead of one.
     * Default 0. */
    int decompress_ahead;
} rl_mcap_reader_options;

RL_API void rl_mcap_reader_options_default(rl_mcap_reader_options *opts);

/* Reads a file from start to end, one record per call. Not thread-safe per reader. */
typedef struct rl_mcap_reader rl_mcap_reader;

/* Opens `path` (mapped read-only; read into memory when it cannot be mapped), which must
 * be a regular file: a FIFO, a device or a directory is RL_EINVAL "PATH: not a regular
 * file", refused without blocking (rl_fs_open_input). Chunk
 * records are read with pread(2) into a buffer kept between chunks (except in
 * RL_MCAP_CHUNKS_RAW), other records through the mapping, whose pages are handed back
 * behind the reader in files over 64 MiB. */
RL_API int rl_mcap_reader_open(rl_mcap_reader **out, const char *path, const rl_mcap_reader_options *opts);

/* Reads `len` bytes at `data`, borrowed: they must outlive the reader. */
RL_API int rl_mcap_reader_open_mem(rl_mcap_reader **out, const void *data, size_t len,
                            const rl_mcap_reader_options *opts);

/* Next record into `rec`. Returns 1 with a record, 0 after the footer and closing magic,
 * or a negative status: RL_ETRUNCATED (the file ends inside a record or before the footer),
 * RL_EPARSE (malformed), RL_ECRC (a chunk, attachment or summary CRC; a data-section CRC
 * mismatch is only a warning, see rl_mcap_reader_warning), RL_EUNSUPPORTED (unknown chunk
 * compression), RL_ERANGE (chunk larger than max_chunk_size), RL_ENOMEM. The message names the byte offset and
 * record type ("byte 1234: Chunk record: ..."). After an error every call returns the
 * same error until rl_mcap_reader_seek. Pointers in `rec` stay valid until the next call;
 * those of a Chunk record and of the records inside a chunk until the reader leaves the
 * chunk (it reuses one buffer for every chunk: a mapped file's chunks are read with pread,
 * so resident memory does not grow with the file), those of the other top-level records
 * of a mapped file until the reader is closed. The streamed reader checks the
 * leading magic, that a record's length fits in the bytes left, and the CRCs, but not the
 * placement rules (that is a checker's job), so damaged files can be scanned. */
RL_API int rl_mcap_reader_next(rl_mcap_reader *r, rl_mcap_record *rec);

/* Conditions that did not stop reading: a DataEnd whose data-section CRC does not match
 * (every record before it was read and checked, so it is a warning for a reader, not an
 * error; rl_mcap_doctor still reports it). The count so far, and the first one's text
 * ("byte N: DataEnd record: data section CRC mismatch: ..."), NULL when none; valid until
 * the reader is closed. */
RL_API size_t rl_mcap_reader_warning_count(const rl_mcap_reader *r);
RL_API const char *rl_mcap_reader_warning(const rl_mcap_reader *r);

/* File offset of the next top-level record to be read (after an error: of the record that
 * failed, or of the chunk it is in). */
RL_API uint64_t rl_mcap_reader_offset(const rl_mcap_reader *r);

/* Continues at top-level file offset `offset` (>= 8), leaving any open chunk and clearing
 * an error; used to skip damaged regions or re-read. RL_ERANGE beyond the end. */
RL_API int rl_mcap_reader_seek(rl_mcap_reader *r, uint64_t offset);

/* The whole file's bytes (mapped or read), valid until close. */
RL_API const uint8_t *rl_mcap_reader_data(const rl_mcap_reader *r, size_t *len);

/* Frees the reader; NULL is ignored. */
RL_API void rl_mcap_reader_close(rl_mcap_reader *r);

/* ---- Summary alone ------------------------------------------------------------------
 * The summary section of a complete file, reached through its footer: nothing before it
 * is read or scanned, so these cost a few kilobytes on any file. A file without an intact
 * summary gets an error or 0, never a linear scan (the indexed reader does that). */

/* Locates the summary of the MCAP file in `len` bytes at `data` (a mapped file,
 * rl_mcap_reader_data): checks the leading magic, the Footer record before the closing
 * magic, that summary_start lies within the records, and, when `verify_crc` and the footer
 * stores one, the summary CRC. Returns 1 with [*start, *end) the summary's records (walk
 * them with rl_mcap_records_next on `data` and `*end`, offsets stay file offsets; the
 * Footer is not among them), 0 when the footer says there is no summary (summary_start 0),
 * or RL_ETRUNCATED (no footer and closing magic at the end: not written to the end),
 * RL_EPARSE (no leading magic, a malformed footer, summary_start out of range) or RL_ECRC,
 * naming the byte offset. `*start` and `*end` are 0 unless 1 is returned. The summary's
 * records themselves are not parsed. Thread-safe; allocates nothing. */
RL_API int rl_mcap_summary_find(const uint8_t *data, size_t len, int verify_crc, size_t *start,
                         size_t *end);

/* The summary's Statistics record (message counts per channel, time range), as
 * rl_mcap_summary_find locates the summary: 1 with `*out` filled (its bytes point into
 * `data`), 0 when there is no summary or it holds no Statistics record (`*out` zeroed),
 * or rl_mcap_summary_find's errors and those of rl_mcap_records_next for a malformed
 * record before the Statistics. Thread-safe; allocates nothing. */
RL_API int rl_mcap_summary_statistics(const uint8_t *data, size_t len, int verify_crc,
                               rl_mcap_statistics *out);

/* ---- Indexed reader --------------------------------------------------------------- */

/* Opens a file through its footer and summary (schemas, channels, statistics, chunk,
 * attachment and metadata indexes) and reads only the chunks a query needs. When the
 * footer or summary is missing, fails its CRC or does not index the messages, the file is
 * scanned once linearly and the same tables are built from the data section instead.
 * After open, queries do not modify the object, but iterators share nothing, so several
 * iterators may run at once in one thread; use one thread per rl_mcap_indexed. */
typedef struct rl_mcap_indexed rl_mcap_indexed;

/* `max_chunk_size` bounds decompressed chunks (0 = 4 GiB). Errors: RL_EIO, RL_ENOENT,
 * RL_EPARSE / RL_ETRUNCATED / RL_ECRC when even the linear scan fails. */
RL_API int rl_mcap_indexed_open(rl_mcap_indexed **out, const char *path, uint64_t max_chunk_size);
/* Same on `len` borrowed bytes. */
RL_API int rl_mcap_indexed_open_mem(rl_mcap_indexed **out, const void *data, size_t len,
                             uint64_t max_chunk_size);
RL_API void rl_mcap_indexed_close(rl_mcap_indexed *idx);

/* 1 when the summary was used, 0 when the file was scanned linearly. */
RL_API int rl_mcap_indexed_used_summary(const rl_mcap_indexed *idx);

/* Conditions found while opening that did not stop reading, one text each ("byte N: ..."):
 * a data-section CRC mismatch, and a chunk that is an exact copy of an earlier one (its
 * messages are served once). Returns how many (at most 32 are kept); `*out` points at
 * them, valid until close. */
RL_API size_t rl_mcap_indexed_warnings(const rl_mcap_indexed *idx, const char *const **out);

/* Tables, valid until close. Schemas and channels are sorted by id, one per id. */
RL_API size_t rl_mcap_indexed_schemas(const rl_mcap_indexed *idx, const rl_mcap_schema **out);
RL_API size_t rl_mcap_indexed_channels(const rl_mcap_indexed *idx, const rl_mcap_channel **out);
/* NULL when unknown. */
RL_API const rl_mcap_schema *rl_mcap_indexed_schema(const rl_mcap_indexed *idx, uint16_t id);
RL_API const rl_mcap_channel *rl_mcap_indexed_channel(const rl_mcap_indexed *idx, uint16_t id);
/* The Statistics record, NULL when the file has none (also after a linear scan). */
RL_API const rl_mcap_statistics *rl_mcap_indexed_statistics(const rl_mcap_indexed *idx);
/* Chunk indexes in file order (built from the chunks after a linear scan). */
RL_API size_t rl_mcap_indexed_chunk_indexes(const rl_mcap_indexed *idx, const rl_mcap_chunk_index **out);
RL_API size_t rl_mcap_indexed_attachment_indexes(const rl_mcap_indexed *idx,
                                          const rl_mcap_attachment_index **out);
RL_API size_t rl_mcap_indexed_metadata_indexes(const rl_mcap_indexed *idx,
                                        const rl_mcap_metadata_index **out);
/* Whether message iterators check each chunk's uncompressed_crc (when not 0) as they load
 * it: 1 by default, as the streamed reader's verify_crcs; 0 skips the check (faster; a
 * damaged chunk may then yield wrong bytes or a parse error instead of RL_ECRC). Applies
 * to chunks loaded afterwards. Not thread-safe with running iterators. */
RL_API void rl_mcap_indexed_set_verify_crcs(rl_mcap_indexed *idx, int verify);
/* Number of chunks decompressed or parsed so far by message iterators (for checking that
 * a query touches only the chunks it needs). */
RL_API uint64_t rl_mcap_indexed_chunks_loaded(const rl_mcap_indexed *idx);

/* A message query. Times are inclusive: start <= log_time <= end. */
typedef struct rl_mcap_query {
    uint64_t start_time;       /* default 0 */
    uint64_t end_time;         /* default UINT64_MAX */
    const char *const *topics; /* NULL: every topic; else `topic_count` NUL-terminated */
    size_t topic_count;
    int reverse; /* 1: newest first */
} rl_mcap_query;

RL_API void rl_mcap_query_default(rl_mcap_query *q);

typedef struct rl_mcap_message_iter rl_mcap_message_iter;

/* Starts a query (`q` NULL = everything, forward). Messages come in log-time order; equal
 * log times keep file order (reversed with `reverse`). Only chunks whose time range and
 * channels match are loaded, and at most the chunks overlapping in time at once. */
RL_API int rl_mcap_indexed_messages(rl_mcap_indexed *idx, const rl_mcap_query *q,
                             rl_mcap_message_iter **out);

/* Next message: 1 with `msg` (and `*channel`, when not NULL, its Channel record), 0 at the
 * end, negative on a damaged chunk (offset named; calling again skips that chunk and goes
 * on). `msg->data` points into the iterator's copy of the chunk (read with pread from a
 * file; decompressed when compressed), or into the bytes given to open_mem, or, for a
 * message outside any chunk, into the mapped file, and stays valid until the next call or
 * rl_mcap_message_iter_free. */
RL_API int rl_mcap_message_iter_next(rl_mcap_message_iter *it, rl_mcap_message *msg,
                              const rl_mcap_channel **channel);
RL_API void rl_mcap_message_iter_free(rl_mcap_message_iter *it);

/* ---- Recovery ---------------------------------------------------------------------- */

/* One stretch of the input that recovery (or doctor) could not use. */
typedef struct rl_mcap_lost_range {
    uint64_t offset, length; /* bytes [offset, offset + length) of the input */
    char what[240];          /* why: the reader's error ("byte 4096: Chunk record: ...") */
} rl_mcap_lost_range;

/* What rl_mcap_recover kept and lost. Free with rl_mcap_recover_report_free. */
typedef struct rl_mcap_recover_report {
    uint64_t input_size, output_size;
    int input_complete; /* 1: a footer and closing magic, nothing lost, copied or suspect */
    uint64_t messages_kept, chunks_read, schemas_kept, channels_kept, attachments_kept,
        metadata_kept;
    uint64_t chunks_lost, attachments_lost, metadata_lost;
    /* Messages known to be lost: those listed by the message indexes of lost chunks, and
     * messages whose channel was never defined; when the input's summary is intact, at
     * least its Statistics message_count minus the messages kept (chunks_lost likewise
     * from its chunk_count). A chunk cut off by truncation has no index after it; its
     * messages show only in bytes_lost. */
    uint64_t messages_lost;
    uint64_t bytes_lost; /* total length of `lost` */
    rl_mcap_lost_range *lost;
    size_t lost_count;
    /* Chunks that are exact copies of an earlier chunk (written twice): their messages
     * are kept once; each copy is listed in `notices`. Messages that repeat, byte for
     * byte (channel, sequence, times, payload), one already kept are kept once too and
     * count in messages_duplicate; the first of each run of such copies is listed. */
    uint64_t chunks_duplicate, messages_duplicate;
    /* Messages read from a region known to be damaged: inside a chunk whose CRC failed
     * when the damage could not be located, or overlapping the located damage (a block of
     * zeros that begins inside a message reads as a valid message up to where its record
     * ends). Dropped (and counted in messages_lost) unless the options' keep_suspect; each
     * is listed in `notices` either way. */
    uint64_t messages_suspect;
    /* Messages saved one by one from chunks whose records were damaged in places (the
     * intact records around the damage; counted in messages_kept too). */
    uint64_t messages_salvaged;
    rl_mcap_lost_range *notices; /* length 0 unless a whole record; `what` says what */
    size_t notice_count;
} rl_mcap_recover_report;

typedef struct rl_mcap_recover_options {
    /* Writer options for the output. NULL: the defaults, except that compression and
     * chunk size follow the input's first intact chunk (unchunked input stays unchunked),
     * and the Header's profile and library are kept. */
    const rl_mcap_writer_options *writer;
    uint64_t max_chunk_size; /* largest uncompressed chunk accepted; 0 = 4 GiB */
    /* Called now and then with the input bytes processed (of input_size); may be NULL. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    /* 1: keep messages from damaged regions (report.messages_suspect) instead of dropping
     * them; they are listed in report.notices either way. */
    int keep_suspect;
} rl_mcap_recover_options;

/* Rewrites the MCAP file at `in_path` (truncated, killed mid-write, or damaged anywhere)
 * as a complete file on `out_fd` (not closed): every record that can be read intact is
 * kept in file order (schemas, channels, messages of every chunk whose CRC and framing
 * are good, the sound records of a damaged chunk read record by record, a chunk written
 * twice once, attachments, metadata), and message indexes, chunk indexes, statistics,
 * summary and footer are rebuilt. Damaged regions are skipped by resynchronising on the
 * next well-formed record; each one is listed in `report` (may be NULL) with its byte
 * range and the reason. Schemas and channels are collected from the whole input first,
 * so messages whose Channel record sits in a lost chunk are kept when the channel is
 * defined elsewhere (for example in the summary). `opts` may be NULL. Errors: RL_EPARSE
 * (not an MCAP file: no leading magic), RL_EIO/RL_ENOSPC (writing), RL_ENOMEM. A damaged
 * input is not an error. */
RL_API int rl_mcap_recover_fd(const char *in_path, int out_fd, const rl_mcap_recover_options *opts,
                       rl_mcap_recover_report *report);
/* Same on `len` borrowed bytes. */
RL_API int rl_mcap_recover_mem(const void *data, size_t len, int out_fd,
                        const rl_mcap_recover_options *opts, rl_mcap_recover_report *report);
/* Frees the report's lists; the struct itself is the caller's. NULL is ignored. */
RL_API void rl_mcap_recover_report_free(rl_mcap_recover_report *report);

/* ---- Doctor ------------------------------------------------------------------------ */

/* One broken invariant, at byte `offset` of the file (of the record concerned). */
typedef struct rl_mcap_violation {
    uint64_t offset;
    char what[240]; /* "Statistics record: message_count 10, but 12 messages in the file" */
    /* Further violations that follow from this one (damage breaks the indexes, counts,
     * offsets and CRCs that describe it): counted here, not listed. */
    size_t consequences;
} rl_mcap_violation;

typedef struct rl_mcap_doctor_report {
    rl_mcap_violation *violations; /* in the order found; free with rl_mcap_doctor_report_free */
    size_t count;
    size_t dropped; /* violations beyond the first 1000, counted but not kept */
    uint64_t messages, chunks, records;
    /* Not violations, but unusual (statistics counting only the data section's schemas
     * and channels, as libmcap writes them). */
    rl_mcap_violation *warnings;
    size_t warning_count;
} rl_mcap_doctor_report;

/* Checks a whole file against the specification's invariants: magic at both ends, Header
 * first and Footer last; record placement (DataEnd ends the data section; only Schema,
 * Channel and Message inside chunks; only summary records in the summary; message
 * indexes right after their chunk; a channel before its messages, a schema before its
 * channels); every CRC (chunk, attachment, data section, summary); each chunk's times
 * and sizes; every message index entry against the message it points to and the counts
 * per channel; every chunk index against its chunk and message indexes; attachment and
 * metadata indexes; the statistics (every count, start and end times, messages per
 * channel); summary offsets against the groups they describe; repeated schemas and
 * channels against the data section; footer offsets. Unreadable stretches are reported
 * and skipped. Returns RL_OK with `report` filled (count 0 means healthy), or RL_ENOENT /
 * RL_EIO (cannot open) / RL_ENOMEM. */
RL_API int rl_mcap_doctor(const char *path, rl_mcap_doctor_report *report);
/* Same on `len` borrowed bytes. */
RL_API int rl_mcap_doctor_mem(const void *data, size_t len, rl_mcap_doctor_report *report);
RL_API void rl_mcap_doctor_report_free(rl_mcap_doctor_report *report);

#ifdef __cplusplus
}
#endif
#endif
