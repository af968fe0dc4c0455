/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Pins the wire numbers that make our trace files readable by Perfetto tools.
// A field renumbered by mistake fails here, not in the Perfetto UI.

#include <gtest/gtest.h>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"

namespace ringtrace {
namespace {

using perfetto::protos::TracePacket;

int FieldNumber(const google::protobuf::Descriptor* d, const char* name) {
  const google::protobuf::FieldDescriptor* f = d->FindFieldByName(name);
  return f ? f->number() : -1;
}

TEST(TraceProtoTest, TracePacketFieldNumbersMatchPerfetto) {
  const auto* d = TracePacket::descriptor();
  EXPECT_EQ(FieldNumber(d, "timestamp"), 8);
  EXPECT_EQ(FieldNumber(d, "timestamp_clock_id"), 58);
  EXPECT_EQ(FieldNumber(d, "trusted_uid"), 3);
  EXPECT_EQ(FieldNumber(d, "trusted_pid"), 79);
  EXPECT_EQ(FieldNumber(d, "trusted_packet_sequence_id"), 10);
  EXPECT_EQ(FieldNumber(d, "sequence_flags"), 13);
  EXPECT_EQ(FieldNumber(d, "previous_packet_dropped"), 42);
  EXPECT_EQ(FieldNumber(d, "first_packet_on_sequence"), 87);
  EXPECT_EQ(FieldNumber(d, "track_event"), 11);
  EXPECT_EQ(FieldNumber(d, "track_descriptor"), 60);
  EXPECT_EQ(FieldNumber(d, "clock_snapshot"), 6);
  EXPECT_EQ(FieldNumber(d, "trace_config"), 33);
  EXPECT_EQ(FieldNumber(d, "trace_stats"), 35);
  EXPECT_EQ(FieldNumber(d, "for_testing"), 900);
  EXPECT_EQ(FieldNumber(perfetto::protos::Trace::descriptor(), "packet"), 1);
  EXPECT_EQ(FieldNumber(perfetto::protos::TrackEvent::descriptor(), "name"),
            23);
  EXPECT_EQ(FieldNumber(perfetto::protos::TrackEvent::descriptor(), "type"), 9);
  EXPECT_EQ(TracePacket::DATA_LOSS_SMB_FULL, 256);
  EXPECT_EQ(perfetto::protos::TraceConfig::BufferConfig::DISCARD, 2);
}

TEST(TraceProtoTest, RoundTripsThroughTrace) {
  perfetto::protos::Trace trace;
  TracePacket* p = trace.add_packet();
  p->set_timestamp(1234);
  p->set_previous_packet_dropped(TracePacket::DATA_LOSS_PRESENT |
                                 TracePacket::DATA_LOSS_OVERWRITE);
  p->mutable_track_event()->set_name("slice");
  p->mutable_track_event()->set_type(
      perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN);
  std::string bytes = trace.SerializeAsString();
  // Field 1, wire type 2: the first byte of every trace file.
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0x0a);
  perfetto::protos::Trace parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  ASSERT_EQ(parsed.packet_size(), 1);
  EXPECT_EQ(parsed.packet(0).timestamp(), 1234u);
  EXPECT_EQ(parsed.packet(0).previous_packet_dropped(), 65u);
  EXPECT_EQ(parsed.packet(0).track_event().name(), "slice");
}

}  // namespace
}  // namespace ringtrace
