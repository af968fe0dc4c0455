/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The end-to-end demo, as a library: one process plays both the app and the
// tracing service, and every byte takes the production path.
//
//   N producer threads                drain thread           main thread
//   TraceWriterV2 (WriterID t + 1) -> shared ring (memfd) -> RingDrainer ->
//   TraceBufferV2Sink -> TraceBufferV2 ......................> TraceExporter
//                                                              -> .pftrace
//
// Producers write realistic TrackEvent packets with timestamps from
// CLOCK_BOOTTIME (the Perfetto default trace clock, so no clock id is set):
//   - a TrackDescriptor for the process (thread 0 only), one for the thread
//     (pid, tid, thread name "worker-<t>") and one for a COUNTER track;
//     re-emitted every kDescriptorPeriod iterations so that the tracks stay
//     described when RING_BUFFER overwrote the first ones;
//   - per iteration: SLICE_BEGIN "frame", SLICE_BEGIN "step_a"/"step_b",
//     SLICE_END, SLICE_END and a COUNTER value, each TrackEvent with its
//     name, categories, track_uuid and a debug annotation "event_seq", the
//     thread's event counter (0, 1, 2, ...), so any lost event is visible.
//
// The drain thread runs RingDrainer passes into a TraceBufferV2 while the
// producers run (woken when a writer asks for room, else every
// kDrainTickMs), then a final DrainMode::kFlush once they are done. The
// exporter then writes the TraceConfig, a ClockSnapshot, every packet, the
// TraceStats and a closing ClockSnapshot.
//
// Accounting (DemoResult): written = packets the producers started;
// delivered = producer packets in the file; lost = written - delivered,
// split into dropped by the writers (TraceWriterV2Stats::packets_dropped:
// no chunk to be had, or a relocated suffix that found no replacement),
// overwritten in the buffer (counted by the overwrite observer), invalid
// (dropped by the exporter) and the rest (DISCARD rejections, reassembly
// breaks).
//
// Thread model: RunDemo() is called from one thread and starts/joins every
// thread it uses.

#ifndef SRC_TOOLS_RINGTRACE_DEMO_DEMO_H_
#define SRC_TOOLS_RINGTRACE_DEMO_DEMO_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_export/trace_exporter.h"

namespace ringtrace {
namespace demo {

// Debug annotation carrying the per-thread event counter.
constexpr char kEventSeqAnnotation[] = "event_seq";
// Descriptors are re-emitted every this many iterations.
constexpr uint32_t kDescriptorPeriod = 256;
// TrackEvent packets per iteration.
constexpr uint32_t kEventsPerIteration = 5;
// Track uuids: process, thread t, counter of thread t.
uint64_t ProcessTrackUuid(int32_t pid);
uint64_t ThreadTrackUuid(int32_t pid, uint32_t thread);
uint64_t CounterTrackUuid(int32_t pid, uint32_t thread);

struct DemoConfig {
  std::string out_path = "out/demo.pftrace";
  uint32_t duration_ms = 2000;
  // > 0: each producer runs exactly this many iterations and duration_ms is
  // ignored (deterministic amount of data, for tests).
  uint32_t iterations_per_thread = 0;
  uint32_t threads = 4;
  uint32_t ring_kb = 1024;     // ring payload: ring_kb * 1024 / chunk_size
  uint32_t chunk_size = 4096;  // chunks (powers of two)
  uint32_t buffer_kb = 16384;  // TraceBufferV2 size
  // TraceConfig's fill_policy: kOverwrite is RING_BUFFER.
  trace_buffer::TraceBufferV2::OverwritePolicy fill_policy =
      trace_buffer::TraceBufferV2::OverwritePolicy::kOverwrite;
  shm_ring::BufferExhaustedPolicy writer_policy =
      shm_ring::BufferExhaustedPolicy::kStallThenDrop;
  uint32_t stall_timeout_ms = 100;
  // Busy work inside each "step" slice, in iterations of a small loop.
  uint32_t work_per_step = 2000;
  // Sleep between iterations (0: none). The default keeps a 2 s, 4-thread
  // run well inside the default buffer: a trace without loss.
  uint32_t interval_us = 100;
  // The drainer leaves a chunk a writer is still filling alone for this long
  // before it scrapes it (RingDrainerOptions::head_grace_ns), unless the ring
  // is under pressure. Short values make the drainer chase the writers:
  // nearly every chunk is scraped and relocated.
  uint32_t head_grace_ms = 50;
};

struct DemoThreadResult {
  uint32_t writer_id = 0;
  int64_t tid = 0;
  uint64_t iterations = 0;
  uint64_t events_started = 0;   // TrackEvent packets started
  uint64_t packets_started = 0;  // all packets started (descriptors too)
  uint64_t packets_dropped = 0;  // TraceWriterV2Stats::packets_dropped
  uint64_t relocations = 0;
  // Relocated suffixes the ring writer had to drop when a scraped chunk's
  // suffix found no replacement, and their bytes (RingWriterStats). The
  // packets in them are in packets_dropped.
  uint64_t suffixes_dropped = 0;
  uint64_t dropped_suffix_bytes = 0;
};

struct DemoResult {
  uint64_t packets_written = 0;  // started by the producers
  uint64_t packets_delivered = 0;
  uint64_t packets_lost = 0;
  uint64_t lost_dropped_by_writers = 0;
  uint64_t lost_overwritten = 0;
  uint64_t lost_invalid = 0;
  uint64_t lost_other = 0;
  uint64_t bytes_written_by_writers = 0;
  uint64_t file_size = 0;
  double elapsed_s = 0;
  uint32_t pid = 0;
  std::vector<DemoThreadResult> threads;
  trace_export::ExportStats export_stats;
  trace_buffer::TraceBufferStats buffer_stats;
  uint64_t drainer_chunks = 0;
  uint64_t drainer_scrapes = 0;
  uint64_t drainer_holes = 0;
  uint64_t drainer_protocol_errors = 0;
  uint64_t relocations = 0;  // sums of DemoThreadResult
  uint64_t suffixes_dropped = 0;
  uint64_t dropped_suffix_bytes = 0;
};

// Runs the demo. Fails (without starting threads) on an invalid config or
// when the ring, the buffer or the output file cannot be created.
base::Status RunDemo(const DemoConfig& config, DemoResult* result);

// A human-readable summary.
std::string FormatSummary(const DemoConfig& config, const DemoResult& result);

}  // namespace demo
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_DEMO_DEMO_H_
