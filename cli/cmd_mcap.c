/* `runlab mcap`: look into and repair MCAP recordings — info (summary of a file), cat
 * (messages as lines or NDJSON), doctor (invariant check), recover (rewrite a damaged or
 * truncated file) and filter (topics / time range / re-chunking into a new file). Output
 * files are written to a temporary name and linked into place, never over an existing file. */
#include "cli.h"
#include "mcap_decode.h"

#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/mcap.h"
#include "runlab/progress.h"
#include "runlab/time.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_TOPICS = 256, PROGRESS_MIN_BYTES = 64 << 20, MAX_NOTICE_LINES = 50 };

static const char *const usage_main =
    "Usage: runlab mcap <command> [options]\n\n"
    "Look into and repair MCAP recordings.\n\n"
    "Commands:\n"
    "  info FILE          duration, times, messages per channel, schemas, chunk statistics\n"
    "  cat FILE           one line per message (--json: NDJSON)\n"
    "  doctor FILE        check every invariant of the format; exit 1 on any violation\n"
    "  recover IN OUT     rewrite a damaged or truncated file, keeping all intact data\n"
    "  filter IN OUT      copy selected topics / a time range, re-chunked\n"
    "  schema FILE        each schema as parsed (normalised text), or its error\n"
    "  export FILE        one CSV per topic, a column per field (--topic, --out-dir)\n\n"
    "Run 'runlab mcap <command> --help' for a command's options.\n"
    "Times (--start, --end) are nanoseconds since the epoch or ISO 8601\n"
    "(2024-05-01T12:00:00.5Z), from 1970-01-01 to 2262-04-11T23:47:16.854775807Z.\n"
    "Exit codes: 0 success, 1 failure, 2 usage error.\n";

/* Options shared by the subcommands. */
typedef struct opts {
    const char *pos[2];
    int npos;
    const char *topics[MAX_TOPICS];
    size_t ntopics;
    char *topic_buf[MAX_TOPICS];
    size_t nbufs;
    uint64_t start, end;
    int json;
    int keep_suspect;
    uint64_t chunk_size;
    int compression; /* -1: default */
    char input[4096]; /* the input file pos[0] names (a folder resolved to its .mcap) */
} opts;

static int parse_time(const char *cmd, const char *opt, const char *text, uint64_t *out)
{
    char *endp = NULL;
    if (text[0] >= '0' && text[0] <= '9' && strspn(text, "0123456789") == strlen(text)) {
        errno = 0;
        unsigned long long v = strtoull(text, &endp, 10);
        if (errno == 0 && *endp == '\0') {
            *out = v;
            return RL_OK;
        }
    }
    int64_t ns;
    if (rl_time_parse_iso(text, &ns) < 0)
        return cli_usage_error("mcap", "%s: %s '%s': not nanoseconds or an ISO 8601 time (%s)", cmd, opt, text,
                               rl_error_last());
    if (ns < 0) /* MCAP log times are unsigned nanoseconds since the epoch */
        return cli_usage_error("mcap", "%s: %s '%s': before 1970-01-01T00:00:00Z, where MCAP times begin",
                               cmd, opt, text);
    *out = (uint64_t)ns;
    return RL_OK;
}

static int parse_size(const char *cmd, const char *text, uint64_t *out)
{
    char *endp = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &endp, 10);
    uint64_t mul = 1;
    if (endp && (*endp == 'K' || *endp == 'k'))
        mul = 1024, endp++;
    else if (endp && (*endp == 'M' || *endp == 'm'))
        mul = 1024 * 1024, endp++;
    if (errno || endp == text || *endp != '\0' || text[0] == '-' || v == 0 ||
        v > UINT64_MAX / mul || v * mul > ((uint64_t)1 << 32))
        return cli_usage_error("mcap", "%s: --chunk-size '%s': expected a size in bytes (K, M suffix), "
                                    "1 .. 4G", cmd,
                               text);
    *out = v * mul;
    return RL_OK;
}

/* ---- input paths -------------------------------------------------------------------- */

static int is_mcap_name(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 5 && e->d_name[0] != '.' && strcmp(e->d_name + n - 5, ".mcap") == 0;
}

/* Regular files named *.mcap directly in `dir`, sorted; -1 when `dir` cannot be read. */
static int list_mcaps(const char *dir, struct dirent ***names)
{
    int n = scandir(dir, names, is_mcap_name, alphasort);
    if (n <= 0)
        return n;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        char p[4096];
        struct stat st;
        if (snprintf(p, sizeof p, "%s/%s", dir, (*names)[i]->d_name) < (int)sizeof p &&
            stat(p, &st) == 0 && S_ISREG(st.st_mode))
            (*names)[kept++] = (*names)[i];
        else
            free((*names)[i]);
    }
    return kept;
}

/* An input argument as `ros2 bag info` takes it: a file is itself; a folder holding exactly
 * one .mcap is that file; a folder holding none but a bag/ folder (a run directory) is its
 * bag's one .mcap. Zero or several files are an error naming the folder. */
