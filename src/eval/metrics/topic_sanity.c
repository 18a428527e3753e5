/* Metric topic_sanity: for each expected topic of each vehicle (settings.topics: state,
 * observation, command_trajectory), inside START..STOP: message count, rate against the
 * expected rate, largest gap between messages (window edges included, so a topic that
 * stops early is caught), header stamps monotonic, and the offset between header stamp
 * and receive time. A topic with a failing check gets the figure topic_<name> (rate in
 * bins, gaps, stamp offsets over time with the limits), linked to its checks. */
#include "eval/metrics/metrics.h"

#include "runlab/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct topic_settings {
    bool required, check_stamps;
    double rate_hz, max_gap, max_stamp_offset;
    double resolution; /* the metric's, s: gaps and stamp offsets */
} topic_settings;

/* One topic's receive times and header stamps inside the window. */
typedef struct topic_data {
    const char *name; /* "state", ... */
    char topic[64];   /* "rt/vehicle/1/state" */
    const char *missing_topic, *missing_stamp;
    const double *t, *stamp;
    size_t n;
} topic_data;

/* The check's name: the topic's kind and what is checked ("state rate"). */
static const char *cname(const topic_data *d, const char *what)
{
    static _Thread_local char buf[96];
    snprintf(buf, sizeof buf, "%s %s", d->name, what);
    return buf;
}

static int read_topic_settings(eval_ctx *ctx, const char *name, topic_settings *out)
{
    json_object *topics, *t;
    if (rl_json_get_object(ctx->settings, "topics", &topics) != RL_OK ||
        rl_json_get_object(topics, name, &t) != RL_OK)
        return rl_error_set(RL_EINVAL, "configuration: topic_sanity.topics.%s: missing or not a map",
                            name);
    if (rl_json_get_bool(t, "required", &out->required) != RL_OK ||
        rl_json_get_bool(t, "check_stamps", &out->check_stamps) != RL_OK ||
        rl_json_get_double(t, "rate_hz", &out->rate_hz) != RL_OK ||
        rl_json_get_double(t, "max_gap", &out->max_gap) != RL_OK ||
        rl_json_get_double(t, "max_stamp_offset", &out->max_stamp_offset) != RL_OK)
        return rl_error_prefix(RL_EINVAL, "configuration: topic_sanity.topics.%s", name);
    return RL_OK;
}

static int check_gap(eval_ctx *ctx, int vid, const topic_data *d, const topic_settings *s,
                     double w0, double w1)
{
    eval_intervals iv = {0};
    double largest = 0, prev = w0;
    int rc = RL_OK;
    for (size_t i = 0; i <= d->n && rc == RL_OK; i++) {
        double next = i < d->n ? d->t[i] : w1;
        double gap = next - prev;
        if (gap > largest)
            largest = gap;
        if (eval_over_limit(gap, s->max_gap, s->resolution))
            rc = eval_intervals_add(&iv, prev, next);
        prev = next;
    }
    if (rc == RL_OK) {
        if (iv.n)
            rc = eval_check_add(ctx, cname(d, "largest gap"), &vid, 1, RL_EVAL_FAIL, largest, s->max_gap, "s",
                                &iv, "%s: %zu gap(s) over %.3g s, the largest %.3f s, first %.3f..%.3f s",
                                d->topic, iv.n, s->max_gap, largest, iv.iv[0][0], iv.iv[0][1]);
        else
            rc = eval_check_add(ctx, cname(d, "largest gap"), &vid, 1, RL_EVAL_PASS, largest, s->max_gap, "s",
                                NULL, "%s: largest gap %.3f s", d->topic, largest);
    }
    eval_intervals_free(&iv);
    return rc;
}

