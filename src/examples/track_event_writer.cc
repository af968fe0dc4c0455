/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/examples/track_event_writer.h"

#include <time.h>

namespace ringtrace {
namespace examples {

namespace {

using shm_ring::Message;
using shm_ring::TraceWriterV2;

// TracePacket.
constexpr uint32_t kPacketTimestamp = 8;
constexpr uint32_t kPacketTrackEvent = 11;
constexpr uint32_t kPacketSequenceFlags = 13;
constexpr uint32_t kPacketTrackDescriptor = 60;
constexpr uint32_t kSeqIncrementalStateCleared = 1;
// TrackDescriptor.
constexpr uint32_t kTrackUuid = 1;
constexpr uint32_t kTrackName = 2;
constexpr uint32_t kTrackProcess = 3;
constexpr uint32_t kTrackThread = 4;
constexpr uint32_t kTrackParentUuid = 5;
constexpr uint32_t kTrackCounter = 8;
// ProcessDescriptor / ThreadDescriptor / CounterDescriptor.
constexpr uint32_t kProcessPid = 1;
constexpr uint32_t kProcessName = 6;
constexpr uint32_t kThreadPid = 1;
constexpr uint32_t kThreadTid = 2;
constexpr uint32_t kThreadName = 5;
constexpr uint32_t kCounterUnit = 3;
constexpr uint32_t kUnitCount = 2;
// TrackEvent.
constexpr uint32_t kEventType = 9;
constexpr uint32_t kEventTrackUuid = 11;
constexpr uint32_t kEventCategories = 22;
constexpr uint32_t kEventName = 23;
constexpr uint32_t kEventCounterValue = 30;

// A packet with its timestamp; the handle finishes it when it goes.
TraceWriterV2::TracePacketHandle BeginPacket(TraceWriterV2* writer,
                                             uint64_t timestamp,
                                             bool first_on_sequence) {
  TraceWriterV2::TracePacketHandle packet = writer->NewTracePacket();
  packet->AppendVarInt(kPacketTimestamp, timestamp);
  if (first_on_sequence)
    packet->AppendVarInt(kPacketSequenceFlags, kSeqIncrementalStateCleared);
  return packet;
}

Message* BeginEvent(TraceWriterV2::TracePacketHandle* packet,
                    TrackEventType type,
                    uint64_t track_uuid) {
  Message* event = (*packet)->BeginNestedMessage(kPacketTrackEvent);
  event->AppendVarInt(kEventType, static_cast<uint32_t>(type));
  event->AppendVarInt(kEventTrackUuid, track_uuid);
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
  auto packet = BeginPacket(writer, timestamp, first_on_sequence);
  Message* track = packet->BeginNestedMessage(kPacketTrackDescriptor);
  track->AppendVarInt(kTrackUuid, ProcessTrackUuid(pid));
  Message* process = track->BeginNestedMessage(kTrackProcess);
  process->AppendVarInt(kProcessPid, pid);
  process->AppendString(kProcessName, process_name);
}

void WriteThreadTrack(TraceWriterV2* writer,
                      uint64_t timestamp,
                      int32_t pid,
                      int64_t tid,
                      std::string_view thread_name,
                      bool first_on_sequence) {
  auto packet = BeginPacket(writer, timestamp, first_on_sequence);
  Message* track = packet->BeginNestedMessage(kPacketTrackDescriptor);
  track->AppendVarInt(kTrackUuid, ThreadTrackUuid(pid, tid));
  track->AppendVarInt(kTrackParentUuid, ProcessTrackUuid(pid));
  Message* thread = track->BeginNestedMessage(kTrackThread);
  thread->AppendVarInt(kThreadPid, pid);
  thread->AppendVarInt(kThreadTid, tid);
  thread->AppendString(kThreadName, thread_name);
}

void WriteCounterTrack(TraceWriterV2* writer,
                       uint64_t timestamp,
                       int32_t pid,
                       int64_t tid,
                       std::string_view name) {
  auto packet = BeginPacket(writer, timestamp, false);
  Message* track = packet->BeginNestedMessage(kPacketTrackDescriptor);
  track->AppendVarInt(kTrackUuid, CounterTrackUuid(pid, tid));
  track->AppendVarInt(kTrackParentUuid, ProcessTrackUuid(pid));
  track->AppendString(kTrackName, name);
  Message* counter = track->BeginNestedMessage(kTrackCounter);
  counter->AppendVarInt(kCounterUnit, kUnitCount);
}

void WriteSliceBegin(TraceWriterV2* writer,
                     uint64_t timestamp,
                     uint64_t track_uuid,
                     std::string_view category,
                     std::string_view name) {
  auto packet = BeginPacket(writer, timestamp, false);
  Message* event = BeginEvent(&packet, TrackEventType::kSliceBegin, track_uuid);
  event->AppendString(kEventCategories, category);
  event->AppendString(kEventName, name);
}

void WriteSliceEnd(TraceWriterV2* writer,
                   uint64_t timestamp,
                   uint64_t track_uuid) {
  auto packet = BeginPacket(writer, timestamp, false);
  BeginEvent(&packet, TrackEventType::kSliceEnd, track_uuid);
}

void WriteCounter(TraceWriterV2* writer,
                  uint64_t timestamp,
                  uint64_t track_uuid,
                  int64_t value) {
  auto packet = BeginPacket(writer, timestamp, false);
  Message* event = BeginEvent(&packet, TrackEventType::kCounter, track_uuid);
  event->AppendVarInt(kEventCounterValue, value);
}

}  // namespace examples
}  // namespace ringtrace
