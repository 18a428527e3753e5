/* `runlab bench`: runs a benchmark described by a YAML spec (built-in planners from
 * examples/ or planner programs), every run in its own process, into a new directory
 * (OMPL log, SQLite database, CSV, console output, manifest.json, report.html);
 * `bench import` turns OMPL logs into a database; `bench merge` joins benchmark
 * directories into one; `bench report` rewrites a directory's report.html. */
#include "cli.h"

#include "runlab/bench.h"
#include "runlab/bench_report.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/progress.h"
#include "runlab/provenance.h"
#include "runlab/stats.h"
#include "runlab/time.h"
#include "runlab/yaml.h"

#ifdef RUNLAB_HAVE_EXAMPLES
#include "rlx.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SPEC_MAX_BYTES = 1 << 20, MAX_LOGS = 4096 };

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab bench SPEC.yaml [--out-dir ROOT] [-j N]\n"
            "       runlab bench --resume DIR\n"
            "       runlab bench import LOG... --db OUT.db\n"
            "       runlab bench merge DIR... --db OUT.db\n"
            "       runlab bench report DIR\n\n"
            "Benchmarks motion planners as OMPL's Benchmark does, each run in its own process:\n"
            "a run that crashes, aborts, hangs past max_time or exceeds max_mem is recorded with\n"
            "its own status and costs that run only. Results go to a new directory under ROOT\n"
            "(OMPL log, results.db in OMPL's schema for Planner Arena, results.csv, console/,\n"
            "manifest.json, report.html with figures/); its path is the last line of standard\n"
            "output. `bench report DIR` rewrites DIR/report.html from DIR/results.json.\n\n"
            "Options:\n"
            "  --out-dir ROOT where the benchmark directory is created (default: the spec's\n"
            "                 'out', else ./bench-results); --out is the old spelling\n"
            "  -j, --jobs N   runs in parallel (default 1, or the spec's 'jobs'). Parallel runs\n"
            "                 share CPU cores, caches and memory bandwidth, so their times and\n"
            "                 memory are perturbed and not comparable with serial runs; use it\n"
            "                 for smoke tests and sweeps, not for published timings.\n"
            "  --resume DIR   finish an interrupted benchmark: runs in DIR's journal are kept,\n"
            "                 the missing ones run, the outputs are rewritten\n"
            "  --db OUT.db    (import, merge) the database to create or extend\n"
            "  -h, --help     this help\n\n"
            "Spec keys: experiment, problem, planners (name + planner or command, settings,\n"
            "progress), seed, max_time, max_mem, runs (0 = until max_time of summed run time),\n"
            "time_between_updates, simplify, save_console_output, jobs, grace, parameters, out.\n"
            "See docs/bench.md.\n");
}

/* ---- spec errors with file, line and key -------------------------------------------- */

typedef struct spec_src {
    const char *path;
    char *text;
    const char *dir; /* absolute directory of the spec: relative commands resolve from it */
} spec_src;

static size_t indent_of(const char *l)
{
    size_t n = 0;
    while (l[n] == ' ')
        n++;
    return n;
}

/* Line of `key` at top level, or inside the item-th entry of the top-level `list`. */
static int spec_line(const spec_src *s, const char *list, long item, const char *key)
{
    if (!s->text)
        return 0;
    int lineno = 0, in_list = 0, cur_item = -1, item_line = 0;
    size_t item_indent = 0;
    size_t klen = key ? strlen(key) : 0; /* NULL: the line of the list item itself */
    for (const char *l = s->text; *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        lineno++;
        size_t ind = indent_of(l);
        const char *c = l + ind;
        if (!list) {
            if (key && ind == 0 && strncmp(c, key, klen) == 0 && c[klen] == ':')
                return lineno;
        } else if (ind == 0 && len > 0 && *c != '#') {
            in_list = strncmp(c, list, strlen(list)) == 0 && c[strlen(list)] == ':';
            if (!in_list && cur_item >= 0)
                break;
        } else if (in_list && strncmp(c, "- ", 2) == 0 && (cur_item < 0 || ind == item_indent)) {
            item_indent = ind;
            cur_item++;
            item_line = lineno;
            if (cur_item > item)
                break;
            c += 2;
            while (*c == ' ')
                c++;
            if (cur_item == item && key && strncmp(c, key, klen) == 0 && c[klen] == ':')
                return lineno;
        } else if (in_list && cur_item == item && key && strncmp(c, key, klen) == 0 &&
                   c[klen] == ':') {
            return lineno;
        }
        if (!nl)
            break;
        l = nl + 1;
    }
    return list && cur_item >= item ? item_line : 0;
}

