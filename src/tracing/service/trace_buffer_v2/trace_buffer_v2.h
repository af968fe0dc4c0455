/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2: the service-side, non-shared, in-memory trace buffer.
//
// One instance exists per buffer of a trace config. Producers' chunks are
// copied (almost verbatim) into one contiguous memory region; readback
// reassembles the TracePackets of every {ProducerID, WriterID} sequence, in
// per-sequence FIFO order and approximately in global buffer order, and
// reports every data loss in TracePacket.previous_packet_dropped (a
// DataLossReason bitmask). Design: docs/trace-buffer-design.md;
// implementation choices: docs/trace_buffer_v2.md.
//
// Storage: chunks are stored back to back, 4-byte aligned, with a 16-byte
// TBChunk header (tb_chunk.h) followed by the chunk's fragments. Every piece
// of state refers to chunks by offset, never by pointer, so CloneReadOnly()
// is a plain copy.
//
// Two write paths:
//  - CopyChunkUntrusted(): the v1 CommitData / SMB-scraping form, payload
//    in the v1 "varint size + fragment bytes" format, stored as it came (one
//    memcpy), with a fragment index when the chunk is final and large enough.
//  - CopyChunkFragments() / BeginChunkFragments(): the ring drainer form, a
//    list of fragment sizes; the buffer writes a fragment index and the
//    fragments' bytes are copied once, back to back, straight into the buffer
//    (a ring chunk's payload in one memcpy).
// Readers see both layouts alike (tb_chunk.h, [TB-IDX]).
//
// Thread model: NOT thread-safe. One thread (the service's task runner) calls
// every method. Pointers returned to the caller (TracePacket slices,
// BeginChunkFragments destinations) stay valid until the next call of a
// non-const method.
//
// Untrusted input: everything a producer controls (chunk bytes, sizes, flags,
// fragment counts, IDs, patches) is validated; violations are counted in
// stats() and reported as data loss on the offending sequence only. They never
// crash, hang or read out of bounds.

#ifndef SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_H_
#define SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_H_

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ringtrace/logging.h"
#include "ringtrace/strong_flags.h"
#include "src/tracing/service/trace_buffer_v2/page_warmer.h"
#include "src/tracing/service/trace_buffer_v2/sequence_state.h"
#include "src/tracing/service/trace_buffer_v2/tb_chunk.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2_types.h"

namespace ringtrace {
namespace trace_buffer {

// Chunk flags: TBChunkFlags (tb_chunk.h), the buffer's one vocabulary. The
// admission calls below take them and keep only
// the bits of their path.

// A v1 fragment whose size header holds the maximum 4-byte varint value means
// "the writer dropped this packet": it has no payload bytes.
constexpr uint32_t kPacketSizeDropPacket = (1u << 28) - 1;

// Largest chunk (16-byte header + payload) the buffer stores. Bigger chunks
// are rejected and counted as ABI violations.
constexpr size_t kTBChunkHeaderSize = 16;
constexpr size_t kMaxChunkSize = 64 * 1024;
constexpr size_t kMaxChunkPayloadSize = kMaxChunkSize - kTBChunkHeaderSize;

// Empty SequenceStates kept alive after their last chunk is consumed, so that
// ChunkID gaps are still detected in long traces (see docs).
constexpr size_t kKeepLastEmptySeq = 1024;
// Empty sequences deleted while a loss was still to be reported on them keep
// that loss in a small side table (their key -> DataLossReason bits), so
// that the sequence's next packet still carries it. At most this many.
constexpr size_t kMaxRememberedLosses = 1u << 16;

// TracePacket.previous_packet_dropped bits. kPresent is set whenever any other
// bit is. docs/trace_buffer_v2.md lists which loss case sets which bit.
enum DataLossReason : uint32_t {
  kDataLossPresent = 1u << 0,
  kDataLossReadGap = 1u << 1,
  kDataLossChunkCorrupted = 1u << 2,
  kDataLossOrphanContinuation = 1u << 3,
  kDataLossReassemblyGap = 1u << 4,
  kDataLossReassemblyBrokenChain = 1u << 5,
  kDataLossOverwrite = 1u << 6,
  kDataLossWriterAbort = 1u << 7,
  kDataLossSmbFull = 1u << 8,
};

// For CopyChunkFragments / BeginChunkFragments.
struct FragmentRef {
  const uint8_t* data;
  uint32_t size;
};

// A reassembled packet: an ordered list of slices pointing into the buffer's
// memory. Valid until the next non-const call on the buffer that produced it.
class TracePacket {
 public:
  struct Slice {
    const uint8_t* data;
    size_t size;
  };

