# `runlab mcap cat --json` decodes messages exactly as the TypeScript reference decoders do:
# an MCAP of ROS 2 messages written by @foxglove/rosmsg2-serialization (PoseStamped,
# PoseWithCovarianceStamped, PointCloud2, TFMessage and a message of every primitive,
# array and string kind, with NaN, ±Infinity, -0 and 64-bit extremes) is decoded by
# runlab and by the reference reader, and compared field by field (msgdef_ts_ref.cjs).
# Skips (77) without node or the npm packages ($RUNLAB_NODE_MODULES, default
# ~/.cache/runlab/node_modules; scripts/install-deps.sh installs them).
set -u
BIN="${RUNLAB_BIN:?RUNLAB_BIN not set}"
HERE="$(cd "$(dirname "$0")" && pwd)"
NODE_MODULES="${RUNLAB_NODE_MODULES:-$HOME/.cache/runlab/node_modules}"
if ! command -v node >/dev/null 2>&1; then
    echo "SKIP: node not installed"
    exit 77
fi
if ! NODE_PATH="$NODE_MODULES" node -e 'require("@mcap/core"); require("@foxglove/rosmsg"); require("@foxglove/rosmsg2-serialization")' 2>/dev/null; then
    echo "SKIP: @mcap/core, @foxglove/rosmsg or @foxglove/rosmsg2-serialization not found in $NODE_MODULES"
    exit 77
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ref() { NODE_PATH="$NODE_MODULES" node "$HERE/msgdef_ts_ref.cjs" "$@"; }
failures=0
ref make-ros2 "$TMP/ros2.mcap" || failures=$((failures + 1))
if ! "$BIN/runlab" mcap cat "$TMP/ros2.mcap" --json >"$TMP/ros2.ndjson" 2>"$TMP/err"; then
    echo "FAIL: runlab mcap cat: $(cat "$TMP/err")"
    failures=$((failures + 1))
fi
ref compare "$TMP/ros2.mcap" "$TMP/ros2.ndjson" || failures=$((failures + 1))
[ "$failures" -eq 0 ] && echo "all messages decode as the reference decoders do" || echo "$failures failed"
[ "$failures" -eq 0 ]
