/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/test/tagged_packets.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.rtzero.h"

namespace ringtrace {
namespace test {

void WriteTagged(shm_ring::TraceWriterV2* w,
                 const std::string& tag,
                 uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    auto handle = w->NewTracePacket();
    perfetto::protos::rtzero::TracePacket packet(handle);
    packet.set_for_testing().set_str(tag + std::to_string(i));
  }
  w->Flush();
}

uint64_t CountTagged(const std::string& path, const std::string& tag) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::stringstream bytes;
  bytes << in.rdbuf();
  perfetto::protos::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes.str())) << path;
  uint64_t n = 0;
  for (const perfetto::protos::TracePacket& p : trace.packet()) {
    if (p.has_for_testing() && p.trusted_pid() == getpid() &&
        p.for_testing().str().rfind(tag, 0) == 0) {
      ++n;
    }
  }
  return n;
}

}  // namespace test
}  // namespace ringtrace
