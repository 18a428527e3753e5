/* The recorder's bag writer: an MCAP file through the library's chunked writer. One
 * schema per distinct (name, encoding, data) — topics that share a message type share
 * its schema — none for topics without one, and one channel per topic (channel id =
 * topic id). flush ends the open chunk (so a killed run
 * loses nothing before it) and sync fsyncs the descriptor from the durability thread, so
 * the writer thread never waits for the disk; scan reads a closed bag back. */
#include "engines/record_internal.h"

#include "runlab/error.h"
#include "runlab/mcap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The sink owns the descriptor (the writer borrows it) so that sync can reach it without
 * touching the writer, which belongs to the writer thread. */
typedef struct schema_entry {
    uint16_t id;
    char *name, *encoding;
    void *data;
    size_t len;
} schema_entry;

typedef struct mcap_sink_ctx {
    rl_mcap_writer *w;
    int fd;
    schema_entry *schemas; /* added so far, to reuse an identical one */
    size_t n_schemas;
} mcap_sink_ctx;

static void free_ctx(mcap_sink_ctx *c)
{
    for (size_t i = 0; i < c->n_schemas; i++) {
        free(c->schemas[i].name);
        free(c->schemas[i].encoding);
        free(c->schemas[i].data);
    }
    free(c->schemas);
    free(c);
}

/* The id of an identical schema already in the bag, or 0. */
static uint16_t find_schema(const mcap_sink_ctx *c, const char *name, const char *encoding,
                            const void *data, size_t len)
{
    for (size_t i = 0; i < c->n_schemas; i++) {
        const schema_entry *e = &c->schemas[i];
        if (e->len == len && strcmp(e->name, name) == 0 && strcmp(e->encoding, encoding) == 0 &&
            (len == 0 || memcmp(e->data, data, len) == 0))
            return e->id;
    }
    return 0;
}

/* Remembers a schema added under `id`; on failure the bag just repeats it later. */
static void remember_schema(mcap_sink_ctx *c, uint16_t id, const char *name,
                            const char *encoding, const void *data, size_t len)
{
    schema_entry *grown = realloc(c->schemas, (c->n_schemas + 1) * sizeof *grown);
    if (!grown)
        return;
    c->schemas = grown;
    schema_entry e = {id, strdup(name), strdup(encoding), len ? malloc(len) : NULL, len};
    if (!e.name || !e.encoding || (len && !e.data)) {
        free(e.name);
        free(e.encoding);
        free(e.data);
        return;
    }
    if (len)
        memcpy(e.data, data, len);
    c->schemas[c->n_schemas++] = e;
}

static int mcap_open(void **ctx, const char *path, const rl_record_options *opts, void *user)
{
    (void)user;
    rl_mcap_writer_options wo;
    rl_mcap_writer_options_default(&wo);
    wo.profile = opts->bag_profile ? opts->bag_profile : "";
    wo.chunk_size = opts->chunk_size;
    wo.compression = opts->compression; /* one enum: rl_record_compression is the writer's */
    wo.compression_level = opts->compression_level;
    mcap_sink_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return rl_error_set(RL_ENOMEM, "MCAP bag: out of memory");
    c->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (c->fd < 0) {
        int e = errno;
        free(c);
        return rl_error_set_errno(e == ENOENT ? RL_ENOENT : RL_EIO, e, "mcap writer: create %s",
                                  path);
    }
    int rc = rl_mcap_writer_open_fd(&c->w, c->fd, &wo);
    if (rc < 0) {
        close(c->fd);
        free(c);
        return rl_error_prefix(rc, "%s", path);
    }
    *ctx = c;
    return RL_OK;
}

/* fsync, but a descriptor that cannot be synced is not an error (as in the writer). */
static int sync_fd(int fd)
{
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP) {
        int e = errno;
        return rl_error_set_errno(e == ENOSPC ? RL_ENOSPC : RL_EIO, e, "MCAP bag: fsync");
    }
    return RL_OK;
}

