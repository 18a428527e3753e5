#!/usr/bin/env bash
# A repaired run whose bag holds a topic name that is not UTF-8: the repaired manifest.json
# must be valid JSON that runlab's own strict reader reads back (the name with U+FFFD for the
# bytes JSON cannot hold), so `list` shows the run INTERRUPTED, not UNFINISHED. Found by
# fuzz_record_repair; its input is fuzz/corpus/record_repair/invalid_utf8_topic.
. "$(dirname "$0")/lib.sh"

INPUT="$(cd "$(dirname "$0")/../.." && pwd)/fuzz/corpus/record_repair/invalid_utf8_topic"
RUN="$TMP/home/experiments/20261201T000000Z_r1"
mkdir -p "$RUN/config" "$RUN/bag"
# The fuzz input is manifest.json|||config/recorder.json|||bag/r1.mcap.
python3 - "$INPUT" "$RUN" <<'PY'
import sys
parts = open(sys.argv[1], "rb").read().split(b"|||")
for name, part in zip(("manifest.json", "config/recorder.json", "bag/r1.mcap"), parts):
    open(sys.argv[2] + "/" + name, "wb").write(part)
PY
run record --repair "$RUN"
check "repair exits 0" rc_is 0
check "the repaired manifest is valid UTF-8 JSON naming the topic with U+FFFD" python3 -c '
import json, sys
m = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))
names = [t["topic"] for t in m["topics"]]
assert m["state"] == "INTERRUPTED", m["state"]
assert any("\ufffd" in n and n.endswith("/4/state") for n in names), names
' "$RUN/manifest.json"
run list "$TMP/home"
check "list reads the repaired run back: INTERRUPTED" grep -q "^20261201T000000Z_r1 *INTERRUPTED" <<<"$out"
finish
