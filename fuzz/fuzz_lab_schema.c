/* libFuzzer target for the omgidl schema writer (rl_lab_schema_from_type_mapping), whose
 * input is a TypeMapping that arrives over the network from a DDS writer. Input: one byte
 * n, n bytes of type name, then the serialised TypeMapping (the seeds are idlc's mappings
 * of test and runlab types). Either a schema comes back (non-empty, NUL-terminated, naming
 * the type) or a refusal with a message; never a crash, a leak or undefined behaviour. A
 * schema that comes back also goes through the recorder's char search (lab_schema_has_char),
 * which must answer in time linear in the types however they share each other. */
#include "lab/lab_internal.h"

#include "runlab/error.h"
#include "runlab/lab.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || (size_t)data[0] + 1 > size)
        return 0;
    char name[256];
    memcpy(name, data + 1, data[0]);
    name[data[0]] = '\0';
    const uint8_t *map = data + 1 + data[0];
    size_t len = size - 1 - data[0];
    char *idl = NULL;
    int rc = rl_lab_schema_from_type_mapping(map, len, name, &idl);
    if (rc == RL_OK) {
        const char *last = strrchr(name, ':');
        if (!idl || !idl[0] || !strstr(idl, last ? last + 1 : name)) {
            fprintf(stderr, "schema without the type %s\n", name);
            abort();
        }
        (void)lab_schema_has_char(idl, name);
    } else if (idl || !rl_error_last()[0]) {
        fprintf(stderr, "refusal %d without a message or with output\n", rc);
        abort();
    }
    free(idl);
    return 0;
}
