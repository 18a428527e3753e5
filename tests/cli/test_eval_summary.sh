#!/usr/bin/env bash
# A lab with several runs (issue 28 items 9 and 10), made by `runlab sim --offline`, two of
# them with faults that fail checks: `runlab list` filters (--state, --result, --since,
# --until, --vehicle, --planner, --fault), sorts (--sort [-]FIELD), fits every row in 120
# columns and keeps every field in --json; `runlab evaluate --summary` writes one new
# directory whose checks.csv has a row per check of each run's evaluation, whose pass
# rates are those of the runs' own summaries, whose report links each failing run to its
# own evaluation, and which reuses evaluations of the same configuration the second time.
. "$(dirname "$0")/lib.sh"

H="$TMP/home"
export RUNLAB_HOME="$H"
printf 'speed: 1.2\n' >"$TMP/spec.yaml"

sim() { # sim ARGS...: an offline run; sets $RUN
    run sim "$TMP/spec.yaml" --offline "$H" --duration 6 "$@"
    check "sim $* exits 0" rc_is 0
    RUN=$(tail -n 1 <<<"$out")
}
sim --vehicles 2 --seed 3
CLEAN2=$RUN
sim --vehicles 3 --seed 4
CLEAN3=$RUN
sim --vehicles 2 --seed 5 --fault speeding:2:1:4
SPEEDING=$RUN
sim --vehicles 3 --seed 6 --fault drift:1:1:4 --fault late_observation:3:2:4 \
    --fault stall_topic:2:1:2
DRIFT=$RUN
# Another planner, as a lab's own control flow records it in the manifest.
python3 - "$CLEAN3/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["planner"] = "rrt_star_with_a_long_planner_name"
json.dump(m, open(sys.argv[1], "w"), indent=2)
PY

# names ARGS...: the RUN column of `runlab list ARGS`, one per line.
names() {
    run list "$@"
    awk 'NR > 1 { print $1 }' <<<"$out"
}
id() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$1/manifest.json"; }

# ---- list: filters --------------------------------------------------------------------
check "list --fault speeding: the speeding run alone" test "$(names --fault speeding)" = "$(id "$SPEEDING")"
check "list --fault NONE: the two clean runs" test "$(names --fault none --sort name | sort)" = "$(printf '%s\n' "$(id "$CLEAN2")" "$(id "$CLEAN3")" | sort)"
check "list --fault drift,speeding: both faulty runs" test "$(names --fault drift,speeding | wc -l)" -eq 2
check "list --vehicle 3: the 3-vehicle runs" test "$(names --vehicle 3 | sort)" = "$(printf '%s\n' "$(id "$CLEAN3")" "$(id "$DRIFT")" | sort)"
check "list --planner: the run of that planner" test "$(names --planner RRT_star_with_a_long_planner_name)" = "$(id "$CLEAN3")"
check "list --state COMPLETE: all four" test "$(names --state complete | wc -l)" -eq 4
check "list --state FAILED: none" test "$(names --state FAILED | wc -l)" -eq 0
check "list --result NONE before any evaluation: all four" test "$(names --result none | wc -l)" -eq 4
check "list --since a later day: none" test "$(names --since 2100-01-01 | wc -l)" -eq 0
check "list --until an earlier day: none" test "$(names --until 2000-01-01 | wc -l)" -eq 0
check "list --since/--until around the runs' day: all four" test "$(names --since 2000-01-01 --until 2100-12-31T00:00:00Z | wc -l)" -eq 4
run list --since yesterday
check "list --since yesterday: exit 2" rc_is 2
check "list --since yesterday: says what it takes" err_has "--since 'yesterday': not a time"
run list --vehicle two
check "list --vehicle two: exit 2" rc_is 2
run list --result GREEN
check "list --result GREEN: exit 2" rc_is 2

# ---- list: sort ---------------------------------------------------------------------------
seeds() { run list --json "$@"; python3 -c 'import json,sys; print(" ".join(str(r["seed"]) for r in json.load(sys.stdin)))' <<<"$out"; }
check "list --sort seed: ascending" test "$(seeds --sort seed)" = "3 4 5 6"
check "list --sort -seed: descending" test "$(seeds --sort -seed)" = "6 5 4 3"
check "list --sort vehicles --fault none: 2 then 3 vehicles" test "$(seeds --sort vehicles --fault none)" = "3 4"
run list --sort colour
check "list --sort colour: exit 2" rc_is 2

