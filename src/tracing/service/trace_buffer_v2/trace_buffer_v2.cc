/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

#include <string.h>
#include <sys/mman.h>

#include <algorithm>

#include "ringtrace/logging.h"
#include "src/base/checked_math.h"
#include "src/tracing/service/trace_buffer_v2/chunk_seq_reader.h"
#include "src/tracing/service/trace_buffer_v2/frag_iterator.h"
#include "src/tracing/service/trace_buffer_v2/tb_chunk.h"

// Buffer invariants, cited as [TB-n]:
//  [TB-1] [0, data_end_) is tiled by chunks (data or padding) laid back to
//         back; every outer size is a non-zero multiple of 4.
//  [TB-2] wr_ <= data_end_ <= size_, and wr_ is a chunk boundary (or
//         data_end_). The oldest data starts at wr_ (if wr_ < data_end_),
//         else at 0.
//  [TB-3] A data chunk that is neither kTBConsumed nor kTBPending is linked in
//         the queue of its SequenceState (which therefore exists), and vice
//         versa.

namespace ringtrace {
namespace trace_buffer {

static_assert(kPacketSizeDropPacket == FragIterator::kDropPacketSize,
              "one drop-packet marker");
static_assert(sizeof(TBChunk) == kTBChunkHeaderSize, "header size");
static_assert(TBChunk::OuterSizeForPayload(kMaxChunkPayloadSize) <=
                  kMaxPaddingSize,
              "a chunk remainder must fit in one padding chunk");

namespace {

constexpr size_t kPageSize = 4096;
// Offsets are stored as uint32_t.
constexpr size_t kMaxBufferSize = 0xffff0000u;

// See LinkChunk().
constexpr uint32_t kMaxChunkIdDistance = 1u << 29;

uint32_t SeqKey(ProducerID p, WriterID w) {
  return (static_cast<uint32_t>(p) << 16) | w;
}

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
  return it.pos();
}

#if RT_DCHECK_IS_ON
// FNV-1a over the fields a stored chunk never changes (identity, size) and
// its payload. Debug builds only.
uint32_t DebugChunkChecksum(const TBChunk* chunk) {
  uint32_t h = 2166136261u;
  auto mix = [&h](const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; i++)
      h = (h ^ p[i]) * 16777619u;
  };
  mix(reinterpret_cast<const uint8_t*>(&chunk->chunk_id), 4);
  mix(reinterpret_cast<const uint8_t*>(&chunk->producer_id), 4);  // + writer
  mix(reinterpret_cast<const uint8_t*>(&chunk->size_field), 2);
  // The index (if any) and the payload.
  mix(reinterpret_cast<const uint8_t*>(chunk + 1), chunk->stored_size());
  return h;
}
#endif

}  // namespace

std::string TracePacket::GetRawBytesForTesting() const {
  std::string out;
  out.reserve(size_);
  for (const Slice& s : slices_)
    out.append(reinterpret_cast<const char*>(s.data), s.size);
  return out;
}

const char* FillPolicyName(TraceBufferV2::OverwritePolicy policy) {
  switch (policy) {
    case TraceBufferV2::OverwritePolicy::kOverwrite:
      return "ring_buffer";
    case TraceBufferV2::OverwritePolicy::kDiscard:
      return "discard";
  }
  return "?";  // not an enumerator (a cast integer)
}

bool ParseFillPolicy(const std::string& name,
                     TraceBufferV2::OverwritePolicy* policy) {
  for (const TraceBufferV2::OverwritePolicy p :
       {TraceBufferV2::OverwritePolicy::kOverwrite,
        TraceBufferV2::OverwritePolicy::kDiscard}) {
    if (name == FillPolicyName(p)) {
      *policy = p;
      return true;
    }
  }
  return false;
}

// ---- Creation ---------------------------------------------------------------

std::unique_ptr<TraceBufferV2> TraceBufferV2::Create(size_t size_bytes,
                                                     OverwritePolicy policy) {
  if (size_bytes == 0 || size_bytes > kMaxBufferSize)
    return nullptr;
  std::unique_ptr<TraceBufferV2> tb(
      new TraceBufferV2(base::AlignUp(size_bytes, kPageSize), policy));
  if (!tb->Initialize())
    return nullptr;
  return tb;
}

TraceBufferV2::TraceBufferV2(size_t size, OverwritePolicy policy)
    : size_(size), policy_(policy) {}

