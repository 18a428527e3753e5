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
# The header's profile survives filter.
"$SAMPLE" "$TMP/ros2.mcap" 50 zstd 2048 ros2 || { echo "FAIL: mcap-robot-sample"; exit 1; }
run mcap filter "$TMP/ros2.mcap" "$TMP/ros2-f.mcap" --topics /pose
check "filter of a ros2 bag exits 0" rc_is 0
run mcap info "$TMP/ros2-f.mcap"
check "filter keeps the header profile" out_has "profile:     ros2"

run mcap filter "$F" "$TMP/g.mcap" --compression brotli
check "bad compression is a usage error" rc_is 2
run mcap filter "$F" "$TMP/f.mcap"
check "filter refuses an existing output" rc_is 1

# Every subcommand takes a folder holding one .mcap, or a run directory (its bag/).
mkdir -p "$TMP/one" "$TMP/run7/bag" "$TMP/two" "$TMP/none"
cp "$F" "$TMP/one/only.mcap"
cp "$F" "$TMP/run7/bag/run7.mcap"
cp "$F" "$TMP/two/a.mcap"
cp "$F" "$TMP/two/b.mcap"
run mcap info "$TMP/one"
check "info on a bag folder exits 0" rc_is 0
check "info on a bag folder reads its file" out_has "file:        $TMP/one/only.mcap"
check "info on a bag folder counts" out_has "messages:    300"
for c in info cat doctor; do
    run mcap "$c" "$TMP/run7"
    check "$c on a run directory exits 0" rc_is 0
done
check "doctor on a run directory names the bag" out_has "$TMP/run7/bag/run7.mcap: ok"
run mcap recover "$TMP/run7" "$TMP/run7-rec.mcap"
check "recover from a run directory exits 0" rc_is 0
check "recover of an intact file says so" out_has "input was complete and undamaged"
run mcap filter "$TMP/run7/" "$TMP/run7-f.mcap" --topics /log
check "filter from a run directory exits 0" rc_is 0
check "filter from a run directory copies" out_has "$TMP/run7/bag/run7.mcap -> $TMP/run7-f.mcap: 100 messages"
run mcap info "$TMP/two"
check "a folder with two bags exits 1" rc_is 1
check "a folder with two bags says so" err_has "runlab: mcap: info: $TMP/two: 2 .mcap files in this folder (a.mcap, b.mcap); name one"
run mcap cat "$TMP/none"
check "a folder without a bag exits 1" rc_is 1
check "a folder without a bag says so" err_has "runlab: mcap: cat: $TMP/none: no .mcap file in this folder"

# Offsets of the top-level records of a file, one "OFFSET OPCODE" line each (read with od,
# from the format's record prefix, independently of runlab's readers).
records() {
    local f=$1 p=8 size op len
    size=$(stat -c %s "$f")
    while [ $((p + 9)) -le "$size" ]; do
        op=$(od -An -tu1 -j"$p" -N1 "$f" | tr -d ' ')
        len=$(od -An -tu8 -j$((p + 1)) -N8 "$f" | tr -d ' ')
        echo "$p $op"
        [ "$op" = 2 ] && break
        p=$((p + 9 + len))
    done
}
chunks=($(records "$F" | awk '$2 == 6 {print $1}'))
check "the sample has chunks" [ "${#chunks[@]}" -eq 13 ]

# A chunk written twice (with its message indexes), in a file with a data-section CRC:
# readers warn and read every message once; recover reports the copy.
c3=${chunks[3]} c4=${chunks[4]}
{ head -c "$c4" "$F"; tail -c +$((c3 + 1)) "$F" | head -c $((c4 - c3)); tail -c +$((c4 + 1)) "$F"; } >"$TMP/dup.mcap"
run mcap info "$TMP/dup.mcap"
check "info on a duplicated chunk exits 0" rc_is 0
check "info counts each message once" out_has "messages:    300"
check "info warns about the copy" err_has "warning: byte $c4: Chunk record: an exact copy of the chunk at byte $c3"
check "info warns about the data-section CRC" err_has "data section CRC mismatch"
run mcap cat "$TMP/dup.mcap"
check "cat on a duplicated chunk exits 0" rc_is 0
check "cat prints each message once" [ "$(wc -l <<<"$out")" -eq 300 ]
run mcap recover "$TMP/dup.mcap" "$TMP/dup-rec.mcap"
check "recover of a duplicated chunk exits 0" rc_is 0
check "recover's headline names the copy" out_has "recovered, nothing lost; 1 duplicate chunks"
check "recover lists the copy" out_has "byte $c4: Chunk record: an exact copy of the chunk at byte $c3"
run mcap doctor "$TMP/dup.mcap"
check "doctor on a duplicated chunk exits 1" rc_is 1
check "doctor: one cause, one line" [ "$(grep -c '^byte ' <<<"$out")" -eq 1 ]
check "doctor counts what follows from it" out_has "further violations that follow from it)"

# Damaged compressed bytes of one chunk (its zstd frame magic): the headline says so.
cp "$F" "$TMP/zdam.mcap"
printf '\xee\xee\xee\xee' | dd of="$TMP/zdam.mcap" bs=1 seek=$((c3 + 53)) conv=notrunc status=none
run mcap recover "$TMP/zdam.mcap" "$TMP/zdam-rec.mcap"
check "recover of a damaged chunk exits 0" rc_is 0
check "recover's headline reports the loss" out_has "recovered with LOSSES:"
check "recover never calls it undamaged" bash -c 'grep -q "recovered with LOSSES:" <<<"$0" && ! grep -q undamaged <<<"$0"' "$out"
run mcap doctor "$TMP/zdam.mcap"
check "doctor: the damaged chunk is one violation" [ "$(grep -c '^byte ' <<<"$out")" -eq 1 ]
check "doctor says the offset once" bash -c 'grep -qE "^byte [0-9]+: " <<<"$0" && ! grep -qE "byte ([0-9]+): byte \1:" <<<"$0"' "$out"
run mcap recover --help
check "recover --help explains --keep-suspect" out_has "--keep-suspect"

# docs/cli.md's spellings: --topic for --topics, filter -o/--output, no empty list element
run mcap cat "$F" --topic /nope
check "mcap cat --topic is --topics" rc_is 0
run mcap cat "$F" --topics "a,,b"
check "an empty element in --topics is a usage error" rc_is 2
check "... saying so" err_has "empty topic name"
run mcap filter "$F" -o "$TMP/alias-out.mcap"
check "mcap filter -o OUT writes OUT" test -s "$TMP/alias-out.mcap"
finish
