/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// A compact encoder of Perfetto TrackEvent packets over a TraceWriterV2, for
// the example app: the track descriptors that name a process, a thread and a
// counter track, slice begin/end events and counter values. It writes
// through the typed writers generated from protos/perfetto/trace
// (trace_packet.rtzero.h, docs/encoding.md), so no field number is spelled
// out here.
//
// Each function writes one whole TracePacket. Timestamps are nanoseconds of
// CLOCK_BOOTTIME, Perfetto's default trace clock, so no clock id is set.
//
// Thread model: as TraceWriterV2 (one thread per writer).

#ifndef SRC_EXAMPLES_TRACK_EVENT_WRITER_H_
#define SRC_EXAMPLES_TRACK_EVENT_WRITER_H_

#include <stdint.h>

#include <string_view>

#include "src/tracing/core/shm_ring/trace_writer_v2.h"

namespace ringtrace {
namespace examples {

// TrackEvent.Type.
enum class TrackEventType : uint32_t {
  kSliceBegin = 1,
  kSliceEnd = 2,
  kInstant = 3,
  kCounter = 4,
};

// Track uuids of this process's tracks; distinct for distinct arguments.
uint64_t ProcessTrackUuid(int32_t pid);
uint64_t ThreadTrackUuid(int32_t pid, int64_t tid);
uint64_t CounterTrackUuid(int32_t pid, int64_t tid);

// CLOCK_BOOTTIME in ns.
uint64_t BootTimeNs();

// TrackDescriptor packets. |first_on_sequence| marks the writer's first
// packet (TracePacket.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED).
void WriteProcessTrack(shm_ring::TraceWriterV2* writer,
                       uint64_t timestamp,
                       int32_t pid,
                       std::string_view process_name,
                       bool first_on_sequence);
void WriteThreadTrack(shm_ring::TraceWriterV2* writer,
                      uint64_t timestamp,
                      int32_t pid,
                      int64_t tid,
                      std::string_view thread_name,
                      bool first_on_sequence);
// A counter track (unit: count) under the process track.
void WriteCounterTrack(shm_ring::TraceWriterV2* writer,
                       uint64_t timestamp,
                       int32_t pid,
                       int64_t tid,
                       std::string_view name);

// TrackEvent packets.
void WriteSliceBegin(shm_ring::TraceWriterV2* writer,
                     uint64_t timestamp,
                     uint64_t track_uuid,
                     std::string_view category,
                     std::string_view name);
void WriteSliceEnd(shm_ring::TraceWriterV2* writer,
                   uint64_t timestamp,
                   uint64_t track_uuid);
void WriteCounter(shm_ring::TraceWriterV2* writer,
                  uint64_t timestamp,
                  uint64_t track_uuid,
                  int64_t value);

}  // namespace examples
}  // namespace ringtrace

#endif  // SRC_EXAMPLES_TRACK_EVENT_WRITER_H_
