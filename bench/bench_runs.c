/* Benchmark of the run loader (runlab/runs.h) against `cat` and pandas: writes 1000 runs x
 * 2000 cycles x 40 columns with runlab/perflog.h (RUNLAB_BENCH_RUNS overrides the run
 * count), reads every CSV once with plain read() (what `cat` costs), loads them with
 * rl_runs_load and, in the same run, with pandas.read_csv through /usr/bin/python3, and
 * prints the time ratios and the memory held per byte of numbers. Without pandas it prints
 * the figure measured when docs/perflog.md was written. RUNLAB_BENCH_NO_PANDAS=1 skips
 * pandas (minutes on a loaded machine) while iterating; `make bench` runs it. */
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/perflog.h"
#include "runlab/runs.h"
#include "runlab/time.h"

#include "bench_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

enum { CYCLES = 2000, COLUMNS = 40 };

/* One run written through perflog, with the mix of values a planner logs: timers
 * (decimal nanoseconds), counters, cumulative totals and a few full-precision gauges. */
static int write_template(const char *root, char *dir, size_t cap)
{
    rl_perflog_config cfg;
    rl_perflog_config_init(&cfg);
    cfg.root = root;
    cfg.dataset = "bench";
    cfg.scene = "template";
    cfg.planner = "p";
    cfg.cost_budget = 1e6;
    rl_perflog *pl;
    int rc = rl_perflog_new(&pl, &cfg);
    if (rc != RL_OK)
        return rc;
    int ids[COLUMNS];
    const int ncols = COLUMNS - 2; /* CycleIndex and ElapsedWallTimeSec are built in */
    rc = rl_perflog_add_layer(pl, "planning", "bench");
    for (int i = 0; rc == RL_OK && i < ncols; i++) {
        char name[32];
        snprintf(name, sizeof name, "Col%02d", i);
        rl_perflog_type t = i % 4 == 0 ? RL_COL_COUNTER : i % 4 == 1 ? RL_COL_TOTAL : RL_COL_GAUGE;
        rc = rl_perflog_declare(pl, i < 10 ? NULL : "planning", name, t, "s", NULL, &ids[i]);
    }
    if (rc == RL_OK)
        rc = rl_perflog_start(pl);
    uint64_t s = 12345;
    for (int c = 0; rc == RL_OK && c < CYCLES; c++) {
        for (int i = 0; i < ncols; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t r = (uint32_t)(s >> 33);
            if (i % 4 == 0)
                rl_perflog_count(pl, ids[i], r % 50);
            else if (i % 4 == 1)
                rl_perflog_add(pl, ids[i], (r % 1000) * 0.25);
            else if (i % 8 == 2)
                rl_perflog_set(pl, ids[i], (double)r / 4294967296.0); /* 17 digits */
            else
                rl_perflog_set(pl, ids[i], (r % 1000000) * 1e-9); /* timer-like */
        }
        rc = rl_perflog_cycle_end(pl);
    }
    if (rc == RL_OK) {
        snprintf(dir, cap, "%s", rl_perflog_run_dir(pl));
        rc = rl_perflog_end(pl, RL_END_BUDGET_EXHAUSTED);
    }
    rl_perflog_free(pl);
    return rc;
}

static int copy_run(const char *from, const char *to_parent, int k)
{
    static const char *const files[] = {"run_manifest.yaml", "performance_log.csv",
                                        "episode_summary.yaml", "params.yaml"};
    char name[32], to[PATH_MAX];
    snprintf(name, sizeof name, "20260101_%06d", k);
    int rc = rl_fs_mkdir_new(to_parent, name, RL_MKDIR_FAIL_IF_EXISTS, to, sizeof to);
    for (int i = 0; rc == RL_OK && i < 4; i++) {
        char src[PATH_MAX + 32], dst[PATH_MAX + 32];
        snprintf(src, sizeof src, "%s/%s", from, files[i]);
        snprintf(dst, sizeof dst, "%s/%s", to, files[i]);
        char *buf;
        size_t len;
        rc = rl_fs_read_all(src, (size_t)1 << 30, &buf, &len);
        if (rc != RL_OK)
            break;
        FILE *f = fopen(dst, "wb");
        if (!f || fwrite(buf, 1, len, f) != len)
            rc = rl_error_set(RL_EIO, "bench: cannot write %s", dst);
        if (f)
            fclose(f);
        free(buf);
    }
    return rc;
}

