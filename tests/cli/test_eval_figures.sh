#!/usr/bin/env bash
# Every failing check of `runlab evaluate` names the figure that shows it (summary.json
# "figure"), for each kind of failure `runlab sim` can inject plus an acceleration limit
# set low; a vehicle has one colour in time plots and maps (read from the SVGs' strokes),
# violation marks have a colour no vehicle has and lie under the tracks, map figures have
# time ticks, and the distance figure's legend lists only the pairs that come near.
. "$(dirname "$0")/lib.sh"

H="$TMP/home"
printf 'states_speed:\n  max_acceleration: 0.5\n' >"$TMP/accel.yaml"

# The faulty run: vehicle 4's observations late, vehicle 2's states stalled, vehicle 3
# driving into another, vehicle 1 drifting off its command.
run sim --offline "$H" --vehicles 4 --duration 20 --seed 7 --fault late_observation:4:6:12 \
    --fault stall_topic:2:6:12 --fault collision:3:8 --fault drift:1:4:10
check "sim with four faults exits 0" rc_is 0
RUN=$(tail -n 1 <<<"$out")
run evaluate --config "$TMP/accel.yaml" "$RUN"
check "evaluate exits 1 (FAIL)" rc_is 1
EV=$(tail -n 1 <<<"$out")

# problems PYTHON: runs the Python text with ev (the evaluation directory), s (its
# summary.json), svg(name) (a figure's SVG text) and legend(name) (the legend's entries:
# text -> the stroke colours drawn just before it); prints one line per problem.
problems() {
    python3 - "$EV" "$1" <<'PY'
import html, json, os, re, sys
ev, code = sys.argv[1], sys.argv[2]
s = json.load(open(os.path.join(ev, "summary.json")))
def svg(name):
    return open(os.path.join(ev, "figures", name + ".svg")).read()
def legend(name):
    """Legend entries of a figure: text -> stroke colours of the sample drawn before it."""
    out, strokes = {}, []
    for tag, text in re.findall(r"<(path|text|circle)([^>]*>[^<]*)", svg(name)):
        if tag == "text":
            label = html.unescape(text.split(">", 1)[1].strip())
            out.setdefault(label, strokes)
            strokes = []
        else:
            strokes += re.findall(r'(?:stroke|fill)="(#[0-9a-f]{6})"', text)
    return out
problems = []
try:
    exec(code)
except Exception as e:  # a figure or key missing is a problem too, never a silent pass
    problems.append(f"{type(e).__name__}: {e}")
for p in problems:
    print(p)
PY
}