static int resolve_input(const char *cmd, const char *arg, char *out, size_t cap)
{
    struct stat st;
    if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (snprintf(out, cap, "%s", arg) >= (int)cap)
            return cli_fail("mcap", "%s: path too long", arg);
        return RL_OK; /* a file, or a missing one: the reader says what is wrong */
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", arg);
    for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
        dir[n - 1] = '\0'; /* "run/" names files "run/bag/x.mcap", not "run//bag/..." */
    struct dirent **names = NULL;
    int n = list_mcaps(dir, &names);
    char bag[4096] = "";
    if (n == 0 && snprintf(bag, sizeof bag, "%s/bag", dir) < (int)sizeof bag &&
        stat(bag, &st) == 0 && S_ISDIR(st.st_mode)) {
        free(names);
        names = NULL;
        snprintf(dir, sizeof dir, "%s", bag);
        n = list_mcaps(dir, &names);
    }
    if (n < 0)
        return cli_fail("mcap", "%s: %s: cannot read the folder: %s", cmd, dir, strerror(errno));
    int rc = RL_OK;
    if (n == 1) {
        if (snprintf(out, cap, "%s/%s", dir, names[0]->d_name) >= (int)cap)
            rc = cli_fail("mcap", "%s: %s: path too long", cmd, dir);
    } else if (n == 0) {
        rc = cli_fail("mcap", "%s: %s: no .mcap file in this folder%s", cmd, arg,
                      strcmp(dir, bag) == 0 ? " nor in its bag/ folder" : "");
    } else {
        char list[512] = "";
        size_t used = 0;
        for (int i = 0; i < n && i < 4; i++) {
            size_t room = sizeof list - used;
            int w = snprintf(list + used, room, "%s%s", i ? ", " : "", names[i]->d_name);
            if (w < 0 || (size_t)w >= room)
                break;
            used += (size_t)w;
        }
        rc = cli_fail("mcap", "%s: %s: %d .mcap files in this folder (%s%s); name one", cmd, dir,
                      n, list, n > 4 ? ", ..." : "");
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

static void free_opts(opts *o)
{
    for (size_t i = 0; i < o->nbufs; i++)
        free(o->topic_buf[i]);
    o->nbufs = 0;
    o->ntopics = 0;
}

static int parse_opts_into(const char *cmd, int argc, char **argv, const char *allowed,
                           int npos, opts *o);

/* Parses argv[1..]; `allowed` lists the options taken ("t" topics/start/end, "j" json,
 * "w" writer options); `npos` positional arguments are required. On an error nothing is
 * left to free. */
static int parse_opts(const char *cmd, int argc, char **argv, const char *allowed, int npos,
                      opts *o)
{
    int rc = parse_opts_into(cmd, argc, argv, allowed, npos, o);
    if (rc != RL_OK)
        free_opts(o);
    return rc;
}

static int parse_opts_into(const char *cmd, int argc, char **argv, const char *allowed,
                           int npos, opts *o)
{
    memset(o, 0, sizeof *o);
    o->end = UINT64_MAX;
    o->compression = -1;
    int only_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_pos && strcmp(a, "--topic") == 0)
            a = "--topics"; /* the other commands' spelling (docs/cli.md) */
        if (only_pos || a[0] != '-' || a[1] == '\0') {
            if (o->npos >= npos)
                return cli_usage_error("mcap", "%s: unexpected argument '%s'", cmd, a);
            o->pos[o->npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        const char *val = NULL;
        int takes = strcmp(a, "--topics") == 0 || strcmp(a, "--start") == 0 ||
                    strcmp(a, "--end") == 0 || strcmp(a, "--chunk-size") == 0 ||
                    strcmp(a, "--compression") == 0;
        int ok = (strchr(allowed, 't') && (strcmp(a, "--topics") == 0 || strcmp(a, "--start") == 0 ||
                                           strcmp(a, "--end") == 0)) ||
                 (strchr(allowed, 'j') && strcmp(a, "--json") == 0) ||
                 (strchr(allowed, 'k') && strcmp(a, "--keep-suspect") == 0) ||
                 (strchr(allowed, 'w') &&
                  (strcmp(a, "--chunk-size") == 0 || strcmp(a, "--compression") == 0));
        if (!ok)
            return cli_usage_error("mcap", "%s: unknown option '%s'", cmd, a);
        if (takes) {
            if (i + 1 >= argc)
                return cli_usage_error("mcap", "%s: %s needs a value", cmd, a);
            val = argv[++i];
        }
        int rc = RL_OK;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--keep-suspect") == 0) {
            o->keep_suspect = 1;
        } else if (strcmp(a, "--start") == 0) {
            rc = parse_time(cmd, a, val, &o->start);
        } else if (strcmp(a, "--end") == 0) {
            rc = parse_time(cmd, a, val, &o->end);
        } else if (strcmp(a, "--chunk-size") == 0) {
            rc = parse_size(cmd, val, &o->chunk_size);
        } else if (strcmp(a, "--compression") == 0) {
            if (strcmp(val, "none") == 0)
                o->compression = RL_MCAP_COMPRESSION_NONE;
            else if (strcmp(val, "zstd") == 0)
                o->compression = RL_MCAP_COMPRESSION_ZSTD;
            else if (strcmp(val, "lz4") == 0)
                o->compression = RL_MCAP_COMPRESSION_LZ4;
            else
                return cli_usage_error("mcap", "%s: --compression '%s': expected none, zstd or lz4", cmd, val);
        } else { /* --topics a,b,c (may repeat) */
            if (o->nbufs >= MAX_TOPICS)
                return cli_usage_error("mcap", "%s: too many --topics options", cmd);
            char *copy = strdup(val);
            if (!copy)
                return cli_fail("mcap", "out of memory");
            o->topic_buf[o->nbufs++] = copy;
            for (char *rest = copy, *t; (t = strsep(&rest, ",")) != NULL;) {
                if (!*t) /* "a,,b" is a typo, not a request for every topic */
                    return cli_usage_error("mcap", "%s: --topics '%s': empty topic name", cmd,
                                           val);
                if (o->ntopics >= MAX_TOPICS)
                    return cli_usage_error("mcap", "%s: more than %d topics", cmd, MAX_TOPICS);
                o->topics[o->ntopics++] = t;
            }
            if (o->ntopics == 0)
                return cli_usage_error("mcap", "%s: --topics needs at least one topic", cmd);
        }
        if (rc != RL_OK)
            return rc;
    }
    if (o->npos < npos)
        return cli_usage_error("mcap", "%s: expected %d file argument%s", cmd, npos, npos > 1 ? "s" : "");
    if (o->start > o->end)
        return cli_usage_error("mcap", "%s: --start is after --end", cmd);
    if (npos >= 1) {
        int rc = resolve_input(cmd, o->pos[0], o->input, sizeof o->input);
        if (rc != RL_OK)
            return rc;
        o->pos[0] = o->input;
    }
    return RL_OK;
}

static void set_query(const opts *o, rl_mcap_query *q)
{
    rl_mcap_query_default(q);
    q->start_time = o->start;
    q->end_time = o->end;
    if (o->ntopics) {
        q->topics = o->topics;
        q->topic_count = o->ntopics;
    }
}

static void fmt_time(uint64_t ns, char *buf, size_t cap)
{
    if (ns > INT64_MAX || rl_time_format_iso((int64_t)ns, buf, cap) < 0)
        snprintf(buf, cap, "%" PRIu64 " ns", ns);
}

/* Conditions that did not stop reading (a data-section CRC mismatch, a chunk written
 * twice), on stderr; they do not change the exit code. */
static void print_warnings(const char *path, const rl_mcap_indexed *x)
{
    const char *const *w = NULL;
    size_t n = rl_mcap_indexed_warnings(x, &w);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "runlab: mcap: %s: warning: %s\n", path, w[i]);
}

