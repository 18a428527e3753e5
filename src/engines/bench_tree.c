/* The processes of each benchmark run, whatever they do: a memory cgroup per run (cgroup
 * v1, where this process may create one) or else the run's tree followed through
 * /proc/<pid>/task/<tid>/children with the harness as child subreaper; their summed
 * resident memory; killing all of them; and a keeper process that kills them when the
 * harness itself dies (kill -9), since nothing a run started may outlive the harness. */
#include "engines/bench_internal.h"

#include "runlab/error.h"
#include "runlab/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { TREE_MAX_PIDS = 1024 };

/* One tracked process: a pid is only trusted together with its start time, so a pid
 * reused by an unrelated process is never killed. */
typedef struct tracked {
    pid_t pid;
    unsigned long long start;
} tracked;

/* Shared with the keeper process (MAP_SHARED): what to kill if the harness dies. */
typedef struct tree_table {
    _Atomic int n[RL_BENCH_TREE_MAX_SLOTS];
    tracked pids[RL_BENCH_TREE_MAX_SLOTS][TREE_MAX_PIDS];
} tree_table;

struct rl_bench_trees {
    rl_bench_tree_mode mode;
    size_t n_slots;
    char cg_root[1024]; /* "<memory mount><own cgroup>/runlab-<pid>" in cgroup mode */
    char describe[1200]; /* which mode, where, or why not (manifest's process_tree) */
    tree_table *table;
    pid_t keeper;
    int keeper_fd; /* write end: EOF tells the keeper the harness is gone */
    int was_subreaper;
    pid_t leader[RL_BENCH_TREE_MAX_SLOTS];
    long peak_kb[RL_BENCH_TREE_MAX_SLOTS];
};

/* ---- /proc helpers ---------------------------------------------------------------------- */

/* Parent pid, start time (clock ticks since boot) and state of pid; false when gone. */
static bool proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start, char *state)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    if (!p)
        return false;
    char st;
    int pp;
    unsigned long long start_time = 0;
    /* fields after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt
       cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime */
    if (sscanf(p + 1,
               " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
               &st, &pp, &start_time) != 3)
        return false;
    if (ppid)
        *ppid = pp;
    if (start)
        *start = start_time;
    if (state)
        *state = st;
    return true;
}

long rl_bench_proc_rss_kb(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    long size = 0, res = 0;
    int n = fscanf(f, "%ld %ld", &size, &res);
    fclose(f);
    return n == 2 ? res * (sysconf(_SC_PAGESIZE) / 1024) : -1;
}

/* Calls fn(pid, ud) for every child of every thread of `pid`. */
static void proc_children(pid_t pid, void (*fn)(pid_t, void *), void *ud)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char cpath[128], buf[4096];
        snprintf(cpath, sizeof cpath, "/proc/%d/task/%.20s/children", (int)pid, e->d_name);
        int fd = open(cpath, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n;
        size_t carry = 0;
        while ((n = read(fd, buf + carry, sizeof buf - 1 - carry)) > 0) {
            size_t len = carry + (size_t)n;
            buf[len] = '\0';
            char *p = buf, *last_space = strrchr(buf, ' ');
            char *stop = last_space ? last_space : buf; /* a number may go on in the next read */
            while (p < stop) {
                char *end;
                long c = strtol(p, &end, 10);
                if (end == p)
                    break;
                if (c > 0)
                    fn((pid_t)c, ud);
                p = end;
                while (*p == ' ')
                    p++;
            }
            carry = len - (size_t)(p - buf);
            memmove(buf, p, carry);
        }
        if (carry) {
            buf[carry] = '\0';
            long c = strtol(buf, NULL, 10);
            if (c > 0)
                fn((pid_t)c, ud);
        }
        close(fd);
    }
    closedir(d);
}

/* ---- the tracked set of a slot ----------------------------------------------------------- */

static bool table_has(const tree_table *t, size_t slot, pid_t pid)
{
    int n = atomic_load(&t->n[slot]);
    for (int i = 0; i < n; i++)
        if (t->pids[slot][i].pid == pid)
            return true;
    return false;
}

