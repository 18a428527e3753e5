/* Reads a recorder run directory for evaluation: the manifest (state, vehicles, map hash),
 * the bag streamed record by record and decoded with the recording's own schemas through
 * compiled field paths (a field the schema lacks is reported, not guessed), the START/STOP
 * window from rt/lab/system_trigger, and the runtime map checked against its SHA-256. */
#include "eval/eval_load.h"
#include "eval/eval_verdict.h"

#include "core/text.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"
#include "runlab/json.h"
#include "runlab/mcap.h"
#include "runlab/msgdef.h"
#include "runlab/record.h"
#include "runlab/time.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

enum { MAX_VEHICLES = 256, MAX_MANIFEST_BYTES = 16 << 20 };
/* Largest decompressed chunk accepted (the recorder writes 1 MiB chunks). */
#define MAX_CHUNK_BYTES (1ull << 30)

enum chan_kind { CH_IGNORE = 0, CH_TRIGGER, CH_STATE, CH_OBS, CH_CMD };

/* Field paths per topic kind, in the order of the decoder's path slots. */
static const char *const state_paths[] = {"header.create_stamp", "pose.x", "pose.y",
                                          "pose.yaw", "speed", "imu_acceleration_forward"};
static const char *const obs_paths[] = {"header.create_stamp", "pose.x", "pose.y", "pose.yaw"};
/* Every trajectory point is read ("[]"); a schema lacking one of the point fields is named
 * by its first point ("trajectory_points[0].px"), as the reasons always have. */
static const char *const cmd_paths[] = {"header.create_stamp", "header.valid_after_stamp",
                                        "trajectory_points[].t", "trajectory_points[].px",
                                        "trajectory_points[].py", "trajectory_points[].vx",
                                        "trajectory_points[].vy"};
static const char *const cmd_names[] = {"header.create_stamp", "header.valid_after_stamp",
                                        "trajectory_points[0].t", "trajectory_points[0].px",
                                        "trajectory_points[0].py", "trajectory_points[0].vx",
                                        "trajectory_points[0].vy"};
enum { CMD_HEADER_PATHS = 2, MAX_PATHS = 8 };
static const char *const trigger_paths[] = {"kind", "stamp"};

typedef struct chan_dec {
    int kind;
    size_t vehicle; /* index into run.vehicles */
    rl_msgdef *def;
    rl_msg_extract *ex;      /* the topic's paths, read in one pass per message */
    bool have[MAX_PATHS];    /* path i is in the schema (else its value is NaN) */
    rl_msg_field f[MAX_PATHS];
    size_t npaths;
    size_t expected; /* messages the bag's statistics announce (0: unknown) */
} chan_dec;

struct eval_loaded {
    eval_run run;
    json_object *manifest;
    rl_map *map;
    char **strings; /* owned strings the run points at */
    size_t nstrings, cap_strings;
    rl_buf notes;
    char *notes_text;
    size_t cap_states[MAX_VEHICLES], cap_obs[MAX_VEHICLES], cap_cmd[MAX_VEHICLES],
        cap_points[MAX_VEHICLES];
    size_t presize_budget; /* values still to size ahead: one per 16 bytes of bag */
    int64_t base_ns; /* the provisional time zero while reading: the first log time */
    bool have_base, have_first;
    bool have_start, have_stop;
    int64_t start_ns, stop_ns;
    int64_t first_ns, last_ns;
};

/* ---- small helpers ---------------------------------------------------------------- */

static const char *keep(eval_loaded *l, char *s)
{
    if (!s)
        return NULL;
    if (rl_grow_array((void **)&l->strings, &l->cap_strings, l->nstrings + 1,
                      sizeof l->strings[0], "strings") < 0) {
        free(s);
        return NULL;
    }
    l->strings[l->nstrings++] = s;
    return s;
}

