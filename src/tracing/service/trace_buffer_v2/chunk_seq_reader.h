/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ChunkSeqIterator and ChunkSeqReader: the inner, sequence-order level of
// TraceBufferV2's two-level readback walk.
//
// ChunkSeqIterator walks the chunks of one SequenceState in ChunkID order
// (following SequenceState::chunks) and tells whether the next chunk is
// contiguous (ChunkID + 1) with the current one.
//
// ChunkSeqReader reads and consumes the packets of one sequence, in sequence
// order, from the front of its queue up to and including a target chunk:
//  - kRead:  the target is the chunk the outer (buffer-order) walk reached.
//            The reader stalls (returns false and marks the sequence stalled
//            for the read pass) on a chunk that needs patches, on an
//            incomplete (scraped) chunk, and on a fragmented packet whose
//            remaining fragments are not all there yet.
//  - kErase: the target is the chunk about to be overwritten. Nothing
//            stalls: whatever cannot be read now is dropped and reported
//            (OVERWRITE); every packet read is for the overwrite observer
//            and also reported as lost to the reader of the sequence.
// Past the target, the reader only reads what finishes a packet that starts
// in the target (the first fragment of the following chunks), leaving their
// other packets in place, to keep global FIFO order.
//
// Data-loss bits are accumulated in SequenceState::pending_loss and handed out
// with the next packet returned in kRead mode.
//
// Thread model: owned and used by TraceBufferV2 on its thread only.

#ifndef SRC_TRACING_SERVICE_TRACE_BUFFER_V2_CHUNK_SEQ_READER_H_
#define SRC_TRACING_SERVICE_TRACE_BUFFER_V2_CHUNK_SEQ_READER_H_

#include <stddef.h>
#include <stdint.h>

#include "src/tracing/service/trace_buffer_v2/frag_iterator.h"
#include "src/tracing/service/trace_buffer_v2/sequence_state.h"
#include "src/tracing/service/trace_buffer_v2/tb_chunk.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace trace_buffer {

class ChunkSeqIterator {
 public:
  ChunkSeqIterator(uint8_t* buf, const SequenceState* seq, size_t index)
      : buf_(buf), seq_(seq), index_(index) {}

  bool valid() const { return index_ < seq_->chunks.size(); }
  size_t index() const { return index_; }
  uint32_t offset() const { return seq_->chunks.at(index_); }
  TBChunk* chunk() const {
    return reinterpret_cast<TBChunk*>(buf_ + seq_->chunks.at(index_));
  }

  // Moves to the next chunk in sequence order. Returns false if there is
  // none; sets *contiguous to whether its ChunkID is the current one + 1.
  bool Next(bool* contiguous) {
    const ChunkID cur = chunk()->chunk_id;
    index_++;
    if (!valid())
      return false;
    *contiguous = chunk()->chunk_id == cur + 1;  // Wraps at 2^32.
    return true;
  }

 private:
  uint8_t* buf_;
  const SequenceState* seq_;
  size_t index_;
};

// A fragment of a stored chunk, found at a read position ([TB-IDX] in
// tb_chunk.h: an entry number in an indexed chunk, a byte offset otherwise).
struct StoredFrag {
  size_t pos;            // The read position it starts at.
  size_t end;            // The read position just after it.
  uint32_t data_offset;  // Where its bytes are in the payload.
  uint32_t size;         // 0 for a drop marker.
  bool dropped;          // A writer's drop marker (never indexed).
};

// The fragment of |chunk| at read position |pos| (< valid_size, else kEnd):
// from the index if the chunk has one, else tokenized (FragIterator, which
// reports a malformed fragment as kCorrupted).
FragIterator::Result StoredFragmentAt(const TBChunk* chunk,
                                      size_t pos,
                                      StoredFrag* frag);

