/* The benchmark directory, which the bench engine owns: rl_bench_run_spec builds a
 * spec's benchmark, makes (or reopens, to resume) OUT/<experiment>_<stamp> with
 * spec.json, problem.json, the lock, journal.tsv and console/, runs it and writes the
 * OMPL log, results.db/.csv/.json and manifest.json. The report above it is the caller's. */
#include "engines/bench_adaptive.h"
#include "engines/bench_internal.h"
#include "engines/bench_spec.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/provenance.h"
#include "runlab/time.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rl_bench_session {
    char dir[PATH_MAX];
    int lock_fd; /* -1: not locked */
    bool finished_already;
    rl_bench *bench;
    void *problem;
    const rl_bench_builtins *builtins;
};

/* Takes DIR/.lock and writes the holder into it; when another harness holds it, fails
 * naming that holder. A POSIX record lock (fcntl), not flock: the kernel drops it when this
 * process ends however it ends, and the run processes forked from the harness do not
 * inherit it, so a harness killed with -9 frees its directory at once even while its last
 * run is still being torn down (an flock is shared with forked children until they exit). */
static int lock_dir(const char *dir)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%.4000s/.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return rl_error_set_errno(RL_EIO, errno, "%s", path);
    struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fcntl(fd, F_SETLK, &whole) < 0) {
        char holder[256] = "";
        ssize_t n = pread(fd, holder, sizeof holder - 1, 0);
        holder[n > 0 ? n : 0] = '\0';
        holder[strcspn(holder, "\n")] = '\0';
        close(fd);
        return rl_error_set(RL_EBUSY, "%s is in use by another runlab bench (%s); wait for it "
                            "to end or stop it first",
                            dir, holder[0] ? holder : "holder unknown");
    }
    char host[256] = "?", iso[RL_TIME_ISO_LEN], text[512];
    gethostname(host, sizeof host - 1);
    rl_time_format_iso(rl_time_now_ns(), iso, sizeof iso);
    int n = snprintf(text, sizeof text, "pid %d on %s since %s\n", (int)getpid(), host, iso);
    if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)n, 0) != n) {
        /* the lock holds without its note */
    }
    return fd;
}

/* The outputs of a finished benchmark: the OMPL log (named from host and start), a
 * database written whole (a resumed benchmark rewrites it), CSV, JSON, and last the
 * manifest, whose presence says the engine's part is done. */
