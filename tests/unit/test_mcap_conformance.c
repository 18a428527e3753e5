/* The official MCAP conformance suite (../shared/mcap-conformance) run through
 * build/bin/mcap-conformance exactly as its README's three contracts say: streamed and
 * indexed reads compared as JSON trees with the expected records, writes compared byte for
 * byte. Every failing file is named; the test skips (77) when the data is absent. */
#include "rl_test.h"

#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char data_dir[4096];
static char tool[4096];

/* Every .json under data/<Base>/, sorted, as malloc'd paths without the extension. */
static char **list_variants(size_t *count)
{
    char **out = NULL;
    size_t n = 0, cap = 0;
    DIR *d = opendir(data_dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sub[4600];
        snprintf(sub, sizeof sub, "%s/%s", data_dir, e->d_name);
        DIR *s = opendir(sub);
        if (!s)
            continue;
        struct dirent *f;
        while ((f = readdir(s))) {
            size_t l = strlen(f->d_name);
            if (l < 6 || strcmp(f->d_name + l - 5, ".json") != 0)
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 256;
                out = realloc(out, cap * sizeof *out);
                assert_non_null(out);
            }
            char p[4900];
            snprintf(p, sizeof p, "%s/%.*s", sub, (int)(l - 5), f->d_name);
            out[n++] = strdup(p);
        }
        closedir(s);
    }
    closedir(d);
    for (size_t i = 1; i < n; i++) /* insertion sort: a stable, readable order */
        for (size_t j = i; j > 0 && strcmp(out[j - 1], out[j]) > 0; j--) {
            char *t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    *count = n;
    return out;
}

/* Runs the tool and collects its stdout; returns the exit status (-1 if it crashed). */
static int run_tool(const char *cmd, const char *path, char **out, size_t *out_len)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        execl(tool, tool, cmd, path, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap + 1);
    assert_non_null(buf);
    for (;;) {
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
        ssize_t r = read(fds[0], buf + len, cap - len);
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    *out = buf;
    *out_len = len;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static json_object *load_expected(const char *base)
{
    char p[5000];
    snprintf(p, sizeof p, "%s.json", base);
    json_object *o = json_object_from_file(p);
    assert_non_null(o);
    return o;
}

static int has_feature(json_object *exp, const char *code)
{
    json_object *meta, *variant, *features;
    if (!json_object_object_get_ex(exp, "meta", &meta) ||
        !json_object_object_get_ex(meta, "variant", &variant) ||
        !json_object_object_get_ex(variant, "features", &features))
        return 0;
    for (size_t i = 0; i < json_object_array_length(features); i++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(features, i)), code) == 0)
            return 1;
    return 0;
}

static const char *record_type(json_object *rec)
{
    json_object *t;
    return json_object_object_get_ex(rec, "type", &t) ? json_object_get_string(t) : "";
}

static const char *record_field(json_object *rec, const char *name)
{
    json_object *fields;
    if (!json_object_object_get_ex(rec, "fields", &fields))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(fields); i++) {
        json_object *p = json_object_array_get_idx(fields, i);
        if (strcmp(json_object_get_string(json_object_array_get_idx(p, 0)), name) == 0)
            return json_object_get_string(json_object_array_get_idx(p, 1));
    }
    return NULL;
}

static const char *short_name(const char *base)
{
    const char *s = strrchr(base, '/');
    return s ? s + 1 : base;
}

static void test_read_streamed(void **state)
{
    (void)state;
    size_t n = 0, failed = 0;
    char **v = list_variants(&n);
    assert_int_equal(n, 416);
    for (size_t i = 0; i < n; i++) {
        char mcap[5000];
        snprintf(mcap, sizeof mcap, "%s.mcap", v[i]);
        json_object *exp = load_expected(v[i]);
        char *out;
        size_t len;
        int st = run_tool("read-streamed", mcap, &out, &len);
        json_object *got = st == 0 ? json_tokener_parse(out) : NULL;
        json_object *got_recs = NULL, *exp_recs = NULL;
        json_object_object_get_ex(exp, "records", &exp_recs);
        if (got)
            json_object_object_get_ex(got, "records", &got_recs);
        if (!got_recs || !json_object_equal(got_recs, exp_recs)) {
            print_message("FAIL read-streamed %s (exit %d)\n", short_name(v[i]), st);
            failed++;
        }
        json_object_put(got);
        json_object_put(exp);
        free(out);
        free(v[i]);
    }
    free(v);
    print_message("read-streamed: %zu of %zu files pass\n", n - failed, n);
    assert_int_equal(failed, 0);
}

static unsigned long long num_field(json_object *rec, const char *name)
{
    return strtoull(record_field(rec, name), NULL, 10);
}

/* Records of `type` in file order, stably sorted by numeric field `key`; with `unique`,
 * only the first record of each key value is kept (schemas and channels by id). */
