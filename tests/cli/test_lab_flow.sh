# `runlab experiment`'s control flow over DDS on loopback, in a domain of this script's own:
# --recorder-config checked and handed to the recorder; vehicles taken from READY when none
# are named (none at all: exit 2); the map announced by the simulator, or none with a warning
# and `evaluate` saying how to give one; a vehicle that falls silent stops the run (STOP
# first, FAILED naming it, in experiment.json, the manifest and `runlab list` alike) or,
# with --on-vehicle-loss continue, is recorded and the run goes on; a recorder killed
# mid-run leaves its run repaired, FAILED with the experiment's reason.
# Vehicles are `lab_test_pub --vehicle` (written from Cyclone alone, one best effort) and
# `runlab sim`. Every wait polls for a condition with a generous limit; durations leave
# room for a loaded machine; no outcome depends on speed.
. "$(dirname "$0")/lib.sh"
test_domain
HELPER="${RUNLAB_BIN}/lab_test_pub"
export RUNLAB_HOME="$TMP/home"
unset RUNLAB_LAB_MAP
mkdir -p "$RUNLAB_HOME"
LOCKS="$TMP/locks"
mkdir -p "$LOCKS"
MAP="$(cd "$(dirname "$0")/../.." && pwd)/data/maps/LabMapCommonRoad.xml"

last_line() { tail -n 1 <<<"$out"; }
file_has() { grep -qF -- "$2" "$1"; }
# json_get FILE EXPR: a value of a JSON file, by a python expression on `d`
json_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
kill_at_exit

# Every experiment here uses a lock folder of the script's own.
printf 'lock_dir: %s\n' "$LOCKS" >"$TMP/rc.yaml"

# ---- usage and the recorder config, checked before anything starts ----
run experiment --on-vehicle-loss maybe
check "--on-vehicle-loss maybe is a usage error" rc_is 2
check "... naming the choices" err_has "--on-vehicle-loss maybe: expected stop or continue"
run experiment --vehicle-timeout 0
check "--vehicle-timeout 0 is a usage error" rc_is 2
run experiment --help
check "help names --recorder-config" out_has "--recorder-config FILE"
check "help names --on-vehicle-loss" out_has "--on-vehicle-loss stop|continue"
printf 'topics: ["rt/a/*", 7]\n' >"$TMP/bad.yaml"
run experiment --domain "$DOMAIN" --recorder-config "$TMP/bad.yaml"
check "bad recorder config: exit 1 as for recorder --config" rc_is 1
check "bad recorder config: the recorder's message" err_has "bad.yaml: topics[1]: expected a string"
check "bad recorder config: nothing started" bash -c '! grep -q "serving DDS domain" <<<"$1"' _ "$err"
printf 'compression: brotli\n' >"$TMP/bad3.yaml"
run experiment --domain "$DOMAIN" --recorder-config "$TMP/bad3.yaml"
check "bad compression in the recorder config: exit 1" rc_is 1
check "bad compression: the recorder's message" err_has "bad3.yaml: compression: 'brotli' is not none, zstd or lz4"

# ---- no vehicle at all: refused, exit 2, no run ----
run experiment --domain "$DOMAIN" --recorder-config "$TMP/rc.yaml" --ready-timeout 3 --duration 1
check "no vehicle: exit 2" rc_is 2
check "no vehicle: says so and what to do" err_has "no vehicle reported READY on rt/lab/ready_status within 3.0 s"
check "no vehicle: names --vehicles" err_has "name them with --vehicles"
check "no vehicle: no run directory printed" test -z "$out"
check "no vehicle: no run made" bash -c '! ls "$1"/experiments/*/manifest.json 2>/dev/null' _ "$RUNLAB_HOME"