static void table_add(tree_table *t, size_t slot, pid_t pid)
{
    unsigned long long start;
    if (table_has(t, slot, pid) || !proc_stat(pid, NULL, &start, NULL))
        return;
    int n = atomic_load(&t->n[slot]);
    if (n >= TREE_MAX_PIDS)
        return; /* beyond this the process group and the cgroup still reach them */
    t->pids[slot][n] = (tracked){pid, start};
    atomic_store(&t->n[slot], n + 1); /* the keeper reads entries below n only */
}

static bool tracked_alive(const tracked *p)
{
    unsigned long long start;
    char state;
    return proc_stat(p->pid, NULL, &start, &state) && start == p->start && state != 'Z';
}

typedef struct walk_ctx {
    tree_table *t;
    size_t slot;
} walk_ctx;

static void add_child(pid_t pid, void *ud)
{
    walk_ctx *w = ud;
    table_add(w->t, w->slot, pid);
}

/* Which slot's run a process belongs to, from the RUNLAB_BENCH_SLOT=<harness pid>.<slot>
 * its run was started with (programs inherit it); -1 when it does not say. */
static long slot_of(pid_t pid)
{
    char path[64], buf[65536];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char want[64];
    int wl = snprintf(want, sizeof want, "RUNLAB_BENCH_SLOT=%d.", (int)getpid());
    for (char *p = buf; p < buf + n; p += strlen(p) + 1)
        if (strncmp(p, want, (size_t)wl) == 0)
            return strtol(p + wl, NULL, 10);
    return -1;
}

typedef struct orphan_ctx {
    rl_bench_trees *tr;
    size_t slot;
    bool claim_unmarked;
} orphan_ctx;

static void consider_orphan(pid_t pid, void *ud)
{
    orphan_ctx *o = ud;
    rl_bench_trees *tr = o->tr;
    if (pid == tr->keeper)
        return;
    for (size_t i = 0; i < tr->n_slots; i++)
        if (tr->leader[i] == pid || table_has(tr->table, i, pid))
            return; /* a run's first process, or already followed */
    long owner = slot_of(pid);
    if (owner == (long)o->slot || (owner < 0 && o->claim_unmarked))
        table_add(tr->table, o->slot, pid);
}

/* Processes that came to the harness (as child subreaper) when their parent in a run
 * exited before the harness saw them: taken into the slot they name, and unmarked ones
 * (an in-process planner's fork that never ran a program) into the slot that is ending. */
static void adopt_orphans(rl_bench_trees *tr, size_t slot, bool claim_unmarked)
{
    orphan_ctx o = {tr, slot, claim_unmarked};
    proc_children(getpid(), consider_orphan, &o);
}

/* Extends the slot's set with the children of every process in it, then drops the dead;
 * returns the summed resident memory of the living, in KiB. */
static long follow_tree(rl_bench_trees *tr, size_t slot)
{
    tree_table *t = tr->table;
    adopt_orphans(tr, slot, tr->n_slots == 1 && tr->leader[slot] == 0);
    walk_ctx w = {t, slot};
    for (int i = 0; i < atomic_load(&t->n[slot]); i++) /* grows while it walks */
        proc_children(t->pids[slot][i].pid, add_child, &w);
    long sum = 0;
    int n = atomic_load(&t->n[slot]), k = 0;
    for (int i = 0; i < n; i++) {
        tracked p = t->pids[slot][i];
        bool leader = p.pid == tr->leader[slot];
        if (!leader && !tracked_alive(&p))
            continue;
        long kb = rl_bench_proc_rss_kb(p.pid);
        if (kb > 0)
            sum += kb;
        t->pids[slot][k++] = p; /* the leader stays until its exit is collected */
    }
    atomic_store(&t->n[slot], k);
    return sum;
}

/* ---- cgroup v1 ---------------------------------------------------------------------------- */