static const char *keepf(eval_loaded *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *keepf(eval_loaded *l, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return keep(l, strdup(buf));
}

/* a - b in seconds; stamps from a file may be anything, so the difference wraps instead of
   overflowing. */
static double ns_diff(int64_t a, int64_t b)
{
    return (double)(int64_t)((uint64_t)a - (uint64_t)b) / 1e9;
}

static double rel(const eval_loaded *l, int64_t ns)
{
    return ns_diff(ns, l->base_ns);
}

static int find_vehicle(eval_loaded *l, int id, size_t *idx)
{
    for (size_t i = 0; i < l->run.nvehicles; i++)
        if (l->run.vehicles[i].id == id) {
            *idx = i;
            return RL_OK;
        }
    if (l->run.nvehicles >= MAX_VEHICLES)
        return rl_error_set(RL_ERANGE, "evaluation: more than %d vehicles", MAX_VEHICLES);
    if (l->run.nvehicles == 0) {
        l->run.vehicles = calloc(MAX_VEHICLES, sizeof *l->run.vehicles);
        if (!l->run.vehicles)
            return rl_error_set(RL_ENOMEM, "evaluation: out of memory");
    }
    eval_vehicle *v = &l->run.vehicles[l->run.nvehicles];
    memset(v, 0, sizeof *v);
    v->id = id;
    *idx = l->run.nvehicles++;
    return RL_OK;
}

/* At most `want` of the values still to size ahead. */
static size_t take_budget(eval_loaded *l, size_t want)
{
    size_t n = want < l->presize_budget ? want : l->presize_budget;
    l->presize_budget -= n;
    return n;
}

/* Grows the parallel double arrays cols[0..ncols) to hold `need` values. */
static int grow_cols(double **const cols[], size_t ncols, size_t *cap, size_t need)
{
    if (need <= *cap)
        return RL_OK;
    size_t ncap = *cap ? *cap * 2 : 256;
    while (ncap < need)
        ncap *= 2;
    for (size_t i = 0; i < ncols; i++) {
        double *p = realloc(*cols[i], ncap * sizeof(double));
        if (!p)
            return rl_error_set(RL_ENOMEM, "evaluation: out of memory for %zu samples", need);
        *cols[i] = p;
    }
    *cap = ncap;
    return RL_OK;
}

/* ---- manifest ------------------------------------------------------------------------ */

static void read_manifest(eval_loaded *l, const char *dir)
{
    rl_record_manifest m;
    l->run.state = "UNKNOWN";
    l->run.state_reason = "";
    l->run.run_id = "";
    l->run.planned_duration = eval_planned_duration(dir);
    if (rl_record_manifest_read(dir, &m) < 0) {
        rl_buf_printf(&l->notes, "No readable manifest.json (%s): the run is evaluated from its bag alone.\n",
                      rl_error_last());
        rl_record_manifest_free(&m);
        l->manifest = NULL;
        l->run.unfinished = true;
        return;
    }
    /* The document is kept (the map and the scenario are read from it later); the
       strings below point into it. */
    l->manifest = m.doc;
    m.doc = NULL;
    if (m.state)
        l->run.state = m.state;
    if (m.run_id)
        l->run.run_id = m.run_id;
    if (m.reason)
        l->run.state_reason = m.reason;
    for (size_t i = 0; i < m.vehicle_count; i++) {
        size_t idx;
        (void)find_vehicle(l, m.vehicles[i], &idx);
    }
    /* Times are kept relative to the manifest's START when it has one, so that they need
       no shift (which would cost precision) once the trigger confirms it. */
    if (m.start_ns != RL_RECORD_MANIFEST_NO_STAMP) {
        l->base_ns = m.start_ns;
        l->have_base = true;
    } else if (m.start) { /* said, not ignored: START then comes from the trigger or the first message */
        int64_t unused;
        (void)rl_time_parse_iso(m.start, &unused); /* for its message */
        rl_buf_printf(&l->notes,
                      "manifest.json: stamps.start: not a time (%s): ignored, the window "
                      "is taken from the bag.\n",
                      rl_error_last());
    }
    rl_record_manifest_free(&m);
    char why[512];
    bool being_written = rl_record_run_unfinished(dir, why, sizeof why) == 1;
    if (strcmp(l->run.state, "COMPLETE") != 0) {
        l->run.unfinished = true;
        if (being_written)
            rl_buf_printf(&l->notes,
                          "The run is %s and has not finished (%s): evaluated as far as its data goes.\n",
                          l->run.state, why);
        else
            rl_buf_printf(&l->notes, "The run ended %s%s%s: evaluated as far as its data goes.\n",
                          l->run.state, *l->run.state_reason ? " — " : "", l->run.state_reason);
    }
}

/* ---- map ----------------------------------------------------------------------------- */

/* Checks the SHA-256 of the map file at `path` against the manifest's `expected` hex (NULL:
 * nothing to check against); a mismatch is RL_ECRC naming both hashes. */
static int check_map_hash(const char *path, const char *expected)
{
    uint8_t digest[RL_SHA256_LEN];
    char hex[RL_SHA256_HEX_LEN + 1];
    int rc = rl_sha256_file(path, digest, NULL);
    if (rc < 0)
        return rc; /* the message names the path */
    rl_sha256_hex(digest, hex);
    if (expected && strcasecmp(expected, hex) != 0) /* hex digits in either case */
        return rl_error_set(RL_ECRC,
                            "%s: map hash mismatch: the manifest says SHA-256 %s, the file has %s",
                            path, expected, hex);
    return RL_OK;
}

/* The projection and origin the recorder compiled the map with (manifest keys
 * "projection" and "origin"), so that a recompiled map has the recorded frame. */
static void recorded_frame(json_object *map, rl_map_read_options *o)
{
    const char *name = NULL;
    rl_map_projection p;
    if (rl_json_get_string(map, "projection", &name) == RL_OK && name &&
        rl_map_projection_parse(name, &p) == RL_OK)
        o->projection = p;
    json_object *origin = NULL, *v = NULL;
    if (json_object_object_get_ex(map, "origin", &origin) && origin &&
        json_object_is_type(origin, json_type_object)) {
        if (json_object_object_get_ex(origin, "lat", &v) && json_object_is_type(v, json_type_double))
            o->origin_lat = json_object_get_double(v);
        if (json_object_object_get_ex(origin, "lon", &v) && json_object_is_type(v, json_type_double))
            o->origin_lon = json_object_get_double(v);
    }
}

/* A run recorded before runtime maps were copied keeps only its source map (Lanelet2 or
 * CommonRoad), and one whose runtime map is of an older layout than this build reads keeps
 * both: the source is checked against the manifest's hash of that file, then compiled in
 * memory with the recorded projection and origin. `why` says which case, for the report. */
static int load_source_map(eval_loaded *l, const char *dir, json_object *map, const char *file,
                           const char *why)
{
    char path[PATH_MAX];
    const char *expected = NULL;
    struct stat st;
    if (!file || rl_path_join_rel(path, sizeof path, dir, file) < 0 || stat(path, &st) != 0) {
        l->run.map_missing = keepf(l, "the run has no runtime map (map/runtime_map.bin%s%s)",
                                   file ? " nor its manifest map file " : "", file ? file : "");
        return RL_OK;
    }
    if (rl_json_get_string(map, "source_sha256", &expected) != RL_OK &&
        rl_json_get_string(map, "sha256", &expected) != RL_OK)
        expected = NULL;
    int rc = check_map_hash(path, expected);
    if (rc < 0)
        return rc;
    rl_map_read_options ro;
    rl_map_read_options_init(&ro);
    recorded_frame(map, &ro);
    ro.quiet = true;
    if ((rc = rl_map_load(path, &ro, &l->map, NULL)) < 0) {
        l->run.map_missing = keepf(l, "%s does not load: %s", file, rl_error_last());
        l->map = NULL;
        return RL_OK;
    }
    rl_buf_printf(&l->notes, "%s: the map was compiled from the recorded %s.\n", why, file);
    l->run.map = l->map;
    return RL_OK;
}

/* A map named by the caller (`runlab evaluate --map FILE`) instead of the run's own: for a
 * run recorded without one, or to evaluate against another. Not checked against the
 * manifest (it is not the run's), so the report says which file it was. */
static int load_given_map(eval_loaded *l, const char *map_path)
{
    rl_map_read_options ro;
    rl_map_read_options_init(&ro);
    ro.quiet = true;
    int rc = rl_map_load(map_path, &ro, &l->map, NULL);
    if (rc < 0) {
        l->map = NULL;
        return rl_error_prefix(rc, "--map %s", map_path);
    }
    rl_buf_printf(&l->notes, "The map is %s, given with --map, not one recorded with the run.\n",
                  map_path);
    l->run.map = l->map;
    l->run.map_given = keep(l, strdup(map_path));
    return RL_OK;
}

static int load_map(eval_loaded *l, const char *dir)
{
    json_object *map = NULL;
    if (!l->manifest || !json_object_object_get_ex(l->manifest, "map", &map) || !map ||
        !json_object_is_type(map, json_type_object)) {
        l->run.map_missing = "the run has no map (manifest: map is null)";
        /* One line saying how to get the checks that need a map. */
        rl_buf_printf(&l->notes,
                      "The run has no map, so the checks that need one are UNAVAILABLE: "
                      "`runlab evaluate %s --map FILE` evaluates it against a map "
                      "(Lanelet2, CommonRoad or runtime map).\n",
                      dir);
        return RL_OK;
    }
    const char *file = NULL, *expected = NULL;
    (void)rl_json_get_string(map, "file", &file);
    /* The runtime map's own hash; older manifests hash the copied file, which is the
       runtime map when that is what was recorded. */
    if (rl_json_get_string(map, "runtime_map_sha256", &expected) != RL_OK)
        expected = NULL;
    char path[PATH_MAX];
    if (rl_path_join_rel(path, sizeof path, dir, "map/runtime_map.bin") < 0)
        return rl_error_last_code();
    struct stat st;
    if (stat(path, &st) != 0)
        return load_source_map(l, dir, map, file, "No map/runtime_map.bin");
    if (!expected && file && strcmp(file, "map/runtime_map.bin") == 0)
        (void)rl_json_get_string(map, "sha256", &expected);
    int rc = check_map_hash(path, expected);
    if (rc < 0)
        return rc;
    if (!expected)
        rl_buf_printf(&l->notes, "The manifest gives no SHA-256 of map/runtime_map.bin: the map was not checked.\n");
    rc = rl_map_open_file(path, &l->map);
    const char *original = NULL;
    if (rc == RL_EUNSUPPORTED &&
        rl_json_get_string(map, "original_file", &original) == RL_OK && original) {
        /* Checked above against the manifest: whole, but of an older layout. */
        char why[1200];
        snprintf(why, sizeof why, "map/runtime_map.bin is not read by this build (%s)",
                 rl_error_last());
        return load_source_map(l, dir, map, original, why);
    }
    if (rc < 0) {
        l->run.map_missing = keepf(l, "map/runtime_map.bin does not open: %s", rl_error_last());
        l->map = NULL;
        return RL_OK;
    }
    l->run.map = l->map;
    return RL_OK;
}

/* ---- bag ----------------------------------------------------------------------------- */

static int find_bag(eval_loaded *l, const char *dir, char *out, size_t cap)
{
    const char *file;
    if (l->manifest && json_object_is_type(l->manifest, json_type_object)) {
        json_object *bag;
        if (rl_json_get_object(l->manifest, "bag", &bag) == RL_OK &&
            rl_json_get_string(bag, "file", &file) == RL_OK &&
            rl_path_join_rel(out, cap, dir, file) == RL_OK && access(out, R_OK) == 0)
            return RL_OK;
    }
    char bagdir[PATH_MAX];
    if (rl_path_join(bagdir, sizeof bagdir, dir, "bag") < 0)
        return rl_error_last_code();
    DIR *d = opendir(bagdir);
    if (!d)
        return rl_error_set_errno(RL_ENOENT, errno, "%s: no bag", bagdir);
    struct dirent *e;
    int rc = rl_error_set(RL_ENOENT, "%s: no .mcap file", bagdir);
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".mcap") == 0) {
            rc = rl_path_join(out, cap, bagdir, e->d_name);
            break;
        }
    }
    closedir(d);
    return rc;
}

