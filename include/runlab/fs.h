/* runlab/fs.h: the file operations runlab relies on to never lose or overwrite data:
 * atomic whole-file writes, directories created new (never reused, race-safe),
 * free-space queries, bounded whole-file reads, and safe joining of user-supplied
 * names (run ids, planner names, topic names) into paths. */
#ifndef RUNLAB_FS_H
#define RUNLAB_FS_H

#include "runlab/export.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { RL_NAME_MAX = 128 }; /* longest user-supplied name accepted as a path component */

/* Writes `len` bytes to `path` atomically: a temporary file in the same directory,
 * fsync, rename over `path`, fsync of the directory. Readers see the old content or the
 * new, never a part. `mode` is the file mode (e.g. 0644). Returns RL_OK, RL_EIO or
 * RL_ENOSPC; on failure the old file is untouched and the temporary file removed. */
RL_API int rl_fs_write_atomic(const char *path, const void *data, size_t len, unsigned mode);

/* Reads a whole file into a new NUL-terminated buffer (owned by the caller, free()).
 * Files larger than `max_bytes` are refused with RL_ERANGE before anything is allocated;
 * anything but a regular file is refused as rl_fs_open_input does. */
RL_API int rl_fs_read_all(const char *path, size_t max_bytes, char **out, size_t *out_len);

/* Opens an input file for reading without ever blocking: O_NONBLOCK at open (a FIFO or a
 * device cannot stall the caller), then fstat on the open descriptor (no race with a rename)
 * and a refusal of anything but a regular file ("PATH: not a regular file", RL_EINVAL);
 * O_NONBLOCK is cleared before returning. The size at open goes to `*size_out` (may be NULL):
 * callers read no further than it, so a file that grows while read cannot make them read
 * forever. Returns the descriptor (>= 0, close-on-exec, the caller closes it) or a negative
 * RL_E* code with the message set (RL_ENOENT when the path does not exist). Thread-safe. */
RL_API int rl_fs_open_input(const char *path, uint64_t *size_out);

/* Creates every missing directory of `path` (like mkdir -p) with mode 0755. */
RL_API int rl_fs_mkdirs(const char *path);

/* Flags for rl_fs_mkdir_new. */
enum {
    RL_MKDIR_FAIL_IF_EXISTS = 0, /* an existing name is RL_EEXIST */
    RL_MKDIR_ADD_SUFFIX = 1      /* an existing name gets "_2", "_3", ... */
};

/* Creates a new directory `name` inside existing `parent` and never reuses one: mkdir(2)
 * itself decides, so two processes racing for a name cannot both get it. With
 * RL_MKDIR_ADD_SUFFIX the first free "<name>_<k>" (k = 2..9999) is taken. `name` must
 * pass rl_path_check_name. The created path is written to `out` (capacity `cap`). */
RL_API int rl_fs_mkdir_new(const char *parent, const char *name, int flags, char *out, size_t cap);

/* Creates directory `name` (one component, checked by rl_path_check_name) inside the
 * existing directory `parent`, or takes it when it is already a directory there; the
 * path is written to `out` (capacity `cap`). It never follows a symbolic link at `name`:
 * what runlab writes inside a run stays inside it, so a link there (to anywhere) is
 * refused with RL_EINVAL and "PARENT/NAME: is a symbolic link"; anything else that is not
 * a directory is RL_EEXIST. `parent` itself may be reached through links (the caller's
 * choice). Thread-safe. */
RL_API int rl_fs_mkdir_in(const char *parent, const char *name, char *out, size_t cap);

/* Bytes available to an unprivileged user on the filesystem holding `path`. */
RL_API int rl_fs_free_bytes(const char *path, uint64_t *out);

/* Checks a user-supplied name used as one path component: 1..RL_NAME_MAX bytes, not
 * "." or "..", no '/', no '\\', no control characters (< 0x20, 0x7f), no leading '-'
 * or space. `what` names it in the message ("run id"). RL_OK or RL_EINVAL. */
RL_API int rl_path_check_name(const char *name, const char *what);

/* Joins `base` and the checked component `name` into `out`: "base/name". Returns
 * RL_EINVAL when `name` fails rl_path_check_name, RL_ERANGE when `out` is too small. */
RL_API int rl_path_join(char *out, size_t cap, const char *base, const char *name);

/* Joins `base` and a relative path of several checked components ("a/b/c"). Empty
 * components, ".", ".." and absolute paths are refused. */
RL_API int rl_path_join_rel(char *out, size_t cap, const char *base, const char *rel);

/* Makes a name safe for use as a file name by replacing every byte that
 * rl_path_check_name would refuse with '_' (topic "/tf" -> "_tf"); truncates to
 * RL_NAME_MAX. `out` needs RL_NAME_MAX + 1 bytes. Never fails. */
RL_API void rl_path_sanitize_name(const char *name, char *out);

/* Creates a fresh private temporary directory under $TMPDIR (or /tmp) with the prefix;
 * writes its path to `out`. */
RL_API int rl_fs_mkdtemp(const char *prefix, char *out, size_t cap);

/* Removes a directory tree (no symlink following). Used by tests and tools on paths they
 * created themselves. */
RL_API int rl_fs_remove_tree(const char *path);

#ifdef __cplusplus
}
#endif
#endif