# ---- vehicles from READY, a recorder config handed over, no map ----
"$HELPER" --vehicle "$DOMAIN" 1 600 best-effort >"$TMP/v1.out" 2>&1 &
v1=$!
pids+=("$v1")
"$HELPER" --vehicle "$DOMAIN" 2 600 >"$TMP/v2.out" 2>&1 &
v2=$!
pids+=("$v2")
wait_for "$TMP/v1.out" READY
wait_for "$TMP/v2.out" READY
cat >"$TMP/cfg.yaml" <<YAML
schemas:
  - type: my_pkg::msg::dds_::Thing_
    idl: "module my_pkg { module msg { module dds_ { @final struct Thing_ { long a; }; }; }; };"
compression: lz4
compression_level: 3
lock_dir: $LOCKS
YAML
run experiment --domain "$DOMAIN" --recorder-config "$TMP/cfg.yaml" --duration 2
check "READY vehicles: exit 0" rc_is 0
dir=$(last_line)
check "READY vehicles: run directory last" test -d "$dir"
check "READY vehicles: named at start" err_has "vehicles 1, 2 READY (no --vehicles: taking these)"
check "READY vehicles: in the manifest" test "$(json_get "$dir/manifest.json" 'd["vehicles"]')" = "[1, 2]"
check "READY vehicles: their states recorded (best effort and reliable)" \
    bash -c 'grep -qF "\"topic\": \"rt/vehicle/1/state\"" "$1" && grep -qF "\"topic\": \"rt/vehicle/2/state\"" "$1"' _ "$dir/manifest.json"
check "READY vehicles: COMPLETE" file_has "$dir/manifest.json" '"state": "COMPLETE"'
check "banner names the schemas" err_has "schemas my_pkg::msg::dds_::Thing_"
check "banner names compression and lock folder" err_has "bag compression lz4 level 3; lock folder $LOCKS"
check "the recorder got the config (its bag is lz4)" test "$(json_get "$dir/manifest.json" 'd["bag"]["compression"]')" = "lz4"
check "the recorder took its lock in the config's folder" bash -c 'ls "$1" | grep -q .' _ "$LOCKS"
check "no map: warned at start" err_has "warning: the run will have no map"
check "no map: manifest map null" test "$(json_get "$dir/manifest.json" 'd["map"]')" = "None"
check "experiment.json: vehicles from READY, default vehicle timeout" \
    test "$(json_get "$dir/experiment.json" 'd["vehicles_from"], d["vehicle_timeout_s"], d["map"]')" = "READY 1.5 None"
nomap=$dir
run evaluate "$nomap"
check "evaluate a run without a map: says how to give one" out_has "\`runlab evaluate $nomap --map FILE\` evaluates it against a map"
run evaluate "$nomap" --map "$MAP"
check "evaluate --map FILE: runs (exit 0, 1 or 3 for INCOMPLETE on a loaded machine; not 2)" test "$rc" -le 1 -o "$rc" -eq 3
check "evaluate --map FILE: names the map" out_has "The map is $MAP, given with --map"

# ---- a vehicle falls silent: STOP first, FAILED naming it ----
"$HELPER" --triggers "$DOMAIN" 300 >"$TMP/trig1" 2>&1 &
listener=$!
wait_for "$TMP/trig1" LISTENING
"$RUNLAB" experiment --domain "$DOMAIN" --recorder-config "$TMP/rc.yaml" --vehicles 1,2 \
    --vehicle-timeout 3 --duration 300 >"$TMP/e1.out" 2>"$TMP/e1.err" &
