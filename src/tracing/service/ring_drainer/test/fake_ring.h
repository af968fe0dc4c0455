/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Test support: a writer that plays the producer side by driving the ABI
// words directly (no RingWriter), so the reader tests can place every word
// and byte exactly where they want it. The ring itself is shm_ring::TestRing
// (src/tracing/core/shm_ring/test_ring.h), included here for its users.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_TEST_FAKE_RING_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_TEST_FAKE_RING_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/core/shm_ring/test_ring.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

// Plays one writer thread with the spec's operations (4.3, 5.4, 7) and the
// section 8 memory orders. Every operation returns whether its CAS won and
// reports the word it found otherwise. Not thread-safe (one per thread).
class FakeWriter {
 public:
  FakeWriter(const shm_ring::RingView& view,
             shm_ring::WriterID writer_id,
             shm_ring::BufferID target = 1);

  // (8.4 W-reserve) of position w, after (8.3 W-load-read-pos); false if
  // the ring is full. Every shared access below goes through the named
  // operation of its section 8 row (shm_ring_abi.h), as RingWriter's do.
  bool Reserve(uint32_t* position);
  // (8.5 W-claim) FreeForWrap(wrap_count(position)) -> Acquired(id, 0,
  // flags).
  bool Claim(uint32_t position,
             shm_ring::ChunkFlags flags = shm_ring::kNoChunkFlags,
             shm_ring::StateWord* observed = nullptr);
  // Reserve + Claim, asserting both succeed.
  uint32_t ReserveAndClaim(
      shm_ring::ChunkFlags flags = shm_ring::kNoChunkFlags);

  // Appends a closed fragment to the claimed chunk: payload and size entry,
  // unpublished. Writes the BufferID with the first fragment.
  void Append(const std::string& bytes);
  // Publishes every appended fragment: CAS the last word it wrote to
  // Complete (or to Acquired, to keep the chunk): (8.7 W-publish).
  bool Publish(bool complete, shm_ring::StateWord* observed = nullptr);
  // Complete -> Acquired with the same fields: (8.8 W-reuse).
  bool Reuse(shm_ring::StateWord* observed = nullptr);
  // RewriteRequested(w, n) -> Acknowledged: (8.10 W-acknowledge).
  bool Acknowledge(shm_ring::StateWord* observed = nullptr);

  uint32_t position() const { return position_; }
  uint32_t num_fragments() const { return num_fragments_; }
  shm_ring::StateWord word() const { return word_; }

 private:
  // One CAS of the chunk's word from word_ to |desired| through |row|, one
  // of the named operations of shm_ring_abi.h (which fixes its orders).
  using CasRow = bool (*)(std::atomic<uint32_t>&,
                          shm_ring::StateWord&,
                          shm_ring::StateWord);
  bool Cas(CasRow row,
           shm_ring::StateWord desired,
           shm_ring::StateWord* observed);

  shm_ring::RingView view_;
  shm_ring::WriterID writer_id_;
  shm_ring::BufferID target_;
  uint32_t position_ = 0;
  uint32_t index_ = 0;
  shm_ring::StateWord word_ = 0;  // The word this writer last stored.
  uint32_t num_fragments_ = 0;    // Appended (published or not).
  uint32_t payload_cursor_ = 0;
};

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_TEST_FAKE_RING_H_
