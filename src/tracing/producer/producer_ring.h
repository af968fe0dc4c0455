/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ProducerRing: the socket-independent core of a Producer. It owns the
// producer's mapping of its shared ring and hands out TraceWriterV2s over it,
// each with a WriterID that was never used on this ring before
// (WriterIdAllocator: 1..65535, then NewTraceWriter() fails for good).
//
// Every writer gets the same options (target buffer, buffer-exhausted
// policy, stall timeout), the same delegate (the producer's DrainNotifier),
// the same refuse switch and a slot of the loss registry
// (TraceWriterV2::AttachProducerControls).
//
// After fork(), in the child, MakeInertAfterFork() replaces the shared
// mapping by private memory at the same address: whatever the inherited
// writers still do (finish a packet they had begun, flush, be destroyed)
// touches only the child's own pages, never the ring the parent and the
// service share. The private pages are laid out so that every operation a
// writer can attempt on them fails as a protocol error or finds no chunk:
// the loss is counted, nothing is published anywhere (docs/service.md,
// "fork()").
//
// Lifetime: the writers write into this object's mapping and call the
// delegate, so the ProducerRing (and the delegate) must outlive every writer
// it created. The mapping is never unmapped before that, whatever the
// service does: a service that went away leaves a ring nobody drains, which
// the writers handle per their policy (drop and count, or stall up to the
// timeout, then drop).
//
// Thread model: NewTraceWriter() and the accessors from any thread,
// concurrently. Each writer is then used by one thread at a time.

#ifndef SRC_TRACING_PRODUCER_PRODUCER_RING_H_
#define SRC_TRACING_PRODUCER_PRODUCER_RING_H_

#include <stdint.h>

#include <atomic>
#include <memory>

#include "ringtrace/shm_ring_abi.h"
#include "ringtrace/status.h"
#include "ringtrace/trace_writer_v2.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/core/shm_ring/writer_id_allocator.h"
#include "src/tracing/producer/writer_loss_registry.h"

namespace ringtrace {
namespace producer {

class ProducerRing {
 public:
  struct Options {
    shm_ring::BufferID target_buffer = 0;
    shm_ring::BufferExhaustedPolicy policy =
        shm_ring::BufferExhaustedPolicy::kDrop;
    uint32_t stall_timeout_ms = 100;
    shm_ring::RingWriterDelegate* delegate = nullptr;  // not owned; may be null
    // TraceWriterV2::AttachProducerControls(); not owned, may be null.
    const std::atomic<bool>* refuse = nullptr;
    WriterLossRegistry* losses = nullptr;
  };

  // |region| is a live mapping of a valid ring (SharedRingRegion validated
  // its geometry).
  ProducerRing(std::unique_ptr<shm_ring::SharedRingRegion> region,
               const Options& options);
  ~ProducerRing();
  ProducerRing(const ProducerRing&) = delete;
  ProducerRing& operator=(const ProducerRing&) = delete;

  // A writer with a fresh WriterID, or null with |*status| set (may be null)
  // once the ring's 65535 IDs are used up.
  std::unique_ptr<shm_ring::TraceWriterV2> NewTraceWriter(base::Status* status);
  // The same, with another target buffer than Options::target_buffer.
  std::unique_ptr<shm_ring::TraceWriterV2> NewTraceWriter(
      shm_ring::BufferID target_buffer,
      base::Status* status);

  // In a child process after fork(), before anything else uses the ring
  // (the atfork child handler: async-signal-safe, single-threaded). Returns
  // false if the mapping could not be replaced; then the child must not use
  // the inherited writers at all (the shared mapping is still there).
  bool MakeInertAfterFork();

  uint32_t writers_created() const { return ids_.allocated(); }
  const shm_ring::RingView& view() const { return view_; }
  const shm_ring::RingGeometry& geometry() const { return view_.geometry(); }
  const shm_ring::SharedRingRegion& region() const { return *region_; }

 private:
  const std::unique_ptr<shm_ring::SharedRingRegion> region_;
  const shm_ring::RingView view_;
  const Options options_;
  shm_ring::WriterIdAllocator ids_;
};

}  // namespace producer
}  // namespace ringtrace

#endif  // SRC_TRACING_PRODUCER_PRODUCER_RING_H_
