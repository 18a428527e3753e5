/* `runlab plot timing`: one figure per run of the per-cycle time, stacked. Which timers
 * add up without overlap comes from the example agent's known column names where a run
 * has them, else from the manifest: every timer without a parent is stacked and each
 * nested timer is drawn inside its parent's band. Says what is missing when it cannot. */
#include "cli.h"
#include "plot_runs.h"

#include "runlab/error.h"
#include "runlab/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TIMERS = 64 };

/* The known non-overlapping components of a cycle's time: PlanPathTotal, Visualization,
 * RosCallbacks, then every layer's ExpandTime, UpdateTime and StartNodeUpdate (their
 * sub-timers and each layer's PlanPathTime are inside these, so they are not added). */
static const char known_list[] = "PlanPathTotal, Visualization, RosCallbacks, "
                                 "<layer>.ExpandTime, <layer>.UpdateTime, "
                                 "<layer>.StartNodeUpdate";

static bool known_anchor(const char *name)
{
    return strcmp(name, "PlanPathTotal") == 0 || strcmp(name, "Visualization") == 0 ||
           strcmp(name, "RosCallbacks") == 0;
}

static bool known_component(const char *name)
{
    if (known_anchor(name))
        return true;
    const char *dot = strchr(name, '.');
    return dot && strchr(dot + 1, '.') == NULL &&
           (strcmp(dot + 1, "ExpandTime") == 0 || strcmp(dot + 1, "UpdateTime") == 0 ||
            strcmp(dot + 1, "StartNodeUpdate") == 0);
}

/* A timer column as the manifest declares it. */
struct timer {
    const char *name;
    const char *parent_name; /* NULL: none */
    long col;                /* CSV column, -1 when the CSV lacks it */
    int parent;              /* index into the timers, -1: top level (or parent unknown) */
};

/* What a run offers to draw: the manifest's timers (when it has a readable column list)
 * and whether its components are the known ones. */
struct timing {
    struct timer t[MAX_TIMERS];
    int nt;
    bool manifest_columns; /* the manifest has a column list */
    bool truncated;        /* more than MAX_TIMERS timers: the rest ignored */
    /* Drawn, in stacking order: a top-level component followed by its nested timers
     * (depth first), then the next. `parent` indexes this list, -1 for a component. */
    long col[MAX_TIMERS];
    int parent[MAX_TIMERS];
    const char *name[MAX_TIMERS];
    int nd;
    bool known; /* the components are the known sum */
};

static long csv_column(const rl_run *run, const char *name)
{
    for (size_t j = 0; j < run->num_columns; j++)
        if (strcmp(run->column_names[j], name) == 0)
            return (long)j;
    return -1;
}

static int timer_index(const struct timing *tm, const char *name)
{
    for (int i = 0; name && i < tm->nt; i++)
        if (strcmp(tm->t[i].name, name) == 0)
            return i;
    return -1;
}

/* Reads the manifest's timer columns and resolves each parent. A parent that is not a
 * timer, or a chain of parents that loops (a hand-edited manifest), makes it top level. */
static void read_manifest_timers(const rl_run *run, struct timing *tm)
{
    json_object *cols;
    if (!run->manifest || rl_json_get_array(run->manifest, "columns", &cols) != RL_OK)
        return;
    tm->manifest_columns = true;
    for (size_t k = 0; k < json_object_array_length(cols); k++) {
        json_object *c = json_object_array_get_idx(cols, k), *par;
        const char *name, *type;
        if (rl_json_get_string(c, "name", &name) != RL_OK ||
            rl_json_get_string(c, "type", &type) != RL_OK || strcmp(type, "timer") != 0)
            continue;
        if (tm->nt == MAX_TIMERS) {
            tm->truncated = true;
            break;
        }
        struct timer *t = &tm->t[tm->nt++];
        t->name = name;
        t->parent_name = json_object_object_get_ex(c, "parent", &par) && par &&
                                 json_object_is_type(par, json_type_string)
                             ? json_object_get_string(par)
                             : NULL;
        t->col = csv_column(run, name);
    }
    for (int i = 0; i < tm->nt; i++)
        tm->t[i].parent = timer_index(tm, tm->t[i].parent_name);
    for (int i = 0; i < tm->nt; i++) {
        int steps = 0;
        for (int a = tm->t[i].parent; a >= 0 && steps <= tm->nt; a = tm->t[a].parent)
            steps++;
        if (steps > tm->nt)
            tm->t[i].parent = -1;
    }
}

