/* Writes an MCAP of CDR messages encoded by runlab's own encoder (rl_msg_encode_json) from
 * known values, for the tests of `runlab mcap cat/export/schema` and the comparison with the
 * TypeScript reference decoders:
 *   mcap-msg-sample OUT.mcap [--kind N] [--set ros2|idl|all] [--messages N] [--cut-pose N]
 * --kind is the encapsulation of the ros2msg channels (1 CDR_LE default, 0 CDR_BE, 7 CDR2_LE,
 * 9 D_CDR2_LE...). Message i of /pose has position (i + 0.5, -i, 2i), stamp (100 + i, i).
 * Sets: ros2 = /pose and /odom_cov (PoseWithCovarianceStamped); idl = /idl (final struct with
 * an enum, a union, arrays; XCDR1); all = both plus /add_two_ints/_service_event (a rosbag2
 * service event) and /idl_mutable (mutable, appendable and optional members, PL_CDR2).
 * --cut-pose N stores only the first N bytes of each /pose payload (a malformed message). */
#include "runlab/error.h"
#include "runlab/mcap.h"
#include "runlab/msgdef.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B(s) ((rl_mcap_bytes){(const uint8_t *)(s), strlen(s)})
#define SEP "================================================================================\n"

static const char *const header_deps =
    SEP "MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n"
    SEP "MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"
    SEP "MSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n"
    SEP "MSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n"
    SEP "MSG: geometry_msgs/Quaternion\nfloat64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n";

static const char *const idl_text =
    "module sample {\n"
    "  enum Mode { IDLE, @value(5) RUN, STOP };\n"
    "  union Cmd switch (long) { case 1: double speed; case 2: string name; default: octet raw; };\n"
    "  struct Reading { Mode mode; Cmd cmd; float values[3]; sequence<short, 4> ids; string label; };\n"
    "  @appendable struct Part { long a; @optional string note; };\n"
    "  @mutable struct Status { @id(7) double level; @optional long code; sequence<Part> parts; Mode mode; };\n"
    "};\n";

typedef struct channel_def {
    const char *set, *topic, *schema_name, *encoding, *text;
    int idl_kind; /* encapsulation for IDL channels; -1: --kind */
} channel_def;

static int usage(void)
{
    fprintf(stderr, "usage: mcap-msg-sample OUT.mcap [--kind N] [--set ros2|idl|all] [--messages N] "
                    "[--cut-pose N]\n");
    return 2;
}

