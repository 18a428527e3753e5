/* Implementation of the unit-test helpers declared in rl_test.h. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

const char *rl_test_shared_dir(void)
{
    static char path[4096];
    const char *env = getenv("RUNLAB_SHARED");
    if (!env || !*env)
        env = "../shared";
    snprintf(path, sizeof path, "%s", env);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return NULL;
    return path;
}

char *rl_test_tmpdir(void)
{
    char buf[4096];
    if (rl_fs_mkdtemp("runlab-test-", buf, sizeof buf) != RL_OK)
        fail_msg("mkdtemp: %s", rl_error_last());
    return strdup(buf);
}

void rl_test_tmpdir_free(char *dir)
{
    if (!dir)
        return;
    rl_fs_remove_tree(dir);
    free(dir);
}

char *rl_test_read_file(const char *path, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    if (rl_fs_read_all(path, (size_t)1 << 30, &buf, &n) != RL_OK)
        fail_msg("read %s: %s", path, rl_error_last());
    if (len)
        *len = n;
    return buf;
}

void rl_test_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot create %s", path);
    if (len && fwrite(data, 1, len, f) != len)
        fail_msg("cannot write %s", path);
    fclose(f);
}

/* Draws the first id whose lock file this process can flock; its descriptor stays open,
 * so the id is held until the process exits (a second flock of the same file through
 * another descriptor fails, so an id held here is skipped too). */
static int draw_domain(void)
{
    const char *tmp = getenv("TMPDIR");
    for (int id = RL_TEST_DOMAIN_FIRST; id <= RL_TEST_DOMAIN_LAST; id++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/runlab-test-domain-%d.lock", tmp && *tmp ? tmp : "/tmp", id);
        int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0666);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return id;
        close(fd);
    }
    fail_msg("no free test domain in %d..%d", RL_TEST_DOMAIN_FIRST, RL_TEST_DOMAIN_LAST);
    return -1;
}

int rl_test_domain(void)
{
    static int held = -1;
    if (held < 0)
        held = draw_domain();
    return held;
}

int rl_test_domain_another(void)
{
    return draw_domain();
}
