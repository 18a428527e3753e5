/* The run-time half of runlab/version.h: the version of the library that is running,
 * compiled from the same macros a program sees at compile time. */
#include "runlab/version.h"

#include <stddef.h>

int rl_version(int *major, int *minor, int *patch)
{
    if (major != NULL)
        *major = RUNLAB_VERSION_MAJOR;
    if (minor != NULL)
        *minor = RUNLAB_VERSION_MINOR;
    if (patch != NULL)
        *patch = RUNLAB_VERSION_PATCH;
    return RUNLAB_VERSION_NUMBER;
}
