/* `runlab record`: a one-shot experiment recording on the recorder engine. Messages come
 * from a synthetic load (vehicles x rate x payload) or from an existing MCAP file
 * replayed at its own pace or as fast as possible; START comes at once or after a delay,
 * STOP after a duration, and SIGINT/SIGTERM end the run INTERRUPTED with a complete file
 * (a second signal leaves at once, without waiting for a disk that hangs). Prints a
 * one-line summary and, as the last line, the run directory. `--repair RUN` repairs the
 * run of a recorder that died. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/map.h"
#include "runlab/mcap.h"
#include "runlab/msgdef.h"
#include "runlab/number.h"
#include "runlab/record.h"
#include "runlab/time.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Set by the signal handler, read by the producing loop: the only way a handler may
 * talk to the program. */
static volatile sig_atomic_t g_signal, g_signals, g_ending;
/* What the handler says when it leaves without waiting (prepared before the run, since a
 * handler may only write(2)). */
static char g_leave_msg[PATH_MAX + 256];
static volatile sig_atomic_t g_leave_len;

static void say(const char *text, size_t len)
{
    while (len) {
        ssize_t n = write(STDERR_FILENO, text, len);
        if (n <= 0)
            return;
        text += n;
        len -= (size_t)n;
    }
}

/* The first signal ends the run properly (its bag closed and manifest written); while
 * that waits for the disk, the handler says so, and a second signal leaves at once, so
 * that a hanging disk never makes Ctrl-C useless. */
static void on_signal(int sig)
{
    g_signal = sig;
    g_signals++;
    if (g_signals >= 2) {
        if (g_leave_len)
            say(g_leave_msg, (size_t)g_leave_len);
        _exit(RL_EXIT_FAILURE);
    }
    if (g_ending) {
        static const char wait_msg[] = "runlab: record: finishing the bag: waiting for the "
                                       "disk; signal again to leave without waiting\n";
        say(wait_msg, sizeof wait_msg - 1);
    }
}

static void prepare_leave_message(const char *run_dir)
{
    int n = snprintf(g_leave_msg, sizeof g_leave_msg,
                     "runlab: record: second signal: leaving without waiting for the disk; the "
                     "run is unfinished: runlab record --repair %s\n",
                     run_dir[0] ? run_dir : "RUN");
    g_leave_len = n > 0 && (size_t)n < sizeof g_leave_msg ? n : 0;
}

enum { MAX_TOPIC_FILTERS = 64 };

