/* The recorder's bag writer: an MCAP file through the library's chunked writer. One
 * schema per topic (schema id = topic id + 1, none for topics without a schema) and one
 * channel per topic (channel id = topic id). flush ends the open chunk (so a killed run
 * loses nothing before it) and sync fsyncs the descriptor from the durability thread, so
 * the writer thread never waits for the disk. */
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
typedef struct mcap_sink_ctx {
    rl_mcap_writer *w;
    int fd;
} mcap_sink_ctx;

static rl_mcap_bytes bytes_of(const char *s)
{
    rl_mcap_bytes b = {(const uint8_t *)s, strlen(s)};
    return b;
}

static int mcap_open(void **ctx, const char *path, const rl_record_options *opts, void *user)
{
    (void)user;
    rl_mcap_writer_options wo;
    rl_mcap_writer_options_default(&wo);
    wo.profile = "ros2";
    wo.chunk_size = opts->chunk_size;
    wo.compression = opts->compression == RL_RECORD_COMPRESSION_ZSTD  ? RL_MCAP_COMPRESSION_ZSTD
                     : opts->compression == RL_RECORD_COMPRESSION_LZ4 ? RL_MCAP_COMPRESSION_LZ4
                                                                      : RL_MCAP_COMPRESSION_NONE;
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
    rl_mcap_writer *w = ((mcap_sink_ctx *)ctx)->w;
    uint16_t schema_id = 0;
    if (schema_name && *schema_name) {
        if (id == UINT16_MAX)
            return rl_error_set(RL_ERANGE, "MCAP bag: too many topics");
        rl_mcap_schema s = {0};
        s.id = (uint16_t)(id + 1);
        s.name = bytes_of(schema_name);
        s.encoding = bytes_of(schema_encoding ? schema_encoding : "");
        s.data.data = schema_data;
        s.data.len = schema_len;
        int rc = rl_mcap_writer_add_schema(w, &s);
        if (rc < 0)
            return rc;
        schema_id = s.id;
    }
    rl_mcap_channel c = {0};
    c.id = id;
    c.schema_id = schema_id;
    c.topic = bytes_of(topic);
    c.message_encoding = bytes_of(message_encoding ? message_encoding : "");
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
    free(c);
    return rc;
}

static void mcap_abandon(void *ctx)
{
    mcap_sink_ctx *c = ctx;
    rl_mcap_writer_free(c->w);
    close(c->fd);
    free(c);
}

static const rl_record_sink_ops mcap_sink = {
    "mcap", mcap_open, mcap_add_channel, mcap_write, mcap_flush, mcap_close, mcap_abandon,
    mcap_sync,
};

const rl_record_sink_ops *const rl_record_default_sink = &mcap_sink;
