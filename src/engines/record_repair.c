/* Repair of a run whose recorder died (kill -9, a crash, a power loss): the bag is
 * recovered in place and manifest.json rewritten as INTERRUPTED (or FAILED, with the
 * control flow's reason) with the counts of what the bag holds (rl_record_repair[_as]),
 * the question whether a run directory is such an unfinished run
 * (rl_record_run_unfinished), and a control flow's note in a finished run's manifest. Uses the run directory's lock, which a live
 * recorder holds, to tell a dead recorder from a running one. */
#include "engines/record_dir.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/mcap.h"
#include "runlab/provenance.h"
#include "runlab/time.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { CONFIG_MAX = 64 << 20 };

/* Reads config/recorder.json of the run; NULL when missing or unreadable. */
static json_object *read_config(const char *dir)
{
    char path[PATH_MAX];
    json_object *o = NULL;
    if (snprintf(path, sizeof path, "%s/config/recorder.json", dir) >= (int)sizeof path ||
        rl_json_read_file(path, CONFIG_MAX, &o) < 0)
        return NULL;
    if (!json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = NULL;
    }
    return o;
}

static const char *get_str(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static int64_t get_stamp(json_object *stamps, const char *key)
{
    const char *s = get_str(stamps, key);
    int64_t ns;
    return s && rl_time_parse_iso(s, &ns) == RL_OK ? ns : RL_REC_UNSET;
}

static int is_terminal(const char *state)
{
    return state && (strcmp(state, "COMPLETE") == 0 || strcmp(state, "INTERRUPTED") == 0 ||
                     strcmp(state, "FAILED") == 0);
}

/* The run id in "<UTC compact time>_<run id>", or NULL. */
static const char *run_id_of_dir_name(const char *name)
{
    const char *us = strchr(name, '_');
    if (!us || us - name != 16 || name[8] != 'T' || name[15] != 'Z')
        return NULL;
    return rl_record_check_run_id(us + 1) == RL_OK ? us + 1 : NULL;
}

static const char *base_of(const char *path, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", path);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    const char *s = strrchr(buf, '/');
    return s ? s + 1 : buf;
}

/* Whether `dir` looks like a recorder's run directory: its manifest says so, or it has
 * the recorder's config, or (killed in its first milliseconds) its name is
 * "<UTC time>_<run id>" inside an experiments/ folder. */
static int looks_like_run(const char *dir, const rl_record_manifest *manifest)
{
    if (manifest->format)
        return strcmp(manifest->format, "runlab.record.manifest") == 0;
    char path[PATH_MAX], buf[PATH_MAX];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/config/recorder.json", dir) < (int)sizeof path &&
        stat(path, &st) == 0)
        return 1;
    if (!run_id_of_dir_name(base_of(dir, buf, sizeof buf)))
        return 0;
    snprintf(path, sizeof path, "%s/..", dir);
    char parent[PATH_MAX];
    if (!realpath(path, parent))
        return 0;
    const char *pb = base_of(parent, buf, sizeof buf);
    return strcmp(pb, "experiments") == 0;
}

/* Removes leftovers of a dead recorder: "manifest.json.tmp.*" and the manifest's room. */
static void remove_leftovers(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d)) != NULL) {
        if ((strncmp(e->d_name, "manifest.json.tmp.", 18) == 0 ||
             strcmp(e->d_name, RL_REC_RESERVE_NAME) == 0) &&
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
            unlink(path);
    }
    closedir(d);
}

/* Recovers `bag` in place when it is unfinished: into a temporary file beside it, then
 * renamed over it. Sets report->bag to "complete", "recovered" or "empty". */
