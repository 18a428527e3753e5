/* mcap-sample: writes a deterministic MCAP file with runlab's writer, for interoperability
 * tests with other MCAP readers and for quick experiments. Message i is on channel
 * 1 + i % 3 (topics /a /b /c), sequence i, log_time (i * 7919 % n) / 2 (out of order, with
 * ties), publish_time log_time + 1, and 10 + i % 50 bytes with byte k = (i + k) & 255. */
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

static int usage(void)
{
    fprintf(stderr, "usage: mcap-sample OUT.mcap [--messages N] [--compression none|zstd|lz4]\n"
                    "                   [--chunk-size BYTES] [--unchunked] [--no-summary]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') /* also --help: OUT comes first, never an option */
        return usage();
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.library = "runlab mcap-sample";
    unsigned long n = 1000;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--messages") == 0 && v) {
            n = strtoul(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--chunk-size") == 0 && v) {
            o.chunk_size = strtoull(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--compression") == 0 && v) {
            if (strcmp(v, "none") == 0)
                o.compression = RL_MCAP_COMPRESSION_NONE;
            else if (strcmp(v, "zstd") == 0)
                o.compression = RL_MCAP_COMPRESSION_ZSTD;
            else if (strcmp(v, "lz4") == 0)
                o.compression = RL_MCAP_COMPRESSION_LZ4;
            else
                return usage();
            i++;
        } else if (strcmp(a, "--unchunked") == 0) {
            o.use_chunks = 0;
        } else if (strcmp(a, "--no-summary") == 0) {
            o.chunk_index = o.statistics = o.repeated_schemas = o.repeated_channels = 0;
            o.attachment_index = o.metadata_index = o.summary_offsets = 0;
        } else {
            return usage();
        }
    }
    if (n == 0)
        n = 1;
    rl_mcap_writer *w = NULL;
    int rc = rl_mcap_writer_open_path(&w, argv[1], &o);
    rl_mcap_schema s = {1, B("sample/Bytes"), B("jsonschema"), B("{\"type\":\"object\"}")};
    if (rc == RL_OK)
        rc = rl_mcap_writer_add_schema(w, &s);
    static const char *const topics[] = {"/a", "/b", "/c"};
    for (uint16_t c = 0; c < 3 && rc == RL_OK; c++) {
        rl_mcap_kv kv = {B("origin"), B("mcap-sample")};
        rl_mcap_channel ch;
        memset(&ch, 0, sizeof ch);
        ch.id = (uint16_t)(c + 1);
        ch.schema_id = 1;
        ch.topic = B(topics[c]);
        ch.message_encoding = B("json");
        ch.metadata_kv = &kv;
        ch.metadata_kv_count = 1;
        rc = rl_mcap_writer_add_channel(w, &ch);
    }
    uint8_t buf[64];
    for (unsigned long i = 0; i < n && rc == RL_OK; i++) {
        rl_mcap_message m;
        m.channel_id = (uint16_t)(1 + i % 3);
        m.sequence = (uint32_t)i;
        m.log_time = (uint64_t)(i * 7919 % n) / 2;
        m.publish_time = m.log_time + 1;
        size_t len = 10 + i % 50;
        for (size_t k = 0; k < len; k++)
            buf[k] = (uint8_t)((i + k) & 255);
        m.data.data = buf;
        m.data.len = len;
        rc = rl_mcap_writer_add_message(w, &m);
        if (rc == RL_OK && i == n / 2) {
            rl_mcap_attachment a;
            memset(&a, 0, sizeof a);
            a.log_time = 5;
            a.name = B("notes.txt");
            a.media_type = B("text/plain");
            a.data = B("sample attachment");
            rc = rl_mcap_writer_add_attachment(w, &a);
            rl_mcap_kv kv = {B("robot"), B("r1")};
            rl_mcap_metadata md;
            memset(&md, 0, sizeof md);
            md.name = B("run");
            md.metadata_kv = &kv;
            md.metadata_kv_count = 1;
            if (rc == RL_OK)
                rc = rl_mcap_writer_add_metadata(w, &md);
        }
    }
    if (rc == RL_OK) {
        rc = rl_mcap_writer_close(w);
        w = NULL;
    }
    rl_mcap_writer_free(w);
    if (rc < 0) {
        fprintf(stderr, "mcap-sample: %s\n", rl_error_last());
        return 1;
    }
    return 0;
}
