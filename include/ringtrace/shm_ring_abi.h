/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The shared ring chunk ABI: everything the producer (writer) and the service
// (reader) must agree on, byte for byte. Normative spec:
// docs/ring-protocol.md ("the spec" below; "spec N.M" is its section N.M);
// section numbers refer to it. Choices the spec leaves open are ours and are
// marked "ringtrace ABI".
//
// Mapping layout (ringtrace ABI, spec 3.1 leaves it open):
//
//   byte 0      uint32 read_pos              (own cache line; reader writes)
//   byte 64     uint32 write_pos             (own cache line with the next)
//   byte 68     uint32 num_writers_waiting   (stalled writers; registration
//                                             counter of the writer-wait
//                                             protocol, whose futex word is
//                                             read_pos: see
//                                             src/tracing/core/shm_ring/
//                                             ring_wait.h)
//   ...         reserved, zero
//   byte 256    chunk 0
//   256 + i*chunk_size  chunk i
//
// A zero-filled mapping is a valid, empty ring at positions 0: both cursors
// are 0 and every state word is FreeForWrap(0) == 0 (spec 3.2).
//
// Only 32-bit atomics are used anywhere, so the ABI works on 32-bit targets.
// Every shared word is accessed through std::atomic<uint32_t> views of the
// mapping (see RingView) and only through the functions at the end of this
// header, one per row of the table of spec section 8, each with that row's
// fixed memory order.
//
// Everything else in this header is a pure function of its arguments, so the
// reader can apply it to untrusted words without any precondition.

#ifndef INCLUDE_RINGTRACE_SHM_RING_ABI_H_
#define INCLUDE_RINGTRACE_SHM_RING_ABI_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "ringtrace/ids.h"
#include "ringtrace/strong_flags.h"