exp=$!
pids+=("$exp")
wait_for "$TMP/e1.err" "START; running"
kill -KILL "$v2"
wait "$exp"
rc=$?
out=$(cat "$TMP/e1.out")
err=$(cat "$TMP/e1.err")
check "vehicle lost: exit 1" rc_is 1
check "vehicle lost: names vehicle 2 and the time" err_has "failed: vehicle 2 lost "
check "vehicle lost: not vehicle 1" bash -c '! grep -q "vehicle 1 lost" <<<"$1"' _ "$err"
dir=$(last_line)
check "vehicle lost: experiment.json FAILED" test "$(json_get "$dir/experiment.json" 'd["status"]')" = FAILED
reason=$(json_get "$dir/experiment.json" 'd["reason"]')
check "vehicle lost: the reason names the vehicle and when" grep -qE "^vehicle 2 lost [0-9.]+ s after START: no state for [0-9.]+ s" <<<"$reason"
check "vehicle lost: the manifest has the same sentence" test "$(json_get "$dir/manifest.json" 'd["result"]["reason"]')" = "$reason"
check "vehicle lost: manifest FAILED, as experiment.json" test "$(json_get "$dir/manifest.json" 'd["state"], d["result"]["state"]')" = "FAILED FAILED"
check "vehicle lost: the bag was closed, not repaired" bash -c '! grep -q "repaired" <<<"$1" && test "$(python3 -c "import json,sys; print(\"repair\" in json.load(open(sys.argv[1])))" "$2")" = False' _ "$err" "$dir/manifest.json"
run list --json
check "vehicle lost: runlab list says FAILED with the sentence" python3 -c '
import json, sys
run = [r for r in json.loads(sys.stdin.read()) if r["path"] == sys.argv[1]]
assert len(run) == 1 and run[0]["state"] == "FAILED" and sys.argv[2] in run[0]["result"], run' "$dir" "$reason" <<<"$out"
run list
check "vehicle lost: runlab list's table says FAILED" python3 -c '
import os, sys
name = os.path.basename(sys.argv[1])  # the RUN column: the run id when it holds the time
row = [l.split() for l in sys.stdin.read().splitlines() if l.split() and l.split()[0] in (name, name.split("_", 1)[1])]
assert len(row) == 1 and row[0][1] == "FAILED", row' "$dir" <<<"$out"
check "vehicle lost: the manifest lists the loss" test "$(json_get "$dir/manifest.json" '[l["vehicle"] for l in d["vehicle_losses"]]')" = "[2]"
wait "$listener"
check "vehicle lost: STOP published" grep -q '^STOP ' "$TMP/trig1"

# ---- --on-vehicle-loss continue: said, recorded, the run goes on to COMPLETE ----
"$HELPER" --vehicle "$DOMAIN" 2 600 >"$TMP/v2b.out" 2>&1 &
v2=$!
pids+=("$v2")
wait_for "$TMP/v2b.out" READY
"$RUNLAB" experiment --domain "$DOMAIN" --recorder-config "$TMP/rc.yaml" --vehicles 1,2 \
    --vehicle-timeout 3 --on-vehicle-loss continue --duration 25 >"$TMP/e2.out" 2>"$TMP/e2.err" &
exp=$!
pids+=("$exp")
wait_for "$TMP/e2.err" "START; running"
kill -KILL "$v2"
wait "$exp"
rc=$?
out=$(cat "$TMP/e2.out")
err=$(cat "$TMP/e2.err")
check "continue: exit 0" rc_is 0
check "continue: the loss is said" err_has "going on (--on-vehicle-loss continue)"
dir=$(last_line)
check "continue: manifest COMPLETE" test "$(json_get "$dir/manifest.json" 'd["state"]')" = COMPLETE
check "continue: manifest records the loss" test "$(json_get "$dir/manifest.json" '[l["vehicle"] for l in d["vehicle_losses"]]')" = "[2]"
check "continue: experiment.json records it" test "$(json_get "$dir/experiment.json" 'd["status"], [l["vehicle"] for l in d["vehicle_losses"]]')" = "COMPLETE [2]"
kill -KILL "$v1"

# ---- the simulator killed mid-run: every vehicle named; its map was the run's ----
"$RUNLAB" sim --domain "$DOMAIN" --count 2 >"$TMP/sim.out" 2>"$TMP/sim.err" &
sim=$!
pids+=("$sim")
"$RUNLAB" experiment --domain "$DOMAIN" --recorder-config "$TMP/rc.yaml" --duration 300 \
    >"$TMP/e3.out" 2>"$TMP/e3.err" &
