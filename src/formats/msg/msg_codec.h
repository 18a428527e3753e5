/* The message-encoding table's private face (msg_codec.c): what rl_msgdef_parse needs from
 * a codec beyond the public accessors — the schema parser that fills a fresh definition and
 * how the payload encoding lays out wstrings. */
#ifndef RL_FORMATS_MSG_CODEC_H
#define RL_FORMATS_MSG_CODEC_H

#include "runlab/msgdef.h"

#include <stdbool.h>
#include <stddef.h>

/* Fills `d` (fresh from msgdef_new) from the schema text; errors name schema, line, column. */
typedef int (*msg_schema_parser)(rl_msgdef *d, const char *name, const char *text, size_t len);

msg_schema_parser msg_codec_parser(const rl_msg_codec *c);
/* True when wstrings are laid out as ROS 2 type supports write them (4-byte units). */
bool msg_codec_wstring_ros(const rl_msg_codec *c);

#endif
