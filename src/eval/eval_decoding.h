/* Framework-private: what did not decode, per topic of every vehicle (issue 29.8), written
 * into summary.json ("decoding"), decoding.csv and a section of the report (eval_decoding.c). */
#ifndef RUNLAB_EVAL_DECODING_H
#define RUNLAB_EVAL_DECODING_H

#include "eval/eval_internal.h"
#include "runlab/json.h"
#include "runlab/report.h"

/* The "decoding" array: one object per vehicle and topic. Writes into `j`. */
void eval_decoding_json(rl_json_writer *j, const eval_run *run);
/* DIR/decoding.csv, one row per vehicle and topic. RL_OK or an I/O error naming the file. */
int eval_decoding_csv(const char *dir, const eval_run *run);
/* The report's "Decoding" section: a table of the topics with messages that did not decode
 * or a refused channel, or one line saying every message decoded. */
int eval_decoding_report(rl_report *r, const eval_run *run);

#endif
