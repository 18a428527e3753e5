# `runlab record` as users run it: synthetic recordings, the summary and the run
# directory as the last line, refusals (hostile and reused run ids, a second recorder on
# the same domain), maps, SIGINT ending INTERRUPTED with a readable bag, replay of a
# recorded bag with a topic filter, and kill -9 followed by `runlab mcap recover`.
. "$(dirname "$0")/lib.sh"

export RUNLAB_HOME="$TMP/home"
mkdir -p "$RUNLAB_HOME"
COMMON=(--min-free-bytes 0 --rate 100 --vehicles 2)

last_line() { tail -n 1 <<<"$out"; }
manifest_has() { grep -qF -- "$1" "$(last_line)/manifest.json"; }

run record --help
check "record --help exits 0" rc_is 0
check "record --help shows usage" out_has "Usage: runlab record"

run record
check "no source is a usage error" rc_is 2
check "no source says why" err_has "--synthetic or --replay"

run record --synthetic --rate x
check "bad rate is a usage error" rc_is 2

run record --synthetic "${COMMON[@]}" --duration 0.3 --run-id s1 --planner rrt
check "synthetic run exits 0" rc_is 0
check "summary says COMPLETE" out_has "record: COMPLETE run s1:"
check "summary counts messages" out_has "dropped 0"
dir=$(last_line)
check "last line is the run directory" test -d "$dir"
check "run directory is under experiments" grep -q "$RUNLAB_HOME/experiments/[0-9T]*Z_s1$" <<<"$dir"
check "bag written" test -s "$dir/bag/s1.mcap"
check "config written" test -s "$dir/config/recorder.json"
check "evaluations dir" test -d "$dir/evaluations"
check "manifest COMPLETE" manifest_has '"state": "COMPLETE"'
check "manifest planner" manifest_has '"planner": "rrt"'
check "nothing on stderr" err_empty

run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id s1
check "reused run id exits 1" rc_is 1
check "reused run id named" err_has "run id 's1' is already used"

for bad in '../x' 'a/b' '.' '' "$(printf 'a\tb')" '-rf' "$(printf 'x%.0s' {1..80})"; do
    run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id "$bad"
    check "hostile run id '$bad' refused" rc_is 1
    check "hostile run id '$bad' explained" err_has "run id"
done
check "hostile ids created nothing" test "$(ls "$RUNLAB_HOME/experiments" | wc -l)" -eq 1

printf 'MAPBYTES' >"$TMP/runtime_map.bin"
sha=$(sha256sum "$TMP/runtime_map.bin" | cut -d' ' -f1)
run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id withmap --map "$TMP/runtime_map.bin" --map-frame map
check "run with map exits 0" rc_is 0
check "map copied" cmp -s "$TMP/runtime_map.bin" "$(last_line)/map/runtime_map.bin"
check "map sha256 in manifest" manifest_has "\"sha256\": \"$sha\""

run record --synthetic "${COMMON[@]}" --duration 0.1 --map "$TMP/missing.bin"
check "missing map exits 1" rc_is 1

# SIGINT: INTERRUPTED, and the bag is complete (a second recorder on the same domain is
# refused while the first runs).
"$RUNLAB" record --synthetic "${COMMON[@]}" --duration 60 --run-id sig >"$TMP/sig.out" 2>"$TMP/sig.err" &
pid=$!
for _ in $(seq 100); do
    [ -n "$(ls "$RUNLAB_HOME/experiments" | grep _sig)" ] && break
    sleep 0.05
done
run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id second
check "second recorder on the domain refused" rc_is 1
check "second recorder names the holder" err_has "another recorder is running"
sleep 0.5
kill -INT "$pid"
wait "$pid"
rc=$?
out=$(cat "$TMP/sig.out")
err=$(cat "$TMP/sig.err")
check "SIGINT exits 0" rc_is 0
check "SIGINT ends INTERRUPTED" out_has "record: INTERRUPTED run sig:"
check "SIGINT reason" out_has "SIGINT"
check "SIGINT manifest" manifest_has '"state": "INTERRUPTED"'
sigdir=$(last_line)
written=$(sed -n 's/.*written \([0-9]*\),.*/\1/p' <<<"$out")

# The interrupted bag replays completely (its summary and indexes were written).
run record --replay "$sigdir/bag/sig.mcap" --fast --min-free-bytes 0 --run-id replayed
check "replay exits 0" rc_is 0
check "replay re-records every message" out_has "received $written,"
check "replay of everything is COMPLETE" out_has "record: COMPLETE run replayed:"

