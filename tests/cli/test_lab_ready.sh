#!/usr/bin/env bash
# READY and parameter snapshots over DDS (issue 27, items 12 and 14): with the simulator
# started before the experiment and with it started while the experiment waits for READY
# (its recorder serving), every vehicle's READY is in the bag and logged before START;
# config/nodes.json holds the simulator's and the experiment's parameters, the manifest the scenario (faults, seed,
# vehicles, routes; the experiment's options), and `runlab list` shows it. Loopback only.
source "$(dirname "$0")/lib.sh"
MAP="${RUNLAB_SOURCE:?}/data/maps/LabMapCommonRoad.xml"
test_domain
file_has() { grep -qF -- "$2" "$1"; }


# check_run DIR LABEL: the run's bag and files as items 12 and 14 want them.
check_run() {
    local dir=$1 label=$2
    check "$label: manifest COMPLETE" file_has "$dir/manifest.json" '"state": "COMPLETE"'
    "$RUNLAB" mcap cat "$dir"/bag/*.mcap --json --topics rt/lab/ready_status,rt/lab/system_trigger \
        >"$TMP/$label.ndjson" 2>"$TMP/$label.err"
    problems=$(python3 - "$TMP/$label.ndjson" "$dir" <<'EOF'
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1])]
problems = []
start = [m["log_time"] for m in msgs
         if m["topic"] == "rt/lab/system_trigger" and m["message"]["kind"] == 1]
ready = {}
for m in msgs:
    if m["topic"] == "rt/lab/ready_status":
        ready.setdefault(m["message"]["vehicle_id"], []).append(m["log_time"])
if len(start) != 1:
    problems.append("%d START messages" % len(start))
if sorted(ready) != [1, 2, 3, 4]:
    problems.append("READY of vehicles %s in the bag" % sorted(ready))
for v, times in sorted(ready.items()):
    if start and min(times) >= start[0]:
        problems.append("vehicle %d's READY logged %d ns after START" % (v, min(times) - start[0]))
nodes = json.load(open(sys.argv[2] + "/config/nodes.json"))
sim = nodes.get("runlab_sim", {}).get("parameters", {})
exp = nodes.get("runlab_experiment", {}).get("parameters", {})
if sim.get("scenario", {}).get("faults") != ["drift:3:1:2"] or sim["scenario"].get("seed") != 5:
    problems.append("nodes.json runlab_sim: %s" % sim)
if exp.get("scenario", {}).get("vehicles") != [1, 2, 3, 4]:
    problems.append("nodes.json runlab_experiment: %s" % exp)
manifest = json.load(open(sys.argv[2] + "/manifest.json"))
sc = manifest.get("scenario") or {}
s = sc.get("runlab_sim", {})
if s.get("vehicles") != 4 or s.get("seed") != 5 or s.get("faults") != ["drift:3:1:2"] or \
        len(s.get("routes", [])) != 4 or sc.get("runlab_experiment", {}).get("duration") != 3:
    problems.append("manifest scenario: %s" % sc)
print("; ".join(problems))
EOF
)
    check "$label: every vehicle's READY before START, parameters and scenario recorded ($problems)" \
        test -z "$problems"
}

# 1. The simulator first: its READY are published before any recorder exists.
"$RUNLAB" sim --domain "$DOMAIN" --vehicles 4 --seed 5 --fault drift:3:1:2 --map "$MAP" \
    >"$TMP/sim1.out" 2>"$TMP/sim1.err" &
sim=$!
wait_for "$TMP/sim1.err" "waiting for START"
sleep 1 # only so that the READY are out before the recorder starts; the checks hold either way
run experiment --domain "$DOMAIN" --home "$TMP/home" --vehicles 1,2,3,4 --duration 3
check "sim first: experiment exits 0" rc_is 0
check_run "$(tail -n 1 <<<"$out")" "sim first"
wait "$sim"

# 2. The simulator last: it starts once the recorder serves and the experiment waits for
#    READY (the experiment prepares only once it knows its vehicles).
"$RUNLAB" experiment --domain "$DOMAIN" --home "$TMP/home" --vehicles 1,2,3,4 --duration 3 \
    >"$TMP/exp2.out" 2>"$TMP/exp2.err" &
exp=$!
wait_for "$TMP/exp2.err" "to report READY"
"$RUNLAB" sim --domain "$DOMAIN" --vehicles 4 --seed 5 --fault drift:3:1:2 --map "$MAP" \
    >"$TMP/sim2.out" 2>"$TMP/sim2.err" &
sim=$!
wait "$exp"
rc=$?
out=$(cat "$TMP/exp2.out")
err=$(cat "$TMP/exp2.err")
check "sim last: experiment exits 0" rc_is 0
check_run "$(tail -n 1 <<<"$out")" "sim last"
wait "$sim"

# runlab list shows each run's scenario.
run list "$TMP/home"
check "list: exits 0" rc_is 0
check "list: a SCENARIO column" out_has "SCENARIO"
check "list: the scenario of both runs" test "$(grep -c 'seed 5 drift:3:1:2' <<<"$out")" -eq 2

finish