/* ---- info --------------------------------------------------------------------------- */

/* Names read from the file (profile, library, schema and topic names, encodings) reach the
 * terminal escaped (cli_print_escaped_n): a control byte in them can neither split a line
 * nor drive the terminal. The text is the caller's to free; NULL when out of memory. */
static char *shown_bytes(rl_mcap_bytes b)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    cli_print_escaped_n(f, b.data, b.len);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* printf's "%s" of an escaped name, "?" when it could not be made. */
#define SHOWN(t) ((t) ? (t) : "?")

static int cmd_info(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: runlab mcap info FILE\n\n"
               "Prints the header, message count, start and end time and duration, every\n"
               "channel with its message count, schemas and encodings, attachments, metadata\n"
               "and chunk statistics (compression, sizes, ratio). Uses the summary when the\n"
               "file has one and scans the file otherwise.\n");
        return RL_EXIT_OK;
    }
    opts o;
    int rc = parse_opts("info", argc, argv, "", 1, &o);
    if (rc != RL_OK)
        return rc;
    const char *path = o.pos[0];
    rl_mcap_reader *r = NULL;
    if (rl_mcap_reader_open(&r, path, NULL) < 0)
        return cli_fail("mcap", "%s", rl_error_last());
    size_t len = 0;
    const uint8_t *data = rl_mcap_reader_data(r, &len);
    rl_mcap_record hdr;
    int have_header = rl_mcap_reader_next(r, &hdr) == 1 && hdr.opcode == RL_MCAP_OP_HEADER;
    rl_mcap_indexed *x = NULL;
    if (rl_mcap_indexed_open_mem(&x, data, len, 0) < 0) {
        rc = cli_fail("mcap", "%s: %s", path, rl_error_last());
        rl_mcap_reader_close(r);
        return rc;
    }
    print_warnings(path, x);
    printf("file:        ");
    cli_print_escaped(stdout, path);
    printf("\nsize:        %zu bytes\n", len);
    if (have_header) {
        char *profile = shown_bytes(hdr.u.header.profile);
        char *library = shown_bytes(hdr.u.header.library);
        printf("profile:     %s\nlibrary:     %s\n", SHOWN(profile), SHOWN(library));
        free(profile);
        free(library);
    }
    printf("index:       %s\n", rl_mcap_indexed_used_summary(x)
                                    ? "summary"
                                    : "none usable (file scanned linearly)");
    const rl_mcap_channel *chans = NULL;
    size_t nch = rl_mcap_indexed_channels(x, &chans);
    uint64_t *counts = calloc(65536, sizeof *counts);
    if (!counts) {
        rl_mcap_indexed_close(x);
        rl_mcap_reader_close(r);
        return cli_fail("mcap", "out of memory");
    }
    const rl_mcap_statistics *st = rl_mcap_indexed_statistics(x);
    uint64_t total = 0, start = 0, end = 0;
    int damaged = 0;
    if (st) {
        size_t pos = 0;
        uint16_t id;
        uint64_t n;
        while (rl_mcap_map_u16u64_next(st->channel_message_counts, &pos, &id, &n) == 1)
            counts[id] = n;
        total = st->message_count;
        start = st->message_start_time;
        end = st->message_end_time;
    } else {
        rl_mcap_message_iter *it = NULL;
        if (rl_mcap_indexed_messages(x, NULL, &it) == RL_OK) {
            rl_mcap_message m;
            int n;
            while ((n = rl_mcap_message_iter_next(it, &m, NULL)) != 0) {
                if (n < 0) {
                    fprintf(stderr, "runlab: mcap: %s: %s\n", path, rl_error_last());
                    damaged = 1;
                    continue;
                }
                if (total == 0 || m.log_time < start)
                    start = m.log_time;
                if (total == 0 || m.log_time > end)
                    end = m.log_time;
                total++;
                counts[m.channel_id]++;
            }
            rl_mcap_message_iter_free(it);
        }
    }
    char a[64], b[64];
    fmt_time(start, a, sizeof a);
    fmt_time(end, b, sizeof b);
    printf("messages:    %" PRIu64 "\n", total);
    if (total) {
        printf("start:       %s (%" PRIu64 ")\nend:         %s (%" PRIu64 ")\n", a, start, b, end);
        printf("duration:    %.9f s\n", (double)(end - start) / 1e9);
    }
    const rl_mcap_chunk_index *ci = NULL;
    size_t nci = rl_mcap_indexed_chunk_indexes(x, &ci);
    uint64_t csum = 0, usum = 0, cmin = UINT64_MAX, cmax = 0, nz = 0, nl = 0, nn = 0;
    for (size_t i = 0; i < nci; i++) {
        csum += ci[i].compressed_size;
        usum += ci[i].uncompressed_size;
        if (ci[i].uncompressed_size < cmin)
            cmin = ci[i].uncompressed_size;
        if (ci[i].uncompressed_size > cmax)
            cmax = ci[i].uncompressed_size;
        if (ci[i].compression.len == 4)
            nz++;
        else if (ci[i].compression.len == 3)
            nl++;
        else
            nn++;
    }
    printf("chunks:      %zu", nci);
    if (nci) {
        printf(" (zstd %" PRIu64 ", lz4 %" PRIu64 ", none %" PRIu64 ")\n", nz, nl, nn);
        printf("chunk bytes: %" PRIu64 " compressed, %" PRIu64 " uncompressed (ratio %.2f); "
               "uncompressed size %" PRIu64 "..%" PRIu64 ", mean %" PRIu64 "\n",
               csum, usum, csum ? (double)usum / (double)csum : 0.0, cmin, cmax, usum / nci);
    } else {
        printf("\n");
    }
    const rl_mcap_attachment_index *ai = NULL;
    const rl_mcap_metadata_index *mi = NULL;
    printf("attachments: %zu\nmetadata:    %zu\n", rl_mcap_indexed_attachment_indexes(x, &ai),
           rl_mcap_indexed_metadata_indexes(x, &mi));
    const rl_mcap_schema *sch = NULL;
    size_t ns = rl_mcap_indexed_schemas(x, &sch);
    printf("schemas:     %zu\n", ns);
    for (size_t i = 0; i < ns; i++) {
        char *name = shown_bytes(sch[i].name), *enc = shown_bytes(sch[i].encoding);
        printf("  %5u  %s  [%s, %zu bytes]\n", sch[i].id, SHOWN(name), SHOWN(enc),
               sch[i].data.len);
        free(name);
        free(enc);
    }
    printf("channels:    %zu\n", nch);
    for (size_t i = 0; i < nch; i++) {
        const rl_mcap_schema *s = rl_mcap_indexed_schema(x, chans[i].schema_id);
        char *topic = shown_bytes(chans[i].topic), *enc = shown_bytes(chans[i].message_encoding);
        char *sname = s ? shown_bytes(s->name) : NULL;
        printf("  %5u  %-24s %10" PRIu64 " msgs  [%s]  schema %u%s%s\n", chans[i].id,
               SHOWN(topic), counts[chans[i].id], SHOWN(enc), chans[i].schema_id, s ? " " : "",
               s ? SHOWN(sname) : "");
        free(topic);
        free(enc);
        free(sname);
    }
    free(counts);
    rl_mcap_indexed_close(x);
    rl_mcap_reader_close(r);
    return damaged ? RL_EXIT_FAILURE : RL_EXIT_OK;
}

