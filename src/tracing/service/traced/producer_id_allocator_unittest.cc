/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/producer_id_allocator.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace ringtrace {
namespace traced {
namespace {

// A scan that reports the ids in |held| as kept by a buffer.
ProducerIdAllocator::HeldScan HeldBy(const std::set<uint32_t>* held) {
  return [held](std::vector<bool>* out) {
    for (uint32_t id : *held)
      (*out)[id] = true;
  };
}

TEST(ProducerIdAllocatorTest, FreshIdsFirstInOrder) {
  ProducerIdAllocator ids;
  const std::set<uint32_t> none;
  bool reused = true;
  EXPECT_EQ(ids.Allocate(HeldBy(&none), &reused), 1u);
  EXPECT_FALSE(reused);
  ids.Release(1);
  // A departed id is not reused while fresh ones remain.
  EXPECT_EQ(ids.Allocate(HeldBy(&none), &reused), 2u);
  EXPECT_FALSE(reused);
  EXPECT_EQ(ids.scans(), 0u);
}

// Once every id was used, a departed id comes back only when no buffer
// holds it; an id held comes back after the buffer let it go.
TEST(ProducerIdAllocatorTest, ReusesOnlyIdsNoBufferHolds) {
  ProducerIdAllocator ids;
  ids.set_next_for_testing(kMaxProducerID - 1);
  std::set<uint32_t> held;
  bool reused = false;
  const uint32_t a = ids.Allocate(HeldBy(&held), &reused);
  const uint32_t b = ids.Allocate(HeldBy(&held), &reused);
  ASSERT_EQ(a, kMaxProducerID - 1);
  ASSERT_EQ(b, kMaxProducerID);
  held.insert(a);  // a's packets are still in a buffer
  ids.Release(a);
  ids.Release(b);
  EXPECT_EQ(ids.Allocate(HeldBy(&held), &reused), b);
  EXPECT_TRUE(reused);
  EXPECT_EQ(ids.Allocate(HeldBy(&held), &reused), 0u) << "a is held";
  held.clear();  // the buffer dropped a's sequences
  // The next scan is due after kRecycleScanInterval allocations: the ones
  // before it find nothing without scanning.
  const uint64_t scans = ids.scans();
  uint32_t got = 0;
  for (uint32_t i = 0; i < ProducerIdAllocator::kRecycleScanInterval && !got;
       ++i) {
    got = ids.Allocate(HeldBy(&held), &reused);
  }
  EXPECT_EQ(got, a);
  EXPECT_TRUE(reused);
  EXPECT_EQ(ids.scans(), scans + 1);
}

// A departure makes the next allocation scan at once (the departed id may
// be free already); without one, a failed allocation does not rescan.
TEST(ProducerIdAllocatorTest, ADepartureTriggersTheNextScan) {
  ProducerIdAllocator ids;
  ids.set_next_for_testing(kMaxProducerID + 1);  // every id used
  const std::set<uint32_t> none;
  bool reused = false;
  EXPECT_EQ(ids.Allocate(HeldBy(&none), &reused), 0u);
  EXPECT_EQ(ids.scans(), 0u) << "nothing departed: nothing to scan for";
  ids.Release(7);
  EXPECT_EQ(ids.Allocate(HeldBy(&none), &reused), 7u);
  EXPECT_EQ(ids.scans(), 1u);
  EXPECT_EQ(ids.Allocate(HeldBy(&none), &reused), 0u);
  EXPECT_EQ(ids.scans(), 1u);
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