bool TraceBufferV2::Initialize() {
  // Anonymous mapping: pages are committed lazily, on first write.
  void* mem = mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    return false;
  buf_ = static_cast<uint8_t*>(mem);
  reader_.reset(new ChunkSeqReader(this));
  erase_reader_.reset(new ChunkSeqReader(this));
  return true;
}

TraceBufferV2::~TraceBufferV2() {
  if (buf_)
    munmap(buf_, size_);
}

TBChunk* TraceBufferV2::ChunkAt(size_t offset) {
  RT_DCHECK(offset < data_end_ && offset % 4 == 0);
  return reinterpret_cast<TBChunk*>(buf_ + offset);
}

// ---- Sequences --------------------------------------------------------------

// Writes, patches and the read walk look the same sequence up many times in
// a row: the last one found is remembered (map nodes do not move; the cache
// is dropped wherever a sequence is deleted).
SequenceState* TraceBufferV2::FindSequence(ProducerID producer_id,
                                           WriterID writer_id) {
  const uint32_t key = SeqKey(producer_id, writer_id);
  if (last_seq_ && last_seq_key_ == key)
    return last_seq_;
  auto it = sequences_.find(key);
  if (it == sequences_.end())
    return nullptr;
  last_seq_ = &it->second;
  last_seq_key_ = key;
  return last_seq_;
}

SequenceState* TraceBufferV2::GetOrCreateSequence(
    ProducerID producer_id,
    WriterID writer_id,
    const ClientIdentity& client_identity) {
  if (SequenceState* found = FindSequence(producer_id, writer_id))
    return found;  // find() first: emplace() allocates.
  const uint32_t key = SeqKey(producer_id, writer_id);
  SequenceState* seq = &sequences_.emplace(key, SequenceState()).first->second;
  last_seq_ = seq;
  last_seq_key_ = key;
  seq->producer_id = producer_id;
  seq->writer_id = writer_id;
  seq->client_identity = client_identity;
  if (!remembered_losses_.empty()) {
    auto lost = remembered_losses_.find(key);
    if (lost != remembered_losses_.end()) {
      // It was deleted with a loss not reported yet: report it now.
      seq->pending_loss = lost->second;
      seq->past_first_packet = true;
      remembered_losses_.erase(lost);
    }
  }
  OnSequenceMaybeEmpty(seq);  // Born empty.
  return seq;
}

void TraceBufferV2::OnSequenceMaybeEmpty(SequenceState* seq) {
  RT_DCHECK(seq->chunks.empty());
  num_empty_sequences_++;
  seq->empty_stamp = ++empty_stamp_;
}

// Keeps the kKeepLastEmptySeq most recently emptied sequences (their
// last_chunk_id_consumed still detects gaps); deletes older empty ones once
// more than |threshold| are empty. Called only where no SequenceState pointer
// is held: at the start of a read pass (threshold kKeepLastEmptySeq, an O(n)
// scan per pass) and of a write (threshold 2 * kKeepLastEmptySeq, so the scan
// is amortized over at least kKeepLastEmptySeq sequences emptied).
void TraceBufferV2::DeleteStaleEmptySequences(size_t threshold) {
  if (num_empty_sequences_ <= threshold)
    return;
  std::vector<uint64_t> stamps;
  stamps.reserve(num_empty_sequences_);
  for (const auto& kv : sequences_) {
    if (kv.second.chunks.empty())
      stamps.push_back(kv.second.empty_stamp);
  }
  RT_DCHECK(stamps.size() == num_empty_sequences_);
  const size_t to_delete = stamps.size() - kKeepLastEmptySeq;
  std::nth_element(stamps.begin(), stamps.begin() + (to_delete - 1),
                   stamps.end());
  const uint64_t max_deleted_stamp = stamps[to_delete - 1];
  last_seq_ = nullptr;  // It may be deleted below.
  for (auto it = sequences_.begin(); it != sequences_.end();) {
    if (it->second.chunks.empty() &&
        it->second.empty_stamp <= max_deleted_stamp) {
      // A loss still to be reported must outlive the sequence: it is
      // flagged on the next packet if the writer comes back.
      if (const uint32_t bits = it->second.UnreportedLoss()) {
        if (remembered_losses_.size() < kMaxRememberedLosses) {
          remembered_losses_[it->first] = bits;
        } else {
          stats_.sequence_losses_forgotten++;
        }
      }
      it = sequences_.erase(it);
      num_empty_sequences_--;
    } else {
      ++it;
    }
  }
}

