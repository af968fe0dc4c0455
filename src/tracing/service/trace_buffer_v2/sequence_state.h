/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// SequenceState: TraceBufferV2's bookkeeping for one {ProducerID, WriterID}
// sequence, and OffsetQueue, the circular queue of its chunks' offsets.
//
// Invariants (cited as [SEQ-n] in the .cc files):
//  [SEQ-1] |chunks| holds the offsets of exactly the chunks of this sequence
//          that are stored, committed and not fully consumed, sorted by
//          ChunkID (modulo 2^32, ChunkIdLess). Their IDs lie within a 2^31
//          window, so that ChunkIdLess is a total order on them.
//  [SEQ-2] Every ChunkID in |chunks| follows last_chunk_id_consumed (when
//          has_last_chunk_id): consumption is FIFO.
//  [SEQ-3] Only the front chunk may have been partially read, except for
//          the first fragment of the chunks that complete a packet started in
//          an earlier chunk (reassembly reads past the front).
//  [SEQ-4] A loss in |deferred_losses| is moved to |pending_loss| only when
//          the reader enters the first chunk whose ChunkID follows the lost
//          chunk's: a loss bit never lands on a packet written before the
//          lost data.
// There are no pointers in here: CloneReadOnly() copies it as is.

#ifndef SRC_TRACING_SERVICE_TRACE_BUFFER_V2_SEQUENCE_STATE_H_
#define SRC_TRACING_SERVICE_TRACE_BUFFER_V2_SEQUENCE_STATE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "ringtrace/logging.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2_types.h"

namespace ringtrace {
namespace trace_buffer {

// Circular queue of uint32_t with O(1) push_back / pop_front / indexing and an
// O(n) insert (only used by out-of-order commits, which are rare). Capacity is
// a power of two and grows by doubling.
class OffsetQueue {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return buf_.size(); }

  uint32_t at(size_t i) const {
    RT_DCHECK(i < size_);
    return buf_[(head_ + i) & mask_];
  }
  uint32_t front() const { return at(0); }
  uint32_t back() const { return at(size_ - 1); }

  void push_back(uint32_t v) {
    if (size_ == buf_.size())
      Grow();
    buf_[(head_ + size_) & mask_] = v;
    size_++;
  }

  void pop_front() {
    RT_DCHECK(size_ > 0);
    head_ = (head_ + 1) & mask_;
    size_--;
  }

  // Inserts |v| before position |i| (i == size() appends).
  void insert(size_t i, uint32_t v) {
    RT_DCHECK(i <= size_);
    push_back(v);
    const size_t mask = mask_;
    for (size_t k = size_ - 1; k > i; k--)
      buf_[(head_ + k) & mask] = buf_[(head_ + k - 1) & mask];
    buf_[(head_ + i) & mask] = v;
  }

  void set(size_t i, uint32_t v) {
    RT_DCHECK(i < size_);
    buf_[(head_ + i) & mask_] = v;
  }

 private:
  void Grow() {
    std::vector<uint32_t> grown(buf_.empty() ? 4 : buf_.size() * 2);
    for (size_t i = 0; i < size_; i++)
      grown[i] = at(i);
    buf_.swap(grown);
    head_ = 0;
    mask_ = buf_.size() - 1;
  }

  std::vector<uint32_t> buf_;
  size_t mask_ = 0;  // buf_.size() - 1: at() runs on every read and patch.
  size_t head_ = 0;
  size_t size_ = 0;
};

struct SequenceState {
  ProducerID producer_id = 0;
  WriterID writer_id = 0;
  ClientIdentity client_identity;

  // Offsets of the chunks, in ChunkID order ([SEQ-1]).
  OffsetQueue chunks;

  // ChunkID of chunks.back() (valid when !chunks.empty()): kept here because
  // the back chunk's header may be cold in cache.
  ChunkID back_chunk_id = 0;

  // ChunkID of the last chunk popped from |chunks| (read or overwritten),
  // to detect gaps in the ChunkID sequence.
  ChunkID last_chunk_id_consumed = 0;
  bool has_last_chunk_id = false;

