# `runlab explore`: one run writes a complete run directory; the same scene and seed give
# the same decisions (every non-timer column and the summary totals); a sweep writes
# scenes x planners x seeds below <root>/<task>/; bad options are usage errors.
. "$(dirname "$0")/lib.sh"

run explore --root "$TMP/a" --scene 2 --seed 7 --budget 80 --maps 3
check "explore exits 0" rc_is 0
check "explore prints the run directory" out_has "$TMP/a/grid/s02/nbv/"
dir_a=$(ls -d "$TMP"/a/grid/s02/nbv/*/)
for f in run_manifest.yaml performance_log.csv episode_summary.yaml params.yaml map_log.csv maps/00000.pgm; do
    checks=$((checks + 1)); [ -e "$dir_a/$f" ] || { failures=$((failures + 1)); echo "FAIL: $f missing in $dir_a"; }
done
run explore --root "$TMP/b" --scene 2 --seed 7 --budget 80 --maps 3
dir_b=$(ls -d "$TMP"/b/grid/s02/nbv/*/)

# Same seed: identical columns except timers and wall time; identical summary totals.
same_run() {
    python3 - "$dir_a" "$dir_b" <<'PY'
import csv, sys, yaml
def load(d):
    m = yaml.safe_load(open(d + "/run_manifest.yaml"))
    skip = {c["name"] for c in m["columns"] if c["type"] == "timer"} | {"ElapsedWallTimeSec"}
    rows = list(csv.DictReader(open(d + "/performance_log.csv")))
    s = yaml.safe_load(open(d + "/episode_summary.yaml"))
    s.pop("elapsed_wall_time_s")
    return [{k: v for k, v in r.items() if k not in skip} for r in rows], s, m["schema_fingerprint"]
a, b = load(sys.argv[1]), load(sys.argv[2])
sys.exit(0 if a == b and len(a[0]) > 3 else 1)
PY
}
check "same scene and seed give the same run" same_run

run explore --root "$TMP/c" --sweep --scenes 1,3 --seeds 4,5 --budget 40
check "sweep exits 0" rc_is 0
n=$(find "$TMP/c/sweep/grid" -name run_manifest.yaml | wc -l)
check "sweep writes 2 scenes x 2 planners x 2 seeds below <root>/sweep" [ "$n" -eq 8 ]
check "sweep lists nbv_nobt runs" out_has "nbv_nobt"

run explore --root "$TMP/d" --task mytask --planner nbv_nobt --cost distance --no-log --budget 30
check "explore --no-log exits 0" rc_is 0
d=$(ls -d "$TMP"/d/mytask/grid/s01/nbv_nobt/*/)
check "--no-log writes no CSV" [ ! -e "$d/performance_log.csv" ]
check "--no-log still writes the summary" [ -e "$d/episode_summary.yaml" ]

# Waits (up to 20 s) until a run below $1 has logged a few cycles, so a signal lands
# inside the episode even on a slow (sanitizer) build.
wait_for_cycles() {
    for _ in $(seq 200); do
        f=$(find "$1" -name performance_log.csv 2>/dev/null | head -1)
        [ -n "$f" ] && [ "$(wc -l <"$f")" -gt 3 ] && return 0
        sleep 0.1
    done
    return 1
}

# SIGTERM during an episode: the episode ends as "stopped" with a summary and every row.
"$RUNLAB" explore --root "$TMP/sig" --size 1000x1000 --budget 0 >"$TMP/sig.out" 2>"$TMP/sig.err" &
pid=$!
wait_for_cycles "$TMP/sig"
kill -TERM "$pid"
wait "$pid"
rc=$?
out=$(cat "$TMP/sig.out"); err=$(cat "$TMP/sig.err")
check "SIGTERM: exit 1" rc_is 1
check "SIGTERM: says it stopped" err_has "stopped by a signal"
d=$(ls -d "$TMP"/sig/grid/s01/nbv/*/)
check "SIGTERM: summary says stopped" grep -q "^end_reason: stopped" "$d/episode_summary.yaml"
cycles=$(sed -n 's/^cycles: //p' "$d/episode_summary.yaml")
rows=$(($(wc -l <"$d/performance_log.csv") - 1))
check "SIGTERM: one CSV row per cycle ($cycles cycles, $rows rows)" [ "$cycles" = "$rows" ]

# SIGKILL (a crash): no summary, but the CSV still loads.
"$RUNLAB" explore --root "$TMP/kill" --size 1000x1000 --budget 0 >/dev/null 2>&1 &
pid=$!
wait_for_cycles "$TMP/kill"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
run runs --json "$TMP/kill"
crash_ok() {
    python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert len(r) == 1 and r[0]["status"] == "degraded" and "no_summary" in r[0]["reasons"], r
assert r[0]["cycles"] > 0
' <<<"$out"
}
check "SIGKILL: the run loads as degraded (no_summary) with its rows" crash_ok

run explore --cost sideways
check "bad --cost is a usage error" rc_is 2
check "bad --cost names the option" err_has "runlab: explore: --cost is time or distance"
run explore --scene 0
check "scene 0 is a usage error" rc_is 2
run explore --planners nbv,astar --sweep
check "unknown planner is a usage error" rc_is 2

# List options (docs/cli.md): an empty element is a typo, an error; repeating adds up.
for bad in "1,,2" ",1" "1," ""; do
    run explore --sweep --root "$TMP/bad" --seeds "$bad"
    check "--seeds '$bad' is a usage error" rc_is 2
done
run explore --sweep --root "$TMP/bad" --scenes "1,,2"
check "--scenes '1,,2' is a usage error" rc_is 2
run explore --sweep --root "$TMP/bad" --planners "nbv,"
check "--planners 'nbv,' is a usage error" rc_is 2
check "no run was started for a bad list" [ ! -e "$TMP/bad" ]
run explore --sweep --root "$TMP/rep" --scenes 1 --planners nbv --seeds 1 --seeds 2 --budget 20
check "repeated --seeds add up" [ "$(find "$TMP/rep" -name run_manifest.yaml | wc -l)" -eq 2 ]

finish