exp=$!
pids+=("$exp")
wait_for "$TMP/e3.err" "START; running"
kill -KILL "$sim"
wait "$exp"
rc=$?
out=$(cat "$TMP/e3.out")
err=$(cat "$TMP/e3.err")
check "sim killed: exit 1" rc_is 1
check "sim killed: both vehicles named" err_has "failed: vehicles 1, 2 lost "
check "sim killed: the simulator's map taken" err_has "map $MAP (announced on rt/lab/map)"
dir=$(last_line)
check "sim killed: the run holds the map" test -s "$dir/map/runtime_map.bin"
check "sim killed: experiment.json FAILED" test "$(json_get "$dir/experiment.json" 'd["status"]')" = FAILED
check "sim killed: manifest FAILED with the same sentence" test "$(json_get "$dir/manifest.json" 'd["state"], d["result"]["reason"] == json.load(open(sys.argv[1].replace("manifest", "experiment")))["reason"]')" = "FAILED True"

# ---- the recorder killed: the run repaired, FAILED with the experiment's reason ----
"$HELPER" --vehicle "$DOMAIN" 3 600 >"$TMP/v3.out" 2>&1 &
pids+=("$!")
wait_for "$TMP/v3.out" READY
"$RUNLAB" experiment --domain "$DOMAIN" --recorder-config "$TMP/rc.yaml" --vehicles 3 \
    --duration 300 >"$TMP/e4.out" 2>"$TMP/e4.err" &
exp=$!
pids+=("$exp")
wait_for "$TMP/e4.err" "START; running"
recorder=$(pgrep -P "$exp" | head -n 1)
check "recorder killed: the experiment started one" test -n "$recorder"
kill -KILL "$recorder"
wait "$exp"
rc=$?
out=$(cat "$TMP/e4.out")
err=$(cat "$TMP/e4.err")
dir=$(last_line)
check "recorder killed: exit 1" rc_is 1
check "recorder killed: the run was repaired" err_has "repaired: RECORDING -> FAILED"
check "recorder killed: manifest FAILED" test "$(json_get "$dir/manifest.json" 'd["state"], d["result"]["state"]')" = "FAILED FAILED"
reason=$(json_get "$dir/experiment.json" 'd["reason"]')
check "recorder killed: experiment.json names the signal" test "$reason" = "the recorder process was killed by signal 9"
check "recorder killed: the same sentence in the manifest" test "$(json_get "$dir/manifest.json" 'd["result"]["reason"]')" = "$reason"
check "recorder killed: the repair record" test "$(json_get "$dir/manifest.json" 'd["repair"]["previous_state"]')" = RECORDING
check "recorder killed: counts from the recovered bag" \
    test "$(json_get "$dir/manifest.json" 'd["totals"]["written"] == d["repair"]["messages"]')" = True
run mcap doctor "$dir"/bag/*.mcap
check "recorder killed: the bag reads whole now" rc_is 0

# ---- sim --count, and --vehicles N as its alias ----
run sim --offline "$TMP/off" --count 2 --duration 1
check "sim --count 2: exit 0" rc_is 0
check "sim --count 2: two vehicles" test "$(json_get "$(last_line)/manifest.json" 'd["vehicles"]')" = "[1, 2]"
run sim --offline "$TMP/off" --vehicles 3 --duration 1
check "sim --vehicles 3 (alias): three vehicles" test "$(json_get "$(last_line)/manifest.json" 'd["vehicles"]')" = "[1, 2, 3]"
run sim --count 0
check "sim --count 0: usage error naming --count" bash -c '[ "$1" -eq 2 ] && grep -qF -- "--count 0" <<<"$2"' _ "$rc" "$err"

finish
