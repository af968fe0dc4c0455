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
// Without an index the payload is in the v1 format: fragments, each prefixed
// by a varint size. Only the bytes of [0, valid_size) are ever tokenized by
// readers; they are still treated as untrusted (patches may rewrite them),
// see FragIterator. With an index, see FragIndexEntry below.
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

// TBChunkFlags: TraceBufferV2's one chunk-flag vocabulary, the flags the
// design gives a TBChunk header: the ABI flags a chunk arrives with and the
// buffer's local flags, in one 16-bit field. It is its own type
// (StrongFlags), so that it cannot be mixed with the ring's
// shm_ring::ChunkFlags, which give other meanings to the same low bits, nor
// with a bare integer. The ring drainer's chunks cross into it in one place,
// ring_drainer::MapChunkFlags()
// (src/tracing/service/ring_drainer/trace_buffer_v2_sink.h); admission stores
// the bits as given, so there is no second mapping.
//
// Why the buffer keeps a vocabulary of its own instead of storing the ring's
// flags: the design's TBChunk header holds the v1 ABI flags (bits 0-2, as a
// v1 CommitData chunk carries them, CopyChunkUntrusted) next to local flags
// only the buffer sets, and a packet count in bits 11-15, none of which the
// ring's three bits can express.
struct TBChunkFlagsTag;
using TBChunkFlags = StrongFlags<TBChunkFlagsTag, uint16_t>;
// What a chunk may carry into the buffer: the v1 path takes bits 0-2 (the
// v1 ABI's chunk flags, same bits), the ring drainer path bits 0, 1 and 5
// (the masks below). Admission keeps only those and ignores any other bit.
constexpr TBChunkFlags kNoTBChunkFlags;
// The first fragment continues a packet from the writer's previous chunk
// (v1 kFirstPacketContinuesFromPrevChunk).
constexpr TBChunkFlags kChunkContinuesFromPrev =
    TBChunkFlags::FromBits(1u << 0);
// The last fragment continues in the writer's next chunk (v1
// kLastPacketContinuesOnNextChunk).
constexpr TBChunkFlags kChunkContinuesOnNext = TBChunkFlags::FromBits(1u << 1);
// The chunk waits for patches (v1 only).
constexpr TBChunkFlags kChunkNeedsPatching = TBChunkFlags::FromBits(1u << 2);
// The writer lost data before this chunk: SMB_FULL (+PRESENT) on the first
// packet read from it (ring drainer path only).
constexpr TBChunkFlags kChunkDataLoss = TBChunkFlags::FromBits(1u << 5);
constexpr TBChunkFlags kV1AdmissionMask =
    kChunkContinuesFromPrev | kChunkContinuesOnNext | kChunkNeedsPatching;
constexpr TBChunkFlags kFragmentAdmissionMask =
    kChunkContinuesFromPrev | kChunkContinuesOnNext | kChunkDataLoss;
// Local flags.
// Scraped: the last fragment is never read.
constexpr TBChunkFlags kTBIncomplete = TBChunkFlags::FromBits(1u << 3);
// No data; outer size is size_field * 4.
constexpr TBChunkFlags kTBPadding = TBChunkFlags::FromBits(1u << 4);
// (bit 5: kChunkDataLoss, above)
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

