/* `runlab plot csv FILE --x COL --y COL [--y COL...] -o out.png|svg|pdf`: draws columns of
 * any CSV file (first row = header) as lines, steps or points, so logged data can be
 * looked at without writing code. Writes the figure and its .yaml record beside it. */
#include "cli.h"

#include "runlab/csv.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/plot.h"
#include "runlab/time.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { MAX_Y = 16 };

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab plot csv FILE [--x COL] --y COL [--y COL ...] -o OUT [options]\n"
            "       runlab plot gain-cost | normalized-gain | timing ROOT... (figures of run\n"
            "       directories; see 'runlab plot gain-cost --help')\n\n"
            "Draws columns of a CSV file (the first row names the columns) as a figure.\n"
            "COL is a column name, or a 1-based column number when no column has that name.\n"
            "The x column may hold ISO 8601 UTC times (2026-11-29T20:15:00Z); they are\n"
            "drawn as seconds since the first row's time, which the axis label names.\n"
            "OUT ends in .png, .svg or .pdf; OUT's stem with .yaml gets the figure record\n"
            "(command line, input, UTC time, runlab version and git sha).\n\n"
            "Options:\n"
            "  --x COL            x values (default: the row number, from 1)\n"
            "  --y COL            a column to draw; repeat for several (at most %d)\n"
            "  -o, --output OUT   output file\n"
            "  --kind KIND        line (default), step or scatter against x; or, of each\n"
            "                     --y column on its own: ecdf, hist (histogram) or box\n"
            "  --title TEXT       figure title\n"
            "  --xlabel TEXT      x axis label (default: the x column's name)\n"
            "  --ylabel TEXT      y axis label (default: the y column's name if only one)\n"
            "  --xunit U, --yunit U  units, shown as \"label [U]\"\n"
            "  --logx, --logy     logarithmic axes (values <= 0 are skipped and counted)\n"
            "  --width PX         width in pixels (default 640)\n"
            "  --height PX        height in pixels (default 480)\n"
            "  --dpi N            dots per inch (default 100; text is sized in points)\n"
            "  --delimiter C      field delimiter (default ',')\n"
            "  --no-record        do not write the .yaml record\n"
            "  -h, --help         show this help\n\n"
            "Empty cells and nan/NA/null are missing values: skipped, counted in a note on\n"
            "the figure. Other cells that are not numbers are an error.\n"
            "Exit codes: 0 success, 1 failure (unreadable input, bad data), 2 usage error.\n",
            MAX_Y);
}

typedef struct col {
    const char *spec;
    size_t index;
    char *name;
    double *v;
} col;

typedef struct opts {
    const char *file, *out, *title, *xlabel, *ylabel, *xunit, *yunit;
    const char *kind;
    col x, y[MAX_Y];
    int ny;
    bool has_x, logx, logy, record;
    int width, height;
    double dpi;
    char delim;
} opts;

static bool parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

