/* The recorder node's zero-loss capacity over DDS (loopback only, a domain of its own), as
 * a lab needs it: a publisher written from Cyclone DDS alone (lab_capacity_pub) is held to
 * a fixed rate for a short window, and the rate is stepped up, per payload size, payload
 * (random bytes, which do not compress, or zeros) and bag compression, until the first step
 * that fails. A step is one run of its own (prepare, begin, START, the publisher's window,
 * STOP, finish) and passes when every sample the publisher wrote is in the bag (each
 * sequence number found once), the engine dropped nothing and the run did not fail (a
 * queue overflow fails it), the publisher held the rate (95 % of it at least) and the
 * recorder's backlog at the end was under a quarter second's worth. Each configuration's
 * failed step is run again into a plain Cyclone subscriber with no recorder (what DDS alone
 * delivers then). Prints each step, then per configuration the highest rate that passed and
 * why the next failed, and judges whether uncompressed 10 KB x 50 k/s holds. The whole
 * sweep keeps to a time budget (docs/lab.md, Recorder capacity).
 * Usage: bench_lab_capacity [--domain N] [--window S] [--sizes 100,10000]
 *        [--compression none,zstd,lz4] [--payloads random,zeros] [--rates R,...] [--dir DIR]
 *        [--no-batch] [--threads] [--budget S]  (--dir: where the bags go, default $TMPDIR
 *        or /tmp; /dev/shm takes the disk out. The publisher lets Cyclone pack the samples
 *        of each wake-up into as few packets as it can, as ddsperf pub does, so that at
 *        small sizes the recorder is measured, not one datagram per sample; --no-batch
 *        sends each sample at once, as ROS 2 nodes do. --threads: the recorder's
 *        CPU per sample by thread, and the publisher's). The domain also from
 *        $RUNLAB_BENCH_DOMAIN, default 232. */
#include "runlab/error.h"
#include "runlab/lab.h"
#include "runlab/mcap.h"
#include "runlab/time.h"
#include "bench_lab_common.h"
#include "bench_util.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef RL_CAPACITY_PUB
#define RL_CAPACITY_PUB "lab_capacity_pub"
#endif

extern char **environ;

#define TOPIC           "RunlabBenchCapacity"
#define MAX_LIST        16
#define HELD_RATE       0.95 /* the publisher's rate over its window, of the rate asked */
#define BACKLOG_SECONDS 0.25 /* of traffic still queued at the window's end: falling behind */

static const char usage[] =
    "usage: bench_lab_capacity [--domain N] [--window S] [--sizes B,...] "
    "[--compression none|zstd|lz4,...] [--payloads random|zeros,...] [--rates R,...] "
    "[--no-batch] [--threads] [--dir DIR] [--budget S]\n";

typedef struct settings {
    int domain;
    double window; /* seconds the publisher writes per step */
    double budget; /* seconds for the whole sweep */
    long sizes[MAX_LIST];
    size_t nsizes;
    rl_record_compression comps[MAX_LIST];
    size_t ncomps;
    int payload_random[2];
    size_t npayloads;
    long rates[MAX_LIST]; /* 0 entries: by size (rates_for) */
    size_t nrates;
    const char *dir;
    int batch;   /* the publisher batches each wake-up's samples (default) */
    int threads; /* print the recorder's CPU per sample by thread */
} settings;

typedef struct step {
    long rate;
    double achieved, secs, pub_cpu, rec_cpu;
    unsigned long long written, errors, in_bag, duplicates, missing, dropped;
    unsigned long long backlog_bytes, peak_queue_bytes;
    int acked, failed, ran;
    char reason[1024];
} step;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* Comma-separated positive integers into v (at most MAX_LIST); the count, or 0 when bad. */
static size_t parse_list(const char *text, long *v, long hi)
{
    size_t n = 0;
    const char *p = text;
    while (*p && n < MAX_LIST) {
        char *end = NULL;
        long x = strtol(p, &end, 10);
        if (end == p || x <= 0 || x > hi || (*end && *end != ','))
            return 0;
        v[n++] = x;
        p = *end ? end + 1 : end;
    }
    return *p ? 0 : n;
}

