/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ProducerIdAllocator: the ProducerIDs the service hands out at admission.
//
// The drainer's ChunkIDs, the buffers' sequences and the exporter's
// sequence ids are keyed by {ProducerID, WriterID}: an id reused while a
// buffer still holds a sequence of its previous owner would splice two
// producers' sequences (and give the newcomer the old owner's pid). So ids
// 1..kMaxProducerID are handed out fresh first; once every one was used,
// the id of a departed producer is reused only when no trace buffer keeps
// a SequenceState of it (not even an empty one: TraceBufferV2::
// ForEachSequenceProducer) and the drainer freed its ChunkID counters
// (RingDrainer::RemoveRing, before Release()). Departed ids are checked in
// batches: one scan of the buffers' sequences when the reusable list is
// empty, at most once per kRecycleScanInterval allocations while it finds
// nothing, so Hello+close cycles cost O(1) each amortized.
//
// Thread model: single-threaded (the ServiceCore's thread); the scan
// callback reads the buffers where they may be read.

#ifndef SRC_TRACING_SERVICE_TRACED_PRODUCER_ID_ALLOCATOR_H_
#define SRC_TRACING_SERVICE_TRACED_PRODUCER_ID_ALLOCATOR_H_

#include <stdint.h>

#include <functional>
#include <vector>

#include "ringtrace/ids.h"

namespace ringtrace {
namespace traced {

class ProducerIdAllocator {
 public:
  // Allocations between two scans that found no reusable id.
  static constexpr uint32_t kRecycleScanInterval = 64;

  // Sets (*held)[id] for every id a trace buffer still keeps a sequence
  // of; |held| has kMaxProducerID + 1 entries, all false.
  using HeldScan = std::function<void(std::vector<bool>* held)>;

  // A fresh id, else a reusable one (|*reused| says which); 0 when none may
  // be given now (every id is connected or still held by a buffer).
  uint32_t Allocate(const HeldScan& scan, bool* reused);
  // Producer |id| left (or its admission failed after Allocate): its id
  // may come back once no buffer holds it.
  void Release(uint32_t id);

  // Scans of the buffers so far (tests of the batching).
  uint64_t scans() const { return scans_; }
  // Makes |id| the next fresh id (tests of exhaustion).
  void set_next_for_testing(uint32_t id) { next_ = id; }

 private:
  void Refill(const HeldScan& scan);

  uint32_t next_ = 1;  // the next fresh id; kMaxProducerID + 1 once all used
  std::vector<uint32_t> departed_;  // may still be held by a buffer
  std::vector<uint32_t> reusable_;  // held by none
  uint32_t allocations_since_scan_ = 0;
  bool scanned_since_departure_ = false;
  uint64_t scans_ = 0;
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_PRODUCER_ID_ALLOCATOR_H_
