/* The SQLite database of OMPL benchmark results, in exactly the schema OMPL's
 * ompl_benchmark_statistics.py builds (and Planner Arena reads): the same base tables,
 * columns added per property as they appear, the same values and NULLs, the same views.
 * Every dynamic identifier is quoted and checked, every value is bound. */
#include "core/text.h"
#include "formats/ompl/ompl_log.h"

#include "runlab/error.h"

#include <ctype.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OMPL's base schema, text for text: sqlite_master keeps it verbatim and tools compare
 * it. Only fixed identifiers appear here. */
static const char BASE_SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS experiments\n"
    "        (id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(512),\n"
    "        totaltime REAL, timelimit REAL, memorylimit REAL, runcount INTEGER,\n"
    "        version VARCHAR(128), hostname VARCHAR(1024), cpuinfo TEXT,\n"
    "        date DATETIME, seed VARCHAR(24), setup TEXT);\n"
    "        CREATE TABLE IF NOT EXISTS plannerConfigs\n"
    "        (id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "        name VARCHAR(512) NOT NULL, settings TEXT);\n"
    "        CREATE TABLE IF NOT EXISTS enums\n"
    "        (name VARCHAR(512), value INTEGER, description TEXT,\n"
    "        PRIMARY KEY (name, value));\n"
    "        CREATE TABLE IF NOT EXISTS runs\n"
    "        (id INTEGER PRIMARY KEY AUTOINCREMENT, experimentid INTEGER, plannerid INTEGER,\n"
    "        FOREIGN KEY (experimentid) REFERENCES experiments(id) ON DELETE CASCADE,\n"
    "        FOREIGN KEY (plannerid) REFERENCES plannerConfigs(id) ON DELETE CASCADE);\n"
    "        CREATE TABLE IF NOT EXISTS progress\n"
    "        (runid INTEGER, time REAL, PRIMARY KEY (runid, time),\n"
    "        FOREIGN KEY (runid) REFERENCES runs(id) ON DELETE CASCADE)";

static int db_fail(sqlite3 *db, const char *what)
{
    return rl_error_set(RL_EIO, "sqlite: %s: %s", what, sqlite3_errmsg(db));
}

static int exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        int rc = rl_error_set(RL_EIO, "sqlite: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return rc;
    }
    return RL_OK;
}

int rl_ompl_db_open(const char *path, sqlite3 **out)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        int rc = rl_error_set(RL_EIO, "%s: cannot open database: %s", path,
                              db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return rc;
    }
    int rc = exec(db, "PRAGMA foreign_keys = ON");
    if (rc == RL_OK)
        rc = exec(db, BASE_SCHEMA);
    if (rc < 0) {
        sqlite3_close(db);
        return rl_error_prefix(rc, "%s", path);
    }
    *out = db;
    return RL_OK;
}

/* ---- strings ---------------------------------------------------------------------- */

static void sb_ident(rl_buf *b, const char *name)
{
    rl_buf_put(b, "\"", 1);
    for (const char *p = name; *p; p++) {
        if (*p == '"')
            rl_buf_put(b, "\"\"", 2);
        else
            rl_buf_put(b, p, 1);
    }
    rl_buf_put(b, "\"", 1);
}

/* Type words go into DDL unquoted (OMPL declares the column with the log's type word,
 * and the declared type decides SQLite's affinity), so only a safe alphabet passes. */
static int check_type(const char *type, const char *where)
{
    for (const char *p = type; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '(' && *p != ')' && *p != ',')
            return rl_error_set(RL_EPARSE, "%s: type '%s' is not a SQL type name", where, type);
    return RL_OK;
}

/* Whitespace tokens of a line (Python's str.split()), as new strings. */
static int split_ws(const char *line, rl_strv *out)
{
    const char *p = line;
    while (*p) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *b = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        int rc = rl_strv_push_owned(out, strndup(b, (size_t)(p - b)));
        if (rc < 0)
            return rc;
    }
    return RL_OK;
}

