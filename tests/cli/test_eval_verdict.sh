# `runlab evaluate`'s verdict as a lab engineer reads it (issue 28), on runs of `runlab sim
# --offline`: under `speeding` the acceleration at its limit (rounding noise) passes and no
# check has a zero-length interval or reads "3 over the limit 3"; a run without a map is
# INCOMPLETE (exit 3) with one line for the checks that need a map; a partial evaluation
# does not replace the verdict `runlab list` shows; a run stopped early says how far it got.
. "$(dirname "$0")/lib.sh"

H="$TMP/home"
export RUNLAB_HOME="$H"
printf 'speed: 1.2\n' >"$TMP/spec.yaml"

sim() { # sim ARGS...: an offline run; sets $RUN
    run sim "$TMP/spec.yaml" --offline "$H" --vehicles 2 --seed 3 "$@"
    check "sim $* exits 0" rc_is 0
    RUN=$(tail -n 1 <<<"$out")
}

# summary EXPR: a Python expression over the latest evaluation's summary.json (s) of $RUN.
summary() {
    python3 - "$RUN" "$1" <<'PY'
import glob, json, os, re, sys
ev = sorted(glob.glob(os.path.join(sys.argv[1], "evaluations", "*")))[-1]
s = json.load(open(os.path.join(ev, "summary.json")))
ok = eval("(" + sys.argv[2] + ")")
if not ok:
    print("  summary:", {k: s[k] for k in s if k != "checks"})
sys.exit(0 if ok else 1)
PY
}

# ---- speeding: a FAIL for the speed, none for the acceleration at its limit ----
sim --duration 10 --fault speeding:2:3:8
SPEEDING=$RUN
run evaluate "$RUN"
check "speeding: exit 1 (FAIL)" rc_is 1
check "speeding: result FAIL" out_has "result: FAIL ("
check "speeding: vehicle 2's speed fails, listed last under 'Not passed'" python3 -c '
import re, sys
lines = sys.stdin.read().splitlines()
k = lines.index("Not passed: 1 FAIL, 0 INSUFFICIENT, 0 UNAVAILABLE")
assert re.match(r"FAIL +states_speed +speed +2 +[0-9.]+\.\.[0-9.]+ +[0-9.]+ m/s +vehicle 2: speed up to", lines[k + 2]), lines[k + 2]
assert lines[k + 3].startswith("result: FAIL ("), lines[k + 3]' <<<"$out"
# Both tables' columns line up, sized to their longest cell ("command_trajectory largest
# gap" included): REASON starts where its header does on every row.
check "speeding: the terminal's columns line up, long check names included" python3 -c '
import sys
lines = sys.stdin.read().splitlines()
k = lines.index("Not passed: 1 FAIL, 0 INSUFFICIENT, 0 UNAVAILABLE")
for table in (lines[:k - 1], lines[k + 1:k + 3]):
    col = table[0].index("REASON")
    assert table[0].startswith("STATUS"), table[0]
    for row in table[1:]:
        assert row[col - 1] == " " and row[col] != " " and row[:col].rstrip() == row[:col - 1].rstrip(), row
assert any("command_trajectory largest gap " in row for row in lines[:k]), "no long check name"' <<<"$out"
check "speeding: the acceleration at its limit passes (rounding is not a violation)" \
    out_has "vehicle 2: |longitudinal acceleration| at most 3 m/s^2 (limit 3)"
check "speeding: only the speed of vehicle 2 fails, no interval of zero length, no 'X over the limit X'" summary '
[(c["metric"], c["check"], c["vehicles"]) for c in s["checks"] if c["status"] == "FAIL"] == [("states_speed", "speed", [2])]
and all(b > a for c in s["checks"] for a, b in c["intervals"])
and not any(re.search(r"up to (\S+) \S+ over the limit \1\b", c["reason"]) for c in s["checks"])
and s["result"] == "FAIL" and s["passed"] is False and s["partial"] is False and s["interruption"] is None'
check "speeding: the acceleration value is over 3 by less than the resolution" summary '
[c["value"] for c in s["checks"] if c["check"] == "acceleration" and c["vehicles"] == [2]][0] - 3 < 0.001'

