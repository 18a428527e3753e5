/* Benchmark of runlab's CSV reader and writer: generates ~100 MB of per-cycle planner log
 * in memory (integers, doubles, names, and some quoted notes holding commas, quotes and
 * newlines), reads it five times, and writes rows and doubles to a byte-counting sink.
 * Prints one figure per line, each the median of five runs. */
#include "runlab/csv.h"
#include "runlab/error.h"

#include "bench_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RUNS = 5, POOL_ROWS = 4096, NFIELDS = 10, F64_VALUES = 400000 };
#define TARGET_BYTES ((size_t)100 << 20)

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static double unit(void)
{
    return (double)(rng() >> 11) * 0x1.0p-53;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_csv: %s: %s\n", what, rl_error_last());
    exit(1);
}

/* Appends one generated row to `buf` (which has room) and returns its length. */
static int gen_row(char *buf, size_t cap, uint64_t i)
{
    static const char *const planners[] = {"rrt", "rrt_connect", "prm_star", "bit_star", "chomp"};
    static const char *const notes[] = {
        "", "", "", "", "", "", "", "", "", "", "", "", "", "", "ok",
        "\"goal tolerance 0.05, relaxed\"",
        "\"collision at link \"\"wrist_3\"\"\"",
        "\"replanned:\ntimeout, then success\"",
    };
    return snprintf(buf, cap, "%" PRIu64 ",run_%04u,%s,%" PRIu64 ",%.6f,%.6f,%.6f,%.17g,%d,%s\n",
                    (uint64_t)1764450000000000000u + i * 1000003u, (unsigned)(i / 50000),
                    planners[i % 5], i % 50000, unit() * 20 - 10, unit() * 20 - 10, unit() * 2,
                    unit() * 100, (int)(rng() % 8 != 0), notes[rng() % 18]);
}

static char *generate(size_t *len, uint64_t *rows)
{
    size_t cap = TARGET_BYTES + 4096;
    char *buf = malloc(cap);
    if (!buf)
        die("out of memory");
    size_t used = (size_t)snprintf(buf, cap,
                                   "t_ns,run_id,planner,iteration,x,y,z,cost,success,note\n");
    uint64_t i = 0;
    while (used < TARGET_BYTES) {
        used += (size_t)gen_row(buf + used, cap - used, i);
        i++;
    }
    *len = used;
    *rows = i + 1; /* with the header */
    return buf;
}

/* A FILE that discards what is written and counts it, so the writer is timed, not a disk. */
static ssize_t count_write(void *cookie, const char *buf, size_t n)
{
    (void)buf;
    *(size_t *)cookie += n;
    return (ssize_t)n;
}

static FILE *counting_sink(size_t *counter)
{
    cookie_io_functions_t io = {.read = NULL, .write = count_write, .seek = NULL, .close = NULL};
    FILE *f = fopencookie(counter, "w", io);
    if (!f)
        die("fopencookie");
    setvbuf(f, NULL, _IOFBF, 1 << 16);
    return f;
}