# ---- list: 120 columns, the time once, the scenario ------------------------------------------
run list
check "list: exit 0" rc_is 0
check "list: every row within 120 columns" test "$(awk 'length($0) > 120' <<<"$out" | wc -l)" -eq 0
row=$(grep -F "$(id "$SPEEDING")" <<<"$out")
check "list: the scenario's seed and fault" grep -qF "seed 5 speeding:2:1:4" <<<"$row"
stamp=$(basename "$SPEEDING" | cut -c1-16)
check "list: the directory's stamp not repeated beside the run id" test "$(grep -o "$stamp" <<<"$row" | wc -l)" -le 1
check "list: a long planner name is cut with ~" grep -qF "rrt_star_wi~" <<<"$out"

# ---- list --json: every field, filters choose runs ----------------------------------------------
run list --json --fault drift
check "list --json --fault drift: one run, every field" python3 -c '
import json, sys
runs = json.load(sys.stdin)
assert len(runs) == 1, runs
r = runs[0]
want = {"directory", "path", "run_id", "state", "result", "vehicles", "start", "duration",
        "planner", "map_sha256", "scenario", "seed", "faults", "planned_duration",
        "interruption", "evaluations", "verdict", "verdict_evaluation",
        "newer_partial_evaluation"}
assert want <= set(r), want - set(r)
assert r["seed"] == 6 and r["faults"] == ["drift:1:1:4", "late_observation:3:2:4", "stall_topic:2:1:2"], r
assert r["vehicles"] == [1, 2, 3] and len(r["map_sha256"]) == 64, r' <<<"$out"

# ---- evaluate --summary -------------------------------------------------------------------
ev_count() { ls -d "$H"/experiments/*/evaluations/*/ 2>/dev/null | wc -l; }
run evaluate --summary --home "$H" -j 2 --group-by fault
check "summary: exit 1 (runs fail)" rc_is 1
check "summary: 4 runs evaluated now" out_has "4 runs: 2 PASS, 2 FAIL, 0 INCOMPLETE, 0 not evaluated; 0 evaluations reused, 4 made"
S1=$(tail -n 1 <<<"$out")
check "summary: a new directory under HOME/summaries" test -d "$S1" -a "$(dirname "$S1")" = "$H/summaries"
check "summary: one evaluation per run" test "$(ev_count)" -eq 4
check "summary: report, checks, summary, figures" test -s "$S1/report.html" -a -s "$S1/checks.csv" -a -s "$S1/summary.json" -a -s "$S1/figures/pass_rate.png" -a -s "$S1/figures/worst_values.svg"
check "summary: checks.csv rows and pass rates agree with each run's evaluation" python3 - "$S1" "$H" <<'PY'
import csv, glob, json, os, sys
out, home = sys.argv[1:3]
s = json.load(open(os.path.join(out, "summary.json")))
rows = list(csv.DictReader(open(os.path.join(out, "checks.csv"))))
evals = {}
for d in glob.glob(os.path.join(home, "experiments", "*")):
    e = sorted(glob.glob(os.path.join(d, "evaluations", "*")))[-1]
    evals[d] = json.load(open(os.path.join(e, "summary.json")))
assert len(rows) == sum(len(e["checks"]) for e in evals.values()), (len(rows),)
assert len(s["runs"]) == 4 and s["counts"]["FAIL"] == 2 and s["counts"]["PASS"] == 2, s["counts"]
assert len(s["config_sha256"]) == 64
# A pass rate: the runs where every vehicle's instance passes, over the runs judged.
for k in s["checks"]:
    per_run = {}
    for d, e in evals.items():
        st = [c["status"] for c in e["checks"] if c["metric"] == k["metric"] and c["check"] == k["check"]]
        st = [x for x in st if x != "N/A"]
        if st:
            per_run[d] = "FAIL" if "FAIL" in st else "PASS" if all(x == "PASS" for x in st) else "NJ"
    judged = len(per_run)
    passed = sum(1 for v in per_run.values() if v == "PASS")
    assert k["runs"] == judged and k["PASS"] == passed, (k, per_run)
    assert abs(k["pass_rate"] - passed / judged) < 1e-12, k
