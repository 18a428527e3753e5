# report.html of `runlab bench`: written with every benchmark (built-in planners), rewritten
# by `bench report DIR` and by --resume; sections, CI columns, inline SVG, no network
# references; figures/ with PNG, SVG and a record each; every number in its tables recomputed by
# tests/tools/bench_report_check.py.
. "$(dirname "$0")/lib.sh"

cat >"$TMP/spec.yaml" <<YAML
experiment: report check
problem: maze2d
seed: 5
# Bounded by iterations so that what the report shows (which planners solve, RRT*'s cost
# curve) is the same on a loaded machine; max_time is only a safety net.
max_time: 60
runs: 6
time_between_updates: 0.03
planners:
  - {name: RRT, planner: rrt, settings: {max_iterations: 100000}}
  - {name: RRTstar, planner: rrtstar, settings: {max_iterations: 4000}}
  - {name: PRM, planner: prm, settings: {max_iterations: 100000}}
  - {name: crash, planner: crash}
YAML
run bench "$TMP/spec.yaml" --out "$TMP/res"
check "benchmark exits 1: the crash planner solved no run" rc_is 1
dir=$(tail -n1 <<<"$out")
html="$dir/report.html"
check "report.html written with the benchmark" test -s "$html"
for s in "Summary" "Solved and status rates" "Time, memory and solution length" \
    "Best cost over time" "Medians and confidence intervals" \
    "Rank-sum test of time against the best planner" "Methods"; do
    check "report has section '$s'" grep -qF "<h2>$s</h2>" "$html"
done
for c in "time 95% CI [s]" "memory 95% CI [MB]" "length 95% CI" "p (two-sided)" "best (reference)"; do
    check "report table has column/cell '$c'" grep -qF "$c" "$html"
done
check "every cell of the status, failure, medians and rank-sum tables recomputed from results.json" \
    python3 "${RUNLAB_SOURCE:?}/tests/tools/bench_report_check.py" "$dir"
check "three inline SVG figures" test "$(grep -o '<svg' "$html" | wc -l)" -eq 3
check "no http references but the SVG namespace" \
    test "$(grep -o 'http' "$html" | wc -l)" -eq "$(grep -o 'xmlns="http://www.w3.org/2000/svg"' "$html" | wc -l)"
check "no https references" bash -c "grep -q '</html>' '$html' && ! grep -q 'https://' '$html'"
for f in status distributions best_cost; do
    for e in png svg yaml; do
        check "figures/$f.$e exists" test -s "$dir/figures/$f.$e"
    done
done
check "PNG is a PNG" bash -c "head -c 8 '$dir/figures/status.png' | grep -q PNG"

rm -f "$html"
run bench report "$dir"
check "bench report exits 0" rc_is 0
check "bench report prints the report's path" out_has "$html"
check "bench report rewrote report.html" test -s "$html"

rm -f "$html"
run bench --resume "$dir"
check "--resume of a benchmark killed before its report exits as the benchmark did (1)" rc_is 1
check "--resume rewrote report.html" test -s "$html"
check "... into the one OMPL log there was" test "$(ls "$dir"/*.log | wc -l)" -eq 1

run bench report "$TMP/nowhere"
check "bench report of a directory without results fails" rc_is 1
check "the error names results.json" err_has "results.json"
run bench report
check "bench report without DIR is a usage error" rc_is 2

# A results.json edited by hand (json-c aborts on a non-array, and a report must never
# crash): progress rows that are not arrays, a null planner.
if command -v python3 >/dev/null 2>&1; then
    cp -r "$dir" "$TMP/edited"
    python3 - "$TMP/edited/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["planners"]:
    for r in p["runs"]:
        if isinstance(r.get("progress"), list) and r["progress"]:
            r["progress"][0] = None
            r["progress"][-1] = "not a row"
json.dump(d, open(sys.argv[1], "w"))
PY
    run bench report "$TMP/edited"
    check "bench report of odd progress rows exits 0" rc_is 0
    python3 - "$TMP/edited/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["planners"][0] = None
json.dump(d, open(sys.argv[1], "w"))
PY
    run bench report "$TMP/edited"
    check "bench report of a null planner exits 1" rc_is 1
    check "bench report says which planner" err_has "results.json: planners[0]: expected an object, found null"
else
    echo "SKIP: edited results.json: python3 not installed"
fi
finish
