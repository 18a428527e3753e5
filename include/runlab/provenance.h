/* runlab/provenance.h: where a result came from. One struct holds the build (version,
 * git sha and dirty flag captured at build time, build type, compiler) and the machine
 * (host name, CPU model and cores, OS); one function turns it into a JSON object that
 * is then written as JSON or YAML, so both forms always carry the same fields. */
#ifndef RUNLAB_PROVENANCE_H
#define RUNLAB_PROVENANCE_H

#include "runlab/export.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct json_object;

typedef struct rl_provenance {
    char version[32];     /* runlab version, "0.2.0" */
    char git_sha[48];     /* full commit sha the library was built from, or "unknown" */
    bool git_dirty;       /* tracked files differed from that commit at build time */
    char build_type[24];  /* CMake build type: Release, asan, ... */
    char compiler[64];    /* "GNU-12.2.0" */
    char host[256];       /* host name */
    char cpu_model[128];  /* /proc/cpuinfo "model name", or "unknown" */
    int cpu_cores;        /* online logical CPUs */
    char os[192];         /* "Linux 6.1.0-18-amd64 x86_64 (Debian GNU/Linux 12 (bookworm))" */
} rl_provenance;

/* Fills `out` with the build facts and reads the machine facts. Never fails: a fact
 * that cannot be read is "unknown" (or 0 cores). Thread-safe. */
RL_API void rl_provenance_collect(rl_provenance *out);

/* "0.2.0 (git 1a2b3c4d5e6f, dirty)": the version line of `runlab --version`. Static
 * storage, thread-safe. */
RL_API const char *rl_version_string(void);

/* The build's git sha ("unknown" outside a git checkout) and dirty flag. */
RL_API const char *rl_build_sha(void);
RL_API bool rl_build_is_dirty(void);

/* A new JSON object with every field (keys: version, git_sha, git_dirty, build_type,
 * compiler, host, cpu_model, cpu_cores, os), owned by the caller (json_object_put).
 * Returns NULL only when out of memory. Write it with rl_json_write_file or
 * rl_yaml_write_file, or add it under a key of a larger document. */
RL_API struct json_object *rl_provenance_to_json(const rl_provenance *prov);

#ifdef __cplusplus
}
#endif
#endif
