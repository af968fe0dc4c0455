/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/fake_ring.h"

#include <stdlib.h>
#include <string.h>

#include "src/base/logging.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

using shm_ring::ChunkState;
using shm_ring::RingGeometry;
using shm_ring::StateWord;

FakeWriter::FakeWriter(const shm_ring::RingView& view,
                       shm_ring::WriterID writer_id,
                       shm_ring::BufferID target)
    : view_(view), writer_id_(writer_id), target_(target) {}

bool FakeWriter::Reserve(uint32_t* position) {
  const RingGeometry& g = view_.geometry();
  // acquire; pairs with the reader's release store of read_pos.
  const uint32_t read_pos = view_.read_pos()->load(std::memory_order_acquire);
  uint32_t w = view_.write_pos()->load(std::memory_order_relaxed);
  for (;;) {
    if (g.IsFull(w, read_pos))
      return false;
    // relaxed / relaxed (spec 8 "Reserve write_pos").
    if (view_.write_pos()->compare_exchange_weak(
            w, w + 1, std::memory_order_relaxed, std::memory_order_relaxed)) {
      *position = w;
      return true;
    }
  }
}

bool FakeWriter::Claim(uint32_t position,
                       shm_ring::ChunkFlags flags,
                       StateWord* observed) {
  const RingGeometry& g = view_.geometry();
  position_ = position;
  index_ = g.ChunkIndex(position);
  num_fragments_ = 0;
  payload_cursor_ = shm_ring::kPayloadStartFormat00;
  StateWord expected = shm_ring::MakeFreeForWrap(g.WrapCount(position));
  const StateWord acquired = shm_ring::MakeDataWord(
      ChunkState::kAcquired, shm_ring::kFormatTargetBuffer, flags, 0,
      writer_id_);
  // acquire / relaxed (spec 8 "Claim"); pairs with the reader's release
  // transition to FreeForWrap.
  if (view_.chunk_state(index_)->compare_exchange_strong(
          expected, acquired, std::memory_order_acquire,
          std::memory_order_relaxed)) {
    word_ = acquired;
    return true;
  }
  if (observed)
    *observed = expected;
  return false;
}

uint32_t FakeWriter::ReserveAndClaim(shm_ring::ChunkFlags flags) {
  uint32_t pos = 0;
  RT_CHECK(Reserve(&pos));
  RT_CHECK(Claim(pos, flags));
  return pos;
}

void FakeWriter::Append(const std::string& bytes) {
  const RingGeometry& g = view_.geometry();
  uint8_t* c = view_.chunk(index_);
  if (num_fragments_ == 0) {
    c[shm_ring::kBufferIdOffset] = static_cast<uint8_t>(target_ & 0xff);
    c[shm_ring::kBufferIdOffset + 1] = static_cast<uint8_t>(target_ >> 8);
  }
  const uint32_t w = g.size_entry_width();
  const uint32_t dir_cursor = g.chunk_size - num_fragments_ * w;
  RT_CHECK(num_fragments_ < shm_ring::kMaxFragmentsPerChunk);
  RT_CHECK(payload_cursor_ + bytes.size() + w <= dir_cursor);
  memcpy(c + payload_cursor_, bytes.data(), bytes.size());
  shm_ring::WriteSizeEntry(c + dir_cursor - w, w,
                           static_cast<uint32_t>(bytes.size()));
  payload_cursor_ += static_cast<uint32_t>(bytes.size());
  ++num_fragments_;
}

bool FakeWriter::Publish(bool complete, StateWord* observed) {
  const StateWord desired = shm_ring::WithState(
      shm_ring::WithNumFragmentsAndFlags(word_, num_fragments_,
                                         shm_ring::GetFlags(word_)),
      complete ? ChunkState::kComplete : ChunkState::kAcquired);
  // release / acquire (spec 8 "Publish"); pairs with the reader's acquire
  // load of the state word / its acquire-failure.
  return Cas(desired, std::memory_order_release, std::memory_order_acquire,
             observed);
}

bool FakeWriter::Reuse(StateWord* observed) {
  // relaxed / relaxed (spec 8 "Reuse"): extends the release sequence.
  return Cas(shm_ring::WithState(word_, ChunkState::kAcquired),
             std::memory_order_relaxed, std::memory_order_relaxed, observed);
}

bool FakeWriter::Acknowledge(StateWord* observed) {
  // Acknowledges the RewriteRequested word the reader made of ours.
  word_ = shm_ring::WithState(word_, ChunkState::kRewriteRequested);
  // release / relaxed (spec 8 "Acknowledge"); pairs with the reader's
  // acq_rel reclaim.
  return Cas(shm_ring::MakeAcknowledged(), std::memory_order_release,
             std::memory_order_relaxed, observed);
}

bool FakeWriter::Cas(StateWord desired,
                     std::memory_order success,
                     std::memory_order failure,
                     StateWord* observed) {
  StateWord expected = word_;
  if (view_.chunk_state(index_)->compare_exchange_strong(expected, desired,
                                                         success, failure)) {
    word_ = desired;
    return true;
  }
  if (observed)
    *observed = expected;
  return false;
}

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace
