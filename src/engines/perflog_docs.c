/* The documents of a perflog run (docs/perflog.md): the schema fingerprint, manifest.yaml,
 * params.yaml and the episode summary rendered into a buffer (which perflog.c also hands
 * to its signal handler), with the number and string forms they share with the CSV. */
#include "engines/perflog_internal.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"
#include "runlab/number.h"
#include "runlab/provenance.h"
#include "runlab/time.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rl_end_reason_name(rl_end_reason reason)
{
    switch (reason) {
    case RL_END_BUDGET_EXHAUSTED: return "budget_exhausted";
    case RL_END_GOAL_REACHED: return "goal_reached";
    case RL_END_NO_STEP: return "no_step";
    case RL_END_STOPPED: return "stopped";
    }
    return "unknown";
}

const char *rl_perflog_type_name(rl_perflog_type type)
{
    switch (type) {
    case RL_COL_TIMER: return "timer";
    case RL_COL_COUNTER: return "counter";
    case RL_COL_TOTAL: return "total";
    case RL_COL_GAUGE: return "gauge";
    }
    return "unknown";
}

/* Shortest form that reads back to the same double, locale-independent (runlab/number.h). */
size_t rl_pl_fmt_f64(double v, char *buf, size_t cap)
{
    size_t n = rl_format_f64(v, buf, cap);
    return n < cap ? n : cap - 1;
}

/* The YAML documents are built in core's growable buffer (core/text.h). */

/* A JSON double-quoted string, which YAML 1.2 reads as the same string; the manifest
 * quotes every free-form string this way so no value can change type or structure. */
static void sb_quoted(rl_buf *b, const char *s)
{
    rl_buf_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            rl_buf_put(b, esc, 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            rl_buf_put(b, esc, 6);
        } else {
            rl_buf_put(b, (const char *)p, 1);
        }
    }
    rl_buf_put(b, "\"", 1);
}

static void sb_f64(rl_buf *b, double v)
{
    char tmp[40];
    if (isnan(v)) {
        rl_buf_puts(b, ".nan");
        return;
    }
    if (isinf(v)) {
        rl_buf_puts(b, v < 0 ? "-.inf" : ".inf");
        return;
    }
    size_t n = rl_pl_fmt_f64(v, tmp, sizeof tmp);
    rl_buf_put(b, tmp, n);
    /* YAML reads "12" as an int; keep floats floats. */
    if (!strpbrk(tmp, ".eE"))
        rl_buf_puts(b, ".0");
}

/* ---- fingerprint ----------------------------------------------------------------------- */

int rl_perflog_compute_fingerprint(const char *const *names, const char *const *types,
                                   const char *const *units, const char *const *parents, size_t n,
                                   char *out, size_t cap)
{
    if (cap < RL_FINGERPRINT_LEN)
        return rl_error_set(RL_ERANGE, "fingerprint: buffer of %zu bytes, need %d", cap,
                            (int)RL_FINGERPRINT_LEN);
    rl_sha256_ctx *ctx;
    int rc = rl_sha256_begin(&ctx);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n && rc == RL_OK; i++) {
        const char *f[4] = {names[i], types[i], units[i], parents && parents[i] ? parents[i] : ""};
        for (int k = 0; k < 4 && rc == RL_OK; k++) {
            const char *s = f[k] ? f[k] : "";
            rc = rl_sha256_update(ctx, s, strlen(s));
            if (rc == RL_OK)
                rc = rl_sha256_update(ctx, k == 3 ? "\n" : "\t", 1);
        }
    }
    uint8_t d[RL_SHA256_LEN];
    if (rc != RL_OK) {
        rl_sha256_finish(ctx, NULL);
        return rc;
    }
    rc = rl_sha256_finish(ctx, d);
    if (rc < 0)
        return rc;
    char hex[RL_SHA256_HEX_LEN + 1];
    rl_sha256_hex(d, hex);
    snprintf(out, cap, "sha256:%s", hex);
    return RL_OK;
}

int rl_pl_schema_fingerprint(rl_perflog *pl)
{
    size_t n = pl->ncols;
    const char **a = calloc(4 * n, sizeof *a);
    if (!a)
        return rl_error_set(RL_ENOMEM, "perflog: out of memory");
    for (size_t i = 0; i < n; i++) {
        const struct column *c = &pl->cols[pl->order[i]];
        a[i] = c->name;
        a[n + i] = rl_perflog_type_name(c->type);
        a[2 * n + i] = c->unit;
        a[3 * n + i] = c->parent;
    }
    int rc = rl_perflog_compute_fingerprint(a, a + n, a + 2 * n, a + 3 * n, n, pl->fingerprint,
                                            sizeof pl->fingerprint);
    free(a);
    return rc;
}

/* ---- documents --------------------------------------------------------------------------- */

