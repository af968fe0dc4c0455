/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/examples/track_event_writer.h"

#include <time.h>

#include "protos/perfetto/trace/trace_packet.rtzero.h"

namespace ringtrace {
namespace examples {

namespace {

using shm_ring::TraceWriterV2;
namespace rt = perfetto::protos::rtzero;

static_assert(static_cast<uint32_t>(TrackEventType::kSliceBegin) ==
              static_cast<uint32_t>(rt::TrackEvent::Type::TYPE_SLICE_BEGIN));
static_assert(static_cast<uint32_t>(TrackEventType::kSliceEnd) ==
              static_cast<uint32_t>(rt::TrackEvent::Type::TYPE_SLICE_END));
static_assert(static_cast<uint32_t>(TrackEventType::kInstant) ==
              static_cast<uint32_t>(rt::TrackEvent::Type::TYPE_INSTANT));
static_assert(static_cast<uint32_t>(TrackEventType::kCounter) ==
              static_cast<uint32_t>(rt::TrackEvent::Type::TYPE_COUNTER));

// A packet with its timestamp, written through |handle|, which finishes it
// when it goes.
rt::TracePacket BeginPacket(const TraceWriterV2::TracePacketHandle& handle,
                            uint64_t timestamp,
                            bool first_on_sequence) {
  rt::TracePacket packet(handle);
  packet.set_timestamp(timestamp);
  if (first_on_sequence) {
    packet.set_sequence_flags(static_cast<uint32_t>(
        rt::TracePacket::SequenceFlags::SEQ_INCREMENTAL_STATE_CLEARED));
  }
  return packet;
}

rt::TrackEvent BeginEvent(rt::TracePacket packet,
                          TrackEventType type,
                          uint64_t track_uuid) {
  rt::TrackEvent event = packet.set_track_event();
  event.set_type(static_cast<rt::TrackEvent::Type>(type));
  event.set_track_uuid(track_uuid);
  return event;
}

}  // namespace

// Tags in the top two bits keep the three kinds apart; the pid and the low
// 30 bits of the tid make them unique within a kind.
uint64_t ProcessTrackUuid(int32_t pid) {
  return (uint64_t{1} << 62) | static_cast<uint32_t>(pid);
}
uint64_t ThreadTrackUuid(int32_t pid, int64_t tid) {
  return (uint64_t{2} << 62) |
         (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 30) |
         (static_cast<uint64_t>(tid) & ((uint64_t{1} << 30) - 1));
}
uint64_t CounterTrackUuid(int32_t pid, int64_t tid) {
  return (uint64_t{3} << 62) |
         (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 30) |
         (static_cast<uint64_t>(tid) & ((uint64_t{1} << 30) - 1));
}

uint64_t BootTimeNs() {
  struct timespec ts = {};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

void WriteProcessTrack(TraceWriterV2* writer,
                       uint64_t timestamp,
                       int32_t pid,
                       std::string_view process_name,
                       bool first_on_sequence) {
  auto handle = writer->NewTracePacket();
  rt::TrackDescriptor track =
      BeginPacket(handle, timestamp, first_on_sequence).set_track_descriptor();
  track.set_uuid(ProcessTrackUuid(pid));
  rt::ProcessDescriptor process = track.set_process();
  process.set_pid(pid);
  process.set_process_name(process_name);
}

void WriteThreadTrack(TraceWriterV2* writer,
                      uint64_t timestamp,
                      int32_t pid,
                      int64_t tid,
                      std::string_view thread_name,
                      bool first_on_sequence) {
  auto handle = writer->NewTracePacket();
  rt::TrackDescriptor track =
      BeginPacket(handle, timestamp, first_on_sequence).set_track_descriptor();
  track.set_uuid(ThreadTrackUuid(pid, tid));
  track.set_parent_uuid(ProcessTrackUuid(pid));
  rt::ThreadDescriptor thread = track.set_thread();
  thread.set_pid(pid);
  thread.set_tid(tid);
  thread.set_thread_name(thread_name);
}

void WriteCounterTrack(TraceWriterV2* writer,
                       uint64_t timestamp,
                       int32_t pid,
                       int64_t tid,
                       std::string_view name) {
  auto handle = writer->NewTracePacket();
  rt::TrackDescriptor track =
      BeginPacket(handle, timestamp, false).set_track_descriptor();
  track.set_uuid(CounterTrackUuid(pid, tid));
  track.set_parent_uuid(ProcessTrackUuid(pid));
  track.set_name(name);
  track.set_counter().set_unit(rt::CounterDescriptor::Unit::UNIT_COUNT);
}

void WriteSliceBegin(TraceWriterV2* writer,
                     uint64_t timestamp,
                     uint64_t track_uuid,
                     std::string_view category,
                     std::string_view name) {
  auto handle = writer->NewTracePacket();
  rt::TrackEvent event = BeginEvent(BeginPacket(handle, timestamp, false),
                                    TrackEventType::kSliceBegin, track_uuid);
  event.add_categories(category);
  event.set_name(name);
}

void WriteSliceEnd(TraceWriterV2* writer,
                   uint64_t timestamp,
                   uint64_t track_uuid) {
  auto handle = writer->NewTracePacket();
  BeginEvent(BeginPacket(handle, timestamp, false), TrackEventType::kSliceEnd,
             track_uuid);
}

void WriteCounter(TraceWriterV2* writer,
                  uint64_t timestamp,
                  uint64_t track_uuid,
                  int64_t value) {
  auto handle = writer->NewTracePacket();
  rt::TrackEvent event = BeginEvent(BeginPacket(handle, timestamp, false),
                                    TrackEventType::kCounter, track_uuid);
  event.set_counter_value(value);
}

}  // namespace examples
}  // namespace ringtrace
