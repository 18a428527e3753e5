# `runlab plot gain-cost | normalized-gain | timing` over run directories: PNG and SVG
# below <data root>/figures/ at the input's path (or --out-dir / --output), a .yaml record
# beside each figure, "Wrote <path>" lines, no display needed. A broken --help fails.
. "$(dirname "$0")/lib.sh"
unset DISPLAY WAYLAND_DISPLAY
export RUNLAB_DATA_ROOT="$TMP/data"

run plot gain-cost --help
check "plot gain-cost --help exits 0" rc_is 0
check "plot gain-cost --help names the figure" out_has "gain-cost"

run explore --sweep --scenes 1,2 --seeds 1,2 --budget 60
check "sweep for the figures exits 0" rc_is 0

run plot gain-cost "$RUNLAB_DATA_ROOT/sweep/grid/s01"
check "gain-cost exits 0" rc_is 0
F="$RUNLAB_DATA_ROOT/figures/sweep/grid/s01"
check "gain-cost prints Wrote" out_has "Wrote $F/gain_cost.png"
check "gain-cost writes PNG" [ "$(head -c 4 "$F/gain_cost.png" | tail -c 3)" = "PNG" ]
check "gain-cost writes SVG" grep -q "<svg" "$F/gain_cost.svg"
check "gain-cost writes its record" grep -q "inputs:" "$F/gain_cost.yaml"

run plot gain-cost --by-planner "$RUNLAB_DATA_ROOT/sweep" "$RUNLAB_DATA_ROOT/sweep/grid/s02"
check "gain-cost from two inputs goes to the top" out_has "Wrote $RUNLAB_DATA_ROOT/figures/gain_cost.png"

run plot normalized-gain --out-dir "$TMP/figs" "$RUNLAB_DATA_ROOT/sweep"
check "normalized-gain exits 0" rc_is 0
check "normalized-gain honours --out-dir" out_has "Wrote $TMP/figs/normalized_gain.svg"
check "normalized-gain record" [ -s "$TMP/figs/normalized_gain.yaml" ]
# Where each run ended is marked (a finished run holds its last gain in the median).
check "normalized-gain marks the ends of the nbv runs" grep -q ">nbv: end of run<" "$TMP/figs/normalized_gain.svg"
check "normalized-gain marks the ends of the nbv_nobt runs" grep -q ">nbv_nobt: end of run<" "$TMP/figs/normalized_gain.svg"

run plot timing --open "$RUNLAB_DATA_ROOT/sweep/grid/s02/nbv"
check "timing exits 0 without a display" rc_is 0
n=$(grep -c "timing.png" <<<"$out")
check "timing draws one figure per run" [ "$n" -eq 2 ]
check "--open without a display says so" err_has "no display"

run plot timing --output "$TMP/one/t.svg" "$(ls -d "$RUNLAB_DATA_ROOT"/sweep/grid/s01/nbv/*/ | head -1)"
check "--output writes exactly that file" [ -s "$TMP/one/t.svg" ] 
check "--output writes the record beside" [ -s "$TMP/one/t.yaml" ]

# ---- issue 11, item 18: each figure at its own path, nothing created unwritten -------------
# Six runs outside the data root.
run explore --root "$TMP/ext" --sweep --scenes 1 --seeds 1,2,3 --budget 30
check "six runs outside the data root" [ "$(find "$TMP/ext" -name run_manifest.yaml | wc -l)" -eq 6 ]
run plot timing "$TMP/ext" --out-dir "$TMP/D"
check "timing of six runs exits 0" rc_is 0
check "six Wrote lines for PNGs" [ "$(grep -c 'timing.png$' <<<"$out")" -eq 6 ]
check "six distinct PNG paths" [ "$(grep 'timing.png$' <<<"$out" | sort -u | wc -l)" -eq 6 ]
check "six timing figures on disk" [ "$(find "$TMP/D" -name timing.png | wc -l)" -eq 6 ]
one_run=$(ls -d "$TMP"/ext/sweep/grid/s01/nbv/*/ | head -1)
one_rel=${one_run#"$TMP"/}
check "each mirrors its run's path" [ -s "$TMP/D/${one_rel%/}/timing.png" ]

# Without --out-dir, outside the data root: below the inputs' parent, not the data root.
export RUNLAB_DATA_ROOT="$TMP/data-elsewhere"
run plot gain-cost "$TMP/ext/sweep"
check "gain-cost outside the data root exits 0" rc_is 0
check "it goes below the input's parent" out_has "Wrote $TMP/ext/figures/sweep/gain_cost.png"
run explore --root "$TMP/ext2" --sweep --scenes 2 --seeds 1 --budget 30
sum1=$(md5sum <"$TMP/ext/figures/sweep/gain_cost.png")
run plot gain-cost "$TMP/ext2/sweep"
check "a second experiment gets its own figure" out_has "Wrote $TMP/ext2/figures/sweep/gain_cost.png"
check "the first experiment's figure is untouched" [ "$(md5sum <"$TMP/ext/figures/sweep/gain_cost.png")" = "$sum1" ]
check "nothing was created in the data root" [ ! -e "$RUNLAB_DATA_ROOT" ]

# --output writes that file only: no figures/ directory appears.
export RUNLAB_DATA_ROOT="$TMP/ext2"
run plot timing -o "$TMP/only/t.png" "$(ls -d "$TMP"/ext2/sweep/grid/s02/nbv/*/ | head -1)"
check "-o (alias of --output) exits 0" rc_is 0
check "-o writes the file" [ -s "$TMP/only/t.png" ]
check "-o creates no directory below figures/" [ ! -e "$TMP/ext2/figures/sweep/grid" ]
export RUNLAB_DATA_ROOT="$TMP/data"

