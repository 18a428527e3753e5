/* The evaluation's configuration: the built-in default.yaml (embedded at build time) merged
 * with a user's --config file section by section (a key given replaces the default; nested
 * maps merge; unknown metrics and keys are refused with their path), and the choice of
 * metrics from --metrics. */
#include "eval/eval_config.h"

#include "runlab/error.h"
#include "runlab/yaml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char rl_eval_default_yaml[]; /* generated from src/eval/default.yaml */

enum { MAX_CONFIG_BYTES = 1 << 20 };

const char *rl_eval_default_config(void)
{
    return rl_eval_default_yaml;
}

size_t rl_eval_metric_count(void)
{
    return eval_metric_total;
}

const char *rl_eval_metric_name(size_t i)
{
    return i < eval_metric_total ? eval_metrics[i].name : NULL;
}

const char *rl_eval_metric_summary(size_t i)
{
    return i < eval_metric_total ? eval_metrics[i].summary : NULL;
}

/* Merges `over` into `base` (both objects): keys of `base` only, objects merged
 * recursively, a default of null takes any value, other values replaced when the type
 * fits (an integer where a number is expected too). `where` is the dotted path so far. */
static int merge(json_object *base, json_object *over, const char *file, const char *where)
{
    json_object_object_foreach(over, key, val)
    {
        char path[512];
        snprintf(path, sizeof path, "%s.%s", where, key);
        json_object *def;
        if (!json_object_object_get_ex(base, key, &def))
            return rl_error_set(RL_EINVAL, "%s: %s: unknown key", file, path);
        json_type dt = def ? json_object_get_type(def) : json_type_null;
        json_type vt = val ? json_object_get_type(val) : json_type_null;
        if (dt == json_type_object) {
            if (vt != json_type_object)
                return rl_error_set(RL_EINVAL, "%s: %s: expected a map, found a %s", file, path,
                                    json_type_to_name(vt));
            int rc = merge(def, val, file, path);
            if (rc < 0)
                return rc;
            continue;
        }
        bool numeric = (dt == json_type_double || dt == json_type_int) &&
                       (vt == json_type_double || vt == json_type_int);
        if (dt != json_type_null && vt != json_type_null && dt != vt && !numeric)
            return rl_error_set(RL_EINVAL, "%s: %s: expected a %s, found a %s", file, path,
                                json_type_to_name(dt), json_type_to_name(vt));
        /* A number stays a number even when given as an integer ("3" for 3.0). */
        json_object *copy = NULL;
        if (val && json_object_deep_copy(val, &copy, NULL) != 0)
            return rl_error_set(RL_ENOMEM, "%s: out of memory", file);
        json_object_object_add(base, key, copy);
    }
    return RL_OK;
}

int eval_config_build(const char *config_path, json_object **out)
{
    *out = NULL;
    json_object *cfg;
    int rc = rl_yaml_parse(rl_eval_default_yaml, strlen(rl_eval_default_yaml), "default.yaml",
                           &cfg);
    if (rc < 0)
        return rl_error_prefix(rc, "built-in default.yaml");
    if (config_path) {
        json_object *over;
        rc = rl_yaml_read_file(config_path, MAX_CONFIG_BYTES, &over);
        if (rc < 0) {
            json_object_put(cfg);
            return rc;
        }
        if (over && !json_object_is_type(over, json_type_object)) {
            json_object_put(over);
            json_object_put(cfg);
            return rl_error_set(RL_EINVAL, "%s: expected a map of metric sections", config_path);
        }
        if (over) {
            json_object_object_foreach(over, key, val)
            {
                json_object *def;
                if (!json_object_object_get_ex(cfg, key, &def)) {
                    rc = rl_error_set(RL_EINVAL, "%s: %s: unknown metric", config_path, key);
                    break;
                }
                if (!val || !json_object_is_type(val, json_type_object)) {
                    rc = rl_error_set(RL_EINVAL, "%s: %s: expected a map of settings",
                                      config_path, key);
                    break;
                }
                if ((rc = merge(def, val, config_path, key)) < 0)
                    break;
            }
            json_object_put(over);
        }
        if (rc < 0) {
            json_object_put(cfg);
            return rc;
        }
    }
    *out = cfg;
    return RL_OK;
}

int eval_config_select(const char *list, bool *chosen)
{
    for (size_t i = 0; i < eval_metric_total; i++)
        chosen[i] = list == NULL;
    if (!list)
        return RL_OK;
    const char *p = list;
    size_t count = 0;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0)
            return rl_error_set(RL_EINVAL, "--metrics '%s': empty metric name", list);
        size_t i = 0;
        while (i < eval_metric_total &&
               !(strlen(eval_metrics[i].name) == n && strncmp(eval_metrics[i].name, p, n) == 0))
            i++;
        if (i == eval_metric_total) {
            char known[512] = "";
            for (size_t k = 0; k < eval_metric_total; k++) {
                strncat(known, k ? ", " : "", sizeof known - strlen(known) - 1);
                strncat(known, eval_metrics[k].name, sizeof known - strlen(known) - 1);
            }
            return rl_error_set(RL_EINVAL, "--metrics: unknown metric '%.*s' (known: %s)",
                                (int)n, p, known);
        }
        chosen[i] = true;
        count++;
        if (!end)
            break;
        p = end + 1;
    }
    return RL_OK;
}
