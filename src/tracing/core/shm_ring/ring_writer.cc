/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/shm_ring/ring_writer.h"

#include <atomic>

namespace ringtrace {
namespace shm_ring {

namespace {
constexpr ChunkFlags kCarriedFlags = kFlagContinuesFromPrev | kFlagDataLoss;
using base::kNsPerMs;
}  // namespace

const char* BufferExhaustedPolicyName(BufferExhaustedPolicy policy) {
  switch (policy) {
    case BufferExhaustedPolicy::kDrop:
      return "drop";
    case BufferExhaustedPolicy::kStall:
      return "stall";
    case BufferExhaustedPolicy::kStallThenDrop:
      return "stall_then_drop";
  }
  return "?";  // not an enumerator (a cast integer)
}

bool ParseBufferExhaustedPolicy(const std::string& name,
                                BufferExhaustedPolicy* policy) {
  for (const BufferExhaustedPolicy p :
       {BufferExhaustedPolicy::kDrop, BufferExhaustedPolicy::kStall,
        BufferExhaustedPolicy::kStallThenDrop}) {
    if (name == BufferExhaustedPolicyName(p)) {
      *policy = p;
      return true;
    }
  }
  return false;
}

RingWriterDelegate::~RingWriterDelegate() = default;
void RingWriterDelegate::OnPositionBurned(uint32_t) {}
void RingWriterDelegate::OnChunkPublished(uint32_t) {}
void RingWriterDelegate::OnFlushed(uint32_t position) {
  OnChunkPublished(position);
}
void RingWriterDelegate::OnDrainRequested() {}

RingWriter::RingWriter(const RingView& ring, const Options& options)
    : ring_(ring),
      options_(options),
      chunk_size_(ring.geometry().chunk_size),
      entry_width_(ring.geometry().size_entry_width()),
      max_fragments_(MaxFragmentsFor(ring.geometry().chunk_size)),
      publish_per_packet_(options.publication == Publication::kPerPacket),
      scratch_payload_(new uint8_t[ring.geometry().chunk_size]),
      scratch_sizes_(new uint32_t[kMaxFragmentsPerChunk]) {
  RT_CHECK(ring.geometry().IsValid());
  RT_CHECK(ring.base() != nullptr);
  RT_CHECK(options.claim_budget > 0);
}

RingWriter::~RingWriter() {
  // The owner (TraceWriterV2) ends or drops its packet first; publish what
  // is closed so the chunk does not stay Acquired forever.
  RT_DCHECK(!fragment_open_);
  if (hold_ == Hold::kAcquired && !fragment_open_) {
    PublishComplete(/*continues_on_next=*/false);
    if (notify_pending_)
      NotifyPublished();
  }
}

void RingWriter::NotifyPublished() {
  notify_pending_ = false;
  if (!options_.delegate)
    return;
  if (flushing_)
    options_.delegate->OnFlushed(position_);
  else
    options_.delegate->OnChunkPublished(position_);
}

void RingWriter::ResetChunkCursors(uint32_t position, StateWord acquired_word) {
  hold_ = Hold::kAcquired;
  position_ = position;
  const uint32_t index = ring_.geometry().ChunkIndex(position);
  chunk_ = ring_.chunk(index);
  state_ = ring_.chunk_state(index);
  word_ = acquired_word;
  published_ = 0;
  closed_ = 0;
  payload_cursor_ = kPayloadStartFormat00;
  published_payload_end_ = kPayloadStartFormat00;
  dir_cursor_ = chunk_size_;
  no_reuse_ = false;
  publish_on_packet_end_ = false;
}

// ---------------------------------------------------------------------------
// Acquisition: cached reuse, reserve once / claim once, policies.
// ---------------------------------------------------------------------------

bool RingWriter::BeginPacketSlow(Span* span) {
  if (hold_ == Hold::kAcquired) {
    // kPerChunkRisksLossOnCrash: the held chunk cannot take another
    // fragment: retire it. A loss here (suffix dropped) is recorded inside
    // and does not stop this packet.
    PublishComplete(/*continues_on_next=*/false);
    // Relocations while retiring moved earlier packets; the new packet gets
    // its own full allowance.
    relocations_this_packet_ = 0;
  }
  // A retired chunk is never cached (it could not take another fragment),
  // and the inline path already tried to reuse a cached one.
  RT_DCHECK(hold_ != Hold::kCachedComplete);
  hold_ = Hold::kNone;
  if (!AcquireChunk(kNoChunkFlags)) {
    stats_.open_packets_dropped++;  // the packet never started
    return false;
  }
  OpenFragment(span);
  return true;
}

RingWriter::AcquireResult RingWriter::TryAcquireOnce(
    ChunkFlags flags,
    uint32_t* sampled_read_pos) {
  const RingGeometry& g = ring_.geometry();
  std::atomic<uint32_t>* const read_pos = ring_.read_pos();
  std::atomic<uint32_t>* const write_pos = ring_.write_pos();
  uint32_t budget = options_.claim_budget;
  uint32_t races = 0;
  for (;;) {
    // (8.3 W-load-read-pos) pairs with (8.13 R-store-read-pos): capacity is
    // advertised only after the reader's physical-chunk transition.
    const uint32_t rp = WriterLoadReadPos(*read_pos);
    *sampled_read_pos = rp;
    // Relaxed (8.4 W-reserve); the reservation CAS below validates it.
    uint32_t wp = WriterLoadWritePos(*write_pos);
    if (g.IsFull(wp, rp))
      return AcquireResult::kFull;
    Step(TestStep::kBeforeReserveCas, wp);
    // (8.4 W-reserve), relaxed: allocates a logical position only; ownership
    // is decided by the claim CAS below.
    if (!WriterReserve(*write_pos, wp, wp + 1)) {
      // Lost the race: nothing reserved, no budget spent, no hole (4.3).
      // Bounded by max_reserve_races (lock-free, not wait-free).
      stats_.reserve_races++;
      if (++races > options_.max_reserve_races)
        return AcquireResult::kNoChunkAvailable;
      continue;
    }
    const uint32_t position = wp;
    Step(TestStep::kReserved, position);
    StateWord expected = MakeFreeForWrap(g.WrapCount(position));
    const StateWord acquired =
        MakeDataWord(ChunkState::kAcquired, kFormatTargetBuffer, flags,
                     /*num_fragments=*/0, options_.writer_id);
    // (8.5 W-claim) FreeForWrap(wrap_count(w)) -> Acquired pairs with
    // (8.6 R-settle-hole), (8.11 R-consume) and (8.12 R-reclaim), so the old
    // payload copy is finished before we overwrite it. The failed word is
    // discarded.
    RT_DCHECK(IsLegalTransition(expected, acquired, Actor::kWriter));
    if (WriterClaim(*ring_.chunk_state(g.ChunkIndex(position)), expected,
                    acquired)) {
      ResetChunkCursors(position, acquired);
      // First use of a format-00 chunk: the target BufferID, published with
      // the first fragment by the release publication.
      uint8_t* const c = chunk_;
      c[kBufferIdOffset] = static_cast<uint8_t>(options_.target_buffer & 0xff);
      c[kBufferIdOffset + 1] =
          static_cast<uint8_t>((options_.target_buffer >> 8) & 0xff);
      stats_.chunks_claimed++;
      Step(TestStep::kClaimed, position);
      return AcquireResult::kOk;
    }
    // The position is a hole: never retry it against the returned word (4.3).
    stats_.burned_positions++;
    if (options_.delegate)
      options_.delegate->OnPositionBurned(position);
    if (--budget == 0)
      return AcquireResult::kNoChunkAvailable;
  }
}

// Under a stall policy, Full and a spent claim budget both wait for
// read_pos to move and retry with a fresh budget; only the deadline loses
// data (docs/ring-model.md, decision D6).
bool RingWriter::AcquireChunk(ChunkFlags flags) {
  RT_DCHECK(hold_ == Hold::kNone);
  if (pending_loss_)
    flags |= kFlagDataLoss;  // [I6 loss]
  const bool may_stall = MayStall();
  uint64_t deadline_ns = 0;
  // Bounded: each failed attempt either waits until read_pos moves (then
  // retries) or until the deadline, after which we stop. Full and
  // NoChunkAvailable are treated alike under a stall policy: both mean the
  // reader has to make progress first (NoChunkAvailable: the positions we
  // burned are behind chunks the reader has not freed yet, e.g. scraped
  // chunks whose writers have not acknowledged). Waiting for read_pos to
  // move is what makes kStall lossless with any number of writers.
  for (;;) {
    uint32_t sampled_rp = 0;
    const AcquireResult r = TryAcquireOnce(flags, &sampled_rp);
    if (r == AcquireResult::kOk) {
      pending_loss_ = false;
      drop_mode_ = false;
      return true;
    }
    if (options_.delegate)
      options_.delegate->OnDrainRequested();
    if (r == AcquireResult::kNoChunkAvailable)
      stats_.no_chunk_available++;
    else
      stats_.full++;
    if (!may_stall)
      break;
    if (deadline_ns == 0) {
      deadline_ns = base::MonotonicNs() + options_.stall_timeout_ms * kNsPerMs;
    }
    stats_.stalls++;
    if (!WaitForReadPosChange(ring_, sampled_rp, deadline_ns, stall_hook_,
                              stall_hook_arg_)) {
      stats_.stall_timeouts++;
      if (options_.policy == BufferExhaustedPolicy::kStallThenDrop)
        drop_mode_ = true;
      break;
    }
  }
  RecordLoss();
  return false;
}

void RingWriter::RecordLoss() {
  // [I6 loss]: the next packet starts in a new chunk whose claim word carries
  // data-loss; the cached chunk must not be extended past the loss. With
  // per-packet publication no chunk is cached at a loss (every loss happens
  // inside an acquisition, which gives the cached chunk up first): the
  // invalidation is defensive and the flag is what reports the loss
  // (docs/ring-model.md, decisions D4 and D5).
  RT_DCHECK(hold_ != Hold::kAcquired);
  if (hold_ == Hold::kCachedComplete)
    hold_ = Hold::kNone;
  pending_loss_ = true;
  stats_.loss_events++;
}

// ---------------------------------------------------------------------------
// Packet flow.
// ---------------------------------------------------------------------------

bool RingWriter::ContinuePacketImpl(Span* span) {
  CloseFragment(span->wptr);
  publish_on_packet_end_ = false;
  if (PublishComplete(/*continues_on_next=*/true) == PublishResult::kLost) {
    return false;  // the head of the packet is gone: drop the rest.
  }
  RT_DCHECK(hold_ == Hold::kNone);  // continues-on-next: never cached [I4]
  if (!AcquireChunk(kFlagContinuesFromPrev))
    return false;
  OpenFragment(span);
  return true;
}

bool RingWriter::FlushImpl(Span* open_span) {
  RT_DCHECK((open_span != nullptr) == fragment_open_);
  flushing_ = true;
  bool kept = true;
  if (hold_ == Hold::kAcquired) {
    if (!fragment_open_) {
      // kPerChunkRisksLossOnCrash: closed fragments wait for us. (By default
      // a chunk is never Acquired between packets.)
      PublishComplete(/*continues_on_next=*/false);
    } else if (closed_ == published_ || no_reuse_) {
      // By default every closed fragment is published already. A chunk
      // holding a relocated suffix is never reused (7.1), so its closed
      // fragments wait for the end of the open packet.
      kept = CheckScrape(open_span) == PublishResult::kPublished;
    } else {
      kept = PublishAroundOpenFragment(open_span) == PublishResult::kPublished;
    }
  }
  if (notify_pending_)
    NotifyPublished();
  flushing_ = false;
  return kept;
}

// ---------------------------------------------------------------------------
// Publication and relocation (spec 6.3, 7, 8).
// ---------------------------------------------------------------------------

RingWriter::PublishResult RingWriter::PublishAfterScrape(
    StateWord returned,
    bool continues_on_next) {
  // Bounded by max_relocations_per_packet (or, under a stall policy, the
  // stall deadline past it): Relocate() drops the suffix once the packet has
  // used them up.
  for (;;) {
    const RelocateResult r = Relocate(returned, nullptr, continues_on_next);
    if (r == RelocateResult::kLost)
      return PublishResult::kLost;
    if (r == RelocateResult::kNothingToMove) {
      // Everything had been published: the old chunk is acknowledged and
      // nothing needs a replacement.
      return PublishResult::kPublished;
    }
    // The replacement holds the finalized suffix: publish it (and never
    // reuse it, no_reuse_ is set).
    if (PublishOnce(continues_on_next, &returned))
      return PublishResult::kPublished;
  }
}

// One deadline per packet, not per acquisition: each acquisition's wait
// returns as soon as read_pos moves, and the scrape that defeats a
// replacement moves it, so only a packet-wide deadline bounds the loop
// (docs/ring-model.md, decision D7 and finding 1).
bool RingWriter::MayRelocatePastBound() {
  if (!MayStall())
    return false;
  const uint64_t now = base::MonotonicNs();
  if (relocations_this_packet_ == options_.max_relocations_per_packet + 1)
    relocation_deadline_ns_ = now + options_.stall_timeout_ms * kNsPerMs;
  if (now < relocation_deadline_ns_) {
    stats_.relocations_past_bound++;
    return true;
  }
  stats_.stall_timeouts++;
  if (options_.policy == BufferExhaustedPolicy::kStallThenDrop)
    drop_mode_ = true;
  return false;
}

RingWriter::PublishResult RingWriter::CheckScrape(Span* open_span) {
  RT_DCHECK(hold_ == Hold::kAcquired && fragment_open_);
  // Pairs with (8.9 R-scrape), as the failure side of (8.7 W-publish) does.
  const StateWord now = WriterLoadStateForScrape(*state_);
  if (now == word_)
    return PublishResult::kPublished;  // not scraped; nothing to publish
  return Relocate(now, open_span, /*last_closed_continues=*/false) ==
                 RelocateResult::kLost
             ? PublishResult::kLost
             : PublishResult::kPublished;
}

RingWriter::PublishResult RingWriter::PublishAroundOpenFragment(
    Span* open_span) {
  RT_DCHECK(hold_ == Hold::kAcquired && fragment_open_ && closed_ > published_);
  RT_DCHECK(open_span->wptr >= chunk_ + fragment_start_ &&
            open_span->wptr <= chunk_ + (dir_cursor_ - entry_width_));  // I2
  // Copy the open fragment first: once the word says Complete the reader may
  // consume the chunk and its next owner overwrite these bytes, after which
  // we may not even read them. Bounded by chunk_size (scratch).
  const uint32_t open_bytes =
      static_cast<uint32_t>(open_span->wptr - (chunk_ + fragment_start_));
  memcpy(scratch_payload_.get(), chunk_ + fragment_start_, open_bytes);

  // Publish the closed fragments; the open one lies in the unpublished middle
  // (6.3) and ends no earlier than them, so [I4] holds: it is not part of the
  // prefix and the word carries no continues-on-next. (8.7 W-publish) pairs
  // with (8.1 R-load-state); its failure side pairs with (8.9 R-scrape).
  std::atomic<uint32_t>* const state = state_;
  const StateWord complete =
      MakeDataWord(ChunkState::kComplete, GetFormat(word_), GetFlags(word_),
                   closed_, options_.writer_id);
  StateWord expected = word_;
  RT_DCHECK(IsLegalTransition(expected, complete, Actor::kWriter));
  if (!WriterPublish(*state, expected, complete)) {
    // Scraped first: relocate the closed suffix and the open fragment.
    return Relocate(expected, open_span, /*last_closed_continues=*/false) ==
                   RelocateResult::kLost
               ? PublishResult::kLost
               : PublishResult::kPublished;
  }
  word_ = complete;  // [I5 word]
  published_ = closed_;
  published_payload_end_ = payload_cursor_;
  stats_.publications++;
  NotifyPublished();
  Step(TestStep::kFlushPublished, position_);

  // Nothing was written while the word said Complete. (8.8 W-reuse),
  // relaxed as in TryReuse(): the RMW extends the release sequence of the
  // publication above.
  expected = complete;
  const StateWord acquired = WithState(complete, ChunkState::kAcquired);
  RT_DCHECK(IsLegalTransition(expected, acquired, Actor::kWriter));
  if (WriterReuse(*state, expected, acquired)) {
    word_ = acquired;  // [I5 word]
    stats_.chunks_reused++;
    return PublishResult::kPublished;  // the fragment continues in place
  }
  // The reader consumed the chunk first (spec 5.2 "reuse versus consume"):
  // never touch it again. The open fragment starts a packet (closed
  // fragments precede it), so the new chunk needs no continuation flag.
  hold_ = Hold::kNone;
  fragment_open_ = false;
  if (!AcquireChunk(kNoChunkFlags)) {  // records the loss on failure
    stats_.suffixes_dropped++;
    stats_.dropped_suffix_bytes += open_bytes;
    return PublishResult::kLost;
  }
  memcpy(chunk_ + payload_cursor_, scratch_payload_.get(), open_bytes);
  OpenFragment(open_span);
  open_span->wptr += open_bytes;
  stats_.open_fragments_moved++;
  return PublishResult::kPublished;
}

void RingWriter::CountDroppedClosedFragments(uint32_t num_closed,
                                             bool last_closed_continues) {
  // One fragment per packet in a chunk; every closed fragment ends a packet
  // except a continues-on-next one, which belongs to the open packet (the
  // caller reports that one by returning false).
  RT_DCHECK(!last_closed_continues || num_closed > 0);
  stats_.ended_packets_dropped +=
      num_closed - (last_closed_continues && num_closed > 0 ? 1 : 0);
}

void RingWriter::OnProtocolError(StateWord returned,
                                 uint32_t open_bytes,
                                 bool last_closed_continues) {
  // Only the reader's Acquired -> RewriteRequested(us, n) may change a word we
  // hold. Anything else: stop using the chunk, never touch it again, record
  // the loss (spec 11.7).
  RT_ELOG("shm_ring: writer %u: unexpected state word 0x%08x (held 0x%08x)",
          options_.writer_id, returned, word_);
  stats_.protocol_errors++;
  const uint32_t closed_bytes = payload_cursor_ - published_payload_end_;
  stats_.dropped_closed_bytes += closed_bytes;
  stats_.dropped_suffix_bytes += closed_bytes + open_bytes;
  CountDroppedClosedFragments(closed_ - published_, last_closed_continues);
  hold_ = Hold::kNone;
  fragment_open_ = false;
  publish_on_packet_end_ = false;
  RecordLoss();
}

RingWriter::RelocateResult RingWriter::Relocate(StateWord returned,
                                                Span* open_span,
                                                bool last_closed_continues) {
  // Spec 7 step 6: the only legal reason for our CAS to fail is the reader's
  // RewriteRequested(us, n) with n == published_, everything else unchanged.
  const bool had_open = fragment_open_;
  RT_DCHECK(!had_open ||
            (open_span->wptr >= chunk_ + fragment_start_ &&
             open_span->wptr <= chunk_ + (dir_cursor_ - entry_width_)));  // I2
  const uint32_t open_bytes =
      had_open
          ? static_cast<uint32_t>(open_span->wptr - (chunk_ + fragment_start_))
          : 0;
  if (returned != WithState(word_, ChunkState::kRewriteRequested)) {
    OnProtocolError(returned, open_bytes, last_closed_continues);
    return RelocateResult::kLost;
  }
  std::atomic<uint32_t>* const state = state_;

  // Step 6: copy the unpublished finalized fragments and the open fragment to
  // private scratch. Sizes come from our own directory entries, which live in
  // shared memory: validate them against our private cursors before trusting.
  const uint32_t num_finalized = closed_ - published_;  // [I3 published]
  const uint32_t finalized_bytes = payload_cursor_ - published_payload_end_;
  uint64_t sum = 0;
  for (uint32_t i = 0; i < num_finalized; i++) {
    scratch_sizes_[i] = ReadSizeEntry(
        chunk_ + SizeEntryOffset(chunk_size_, published_ + i), entry_width_);
    sum += scratch_sizes_[i];
  }
  const uint32_t total_bytes = finalized_bytes + open_bytes;
  bool corrupt = sum != finalized_bytes;
  if (!corrupt) {
    RT_DCHECK(published_payload_end_ + total_bytes <= chunk_size_);
    memcpy(scratch_payload_.get(), chunk_ + published_payload_end_,
           total_bytes);
  }
  // Flags for the relocated suffix (7.1): a non-empty prefix taken by the
  // reader keeps continues-from-prev and data-loss; with n == 0 the suffix
  // carries both. continues-on-next is decided when the tail is published.
  const ChunkFlags suffix_flags =
      published_ == 0 ? (GetFlags(word_) & kCarriedFlags) : kNoChunkFlags;

  // Step 7: acknowledge before looking for another chunk.
  // (8.10 W-acknowledge) pairs with (8.12 R-reclaim): every access above
  // happens before the next owner's. The failure side is relaxed: any word is
  // a protocol error (the reader never leaves RewriteRequested).
  Step(TestStep::kBeforeAcknowledge, position_);
  StateWord expected = returned;
  RT_DCHECK(IsLegalTransition(expected, MakeAcknowledged(), Actor::kWriter));
  if (!WriterAcknowledge(*state, expected)) {
    OnProtocolError(expected, open_bytes, last_closed_continues);
    return RelocateResult::kLost;
  }
  hold_ = Hold::kNone;
  publish_on_packet_end_ = false;

  // Step 8: replacement or loss. Bounded per packet (a livelock guard, see
  // Options::max_relocations_per_packet).
  if (num_finalized == 0 && !had_open)
    return RelocateResult::kNothingToMove;
  bool replaced = false;
  if (corrupt ||
      (++relocations_this_packet_ > options_.max_relocations_per_packet &&
       !MayRelocatePastBound())) {
    RecordLoss();
  } else {
    replaced = AcquireChunk(suffix_flags);  // records the loss on failure
  }
  if (!replaced) {
    // 7.1: the suffix is dropped; the next publication carries data-loss.
    stats_.suffixes_dropped++;
    stats_.dropped_suffix_bytes += total_bytes;
    stats_.dropped_closed_bytes += finalized_bytes;
    CountDroppedClosedFragments(num_finalized, last_closed_continues);
    fragment_open_ = false;
    return RelocateResult::kLost;
  }

  // Restore into the replacement (fresh chunk: payload from byte 6, full
  // directory). It fits: the suffix fit in a chunk of the same size.
  uint8_t* const c = chunk_;
  memcpy(c + payload_cursor_, scratch_payload_.get(), total_bytes);
  for (uint32_t i = 0; i < num_finalized; i++) {
    dir_cursor_ -= entry_width_;
    WriteSizeEntry(c + dir_cursor_, entry_width_, scratch_sizes_[i]);
  }
  closed_ = num_finalized;
  payload_cursor_ += finalized_bytes;
  no_reuse_ = true;  // 7.1: not reused for another packet.
  stats_.relocations++;
  if (had_open) {
    // Resume the open fragment; rebase the encoder's pointer and range end.
    OpenFragment(open_span);
    open_span->wptr += open_bytes;
    publish_on_packet_end_ = true;
  }
  return RelocateResult::kRelocated;
}

}  // namespace shm_ring
}  // namespace ringtrace
