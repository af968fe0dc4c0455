/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. A hand protobuf encoder for test and benchmark inputs (and
// expected outputs), written independently of include/ringtrace/proto_wire.h so
// that it can check the code that uses it. Bytes are kept in a std::string so
// that mismatches print readably.

#ifndef SRC_TRACING_CORE_ENCODING_TEST_PROTO_TEST_ENCODER_H_
#define SRC_TRACING_CORE_ENCODING_TEST_PROTO_TEST_ENCODER_H_

#include <stddef.h>
#include <stdint.h>

#include <initializer_list>
#include <string>

namespace ringtrace {
namespace encoding {

class ProtoTestEncoder {
 public:
  ProtoTestEncoder& VarInt(uint64_t v) {
    while (v >= 0x80) {
      s_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    s_.push_back(static_cast<char>(v));
    return *this;
  }
  ProtoTestEncoder& Tag(uint32_t field, uint32_t wire_type) {
    return VarInt((static_cast<uint64_t>(field) << 3) | wire_type);
  }
  ProtoTestEncoder& VarIntField(uint32_t field, uint64_t v) {
    return Tag(field, 0).VarInt(v);
  }
  ProtoTestEncoder& Fixed64Field(uint32_t field, uint64_t v) {
    Tag(field, 1);
    for (int i = 0; i < 8; i++)
      s_.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  ProtoTestEncoder& Fixed32Field(uint32_t field, uint32_t v) {
    Tag(field, 5);
    for (int i = 0; i < 4; i++)
      s_.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  ProtoTestEncoder& BytesField(uint32_t field, const std::string& b) {
    Tag(field, 2).VarInt(b.size());
    s_ += b;
    return *this;
  }
  ProtoTestEncoder& StartGroup(uint32_t field) { return Tag(field, 3); }
  ProtoTestEncoder& EndGroup(uint32_t field) { return Tag(field, 4); }
  // A group in the input: start tag, |inner|, end tag.
  ProtoTestEncoder& Group(uint32_t field, const ProtoTestEncoder& inner) {
    return StartGroup(field).Raw(inner.str()).EndGroup(field);
  }
  // The same message in the expected output: length-delimited.
  ProtoTestEncoder& Nested(uint32_t field, const ProtoTestEncoder& inner) {
    return BytesField(field, inner.str());
  }
  ProtoTestEncoder& Raw(const std::string& b) {
    s_ += b;
    return *this;
  }
  ProtoTestEncoder& Bytes(std::initializer_list<uint8_t> b) {
    for (uint8_t c : b)
      s_.push_back(static_cast<char>(c));
    return *this;
  }

  const std::string& str() const { return s_; }
  const uint8_t* data() const {
    return reinterpret_cast<const uint8_t*>(s_.data());
  }
  size_t size() const { return s_.size(); }

 private:
  std::string s_;
};

}  // namespace encoding
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_ENCODING_TEST_PROTO_TEST_ENCODER_H_