run record --replay "$sigdir/bag/sig.mcap" --fast --min-free-bytes 0 --run-id filtered --topic /vehicle/1/state
check "filtered replay exits 0" rc_is 0
check "filtered replay has one topic" manifest_has '"/vehicle/1/state"'
check "filtered replay lacks the other" bash -c "! grep -q '/vehicle/2/state' '$(last_line)/manifest.json'"

run record --replay "$TMP/missing.mcap" --run-id nofile --min-free-bytes 0
check "missing replay file exits 1" rc_is 1

# START after a delay: messages before it are outside the window.
run record --synthetic "${COMMON[@]}" --start-after 0.2 --duration 0.2 --run-id delayed --drop-outside
check "delayed START exits 0" rc_is 0
check "delayed START leaves messages outside" bash -c "! grep -q 'outside 0,' <<<'$out'"

# Replay at the original pace takes about as long as the recording it replays.
run record --replay "$sigdir/bag/sig.mcap" --min-free-bytes 0 --run-id paced --heartbeat
check "paced replay exits 0" rc_is 0
check "paced replay re-records every message" out_has "received $written,"
secs=$(sed -n 's/.* in \([0-9.]*\) s .*/\1/p' <<<"$out")
check "paced replay is not instantaneous" awk -v s="$secs" 'BEGIN { exit !(s >= 0.2) }'
check "heartbeat lines on stderr" err_has "heartbeat "
check "heartbeat names the state" err_has " RECORDING host="

# kill -9 mid-run: the bag is unfinished, `runlab mcap recover` makes a complete file of
# it that passes the doctor, and the lock died with the recorder.
"$RUNLAB" record --synthetic "${COMMON[@]}" --duration 60 --run-id killed >/dev/null 2>&1 &
pid=$!
bag=
for _ in $(seq 400); do # until the first flush (<= 1 s) has put a chunk in the bag
    bag=$(ls "$RUNLAB_HOME"/experiments/*_killed/bag/killed.mcap 2>/dev/null)
    [ -n "$bag" ] && [ "$(stat -c %s "$bag")" -gt 4096 ] && break
    sleep 0.05
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
rc=$?
check "SIGKILL killed the recorder" rc_is 137
check "killed run left a bag" test -n "$bag"
run mcap doctor "$bag"
check "killed bag is unfinished (doctor exits 1)" rc_is 1
run mcap recover "$bag" "$TMP/killed-recovered.mcap"
check "recover of the killed bag exits 0" rc_is 0
check "recover kept messages" bash -c "! grep -q 'kept: 0 messages' <<<'$out'"
run mcap doctor "$TMP/killed-recovered.mcap"
check "recovered bag passes doctor" rc_is 0
run mcap cat "$TMP/killed-recovered.mcap"
check "recovered bag has both vehicles" bash -c "grep -q /vehicle/1/ <<<'$out' && grep -q /vehicle/2/ <<<'$out'"
run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id after-kill
check "a recorder starts after kill -9 (no stale lock)" rc_is 0

# On a terminal, a live status line on stderr (cleared before the summary); `script`
# gives the command a pseudo-terminal.
if command -v script >/dev/null 2>&1; then
    script -qec "'$RUNLAB' record --synthetic --min-free-bytes 0 --rate 100 --vehicles 2 --start-after 0.3 --duration 0.4 --run-id tty" \
        "$TMP/tty.log" >/dev/null 2>&1
    rc=$?
    check "recording on a terminal exits 0" test "$rc" -eq 0
    check "terminal shows the live status before START" grep -qF "record: RECORDING (before START)" "$TMP/tty.log"
    check "terminal shows the live status after START" grep -q "record: RECORDING [0-9.]* of 0.7 s, written" "$TMP/tty.log"
    check "status line is cleared before the summary" grep -qF "$(printf '\r\033[K')record: COMPLETE run tty:" "$TMP/tty.log"
else
    echo "SKIP: live status line: script(1) not installed"
fi

# Every manifest written here follows the published JSON Schema (when a validator exists:
# Debian's python3-jsonschema, from install-deps, lives with /usr/bin/python3, which need
# not be the first python3 on PATH).
py=python3
for cand in python3 /usr/bin/python3; do
    if "$cand" -c 'import jsonschema' 2>/dev/null; then py=$cand; break; fi
done
if "$py" -c 'import jsonschema' 2>/dev/null; then
    check "manifests match docs/record-manifest.schema.json" "$py" -c '
import glob, json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
files = glob.glob(sys.argv[2] + "/experiments/*/manifest.json")
assert len(files) >= 5, files
for f in files:
    jsonschema.validate(json.load(open(f)), schema)
' "${RUNLAB_SOURCE:?}/docs/record-manifest.schema.json" "$RUNLAB_HOME"
else
    echo "SKIP: manifest schema check: python3 jsonschema not installed"
fi

finish
