/* What the figure tools over run directories share (cli/plot_runs.h): loading the runs,
 * deciding where figures go (the data root's mirrored tree or the inputs' parent), saving
 * PNG + SVG with a record, and the run's manifest strings. `runlab plot gain-cost`,
 * `normalized-gain` (cmd_plot_runs.c) and `timing` (plot_timing.c) call these; nothing
 * here calls a command. */
#include "cli.h"
#include "plot_runs.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/plot.h"
#include "runlab/runs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- where figures go ------------------------------------------------------------- */

static void data_root(char *out, size_t cap)
{
    const char *r = getenv("RUNLAB_DATA_ROOT");
    if (r && *r)
        snprintf(out, cap, "%s", r);
    else
        snprintf(out, cap, "%s/runlab_data", getenv("HOME") ? getenv("HOME") : ".");
}

/* True when `path` is `dir` or lies below it (both real paths). */
static bool is_below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* Decides the mirrored tree (base) and the figures root: inputs inside the data root
 * mirror their path below it, in <data root>/figures; otherwise the inputs' common
 * parent P is the base and P/figures the root (an input that is itself the common
 * ancestor is mirrored by its name). --out-dir replaces the figures root. */
static int place_figures(struct popts *o)
{
    char root[PATH_MAX], rroot[PATH_MAX], common[PATH_MAX] = "", rin[PATH_MAX];
    data_root(root, sizeof root);
    bool have_root = realpath(root, rroot) != NULL, inside = have_root, common_is_input = false;
    for (int i = 0; i < o->ninputs; i++) {
        if (!realpath(o->inputs[i], rin))
            return rl_error_set(RL_ENOENT, "%s: %s", o->inputs[i], strerror(errno));
        inside = inside && is_below(rin, rroot);
        if (i == 0) {
            snprintf(common, sizeof common, "%s", rin);
            continue;
        }
        while (!is_below(rin, common)) {
            char *slash = strrchr(common, '/');
            if (!slash || slash == common) {
                snprintf(common, sizeof common, "/");
                break;
            }
            *slash = '\0';
        }
    }
    int w;
    if (inside) {
        snprintf(o->base, sizeof o->base, "%s", rroot);
        w = o->out_dir ? snprintf(o->figs, sizeof o->figs, "%s", o->out_dir)
                       : snprintf(o->figs, sizeof o->figs, "%s/figures", root);
    } else {
        for (int i = 0; i < o->ninputs; i++)
            if (realpath(o->inputs[i], rin) && strcmp(rin, common) == 0)
                common_is_input = true;
        char *slash = strrchr(common, '/');
        if (common_is_input && slash == common)
            common[1] = '\0';
        else if (common_is_input && slash)
            *slash = '\0';
        snprintf(o->base, sizeof o->base, "%s", common);
        w = o->out_dir ? snprintf(o->figs, sizeof o->figs, "%s", o->out_dir)
                       : snprintf(o->figs, sizeof o->figs, "%s/figures",
                                  strcmp(common, "/") == 0 ? "" : common);
    }
    return w < 0 || (size_t)w >= sizeof o->figs
               ? rl_error_set(RL_ERANGE, "figures directory name too long")
               : RL_OK;
}

/* The figure directory for an input or run (NULL: the top of the figures root): the
 * figures root plus the path relative to the mirrored base. Creates nothing. */
int plot_runs_figure_dir(const struct popts *o, const char *input, char *out, size_t cap)
{
    char rin[PATH_MAX];
    const char *rel = NULL;
    if (input && realpath(input, rin) && is_below(rin, o->base)) {
        rel = rin + strlen(o->base);
        while (*rel == '/')
            rel++;
    }
    int w = rel && *rel ? snprintf(out, cap, "%s/%s", o->figs, rel)
                        : snprintf(out, cap, "%s", o->figs);
    if (w < 0 || (size_t)w >= cap)
        return rl_error_set(RL_ERANGE, "figure path too long");
    return RL_OK;
}

static void open_viewer(const char *path)
{
    if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) {
        fprintf(stderr, "runlab: plot: --open: no display; open %s yourself\n", path);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        execlp("xdg-open", "xdg-open", path, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) {
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fprintf(stderr, "runlab: plot: --open: xdg-open failed for %s\n", path);
    }
}

