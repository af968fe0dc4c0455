/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ProducerRing: the socket-independent core of a Producer. It owns the
// producer's mapping of its shared ring and hands out TraceWriterV2s over it,
// each with a WriterID that was never used on this ring before
// (WriterIdAllocator: 1..65535, then NewTraceWriter() fails for good).
//
// Every writer gets the same options (target buffer, buffer-exhausted
// policy, stall timeout) and the same delegate (the producer's
// DrainNotifier).
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
#include "src/base/status.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/core/shm_ring/trace_writer_v2.h"
#include "src/tracing/core/shm_ring/writer_id_allocator.h"

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
