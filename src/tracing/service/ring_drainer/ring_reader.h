/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// RingReader: the single reader of one shared ring (spec 5.3).
//
// Spec: docs/ring-protocol.md, sections 5.2,
// 5.3, 6.4, 7 and 8 ("the spec" below). Design notes beyond the spec:
// docs/ring_drainer.md.
//
// What it does
// ------------
// ReadOne() resolves at most one logical position (the reader's private
// read_pos). It acquire-loads the chunk's state word ONCE and dispatches on
// that snapshot:
//
//   FreeForWrap(wrap_count(p))  CAS -> FreeForWrap(next_wrap(p)); hole.
//   Acquired(w, n)              copy the published prefix, CAS ->
//                               RewriteRequested(w, n); emit (hole if n == 0).
//   Complete(w, n)              copy every fragment, CAS ->
//                               FreeForWrap(next_wrap(p)); emit.
//   RewriteRequested            leave it; hole.
//   Acknowledged                CAS -> FreeForWrap(next_wrap(p)); hole.
//
// A failed CAS returns the current word; the reader redispatches on it
// (the position is still its responsibility) until its retry budget for the
// call is spent, then returns kRetryLater with read_pos unchanged.
//
// One copy
// --------
// The payload goes straight from shared memory into its destination. Once the
// directory is copied and validated, the reader asks its ChunkConsumer for one
// destination per fragment (BeginChunk), copies the fragments there, and only
// then attempts the ownership CAS. If the CAS wins the consumer is told to
// CommitChunk(); if it loses, the copy was speculative (the writer published
// more, or reused the chunk) and the consumer is told to AbortChunk() before
// the reader redispatches. Nothing reaches a consumer's readers before Commit.
// After the copy the reader prefetches (for writing) the room right after
// the last fragment: sinks lay chunks out back to back, and on x86 the CAS
// waits for every store of the copy to commit, so the next chunk's
// write-allocate misses are best started before it.
//
// Head policy
// -----------
// With HeadPolicy::kDeferUnpublished a caller may ask the reader to leave a
// position whose writer has not published yet (reserved-but-unclaimed, or
// Acquired) for a later call, while at most half the ring is reserved. The
// reader still never waits; the drainer decides when to insist
// (RingDrainerOptions::head_grace_ns). The default, kResolve, is spec 5.3.
//
// Hostile producer
// ----------------
// The producer may rewrite any byte of the mapping at any moment. Named
// invariants, cited where they are relied upon:
//   [R1 private-cursor]  read_pos_ is the reader's own record. The shared
//                        read_pos is only ever stored, never loaded back.
//   [R2 distance]        writers reserve only while write_pos - read_pos <
//                        num_chunks, against a read_pos never ahead of ours,
//                        so 0 < write_pos - read_pos <= num_chunks for every
//                        honest ring; anything larger is a forged cursor.
//   [R3 free-tag]        the chunk of the unresolved position p holds
//                        FreeForWrap(wrap_count(p)) unless a writer claimed
//                        it (the reader wrote that tag when it resolved
//                        p - num_chunks); any other tag is corrupt state.
//   [R4 snapshot]        every decision is taken on one loaded (or
//                        CAS-returned) state word; the directory and BufferID
//                        are copied to private memory before they are parsed
//                        (spec 6.4), with checked arithmetic, and only ranges
//                        inside the chunk (whose size comes from the
//                        service-validated geometry) are read.
//   [R5 commit-after-cas] the consumer's pending chunk is committed only
//                        after the ownership CAS succeeded, aborted if it
//                        failed: a fragment is emitted at most once.
//   [R6 stopped]         after a protocol error the reader never touches the
//                        mapping again.
// Every loop is bounded by the geometry or by the retry budget. Anything the
// producer can cause is a counted, reported outcome: never a crash, a hang,
// or an out-of-bounds access.
//
// Protocol errors (spec 5.3, 3.4): a FreeForWrap tag other than
// wrap_count(read_pos), a reserved state (101, 110, 111), non-zero payload
// bits in Acknowledged, a failed Acknowledged reclaim, or a write_pos more
// than num_chunks ahead of read_pos. The reader then stops this ring for good:
// it leaves the state word and read_pos as they were, records the position
// and the offending word, and every later ReadOne() returns kProtocolError
// without touching the mapping. Other rings are unaffected.
//
// Thread model: one RingReader per ring, used by one thread at a time (the
// drain thread). Writers run concurrently in other threads or processes and
// only interact through the shared words.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_RING_READER_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_RING_READER_H_

#include <stddef.h>
#include <stdint.h>

#include <functional>

#include "ringtrace/logging.h"
#include "ringtrace/shm_ring_abi.h"

