# `runlab bench` with runs: auto on the built-in planners: it stops at a look with a
# reason (ranking settled, or max_runs reached and which pair is open), the manifest and
# report.html carry the decision trail, the OMPL log and results.db hold exactly the runs
# made, --adaptive turns a fixed spec adaptive (recorded for --resume), a resume after an
# interruption replays the same decisions on the same runs, and bad keys are refused.
# Nothing here depends on speed: which look stops depends on the times measured, so the
# checks hold for any stop.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: the sqlite3 CLI is missing"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 is missing"; exit 1; }

cat >"$TMP/auto.yaml" <<YAML
experiment: adaptive maze
problem: maze2d
seed: 5
max_time: 0.5
runs: auto
confidence: 0.95
min_runs: 6
max_runs: 20
planners:
  - {name: RRT, planner: rrt}
  - {name: RRTConnect, planner: rrtconnect}
  - {name: PRM, planner: prm}
YAML
run bench "$TMP/auto.yaml" --out-dir "$TMP/res"
check "adaptive bench exits 0" rc_is 0
dir=$(tail -n1 <<<"$out")
check "stdout says why it stopped" out_has "Stopped: "
# the manifest's adaptive record, checked as a whole
mcheck() { # mcheck DIR: prints what is wrong with DIR's adaptive record, nothing when right
    python3 - "$1" <<'PY'
import json, re, sys, glob, sqlite3
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
a = m.get("adaptive")
if not a: print("no adaptive record"); sys.exit()
n = a["runs_per_planner"]
looks = a["looks"]
sched = [6, 9, 14, 20]
if [l["runs"] for l in looks] != sched[:len(looks)]: print("looks not at 6, 9, 14, 20:", [l["runs"] for l in looks])
if looks[-1]["runs"] != n: print("last look is not the stop")
if any(l["settled"] for l in looks[:-1]): print("a settled look did not stop")
if a["settled"]:
    if not re.fullmatch(r"ranking settled at 0\.95 after %d runs per planner: \S+ < \S+ < \S+" % n, a["stopped"]): print("why:", a["stopped"])
    if not all(p["first"] and p["p"] <= p["bound"] for p in looks[-1]["pairs"]): print("settled with an open pair")
else:
    if n != 20 or not re.fullmatch(r"max_runs reached, ranking not settled between \S+ and \S+", a["stopped"]): print("why:", a["stopped"])
for l in looks:
    if len(l["pairs"]) != 3: print("look without 3 pairs")
    if abs(l["alpha"] - 0.05 / 4) > 1e-12: print("alpha per look is not 0.05/4:", l["alpha"])
    if l["settled"] != (l["statistic"] <= l["bound"]): print("statistic/bound disagree with settled")
db = sqlite3.connect(d + "/results.db")
if db.execute("select count(*) from runs").fetchone()[0] != 3 * n: print("results.db does not hold 3 x", n, "runs")
log = open(glob.glob(d + "/*.log")[0]).read()
if "%d runs per planner" % n not in log: print("the log does not say", n, "runs per planner")
j = [l.split("\t") for l in open(d + "/journal.tsv") if l.startswith("run\t")]
if len(j) != 3 * n: print("journal holds", len(j), "runs")
PY
}
check "manifest: looks, reason, trail, database, log and journal agree" test -z "$(mcheck "$dir")"
mcheck "$dir"
check "report.html says why it stopped" grep -q "Why the benchmark stopped" "$dir/report.html"
check "report.html has the decision trail" grep -q "Decision trail" "$dir/report.html"
check "runs are round-robin (planner 0, 1, 2, 0, ...)" \
    test "$(awk -F'\t' '$1=="run"{printf "%s", $2}' "$dir/journal.tsv" | head -c 9)" = "012012012"
run bench import "$(ls "$dir"/*.log)" --db "$TMP/imported.db"
check "the OMPL log imports as OMPL's parser reads it" rc_is 0
check "... with every run" test "$(sqlite3 "$TMP/imported.db" 'SELECT count(*) FROM runs')" = \
    "$(sqlite3 "$dir/results.db" 'SELECT count(*) FROM runs')"

# Interrupted after look 1 and two runs of look 2's batch: the resume decides look 1 again
# on the same 6 runs per planner (same statistic) and carries on from there.
cp -r "$dir" "$TMP/cut"
python3 - "$TMP/cut" <<'PY'
import sys, os, glob
d = sys.argv[1]
lines = open(d + "/journal.tsv").readlines()
out, runs = [], 0
for l in lines:
    if l.startswith("run\t"):
        if runs == 20: break
        runs += 1
    out.append(l)
open(d + "/journal.tsv", "w").writelines(out)
for f in ["manifest.json", "report.html", "results.db"] + glob.glob(d + "/*.log"):
    os.remove(os.path.join(d, f) if not f.startswith("/") else f)
