/* Build and machine provenance behind runlab/provenance.h. Build facts come from the
 * generated build_info.c; machine facts from uname, /proc/cpuinfo and /etc/os-release. */
#include "runlab/provenance.h"

#include "core/build_info.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src && *src ? src : "unknown");
}

/* Value of the first line "key<spaces>: value" (cpuinfo) or key=value (os-release). */
static int read_keyed_line(const char *path, const char *key, char sep, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    size_t klen = strlen(key);
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *p = line + klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != sep)
            continue;
        p++;
        while (*p == ' ' || *p == '"')
            p++;
        size_t n = strcspn(p, "\"\n");
        p[n] = '\0';
        snprintf(out, cap, "%s", p);
        found = 0;
        break;
    }
    fclose(f);
    return found;
}

void rl_provenance_collect(rl_provenance *out)
{
    memset(out, 0, sizeof *out);
    copy_str(out->version, sizeof out->version, rl_build_version);
    copy_str(out->git_sha, sizeof out->git_sha, rl_build_git_sha);
    out->git_dirty = rl_build_git_dirty != 0;
    copy_str(out->build_type, sizeof out->build_type, rl_build_type);
    copy_str(out->compiler, sizeof out->compiler, rl_build_compiler);

    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    copy_str(out->host, sizeof out->host, host);

    char cpu[128] = "";
    if (read_keyed_line("/proc/cpuinfo", "model name", ':', cpu, sizeof cpu) != 0)
        cpu[0] = '\0';
    copy_str(out->cpu_model, sizeof out->cpu_model, cpu);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    out->cpu_cores = cores > 0 ? (int)cores : 0;

    struct utsname u;
    char pretty[96] = "";
    read_keyed_line("/etc/os-release", "PRETTY_NAME", '=', pretty, sizeof pretty);
    if (uname(&u) == 0)
        snprintf(out->os, sizeof out->os, "%.32s %.64s %.16s%s%.64s%s", u.sysname, u.release,
                 u.machine, pretty[0] ? " (" : "", pretty, pretty[0] ? ")" : "");
    else
        copy_str(out->os, sizeof out->os, pretty);
}

const char *rl_build_sha(void) { return rl_build_git_sha; }

bool rl_build_is_dirty(void) { return rl_build_git_dirty != 0; }

static char version_line[128];
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

static void format_version_line(void)
{
    snprintf(version_line, sizeof version_line, "%s (git %.12s%s)", rl_build_version,
             rl_build_git_sha, rl_build_git_dirty ? ", dirty" : "");
}

const char *rl_version_string(void)
{
    pthread_once(&version_once, format_version_line);
    return version_line;
}

struct json_object *rl_provenance_to_json(const rl_provenance *p)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    json_object_object_add(o, "version", json_object_new_string(p->version));
    json_object_object_add(o, "git_sha", json_object_new_string(p->git_sha));
    json_object_object_add(o, "git_dirty", json_object_new_boolean(p->git_dirty));
    json_object_object_add(o, "build_type", json_object_new_string(p->build_type));
    json_object_object_add(o, "compiler", json_object_new_string(p->compiler));
    json_object_object_add(o, "host", json_object_new_string(p->host));
    json_object_object_add(o, "cpu_model", json_object_new_string(p->cpu_model));
    json_object_object_add(o, "cpu_cores", json_object_new_int(p->cpu_cores));
    json_object_object_add(o, "os", json_object_new_string(p->os));
    return o;
}
