# The recorder and its control flow over DDS on loopback (CYCLONEDDS_URI from the suite), in a
# domain of this script's own: `experiment` refused beside a running recorder says what to do;
# `experiment --attach` drives that recorder (nothing new started, the recorder serves on) and
# fails clearly without one; SIGKILL of an attached experiment ends its run INTERRUPTED
# "control flow lost" by the heartbeat timeout (the recorder's config sets it) while the
# recorder serves on; Ctrl-C of the process group ends the run "SIGINT" through the
# experiment, not its recorder; a stopped experiment loses its run by the heartbeat; SIGKILL of an experiment that started its own recorder ends the run the
# same way through the control pipe, with a readable bag, and the recorder exits. States are
# asserted, never times: waits end on the awaited text, with limits of minutes.
. "$(dirname "$0")/lib.sh"
test_domain
export RUNLAB_HOME="$TMP/home"
mkdir -p "$RUNLAB_HOME"

last_line() { tail -n 1 <<<"$out"; }
file_has() { grep -qF -- "$2" "$1"; }
# wait_gone PID: up to 120 s for the process to end
wait_gone() {
    local i
    for i in $(seq 1 1200); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

run recorder --help
check "recorder --help names --control-fd" out_has "--control-fd FD"
check "recorder --help names control_flow_timeout" out_has "control_flow_timeout: SEC"
run experiment --help
check "experiment --help names --attach" out_has "--attach "
printf 'control_flow_timeout: 0.2\n' >"$TMP/short.yaml"
run recorder --domain "$DOMAIN" --config "$TMP/short.yaml"
check "control_flow_timeout below 0.5 s exits 1" rc_is 1
check "control_flow_timeout error names file and key" \
    err_has "short.yaml: control_flow_timeout: expected seconds, 0 (never) or 0.5..3600"
run recorder --domain "$DOMAIN" --control-fd 987
check "a control descriptor that is not open is a usage error" rc_is 2
check "the usage error names it" err_has "--control-fd 987: not an open descriptor"

# One vehicle for every experiment below (an experiment without one refuses to start),
# written from Cyclone alone; no map, so that nothing waits for one.
HELPER="${RUNLAB_BIN}/lab_test_pub"
"$HELPER" --vehicle "$DOMAIN" 1 900 >"$TMP/vehicle.out" 2>&1 &
vehicle=$!
wait_for "$TMP/vehicle.out" READY
VEH="--vehicles 1 --no-map"

# --attach without a recorder: a clear failure saying what to do.
run experiment --domain "$DOMAIN" $VEH --attach --duration 1
check "--attach without a recorder exits 1" rc_is 1
check "--attach without a recorder says so and what to do" \
    err_has "--attach: no recorder answers on DDS domain $DOMAIN: start one (runlab recorder --domain $DOMAIN)"
run experiment --domain "$DOMAIN" --attach --home "$TMP/other"
check "--attach with --home is a usage error" rc_is 2
check "--attach with --home says why" err_has "--attach: --home set the recorder experiment starts"

# A recorder the lab keeps running, with a control flow timeout of 3 s from its config.
printf 'control_flow_timeout: 3\n' >"$TMP/rec.yaml"
"$RUNLAB" recorder --domain "$DOMAIN" --home "$TMP/lab" --config "$TMP/rec.yaml" \
    >"$TMP/rec.out" 2>"$TMP/rec.err" &
recorder=$!
wait_for "$TMP/rec.err" "serving DDS domain"

run experiment --domain "$DOMAIN" $VEH --duration 1
check "experiment beside a running recorder exits 1" rc_is 1
check "the refusal names the recorder" err_has "another recorder answers on DDS domain $DOMAIN (host $(hostname), pid $recorder"
check "the refusal says what to do: --attach" err_has "Either drive that recorder: add --attach"
check "the refusal says what to do: stop it" err_has "or stop it (Ctrl-C where it runs, or kill $recorder on $(hostname))"

"$RUNLAB" experiment --domain "$DOMAIN" $VEH --attach --duration 2 >"$TMP/att.out" 2>"$TMP/att.err" &
exp=$!
wait_for "$TMP/att.err" "START; running"
check "--attach starts no process of its own" test -z "$(pgrep -P "$exp")"
wait "$exp"
rc=$?
out=$(cat "$TMP/att.out")
err=$(cat "$TMP/att.err")
check "--attach: the experiment exits 0" rc_is 0
check "--attach: says which recorder it drives" err_has "attached to the recorder on DDS domain $DOMAIN (host $(hostname), pid $recorder)"
dir=$(last_line)
check "--attach: the run is in the running recorder's home" grep -q "^$TMP/lab/experiments/" <<<"$dir"
check "--attach: manifest COMPLETE" file_has "$dir/manifest.json" '"state": "COMPLETE"'
check "--attach: recorded by the running recorder" file_has "$dir/manifest.json" "\"pid\": $recorder"
check "--attach: the control heartbeat is recorded" \
    file_has "$dir/manifest.json" '"topic": "rt/lab/evaluation/control_heartbeat"'
check "--attach: experiment.json COMPLETE" file_has "$dir/experiment.json" '"status": "COMPLETE"'
wait_for "$TMP/rec.out" "$dir"
check "--attach: the recorder printed the run" file_has "$TMP/rec.out" "$dir"
check "--attach: the recorder serves on" kill -0 "$recorder"

# SIGKILL of the attached experiment: no heartbeat for 3 s (the config's) ends the run.
"$RUNLAB" experiment --domain "$DOMAIN" $VEH --attach --duration 300 >"$TMP/att2.out" 2>"$TMP/att2.err" &
exp=$!
wait_for "$TMP/att2.err" "START; running"
lines=$(wc -l <"$TMP/rec.out")
kill -KILL "$exp"
{ wait "$exp"; } 2>/dev/null
killed=$(now_ms)
for i in $(seq 1 1200); do
    [ "$(wc -l <"$TMP/rec.out")" -gt "$lines" ] && break
    sleep 0.1
done
echo "info: attached experiment killed: the recorder printed its run $(($(now_ms) - killed)) ms later (timeout 3 s)"
dir=$(tail -n 1 "$TMP/rec.out")
err=$(cat "$TMP/att2.err")
check "killed attached experiment: the recorder printed the run" test -s "$dir/manifest.json"
# The engine sets the state a moment before it rewrites the manifest with it.
wait_for "$dir/manifest.json" '"state": "INTERRUPTED"'
check "killed attached experiment: manifest INTERRUPTED" file_has "$dir/manifest.json" '"state": "INTERRUPTED"'
check "killed attached experiment: reason control flow lost" \
    file_has "$dir/manifest.json" "\"reason\": \"control flow lost: no heartbeat from runlab experiment (host $(hostname), pid $exp) for "
ms=$(grep -o 'for [0-9]* ms' "$dir/manifest.json" | grep -o '[0-9]*')
check "killed attached experiment: the timeout is the config's 3 s" test "${ms:-0}" -gt 3000
run mcap doctor "$dir"/bag/*.mcap
check "killed attached experiment: the bag is whole" rc_is 0
check "killed attached experiment: the recorder serves on" kill -0 "$recorder"
run experiment --domain "$DOMAIN" $VEH --attach --duration 1
check "the next attached experiment exits 0" rc_is 0
check "the next attached experiment is COMPLETE" file_has "$(last_line)/manifest.json" '"state": "COMPLETE"'
kill -TERM "$recorder"
wait "$recorder"
rc=$?
check "the recorder stops cleanly on SIGTERM" rc_is 0

# Ctrl-C in a terminal signals the whole foreground process group: only the experiment may
# act on it (its recorder has a group of its own), so the run ends INTERRUPTED "SIGINT" by
# the experiment's finish, not "recorder stopped", and the experiment exits 0.
setsid "$RUNLAB" experiment --domain "$DOMAIN" $VEH --home "$TMP/ctrlc" --duration 300 \
    >"$TMP/ctrlc.out" 2>"$TMP/ctrlc.err" &
exp=$!
wait_for "$TMP/ctrlc.err" "START; running"
kill -INT -- "-$exp"
wait "$exp"
rc=$?
out=$(cat "$TMP/ctrlc.out")
err=$(cat "$TMP/ctrlc.err")
check "Ctrl-C: the experiment exits 0" rc_is 0
dir=$(last_line)
check "Ctrl-C: the run ended INTERRUPTED by the experiment" file_has "$dir/manifest.json" '"reason": "SIGINT"'
check "Ctrl-C: experiment.json INTERRUPTED" file_has "$dir/experiment.json" '"status": "INTERRUPTED"'

# An experiment stopped (Ctrl-Z, SIGSTOP) is a control flow lost too, also to the recorder it
# started (whose control pipe stays open): its heartbeat falls silent, the recorder ends the
# run, and the experiment, continued, fails with the reason.
"$RUNLAB" experiment --domain "$DOMAIN" $VEH --home "$TMP/stopped" --duration 300 \
    >"$TMP/stopped.out" 2>"$TMP/stopped.err" &
exp=$!
wait_for "$TMP/stopped.err" "START; running"
kill -STOP "$exp"
wait_for "$TMP/stopped.err" "control flow lost: no heartbeat from runlab experiment"
kill -CONT "$exp"
wait "$exp"
rc=$?
out=$(cat "$TMP/stopped.out")
err=$(cat "$TMP/stopped.err")
check "stopped experiment: fails once continued" rc_is 1
dir=$(last_line)
check "stopped experiment: the run ended INTERRUPTED, control flow lost" \
    file_has "$dir/manifest.json" "\"reason\": \"control flow lost: no heartbeat from runlab experiment (host $(hostname), pid $exp) for "
check "stopped experiment: experiment.json FAILED" file_has "$dir/experiment.json" '"status": "FAILED"'

# SIGKILL of an experiment that started its own recorder: the control pipe closes, the
# recorder ends the run and exits.
cat >"$TMP/spec.yaml" <<YAML
run_id: orphan
duration: 300
YAML
"$RUNLAB" experiment "$TMP/spec.yaml" --domain "$DOMAIN" $VEH --home "$TMP/own" >"$TMP/own.out" 2>"$TMP/own.err" &
exp=$!
wait_for "$TMP/own.err" "START; running"
child=$(pgrep -P "$exp" | head -n 1)
check "the experiment started a recorder" test -n "$child"
kill -KILL "$exp"
{ wait "$exp"; } 2>/dev/null
killed=$(now_ms)
wait_gone "$child"
gone=$?
echo "info: experiment killed: its recorder exited $(($(now_ms) - killed)) ms later"
err=$(cat "$TMP/own.err")
check "killed experiment: its recorder exits" test "$gone" -eq 0
check "killed experiment: the recorder says why it stops" err_has "runlab recorder: the process that started it has ended (control pipe closed); stopping"
dir=$(ls -d "$TMP"/own/experiments/*_orphan 2>/dev/null | head -n 1)
check "killed experiment: the run directory exists" test -n "$dir"
check "killed experiment: the recorder printed it" err_has "$dir"
check "killed experiment: manifest INTERRUPTED" file_has "$dir/manifest.json" '"state": "INTERRUPTED"'
check "killed experiment: reason control flow lost" \
    file_has "$dir/manifest.json" '"reason": "control flow lost: the process that started the recorder has ended (its control pipe closed)"'
check "killed experiment: STOP of the window not invented" file_has "$dir/manifest.json" '"stop": null'
run mcap doctor "$dir/bag/orphan.mcap"
check "killed experiment: the bag is whole" rc_is 0
kill "$vehicle"
wait "$vehicle" 2>/dev/null

finish
