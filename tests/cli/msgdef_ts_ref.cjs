// The TypeScript reference decoders against runlab's: `make-ros2 OUT.mcap` writes an MCAP of
// ROS 2 messages (schemas as rosbag2 stores them, payloads by @foxglove/rosmsg2-serialization's
// MessageWriter); `make-idl OUT.mcap` one of omgidl schemas (payloads by
// @foxglove/omgidl-serialization's MessageWriter, plain CDR; unions, which that writer
// cannot write, by @foxglove/cdr's CdrWriter); `compare FILE.mcap RUNLAB.ndjson` decodes every
// message of FILE with the reference reader of its schema encoding and compares it field by
// field with the "message" of runlab's `mcap cat --json` line of the same sequence: 64-bit
// integers exactly, float32 as float32, NaN/±Infinity/-0 by identity. Prints one line;
// exits 1 on any difference. Not covered here, because omgidl-serialization 1.0.3 misreads
// or miswrites them: XCDR2 @optional members, struct arrays under XCDR2, multi-dimensional
// arrays; those are checked against hand-made payloads in tests/unit/test_msgdef.c. So are
// services and rosbag2 service events: @foxglove/rosmsg cannot parse .srv schemas.
"use strict";
const fs = require("fs");
const { McapWriter, McapStreamReader } = require("@mcap/core");
const rosmsg = require("@foxglove/rosmsg");
const ros2ser = require("@foxglove/rosmsg2-serialization");
const { parseIDL } = require("@foxglove/omgidl-parser");
const idlser = require("@foxglove/omgidl-serialization");
const { CdrWriter } = require("@foxglove/cdr");

const IDL = `// written for runlab's reference test
module runlab_test { module msg {
  const long N = 3;
  enum Mode { IDLE, @value(5) RUN, STOP };
  struct Vec { double x; double y; float z; };
  typedef sequence<Vec> Vecs;
  struct Sample {
    boolean b; octet o; char c; int8 i8; uint8 u8; short s; unsigned short us; long l;
    unsigned long ul; long long ll; unsigned long long ull; float f; double d; string str;
    string<16> bstr; Mode mode; Vec v; Vec va[N]; Vecs vs; sequence<long, 5> ls;
    sequence<string> strs; double da[4]; sequence<Mode> modes; sequence<octet> bytes;
  };
  union Choice switch (Mode) { case IDLE: long l; case RUN: string s; default: double d; };
  struct Holder { Choice c; short after; };
};};
`;

const SEP = "=".repeat(80) + "\n";
const HEADER = "MSG: std_msgs/Header\n# Standard metadata\nbuiltin_interfaces/Time stamp\nstring frame_id\n";
const TIME = "MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n";
const POINT = "MSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n";
const QUAT = "MSG: geometry_msgs/Quaternion\nfloat64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n";
const POSE = "MSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n";
const VEC3 = "MSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n";

