# `runlab bench` against planners written to misbehave (issue 16, items 1-4): an "error"
# line or the internal "end" keyword followed by a hang or a memory hog, memory held by a
# child of the run, a crash inside a shell command, a child that calls setsid(), and a
# harness killed with -9 while a shell's program runs. Each case runs twice: with the
# process-tree mode the machine allows (a cgroup per run for root) and with the /proc
# fallback forced (RUNLAB_BENCH_TREE=proc), so CI tests both.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: the sqlite3 CLI is missing (scripts/install-deps.sh installs it)"; exit 1; }

# A marker no other process on the machine has in its command line.
mark="4242$$"

cat >"$TMP/error_hang.sh" <<'SH'
#!/bin/sh
printf 'error\tgave up early\n'
exec sleep 600
SH
cat >"$TMP/error_hog.sh" <<'SH'
#!/bin/sh
printf 'error\tgave up early\n'
# a child of the run holds the memory: 96 MB, touched
exec python3 -c 'x = b"\x01" * (96 << 20); import time; time.sleep(600)'
SH
cat >"$TMP/end_hang.sh" <<'SH'
#!/bin/sh
printf 'status\texact\nend\n'
exec sleep 600
SH
cat >"$TMP/child_hog.sh" <<'SH'
#!/bin/sh
python3 -c 'x = b"\x01" * (96 << 20); import time; time.sleep(600)'
printf 'status\texact\n'
SH
cat >"$TMP/setsid.sh" <<SH
#!/bin/sh
setsid sleep $mark &
printf 'status\texact\n'
SH
chmod +x "$TMP"/*.sh

# Hangs: the time limit decides them whatever the load, so it can be short.
cat >"$TMP/hostile.yaml" <<YAML
experiment: hostile
problem: wall2d
max_time: 2
max_mem: 32
runs: 1
planners:
  - {name: error_hang, command: ["$TMP/error_hang.sh"]}
  - {name: end_hang, command: ["$TMP/end_hang.sh"]}
  - {name: crash_in_shell, command: "true; sh -c 'kill -SEGV \$\$'"}
  - {name: hup_in_shell, command: "true; sh -c 'kill -HUP \$\$'"}
  - {name: abort_direct, command: "sh -c 'kill -ABRT \$\$'"}
  - {name: setsid, command: ["$TMP/setsid.sh"]}
YAML
# Memory hogs: a generous time limit, so that even a slow start reaches the memory limit.
cat >"$TMP/hogs.yaml" <<YAML
experiment: hogs
problem: wall2d
max_time: 120
max_mem: 32
runs: 1
planners:
  - {name: error_hog, command: ["$TMP/error_hog.sh"]}
  - {name: child_hog, command: "$TMP/child_hog.sh"}
YAML

for mode in auto proc; do
    RUNLAB_BENCH_TREE=$mode run bench "$TMP/hostile.yaml" --out "$TMP/res-$mode"
    check "$mode: benchmark exits" test "$rc" -le 1
    dir=$(tail -n1 <<<"$out")
    q() { sqlite3 "$dir/results.db" "$1"; }
    st() { q "SELECT status FROM runs JOIN plannerConfigs p ON p.id=plannerid WHERE p.name='$1'"; }
    check "$mode: error then hang is killed at the time limit (Timeout 4)" test "$(st error_hang)" = 4
    check "$mode: ... and its reason keeps the reported error" grep -q "gave up early" "$dir/results.csv"
    check "$mode: 'end' from a program is a protocol error (11)" test "$(st end_hang)" = 11
    check "$mode: ... naming the keyword" bash -c "grep '^hostile,end_hang,' '$dir/results.csv' | grep -q 'unknown keyword'"
    check "$mode: a crash inside a shell command is a Crash (7)" test "$(st crash_in_shell)" = 7
    check "$mode: ... named by its signal" bash -c "grep '^hostile,crash_in_shell,' '$dir/results.csv' | grep -q 'signal 11'"
    # 129 = 128 + SIGHUP, the lowest exit code a shell gives a program killed by a signal
    check "$mode: signal 1 inside a shell command (exit code 129) is a Crash (7)" test "$(st hup_in_shell)" = 7
    check "$mode: ... named by its signal" bash -c "grep '^hostile,hup_in_shell,' '$dir/results.csv' | grep -q 'signal 1 '"
    check "$mode: a simple shell command runs without a shell: Abort (8)" test "$(st abort_direct)" = 8
    check "$mode: the setsid run itself solved" test "$(st setsid)" = 6
    check "$mode: nothing a run started outlives it" test -z "$(pgrep -f "sleep $mark")"

    RUNLAB_BENCH_TREE=$mode run bench "$TMP/hogs.yaml" --out "$TMP/hogs-$mode"
    dir=$(tail -n1 <<<"$out")
    check "$mode: error then a memory hog is killed for memory (10)" test "$(st error_hog)" = 10
    check "$mode: memory of a child of the run counts (10)" test "$(st child_hog)" = 10
    check "$mode: its peak memory is the child's (above max_mem)" \
        test "$(q "SELECT memory > 32 FROM runs JOIN plannerConfigs p ON p.id=plannerid WHERE p.name='child_hog'")" = 1
done

# A flood of console output (the planner writes 50 MB) is capped per run, with a note of
# how much was cut, and each run's output is marked with the run it came from.
cat >"$TMP/flood.sh" <<'SH'
#!/bin/sh
echo "hello from run $RUNLAB_RUN" >&2
head -c 50000000 /dev/zero | tr '\0' x >&2
printf 'status\texact\n'
SH
chmod +x "$TMP/flood.sh"
cat >"$TMP/flood.yaml" <<YAML
experiment: flood
problem: wall2d
max_time: 120
runs: 2
console_limit: 100000
planners:
  - {name: flood, command: ["$TMP/flood.sh"]}
YAML
run bench "$TMP/flood.yaml" --out-dir "$TMP/flood"
dir=$(tail -n1 <<<"$out")
con="$dir/console/flood.console"
check "flood: both runs solved" bash -c "grep -c '^flood,flood,.,Exact' '$dir/results.csv' | grep -qx 2"
check "flood: the console file is capped (2 runs x 100 kB + marks)" test "$(wc -c <"$con")" -lt 201000
check "flood: each run is marked" test "$(grep -c "^=== runlab: planner 'flood', run [12] " "$con")" -eq 2
check "flood: the cut is counted exactly" \
    test "$(grep -c "49900017 more bytes of this run's output were cut (console_limit 100000" "$con")" -eq 2
check "flood: a run's own first line follows its mark" bash -c "grep -A1 \"run 1 (index 0)\" '$con' | grep -q '^hello from run 0'"

# One run reporting 3000 distinct properties (more than SQLite's 2000 columns): that run
# alone loses what is too many, with a reason; the database is written, and the journal
# --resume wrote reads back. A program's run gets a simplification time (0) as OMPL's
# always do, so Planner Arena's views rank it.
cat >"$TMP/props.sh" <<'SH'
#!/bin/sh
i=0
while [ $i -lt 3000 ]; do printf 'property\tp%d\tINTEGER\t%d\n' $i $i; i=$((i + 1)); done
printf 'status\texact\n'
SH
printf '#!/bin/sh\nprintf "status\\texact\\n"\n' >"$TMP/plain.sh"
chmod +x "$TMP/props.sh" "$TMP/plain.sh"
cat >"$TMP/props.yaml" <<YAML
experiment: props
problem: wall2d
max_time: 120
runs: 1
planners:
  - {name: plain, command: ["$TMP/plain.sh"]}
  - {name: many, command: ["$TMP/props.sh"]}
YAML
run bench "$TMP/props.yaml" --out-dir "$TMP/props"
check "props: the benchmark is written (exit 0)" rc_is 0
dir=$(tail -n1 <<<"$out")
check "props: the run kept its status" \
    test "$(sqlite3 "$dir/results.db" "SELECT status FROM runs JOIN plannerConfigs p ON p.id=plannerid WHERE p.name='many'")" = 6
check "props: its reason says what was dropped" grep -q "run properties dropped: the experiment has reached 1000" "$dir/results.csv"
check "props: the other planner's run is untouched" \
    bash -c "grep '^props,plain,' '$dir/results.csv' | grep -vq dropped"
check "props: a program's run has simplification time 0, not NULL" \
    test "$(sqlite3 "$dir/results.db" "SELECT count(*) FROM runs WHERE simplification_time = 0")" = 2
rm "$dir/report.html"
run bench --resume "$dir"
check "props: --resume reads the journal it wrote" rc_is 0
check "props: ... and keeps both runs" test "$(sqlite3 "$dir/results.db" 'SELECT count(*) FROM runs')" = 2

# Names OMPL's own log parser cannot take as SQL columns: refused in a spec, mapped by the
# documented rule when a program reports them, with the original kept in the manifest.
cat >"$TMP/names.sh" <<'SH'
#!/bin/sh
printf 'property\tsolution-length\tREAL\t1.5\n'
printf 'property\t1st try\tINTEGER\t1\n'
printf 'property\torder\tINTEGER\t2\n'
printf 'property\tgood name\tINTEGER\t3\n'
printf 'status\texact\n'
SH
chmod +x "$TMP/names.sh"
cat >"$TMP/names.yaml" <<YAML
experiment: names
problem: wall2d
max_time: 120
runs: 1
planners:
  - {name: named, command: ["$TMP/names.sh"]}
YAML
run bench "$TMP/names.yaml" --out-dir "$TMP/names"
check "names: exits 0" rc_is 0
dir=$(tail -n1 <<<"$out")
cols=$(sqlite3 "$dir/results.db" "SELECT group_concat(name) FROM pragma_table_info('runs')")
for c in solution_length _1st_try order_ good_name; do
    check "names: column $c" grep -qw -- "$c" <<<"$cols"
done
check "names: the manifest keeps the original names" \
    python3 -c "import json,sys; m=json.load(open('$dir/manifest.json'))['renamed_properties']; sys.exit(0 if m=={'solution-length':'solution_length','1st try':'_1st try','order':'order_'} else 1)"
printf 'experiment: bad\nproblem: wall2d\nparameters: {pass.width: 1}\nplanners:\n  - {name: p, command: [/bin/true]}\n' >"$TMP/badparam.yaml"
run bench "$TMP/badparam.yaml" --out-dir "$TMP/names"
check "names: a parameter OMPL's parser cannot take is refused" rc_is 1
check "... saying which byte" err_has "'.' at byte 4"
printf 'experiment: bad\nproblem: wall2d\nplanners:\n  - {name: p, command: [/bin/true], progress: ["select INTEGER"]}\n' >"$TMP/badprog.yaml"
run bench "$TMP/badprog.yaml" --out-dir "$TMP/names"
check "names: a progress property that is an SQL keyword is refused" rc_is 1
check "... as a keyword" err_has "SQL keyword"

# Smaller things: a line over 64 KiB names its line number, a NUL in a line is refused
# (it would cut a name), each bench subcommand's --help is its own.
cat >"$TMP/long_line.sh" <<'SH'
#!/bin/sh
printf 'status\texact\n'
head -c 70000 /dev/zero | tr '\0' a
printf '\n'
SH
printf '#!/bin/sh\nprintf "property\\tab\\0cd\\tINTEGER\\t1\\nstatus\\texact\\n"\n' >"$TMP/nul.sh"
chmod +x "$TMP/long_line.sh" "$TMP/nul.sh"
cat >"$TMP/small.yaml" <<YAML
experiment: small
problem: wall2d
max_time: 120
runs: 1
planners:
  - {name: long_line, command: ["$TMP/long_line.sh"]}
  - {name: nul, command: ["$TMP/nul.sh"]}
YAML
run bench "$TMP/small.yaml" --out-dir "$TMP/small"
dir=$(tail -n1 <<<"$out")
check "small: a line over 64 KiB is named by its number (2)" grep -q "protocol: line 2: line longer than 64 KiB" "$dir/results.csv"
check "small: a NUL byte in a line is refused" grep -q "protocol: line 1: NUL byte in line" "$dir/results.csv"
for sub in import merge report; do
    run bench $sub --help
    check "bench $sub --help is its own" out_has "Usage: runlab bench $sub"
done

# Settings of a command planner: passed as RUNLAB_SETTINGS and on stdin, recorded as its
# configuration, and a key it does not accept is refused.
cat >"$TMP/settings.sh" <<'SH'
#!/bin/sh
read -r first
printf 'property\tsettings env\tTEXT\t%s\n' "$RUNLAB_SETTINGS"
printf 'property\tsettings stdin\tTEXT\t%s\n' "$first"
printf 'status\texact\n'
SH
chmod +x "$TMP/settings.sh"
cat >"$TMP/settings.yaml" <<YAML
experiment: settings
problem: wall2d
max_time: 120
runs: 1
planners:
  - name: configured
    command: ["$TMP/settings.sh"]
    accepts: [range, greedy, label]
    settings: {range: 0.25, greedy: true, label: "a b"}
YAML
run bench "$TMP/settings.yaml" --out-dir "$TMP/settings"
check "settings: exits 0" rc_is 0
dir=$(tail -n1 <<<"$out")
check "settings: RUNLAB_SETTINGS holds them as JSON" \
    python3 -c "import json,sys; r=json.load(open('$dir/results.json'))['planners'][0]['runs'][0]['properties']; sys.exit(0 if json.loads(r['settings env'])=={'range':0.25,'greedy':True,'label':'a b'} else 1)"
check "settings: so does the first line of stdin" \
    python3 -c "import json,sys; r=json.load(open('$dir/results.json'))['planners'][0]['runs'][0]['properties']; sys.exit(0 if r['settings stdin']==r['settings env'] else 1)"
check "settings: recorded in plannerConfigs" \
    bash -c "sqlite3 '$dir/results.db' 'SELECT settings FROM plannerConfigs' | grep -q 'range'"
sed 's/settings: {range: 0.25/settings: {rnage: 0.25/' "$TMP/settings.yaml" >"$TMP/typo.yaml"
run bench "$TMP/typo.yaml" --out-dir "$TMP/settings"
check "settings: a key the planner does not accept is refused" rc_is 1
check "... naming it" err_has "setting 'rnage': the planner does not accept it"

# The start mark: an interpreted planner's start-up (30 MB held, half a second) counts
# neither in its time nor in its memory, and the whole peak is kept beside.
cat >"$TMP/startup.sh" <<'SH'
#!/bin/bash
x=$(head -c 30000000 /dev/zero | tr '\0' a)
sleep 0.5
printf 'start\n'
printf 'status\texact\n'
SH
chmod +x "$TMP/startup.sh"
cat >"$TMP/startup.yaml" <<YAML
experiment: startup
problem: wall2d
max_time: 120
runs: 1
planners:
  - {name: interpreted, command: ["$TMP/startup.sh"]}
YAML
run bench "$TMP/startup.yaml" --out-dir "$TMP/startup"
dir=$(tail -n1 <<<"$out")
sq() { sqlite3 "$dir/results.db" "$1"; }
check "start: solved" test "$(sq 'SELECT status FROM runs')" = 6
check "start: time counts from the mark (wall time - time >= the 0.5 s before it)" \
    test "$(sq 'SELECT wall_time - time >= 0.5 FROM runs')" = 1
check "start: the start-up's 30 MB are in 'memory with startup'" \
    test "$(sq 'SELECT memory_with_startup > 28 FROM runs')" = 1
check "start: ... and not in 'memory'" \
    test "$(sq 'SELECT memory < memory_with_startup - 25 FROM runs')" = 1

# kill -9 of the harness while a planner started through a shell runs: the keeper ends it
cat >"$TMP/killed.yaml" <<YAML
experiment: killed harness
problem: wall2d
max_time: 600
runs: 1
planners:
  - {name: shell_child, command: "sleep ${mark}1; echo done >&2"}
YAML
for mode in auto proc; do
    RUNLAB_BENCH_TREE=$mode "$RUNLAB" bench "$TMP/killed.yaml" --out "$TMP/kill-$mode" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do pgrep -f "sleep ${mark}1" >/dev/null && break; sleep 0.1; done
    check "$mode: the planner's program runs" pgrep -f "sleep ${mark}1"
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    for _ in $(seq 1 600); do pgrep -f "sleep ${mark}1" >/dev/null || break; sleep 0.1; done
    check "$mode: after kill -9 of the harness nothing of the run is left" test -z "$(pgrep -f "sleep ${mark}1")"
    for _ in $(seq 1 100); do [ -z "$(find /sys/fs/cgroup/memory -maxdepth 6 -name "runlab-$pid" 2>/dev/null)" ] && break; sleep 0.1; done
    check "$mode: the killed harness's cgroups are removed" \
        test -z "$(find /sys/fs/cgroup/memory -maxdepth 6 -name "runlab-$pid" 2>/dev/null)"
done
finish
