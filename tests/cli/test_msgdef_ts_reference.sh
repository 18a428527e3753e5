# `runlab mcap cat --json` decodes messages exactly as the TypeScript reference decoders do:
# an MCAP of ROS 2 messages written by @foxglove/rosmsg2-serialization (PoseStamped,
# PoseWithCovarianceStamped, PointCloud2, TFMessage and a message of every primitive,
# array and string kind, with NaN, ±Infinity, -0 and 64-bit extremes), and one of omgidl
# messages written by @foxglove/omgidl-serialization and @foxglove/cdr (enums, unions,
# typedefs, constants in bounds), are decoded by runlab and by the reference readers and
# compared field by field (msgdef_ts_ref.cjs). So are files whose payloads runlab's own
# encoder wrote (tools/mcap-msg-sample) in CDR_LE, CDR_BE and CDR2_LE; not D_CDR2 or
# PL_CDR2, which @foxglove/rosmsg2-serialization reads without their DHEADER/EMHEADERs
# (those kinds are checked against hand-made payloads in tests/unit/test_cdr.c).
# Skips (77) without node or the npm packages ($RUNLAB_NODE_MODULES, default
# ~/.cache/runlab/node_modules; scripts/install-deps.sh installs them).
set -u
BIN="${RUNLAB_BIN:?RUNLAB_BIN not set}"
HERE="$(cd "$(dirname "$0")" && pwd)"
NODE_MODULES="${RUNLAB_NODE_MODULES:-$HOME/.cache/runlab/node_modules}"
if ! command -v node >/dev/null 2>&1; then
    echo "FAIL: node is missing (scripts/install-deps.sh installs it)"
    exit 1
fi
if ! NODE_PATH="$NODE_MODULES" node -e 'require("@mcap/core"); require("@foxglove/rosmsg"); require("@foxglove/rosmsg2-serialization"); require("@foxglove/omgidl-parser"); require("@foxglove/omgidl-serialization"); require("@foxglove/cdr")' 2>/dev/null; then
    echo "FAIL: @mcap/core or a @foxglove reference decoder (rosmsg, rosmsg2-serialization, omgidl-parser, omgidl-serialization, cdr) not found in $NODE_MODULES (scripts/install-deps.sh installs them)"
    exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ref() { NODE_PATH="$NODE_MODULES" node "$HERE/msgdef_ts_ref.cjs" "$@"; }
failures=0
for kind in ros2 idl; do
    ref "make-$kind" "$TMP/$kind.mcap" || failures=$((failures + 1))
    if ! "$BIN/runlab" mcap cat "$TMP/$kind.mcap" --json >"$TMP/$kind.ndjson" 2>"$TMP/err"; then
        echo "FAIL: runlab mcap cat $kind: $(cat "$TMP/err")"
        failures=$((failures + 1))
    fi
    ref compare "$TMP/$kind.mcap" "$TMP/$kind.ndjson" || failures=$((failures + 1))
done
for args in "--set ros2 --kind 1" "--set ros2 --kind 0" "--set ros2 --kind 7" "--set idl"; do
    rm -f "$TMP/enc.mcap"
    # shellcheck disable=SC2086
    if ! "$BIN/mcap-msg-sample" "$TMP/enc.mcap" $args --messages 20 ||
       ! "$BIN/runlab" mcap cat "$TMP/enc.mcap" --json >"$TMP/enc.ndjson"; then
        echo "FAIL: runlab-encoded file ($args)"
        failures=$((failures + 1))
        continue
    fi
    ref compare "$TMP/enc.mcap" "$TMP/enc.ndjson" || failures=$((failures + 1))
done
[ "$failures" -eq 0 ] && echo "all messages decode as the reference decoders do" || echo "$failures failed"
[ "$failures" -eq 0 ]
