# `runlab record` as users run it: synthetic recordings, the summary and the run
# directory as the last line, refusals (hostile and reused run ids, a second recorder on
# the same host and domain, even with another home), maps, SIGINT ending INTERRUPTED with
# a readable bag, replay of a recorded bag with a topic filter and its stamps on one
# clock, kill -9 followed by `runlab mcap recover` and by `runlab record --repair`.
. "$(dirname "$0")/lib.sh"

export RUNLAB_HOME="$TMP/home"
mkdir -p "$RUNLAB_HOME"
test_domain # the recorder lock is per host and domain: a domain of this test's own
COMMON=(--min-free-bytes 0 --rate 100 --vehicles 2 --domain "$DOMAIN")

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

# Maps: an original is compiled into map/runtime_map.bin and kept beside it; a runtime
# map is stored as map/runtime_map.bin. Hashes checked with sha256sum, the runtime map
# loaded by `runlab map info`, whose sha256 must be the manifest's.
mjson() { python3 -c "import json,sys; m=json.load(open(sys.argv[1]))['map']; $1" "$(last_line)/manifest.json"; }
check_map_run() { # check_map_run LABEL ORIGINAL-PATH ORIGINAL-NAME
    local d src_sha rt_sha info
    d=$(last_line)
    src_sha=$(sha256sum "$2" | cut -d' ' -f1)
    rt_sha=$(sha256sum "$d/map/runtime_map.bin" | cut -d' ' -f1)
    check "$1: original stored under its name" cmp -s "$2" "$d/map/$3"
    check "$1: original_file in manifest" mjson "sys.exit(m['original_file'] != 'map/$3')"
    check "$1: source_sha256 is sha256sum of the original" mjson "sys.exit(m['source_sha256'] != '$src_sha')"
    check "$1: runtime_map_sha256 is sha256sum of runtime_map.bin" mjson "sys.exit(m['runtime_map_sha256'] != '$rt_sha' or m['sha256'] != '$rt_sha')"
    check "$1: map file and frame" mjson "sys.exit(m['file'] != 'map/runtime_map.bin' or m['frame'] != 'map')"
    info=$("$RUNLAB" map info "$d/map/runtime_map.bin" --json)
    check "$1: runlab map info loads the runtime map, same sha256" python3 -c "import json,sys; d=json.loads(sys.argv[1]); sys.exit(d['sha256'] != '$rt_sha' or d['source_sha256'] != '$src_sha' or d['lanelets'] < 1)" "$info"
}
LABMAP="${RUNLAB_SOURCE:?}/data/maps/LabMapCommonRoad.xml"
run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id crmap --map "$LABMAP"
check "run with the CommonRoad lab map exits 0" rc_is 0
check_map_run "CommonRoad" "$LABMAP" LabMapCommonRoad.xml
check "CommonRoad: format and projection" mjson "sys.exit(m['source_format'] != 'commonroad' or m['projection'] != 'none' or m['origin'] is not None)"
check "CommonRoad: the runtime map has the lab map's 168 lanelets" python3 -c "import json,sys; sys.exit(json.loads(sys.argv[1])['lanelets'] != 168)" "$("$RUNLAB" map info "$(last_line)/map/runtime_map.bin" --json)"
crdir=$(last_line)

OSM="${RUNLAB_SOURCE}/../shared/maps/mapping_example.osm"
if [ -f "$OSM" ]; then
    run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id osmmap --map "$OSM" --projection utm --origin 49,8.4
    check "run with mapping_example.osm exits 0" rc_is 0
    check_map_run "Lanelet2" "$OSM" mapping_example.osm
    check "Lanelet2: format, projection, origin" mjson "sys.exit(m['source_format'] != 'lanelet2' or m['projection'] != 'utm' or m['origin'] != {'lat': 49.0, 'lon': 8.4})"
    "$RUNLAB" map compile "$OSM" --projection utm --origin 49,8.4 -o "$TMP/example.bin" >/dev/null 2>&1
    check "Lanelet2: stored runtime map = runlab map compile with the same options" cmp -s "$TMP/example.bin" "$(last_line)/map/runtime_map.bin"
else
    echo "SKIP: record --map mapping_example.osm: shared data folder not present"
fi

cp "$crdir/map/runtime_map.bin" "$TMP/lab.rlmap"
run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id withmap --map "$TMP/lab.rlmap" --map-frame map
check "run with a runtime map exits 0" rc_is 0
check "runtime map stored as map/runtime_map.bin" cmp -s "$TMP/lab.rlmap" "$(last_line)/map/runtime_map.bin"
check "runtime map: nothing else in map/" [ "$(ls "$(last_line)/map")" = runtime_map.bin ]
check "runtime map: hashes, no original" mjson "sys.exit(m['runtime_map_sha256'] != '$(sha256sum "$TMP/lab.rlmap" | cut -d' ' -f1)' or m['original_file'] is not None or m['source_sha256'] != '$(sha256sum "$LABMAP" | cut -d' ' -f1)')"

