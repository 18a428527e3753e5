# ROS 2 tools see runlab's nodes: with `runlab sim` (2 vehicles) and `runlab experiment` (its
# client and the recorder it starts) on loopback in a domain of this script's own, a reader
# written from Cyclone DDS alone (ros_graph_listen: rmw_dds_common's ParticipantEntitiesInfo
# from its own IDL, no type information, as rmw_cyclonedds reads ros_discovery_info) finds
# every node announced by a live participant under that participant's GUID, with the GUIDs
# of real readers and writers of it (vehicle_<id>'s on rt/vehicle/<id>/...). The run is long
# (600 s) and ended by SIGINT once the reader is done, so every node stays up while it looks;
# waits are bounded and generous, no outcome depends on speed.
. "$(dirname "$0")/lib.sh"
test_domain
LISTEN="${RUNLAB_BIN}/ros_graph_listen"
export RUNLAB_HOME="$TMP/home"
mkdir -p "$RUNLAB_HOME"


"$RUNLAB" sim --domain "$DOMAIN" --vehicles 2 --duration 600 >"$TMP/sim.out" 2>"$TMP/sim.err" &
sim=$!
"$RUNLAB" experiment --domain "$DOMAIN" --vehicles 1,2 --duration 600 >"$TMP/exp.out" 2>"$TMP/exp.err" &
exp=$!
wait_for "$TMP/exp.err" "START; running"

"$LISTEN" "$DOMAIN" 120 /runlab_sim /vehicle_1 /vehicle_2 /runlab_recorder /runlab_experiment \
    >"$TMP/graph.out" 2>&1
rc=$?
out=$(cat "$TMP/graph.out")
err=""
check "every runlab node is in the ROS 2 graph" rc_is 0
check "the simulator's node" out_has "NODE /runlab_sim participant="
check "one node per simulated vehicle" grep -q "^NODE /vehicle_2 participant=.* readers=4 writers=3$" <<<"$out"
check "the recorder's node" out_has "NODE /runlab_recorder participant="
check "the experiment's node" out_has "NODE /runlab_experiment participant="
sim_pp=$(sed -n 's/^NODE \/runlab_sim participant=\([0-9a-f]*\).*/\1/p' <<<"$out")
check "the vehicles' nodes are the simulator participant's" grep -q "^NODE /vehicle_1 participant=$sim_pp " <<<"$out"
rec_pp=$(sed -n 's/^NODE \/runlab_recorder participant=\([0-9a-f]*\).*/\1/p' <<<"$out")
check "the recorder is a participant of its own" test -n "$rec_pp" -a "$rec_pp" != "$sim_pp"

kill -INT "$exp"
wait "$exp"
rc=$?
check "the experiment ends on SIGINT" rc_is 0
wait "$sim"
rc=$?
check "the simulator ends at STOP" rc_is 0
finish