static void field_missing(eval_loaded *l, size_t vi, eval_field f, const char *why)
{
    eval_vehicle *v = &l->run.vehicles[vi];
    if (!v->missing[f])
        v->missing[f] = why;
}

/* A channel whose encodings the codec table does not decode (say json messages) is refused
 * by name, not decoded as CDR: its topic is missing for the metrics (their checks say why)
 * and the decoding counts say so. `unsupported` is the table's reason, naming both. */
static void refuse_channel(eval_loaded *l, chan_dec *c, const char *topic, const char *unsupported)
{
    static const eval_field fields[3][6] = {
        {EVAL_STATE_TOPIC, EVAL_STATE_STAMP, EVAL_STATE_POSE, EVAL_STATE_SPEED, EVAL_STATE_ACCEL,
         EVAL_STATE_TOPIC},
        {EVAL_OBS_TOPIC, EVAL_OBS_STAMP, EVAL_OBS_POSE, EVAL_OBS_TOPIC, EVAL_OBS_TOPIC,
         EVAL_OBS_TOPIC},
        {EVAL_CMD_TOPIC, EVAL_CMD_VALID_AFTER, EVAL_CMD_POINTS, EVAL_CMD_TOPIC, EVAL_CMD_TOPIC,
         EVAL_CMD_TOPIC}};
    const char *why = keepf(l, "%s: %s: refused, not decoded", topic, unsupported);
    rl_buf_printf(&l->notes, "%s.\n", why);
    if (c->kind >= CH_STATE && c->kind <= CH_CMD) {
        int t = c->kind - CH_STATE;
        l->run.vehicles[c->vehicle].decoding[t].refused = why;
        for (int f = 0; f < 6; f++)
            field_missing(l, c->vehicle, fields[t][f], why);
    }
    c->kind = CH_IGNORE;
}

/* Parses the channel's schema and compiles its paths; a path the schema lacks marks the
 * fields it feeds as missing for that vehicle. */