printf '<?xml version="1.0"?>\n<osm>\n<node id="1" lat="north" lon="2"/>\n</osm>\n' >"$TMP/bad.osm"
run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id badmap --map "$TMP/bad.osm"
check "unreadable map exits 1" rc_is 1
check "unreadable map: file and line named" err_has "bad.osm:3:"
check "unreadable map: run id not reserved" [ ! -e "$RUNLAB_HOME/experiments/.run-ids/badmap" ]

run record --synthetic "${COMMON[@]}" --duration 0.1 --map "$TMP/missing.bin"
check "missing map exits 1" rc_is 1

# SIGINT: INTERRUPTED, and the bag is complete (a second recorder on the same domain is
# refused while the first runs).
"$RUNLAB" record --synthetic "${COMMON[@]}" --duration 60 --run-id sig >"$TMP/sig.out" 2>"$TMP/sig.err" &
pid=$!
for _ in $(seq 1200); do # up to 60 s: a loaded machine under ASan starts slowly
    [ -n "$(ls "$RUNLAB_HOME/experiments" | grep _sig)" ] && break
    sleep 0.05
done
run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id second
check "second recorder on the domain refused" rc_is 1
check "second recorder names the holder" err_has "another recorder is running"
mkdir -p "$TMP/other-home"
run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id second --home "$TMP/other-home"
check "second recorder with another home refused too" rc_is 1
check "other home: names the holder" err_has "another recorder is running"
check "other home: nothing made there" test -z "$(ls -A "$TMP/other-home")"
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
run record --replay "$sigdir/bag/sig.mcap" --fast --min-free-bytes 0 --domain "$DOMAIN" --run-id replayed
check "replay exits 0" rc_is 0
check "replay re-records every message" out_has "received $written,"
check "replay of everything is COMPLETE" out_has "record: COMPLETE run replayed:"

run record --replay "$sigdir/bag/sig.mcap" --fast --min-free-bytes 0 --domain "$DOMAIN" --run-id filtered --topic /vehicle/1/state
check "filtered replay exits 0" rc_is 0
check "filtered replay has one topic" manifest_has '"/vehicle/1/state"'
check "filtered replay lacks the other" bash -c "! grep -q '/vehicle/2/state' '$(last_line)/manifest.json'"

# --fast replay: every manifest stamp on one clock and in order, START and STOP at their
# offsets into the file; each message's log time is when it was received (between begin
# and finish), its original log time kept as publish time.
run record --replay "$sigdir/bag/sig.mcap" --fast --min-free-bytes 0 --domain "$DOMAIN" --run-id fastwin --start-after 0.1 --duration 0.2
check "fast replay with a window exits 0" rc_is 0
fastdir=$(last_line)
"$RUNLAB" mcap cat "$sigdir/bag/sig.mcap" >"$TMP/orig.txt"
"$RUNLAB" mcap cat "$fastdir/bag/fastwin.mcap" >"$TMP/fast.txt"
check "fast replay: stamps ordered, log times inside begin..finish, publish = original" python3 - "$fastdir/manifest.json" "$TMP/orig.txt" "$TMP/fast.txt" <<'PY'
import json, sys, datetime
m = json.load(open(sys.argv[1]))
def ns(s):
    d = datetime.datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 10**9 + int(s[20:29])
st = [ns(m["stamps"][k]) for k in ("prepare", "begin", "start", "stop", "finish")]
assert st == sorted(st), st
orig = [l.split() for l in open(sys.argv[2])]
fast = [l.split() for l in open(sys.argv[3])]
assert len(orig) == len(fast) > 0
first = int(orig[0][0])
inside = 0
for o, f in zip(orig, fast):
    assert f[3] == "publish=" + o[0], (f, o)       # the original log time
    lt = int(f[0])
    assert st[1] <= lt <= st[4], (lt, st)           # received during the run
    off = int(o[0]) - first
    if st[2] <= lt <= st[3]:
        inside += 1
        assert 100_000_000 <= off <= 300_000_000, off  # START/STOP at their file offsets
tot = m["totals"]
assert tot["inside"] == inside > 0, (tot, inside)
PY

run record --replay "$TMP/missing.mcap" --run-id nofile --min-free-bytes 0 --domain "$DOMAIN"
check "missing replay file exits 1" rc_is 1

