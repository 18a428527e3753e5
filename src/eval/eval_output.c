/* Writes one evaluation directory: config.yaml (the effective configuration), checks.csv,
 * summary.json (issue 15's shape), figures/<name>.png/.svg with their records, and a
 * self-contained report.html whose top says the verdict and how the run ended, then the
 * checks that did not pass, the passed ones folded per metric (eval_report_checks.c), the
 * figures and the run's facts. */
#include "eval/eval_output.h"

#include "eval/eval_coverage.h"
#include "eval/eval_decoding.h"
#include "core/text.h"
#include "eval/eval_parallel.h"
#include "eval/eval_report_checks.h"
#include "runlab/csv.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/number.h"
#include "runlab/report.h"
#include "runlab/yaml.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_text(const char *dir, const char *name, const char *text, size_t len)
{
    char path[PATH_MAX];
    int rc = rl_path_join(path, sizeof path, dir, name);
    if (rc == RL_OK)
        rc = rl_fs_write_atomic(path, text, len, 0644);
    return rc;
}

static void put_num(rl_buf *b, double v)
{
    char num[64];
    if (!isfinite(v))
        return;
    rl_format_f64(v, num, sizeof num);
    rl_buf_puts(b, num);
}

static char *vehicles_text(const rl_eval_check *c)
{
    rl_buf b = {0};
    rl_buf_puts(&b, "");
    for (size_t i = 0; i < c->nvehicles; i++)
        rl_buf_printf(&b, "%s%d", i ? " " : "", c->vehicles[i]);
    return rl_buf_take(&b, NULL);
}

/* "t0..t1;t0..t1" (checks.csv), or with "; " between intervals (the report: a line may
 * break there). */
static char *intervals_text(const rl_eval_check *c, const char *sep)
{
    rl_buf b = {0};
    rl_buf_puts(&b, "");
    for (size_t i = 0; i < c->nintervals; i++) {
        if (i)
            rl_buf_puts(&b, sep);
        put_num(&b, c->intervals[i][0]);
        rl_buf_puts(&b, "..");
        put_num(&b, c->intervals[i][1]);
    }
    return rl_buf_take(&b, NULL);
}

static char *num_text(double v)
{
    rl_buf b = {0};
    rl_buf_puts(&b, "");
    put_num(&b, v);
    return rl_buf_take(&b, NULL);
}

static int write_csv(const eval_output *o)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return rl_error_set(RL_ENOMEM, "checks.csv: out of memory");
    rl_csv_writer *w;
    int rc = rl_csv_writer_new(&w, f, ',', false);
    if (rc == RL_OK) {
        static const char *const head[] = {"metric", "check",     "vehicles", "status", "value",
                                           "threshold", "unit", "intervals", "reason",
                                           "coverage"};
        rc = rl_csv_write_row(w, head, 10);
        for (size_t i = 0; rc == RL_OK && i < o->sink->nchecks; i++) {
            const rl_eval_check *c = &o->sink->checks[i];
            char *veh = vehicles_text(c), *iv = intervals_text(c, ";");
            char *val = num_text(c->value), *thr = num_text(c->threshold);
            char *cov = num_text(eval_check_coverage(c));
            if (!veh || !iv || !val || !thr || !cov)
                rc = rl_error_set(RL_ENOMEM, "checks.csv: out of memory");
            else {
                const char *row[] = {c->metric, c->check, veh, rl_eval_status_name(c->status),
                                     val, thr, c->unit, iv, c->reason, cov};
                rc = rl_csv_write_row(w, row, 10);
            }
            free(veh), free(iv), free(val), free(thr), free(cov);
        }
        rl_csv_writer_free(w);
    }
    fclose(f);
    if (rc == RL_OK)
        rc = write_text(o->dir, "checks.csv", text, len);
    free(text);
    return rc;
}

