/* Figure records: the .yaml written beside a figure saying how it was made (command line,
 * inputs, UTC time, runlab version and git sha, host). One function serves every caller,
 * so records from the CLI, the demo and library users carry the same fields. */
#include "runlab/plot.h"

#include "runlab/error.h"
#include "runlab/provenance.h"
#include "runlab/time.h"
#include "runlab/yaml.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Adds the process's own command line (NUL-separated in /proc/self/cmdline). Read with
 * stdio: procfs files report size 0, so size-based whole-file readers see nothing. */
static int add_proc_cmdline(json_object *arr)
{
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f)
        return RL_OK;
    char *buf = malloc(65536);
    if (!buf) {
        fclose(f);
        return RL_ENOMEM;
    }
    size_t len = fread(buf, 1, 65536, f);
    fclose(f);
    int rc = RL_OK;
    for (size_t i = 0; i < len && rc == RL_OK;) {
        size_t n = strnlen(buf + i, len - i);
        if (json_object_array_add(arr, json_object_new_string_len(buf + i, (int)n)) != 0)
            rc = RL_ENOMEM;
        i += n + 1;
    }
    free(buf);
    return rc;
}

int rl_figure_record_write(const char *figure_path, const rl_figure_record *rec)
{
    if (!figure_path || !*figure_path)
        return rl_error_set(RL_EINVAL, "figure record: empty figure path");
    rl_figure_record none = {0};
    if (!rec)
        rec = &none;
    size_t plen = strlen(figure_path);
    const char *slash = strrchr(figure_path, '/');
    const char *base = slash ? slash + 1 : figure_path;
    const char *dot = strrchr(base, '.');
    size_t stem_len = dot && dot != base ? (size_t)(dot - figure_path) : plen;
    char *path = malloc(stem_len + 16);
    if (!path)
        return rl_error_set(RL_ENOMEM, "figure record: out of memory");
    memcpy(path, figure_path, stem_len);

    json_object *doc = json_object_new_object();
    json_object *files = json_object_new_array();
    json_object *cmd = json_object_new_array();
    json_object *inputs = json_object_new_array();
    int rc = doc && files && cmd && inputs ? RL_OK : RL_ENOMEM;

    /* Every format of this figure that exists now, so one record covers png+svg+pdf. */
    static const char *const exts[] = {".png", ".svg", ".pdf"};
    for (size_t i = 0; i < 3 && rc == RL_OK; i++) {
        memcpy(path + stem_len, exts[i], 5);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            const char *b = strrchr(path, '/');
            if (json_object_array_add(files, json_object_new_string(b ? b + 1 : path)) != 0)
                rc = RL_ENOMEM;
        }
    }
    if (rc == RL_OK) {
        if (rec->argc > 0 && rec->argv) {
            for (int i = 0; i < rec->argc && rc == RL_OK; i++)
                if (json_object_array_add(
                        cmd, json_object_new_string(rec->argv[i] ? rec->argv[i] : "")) != 0)
                    rc = RL_ENOMEM;
        } else {
            rc = add_proc_cmdline(cmd);
        }
    }
    for (size_t i = 0; i < rec->ninputs && rc == RL_OK; i++)
        if (json_object_array_add(
                inputs, json_object_new_string(rec->inputs[i] ? rec->inputs[i] : "")) != 0)
            rc = RL_ENOMEM;

    char now[RL_TIME_ISO_LEN];
    if (rc == RL_OK && rl_time_format_iso(rl_time_now_ns(), now, sizeof now) != RL_OK)
        snprintf(now, sizeof now, "unknown");
    rl_provenance prov;
    rl_provenance_collect(&prov);
    json_object *pj = rc == RL_OK ? rl_provenance_to_json(&prov) : NULL;
    if (rc == RL_OK && !pj)
        rc = RL_ENOMEM;
    if (rc == RL_OK) {
        json_object_object_add(doc, "figures", files);
        files = NULL;
        if (rec->description)
            json_object_object_add(doc, "description", json_object_new_string(rec->description));
        json_object_object_add(doc, "created_utc", json_object_new_string(now));
        json_object_object_add(doc, "command", cmd);
        cmd = NULL;
        json_object_object_add(doc, "inputs", inputs);
        inputs = NULL;
        json_object_object_add(doc, "runlab_version", json_object_new_string(prov.version));
        json_object_object_add(doc, "git_sha", json_object_new_string(prov.git_sha));
        json_object_object_add(doc, "git_dirty", json_object_new_boolean(prov.git_dirty));
        json_object_object_add(doc, "provenance", pj);
        memcpy(path + stem_len, ".yaml", 6);
        rc = rl_yaml_write_file(path, doc);
    } else {
        json_object_put(pj);
        rc = rl_error_set(RL_ENOMEM, "figure record: out of memory");
    }
    json_object_put(files);
    json_object_put(cmd);
    json_object_put(inputs);
    json_object_put(doc);
    free(path);
    return rc;
}