static int recover_bag(const char *bag, rl_record_repair_report *rep)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.repair.tmp", bag) >= (int)sizeof tmp)
        return rl_error_set(RL_ERANGE, "%s: path too long", bag);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return rl_error_set_errno(errno == ENOSPC ? RL_ENOSPC : RL_EIO, errno, "%s", tmp);
    rl_mcap_recover_report r;
    memset(&r, 0, sizeof r);
    int rc = rl_mcap_recover_fd(bag, fd, NULL, &r);
    if (rc == RL_OK && fsync(fd) != 0)
        rc = rl_error_set_errno(RL_EIO, errno, "%s: fsync", tmp);
    if (close(fd) != 0 && rc == RL_OK)
        rc = rl_error_set_errno(RL_EIO, errno, "%s: close", tmp);
    if (rc == RL_EPARSE) {
        /* Not even the leading magic: killed before the bag's header reached the disk. */
        unlink(tmp);
        snprintf(rep->bag, sizeof rep->bag, "empty");
        rl_mcap_recover_report_free(&r);
        return RL_OK;
    }
    if (rc == RL_OK && r.input_complete) {
        unlink(tmp);
        snprintf(rep->bag, sizeof rep->bag, "complete");
    } else if (rc == RL_OK) {
        if (rename(tmp, bag) != 0)
            rc = rl_error_set_errno(RL_EIO, errno, "%s: rename over %s", tmp, bag);
        snprintf(rep->bag, sizeof rep->bag, "recovered");
        rep->bytes_lost = r.bytes_lost;
    } else {
        unlink(tmp);
        rl_error_prefix(rc, "%s: recovering the bag", bag);
    }
    rl_mcap_recover_report_free(&r);
    return rc;
}

/* Counts of one topic found in the bag. */
typedef struct found_topic {
    char *name, *schema, *encoding;
    uint64_t messages, inside, outside, bytes;
} found_topic;

typedef struct bag_census {
    found_topic *t;
    size_t n;
    uint64_t messages;
    int64_t last_log; /* RL_REC_UNSET when empty */
} bag_census;

static void census_free(bag_census *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->t[i].name);
        free(c->t[i].schema);
        free(c->t[i].encoding);
    }
    free(c->t);
}

/* Messages per topic of a complete bag, inside/outside START..STOP by log time. */
static int take_census(const char *bag, int64_t start, int64_t stop, bag_census *c)
{
    memset(c, 0, sizeof *c);
    c->last_log = RL_REC_UNSET;
    rl_mcap_indexed *idx = NULL;
    int rc = rl_mcap_indexed_open(&idx, bag, 0);
    if (rc < 0)
        return rl_error_prefix(rc, "%s", bag);
    const rl_mcap_channel *chans = NULL;
    size_t nch = rl_mcap_indexed_channels(idx, &chans);
    c->t = calloc(nch ? nch : 1, sizeof *c->t);
    if (!c->t) {
        rl_mcap_indexed_close(idx);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nch; i++) {
        const rl_mcap_schema *s = rl_mcap_indexed_schema(idx, chans[i].schema_id);
        rl_mcap_bytes none = {(const uint8_t *)"", 0};
        c->t[i].name = rl_mcap_bytes_dup(chans[i].topic);
        c->t[i].schema = rl_mcap_bytes_dup(s ? s->name : none);
        c->t[i].encoding = rl_mcap_bytes_dup(chans[i].message_encoding);
        c->n++;
        if (!c->t[i].name || !c->t[i].schema || !c->t[i].encoding)
            rc = rl_error_set(RL_ENOMEM, "out of memory");
    }
    rl_mcap_message_iter *it = NULL;
    if (rc == RL_OK)
        rc = rl_mcap_indexed_messages(idx, NULL, &it);
    rl_mcap_message m;
    const rl_mcap_channel *ch = NULL;
    int got;
    while (rc == RL_OK && (got = rl_mcap_message_iter_next(it, &m, &ch)) != 0) {
        if (got < 0)
            continue; /* a damaged chunk: skipped, the rest still counts */
        size_t k = (size_t)(ch - chans);
        if (!ch || k >= nch)
            continue;
        found_topic *t = &c->t[k];
        int64_t lt = (int64_t)m.log_time;
        int inside = start != RL_REC_UNSET && lt >= start && (stop == RL_REC_UNSET || lt <= stop);
        t->messages++;
        t->bytes += m.data.len;
        (inside ? &t->inside : &t->outside)[0]++;
        c->messages++;
        if (c->last_log == RL_REC_UNSET || lt > c->last_log)
            c->last_log = lt;
    }
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(idx);
    return rc;
}

