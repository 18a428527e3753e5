# `runlab recorder` and `runlab experiment` over DDS on loopback (CYCLONEDDS_URI from the
# suite: tests/cyclonedds-loopback.xml) in a domain of this script's own: help and usage
# errors, the whole sequence ending COMPLETE with START/STOP recorded, a second recorder and
# an experiment refused while a recorder answers, kill -9 of the recorder mid-run and a
# writer failure (a file size limit) (STOP still published, the experiment failed with the
# reason). Waits are generous and
# bounded by polling counts; no outcome depends on speed.
. "$(dirname "$0")/lib.sh"
test_domain
HELPER="${RUNLAB_BIN}/lab_test_pub"
export RUNLAB_HOME="$TMP/home"
mkdir -p "$RUNLAB_HOME"

last_line() { tail -n 1 <<<"$out"; }
file_has() { grep -qF -- "$2" "$1"; }

run recorder --help
check "recorder --help exits 0" rc_is 0
check "recorder --help shows usage" out_has "Usage: runlab recorder"
run experiment --help
check "experiment --help exits 0" rc_is 0
check "experiment --help shows usage" out_has "Usage: runlab experiment"
run recorder --domain 300
check "domain out of range is a usage error" rc_is 2
check "domain error names the option" err_has "--domain 300"
run experiment --vehicles 1,x
check "bad vehicle list is a usage error" rc_is 2
run experiment "$TMP/missing.yaml"
check "missing spec exits 1" rc_is 1
printf 'topics: ["rt/a/*", 7]\n' >"$TMP/bad.yaml"
run recorder --domain "$DOMAIN" --config "$TMP/bad.yaml"
check "bad recorder config exits 1" rc_is 1
check "bad recorder config names the key" err_has "bad.yaml: topics[1]: expected a string"
printf 'schemas:\n  - type: a::B\n    idl_file: %s/none.idl\n' "$TMP" >"$TMP/bad2.yaml"
run recorder --domain "$DOMAIN" --config "$TMP/bad2.yaml"
check "missing schema file exits 1" rc_is 1
check "missing schema file is named" err_has "schemas[0].idl_file"
printf 'compression: brotli\n' >"$TMP/bad3.yaml"
run recorder --domain "$DOMAIN" --config "$TMP/bad3.yaml"
check "unknown bag compression exits 1" rc_is 1
check "unknown bag compression is named" err_has "bad3.yaml: compression: 'brotli' is not none, zstd or lz4"
printf 'compression: lz4\ncompression_level: 20\n' >"$TMP/bad4.yaml"
run recorder --domain "$DOMAIN" --config "$TMP/bad4.yaml"
check "compression level out of range exits 1" rc_is 1
check "compression level error names key and range" err_has "bad4.yaml: compression_level: 20 is not 0..12 for lz4"
printf 'max_queued_bytes: 0\n' >"$TMP/bad5.yaml"
run recorder --domain "$DOMAIN" --config "$TMP/bad5.yaml"
check "a queue limit of 0 exits 1" rc_is 1
check "a queue limit of 0 is named" err_has "bad5.yaml: max_queued_bytes: 0 is not a positive count"
printf 'max_queued_messages: many\n' >"$TMP/bad6.yaml"
run recorder --domain "$DOMAIN" --config "$TMP/bad6.yaml"
check "a queue limit that is no number exits 1" rc_is 1
check "a queue limit that is no number is named" err_has "max_queued_messages"

# A vehicle for the experiments below (an experiment without one refuses to start):
# READY and states from a program written from Cyclone alone, until the simulator's turn.
"$HELPER" --vehicle "$DOMAIN" 1 900 >"$TMP/vehicle.out" 2>&1 &
vehicle=$!
wait_for "$TMP/vehicle.out" READY

# The whole sequence, with a spec file and options overriding it.
cat >"$TMP/spec.yaml" <<YAML
domain: 0
duration: 30
run_id: lab-seq
planner: demo
YAML
"$HELPER" --triggers "$DOMAIN" 120 >"$TMP/triggers1" 2>&1 &
listener=$!
wait_for "$TMP/triggers1" LISTENING
run experiment "$TMP/spec.yaml" --domain "$DOMAIN" --duration 1
check "experiment exits 0" rc_is 0
dir=$(last_line)
check "last line is the run directory" test -d "$dir"
check "run id from the spec" grep -q "experiments/[0-9T]*Z_lab-seq$" <<<"$dir"
check "manifest COMPLETE" file_has "$dir/manifest.json" '"state": "COMPLETE"'
check "manifest planner from the spec" file_has "$dir/manifest.json" '"planner": "demo"'
check "trigger topic recorded" file_has "$dir/manifest.json" '"topic": "rt/lab/system_trigger"'
check "experiment note COMPLETE" file_has "$dir/experiment.json" '"status": "COMPLETE"'
check "experiment note: the planned duration (--duration 1)" python3 -c \
    'import json, sys; assert json.load(open(sys.argv[1]))["planned_duration_s"] == 1' "$dir/experiment.json"
