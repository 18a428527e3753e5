/* Reading a run's manifest.json back (rl_record_manifest_read): the one reader of the file
 * record_dir.c writes, for the repair, the evaluation, the run list and the summary. It
 * checks the size and the JSON, and picks out the fields those callers use; the whole
 * document stays available for the rest. */
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/record.h"
#include "runlab/time.h"

#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A manifest lists every topic with its counters and QoS: even thousands of topics stay
 * far below this. */
enum { MANIFEST_MAX_BYTES = 64 << 20 };

static const char *str_at(json_object *o, const char *key)
{
    const char *s = NULL;
    return o && rl_json_get_string(o, key, &s) == RL_OK ? s : NULL;
}

static json_object *object_at(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && rl_json_get_object(o, key, &v) == RL_OK ? v : NULL;
}

static int64_t stamp_at(json_object *stamps, const char *key)
{
    const char *s = str_at(stamps, key);
    int64_t ns;
    return s && rl_time_parse_iso(s, &ns) == RL_OK ? ns : RL_RECORD_MANIFEST_NO_STAMP;
}

/* Absent keys and keys of another type are no errors here: their fields stay unset. */
static void pick_fields(rl_record_manifest *m)
{
    json_object *doc = m->doc;
    m->format = str_at(doc, "format");
    m->run_id = str_at(doc, "run_id");
    m->state = str_at(doc, "state");
    m->reason = str_at(object_at(doc, "result"), "reason");
    m->planner = str_at(doc, "planner");
    json_object *stamps = object_at(doc, "stamps");
    m->start = str_at(stamps, "start");
    m->start_ns = stamp_at(stamps, "start");
    m->stop_ns = stamp_at(stamps, "stop");
    double d;
    m->planned_duration_s = rl_json_get_double(doc, "planned_duration_s", &d) == RL_OK &&
                                    isfinite(d) && d > 0
                                ? d
                                : NAN;
    m->bag_file = str_at(object_at(doc, "bag"), "file");
    json_object *map = object_at(doc, "map");
    m->map_sha256 = str_at(map, "runtime_map_sha256");
    if (!m->map_sha256)
        m->map_sha256 = str_at(map, "sha256");
    int64_t pid;
    json_object *rec = object_at(doc, "recorder");
    m->recorder_pid = rec && rl_json_get_int64(rec, "pid", &pid) == RL_OK ? pid : 0;
}

/* The integers of "vehicles" (anything else in the array is skipped). */
static int pick_vehicles(rl_record_manifest *m, const char *path)
{
    json_object *arr = NULL;
    if (rl_json_get_array(m->doc, "vehicles", &arr) != RL_OK)
        return RL_OK;
    size_t n = json_object_array_length(arr);
    if (!n)
        return RL_OK;
    m->vehicles = calloc(n, sizeof *m->vehicles);
    if (!m->vehicles)
        return rl_error_set(RL_ENOMEM, "%s: out of memory for %zu vehicles", path, n);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        int64_t id = json_object_is_type(e, json_type_int) ? json_object_get_int64(e) : -1;
        if (json_object_is_type(e, json_type_int) && id >= INT_MIN && id <= INT_MAX)
            m->vehicles[m->vehicle_count++] = (int)id;
    }
    return RL_OK;
}

int rl_record_manifest_read(const char *run_dir, rl_record_manifest *out)
{
    memset(out, 0, sizeof *out);
    out->start_ns = out->stop_ns = RL_RECORD_MANIFEST_NO_STAMP;
    out->planned_duration_s = NAN;
    char path[PATH_MAX];
    int rc = rl_path_join(path, sizeof path, run_dir, "manifest.json");
    if (rc < 0)
        return rc;
    json_object *doc = NULL;
    if ((rc = rl_json_read_file(path, MANIFEST_MAX_BYTES, &doc)) < 0)
        return rc; /* the message names the file and what is wrong */
    if (!json_object_is_type(doc, json_type_object)) {
        json_object_put(doc);
        return rl_error_set(RL_EPARSE, "%s: not a JSON object", path);
    }
    out->doc = doc;
    pick_fields(out);
    if ((rc = pick_vehicles(out, path)) < 0) {
        rl_record_manifest_free(out);
        return rc;
    }
    return RL_OK;
}

void rl_record_manifest_free(rl_record_manifest *m)
{
    if (!m)
        return;
    json_object_put(m->doc);
    free(m->vehicles);
    memset(m, 0, sizeof *m);
    m->start_ns = m->stop_ns = RL_RECORD_MANIFEST_NO_STAMP;
    m->planned_duration_s = NAN;
}
