/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TBChunk: the header of every chunk stored in TraceBufferV2's memory.
//
// Layout of the buffer: [0, data_end) is tiled by chunks, each 4-byte aligned:
//   data chunk:    TBChunk (16 bytes) + payload_size bytes + 0..3 pad bytes
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
// Bits 10-15: the number of packets starting in the chunk (see
// SetPacketCount()), counted at admission so that erasing an unread chunk
// can count its packets without reading its fragments.

// Packet starts counted at admission, in bits 10-15 of TBChunk::flags:
// 0-62 exact, kPacketCountUnknown when more, or when the count could change
// or cannot be computed cheaply (pending patches, scraped, malformed, drop
// markers): the erase path then tokenizes the chunk.
constexpr unsigned kPacketCountShift = 10;
constexpr uint16_t kPacketCountUnknown = 63;
constexpr TBChunkFlags kPacketCountMask =
    TBChunkFlags::FromBits(kPacketCountUnknown << kPacketCountShift);

struct TBChunk {
  TBChunkFlags flags;
  uint16_t size_field;  // Data: payload_size. Padding: outer size / 4.
  uint32_t chunk_id;
  uint16_t producer_id;
  uint16_t writer_id;
  uint16_t valid_size;   // End of the readable fragments (<= payload_size).
  uint16_t read_offset;  // Bytes of [0, valid_size) already consumed.

  bool is_padding() const { return static_cast<bool>(flags & kTBPadding); }
  uint16_t payload_size() const { return size_field; }

  uint8_t* payload() { return reinterpret_cast<uint8_t*>(this + 1); }
  const uint8_t* payload() const {
    return reinterpret_cast<const uint8_t*>(this + 1);
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
