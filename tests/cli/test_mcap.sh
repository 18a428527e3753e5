# `runlab mcap` as users run it: info, cat (lines, filters, --json), doctor, recover and
# filter on recordings made by tools/mcap-robot-sample; exit codes 0/1/2, errors naming byte
# offsets, and outputs that never overwrite an existing file.
. "$(dirname "$0")/lib.sh"
SAMPLE="${RUNLAB_BIN}/mcap-robot-sample"
F="$TMP/s.mcap"
"$SAMPLE" "$F" 300 zstd 2048 || { echo "FAIL: mcap-robot-sample"; exit 1; }

run mcap --help
check "mcap --help exits 0" rc_is 0
check "mcap --help lists recover" out_has "recover IN OUT"
for c in info cat doctor recover filter; do
    run mcap "$c" --help
    check "mcap $c --help exits 0" rc_is 0
    check "mcap $c --help shows usage" out_has "Usage: runlab mcap $c"
done
run mcap
check "mcap without a command is a usage error" rc_is 2
run mcap frob
check "unknown mcap command exits 2" rc_is 2
check "unknown mcap command names it" err_has "runlab: mcap: unknown command 'frob'"

run mcap info "$F"
check "info exits 0" rc_is 0
check "info counts messages" out_has "messages:    300"
check "info shows the start" out_has "start:       2024-01-01T00:00:00.000000000Z"
check "info shows the duration" out_has "duration:    2.990000000 s"
check "info lists a channel with its count" out_has "/pose                           100 msgs"
check "info shows chunk compression" out_has "(zstd "
check "info lists the schema" out_has "geometry_msgs/Pose  [ros2msg"
check "info counts attachments" out_has "attachments: 1"

run mcap cat "$F"
check "cat exits 0" rc_is 0
check "cat prints one line per message" [ "$(wc -l <<<"$out")" -eq 300 ]
check "cat line format" out_has "1704067200000000000 /pose seq=0 publish=1704067200000000000 size=8"
run mcap cat "$F" --topics /log,/scan --start 2024-01-01T00:00:01Z --end 1704067201100000000
check "cat with filters exits 0" rc_is 0
check "cat filters by topic and time" [ "$(wc -l <<<"$out")" -eq 8 ]
check "cat filtered has /scan" out_has "/scan seq=103"
check "cat filtered has no /pose" bash -c '! grep -q /pose <<<"$0"' "$out"
run mcap cat "$F" --json --topics /log
check "cat --json exits 0" rc_is 0
check "cat --json one object per line" [ "$(wc -l <<<"$out")" -eq 100 ]
# bytes (2*13 + 7k) of mcap-robot-sample, base64 by hand: 1a 21 28 2f 36 3d 44 4b 52 59
check "cat --json fields" out_has '{"topic":"/log","channel_id":3,"log_time":1704067200020000000,"publish_time":1704067200020000000,"sequence":2,"size":10,"data_base64":"GiEoLzY9REtSWQ=="}'
check "cat --json: json channel with bytes that are not JSON: warned once" \
    [ "$(grep -c "topic '/log': a payload is not JSON" <<<"$err")" -eq 1 ]
run mcap cat "$F" --json --raw --topics /log
check "cat --json --raw exits 0" rc_is 0
check "cat --json --raw keeps payloads" out_has '"size":10,"data_base64":"GiEoLzY9REtSWQ=="}'
check "cat --json --raw warns nothing" err_empty
run mcap cat "$F" --start yesterday
check "bad time is a usage error" rc_is 2
check "bad time names the option" err_has "runlab: mcap: cat: --start 'yesterday'"
run mcap cat "$F" --bogus
check "unknown option exits 2" rc_is 2
# A usage error after --topics was read: nothing leaks (under ASan a leak turns exit 2 into 1).
run mcap cat --topics /log,/imu "$F" extra
check "extra argument after --topics exits 2" rc_is 2
run mcap cat "$TMP/missing.mcap"
check "missing file exits 1" rc_is 1
check "missing file error form" err_has "runlab: mcap: "

