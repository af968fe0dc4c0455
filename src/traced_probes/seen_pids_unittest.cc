/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/seen_pids.h"

#include <gtest/gtest.h>

#include <vector>

namespace ringtrace {
namespace probes {
namespace {

TEST(SeenPidsTest, EverySubscriberGetsEachTidOnceUntilItTakesIt) {
  SeenPids seen;
  int woken_a = 0;
  int woken_b = 0;
  const SeenPids::Subscriber a = seen.Subscribe([&] { woken_a++; });
  const SeenPids::Subscriber b = seen.Subscribe(nullptr);
  seen.SetWaker(b, [&] { woken_b++; });
  EXPECT_NE(a, b);
  EXPECT_EQ(seen.subscribers(), 2u);
  seen.Offer({7, 3, 7, 0, -4});
  seen.Offer({3});  // pending already: no wake
  EXPECT_EQ(woken_a, 1);
  EXPECT_EQ(woken_b, 1);
  std::vector<int32_t> got;
  std::vector<int32_t> renamed;
  uint64_t dropped = 0;
  seen.Take(a, &got, &renamed, &dropped);
  EXPECT_EQ(got, (std::vector<int32_t>{3, 7}));
  EXPECT_EQ(dropped, 0u);
  seen.Take(a, &got, &renamed, &dropped);
  EXPECT_TRUE(got.empty());
  // b has not taken its own yet.
  seen.Offer({9});
  seen.Take(b, &got, &renamed, &dropped);
  EXPECT_EQ(got, (std::vector<int32_t>{3, 7, 9}));
  seen.Unsubscribe(a);
  seen.Offer({11});
  EXPECT_EQ(woken_a, 2);  // the {9} offer; none after Unsubscribe
  seen.Take(a, &got, &renamed, &dropped);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(seen.subscribers(), 1u);
}

TEST(SeenPidsTest, AFullQueueDropsAndCounts) {
  SeenPids seen;
  const SeenPids::Subscriber s = seen.Subscribe(nullptr);
  std::vector<int32_t> many;
  for (int32_t tid = 1; tid <= static_cast<int32_t>(kMaxPendingTids) + 100;
       tid++)
    many.push_back(tid);
  seen.Offer(many);
  std::vector<int32_t> got;
  std::vector<int32_t> renamed;
  uint64_t dropped = 0;
  seen.Take(s, &got, &renamed, &dropped);
  EXPECT_EQ(got.size(), kMaxPendingTids);
  EXPECT_EQ(dropped, 100u);
  dropped = 0;
  seen.Offer({5});
  seen.Take(s, &got, &renamed, &dropped);
  EXPECT_EQ(got, (std::vector<int32_t>{5}));
  EXPECT_EQ(dropped, 0u);
}

// A renamed tid is pending and marked, whether or not it was pending
// already; marking one that was pending wakes the subscriber (it must
// describe it again), marking it twice does not. Renamed tids count
// against the same bound.
TEST(SeenPidsTest, RenamedTidsAreMarkedUntilTaken) {
  SeenPids seen;
  int woken = 0;
  const SeenPids::Subscriber s = seen.Subscribe([&] { woken++; });
  seen.Offer({4, 6});
  EXPECT_EQ(woken, 1);
  seen.OfferRenamed({6, 8, 0});
  EXPECT_EQ(woken, 2);
  seen.OfferRenamed({8});
  seen.Offer({8});
  EXPECT_EQ(woken, 2);
  std::vector<int32_t> got;
  std::vector<int32_t> renamed;
  uint64_t dropped = 0;
  seen.Take(s, &got, &renamed, &dropped);
  EXPECT_EQ(got, (std::vector<int32_t>{4, 6, 8}));
  EXPECT_EQ(renamed, (std::vector<int32_t>{6, 8}));
  seen.Offer({6});
  seen.Take(s, &got, &renamed, &dropped);
  EXPECT_EQ(got, (std::vector<int32_t>{6}));
  EXPECT_TRUE(renamed.empty());

  std::vector<int32_t> many;
  for (int32_t tid = 1; tid <= static_cast<int32_t>(kMaxPendingTids) + 3; tid++)
    many.push_back(tid);
  seen.OfferRenamed(many);
  seen.Take(s, &got, &renamed, &dropped);
  EXPECT_EQ(got.size(), kMaxPendingTids);
  EXPECT_EQ(renamed, got);
  EXPECT_EQ(dropped, 3u);
}

}  // namespace
}  // namespace probes
}  // namespace ringtrace
