/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceWriterV2Owner: the ring owner's side of a TraceWriterV2, kept out of
// the public header (apps get writers from the producer library and use
// only the packet API). Used by the producer library, which owns the rings
// it writes, and by tests and benchmarks that build writers over their own
// test rings.
//
//   std::unique_ptr<TraceWriterV2> w =
//       TraceWriterV2Owner::Create(ring.view(), options);
//   TraceWriterV2Owner::AttachProducerControls(w.get(), &refuse, &losses);
//
// Thread model: as TraceWriterV2's; attach before the writer is used.

#ifndef SRC_TRACING_CORE_SHM_RING_TRACE_WRITER_V2_OWNER_H_
#define SRC_TRACING_CORE_SHM_RING_TRACE_WRITER_V2_OWNER_H_

#include <atomic>
#include <memory>
#include <utility>

#include "ringtrace/shm_ring_abi.h"
#include "ringtrace/trace_writer_v2.h"
#include "src/tracing/core/shm_ring/ring_writer.h"

namespace ringtrace {
namespace shm_ring {

class TraceWriterV2Owner {
 public:
  // A writer over |ring| (which must outlive it, or be kept alive through
  // AttachOwner()).
  static std::unique_ptr<TraceWriterV2> Create(
      const RingView& ring,
      const TraceWriterV2::Options& options) {
    return std::unique_ptr<TraceWriterV2>(new TraceWriterV2(ring, options));
  }

  // Call once, before the writer is used. Both pointers are not owned and
  // must outlive the writer.
  //  |refuse|: once it reads true (relaxed: it guards no data), every new
  //    packet is dropped at once and counted (packets_refused), whatever the
  //    policy: no chunk is acquired, nothing waits. A packet already begun
  //    goes on as usual. Used when the service is gone and after fork() in
  //    the child (docs/service.md). Null: never refuse.
  //  |losses|: kept equal to the writer's loss counters after every call
  //    that can change them (and in the destructor).
  static void AttachProducerControls(TraceWriterV2* writer,
                                     const std::atomic<bool>* refuse,
                                     WriterLossCounters* losses) {
    writer->AttachProducerControls(refuse, losses);
  }

  // |owner| is released after everything else of the writer (its
  // destructor's final flush included), so a writer can keep the object
  // that owns its ring, delegate and controls alive.
  static void AttachOwner(TraceWriterV2* writer, std::shared_ptr<void> owner) {
    writer->AttachOwner(std::move(owner));
  }

  // The writer's RingWriter (its stats, its held chunk; tests install step
  // hooks through the mutable one).
  static const RingWriter& ring_writer(const TraceWriterV2& writer) {
    return *writer.ring_writer_;
  }
  static RingWriter* ring_writer_for_testing(TraceWriterV2* writer) {
    return writer->ring_writer_.get();
  }
};

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_SHM_RING_TRACE_WRITER_V2_OWNER_H_
