/* Shared helpers for runlab's cmocka unit tests: cmocka's includes in the order it
 * needs, temporary directories that are removed afterwards, and access to ../shared
 * (tests that need it skip with a clear line when it is absent). */
#ifndef RL_TEST_H
#define RL_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Path of the shared data folder (RUNLAB_SHARED, else ../shared from the source tree),
 * or NULL when it does not exist. */
const char *rl_test_shared_dir(void);

/* For tests that need ../shared: declares `const char *var` holding its path, or prints
 * "SKIP: <what>: shared data folder not present" and calls cmocka's skip(). */
#define RL_TEST_REQUIRE_SHARED(var, what)                                                \
    const char *var = rl_test_shared_dir();                                              \
    if (!var) {                                                                          \
        print_message("SKIP: %s: shared data folder not present\n", (what));              \
        skip();                                                                          \
    }

/* Makes a fresh temporary directory and returns its path (static storage per call site is
 * not used: the string is malloc'd, free it with rl_test_tmpdir_free which also removes
 * the tree). */
char *rl_test_tmpdir(void);
void rl_test_tmpdir_free(char *dir);

/* Reads a whole file into a malloc'd NUL-terminated buffer; fails the test on error. */
char *rl_test_read_file(const char *path, size_t *len);

/* Writes bytes to a file; fails the test on error. */
void rl_test_write_file(const char *path, const void *data, size_t len);

/* A lab/DDS domain id of this test's own, so tests running in parallel (ctest -j, several
 * build trees at once) never meet on one domain or one recorder lock: the first id in
 * RL_TEST_DOMAIN_FIRST..RL_TEST_DOMAIN_LAST whose file "$TMPDIR/runlab-test-domain-<id>.lock"
 * this process can flock(2) exclusively. The lock is held until the process exits; calling
 * again returns the same id. Fails the test when every id is taken. The shell tests use
 * `test_domain` from tests/cli/lib.sh, which draws from the same range and files. */
#define RL_TEST_DOMAIN_FIRST 100
#define RL_TEST_DOMAIN_LAST 230
int rl_test_domain(void);
/* One more domain id of this test's own, different from every id it holds already (for
 * tests that need several recorders at once); held until the process exits. */
int rl_test_domain_another(void);

#endif