check "bag written" test -s "$dir/bag/lab-seq.mcap"
wait "$listener"
check "START seen by a subscriber" grep -q '^START ' "$TMP/triggers1"
check "STOP seen by a subscriber" grep -q '^STOP ' "$TMP/triggers1"

# While a recorder answers on the domain, a second one and an experiment are refused.
"$RUNLAB" recorder --domain "$DOMAIN" --home "$TMP/h2" >"$TMP/rec.out" 2>"$TMP/rec.err" &
holder=$!
wait_for "$TMP/rec.err" "serving DDS domain"
check "the recorder says its bag compression (default zstd)" file_has "$TMP/rec.err" "bag compression zstd;"
run recorder --domain "$DOMAIN" --home "$TMP/h3"
check "second recorder exits 1" rc_is 1
check "second recorder names the holder" err_has "pid $holder"
run experiment --domain "$DOMAIN" --home "$TMP/h3" --duration 1
check "experiment refuses to deploy" rc_is 1
check "experiment says why" err_has "another recorder answers"
kill -TERM "$holder"
wait "$holder"
rc=$?
check "recorder stops cleanly on SIGTERM" rc_is 0
printf 'compression: lz4\ncompression_level: 3\nmax_queued_messages: 5000\nmax_queued_bytes: 67108864\n' >"$TMP/lz4.yaml"
"$RUNLAB" recorder --domain "$DOMAIN" --home "$TMP/h4" --config "$TMP/lz4.yaml" >"$TMP/rec4.out" 2>"$TMP/rec4.err" &
holder=$!
wait_for "$TMP/rec4.err" "serving DDS domain"
check "the recorder takes its bag compression from --config" file_has "$TMP/rec4.err" "bag compression lz4 level 3;"
check "the recorder takes its queue limits from --config" file_has "$TMP/rec4.err" "queue limits 5000 messages, 64 MiB;"
kill -TERM "$holder"
wait "$holder"
rc=$?
check "recorder with lz4 stops cleanly" rc_is 0

# kill -9 of the recorder mid-run: STOP is still published and the experiment fails.
"$HELPER" --triggers "$DOMAIN" 120 >"$TMP/triggers2" 2>&1 &
listener=$!
wait_for "$TMP/triggers2" LISTENING
"$RUNLAB" experiment --domain "$DOMAIN" --duration 300 >"$TMP/exp.out" 2>"$TMP/exp.err" &
exp=$!
wait_for "$TMP/exp.err" "START; running"
recorder=$(pgrep -P "$exp" | head -n 1)
check "the experiment started a recorder" test -n "$recorder"
kill_ns=$(date +%s%N)
kill -KILL "$recorder"
wait "$exp"
rc=$?
out=$(cat "$TMP/exp.out")
err=$(cat "$TMP/exp.err")
check "experiment failed" rc_is 1
check "failure reason printed" err_has "failed: the recorder process was killed by signal 9"
dir=$(last_line)
check "run directory printed last" test -d "$dir"
check "experiment note FAILED with the reason" file_has "$dir/experiment.json" "killed by signal 9"
wait "$listener"
check "STOP published after the kill" grep -q '^STOP ' "$TMP/triggers2"
stop_ns=$(awk '$1 == "STOP" {print $3}' "$TMP/triggers2")
[ -n "$stop_ns" ] && echo "info: STOP received $(((stop_ns - kill_ns) / 1000000)) ms after kill -9"

# A recorder that falls silent (SIGSTOP) fails the experiment after the heartbeat timeout;
# STOP is published, and the recorder is stopped (it ends the run INTERRUPTED).
"$HELPER" --triggers "$DOMAIN" 120 >"$TMP/triggers3" 2>&1 &
listener=$!
wait_for "$TMP/triggers3" LISTENING
"$RUNLAB" experiment --domain "$DOMAIN" --duration 300 >"$TMP/exp3.out" 2>"$TMP/exp3.err" &
exp=$!
wait_for "$TMP/exp3.err" "START; running"
recorder=$(pgrep -P "$exp" | head -n 1)
kill -STOP "$recorder"
wait "$exp"
rc=$?
out=$(cat "$TMP/exp3.out")
err=$(cat "$TMP/exp3.err")
check "silent recorder: experiment failed" rc_is 1
check "silent recorder: reason printed" err_has "failed: no recorder heartbeat for"
dir=$(last_line)
check "silent recorder: note FAILED" file_has "$dir/experiment.json" "no recorder heartbeat"
check "silent recorder: the run ended INTERRUPTED" file_has "$dir/manifest.json" '"state": "INTERRUPTED"'
wait "$listener"
check "silent recorder: STOP published" grep -q '^STOP ' "$TMP/triggers3"

kill "$vehicle"
wait "$vehicle" 2>/dev/null

