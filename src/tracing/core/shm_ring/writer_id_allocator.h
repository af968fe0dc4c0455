/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// WriterIdAllocator: hands out the WriterIDs of one ring, each at most once
// for the ring's whole life.
//
// Why never twice (spec 11.3): the reuse CAS Complete(w,n) -> Acquired(w,n)
// carries no wrap count. If a dead writer's ID were given to a new writer,
// the new writer could hold a chunk whose word equals a word the old writer
// cached, and two owners would believe in the same handle. With IDs unique
// for the ring's life, a word Complete(w,n) can only ever be the word the one
// writer w stored itself.
//
// IDs are 1..65535; 0 is never handed out (it stays free to mean "no
// writer"). After 65535 allocations Allocate() fails for good: the producer
// then creates no more writers on this ring (it needs a new ring). Releasing
// an ID is deliberately impossible.
//
// One allocator per ring, in the producer process (not in shared memory: the
// service never allocates IDs). Thread-safe: any thread may allocate.

#ifndef SRC_TRACING_CORE_SHM_RING_WRITER_ID_ALLOCATOR_H_
#define SRC_TRACING_CORE_SHM_RING_WRITER_ID_ALLOCATOR_H_

#include <stdint.h>

#include <atomic>

#include "ringtrace/shm_ring_abi.h"

namespace ringtrace {
namespace shm_ring {

class WriterIdAllocator {
 public:
  static constexpr uint32_t kFirstId = 1;
  static constexpr uint32_t kLastId = 0xffff;

  WriterIdAllocator() = default;
  WriterIdAllocator(const WriterIdAllocator&) = delete;
  WriterIdAllocator& operator=(const WriterIdAllocator&) = delete;

  // Stores a never-before-returned ID in |*id| and returns true, or returns
  // false once all IDs of the ring have been handed out.
  bool Allocate(WriterID* id);

  // How many IDs have been handed out.
  uint32_t allocated() const;

 private:
  // The next ID to hand out; kLastId + 1 once exhausted (never wraps).
  std::atomic<uint32_t> next_{kFirstId};
};

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_SHM_RING_WRITER_ID_ALLOCATOR_H_
