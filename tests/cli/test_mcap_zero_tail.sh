#!/usr/bin/env bash
# A bag whose tail is zero bytes (issue 29 item 9: what a crash leaves on a file system that
# pre-allocates): every reader (cat, info, export, schema, filter, evaluate's) reads the data
# before the zeros, with one warning naming the byte where they start; a zero opcode followed
# by anything else is still an error naming its byte. Commands run under `timeout`.
. "$(dirname "$0")/lib.sh"

bounded() { # bounded ARGS...: run with a 60 s limit (124 = it hung)
    timeout 60 "$RUNLAB" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    rc=$?
    out=$(cat "$TMP/out")
    err=$(cat "$TMP/err")
}
warned_once() { [ "$(grep -c "zero-filled tail" <<<"$err")" -eq 1 ]; }

F="$TMP/s.mcap"
"$RUNLAB_BIN/mcap-robot-sample" "$F" 300 zstd 2048 || { echo "FAIL: mcap-robot-sample"; exit 1; }
M="$TMP/m.mcap" # decodable CDR payloads, for export
"$RUNLAB_BIN/mcap-msg-sample" "$M" --messages 40 >/dev/null || { echo "FAIL: mcap-msg-sample"; exit 1; }
# Cut the file where the Data End record starts (no summary, no footer: a crashed writer)
# and append zeros; a second copy has one non-zero byte after 4 KiB of zeros.
cut=$(python3 - "$F" "$TMP" "$M" <<'EOF'
import struct, sys
def data_end(path):
    d = open(path, "rb").read()
    pos = 8
    while d[pos] != 0x0F:
        pos += 9 + struct.unpack("<Q", d[pos + 1:pos + 9])[0]
    return d, pos
m, mpos = data_end(sys.argv[3])
open(sys.argv[2] + "/mzero.mcap", "wb").write(m[:mpos] + bytes(100000))
d, pos = data_end(sys.argv[1])
open(sys.argv[2] + "/zero.mcap", "wb").write(d[:pos] + bytes(1 << 20))
open(sys.argv[2] + "/short.mcap", "wb").write(d[:pos] + bytes(5))
open(sys.argv[2] + "/damaged.mcap", "wb").write(d[:pos] + bytes(4096) + b"\x01" + bytes(64))
print(pos)
EOF
)

bounded mcap cat "$F"
all=$(wc -l <<<"$out")
check "the intact file has 300 messages" [ "$all" -eq 300 ]

for f in zero short; do
    bounded mcap cat "$TMP/$f.mcap"
    check "cat $f tail: exit 0" rc_is 0
    check "cat $f tail: every message" [ "$(wc -l <<<"$out")" -eq "$all" ]
    check "cat $f tail: one warning naming byte $cut" warned_once
    check "cat $f tail: the warning names the byte" err_has "byte $cut: the remaining"

    bounded mcap info "$TMP/$f.mcap"
    check "info $f tail: exit 0" rc_is 0
    check "info $f tail: counts the messages" out_has "messages:    300"
    check "info $f tail: one warning" warned_once

    bounded mcap schema "$TMP/$f.mcap"
    check "schema $f tail: exit 0" rc_is 0

    rm -f "$TMP/filtered.mcap"
    bounded mcap filter "$TMP/$f.mcap" "$TMP/filtered.mcap"
    check "filter $f tail: exit 0" rc_is 0
    bounded mcap cat "$TMP/filtered.mcap"
    check "filter $f tail: keeps every message" [ "$(wc -l <<<"$out")" -eq "$all" ]
done

bounded mcap export "$TMP/mzero.mcap" --topic /pose --topic /idl --out-dir "$TMP/exp"
check "export of a zero tail: exit 0" rc_is 0
check "export of a zero tail: every /pose row" out_has "pose.csv: 40 rows"
check "export of a zero tail: every /idl row" out_has "idl.csv: 40 rows"
check "export of a zero tail: one warning" warned_once

# Zeros, then something else: damage, reported at the first zero byte.
for c in cat info; do
    bounded mcap $c "$TMP/damaged.mcap"
    check "$c: zeros then data: exit 1" rc_is 1
    check "$c: zeros then data: names byte $cut" err_has "byte $cut: opcode 0x00"
done
bounded mcap export "$TMP/damaged.mcap" --topic /pose --out-dir "$TMP/exp2"
check "export: zeros then data: exit 1" rc_is 1
check "export: zeros then data: names byte $cut" err_has "byte $cut: opcode 0x00"

finish
