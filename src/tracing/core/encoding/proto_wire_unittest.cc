/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/proto_wire.h"

#include <gtest/gtest.h>

#include <vector>

namespace ringtrace {
namespace encoding {
namespace {

TEST(ProtoWireTest, TagsOfEveryWireType) {
  EXPECT_EQ(MakeTag(1, kWireLengthDelimited), 0x0au);  // Trace.packet
  EXPECT_EQ(MakeTag(11, kWireStartGroup), 0x5bu);
  EXPECT_EQ(MakeTag(11, kWireEndGroup), 0x5cu);
  EXPECT_EQ(MakeTag(kMaxFieldId, kWireFixed32), 0xfffffffdu);
}

TEST(ProtoWireTest, VarIntSizeMatchesEncodingAtEveryBoundary) {
  uint8_t buf[kMaxVarIntSize + 1];
  for (uint32_t bits = 0; bits <= 64; bits++) {
    for (int delta = -1; delta <= 0; delta++) {
      const uint64_t v =
          bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) + delta;
      const uint8_t* end = EncodeVarInt(v, buf);
      EXPECT_EQ(static_cast<uint32_t>(end - buf), VarIntSize(v)) << v;
      EXPECT_LE(VarIntSize(v), kMaxVarIntSize);
    }
  }
  EXPECT_EQ(VarIntSize(0), 1u);
  EXPECT_EQ(VarIntSize(127), 1u);
  EXPECT_EQ(VarIntSize(128), 2u);
  EXPECT_EQ(VarIntSize(UINT64_MAX), 10u);
}

TEST(ProtoWireTest, EncodesLittleEndianBase128) {
  uint8_t buf[kMaxVarIntSize];
  const uint8_t* end = EncodeVarInt(300, buf);
  ASSERT_EQ(end - buf, 2);
  EXPECT_EQ(buf[0], 0xac);
  EXPECT_EQ(buf[1], 0x02);
}

TEST(ProtoWireTest, DecodeRoundTripsEveryBoundary) {
  uint8_t buf[kMaxVarIntSize];
  for (uint32_t bits = 0; bits <= 64; bits++) {
    for (int delta = -1; delta <= 0; delta++) {
      const uint64_t v =
          bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) + delta;
      const uint8_t* end = EncodeVarInt(v, buf);
      uint64_t got = 0;
      uint32_t len = 0;
      ASSERT_EQ(DecodeVarInt(buf, end, kMaxVarIntSize, &got, &len),
                WireError::kNone);
      EXPECT_EQ(got, v);
      EXPECT_EQ(len, static_cast<uint32_t>(end - buf));
    }
  }
}

TEST(ProtoWireTest, DecodeTellsTruncatedFromTooLong) {
  const uint8_t cont[kMaxVarIntSize + 1] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                            0x80, 0x80, 0x80, 0x80, 0x80};
  uint64_t v = 7;
  uint32_t len = 7;
  // Ends before its last byte, shorter than the bound: truncated.
  EXPECT_EQ(DecodeVarInt(cont, cont + 3, kMaxVarIntSize, &v, &len),
            WireError::kTruncated);
  EXPECT_EQ(DecodeVarInt(cont, cont, kMaxVarIntSize, &v, &len),
            WireError::kTruncated);
  // The bound reached without a last byte: too long, whatever follows.
  EXPECT_EQ(DecodeVarInt(cont, cont + sizeof(cont), kMaxVarIntSize, &v, &len),
            WireError::kVarIntTooLong);
  EXPECT_EQ(DecodeVarInt(cont, cont + 5, kMaxTagSize, &v, &len),
            WireError::kVarIntTooLong);
  // Outputs are untouched on error.
  EXPECT_EQ(v, 7u);
  EXPECT_EQ(len, 7u);
  // A tag bound accepts a 5-byte tag and nothing longer.
  const uint8_t tag5[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
  ASSERT_EQ(DecodeVarInt(tag5, tag5 + 5, kMaxTagSize, &v, &len),
            WireError::kNone);
  EXPECT_EQ(v, 0xffffffffu);
  EXPECT_EQ(len, 5u);
}

}  // namespace
}  // namespace encoding
}  // namespace ringtrace