bool TraceBufferV2::GetsFragIndex(size_t valid_size, size_t index_size) const {
  if (!WantsFragIndex(index_size, valid_size))
    return false;
  // The chunk must still fit (else it is read without an index).
  const size_t stored = TBChunk::StoredSizeWithIndex(valid_size, index_size);
  return stored <= kMaxChunkPayloadSize &&
         TBChunk::OuterSizeForPayload(stored) <= size_;
}

void TraceBufferV2::WriteFragIndex(TBChunk* chunk,
                                   const FragIndexEntry* entries,
                                   size_t n) {
  RT_DCHECK(chunk->has_frag_index() && chunk->frag_index_size() == n);
  memcpy(chunk->frag_index(), entries, n * sizeof(FragIndexEntry));
}

// Links the chunk at |offset| into |seq| at its ChunkID position ([SEQ-1]).
// Returns false, turning the chunk into padding, if it arrives too late to be
// read in order ([SEQ-2]; also when the reader already started on a later
// chunk, [SEQ-3]).
bool TraceBufferV2::LinkChunk(SequenceState* seq, size_t offset) {
  TBChunk* chunk = ChunkAt(offset);
  const ChunkID id = chunk->chunk_id;
  OffsetQueue& q = seq->chunks;
  bool late =
      seq->has_last_chunk_id && !ChunkIdLess(seq->last_chunk_id_consumed, id);
  // ChunkIdLess must be a total order on the queue: the IDs must lie within
  // a 2^31 window. Once a chunk was consumed, "not late" means within
  // (last_chunk_id_consumed, +2^31). Before that, the first ChunkID seen is
  // the reference and others must be within +-2^29 of it.
  if (!seq->has_last_chunk_id) {
    if (q.empty() && !seq->has_first_chunk_id) {
      seq->has_first_chunk_id = true;
      seq->first_chunk_id = id;
    }
    const uint32_t dist = id - seq->first_chunk_id;
    if (dist >= kMaxChunkIdDistance && -dist >= kMaxChunkIdDistance) {
      stats_.abi_violations++;
      seq->pending_loss |= kDataLossChunkCorrupted;
      WritePadding(offset, chunk->outer_size());
      return false;
    }
  }
  size_t pos = q.size();
  if (!late && !q.empty() && !ChunkIdLess(seq->back_chunk_id, id)) {
    // Out of order (scraping): binary search for the first chunk after id.
    size_t lo = 0, hi = q.size();
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (ChunkIdLess(id, ChunkAt(q.at(mid))->chunk_id))
        hi = mid;
      else
        lo = mid + 1;
    }
    pos = lo;
    // Equal IDs are handled as recommits before getting here.
    RT_DCHECK(pos == 0 || ChunkAt(q.at(pos - 1))->chunk_id != id);
    if (pos == 0 && (ChunkAt(q.front())->flags & kTBEntered)) {
      late = true;
      // Reading already started at a later chunk. With no chunk consumed
      // before it, no ChunkID gap was seen there: report this chunk's loss
      // on the next packet read (it follows the lost data).
      if (!seq->has_last_chunk_id)
        seq->pending_loss |= kDataLossReadGap;
    }
  }
  if (late) {
    stats_.late_chunks_dropped++;
    WritePadding(offset, chunk->outer_size());
    return false;
  }
  if (pos != q.size())
    stats_.chunks_committed_out_of_order++;
  if (q.empty())
    num_empty_sequences_--;
  if (pos == q.size())
    seq->back_chunk_id = id;
  q.insert(pos, static_cast<uint32_t>(offset));
  num_live_chunks_++;
  return true;
}