# ---- each failing check names a figure that exists and is the one for its kind ----
p=$(problems '
want = {("obs", "age"): "obs", ("topic_sanity", "state rate"): "topic_state",
        ("topic_sanity", "state largest gap"): "topic_state",
        ("states_speed", "acceleration"): "acceleration",
        ("command_follow", "deviation"): "command_follow_deviation",
        ("vehicle_collision", "collision"): "vehicle_collision_distance",
        ("lanelet_collision", "off_lanelets"): "lanelet_collision_map"}
seen = set()
for c in s["checks"]:
    if c["status"] != "FAIL":
        continue
    key = (c["metric"], c["check"])
    seen.add(key)
    if not c.get("figure"):
        problems.append("%s of %s: no figure" % (key, c["vehicles"]))
    elif not os.path.isfile(os.path.join(ev, "figures", c["figure"] + ".png")):
        problems.append("%s: figure %s not in figures/" % (key, c["figure"]))
    elif key in want and c["figure"] != want[key]:
        problems.append("%s: figure %s, expected %s" % (key, c["figure"], want[key]))
for key in want:
    if key not in seen:
        problems.append(f"{key}: no FAIL (the faults did not make it fail)")
# Checks no figure shows (UNAVAILABLE, N/A) name none; an INSUFFICIENT one names the figure
# of its data (the gap drawn as a gap) when its metric drew one; the key is always there.
for c in s["checks"]:
    if "figure" not in c:
        problems.append("%s/%s: no figure key" % (c["metric"], c["check"]))
    elif c["status"] in ("UNAVAILABLE", "N/A") and c["figure"] is not None:
        problems.append("%s/%s %s: figure %s" % (c["metric"], c["check"], c["status"], c["figure"]))
    elif c["status"] == "INSUFFICIENT" and c["figure"] is not None and \
            not os.path.isfile(os.path.join(ev, "figures", c["figure"] + ".png")):
        problems.append("%s/%s INSUFFICIENT: figure %s not in figures/" % (c["metric"], c["check"], c["figure"]))
')
check "every failing check names its figure ($p)" test -z "$p"

# ---- the figures show the limits: acceleration +- max_acceleration, obs age max_age ----
p=$(problems '
import math
for name, want in (("acceleration", ["0.5", "−0.5"]), ("obs", ["0.1"])):
    ticks = re.findall(r"<text[^>]*>([^<]*)</text>", svg(name))
    if "limit" not in [t.strip() for t in ticks]:
        problems.append(f"{name}: no limit in the legend")
if not any(c["figure"] == "topic_state" for c in s["checks"] if c["status"] == "FAIL"):
    problems.append("topic_state: not linked")
if os.path.exists(os.path.join(ev, "figures", "topic_observation.png")):
    problems.append("topic_observation drawn though no observation check fails")
')
check "limits drawn, a topic figure only for the failing topic ($p)" test -z "$p"

# ---- one colour per vehicle: time plot and map agree, marks differ from every vehicle ----
p=$(problems '
speed, cmap = legend("speed"), legend("vehicle_collision_map")
colours = {}
for v in range(1, 5):
    a, b = speed.get(f"vehicle {v}"), cmap.get(f"vehicle {v}")
    if not a or not b:
        problems.append(f"vehicle {v}: not in both legends")
        continue
    if a[-1] != b[-1]:
        problems.append(f"vehicle {v}: {a[-1]} in the time plot, {b[-1]} on the map")
    colours[v] = a[-1]
if len(set(colours.values())) != len(colours):
    problems.append(f"vehicles share colours: {colours}")
marks = set(cmap.get("collision", []))
if marks != {"#d55e00"}:
    problems.append(f"collision marks drawn in {marks}")
if marks & set(colours.values()):
    problems.append("a vehicle has the marks colour")
# Under the tracks: the first mark comes before the first track line in the document.
text = svg("vehicle_collision_map")
first_mark = text.find("stroke=" + chr(34) + "#d55e00")
first_track = min(text.find("stroke=" + chr(34) + c) for c in colours.values())
if not 0 <= first_mark < first_track:
    problems.append(f"marks drawn at {first_mark}, after the tracks at {first_track}")
if not any(k.startswith("direction, every") for k in cmap):
    problems.append("map: no time ticks with direction")
if "start" not in cmap:
    problems.append("map: no start marks")
')
check "one colour per vehicle, marks in a colour of their own under the tracks ($p)" test -z "$p"

# ---- command_follow_map: the deviation colour-mapped, its scale in the legend ----
p=$(problems '
lg = legend("command_follow_map")
scale = [k for k in lg if k.endswith(" m") or "(limit)" in k]
if len(scale) != 6 or not scale[-1].startswith(">= 0.15"):
    problems.append(f"colour scale entries {scale}")
if len({lg[k][-1] for k in scale}) != 6:
    problems.append("colour scale colours not distinct")
')
check "the tracking error is colour-mapped with a 6-step scale ($p)" test -z "$p"

# ---- the distance figure lists exactly the pairs within max(3 x 0, 0.5 m) ----
p=$(problems '
near = set()
for c in s["checks"]:
    if c["metric"] == "vehicle_collision" and c["check"] == "collision" and c["value"] <= 0.5:
        near.add("vehicles %d-%d" % tuple(sorted(c["vehicles"])))
listed = {k for k in legend("vehicle_collision_distance") if k.startswith("vehicles ")}
if listed != near or not near:
    problems.append(f"legend {sorted(listed)}, pairs within 0.5 m {sorted(near)}")
far = [c for c in s["checks"] if c["metric"] == "vehicle_collision" and c["value"] > 0.5]
if not far:
    problems.append("no pair farther than 0.5 m: the rule is not exercised")
for c in s["checks"]:
    if c["metric"] == "vehicle_collision" and c["value"] > 0.5 and c["figure"]:
        problems.append("far pair %s links %s" % (c["vehicles"], c["figure"]))
')
check "the distance legend lists only the pairs that come near ($p)" test -z "$p"

# ---- a clean run: speed and acceleration drawn, no topic figure ----
run sim --offline "$H" --vehicles 2 --duration 10 --seed 3
RUN=$(tail -n 1 <<<"$out")
run evaluate "$RUN"
check "clean: evaluate exits 0" rc_is 0
EV=$(tail -n 1 <<<"$out")
p=$(problems '
figs = sorted(f[:-4] for f in os.listdir(os.path.join(ev, "figures")) if f.endswith(".png"))
for f in ("speed", "acceleration", "obs"):
    if f not in figs:
        problems.append(f"{f} missing from {figs}")
if any(f.startswith("topic_") for f in figs):
    problems.append(f"a topic figure in a clean run: {figs}")
for c in s["checks"]:
    if c["metric"] == "states_speed" and c["figure"] != c["check"]:
        problems.append("states_speed/%s: figure %s" % (c["check"], c["figure"]))
')
check "clean: speed, acceleration and obs figures, no topic figure ($p)" test -z "$p"

finish
