# The numbers `runlab bench` writes, each read back and checked against what the test made
# happen (not against runlab's own reader): a Python planner that sleeps a known time,
# touches a known amount of memory and reports a known progress count; units (seconds, MB),
# bounds and the relations between the values (time <= wall time <= the benchmark's total
# time <= the test's own clock), the log's date, and the direction of the speed-up and of
# the report's verdict. Bounds are lower bounds from the sleeps and upper bounds from the
# test's own clock, so a slow machine can only make them looser.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: the sqlite3 CLI is missing (scripts/install-deps.sh installs it)"; exit 1; }

cat >"$TMP/sleeper.py" <<'PY'
import json, os, sys, time
settings = json.loads(os.environ["RUNLAB_SETTINGS"])
print("start", flush=True)
block = bytearray(int(settings["mem_mb"]) * 1024 * 1024)
for i in range(0, len(block), 4096):  # touch every page: resident, not just reserved
    block[i] = 1
steps = int(settings["sleep"] / 0.01)
for i in range(steps):
    time.sleep(0.01)
    print(f"progress\tsteps done\t{i + 1}", flush=True)
print("property\tsteps\tINTEGER\t%d" % steps)
print("property\tsleep s\tREAL\t%s" % settings["sleep"])
print("status\texact", flush=True)
PY

cat >"$TMP/values.yaml" <<YAML
experiment: values
problem: wall2d
seed: 1
max_time: 60
max_mem: 2048
runs: 5
jobs: 1
time_between_updates: 0.02
planners:
  - name: fast
    command: [python3, "$TMP/sleeper.py"]
    accepts: [sleep, mem_mb]
    progress: ["steps done INTEGER"]
    settings: {sleep: 0.05, mem_mb: 8}
  - name: slow
    command: [python3, "$TMP/sleeper.py"]
    accepts: [sleep, mem_mb]
    progress: ["steps done INTEGER"]
    settings: {sleep: 0.8, mem_mb: 64}
YAML
date_before=$(date -u +%Y%m%d)
t0=$(date +%s.%N)
run bench "$TMP/values.yaml" --out-dir "$TMP/res"
t1=$(date +%s.%N)
date_after=$(date -u +%Y%m%d)
check "the benchmark exits 0" rc_is 0
dir=$(tail -n1 <<<"$out")
db="$dir/results.db"
sq() { sqlite3 "$db" "$1"; }
slow="(SELECT id FROM plannerConfigs WHERE name LIKE '%slow%')"
fast="(SELECT id FROM plannerConfigs WHERE name LIKE '%fast%')"

check "every run solved" test "$(sq 'SELECT COUNT(*) FROM runs WHERE status = 6 AND solved = 1')" = 10
# time is in seconds: at least the planner's sleep after the start mark, at most its wall time
check "time >= the sleep (seconds, not ms)" \
    test "$(sq "SELECT COUNT(*) FROM runs WHERE plannerid = $slow AND time >= 0.8")" = 5
check "time of the fast planner >= its sleep" \
    test "$(sq "SELECT COUNT(*) FROM runs WHERE plannerid = $fast AND time >= 0.05")" = 5
check "time <= wall time for every run" test "$(sq 'SELECT COUNT(*) FROM runs WHERE time <= wall_time')" = 10
# wall time covers the interpreter's start-up too, and fits in the test's own clock
elapsed=$(python3 -c "print($t1 - $t0)")
check "wall time <= the benchmark's total time" \
    test "$(sq 'SELECT COUNT(*) FROM runs, experiments WHERE wall_time <= totaltime')" = 10
check "the sum of wall times <= total time (one job)" \
    test "$(sq 'SELECT SUM(wall_time) <= (SELECT totaltime FROM experiments) FROM runs')" = 1
check "total time <= the test's own clock around the command ($elapsed s)" \
    test "$(sq "SELECT totaltime <= $elapsed FROM experiments")" = 1
check "total time >= the planners' sleeps (5 x 0.8 + 5 x 0.05)" \
    test "$(sq 'SELECT totaltime >= 4.25 FROM experiments')" = 1
# CPU time: seconds of a sleeping single-threaded process, below its wall time
check "cpu time (s) <= wall time" \
    test "$(sq 'SELECT COUNT(*) FROM runs WHERE cpu_time >= 0 AND cpu_time <= wall_time')" = 10
# memory is MB above the start mark: the slow planner touched 64 MB, the fast one 8
check "memory (MB) of the slow planner: 64 touched" \
    test "$(sq "SELECT COUNT(*) FROM runs WHERE plannerid = $slow AND memory >= 60 AND memory < 200")" = 5
check "memory (MB) of the fast planner: 8 touched" \
    test "$(sq "SELECT COUNT(*) FROM runs WHERE plannerid = $fast AND memory >= 6 AND memory < 60")" = 5
check "memory with startup >= memory" \
    test "$(sq 'SELECT COUNT(*) FROM runs WHERE memory_with_startup >= memory')" = 10
check "exit code 0, no signal" test "$(sq 'SELECT COUNT(*) FROM runs WHERE exit_code = 0 AND exit_signal = 0')" = 10
check "integer property as reported" \
    test "$(sq "SELECT COUNT(*) FROM runs WHERE plannerid = $slow AND steps = 80")" = 5
check "real property as reported" \
    test "$(sq "SELECT COUNT(*) FROM runs WHERE plannerid = $fast AND sleep_s = 0.05")" = 5
# progress: sample times in seconds from the start mark, increasing, within the run's time
check "progress times are seconds within each run's time" \
    test "$(sq 'SELECT COUNT(*) FROM progress p JOIN runs r ON p.runid = r.id WHERE p.time < 0 OR p.time > r.wall_time')" = 0
check "the slow planner's last sample is past 0.6 s" \
    test "$(sq "SELECT COUNT(*) FROM (SELECT MAX(p.time) AS last FROM progress p JOIN runs r ON p.runid = r.id WHERE r.plannerid = $slow GROUP BY p.runid) WHERE last >= 0.6")" = 5
check "progress counts never decrease within a run" python3 - "$db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT runid, time, steps_done FROM progress ORDER BY runid, time").fetchall()
prev = {}
for run, t, v in rows:
    if v is not None:
        assert v >= prev.get(run, 0), (run, t, v)
        prev[run] = v
assert len(prev) == 10, prev
PY
# the log: named for the UTC day it started, OMPL's date line of the same day
log=$(ls "$dir"/runlab_*.log)
check "the log is named for today's UTC date" \
    bash -c "[[ '$log' == *_${date_before}T* || '$log' == *_${date_after}T* ]]"
# the terminal's speed-up points the right way: fast is N x faster than slow, N > 1
check "the terminal names fast as the fastest" out_has "fast ran fastest (median time)"
factor=$(sed -nE 's/^ *([0-9.]+) x faster than slow .*/\1/p' <<<"$out")
check "... N x faster than slow, N > 1 (N = $factor)" python3 -c "import sys; assert float(sys.argv[1]) > 1" "${factor:-0}"
# the report's rank-sum verdict: slow (0.75 s more sleep per run) is slower than the best
check "report: the verdict for slow is 'slower'" python3 - "$dir/report.html" <<'PY'
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
rows = [r for r in re.findall(r"<tr>(.*?)</tr>", html, re.S) if "slower" in r or "faster" in r]
assert rows, "no verdict row"
assert any(">slow<" in r and "slower" in r for r in rows), rows
assert not any("faster" in r for r in rows), rows
PY
finish