static int check_stamps(eval_ctx *ctx, int vid, const topic_data *d, const topic_settings *s)
{
    if (d->missing_stamp) {
        int rc = eval_check_unavailable(ctx, cname(d, "stamps monotonic"), vid, d->missing_stamp);
        return rc < 0 ? rc : eval_check_unavailable(ctx, cname(d, "stamp offset"), vid, d->missing_stamp);
    }
    eval_intervals back = {0}, off = {0};
    size_t backwards = 0;
    double worst = 0;
    int rc = RL_OK;
    for (size_t i = 0; i < d->n && rc == RL_OK; i++) {
        if (i && d->stamp[i] < d->stamp[i - 1]) {
            backwards++;
            rc = eval_intervals_add(&back, d->t[i - 1], d->t[i]);
        }
        double o = fabs(d->t[i] - d->stamp[i]);
        if (o > worst)
            worst = o;
    }
    bool *over = rc == RL_OK && d->n ? malloc(d->n * sizeof *over) : NULL;
    if (rc == RL_OK && d->n && !over)
        rc = rl_error_set(RL_ENOMEM, "topic_sanity: out of memory");
    for (size_t i = 0; over && i < d->n; i++)
        over[i] = eval_over_limit(fabs(d->t[i] - d->stamp[i]), s->max_stamp_offset, s->resolution);
    if (rc == RL_OK)
        rc = eval_intervals_from_mask(&off, d->t, over, d->n, 0);
    free(over);
    if (rc == RL_OK)
        rc = eval_check_add(ctx, cname(d, "stamps monotonic"), &vid, 1,
                            backwards ? RL_EVAL_FAIL : RL_EVAL_PASS, (double)backwards, 0,
                            "messages", &back, "%s: header stamp went backwards %zu time(s)",
                            d->topic, backwards);
    if (rc == RL_OK) {
        if (off.n)
            rc = eval_check_add(ctx, cname(d, "stamp offset"), &vid, 1, RL_EVAL_FAIL, worst, s->max_stamp_offset,
                                "s", &off,
                                "%s: receive time - header stamp up to %.3f s (limit %.3g), "
                                "first %.3f..%.3f s",
                                d->topic, worst, s->max_stamp_offset, off.iv[0][0], off.iv[0][1]);
        else
            rc = eval_check_add(ctx, cname(d, "stamp offset"), &vid, 1, RL_EVAL_PASS, worst, s->max_stamp_offset,
                                "s", NULL, "%s: |receive time - header stamp| at most %.3f s",
                                d->topic, worst);
    }
    eval_intervals_free(&back);
    eval_intervals_free(&off);
    return rc;
}

static int judge_topic(eval_ctx *ctx, int vid, const topic_data *d, const topic_settings *s,
                       double min_samples, double tolerance)
{
    const eval_run *run = ctx->run;
    if (d->missing_topic) {
        if (!s->required)
            return eval_check_add(ctx, cname(d, "count"), &vid, 1, RL_EVAL_NA, NAN, NAN, NULL, NULL,
                                  "%s: not recorded (not required)", d->topic);
        return eval_check_add(ctx, cname(d, "count"), &vid, 1, RL_EVAL_FAIL, 0, min_samples, "messages", NULL,
                              "%s", d->missing_topic);
    }
    int rc;
    if (d->n == 0)
        return eval_check_add(ctx, cname(d, "count"), &vid, 1, RL_EVAL_FAIL, 0, min_samples, "messages",
                              NULL, "%s: no message inside the window", d->topic);
    if ((double)d->n < min_samples)
        return eval_check_add(ctx, cname(d, "count"), &vid, 1, RL_EVAL_INSUFFICIENT, (double)d->n,
                              min_samples, "messages", NULL,
                              "%s: %zu messages inside the window, at least %.0f needed",
                              d->topic, d->n, min_samples);
    if ((rc = eval_check_add(ctx, cname(d, "count"), &vid, 1, RL_EVAL_PASS, (double)d->n, min_samples,
                             "messages", NULL, "%s: %zu messages inside the window", d->topic,
                             d->n)) < 0)
        return rc;
    double span = run->window_stop - run->window_start;
    if (s->rate_hz > 0 && span > 0) {
        double rate = (double)d->n / span, need = (1 - tolerance) * s->rate_hz;
        eval_intervals whole = {0};
        bool low = rate < need;
        if (low && (rc = eval_intervals_add(&whole, run->window_start, run->window_stop)) < 0)
            return rc;
        rc = eval_check_add(ctx, cname(d, "rate"), &vid, 1, low ? RL_EVAL_FAIL : RL_EVAL_PASS, rate, need,
                            "Hz", &whole, "%s: %.2f Hz over the window, expected %.3g Hz (at least %.3g)",
                            d->topic, rate, s->rate_hz, need);
        eval_intervals_free(&whole);
        if (rc < 0)
            return rc;
    }
    if ((rc = check_gap(ctx, vid, d, s, run->window_start, run->window_stop)) < 0)
        return rc;
    return s->check_stamps ? check_stamps(ctx, vid, d, s) : RL_OK;
}

