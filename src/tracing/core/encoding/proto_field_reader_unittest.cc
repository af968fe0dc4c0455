/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// FieldReader (include/ringtrace/proto_field_reader.h) on bytes built by
// hand with ProtoTestEncoder: every wire type and value conversion, and
// every way untrusted bytes can be malformed (each ends the walk with
// ok() false, never reading past the input).

#include "ringtrace/proto_field_reader.h"

#include <gtest/gtest.h>
#include <string.h>

#include <limits>
#include <string>
#include <vector>

#include "src/tracing/core/encoding/test/proto_test_encoder.h"

namespace ringtrace {
namespace encoding {
namespace {

TEST(FieldReaderTest, ReadsEveryWireTypeAndConversion) {
  double d = -2.5;
  uint64_t d_bits;
  memcpy(&d_bits, &d, sizeof(d));
  float f = 1.25f;
  uint32_t f_bits;
  memcpy(&f_bits, &f, sizeof(f));
  ProtoTestEncoder e;
  e.VarIntField(1, 300)
      .VarIntField(2, static_cast<uint64_t>(int64_t{-5}))
      .VarIntField(3, 9)  // sint: zigzag(-5) = 9
      .Fixed64Field(4, d_bits)
      .Fixed32Field(5, f_bits)
      .BytesField(6, "text")
      .VarIntField(536870911, 1);
  FieldReader reader(e.str());
  Field field;
  std::vector<uint32_t> ids;
  while (reader.Next(&field)) {
    ids.push_back(field.id);
    switch (field.id) {
      case 1:
        EXPECT_EQ(field.wire_type, kWireVarInt);
        EXPECT_EQ(field.as_uint32(), 300u);
        break;
      case 2:
        EXPECT_EQ(field.as_int64(), -5);
        EXPECT_EQ(field.as_int32(), -5);
        break;
      case 3:
        EXPECT_EQ(field.as_sint32(), -5);
        EXPECT_EQ(field.as_sint64(), -5);
        break;
      case 4:
        EXPECT_EQ(field.wire_type, kWireFixed64);
        EXPECT_EQ(field.as_double(), -2.5);
        break;
      case 5:
        EXPECT_EQ(field.wire_type, kWireFixed32);
        EXPECT_EQ(field.as_float(), 1.25f);
        break;
      case 6:
        EXPECT_EQ(field.wire_type, kWireLengthDelimited);
        EXPECT_EQ(field.as_string(), "text");
        break;
      case 536870911:
        EXPECT_TRUE(field.as_bool());
        break;
    }
  }
  EXPECT_TRUE(reader.ok());
  EXPECT_EQ(ids, (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 536870911}));
  EXPECT_FALSE(reader.Next(&field)) << "stays at the end";
}

TEST(FieldReaderTest, SintConversionsCoverTheExtremes) {
  Field field;
  field.int_value = std::numeric_limits<uint64_t>::max();  // zigzag(min)
  EXPECT_EQ(field.as_sint64(), std::numeric_limits<int64_t>::min());
  field.int_value = std::numeric_limits<uint64_t>::max() - 1;
  EXPECT_EQ(field.as_sint64(), std::numeric_limits<int64_t>::max());
}

TEST(FieldReaderTest, MalformedInputEndsTheWalk) {
  struct Case {
    const char* what;
    std::string bytes;
  };
  std::vector<Case> cases = {
      {"truncated tag", ProtoTestEncoder().Bytes({0x80}).str()},
      {"field 0", ProtoTestEncoder().Tag(0, kWireVarInt).VarInt(1).str()},
      {"tag beyond 2^29 - 1",
       ProtoTestEncoder().VarInt(uint64_t{1} << 29 << 3).VarInt(1).str()},
      {"truncated varint", ProtoTestEncoder().Tag(1, 0).Bytes({0xff}).str()},
      {"11-byte varint", ProtoTestEncoder()
                             .Tag(1, 0)
                             .Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0xff, 0xff, 0x01})
                             .str()},
      {"truncated fixed64", ProtoTestEncoder().Tag(1, 1).Bytes({1, 2}).str()},
      {"truncated fixed32", ProtoTestEncoder().Tag(1, 5).Bytes({1}).str()},
      {"length past the end",
       ProtoTestEncoder().Tag(1, 2).VarInt(5).Raw("abc").str()},
      {"huge length", ProtoTestEncoder().Tag(1, 2).VarInt(~uint64_t{0}).str()},
      {"group", ProtoTestEncoder().StartGroup(1).EndGroup(1).str()},
      {"wire type 6", ProtoTestEncoder().Tag(1, 6).str()},
      {"wire type 7", ProtoTestEncoder().Tag(1, 7).str()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    // A good field first: it is read, then the walk stops at the bad one.
    const std::string bytes =
        ProtoTestEncoder().VarIntField(2, 7).str() + c.bytes;
    // A private copy of exactly the input, so ASan sees any over-read.
    std::vector<uint8_t> copy(bytes.begin(), bytes.end());
    FieldReader reader(copy.data(), copy.size());
    Field field;
    ASSERT_TRUE(reader.Next(&field));
    EXPECT_EQ(field.id, 2u);
    EXPECT_FALSE(reader.Next(&field));
    EXPECT_FALSE(reader.ok());
    EXPECT_FALSE(reader.Next(&field));
  }
}

TEST(FieldReaderTest, EmptyInputIsOk) {
  FieldReader reader{std::string_view()};
  Field field;
  EXPECT_FALSE(reader.Next(&field));
  EXPECT_TRUE(reader.ok());
}

}  // namespace
}  // namespace encoding
}  // namespace ringtrace