const SCHEMAS = {
  "geometry_msgs/msg/PoseStamped":
    "# A pose with a reference frame\nstd_msgs/Header header\nPose pose\n" +
    SEP + HEADER + SEP + TIME + SEP + POSE + SEP + POINT + SEP + QUAT,
  "geometry_msgs/msg/PoseWithCovarianceStamped":
    "std_msgs/Header header\nPoseWithCovariance pose\n" + SEP + HEADER + SEP + TIME + SEP +
    "MSG: geometry_msgs/PoseWithCovariance\nPose pose\nfloat64[36] covariance\n" + SEP + POSE +
    SEP + POINT + SEP + QUAT,
  "sensor_msgs/msg/PointCloud2":
    "std_msgs/Header header\nuint32 height\nuint32 width\nPointField[] fields\nbool is_bigendian\n" +
    "uint32 point_step\nuint32 row_step\nuint8[] data\nbool is_dense\n" + SEP + HEADER + SEP + TIME +
    SEP + "MSG: sensor_msgs/PointField\nuint8 INT8 = 1\nuint8 UINT8 = 2\nuint8 FLOAT32 = 7\n" +
    "string name\nuint32 offset\nuint8 datatype\nuint32 count\n",
  "tf2_msgs/msg/TFMessage":
    "geometry_msgs/TransformStamped[] transforms\n" + SEP +
    "MSG: geometry_msgs/TransformStamped\nstd_msgs/Header header\nstring child_frame_id\nTransform transform\n" +
    SEP + HEADER + SEP + TIME + SEP + "MSG: geometry_msgs/Transform\nVector3 translation\nQuaternion rotation\n" +
    SEP + VEC3 + SEP + QUAT,
  "runlab_test_msgs/msg/AllTypes":
    "bool b\nbyte y\nchar c\nint8 i8\nuint8 u8\nint16 i16\nuint16 u16\nint32 i32\nuint32 u32\n" +
    "int64 i64\nuint64 u64\nfloat32 f32\nfloat64 f64\nstring s\nstring<=8 bs\n" +
    "int32 CONST_A=5 # a constant\nstring CONST_S=hello # kept\n" +
    "float32[3] f32a\nint64[] i64s\nuint64[<=4] u64s\nbool[] bools\nstring[] strs\n" +
    "Inner[2] inner\nInner[<=3] inners\nEmpty empty\nfloat64[] f64s\nint16 with_default 7\n" + SEP +
    "MSG: runlab_test_msgs/Inner\nint8 a\nfloat64 d\nstring name\nuint16[] shorts\n" + SEP +
    "MSG: runlab_test_msgs/Empty\n",
};

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

const specials = [NaN, Infinity, -Infinity, -0, 0, 5e-324, 1.7976931348623157e308, 0.1, 1 / 3];
function mk(type, r, i) {
  const header = { stamp: { sec: Math.floor(r() * 2e9), nanosec: Math.floor(r() * 1e9) }, frame_id: "map" + i };
  const f = () => (r() - 0.5) * 1000;
  const pose = () => ({ position: { x: f(), y: f(), z: f() }, orientation: { x: 0, y: 0, z: r(), w: r() } });
  const str = (n) => Array.from({ length: Math.floor(r() * n) }, () => String.fromCharCode(32 + Math.floor(r() * 95))).join("") + (i % 3 === 0 ? "é\"\\\n€" : "");
  switch (type) {
    case "geometry_msgs/msg/PoseStamped":
      return { header, pose: pose() };
    case "geometry_msgs/msg/PoseWithCovarianceStamped":
      return { header, pose: { pose: pose(), covariance: Float64Array.from({ length: 36 }, (_, k) => (k === i % 36 ? specials[i % specials.length] : f())) } };
    case "sensor_msgs/msg/PointCloud2": {
      const n = 1 + Math.floor(r() * 20);
      return {
        header, height: 1, width: n,
        fields: ["x", "y", "z"].map((name, k) => ({ name, offset: 4 * k, datatype: 7, count: 1 })),
        is_bigendian: false, point_step: 12, row_step: 12 * n,
        data: Uint8Array.from({ length: 12 * n }, () => Math.floor(r() * 256)), is_dense: i % 2 === 0,
      };
    }
    case "tf2_msgs/msg/TFMessage":
      return {
        transforms: Array.from({ length: 1 + (i % 3) }, (_, k) => ({
          header, child_frame_id: "base" + k,
          transform: { translation: { x: f(), y: f(), z: f() }, rotation: { x: 0, y: 0, z: r(), w: r() } },
        })),
      };
    default: {
      const big = (lo, hi) => lo + BigInt(Math.floor(r() * 1e15)) * (hi - lo) / 1000000000000000n;
      return {
        b: i % 2 === 1, y: 255 - i, c: 65 + i, i8: -128 + i, u8: 255 - i, i16: -32768 + i, u16: 65535 - i,
        i32: -2147483648 + i, u32: 4294967295 - i,
        i64: i === 0 ? -9223372036854775808n : big(-9223372036854775808n, 9223372036854775807n),
        u64: i === 0 ? 18446744073709551615n : big(0n, 18446744073709551615n),
        f32: [0.1, 1e-45, 3.4028234663852886e38, -0, NaN, Infinity, 16777217, 1 / 3][i % 8],
        f64: specials[i % specials.length], s: str(30), bs: "12345678".slice(0, i % 9),
        f32a: Float32Array.from([f(), -0, 0.5]),
        i64s: BigInt64Array.from([-1n, 9007199254740993n, -9007199254740993n].slice(0, i % 4)),
        u64s: BigUint64Array.from([1n, 18446744073709551614n].slice(0, i % 3)),
        bools: [true, false, true].slice(0, i % 4), strs: ["", "a", str(10)].slice(0, (i + 1) % 4),
        inner: [0, 1].map((k) => ({ a: k - i, d: f(), name: str(5), shorts: Uint16Array.from([k, 65535]) })),
        inners: Array.from({ length: i % 4 }, (_, k) => ({ a: k, d: specials[(i + k) % specials.length], name: "", shorts: new Uint16Array(0) })),
        empty: {}, f64s: Float64Array.from({ length: i % 5 }, f), with_default: 7,
      };
    }
  }
}

