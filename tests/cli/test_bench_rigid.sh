# `runlab bench` on the rigid-body problems: tiny benchmarks of an SE(2) rectangle in a maze
# and a narrow passage and of a yawing box in a 3D field, solved, with paths that stay
# valid when re-checked at a finer resolution, and the state dimension as the experiment
# parameter.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: the sqlite3 CLI is missing (scripts/install-deps.sh installs it)"; exit 1; }

for problem in maze2d_rigid cluttered3d_rigid; do
    cat >"$TMP/$problem.yaml" <<YAML
experiment: rigid $problem
problem: $problem
seed: 5
# Bounded by iterations: the outcome is the same on a loaded machine; max_time is only a
# safety net.
max_time: 120
runs: 2
jobs: 2
planners:
  - {name: RRTConnect, planner: rrtconnect, settings: {max_iterations: 200000}}
  - {name: PRM, planner: prm, settings: {max_iterations: 200000}}
  - {name: RRT, planner: rrt, settings: {range: 0.2, max_iterations: 200000}}
YAML
    run bench "$TMP/$problem.yaml" --out "$TMP/res"
    check "$problem: benchmark exits 0" rc_is 0
    dir=$(tail -n1 <<<"$out")
    q() { sqlite3 "$dir/results.db" "$1"; }
    check "$problem: every run solved exactly" \
        test "$(q "SELECT count(*) FROM runs WHERE status=6")" -eq 6
    check "$problem: every path correct at a finer resolution" \
        test "$(q "SELECT count(*) FROM runs WHERE correct_solution=1 AND simplified_correct_solution=1")" -eq 6
    check "$problem: clearance is positive" \
        test "$(q "SELECT count(*) FROM runs WHERE solution_clearance>0")" -eq 6
    check "$problem: the log describes the rigid body" grep -q "separating-axis test" "$dir"/*.log
done
check "SE(2) has three state coordinates, the 3D body four" \
    test "$(sqlite3 "$TMP"/res/rigid*maze2d_rigid*/results.db 'SELECT dimension FROM experiments'),$(
        sqlite3 "$TMP"/res/rigid*cluttered3d_rigid*/results.db 'SELECT dimension FROM experiments')" = "3,4"

# The narrow passage is the hard one (PRM and RRT may need seconds): RRT-Connect only.
printf 'experiment: narrow\nproblem: narrow2d_rigid\nseed: 5\nmax_time: 120\nruns: 2\nplanners: [{planner: rrtconnect, settings: {max_iterations: 1000000}}]\n' \
    >"$TMP/narrow.yaml"
run bench "$TMP/narrow.yaml" --out "$TMP/res"
check "narrow2d_rigid: benchmark exits 0" rc_is 0
dir=$(tail -n1 <<<"$out")
check "narrow2d_rigid: RRT-Connect solves, with correct paths" \
    test "$(sqlite3 "$dir/results.db" "SELECT count(*) FROM runs WHERE status=6 AND correct_solution=1")" -eq 2
finish
