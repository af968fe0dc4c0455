/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// RingWriter: the producer half of the shared ring protocol
// (docs/ring-protocol.md, "the spec"; "spec N.M" is its section N.M).
//
// One RingWriter per TraceWriter, i.e. per thread and WriterID. It reserves
// logical positions, claims chunks, lays out fragments bidirectionally
// (spec 6), publishes them through the chunk state word, reuses its own
// Complete chunk when legal, and relocates its unpublished suffix when the
// reader scraped the chunk (spec 7). The encoder (TraceWriterV2, or a test)
// writes payload bytes directly into the Span the writer hands out.
//
// Thread model: a RingWriter is used by one thread at a time (it is not
// thread-safe). Any number of RingWriters of one process (with distinct
// WriterIDs) and one reader in another process share a ring concurrently; all
// their interaction goes through the atomic words of the ring.
//
// Packet and fragment model:
//   BeginPacket()    opens a fragment (spec 6.2) for a new packet: in the
//                    cached Complete chunk (reuse, Complete -> Acquired), else
//                    in the held Acquired chunk if it can take one (per-chunk
//                    publication only), else in a new chunk.
//   ContinuePacket() the open fragment is full: close it with "continues on
//                    next chunk", publish the chunk (Complete), open the
//                    continuation fragment in a new chunk ("continues from
//                    previous chunk").
//   EndPacket()      closes the fragment and publishes the new fragment
//                    count (spec 6.2 step 5): Acquired -> Complete. If the
//                    chunk can take another fragment it stays cached and the
//                    next BeginPacket() reuses it. A failed publication means
//                    the reader scraped the chunk: the closed fragment is
//                    relocated and published in a replacement (spec 7).
//   Flush()          publishes what is not yet published. By default that is
//                    nothing once no packet is open (EndPacket() published
//                    it); with a packet open it checks whether the reader
//                    scraped the chunk and relocates the open fragment if so.
//
// The guarantee (default publication): once EndPacket() returns, the packet
// is published. The service's final drain, a snapshot taken after that
// moment, and the scrape of this process after it was SIGKILLed at any later
// moment all see it, without any cooperation of the writer; or its loss is
// counted (RingWriterStats::ended_packets_dropped, loss_events) and flagged
// (data-loss on the next chunk of this writer). Per packet this costs two
// CASes on the chunk's state word (publish at EndPacket(), reuse at the next
// BeginPacket()); the spec's 5.1 graph has no cheaper legal path (there is no
// Acquired -> Acquired publication).
//
// Options::publication = Publication::kPerChunkRisksLossOnCrash is the
// opt-in exception: EndPacket() closes the fragment without publishing it;
// closed fragments accumulate in the Acquired chunk and are published when
// the chunk is retired (it cannot take another fragment, or the packet
// continues on the next chunk) or by Flush(). Ended packets are then
// INVISIBLE until one of those happens: a writer that goes idle, a snapshot,
// or a crash leaves them out (the reader's scrape takes only the published
// prefix, and a dead writer never relocates the rest), and nothing records
// that loss. In that mode Flush() with a packet open and closed fragments
// before it copies the open fragment to scratch, publishes the closed ones
// (nothing is written while the word says Complete) and at once reuses the
// chunk (Complete -> Acquired) to continue the open fragment in place; if the
// reader consumed the chunk in between, the open fragment moves to a new
// chunk from scratch. docs/shm_ring.md gives the measured gain.
//
// Invariants (checked where they matter, cited by name):
//   [I1 one-open]      at most one fragment is open, always the last one.
//   [I2 dir-reserved]  the size entry of the open fragment is reserved before
//                      the encoder gets its range: the range ends at
//                      dir_cursor - w, so payload and directory never overlap.
//   [I3 published]     published_ <= closed_; the published payload is
//                      [payload_start, published_payload_end_) and the
//                      published directory is the top published_ entries;
//                      neither is written again (spec 6.3). With per-packet
//                      publication, published_ == closed_ whenever no call
//                      into the writer is in progress.
//   [I4 no-next-in-acq] an Acquired word never carries continues-on-next; a
//                      Complete chunk with continues-on-next is never reused
//                      (spec 7.1). Hence a published prefix seen in Acquired
//                      ends on a packet boundary.
//   [I5 word]          word_ is the exact state word this writer last stored
//                      in the held chunk; every writer CAS expects it.
//   [I6 loss]          any recorded loss drops the cached chunk; the next new
//                      chunk's claim word (hence its first publication)
//                      carries data-loss. The flag never describes a loss in
//                      the middle of a chunk.
//
// WriterIDs: unique within a ring for its whole life. The reuse CAS
// Complete -> Acquired carries no wrap count, so a recycled ID could match a
// stale cached handle. Take Options::writer_id from the ring's
// WriterIdAllocator (writer_id_allocator.h), which never hands out an ID
// twice; the RingWriter cannot check this itself.
//
// Finite identity (spec 9). A claim compares against
// FreeForWrap(wrap_count(p)), and (chunk_index, wrap_count) repeats every
//     identity period = min(num_chunks * 2^29, 2^32) reservations.
// A writer suspended between reserving p and claiming can therefore succeed
// wrongly only if the chunk reads FreeForWrap(wrap_count(p)) again, i.e. the
// reader resolved position p + k * period - num_chunks (which writes
// FreeForWrap(next_wrap(.)) == FreeForWrap(wrap_count(p))) while position
// p + k * period is not yet resolved. The first such moment comes after
// (identity period - num_chunks) reservations by others, not a whole period:
// e.g. 2^32 - num_chunks reservations for num_chunks >= 8, 2^30 - 2 for two
// chunks. Then the stale claim publishes behind the reader (spec 2.1).
// Nothing in this writer can detect it; a process that may suspend a thread
// for that many reservations must not rely on FIFO across it.