  const std::vector<Slice>& slices() const { return slices_; }
  size_t size() const { return size_; }  // Sum of the slice sizes.
  bool empty() const { return slices_.empty(); }

  // Concatenates the slices (tests and slow paths only).
  std::string GetRawBytesForTesting() const;

  void Clear() {
    slices_.clear();
    size_ = 0;
  }
  void AddSlice(const uint8_t* data, size_t size) {
    // Not push_back(Slice{data, size}): GCC builds that temporary on the
    // stack with two 8-byte stores and reloads it as one 16-byte value, a
    // store-forwarding stall on every packet read (a third of the fast read
    // path's time). Writing the fields in place avoids it.
    slices_.emplace_back();
    Slice& slice = slices_.back();
    slice.data = data;
    slice.size = size;
    size_ += size;
  }

 private:
  std::vector<Slice> slices_;
  size_t size_ = 0;
};

// Who wrote a packet, as known by the service.
struct PacketSequenceProperties {
  ProducerID producer_id_trusted = 0;
  ClientIdentity client_identity_trusted;
  WriterID writer_id = 0;
};

// Called with every valid packet about to be overwritten (RING_BUFFER), in
// sequence order, before its bytes are reused (the ProtoVM hook). The packet's
// slices are valid only during the call. It runs inside a write call: it must
// not call back into the buffer.
using OverwriteObserver =
    std::function<void(const PacketSequenceProperties&, const TracePacket&)>;

struct TraceBufferStats {
  uint64_t bytes_written = 0;          // Chunk bytes stored (headers incl.).
  uint64_t bytes_overwritten = 0;      // Chunk bytes erased unread.
  uint64_t bytes_read = 0;             // Packet bytes returned to readers.
  uint64_t padding_bytes_written = 0;  // Padding created (partial erase...).
  uint64_t padding_bytes_cleared = 0;  // Padding erased by wrap-around.
  uint64_t chunks_written = 0;         // Chunks accepted (not recommits).
  uint64_t chunks_rewritten = 0;       // Legal recommits of scraped chunks.
  uint64_t chunks_overwritten = 0;     // Chunks erased with unread data.
  uint64_t chunks_discarded = 0;       // Rejected: DISCARD buffer full.
  uint64_t chunks_read = 0;            // Chunks fully consumed by readback.
  // Chunk bytes (headers incl.) of the chunks counted in chunks_read: what
  // Perfetto's BufferStats.bytes_read counts (bytes_read above counts the
  // packet bytes instead).
  uint64_t chunk_bytes_read = 0;
  uint64_t chunks_committed_out_of_order = 0;
  uint64_t write_wrap_count = 0;
  uint64_t patches_succeeded = 0;  // Patches applied (not calls).
  uint64_t patches_failed = 0;     // Calls that applied nothing.
  uint64_t abi_violations = 0;     // Malformed chunks / recommits / patches.
  // Writer-side losses the buffer learns of: chunks admitted (linked) with
  // the writer's data-loss flag (kChunkDataLoss: the writer lost one or more
  // packets before that chunk), plus kPacketSizeDropPacket fragments met by
  // a reader or by a tokenizing erase. See docs/trace_buffer_v2.md.
  uint64_t trace_writer_packet_loss = 0;
  // Packets their writer finished whose first fragment RING_BUFFER wrapping
  // erased unread, each once: complete ones (the ones handed to the
  // overwrite observer) at the erase of the chunk holding their first
  // fragment; one whose end lies beyond that chunk once its end is known
  // (the writer's next chunk continues and ends it, or a ChunkID gap hides
  // it), never one its writer did not finish (its next chunk does not
  // continue it: the writer counts that packet as dropped itself); v1
  // packets that could not be read (pending patches, scraped) at the
  // erase. Counted by writes only, never by reads. Empty packets carry
  // nothing and do not count. Not a Perfetto BufferStats field.
  uint64_t packets_overwritten = 0;
  // DISCARD: packets lost in chunks of the drainer path
  // (BeginChunkFragments / CopyChunkFragments) that the full buffer
  // rejected (chunks_discarded), which the buffer does not hold to count
  // one by one: every packet that begins and ends in the rejected
  // fragments, the packet whose head the buffer took from the writer's
  // previous chunk when this one, its continuation, is rejected, and a
  // packet begun in a rejected chunk once the writer's next chunk continues
  // and ends it. A packet is counted when its end is offered, never before:
  // when the writer's next chunk does not continue it, the writer lost the
  // packet's end and counts the packet as dropped itself, and a packet
  // still open at the end of the trace is no finished packet. The drainer
  // offers an open chunk again as it grows (a scrape, then the whole chunk;
  // or a copy aborted after its ownership CAS lost): only fragments not
  // offered before count. With packets_overwritten (RING_BUFFER) this makes
  // the packets a buffer lost exact, and disjoint from the packets the
  // writers count as dropped. Not a Perfetto BufferStats field.
  uint64_t packets_discarded = 0;
  // Sequences deleted by the bounded cleanup while they still had a loss to
  // report, whose loss could not be remembered (more than
  // kMaxRememberedLosses such sequences): the loss stays counted in the
  // other stats but is not flagged on the sequence's next packet. Only a
  // producer cycling through tens of thousands of writers gets here. Not a
  // Perfetto BufferStats field.
  uint64_t sequence_losses_forgotten = 0;
  uint64_t late_chunks_dropped = 0;   // Arrived after their successor was read
                                      // or after being overwritten.
  uint64_t readaheads_succeeded = 0;  // Packets reassembled across chunks.
  uint64_t readaheads_failed = 0;     // Reassemblies given up (data loss).
};

class ChunkSeqReader;

class TraceBufferV2 {
 public:
  enum class OverwritePolicy { kOverwrite /* RING_BUFFER */, kDiscard };

