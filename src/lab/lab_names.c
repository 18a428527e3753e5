/* The lab's names the ROS 2 way (rmw_cyclonedds's layout): topics under "rt", service
 * request and reply topics under "rq"/"rr", types in "pkg::msg::dds_::T_", and the '*'
 * patterns that choose which discovered topics the recorder records. */
#include "runlab/error.h"
#include "runlab/lab.h"

#include <stdio.h>
#include <string.h>

static int put(char *out, size_t cap, const char *what, const char *name, int n)
{
    if (n < 0 || (size_t)n >= cap)
        return rl_error_set(RL_ERANGE, "%s of \"%s\": does not fit in %zu bytes", what, name, cap);
    (void)out;
    return RL_OK;
}

int rl_lab_ros_topic(const char *ros_name, char *out, size_t cap)
{
    if (!ros_name || ros_name[0] != '/' || !out)
        return rl_error_set(RL_EINVAL, "ROS 2 topic \"%s\": must start with '/'",
                            ros_name ? ros_name : "(null)");
    return put(out, cap, "DDS topic", ros_name, snprintf(out, cap, "rt%s", ros_name));
}

int rl_lab_ros_type(const char *ros_type, char *out, size_t cap)
{
    const char *a = ros_type ? strchr(ros_type, '/') : NULL;
    const char *b = a ? strchr(a + 1, '/') : NULL;
    if (!a || !b || a == ros_type || b == a + 1 || !b[1] || strchr(b + 1, '/') || !out)
        return rl_error_set(RL_EINVAL, "ROS 2 type \"%s\": expected package/msg/Type",
                            ros_type ? ros_type : "(null)");
    int n = snprintf(out, cap, "%.*s::%.*s::dds_::%s_", (int)(a - ros_type), ros_type,
                     (int)(b - a - 1), a + 1, b + 1);
    return put(out, cap, "DDS type", ros_type, n);
}

int rl_lab_ros_service(const char *ros_service, char *request_topic, char *reply_topic,
                       size_t cap)
{
    if (!ros_service || ros_service[0] != '/' || !request_topic || !reply_topic)
        return rl_error_set(RL_EINVAL, "ROS 2 service \"%s\": must start with '/'",
                            ros_service ? ros_service : "(null)");
    int rc = put(request_topic, cap, "request topic", ros_service,
                 snprintf(request_topic, cap, "rq%sRequest", ros_service));
    if (rc < 0)
        return rc;
    return put(reply_topic, cap, "reply topic", ros_service,
               snprintf(reply_topic, cap, "rr%sReply", ros_service));
}

int rl_lab_topic_match(const char *pattern, const char *topic)
{
    /* Iterative glob with one backtrack point: linear in practice, never recursive. */
    const char *p = pattern, *t = topic, *star = NULL, *resume = NULL;
    while (*t) {
        if (*p == '*') {
            star = p++;
            resume = t;
        } else if (*p == *t) {
            p++;
            t++;
        } else if (star) {
            p = star + 1;
            t = ++resume;
        } else {
            return 0;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

int rl_lab_vehicle_topic(int vehicle_id, const char *what, char *out, size_t cap)
{
    int n = snprintf(out, cap, "rt/vehicle/%d/%s", vehicle_id, what);
    return put(out, cap, "vehicle topic", what, n);
}
