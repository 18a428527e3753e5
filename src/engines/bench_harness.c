/* The isolated benchmark harness: every run is a child process (fork for C planners,
 * fork+exec for executable ones) that reports through a pipe in the line protocol of
 * docs/bench.md. The parent enforces max_time (kill after a grace) and max_mem (RSS
 * polling), samples progress from shared memory, takes time/CPU/peak RSS from wait4,
 * and journals each result (append + fsync) so a killed harness can resume. */
#include "engines/bench_internal.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/log.h"
#include "runlab/number.h"
#include "runlab/provenance.h"
#include "runlab/time.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
    LINE_MAX_BYTES = 65536,
    MEM_POLL_NS = 5000000,  /* RSS is checked every 5 ms */
    SETUP_ALLOWANCE_S = 30, /* a run that never starts solving is killed after this */
    EXIT_ALLOWANCE_S = 5    /* after "end", time for an in-process run to exit */
};

typedef struct slot {
    bool busy;
    bool is_exec;
    pid_t pid;
    int fd;
    int pidfd; /* readable when the run exits (-1 when the kernel lacks pidfd_open) */
    bool eof;
    size_t planner, run;
    double limit;
    int64_t fork_ns, begin_ns, deadline_ns, next_sample_ns, next_mem_ns;
    long baseline_kb, peak_kb, startup_peak_kb;
    rl_bench_shm *shm;
    char *buf;
    size_t len, cap, lineno;
    rl_bench_trees *trees; /* every process of the run: limits, kill, cleanup */
    size_t index;          /* this slot's number in trees */
    bool killed;           /* SIGKILL sent: the status is decided by killed_for */
    rl_bench_status killed_for;
    int console_in;       /* read end of the run's stdout/stderr pipe (-1: none) */
    int console_out;      /* the planner's console file, appended (-1: none) */
    size_t console_kept;  /* bytes of this run's output written to the file */
    uint64_t console_cut; /* bytes beyond the limit, counted and dropped */
    char *reason;         /* the harness's reason (a kill, a protocol violation) */
    char *run_error;      /* what the run reported on an "error" line */
    bool got_status, got_time, got_end, got_start;
    rl_bench_status status;
    double solve_time;
    rl_bench_prop *props;
    size_t n_props, cap_props;
    rl_bench_prop *renamed; /* reported name (value) -> column name (name) */
    size_t n_renamed, cap_renamed;
    double *samples;
    size_t n_samples, cap_samples;
} slot;

/* ---- small helpers ------------------------------------------------------------------ */