static int parse_args(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->kind = "line";
    o->record = true;
    o->width = 640;
    o->height = 480;
    o->dpi = 100;
    o->delim = ',';
    if (argc < 2)
        return cli_usage_error("plot", "missing source: 'csv'");
    if (strcmp(argv[1], "csv") != 0)
        return cli_usage_error("plot", "unknown source '%s' (only 'csv')", argv[1]);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        const char *v = has_val ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                                               \
    do {                                                                                           \
        if (!has_val)                                                                              \
            return cli_usage_error("plot", "option '%s' needs a value", a);                        \
        i++;                                                                                       \
    } while (0)
        if (strcmp(a, "--x") == 0) {
            NEED_VALUE();
            o->x.spec = v;
            o->has_x = true;
        } else if (strcmp(a, "--y") == 0) {
            NEED_VALUE();
            if (o->ny == MAX_Y)
                return cli_usage_error("plot", "at most %d --y columns", MAX_Y);
            o->y[o->ny++].spec = v;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            NEED_VALUE();
            o->out = v;
        } else if (strcmp(a, "--kind") == 0) {
            NEED_VALUE();
            if (strcmp(v, "line") && strcmp(v, "step") && strcmp(v, "scatter") &&
                strcmp(v, "ecdf") && strcmp(v, "hist") && strcmp(v, "box"))
                return cli_usage_error("plot",
                                       "unknown kind '%s' (line, step, scatter, ecdf, "
                                       "hist or box)",
                                       v);
            o->kind = v;
        } else if (strcmp(a, "--title") == 0) {
            NEED_VALUE();
            o->title = v;
        } else if (strcmp(a, "--xlabel") == 0) {
            NEED_VALUE();
            o->xlabel = v;
        } else if (strcmp(a, "--ylabel") == 0) {
            NEED_VALUE();
            o->ylabel = v;
        } else if (strcmp(a, "--xunit") == 0) {
            NEED_VALUE();
            o->xunit = v;
        } else if (strcmp(a, "--yunit") == 0) {
            NEED_VALUE();
            o->yunit = v;
        } else if (strcmp(a, "--logx") == 0) {
            o->logx = true;
        } else if (strcmp(a, "--logy") == 0) {
            o->logy = true;
        } else if (strcmp(a, "--width") == 0 || strcmp(a, "--height") == 0) {
            NEED_VALUE();
            int *dst = a[2] == 'w' ? &o->width : &o->height;
            if (!parse_int(v, 72, 20000, dst))
                return cli_usage_error("plot", "%s '%s': need pixels in 72..20000", a, v);
        } else if (strcmp(a, "--dpi") == 0) {
            NEED_VALUE();
            int d;
            if (!parse_int(v, 36, 1200, &d))
                return cli_usage_error("plot", "--dpi '%s': need 36..1200", v);
            o->dpi = d;
        } else if (strcmp(a, "--delimiter") == 0) {
            NEED_VALUE();
            if (strcmp(v, "\\t") == 0 || strcmp(v, "tab") == 0)
                o->delim = '\t';
            else if (strlen(v) == 1 && v[0] != '"')
                o->delim = v[0];
            else
                return cli_usage_error("plot", "--delimiter '%s': need one character", v);
        } else if (strcmp(a, "--no-record") == 0) {
            o->record = false;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_usage_error("plot", "unknown option '%s'", a);
        } else if (!o->file) {
            o->file = a;
        } else {
            return cli_usage_error("plot", "unexpected argument '%s'", a);
        }
#undef NEED_VALUE
    }
    if (!o->file)
        return cli_usage_error("plot", "missing the CSV FILE");
    bool distribution =
        !strcmp(o->kind, "ecdf") || !strcmp(o->kind, "hist") || !strcmp(o->kind, "box");
    if (distribution && o->has_x)
        return cli_usage_error("plot",
                               "--x has no meaning for --kind %s (it draws each --y "
                               "column on its own)",
                               o->kind);
    if (distribution && o->logx && !strcmp(o->kind, "box"))
        return cli_usage_error("plot", "--logx has no meaning for --kind box");
    if (o->ny == 0)
        return cli_usage_error("plot", "missing --y COL");
    if (!o->out)
        return cli_usage_error("plot", "missing -o OUT");
    const char *dot = strrchr(o->out, '.');
    if (!dot || (strcasecmp(dot, ".png") && strcasecmp(dot, ".svg") && strcasecmp(dot, ".pdf")))
        return cli_usage_error("plot", "output '%s' must end in .png, .svg or .pdf", o->out);
    double w_in = o->width / o->dpi, h_in = o->height / o->dpi;
    if (w_in < 1 || h_in < 1 || w_in > 100 || h_in > 100)
        return cli_usage_error("plot", "%dx%d px at %g dpi is %.1fx%.1f in; need 1..100 in",
                               o->width, o->height, o->dpi, w_in, h_in);
    return RL_EXIT_OK;
}

static int resolve(col *c, const rl_csv_row *hdr, const char *file)
{
    for (size_t i = 0; i < hdr->count; i++)
        if (strcmp(hdr->fields[i].data, c->spec) == 0) {
            c->index = i;
            return 0;
        }
    int n;
    if (parse_int(c->spec, 1, 1 << 20, &n) && (size_t)n <= hdr->count) {
        c->index = (size_t)n - 1;
        return 0;
    }
    fprintf(stderr, "runlab: plot: %s: no column '%s' (columns:", file, c->spec);
    for (size_t i = 0; i < hdr->count && i < 30; i++)
        fprintf(stderr, "%s '%s'", i ? "," : "", hdr->fields[i].data);
    fprintf(stderr, "%s)\n", hdr->count > 30 ? ", ..." : "");
    return -1;
}

/* A cell as a number: NaN for the usual spellings of a missing value, -1 when the cell
 * is not a number at all. */
