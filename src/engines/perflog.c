/* Per-cycle performance logging (runlab/perflog.h): declaration of the columns, layers and
 * parameters, the run directory, one CSV row per planning cycle, map snapshots and the
 * episode's end, with the summary also written from a SIGINT/SIGTERM handler using only
 * async-signal-safe calls. The documents (fingerprint, manifest, params, summary) are
 * perflog_docs.c's; the formats are specified in docs/perflog.md. */
#include "engines/perflog_internal.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"
#include "runlab/log.h"
#include "runlab/number.h"
#include "runlab/provenance.h"
#include "runlab/time.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- small helpers --------------------------------------------------------------------- */

static bool is_ident(const char *s, size_t max, const char *extra)
{
    size_t n = 0;
    for (const char *p = s; *p; p++, n++) {
        unsigned char c = (unsigned char)*p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || (extra && strchr(extra, c) != NULL);
        if (!ok || n >= max)
            return false;
    }
    return n > 0;
}

static bool is_unit(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++, n++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x21 || c > 0x7e || c == ',' || c == '"' || c == '\\' || c == '\'' ||
            n + 1 >= UNIT_MAX)
            return false;
    }
    return n > 0;
}

/* Exact decimal seconds of an integer nanosecond count ("0.000123456"). */
static size_t fmt_ns(int64_t ns, char *buf, size_t cap)
{
    if (ns < 0)
        ns = 0;
    int n = snprintf(buf, cap, "%" PRId64 ".%09" PRId64, ns / 1000000000, ns % 1000000000);
    if (n < 0)
        return 0;
    size_t len = (size_t)n;
    while (len > 0 && buf[len - 1] == '0')
        len--;
    if (len > 0 && buf[len - 1] == '.')
        len--;
    buf[len] = '\0';
    return len;
}

static char *dup_or_null(const char *s)
{
    return (s && *s) ? strdup(s) : NULL;
}

/* ---- creation and declaration -------------------------------------------------------- */

void rl_perflog_config_init(rl_perflog_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->log_performance = true;
    cfg->cost_budget = INFINITY;
}

static int add_column(rl_perflog *pl, const char *full, rl_perflog_type type, const char *unit,
                      int parent_idx, int layer, int *id)
{
    if (pl->ncols >= MAX_COLUMNS)
        return rl_error_set(RL_ERANGE, "perflog: more than %d columns", MAX_COLUMNS);
    for (size_t i = 0; i < pl->ncols; i++)
        if (strcmp(pl->cols[i].name, full) == 0)
            return rl_error_set(RL_EEXIST, "perflog: column '%s' declared twice", full);
    if (pl->ncols == pl->capcols) {
        size_t cap = pl->capcols ? pl->capcols * 2 : 32;
        struct column *nc = realloc(pl->cols, cap * sizeof *nc);
        if (!nc)
            return rl_error_set(RL_ENOMEM, "perflog: out of memory");
        pl->cols = nc;
        pl->capcols = cap;
    }
    struct column *c = &pl->cols[pl->ncols];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", full);
    snprintf(c->unit, sizeof c->unit, "%s", unit);
    c->parent_idx = parent_idx;
    if (parent_idx >= 0)
        snprintf(c->parent, sizeof c->parent, "%s", pl->cols[parent_idx].name);
    c->type = type;
    c->layer = layer;
    c->std_total = -1;
    if (id)
        *id = (int)pl->ncols;
    pl->ncols++;
    return RL_OK;
}

