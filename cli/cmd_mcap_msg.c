/* `runlab mcap schema` (each schema of a recording as parsed, or its error) and
 * `runlab mcap export` (one CSV per topic, a column per leaf field, ready for pandas):
 * the message-decoding subcommands of `runlab mcap`, over runlab/msgdef.h. */
#include "cli.h"
#include "mcap_decode.h"

#include "runlab/csv.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/mcap.h"
#include "runlab/msgdef.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_EXPORT_TOPICS = 256 };

/* Parses the schema of a Schema record; NULL with the error set. */
static rl_msgdef *parse_schema(const rl_mcap_schema *s)
{
    char *name = rl_mcap_bytes_dup(s->name), *enc = rl_mcap_bytes_dup(s->encoding);
    rl_msgdef *d = NULL;
    if (!name || !enc)
        rl_error_set(RL_ENOMEM, "out of memory");
    else if (rl_msgdef_parse(&d, enc, name, (const char *)s->data.data, s->data.len) < 0)
        d = NULL;
    free(name);
    free(enc);
    return d;
}

/* ---- schema ------------------------------------------------------------------------------ */

int cmd_mcap_schema(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: runlab mcap schema FILE [--topic T]\n\n"
               "Prints each schema of the file as runlab parses it (normalised text: every type,\n"
               "dependencies first, one member per line), or the error that stops it.\n"
               "  --topic T   only the schema of topic T's channel\n"
               "Exit codes: 0 every schema parses, 1 one does not (or the file is unreadable),\n"
               "2 usage error.\n");
        return RL_EXIT_OK;
    }
    const char *file = NULL, *topic = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--topic") == 0 && i + 1 < argc)
            topic = argv[++i];
        else if (strcmp(argv[i], "--topic") == 0)
            return cli_usage_error("mcap", "schema: --topic needs a value");
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("mcap", "schema: unknown option '%s'", argv[i]);
        else if (file)
            return cli_usage_error("mcap", "schema: unexpected argument '%s'", argv[i]);
        else
            file = argv[i];
    }
    if (!file)
        return cli_usage_error("mcap", "schema: expected a file argument");
    rl_mcap_indexed *x = NULL;
    if (rl_mcap_indexed_open(&x, file, 0) < 0)
        return cli_fail("mcap", "%s", rl_error_last());
    const rl_mcap_schema *schemas;
    const rl_mcap_channel *channels;
    size_t ns = rl_mcap_indexed_schemas(x, &schemas), nc = rl_mcap_indexed_channels(x, &channels);
    int rc = RL_EXIT_OK, shown = 0;
    for (size_t i = 0; i < ns; i++) {
        const rl_mcap_schema *s = &schemas[i];
        if (topic) {
            int used = 0;
            for (size_t c = 0; c < nc; c++)
                used |= channels[c].schema_id == s->id && rl_mcap_bytes_eq(channels[c].topic, rl_mcap_bytes_of(topic));
            if (!used)
                continue;
        }
        shown++;
        printf("# schema %u: %.*s (%.*s)\n", s->id, (int)s->name.len, (const char *)s->name.data,
               (int)s->encoding.len, (const char *)s->encoding.data);
        rl_msgdef *d = parse_schema(s);
        char *text = NULL;
        if (d && rl_msgdef_format(d, &text) == RL_OK) {
            fputs(text, stdout);
        } else {
            printf("error: %s\n", rl_error_last());
            rc = RL_EXIT_FAILURE;
        }
        free(text);
        rl_msgdef_free(d);
    }
    rl_mcap_indexed_close(x);
    if (topic && !shown)
        return cli_fail("mcap", "%s: no channel with topic '%s' has a schema", file, topic);
    return rc;
}

/* ---- export ------------------------------------------------------------------------------ */

