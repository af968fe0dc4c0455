/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

#include <string.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>

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
//  [TB-4] The first consumed_prefix_ bytes from where the oldest data
//         starts ([TB-2]), in buffer order wrapping at data_end_, are whole
//         chunks, each padding or kTBConsumed: a read pass starts after
//         them. A pass extends it over the chunks it leaves consumed while
//         every chunk before them is; a write that erases the oldest chunks
//         shortens it by the bytes the oldest data moves, and a wrap clears
//         it (ReserveAt()). Checked at each BeginRead() in debug builds.

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

namespace {
// TraceBufferV2::SetPagesForNewBuffers() and SetWarmAheadForNewBuffers().
// Relaxed: standalone settings, read when a buffer is created.
std::atomic<int> g_pages_for_new_buffers{
    static_cast<int>(TraceBufferV2::Pages::kSmall)};
std::atomic<size_t> g_warm_ahead_for_new_buffers{0};
}  // namespace

void TraceBufferV2::SetPagesForNewBuffers(Pages pages) {
  g_pages_for_new_buffers.store(static_cast<int>(pages),
                                std::memory_order_relaxed);
}

TraceBufferV2::Pages TraceBufferV2::PagesForNewBuffers() {
  return static_cast<Pages>(
      g_pages_for_new_buffers.load(std::memory_order_relaxed));
}

void TraceBufferV2::SetWarmAheadForNewBuffers(size_t bytes) {
  g_warm_ahead_for_new_buffers.store(bytes, std::memory_order_relaxed);
}

size_t TraceBufferV2::WarmAheadForNewBuffers() {
  return g_warm_ahead_for_new_buffers.load(std::memory_order_relaxed);
}

PageWarmer::Stats TraceBufferV2::warmer_stats() const {
  return warmer_ ? warmer_->stats() : PageWarmer::Stats();
}

std::unique_ptr<TraceBufferV2> TraceBufferV2::Create(size_t size_bytes,
                                                     OverwritePolicy policy) {
  if (size_bytes == 0 || size_bytes > kMaxBufferSize)
    return nullptr;
  std::unique_ptr<TraceBufferV2> tb(
      new TraceBufferV2(base::AlignUp(size_bytes, kPageSize), policy));
  if (!tb->Initialize(/*warm=*/true))
    return nullptr;
  return tb;
}

TraceBufferV2::TraceBufferV2(size_t size, OverwritePolicy policy)
    : size_(size), policy_(policy) {}

bool TraceBufferV2::Initialize(bool warm) {
  // Anonymous mapping: pages are committed lazily, on first write.
  void* mem = mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    return false;
  buf_ = static_cast<uint8_t*>(mem);
  // The kernel places an anonymous mapping of 2 MiB or more on a 2 MiB
  // boundary (Linux 6.7 and later); elsewhere only its aligned middle gets
  // huge pages. EINVAL (no THP support): small pages.
  if (PagesForNewBuffers() == Pages::kHuge &&
      madvise(buf_, size_, MADV_HUGEPAGE) == 0) {
    pages_ = Pages::kHuge;
  }
  reader_.reset(new ChunkSeqReader(this));
  erase_reader_.reset(new ChunkSeqReader(this));
  // A buffer of one commit step has nothing to warm ahead of its writes.
  const size_t ahead = WarmAheadForNewBuffers();
  if (warm && ahead > 0 && size_ > PageWarmer::kStep)
    warmer_.reset(new PageWarmer(buf_, size_, ahead));
  return true;
}

TraceBufferV2::~TraceBufferV2() {
  warmer_.reset();  // joins its thread: no read of the mapping after this
  if (buf_)
    munmap(buf_, size_);
}

// ---- Sequences --------------------------------------------------------------

