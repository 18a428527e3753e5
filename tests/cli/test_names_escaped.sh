#!/usr/bin/env bash
# Names with control bytes (issue 29 item 10): `runlab list` lists run directories whose name
# holds a newline or a tab, escaped in text (\n, \t) and as JSON strings in --json, instead
# of leaving them out; `mcap export` writes such a topic's CSV under a name with %HH for each
# control byte and never echoes a raw control byte. Commands run under `timeout`.
. "$(dirname "$0")/lib.sh"

bounded() { # bounded ARGS...: run with a 60 s limit (124 = it hung)
    timeout 60 "$RUNLAB" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    rc=$?
    out=$(cat "$TMP/out")
    err=$(cat "$TMP/err")
}
no_raw_control() { # stdout and stderr hold no byte < 0x20 but newline
    ! LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$TMP/out" "$TMP/err"
}

H="$TMP/home"
export RUNLAB_HOME="$H"
printf 'speed: 1.2\n' >"$TMP/spec.yaml"
bounded sim "$TMP/spec.yaml" --offline "$H" --vehicles 1 --duration 3 --seed 3
check "sim exits 0" rc_is 0
RUN=$(tail -n 1 <<<"$out")
cp -r "$RUN" "$H/experiments/20990101T000000Z_new"$'\n'"line"
cp -r "$RUN" "$H/experiments/20990101T000001Z_a"$'\t'"tab"

bounded list
check "list exits 0" rc_is 0
check "list shows the run with a newline, escaped" out_has '20990101T000000Z_new\nline'
check "list shows the run with a tab, escaped" out_has '20990101T000001Z_a\ttab'
check "list shows the ordinary run (by its run id)" out_has "$(basename "$RUN" | cut -d_ -f2-)"
check "list: 4 lines (header and three runs)" [ "$(wc -l <<<"$out")" -eq 4 ]
check "list: no raw control byte" no_raw_control

bounded list --json
check "list --json exits 0" rc_is 0
check "list --json holds all three runs, names exact" python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
names = sorted(r["directory"] for r in d)
want = sorted(["20990101T000000Z_new\nline", "20990101T000001Z_a\ttab", sys.argv[1]])
sys.exit(0 if names == want else 1)' "$(basename "$RUN")" <<<"$out"

# An MCAP written here by hand (no summary needed): topics with a newline, a tab and an
# escape sequence, three CDR messages each.
python3 - "$TMP/c.mcap" <<'EOF'
import struct, sys
def s(b):
    b = b.encode() if isinstance(b, str) else b
    return struct.pack('<I', len(b)) + b
def rec(op, body):
    return bytes([op]) + struct.pack('<Q', len(body)) + body
magic = b'\x89MCAP0\r\n'
out = magic + rec(1, s('') + s('hand'))
out += rec(3, struct.pack('<H', 1) + s('pkg/msg/X') + s('ros2msg') + s('float64 x'))
topics = ['/a\nb', '/c\td', '/e\x1b[31mf', '/ok']
for i, t in enumerate(topics):
    out += rec(4, struct.pack('<HH', i + 1, 1) + s(t) + s('cdr') + struct.pack('<I', 0))
for i in range(len(topics)):
    for k in range(3):
        out += rec(5, struct.pack('<HIQQ', i + 1, k, 1000 + k, 1000 + k) +
                   b'\x00\x01\x00\x00' + struct.pack('<d', k + 0.5))
out += rec(0x0F, struct.pack('<I', 0))
out += rec(2, struct.pack('<QQI', 0, 0, 0)) + magic
open(sys.argv[1], 'wb').write(out)
EOF
bounded mcap export "$TMP/c.mcap" --topic $'/a\nb' --topic $'/c\td' --topic $'/e\x1b[31mf' \
    --topic /ok --out-dir "$TMP/exp"
check "export exits 0" rc_is 0
check "export: newline written %0A" [ -f "$TMP/exp/a%0Ab.csv" ]
check "export: tab written %09" [ -f "$TMP/exp/c%09d.csv" ]
check "export: ESC written %1B" [ -f "$TMP/exp/e%1B[31mf.csv" ]
check "export: plain name unchanged" [ -f "$TMP/exp/ok.csv" ]
check "export: no file name with a control byte" \
    [ -z "$(ls "$TMP/exp" | LC_ALL=C grep $'[\x01-\x1f\x7f]')" ]
check "export: 4 files" [ "$(ls "$TMP/exp" | wc -l)" -eq 4 ]
check "export: rows counted" out_has "a%0Ab.csv: 3 rows"
check "export: no raw control byte echoed" no_raw_control
bounded mcap export "$TMP/c.mcap" --topic $'/no\x1bsuch' --out-dir "$TMP/exp2"
check "export of a missing topic: exit 1" rc_is 1
check "export of a missing topic: escaped in the error" err_has "no channel with topic '/no\\x1bsuch'"
check "export of a missing topic: no raw control byte" no_raw_control

# `mcap info` and `mcap cat` print the same names escaped: topics, schema names, encodings,
# the header's profile and library (a second file puts control bytes in each of those).
python3 - "$TMP/c.mcap" "$TMP/d.mcap" <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
old = b'\x01' + struct.pack('<Q', 12) + struct.pack('<I', 0) + struct.pack('<I', 4) + b'hand'
new = b'\x01' + struct.pack('<Q', 14) + struct.pack('<I', 2) + b'p\x07' + struct.pack('<I', 4) + b'h\nnd'
assert old in data
data = data.replace(old, new, 1)
data = data.replace(b'pkg/msg/X', b'pkg\x1b[2J/X', 1)
open(sys.argv[2], 'wb').write(data)
EOF
bounded mcap info "$TMP/c.mcap"
check "info exits 0" rc_is 0
check "info: topic with a newline escaped" out_has '/a\nb'
check "info: topic with a tab escaped" out_has '/c\td'
check "info: topic with ESC escaped" out_has '/e\x1b[31mf'
check "info: no raw control byte" no_raw_control
bounded mcap info "$TMP/d.mcap"
check "info of the second file exits 0" rc_is 0
check "info: profile escaped" out_has 'profile:     p\x07'
check "info: library escaped" out_has 'library:     h\nnd'
check "info: schema name escaped" out_has 'pkg\x1b[2J/X'
check "info: no raw control byte (second file)" no_raw_control
bounded mcap cat "$TMP/c.mcap"
check "cat exits 0" rc_is 0
check "cat: 12 lines" [ "$(wc -l <<<"$out")" -eq 12 ]
check "cat: topic escaped" out_has ' /a\nb seq=0'
check "cat: no raw control byte" no_raw_control

finish
