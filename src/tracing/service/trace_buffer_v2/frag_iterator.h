/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// FragIterator: forward-only tokenizer of the fragments of a chunk payload.
//
// The payload is untrusted (producer bytes, possibly rewritten by patches):
// each fragment is a varint size (1 to 4 bytes; writers use 4-byte redundant
// varints) followed by that many bytes. The iterator never reads outside
// [begin, end) and never modifies the buffer. A varint that is truncated (ends
// at |end|) or longer than 4 bytes, or a size that runs past |end|, makes
// Next() return kCorrupted; the iterator then stays at the bad fragment.
// A size of kPacketSizeDropPacket (2^28 - 1) is a "writer dropped this
// packet" marker: a fragment with no payload bytes and |dropped| set.

#ifndef SRC_TRACING_SERVICE_TRACE_BUFFER_V2_FRAG_ITERATOR_H_
#define SRC_TRACING_SERVICE_TRACE_BUFFER_V2_FRAG_ITERATOR_H_

#include <stddef.h>
#include <stdint.h>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace trace_buffer {

class FragIterator {
 public:
  static constexpr uint32_t kDropPacketSize = (1u << 28) - 1;
  static constexpr size_t kMaxVarIntSize = 4;

  enum class Result { kOk, kEnd, kCorrupted };

  struct Frag {
    uint32_t header_offset;  // Offset of the varint size header.
    uint32_t data_offset;    // Offset of the fragment bytes.
    uint32_t size;           // 0 for a dropped-packet marker.
    bool dropped;
  };

  // Iterates the fragments in payload[begin, end).
  FragIterator(const uint8_t* payload, size_t begin, size_t end)
      : payload_(payload), pos_(begin), end_(end) {
    RT_DCHECK(begin <= end);
  }

  Result Next(Frag* frag) {
    if (pos_ == end_)
      return Result::kEnd;
    const size_t header_offset = pos_;
    size_t p = pos_;
    uint32_t value = 0;
    for (size_t shift = 0;; shift += 7) {
      // Truncated varint (payload ends inside it) or more than 4 bytes.
      if (p == end_ || p - header_offset == kMaxVarIntSize)
        return Result::kCorrupted;
      const uint8_t byte = payload_[p++];
      value |= static_cast<uint32_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        break;
    }
    frag->header_offset = static_cast<uint32_t>(header_offset);
    frag->data_offset = static_cast<uint32_t>(p);
    if (value == kDropPacketSize) {
      frag->size = 0;
      frag->dropped = true;
      pos_ = p;
      return Result::kOk;
    }
    if (value > end_ - p)  // Overflow-safe: p <= end_.
      return Result::kCorrupted;
    frag->size = value;
    frag->dropped = false;
    pos_ = p + value;
    return Result::kOk;
  }

  // Offset just past the last fragment returned.
  size_t pos() const { return pos_; }
  bool at_end() const { return pos_ == end_; }

 private:
  const uint8_t* payload_;
  size_t pos_;
  size_t end_;
};

// Writes |value| (< 2^28) as a 4-byte redundant varint.
inline void WriteRedundantVarInt(uint32_t value, uint8_t* dst) {
  dst[0] = static_cast<uint8_t>((value & 0x7f) | 0x80);
  dst[1] = static_cast<uint8_t>(((value >> 7) & 0x7f) | 0x80);
  dst[2] = static_cast<uint8_t>(((value >> 14) & 0x7f) | 0x80);
  dst[3] = static_cast<uint8_t>((value >> 21) & 0x7f);
}

}  // namespace trace_buffer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_BUFFER_V2_FRAG_ITERATOR_H_