  // |size_bytes| is rounded up to a multiple of 4 KiB. Returns nullptr if it
  // is 0 or the memory cannot be reserved.
  static std::unique_ptr<TraceBufferV2> Create(size_t size_bytes,
                                               OverwritePolicy policy);

  // The pages of the buffers created from now on in this process (the
  // service's choice, ringtraced --buffer-pages). kSmall: 4 KiB pages
  // committed 256 KiB ahead of the writes. kHuge: the mapping asks for
  // transparent huge pages (MADV_HUGEPAGE) and is committed 2 MiB ahead,
  // so a fresh buffer's first pass takes one page fault and one
  // page-table entry per 2 MiB instead of per 4 KiB. Which one is cheaper
  // depends on the machine (docs/trace_buffer_v2.md, "Storage format"):
  // on a VM whose guest page tables are shadowed a first write to a 4 KiB
  // page costs microseconds even when committed ahead, and huge pages
  // remove most of it; where the kernel compacts memory to find a huge
  // page on the writing thread, the stalls can cost more than they save.
  // Where the kernel refuses the advice the buffer uses small pages.
  enum class Pages { kSmall, kHuge };
  static void SetPagesForNewBuffers(Pages pages);
  static Pages PagesForNewBuffers();
  // What this buffer asked for (kSmall if MADV_HUGEPAGE was refused).
  Pages pages() const { return pages_; }
  // How far ahead of the writes a PageWarmer (page_warmer.h) runs in the
  // buffers created from now on in this process, in bytes; 0 (the
  // default): none. With one, a fresh buffer's pages are committed and
  // read by the warmer's thread before the writer (the drain thread)
  // reaches them, so the first-touch cost is not on the writer
  // (ringtraced --warm-ahead-kb; docs/trace_buffer_v2.md, "Storage
  // format"). Read-only clones have none.
  static void SetWarmAheadForNewBuffers(size_t bytes);
  static size_t WarmAheadForNewBuffers();
  // This buffer's warmer's totals (zeros without one).
  PageWarmer::Stats warmer_stats() const;
  ~TraceBufferV2();
  TraceBufferV2(const TraceBufferV2&) = delete;
  TraceBufferV2& operator=(const TraceBufferV2&) = delete;