static int cell_value(const rl_csv_field *f, double *out)
{
    const char *s = f->data;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s || strcasecmp(s, "nan") == 0 || strcasecmp(s, "na") == 0 ||
        strcasecmp(s, "null") == 0 || strcasecmp(s, "n/a") == 0) {
        *out = NAN;
        return 0;
    }
    char *end;
    double v = strtod(s, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == s || *end || strlen(f->data) != f->len)
        return -1;
    *out = v;
    return 0;
}

static int grow(col *c, size_t cap)
{
    double *p = realloc(c->v, cap * sizeof *p);
    if (!p)
        return -1;
    c->v = p;
    return 0;
}

int cmd_plot(int argc, char **argv)
{
    /* Figures over run directories live in cmd_plot_runs.c. */
    if (argc > 1 && cli_plot_runs_handles(argv[1]))
        return cmd_plot_runs(argc, argv);
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return RL_EXIT_OK;
    }
    opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != RL_EXIT_OK)
        return rc;

    rl_csv_options co;
    rl_csv_options_init(&co);
    co.delimiter = o.delim;
    rl_csv_reader *rd = NULL;
    /* a window of 1 MiB slid over the file: memory is the numbers kept, not the file */
    if (rl_csv_open_stream(&rd, o.file, (size_t)1 << 20, &co) != RL_OK)
        return cli_fail("plot", "%s", rl_error_last());
    rl_figure *fig = NULL;
    size_t n = 0, cap = 0;
    bool x_time = false, x_seen = false;
    int64_t t0_ns = 0;
    rl_csv_row row;
    int got = rl_csv_next(rd, &row);
    if (got <= 0) {
        rc = got < 0 ? cli_fail("plot", "%s", rl_error_last())
                     : cli_fail("plot", "%s: empty file (no header row)", o.file);
        goto done;
    }
    if (o.has_x) {
        if (resolve(&o.x, &row, o.file) < 0) {
            rc = RL_EXIT_FAILURE;
            goto done;
        }
        if (!(o.x.name = strdup(row.fields[o.x.index].data)))
            goto oom;
    }
    for (int k = 0; k < o.ny; k++) {
        if (resolve(&o.y[k], &row, o.file) < 0) {
            rc = RL_EXIT_FAILURE;
            goto done;
        }
        if (!(o.y[k].name = strdup(row.fields[o.y[k].index].data)))
            goto oom;
    }
    while ((got = rl_csv_next(rd, &row)) > 0) {
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            if (grow(&o.x, cap) < 0)
                goto oom;
            for (int k = 0; k < o.ny; k++)
                if (grow(&o.y[k], cap) < 0)
                    goto oom;
        }
        for (int k = -1; k < o.ny; k++) {
            col *c = k < 0 ? &o.x : &o.y[k];
            if (k < 0 && !o.has_x) {
                c->v[n] = (double)(n + 1);
                continue;
            }
            if (c->index >= row.count) {
                rc = cli_fail("plot", "%s:%llu: row has %zu fields, column '%s' is number %zu",
                              o.file, (unsigned long long)row.line, row.count, c->name,
                              c->index + 1);
                goto done;
            }
            int cv = cell_value(&row.fields[c->index], &c->v[n]);
            int64_t ns;
            if (k < 0 && (!x_seen || x_time) && cv < 0 &&
                rl_time_parse_iso(row.fields[c->index].data, &ns) == RL_OK) {
                /* Times as seconds since the first row's: doubles keep nanoseconds over
                 * days that way, which they would not as seconds since 1970. */
                if (!x_seen) {
                    x_time = true;
                    t0_ns = ns;
                }
                c->v[n] = (double)(ns - t0_ns) / 1e9;
                cv = 0;
            } else if (k < 0 && x_time && cv == 0 && !isnan(c->v[n])) {
                cv = -1; /* a plain number among times */
            }
            if (k < 0 && cv == 0 && !isnan(c->v[n]))
                x_seen = true;
            if (cv < 0) {
                rl_error_clear();
                rc = cli_fail("plot", "%s:%llu: column '%s': '%.40s' is not a %s", o.file,
                              (unsigned long long)row.line, c->name, row.fields[c->index].data,
                              k < 0 && x_time ? "time like the first row's" : "number");
                goto done;
            }
        }
        n++;
    }
    if (got < 0) {
        rc = cli_fail("plot", "%s", rl_error_last());
        goto done;
    }

    if (rl_figure_new(&fig, 1, 1) != RL_OK ||
        rl_figure_set_size_px(fig, o.width, o.height, o.dpi) != RL_OK) {
        rc = cli_fail("plot", "%s", rl_error_last());
        goto done;
    }
    rl_axes *ax = rl_figure_axes(fig, 0, 0);
    if (o.title)
        rl_axes_set_title(ax, o.title);
    const char *one = o.ny == 1 ? o.y[0].name : NULL;
    char xunit[96];
    const char *xu = o.xunit;
    if (x_time && !xu) {
        char iso[RL_TIME_ISO_LEN];
        rl_time_format_iso(t0_ns, iso, sizeof iso);
        char *frac = strstr(iso, ".000000000Z");
        if (frac)
            strcpy(frac, "Z");
        snprintf(xunit, sizeof xunit, "s since %s", iso);
        xu = xunit;
    }
    if (!strcmp(o.kind, "ecdf") || !strcmp(o.kind, "hist")) {
        rl_axes_set_xlabel(ax, o.xlabel ? o.xlabel : one, o.xunit ? o.xunit : o.yunit);
        rl_axes_set_ylabel(ax,
                           o.ylabel                  ? o.ylabel
                           : !strcmp(o.kind, "hist") ? "Count"
                                                     : "Fraction of rows",
                           NULL);
    } else if (!strcmp(o.kind, "box")) {
        rl_axes_set_ylabel(ax, o.ylabel ? o.ylabel : one, o.yunit);
    } else {
        rl_axes_set_xlabel(ax, o.xlabel ? o.xlabel : o.has_x ? o.x.name : "Row", xu);
        rl_axes_set_ylabel(ax, o.ylabel ? o.ylabel : one, o.yunit);
    }
    if (o.logx)
        rl_axes_set_xscale(ax, RL_SCALE_LOG);
    if (o.logy)
        rl_axes_set_yscale(ax, RL_SCALE_LOG);
    for (int k = 0; k < o.ny; k++) {
        rl_series_opts so;
        rl_series_opts_init(&so);
        so.label = o.ny > 1 && strcmp(o.kind, "box") ? o.y[k].name : NULL;
        const char *kd = o.kind;
        int r = !strcmp(kd, "scatter") ? rl_axes_scatter(ax, o.x.v, o.y[k].v, n, &so)
                : !strcmp(kd, "step")  ? rl_axes_step(ax, o.x.v, o.y[k].v, n, &so)
                : !strcmp(kd, "ecdf")  ? rl_axes_ecdf(ax, o.y[k].v, n, &so)
                : !strcmp(kd, "hist")  ? rl_axes_hist(ax, o.y[k].v, n, &so)
                : !strcmp(kd, "box")   ? rl_axes_box(ax, o.y[k].name, o.y[k].v, n, &so)
                                       : rl_axes_line(ax, o.x.v, o.y[k].v, n, &so);
        if (r != RL_OK) {
            rc = cli_fail("plot", "%s", rl_error_last());
            goto done;
        }
    }
    /* The output's directory is made as for `plot runs -o`: naming a new folder is normal. */
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", o.out);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        if (rl_fs_mkdirs(parent) != RL_OK) {
            rc = cli_fail("plot", "%s", rl_error_last());
            goto done;
        }
    }
    if (rl_figure_save(fig, o.out, RL_PLOT_AUTO) != RL_OK) {
        rc = cli_fail("plot", "%s", rl_error_last());
        goto done;
    }
    if (o.record) {
        /* main() hands subcommands argv + 1, so argv[-1] is the program itself: the record
         * keeps the whole command line as typed. */
        rl_figure_record rec = {argc + 1, argv - 1, &o.file, 1, NULL};
        if (rl_figure_record_write(o.out, &rec) != RL_OK) {
            rc = cli_fail("plot", "figure written, record failed: %s", rl_error_last());
            goto done;
        }
    }
    printf("Wrote %s\n", o.out);
    rc = RL_EXIT_OK;
    goto done;
oom:
    rc = cli_fail("plot", "out of memory");
done:
    rl_figure_free(fig);
    rl_csv_close(rd);
    free(o.x.v);
    free(o.x.name);
    for (int k = 0; k < o.ny; k++) {
        free(o.y[k].v);
        free(o.y[k].name);
    }
    return rc;
}
