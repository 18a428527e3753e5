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

run explore --cost sideways
check "bad --cost is a usage error" rc_is 2
check "bad --cost names the option" err_has "runlab: explore: --cost is time or distance"
run explore --scene 0
check "scene 0 is a usage error" rc_is 2
run explore --planners nbv,astar --sweep
check "unknown planner is a usage error" rc_is 2

finish