/* ---- cat ---------------------------------------------------------------------------- */

static int cmd_cat(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: runlab mcap cat FILE [--topics T1,T2] [--start TIME] [--end TIME] [--json]\n"
               "                        [--raw]\n\n"
               "Prints the messages in log-time order, one line each:\n"
               "  LOG_TIME TOPIC seq=SEQUENCE publish=PUBLISH_TIME size=BYTES\n"
               "  --topics LIST  only these topics (comma-separated; may repeat)\n"
               "  --start TIME   only messages with log_time >= TIME (ns or ISO 8601)\n"
               "  --end TIME     only messages with log_time <= TIME\n"
               "  --json         NDJSON: one object per line with topic, channel_id, log_time,\n"
               "                 publish_time, sequence, size and the payload: \"message\" decoded\n"
               "                 by the channel's schema (ros2msg/omgidl + cdr, json), else\n"
               "                 \"data_base64\" (a payload that fails to decode adds\n"
               "                 \"decode_error\" and makes the exit code 1)\n"
               "  --raw          with --json: never decode, always \"data_base64\"\n");
        return RL_EXIT_OK;
    }
    int raw = mcap_take_flag(&argc, argv, "--raw");
    opts o;
    int rc = parse_opts("cat", argc, argv, "tj", 1, &o);
    if (rc != RL_OK) {
        free_opts(&o);
        return rc;
    }
    rl_mcap_indexed *x = NULL;
    if (rl_mcap_indexed_open(&x, o.pos[0], 0) < 0) {
        free_opts(&o);
        return cli_fail("mcap", "%s", rl_error_last());
    }
    if (!rl_mcap_indexed_used_summary(x))
        fprintf(stderr,
                "runlab: mcap: %s: warning: no usable summary, file scanned linearly (truncated "
                "or damaged? see 'runlab mcap doctor')\n",
                o.pos[0]);
    print_warnings(o.pos[0], x);
    rl_mcap_query q;
    set_query(&o, &q);
    rl_mcap_message_iter *it = NULL;
    mcap_payloads *payloads = NULL;
    rc = RL_EXIT_OK;
    if (o.json && mcap_payloads_new(&payloads, x, o.pos[0], raw) < 0) {
        rc = cli_fail("mcap", "%s", rl_error_last());
    } else if (rl_mcap_indexed_messages(x, &q, &it) < 0) {
        rc = cli_fail("mcap", "%s: %s", o.pos[0], rl_error_last());
    } else {
        rl_mcap_message m;
        const rl_mcap_channel *ch = NULL;
        int n;
        while ((n = rl_mcap_message_iter_next(it, &m, &ch)) != 0) {
            if (n < 0) {
                rc = cli_fail("mcap", "%s: %s", o.pos[0], rl_error_last());
                continue;
            }
            /* A message whose channel the file never defines has no topic. */
            rl_mcap_bytes topic = ch ? ch->topic : (rl_mcap_bytes){(const uint8_t *)"", 0};
            if (!o.json) {
                printf("%" PRIu64 " ", m.log_time);
                cli_print_escaped_n(stdout, topic.data, topic.len); /* never a raw control byte */
                printf(" seq=%" PRIu32 " publish=%" PRIu64 " size=%zu\n", m.sequence,
                       m.publish_time, m.data.len);
                continue;
            }
            rl_json_writer *j = NULL;
            if (rl_json_writer_new_file(&j, stdout, RL_JSON_COMPACT) < 0) {
                rc = cli_fail("mcap", "%s", rl_error_last());
                break;
            }
            rl_json_begin_object(j);
            rl_json_key(j, "topic");
            rl_json_string_n(j, (const char *)topic.data, topic.len);
            rl_json_key(j, "channel_id");
            rl_json_uint64(j, m.channel_id);
            rl_json_key(j, "log_time");
            rl_json_uint64(j, m.log_time);
            rl_json_key(j, "publish_time");
            rl_json_uint64(j, m.publish_time);
            rl_json_key(j, "sequence");
            rl_json_uint64(j, m.sequence);
            rl_json_key(j, "size");
            rl_json_uint64(j, m.data.len);
            mcap_payloads_write(payloads, ch, &m, j);
            rl_json_end_object(j);
            if (rl_json_writer_finish(j) < 0)
                rc = cli_fail("mcap", "writing JSON: %s", rl_error_last());
            rl_json_writer_free(j);
            if (rc != RL_EXIT_OK)
                break;
        }
        rl_mcap_message_iter_free(it);
    }
    if (payloads && mcap_payloads_failed(payloads))
        rc = RL_EXIT_FAILURE;
    mcap_payloads_free(payloads);
    rl_mcap_indexed_close(x);
    free_opts(&o);
    if (fflush(stdout) != 0 && rc == RL_EXIT_OK)
        rc = cli_fail("mcap", "writing output: %s", strerror(errno));
    return rc;
}