int rl_perflog_new(rl_perflog **out, const rl_perflog_config *cfg)
{
    *out = NULL;
    if (!cfg)
        return rl_error_set(RL_EINVAL, "perflog: no configuration");
    const char *what[] = {"dataset", "scene", "planner"};
    const char *vals[] = {cfg->dataset, cfg->scene, cfg->planner};
    for (int i = 0; i < 3; i++) {
        if (!vals[i])
            return rl_error_set(RL_EINVAL, "perflog: %s is required", what[i]);
        if (rl_path_check_name(vals[i], what[i]) != RL_OK)
            return rl_error_prefix(RL_EINVAL, "perflog");
    }
    if (cfg->task && *cfg->task && rl_path_check_name(cfg->task, "task") != RL_OK)
        return rl_error_prefix(RL_EINVAL, "perflog");
    if (cfg->cost_unit && *cfg->cost_unit && !is_unit(cfg->cost_unit))
        return rl_error_set(RL_EINVAL,
                            "perflog: cost_unit '%s' is not 1..%d printable characters without "
                            "spaces, commas or quotes",
                            cfg->cost_unit, UNIT_MAX - 1);
    if (cfg->num_maps_to_save < 0 || cfg->num_maps_to_save > 99999)
        return rl_error_set(RL_ERANGE, "perflog: num_maps_to_save %d outside 0..99999",
                            cfg->num_maps_to_save);
    rl_perflog *pl = calloc(1, sizeof *pl);
    if (!pl)
        return rl_error_set(RL_ENOMEM, "perflog: out of memory");
    pl->root = dup_or_null(cfg->root);
    pl->task = dup_or_null(cfg->task);
    pl->dataset = strdup(cfg->dataset);
    pl->scene = strdup(cfg->scene);
    pl->planner = strdup(cfg->planner);
    snprintf(pl->cost_unit, sizeof pl->cost_unit, "%s",
             cfg->cost_unit && *cfg->cost_unit ? cfg->cost_unit : "none");
    for (int k = 0; k < STD_COUNT; k++)
        pl->std_col[k] = -1;
    pl->log = cfg->log_performance;
    pl->budget = (cfg->cost_budget > 0 && isfinite(cfg->cost_budget)) ? cfg->cost_budget : INFINITY;
    pl->seed = cfg->random_seed;
    pl->num_maps = cfg->num_maps_to_save;
    pl->last_map_cycle = -1;
    atomic_init(&pl->active, 0);
    int rc = RL_OK;
    if (!pl->dataset || !pl->scene || !pl->planner || (cfg->root && *cfg->root && !pl->root) ||
        (cfg->task && *cfg->task && !pl->task))
        rc = rl_error_set(RL_ENOMEM, "perflog: out of memory");
    if (rc == RL_OK)
        rc = add_column(pl, "CycleIndex", RL_COL_COUNTER, "none", -1, -1, NULL);
    if (rc == RL_OK)
        rc = add_column(pl, "ElapsedWallTimeSec", RL_COL_GAUGE, "s", -1, -1, NULL);
    if (rc != RL_OK) {
        rl_perflog_free(pl);
        return rc;
    }
    *out = pl;
    return RL_OK;
}

static int find_layer(const rl_perflog *pl, const char *name)
{
    for (size_t i = 0; i < pl->nlayers; i++)
        if (strcmp(pl->layers[i].name, name) == 0)
            return (int)i;
    return -1;
}

int rl_perflog_add_layer(rl_perflog *pl, const char *name, const char *kind)
{
    if (!pl || !name || !kind)
        return rl_error_set(RL_EINVAL, "perflog: add_layer needs a logger, name and kind");
    if (pl->state != ST_NEW)
        return rl_error_set(RL_ESTATE, "perflog: layer '%s' added after start", name);
    if (!is_ident(name, COL_NAME_MAX, "-"))
        return rl_error_set(RL_EINVAL,
                            "perflog: layer name '%s': use 1..%d letters, digits, '_' or '-'", name,
                            COL_NAME_MAX);
    if (!is_ident(kind, KIND_MAX - 1, "-."))
        return rl_error_set(RL_EINVAL, "perflog: layer kind '%s': use letters, digits, '_-.'",
                            kind);
    if (find_layer(pl, name) >= 0)
        return rl_error_set(RL_EEXIST, "perflog: layer '%s' added twice", name);
    if (pl->nlayers == pl->caplayers) {
        size_t cap = pl->caplayers ? pl->caplayers * 2 : 4;
        struct layer *nl = realloc(pl->layers, cap * sizeof *nl);
        if (!nl)
            return rl_error_set(RL_ENOMEM, "perflog: out of memory");
        pl->layers = nl;
        pl->caplayers = cap;
    }
    struct layer *l = &pl->layers[pl->nlayers++];
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "%s", name);
    snprintf(l->kind, sizeof l->kind, "%s", kind);
    l->gain_col = -1;
    return RL_OK;
}