namespace ringtrace {
namespace shm_ring {

// ---------------------------------------------------------------------------
// State word (spec 3.2).
//
//   FreeForWrap (000):  | 000 | 29-bit wrap_count                           |
//   Acquired (001), Complete (010), RewriteRequested (011):
//                       | state:3 | format:2 | flags:3 | num_frags:8 | wid:16 |
//   Acknowledged (100): | 100 | 0 ................................ 0       |
//   101, 110, 111: reserved, no ownership meaning.
// ---------------------------------------------------------------------------

using StateWord = uint32_t;
using ::ringtrace::BufferID;  // ringtrace/ids.h
using ::ringtrace::WriterID;  // ringtrace/ids.h

enum class ChunkState : uint32_t {
  kFreeForWrap = 0,
  kAcquired = 1,
  kComplete = 2,
  kRewriteRequested = 3,
  kAcknowledged = 4,
  kReserved5 = 5,
  kReserved6 = 6,
  kReserved7 = 7,
};

constexpr uint32_t kStateShift = 29;
constexpr uint32_t kFormatShift = 27;
constexpr uint32_t kFlagsShift = 24;
constexpr uint32_t kNumFragmentsShift = 16;

constexpr uint32_t kWrapCountMask = 0x1fff'ffffu;  // 29 bits.
constexpr uint32_t kPayloadBitsMask = 0x1fff'ffffu;
constexpr uint32_t kFormatMask = 0x3u;
constexpr uint32_t kFlagsMask = 0x7u;
constexpr uint32_t kNumFragmentsMask = 0xffu;
constexpr uint32_t kWriterIdMask = 0xffffu;

// Chunk flags (spec 3.3), as values of the 3-bit flags field (bits 26..24).
// They describe payload, not ownership. Their own type: the service's trace
// buffer has chunk flags of its own that reuse the same low bits with other
// meanings; they do not convert to or from these implicitly (the service
// maps them in one named function).
struct ChunkFlagsTag;
using ChunkFlags = StrongFlags<ChunkFlagsTag, uint32_t>;
constexpr ChunkFlags kNoChunkFlags;
constexpr ChunkFlags kFlagDataLoss = ChunkFlags::FromBits(1u << 0);  // bit 24
constexpr ChunkFlags kFlagContinuesOnNext =
    ChunkFlags::FromBits(1u << 1);  // bit 25
constexpr ChunkFlags kFlagContinuesFromPrev =
    ChunkFlags::FromBits(1u << 2);  // bit 26

// Chunk formats (spec 3.4).
constexpr uint32_t kFormatTargetBuffer = 0;   // 00: BufferID at bytes 4-5.
constexpr uint32_t kFormatPacketRouting = 1;  // 01: reserved (routing RFC).

// Maximum fragments one chunk can publish (spec 3.5).
constexpr uint32_t kMaxFragmentsPerChunk = 255;

constexpr ChunkState GetState(StateWord w) {
  return static_cast<ChunkState>(w >> kStateShift);
}
constexpr bool IsReservedState(StateWord w) {
  return (w >> kStateShift) >= 5;
}
// True for Acquired, Complete and RewriteRequested.
constexpr bool IsDataBearing(StateWord w) {
  return (w >> kStateShift) >= 1 && (w >> kStateShift) <= 3;
}

// Field accessors. Only meaningful for the states named; decode the state
// first (spec 3.2 "Always decode the state first").
constexpr uint32_t GetWrapCount(StateWord w) {  // FreeForWrap only.
  return w & kWrapCountMask;
}
constexpr uint32_t GetFormat(StateWord w) {
  return (w >> kFormatShift) & kFormatMask;
}
constexpr ChunkFlags GetFlags(StateWord w) {
  return ChunkFlags::FromBits((w >> kFlagsShift) & kFlagsMask);
}
constexpr uint32_t GetNumFragments(StateWord w) {
  return (w >> kNumFragmentsShift) & kNumFragmentsMask;
}
constexpr WriterID GetWriterId(StateWord w) {
  return static_cast<WriterID>(w & kWriterIdMask);
}
// The 29 bits below the state; must be zero in Acknowledged.
constexpr uint32_t GetPayloadBits(StateWord w) {
  return w & kPayloadBitsMask;
}

constexpr StateWord MakeFreeForWrap(uint32_t wrap_count) {
  return (static_cast<uint32_t>(ChunkState::kFreeForWrap) << kStateShift) |
         (wrap_count & kWrapCountMask);
}

// (state << 29) | (format << 27) | (flags << 24) | (num_fragments << 16) |
// writer_id. |state| must be one of the three data-bearing states.
constexpr StateWord MakeDataWord(ChunkState state,
                                 uint32_t format,
                                 ChunkFlags flags,
                                 uint32_t num_fragments,
                                 WriterID writer_id) {
  return (static_cast<uint32_t>(state) << kStateShift) |
         ((format & kFormatMask) << kFormatShift) |
         ((flags.bits() & kFlagsMask) << kFlagsShift) |
         ((num_fragments & kNumFragmentsMask) << kNumFragmentsShift) |
         writer_id;
}

constexpr StateWord MakeAcknowledged() {
  return static_cast<uint32_t>(ChunkState::kAcknowledged) << kStateShift;
}

// Replaces only the state bits (e.g. Acquired(w,n) -> RewriteRequested(w,n),
// spec 7 step 3: "changing only the state bits").
constexpr StateWord WithState(StateWord w, ChunkState state) {
  return (w & kPayloadBitsMask) | (static_cast<uint32_t>(state) << kStateShift);
}

// Replaces the fragment count and flags of a data-bearing word.
constexpr StateWord WithNumFragmentsAndFlags(StateWord w,
                                             uint32_t num_fragments,
                                             ChunkFlags flags) {
  return (w & ~((kNumFragmentsMask << kNumFragmentsShift) |
                (kFlagsMask << kFlagsShift))) |
         ((num_fragments & kNumFragmentsMask) << kNumFragmentsShift) |
         ((flags.bits() & kFlagsMask) << kFlagsShift);
}

// Concrete words, so a change of the encoding cannot go unnoticed.
static_assert(MakeFreeForWrap(0) == 0, "a zero-filled chunk is FreeForWrap(0)");
static_assert(MakeFreeForWrap(0x1fff'ffff) == 0x1fff'ffffu, "");
static_assert(MakeFreeForWrap(0x2000'0000) == 0, "wrap count is 29 bits");
static_assert(MakeAcknowledged() == 0x8000'0000u, "");
static_assert(MakeDataWord(ChunkState::kAcquired, 0, kNoChunkFlags, 0, 7) ==
                  0x2000'0007u,
              "");
static_assert(MakeDataWord(ChunkState::kComplete,
                           kFormatTargetBuffer,
                           kFlagContinuesOnNext,
                           3,
                           0x1234) == 0x4203'1234u,
              "");
static_assert(MakeDataWord(ChunkState::kRewriteRequested,
                           kFormatPacketRouting,
                           kFlagContinuesFromPrev | kFlagDataLoss,
                           255,
                           0xffff) == 0x6dff'ffffu,
              "");
static_assert(WithState(0x2203'0005u, ChunkState::kRewriteRequested) ==
                  0x6203'0005u,
              "only the state bits change");
static_assert(GetState(0xa000'0000u) == ChunkState::kReserved5, "");
static_assert(IsReservedState(0xe000'0000u) && !IsReservedState(0x8000'0000u),
              "");

// ---------------------------------------------------------------------------
// Geometry, positions and wrap counts (spec 4).
// ---------------------------------------------------------------------------

constexpr uint32_t kMinChunkSize = 256;
constexpr uint32_t kMaxChunkSize = 32768;
constexpr uint32_t kMinNumChunks = 2;
constexpr uint32_t kMaxNumChunksExclusive = 1u << 31;  // strictly below 2^31

constexpr bool IsPow2(uint32_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

constexpr uint32_t Log2(uint32_t x) {
  uint32_t bits = 0;
  while (x > 1) {
    x >>= 1;
    ++bits;
  }
  return bits;
}

// Why a geometry is not acceptable, for non-fatal validation of untrusted
// parameters (e.g. received over IPC).
enum class GeometryError {
  kOk = 0,
  kChunkSizeNotPowerOfTwo,
  kChunkSizeOutOfRange,
  kNumChunksNotPowerOfTwo,
  kNumChunksOutOfRange,
};

constexpr GeometryError ValidateGeometry(uint32_t chunk_size,
                                         uint32_t num_chunks) {
  if (!IsPow2(chunk_size))
    return GeometryError::kChunkSizeNotPowerOfTwo;
  if (chunk_size < kMinChunkSize || chunk_size > kMaxChunkSize)
    return GeometryError::kChunkSizeOutOfRange;
  if (!IsPow2(num_chunks))
    return GeometryError::kNumChunksNotPowerOfTwo;
  if (num_chunks < kMinNumChunks || num_chunks >= kMaxNumChunksExclusive)
    return GeometryError::kNumChunksOutOfRange;
  return GeometryError::kOk;
}

const char* GeometryErrorToString(GeometryError e);

// Ring control header (ringtrace ABI).
constexpr size_t kControlHeaderSize = 256;
constexpr size_t kReadPosOffset = 0;
constexpr size_t kWritePosOffset = 64;
constexpr size_t kNumWritersWaitingOffset = 68;

// Format-00 chunk header (spec 3.1): state word, then the target BufferID
// little-endian at bytes 4-5; payload from byte 6.
constexpr uint32_t kStateWordOffset = 0;
constexpr uint32_t kBufferIdOffset = 4;
constexpr uint32_t kPayloadStartFormat00 = 6;

// Size-entry width (spec 6): 1 byte for 256-byte chunks, 2 bytes
// little-endian for 512 B - 32 KiB.
constexpr uint32_t SizeEntryWidth(uint32_t chunk_size) {
  return chunk_size == 256 ? 1 : 2;
}

// The most fragments a format-00 chunk of |chunk_size| can hold: bounded by
// the directory (even with zero-byte payloads) and by the 8-bit count
// (spec 3.5).
constexpr uint32_t MaxFragmentsFor(uint32_t chunk_size) {
  const uint32_t by_dir =
      (chunk_size - kPayloadStartFormat00) / SizeEntryWidth(chunk_size);
  return by_dir < kMaxFragmentsPerChunk ? by_dir : kMaxFragmentsPerChunk;
}
static_assert(MaxFragmentsFor(256) == 250, "spec 3.5: 250 entries in 256 B");
static_assert(MaxFragmentsFor(512) == 253, "spec 3.5: 253 entries in 512 B");
static_assert(MaxFragmentsFor(1024) == 255, "spec 3.5: 255 cap");
static_assert(MaxFragmentsFor(32768) == 255, "spec 3.5: 255 cap");

// Byte offset of fragment i's size entry within its chunk (spec 6):
// [chunk_size - (i + 1) * w, chunk_size - i * w).
constexpr uint32_t SizeEntryOffset(uint32_t chunk_size, uint32_t i) {
  return chunk_size - (i + 1) * SizeEntryWidth(chunk_size);
}

// Bytewise size-entry access: never relies on alignment or endianness.
inline void WriteSizeEntry(uint8_t* entry, uint32_t width, uint32_t size) {
  entry[0] = static_cast<uint8_t>(size & 0xff);
  if (width == 2)
    entry[1] = static_cast<uint8_t>((size >> 8) & 0xff);
}
constexpr uint32_t ReadSizeEntry(const uint8_t* entry, uint32_t width) {
  return width == 2 ? static_cast<uint32_t>(entry[0]) |
                          (static_cast<uint32_t>(entry[1]) << 8)
                    : static_cast<uint32_t>(entry[0]);
}

// Section 6.1 worked example: a 256-byte chunk with fragments of 5, 200 and 3
// bytes. Payload occupies [6, 214); sizes at bytes 255, 254, 253.
static_assert(SizeEntryWidth(256) == 1, "");
static_assert(SizeEntryOffset(256, 0) == 255, "");
static_assert(SizeEntryOffset(256, 1) == 254, "");
static_assert(SizeEntryOffset(256, 2) == 253, "");
static_assert(kPayloadStartFormat00 + 5 + 200 + 3 == 214, "payload_cursor");
static_assert(SizeEntryOffset(256, 2) - (kPayloadStartFormat00 + 208) == 39,
              "available = dir_cursor - payload_cursor");
static_assert(SizeEntryOffset(512, 0) == 510 && SizeEntryOffset(512, 1) == 508,
              "2-byte entries grow down from the end");

// Ring geometry. Construct only from validated parameters (see
// ValidateGeometry); the service derives it from its own configuration,
// never from the shared header.
struct RingGeometry {
  uint32_t chunk_size = 0;
  uint32_t num_chunks = 0;

  constexpr RingGeometry() = default;
  constexpr RingGeometry(uint32_t cs, uint32_t nc)
      : chunk_size(cs), num_chunks(nc) {}

  constexpr bool IsValid() const {
    return ValidateGeometry(chunk_size, num_chunks) == GeometryError::kOk;
  }
  constexpr uint32_t chunk_bits() const { return Log2(num_chunks); }
  constexpr uint32_t size_entry_width() const {
    return SizeEntryWidth(chunk_size);
  }

  // Spec 4.2.
  constexpr uint32_t ChunkIndex(uint32_t position) const {
    return position & (num_chunks - 1);
  }
  constexpr uint32_t WrapCount(uint32_t position) const {
    return (position >> chunk_bits()) & kWrapCountMask;
  }
  // Computed from the position, never by incrementing a tag (spec 4.2).
  constexpr uint32_t NextWrap(uint32_t position) const {
    return WrapCount(static_cast<uint32_t>(position + num_chunks));
  }

  // Spec 4.1: unsigned distance; full iff distance >= num_chunks.
  static constexpr uint32_t Distance(uint32_t write_pos, uint32_t read_pos) {
    return static_cast<uint32_t>(write_pos - read_pos);
  }
  constexpr bool IsFull(uint32_t write_pos, uint32_t read_pos) const {
    return Distance(write_pos, read_pos) >= num_chunks;
  }
  static constexpr bool IsEmpty(uint32_t write_pos, uint32_t read_pos) {
    return write_pos == read_pos;
  }

  // Byte offset of chunk |index| in the mapping.
  constexpr size_t ChunkOffset(uint32_t index) const {
    return kControlHeaderSize + static_cast<size_t>(index) * chunk_size;
  }
  // Bytes of the whole mapping (header + chunks), as 64-bit to avoid overflow
  // on 32-bit targets; callers check it fits their size_t.
  constexpr uint64_t MappingSize() const {
    return kControlHeaderSize + static_cast<uint64_t>(num_chunks) * chunk_size;
  }
};

// Spec 4.1 rollover example and 4.2 tables.
static_assert(RingGeometry::Distance(0x0000'0002u, 0xffff'fffcu) == 6, "");
static_assert(RingGeometry(256, 4).ChunkIndex(12) == 0, "");
static_assert(RingGeometry(256, 4).WrapCount(12) == 3, "");
static_assert(RingGeometry(256, 4).WrapCount(4) == 1, "");
static_assert(RingGeometry(256, 4).NextWrap(8) == 3, "spec 2.2");
static_assert(RingGeometry(256, 16).NextWrap(0xffff'fff0u) == 0,
              "spec 4.2: computed from the position across the rollover");
static_assert(RingGeometry(256, 2).WrapCount(0xffff'ffffu) == 0x1fff'ffffu,
              "29-bit mask bites for 2 chunks");

// Typed view of a mapping. Holds only the base pointer and the geometry the
// owner validated; all accesses go through atomics (state words, cursors) or
// through the chunk byte ranges the protocol hands over.
//
// The std::atomic<uint32_t> views rely on std::atomic<uint32_t> being a
// lock-free, 4-byte object with the layout of uint32_t, so that two processes
// mapping the same bytes operate on the same word.
static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "the ABI needs lock-free 32-bit atomics");
static_assert(sizeof(std::atomic<uint32_t>) == 4, "");

class RingView {
 public:
  RingView() = default;
  // |base| must be 64-byte aligned and map geometry.MappingSize() bytes.
  RingView(uint8_t* base, RingGeometry geometry)
      : base_(base), geometry_(geometry) {}

  uint8_t* base() const { return base_; }
  const RingGeometry& geometry() const { return geometry_; }

  std::atomic<uint32_t>* read_pos() const { return Word(kReadPosOffset); }
  std::atomic<uint32_t>* write_pos() const { return Word(kWritePosOffset); }
  std::atomic<uint32_t>* num_writers_waiting() const {
    return Word(kNumWritersWaitingOffset);
  }

  // Chunk |index| must be < num_chunks (callers derive it with ChunkIndex).
  uint8_t* chunk(uint32_t index) const {
    return base_ + geometry_.ChunkOffset(index);
  }
  std::atomic<uint32_t>* chunk_state(uint32_t index) const {
    return Word(geometry_.ChunkOffset(index) + kStateWordOffset);
  }

 private:
  std::atomic<uint32_t>* Word(size_t offset) const {
    return reinterpret_cast<std::atomic<uint32_t>*>(base_ + offset);
  }

  uint8_t* base_ = nullptr;
  RingGeometry geometry_;
};

// ---------------------------------------------------------------------------
// Transition graph (spec 5.1).
//
// The side that makes a change of a state word. Only the two roles of the
// protocol exist: one reader (the service) and the writers of the ring.
// ---------------------------------------------------------------------------

enum class Actor : uint8_t { kWriter = 0, kReader = 1 };

// True iff spec 5.1 lists the edge |from| -> |to| for |actor|. State level:
//   writer: Free -> Acq (claim), Acq -> Cpl (publish), Cpl -> Acq (reuse),
//           RwR -> Ack (acknowledge);
//   reader: Free -> Free (settle a hole), Acq -> RwR (scrape),
//           Cpl -> Free (consume), Ack -> Free (reclaim).
// No edge leaves or enters a reserved state.
constexpr bool IsLegalStateTransition(ChunkState from,
                                      ChunkState to,
                                      Actor actor) {
  using S = ChunkState;
  if (actor == Actor::kWriter) {
    return (from == S::kFreeForWrap && to == S::kAcquired) ||
           (from == S::kAcquired && to == S::kComplete) ||
           (from == S::kComplete && to == S::kAcquired) ||
           (from == S::kRewriteRequested && to == S::kAcknowledged);
  }
  return (from == S::kFreeForWrap && to == S::kFreeForWrap) ||
         (from == S::kAcquired && to == S::kRewriteRequested) ||
         (from == S::kComplete && to == S::kFreeForWrap) ||
         (from == S::kAcknowledged && to == S::kFreeForWrap);
}

// Word level: the state edge is legal and the payload bits change only as
// spec 5.1 allows:
//   Free(k) -> Acq(w,0): a claim starts with no fragment;
//   Free(k) -> Free(k+1 mod 2^29) or Free(0): a hole moves to the next lap
//     (the wrap count of position p is p >> chunk_bits masked to 29 bits, so
//     when the 32-bit position rolls over with more than 8 chunks the next
//     lap is 0 before k reaches 2^29 - 1; the word does not hold the
//     geometry, so 0 is accepted from any k);
//   Acq(w,n) -> Cpl(w,n'), n' >= n: same format and writer; the flags may
//     only gain continues-on-next;
//   Cpl(w,n) -> Acq(w,n), Acq(w,n) -> RwR(w,n): only the state bits change;
//   RwR -> Ack: Ack has no payload bits;
//   Cpl/Ack -> Free(next): the next lap depends on the position, which the
//     word does not hold, so any FreeForWrap word is accepted here.
constexpr bool IsLegalTransition(StateWord from, StateWord to, Actor actor) {
  const ChunkState fs = GetState(from);
  const ChunkState ts = GetState(to);
  if (!IsLegalStateTransition(fs, ts, actor))
    return false;
  switch (fs) {
    case ChunkState::kFreeForWrap:
      if (ts == ChunkState::kAcquired)
        return GetNumFragments(to) == 0;
      return GetWrapCount(to) == ((GetWrapCount(from) + 1) & kWrapCountMask) ||
             GetWrapCount(to) == 0;
    case ChunkState::kAcquired:
      if (ts == ChunkState::kRewriteRequested)
        return GetPayloadBits(to) == GetPayloadBits(from);
      return GetFormat(to) == GetFormat(from) &&
             GetWriterId(to) == GetWriterId(from) &&
             GetNumFragments(to) >= GetNumFragments(from) &&
             (GetFlags(to) & ~kFlagContinuesOnNext) ==
                 (GetFlags(from) & ~kFlagContinuesOnNext);
    case ChunkState::kComplete:
      if (ts == ChunkState::kAcquired)
        return GetPayloadBits(to) == GetPayloadBits(from);
      return true;  // consume: FreeForWrap(next_wrap(p))
    case ChunkState::kRewriteRequested:
      return GetPayloadBits(to) == 0;
    case ChunkState::kAcknowledged:
      return true;  // reclaim: FreeForWrap(next_wrap(p))
    default:
      return false;
  }
}

static_assert(IsLegalTransition(
                  MakeFreeForWrap(3),
                  MakeDataWord(ChunkState::kAcquired, 0, kNoChunkFlags, 0, 9),
                  Actor::kWriter),
              "claim");
static_assert(!IsLegalTransition(
                  MakeFreeForWrap(3),
                  MakeDataWord(ChunkState::kAcquired, 0, kNoChunkFlags, 0, 9),
                  Actor::kReader),
              "only a writer claims");
static_assert(IsLegalTransition(MakeFreeForWrap(0x1fff'ffff),
                                MakeFreeForWrap(0),
                                Actor::kReader),
              "a hole's next lap wraps with the 29-bit count");

// ---------------------------------------------------------------------------
// The accesses of spec section 8, one function per row, each with the fixed
// memory order(s) of its row. Call sites never name a memory order for a
// ring word: they call the row. The labels used in comments are
// "(8.N X-name)" with X = W for the writer's rows and R for the reader's.
// The writer's rows are here, for the apps' writers; the reader's (8.1,
// 8.2, 8.6, 8.9, 8.11, 8.12, 8.13) are the service's and live in
// src/tracing/core/shm_ring/ring_reader_ops.h, which no public header
// includes (tools/check-public-api checks it).
//
// Pairings (acquire side <- release side):
//   (8.1 R-load-state)   <- (8.7 W-publish), via a later (8.8 W-reuse) too
//                           (the RMW continues the release sequence)
//   (8.3 W-load-read-pos) <- (8.13 R-store-read-pos)
//   (8.5 W-claim)        <- (8.6 R-settle-hole), (8.11 R-consume),
//                           (8.12 R-reclaim)
//   (8.7 W-publish) failure <- (8.9 R-scrape)
//   (8.12 R-reclaim)     <- (8.10 W-acknowledge)
//   (8.6, 8.9, 8.11) failures <- (8.7 W-publish) where the word they return
//                           is a publication to dispatch on.
// (8.2), (8.4) and (8.8) are relaxed and pair with nothing.
//
// The CAS rows take |expected| by reference and, on failure, leave the word
// they found there, as compare_exchange_strong does.
// ---------------------------------------------------------------------------

// (8.3 W-load-read-pos) acquire.
inline uint32_t WriterLoadReadPos(const std::atomic<uint32_t>& read_pos) {
  return read_pos.load(std::memory_order_acquire);
}
// (8.4 W-reserve) relaxed/relaxed, with its relaxed initial load: hands out a
// ticket and transfers no chunk.
inline uint32_t WriterLoadWritePos(const std::atomic<uint32_t>& write_pos) {
  return write_pos.load(std::memory_order_relaxed);
}
inline bool WriterReserve(std::atomic<uint32_t>& write_pos,
                          uint32_t& expected,
                          uint32_t desired) {
  return write_pos.compare_exchange_strong(
      expected, desired, std::memory_order_relaxed, std::memory_order_relaxed);
}
// (8.5 W-claim) Free -> Acq: acquire / relaxed (the failed word is
// discarded).
inline bool WriterClaim(std::atomic<uint32_t>& state,
                        StateWord& expected,
                        StateWord desired) {
  return state.compare_exchange_strong(
      expected, desired, std::memory_order_acquire, std::memory_order_relaxed);
}
// (8.7 W-publish) Acq -> Cpl: release / acquire.
inline bool WriterPublish(std::atomic<uint32_t>& state,
                          StateWord& expected,
                          StateWord desired) {
  return state.compare_exchange_strong(
      expected, desired, std::memory_order_release, std::memory_order_acquire);
}
// (8.8 W-reuse) Cpl -> Acq: relaxed / relaxed.
inline bool WriterReuse(std::atomic<uint32_t>& state,
                        StateWord& expected,
                        StateWord desired) {
  return state.compare_exchange_strong(
      expected, desired, std::memory_order_relaxed, std::memory_order_relaxed);
}
// (8.10 W-acknowledge) RwR -> Ack: release / relaxed.
inline bool WriterAcknowledge(std::atomic<uint32_t>& state,
                              StateWord& expected) {
  return state.compare_exchange_strong(expected, MakeAcknowledged(),
                                       std::memory_order_release,
                                       std::memory_order_relaxed);
}
// Flush() with a packet open (spec 8, project decisions): acquire, the same
// pairing with (8.9 R-scrape) as the failure side of (8.7 W-publish).
inline StateWord WriterLoadStateForScrape(const std::atomic<uint32_t>& state) {
  return state.load(std::memory_order_acquire);
}

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_SHM_RING_ABI_H_
