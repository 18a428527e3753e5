/* The one table of message encodings runlab decodes: each (schema encoding, message
 * encoding) pair names its schema parser and payload decoder. Every reader — rl_msgdef_parse,
 * the recorder's profile check, eval, `runlab mcap` — asks here instead of comparing strings;
 * docs/msgdef.md "Adding an encoding" is the guide to extending it. */
#include "msg_codec.h"

#include "msgdef_internal.h"
#include "runlab/error.h"

#include <stdio.h>
#include <string.h>

struct rl_msg_codec {
    const char *schema_encoding;
    const char *message_encoding;
    msg_schema_parser parse;
    bool wstring_ros; /* wstrings in 4-byte units, as ROS 2 type supports write them */
    bool ros2_profile; /* the pair the MCAP ros2 profile allows */
};

/* Payloads of every codec are decoded by the CDR decoder (cdr.c, rl_msg_decode) driven by
 * the plan built from the parsed schema; a codec with another payload encoding would add
 * its decoder here. "ros2idl" (rosbag2's IDL bundle) is not in the table: it is refused. */
static const rl_msg_codec codecs[] = {
    {RL_SCHEMA_ENCODING_ROS2MSG, RL_MESSAGE_ENCODING_CDR, msgdef_parse_ros2, true, true},
    {RL_SCHEMA_ENCODING_OMGIDL, RL_MESSAGE_ENCODING_CDR, msgdef_parse_idl, false, false},
};
enum { NCODECS = sizeof codecs / sizeof codecs[0] };

/* An encoding as given, for an error message: printable ASCII as it is, other bytes as
 * \xNN, at most 24 bytes then "...". */
static void shown(char *out, size_t cap, const char *s, size_t len)
{
    size_t k = 0;
    out[0] = '\0';
    for (size_t i = 0; i < len && i < 24 && k + 5 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        k += (size_t)snprintf(out + k, cap - k, ch >= 0x20 && ch < 0x7f ? "%c" : "\\x%02x", ch);
    }
    if (len > 24 && k + 4 < cap)
        snprintf(out + k, cap - k, "...");
}

const rl_msg_codec *rl_msg_codec_find_bytes(const void *schema_encoding, size_t schema_len,
                                            const void *message_encoding, size_t message_len)
{
    if (!schema_encoding)
        schema_len = 0;
    if (!message_encoding)
        message_len = 0;
    for (size_t i = 0; i < NCODECS; i++) {
        const rl_msg_codec *c = &codecs[i];
        if (strlen(c->schema_encoding) == schema_len &&
            memcmp(c->schema_encoding, schema_encoding, schema_len) == 0 &&
            strlen(c->message_encoding) == message_len &&
            memcmp(c->message_encoding, message_encoding, message_len) == 0)
            return c;
    }
    char se[128], me[128];
    shown(se, sizeof se, schema_encoding, schema_len);
    shown(me, sizeof me, message_encoding, message_len);
    rl_error_set(RL_EUNSUPPORTED,
                 "schema encoding '%s' with message encoding '%s' is not decoded (%s are)", se, me,
                 rl_msg_codec_supported());
    return NULL;
}

const rl_msg_codec *rl_msg_codec_find(const char *schema_encoding, const char *message_encoding)
{
    return rl_msg_codec_find_bytes(schema_encoding, schema_encoding ? strlen(schema_encoding) : 0,
                                   message_encoding,
                                   message_encoding ? strlen(message_encoding) : 0);
}

const char *rl_msg_codec_schema_encoding(const rl_msg_codec *c)
{
    return c ? c->schema_encoding : "";
}

const char *rl_msg_codec_message_encoding(const rl_msg_codec *c)
{
    return c ? c->message_encoding : "";
}

bool rl_msg_codec_ros2_profile(const rl_msg_codec *c)
{
    return c && c->ros2_profile;
}

const char *rl_msg_codec_supported(void)
{
    return RL_SCHEMA_ENCODING_ROS2MSG "/" RL_MESSAGE_ENCODING_CDR
        ", " RL_SCHEMA_ENCODING_OMGIDL "/" RL_MESSAGE_ENCODING_CDR;
}

msg_schema_parser msg_codec_parser(const rl_msg_codec *c)
{
    return c->parse;
}

bool msg_codec_wstring_ros(const rl_msg_codec *c)
{
    return c->wstring_ros;
}