int rl_perflog_declare(rl_perflog *pl, const char *layer, const char *name, rl_perflog_type type,
                       const char *unit, const char *parent, int *id)
{
    if (id)
        *id = -1;
    if (!pl || !name)
        return rl_error_set(RL_EINVAL, "perflog: declare needs a logger and a name");
    if (pl->state != ST_NEW)
        return rl_error_set(RL_ESTATE, "perflog: column '%s' declared after start", name);
    if (type < RL_COL_TIMER || type > RL_COL_GAUGE)
        return rl_error_set(RL_EINVAL, "perflog: column '%s': unknown type %d", name, (int)type);
    if (!is_ident(name, COL_NAME_MAX, NULL))
        return rl_error_set(RL_EINVAL,
                            "perflog: column name '%s': use 1..%d letters, digits or '_'", name,
                            COL_NAME_MAX);
    if (!unit || !*unit)
        unit = "none";
    if (!is_unit(unit))
        return rl_error_set(RL_EINVAL,
                            "perflog: column '%s': unit '%s' is not 1..%d printable "
                            "characters without spaces, commas or quotes",
                            name, unit, UNIT_MAX - 1);
    int li = -1;
    char full[FULL_NAME_MAX];
    if (layer) {
        li = find_layer(pl, layer);
        if (li < 0)
            return rl_error_set(RL_ENOENT, "perflog: column '%s': layer '%s' not added", name,
                                layer);
        snprintf(full, sizeof full, "%s.%s", layer, name);
    } else {
        snprintf(full, sizeof full, "%s", name);
    }
    int parent_idx = -1;
    if (parent && *parent) {
        if (type != RL_COL_TIMER)
            return rl_error_set(RL_EINVAL, "perflog: column '%s': only timers have a parent", full);
        for (size_t i = 0; i < pl->ncols; i++)
            if (strcmp(pl->cols[i].name, parent) == 0 && pl->cols[i].type == RL_COL_TIMER)
                parent_idx = (int)i;
        if (parent_idx < 0)
            return rl_error_set(
                RL_EINVAL, "perflog: column '%s': parent '%s' is not a timer declared before it",
                full, parent);
    }
    return add_column(pl, full, type, unit, parent_idx, li, id);
}

static int add_param(rl_perflog *pl, const char *key, struct param **out)
{
    *out = NULL;
    if (!pl || !key)
        return rl_error_set(RL_EINVAL, "perflog: parameter needs a logger and a key");
    if (pl->state != ST_NEW)
        return rl_error_set(RL_ESTATE, "perflog: parameter '%s' set after start", key);
    if (!is_ident(key, 128, ".-"))
        return rl_error_set(RL_EINVAL, "perflog: parameter key '%s': use letters, digits, '_.-'",
                            key);
    for (size_t i = 0; i < pl->nparams; i++)
        if (strcmp(pl->params[i].key, key) == 0) {
            free(pl->params[i].s);
            pl->params[i].s = NULL;
            *out = &pl->params[i];
            return RL_OK;
        }
    if (pl->nparams == pl->capparams) {
        size_t cap = pl->capparams ? pl->capparams * 2 : 16;
        struct param *np = realloc(pl->params, cap * sizeof *np);
        if (!np)
            return rl_error_set(RL_ENOMEM, "perflog: out of memory");
        pl->params = np;
        pl->capparams = cap;
    }
    struct param *p = &pl->params[pl->nparams];
    memset(p, 0, sizeof *p);
    p->key = strdup(key);
    if (!p->key)
        return rl_error_set(RL_ENOMEM, "perflog: out of memory");
    pl->nparams++;
    *out = p;
    return RL_OK;
}

int rl_perflog_param_f64(rl_perflog *pl, const char *key, double value)
{
    struct param *p;
    int rc = add_param(pl, key, &p);
    if (rc == RL_OK) {
        p->kind = PARAM_F64;
        p->f = value;
    }
    return rc;
}

int rl_perflog_param_i64(rl_perflog *pl, const char *key, int64_t value)
{
    struct param *p;
    int rc = add_param(pl, key, &p);
    if (rc == RL_OK) {
        p->kind = PARAM_I64;
        p->i = value;
    }
    return rc;
}

int rl_perflog_param_str(rl_perflog *pl, const char *key, const char *value)
{
    struct param *p;
    int rc = add_param(pl, key, &p);
    if (rc == RL_OK) {
        p->kind = PARAM_STR;
        p->s = strdup(value ? value : "");
        if (!p->s)
            rc = rl_error_set(RL_ENOMEM, "perflog: out of memory");
    }
    return rc;
}

/* ---- the schema at start ---------------------------------------------------------------- */

/* Copies the totals into the standard total columns perflog added (not into a planner's
 * own column of the same name). */
static void log_totals(rl_perflog *pl)
{
    const double v[STD_COUNT] = {pl->totals.total_cost, pl->totals.total_path_length,
                                 pl->totals.total_path_duration,
                                 (double)pl->totals.num_visited_nodes};
    for (int k = 0; k < STD_COUNT; k++)
        if (pl->std_col[k] >= 0 && pl->cols[pl->std_col[k]].std_total == k)
            pl->val[pl->std_col[k]] = v[k];
}