static int write_outputs(const char *dir, const rl_bench_experiment *e, json_object *spec_json,
                         json_object *adaptive, json_object *extra, int64_t started,
                         char *log_name, size_t log_cap)
{
    char path[PATH_MAX];
    int rc = rl_bench_default_log_name(e, log_name, log_cap);
    if (rc == RL_OK)
        rc = rl_path_join(path, sizeof path, dir, log_name);
    if (rc == RL_OK)
        rc = rl_bench_write_log(e, path);
    if (rc == RL_OK)
        rc = rl_path_join(path, sizeof path, dir, "results.db");
    if (rc == RL_OK) {
        unlink(path); /* a resumed benchmark rewrites its database whole */
        rc = rl_bench_write_db(e, path);
    }
    if (rc == RL_OK)
        rc = rl_path_join(path, sizeof path, dir, "results.csv");
    if (rc == RL_OK)
        rc = rl_bench_write_csv(e, path);
    if (rc == RL_OK)
        rc = rl_path_join(path, sizeof path, dir, "results.json");
    if (rc == RL_OK)
        rc = rl_bench_write_json(e, path);
    if (rc < 0)
        return rc;
    rl_provenance prov;
    rl_provenance_collect(&prov);
    json_object *m = json_object_new_object();
    char iso[RL_TIME_ISO_LEN];
    json_object_object_add(m, "tool", json_object_new_string("runlab bench"));
    json_object_object_add(m, "provenance", rl_provenance_to_json(&prov));
    rl_time_format_iso(started, iso, sizeof iso);
    json_object_object_add(m, "started", json_object_new_string(iso));
    rl_time_format_iso(rl_time_now_ns(), iso, sizeof iso);
    json_object_object_add(m, "finished", json_object_new_string(iso));
    json_object_object_add(m, "seed", json_object_new_int64((int64_t)e->seed));
    json_object_object_add(m, "total_duration_s", json_object_new_double(e->total_duration));
    json_object_object_add(m, "spec", json_object_get(spec_json));
    json_object *files = json_object_new_object();
    json_object_object_add(files, "ompl_log", json_object_new_string(log_name));
    json_object_object_add(files, "database", json_object_new_string("results.db"));
    json_object_object_add(files, "csv", json_object_new_string("results.csv"));
    json_object_object_add(files, "json", json_object_new_string("results.json"));
    json_object_object_add(files, "journal", json_object_new_string("journal.tsv"));
    json_object_object_add(files, "console", json_object_new_string("console/"));
    json_object_object_add(m, "files", files);
    json_object *counts = json_object_new_object();
    for (size_t p = 0; p < e->n_planners; p++) {
        json_object *c = json_object_new_object();
        for (size_t r = 0; r < e->planners[p].n_runs; r++) {
            const char *st = rl_bench_status_name(e->planners[p].runs[r].status);
            json_object *n;
            int64_t have = json_object_object_get_ex(c, st, &n) ? json_object_get_int64(n) : 0;
            json_object_object_add(c, st, json_object_new_int64(have + 1));
        }
        json_object_object_add(counts, e->planners[p].name, c);
    }
    json_object_object_add(m, "status_counts", counts);
    /* property names programs reported, as they reported them, and the column each became */
    json_object *renamed = json_object_new_object();
    for (size_t i = 0; i < e->n_renamed; i++)
        json_object_object_add(renamed, e->renamed[i].value,
                               json_object_new_string(e->renamed[i].name));
    json_object_object_add(m, "renamed_properties", renamed);
    /* how runs' processes were followed: cgroup v1, cgroup v2 or /proc, and why */
    if (e->process_tree)
        json_object_object_add(m, "process_tree", json_object_new_string(e->process_tree));
    /* an adaptive benchmark: why it stopped and the decision at every look */
    if (adaptive)
        json_object_object_add(m, "adaptive", json_object_get(adaptive));
    /* a shard's place in its benchmark, or a merged benchmark's shards */
    if (extra) {
        json_object_object_foreach(extra, key, val)
            json_object_object_add(m, key, json_object_get(val));
    }
    rc = rl_path_join(path, sizeof path, dir, "manifest.json");
    if (rc == RL_OK)
        rc = rl_json_write_file(path, m);
    json_object_put(m);
    return rc;
}

/* Writes DIR/problem.json (format runlab-problem/1, docs/bench.md) and puts its absolute
 * path in out: a planner may change its directory. */
static int write_problem_file(const rl_bench_builtins *bi, const void *problem, const char *dir,
                              char *out, size_t cap)
{
    char *json = bi->problem_json(problem), path[PATH_MAX + 32], abs_dir[PATH_MAX];
    if (!json)
        return rl_error_last_code();
    snprintf(path, sizeof path, "%.4000s/problem.json", dir);
    int rc = rl_fs_write_atomic(path, json, strlen(json), 0644);
    free(json);
    if (rc < 0)
        return rc;
    if (!realpath(dir, abs_dir))
        return rl_error_set_errno(RL_EIO, errno, "%s", dir);
    if ((size_t)snprintf(out, cap, "%s/problem.json", abs_dir) >= cap)
        return rl_error_set(RL_EINVAL, "%s: path too long", abs_dir);
    return RL_OK;
}

/* Whether DIR (a shard's directory that exists) holds this spec's shard K/N: then it is
 * resumed, and *started_ns gets its first start. RL_EEXIST naming the difference when not. */
static int same_shard(const char *dir, const rl_bench_spec *spec, unsigned k, unsigned n,
                      int64_t *started_ns)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%.4000s/spec.json", dir);
    json_object *saved = NULL, *v = NULL, *sh = NULL;
    if (rl_json_read_file(path, (size_t)16 << 20, &saved) < 0)
        return rl_error_set(RL_EEXIST, "%s exists and is not a benchmark shard's directory "
                            "(%s); choose another --out-dir", dir, rl_error_last());
    int rc = RL_OK;
    json_object *k_obj = NULL, *n_obj = NULL;
    if (!json_object_object_get_ex(saved, "spec", &v) || !json_object_equal(v, spec->sp.root))
        rc = rl_error_set(RL_EEXIST, "%s holds a shard of another spec (its spec.json differs "
                          "from %s); choose another --out-dir", dir, spec->src.path);
    else if (!json_object_object_get_ex(saved, "shard", &sh) ||
             !json_object_object_get_ex(sh, "index", &k_obj) ||
             !json_object_object_get_ex(sh, "count", &n_obj) ||
             json_object_get_int64(k_obj) != k || json_object_get_int64(n_obj) != n)
        rc = rl_error_set(RL_EEXIST, "%s holds another shard than %u/%u", dir, k, n);
    if (rc == RL_OK && json_object_object_get_ex(saved, "started_ns", &v))
        *started_ns = json_object_get_int64(v);
    json_object_put(saved);
    return rc;
}

