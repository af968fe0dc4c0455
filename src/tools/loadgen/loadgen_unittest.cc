/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/loadgen/loadgen.h"

#include <gtest/gtest.h>

#include <string>

#include "protos/perfetto/trace/trace.pb.h"

namespace ringtrace {
namespace loadgen {
namespace {

std::string MakeTrace() {
  perfetto::protos::Trace trace;
  for (int i = 0; i < 5; ++i) {
    perfetto::protos::TracePacket* p = trace.add_packet();
    p->set_timestamp(1000 + static_cast<uint64_t>(i));
    p->mutable_track_event()->set_counter_value(i);
  }
  trace.add_packet()->mutable_track_descriptor()->set_uuid(42);
  trace.add_packet()->mutable_trace_packet_defaults()->set_timestamp_clock_id(
      64);
  perfetto::protos::TraceStats* first =
      trace.add_packet()->mutable_trace_stats();
  first->set_ringtrace_packets_dropped_by_producers(3);
  perfetto::protos::TraceStats* last =
      trace.add_packet()->mutable_trace_stats();
  last->set_ringtrace_packets_dropped_by_producers(11);
  last->add_buffer_stats()->set_chunks_overwritten(2);
  last->add_buffer_stats()->set_chunks_overwritten(5);
  last->mutable_buffer_stats(1)->set_chunks_discarded(4);
  last->mutable_buffer_stats(1)->set_bytes_overwritten(4096);
  last->set_ringtrace_packets_overwritten(40);
  last->set_ringtrace_packets_discarded(13);
  return trace.SerializeAsString();
}

TEST(LoadgenCountTraceTest, CountsTrackEventsAndTheLastTraceStats) {
  TraceCount count;
  ASSERT_TRUE(CountTraceBytes(MakeTrace(), &count).ok());
  EXPECT_EQ(count.packets, 9u);
  EXPECT_EQ(count.track_events, 5u);
  EXPECT_EQ(count.track_descriptors, 1u);
  EXPECT_EQ(count.clear_packets, 1u);
  EXPECT_EQ(count.trace_stats_packets, 2u);
  EXPECT_EQ(count.packets_dropped_by_producers, 11u);
  EXPECT_EQ(count.chunks_overwritten, 7u);
  EXPECT_EQ(count.chunks_discarded, 4u);
  EXPECT_EQ(count.bytes_overwritten, 4096u);
  EXPECT_EQ(count.packets_overwritten, 40u);
  EXPECT_EQ(count.packets_discarded, 13u);
}

TEST(LoadgenCountTraceTest, EmptyTraceCountsNothing) {
  TraceCount count;
  ASSERT_TRUE(CountTraceBytes(std::string(), &count).ok());
  EXPECT_EQ(count.packets, 0u);
  EXPECT_EQ(count.track_events, 0u);
}

TEST(LoadgenCountTraceTest, EveryTruncationFailsCleanly) {
  const std::string trace = MakeTrace();
  // Cutting the file anywhere but at a packet boundary must fail, never
  // crash or read past the end.
  size_t failures = 0;
  for (size_t n = 1; n < trace.size(); ++n) {
    TraceCount count;
    if (!CountTraceBytes(trace.substr(0, n), &count).ok())
      ++failures;
    EXPECT_LE(count.track_events, 5u);
  }
  EXPECT_GT(failures, trace.size() / 2);
}

TEST(LoadgenCountTraceTest, MalformedPacketFails) {
  // Trace.packet of 2 bytes holding a length-delimited field longer than
  // the packet.
  const std::string bad("\x0a\x02\x5a\x05", 4);
  TraceCount count;
  EXPECT_FALSE(CountTraceBytes(bad, &count).ok());
}

}  // namespace
}  // namespace loadgen
}  // namespace ringtrace