/* Completes the schema at start: adds each standard total the planner did not declare as
 * an agent column itself, and finds each layer's gain column (for the summary of a
 * planner that logs its gain there without rl_perflog_set_gain). Repeatable, so a start
 * that failed can be retried. */
static int complete_schema(rl_perflog *pl)
{
    static const char *const std_unit[STD_COUNT] = {NULL, "m", "s", "count"};
    for (int k = 0; k < STD_COUNT; k++) {
        pl->std_col[k] = -1;
        for (size_t i = 0; i < pl->ncols; i++)
            if (pl->cols[i].layer < 0 && strcmp(pl->cols[i].name, std_total_name[k]) == 0)
                pl->std_col[k] = (int)i;
        if (pl->std_col[k] >= 0)
            continue;
        int id;
        int rc = add_column(pl, std_total_name[k], RL_COL_TOTAL,
                            k == STD_COST ? pl->cost_unit : std_unit[k], -1, -1, &id);
        if (rc != RL_OK)
            return rc;
        pl->cols[id].std_total = k;
        pl->std_col[k] = id;
    }
    for (size_t l = 0; l < pl->nlayers; l++) {
        char full[FULL_NAME_MAX];
        snprintf(full, sizeof full, "%s.RealAccumulatedGain", pl->layers[l].name);
        pl->layers[l].gain_col = -1;
        for (size_t i = 0; i < pl->ncols; i++)
            if (pl->cols[i].layer == (int)l && strcmp(pl->cols[i].name, full) == 0 &&
                (pl->cols[i].type == RL_COL_TOTAL || pl->cols[i].type == RL_COL_GAUGE))
                pl->layers[l].gain_col = (int)i;
    }
    return RL_OK;
}

/* CSV order: CycleIndex, ElapsedWallTimeSec, the standard totals perflog added, the
 * agent's declared columns, then each layer's (layers sorted by name). */
static int build_order(rl_perflog *pl)
{
    free(pl->order);
    pl->order = calloc(pl->ncols, sizeof *pl->order);
    const struct layer **sl = rl_pl_sorted_layers(pl);
    if (!pl->order || !sl) {
        free(sl);
        return rl_error_set(RL_ENOMEM, "perflog: out of memory");
    }
    size_t k = 0;
    pl->order[k++] = 0; /* CycleIndex */
    pl->order[k++] = 1; /* ElapsedWallTimeSec */
    for (int t = 0; t < STD_COUNT; t++)
        if (pl->cols[pl->std_col[t]].std_total == t)
            pl->order[k++] = (size_t)pl->std_col[t];
    for (size_t i = 2; i < pl->ncols; i++)
        if (pl->cols[i].layer < 0 && pl->cols[i].std_total < 0)
            pl->order[k++] = i;
    for (size_t l = 0; l < pl->nlayers; l++) {
        int li = (int)(sl[l] - pl->layers);
        for (size_t i = 0; i < pl->ncols; i++)
            if (pl->cols[i].layer == li)
                pl->order[k++] = i;
    }
    free(sl);
    return RL_OK;
}

/* ---- signals ----------------------------------------------------------------------------
 * Process-wide by nature: a signal handler gets no context pointer, so the logger that
 * owns SIGINT/SIGTERM is a global. Only lock-free atomics and sig_atomic_t are shared. */

static _Atomic(rl_perflog *) g_sig_owner;
static volatile sig_atomic_t g_stop;
static volatile sig_atomic_t g_sig_flags;
static struct sigaction g_old_int, g_old_term;
static bool g_installed;

/* Re-renders the summary the handler would write and publishes it by flipping `active`.
 * Only when this logger owns the handlers: other loggers skip the cost. */
static void publish_summary(rl_perflog *pl, rl_end_reason reason)
{
    if (atomic_load(&g_sig_owner) != pl || !pl->sum[0])
        return;
    int next = 1 - atomic_load(&pl->active);
    pl->sum_len[next] = rl_pl_render_summary(pl, reason, pl->sum[next]);
    atomic_store(&pl->active, next);
}

/* Async-signal-safe: open/write/fsync/close/rename only, on strings prepared earlier. */
static void write_summary_from_handler(rl_perflog *pl)
{
    int idx = atomic_load(&pl->active);
    const char *p = pl->sum[idx];
    size_t left = pl->sum_len[idx];
    if (!p || left == 0)
        return;
    int fd = open(pl->sum_sig_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        p += w;
        left -= (size_t)w;
    }
    fsync(fd);
    close(fd);
    if (left == 0)
        rename(pl->sum_sig_tmp, pl->sum_path);
    else
        unlink(pl->sum_sig_tmp);
}