run mcap doctor "$F"
check "doctor on a good file exits 0" rc_is 0
check "doctor says ok" out_has "ok (83 records, 300 messages, 13 chunks)"

# A file cut in the middle: readers fail naming the byte offset, doctor fails, recover
# keeps every complete chunk.
size=$(stat -c %s "$F")
head -c $((size / 2)) "$F" >"$TMP/cut.mcap"
run mcap cat "$TMP/cut.mcap"
check "cat on a cut file prints what it can" rc_is 0
check "cat on a cut file warns" err_has "warning: no usable summary"
run mcap doctor "$TMP/cut.mcap"
check "doctor on a cut file exits 1" rc_is 1
check "doctor names the byte offset" out_has "byte "
check "doctor counts violations" err_has "violation"
run mcap recover "$TMP/cut.mcap" "$TMP/rec.mcap"
check "recover exits 0" rc_is 0
check "recover reports a lost range" out_has "  bytes "
check "recover reports kept messages" out_has "kept: "
run mcap doctor "$TMP/rec.mcap"
check "recovered file passes doctor" rc_is 0
run mcap cat "$TMP/rec.mcap"
n=$(wc -l <<<"$out")
check "recovered file keeps most messages" [ "$n" -ge 100 -a "$n" -lt 300 ]
before=$(sha256sum "$TMP/rec.mcap")
run mcap recover "$TMP/cut.mcap" "$TMP/rec.mcap"
check "recover refuses an existing output" rc_is 1
check "recover says why" err_has "exists; not overwriting"
check "existing output untouched" [ "$before" = "$(sha256sum "$TMP/rec.mcap")" ]
check "no temporary files left" [ -z "$(ls "$TMP" | grep tmp-)" ]
run mcap recover "$TMP/cut.mcap"
check "recover without OUT is a usage error" rc_is 2
printf 'definitely not an mcap file' >"$TMP/junk.mcap"
run mcap recover "$TMP/junk.mcap" "$TMP/junk-out.mcap"
check "recover of a non-MCAP file exits 1" rc_is 1
check "recover names byte 0" err_has "byte 0: not an MCAP file"
check "no output for a failed recover" [ ! -e "$TMP/junk-out.mcap" ]

# Damage in the middle: a corrupted byte inside a chunk.
cp "$F" "$TMP/bad.mcap"
printf '\xff\xff\xff\xff' | dd of="$TMP/bad.mcap" bs=1 seek=3000 conv=notrunc status=none
run mcap doctor "$TMP/bad.mcap"
check "doctor finds the corrupted chunk" rc_is 1
check "doctor reports a CRC or parse problem" bash -c 'grep -qE "CRC|corrupt|Chunk" <<<"$0"' "$out"
run mcap cat "$TMP/bad.mcap"
check "cat on a corrupted chunk exits 1" rc_is 1
check "cat names the chunk's byte offset" err_has "runlab: mcap: $TMP/bad.mcap: byte "

run mcap filter "$F" "$TMP/f.mcap" --topics /pose --start 1704067201000000000 --compression lz4 --chunk-size 1K
check "filter exits 0" rc_is 0
check "filter reports the count" out_has "66 messages"
run mcap info "$TMP/f.mcap"
check "filtered file has the messages" out_has "messages:    66"
check "filtered file is lz4" out_has "(zstd 0, lz4 "
check "filtered file has one channel" out_has "channels:    1"
run mcap doctor "$TMP/f.mcap"
check "filtered file passes doctor" rc_is 0
run mcap filter "$F" "$TMP/g.mcap" --compression brotli
check "bad compression is a usage error" rc_is 2
run mcap filter "$F" "$TMP/f.mcap"
check "filter refuses an existing output" rc_is 1

finish
