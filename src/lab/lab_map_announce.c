/* The map announcement (rt/lab/map): a node that drives on a map file (the simulator) says
 * which, as an absolute path and the SHA-256 of its bytes, transient-local so that a control
 * flow started later learns it too and can record the run with that map. */
#include "lab/lab_internal.h"

#include "runlab/error.h"
#include "runlab/hash.h"
#include "runlab/time.h"

#include "runlab_msgs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int lab_map_announce(dds_entity_t participant, const char *map_path)
{
    char abs[PATH_MAX];
    if (!realpath(map_path, abs))
        return rl_error_set_errno(RL_ENOENT, errno, "map announcement: %s", map_path);
    uint8_t digest[RL_SHA256_LEN];
    uint64_t size = 0;
    int rc = rl_sha256_file(abs, digest, &size);
    if (rc < 0)
        return rc;
    char hex[2 * RL_SHA256_LEN + 1];
    for (size_t i = 0; i < RL_SHA256_LEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    dds_entity_t t = dds_create_topic(participant, &runlab_msgs_msg_dds__MapAnnouncement__desc,
                                      RL_LAB_TOPIC_MAP, NULL, NULL);
    dds_qos_t *q = lab_qos(1, 1);
    dds_entity_t w = t < 0 ? t : dds_create_writer(participant, t, q, NULL);
    dds_delete_qos(q);
    if (w < 0)
        return lab_dds_fail(w, "map announcement writer");
    runlab_msgs_msg_dds__MapAnnouncement_ m = {.path = abs, .sha256 = hex,
                                               .stamp = (uint64_t)rl_time_now_ns()};
    dds_return_t wr = dds_write(w, &m);
    return wr < 0 ? lab_dds_fail(wr, "map announcement") : RL_OK;
}
