/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/user_limits.h"

#include <gtest/gtest.h>

namespace ringtrace {
namespace traced {
namespace {

constexpr uint32_t kServiceUid = 990;

TEST(UserLimitsTest, OtherUsersGetTheLimitsAsGiven) {
  UserLimits limits;
  limits.privileged_factor = 4;
  const UserLimits got = limits.For(1000, kServiceUid);
  EXPECT_EQ(got.max_producers, limits.max_producers);
  EXPECT_EQ(got.max_ring_bytes, limits.max_ring_bytes);
  EXPECT_EQ(got.max_consumers, limits.max_consumers);
  EXPECT_EQ(got.max_sessions, limits.max_sessions);
  EXPECT_EQ(got.max_buffer_bytes, limits.max_buffer_bytes);
}

TEST(UserLimitsTest, RootAndTheServiceUidAreScaled) {
  UserLimits limits;
  limits.privileged_factor = 4;
  for (uint32_t uid : {0u, kServiceUid}) {
    const UserLimits got = limits.For(uid, kServiceUid);
    EXPECT_EQ(got.max_producers, 4 * limits.max_producers) << uid;
    EXPECT_EQ(got.max_ring_bytes, 4 * limits.max_ring_bytes) << uid;
    EXPECT_EQ(got.max_consumers, 4 * limits.max_consumers) << uid;
    EXPECT_EQ(got.max_sessions, 4 * limits.max_sessions) << uid;
    EXPECT_EQ(got.max_buffer_bytes, 4 * limits.max_buffer_bytes) << uid;
  }
  // The default factor, 1: everyone the same.
  EXPECT_EQ(UserLimits().For(0, kServiceUid).max_producers,
            UserLimits().max_producers);
}

TEST(UserLimitsTest, FactorZeroLiftsThemAndScalingSaturates) {
  UserLimits limits;
  limits.privileged_factor = 0;
  EXPECT_EQ(limits.For(0, kServiceUid).max_sessions, UserLimits::kUnlimited);
  EXPECT_EQ(limits.For(1, kServiceUid).max_sessions, limits.max_sessions);
  limits.privileged_factor = 1024;
  limits.max_ring_bytes = UserLimits::kUnlimited / 2;
  EXPECT_EQ(limits.For(0, kServiceUid).max_ring_bytes, UserLimits::kUnlimited);
}

TEST(UserLimitsTest, ZeroLimitsAreInvalidAndMessagesNameTheFlag) {
  UserLimits limits;
  EXPECT_TRUE(limits.Validate().ok());
  limits.max_consumers = 0;
  EXPECT_FALSE(limits.Validate().ok());
  EXPECT_EQ(UserLimitMessage(1000, "3 sessions are active", 3,
                             "max-sessions-per-uid"),
            "uid 1000: 3 sessions are active (per-user limit 3; ringtraced "
            "--max-sessions-per-uid)");
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
