/* Engine side of `runlab bench import`: OMPL benchmark logs into one SQLite database, the work of OMPL's
 * ompl_benchmark_statistics.py (readBenchmarkLog then computeViews) done in C. */
#include "formats/ompl/ompl_log.h"
#include "runlab/bench.h"
#include "runlab/error.h"
#include "runlab/log.h"

#include <sqlite3.h>

int rl_bench_import_logs(const char *const *paths, size_t n, const char *db_path)
{
    if (!paths || !db_path)
        return rl_error_set(RL_EINVAL, "rl_bench_import_logs: NULL argument");
    sqlite3 *db;
    int rc = rl_ompl_db_open(db_path, &db);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n && rc == RL_OK; i++) {
        rl_ompl_log log;
        rc = rl_ompl_log_read_file(paths[i], &log);
        if (rc == RL_OK) {
            rc = rl_ompl_db_add_log(db, &log, paths[i]);
            rl_ompl_log_free(&log);
            if (rc == RL_EEXIST) { /* merged before: skipped, never doubled */
                rl_log_warn("%s; skipped", rl_error_last());
                rc = RL_OK;
            }
        }
    }
    if (rc < 0) {
        sqlite3_close(db);
        return rc;
    }
    return rl_ompl_db_finish(db);
}