class MemWritable {
  constructor() { this.chunks = []; this.pos = 0n; }
  position() { return this.pos; }
  async write(buf) { this.chunks.push(Buffer.from(buf)); this.pos += BigInt(buf.byteLength); }
}

async function makeIdl(out) {
  const w = new MemWritable();
  const writer = new McapWriter({ writable: w, useChunks: true, chunkSize: 4096 });
  await writer.start({ profile: "", library: "runlab msgdef_ts_ref" });
  const defs = parseIDL(IDL);
  const r = rng(777);
  const chan = async (name, topic) => {
    const schemaId = await writer.registerSchema({ name, encoding: "omgidl", data: Buffer.from(IDL) });
    return writer.registerChannel({ topic, schemaId, messageEncoding: "cdr", metadata: new Map() });
  };
  const sample = await chan("runlab_test::msg::Sample", "/sample");
  const holder = await chan("runlab_test::msg::Holder", "/holder");
  const mw = new idlser.MessageWriter("runlab_test::msg::Sample", defs);
  let seq = 0;
  const add = (channelId, data) => {
    const t = 1700000000000000000n + BigInt(seq) * 1000n;
    return writer.addMessage({ channelId, sequence: seq++, logTime: t, publishTime: t, data });
  };
  const f = () => (r() - 0.5) * 1e6;
  const ascii = (n) => Array.from({ length: n }, () => String.fromCharCode(32 + Math.floor(r() * 95))).join("");
  const vec = (i) => ({ x: f(), y: specials[i % specials.length], z: Math.fround(f()) });
  for (let i = 0; i < 30; i++) {
    await add(sample, mw.writeMessage({
      b: i % 2 === 0, o: (i * 37) & 255, c: 32 + i, i8: -128 + i, u8: 255 - i, s: -32768 + i * 99,
      us: 65535 - i, l: -2147483648 + i * 12345, ul: 4294967295 - i, ll: -9223372036854775808n + BigInt(i) * 999999999999n,
      ull: 18446744073709551615n - BigInt(i) * 7777777777777n, f: [0.1, -0, 1e-45, 3.4028234663852886e38, NaN][i % 5],
      d: specials[i % specials.length], str: ascii(i), bstr: ascii(i % 17), mode: [0, 5, 6][i % 3],
      v: vec(i), va: [vec(i + 1), vec(i + 2), vec(i + 3)], vs: Array.from({ length: i % 4 }, (_, k) => vec(i + k)),
      ls: Int32Array.from({ length: i % 6 }, (_, k) => k * 1000 - i), strs: Array.from({ length: i % 3 }, () => ascii(5)),
      da: Float64Array.from([f(), f(), -0, specials[(i + 1) % specials.length]]),
      modes: Uint32Array.from({ length: i % 4 }, (_, k) => [0, 5, 6][(i + k) % 3]),
      bytes: Uint8Array.from({ length: i % 7 }, () => Math.floor(r() * 256)),
    }));
  }
  for (let i = 0; i < 9; i++) { // unions: the three cases, each byte order
    const cw = new CdrWriter({ kind: i % 2 ? 0 /* CDR_BE */ : 1 /* CDR_LE */ });
    const d = [0, 5, 6, 7][i % 4];
    cw.uint32(d);
    if (d === 0) cw.int32(-i);
    else if (d === 5) cw.string(ascii(i));
    else cw.float64(f());
    cw.int16(i - 4);
    await add(holder, cw.data);
  }
  await writer.end();
  fs.writeFileSync(out, Buffer.concat(w.chunks));
  console.log(`wrote ${seq} messages to ${out}`);
}