// Index of chunk |id| in the (sorted) queue, or q.size(). A sequence's
// ChunkIDs are almost always consecutive, so the chunk |d| IDs before the
// back is tried first at |d| positions before it: one probe of the chunk's
// own header (which the caller touches next anyway) instead of a binary
// search whose probes each load another chunk's header, cold in a large
// buffer. Gaps (lost chunks) and out-of-order commits fall back to the
// binary search.
size_t TraceBufferV2::FindChunkIndex(const SequenceState& seq, ChunkID id) {
  const OffsetQueue& q = seq.chunks;
  if (q.empty() || ChunkIdLess(seq.back_chunk_id, id))
    return q.size();  // Newer than every chunk: usual for a new chunk.
  const uint32_t from_back = seq.back_chunk_id - id;  // Modulo 2^32.
  if (from_back < q.size()) {
    const size_t guess = q.size() - 1 - from_back;
    if (ChunkAt(q.at(guess))->chunk_id == id)
      return guess;
  }
  // The front is often the oldest chunk in the buffer (cold): checked only
  // when the guess failed.
  if (ChunkIdLess(id, ChunkAt(q.front())->chunk_id))
    return q.size();
  size_t lo = 0, hi = q.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const ChunkID mid_id = ChunkAt(q.at(mid))->chunk_id;
    if (mid_id == id)
      return mid;
    if (ChunkIdLess(mid_id, id))
      lo = mid + 1;
    else
      hi = mid;
  }
  return q.size();
}

// ---- Space management -------------------------------------------------------

void TraceBufferV2::WritePadding(size_t offset, size_t size) {
  RT_CHECK(size >= 4 && size % 4 == 0 && size <= kMaxPaddingSize);
  // Only the first word of a padding chunk exists ([TB-1]).
  TBChunk* chunk = reinterpret_cast<TBChunk*>(buf_ + offset);
  chunk->flags = kTBPadding;
  chunk->size_field = static_cast<uint16_t>(size / 4);
  stats_.padding_bytes_written += size;
}

void TraceBufferV2::OnWrite() {
  write_generation_++;
  reader_->Clear();
}

bool TraceBufferV2::ReserveAt(size_t outer_size, size_t* offset) {
  RT_DCHECK(outer_size % 4 == 0 && outer_size <= kMaxPaddingSize);
  if (policy_ == OverwritePolicy::kDiscard) {
    // DISCARD stops at the end of the buffer, read or not.
    if (discard_full_ || outer_size > size_ - wr_) {
      discard_full_ = true;
      stats_.chunks_discarded++;
      return false;
    }
  } else if (outer_size > size_ - wr_) {
    // Wrap: erase the tail (whole chunks up to data_end_, [TB-1]) and
    // restart at 0.
    DeleteNextChunksFor(data_end_ - wr_);
    data_end_ = wr_;
    wr_ = 0;
    pf_ = 0;
    stats_.write_wrap_count++;
  }
  if (wr_ < data_end_)
    DeleteNextChunksFor(outer_size);
  *offset = wr_;
  wr_ += outer_size;
  data_end_ = std::max(data_end_, wr_);
  used_size_ = std::max(used_size_, data_end_);
  return true;
}

// Erases the chunks overlapping [wr_, wr_ + bytes) in buffer order; see the
// DeleteNextChunksFor() flow (docs/trace-buffer-design.md 5.1).
void TraceBufferV2::DeleteNextChunksFor(size_t bytes) {
  const size_t clear_end = wr_ + bytes;
  size_t off = wr_;
  // Bounded: each step advances by a non-zero outer size ([TB-1]).
  while (off < clear_end && off < data_end_) {
    TBChunk* chunk = ChunkAt(off);
    const size_t outer = chunk->outer_size();
    RT_CHECK(outer >= 4 && off + outer <= data_end_);
    if (chunk->is_padding()) {
      stats_.padding_bytes_cleared += outer;
    } else {
      EraseChunkAt(off);
    }
    off += outer;
  }
  // The remainder of a partially erased chunk becomes padding, keeping
  // [TB-1].
  if (off > clear_end)
    WritePadding(clear_end, off - clear_end);
  PrefetchAhead(off);
}

// The next writes erase the chunks from |next| on: their headers (and the
// bytes the new chunks will overwrite) were written a buffer-length of data
// ago and are cold in cache. Reading a header stalls on memory, so the cache
// lines up to kPrefetchDistance ahead of the erase point are prefetched (with
// write intent: they are about to be rewritten), a few per write. pf_ is a
// pure hint: it is re-synced whenever it leaves the window.
void TraceBufferV2::PrefetchAhead(size_t next) {
  constexpr size_t kPrefetchDistance = 16 * 1024;
  constexpr size_t kLine = 64;
  if (pf_ < next || pf_ > next + kPrefetchDistance)
    pf_ = next & ~(kLine - 1);
  const size_t end = std::min(next + kPrefetchDistance, data_end_);
  // Bounded: at most kPrefetchDistance / kLine iterations.
  for (; pf_ < end; pf_ += kLine)
    __builtin_prefetch(buf_ + pf_, 1);
}

