/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/shm_ring/shm_region.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"

namespace ringtrace {
namespace shm_ring {
namespace {

TEST(SharedRingRegionTest, MemfdRingIsSharedAndZeroFilled) {
  base::Status status;
  auto region = SharedRingRegion::CreateMemfd(RingGeometry(512, 4), &status);
  ASSERT_NE(region, nullptr) << status.message();
  EXPECT_TRUE(status.ok());
  EXPECT_GE(region->fd(), 0);
  EXPECT_EQ(region->size(), 256u + 4 * 512);
  for (size_t i = 0; i < region->size(); i++)
    ASSERT_EQ(region->base()[i], 0) << i;

  // A second mapping of the same fd (as the service would make) sees what
  // the writer publishes.
  void* other = mmap(nullptr, region->size(), PROT_READ | PROT_WRITE,
                     MAP_SHARED, region->fd(), 0);
  ASSERT_NE(other, MAP_FAILED);
  RingWriter::Options opts;
  opts.writer_id = 3;
  RingWriter writer(region->view(), opts);
  RingWriter::Span span;
  ASSERT_TRUE(writer.BeginPacket(&span));
  memcpy(span.wptr, "shared", 6);
  writer.EndPacket(span.wptr + 6);
  ASSERT_TRUE(writer.Flush(nullptr));

  TestRingReader reader(
      RingView(static_cast<uint8_t*>(other), RingGeometry(512, 4)));
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].fragments, std::vector<std::string>{"shared"});
  munmap(other, region->size());
}

TEST(SharedRingRegionTest, RejectsBadGeometryAndMemory) {
  base::Status status;
  EXPECT_EQ(SharedRingRegion::CreateMemfd(RingGeometry(300, 4), &status),
            nullptr);
  EXPECT_FALSE(status.ok());
  void* mem = aligned_alloc(64, 4096);
  EXPECT_EQ(SharedRingRegion::Wrap(mem, 4096, RingGeometry(256, 64), &status),
            nullptr);  // too small
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(SharedRingRegion::Wrap(static_cast<uint8_t*>(mem) + 8, 2048,
                                   RingGeometry(256, 4), &status),
            nullptr);  // misaligned
  auto ok = SharedRingRegion::Wrap(mem, 4096, RingGeometry(256, 8), &status);
  ASSERT_NE(ok, nullptr);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(ok->fd(), -1);
  EXPECT_EQ(ok->view().chunk(0), static_cast<uint8_t*>(mem) + 256);
  ok.reset();
  free(mem);
}

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
