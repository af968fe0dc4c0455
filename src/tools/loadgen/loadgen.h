/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_loadgen: a steady-state load generator for a running ringtraced,
// and the exact counter of what reached the trace. Used by
// tools/compare-lttng (the loss comparison with LTTng-UST) and
// tools/bench-multicore (TrackEvents/s with many apps).
//
// RunLoad: connects one producer, starts |threads| writer threads that emit
// small TrackEvents (a counter sample on the thread's counter track: about
// 30 bytes encoded, see docs/performance.md) as fast as they can until
// |duration_ms| passed, then flushes and disconnects. Every emitted event is
// counted by the app (events_emitted); the writers' own statistics say how
// many packets the ring refused (the drop policy) or lost.
//
// CountTrace: reads a Perfetto trace file written by ringtraced and counts
// its TrackEvent and TrackDescriptor packets and the losses its TraceStats
// report. The file is
// read in one pass; packets are walked with a minimal protobuf scanner
// (untrusted input: checked lengths, no recursion), only the TraceStats
// packet is parsed with libprotobuf.
//
// Thread model: RunLoad's threads share nothing but the Producer and a
// relaxed stop flag; everything else is per thread and read after join().

#ifndef SRC_TOOLS_LOADGEN_LOADGEN_H_
#define SRC_TOOLS_LOADGEN_LOADGEN_H_

#include <stdint.h>

#include <string>

#include "ringtrace/producer.h"
#include "ringtrace/status.h"
#include "src/tracing/core/shm_ring/ring_writer.h"

namespace ringtrace {
namespace loadgen {

struct LoadConfig {
  std::string socket_path;
  std::string name = "ringtrace_loadgen";
  uint32_t threads = 2;
  uint32_t duration_ms = 1000;
  uint32_t ring_kb = 0;     // 0: the service's default
  uint32_t chunk_size = 0;  // 0: the service's default
  shm_ring::BufferExhaustedPolicy policy =
      shm_ring::BufferExhaustedPolicy::kDrop;
  uint32_t stall_timeout_ms = 100;
  uint32_t connect_timeout_ms = 2000;
};

struct LoadResult {
  uint64_t events_emitted = 0;     // TrackEvent packets begun by the threads
  uint64_t packets_begun = 0;      // all packets, descriptors included
  uint64_t packets_committed = 0;  // per the writers
  uint64_t packets_dropped = 0;    // per the writers
  uint64_t bytes_written = 0;
  uint64_t elapsed_ns = 0;  // first thread start to last thread end
  ProducerStats producer;
  bool connected_at_end = false;
};

base::Status RunLoad(const LoadConfig& config, LoadResult* result);
std::string FormatLoadResult(const LoadResult& r);

struct TraceCount {
  uint64_t packets = 0;
  uint64_t track_events = 0;
  uint64_t track_descriptors = 0;
  // Packets that start an incremental-state generation (they carry the
  // sequence's TracePacketDefaults and clock snapshot).
  uint64_t clear_packets = 0;
  uint64_t trace_stats_packets = 0;
  // From the last TraceStats packet.
  uint64_t packets_dropped_by_producers = 0;
  uint64_t chunks_overwritten = 0;
  uint64_t chunks_discarded = 0;
  uint64_t bytes_overwritten = 0;
  // The packets the buffers lost (ringtrace's own TraceStats fields): every
  // packet a writer committed is in the trace, or counted here.
  uint64_t packets_overwritten = 0;
  uint64_t packets_discarded = 0;
};

// Counts |data| (a whole trace file). Fails on malformed framing.
base::Status CountTraceBytes(const std::string& data, TraceCount* count);
base::Status CountTraceFile(const std::string& path, TraceCount* count);
std::string FormatTraceCount(const TraceCount& c);

}  // namespace loadgen
}  // namespace ringtrace

#endif  // SRC_TOOLS_LOADGEN_LOADGEN_H_
