/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/recording_sink.h"

#include <utility>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

uint8_t* PendingPayload::Reset(const uint32_t* sizes, size_t num_fragments) {
  sizes_.assign(sizes, sizes + num_fragments);
  size_t total = 0;
  for (uint32_t size : sizes_)
    total += size;
  // One byte more, so that an all-empty chunk still gets a valid pointer.
  bytes_.assign(total + 1, '\0');
  return reinterpret_cast<uint8_t*>(&bytes_[0]);
}

std::vector<std::string> PendingPayload::Split() const {
  std::vector<std::string> out;
  size_t pos = 0;
  for (uint32_t size : sizes_) {
    out.push_back(bytes_.substr(pos, size));
    pos += size;
  }
  return out;
}

RecordingSink::~RecordingSink() = default;

uint8_t* RecordingSink::BeginChunkFragments(ProducerID producer_id,
                                            const ClientIdentity& identity,
                                            WriterID writer_id,
                                            ChunkID chunk_id,
                                            const uint32_t* sizes,
                                            size_t num_fragments,
                                            shm_ring::ChunkFlags flags) {
  RT_CHECK(!pending_);  // Contract: at most one pending chunk.
  ++begins;
  if (reject_all) {
    ++rejects;
    return nullptr;
  }
  pending_ = true;
  pending_chunk_ = RecordedChunk();
  pending_chunk_.producer_id = producer_id;
  pending_chunk_.identity = identity;
  pending_chunk_.writer_id = writer_id;
  pending_chunk_.chunk_id = chunk_id;
  pending_chunk_.flags = flags;
  return pending_payload_.Reset(sizes, num_fragments);
}

void RecordingSink::CommitPendingChunk() {
  RT_CHECK(pending_);
  pending_ = false;
  pending_chunk_.fragments = pending_payload_.Split();
  chunks.push_back(std::move(pending_chunk_));
}

void RecordingSink::AbortPendingChunk() {
  RT_CHECK(pending_);
  pending_ = false;
  ++aborts;
}

RecordingConsumer::~RecordingConsumer() = default;

uint8_t* RecordingConsumer::BeginChunk(const ChunkDescriptor& desc,
                                       const uint32_t* sizes) {
  RT_CHECK(!pending_);
  ++begins;
  pending_ = true;
  pending_accepted_ = !reject_all;
  if (!pending_accepted_) {
    ++rejects;
    return nullptr;
  }
  pending_chunk_ = ConsumedChunk();
  pending_chunk_.desc = desc;
  return pending_payload_.Reset(sizes, desc.num_fragments);
}

void RecordingConsumer::CommitChunk() {
  RT_CHECK(pending_);
  pending_ = false;
  ++commits;
  if (pending_accepted_) {
    pending_chunk_.fragments = pending_payload_.Split();
    chunks.push_back(std::move(pending_chunk_));
  }
}

void RecordingConsumer::AbortChunk() {
  RT_CHECK(pending_);
  pending_ = false;
  ++aborts;
}

void RecordingConsumer::OnChunkDropped(uint32_t position,
                                       shm_ring::WriterID writer_id,
                                       DropReason reason) {
  dropped.push_back({position, writer_id, reason});
}

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace
