/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/trace_buffer_v2_sink.h"

#include <algorithm>

namespace ringtrace {
namespace traced {

TraceBufferV2Sink::~TraceBufferV2Sink() = default;

uint8_t* TraceBufferV2Sink::BeginChunkFragments(
    ProducerID producer_id,
    const trace_buffer::ClientIdentity& identity,
    WriterID writer_id,
    ChunkID chunk_id,
    const uint32_t* sizes,
    size_t num_fragments,
    shm_ring::ChunkFlags flags) {
  const uint64_t discarded_before = buffer_->stats().chunks_discarded;
  uint8_t* const dst =
      buffer_->BeginChunkFragments(producer_id, identity, writer_id, chunk_id,
                                   sizes, num_fragments, MapChunkFlags(flags));
  if (!discard_)
    return dst;
  const uint64_t key = Key(producer_id, writer_id);
  if (dst) {
    pending_key_ = key;
    pending_ = LastChunk{chunk_id, num_fragments, false};
    return dst;
  }
  if (buffer_->stats().chunks_discarded == discarded_before)
    return nullptr;  // refused for another reason, counted by the buffer
  // Fragments whose packets are counted already (lost or in the buffer).
  size_t seen = 0;
  auto it = last_chunks_.find(key);
  if (it != last_chunks_.end() && it->second.chunk_id == chunk_id) {
    // Offered before: its first fragments were committed or counted then.
    seen = it->second.fragments;
  } else if (flags & shm_ring::kFlagContinuesFromPrev) {
    // The first fragment ends a packet begun in the writer's previous
    // chunk: counted already if that one was rejected too, else its head
    // is in the buffer and the packet is lost here.
    seen = (it != last_chunks_.end() && it->second.rejected) ? 1 : 0;
  }
  if (num_fragments > seen)
    packets_discarded_ += num_fragments - seen;
  last_chunks_[key] = LastChunk{chunk_id, std::max(num_fragments, seen), true};
  return nullptr;
}

void TraceBufferV2Sink::CommitPendingChunk() {
  buffer_->CommitPendingChunk();
  if (discard_)
    last_chunks_[pending_key_] = pending_;
}

void TraceBufferV2Sink::AbortPendingChunk() {
  buffer_->AbortPendingChunk();
}

}  // namespace traced
}  // namespace ringtrace
