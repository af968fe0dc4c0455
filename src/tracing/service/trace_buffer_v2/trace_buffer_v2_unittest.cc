/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

#include <gtest/gtest.h>

namespace ringtrace {
namespace trace_buffer {
namespace {

TEST(TraceBufferV2Test, CreateRejectsZeroSize) {
  EXPECT_EQ(
      TraceBufferV2::Create(0, TraceBufferV2::OverwritePolicy::kOverwrite),
      nullptr);
  auto tb =
      TraceBufferV2::Create(4096, TraceBufferV2::OverwritePolicy::kOverwrite);
  ASSERT_NE(tb, nullptr);
  EXPECT_FALSE(tb->has_data());
}

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