#ifndef SRC_TRACING_CORE_SHM_RING_RING_WRITER_H_
#define SRC_TRACING_CORE_SHM_RING_RING_WRITER_H_

#include <stdint.h>
#include <string.h>

#include <atomic>
#include <memory>
#include <string>

#include "ringtrace/logging.h"
#include "ringtrace/ring_writer_types.h"
#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/core/shm_ring/ring_wait.h"

namespace ringtrace {
namespace shm_ring {

// Notification hook. The transport (futex, eventfd, socket) is the service's
// choice; the writer only says what happened. Called on the writer's thread,
// outside of any shared-word critical step. Default implementations do
// nothing.
class RingWriterDelegate {
 public:
  virtual ~RingWriterDelegate();
  // |position| was reserved but its claim failed: it is a hole the reader
  // must resolve (spec 5.4 "A burned position must notify the reader").
  virtual void OnPositionBurned(uint32_t position);
  // The chunk reserved at |position| has new published fragments and the
  // writer is done with it (it cannot be reused); for a Flush(), see
  // OnFlushed(). Publications of a chunk the writer keeps for reuse (every
  // EndPacket() with per-packet publication) are not signalled one by one: the
  // reader finds them on its next pass, and the first retirement or Flush()
  // signals them. So the notification rate is one per chunk, as it would be
  // without per-packet publication.
  virtual void OnChunkPublished(uint32_t position);
  // The same for the publications of a Flush(): the app wants the data
  // read now. By default the same as OnChunkPublished().
  virtual void OnFlushed(uint32_t position);
  // The writer could not get a chunk (Full or NoChunkAvailable): please
  // drain.
  virtual void OnDrainRequested();
};

struct RingWriterStats {
  uint64_t fragments_closed = 0;
  uint64_t payload_bytes = 0;   // bytes of closed fragments (incl. dropped)
  uint64_t chunks_claimed = 0;  // FreeForWrap -> Acquired
  uint64_t chunks_reused = 0;   // Complete -> Acquired
  // Successful Acquired -> Complete: one per ended packet by default, one
  // per retired chunk or Flush() with kPerChunkRisksLossOnCrash.
  uint64_t publications = 0;
  uint64_t burned_positions = 0;  // reserved, claim failed
  uint64_t full = 0;              // acquisitions that ended Full
  uint64_t no_chunk_available = 0;
  uint64_t relocations = 0;       // suffixes restored in a replacement
  uint64_t suffixes_dropped = 0;  // suffixes that found no replacement
  // Packet accounting. A packet starts with a BeginPacket() call and is
  // "ended" once EndPacket() closed its last fragment. Every packet is
  // either published intact or counted in exactly one of these two:
  //   open_packets_dropped   lost before it ended: BeginPacket(),
  //                          ContinuePacket() or Flush() returned false for
  //                          it (each returns false at most once per packet;
  //                          the packet is over for the writer).
  //   ended_packets_dropped  lost after it ended: its last fragment was in an
  //                          unpublished suffix that was dropped (no
  //                          replacement chunk, the per-packet relocation
  //                          bound (kDrop, or past the stall timeout), a
  //                          corrupt directory) or in a chunk abandoned on
  //                          a protocol error. A dropped suffix
  //                          holds one fragment per packet: each finalized
  //                          fragment is the last fragment of an ended
  //                          packet, except the one ContinuePacket() was
  //                          publishing (it belongs to the open packet,
  //                          counted in open_packets_dropped).
  // Only the last fragment of an ended packet can still be unpublished (a
  // continues-on-next fragment is published before the next one opens), so
  // no packet is counted twice. A packet whose head was published and whose
  // rest was lost counts as dropped. With per-packet publication, an ended
  // packet is published (or counted here) when EndPacket() returns; with
  // kPerChunkRisksLossOnCrash, once no packet is open and Flush() returned.
  // From then on nothing ended can be lost any more: BeginPacket() calls ==
  // packets published intact + open_packets_dropped + ended_packets_dropped.
  uint64_t open_packets_dropped = 0;
  uint64_t ended_packets_dropped = 0;
  // Bytes lost after the encoder wrote them into a chunk: dropped suffixes
  // and the unpublished bytes of a chunk abandoned on a protocol error, open
  // fragment included.
  uint64_t dropped_suffix_bytes = 0;
  // The part of dropped_suffix_bytes that was in closed fragments (and is
  // therefore also counted in payload_bytes).
  uint64_t dropped_closed_bytes = 0;
  uint64_t loss_events = 0;      // every recorded loss (I6)
  uint64_t protocol_errors = 0;  // unexpected word returned by a CAS
  // Waits for read_pos (kStall*): on Full, and after the claim budget or
  // max_reserve_races was spent (NoChunkAvailable).
  uint64_t stalls = 0;
  // Stall deadlines that expired: a wait for read_pos, or relocations past
  // max_relocations_per_packet (kStall*). Each is followed by a recorded
  // loss.
  uint64_t stall_timeouts = 0;
  // Relocations past max_relocations_per_packet under a stall policy
  // (bounded by stall_timeout_ms per packet instead of dropping).
  uint64_t relocations_past_bound = 0;
  uint64_t reserve_races = 0;  // lost write_pos CAS races (nothing reserved)
  // kPerChunkRisksLossOnCrash only: Flush() with a packet open published
  // the chunk and the reader consumed it before the writer could reuse it:
  // the open fragment moved to a new chunk.
  uint64_t open_fragments_moved = 0;
};

class RingWriter {
 public:
  // The options and the encoder's span are public vocabulary
  // (ringtrace/ring_writer_types.h): TraceWriterV2 takes the options.
  using Options = RingWriterOptions;
  using Span = RingWriterSpan;