static int channel_setup(eval_loaded *l, chan_dec *c, const rl_mcap_schema *sc, const char *topic)
{
    static const eval_field state_fields[] = {EVAL_STATE_STAMP, EVAL_STATE_POSE, EVAL_STATE_POSE,
                                              EVAL_STATE_POSE, EVAL_STATE_SPEED, EVAL_STATE_ACCEL};
    static const eval_field obs_fields[] = {EVAL_OBS_STAMP, EVAL_OBS_POSE, EVAL_OBS_POSE,
                                            EVAL_OBS_POSE};
    static const eval_field cmd_fields[] = {EVAL_CMD_TOPIC, EVAL_CMD_VALID_AFTER,
                                            EVAL_CMD_POINTS, EVAL_CMD_POINTS, EVAL_CMD_POINTS,
                                            EVAL_CMD_POINTS, EVAL_CMD_POINTS};
    const char *const *paths;
    const eval_field *fields = NULL;
    eval_field topic_field = EVAL_STATE_TOPIC;
    switch (c->kind) {
    case CH_STATE:
        paths = state_paths, c->npaths = 6, fields = state_fields;
        break;
    case CH_OBS:
        paths = obs_paths, c->npaths = 4, fields = obs_fields, topic_field = EVAL_OBS_TOPIC;
        break;
    case CH_CMD:
        paths = cmd_paths, c->npaths = 7, fields = cmd_fields, topic_field = EVAL_CMD_TOPIC;
        break;
    default:
        paths = trigger_paths, c->npaths = 2;
        break;
    }
    char enc[64], name[512];
    snprintf(enc, sizeof enc, "%.*s", (int)sc->encoding.len, (const char *)sc->encoding.data);
    snprintf(name, sizeof name, "%.*s", (int)sc->name.len, (const char *)sc->name.data);
    int rc = rl_msgdef_parse(&c->def, enc, name, (const char *)sc->data.data, sc->data.len);
    if (rc < 0) {
        const char *why = keepf(l, "%s: schema %s does not parse: %s", topic, name, rl_error_last());
        if (c->kind == CH_TRIGGER)
            rl_buf_printf(&l->notes, "%s\n", why);
        else
            for (size_t i = 0; i < c->npaths; i++)
                field_missing(l, c->vehicle, fields[i], why);
        if (fields && c->kind != CH_TRIGGER)
            field_missing(l, c->vehicle, topic_field, why);
        c->kind = CH_IGNORE;
        return RL_OK;
    }
    const char *const *names = c->kind == CH_CMD ? cmd_names : paths;
    if ((rc = rl_msg_extract_compile(&c->ex, c->def, paths, c->npaths)) < 0)
        return rc;
    bool points = true;
    for (size_t i = 0; i < c->npaths; i++) {
        c->have[i] = rl_msg_extract_status(c->ex, i, NULL) == RL_OK;
        if (!c->have[i]) {
            const char *why = keepf(l, "%s: schema %s has no field '%s'", topic, name, names[i]);
            if (c->kind == CH_TRIGGER) {
                rl_buf_printf(&l->notes, "%s\n", why);
                c->kind = CH_IGNORE;
                return RL_OK;
            }
            /* The command's create stamp is optional for the metrics: only topic_sanity
               reads it, through the valid-after/points fields' absence it is not judged. */
            if (!(c->kind == CH_CMD && i == 0))
                field_missing(l, c->vehicle, fields[i], why);
            if (c->kind == CH_CMD && i >= CMD_HEADER_PATHS)
                points = false;
        }
    }
    if (!points) { /* no points are read when one of their fields is missing */
        rl_msg_extract_free(c->ex);
        c->ex = NULL;
        c->npaths = CMD_HEADER_PATHS;
        if ((rc = rl_msg_extract_compile(&c->ex, c->def, paths, c->npaths)) < 0)
            return rc;
    }
    return RL_OK;
}

/* A stamp field (an integer, ns) as seconds since the provisional zero; NaN when the
 * schema lacks it, an error when this message does not hold it or it is not an integer. */
static int get_stamp(const eval_loaded *l, const chan_dec *c, size_t i, double *out)
{
    const rl_msg_field *f = &c->f[i];
    if (!c->have[i]) {
        *out = NAN;
        return RL_OK;
    }
    if (!f->present)
        return RL_ENOENT;
    rl_msg_kind k = f->value.kind;
    if (k == RL_MSG_UINT64 || k == RL_MSG_UINT32 || k == RL_MSG_UINT16 || k == RL_MSG_UINT8)
        *out = rel(l, (int64_t)f->value.v.u);
    else if (k == RL_MSG_INT64 || k == RL_MSG_INT32)
        *out = rel(l, f->value.v.i);
    else
        return RL_EINVAL;
    return RL_OK;
}

/* A number field; NaN when the schema lacks it, an error when this message does not hold
 * it or it is a string. */
static int get_f64(const chan_dec *c, size_t i, double *out)
{
    const rl_msg_field *f = &c->f[i];
    if (!c->have[i]) {
        *out = NAN;
        return RL_OK;
    }
    if (!f->present || f->value.kind == RL_MSG_STRING || f->value.kind == RL_MSG_WSTRING)
        return RL_EINVAL;
    *out = f->f;
    return RL_OK;
}

/* Counts one message of a topic, and the first that did not decode (`why`: NULL when it
 * did) with its index and log time. */
static void decode_count(eval_loaded *l, eval_decoding *d, const rl_mcap_message *m,
                         const char *why)
{
    if (why) {
        if (d->failed++ == 0) {
            d->first_index = d->messages;
            d->first_log_ns = (int64_t)m->log_time;
            d->first_error = keepf(l, "%s", why);
        }
    }
    d->messages++;
}

/* A state or observation message: its fields (the header stamp first, then numbers) are
 * appended to the topic's columns after the receive time; a message that does not decode
 * is counted instead. */
