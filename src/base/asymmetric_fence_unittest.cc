/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/asymmetric_fence.h"

#include <sched.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "gtest/gtest.h"

namespace ringtrace {
namespace base {
namespace {

// The store-buffering litmus test of the header, round after round: the
// hot thread stores x then loads y across the light fence, the rare thread
// stores y then loads x across the heavy one. Both loads reading 0 is the
// outcome the fences forbid. Rounds start together on a spin barrier.
struct LitmusCounts {
  uint64_t rounds = 0;
  uint64_t only_hot_saw = 0;   // r1 == 1, r2 == 0: the rare side missed x
  uint64_t only_rare_saw = 0;  // r1 == 0, r2 == 1: the hot side missed y
  uint64_t both_saw = 0;
  uint64_t neither_saw = 0;  // forbidden
};

// A spin wait's step: yields now and then, so that a round also ends when
// the two threads share one CPU (a loaded machine).
void Pause() {
  thread_local uint32_t spins = 0;
  if (++spins % 256 == 0)
    sched_yield();
}

LitmusCounts RunLitmus(uint64_t max_rounds) {
  std::atomic<uint32_t> x{0};
  std::atomic<uint32_t> y{0};
  // Round number each side has reached; a side waits for the other's.
  std::atomic<uint64_t> hot_round{0};
  std::atomic<uint64_t> rare_round{0};
  std::atomic<uint32_t> r1{0};
  std::atomic<bool> stop{false};
  LitmusCounts counts;

  std::thread hot([&] {
    for (uint64_t round = 1;; round++) {
      // Acquire: pairs with the rare side's release below, which orders
      // its reset of x and y (and its stop) before this round.
      while (rare_round.load(std::memory_order_acquire) < round - 1)
        Pause();
      if (stop.load(std::memory_order_relaxed))
        return;
      x.store(1, std::memory_order_relaxed);
      AsymmetricLightFence();
      r1.store(y.load(std::memory_order_relaxed), std::memory_order_relaxed);
      // Release: publishes r1 to the rare side's acquire load.
      hot_round.store(round, std::memory_order_release);
    }
  });
  // The rare side starts each round after a random delay, so that either
  // side's store may come first: without it the rare side, which does not
  // wait to notice the new round, nearly always stores first, and under a
  // sanitizer's slowdown always does.
  uint64_t random = 0x9e3779b97f4a7c15ull;
  for (uint64_t round = 1; round <= max_rounds; round++) {
    random ^= random << 13;
    random ^= random >> 7;
    random ^= random << 17;
    for (uint64_t spin = random % 4096; spin != 0; spin--)
      std::atomic_signal_fence(std::memory_order_seq_cst);  // kept, not folded
    y.store(1, std::memory_order_seq_cst);
    AsymmetricHeavyFence();
    const uint32_t r2 = x.load(std::memory_order_relaxed);
    // Acquire: pairs with the hot side's release of this round.
    while (hot_round.load(std::memory_order_acquire) < round)
      Pause();
    const uint32_t seen_by_hot = r1.load(std::memory_order_relaxed);
    counts.rounds++;
    if (seen_by_hot && r2)
      counts.both_saw++;
    else if (seen_by_hot)
      counts.only_hot_saw++;
    else if (r2)
      counts.only_rare_saw++;
    else
      counts.neither_saw++;
    x.store(0, std::memory_order_relaxed);
    y.store(0, std::memory_order_relaxed);
    const bool done = round == max_rounds ||
                      (counts.only_hot_saw > 0 && counts.only_rare_saw > 0 &&
                       counts.rounds >= 20000);
    if (done)
      stop.store(true, std::memory_order_relaxed);
    // Release: the resets (and the stop) before the hot side's next round.
    rare_round.store(round, std::memory_order_release);
    if (done)
      break;
  }
  hot.join();
  return counts;
}

TEST(AsymmetricFenceTest, StoreBufferingOutcomeNeverSeen) {
  EXPECT_TRUE(EnableAsymmetricFences())
      << "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) unavailable: the "
         "fences fall back to seq_cst fences (still correct)";
  const LitmusCounts counts = RunLitmus(500000);
  printf(
      "store buffering: %llu rounds, only the hot side saw %llu, only the "
      "rare side %llu, both %llu, neither %llu\n",
      static_cast<unsigned long long>(counts.rounds),
      static_cast<unsigned long long>(counts.only_hot_saw),
      static_cast<unsigned long long>(counts.only_rare_saw),
      static_cast<unsigned long long>(counts.both_saw),
      static_cast<unsigned long long>(counts.neither_saw));
  EXPECT_EQ(counts.neither_saw, 0u);
  // Both orders of the race were reached: each side's load was the one
  // that saw the other's store at least once.
  EXPECT_GT(counts.only_hot_saw, 0u) << counts.rounds << " rounds";
  EXPECT_GT(counts.only_rare_saw, 0u) << counts.rounds << " rounds";
}

// A forked child does not share the parent's registration (its memory map
// is new); the heavy fence registers again there instead of failing.
TEST(AsymmetricFenceTest, HeavyFenceWorksInAForkedChild) {
  EnableAsymmetricFences();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    AsymmetricHeavyFence();
    AsymmetricHeavyFence();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace base
}  // namespace ringtrace