  // ---- Writer side -------------------------------------------------------

  // v1 path. |src| points to the chunk payload (fragments, each prefixed by a
  // varint size) of |size| bytes; |num_fragments| as declared in the chunk
  // header; |chunk_flags| the v1 chunk flags, kChunkContinuesFromPrev /
  // kChunkContinuesOnNext / kChunkNeedsPatching (kV1AdmissionMask, the v1
  // ABI's bits; others are ignored).
  // |chunk_complete| is false for SMB scraping: the last fragment is then never
  // read, and the sequence stalls until the chunk is recommitted (the only
  // legal recommit) or overwritten.
  // Returns false if the chunk was rejected (counted in stats()).
  bool CopyChunkUntrusted(ProducerID producer_id,
                          const ClientIdentity& client_identity,
                          WriterID writer_id,
                          ChunkID chunk_id,
                          uint16_t num_fragments,
                          TBChunkFlags chunk_flags,
                          bool chunk_complete,
                          const uint8_t* src,
                          size_t size);

  // Ring drainer path, one shot: copies each fragment once, back to back
  // (BeginChunkFragments, then CommitPendingChunk). |flags| are
  // kChunkContinuesFromPrev / kChunkContinuesOnNext / kChunkDataLoss
  // (kFragmentAdmissionMask; others are ignored).
  bool CopyChunkFragments(ProducerID producer_id,
                          const ClientIdentity& client_identity,
                          WriterID writer_id,
                          ChunkID chunk_id,
                          const FragmentRef* fragments,
                          size_t num_fragments,
                          TBChunkFlags flags);

  // Ring drainer path, two phases: reserves space (overwriting as needed) for
  // fragments of |sizes| and returns where their bytes go, back to back
  // (fragment 0's |sizes[0]| bytes, then fragment 1's, ...: a ring chunk's
  // payload as it lies in the ring), or nullptr if the chunk is rejected
  // (counted). The caller copies, then calls exactly one of
  // CommitPendingChunk() (the chunk becomes readable) or AbortPendingChunk()
  // (the space becomes padding). At most one pending chunk at a time; no other
  // method may be called while one is pending.
  uint8_t* BeginChunkFragments(ProducerID producer_id,
                               const ClientIdentity& client_identity,
                               WriterID writer_id,
                               ChunkID chunk_id,
                               const uint32_t* sizes,
                               size_t num_fragments,
                               TBChunkFlags flags);
  void CommitPendingChunk();
  void AbortPendingChunk();

  // A 4-byte patch at |offset_untrusted| from the start of the chunk payload
  // (offset 0 is the first byte of the first fragment's size header).
  struct Patch {
    uint32_t offset_untrusted = 0;
    uint8_t data[4] = {};
  };

  // Applies |patches| to chunk {producer_id, writer_id, chunk_id} if the buffer
  // still holds it unread and it needs patching. All-or-nothing: returns false
  // (counted in patches_failed) if the chunk is gone or does not need patches,
  // or if a patch does not fit (outside [read_offset, payload_size); also an
  // abi_violation). A refused call changes nothing: the chunk keeps its bytes
  // and its pending patches (its sequence stays stalled), and a later valid
  // patch still applies. |other_patches_pending| = false clears
  // needs-patching and releases the sequence's stall.
  bool TryPatchChunkContents(ProducerID producer_id,
                             WriterID writer_id,
                             ChunkID chunk_id,
                             const Patch* patches,
                             size_t num_patches,
                             bool other_patches_pending);

  // ---- Reader side -------------------------------------------------------

  // Starts a read pass at the oldest data (just after the write cursor).
  void BeginRead();