  // |ring| must be a valid geometry over live memory for the writer's life.
  // Allocates the relocation scratch here; nothing allocates later.
  RingWriter(const RingView& ring, const Options& options);
  ~RingWriter();

  RingWriter(const RingWriter&) = delete;
  RingWriter& operator=(const RingWriter&) = delete;

  // Opens a fragment for a new packet. Returns false if no chunk could be
  // had under the policy: the loss is recorded and the caller drops the
  // packet (it must not call ContinuePacket/EndPacket for it).
  inline bool BeginPacket(Span* span) {
    RT_DCHECK(!fragment_open_);  // [I1 one-open]
    relocations_this_packet_ = 0;
    if (RT_LIKELY(hold_ == Hold::kCachedComplete)) {
      if (RT_LIKELY(TryReuse())) {
        OpenFragment(span);
        return true;
      }
    } else if (hold_ == Hold::kAcquired && CanOpenFragment()) {
      OpenFragment(span);  // kPerChunkRisksLossOnCrash
      return true;
    }
    return BeginPacketSlow(span);
  }

  // The open fragment ends at span->wptr and the packet continues. Closes it
  // with continues-on-next, publishes the chunk and opens the continuation
  // in a new chunk. Returns false if the rest of the packet is lost (loss
  // recorded; the packet is over for the writer).
  bool ContinuePacket(Span* span) {
    if (RT_LIKELY(ContinuePacketImpl(span)))
      return true;
    stats_.open_packets_dropped++;
    return false;
  }