static int spec_err(const spec_src *s, const char *list, long item, const char *key,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int spec_err(const spec_src *s, const char *list, long item, const char *key,
                    const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = spec_line(s, list, item, key);
    char where[256];
    if (list)
        snprintf(where, sizeof where, "%s[%ld]%s%s", list, item, key ? "." : "", key ? key : "");
    else
        snprintf(where, sizeof where, "%s", key);
    if (line > 0)
        return rl_error_set(RL_EINVAL, "%s:%d: %s: %s", s->path, line, where, msg);
    return rl_error_set(RL_EINVAL, "%s: %s: %s", s->path, where, msg);
}

/* ---- the spec ------------------------------------------------------------------------- */

typedef struct spec {
    json_object *root; /* owned */
    const char *experiment, *problem, *out;
    int64_t seed, jobs;
    rl_bench_request req;
} spec;

static const char *const TOP_KEYS[] = {"experiment",
                                       "problem",
                                       "planners",
                                       "seed",
                                       "max_time",
                                       "max_mem",
                                       "runs",
                                       "run_count",
                                       "time_between_updates",
                                       "simplify",
                                       "save_console_output",
                                       "jobs",
                                       "grace",
                                       "console_limit",
                                       "parameters",
                                       "out",
                                       "display_progress",
                                       NULL};
static const char *const PLANNER_KEYS[] = {"name",     "planner",  "command", "settings",
                                           "progress", "accepts",  NULL};

static bool key_known(const char *const *keys, const char *k)
{
    for (size_t i = 0; keys[i]; i++)
        if (strcmp(keys[i], k) == 0)
            return true;
    return false;
}

static int get_num(const spec_src *s, json_object *o, const char *key, double lo, double hi,
                   double *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return RL_OK;
    if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
        return spec_err(s, NULL, 0, key, "expected a number");
    double d = json_object_get_double(v);
    if (!(d >= lo && d <= hi))
        return spec_err(s, NULL, 0, key, "%g is outside [%g, %g]", d, lo, hi);
    *out = d;
    return RL_OK;
}

static int get_bool(const spec_src *s, json_object *o, const char *key, bool *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return RL_OK;
    if (!json_object_is_type(v, json_type_boolean))
        return spec_err(s, NULL, 0, key, "expected true or false");
    *out = json_object_get_boolean(v);
    return RL_OK;
}

static int get_str(const spec_src *s, json_object *o, const char *key, bool required,
                   const char **out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) {
        if (required)
            return spec_err(s, NULL, 0, key, "missing (required)");
        return RL_OK;
    }
    if (!json_object_is_type(v, json_type_string))
        return spec_err(s, NULL, 0, key, "expected a string");
    *out = json_object_get_string(v);
    return RL_OK;
}

static int spec_read(const spec_src *s, json_object *root, spec *sp)
{
    memset(sp, 0, sizeof *sp);
    rl_bench_request_init(&sp->req);
    sp->req.max_time = 1.0;
    sp->req.run_count = 10;
    sp->seed = 1;
    sp->jobs = 1;
    if (!root || !json_object_is_type(root, json_type_object))
        return rl_error_set(RL_EINVAL, "%s: the spec must be a mapping of keys", s->path);
    json_object_object_foreach(root, tk, tv)
    {
        (void)tv;
        if (!key_known(TOP_KEYS, tk))
            return spec_err(s, NULL, 0, tk, "unknown key");
    }
    int rc;
    double d;
    if ((rc = get_str(s, root, "experiment", true, &sp->experiment)) < 0 ||
        (rc = get_str(s, root, "problem", true, &sp->problem)) < 0 ||
        (rc = get_str(s, root, "out", false, &sp->out)) < 0)
        return rc;
    if (rl_bench_check_name(sp->experiment, "experiment name") < 0)
        return spec_err(s, NULL, 0, "experiment", "%s", rl_error_last());
    if ((rc = get_num(s, root, "max_time", 1e-3, 1e6, &sp->req.max_time)) < 0 ||
        (rc = get_num(s, root, "max_mem", 1, 1e7, &sp->req.max_mem)) < 0 ||
        (rc = get_num(s, root, "time_between_updates", 1e-3, 1e3, &sp->req.time_between_updates)) <
            0 ||
        (rc = get_num(s, root, "grace", 0, 60, &sp->req.grace)) < 0 ||
        (rc = get_bool(s, root, "simplify", &sp->req.simplify)) < 0 ||
        (rc = get_bool(s, root, "display_progress", &sp->req.display_progress)) < 0 ||
        (rc = get_bool(s, root, "save_console_output", &sp->req.save_console_output)) < 0)
        return rc;
    d = sp->req.run_count;
    const char *runs_key =
        json_object_object_get_ex(root, "run_count", NULL) ? "run_count" : "runs";
    if ((rc = get_num(s, root, runs_key, 0, 1e6, &d)) < 0)
        return rc;
    if (d != floor(d))
        return spec_err(s, NULL, 0, runs_key, "expected a whole number");
    sp->req.run_count = (unsigned)d;
    d = (double)sp->seed;
    if ((rc = get_num(s, root, "seed", 0, 9007199254740992.0, &d)) < 0)
        return rc;
    sp->seed = (int64_t)d;
    d = 1;
    if ((rc = get_num(s, root, "jobs", 1, 256, &d)) < 0)
        return rc;
    sp->jobs = (int64_t)d;
    d = (double)sp->req.console_limit;
    if ((rc = get_num(s, root, "console_limit", 0, 1e12, &d)) < 0)
        return rc;
    sp->req.console_limit = (size_t)d;
    json_object *pl;
    if (!json_object_object_get_ex(root, "planners", &pl))
        return spec_err(s, NULL, 0, "planners", "missing (required)");
    if (!json_object_is_type(pl, json_type_array) || json_object_array_length(pl) == 0)
        return spec_err(s, NULL, 0, "planners", "expected a non-empty list");
    for (size_t i = 0; i < json_object_array_length(pl); i++) {
        json_object *p = json_object_array_get_idx(pl, i);
        if (!json_object_is_type(p, json_type_object))
            return spec_err(s, "planners", (long)i, NULL, "expected a mapping");
        json_object_object_foreach(p, k, v)
        {
            (void)v;
            if (!key_known(PLANNER_KEYS, k))
                return spec_err(s, "planners", (long)i, k, "unknown key");
        }
    }
    sp->root = root;
    return RL_OK;
}

/* A setting or parameter value must be a number, a boolean or a string. */
static bool is_scalar_value(json_object *v)
{
    return json_object_is_type(v, json_type_boolean) || json_object_is_type(v, json_type_int) ||
           json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_string);
}

/* The text of a value that passed is_scalar_value (caller frees; NULL: out of memory). */
static char *scalar_text(json_object *v)
{
    if (json_object_is_type(v, json_type_boolean))
        return strdup(json_object_get_boolean(v) ? "1" : "0");
    if (json_object_is_type(v, json_type_double)) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.17g", json_object_get_double(v));
        return strdup(buf);
    }
    return strdup(json_object_get_string(v));
}

