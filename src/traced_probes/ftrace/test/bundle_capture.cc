/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace/test/bundle_capture.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "src/tracing/core/encoding/test/packet_capture.h"

namespace ringtrace {
namespace ftrace {
namespace test {
namespace {

namespace rt = perfetto::protos::rtzero;

bool CapturePacket(encoding::PacketCapture* capture,
                   perfetto::protos::TracePacket* packet) {
  uint64_t lost = 0;
  const std::vector<std::string> grouped = capture->Drain(&lost);
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(grouped.size(), 1u);
  if (grouped.size() != 1)
    return false;
  std::string flat;
  EXPECT_TRUE(encoding::PacketCapture::Ungroup(grouped[0], &flat));
  const bool parsed = packet->ParseFromString(flat);
  EXPECT_TRUE(parsed);
  return parsed;
}

}  // namespace

bool CaptureBundle(const std::function<void(FtraceEventBundleWriter*)>& fill,
                   perfetto::protos::FtraceEventBundle* out,
                   uint32_t ring_chunks) {
  encoding::PacketCapture capture(4096, ring_chunks);
  {
    auto handle = capture.writer()->NewTracePacket();
    rt::TracePacket packet(handle);
    packet.set_timestamp(1);
    rt::FtraceEventBundle bundle = packet.set_ftrace_events();
    fill(&bundle);
  }
  perfetto::protos::TracePacket packet;
  if (!CapturePacket(&capture, &packet))
    return false;
  EXPECT_TRUE(packet.has_ftrace_events());
  *out = packet.ftrace_events();
  return packet.has_ftrace_events();
}

bool CaptureStats(const std::function<void(FtraceStatsWriter*)>& fill,
                  perfetto::protos::FtraceStats* out) {
  encoding::PacketCapture capture;
  {
    auto handle = capture.writer()->NewTracePacket();
    rt::TracePacket packet(handle);
    rt::FtraceStats stats = packet.set_ftrace_stats();
    fill(&stats);
  }
  perfetto::protos::TracePacket packet;
  if (!CapturePacket(&capture, &packet))
    return false;
  EXPECT_TRUE(packet.has_ftrace_stats());
  *out = packet.ftrace_stats();
  return packet.has_ftrace_stats();
}

}  // namespace test
}  // namespace ftrace
}  // namespace ringtrace