  // Returns the next packet of this pass, or false when the pass is done (the
  // walk is back at the write cursor; stalled sequences are skipped).
  // |previous_packet_dropped| gets the DataLossReason bitmask of the losses on
  // this packet's sequence since the previous packet returned for it (0: none).
  bool ReadNextTracePacket(TracePacket* packet,
                           PacketSequenceProperties* sequence_properties,
                           uint32_t* previous_packet_dropped);
  // The same, and |*first_packet_on_sequence| is set to true only if this
  // packet is known to be the first packet its writer wrote on the sequence
  // with nothing lost before it: it is the first packet this buffer ever
  // returned, erased or dropped for the sequence, it comes from the
  // sequence's chunk with ChunkID 0 (writers and the ring drainer number a
  // writer's chunks from 0) and it carries no loss. Anything else (earlier
  // packets read or overwritten, a first chunk with another ID, a loss
  // reported on it) gives false.
  bool ReadNextTracePacket(TracePacket* packet,
                           PacketSequenceProperties* sequence_properties,
                           uint32_t* previous_packet_dropped,
                           bool* first_packet_on_sequence);

  // Right after a ReadNextTracePacket() that returned true: up to |max| of
  // the packets the next calls would return, taken in one call, while they
  // are plain packets of the same sequence stored one after the other in
  // one chunk (each whole in one slice, with no loss reported on it and not
  // the first on its sequence; the packet just returned carries the
  // sequence's properties, any loss and the first flag). Writes them to
  // |out| and returns how many; 0 says the next packet is not such a one
  // (or there is none): call ReadNextTracePacket(). Same effects on the
  // read state and stats as that many ReadNextTracePacket() calls. The
  // slices stay valid until the next write or BeginRead().
  size_t ReadMorePacketsOfRun(TracePacket::Slice* out, size_t max);

  // A read-only copy (CLONE_SNAPSHOT): same contents, read state and stats.
  // Writes to the clone are rejected. Returns nullptr on allocation failure.
  std::unique_ptr<TraceBufferV2> CloneReadOnly() const;

  // Tests only: with false, readback never takes the per-packet fast path
  // through a chunk's fragment index (ChunkSeqReader::TakeFromRun()), so that
  // a test can compare both paths byte for byte. Not copied by clones.
  void SetReadFastPathForTesting(bool enabled);
  // Tests only: packets the fast path returned so far.
  uint64_t ReadFastPathPacketsForTesting() const;
  // Tests and benchmarks only: with false, pages are committed by the first
  // write to each (the kernel's page fault) instead of ahead of the writes
  // (CommitAhead()). Call before the first write.
  void SetCommitAheadForTesting(bool enabled) { commit_ahead_ = enabled; }
  // Tests only: with false, every read pass starts at the oldest data and
  // walks over the chunks already consumed ([TB-4] in the .cc kept at 0),
  // so that a test can compare both. Not copied by clones.
  void SetSkipConsumedPrefixForTesting(bool enabled) {
    skip_consumed_prefix_ = enabled;
    consumed_prefix_ = 0;
  }
  // Tests only: bytes a read pass now skips at its start ([TB-4]).
  size_t consumed_prefix_for_testing() const { return consumed_prefix_; }
  // Bytes of the mapping committed ahead of the writes so far.
  size_t committed_ahead() const { return committed_; }

  void set_overwrite_observer(OverwriteObserver observer) {
    overwrite_observer_ = std::move(observer);
  }

  const TraceBufferStats& stats() const { return stats_; }
  size_t size() const { return size_; }
  // High-water mark of the bytes ever used in the buffer memory.
  size_t used_size() const { return used_size_; }
  // Buffer pages touched plus bookkeeping.
  size_t GetMemoryUsageBytes() const;
  // True if some chunk is still queued in its sequence: it holds unread data
  // (possibly stalled), or a read pass stopped right after its last packet and
  // it has not been popped yet (the next pass pops it).
  bool has_data() const { return num_live_chunks_ != 0; }
  OverwritePolicy overwrite_policy() const { return policy_; }

  // Calls |fn| with the ProducerID of every SequenceState the buffer keeps
  // (empty ones included; a producer with several writers comes several
  // times). The service reuses a ProducerID only when none is left.
  void ForEachSequenceProducer(
      const std::function<void(ProducerID)>& fn) const {
    for (const auto& kv : sequences_)
      fn(SequenceKey::FromValue(kv.first).producer());
  }

