# `runlab runs`: a tree of good and broken runs is listed with every run classified and
# its reasons; --json gives one object per run with path, status and reasons; `runs
# report` counts by status and reason; nothing about a bad run is fatal.
. "$(dirname "$0")/lib.sh"

R="$TMP/root"
run explore --root "$R" --sweep --scenes 1,2 --seeds 1 --budget 40
check "sweep for the tree exits 0" rc_is 0
mapfile -t dirs < <(find "$R" -name run_manifest.yaml -printf '%h\n' | sort)
check "four runs written" [ "${#dirs[@]}" -eq 4 ]
# An intact run's final gain is the sum over layers of the summary's
# real_accumulated_gain (docs/perflog.md, "A run's numbers"); the nbv run has two layers.
good="${dirs[2]}"
run runs --json "$good"
want=$(python3 -c 'import sys, yaml; print(sum(yaml.safe_load(open(sys.argv[1]))["real_accumulated_gain"].values()))' "$good/episode_summary.yaml")
got=$(python3 -c 'import json,sys; print(json.loads(sys.stdin.read())[0]["final_gain"])' <<<"$out")
check "final gain is the summary's sum over layers ($want)" python3 -c "import sys; sys.exit(float('$got') != float('$want'))"
check "the run has two layers" grep -q "^  backtracking:" "$good/episode_summary.yaml"

# Break three of them: cut the last row, drop a manifest, empty a CSV; add a symlink loop.
truncate -s -3 "${dirs[0]}/performance_log.csv"
rm "${dirs[1]}/run_manifest.yaml"
: >"${dirs[2]}/performance_log.csv"
ln -s .. "$R/sweep/loop"

run runs "$R"
check "runs exits 0 with broken runs" rc_is 0
check "runs lists a parsed run" out_has "parsed"
check "runs shows the truncated row" out_has "truncated_row"
check "runs shows the missing manifest" out_has "no_manifest"
check "runs shows the empty CSV as skipped" out_has "skipped"
check "runs reports the symlink loop on stderr" err_has "$R/sweep/loop: symbolic link loop"

run runs --json "$R"
check "runs --json exits 0" rc_is 0
json_ok() {
    python3 -c '
import json, sys
runs = json.loads(sys.stdin.read())
assert len(runs) == 4, len(runs)
assert all({"path", "status", "reasons"} <= set(r) for r in runs)
st = sorted(r["status"] for r in runs)
assert st == ["degraded", "degraded", "parsed", "skipped"], st
assert any("csv_empty" in r["reasons"] for r in runs)
' <<<"$out"
}
check "runs --json: 4 objects with path, status, reasons" json_ok

run runs "$R" --json
check "options may follow the roots (docs/cli.md)" python3 -c 'import json,sys; assert len(json.load(sys.stdin)) == 4' <<<"$out"

run runs report "$R"
check "runs report exits 0" rc_is 0
check "runs report counts statuses" out_has "runs: 4 (parsed 1, degraded 2, skipped 1)"
check "runs report counts reasons" out_has "csv_empty"

# A missing root is the user's mistake (issue 11, item 17): exit 1, said on stderr,
# and no header that looks like an empty result.
run runs "$TMP/does-not-exist"
check "a missing root is an error (exit 1)" rc_is 1
check "a missing root is named" err_has "runlab: runs: $TMP/does-not-exist: No such file or directory"
check "a missing root prints no table" [ -z "$out" ]
run runs "$R" "$TMP/does-not-exist"
check "one missing root among others is an error too" rc_is 1
run runs --json "$TMP/does-not-exist"
check "runs --json on a missing root: exit 1" rc_is 1
run runs "$R/sweep/grid/s01/nbv/"*/performance_log.csv
check "a root that is a file: exit 1" rc_is 1
check "a root that is a file is named" err_has "not a directory"
run runs
check "no root is a usage error" rc_is 2

# Many runs: a progress bar on a terminal (script(1) gives one), nothing without one.
run explore --sweep --root "$TMP/many" --scenes 1,2,3,4,5 --seeds 1,2,3,4,5,6,7,8,9,10 --budget 40
check "a sweep of 100 runs exits 0" rc_is 0
run runs "$TMP/many"
check "100 runs without a terminal: no progress on stderr" err_empty
if command -v script >/dev/null 2>&1; then
    script -qec "'$RUNLAB' runs '$TMP/many' >/dev/null" "$TMP/runs-tty.log" >/dev/null 2>&1
    check "100 runs on a terminal: a progress bar" grep -q "100/100 runs" "$TMP/runs-tty.log"
else
    echo "SKIP: progress bar on a terminal: script(1) not installed"
fi

finish