static void slot_cgroup(const rl_bench_trees *tr, size_t slot, char *out, size_t cap)
{
    snprintf(out, cap, "%s/slot%zu", tr->cg_root, slot);
}

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Summed resident memory (as /proc/<pid>/statm counts it) of the processes in the cgroup,
 * in KiB: the same measure as the /proc mode's, so figures agree whichever mode ran. */
static long cgroup_rss_kb(const char *dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    long sum = 0;
    int pid;
    while (fscanf(f, "%d", &pid) == 1) {
        long kb = rl_bench_proc_rss_kb(pid);
        if (kb > 0)
            sum += kb;
    }
    fclose(f);
    return sum;
}

/* SIGKILLs every process in the cgroup; returns how many it found. */
static int cgroup_kill(const char *dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    int n = 0, pid;
    while (fscanf(f, "%d", &pid) == 1) {
        kill(pid, SIGKILL);
        n++;
    }
    fclose(f);
    return n;
}

/* The memory cgroup this process is in, under the v1 hierarchy's mount point; false when
 * there is no v1 memory controller or this process may not create cgroups in it. */
static bool cgroup_setup(rl_bench_trees *tr)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return false;
    char line[2048], own[1024] = "";
    while (fgets(line, sizeof line, f)) {
        char *a = strchr(line, ':'), *b2 = a ? strchr(a + 1, ':') : NULL;
        if (!b2)
            continue;
        *b2 = '\0';
        bool memory = false;
        for (char *tok = strtok(a + 1, ","); tok; tok = strtok(NULL, ","))
            memory |= strcmp(tok, "memory") == 0;
        if (memory) {
            snprintf(own, sizeof own, "%s", b2 + 1);
            own[strcspn(own, "\n")] = '\0';
        }
    }
    fclose(f);
    if (!own[0])
        return false;
    int n = snprintf(tr->cg_root, sizeof tr->cg_root, "/sys/fs/cgroup/memory%s/runlab-%d",
                     strcmp(own, "/") == 0 ? "" : own, (int)getpid());
    if (n < 0 || (size_t)n >= sizeof tr->cg_root - 32)
        return false;
    if (mkdir(tr->cg_root, 0755) < 0)
        return false;
    for (size_t i = 0; i < tr->n_slots; i++) {
        char dir[1100];
        slot_cgroup(tr, i, dir, sizeof dir);
        if (mkdir(dir, 0755) < 0) {
            for (size_t k = 0; k < i; k++) {
                slot_cgroup(tr, k, dir, sizeof dir);
                rmdir(dir);
            }
            rmdir(tr->cg_root);
            return false;
        }
    }
    return true;
}

/* cgroup v2: a cgroup2 mount where this process's own cgroup (the "0::" line) offers the
 * memory controller and is delegated to it: it may create a child there, enable memory
 * for that child's children (the child holds no process, so v2's rule that only leaves
 * hold processes is kept) and create the slots. `why` says what was missing. */
