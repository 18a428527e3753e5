# The ROS 2 package runlab_msgs that runlab ships (idl/ros2/runlab_msgs, installed to
# PREFIX/share/runlab/ros2/runlab_msgs) is what scripts/ros2_package.py writes from the DDS
# message set idl/runlab_msgs.idl now, so the two cannot drift apart; `cmake --install` puts
# it (and the DDS IDL) under PREFIX/share/runlab.
. "$(dirname "$0")/lib.sh"
SRC="${RUNLAB_SOURCE:?}"
BUILD="${RUNLAB_BIN:?}/.."

python3 "$SRC/scripts/ros2_package.py" "$SRC/idl/runlab_msgs.idl" "$TMP/pkg" >"$TMP/gen.out" 2>&1
rc=$?
out=$(cat "$TMP/gen.out")
err=""
check "the generator runs" rc_is 0
diff -r "$TMP/pkg" "$SRC/idl/ros2/runlab_msgs" >"$TMP/diff.out" 2>&1
rc=$?
out=$(head -c 2000 "$TMP/diff.out")
check "idl/ros2/runlab_msgs is up to date (run scripts/ros2_package.py idl/ros2/runlab_msgs)" rc_is 0

P="$TMP/prefix"
# BUILD/install_manifest.txt is shared: tests installing from this tree take turns.
{
    flock 9
    cmake --install "$BUILD" --prefix "$P" >"$TMP/install.out" 2>&1
    rc=$?
} 9>>"$BUILD/.install.lock"
out=$(cat "$TMP/install.out")
check "cmake --install exits 0" rc_is 0
for f in share/runlab/ros2/runlab_msgs/package.xml share/runlab/ros2/runlab_msgs/CMakeLists.txt \
    share/runlab/ros2/runlab_msgs/msg/VehicleState.idl share/runlab/ros2/runlab_msgs/srv/PrepareRecording.idl \
    share/runlab/idl/runlab_msgs.idl; do
    check "installed: $f" test -s "$P/$f"
done
finish
