/* Tests of runlab/yaml.h: core-schema typing of plain scalars, quoted scalars as strings,
 * errors (syntax, duplicates, second documents, non-scalar keys, aliases) with exact
 * positions and nothing printed, alias expansion bounds, exact emitter output, and
 * randomized round trips through the emitter and the reader. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/yaml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_object *yparse(const char *text)
{
    json_object *o = NULL;
    if (rl_yaml_parse(text, strlen(text), "t.yaml", &o) != RL_OK)
        fail_msg("parse of '%s' failed: %s", text, rl_error_last());
    return o;
}

static void expect_error(const char *text, int code, const char *msg)
{
    json_object *o = (json_object *)1;
    int rc = rl_yaml_parse(text, strlen(text), "t.yaml", &o);
    if (rc != code)
        fail_msg("'%s': rc %d (%s), expected %d", text, rc, rl_error_last(), code);
    assert_null(o);
    assert_string_equal(rl_error_last(), msg);
}

/* The JSON text of a document, compact, for whole-value comparisons. */
static void assert_json(json_object *o, const char *want)
{
    rl_json_writer *w = NULL;
    assert_int_equal(rl_json_writer_new_buffer(&w, RL_JSON_COMPACT), RL_OK);
    assert_int_equal(rl_json_value(w, o), RL_OK);
    assert_string_equal(rl_json_writer_buffer(w, NULL), want);
    rl_json_writer_free(w);
}

static void test_core_schema(void **state)
{
    (void)state;
    json_object *o = yparse("- ~\n- null\n- NULL\n-\n- true\n- False\n- TRUE\n- yes\n"
                            "- 42\n- -17\n- +5\n- 0x1F\n- 0o17\n- 007\n- 0x\n"
                            "- 1.5\n- -.5\n- 1.\n- 1e3\n- 2E-2\n- .inf\n- -.Inf\n- +.INF\n"
                            "- 9223372036854775807\n- 18446744073709551615\n"
                            "- -9223372036854775808\n- 12:30\n- 1_000\n- 0b101\n- hello world\n");
    assert_json(o, "[null,null,null,null,true,false,true,\"yes\","
                   "42,-17,5,31,15,7,\"0x\","
                   "1.5,-0.5,1.0,1000.0,0.02,null,null,null,"
                   "9223372036854775807,18446744073709551615,"
                   "-9223372036854775808,\"12:30\",\"1_000\",\"0b101\",\"hello world\"]");
    assert_true(isinf(json_object_get_double(json_object_array_get_idx(o, 20))));
    assert_true(json_object_get_double(json_object_array_get_idx(o, 21)) < 0);
    assert_true(json_object_is_type(json_object_array_get_idx(o, 17), json_type_double));
    json_object_put(o);

    o = yparse("a: .nan\n");
    assert_true(isnan(json_object_get_double(json_object_object_get(o, "a"))));
    json_object_put(o);

    /* Quoted, block and "!"-tagged scalars are strings; core tags are honoured. */
    o = yparse("a: \"true\"\nb: '42'\nc: |\n  1.5\nd: ! null\ne: !!str 7\nf: !!float 3\n"
               "g: !!int \"12\"\nh: \"\"\ni: >-\n  folded\n  text\n");
    assert_json(o, "{\"a\":\"true\",\"b\":\"42\",\"c\":\"1.5\\n\",\"d\":\"null\",\"e\":\"7\","
                   "\"f\":3.0,\"g\":12,\"h\":\"\",\"i\":\"folded text\"}");
    json_object_put(o);

    /* Escapes in double quotes, including NUL, keep the string's length. */
    o = yparse("s: \"a\\0b\\x01\\u00e9\\t\"\n");
    json_object *s = json_object_object_get(o, "s");
    assert_int_equal(json_object_get_string_len(s), 7);
    assert_memory_equal(json_object_get_string(s), "a\0b\x01\xc3\xa9\t", 7);
    json_object_put(o);

    /* Empty inputs are null documents. */
    const char *empties[] = {"", "\n", "# only a comment\n", "---\n", "--- ~\n...\n"};
    for (size_t i = 0; i < sizeof empties / sizeof *empties; i++) {
        o = (json_object *)1;
        assert_int_equal(rl_yaml_parse(empties[i], strlen(empties[i]), "e", &o), RL_OK);
        assert_null(o);
    }
    o = yparse("just text");
    assert_string_equal(json_object_get_string(o), "just text");
    json_object_put(o);
}