static bool cgroup2_setup(rl_bench_trees *tr, char *why, size_t cap)
{
    char mount_point[512] = "", line[2048], own[512] = "";
    FILE *f = fopen("/proc/self/mountinfo", "re");
    while (f && fgets(line, sizeof line, f)) {
        /* "id parent maj:min root mount-point options ... - fstype source options" */
        char *dash = strstr(line, " - "), mp[512];
        if (dash && strncmp(dash + 3, "cgroup2 ", 8) == 0 &&
            sscanf(line, "%*s %*s %*s %*s %511s", mp) == 1) {
            snprintf(mount_point, sizeof mount_point, "%s", mp);
            break;
        }
    }
    if (f)
        fclose(f);
    if (!mount_point[0]) {
        snprintf(why, cap, "no cgroup v2 mount");
        return false;
    }
    f = fopen("/proc/self/cgroup", "re");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "0::", 3) == 0) {
            snprintf(own, sizeof own, "%.500s", line + 3);
            own[strcspn(own, "\n")] = '\0';
        }
    if (f)
        fclose(f);
    char base[1100], path[1200];
    snprintf(base, sizeof base, "%.511s%.511s", mount_point, strcmp(own, "/") == 0 ? "" : own);
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", base);
    char controllers[512] = "";
    f = fopen(path, "re");
    if (f) {
        if (!fgets(controllers, sizeof controllers, f))
            controllers[0] = '\0';
        fclose(f);
    }
    bool memory = false;
    for (char *tok = strtok(controllers, " \n"); tok; tok = strtok(NULL, " \n"))
        memory |= strcmp(tok, "memory") == 0;
    if (!memory) {
        snprintf(why, cap, "cgroup v2 at %.600s has no memory controller for its children",
                 base);
        return false;
    }
    int n = snprintf(tr->cg_root, sizeof tr->cg_root, "%s/runlab-%d", base, (int)getpid());
    if (n < 0 || (size_t)n >= sizeof tr->cg_root - 32 || mkdir(tr->cg_root, 0755) < 0) {
        snprintf(why, cap, "cgroup v2 at %.600s is not delegated to this user", base);
        return false;
    }
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", tr->cg_root);
    bool ok = write_text(path, "+memory") == 0;
    size_t made = 0;
    for (; ok && made < tr->n_slots; made++) {
        char dir[1100];
        slot_cgroup(tr, made, dir, sizeof dir);
        ok = mkdir(dir, 0755) == 0;
    }
    if (!ok) {
        for (size_t k = 0; k < made; k++) {
            char dir[1100];
            slot_cgroup(tr, k, dir, sizeof dir);
            rmdir(dir);
        }
        rmdir(tr->cg_root);
        snprintf(why, cap, "cgroup v2 at %.600s: cannot enable memory below it", base);
        return false;
    }
    return true;
}

static void cgroup_remove(const rl_bench_trees *tr)
{
    for (size_t i = 0; i < tr->n_slots; i++) {
        char dir[1100];
        slot_cgroup(tr, i, dir, sizeof dir);
        /* rmdir fails while a killed process is not yet gone: retry briefly */
        for (int tries = 0; rmdir(dir) < 0 && errno == EBUSY && tries < 200; tries++) {
            cgroup_kill(dir);
            usleep(5000);
        }
    }
    rmdir(tr->cg_root);
}

/* ---- the keeper ----------------------------------------------------------------------------- */

static void kill_tracked(tree_table *t, size_t slot)
{
    int n = atomic_load(&t->n[slot]);
    for (int i = 0; i < n; i++) {
        tracked p = t->pids[slot][i];
        unsigned long long start;
        if (proc_stat(p.pid, NULL, &start, NULL) && start == p.start)
            kill(p.pid, SIGKILL);
    }
}

/* Waits for the harness to go (EOF on the pipe), then kills what is left of every run. */
static void keeper_main(rl_bench_trees *tr, int rfd)
{
    static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP};
    for (size_t i = 0; i < sizeof ignored / sizeof *ignored; i++)
        signal(ignored[i], SIG_IGN);
    char c;
    while (read(rfd, &c, 1) < 0 && errno == EINTR) {
    }
    for (int round = 0; round < 3; round++)
        for (size_t s = 0; s < tr->n_slots; s++) {
            kill_tracked(tr->table, s);
            if (tr->mode == RL_BENCH_TREE_CGROUP) {
                char dir[1100];
                slot_cgroup(tr, s, dir, sizeof dir);
                cgroup_kill(dir);
            }
        }
    if (tr->mode == RL_BENCH_TREE_CGROUP)
        cgroup_remove(tr);
    _exit(0);
}

/* ---- the API ------------------------------------------------------------------------------ */