async function makeRos2(out) {
  const w = new MemWritable();
  const writer = new McapWriter({ writable: w, useChunks: true, chunkSize: 4096 });
  await writer.start({ profile: "ros2", library: "runlab msgdef_ts_ref" });
  const r = rng(12345);
  let seq = 0;
  const chans = [];
  for (const [name, text] of Object.entries(SCHEMAS)) {
    const schemaId = await writer.registerSchema({ name, encoding: "ros2msg", data: Buffer.from(text) });
    const topic = "/" + name.split("/").pop().toLowerCase();
    const channelId = await writer.registerChannel({ topic, schemaId, messageEncoding: "cdr", metadata: new Map() });
    chans.push({ name, channelId, mw: new ros2ser.MessageWriter(rosmsg.parse(text, { ros2: true })) });
  }
  for (let i = 0; i < 24; i++)
    for (const c of chans) {
      const data = c.mw.writeMessage(mk(c.name, r, i));
      const t = BigInt(1700000000000000000n) + BigInt(seq) * 1000n;
      await writer.addMessage({ channelId: c.channelId, sequence: seq++, logTime: t, publishTime: t, data });
    }
  await writer.end();
  fs.writeFileSync(out, Buffer.concat(w.chunks));
  console.log(`wrote ${seq} messages to ${out}`);
}

// ---- comparison --------------------------------------------------------------------------

// JSON with integers as BigInt (exact) and other numbers as Number.
function parseExact(text) {
  let i = 0;
  const ws = () => { while (" \t\n\r".includes(text[i])) i++; };
  function value() {
    ws();
    const c = text[i];
    if (c === "{") {
      i++; const o = {}; ws();
      if (text[i] === "}") { i++; return o; }
      for (;;) { ws(); const k = str(); ws(); i++; o[k] = value(); ws(); if (text[i++] === "}") return o; }
    }
    if (c === "[") {
      i++; const a = []; ws();
      if (text[i] === "]") { i++; return a; }
      for (;;) { a.push(value()); ws(); if (text[i++] === "]") return a; }
    }
    if (c === '"') return str();
    const m = /^-?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(text.slice(i, i + 400));
    if (m) { i += m[0].length; return m[1] || m[2] ? Number(m[0]) : BigInt(m[0]); }
    for (const [w, v] of [["true", true], ["false", false], ["null", null]])
      if (text.startsWith(w, i)) { i += w.length; return v; }
    throw new Error(`bad JSON at ${i}`);
  }
  function str() {
    const start = i++;
    while (text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i));
  }
  return value();
}

const INTS = new Set(["int8", "uint8", "int16", "uint16", "int32", "uint32", "byte", "char", "octet", "int64", "uint64"]);
function num(run) {
  if (run === "NaN") return NaN;
  if (run === "Infinity") return Infinity;
  if (run === "-Infinity") return -Infinity;
  return typeof run === "bigint" ? Number(run) : run;
}

