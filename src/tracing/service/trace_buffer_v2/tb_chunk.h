/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TBChunk: the header of every chunk stored in TraceBufferV2's memory.
//
// Layout of the buffer: [0, data_end) is tiled by chunks, each 4-byte aligned:
//   data chunk:    TBChunk (16 bytes) + stored_size bytes + 0..3 pad bytes:
//                  (kTBFragIndex only) the fragment index, then the payload
//   padding chunk: only the first 4 bytes (flags, size_field) are meaningful;
//                  its outer size is size_field * 4 (>= 4 bytes), so any
//                  4-byte-aligned remainder can become padding.
// The payload is in the v1 format: fragments, each prefixed by a varint size
// (the buffer itself writes 4-byte redundant varints). Only the bytes of
// [0, valid_size) are ever tokenized by readers; they are still treated as
// untrusted (patches may rewrite them), see FragIterator.
//
// The layout is an implementation detail, not an ABI.

#ifndef SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TB_CHUNK_H_
#define SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TB_CHUNK_H_

#include <stddef.h>
#include <stdint.h>

#include "ringtrace/strong_flags.h"
#include "src/base/checked_math.h"

namespace ringtrace {
namespace trace_buffer {

// TBChunk::flags: a vocabulary of its own (StrongFlags), so that it cannot be
// mixed with the admission flags, the v1 chunk flags (trace_buffer_v2.h) or
// the ring's shm_ring::ChunkFlags, which give other meanings to the same low
// bits, nor with a bare integer.
struct TBChunkFlagsTag;
using TBChunkFlags = StrongFlags<TBChunkFlagsTag, uint16_t>;
constexpr TBChunkFlags kNoTBFlags;
// ABI flags (from the producer).
constexpr TBChunkFlags kTBFirstContinuesFromPrev =
    TBChunkFlags::FromBits(1u << 0);
constexpr TBChunkFlags kTBLastContinuesOnNext = TBChunkFlags::FromBits(1u << 1);
constexpr TBChunkFlags kTBNeedsPatching = TBChunkFlags::FromBits(1u << 2);
// Local flags.
// Scraped: the last fragment is never read.
constexpr TBChunkFlags kTBIncomplete = TBChunkFlags::FromBits(1u << 3);
// No data; outer size is size_field * 4.
constexpr TBChunkFlags kTBPadding = TBChunkFlags::FromBits(1u << 4);
// Writer lost data before it (SMB_FULL).
constexpr TBChunkFlags kTBDataLoss = TBChunkFlags::FromBits(1u << 5);
// Malformed after valid_size: report once.
constexpr TBChunkFlags kTBCorrupted = TBChunkFlags::FromBits(1u << 6);
// Reader did the gap/SMB_FULL check.
constexpr TBChunkFlags kTBEntered = TBChunkFlags::FromBits(1u << 7);
// Fully consumed: not in its sequence queue.
constexpr TBChunkFlags kTBConsumed = TBChunkFlags::FromBits(1u << 8);
// Two-phase write not committed yet.
constexpr TBChunkFlags kTBPending = TBChunkFlags::FromBits(1u << 9);
// The chunk stores a fragment index before its fragments (see
// FragIndexEntry).
constexpr TBChunkFlags kTBFragIndex = TBChunkFlags::FromBits(1u << 10);
// Bits 11-15: the number of packets starting in the chunk (see
// SetPacketCount()), counted at admission so that erasing an unread chunk
// can count its packets without reading its fragments.

// Packet starts counted at admission, in bits 11-15 of TBChunk::flags:
// 0-30 exact, kPacketCountUnknown when more, or when the count could change
// or cannot be computed cheaply (pending patches, scraped, malformed, drop
// markers): the erase path then tokenizes the chunk.
constexpr unsigned kPacketCountShift = 11;
constexpr uint16_t kPacketCountUnknown = 31;
constexpr TBChunkFlags kPacketCountMask =
    TBChunkFlags::FromBits(kPacketCountUnknown << kPacketCountShift);

// Fragment index. A chunk whose fragments are final when it is admitted
// (complete, well-formed, no pending patches, no drop marker) and large
// enough to be worth it stores, between its header and its payload, one
// entry per fragment of [0, valid_size), in order: where its bytes are.
// Its payload then holds exactly [0, valid_size) and the number of entries
// is (size_field - valid_size) / 4: the header needs no other field. The
// index sits next to the header, so a reader that enters the chunk finds
// both in the same or adjacent cache lines, and a reader that copies the
// packets still streams the chunk forward. The main read path walks these
// entries instead of the chain of varint size headers, each of which depends on
// the previous one (a cache miss per fragment in a large buffer). The entries
// are written by the buffer, never by a producer: no patch or recommit can
// reach such a chunk (it needs neither), and they lie outside the range a
// patch may touch. The varint headers stay in the payload, byte-identical
// to what the producer sent, for every other path (erase, reassembly,
// debug checksum).
struct FragIndexEntry {
  uint16_t data_offset;  // Offset of the fragment bytes in the payload.
  uint16_t size;
};
static_assert(sizeof(FragIndexEntry) == 4, "4 bytes per fragment");
// A chunk gets an index only if it has at least this many fragments in
// [0, valid_size) ...
constexpr size_t kFragIndexMinFragments = 4;
// ... and at least this many fragment bytes per entry: the index costs at
// most 1/16 of the chunk's bytes. With smaller fragments several headers
// share each cache line and the varint walk is cheap anyway.
constexpr size_t kFragIndexBytesPerEntry = 64;
// Most entries a chunk can have (kMaxChunkPayloadSize / 64).
constexpr size_t kMaxFragIndexEntries = 1023;

// Whether an index is worth it for a chunk with |n| fragments in
// [0, valid_size) (the buffer also checks that the chunk still fits).
constexpr bool WantsFragIndex(size_t n, size_t valid_size) {
  return n >= kFragIndexMinFragments && n <= kMaxFragIndexEntries &&
         n * kFragIndexBytesPerEntry <= valid_size;
}

struct TBChunk {
  TBChunkFlags flags;
  uint16_t size_field;  // Data: payload_size. Padding: outer size / 4.
  uint32_t chunk_id;
  uint16_t producer_id;
  uint16_t writer_id;
  uint16_t valid_size;   // End of the readable fragments (<= payload_size).
  uint16_t read_offset;  // Bytes of [0, valid_size) already consumed.