static int json_check(rl_json_writer *j, const rl_eval_check *c)
{
    rl_json_begin_object(j);
    rl_json_key(j, "metric"), rl_json_string(j, c->metric);
    rl_json_key(j, "check"), rl_json_string(j, c->check);
    rl_json_key(j, "vehicles"), rl_json_begin_array(j);
    for (size_t i = 0; i < c->nvehicles; i++)
        rl_json_int64(j, c->vehicles[i]);
    rl_json_end_array(j);
    rl_json_key(j, "status"), rl_json_string(j, rl_eval_status_name(c->status));
    rl_json_key(j, "value"), rl_json_double(j, c->value);
    rl_json_key(j, "threshold"), rl_json_double(j, c->threshold);
    rl_json_key(j, "unit"), rl_json_string(j, c->unit);
    rl_json_key(j, "intervals"), rl_json_begin_array(j);
    for (size_t i = 0; i < c->nintervals; i++) {
        rl_json_begin_array(j);
        rl_json_double(j, c->intervals[i][0]);
        rl_json_double(j, c->intervals[i][1]);
        rl_json_end_array(j);
    }
    rl_json_end_array(j);
    rl_json_key(j, "reason"), rl_json_string(j, c->reason);
    rl_json_key(j, "figure"), c->figure ? rl_json_string(j, c->figure) : rl_json_null(j);
    rl_json_key(j, "coverage"), rl_json_double(j, eval_check_coverage(c));
    rl_json_key(j, "judged_s"), rl_json_double(j, c->judged_s);
    rl_json_key(j, "window_s"), rl_json_double(j, c->window_s);
    return rl_json_end_object(j);
}

/* Each line of `text` ('\n'-separated) as a JSON string. */
static void json_lines(rl_json_writer *j, const char *text)
{
    rl_json_begin_array(j);
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        rl_json_string_n(j, p, n);
        p += n + (nl ? 1 : 0);
    }
    rl_json_end_array(j);
}

static int write_summary(const eval_output *o)
{
    rl_json_writer *j;
    int rc = rl_json_writer_new_buffer(&j, RL_JSON_PRETTY);
    if (rc < 0)
        return rc;
    const eval_verdict *v = o->verdict;
    const eval_run *run = o->run;
    rl_json_begin_object(j);
    rl_json_key(j, "format"), rl_json_string(j, "runlab.evaluation");
    rl_json_key(j, "format_version"), rl_json_int64(j, 1);
    /* passed is the result being PASS: INSUFFICIENT and UNAVAILABLE checks leave it false. */
    rl_json_key(j, "passed"), rl_json_bool(j, v->verdict == RL_EVAL_VERDICT_PASS);
    rl_json_key(j, "result"), rl_json_string(j, rl_eval_verdict_name(v->verdict));
    rl_json_key(j, "partial"), rl_json_bool(j, v->partial);
    rl_json_key(j, "interruption");
    if (v->interruption[0])
        rl_json_string(j, v->interruption);
    else
        rl_json_null(j);
    rl_json_key(j, "run"), rl_json_begin_object(j);
    rl_json_key(j, "directory"), rl_json_string(j, run->dir);
    rl_json_key(j, "run_id"), rl_json_string(j, run->run_id);
    rl_json_key(j, "state"), rl_json_string(j, run->state);
    rl_json_key(j, "reason"), rl_json_string(j, run->state_reason);
    rl_json_key(j, "planned_duration"), rl_json_double(j, run->planned_duration);
    rl_json_key(j, "vehicles"), rl_json_begin_array(j);
    for (size_t i = 0; i < run->nvehicles; i++)
        rl_json_int64(j, run->vehicles[i].id);
    rl_json_end_array(j);
    rl_json_key(j, "map"), run->map_missing ? rl_json_null(j)
                           : rl_json_string(j, run->map_given ? run->map_given : "map/runtime_map.bin");
    rl_json_end_object(j);
    rl_json_key(j, "window"), rl_json_begin_object(j);
    rl_json_key(j, "start"), rl_json_double(j, run->window_start);
    rl_json_key(j, "stop"), rl_json_double(j, run->window_stop);
    rl_json_key(j, "note"), run->window_note ? rl_json_string(j, run->window_note) : rl_json_null(j);
    rl_json_end_object(j);
    rl_json_key(j, "notes"), json_lines(j, o->notes); /* one per line of the report's top */
    rl_json_key(j, "shared_reasons"), json_lines(j, v->shared);
    rl_json_key(j, "metrics"), rl_json_begin_array(j);
    for (size_t i = 0; i < eval_metric_total; i++)
        if (o->chosen[i])
            rl_json_string(j, eval_metrics[i].name);
    rl_json_end_array(j);
    rl_json_key(j, "counts"), rl_json_begin_object(j);
    for (int s = 0; s < RL_EVAL_STATUS_COUNT; s++)
        rl_json_key(j, rl_eval_status_name((rl_eval_status)s)), rl_json_int64(j, (int64_t)v->counts[s]);
    rl_json_end_object(j);
    rl_json_key(j, "decoding"), eval_decoding_json(j, run);
    rl_json_key(j, "checks"), rl_json_begin_array(j);
    for (size_t i = 0; i < o->sink->nchecks; i++)
        json_check(j, &o->sink->checks[i]);
    rl_json_end_array(j);
    rl_json_end_object(j);
    rc = rl_json_writer_finish(j);
    if (rc == RL_OK) {
        size_t len;
        const char *text = rl_json_writer_buffer(j, &len);
        rl_buf b = {0};
        rl_buf_put(&b, text, len);
        rl_buf_putc(&b, '\n');
        char *all = rl_buf_take(&b, &len);
        rc = all ? write_text(o->dir, "summary.json", all, len) : RL_ENOMEM;
        free(all);
    }
    rl_json_writer_free(j);
    return rc;
}