/* Adds timer `i` (drawn inside list entry `parent`) and, depth first, the timers the
 * manifest nests in it that the CSV has. */
static void add_drawn(struct timing *tm, int i, int parent, int depth)
{
    if (tm->nd == MAX_TIMERS || depth > MAX_TIMERS)
        return;
    int me = tm->nd++;
    tm->col[me] = tm->t[i].col;
    tm->name[me] = tm->t[i].name;
    tm->parent[me] = parent;
    for (int k = 0; k < tm->nt; k++)
        if (tm->t[k].parent == i && tm->t[k].col >= 0)
            add_drawn(tm, k, me, depth + 1);
}

/* Decides what to stack. The known sum where the run has one of its agent-level columns
 * (or no manifest timers to go by) and the manifest nests none of its components in
 * another timer; else the manifest's top-level timers. */
static void choose_components(const rl_run *run, struct timing *tm)
{
    bool anchor = false, any_known = false, known_nested = false, any_manifest_col = false;
    for (size_t j = 0; j < run->num_columns; j++) {
        const char *n = run->column_names[j];
        if (!known_component(n))
            continue;
        any_known = true;
        anchor = anchor || known_anchor(n);
        int ti = timer_index(tm, n);
        known_nested = known_nested || (ti >= 0 && tm->t[ti].parent_name);
    }
    for (int i = 0; i < tm->nt; i++)
        any_manifest_col = any_manifest_col || tm->t[i].col >= 0;
    tm->known = any_known && !known_nested && (anchor || !any_manifest_col);
    if (tm->known) {
        for (size_t j = 0; j < run->num_columns && tm->nd < MAX_TIMERS; j++) {
            if (!known_component(run->column_names[j]))
                continue;
            int ti = timer_index(tm, run->column_names[j]);
            if (ti >= 0) {
                add_drawn(tm, ti, -1, 0);
            } else {
                tm->col[tm->nd] = (long)j;
                tm->name[tm->nd] = run->column_names[j];
                tm->parent[tm->nd++] = -1;
            }
        }
        return;
    }
    for (int i = 0; i < tm->nt; i++)
        if (tm->t[i].col >= 0 && (tm->t[i].parent < 0 || tm->t[tm->t[i].parent].col < 0))
            add_drawn(tm, i, -1, 0);
}

/* Why nothing can be drawn, exactly. */
static void report_nothing(const rl_run *run, const struct timing *tm)
{
    fputs("runlab: plot: timing: ", stderr);
    cli_print_escaped(stderr, run->path);
    fputs(": no timer columns to draw: ", stderr);
    if (!run->manifest)
        fprintf(stderr,
                "run_manifest.yaml is %s, so which columns are timers is unknown, and "
                "performance_log.csv has none of the known timing columns (%s)",
                rl_run_has_reason(run, RL_REASON_NO_MANIFEST) ? "missing" : "unreadable",
                known_list);
    else if (!tm->manifest_columns)
        fprintf(stderr,
                "run_manifest.yaml has no column list, so which columns are timers is "
                "unknown, and performance_log.csv has none of the known timing columns (%s)",
                known_list);
    else if (tm->nt == 0)
        fputs("run_manifest.yaml declares no column of type timer (declare one with "
              "rl_perflog_declare(..., RL_COL_TIMER, \"s\", parent, &id))",
              stderr);
    else {
        fputs("the manifest's timers are not in performance_log.csv:", stderr);
        for (int i = 0; i < tm->nt && i < 8; i++) {
            fputs(i ? ", " : " ", stderr);
            cli_print_escaped(stderr, tm->t[i].name);
        }
        if (tm->nt > 8)
            fputs(", ...", stderr);
    }
    fputs("; skipped\n", stderr);
}

