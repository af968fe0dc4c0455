/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The generated typed writers of protos/perfetto/trace (trace_packet.rtzero.h)
// written through a real TraceWriterV2, read back through the Ungrouper and
// parsed with libprotobuf, field by field; and byte-identical to the same
// packet written with the untyped Message appenders.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "src/tracing/core/encoding/test/packet_capture.h"

namespace ringtrace {
namespace encoding {
namespace {

namespace pb = perfetto::protos;
namespace rt = perfetto::protos::rtzero;

// The generated constants equal libprotobuf's for the same fields (both come
// from the .proto; a generator bug would make them differ).
static_assert(rt::TracePacket::kTimestampFieldNumber ==
              pb::TracePacket::kTimestampFieldNumber);
static_assert(rt::TracePacket::kTrackEventFieldNumber ==
              pb::TracePacket::kTrackEventFieldNumber);
static_assert(rt::TracePacket::kForTestingFieldNumber ==
              pb::TracePacket::kForTestingFieldNumber);
static_assert(rt::TracePacket::kTrustedPidFieldNumber ==
              pb::TracePacket::kTrustedPidFieldNumber);
static_assert(rt::TrackEvent::kFlowIdsFieldNumber ==
              pb::TrackEvent::kFlowIdsFieldNumber);
static_assert(rt::TrackEvent::kDoubleCounterValueFieldNumber ==
              pb::TrackEvent::kDoubleCounterValueFieldNumber);
static_assert(rt::DebugAnnotation::kPointerValueFieldNumber ==
              pb::DebugAnnotation::kPointerValueFieldNumber);
static_assert(rt::TrackDescriptor::kThreadFieldNumber ==
              pb::TrackDescriptor::kThreadFieldNumber);
static_assert(rt::ClockSnapshot::Clock::kTimestampFieldNumber ==
              pb::ClockSnapshot::Clock::kTimestampFieldNumber);
static_assert(static_cast<int>(rt::TrackEvent::Type::TYPE_COUNTER) ==
              pb::TrackEvent::TYPE_COUNTER);
static_assert(
    static_cast<int>(rt::TracePacket::DataLossReason::DATA_LOSS_SMB_FULL) ==
    pb::TracePacket::DATA_LOSS_SMB_FULL);

// Drains |capture| and parses every packet with libprotobuf.
std::vector<pb::TracePacket> ReadPackets(PacketCapture* capture) {
  uint64_t lost = 0;
  std::vector<pb::TracePacket> out;
  for (const std::string& grouped : capture->Drain(&lost)) {
    std::string flat;
    EXPECT_TRUE(PacketCapture::Ungroup(grouped, &flat));
    pb::TracePacket packet;
    EXPECT_TRUE(packet.ParseFromString(flat));
    out.push_back(packet);
  }
  EXPECT_EQ(lost, 0u);
  return out;
}

// One debug annotation of each value kind: bool, uint, int, double, string
// (with a NUL inside) and pointer.
void AddOneAnnotationOfEachKind(rt::TrackEvent* event) {
  rt::DebugAnnotation a = event->add_debug_annotations();
  a.set_name("b");
  a.set_bool_value(true);
  a = event->add_debug_annotations();
  a.set_name("u");
  a.set_uint_value(~0ull);
  a = event->add_debug_annotations();
  a.set_name("i");
  a.set_int_value(-5);
  a = event->add_debug_annotations();
  a.set_name("d");
  a.set_double_value(-2.5);
  a = event->add_debug_annotations();
  a.set_name("s");
  a.set_string_value(std::string("with\0nul", 8));
  a = event->add_debug_annotations();
  a.set_name("p");
  a.set_pointer_value(0x7fff12345678ull);
}

void ExpectOneAnnotationOfEachKind(const pb::TrackEvent& e) {
  ASSERT_EQ(e.debug_annotations_size(), 6);
  EXPECT_EQ(e.debug_annotations(0).name(), "b");
  EXPECT_TRUE(e.debug_annotations(0).has_bool_value());
  EXPECT_TRUE(e.debug_annotations(0).bool_value());
  EXPECT_EQ(e.debug_annotations(1).name(), "u");
  EXPECT_EQ(e.debug_annotations(1).uint_value(), ~0ull);
  EXPECT_EQ(e.debug_annotations(2).name(), "i");
  EXPECT_EQ(e.debug_annotations(2).int_value(), -5);
  EXPECT_EQ(e.debug_annotations(3).name(), "d");
  EXPECT_EQ(e.debug_annotations(3).double_value(), -2.5);
  EXPECT_EQ(e.debug_annotations(4).name(), "s");
  EXPECT_EQ(e.debug_annotations(4).string_value(), std::string("with\0nul", 8));
  EXPECT_EQ(e.debug_annotations(5).name(), "p");
  EXPECT_EQ(e.debug_annotations(5).pointer_value(), 0x7fff12345678ull);
}

TEST(TypedWriterTest, TrackEventRoundTrip) {
  PacketCapture capture;
  {
    auto handle = capture.writer()->NewTracePacket();
    rt::TracePacket packet(handle.get());
    packet.set_timestamp(123456789012345ull);
    packet.set_sequence_flags(static_cast<uint32_t>(
        rt::TracePacket::SequenceFlags::SEQ_NEEDS_INCREMENTAL_STATE));
    rt::TrackEvent event = packet.set_track_event();
    event.set_type(rt::TrackEvent::Type::TYPE_SLICE_BEGIN);
    event.set_name("frame");
    event.add_categories("gfx");
    event.add_categories("input,latency");
    event.add_category_iids(7);
    event.add_category_iids(1ull << 40);
    event.set_track_uuid(0xfedcba9876543210ull);
    AddOneAnnotationOfEachKind(&event);
    event.add_flow_ids(1);
    event.add_flow_ids(0xffffffffffffffffull);
    event.add_terminating_flow_ids(42);
    // A packet field after the nested message closes it.
    packet.set_trusted_pid(4321);
  }
  {
    auto handle = capture.writer()->NewTracePacket();
    rt::TracePacket packet(handle.get());
    packet.set_timestamp(2);
    rt::TrackEvent event = packet.set_track_event();
    event.set_type(rt::TrackEvent::Type::TYPE_COUNTER);
    event.set_counter_value(-9000000000ll);
  }
  {
    auto handle = capture.writer()->NewTracePacket();
    rt::TrackEvent event = rt::TracePacket(handle.get()).set_track_event();
    event.set_type(rt::TrackEvent::Type::TYPE_COUNTER);
    event.set_name_iid(3);
    event.set_double_counter_value(0.125);
  }

  const std::vector<pb::TracePacket> packets = ReadPackets(&capture);
  ASSERT_EQ(packets.size(), 3u);

  const pb::TracePacket& p0 = packets[0];
  EXPECT_EQ(p0.timestamp(), 123456789012345ull);
  EXPECT_EQ(p0.sequence_flags(), 2u);
  EXPECT_EQ(p0.trusted_pid(), 4321);
  ASSERT_TRUE(p0.has_track_event());
  const pb::TrackEvent& e0 = p0.track_event();
  EXPECT_EQ(e0.type(), pb::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(e0.name(), "frame");
  ASSERT_EQ(e0.categories_size(), 2);
  EXPECT_EQ(e0.categories(0), "gfx");
  EXPECT_EQ(e0.categories(1), "input,latency");
  ASSERT_EQ(e0.category_iids_size(), 2);
  EXPECT_EQ(e0.category_iids(0), 7u);
  EXPECT_EQ(e0.category_iids(1), 1ull << 40);
  EXPECT_EQ(e0.track_uuid(), 0xfedcba9876543210ull);
  ExpectOneAnnotationOfEachKind(e0);
  ASSERT_EQ(e0.flow_ids_size(), 2);
  EXPECT_EQ(e0.flow_ids(0), 1u);
  EXPECT_EQ(e0.flow_ids(1), 0xffffffffffffffffull);
  ASSERT_EQ(e0.terminating_flow_ids_size(), 1);
  EXPECT_EQ(e0.terminating_flow_ids(0), 42u);
  EXPECT_TRUE(p0.unknown_fields().empty());
  EXPECT_TRUE(e0.unknown_fields().empty());

  const pb::TrackEvent& e1 = packets[1].track_event();
  EXPECT_EQ(packets[1].timestamp(), 2u);
  EXPECT_EQ(e1.type(), pb::TrackEvent::TYPE_COUNTER);
  EXPECT_EQ(e1.counter_value_field_case(), pb::TrackEvent::kCounterValue);
  EXPECT_EQ(e1.counter_value(), -9000000000ll);

  const pb::TrackEvent& e2 = packets[2].track_event();
  EXPECT_FALSE(packets[2].has_timestamp());
  EXPECT_EQ(e2.name_iid(), 3u);
  EXPECT_EQ(e2.counter_value_field_case(), pb::TrackEvent::kDoubleCounterValue);
  EXPECT_EQ(e2.double_counter_value(), 0.125);
}

TEST(TypedWriterTest, TrackDescriptorRoundTrip) {
  PacketCapture capture;
  {
    auto handle = capture.writer()->NewTracePacket();
    rt::TracePacket packet(handle.get());
    packet.set_trusted_packet_sequence_id(9);
    packet.set_first_packet_on_sequence(true);
    packet.set_incremental_state_cleared(true);
    packet.set_previous_packet_dropped(static_cast<uint32_t>(
        rt::TracePacket::DataLossReason::DATA_LOSS_PRESENT));
    rt::TrackDescriptor track = packet.set_track_descriptor();
    track.set_uuid(100);
    track.set_parent_uuid(1);
    track.set_name("worker");
    rt::ProcessDescriptor process = track.set_process();
    process.set_pid(77);
    process.add_cmdline("app");
    process.add_cmdline("--flag");
    process.set_process_name("app_main");
    rt::ThreadDescriptor thread = track.set_thread();  // closes |process|
    thread.set_pid(77);
    thread.set_tid(-3);  // int64: ten bytes on the wire
    thread.set_thread_name("render");
    rt::CounterDescriptor counter = track.set_counter();
    counter.set_unit(rt::CounterDescriptor::Unit::UNIT_SIZE_BYTES);
    counter.set_unit_multiplier(1024);
    counter.set_is_incremental(false);
    counter.add_categories("mem");
    counter.set_unit_name("KiB");
  }
  const std::vector<pb::TracePacket> packets = ReadPackets(&capture);
  ASSERT_EQ(packets.size(), 1u);

  const pb::TracePacket& p0 = packets[0];
  EXPECT_EQ(p0.trusted_packet_sequence_id(), 9u);
  EXPECT_TRUE(p0.first_packet_on_sequence());
  EXPECT_TRUE(p0.incremental_state_cleared());
  EXPECT_EQ(p0.previous_packet_dropped(), 1u);
  const pb::TrackDescriptor& track = p0.track_descriptor();
  EXPECT_EQ(track.uuid(), 100u);
  EXPECT_EQ(track.parent_uuid(), 1u);
  EXPECT_EQ(track.name(), "worker");
  EXPECT_EQ(track.process().pid(), 77);
  ASSERT_EQ(track.process().cmdline_size(), 2);
  EXPECT_EQ(track.process().cmdline(0), "app");
  EXPECT_EQ(track.process().cmdline(1), "--flag");
  EXPECT_EQ(track.process().process_name(), "app_main");
  EXPECT_EQ(track.thread().pid(), 77);
  EXPECT_EQ(track.thread().tid(), -3);
  EXPECT_EQ(track.thread().thread_name(), "render");
  EXPECT_EQ(track.counter().unit(), pb::CounterDescriptor::UNIT_SIZE_BYTES);
  EXPECT_EQ(track.counter().unit_multiplier(), 1024);
  EXPECT_TRUE(track.counter().has_is_incremental());
  EXPECT_FALSE(track.counter().is_incremental());
  ASSERT_EQ(track.counter().categories_size(), 1);
  EXPECT_EQ(track.counter().categories(0), "mem");
  EXPECT_EQ(track.counter().unit_name(), "KiB");
}

TEST(TypedWriterTest, InternedDataDefaultsAndConfigRoundTrip) {
  PacketCapture capture;
  {
    auto handle = capture.writer()->NewTracePacket();
    rt::TracePacket packet(handle.get());
    rt::InternedData interned = packet.set_interned_data();
    for (uint64_t iid = 1; iid <= 3; iid++) {
      rt::EventName name = interned.add_event_names();
      name.set_iid(iid);
      name.set_name("name" + std::to_string(iid));
    }
    rt::EventCategory category = interned.add_event_categories();
    category.set_iid(1);
    category.set_name("cat");
    rt::TracePacketDefaults defaults = packet.set_trace_packet_defaults();
    defaults.set_timestamp_clock_id(
        static_cast<uint32_t>(rt::BuiltinClock::BUILTIN_CLOCK_BOOTTIME));
    rt::ClockSnapshot snapshot = packet.set_clock_snapshot();
    for (uint32_t id = 1; id <= 6; id++) {
      rt::ClockSnapshot::Clock clock = snapshot.add_clocks();
      clock.set_clock_id(id);
      clock.set_timestamp(1000ull * id);
    }
    snapshot.set_primary_trace_clock(6);
  }
  {
    // A message of the config package, nested in a packet (cross-file).
    auto handle = capture.writer()->NewTracePacket();
    rt::TraceConfig config = rt::TracePacket(handle.get()).set_trace_config();
    rt::TraceConfig::BufferConfig buffer = config.add_buffers();
    buffer.set_size_kb(1024);
    buffer.set_fill_policy(rt::TraceConfig::BufferConfig::FillPolicy::DISCARD);
    config.add_data_sources().set_config().set_name("track_event");
    config.set_duration_ms(5000);
  }

  const std::vector<pb::TracePacket> packets = ReadPackets(&capture);
  ASSERT_EQ(packets.size(), 2u);

  const pb::TracePacket& p0 = packets[0];
  ASSERT_EQ(p0.interned_data().event_names_size(), 3);
  for (int i = 0; i < 3; i++) {
    EXPECT_EQ(p0.interned_data().event_names(i).iid(),
              static_cast<uint64_t>(i + 1));
    EXPECT_EQ(p0.interned_data().event_names(i).name(),
              "name" + std::to_string(i + 1));
  }
  ASSERT_EQ(p0.interned_data().event_categories_size(), 1);
  EXPECT_EQ(p0.interned_data().event_categories(0).name(), "cat");
  EXPECT_EQ(p0.trace_packet_defaults().timestamp_clock_id(),
            static_cast<uint32_t>(pb::BUILTIN_CLOCK_BOOTTIME));
  ASSERT_EQ(p0.clock_snapshot().clocks_size(), 6);
  EXPECT_EQ(p0.clock_snapshot().clocks(5).clock_id(), 6u);
  EXPECT_EQ(p0.clock_snapshot().clocks(5).timestamp(), 6000u);
  EXPECT_EQ(p0.clock_snapshot().primary_trace_clock(), 6u);

  const pb::TraceConfig& config = packets[1].trace_config();
  ASSERT_EQ(config.buffers_size(), 1);
  EXPECT_EQ(config.buffers(0).size_kb(), 1024u);
  EXPECT_EQ(config.buffers(0).fill_policy(),
            pb::TraceConfig::BufferConfig::DISCARD);
  ASSERT_EQ(config.data_sources_size(), 1);
  EXPECT_EQ(config.data_sources(0).config().name(), "track_event");
  EXPECT_EQ(config.duration_ms(), 5000u);
}

// The same packet through the typed writer and through the hand-written
// Message calls (literal field numbers, as before the generator existed):
// the grouped bytes are identical.
TEST(TypedWriterTest, GoldenBytesEqualHandWrittenPath) {
  PacketCapture typed;
  {
    auto handle = typed.writer()->NewTracePacket();
    rt::TracePacket packet(handle.get());
    packet.set_timestamp(1000);
    packet.set_sequence_flags(2);
    rt::TrackEvent event = packet.set_track_event();
    event.set_type(rt::TrackEvent::Type::TYPE_SLICE_BEGIN);
    event.set_name_iid(5);
    event.add_category_iids(1);
    event.set_track_uuid(77);
    rt::DebugAnnotation annotation = event.add_debug_annotations();
    annotation.set_name("arg");
    annotation.set_int_value(-1);
    event.add_flow_ids(9);
    event.set_double_counter_value(1.5);
    rt::TrackDescriptor track = packet.set_track_descriptor();
    track.set_uuid(77);
    track.set_thread().set_tid(12);
  }
  PacketCapture hand;
  {
    auto packet = hand.writer()->NewTracePacket();
    packet->AppendVarInt(8, 1000u);
    packet->AppendVarInt(13, 2u);
    encoding::Message* event = packet->BeginNestedMessage(11);
    event->AppendVarInt(9, 1);
    event->AppendVarInt(10, 5u);
    event->AppendVarInt(3, 1u);
    event->AppendVarInt(11, 77u);
    encoding::Message* annotation = event->BeginNestedMessage(4);
    annotation->AppendString(10, "arg");
    annotation->AppendVarInt(4, int64_t{-1});
    event->AppendFixed64(47, 9u);
    event->AppendDouble(44, 1.5);
    encoding::Message* track = packet->BeginNestedMessage(60);
    track->AppendVarInt(1, 77u);
    track->BeginNestedMessage(4)->AppendVarInt(2, int64_t{12});
  }
  const std::vector<std::string> typed_packets = typed.Drain();
  const std::vector<std::string> hand_packets = hand.Drain();
  ASSERT_EQ(typed_packets.size(), 1u);
  ASSERT_EQ(hand_packets.size(), 1u);
  EXPECT_GT(typed_packets[0].size(), 40u);
  EXPECT_EQ(typed_packets[0], hand_packets[0]);
}

TEST(TypedWriterTest, FinalizeEndsTheNestedMessage) {
  PacketCapture capture;
  {
    auto handle = capture.writer()->NewTracePacket();
    rt::TracePacket packet(handle.get());
    rt::TrackEvent event = packet.set_track_event();
    event.set_name("a");
    event.Finalize();
    event.Finalize();  // idempotent
    EXPECT_TRUE(event.message()->is_finalized());
    packet.set_timestamp(5);
  }
  const std::vector<std::string> grouped = capture.Drain();
  ASSERT_EQ(grouped.size(), 1u);
  // start-group 11, name "a", end-group 11, timestamp 5.
  EXPECT_EQ(grouped[0], std::string("\x5b\xba\x01\x01\x61\x5c\x40\x05", 8));
}

}  // namespace
}  // namespace encoding
}  // namespace ringtrace
