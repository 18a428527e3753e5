# `runlab evaluate` and `runlab list` on recordings made by `runlab sim --offline`: a clean
# run passes; speeding, stall_topic and late_observation fail the matching check for the
# faulty vehicle over an interval recomputed here from the bag's own messages (`runlab mcap
# cat --json`), and nothing outside issue 15's fault table fails; a map hash mismatch, a
# bad configuration and usage errors exit 2; list shows runs newest first (text and JSON).
. "$(dirname "$0")/lib.sh"

H="$TMP/home"
export RUNLAB_HOME="$H"
MINE=topic_sanity,states_speed,obs
printf 'speed: 1.2\n' >"$TMP/spec.yaml"

sim() { # sim ARGS...: an offline run; sets $RUN
    run sim "$TMP/spec.yaml" --offline "$H" --vehicles 2 --duration 10 --seed 3 "$@"
    check "sim $* exits 0" rc_is 0
    RUN=$(tail -n 1 <<<"$out")
}

# json_check EXPR: evaluates a Python expression over the last evaluation's summary.json
# (bound to s) and the bag's messages as decoded by `runlab mcap cat --json` (msgs).
json_check() {
    local what=$1 expr=$2
    check "$what" python3 - "$RUN" "$expr" "$TMP/msgs-$(basename "$RUN").json" <<'PY'
import glob, json, subprocess, sys, os
run, expr, cache = sys.argv[1], sys.argv[2], sys.argv[3]
ev = sorted(glob.glob(os.path.join(run, "evaluations", "*")))[-1]
s = json.load(open(os.path.join(ev, "summary.json")))
bag = glob.glob(os.path.join(run, "bag", "*.mcap"))[0]
if not os.path.exists(cache):  # the bag decoded once per run
    lines = subprocess.run([os.environ["RUNLAB_BIN"] + "/runlab", "mcap", "cat", bag, "--json"],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    json.dump([json.loads(l) for l in lines], open(cache, "w"))
msgs = json.load(open(cache))
trig = {m["message"]["kind"]: m["message"]["stamp"] for m in msgs if m["topic"] == "rt/lab/system_trigger"}
start, stop = trig[1], trig[2]
def t(ns): return (ns - start) / 1e9
def inside(m): return start <= m["log_time"] <= stop
def series(topic): return [m for m in msgs if m["topic"] == topic and inside(m)]
def check(metric, name, vehicle):
    c = [c for c in s["checks"] if c["metric"] == metric and c["check"] == name and c["vehicles"] == [vehicle]]
    assert len(c) == 1, (metric, name, vehicle, len(c))
    return c[0]
def failing():
    return sorted({(c["metric"], c["check"], tuple(c["vehicles"])) for c in s["checks"] if c["status"] not in ("PASS", "N/A")})
ok = eval(expr.strip())
if not ok:
    print("  failing:", failing())
sys.exit(0 if ok else 1)
PY
}

# ---- a clean run ----
sim
run evaluate "$RUN" --metrics "$MINE"
check "clean run: exit 0" rc_is 0
check "clean run: result PASS" out_has "result: PASS"
json_check "clean run: passed, no failing check" 's["passed"] is True and failing() == []'
json_check "clean run: summary keys" \
    'all(set(c) >= {"metric","check","vehicles","status","value","threshold","unit","intervals","reason"} for c in s["checks"])'
json_check "clean run: the largest speed is the bag's" \
    'abs(check("states_speed","speed",1)["value"] - max(m["message"]["speed"] for m in series("rt/vehicle/1/state"))) < 1e-12'
ev=$(tail -n 1 <<<"$out")
check "evaluation directory is named YYYYmmddTHHMMSSZ" grep -Eq '/evaluations/[0-9]{8}T[0-9]{6}Z(_[0-9]+)?$' <<<"$ev"
for f in report.html checks.csv summary.json config.yaml figures/speed.png figures/speed.svg figures/speed.yaml; do
    check "clean run: $f written" test -s "$ev/$f"
done
check "clean run: summary.json, checks.csv and report.html agree cell by cell" \
    python3 "${RUNLAB_SOURCE:?}/tests/tools/eval_outputs_check.py" "$ev"
check "report is self-contained (no external script or image)" bash -c "! grep -Eq '<(script|img|link)[^>]+(src|href)=\"https?:' '$ev/report.html'"
clean=$RUN
clean_ev=$ev


# ---- speeding on vehicle 2 from 3 s to 7 s (1.2 m/s x 3 over the 3 m/s limit) ----
sim --fault speeding:2:3:7
run evaluate "$RUN" --metrics "$MINE"
check "speeding: exit 1" rc_is 1
# The simulator's speeding fault also accelerates at 3 m/s^2, the default acceleration
# limit: states_speed's acceleration check of vehicle 2 may fail too (same metric, row).
json_check "speeding: only states_speed of vehicle 2 fails, its speed check among them" \
    'set(failing()) <= {("states_speed","speed",(2,)),("states_speed","acceleration",(2,))} and ("states_speed","speed",(2,)) in failing()'
json_check "speeding: the interval is where the bag's speed exceeds 3 m/s" '
    (lambda c, over: c["status"] == "FAIL" and len(c["intervals"]) == 1
        and abs(c["intervals"][0][0] - t(over[0]["log_time"])) < 1e-9
        and abs(c["intervals"][0][1] - t(over[-1]["log_time"])) < 1e-9
        and 3.0 <= c["intervals"][0][0] and c["intervals"][0][1] <= 9.0)(
    check("states_speed","speed",2),
    [m for m in series("rt/vehicle/2/state") if m["message"]["speed"] > 3.0])'

check "speeding: summary.json, checks.csv and report.html agree cell by cell" \
    python3 "$RUNLAB_SOURCE/tests/tools/eval_outputs_check.py" "$(tail -n 1 <<<"$out")"

# What a reader sees: in a 1200 px wide browser the checks table fits the page (no column
# cut off behind a scroll bar), laid out by headless Chromium itself.
report_fits() {
    local page="$TMP/fits.html"
    sed 's|</body>|<script>window.onload=function(){var o=[];document.querySelectorAll(".scroll").forEach(function(d){o.push(d.scrollWidth+"/"+d.clientWidth)});var p=document.createElement("pre");p.id="fit";p.textContent=o.join(" ");document.body.appendChild(p)}</script></body>|' "$1/report.html" >"$page"
    local widths
    widths=$(timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --window-size=1200,900 \
        --dump-dom "file://$page" 2>/dev/null | sed -n 's|.*<pre id="fit">\([^<]*\)</pre>.*|\1|p')
    echo "info: table scroll/client widths at 1200 px: $widths"
    [ -n "$widths" ] && awk '{for (i = 1; i <= NF; i++) {split($i, w, "/"); if (w[1] + 0 > w[2] + 0) exit 1}}' <<<"$widths"
}
CHROMIUM=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$CHROMIUM" ]; then
    check "clean run: the checks table fits a 1200 px page in Chromium" report_fits "$clean_ev"
    check "speeding: the checks table fits a 1200 px page in Chromium" report_fits "$(tail -n 1 <<<"$out")"
else
    echo "skip: no chromium, the report's layout is not checked"
fi

# ---- stall_topic: vehicle 1 sends no states from 3 s to 5 s ----
sim --fault stall_topic:1:3:5
run evaluate "$RUN" --metrics "$MINE"
check "stall_topic: exit 1" rc_is 1
json_check "stall_topic: topic_sanity fails for vehicle 1 only (obs may)" \
    'set((c["metric"], c["check"], tuple(c["vehicles"])) for c in s["checks"] if c["status"] == "FAIL" and c["metric"] != "obs") <= {("topic_sanity","state largest gap",(1,)),("topic_sanity","state rate",(1,))} and ("topic_sanity","state largest gap",(1,)) in failing()'
# Issue 28.4: what was not seen cannot pass; the other checks are INSUFFICIENT naming the gap.
json_check "stall_topic: vehicle 1's other checks over its states are INSUFFICIENT, never PASS" \
    'all(c["status"] == "INSUFFICIENT" and "no data 2.98..5.02 s" in c["reason"] for c in s["checks"] if c["vehicles"] == [1] and c["metric"] == "states_speed")'

json_check "stall_topic: the gap is the bag's, covering 3..5 s" '
    (lambda c, ts: c["intervals"] == [[a, b] for a, b in zip(ts, ts[1:]) if b - a > 0.1]
        and c["intervals"][0][0] <= 3.0 and c["intervals"][0][1] >= 5.0)(
    check("topic_sanity","state largest gap",1), [t(m["log_time"]) for m in series("rt/vehicle/1/state")])'

# ---- late_observation: vehicle 2's observations stamped 0.5 s late from 2 s to 6 s ----
sim --fault late_observation:2:2:6
run evaluate "$RUN" --metrics "$MINE"
check "late_observation: exit 1" rc_is 1
json_check "late_observation: only obs fails, for vehicle 2" \
    'failing() != [] and all(f[0] == "obs" and f[2] == (2,) for f in failing())'
json_check "late_observation: age interval from the bag's stamps" '
    (lambda c, late: c["status"] == "FAIL" and abs(c["value"] - 0.5) < 1e-6
        and abs(c["intervals"][0][0] - t(late[0]["log_time"])) < 1e-9
        and abs(c["intervals"][-1][1] - t(late[-1]["log_time"])) < 1e-9)(
    check("obs","age",2),
    [m for m in series("rt/vehicle/2/observation") if (m["log_time"] - m["message"]["header"]["create_stamp"]) / 1e9 > 0.1])'

# ---- configuration ----
run evaluate --print-config
check "--print-config exits 0" rc_is 0
check "--print-config prints every metric's section" python3 -c '
import sys, yaml
d = yaml.safe_load(sys.stdin.read())
assert set(d) == {"topic_sanity","states_speed","obs","command_follow","vehicle_collision","boundary_violation","lanelet_collision"}, d.keys()
assert d["states_speed"]["max_speed"] == 3.0 and d["obs"]["max_age"] == 0.1' <<<"$out"
printf 'states_speed:\n  max_speed: 4\n' >"$TMP/cfg.yaml"
run evaluate "$RUN" --metrics states_speed --config "$TMP/cfg.yaml"
check "--config: exit 0 with a higher limit" rc_is 0
printf 'states_speed:\n  max_sped: 4\n' >"$TMP/bad.yaml"
run evaluate "$RUN" --config "$TMP/bad.yaml"
check "bad --config: exit 2 naming the key" bash -c '[ '"$rc"' -eq 2 ]'
check "bad --config: names the key" err_has "states_speed.max_sped: unknown key"
run evaluate "$RUN" --metrics nope
check "unknown metric: exit 2" rc_is 2
check "unknown metric: named" err_has "unknown metric 'nope'"

# ---- usage and unreadable runs ----
run evaluate
check "no RUN: exit 2" rc_is 2
run evaluate "$TMP/nowhere"
check "missing run: exit 2" rc_is 2
check "missing run: says what" err_has "neither a run directory nor a run id"
mkdir -p "$TMP/empty"
run evaluate "$TMP/empty"
check "a directory without a bag: exit 2" rc_is 2
run evaluate --help
check "--help exits 0 and lists the metrics" bash -c '[ '"$rc"' -eq 0 ] && grep -q states_speed <<<"$0"' "$out"

# ---- a run id resolves under RUNLAB_HOME ----
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]+"/manifest.json"))["run_id"])' "$clean")
run evaluate "$id" --metrics states_speed
check "run id resolves: exit 0" rc_is 0
check "run id resolves to its directory" out_has "$clean/evaluations/"