static void on_signal(int sig)
{
    int saved = errno;
    bool second = g_stop != 0;
    g_stop = 1;
    rl_perflog *pl = atomic_load(&g_sig_owner);
    if (pl)
        write_summary_from_handler(pl);
    if (second || (g_sig_flags & RL_PERFLOG_SIG_EXIT)) {
        /* Die as the program would have without us: the signal stays blocked until the
         * handler returns, then the restored disposition acts on it. */
        sigaction(sig, sig == SIGINT ? &g_old_int : &g_old_term, NULL);
        raise(sig);
    }
    errno = saved;
}

int rl_perflog_handle_signals(rl_perflog *pl, int flags)
{
    if (!pl || pl->state != ST_STARTED)
        return rl_error_set(RL_ESTATE, "perflog: signal handling needs a started episode");
    if (!pl->sum[0]) {
        for (int i = 0; i < 2; i++) {
            pl->sum[i] = calloc(1, pl->sum_cap);
            if (!pl->sum[i])
                return rl_error_set(RL_ENOMEM, "perflog: out of memory");
        }
    }
    atomic_store(&g_sig_owner, pl);
    publish_summary(pl, RL_END_STOPPED);
    g_sig_flags = flags;
    g_stop = 0;
    if (!g_installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaddset(&sa.sa_mask, SIGINT);
        sigaddset(&sa.sa_mask, SIGTERM);
        sa.sa_flags = SA_RESTART;
        if (sigaction(SIGINT, &sa, &g_old_int) != 0 || sigaction(SIGTERM, &sa, &g_old_term) != 0) {
            atomic_store(&g_sig_owner, NULL);
            return rl_error_set_errno(RL_EIO, errno, "perflog: sigaction");
        }
        g_installed = true;
    }
    return RL_OK;
}

void rl_perflog_release_signals(void)
{
    if (g_installed) {
        sigaction(SIGINT, &g_old_int, NULL);
        sigaction(SIGTERM, &g_old_term, NULL);
        g_installed = false;
    }
    atomic_store(&g_sig_owner, NULL);
}

bool rl_perflog_stop_requested(void)
{
    return g_stop != 0;
}

/* ---- the episode ------------------------------------------------------------------------- */

static int make_run_dir(rl_perflog *pl)
{
    char parent[PATH_MAX];
    const char *root = pl->root;
    if (!root)
        root = getenv("RUNLAB_DATA_ROOT");
    if (root && *root) {
        if (snprintf(parent, sizeof parent, "%s", root) >= (int)sizeof parent)
            return rl_error_set(RL_ERANGE, "perflog: data root too long");
    } else {
        const char *home = getenv("HOME");
        if (!home || !*home)
            return rl_error_set(RL_EINVAL, "perflog: no data root: set RUNLAB_DATA_ROOT or HOME");
        if (snprintf(parent, sizeof parent, "%s/runlab_data", home) >= (int)sizeof parent)
            return rl_error_set(RL_ERANGE, "perflog: data root too long");
    }
    const char *parts[] = {pl->task, pl->dataset, pl->scene, pl->planner};
    for (int i = 0; i < 4; i++) {
        if (!parts[i])
            continue;
        char next[PATH_MAX];
        int rc = rl_path_join(next, sizeof next, parent, parts[i]);
        if (rc != RL_OK)
            return rc;
        memcpy(parent, next, sizeof parent);
    }
    int rc = rl_fs_mkdirs(parent);
    if (rc != RL_OK)
        return rc;
    char stamp[RL_TIME_DIRSTAMP_LEN];
    rc = rl_time_format_dirstamp(rl_time_now_ns(), stamp, sizeof stamp);
    if (rc != RL_OK)
        return rc;
    return rl_fs_mkdir_new(parent, stamp, RL_MKDIR_ADD_SUFFIX, pl->run_dir, sizeof pl->run_dir);
}

static int open_csv(rl_perflog *pl)
{
    char path[PATH_MAX];
    int rc = rl_path_join(path, sizeof path, pl->run_dir, "performance_log.csv");
    if (rc != RL_OK)
        return rc;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return rl_error_set_errno(RL_EIO, errno, "perflog: create %s", path);
    pl->csv = fdopen(fd, "w");
    if (!pl->csv) {
        close(fd);
        return rl_error_set_errno(RL_EIO, errno, "perflog: fdopen %s", path);
    }
    for (size_t i = 0; i < pl->ncols; i++) {
        fputs(pl->cols[pl->order[i]].name, pl->csv);
        fputc(i + 1 < pl->ncols ? ',' : '\n', pl->csv);
    }
    if (fflush(pl->csv) != 0)
        return rl_error_set_errno(RL_EIO, errno, "perflog: write %s", path);
    /* A number is at most 24 bytes plus its comma. */
    pl->row_cap = pl->ncols * 32 + 16;
    pl->row = malloc(pl->row_cap);
    if (!pl->row)
        return rl_error_set(RL_ENOMEM, "perflog: out of memory");
    return RL_OK;
}