static json_object *stamp_or_null(int64_t ns)
{
    char iso[RL_TIME_ISO_LEN];
    return ns != RL_REC_UNSET && rl_time_format_iso(ns, iso, sizeof iso) == RL_OK
               ? json_object_new_string(iso)
               : NULL;
}

static json_object *counters(json_object *o, uint64_t received, uint64_t inside,
                             uint64_t outside, uint64_t written, uint64_t bytes)
{
    json_object_object_add(o, "received", json_object_new_int64((int64_t)received));
    json_object_object_add(o, "inside", json_object_new_int64((int64_t)inside));
    json_object_object_add(o, "outside", json_object_new_int64((int64_t)outside));
    json_object_object_add(o, "written", json_object_new_int64((int64_t)written));
    json_object_object_add(o, "dropped", json_object_new_int64(0));
    json_object_object_add(o, "bytes", json_object_new_int64((int64_t)bytes));
    return o;
}

/* A manifest for a run that died before writing its first one. */
static json_object *fresh_manifest(const char *dir, json_object *config)
{
    char buf[PATH_MAX];
    const char *name = base_of(dir, buf, sizeof buf);
    const char *id = run_id_of_dir_name(name);
    char bag_rel[PATH_MAX];
    snprintf(bag_rel, sizeof bag_rel, "bag/%s.mcap", id ? id : "bag");
    json_object *m = json_object_new_object();
    json_object_object_add(m, "format", json_object_new_string("runlab.record.manifest"));
    json_object_object_add(m, "format_version", json_object_new_int(1));
    json_object_object_add(m, "run_id", json_object_new_string(id ? id : name));
    json_object_object_add(m, "directory", json_object_new_string(name));
    json_object_object_add(m, "host", json_object_new_string(""));
    json_object *dom = NULL;
    int domain = config && json_object_object_get_ex(config, "lab_domain", &dom)
                     ? json_object_get_int(dom)
                     : 0;
    json_object_object_add(m, "lab_domain", json_object_new_int(domain));
    json_object_object_add(m, "state", json_object_new_string("ARMED"));
    json_object_object_add(m, "result", NULL);
    json_object_object_add(m, "vehicles", json_object_new_array());
    json_object_object_add(m, "planner", NULL);
    /* The map was stored before the first manifest: describe what map/ holds (the frame
     * is not kept anywhere else, so it is the default). A damaged map stays null. */
    rec_map_info mi;
    json_object_object_add(m, "map", rl_rec_map_describe(dir, NULL, &mi) == RL_OK
                                         ? rl_rec_manifest_map_json(&mi)
                                         : NULL);
    json_object *st = json_object_new_object();
    /* The directory's name is its prepare time, to the second. */
    int64_t prepare = RL_REC_UNSET;
    if (id) {
        char iso[32];
        snprintf(iso, sizeof iso, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2s.000000000Z", name, name + 4,
                 name + 6, name + 9, name + 11, name + 13);
        if (rl_time_parse_iso(iso, &prepare) != RL_OK)
            prepare = RL_REC_UNSET;
    }
    json_object_object_add(st, "prepare", stamp_or_null(prepare));
    json_object_object_add(st, "begin", NULL);
    json_object_object_add(st, "start", NULL);
    json_object_object_add(st, "stop", NULL);
    json_object_object_add(st, "finish", NULL);
    json_object_object_add(m, "stamps", st);
    json_object *bag = json_object_new_object();
    json_object_object_add(bag, "file", json_object_new_string(bag_rel));
    json_object_object_add(bag, "format", json_object_new_string("mcap"));
    const char *comp = get_str(config, "compression");
    json_object_object_add(bag, "compression", json_object_new_string(comp ? comp : "none"));
    json_object *ko = NULL;
    json_object_object_add(bag, "keep_outside",
                           json_object_new_boolean(!config ||
                                                   !json_object_object_get_ex(config, "keep_outside", &ko) ||
                                                   json_object_get_boolean(ko)));
    json_object_object_add(m, "bag", bag);
    json_object_object_add(m, "totals", counters(json_object_new_object(), 0, 0, 0, 0, 0));
    json_object_object_add(m, "topics", json_object_new_array());
    /* The runlab that wrote this manifest: the repairing one. */
    rl_provenance prov;
    rl_provenance_collect(&prov);
    json_object *rl = json_object_new_object();
    json_object_object_add(rl, "version", json_object_new_string(prov.version));
    json_object_object_add(rl, "build_revision", json_object_new_string(rl_build_sha()));
    json_object_object_add(rl, "build_dirty", json_object_new_boolean(rl_build_is_dirty()));
    json_object_object_add(m, "runlab", rl);
    return m;
}