/* Where `prog` would run from: a path with a '/' is taken relative to the spec's
 * directory (not the current one: a spec means the same wherever it is run from), a bare
 * name is looked up in PATH. Fills `out` and returns true when an executable file is
 * there; else false with `why` saying what was found. */
static bool resolve_program(const spec_src *s, const char *prog, char *out, size_t cap,
                            char *why, size_t why_cap)
{
    if (strchr(prog, '/')) {
        if (prog[0] == '/' || !s->dir)
            snprintf(out, cap, "%s", prog);
        else
            snprintf(out, cap, "%s/%s", s->dir, prog);
        if (access(out, X_OK) == 0)
            return true;
        snprintf(why, why_cap, "'%s': %s", out, strerror(errno));
        return false;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(out, cap, "%.*s/%s", (int)n, n ? p : ".", prog);
        if (access(out, X_OK) == 0) {
            snprintf(out, cap, "%s", prog); /* execvp finds it the same way */
            return true;
        }
        p += n;
        if (*p)
            p++;
    }
    snprintf(why, why_cap, "'%s': not found in PATH", prog);
    return false;
}

/* True when a `command:` string is one program with arguments, which the shell would
 * only split into words: no operators, substitutions, globs or variables. */
static bool plain_words(const char *cmd)
{
    return strpbrk(cmd, "|&;<>()$`\\\"'*?[#~=%{}\n") == NULL;
}

/* The settings of a `command:` planner: every key must be one it declares in
 * `accepts: [...]` (so a typo is an error, as with built-in planners); they reach the
 * program as JSON (RUNLAB_SETTINGS and stdin) and the results as its configuration. */
static int exec_settings(const spec_src *s, size_t i, json_object *p, json_object *settings,
                         rl_bench_planner *planner)
{
    json_object *accepts = NULL;
    json_object_object_get_ex(p, "accepts", &accepts);
    if (!json_object_is_type(settings, json_type_object))
        return spec_err(s, "planners", (long)i, "settings", "expected a mapping");
    if (!accepts || !json_object_is_type(accepts, json_type_array))
        return spec_err(s, "planners", (long)i, "settings",
                        "a command planner takes settings only with 'accepts: [names...]', "
                        "the settings it understands");
    const char *keys[64], *vals[64], *jsons[64];
    char *owned[64];
    size_t n = 0;
    int rc = RL_OK;
    json_object_object_foreach(settings, k, v)
    {
        bool ok = false;
        for (size_t a = 0; a < json_object_array_length(accepts); a++) {
            json_object *an = json_object_array_get_idx(accepts, a);
            ok |= json_object_is_type(an, json_type_string) &&
                  strcmp(json_object_get_string(an), k) == 0;
        }
        if (!ok) {
            rc = spec_err(s, "planners", (long)i, "settings",
                          "setting '%s': the planner does not accept it (accepts lists what "
                          "it does)",
                          k);
            break;
        }
        if (!is_scalar_value(v) || n == 64) {
            rc = spec_err(s, "planners", (long)i, "settings",
                          "setting '%s': expected a number, true/false or a string (64 at most)",
                          k);
            break;
        }
        keys[n] = k;
        owned[n] = scalar_text(v);
        vals[n] = owned[n] ? owned[n] : "";
        jsons[n] = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        n++;
    }
    if (rc == RL_OK && rl_bench_planner_exec_settings(planner, keys, vals, jsons, n) < 0)
        rc = spec_err(s, "planners", (long)i, "settings", "%s", rl_error_last());
    for (size_t j = 0; j < n; j++)
        free(owned[j]);
    return rc;
}