/* The default steps: samples/s for small payloads, bandwidth for large ones. */
static size_t rates_for(long size, long *v)
{
    static const long small[] = {50000, 100000, 200000, 300000, 400000, 600000, 800000, 1000000};
    static const long mbps[] = {50, 100, 200, 300, 400, 500, 600, 800};
    if (size <= 1000) {
        memcpy(v, small, sizeof small);
        return sizeof small / sizeof small[0];
    }
    size_t n = sizeof mbps / sizeof mbps[0];
    for (size_t i = 0; i < n; i++)
        v[i] = mbps[i] * 1000000 / size > 0 ? mbps[i] * 1000000 / size : 1;
    return n;
}

/* 0: settings filled; 1: --help answered; -1: usage error, said on stderr. */
static int parse_args(int argc, char **argv, settings *s)
{
    memset(s, 0, sizeof *s);
    s->window = 1.5;
    s->batch = 1;
    s->budget = 200;
    s->sizes[0] = 100;
    s->sizes[1] = 10000;
    s->nsizes = 2;
    s->comps[0] = RL_RECORD_COMPRESSION_NONE;
    s->comps[1] = RL_RECORD_COMPRESSION_ZSTD;
    s->comps[2] = RL_RECORD_COMPRESSION_LZ4;
    s->ncomps = 3;
    s->payload_random[0] = 1;
    s->payload_random[1] = 0;
    s->npayloads = 2;
    s->dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    if ((s->domain = bench_lab_domain("bench_lab_capacity", &argc, argv)) < 0)
        return -1;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            fputs(usage, stdout);
            return 1;
        }
        int flag = strcmp(opt, "--no-batch") == 0 || strcmp(opt, "--threads") == 0;
        if (!val && !flag) {
            fprintf(stderr, "bench_lab_capacity: %s: a value is missing\n%s", opt, usage);
            return -1;
        }
        i++;
        char *end = NULL;
        if (strcmp(opt, "--window") == 0 || strcmp(opt, "--budget") == 0) {
            double x = strtod(val, &end);
            if (!*val || *end || !(x >= 0.2 && x <= 3600)) {
                fprintf(stderr, "bench_lab_capacity: %s: '%s' is not seconds (0.2..3600)\n", opt,
                        val);
                return -1;
            }
            *(opt[2] == 'w' ? &s->window : &s->budget) = x;
        } else if (strcmp(opt, "--sizes") == 0) {
            if (!(s->nsizes = parse_list(val, s->sizes, 16 << 20))) {
                fprintf(stderr,
                        "bench_lab_capacity: --sizes: '%s' is not a list of sizes in "
                        "bytes (1..16777216, comma-separated, at most 16)\n",
                        val);
                return -1;
            }
        } else if (strcmp(opt, "--rates") == 0) {
            if (!(s->nrates = parse_list(val, s->rates, 100000000))) {
                fprintf(stderr,
                        "bench_lab_capacity: --rates: '%s' is not a list of samples/s "
                        "(1..100000000, comma-separated, at most 16)\n",
                        val);
                return -1;
            }
        } else if (strcmp(opt, "--compression") == 0 || strcmp(opt, "--payloads") == 0) {
            int comp = opt[2] == 'c';
            size_t n = 0;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", val);
            for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save)) {
                if (n == (comp ? (size_t)MAX_LIST : 2)) {
                    fprintf(stderr, "bench_lab_capacity: %s: more than %d entries\n", opt,
                            comp ? MAX_LIST : 2);
                    return -1;
                }
                int ok = 1;
                if (comp)
                    ok = rl_record_compression_from_name(tok, &s->comps[n]) == RL_OK;
                else
                    ok = (s->payload_random[n] = strcmp(tok, "random") == 0) ||
                         strcmp(tok, "zeros") == 0;
                if (!ok) {
                    fprintf(stderr, "bench_lab_capacity: %s: '%s' is not %s\n", opt, tok,
                            comp ? "none, zstd or lz4" : "random or zeros");
                    return -1;
                }
                n++;
            }
            if (!n) {
                fprintf(stderr, "bench_lab_capacity: %s: empty\n", opt);
                return -1;
            }
            *(comp ? &s->ncomps : &s->npayloads) = n;
        } else if (flag) {
            if (opt[2] == 'n')
                s->batch = 0;
            else
                s->threads = 1;
            i--; /* takes no value */
        } else if (strcmp(opt, "--dir") == 0) {
            s->dir = val;
        } else {
            fprintf(stderr, "bench_lab_capacity: unknown argument '%s'\n%s", opt, usage);
            return -1;
        }
    }
    return 0;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Finds sequence numbers 0..expected-1 in the bag's messages on TOPIC (XCDR little-endian:
 * the encapsulation header, then the uint64 seq): how many distinct ones, how many twice. */
