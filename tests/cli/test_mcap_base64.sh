# `runlab mcap cat --json --raw` prints payloads as standard base64 with padding and no
# line breaks (OpenSSL's EVP_EncodeBlock): for payloads whose lengths leave 0, 1 and 2
# bytes over a multiple of 3, Python's base64 decodes each strictly, re-encodes it to the
# same text, and the bytes are the synthetic payload's.
. "$(dirname "$0")/lib.sh"
test_domain

for payload in 0 1 2 3 64 65 1000; do
    run record --synthetic --vehicles 1 --rate 50 --payload "$payload" --duration 0.2 \
        --domain "$DOMAIN" --root "$TMP/home" --compression none -q
    check "payload $payload: recorded" rc_is 0
    dir=$(tail -n 1 <<<"$out")
    run mcap cat "$dir"/bag/*.mcap --json --raw --topics /vehicle/1/state
    check "payload $payload: cat --json --raw exits 0" rc_is 0
    check "payload $payload: each payload is strict base64 of its bytes" python3 - "$payload" "$out" <<'PY'
import base64, binascii, json, struct, sys
payload, text = int(sys.argv[1]), sys.argv[2]
lines = [json.loads(l) for l in text.splitlines() if l.strip()]
if not lines:
    sys.exit("no messages")
for m in lines:
    b64 = m["data_base64"]
    raw = base64.b64decode(b64, validate=True)
    if base64.b64encode(raw).decode() != b64:
        sys.exit("not canonical base64: %r" % b64[:40])
    if len(raw) != m["size"]:
        sys.exit("decoded %d bytes, size says %d" % (len(raw), m["size"]))
    if len(raw) != payload:
        sys.exit("decoded %d bytes, the payload is %d" % (len(raw), payload))
    # cmd_record.c's synthetic bytes (xorshift64); the first 12 carry vehicle and sequence.
    x, want = 0x9E3779B97F4A7C15, bytearray()
    for _ in range(payload):
        x ^= (x << 13) & (2**64 - 1)
        x ^= x >> 7
        x ^= (x << 17) & (2**64 - 1)
        want.append(x & 0xFF)
    if raw[12:] != bytes(want[12:]):
        sys.exit("the decoded bytes differ from the payload's")
PY
done
finish