  // Closes the open fragment at |wptr| (end of packet) and, by default,
  // publishes it: when this returns, the packet is published or its loss is
  // recorded (see "The guarantee" in the class comment). The model takes
  // the same flow (docs/ring-model.md, decisions D1 and D3).
  inline void EndPacket(uint8_t* wptr) {
    CloseFragment(wptr);
    if (RT_LIKELY(publish_per_packet_) || RT_UNLIKELY(publish_on_packet_end_)) {
      publish_on_packet_end_ = false;
      StateWord returned;
      if (RT_UNLIKELY(!PublishOnce(/*continues_on_next=*/false, &returned)))
        PublishAfterScrape(returned, /*continues_on_next=*/false);
    }
  }

  // Publishes what is not yet published (see the class comment) and signals
  // the delegate if a publication was not signalled yet. |open_span| is the
  // encoder's span if a packet is open, else null. Returns false if the open
  // packet was lost while relocating it (loss recorded).
  bool Flush(Span* open_span) {
    if (RT_LIKELY(FlushImpl(open_span)))
      return true;
    stats_.open_packets_dropped++;
    return false;
  }

  // True if a fragment is open.
  bool fragment_open() const { return fragment_open_; }
  const RingWriterStats& stats() const { return stats_; }
  const Options& options() const { return options_; }

  // Position of the chunk the writer holds (Acquired or cached Complete);
  // for tests and the delegate. Meaningless when !holds_chunk().
  bool holds_chunk() const { return hold_ != Hold::kNone; }
  bool holds_acquired_chunk() const { return hold_ == Hold::kAcquired; }
  uint32_t held_position() const { return position_; }

  // See ring_wait.h. For tests only.
  void SetStallHookForTesting(StallHook hook, void* arg) {
    stall_hook_ = hook;
    stall_hook_arg_ = arg;
  }
  // Runs at the writer's protocol steps, so that a test can act as a racing
  // or hostile reader (or another writer) exactly between two of them.
  enum class TestStep : uint8_t {
    kBeforeReserveCas,   // write_pos sampled (|position|), before the CAS
    kReserved,           // |position| reserved, before the claim CAS
    kClaimed,            // |position| claimed (FreeForWrap -> Acquired)
    kBeforeAcknowledge,  // suffix copied to scratch, before the CAS
                         // RewriteRequested -> Acknowledged on |position|
    kFlushPublished,     // Flush() with a packet open published |position|,
                         // before its reuse CAS (kPerChunkRisksLossOnCrash)
  };
  using StepHook = void (*)(void* arg, TestStep step, uint32_t position);
  void SetStepHookForTesting(StepHook hook, void* arg) {
    step_hook_ = hook;
    step_hook_arg_ = arg;
  }

 private:
  enum class Hold : uint8_t {
    kNone,            // no chunk
    kAcquired,        // we own the chunk (Acquired in word_)
    kCachedComplete,  // we published Complete(word_) and may reuse it
  };
  enum class AcquireResult : uint8_t { kOk, kFull, kNoChunkAvailable };
  enum class PublishResult : uint8_t {
    kPublished,  // the CAS succeeded (possibly after relocation)
    kLost,       // suffix dropped or protocol error; loss recorded
  };

  // 6.2: an entry must fit, below the 255 cap and the directory bound; we
  // also require one payload byte (a zero-capacity fragment could only be an
  // empty continues-on-next fragment).
  inline bool CanOpenFragment() const {
    return closed_ < max_fragments_ &&
           dir_cursor_ - payload_cursor_ > entry_width_;
  }
  inline void OpenFragment(Span* span) {
    fragment_open_ = true;
    fragment_start_ = payload_cursor_;
    span->wptr = chunk_ + payload_cursor_;
    // [I2 dir-reserved]
    span->end = chunk_ + (dir_cursor_ - entry_width_);
  }
  // 6.2 close, steps 1-4 (step 5, publication, is deferred).
  inline void CloseFragment(uint8_t* wptr) {
    RT_DCHECK(fragment_open_);
    RT_DCHECK(wptr >= chunk_ + fragment_start_ &&
              wptr <= chunk_ + (dir_cursor_ - entry_width_));  // [I2]
    const uint32_t size =
        static_cast<uint32_t>(wptr - (chunk_ + fragment_start_));
    dir_cursor_ -= entry_width_;
    WriteSizeEntry(chunk_ + dir_cursor_, entry_width_, size);
    payload_cursor_ += size;
    ++closed_;
    fragment_open_ = false;
    stats_.fragments_closed++;
    stats_.payload_bytes += size;
  }

