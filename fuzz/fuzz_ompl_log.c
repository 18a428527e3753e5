/* libFuzzer target for the OMPL benchmark log reader (`runlab bench import`): parses the
 * input; a log that parses must format, parse again and format to the same text (the
 * writer and reader agree), and must go into an in-memory SQLite database the way OMPL's
 * own parser would put it, or fail there with a message; never a crash. */
#include "formats/ompl/ompl_log.h"
#include "runlab/error.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rl_ompl_log log;
    memset(&log, 0, sizeof log);
    int rc = rl_ompl_log_parse((const char *)data, size, "fuzz.log", &log);
    if (rc < 0) {
        /* Refusals say where: the name and a line number. */
        CHECK(strncmp(rl_error_last(), "fuzz.log", 8) == 0);
        rl_ompl_log_free(&log);
        return 0;
    }
    char *text1 = NULL, *text2 = NULL;
    size_t len1 = 0, len2 = 0;
    CHECK(rl_ompl_log_format(&log, &text1, &len1) == RL_OK);
    rl_ompl_log again;
    memset(&again, 0, sizeof again);
    CHECK(rl_ompl_log_parse(text1, len1, "formatted.log", &again) == RL_OK);
    CHECK(rl_ompl_log_format(&again, &text2, &len2) == RL_OK);
    CHECK(len1 == len2 && memcmp(text1, text2, len1) == 0);
    rl_ompl_log_free(&again);
    free(text1);
    free(text2);

    sqlite3 *db = NULL;
    CHECK(rl_ompl_db_open(":memory:", &db) == RL_OK);
    rc = rl_ompl_db_add_log(db, &log, "fuzz.log");
    CHECK(rc == RL_OK || rl_error_last()[0] != '\0');
    (void)rl_ompl_db_finish(db);
    rl_ompl_log_free(&log);
    return 0;
}