/* The record's description: what was stacked and what was drawn inside what. */
static char *describe(const rl_run *run, const struct timing *tm)
{
    size_t cap = 512;
    for (int d = 0; d < tm->nd; d++)
        cap += 2 * strlen(tm->name[d]) + 16;
    for (int i = 0; i < tm->nt; i++)
        cap += strlen(tm->t[i].name) + 4;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t len = (size_t)snprintf(
        s, cap, "%s\nStacked:",
        tm->known ? "Per-cycle time without overlap: the known components summed"
                  : "Per-cycle time: the timers without a parent (run_manifest.yaml) summed");
    bool first = true;
    for (int d = 0; d < tm->nd && len < cap; d++)
        if (tm->parent[d] < 0) {
            len += (size_t)snprintf(s + len, cap - len, "%s %s", first ? "" : ",", tm->name[d]);
            first = false;
        }
    bool nested = false;
    for (int d = 0; d < tm->nd && len < cap; d++)
        if (tm->parent[d] >= 0) {
            len +=
                (size_t)snprintf(s + len, cap - len, "%s %s in %s",
                                 nested ? "," : "\nNested:", tm->name[d], tm->name[tm->parent[d]]);
            nested = true;
        }
    bool other = false;
    for (int i = 0; i < tm->nt && len < cap; i++) {
        bool drawn = false;
        for (int d = 0; d < tm->nd; d++)
            drawn = drawn || strcmp(tm->name[d], tm->t[i].name) == 0;
        if (!drawn) {
            len += (size_t)snprintf(s + len, cap - len, "%s %s%s",
                                    other ? "," : "\nNot drawn:", tm->t[i].name,
                                    tm->t[i].col < 0 ? " (not in the CSV)" : "");
            other = true;
        }
    }
    if (len < cap && rl_run_has_reason(run, RL_REASON_TIMER_NESTING))
        snprintf(s + len, cap - len,
                 "\nThe run's summary counts timers that ran outside their parent: the bands "
                 "overlap where the manifest says they nest.");
    return s;
}