  // Reuse Complete -> Acquired on the cached chunk: (8.8 W-reuse), relaxed;
  // the RMW extends the release sequence of our earlier (8.7 W-publish),
  // which (8.1 R-load-state) pairs with. On failure the reader consumed the
  // chunk first (Complete -> FreeForWrap(next)): drop the handle and never
  // touch the chunk again (spec 5.2 "reuse versus consume").
  inline bool TryReuse() {
    // Reuse was judged legal when the chunk was cached (never
    // continues-on-next [I4], room for an entry and a byte, below the
    // fragment cap, not a relocation replacement).
    RT_DCHECK(CanOpenFragment() && !no_reuse_);
    RT_DCHECK(GetState(word_) == ChunkState::kComplete);
    StateWord expected = word_;
    const StateWord acquired = WithState(word_, ChunkState::kAcquired);
    RT_DCHECK(IsLegalTransition(expected, acquired, Actor::kWriter));
    if (RT_LIKELY(WriterReuse(*state_, expected, acquired))) {
      hold_ = Hold::kAcquired;
      word_ = acquired;  // [I5 word]
      stats_.chunks_reused++;
      return true;
    }
    hold_ = Hold::kNone;
    notify_pending_ = false;  // the reader has it
    return false;
  }
  // One publication attempt of the closed fragments (6.2 step 5): Acquired
  // -> Complete. |continues_on_next| marks the last fragment. On success
  // caches the chunk when reuse is legal, else retires it (and signals the
  // delegate). On failure returns the word the CAS found in |*returned| and
  // changes nothing.
  inline bool PublishOnce(bool continues_on_next, StateWord* returned) {
    RT_DCHECK(hold_ == Hold::kAcquired && !fragment_open_);
    const ChunkFlags flags =
        GetFlags(word_) |
        (continues_on_next ? kFlagContinuesOnNext : kNoChunkFlags);
    const StateWord complete =
        MakeDataWord(ChunkState::kComplete, GetFormat(word_), flags, closed_,
                     options_.writer_id);
    StateWord expected = word_;
    // Publish Acquired -> Complete: (8.7 W-publish) pairs with
    // (8.1 R-load-state) (the reader then copies the payload, size entries
    // and BufferID written before); its failure side pairs with
    // (8.9 R-scrape) so the reader's copy is finished before we relocate.
    RT_DCHECK(IsLegalTransition(expected, complete, Actor::kWriter));
    if (RT_UNLIKELY(!WriterPublish(*state_, expected, complete))) {
      *returned = expected;
      return false;
    }
    word_ = complete;  // [I5 word]
    published_ = closed_;
    published_payload_end_ = payload_cursor_;
    stats_.publications++;
    // Cache for reuse only when legal: not continues-on-next [I4], not a
    // relocated replacement (7.1), room for another fragment (6.2, 3.5).
    if (RT_LIKELY(!continues_on_next && !no_reuse_ && CanOpenFragment())) {
      hold_ = Hold::kCachedComplete;
      notify_pending_ = true;
    } else {
      hold_ = Hold::kNone;
      NotifyPublished();
    }
    return true;
  }
  void NotifyPublished();
  // The publication CAS returned |returned|: relocate (spec 7) and publish
  // the replacement, until published or lost.
  PublishResult PublishAfterScrape(StateWord returned, bool continues_on_next);
  // Past max_relocations_per_packet: true if the policy lets the packet
  // relocate once more (a stall policy before the packet's stall deadline).
  bool MayRelocatePastBound();
  bool MayStall() const {
    return options_.policy == BufferExhaustedPolicy::kStall ||
           (options_.policy == BufferExhaustedPolicy::kStallThenDrop &&
            !drop_mode_);
  }
  bool BeginPacketSlow(Span* span);
  bool ContinuePacketImpl(Span* span);
  bool FlushImpl(Span* open_span);
  // Counts the closed, unpublished fragments as lost (see
  // RingWriterStats::ended_packets_dropped).
  void CountDroppedClosedFragments(uint32_t num_closed,
                                   bool last_closed_continues);

  // Reserve once / claim once (4.3, 5.4), with the policy applied on Full
  // and NoChunkAvailable.
  bool AcquireChunk(ChunkFlags flags);
  // |*sampled_read_pos|: the last read_pos it loaded (for a stall).
  AcquireResult TryAcquireOnce(ChunkFlags flags, uint32_t* sampled_read_pos);

