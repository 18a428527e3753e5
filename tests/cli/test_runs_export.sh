# Issue 11, items 14-16, as users meet them:
# - one run's final gain and total cost: the same number under the same label in
#   `explore`, `runs`, `runs --json`, `runs --csv` and the figure's record, equal to the
#   sum over layers of the summary's real_accumulated_gain (computed here from the YAML);
# - control characters in paths are escaped in the listing and the warnings;
# - the recorder's experiments/ tree (.run-ids links) walks without false warnings;
#   link chains and dangling links are reported; the seed is shown;
# - `runs --csv`: the documented header, read by pandas.
. "$(dirname "$0")/lib.sh"
unset DISPLAY WAYLAND_DISPLAY
export RUNLAB_DATA_ROOT="$TMP/data"

# A python with pandas and yaml: the one on PATH, else Debian's (python3-pandas).
PY=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "import pandas, yaml" 2>/dev/null; then
        PY=$p
        break
    fi
done

# ---- item 14: one definition of "final gain", shown the same everywhere -------------------
run explore --root "$RUNLAB_DATA_ROOT" --scene 1 --seed 3 --budget 120
check "explore exits 0" rc_is 0
explore_out=$out
dir=$(ls -d "$RUNLAB_DATA_ROOT"/grid/s01/nbv/*/)
dir=${dir%/}
gain_explore=$(sed -n 's/.*final gain *\([^ ]*\) m2.*/\1/p' <<<"$explore_out")
cost_explore=$(sed -n 's/.*total cost *\([^ ]*\) .*/\1/p' <<<"$explore_out")

# The expectation, from the files: the summary's per-layer gains summed, its total_cost;
# also the CSV's last row (the example agent logs each layer's gain after the move).
read -r want_gain want_cost csv_last <<<"$(python3 - "$dir" <<'PY'
import csv, sys, yaml
d = sys.argv[1]
s = yaml.safe_load(open(d + "/episode_summary.yaml"))
rows = list(csv.DictReader(open(d + "/performance_log.csv")))
last = sum(float(v) for k, v in rows[-1].items() if k.endswith(".RealAccumulatedGain"))
print(repr(float(sum(s["real_accumulated_gain"].values()))), repr(float(s["total_cost"])), repr(last))
PY
)"
fmt6() { python3 -c "import sys; print('%.6g' % float(sys.argv[1]))" "$1"; }
check "explore prints the final gain ($gain_explore, want $(fmt6 "$want_gain"))" [ "$gain_explore" = "$(fmt6 "$want_gain")" ]
check "explore prints the total cost ($cost_explore)" [ "$cost_explore" = "$(fmt6 "$want_cost")" ]
check "the CSV's last row is the final gain too" python3 -c "import sys; sys.exit(float('$csv_last') != float('$want_gain'))"

run runs "$dir"
row=$(sed -n 2p <<<"$out")
check "runs lists FINAL_GAIN and TOTAL_COST" out_has "FINAL_GAIN   TOTAL_COST"
check "runs shows the same final gain" [ "$(awk '{print $3}' <<<"$row")" = "$gain_explore" ]
check "runs shows the same total cost" [ "$(awk '{print $4}' <<<"$row")" = "$cost_explore" ]
check "runs shows the seed" [ "$(awk '{print $5}' <<<"$row")" = "3" ]

run runs --json "$dir"
json_same() {
    python3 -c '
import json, sys
r = json.loads(sys.stdin.read())[0]
g, c = float(sys.argv[1]), float(sys.argv[2])
assert r["final_gain"] == g, (r["final_gain"], g)
assert sum(r["final_gain_by_layer"].values()) == g
assert set(r["final_gain_by_layer"]) == {"planning", "backtracking"}
assert r["total_cost"] == c and r["seed"] == 3, r
' "$want_gain" "$want_cost" <<<"$out"
}
check "runs --json: final_gain, final_gain_by_layer, total_cost, seed" json_same

mkdir -p "$TMP/figs"
run plot gain-cost --out-dir "$TMP/figs" "$dir"
check "gain-cost of the run exits 0" rc_is 0
rec=$(find "$TMP/figs" -name gain_cost.yaml | head -1)
check "the figure's record states the final gain" grep -q "final_gain $want_gain" "$rec"
check "the figure's record states the total cost" grep -q "total_cost $(python3 -c "print('%g' % $want_cost)")" "$rec"
svg=${rec%.yaml}.svg
check "the end marker is in the legend" grep -q "nbv: end of run<" "$svg"

# A run whose summary goes past its last logged row (a planner that logs before the
# move): the figure says what its end marker is.
cp -r "$dir" "$TMP/past"
python3 - "$TMP/past" <<'PY'
import sys, re
p = sys.argv[1] + "/episode_summary.yaml"
s = open(p).read()
s = re.sub(r"^total_cost: .*$", "total_cost: 999.5", s, flags=re.M)
open(p, "w").write(s)
PY
run plot gain-cost --out-dir "$TMP/figs-past" "$TMP/past"
check "gain-cost of a run with an end past its last row exits 0" rc_is 0
check "the legend says the marker is past the last row" \
    grep -q "end of run (final gain at total cost, past the last row)" "$TMP/figs-past/past/gain_cost.svg"
check "the record says so too" grep -q "total_cost 999.5, final_gain .* (past the last row)" "$TMP/figs-past/past/gain_cost.yaml"