/* line.split(sep)[:-1]: every piece before the last separator. */
static int split_drop_last(const char *line, const char *sep, rl_strv *out)
{
    size_t sl = strlen(sep);
    const char *p = line, *hit;
    while ((hit = strstr(p, sep)) != NULL) {
        int rc = rl_strv_push_owned(out, strndup(p, (size_t)(hit - p)));
        if (rc < 0)
            return rc;
        p = hit + sl;
    }
    return RL_OK;
}

/* Token `idx` (negative from the end) of a line as a new string, or NULL. */
static char *token_dup(const char *line, int idx)
{
    rl_strv t = {0};
    char *r = NULL;
    if (split_ws(line, &t) == RL_OK) {
        long i = idx < 0 ? (long)t.n + idx : idx;
        if (i >= 0 && (size_t)i < t.n) {
            r = t.v[i];
            t.v[i] = NULL;
        }
    }
    rl_strv_free(&t);
    return r;
}

/* "_".join(tokens[:-1]) of a property declaration, and its type tokens[-1]. */
static int decl_split(const char *decl, char **name, char **type)
{
    rl_strv t = {0};
    int rc = split_ws(decl, &t);
    if (rc == RL_OK && t.n == 0)
        rc = rl_error_set(RL_EPARSE, "empty property declaration");
    if (rc < 0) {
        rl_strv_free(&t);
        return rc;
    }
    rl_buf b = {0};
    rl_buf_puts(&b, "");
    for (size_t i = 0; i + 1 < t.n; i++) {
        if (i)
            rl_buf_puts(&b, "_");
        rl_buf_puts(&b, t.v[i]);
    }
    *type = t.v[t.n - 1];
    t.v[t.n - 1] = NULL;
    rl_strv_free(&t);
    if (b.err) {
        free(*type);
        *type = NULL;
        return b.err;
    }
    *name = b.data;
    return RL_OK;
}

static bool is_null_value(const char *v)
{
    return !*v || strcmp(v, "nan") == 0 || strcmp(v, "inf") == 0;
}

/* ---- database steps --------------------------------------------------------------- */

