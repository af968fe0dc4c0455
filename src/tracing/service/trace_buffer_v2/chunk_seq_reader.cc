/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_buffer_v2/chunk_seq_reader.h"

namespace ringtrace {
namespace trace_buffer {

FragIterator::Result StoredFragmentAt(const TBChunk* chunk,
                                      size_t pos,
                                      StoredFrag* frag) {
  frag->pos = pos;
  if (chunk->has_frag_index()) {
    // [TB-IDX]: |pos| is an entry number.
    if (pos >= chunk->valid_size)
      return FragIterator::Result::kEnd;
    const FragIndexEntry e = chunk->frag_index()[pos];
    // Written by the buffer (BeginChunkFragments, CopyChunkUntrusted), out
    // of any producer's reach: inside the payload by construction.
    RT_DCHECK(static_cast<size_t>(e.data_offset) + e.size <=
              chunk->payload_size());
    frag->end = pos + 1;
    frag->data_offset = e.data_offset;
    frag->size = e.size;
    frag->dropped = false;
    return FragIterator::Result::kOk;
  }
  FragIterator it(chunk->payload(), pos, chunk->valid_size);
  FragIterator::Frag f;
  const FragIterator::Result res = it.Next(&f);
  if (res == FragIterator::Result::kOk) {
    frag->data_offset = f.data_offset;
    frag->size = f.size;
    frag->dropped = f.dropped;
  }
  frag->end = it.pos();
  return res;
}

ChainStep ContinuationStep(const TBChunk* next) {
  if (!(next->flags & kChunkContinuesFromPrev))
    return ChainStep::kNotContinued;
  // v1 only: a first fragment not final yet, or cut, is lost there.
  if (next->flags & (kTBIncomplete | kChunkNeedsPatching | kTBCorrupted))
    return ChainStep::kEnds;
  StoredFrag frag;
  if (StoredFragmentAt(next, 0, &frag) != FragIterator::Result::kOk)
    return ChainStep::kEnds;
  if (frag.dropped)
    return ChainStep::kNotContinued;  // trace_writer_packet_loss
  if (frag.end == next->valid_size && (next->flags & kChunkContinuesOnNext))
    return ChainStep::kContinues;
  return ChainStep::kEnds;
}

namespace {

// For a chunk whose admission packet count is exact (final, no drop
// marker): whether the last packet it counts continues on the next chunk,
// i.e. the last fragment continues and is not the first fragment carrying
// on a packet from the previous chunk (StartsCountedPacket() in
// trace_buffer_v2_write.cc).
bool EndsWithOpenPacket(const TBChunk* chunk) {
  if (!(chunk->flags & kChunkContinuesOnNext) || chunk->valid_size == 0)
    return false;
  if (!(chunk->flags & kChunkContinuesFromPrev))
    return true;
  StoredFrag frag;
  return !(StoredFragmentAt(chunk, 0, &frag) == FragIterator::Result::kOk &&
           frag.end == chunk->valid_size);
}

}  // namespace

TBChunk* ChunkSeqReader::ChunkAt(uint32_t offset) const {
  return reinterpret_cast<TBChunk*>(tb_->begin() + offset);
}

void ChunkSeqReader::Reset(SequenceState* seq,
                           uint32_t target_offset,
                           Mode mode) {
  seq_ = seq;
  target_ = target_offset;
  mode_ = mode;
  done_ = false;
  last_counted_ = UINT32_MAX;
  run_end_ = 0;
}

void ChunkSeqReader::CountOverwrite(uint32_t offset, const TBChunk* chunk) {
  if (offset == last_counted_ || !HasUnreadData(chunk))
    return;
  last_counted_ = offset;
  tb_->stats_.chunks_overwritten++;
  tb_->stats_.bytes_overwritten += chunk->outer_size();
}

void ChunkSeqReader::CountPacketOverwritten() {
  RT_DCHECK(mode_ == Mode::kErase);
  tb_->stats_.packets_overwritten++;
}

void ChunkSeqReader::AddLoss(uint32_t bits) {
  seq_->pending_loss |= bits;
}

void ChunkSeqReader::Stall() {
  RT_DCHECK(mode_ == Mode::kRead);
  seq_->stalled_generation = tb_->read_generation_;
}

// The first time the front chunk is looked at: checks the ChunkID against the
// last one consumed ([SEQ-2] makes any difference other than +1 a gap) and
// turns the writer's data-loss flag into SMB_FULL.
void ChunkSeqReader::EnterChunk(TBChunk* chunk) {
  if (chunk->flags & kTBEntered)
    return;
  chunk->flags |= kTBEntered;
  // Writers number their chunks from 0: a sequence whose first chunk seen
  // has another ID may have lost its first packets (undetectably, see the
  // docs), so none of its packets is reported as the first.
  if (chunk->chunk_id != 0)
    seq_->past_first_packet = true;
  if (seq_->has_last_chunk_id &&
      chunk->chunk_id != seq_->last_chunk_id_consumed + 1) {
    AddLoss(kDataLossReadGap);
  }
  seq_->ReleaseDeferredLosses(chunk->chunk_id);
  if (chunk->flags & kChunkDataLoss)
    AddLoss(kDataLossSmbFull);
}

void ChunkSeqReader::PopFront(TBChunk* chunk) {
  RT_DCHECK(
      seq_->chunks.front() ==
      static_cast<uint32_t>(reinterpret_cast<uint8_t*>(chunk) - tb_->begin()));
  chunk->flags |= kTBConsumed;
  tb_->DebugCheckAndForgetChecksum(seq_->chunks.front());
  seq_->last_chunk_id_consumed = chunk->chunk_id;
  seq_->has_last_chunk_id = true;
  seq_->past_first_packet = true;
  seq_->chunks.pop_front();
  tb_->num_live_chunks_--;
  if (mode_ == Mode::kRead) {
    tb_->stats_.chunks_read++;
    tb_->stats_.chunk_bytes_read += chunk->outer_size();
  }
  if (seq_->chunks.empty())
    tb_->OnSequenceMaybeEmpty(seq_);
}

bool ChunkSeqReader::Emit(TracePacket* packet, uint32_t* loss) {
  (void)packet;
  if (mode_ == Mode::kErase) {
    // The reader of the sequence will never see this packet.
    CountPacketOverwritten();
    AddLoss(kDataLossOverwrite);
    seq_->past_first_packet = true;
    *loss = 0;
    return true;
  }
  *loss = seq_->pending_loss ? (seq_->pending_loss | kDataLossPresent) : 0;
  seq_->pending_loss = 0;
  last_first_ = !seq_->past_first_packet && *loss == 0;
  seq_->past_first_packet = true;
  return true;
}

bool ChunkSeqReader::ReadNextPacket(TracePacket* packet, uint32_t* loss) {
  packet->Clear();
  *loss = 0;
  last_first_ = false;
  if (index_hint_ < run_end_ && TakeFromRun(packet, loss))
    return true;
  // Bounded: every iteration consumes a fragment, pops a chunk or returns.
  for (;;) {
    if (done_ || seq_->chunks.empty())
      return false;
    if (mode_ == Mode::kRead &&
        seq_->stalled_generation == tb_->read_generation_) {
      return false;
    }
    const uint32_t offset = seq_->chunks.front();
    TBChunk* chunk = ChunkAt(offset);
    EnterChunk(chunk);
    if (mode_ == Mode::kErase)
      CountOverwrite(offset, chunk);  // Before anything of it is consumed.

    // A chunk with pending patches stalls the sequence: its bytes are not
    // final yet. Erase mode reads it anyway but drops its last fragment (the
    // only one the protocol lets need patches).
    const bool needs_patching =
        static_cast<bool>(chunk->flags & kChunkNeedsPatching);
    if (needs_patching && mode_ == Mode::kRead) {
      Stall();
      return false;
    }

    StoredFrag frag;
    const FragIterator::Result res = NextFragment(offset, chunk, &frag);
    if (res == FragIterator::Result::kOk) {
      switch (ConsumeFragment(chunk, frag, needs_patching, packet)) {
        case FragStep::kNextFragment:
          continue;
        case FragStep::kEmit:
          return Emit(packet, loss);
        case FragStep::kStall:
          Stall();
          return false;
      }
    }
    if (!LeaveFrontChunk(offset, chunk, res))
      return false;
  }
}

TBChunk* ChunkSeqReader::RunChunk() {
  RT_DCHECK(mode_ == Mode::kRead);
  if (done_ || seq_->chunks.empty() ||
      seq_->chunks.front() != index_hint_chunk_ ||
      seq_->stalled_generation == tb_->read_generation_) {
    run_end_ = 0;
    return nullptr;
  }
  TBChunk* chunk = ChunkAt(index_hint_chunk_);
  // An indexed chunk never has these flags; checked all the same, with
  // where the previous entry left read_offset ([TB-IDX]: entries).
  if (!chunk->has_frag_index() ||
      (chunk->flags & (kChunkNeedsPatching | kTBIncomplete | kTBCorrupted)) ||
      run_end_ > chunk->frag_index_size() ||
      chunk->read_offset != index_hint_) {
    run_end_ = 0;  // Not where the run left it: the general path decides.
    return nullptr;
  }
  return chunk;
}

bool ChunkSeqReader::TakeFromRun(TracePacket* packet, uint32_t* loss) {
  TBChunk* chunk = RunChunk();
  if (!chunk)
    return false;
  const FragIndexEntry* index = chunk->frag_index();
  // Bounded by run_end_ (at most the chunk's entries).
  while (index_hint_ < run_end_) {
    const FragIndexEntry e = index[index_hint_++];
    chunk->read_offset = static_cast<uint16_t>(index_hint_);
    seq_->drop_continuation = false;
    if (e.size == 0)
      continue;  // Empty packets: skipped, no loss.
    packet->AddSlice(chunk->payload() + e.data_offset, e.size);
    run_packets_++;
    return Emit(packet, loss);
  }
  return false;
}

size_t ChunkSeqReader::TakeRunBatch(TracePacket::Slice* out,
                                    size_t max,
                                    size_t* bytes) {
  *bytes = 0;
  // What Emit() would do for each packet taken here is nothing but clear
  // last_first_, as long as no loss is pending and the first packet of the
  // sequence was returned: then each would carry loss 0 and first false.
  if (!active() || mode_ != Mode::kRead || index_hint_ >= run_end_ ||
      seq_->pending_loss != 0 || !seq_->past_first_packet) {
    return 0;
  }
  TBChunk* chunk = RunChunk();
  if (!chunk)
    return 0;
  const FragIndexEntry* index = chunk->frag_index();
  const uint8_t* payload = chunk->payload();
  size_t n = 0;
  size_t total = 0;
  size_t i = index_hint_;
  // Bounded by run_end_ (at most the chunk's entries) and |max|.
  while (i < run_end_ && n < max) {
    const FragIndexEntry e = index[i++];
    if (e.size == 0)
      continue;  // Empty packets: skipped, no loss.
    out[n].data = payload + e.data_offset;
    out[n].size = e.size;
    total += e.size;
    n++;
  }
  if (i != index_hint_) {
    index_hint_ = i;
    chunk->read_offset = static_cast<uint16_t>(i);
    seq_->drop_continuation = false;
  }
  run_packets_ += n;
  last_first_ = false;
  *bytes = total;
  return n;
}

FragIterator::Result ChunkSeqReader::NextFragment(uint32_t offset,
                                                  TBChunk* chunk,
                                                  StoredFrag* frag) {
  const FragIterator::Result res =
      StoredFragmentAt(chunk, chunk->read_offset, frag);
  if (res == FragIterator::Result::kOk && chunk->has_frag_index()) {
    index_hint_chunk_ = offset;
    index_hint_ = frag->end;
    // The entries after this one up to the last (or up to the one before
    // it, if the last continues on the next chunk) are plain packets.
    // Entry 0 is never in a run (it may continue from the previous chunk).
    const size_t n = chunk->frag_index_size();
    run_end_ = 0;
    if (mode_ == Mode::kRead && runs_enabled_)
      run_end_ = (chunk->flags & kChunkContinuesOnNext) ? n - 1 : n;
  }
  return res;
}

ChunkSeqReader::FragStep ChunkSeqReader::ConsumeFragment(TBChunk* chunk,
                                                         const StoredFrag& frag,
                                                         bool needs_patching,
                                                         TracePacket* packet) {
  const bool is_first = frag.pos == 0;
  // valid_size ends at the last fragment unless the chunk is scraped
  // (last fragment excluded) or corrupted (cut at the bad fragment).
  const bool is_last = frag.end == chunk->valid_size &&
                       !(chunk->flags & (kTBIncomplete | kTBCorrupted));
  const bool continues_from_prev =
      is_first && (chunk->flags & kChunkContinuesFromPrev);
  const bool continues_on_next =
      is_last && (chunk->flags & kChunkContinuesOnNext);
  chunk->read_offset = static_cast<uint16_t>(frag.end);

  if (continues_from_prev) {
    // A continuation reached outside of a reassembly: its start is gone.
    // Silent if that loss was already reported (drop_continuation).
    if (!seq_->drop_continuation)
      AddLoss(kDataLossOrphanContinuation);
    seq_->drop_continuation = continues_on_next;
    return FragStep::kNextFragment;
  }
  seq_->drop_continuation = false;

  if (frag.dropped) {
    // The writer dropped this packet (kPacketSizeDropPacket).
    tb_->stats_.trace_writer_packet_loss++;
    AddLoss(kDataLossWriterAbort);
    seq_->past_first_packet = true;
    seq_->drop_continuation = continues_on_next;
    return FragStep::kNextFragment;
  }

  if (needs_patching && is_last) {
    // Erase mode only: the unpatched last fragment cannot be trusted.
    CountPacketOverwritten();
    AddLoss(kDataLossOverwrite);
    seq_->drop_continuation = continues_on_next;
    return FragStep::kNextFragment;
  }

  if (continues_on_next) {
    chunk->read_offset = static_cast<uint16_t>(frag.pos);
    switch (Reassemble(chunk, frag, packet)) {
      case ReassemblyResult::kSuccess:
        return FragStep::kEmit;
      case ReassemblyResult::kNotEnoughData:
        return FragStep::kStall;
      case ReassemblyResult::kDataLoss:
        packet->Clear();
        return FragStep::kNextFragment;
    }
  }

  if (frag.size == 0)
    return FragStep::kNextFragment;  // Empty packets: skipped, no loss.
  packet->AddSlice(chunk->payload() + frag.data_offset, frag.size);
  return FragStep::kEmit;
}

bool ChunkSeqReader::LeaveFrontChunk(uint32_t offset,
                                     TBChunk* chunk,
                                     FragIterator::Result res) {
  if (res == FragIterator::Result::kCorrupted) {
    // Bytes that validated at commit time went bad (e.g. via a patch).
    tb_->stats_.abi_violations++;
    chunk->read_offset = chunk->valid_size;
    chunk->flags |= kTBCorrupted;
  }

  // No more readable fragments in the front chunk.
  if (chunk->flags & kTBCorrupted) {
    chunk->flags &= ~kTBCorrupted;  // Report once.
    AddLoss(kDataLossChunkCorrupted);
    // A packet continuing on the next chunk was cut with it.
    seq_->drop_continuation =
        static_cast<bool>(chunk->flags & kChunkContinuesOnNext);
  }
  if (chunk->flags & kTBIncomplete) {
    if (mode_ == Mode::kRead) {
      Stall();  // Its last fragment is still being written.
      return false;
    }
    // Erased before the producer committed it: its last fragment is lost.
    AddLoss(kDataLossOverwrite);
    seq_->drop_continuation = false;
  }
  const bool was_target = offset == target_;
  PopFront(chunk);
  if (was_target) {
    done_ = true;
    return false;
  }
  return true;
}

void ChunkSeqReader::DropFront() {
  RT_DCHECK(mode_ == Mode::kErase && seq_->chunks.front() == target_);
  TBChunk* chunk = ChunkAt(target_);
  EnterChunk(chunk);
  CountOverwrite(target_, chunk);
  const bool unread_frags = chunk->read_offset < chunk->valid_size;
  if (unread_frags) {
    // Nothing of it read: the count taken at admission is the same as
    // walking its fragments, without touching them.
    const uint16_t admitted = chunk->packet_count();
    uint64_t lost = 0;
    bool open_last = false;
    if (chunk->read_offset == 0 && admitted != kPacketCountUnknown) {
      lost = admitted;
      open_last = EndsWithOpenPacket(chunk);
    } else {
      lost = CountUnreadPackets(chunk, &open_last);
    }
    // A packet continuing on the next chunk counts once its end is known
    // (see SequenceState::open_erased).
    if (open_last && !ErasedPacketEndsInQueue())
      lost--;
    tb_->stats_.packets_overwritten += lost;
  }
  if (HasUnreadData(chunk))
    AddLoss(kDataLossOverwrite);
  if (chunk->flags & kTBCorrupted)
    AddLoss(kDataLossChunkCorrupted);
  if (unread_frags) {
    // A packet continuing on the next chunk lost its start here.
    seq_->drop_continuation = (chunk->flags & kChunkContinuesOnNext) &&
                              !(chunk->flags & (kTBIncomplete | kTBCorrupted));
  } else if (chunk->flags & kTBIncomplete) {
    seq_->drop_continuation = false;
  }
  PopFront(chunk);
  done_ = true;
}

// Counts the packets starting in the unread fragments of |chunk| (about to be
// dropped by DropFront()): every non-empty packet start, a last fragment
// continuing on the next chunk (*open_last: DropFront() keeps it only if
// ErasedPacketEndsInQueue(), as the tokenizing erase path counts it only if
// its end is known) or needing patches; writer drop markers go to
// trace_writer_packet_loss, with WRITER_ABORT. Continuations and empty
// packets are not packets lost. Reads only the size headers. Used when the
// count taken at admission (TBChunk::packet_count()) does not apply: the
// chunk was partly read, or the count is unknown. StartsCountedPacket() in
// trace_buffer_v2_write.cc must match this.
uint64_t ChunkSeqReader::CountUnreadPackets(TBChunk* chunk, bool* open_last) {
  const bool final_last = !(chunk->flags & (kTBIncomplete | kTBCorrupted));
  uint64_t packets = 0;
  *open_last = false;
  StoredFrag frag;
  // Bounded by valid_size: every fragment moves the position forward (an
  // entry, or at least a header byte).
  for (size_t pos = chunk->read_offset;
       StoredFragmentAt(chunk, pos, &frag) == FragIterator::Result::kOk;
       pos = frag.end) {
    if (frag.pos == 0 && (chunk->flags & kChunkContinuesFromPrev))
      continue;  // The end of a packet started earlier.
    if (frag.dropped) {
      tb_->stats_.trace_writer_packet_loss++;
      AddLoss(kDataLossWriterAbort);
      continue;
    }
    // The last fragment of an unpatched chunk is lost whatever its size,
    // as in ReadNextPacket().
    const bool is_last = frag.end == chunk->valid_size && final_last;
    if (frag.size != 0 || (is_last && (chunk->flags & (kChunkContinuesOnNext |
                                                       kChunkNeedsPatching)))) {
      packets++;
      // An unpatched last fragment is lost whatever comes next.
      *open_last = is_last && (chunk->flags & kChunkContinuesOnNext) &&
                   !(chunk->flags & kChunkNeedsPatching);
    }
  }
  return packets;
}

bool ChunkSeqReader::ErasedPacketEndsInQueue() {
  RT_DCHECK(mode_ == Mode::kErase);
  ChunkSeqIterator iter(tb_->begin(), seq_, 0);
  // Bounded by the number of chunks in the sequence.
  for (;;) {
    const ChunkID last_id = iter.chunk()->chunk_id;
    bool contiguous = false;
    if (!iter.Next(&contiguous)) {
      RememberOpenErased(last_id);
      return false;
    }
    if (!contiguous)
      return true;  // Its end may have been in the chunks lost there.
    switch (ContinuationStep(iter.chunk())) {
      case ChainStep::kEnds:
        return true;
      case ChainStep::kNotContinued:
        return false;
      case ChainStep::kContinues:
        break;
    }
  }
}

void ChunkSeqReader::RememberOpenErased(ChunkID last_id) {
  seq_->open_erased = true;
  seq_->open_erased_after = last_id;
}

// |first| is the front chunk and |first_frag| its last fragment, which
// continues on the next chunk. Walks the following chunks in sequence order
// (ChunkSeqIterator) collecting the first fragment of each, until one that
// does not continue further. Consumes the fragments only on success; on data
// loss, consumes |first_frag| only and sets drop_continuation so that the
// continuations already in the buffer are dropped without further reports.
ChunkSeqReader::ReassemblyResult ChunkSeqReader::Reassemble(
    TBChunk* first,
    const StoredFrag& first_frag,
    TracePacket* packet) {
  packet->Clear();
  if (first_frag.size)
    packet->AddSlice(first->payload() + first_frag.data_offset,
                     first_frag.size);

  // In erase mode the packet counts in packets_overwritten if |counts|:
  // not when the writer lost its end (it counts the packet itself), nor
  // while its end has not arrived (SequenceState::open_erased).
  auto fail = [&](uint32_t bits, bool counts) {
    first->read_offset = static_cast<uint16_t>(first_frag.end);
    seq_->drop_continuation = true;
    seq_->past_first_packet = true;
    AddLoss(bits);
    tb_->stats_.readaheads_failed++;
    if (mode_ == Mode::kErase && counts)
      CountPacketOverwritten();
    return ReassemblyResult::kDataLoss;
  };
  const bool erase = mode_ == Mode::kErase;

  ChunkSeqIterator iter(tb_->begin(), seq_, 0);
  // Bounded by the number of chunks in the sequence.
  for (;;) {
    const ChunkID last_id = iter.chunk()->chunk_id;
    bool contiguous = false;
    if (!iter.Next(&contiguous)) {
      // The next chunk has not arrived yet.
      if (!erase)
        return ReassemblyResult::kNotEnoughData;
      RememberOpenErased(last_id);
      return fail(kDataLossOverwrite, false);
    }
    if (!contiguous)
      return fail(erase ? (kDataLossReassemblyGap | kDataLossOverwrite)
                        : static_cast<uint32_t>(kDataLossReassemblyGap),
                  true);
    TBChunk* next = iter.chunk();
    if (next->flags & kChunkNeedsPatching) {
      if (!erase)
        return ReassemblyResult::kNotEnoughData;
      return fail(kDataLossOverwrite, true);
    }
    // The writer ended the chain: it lost the packet's end.
    if (!(next->flags & kChunkContinuesFromPrev))
      return fail(kDataLossReassemblyBrokenChain, false);
    if (next->read_offset != 0)
      return fail(kDataLossReassemblyBrokenChain, true);
    StoredFrag frag;
    const FragIterator::Result res = StoredFragmentAt(next, 0, &frag);
    if (res == FragIterator::Result::kCorrupted ||
        (res == FragIterator::Result::kEnd && (next->flags & kTBCorrupted))) {
      return fail(kDataLossReassemblyBrokenChain | kDataLossChunkCorrupted,
                  true);
    }
    if (res == FragIterator::Result::kEnd) {
      if (next->flags & kTBIncomplete) {
        // Its only fragment is still being written.
        if (!erase)
          return ReassemblyResult::kNotEnoughData;
        return fail(kDataLossOverwrite, true);
      }
      // Claims to continue the packet but holds no fragment.
      return fail(kDataLossReassemblyBrokenChain, true);
    }
    if (frag.dropped) {
      // The writer dropped the packet: trace_writer_packet_loss.
      tb_->stats_.trace_writer_packet_loss++;
      return fail(kDataLossWriterAbort, false);
    }
    if (frag.size)
      packet->AddSlice(next->payload() + frag.data_offset, frag.size);
    const bool is_last = frag.end == next->valid_size &&
                         !(next->flags & (kTBIncomplete | kTBCorrupted));
    if (is_last && (next->flags & kChunkContinuesOnNext))
      continue;  // A middle fragment: the packet goes on.
    break;
  }

  // Success: consume the first fragment of every chunk after |first| up to
  // the one that ended the packet ([SEQ-3]).
  first->read_offset = static_cast<uint16_t>(first_frag.end);
  for (size_t i = 1; i <= iter.index(); i++) {
    TBChunk* c = ChunkAt(seq_->chunks.at(i));
    if (!(c->flags & kTBEntered)) {
      c->flags |= kTBEntered;  // Contiguous by construction: no gap check.
      seq_->ReleaseDeferredLosses(c->chunk_id);
      if (c->flags & kChunkDataLoss)
        AddLoss(kDataLossSmbFull);
    }
    StoredFrag frag;
    const FragIterator::Result res = StoredFragmentAt(c, 0, &frag);
    RT_DCHECK(res == FragIterator::Result::kOk);
    (void)res;
    c->read_offset = static_cast<uint16_t>(frag.end);
  }
  tb_->stats_.readaheads_succeeded++;
  if (packet->size() == 0) {
    // Every fragment was empty: nothing to return, nothing lost.
    return ReassemblyResult::kDataLoss;
  }
  return ReassemblyResult::kSuccess;
}

}  // namespace trace_buffer
}  // namespace ringtrace