speed = [k for k in s["checks"] if k["metric"] == "states_speed" and k["check"] == "speed"][0]
# the run with stall_topic has its speed INSUFFICIENT (a 4 s gap in its states): judged, not passed
assert speed["pass_rate"] == 0.5 and speed["not_judged"] == 1 and speed["limit"] == "at most", speed
assert speed["by_group"]["speeding"]["pass_rate"] == 0.0, speed["by_group"]
assert speed["by_group"]["no fault"]["pass_rate"] == 1.0, speed["by_group"]
rate = [k for k in s["checks"] if k["check"] == "state rate"][0]
assert rate["limit"] == "at least", rate
PY
check "summary: each failing run linked to its own evaluation's report" python3 - "$S1" <<'PY'
import json, os, re, sys
out = sys.argv[1]
s = json.load(open(os.path.join(out, "summary.json")))
html = open(os.path.join(out, "report.html")).read()
failing = [r for r in s["runs"] if r["result"] == "FAIL"]
assert len(failing) == 2
for r in failing:
    href = r["report"]
    assert not href.startswith("/") and ".." not in href, href
    assert f'href="{href}"' in html, href
    target = os.path.realpath(os.path.join(out, href))
    want = os.path.realpath(os.path.join(r["directory"], "evaluations", r["evaluation"], "report.html"))
    assert target == want and os.path.isfile(target), (target, want)
    assert not os.path.isabs(os.readlink(os.path.join(out, os.path.dirname(href))))
# The failing runs come before the pass rates.
assert html.index(failing[0]["run_id"]) < html.index("Pass rate per check")
PY

# Again: every evaluation is reused, none made.
run evaluate --summary --home "$H"
check "summary again: exit 1" rc_is 1
check "summary again: every evaluation reused" out_has "4 evaluations reused, 0 made"
S2=$(tail -n 1 <<<"$out")
check "summary again: another new directory" test -d "$S2" -a "$S2" != "$S1"
check "summary again: no new evaluation" test "$(ev_count)" -eq 4

# Grouped by any manifest field, by its path.
run evaluate --summary --home "$H" --group-by scenario.runlab_sim.seed
S3=$(tail -n 1 <<<"$out")
check "summary --group-by a manifest path: a group per seed" python3 -c '
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
assert s["group_by"] == "scenario.runlab_sim.seed" and s["groups"] == ["3", "4", "5", "6"], s["groups"]
speed = [k for k in s["checks"] if k["check"] == "speed"][0]
assert speed["by_group"]["5"]["pass_rate"] == 0.0 and speed["by_group"]["3"]["pass_rate"] == 1.0' "$S3"

# A partial evaluation does not stand for the configuration; the latest full one does.
run evaluate "$CLEAN2" --metrics states_speed
run evaluate --summary "$CLEAN2" "$CLEAN2/" "$(id "$SPEEDING")"
check "summary of named runs (one twice): two runs, both reused" out_has "2 runs: 1 PASS, 1 FAIL, 0 INCOMPLETE, 0 not evaluated; 2 evaluations reused, 0 made"

# Another configuration: evaluated again, filters choose the runs.
printf 'states_speed:\n  max_speed: 5\n' >"$TMP/config.yaml"
run evaluate --summary --fault speeding --config "$TMP/config.yaml"
check "summary --fault speeding with another configuration: the run evaluated again" out_has "1 runs: 1 PASS, 0 FAIL, 0 INCOMPLETE, 0 not evaluated; 0 evaluations reused, 1 made"
check "summary with another configuration: exit 0" rc_is 0
check "summary with another configuration: one evaluation more" test "$(ev_count)" -eq 6

# Never overwrites; nothing evaluated for a summary that cannot be written.
before=$(ev_count)
run evaluate --summary --home "$H" --out "$S1" --config "$TMP/config.yaml"
check "summary --out an existing directory: exit 2" rc_is 2
check "summary --out an existing directory: says so" err_has "exists: a summary never overwrites one"
check "summary --out an existing directory: nothing evaluated" test "$(ev_count)" -eq "$before"
run evaluate --summary --fault collision
check "summary of no run: exit 2" rc_is 2
check "summary of no run: says so" err_has "no run matches the filters"
run evaluate --summary "$CLEAN2" --fault drift
check "summary of RUN and filters: exit 2" rc_is 2
run evaluate --summary --help
check "summary --help: exit 0" rc_is 0
check "summary --help: group-by and jobs" out_has "--group-by FIELD"
run list --help
check "list --help: the filters and --sort" out_has "--sort [-]FIELD"

finish