// Fragment index. A chunk admitted with an index stores, between its header
// and its payload, one entry per stored fragment, in order: where its bytes
// are in the payload and how many. Two writers make such chunks:
//  - the ring drainer's path (BeginChunkFragments), always: its payload is
//    the fragments' bytes back to back, exactly as they lie in the ring
//    chunk, with no size headers (the entries take their place, 4 bytes per
//    fragment either way), so the drainer moves a chunk in one copy;
//  - the v1 path (CopyChunkUntrusted), for a chunk whose fragments are final
//    when it is admitted (complete, well-formed, no pending patches, no drop
//    marker) and large enough to be worth it (WantsFragIndex): its payload
//    keeps the producer's bytes, varint size headers included, and each
//    entry points past its header.
// Every reader of an indexed chunk goes through the entries, never through
// the payload's headers, so the two layouts read the same. The index sits
// next to the header, so a reader that enters the chunk finds both in the
// same or adjacent cache lines and copies the packets streaming forward,
// instead of walking a chain of varint headers, each of which depends on the
// previous one (a cache miss per fragment in a large buffer). The entries
// are written by the buffer, never by a producer: no patch or recommit can
// reach an indexed chunk (it needs neither).
//
// [TB-IDX] In an indexed chunk, valid_size and read_offset count FRAGMENTS
// (entries), not bytes: valid_size is the number of entries, read_offset the
// number already consumed. In any other chunk they are byte offsets into the
// payload, at fragment-header boundaries. Either way read_offset <=
// valid_size and "read_offset < valid_size" means "unread fragments".
// Counting entries keeps empty fragments (whose bytes have no extent in a
// bare payload) distinct positions.
struct FragIndexEntry {
  uint16_t data_offset;  // Offset of the fragment bytes in the payload.
  uint16_t size;
};
static_assert(sizeof(FragIndexEntry) == 4, "4 bytes per fragment");
// The v1 path gives a chunk an index only if it has at least this many
// fragments to store ...
constexpr size_t kFragIndexMinFragments = 4;
// ... and at least this many fragment bytes per entry: the index costs at
// most 1/16 of the chunk's bytes. With smaller fragments several headers
// share each cache line and the varint walk is cheap anyway.
constexpr size_t kFragIndexBytesPerEntry = 64;
// Most entries a v1 chunk can have (kMaxChunkPayloadSize / 64). A drainer
// chunk has at most one per 4 bytes of its payload limit.
constexpr size_t kMaxFragIndexEntries = 1023;

// Whether the v1 path gives an index to a chunk with |n| fragments in its
// first |payload_bytes| bytes (the buffer also checks that it still fits).
constexpr bool WantsFragIndex(size_t n, size_t payload_bytes) {
  return n >= kFragIndexMinFragments && n <= kMaxFragIndexEntries &&
         n * kFragIndexBytesPerEntry <= payload_bytes;
}

struct TBChunk {
  TBChunkFlags flags;
  uint16_t size_field;  // Data: payload_size. Padding: outer size / 4.
  uint32_t chunk_id;
  uint16_t producer_id;
  uint16_t writer_id;
  // End of the readable fragments: a byte offset (<= payload_size), or with
  // an index the number of entries ([TB-IDX]).
  uint16_t valid_size;
  // What of [0, valid_size) was consumed, in valid_size's unit ([TB-IDX]).
  uint16_t read_offset;

  bool is_padding() const { return static_cast<bool>(flags & kTBPadding); }
  bool has_frag_index() const {
    return static_cast<bool>(flags & kTBFragIndex);
  }
  // Bytes after the header: the fragment index if any, then the payload.
  uint16_t stored_size() const { return size_field; }
  // The payload bytes stored after the index (if any).
  uint16_t payload_size() const {
    return static_cast<uint16_t>(size_field - PayloadOffset());
  }
  // Only if has_frag_index(). valid_size and size_field never change once
  // such a chunk is written.
  size_t frag_index_size() const { return valid_size; }
  const FragIndexEntry* frag_index() const {
    return reinterpret_cast<const FragIndexEntry*>(this + 1);
  }
  FragIndexEntry* frag_index() {
    return reinterpret_cast<FragIndexEntry*>(this + 1);
  }
  // Stored size of a chunk keeping |payload_bytes| payload bytes and |n|
  // index entries.
  static constexpr size_t StoredSizeWithIndex(size_t payload_bytes, size_t n) {
    return n * sizeof(FragIndexEntry) + payload_bytes;
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
    return has_frag_index()
               ? static_cast<size_t>(valid_size) * sizeof(FragIndexEntry)
               : 0;
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
