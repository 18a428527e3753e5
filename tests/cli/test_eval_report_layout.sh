#!/usr/bin/env bash
# What a reader sees of `runlab evaluate`'s report.html, laid out by headless Chromium: for a
# clean run and one run per fault kind `runlab sim --help` names, at window widths 1200, 1300
# and 1920, every table fits its container (nothing cut behind a scroll bar), no word of a
# cell is split across lines (only a token wider than half the page, a path, may break), the
# first check that did not pass comes before the first PASS row and the first figure, and
# near the top of the page, every link to a figure finds it, and a check that did not pass
# links to its metric's figure when the metric draws one. Skips without Chromium.
# RUNLAB_LAYOUT_SHOTS=DIR keeps a screenshot of the speeding report there to look at.
. "$(dirname "$0")/lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROMIUM" ]; then
    echo "SKIP: no chromium (or chromium-browser, google-chrome) on PATH: the report's layout is not checked"
    exit 77
fi
MAP="${RUNLAB_SHARED:-}/maps/LabMapCommonRoad.xml"
[ -f "$MAP" ] || MAP="$RUNLAB_SOURCE/data/maps/LabMapCommonRoad.xml"
JS="$RUNLAB_SOURCE/tests/cli/report_layout.js"

# The fault kinds, as the simulator lists them when given one it does not know, so that a
# new kind is laid out here too; its --help names each.
run sim --offline "$TMP/none" --fault no_such_kind:1:1
check "sim: an unknown fault kind is a usage error listing the kinds" rc_is 2
mapfile -t FAULTS < <(sed -n 's/.*unknown kind "no_such_kind" (\([^)]*\)).*/\1/p' <<<"$err" |
    tr -d ' ' | tr ',' '\n')
check "sim lists the seven fault kinds of issue 15 at least (${FAULTS[*]})" \
    test "${#FAULTS[@]}" -ge 7
run sim --help
help=$(tr -s ' \n' '  ' <<<"$out")
for fault in "${FAULTS[@]}"; do
    check "sim --help describes the fault kind $fault" grep -qF "$fault (" <<<"$help"
done

# layout EVALUATION WIDTH: the facts report_layout.js writes, one per line.
layout() {
    local page="$TMP/layout-$(basename "$(dirname "$(dirname "$1")")")-$2.html"
    { sed 's|</body>||; s|</html>||' "$1/report.html"; printf '<script>'; cat "$JS"
      printf '</script></body></html>\n'; } >"$page"
    timeout 180 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size="$2,900" --dump-dom "file://$page" 2>/dev/null |
        sed -n '/<pre id="layout">/,/<\/pre>/p' | sed 's|.*<pre id="layout">||; s|</pre>.*||'
}

# judge FACTS FAULTY: one line per problem in what layout found.
judge() {
    python3 - "$1" "$2" <<'PY'
import sys
facts, faulty = sys.argv[1].splitlines(), sys.argv[2] == "1"
# Metrics that draw a figure in every evaluation: their failing checks link to it.
DRAWN = {"states_speed", "command_follow", "vehicle_collision", "boundary_violation", "lanelet_collision"}
problems, tables, order, first = [], 0, None, None
for f in facts:
    k = f.split(" ", 1)
    if k[0] == "TABLE":
        i, width, box, scroll, page = k[1].split()
        tables += 1
        if float(width) > float(box) + 0.5 or int(scroll) > int(box) or float(box) > float(page) + 0.5:
            problems.append(f"table {i} does not fit: width {width}, container {box} (scroll {scroll}), page {page}")
    elif k[0] == "SPLIT":
        problems.append("word split across lines in table " + k[1])
    elif k[0] == "ORDER":
        order = [int(x) for x in k[1].split()]
    elif k[0] == "FIRST":
        first = int(k[1])
    elif k[0] == "LINK":
        problems.append("link to a missing figure: " + k[1])
    elif k[0] == "ROW":
        metric, href = k[1].split()
        if metric in DRAWN and href == "-":
            problems.append(f"a {metric} check that did not pass links to no figure")
if tables < 3:
    problems.append(f"only {tables} tables laid out (no layout facts?)")
if order is None:
    problems.append("no ORDER line")
elif faulty:
    nonpass, passed, figure = order
    if nonpass < 0:
        problems.append("no row of a check that did not pass")
    elif (passed >= 0 and passed < nonpass) or (figure >= 0 and figure < nonpass):
        problems.append(f"the first non-PASS row (#{nonpass}) is not before the first PASS row (#{passed}) and figure (#{figure})")
    if first is not None and not 0 <= first < 900:
        problems.append(f"the first non-PASS row is {first} px down, below the first screen (900 px)")
elif order[0] >= 0:
    problems.append("a non-PASS row in the clean run's report")
print("\n".join(problems))
PY
}

# evaluate_and_lay_out NAME FAULTY SIM-ARGS...: a run of 3 vehicles for 20 s on the lab map,
# evaluated, its report laid out at the three widths.
evaluate_and_lay_out() {
    local name=$1 faulty=$2
    shift 2
    run sim --offline "$TMP/$name" --vehicles 3 --duration 20 --seed 7 --map "$MAP" "$@"
    check "$name: sim exits 0" rc_is 0
    local dir
    dir=$(tail -n 1 <<<"$out")
    run evaluate "$dir"
    check "$name: evaluate exits 0, 1 or 3 (exit $rc)" bash -c '[ '"$rc"' -le 1 ] || [ '"$rc"' -eq 3 ]'
    local ev
    ev=$(tail -n 1 <<<"$out")
    EV_LAST=$ev
    for width in 1200 1300 1920; do
        local facts problems
        facts=$(layout "$ev" "$width")
        echo "info: $name at $width px: $(grep -E '^(TABLE 0|MIN 0|FIRST|ORDER)' <<<"$facts" | tr '\n' ' ')"
        problems=$(judge "$facts" "$faulty")
        check "$name at $width px: tables fit, no word split, failures first ($problems)" test -z "$problems"
    done
}

evaluate_and_lay_out clean 0
for fault in "${FAULTS[@]}"; do
    evaluate_and_lay_out "$fault" 1 --fault "$fault:2:6:12"
    [ "$fault" = speeding ] && SPEEDING_EV=$EV_LAST
done
# Two faults at once: a longer list on top.
evaluate_and_lay_out two_faults 1 --fault leave_lane:1:4:9 --fault stall_topic:3:8:11

# A screenshot of the speeding report's first screen, to look at.
if [ -n "${SPEEDING_EV:-}" ]; then
    shot="$TMP/speeding-1300.png"
    timeout 180 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=1300,1400 --screenshot="$shot" "file://$SPEEDING_EV/report.html" \
        >/dev/null 2>&1
    check "speeding: Chromium takes a screenshot of the report" test -s "$shot"
    if [ -n "${RUNLAB_LAYOUT_SHOTS:-}" ]; then
        mkdir -p "$RUNLAB_LAYOUT_SHOTS" && cp "$shot" "$RUNLAB_LAYOUT_SHOTS/" &&
            echo "info: screenshot kept in $RUNLAB_LAYOUT_SHOTS/speeding-1300.png"
    fi
fi

finish