static void emitf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emitf(int fd, const char *fmt, ...)
{
    char buf[LINE_MAX_BYTES];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        rl_bench_write_all(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void set_reason(slot *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(slot *s, const char *fmt, ...)
{
    if (s->reason)
        return; /* the first cause wins */
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    s->reason = strdup(buf);
}

/* Kills every process of the run (its tree, whatever it detached); the first cause wins. */
static void kill_slot(slot *s, rl_bench_status why)
{
    if (!s->killed)
        s->killed_for = why;
    s->killed = true;
    rl_bench_tree_kill(s->trees, s->index);
}

/* ---- the child ---------------------------------------------------------------------- */

static void child_redirect(int console_fd)
{
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    int out = console_fd >= 0 ? console_fd : null_fd;
    if (null_fd >= 0)
        dup2(null_fd, STDIN_FILENO);
    if (out >= 0) {
        dup2(out, STDOUT_FILENO);
        dup2(out, STDERR_FILENO);
    }
}

static void child_reset_signals(void)
{
    /* a run must not outlive a harness killed with -9: --resume will redo it */
    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* default actions, so that a crash shows as the signal it is even when the harness
       (or a sanitizer runtime) installed handlers */
    static const int sigs[] = {SIGPIPE, SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        signal(sigs[i], SIG_DFL);
}

static void child_inproc(rl_bench *b, rl_bench_planner *pl, size_t pi, size_t ri, double limit,
                         int wfd, rl_bench_shm *shm, int console_fd)
{
    setpgid(0, 0);
    child_reset_signals();
    child_redirect(console_fd);
    rl_bench_run run = {0};
    run.limit_ns = (int64_t)(limit * 1e9);
    run.seed = rl_bench_mix_seed(b->seed, pi, ri);
    run.n_progress = pl->n_progress;
    run.shm = shm;
    run.start_ns = rl_mono_ns();
    if (pl->setup && pl->setup(pl->self, b->problem) < 0) {
        emitf(wfd, "error\tsetup failed: %s\n", rl_error_last());
        fflush(NULL);
        _exit(0);
    }
    if (b->events.on_pre_run)
        b->events.on_pre_run(b->events.ud, pl, b->problem);
    /* The start's own stamp goes with it (CLOCK_MONOTONIC is one clock for every
       process): the parent may read the line only after the run has ended, and a time
       taken then would measure the parent's delay, not the run. */
    long rss_kb = rl_bench_proc_rss_kb(getpid());
    run.start_ns = rl_mono_ns();
    emitf(wfd, "begin\t%ld\t%lld\n", rss_kb, (long long)run.start_ns);
    rl_bench_status st = pl->solve(pl->self, b->problem, &run);
    double t = rl_bench_run_elapsed(&run);
    if (pl->run_properties)
        pl->run_properties(pl->self, b->problem, &run);
    if (b->events.on_post_run)
        b->events.on_post_run(b->events.ud, pl, b->problem, &run);
    if (pl->clear)
        pl->clear(pl->self);
    emitf(wfd, "time\t%.9g\n", t);
    for (size_t i = 0; i < run.n_props; i++)
        emitf(wfd, "property\t%s\t%s\t%s\n", run.props[i].name,
              rl_bench_type_name(run.props[i].type), run.props[i].value);
    emitf(wfd, "status\t%s\nend\n", rl_bench_status_word(st));
    fflush(NULL);
    _exit(0);
}

static void child_exec(rl_bench *b, rl_bench_planner *pl, size_t pi, size_t ri, double limit,
                       const rl_bench_request *req, int wfd, int console_fd)
{
    setpgid(0, 0);
    child_reset_signals();
    child_redirect(console_fd);
    if (dup2(wfd, STDOUT_FILENO) < 0)
        _exit(127);
    char buf[64];
    snprintf(buf, sizeof buf, "%" PRIu64, rl_bench_mix_seed(b->seed, pi, ri));
    setenv("RUNLAB_SEED", buf, 1);
    snprintf(buf, sizeof buf, "%.9g", limit);
    setenv("RUNLAB_MAX_TIME", buf, 1);
    snprintf(buf, sizeof buf, "%.9g", req->max_mem);
    setenv("RUNLAB_MAX_MEM", buf, 1);
    snprintf(buf, sizeof buf, "%zu", ri);
    setenv("RUNLAB_RUN", buf, 1);
    setenv("RUNLAB_SIMPLIFY", req->simplify ? "1" : "0", 1);
    setenv("RUNLAB_PROBLEM", req->problem_spec ? req->problem_spec : "", 1);
    if (req->problem_file)
        setenv("RUNLAB_PROBLEM_FILE", req->problem_file, 1);
    else
        unsetenv("RUNLAB_PROBLEM_FILE");
    setenv("RUNLAB_PROTOCOL", "1", 1);
    /* the planner's settings: in the environment and as the first line of stdin (a pipe
       filled before exec; the JSON is at most 60 KiB, less than a pipe holds) */
    const char *settings = pl->exec_settings_json ? pl->exec_settings_json : "{}";
    setenv("RUNLAB_SETTINGS", settings, 1);
    int in[2];
    if (pipe(in) == 0) {
        if (rl_bench_write_all(in[1], settings, strlen(settings)) < 0 ||
            rl_bench_write_all(in[1], "\n", 1) < 0) {
            /* a planner that reads stdin then sees less; RUNLAB_SETTINGS still has it */
        }
        close(in[1]);
        dup2(in[0], STDIN_FILENO);
        close(in[0]);
    }
    execvp(pl->exec_argv[0], pl->exec_argv);
    emitf(STDOUT_FILENO, "error\tcannot run '%s': %s\n", pl->exec_argv[0], strerror(errno));
    _exit(127);
}

/* ---- the parent's side of the protocol -------------------------------------------- */

static int progress_index(const rl_bench_planner *pl, const char *name)
{
    for (size_t i = 0; i < pl->n_progress; i++)
        if (strcmp(pl->progress_names[i], name) == 0)
            return (int)i;
    return -1;
}

/* Records "protocol: line N: <what> '<arg>'" and stops the run. Returns 0. */
static int protocol_error(slot *s, const char *what, const char *arg)
{
    set_reason(s, "protocol: line %zu: %s '%.200s'", s->lineno, what, arg);
    kill_slot(s, RL_RUN_ERROR);
    return 0;
}

int64_t rl_bench_deadline_ns(bool is_exec, int64_t fork_ns, int64_t begin_ns, double limit_s,
                             double grace_s)
{
    int64_t lg = (int64_t)((limit_s + grace_s) * 1e9);
    int64_t with_setup = (int64_t)((limit_s + grace_s + SETUP_ALLOWANCE_S) * 1e9);
    if (!begin_ns) /* not started: an executable's time runs from fork, a child's may set up */
        return fork_ns + (is_exec ? lg : with_setup);
    if (!is_exec)
        return begin_ns + lg;
    /* an executable's "start" restarts its clock, but no later than the setup allowance */
    int64_t by = begin_ns + lg, cap = fork_ns + with_setup;
    return by < cap ? by : cap;
}

bool rl_bench_time_up(int64_t now_ns, int64_t deadline_ns)
{
    return now_ns >= deadline_ns;
}

bool rl_bench_memory_over(long rss_kb, long baseline_kb, double max_mem_mb)
{
    return (double)(rss_kb - baseline_kb) > max_mem_mb * 1024.0;
}

static int handle_line(slot *s, rl_bench_planner *pl, char *line, double grace)
{
    s->lineno++;
    if (!*line || line[0] == '#')
        return 0;
    char *f[5] = {0};
    int n = 0;
    for (char *p = line; n < 5;) {
        f[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    if (strcmp(f[0], "start") == 0 && n == 1 && s->is_exec && !s->got_start) {
        /* An executable planner's start of solving: time, progress and memory count from
           here, so an interpreter's start-up is not the algorithm's cost. The time limit
           runs from here too, within the setup allowance from fork. */
        s->got_start = true;
        s->begin_ns = rl_mono_ns();
        long kb = rl_bench_tree_rss_kb(s->trees, s->index);
        s->baseline_kb = kb > 0 ? kb : 0;
        /* the peak so far was start-up's; the run's own peak starts again here */
        long before = rl_bench_tree_peak_kb(s->trees, s->index);
        s->startup_peak_kb = before > s->peak_kb ? before : s->peak_kb;
        rl_bench_tree_reset_peak(s->trees, s->index);
        s->peak_kb = 0;
        s->deadline_ns = rl_bench_deadline_ns(true, s->fork_ns, s->begin_ns, s->limit, grace);
        s->next_sample_ns = 0;
        s->n_samples = 0; /* samples before the start measured start-up */
    } else if (strcmp(f[0], "begin") == 0 && n == 3 && !s->is_exec) {
        /* the child's stamp, kept within fork..now should it be garbled */
        int64_t now = rl_mono_ns(), at = (int64_t)strtoll(f[2], NULL, 10);
        s->begin_ns = at >= s->fork_ns && at <= now ? at : now;
        s->baseline_kb = strtol(f[1], NULL, 10);
        s->deadline_ns = rl_bench_deadline_ns(false, s->fork_ns, s->begin_ns, s->limit, grace);
    } else if (strcmp(f[0], "progress") == 0 && n == 3) {
        int i = progress_index(pl, f[1]);
        char *end;
        double v = strtod(f[2], &end);
        if (i < 0)
            return protocol_error(s, "undeclared progress property", f[1]);
        if (end == f[2] || *end)
            return protocol_error(s, "progress value is not a number:", f[2]);
        rl_bench_run tmp = {.n_progress = pl->n_progress, .shm = s->shm};
        rl_bench_run_progress(&tmp, (size_t)i, v);
    } else if (strcmp(f[0], "property") == 0 && n == 4) {
        rl_bench_type type;
        /* a name OMPL's parser cannot take as a column is mapped by the documented rule;
           the original is kept in the results' list of renamed properties */
        char column[128];
        if (rl_bench_check_name(f[1], "property") < 0 || rl_bench_type_parse(f[2], &type) < 0 ||
            rl_bench_check_value(f[3], f[1]) < 0)
            return protocol_error(s, "bad property:", rl_error_last());
        rl_bench_column_name_map(f[1], column, sizeof column);
        if (strcmp(column, f[1]) != 0)
            rl_bench_props_set(&s->renamed, &s->n_renamed, &s->cap_renamed, column, RL_BENCH_TEXT,
                               f[1]);
        rl_bench_props_set(&s->props, &s->n_props, &s->cap_props, column, type, f[3]);
    } else if (strcmp(f[0], "time") == 0 && n == 2) {
        char *end;
        s->solve_time = strtod(f[1], &end);
        if (end == f[1] || *end || !(s->solve_time >= 0))
            return protocol_error(s, "time is not a number of seconds:", f[1]);
        s->got_time = true;
    } else if (strcmp(f[0], "status") == 0 && n == 2) {
        if (rl_bench_status_from_word(f[1], &s->status) < 0)
            return protocol_error(s, "unknown status", f[1]);
        s->got_status = true;
    } else if (strcmp(f[0], "error") == 0 && n >= 2) {
        if (!s->run_error)
            s->run_error = strdup(f[1]); /* recorded; the limits hold until the run exits */
    } else if (strcmp(f[0], "end") == 0 && n == 1 && !s->is_exec) {
        /* the harness's own child is done: it exits now, the limits still hold */
        s->got_end = true;
        int64_t exit_by = rl_mono_ns() + (int64_t)EXIT_ALLOWANCE_S * 1000000000;
        if (exit_by > s->deadline_ns)
            s->deadline_ns = exit_by;
    } else {
        protocol_error(s, "unknown keyword or wrong field count:", f[0]);
    }
    return 0;
}

static void read_slot(slot *s, rl_bench_planner *pl, double grace)
{
    for (;;) {
        if (s->len + 4096 + 1 > s->cap) {
            size_t nc = s->cap ? s->cap * 2 : 8192;
            char *nb = realloc(s->buf, nc);
            if (!nb)
                return;
            s->buf = nb;
            s->cap = nc;
        }
        ssize_t r = read(s->fd, s->buf + s->len, s->cap - s->len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0 || errno != EAGAIN)
                s->eof = true;
            break;
        }
        s->len += (size_t)r;
        s->buf[s->len] = '\0';
        char *start = s->buf, *nl;
        while ((nl = memchr(start, '\n', s->len - (size_t)(start - s->buf))) != NULL) {
            *nl = '\0';
            if ((size_t)(nl - start) > LINE_MAX_BYTES && !s->killed) {
                s->lineno++; /* one rule, however the line arrived */
                protocol_error(s, "line longer than 64 KiB", "");
                start = nl + 1;
                continue;
            }
            if (memchr(start, '\0', (size_t)(nl - start)) && !s->killed) {
                s->lineno++; /* a NUL would silently cut a name: refused */
                protocol_error(s, "NUL byte in line", "");
                start = nl + 1;
                continue;
            }
            if (!s->killed)
                handle_line(s, pl, start, grace);
            start = nl + 1;
        }
        s->len -= (size_t)(start - s->buf);
        memmove(s->buf, start, s->len);
        if (s->len > LINE_MAX_BYTES) {
            s->lineno++; /* the line being read, not the last complete one */
            protocol_error(s, "line longer than 64 KiB", "");
            s->len = 0;
        }
    }
}

static void sample(slot *s, const rl_bench_planner *pl, int64_t now)
{
    size_t np = pl->n_progress;
    uint64_t vals[RL_BENCH_MAX_PROGRESS], seq1, seq2, pub = 0;
    int tries = 0;
    do {
        if (++tries > 1000)
            return; /* a writer died inside its update: skip this sample */
        seq1 = atomic_load_explicit(&s->shm->seq, memory_order_acquire);
        if (seq1 & 1)
            continue;
        pub = atomic_load_explicit(&s->shm->published, memory_order_relaxed);
        for (size_t i = 0; i < np; i++)
            vals[i] = atomic_load_explicit(&s->shm->bits[i], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        seq2 = atomic_load_explicit(&s->shm->seq, memory_order_relaxed);
    } while ((seq1 & 1) || seq1 != seq2);
    if (!pub)
        return; /* nothing published yet: OMPL's parser would see an empty sample anyway */
    if (s->n_samples == s->cap_samples) {
        size_t nc = s->cap_samples ? s->cap_samples * 2 : 64;
        double *ns = realloc(s->samples, nc * (np + 1) * sizeof *ns);
        if (!ns)
            return;
        s->samples = ns;
        s->cap_samples = nc;
    }
    double *row = s->samples + s->n_samples * (np + 1);
    row[0] = (double)(now - s->begin_ns) / 1e9;
    for (size_t i = 0; i < np; i++) {
        if (pub & (1ULL << i))
            memcpy(&row[i + 1], &vals[i], sizeof(double));
        else
            row[i + 1] = NAN;
    }
    s->n_samples++;
}

/* ---- console capture ------------------------------------------------------------------ */

/* Moves what the run wrote to its stdout/stderr into the planner's console file, up to
 * the request's console_limit per run; the rest is read (so the run never blocks on a
 * full pipe) and counted. */
static void drain_console(slot *s, size_t limit)
{
    if (s->console_in < 0)
        return;
    char buf[65536];
    for (;;) {
        ssize_t n = read(s->console_in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0 || errno != EAGAIN) { /* every writer is gone */
                close(s->console_in);
                s->console_in = -1;
            }
            return;
        }
        size_t keep = s->console_kept < limit ? limit - s->console_kept : 0;
        if (keep > (size_t)n)
            keep = (size_t)n;
        if (keep && rl_bench_write_all(s->console_out, buf, keep) == 0)
            s->console_kept += keep;
        s->console_cut += (uint64_t)((size_t)n - keep);
    }
}

static void close_console(slot *s, size_t limit)
{
    drain_console(s, limit);
    if (s->console_out >= 0) {
        char note[256];
        int len = s->console_cut
                      ? snprintf(note, sizeof note,
                                 "\n=== runlab: %" PRIu64 " more bytes of this run's output were "
                                 "cut (console_limit %zu bytes per run) ===\n",
                                 s->console_cut, limit)
                      : 0;
        if (len > 0)
            rl_bench_write_all(s->console_out, note, (size_t)len);
        close(s->console_out);
    }
    if (s->console_in >= 0)
        close(s->console_in);
    s->console_in = s->console_out = -1;
}

/* ---- launching and finishing runs ----------------------------------------------------- */

/* A shard's run (cluster nodes differ; runs in parallel on one node share it) gets one CPU
 * of those the harness may use, the slot's own, so that its time is one core's on every
 * node. In the forked child, before the run; a failure leaves the run unpinned. */
static void pin_to_slot_cpu(size_t slot_index)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return;
    int count = CPU_COUNT(&allowed);
    if (count <= 1)
        return;
    size_t want = slot_index % (size_t)count, seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed) && seen++ == want) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            (void)sched_setaffinity(0, sizeof one, &one);
            return;
        }
}

static int launch(rl_bench *b, const rl_bench_request *req, slot *s, size_t pi, size_t ri,
                  double limit)
{
    rl_bench_planner *pl = b->planners[pi];
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return rl_error_set_errno(RL_EIO, errno, "pipe");
    /* The run writes its stdout/stderr into a pipe (console_fd, its end) that the
       harness drains into the planner's console file, marked with the run it is from. */
    int console_fd = -1, console_in = -1, console_out = -1;
    if (req->save_console_output && req->console_dir) {
        char path[4096], safe[RL_NAME_MAX + 1];
        rl_path_sanitize_name(pl->name, safe);
        snprintf(path, sizeof path, "%s/%s.console", req->console_dir, safe);
        int cp[2];
        console_out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (console_out >= 0 && pipe2(cp, O_CLOEXEC) == 0) {
            console_in = cp[0];
            console_fd = cp[1];
            char mark[512];
            int n =
                snprintf(mark, sizeof mark,
                         "=== runlab: planner '%s', run %zu (index %zu), seed %" PRIu64 " ===\n",
                         pl->name, ri + 1, ri, rl_bench_mix_seed(b->seed, pi, ri));
            if (n > 0)
                rl_bench_write_all(console_out, mark,
                                   (size_t)n < sizeof mark ? (size_t)n : sizeof mark - 1);
        } else if (console_out >= 0) {
            close(console_out);
            console_out = -1;
        }
    }
    memset(s->shm, 0, sizeof *s->shm);
    atomic_flag_clear(&s->shm->wlock);
    fflush(NULL); /* buffered output must not be written twice */
    /* Stamped before the fork: the child may run (and stamp its own start) before the
       parent gets the CPU back, and wall time must cover everything the child measures. */
    const int64_t fork_ns = rl_mono_ns();
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        close(fds[0]);
        close(fds[1]);
        if (console_fd >= 0)
            close(console_fd);
        if (console_in >= 0)
            close(console_in);
        if (console_out >= 0)
            close(console_out);
        return rl_error_set_errno(RL_EIO, err, "fork");
    }
    if (pid == 0) {
        close(fds[0]);
        rl_bench_tree_enter(s->trees, s->index);
        if (req->shard_count)
            pin_to_slot_cpu(s->index);
        if (pl->exec_argv)
            child_exec(b, pl, pi, ri, limit, req, fds[1], console_fd);
        else
            child_inproc(b, pl, pi, ri, limit, fds[1], s->shm, console_fd);
        _exit(127);
    }
    setpgid(pid, pid); /* also here, so a kill right after fork reaches the group */
    close(fds[1]);
    if (console_fd >= 0)
        close(console_fd);
    if (console_in >= 0)
        fcntl(console_in, F_SETFL, fcntl(console_in, F_GETFL) | O_NONBLOCK);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    rl_bench_shm *shm = s->shm;
    char *buf = s->buf;
    size_t cap = s->cap, index = s->index;
    rl_bench_trees *trees = s->trees;
    memset(s, 0, sizeof *s);
    s->shm = shm;
    s->buf = buf;
    s->cap = cap;
    s->trees = trees;
    s->index = index;
    s->console_in = console_in;
    s->console_out = console_out;
    rl_bench_tree_begin(trees, index, pid);
    s->busy = true;
    s->is_exec = pl->exec_argv != NULL;
    s->pid = pid;
    s->fd = fds[0];
    s->planner = pi;
    s->run = ri;
    s->limit = limit;
    s->fork_ns = fork_ns;
    s->killed_for = RL_RUN_UNKNOWN;
#ifdef SYS_pidfd_open
    s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
    s->pidfd = -1;
#endif
    if (s->is_exec)
        s->begin_ns = s->fork_ns;
    s->deadline_ns = rl_bench_deadline_ns(s->is_exec, s->fork_ns, 0, limit, req->grace);
    s->next_mem_ns = s->fork_ns + MEM_POLL_NS;
    return RL_OK;
}

