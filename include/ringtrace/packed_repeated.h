/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Packed repeated fields ([packed = true]) for the generated typed writers.
// A packed field is ONE length-delimited field whose payload is the values
// back to back, so its length must be known before its first value:
//   - varint kinds (int32, int64, uint32, uint64, bool, enum): the caller
//     fills a PackedVarInt, then calls set_<field>(packed);
//   - sint32/sint64: a PackedZigZagVarInt, same way;
//   - fixed-size kinds (fixed32/64, sfixed32/64, float, double): the caller
//     passes an array, set_<field>(values, count), copied as is (their
//     little-endian memory is their encoding; big-endian hosts are refused at
//     compile time).
// An empty packed field (no value) is written as a zero-length field, which
// parsers read as no value.
//
// The buffers grow on the heap as needed and keep their capacity across
// Reset(), so a buffer reused per packet stops allocating once it is large
// enough. Not thread-safe.

#ifndef INCLUDE_RINGTRACE_PACKED_REPEATED_H_
#define INCLUDE_RINGTRACE_PACKED_REPEATED_H_

#include <stddef.h>
#include <stdint.h>

#include <type_traits>
#include <vector>

#include "ringtrace/message.h"
#include "ringtrace/proto_wire.h"

namespace ringtrace {
namespace encoding {

namespace internal {

class PackedBuffer {
 public:
  const uint8_t* data() const { return buf_.data(); }
  size_t size() const { return buf_.size(); }
  void Reset() { buf_.clear(); }

 protected:
  void AppendRawVarInt(uint64_t value) {
    const size_t old_size = buf_.size();
    buf_.resize(old_size + encoding::kMaxVarIntSize);
    uint8_t* end = encoding::EncodeVarInt(value, buf_.data() + old_size);
    buf_.resize(static_cast<size_t>(end - buf_.data()));
  }

 private:
  std::vector<uint8_t> buf_;
};

}  // namespace internal

// Values of a packed int32/int64/uint32/uint64/bool/enum field. Negative
// int32, int64 and enum values take 10 bytes each, as in protobuf.
class PackedVarInt : public internal::PackedBuffer {
 public:
  template <typename T>
  void Append(T value) {
    static_assert(std::is_integral<T>::value || std::is_enum<T>::value,
                  "PackedVarInt holds integers, bools and enums");
    if constexpr (std::is_enum<T>::value) {
      // Enums are int32 on the wire.
      AppendRawVarInt(
          static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(
              static_cast<std::underlying_type_t<T>>(value)))));
    } else {
      // Sign-extends a negative value to 64 bits, as protobuf does.
      AppendRawVarInt(static_cast<uint64_t>(value));
    }
  }
};

// Values of a packed sint32/sint64 field (zigzag: small magnitudes, positive
// or negative, take few bytes).
class PackedZigZagVarInt : public internal::PackedBuffer {
 public:
  void Append(int64_t value) {
    AppendRawVarInt((static_cast<uint64_t>(value) << 1) ^
                    static_cast<uint64_t>(value >> 63));
  }
};

// A packed fixed32/fixed64/sfixed32/sfixed64/float/double field.
template <typename T>
inline void AppendPackedFixed(encoding::Message* message,
                              uint32_t field_id,
                              const T* values,
                              size_t count) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "fixed-size values only");
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "packed fixed values are copied as little-endian memory");
  message->AppendBytes(field_id, values, count * sizeof(T));
}

}  // namespace encoding
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_PACKED_REPEATED_H_
