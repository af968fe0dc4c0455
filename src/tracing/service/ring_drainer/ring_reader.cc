/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/ring_reader.h"

#include <string.h>

#include "src/base/checked_math.h"
#include "src/tracing/core/shm_ring/ring_reader_ops.h"

namespace ringtrace {
namespace ring_drainer {

using shm_ring::ChunkState;
using shm_ring::GetFormat;
using shm_ring::GetNumFragments;
using shm_ring::GetState;
using shm_ring::MakeFreeForWrap;
using shm_ring::StateWord;

const char* ReadResultToString(ReadResult r) {
  switch (r) {
    case ReadResult::kNoData:
      return "NoData";
    case ReadResult::kSkipped:
      return "Skipped";
    case ReadResult::kEmitted:
      return "Emitted";
    case ReadResult::kRetryLater:
      return "RetryLater";
    case ReadResult::kProtocolError:
      return "ProtocolError";
    case ReadResult::kDeferred:
      return "Deferred";
  }
  return "?";
}

const char* ProtocolErrorKindToString(ProtocolErrorKind k) {
  switch (k) {
    case ProtocolErrorKind::kNone:
      return "none";
    case ProtocolErrorKind::kFreeTagMismatch:
      return "FreeForWrap tag does not match wrap_count(read_pos)";
    case ProtocolErrorKind::kReservedState:
      return "reserved state";
    case ProtocolErrorKind::kAcknowledgedPayloadBits:
      return "Acknowledged with non-zero payload bits";
    case ProtocolErrorKind::kAcknowledgedReclaimFailed:
      return "Acknowledged reclaim CAS failed";
    case ProtocolErrorKind::kWritePosOutOfRange:
      return "write_pos more than num_chunks ahead of read_pos";
  }
  return "?";
}

namespace {

void PrefetchForWrite(const uint8_t* begin, uint32_t size) {
  // Bounded by the chunk size (at most 32 KiB / 64 = 512 hints).
  for (uint32_t off = 0; off < size; off += 64)
    __builtin_prefetch(begin + off, /*rw=*/1, /*locality=*/3);
}

}  // namespace

ChunkConsumer::~ChunkConsumer() = default;

RingReader::RingReader(shm_ring::RingView view,
                       uint32_t read_pos,
                       uint32_t retry_budget)
    : view_(view),
      geometry_(view.geometry()),
      retry_budget_(retry_budget),
      read_pos_(read_pos) {
  // Our invariant: the service validated the geometry it mapped.
  RT_CHECK(geometry_.IsValid());
  RT_CHECK(view_.base() != nullptr);
}

ReadResult RingReader::ReadOne(ChunkConsumer* consumer,
                               HeadPolicy head_policy) {
  if (stopped())
    return ReadResult::kProtocolError;  // [R6 stopped]

  const uint32_t position = read_pos_;  // [R1 private-cursor]
  // (8.2 R-load-write-pos), relaxed: a stale value only delays one drain
  // pass; no data is handed over through write_pos (the chunk state word
  // carries it).
  const uint32_t write_pos = shm_ring::ReaderLoadWritePos(*view_.write_pos());
  const uint32_t distance =
      shm_ring::RingGeometry::Distance(write_pos, position);
  if (distance == 0)
    return ReadResult::kNoData;
  // [R2 distance]: a larger distance is a forged cursor.
  if (distance > geometry_.num_chunks)
    return Fail(ProtocolErrorKind::kWritePosOutOfRange, position, write_pos);

  const uint32_t index = geometry_.ChunkIndex(position);
  std::atomic<uint32_t>* const state = view_.chunk_state(index);
  // (8.1 R-load-state) pairs with (8.7 W-publish) (the relaxed
  // (8.8 W-reuse) extends that release sequence, so an Acquired word seen
  // after a reuse still carries it) and with (8.10 W-acknowledge): the
  // published fragments, size entries and BufferID are visible before we
  // copy them.
  uint32_t word = shm_ring::ReaderLoadState(*state);

  // Optional grace for a writer that reserved but has not published yet: do
  // not burn its reservation or split its chunk while the ring has room.
  // Decided on the first snapshot only; a redispatch always resolves.
  if (head_policy == HeadPolicy::kDeferUnpublished &&
      distance <= geometry_.num_chunks / 2) {
    const ChunkState st = GetState(word);
    if (st == ChunkState::kAcquired ||
        (st == ChunkState::kFreeForWrap &&
         shm_ring::GetWrapCount(word) == geometry_.WrapCount(position))) {
      ++stats_.deferrals;
      return ReadResult::kDeferred;
    }
  }

  // Bounded: every iteration either returns or records one failed CAS, and
  // at most retry_budget_ + 1 failures are allowed.
  for (uint32_t failures = 0;;) {
    Step step = Step::kCasFailed;
    switch (GetState(word)) {
      case ChunkState::kFreeForWrap: {
        // [R3 free-tag]: any other tag is corrupt state, not a slow writer
        // (spec 5.3).
        if (shm_ring::GetWrapCount(word) != geometry_.WrapCount(position))
          return Fail(ProtocolErrorKind::kFreeTagMismatch, position, word);
        Hook(HookPoint::kBeforeAdvanceFree, position, word);
        // (8.6 R-settle-hole) pairs with the next writer's (8.5 W-claim).
        // On failure the returned word (a writer's claim) is dispatched on
        // like a fresh (8.1 R-load-state).
        const StateWord next = MakeFreeForWrap(geometry_.NextWrap(position));
        RT_DCHECK(
            shm_ring::IsLegalTransition(word, next, shm_ring::Actor::kReader));
        if (shm_ring::ReaderSettleHole(*state, word, next))
          step = Step::kResolvedHole;
        break;
      }
      case ChunkState::kAcquired:
      case ChunkState::kComplete:
        step = TakeDataChunk(position, index, &word, consumer);
        break;
      case ChunkState::kRewriteRequested:
        // Only its writer may leave RewriteRequested (spec 5.3): the position
        // is a hole and the chunk stays pinned until it is acknowledged.
        step = Step::kResolvedHole;
        break;
      case ChunkState::kAcknowledged: {
        if (shm_ring::GetPayloadBits(word) != 0) {
          return Fail(ProtocolErrorKind::kAcknowledgedPayloadBits, position,
                      word);
        }
        Hook(HookPoint::kBeforeReclaimAcknowledged, position, word);
        // (8.12 R-reclaim): its acquire half pairs with (8.10 W-acknowledge)
        // (the writer finished every access), its release half with the
        // next writer's (8.5 W-claim). Its failure side is relaxed: nobody
        // but us may leave Acknowledged, so the returned word is only
        // reported, never dispatched on.
        const StateWord next = MakeFreeForWrap(geometry_.NextWrap(position));
        RT_DCHECK(
            shm_ring::IsLegalTransition(word, next, shm_ring::Actor::kReader));
        if (!shm_ring::ReaderReclaim(*state, word, next)) {
          return Fail(ProtocolErrorKind::kAcknowledgedReclaimFailed, position,
                      word);
        }
        step = Step::kResolvedHole;
        break;
      }
      case ChunkState::kReserved5:
      case ChunkState::kReserved6:
      case ChunkState::kReserved7:
        return Fail(ProtocolErrorKind::kReservedState, position, word);
    }

    if (step != Step::kCasFailed)
      return Advance(position, step, word);

    // The CAS failed and |word| now holds what it found: redispatch on it
    // (spec 5.2), the position is still ours to resolve.
    ++stats_.retries;
    if (++failures > retry_budget_) {
      ++stats_.retry_later;
      return ReadResult::kRetryLater;
    }
  }
}

RingReader::Step RingReader::TakeDataChunk(uint32_t position,
                                           uint32_t index,
                                           uint32_t* word,
                                           ChunkConsumer* consumer) {
  const StateWord snapshot = *word;
  ChunkDescriptor desc;
  bool consumer_began = false;
  const Payload payload =
      CopyPayload(position, index, snapshot, consumer, &desc, &consumer_began);
  const bool won = CasOwnership(position, index, snapshot, word);
  if (consumer_began) {  // [R5 commit-after-cas]
    if (won)
      consumer->CommitChunk();
    else
      consumer->AbortChunk();
  }
  if (!won)
    return Step::kCasFailed;
  return Account(position, snapshot, payload, desc, consumer);
}

RingReader::Payload RingReader::CopyPayload(uint32_t position,
                                            uint32_t index,
                                            StateWord snapshot,
                                            ChunkConsumer* consumer,
                                            ChunkDescriptor* desc,
                                            bool* consumer_began) {
  const bool scrape = GetState(snapshot) == ChunkState::kAcquired;
  const uint32_t num_fragments = GetNumFragments(snapshot);
  const uint8_t* const chunk = view_.chunk(index);
  // Deliberately uninitialized: only the first num_fragments entries are
  // written and read.
  uint32_t sizes[shm_ring::kMaxFragmentsPerChunk];

  if (GetFormat(snapshot) != shm_ring::kFormatTargetBuffer) {
    // Spec 3.4: arbitrate ownership, but do not read the header or payload.
    return Payload::kUnknownFormat;
  }
  if (num_fragments == 0) {
    // An Acquired(w, 0) prefix is empty; a Complete chunk must have at
    // least one fragment (spec 5.1), so Complete(w, 0) is malformed.
    return scrape ? Payload::kNone : Payload::kMalformed;
  }
  if (!CopyDirectory(chunk, num_fragments, sizes, &desc->payload_size))
    return Payload::kMalformed;

  // Private copy of the BufferID (little-endian, bytes 4-5).
  uint8_t bid[2];
  memcpy(bid, chunk + shm_ring::kBufferIdOffset, sizeof(bid));
  desc->position = position;
  desc->writer_id = shm_ring::GetWriterId(snapshot);
  desc->abi_flags = shm_ring::GetFlags(snapshot);
  desc->target_buffer = static_cast<shm_ring::BufferID>(
      bid[0] | (static_cast<uint32_t>(bid[1]) << 8));
  desc->num_fragments = num_fragments;
  desc->scraped = scrape;
  *consumer_began = true;
  uint8_t* const dst = consumer->BeginChunk(*desc, sizes);
  if (!dst)
    return Payload::kRejected;
  // The one copy, shared memory -> destination, of every fragment at once:
  // they lie back to back in the chunk and go back to back. CopyDirectory
  // proved [payload_start, payload_start + payload_size) lies inside the
  // chunk.
  memcpy(dst, chunk + shm_ring::kPayloadStartFormat00, desc->payload_size);
  // Sinks lay chunks out back to back (TraceBufferV2 does), so the next
  // chunk most likely goes right after this one. Prefetch that room for
  // writing now: its write-allocate misses then overlap with the
  // ownership CAS that follows, which (a locked RMW on x86) waits for every
  // store of this copy to commit. A hint only: prefetches never fault.
  PrefetchForWrite(dst + desc->payload_size, geometry_.chunk_size);
  return Payload::kCopied;
}

bool RingReader::CasOwnership(uint32_t position,
                              uint32_t index,
                              StateWord snapshot,
                              uint32_t* word) {
  std::atomic<uint32_t>* const state = view_.chunk_state(index);
  if (GetState(snapshot) == ChunkState::kAcquired) {
    Hook(HookPoint::kBeforeMarkRewrite, position, snapshot);
    // Spec 7 step 3: only the state bits change.
    // (8.9 R-scrape) pairs with the failure side of (8.7 W-publish): our
    // copy is ordered before the writer relocates the suffix and, after
    // Acknowledged, before anyone reuses the chunk. Its failure side pairs
    // with the (8.7 W-publish) that beat us, so the returned word can be
    // dispatched on.
    const StateWord rwr =
        shm_ring::WithState(snapshot, ChunkState::kRewriteRequested);
    RT_DCHECK(
        shm_ring::IsLegalTransition(*word, rwr, shm_ring::Actor::kReader));
    return shm_ring::ReaderScrape(*state, *word, rwr);
  }
  Hook(HookPoint::kBeforeReclaimComplete, position, snapshot);
  // (8.11 R-consume) pairs with the next writer's (8.5 W-claim): our copy
  // finishes before it overwrites. Its failure side pairs with the
  // (8.7 W-publish) whose release sequence the writer's (8.8 W-reuse)
  // continues, or with a later (8.7 W-publish).
  const StateWord next = MakeFreeForWrap(geometry_.NextWrap(position));
  RT_DCHECK(shm_ring::IsLegalTransition(*word, next, shm_ring::Actor::kReader));
  return shm_ring::ReaderConsume(*state, *word, next);
}

RingReader::Step RingReader::Account(uint32_t position,
                                     StateWord snapshot,
                                     Payload payload,
                                     const ChunkDescriptor& desc,
                                     ChunkConsumer* consumer) {
  const uint32_t num_fragments = GetNumFragments(snapshot);
  if (GetState(snapshot) == ChunkState::kAcquired)
    ++stats_.scrapes;
  switch (payload) {
    case Payload::kCopied:
      ++stats_.chunks_emitted;
      stats_.fragments_emitted += num_fragments;
      stats_.bytes_emitted += desc.payload_size;
      return Step::kResolvedEmitted;
    case Payload::kRejected:
      // The consumer refused the payload and counts it (one place per loss).
      return Step::kResolvedHole;
    case Payload::kUnknownFormat:
      ++stats_.unknown_formats;
      // An Acquired(w, 0) prefix holds nothing, whatever its format: no
      // payload was dropped, so the consumer hears of no loss (and the
      // writer's ChunkID sequence gets no gap).
      if (num_fragments != 0) {
        consumer->OnChunkDropped(position, shm_ring::GetWriterId(snapshot),
                                 DropReason::kUnknownFormat);
      }
      return Step::kResolvedHole;
    case Payload::kMalformed:
      ++stats_.malformed_directories;
      consumer->OnChunkDropped(position, shm_ring::GetWriterId(snapshot),
                               DropReason::kMalformedDirectory);
      return Step::kResolvedHole;
    case Payload::kNone:
      return Step::kResolvedHole;
  }
  return Step::kResolvedHole;
}

bool RingReader::CopyDirectory(const uint8_t* chunk,
                               uint32_t n,
                               uint32_t* sizes,
                               uint32_t* total_out) const {
  // Spec 6.4, with the chunk size from the service's geometry.
  const uint32_t chunk_size = geometry_.chunk_size;
  const uint32_t w = geometry_.size_entry_width();
  const uint32_t capacity = chunk_size - shm_ring::kPayloadStartFormat00;
  uint32_t directory_bytes;
  if (!base::CheckedMul(n, w, &directory_bytes) || directory_bytes > capacity)
    return false;

  // [R4 snapshot]: copy before parsing; the producer may rewrite these bytes
  // meanwhile.
  // |n| is the word's 8-bit field and |w| (SizeEntryWidth) is 1 or 2, so
  // directory_bytes <= sizeof(dir).
  uint8_t dir[shm_ring::kMaxFragmentsPerChunk * 2];
  static_assert(shm_ring::kNumFragmentsMask <= shm_ring::kMaxFragmentsPerChunk,
                "a word's fragment count fits the directory copy");
  memcpy(dir, chunk + (chunk_size - directory_bytes), directory_bytes);

  // Entry i sits at [chunk_size - (i + 1) * w, chunk_size - i * w), i.e. at
  // directory_bytes - (i + 1) * w in the copy: walk down in payload order.
  // The sum cannot wrap (at most 255 entries of at most 16 bits), so it is
  // checked once, at the end.
  static_assert(
      static_cast<uint64_t>(shm_ring::kMaxFragmentsPerChunk) * 0xffffu <=
          UINT32_MAX,
      "the directory's sum fits 32 bits");
  const uint32_t limit = capacity - directory_bytes;
  uint32_t total = 0;
  if (w == 2) {
    for (uint32_t i = 0; i < n; ++i) {
      sizes[i] = shm_ring::ReadSizeEntry(&dir[directory_bytes - (i + 1) * 2],
                                         /*width=*/2);
      total += sizes[i];
    }
  } else {
    for (uint32_t i = 0; i < n; ++i) {
      sizes[i] = shm_ring::ReadSizeEntry(&dir[directory_bytes - (i + 1)],
                                         /*width=*/1);
      total += sizes[i];
    }
  }
  if (total > limit)
    return false;
  *total_out = total;
  return true;
}

ReadResult RingReader::Advance(uint32_t position, Step step, uint32_t word) {
  read_pos_ = position + 1;  // uint32_t: wraps at 2^32 (spec 4.1).
  // [R1 private-cursor]: stored, never loaded back.
  // (8.13 R-store-read-pos) pairs with (8.3 W-load-read-pos) before a writer
  // reserves. Stored after the physical transition above, so advertised
  // capacity always refers to a chunk already handed on.
  shm_ring::ReaderStoreReadPos(*view_.read_pos(), read_pos_);
  ++stats_.positions_resolved;
  const bool emitted = step == Step::kResolvedEmitted;
  if (!emitted)
    ++stats_.holes;
  Hook(HookPoint::kAfterResolve, position, word);
  return emitted ? ReadResult::kEmitted : ReadResult::kSkipped;
}

ReadResult RingReader::Fail(ProtocolErrorKind kind,
                            uint32_t position,
                            uint32_t word) {
  error_.kind = kind;
  error_.position = position;
  error_.word = word;
  ++stats_.protocol_errors;
  return ReadResult::kProtocolError;
}

}  // namespace ring_drainer
}  // namespace ringtrace
