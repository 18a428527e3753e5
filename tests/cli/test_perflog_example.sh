# The minimal planner of docs/perflog.md ("Log your own planner", examples/perflog_planner.c)
# as a planner author outside this tree builds it: one compile+link command against the
# public headers in include/ and librunlab only. Its runs load as parsed, carry the
# totals of rl_perflog_set_totals in the standard columns, and every figure that
# `runlab plot --help` lists draws them (valid PNGs of the expected size, SVGs and records
# naming the columns); what is missing from a run is said exactly.
. "$(dirname "$0")/lib.sh"
unset DISPLAY WAYLAND_DISPLAY
SRC="${RUNLAB_SOURCE:?RUNLAB_SOURCE not set}"
CC="${RUNLAB_CC:-cc}"
LIBDIR="${RUNLAB_LIBDIR:-$RUNLAB_BIN/../lib}"
EXAMPLE="$SRC/examples/perflog_planner.c"
export RUNLAB_DATA_ROOT="$TMP/data"

run plot --help
if [ "$rc" -ne 0 ] || ! out_has "gain-cost"; then
    echo "SKIP: runlab built without the plot module"
    exit 77
fi
help=$out

# ---- build: public headers and librunlab only --------------------------------------------
check "the example is under 100 lines" [ "$(wc -l <"$EXAMPLE")" -lt 100 ]
check "the example includes only public headers" \
    [ -z "$(grep '#include' "$EXAMPLE" | grep -v -e '<runlab/[a-z_]*\.h>' -e '<[a-z]*\.h>')" ]
# shellcheck disable=SC2086 # RUNLAB_CFLAGS holds several flags (the sanitizers of the build)
"$CC" ${RUNLAB_CFLAGS:-} -std=c17 -Wall -Wextra -Wpedantic -Werror -I"$SRC/include" "$EXAMPLE" \
    -L"$LIBDIR" -lrunlab -Wl,-rpath,"$LIBDIR" -lm -o "$TMP/perflog_planner" 2>"$TMP/cc.err"
rc=$?
out=""
err=$(cat "$TMP/cc.err")
check "the example compiles and links against include/ and librunlab alone" rc_is 0
if [ "$rc" -ne 0 ]; then
    finish
    exit 1
fi

# ---- runs -------------------------------------------------------------------------------
ROOT="$TMP/root"
dirs=()
t0=$(date +%s%N)
for seed in 1 2 3; do
    d=$("$TMP/perflog_planner" "$ROOT" "$seed" 2>"$TMP/planner.err")
    rc=$?
    err=$(cat "$TMP/planner.err")
    out=$d
    check "the planner runs (seed $seed)" rc_is 0
    check "it prints its run directory (seed $seed)" [ -s "$d/performance_log.csv" ]
    dirs+=("$d")
done
t1=$(date +%s%N)

# Every key of the manifest and the summary (docs/perflog.md) and the CSV's own columns,
# against what this test knows: the example's configuration, its path, the machine, the
# test's clock around the runs, runlab --version, and relations between the numbers.
check "every manifest, summary and standard CSV value of a run" python3 - "${dirs[0]}" 1 "$t0" "$t1" \
    "$(hostname)" "$("$RUNLAB" --version)" "$(uname -s) $(uname -r) $(uname -m)" <<'PY'
import csv, datetime, os, re, sys
import yaml
sys.path.insert(0, os.path.join(os.environ["RUNLAB_SOURCE"], "tests", "tools"))
from value_checks import Expectations, iso_ns

d, seed, t0, t1, host, version, uname = sys.argv[1:]
t0, t1 = int(t0), int(t1)
man = yaml.safe_load(open(os.path.join(d, "run_manifest.yaml")))
summ = yaml.safe_load(open(os.path.join(d, "episode_summary.yaml")))
rows = list(csv.reader(open(os.path.join(d, "performance_log.csv"), newline="")))
raw = open(os.path.join(d, "performance_log.csv")).read().splitlines()
head, rows = rows[0], rows[1:]
col = {n: i for i, n in enumerate(head)}
expect = Expectations("perflog")
ns = iso_ns


