# `runlab bench` as users run it: a spec with good and misbehaving planners (each run
# recorded with its own status), spec errors that name file, line and key, import and
# merge, and kill -9 of the harness followed by --resume.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: the sqlite3 CLI is missing (scripts/install-deps.sh installs it)"; exit 1; }

run bench --help
check "bench --help exits 0" rc_is 0
check "bench --help says why parallel runs perturb timing" out_has "perturbed"

cat >"$TMP/mixed.yaml" <<YAML
experiment: mixed planners
problem: narrow2d
seed: 3
# Generous: on a loaded machine a memory hog must get the CPU time to pass 64 MB before
# the time limit would classify it as a Timeout, and the good planners must finish.
max_time: 3.0
max_mem: 32
runs: 2
jobs: 2
parameters: {passage width: 0.03}
planners:
  - {name: RRTConnect, planner: rrtconnect, settings: {max_iterations: 1000000}}
  - {name: PRM, planner: prm, settings: {max_iterations: 1000000}}
  - {name: crash, planner: crash}
  - {name: abort, planner: abort}
  - {name: hang, planner: hang}
  - {name: hog, planner: memhog}
YAML
run bench "$TMP/mixed.yaml" --out-dir "$TMP/res"
check "mixed benchmark exits 1: crash, abort, hang and hog solved no run" rc_is 1
dir=$(tail -n1 <<<"$out")
check "last line is the new directory" test -d "$dir"
check "the summary has solved %, median time with its CI, range and peak memory" \
    out_has "solved  median time [95% CI]"
check "... a row per planner" test "$(grep -cE '^(RRTConnect|PRM|crash|abort|hang|hog) +[0-9]+%' <<<"$out")" -eq 6
check "... the crash planner solved 0%" grep -qE '^crash +0%' <<<"$out"
check "... the fastest solving planner is compared with the others" out_has "ran fastest (median time); it is"
check "... with a rank-sum p" grep -qE "x faster than (RRTConnect|PRM) \(rank-sum p = " <<<"$out"
check "... planners that solved nothing are not compared" out_has "(crash solved no run: not compared)"
for f in results.db results.csv results.json manifest.json journal.tsv spec.json console; do
    check "directory has $f" test -e "$dir/$f"
done
check "one OMPL log" test "$(ls "$dir"/*.log | wc -l)" -eq 1
q() { sqlite3 "$dir/results.db" "$1"; }
st() { q "SELECT group_concat(status) FROM runs JOIN plannerConfigs p ON p.id=plannerid WHERE p.name='$1'"; }
check "good planner solved" test "$(st RRTConnect)" = "6,6"
check "crash recorded as Crash (7)" test "$(st crash)" = "7,7"
check "abort recorded as Abort (8)" test "$(st abort)" = "8,8"
check "hang recorded as Timeout (4)" test "$(st hang)" = "4,4"
check "memory hog recorded as Out of memory (10)" test "$(st hog)" = "10,10"
check "the database has OMPL's views" test "$(q "SELECT count(*) FROM bestPlannerConfigs")" -eq 6
check "experiment parameter column" test "$(q "SELECT passagewidth FROM experiments")" = "0.03"
check "CSV has a row per run" test "$(wc -l <"$dir/results.csv")" -eq 13
check "manifest has provenance" grep -q '"git_sha"' "$dir/manifest.json"
check "JSON export has the crash reason" grep -q 'killed by signal 11' "$dir/results.json"