// Writes, patches and the read walk look the same sequence up many times in
// a row: the last one found is remembered (map nodes do not move; the cache
// is dropped wherever a sequence is deleted).
SequenceState* TraceBufferV2::FindSequenceInMap(ProducerID producer_id,
                                                WriterID writer_id) {
  const uint32_t key = SeqKey(producer_id, writer_id);
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
      seq->pending_loss = lost->second.bits;
      seq->past_first_packet = true;
      seq->open_erased = lost->second.open_erased;
      seq->open_erased_after = lost->second.open_erased_after;
      seq->drop_continuation = lost->second.open_erased;
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
      const uint32_t bits = it->second.UnreportedLoss();
      if (bits || it->second.open_erased) {
        if (remembered_losses_.size() < kMaxRememberedLosses) {
          remembered_losses_[it->first] = RememberedLoss{
              bits, it->second.open_erased, it->second.open_erased_after};
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
  // The entries cover the whole stored payload (n > 0: WantsFragIndex()).
  RT_DCHECK(n > 0 && static_cast<size_t>(entries[n - 1].data_offset) +
                             entries[n - 1].size ==
                         chunk->payload_size());
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
  if (seq->open_erased)
    ResolveOpenErasedPacket(seq, chunk);
  return true;
}

// The packet whose start was erased continues past open_erased_after. The
// next chunk ends it (the buffer lost a packet its writer finished), carries
// it on, or does not continue it (the writer lost its end and counts it);
// a later ChunkID means the chunks between were lost before the buffer,
// maybe with the packet's end: counted. An earlier one (out of order, or
// late) says nothing about it.
void TraceBufferV2::ResolveOpenErasedPacket(SequenceState* seq,
                                            const TBChunk* chunk) {
  const ChunkID id = chunk->chunk_id;
  if (id != seq->open_erased_after + 1) {
    if (ChunkIdLess(seq->open_erased_after, id)) {
      stats_.packets_overwritten++;
      seq->open_erased = false;
    }
    return;
  }
  switch (ContinuationStep(chunk)) {
    case ChainStep::kEnds:
      stats_.packets_overwritten++;
      seq->open_erased = false;
      return;
    case ChainStep::kNotContinued:
      seq->open_erased = false;
      return;
    case ChainStep::kContinues:
      seq->open_erased_after = id;
      return;
  }
}

// Index of chunk |id| in the (sorted) queue, or q.size(). A sequence's
// ChunkIDs are almost always consecutive, so FindChunkIndex() (inline, in
// the header) tries the chunk |d| IDs before the back first at |d|
// positions before it: one probe of the chunk's own header (which the
// caller touches next anyway) instead of a binary search whose probes each
// load another chunk's header, cold in a large buffer. Gaps (lost chunks)
// and out-of-order commits fall back to this binary search.
size_t TraceBufferV2::FindChunkIndexSearch(const SequenceState& seq,
                                           ChunkID id) {
  const OffsetQueue& q = seq.chunks;
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
    consumed_prefix_ = 0;  // [TB-4]: once per buffer length, start over.
  }
  if (wr_ < data_end_) {
    // [TB-4]: the oldest data moves from wr_ to wr_ + outer_size, or to 0
    // when that passes data_end_ (the chunks up to data_end_ are erased).
    const size_t moved = std::min(outer_size, data_end_ - wr_);
    consumed_prefix_ = consumed_prefix_ > moved ? consumed_prefix_ - moved : 0;
    DeleteNextChunksFor(outer_size);
  }
  *offset = wr_;
  wr_ += outer_size;
  data_end_ = std::max(data_end_, wr_);
  used_size_ = std::max(used_size_, data_end_);
  if (RT_UNLIKELY(used_size_ > committed_))
    CommitAhead();
  return true;
}

// The first pass over a fresh mapping writes pages nobody touched yet, and
// each first write to a page traps into the kernel, which commits (zeroes)
// that one 4 KiB page: in ringtraced draining a fast producer into a fresh
// 2 GiB buffer those faults were 28% of the service's CPU
// (docs/performance.md). Committing the next kCommitStep bytes with one
// MADV_POPULATE_WRITE instead costs one system call per 64 pages, and no
// trap per page. The pages are committed just before they are written, so
// memory grows with the data as before (at most kCommitStep ahead), unlike a
// MAP_POPULATE of the whole buffer, which would commit a 2 GiB buffer at
// creation. The step is small enough that one call (about 64 pages zeroed)
// never stalls the drain thread for long. With huge pages (Pages::kHuge)
// the step is one 2 MiB page.
// Kernels before 5.14 refuse the advice (EINVAL): the writes then fault the
// pages in as before.
void TraceBufferV2::CommitAhead() {
  const size_t kCommitStep =
      pages_ == Pages::kHuge ? size_t{2} << 20 : size_t{256} * 1024;
  // [PW-1]: the warmer is told before any write past what it was told
  // (the caller writes below used_size_ once this returns), whether or not
  // the kernel commits ahead. It may have committed these pages already;
  // the advice below then only walks them.
  if (warmer_)
    warmer_->Claim(std::min(base::AlignUp(used_size_, kCommitStep), size_));
  if (!commit_ahead_)
    return;
  // Bounded: at most (used_size_ - committed_) / kCommitStep + 1 steps; one
  // in the steady state (a write is at most 64 KiB).
  while (committed_ < used_size_ && committed_ < size_) {
    const size_t len = std::min(kCommitStep, size_ - committed_);
    if (madvise(buf_ + committed_, len, MADV_POPULATE_WRITE) != 0) {
      commit_ahead_ = false;
      return;
    }
    committed_ += len;
  }
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

// ---- Memory -----------------------------------------------------------------

// Pages of the mapping touched so far (committed lazily, never returned),
// this object, and every heap allocation it owns (hash-table buckets and
// nodes estimated as one pointer per bucket and per node).
size_t TraceBufferV2::GetMemoryUsageBytes() const {
  size_t bytes =
      base::AlignUp(std::max({used_size_, committed_,
                              warmer_ ? warmer_->committed_end() : size_t{0}}),
                    kPageSize) +
      sizeof(*this);
  bytes += sequences_.bucket_count() * sizeof(void*);
  for (const auto& kv : sequences_) {
    bytes += sizeof(kv) + sizeof(void*) +
             kv.second.chunks.capacity() * sizeof(uint32_t) +
             kv.second.deferred_losses.capacity() *
                 sizeof(SequenceState::DeferredLoss);
  }
  bytes +=
      remembered_losses_.bucket_count() * sizeof(void*) +
      remembered_losses_.size() *
          (sizeof(std::pair<const uint32_t, RememberedLoss>) + sizeof(void*));
  bytes += 2 * sizeof(ChunkSeqReader) +
           erase_packet_.slices().capacity() * sizeof(TracePacket::Slice) +
           scratch_sizes_.capacity() * sizeof(uint32_t) +
           scratch_index_.capacity() * sizeof(FragIndexEntry);
#if RT_DCHECK_IS_ON
  bytes += debug_checksums_.bucket_count() * sizeof(void*) +
           debug_checksums_.size() *
               (sizeof(std::pair<const uint32_t, uint32_t>) + sizeof(void*));
#endif
  return bytes;
}

#if RT_DCHECK_IS_ON
void TraceBufferV2::DebugSetChecksumImpl(size_t offset) {
  debug_checksums_[static_cast<uint32_t>(offset)] =
      DebugChunkChecksum(ChunkAt(offset));
}

void TraceBufferV2::DebugCheckAndForgetChecksumImpl(size_t offset) {
  auto it = debug_checksums_.find(static_cast<uint32_t>(offset));
  RT_CHECK(it != debug_checksums_.end());
  // A stored chunk changed behind our back: a bug in this class.
  RT_CHECK(it->second == DebugChunkChecksum(ChunkAt(offset)));
  debug_checksums_.erase(it);
}
#endif

}  // namespace trace_buffer
}  // namespace ringtrace