/* Single-quoted scalars are decoded by YAML 1.2's rules (the expected values are
 * PyYAML's). libfyaml 0.7 returns x''' for 'x''''y' and leaks on runs of doubled quotes,
 * so runlab decodes these itself; under ASan this test also shows nothing leaks. */
static void test_single_quoted(void **state)
{
    (void)state;
    json_object *o = yparse("a: ''''\n"
                            "b: 'x''''y'\n"
                            "c: ''''''''''''\n"
                            "d: 'multi\n  line ''q'' \n\n  x'\n"
                            "e: 'a\r\n  b'\n"
                            "f: ''\n"
                            "g: '  lead and trail  '\n"
                            "h: 'one\n\n\n  three''s'\n"
                            "'k''ey': [ 'a''''b', 'c' ]\n");
    assert_json(o, "{\"a\":\"'\",\"b\":\"x''y\",\"c\":\"'''''\","
                   "\"d\":\"multi line 'q'\\nx\",\"e\":\"a b\",\"f\":\"\","
                   "\"g\":\"  lead and trail  \",\"h\":\"one\\n\\nthree's\","
                   "\"k'ey\":[\"a''b\",\"c\"]}");
    json_object_put(o);
    /* The same through an anchor and alias, and as a whole document of 99 quotes. */
    o = yparse("a: &q 'it''''s'\nb: *q\n");
    assert_json(o, "{\"a\":\"it''s\",\"b\":\"it''s\"}");
    json_object_put(o);
    char doc[202];
    memset(doc, '\'', 200);
    doc[200] = '\n';
    doc[201] = '\0';
    o = yparse(doc);
    assert_int_equal(json_object_get_string_len(o), 99);
    assert_int_equal(strspn(json_object_get_string(o), "'"), 99);
    json_object_put(o);
}

/* Double-quoted scalars are decoded by runlab too (expected values are PyYAML's):
 * libfyaml 0.7 loses the text after an escaped line break followed by empty lines
 * (the first case reads as "x" and five newlines) and leaks memory on such scalars. */
static void test_double_quoted(void **state)
{
    (void)state;
    static const struct {
        const char *yaml, *json;
    } cases[] = {
        {"\"x\\\n\n\n\n\n\ny\"\n", "\"x\\n\\n\\n\\n\\ny\""},
        {"\"\\\n\n\n\n\n\n\r\n\n\r\"", "\"\\n\\n\\n\\n\\n\\n\\n\\n\""},
        {"k: \"x\\\n\n\n  y\"\n", "{\"k\":\"x\\n\\ny\"}"},
        {"k: \"one\n  two  \n\n  three\"\n", "{\"k\":\"one two\\nthree\"}"},
        {"k: \"keep \\\n  joined\"\n", "{\"k\":\"keep joined\"}"},
        {"k: \"\\x41\\u00e9\\U0001F600\\t\\\\\\\"\\/\\N\\_\"\n",
         "{\"k\":\"A\xc3\xa9\xf0\x9f\x98\x80\\t\\\\\\\"/\xc2\x85\xc2\xa0\"}"},
        {"k: \"  edge  \"\n", "{\"k\":\"  edge  \"}"},
        {"[ \"a\\tb\", \"c\n  d\" ]\n", "[\"a\\tb\",\"c d\"]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object *o = yparse(cases[i].yaml);
        assert_json(o, cases[i].json);
        json_object_put(o);
    }
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("a: 1\nb: 2\na: 3\n", RL_EPARSE, "t.yaml:3:1: duplicate key 'a'");
    expect_error("top:\n  x: 1\n  \"x\": 2\n", RL_EPARSE, "t.yaml:3:3: duplicate key 'x'");
    expect_error("a: 1\n---\nb: 2\n", RL_EUNSUPPORTED,
                 "t.yaml:2:1: a second document (one document per input)");
    expect_error("? [a, b]\n: 1\n", RL_EUNSUPPORTED,
                 "t.yaml:1:3: sequence used as a mapping key (keys must be scalars)");
    expect_error("{a: 1}: 2\n", RL_EUNSUPPORTED,
                 "t.yaml:1:1: mapping used as a mapping key (keys must be scalars)");
    expect_error("x: *nope\n", RL_EPARSE, "t.yaml:1:4: undefined alias '*nope'");
    expect_error("a: &r [1, *r]\n", RL_EPARSE, "t.yaml:1:11: undefined alias '*r'");
    expect_error("a:\n  b: 1\n c: 2\n", RL_EPARSE, "t.yaml:3:2: invalid indentation in mapping");
    expect_error("a: [1, 2\nb: 3\n", RL_EPARSE,
                 "t.yaml:3:1: flow sequence without a closing bracket");
    expect_error("a: \"unterminated\n", RL_EPARSE,
                 "t.yaml:1:5: double-quoted scalar without closing quote");
    expect_error("n: 99999999999999999999\n", RL_ERANGE,
                 "t.yaml:1:4: number '99999999999999999999' is out of range");
    expect_error("n: -9223372036854775809\n", RL_ERANGE,
                 "t.yaml:1:4: number '-9223372036854775809' is out of range");
    expect_error("f: 1e400\n", RL_ERANGE, "t.yaml:1:4: number '1e400' is out of range");
    expect_error("x: !custom 1\n", RL_EUNSUPPORTED, "t.yaml:1:4: unsupported tag '!custom'");
    expect_error("x: !!int abc\n", RL_EPARSE, "t.yaml:1:4: 'abc' is not a valid !!int");
    expect_error("\"k\\0\": 1\n", RL_EUNSUPPORTED,
                 "t.yaml:1:1: mapping key contains a NUL character");

    json_object *o = NULL;
    assert_int_equal(rl_yaml_parse(NULL, 3, "t", &o), RL_EINVAL);
    assert_int_equal(rl_yaml_parse("a", 1, "t", NULL), RL_EINVAL);
}

static void test_errors_are_silent(void **state)
{
    (void)state;
    /* libfyaml prints diagnostics to stderr by default; the reader must not. */
    fflush(stderr);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(fileno(stderr));
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), fileno(stderr)) >= 0);
    json_object *o = NULL;
    int rc1 = rl_yaml_parse("a: [1, 2\n", 9, "t", &o);
    int rc2 = rl_yaml_parse("a: \"x\n", 6, "t", &o);
    int rc3 = rl_yaml_parse("a:\n  b: 1\n c: 2\n", 16, "t", &o);
    fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);
    assert_int_equal(rc1, RL_EPARSE);
    assert_int_equal(rc2, RL_EPARSE);
    assert_int_equal(rc3, RL_EPARSE);
    assert_int_equal(ftell(tmp), 0);
    fclose(tmp);
}

