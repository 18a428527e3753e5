/* rl_bench_merge: the shards of one benchmark (rl_bench_cell_shard, each run by
 * `runlab bench --shard K/N` into its own directory, on whichever machine) joined into one
 * benchmark directory: the shards are checked to be one spec's and complete, their
 * journals are joined into the new directory's journal, and the engine's resume path
 * writes every output from it, as for a benchmark run on one machine. */
#include "engines/bench_spec.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bounds: a shard's spec.json and manifest.json are small; its journal holds every run
 * with its progress samples (the journal reader's own bound). */
#define SHARD_JSON_MAX ((size_t)64 << 20)
#define SHARD_JOURNAL_MAX ((size_t)1 << 31)

typedef struct shard {
    const char *dir;
    json_object *saved;    /* spec.json */
    json_object *manifest; /* manifest.json, NULL when the shard is not finished */
    json_object *spec;     /* saved's "spec" (borrowed) */
    unsigned index, count;
    int64_t started_ns;
} shard;

static const char *str_at(json_object *o, const char *a, const char *b)
{
    json_object *v = NULL;
    if (!o || !json_object_object_get_ex(o, a, &v))
        return "";
    if (b && !json_object_object_get_ex(v, b, &v))
        return "";
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

/* Counts the runs a journal holds (its "run" lines), to say how far a shard got. */
static size_t journal_runs(const char *dir)
{
    char path[PATH_MAX + 32], *text = NULL;
    size_t len = 0, n = 0;
    snprintf(path, sizeof path, "%.4000s/journal.tsv", dir);
    if (rl_fs_read_all(path, SHARD_JOURNAL_MAX, &text, &len) < 0) {
        rl_error_clear();
        return 0;
    }
    for (size_t i = 0; i + 4 <= len; i++)
        if ((i == 0 || text[i - 1] == '\n') && memcmp(text + i, "run\t", 4) == 0)
            n++;
    free(text);
    return n;
}

static int read_shard(shard *s)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%.4000s/spec.json", s->dir);
    if (rl_json_read_file(path, SHARD_JSON_MAX, &s->saved) < 0)
        return rl_error_set(rl_error_last_code(), "%s: not a benchmark directory: %s", s->dir,
                            rl_error_last());
    json_object *sh = NULL, *k = NULL, *n = NULL, *v = NULL;
    if (!json_object_object_get_ex(s->saved, "spec", &s->spec))
        return rl_error_set(RL_EPARSE, "%s: no 'spec' key", path);
    if (!json_object_object_get_ex(s->saved, "shard", &sh) ||
        !json_object_object_get_ex(sh, "index", &k) || !json_object_object_get_ex(sh, "count", &n))
        return rl_error_set(RL_EINVAL, "%s is not a shard (its spec.json has no 'shard'; shards "
                            "come from runlab bench SPEC --shard K/N)", s->dir);
    int64_t ki = json_object_get_int64(k), ni = json_object_get_int64(n);
    if (ni < 1 || ni > 100000 || ki < 1 || ki > ni)
        return rl_error_set(RL_EPARSE, "%s: shard %lld/%lld: K must be 1..N", path,
                            (long long)ki, (long long)ni);
    s->index = (unsigned)ki;
    s->count = (unsigned)ni;
    if (json_object_object_get_ex(s->saved, "started_ns", &v))
        s->started_ns = json_object_get_int64(v);
    snprintf(path, sizeof path, "%.4000s/manifest.json", s->dir);
    if (access(path, F_OK) == 0 && rl_json_read_file(path, SHARD_JSON_MAX, &s->manifest) < 0)
        return rl_error_last_code();
    return RL_OK;
}

/* The top-level keys in which two specs differ, comma-separated into `out`. */
static void spec_differences(json_object *a, json_object *b, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int pass = 0; pass < 2; pass++) {
        json_object *x = pass ? b : a, *y = pass ? a : b;
        json_object_object_foreach(x, key, val)
        {
            json_object *other = NULL;
            bool in_y = json_object_object_get_ex(y, key, &other);
            if (pass && in_y) /* said in the first pass */
                continue;
            if (in_y && json_object_equal(val, other))
                continue;
            int w = snprintf(out + used, cap - used, "%s%s", used ? ", " : "", key);
            if (w > 0 && (size_t)w < cap - used)
                used += (size_t)w;
        }
    }
}

