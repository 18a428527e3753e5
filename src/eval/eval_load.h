/* Framework-private: reading a run directory into the decoded run the metrics see
 * (eval_load.c): manifest, bag decoded by its own schemas, runtime map checked against the
 * manifest's SHA-256. */
#ifndef RUNLAB_EVAL_LOAD_H
#define RUNLAB_EVAL_LOAD_H

#include "eval/eval_internal.h"

typedef struct eval_loaded eval_loaded;

/* Loads `dir`. Returns RL_OK with *out, or a negative status when the run cannot be
 * evaluated at all (no bag, unreadable bag header, map hash mismatch: RL_ECRC naming both
 * hashes). A bag that ends early is read as far as it goes (a note says where). */
int eval_load(const char *dir, eval_loaded **out);
/* eval_load with the map file `map_path` (Lanelet2, CommonRoad or runtime map; NULL: the
 * run's own) in place of the run's: RL_ENOENT / RL_EPARSE naming it when it does not load. */
int eval_load_with_map(const char *dir, const char *map_path, eval_loaded **out);
/* The bag alone from memory (no manifest, no map): for the fuzz target. `data` must
 * outlive the result. */
int eval_load_bag_mem(const void *data, size_t len, eval_loaded **out);
void eval_loaded_free(eval_loaded *l);
const eval_run *eval_loaded_run(const eval_loaded *l);
/* Notes for the top of the report (unfinished run, no trigger, bag ends early), one per
 * line; "" when none. */
const char *eval_loaded_notes(const eval_loaded *l);

#endif