static void test_aliases(void **state)
{
    (void)state;
    json_object *o = yparse("base: &b {x: 1, y: [a, b]}\ncopy: *b\nname: &n joe\nwho: *n\n"
                            "&k key: v\nagain: *k\n");
    assert_json(o, "{\"base\":{\"x\":1,\"y\":[\"a\",\"b\"]},\"copy\":{\"x\":1,\"y\":[\"a\",\"b\"]},"
                   "\"name\":\"joe\",\"who\":\"joe\",\"key\":\"v\",\"again\":\"key\"}");
    /* Copies, not shared: changing one leaves the other alone. */
    json_object *copy = json_object_object_get(o, "copy");
    json_object *base = json_object_object_get(o, "base");
    assert_ptr_not_equal(copy, base);
    json_object_object_add(copy, "x", json_object_new_int(2));
    assert_int_equal(json_object_get_int(json_object_object_get(base, "x")), 1);
    json_object_put(o);

    /* A redefined anchor refers to its latest definition. */
    o = yparse("a: &v 1\nb: &v 2\nc: *v\n");
    assert_json(o, "{\"a\":1,\"b\":2,\"c\":2}");
    json_object_put(o);

    /* Billion laughs: nine levels of ten-fold expansion are refused quickly. */
    char doc[2048];
    size_t n = (size_t)snprintf(doc, sizeof doc, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, "
                                                 "lol, lol, lol]\n");
    for (int i = 1; i <= 9; i++)
        n += (size_t)snprintf(doc + n, sizeof doc - n,
                              "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, "
                              "*a%d]\n",
                              i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
                              i - 1);
    json_object *bomb = (json_object *)1;
    assert_int_equal(rl_yaml_parse(doc, n, "bomb.yaml", &bomb), RL_ERANGE);
    assert_null(bomb);
    assert_non_null(strstr(rl_error_last(), "aliases expand to more than 1000000 nodes"));
    assert_true(strncmp(rl_error_last(), "bomb.yaml:", 10) == 0);
}

static char *emit(json_object *o)
{
    char *s = NULL;
    size_t n = 0;
    assert_int_equal(rl_yaml_to_string(o, &s, &n), RL_OK);
    assert_int_equal(n, strlen(s));
    return s;
}