function comparePrim(type, ref, run, path) {
  if (type === "time" || type === "duration") { // builtin_interfaces/Time, Duration
    if (run === null || typeof run !== "object" || Object.keys(run).join() !== "sec,nanosec") return `${path}: runlab ${JSON.stringify(run)}`;
    return comparePrim("int32", ref.sec, run.sec, `${path}.sec`) || comparePrim("uint32", ref.nanosec, run.nanosec, `${path}.nanosec`);
  }
  if (type === "bool" || type === "string" || type === "wstring") {
    if (ref !== run) return `${path}: reference ${JSON.stringify(ref)}, runlab ${JSON.stringify(run)}`;
    return null;
  }
  if (INTS.has(type)) {
    if (typeof run !== "bigint" || BigInt(ref) !== run) return `${path}: reference ${ref}, runlab ${run}`;
    return null;
  }
  const v = num(run);
  const same = type === "float32" ? Object.is(Math.fround(v), ref) : Object.is(v, ref);
  if (typeof v !== "number" || !same) return `${path}: ${type} reference ${ref}, runlab ${run}`;
  return null;
}

// Walks an IDL definition (from @foxglove/omgidl-parser) over the two values.
function compareIdl(defs, typeName, ref, run, path) {
  const def = defs.get(typeName);
  if (run === null || typeof run !== "object" || Array.isArray(run)) return `${path}: runlab has ${JSON.stringify(run)}, not an object`;
  const one = (f, rv, uv, p) => (f.isComplex ? compareIdl(defs, f.type, rv, uv, p) : comparePrim(f.type, rv, uv, p));
  if (def.aggregatedKind === "union") {
    const rk = Object.keys(ref), uk = Object.keys(run).filter((k) => k !== "_d");
    if (!("_d" in run) || rk.join() !== uk.join()) return `${path}: union keys ${rk}, runlab ${Object.keys(run)}`;
    if (!rk.length) return null;
    const c = def.cases.find((k) => k.type.name === rk[0]);
    const f = c ? c.type : def.defaultCase;
    if (c && !c.predicates.some((v) => BigInt(v) === run._d)) return `${path}._d: ${run._d} does not select ${rk[0]}`;
    return one(f, ref[rk[0]], run[rk[0]], `${path}.${rk[0]}`);
  }
  const fields = def.definitions.filter((f) => !f.isConstant);
  const keys = Object.keys(run);
  if (keys.join() !== fields.map((f) => f.name).join()) return `${path}: runlab keys ${keys}, schema ${fields.map((f) => f.name)}`;
  for (const f of fields) {
    const p = path ? `${path}.${f.name}` : f.name;
    if (f.isArray) {
      const rv = Array.from(ref[f.name]), uv = run[f.name];
      if (!Array.isArray(uv) || uv.length !== rv.length) return `${p}: length ${rv.length}, runlab ${JSON.stringify(uv)}`;
      for (let k = 0; k < rv.length; k++) { const e = one(f, rv[k], uv[k], `${p}[${k}]`); if (e) return e; }
    } else {
      const e = one(f, ref[f.name], run[f.name], p);
      if (e) return e;
    }
  }
  return null;
}

// Walks a ros2msg definition (from @foxglove/rosmsg) over the reference and runlab values.
function compareMsg(defs, typeName, ref, run, path) {
  const def = defs.get(typeName);
  if (run === null || typeof run !== "object" || Array.isArray(run)) return `${path}: runlab has ${JSON.stringify(run)}, not an object`;
  const fields = def.definitions.filter((f) => !f.isConstant);
  const keys = Object.keys(run);
  if (keys.join() !== fields.map((f) => f.name).join()) return `${path}: runlab keys ${keys}, schema ${fields.map((f) => f.name)}`;
  for (const f of fields) {
    const p = path ? `${path}.${f.name}` : f.name;
    const one = (rv, uv, pp) => (f.isComplex ? compareMsg(defs, f.type, rv, uv, pp) : comparePrim(f.type, rv, uv, pp));
    if (f.isArray) {
      const rv = Array.from(ref[f.name]);
      const uv = run[f.name];
      if (!Array.isArray(uv) || uv.length !== rv.length) return `${p}: length ${rv.length}, runlab ${JSON.stringify(uv)}`;
      for (let k = 0; k < rv.length; k++) { const e = one(rv[k], uv[k], `${p}[${k}]`); if (e) return e; }
    } else {
      const e = one(ref[f.name], run[f.name], p);
      if (e) return e;
    }
  }
  return null;
}