/* One vehicle's series of one topic for the figure (owned). */
typedef struct topic_series {
    double *rate_t, *rate; /* messages per second in bins */
    size_t nrate;
    double *gap_t, *gap; /* steps: each gap's length from its start (window edges included) */
    size_t ngap;
    double *off; /* receive time - header stamp at d->t, or NULL */
    size_t noff;
} topic_series;

static void topic_series_free(topic_series *s)
{
    free(s->rate_t);
    free(s->rate);
    free(s->gap_t);
    free(s->gap);
    free(s->off);
    memset(s, 0, sizeof *s);
}

/* Rate bins: 1 s, or longer so a bin holds 10 messages at the expected rate. */
static double rate_bin(const topic_settings *s)
{
    return s->rate_hz > 0 ? fmax(1.0, 10.0 / s->rate_hz) : 1.0;
}

static int topic_series_make(const eval_run *run, const topic_data *d, const topic_settings *ts,
                             topic_series *out)
{
    memset(out, 0, sizeof *out);
    double w0 = run->window_start, w1 = run->window_stop, bin = rate_bin(ts);
    size_t nb = w1 > w0 ? (size_t)ceil((w1 - w0) / bin) : 0;
    if (nb > 100000)
        nb = 100000;
    out->rate_t = malloc((nb + 1) * sizeof *out->rate_t);
    out->rate = calloc(nb + 1, sizeof *out->rate);
    out->gap_t = malloc((d->n + 2) * sizeof *out->gap_t);
    out->gap = malloc((d->n + 2) * sizeof *out->gap);
    bool offsets = ts->check_stamps && !d->missing_stamp && d->n;
    out->off = offsets ? malloc(d->n * sizeof *out->off) : NULL;
    if (!out->rate_t || !out->rate || !out->gap_t || !out->gap || (offsets && !out->off)) {
        topic_series_free(out);
        return rl_error_set(RL_ENOMEM, "topic_sanity: out of memory");
    }
    if (nb) {
        double width = (w1 - w0) / (double)nb;
        for (size_t i = 0; i < d->n; i++) {
            size_t b = (size_t)((d->t[i] - w0) / width);
            out->rate[b < nb ? b : nb - 1] += 1;
        }
        for (size_t b = 0; b < nb; b++) {
            out->rate_t[b] = w0 + (double)b * width;
            out->rate[b] /= width;
        }
        /* The step's last value holds to the window's end. */
        out->rate_t[nb] = w1;
        out->rate[nb] = out->rate[nb - 1];
        out->nrate = nb + 1;
    }
    /* Steps: each gap's length holds over the gap, so a stall is a plateau of its length. */
    double prev = w0;
    for (size_t i = 0; i <= d->n; i++) {
        double next = i < d->n ? d->t[i] : w1;
        out->gap_t[out->ngap] = prev;
        out->gap[out->ngap++] = next - prev;
        prev = next;
    }
    out->gap_t[out->ngap] = w1;
    out->gap[out->ngap] = out->gap[out->ngap - 1];
    out->ngap++;
    for (size_t i = 0; out->off && i < d->n; i++)
        out->off[i] = d->t[i] - d->stamp[i];
    out->noff = out->off ? d->n : 0;
    return RL_OK;
}

