/* libFuzzer target for the YAML reader and emitter (runlab/yaml.h): parses the input; a
 * document that parses is emitted, must parse again, and must come back as the same
 * document (compared as compact JSON text, where NaN and infinities read as null); a refusal must say where (name:line:col or
 * a byte offset). Runs under ASan and UBSan, so leaks and overflows are findings too. */
#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/yaml.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant is a finding: report it and stop so libFuzzer saves the input. */
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__,       \
                    __LINE__, #cond, rl_error_last());                                   \
            abort();                                                                     \
        }                                                                                \
    } while (0)

/* Compact JSON text of a document ("null" for an empty one); caller frees. */
static char *canonical(json_object *o)
{
    rl_json_writer *w = NULL;
    CHECK(rl_json_writer_new_buffer(&w, RL_JSON_COMPACT) == RL_OK);
    CHECK(rl_json_value(w, o) == RL_OK);
    const char *buf = rl_json_writer_buffer(w, NULL);
    CHECK(buf != NULL);
    char *s = strdup(buf);
    rl_json_writer_free(w);
    CHECK(s != NULL);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_object *doc = NULL;
    int rc = rl_yaml_parse((const char *)data, size, "fuzz.yaml", &doc);
    if (rc != RL_OK) {
        CHECK(doc == NULL);
        CHECK(strncmp(rl_error_last(), "fuzz.yaml:", 10) == 0);
        return 0;
    }
    char *text = NULL;
    size_t len = 0;
    CHECK(rl_yaml_to_string(doc, &text, &len) == RL_OK);
    json_object *again = NULL;
    rc = rl_yaml_parse(text, len, "emitted.yaml", &again);
    if (rc != RL_OK)
        fprintf(stderr, "emitted YAML does not parse: %s\n---\n%s---\n", rl_error_last(), text);
    CHECK(rc == RL_OK);
    char *a = canonical(doc), *b = canonical(again);
    if (strcmp(a, b) != 0)
        fprintf(stderr, "round trip differs:\n%s\n%s\n", a, b);
    CHECK(strcmp(a, b) == 0);
    free(a);
    free(b);
    free(text);
    json_object_put(doc);
    json_object_put(again);
    return 0;
}