# ---- map hash mismatch ----
sim --map "$RUNLAB_SOURCE/data/maps/LabMapCommonRoad.xml"
run evaluate "$RUN" --metrics states_speed
check "run with a map: exit 0" rc_is 0
good=$(sha256sum "$RUN/map/runtime_map.bin" | cut -d' ' -f1)
python3 - "$RUN/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["map"]["runtime_map_sha256"] = "ab" * 32; json.dump(m, open(sys.argv[1], "w"))
PY
run evaluate "$RUN"
check "map hash mismatch: exit 2" rc_is 2
check "map hash mismatch: names the manifest's hash" err_has "$(printf 'ab%.0s' $(seq 32))"
check "map hash mismatch: names the file's hash" err_has "$good"

# ---- a runtime map of another layout version: compiled again from the recorded original ----
python3 - "$RUN" <<'PY'
import hashlib, json, sys
run = sys.argv[1]
with open(run + "/map/runtime_map.bin", "r+b") as f:
    f.seek(8); f.write((1).to_bytes(4, "little"))   # the header's version field
    f.seek(0); digest = hashlib.sha256(f.read()).hexdigest()
m = json.load(open(run + "/manifest.json")); m["map"]["runtime_map_sha256"] = digest
json.dump(m, open(run + "/manifest.json", "w"))
PY
run evaluate "$RUN" --metrics lanelet_collision
check "older runtime map: exit 0" rc_is 0
check "older runtime map: the summary says the map was compiled from the original" python3 -c '
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
notes = " ".join(s["notes"])
assert "not read by this build" in notes and "version 1" in notes and "LabMapCommonRoad.xml" in notes, notes
assert [c["status"] for c in s["checks"]] == ["PASS"] * len(s["checks"]) and s["checks"], s["checks"]' "$(tail -n 1 <<<"$out")"

