/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/shm_ring/writer_id_allocator.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace ringtrace {
namespace shm_ring {
namespace {

TEST(WriterIdAllocatorTest, HandsOutEveryIdOnceThenFailsForGood) {
  WriterIdAllocator a;
  std::vector<bool> seen(0x10000, false);
  WriterID id = 0;
  for (uint32_t i = 0; i < 0xffff; i++) {
    ASSERT_TRUE(a.Allocate(&id)) << i;
    ASSERT_NE(id, 0u);
    ASSERT_FALSE(seen[id]) << id;
    seen[id] = true;
  }
  EXPECT_EQ(a.allocated(), 0xffffu);
  // Exhausted: never wraps around to an ID handed out before.
  for (int i = 0; i < 3; i++) {
    id = 1234;
    EXPECT_FALSE(a.Allocate(&id));
    EXPECT_EQ(id, 1234u);
  }
  EXPECT_EQ(a.allocated(), 0xffffu);
}

TEST(WriterIdAllocatorTest, ConcurrentAllocationsAreUnique) {
  WriterIdAllocator a;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 0xffff / kThreads + 100;  // more than there are
  std::vector<std::vector<WriterID>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&a, &got, t] {
      WriterID id;
      for (int i = 0; i < kPerThread; i++) {
        if (a.Allocate(&id))
          got[t].push_back(id);
      }
    });
  }
  for (auto& th : threads)
    th.join();
  std::vector<int> count(0x10000, 0);
  size_t total = 0;
  for (const auto& v : got) {
    for (WriterID id : v)
      count[id]++;
    total += v.size();
  }
  EXPECT_EQ(total, 0xffffu);
  EXPECT_EQ(count[0], 0);
  for (uint32_t id = 1; id <= 0xffff; id++)
    ASSERT_EQ(count[id], 1) << id;
}

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