/* ---- doctor ------------------------------------------------------------------------- */

static int cmd_doctor(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: runlab mcap doctor FILE\n\n"
               "Checks every invariant of the MCAP format: magic, record placement, CRCs\n"
               "(chunks, attachments, data section, summary), chunk times and sizes, message\n"
               "indexes against the messages they point to, chunk, attachment and metadata\n"
               "indexes, statistics (counts and times), summary offsets and footer.\n"
               "Prints one line per violation (\"byte OFFSET: what\") and exits 1 if any;\n"
               "what follows from damage (indexes, statistics, offsets and CRCs that describe\n"
               "the damaged bytes) is counted on the damage's line, not listed. Unusual but\n"
               "valid things are \"warning:\" lines and do not change the exit code.\n");
        return RL_EXIT_OK;
    }
    opts o;
    int rc = parse_opts("doctor", argc, argv, "", 1, &o);
    if (rc != RL_OK)
        return rc;
    rl_mcap_doctor_report rep;
    if (rl_mcap_doctor(o.pos[0], &rep) < 0)
        return cli_fail("mcap", "%s", rl_error_last());
    for (size_t i = 0; i < rep.warning_count; i++)
        printf("warning: byte %" PRIu64 ": %s\n", rep.warnings[i].offset, rep.warnings[i].what);
    for (size_t i = 0; i < rep.count; i++) {
        const rl_mcap_violation *v = &rep.violations[i];
        printf("byte %" PRIu64 ": %s", v->offset, v->what);
        if (v->consequences)
            printf(" (and %zu further violation%s that follow from it)", v->consequences,
                   v->consequences == 1 ? "" : "s");
        printf("\n");
    }
    if (rep.dropped)
        printf("... and %zu more\n", rep.dropped);
    size_t bad = rep.count + rep.dropped; /* causes; their consequences are not counted */
    if (bad == 0)
        printf("%s: ok (%" PRIu64 " records, %" PRIu64 " messages, %" PRIu64 " chunks)\n",
               o.pos[0], rep.records, rep.messages, rep.chunks);
    rl_mcap_doctor_report_free(&rep);
    if (bad)
        return cli_fail("mcap", "%s: %zu violation%s", o.pos[0], bad, bad == 1 ? "" : "s");
    return RL_EXIT_OK;
}

/* ---- output files ------------------------------------------------------------------- */

typedef struct outfile {
    char tmp[4096];
    const char *path;
    int fd;
} outfile;