static int add_planners(const spec_src *s, const spec *sp, rl_bench *b, void *problem)
{
    json_object *pl;
    json_object_object_get_ex(sp->root, "planners", &pl);
    for (size_t i = 0; i < json_object_array_length(pl); i++) {
        json_object *p = json_object_array_get_idx(pl, i), *v;
        const char *name = NULL, *kind = NULL;
        if (json_object_object_get_ex(p, "name", &v)) {
            if (!json_object_is_type(v, json_type_string))
                return spec_err(s, "planners", (long)i, "name", "expected a string");
            name = json_object_get_string(v);
        }
        if (json_object_object_get_ex(p, "planner", &v)) {
            if (!json_object_is_type(v, json_type_string))
                return spec_err(s, "planners", (long)i, "planner", "expected a string");
            kind = json_object_get_string(v);
        }
        if (!name)
            name = kind;
        if (!name)
            return spec_err(s, "planners", (long)i, "name", "missing (required)");
        if (rl_bench_check_name(name, "planner name") < 0)
            return spec_err(s, "planners", (long)i, "name", "%s", rl_error_last());
        json_object *cmd = NULL, *settings = NULL, *progress = NULL;
        json_object_object_get_ex(p, "command", &cmd);
        json_object_object_get_ex(p, "settings", &settings);
        json_object_object_get_ex(p, "progress", &progress);
        if (!!cmd == !!kind)
            return spec_err(s, "planners", (long)i, NULL,
                            "give exactly one of 'planner' (built-in) or 'command'");
        rl_bench_planner *planner = NULL;
        if (cmd) {
            const char *argv[256], *prog[RL_BENCH_MAX_PROGRESS];
            size_t argc = 0, np = 0;
            char words[4096], program[PATH_MAX + 256], why[PATH_MAX + 300];
            if (json_object_is_type(cmd, json_type_string) &&
                plain_words(json_object_get_string(cmd)) &&
                strlen(json_object_get_string(cmd)) < sizeof words) {
                /* one program and its arguments: run without a shell in between, so its
                   crash is its own and its memory is not a child's */
                snprintf(words, sizeof words, "%s", json_object_get_string(cmd));
                for (char *w = strtok(words, " \t"); w && argc < 255; w = strtok(NULL, " \t"))
                    argv[argc++] = w;
                if (argc == 0)
                    return spec_err(s, "planners", (long)i, "command", "empty command");
            } else if (json_object_is_type(cmd, json_type_string)) {
                argv[argc++] = "/bin/sh";
                argv[argc++] = "-c";
                argv[argc++] = json_object_get_string(cmd);
            } else if (json_object_is_type(cmd, json_type_array) &&
                       json_object_array_length(cmd) > 0 && json_object_array_length(cmd) < 256) {
                for (size_t k = 0; k < json_object_array_length(cmd); k++) {
                    json_object *arg = json_object_array_get_idx(cmd, k);
                    if (!json_object_is_type(arg, json_type_string))
                        return spec_err(s, "planners", (long)i, "command",
                                        "argument %zu is not a string", k + 1);
                    argv[argc++] = json_object_get_string(arg);
                }
            } else {
                return spec_err(s, "planners", (long)i, "command",
                                "expected a string or a list of arguments");
            }
            if (progress) {
                if (!json_object_is_type(progress, json_type_array) ||
                    json_object_array_length(progress) > RL_BENCH_MAX_PROGRESS)
                    return spec_err(s, "planners", (long)i, "progress",
                                    "expected a list of 'name TYPE' (at most %d)",
                                    RL_BENCH_MAX_PROGRESS);
                for (size_t k = 0; k < json_object_array_length(progress); k++) {
                    json_object *decl = json_object_array_get_idx(progress, k);
                    if (!json_object_is_type(decl, json_type_string))
                        return spec_err(s, "planners", (long)i, "progress",
                                        "entry %zu is not a string 'name TYPE'", k + 1);
                    prog[np++] = json_object_get_string(decl);
                }
            }
            /* a program that cannot start is refused now, not found out run by run */
            if (!resolve_program(s, argv[0], program, sizeof program, why, sizeof why))
                return spec_err(s, "planners", (long)i, "command",
                                "planner '%s' cannot start: %s", name, why);
            argv[0] = program;
            planner = rl_bench_planner_exec(name, argv, argc, prog, np);
            if (!planner)
                return spec_err(s, "planners", (long)i, progress ? "progress" : "command", "%s",
                                rl_error_last());
            int src = settings ? exec_settings(s, i, p, settings, planner) : RL_OK;
            if (src < 0) {
                planner->free(planner->self);
                return src;
            }
        } else {
#ifdef RUNLAB_HAVE_EXAMPLES
            if (!problem)
                return spec_err(s, NULL, 0, "problem",
                                "built-in planners need a built-in problem: %s", rl_error_last());
            const char *keys[64], *vals[64];
            char *owned[64];
            size_t n = 0;
            if (settings) {
                if (!json_object_is_type(settings, json_type_object))
                    return spec_err(s, "planners", (long)i, "settings", "expected a mapping");
                json_object_object_foreach(settings, k, sv)
                {
                    if (!is_scalar_value(sv)) {
                        for (size_t j = 0; j < n; j++)
                            free(owned[j]);
                        return spec_err(s, "planners", (long)i, "settings",
                                        "setting '%s': expected a number, true/false or a string",
                                        k);
                    }
                    if (n == 64)
                        break;
                    keys[n] = k;
                    owned[n] = scalar_text(sv);
                    vals[n] = owned[n] ? owned[n] : "";
                    n++;
                }
            }
            planner = rlx_planner_new(kind, name, keys, vals, n);
            for (size_t k = 0; k < n; k++)
                free(owned[k]);
            if (!planner)
                return spec_err(s, "planners", (long)i,
                                settings && rl_error_last_code() == RL_EINVAL ? "settings"
                                                                              : "planner",
                                "%s", rl_error_last());
#else
            (void)problem;
            (void)settings;
            return spec_err(s, "planners", (long)i, "planner",
                            "this build has no built-in planners; use 'command'");
#endif
        }
        if (rl_bench_add_planner(b, planner) < 0)
            return spec_err(s, "planners", (long)i, "name", "%s", rl_error_last());
    }
    json_object *params;
    if (json_object_object_get_ex(sp->root, "parameters", &params)) {
        if (!json_object_is_type(params, json_type_object))
            return spec_err(s, NULL, 0, "parameters", "expected a mapping of name: value");
        json_object_object_foreach(params, k, v)
        {
            if (!is_scalar_value(v))
                return spec_err(s, NULL, 0, "parameters",
                                "parameter '%s': expected a number, true/false or a string", k);
            rl_bench_type t = json_object_is_type(v, json_type_boolean)  ? RL_BENCH_BOOLEAN
                              : json_object_is_type(v, json_type_int)    ? RL_BENCH_INTEGER
                              : json_object_is_type(v, json_type_double) ? RL_BENCH_REAL
                                                                         : RL_BENCH_TEXT;
            char *val = scalar_text(v);
            int rc = val ? rl_bench_add_param(b, k, t, val) : RL_ENOMEM;
            free(val);
            if (rc < 0)
                return spec_err(s, NULL, 0, "parameters", "%s", rl_error_last());
        }
    }
    return RL_OK;
}

/* ---- running -------------------------------------------------------------------------- */

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

/* Ctrl+C: the harness dies with its runs (they cannot outlive it), and the user is told
 * where the partial benchmark is and how to finish it. The note is made beforehand: a
 * signal handler may only write(2). */
static char interrupt_note[2 * PATH_MAX + 160];
static size_t interrupt_note_len;