static int count_in_bag(const char *path, unsigned long long expected, step *st)
{
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    rl_mcap_reader *r = NULL;
    if (rl_mcap_reader_open(&r, path, &ro) < 0) {
        snprintf(st->reason, sizeof st->reason, "reading the bag: %s", rl_error_last());
        return -1;
    }
    uint8_t *seen = calloc(expected / 8 + 1, 1);
    if (!seen) {
        rl_mcap_reader_close(r);
        return -1;
    }
    int channel = -1, rc = 0;
    rl_mcap_record rec;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
        if (rec.opcode == RL_MCAP_OP_CHANNEL && rec.u.channel.topic.len == strlen(TOPIC) &&
            memcmp(rec.u.channel.topic.data, TOPIC, strlen(TOPIC)) == 0)
            channel = rec.u.channel.id;
        if (rec.opcode != RL_MCAP_OP_MESSAGE || rec.u.message.channel_id != channel)
            continue;
        const uint8_t *b = rec.u.message.data.data;
        if (rec.u.message.data.len < 12 || b[0] != 0 || (b[1] & 1) != 1)
            continue; /* not little-endian XCDR: not ours */
        uint64_t seq = le64(b + 4);
        if (seq >= expected)
            continue;
        if (seen[seq / 8] & (1u << (seq % 8)))
            st->duplicates++;
        else
            st->in_bag++;
        seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
    }
    free(seen);
    rl_mcap_reader_close(r);
    if (rc < 0) {
        snprintf(st->reason, sizeof st->reason, "reading the bag: %s", rl_error_last());
        return -1;
    }
    return 0;
}

/* lab_capacity_pub with `args` (NULL-terminated), its stdout to out_path. */
static pid_t spawn_tool(char *const *args, const char *out_path)
{
    char *argv[8] = {(char *)RL_CAPACITY_PUB};
    for (int i = 0; args[i] && i < 6; i++)
        argv[i + 1] = args[i];
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, RL_CAPACITY_PUB, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0 ? pid : -1;
}

/* The publisher at `rate` for the window. */
static pid_t spawn_publisher(const settings *s, long size, long rate, int random,
                             const char *out_path)
{
    char dom[16], sz[24], rate_arg[24], secs[32];
    snprintf(dom, sizeof dom, "%d", s->domain);
    snprintf(sz, sizeof sz, "%ld", size);
    snprintf(rate_arg, sizeof rate_arg, "%ld", rate);
    snprintf(secs, sizeof secs, "%.3f", s->window);
    char *args[] = {dom, sz, rate_arg, secs, random ? "random" : "zeros", s->batch ? "batch" : NULL,
                    NULL};
    return spawn_tool(args, out_path);
}

/* Waits for `pid` until `deadline` (bench_now_s), then kills it; its wait status. */
static int reap(pid_t pid, double deadline)
{
    int status = 0;
    pid_t done;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 && bench_now_s() < deadline)
        sleep_ms(10);
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    return status;
}

typedef struct baseline {
    double achieved, pub_us, sub_us; /* CPU µs per sample: publisher, subscriber (its life) */
    unsigned long long written, received, gaps;
    int ok;
} baseline;

/* The same publisher at the same rate into a plain Cyclone subscriber that takes and
 * discards (lab_capacity_pub --sub), no recorder running: what DDS alone delivers on this
 * machine at this moment. */