# ---- item 15: control characters in paths; link chains and dangling links ------------------
nl=$'\n'
esc=$'\e'
odd="$TMP/esc/a${nl}b${esc}[31mred"
mkdir -p "$odd"
cp -r "$dir" "$odd/run"
ln -s "no${nl}where" "$TMP/esc/dead${esc}link"
ln -s s2 "$TMP/esc/s1"
ln -s s1 "$TMP/esc/s2"
run runs "$TMP/esc"
check "runs with odd paths exits 0" rc_is 0
check "the listing is one header and one row" [ "$(wc -l <"$TMP/out")" -eq 2 ]
check "no escape byte reaches stdout" bash -c "! grep -q \$'\\e' '$TMP/out'"
check "the path is shown escaped" out_has 'a\nb\x1b[31mred/run'
check "no escape byte reaches stderr" bash -c "! grep -q \$'\\e' '$TMP/err'"
check "a dangling link is reported" err_has 'dead\x1blink: dangling symbolic link to '"'"'no\nwhere'"'"
check "a link chain is reported as a loop" err_has "$TMP/esc/s1: symbolic link loop"
check "each warning is one line" [ "$(wc -l <"$TMP/err")" -eq 3 ]

# ---- item 16: the recorder's experiments/ tree; the seed; runs --csv -----------------------
E="$TMP/home/experiments"
mkdir -p "$E/.run-ids" "$E/20261129T201500Z_exp-1/evaluations" "$E/20261129T201600Z_exp-2/bag"
ln -s ../20261129T201500Z_exp-1 "$E/.run-ids/exp-1"
ln -s ../20261129T201600Z_exp-2 "$E/.run-ids/exp-2"
echo '{"format": "runlab.record.manifest", "state": "COMPLETE"}' >"$E/20261129T201500Z_exp-1/manifest.json"
echo '{"format": "runlab.record.manifest", "state": "COMPLETE"}' >"$E/20261129T201600Z_exp-2/manifest.json"
cp -r "$dir" "$E/20261129T201500Z_exp-1/evaluations/nbv-run"
run runs "$E"
check "runs on experiments/ exits 0" rc_is 0
check "no false 'already visited' warning for .run-ids links" err_empty
check "the run is listed by its real path" out_has "$E/20261129T201500Z_exp-1/evaluations/nbv-run"
check "not through .run-ids" bash -c "! grep -q run-ids '$TMP/out'"

# The export: a sweep (two layers for nbv, one for nbv_nobt), a skipped run and a path
# that needs CSV quoting.
run explore --root "$TMP/sw" --sweep --scenes 1,2 --seeds 4,5 --budget 40
check "sweep for the export exits 0" rc_is 0
first=$(ls -d "$TMP"/sw/sweep/grid/s01/nbv/*/ | head -1)
: >"${first}performance_log.csv"
quoted="$TMP/sw/sweep/odd, \"quoted\""
mkdir -p "$quoted"
cp -r "$dir" "$quoted/run"
run runs --csv "$TMP/sw"
check "runs --csv exits 0" rc_is 0
header="path,task,dataset,scene,planner,stamp,start_utc,seed,status,reasons,cycles,end_reason,total_cost,final_gain,final_gain.backtracking,final_gain.planning,elapsed_time_s"
check "runs --csv prints the documented header" [ "$(head -1 "$TMP/out")" = "$header" ]
doc_header=$(grep -A2 '^### `runs --csv`' "${RUNLAB_SOURCE:-.}/docs/perflog.md" >/dev/null && sed -n '/^### `runs --csv`/,/^##[^#]/p' "${RUNLAB_SOURCE:-.}/docs/perflog.md" | grep -m1 '^path,task,')
check "docs/perflog.md shows the same header" [ "$doc_header" = "path,task,dataset,scene,planner,stamp,start_utc,seed,status,reasons,cycles,end_reason,total_cost,final_gain,final_gain.<layer>...,elapsed_time_s" ]
cp "$TMP/out" "$TMP/runs.csv"
run runs --json "$TMP/sw"
cp "$TMP/out" "$TMP/runs.json"
if [ -n "$PY" ]; then
    pandas_reads() {
        "$PY" - "$TMP/runs.csv" "$TMP/runs.json" <<'PY'
import json, math, sys
import pandas as pd
df = pd.read_csv(sys.argv[1])
runs = json.load(open(sys.argv[2]))
assert len(df) == len(runs) == 9, (len(df), len(runs))
assert str(df["seed"].dtype) == "int64", df["seed"].dtype
assert str(df["cycles"].dtype) == "int64", df["cycles"].dtype
for col in ("total_cost", "final_gain", "final_gain.planning", "final_gain.backtracking",
            "elapsed_time_s"):
    assert str(df[col].dtype) == "float64", (col, df[col].dtype)
by_path = {r["path"]: r for r in runs}
for _, row in df.iterrows():
    r = by_path[row["path"]]  # the quoted path reads back whole
    assert row["status"] == r["status"]
    assert row["seed"] == r["seed"]
    assert row["cycles"] == r["cycles"]
    for a, b in ((row["final_gain"], r["final_gain"]), (row["total_cost"], r["total_cost"])):
        assert (b is None and math.isnan(a)) or a == b, (a, b)
    for layer, g in r["final_gain_by_layer"].items():
        assert row["final_gain." + layer] == g
    assert row["reasons"] == ";".join(r["reasons"]) or (not r["reasons"] and pd.isna(row["reasons"]))
nobt = df[df["planner"] == "nbv_nobt"]
assert nobt["final_gain.backtracking"].isna().all()  # no such layer: an empty cell
assert (nobt["final_gain"] == nobt["final_gain.planning"]).all()
assert set(df["scene"]) == {"s01", "s02"} and set(df["task"].dropna()) == {"sweep"}
assert (df["status"] == "skipped").sum() == 1
assert any('"quoted"' in p for p in df["path"])
PY
    }
    check "pandas reads runs --csv: types, values equal to the JSON's" pandas_reads
else
    echo "SKIP: runs --csv with pandas: no python3 with pandas (scripts/install-deps.sh installs python3-pandas)"
fi

finish