typedef struct export_topic {
    const char *topic;
    char path[4096], tmp[4096];
    FILE *f;
    rl_csv_writer *csv;
    rl_msgdef *def;
    uint16_t schema_id;
    rl_msg_row row;
    uint64_t rows;
} export_topic;

/* "/vehicle/1/state" -> "vehicle__1__state.csv"; a control byte (and '%' itself, so that
 * two topics never share a name) becomes %HH: no raw control byte reaches a file name. */
static int csv_name(const char *topic, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *s = topic[0] == '/' ? topic + 1 : topic; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char hex[4];
        const char *piece = NULL;
        if (ch == '/')
            piece = "__";
        else if (ch < 0x20 || ch == 0x7f || ch == '%')
            snprintf(hex, sizeof hex, "%%%02X", ch), piece = hex;
        size_t k = piece ? strlen(piece) : 1;
        if (n + k + 5 >= cap)
            return RL_ERANGE;
        memcpy(out + n, piece ? piece : s, k);
        n += k;
    }
    if (n == 0)
        return RL_EINVAL;
    memcpy(out + n, ".csv", 5);
    return RL_OK;
}

/* `s` with control characters escaped as cli_print_escaped writes them, into `buf`: topic
 * names and paths made from them are echoed to a terminal only this way. */
static const char *escaped(const char *s, char *buf, size_t cap)
{
    FILE *f = fmemopen(buf, cap, "w");
    if (!f)
        return "?";
    cli_print_escaped(f, s);
    if (fclose(f) != 0)
        buf[cap - 1] = '\0';
    return buf;
}

static int open_topic(export_topic *t, rl_mcap_indexed *x, const char *file, const char *dir)
{
    char et[512];
    const char *shown = escaped(t->topic, et, sizeof et);
    const rl_mcap_channel *channels;
    size_t nc = rl_mcap_indexed_channels(x, &channels);
    const rl_mcap_channel *ch = NULL;
    for (size_t c = 0; c < nc && !ch; c++)
        if (rl_mcap_bytes_eq(channels[c].topic, rl_mcap_bytes_of(t->topic)))
            ch = &channels[c];
    if (!ch)
        return cli_fail("mcap", "%s: no channel with topic '%s'", file, shown);
    const rl_mcap_schema *s = ch->schema_id ? rl_mcap_indexed_schema(x, ch->schema_id) : NULL;
    if (!s || !rl_msg_codec_find_bytes(s->encoding.data, s->encoding.len,
                                       ch->message_encoding.data, ch->message_encoding.len))
        return cli_fail("mcap", "%s: topic '%s': only cdr messages with a ros2msg or omgidl schema "
                                "can be exported", file, shown);
    if (!(t->def = parse_schema(s)))
        return cli_fail("mcap", "%s: topic '%s': %s", file, shown, rl_error_last());
    t->schema_id = ch->schema_id;
    char name[1024];
    if (csv_name(t->topic, name, sizeof name) < 0)
        return cli_fail("mcap", "topic '%s': no usable file name", shown);
    int n1 = snprintf(t->path, sizeof t->path, "%s/%s", dir, name);
    int n2 = snprintf(t->tmp, sizeof t->tmp, "%s/.%s.tmp%ld", dir, name, (long)getpid());
    if (n1 < 0 || n2 < 0 || (size_t)n1 >= sizeof t->path || (size_t)n2 >= sizeof t->tmp)
        return cli_fail("mcap", "%s: path too long", dir);
    if (access(t->path, F_OK) == 0)
        return cli_fail("mcap", "%s: exists; not overwritten", t->path);
    if (!(t->f = fopen(t->tmp, "wx")))
        return cli_fail("mcap", "%s: %s", t->tmp, strerror(errno));
    if (rl_csv_writer_new(&t->csv, t->f, ',', false) < 0)
        return cli_fail("mcap", "%s", rl_error_last());
    char **cols = NULL;
    size_t ncols = 0;
    if (rl_msg_columns(t->def, &cols, &ncols) < 0)
        return cli_fail("mcap", "topic '%s': %s", shown, rl_error_last());
    rl_csv_write_str(t->csv, "log_time");
    rl_csv_write_str(t->csv, "publish_time");
    for (size_t i = 0; i < ncols; i++)
        rl_csv_write_str(t->csv, cols[i]);
    rl_msg_columns_free(cols, ncols);
    return rl_csv_end_row(t->csv) < 0 ? cli_fail("mcap", "%s: %s", t->tmp, rl_error_last()) : RL_EXIT_OK;
}