static int layer_cmp(const void *a, const void *b)
{
    const struct layer *x = *(const struct layer *const *)a, *y = *(const struct layer *const *)b;
    return strcmp(x->name, y->name);
}

/* Layers sorted by name (pointers into pl->layers), for the CSV order and the documents. */
const struct layer **rl_pl_sorted_layers(const rl_perflog *pl)
{
    const struct layer **s = calloc(pl->nlayers ? pl->nlayers : 1, sizeof *s);
    if (!s)
        return NULL;
    for (size_t i = 0; i < pl->nlayers; i++)
        s[i] = &pl->layers[i];
    qsort(s, pl->nlayers, sizeof *s, layer_cmp);
    return s;
}

int rl_pl_write_manifest(rl_perflog *pl)
{
    rl_provenance prov;
    rl_provenance_collect(&prov);
    rl_buf b = {0};
    rl_buf_printf(&b, "format_version: %d\n", RL_PERFLOG_FORMAT_VERSION);
    rl_buf_puts(&b, "schema_fingerprint: ");
    sb_quoted(&b, pl->fingerprint);
    rl_buf_puts(&b, "\nbuild_git_sha: ");
    sb_quoted(&b, prov.git_sha);
    rl_buf_printf(&b, "\nbuild_git_dirty: %s\n", prov.git_dirty ? "true" : "false");
    rl_buf_puts(&b, "build_components:\n  runlab: ");
    sb_quoted(&b, prov.version);
    rl_buf_puts(&b, "\n  build_type: ");
    sb_quoted(&b, prov.build_type);
    rl_buf_puts(&b, "\n  compiler: ");
    sb_quoted(&b, prov.compiler);
    rl_buf_puts(&b, "\nmachine:\n  host: ");
    sb_quoted(&b, prov.host);
    rl_buf_puts(&b, "\n  cpu_model: ");
    sb_quoted(&b, prov.cpu_model);
    rl_buf_printf(&b, "\n  cpu_cores: %d\n  os: ", prov.cpu_cores);
    sb_quoted(&b, prov.os);
    rl_buf_puts(&b, "\nstart_utc: ");
    sb_quoted(&b, pl->start_utc);
    if (pl->task) {
        rl_buf_puts(&b, "\ntask: ");
        sb_quoted(&b, pl->task);
    }
    rl_buf_puts(&b, "\ndataset: ");
    sb_quoted(&b, pl->dataset);
    rl_buf_puts(&b, "\nscene: ");
    sb_quoted(&b, pl->scene);
    rl_buf_puts(&b, "\nplanner: ");
    sb_quoted(&b, pl->planner);
    rl_buf_puts(&b, "\n");
    if (isfinite(pl->budget)) {
        rl_buf_puts(&b, "cost_budget: ");
        sb_f64(&b, pl->budget);
        rl_buf_puts(&b, "\n");
    }
    rl_buf_printf(&b, "random_seed: %" PRIu64 "\nlog_performance: %s\nnum_maps_to_save: %d\n", pl->seed,
              pl->log ? "true" : "false", pl->num_maps);
    const struct layer **sl = rl_pl_sorted_layers(pl);
    if (!sl) {
        free(b.data);
        return rl_error_set(RL_ENOMEM, "perflog: out of memory");
    }
    rl_buf_puts(&b, pl->nlayers ? "layers:\n" : "layers: {}\n");
    for (size_t i = 0; i < pl->nlayers; i++) {
        rl_buf_puts(&b, "  ");
        sb_quoted(&b, sl[i]->name);
        rl_buf_puts(&b, ": ");
        sb_quoted(&b, sl[i]->kind);
        rl_buf_puts(&b, "\n");
    }
    free(sl);
    rl_buf_puts(&b, "columns:\n");
    for (size_t i = 0; i < pl->ncols; i++) {
        const struct column *c = &pl->cols[pl->order[i]];
        rl_buf_puts(&b, "  - {name: ");
        sb_quoted(&b, c->name);
        rl_buf_printf(&b, ", type: %s, unit: ", rl_perflog_type_name(c->type));
        sb_quoted(&b, c->unit);
        rl_buf_puts(&b, ", parent: ");
        if (c->parent[0])
            sb_quoted(&b, c->parent);
        else
            rl_buf_puts(&b, "null");
        rl_buf_puts(&b, "}\n");
    }
    if (b.err) {
        free(b.data);
        return rl_error_set(RL_ENOMEM, "perflog: out of memory");
    }
    char path[PATH_MAX];
    int rc = rl_path_join(path, sizeof path, pl->run_dir, "run_manifest.yaml");
    if (rc == RL_OK)
        rc = rl_fs_write_atomic(path, b.data, b.len, 0644);
    free(b.data);
    return rc;
}