# ---- issue 11, item 19: help texts ---------------------------------------------------------
run plot gain-cost --help
check "gain-cost --help explains --per-run" out_has "--per-run         gain-cost: one curve per run, however many runs"
check "gain-cost --help explains --by-planner" out_has "--by-planner      gain-cost: median and band per planner"
run --help
check "runlab --help says plot draws run figures too" out_has "gain-cost, normalized-gain, timing of runs"

# ---- issue 18, item 2: timing of any run ---------------------------------------------------
# mkrun DIR MANIFEST_COLUMNS CSV: a hand-written run (no summary: degraded, still drawn).
mkrun() {
    mkdir -p "$1"
    printf 'format_version: 1\nschema_fingerprint: "sha256:%064d"\nscene: "s"\nplanner: "p"\ncolumns:\n%s' 0 "$2" >"$1/run_manifest.yaml"
    printf '%s' "$3" >"$1/performance_log.csv"
}
col() { printf '  - {name: "%s", type: %s, unit: "s", parent: %s}\n' "$@"; }
T="$TMP/timing-any"
# Timers of any names: A and C at the top, B inside A, D inside B.
mkrun "$T/tree" "$(col CycleIndex counter null; col A timer null; col B timer '"A"'; col D timer '"B"'; col C timer null)" \
    $'CycleIndex,A,B,D,C\n0,0.004,0.002,0.001,0.003\n1,0.005,0.001,0.0005,0.002\n'
run plot timing "$T/tree" --out-dir "$TMP/tf"
check "timing draws a run of any timer names" rc_is 0
check "its record says what was stacked" grep -qF 'Stacked: A, C' "$TMP/tf/tree/timing.yaml"
check "its record says what nests in what" grep -qF 'Nested: B in A, D in B' "$TMP/tf/tree/timing.yaml"
check "the legend names a nested timer with its parent" grep -qF '>B (in A)<' "$TMP/tf/tree/timing.svg"
check "a nested timer of a nested timer too" grep -qF '>D (in B)<' "$TMP/tf/tree/timing.svg"
check "the figure says it is by timer" grep -qF '>Per-cycle time by timer: s / p<' "$TMP/tf/tree/timing.svg"
# A known component name nested in another timer: the manifest decides, nothing is added twice.
mkrun "$T/known-nested" "$(col CycleIndex counter null; col planning.PlanTime timer null; col planning.ExpandTime timer '"planning.PlanTime"')" \
    $'CycleIndex,planning.PlanTime,planning.ExpandTime\n0,0.004,0.002\n'
run plot timing "$T/known-nested" --out-dir "$TMP/tf"
check "a known name nested elsewhere follows the manifest" grep -qF 'Stacked: planning.PlanTime' "$TMP/tf/known-nested/timing.yaml"
# No manifest but the known columns: the known sum.
mkdir -p "$T/known-only"
printf 'CycleIndex,PlanPathTotal,Visualization\n0,0.004,0.001\n' >"$T/known-only/performance_log.csv"
run plot timing "$T/known-only" --out-dir "$TMP/tf"
check "without a manifest the known columns still draw" rc_is 0
check "as the known sum" grep -qF 'Stacked: PlanPathTotal, Visualization' "$TMP/tf/known-only/timing.yaml"
# What is missing, exactly.
mkdir -p "$T/bad/nomanifest"
printf 'CycleIndex,PlanTime\n0,0.004\n' >"$T/bad/nomanifest/performance_log.csv"
mkrun "$T/bad/notimer" "$(col CycleIndex counter null; col Cost total null)" $'CycleIndex,Cost\n0,1\n'
mkrun "$T/bad/notincsv" "$(col CycleIndex counter null; col PlanTime timer null)" $'CycleIndex,Other\n0,1\n'
mkrun "$T/bad/norows" "$(col CycleIndex counter null)" $'CycleIndex\n'
run plot timing "$T/bad"
check "no drawable run exits 1" rc_is 1
check "no manifest: says so and lists the known columns" err_has "$T/bad/nomanifest: no timer columns to draw: run_manifest.yaml is missing, so which columns are timers is unknown, and performance_log.csv has none of the known timing columns (PlanPathTotal, Visualization, RosCallbacks"
check "no timer declared: says so" err_has "$T/bad/notimer: no timer columns to draw: run_manifest.yaml declares no column of type timer"
check "timers not in the CSV: named" err_has "$T/bad/notincsv: no timer columns to draw: the manifest's timers are not in performance_log.csv: PlanTime"
check "no rows: says so" err_has "$T/bad/norows: skipped, no data rows: no_rows"
check "and the summary line" err_has "timing: no run with timer columns below the input(s)"
run plot timing "$T/bad" "$T/tree" --out-dir "$TMP/tf2"
check "one drawable run among bad ones exits 0" rc_is 0
check "the bad ones are still named" err_has "$T/bad/notimer: no timer columns to draw"