static void on_interrupt(int sig)
{
    if (write(STDERR_FILENO, interrupt_note, interrupt_note_len) < 0) {
        /* nothing more to do in a handler */
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void arm_interrupt_note(const char *dir)
{
    int n = snprintf(interrupt_note, sizeof interrupt_note,
                     "\nrunlab: bench: interrupted; the finished runs are kept in %s\n"
                     "Resume with: runlab bench --resume '%s'\n",
                     dir, dir);
    interrupt_note_len = n > 0 && (size_t)n < sizeof interrupt_note ? (size_t)n : 0;
    struct sigaction sa = {0};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void disarm_interrupt_note(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

typedef struct ui {
    rl_progress *bar;
} ui;

static void on_run_done(void *ud, const char *planner, size_t run_index, rl_bench_status status,
                        size_t done, size_t total)
{
    (void)total;
    ui *u = ud;
    if (!u->bar)
        return;
    char note[192];
    snprintf(note, sizeof note, "%s run %zu: %s", planner, run_index + 1,
             rl_bench_status_name(status));
    rl_progress_update(u->bar, done, note);
}

static int write_outputs(const char *dir, const rl_bench_experiment *e, json_object *spec_json,
                         int64_t started, char *log_name, size_t log_cap)
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
    rc = rl_path_join(path, sizeof path, dir, "manifest.json");
    if (rc == RL_OK)
        rc = rl_json_write_file(path, m);
    json_object_put(m);
    return rc;
}

static double run_prop(const rl_bench_run_data *r, const char *name)
{
    for (size_t i = 0; i < r->n_props; i++)
        if (strcmp(r->props[i].name, name) == 0)
            return strtod(r->props[i].value, NULL);
    return NAN;
}

/* Times of a planner's runs (all of them, as OMPL's tools count them); returns how many. */
static size_t planner_times(const rl_bench_planner_data *pd, double *out)
{
    size_t n = 0;
    for (size_t r = 0; r < pd->n_runs; r++) {
        double t = run_prop(&pd->runs[r], "time");
        if (isfinite(t))
            out[n++] = t;
    }
    return n;
}

/* Per planner: solved %, median time with its 95% CI, min..max, peak memory; then, as
 * hyperfine does, how much faster the best planner is than each other one, with the
 * rank-sum test's p. The best is the lowest median time among planners that solved. */
static void print_comparison(const rl_bench_experiment *e)
{
    size_t best = SIZE_MAX;
    double best_median = INFINITY;
    printf("\n%-20s %6s  %-34s %-26s %s\n", "planner", "solved", "median time [95% CI]",
           "min ... max", "peak memory");
    for (size_t p = 0; p < e->n_planners; p++) {
        const rl_bench_planner_data *pd = &e->planners[p];
        double *t = malloc((pd->n_runs ? pd->n_runs : 1) * sizeof *t);
        if (!t)
            return;
        size_t n = planner_times(pd, t), solved = 0;
        double mem = 0;
        for (size_t r = 0; r < pd->n_runs; r++) {
            solved += pd->runs[r].status == RL_RUN_EXACT;
            double m = run_prop(&pd->runs[r], "memory");
            if (isfinite(m) && m > mem)
                mem = m;
        }
        rl_median_ci ci;
        char med[64] = "-", range[64] = "-";
        if (n && rl_stats_median_ci(t, n, 0.95, &ci) == RL_OK) {
            if (ci.available)
                snprintf(med, sizeof med, "%.4g s [%.4g, %.4g]", ci.median, ci.lo, ci.hi);
            else
                snprintf(med, sizeof med, "%.4g s [n/a: n < 6]", ci.median);
            double lo = t[0], hi = t[0];
            for (size_t i = 1; i < n; i++)
                lo = fmin(lo, t[i]), hi = fmax(hi, t[i]);
            snprintf(range, sizeof range, "%.4g ... %.4g s", lo, hi);
            if (solved && ci.median < best_median)
                best_median = ci.median, best = p;
        }
        printf("%-20s %5.0f%%  %-34s %-26s %.3g MB\n", pd->name,
               pd->n_runs ? 100.0 * (double)solved / (double)pd->n_runs : 0.0, med, range, mem);
        free(t);
    }
    if (best == SIZE_MAX || e->n_planners < 2)
        return;
    const rl_bench_planner_data *bp = &e->planners[best];
    double *bt = malloc((bp->n_runs ? bp->n_runs : 1) * sizeof *bt);
    if (!bt)
        return;
    size_t bn = planner_times(bp, bt);
    printf("\n%s ran fastest (median time); it is\n", bp->name);
    for (size_t p = 0; p < e->n_planners; p++) {
        const rl_bench_planner_data *pd = &e->planners[p];
        double *t = p == best ? NULL : malloc((pd->n_runs ? pd->n_runs : 1) * sizeof *t);
        if (!t)
            continue;
        size_t n = planner_times(pd, t), solved = 0;
        for (size_t r = 0; r < pd->n_runs; r++)
            solved += pd->runs[r].status == RL_RUN_EXACT;
        double med;
        rl_ranksum rs;
        if (!solved) /* a planner that fails fast is not faster: not compared */
            printf("  (%s solved no run: not compared)\n", pd->name);
        else if (n && rl_stats_median(t, n, &med) == RL_OK && best_median > 0 &&
            rl_stats_ranksum(bt, bn, t, n, &rs) == RL_OK)
            printf("  %8.2f x faster than %s (rank-sum p = %.2g%s)\n", med / best_median,
                   pd->name, rs.p, rs.p < 0.05 ? "" : ", not significant at 5%");
        free(t);
    }
    free(bt);
}

#ifdef RUNLAB_HAVE_EXAMPLES
/* Writes DIR/problem.json (format runlab-problem/1, docs/bench.md) and puts its absolute
 * path in out. */
static int write_problem_file(const rlx_problem *xp, const char *dir, char *out, size_t cap)
{
    char *json = rlx_problem_json(xp), path[PATH_MAX + 32], abs_dir[PATH_MAX];
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
#endif

static int run_spec(const spec_src *s, json_object *root, const char *out_opt, long jobs_opt,
                    const char *resume_dir, bool quiet, char *report_out, size_t report_cap)
{
    spec sp;
    int rc = spec_read(s, root, &sp);
    if (rc < 0)
        return cli_fail("bench", "%s", rl_error_last());
    void *problem = NULL;
    const char *setup = NULL;
#ifdef RUNLAB_HAVE_EXAMPLES
    rlx_problem *xp = rlx_problem_new(sp.problem);
    if (xp) {
        problem = xp;
        setup = rlx_problem_describe(xp);
    }
#endif
    rl_bench *b = rl_bench_new(sp.experiment, problem, setup);
    if (!b || add_planners(s, &sp, b, problem) < 0) {
        rl_bench_free(b);
#ifdef RUNLAB_HAVE_EXAMPLES
        rlx_problem_free(xp);
#endif
        return cli_fail("bench", "%s", rl_error_last());
    }
    if (problem) {
        char n[32];
        snprintf(n, sizeof n, "%d", rlx_problem_dimension(problem));
        if (!rl_bench_param(b, "dimension"))
            rl_bench_add_param(b, "dimension", RL_BENCH_INTEGER, n);
    }
    rl_bench_set_seed(b, (uint64_t)sp.seed);
    sp.req.jobs = (unsigned)(jobs_opt > 0 ? jobs_opt : sp.jobs);
    sp.req.problem_spec = sp.problem;

    char dir[PATH_MAX], path[PATH_MAX + 64], console[PATH_MAX + 64];
    int64_t started = rl_time_now_ns();
    if (resume_dir) {
        snprintf(dir, sizeof dir, "%s", resume_dir);
        /* the first session's start: the log keeps its one name, the database its date */
        snprintf(path, sizeof path, "%.4000s/spec.json", dir);
        json_object *saved = NULL, *st = NULL;
        if (rl_json_read_file(path, SPEC_MAX_BYTES, &saved) == RL_OK &&
            json_object_object_get_ex(saved, "started_ns", &st))
            started = json_object_get_int64(st);
        json_object_put(saved);
        sp.req.start_ns = started;
        char report_path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%.4000s/manifest.json", dir);
        snprintf(report_path, sizeof report_path, "%.4000s/report.html", dir);
        if (access(path, F_OK) == 0 && access(report_path, F_OK) == 0) {
            printf("%s: finished already (every run and output is written); nothing to "
                   "resume\n%s\n",
                   dir, dir);
            rl_bench_free(b);
#ifdef RUNLAB_HAVE_EXAMPLES
            rlx_problem_free(xp);
#endif
            return RL_EXIT_OK;
        }
    } else {
        const char *root_dir = out_opt ? out_opt : sp.out ? sp.out : "bench-results";
        char stamp[RL_TIME_DIRSTAMP_LEN], name[RL_NAME_MAX + 1], safe[RL_NAME_MAX + 1];
        rl_time_format_dirstamp(started, stamp, sizeof stamp);
        rl_path_sanitize_name(sp.experiment, safe);
        for (char *c = safe; *c; c++)
            if (*c == ' ')
                *c = '_';
        snprintf(name, sizeof name, "%.100s_%s", safe, stamp);
        if ((rc = rl_fs_mkdirs(root_dir)) < 0 ||
            (rc = rl_fs_mkdir_new(root_dir, name, RL_MKDIR_ADD_SUFFIX, dir, sizeof dir)) < 0) {
            rl_bench_free(b);
            return cli_fail("bench", "%s", rl_error_last());
        }
        /* the spec as run, for --resume and for the manifest */
        snprintf(path, sizeof path, "%s/spec.json", dir);
        json_object *saved = json_object_new_object();
        json_object_object_add(saved, "source", json_object_new_string(s->path));
        if (s->dir)
            json_object_object_add(saved, "source_dir", json_object_new_string(s->dir));
        json_object_object_add(saved, "started_ns", json_object_new_int64(started));
        json_object_object_add(saved, "spec", json_object_get(root));
        rc = rl_json_write_file(path, saved);
        json_object_put(saved);
    }
    /* Ctrl+C from here on says where the runs are and how to resume: armed before the
       lock, so whoever sees DIR/.lock appear can interrupt and get the note. */
    if (rc == RL_OK)
        arm_interrupt_note(dir);
    /* One harness per directory: a second one (a --resume while the first still runs)
       would corrupt the journal. */
    int lock_fd = rc == RL_OK ? lock_dir(dir) : -1;
    if (rc == RL_OK && lock_fd < 0)
        rc = rl_error_last_code();
    snprintf(console, sizeof console, "%s/console", dir);
    if (rc == RL_OK) /* a --resume finds it there: never through a link */
        rc = rl_fs_mkdir_in(dir, "console", console, sizeof console);
    char problem_file[PATH_MAX];
#ifdef RUNLAB_HAVE_EXAMPLES
    /* the built-in problem's geometry for executable planners (RUNLAB_PROBLEM_FILE), by an
       absolute path: a planner may change its directory */
    if (rc == RL_OK && xp)
        rc = write_problem_file(xp, dir, problem_file, sizeof problem_file);
    if (rc == RL_OK && xp)
        sp.req.problem_file = problem_file;
#else
    (void)problem_file;
#endif
    /* the one start time: spec.json's, the log's name and date, the manifest's (the
       engine taking its own clock reading a moment later could name a resumed
       benchmark's log for another second) */
    sp.req.start_ns = started;
    snprintf(path, sizeof path, "%s/journal.tsv", dir);
    sp.req.console_dir = console;
    sp.req.journal_path = path;
    ui u = {0};
    size_t total = (size_t)sp.req.run_count * rl_bench_planner_count(b);
    if (rc == RL_OK && !quiet)
        rc = rl_progress_new(&u.bar, stderr, "runs", total, -1);
    rl_bench_events ev = {.on_run_done = on_run_done, .ud = &u};
    rl_bench_set_events(b, &ev);
    if (rc == RL_OK)
        rc = rl_bench_execute(b, &sp.req);
    rl_progress_finish(u.bar);
    disarm_interrupt_note();
    char log_name[256];
    if (rc == RL_OK)
        rc = write_outputs(dir, rl_bench_results(b), root, started, log_name, sizeof log_name);
    /* The report reads results.json back: it sits in the analysis layer, above the
     * engine, and `bench report DIR` takes the same path. */
    char report[PATH_MAX];
    if (rc == RL_OK)
        rc = rl_bench_report_write(dir, NULL, report, sizeof report);
    if (rc == RL_OK && report_out)
        snprintf(report_out, report_cap, "%s", report);
    if (rc == RL_OK) {
        const rl_bench_experiment *e = rl_bench_results(b);
        for (size_t p = 0; p < e->n_planners; p++) {
            size_t by[RL_RUN_STATUS_COUNT] = {0};
            for (size_t r = 0; r < e->planners[p].n_runs; r++)
                by[e->planners[p].runs[r].status]++;
            printf("%-20s %3zu runs:", e->planners[p].name, e->planners[p].n_runs);
            const char *sep = " ";
            for (int st = 0; st < RL_RUN_STATUS_COUNT; st++)
                if (by[st]) {
                    printf("%s%zu %s", sep, by[st], rl_bench_status_name((rl_bench_status)st));
                    sep = ", ";
                }
            printf("\n");
        }
        print_comparison(e);
        printf("%s\n", dir);
    }
    /* A planner none of whose runs solved is a failed benchmark for scripts and CI,
       with the first reason of each such planner on stderr. */
    bool a_planner_failed = false;
    if (rc == RL_OK) {
        const rl_bench_experiment *e = rl_bench_results(b);
        for (size_t p = 0; p < e->n_planners; p++) {
            const rl_bench_planner_data *pd = &e->planners[p];
            bool solved = false;
            const char *first = NULL;
            for (size_t r = 0; r < pd->n_runs; r++) {
                rl_bench_status st = pd->runs[r].status;
                solved |= st == RL_RUN_EXACT || st == RL_RUN_APPROXIMATE;
                if (!first && pd->runs[r].reason)
                    first = pd->runs[r].reason;
            }
            if (pd->n_runs && !solved && !quiet) {
                a_planner_failed = true;
                fprintf(stderr, "runlab: bench: planner '%s' solved none of its %zu runs%s%s\n",
                        pd->name, pd->n_runs, first ? "; first reason: " : "", first ? first : "");
            }
        }
    }
    if (lock_fd >= 0)
        close(lock_fd);
    rl_bench_free(b);
#ifdef RUNLAB_HAVE_EXAMPLES
    rlx_problem_free(xp);
#endif
    if (rc < 0)
        return cli_fail("bench", "%s", rl_error_last());
    /* the demo's crashing planner fails on purpose: only a real benchmark fails for it */
    return a_planner_failed && !quiet ? RL_EXIT_FAILURE : RL_EXIT_OK;
}

/* ---- import and merge ------------------------------------------------------------------ */

static int cmd_import(int argc, char **argv, bool merge)
{
    const char *db = NULL, *cmd = merge ? "bench merge" : "bench import";
    const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    size_t n = 0;
    if (!inputs)
        return cli_fail(cmd, "out of memory");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0) {
            if (i + 1 >= argc) {
                free(inputs);
                return cli_usage_error(cmd, "--db needs a file name");
            }
            db = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            free(inputs);
            if (merge)
                printf("Usage: runlab bench merge DIR... --db OUT.db\n\n"
                       "Adds the OMPL log of each benchmark directory to OUT.db (created if\n"
                       "missing) as OMPL's ompl_benchmark_statistics.py would, views included.\n"
                       "An experiment OUT.db already holds (same name, host, date and seed) is\n"
                       "skipped with a warning, so merging twice never doubles a run.\n"
                       "Prints OUT.db's path. Exit codes: 0 ok, 1 unreadable input, 2 usage.\n");
            else
                printf("Usage: runlab bench import LOG... --db OUT.db\n\n"
                       "Reads OMPL benchmark logs (OMPL's own or runlab's) into OUT.db (created\n"
                       "if missing) in OMPL's schema, as ompl_benchmark_statistics.py does;\n"
                       "Planner Arena opens the result. An experiment OUT.db already holds is\n"
                       "skipped with a warning. Errors name the log's file and line.\n"
                       "Prints OUT.db's path. Exit codes: 0 ok, 1 unreadable input, 2 usage.\n");
            return RL_EXIT_OK;
        } else {
            inputs[n++] = argv[i];
        }
    }
    if (!db || !n) {
        free(inputs);
        return cli_usage_error(cmd, merge ? "need DIR... and --db OUT.db"
                                          : "need LOG... and --db OUT.db");
    }
    char **logs = calloc(MAX_LOGS, sizeof *logs);
    size_t nl = 0;
    for (size_t i = 0; i < n && logs; i++) {
        if (!merge) {
            logs[nl++] = strdup(inputs[i]);
            continue;
        }
        /* a benchmark directory: its OMPL log(s), in name order */
        struct dirent **ents;
        int k = scandir(inputs[i], &ents, NULL, alphasort);
        if (k < 0) {
            int rc = cli_fail(cmd, "%s: %s", inputs[i], strerror(errno));
            for (size_t j = 0; j < nl; j++)
                free(logs[j]);
            free(logs);
            free(inputs);
            return rc;
        }
        size_t before = nl;
        for (int j = 0; j < k; j++) {
            size_t l = strlen(ents[j]->d_name);
            if (l > 4 && strcmp(ents[j]->d_name + l - 4, ".log") == 0 && nl < MAX_LOGS) {
                char p[PATH_MAX];
                snprintf(p, sizeof p, "%s/%s", inputs[i], ents[j]->d_name);
                logs[nl++] = strdup(p);
            }
            free(ents[j]);
        }
        free(ents);
        if (nl == before) {
            int rc = cli_fail(cmd, "%s: no benchmark log (*.log) in this directory", inputs[i]);
            for (size_t j = 0; j < nl; j++)
                free(logs[j]);
            free(logs);
            free(inputs);
            return rc;
        }
    }
    int rc = logs ? rl_bench_import_logs((const char *const *)logs, nl, db)
                  : rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t j = 0; logs && j < nl; j++)
        free(logs[j]);
    free(logs);
    free(inputs);
    if (rc < 0)
        return cli_fail(cmd, "%s", rl_error_last());
    printf("%s\n", db);
    return RL_EXIT_OK;
}

/* `bench report DIR`: (re)writes DIR/report.html and DIR/figures/ from DIR/results.json. */
static int cmd_report(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("Usage: runlab bench report DIR\n\n"
               "Rewrites DIR/report.html and DIR/figures/ from DIR/results.json alone, so it\n"
               "also works on a copied or merged-in benchmark directory. Prints the report's\n"
               "path. Exit codes: 0 ok, 1 DIR has no readable results.json, 2 usage.\n");
        return RL_EXIT_OK;
    }
    if (argc != 2)
        return cli_usage_error("bench report", "expected one benchmark directory");
    char report[PATH_MAX];
    if (rl_bench_report_write(argv[1], NULL, report, sizeof report) < 0)
        return cli_fail("bench report", "%s", rl_error_last());
    printf("%s\n", report);
    return RL_EXIT_OK;
}

