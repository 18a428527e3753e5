# Every prepared vehicle accounted for per topic: an experiment with vehicles 1 to 4 and
# the recorder asked for rt/vehicle/*/observation, which vehicles 1 and 2 publish, vehicle 3
# does not and vehicle 4 publishes with a QoS the recorder cannot match (exclusive
# ownership), names rt/vehicle/3/observation and rt/vehicle/4/observation with their
# reasons (manifest's "unmatched" and the recorder's warning at the end of the run), not
# the pattern and not vehicles 1 and 2; a
# pattern no vehicle publishes (rt/vehicle/*/command_direct) stays one entry, not one per
# vehicle; a pattern only vehicles not prepared published names no prepared vehicle.
# Vehicles are `lab_test_pub --vehicle` (written from Cyclone alone). Loopback only, a DDS
# domain and lock folder of the script's own. The run is ended (Ctrl-C) only once both
# observation writers saw the recorder's reader, so no outcome depends on speed.
. "$(dirname "$0")/lib.sh"
test_domain
HELPER="${RUNLAB_BIN}/lab_test_pub"
export RUNLAB_HOME="$TMP/home"
unset RUNLAB_LAB_MAP
mkdir -p "$RUNLAB_HOME" "$TMP/locks"
printf 'lock_dir: %s\n' "$TMP/locks" >"$TMP/rc.yaml"
kill_at_exit

# unmatched_names DIR: the manifest's unmatched names, one a line, sorted
unmatched_names() {
    python3 -c 'import json,sys; [print(e["name"]) for e in sorted(json.load(open(sys.argv[1]))["unmatched"], key=lambda e: e["name"])]' "$1/manifest.json"
}
# unmatched_reason DIR NAME: the reason given for NAME (empty when not listed)
unmatched_reason() {
    python3 -c 'import json,sys; print(*[e["reason"] for e in json.load(open(sys.argv[1]))["unmatched"] if e["name"] == sys.argv[2]])' "$1/manifest.json" "$2"
}
names_are() { [ "$names" = "$1" ]; }

"$HELPER" --vehicle "$DOMAIN" 1 600 observation >"$TMP/v1.out" 2>&1 &
pids+=($!)
"$HELPER" --vehicle "$DOMAIN" 2 600 observation best-effort >"$TMP/v2.out" 2>&1 &
pids+=($!)
"$HELPER" --vehicle "$DOMAIN" 3 600 >"$TMP/v3.out" 2>&1 &
pids+=($!)
"$HELPER" --vehicle "$DOMAIN" 4 600 observation-exclusive >"$TMP/v4.out" 2>&1 &
v4=$!
pids+=("$v4")
for v in 1 2 3 4; do
    wait_for "$TMP/v$v.out" READY || echo "vehicle $v never READY: $(cat "$TMP/v$v.out")"
done

# ---- vehicle 3 lacks the observation vehicles 1 and 2 publish ----
"$RUNLAB" experiment --domain "$DOMAIN" --recorder-config "$TMP/rc.yaml" --vehicles 1,2,3,4 \
    --no-map --duration 600 --topic 'rt/vehicle/*/observation' \
    --topic 'rt/vehicle/*/command_direct' >"$TMP/e1.out" 2>"$TMP/e1.err" &
exp=$!
pids+=("$exp")
wait_for "$TMP/e1.err" "START; running"
wait_for "$TMP/v1.out" "OBSERVATION MATCHED"
wait_for "$TMP/v2.out" "OBSERVATION MATCHED"
wait_for "$TMP/e1.err" "recorder: rt/vehicle/4/observation: a writer's QoS does not fit the recorder's reader (ownership)"
kill -INT "$exp"
wait "$exp"
rc=$?
out=$(cat "$TMP/e1.out")
err=$(cat "$TMP/e1.err")
dir=$(tail -n 1 <<<"$out")
check "vehicle 3 without observation: the experiment exits 0 (Ctrl-C)" rc_is 0
check "... its run directory" test -f "$dir/manifest.json"
names=$(unmatched_names "$dir")
check "unmatched: vehicles 3 and 4's observation and the command pattern, nothing else" \
    names_are "$(printf '%s\n' 'rt/vehicle/*/command_direct' 'rt/vehicle/3/observation' 'rt/vehicle/4/observation')"
check "unmatched: rt/vehicle/3/observation, no writer discovered" \
    test "$(unmatched_reason "$dir" rt/vehicle/3/observation)" = "no writer discovered during the run"
check "unmatched: rt/vehicle/4/observation, its writer's QoS (ownership)" \
    test "$(unmatched_reason "$dir" rt/vehicle/4/observation)" = "writers were discovered, but their QoS does not fit the recorder's readers (ownership)"
check "unmatched: the unused command pattern once, no writer discovered" \
    test "$(unmatched_reason "$dir" 'rt/vehicle/*/command_direct')" = "no writer discovered during the run"
run_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$dir/manifest.json")
check "stderr: the recorder names vehicle 3's topic at the end of the run" \
    err_has "recorder: run $run_id: rt/vehicle/3/observation matched no writer: no writer discovered during the run"
check "stderr: vehicle 4's topic and why" \
    err_has "recorder: run $run_id: rt/vehicle/4/observation matched no writer: writers were discovered, but their QoS does not fit the recorder's readers (ownership)"
check "stderr: the command pattern once, three entries in all" \
    test "$(grep -c 'matched no writer' <<<"$err")" -eq 3
check "stderr: no vehicle's command_direct named" bash -c '! grep -q "rt/vehicle/[0-9]*/command_direct" <<<"$1"' _ "$err"
# The vehicles are idlc-generated publishers of runlab's own types, which hold no char: the
# recorder's warning of int8-as-char (Cyclone 0.10.2) must not be said of them. It was said
# of every type discovered by its type information (test_char_detection has the why).
check "stderr: no char-members warning for runlab's own types" \
    bash -c '! grep -q "has char members" <<<"$1"' _ "$err"
check "... their states were recorded with type information" \
    bash -c 'grep -qF "\"topic\": \"rt/vehicle/1/state\"" "$1"' _ "$dir/manifest.json"
check "the observations of vehicles 1 and 2 are in the bag" \
    bash -c 'grep -qF "\"topic\": \"rt/vehicle/1/observation\"" "$1" && grep -qF "\"topic\": \"rt/vehicle/2/observation\"" "$1"' _ "$dir/manifest.json"

# ---- only vehicles not prepared published the observation: no prepared vehicle named ----
# (vehicle 4 gone: its writer would be named for its QoS, prepared or not)
kill -KILL "$v4"
wait "$v4" 2>/dev/null
RUNLAB_LOG=info "$RUNLAB" experiment --domain "$DOMAIN" --recorder-config "$TMP/rc.yaml" --vehicles 3 \
    --no-map --duration 600 --topic 'rt/vehicle/*/observation' >"$TMP/e2.out" 2>"$TMP/e2.err" &
exp=$!
pids+=("$exp")
wait_for "$TMP/e2.err" "START; running"
wait_for "$TMP/e2.err" "recording rt/vehicle/1/observation"
kill -INT "$exp"
wait "$exp"
rc=$?
out=$(cat "$TMP/e2.out")
err=$(cat "$TMP/e2.err")
dir=$(tail -n 1 <<<"$out")
check "vehicle 3 alone prepared: exits 0" rc_is 0
names=$(unmatched_names "$dir")
check "vehicle 3 alone prepared: nothing unmatched (vehicles 1 and 2 are not expected)" names_are ""
check "vehicle 3 alone prepared: no warning" bash -c '! grep -q "matched no writer" <<<"$1"' _ "$err"

finish
