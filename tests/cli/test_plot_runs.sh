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
