#!/usr/bin/env bash
# Where docs and program disagreed (issue 27, item 17), what the program now says: fault
# windows after the run's end and faults on vehicles that are not there are refused with
# one prefix and exit 2 (a spec file's with exit 1); `runlab list` of a HOME that is not a
# directory is an error (exit 2), and its help names the columns in the order printed.
source "$(dirname "$0")/lib.sh"
MAP="${RUNLAB_SOURCE:?}/data/maps/LabMapCommonRoad.xml"

one_prefix() { [ "$(grep -c 'runlab: sim:' <<<"$err")" -eq 1 ] && ! grep -q 'sim: sim:' <<<"$err"; }

run sim --map "$MAP" --duration 10 --fault speeding:2:15:20
check "window after a 10 s run: exit 2" rc_is 2
check "window after a 10 s run: says why" err_has "runlab: sim: --fault speeding:2:15:20: T0 15 s is not before the run's end, 10 s after START"
check "window after a 10 s run: one prefix" one_prefix
run sim --map "$MAP" --offline "$TMP/home" --fault speeding:2:15:20
check "offline without --duration lasts 10 s: window refused, exit 2" rc_is 2
check "offline: nothing recorded" test ! -e "$TMP/home/experiments"
run sim --map "$MAP" --offline "$TMP/taken" --duration 2 --fault speeding:2:1:20
check "a window that starts inside the run is taken (it lasts to the end)" rc_is 0

run sim --map "$MAP" --fault drift:7:1 --offline "$TMP/home"
check "vehicle 7 of 4: exit 2" rc_is 2
check "vehicle 7 of 4: says why" err_has "runlab: sim: --fault drift:7:1: vehicle 7: there are 4 vehicles (numbered from 1)"
check "vehicle 7 of 4: one prefix" one_prefix
run sim --map "$MAP" --vehicles 1 --fault collision:1:2 --offline "$TMP/home"
check "collision alone: exit 2" rc_is 2
check "collision alone: says why" err_has "no other vehicle to collide with"

printf 'vehicles: 4\nfaults: ["drift:7:1"]\n' >"$TMP/spec.yaml"
run sim "$TMP/spec.yaml" --map "$MAP" --offline "$TMP/home"
check "a spec's fault on vehicle 7 of 4: exit 1" rc_is 1
check "a spec's fault: names the file" err_has "$TMP/spec.yaml: faults: drift:7:1: vehicle 7"

run list /nonexistent-runlab-home
check "list of a missing HOME: exit 2" rc_is 2
check "list of a missing HOME: says so" err_has "runlab: list: /nonexistent-runlab-home: no such directory"
check "list of a missing HOME: no table" test -z "$out"
run list "$TMP/spec.yaml"
check "list of a file: exit 2" rc_is 2
mkdir -p "$TMP/empty"
run list "$TMP/empty"
check "list of a home without runs: exit 0" rc_is 0
header=$out
run list --help
check "list --help names the columns in the order printed" python3 - "$header" "$out" <<'PY'
import re, sys
header = sys.argv[1].split()
help_cols = re.findall(r"\b(RUN|STATE|VEH|DUR|PLANNER|EVALUATIONS|SCENARIO|NOTE)\b", sys.argv[2])
sys.exit(0 if help_cols == header else 1)
PY

finish