static int out_begin(outfile *f, const char *path)
{
    f->path = path;
    f->fd = -1;
    struct stat st;
    if (lstat(path, &st) == 0)
        return cli_fail("mcap", "%s exists; not overwriting it", path);
    if (snprintf(f->tmp, sizeof f->tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof f->tmp)
        return cli_fail("mcap", "%s: path too long", path);
    f->fd = mkostemp(f->tmp, O_CLOEXEC);
    if (f->fd < 0)
        return cli_fail("mcap", "cannot create %s: %s", f->tmp, strerror(errno));
    fchmod(f->fd, 0644);
    return RL_OK;
}

static void out_abort(outfile *f)
{
    if (f->fd >= 0) {
        close(f->fd);
        unlink(f->tmp);
        f->fd = -1;
    }
}

/* Makes the file durable and links it into place; never replaces an existing file. */
static int out_commit(outfile *f)
{
    if (fsync(f->fd) != 0 && errno != EINVAL) {
        int e = errno;
        out_abort(f);
        return cli_fail("mcap", "%s: fsync: %s", f->tmp, strerror(e));
    }
    if (close(f->fd) != 0) {
        int e = errno;
        f->fd = -1;
        unlink(f->tmp);
        return cli_fail("mcap", "%s: close: %s", f->tmp, strerror(e));
    }
    f->fd = -1;
    if (link(f->tmp, f->path) != 0) {
        int e = errno;
        unlink(f->tmp);
        if (e == EEXIST)
            return cli_fail("mcap", "%s appeared meanwhile; not overwriting it", f->path);
        return cli_fail("mcap", "cannot create %s: %s", f->path, strerror(e));
    }
    unlink(f->tmp);
    return RL_OK;
}

/* ---- recover ------------------------------------------------------------------------ */

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    (void)total;
    rl_progress_update(ctx, done, NULL);
}

/* The first line says every loss: a reader of only that line must not think all is well. */
static void print_headline(const char *in, const char *out, const rl_mcap_recover_report *rep)
{
    printf("%s -> %s: ", in, out);
    if (rep->input_complete) {
        printf("input was complete and undamaged\n");
        return;
    }
    int lost = rep->messages_lost || rep->bytes_lost || rep->chunks_lost ||
               rep->attachments_lost || rep->metadata_lost || rep->lost_count;
    if (lost)
        printf("recovered with LOSSES: %" PRIu64 " messages known lost, %" PRIu64
               " chunks, %" PRIu64 " bytes in %zu ranges",
               rep->messages_lost, rep->chunks_lost, rep->bytes_lost, rep->lost_count);
    else
        printf("recovered, nothing lost");
    if (rep->messages_suspect)
        printf("; %" PRIu64 " suspect messages", rep->messages_suspect);
    if (rep->chunks_duplicate)
        printf("; %" PRIu64 " duplicate chunks", rep->chunks_duplicate);
    printf("\n");
}

static int cmd_recover(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: runlab mcap recover IN OUT [--chunk-size SIZE] [--compression none|zstd|lz4]\n"
               "                           [--keep-suspect]\n\n"
               "Rewrites a truncated or damaged MCAP file (a recorder killed mid-chunk, a file\n"
               "cut anywhere, corrupted bytes) as a complete file OUT: every intact schema,\n"
               "channel, message, attachment and metadata record is kept, and indexes,\n"
               "statistics and summary are rebuilt. The intact records of a damaged\n"
               "uncompressed chunk are kept one by one; a chunk written twice is kept once.\n"
               "Prints what was kept and each lost byte range with the reason; the first line\n"
               "says whether anything was lost. OUT must not exist. By default the output uses\n"
               "the input's compression and chunk size.\n"
               "  --keep-suspect   keep messages read from a damaged region (a chunk whose CRC\n"
               "                   failed where the damage cannot be located, or a message the\n"
               "                   damage overlaps); by default they are dropped. Listed either way.\n");
        return RL_EXIT_OK;
    }
    opts o;
    int rc = parse_opts("recover", argc, argv, "wk", 2, &o);
    if (rc != RL_OK)
        return rc;
    outfile f;
    if ((rc = out_begin(&f, o.pos[1])) != RL_OK)
        return rc;
    rl_mcap_recover_options ro;
    memset(&ro, 0, sizeof ro);
    ro.keep_suspect = o.keep_suspect;
    rl_mcap_writer_options wo;
    if (o.chunk_size || o.compression >= 0) {
        rl_mcap_writer_options_default(&wo);
        if (o.chunk_size)
            wo.chunk_size = o.chunk_size;
        if (o.compression >= 0)
            wo.compression = (rl_mcap_compression)o.compression;
        ro.writer = &wo;
    }
    struct stat st;
    rl_progress *p = NULL;
    if (stat(o.pos[0], &st) == 0 && st.st_size >= PROGRESS_MIN_BYTES &&
        rl_progress_new(&p, stderr, "bytes", 2 * (uint64_t)st.st_size, -1) == RL_OK) {
        ro.progress = on_progress;
        ro.progress_ctx = p;
    }
    rl_mcap_recover_report rep;
    int r = rl_mcap_recover_fd(o.pos[0], f.fd, &ro, &rep);
    rl_progress_finish(p);
    if (r < 0) {
        out_abort(&f);
        return cli_fail("mcap", "%s", rl_error_last());
    }
    rc = out_commit(&f);
    if (rc == RL_OK) {
        print_headline(o.pos[0], o.pos[1], &rep);
        printf("kept: %" PRIu64 " messages, %" PRIu64 " chunks read, %" PRIu64 " schemas, %" PRIu64
               " channels, %" PRIu64 " attachments, %" PRIu64 " metadata\n",
               rep.messages_kept, rep.chunks_read, rep.schemas_kept, rep.channels_kept,
               rep.attachments_kept, rep.metadata_kept);
        printf("lost: %" PRIu64 " bytes in %zu ranges; %" PRIu64 " chunks, %" PRIu64
               " messages known, %" PRIu64 " attachments, %" PRIu64 " metadata\n",
               rep.bytes_lost, rep.lost_count, rep.chunks_lost, rep.messages_lost,
               rep.attachments_lost, rep.metadata_lost);
        for (size_t i = 0; i < rep.lost_count; i++)
            printf("  bytes %" PRIu64 "..%" PRIu64 " (%" PRIu64 " bytes): %s\n",
                   rep.lost[i].offset, rep.lost[i].offset + rep.lost[i].length,
                   rep.lost[i].length, rep.lost[i].what);
        if (rep.notice_count)
            printf("notices: %" PRIu64 " suspect messages %s, %" PRIu64
                   " duplicate chunks (%" PRIu64 " messages kept once), %" PRIu64
                   " messages salvaged from damaged chunks\n",
                   rep.messages_suspect, o.keep_suspect ? "kept" : "dropped",
                   rep.chunks_duplicate, rep.messages_duplicate, rep.messages_salvaged);
        /* A chunk whose damage cannot be located makes every message suspect: the first
         * lines say which, the rest are counted. */
        for (size_t i = 0; i < rep.notice_count && i < MAX_NOTICE_LINES; i++)
            printf("  %s\n", rep.notices[i].what);
        if (rep.notice_count > MAX_NOTICE_LINES)
            printf("  ... and %zu more\n", rep.notice_count - MAX_NOTICE_LINES);
        printf("output: %" PRIu64 " bytes (input %" PRIu64 ")\n", rep.output_size, rep.input_size);
    }
    rl_mcap_recover_report_free(&rep);
    return rc;
}