struct record_args {
    const char *repair;
    int synthetic;
    const char *replay;
    int fast;
    const char *topics[MAX_TOPIC_FILTERS];
    size_t topic_count;
    int vehicles;
    double rate;
    size_t payload;
    double start_after, duration;
    int quiet, heartbeat;
    rl_record_run run;
    rl_record_options opts;
    rl_map_read_options map_read; /* --projection, --origin */
};

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab record (--synthetic | --replay FILE.mcap) [options]\n"
            "       runlab record --repair RUN\n\n"
            "Records one experiment run into a new directory\n"
            "$RUNLAB_HOME/experiments/<UTC time>_<run id>/ (bag/, map/, config/, manifest.json).\n"
            "START is marked at once or after --start-after, STOP after --duration; Ctrl-C\n"
            "ends the run INTERRUPTED with a complete, readable bag (a second Ctrl-C leaves\n"
            "at once, without waiting for a disk that hangs; the run is then unfinished).\n\n"
            "  --repair RUN           repair the run directory of a recorder that died: recover\n"
            "                         its bag in place and rewrite manifest.json as INTERRUPTED\n"
            "                         with the counts of what the bag holds. Exit 0 when\n"
            "                         repaired or nothing to do, 1 when it cannot be repaired\n"
            "                         or its recorder is still running\n\n"
            "Sources:\n"
            "  --synthetic            generated vehicle states (see --vehicles, --rate, --payload)\n"
            "  --vehicles N           synthetic vehicles (default 4)\n"
            "  --rate HZ              messages per second per vehicle (default 50; 0 = as fast\n"
            "                         as the recorder takes them)\n"
            "  --payload BYTES        synthetic message size (default 256)\n"
            "  --replay FILE.mcap     re-record the messages of an MCAP file (log time = when\n"
            "                         runlab received it; publish time = the original log time)\n"
            "  --fast                 replay as fast as possible (default: original pace)\n"
            "  --topics LIST          replay only these topics (comma-separated, repeatable;\n"
            "                         --topic is the same)\n"
            "Timing:\n"
            "  --start-after SEC      START this long after recording begins (default 0)\n"
            "  --duration SEC         STOP this long after START (default 5 for --synthetic;\n"
            "                         the end of the file for --replay)\n"
            "Run:\n"
            "  --run-id ID            run id (letters, digits, - _ .; default generated)\n"
            "  --map FILE             the map: a Lanelet2 .osm or CommonRoad .xml is compiled\n"
            "                         and stored as map/runtime_map.bin beside the original;\n"
            "                         a runtime map is stored as map/runtime_map.bin (both\n"
            "                         SHA-256, format, projection and frame in the manifest)\n"
            "  --projection P         reading a Lanelet2 map: auto (default), ltp, utm, smerc,\n"
            "                         metric, local (as runlab map compile)\n"
            "  --origin LAT,LON       origin of ltp/utm/smerc (default 49,8.4)\n"
            "  --original-map FILE    with a runtime --map: its original, stored too (must be\n"
            "                         the file it was compiled from)\n"
            "  --map-frame FRAME      frame of the map (default map)\n"
            "  --planner NAME         planner name for the manifest\n"
            "  --root DIR             runlab home (default $RUNLAB_HOME or ~/runlab;\n"
            "                         --home is the same)\n"
            "  --domain N             lab domain; one recorder per host and domain, whatever\n"
            "                         the home (default 0)\n"
            "Limits:\n"
            "  --max-queued-messages N   (default 1000000)\n"
            "  --max-queued-bytes N      (default 536870912)\n"
            "  --write-delay-ms MS       (default 100)\n"
            "  --stall-limit-ms MS       (default 2000)\n"
            "  --min-free-bytes N        (default 268435456)\n"
            "  --compression none|zstd|lz4 (default zstd)\n"
            "  --compression-level N     zstd -7..22 (default 1), lz4 0..12 (default 0)\n"
            "  --chunk-size BYTES        (default 1048576)\n"
            "  --drop-outside            leave messages outside START..STOP out of the bag\n"
            "  --heartbeat               print the recorder's heartbeat (every 250 ms) on stderr\n"
            "                            (without it, a terminal gets one live status line)\n"
            "  -q, --quiet               only the run directory on stdout\n"
            "  -h, --help                show this help\n\n"
            "Exit status: 0 COMPLETE or INTERRUPTED, 1 FAILED or error (also when the manifest\n"
            "could not be written), 2 usage.\n");
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    if (*s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static void sleep_until_mono(int64_t t)
{
    for (;;) {
        int64_t now = rl_mono_ns();
        if (now >= t || g_signal)
            return;
        int64_t d = t - now;
        if (d > 50000000)
            d = 50000000; /* stay responsive to signals */
        struct timespec ts = {(time_t)(d / 1000000000), (long)(d % 1000000000)};
        nanosleep(&ts, NULL);
    }
}

/* Keeps an unpaced producer below half the queue limits: the engine never blocks, so a
 * producer that wants zero drops has to wait itself. */
static void backpressure(rl_recorder *r, const rl_record_options *o)
{
    for (;;) {
        rl_record_status s;
        rl_recorder_status(r, &s);
        if (s.state != RL_RECORD_ARMED && s.state != RL_RECORD_RECORDING)
            return;
        if (s.queued_messages < o->max_queued_messages / 2 &&
            s.queued_bytes < o->max_queued_bytes / 2)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        if (g_signal)
            return;
    }
}

/* Where START and STOP fall in the stream (`position`: the wall clock for --synthetic,
 * the offset into the file for --replay), and the stamps they get. Every stamp is on the
 * wall clock, like the receive stamps of the messages around them, so that a manifest
 * reads prepare <= begin <= start <= stop <= finish also when a replay runs --fast. */
struct timeline {
    int64_t start_at, stop_at; /* positions at which START and STOP fall (stop -1: none) */
    int started, stopped;
    int64_t start_stamp;
};

/* Marks START once the stream reaches its position (stamped `start_stamp`) and STOP once
 * it is past its position (stamped `stop_stamp`, never before START's). */
static int advance_marks(rl_recorder *r, struct timeline *tl, int64_t position,
                         int64_t start_stamp, int64_t stop_stamp)
{
    if (!tl->started && position >= tl->start_at) {
        if (rl_recorder_mark_start(r, start_stamp) < 0)
            return -1;
        tl->started = 1;
        tl->start_stamp = start_stamp;
    }
    if (tl->started && !tl->stopped && tl->stop_at >= 0 && position > tl->stop_at) {
        if (rl_recorder_mark_stop(r, stop_stamp > tl->start_stamp ? stop_stamp
                                                                  : tl->start_stamp) < 0)
            return -1;
        tl->stopped = 1;
    }
    return 0;
}

static int running(rl_recorder *r)
{
    rl_record_state s = rl_recorder_state(r);
    return s == RL_RECORD_ARMED || s == RL_RECORD_RECORDING;
}

static int produce_synthetic(rl_recorder *r, struct record_args *a, struct timeline *tl)
{
    uint16_t *ids = calloc((size_t)a->vehicles, sizeof *ids);
    unsigned char *buf = malloc(a->payload ? a->payload : 1);
    if (!ids || !buf) {
        free(ids);
        free(buf);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    static const char schema[] = "uint32 vehicle_id\nuint64 sequence\nuint8[] data\n";
    int rc = RL_OK;
    for (int v = 0; v < a->vehicles && rc == RL_OK; v++) {
        char name[64];
        snprintf(name, sizeof name, "/vehicle/%d/state", v + 1);
        rc = rl_recorder_add_topic(r, name, "runlab_msgs/SyntheticState", "ros2msg", schema,
                                   sizeof schema - 1, "cdr", &ids[v]);
    }
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < a->payload; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    int64_t period = a->rate > 0 ? (int64_t)(1e9 / a->rate) : 0;
    int64_t mono0 = rl_mono_ns();
    uint64_t seq = 0;
    while (rc == RL_OK && !g_signal && running(r)) {
        int64_t now = rl_time_now_ns();
        if (advance_marks(r, tl, now, tl->start_at, tl->stop_at) < 0) {
            rc = rl_error_last_code();
            break;
        }
        if (tl->stopped)
            break;
        for (int v = 0; v < a->vehicles && rc == RL_OK; v++) {
            if (a->payload >= 12) {
                uint32_t vid = (uint32_t)v + 1;
                memcpy(buf, &vid, 4);
                memcpy(buf + 4, &seq, 8);
            }
            rc = rl_recorder_push(r, ids[v], now, now, buf, a->payload);
        }
        seq++;
        if (period)
            sleep_until_mono(mono0 + (int64_t)seq * period);
        else if ((seq & 63) == 0)
            backpressure(r, &a->opts);
    }
    free(ids);
    free(buf);
    return rc;
}

/* Replays the file's messages: each is received now (its log time in the new bag) and
 * keeps its original log time as publish time; START and STOP fall at their offsets into
 * the file (--start-after, --duration in file time), stamped when the replay gets there. */
static int produce_replay(rl_recorder *r, struct record_args *a, struct timeline *tl,
                          rl_mcap_indexed *idx)
{
    int rc = RL_OK;
    int32_t *map = malloc(65536 * sizeof *map);
    rl_mcap_message_iter *it = NULL;
    rl_mcap_query q;
    rl_mcap_query_default(&q);
    q.topics = a->topic_count ? a->topics : NULL;
    q.topic_count = a->topic_count;
    if (!map)
        rc = rl_error_set(RL_ENOMEM, "out of memory");
    else {
        for (size_t i = 0; i < 65536; i++)
            map[i] = -1;
        rc = rl_mcap_indexed_messages(idx, &q, &it);
    }
    int64_t mono0 = rl_mono_ns();
    int have_first = 0;
    uint64_t first = 0, n = 0;
    int64_t last_receive = 0; /* receive stamps never go back, even if the clock does */
    while (rc == RL_OK && !g_signal && running(r)) {
        rl_mcap_message m;
        const rl_mcap_channel *ch = NULL;
        int got = rl_mcap_message_iter_next(it, &m, &ch);
        if (got < 0) {
            rc = rl_error_prefix(got, "%s", a->replay);
            break;
        }
        if (got == 0)
            break;
        if (!have_first) {
            first = m.log_time;
            have_first = 1;
        }
        int64_t offset = (int64_t)(m.log_time - first);
        if (!a->fast)
            sleep_until_mono(mono0 + offset);
        int64_t now = rl_time_now_ns();
        if (now < last_receive)
            now = last_receive;
        if (advance_marks(r, tl, offset, now, last_receive) < 0) {
            rc = rl_error_last_code();
            break;
        }
        if (map[m.channel_id] < 0) {
            char topic[1024], sname[1024], senc[256], menc[256];
            const rl_mcap_schema *s = ch ? rl_mcap_indexed_schema(idx, ch->schema_id) : NULL;
            snprintf(topic, sizeof topic, "%.*s", ch ? (int)ch->topic.len : 0,
                     ch ? (const char *)ch->topic.data : "");
            snprintf(menc, sizeof menc, "%.*s", ch ? (int)ch->message_encoding.len : 0,
                     ch ? (const char *)ch->message_encoding.data : "");
            snprintf(sname, sizeof sname, "%.*s", s ? (int)s->name.len : 0,
                     s ? (const char *)s->name.data : "");
            snprintf(senc, sizeof senc, "%.*s", s ? (int)s->encoding.len : 0,
                     s ? (const char *)s->encoding.data : "");
            uint16_t id;
            rc = rl_recorder_add_topic(r, topic[0] ? topic : "/unnamed", sname, senc,
                                       s ? s->data.data : NULL, s ? s->data.len : 0, menc, &id);
            if (rc < 0)
                break;
            map[m.channel_id] = id;
        }
        uint64_t pub = m.log_time > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : m.log_time;
        rc = rl_recorder_push(r, (uint16_t)map[m.channel_id], now, (int64_t)pub, m.data.data,
                              m.data.len);
        last_receive = now;
        if (a->fast && (++n & 63) == 0)
            backpressure(r, &a->opts);
    }
    /* The end of the file is STOP at the latest. */
    if (rc == RL_OK && !g_signal && have_first && running(r)) {
        tl->stop_at = -1;
        int64_t now = rl_time_now_ns();
        if (now < last_receive)
            now = last_receive;
        if (advance_marks(r, tl, INT64_MAX, now, now) < 0)
            rc = rl_error_last_code();
        if (rc == RL_OK && !tl->stopped) {
            if (rl_recorder_mark_stop(r, last_receive > tl->start_stamp ? last_receive
                                                                        : tl->start_stamp) < 0)
                rc = rl_error_last_code();
            tl->stopped = 1;
        }
    }
    rl_mcap_message_iter_free(it);
    free(map);
    return rc;
}

/* The heartbeat as a line on stderr (from the recorder's monitor thread). */
static void print_heartbeat(const rl_record_status *s, void *user)
{
    (void)user;
    char iso[RL_TIME_ISO_LEN] = "";
    rl_time_format_iso(s->stamp_ns, iso, sizeof iso);
    fprintf(stderr,
            "heartbeat %s %s host=%s run=%s received=%llu inside=%llu outside=%llu "
            "written=%llu dropped=%llu queued=%llu%s pauses=%llu dir=%s%s%s\n",
            iso, rl_record_state_name(s->state), s->host, s->run_id,
            (unsigned long long)s->received, (unsigned long long)s->inside,
            (unsigned long long)s->outside, (unsigned long long)s->written,
            (unsigned long long)s->dropped, (unsigned long long)s->queued_messages,
            s->closing ? " closing" : "", (unsigned long long)s->pauses, s->run_dir,
            s->manifest_error[0] ? " manifest_error=" : "", s->manifest_error);
}

/* On a terminal (and without --heartbeat or --quiet) one status line on stderr, redrawn
 * at every heartbeat from the recorder's monitor thread. The mutex and `active` keep it
 * from drawing over the summary: the monitor outlives rl_recorder_wait. */
struct live_status {
    pthread_mutex_t mu;
    int active, drawn;
    int64_t begin_ns; /* wall clock at begin, 0 before */
    double start_after, duration;
};

static void draw_live_status(const rl_record_status *s, void *user)
{
    struct live_status *ls = user;
    pthread_mutex_lock(&ls->mu);
    if (ls->active && ls->begin_ns) {
        double elapsed = (double)(s->stamp_ns - ls->begin_ns) / 1e9;
        char span[64] = "";
        if (ls->duration >= 0)
            snprintf(span, sizeof span, " of %.1f", ls->start_after + ls->duration);
        int before_start = s->state == RL_RECORD_RECORDING && elapsed < ls->start_after;
        fprintf(stderr,
                "\r\033[Krecord: %s%s %.1f%s s, written %llu, dropped %llu, queued %llu, "
                "%.1f MB%s",
                rl_record_state_name(s->state), before_start ? " (before START)" : "",
                elapsed < 0 ? 0.0 : elapsed, span,
                (unsigned long long)s->written, (unsigned long long)s->dropped,
                (unsigned long long)s->queued_messages, (double)s->bytes / 1e6,
                s->manifest_error[0] ? ", MANIFEST NOT WRITTEN" : "");
        fflush(stderr);
        ls->drawn = 1;
    }
    pthread_mutex_unlock(&ls->mu);
}

static void end_live_status(struct live_status *ls)
{
    pthread_mutex_lock(&ls->mu);
    if (ls->drawn)
        fputs("\r\033[K", stderr);
    ls->active = 0;
    pthread_mutex_unlock(&ls->mu);
}

/* "ros2" when the replayed file's channels all fit the MCAP ros2 profile, else "". */
static const char *replay_profile(const rl_mcap_indexed *idx)
{
    const rl_mcap_channel *ch = NULL;
    size_t n = idx ? rl_mcap_indexed_channels(idx, &ch) : 0;
    for (size_t i = 0; i < n; i++) {
        const rl_mcap_schema *s = rl_mcap_indexed_schema(idx, ch[i].schema_id);
        if (!s || !rl_msg_codec_ros2_profile(rl_msg_codec_find_bytes(
                      s->encoding.data, s->encoding.len, ch[i].message_encoding.data,
                      ch[i].message_encoding.len)))
            return "";
    }
    return n ? "ros2" : "";
}

/* "LAT,LON" in degrees. */
static int parse_origin(const char *s, double *lat, double *lon)
{
    char *end;
    double v[2];
    for (int i = 0; i < 2; i++) {
        v[i] = rl_parse_f64(s, &end);
        if (end == s || !isfinite(v[i]) || *end != (i ? '\0' : ','))
            return -1;
        s = end + 1;
    }
    if (fabs(v[0]) > 90 || fabs(v[1]) > 180)
        return -1;
    *lat = v[0];
    *lon = v[1];
    return 0;
}

static int parse_args(int argc, char **argv, struct record_args *a)
{
    enum {
        O_SYN = 256, O_REPLAY, O_FAST, O_TOPIC, O_VEH, O_RATE, O_PAYLOAD, O_START, O_DUR,
        O_RUNID, O_MAP, O_OMAP, O_FRAME, O_PLANNER, O_HOME, O_DOMAIN, O_MQM, O_MQB, O_DELAY,
        O_STALL, O_MINFREE, O_COMP, O_CLEVEL, O_CHUNK, O_DROP, O_BEAT, O_REPAIR, O_PROJ, O_ORIGIN
    };
    static const struct option opts[] = {
        {"synthetic", no_argument, NULL, O_SYN},
        {"replay", required_argument, NULL, O_REPLAY},
        {"fast", no_argument, NULL, O_FAST},
        {"topic", required_argument, NULL, O_TOPIC},
        {"topics", required_argument, NULL, O_TOPIC}, /* docs/cli.md's spelling */
        {"vehicles", required_argument, NULL, O_VEH},
        {"rate", required_argument, NULL, O_RATE},
        {"payload", required_argument, NULL, O_PAYLOAD},
        {"start-after", required_argument, NULL, O_START},
        {"duration", required_argument, NULL, O_DUR},
        {"run-id", required_argument, NULL, O_RUNID},
        {"map", required_argument, NULL, O_MAP},
        {"original-map", required_argument, NULL, O_OMAP},
        {"map-frame", required_argument, NULL, O_FRAME},
        {"projection", required_argument, NULL, O_PROJ},
        {"origin", required_argument, NULL, O_ORIGIN},
        {"planner", required_argument, NULL, O_PLANNER},
        {"home", required_argument, NULL, O_HOME},
        {"root", required_argument, NULL, O_HOME}, /* docs/cli.md's spelling */
        {"domain", required_argument, NULL, O_DOMAIN},
        {"max-queued-messages", required_argument, NULL, O_MQM},
        {"max-queued-bytes", required_argument, NULL, O_MQB},
        {"write-delay-ms", required_argument, NULL, O_DELAY},
        {"stall-limit-ms", required_argument, NULL, O_STALL},
        {"min-free-bytes", required_argument, NULL, O_MINFREE},
        {"compression", required_argument, NULL, O_COMP},
        {"compression-level", required_argument, NULL, O_CLEVEL},
        {"chunk-size", required_argument, NULL, O_CHUNK},
        {"drop-outside", no_argument, NULL, O_DROP},
        {"heartbeat", no_argument, NULL, O_BEAT},
        {"repair", required_argument, NULL, O_REPAIR},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    uint64_t u;
    double d;
    while ((c = getopt_long(argc, argv, "+qh", opts, NULL)) != -1) {
        switch (c) {
        case O_SYN: a->synthetic = 1; break;
        case O_REPLAY: a->replay = optarg; break;
        case O_FAST: a->fast = 1; break;
        case O_TOPIC: /* --topic NAME or --topics A,B (both may repeat and hold a list) */
            for (char *rest = optarg, *t; (t = strsep(&rest, ",")) != NULL;) {
                if (!*t)
                    return cli_usage_error("record", "--topics: empty topic name in the list");
                if (a->topic_count == MAX_TOPIC_FILTERS)
                    return cli_usage_error("record", "at most %d topics", MAX_TOPIC_FILTERS);
                a->topics[a->topic_count++] = t;
            }
            break;
        case O_VEH:
            if (parse_u64(optarg, 1, 1000, &u) < 0)
                return cli_usage_error("record", "--vehicles: '%s' is not 1..1000", optarg);
            a->vehicles = (int)u;
            break;
        case O_RATE:
            if (parse_double(optarg, 0, 1e6, &a->rate) < 0)
                return cli_usage_error("record", "--rate: '%s' is not 0..1000000", optarg);
            break;
        case O_PAYLOAD:
            if (parse_u64(optarg, 0, 64u << 20, &u) < 0)
                return cli_usage_error("record", "--payload: '%s' is not 0..67108864", optarg);
            a->payload = (size_t)u;
            break;
        case O_START:
        case O_DUR:
            if (parse_double(optarg, 0, 1e7, &d) < 0)
                return cli_usage_error("record", "%s: '%s' is not 0..10000000 seconds",
                                       c == O_START ? "--start-after" : "--duration", optarg);
            *(c == O_START ? &a->start_after : &a->duration) = d;
            break;
        case O_RUNID: a->run.run_id = optarg; break;
        case O_MAP: a->run.map_path = optarg; break;
        case O_OMAP: a->run.original_map_path = optarg; break;
        case O_FRAME: a->run.map_frame = optarg; break;
        case O_PROJ:
            if (rl_map_projection_parse(optarg, &a->map_read.projection) < 0)
                return cli_usage_error("record", "--projection: %s", rl_error_last());
            break;
        case O_ORIGIN:
            if (parse_origin(optarg, &a->map_read.origin_lat, &a->map_read.origin_lon) < 0)
                return cli_usage_error("record", "--origin '%s': expected LAT,LON in degrees",
                                       optarg);
            break;
        case O_PLANNER: a->run.planner = optarg; break;
        case O_HOME: a->opts.home = optarg; break;
        case O_DOMAIN:
            if (parse_u64(optarg, 0, 232, &u) < 0)
                return cli_usage_error("record", "--domain: '%s' is not 0..232", optarg);
            a->opts.lab_domain = (int)u;
            break;
        case O_MQM:
        case O_MQB:
        case O_MINFREE:
        case O_CHUNK:
            if (parse_u64(optarg, 0, UINT64_MAX, &u) < 0)
                return cli_usage_error("record", "%s: '%s' is not a byte/message count",
                                       argv[optind - 1], optarg);
            if (c == O_MQM)
                a->opts.max_queued_messages = u;
            else if (c == O_MQB)
                a->opts.max_queued_bytes = u;
            else if (c == O_MINFREE)
                a->opts.minimum_free_bytes = u;
            else
                a->opts.chunk_size = u;
            break;
        case O_DELAY:
        case O_STALL:
            if (parse_u64(optarg, 0, 3600000, &u) < 0)
                return cli_usage_error("record", "%s: '%s' is not milliseconds",
                                       argv[optind - 1], optarg);
            *(c == O_DELAY ? &a->opts.write_delay_ns : &a->opts.stall_limit_ns) =
                (int64_t)u * 1000000;
            break;
        case O_COMP:
            if (rl_record_compression_from_name(optarg, &a->opts.compression) != RL_OK)
                return cli_usage_error("record", "--compression: %s", rl_error_last());
            break;
        case O_CLEVEL: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < INT_MIN || v > INT_MAX)
                return cli_usage_error("record", "--compression-level: '%s' is not a level", optarg);
            a->opts.compression_level = (int)v; /* checked against --compression below */
            break;
        }
        case O_DROP: a->opts.keep_outside = 0; break;
        case O_BEAT: a->heartbeat = 1; break;
        case O_REPAIR: a->repair = optarg; break;
        case 'q': a->quiet = 1; break;
        case 'h': usage(stdout); return -1;
        default: return cli_usage_error("record", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("record", "unexpected argument '%s'", argv[optind]);
    if (rl_record_compression_level_check(a->opts.compression, a->opts.compression_level) != RL_OK)
        return cli_usage_error("record", "--compression-level: %s", rl_error_last());
    if (a->repair && (a->synthetic || a->replay))
        return cli_usage_error("record", "--repair RUN takes no source");
    if (a->repair)
        return 0;
    if (a->synthetic == (a->replay != NULL))
        return cli_usage_error("record", "give exactly one source: --synthetic or --replay FILE");
    if (a->synthetic && a->rate == 0 && a->duration < 0)
        a->duration = 5;
    return 0;
}

int cmd_record(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return RL_EXIT_OK;
    }
    struct record_args a;
    memset(&a, 0, sizeof a);
    a.vehicles = 4;
    a.rate = 50;
    a.payload = 256;
    a.duration = -1;
    rl_record_options_default(&a.opts);
    rl_map_read_options_init(&a.map_read);
    a.map_read.quiet = true;
    a.run.map_options = &a.map_read;
    int prc = parse_args(argc, argv, &a);
    if (prc != 0)
        return prc < 0 ? RL_EXIT_OK : prc;
    if (a.repair) {
        rl_record_repair_report rep;
        if (rl_record_repair(a.repair, &rep) < 0)
            return cli_fail("record", "%s", rl_error_last());
        if (!a.quiet)
            printf("record: %s\n", rep.what);
        return RL_EXIT_OK;
    }
    if (a.synthetic && a.duration < 0)
        a.duration = 5;
    struct live_status live = {.mu = PTHREAD_MUTEX_INITIALIZER};
    if (a.heartbeat) {
        a.opts.heartbeat = print_heartbeat;
    } else if (!a.quiet && isatty(STDERR_FILENO)) {
        live.active = 1;
        live.start_after = a.start_after;
        live.duration = a.duration;
        a.opts.heartbeat = draw_live_status;
        a.opts.heartbeat_user = &live;
    }

    g_signal = g_signals = g_ending = 0;
    g_leave_len = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    int vehicle_ids[1000];
    if (a.synthetic && !a.run.vehicles) {
        for (int v = 0; v < a.vehicles; v++)
            vehicle_ids[v] = v + 1;
        a.run.vehicles = vehicle_ids;
        a.run.vehicle_count = (size_t)a.vehicles;
    }
    rl_mcap_indexed *idx = NULL;
    if (a.replay && rl_mcap_indexed_open(&idx, a.replay, 0) < 0)
        return cli_fail("record", "%s", rl_error_last());
    /* The bag's profile: synthetic messages are ros2msg; a replay keeps ros2 only when
     * every channel of the file is ros2msg/ros2idl with cdr messages. */
    if (!a.opts.bag_profile)
        a.opts.bag_profile = a.synthetic ? "ros2" : replay_profile(idx);
    rl_recorder *r = NULL;
    int rc = rl_recorder_new(&r, &a.opts);
    if (rc < 0) {
        rl_mcap_indexed_close(idx);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        return cli_fail("record", "%s", rl_error_last());
    }
    int64_t t0 = rl_mono_ns();
    rc = rl_recorder_prepare(r, &a.run);
    if (rc == RL_OK)
        rc = rl_recorder_begin(r);
    int64_t begin_wall = rl_time_now_ns();
    pthread_mutex_lock(&live.mu);
    live.begin_ns = begin_wall;
    pthread_mutex_unlock(&live.mu);
    struct timeline tl = {0};
    /* Synthetic: positions are wall-clock stamps; replay: offsets into the file. */
    tl.start_at = (a.synthetic ? begin_wall : 0) + (int64_t)(a.start_after * 1e9);
    tl.stop_at = a.duration >= 0 ? tl.start_at + (int64_t)(a.duration * 1e9) : -1;
    prepare_leave_message(rl_recorder_run_dir(r));
    if (rc == RL_OK)
        rc = a.synthetic ? produce_synthetic(r, &a, &tl) : produce_replay(r, &a, &tl, idx);
    rl_mcap_indexed_close(idx);
    char err[1024] = "";
    if (rc < 0 && rc != RL_EBUSY)
        snprintf(err, sizeof err, "%s", rl_error_last());
    g_ending = 1; /* from here a signal is told that we wait for the disk */
    if (rl_recorder_state(r) == RL_RECORD_RECORDING || rl_recorder_state(r) == RL_RECORD_ARMED) {
        int frc;
        if (g_signal)
            frc = rl_recorder_cancel(r, g_signal == SIGINT ? "SIGINT" : "SIGTERM");
        else if (err[0])
            frc = rl_recorder_cancel(r, err);
        else
            frc = rl_recorder_finish(r, NULL);
        if (frc < 0 && !err[0])
            snprintf(err, sizeof err, "%s", rl_error_last());
    }
    (void)rl_recorder_wait(r); /* the bag and the manifest are final after this */
    end_live_status(&live);
    double secs = (double)(rl_mono_ns() - t0) / 1e9;
    rl_record_status s;
    rl_recorder_status(r, &s);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", rl_recorder_run_dir(r));
    int failed = s.state == RL_RECORD_FAILED || (!dir[0]) || s.manifest_error[0];
    if (!dir[0])
        cli_fail("record", "%s", err[0] ? err : rl_error_last());
    else if (s.state == RL_RECORD_FAILED)
        cli_fail("record", "run FAILED: %s", s.reason);
    else if (err[0])
        cli_fail("record", "%s", err);
    if (dir[0] && s.manifest_error[0])
        cli_fail("record", "the final manifest.json could not be written (it says less than "
                 "this summary): %s", s.manifest_error);
    if (dir[0] && !a.quiet)
        printf("record: %s run %s: received %llu, inside %llu, outside %llu, written %llu, "
               "dropped %llu, %.1f MB in %.2f s (%.0f msg/s)%s%s\n",
               rl_record_state_name(s.state), s.run_id, (unsigned long long)s.received,
               (unsigned long long)s.inside, (unsigned long long)s.outside,
               (unsigned long long)s.written, (unsigned long long)s.dropped,
               (double)s.bytes / 1e6, secs, secs > 0 ? (double)s.received / secs : 0.0,
               s.state == RL_RECORD_COMPLETE ? "" : ": ",
               s.state == RL_RECORD_COMPLETE ? "" : s.reason);
    if (dir[0])
        printf("%s\n", dir);
    fflush(stdout);
    rl_recorder_free(r);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return failed || err[0] ? RL_EXIT_FAILURE : RL_EXIT_OK;
}