// How |next|, the chunk right after (ChunkID + 1) one whose last packet
// continues on the next chunk, carries that packet on:
//  - kEnds: its first fragment continues the packet and ends it; also
//    whatever makes that fragment unreadable (no fragment, malformed, a
//    scraped or unpatched v1 chunk): the packet counts as ended there;
//  - kContinues: its only fragment continues the packet, which goes on in
//    the chunk after it;
//  - kNotContinued: it does not continue the packet (or its first fragment
//    is a drop marker): the writer lost the packet's end, and counts the
//    packet as dropped itself (include/ringtrace/trace_writer_v2.h: a
//    packet that lost any part of itself is dropped, never committed).
enum class ChainStep { kEnds, kContinues, kNotContinued };
ChainStep ContinuationStep(const TBChunk* next);

class ChunkSeqReader {
 public:
  enum class Mode { kRead, kErase };

  explicit ChunkSeqReader(TraceBufferV2* tb) : tb_(tb) {}

  // Starts reading |seq| up to the chunk at |target_offset|, which must be in
  // seq->chunks.
  void Reset(SequenceState* seq, uint32_t target_offset, Mode mode);
  void Clear() { seq_ = nullptr; }
  bool active() const { return seq_ != nullptr; }
  SequenceState* seq() const { return seq_; }

  // Returns the next packet in sequence order, or false when the target has
  // been consumed or (kRead only) the sequence stalled. In kRead mode
  // *loss gets the pending DataLossReason bits (with kDataLossPresent) and
  // they are cleared; in kErase mode *loss is 0.
  bool ReadNextPacket(TracePacket* packet, uint32_t* loss);

  // kRead, right after ReadNextPacket() returned a packet: up to |max| of
  // the packets the next calls would return from the same run of plain
  // packets (see TakeFromRun()), each one slice, into |out|; returns how
  // many (0: none, or the next packet carries a loss; ReadNextPacket()
  // goes on). The packets carry no loss and none is the first on its
  // sequence. |*bytes| gets their total size. Same effects on the buffer
  // as that many ReadNextPacket() calls.
  size_t TakeRunBatch(TracePacket::Slice* out, size_t max, size_t* bytes);

  // kRead: whether the packet ReadNextPacket() just returned is the first
  // packet on its sequence with nothing lost before it (see
  // TraceBufferV2::ReadNextTracePacket()).
  bool last_packet_was_first() const { return last_first_; }

  // Tests only: false disables the fast path (TakeFromRun()).
  void set_runs_enabled(bool enabled) { runs_enabled_ = enabled; }
  // Tests only: packets returned by the fast path so far.
  uint64_t run_packets() const { return run_packets_; }

  // kErase fast path, when nobody observes overwritten packets and the target
  // is the front of its sequence: drops it without tokenizing its fragments
  // (cold in cache), reporting OVERWRITE if any of them was unread. The
  // packets lost come from the count taken at admission
  // (TBChunk::packet_count()); only a partly read chunk, or one whose count
  // is unknown, has its size headers walked (CountUnreadPackets()).
  void DropFront();

  // kErase: the packet that starts in the front chunk's last fragment,
  // continuing on the next chunk, is being erased unread. True if it counts
  // in packets_overwritten now: the chunks queued after the front end it
  // (ContinuationStep()), or a ChunkID gap hides its end. False if the
  // writer's next chunk does not continue it (the writer counts it), or if
  // its end has not arrived: the sequence then remembers it
  // (SequenceState::open_erased) for the admission of the next chunk.
  bool ErasedPacketEndsInQueue();

 private:
  enum class ReassemblyResult { kSuccess, kNotEnoughData, kDataLoss };
  // What ReadNextPacket does after ConsumeFragment.
  enum class FragStep { kNextFragment, kEmit, kStall };

  // The fragment of the front |chunk| (at |offset|) that starts at its
  // read_offset (StoredFragmentAt()); in an indexed chunk, also where a run
  // of plain packets after it ends (run_end_).
  FragIterator::Result NextFragment(uint32_t offset,
                                    TBChunk* chunk,
                                    StoredFrag* frag);
  // ReadNextPacket's step for one readable fragment |frag| of the front
  // |chunk|: skips it with its loss accounted, reassembles a packet
  // continuing on the next chunk, or fills |packet|.
  FragStep ConsumeFragment(TBChunk* chunk,
                           const StoredFrag& frag,
                           bool needs_patching,
                           TracePacket* packet);
  // ReadNextPacket's step when the front chunk has no readable fragment left
  // (|res| is the iterator's last result): reports corruption or an
  // incomplete tail, pops it. False when reading must stop (stalled, or the
  // target was popped).
  bool LeaveFrontChunk(uint32_t offset,
                       TBChunk* chunk,
                       FragIterator::Result res);