static json_object *select_sorted(json_object *recs, const char *type, const char *key, int unique)
{
    size_t n = json_object_array_length(recs), k = 0;
    json_object **sel = calloc(n + 1, sizeof *sel);
    assert_non_null(sel);
    for (size_t i = 0; i < n; i++) {
        json_object *r = json_object_array_get_idx(recs, i);
        if (strcmp(record_type(r), type) != 0)
            continue;
        int dup = 0;
        for (size_t j = 0; unique && j < k; j++)
            dup |= num_field(sel[j], key) == num_field(r, key);
        if (dup)
            continue;
        size_t at = k;
        while (at > 0 && num_field(sel[at - 1], key) > num_field(r, key)) {
            sel[at] = sel[at - 1];
            at--;
        }
        sel[at] = r;
        k++;
    }
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < k; i++)
        json_object_array_add(out, json_object_get(sel[i]));
    free(sel);
    return out;
}

static json_object *expected_indexed(json_object *recs)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "schemas", select_sorted(recs, "Schema", "id", 1));
    json_object_object_add(o, "channels", select_sorted(recs, "Channel", "id", 1));
    json_object_object_add(o, "messages", select_sorted(recs, "Message", "log_time", 0));
    json_object_object_add(o, "statistics", select_sorted(recs, "Statistics", "message_count", 0));
    return o;
}

static void test_read_indexed(void **state)
{
    (void)state;
    size_t n = 0, failed = 0, applicable = 0;
    char **v = list_variants(&n);
    static const char *const required[] = {"ch", "chx", "mx", "rch", "rsh"};
    for (size_t i = 0; i < n; i++) {
        json_object *exp = load_expected(v[i]), *recs = NULL;
        json_object_object_get_ex(exp, "records", &recs);
        int has_msg = 0, ok = 1;
        for (size_t j = 0; j < json_object_array_length(recs); j++)
            has_msg |= strcmp(record_type(json_object_array_get_idx(recs, j)), "Message") == 0;
        for (size_t k = 0; k < sizeof required / sizeof required[0]; k++)
            ok &= has_feature(exp, required[k]);
        if (has_msg && ok) {
            applicable++;
            char mcap[5000];
            snprintf(mcap, sizeof mcap, "%s.mcap", v[i]);
            char *out;
            size_t len;
            int st = run_tool("read-indexed", mcap, &out, &len);
            json_object *got = st == 0 ? json_tokener_parse(out) : NULL;
            json_object *want = expected_indexed(recs);
            if (!got || !json_object_equal(got, want)) {
                print_message("FAIL read-indexed %s (exit %d)\n", short_name(v[i]), st);
                failed++;
            }
            json_object_put(got);
            json_object_put(want);
            free(out);
        }
        json_object_put(exp);
        free(v[i]);
    }
    free(v);
    print_message("read-indexed: %zu of %zu files pass\n", applicable - failed, applicable);
    assert_int_equal(applicable, 16);
    assert_int_equal(failed, 0);
}

static void test_write(void **state)
{
    (void)state;
    size_t n = 0, failed = 0, applicable = 0;
    char **v = list_variants(&n);
    for (size_t i = 0; i < n; i++) {
        json_object *exp = load_expected(v[i]);
        if (!has_feature(exp, "pad")) {
            applicable++;
            char js[5000], mcap[5000];
            snprintf(js, sizeof js, "%s.json", v[i]);
            snprintf(mcap, sizeof mcap, "%s.mcap", v[i]);
            size_t want_len = 0, len = 0;
            char *want = rl_test_read_file(mcap, &want_len), *out = NULL;
            int st = run_tool("write", js, &out, &len);
            if (st != 0 || len != want_len || memcmp(out, want, len) != 0) {
                print_message("FAIL write %s (exit %d, %zu bytes, expected %zu)\n",
                              short_name(v[i]), st, len, want_len);
                failed++;
            }
            free(want);
            free(out);
        }
        json_object_put(exp);
        free(v[i]);
    }
    free(v);
    print_message("write: %zu of %zu files pass\n", applicable - failed, applicable);
    assert_int_equal(applicable, 208);
    assert_int_equal(failed, 0);
}

int main(void)
{
    const char *shared = rl_test_shared_dir();
    struct stat st;
    if (shared)
        snprintf(data_dir, sizeof data_dir, "%s/mcap-conformance/data", shared);
    if (!shared || stat(data_dir, &st) != 0) {
        printf("SKIP: MCAP conformance: shared data folder (mcap-conformance/data) not present\n");
        return 77;
    }
    const char *bin = getenv("RUNLAB_BIN");
    snprintf(tool, sizeof tool, "%s/mcap-conformance", bin && *bin ? bin : "bin");
    if (access(tool, X_OK) != 0) {
        printf("FAIL: %s not found or not executable (build the tools first)\n", tool);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_streamed),
        cmocka_unit_test(test_read_indexed),
        cmocka_unit_test(test_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
