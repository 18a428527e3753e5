/* Test helper: compares two SQLite databases in schema (sqlite_master, with identifier
 * quotes ignored since runlab quotes every dynamic identifier and OMPL quotes none) and in
 * every row of every table and view, value by value with storage classes and NULLs. */
#ifndef BENCH_DBCMP_H
#define BENCH_DBCMP_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void dbcmp_unquote(const char *in, char *out, size_t cap)
{
    size_t k = 0;
    for (const char *p = in; *p && k + 1 < cap; p++)
        if (*p != '"')
            out[k++] = *p;
    out[k] = '\0';
}

/* Returns 0 when equal; otherwise 1 with a description in `why`. */
static int dbcmp_query(sqlite3 *a, sqlite3 *b, const char *sql, char *why, size_t cap)
{
    sqlite3_stmt *sa = NULL, *sb = NULL;
    int diff = 0;
    if (sqlite3_prepare_v2(a, sql, -1, &sa, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(b, sql, -1, &sb, NULL) != SQLITE_OK) {
        snprintf(why, cap, "%s: %s / %s", sql, sqlite3_errmsg(a), sqlite3_errmsg(b));
        diff = 1;
        goto out;
    }
    for (long row = 1;; row++) {
        int ra = sqlite3_step(sa), rb = sqlite3_step(sb);
        if (ra != rb) {
            snprintf(why, cap, "%.300s: row %ld exists in only one database", sql, row);
            diff = 1;
            break;
        }
        if (ra != SQLITE_ROW)
            break;
        int n = sqlite3_column_count(sa);
        if (n != sqlite3_column_count(sb)) {
            snprintf(why, cap, "%s: column counts %d / %d", sql, n, sqlite3_column_count(sb));
            diff = 1;
            break;
        }
        for (int i = 0; i < n && !diff; i++) {
            int ta = sqlite3_column_type(sa, i), tb = sqlite3_column_type(sb, i);
            if (strcmp(sqlite3_column_name(sa, i), sqlite3_column_name(sb, i)) != 0 || ta != tb)
                diff = 1;
            else if (ta == SQLITE_INTEGER)
                diff = sqlite3_column_int64(sa, i) != sqlite3_column_int64(sb, i);
            else if (ta == SQLITE_FLOAT)
                diff = memcmp(&(double){sqlite3_column_double(sa, i)},
                              &(double){sqlite3_column_double(sb, i)}, sizeof(double)) != 0;
            else if (ta != SQLITE_NULL) {
                const char *xa = (const char *)sqlite3_column_text(sa, i);
                const char *xb = (const char *)sqlite3_column_text(sb, i);
                if (strcmp(sqlite3_column_name(sa, i), "sql") == 0 && xa && xb) {
                    char *ua = malloc(strlen(xa) + 1), *ub = malloc(strlen(xb) + 1);
                    dbcmp_unquote(xa, ua, strlen(xa) + 1);
                    dbcmp_unquote(xb, ub, strlen(xb) + 1);
                    diff = strcmp(ua, ub) != 0;
                    free(ua);
                    free(ub);
                } else {
                    diff = strcmp(xa ? xa : "", xb ? xb : "") != 0;
                }
            }
            if (diff) {
                const char *xa = (const char *)sqlite3_column_text(sa, i);
                const char *xb = (const char *)sqlite3_column_text(sb, i);
                snprintf(why, cap, "%s: row %ld column %s: [%d]'%.200s' vs [%d]'%.200s'", sql, row,
                         sqlite3_column_name(sa, i), ta, xa ? xa : "NULL", tb, xb ? xb : "NULL");
            }
        }
        if (diff)
            break;
    }
out:
    sqlite3_finalize(sa);
    sqlite3_finalize(sb);
    return diff;
}

static int dbcmp_files(const char *pa, const char *pb, char *why, size_t cap)
{
    sqlite3 *a = NULL, *b = NULL;
    int diff = 0;
    if (sqlite3_open_v2(pa, &a, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_open_v2(pb, &b, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        snprintf(why, cap, "cannot open %.400s or %.400s", pa, pb);
        sqlite3_close(a);
        sqlite3_close(b);
        return 1;
    }
    diff = dbcmp_query(a, b, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid",
                       why, cap);
    sqlite3_stmt *st = NULL;
    if (!diff &&
        sqlite3_prepare_v2(a, "SELECT type, name FROM sqlite_master WHERE type IN ('table','view')",
                           -1, &st, NULL) == SQLITE_OK) {
        while (!diff && sqlite3_step(st) == SQLITE_ROW) {
            char sql[300];
            const char *type = (const char *)sqlite3_column_text(st, 0);
            const char *name = (const char *)sqlite3_column_text(st, 1);
            if (strcmp(type, "table") == 0)
                snprintf(sql, sizeof sql, "SELECT * FROM \"%.200s\" ORDER BY rowid", name);
            else
                snprintf(sql, sizeof sql, "SELECT * FROM \"%.200s\"", name);
            diff = dbcmp_query(a, b, sql, why, cap);
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(a);
    sqlite3_close(b);
    return diff;
}

#endif