/* ---- filter ------------------------------------------------------------------------- */

typedef struct filter_state {
    rl_mcap_indexed *x;
    rl_mcap_writer *w;
    uint8_t *schema_done, *channel_done;
} filter_state;

static int filter_channel(filter_state *s, const rl_mcap_channel *ch)
{
    if (s->channel_done[ch->id])
        return RL_OK;
    if (ch->schema_id && !s->schema_done[ch->schema_id]) {
        const rl_mcap_schema *sc = rl_mcap_indexed_schema(s->x, ch->schema_id);
        if (sc) {
            int rc = rl_mcap_writer_add_schema(s->w, sc);
            if (rc < 0)
                return rc;
        }
        s->schema_done[ch->schema_id] = 1;
    }
    rl_mcap_channel c = *ch;
    if (c.schema_id && !rl_mcap_indexed_schema(s->x, c.schema_id))
        c.schema_id = 0; /* the input never defined it; the writer would refuse */
    int rc = rl_mcap_writer_add_channel(s->w, &c);
    if (rc == RL_OK)
        s->channel_done[ch->id] = 1;
    return rc;
}

static int run_filter(const opts *o, const char *profile, const uint8_t *data, size_t len, int fd,
                      uint64_t *kept)
{
    filter_state s;
    memset(&s, 0, sizeof s);
    int rc = rl_mcap_indexed_open_mem(&s.x, data, len, 0);
    if (rc < 0)
        return rc;
    print_warnings(o->pos[0], s.x);
    rl_mcap_writer_options wo;
    rl_mcap_writer_options_default(&wo);
    wo.profile = profile; /* a ros2 bag stays a ros2 bag */
    if (o->chunk_size)
        wo.chunk_size = o->chunk_size;
    if (o->compression >= 0)
        wo.compression = (rl_mcap_compression)o->compression;
    s.schema_done = calloc(65536, 1);
    s.channel_done = calloc(65536, 1);
    if (!s.schema_done || !s.channel_done)
        rc = rl_error_set(RL_ENOMEM, "out of memory");
    if (rc == RL_OK)
        rc = rl_mcap_writer_open_fd(&s.w, fd, &wo);
    rl_progress *p = NULL;
    if (rc == RL_OK && len >= PROGRESS_MIN_BYTES)
        rl_progress_new(&p, stderr, "messages", 0, -1);
    rl_mcap_message_iter *it = NULL;
    rl_mcap_query q;
    set_query(o, &q);
    if (rc == RL_OK)
        rc = rl_mcap_indexed_messages(s.x, &q, &it);
    while (rc == RL_OK) {
        rl_mcap_message m;
        const rl_mcap_channel *ch = NULL;
        int n = rl_mcap_message_iter_next(it, &m, &ch);
        if (n == 0)
            break;
        if (n < 0) {
            rc = n;
            break;
        }
        if (!ch)
            continue; /* its channel is never defined: it cannot be written */
        rc = filter_channel(&s, ch);
        if (rc == RL_OK)
            rc = rl_mcap_writer_add_message(s.w, &m);
        if (rc == RL_OK && ++*kept % 4096 == 0 && p)
            rl_progress_update(p, *kept, NULL);
    }
    rl_mcap_message_iter_free(it);
    rl_progress_finish(p);
    /* Metadata always; attachments whose log time is in the range. */
    const rl_mcap_metadata_index *mi = NULL;
    size_t nm = rc == RL_OK ? rl_mcap_indexed_metadata_indexes(s.x, &mi) : 0;
    for (size_t i = 0; i < nm && rc == RL_OK; i++) {
        rl_mcap_record rec;
        if (mi[i].offset > len || mi[i].length > len - mi[i].offset ||
            mi[i].length < RL_MCAP_RECORD_PREFIX ||
            rl_mcap_record_parse(RL_MCAP_OP_METADATA, data + mi[i].offset + RL_MCAP_RECORD_PREFIX,
                                 (size_t)mi[i].length - RL_MCAP_RECORD_PREFIX, &rec) < 0)
            continue;
        rc = rl_mcap_writer_add_metadata(s.w, &rec.u.metadata);
    }
    const rl_mcap_attachment_index *ai = NULL;
    size_t na = rc == RL_OK ? rl_mcap_indexed_attachment_indexes(s.x, &ai) : 0;
    for (size_t i = 0; i < na && rc == RL_OK; i++) {
        rl_mcap_record rec;
        if (ai[i].log_time < o->start || ai[i].log_time > o->end || ai[i].offset > len ||
            ai[i].length > len - ai[i].offset || ai[i].length < RL_MCAP_RECORD_PREFIX ||
            rl_mcap_record_parse(RL_MCAP_OP_ATTACHMENT,
                                 data + ai[i].offset + RL_MCAP_RECORD_PREFIX,
                                 (size_t)ai[i].length - RL_MCAP_RECORD_PREFIX, &rec) < 0)
            continue;
        rc = rl_mcap_writer_add_attachment(s.w, &rec.u.attachment);
    }
    if (s.w) {
        if (rc == RL_OK)
            rc = rl_mcap_writer_close(s.w);
        else
            rl_mcap_writer_free(s.w);
    }
    free(s.schema_done);
    free(s.channel_done);
    rl_mcap_indexed_close(s.x);
    return rc;
}