PY
run bench --resume "$TMP/cut"
check "resume of an adaptive benchmark exits 0" rc_is 0
check "the resumed benchmark is consistent" test -z "$(mcheck "$TMP/cut")"
mcheck "$TMP/cut"
same=$(python3 -c "
import json,sys
a=json.load(open('$dir/manifest.json'))['adaptive']['looks'][0]
b=json.load(open('$TMP/cut/manifest.json'))['adaptive']['looks'][0]
print(a['statistic']==b['statistic'] and a['pairs']==b['pairs'])")
check "look 1 is decided again on the same runs" test "$same" = True
run bench --resume "$TMP/cut"
check "resume of a finished adaptive benchmark does nothing" out_has "finished already"

# --adaptive on a fixed spec: spec.json records runs: auto, so a resume stays adaptive.
sed -e 's/^runs: auto/runs: 50/' "$TMP/auto.yaml" >"$TMP/fixed.yaml"
run bench "$TMP/fixed.yaml" --adaptive --out-dir "$TMP/res2"
check "--adaptive exits 0" rc_is 0
dir2=$(tail -n1 <<<"$out")
check "--adaptive stops by the rule (at most max_runs 20, not 50)" test -z "$(mcheck "$dir2")"
check "spec.json records runs: auto" \
    test "$(python3 -c "import json;print(json.load(open('$dir2/spec.json'))['spec']['runs'])")" = auto
run bench --help
check "--help documents --adaptive" out_has "--adaptive"

# goal success and ci: intervals per planner in the trail, a reason of their own. With
# every run solved, 20 of 20 gives a Clopper-Pearson interval [0.734, 1] at 1 - 0.05/12
# (within +-0.3), 14 of 14 gives [0.644, 1] (not): the stop is at 20 unless a run failed.
for goal in success ci; do
    sed -e "s/^confidence: 0.95/goal: $goal\nwidth: 0.3\nrelative_width: 0.5/" "$TMP/auto.yaml" >"$TMP/$goal.yaml"
    run bench "$TMP/$goal.yaml" --out-dir "$TMP/res-$goal"
    check "goal $goal exits 0" rc_is 0
    gdir=$(tail -n1 <<<"$out")
    bad=$(python3 - "$gdir" "$goal" <<'PY'
import json, re, sys
d, goal = sys.argv[1], sys.argv[2]
a = json.load(open(d + "/manifest.json"))["adaptive"]
n, looks = a["runs_per_planner"], a["looks"]
if a["goal"] != goal: print("goal", a["goal"])
for l in looks:
    if len(l["intervals"]) != 3: print("look without 3 intervals")
    for iv in l["intervals"]:
        if iv["lo"] is not None and iv["hi"] is not None and not iv["lo"] <= iv["estimate"] <= iv["hi"]: print("estimate outside its interval", iv)
    if l["settled"] != all(iv["settled"] for iv in l["intervals"]): print("settled is not every planner settled")
if goal == "success":
    ok = re.fullmatch(r"success rates known within \+-0\.3 at 0\.95 after %d runs per planner" % n, a["stopped"]) or \
         re.fullmatch(r"max_runs reached, success rate of \S+ not within \+-0\.3", a["stopped"])
    if not ok: print("why:", a["stopped"])
    all_solved = all(iv["estimate"] == 1 for iv in looks[-1]["intervals"])
    if all_solved and (n != 20 or not a["settled"]): print("all solved but not settled at 20:", n)
    if all_solved and abs(looks[-1]["intervals"][0]["lo"] - (0.05 / 4 / 3 / 2) ** (1 / 20)) > 1e-9: print("lo", looks[-1]["intervals"][0]["lo"])
else:
    ok = re.fullmatch(r"medians of time known within 50% at 0\.95 after %d runs per planner" % n, a["stopped"]) or \
         re.fullmatch(r"max_runs reached, median of time for \S+ not within 50%", a["stopped"])
    if not ok: print("why:", a["stopped"])
PY
)
    check "goal $goal: intervals and reason are consistent" test -z "$bad"
    [ -z "$bad" ] || echo "$bad"
done

# Bad keys are refused with the key named.
sed -e 's/^confidence: 0.95/confidence: 1.5/' "$TMP/auto.yaml" >"$TMP/bad1.yaml"
run bench "$TMP/bad1.yaml" --out-dir "$TMP/bad"
check "confidence 1.5 is refused" rc_is 1
check "... naming the key" err_has "confidence"
sed -e 's/^runs: auto/runs: many/' "$TMP/auto.yaml" >"$TMP/bad3.yaml"
cp "$TMP/auto.yaml" "$TMP/bad2.yaml"
printf 'goal: fastest\n' >>"$TMP/bad2.yaml"
run bench "$TMP/bad2.yaml" --out-dir "$TMP/bad"
check "goal fastest is refused naming the choices" err_has "expected ranking, ci or success"
run bench "$TMP/bad3.yaml" --out-dir "$TMP/bad"
check "runs: many is refused" err_has "expected a whole number or auto"
finish