# START after a delay: messages before it are outside the window.
run record --synthetic "${COMMON[@]}" --start-after 0.2 --duration 0.2 --run-id delayed --drop-outside
check "delayed START exits 0" rc_is 0
check "delayed START leaves messages outside" bash -c "grep -qE 'outside [1-9][0-9]*,' <<<'$out'"

# Replay at the original pace takes about as long as the recording it replays.
run record --replay "$sigdir/bag/sig.mcap" --min-free-bytes 0 --domain "$DOMAIN" --run-id paced --heartbeat
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
for _ in $(seq 1200); do # until the first flush (<= 1 s) has put a chunk in the bag
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
check "recover kept messages" bash -c "grep -qE 'kept: [1-9][0-9]* messages' <<<'$out'"
run mcap doctor "$TMP/killed-recovered.mcap"
check "recovered bag passes doctor" rc_is 0
run mcap cat "$TMP/killed-recovered.mcap"
check "recovered bag has both vehicles" bash -c "grep -q /vehicle/1/ <<<'$out' && grep -q /vehicle/2/ <<<'$out'"
run record --synthetic "${COMMON[@]}" --duration 0.1 --run-id after-kill
check "a recorder starts after kill -9 (no stale lock)" rc_is 0

# A killed recorder's manifest stays RECORDING: `runlab runs` names the run unfinished,
# `runlab record --repair` refuses while the recorder lives, then recovers the bag in place
# and rewrites the manifest INTERRUPTED with the bag's counts; a second repair has nothing
# to do. Directories of recorders killed before their first manifest are repaired too.
"$RUNLAB" record --synthetic "${COMMON[@]}" --duration 60 --run-id torepair >/dev/null 2>&1 &
pid=$!
rdir=
for _ in $(seq 1200); do
    rdir=$(ls -d "$RUNLAB_HOME"/experiments/*_torepair 2>/dev/null)
    [ -n "$rdir" ] && [ -f "$rdir/bag/torepair.mcap" ] && [ "$(stat -c %s "$rdir/bag/torepair.mcap")" -gt 4096 ] && break
    sleep 0.05
done
run record --repair "$rdir"
check "repair of a live recorder's run exits 1" rc_is 1
check "repair says the recorder still runs" err_has "still running (pid $pid)"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
check "killed run: manifest still RECORDING" grep -q '"state": "RECORDING"' "$rdir/manifest.json"
run runs "$RUNLAB_HOME/experiments"
check "runs names the killed run unfinished" err_has "torepair: unfinished recording (RECORDING, its recorder is gone)"
check "runs still exits 0" rc_is 0
touch "$rdir/manifest.json.tmp.AbC123"
run record --repair "$rdir"
check "repair exits 0" rc_is 0
check "repair says what it did" out_has "repaired: RECORDING -> INTERRUPTED"
check "repaired manifest INTERRUPTED" grep -q '"state": "INTERRUPTED"' "$rdir/manifest.json"
check "repaired manifest says why" grep -q '"reason": "recorder died; repaired by runlab' "$rdir/manifest.json"
check "stray temporary manifest removed" test ! -e "$rdir/manifest.json.tmp.AbC123"
check "manifest's room removed" test ! -e "$rdir/.manifest.reserve"
run mcap doctor "$rdir/bag/torepair.mcap"
check "repaired bag passes doctor" rc_is 0
bagcount=$("$RUNLAB" mcap cat "$rdir/bag/torepair.mcap" | wc -l)
check "repaired manifest counts the bag's messages" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert n > 0 and m["totals"]["written"] == n == m["totals"]["received"], (m["totals"], n)
assert sum(t["written"] for t in m["topics"]) == n
assert m["repair"]["previous_state"] == "RECORDING" and m["repair"]["bag"] == "recovered"
s = [m["stamps"][k] for k in ("prepare", "begin", "start", "finish")]
assert s == sorted(s), s
' "$rdir/manifest.json" "$bagcount"
run record --repair "$rdir"
check "second repair exits 0" rc_is 0
check "second repair has nothing to do" out_has "nothing to repair (INTERRUPTED, bag complete)"
mkdir "$RUNLAB_HOME/experiments/20261201T000000Z_early" "$RUNLAB_HOME/experiments/20261201T000001Z_early2"
touch "$RUNLAB_HOME/experiments/20261201T000001Z_early2/manifest.json.tmp.x1Y2z3"
for d in early early2; do
    run record --repair "$RUNLAB_HOME"/experiments/*_$d
    check "repair of a run killed before its manifest ($d) exits 0" rc_is 0
    check "it gets a manifest ($d)" grep -q '"state": "INTERRUPTED"' "$RUNLAB_HOME"/experiments/*_$d/manifest.json
done
check "stray temporary of early2 removed" test -z "$(ls "$RUNLAB_HOME"/experiments/*_early2 | grep tmp)"
# A run killed after its map was stored but before its first manifest: the rebuilt
# manifest names the stored map (hashes by sha256sum, the original found by its hash).
e3="$RUNLAB_HOME/experiments/20261201T000002Z_early3"
mkdir -p "$e3/map" && cp "$crdir/map/runtime_map.bin" "$crdir/map/LabMapCommonRoad.xml" "$e3/map/"
printf 'not the source\n' >"$e3/map/notes.txt"
run record --repair "$e3"
check "repair of a run with a stored map exits 0" rc_is 0
check "repaired manifest names the stored map" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["map"]
want = {"file": "map/runtime_map.bin", "runtime_map_sha256": sys.argv[2], "sha256": sys.argv[2],
        "bytes": int(sys.argv[3]), "original_file": "map/LabMapCommonRoad.xml",
        "source_sha256": sys.argv[4], "source_bytes": int(sys.argv[5]),
        "source_format": "commonroad", "frame": "map", "projection": "none", "origin": None}
sys.exit(0 if m == want else "got %r" % (m,))
' "$e3/manifest.json" "$(sha256sum "$e3/map/runtime_map.bin" | cut -d" " -f1)" \
  "$(stat -c %s "$e3/map/runtime_map.bin")" "$(sha256sum "$LABMAP" | cut -d" " -f1)" "$(stat -c %s "$LABMAP")"
run record --repair "$TMP"
check "repair of a non-run directory exits 1" rc_is 1
check "repair says it is no run" err_has "not a recorder run directory"
run record --repair "$TMP/nowhere"
check "repair of a missing directory exits 1" rc_is 1
run record --repair
check "repair without RUN is a usage error" rc_is 2

# A disk that is really full (a 1 MiB tmpfs in a mount namespace of its own; root only):
# the run ends FAILED, the final manifest still lands and says so, and it counts as
# written exactly the messages the bag holds, the rest as dropped.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    mkdir -p "$TMP/full"
    unshare -m bash -c "mount -t tmpfs -o size=1m runlab-test '$TMP/full' || exit 77
        '$RUNLAB' record --synthetic --rate 0 --payload 4096 --vehicles 2 --duration 30 \
            --compression none --chunk-size 65536 --min-free-bytes 0 --domain $DOMAIN \
            --home '$TMP/full' --run-id full >'$TMP/full.out' 2>'$TMP/full.err'
        echo \$? >'$TMP/full.rc'
        d=\$(tail -n 1 '$TMP/full.out')
        cp \"\$d/manifest.json\" '$TMP/full.manifest.json'
        '$RUNLAB' mcap cat \"\$d/bag/full.mcap\" 2>/dev/null | wc -l >'$TMP/full.count'"
    if [ $? -ne 77 ]; then
        rc=$(cat "$TMP/full.rc")
        out=$(cat "$TMP/full.out")
        err=$(cat "$TMP/full.err")
        check "full disk: exits 1" rc_is 1
        check "full disk: run FAILED on stderr" err_has "run FAILED: writer:"
        check "full disk: the manifest was written (no complaint)" bash -c "! grep -q 'could not be written' <<<'$err'"
        check "full disk: manifest FAILED, written = what the bag holds" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
n = int(open(sys.argv[2]).read())
t = m["totals"]
assert m["state"] == "FAILED" and "No space left" in m["result"]["reason"], m["result"]
assert t["written"] == n > 0, (t, n)
assert t["received"] == t["inside"] + t["outside"] + t["dropped"] and t["dropped"] > 0, t
' "$TMP/full.manifest.json" "$TMP/full.count"
    else
        echo "SKIP: full disk: cannot mount a tmpfs here"
    fi
else
    echo "SKIP: full disk: needs root and unshare(1) for a small tmpfs"
fi

# On a terminal, a live status line on stderr (cleared before the summary); `script`
# gives the command a pseudo-terminal.
if command -v script >/dev/null 2>&1; then
    script -qec "'$RUNLAB' record --synthetic --min-free-bytes 0 --rate 100 --vehicles 2 --domain $DOMAIN --start-after 0.3 --duration 0.4 --run-id tty" \
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

# docs/cli.md's spellings: --topics with a list (an empty element is a usage error)
run record --replay /nonexistent.mcap --topics "a,,b"
check "record --topics with an empty element is a usage error" rc_is 2
check "... saying so" err_has "empty topic name"
run record --help
check "record --help names --root and --topics" bash -c "grep -q -- '--root DIR' <<<\"\$0\" && grep -q -- '--topics LIST' <<<\"\$0\"" "$out"
finish