static void message_json(const char *topic, unsigned i, char *out, size_t cap)
{
    if (strcmp(topic, "/pose") == 0)
        snprintf(out, cap,
                 "{\"header\":{\"stamp\":{\"sec\":%u,\"nanosec\":%u},\"frame_id\":\"map\"},"
                 "\"pose\":{\"position\":{\"x\":%u.5,\"y\":-%u,\"z\":%u},"
                 "\"orientation\":{\"x\":0,\"y\":0,\"z\":0.25,\"w\":-0.0}}}",
                 100 + i, i, i, i, 2 * i);
    else if (strcmp(topic, "/odom_cov") == 0) {
        int n = snprintf(out, cap,
                         "{\"header\":{\"stamp\":{\"sec\":%u,\"nanosec\":7},\"frame_id\":\"odom\"},"
                         "\"pose\":{\"pose\":{\"position\":{\"x\":1e300,\"y\":\"NaN\",\"z\":\"-Infinity\"},"
                         "\"orientation\":{\"x\":0,\"y\":0,\"z\":0,\"w\":1}},\"covariance\":[",
                         i);
        for (int k = 0; k < 36 && n > 0 && (size_t)n < cap; k++)
            n += snprintf(out + n, cap - (size_t)n, "%s%d.%u", k ? "," : "", k, i);
        if (n > 0 && (size_t)n < cap)
            snprintf(out + n, cap - (size_t)n, "]}}");
    } else if (strcmp(topic, "/idl") == 0)
        snprintf(out, cap,
                 "{\"mode\":%u,\"cmd\":{\"_d\":%u,\"%s\":%s},\"values\":[0.1,-%u.25,3e38],"
                 "\"ids\":[%u,-2],\"label\":\"r\\u00e9ading \\\"%u\\\"\"}",
                 i % 2 ? 5u : 0u, i % 3 + 1, i % 3 == 0 ? "speed" : i % 3 == 1 ? "name" : "raw",
                 i % 3 == 0 ? "1.5" : i % 3 == 1 ? "\"go\"" : "255", i, i, i);
    else if (strcmp(topic, "/idl_mutable") == 0)
        snprintf(out, cap,
                 "{\"level\":%u.125,\"code\":%s,\"parts\":[{\"a\":%u,\"note\":\"n\"},{\"a\":-1,\"note\":null}],"
                 "\"mode\":\"STOP\"}",
                 i, i % 2 ? "null" : "42", i);
    else
        snprintf(out, cap,
                 "{\"info\":{\"event_type\":%u,\"stamp\":{\"sec\":%u,\"nanosec\":0},"
                 "\"client_gid\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],\"sequence_number\":%u},"
                 "\"request\":[{\"a\":%u,\"b\":-9007199254740993}],\"response\":%s}",
                 i % 4, i, i / 2, i, i % 4 >= 2 ? "[{\"sum\":-9223372036854775808}]" : "[]");
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') /* also --help: OUT comes first, never an option */
        return usage();
    int kind = RL_CDR_LE;
    unsigned nmsg = 5;
    const char *set = "all";
    size_t cut_pose = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc)
            kind = atoi(argv[++i]);
        else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc)
            set = argv[++i];
        else if (strcmp(argv[i], "--cut-pose") == 0 && i + 1 < argc)
            cut_pose = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--messages") == 0 && i + 1 < argc)
            nmsg = (unsigned)strtoul(argv[++i], NULL, 10);
        else
            return usage();
    }
    static char pose_text[2048], cov_text[2048];
    snprintf(pose_text, sizeof pose_text, "std_msgs/Header header\ngeometry_msgs/Pose pose\n%s", header_deps);
    snprintf(cov_text, sizeof cov_text,
             "std_msgs/Header header\nPoseWithCovariance pose\n" SEP
             "MSG: geometry_msgs/PoseWithCovariance\nPose pose\nfloat64[36] covariance\n%s",
             header_deps);
    const channel_def chans[] = {
        {"ros2", "/pose", "geometry_msgs/msg/PoseStamped", "ros2msg", pose_text, -1},
        {"ros2", "/odom_cov", "geometry_msgs/msg/PoseWithCovarianceStamped", "ros2msg", cov_text, -1},
        {"idl", "/idl", "sample::Reading", "omgidl", idl_text, RL_CDR_LE},
        {"all", "/add_two_ints/_service_event", "example_interfaces/srv/AddTwoInts_Event", "ros2msg",
         "int64 a\nint64 b\n---\nint64 sum\n", -1},
        {"all", "/idl_mutable", "sample::Status", "omgidl", idl_text, RL_PL_CDR2_LE},
    };
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    rl_mcap_writer *w = NULL;
    int rc = rl_mcap_writer_open_path(&w, argv[1], &o);
    rl_msgdef *defs[5] = {0};
    int used[5] = {0};
    uint16_t id = 0;
    for (size_t c = 0; c < 5 && rc == RL_OK; c++) {
        used[c] = strcmp(set, "all") == 0 || strcmp(set, chans[c].set) == 0;
        if (!used[c])
            continue;
        id++;
        rc = rl_msgdef_parse(&defs[c], chans[c].encoding, chans[c].schema_name, chans[c].text,
                             strlen(chans[c].text));
        rl_mcap_schema s = {id, B(chans[c].schema_name), B(chans[c].encoding), B(chans[c].text)};
        if (rc == RL_OK)
            rc = rl_mcap_writer_add_schema(w, &s);
        rl_mcap_channel ch;
        memset(&ch, 0, sizeof ch);
        ch.id = id;
        ch.schema_id = id;
        ch.topic = B(chans[c].topic);
        ch.message_encoding = B("cdr");
        if (rc == RL_OK)
            rc = rl_mcap_writer_add_channel(w, &ch);
    }
    char json[4096];
    uint32_t seq = 0;
    for (unsigned i = 0; i < nmsg && rc == RL_OK; i++) {
        id = 0;
        for (size_t c = 0; c < 5 && rc == RL_OK; c++) {
            if (!used[c])
                continue;
            id++;
            message_json(chans[c].topic, i, json, sizeof json);
            uint8_t *data = NULL;
            size_t len = 0;
            rc = rl_msg_encode_json_text(defs[c], json, strlen(json),
                                         chans[c].idl_kind < 0 ? kind : chans[c].idl_kind, &data, &len);
            if (cut_pose && c == 0 && len > cut_pose)
                len = cut_pose;
            rl_mcap_message m = {.channel_id = id, .sequence = seq, .log_time = 1000 + seq,
                                 .publish_time = 2000 + seq, .data = {data, len}};
            seq++;
            if (rc == RL_OK)
                rc = rl_mcap_writer_add_message(w, &m);
            free(data);
        }
    }
    if (rc == RL_OK) {
        rc = rl_mcap_writer_close(w); /* frees the writer */
        w = NULL;
    }
    rl_mcap_writer_free(w);
    for (size_t c = 0; c < 5; c++)
        rl_msgdef_free(defs[c]);
    if (rc != RL_OK) {
        fprintf(stderr, "mcap-msg-sample: %s\n", rl_error_last());
        return 1;
    }
    return 0;
}
