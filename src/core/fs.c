/* File operations that never lose or overwrite data, behind runlab/fs.h: atomic writes,
 * never-reused directories (mkdir(2) arbitrates races), bounded reads, free space, and
 * checking of user-supplied names before they become path components. */
#include "runlab/fs.h"

#include "runlab/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int io_error(int errnum, const char *fmt_path, const char *op)
{
    int code = errnum == ENOSPC || errnum == EDQUOT ? RL_ENOSPC
             : errnum == ENOENT                     ? RL_ENOENT
             : errnum == EEXIST                     ? RL_EEXIST
                                                    : RL_EIO;
    return rl_error_set_errno(code, errnum, "%s: %s", fmt_path, op);
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* fsync of the directory holding `path`, so a rename or mkdir inside it is durable. */
static int fsync_parent(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return io_error(errno, dir, "open directory for fsync");
    int rc = fsync(fd) == 0 ? RL_OK : io_error(errno, dir, "fsync directory");
    close(fd);
    return rc;
}

int rl_fs_write_atomic(const char *path, const void *data, size_t len, unsigned mode)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return rl_error_set(RL_ERANGE, "%s: path too long", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return io_error(errno, path, "create temporary file");
    int rc = RL_OK;
    if (fchmod(fd, (mode_t)mode) != 0)
        rc = io_error(errno, tmp, "chmod");
    else if (write_all(fd, data, len) != 0)
        rc = io_error(errno, tmp, "write");
    else if (fsync(fd) != 0)
        rc = io_error(errno, tmp, "fsync");
    if (close(fd) != 0 && rc == RL_OK)
        rc = io_error(errno, tmp, "close");
    if (rc == RL_OK && rename(tmp, path) != 0)
        rc = io_error(errno, path, "rename into place");
    if (rc != RL_OK) {
        int saved = rl_error_last_code();
        unlink(tmp);
        return saved;
    }
    return fsync_parent(path);
}

int rl_fs_open_input(const char *path, uint64_t *size_out)
{
    if (size_out)
        *size_out = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return io_error(errno, path, "open");
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int rc = io_error(errno, path, "stat");
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return rl_error_set(RL_EINVAL, "%s: not a regular file", path);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int rc = io_error(errno, path, "fcntl");
        close(fd);
        return rc;
    }
    if (size_out)
        *size_out = (uint64_t)st.st_size;
    return fd;
}

int rl_fs_read_all(const char *path, size_t max_bytes, char **out, size_t *out_len)
{
    *out = NULL;
    if (out_len)
        *out_len = 0;
    uint64_t size = 0;
    int fd = rl_fs_open_input(path, &size);
    if (fd < 0)
        return fd;
    if (size > max_bytes) {
        close(fd);
        return rl_error_set(RL_ERANGE, "%s: %llu bytes, more than the limit of %zu", path,
                            (unsigned long long)size, max_bytes);
    }
    size_t cap = (size_t)size;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return rl_error_set(RL_ENOMEM, "%s: cannot allocate %zu bytes", path, cap + 1);
    }
    size_t got = 0;
    while (got < cap) {
        ssize_t n = read(fd, buf + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int rc = io_error(errno, path, "read");
            free(buf);
            close(fd);
            return rc;
        }
        if (n == 0)
            break; /* file shrank while reading: return what is there */
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    *out = buf;
    if (out_len)
        *out_len = got;
    return RL_OK;
}

int rl_fs_mkdirs(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return rl_error_set(RL_ERANGE, "%s: path too long", path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return io_error(errno, buf, "mkdir");
            struct stat st;
            if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
                return rl_error_set(RL_EEXIST, "%s: exists and is not a directory", buf);
            *p = saved;
            if (saved == '\0')
                break;
        }
    }
    return RL_OK;
}

int rl_fs_mkdir_new(const char *parent, const char *name, int flags, char *out, size_t cap)
{
    int rc = rl_path_join(out, cap, parent, name);
    if (rc < 0)
        return rc;
    if (mkdir(out, 0755) == 0)
        return fsync_parent(out);
    if (errno != EEXIST)
        return io_error(errno, out, "mkdir");
    if (!(flags & RL_MKDIR_ADD_SUFFIX))
        return rl_error_set(RL_EEXIST, "%s: already exists; runlab never reuses a directory",
                            out);
    for (int k = 2; k <= 9999; k++) {
        int n = snprintf(out, cap, "%s/%s_%d", parent, name, k);
        if (n < 0 || (size_t)n >= cap)
            return rl_error_set(RL_ERANGE, "%s/%s_%d: path too long", parent, name, k);
        if (mkdir(out, 0755) == 0)
            return fsync_parent(out);
        if (errno != EEXIST)
            return io_error(errno, out, "mkdir");
    }
    return rl_error_set(RL_EEXIST, "%s/%s: 9999 suffixed names already taken", parent, name);
}

/* mkdirat + openat(O_NOFOLLOW) relative to the parent's descriptor: the name is looked
 * at once, in that directory, and a link planted there is never followed. */
