/* libFuzzer target for the schema parsers (runlab/msgdef.h): the first byte chooses
 * ros2msg or omgidl, the rest is the schema text. A schema that parses must format, and
 * decode a few payloads and compile a field path without crashing. */
#include "runlab/error.h"
#include "runlab/msgdef.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int idl = data[0] & 1;
    rl_msgdef *d = NULL;
    if (rl_msgdef_parse(&d, idl ? "omgidl" : "ros2msg", idl ? "T" : "pkg/msg/T",
                        (const char *)data + 1, size - 1) != RL_OK)
        return 0;
    char *text = NULL;
    if (rl_msgdef_format(d, &text) == RL_OK)
        free(text);
    static const uint8_t payloads[][24] = {
        {0x00, 0x01, 0x00, 0x00, 1, 0, 0, 0, 2, 0, 0, 0, 'a', 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0},
        {0x00, 0x09, 0x00, 0x00, 8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0x00, 0x0b, 0x00, 0x00, 8, 0, 0, 0, 0, 0, 0, 0x20, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0x00, 0x02, 0x00, 0x00, 0, 0, 4, 0, 1, 2, 3, 4, 0x3f, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    };
    char *buf = NULL;
    size_t cap = 0, n;
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++)
        rl_msg_to_json(d, payloads[i], sizeof payloads[i], &buf, &cap, &n);
    free(buf);
    const rl_msg_type *root = rl_msgdef_type(d, rl_msgdef_root(d));
    if (root && root->nmembers) {
        rl_msg_path *p = NULL;
        if (rl_msg_path_compile(&p, d, root->members[0].name) == RL_OK) {
            rl_msg_value v;
            rl_msg_path_get(p, payloads[0], sizeof payloads[0], &v);
            rl_msg_path_free(p);
        }
    }
    rl_msgdef_free(d);
    return 0;
}
