/* Framework-private: the effective configuration (default.yaml merged with --config) and
 * the metric selection (eval_config.c). */
#ifndef RUNLAB_EVAL_CONFIG_H
#define RUNLAB_EVAL_CONFIG_H

#include "eval/eval_internal.h"

/* The effective configuration (caller puts it). RL_EINVAL names the file and key path. */
int eval_config_build(const char *config_path, json_object **out);
/* chosen[i] for each registry entry from "a,b" (NULL: all). RL_EINVAL for unknown names. */
int eval_config_select(const char *list, bool *chosen);

#endif