static void test_emit_exact(void **state)
{
    (void)state;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string("planner one"));
    json_object_object_add(o, "n", json_object_new_int64(-3));
    json_object_object_add(o, "ratio", json_object_new_double(0.1));
    json_object_object_add(o, "whole", json_object_new_double(2.0));
    json_object_object_add(o, "big", json_object_new_uint64(UINT64_MAX));
    json_object_object_add(o, "on", json_object_new_boolean(1));
    json_object_object_add(o, "none", NULL);
    json_object *list = json_object_new_array();
    json_object_array_add(list, json_object_new_string("true"));
    json_object_array_add(list, json_object_new_string("123"));
    json_object_array_add(list, json_object_new_string(""));
    json_object_array_add(list, json_object_new_string("a: b"));
    json_object_array_add(list, json_object_new_string("- x"));
    json_object_array_add(list, json_object_new_string("say \"hi\"\n"));
    json_object_array_add(list, json_object_new_string_len("\x01\x7f\xff\0", 4));
    json_object_array_add(list, json_object_new_string("caf\xc3\xa9 \xf0\x9f\x98\x80"));
    json_object_array_add(list, json_object_new_string("\xe2\x80\xa8\xef\xbb\xbf\xc2\x85"));
    json_object_array_add(list, json_object_new_string("a\xe2\x80\xa9" "b"));
    json_object_array_add(list, json_object_new_string("a:b#c"));
    json_object_array_add(list, json_object_new_string("x #y"));
    json_object *inner = json_object_new_array();
    json_object_array_add(inner, json_object_new_int(1));
    json_object_array_add(inner, json_object_new_array());
    json_object_array_add(list, inner);
    json_object *m = json_object_new_object();
    json_object_object_add(m, "k", json_object_new_string("v"));
    json_object_object_add(m, "e", json_object_new_object());
    json_object_array_add(list, m);
    json_object_object_add(o, "list", list);
    char *s = emit(o);
    assert_string_equal(s, "name: planner one\n"
                           "\"n\": -3\n"
                           "ratio: 0.1\n"
                           "whole: 2.0\n"
                           "big: 18446744073709551615\n"
                           "\"on\": true\n"
                           "none: null\n"
                           "list:\n"
                           "  - \"true\"\n"
                           "  - \"123\"\n"
                           "  - \"\"\n"
                           "  - \"a: b\"\n"
                           "  - \"- x\"\n"
                           "  - \"say \\\"hi\\\"\\n\"\n"
                           "  - \"\\x01\\x7F\xef\xbf\xbd\\0\"\n"
                           "  - caf\xc3\xa9 \xf0\x9f\x98\x80\n"
                           "  - \"\\L\\uFEFF\\x85\"\n"
                           "  - \"a\\Pb\"\n"
                           "  - a:b#c\n"
                           "  - \"x #y\"\n"
                           "  - - 1\n"
                           "    - []\n"
                           "  - k: v\n"
                           "    e: {}\n");
    json_object *back = yparse(s);
    /* The one lossy case is the byte that is not UTF-8. */
    json_object_array_put_idx(list, 6, json_object_new_string_len("\x01\x7f\xef\xbf\xbd\0", 6));
    assert_true(json_object_equal(o, back));
    json_object_put(back);
    free(s);
    json_object_put(o);

    /* Scalars and empty containers at the top level. */
    struct {
        json_object *v;
        const char *want;
    } tops[] = {
        {NULL, "null\n"},
        {json_object_new_string("---"), "\"---\"\n"},
        {json_object_new_string("..."), "\"...\"\n"},
        {json_object_new_object(), "{}\n"},
        {json_object_new_array(), "[]\n"},
        {json_object_new_double(-0.0), "-0.0\n"},
        {json_object_new_double(-INFINITY), "-.inf\n"},
        {json_object_new_double(1e300), "1e+300\n"},
    };
    for (size_t i = 0; i < sizeof tops / sizeof *tops; i++) {
        s = emit(tops[i].v);
        assert_string_equal(s, tops[i].want);
        json_object *b = (json_object *)1;
        assert_int_equal(rl_yaml_parse(s, strlen(s), "top", &b), RL_OK);
        assert_true(json_object_equal(tops[i].v, b) || (!tops[i].v && !b));
        json_object_put(b);
        json_object_put(tops[i].v);
        free(s);
    }
}