/* Takes the run directory's lock, which a live recorder holds for its whole life; a
 * listing that probes it holds it shared for a moment only, hence a few tries. 1 when
 * taken; 0 with errno set (EWOULDBLOCK: the recorder lives). */
static int lock_dead_run(int dfd)
{
    for (int i = 0; i < 50; i++) {
        if (flock(dfd, LOCK_EX | LOCK_NB) == 0)
            return 1;
        if (errno != EWOULDBLOCK)
            return 0;
        struct timespec nap = {0, 2000000};
        nanosleep(&nap, NULL);
    }
    errno = EWOULDBLOCK;
    return 0;
}

int rl_record_repair(const char *run_dir, rl_record_repair_report *rep)
{
    return rl_record_repair_as(run_dir, RL_RECORD_INTERRUPTED, NULL, rep);
}

int rl_record_repair_as(const char *run_dir, rl_record_state final_state, const char *why,
                        rl_record_repair_report *rep)
{
    if (final_state != RL_RECORD_INTERRUPTED && final_state != RL_RECORD_FAILED) {
        memset(rep, 0, sizeof *rep);
        return rl_error_set(RL_EINVAL, "%s: a repaired run ends INTERRUPTED or FAILED, not %s",
                            run_dir, rl_record_state_name(final_state));
    }
    const char *final_name = rl_record_state_name(final_state);
    memset(rep, 0, sizeof *rep);
    snprintf(rep->previous_state, sizeof rep->previous_state, "MISSING");
    snprintf(rep->bag, sizeof rep->bag, "missing");
    int dfd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return rl_error_set_errno(errno == ENOENT ? RL_ENOENT : RL_EINVAL, errno, "%s", run_dir);
    rl_record_manifest read;
    int rc = rl_record_manifest_read(run_dir, &read);
    int unreadable = rc < 0 && rc != RL_ENOENT;
    rc = RL_OK;
    if (!looks_like_run(run_dir, &read))
        rc = rl_error_set(RL_EINVAL, "%s: not a recorder run directory (no recorder manifest, "
                          "no config/recorder.json)", run_dir);
    /* A live recorder holds this lock; it is held for the repair too. */
    else if (!lock_dead_run(dfd)) {
        int e = errno;
        long holder = (long)read.recorder_pid;
        if (e != EWOULDBLOCK)
            rc = rl_error_set_errno(RL_EIO, e, "%s: lock", run_dir);
        else if (holder)
            rc = rl_error_set(RL_EBUSY, "%s: its recorder is still running (pid %ld); nothing "
                              "repaired", run_dir, holder);
        else
            rc = rl_error_set(RL_EBUSY, "%s: its recorder is still running; nothing repaired",
                              run_dir);
    }
    if (rc < 0) {
        rl_record_manifest_free(&read);
        close(dfd);
        return rc;
    }
    /* The document is rewritten below: it is taken over from the reader. */
    json_object *man = read.doc;
    read.doc = NULL;
    const char *state = read.state;
    if (man)
        snprintf(rep->previous_state, sizeof rep->previous_state, "%s", state ? state : "?");
    else if (unreadable)
        snprintf(rep->previous_state, sizeof rep->previous_state, "UNREADABLE");
    rl_record_manifest_free(&read);
    if (!man) {
        json_object *config = read_config(run_dir);
        man = fresh_manifest(run_dir, config);
        json_object_put(config);
    }

    json_object *bagobj = NULL, *stamps = NULL;
    json_object_object_get_ex(man, "bag", &bagobj);
    if (!json_object_object_get_ex(man, "stamps", &stamps) ||
        !json_object_is_type(stamps, json_type_object)) {
        /* A hand-edited manifest: the stamps it had are not readable, so none are kept. */
        stamps = json_object_new_object();
        static const char *const keys[] = {"prepare", "begin", "start", "stop", "finish"};
        for (size_t i = 0; i < 5; i++)
            json_object_object_add(stamps, keys[i], NULL);
        json_object_object_add(man, "stamps", stamps);
    }
    const char *bag_rel = get_str(bagobj, "file");
    char bag[PATH_MAX] = "";
    if (bag_rel && rl_path_join_rel(bag, sizeof bag, run_dir, bag_rel) != RL_OK)
        bag[0] = '\0';
    struct stat st;
    int have_bag = bag[0] && stat(bag, &st) == 0 && S_ISREG(st.st_mode);
    if (have_bag && st.st_size == 0)
        snprintf(rep->bag, sizeof rep->bag, "empty");
    else if (have_bag)
        rc = recover_bag(bag, rep);
    int bag_readable = rc == RL_OK && (!strcmp(rep->bag, "complete") || !strcmp(rep->bag, "recovered"));

    if (rc == RL_OK && is_terminal(state) && strcmp(rep->bag, "recovered") != 0) {
        /* Finished (the recorder closed its bag): nothing to do but tidy up. */
        remove_leftovers(run_dir);
        snprintf(rep->what, sizeof rep->what, "%s: nothing to repair (%s, bag %s)", run_dir,
                 state, rep->bag);
        json_object_put(man);
        close(dfd);
        return RL_OK;
    }
    int64_t start = get_stamp(stamps, "start"), stop = get_stamp(stamps, "stop");
    bag_census census;
    memset(&census, 0, sizeof census);
    census.last_log = RL_REC_UNSET;
    if (rc == RL_OK && bag_readable)
        rc = take_census(bag, start, stop, &census);
    if (rc < 0) {
        census_free(&census);
        json_object_put(man);
        close(dfd);
        return rc;
    }
    rep->messages = census.messages;
    rep->repaired = 1;
    int64_t now = rl_time_now_ns();
    char iso[RL_TIME_ISO_LEN] = "";
    rl_time_format_iso(now, iso, sizeof iso);
    rl_provenance prov;
    rl_provenance_collect(&prov);

    if (!is_terminal(state)) {
        /* Counts from the bag: what the recorder had not flushed when it died is lost and
         * cannot be counted. Topics the manifest knew but the bag lacks stay, with 0. */
        json_object *topics = json_object_new_array();
        json_object *old = NULL;
        json_object_object_get_ex(man, "topics", &old);
        uint64_t tr = 0, ti = 0, to = 0, tb = 0;
        size_t nold = old && json_object_is_type(old, json_type_array) ? json_object_array_length(old) : 0;
        for (size_t i = 0; i < nold; i++) {
            json_object *ot = json_object_array_get_idx(old, i);
            const char *name = get_str(ot, "topic");
            int in_bag = 0;
            for (size_t k = 0; name && k < census.n; k++)
                in_bag |= strcmp(census.t[k].name, name) == 0;
            if (!name || in_bag)
                continue;
            json_object *o = json_object_new_object();
            json_object_object_add(o, "topic", json_object_new_string(name));
            json_object_object_add(o, "schema", json_object_new_string(get_str(ot, "schema") ? get_str(ot, "schema") : ""));
            json_object_object_add(o, "message_encoding", json_object_new_string(get_str(ot, "message_encoding") ? get_str(ot, "message_encoding") : ""));
            json_object_array_add(topics, counters(o, 0, 0, 0, 0, 0));
        }
        for (size_t k = 0; k < census.n; k++) {
            found_topic *t = &census.t[k];
            json_object *o = json_object_new_object();
            json_object_object_add(o, "topic", json_object_new_string(t->name));
            json_object_object_add(o, "schema", json_object_new_string(t->schema));
            json_object_object_add(o, "message_encoding", json_object_new_string(t->encoding));
            json_object_array_add(topics, counters(o, t->messages, t->inside, t->outside,
                                                   t->messages, t->bytes));
            tr += t->messages, ti += t->inside, to += t->outside, tb += t->bytes;
        }
        json_object_object_add(man, "topics", topics);
        json_object_object_add(man, "totals", counters(json_object_new_object(), tr, ti, to, tr, tb));
        /* The finish stamp: its last sign of life, never before an earlier stamp. */
        int64_t finish = census.last_log;
        static const char *const order[] = {"prepare", "begin", "start", "stop"};
        for (size_t i = 0; i < 4; i++) {
            int64_t v = get_stamp(stamps, order[i]);
            if (v != RL_REC_UNSET && (finish == RL_REC_UNSET || v > finish))
                finish = v;
        }
        json_object_object_add(stamps, "finish", stamp_or_null(finish));
        /* The caller's sentence when it knows why the recorder died (the experiment that
         * drove it); the `repair` record below says what was recovered either way. */
        char reason[1024];
        if (why && why[0])
            snprintf(reason, sizeof reason, "%s", why);
        else
            snprintf(reason, sizeof reason,
                     "recorder died; repaired by runlab %s at %s: %llu messages in the bag (%s)%s",
                     prov.version, iso, (unsigned long long)census.messages, rep->bag,
                     census.messages || have_bag
                         ? "; what it had not flushed when it died is lost and not counted"
                         : "");
        json_object_object_add(man, "state", json_object_new_string(final_name));
        json_object *result = json_object_new_object();
        json_object_object_add(result, "state", json_object_new_string(final_name));
        json_object_object_add(result, "reason", json_object_new_string(reason));
        json_object_object_add(man, "result", result);
    }
    json_object *r = json_object_new_object();
    json_object_object_add(r, "at", json_object_new_string(iso));
    json_object_object_add(r, "by", json_object_new_string(prov.version));
    json_object_object_add(r, "previous_state", json_object_new_string(rep->previous_state));
    json_object_object_add(r, "bag", json_object_new_string(rep->bag));
    json_object_object_add(r, "messages", json_object_new_int64((int64_t)census.messages));
    json_object_object_add(r, "bytes_lost", json_object_new_int64((int64_t)rep->bytes_lost));
    json_object_object_add(man, "repair", r);
    census_free(&census);

    char path[PATH_MAX];
    rc = rl_path_join(path, sizeof path, run_dir, "manifest.json");
    size_t len = 0;
    char *buf = rc == RL_OK ? rl_rec_json_text(man, path, &len) : NULL;
    if (rc == RL_OK && !buf)
        rc = rl_error_last_code();
    if (rc == RL_OK) {
        /* The dead recorder's room for the manifest, if it left one, is used when the
         * disk is full. */
        char reserve[PATH_MAX];
        int rfd = -1;
        if (snprintf(reserve, sizeof reserve, "%s/%s", run_dir, RL_REC_RESERVE_NAME) <
            (int)sizeof reserve)
            rfd = open(reserve, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        rc = rl_rec_write_with_reserve(path, buf, len, &rfd, reserve);
        if (rfd >= 0)
            close(rfd);
    }
    free(buf);
    if (rc == RL_OK) {
        remove_leftovers(run_dir);
        snprintf(rep->what, sizeof rep->what,
                 "%s: repaired: %s -> %s, %llu messages in the bag (bag %s%s)", run_dir,
                 rep->previous_state, get_str(man, "state"), (unsigned long long)rep->messages,
                 rep->bag, rep->bytes_lost ? ", bytes lost" : "");
    }
    json_object_put(man);
    close(dfd);
    return rc;
}

int rl_record_manifest_note(const char *run_dir, const char *key, const char *json_text)
{
    if (!key || strcmp(key, "vehicle_losses") != 0)
        return rl_error_set(RL_EINVAL, "%s: manifest key '%s' is not one a control flow sets",
                            run_dir, key ? key : "(null)");
    if (!json_text || strlen(json_text) > 64 * 1024)
        return rl_error_set(RL_EINVAL, "%s: %s: no JSON text, or more than 64 KiB", run_dir, key);
    json_object *value = json_tokener_parse(json_text);
    if (!value && strcmp(json_text, "null") != 0)
        return rl_error_set(RL_EINVAL, "%s: %s: not JSON", run_dir, key);
    int dfd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        json_object_put(value);
        return rl_error_set_errno(errno == ENOENT ? RL_ENOENT : RL_EINVAL, errno, "%s", run_dir);
    }
    int rc = RL_OK;
    rl_record_manifest read = {0};
    if (!lock_dead_run(dfd))
        rc = errno == EWOULDBLOCK
                 ? rl_error_set(RL_EBUSY, "%s: its recorder still holds the run", run_dir)
                 : rl_error_set_errno(RL_EIO, errno, "%s: lock", run_dir);
    else if ((rc = rl_record_manifest_read(run_dir, &read)) < 0)
        rc = rl_error_set(rc == RL_ENOENT ? RL_ENOENT : RL_EINVAL, "%s: manifest.json %s",
                          run_dir, rc == RL_ENOENT ? "is missing" : "is unreadable");
    else if (!is_terminal(read.state))
        rc = rl_error_set(RL_EINVAL, "%s: the run has not finished (%s)", run_dir,
                          read.state ? read.state : "no state");
    json_object *man = read.doc;
    if (rc == RL_OK) {
        json_object_object_add(man, key, value);
        value = NULL;
        char path[PATH_MAX];
        rc = rl_path_join(path, sizeof path, run_dir, "manifest.json");
        size_t len = 0;
        char *buf = rc == RL_OK ? rl_rec_json_text(man, path, &len) : NULL;
        if (rc == RL_OK && !buf)
            rc = rl_error_last_code();
        if (rc == RL_OK)
            rc = rl_fs_write_atomic(path, buf, len, 0644);
        free(buf);
    }
    json_object_put(value);
    rl_record_manifest_free(&read);
    close(dfd); /* lets the lock go */
    return rc;
}

