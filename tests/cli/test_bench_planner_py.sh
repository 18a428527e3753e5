# examples/planner.py (issue 16, item 13): an RRT-Connect in Python over the problem file
# runlab writes (RUNLAB_PROBLEM_FILE, format runlab-problem/1) on every built-in problem.
# Runs are bounded by iterations (max_iterations), never by time: max_time is only a
# safety net. Every path it reports is re-checked by tests/cli/check_path.py, written from
# the file format's description alone.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 not installed (scripts/install-deps.sh installs it)"; exit 77; }
not_ok() { ! "$@" >/dev/null; }
quiet() { "$@" >/dev/null; }
PLANNER="${RUNLAB_SOURCE:?}/examples/planner.py"
CHECK="${RUNLAB_SOURCE:?}/tests/cli/check_path.py"

# The built-in problems, as the command lists them.
printf 'experiment: x\nproblem: no such problem\nplanners: [{planner: rrt}]\n' >"$TMP/list.yaml"
run bench "$TMP/list.yaml" --out-dir "$TMP/none"
problems=$(sed -n 's/.*(built-in: \(.*\)).*/\1/p' <<<"$err" | tr -d ',')
check "the built-in problems are listed" test -n "$problems"

# Solved within the budget (the rest may or may not be: rigid bodies in
# the maze need more iterations than a test should spend in Python).
easy=" maze2d narrow2d cluttered2d cluttered3d cluttered2d_rigid cluttered3d_rigid car2d "
for problem in $problems; do
    cat >"$TMP/$problem.yaml" <<YAML
experiment: python $problem
problem: $problem
seed: 7
max_time: 300
runs: 1
planners:
  - name: python RRTConnect
    command: [python3, $PLANNER]
    progress: ["graph states INTEGER"]
    accepts: [range, max_iterations]
    settings: {max_iterations: 4000}
YAML
    run bench "$TMP/$problem.yaml" --out-dir "$TMP/res"
    dir=$(tail -n1 <<<"$out")
    check "$problem: the benchmark wrote its directory" test -d "$dir"
    check "$problem: problem.json is written once, in the benchmark directory" \
        test -s "$dir/problem.json"
    check "$problem: ... in format runlab-problem/1, for this problem" \
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["format"]!="runlab-problem/1" or d["name"]!=sys.argv[2])' \
        "$dir/problem.json" "$problem"
    console="$dir/console/python RRTConnect.console"
    statuses=$(python3 -c 'import json,sys; print(",".join(str(r["status"]) for p in json.load(open(sys.argv[1]))["planners"] for r in p["runs"]))' "$dir/results.json")
    check "$problem: the planner read the problem (no Error run: $statuses)" \
        test -n "$statuses" -a "${statuses/Error/}" = "$statuses"
    case "$easy" in
    *" $problem "*)
        check "$problem: solved within 4000 iterations (status $statuses)" \
            test "$(grep -c '^runlab-path: ' "$console")" -eq 1 ;;
    esac
    if grep -q '^runlab-path: ' "$console"; then
        check "$problem: every reported path is collision-free ($(python3 "$CHECK" "$dir/problem.json" "$console" | tr '\n' ';'))" \
            quiet python3 "$CHECK" "$dir/problem.json" "$console"
    fi
done

# The checker is not a rubber stamp: a path straight through a wall is refused.
cat >"$TMP/wall.console" <<'TXT'
runlab-path: 0.1,0.5 0.9,0.5
TXT
cat >"$TMP/wall.json" <<'JSON'
{"format": "runlab-problem/1", "name": "t", "workspace": {"dimension": 2, "low": [0, 0], "high": [1, 1]},
 "state": {"dimension": 2, "coordinates": ["x", "y"]}, "robot": {"kind": "point"},
 "start": [0.1, 0.5], "goal": [0.9, 0.5], "goal_tolerance": 0.02, "distance": {"kind": "euclidean"},
 "resolution": 0.005, "clearance": 0, "obstacles": [{"shape": "box", "min": [0.5, 0.2], "max": [0.51, 0.8]}]}
JSON
check "the checker refuses a path through a wall" not_ok python3 "$CHECK" "$TMP/wall.json" "$TMP/wall.console"
finish