/* Makes ROOT/<experiment>_<stamp> (a suffix when taken) and writes spec.json into it:
 * the spec as run, for --resume and for the manifest. A shard's directory is
 * ROOT/<experiment>_shard-K-of-N; when it exists with this spec's shard, *resumed is set
 * and *started gets its first start (nothing is written). */
static int make_dir(const rl_bench_spec *spec, const char *root_dir, int64_t *started,
                    bool force_adaptive, unsigned shard_k, unsigned shard_n, bool *resumed,
                    char *dir, size_t cap)
{
    char stamp[RL_TIME_DIRSTAMP_LEN], name[RL_NAME_MAX + 1], safe[RL_NAME_MAX + 1];
    rl_time_format_dirstamp(*started, stamp, sizeof stamp);
    rl_path_sanitize_name(spec->sp.experiment, safe);
    for (char *c = safe; *c; c++)
        if (*c == ' ')
            *c = '_';
    if (shard_n)
        snprintf(name, sizeof name, "%.100s_shard-%u-of-%u", safe, shard_k, shard_n);
    else
        snprintf(name, sizeof name, "%.100s_%s", safe, stamp);
    int rc;
    *resumed = false;
    if ((rc = rl_fs_mkdirs(root_dir)) < 0) {
        dir[0] = '\0';
        return rc;
    }
    rc = rl_fs_mkdir_new(root_dir, name, shard_n ? RL_MKDIR_FAIL_IF_EXISTS : RL_MKDIR_ADD_SUFFIX,
                         dir, cap);
    if (rc == RL_EEXIST && shard_n) {
        if (rl_path_join(dir, cap, root_dir, name) < 0 ||
            (rc = same_shard(dir, spec, shard_k, shard_n, started)) < 0) {
            dir[0] = '\0'; /* not ours: nothing of it is touched */
            return rc;
        }
        rl_error_clear();
        *resumed = true;
        return RL_OK;
    }
    if (rc < 0) {
        dir[0] = '\0'; /* no directory was made */
        return rc;
    }
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%.4000s/spec.json", dir);
    json_object *saved = json_object_new_object();
    json_object_object_add(saved, "source", json_object_new_string(spec->src.path));
    if (spec->src.dir)
        json_object_object_add(saved, "source_dir", json_object_new_string(spec->src.dir));
    json_object_object_add(saved, "started_ns", json_object_new_int64(*started));
    if (shard_n) {
        json_object *sh = json_object_new_object();
        json_object_object_add(sh, "index", json_object_new_int64(shard_k));
        json_object_object_add(sh, "count", json_object_new_int64(shard_n));
        json_object_object_add(saved, "shard", sh);
    }
    json_object *as_run = json_object_get(spec->sp.root);
    if (force_adaptive && !spec->sp.adaptive) { /* --adaptive: the spec as run says so */
        json_object_put(as_run);
        as_run = NULL;
        if (json_object_deep_copy(spec->sp.root, &as_run, NULL) != 0) {
            json_object_put(saved);
            return rl_error_set(RL_ENOMEM, "out of memory");
        }
        json_object_object_del(as_run, "run_count");
        json_object_object_add(as_run, "runs", json_object_new_string("auto"));
    }
    json_object_object_add(saved, "spec", as_run);
    rc = rl_json_write_file(path, saved);
    json_object_put(saved);
    return rc;
}

