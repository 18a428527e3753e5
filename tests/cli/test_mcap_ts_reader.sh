# Files written by runlab's MCAP writer (tools/mcap-sample) must read back with the same
# messages in the reference TypeScript reader @mcap/core, streamed and indexed, for every
# compression, chunked and not. Skips (77) without node or the npm packages, which are
# looked up in $RUNLAB_NODE_MODULES (default ~/.cache/runlab/node_modules); install with:
#   npm install --prefix ~/.cache/runlab @mcap/core @foxglove/wasm-zstd @foxglove/wasm-lz4
set -u
BIN="${RUNLAB_BIN:?RUNLAB_BIN not set}"
HERE="$(cd "$(dirname "$0")" && pwd)"
NODE_MODULES="${RUNLAB_NODE_MODULES:-$HOME/.cache/runlab/node_modules}"
if ! command -v node >/dev/null 2>&1; then
    echo "FAIL: node is missing (scripts/install-deps.sh installs it)"
    exit 1
fi
if ! NODE_PATH="$NODE_MODULES" node -e 'require("@mcap/core"); require("@foxglove/wasm-zstd"); require("@foxglove/wasm-lz4")' 2>/dev/null; then
    echo "FAIL: @mcap/core, @foxglove/wasm-zstd or @foxglove/wasm-lz4 not found in $NODE_MODULES (scripts/install-deps.sh installs them)"
    exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
N=3001
check() { # check NAME MODE SAMPLE-ARGS...
    local name=$1 mode=$2
    shift 2
    if ! "$BIN/mcap-sample" "$TMP/$name.mcap" --messages "$N" "$@"; then
        echo "FAIL: mcap-sample $name"
        failures=$((failures + 1))
        return
    fi
    if ! NODE_PATH="$NODE_MODULES" node "$HERE/mcap_ts_check.cjs" "$TMP/$name.mcap" "$N" "$mode"; then
        failures=$((failures + 1))
    fi
}
check zstd indexed --compression zstd --chunk-size 4096
check lz4 indexed --compression lz4 --chunk-size 4096
check none indexed --compression none --chunk-size 4096
check zstd-one-chunk indexed --compression zstd
check unchunked streamed --unchunked
check no-summary streamed --compression lz4 --no-summary
[ "$failures" -eq 0 ] && echo "all files read back in @mcap/core" || echo "$failures failed"
[ "$failures" -eq 0 ]
