// Reads an MCAP file written by tools/mcap-sample with the reference TypeScript reader
// (@mcap/core), streamed and indexed, and checks every message against the sample's
// formula. Used by test_mcap_ts_reader.sh; prints one line and exits 1 on a mismatch.
"use strict";
const fs = require("fs");
const { McapIndexedReader, McapStreamReader } = require("@mcap/core");
const zstd = require("@foxglove/wasm-zstd");
const lz4 = require("@foxglove/wasm-lz4");

function fail(msg) {
  console.log(`FAIL ${process.argv[2]}: ${msg}`);
  process.exit(1);
}

function checkMessage(m, topic, n) {
  const i = m.sequence;
  if (i >= n) fail(`sequence ${i} out of range`);
  if (topic !== ["/a", "/b", "/c"][i % 3]) fail(`message ${i} on topic ${topic}`);
  const t = BigInt(Math.floor(((i * 7919) % n) / 2));
  if (m.logTime !== t || m.publishTime !== t + 1n) fail(`message ${i}: times ${m.logTime}/${m.publishTime}`);
  const len = 10 + (i % 50);
  if (m.data.length !== len) fail(`message ${i}: ${m.data.length} bytes, expected ${len}`);
  for (let k = 0; k < len; k++) if (m.data[k] !== ((i + k) & 255)) fail(`message ${i}: byte ${k}`);
}

async function main() {
  const [path, nStr, indexed] = process.argv.slice(2);
  const n = Number(nStr);
  await zstd.isLoaded;
  await lz4.isLoaded;
  const decompressHandlers = {
    zstd: (buf, size) => zstd.decompress(buf, Number(size)),
    lz4: (buf, size) => lz4(buf, Number(size)),
  };
  const bytes = fs.readFileSync(path);

  // Streamed: every record, messages in write order.
  const stream = new McapStreamReader({ decompressHandlers, validateCrcs: true });
  stream.append(bytes);
  const channels = new Map();
  let next = 0, attachments = 0, metadata = 0;
  for (let rec; (rec = stream.nextRecord()); ) {
    if (rec.type === "Channel") channels.set(rec.id, rec);
    if (rec.type === "Attachment") attachments++;
    if (rec.type === "Metadata") metadata++;
    if (rec.type !== "Message") continue;
    if (rec.sequence !== next) fail(`streamed: message ${next} expected, got ${rec.sequence}`);
    checkMessage(rec, channels.get(rec.channelId).topic, n);
    next++;
  }
  if (!stream.done()) fail("streamed reader did not reach the end");
  if (next !== n) fail(`streamed: ${next} messages, expected ${n}`);
  if (attachments !== 1 || metadata !== 1) fail("streamed: attachment or metadata missing");

  if (indexed !== "indexed") {
    console.log(`ok ${path}: streamed ${n} messages`);
    return;
  }
  // Indexed: log-time order (ties in write order), both directions, and statistics.
  const readable = {
    size: async () => BigInt(bytes.length),
    read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)),
  };
  const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers });
  if (reader.statistics.messageCount !== BigInt(n)) fail("statistics message count");
  if (reader.attachmentIndexes.length !== 1 || reader.metadataIndexes.length !== 1) fail("summary indexes");
  for (const reverse of [false, true]) {
    let count = 0, last;
    for await (const m of reader.readMessages({ reverse })) {
      checkMessage(m, reader.channelsById.get(m.channelId).topic, n);
      if (last !== undefined) {
        const ordered = reverse ? m.logTime <= last.logTime : m.logTime >= last.logTime;
        if (!ordered) fail(`indexed (reverse=${reverse}): log times out of order`);
      }
      last = m;
      count++;
    }
    if (count !== n) fail(`indexed (reverse=${reverse}): ${count} messages, expected ${n}`);
  }
  let topicCount = 0;
  for await (const m of reader.readMessages({ topics: ["/b"], startTime: 10n, endTime: 200n })) {
    if (m.sequence % 3 !== 1 || m.logTime < 10n || m.logTime > 200n) fail("topic/time filter");
    topicCount++;
  }
  if (topicCount === 0) fail("topic/time filter found nothing");
  console.log(`ok ${path}: streamed and indexed ${n} messages`);
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