static int column_names(sqlite3 *db, const char *table, rl_strv *out)
{
    rl_buf q = {0};
    rl_buf_puts(&q, "PRAGMA table_info(");
    sb_ident(&q, table);
    rl_buf_puts(&q, ")");
    if (q.err)
        return q.err;
    sqlite3_stmt *st;
    int rc = RL_OK;
    if (sqlite3_prepare_v2(db, q.data, -1, &st, NULL) != SQLITE_OK) {
        free(q.data);
        return db_fail(db, "table_info");
    }
    free(q.data);
    while (rc == RL_OK && sqlite3_step(st) == SQLITE_ROW)
        rc = rl_strv_push(out, (const char *)sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
    return rc;
}

static bool strv_has(const rl_strv *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return true;
    return false;
}

static int add_column(sqlite3 *db, const char *table, const char *name, const char *type)
{
    int rc = check_type(type, name);
    if (rc < 0)
        return rc;
    rl_buf q = {0};
    rl_buf_puts(&q, "ALTER TABLE ");
    sb_ident(&q, table);
    rl_buf_puts(&q, " ADD ");
    sb_ident(&q, name);
    if (*type) {
        rl_buf_puts(&q, " ");
        rl_buf_puts(&q, type);
    }
    if (q.err)
        return q.err;
    rc = exec(db, q.data);
    free(q.data);
    return rc;
}

static int prepare_insert(sqlite3 *db, const char *table, const rl_strv *cols, sqlite3_stmt **st)
{
    rl_buf q = {0};
    rl_buf_puts(&q, "INSERT INTO ");
    sb_ident(&q, table);
    rl_buf_puts(&q, " (");
    for (size_t i = 0; i < cols->n; i++) {
        if (i)
            rl_buf_puts(&q, ",");
        sb_ident(&q, cols->v[i]);
    }
    rl_buf_puts(&q, ") VALUES (");
    for (size_t i = 0; i < cols->n; i++)
        rl_buf_puts(&q, i ? ",?" : "?");
    rl_buf_puts(&q, ")");
    if (q.err)
        return q.err;
    int rc = sqlite3_prepare_v2(db, q.data, -1, st, NULL) == SQLITE_OK ? RL_OK : db_fail(db, "insert");
    free(q.data);
    return rc;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
    if (is_null_value(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
}

typedef struct exp_prop {
    char *key, *value, *type;
} exp_prop;

static int parse_exp_props(const rl_strv *lines, exp_prop **out, size_t *n_out)
{
    exp_prop *props = calloc(lines->n ? lines->n : 1, sizeof *props);
    size_t n = 0;
    if (!props)
        return rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t i = 0; i < lines->n; i++) {
        /* line.strip().split(" = "): entry[0] is "name words TYPE", entry[1] the value */
        const char *s = lines->v[i];
        while (isspace((unsigned char)*s))
            s++;
        size_t len = strlen(s);
        while (len && isspace((unsigned char)s[len - 1]))
            len--;
        char *line = strndup(s, len);
        if (!line)
            goto nomem;
        char *eq = strstr(line, " = ");
        if (!eq) {
            free(line);
            for (size_t k = 0; k < n; k++)
                free(props[k].key), free(props[k].value), free(props[k].type);
            free(props);
            return rl_error_set(RL_EPARSE, "experiment property '%s' has no ' = '", lines->v[i]);
        }
        *eq = '\0';
        char *val = eq + 3, *end = strstr(val, " = ");
        if (end)
            *end = '\0';
        /* entry[0].split(" "): the words before the last are joined with no separator */
        char *last = strrchr(line, ' ');
        char *type = strdup(last ? last + 1 : line);
        char *key = malloc(strlen(line) + 1);
        char *value = strdup(val);
        if (!type || !key || !value) {
            free(type), free(key), free(value), free(line);
            goto nomem;
        }
        size_t k = 0;
        if (last)
            for (char *p = line; p < last; p++)
                if (*p != ' ')
                    key[k++] = *p == '-' ? '_' : *p;
        key[k] = '\0';
        free(line);
        size_t j;
        for (j = 0; j < n; j++)
            if (strcmp(props[j].key, key) == 0)
                break;
        if (j < n) { /* a dict keeps the first position and the last value */
            free(props[j].value), free(props[j].type), free(key);
            props[j].value = value;
            props[j].type = type;
        } else {
            props[n++] = (exp_prop){key, value, type};
        }
    }
    *out = props;
    *n_out = n;
    return RL_OK;
nomem:
    for (size_t k = 0; k < n; k++)
        free(props[k].key), free(props[k].value), free(props[k].type);
    free(props);
    return rl_error_set(RL_ENOMEM, "out of memory");
}

static int cmp_prop_key(const void *a, const void *b)
{
    return strcmp((*(const exp_prop *const *)a)->key, (*(const exp_prop *const *)b)->key);
}

static double token_double(const char *line)
{
    char *t = token_dup(line, 0);
    double v = t ? strtod(t, NULL) : 0.0;
    free(t);
    return v;
}

static int insert_experiment(sqlite3 *db, const rl_ompl_log *log, sqlite3_int64 *exp_id)
{
    exp_prop *props = NULL;
    size_t n_props = 0;
    int rc = parse_exp_props(&log->exp_props, &props, &n_props);
    if (rc < 0)
        return rc;
    rl_strv cols = {0}, existing = {0};
    char *expname = NULL, *host = NULL, *seed = NULL, *version = NULL, *date = NULL;
    sqlite3_stmt *st = NULL;
    exp_prop **sorted = malloc((n_props ? n_props : 1) * sizeof *sorted);
    if (!sorted) {
        rc = rl_error_set(RL_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n_props; i++)
        sorted[i] = &props[i];
    qsort(sorted, n_props, sizeof *sorted, cmp_prop_key);
    if ((rc = column_names(db, "experiments", &existing)) < 0)
        goto out;
    for (size_t i = 0; i < n_props; i++)
        if (!strv_has(&existing, sorted[i]->key) &&
            (rc = add_column(db, "experiments", sorted[i]->key, sorted[i]->type)) < 0)
            goto out;

    /* "OMPL version 1.6.0" -> "OMPL 1.6.0"; OMPL 1.5's empty version gives "OMPL version" */
    rl_buf vb = {0};
    if (log->version_line) {
        char *lib = token_dup(log->version_line, 0), *ver = token_dup(log->version_line, -1);
        rl_buf_puts(&vb, lib ? lib : "");
        rl_buf_puts(&vb, " ");
        rl_buf_puts(&vb, ver ? ver : "");
        free(lib);
        free(ver);
    } else {
        rl_buf_puts(&vb, "OMPL 0.0.0");
    }
    version = vb.data;
    expname = token_dup(log->experiment_line, -1);
    host = token_dup(log->host_line, -1);
    seed = token_dup(log->seed_line, 0);
    {
        rl_strv t = {0};
        rl_buf db_ = {0};
        rl_buf_puts(&db_, "");
        if ((rc = split_ws(log->date_line, &t)) == RL_OK)
            for (size_t i = 2; i < t.n; i++) {
                if (i > 2)
                    rl_buf_puts(&db_, " ");
                rl_buf_puts(&db_, t.v[i]);
            }
        rl_strv_free(&t);
        date = db_.data;
        if (rc == RL_OK && db_.err)
            rc = db_.err;
    }
    if (rc < 0 || vb.err || !version || !expname || !host || !seed || !date) {
        if (rc == RL_OK)
            rc = rl_error_set(RL_ENOMEM, "out of memory");
        goto out;
    }
    {
        /* The same experiment (name, host, start date, seed) merged twice would count
           every run twice: refuse it, and let the caller say it was skipped. */
        sqlite3_stmt *q = NULL;
        int dup = 0;
        if (sqlite3_prepare_v2(db,
                               "SELECT count(*) FROM experiments WHERE name=?1 AND hostname=?2 "
                               "AND date=?3 AND seed=?4",
                               -1, &q, NULL) == SQLITE_OK) {
            sqlite3_bind_text(q, 1, expname, -1, SQLITE_STATIC);
            sqlite3_bind_text(q, 2, host, -1, SQLITE_STATIC);
            sqlite3_bind_text(q, 3, date, -1, SQLITE_STATIC);
            sqlite3_bind_int64(q, 4, strtoll(seed, NULL, 10));
            if (sqlite3_step(q) == SQLITE_ROW)
                dup = sqlite3_column_int(q, 0);
        }
        sqlite3_finalize(q);
        if (dup) {
            rc = rl_error_set(RL_EEXIST,
                              "the database already holds experiment '%s' of %s on %s (seed %s)",
                              expname, date, host, seed);
            goto out;
        }
    }
    static const char *const fixed[] = {"name",     "totaltime", "timelimit", "memorylimit",
                                        "runcount", "version",   "hostname",  "cpuinfo",
                                        "date",     "seed",      "setup"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        if ((rc = rl_strv_push(&cols, fixed[i])) < 0)
            goto out;
    for (size_t i = 0; i < n_props; i++) {
        if (strv_has(&cols, props[i].key)) {
            rc = rl_error_set(RL_EPARSE, "experiment property '%s' clashes with a column",
                              props[i].key);
            goto out;
        }
        if ((rc = rl_strv_push(&cols, props[i].key)) < 0)
            goto out;
    }
    if ((rc = prepare_insert(db, "experiments", &cols, &st)) < 0)
        goto out;
    sqlite3_bind_text(st, 1, expname, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 2, token_double(log->total_line));
    sqlite3_bind_double(st, 3, token_double(log->time_line));
    sqlite3_bind_double(st, 4, token_double(log->mem_line));
    if (log->runs_line) {
        char *t = token_dup(log->runs_line, 0);
        sqlite3_bind_int64(st, 5, t ? strtoll(t, NULL, 10) : 0);
        free(t);
    } else {
        sqlite3_bind_int64(st, 5, -1);
    }
    sqlite3_bind_text(st, 6, version, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, host, -1, SQLITE_STATIC);
    if (log->cpuinfo)
        sqlite3_bind_text(st, 8, log->cpuinfo, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 8);
    sqlite3_bind_text(st, 9, date, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 10, seed, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 11, log->setup ? log->setup : "", -1, SQLITE_STATIC);
    for (size_t i = 0; i < n_props; i++)
        sqlite3_bind_text(st, 12 + (int)i, props[i].value, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
        rc = db_fail(db, "insert experiment");
        goto out;
    }
    *exp_id = sqlite3_last_insert_rowid(db);
out:
    sqlite3_finalize(st);
    rl_strv_free(&cols);
    rl_strv_free(&existing);
    free(expname), free(host), free(seed), free(version), free(date), free(sorted);
    for (size_t i = 0; i < n_props; i++)
        free(props[i].key), free(props[i].value), free(props[i].type);
    free(props);
    return rc;
}

static int insert_enums(sqlite3 *db, const rl_ompl_log *log)
{
    int rc = RL_OK;
    for (size_t i = 0; i < log->enums.n && rc == RL_OK; i++) {
        rl_strv f = {0};
        /* split("|") keeps the piece after the last bar: append a bar and drop the last */
        size_t l = strlen(log->enums.v[i]);
        char *line = malloc(l + 2);
        if (!line)
            return rl_error_set(RL_ENOMEM, "out of memory");
        memcpy(line, log->enums.v[i], l);
        memcpy(line + l, "|", 2);
        rc = split_drop_last(line, "|", &f);
        free(line);
        sqlite3_stmt *q = NULL, *ins = NULL;
        if (rc == RL_OK && (sqlite3_prepare_v2(db, "SELECT 1 FROM \"enums\" WHERE \"name\" IS ?",
                                               -1, &q, NULL) != SQLITE_OK ||
                            sqlite3_prepare_v2(db, "INSERT INTO \"enums\" VALUES (?,?,?)", -1, &ins,
                                               NULL) != SQLITE_OK))
            rc = db_fail(db, "enums");
        if (rc == RL_OK) {
            sqlite3_bind_text(q, 1, f.v[0], -1, SQLITE_STATIC);
            if (sqlite3_step(q) != SQLITE_ROW) {
                for (size_t j = 0; j + 1 < f.n && rc == RL_OK; j++) {
                    sqlite3_reset(ins);
                    sqlite3_bind_text(ins, 1, f.v[0], -1, SQLITE_STATIC);
                    sqlite3_bind_int64(ins, 2, (sqlite3_int64)j);
                    sqlite3_bind_text(ins, 3, f.v[j + 1], -1, SQLITE_STATIC);
                    if (sqlite3_step(ins) != SQLITE_DONE)
                        rc = db_fail(db, "insert enum");
                }
            }
        }
        sqlite3_finalize(q);
        sqlite3_finalize(ins);
        rl_strv_free(&f);
    }
    return rc;
}

/* Adds columns for a planner's property declarations; fills `cols` with the names. */
static int declare_columns(sqlite3 *db, const char *table, const rl_strv *decls, rl_strv *cols)
{
    rl_strv existing = {0};
    int rc = column_names(db, table, &existing);
    for (size_t i = 0; i < decls->n && rc == RL_OK; i++) {
        char *name = NULL, *type = NULL;
        if ((rc = decl_split(decls->v[i], &name, &type)) < 0)
            break;
        if (strv_has(cols, name))
            rc = rl_error_set(RL_EPARSE, "property '%s' is declared twice", name);
        else if (!strv_has(&existing, name))
            rc = add_column(db, table, name, type);
        free(type);
        if (rc == RL_OK)
            rc = rl_strv_push_owned(cols, name);
        else
            free(name);
    }
    rl_strv_free(&existing);
    return rc;
}

static int insert_planner(sqlite3 *db, const rl_ompl_planner *p, sqlite3_int64 exp_id)
{
    rl_buf settings = {0};
    rl_buf_puts(&settings, "");
    for (size_t i = 0; i < p->common.n; i++) {
        rl_buf_puts(&settings, p->common.v[i]);
        rl_buf_puts(&settings, "\n;");
    }
    if (settings.err)
        return settings.err;
    sqlite3_stmt *st = NULL;
    sqlite3_int64 pid = 0;
    int rc = RL_OK;
    rl_strv cols = {0}, vals = {0};
    sqlite3_int64 *run_ids = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT \"id\" FROM \"plannerConfigs\" WHERE (\"name\"=? AND "
                           "\"settings\"=?)",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = db_fail(db, "plannerConfigs");
        goto out;
    }
    sqlite3_bind_text(st, 1, p->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, settings.data, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        pid = sqlite3_column_int64(st, 0);
    } else {
        sqlite3_finalize(st);
        st = NULL;
        if (sqlite3_prepare_v2(db, "INSERT INTO \"plannerConfigs\" VALUES (?,?,?)", -1, &st,
                               NULL) != SQLITE_OK) {
            rc = db_fail(db, "plannerConfigs");
            goto out;
        }
        sqlite3_bind_null(st, 1);
        sqlite3_bind_text(st, 2, p->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, settings.data, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) {
            rc = db_fail(db, "insert planner");
            goto out;
        }
        pid = sqlite3_last_insert_rowid(db);
    }
    sqlite3_finalize(st);
    st = NULL;

    if ((rc = rl_strv_push(&cols, "experimentid")) < 0 ||
        (rc = rl_strv_push(&cols, "plannerid")) < 0 ||
        (rc = declare_columns(db, "runs", &p->props, &cols)) < 0 ||
        (rc = prepare_insert(db, "runs", &cols, &st)) < 0)
        goto out;
    run_ids = calloc(p->runs.n ? p->runs.n : 1, sizeof *run_ids);
    if (!run_ids) {
        rc = rl_error_set(RL_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t r = 0; r < p->runs.n; r++) {
        rl_strv_free(&vals);
        if ((rc = split_drop_last(p->runs.v[r], "; ", &vals)) < 0)
            goto out;
        if (vals.n != cols.n - 2) {
            rc = rl_error_set(RL_EPARSE, "planner '%s' run %zu: %zu values for %zu properties",
                              p->name, r + 1, vals.n, cols.n - 2);
            goto out;
        }
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, exp_id);
        sqlite3_bind_int64(st, 2, pid);
        for (size_t i = 0; i < vals.n; i++)
            bind_text_or_null(st, 3 + (int)i, vals.v[i]);
        if (sqlite3_step(st) != SQLITE_DONE) {
            rc = db_fail(db, "insert run");
            goto out;
        }
        run_ids[r] = sqlite3_last_insert_rowid(db);
    }
    sqlite3_finalize(st);
    st = NULL;

    if (p->has_progress) {
        rl_strv_free(&cols);
        if ((rc = rl_strv_push(&cols, "runid")) < 0 ||
            (rc = declare_columns(db, "progress", &p->progress_props, &cols)) < 0 ||
            (rc = prepare_insert(db, "progress", &cols, &st)) < 0)
            goto out;
        for (size_t r = 0; r < p->progress.n; r++) {
            rl_strv samples = {0};
            if ((rc = split_drop_last(p->progress.v[r], ";", &samples)) < 0)
                goto out;
            for (size_t s = 0; s < samples.n && rc == RL_OK; s++) {
                rl_strv_free(&vals);
                if ((rc = split_drop_last(samples.v[s], ",", &vals)) < 0)
                    break;
                if (vals.n != cols.n - 1) {
                    rc = rl_error_set(RL_EPARSE,
                                      "planner '%s' progress of run %zu: %zu values for %zu "
                                      "properties",
                                      p->name, r + 1, vals.n, cols.n - 1);
                    break;
                }
                sqlite3_reset(st);
                sqlite3_bind_int64(st, 1, run_ids[r]);
                for (size_t i = 0; i < vals.n; i++)
                    bind_text_or_null(st, 2 + (int)i, vals.v[i]);
                int step = sqlite3_step(st);
                /* OMPL's parser skips a sample whose (run, time) is already there */
                if (step != SQLITE_DONE && step != SQLITE_CONSTRAINT)
                    rc = db_fail(db, "insert progress");
            }
            rl_strv_free(&samples);
            if (rc < 0)
                goto out;
        }
    }
out:
    sqlite3_finalize(st);
    rl_strv_free(&cols);
    rl_strv_free(&vals);
    free(run_ids);
    free(settings.data);
    return rc;
}

int rl_ompl_db_add_log(sqlite3 *db, const rl_ompl_log *log, const char *name)
{
    int rc = exec(db, "BEGIN");
    sqlite3_int64 exp_id = 0;
    if (rc == RL_OK)
        rc = insert_experiment(db, log, &exp_id);
    if (rc == RL_OK)
        rc = insert_enums(db, log);
    for (size_t i = 0; i < log->n_planners && rc == RL_OK; i++)
        rc = insert_planner(db, &log->planners[i], exp_id);
    if (rc == RL_OK)
        rc = exec(db, "COMMIT");
    if (rc < 0) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return rl_error_prefix(rc, "%s", name ? name : "log");
    }
    return RL_OK;
}

/* The views, text for text as OMPL's computeViews writes them; `total` is the
 * expression for a run's total time. */
static int make_views(sqlite3 *db, const char *total)
{
    char s0[1024], sql[4096];
    snprintf(s0, sizeof s0,
             "SELECT plannerid, plannerConfigs.name AS plannerName, experimentid,\n"
             "            solved, %s AS total_time\n"
             "            FROM plannerConfigs INNER JOIN experiments INNER JOIN runs\n"
             "            ON plannerConfigs.id=runs.plannerid AND "
             "experiments.id=runs.experimentid",
             total);
    int rc = exec(db, "DROP VIEW IF EXISTS bestPlannerConfigsPerExperiment");
    snprintf(sql, sizeof sql,
             "CREATE VIEW IF NOT EXISTS bestPlannerConfigsPerExperiment AS SELECT plannerid, "
             "experimentid, MIN(avg_solved) AS avg_solved, avg_total_time\n"
             "        FROM (SELECT plannerid, plannerName, experimentid, AVG(solved) AS "
             "avg_solved,\n"
             "        AVG(total_time) AS avg_total_time\n"
             "        FROM (%s) GROUP BY plannerid, experimentid) GROUP BY plannerName, "
             "experimentid ORDER BY avg_solved DESC,\n"
             "        avg_total_time ASC",
             s0);
    if (rc == RL_OK)
        rc = exec(db, sql);
    if (rc == RL_OK)
        rc = exec(db, "DROP VIEW IF EXISTS bestPlannerConfigs");
    snprintf(sql, sizeof sql,
             "CREATE VIEW IF NOT EXISTS bestPlannerConfigs AS SELECT plannerid, MIN(avg_solved) "
             "AS avg_solved, avg_total_time\n"
             "        FROM (SELECT plannerid, plannerName, AVG(solved) AS avg_solved,\n"
             "        AVG(total_time) AS avg_total_time\n"
             "        FROM (%s) GROUP BY plannerid) GROUP BY plannerName ORDER BY avg_solved "
             "DESC, avg_total_time ASC",
             s0);
    if (rc == RL_OK)
        rc = exec(db, sql);
    return rc;
}

int rl_ompl_db_finish(sqlite3 *db)
{
    rl_strv cols = {0};
    int rc = column_names(db, "runs", &cols);
    if (rc == RL_OK)
        rc = make_views(db, strv_has(&cols, "simplification_time") ? "time + simplification_time"
                                                                   : "time");
    rl_strv_free(&cols);
    if (sqlite3_close(db) != SQLITE_OK && rc == RL_OK)
        rc = rl_error_set(RL_EIO, "sqlite: close failed");
    return rc;
}