/* The shards are one spec's, each once, all N of them, finished, of one runlab version
 * (unless `force`). Errors name the shards and what differs or is missing. */
static int check_shards(shard *sh, size_t n, bool force)
{
    unsigned count = sh[0].count;
    for (size_t i = 1; i < n; i++) {
        if (!json_object_equal(sh[i].spec, sh[0].spec)) {
            char diff[512];
            spec_differences(sh[0].spec, sh[i].spec, diff, sizeof diff);
            return rl_error_set(RL_EINVAL, "%s and %s are shards of different specs (they "
                                "differ in: %s); only one spec's shards merge", sh[0].dir,
                                sh[i].dir, diff[0] ? diff : "?");
        }
        if (sh[i].count != count)
            return rl_error_set(RL_EINVAL, "%s is shard %u/%u but %s is %u/%u: shards of one "
                                "split (the same N) merge", sh[i].dir, sh[i].index, sh[i].count,
                                sh[0].dir, sh[0].index, count);
    }
    char *seen = calloc(count + 1, 1);
    if (!seen)
        return rl_error_set(RL_ENOMEM, "out of memory");
    int rc = RL_OK;
    for (size_t i = 0; i < n && rc == RL_OK; i++) {
        if (seen[sh[i].index]) {
            for (size_t j = 0; j < i; j++)
                if (sh[j].index == sh[i].index)
                    rc = rl_error_set(RL_EINVAL, "shard %u/%u given twice: %s and %s",
                                      sh[i].index, count, sh[j].dir, sh[i].dir);
        }
        seen[sh[i].index] = 1;
    }
    char missing[1024] = "";
    size_t used = 0, n_missing = 0;
    for (unsigned k = 1; rc == RL_OK && k <= count; k++)
        if (!seen[k]) {
            n_missing++;
            int w = snprintf(missing + used, sizeof missing - used, "%s%u/%u", used ? ", " : "",
                             k, count);
            if (w > 0 && (size_t)w < sizeof missing - used)
                used += (size_t)w;
        }
    free(seen);
    if (rc == RL_OK && n_missing)
        return rl_error_set(RL_ENOENT, "%zu of %u shards missing: %s (run each with runlab "
                            "bench SPEC --shard K/%u, then merge all of them)", n_missing, count,
                            missing, count);
    for (size_t i = 0; rc == RL_OK && i < n; i++)
        if (!sh[i].manifest)
            rc = rl_error_set(RL_EINVAL, "shard %u/%u (%s) is incomplete: %zu run(s) done and no "
                              "manifest.json; finish it with runlab bench --resume %s",
                              sh[i].index, count, sh[i].dir, journal_runs(sh[i].dir), sh[i].dir);
    for (size_t i = 1; rc == RL_OK && i < n && !force; i++) {
        const char *v0 = str_at(sh[0].manifest, "provenance", "version");
        const char *vi = str_at(sh[i].manifest, "provenance", "version");
        if (strcmp(v0, vi) != 0)
            rc = rl_error_set(RL_EINVAL, "the shards ran different runlab versions: %s (%s) and "
                              "%s (%s); --force merges them anyway", v0, sh[0].dir, vi,
                              sh[i].dir);
    }
    return rc;
}

/* The merged journal: the first shard's header line, every shard's run lines, and the
 * shards' summed durations as the time line. */
