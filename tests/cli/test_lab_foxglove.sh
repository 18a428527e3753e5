# A bag recorded over DDS decodes in Foxglove's own decoder (@foxglove/omgidl-parser and
# @foxglove/omgidl-serialization, as Foxglove and Lichtblick call them), equal to what the
# publisher of types runlab was not built with sent (@final and @appendable), and the
# simulator's runlab_msgs too. Loopback only, a domain of its own. Skips (77) without node
# or the npm packages (looked up in $RUNLAB_NODE_MODULES, default ~/.cache/runlab/node_modules):
#   npm install --prefix ~/.cache/runlab @mcap/core @foxglove/wasm-zstd @foxglove/wasm-lz4 \
#       @foxglove/omgidl-parser @foxglove/omgidl-serialization
. "$(dirname "$0")/lib.sh"
HERE="$(cd "$(dirname "$0")" && pwd)"
NODE_MODULES="${RUNLAB_NODE_MODULES:-$HOME/.cache/runlab/node_modules}"
if ! command -v node >/dev/null 2>&1; then
    echo "FAIL: node is missing (scripts/install-deps.sh installs it)"
    exit 1
fi
if ! NODE_PATH="$NODE_MODULES" node -e 'require("@mcap/core"); require("@foxglove/wasm-zstd"); require("@foxglove/wasm-lz4"); require("@foxglove/omgidl-parser"); require("@foxglove/omgidl-serialization")' 2>/dev/null; then
    echo "FAIL: @mcap/core, @foxglove/omgidl-parser or -serialization not found in $NODE_MODULES (scripts/install-deps.sh installs them)"
    exit 1
fi
test_domain
export RUNLAB_HOME="$TMP/home"

# Record the test publisher (20 samples per topic) and two simulated vehicles.
"$RUNLAB" sim --domain "$DOMAIN" --vehicles 2 >/dev/null 2>"$TMP/sim.err" &
sim=$!
"$RUNLAB" experiment --domain "$DOMAIN" --vehicles 1,2 --duration 300 --topic 'rt/test/*' \
    >"$TMP/exp.out" 2>"$TMP/exp.err" &
exp=$!
wait_for "$TMP/exp.err" "START; running"
"$RUNLAB_BIN/lab_test_pub" "$DOMAIN" 20
rc=$?
check "test publisher done" rc_is 0
sleep 1
kill -INT "$exp"
wait "$exp"
rc=$?
out=$(cat "$TMP/exp.out")
err=$(cat "$TMP/exp.err")
check "experiment stopped by Ctrl-C exits 0" rc_is 0
dir=$(tail -n 1 <<<"$out")
wait "$sim"
bag=$(ls "$dir"/bag/*.mcap)
NODE_PATH="$NODE_MODULES" node "$HERE/lab_decode.cjs" "$bag" >"$TMP/decoded.ndjson"
rc=$?
check "every message decodes in Foxglove's decoder" rc_is 0
python3 - "$TMP/decoded.ndjson" <<'PY'
import json, sys
final, app, states = {}, {}, 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    m = r["msg"]
    if r["topic"] == "rt/test/final":
        final[int(m["seq"])] = m
    elif r["topic"] == "rt/test/appendable":
        app[int(m["seq"])] = m
    elif r["topic"].endswith("/state"):
        assert m["vehicle_id"] in (1, 2), m
        assert 0 <= m["pose"]["x"] <= 4.5 and 0 <= m["pose"]["y"] <= 4.0, m
        assert m["is_real"] is False, m
        states += 1
assert sorted(final) == list(range(20)), sorted(final)
assert sorted(app) == list(range(20)), sorted(app)
for i in range(20):
    f = final[i]
    n = 0 if i % 3 == 0 else i % 3
    want_vals = [i + 0.5, i * 2.0][:n]
    assert f["id"] == 7 and f["label"] == f"sample-{i}", f
    assert [float(v) for v in f["values"]] == want_vals, f
    assert f["pos"] == {"x": i, "y": -i, "z": 0.25}, f
    assert f["mode"] == i % 3, f
    a = app[i]
    assert a["id"] == 9 and a["label"] == f"app-{i}", a
    assert [float(v) for v in a["values"]] == [i, i + 1, i + 2], a
assert states > 0
print(f"decoded: 20 final, 20 appendable, {states} vehicle states")
PY
rc=$?
check "decoded values equal what was published" rc_is 0
finish
