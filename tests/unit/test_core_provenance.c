/* Tests of runlab/provenance.h: the build facts match the checkout the test was built
 * from, machine facts are filled, and the JSON form carries every field. */
#include "rl_test.h"

#include "runlab/provenance.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_collect_fills_every_field(void **state)
{
    (void)state;
    rl_provenance p;
    rl_provenance_collect(&p);
    assert_string_not_equal(p.version, "");
    assert_non_null(strchr(p.version, '.'));
    assert_true(p.cpu_cores >= 1);
    assert_true(p.cpu_cores == (int)sysconf(_SC_NPROCESSORS_ONLN));
    char host[256];
    assert_int_equal(gethostname(host, sizeof host), 0);
    assert_string_equal(p.host, host);
    assert_non_null(strstr(p.os, "Linux"));
    assert_string_not_equal(p.build_type, "");
    assert_string_not_equal(p.compiler, "");
}

/* The sha compiled in is the checkout's HEAD when the source tree is a git checkout. */
static void test_sha_matches_checkout(void **state)
{
    (void)state;
    const char *src = getenv("RUNLAB_SOURCE");
    if (!src) {
        print_message("SKIP: RUNLAB_SOURCE not set\n");
        skip();
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD 2>/dev/null", src);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char head[64] = "";
    char *got = fgets(head, sizeof head, f);
    pclose(f);
    if (!got || strlen(head) < 40) {
        print_message("SKIP: source tree is not a git checkout\n");
        skip();
    }
    head[40] = '\0';
    assert_string_equal(rl_build_sha(), head);
    assert_non_null(strstr(rl_version_string(), "git "));
    char prefix[13];
    memcpy(prefix, head, 12);
    prefix[12] = '\0';
    assert_non_null(strstr(rl_version_string(), prefix));
}

static void test_json_has_all_fields(void **state)
{
    (void)state;
    rl_provenance p;
    rl_provenance_collect(&p);
    json_object *o = rl_provenance_to_json(&p);
    assert_non_null(o);
    const char *keys[] = {"version", "git_sha", "git_dirty", "build_type", "compiler",
                          "host", "cpu_model", "cpu_cores", "os"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_object *v;
        assert_true(json_object_object_get_ex(o, keys[i], &v));
    }
    json_object *v;
    json_object_object_get_ex(o, "cpu_cores", &v);
    assert_int_equal(json_object_get_int(v), p.cpu_cores);
    json_object_object_get_ex(o, "git_dirty", &v);
    assert_true(json_object_is_type(v, json_type_boolean));
    json_object_object_get_ex(o, "host", &v);
    assert_string_equal(json_object_get_string(v), p.host);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collect_fills_every_field),
        cmocka_unit_test(test_sha_matches_checkout),
        cmocka_unit_test(test_json_has_all_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