keys = {"format_version", "schema_fingerprint", "build_git_sha", "build_git_dirty", "build_components",
        "machine", "start_utc", "dataset", "scene", "planner", "random_seed", "log_performance",
        "num_maps_to_save", "layers", "columns"}
expect("manifest: exactly the documented keys (no task, no cost_budget when unbounded)", set(man) == keys, sorted(set(man) ^ keys))
expect("format_version", man.get("format_version") == 1, man.get("format_version"))
sha = man.get("build_git_sha", "")
expect("build_git_sha = runlab --version's", re.fullmatch(r"[0-9a-f]{40}", sha) and ("git " + sha[:12]) in version, (sha, version))
expect("build_git_dirty = runlab --version's", man.get("build_git_dirty") == ("dirty" in version), man.get("build_git_dirty"))
bc = man.get("build_components", {})
expect("build_components keys", set(bc) == {"runlab", "build_type", "compiler"}, bc)
expect("build_components.runlab = the version", version.startswith("runlab %s " % bc.get("runlab")), bc)
expect("build_components.compiler", re.fullmatch(r"(GNU|Clang)-\d+(\.\d+)*", str(bc.get("compiler"))), bc)
mach = man.get("machine", {})
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), None)
expect("machine keys", set(mach) == {"host", "cpu_model", "cpu_cores", "os"}, mach)
expect("machine.host", mach.get("host") == host, mach.get("host"))
expect("machine.cpu_model = /proc/cpuinfo's", model is None or mach.get("cpu_model") == model, (mach.get("cpu_model"), model))
expect("machine.cpu_cores = the cores online", mach.get("cpu_cores") == os.cpu_count(), mach.get("cpu_cores"))
expect("machine.os names uname", str(mach.get("os", "")).startswith(uname), (mach.get("os"), uname))
start = ns(man.get("start_utc"))
expect("start_utc ISO 8601 UTC with ns, within the runs", start is not None and t0 <= start <= t1, man.get("start_utc"))
parts = d.rstrip("/").split("/")
expect("dataset, scene, planner = the path", [man.get("dataset"), man.get("scene"), man.get("planner")] == parts[-4:-1] == ["toy", "wall20", "greedy"], parts[-4:])
expect("the run directory is the start time (YYYYmmdd_HHMMSS)", start is not None and parts[-1] == datetime.datetime.fromtimestamp(start // 10**9, datetime.timezone.utc).strftime("%Y%m%d_%H%M%S"), parts[-1])
expect("random_seed as given", man.get("random_seed") == int(seed), man.get("random_seed"))
expect("log_performance", man.get("log_performance") is True, man.get("log_performance"))
expect("num_maps_to_save", man.get("num_maps_to_save") == 0, man.get("num_maps_to_save"))
expect("layers", man.get("layers") == {"planning": "greedy_sampler"}, man.get("layers"))
cols = man.get("columns", [])
expect("columns = the CSV header, in order", [c["name"] for c in cols] == head, [c["name"] for c in cols])
want = {"CycleIndex": ("counter", "none", None), "ElapsedWallTimeSec": ("gauge", "s", None),
        "TotalCost": ("total", "m", None), "TotalPathLength": ("total", "m", None),
        "TotalPathDuration": ("total", "s", None), "TotalVisitedNodes": ("total", "count", None),
        "planning.PlanTime": ("timer", "s", None), "planning.CollisionTime": ("timer", "s", "planning.PlanTime"),
        "planning.Samples": ("counter", "count", None), "planning.RealAccumulatedGain": ("total", "cells", None)}
for c in cols:
    expect("column %s: type, unit, parent" % c["name"], (c["type"], c["unit"], c["parent"]) == want.get(c["name"]), c)

skeys = {"format_version", "end_reason", "cycles", "total_cost", "total_path_length", "total_path_duration",
         "num_visited_nodes", "elapsed_wall_time_s", "real_accumulated_gain", "timer_nesting_violations"}
expect("summary: exactly the documented keys (no cost_budget when unbounded)", set(summ) == skeys, sorted(set(summ) ^ skeys))
expect("summary format_version", summ.get("format_version") == 1, summ.get("format_version"))
expect("end_reason: the example stops when no sample sees anything new", summ.get("end_reason") in ("no_step", "budget_exhausted"), summ.get("end_reason"))
expect("cycles = CSV rows", summ.get("cycles") == len(rows), (summ.get("cycles"), len(rows)))
last = rows[-1]
num = lambda r, n: float(r[col[n]])
for k, c in (("total_cost", "TotalCost"), ("total_path_length", "TotalPathLength"),
             ("total_path_duration", "TotalPathDuration"), ("num_visited_nodes", "TotalVisitedNodes")):
    expect("summary %s = the last %s" % (k, c), summ.get(k) == num(last, c), (summ.get(k), last[col[c]]))
expect("real_accumulated_gain.planning = the last gain", summ.get("real_accumulated_gain") == {"planning": num(last, "planning.RealAccumulatedGain")}, summ.get("real_accumulated_gain"))
expect("timer_nesting_violations", summ.get("timer_nesting_violations") == 0, summ.get("timer_nesting_violations"))
el = [num(r, "ElapsedWallTimeSec") for r in rows]
lifetime = (t1 - start) / 1e9 if start else 0
expect("summary elapsed >= the last row's ElapsedWallTimeSec", summ.get("elapsed_wall_time_s", -1) >= el[-1], (summ.get("elapsed_wall_time_s"), el[-1]))
expect("summary elapsed (s) <= the time from start_utc to the test's clock after", summ.get("elapsed_wall_time_s", 1e9) <= lifetime, (summ.get("elapsed_wall_time_s"), lifetime))
expect("CycleIndex = 0..n-1", [int(r[col["CycleIndex"]]) for r in rows] == list(range(len(rows))), None)
expect("ElapsedWallTimeSec >= 0 and never falls", el[0] >= 0 and all(a <= b for a, b in zip(el, el[1:])), el[:5])
expect("ElapsedWallTimeSec (s) within the process's lifetime", el[-1] <= lifetime, (el[-1], lifetime))
plan = [num(r, "planning.PlanTime") for r in rows]
coll = [num(r, "planning.CollisionTime") for r in rows]
# The timers are seconds: all planning time together fits in the episode's wall time.
expect("sum of PlanTime (s) <= the episode's elapsed time", sum(plan) <= summ.get("elapsed_wall_time_s", 0), (sum(plan), summ.get("elapsed_wall_time_s")))
expect("timers >= 0, the nested one within its parent", all(0 <= c <= p for p, c in zip(plan, coll)), None)
for line in raw[1:]:
    f = line.split(",")
    for n in ("planning.PlanTime", "planning.CollisionTime"):
        expect("timer %s written as exact decimal ns (at most 9 decimals)" % n, re.fullmatch(r"\d+(\.\d{1,9})?", f[col[n]]), f[col[n]])
expect("Samples = 32 per cycle (the example's SAMPLES)", all(int(r[col["planning.Samples"]]) == 32 for r in rows), None)
expect.finish()
PY
check "the manifest's schema_fingerprint recomputed from docs/perflog.md's definition" \
    python3 "$SRC/tests/tools/fingerprint.py" "${dirs[0]}/run_manifest.yaml"

run runs "$ROOT" --json
check "runs --json exits 0" rc_is 0
check "all three runs are parsed" [ "$(grep -c '"status": "parsed"' <<<"$out")" -eq 3 ]

header="CycleIndex,ElapsedWallTimeSec,TotalCost,TotalPathLength,TotalPathDuration,TotalVisitedNodes,planning.PlanTime,planning.CollisionTime,planning.Samples,planning.RealAccumulatedGain"
for d in "${dirs[@]}"; do
    check "$d: the columns every run has, then the planner's" [ "$(head -1 "$d/performance_log.csv")" = "$header" ]
    # Per row, from the example's own arithmetic: cost = path length, duration = length / 0.5,
    # nodes = start + one per cycle, 32 samples, the nested timer within its parent, the gain
    # never falling. Then the summary states the last row's numbers.
    bad=$(awk -F, 'NR > 1 {
        if ($3 != $4) print "line " NR ": TotalCost " $3 " != TotalPathLength " $4
        if ($5 - 2 * $4 > 1e-9 * $5 || 2 * $4 - $5 > 1e-9 * $5) print "line " NR ": duration " $5 " != 2 x " $4
        if ($6 != $1 + 2) print "line " NR ": TotalVisitedNodes " $6 ", cycle " $1
        if ($9 != 32) print "line " NR ": Samples " $9
        if ($8 > $7) print "line " NR ": CollisionTime " $8 " > PlanTime " $7
        if ($10 < g || $10 <= 0) print "line " NR ": gain " $10 " after " g
        g = $10 }' "$d/performance_log.csv")
    out=$bad
    check "$d: the totals of rl_perflog_set_totals are in every row" [ -z "$bad" ]
    last=$(tail -1 "$d/performance_log.csv")
    rows=$(($(wc -l <"$d/performance_log.csv") - 1))
    IFS=, read -r _ _ cost _ _ nodes _ _ _ gain <<<"$last"
    sum="$d/episode_summary.yaml"
    check "$d: summary cycles = rows" grep -qx "cycles: $rows" "$sum"
    check "$d: summary total_cost = the last TotalCost" grep -qE "^total_cost: $cost(\.0)?$" "$sum"
    check "$d: summary num_visited_nodes = the last TotalVisitedNodes" grep -qx "num_visited_nodes: $nodes" "$sum"
    check "$d: summary gain = the last planning.RealAccumulatedGain" grep -qE "^  planning: $gain(\.0)?$" "$sum"
    check "$d: the cost unit is the configured one" grep -qF '{name: "TotalCost", type: total, unit: "m", parent: null}' "$d/run_manifest.yaml"
done

# ---- every figure -------------------------------------------------------------------------
# png_size FILE: "WxH" from a PNG's IHDR, or nothing when FILE is not a PNG.
png_size() {
    [ "$(od -An -tx1 -N8 "$1" 2>/dev/null | tr -d ' \n')" = "89504e470d0a1a0a" ] || return 0
    [ "$(od -An -c -j12 -N4 "$1" | tr -d ' \n')" = "IHDR" ] || return 0
    od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%dx%d", $1*16777216 + $2*65536 + $3*256 + $4, $5*16777216 + $6*65536 + $7*256 + $8 }'
}
svg_ok() { # well-formed XML with an <svg> root (checked when python3 is there)
    grep -q "<svg" "$1" || return 1
    command -v python3 >/dev/null || return 0
    python3 -c 'import sys, xml.etree.ElementTree as E; sys.exit(0 if E.parse(sys.argv[1]).getroot().tag.endswith("svg") else 1)' "$1"
}
# figure_ok NAME STEM SIZE TEXT...: STEM.png of SIZE, STEM.svg holding each TEXT, STEM.yaml.
figure_ok() {
    local name=$1 stem=$2 size=$3
    shift 3
    check "$name: PNG written" [ -s "$stem.png" ]
    check "$name: a valid PNG of $size" [ "$(png_size "$stem.png")" = "$size" ]
    check "$name: SVG well-formed" svg_ok "$stem.svg"
    check "$name: record written" grep -q "^inputs:" "$stem.yaml"
    local t
    for t in "$@"; do
        check "$name: the figure names '$t'" grep -qF -- "$t" "$stem.svg" "$stem.yaml"
    done
}

# The figure kinds `runlab plot --help` lists: "runlab plot KIND" or "KIND | KIND | ...".
kinds=$(sed -n 's/^\(Usage:\)\{0,1\} *runlab plot \([a-z| -]*[a-z]\) \(FILE\|ROOT\).*/\2/p' <<<"$help" | tr '|' '\n' | tr -d ' ')
out=$kinds
check "runlab plot --help lists figure kinds" [ "$(wc -l <<<"$kinds")" -ge 4 ]
F="$TMP/figs"
mkdir -p "$F" # plot csv -o does not create its directory
one=${dirs[0]}
for kind in $kinds; do
    case $kind in
    csv)
        run plot csv "$one/performance_log.csv" --x CycleIndex --y planning.PlanTime --y planning.CollisionTime -o "$F/csv.svg"
        check "plot csv of a run's log exits 0" rc_is 0
        run plot csv "$one/performance_log.csv" --x CycleIndex --y planning.PlanTime --y planning.CollisionTime -o "$F/csv.png"
        figure_ok "plot csv" "$F/csv" 640x480 planning.PlanTime planning.CollisionTime
        ;;
    gain-cost)
        run plot gain-cost "$ROOT" --out-dir "$F"
        check "gain-cost exits 0" rc_is 0
        check "gain-cost says which gain it drew" out_has "Gain drawn: planning.RealAccumulatedGain"
        check "gain-cost complains about nothing" err_empty
        figure_ok "gain-cost" "$F/root/gain_cost" 900x600 "planning.RealAccumulatedGain [cells]" "Total cost [m]" "greedy: end of run"
        ;;
    normalized-gain)
        run plot normalized-gain "$ROOT" --out-dir "$F"
        check "normalized-gain exits 0" rc_is 0
        figure_ok "normalized-gain" "$F/normalized_gain" 900x600 "Total cost [m]" "greedy (median, 25-75%, n=3)" "Gain drawn: planning.RealAccumulatedGain"
        ;;
    timing)
        run plot timing "$ROOT" --out-dir "$F"
        check "timing exits 0" rc_is 0
        check "timing draws one figure per run" [ "$(grep -c 'timing.png$' <<<"$out")" -eq 3 ]
        check "timing complains about nothing" err_empty
        rel=${one#"$TMP"/}
        figure_ok "timing" "$F/$rel/timing" 900x600 "planning.PlanTime" "planning.CollisionTime (in planning.PlanTime)" "Nested: planning.CollisionTime in planning.PlanTime"
        ;;
    *)
        out=$kind
        check "a figure kind this test knows ('$kind' is new: add it here)" false
        ;;
    esac