  // For tests: number of SequenceStates alive (including empty ones).
  size_t num_sequences_for_testing() const { return sequences_.size(); }
  // For tests: the buffer memory (to simulate a stray write).
  uint8_t* buffer_memory_for_testing() { return buf_; }

 private:
  friend class ChunkSeqReader;

  TraceBufferV2(size_t size, OverwritePolicy policy);
  // |warm|: start a PageWarmer if WarmAheadForNewBuffers() asks for one.
  bool Initialize(bool warm);

  uint8_t* begin() { return buf_; }
  // The walk steps past the chunk at |offset| (rd_ is just after it), which
  // it skipped or read up to: [TB-4] extends over it if it is padding or
  // consumed and the pass is still in the prefix.
  void NoteWalkedPast(size_t offset);
  // Debug builds: checks [TB-4].
  void CheckConsumedPrefix() const;
  // Inline, like FindSequence()'s cache check and the debug checksum hooks
  // below: they sit on the per-packet read path and on every patch, where
  // an out-of-line call each was a measurable part of the cost.
  TBChunk* ChunkAt(size_t offset) {
    RT_DCHECK(offset < data_end_ && offset % 4 == 0);
    return reinterpret_cast<TBChunk*>(buf_ + offset);
  }

  // Common prologue of the write paths; false if writes are not allowed.
  bool BeginWrite();
  // Counts a malformed chunk and reports the loss on its sequence.
  void RejectChunk(ProducerID, const ClientIdentity&, WriterID, ChunkID);
  bool Recommit(SequenceState* seq,
                size_t idx,
                TBChunkFlags flags,
                const uint8_t* src,
                size_t size,
                size_t valid_size,
                size_t readable_end);

  // Reserves |outer_size| bytes at the write cursor, erasing (RING_BUFFER)
  // what is there. Returns false if the chunk must be rejected.
  bool ReserveAt(size_t outer_size, size_t* offset);
  // Erases every chunk overlapping [wr_, wr_ + bytes), passing their packets
  // to the observer; the remainder of a partially erased chunk becomes
  // padding.
  void DeleteNextChunksFor(size_t bytes);
  void EraseChunkAt(size_t offset);
  void PrefetchAhead(size_t next);
  // First pass over the memory: commits the pages the next writes reach,
  // kCommitStep at a time (see the .cc).
  void CommitAhead();
  // Read side: prefetches the head of the chunk at |offset| (a hint; see
  // trace_buffer_v2_read.cc).
  void PrefetchChunkHead(size_t offset) const;
  void WritePadding(size_t offset, size_t size);

  SequenceState* GetOrCreateSequence(ProducerID,
                                     WriterID,
                                     const ClientIdentity&);
  static uint32_t SeqKey(ProducerID p, WriterID w) {
    return SequenceKey(p, w).value();
  }
  SequenceState* FindSequence(ProducerID producer_id, WriterID writer_id) {
    if (last_seq_ && last_seq_key_ == SeqKey(producer_id, writer_id))
      return last_seq_;
    return FindSequenceInMap(producer_id, writer_id);
  }
  // FindSequence() past its one-entry cache.
  SequenceState* FindSequenceInMap(ProducerID, WriterID);
  // Index of chunk |id| in |seq|'s queue, or its size if it is not there.
  // Inline: every v1 write (the recommit check) and every patch calls it,
  // and almost always one of the first two cases answers (see
  // FindChunkIndexSearch() in trace_buffer_v2.cc for why the guess works).
  // If found and |offset| is not null, *offset is the chunk's offset (saves
  // the caller a second look into the queue).
  size_t FindChunkIndex(const SequenceState& seq,
                        ChunkID id,
                        uint32_t* offset = nullptr) {
    const OffsetQueue& q = seq.chunks;
    if (q.empty() || ChunkIdLess(seq.back_chunk_id, id))
      return q.size();  // Newer than every chunk: usual for a new chunk.
    const uint32_t from_back = seq.back_chunk_id - id;  // Modulo 2^32.
    if (from_back < q.size()) {
      const size_t guess = q.size() - 1 - from_back;
      const uint32_t guess_offset = q.at(guess);
      if (ChunkAt(guess_offset)->chunk_id == id) {
        if (offset)
          *offset = guess_offset;
        return guess;
      }
    }
    const size_t idx = FindChunkIndexSearch(seq, id);
    if (offset && idx != q.size())
      *offset = q.at(idx);
    return idx;
  }
  // FindChunkIndex() when the guess missed: a binary search.
  size_t FindChunkIndexSearch(const SequenceState& seq, ChunkID id);
  // Links a just-written chunk into its sequence (ChunkID order). Returns
  // false (and turns the chunk into padding) if it must be dropped.
  bool LinkChunk(SequenceState* seq, size_t offset);
  // After LinkChunk() linked |chunk|: if |seq| has an erased packet whose
  // end was still to come (SequenceState::open_erased), decides from
  // |chunk| whether it counts in packets_overwritten.
  void ResolveOpenErasedPacket(SequenceState* seq, const TBChunk* chunk);
  // Whether a final v1 chunk whose |index_size| fragments end at byte
  // |valid_size| gets a fragment index (tb_chunk.h): worth it, and the chunk
  // still fits.
  bool GetsFragIndex(size_t valid_size, size_t index_size) const;
  // Writes the |n| index entries of a chunk flagged kTBFragIndex.
  void WriteFragIndex(TBChunk* chunk, const FragIndexEntry* entries, size_t n);
  void OnSequenceMaybeEmpty(SequenceState* seq);

