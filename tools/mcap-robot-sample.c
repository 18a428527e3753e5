/* mcap-robot-sample: writes a small deterministic recording like a robot's (topics /pose
 * /scan /log, one schemaless; 10 ms apart from 2024-01-01T00:00:00Z; a metadata record and
 * an attachment) with the runlab writer, for the `runlab mcap` CLI test and the fuzz seeds.
 *   mcap-robot-sample OUT [MESSAGES [none|zstd|lz4 [CHUNK_SIZE|unchunked [PROFILE]]]] */
#include "runlab/error.h"
#include "runlab/mcap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rl_mcap_bytes B(const char *s)
{
    rl_mcap_bytes b = {(const uint8_t *)s, strlen(s)};
    return b;
}

static int run(const char *path, unsigned long n, const rl_mcap_writer_options *o)
{
    rl_mcap_writer *w = NULL;
    int rc = rl_mcap_writer_open_path(&w, path, o);
    if (rc < 0)
        return rc;
    rl_mcap_schema s = {1, B("geometry_msgs/Pose"), B("ros2msg"), B("float64 x\nfloat64 y\n")};
    if ((rc = rl_mcap_writer_add_schema(w, &s)) < 0)
        goto out;
    static const char *const topics[] = {"/pose", "/scan", "/log"};
    for (uint16_t c = 0; c < 3; c++) {
        rl_mcap_channel ch;
        memset(&ch, 0, sizeof ch);
        ch.id = (uint16_t)(c + 1);
        ch.schema_id = c == 2 ? 0 : 1;
        ch.topic = B(topics[c]);
        ch.message_encoding = B(c == 2 ? "json" : "cdr");
        if ((rc = rl_mcap_writer_add_channel(w, &ch)) < 0)
            goto out;
    }
    rl_mcap_kv kv = {B("robot"), B("sample")};
    rl_mcap_metadata md = {B("run"), {NULL, 0}, &kv, 1};
    if ((rc = rl_mcap_writer_add_metadata(w, &md)) < 0)
        goto out;
    uint8_t buf[128];
    for (unsigned long i = 0; i < n; i++) {
        for (size_t k = 0; k < sizeof buf; k++)
            buf[k] = (uint8_t)(i * 13 + k * 7);
        rl_mcap_message m;
        memset(&m, 0, sizeof m);
        m.channel_id = (uint16_t)(1 + i % 3);
        m.sequence = (uint32_t)i;
        /* 2024-01-01T00:00:00Z plus 10 ms per message */
        m.log_time = 1704067200000000000ull + (uint64_t)i * 10000000ull;
        m.publish_time = m.log_time;
        m.data.data = buf;
        m.data.len = 8 + i % 100;
        if ((rc = rl_mcap_writer_add_message(w, &m)) < 0)
            goto out;
        if (i == n / 2) {
            rl_mcap_attachment a;
            memset(&a, 0, sizeof a);
            a.log_time = m.log_time;
            a.name = B("calibration.yaml");
            a.media_type = B("application/yaml");
            a.data = B("fx: 525.0\nfy: 525.0\n");
            if ((rc = rl_mcap_writer_add_attachment(w, &a)) < 0)
                goto out;
        }
    }
    return rl_mcap_writer_close(w);
out:
    rl_mcap_writer_free(w);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 6 || argv[1][0] == '-') { /* --help is not a file name */
        fprintf(stderr, "usage: mcap-robot-sample OUT [MESSAGES [none|zstd|lz4 "
                        "[CHUNK_SIZE|unchunked [PROFILE]]]]\n");
        return 2;
    }
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 100;
    if (argc > 3)
        o.compression = strcmp(argv[3], "none") == 0  ? RL_MCAP_COMPRESSION_NONE
                        : strcmp(argv[3], "lz4") == 0 ? RL_MCAP_COMPRESSION_LZ4
                                                      : RL_MCAP_COMPRESSION_ZSTD;
    if (argc > 4) {
        if (strcmp(argv[4], "unchunked") == 0)
            o.use_chunks = 0;
        else
            o.chunk_size = strtoull(argv[4], NULL, 10);
    }
    if (argc > 5)
        o.profile = argv[5];
    int rc = run(argv[1], n, &o);
    if (rc < 0) {
        fprintf(stderr, "mcap-robot-sample: %s\n", rl_error_last());
        return 1;
    }
    return 0;
}
