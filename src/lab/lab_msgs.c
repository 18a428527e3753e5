/* runlab's own message set (idl/runlab_msgs.idl, compiled by idlc) and the ROS 2 types it
 * speaks (lab_ros_types.idl: rosgraph_msgs/Clock for /clock) as the recorder knows them: when
 * a writer of one of these types sends no type information (a writer in the recorder's own
 * process, or a ROS 2 node), the schema comes from here. */
#include "lab/lab_internal.h"

#include "runlab/error.h"

#include "lab_ros_types.h"
#include "runlab_msgs.h"

#include <string.h>

static const dds_topic_descriptor_t *const builtin[] = {
    &runlab_msgs_msg_dds__Header__desc,
    &runlab_msgs_msg_dds__Pose2D__desc,
    &runlab_msgs_msg_dds__VehicleState__desc,
    &runlab_msgs_msg_dds__VehicleObservation__desc,
    &runlab_msgs_msg_dds__TrajectoryPoint__desc,
    &runlab_msgs_msg_dds__VehicleCommandTrajectory__desc,
    &runlab_msgs_msg_dds__PathPoint__desc,
    &runlab_msgs_msg_dds__VehicleCommandPathTracking__desc,
    &runlab_msgs_msg_dds__VehicleCommandSpeedCurvature__desc,
    &runlab_msgs_msg_dds__VehicleCommandDirect__desc,
    &runlab_msgs_msg_dds__SystemTrigger__desc,
    &runlab_msgs_msg_dds__ReadyStatus__desc,
    &runlab_msgs_msg_dds__StopRequest__desc,
    &runlab_msgs_msg_dds__RecordingState__desc,
    &runlab_msgs_msg_dds__ParameterSnapshot__desc,
    &runlab_msgs_msg_dds__MapAnnouncement__desc,
    &runlab_msgs_msg_dds__ControlHeartbeat__desc,
    &runlab_msgs_srv_dds__PrepareRecording_Request__desc,
    &runlab_msgs_srv_dds__PrepareRecording_Response__desc,
    &runlab_msgs_srv_dds__BeginRecording_Request__desc,
    &runlab_msgs_srv_dds__BeginRecording_Response__desc,
    &runlab_msgs_srv_dds__FinishRecording_Request__desc,
    &runlab_msgs_srv_dds__FinishRecording_Response__desc,
    &rosgraph_msgs_msg_dds__Clock__desc,
};

char *lab_builtin_schema(const char *type_name)
{
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
        const dds_topic_descriptor_t *d = builtin[i];
        if (strcmp(d->m_typename, type_name) != 0)
            continue;
        char *idl = NULL;
        if (rl_lab_schema_from_type_mapping(d->type_mapping.data, d->type_mapping.sz, type_name,
                                            &idl) < 0)
            return NULL;
        return idl;
    }
    return NULL;
}
