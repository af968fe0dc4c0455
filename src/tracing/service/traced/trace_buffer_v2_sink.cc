/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/trace_buffer_v2_sink.h"

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
  const uint32_t key = Key(producer_id, writer_id);
  if (dst) {
    OnAdmitted(key, chunk_id, num_fragments, flags);
    return dst;
  }
  if (buffer_->stats().chunks_discarded == discarded_before)
    return nullptr;  // refused for another reason, counted by the buffer
  OnDiscarded(key, chunk_id, num_fragments, flags);
  return nullptr;
}

// static
uint64_t TraceBufferV2Sink::RejectedPackets(size_t first_new,
                                            size_t num_fragments,
                                            shm_ring::ChunkFlags flags,
                                            bool chain_in,
                                            bool* open) {
  *open = false;
  if (num_fragments <= first_new)
    return 0;
  uint64_t packets = num_fragments - first_new;
  const bool on_next =
      static_cast<bool>(flags & shm_ring::kFlagContinuesOnNext);
  if (first_new == 0 && (flags & shm_ring::kFlagContinuesFromPrev)) {
    // Fragment 0 carries on a packet begun before. One whose start this
    // buffer never had (an orphan) is not its loss.
    if (!chain_in || (num_fragments == 1 && on_next)) {
      packets--;
      *open = chain_in;  // It goes on past this chunk too.
      return packets;
    }
  }
  if (on_next) {
    packets--;  // Counted once its end comes.
    *open = true;
  }
  return packets;
}

void TraceBufferV2Sink::OnDiscarded(uint32_t key,
                                    ChunkID chunk_id,
                                    size_t num_fragments,
                                    shm_ring::ChunkFlags flags) {
  auto it = last_chunks_.find(key);
  const LastChunk* prev = it != last_chunks_.end() ? &it->second : nullptr;
  bool open = false;
  if (prev && prev->chunk_id == chunk_id) {
    // Offered before: its first fragments were counted (or admitted) then.
    const size_t seen = prev->fragments;
    if (num_fragments <= seen)
      return;
    // Its last fragment then was a packet going on; fragments follow it
    // now, so that packet ended there.
    if (prev->open_lost)
      packets_discarded_++;
    packets_discarded_ +=
        RejectedPackets(seen, num_fragments, flags, false, &open);
  } else {
    bool chain_in = false;
    if (prev && prev->continues_on_next) {
      if (prev->chunk_id + 1 == chunk_id)
        chain_in = true;
      else if (prev->open_lost &&
               trace_buffer::ChunkIdLess(prev->chunk_id, chunk_id))
        packets_discarded_++;  // Its end may be in the chunks lost between.
    }
    packets_discarded_ +=
        RejectedPackets(0, num_fragments, flags, chain_in, &open);
  }
  last_chunks_[key] = LastChunk{
      chunk_id, num_fragments, true,
      num_fragments && (flags & shm_ring::kFlagContinuesOnNext), open};
}

void TraceBufferV2Sink::OnAdmitted(uint32_t key,
                                   ChunkID chunk_id,
                                   size_t num_fragments,
                                   shm_ring::ChunkFlags flags) {
  const bool on_next =
      static_cast<bool>(flags & shm_ring::kFlagContinuesOnNext);
  pending_key_ = key;
  pending_lost_ = 0;
  bool open = false;
  auto it = last_chunks_.find(key);
  if (it != last_chunks_.end() && it->second.open_lost) {
    // A packet that lost a part in a rejected chunk goes on into this one.
    const LastChunk& prev = it->second;
    if (prev.chunk_id + 1 == chunk_id) {
      if (flags & shm_ring::kFlagContinuesFromPrev) {
        if (num_fragments == 1 && on_next)
          open = true;  // Still going on.
        else if (num_fragments)
          pending_lost_ = 1;  // Ended here.
      }
      // Not continued: the writer lost its end and counts it.
    } else if (trace_buffer::ChunkIdLess(prev.chunk_id, chunk_id)) {
      pending_lost_ = 1;  // Its end may be in the chunks lost between.
    }
  }
  pending_ =
      LastChunk{chunk_id, num_fragments, false, num_fragments && on_next, open};
}

void TraceBufferV2Sink::CommitPendingChunk() {
  buffer_->CommitPendingChunk();
  if (discard_) {
    packets_discarded_ += pending_lost_;
    last_chunks_[pending_key_] = pending_;
  }
}

void TraceBufferV2Sink::AbortPendingChunk() {
  buffer_->AbortPendingChunk();
}

}  // namespace traced
}  // namespace ringtrace