static int decode_samples(eval_loaded *l, chan_dec *c, const rl_mcap_message *m)
{
    eval_vehicle *v = &l->run.vehicles[c->vehicle];
    eval_states *s = &v->state;
    eval_observations *o = &v->obs;
    bool state = c->kind == CH_STATE;
    double **const state_cols[] = {&s->t, &s->stamp, &s->x, &s->y, &s->yaw, &s->speed, &s->accel};
    double **const obs_cols[] = {&o->t, &o->stamp, &o->x, &o->y, &o->yaw};
    double **const *cols = state ? state_cols : obs_cols;
    size_t *n = state ? &s->n : &o->n, nvals = c->npaths;
    double vals[MAX_PATHS];
    int erc = rl_msg_extract_run(c->ex, m->data.data, m->data.len, c->f, NULL, NULL);
    if (erc == RL_ENOMEM)
        return erc;
    const char *why = erc < 0 ? rl_error_last() : NULL;
    for (size_t i = 0; !why && i < nvals; i++)
        if ((i == 0 ? get_stamp(l, c, i, &vals[i]) : get_f64(c, i, &vals[i])) != RL_OK)
            why = i == 0 ? "header.create_stamp is missing or not an integer"
                         : "a pose/speed field is missing or not a number";
    decode_count(l, &v->decoding[state ? EVAL_TOPIC_STATE : EVAL_TOPIC_OBS], m, why);
    if (why)
        return RL_OK;
    int rc = grow_cols(cols, nvals + 1, state ? &l->cap_states[c->vehicle] : &l->cap_obs[c->vehicle],
                       *n + 1);
    if (rc < 0)
        return rc;
    (*cols[0])[*n] = rel(l, (int64_t)m->log_time);
    for (size_t i = 0; i < nvals; i++)
        (*cols[i + 1])[*n] = vals[i];
    (*n)++;
    return RL_OK;
}

/* Trajectory points: the extraction calls back after each element of trajectory_points
 * with its t/px/py/vx/vy (paths 2..6); a stamp that is not an integer, or a string where a
 * number belongs, is NaN. */
typedef struct points_visit {
    eval_loaded *l;
    size_t vehicle;
} points_visit;

static int on_point(void *ctx, size_t index, const rl_msg_field *f)
{
    (void)index;
    points_visit *pv = ctx;
    eval_commands *c = &pv->l->run.vehicles[pv->vehicle].cmd;
    int rc = rl_grow_array((void **)&c->points, &pv->l->cap_points[pv->vehicle], c->npoints + 1,
                           sizeof c->points[0], "trajectory points");
    if (rc < 0)
        return rc;
    eval_traj_point *p = &c->points[c->npoints++];
    *p = (eval_traj_point){NAN, f[3].f, f[4].f, f[5].f, f[6].f};
    rl_msg_kind k = f[2].value.kind;
    if (!f[2].present)
        return 0;
    if (k == RL_MSG_UINT64 || k == RL_MSG_UINT32)
        p->t = rel(pv->l, (int64_t)f[2].value.v.u);
    else if (k == RL_MSG_INT64 || k == RL_MSG_INT32)
        p->t = rel(pv->l, f[2].value.v.i);
    return 0;
}

static int decode_cmd(eval_loaded *l, chan_dec *c, const rl_mcap_message *m)
{
    eval_vehicle *v = &l->run.vehicles[c->vehicle];
    eval_commands *s = &v->cmd;
    size_t first = s->npoints;
    points_visit pv = {l, c->vehicle};
    double stamps[2];
    int rc = rl_msg_extract_run(c->ex, m->data.data, m->data.len, c->f, on_point, &pv);
    if (rc == RL_ENOMEM || rc == RL_ERANGE)
        return rc;
    const char *why = rc < 0 ? rl_error_last() : NULL;
    if (!why && (get_stamp(l, c, 0, &stamps[0]) < 0 || get_stamp(l, c, 1, &stamps[1]) < 0))
        why = "header.create_stamp or header.valid_after_stamp is missing or not an integer";
    decode_count(l, &v->decoding[EVAL_TOPIC_CMD], m, why);
    if (why) {
        s->npoints = first;
        return RL_OK;
    }
    size_t cap = l->cap_cmd[c->vehicle];
    rc = rl_grow_array((void **)&s->cmd, &cap, s->n + 1, sizeof s->cmd[0], "commands");
    l->cap_cmd[c->vehicle] = cap;
    if (rc < 0)
        return rc;
    s->cmd[s->n++] = (eval_command){rel(l, (int64_t)m->log_time), stamps[0], stamps[1], first,
                                    s->npoints - first};
    /* The first command tells how many points the announced ones will take. */
    size_t per = s->npoints - first;
    if (s->n == 1 && c->expected > 1 && per > 0 && per <= SIZE_MAX / c->expected) {
        size_t more = take_budget(l, per * (c->expected - 1));
        if (rl_grow_array((void **)&s->points, &l->cap_points[c->vehicle], s->npoints + more,
                          sizeof s->points[0], "trajectory points") < 0)
            rl_error_clear();
    }
    return RL_OK;
}

static void decode_trigger(eval_loaded *l, chan_dec *c, const rl_mcap_message *m)
{
    if (rl_msg_extract_run(c->ex, m->data.data, m->data.len, c->f, NULL, NULL) < 0)
        return;
    const rl_msg_field *kind = &c->f[0], *stamp = &c->f[1];
    if (!kind->present || !stamp->present || kind->value.kind == RL_MSG_STRING ||
        kind->value.kind == RL_MSG_WSTRING ||
        (stamp->value.kind != RL_MSG_UINT64 && stamp->value.kind != RL_MSG_INT64))
        return;
    double k = kind->f;
    int64_t ns = stamp->value.kind == RL_MSG_UINT64 ? (int64_t)stamp->value.v.u : stamp->value.v.i;
    if (k == 1 && !l->have_start) {
        l->have_start = true;
        l->start_ns = ns;
    } else if (k == 2 && !l->have_stop) {
        l->have_stop = true;
        l->stop_ns = ns;
    }
}

static int classify(eval_loaded *l, chan_dec *c, const char *topic)
{
    if (strcmp(topic, "rt/lab/system_trigger") == 0) {
        c->kind = CH_TRIGGER;
        return RL_OK;
    }
    int id, end = 0;
    char rest[32];
    if (sscanf(topic, "rt/vehicle/%d/%31[a-z_]%n", &id, rest, &end) != 2 || topic[end] ||
        id < 0)
        return RL_OK;
    if (strcmp(rest, "state") == 0)
        c->kind = CH_STATE;
    else if (strcmp(rest, "observation") == 0)
        c->kind = CH_OBS;
    else if (strcmp(rest, "command_trajectory") == 0)
        c->kind = CH_CMD;
    else
        return RL_OK;
    return find_vehicle(l, id, &c->vehicle);
}

