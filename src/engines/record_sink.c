/* The recorder's default bag writer. Until the MCAP writer is part of the library there
 * is none, and prepare refuses with RL_EUNSUPPORTED unless a sink was set (tests). */
#include "engines/record_internal.h"

#include <stddef.h>

const rl_record_sink_ops *const rl_record_default_sink = NULL;
