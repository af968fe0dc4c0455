/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2's two write paths: CopyChunkUntrusted() (a whole v1 chunk,
// tokenized here) and the ring drainer's BeginChunkFragments() /
// CopyChunkFragments() (fragments whose sizes the drainer already knows).
// Buffer invariants [TB-n] are stated in trace_buffer_v2.cc.

#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

#include <string.h>

#include <algorithm>

#include "ringtrace/logging.h"
#include "src/base/checked_math.h"
#include "src/tracing/service/trace_buffer_v2/frag_iterator.h"
#include "src/tracing/service/trace_buffer_v2/tb_chunk.h"

namespace ringtrace {
namespace trace_buffer {

namespace {

// True if the fragment of |size| bytes at |index| (of |num_frags|) matters
// to a reader: it carries bytes, or it is a link of a fragment chain (the
// first continuing a packet, the last continuing on the next chunk).
bool FragmentMatters(size_t index,
                     size_t num_frags,
                     uint32_t size,
                     bool continues_from_prev,
                     bool continues_on_next) {
  return size != 0 || (index == 0 && continues_from_prev) ||
         (index + 1 == num_frags && continues_on_next);
}

// True if the fragment starts a packet that counts as lost if erased unread
// (see ChunkSeqReader::CountUnreadPackets(), which this must match).
bool StartsCountedPacket(size_t index,
                         size_t num_frags,
                         uint32_t size,
                         bool continues_from_prev,
                         bool continues_on_next) {
  if (index == 0 && continues_from_prev)
    return false;  // The end of a packet started earlier.
  return size != 0 || (index + 1 == num_frags && continues_on_next);
}

// What BeginChunkFragments() needs to know of a drainer chunk's fragment
// sizes, in one pass over them.
struct DrainerChunkShape {
  // Every fragment's bytes plus 4 (its index entry, as much as its size
  // header in the v1 format): the v1 limits apply to this.
  size_t limit_size = 0;
  // All the fragments' bytes: those of the first |index_size| (the ones
  // after are empty).
  size_t payload_bytes = 0;
  // The fragments up to the last that matters (FragmentMatters()), as in
  // CopyChunkUntrusted(): the empty ones after it are never read and not
  // stored.
  size_t index_size = 0;
  // StartsCountedPacket() fragments.
  size_t packets = 0;
};

// Measures |n| fragment sizes. False if one is a drop marker or more (the
// drainer never sends those) or the chunk exceeds kMaxChunkPayloadSize.
bool MeasureDrainerChunk(const uint32_t* sizes,
                         size_t n,
                         bool from_prev,
                         bool on_next,
                         DrainerChunkShape* shape) {
  size_t limit_size = 0;
  size_t nonempty = 0;
  size_t last_nonempty = 0;  // Index + 1; 0: none.
  for (size_t i = 0; i < n; i++) {
    const uint32_t size = sizes[i];
    // No overflow: limit_size <= kMaxChunkPayloadSize before the add, and
    // size < 2^28.
    if (size >= kPacketSizeDropPacket)
      return false;
    limit_size += 4u + size;
    if (limit_size > kMaxChunkPayloadSize)
      return false;
    nonempty += size != 0;
    last_nonempty = size != 0 ? i + 1 : last_nonempty;
  }
  shape->limit_size = limit_size;
  shape->payload_bytes = limit_size - 4 * n;
  // FragmentMatters(): a fragment with bytes, and the chain links at both
  // ends whatever their size.
  size_t index_size = last_nonempty;
  if (n && from_prev)
    index_size = std::max<size_t>(index_size, 1);
  if (n && on_next)
    index_size = n;
  shape->index_size = index_size;
  // StartsCountedPacket(): every fragment with bytes except a first one
  // continuing from the previous chunk, plus an empty last one continuing on
  // the next chunk (unless that is the same first fragment).
  size_t packets = nonempty;
  if (n && from_prev && sizes[0] != 0)
    packets--;
  if (n && on_next && sizes[n - 1] == 0 && !(n == 1 && from_prev))
    packets++;
  shape->packets = packets;
#if RT_DCHECK_IS_ON
  size_t want_index = 0;
  size_t want_packets = 0;
  for (size_t i = 0; i < n; i++) {
    if (FragmentMatters(i, n, sizes[i], from_prev, on_next))
      want_index = i + 1;
    want_packets += StartsCountedPacket(i, n, sizes[i], from_prev, on_next);
  }
  RT_DCHECK(want_index == index_size && want_packets == packets);
#endif
  return true;
}

// Tokenizes the first |num_frags| fragments of payload[0, size). Returns the
// end of the last complete one; *corrupted if one was malformed.
// *trimmed_end: the end of the last fragment that matters (FragmentMatters,
// or a dropped-packet marker); the empty packets after it carry nothing.
// *packets: StartsCountedPacket() fragments, or kPacketCountUnknown if there
// is a drop marker.
// |index| gets the fragment index entries of the fragments (at most
// kMaxFragIndexEntries); *index_size: the number of those up to
// *trimmed_end, 0 if the chunk cannot have an index (drop marker, too many
// fragments).
size_t ValidFragmentsEnd(const uint8_t* payload,
                         size_t size,
                         size_t num_frags,
                         bool continues_from_prev,
                         bool continues_on_next,
                         bool* corrupted,
                         size_t* trimmed_end,
                         size_t* packets,
                         std::vector<FragIndexEntry>* index,
                         size_t* index_size) {
  *corrupted = false;
  *trimmed_end = 0;
  *packets = 0;
  *index_size = 0;
  index->clear();
  size_t recorded = 0;  // Entries in |index|; > kMax...: no index.
  FragIterator it(payload, 0, size);
  FragIterator::Frag frag;
  // Bounded by num_frags (and by size: each fragment has a header byte).
  for (size_t i = 0; i < num_frags; i++) {
    FragIterator::Result res = it.Next(&frag);
    if (res != FragIterator::Result::kOk) {
      *corrupted = true;  // Malformed, or fewer fragments than declared.
      break;
    }
    if (recorded < kMaxFragIndexEntries) {
      // Payload offsets fit in 16 bits (kMaxChunkPayloadSize).
      index->push_back(FragIndexEntry{static_cast<uint16_t>(frag.data_offset),
                                      static_cast<uint16_t>(frag.size)});
    }
    recorded++;
    if (frag.dropped)
      recorded = kMaxFragIndexEntries + 1;  // Not representable: no index.
    if (frag.dropped ||
        FragmentMatters(i, num_frags, frag.size, continues_from_prev,
                        continues_on_next)) {
      *trimmed_end = it.pos();
      if (recorded <= kMaxFragIndexEntries)
        *index_size = recorded;
    }
    if (frag.dropped) {
      *packets = kPacketCountUnknown;
    } else if (*packets != kPacketCountUnknown &&
               StartsCountedPacket(i, num_frags, frag.size, continues_from_prev,
                                   continues_on_next)) {
      ++*packets;
    }
  }
  // An index must cover every fragment up to *trimmed_end: none if a drop
  // marker or too many fragments came after the last one recorded.
  if (recorded > kMaxFragIndexEntries)
    *index_size = 0;
  return it.pos();
}

}  // namespace

// ---- v1 write path ----------------------------------------------------------

bool TraceBufferV2::CopyChunkUntrusted(ProducerID producer_id,
                                       const ClientIdentity& client_identity,
                                       WriterID writer_id,
                                       ChunkID chunk_id,
                                       uint16_t num_fragments,
                                       TBChunkFlags chunk_flags,
                                       bool chunk_complete,
                                       const uint8_t* src,
                                       size_t size) {
  if (!BeginWrite())
    return false;
  // The v1 ABI's bits are stored as they are (tb_chunk.h); the others are
  // the buffer's own.
  TBChunkFlags flags = chunk_flags & kV1AdmissionMask;
  if ((!src && size) || size > kMaxChunkPayloadSize ||
      TBChunk::OuterSizeForPayload(size) > size_) {
    RejectChunk(producer_id, client_identity, writer_id, chunk_id);
    return false;
  }

  // A scraped chunk's last fragment may still be being written: never read.
  const size_t readable_frags = chunk_complete
                                    ? num_fragments
                                    : (num_fragments ? num_fragments - 1u : 0u);
  bool corrupted = false;
  size_t trimmed_end = 0;
  size_t packets = 0;
  size_t index_size = 0;
  size_t valid_size = ValidFragmentsEnd(
      src, size, readable_frags,
      static_cast<bool>(flags & kChunkContinuesFromPrev),
      static_cast<bool>(flags & kChunkContinuesOnNext), &corrupted,
      &trimmed_end, &packets, &scratch_index_, &index_size);
  if (corrupted)
    stats_.abi_violations++;
  // Trailing empty packets are left out of the readable range, so that "the
  // chunk has unread data" (HasUnreadData) means unread packets: erasing such
  // a chunk reports OVERWRITE only if something was lost. Only for complete,
  // well-formed chunks without pending patches (a recommit or a patch may
  // still need those bytes).
  const size_t readable_end =
      chunk_complete && !corrupted && !(flags & kChunkNeedsPatching)
          ? trimmed_end
          : valid_size;

  if (!chunk_complete)
    flags |= kTBIncomplete;
  if (corrupted)
    flags |= kTBCorrupted;

  SequenceState* seq =
      GetOrCreateSequence(producer_id, writer_id, client_identity);
  const size_t idx = FindChunkIndex(*seq, chunk_id);
  if (idx != seq->chunks.size())
    return Recommit(seq, idx, flags, src, size, valid_size, readable_end);
  valid_size = readable_end;

  // A complete chunk stores only its fragments; a scraped one reserves the
  // whole payload so that its recommit fits in place. A final chunk (no
  // patch, recommit or drop marker can change how it reads) may get a
  // fragment index, stored before its fragments (tb_chunk.h).
  const size_t payload_size = chunk_complete ? valid_size : size;
  const bool is_final =
      !(flags & (kTBIncomplete | kTBCorrupted | kChunkNeedsPatching));
  const bool with_index = is_final && GetsFragIndex(valid_size, index_size);
  const size_t stored_size =
      with_index ? TBChunk::StoredSizeWithIndex(valid_size, index_size)
                 : payload_size;
  size_t offset = 0;
  if (!ReserveAt(TBChunk::OuterSizeForPayload(stored_size), &offset)) {
    return false;
  }
  TBChunk* chunk = ChunkAt(offset);
  if (with_index)
    flags |= kTBFragIndex;
  chunk->flags = flags;
  // Exact only for a final, well-formed chunk (readable_end is then the
  // trimmed end, which only drops empty packets).
  chunk->SetPacketCount(
      (flags & (kTBIncomplete | kTBCorrupted | kChunkNeedsPatching))
          ? kPacketCountUnknown
          : packets);
  chunk->size_field = static_cast<uint16_t>(stored_size);
  chunk->chunk_id = chunk_id;
  chunk->producer_id = producer_id;
  chunk->writer_id = writer_id;
  // [TB-IDX]: an indexed chunk counts its entries; payload() depends on it.
  chunk->valid_size =
      static_cast<uint16_t>(with_index ? index_size : valid_size);
  chunk->read_offset = 0;
  if (payload_size)
    memcpy(chunk->payload(), src, payload_size);
  if (with_index)
    WriteFragIndex(chunk, scratch_index_.data(), index_size);
  // ReserveAt() may have erased chunks, but never a SequenceState (they are
  // deleted only in DeleteStaleEmptySequences()): |seq| is still valid.
  if (!LinkChunk(seq, offset))
    return false;
  DebugSetChecksum(offset);
  stats_.chunks_written++;
  stats_.bytes_written += chunk->outer_size();
  return true;
}

// The only legal recommit: a scraped (incomplete) chunk committed again, with
// the same payload size, content unchanged in the part already consumed. It
// replaces the chunk in place and may extend it.
bool TraceBufferV2::Recommit(SequenceState* seq,
                             size_t idx,
                             TBChunkFlags flags,
                             const uint8_t* src,
                             size_t size,
                             size_t valid_size,
                             size_t readable_end) {
  TBChunk* chunk = ChunkAt(seq->chunks.at(idx));
  const size_t consumed = chunk->read_offset;
  bool ok = (chunk->flags & kTBIncomplete) && size == chunk->payload_size() &&
            consumed <= valid_size;
  if (ok && consumed) {
    // The consumed prefix must be the same bytes, ending on a fragment
    // boundary of the new content.
    FragIterator it(src, 0, valid_size);
    FragIterator::Frag frag;
    while (it.pos() < consumed && it.Next(&frag) == FragIterator::Result::kOk) {
    }
    ok = it.pos() == consumed && memcmp(chunk->payload(), src, consumed) == 0;
  }
  if (!ok) {
    stats_.abi_violations++;
    if (chunk->flags & kTBIncomplete) {
      // Bad recommit of a scraped chunk: end its stall, keep what was read;
      // CHUNK_CORRUPTED is reported right after its last readable fragment.
      chunk->flags &= ~kTBIncomplete;
      chunk->flags |= kTBCorrupted;
    } else {
      seq->DeferLoss(chunk->chunk_id, kDataLossChunkCorrupted);
    }
    return false;
  }
  // Keep the local read state, take the new ABI flags.
  const TBChunkFlags kept = chunk->flags & (kTBEntered | kChunkDataLoss);
  chunk->flags = flags | kept;
  chunk->SetPacketCount(kPacketCountUnknown);  // Partly consumed: tokenize.
  // The consumed prefix may already cover the trailing empty packets.
  chunk->valid_size = static_cast<uint16_t>(
      std::max(readable_end, static_cast<size_t>(consumed)));
  if (size > consumed)
    memcpy(chunk->payload() + consumed, src + consumed, size - consumed);
  seq->stalled_generation = ~0ull;
  DebugSetChecksum(seq->chunks.at(idx));
  stats_.chunks_rewritten++;
  stats_.bytes_written += size - consumed;
  return true;
}

// ---- Ring drainer write path ------------------------------------------------

uint8_t* TraceBufferV2::BeginChunkFragments(
    ProducerID producer_id,
    const ClientIdentity& client_identity,
    WriterID writer_id,
    ChunkID chunk_id,
    const uint32_t* sizes,
    size_t num_fragments,
    TBChunkFlags flags) {
  if (!BeginWrite())
    return nullptr;
  const bool from_prev = static_cast<bool>(flags & kChunkContinuesFromPrev);
  const bool on_next = static_cast<bool>(flags & kChunkContinuesOnNext);
  DrainerChunkShape shape;
  if ((num_fragments && !sizes) ||
      !MeasureDrainerChunk(sizes, num_fragments, from_prev, on_next, &shape) ||
      TBChunk::OuterSizeForPayload(shape.limit_size) > size_) {
    RejectChunk(producer_id, client_identity, writer_id, chunk_id);
    return nullptr;
  }
  SequenceState* seq =
      GetOrCreateSequence(producer_id, writer_id, client_identity);
  if (FindChunkIndex(*seq, chunk_id) != seq->chunks.size()) {
    // The drainer never recommits (its chunks are always complete).
    RejectChunk(producer_id, client_identity, writer_id, chunk_id);
    return nullptr;
  }
  const size_t index_size = shape.index_size;
  const size_t payload_bytes = shape.payload_bytes;
  const size_t packets = shape.packets;
  // Always indexed, with a bare payload (tb_chunk.h).
  const size_t stored_size =
      TBChunk::StoredSizeWithIndex(payload_bytes, index_size);
  size_t offset = 0;
  if (!ReserveAt(TBChunk::OuterSizeForPayload(stored_size), &offset)) {
    // Only a full DISCARD buffer refuses room (chunks_discarded).
    if (policy_ == OverwritePolicy::kDiscard)
      OnChunkDiscarded(SeqKey(producer_id, writer_id), chunk_id, num_fragments,
                       flags);
    return nullptr;
  }
  if (policy_ == OverwritePolicy::kDiscard)
    OnChunkAdmittedForDiscard(SeqKey(producer_id, writer_id), chunk_id,
                              num_fragments, flags);
  TBChunk* chunk = ChunkAt(offset);
  // The admission bits are stored as they are (tb_chunk.h).
  chunk->flags = (flags & kFragmentAdmissionMask) | kTBPending | kTBFragIndex;
  chunk->SetPacketCount(packets);
  chunk->size_field = static_cast<uint16_t>(stored_size);
  chunk->chunk_id = chunk_id;
  chunk->producer_id = producer_id;
  chunk->writer_id = writer_id;
  chunk->valid_size = static_cast<uint16_t>(index_size);  // [TB-IDX]
  chunk->read_offset = 0;
  FragIndexEntry* const index = chunk->frag_index();
  // Offsets fit in 16 bits: payload_bytes <= kMaxChunkPayloadSize.
  size_t pos = 0;
  for (size_t i = 0; i < index_size; i++) {
    index[i] = FragIndexEntry{static_cast<uint16_t>(pos),
                              static_cast<uint16_t>(sizes[i])};
    pos += sizes[i];
  }
  has_pending_ = true;
  pending_offset_ = offset;
  return chunk->payload();
}

void TraceBufferV2::CommitPendingChunk() {
  RT_CHECK(has_pending_);
  has_pending_ = false;
  TBChunk* chunk = ChunkAt(pending_offset_);
  chunk->flags &= ~kTBPending;
  SequenceState* seq = FindSequence(chunk->producer_id, chunk->writer_id);
  RT_CHECK(seq);  // Created by BeginChunkFragments, not deleted since.
  const size_t outer = chunk->outer_size();
  const bool writer_lost_data =
      static_cast<bool>(chunk->flags & kChunkDataLoss);
  if (policy_ == OverwritePolicy::kDiscard) {
    stats_.packets_discarded += discard_pending_lost_;
    discard_last_chunks_[discard_pending_key_] = discard_pending_;
  }
  if (!LinkChunk(seq, pending_offset_))
    return;
  DebugSetChecksum(pending_offset_);
  stats_.chunks_written++;
  stats_.bytes_written += outer;
  // The writer lost data before this chunk (e.g. its ring was full).
  if (writer_lost_data)
    stats_.trace_writer_packet_loss++;
}

void TraceBufferV2::AbortPendingChunk() {
  RT_CHECK(has_pending_);
  has_pending_ = false;
  WritePadding(pending_offset_, ChunkAt(pending_offset_)->outer_size());
}

bool TraceBufferV2::CopyChunkFragments(ProducerID producer_id,
                                       const ClientIdentity& client_identity,
                                       WriterID writer_id,
                                       ChunkID chunk_id,
                                       const FragmentRef* fragments,
                                       size_t num_fragments,
                                       TBChunkFlags flags) {
  if (num_fragments > kMaxChunkPayloadSize / 4 ||
      (num_fragments && !fragments)) {
    if (!BeginWrite())
      return false;
    RejectChunk(producer_id, client_identity, writer_id, chunk_id);
    return false;
  }
  scratch_sizes_.resize(num_fragments);  // Bounded above.
  for (size_t i = 0; i < num_fragments; i++)
    scratch_sizes_[i] = fragments[i].size;
  uint8_t* dst =
      BeginChunkFragments(producer_id, client_identity, writer_id, chunk_id,
                          scratch_sizes_.data(), num_fragments, flags);
  if (!dst)
    return false;
  for (size_t i = 0; i < num_fragments; i++) {
    if (scratch_sizes_[i])
      memcpy(dst, fragments[i].data, scratch_sizes_[i]);
    dst += scratch_sizes_[i];
  }
  CommitPendingChunk();
  return true;
}

}  // namespace trace_buffer
}  // namespace ringtrace
