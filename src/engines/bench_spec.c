/* Benchmark specs: the YAML document `runlab bench` runs, read into a checked spec
 * (top-level keys, types, ranges) with errors naming file, line and key, and turned into
 * a benchmark's planners and parameters (built-in ones through rl_bench_builtins,
 * programs resolved from the spec's directory or PATH). */
#include "engines/bench_spec.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/yaml.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SPEC_MAX_BYTES = 1 << 20 };

/* ---- spec errors with file, line and key -------------------------------------------- */

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
                                       "confidence",
                                       "min_runs",
                                       "max_runs",
                                       "goal",
                                       "attribute",
                                       "relative_width",
                                       "width",
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

/* The keys of `runs: auto` (docs/bench.md), read and checked whether or not the runs are
 * adaptive, so a typo is found before a fixed benchmark runs too. */
static int read_adaptive_keys(const spec_src *s, json_object *root, rl_bench_adaptive_keys *a)
{
    *a = (rl_bench_adaptive_keys){.confidence = 0.95,
                                  .min_runs = 10,
                                  .max_runs = 200,
                                  .goal = "ranking",
                                  .attribute = "time",
                                  .relative_width = 0.1,
                                  .width = 0.05};
    double lo = a->min_runs, hi = a->max_runs;
    int rc;
    if ((rc = get_num(s, root, "confidence", 0.5, 0.9999, &a->confidence)) < 0 ||
        (rc = get_num(s, root, "min_runs", 2, 100000, &lo)) < 0 ||
        (rc = get_num(s, root, "max_runs", 2, 100000, &hi)) < 0 ||
        (rc = get_num(s, root, "relative_width", 1e-6, 10, &a->relative_width)) < 0 ||
        (rc = get_num(s, root, "width", 1e-6, 0.5, &a->width)) < 0 ||
        (rc = get_str(s, root, "goal", false, &a->goal)) < 0 ||
        (rc = get_str(s, root, "attribute", false, &a->attribute)) < 0)
        return rc;
    if (lo != floor(lo) || hi != floor(hi))
        return spec_err(s, NULL, 0, lo != floor(lo) ? "min_runs" : "max_runs",
                        "expected a whole number");
    if (hi < lo)
        return spec_err(s, NULL, 0, "max_runs", "%g is below min_runs %g", hi, lo);
    a->min_runs = (unsigned)lo;
    a->max_runs = (unsigned)hi;
    if (strcmp(a->goal, "ranking") != 0 && strcmp(a->goal, "ci") != 0 &&
        strcmp(a->goal, "success") != 0)
        return spec_err(s, NULL, 0, "goal", "'%s': expected ranking, ci or success", a->goal);
    if (rl_bench_check_name(a->attribute, "attribute") < 0)
        return spec_err(s, NULL, 0, "attribute", "%s", rl_error_last());
    return RL_OK;
}

bool rl_bench_spec_adaptive(const rl_bench_spec *spec, rl_bench_adaptive_keys *out)
{
    *out = spec->sp.adapt;
    return spec->sp.adaptive;
}

int rl_bench_spec_read(const spec_src *s, json_object *root, spec_keys *sp)
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
    if ((rc = read_adaptive_keys(s, root, &sp->adapt)) < 0)
        return rc;
    d = sp->req.run_count;
    const char *runs_key =
        json_object_object_get_ex(root, "run_count", NULL) ? "run_count" : "runs";
    json_object *runs_v;
    if (json_object_object_get_ex(root, runs_key, &runs_v) &&
        json_object_is_type(runs_v, json_type_string)) {
        if (strcmp(json_object_get_string(runs_v), "auto") != 0)
            return spec_err(s, NULL, 0, runs_key, "expected a whole number or auto");
        sp->adaptive = true;
        d = sp->adapt.max_runs; /* the most it can take */
    } else if ((rc = get_num(s, root, runs_key, 0, 1e6, &d)) < 0)
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

int rl_bench_spec_add_planners(const spec_src *s, const spec_keys *sp, rl_bench *b,
                               const rl_bench_builtins *builtins, void *problem,
                               const char *problem_why)
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
            if (!builtins)
                return spec_err(s, "planners", (long)i, "planner",
                                "this build has no built-in planners; use 'command'");
            if (!problem)
                return spec_err(s, NULL, 0, "problem",
                                "built-in planners need a built-in problem: %s", problem_why);
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
            planner = builtins->planner_new(kind, name, keys, vals, n);
            for (size_t k = 0; k < n; k++)
                free(owned[k]);
            if (!planner)
                return spec_err(s, "planners", (long)i,
                                settings && rl_error_last_code() == RL_EINVAL ? "settings"
                                                                              : "planner",
                                "%s", rl_error_last());
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

/* ---- making and freeing specs -------------------------------------------------------- */

void rl_bench_spec_free(rl_bench_spec *spec)
{
    if (!spec)
        return;
    json_object_put(spec->doc);
    free(spec->src.path);
    free(spec->src.text);
    free(spec->src.dir);
    free(spec);
}