static int mcap_add_channel(void *ctx, uint16_t id, const char *topic, const char *schema_name,
                            const char *schema_encoding, const void *schema_data,
                            size_t schema_len, const char *message_encoding)
{
    mcap_sink_ctx *sink = ctx;
    rl_mcap_writer *w = sink->w;
    uint16_t schema_id = 0;
    if (schema_name && *schema_name) {
        const char *enc = schema_encoding ? schema_encoding : "";
        schema_id = find_schema(sink, schema_name, enc, schema_data, schema_len);
        if (schema_id == 0) {
            /* Ids stay unique without a counter: a topic adds at most one schema, under
             * its own id + 1. */
            if (id == UINT16_MAX)
                return rl_error_set(RL_ERANGE, "MCAP bag: too many topics");
            rl_mcap_schema s = {0};
            s.id = (uint16_t)(id + 1);
            s.name = rl_mcap_bytes_of(schema_name);
            s.encoding = rl_mcap_bytes_of(enc);
            s.data.data = schema_data;
            s.data.len = schema_len;
            int rc = rl_mcap_writer_add_schema(w, &s);
            if (rc < 0)
                return rc;
            schema_id = s.id;
            remember_schema(sink, schema_id, schema_name, enc, schema_data, schema_len);
        }
    }
    rl_mcap_channel c = {0};
    c.id = id;
    c.schema_id = schema_id;
    c.topic = rl_mcap_bytes_of(topic);
    c.message_encoding = rl_mcap_bytes_of(message_encoding ? message_encoding : "");
    return rl_mcap_writer_add_channel(w, &c);
}

static int mcap_write(void *ctx, uint16_t channel, uint32_t sequence, uint64_t log_time,
                      uint64_t publish_time, const void *data, size_t len)
{
    rl_mcap_message m = {0};
    m.channel_id = channel;
    m.sequence = sequence;
    m.log_time = log_time;
    m.publish_time = publish_time;
    m.data.data = data;
    m.data.len = len;
    return rl_mcap_writer_add_message(((mcap_sink_ctx *)ctx)->w, &m);
}

static int mcap_flush(void *ctx)
{
    return rl_mcap_writer_end_chunk(((mcap_sink_ctx *)ctx)->w);
}

/* Only reads the descriptor, which stays open until close; safe beside write and flush. */
static int mcap_sync(void *ctx)
{
    return sync_fd(((mcap_sink_ctx *)ctx)->fd);
}

/* A finished bag is synced before the manifest can call the run COMPLETE. */
static int mcap_close(void *ctx)
{
    mcap_sink_ctx *c = ctx;
    int rc = rl_mcap_writer_close(c->w);
    if (rc == RL_OK)
        rc = sync_fd(c->fd);
    if (close(c->fd) != 0 && rc == RL_OK)
        rc = rl_error_set_errno(RL_EIO, errno, "MCAP bag: close");
    free_ctx(c);
    return rc;
}

static void mcap_abandon(void *ctx)
{
    mcap_sink_ctx *c = ctx;
    rl_mcap_writer_free(c->w);
    close(c->fd);
    free_ctx(c);
}

/* Streams the closed bag and reports every message up to the first damage (after a write
 * error the tail is cut off: what follows the last whole chunk never reached the file). */
static int mcap_scan(const char *path, void *user,
                     void (*fn)(void *arg, uint16_t channel, uint64_t log_time), void *arg)
{
    (void)user;
    rl_mcap_reader *rd = NULL;
    int rc = rl_mcap_reader_open(&rd, path, NULL);
    if (rc < 0)
        return rc;
    rl_mcap_record rec;
    while (rl_mcap_reader_next(rd, &rec) == 1)
        if (rec.opcode == RL_MCAP_OP_MESSAGE)
            fn(arg, rec.u.message.channel_id, rec.u.message.log_time);
    rl_mcap_reader_close(rd);
    return RL_OK;
}

static const rl_record_sink_ops mcap_sink = {
    "mcap", mcap_open, mcap_add_channel, mcap_write, mcap_flush, mcap_close, mcap_abandon,
    mcap_sync, mcap_scan,
};

const rl_record_sink_ops *const rl_record_default_sink = &mcap_sink;