static int write_config(const eval_output *o)
{
    char path[PATH_MAX];
    int rc = rl_path_join(path, sizeof path, o->dir, "config.yaml");
    return rc == RL_OK ? rl_yaml_write_file(path, o->config) : rc;
}

/* One figure's files: PNG (unless SVG alone was asked), SVG (kept in svgs[i] for the
 * report) and the record. */
static int write_figure(const eval_output *o, const char *figdir, size_t i, char **svg)
{
    const eval_figure_entry *e = &o->sink->figures[i];
    const char *inputs[] = {o->run->bag_path, o->run->dir};
    char path[PATH_MAX];
    int rc;
    if ((size_t)snprintf(path, sizeof path, "%s/%s.png", figdir, e->name) >= sizeof path)
        return rl_error_set(RL_ERANGE, "%s: path too long", figdir);
    if (o->png && (rc = rl_figure_save(e->fig, path, RL_PLOT_PNG)) < 0)
        return rl_error_prefix(rc, "figure %s", e->name);
    memcpy(path + strlen(path) - 3, "svg", 3);
    size_t len;
    if ((rc = rl_figure_to_svg(e->fig, NULL, svg, &len)) < 0 ||
        (rc = rl_fs_write_atomic(path, *svg, len, 0644)) < 0)
        return rl_error_prefix(rc, "figure %s: %s", e->name, path);
    rl_figure_record rec = {o->argc, o->argv, inputs, 2, e->caption};
    return rl_figure_record_write(path, &rec);
}

/* The files before the report are written by several threads at once (eval_parallel;
 * rl_figure: different figures may be used from different threads): drawing the figures
 * is most of an evaluation's time after reading, and config.yaml, checks.csv and
 * summary.json are written beside them. Tasks 0..2 are those three files, in the order a
 * failure among them is reported (and decoding.csv), then one per figure; the maps of the footprint metrics,
 * the costliest, come last, and eval_parallel starts from the last. */
enum { SMALL_FILES = 4 };

typedef struct output_tasks {
    const eval_output *o;
    const char *figdir;
    char **svgs;
} output_tasks;

static int output_task(void *arg, size_t i)
{
    output_tasks *f = arg;
    switch (i) {
    case 0: return write_config(f->o);
    case 1: return write_csv(f->o);
    case 2: return write_summary(f->o);
    case 3: return eval_decoding_csv(f->o->dir, f->o->run);
    default: return write_figure(f->o, f->figdir, i - SMALL_FILES, &f->svgs[i - SMALL_FILES]);
    }
}

/* The three files and each figure as PNG and as SVG with its record; the SVG documents stay
 * in `svgs` for the report, which inlines them instead of drawing every figure again. */
static int write_files(const eval_output *o, char **svgs)
{
    char figdir[PATH_MAX];
    size_t n = o->sink->nfigures;
    int rc = n > 0 ? rl_fs_mkdir_in(o->dir, "figures", figdir, sizeof figdir)
                   : rl_path_join(figdir, sizeof figdir, o->dir, "figures");
    if (rc < 0)
        return rc;
    output_tasks f = {o, figdir, svgs};
    return eval_parallel(SMALL_FILES + n, output_task, &f, NULL);
}

