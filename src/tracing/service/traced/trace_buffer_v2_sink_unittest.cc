/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/trace_buffer_v2_sink.h"

#include <gtest/gtest.h>

#include <memory>
#include <type_traits>
#include <vector>

namespace ringtrace {
namespace traced {
namespace {

using shm_ring::ChunkFlags;
using trace_buffer::AdmissionFlags;
using trace_buffer::V1ChunkFlags;
using ChunkID = ::ringtrace::ChunkID;
using WriterID = ::ringtrace::WriterID;

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

// Offers one chunk of |n| 64-byte fragments; commits it if admitted (or
// aborts it, with |abort|). Returns whether it was admitted.
bool Offer(TraceBufferV2Sink* sink,
           WriterID writer,
           ChunkID chunk,
           size_t n,
           ChunkFlags flags,
           bool abort = false) {
  std::vector<uint32_t> sizes(n, 64);
  uint8_t* const dst = sink->BeginChunkFragments(
      1, trace_buffer::ClientIdentity(), writer, chunk, sizes.data(), n, flags);
  if (!dst)
    return false;
  std::fill(dst, dst + 64 * n, 0x08);
  if (abort)
    sink->AbortPendingChunk();
  else
    sink->CommitPendingChunk();
  return true;
}

// A full DISCARD buffer loses whole chunks; the sink counts their packets,
// each once, whether a chunk is offered again as it grows, continues a
// packet whose head the buffer holds, or was aborted before.
TEST(TraceBufferV2SinkTest, CountsEveryPacketOfDiscardedChunksOnce) {
  using trace_buffer::TraceBufferV2;
  std::unique_ptr<TraceBufferV2> buffer =
      TraceBufferV2::Create(4096, TraceBufferV2::OverwritePolicy::kDiscard);
  ASSERT_TRUE(buffer);
  TraceBufferV2Sink sink(buffer.get());
  const ChunkFlags cont =
      shm_ring::kFlagContinuesFromPrev | shm_ring::kFlagContinuesOnNext;
  // Writer 2's chunk is copied, then the copy is aborted: not in the buffer.
  ASSERT_TRUE(Offer(&sink, 2, 1, 3, shm_ring::kNoChunkFlags, /*abort=*/true));
  // Writer 1 fills the buffer: 3 fragments per chunk, the last one
  // continuing into the next chunk.
  ChunkID chunk = 1;
  ASSERT_TRUE(Offer(&sink, 1, chunk, 3, shm_ring::kFlagContinuesOnNext));
  while (Offer(&sink, 1, ++chunk, 3, cont)) {
    ASSERT_LT(chunk, 100u);
  }
  EXPECT_EQ(buffer->stats().chunks_discarded, 1u);
  // The first rejected chunk: the packet whose head the buffer holds plus
  // the two that begin in it.
  EXPECT_EQ(sink.packets_discarded(), 3u);
  // Offered again, grown to 5 fragments: 2 more.
  EXPECT_FALSE(Offer(&sink, 1, chunk, 5, cont));
  EXPECT_EQ(sink.packets_discarded(), 5u);
  // The next chunk continues a packet counted already: 2 more.
  EXPECT_FALSE(Offer(&sink, 1, chunk + 1, 3, cont));
  EXPECT_EQ(sink.packets_discarded(), 7u);
  // Writer 2's aborted chunk comes again: all 3 are lost.
  EXPECT_FALSE(Offer(&sink, 2, 1, 3, shm_ring::kNoChunkFlags));
  EXPECT_EQ(sink.packets_discarded(), 10u);
  EXPECT_EQ(buffer->stats().chunks_discarded, 4u);
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
