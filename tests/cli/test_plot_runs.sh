# `runlab plot gain-cost | normalized-gain | timing` over run directories: PNG and SVG
# below <data root>/figures/ at the input's path (or --out-dir / --output), a .yaml record
# beside each figure, "Wrote <path>" lines, no display needed. Skips (77) in a build
# without the plot module.
. "$(dirname "$0")/lib.sh"
unset DISPLAY WAYLAND_DISPLAY
export RUNLAB_DATA_ROOT="$TMP/data"

run plot gain-cost --help
if [ "$rc" -ne 0 ] || ! out_has "gain-cost"; then
    echo "SKIP: runlab built without the plot module"
    exit 77
fi

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
check "normalized-gain marks the ends of the nbv runs" grep -q ">nbv: end of a run<" "$TMP/figs/normalized_gain.svg"
check "normalized-gain marks the ends of the nbv_nobt runs" grep -q ">nbv_nobt: end of a run<" "$TMP/figs/normalized_gain.svg"

run plot timing --open "$RUNLAB_DATA_ROOT/sweep/grid/s02/nbv"
check "timing exits 0 without a display" rc_is 0
n=$(grep -c "timing.png" <<<"$out")
check "timing draws one figure per run" [ "$n" -eq 2 ]
check "--open without a display says so" err_has "no display"

run plot timing --output "$TMP/one/t.svg" "$(ls -d "$RUNLAB_DATA_ROOT"/sweep/grid/s01/nbv/*/ | head -1)"
check "--output writes exactly that file" [ -s "$TMP/one/t.svg" ] 
check "--output writes the record beside" [ -s "$TMP/one/t.yaml" ]

run plot gain-cost "$TMP/empty-nothing-here"
check "no runs is a failure" rc_is 1
run plot gain-cost
check "no input is a usage error" rc_is 2
run plot timing --bogus x
check "unknown option is a usage error" rc_is 2

finish