static void set_prop(slot *s, const char *name, rl_bench_type type, double v)
{
    char buf[64];
    if (type == RL_BENCH_REAL)
        rl_bench_fmt_real(v, buf, sizeof buf);
    else
        snprintf(buf, sizeof buf, "%lld", (long long)v);
    rl_bench_props_set(&s->props, &s->n_props, &s->cap_props, name, type, buf);
}

static int finish(rl_bench *b, const rl_bench_request *req, slot *s, int wstatus,
                  const struct rusage *ru, int journal_fd)
{
    rl_bench_planner *pl = b->planners[s->planner];
    read_slot(s, pl, req->grace);
    /* after the last lines are read: an executable's "start" read only now is still no
       later than the end it is measured to */
    int64_t now = rl_mono_ns();
    close(s->fd);
    if (s->pidfd >= 0)
        close(s->pidfd);
    close_console(s, req->console_limit);
    rl_bench_status st;
    int exit_code = -1, sig = 0;
    if (WIFEXITED(wstatus))
        exit_code = WEXITSTATUS(wstatus);
    else if (WIFSIGNALED(wstatus))
        sig = WTERMSIG(wstatus);
    /* A shell (`command:` as a string that needs one) reports a program killed by signal
       N as exit code 128 + N: that is the program's crash, not the shell's error. */
    bool via_shell = s->is_exec && pl->exec_argv[0] && pl->exec_argv[1] &&
                     strcmp(pl->exec_argv[0], "/bin/sh") == 0 &&
                     strcmp(pl->exec_argv[1], "-c") == 0;
    if (!sig && via_shell && exit_code > 128 && exit_code < 128 + NSIG)
        sig = exit_code - 128;
    if (s->killed) {
        st = s->killed_for;
        if (st == RL_RUN_TIMEOUT)
            set_reason(s, "still running %.3g s after max_time; killed", req->grace);
    } else if (sig) {
        st = sig == SIGABRT ? RL_RUN_ABORT : RL_RUN_CRASH;
        set_reason(s, "killed by signal %d (%s)%s", sig, strsignal(sig),
                   WIFSIGNALED(wstatus) ? "" : ", reported by its shell as exit code 128+N");
    } else if (s->run_error) {
        st = RL_RUN_ERROR; /* the run said "error" */
        set_reason(s, "%s", s->run_error);
    } else if (!s->got_status) {
        st = RL_RUN_ERROR;
        set_reason(s, "exited with code %d before reporting a result", exit_code);
    } else {
        st = s->status;
    }
    if (s->run_error && s->reason && strcmp(s->reason, s->run_error) != 0) {
        char *both = NULL; /* e.g. a timeout after an "error" line: keep both */
        if (asprintf(&both, "%s (the run had reported the error: %s)", s->reason, s->run_error) >=
            0) {
            free(s->reason);
            s->reason = both;
        }
    }
    free(s->run_error);
    s->run_error = NULL;
    double t = s->got_time && !s->killed && !sig
                   ? s->solve_time
                   : (s->begin_ns ? (double)(now - s->begin_ns) / 1e9 : 0.0);
    long tree_peak = rl_bench_tree_peak_kb(s->trees, s->index);
    if (tree_peak > s->peak_kb)
        s->peak_kb = tree_peak;
    /* the first process's lifetime peak (ru_maxrss) may be start-up's: after a start
       mark only what was sampled since counts, and the whole peak goes beside it */
    long peak = s->got_start || ru->ru_maxrss < s->peak_kb ? s->peak_kb : ru->ru_maxrss;
    double mem = (double)(peak - s->baseline_kb) / 1024.0;
    if (mem < 0)
        mem = 0;
    if (s->got_start) {
        long whole = peak;
        if (s->startup_peak_kb > whole)
            whole = s->startup_peak_kb;
        if (ru->ru_maxrss > whole)
            whole = ru->ru_maxrss;
        set_prop(s, "memory with startup", RL_BENCH_REAL, (double)whole / 1024.0);
    }
    double cpu = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
                 (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
    set_prop(s, "time", RL_BENCH_REAL, t);
    set_prop(s, "memory", RL_BENCH_REAL, mem);
    /* OMPL's Benchmark always writes it, and Planner Arena ranks by time plus it: a
       planner that does not simplify spent 0 s on it, not an unknown (NULL) time. */
    bool has_simplification = false;
    for (size_t i = 0; i < s->n_props; i++)
        has_simplification |= strcmp(s->props[i].name, "simplification time") == 0;
    if (!has_simplification)
        set_prop(s, "simplification time", RL_BENCH_REAL, 0.0);
    set_prop(s, "cpu time", RL_BENCH_REAL, cpu);
    set_prop(s, "wall time", RL_BENCH_REAL, (double)(now - s->fork_ns) / 1e9);
    set_prop(s, "status", RL_BENCH_ENUM, (double)st);
    set_prop(s, "solved", RL_BENCH_BOOLEAN, st == RL_RUN_EXACT ? 1.0 : 0.0);
    set_prop(s, "exit code", RL_BENCH_INTEGER, (double)exit_code);
    set_prop(s, "exit signal", RL_BENCH_INTEGER, (double)sig);
    rl_bench_run_data r = {st, s->reason, s->props, s->n_props, s->samples, s->n_samples};
    s->reason = NULL;
    s->props = NULL;
    s->samples = NULL;
    s->busy = false;
    size_t pi = s->planner, ri = s->run;
    for (size_t i = 0; i < s->n_renamed; i++) {
        size_t cap = b->results.n_renamed;
        rl_bench_props_set(&b->results.renamed, &b->results.n_renamed, &cap, s->renamed[i].name,
                           RL_BENCH_TEXT, s->renamed[i].value);
    }
    rl_bench_props_free(s->renamed, s->n_renamed);
    s->renamed = NULL;
    s->n_renamed = s->cap_renamed = 0;
    rl_bench_limit_property_names(b, &r); /* before the journal, so resume reads what was kept */
    int rc = journal_fd >= 0 ? rl_bench_journal_append(
                                   journal_fd, pi, ri, &r, pl->n_progress,
                                   b->prior_duration + (double)(rl_mono_ns() - b->session_ns) / 1e9)
                             : RL_OK;
    if (rc < 0) {
        rl_bench_run_data_free(&r);
        return rc;
    }
    return rl_bench_record_result(b, pi, ri, &r);
}

/* ---- the loop --------------------------------------------------------------------------- */

static double planner_time_spent(const rl_bench_planner_data *pd)
{
    double sum = 0;
    for (size_t r = 0; r < pd->n_runs; r++)
        for (size_t i = 0; i < pd->runs[r].n_props; i++)
            if (strcmp(pd->runs[r].props[i].name, "time") == 0)
                sum += rl_parse_f64(pd->runs[r].props[i].value, NULL);
    return sum;
}

static size_t count_done(const rl_bench *b)
{
    size_t n = 0;
    for (size_t p = 0; p < b->results.n_planners; p++)
        for (size_t r = 0; r < b->results.planners[p].n_runs; r++)
            n += b->done[p][r];
    return n;
}

unsigned rl_bench_cell_shard(size_t planner, size_t run, size_t n_planners, unsigned shard_count)
{
    if (shard_count <= 1)
        return 1;
    return 1 + (unsigned)((run * n_planners + planner) % shard_count);
}

/* Whether cell (p, r) is to run in this session: not done, and the request's shard's. */
static bool cell_due(const rl_bench *b, const rl_bench_request *req, size_t p, size_t r)
{
    if (r < b->done_cap[p] && b->done[p][r])
        return false;
    return req->shard_count <= 1 ||
           rl_bench_cell_shard(p, r, b->n_planners, req->shard_count) == req->shard_index;
}

/* Picks the next run to start: (planner, run, limit). False when none is due now. */
static bool next_task(rl_bench *b, const rl_bench_request *req, const slot *slots, size_t n_slots,
                      size_t *cursor_p, size_t *cursor_r, size_t *pi, size_t *ri, double *limit)
{
    if (req->run_count > 0 && req->round_robin) { /* run by run, planner by planner */
        for (; *cursor_r < req->run_count; (*cursor_r)++, *cursor_p = 0) {
            for (; *cursor_p < b->n_planners; (*cursor_p)++) {
                size_t p = *cursor_p, r = *cursor_r;
                if (!cell_due(b, req, p, r))
                    continue;
                *pi = p;
                *ri = r;
                *limit = req->max_time;
                (*cursor_p)++;
                return true;
            }
        }
        return false;
    }
    if (req->run_count > 0) {
        for (; *cursor_p < b->n_planners; (*cursor_p)++, *cursor_r = 0) {
            for (; *cursor_r < req->run_count; (*cursor_r)++) {
                size_t p = *cursor_p, r = *cursor_r;
                if (!cell_due(b, req, p, r))
                    continue;
                *pi = p;
                *ri = r;
                *limit = req->max_time;
                (*cursor_r)++;
                return true;
            }
        }
        return false;
    }
    /* run_count 0: one run at a time per planner, each limited by the time left */
    for (size_t i = 0; i < n_slots; i++)
        if (slots[i].busy)
            return false;
    for (; *cursor_p < b->n_planners; (*cursor_p)++) {
        rl_bench_planner_data *pd = &b->results.planners[*cursor_p];
        double left = req->max_time - planner_time_spent(pd);
        if (left > 1e-6) {
            *pi = *cursor_p;
            *ri = pd->n_runs;
            *limit = left;
            return true;
        }
    }
    return false;
}

size_t rl_bench_shard_cells(const rl_bench *b, const rl_bench_request *req)
{
    size_t n = 0;
    for (size_t r = 0; r < req->run_count; r++)
        for (size_t p = 0; p < b->n_planners; p++)
            n += req->shard_count <= 1 ||
                 rl_bench_cell_shard(p, r, b->n_planners, req->shard_count) == req->shard_index;
    return n;
}

static void update_progress(rl_bench *b, const rl_bench_request *req, const char *planner)
{
    size_t done = count_done(b);
    size_t total = rl_bench_shard_cells(b, req);
    pthread_mutex_lock(&b->lock);
    b->progress.running = true;
    b->progress.active_run = done;
    b->progress.progress_percentage = total ? 100.0 * (double)done / (double)total : 0.0;
    if (planner)
        snprintf(b->progress.active_planner, sizeof b->progress.active_planner, "%s", planner);
    pthread_mutex_unlock(&b->lock);
}

static int check_request(const rl_bench_request *req)
{
    if (!(req->max_time > 0) || req->max_time > 1e7)
        return rl_error_set(RL_EINVAL, "max_time %g: must be > 0 seconds", req->max_time);
    if (!(req->max_mem > 0))
        return rl_error_set(RL_EINVAL, "max_mem %g: must be > 0 MB", req->max_mem);
    if (!(req->time_between_updates > 0))
        return rl_error_set(RL_EINVAL, "time_between_updates %g: must be > 0",
                            req->time_between_updates);
    if (req->jobs < 1 || req->jobs > 256)
        return rl_error_set(RL_EINVAL, "jobs %u: must be 1..256", req->jobs);
    if (req->shard_count > 0 && (req->shard_index < 1 || req->shard_index > req->shard_count))
        return rl_error_set(RL_EINVAL, "shard %u/%u: K must be 1..N", req->shard_index,
                            req->shard_count);
    if (req->shard_count > 1 && req->run_count == 0)
        return rl_error_set(RL_EINVAL, "shards need a fixed number of runs (runs: 0 spends "
                            "max_time per planner, which cannot be split)");
    if (!(req->grace >= 0))
        return rl_error_set(RL_EINVAL, "grace %g: must be >= 0", req->grace);
    return RL_OK;
}

int rl_bench_execute(rl_bench *b, const rl_bench_request *req)
{
    int rc = check_request(req);
    if (rc < 0)
        return rc;
    if ((rc = rl_bench_results_init(b, req)) < 0)
        return rc;
    int journal_fd = -1;
    b->prior_duration = 0;
    if (req->journal_path) {
        rl_bench_journal_runs done;
        if ((rc = rl_bench_journal_open(b, req->journal_path, &done, &journal_fd)) < 0)
            return rc;
        b->prior_duration = done.prior_duration;
        for (size_t i = 0; i < done.n && rc == RL_OK; i++)
            rc = rl_bench_record_result(b, done.runs[i].planner, done.runs[i].run,
                                        &done.runs[i].data);
        rl_bench_journal_runs_free(&done);
        if (rc < 0) {
            close(journal_fd);
            return rc;
        }
    }
    size_t n_slots = req->run_count == 0 ? 1 : req->jobs;
    slot *slots = calloc(n_slots, sizeof *slots);
    if (!slots) {
        if (journal_fd >= 0)
            close(journal_fd);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n_slots && rc == RL_OK; i++) {
        slots[i].shm = mmap(NULL, sizeof(rl_bench_shm), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (slots[i].shm == MAP_FAILED) {
            slots[i].shm = NULL;
            rc = rl_error_set_errno(RL_EIO, errno, "mmap");
        }
    }
    rl_bench_trees *trees = NULL;
    if (rc == RL_OK)
        rc = rl_bench_trees_new(&trees, n_slots);
    if (rc == RL_OK) {
        free(b->results.process_tree);
        b->results.process_tree = strdup(rl_bench_trees_describe(trees));
    }
    for (size_t i = 0; i < n_slots; i++) {
        slots[i].trees = trees;
        slots[i].index = i;
    }
    int64_t t0 = rl_mono_ns();
    b->session_ns = t0;
    size_t cursor_p = 0, cursor_r = 0, last_switch = (size_t)-1;
    size_t total = rl_bench_shard_cells(b, req);
    update_progress(b, req, NULL);
    for (;;) {
        if (rc < 0)
            break;
        /* start what can start */
        for (size_t i = 0; i < n_slots && rc == RL_OK; i++) {
            if (slots[i].busy)
                continue;
            size_t pi, ri;
            double limit;
            if (!next_task(b, req, slots, n_slots, &cursor_p, &cursor_r, &pi, &ri, &limit))
                break;
            if (pi != last_switch) {
                last_switch = pi;
                if (b->events.on_planner_switch)
                    b->events.on_planner_switch(b->events.ud, b->planners[pi]);
                update_progress(b, req, b->planners[pi]->name);
            }
            rc = launch(b, req, &slots[i], pi, ri, limit);
        }
        bool any = false;
        for (size_t i = 0; i < n_slots; i++)
            any |= slots[i].busy;
        if (!any || rc < 0)
            break;
        /* wait for output, an exit or the next timer */
        struct pollfd pfd[768]; /* two pipes and a pidfd per slot */
        nfds_t np = 0;
        int64_t now = rl_mono_ns(), wake = now + 50000000;
        for (size_t i = 0; i < n_slots; i++) {
            slot *s = &slots[i];
            if (!s->busy)
                continue;
            if (!s->eof)
                pfd[np++] = (struct pollfd){.fd = s->fd, .events = POLLIN};
            if (s->console_in >= 0)
                pfd[np++] = (struct pollfd){.fd = s->console_in, .events = POLLIN};
            if (s->pidfd >= 0)
                pfd[np++] = (struct pollfd){.fd = s->pidfd, .events = POLLIN};
            if (s->deadline_ns < wake)
                wake = s->deadline_ns;
            if (s->next_mem_ns < wake)
                wake = s->next_mem_ns;
            if (s->begin_ns && s->next_sample_ns && s->next_sample_ns < wake)
                wake = s->next_sample_ns;
            if (s->eof && s->pidfd < 0 && now + 1000000 < wake)
                wake = now + 1000000; /* pipe closed: the exit is imminent */
        }
        int timeout_ms = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;
        if (poll(pfd, np, timeout_ms) < 0 && errno != EINTR) {
            rc = rl_error_set_errno(RL_EIO, errno, "poll");
            break;
        }
        now = rl_mono_ns();
        for (size_t i = 0; i < n_slots && rc == RL_OK; i++) {
            slot *s = &slots[i];
            if (!s->busy)
                continue;
            rl_bench_planner *pl = b->planners[s->planner];
            if (!s->eof)
                read_slot(s, pl, req->grace);
            drain_console(s, req->console_limit);
            if (s->begin_ns && !s->next_sample_ns)
                s->next_sample_ns = s->begin_ns + (int64_t)(req->time_between_updates * 1e9);
            if (s->begin_ns && pl->n_progress && s->next_sample_ns && now >= s->next_sample_ns &&
                !s->killed && !s->got_end) {
                sample(s, pl, now);
                while (s->next_sample_ns <= now)
                    s->next_sample_ns += (int64_t)(req->time_between_updates * 1e9);
            }
            /* Both limits hold until the run's last process is gone, whatever it printed. */
            if (now >= s->next_mem_ns && !s->killed) {
                long kb = rl_bench_tree_rss_kb(s->trees, s->index);
                if (kb > s->peak_kb)
                    s->peak_kb = kb;
                long base = s->begin_ns ? s->baseline_kb : kb;
                if (kb >= 0 && rl_bench_memory_over(kb, base, req->max_mem)) {
                    set_reason(s, "resident memory %.1f MB above max_mem %.6g MB; killed",
                               (double)(kb - base) / 1024.0, req->max_mem);
                    kill_slot(s, RL_RUN_OUT_OF_MEMORY);
                }
                s->next_mem_ns = now + MEM_POLL_NS;
            }
            if (rl_bench_time_up(now, s->deadline_ns) && !s->killed)
                kill_slot(s, RL_RUN_TIMEOUT);
            int wst;
            struct rusage ru;
            pid_t w = wait4(s->pid, &wst, WNOHANG, &ru);
            if (w == s->pid) {
                rl_bench_tree_end(s->trees, s->index); /* nothing it started outlives it */
                const char *name = pl->name;
                size_t ri = s->run;
                rc = finish(b, req, s, wst, &ru, journal_fd);
                update_progress(b, req, NULL);
                if (rc == RL_OK && req->display_progress && b->events.on_run_done) {
                    const rl_bench_run_data *rd = &b->results.planners[s->planner].runs[ri];
                    b->events.on_run_done(b->events.ud, name, ri, rd->status, count_done(b), total);
                }
            }
        }
        rl_bench_trees_reap(trees); /* orphans of finished runs that came to us */
    }
    /* on a harness error, stop what still runs */
    for (size_t i = 0; i < n_slots; i++) {
        if (slots[i].busy) {
            kill_slot(&slots[i], RL_RUN_ERROR);
            waitpid(slots[i].pid, NULL, 0);
            rl_bench_tree_end(trees, i);
            close_console(&slots[i], req->console_limit);
            close(slots[i].fd);
            if (slots[i].pidfd >= 0)
                close(slots[i].pidfd);
            rl_bench_props_free(slots[i].props, slots[i].n_props);
            free(slots[i].samples);
            free(slots[i].reason);
            free(slots[i].run_error);
            rl_bench_props_free(slots[i].renamed, slots[i].n_renamed);
        }
        if (slots[i].shm)
            munmap(slots[i].shm, sizeof(rl_bench_shm));
        free(slots[i].buf);
    }
    free(slots);
    rl_bench_trees_free(trees);
    if (journal_fd >= 0)
        close(journal_fd);
    b->results.total_duration = b->prior_duration + (double)(rl_mono_ns() - t0) / 1e9;
    if (rc == RL_OK && req->shard_count > 1)
        rl_bench_results_compact(b); /* a shard's results: its runs only, in order */
    pthread_mutex_lock(&b->lock);
    b->progress.running = false;
    pthread_mutex_unlock(&b->lock);
    return rc;
}