int rl_bench_trees_new(rl_bench_trees **out, size_t n_slots)
{
    *out = NULL;
    if (n_slots > RL_BENCH_TREE_MAX_SLOTS)
        return rl_error_set(RL_EINVAL, "jobs %zu: at most %d", n_slots, RL_BENCH_TREE_MAX_SLOTS);
    rl_bench_trees *tr = calloc(1, sizeof *tr);
    if (!tr)
        return rl_error_set(RL_ENOMEM, "out of memory");
    tr->n_slots = n_slots;
    tr->keeper_fd = -1;
    tr->table = mmap(NULL, sizeof *tr->table, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                     -1, 0);
    if (tr->table == MAP_FAILED) {
        free(tr);
        return rl_error_set_errno(RL_EIO, errno, "mmap");
    }
    const char *force = getenv("RUNLAB_BENCH_TREE");
    bool want_proc = force && strcmp(force, "proc") == 0;
    /* cgroup2: cgroup v2 or /proc, never v1 (to test the v2 decision where v1 works) */
    bool only_v2 = force && strcmp(force, "cgroup2") == 0;
    if (force && !want_proc && !only_v2 && strcmp(force, "cgroup") != 0 &&
        strcmp(force, "auto") != 0)
        rl_log_warn("RUNLAB_BENCH_TREE=%s: expected auto, cgroup, cgroup2 or proc; using auto",
                    force);
    /* auto: a cgroup v1 memory cgroup, else a delegated cgroup v2 one with the memory
       controller, else /proc; the manifest says which and why */
    char why2[700] = "";
    if (want_proc) {
        tr->mode = RL_BENCH_TREE_PROC;
        snprintf(tr->describe, sizeof tr->describe, "proc (forced by RUNLAB_BENCH_TREE=proc)");
    } else if (!only_v2 && cgroup_setup(tr)) {
        tr->mode = RL_BENCH_TREE_CGROUP;
        snprintf(tr->describe, sizeof tr->describe, "cgroup v1 %s", tr->cg_root);
    } else if (cgroup2_setup(tr, why2, sizeof why2)) {
        tr->mode = RL_BENCH_TREE_CGROUP;
        snprintf(tr->describe, sizeof tr->describe, "cgroup v2 %s", tr->cg_root);
    } else {
        tr->mode = RL_BENCH_TREE_PROC;
        snprintf(tr->describe, sizeof tr->describe, "proc (%s%s)",
                 only_v2 ? "cgroup v1 not tried: RUNLAB_BENCH_TREE=cgroup2; "
                         : "no writable cgroup v1 memory controller; ",
                 why2);
    }
    if (force && strcmp(force, "cgroup") == 0 && tr->mode != RL_BENCH_TREE_CGROUP)
        rl_log_warn("RUNLAB_BENCH_TREE=cgroup: %s; following process trees through /proc",
                    tr->describe);
    /* Orphans of a run (a daemonising child, a shell's program) come to the harness
       instead of init, so they can be found, killed and reaped. */
    prctl(PR_GET_CHILD_SUBREAPER, &tr->was_subreaper);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        int err = errno;
        rl_bench_trees_free(tr);
        return rl_error_set_errno(RL_EIO, err, "pipe");
    }
    fflush(NULL);
    tr->keeper = fork();
    if (tr->keeper == 0) {
        close(p[1]);
        for (int fd = 3; fd < 1024; fd++) /* hold nothing of the harness's open */
            if (fd != p[0])
                close(fd);
        keeper_main(tr, p[0]);
    }
    close(p[0]);
    if (tr->keeper < 0) {
        int err = errno;
        close(p[1]);
        rl_bench_trees_free(tr);
        return rl_error_set_errno(RL_EIO, err, "fork");
    }
    tr->keeper_fd = p[1];
    *out = tr;
    return RL_OK;
}

const char *rl_bench_trees_describe(const rl_bench_trees *tr)
{
    return tr->describe;
}

