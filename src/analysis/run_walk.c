/* Discovering runs: the walk of the roots given to rl_runs_load for run directories, in
 * name order, each directory once (links to directories followed after the real ones,
 * loops and depth bounded), errors collected. Called by runs.c. */
#include "runlab/runs.h"

#include "runlab/record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/runs_internal.h" /* last: it renames the files' shared functions */

enum { MAX_DEPTH = 64 };

/* ---- walking trees ----------------------------------------------------------------------- */

static void push(char ***arr, size_t *n, size_t *cap, char *s, bool *oom)
{
    if (!s) {
        *oom = true;
        return;
    }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        char **na = realloc(*arr, nc * sizeof *na);
        if (!na) {
            free(s);
            *oom = true;
            return;
        }
        *arr = na;
        *cap = nc;
    }
    (*arr)[(*n)++] = s;
}

__attribute__((format(printf, 2, 3))) void walk_error(struct walk *w, const char *fmt, ...)
{
    char buf[2 * PATH_MAX + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    push(&w->errors, &w->nerrors, &w->caperrors, strdup(buf), &w->oom);
}

static void defer_link(struct walk *w, const char *path, int depth)
{
    if (w->nlinks == w->caplinks) {
        size_t nc = w->caplinks ? w->caplinks * 2 : 16;
        void *nl = realloc(w->links, nc * sizeof *w->links);
        if (!nl) {
            w->oom = true;
            return;
        }
        w->links = nl;
        w->caplinks = nc;
    }
    char *p = strdup(path);
    if (!p) {
        w->oom = true;
        return;
    }
    w->links[w->nlinks].path = p;
    w->links[w->nlinks].depth = depth;
    w->nlinks++;
}

static bool was_visited(const struct walk *w, const struct stat *st)
{
    for (size_t i = 0; i < w->nseen; i++)
        if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
            return true;
    return false;
}

/* Marks (dev, ino) as visited; false when it already was (a second link to it).
 * A linear scan: trees of runs have thousands of directories, not millions. */
static bool first_visit(struct walk *w, const struct stat *st)
{
    if (was_visited(w, st))
        return false;
    if (w->nseen == w->capseen) {
        size_t nc = w->capseen ? w->capseen * 2 : 256;
        void *ns = realloc(w->seen, nc * sizeof *w->seen);
        if (!ns) {
            w->oom = true;
            return false;
        }
        w->seen = ns;
        w->capseen = nc;
    }
    w->seen[w->nseen].dev = st->st_dev;
    w->seen[w->nseen].ino = st->st_ino;
    w->nseen++;
    return true;
}

static bool is_run_dir(int dfd)
{
    static const char *const files[] = {"run_manifest.yaml", "performance_log.csv",
                                        "episode_summary.yaml"};
    struct stat st;
    for (int i = 0; i < 3; i++)
        if (fstatat(dfd, files[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
            return true;
    return false;
}

int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A symbolic link met in a listing: a link to a directory is followed later (defer), a
 * link that resolves to nothing is reported; a link to a file is no business of ours. */
static void note_link(struct walk *w, int dfd, const char *name, const char *path, int depth)
{
    struct stat st;
    if (fstatat(dfd, name, &st, 0) == 0) {
        if (S_ISDIR(st.st_mode))
            defer_link(w, path, depth);
        return;
    }
    int e = errno;
    char target[PATH_MAX];
    ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    if (e == ELOOP)
        walk_error(w, "%s: symbolic link loop: '%s' leads back through links to itself, not "
                      "followed",
                   path, target);
    else if (e == ENOENT || e == ENOTDIR)
        walk_error(w, "%s: dangling symbolic link to '%s', not followed", path, target);
    else
        walk_error(w, "%s: symbolic link to '%s': %s", path, target, strerror(e));
}

void walk_dir(struct walk *w, const char *path, int depth)
{
    if (w->oom)
        return;
    if (depth > MAX_DEPTH) {
        walk_error(w, "%s: deeper than %d levels, not entered", path, MAX_DEPTH);
        return;
    }
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        walk_error(w, "%s: %s", path, strerror(errno));
        return;
    }
    struct stat st;
    if (fstat(dfd, &st) != 0 || !first_visit(w, &st)) {
        if (!w->oom)
            walk_error(w, "%s: directory already visited (a second path to it)", path);
        close(dfd);
        return;
    }
    /* A recorder's run that never finished (its recorder died or still runs) is named as
     * such: it holds no perflog, but a repair or some patience makes it whole. */
    char unfinished[PATH_MAX + 256];
    if (rl_record_run_unfinished(path, unfinished, sizeof unfinished))
        walk_error(w, "%s: %s", path, unfinished);
    if (is_run_dir(dfd)) {
        close(dfd);
        push(&w->paths, &w->npaths, &w->cappaths, strdup(path), &w->oom);
        return;
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
        walk_error(w, "%s: %s", path, strerror(errno));
        close(dfd);
        return;
    }
    /* Children sorted, so the walk (and its errors) come out in a stable order. Real
     * directories now, links to directories once every real one is known. */
    char **kids = NULL, **links = NULL;
    size_t nk = 0, ck = 0, nl = 0, cl = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN) {
            struct stat cs;
            if (fstatat(dirfd(d), e->d_name, &cs, AT_SYMLINK_NOFOLLOW) == 0)
                type = S_ISDIR(cs.st_mode) ? DT_DIR : S_ISLNK(cs.st_mode) ? DT_LNK : DT_REG;
        }
        if (type == DT_DIR)
            push(&kids, &nk, &ck, strdup(e->d_name), &w->oom);
        else if (type == DT_LNK)
            push(&links, &nl, &cl, strdup(e->d_name), &w->oom);
    }
    if (nk)
        qsort(kids, nk, sizeof *kids, name_cmp);
    if (nl)
        qsort(links, nl, sizeof *links, name_cmp);
    char child[PATH_MAX];
    for (size_t i = 0; i < nl; i++) {
        if (snprintf(child, sizeof child, "%s/%s", path, links[i]) >= (int)sizeof child)
            walk_error(w, "%s/%s: path too long", path, links[i]);
        else
            note_link(w, dirfd(d), links[i], child, depth + 1);
        free(links[i]);
    }
    free(links);
    closedir(d);
    for (size_t i = 0; i < nk; i++) {
        if (snprintf(child, sizeof child, "%s/%s", path, kids[i]) >= (int)sizeof child)
            walk_error(w, "%s/%s: path too long", path, kids[i]);
        else
            walk_dir(w, child, depth + 1);
        free(kids[i]);
    }
    free(kids);
}

/* Follows the deferred links (more may be added as it goes). A link to a directory the
 * walk already reached is an alias (the recorder's .run-ids/ links): silent, unless the
 * directory is the link's own ancestor, which is a loop. */
void walk_links(struct walk *w)
{
    for (size_t i = 0; i < w->nlinks && !w->oom; i++) {
        const char *path = w->links[i].path;
        struct stat st;
        if (stat(path, &st) != 0) {
            walk_error(w, "%s: %s", path, strerror(errno));
            continue;
        }
        if (!was_visited(w, &st)) {
            walk_dir(w, path, w->links[i].depth);
            continue;
        }
        char target[PATH_MAX], parent[PATH_MAX], real_parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", path);
        char *slash = strrchr(parent, '/');
        if (slash)
            *slash = '\0';
        if (!slash || !realpath(path, target) || !realpath(parent, real_parent))
            continue;
        size_t n = strlen(target);
        if (strncmp(real_parent, target, n) == 0 &&
            (real_parent[n] == '\0' || real_parent[n] == '/' || n == 1))
            walk_error(w, "%s: symbolic link loop: leads back to its ancestor %s, not entered",
                       path, target);
    }
}