static int write_row(export_topic *t, const rl_mcap_message *m, const char *file)
{
    if (rl_msg_row_decode(t->def, m->data.data, m->data.len, &t->row) < 0) {
        char et[512];
        fprintf(stderr, "runlab: mcap: %s: topic '%s', log_time %" PRIu64 ": %s; row left out\n", file,
                escaped(t->topic, et, sizeof et), m->log_time, rl_error_last());
        return RL_EXIT_FAILURE;
    }
    rl_csv_write_i64(t->csv, (int64_t)m->log_time);
    rl_csv_write_i64(t->csv, (int64_t)m->publish_time);
    for (size_t i = 0; i < t->row.ncols; i++)
        rl_csv_write_field(t->csv, t->row.buf + t->row.offsets[i], t->row.offsets[i + 1] - t->row.offsets[i]);
    if (rl_csv_end_row(t->csv) < 0)
        return cli_fail("mcap", "%s: %s", t->tmp, rl_error_last());
    t->rows++;
    return RL_EXIT_OK;
}

/* Closes the CSV and links it into place (never over an existing file). */
static int finish_topic(export_topic *t, int keep)
{
    int rc = RL_EXIT_OK;
    if (t->csv)
        rl_csv_writer_free(t->csv);
    if (t->f && (fflush(t->f) != 0 || fsync(fileno(t->f)) != 0) && keep)
        rc = cli_fail("mcap", "%s: %s", t->tmp, strerror(errno));
    if (t->f && fclose(t->f) != 0 && keep && rc == RL_EXIT_OK)
        rc = cli_fail("mcap", "%s: %s", t->tmp, strerror(errno));
    if (t->f && keep && rc == RL_EXIT_OK && link(t->tmp, t->path) != 0)
        rc = cli_fail("mcap", "%s: %s", t->path, strerror(errno));
    if (t->f)
        unlink(t->tmp);
    if (t->f && keep && rc == RL_EXIT_OK) {
        cli_print_escaped(stdout, t->path);
        printf(": %" PRIu64 " rows\n", t->rows);
    }
    rl_msg_row_free(&t->row);
    rl_msgdef_free(t->def);
    return rc;
}

