# `runlab mcap cat --json` with decoded messages, `mcap schema` and `mcap export`, over
# recordings whose payloads runlab's CDR encoder wrote from known values
# (tools/mcap-msg-sample): ROS 2 PoseStamped and a covariance message in every
# encapsulation kind, an IDL union/enum message, a mutable IDL type, a service event.
set -u
. "$(dirname "$0")/lib.sh"
SAMPLE="${RUNLAB_BIN}/mcap-msg-sample"
F="$TMP/m.mcap"
"$SAMPLE" "$F" || { echo "FAIL: mcap-msg-sample"; exit 1; }

run mcap cat "$F" --json --topics /pose
check "cat --json decodes: exit 0" rc_is 0
check "cat --json decodes: nothing on stderr" err_empty
# message 1 of /pose: position (1.5, -1, 2), stamp (101, 1)
check "cat --json: a decoded PoseStamped" out_has '{"topic":"/pose","channel_id":1,"log_time":1005,"publish_time":2005,"sequence":5,"size":76,"message":{"header":{"stamp":{"sec":101,"nanosec":1},"frame_id":"map"},"pose":{"position":{"x":1.5,"y":-1.0,"z":2.0},"orientation":{"x":0.0,"y":0.0,"z":0.25,"w":-0.0}}}}'
run mcap cat "$F" --json --topics /odom_cov
check "cat --json: NaN, -Infinity and 1e300" out_has '"position":{"x":1e+300,"y":"NaN","z":"-Infinity"}'
check "cat --json: a 36-double covariance" out_has '"covariance":[0.2,1.2,2.2,3.2,4.2,5.2,6.2,7.2,8.2,9.2,10.2,11.2,12.2,13.2,14.2,15.2,16.2,17.2,18.2,19.2,20.2,21.2,22.2,23.2,24.2,25.2,26.2,27.2,28.2,29.2,30.2,31.2,32.2,33.2,34.2,35.2]'
run mcap cat "$F" --json --topics /idl
check "cat --json: IDL union, enum, float32 shortest, escapes" out_has '"message":{"mode":5,"cmd":{"_d":2,"name":"go"},"values":[0.1,-1.25,3e+38],"ids":[1,-2],"label":"réading \"1\""}'
run mcap cat "$F" --json --topics /add_two_ints/_service_event
check "cat --json: service event with request and response" out_has '"request":[{"a":2,"b":-9007199254740993}],"response":[{"sum":-9223372036854775808}]'
run mcap cat "$F" --json --topics /idl_mutable
check "cat --json: mutable type, absent optional" out_has '"message":{"level":1.125,"code":null,"parts":[{"a":1,"note":"n"},{"a":-1,"note":null}],"mode":6}'

# The same values in every encapsulation kind decode to the same messages.
"$SAMPLE" "$TMP/k1.mcap" --kind 1 --set ros2 || { echo "FAIL: mcap-msg-sample --kind 1"; exit 1; }
"$RUNLAB" mcap cat "$TMP/k1.mcap" --json | sed 's/"size":[0-9]*,//' >"$TMP/le.ndjson"
for kind in 0 7 6 9 8 11 10 3 2; do
    "$SAMPLE" "$TMP/k$kind.mcap" --kind "$kind" --set ros2 || { echo "FAIL: mcap-msg-sample --kind $kind"; exit 1; }
    "$RUNLAB" mcap cat "$TMP/k$kind.mcap" --json | sed 's/"size":[0-9]*,//' >"$TMP/k$kind.ndjson"
    check "kind $kind decodes to the same messages as CDR_LE" cmp -s "$TMP/le.ndjson" "$TMP/k$kind.ndjson"
done

run mcap cat "$F" --json --raw --topics /pose
check "--raw: base64, no message" bash -c 'grep -q "\"data_base64\":\"AAEAAG" <<<"$0" && ! grep -q "\"message\"" <<<"$0"' "$out"

# A payload cut short: the line keeps the bytes and says where decoding failed; exit 1.
# 30 bytes: header 4, stamp 8, frame_id 4 + "map\0" 4, x at 20..27, y at 28 with 2 left.
"$SAMPLE" "$TMP/cut.mcap" --set ros2 --cut-pose 30 --messages 2
run mcap cat "$TMP/cut.mcap" --json --topics /pose
check "cut payload: exit 1" rc_is 1
check "cut payload: decode_error names field and offset" out_has '"decode_error":"field '"'"'pose.position.y'"'"': byte offset 28: needs 8 bytes, 2 left","data_base64":"'
check "cut payload: error on stderr" err_has "topic '/pose', log_time 1000: field 'pose.position.y': byte offset 28"

run mcap schema "$F" --topic /idl_mutable
check "schema exits 0" rc_is 0
check "schema: normalised text" out_has "@mutable struct sample::Status
  @id(7) float64 level
  @id(8) @optional int32 code
  @id(9) sample::Part[] parts
  @id(10) sample::Mode mode"
run mcap schema "$F"
check "schema: every schema" [ "$(grep -c '^# schema' <<<"$out")" -eq 5 ]
run mcap schema "$F" --topic /nope
check "schema: unknown topic exits 1" rc_is 1

run mcap export "$F" --topic /odom_cov --topic /add_two_ints/_service_event --out-dir "$TMP/csv"
check "export exits 0" rc_is 0
check "export: file named after the topic" [ -f "$TMP/csv/add_two_ints___service_event.csv" ]
check "export: columns" bash -c 'head -1 "$0" | grep -q "^log_time,publish_time,header.stamp.sec,header.stamp.nanosec,header.frame_id,pose.pose.position.x,pose.pose.position.y,pose.pose.position.z,pose.pose.orientation.x,pose.pose.orientation.y,pose.pose.orientation.z,pose.pose.orientation.w,pose.covariance\[0\],pose.covariance\[1\],"' "$TMP/csv/odom_cov.csv"
check "export: a row" bash -c 'sed -n 3p "$0" | grep -q "^1006,2006,1,7,odom,1e+300,NaN,-Infinity,0.0,0.0,0.0,1.0,0.1,1.1,2.1,"' "$TMP/csv/odom_cov.csv"
check "export: rows" [ "$(wc -l <"$TMP/csv/odom_cov.csv")" -eq 6 ]
check "export: sequences as JSON cells" bash -c 'sed -n 2p "$0" | grep -qF "1003,2003,0,0,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,0,\"[{\"\"a\"\":0,\"\"b\"\":-9007199254740993}]\",[]"' "$TMP/csv/add_two_ints___service_event.csv"
run mcap export "$F" --topic /odom_cov --out-dir "$TMP/csv"
check "export: never overwrites" rc_is 1
check "export: says so" err_has "exists; not overwritten"
run mcap export "$F" --topic /odom_cov
check "export without --out-dir is a usage error" rc_is 2
if command -v python3 >/dev/null && python3 -c 'import pandas' 2>/dev/null; then
    check "export: pandas reads it" python3 -c '
import pandas, sys
d = pandas.read_csv(sys.argv[1])
assert len(d) == 5 and d["pose.covariance[35]"].iloc[4] == 35.4 and d["log_time"].dtype == "int64", d' "$TMP/csv/odom_cov.csv"
fi
finish