int main(void)
{
    double t0 = bench_now_s();
    size_t len;
    uint64_t rows;
    char *csv = generate(&len, &rows);
    printf("csv input: %.1f MB, %" PRIu64 " rows, %d fields (generated in %.2f s)\n",
           (double)len / 1e6, rows, NFIELDS, bench_now_s() - t0);

    /* Reading: every field is touched so the work cannot be skipped. */
    double mbs[RUNS], rps[RUNS];
    size_t checksum = 0;
    for (int run = 0; run < RUNS; run++) {
        double t = bench_now_s();
        rl_csv_reader *r = NULL;
        if (rl_csv_open_mem(&r, csv, len, "bench.csv", NULL) != RL_OK)
            die("open");
        rl_csv_row row;
        uint64_t n = 0;
        int rc;
        while ((rc = rl_csv_next(r, &row)) == 1) {
            for (size_t i = 0; i < row.count; i++)
                checksum += row.fields[i].len + (unsigned char)row.fields[i].data[0];
            n++;
        }
        if (rc != 0)
            die("read");
        rl_csv_close(r);
        double dt = bench_now_s() - t;
        if (n != rows) {
            fprintf(stderr, "bench_csv: read %" PRIu64 " rows, expected %" PRIu64 "\n", n, rows);
            return 1;
        }
        mbs[run] = (double)len / 1e6 / dt;
        rps[run] = (double)n / dt;
    }
    printf("csv read throughput: %.0f MB/s (median of %d)\n", bench_median(mbs, RUNS), RUNS);
    printf("csv read rows: %.2f M rows/s (median of %d)\n", bench_median(rps, RUNS) / 1e6, RUNS);

    /* Writing strings: a pool of parsed rows is written repeatedly up to the same size. */
    rl_csv_reader *pr = NULL;
    if (rl_csv_open_mem(&pr, csv, len, "pool", NULL) != RL_OK)
        die("open pool");
    /* Copies of the first rows' fields, NUL-terminated, as a caller would hold them. */
    char **pool = calloc((size_t)POOL_ROWS * NFIELDS, sizeof *pool);
    if (!pool)
        die("out of memory");
    size_t pool_rows = 0;
    rl_csv_row row;
    while (pool_rows < POOL_ROWS && rl_csv_next(pr, &row) == 1) {
        for (size_t i = 0; i < NFIELDS; i++)
            pool[pool_rows * NFIELDS + i] = strndup(row.fields[i].data, row.fields[i].len);
        pool_rows++;
    }
    rl_csv_close(pr);
    double wmbs[RUNS], wrps[RUNS];
    for (int run = 0; run < RUNS; run++) {
        size_t out = 0;
        FILE *f = counting_sink(&out);
        rl_csv_writer *w = NULL;
        if (rl_csv_writer_new(&w, f, ',', false) != RL_OK)
            die("writer");
        double t = bench_now_s();
        uint64_t n = 0;
        while (out < TARGET_BYTES) {
            for (size_t k = 0; k < pool_rows; k++) {
                if (rl_csv_write_row(w, (const char *const *)&pool[k * NFIELDS], NFIELDS) != RL_OK)
                    die("write");
            }
            n += pool_rows;
            fflush(f);
        }
        double dt = bench_now_s() - t;
        rl_csv_writer_free(w);
        fclose(f);
        wmbs[run] = (double)out / 1e6 / dt;
        wrps[run] = (double)n / dt;
    }
    printf("csv write throughput (string fields): %.0f MB/s (median of %d)\n",
           bench_median(wmbs, RUNS), RUNS);
    printf("csv write rows (string fields): %.2f M rows/s (median of %d)\n",
           bench_median(wrps, RUNS) / 1e6, RUNS);

    /* Writing doubles: shortest round-trip formatting dominates. */
    double *vals = malloc(F64_VALUES * sizeof *vals);
    if (!vals)
        die("out of memory");
    for (size_t i = 0; i < F64_VALUES; i++)
        vals[i] = i % 2 ? unit() * 1000 : (double)(int)(unit() * 1e6) / 1000;
    double fvs[RUNS];
    for (int run = 0; run < RUNS; run++) {
        size_t out = 0;
        FILE *f = counting_sink(&out);
        rl_csv_writer *w = NULL;
        if (rl_csv_writer_new(&w, f, ',', false) != RL_OK)
            die("writer");
        double t = bench_now_s();
        for (size_t i = 0; i < F64_VALUES; i++) {
            if (rl_csv_write_f64(w, vals[i]) != RL_OK)
                die("write f64");
            if (i % 8 == 7 && rl_csv_end_row(w) != RL_OK)
                die("end row");
        }
        double dt = bench_now_s() - t;
        rl_csv_writer_free(w);
        fclose(f);
        fvs[run] = F64_VALUES / dt;
    }
    printf("csv write doubles: %.2f M values/s (median of %d)\n", bench_median(fvs, RUNS) / 1e6, RUNS);

    for (size_t i = 0; i < pool_rows * NFIELDS; i++)
        free(pool[i]);
    free(pool);
    free(vals);
    free(csv);
    printf("csv checksum: %zu (total %.1f s)\n", checksum, bench_now_s() - t0);
    return 0;
}
