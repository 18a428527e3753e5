/* The report's account of an adaptive benchmark: why it stopped and the decision trail
 * (runs per planner, the statistic and the bound it had to reach at every look), read
 * from the manifest the engine wrote. */
#include "analysis/bench_report_adaptive.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"

#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char *str_of(json_object *o, const char *key, const char *dflt)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : dflt;
}

static double num_of(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : 0;
}

/* The pairs a ranking look left open, "RRT-PRM, ..." ("" when none). */
static void open_pairs(json_object *look, char *out, size_t cap)
{
    json_object *pairs;
    size_t len = 0;
    out[0] = '\0';
    if (!json_object_object_get_ex(look, "pairs", &pairs) ||
        !json_object_is_type(pairs, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(pairs) && len < cap; i++) {
        json_object *p = json_object_array_get_idx(pairs, i), *first;
        if (json_object_object_get_ex(p, "first", &first) && first)
            continue;
        len += (size_t)snprintf(out + len, cap - len, "%s%s-%s", len ? ", " : "",
                                str_of(p, "a", "?"), str_of(p, "b", "?"));
    }
}

int rl_bench_report_adaptive(rl_report *r, const char *dir)
{
    char path[PATH_MAX];
    json_object *m = NULL, *a, *looks;
    if (rl_path_join(path, sizeof path, dir, "manifest.json") < 0 ||
        rl_json_read_file(path, 16u << 20, &m) < 0) {
        rl_error_clear();
        return RL_OK;
    }
    if (!json_object_object_get_ex(m, "adaptive", &a) ||
        !json_object_object_get_ex(a, "looks", &looks) ||
        !json_object_is_type(looks, json_type_array)) {
        json_object_put(m);
        return RL_OK;
    }
    char buf[1024];
    int rc = rl_report_heading(r, 2, "Why the benchmark stopped");
    snprintf(buf, sizeof buf,
             "Adaptive benchmark (goal %s on %s, confidence %.4g, %.0f to %.0f runs per "
             "planner): %s. At each look the error rate 1 - confidence is split evenly over "
             "the looks; see docs/bench.md.",
             str_of(a, "goal", "?"), str_of(a, "attribute", "?"), num_of(a, "confidence"),
             num_of(a, "min_runs"), num_of(a, "max_runs"), str_of(a, "stopped", "?"));
    if (rc == RL_OK)
        rc = rl_report_paragraph(r, buf);
    bool ranking = strcmp(str_of(a, "goal", ""), "ranking") == 0;
    static const char *const hdr[] = {"look", "runs per planner", "statistic", "bound",
                                      "settled", "open"};
    if (rc == RL_OK)
        rc = rl_report_table_begin(r, ranking ? "Decision trail: statistic = Mann-Whitney p of "
                                                "the least certain pair, bound = its Holm "
                                                "threshold"
                                              : "Decision trail: statistic = the widest "
                                                "interval's half-width, bound = the width "
                                                "asked for",
                                   hdr, 6, 0);
    for (size_t i = 0; i < json_object_array_length(looks) && rc == RL_OK; i++) {
        json_object *l = json_object_array_get_idx(looks, i), *v;
        char cells[5][64], open[512] = "";
        snprintf(cells[0], sizeof cells[0], "%.0f", num_of(l, "look"));
        snprintf(cells[1], sizeof cells[1], "%.0f", num_of(l, "runs"));
        snprintf(cells[2], sizeof cells[2], "%.3g", num_of(l, "statistic"));
        snprintf(cells[3], sizeof cells[3], "%.3g", num_of(l, "bound"));
        bool settled = json_object_object_get_ex(l, "settled", &v) && json_object_get_boolean(v);
        snprintf(cells[4], sizeof cells[4], "%s", settled ? "yes" : "no");
        if (ranking)
            open_pairs(l, open, sizeof open);
        const char *row[6] = {cells[0], cells[1], cells[2], cells[3], cells[4], open};
        rc = rl_report_table_row(r, row);
    }
    if (rc == RL_OK)
        rc = rl_report_table_end(r);
    json_object_put(m);
    return rc;
}