/* The `cat` baseline: every run's performance_log.csv read once with read() into one
 * 1 MiB buffer, as cat does. Returns the bytes read. */
static size_t read_like_cat(const char *data)
{
    static char buf[1 << 20];
    size_t total = 0;
    DIR *d = opendir(data);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s/performance_log.csv", data, e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0)
            total += (size_t)n;
        close(fd);
    }
    closedir(d);
    return total;
}

static const char *pandas_script =
    "import os, sys, time\n"
    "import pandas as pd\n"
    "t = time.perf_counter(); n = 0; cells = 0\n"
    "for d, _, fs in os.walk(sys.argv[1]):\n"
    "    if 'performance_log.csv' in fs:\n"
    "        df = pd.read_csv(os.path.join(d, 'performance_log.csv'))\n"
    "        n += 1; cells += df.size\n"
    "print('%.6f %d %d' % (time.perf_counter() - t, n, cells))\n";

int main(void)
{
    int runs = 1000;
    const char *env = getenv("RUNLAB_BENCH_RUNS");
    if (env && atoi(env) > 0)
        runs = atoi(env);
    char root[PATH_MAX], tmpl[PATH_MAX], data[PATH_MAX + 8];
    if (rl_fs_mkdtemp("runlab-bench-runs-", root, sizeof root) != RL_OK) {
        fprintf(stderr, "bench_runs: %s\n", rl_error_last());
        return 1;
    }
    snprintf(data, sizeof data, "%s/data", root);
    int rc = write_template(root, tmpl, sizeof tmpl);
    if (rc == RL_OK)
        rc = rl_fs_mkdirs(data);
    int64_t t0 = rl_mono_ns();
    for (int k = 0; rc == RL_OK && k < runs; k++)
        rc = copy_run(tmpl, data, k);
    if (rc != RL_OK) {
        fprintf(stderr, "bench_runs: preparing data: %s\n", rl_error_last());
        rl_fs_remove_tree(root);
        return 1;
    }
    char csv_path[PATH_MAX + 32];
    snprintf(csv_path, sizeof csv_path, "%s/performance_log.csv", tmpl);
    char *buf;
    size_t csv_len = 0;
    if (rl_fs_read_all(csv_path, (size_t)1 << 30, &buf, &csv_len) == RL_OK)
        free(buf);
    printf("bench_runs: %d runs x %d cycles x %d columns, %.0f MB of CSV (written in %.1f s)\n",
           runs, CYCLES, COLUMNS, (double)csv_len * runs / 1e6, (double)(rl_mono_ns() - t0) / 1e9);

    /* cat: the same bytes read once, the floor for any loader (twice: the first warms the
     * page cache the loader then also finds warm). */
    read_like_cat(data);
    double c0 = bench_cpu_s();
    t0 = rl_mono_ns();
    size_t cat_bytes = read_like_cat(data);
    double t_cat = (double)(rl_mono_ns() - t0) / 1e9, cpu_cat = bench_cpu_s() - c0;
    printf("  cat (read() of every CSV): %.3f s (%.3f s CPU), %.0f MB/s\n", t_cat, cpu_cat,
           (double)cat_bytes / 1e6 / t_cat);

    /* runlab: peak RSS over the load, relative to the bytes of numbers loaded. */
    bench_reset_peak_rss();
    long long rss0 = bench_proc_status_bytes("VmRSS");
    const char *roots[] = {data};
    rl_run_set *set;
    c0 = bench_cpu_s();
    t0 = rl_mono_ns();
    if (rl_runs_load(roots, 1, NULL, &set) != RL_OK) {
        fprintf(stderr, "bench_runs: %s\n", rl_error_last());
        rl_fs_remove_tree(root);
        return 1;
    }
    double t_rl = (double)(rl_mono_ns() - t0) / 1e9, cpu_rl = bench_cpu_s() - c0;
    long long hwm = bench_proc_status_bytes("VmHWM"), rss1 = bench_proc_status_bytes("VmRSS");
    rl_runs_report rep;
    rl_runs_aggregate(set, &rep);
    double numbers = (double)rep.rows * COLUMNS * sizeof(double);
    printf("  runlab: %.3f s (%.3f s CPU on %ld cores), %zu runs (%zu parsed), %.0f M numbers, "
           "%.0f MB/s\n",
           t_rl, cpu_rl, sysconf(_SC_NPROCESSORS_ONLN), rep.total, rep.by_status[RL_RUN_PARSED],
           numbers / 8 / 1e6, (double)csv_len * runs / 1e6 / t_rl);
    printf("  ratio: runlab takes %.2fx the time of cat (target <= 3x)\n", t_rl / t_cat);
    /* On a loaded machine the wall time is mostly waiting for a core; the CPU time spread
     * over the cores is what an idle machine would take at best. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("  ratio: runlab CPU / %ld cores = %.3f s, %.2fx cat's time (idle-machine estimate)\n",
           cores, cpu_rl / (double)(cores > 0 ? cores : 1),
           cpu_rl / (double)(cores > 0 ? cores : 1) / t_cat);
    printf("  memory: %.0f MB of numbers; RSS held +%.0f MB (%.2fx), peak +%.0f MB (%.2fx); "
           "target <= 1.5x\n",
           numbers / 1e6, (double)(rss1 - rss0) / 1e6, (double)(rss1 - rss0) / numbers,
           (double)(hwm - rss0) / 1e6, (double)(hwm - rss0) / numbers);
    rl_run_set_free(set);

    /* pandas, same files, same process tree. */
    if (getenv("RUNLAB_BENCH_NO_PANDAS")) {
        printf("  pandas: skipped (RUNLAB_BENCH_NO_PANDAS)\n");
        if (!getenv("RUNLAB_BENCH_KEEP"))
            rl_fs_remove_tree(root);
        return 0;
    }
    char cmd[3 * PATH_MAX], script[PATH_MAX + 32];
    snprintf(script, sizeof script, "%s/pandas_load.py", root);
    FILE *f = fopen(script, "w");
    if (f) {
        fputs(pandas_script, f);
        fclose(f);
    }
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' 2>&1", script, data);
    FILE *p = popen(cmd, "r");
    double t_pd = 0;
    long pd_runs = 0, pd_cells = 0;
    char line[512] = "";
    if (p) {
        if (!fgets(line, sizeof line, p))
            line[0] = '\0';
        pclose(p);
    }
    if (sscanf(line, "%lf %ld %ld", &t_pd, &pd_runs, &pd_cells) == 3 && t_pd > 0) {
        printf("  pandas: %.3f s, %ld runs, %ld cells\n", t_pd, pd_runs, pd_cells);
        printf("  ratio: runlab is %.1fx faster than pandas.read_csv (target >= 10x)\n",
               t_pd / t_rl);
    } else {
        printf("  pandas: not available (%s); install python3-pandas. docs/perflog.md: "
               "pandas 1.5.3 took 12.6-13.2 s for these 879 MB\n",
               line[0] ? strtok(line, "\n") : "no output");
    }
    if (!getenv("RUNLAB_BENCH_KEEP"))
        rl_fs_remove_tree(root);
    else
        printf("  data kept in %s\n", root);
    return 0;
}