static int join_journals(const shard *sh, size_t n, const char *out_dir, size_t *runs_out)
{
    char path[PATH_MAX + 32];
    size_t cap = 4096, len = 0;
    char *all = malloc(cap);
    if (!all)
        return rl_error_set(RL_ENOMEM, "out of memory");
    double duration = 0;
    size_t header_len = 0;
    int rc = RL_OK;
    for (size_t i = 0; i < n && rc == RL_OK; i++) {
        char *text = NULL;
        size_t tl = 0;
        snprintf(path, sizeof path, "%.4000s/journal.tsv", sh[i].dir);
        if ((rc = rl_fs_read_all(path, SHARD_JOURNAL_MAX, &text, &tl)) < 0)
            break;
        json_object *d = NULL;
        if (json_object_object_get_ex(sh[i].manifest, "total_duration_s", &d))
            duration += json_object_get_double(d);
        size_t pos = 0;
        for (size_t lineno = 1; pos < tl && rc == RL_OK; lineno++) {
            char *nl = memchr(text + pos, '\n', tl - pos);
            if (!nl) /* a cut last line: never a finished run's */
                break;
            size_t ll = (size_t)(nl + 1 - (text + pos));
            bool keep = (lineno == 1 && i == 0) || (lineno > 1 && ll > 4 &&
                                                    memcmp(text + pos, "run\t", 4) == 0);
            if (lineno == 1 && i == 0)
                header_len = ll;
            else if (lineno == 1 && (ll != header_len || memcmp(all, text + pos, ll) != 0))
                rc = rl_error_set(RL_EINVAL, "%s: journal of another benchmark than "
                                  "%s/journal.tsv", path, sh[0].dir);
            if (keep && rc == RL_OK) {
                while (len + ll + 64 > cap) {
                    char *grown = realloc(all, cap * 2);
                    if (!grown) {
                        rc = rl_error_set(RL_ENOMEM, "out of memory");
                        break;
                    }
                    all = grown;
                    cap *= 2;
                }
                if (rc == RL_OK) {
                    memcpy(all + len, text + pos, ll);
                    len += ll;
                    *runs_out += lineno > 1;
                }
            }
            pos += ll;
        }
        free(text);
    }
    if (rc == RL_OK) {
        len += (size_t)snprintf(all + len, cap - len, "t\t%.17g\n", duration);
        snprintf(path, sizeof path, "%.4000s/journal.tsv", out_dir);
        rc = rl_fs_write_atomic(path, all, len, 0644);
    }
    free(all);
    return rc;
}

/* What the merged manifest says of each shard: where it ran and on what. */
static json_object *shards_json(const shard *sh, size_t n)
{
    json_object *list = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_new_object(), *v = NULL;
        char abs_dir[PATH_MAX];
        json_object_object_add(o, "index", json_object_new_int64(sh[i].index));
        json_object_object_add(o, "count", json_object_new_int64(sh[i].count));
        json_object_object_add(o, "dir", json_object_new_string(realpath(sh[i].dir, abs_dir)
                                                                     ? abs_dir
                                                                     : sh[i].dir));
        json_object_object_add(o, "host", json_object_new_string(str_at(sh[i].manifest,
                                                                        "provenance", "host")));
        json_object_object_add(o, "cpu_model",
                               json_object_new_string(str_at(sh[i].manifest, "provenance",
                                                             "cpu_model")));
        json_object_object_add(o, "version",
                               json_object_new_string(str_at(sh[i].manifest, "provenance",
                                                             "version")));
        json_object_object_add(o, "started", json_object_new_string(str_at(sh[i].manifest,
                                                                           "started", NULL)));
        json_object_object_add(o, "finished",
                               json_object_new_string(str_at(sh[i].manifest, "finished", NULL)));
        json_object *sho = NULL;
        if (json_object_object_get_ex(sh[i].manifest, "shard", &sho) &&
            json_object_object_get_ex(sho, "cells", &v))
            json_object_object_add(o, "cells", json_object_get(v));
        if (json_object_object_get_ex(sh[i].manifest, "total_duration_s", &v))
            json_object_object_add(o, "total_duration_s", json_object_get(v));
        json_object_array_add(list, o);
    }
    return list;
}

/* Per planner (by the spec's order and names), the host each run ran on: its shard's. */
static json_object *run_hosts_json(const shard *sh, size_t n, unsigned runs)
{
    json_object *by_planner = json_object_new_object(), *planners = NULL;
    if (!json_object_object_get_ex(sh[0].spec, "planners", &planners) ||
        !json_object_is_type(planners, json_type_array))
        return by_planner;
    size_t np = json_object_array_length(planners);
    const char **host_of = calloc(sh[0].count + 1, sizeof *host_of);
    if (!host_of)
        return by_planner;
    for (size_t i = 0; i < n; i++)
        host_of[sh[i].index] = str_at(sh[i].manifest, "provenance", "host");
    for (size_t p = 0; p < np; p++) {
        json_object *name = NULL, *list = json_object_new_array();
        json_object_object_get_ex(json_object_array_get_idx(planners, p), "name", &name);
        for (size_t r = 0; r < runs; r++) {
            const char *h = host_of[rl_bench_cell_shard(p, r, np, sh[0].count)];
            json_object_array_add(list, json_object_new_string(h ? h : ""));
        }
        json_object_object_add(by_planner, name ? json_object_get_string(name) : "?", list);
    }
    free(host_of);
    return by_planner;
}

