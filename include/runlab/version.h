/* runlab/version.h: the library's version, at compile time (the macros) and at run time
 * (rl_version), so a program can check that the librunlab it runs against is the one it
 * was built for. CMakeLists.txt reads the project version from these macros. */
#ifndef RUNLAB_VERSION_H
#define RUNLAB_VERSION_H

#include "runlab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RUNLAB_VERSION_MAJOR 0
#define RUNLAB_VERSION_MINOR 2
#define RUNLAB_VERSION_PATCH 0
/* One number for comparisons: MAJOR * 10000 + MINOR * 100 + PATCH (0.2.0 is 200). */
#define RUNLAB_VERSION_NUMBER \
    (RUNLAB_VERSION_MAJOR * 10000 + RUNLAB_VERSION_MINOR * 100 + RUNLAB_VERSION_PATCH)

/* The version of the librunlab actually running, as RUNLAB_VERSION_NUMBER computes it;
 * `major`, `minor`, `patch` (each may be NULL) receive its parts. Thread-safe. Its text
 * form with the build's git sha is rl_version_string (runlab/provenance.h). */
RL_API int rl_version(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif

#endif