static int plot_timing_run(struct popts *o, const rl_run *run, int argc, char **argv, bool *drawn)
{
    struct timing *tm = calloc(1, sizeof *tm);
    if (!tm)
        return cli_fail("plot", "out of memory");
    read_manifest_timers(run, tm);
    choose_components(run, tm);
    *drawn = false;
    if (tm->nd == 0) {
        report_nothing(run, tm);
        free(tm);
        return RL_EXIT_OK;
    }
    if (rl_run_has_reason(run, RL_REASON_TIMER_NESTING)) {
        fputs("runlab: plot: timing: ", stderr);
        cli_print_escaped(stderr, run->path);
        fputs(": timers ran outside their declared parent (timer_nesting): nested bands may "
              "poke out of their parent\n",
              stderr);
    }
    size_t n = run->num_rows;
    const double *idx = rl_run_column(run, "CycleIndex");
    double *rowno = NULL, *lo = calloc(n, sizeof *lo), *hi = calloc(n, sizeof *hi);
    double *fill = calloc((size_t)tm->nd * n, sizeof *fill); /* per entry: its children's top */
    char *description = describe(run, tm);
    rl_figure *fig = NULL;
    int rc = RL_EXIT_OK;
    if (!idx && (rowno = calloc(n, sizeof *rowno)) != NULL)
        for (size_t i = 0; i < n; i++)
            rowno[i] = (double)i;
    if (!lo || !hi || !fill || !description || (!idx && !rowno) ||
        rl_figure_new(&fig, 1, 1) != RL_OK || rl_figure_set_size_px(fig, 900, 600, 100) != RL_OK) {
        rc = cli_fail("plot", "out of memory");
        goto done;
    }
    rl_axes *ax = rl_figure_axes(fig, 0, 0);
    char title[PATH_MAX];
    snprintf(title, sizeof title, "%s: %s / %s",
             tm->known ? "Per-cycle time without overlap" : "Per-cycle time by timer",
             plot_runs_manifest_str(run, "scene", "?"),
             plot_runs_manifest_str(run, "planner", "?"));
    rl_axes_set_title(ax, title);
    rl_axes_set_xlabel(ax, idx ? "Cycle" : "Row (no CycleIndex column)", NULL);
    /* Milliseconds, or microseconds when no cycle reaches one millisecond. */
    double peak = 0;
    for (size_t i = 0; i < n; i++) {
        double t = 0;
        for (int d = 0; d < tm->nd; d++) {
            double v = run->columns[tm->col[d]][i];
            t += tm->parent[d] < 0 && isfinite(v) ? v : 0;
        }
        peak = t > peak ? t : peak;
    }
    double unit = peak >= 1e-3 ? 1e3 : 1e6;
    rl_axes_set_ylabel(ax, "Time per cycle", unit == 1e3 ? "ms" : "µs");
    rl_axes_set_legend(ax, RL_LEGEND_OUTSIDE);
    /* Each entry is a band on top of what lies below it: for a component, the components
     * before it; for a nested timer, its parent's start plus the siblings before it. */
    double *top = calloc(n, sizeof *top);
    if (!top) {
        rc = cli_fail("plot", "out of memory");
        goto done;
    }
    for (int d = 0; d < tm->nd && rc == RL_EXIT_OK; d++) {
        const double *v = run->columns[tm->col[d]];
        int p = tm->parent[d];
        for (size_t i = 0; i < n; i++) {
            lo[i] = p < 0 ? top[i] : fill[(size_t)p * n + i];
            hi[i] = lo[i] + (isfinite(v[i]) ? v[i] * unit : 0);
            fill[(size_t)d * n + i] = lo[i];
            if (p < 0)
                top[i] = hi[i];
            else
                fill[(size_t)p * n + i] = hi[i];
        }
        char label[300];
        if (p < 0)
            snprintf(label, sizeof label, "%s", tm->name[d]);
        else
            snprintf(label, sizeof label, "%s (in %s)", tm->name[d], tm->name[p]);
        rl_series_opts so;
        rl_series_opts_init(&so);
        so.label = label;
        so.color = d % RL_PLOT_PALETTE_SIZE;
        so.dash = p < 0 ? 0 : 1;
        so.line_width = 0.8;
        so.band_lo = lo;
        so.band_hi = hi;
        if (rl_axes_line(ax, idx ? idx : rowno, hi, n, &so) != RL_OK)
            rc = cli_fail("plot", "%s", rl_error_last());
    }
    free(top);
    if (rc != RL_EXIT_OK)
        goto done;
    char dir[PATH_MAX];
    char *in[1] = {run->path};
    if (plot_runs_figure_dir(o, run->path, dir, sizeof dir) != RL_OK) {
        rc = cli_fail("plot", "%s", rl_error_last());
        goto done;
    }
    rc = plot_runs_save(fig, o, dir, "timing", in, 1, description, argc, argv);
    *drawn = rc == RL_EXIT_OK;
done:
    free(lo);
    free(hi);
    free(fill);
    free(rowno);
    free(description);
    free(tm);
    rl_figure_free(fig);
    return rc;
}

int plot_timing(struct popts *o, int argc, char **argv)
{
    rl_run_set *set;
    int rc = plot_runs_load(o, &set);
    if (rc != RL_EXIT_OK)
        return rc;
    size_t drawn = 0, tried = 0;
    for (size_t i = 0; i < set->count && rc == RL_EXIT_OK; i++) {
        if (set->runs[i]->status == RL_RUN_SKIPPED) {
            plot_runs_report_skipped("timing", set->runs[i]);
            continue;
        }
        if (o->output && drawn == 1) {
            fprintf(stderr, "runlab: plot: timing: --output names one file; only the first run "
                            "was drawn\n");
            break;
        }
        bool one = false;
        rc = plot_timing_run(o, set->runs[i], argc, argv, &one);
        drawn += one;
        tried++;
    }
    if (rc == RL_EXIT_OK && drawn == 0)
        rc = set->count == 0 ? cli_fail("plot", "timing: no run directory below the input(s)")
             : tried == 0    ? cli_fail("plot", "timing: no run with data rows below the input(s)")
                             : cli_fail("plot", "timing: no run with timer columns below the "
                                                   "input(s)");
    rl_run_set_free(set);
    return rc;
}
