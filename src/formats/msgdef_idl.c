/* The OMG IDL schema parser (MCAP "omgidl"): modules, structs, enums, unions, typedefs,
 * constants, arrays, sequences and the XTypes annotations, into the type model of
 * runlab/msgdef.h. */
#include "msgdef_internal.h"

#include "runlab/error.h"

int msgdef_parse_idl(rl_msgdef *d, const char *name, const char *text, size_t len)
{
    (void)d;
    (void)text;
    (void)len;
    return rl_error_set(RL_EUNSUPPORTED, "schema '%s': omgidl is not supported yet", name);
}