# ---- issue 18, item 3: gain-cost finds the gain of any layer -------------------------------
run plot gain-cost "$RUNLAB_DATA_ROOT/sweep/grid/s01/nbv" --out-dir "$TMP/gf"
check "two layers: says it drew their sum" out_has "Gain drawn: the sum of backtracking.RealAccumulatedGain + planning.RealAccumulatedGain, row by row (--gain COLUMN draws one)"
check "the record says so too" grep -qF "Gain drawn: the sum of backtracking.RealAccumulatedGain + planning.RealAccumulatedGain" "$TMP/gf/sweep/grid/s01/nbv/gain_cost.yaml"
run plot gain-cost "$RUNLAB_DATA_ROOT/sweep/grid/s01/nbv" --gain planning.RealAccumulatedGain --out-dir "$TMP/gf1"
check "--gain COLUMN: says it drew that one" out_has "Gain drawn: planning.RealAccumulatedGain (--gain)"
G="$TMP/gain-any"
gcol() { printf '  - {name: "%s", type: %s, unit: "%s", parent: null}\n' "$@"; }
# A layer of any name, the cost in its own unit.
mkrun "$G/ok" "$(gcol CycleIndex counter none; gcol TotalCost total J; gcol mapping.RealAccumulatedGain total m3)" \
    $'CycleIndex,TotalCost,mapping.RealAccumulatedGain\n0,1,5\n1,2,7\n'
run plot gain-cost "$G/ok" --out-dir "$TMP/gf2"
check "the gain of a layer named anything is found" out_has "Gain drawn: mapping.RealAccumulatedGain"
check "its column names the y axis, with its unit" grep -qF '>mapping.RealAccumulatedGain [m3]<' "$TMP/gf2/ok/gain_cost.svg"
check "the cost unit labels the x axis" grep -qF '>Total cost [J]<' "$TMP/gf2/ok/gain_cost.svg"
# What is missing, exactly.
mkrun "$G/bad/nocost" "$(gcol CycleIndex counter none; gcol p.RealAccumulatedGain total m2)" $'CycleIndex,p.RealAccumulatedGain\n0,1\n'
mkrun "$G/bad/nancost" "$(gcol CycleIndex counter none; gcol TotalCost total m; gcol p.RealAccumulatedGain total m2)" \
    $'CycleIndex,TotalCost,p.RealAccumulatedGain\n0,nan,1\n'
mkrun "$G/bad/nogain" "$(gcol CycleIndex counter none; gcol TotalCost total m)" $'CycleIndex,TotalCost\n0,1\n'
mkrun "$G/bad/summaryonly" "$(gcol CycleIndex counter none; gcol TotalCost total m)" $'CycleIndex,TotalCost\n0,1\n'
printf 'format_version: 1\nend_reason: stopped\ncycles: 1\ntotal_cost: 1.0\nreal_accumulated_gain:\n  explorer: 4.0\n' >"$G/bad/summaryonly/episode_summary.yaml"
run plot gain-cost "$G/bad"
check "no drawable run: exit 1" rc_is 1
check "no TotalCost: says so" err_has "$G/bad/nocost: not drawn: no TotalCost column"
check "TotalCost never set: says so" err_has "$G/bad/nancost: not drawn: TotalCost has no value in any row (the planner never passed its totals to rl_perflog_set_totals"
check "no gain column: says so" err_has "$G/bad/nogain: not drawn: no gain column"
check "a summary gain without its column: names the column to declare" err_has "$G/bad/summaryonly: not drawn: no <layer>.RealAccumulatedGain column: the summary has a gain for layer 'explorer' but the CSV has no column 'explorer.RealAccumulatedGain'"
check "and the summary line" err_has "gain-cost: no run with TotalCost and a gain column below the input(s)"
run plot gain-cost "$G/ok" --gain RealAccumulatedGain
check "--gain of a missing column names the gain columns there" err_has "not drawn: no column 'RealAccumulatedGain' (--gain); its gain columns: mapping.RealAccumulatedGain"

mkdir -p "$TMP/empty-nothing-here"
run plot gain-cost "$TMP/empty-nothing-here"
check "no runs is a failure" rc_is 1
run plot gain-cost "$TMP/not-there"
check "a missing input is a failure" rc_is 1
check "a missing input is named" err_has "$TMP/not-there: No such file or directory"
run plot gain-cost
check "no input is a usage error" rc_is 2
run plot timing --bogus x
check "unknown option is a usage error" rc_is 2

finish
