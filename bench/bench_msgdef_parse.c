/* Benchmark of schema parsing (runlab/msgdef.h) on large schemas: an IDL enum of 100 k
 * enumerators and a struct of 200 k members (every other one an array type of its own),
 * each timed against a baseline of a tenth the size measured in the same run. Parsing is
 * linear when the ratio stays near 10 (it was ~100, names compared with every earlier
 * name: 140 s for the enum). CPU time of this process, median of five runs. */
#include "runlab/error.h"
#include "runlab/msgdef.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RUNS = 5 };

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *make_schema(int is_enum, size_t n, size_t *len)
{
    char *s = malloc(n * 24 + 64);
    if (!s) {
        fprintf(stderr, "bench_msgdef_parse: out of memory\n");
        exit(1);
    }
    size_t k = (size_t)sprintf(s, is_enum ? "enum E {" : "struct T {");
    for (size_t i = 0; i < n; i++) {
        if (is_enum)
            k += (size_t)sprintf(s + k, "%sE%zu", i ? "," : "", i);
        else
            k += (size_t)(i % 2 ? sprintf(s + k, "long m%zu;", i) : sprintf(s + k, "long m%zu[%zu];", i, i + 1));
    }
    k += (size_t)sprintf(s + k, is_enum ? "}; struct T { E e; };" : "};");
    *len = k;
    return s;
}

/* Median CPU seconds of parsing the schema of n enumerators / members. */
static double time_parse(int is_enum, size_t n)
{
    size_t len;
    char *text = make_schema(is_enum, n, &len);
    double t[RUNS];
    for (int r = 0; r < RUNS; r++) {
        rl_msgdef *d = NULL;
        double t0 = cpu_now();
        if (rl_msgdef_parse(&d, "omgidl", "T", text, len) < 0) {
            fprintf(stderr, "bench_msgdef_parse: %s\n", rl_error_last());
            exit(1);
        }
        t[r] = cpu_now() - t0;
        rl_msgdef_free(d);
    }
    free(text);
    return bench_median(t, RUNS);
}

static void one(const char *what, int is_enum, size_t base, size_t big)
{
    double tb = time_parse(is_enum, base), tl = time_parse(is_enum, big);
    double ratio = tb > 0 ? tl / tb : 0;
    printf("  %-12s %7zu: %8.4f s   %7zu: %8.4f s   ratio %5.1f (x%zu the size; linear ~%zu, "
           "quadratic ~%zu)\n",
           what, base, tb, big, tl, ratio, big / base, big / base, (big / base) * (big / base));
}

int main(void)
{
    printf("schema parsing (omgidl, CPU time, median of %d)\n", RUNS);
    one("enumerators", 1, 10000, 100000);
    one("members", 0, 20000, 200000);
    return 0;
}
