/* `runlab demo`: the main job on built-in data, run by `make run`. It shows what
 * exists, for real: version and provenance, a self-check that exercises the core
 * modules in a scratch directory, then each module's own demonstration, writing its
 * outputs into a new directory (never reused) that the user can open afterwards. */
#include "cli.h"

#include "runlab/csv.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"
#include "runlab/json.h"
#include "runlab/provenance.h"
#include "runlab/time.h"
#include "runlab/yaml.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct selfcheck {
    int passed;
    int failed;
};

static void report(struct selfcheck *sc, const char *what, int rc)
{
    if (rc == RL_OK) {
        sc->passed++;
        printf("  ok    %s\n", what);
    } else {
        sc->failed++;
        printf("  FAIL  %s: %s\n", what, rl_error_last());
    }
}

static int check_time(void)
{
    int64_t now = rl_time_now_ns(), back = 0;
    char iso[RL_TIME_ISO_LEN];
    int rc = rl_time_format_iso(now, iso, sizeof iso);
    if (rc == RL_OK)
        rc = rl_time_parse_iso(iso, &back);
    if (rc == RL_OK && back != now)
        rc = rl_error_set(RL_ERR, "%s read back as %lld, not %lld", iso, (long long)back,
                          (long long)now);
    return rc;
}

