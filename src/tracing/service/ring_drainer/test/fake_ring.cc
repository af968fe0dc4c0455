/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/fake_ring.h"

#include <stdlib.h>
#include <string.h>

#include "ringtrace/logging.h"

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
  // (8.3 W-load-read-pos) and (8.4 W-reserve), as RingWriter does them.
  const uint32_t read_pos = shm_ring::WriterLoadReadPos(*view_.read_pos());
  uint32_t w = shm_ring::WriterLoadWritePos(*view_.write_pos());
  for (;;) {
    if (g.IsFull(w, read_pos))
      return false;
    if (shm_ring::WriterReserve(*view_.write_pos(), w, w + 1)) {
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
  // (8.5 W-claim).
  if (shm_ring::WriterClaim(*view_.chunk_state(index_), expected, acquired)) {
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
  // (8.7 W-publish). With |complete| false the word stays Acquired with the
  // new count: not an edge of the 5.1 graph (RingWriter publishes by going
  // Complete), but a word a reader must be able to scrape, so the reader's
  // tests build it; it takes the publication's orders.
  return Cas(&shm_ring::WriterPublish, desired, observed);
}

bool FakeWriter::Reuse(StateWord* observed) {
  // (8.8 W-reuse).
  return Cas(&shm_ring::WriterReuse,
             shm_ring::WithState(word_, ChunkState::kAcquired), observed);
}

bool FakeWriter::Acknowledge(StateWord* observed) {
  // Acknowledges the RewriteRequested word the reader made of ours.
  word_ = shm_ring::WithState(word_, ChunkState::kRewriteRequested);
  // (8.10 W-acknowledge).
  StateWord expected = word_;
  if (shm_ring::WriterAcknowledge(*view_.chunk_state(index_), expected)) {
    word_ = shm_ring::MakeAcknowledged();
    return true;
  }
  if (observed)
    *observed = expected;
  return false;
}

bool FakeWriter::Cas(CasRow row, StateWord desired, StateWord* observed) {
  StateWord expected = word_;
  if (row(*view_.chunk_state(index_), expected, desired)) {
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
