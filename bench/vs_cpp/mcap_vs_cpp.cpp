// One timed MCAP operation, by runlab or by the official C++ MCAP library, for the paired
// comparison that bench/vs_cpp/run.sh makes (issue 36). Not built by CMake: Debian packages
// no C++ MCAP library, so run.sh compiles this against a copy the user points it at.
// Usage: mcap_vs_cpp OP IMPL PAYLOAD SIZE COUNT COMP [LEVEL]; prints "cpu_s wall_s maxrss_kb".
//   OP write|read; IMPL rl (CRCs checked, as by default) | rlnc (no CRCs) | cpp;
//   PAYLOAD random | sensor (half counters, half noise) | pattern (compressible);
//   COMP none|zstd|lz4; LEVEL (C++ only) default|fast|fastest; the file is $CMP_FILE.
#define MCAP_IMPLEMENTATION
#include <mcap/writer.hpp>
#include <mcap/reader.hpp>

extern "C" {
#include "runlab/mcap.h"
}
#include <sys/resource.h>
#include <time.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static double cpu() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

static void fill(uint8_t* p, size_t n, uint64_t seed, const char* kind) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++) {
    s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
    uint8_t rnd = (uint8_t)((s * 0x2545F4914F6CDD1Dull) >> 56);
    if (!strcmp(kind, "random")) p[i] = rnd;
    else if (!strcmp(kind, "sensor")) p[i] = (i & 4) ? rnd : (uint8_t)(i >> 9);
    else p[i] = (uint8_t)((i * 7 + seed) % 61);  // pattern: highly compressible
  }
}

int main(int argc, char** argv) {
  if (argc < 7) { fprintf(stderr, "usage: mcap_vs_cpp write|read rl|rlnc|cpp random|sensor|pattern SIZE COUNT none|zstd|lz4 [default|fast|fastest]\n"); return 2; }
  std::string op = argv[1], impl = argv[2], kind = argv[3], comp = argv[6];
  size_t size = strtoull(argv[4], 0, 10), count = strtoull(argv[5], 0, 10);
  std::string level = argc > 7 ? argv[7] : "default";
  const char* path = getenv("CMP_FILE") ? getenv("CMP_FILE") : "/tmp/cmp.mcap";
  size_t npool = size >= 65536 ? 8 : 4096;
  std::vector<uint8_t> pool(op == "write" ? npool * size : 0);
  if (op == "write") for (size_t i = 0; i < npool; i++) fill(pool.data() + i * size, size, i + 1, kind.c_str());
  const char* topics[4] = {"/camera", "/lidar", "/imu", "/odom"};
  double c0 = cpu(), t0 = now();
  uint64_t sum = 0, n = 0;
  if (op == "write" && impl == "cpp") {
    mcap::McapWriterOptions o("ros2");
    o.compression = comp == "zstd" ? mcap::Compression::Zstd : comp == "lz4" ? mcap::Compression::Lz4 : mcap::Compression::None;
    o.compressionLevel = level == "fastest" ? mcap::CompressionLevel::Fastest : level == "fast" ? mcap::CompressionLevel::Fast : mcap::CompressionLevel::Default;
    mcap::McapWriter w;
    if (!w.open(path, o).ok()) return 1;
    mcap::Schema s("bench/Blob", "ros2msg", "uint8[] data");
    w.addSchema(s);
    std::vector<mcap::ChannelId> ids;
    for (int i = 0; i < 4; i++) { mcap::Channel ch(topics[i], "cdr", s.id); w.addChannel(ch); ids.push_back(ch.id); }
    mcap::Message m;
    for (size_t i = 0; i < count; i++) {
      m.channelId = ids[i % 4]; m.sequence = (uint32_t)i;
      m.logTime = m.publishTime = 1700000000ull + i * 1000000ull;
      m.data = (const std::byte*)(pool.data() + (i % npool) * size); m.dataSize = size;
      if (!w.write(m).ok()) return 1;
    }
    w.close();
  } else if (op == "write") {
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.compression = comp == "zstd" ? RL_MCAP_COMPRESSION_ZSTD : comp == "lz4" ? RL_MCAP_COMPRESSION_LZ4 : RL_MCAP_COMPRESSION_NONE;
    rl_mcap_writer* w = NULL;
    if (rl_mcap_writer_open_path(&w, path, &o) < 0) return 1;
    rl_mcap_schema s = {1, {(const uint8_t*)"bench/Blob", 10}, {(const uint8_t*)"ros2msg", 7}, {(const uint8_t*)"uint8[] data", 12}};
    rl_mcap_writer_add_schema(w, &s);
    for (uint16_t i = 0; i < 4; i++) {
      rl_mcap_channel ch; memset(&ch, 0, sizeof ch);
      ch.id = i + 1; ch.schema_id = 1; ch.topic.data = (const uint8_t*)topics[i]; ch.topic.len = strlen(topics[i]);
      ch.message_encoding.data = (const uint8_t*)"cdr"; ch.message_encoding.len = 3;
      rl_mcap_writer_add_channel(w, &ch);
    }
    rl_mcap_message m; memset(&m, 0, sizeof m);
    for (size_t i = 0; i < count; i++) {
      m.channel_id = (uint16_t)(1 + i % 4); m.sequence = (uint32_t)i;
      m.log_time = m.publish_time = 1700000000ull + i * 1000000ull;
      m.data.data = pool.data() + (i % npool) * size; m.data.len = size;
      if (rl_mcap_writer_add_message(w, &m) < 0) return 1;
    }
    if (rl_mcap_writer_close(w) < 0) return 1;
  } else if (impl == "cpp") {
    mcap::McapReader r;
    if (!r.open(path).ok()) return 1;
    mcap::ReadMessageOptions ro;
    ro.readOrder = mcap::ReadMessageOptions::ReadOrder::FileOrder;
    auto onProblem = [](const mcap::Status& st) { fprintf(stderr, "problem %s\n", st.message.c_str()); };
    for (const auto& mv : r.readMessages(onProblem, ro)) { n++; sum += (uint8_t)mv.message.data[0]; }
    r.close();
  } else {
    rl_mcap_reader* r = NULL;
    rl_mcap_reader_options ro; rl_mcap_reader_options_default(&ro);
    if (impl == "rlnc") ro.verify_crcs = 0;
    if (rl_mcap_reader_open(&r, path, &ro) < 0) return 1;
    rl_mcap_record rec; int rc;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1)
      if (rec.opcode == RL_MCAP_OP_MESSAGE) { n++; sum += rec.u.message.data.data[0]; }
    if (rc < 0) { fprintf(stderr, "rl read error\n"); return 1; }
    rl_mcap_reader_close(r);
  }
  double c = cpu() - c0, t = now() - t0;
  rusage u; getrusage(RUSAGE_SELF, &u);
  if (op == "read" && n != count) { fprintf(stderr, "read %llu of %zu\n", (unsigned long long)n, count); return 1; }
  printf("%.4f %.4f %ld\n", c, t, u.ru_maxrss);
  if (sum == 1) fputc(' ', stderr); // keeps the payload reads from being optimised away
  return 0;
}