# ---- a partial evaluation does not replace the verdict ----
run evaluate "$RUN" --metrics obs
check "partial: exit 0 (obs passes)" rc_is 0
check "partial: the result line says partial" out_has "result: PASS, partial (--metrics)"
check "partial: summary.json records it" summary 's["partial"] is True and s["metrics"] == ["obs"] and s["result"] == "PASS"'
run list
row=$(grep -F "$(basename "$RUN" | cut -d_ -f2-)" <<<"$out") # the RUN column: the run id
check "list: the latest full evaluation's FAIL, marked +partial" grep -qF "2 (FAIL +partial)" <<<"$row"
run list --json
check "list --json: verdict, its evaluation and the newer partial one" python3 -c '
import json, sys
r = [r for r in json.loads(sys.stdin.read()) if r["path"] == sys.argv[1]][0]
ev = r["evaluations"]
assert [(e["result"], e["partial"], e["passed"]) for e in ev] == [("FAIL", False, False), ("PASS", True, True)], ev
assert r["verdict"] == "FAIL" and r["verdict_evaluation"] == ev[0]["name"], r
assert r["newer_partial_evaluation"] == ev[1]["name"] and r["interruption"] is None, r' "$RUN" <<<"$out"

# ---- no map: INCOMPLETE, one line for the checks that need one ----
NOMAP="$H/experiments/29990101T000000Z_nomap"
cp -r "$SPEEDING" "$NOMAP"
rm -rf "$NOMAP/map" "$NOMAP/evaluations"
python3 - "$NOMAP/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["map"] = None
json.dump(m, open(sys.argv[1], "w"))
PY
RUN=$NOMAP
run evaluate "$RUN" --metrics topic_sanity,obs,boundary_violation,lanelet_collision
check "no map: exit 3 (INCOMPLETE)" rc_is 3
check "no map: result INCOMPLETE" out_has "result: INCOMPLETE, partial (--metrics) ("
check "no map: one line names the metrics, the vehicles and --map FILE" out_has \
    "UNAVAILABLE in 4 checks of boundary_violation, lanelet_collision (vehicles 1, 2): the run has no map (manifest: map is null); \`runlab evaluate RUN --map FILE\` judges them against a map"
check "no map: the reason is printed once, not once per check" \
    test "$(grep -c 'the run has no map (manifest: map is null)' <<<"$out")" -eq 1
check "no map: summary.json agrees (INCOMPLETE, passed false, one shared reason)" summary '
s["result"] == "INCOMPLETE" and s["passed"] is False and s["counts"]["UNAVAILABLE"] == 4
and s["counts"]["FAIL"] == 0 and len(s["shared_reasons"]) == 1'
run evaluate "$RUN" --metrics obs,states_speed
check "no map, a FAIL beside: exit 1" rc_is 1

# ---- a run stopped early ----
sim --duration 2.5
python3 - "$RUN" <<'PY'
# As `runlab experiment --duration 20` leaves a run stopped by Ctrl-C after 2.5 s.
import json, os, sys
p = os.path.join(sys.argv[1], "manifest.json")
m = json.load(open(p)); m["state"] = "INTERRUPTED"; m["result"] = {"state": "INTERRUPTED", "reason": "SIGINT"}
json.dump(m, open(p, "w"))
json.dump({"status": "INTERRUPTED", "reason": "SIGINT", "planned_duration_s": 20},
          open(os.path.join(sys.argv[1], "experiment.json"), "w"))
PY
run evaluate "$RUN" --metrics states_speed
check "interrupted: exit 0 (its checks pass)" rc_is 0
check "interrupted: the result line says how far it got" out_has "result: PASS, interrupted after 2.5 of 20 s, partial (--metrics) ("
check "interrupted: summary.json says it" summary 's["interruption"] == "interrupted after 2.5 of 20 s" and s["run"]["planned_duration"] == 20'
run list
row=$(grep -F "$(basename "$RUN" | cut -d_ -f2-)" <<<"$out") # the RUN column: the run id
check "list: the run's row says it (INTERRUPTED, 2.5 of 20 s, SIGINT)" grep -qE "INTERRUPTED +2 +2.5/20s .* SIGINT$" <<<"$row"

# ---- --help tells the rule and the exit codes ----
run evaluate --help
check "evaluate --help: the rule and exit 3" bash -c 'grep -q "INCOMPLETE when none fails" <<<"$0" && grep -q "3 INCOMPLETE" <<<"$0"' "$out"

# A narrow terminal: REASON goes under each row, indented; the columns before it fit the 40
# columns, the widest cut with "…".
COLUMNS=40 run evaluate "$SPEEDING" --metrics topic_sanity
check "COLUMNS=40: REASON below each row, the other columns fit with an ellipsis" python3 -c '
import sys
lines = sys.stdin.read().splitlines()
assert lines[0].startswith("STATUS") and lines[1] == "    REASON", lines[:2]
rows = [k for k, l in enumerate(lines) if l.startswith("PASS ")]
assert len(rows) == 24, len(rows)
for k in rows:
    assert len(lines[k]) <= 40 and lines[k] == lines[k].rstrip(), lines[k]
    assert lines[k + 1].startswith("    rt/vehicle/"), lines[k + 1]
assert any("\u2026" in lines[k] for k in rows), "no ellipsis"' <<<"$out"

finish