  bool is_padding() const { return static_cast<bool>(flags & kTBPadding); }
  bool has_frag_index() const {
    return static_cast<bool>(flags & kTBFragIndex);
  }
  // Bytes after the header: the fragment index if any, then the payload.
  uint16_t stored_size() const { return size_field; }
  // The payload (fragments) the producer sent. A chunk with an index keeps
  // only [0, valid_size) of it.
  uint16_t payload_size() const {
    return has_frag_index() ? valid_size : size_field;
  }
  // Only if has_frag_index(). valid_size and size_field never change once
  // such a chunk is written.
  size_t frag_index_size() const {
    return static_cast<size_t>(size_field - valid_size) /
           sizeof(FragIndexEntry);
  }
  const FragIndexEntry* frag_index() const {
    return reinterpret_cast<const FragIndexEntry*>(this + 1);
  }
  FragIndexEntry* frag_index() {
    return reinterpret_cast<FragIndexEntry*>(this + 1);
  }
  // Stored size of a chunk keeping |valid_size| payload bytes and |n| index
  // entries.
  static constexpr size_t StoredSizeWithIndex(size_t valid_size, size_t n) {
    return n * sizeof(FragIndexEntry) + valid_size;
  }

  // After the fragment index, if any (set flags, size_field and valid_size
  // first).
  uint8_t* payload() {
    return reinterpret_cast<uint8_t*>(this + 1) + PayloadOffset();
  }
  const uint8_t* payload() const {
    return reinterpret_cast<const uint8_t*>(this + 1) + PayloadOffset();
  }
  size_t PayloadOffset() const {
    return has_frag_index() ? static_cast<size_t>(size_field - valid_size) : 0;
  }

  uint16_t packet_count() const {
    return static_cast<uint16_t>(flags.bits() >> kPacketCountShift);
  }
  void SetPacketCount(size_t count) {
    const uint16_t c = count < kPacketCountUnknown
                           ? static_cast<uint16_t>(count)
                           : kPacketCountUnknown;
    flags =
        (flags & ~kPacketCountMask) |
        TBChunkFlags::FromBits(static_cast<uint16_t>(c << kPacketCountShift));
  }

  size_t outer_size() const {
    return is_padding() ? static_cast<size_t>(size_field) * 4
                        : OuterSizeForPayload(size_field);
  }

  static constexpr size_t OuterSizeForPayload(size_t payload_size) {
    return base::AlignUp(sizeof(TBChunk) + payload_size, 4);
  }
};

static_assert(sizeof(TBChunkFlags) == 2, "flags must stay 16 bits");
static_assert(sizeof(TBChunk) == 16, "TBChunk must stay 16 bytes");
static_assert(alignof(TBChunk) <= 4, "chunks are only 4-byte aligned");

// Largest padding chunk: 65535 * 4 bytes, above any remainder we create.
constexpr size_t kMaxPaddingSize = 65535u * 4u;

}  // namespace trace_buffer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TB_CHUNK_H_
