/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/byte_order.h"

#include <gtest/gtest.h>

#include <string>

namespace ringtrace {
namespace base {
namespace {

TEST(ByteOrderTest, LittleEndianLayout) {
  uint8_t b[8] = {};
  PutU16(b, 0x1234);
  EXPECT_EQ(b[0], 0x34);
  EXPECT_EQ(b[1], 0x12);
  PutU32(b, 0x12345678u);
  EXPECT_EQ(b[0], 0x78);
  EXPECT_EQ(b[1], 0x56);
  EXPECT_EQ(b[2], 0x34);
  EXPECT_EQ(b[3], 0x12);
  PutU64(b, 0x0102030405060708ull);
  for (int i = 0; i < 8; i++)
    EXPECT_EQ(b[i], 8 - i) << i;
}

TEST(ByteOrderTest, RoundTripsExtremesAndUnalignedOffsets) {
  uint8_t b[16] = {};
  for (size_t off = 0; off < 8; off++) {
    for (uint32_t v : {0u, 1u, 0x80u, 0xffu, 0x8000'0000u, 0xffff'ffffu}) {
      PutU32(b + off, v);
      EXPECT_EQ(GetU32(b + off), v);
    }
    for (uint64_t v : {uint64_t{0}, uint64_t{0xffff'ffff},
                       uint64_t{0x1'0000'0000}, ~uint64_t{0}}) {
      PutU64(b + off, v);
      EXPECT_EQ(GetU64(b + off), v);
    }
    PutU16(b + off, 0xffff);
    EXPECT_EQ(GetU16(b + off), 0xffff);
  }
}

TEST(ByteOrderTest, AppendMatchesPut) {
  std::string s = "x";
  AppendU16(&s, 0xbeef);
  AppendU32(&s, 0xdeadbeefu);
  ASSERT_EQ(s.size(), 7u);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data());
  EXPECT_EQ(p[0], 'x');
  EXPECT_EQ(GetU16(p + 1), 0xbeef);
  EXPECT_EQ(GetU32(p + 3), 0xdeadbeefu);
  EXPECT_EQ(p[1], 0xef);  // Low byte first.
}

}  // namespace
}  // namespace base
}  // namespace ringtrace