const char *rl_bench_spec_experiment(const rl_bench_spec *spec)
{
    return spec->sp.experiment;
}

/* A new spec of `source` (copied); the caller fills doc and text. */
static rl_bench_spec *spec_new(const char *source, const char *source_dir)
{
    rl_bench_spec *spec = calloc(1, sizeof *spec);
    if (spec)
        spec->src.path = strdup(source);
    if (spec && source_dir)
        spec->src.dir = strdup(source_dir);
    if (!spec || !spec->src.path || (source_dir && !spec->src.dir)) {
        rl_bench_spec_free(spec);
        rl_error_set(RL_ENOMEM, "out of memory");
        return NULL;
    }
    return spec;
}

int rl_bench_spec_parse(const char *text, size_t len, const char *source, const char *source_dir,
                        rl_bench_spec **out)
{
    *out = NULL;
    rl_bench_spec *spec = spec_new(source, source_dir);
    if (!spec)
        return RL_ENOMEM;
    spec->src.text = malloc(len + 1);
    if (!spec->src.text) {
        rl_bench_spec_free(spec);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    memcpy(spec->src.text, text, len);
    spec->src.text[len] = '\0';
    int rc = rl_yaml_parse(text, len, source, &spec->doc);
    if (rc == RL_OK)
        rc = rl_bench_spec_read(&spec->src, spec->doc, &spec->sp);
    if (rc < 0) {
        rl_bench_spec_free(spec);
        return rc;
    }
    *out = spec;
    return RL_OK;
}

int rl_bench_spec_load(const char *path, rl_bench_spec **out)
{
    *out = NULL;
    /* relative commands resolve from the spec's directory, wherever it is run from */
    char spec_dir[PATH_MAX], spec_dir_abs[PATH_MAX];
    const char *slash = strrchr(path, '/');
    snprintf(spec_dir, sizeof spec_dir, "%.*s", slash ? (int)(slash - path) : 1,
             slash ? path : ".");
    bool have_dir = realpath(spec_dir[0] ? spec_dir : "/", spec_dir_abs) != NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = rl_fs_read_all(path, SPEC_MAX_BYTES, &text, &len);
    if (rc < 0)
        return rc;
    rc = rl_bench_spec_parse(text, len, path, have_dir ? spec_dir_abs : NULL, out);
    free(text);
    return rc;
}

int rl_bench_spec_load_dir(const char *dir, rl_bench_spec **out)
{
    *out = NULL;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%.4000s/spec.json", dir);
    json_object *saved = NULL, *root = NULL, *v = NULL;
    int rc = rl_json_read_file(path, SPEC_MAX_BYTES, &saved);
    if (rc < 0)
        return rc;
    if (!json_object_object_get_ex(saved, "spec", &root)) {
        json_object_put(saved);
        return rl_error_set(RL_EPARSE, "%s: no 'spec' key", path);
    }
    const char *source_dir = NULL;
    if (json_object_object_get_ex(saved, "source_dir", &v) &&
        json_object_is_type(v, json_type_string))
        source_dir = json_object_get_string(v);
    rl_bench_spec *spec = spec_new(path, source_dir);
    if (!spec) {
        json_object_put(saved);
        return RL_ENOMEM;
    }
    spec->doc = saved;
    /* the first session's start: the log keeps its one name, the database its date */
    if (json_object_object_get_ex(saved, "started_ns", &v))
        spec->started_ns = json_object_get_int64(v);
    /* a shard's directory: the resume runs that shard's cells only */
    json_object *sh = NULL, *k = NULL, *nn = NULL;
    if (json_object_object_get_ex(saved, "shard", &sh) &&
        json_object_object_get_ex(sh, "index", &k) && json_object_object_get_ex(sh, "count", &nn)) {
        int64_t ki = json_object_get_int64(k), ni = json_object_get_int64(nn);
        if (ni < 1 || ni > 100000 || ki < 1 || ki > ni) {
            rl_bench_spec_free(spec);
            return rl_error_set(RL_EPARSE, "%s: shard %lld/%lld: K must be 1..N, N 1..100000",
                                path, (long long)ki, (long long)ni);
        }
        spec->shard_index = (unsigned)ki;
        spec->shard_count = (unsigned)ni;
    }
    if ((rc = rl_bench_spec_read(&spec->src, root, &spec->sp)) < 0) {
        rl_bench_spec_free(spec);
        return rc;
    }
    *out = spec;
    return RL_OK;
}

void rl_bench_spec_shape(const rl_bench_spec *spec, size_t *planners, unsigned *runs,
                         double *max_time)
{
    json_object *pl = NULL;
    if (planners)
        *planners = json_object_object_get_ex(spec->sp.root, "planners", &pl) &&
                            json_object_is_type(pl, json_type_array)
                        ? json_object_array_length(pl)
                        : 0;
    if (runs)
        *runs = spec->sp.adaptive ? spec->sp.adapt.max_runs : spec->sp.req.run_count;
    if (max_time)
        *max_time = spec->sp.req.max_time;
}