int rl_perflog_start(rl_perflog *pl)
{
    if (!pl)
        return rl_error_set(RL_EINVAL, "perflog: start needs a logger");
    if (pl->state != ST_NEW)
        return rl_error_set(RL_ESTATE, "perflog: episode already started");
    int rc = complete_schema(pl);
    if (rc == RL_OK)
        rc = build_order(pl);
    if (rc == RL_OK)
        rc = rl_pl_schema_fingerprint(pl);
    if (rc != RL_OK)
        return rc;
    free(pl->val);
    free(pl->acc_ns);
    free(pl->t0);
    pl->val = calloc(pl->ncols, sizeof *pl->val);
    pl->acc_ns = calloc(pl->ncols, sizeof *pl->acc_ns);
    pl->t0 = calloc(pl->ncols, sizeof *pl->t0);
    pl->sum_cap = 1024 + 4 * FULL_NAME_MAX + pl->nlayers * (COL_NAME_MAX + 48);
    if (!pl->val || !pl->acc_ns || !pl->t0)
        return rl_error_set(RL_ENOMEM, "perflog: out of memory");
    /* The added totals read nan until the planner first passes its totals. */
    for (int k = 0; k < STD_COUNT; k++)
        if (pl->cols[pl->std_col[k]].std_total == k)
            pl->val[pl->std_col[k]] = NAN;
    if (pl->totals_set)
        log_totals(pl);
    rc = make_run_dir(pl);
    if (rc != RL_OK)
        return rl_error_prefix(rc, "perflog: run directory");
    pl->start_mono = rl_mono_ns();
    rl_time_format_iso(rl_time_now_ns(), pl->start_utc, sizeof pl->start_utc);
    if (rl_path_join(pl->sum_path, sizeof pl->sum_path, pl->run_dir, "episode_summary.yaml") !=
            RL_OK ||
        rl_path_join(pl->sum_sig_tmp, sizeof pl->sum_sig_tmp, pl->run_dir,
                     ".episode_summary.yaml.sig") != RL_OK)
        return rl_error_set(RL_ERANGE, "perflog: run directory path too long");
    rc = rl_pl_write_manifest(pl);
    if (rc == RL_OK)
        rc = rl_pl_write_params(pl);
    if (rc == RL_OK && pl->log)
        rc = open_csv(pl);
    if (rc != RL_OK)
        return rc;
    pl->state = ST_STARTED;
    pl->recording = pl->log;
    return RL_OK;
}

const char *rl_perflog_run_dir(const rl_perflog *pl)
{
    return pl && pl->state != ST_NEW ? pl->run_dir : NULL;
}

const char *rl_perflog_fingerprint(const rl_perflog *pl)
{
    return pl && pl->state != ST_NEW ? pl->fingerprint : NULL;
}

/* The fast path: one predictable branch when logging is off. */
#define VALID(pl, id) ((pl) && (pl)->recording && (id) >= 0 && (size_t)(id) < (pl)->ncols)

void rl_perflog_timer_start(rl_perflog *pl, int id)
{
    if (VALID(pl, id) && pl->cols[id].type == RL_COL_TIMER)
        pl->t0[id] = rl_mono_ns();
}

void rl_perflog_timer_stop(rl_perflog *pl, int id)
{
    if (VALID(pl, id) && pl->t0[id] != 0) {
        /* One check per interval, at its end: the parent must be running and have
         * started no later than this timer. */
        int parent = pl->cols[id].parent_idx;
        if (parent >= 0 && (pl->t0[parent] == 0 || pl->t0[parent] > pl->t0[id]) &&
            pl->nesting_violations++ == 0)
            pl->first_violation_col = id;
        pl->acc_ns[id] += rl_mono_ns() - pl->t0[id];
        pl->t0[id] = 0;
    }
}

void rl_perflog_count(rl_perflog *pl, int id, int64_t n)
{
    if (VALID(pl, id))
        pl->val[id] += (double)n;
}

void rl_perflog_add(rl_perflog *pl, int id, double v)
{
    if (VALID(pl, id))
        pl->val[id] += v;
}