// Erase-mode readback: forced, stall-free; every valid packet in sequence
// order up to this chunk goes to the overwrite observer.
void TraceBufferV2::EraseChunkAt(size_t offset) {
  TBChunk* chunk = ChunkAt(offset);
  RT_DCHECK(!(chunk->flags & kTBPending));
  if (chunk->flags & kTBConsumed)
    return;
  // chunks_overwritten / bytes_overwritten are counted by the erase reader,
  // for every chunk it pops with unread data (also the ones before this one
  // in sequence order).
  SequenceState* seq = FindSequence(chunk->producer_id, chunk->writer_id);
  RT_CHECK(seq);  // [TB-3]
  erase_reader_->Reset(seq, static_cast<uint32_t>(offset),
                       ChunkSeqReader::Mode::kErase);
  if (!overwrite_observer_ && seq->chunks.front() == offset) {
    erase_reader_->DropFront();
    erase_reader_->Clear();
    return;
  }
  PacketSequenceProperties props;
  props.producer_id_trusted = seq->producer_id;
  props.writer_id = seq->writer_id;
  props.client_identity_trusted = seq->client_identity;
  uint32_t unused_loss = 0;
  // Bounded: the erase reader never stalls and stops after the target.
  while (erase_reader_->ReadNextPacket(&erase_packet_, &unused_loss)) {
    if (overwrite_observer_)
      overwrite_observer_(props, erase_packet_);
  }
  erase_reader_->Clear();
  RT_CHECK(chunk->flags & kTBConsumed);  // The target was popped.
}

bool TraceBufferV2::BeginWrite() {
  // One two-phase chunk at a time: a caller bug, not a producer one.
  RT_CHECK(!has_pending_);
  if (read_only_)
    return false;  // Clones are read-only.
  OnWrite();
  DeleteStaleEmptySequences(2 * kKeepLastEmptySeq);
  return true;
}

// The loss is reported on the first packet read after the rejected chunk in
// sequence order, never on an earlier one ([SEQ-4]).
void TraceBufferV2::RejectChunk(ProducerID producer_id,
                                const ClientIdentity& client_identity,
                                WriterID writer_id,
                                ChunkID chunk_id) {
  stats_.abi_violations++;
  GetOrCreateSequence(producer_id, writer_id, client_identity)
      ->DeferLoss(chunk_id, kDataLossChunkCorrupted);
}

// ---- v1 write path ----------------------------------------------------------

bool TraceBufferV2::CopyChunkUntrusted(ProducerID producer_id,
                                       const ClientIdentity& client_identity,
                                       WriterID writer_id,
                                       ChunkID chunk_id,
                                       uint16_t num_fragments,
                                       V1ChunkFlags chunk_flags,
                                       bool chunk_complete,
                                       const uint8_t* src,
                                       size_t size) {
  if (!BeginWrite())
    return false;
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
      static_cast<bool>(chunk_flags & kFirstPacketContinuesFromPrevChunk),
      static_cast<bool>(chunk_flags & kLastPacketContinuesOnNextChunk),
      &corrupted, &trimmed_end, &packets, &scratch_index_, &index_size);
  if (corrupted)
    stats_.abi_violations++;
  // Trailing empty packets are left out of the readable range, so that "the
  // chunk has unread data" (HasUnreadData) means unread packets: erasing such
  // a chunk reports OVERWRITE only if something was lost. Only for complete,
  // well-formed chunks without pending patches (a recommit or a patch may
  // still need those bytes).
  const size_t readable_end =
      chunk_complete && !corrupted && !(chunk_flags & kChunkNeedsPatching)
          ? trimmed_end
          : valid_size;

  TBChunkFlags flags;
  if (chunk_flags & kFirstPacketContinuesFromPrevChunk)
    flags |= kTBFirstContinuesFromPrev;
  if (chunk_flags & kLastPacketContinuesOnNextChunk)
    flags |= kTBLastContinuesOnNext;
  if (chunk_flags & kChunkNeedsPatching)
    flags |= kTBNeedsPatching;
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
      !(flags & (kTBIncomplete | kTBCorrupted | kTBNeedsPatching));
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
      (flags & (kTBIncomplete | kTBCorrupted | kTBNeedsPatching))
          ? kPacketCountUnknown
          : packets);
  chunk->size_field = static_cast<uint16_t>(stored_size);
  chunk->chunk_id = chunk_id;
  chunk->producer_id = producer_id;
  chunk->writer_id = writer_id;
  chunk->valid_size = static_cast<uint16_t>(valid_size);
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
  const TBChunkFlags kept = chunk->flags & (kTBEntered | kTBDataLoss);
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

