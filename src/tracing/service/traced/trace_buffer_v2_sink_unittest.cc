/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/trace_buffer_v2_sink.h"

#include <gtest/gtest.h>

#include <type_traits>

namespace ringtrace {
namespace traced {
namespace {

using shm_ring::ChunkFlags;
using trace_buffer::AdmissionFlags;
using trace_buffer::V1ChunkFlags;

// The flag vocabularies do not convert into each other, nor from integers:
// the only way across is a named mapping.
static_assert(!std::is_convertible<ChunkFlags, AdmissionFlags>::value, "");
static_assert(!std::is_convertible<AdmissionFlags, ChunkFlags>::value, "");
static_assert(!std::is_convertible<V1ChunkFlags, AdmissionFlags>::value, "");
static_assert(!std::is_convertible<AdmissionFlags, V1ChunkFlags>::value, "");
static_assert(!std::is_convertible<uint32_t, ChunkFlags>::value, "");
static_assert(!std::is_convertible<uint32_t, AdmissionFlags>::value, "");
static_assert(!std::is_convertible<uint8_t, V1ChunkFlags>::value, "");
static_assert(!std::is_convertible<ChunkFlags, uint32_t>::value, "");
static_assert(!std::is_constructible<AdmissionFlags, ChunkFlags>::value, "");

TEST(TraceBufferV2SinkTest, MapChunkFlagsMapsEachBitByName) {
  static_assert(
      MapChunkFlags(shm_ring::kNoChunkFlags) == trace_buffer::kNoAdmissionFlags,
      "");
  EXPECT_TRUE(MapChunkFlags(shm_ring::kFlagContinuesFromPrev) ==
              trace_buffer::kChunkContinuesFromPrev);
  EXPECT_TRUE(MapChunkFlags(shm_ring::kFlagContinuesOnNext) ==
              trace_buffer::kChunkContinuesOnNext);
  EXPECT_TRUE(MapChunkFlags(shm_ring::kFlagDataLoss) ==
              trace_buffer::kChunkDataLoss);
  EXPECT_TRUE(MapChunkFlags(ChunkFlags::FromBits(7u)) ==
              (trace_buffer::kChunkContinuesFromPrev |
               trace_buffer::kChunkContinuesOnNext |
               trace_buffer::kChunkDataLoss));
  // The vocabularies really differ: the same bit means different things.
  EXPECT_NE(MapChunkFlags(shm_ring::kFlagDataLoss).bits(),
            shm_ring::kFlagDataLoss.bits());
  EXPECT_NE(MapChunkFlags(shm_ring::kFlagContinuesFromPrev).bits(),
            shm_ring::kFlagContinuesFromPrev.bits());
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