static void chan_free(chan_dec *c)
{
    if (!c)
        return;
    rl_msg_extract_free(c->ex);
    rl_msgdef_free(c->def);
    free(c);
}

static rl_mcap_schema *schema_find(rl_mcap_schema *schemas, size_t n, uint16_t id)
{
    for (size_t i = 0; i < n; i++)
        if (schemas[i].id == id)
            return &schemas[i];
    return NULL;
}

/* Message counts per channel from the bag's Statistics record, found through the footer:
 * a hint that sizes each vehicle's columns at once instead of growing them (0 with no
 * summary; a wrong count costs only growth or slack, never a result). */
typedef struct chan_count {
    uint16_t id;
    uint64_t n;
} chan_count;

static size_t summary_counts(rl_mcap_reader *bag, chan_count **out)
{
    size_t len, n = 0;
    const uint8_t *data = rl_mcap_reader_data(bag, &len);
    rl_mcap_statistics st;
    *out = NULL;
    if (rl_mcap_summary_statistics(data, len, 1, &st) != 1) {
        rl_error_clear(); /* no usable summary: the columns grow as they fill */
        return 0;
    }
    rl_mcap_bytes m = st.channel_message_counts;
    chan_count *c = malloc((m.len / 10 + 1) * sizeof *c); /* 10 bytes an entry */
    size_t pos = 0;
    while (c && rl_mcap_map_u16u64_next(m, &pos, &c[n].id, &c[n].n) == 1)
        n++;
    *out = c;
    return n;
}

/* Sizes the columns a channel fills for the count its statistics announce, within the
 * budget (one value per 16 bytes of bag, where a message takes more), so a false count
 * allocates little. */
static int presize(eval_loaded *l, chan_dec *c, const chan_count *counts, size_t ncounts,
                   uint16_t id)
{
    for (size_t i = 0; i < ncounts && !c->expected; i++)
        if (counts[i].id == id)
            c->expected = take_budget(l, counts[i].n < SIZE_MAX ? (size_t)counts[i].n : SIZE_MAX);
    if (!c->expected)
        return RL_OK;
    eval_vehicle *v = &l->run.vehicles[c->vehicle];
    if (c->kind == CH_STATE || c->kind == CH_OBS) {
        eval_states *s = &v->state;
        eval_observations *o = &v->obs;
        double **const state_cols[] = {&s->t,   &s->stamp, &s->x,    &s->y,
                                       &s->yaw, &s->speed, &s->accel};
        double **const obs_cols[] = {&o->t, &o->stamp, &o->x, &o->y, &o->yaw};
        bool state = c->kind == CH_STATE;
        return grow_cols(state ? state_cols : obs_cols, c->npaths + 1,
                         state ? &l->cap_states[c->vehicle] : &l->cap_obs[c->vehicle],
                         (state ? s->n : o->n) + c->expected);
    }
    if (c->kind == CH_CMD)
        return rl_grow_array((void **)&v->cmd.cmd, &l->cap_cmd[c->vehicle],
                             v->cmd.n + c->expected, sizeof v->cmd.cmd[0], "commands");
    return RL_OK;
}

/* Reads every message the bag holds up to its end or first damage (`path` NULL: the
 * `len` bytes at `mem`). */
