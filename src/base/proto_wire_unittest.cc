/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/proto_wire.h"

#include <gtest/gtest.h>

#include <vector>

namespace ringtrace {
namespace base {
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

}  // namespace
}  // namespace base
}  // namespace ringtrace