int cmd_mcap_export(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: runlab mcap export FILE --topic T [--topic T2 ...] --out-dir DIR\n\n"
               "Writes one CSV per topic into DIR (created if missing), named after the topic\n"
               "without its leading '/' and with '/' as '__' (/vehicle/1/state ->\n"
               "vehicle__1__state.csv). Columns: log_time, publish_time (integer ns), then one per\n"
               "leaf field by its full path (pose.pose.position.x, covariance[0], ...); sequences\n"
               "and unions as JSON text in one cell. A control byte or %% in a topic name is\n"
               "written %%HH in the file name (tab -> %%09). Existing files are never overwritten.\n"
               "Exit codes: 0 success, 1 failure (a payload that does not decode is reported and\n"
               "left out), 2 usage error.\n");
        return RL_EXIT_OK;
    }
    const char *file = NULL, *dir = NULL;
    const char *topics[MAX_EXPORT_TOPICS];
    size_t ntopics = 0;
    for (int i = 1; i < argc; i++) {
        int has_val = i + 1 < argc;
        if (strcmp(argv[i], "--topic") == 0 || strcmp(argv[i], "--out-dir") == 0) {
            if (!has_val)
                return cli_usage_error("mcap", "export: %s needs a value", argv[i]);
            if (argv[i][2] == 'o')
                dir = argv[++i];
            else if (ntopics == MAX_EXPORT_TOPICS)
                return cli_usage_error("mcap", "export: more than %d topics", MAX_EXPORT_TOPICS);
            else
                topics[ntopics++] = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("mcap", "export: unknown option '%s'", argv[i]);
        } else if (file) {
            return cli_usage_error("mcap", "export: unexpected argument '%s'", argv[i]);
        } else {
            file = argv[i];
        }
    }
    if (!file || !dir || !ntopics)
        return cli_usage_error("mcap", "export: expected FILE, --topic and --out-dir");
    rl_mcap_indexed *x = NULL;
    if (rl_mcap_indexed_open(&x, file, 0) < 0)
        return cli_fail("mcap", "%s", rl_error_last());
    const char *const *warnings;
    size_t nwarnings = rl_mcap_indexed_warnings(x, &warnings);
    for (size_t i = 0; i < nwarnings; i++) /* a zero-filled tail, a duplicated chunk, ... */
        fprintf(stderr, "runlab: mcap: %s: warning: %s\n", file, warnings[i]);
    if (rl_fs_mkdirs(dir) < 0) {
        rl_mcap_indexed_close(x);
        return cli_fail("mcap", "%s", rl_error_last());
    }
    export_topic *ts = calloc(ntopics, sizeof *ts);
    int rc = ts ? RL_EXIT_OK : cli_fail("mcap", "out of memory");
    for (size_t i = 0; rc == RL_EXIT_OK && i < ntopics; i++) {
        ts[i].topic = topics[i];
        for (size_t k = 0; k < i; k++)
            if (strcmp(topics[k], topics[i]) == 0) {
                char et[512];
                rc = cli_usage_error("mcap", "export: topic '%s' given twice",
                                     escaped(topics[i], et, sizeof et));
            }
        if (rc == RL_EXIT_OK)
            rc = open_topic(&ts[i], x, file, dir);
    }
    rl_mcap_query q;
    rl_mcap_query_default(&q);
    q.topics = topics;
    q.topic_count = ntopics;
    rl_mcap_message_iter *it = NULL;
    int failed = 0;
    if (rc == RL_EXIT_OK && rl_mcap_indexed_messages(x, &q, &it) < 0)
        rc = cli_fail("mcap", "%s: %s", file, rl_error_last());
    rl_mcap_message m;
    const rl_mcap_channel *ch = NULL;
    int n;
    while (rc == RL_EXIT_OK && it && (n = rl_mcap_message_iter_next(it, &m, &ch)) != 0) {
        if (n < 0) {
            failed = cli_fail("mcap", "%s: %s", file, rl_error_last());
            continue;
        }
        for (size_t i = 0; ch && i < ntopics; i++) {
            if (!rl_mcap_bytes_eq(ch->topic, rl_mcap_bytes_of(ts[i].topic)))
                continue;
            if (ch->schema_id != ts[i].schema_id) {
                char et[512];
                failed = cli_fail("mcap", "%s: topic '%s': a channel with another schema; its "
                                          "messages are left out",
                                  file, escaped(ts[i].topic, et, sizeof et));
                break;
            }
            int w = write_row(&ts[i], &m, file);
            if (w != RL_EXIT_OK)
                failed = w;
        }
    }
    rl_mcap_message_iter_free(it);
    for (size_t i = 0; ts && i < ntopics; i++) {
        int f = finish_topic(&ts[i], rc == RL_EXIT_OK);
        if (rc == RL_EXIT_OK && f != RL_EXIT_OK)
            rc = f;
    }
    free(ts);
    rl_mcap_indexed_close(x);
    return rc != RL_EXIT_OK ? rc : failed ? RL_EXIT_FAILURE : RL_EXIT_OK;
}