static int read_bag(eval_loaded *l, const char *path, const void *mem, size_t len)
{
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    ro.max_chunk_size = MAX_CHUNK_BYTES;
    ro.decompress_ahead = 1; /* decompression on another core while this one decodes */
    rl_mcap_reader *r;
    int rc = path ? rl_mcap_reader_open(&r, path, &ro) : rl_mcap_reader_open_mem(&r, mem, len, &ro);
    if (rc < 0)
        return rl_error_prefix(rc, "bag");
    /* Channels by id through a slot table (id -> 1 + index); schemas, few, by search. */
    uint32_t *slot = calloc(65536, sizeof *slot);
    chan_dec **chans = NULL;
    rl_mcap_schema *schemas = NULL;
    size_t nchans = 0, cap_chans = 0, nschemas = 0, cap_schemas = 0;
    bool seen[3][MAX_VEHICLES] = {{0}};
    size_t bag_len;
    rl_mcap_reader_data(r, &bag_len);
    l->presize_budget = bag_len / 16;
    chan_count *counts;
    size_t ncounts = summary_counts(r, &counts);
    if (!slot) {
        rc = rl_error_set(RL_ENOMEM, "evaluation: out of memory");
        goto out;
    }
    rl_mcap_record rec;
    for (;;) {
        rc = rl_mcap_reader_next(r, &rec);
        if (rc == 0)
            break;
        if (rc < 0) {
            if (rc == RL_ENOMEM)
                goto out;
            rl_buf_printf(&l->notes, "The bag ends early (%s): evaluated the messages before.\n",
                          rl_error_last());
            rc = RL_OK;
            break;
        }
        if (rec.opcode == RL_MCAP_OP_SCHEMA) {
            /* Copied: a schema inside a chunk lives only until the next chunk. */
            rl_mcap_schema *sc = schema_find(schemas, nschemas, rec.u.schema.id);
            if (!sc) {
                if ((rc = rl_grow_array((void **)&schemas, &cap_schemas, nschemas + 1,
                                        sizeof *schemas, "schemas")) < 0)
                    goto out;
                sc = &schemas[nschemas++];
                memset(sc, 0, sizeof *sc);
            }
            free((void *)sc->data.data);
            *sc = rec.u.schema;
            size_t n = sc->name.len + sc->encoding.len + sc->data.len;
            uint8_t *copy = malloc(n + 1);
            if (!copy) {
                memset(sc, 0, sizeof *sc);
                rc = rl_error_set(RL_ENOMEM, "evaluation: out of memory");
                goto out;
            }
            memcpy(copy, rec.u.schema.data.data, sc->data.len);
            memcpy(copy + sc->data.len, rec.u.schema.name.data, sc->name.len);
            memcpy(copy + sc->data.len + sc->name.len, rec.u.schema.encoding.data, sc->encoding.len);
            sc->data.data = copy;
            sc->name.data = copy + sc->data.len;
            sc->encoding.data = copy + sc->data.len + sc->name.len;
        } else if (rec.opcode == RL_MCAP_OP_CHANNEL && !slot[rec.u.channel.id]) {
            if ((rc = rl_grow_array((void **)&chans, &cap_chans, nchans + 1, sizeof *chans,
                                    "channels")) < 0)
                goto out;
            chan_dec *c = calloc(1, sizeof *c);
            char topic[512];
            if (!c) {
                rc = rl_error_set(RL_ENOMEM, "evaluation: out of memory");
                goto out;
            }
            chans[nchans++] = c;
            slot[rec.u.channel.id] = (uint32_t)nchans;
            snprintf(topic, sizeof topic, "%.*s", (int)rec.u.channel.topic.len,
                     (const char *)rec.u.channel.topic.data);
            if ((rc = classify(l, c, topic)) < 0)
                goto out;
            if (c->kind == CH_IGNORE)
                continue;
            if (c->kind != CH_TRIGGER)
                seen[c->kind - CH_STATE][c->vehicle] = true;
            const rl_mcap_schema *sc = rec.u.channel.schema_id
                                           ? schema_find(schemas, nschemas, rec.u.channel.schema_id)
                                           : NULL;
            if (!sc) {
                rl_buf_printf(&l->notes, "%s: channel without a schema: not decoded.\n", topic);
                c->kind = CH_IGNORE;
                continue;
            }
            rl_mcap_bytes menc = rec.u.channel.message_encoding;
            if (!rl_msg_codec_find_bytes(sc->encoding.data, sc->encoding.len, menc.data,
                                         menc.len)) {
                refuse_channel(l, c, topic, rl_error_last());
                continue;
            }
            if ((rc = channel_setup(l, c, sc, topic)) < 0)
                goto out;
            if (presize(l, c, counts, ncounts, rec.u.channel.id) < 0)
                rl_error_clear(); /* only a hint: the columns grow instead */
        } else if (rec.opcode == RL_MCAP_OP_MESSAGE) {
            const rl_mcap_message *m = &rec.u.message;
            chan_dec *c = slot[m->channel_id] ? chans[slot[m->channel_id] - 1] : NULL;
            if (!l->have_first) {
                l->have_first = true;
                l->first_ns = l->last_ns = (int64_t)m->log_time;
                if (!l->have_base)
                    l->base_ns = l->first_ns;
                l->have_base = true;
            }
            if ((int64_t)m->log_time < l->first_ns)
                l->first_ns = (int64_t)m->log_time;
            if ((int64_t)m->log_time > l->last_ns)
                l->last_ns = (int64_t)m->log_time;
            if (!c)
                continue;
            switch (c->kind) {
            case CH_STATE:
            case CH_OBS:
                rc = decode_samples(l, c, m);
                break;
            case CH_CMD:
                rc = decode_cmd(l, c, m);
                break;
            case CH_TRIGGER:
                decode_trigger(l, c, m);
                break;
            default:
                break;
            }
            if (rc < 0)
                goto out;
        }
    }
    /* Topics that never appeared. */
    static const char *const names[] = {"state", "observation", "command_trajectory"};
    static const eval_field topic_fields[3][6] = {
        {EVAL_STATE_TOPIC, EVAL_STATE_STAMP, EVAL_STATE_POSE, EVAL_STATE_SPEED, EVAL_STATE_ACCEL,
         EVAL_STATE_TOPIC},
        {EVAL_OBS_TOPIC, EVAL_OBS_STAMP, EVAL_OBS_POSE, EVAL_OBS_TOPIC, EVAL_OBS_TOPIC,
         EVAL_OBS_TOPIC},
        {EVAL_CMD_TOPIC, EVAL_CMD_VALID_AFTER, EVAL_CMD_POINTS, EVAL_CMD_TOPIC, EVAL_CMD_TOPIC,
         EVAL_CMD_TOPIC}};
    for (size_t vi = 0; vi < l->run.nvehicles; vi++)
        for (int k = 0; k < 3; k++)
            if (!seen[k][vi]) {
                const char *why = keepf(l, "rt/vehicle/%d/%s is not in the recording",
                                        l->run.vehicles[vi].id, names[k]);
                for (int f = 0; f < 6; f++)
                    field_missing(l, vi, topic_fields[k][f], why);
            }
    rc = RL_OK;
out:
    for (size_t i = 0; i < nchans; i++)
        chan_free(chans[i]);
    free(chans);
    free(slot);
    free(counts);
    for (size_t i = 0; i < nschemas; i++)
        free((void *)schemas[i].data.data);
    free(schemas);
    rl_mcap_reader_close(r);
    return rc;
}

/* Moves every time from the provisional zero (first log time) to START. */
static void shift_times(eval_loaded *l, double d)
{
    for (size_t vi = 0; vi < l->run.nvehicles; vi++) {
        eval_vehicle *v = &l->run.vehicles[vi];
        for (size_t i = 0; i < v->state.n; i++)
            v->state.t[i] -= d, v->state.stamp[i] -= d;
        for (size_t i = 0; i < v->obs.n; i++)
            v->obs.t[i] -= d, v->obs.stamp[i] -= d;
        for (size_t i = 0; i < v->cmd.n; i++)
            v->cmd.cmd[i].t -= d, v->cmd.cmd[i].stamp -= d, v->cmd.cmd[i].valid_after -= d;
        for (size_t i = 0; i < v->cmd.npoints; i++)
            v->cmd.points[i].t -= d;
    }
}

/* Messages of one topic come in log-time order in a bag the recorder wrote; a bag that
   was not (or was merged) is put in order here with an insertion sort (cheap when sorted)
   of the parallel columns cols[0..ncols), ordered by cols[0] (the receive time). */