# ---- runlab list ----
run list
check "list: exit 0" rc_is 0
check "list: newest first" python3 -c '
import sys
rows = [l.split()[0] for l in sys.stdin.read().splitlines()[1:]]
assert len(rows) == 5 and rows == sorted(rows, reverse=True), rows' <<<"$out"
run list --json "$H"
check "list --json: exit 0" rc_is 0
check "list --json: fields and evaluations" python3 -c '
import json, sys
runs = json.loads(sys.stdin.read())
assert len(runs) == 5
for r in runs:
    assert set(r) >= {"directory","state","vehicles","duration","result","planner","map_sha256","evaluations"}, r
    assert r["state"] == "COMPLETE" and r["vehicles"] == [1, 2] and abs(r["duration"] - 10) < 1e-9
clean = [r for r in runs if r["path"] == sys.argv[1]][0]
assert len(clean["evaluations"]) == 2 and all(e["passed"] for e in clean["evaluations"]), clean
import hashlib, os
# every offline run carries the lab map: list shows the manifest hash, which is the hash
# of its runtime map (also for the run whose map and manifest were rewritten above, whose
# hash is then the only one of its kind)
hashes = [(r["map_sha256"], hashlib.sha256(open(os.path.join(r["path"], "map", "runtime_map.bin"), "rb").read()).hexdigest()) for r in runs]
assert all(m == f for m, f in hashes), hashes
assert sorted(hashes.count(h) for h in set(hashes)) == [1, 4], hashes' "$clean" <<<"$out"
run list --bogus
check "list: unknown option exits 2" rc_is 2