  // Publishes closed fragments as Complete. |continues_on_next| marks the
  // last fragment. Relocates on a scrape.
  PublishResult PublishComplete(bool continues_on_next) {
    StateWord returned;
    if (RT_LIKELY(PublishOnce(continues_on_next, &returned)))
      return PublishResult::kPublished;
    return PublishAfterScrape(returned, continues_on_next);
  }
  // Flush with an open fragment: acquire-loads the word; relocates if the
  // reader scraped the chunk.
  PublishResult CheckScrape(Span* open_span);
  // Flush with an open fragment and closed, unpublished fragments before it:
  // publish them, then reuse the chunk for the open fragment (see the class
  // comment).
  PublishResult PublishAroundOpenFragment(Span* open_span);
  // Spec 7 steps 6-8. |returned| is the word the failed CAS (or the load)
  // returned. On success the writer holds an Acquired replacement holding
  // the suffix, and |open_span| (if any) is rebased.
  enum class RelocateResult : uint8_t {
    kRelocated,      // the writer holds an Acquired replacement
    kNothingToMove,  // empty suffix, no open fragment: acknowledged only
    kLost,           // suffix dropped or protocol error; loss recorded
  };
  // |last_closed_continues|: the last closed fragment belongs to the packet
  // ContinuePacket() is moving to the next chunk (not an ended packet).
  RelocateResult Relocate(StateWord returned,
                          Span* open_span,
                          bool last_closed_continues);
  // Abandons the held chunk for good; |open_bytes| of an open fragment are
  // lost with the unpublished closed fragments, of which the last belongs to
  // the open packet if |last_closed_continues|.
  void OnProtocolError(StateWord returned,
                       uint32_t open_bytes,
                       bool last_closed_continues);
  inline void Step(TestStep step, uint32_t position) {
    if (RT_UNLIKELY(step_hook_ != nullptr))
      step_hook_(step_hook_arg_, step, position);
  }
  void RecordLoss();
  void ResetChunkCursors(uint32_t position, StateWord acquired_word);

  const RingView ring_;
  const Options options_;
  const uint32_t chunk_size_;
  const uint32_t entry_width_;
  const uint32_t max_fragments_;
  const bool publish_per_packet_;

  // Held chunk (valid unless hold_ == kNone).
  Hold hold_ = Hold::kNone;
  bool fragment_open_ = false;
  // A publication of the cached chunk has not been signalled to the
  // delegate yet (see RingWriterDelegate::OnChunkPublished).
  bool notify_pending_ = false;
  // Inside FlushImpl(): publications notify OnFlushed().
  bool flushing_ = false;
  // Retire as soon as the open packet ends: the chunk holds a relocated
  // suffix and is "not reused for another packet" (spec 7.1).
  bool publish_on_packet_end_ = false;
  // The held chunk must not be cached for reuse once published.
  bool no_reuse_ = false;
  bool pending_loss_ = false;  // [I6 loss]
  bool drop_mode_ = false;     // kStallThenDrop after a timeout
  uint32_t position_ = 0;      // reserved position of the held chunk
  uint8_t* chunk_ = nullptr;
  std::atomic<uint32_t>* state_ = nullptr;  // the held chunk's state word
  StateWord word_ = 0;                      // [I5 word]
  uint32_t published_ = 0;                  // fragments in word_
  uint32_t closed_ = 0;          // fragments closed, >= published_ [I3]
  uint32_t payload_cursor_ = 0;  // offsets within the chunk
  uint32_t dir_cursor_ = 0;
  uint32_t published_payload_end_ = 0;
  uint32_t fragment_start_ = 0;
  uint32_t relocations_this_packet_ = 0;
  // Set when the packet first goes past max_relocations_per_packet.
  uint64_t relocation_deadline_ns_ = 0;

  // Relocation scratch, allocated at construction (spec 7 step 6).
  std::unique_ptr<uint8_t[]> scratch_payload_;  // chunk_size_ bytes
  std::unique_ptr<uint32_t[]> scratch_sizes_;   // kMaxFragmentsPerChunk

  StallHook stall_hook_ = nullptr;
  void* stall_hook_arg_ = nullptr;
  StepHook step_hook_ = nullptr;
  void* step_hook_arg_ = nullptr;

  RingWriterStats stats_;
};

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_SHM_RING_RING_WRITER_H_
