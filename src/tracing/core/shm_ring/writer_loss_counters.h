/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// WriterLossCounters: a TraceWriterV2's loss counters as the producer
// library reads them from other threads (TraceWriterV2::
// AttachProducerControls, include/ringtrace/trace_writer_v2.h). Internal:
// apps read a writer's losses with TraceWriterV2::stats().

#ifndef SRC_TRACING_CORE_SHM_RING_WRITER_LOSS_COUNTERS_H_
#define SRC_TRACING_CORE_SHM_RING_WRITER_LOSS_COUNTERS_H_

#include <stdint.h>

#include <atomic>

#include "src/tracing/core/shm_ring/writer_loss_area.h"

namespace ringtrace {
namespace shm_ring {

// The loss counters of one writer, readable by any thread while the writer
// runs (the producer library reports them to the service). Owned by whoever
// attaches them (TraceWriterV2::AttachProducerControls) and must outlive the
// writer. The writer's thread is the only one that stores the counters
// (relaxed: each is a single-writer monotonic value), then bumps |version|
// (release) and, if set, |*changes| (release). A reader that loads
// |version| (acquire) and sees a new value reads counters at least as new
// as that version's. The counters are cumulative and follow
// TraceWriterV2Stats:
struct WriterLossCounters {
  // Lost before they ended (BeginPacket/ContinuePacket/Flush failed, or
  // the packet was refused, see AttachProducerControls).
  std::atomic<uint64_t> packets_dropped_before_end{0};
  // Lost after they ended (a dropped suffix, a protocol error).
  std::atomic<uint64_t> packets_dropped_after_end{0};
  std::atomic<uint64_t> bytes_dropped{0};  // TraceWriterV2Stats::bytes_dropped
  std::atomic<uint64_t> stall_timeouts{0};
  std::atomic<uint32_t> version{0};
  std::atomic<uint64_t>* changes = nullptr;  // not owned; may be null
  // The writer's slot of the ring's writer loss area (writer_loss_area.h),
  // or null: the writer's thread stores the counters there too, first.
  WriterLossSlot* shared = nullptr;  // not owned; set before the writer runs
};

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_SHM_RING_WRITER_LOSS_COUNTERS_H_