static void run_baseline(const settings *s, const char *tmp, long size, int random, long rate,
                         baseline *b)
{
    memset(b, 0, sizeof *b);
    char sub_out[4200], pub_out[4200], dom[16], secs[32];
    snprintf(sub_out, sizeof sub_out, "%s/sub.txt", tmp);
    snprintf(pub_out, sizeof pub_out, "%s/pub.txt", tmp);
    snprintf(dom, sizeof dom, "%d", s->domain);
    snprintf(secs, sizeof secs, "%.3f", s->window + 90);
    char *sub_args[] = {"--sub", dom, secs, NULL};
    pid_t sub = spawn_tool(sub_args, sub_out);
    pid_t pub = sub > 0 ? spawn_publisher(s, size, rate, random, pub_out) : -1;
    double deadline = bench_now_s() + s->window + 90;
    if (pub > 0)
        reap(pub, deadline);
    if (sub > 0)
        reap(sub, deadline);
    unsigned long long errors = 0;
    double secs_pub = 0, cpu = 0;
    int acked = 0;
    FILE *f = fopen(pub_out, "r");
    int ok = f && fscanf(f, "written %llu errors %llu seconds %lf acked %d cpu %lf", &b->written,
                         &errors, &secs_pub, &acked, &cpu) == 5;
    if (f)
        fclose(f);
    f = fopen(sub_out, "r");
    double sub_cpu = 0;
    ok = ok && f &&
         fscanf(f, "received %llu gaps %llu cpu %lf", &b->received, &b->gaps, &sub_cpu) == 3;
    if (f)
        fclose(f);
    b->achieved = secs_pub > 0 ? (double)(b->written + errors) / secs_pub : 0;
    b->pub_us = b->written ? cpu * 1e6 / (double)b->written : 0;
    b->sub_us = b->received ? sub_cpu * 1e6 / (double)b->received : 0;
    b->ok = ok;
}

static double cpu_seconds(void)
{
    return bench_cpu_s();
}