static bool already_written(const struct popts *o, const char *path)
{
    for (size_t i = 0; i < o->nwritten; i++)
        if (strcmp(o->written[i], path) == 0)
            return true;
    return false;
}

static int remember_written(struct popts *o, const char *path)
{
    char **nw = realloc(o->written, (o->nwritten + 1) * sizeof *nw);
    if (!nw)
        return rl_error_set(RL_ENOMEM, "out of memory");
    o->written = nw;
    if (!(nw[o->nwritten] = strdup(path)))
        return rl_error_set(RL_ENOMEM, "out of memory");
    o->nwritten++;
    return RL_OK;
}

/* Saves PNG and SVG as <dir>/<stem>.* (or exactly --output), each with its record. A
 * stem already written in this invocation gets _2, _3, ... so nothing is overwritten. */
int plot_runs_save(rl_figure *fig, struct popts *o, const char *dir, const char *stem,
                   char **inputs, int ninputs, const char *description, int argc, char **argv)
{
    char png[PATH_MAX], svg[PATH_MAX], parent[PATH_MAX];
    const char *paths[2] = {png, svg};
    int n = 2;
    if (o->output) {
        snprintf(png, sizeof png, "%s", o->output);
        n = 1;
        snprintf(parent, sizeof parent, "%s", o->output);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent)
            *slash = '\0';
        else
            parent[0] = '\0';
    } else {
        snprintf(parent, sizeof parent, "%s", dir);
        for (int k = 1; k < 1000; k++) {
            char suffix[16] = "";
            if (k > 1)
                snprintf(suffix, sizeof suffix, "_%d", k);
            if (snprintf(png, sizeof png, "%s/%s%s.png", dir, stem, suffix) >= (int)sizeof png ||
                snprintf(svg, sizeof svg, "%s/%s%s.svg", dir, stem, suffix) >= (int)sizeof svg)
                return cli_fail("plot", "figure path too long");
            if (!already_written(o, png))
                break;
        }
    }
    if (o->output && already_written(o, png))
        return cli_fail("plot", "%s: already written in this invocation", png);
    if (parent[0] && rl_fs_mkdirs(parent) != RL_OK)
        return cli_fail("plot", "%s", rl_error_last());
    for (int i = 0; i < n; i++)
        if (rl_figure_save(fig, paths[i], RL_PLOT_AUTO) != RL_OK)
            return cli_fail("plot", "%s", rl_error_last());
    rl_figure_record rec = {argc + 1, argv - 1, (const char *const *)inputs, (size_t)ninputs,
                            description};
    if (rl_figure_record_write(paths[0], &rec) != RL_OK)
        return cli_fail("plot", "%s", rl_error_last());
    if (remember_written(o, png) != RL_OK)
        return cli_fail("plot", "%s", rl_error_last());
    for (int i = 0; i < n; i++)
        printf("Wrote %s\n", paths[i]);
    if (o->open)
        open_viewer(paths[0]);
    return RL_EXIT_OK;
}

void plot_runs_report_skipped(const char *kind, const rl_run *run)
{
    fprintf(stderr, "runlab: plot: %s: ", kind);
    cli_print_escaped(stderr, run->path);
    fputs(": skipped, no data rows:", stderr);
    for (size_t m = 0; m < run->num_messages; m++) {
        fputs(m ? "; " : " ", stderr);
        cli_print_escaped(stderr, run->messages[m]);
    }
    fputc('\n', stderr);
}

/* ---- loading and the manifest ---------------------------------------------------------- */

int plot_runs_load(struct popts *o, rl_run_set **set)
{
    int rc = cli_load_runs("plot", o->inputs, (size_t)o->ninputs, set);
    if (rc != RL_EXIT_OK)
        return rc;
    for (size_t i = 0; i < (*set)->num_walk_errors; i++) {
        fputs("runlab: plot: ", stderr);
        cli_print_escaped(stderr, (*set)->walk_errors[i]);
        fputc('\n', stderr);
    }
    if (place_figures(o) != RL_OK) {
        rl_run_set_free(*set);
        *set = NULL;
        return cli_fail("plot", "%s", rl_error_last());
    }
    return RL_EXIT_OK;
}

const char *plot_runs_manifest_str(const rl_run *r, const char *key, const char *dflt)
{
    const char *s;
    return r->manifest && rl_json_get_string(r->manifest, key, &s) == RL_OK ? s : dflt;
}
