/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Protobuf wire-format basics, the one implementation of each: wire types,
// tags, the varint's size, its encoding and its decoding. Every component
// that encodes, rewrites or scans protobuf bytes by hand uses these (the
// Message encoder, the typed writers, the Ungrouper, the exporter, the
// probes). Part of the encoding component (//src/tracing/core/encoding:wire,
// docs/encoding.md); readers of untrusted bytes, contiguous or in slices,
// are in src/tracing/core/encoding/wire_reader.h.

#ifndef INCLUDE_RINGTRACE_PROTO_WIRE_H_
#define INCLUDE_RINGTRACE_PROTO_WIRE_H_

#include <stddef.h>
#include <stdint.h>

namespace ringtrace {
namespace encoding {

// Wire types.
constexpr uint32_t kWireVarInt = 0;
constexpr uint32_t kWireFixed64 = 1;
constexpr uint32_t kWireLengthDelimited = 2;
constexpr uint32_t kWireStartGroup = 3;
constexpr uint32_t kWireEndGroup = 4;
constexpr uint32_t kWireFixed32 = 5;

// A 64-bit value takes at most 10 varint bytes; a tag (32 bits) at most 5.
constexpr size_t kMaxVarIntSize = 10;
constexpr size_t kMaxTagSize = 5;

// Field numbers are 29 bits: [1, 2^29 - 1].
constexpr uint32_t kMaxFieldId = (1u << 29) - 1;

constexpr uint32_t MakeTag(uint32_t field_id, uint32_t wire_type) {
  return (field_id << 3) | wire_type;
}

// Bytes of the minimal varint encoding of |v| (1..10), without a loop or a
// division: ceil((floor(log2(v)) + 1) / 7) == (9 * floor(log2(v)) + 73) / 64
// for every 64-bit v (v = 0 takes 1 byte).
inline uint32_t VarIntSize(uint64_t v) {
  const uint32_t log2 = 63 - static_cast<uint32_t>(__builtin_clzll(v | 1));
  return (log2 * 9 + 73) >> 6;
}

// Writes the minimal varint encoding of |v| at |p|, which must have room for
// VarIntSize(v) (at most kMaxVarIntSize) bytes. Returns the end.
inline uint8_t* EncodeVarInt(uint64_t v, uint8_t* p) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// Why untrusted wire bytes could not be read.
enum class WireError : uint8_t {
  kNone = 0,
  kTruncated,      // the input ends before the value does
  kVarIntTooLong,  // a varint of |max_len| bytes without a last byte
};

// Decodes a varint of at most |max_len| (<= kMaxVarIntSize) bytes from the
// untrusted bytes [p, end); never reads outside them. On success sets *value
// and *len (bytes consumed). kTruncated when [p, end) is shorter than
// |max_len| and ends before the varint does; kVarIntTooLong when |max_len|
// bytes carry no last byte. Bits past the 64th of a 10-byte varint are dropped,
// as protobuf does.
inline WireError DecodeVarInt(const uint8_t* p,
                              const uint8_t* end,
                              size_t max_len,
                              uint64_t* value,
                              uint32_t* len) {
  const size_t avail = static_cast<size_t>(end - p);
  const size_t limit = avail < max_len ? avail : max_len;
  uint64_t v = 0;
  for (size_t i = 0; i < limit; i++) {
    const uint8_t b = p[i];
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *value = v;
      *len = static_cast<uint32_t>(i + 1);
      return WireError::kNone;
    }
  }
  return limit == max_len ? WireError::kVarIntTooLong : WireError::kTruncated;
}

}  // namespace encoding
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_PROTO_WIRE_H_