/* One step: a run of its own with the publisher at `rate` for the window; fills `st`. */
static void run_step(const settings *s, rl_lab_recorder *node, rl_lab_client *cl, const char *tmp,
                     long size, int random, long rate, step *st)
{
    static unsigned runs;
    memset(st, 0, sizeof *st);
    st->rate = rate;
    char run_id[64];
    snprintf(run_id, sizeof run_id, "capacity-%u", ++runs);
    rl_record_run run = {.run_id = run_id};
    rl_lab_reply rep1, rep2;
    memset(&rep1, 0, sizeof rep1);
    memset(&rep2, 0, sizeof rep2);
    if (rl_lab_client_prepare(cl, &run, 30000000000ll, &rep1) < 0 || !rep1.ok ||
        rl_lab_client_begin(cl, run_id, 30000000000ll, &rep2) < 0 || !rep2.ok) {
        snprintf(st->reason, sizeof st->reason, "prepare/begin: %s",
                 !rep1.ok ? (rep1.message[0] ? rep1.message : rl_error_last())
                          : (rep2.message[0] ? rep2.message : rl_error_last()));
        st->failed = 1;
        return;
    }
    rl_lab_client_trigger(cl, RL_LAB_START, rl_time_now_ns());
    char out[4200];
    snprintf(out, sizeof out, "%s/pub.txt", tmp);
    thread_cpu ta, tb;
    if (s->threads)
        read_thread_cpu(getpid(), &ta);
    double c0 = cpu_seconds(), t0 = bench_now_s();
    pid_t pub = spawn_publisher(s, size, rate, random, out);
    int status = 0;
    rl_record_status rs;
    if (pub > 0) {
        /* Sample the recorder's queue while the publisher runs (it also waits for the
           match first and for the acknowledgements last: the peak is what counts). */
        double deadline = t0 + s->window + 90;
        pid_t done = 0;
        while ((done = waitpid(pub, &status, WNOHANG)) == 0 && bench_now_s() < deadline) {
            rl_lab_recorder_status(node, &rs);
            if (rs.queued_bytes > st->peak_queue_bytes)
                st->peak_queue_bytes = rs.queued_bytes;
            sleep_ms(10);
        }
        if (done == 0) {
            kill(pub, SIGKILL);
            waitpid(pub, &status, 0);
            snprintf(st->reason, sizeof st->reason, "publisher did not finish in %.0f s",
                     s->window + 90);
        }
    } else {
        snprintf(st->reason, sizeof st->reason, "could not start %s", RL_CAPACITY_PUB);
    }
    double cpu = cpu_seconds() - c0;
    if (s->threads)
        read_thread_cpu(getpid(), &tb);
    rl_lab_recorder_status(node, &rs);
    st->backlog_bytes = rs.queued_bytes;
    FILE *f = fopen(out, "r");
    int parsed = f && fscanf(f, "written %llu errors %llu seconds %lf acked %d cpu %lf",
                             &st->written, &st->errors, &st->secs, &st->acked, &st->pub_cpu) == 5;
    if (f)
        fclose(f);
    rl_lab_client_trigger(cl, RL_LAB_STOP, rl_time_now_ns());
    rl_lab_client_finish(cl, run_id, rl_time_now_ns(), NULL, 120000000000ll, &rep2);
    rl_lab_recorder_status(node, &rs);
    st->dropped = rs.dropped;
    if (rs.state == RL_RECORD_FAILED) {
        st->failed = 1;
        snprintf(st->reason, sizeof st->reason, "run FAILED: %s", rs.reason);
    }
    if (!parsed) {
        st->failed = 1;
        if (!st->reason[0])
            snprintf(st->reason, sizeof st->reason, "publisher said nothing (exit status %d)",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    } else {
        st->ran = 1;
        st->achieved = st->secs > 0 ? (double)(st->written + st->errors) / st->secs : 0;
        /* The recorder's share of a core over the publisher's window (this process is the
           recorder, and only polls the status besides; its CPU is counted over the
           publisher's whole life, whose start and end cost little). */
        st->rec_cpu = st->secs > 0 ? cpu / st->secs : 0;
        st->pub_cpu = st->secs > 0 ? st->pub_cpu / st->secs : 0;
        char bag[4400];
        snprintf(bag, sizeof bag, "%s/bag/%s.mcap", rep1.run_dir, run_id);
        if (count_in_bag(bag, st->written + st->errors, st) < 0)
            st->failed = 1;
        st->missing = st->written + st->errors - st->in_bag;
        if (s->threads && st->written) {
            print_thread_cpu("recorder", &ta, &tb, (double)st->written);
            printf("  publisher   us/sample: total %.2f\n",
                   st->pub_cpu * st->secs * 1e6 / (double)st->written);
        }
    }
    char cmd[4600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", rep1.run_dir); /* the next bag's room */
    if (rep1.run_dir[0] && !strchr(rep1.run_dir, '\''))
        (void)system(cmd);
}

/* Whether a step passed; `why` gets the first reason it did not. */
static int step_passed(const step *st, long size, char *why, size_t cap)
{
    double rate_bytes = (double)st->rate * (double)(size + 16);
    if (st->failed && !st->ran)
        snprintf(why, cap, "%s", st->reason);
    else if (st->missing || st->dropped || st->duplicates || st->failed)
        snprintf(why, cap,
                 "LOSS: %llu of %llu published not in the bag (%llu write errors), "
                 "%llu dropped by the recorder%s%s",
                 st->missing, st->written + st->errors, st->errors, st->dropped,
                 st->reason[0] ? "; " : "", st->reason);
    else if (!st->acked)
        snprintf(why, cap, "the publisher's samples were not all acknowledged in 30 s");
    else if (st->achieved < HELD_RATE * (double)st->rate)
        snprintf(why, cap, "the publisher reached %.0f/s only (%.0f %% of a core)%s", st->achieved,
                 100 * st->pub_cpu,
                 (double)st->backlog_bytes >
                         BACKLOG_SECONDS * (double)st->achieved * (double)(size + 16)
                     ? "; the recorder was falling behind too"
                     : "");
    else if ((double)st->backlog_bytes > BACKLOG_SECONDS * rate_bytes)
        snprintf(why, cap, "falling behind: %.1f MB still queued at the window's end",
                 (double)st->backlog_bytes / 1e6);
    else
        return 1;
    return 0;
}

static const char *payload_name(int random)
{
    return random ? "random" : "zeros";
}

typedef struct outcome {
    long size, capacity; /* samples/s that passed last, 0: none */
    int random, stopped; /* stopped: a step failed (else the list ran out, or the budget) */
    rl_record_compression comp;
    char why[1400];
    long failed_rate;
    baseline base; /* the failed rate into a plain subscriber */
} outcome;

/* Steps one configuration's rates up to the first that fails. */
static void sweep(const settings *s, rl_lab_recorder *node, rl_lab_client *cl, const char *tmp,
                  long size, int random, rl_record_compression comp, double t_end, outcome *o)
{
    memset(o, 0, sizeof *o);
    o->size = size;
    o->random = random;
    o->comp = comp;
    long rates[MAX_LIST];
    size_t n = s->nrates ? s->nrates : rates_for(size, rates);
    if (s->nrates)
        memcpy(rates, s->rates, n * sizeof rates[0]);
    for (size_t i = 0; i < n; i++) {
        if (bench_now_s() > t_end) {
            snprintf(o->why, sizeof o->why, "time budget spent before %ld/s", rates[i]);
            return;
        }
        step st;
        run_step(s, node, cl, tmp, size, random, rates[i], &st);
        char why[1400];
        int ok = step_passed(&st, size, why, sizeof why);
        double load[3] = {0};
        (void)getloadavg(load, 3);
        printf("capacity %6ld B %-6s %-4s %8ld/s (%6.1f MB/s): %s | published %.0f/s "
               "(cpu %3.0f %%), recorder cpu %3.0f %%, queue peak %.1f MB, end %.1f MB "
               "| load %.2f\n",
               size, payload_name(random), rl_record_compression_name(comp), rates[i],
               (double)rates[i] * (double)size / 1e6, ok ? "zero loss" : why, st.achieved,
               100 * st.pub_cpu, 100 * st.rec_cpu, (double)st.peak_queue_bytes / 1e6,
               (double)st.backlog_bytes / 1e6, load[0]);
        fflush(stdout);
        if (!ok) {
            o->stopped = 1;
            o->failed_rate = rates[i];
            snprintf(o->why, sizeof o->why, "%s", why);
            return;
        }
        o->capacity = rates[i];
    }
    snprintf(o->why, sizeof o->why, "every rate stepped held (the last %ld/s)", rates[n - 1]);
}

static rl_lab_recorder *start_recorder(const settings *s, const char *home,
                                       rl_record_compression comp)
{
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.domain = s->domain;
    o.home = home;
    o.peer_wait_ns = 0;
    const char *patterns[] = {TOPIC};
    o.patterns = patterns;
    o.pattern_count = 1;
    /* The type's schema as its IDL says (octets: Cyclone's type information says char). */
    const rl_lab_schema schema = {
        "runlab_bench::CapacitySample",
        "module runlab_bench { @final struct CapacitySample { uint64 seq; "
        "sequence<octet> payload; }; };"};
    o.schemas = &schema;
    o.schema_count = 1;
    rl_record_options eng;
    rl_record_options_default(&eng); /* the engine's defaults but for the compression */
    eng.compression = comp;
    o.engine = &eng;
    rl_lab_recorder *node = NULL;
    if (rl_lab_recorder_new(&node, &o) < 0) {
        fprintf(stderr, "bench_lab_capacity: recorder: %s\n", rl_error_last());
        return NULL;
    }
    return node;
}

int main(int argc, char **argv)
{
    settings s;
    int parsed = parse_args(argc, argv, &s);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2; /* 1: --help was answered */
    if (access(RL_CAPACITY_PUB, X_OK) != 0 && strchr(RL_CAPACITY_PUB, '/')) {
        printf("capacity: skipped (%s not built)\n", RL_CAPACITY_PUB);
        return 0;
    }
    setenv("CYCLONEDDS_URI", bench_lab_loopback_config, 1);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/runlab-bench-capacity-XXXXXX", s.dir);
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "bench_lab_capacity: cannot make a folder in %s\n", s.dir);
        return 1;
    }
    rl_record_options defaults;
    rl_record_options_default(&defaults);
    double load[3] = {0};
    (void)getloadavg(load, 3);
    printf("capacity: load average %.2f %.2f %.2f on %ld cores; DDS domain %d (loopback); "
           "bags in %s; window %.1f s per step; recorder queue limits %llu messages, %llu MiB; "
           "budget %.0f s; the publisher %s\n",
           load[0], load[1], load[2], sysconf(_SC_NPROCESSORS_ONLN), s.domain, s.dir, s.window,
           (unsigned long long)defaults.max_queued_messages,
           (unsigned long long)(defaults.max_queued_bytes >> 20), s.budget,
           s.batch ? "batches each wake-up's samples" : "sends each sample at once (--no-batch)");
    fflush(stdout);
    rl_lab_client *cl = NULL;
    if (rl_lab_client_new(&cl, s.domain) < 0) {
        fprintf(stderr, "bench_lab_capacity: %s\n", rl_error_last());
        rmdir(tmp); /* still empty */
        return 1;
    }
    static outcome results[MAX_LIST * MAX_LIST * 2]; /* about 0.8 MB: not on the stack */
    size_t nres = 0;
    double t_start = bench_now_s(), t_end = t_start + s.budget;
    int rc = 0;
    for (size_t c = 0; c < s.ncomps && rc == 0; c++) {
        rl_lab_recorder *node = start_recorder(&s, tmp, s.comps[c]);
        if (!node) {
            rc = 1;
            break;
        }
        size_t first = nres;
        for (size_t z = 0; z < s.nsizes; z++)
            for (size_t p = 0; p < s.npayloads; p++)
                sweep(&s, node, cl, tmp, s.sizes[z], s.payload_random[p], s.comps[c], t_end,
                      &results[nres++]);
        rl_lab_recorder_free(node);
        /* Each failed step again with no recorder at all (its readers would still take
           DDS's deliveries while it is IDLE): is the bound the recorder's? */
        for (size_t i = first; i < nres; i++) {
            outcome *o = &results[i];
            if (!o->stopped || bench_now_s() > t_end)
                continue;
            run_baseline(&s, tmp, o->size, o->random, o->failed_rate, &o->base);
            double load1[3] = {0};
            (void)getloadavg(load1, 3);
            if (o->base.ok)
                printf("capacity %6ld B %-6s %8ld/s into a plain subscriber (no recorder): "
                       "published %.0f/s, received %llu of %llu (gaps %llu); CPU us/sample: "
                       "publisher %.2f, subscriber %.2f | load %.2f\n",
                       o->size, payload_name(o->random), o->failed_rate, o->base.achieved,
                       o->base.received, o->base.written, o->base.gaps, o->base.pub_us,
                       o->base.sub_us, load1[0]);
            else
                printf("capacity %6ld B %-6s %8ld/s into a plain subscriber: no result\n", o->size,
                       payload_name(o->random), o->failed_rate);
            fflush(stdout);
        }
    }
    rl_lab_client_free(cl);
    (void)getloadavg(load, 3);
    printf("capacity: zero-loss capacity per configuration (%.0f s, load average now %.2f):\n",
           bench_now_s() - t_start, load[0]);
    for (size_t i = 0; i < nres; i++) {
        const outcome *o = &results[i];
        char base[200] = "";
        if (o->base.ok)
            snprintf(base, sizeof base, " (DDS alone, no recorder: %.0f/s, %s)", o->base.achieved,
                     o->base.received == o->base.written && !o->base.gaps ? "no loss" : "LOSS");
        printf("capacity %6ld B %-6s %-4s: %8ld/s = %6.1f MB/s with zero loss; next: %s%s\n",
               o->size, payload_name(o->random), rl_record_compression_name(o->comp), o->capacity,
               (double)o->capacity * (double)o->size / 1e6, o->why, base);
    }
    /* Issue 36's target: uncompressed 10 KB x 50 k/s (500 MB/s) with zero loss. */
    for (size_t i = 0; i < nres; i++) {
        const outcome *o = &results[i];
        if (o->size == 10000 && o->random && o->comp == RL_RECORD_COMPRESSION_NONE)
            printf("capacity target: uncompressed 10000 B random x 50000/s with zero loss: %s "
                   "(held up to %ld/s%s%s)\n",
                   o->capacity >= 50000 ? "met" : "MISSED", o->capacity,
                   o->capacity >= 50000 ? "" : "; next: ", o->capacity >= 50000 ? "" : o->why);
    }
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    (void)system(cmd);
    return rc;
}
