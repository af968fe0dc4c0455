/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2, continued: patches, readback and clone (the write side and
// the sequence bookkeeping are in trace_buffer_v2.cc). One class, two files
// so that neither grows past a reader's attention span.

#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

#include <string.h>

#include <algorithm>

#include "ringtrace/logging.h"
#include "src/base/checked_math.h"
#include "src/tracing/service/trace_buffer_v2/chunk_seq_reader.h"
#include "src/tracing/service/trace_buffer_v2/frag_iterator.h"
#include "src/tracing/service/trace_buffer_v2/tb_chunk.h"

namespace ringtrace {
namespace trace_buffer {

// ---- Patches ----------------------------------------------------------------

bool TraceBufferV2::TryPatchChunkContents(ProducerID producer_id,
                                          WriterID writer_id,
                                          ChunkID chunk_id,
                                          const Patch* patches,
                                          size_t num_patches,
                                          bool other_patches_pending) {
  RT_CHECK(!has_pending_);
  if (read_only_)
    return false;
  SequenceState* seq = FindSequence(producer_id, writer_id);
  uint32_t offset = 0;
  if (!seq || FindChunkIndex(*seq, chunk_id, &offset) == seq->chunks.size()) {
    stats_.patches_failed++;  // The chunk is gone (read or overwritten).
    return false;
  }
  TBChunk* chunk = ChunkAt(offset);
  bool ok =
      (chunk->flags & kChunkNeedsPatching) && (num_patches == 0 || patches);
  for (size_t i = 0; ok && i < num_patches; i++) {
    const size_t off = patches[i].offset_untrusted;
    ok = off >= chunk->read_offset &&
         base::RangeInBounds(off, 4, chunk->payload_size());
  }
  if (!ok) {
    // All-or-nothing: nothing is applied and the chunk is left as it was
    // (bytes, pending patches, stall), so that a later valid patch still
    // applies. If none ever comes, the chunk is read or erased with its last
    // fragment dropped and reported like any unpatched chunk.
    stats_.patches_failed++;
    if (chunk->flags & kChunkNeedsPatching)
      stats_.abi_violations++;  // A patch outside the chunk.
    return false;
  }
  for (size_t i = 0; i < num_patches; i++)
    memcpy(chunk->payload() + patches[i].offset_untrusted, patches[i].data, 4);
  DebugSetChecksum(offset);
  stats_.patches_succeeded += num_patches;
  if (!other_patches_pending) {
    chunk->flags &= ~kChunkNeedsPatching;
    seq->stalled_generation = ~0ull;  // Readable again in this pass.
  }
  return true;
}

// ---- Readback (outer, buffer-order walk) ------------------------------------

void TraceBufferV2::BeginRead() {
  RT_DCHECK(!has_pending_);
  DeleteStaleEmptySequences(kKeepLastEmptySeq);
  read_generation_++;
  reader_->Clear();
  // The oldest data is just after the write cursor ([TB-2]); the pass
  // starts after the chunks consumed there ([TB-4]).
  CheckConsumedPrefix();
  RT_CHECK(consumed_prefix_ <= data_end_);
  rd_ = (wr_ < data_end_ ? wr_ : 0) + consumed_prefix_;
  if (rd_ >= data_end_)
    rd_ -= data_end_;  // Wraps at data_end_ (0 < data_end_ here, or rd_ 0).
  rd_bytes_left_ = data_end_ - consumed_prefix_;
  pass_in_prefix_ = skip_consumed_prefix_;
  read_write_generation_ = write_generation_;
}

void TraceBufferV2::NoteWalkedPast(size_t offset) {
  if (!pass_in_prefix_)
    return;
  if (ChunkAt(offset)->flags & (kTBPadding | kTBConsumed))
    consumed_prefix_ = data_end_ - rd_bytes_left_;  // Up to rd_.
  else
    pass_in_prefix_ = false;
}

void TraceBufferV2::CheckConsumedPrefix() const {
#if RT_DCHECK_IS_ON
  size_t off = wr_ < data_end_ ? wr_ : 0;
  size_t walked = 0;
  // Bounded: each step advances by a non-zero outer size ([TB-1]).
  while (walked < consumed_prefix_) {
    if (off >= data_end_)
      off = 0;
    const TBChunk* chunk = reinterpret_cast<const TBChunk*>(buf_ + off);
    RT_DCHECK(chunk->flags & (kTBPadding | kTBConsumed));
    const size_t outer = chunk->outer_size();
    RT_DCHECK(outer >= 4);
    off += outer;
    walked += outer;
  }
  RT_DCHECK(walked == consumed_prefix_);  // A chunk boundary.
#endif
}

bool TraceBufferV2::ReadNextTracePacket(
    TracePacket* packet,
    PacketSequenceProperties* sequence_properties,
    uint32_t* previous_packet_dropped) {
  bool unused_first = false;
  return ReadNextTracePacket(packet, sequence_properties,
                             previous_packet_dropped, &unused_first);
}

bool TraceBufferV2::ReadNextTracePacket(
    TracePacket* packet,
    PacketSequenceProperties* sequence_properties,
    uint32_t* previous_packet_dropped,
    bool* first_packet_on_sequence) {
  RT_DCHECK(!has_pending_);
  *first_packet_on_sequence = false;
  if (read_write_generation_ != write_generation_)
    BeginRead();  // Writes since the last pass moved the data: restart.
  // Bounded: every iteration either returns or advances rd_ by a chunk,
  // for at most data_end_ bytes.
  for (;;) {
    if (reader_->active()) {
      uint32_t loss = 0;
      if (reader_->ReadNextPacket(packet, &loss)) {
        const SequenceState* seq = reader_->seq();
        sequence_properties->producer_id_trusted = seq->producer_id;
        sequence_properties->writer_id = seq->writer_id;
        sequence_properties->client_identity_trusted = seq->client_identity;
        *previous_packet_dropped = loss;
        *first_packet_on_sequence = reader_->last_packet_was_first();
        stats_.bytes_read += packet->size();
        return true;
      }
      reader_->Clear();
      NoteWalkedPast(walk_target_);
    }
    if (rd_bytes_left_ == 0) {
      packet->Clear();
      return false;
    }
    if (rd_ >= data_end_)
      rd_ = 0;
    TBChunk* chunk = ChunkAt(rd_);
    const size_t offset = rd_;
    const size_t outer = chunk->outer_size();
    RT_CHECK(outer >= 4 && outer <= rd_bytes_left_);
    rd_ += outer;
    rd_bytes_left_ -= outer;
    if (chunk->flags & (kTBPadding | kTBConsumed | kTBPending)) {
      NoteWalkedPast(offset);
      continue;
    }
    SequenceState* seq = FindSequence(chunk->producer_id, chunk->writer_id);
    RT_CHECK(seq);  // [TB-3]
    if (seq->stalled_generation == read_generation_) {
      pass_in_prefix_ = false;  // Left unread.
      continue;
    }
    walk_target_ = offset;
    PrefetchChunkHead(rd_);
    reader_->Reset(seq, static_cast<uint32_t>(offset),
                   ChunkSeqReader::Mode::kRead);
  }
}

size_t TraceBufferV2::ReadMorePacketsOfRun(TracePacket::Slice* out,
                                           size_t max) {
  RT_DCHECK(!has_pending_);
  if (read_write_generation_ != write_generation_)
    return 0;  // ReadNextTracePacket() restarts the pass.
  size_t bytes = 0;
  const size_t n = reader_->TakeRunBatch(out, max, &bytes);
  stats_.bytes_read += bytes;
  return n;
}

// The chunk after the one the outer walk enters is the next one it visits
// (and, for a writer with consecutive chunks, the one reassembly reads the
// first fragment of). Its header was written long ago: in a large buffer it
// is a cache miss, often with a TLB miss (one chunk per 4 KiB page). A reader
// that only hands out slices touches nothing else of a chunk, so that miss
// was about a third of its time. Prefetching the two lines holding the
// header, the fragment index and the first size header while the current
// chunk is read hides it. Only those two lines: streaming whole chunks ahead
// costs the copying readers more than it saves (docs/trace_buffer_v2.md).
void TraceBufferV2::PrefetchChunkHead(size_t offset) const {
  if (offset >= data_end_)
    return;  // The walk wraps to 0 or ends; a hint only.
  __builtin_prefetch(buf_ + offset, 0);
  if (offset + 64 < data_end_)
    __builtin_prefetch(buf_ + offset + 64, 0);
}

void TraceBufferV2::SetReadFastPathForTesting(bool enabled) {
  reader_->set_runs_enabled(enabled);
}

uint64_t TraceBufferV2::ReadFastPathPacketsForTesting() const {
  return reader_->run_packets();
}

// ---- Clone
// --------------------------------------------------------------------

std::unique_ptr<TraceBufferV2> TraceBufferV2::CloneReadOnly() const {
  RT_CHECK(!has_pending_);
  std::unique_ptr<TraceBufferV2> clone(new TraceBufferV2(size_, policy_));
  if (!clone->Initialize(/*warm=*/false))
    return nullptr;
  // All state is offsets ([SEQ-1]): a copy is a valid buffer.
  memcpy(clone->buf_, buf_, data_end_);
  clone->read_only_ = true;
  clone->discard_full_ = discard_full_;
  clone->wr_ = wr_;
  clone->data_end_ = data_end_;
  clone->consumed_prefix_ = consumed_prefix_;  // The flags are copied too.
  clone->used_size_ = used_size_;
  clone->sequences_ = sequences_;
  clone->remembered_losses_ = remembered_losses_;
  clone->num_empty_sequences_ = num_empty_sequences_;
  clone->empty_stamp_ = empty_stamp_;
  clone->num_live_chunks_ = num_live_chunks_;
  // Stalls were per read pass of the original: a new pass starts clean.
  clone->read_generation_ = read_generation_ + 1;
  clone->stats_ = stats_;
#if RT_DCHECK_IS_ON
  clone->debug_checksums_ = debug_checksums_;
#endif
  clone->BeginRead();
  return clone;
}

}  // namespace trace_buffer
}  // namespace ringtrace