async function compare(file, ndjson) {
  const zstd = require("@foxglove/wasm-zstd");
  const lz4 = require("@foxglove/wasm-lz4");
  await zstd.isLoaded;
  await lz4.isLoaded;
  const decompressHandlers = {
    zstd: (buf, size) => zstd.decompress(buf, Number(size)),
    lz4: (buf, size) => lz4(buf, Number(size)),
  };
  const stream = new McapStreamReader({ decompressHandlers, validateCrcs: true });
  stream.append(fs.readFileSync(file));
  const schemas = new Map(), channels = new Map(), readers = new Map();
  const lines = new Map();
  for (const line of fs.readFileSync(ndjson, "utf8").split("\n")) {
    if (!line) continue;
    const o = parseExact(line);
    lines.set(Number(o.sequence), o);
  }
  let n = 0;
  for (let rec; (rec = stream.nextRecord()); ) {
    if (rec.type === "Schema") schemas.set(rec.id, rec);
    if (rec.type === "Channel") channels.set(rec.id, rec);
    if (rec.type !== "Message") continue;
    const ch = channels.get(rec.channelId), sc = schemas.get(ch.schemaId);
    if (!readers.has(sc.id) && sc.encoding === "omgidl") {
      const defs = parseIDL(Buffer.from(sc.data).toString());
      readers.set(sc.id, { reader: new idlser.MessageReader(sc.name, defs), defs: new Map(defs.map((d) => [d.name, d])), root: sc.name, idl: true });
    }
    if (!readers.has(sc.id)) {
      const text = Buffer.from(sc.data).toString();
      const defs = rosmsg.parse(text, { ros2: true });
      const byName = new Map(defs.map((d) => [d.name, d]));
      byName.set(sc.name.replace("/msg/", "/"), defs[0]);
      readers.set(sc.id, { reader: new ros2ser.MessageReader(defs), defs: byName, root: sc.name.replace("/msg/", "/") });
    }
    const { reader, defs, root, idl } = readers.get(sc.id);
    const ref = reader.readMessage(rec.data);
    const line = lines.get(rec.sequence);
    if (!line) { console.log(`FAIL ${file}: runlab printed no line for sequence ${rec.sequence}`); process.exit(1); }
    if (!("message" in line)) { console.log(`FAIL ${file}: sequence ${rec.sequence} (${ch.topic}) not decoded: ${line.decode_error || "data_base64"}`); process.exit(1); }
    const err = (idl ? compareIdl : compareMsg)(defs, root, ref, line.message, "");
    if (err) { console.log(`FAIL ${file}: sequence ${rec.sequence} (${ch.topic}): ${err}`); process.exit(1); }
    n++;
  }
  if (n !== lines.size) { console.log(`FAIL ${file}: ${n} messages in the file, ${lines.size} lines from runlab`); process.exit(1); }
  console.log(`${file}: ${n} messages equal to the reference decoder`);
}

const [mode, a, b] = process.argv.slice(2);
if (mode === "make-ros2") makeRos2(a).catch((e) => { console.log(`FAIL ${e.stack}`); process.exit(1); });
else if (mode === "make-idl") makeIdl(a).catch((e) => { console.log(`FAIL ${e.stack}`); process.exit(1); });
else if (mode === "compare") compare(a, b).catch((e) => { console.log(`FAIL ${e.stack}`); process.exit(1); });
else { console.log("usage: msgdef_ts_ref.cjs make-ros2 OUT | compare FILE NDJSON"); process.exit(2); }