namespace ringtrace {
namespace ring_drainer {

enum class ReadResult {
  kNoData,         // read_pos == write_pos: nothing reserved to resolve.
  kSkipped,        // The position was resolved as a hole (read_pos advanced).
  kEmitted,        // The position's chunk was handed to the consumer.
  kRetryLater,     // CAS budget spent; read_pos unchanged.
  kProtocolError,  // The ring is stopped (see RingReader::protocol_error()).
  // Only with HeadPolicy::kDeferUnpublished: the position is reserved but
  // unclaimed, or its chunk is Acquired, and the ring is not under pressure;
  // it was left alone for a later call. read_pos unchanged, nothing written.
  kDeferred,
};

// What ReadOne() does with a position whose writer has not published yet
// (its chunk is FreeForWrap(wrap_count(p)) or Acquired).
enum class HeadPolicy {
  // Resolve it now (spec 5.3): burn the unclaimed position / scrape the
  // published prefix.
  kResolve,
  // Leave it for a later call (kDeferred) while at most half the ring is
  // reserved. The reader never waits: the caller decides when to come back
  // and when to insist (see RingDrainerOptions::head_grace_ns).
  kDeferUnpublished,
};

const char* ReadResultToString(ReadResult r);

enum class ProtocolErrorKind {
  kNone = 0,
  kFreeTagMismatch,            // FreeForWrap(k), k != wrap_count(read_pos).
  kReservedState,              // State 101, 110 or 111.
  kAcknowledgedPayloadBits,    // Acknowledged with non-zero bits 28..0.
  kAcknowledgedReclaimFailed,  // Someone else left Acknowledged.
  kWritePosOutOfRange,         // write_pos - read_pos > num_chunks.
};

const char* ProtocolErrorKindToString(ProtocolErrorKind k);

struct ProtocolError {
  ProtocolErrorKind kind = ProtocolErrorKind::kNone;
  uint32_t position = 0;  // The logical position being resolved (read_pos).
  // The offending shared word: the state word snapshot (or, for
  // kAcknowledgedReclaimFailed, the word the failed CAS returned), or the
  // write_pos value for kWritePosOutOfRange.
  uint32_t word = 0;
};

// What the reader knows about a chunk it is about to hand over. Everything
// here comes from the state word snapshot or from private copies.
struct ChunkDescriptor {
  uint32_t position = 0;
  shm_ring::WriterID writer_id = 0;
  // The 3-bit flags field of the state word (shm_ring::kFlag*).
  shm_ring::ChunkFlags abi_flags;
  shm_ring::BufferID target_buffer = 0;  // Format 00, bytes 4-5.
  uint32_t num_fragments = 0;
  uint32_t payload_size = 0;  // Sum of the fragment sizes.
  bool scraped = false;       // Prefix taken from an Acquired chunk.
};

// Why the reader resolved a data-bearing chunk without handing its payload to
// the consumer although the writer had put data in it.
enum class DropReason {
  kUnknownFormat,       // Format other than 00 (spec 3.4).
  kMalformedDirectory,  // Fails spec 6.4, or Complete with 0 fragments.
};

// The destination of the reader's chunks. Implemented by the drain loop.
class ChunkConsumer {
 public:
  virtual ~ChunkConsumer();

  // Called once the directory has been copied and validated, BEFORE the
  // ownership CAS. |sizes| has desc.num_fragments entries (all of them fit the
  // chunk; they add up to desc.payload_size). Return room for
  // desc.payload_size bytes, where the reader copies the fragments back to
  // back in one go, as they lie in the chunk; return nullptr to drop the
  // payload (the reader still performs the ownership transition; the
  // consumer counts what it refuses, the reader does not). Exactly
  // one of CommitChunk() or AbortChunk() follows, whatever this returned.
  virtual uint8_t* BeginChunk(const ChunkDescriptor& desc,
                              const uint32_t* sizes) = 0;

  // The reader's CAS succeeded: the chunk (and the bytes copied into the
  // room BeginChunk returned, if any) belongs to the reader exactly once.
  virtual void CommitChunk() = 0;

  // The reader's CAS failed: the copy was speculative and must be discarded.
  // The reader will redispatch on the word the CAS returned.
  virtual void AbortChunk() = 0;

  // The reader resolved a chunk whose payload it dropped itself (the
  // ownership transition succeeded). |writer_id| comes from the state word.
  virtual void OnChunkDropped(uint32_t position,
                              shm_ring::WriterID writer_id,
                              DropReason reason) = 0;
};

struct RingReaderStats {
  uint64_t positions_resolved = 0;  // holes + chunks that emitted.
  uint64_t holes = 0;               // Positions resolved as kSkipped.
  uint64_t scrapes = 0;             // Acquired -> RewriteRequested CAS won.
  uint64_t chunks_emitted = 0;      // Chunks committed to the consumer.
  uint64_t fragments_emitted = 0;
  uint64_t bytes_emitted = 0;  // Payload bytes committed to the consumer.
  // A chunk whose BeginChunk returned nullptr is resolved as a hole and
  // counted by the consumer, which refused it, not here (the service's
  // TraceBufferV2 counts what it rejects: one place per loss).
  uint64_t malformed_directories = 0;
  uint64_t unknown_formats = 0;
  uint64_t protocol_errors = 0;  // 0 or 1: the ring stops at the first.
  uint64_t retries = 0;          // Failed CAS, each followed by a redispatch
                                 // or by kRetryLater.
  uint64_t retry_later = 0;      // ReadOne calls that returned kRetryLater.
  uint64_t deferrals = 0;        // ReadOne calls that returned kDeferred.
};

class RingReader {
 public:
  // Failed CAS attempts allowed in one ReadOne() call before kRetryLater.
  static constexpr uint32_t kDefaultRetryBudget = 8;

