/* Internal to `runlab experiment` (cli/cmd_lab.c): whether it may go on after listening for
 * a recorder on the domain, with and without --attach (cli/experiment_attach.c). */
#ifndef RUNLAB_CLI_EXPERIMENT_ATTACH_H
#define RUNLAB_CLI_EXPERIMENT_ATTACH_H

#include "runlab/lab.h"

#include <stddef.h>

/* The one-recorder rule as the experiment meets it. `hb`: the heartbeat of the recorder that
 * answered on `domain`, NULL when none did. Without --attach (`attach` 0) a recorder that
 * answers blocks the experiment; with it, none answering does, and so does one busy with
 * another run (ARMED or RECORDING). Returns 1 and the reason, with what to do about it, in
 * `why` (`cap` bytes) when the experiment must not go on; 0 otherwise. */
int experiment_attach_refused(int domain, int attach, const rl_lab_heartbeat *hb, char *why,
                              size_t cap);

#endif