static void test_long_key(void **state)
{
    (void)state;
    char key[3000];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    json_object *o = json_object_new_object();
    json_object *v = json_object_new_object();
    json_object_object_add(v, "a", json_object_new_int(1));
    json_object_object_add(o, key, v);
    json_object *l = json_object_new_array();
    json_object *inner = json_object_new_object();
    json_object_object_add(inner, key, json_object_new_string("x"));
    json_object_array_add(l, inner);
    json_object_object_add(o, "l", l);
    char *s = emit(o);
    assert_true(strncmp(s, "? kkk", 5) == 0);
    json_object *back = yparse(s);
    assert_true(json_object_equal(o, back));
    json_object_put(back);
    json_object_put(o);
    free(s);
}

static void test_files(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/cfg.yaml", dir);
    json_object *o = yparse("planner: rrt\nparams: {step: 0.25, iters: 1000}\n");
    assert_int_equal(rl_yaml_write_file(path, o), RL_OK);
    char *text = rl_test_read_file(path, NULL);
    assert_string_equal(text, "planner: rrt\nparams:\n  step: 0.25\n  iters: 1000\n");
    free(text);
    json_object *back = NULL;
    assert_int_equal(rl_yaml_read_file(path, 1 << 20, &back), RL_OK);
    assert_true(json_object_equal(o, back));
    json_object_put(back);
    assert_int_equal(rl_yaml_read_file(path, 10, &back), RL_ERANGE);
    rl_test_write_file(path, "a: 1\na: 2\n", 10);
    assert_int_equal(rl_yaml_read_file(path, 1 << 20, &back), RL_EPARSE);
    char want[4200];
    snprintf(want, sizeof want, "%s:2:1: duplicate key 'a'", path);
    assert_string_equal(rl_error_last(), want);
    json_object_put(o);
    rl_test_tmpdir_free(dir);
}

/* ---- Randomized round trips ---------------------------------------------------------- */

static const char *const tricky[] = {
    "true", "False", "null", "~", "yes", "no", "on", "y", "123", "-7", "0x1F", "0o7", "1.5",
    "1e3", ".inf", "-.inf", ".nan", "1_000", "12:30", "", " ", "  lead", "trail ", "-", "- a",
    "--", "---", "...", "?", "? x", ":", "a: b", "a:", "#", "a #b", "a#b", "&x", "*x", "!t",
    "|", ">", "'", "\"", "%", "@", "`", "[", "]", "{", "}", ",", "a, b", "\\", "\t", "\n",
    "\r\n", "\x01", "\x1b", "\x7f", "\xc2\x85", "\xc2\xa0", "\xe2\x80\xa8", "\xe2\x80\xa9",
    "\xef\xbb\xbf", "\xef\xbf\xbe", "\xc3\xa9", "\xf0\x9f\x98\x80", "\xe4\xb8\xad", "<<",
    "=", "a", "b c", "0", "00", "+", ".", ".5", "1.", "nan", "inf", "0b1", "0x", "0o",
    "# c", "x\ny", "\"q\"", "'s'", "tab\there", "k:v", "null ", " null"};

static void random_string(unsigned *seed, char *buf, size_t cap, size_t *len, bool allow_nul)
{
    size_t n = 0;
    int parts = rand_r(seed) % 4;
    for (int i = 0; i < parts; i++) {
        const char *p = tricky[rand_r(seed) % (sizeof tricky / sizeof *tricky)];
        size_t pl = strlen(p);
        if (n + pl + 1 >= cap)
            break;
        memcpy(buf + n, p, pl);
        n += pl;
        if (allow_nul && rand_r(seed) % 20 == 0)
            buf[n++] = '\0';
    }
    buf[n] = '\0';
    *len = n;
}