static int check_hashes(void)
{
    uint8_t d[RL_SHA256_LEN];
    char hex[RL_SHA256_HEX_LEN + 1];
    int rc = rl_sha256("abc", 3, d);
    if (rc < 0)
        return rc;
    rl_sha256_hex(d, hex);
    if (strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") != 0)
        return rl_error_set(RL_ERR, "SHA-256(\"abc\") = %s, wrong", hex);
    uint32_t crc = rl_crc32(0, "123456789", 9);
    if (crc != 0xCBF43926u)
        return rl_error_set(RL_ERR, "CRC-32 check value 0x%08x, expected 0xcbf43926", crc);
    return RL_OK;
}

/* Two run directories with the same name: the second gets a suffix, the first is kept. */
static int check_run_dirs(const char *scratch)
{
    char a[PATH_MAX], b[PATH_MAX];
    int rc = rl_fs_mkdir_new(scratch, "run", RL_MKDIR_ADD_SUFFIX, a, sizeof a);
    if (rc == RL_OK)
        rc = rl_fs_mkdir_new(scratch, "run", RL_MKDIR_ADD_SUFFIX, b, sizeof b);
    if (rc == RL_OK && strcmp(a, b) == 0)
        return rl_error_set(RL_ERR, "directory %s was handed out twice", a);
    if (rc == RL_OK && rl_fs_mkdir_new(scratch, "run", RL_MKDIR_FAIL_IF_EXISTS, b, sizeof b) !=
                           RL_EEXIST)
        return rl_error_set(RL_ERR, "an existing run directory was not refused");
    if (rc == RL_OK && rl_path_check_name("../escape", "run id") != RL_EINVAL)
        return rl_error_set(RL_ERR, "the run id '../escape' was accepted");
    return rc;
}

/* Atomic write, then the file's SHA-256 equals the buffer's. */
static int check_atomic_write(const char *scratch)
{
    char path[PATH_MAX];
    int rc = rl_path_join(path, sizeof path, scratch, "manifest.txt");
    const char text[] = "result: COMPLETE\n";
    if (rc == RL_OK)
        rc = rl_fs_write_atomic(path, "draft\n", 6, 0644);
    if (rc == RL_OK)
        rc = rl_fs_write_atomic(path, text, sizeof text - 1, 0644);
    uint8_t want[RL_SHA256_LEN], got[RL_SHA256_LEN];
    uint64_t size = 0;
    if (rc == RL_OK)
        rc = rl_sha256(text, sizeof text - 1, want);
    if (rc == RL_OK)
        rc = rl_sha256_file(path, got, &size);
    if (rc == RL_OK && (size != sizeof text - 1 || memcmp(want, got, sizeof want) != 0))
        rc = rl_error_set(RL_ERR, "%s does not hold what was written", path);
    return rc;
}

/* Provenance written as JSON and as YAML reads back equal to the struct's JSON form. */
static int check_provenance_files(const char *scratch, const rl_provenance *prov)
{
    char json_path[PATH_MAX], yaml_path[PATH_MAX];
    json_object *want = rl_provenance_to_json(prov), *from_json = NULL, *from_yaml = NULL;
    if (!want)
        return rl_error_set(RL_ENOMEM, "provenance: out of memory");
    int rc = rl_path_join(json_path, sizeof json_path, scratch, "provenance.json");
    if (rc == RL_OK)
        rc = rl_path_join(yaml_path, sizeof yaml_path, scratch, "provenance.yaml");
    if (rc == RL_OK)
        rc = rl_json_write_file(json_path, want);
    if (rc == RL_OK)
        rc = rl_yaml_write_file(yaml_path, want);
    if (rc == RL_OK)
        rc = rl_json_read_file(json_path, 1 << 20, &from_json);
    if (rc == RL_OK)
        rc = rl_yaml_read_file(yaml_path, 1 << 20, &from_yaml);
    if (rc == RL_OK && !json_object_equal(want, from_json))
        rc = rl_error_set(RL_ERR, "%s does not read back equal", json_path);
    if (rc == RL_OK && !json_object_equal(want, from_yaml))
        rc = rl_error_set(RL_ERR, "%s does not read back equal", yaml_path);
    json_object_put(want);
    json_object_put(from_json);
    json_object_put(from_yaml);
    return rc;
}

/* A CSV with the awkward cases (quotes, delimiters, a newline, a NaN) reads back field
 * for field, and a broken one is refused with its line and column. */
static int check_csv(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return rl_error_set(RL_ENOMEM, "csv: out of memory");
    rl_csv_writer *w;
    static const char *const row[] = {"planner", "say \"hi\", then\nleave", "1.5"};
    int rc = rl_csv_writer_new(&w, mem, ',', false);
    if (rc == RL_OK) {
        rc = rl_csv_write_row(w, row, 3);
        if (rc == RL_OK)
            rc = rl_csv_write_str(w, "RRT*");
        if (rc == RL_OK)
            rc = rl_csv_write_i64(w, -7);
        if (rc == RL_OK)
            rc = rl_csv_write_f64(w, 0.1);
        if (rc == RL_OK)
            rc = rl_csv_end_row(w);
        rl_csv_writer_free(w);
    }
    fclose(mem);
    rl_csv_reader *r = NULL;
    rl_csv_row got;
    if (rc == RL_OK)
        rc = rl_csv_open_mem(&r, text, len, "demo.csv", NULL);
    if (rc == RL_OK && rl_csv_next(r, &got) == 1 && got.count == 3 &&
        strcmp(got.fields[1].data, row[1]) == 0 && rl_csv_next(r, &got) == 1 &&
        strcmp(got.fields[2].data, "0.1") == 0 && rl_csv_next(r, &got) == 0)
        rc = RL_OK;
    else if (rc == RL_OK)
        rc = rl_error_set(RL_ERR, "CSV did not read back as written: %s", text);
    rl_csv_close(r);
    free(text);
    if (rc < 0)
        return rc;
    static const char broken[] = "a,b\n1,\"2\n";
    if (rl_csv_open_mem(&r, broken, sizeof broken - 1, "broken.csv", NULL) != RL_OK)
        return rl_error_last_code();
    rc = rl_csv_next(r, &got);
    rc = rl_csv_next(r, &got);
    rl_csv_close(r);
    if (rc != RL_EPARSE || !strstr(rl_error_last(), "broken.csv:2:"))
        return rl_error_set(RL_ERR, "an unterminated quote was not reported at line 2");
    return RL_OK;
}

static int check_free_space(const char *scratch, uint64_t *free_bytes)
{
    return rl_fs_free_bytes(scratch, free_bytes);
}

static void usage(FILE *out)
{
    fprintf(out, "Usage: runlab demo [--out-dir DIR] [--domain D]\n\n"
                 "Runs runlab's built-in demonstration: version and provenance, a self-check\n"
                 "of the core modules, and each module's demonstration on built-in data. The\n"
                 "lab's part records a simulated experiment of four vehicles over DDS and ends\n"
                 "as a lab's day does: `runlab list` of the runs, `runlab evaluate` of the new\n"
                 "one. It uses DDS (Cyclone) on loopback only: interface lo, no multicast, peer\n"
                 "127.0.0.1, unless CYCLONEDDS_URI is set, which is then used as it is.\n\n"
                 "  --out-dir DIR  parent directory for the demo's outputs (default: .);\n"
                 "                 a new directory runlab-demo-<UTC time> is created in it\n"
                 "                 and never reused (old spellings: --out, -o)\n"
                 "  --domain D     the DDS domain of the lab's part, 0..232 (default: 231 or\n"
                 "                 232, whichever no other demo on this host holds)\n"
                 "  -h, --help     show this help\n");
}

/* The gallery gets a folder of its own inside the demo directory. */
static int demo_gallery(const char *out_dir)
{
    char dir[PATH_MAX];
    if (rl_path_join(dir, sizeof dir, out_dir, "gallery") != RL_OK)
        return cli_fail("demo", "%s", rl_error_last());
    printf("Figure gallery (runlab plot): every plot kind as PNG and SVG, each with its record\n");
    return demo_plot(dir);
}

/* The lab demonstration's DDS domain (-1: one no other demo holds). */
static int g_demo_domain = -1;

static int demo_lab_section(const char *out_dir)
{
    return demo_lab(out_dir, g_demo_domain);
}

int cmd_demo(int argc, char **argv)
{
    const char *out_parent = ".", *out_spelling = "--out-dir";
    static const struct option opts[] = {
        {"out-dir", required_argument, NULL, 'o'},
        {"out", required_argument, NULL, 'o'}, /* old name, kept */
        {"domain", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    g_demo_domain = -1;
    int c, li = -1;
    while ((li = -1, c = getopt_long(argc, argv, "+o:h", opts, &li)) != -1) {
        switch (c) {
        case 'o': /* errors name the option as it was typed */
            out_parent = optarg;
            out_spelling = li >= 0 ? (li == 0 ? "--out-dir" : "--out") : "-o";
            break;
        case 'd': {
            double d;
            int ec = cli_parse_number("demo", "--domain", optarg, 0, 232, 0, &d);
            if (ec != RL_EXIT_OK)
                return ec;
            g_demo_domain = (int)d;
            break;
        }
        case 'h': usage(stdout); return RL_EXIT_OK;
        default: return cli_usage_error("demo", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("demo", "unexpected argument '%s'", argv[optind]);
    /* Absolute, so every path the demo prints can be opened from anywhere; checked before
     * any work so a wrong --out fails at once. */
    char parent[PATH_MAX];
    if (!realpath(out_parent, parent))
        return cli_fail("demo", "%s %s: %s", out_spelling, out_parent, strerror(errno));

    rl_provenance p;
    rl_provenance_collect(&p);
    char now[RL_TIME_ISO_LEN];
    rl_time_format_iso(rl_time_now_ns(), now, sizeof now);
    printf("runlab %s\n", rl_version_string());
    printf("  time     %s\n  host     %s\n  cpu      %s (%d cores)\n  os       %s\n"
           "  build    %s, %s\n\n",
           now, p.host, p.cpu_model, p.cpu_cores, p.os, p.build_type, p.compiler);

    char scratch[PATH_MAX];
    if (rl_fs_mkdtemp("runlab-selfcheck-", scratch, sizeof scratch) != RL_OK)
        return cli_fail("demo", "%s", rl_error_last());
    struct selfcheck sc = {0, 0};
    uint64_t free_bytes = 0;
    printf("Core self-check (scratch directory %s)\n", scratch);
    report(&sc, "UTC time formats and parses back to the nanosecond", check_time());
    report(&sc, "SHA-256 and CRC-32 match their published check values", check_hashes());
    report(&sc, "run directories are never reused; bad run ids are refused",
           check_run_dirs(scratch));
    report(&sc, "atomic write replaces a file whole; its SHA-256 matches",
           check_atomic_write(scratch));
    report(&sc, "provenance written as JSON and YAML reads back equal",
           check_provenance_files(scratch, &p));
    report(&sc, "CSV round-trips quotes, newlines and numbers; errors give line:column",
           check_csv());
    report(&sc, "free disk space is readable", check_free_space(scratch, &free_bytes));
    rl_fs_remove_tree(scratch);
    printf("  %d passed, %d failed; %.1f GiB free\n\n", sc.passed, sc.failed,
           (double)free_bytes / (1024.0 * 1024.0 * 1024.0));
    if (sc.failed)
        return cli_fail("demo", "%d self-check(s) failed", sc.failed);

    /* Every module's demonstration writes into one new directory, never reused. */
    char stamp[RL_TIME_COMPACT_LEN], name[64], out_dir[PATH_MAX];
    rl_time_format_compact(rl_time_now_ns(), stamp, sizeof stamp);
    snprintf(name, sizeof name, "runlab-demo-%s", stamp);
    if (rl_fs_mkdir_new(parent, name, RL_MKDIR_ADD_SUFFIX, out_dir, sizeof out_dir) != RL_OK)
        return cli_fail("demo", "%s", rl_error_last());
    printf("Demo outputs go to %s\n\n", out_dir);
    fflush(stdout);

    const struct {
        const char *what;
        int (*run)(const char *dir);
    } sections[] = {
        {"figure gallery", demo_gallery},
        {"benchmark", cli_bench_demo},
        {"recording", demo_record},
        {"exploration sweep", demo_explore},
        {"lab over DDS", demo_lab_section},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        if (sections[i].run(out_dir) != RL_EXIT_OK) {
            fprintf(stderr, "runlab: demo: the %s demonstration failed\n", sections[i].what);
            failed++;
        }
        printf("\n");
        fflush(stdout);
    }
    printf("All demo outputs are in %s\n", out_dir);
    return failed ? RL_EXIT_FAILURE : RL_EXIT_OK;
}