void rl_bench_tree_enter(const rl_bench_trees *tr, size_t slot)
{
    /* Only the harness may hold the keeper's pipe open, or the keeper would never learn
       of the harness's death while a run lives. */
    close(tr->keeper_fd);
    char mark[64];
    snprintf(mark, sizeof mark, "%d.%zu", (int)getppid(), slot);
    setenv("RUNLAB_BENCH_SLOT", mark, 1);
    if (tr->mode != RL_BENCH_TREE_CGROUP)
        return;
    char dir[1100], path[1200];
    slot_cgroup(tr, slot, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    write_text(path, "0"); /* "0": the writing process itself */
}

void rl_bench_tree_begin(rl_bench_trees *tr, size_t slot, pid_t leader)
{
    tr->leader[slot] = leader;
    tr->peak_kb[slot] = 0;
    atomic_store(&tr->table->n[slot], 0);
    table_add(tr->table, slot, leader);
}

long rl_bench_tree_rss_kb(rl_bench_trees *tr, size_t slot)
{
    long kb = -1;
    if (tr->mode == RL_BENCH_TREE_CGROUP) {
        char dir[1100];
        slot_cgroup(tr, slot, dir, sizeof dir);
        kb = cgroup_rss_kb(dir);
    }
    if (kb < 0)
        kb = follow_tree(tr, slot);
    if (kb > tr->peak_kb[slot])
        tr->peak_kb[slot] = kb;
    return kb;
}

long rl_bench_tree_peak_kb(const rl_bench_trees *tr, size_t slot)
{
    return tr->peak_kb[slot];
}

void rl_bench_tree_reset_peak(rl_bench_trees *tr, size_t slot)
{
    tr->peak_kb[slot] = 0;
}

void rl_bench_tree_kill(rl_bench_trees *tr, size_t slot)
{
    if (tr->leader[slot] > 0) {
        kill(-tr->leader[slot], SIGKILL);
        follow_tree(tr, slot); /* children started since the last look */
    }
    kill_tracked(tr->table, slot);
    if (tr->mode == RL_BENCH_TREE_CGROUP) {
        char dir[1100];
        slot_cgroup(tr, slot, dir, sizeof dir);
        cgroup_kill(dir);
    }
}

void rl_bench_tree_end(rl_bench_trees *tr, size_t slot)
{
    tr->leader[slot] = 0; /* its exit was collected: anything else left is killed */
    adopt_orphans(tr, slot, true);
    for (int round = 0; round < 100; round++) {
        follow_tree(tr, slot);
        int left = atomic_load(&tr->table->n[slot]);
        bool cg_left = false;
        if (tr->mode == RL_BENCH_TREE_CGROUP) {
            char dir[1100];
            slot_cgroup(tr, slot, dir, sizeof dir);
            cg_left = cgroup_kill(dir) > 0;
        }
        if (!left && !cg_left)
            break;
        kill_tracked(tr->table, slot);
        rl_bench_trees_reap(tr);
        usleep(1000);
    }
    atomic_store(&tr->table->n[slot], 0);
}

void rl_bench_trees_reap(rl_bench_trees *tr)
{
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0 || info.si_pid == 0)
            return;
        pid_t pid = info.si_pid;
        if (pid == tr->keeper)
            return; /* collected by rl_bench_trees_free */
        for (size_t i = 0; i < tr->n_slots; i++)
            if (tr->leader[i] == pid)
                return; /* a run's first process: the harness collects it with wait4 */
        waitpid(pid, NULL, WNOHANG); /* an orphan that came to the harness */
    }
}

void rl_bench_trees_free(rl_bench_trees *tr)
{
    if (!tr)
        return;
    for (size_t i = 0; i < tr->n_slots; i++)
        if (atomic_load(&tr->table->n[i]))
            rl_bench_tree_end(tr, i);
    if (tr->keeper_fd >= 0)
        close(tr->keeper_fd); /* the keeper finds nothing left, removes the cgroups, exits */
    if (tr->keeper > 0)
        while (waitpid(tr->keeper, NULL, 0) < 0 && errno == EINTR) {
        }
    else if (tr->mode == RL_BENCH_TREE_CGROUP)
        cgroup_remove(tr);
    rl_bench_trees_reap(tr);
    prctl(PR_SET_CHILD_SUBREAPER, tr->was_subreaper);
    munmap(tr->table, sizeof *tr->table);
    free(tr);
}