/* The benchmark of a spec: problem, planners, parameters, seed. */
static int build_bench(const rl_bench_spec *spec, const rl_bench_builtins *bi, rl_bench_session *ss)
{
    const char *setup = NULL;
    char problem_why[512] = "";
    if (bi) {
        ss->problem = bi->problem_new(spec->sp.problem);
        if (ss->problem)
            setup = bi->problem_describe(ss->problem);
        else
            snprintf(problem_why, sizeof problem_why, "%s", rl_error_last());
    }
    ss->bench = rl_bench_new(spec->sp.experiment, ss->problem, setup);
    if (!ss->bench)
        return rl_error_last_code();
    int rc = rl_bench_spec_add_planners(&spec->src, &spec->sp, ss->bench, bi, ss->problem,
                                        problem_why);
    if (rc < 0)
        return rc;
    if (ss->problem && !rl_bench_param(ss->bench, "dimension")) {
        char n[32];
        snprintf(n, sizeof n, "%d", bi->problem_dimension(ss->problem));
        rl_bench_add_param(ss->bench, "dimension", RL_BENCH_INTEGER, n);
    }
    rl_bench_set_seed(ss->bench, (uint64_t)spec->sp.seed);
    return RL_OK;
}

const char *rl_bench_session_dir(const rl_bench_session *s)
{
    return s->dir;
}

bool rl_bench_session_finished_already(const rl_bench_session *s)
{
    return s->finished_already;
}

const rl_bench_experiment *rl_bench_session_results(const rl_bench_session *s)
{
    return s->finished_already ? NULL : rl_bench_results(s->bench);
}

void rl_bench_session_free(rl_bench_session *s)
{
    if (!s)
        return;
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    rl_bench_free(s->bench);
    if (s->problem)
        s->builtins->problem_free(s->problem);
    free(s);
}

static void phase(const rl_bench_run_opts *o, rl_bench_phase ph, const char *dir, size_t total)
{
    if (o->on_phase)
        o->on_phase(o->ud, ph, dir, total);
}

int rl_bench_run_spec(const rl_bench_spec *spec, const rl_bench_run_opts *opts,
                      rl_bench_session **out)
{
    return rl_bench_run_spec_with(spec, opts, NULL, out);
}