void rl_perflog_set(rl_perflog *pl, int id, double v)
{
    if (VALID(pl, id))
        pl->val[id] = v;
}

int rl_perflog_set_totals(rl_perflog *pl, const rl_episode_totals *totals)
{
    if (!pl || !totals)
        return rl_error_set(RL_EINVAL, "perflog: set_totals needs a logger and totals");
    pl->totals = *totals;
    pl->totals_set = true;
    if (pl->val)
        log_totals(pl);
    if (pl->state == ST_STARTED)
        publish_summary(pl, RL_END_STOPPED);
    return RL_OK;
}

int rl_perflog_set_gain(rl_perflog *pl, const char *layer, double gain)
{
    if (!pl || !layer)
        return rl_error_set(RL_EINVAL, "perflog: set_gain needs a logger and a layer");
    int li = find_layer(pl, layer);
    if (li < 0)
        return rl_error_set(RL_ENOENT, "perflog: no layer '%s'", layer);
    pl->layers[li].gain = gain;
    pl->layers[li].gain_set = true;
    if (pl->state == ST_STARTED)
        publish_summary(pl, RL_END_STOPPED);
    return RL_OK;
}

static int write_row(rl_perflog *pl)
{
    pl->val[0] = (double)pl->cycles;
    pl->val[1] = (double)(rl_mono_ns() - pl->start_mono) / 1e9;
    size_t len = 0;
    for (size_t i = 0; i < pl->ncols; i++) {
        size_t id = pl->order[i];
        char *p = pl->row + len;
        size_t cap = pl->row_cap - len;
        switch (pl->cols[id].type) {
        case RL_COL_TIMER: len += fmt_ns(pl->acc_ns[id], p, cap); break;
        case RL_COL_COUNTER:
            /* Counters are integers; anything beyond int64 falls back to a double. */
            if (fabs(pl->val[id]) < 9e18)
                len += (size_t)snprintf(p, cap, "%" PRId64, (int64_t)pl->val[id]);
            else
                len += rl_pl_fmt_f64(pl->val[id], p, cap);
            break;
        default: len += rl_pl_fmt_f64(pl->val[id], p, cap); break;
        }
        pl->row[len++] = i + 1 < pl->ncols ? ',' : '\n';
    }
    if (fwrite(pl->row, 1, len, pl->csv) != len || fflush(pl->csv) != 0)
        return rl_error_set_errno(RL_EIO, errno, "perflog: write %s/performance_log.csv",
                                  pl->run_dir);
    for (size_t i = 0; i < pl->ncols; i++) {
        rl_perflog_type t = pl->cols[i].type;
        if (t == RL_COL_TIMER) {
            pl->acc_ns[i] = 0;
            /* A timer running across the cycle boundary counts from here on. */
            if (pl->t0[i])
                pl->t0[i] = rl_mono_ns();
        } else if (t == RL_COL_COUNTER) {
            pl->val[i] = 0;
        }
    }
    return RL_OK;
}

int rl_perflog_cycle_end(rl_perflog *pl)
{
    if (!pl || pl->state != ST_STARTED)
        return rl_error_set(RL_ESTATE, "perflog: cycle_end outside a started episode");
    int rc = RL_OK;
    if (pl->recording)
        rc = write_row(pl);
    pl->cycles++;
    publish_summary(pl, RL_END_STOPPED);
    if (rc != RL_OK)
        return rc;
    return g_stop && atomic_load(&g_sig_owner) == pl ? 1 : RL_OK;
}

int rl_perflog_map_due(rl_perflog *pl, double spent_cost, bool episode_ending)
{
    if (!pl || pl->state != ST_STARTED || pl->num_maps <= 0 || pl->next_map >= pl->num_maps)
        return -1;
    if (pl->last_map_cycle == (int64_t)pl->cycles)
        return -1;
    if (isfinite(pl->budget)) {
        double threshold = pl->budget * (double)pl->next_map / (double)pl->num_maps;
        return spent_cost > threshold ? pl->next_map : -1;
    }
    return episode_ending && pl->next_map == 0 ? 0 : -1;
}