int rl_pl_write_params(rl_perflog *pl)
{
    rl_buf b = {0};
    if (pl->nparams == 0)
        rl_buf_puts(&b, "{}\n");
    for (size_t i = 0; i < pl->nparams; i++) {
        const struct param *p = &pl->params[i];
        sb_quoted(&b, p->key);
        rl_buf_puts(&b, ": ");
        if (p->kind == PARAM_F64)
            sb_f64(&b, p->f);
        else if (p->kind == PARAM_I64)
            rl_buf_printf(&b, "%" PRId64, p->i);
        else
            sb_quoted(&b, p->s);
        rl_buf_puts(&b, "\n");
    }
    if (b.err) {
        free(b.data);
        return rl_error_set(RL_ENOMEM, "perflog: out of memory");
    }
    char path[PATH_MAX];
    int rc = rl_path_join(path, sizeof path, pl->run_dir, "params.yaml");
    if (rc == RL_OK)
        rc = rl_fs_write_atomic(path, b.data, b.len, 0644);
    free(b.data);
    return rc;
}

/* Renders episode_summary.yaml into `out` (capacity pl->sum_cap). Layer names are plain
 * identifiers (checked at add_layer), so they need no quoting. */
/* A planner's own total or gauge column that stands in for a number it never passed
 * through rl_perflog_set_totals / rl_perflog_set_gain: its value now, else `fallback`. */
static double own_column_value(const rl_perflog *pl, int col, double fallback)
{
    if (col < 0 || !pl->val || pl->cols[col].std_total >= 0 ||
        (pl->cols[col].type != RL_COL_TOTAL && pl->cols[col].type != RL_COL_GAUGE))
        return fallback;
    return pl->val[col];
}

/* The totals the summary states: those passed to rl_perflog_set_totals; before the first
 * call, the planner's own columns of the standard names where it declared them. */
static rl_episode_totals summary_totals(const rl_perflog *pl)
{
    rl_episode_totals t = pl->totals;
    if (pl->totals_set)
        return t;
    t.total_cost = own_column_value(pl, pl->std_col[STD_COST], t.total_cost);
    t.total_path_length = own_column_value(pl, pl->std_col[STD_PATH_LENGTH], t.total_path_length);
    t.total_path_duration =
        own_column_value(pl, pl->std_col[STD_PATH_DURATION], t.total_path_duration);
    double nodes = own_column_value(pl, pl->std_col[STD_VISITED], NAN);
    if (isfinite(nodes) && fabs(nodes) < 9e18)
        t.num_visited_nodes = (int64_t)nodes;
    return t;
}

size_t rl_pl_render_summary(const rl_perflog *pl, rl_end_reason reason, char *out)
{
    rl_buf b = {0};
    const rl_episode_totals tot = summary_totals(pl);
    rl_buf_printf(&b, "format_version: %d\nend_reason: %s\ncycles: %" PRIu64 "\ntotal_cost: ",
              RL_PERFLOG_FORMAT_VERSION, rl_end_reason_name(reason), pl->cycles);
    sb_f64(&b, tot.total_cost);
    if (isfinite(pl->budget)) {
        rl_buf_puts(&b, "\ncost_budget: ");
        sb_f64(&b, pl->budget);
    }
    rl_buf_puts(&b, "\ntotal_path_length: ");
    sb_f64(&b, tot.total_path_length);
    rl_buf_puts(&b, "\ntotal_path_duration: ");
    sb_f64(&b, tot.total_path_duration);
    rl_buf_printf(&b, "\nnum_visited_nodes: %" PRId64 "\nelapsed_wall_time_s: ",
              tot.num_visited_nodes);
    sb_f64(&b, (double)(rl_mono_ns() - pl->start_mono) / 1e9);
    rl_buf_puts(&b, pl->nlayers ? "\nreal_accumulated_gain:\n" : "\nreal_accumulated_gain: {}\n");
    const struct layer **sl = rl_pl_sorted_layers(pl);
    for (size_t i = 0; sl && i < pl->nlayers; i++) {
        rl_buf_printf(&b, "  %s: ", sl[i]->name);
        sb_f64(&b, sl[i]->gain_set ? sl[i]->gain : own_column_value(pl, sl[i]->gain_col, 0));
        rl_buf_puts(&b, "\n");
    }
    free(sl);
    rl_buf_printf(&b, "timer_nesting_violations: %" PRIu64 "\n", pl->nesting_violations);
    if (pl->nesting_violations) {
        const struct column *c = &pl->cols[pl->first_violation_col];
        rl_buf_puts(&b, "first_nesting_violation: ");
        char what[3 * FULL_NAME_MAX];
        snprintf(what, sizeof what, "%s ran outside its parent %s", c->name, c->parent);
        sb_quoted(&b, what);
        rl_buf_puts(&b, "\n");
    }
    size_t n = 0;
    if (!b.err && b.data) {
        n = b.len < pl->sum_cap ? b.len : pl->sum_cap - 1;
        memcpy(out, b.data, n);
        out[n] = '\0';
    }
    free(b.data);
    return n;
}