  // Debug builds only (no-ops otherwise): the design's per-chunk checksum.
  // The 16-byte TBChunk header has no room for it (it must stay the size of
  // the SMB chunk header, so patch offsets map 1:1), so it lives in a side
  // table keyed by chunk offset. Set when a chunk becomes readable and after
  // every legitimate change of its bytes (recommit, patch); checked when the
  // chunk is consumed (read or erased). A mismatch is a bug of this class
  // (stray write into a stored chunk), hence a DCHECK.
  void DebugSetChecksum(size_t offset) {
#if RT_DCHECK_IS_ON
    DebugSetChecksumImpl(offset);
#else
    (void)offset;
#endif
  }
  void DebugCheckAndForgetChecksum(size_t offset) {
#if RT_DCHECK_IS_ON
    DebugCheckAndForgetChecksumImpl(offset);
#else
    (void)offset;
#endif
  }
#if RT_DCHECK_IS_ON
  void DebugSetChecksumImpl(size_t offset);
  void DebugCheckAndForgetChecksumImpl(size_t offset);
#endif
  void DeleteStaleEmptySequences(size_t threshold);
  void OnWrite();

  // Memory.
  uint8_t* buf_ = nullptr;
  size_t size_ = 0;
  OverwritePolicy policy_;
  bool read_only_ = false;
  bool discard_full_ = false;

  // Write state: [0, data_end_) is tiled with chunks (data and padding);
  // wr_ <= data_end_ is the write cursor, at a chunk boundary.
  size_t wr_ = 0;
  size_t data_end_ = 0;
  size_t used_size_ = 0;
  size_t pf_ = 0;  // Prefetch cursor (a hint, see PrefetchAhead()).
  // [0, committed_) was committed by CommitAhead(); false once the kernel
  // refused (then pages are committed by the writes themselves).
  size_t committed_ = 0;
  bool commit_ahead_ = true;
  Pages pages_ = Pages::kSmall;
  // Told of every write before it happens ([PW-1], CommitAhead());
  // destroyed before the mapping.
  std::unique_ptr<PageWarmer> warmer_;

  // Pending two-phase chunk.
  bool has_pending_ = false;
  size_t pending_offset_ = 0;

