#!/usr/bin/env bash
# Coverage and decoding in `runlab evaluate` (issue 28.4, 29.8): a state stream stalled for
# 4 s while the vehicle is off its lane leaves footprint checks INSUFFICIENT naming the gap
# (or FAIL from the poses around it), never PASS, with the coverage in summary.json,
# checks.csv and the report; payloads replaced by random bytes or cut short are counted per
# topic with the first error (decoding.csv, summary.json, report), and a topic that mostly
# fails to decode makes its checks INSUFFICIENT; a channel not in CDR is refused by name;
# an unparsable stamps.start in the manifest is reported. Commands run under `timeout`.
. "$(dirname "$0")/lib.sh"

MAP="${RUNLAB_SHARED:-}/maps/LabMapCommonRoad.xml"
if [ ! -f "$MAP" ]; then
    echo "SKIP: coverage: shared data folder not present (lab map $MAP)"
    exit 77
fi
DAMAGE="${RUNLAB_SOURCE:?}/tests/tools/mcap_damage.py"

run() {
    timeout 120 "$RUNLAB" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    rc=$?
    out=$(cat "$TMP/out")
    err=$(cat "$TMP/err")
}

# simulate HOME ARGS...: a 10 s offline run of 2 vehicles on the lab map; sets $dir
simulate() {
    local home=$1
    shift
    run sim --offline "$home" --vehicles 2 --duration 10 --seed 7 --map "$MAP" "$@"
    check "sim $* exits 0" rc_is 0
    dir=$(tail -n 1 <<<"$out")
}

