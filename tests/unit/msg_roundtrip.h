/* Round trip for the CDR tests: a payload decoded to JSON, encoded again with the same
 * encapsulation kind (rl_msg_encode_json_text), must decode to the same JSON. Members
 * missing from a cut-off appendable payload (null where no optional is) cannot be
 * encoded; those payloads are only checked to fail cleanly. */
#ifndef MSG_ROUNDTRIP_H
#define MSG_ROUNDTRIP_H

#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/msgdef.h"

#include <stdlib.h>
#include <string.h>

static inline void msg_roundtrip(const rl_msgdef *d, const uint8_t *payload, const char *json)
{
    uint8_t *enc = NULL;
    size_t n = 0;
    int rc = rl_msg_encode_json_text(d, json, strlen(json), payload[1], &enc, &n);
    if (rc != RL_OK) {
        assert_non_null(strstr(json, "null"));
        assert_non_null(strstr(rl_error_last(), "field '"));
        return;
    }
    char *buf = NULL;
    size_t cap = 0, len = 0;
    rc = rl_msg_to_json(d, enc, n, &buf, &cap, &len);
    if (rc != RL_OK)
        print_message("re-decoding failed: %s\n", rl_error_last());
    assert_int_equal(rc, RL_OK);
    assert_string_equal(buf, json);
    assert_int_equal(n % 4, 0);
    free(buf);
    free(enc);
}

#endif