# The simulator on DDS: the experiment waits for both vehicles' READY, and their states and
# observations are recorded; the simulator stops after STOP.
"$RUNLAB" sim --domain "$DOMAIN" --vehicles 2 >"$TMP/sim.out" 2>"$TMP/sim.err" &
sim=$!
run experiment --domain "$DOMAIN" --vehicles 1,2 --duration 2
check "experiment with simulated vehicles exits 0" rc_is 0
dir=$(last_line)
check "manifest COMPLETE with vehicles" file_has "$dir/manifest.json" '"state": "COMPLETE"'
for t in rt/vehicle/1/state rt/vehicle/2/state rt/vehicle/1/observation rt/vehicle/2/observation \
         rt/vehicle/1/command_trajectory rt/vehicle/2/command_trajectory; do
    check "$t recorded" file_has "$dir/manifest.json" "\"topic\": \"$t\""
done
wait "$sim"
rc=$?
check "simulator exits 0 after STOP" rc_is 0

# A writer failure: the experiment (and the recorder it starts) may write files of at most
# 256 KiB (RLIMIT_FSIZE, SIGXFSZ ignored, both inherited), so the bag's write fails once it
# grows past that: the recorder turns FAILED, and the experiment publishes STOP at once and
# fails with the reason, printed and in experiment.json. Room for the manifest is kept in
# advance (64 KiB and more), so the run's manifest still says FAILED. --no-map: the
# simulator's map (2.8 MB compiled) would not fit either, and prepare would fail instead.
"$HELPER" --triggers "$DOMAIN" 300 >"$TMP/triggers4" 2>&1 &
listener=$!
wait_for "$TMP/triggers4" LISTENING
"$RUNLAB" sim --domain "$DOMAIN" --vehicles 4 --duration 280 >"$TMP/sim4.out" 2>"$TMP/sim4.err" &
sim=$!
(
    ulimit -f 256
    trap '' XFSZ
    exec "$RUNLAB" experiment --domain "$DOMAIN" --home "$TMP/fsize" --vehicles 1,2,3,4 --no-map --duration 250
) >"$TMP/exp4.out" 2>"$TMP/exp4.err"
rc=$?
out=$(cat "$TMP/exp4.out")
err=$(cat "$TMP/exp4.err")
check "writer failure: experiment failed" rc_is 1
check "writer failure: reason printed" err_has "failed: the recorder FAILED: writer:"
check "writer failure: the reason names the error" err_has "File too large"
dir=$(last_line)
check "writer failure: run directory printed last" test -d "$dir"
check "writer failure: the run's end is said once, no refused finish" \
    bash -c 'grep -qF "run $1 FAILED" <<<"$2" && ! grep -q "finish refused" <<<"$2"' _ "$(basename "$dir" | sed 's/^[0-9TZ]*_//')" "$err"
check "writer failure: note FAILED with the reason" file_has "$dir/experiment.json" "the recorder FAILED: writer:"
check "writer failure: manifest FAILED" file_has "$dir/manifest.json" '"state": "FAILED"'
wait "$listener"
check "writer failure: STOP published" grep -q '^STOP ' "$TMP/triggers4"
wait "$sim"
rc=$?
check "writer failure: simulator exits 0 after STOP" rc_is 0

# Offline: a run directory without DDS, printed last; the same seed gives the same messages.
run sim --offline "$TMP/off" --vehicles 2 --duration 2 --seed 3 --fault speeding:1:0.5
check "offline sim exits 0" rc_is 0
off1=$(last_line)
check "offline run directory" test -s "$off1/manifest.json"
check "offline run COMPLETE" file_has "$off1/manifest.json" '"state": "COMPLETE"'
check "offline run holds the runtime map" test -s "$off1/map/runtime_map.bin"
check "offline run holds the original map" test -s "$off1/map/LabMapCommonRoad.xml"
check "offline run: the map's hash in the manifest" \
    file_has "$off1/manifest.json" "\"runtime_map_sha256\": \"$(sha256sum "$off1/map/runtime_map.bin" | cut -d' ' -f1)\""
run mcap cat "$off1"/bag/*.mcap --topics rt/lab/system_trigger
check "offline run: START and STOP on the trigger topic" test "$(printf '%s\n' "$out" | grep -c .)" -ge 2
for t in rt/vehicle/1/command_trajectory rt/vehicle/2/command_trajectory; do
    check "offline $t recorded" file_has "$off1/manifest.json" "\"topic\": \"$t\""
done
run sim --offline "$TMP/off" --vehicles 2 --duration 2 --seed 3 --fault speeding:1:0.5
off2=$(last_line)
run mcap cat "$off1"/bag/*.mcap
cat1=$out
run mcap cat "$off2"/bag/*.mcap
check "same seed, same messages" test "$cat1" = "$out"
run sim --fault teleport:1:1
check "unknown fault kind is a usage error" rc_is 2
check "unknown fault kind is named" err_has "teleport"

finish
