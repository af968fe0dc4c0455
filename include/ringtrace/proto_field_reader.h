/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// FieldReader: reads the top-level fields of one serialized protobuf
// message, for code that decodes small messages without libprotobuf, such
// as a data source's own config (ringtrace/data_source.h). The field
// numbers come from the generated typed writers (`Foo::kBarFieldNumber`,
// docs/encoding.md), so no number is written by hand:
//
//   encoding::FieldReader reader(args.own_config);
//   encoding::Field field;
//   while (reader.Next(&field)) {
//     switch (field.id) {
//       case rtzero::MyConfig::kPeriodMsFieldNumber:
//         period_ms = field.as_uint32();
//         break;
//       case rtzero::MyConfig::kLabelFieldNumber:
//         label = std::string(field.as_string());
//         break;
//     }
//   }
//   if (!reader.ok()) { ...malformed... }
//
// The input is untrusted: every length is checked against what is left,
// nothing outside the input is read, and the first malformed field (a
// truncated value, a varint longer than 10 bytes, field number 0 or above
// 2^29 - 1, wire types 3 and 4 (groups), 6 or 7) ends the walk with ok()
// false. A nested message is a length-delimited field: read it with a
// FieldReader over field.as_bytes(). A message field that occurs more than
// once is, in protobuf, the merge of its occurrences, i.e. of their
// concatenated payloads (what data_source.h gives as own_config).
//
// Thread model: a reader is used by one thread; the bytes must not change
// while it reads them and must outlive the string views it hands out.

#ifndef INCLUDE_RINGTRACE_PROTO_FIELD_READER_H_
#define INCLUDE_RINGTRACE_PROTO_FIELD_READER_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <string_view>

#include "ringtrace/proto_wire.h"

namespace ringtrace {
namespace encoding {

// One field as read: its number, its wire type and its value (a varint,
// fixed32 or fixed64 in |int_value|; a length-delimited field's payload in
// |bytes|, a view into the reader's input).
struct Field {
  uint32_t id = 0;
  uint32_t wire_type = 0;
  uint64_t int_value = 0;
  std::string_view bytes;

  uint64_t as_uint64() const { return int_value; }
  uint32_t as_uint32() const { return static_cast<uint32_t>(int_value); }
  int64_t as_int64() const { return static_cast<int64_t>(int_value); }
  int32_t as_int32() const { return static_cast<int32_t>(int_value); }
  bool as_bool() const { return int_value != 0; }
  // sint32 / sint64 (zigzag).
  int64_t as_sint64() const {
    return static_cast<int64_t>(int_value >> 1) ^
           -static_cast<int64_t>(int_value & 1);
  }
  int32_t as_sint32() const { return static_cast<int32_t>(as_sint64()); }
  double as_double() const {
    double d;
    memcpy(&d, &int_value, sizeof(d));
    return d;
  }
  float as_float() const {
    const uint32_t bits = static_cast<uint32_t>(int_value);
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
  }
  std::string_view as_string() const { return bytes; }
  std::string_view as_bytes() const { return bytes; }
};

class FieldReader {
 public:
  FieldReader(const void* data, size_t size)
      : cur_(static_cast<const uint8_t*>(data)), end_(cur_ + size) {}
  explicit FieldReader(std::string_view bytes)
      : FieldReader(bytes.data(), bytes.size()) {}

  // The next field into |*field|; false at the end of the input or at the
  // first malformed field (then ok() is false and the reader stays there).
  bool Next(Field* field) {
    if (cur_ == end_ || !ok_)
      return false;
    uint64_t tag = 0;
    uint32_t len = 0;
    if (DecodeVarInt(cur_, end_, kMaxTagSize, &tag, &len) != WireError::kNone)
      return Fail();
    const uint64_t id = tag >> 3;
    if (id == 0 || id > kMaxFieldId)
      return Fail();
    const uint8_t* p = cur_ + len;
    field->id = static_cast<uint32_t>(id);
    field->wire_type = static_cast<uint32_t>(tag & 7);
    field->int_value = 0;
    field->bytes = std::string_view();
    switch (field->wire_type) {
      case kWireVarInt:
        if (DecodeVarInt(p, end_, kMaxVarIntSize, &field->int_value, &len) !=
            WireError::kNone) {
          return Fail();
        }
        p += len;
        break;
      case kWireFixed64:
      case kWireFixed32: {
        const size_t n = field->wire_type == kWireFixed64 ? 8 : 4;
        if (static_cast<size_t>(end_ - p) < n)
          return Fail();
        // Little-endian on the wire, assembled byte by byte.
        for (size_t i = 0; i < n; i++)
          field->int_value |= static_cast<uint64_t>(p[i]) << (8 * i);
        p += n;
        break;
      }
      case kWireLengthDelimited: {
        uint64_t size = 0;
        if (DecodeVarInt(p, end_, kMaxVarIntSize, &size, &len) !=
            WireError::kNone) {
          return Fail();
        }
        p += len;
        if (size > static_cast<uint64_t>(end_ - p))
          return Fail();
        field->bytes = std::string_view(reinterpret_cast<const char*>(p),
                                        static_cast<size_t>(size));
        p += static_cast<size_t>(size);
        break;
      }
      default:  // groups (3, 4) and the undefined 6, 7
        return Fail();
    }
    cur_ = p;
    return true;
  }

  // False once a malformed field was met.
  bool ok() const { return ok_; }

 private:
  bool Fail() {
    ok_ = false;
    return false;
  }

  const uint8_t* cur_;
  const uint8_t* const end_;
  bool ok_ = true;
};

}  // namespace encoding
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_PROTO_FIELD_READER_H_