int rl_record_run_unfinished(const char *run_dir, char *why, size_t cap)
{
    if (cap)
        why[0] = '\0';
    /* Cheap first: most directories walked are no recorder runs. */
    char path[PATH_MAX], buf[PATH_MAX];
    struct stat st;
    int has_config = snprintf(path, sizeof path, "%s/config/recorder.json", run_dir) <
                         (int)sizeof path &&
                     stat(path, &st) == 0;
    if (!has_config && !run_id_of_dir_name(base_of(run_dir, buf, sizeof buf)))
        return 0;
    rl_record_manifest man;
    int have_manifest = rl_record_manifest_read(run_dir, &man) == RL_OK;
    int result = 0;
    if (looks_like_run(run_dir, &man)) {
        const char *state = man.state;
        if (!is_terminal(state)) {
            int dfd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            int alive = dfd >= 0 && flock(dfd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
            if (dfd >= 0)
                close(dfd);
            result = 1;
            if (alive)
                snprintf(why, cap, "recording in progress (%s)", state ? state : "no manifest yet");
            else
                snprintf(why, cap,
                         "unfinished recording (%s, its recorder is gone); `runlab record "
                         "--repair %s` recovers it",
                         have_manifest ? (state ? state : "manifest without state")
                                       : "no manifest.json",
                         run_dir);
        }
    }
    rl_record_manifest_free(&man);
    return result;
}