int rl_perflog_save_map(rl_perflog *pl, int k, const void *data, size_t len, const char *ext,
                        double spent_cost, double path_length, double path_duration)
{
    if (!pl || pl->state != ST_STARTED)
        return rl_error_set(RL_ESTATE, "perflog: save_map outside a started episode");
    if (k != pl->next_map || k >= pl->num_maps)
        return rl_error_set(RL_EINVAL, "perflog: map %d is not due (next is %d of %d)", k,
                            pl->next_map, pl->num_maps);
    if (!ext || !is_ident(ext, EXT_MAX, NULL) || (!data && len))
        return rl_error_set(RL_EINVAL, "perflog: map extension must be 1..%d letters/digits",
                            EXT_MAX);
    char dir[PATH_MAX], file[64], path[PATH_MAX];
    int rc = rl_fs_mkdir_in(pl->run_dir, "maps", dir, sizeof dir); /* never through a link */
    snprintf(file, sizeof file, "%05d.%s", k, ext);
    if (rc == RL_OK)
        rc = rl_path_join(path, sizeof path, dir, file);
    if (rc == RL_OK)
        rc = rl_fs_write_atomic(path, data, len, 0644);
    if (rc != RL_OK)
        return rc;
    rc = rl_path_join(path, sizeof path, pl->run_dir, "map_log.csv");
    if (rc != RL_OK)
        return rc;
    FILE *f = fopen(path, "a");
    if (!f)
        return rl_error_set_errno(RL_EIO, errno, "perflog: open %s", path);
    char a[40], b[40], c[40];
    rl_pl_fmt_f64(spent_cost, a, sizeof a);
    rl_pl_fmt_f64(path_length, b, sizeof b);
    rl_pl_fmt_f64(path_duration, c, sizeof c);
    if (k == 0)
        fputs("MapIndex,Cycle,SpentCost,TotalPathLength,TotalPathDuration,File\n", f);
    fprintf(f, "%d,%" PRIu64 ",%s,%s,%s,maps/%s\n", k, pl->cycles, a, b, c, file);
    if (fclose(f) != 0)
        return rl_error_set_errno(RL_EIO, errno, "perflog: write %s", path);
    pl->next_map++;
    pl->last_map_cycle = (int64_t)pl->cycles;
    return RL_OK;
}

int rl_perflog_end(rl_perflog *pl, rl_end_reason reason)
{
    if (!pl || pl->state != ST_STARTED)
        return rl_error_set(RL_ESTATE, "perflog: end outside a started episode");
    pl->state = ST_ENDED;
    pl->recording = false;
    int rc = RL_OK;
    if (pl->csv && fclose(pl->csv) != 0)
        rc =
            rl_error_set_errno(RL_EIO, errno, "perflog: close %s/performance_log.csv", pl->run_dir);
    pl->csv = NULL;
    size_t cap = pl->sum_cap;
    char *text = malloc(cap);
    if (!text)
        return rl_error_set(RL_ENOMEM, "perflog: out of memory");
    size_t n = rl_pl_render_summary(pl, reason, text);
    /* A signal arriving now writes this same final text. */
    if (atomic_load(&g_sig_owner) == pl && pl->sum[0]) {
        int next = 1 - atomic_load(&pl->active);
        memcpy(pl->sum[next], text, n + 1);
        pl->sum_len[next] = n;
        atomic_store(&pl->active, next);
    }
    int wrc = n ? rl_fs_write_atomic(pl->sum_path, text, n, 0644)
                : rl_error_set(RL_ENOMEM, "perflog: out of memory");
    free(text);
    if (pl->nesting_violations) {
        const struct column *c = &pl->cols[pl->first_violation_col];
        rl_log_warn("perflog %s: timer nesting broken %" PRIu64 " times, first: %s ran "
                    "outside its parent %s (see episode_summary.yaml)",
                    pl->run_dir, pl->nesting_violations, c->name, c->parent);
    }
    if (atomic_load(&g_sig_owner) == pl)
        rl_perflog_release_signals();
    return rc != RL_OK ? rc : wrc;
}

void rl_perflog_free(rl_perflog *pl)
{
    if (!pl)
        return;
    if (pl->state == ST_STARTED)
        rl_perflog_end(pl, RL_END_STOPPED);
    if (atomic_load(&g_sig_owner) == pl)
        rl_perflog_release_signals();
    if (pl->csv)
        fclose(pl->csv);
    for (size_t i = 0; i < pl->nparams; i++) {
        free(pl->params[i].key);
        free(pl->params[i].s);
    }
    free(pl->params);
    free(pl->cols);
    free(pl->layers);
    free(pl->order);
    free(pl->val);
    free(pl->acc_ns);
    free(pl->t0);
    free(pl->row);
    free(pl->sum[0]);
    free(pl->sum[1]);
    free(pl->root);
    free(pl->task);
    free(pl->dataset);
    free(pl->scene);
    free(pl->planner);
    free(pl);
}
