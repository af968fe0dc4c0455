/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/recording_sink.h"

#include <utility>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

RecordingSink::~RecordingSink() = default;

bool RecordingSink::BeginChunkFragments(ProducerID producer_id,
                                        const ClientIdentity& identity,
                                        WriterID writer_id,
                                        ChunkID chunk_id,
                                        const uint32_t* sizes,
                                        size_t num_fragments,
                                        shm_ring::ChunkFlags flags,
                                        uint8_t** frag_dst) {
  RT_CHECK(!pending_);  // Contract: at most one pending chunk.
  ++begins;
  if (reject_all) {
    ++rejects;
    return false;
  }
  pending_ = true;
  pending_chunk_ = RecordedChunk();
  pending_chunk_.producer_id = producer_id;
  pending_chunk_.identity = identity;
  pending_chunk_.writer_id = writer_id;
  pending_chunk_.chunk_id = chunk_id;
  pending_chunk_.flags = flags;
  pending_chunk_.fragments.resize(num_fragments);
  for (size_t i = 0; i < num_fragments; ++i) {
    pending_chunk_.fragments[i].resize(sizes[i]);
    frag_dst[i] = reinterpret_cast<uint8_t*>(&pending_chunk_.fragments[i][0]);
  }
  return true;
}

void RecordingSink::CommitPendingChunk() {
  RT_CHECK(pending_);
  pending_ = false;
  chunks.push_back(std::move(pending_chunk_));
}

void RecordingSink::AbortPendingChunk() {
  RT_CHECK(pending_);
  pending_ = false;
  ++aborts;
}

RecordingConsumer::~RecordingConsumer() = default;

bool RecordingConsumer::BeginChunk(const ChunkDescriptor& desc,
                                   const uint32_t* sizes,
                                   uint8_t** frag_dst) {
  RT_CHECK(!pending_);
  ++begins;
  pending_ = true;
  pending_accepted_ = !reject_all;
  if (!pending_accepted_)
    return false;
  pending_chunk_ = ConsumedChunk();
  pending_chunk_.desc = desc;
  pending_chunk_.fragments.resize(desc.num_fragments);
  for (uint32_t i = 0; i < desc.num_fragments; ++i) {
    pending_chunk_.fragments[i].resize(sizes[i]);
    frag_dst[i] = reinterpret_cast<uint8_t*>(&pending_chunk_.fragments[i][0]);
  }
  return true;
}

void RecordingConsumer::CommitChunk() {
  RT_CHECK(pending_);
  pending_ = false;
  ++commits;
  if (pending_accepted_)
    chunks.push_back(std::move(pending_chunk_));
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