bool TraceBufferV2::BeginChunkFragments(ProducerID producer_id,
                                        const ClientIdentity& client_identity,
                                        WriterID writer_id,
                                        ChunkID chunk_id,
                                        const uint32_t* sizes,
                                        size_t num_fragments,
                                        AdmissionFlags flags,
                                        uint8_t** frag_dst) {
  if (!BeginWrite())
    return false;
  size_t payload_size = 0;
  bool ok = num_fragments == 0 || (sizes && frag_dst);
  for (size_t i = 0; ok && i < num_fragments; i++) {
    ok = sizes[i] < kPacketSizeDropPacket &&
         base::CheckedAdd<size_t>(payload_size, 4u + sizes[i], &payload_size) &&
         payload_size <= kMaxChunkPayloadSize;
  }
  if (!ok || TBChunk::OuterSizeForPayload(payload_size) > size_) {
    RejectChunk(producer_id, client_identity, writer_id, chunk_id);
    return false;
  }
  SequenceState* seq =
      GetOrCreateSequence(producer_id, writer_id, client_identity);
  if (FindChunkIndex(*seq, chunk_id) != seq->chunks.size()) {
    // The drainer never recommits (its chunks are always complete).
    RejectChunk(producer_id, client_identity, writer_id, chunk_id);
    return false;
  }
  // As in CopyChunkUntrusted(): the fragments that matter end at
  // |trimmed_end|; |index_size| of them. Sizes are trusted to be below
  // kPacketSizeDropPacket here (checked above): no drop markers.
  const bool from_prev = static_cast<bool>(flags & kChunkContinuesFromPrev);
  const bool on_next = static_cast<bool>(flags & kChunkContinuesOnNext);
  size_t trimmed_end = 0;
  size_t index_size = 0;
  size_t packets = 0;
  {
    size_t end = 0;
    for (size_t i = 0; i < num_fragments; i++) {
      end += 4 + sizes[i];
      if (FragmentMatters(i, num_fragments, sizes[i], from_prev, on_next)) {
        trimmed_end = end;
        index_size = i + 1;
      }
      packets +=
          StartsCountedPacket(i, num_fragments, sizes[i], from_prev, on_next);
    }
  }
  // With an index, only the fragments up to |trimmed_end| are stored (the
  // empty ones after it are never read), then the index.
  const bool with_index = GetsFragIndex(trimmed_end, index_size);
  const size_t stored_size =
      with_index ? TBChunk::StoredSizeWithIndex(trimmed_end, index_size)
                 : payload_size;
  size_t offset = 0;
  if (!ReserveAt(TBChunk::OuterSizeForPayload(stored_size), &offset))
    return false;
  TBChunk* chunk = ChunkAt(offset);
  TBChunkFlags tb_flags = kTBPending;
  if (flags & kChunkContinuesFromPrev)
    tb_flags |= kTBFirstContinuesFromPrev;
  if (flags & kChunkContinuesOnNext)
    tb_flags |= kTBLastContinuesOnNext;
  if (flags & kChunkDataLoss)
    tb_flags |= kTBDataLoss;
  if (with_index)
    tb_flags |= kTBFragIndex;
  chunk->flags = tb_flags;
  chunk->size_field = static_cast<uint16_t>(stored_size);
  chunk->chunk_id = chunk_id;
  chunk->producer_id = producer_id;
  chunk->writer_id = writer_id;
  chunk->valid_size = static_cast<uint16_t>(trimmed_end);
  chunk->read_offset = 0;
  uint8_t* const payload = chunk->payload();
  FragIndexEntry* index = with_index ? chunk->frag_index() : nullptr;
  const size_t stored_frags = with_index ? index_size : num_fragments;
  size_t pos = 0;
  for (size_t i = 0; i < stored_frags; i++) {
    WriteRedundantVarint(sizes[i], payload + pos);
    frag_dst[i] = payload + pos + 4;
    if (index) {
      index[i] = FragIndexEntry{static_cast<uint16_t>(pos + 4),
                                static_cast<uint16_t>(sizes[i])};
    }
    pos += 4 + sizes[i];
  }
  // Not stored (empty fragments after the index's last): nothing to copy.
  for (size_t i = stored_frags; i < num_fragments; i++)
    frag_dst[i] = payload + pos;
  chunk->SetPacketCount(packets);
  has_pending_ = true;
  pending_offset_ = offset;
  return true;
}

