#!/usr/bin/env bash
# The lanelet map of `runlab evaluate` draws each track on a white outline only where there
# are marks (footprint off the lanelets) for it to read over: a clean run's map strokes each
# track once, a run that leaves its lane has the outlines, under the tracks, over the marks.
. "$(dirname "$0")/lib.sh"

H="$TMP/home"
run sim --offline "$H" --vehicles 2 --duration 8 --seed 3
check "clean sim exits 0" rc_is 0
CLEAN=$(tail -n 1 <<<"$out")
run sim --offline "$H" --vehicles 2 --duration 8 --seed 3 --fault leave_lane:1:2:5
check "leave_lane sim exits 0" rc_is 0
FAULTY=$(tail -n 1 <<<"$out")

# outlines EVAL: the map SVG's white outline strokes, the index of the first one, of the
# first mark and of the first vehicle track ("count first_outline first_mark first_track").
outlines() {
    python3 - "$1/figures/lanelet_collision_map.svg" <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
paths = re.findall(r"<path[^>]*>", svg)
white = [i for i, p in enumerate(paths) if 'stroke="#ffffff"' in p]
marks = [i for i, p in enumerate(paths) if 'stroke="#d55e00"' in p]
tracks = [i for i, p in enumerate(paths)
          if 'stroke-width="1.2"' in p and 'stroke="#ffffff"' not in p and 'stroke="#d55e00"' not in p]
first = lambda l: l[0] if l else -1
print(len(white), first(white), first(marks), first(tracks))
PY
}

run evaluate "$CLEAN"
check "clean evaluate exits 0" rc_is 0
read -r n _ _ t <<<"$(outlines "$(tail -n 1 <<<"$out")")"
check "clean map: no white outline ($n), tracks drawn ($t)" test "$n" -eq 0 -a "$t" -ge 0

run evaluate "$FAULTY"
check "leave_lane evaluate exits 1 (FAIL)" rc_is 1
read -r n w m t <<<"$(outlines "$(tail -n 1 <<<"$out")")"
check "leave_lane map: white outlines ($n) after the marks ($m), before the tracks ($t)" \
    test "$n" -gt 0 -a "$m" -ge 0 -a "$w" -gt "$m" -a "$t" -gt "$w"

finish