/* The benchmark part of `runlab demo`: four built-in planners and one that crashes on
 * the maze, written under `out_parent`. */
int cli_bench_demo(const char *out_parent)
{
    static const char DEMO_SPEC[] = "experiment: demo maze\n"
                                    "problem: maze2d\n"
                                    "seed: 1\n"
                                    "max_time: 0.3\n"
                                    "max_mem: 512\n"
                                    "runs: 8\n"
                                    "parameters: {walls: 5}\n"
                                    "planners:\n"
                                    "  - {name: RRT, planner: rrt}\n"
                                    "  - {name: RRTConnect, planner: rrtconnect}\n"
                                    "  - {name: RRTstar, planner: rrtstar}\n"
                                    "  - {name: PRM, planner: prm}\n"
                                    "  - {name: crashing planner, planner: crash}\n";
    spec_src s = {"<demo spec>", (char *)DEMO_SPEC, NULL};
    json_object *root = NULL;
    if (rl_yaml_parse(DEMO_SPEC, sizeof DEMO_SPEC - 1, s.path, &root) < 0)
        return cli_fail("demo", "%s", rl_error_last());
    printf("Benchmark (runlab bench): 5 planners x 8 runs on a 2-D maze, each run in its own "
           "process\n");
    fflush(stdout);
    char report[PATH_MAX] = "";
    int rc = run_spec(&s, root, out_parent, 1, NULL, true, report, sizeof report);
    json_object_put(root);
    if (rc == RL_EXIT_OK)
        printf("Benchmark report: %s\n", report);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "import") == 0)
        return cmd_import(argc - 1, argv + 1, false);
    if (argc >= 2 && strcmp(argv[1], "merge") == 0)
        return cmd_import(argc - 1, argv + 1, true);
    if (argc >= 2 && strcmp(argv[1], "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    static const struct option opts[] = {{"out-dir", required_argument, NULL, 'o'},
                                         {"out", required_argument, NULL, 'o'}, /* old name */
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"resume", required_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL, *resume = NULL;
    long jobs = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:j:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'j': {
            char *end;
            jobs = strtol(optarg, &end, 10);
            if (*end || jobs < 1 || jobs > 256)
                return cli_usage_error("bench", "-j %s: expected 1..256", optarg);
            break;
        }
        case 'r': resume = optarg; break;
        case 'h': usage(stdout); return RL_EXIT_OK;
        default: return cli_usage_error("bench", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (resume) {
        if (optind != argc)
            return cli_usage_error("bench", "--resume DIR takes no spec (DIR has spec.json)");
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%.4000s/spec.json", resume);
        json_object *saved = NULL, *root = NULL;
        if (rl_json_read_file(path, SPEC_MAX_BYTES, &saved) < 0)
            return cli_fail("bench", "--resume %s: %s", resume, rl_error_last());
        if (!json_object_object_get_ex(saved, "spec", &root)) {
            json_object_put(saved);
            return cli_fail("bench", "%s: no 'spec' key", path);
        }
        json_object *dir_j = NULL;
        spec_src s = {path, NULL, NULL};
        if (json_object_object_get_ex(saved, "source_dir", &dir_j) &&
            json_object_is_type(dir_j, json_type_string))
            s.dir = json_object_get_string(dir_j);
        int r = run_spec(&s, root, NULL, jobs, resume, false, NULL, 0);
        json_object_put(saved);
        return r;
    }
    if (optind + 1 != argc)
        return cli_usage_error("bench", "expected one SPEC.yaml (or import, merge, --resume)");
    spec_src s = {argv[optind], NULL, NULL};
    char spec_dir[PATH_MAX];
    char *slash = strrchr(argv[optind], '/');
    snprintf(spec_dir, sizeof spec_dir, "%.*s", slash ? (int)(slash - argv[optind]) : 1,
             slash ? argv[optind] : ".");
    char spec_dir_abs[PATH_MAX];
    if (realpath(spec_dir[0] ? spec_dir : "/", spec_dir_abs))
        s.dir = spec_dir_abs;
    size_t len;
    if (rl_fs_read_all(s.path, SPEC_MAX_BYTES, &s.text, &len) < 0)
        return cli_fail("bench", "%s", rl_error_last());
    json_object *root = NULL;
    if (rl_yaml_parse(s.text, len, s.path, &root) < 0) {
        free(s.text);
        return cli_fail("bench", "%s", rl_error_last());
    }
    int r = run_spec(&s, root, out, jobs, NULL, false, NULL, 0);
    json_object_put(root);
    free(s.text);
    return r;
}