void TraceBufferV2::CommitPendingChunk() {
  RT_CHECK(has_pending_);
  has_pending_ = false;
  TBChunk* chunk = ChunkAt(pending_offset_);
  chunk->flags &= ~kTBPending;
  SequenceState* seq = FindSequence(chunk->producer_id, chunk->writer_id);
  RT_CHECK(seq);  // Created by BeginChunkFragments, not deleted since.
  const size_t outer = chunk->outer_size();
  const bool writer_lost_data = static_cast<bool>(chunk->flags & kTBDataLoss);
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
                                       AdmissionFlags flags) {
  if (num_fragments > kMaxChunkPayloadSize / 4 ||
      (num_fragments && !fragments)) {
    if (!BeginWrite())
      return false;
    RejectChunk(producer_id, client_identity, writer_id, chunk_id);
    return false;
  }
  scratch_sizes_.resize(num_fragments);  // Bounded above.
  scratch_dst_.resize(num_fragments);
  for (size_t i = 0; i < num_fragments; i++)
    scratch_sizes_[i] = fragments[i].size;
  if (!BeginChunkFragments(producer_id, client_identity, writer_id, chunk_id,
                           scratch_sizes_.data(), num_fragments, flags,
                           scratch_dst_.data())) {
    return false;
  }
  for (size_t i = 0; i < num_fragments; i++) {
    if (scratch_sizes_[i])
      memcpy(scratch_dst_[i], fragments[i].data, scratch_sizes_[i]);
  }
  CommitPendingChunk();
  return true;
}

// ---- Memory -----------------------------------------------------------------

// Pages of the mapping touched so far (committed lazily, never returned),
// this object, and every heap allocation it owns (hash-table buckets and
// nodes estimated as one pointer per bucket and per node).
size_t TraceBufferV2::GetMemoryUsageBytes() const {
  size_t bytes = base::AlignUp(used_size_, kPageSize) + sizeof(*this);
  bytes += sequences_.bucket_count() * sizeof(void*);
  for (const auto& kv : sequences_) {
    bytes += sizeof(kv) + sizeof(void*) +
             kv.second.chunks.capacity() * sizeof(uint32_t) +
             kv.second.deferred_losses.capacity() *
                 sizeof(SequenceState::DeferredLoss);
  }
  bytes += remembered_losses_.bucket_count() * sizeof(void*) +
           remembered_losses_.size() *
               (sizeof(std::pair<const uint32_t, uint32_t>) + sizeof(void*));
  bytes += 2 * sizeof(ChunkSeqReader) +
           erase_packet_.slices().capacity() * sizeof(TracePacket::Slice) +
           scratch_sizes_.capacity() * sizeof(uint32_t) +
           scratch_dst_.capacity() * sizeof(uint8_t*) +
           scratch_index_.capacity() * sizeof(FragIndexEntry);
#if RT_DCHECK_IS_ON
  bytes += debug_checksums_.bucket_count() * sizeof(void*) +
           debug_checksums_.size() *
               (sizeof(std::pair<const uint32_t, uint32_t>) + sizeof(void*));
#endif
  return bytes;
}

void TraceBufferV2::DebugSetChecksum(size_t offset) {
#if RT_DCHECK_IS_ON
  debug_checksums_[static_cast<uint32_t>(offset)] =
      DebugChunkChecksum(ChunkAt(offset));
#else
  (void)offset;
#endif
}

void TraceBufferV2::DebugCheckAndForgetChecksum(size_t offset) {
#if RT_DCHECK_IS_ON
  auto it = debug_checksums_.find(static_cast<uint32_t>(offset));
  RT_CHECK(it != debug_checksums_.end());
  // A stored chunk changed behind our back: a bug in this class.
  RT_CHECK(it->second == DebugChunkChecksum(ChunkAt(offset)));
  debug_checksums_.erase(it);
#else
  (void)offset;
#endif
}

}  // namespace trace_buffer
}  // namespace ringtrace