/* spec.json of the merged directory: the shards' spec, no shard, the earliest start. */
static int write_spec(const shard *sh, size_t n, const char *out_dir)
{
    int64_t started = sh[0].started_ns;
    for (size_t i = 1; i < n; i++)
        if (sh[i].started_ns && (started == 0 || sh[i].started_ns < started))
            started = sh[i].started_ns;
    json_object *saved = json_object_new_object(), *v = NULL;
    if (json_object_object_get_ex(sh[0].saved, "source", &v))
        json_object_object_add(saved, "source", json_object_get(v));
    if (json_object_object_get_ex(sh[0].saved, "source_dir", &v))
        json_object_object_add(saved, "source_dir", json_object_get(v));
    json_object_object_add(saved, "started_ns", json_object_new_int64(started));
    json_object_object_add(saved, "spec", json_object_get(sh[0].spec));
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%.4000s/spec.json", out_dir);
    int rc = rl_json_write_file(path, saved);
    json_object_put(saved);
    return rc;
}

/* OUT exists with no benchmark in it (a Slurm benchmark directory holding its scripts and
 * shards), or is made. */
static int prepare_out(const char *out_dir)
{
    static const char *const taken[] = {"spec.json", "journal.tsv", "manifest.json"};
    struct stat st;
    if (lstat(out_dir, &st) < 0)
        return rl_fs_mkdirs(out_dir);
    if (!S_ISDIR(st.st_mode))
        return rl_error_set(RL_EEXIST, "%s exists and is not a directory", out_dir);
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%.4000s/%s", out_dir, taken[i]);
        if (access(path, F_OK) == 0)
            return rl_error_set(RL_EEXIST, "%s already holds a benchmark (%s); merge into a new "
                                "directory", out_dir, taken[i]);
    }
    return RL_OK;
}

int rl_bench_merge(const char *const *shard_dirs, size_t n, const char *out_dir, bool force,
                   const rl_bench_run_opts *opts, rl_bench_session **out)
{
    *out = NULL;
    if (n == 0 || !out_dir)
        return rl_error_set(RL_EINVAL, "bench merge: no shard directories or no output");
    shard *sh = calloc(n, sizeof *sh);
    if (!sh)
        return rl_error_set(RL_ENOMEM, "out of memory");
    int rc = RL_OK;
    for (size_t i = 0; i < n && rc == RL_OK; i++) {
        sh[i].dir = shard_dirs[i];
        rc = read_shard(&sh[i]);
    }
    if (rc == RL_OK)
        rc = check_shards(sh, n, force);
    if (rc == RL_OK)
        rc = prepare_out(out_dir);
    if (rc == RL_OK)
        rc = write_spec(sh, n, out_dir);
    size_t runs_joined = 0;
    if (rc == RL_OK)
        rc = join_journals(sh, n, out_dir, &runs_joined);
    rl_bench_spec *spec = NULL;
    if (rc == RL_OK)
        rc = rl_bench_spec_load_dir(out_dir, &spec);
    /* A merge runs nothing: every cell must be in the shards' journals (a run journaled
       twice, by a resumed shard, is counted once by the engine and at most once here). */
    size_t planners = 0;
    unsigned runs = 0;
    if (rc == RL_OK)
        rl_bench_spec_shape(spec, &planners, &runs, NULL);
    if (rc == RL_OK && runs_joined < planners * runs)
        rc = rl_error_set(RL_EINVAL, "the shards' journals hold %zu of the benchmark's %zu runs; "
                          "a merge runs none (finish the shards with runlab bench --resume)",
                          runs_joined, planners * (size_t)runs);
    if (rc == RL_OK) {
        rl_bench_run_opts o = opts ? *opts : (rl_bench_run_opts){0};
        o.resume_dir = out_dir;
        o.out_root = NULL;
        o.shard_index = o.shard_count = 0;
        o.adaptive = false;
        json_object *extra = json_object_new_object();
        json_object_object_add(extra, "shards", shards_json(sh, n));
        json_object_object_add(extra, "run_hosts", run_hosts_json(sh, n, runs));
        rc = rl_bench_run_spec_with(spec, &o, extra, out);
        json_object_put(extra);
    }
    rl_bench_spec_free(spec);
    for (size_t i = 0; i < n; i++) {
        json_object_put(sh[i].saved);
        json_object_put(sh[i].manifest);
    }
    free(sh);
    return rc;
}
