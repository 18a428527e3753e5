/* What the lab benchmarks (bench_lab.c, bench_lab_capacity.c) share: the loopback-only
 * Cyclone DDS configuration they set, and the DDS domain they run in: `--domain N`, else
 * $RUNLAB_BENCH_DOMAIN, else 232 (outside the tests' 100..230). Header-only (static
 * inline), like bench_util.h. */
#ifndef RL_BENCH_LAB_COMMON_H
#define RL_BENCH_LAB_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_LAB_DEFAULT_DOMAIN 232

/* Loopback only: no multicast, unicast discovery of peers on 127.0.0.1. */
static const char bench_lab_loopback_config[] =
    "<CycloneDDS><Domain id=\"any\"><General><Interfaces><NetworkInterface name=\"lo\"/>"
    "</Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery>"
    "<ParticipantIndex>auto</ParticipantIndex><Peers><Peer address=\"127.0.0.1\"/></Peers>"
    "</Discovery></Domain></CycloneDDS>";

/* A DDS domain id (0..232) from `text`, or -1. */
static inline int bench_lab_parse_domain(const char *text)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);
    return *text && !*end && v >= 0 && v <= 232 ? (int)v : -1;
}

/* The domain to run in: takes `--domain N` (or `--domain=N`) out of argv (so the caller
 * parses the rest), else $RUNLAB_BENCH_DOMAIN, else BENCH_LAB_DEFAULT_DOMAIN. On a bad
 * value prints what and where on stderr (prefixed with `prog`) and returns -1. */
static inline int bench_lab_domain(const char *prog, int *argc, char **argv)
{
    const char *text = NULL, *where = NULL;
    for (int i = 1; i < *argc; i++) {
        int used = 0;
        if (strcmp(argv[i], "--domain") == 0) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "%s: --domain needs a value (a DDS domain id 0..232)\n", prog);
                return -1;
            }
            text = argv[i + 1];
            used = 2;
        } else if (strncmp(argv[i], "--domain=", 9) == 0) {
            text = argv[i] + 9;
            used = 1;
        }
        if (used) {
            where = "--domain";
            memmove(&argv[i], &argv[i + used], (size_t)(*argc - i - used + 1) * sizeof *argv);
            *argc -= used;
            i--;
        }
    }
    if (!text && (text = getenv("RUNLAB_BENCH_DOMAIN")) && *text)
        where = "RUNLAB_BENCH_DOMAIN";
    if (!where)
        return BENCH_LAB_DEFAULT_DOMAIN;
    int domain = bench_lab_parse_domain(text);
    if (domain < 0)
        fprintf(stderr, "%s: %s: '%s' is not a DDS domain id (0..232)\n", prog, where, text);
    return domain;
}

#endif
