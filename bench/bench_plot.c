/* Benchmark of figure rendering: a 1,000,000-point line (noisy sine) drawn to PNG, SVG and
 * PDF in memory, median of several runs, plus a 100,000-point scatter. Prints one line per
 * case. Rendering includes layout, decimation and encoding; file writing is excluded. */
#include "runlab/error.h"
#include "runlab/plot.h"
#include "runlab/time.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { RUNS = 7 };

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static int render(rl_figure *f, const char *fmt, const char *dir)
{
    if (strcmp(fmt, "svg-mem") == 0) {
        char *svg = NULL;
        size_t len;
        int rc = rl_figure_to_svg(f, NULL, &svg, &len);
        free(svg);
        return rc;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/bench.%s", dir, fmt);
    return rl_figure_save(f, path, RL_PLOT_AUTO);
}

static int bench_case(const char *name, bool scatter, size_t n, const char *dir)
{
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return 1;
    }
    unsigned s = 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        x[i] = (double)i * 1e-3;
        y[i] = sin(x[i]) + ((s >> 8) & 0xFFFF) / 65536.0 * 0.3;
    }
    static const char *const fmts[] = {"png", "svg", "pdf"};
    for (int k = 0; k < 3; k++) {
        double t[RUNS];
        for (int r = 0; r < RUNS; r++) {
            int64_t t0 = rl_mono_ns();
            rl_figure *f = NULL;
            if (rl_figure_new(&f, 1, 1) != RL_OK)
                return 1;
            rl_axes *ax = rl_figure_axes(f, 0, 0);
            rl_axes_set_xlabel(ax, "Time", "s");
            rl_axes_set_ylabel(ax, "Signal", "V");
            int rc = scatter ? rl_axes_scatter(ax, x, y, n, NULL) : rl_axes_line(ax, x, y, n, NULL);
            if (rc == RL_OK)
                rc = render(f, fmts[k], dir);
            rl_figure_free(f);
            if (rc != RL_OK) {
                fprintf(stderr, "bench_plot: %s\n", rl_error_last());
                return 1;
            }
            t[r] = (double)(rl_mono_ns() - t0) / 1e6;
        }
        printf("plot %-24s %-4s %8.1f ms (median of %d, 640x480 @100 dpi, incl. copy+write)\n",
               name, fmts[k], median(t, RUNS), RUNS);
    }
    free(x);
    free(y);
    return 0;
}

int main(void)
{
    char dir[] = "/tmp/runlab-bench-plot-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    int rc = bench_case("line 1,000,000 points", false, 1000000, dir);
    if (rc == 0)
        rc = bench_case("scatter 100,000 points", true, 100000, dir);
    static const char *const fmts[] = {"png", "svg", "pdf"};
    char path[4200];
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/bench.%s", dir, fmts[k]);
        remove(path);
    }
    rmdir(dir);
    return rc;
}