int rl_fs_mkdir_in(const char *parent, const char *name, char *out, size_t cap)
{
    int rc = rl_path_join(out, cap, parent, name);
    if (rc < 0)
        return rc;
    int dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return io_error(errno, parent, "open directory");
    if (mkdirat(dfd, name, 0755) != 0 && errno != EEXIST)
        rc = io_error(errno, out, "mkdir");
    int fd = rc < 0 ? -1 : openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rc == RL_OK && fd < 0) {
        int err = errno;
        struct stat st;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
            rc = rl_error_set(RL_EINVAL,
                              "%s: is a symbolic link; runlab writes nothing through a link "
                              "inside a run",
                              out);
        else if (err == ENOTDIR || err == ELOOP)
            rc = rl_error_set(RL_EEXIST, "%s: exists and is not a directory", out);
        else
            rc = io_error(err, out, "open directory");
    }
    if (fd >= 0)
        close(fd);
    close(dfd);
    return rc;
}

int rl_fs_free_bytes(const char *path, uint64_t *out)
{
    struct statvfs sv;
    if (statvfs(path, &sv) != 0)
        return io_error(errno, path, "statvfs");
    *out = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
    return RL_OK;
}

int rl_path_check_name(const char *name, const char *what)
{
    if (!what)
        what = "name";
    if (!name || !*name)
        return rl_error_set(RL_EINVAL, "%s is empty", what);
    size_t len = strlen(name);
    if (len > RL_NAME_MAX)
        return rl_error_set(RL_EINVAL, "%s '%.32s...' is %zu bytes long; at most %d allowed",
                            what, name, len, RL_NAME_MAX);
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return rl_error_set(RL_EINVAL, "%s '%s' is not allowed (directory traversal)", what,
                            name);
    if (name[0] == '-' || name[0] == ' ')
        return rl_error_set(RL_EINVAL, "%s '%s' must not start with '%c'", what, name, name[0]);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch == '/' || ch == '\\')
            return rl_error_set(RL_EINVAL, "%s '%s': byte %zu is a path separator '%c'", what,
                                name, i, ch);
        if (ch < 0x20 || ch == 0x7f)
            return rl_error_set(RL_EINVAL, "%s: byte %zu is control character 0x%02x", what, i,
                                ch);
    }
    return RL_OK;
}

int rl_path_join(char *out, size_t cap, const char *base, const char *name)
{
    int rc = rl_path_check_name(name, "path component");
    if (rc < 0)
        return rc;
    int n = snprintf(out, cap, "%s/%s", base, name);
    if (n < 0 || (size_t)n >= cap)
        return rl_error_set(RL_ERANGE, "%s/%s: path longer than %zu bytes", base, name, cap);
    return RL_OK;
}

int rl_path_join_rel(char *out, size_t cap, const char *base, const char *rel)
{
    if (!rel || !*rel)
        return rl_error_set(RL_EINVAL, "relative path is empty");
    if (rel[0] == '/')
        return rl_error_set(RL_EINVAL, "path '%s' is absolute; a relative path is required", rel);
    int n = snprintf(out, cap, "%s", base);
    if (n < 0 || (size_t)n >= cap)
        return rl_error_set(RL_ERANGE, "%s: path too long", base);
    size_t used = (size_t)n;
    const char *p = rel;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        char comp[RL_NAME_MAX + 2];
        if (len == 0 || len > RL_NAME_MAX)
            return rl_error_set(RL_EINVAL, "path '%s': empty or over-long component at byte %zu",
                                rel, (size_t)(p - rel));
        memcpy(comp, p, len);
        comp[len] = '\0';
        int rc = rl_path_check_name(comp, "path component");
        if (rc < 0)
            return rl_error_prefix(rc, "path '%s'", rel);
        if (used + 1 + len >= cap)
            return rl_error_set(RL_ERANGE, "%s/%s: path longer than %zu bytes", base, rel, cap);
        out[used++] = '/';
        memcpy(out + used, comp, len + 1);
        used += len;
        p += len;
        if (*p == '/')
            p++;
    }
    return RL_OK;
}

void rl_path_sanitize_name(const char *name, char *out)
{
    size_t n = 0;
    for (const char *p = name; *p && n < RL_NAME_MAX; p++) {
        unsigned char ch = (unsigned char)*p;
        int bad = ch == '/' || ch == '\\' || ch < 0x20 || ch == 0x7f ||
                  (n == 0 && (ch == '-' || ch == ' '));
        out[n++] = bad ? '_' : (char)ch;
    }
    out[n] = '\0';
    if (n == 0 || strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
        snprintf(out, RL_NAME_MAX + 1, "_");
}

int rl_fs_mkdtemp(const char *prefix, char *out, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    int n = snprintf(out, cap, "%s/%sXXXXXX", tmp, prefix);
    if (n < 0 || (size_t)n >= cap)
        return rl_error_set(RL_ERANGE, "temporary directory path too long");
    if (!mkdtemp(out))
        return io_error(errno, out, "mkdtemp");
    return RL_OK;
}

int rl_fs_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? RL_OK : io_error(errno, path, "lstat");
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d)
            return io_error(errno, path, "opendir");
        struct dirent *e;
        int rc = RL_OK;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char child[PATH_MAX];
            if (snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= (int)sizeof child) {
                rc = rl_error_set(RL_ERANGE, "%s/%s: path too long", path, e->d_name);
                continue;
            }
            int r = rl_fs_remove_tree(child);
            if (r < 0)
                rc = r;
        }
        closedir(d);
        if (rmdir(path) != 0 && rc == RL_OK)
            rc = io_error(errno, path, "rmdir");
        return rc;
    }
    if (unlink(path) != 0)
        return io_error(errno, path, "unlink");
    return RL_OK;
}
