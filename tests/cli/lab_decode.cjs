// Decodes every message of a runlab bag with Foxglove's own decoder, the way Foxglove and
// Lichtblick do for MCAP `cdr` messages with `omgidl` schemas: parseIDL(schema text), then
// MessageReader(schema name). Prints one JSON line per message: {"topic":..., "msg":...}
// (bigints as strings, typed arrays as arrays). Used by test_lab_foxglove.sh; exits 1 when a message fails.
"use strict";
const fs = require("fs");
const { McapStreamReader } = require("@mcap/core");
const { parseIDL } = require("@foxglove/omgidl-parser");
const { MessageReader } = require("@foxglove/omgidl-serialization");
const zstd = require("@foxglove/wasm-zstd");
const lz4 = require("@foxglove/wasm-lz4");

async function main() {
  await zstd.isLoaded;
  await lz4.isLoaded;
  const stream = new McapStreamReader({
    decompressHandlers: {
      zstd: (buf, size) => zstd.decompress(buf, Number(size)),
      lz4: (buf, size) => lz4(buf, Number(size)),
    },
    validateCrcs: true,
  });
  stream.append(fs.readFileSync(process.argv[2]));
  const schemas = new Map(), readers = new Map(), topics = new Map();
  for (let rec; (rec = stream.nextRecord()); ) {
    if (rec.type === "Schema") schemas.set(rec.id, rec);
    if (rec.type === "Channel") {
      topics.set(rec.id, rec.topic);
      const s = schemas.get(rec.schemaId);
      if (rec.messageEncoding === "cdr" && s && s.encoding === "omgidl") {
        const text = new TextDecoder().decode(s.data);
        readers.set(rec.id, new MessageReader(s.name, parseIDL(text)));
      }
    }
    if (rec.type !== "Message" || !readers.has(rec.channelId)) continue;
    const msg = readers.get(rec.channelId).readMessage(rec.data);
    console.log(JSON.stringify({ topic: topics.get(rec.channelId), msg },
                               (k, v) => (typeof v === "bigint" ? v.toString()
                                         : ArrayBuffer.isView(v) ? Array.from(v) : v)));
  }
}
main().catch((e) => {
  console.log(`FAIL: ${e.message}`);
  process.exit(1);
});