/* The figure "topic_<name>" of topic k: rate, gaps and stamp offsets of every vehicle with
 * their limits, linked to the topic's checks. */
static int topic_figure(eval_ctx *ctx, const char *name, const topic_data *d, size_t stride,
                        const topic_settings *ts, double tolerance)
{
    const eval_run *run = ctx->run;
    size_t nv = run->nvehicles;
    topic_series *ser = calloc(nv, sizeof *ser);
    eval_series_ref *refs = calloc(3 * nv, sizeof *refs);
    char(*labels)[32] = calloc(nv, sizeof *labels);
    int rc = ser && refs && labels ? RL_OK : rl_error_set(RL_ENOMEM, "topic_sanity: out of memory");
    size_t nr = 0, ng = 0, no = 0;
    eval_series_ref *rate = refs, *gap = refs + nv, *off = refs + 2 * nv;
    for (size_t v = 0; rc == RL_OK && v < nv; v++) {
        const topic_data *dv = &d[v * stride];
        if (dv->missing_topic || !dv->t)
            continue;
        int id = run->vehicles[v].id;
        snprintf(labels[v], sizeof labels[v], "vehicle %d", id);
        if ((rc = topic_series_make(run, dv, ts, &ser[v])) < 0)
            break;
        if (ser[v].nrate)
            rate[nr++] = (eval_series_ref){labels[v], ser[v].rate_t, ser[v].rate, ser[v].nrate, id,
                                           0};
        gap[ng++] = (eval_series_ref){labels[v], ser[v].gap_t, ser[v].gap, ser[v].ngap, id, 0};
        if (ser[v].noff)
            off[no++] = (eval_series_ref){labels[v], dv->t, ser[v].off, ser[v].noff, id, 0};
    }
    char title[96], rtitle[96], fig[48], caption[320];
    snprintf(title, sizeof title, "Topic %s: rate, gaps and stamps", name);
    snprintf(rtitle, sizeof rtitle, "Rate in %.3g s bins", rate_bin(ts));
    snprintf(fig, sizeof fig, "topic_%s", name);
    snprintf(caption, sizeof caption,
             "rt/vehicle/<id>/%s of every vehicle: messages per second in %.3g s bins (dashed: "
             "the lowest mean rate accepted over the window), each gap between messages over "
             "its length (window edges included; dashed: max_gap)%s",
             name, rate_bin(ts),
             no ? " and receive time - header stamp (dashed: +- max_stamp_offset)" : "");
    if (rc == RL_OK) {
        eval_panel_spec p[3] = {
            {rtitle, "rate", "Hz", rate, nr, NAN,
             ts->rate_hz > 0 ? (1 - tolerance) * ts->rate_hz : NAN, true},
            {"Gap between messages", "gap", "s", gap, ng, NAN, ts->max_gap, true},
            {"Receive time - header stamp", "offset", "s", off, no, -ts->max_stamp_offset,
             ts->max_stamp_offset, false}};
        rc = eval_figure_panels(ctx, fig, title, p, no ? 3 : 2, caption);
    }
    static const char *const what[] = {"count", "rate", "largest gap", "stamps monotonic",
                                       "stamp offset"};
    for (size_t i = 0; rc == RL_OK && i < sizeof what / sizeof what[0]; i++) {
        char check[96];
        snprintf(check, sizeof check, "%s %s", name, what[i]);
        rc = eval_check_link_figure(ctx, check, fig);
    }
    for (size_t v = 0; ser && v < nv; v++)
        topic_series_free(&ser[v]);
    free(ser);
    free(refs);
    free(labels);
    return rc;
}