# latest: the newest evaluation directory of $dir
latest() { ls -d "$dir"/evaluations/* | tail -n 1; }

# py EXPR...: a Python expression over the latest evaluation: s (summary.json), rows
# (checks.csv as dicts), dec (decoding.csv as dicts), report (report.html text), c(metric,
# check, vehicles) one check of s.
py() {
    timeout 60 python3 - "$(latest)" "$1" <<'PY'
import csv, json, os, sys
ev, expr = sys.argv[1], sys.argv[2]
s = json.load(open(os.path.join(ev, "summary.json")))
rows = list(csv.DictReader(open(os.path.join(ev, "checks.csv"))))
dec = list(csv.DictReader(open(os.path.join(ev, "decoding.csv"))))
report = open(os.path.join(ev, "report.html")).read()
def c(metric, check, vehicles):
    m = [x for x in s["checks"] if x["metric"] == metric and x["check"] == check and x["vehicles"] == vehicles]
    assert len(m) == 1, (metric, check, vehicles, len(m))
    return m[0]
def topic(name):
    return [d for d in dec if d["topic"] == name][0]
ok = eval("(" + expr.strip() + ")")
if not ok:
    print("  checks:", [(x["metric"], x["check"], x["vehicles"], x["status"], x["coverage"], x["reason"][:160]) for x in s["checks"] if 2 in x["vehicles"]])
    print("  decoding:", dec)
sys.exit(0 if ok else 1)
PY
}

# ---- 28.4: vehicle 2 off its lane (2..9 s) while its states stall (3..7 s) ----
simulate "$TMP/stall" --fault stall_topic:2:3:7 --fault leave_lane:2:2:9
run evaluate "$dir"
check "stall: evaluate exits 1 (FAIL)" rc_is 1
# The states stop after 2.98 s and resume at 7.02 s: 4.04 s of 10 unjudged.
check "stall: boundary check INSUFFICIENT naming the gap (start..end, length), not PASS" py '
    c("boundary_violation", "outside_area", [2])["status"] == "INSUFFICIENT"
    and "no data 2.98..7.02 s (4.04 s, longer than max_gap 0.25 s)" in c("boundary_violation", "outside_area", [2])["reason"]'
check "stall: lanelet check FAILs from the poses around the gap" py '
    c("lanelet_collision", "off_lanelets", [2])["status"] == "FAIL"'
check "stall: coverage 5.96 of 10 s in summary.json" py '
    all(abs(c(m, k, [2])["judged_s"] - 5.96) < 0.005 and c(m, k, [2])["window_s"] == 10
        and abs(c(m, k, [2])["coverage"] - 0.596) < 0.0005
        for m, k in [("boundary_violation", "outside_area"), ("lanelet_collision", "off_lanelets"),
                     ("states_speed", "speed"), ("command_follow", "deviation")])'
check "stall: no check over vehicle 2 states PASSes with the gap" py '
    not [x for x in s["checks"] if 2 in x["vehicles"] and x["status"] == "PASS"
         and x["metric"] not in ("topic_sanity",) and not (x["metric"] == "obs" and x["check"] == "age")]'
check "stall: the pair with vehicle 2 is INSUFFICIENT too" py '
    c("vehicle_collision", "collision", [1, 2])["status"] == "INSUFFICIENT"'
check "stall: vehicle 1 fully covered and passing" py '
    c("boundary_violation", "outside_area", [1])["status"] == "PASS"
    and c("boundary_violation", "outside_area", [1])["coverage"] == 1'
check "stall: checks.csv has the coverage column" py '
    [r["coverage"] for r in rows if r["metric"] == "boundary_violation" and r["vehicles"] == "2"] == ["0.596"]
    and all(len(r) == 10 for r in rows)'
check "stall: the report states the coverage" py '"coverage 59.6 % (5.96 of 10.00 s)" in report'
check "stall: summary.json, checks.csv and the report agree cell by cell" \
    timeout 60 python3 "$RUNLAB_SOURCE/tests/tools/eval_outputs_check.py" "$(latest)"
run evaluate "$dir" --metrics states_speed,boundary_violation
check "stall: without the failing metrics, evaluate exits 3 (INCOMPLETE), not 0" rc_is 3

# ---- 29.8: damaged state payloads of vehicle 2 ----
simulate "$TMP/decode"
bag=$(ls "$dir"/bag/*.mcap)
run mcap filter "$bag" "$TMP/plain.mcap" --compression none
check "mcap filter to an uncompressed copy" rc_is 0

damage() { timeout 60 python3 "$DAMAGE" "$TMP/plain.mcap" "$bag" rt/vehicle/2/state "$@"; }

check "random payloads written" damage random 1
run evaluate "$dir"
check "random: evaluate exits 3 (INCOMPLETE)" rc_is 3
check "random: decoding.csv counts every state message of vehicle 2 as failed, from message 0" py '
    topic("rt/vehicle/2/state")["messages"] == "501" and topic("rt/vehicle/2/state")["failed"] == "501"
    and topic("rt/vehicle/2/state")["first_index"] == "0" and topic("rt/vehicle/2/state")["undecodable"] == "yes"
    and "encapsulation" in topic("rt/vehicle/2/state")["first_error"]
    and topic("rt/vehicle/1/state")["failed"] == "0"'
check "random: summary.json decoding with the first failure" py '
    [d for d in s["decoding"] if d["topic"] == "rt/vehicle/2/state"][0]["first_failure"]["index"] == 0
    and [d for d in s["decoding"] if d["topic"] == "rt/vehicle/2/state"][0]["failed"] == 501'
check "random: vehicle 2 state checks INSUFFICIENT with the decoding reason" py '
    all(x["status"] == "INSUFFICIENT" and "501 of 501 messages did not decode" in x["reason"]
        for x in s["checks"] if x["vehicles"] == [2] and x["metric"] in ("states_speed", "boundary_violation"))
    and "did not decode" in c("topic_sanity", "state count", [2])["reason"]'
check "random: the report has the decoding section" py '"Messages that did not decode" in report and "unknown encapsulation kind" in report'

check "truncated payloads written" damage truncate 1
run evaluate "$dir"
check "truncated: evaluate exits 3" rc_is 3
check "truncated: every state of vehicle 2 failed, the first error names the short field" py '
    topic("rt/vehicle/2/state")["failed"] == "501" and "needs 8 bytes" in topic("rt/vehicle/2/state")["first_error"]
    and c("states_speed", "speed", [2])["status"] == "INSUFFICIENT"'

# Under the threshold (more than half): counted and named in the reasons, not INSUFFICIENT.
check "30 % truncated written" damage truncate 0.3
run evaluate "$dir"
check "30 % truncated: counted, below the threshold" py '
    0 < int(topic("rt/vehicle/2/state")["failed"]) < 250 and topic("rt/vehicle/2/state")["undecodable"] == "no"
    and c("states_speed", "speed", [2])["status"] == "PASS"'
check "30 % truncated: the rate FAIL says messages did not decode" py '
    "messages of rt/vehicle/2/state did not decode" in c("topic_sanity", "state rate", [2])["reason"]'
check "70 % truncated written" damage truncate 0.7
run evaluate "$dir"
check "70 % truncated: more than half failed: INSUFFICIENT" py '
    topic("rt/vehicle/2/state")["undecodable"] == "yes" and c("states_speed", "speed", [2])["status"] == "INSUFFICIENT"
    and "(more than 50 %)" in c("states_speed", "speed", [2])["reason"]'

# The threshold at its boundary: 250 of 501 is not more than half, 251 is.
check "250 of 501 truncated written" damage truncate first:250
run evaluate "$dir"
check "250 of 501: not undecodable" py '
    topic("rt/vehicle/2/state")["failed"] == "250" and topic("rt/vehicle/2/state")["undecodable"] == "no"
    and "did not decode (more than" not in c("states_speed", "speed", [2])["reason"]'
check "251 of 501 truncated written" damage truncate first:251
run evaluate "$dir"
check "251 of 501: undecodable, INSUFFICIENT" py '
    topic("rt/vehicle/2/state")["failed"] == "251" and topic("rt/vehicle/2/state")["undecodable"] == "yes"
    and c("states_speed", "speed", [2])["status"] == "INSUFFICIENT"'

# ---- 29.8: a channel whose messages are not CDR is refused by name ----
check "json channel written" damage encoding json
run evaluate "$dir"
check "non-cdr: refused, naming topic and encoding" \
    out_has "rt/vehicle/2/state: schema encoding 'omgidl' with message encoding 'json' is not decoded (ros2msg/cdr, omgidl/cdr are): refused, not decoded"
check "non-cdr: checks UNAVAILABLE with that reason; decoding.csv says refused" py '
    c("states_speed", "speed", [2])["status"] == "UNAVAILABLE" and "message encoding \x27json\x27 is not decoded" in c("states_speed", "speed", [2])["reason"]
    and "message encoding \x27json\x27 is not decoded" in topic("rt/vehicle/2/state")["refused"] and topic("rt/vehicle/2/state")["messages"] == "0"'

# ---- 29.8: an unparsable stamps.start is reported with the field's path ----
cp "$TMP/plain.mcap" "$bag"
timeout 60 python3 - "$dir/manifest.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["stamps"]["start"] = "yesterday"
json.dump(m, open(sys.argv[1], "w"))
EOF
run evaluate "$dir"
check "bad stamps.start: evaluated (exit 0)" rc_is 0
check "bad stamps.start: reported with the field path" out_has "manifest.json: stamps.start: not a time"
check "bad stamps.start: in summary.json notes" py 'any("stamps.start" in n for n in s["notes"])'

finish