static int cmd_filter(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: runlab mcap filter IN OUT|-o OUT [--topics T1,T2] [--start TIME] [--end TIME]\n"
               "                          [--chunk-size SIZE] [--compression none|zstd|lz4]\n\n"
               "Copies the selected messages (in log-time order) with their channels and\n"
               "schemas, all metadata and the attachments in the time range into a new file\n"
               "OUT (which must not exist), with fresh indexes and summary.\n"
               "  -o, --output OUT     the new file (or give it as the second argument)\n"
               "  --topics LIST        only these topics (comma-separated; may repeat;\n"
               "                       --topic is the same)\n"
               "  --start/--end TIME   log-time range, inclusive (ns or ISO 8601)\n"
               "  --chunk-size SIZE    uncompressed chunk size (bytes; K/M suffix), default 1M\n"
               "  --compression C      none, zstd (default) or lz4\n");
        return RL_EXIT_OK;
    }
    /* -o/--output OUT is the convention's spelling of the positional OUT (docs/cli.md) */
    char *args[256];
    int nargs = 0;
    const char *output = NULL;
    for (int i = 0; i < argc && nargs < 255; i++) {
        if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc)
            output = argv[++i];
        else
            args[nargs++] = argv[i];
    }
    if (output && nargs < 255)
        args[nargs++] = (char *)output;
    args[nargs] = NULL;
    opts o;
    int rc = parse_opts("filter", nargs, args, "tw", 2, &o);
    if (rc != RL_OK) {
        free_opts(&o);
        return rc;
    }
    rl_mcap_reader *r = NULL;
    if (rl_mcap_reader_open(&r, o.pos[0], NULL) < 0) {
        free_opts(&o);
        return cli_fail("mcap", "%s", rl_error_last());
    }
    outfile f;
    if ((rc = out_begin(&f, o.pos[1])) != RL_OK) {
        rl_mcap_reader_close(r);
        free_opts(&o);
        return rc;
    }
    size_t len = 0;
    const uint8_t *data = rl_mcap_reader_data(r, &len);
    /* The Header's profile carries over; the library is runlab, which writes the copy. */
    char profile[256] = "";
    rl_mcap_record hdr;
    if (rl_mcap_reader_next(r, &hdr) == 1 && hdr.opcode == RL_MCAP_OP_HEADER &&
        hdr.u.header.profile.len < sizeof profile &&
        !memchr(hdr.u.header.profile.data, 0, hdr.u.header.profile.len))
        memcpy(profile, hdr.u.header.profile.data, hdr.u.header.profile.len);
    uint64_t kept = 0;
    if (run_filter(&o, profile, data, len, f.fd, &kept) < 0) {
        rc = cli_fail("mcap", "%s: %s", o.pos[0], rl_error_last());
        out_abort(&f);
    } else {
        rc = out_commit(&f);
        if (rc == RL_OK)
            printf("%s -> %s: %" PRIu64 " messages\n", o.pos[0], o.pos[1], kept);
    }
    rl_mcap_reader_close(r);
    free_opts(&o);
    return rc;
}

/* ---- dispatch ----------------------------------------------------------------------- */

int cmd_mcap(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("mcap", "missing command (info, cat, doctor, recover, filter)");
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        fputs(usage_main, stdout);
        return RL_EXIT_OK;
    }
    if (strcmp(sub, "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(sub, "cat") == 0)
        return cmd_cat(argc - 1, argv + 1);
    if (strcmp(sub, "doctor") == 0)
        return cmd_doctor(argc - 1, argv + 1);
    if (strcmp(sub, "recover") == 0)
        return cmd_recover(argc - 1, argv + 1);
    if (strcmp(sub, "filter") == 0)
        return cmd_filter(argc - 1, argv + 1);
    if (strcmp(sub, "schema") == 0)
        return cmd_mcap_schema(argc - 1, argv + 1);
    if (strcmp(sub, "export") == 0)
        return cmd_mcap_export(argc - 1, argv + 1);
    return cli_usage_error("mcap", "unknown command '%s'", sub);
}
