/* What did not decode, per topic of every vehicle (issue 29.8): nothing a run holds is
 * dropped silently, so every evaluation states, per topic, how many messages did not decode
 * and the first error (message index, log time), in summary.json, decoding.csv and the
 * report. The counts come from eval_load; the threshold that makes a topic's checks
 * INSUFFICIENT is EVAL_UNDECODABLE_FRACTION. */
#include "eval/eval_decoding.h"

#include "runlab/csv.h"
#include "runlab/error.h"
#include "runlab/fs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

void eval_decoding_json(rl_json_writer *j, const eval_run *run)
{
    rl_json_begin_array(j);
    for (size_t i = 0; i < run->nvehicles; i++)
        for (int k = 0; k < EVAL_TOPIC_COUNT; k++) {
            const eval_vehicle *v = &run->vehicles[i];
            const eval_decoding *d = &v->decoding[k];
            char topic[64];
            snprintf(topic, sizeof topic, "rt/vehicle/%d/%s", v->id, eval_topic_name((eval_topic)k));
            rl_json_begin_object(j);
            rl_json_key(j, "vehicle"), rl_json_int64(j, v->id);
            rl_json_key(j, "topic"), rl_json_string(j, topic);
            rl_json_key(j, "messages"), rl_json_int64(j, (int64_t)d->messages);
            rl_json_key(j, "failed"), rl_json_int64(j, (int64_t)d->failed);
            rl_json_key(j, "first_failure");
            if (d->failed) {
                rl_json_begin_object(j);
                rl_json_key(j, "index"), rl_json_int64(j, (int64_t)d->first_index);
                rl_json_key(j, "log_time_ns"), rl_json_int64(j, d->first_log_ns);
                rl_json_key(j, "t"), rl_json_double(j, d->first_t);
                rl_json_key(j, "error"), rl_json_string(j, d->first_error ? d->first_error : "");
                rl_json_end_object(j);
            } else
                rl_json_null(j);
            rl_json_key(j, "undecodable"), rl_json_bool(j, d->undecodable != NULL);
            rl_json_key(j, "refused");
            if (d->refused)
                rl_json_string(j, d->refused);
            else
                rl_json_null(j);
            rl_json_end_object(j);
        }
    rl_json_end_array(j);
}

/* The cells of one row (vehicle .. refused); `num` holds the numbers' text. */
static void row_cells(const eval_vehicle *v, eval_topic k, char num[5][32], char *topic,
                      size_t cap, const char *cells[9])
{
    const eval_decoding *d = &v->decoding[k];
    snprintf(topic, cap, "rt/vehicle/%d/%s", v->id, eval_topic_name(k));
    snprintf(num[0], 32, "%d", v->id);
    snprintf(num[1], 32, "%zu", d->messages);
    snprintf(num[2], 32, "%zu", d->failed);
    num[3][0] = num[4][0] = 0;
    if (d->failed) {
        snprintf(num[3], 32, "%zu", d->first_index);
        snprintf(num[4], 32, "%.3f", d->first_t);
    }
    cells[0] = num[0], cells[1] = topic, cells[2] = num[1], cells[3] = num[2];
    cells[4] = num[3], cells[5] = num[4];
    cells[6] = d->first_error ? d->first_error : "";
    cells[7] = d->undecodable ? "yes" : "no";
    cells[8] = d->refused ? d->refused : "";
}

static const char *const columns[9] = {"vehicle",      "topic",   "messages",
                                       "failed",       "first_index", "first_t",
                                       "first_error",  "undecodable", "refused"};

int eval_decoding_csv(const char *dir, const eval_run *run)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return rl_error_set(RL_ENOMEM, "decoding.csv: out of memory");
    rl_csv_writer *w;
    int rc = rl_csv_writer_new(&w, f, ',', false);
    if (rc == RL_OK) {
        rc = rl_csv_write_row(w, columns, 9);
        for (size_t i = 0; rc == RL_OK && i < run->nvehicles; i++)
            for (int k = 0; rc == RL_OK && k < EVAL_TOPIC_COUNT; k++) {
                char num[5][32], topic[64];
                const char *cells[9];
                row_cells(&run->vehicles[i], (eval_topic)k, num, topic, sizeof topic, cells);
                rc = rl_csv_write_row(w, cells, 9);
            }
        rl_csv_writer_free(w);
    }
    fclose(f);
    char path[PATH_MAX];
    if (rc == RL_OK)
        rc = rl_path_join(path, sizeof path, dir, "decoding.csv");
    if (rc == RL_OK)
        rc = rl_fs_write_atomic(path, text, len, 0644);
    free(text);
    return rc;
}

int eval_decoding_report(rl_report *r, const eval_run *run)
{
    size_t bad = 0;
    for (size_t i = 0; i < run->nvehicles; i++)
        for (int k = 0; k < EVAL_TOPIC_COUNT; k++)
            bad += run->vehicles[i].decoding[k].failed || run->vehicles[i].decoding[k].refused;
    if (bad == 0)
        return RL_OK; /* nothing to say beyond decoding.csv's zeros */
    int rc = rl_report_table_begin(r, "Messages that did not decode", columns, 9, 0);
    for (size_t i = 0; rc == RL_OK && i < run->nvehicles; i++)
        for (int k = 0; rc == RL_OK && k < EVAL_TOPIC_COUNT; k++) {
            const eval_decoding *d = &run->vehicles[i].decoding[k];
            if (!d->failed && !d->refused)
                continue;
            char num[5][32], topic[64];
            const char *cells[9];
            row_cells(&run->vehicles[i], (eval_topic)k, num, topic, sizeof topic, cells);
            rc = rl_report_table_row(r, cells);
        }
    return rc == RL_OK ? rl_report_table_end(r) : rc;
}
