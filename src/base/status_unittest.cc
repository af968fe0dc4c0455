/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/status.h"

#include <gtest/gtest.h>

#include <string>

#include "ringtrace/logging.h"
#include "src/base/checked_math.h"

namespace ringtrace {
namespace base {
namespace {

TEST(StatusTest, OkAndError) {
  Status ok = OkStatus();
  EXPECT_TRUE(ok.ok());
  EXPECT_TRUE(ok.message().empty());
  Status err = ErrStatus("bad size %u at %d", 7u, 12);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message(), "bad size 7 at 12");
}

TEST(StatusTest, LongMessagesAreKeptWhole) {
  const std::string long_part(3000, 'x');
  const Status s = ErrStatus("start %s end %d", long_part.c_str(), 7);
  EXPECT_EQ(s.message(), "start " + long_part + " end 7");
  const std::string huge(100 * 1024, 'y');
  EXPECT_EQ(ErrStatus("%s", huge.c_str()).message().size(), 64u * 1024);
  EXPECT_EQ(ErrStatus("short %d", 1).message(), "short 1");
}

TEST(CheckedMathTest, AddMulSubDetectOverflow) {
  uint32_t out = 0;
  EXPECT_TRUE(CheckedAdd<uint32_t>(0xfffffffe, 1, &out));
  EXPECT_EQ(out, 0xffffffffu);
  EXPECT_FALSE(CheckedAdd<uint32_t>(0xffffffff, 1, &out));
  EXPECT_FALSE(CheckedMul<uint32_t>(0x10000, 0x10000, &out));
  EXPECT_TRUE(CheckedMul<uint32_t>(0x10000, 0xffff, &out));
  EXPECT_EQ(out, 0xffff0000u);
  EXPECT_FALSE(CheckedSub<uint32_t>(1, 2, &out));
}

TEST(CheckedMathTest, RangeInBounds) {
  EXPECT_TRUE(RangeInBounds(0, 10, 10));
  EXPECT_TRUE(RangeInBounds(10, 0, 10));
  EXPECT_FALSE(RangeInBounds(11, 0, 10));
  EXPECT_FALSE(RangeInBounds(5, 6, 10));
  EXPECT_FALSE(RangeInBounds(1, SIZE_MAX, 10));
}

TEST(CheckedMathTest, AlignAndPowerOfTwo) {
  EXPECT_EQ(AlignUp(0, 4), 0u);
  EXPECT_EQ(AlignUp(1, 4), 4u);
  EXPECT_EQ(AlignUp(8, 4), 8u);
  EXPECT_TRUE(IsPowerOfTwo(256));
  EXPECT_FALSE(IsPowerOfTwo(0));
  EXPECT_FALSE(IsPowerOfTwo(384));
}

TEST(LoggingDeathTest, CheckAborts) {
  EXPECT_DEATH(RT_CHECK(1 + 1 == 3), "RT_CHECK");
}

}  // namespace
}  // namespace base
}  // namespace ringtrace
