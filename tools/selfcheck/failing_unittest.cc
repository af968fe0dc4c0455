/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// A test that always fails: tools/test --self-check runs it and expects the
// result checker to report failure. Never linked into ringtrace_unittests.

#include <gtest/gtest.h>

namespace {

TEST(SelfCheck, DeliberatelyFails) {
  EXPECT_EQ(1, 2) << "this failure is expected by tools/test --self-check";
}

TEST(SelfCheck, Passes) {
  EXPECT_EQ(2, 2);
}

}  // namespace