int eval_metric_topic_sanity(eval_ctx *ctx)
{
    static const char *const names[] = {"state", "observation", "command_trajectory"};
    topic_settings ts[3];
    double min_samples, tolerance, resolution;
    int rc;
    if ((rc = eval_setting_f64(ctx, "min_samples", &min_samples)) < 0 ||
        (rc = eval_setting_resolution(ctx, &resolution)) < 0 ||
        (rc = eval_setting_f64(ctx, "rate_tolerance", &tolerance)) < 0)
        return rc;
    for (int k = 0; k < 3; k++) {
        if ((rc = read_topic_settings(ctx, names[k], &ts[k])) < 0)
            return rc;
        ts[k].resolution = resolution;
    }
    const eval_run *run = ctx->run;
    size_t nv = run->nvehicles;
    /* Kept for the figures: every vehicle's topics (d[3 v + k]) and command times. */
    topic_data *d = calloc(3 * (nv ? nv : 1), sizeof *d);
    double **cmd_times = calloc(2 * (nv ? nv : 1), sizeof *cmd_times);
    if (!d || !cmd_times) {
        free(d);
        free(cmd_times);
        return rl_error_set(RL_ENOMEM, "topic_sanity: out of memory");
    }
    for (size_t vi = 0; rc == RL_OK && vi < nv; vi++) {
        const eval_vehicle *v = &run->vehicles[vi];
        /* Commands are an array of structs: their times are gathered into arrays. */
        double *ct = NULL, *cs = NULL;
        if (v->cmd.n) {
            ct = cmd_times[2 * vi] = malloc(v->cmd.n * sizeof *ct);
            cs = cmd_times[2 * vi + 1] = malloc(v->cmd.n * sizeof *cs);
            if (!ct || !cs) {
                rc = rl_error_set(RL_ENOMEM, "topic_sanity: out of memory");
                break;
            }
        }
        bool cmd_stamps = v->cmd.n > 0;
        for (size_t i = 0; i < v->cmd.n; i++) {
            ct[i] = v->cmd.cmd[i].t;
            cs[i] = v->cmd.cmd[i].stamp;
            cmd_stamps = cmd_stamps && isfinite(cs[i]);
        }
        topic_data *dv = &d[3 * vi];
        dv[0] = (topic_data){names[0], "", v->missing[EVAL_STATE_TOPIC],
                             v->missing[EVAL_STATE_STAMP], v->state.t, v->state.stamp,
                             v->state.n};
        dv[1] = (topic_data){names[1], "", v->missing[EVAL_OBS_TOPIC], v->missing[EVAL_OBS_STAMP],
                             v->obs.t, v->obs.stamp, v->obs.n};
        dv[2] = (topic_data){names[2], "", v->missing[EVAL_CMD_TOPIC],
                             cmd_stamps ? NULL : "command_trajectory: no header.create_stamp", ct,
                             cs, v->cmd.n};
        for (int k = 0; k < 3 && rc == RL_OK; k++) {
            snprintf(dv[k].topic, sizeof dv[k].topic, "rt/vehicle/%d/%s", v->id, names[k]);
            /* Coverage is stated, not judged: this metric's own gap check judges gaps. */
            if ((rc = eval_coverage_begin(ctx, v, (eval_topic)k, dv[k].t,
                                          dv[k].t ? dv[k].n : 0, ts[k].max_gap, false)) < 0)
                break;
            size_t first;
            dv[k].n = dv[k].t ? eval_window(run, dv[k].t, dv[k].n, &first) : 0;
            if (dv[k].t) {
                dv[k].t += first;
                dv[k].stamp += first;
            }
            rc = judge_topic(ctx, v->id, &dv[k], &ts[k], min_samples, tolerance);
            eval_coverage_end(ctx);
        }
    }
    /* A topic's figure only when one of its checks fails: a healthy topic has nothing to
       show, and three more figures per run would bury the ones that matter. */
    for (int k = 0; rc == RL_OK && k < 3; k++) {
        char prefix[48];
        snprintf(prefix, sizeof prefix, "%s ", names[k]);
        if (nv && eval_check_any_failed(ctx, prefix))
            rc = topic_figure(ctx, names[k], d + k, 3, &ts[k], tolerance);
    }
    for (size_t i = 0; i < 2 * nv; i++)
        free(cmd_times[i]);
    free(cmd_times);
    free(d);
    return rc;
}