  // The first ChunkID linked, the reference of the ChunkID window until a
  // chunk is consumed (see TraceBufferV2::LinkChunk()).
  ChunkID first_chunk_id = 0;
  bool has_first_chunk_id = false;

  // DataLossReason bits to report on the next packet read from the sequence.
  uint32_t pending_loss = 0;

  // Losses of chunks rejected at admission (malformed, too big, duplicate
  // ID...). Chunks of this sequence with earlier ChunkIDs may still be unread,
  // so the bits wait for the first chunk after |after| ([SEQ-4]). At most
  // kMaxDeferredLosses entries (a hostile producer could send endless
  // rejected chunks): beyond that, the new loss is merged into the entry with
  // the earliest ChunkID, so it may be reported early (never lost).
  struct DeferredLoss {
    ChunkID after;
    uint32_t bits;
  };
  static constexpr size_t kMaxDeferredLosses = 16;
  std::vector<DeferredLoss> deferred_losses;

  // A packet's start was dropped (and its loss reported): the continuation
  // fragments that follow it are expected and dropped without reporting an
  // orphan continuation.
  bool drop_continuation = false;

  // RING_BUFFER erased the start of a packet unread, and the packet goes on
  // past chunk |open_erased_after| (the last of its chunks seen), so whether
  // it counts as lost by the buffer is not known yet: only a packet its
  // writer ended is the buffer's loss. The admission of the next chunk
  // decides (TraceBufferV2::ResolveOpenErasedPacket()): one that continues
  // and ends the packet, or a ChunkID gap, counts it in
  // packets_overwritten; one that does not continue it means the writer
  // lost the packet's end and counts the packet as dropped itself, so the
  // buffer does not. If nothing comes, it never counts (the writer's packet
  // was still open, or the writer lost its end). drop_continuation is set
  // meanwhile.
  bool open_erased = false;
  ChunkID open_erased_after = 0;

  // Readback of this sequence is stalled (pending patches, incomplete chunk,
  // packet not fully there yet) for the read pass with this generation.
  uint64_t stalled_generation = ~0ull;

  // Order in which sequences became empty, for DeleteStaleEmptySequences().
  uint64_t empty_stamp = 0;

  // Something of this sequence was already returned, erased or dropped, or
  // its first chunk seen is not the writer's first (ChunkID 0): no later
  // packet can be the first packet on the sequence.
  bool past_first_packet = false;

  // Every loss not reported yet (pending and deferred), for a sequence about
  // to be deleted.
  uint32_t UnreportedLoss() const {
    uint32_t bits = pending_loss;
    for (const DeferredLoss& d : deferred_losses)
      bits |= d.bits;
    return bits;
  }

  // Records a loss of the (rejected) chunk |lost_id|, to be reported on the
  // first packet read from a chunk after it ([SEQ-4]).
  void DeferLoss(ChunkID lost_id, uint32_t bits) {
    for (DeferredLoss& d : deferred_losses) {
      if (d.after == lost_id) {
        d.bits |= bits;
        return;
      }
    }
    if (deferred_losses.size() < kMaxDeferredLosses) {
      deferred_losses.push_back(DeferredLoss{lost_id, bits});
      return;
    }
    DeferredLoss* earliest = &deferred_losses[0];
    for (DeferredLoss& d : deferred_losses) {
      if (ChunkIdLess(d.after, earliest->after))
        earliest = &d;
    }
    if (ChunkIdLess(lost_id, earliest->after))
      earliest->after = lost_id;
    earliest->bits |= bits;
  }

  // The reader enters the chunk |entered_id|: the losses of the rejected
  // chunks before it become due ([SEQ-4]).
  void ReleaseDeferredLosses(ChunkID entered_id) {
    // Bounded by kMaxDeferredLosses.
    for (size_t i = 0; i < deferred_losses.size();) {
      if (ChunkIdLess(deferred_losses[i].after, entered_id)) {
        pending_loss |= deferred_losses[i].bits;
        deferred_losses[i] = deferred_losses.back();
        deferred_losses.pop_back();
      } else {
        i++;
      }
    }
  }
};

}  // namespace trace_buffer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_BUFFER_V2_SEQUENCE_STATE_H_
