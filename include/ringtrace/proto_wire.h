/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Protobuf wire-format basics shared by every component that encodes or
// rewrites protobuf bytes by hand: the TraceWriterV2 encoder, the Ungrouper
// and the trace exporter. Only encoding lives here; decoding untrusted bytes
// stays beside each parser, because each has its own input shape (one buffer,
// slices) and error reporting.

#ifndef INCLUDE_RINGTRACE_PROTO_WIRE_H_
#define INCLUDE_RINGTRACE_PROTO_WIRE_H_

#include <stddef.h>
#include <stdint.h>

namespace ringtrace {
namespace base {

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

}  // namespace base
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_PROTO_WIRE_H_
