#!/usr/bin/env python3
# Independent reader of uncompressed MCAP files, written from the MCAP specification only
# (not from runlab's C code): walks every record, also inside chunks, and prints JSON with
# the header's profile and, per channel, topic, schema name and encoding, message encoding,
# message count, payload bytes and sorted log times. Usage: mcap_summary.py FILE
import json
import struct
import sys

MAGIC = b"\x89MCAP0\r\n"


class Buf:
    def __init__(self, data):
        self.d, self.o = data, 0

    def u16(self):
        v = struct.unpack_from("<H", self.d, self.o)[0]
        self.o += 2
        return v

    def u32(self):
        v = struct.unpack_from("<I", self.d, self.o)[0]
        self.o += 4
        return v

    def u64(self):
        v = struct.unpack_from("<Q", self.d, self.o)[0]
        self.o += 8
        return v

    def raw(self, n):
        v = self.d[self.o:self.o + n]
        if len(v) != n:
            raise ValueError("record cut at offset %d" % self.o)
        self.o += n
        return v

    def string(self):
        return self.raw(self.u32()).decode("utf-8")


def records(data, where):
    b = Buf(data)
    while b.o < len(data):
        op = b.raw(1)[0]
        n = b.u64()
        yield op, b.raw(n), where + b.o - n


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:8] != MAGIC or data[-8:] != MAGIC:
        sys.exit("not an MCAP file (magic)")
    out = {"profile": None, "channels": {}, "messages": 0}
    schemas, channels = {}, {}

    def handle(op, body, off):
        b = Buf(body)
        if op == 0x01:  # Header
            out["profile"] = b.string()
        elif op == 0x03:  # Schema
            sid = b.u16()
            schemas[sid] = (b.string(), b.string())
        elif op == 0x04:  # Channel
            cid, sid = b.u16(), b.u16()
            topic, enc = b.string(), b.string()
            if cid in channels:  # repeated in the summary section
                return
            channels[cid] = {"topic": topic, "message_encoding": enc, "schema_id": sid,
                             "count": 0, "bytes": 0, "log_times": []}
        elif op == 0x05:  # Message
            cid, _seq, log_time, _pub = b.u16(), b.u32(), b.u64(), b.u64()
            ch = channels[cid]
            ch["count"] += 1
            ch["bytes"] += len(body) - b.o
            ch["log_times"].append(log_time)
            out["messages"] += 1
        elif op == 0x06:  # Chunk
            b.u64(), b.u64()
            size, _crc = b.u64(), b.u32()
            comp = b.string()
            if comp != "":
                sys.exit("chunk at offset %d is compressed (%s): use --compression none" % (off, comp))
            recs = b.raw(b.u64())
            if len(recs) != size:
                sys.exit("chunk at offset %d: uncompressed_size %d, records %d" % (off, size, len(recs)))
            for op2, body2, off2 in records(recs, off):
                handle(op2, body2, off2)

    for op, body, off in records(data[8:-8], 8):
        handle(op, body, off)
        if op == 0x02:  # Footer: the summary after it repeats what was read
            break
    for ch in channels.values():
        name, enc = schemas.get(ch.pop("schema_id"), ("", ""))
        ch["schema"], ch["schema_encoding"] = name, enc
        ch["log_times"].sort()
        out["channels"][ch["topic"]] = ch
    json.dump(out, sys.stdout)


main()
