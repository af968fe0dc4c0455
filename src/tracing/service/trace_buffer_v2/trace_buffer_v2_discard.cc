/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2, DISCARD policy: the packets lost in the drainer-path
// chunks a full buffer rejects (TraceBufferStats::packets_discarded).

#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace trace_buffer {

// static
uint64_t TraceBufferV2::DiscardedPackets(size_t first_new,
                                         size_t num_fragments,
                                         TBChunkFlags flags,
                                         bool chain_in,
                                         bool* open) {
  *open = false;
  if (num_fragments <= first_new)
    return 0;
  uint64_t packets = num_fragments - first_new;
  const bool on_next = static_cast<bool>(flags & kChunkContinuesOnNext);
  if (first_new == 0 && (flags & kChunkContinuesFromPrev)) {
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

void TraceBufferV2::OnChunkDiscarded(uint32_t key,
                                     ChunkID chunk_id,
                                     size_t num_fragments,
                                     TBChunkFlags flags) {
  auto it = discard_last_chunks_.find(key);
  const DiscardLastChunk* prev =
      it != discard_last_chunks_.end() ? &it->second : nullptr;
  bool open = false;
  if (prev && prev->chunk_id == chunk_id) {
    // Offered before: its first fragments were counted (or admitted) then.
    const size_t seen = prev->fragments;
    if (num_fragments <= seen)
      return;
    // Its last fragment then was a packet going on; fragments follow it
    // now, so that packet ended there.
    if (prev->open_lost)
      stats_.packets_discarded++;
    stats_.packets_discarded +=
        DiscardedPackets(seen, num_fragments, flags, false, &open);
  } else {
    bool chain_in = false;
    if (prev && prev->continues_on_next) {
      if (prev->chunk_id + 1 == chunk_id)
        chain_in = true;
      else if (prev->open_lost && ChunkIdLess(prev->chunk_id, chunk_id))
        stats_.packets_discarded++;  // Its end may be in the chunks between.
    }
    stats_.packets_discarded +=
        DiscardedPackets(0, num_fragments, flags, chain_in, &open);
  }
  discard_last_chunks_[key] =
      DiscardLastChunk{chunk_id, num_fragments, true,
                       num_fragments && (flags & kChunkContinuesOnNext), open};
}

void TraceBufferV2::OnChunkAdmittedForDiscard(uint32_t key,
                                              ChunkID chunk_id,
                                              size_t num_fragments,
                                              TBChunkFlags flags) {
  const bool on_next = static_cast<bool>(flags & kChunkContinuesOnNext);
  discard_pending_key_ = key;
  discard_pending_lost_ = 0;
  bool open = false;
  auto it = discard_last_chunks_.find(key);
  if (it != discard_last_chunks_.end() && it->second.open_lost) {
    // A packet that lost a part in a rejected chunk goes on into this one.
    const DiscardLastChunk& prev = it->second;
    if (prev.chunk_id + 1 == chunk_id) {
      if (flags & kChunkContinuesFromPrev) {
        if (num_fragments == 1 && on_next)
          open = true;  // Still going on.
        else if (num_fragments)
          discard_pending_lost_ = 1;  // Ended here.
      }
      // Not continued: the writer lost its end and counts it.
    } else if (ChunkIdLess(prev.chunk_id, chunk_id)) {
      discard_pending_lost_ = 1;  // Its end may be in the chunks between.
    }
  }
  discard_pending_ = DiscardLastChunk{chunk_id, num_fragments, false,
                                      num_fragments && on_next, open};
}

}  // namespace trace_buffer
}  // namespace ringtrace