  // ReadNextPacket's fast path: while the front chunk is the indexed chunk
  // NextFragment() last found an entry in and read_offset is the entry after
  // it, the next entries up to run_end_ are returned straight from
  // the index, with exactly the effects ConsumeFragment() would have for
  // them (read_offset, drop_continuation, empty packets skipped, Emit()).
  // Everything per chunk (stall, entry, patches, first and last fragment)
  // was checked when the run was found; a fragment that needs more (the
  // last one, continuing on the next chunk) ends the run. Returns false
  // when the run does not apply or is used up: the general path goes on.
  bool TakeFromRun(TracePacket* packet, uint32_t* loss);
  // The front chunk if the run found by NextFragment() still applies to it
  // (the checks TakeFromRun() makes before taking an entry), else nullptr
  // with the run ended.
  TBChunk* RunChunk();

  TBChunk* ChunkAt(uint32_t offset) const;
  void EnterChunk(TBChunk* chunk);
  void Stall();
  void AddLoss(uint32_t bits);
  // Pops the (fully consumed) front chunk.
  void PopFront(TBChunk* chunk);
  ReassemblyResult Reassemble(TBChunk* first,
                              const StoredFrag& first_frag,
                              TracePacket* packet);
  bool Emit(TracePacket* packet, uint32_t* loss);
  // kErase: counts the front chunk in chunks_overwritten / bytes_overwritten
  // (once) if it still holds unread data.
  void CountOverwrite(uint32_t offset, const TBChunk* chunk);
  // kErase: a packet whose first fragment is being erased unread.
  void CountPacketOverwritten();
  // DropFront(): the packets of the unread fragments of |chunk|;
  // *open_last: the last of them continues on the next chunk (its end is
  // not in |chunk|).
  uint64_t CountUnreadPackets(TBChunk* chunk, bool* open_last);
  // The sequence's packet continues past chunk |last_id| and its end has
  // not arrived (see SequenceState::open_erased).
  void RememberOpenErased(ChunkID last_id);

  TraceBufferV2* const tb_;
  SequenceState* seq_ = nullptr;
  uint32_t target_ = 0;
  Mode mode_ = Mode::kRead;
  bool done_ = false;
  uint32_t last_counted_ = UINT32_MAX;  // See CountOverwrite().
  bool last_first_ = false;             // See last_packet_was_first().
  // TakeFromRun(): the indexed chunk (offset) and the entry after the one
  // NextFragment() last returned. A hint only: checked against the front
  // chunk and its read_offset.
  uint32_t index_hint_chunk_ = UINT32_MAX;
  size_t index_hint_ = 0;
  // kRead only, set by NextFragment() (0: none): the entries
  // [index_hint_, run_end_) of the chunk index_hint_chunk_ are plain
  // packets, each one fragment that neither continues from the previous
  // chunk nor on the next (see TakeFromRun()). Reset with the reader: a
  // run never outlives the read pass it was found in.
  size_t run_end_ = 0;
  bool runs_enabled_ = true;  // See set_runs_enabled().
  uint64_t run_packets_ = 0;  // See run_packets().
};

// True if |chunk| holds data a reader has not consumed yet: fragments in
// [read_offset, valid_size) ([TB-IDX]: entries or bytes), or a last fragment
// not readable yet (scraped or pending patches). Trailing empty packets are not
// data (see ValidFragmentsEnd() in trace_buffer_v2.cc).
inline bool HasUnreadData(const TBChunk* chunk) {
  return chunk->read_offset < chunk->valid_size ||
         (chunk->flags & (kTBIncomplete | kChunkNeedsPatching));
}

}  // namespace trace_buffer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_BUFFER_V2_CHUNK_SEQ_READER_H_