static int write_report(const eval_output *o, char *const *svgs)
{
    const eval_run *run = o->run;
    char title[512];
    snprintf(title, sizeof title, "Evaluation of %s", *run->run_id ? run->run_id : run->dir);
    rl_report *r;
    int rc = rl_report_new(&r, title);
    if (rc < 0)
        return rc;
    const eval_verdict *v = o->verdict;
    static const rl_badge badges[] = {RL_BADGE_PASS, RL_BADGE_FAIL, RL_BADGE_INCOMPLETE};
    rl_report_status(r, "Result", badges[v->verdict]);
    char line[512];
    const size_t *counts = v->counts;
    snprintf(line, sizeof line, "%s%s%zu checks: %zu PASS, %zu FAIL, %zu INSUFFICIENT, %zu UNAVAILABLE, %zu N/A",
             v->interruption, v->interruption[0] ? "; " : "", o->sink->nchecks, counts[0],
             counts[1], counts[2], counts[3], counts[4]);
    rl_report_paragraph(r, line);
    /* How the run ended and what that means for the data, right under the verdict. */
    const char *p = o->notes;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *note = strndup(p, n);
        if (note)
            rl_report_paragraph(r, note);
        free(note);
        p += n + (nl ? 1 : 0);
    }
    if (v->partial) {
        rl_buf m = {0};
        rl_buf_puts(&m, "A partial evaluation (--metrics): only ");
        for (size_t i = 0, k = 0; i < eval_metric_total; i++)
            if (o->chosen[i])
                rl_buf_printf(&m, "%s%s", k++ ? ", " : "", eval_metrics[i].name);
        rl_buf_puts(&m, " ran; `runlab list` keeps the latest full evaluation's result.");
        char *text = rl_buf_take(&m, NULL);
        if (text)
            rl_report_paragraph(r, text);
        free(text);
    }
    for (const char *q = v->shared; *q;) { /* reasons several checks share, once each */
        const char *nl = strchr(q, '\n');
        size_t n = nl ? (size_t)(nl - q) : strlen(q);
        char *one = strndup(q, n);
        if (one)
            rl_report_paragraph(r, one);
        free(one);
        q += n + (nl ? 1 : 0);
    }
    if ((rc = eval_report_checks(r, o->sink)) < 0)
        goto out;
    if ((rc = eval_decoding_report(r, run)) < 0)
        goto out;
    /* The figures follow the checks, each with the anchor the checks' links name. */
    if (o->sink->nfigures > 0)
        rl_report_heading(r, 2, "Figures");
    for (size_t i = 0; i < o->sink->nfigures; i++) {
        char anchor[160];
        eval_figure_anchor(&o->sink->figures[i], anchor, sizeof anchor);
        if ((rc = rl_report_figure_svg_at(r, svgs[i], o->sink->figures[i].caption, anchor)) < 0)
            goto out;
    }
    rl_report_kv_begin(r, "Run");
    rl_report_kv(r, "directory", run->dir);
    rl_report_kv(r, "run id", run->run_id);
    snprintf(line, sizeof line, "%s%s%s", run->state, *run->state_reason ? ": " : "",
             run->state_reason);
    rl_report_kv(r, "state", line);
    rl_report_kv(r, "bag", run->bag_path);
    if (run->map_given)
        snprintf(line, sizeof line, "%s (given with --map, not recorded with the run)",
                 run->map_given);
    rl_report_kv(r, "map", run->map_missing ? run->map_missing
                           : run->map_given ? line : "map/runtime_map.bin (SHA-256 checked)");
    snprintf(line, sizeof line, "%.3f .. %.3f s%s%s", run->window_start, run->window_stop,
             run->window_note ? "; " : "", run->window_note ? run->window_note : "");
    rl_report_kv(r, "window", line);
    rl_buf ids = {0};
    rl_buf_puts(&ids, "");
    for (size_t i = 0; i < run->nvehicles; i++)
        rl_buf_printf(&ids, "%s%d", i ? ", " : "", run->vehicles[i].id);
    char *ids_text = rl_buf_take(&ids, NULL);
    rl_report_kv(r, "vehicles", ids_text ? ids_text : "");
    free(ids_text);
    rl_report_kv_end(r);
    rl_report_heading(r, 2, "Files");
    rl_report_link(r, "summary.json", NULL);
    rl_report_link(r, "checks.csv", NULL);
    rl_report_link(r, "decoding.csv", NULL);
    rl_report_link(r, "config.yaml", NULL);
    char path[PATH_MAX];
    if ((rc = rl_path_join(path, sizeof path, o->dir, "report.html")) == RL_OK)
        rc = rl_report_write(r, path);
out:
    rl_report_free(r);
    return rc;
}

int eval_output_write(const eval_output *o)
{
    char **svgs = calloc(o->sink->nfigures + 1, sizeof *svgs);
    if (!svgs)
        return rl_error_set(RL_ENOMEM, "%s: out of memory", o->dir);
    int rc;
    rc = write_files(o, svgs);
    if (rc == RL_OK && o->mark)
        o->mark(o->mark_ud);
    if (rc == RL_OK)
        rc = write_report(o, svgs);
    if (rc < 0)
        rl_error_prefix(rc, "%s", o->dir);
    for (size_t i = 0; i < o->sink->nfigures; i++)
        free(svgs[i]);
    free(svgs);
    return rc < 0 ? rc : RL_OK;
}