  // Points in ReadOne() where a test can interleave another thread. The hook
  // runs on the reader's thread, right before the named CAS (after the
  // payload copy, for the data-bearing states) or right after a position was
  // resolved.
  enum class HookPoint {
    kBeforeAdvanceFree,          // FreeForWrap(cur) -> FreeForWrap(next).
    kBeforeMarkRewrite,          // Acquired -> RewriteRequested (after copy).
    kBeforeReclaimComplete,      // Complete -> FreeForWrap(next) (after copy).
    kBeforeReclaimAcknowledged,  // Acknowledged -> FreeForWrap(next).
    kAfterResolve,               // After read_pos was published.
  };
  using TestHook =
      std::function<void(HookPoint, uint32_t position, uint32_t word)>;

  // |view| must come from service-validated geometry (view.geometry()
  // .IsValid()) and map the whole ring. |read_pos| is the first position to
  // resolve: the service's own record, never a value loaded from the mapping
  // (0 for a freshly zero-filled ring).
  RingReader(shm_ring::RingView view,
             uint32_t read_pos,
             uint32_t retry_budget = kDefaultRetryBudget);

  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  // Resolves at most one logical position. See the header comment.
  ReadResult ReadOne(ChunkConsumer* consumer,
                     HeadPolicy head_policy = HeadPolicy::kResolve);

  // The next position to resolve (private copy; also the last value stored
  // to the shared read_pos).
  uint32_t read_pos() const { return read_pos_; }
  bool stopped() const { return error_.kind != ProtocolErrorKind::kNone; }
  const ProtocolError& protocol_error() const { return error_; }
  const RingReaderStats& stats() const { return stats_; }
  const shm_ring::RingView& view() const { return view_; }

  void SetTestHookForTesting(TestHook hook) { hook_ = std::move(hook); }

 private:
  // Outcome of one dispatch step on a snapshot word.
  enum class Step { kResolvedHole, kResolvedEmitted, kCasFailed, kError };

  // What the copy step did with a data chunk's payload.
  enum class Payload { kNone, kUnknownFormat, kMalformed, kRejected, kCopied };

  // Resolves an Acquired or Complete chunk in three steps: CopyPayload,
  // CasOwnership, then (if the CAS won) Account. On a failed CAS |*word|
  // holds what it found and the consumer's chunk was aborted.
  Step TakeDataChunk(uint32_t position,
                     uint32_t index,
                     uint32_t* word,
                     ChunkConsumer* consumer);
  // Validate + copy: checks the format and directory of the |snapshot|
  // (spec 3.4, 6.4), fills |*desc| and copies the payload into the
  // consumer's room. |*consumer_began| is set once BeginChunk was called.
  Payload CopyPayload(uint32_t position,
                      uint32_t index,
                      shm_ring::StateWord snapshot,
                      ChunkConsumer* consumer,
                      ChunkDescriptor* desc,
                      bool* consumer_began);
  // The ownership CAS from |*word| (== snapshot): Acquired ->
  // RewriteRequested (scrape, spec 7) or Complete -> FreeForWrap(next).
  bool CasOwnership(uint32_t position,
                    uint32_t index,
                    shm_ring::StateWord snapshot,
                    uint32_t* word);
  // Accounting after a won CAS: stats and drop reports; the dispatch step.
  Step Account(uint32_t position,
               shm_ring::StateWord snapshot,
               Payload payload,
               const ChunkDescriptor& desc,
               ChunkConsumer* consumer);
  // Copies and validates the directory of a format-00 chunk holding |n|
  // published fragments (spec 6.4). Returns false if it is malformed.
  bool CopyDirectory(const uint8_t* chunk,
                     uint32_t n,
                     uint32_t* sizes,
                     uint32_t* total) const;
  ReadResult Advance(uint32_t position, Step step, uint32_t word);
  ReadResult Fail(ProtocolErrorKind kind, uint32_t position, uint32_t word);
  void Hook(HookPoint point, uint32_t position, uint32_t word) {
    if (RT_UNLIKELY(static_cast<bool>(hook_)))
      hook_(point, position, word);
  }

  const shm_ring::RingView view_;
  const shm_ring::RingGeometry geometry_;
  const uint32_t retry_budget_;
  uint32_t read_pos_;
  ProtocolError error_;
  RingReaderStats stats_;
  TestHook hook_;
};

}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_RING_READER_H_