enum { MAX_SORT_COLS = 8 };

static void sort_by_time(double *const *cols, size_t ncols, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (cols[0][i] >= cols[0][i - 1])
            continue;
        double tmp[MAX_SORT_COLS];
        for (size_t c = 0; c < ncols; c++)
            tmp[c] = cols[c][i];
        size_t j = i;
        while (j > 0 && cols[0][j - 1] > tmp[0]) {
            for (size_t c = 0; c < ncols; c++)
                cols[c][j] = cols[c][j - 1];
            j--;
        }
        for (size_t c = 0; c < ncols; c++)
            cols[c][j] = tmp[c];
    }
}

/* The first failure's time since START, and whether the topic mostly failed to decode:
 * then the reason its checks are INSUFFICIENT, also a note on top. */
static void decoding_settle(eval_loaded *l, eval_vehicle *v, eval_topic k, int64_t zero)
{
    eval_decoding *d = &v->decoding[k];
    if (d->failed == 0)
        return;
    d->first_t = ns_diff(d->first_log_ns, zero);
    if ((double)d->failed > EVAL_UNDECODABLE_FRACTION * (double)d->messages) {
        d->undecodable = keepf(l,
                               "rt/vehicle/%d/%s: %zu of %zu messages did not decode (more than "
                               "%.0f %%), the first (message %zu, at %.3f s): %s",
                               v->id, eval_topic_name(k), d->failed, d->messages,
                               100 * EVAL_UNDECODABLE_FRACTION, d->first_index, d->first_t,
                               d->first_error ? d->first_error : "?");
        if (d->undecodable)
            rl_buf_printf(&l->notes, "%s: its checks are INSUFFICIENT.\n", d->undecodable);
    }
}

static void set_window(eval_loaded *l)
{
    int64_t zero = l->have_start ? l->start_ns : l->first_ns;
    l->run.start_ns = zero;
    shift_times(l, ns_diff(zero, l->base_ns));
    double last = ns_diff(l->last_ns, zero);
    if (l->have_start && l->have_stop && l->stop_ns >= l->start_ns) {
        l->run.window_start = 0;
        l->run.window_stop = ns_diff(l->stop_ns, zero);
    } else if (l->have_start) {
        l->run.window_start = 0;
        l->run.window_stop = last;
        l->run.window_note = "no STOP trigger: the window runs from START to the last message";
    } else {
        l->run.window_start = 0;
        l->run.window_stop = last;
        l->run.window_note = "no START trigger (rt/lab/system_trigger): the whole run is "
                             "evaluated, times are from its first message";
    }
    if (l->run.window_note)
        rl_buf_printf(&l->notes, "Window: %s.\n", l->run.window_note);
    for (size_t vi = 0; vi < l->run.nvehicles; vi++)
        for (int k = 0; k < EVAL_TOPIC_COUNT; k++)
            decoding_settle(l, &l->run.vehicles[vi], (eval_topic)k, zero);
    for (size_t vi = 0; vi < l->run.nvehicles; vi++) {
        eval_states *s = &l->run.vehicles[vi].state;
        eval_observations *o = &l->run.vehicles[vi].obs;
        double *const states[] = {s->t, s->stamp, s->x, s->y, s->yaw, s->speed, s->accel};
        double *const obs[] = {o->t, o->stamp, o->x, o->y, o->yaw};
        sort_by_time(states, 7, s->n);
        sort_by_time(obs, 5, o->n);
    }
}

int eval_load(const char *dir, eval_loaded **out)
{
    return eval_load_with_map(dir, NULL, out);
}

int eval_load_with_map(const char *dir, const char *map_path, eval_loaded **out)
{
    *out = NULL;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return rl_error_set(RL_ENOENT, "%s: not a run directory", dir);
    eval_loaded *l = calloc(1, sizeof *l);
    if (!l)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory");
    l->run.dir = keep(l, strdup(dir));
    read_manifest(l, dir);
    char bag[PATH_MAX];
    int rc = find_bag(l, dir, bag, sizeof bag);
    if (rc == RL_OK)
        rc = map_path ? load_given_map(l, map_path) : load_map(l, dir);
    if (rc == RL_OK) {
        l->run.bag_path = keep(l, strdup(bag));
        rc = read_bag(l, bag, NULL, 0);
    }
    if (rc < 0) {
        eval_loaded_free(l);
        return rc;
    }
    set_window(l);
    *out = l;
    return RL_OK;
}

int eval_load_bag_mem(const void *data, size_t len, eval_loaded **out)
{
    *out = NULL;
    eval_loaded *l = calloc(1, sizeof *l);
    if (!l)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory");
    l->run.dir = l->run.bag_path = "(memory)";
    l->run.state = "UNKNOWN";
    l->run.state_reason = l->run.run_id = "";
    l->run.planned_duration = NAN;
    l->run.map_missing = "no map (bag from memory)";
    int rc = read_bag(l, NULL, data, len);
    if (rc < 0) {
        eval_loaded_free(l);
        return rc;
    }
    set_window(l);
    *out = l;
    return RL_OK;
}

const eval_run *eval_loaded_run(const eval_loaded *l)
{
    return &l->run;
}

const char *eval_loaded_notes(const eval_loaded *l)
{
    return l->notes.data ? l->notes.data : "";
}

void eval_loaded_free(eval_loaded *l)
{
    if (!l)
        return;
    for (size_t vi = 0; vi < l->run.nvehicles; vi++) {
        eval_vehicle *v = &l->run.vehicles[vi];
        free(v->state.t), free(v->state.stamp), free(v->state.x), free(v->state.y);
        free(v->state.yaw), free(v->state.speed), free(v->state.accel);
        free(v->obs.t), free(v->obs.stamp), free(v->obs.x), free(v->obs.y), free(v->obs.yaw);
        free(v->cmd.cmd), free(v->cmd.points);
    }
    free(l->run.vehicles);
    for (size_t i = 0; i < l->nstrings; i++)
        free(l->strings[i]);
    free(l->strings);
    rl_map_close(l->map);
    json_object_put(l->manifest);
    rl_buf_free(&l->notes);
    free(l);
}
