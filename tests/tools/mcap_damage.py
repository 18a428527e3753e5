#!/usr/bin/env python3
# Rewrites an uncompressed MCAP file (`runlab mcap filter --compression none`) into a plain
# one without chunks or summary, damaging one topic on the way, as a broken publisher or
# disk would: written from the MCAP specification only, for the evaluation's decoding tests.
# Usage: mcap_damage.py IN OUT TOPIC MODE [FRACTION]
#   MODE random    every payload (of FRACTION of the messages) replaced by random bytes of
#                  a random length (seeded: the same file every time)
#   MODE truncate  every payload (of FRACTION of the messages) cut to half its length
#   MODE encoding  the channel's message encoding set to FRACTION (a string, e.g. "json")
# FRACTION "first:K" damages exactly the first K messages of the topic instead.
import random
import struct
import sys

MAGIC = b"\x89MCAP0\r\n"


def records(data, off, end):
    while off + 9 <= end:
        op = data[off]
        n = struct.unpack_from("<Q", data, off + 1)[0]
        yield op, data[off + 9:off + 9 + n]
        off += 9 + n


def string(body, off):
    n = struct.unpack_from("<I", body, off)[0]
    return body[off + 4:off + 4 + n].decode(), off + 4 + n


def flatten(data):
    """Every record in file order, chunks opened (they must be uncompressed)."""
    for op, body in records(data, len(MAGIC), len(data) - len(MAGIC)):
        if op == 0x06:
            comp, o = string(body, 28)
            if comp:
                sys.exit(f"chunk compressed with {comp}: filter with --compression none first")
            n = struct.unpack_from("<Q", body, o)[0]
            inner = body[o + 8:o + 8 + n]
            yield from records(inner, 0, len(inner))
        else:
            yield op, body


def rec(op, body):
    return bytes([op]) + struct.pack("<Q", len(body)) + body


def s(text):
    b = text.encode()
    return struct.pack("<I", len(b)) + b


def main():
    src, dst, topic, mode = sys.argv[1:5]
    arg = sys.argv[5] if len(sys.argv) > 5 else "1"
    data = open(src, "rb").read()
    rng = random.Random(7)
    out = bytearray(MAGIC)
    target = None
    seen = 0
    first = int(arg[6:]) if arg.startswith("first:") else None
    for op, body in flatten(data):
        if op == 0x01:
            out += rec(op, body)
        elif op == 0x03:
            out += rec(op, body)
        elif op == 0x04:
            cid = struct.unpack_from("<H", body, 0)[0]
            name, o = string(body, 4)
            if name == topic:
                target = cid
                if mode == "encoding":
                    _, rest = string(body, o)
                    body = body[:o] + s(arg) + body[rest:]
            out += rec(op, body)
        elif op == 0x05:
            cid = struct.unpack_from("<H", body, 0)[0]
            head, payload = body[:22], body[22:]
            hit = cid == target and mode != "encoding" and (
                seen < first if first is not None else rng.random() < float(arg))
            seen += cid == target
            if hit:
                if mode == "random":
                    payload = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
                else:
                    payload = payload[:len(payload) // 2]
            out += rec(op, head + payload)
    if target is None:
        sys.exit(f"{topic}: no such channel")
    out += rec(0x0F, struct.pack("<I", 0))
    out += rec(0x02, struct.pack("<QQI", 0, 0, 0)) + MAGIC
    open(dst, "wb").write(out)


main()
