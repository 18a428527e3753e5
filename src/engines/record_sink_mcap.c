/* The recorder's bag writer: an MCAP file through the library's chunked writer. One
 * schema per topic (schema id = topic id + 1, none for topics without a schema) and one
 * channel per topic (channel id = topic id). The writer's own flush ends the open chunk
 * and fsyncs, which is what makes "at most the last second is lost" true. */
#include "engines/record_internal.h"

#include "runlab/error.h"
#include "runlab/mcap.h"

#include <string.h>

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
    rl_mcap_writer *w = NULL;
    int rc = rl_mcap_writer_open_path(&w, path, &wo);
    if (rc == RL_OK)
        *ctx = w;
    return rc;
}

static int mcap_add_channel(void *ctx, uint16_t id, const char *topic, const char *schema_name,
                            const char *schema_encoding, const void *schema_data,
                            size_t schema_len, const char *message_encoding)
{
    rl_mcap_writer *w = ctx;
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
    return rl_mcap_writer_add_message(ctx, &m);
}

static int mcap_flush(void *ctx)
{
    return rl_mcap_writer_flush(ctx);
}

static int mcap_close(void *ctx)
{
    return rl_mcap_writer_close(ctx);
}

static void mcap_abandon(void *ctx)
{
    rl_mcap_writer_free(ctx);
}

static const rl_record_sink_ops mcap_sink = {
    "mcap", mcap_open, mcap_add_channel, mcap_write, mcap_flush, mcap_close, mcap_abandon,
};

const rl_record_sink_ops *const rl_record_default_sink = &mcap_sink;