static json_object *random_doc(unsigned *seed, int depth)
{
    int kind = rand_r(seed) % (depth > 4 ? 6 : 8);
    char buf[256];
    size_t n;
    switch (kind) {
    case 0: return NULL;
    case 1: return json_object_new_boolean(rand_r(seed) & 1);
    case 2: {
        uint64_t u = ((uint64_t)rand_r(seed) << 33) ^ ((uint64_t)rand_r(seed) << 2) ^
                     (uint64_t)rand_r(seed);
        switch (rand_r(seed) % 4) {
        case 0: return json_object_new_uint64(u | (1ULL << 63));
        case 1: return json_object_new_int64(INT64_MIN + (int64_t)(u % 3));
        default: return json_object_new_int64((int64_t)(u >> 1) * (rand_r(seed) & 1 ? -1 : 1));
        }
    }
    case 3: {
        uint64_t bits = 0;
        for (int j = 0; j < 4; j++)
            bits = (bits << 16) ^ (uint64_t)(rand_r(seed) & 0xffff);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (isnan(v))
            v = rand_r(seed) & 1 ? INFINITY : -INFINITY;
        if (rand_r(seed) % 4 == 0)
            v = (double)(rand_r(seed) % 1000) / 8.0;
        return json_object_new_double(v);
    }
    case 4:
    case 5:
        random_string(seed, buf, sizeof buf, &n, true);
        return json_object_new_string_len(buf, (int)n);
    case 6: {
        json_object *a = json_object_new_array();
        int k = rand_r(seed) % 5;
        for (int i = 0; i < k; i++)
            json_object_array_add(a, random_doc(seed, depth + 1));
        return a;
    }
    default: {
        json_object *o = json_object_new_object();
        int k = rand_r(seed) % 5;
        for (int i = 0; i < k; i++) {
            random_string(seed, buf, sizeof buf, &n, false);
            json_object_object_add(o, buf, random_doc(seed, depth + 1));
        }
        return o;
    }
    }
}

static void test_random_round_trip(void **state)
{
    (void)state;
    unsigned seed = 2026;
    for (int k = 0; k < 2000; k++) {
        json_object *o = random_doc(&seed, 0);
        char *s = emit(o);
        json_object *back = (json_object *)1;
        if (rl_yaml_parse(s, strlen(s), "rt", &back) != RL_OK)
            fail_msg("case %d: %s\n%s", k, rl_error_last(), s);
        if (!json_object_equal(o, back) && !(o == NULL && back == NULL))
            fail_msg("case %d: round trip differs:\n%s", k, s);
        json_object_put(back);
        json_object_put(o);
        free(s);
    }
}

/* Every plain-scalar-looking string alone, and every pair, survives as a string. */
static void test_tricky_strings_round_trip(void **state)
{
    (void)state;
    size_t nt = sizeof tricky / sizeof *tricky;
    for (size_t i = 0; i < nt; i++) {
        for (size_t j = 0; j <= nt; j++) {
            char buf[64];
            snprintf(buf, sizeof buf, "%s%s", tricky[i], j < nt ? tricky[j] : "");
            json_object *o = json_object_new_object();
            json_object_object_add(o, buf, json_object_new_string(buf));
            json_object *a = json_object_new_array();
            json_object_array_add(a, json_object_new_string(buf));
            json_object_object_add(o, "list", a);
            char *s = emit(o);
            json_object *back = NULL;
            if (rl_yaml_parse(s, strlen(s), "tricky", &back) != RL_OK)
                fail_msg("'%s': %s\n%s", buf, rl_error_last(), s);
            if (!json_object_equal(o, back))
                fail_msg("'%s' changed:\n%s", buf, s);
            json_object_put(back);
            json_object_put(o);
            free(s);
        }
    }
}

/* Invalid UTF-8 and NUL bytes are refused with their position, before libfyaml sees them
 * (libfyaml 0.7 loops forever on "%\xd1\n"). */
static void test_encoding_checked_first(void **state)
{
    (void)state;
    json_object *o = NULL;
    static const char directive[] = "%\xd1\n";
    assert_int_equal(rl_yaml_parse(directive, sizeof directive - 1, "d.yaml", &o), RL_EPARSE);
    assert_string_equal(rl_error_last(), "d.yaml:1:2: byte 1: invalid UTF-8 sequence");
    static const char nul[] = "a: 1\nb: x\0y\n";
    assert_int_equal(rl_yaml_parse(nul, sizeof nul - 1, "n.yaml", &o), RL_EPARSE);
    assert_string_equal(rl_error_last(), "n.yaml:2:5: byte 9: NUL byte (not allowed in YAML)");
    static const char good[] = "name: \xc3\xa9t\xc3\xa9\n";
    assert_int_equal(rl_yaml_parse(good, sizeof good - 1, "g.yaml", &o), RL_OK);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoding_checked_first),
        cmocka_unit_test(test_core_schema),
        cmocka_unit_test(test_single_quoted),
        cmocka_unit_test(test_double_quoted),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_errors_are_silent),
        cmocka_unit_test(test_aliases),
        cmocka_unit_test(test_emit_exact),
        cmocka_unit_test(test_long_key),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_tricky_strings_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