  // DISCARD only: what stats_.packets_discarded needs (see there;
  // trace_buffer_v2_discard.cc). A RING_BUFFER keeps none of it.
  // The last drainer-path chunk of a writer that was committed or
  // rejected for want of room.
  struct DiscardLastChunk {
    ChunkID chunk_id = 0;
    size_t fragments = 0;
    bool rejected = false;
    // Its last fragment continues on the next chunk: a packet goes on.
    bool continues_on_next = false;
    // That packet lost a part in a rejected chunk: it counts once its end
    // is offered.
    bool open_lost = false;
  };
  // The packets of a rejected chunk of |num_fragments| fragments with
  // |flags| whose fragments from |first_new| on were not offered before:
  // those that begin and end in them, and fragment 0's if it ends a packet
  // that goes on from the writer's previous chunk (|chain_in|). *open: the
  // chunk's last packet goes on past it, uncounted.
  static uint64_t DiscardedPackets(size_t first_new,
                                   size_t num_fragments,
                                   TBChunkFlags flags,
                                   bool chain_in,
                                   bool* open);
  // A drainer-path chunk rejected for want of room: counts what it loses.
  void OnChunkDiscarded(uint32_t key,
                        ChunkID chunk_id,
                        size_t num_fragments,
                        TBChunkFlags flags);
  // A drainer-path chunk admitted: what its commit counts and remembers
  // (discard_pending_*).
  void OnChunkAdmittedForDiscard(uint32_t key,
                                 ChunkID chunk_id,
                                 size_t num_fragments,
                                 TBChunkFlags flags);
  // By SeqKey(); one entry per writer that offered this buffer a chunk.
  std::unordered_map<uint32_t, DiscardLastChunk> discard_last_chunks_;
  uint32_t discard_pending_key_ = 0;
  DiscardLastChunk discard_pending_;
  // 1 when the pending chunk's commit ends a packet that lost a part in a
  // rejected chunk.
  uint64_t discard_pending_lost_ = 0;
  std::vector<uint32_t> scratch_sizes_;
  // Fragment index entries gathered while a v1 chunk is tokenized (at most
  // kMaxFragIndexEntries).
  std::vector<FragIndexEntry> scratch_index_;

  // Sequences, keyed by SequenceKey::value().
  std::unordered_map<uint32_t, SequenceState> sequences_;
  // Losses of deleted empty sequences not reported yet (key -> bits, and an
  // erased packet whose end was still to come, SequenceState::open_erased),
  // restored when the sequence comes back (kMaxRememberedLosses).
  struct RememberedLoss {
    uint32_t bits = 0;
    bool open_erased = false;
    ChunkID open_erased_after = 0;
  };
  std::unordered_map<uint32_t, RememberedLoss> remembered_losses_;
  // FindSequence()'s cache: the last sequence found (nullptr: none) and its
  // key. Reset wherever a sequence is deleted; not copied by clones.
  SequenceState* last_seq_ = nullptr;
  uint32_t last_seq_key_ = 0;
  size_t num_empty_sequences_ = 0;
  uint64_t empty_stamp_ = 0;
  size_t num_live_chunks_ = 0;  // Chunks linked in a sequence queue.

  // Read state.
  uint64_t read_generation_ = 0;
  size_t rd_ = 0;
  size_t rd_bytes_left_ = 0;
  // [TB-4] (in the .cc): the consumed chunks a read pass starts after. A
  // streamed session reads its buffer in many short passes; without it each
  // pass walked every chunk read before, a cache miss each.
  size_t consumed_prefix_ = 0;
  bool skip_consumed_prefix_ = true;
  // This pass has left only padding and consumed chunks behind so far: it
  // may extend consumed_prefix_.
  bool pass_in_prefix_ = false;
  size_t walk_target_ = 0;  // the chunk the active reader reads up to
  uint64_t write_generation_ = 0;
  uint64_t read_write_generation_ = 0;
  std::unique_ptr<ChunkSeqReader> reader_;
  std::unique_ptr<ChunkSeqReader> erase_reader_;
  TracePacket erase_packet_;

  OverwriteObserver overwrite_observer_;
  TraceBufferStats stats_;

#if RT_DCHECK_IS_ON
  std::unordered_map<uint32_t, uint32_t> debug_checksums_;  // offset -> sum
#endif
};

// The overwrite policies by the names of TraceConfig's fill policies, as the
// binaries' --fill-policy flags take them: kOverwrite is "ring_buffer"
// (RING_BUFFER), kDiscard is "discard" (DISCARD).
const char* FillPolicyName(TraceBufferV2::OverwritePolicy policy);
// Sets |*policy| to the policy named |name|; false (|*policy| untouched) for
// any other string.
bool ParseFillPolicy(const std::string& name,
                     TraceBufferV2::OverwritePolicy* policy);

}  // namespace trace_buffer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_H_