done

# ---- what is missing, said exactly ---------------------------------------------------------
M="$TMP/missing"
mkdir -p "$M"
"$TMP/perflog_planner" "$M/norows" 1 0 >/dev/null 2>&1 # an episode ended before its first cycle
cp -r "$one" "$M/nomanifest" && rm "$M/nomanifest/run_manifest.yaml"
cp -r "$one" "$M/notimer" && sed -i 's/type: timer/type: gauge/' "$M/notimer/run_manifest.yaml"
# A log without TotalCost, as runs written before runlab logged the totals were.
cp -r "$one" "$M/nocost"
cut -d, -f3 --complement "$one/performance_log.csv" >"$M/nocost/performance_log.csv"
sed -i '/name: "TotalCost"/d' "$M/nocost/run_manifest.yaml"
run plot gain-cost "$M/norows" "$M/nocost" --out-dir "$TMP/mf"
check "gain-cost with nothing drawable exits 1" rc_is 1
check "gain-cost: no rows, said" err_has "norows/toy/wall20/greedy/"
check "gain-cost: no rows, why" err_has "skipped, no data rows: no_rows: performance_log.csv has a header and no rows"
check "gain-cost: no TotalCost, said" err_has "$M/nocost: not drawn: no TotalCost column"
run plot timing "$M/nomanifest" "$M/notimer" --out-dir "$TMP/mf"
check "timing with nothing drawable exits 1" rc_is 1
check "timing: no manifest, said" err_has "$M/nomanifest: no timer columns to draw: run_manifest.yaml is missing, so which columns are timers is unknown"
check "timing: no timer declared, said" err_has "$M/notimer: no timer columns to draw: run_manifest.yaml declares no column of type timer"
run plot timing "$M/notimer" "$one" --out-dir "$TMP/mf"
check "timing draws the good run beside a bad one" rc_is 0
check "and still names the bad one" err_has "$M/notimer: no timer columns to draw"

finish