# import of runlab's own log gives the database runlab wrote
run bench import "$dir"/*.log --db "$TMP/imported.db"
check "import exits 0" rc_is 0
check "imported database equals the direct one" \
    diff <(sqlite3 "$TMP/imported.db" .dump | tr -d '"') <(sqlite3 "$dir/results.db" .dump | tr -d '"')

# merge of two benchmark directories: two experiments in one database
run bench "$TMP/mixed.yaml" --out "$TMP/res" -j 2
dir2=$(tail -n1 <<<"$out")
check "a second run gets a new directory" test "$dir2" != "$dir"
run bench merge "$dir" "$dir2" --db "$TMP/merged.db"
check "merge exits 0" rc_is 0
check "merged database has two experiments" \
    test "$(sqlite3 "$TMP/merged.db" 'SELECT count(*) FROM experiments')" -eq 2
runs_before=$(sqlite3 "$TMP/merged.db" 'SELECT count(*) FROM runs')
run bench merge "$dir" --db "$TMP/merged.db"
check "merging an experiment the database holds exits 0" rc_is 0
check "... says it was skipped" err_has "already holds experiment"
check "... and adds no experiment" test "$(sqlite3 "$TMP/merged.db" 'SELECT count(*) FROM experiments')" -eq 2
check "... nor any run" test "$(sqlite3 "$TMP/merged.db" 'SELECT count(*) FROM runs')" -eq "$runs_before"

# executable planners: the Python example, and programs that break the protocol
cat >"$TMP/bad_planner.sh" <<'SH'
#!/bin/sh
echo "progress	no such property	1"
echo "status	exact"
SH
cat >"$TMP/silent.sh" <<'SH'
#!/bin/sh
echo "working" >&2
exit 0
SH
chmod +x "$TMP/bad_planner.sh" "$TMP/silent.sh"
command -v python3 >/dev/null && py=1 || py=0
cat >"$TMP/exec.yaml" <<YAML
experiment: programs
problem: wall2d
max_time: 30
runs: 2
planners:
  - name: undeclared
    command: ["$TMP/bad_planner.sh"]
  - name: silent
    command: "$TMP/silent.sh"
YAML
if [ "$py" = 1 ]; then
    printf '  - name: python\n    command: [python3, "%s/examples/planner.py"]\n    progress: ["graph states INTEGER"]\n' \
        "$RUNLAB_SOURCE" >>"$TMP/exec.yaml"
fi
run bench "$TMP/exec.yaml" --out "$TMP/res"
check "program benchmark exits 1: some planner solved no run" rc_is 1
check "... naming the planner and its first reason" err_has "planner 'silent' solved none of its 2 runs; first reason: exited with code 0 before reporting"
edir=$(tail -n1 <<<"$out")
eq() { sqlite3 "$edir/results.db" "$1"; }
est() { eq "SELECT group_concat(status) FROM runs JOIN plannerConfigs p ON p.id=plannerid WHERE p.name='$1'"; }
check "undeclared progress property is an Error (11)" test "$(est undeclared)" = "11,11"
check "the reason names the protocol line" grep -q "protocol: line 1: undeclared progress property" "$edir/results.csv"
check "exit without a status line is an Error" test "$(est silent)" = "11,11"
check "exit without status: reason" grep -q "exited with code 0 before reporting" "$edir/results.csv"
printf 'experiment: m\nproblem: wall2d\nplanners:\n  - name: missing\n    command: [./does-not-exist]\n' >"$TMP/missing.yaml"
run bench "$TMP/missing.yaml" --out "$TMP/res"
check "a program that cannot start is refused before the first run" rc_is 1
check "... resolved from the spec's directory, with file, line and key" \
    err_has "missing.yaml:5: planners[0].command: planner 'missing' cannot start: '$TMP/./does-not-exist'"
check "... and no benchmark directory is made for it" test -z "$(ls -d "$TMP"/res/m_* 2>/dev/null)"
check "console output of a program is kept" grep -q working "$edir/console/silent.console"
if [ "$py" = 1 ]; then
    check "the Python example planner solves" test "$(est python)" = "6,6"
    check "its run property reached the database" \
        test "$(eq "SELECT count(solution_length) FROM runs JOIN plannerConfigs p ON p.id=plannerid WHERE p.name='python'")" -eq 2
fi

# spec errors: file, line and key
cat >"$TMP/bad.yaml" <<YAML
experiment: bad
problem: maze2d
planners:
  - name: ok
    planner: rrt
  - name: typo
    planner: rrt
    settings: {rnage: 0.1}
YAML
run bench "$TMP/bad.yaml" --out "$TMP/res"
check "bad setting exits 1" rc_is 1
check "bad setting names file, line and key" err_has "bad.yaml:8: planners[1].settings"
check "bad setting names the setting" err_has "rnage"
printf 'experiment: x\nproblem: maze2d\nmax_tim: 1\nplanners: [{planner: rrt}]\n' >"$TMP/bad2.yaml"
run bench "$TMP/bad2.yaml"
check "unknown key names file, line and key" err_has "bad2.yaml:3: max_tim: unknown key"
printf 'experiment: x\nproblem: maze2d\nplanners:\n  - {name: "a;b", planner: rrt}\n' >"$TMP/bad3.yaml"
run bench "$TMP/bad3.yaml"
check "a name that breaks the log is refused" err_has "would break the OMPL log format"
# A list item that is not a mapping has no key to point at: its own line (this crashed).
printf 'experiment: x\nproblem: maze2d\nplanners:\n  - {planner: rrt}\n  - RRT\n' >"$TMP/bad4.yaml"
run bench "$TMP/bad4.yaml" --out "$TMP/res4"
check "a planner that is not a mapping exits 1" rc_is 1
check "a planner that is not a mapping names file, line and item" err_has "bad4.yaml:5: planners[1]: expected a mapping"
# Values of the wrong kind (nulls crashed the spec reader): each is refused with its place.
bad_spec() { # NAME PLANNERS-AND-PARAMETERS-YAML EXPECTED-MESSAGE
    printf 'experiment: x\nproblem: maze2d\n%b' "$2" >"$TMP/$1.yaml"
    run bench "$TMP/$1.yaml" --out "$TMP/res-$1"
    check "$1: refused with exit 1" rc_is 1
    check "$1: says where and what" err_has "$3"
}
bad_spec null_setting 'planners:\n  - {planner: rrt, settings: {range: ~}}\n' \
    "null_setting.yaml:4: planners[0].settings: setting 'range': expected a number"
bad_spec null_parameter 'parameters: {p: ~}\nplanners: [{planner: rrt}]\n' \
    "null_parameter.yaml:3: parameters: parameter 'p': expected a number"
bad_spec mapping_parameter 'parameters: {p: {a: 1}}\nplanners: [{planner: rrt}]\n' \
    "mapping_parameter.yaml:3: parameters: parameter 'p'"
bad_spec null_argument 'planners:\n  - {name: c, command: [/bin/true, ~]}\n' \
    "null_argument.yaml:4: planners[0].command: argument 2 is not a string"
bad_spec list_argument 'planners:\n  - {name: c, command: [[1, 2]]}\n' \
    "list_argument.yaml:4: planners[0].command: argument 1 is not a string"
bad_spec null_progress 'planners:\n  - {name: c, command: [/bin/true], progress: [~]}\n' \
    "null_progress.yaml:4: planners[0].progress: entry 1 is not a string"
bad_spec null_name 'planners:\n  - {name: ~, planner: rrt}\n' \
    "null_name.yaml:4: planners[0].name: expected a string"
bad_spec number_planner 'planners:\n  - {planner: 7}\n' \
    "number_planner.yaml:4: planners[0].planner: expected a string"

# kill -9 in the middle, then --resume: as many runs as an uninterrupted benchmark
cat >"$TMP/long.yaml" <<YAML
experiment: resume test
problem: maze2d
max_time: 0.5
runs: 6
planners:
  - {name: RRTstar, planner: rrtstar}
  - {name: hang, planner: hang}
YAML
"$RUNLAB" bench "$TMP/long.yaml" --out "$TMP/kill" >/dev/null 2>&1 &
pid=$!
# Kill once at least one run is journaled (polling, not a fixed sleep: a loaded or
# sanitized build may take seconds to get there).
for _ in $(seq 1 1200); do
    j=$(ls "$TMP"/kill/*/journal.tsv 2>/dev/null | head -n1)
    if [ -n "$j" ] && [ "$(wc -l <"$j")" -ge 2 ]; then break; fi
    sleep 0.05
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
kdir=$(ls -d "$TMP"/kill/*/ | head -n1)
done_before=$(grep -c '^run[[:space:]]' "$kdir/journal.tsv")
check "the killed harness had journaled some runs, not all" test "$done_before" -gt 0 -a "$done_before" -lt 12
run bench --resume "$kdir"
check "resume exits 1 (the hang planner solved nothing), not 2" rc_is 1
check "resume gives all 12 runs" test "$(sqlite3 "$kdir/results.db" 'SELECT count(*) FROM runs')" -eq 12
check "journal has 12 runs" test "$(grep -c '^run[[:space:]]' "$kdir/journal.tsv")" -eq 12
check "exactly one OMPL log after the resume" test "$(ls "$kdir"/*.log | wc -l)" -eq 1
check "total time covers both sessions (>= the 6 RRT* runs' time limits)" \
    test "$(sqlite3 "$kdir/results.db" 'SELECT totaltime >= 3 FROM experiments')" = 1
run bench --resume "$kdir"
check "resume of a finished benchmark exits 0" rc_is 0
check "... and says there is nothing to do" out_has "finished already"
check "... still one log" test "$(ls "$kdir"/*.log | wc -l)" -eq 1

# Two harnesses on one directory: the second is refused and names the holder.
cat >"$TMP/slow.yaml" <<YAML
experiment: lock test
problem: narrow2d
max_time: 600
runs: 1
planners:
  - {name: hang, planner: hang}
YAML
"$RUNLAB" bench "$TMP/slow.yaml" --out "$TMP/lock" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do [ -s "$TMP"/lock/*/.lock ] 2>/dev/null && break; sleep 0.1; done
ldir=$(ls -d "$TMP"/lock/*/ | head -n1)
run bench --resume "$ldir"
check "a second harness on a directory in use is refused" rc_is 1
check "... naming the holder's pid" err_has "pid $pid on"
kill -INT "$pid"
wait "$pid" 2>/dev/null
rm -f "$TMP/int.err"
"$RUNLAB" bench "$TMP/slow.yaml" --out "$TMP/lock2" >/dev/null 2>"$TMP/int.err" &
pid=$!
for _ in $(seq 1 600); do [ -s "$TMP"/lock2/*/.lock ] 2>/dev/null && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid" 2>/dev/null
check "Ctrl+C prints the directory and the --resume command" grep -q "Resume with: runlab bench --resume" "$TMP/int.err"
check "no run process outlived the harness" test -z "$(pgrep -f 'runlab bench.*long.yaml')"
finish
