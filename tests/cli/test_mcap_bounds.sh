# Hostile schemas and times on `runlab mcap` (issue 29 items 1 and 11): a bag whose schema
# holds an array of a billion empty structs (`E_ pad[1000000][1000]`, no payload bytes)
# once made cat --json, export and evaluate run for hours; now the schema is refused with
# its member named and the commands end at once. A --start after 2262 overflowed 64-bit
# nanoseconds and printed an empty reason. Every command runs under `timeout`, so a hang
# fails the test.
. "$(dirname "$0")/lib.sh"
LIMIT=120 # seconds; the commands take milliseconds, the old code hours

# run_bounded ARGS...: run, killed after LIMIT seconds (exit 124 then)
run_bounded() { run_cmd=(timeout "$LIMIT" "$RUNLAB" "$@"); "${run_cmd[@]}" >"$TMP/out" 2>"$TMP/err"; rc=$?; out=$(cat "$TMP/out"); err=$(cat "$TMP/err"); }
not_killed() { [ "$rc" -ne 124 ]; }

# An MCAP written here from the specification: header, schema, channel, 3 messages
# (CDR_LE, x = 7), data end, footer; no summary.
B="$TMP/pad.mcap"
python3 - "$B" <<'PY' || { echo "FAIL: writing the bag"; exit 1; }
import struct, sys
def rec(op, body): return bytes([op]) + struct.pack('<Q', len(body)) + body
def s(x): x = x.encode(); return struct.pack('<I', len(x)) + x
idl = b"struct E_ {}; struct T { long x; E_ pad[1000000][1000]; };"
out = b'\x89MCAP0\r\n' + rec(1, s('') + s('hostile'))
out += rec(3, struct.pack('<H', 1) + s('T') + s('omgidl') + struct.pack('<I', len(idl)) + idl)
out += rec(4, struct.pack('<HH', 1, 1) + s('/pad') + s('cdr') + struct.pack('<I', 0))
for i in range(3):
    out += rec(5, struct.pack('<HIQQ', 1, i, 1000 + i, 1000 + i) + b'\x00\x01\x00\x00' + struct.pack('<i', 7))
out += rec(15, struct.pack('<I', 0)) + rec(2, struct.pack('<QQI', 0, 0, 0)) + b'\x89MCAP0\r\n'
open(sys.argv[1], 'wb').write(out)
PY
WHY="schema 'T': member 'pad' of 'T': an array of 'E_', a type that takes no bytes in CDR"

run_bounded mcap cat "$B" --json
check "cat --json ends" not_killed
check "cat --json exits 0 (payloads kept as base64)" rc_is 0
check "cat --json says why the topic is not decoded" err_has "topic '/pad': $WHY"
check "cat --json prints every message, as data_base64" \
    [ "$(grep -c '"data_base64":"AAEAAAcAAAA="' <<<"$out")" -eq 3 ]

run_bounded mcap schema "$B"
check "schema ends" not_killed
check "schema exits 1 on the refused schema" rc_is 1
check "schema prints the reason" out_has "error: $WHY"

run_bounded mcap export "$B" --topic /pad --out-dir "$TMP/exp"
check "export ends" not_killed
check "export exits 1" rc_is 1
check "export names the topic and the member" err_has "topic '/pad': $WHY"

# Times 64-bit nanoseconds cannot hold: refused with the option and the range, exit 2.
for opt in --start --end; do
    run_bounded mcap cat "$B" $opt 2300-01-01T00:00:00Z
    check "cat $opt 2300: exit 2" rc_is 2
    check "cat $opt 2300: the reason" \
        err_has "runlab: mcap: cat: $opt '2300-01-01T00:00:00Z': not nanoseconds or an ISO 8601 time (timestamp '2300-01-01T00:00:00Z': out of the range of 64-bit nanoseconds (1677-09-21T00:12:43.145224192Z .. 2262-04-11T23:47:16.854775807Z))"
done
run mcap --help
check "mcap --help gives the range of times" out_has "from 1970-01-01 to 2262-04-11T23:47:16.854775807Z"
run_bounded mcap cat "$B" --start 1969-12-31T23:59:59Z
check "cat --start before 1970: exit 2" rc_is 2
check "cat --start before 1970: the reason" err_has "--start '1969-12-31T23:59:59Z': before 1970-01-01T00:00:00Z, where MCAP times begin"
run_bounded mcap cat "$B" --end 2262-04-11T23:47:16.854775807Z
check "cat --end at the last instant: exit 0" rc_is 0
check "cat --end at the last instant: all three messages" [ "$(grep -c /pad <<<"$out")" -eq 3 ]

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