int rl_bench_run_spec_with(const rl_bench_spec *spec, const rl_bench_run_opts *opts,
                           json_object *manifest_extra, rl_bench_session **out)
{
    static const rl_bench_run_opts no_opts;
    const rl_bench_run_opts *o = opts ? opts : &no_opts;
    *out = NULL;
    rl_bench_session *ss = calloc(1, sizeof *ss);
    if (!ss)
        return rl_error_set(RL_ENOMEM, "out of memory");
    ss->lock_fd = -1;
    ss->builtins = o->builtins;
    int rc = build_bench(spec, o->builtins, ss);
    if (rc < 0) {
        rl_bench_session_free(ss);
        return rc;
    }
    rl_bench_adaptive_keys akeys;
    bool adaptive = rl_bench_spec_adaptive(spec, &akeys) || o->adaptive;
    if (adaptive && !o->stop_rule) {
        rl_bench_session_free(ss);
        return rl_error_set(RL_EINVAL, "%s: runs: auto needs a stopping rule (runlab/adaptive.h)",
                            spec->src.path);
    }
    rl_bench_request req = spec->sp.req;
    if (adaptive)
        req.run_count = akeys.max_runs;
    /* a shard: the option's, or a resumed shard directory's */
    unsigned shard_k = o->shard_count ? o->shard_index : o->resume_dir ? spec->shard_index : 0;
    unsigned shard_n = o->shard_count ? o->shard_count : o->resume_dir ? spec->shard_count : 0;
    if (shard_n && (adaptive || req.run_count == 0 || shard_k < 1 || shard_k > shard_n ||
                    shard_n > 100000)) {
        rl_bench_session_free(ss);
        return rl_error_set(RL_EINVAL, "%s: shard %u/%u: %s", spec->src.path, shard_k, shard_n,
                            adaptive ? "an adaptive benchmark (runs: auto) decides after every "
                                       "round of runs, so it cannot be split into shards"
                            : req.run_count == 0 ? "runs: 0 (until max_time is spent) cannot be "
                                                   "split into shards"
                                                 : "K must be 1..N, N 1..100000");
    }
    req.shard_index = shard_k;
    req.shard_count = shard_n;
    req.jobs = (unsigned)(o->jobs > 0 ? o->jobs : (unsigned)spec->sp.jobs);
    req.problem_spec = spec->sp.problem;
    /* the one start time: spec.json's, the log's name and date, the manifest's (the
       engine taking its own clock reading a moment later could name a resumed
       benchmark's log for another second) */
    int64_t started = rl_time_now_ns();
    char path[PATH_MAX + 64], console[PATH_MAX + 64];
    bool resuming = o->resume_dir != NULL;
    if (o->resume_dir) {
        snprintf(ss->dir, sizeof ss->dir, "%s", o->resume_dir);
        if (spec->started_ns)
            started = spec->started_ns;
    } else {
        const char *root_dir = o->out_root      ? o->out_root
                               : spec->sp.out ? spec->sp.out
                                              : "bench-results";
        if ((rc = make_dir(spec, root_dir, &started, adaptive, shard_k, shard_n, &resuming,
                           ss->dir, sizeof ss->dir)) < 0 &&
            !ss->dir[0]) {
            rl_bench_session_free(ss);
            return rc;
        }
    }
    if (resuming) { /* finished already: nothing runs */
        char marker[PATH_MAX + 64];
        snprintf(path, sizeof path, "%.4000s/manifest.json", ss->dir);
        if (o->finished_marker)
            snprintf(marker, sizeof marker, "%.4000s/%s", ss->dir, o->finished_marker);
        if (access(path, F_OK) == 0 && (!o->finished_marker || access(marker, F_OK) == 0)) {
            ss->finished_already = true;
            *out = ss;
            return RL_OK;
        }
    }
    /* from here on the directory exists: the caller may tell where the runs are */
    if (rc == RL_OK)
        phase(o, RL_BENCH_PHASE_DIR_READY, ss->dir, 0);
    /* One harness per directory: a second one (a --resume while the first still runs)
       would corrupt the journal. */
    if (rc == RL_OK && (ss->lock_fd = lock_dir(ss->dir)) < 0)
        rc = rl_error_last_code();
    snprintf(console, sizeof console, "%s/console", ss->dir);
    if (rc == RL_OK) /* a --resume finds it there: never through a link */
        rc = rl_fs_mkdir_in(ss->dir, "console", console, sizeof console);
    char problem_file[PATH_MAX];
    /* the built-in problem's geometry for executable planners (RUNLAB_PROBLEM_FILE) */
    if (rc == RL_OK && ss->problem)
        rc = write_problem_file(o->builtins, ss->problem, ss->dir, problem_file,
                                sizeof problem_file);
    if (rc == RL_OK && ss->problem)
        req.problem_file = problem_file;
    req.start_ns = started;
    snprintf(path, sizeof path, "%s/journal.tsv", ss->dir);
    req.console_dir = console;
    req.journal_path = path;
    json_object *trail = NULL;
    rl_bench_set_events(ss->bench, &o->events);
    if (rc == RL_OK) {
        phase(o, RL_BENCH_PHASE_RUNS_START, ss->dir, rl_bench_shard_cells(ss->bench, &req));
        rc = adaptive ? rl_bench_execute_adaptive(ss->bench, &req, o->stop_rule, &akeys, &trail)
                      : rl_bench_execute(ss->bench, &req);
        phase(o, RL_BENCH_PHASE_RUNS_END, ss->dir, 0);
    }
    char log_name[256];
    json_object *extra = manifest_extra ? json_object_get(manifest_extra) : NULL;
    if (shard_n && !extra) { /* a shard says which: a merge and `bench status` read it */
        extra = json_object_new_object();
        json_object *sh = json_object_new_object();
        json_object_object_add(sh, "index", json_object_new_int64(shard_k));
        json_object_object_add(sh, "count", json_object_new_int64(shard_n));
        json_object_object_add(sh, "cells",
                               json_object_new_int64((int64_t)rl_bench_shard_cells(ss->bench, &req)));
        json_object_object_add(sh, "cpu_pinning",
                               json_object_new_string("each run on one CPU of the harness's "
                                                      "affinity set (its slot's)"));
        json_object_object_add(extra, "shard", sh);
    }
    if (rc == RL_OK)
        rc = write_outputs(ss->dir, rl_bench_results(ss->bench), spec->sp.root, trail, extra,
                           started, log_name, sizeof log_name);
    json_object_put(extra);
    json_object_put(trail);
    if (rc < 0) {
        rl_bench_session_free(ss);
        return rc;
    }
    *out = ss;
    return RL_OK;
}