# ---- --figures svg: the same evaluation without a PNG, the report whole ----
sim
run evaluate "$RUN" --metrics "$MINE"
png_ev=$(tail -n 1 <<<"$out")
run evaluate "$RUN" --metrics "$MINE" --figures svg
check "--figures svg: exit 0" rc_is 0
check "--figures svg: result PASS" out_has "result: PASS"
svg_ev=$(tail -n 1 <<<"$out")
check "--figures svg: no PNG in figures/" bash -c "! ls '$svg_ev'/figures/*.png 2>/dev/null | grep -q ."
check "--figures svg: every figure of the default evaluation is there as SVG" bash -c \
    "cd '$png_ev/figures' && for f in *.png; do test -s '$svg_ev/figures/'\"\${f%.png}.svg\" || exit 1; done"
check "--figures svg: each record lists the SVG alone" bash -c \
    "grep -h -A2 '^figures:' '$svg_ev'/figures/*.yaml | grep -q png && exit 1; grep -q '  - speed.svg' '$svg_ev/figures/speed.yaml'"
check "--figures svg: the same checks as with PNG" cmp "$png_ev/checks.csv" "$svg_ev/checks.csv"
check "--figures svg: the report inlines every figure as before" bash -c \
    "[ \$(grep -c '<svg' '$png_ev/report.html') = \$(grep -c '<svg' '$svg_ev/report.html') ]"
check "--figures svg: summary.json, checks.csv and report.html agree cell by cell" \
    python3 "$RUNLAB_SOURCE/tests/tools/eval_outputs_check.py" "$svg_ev"
run evaluate "$RUN" --figures pdf
check "--figures pdf: exit 2" rc_is 2
check "--figures pdf: the error names the choices" err_has "--figures 'pdf': expected png,svg or svg"
finish
