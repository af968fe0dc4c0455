/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_buffer_v2/page_warmer.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace ringtrace {
namespace trace_buffer {
namespace {

constexpr size_t kStep = PageWarmer::kStep;
constexpr size_t kPage = PageWarmer::kPageSize;
// Deadlines against hangs on a loaded machine, not timing assertions.
constexpr auto kTimeout = std::chrono::seconds(60);

// A fresh anonymous mapping.
class Mapping {
 public:
  explicit Mapping(size_t size) : size_(size) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
  }
  ~Mapping() {
    if (base_)
      munmap(base_, size_);
  }
  uint8_t* base() const { return base_; }

  // Pages of [from, to) resident now.
  size_t Resident(size_t from, size_t to) const {
    std::vector<unsigned char> v((to - from) / kPage);
    if (mincore(base_ + from, to - from, v.data()) != 0)
      return SIZE_MAX;
    size_t n = 0;
    for (unsigned char c : v)
      n += c & 1;
    return n;
  }

 private:
  const size_t size_;
  uint8_t* base_ = nullptr;
};

bool KernelCommitsAhead() {
  Mapping m(kPage);
  return m.base() && madvise(m.base(), kPage, MADV_POPULATE_WRITE) == 0;
}

// Waits until |done()| or the deadline; true if done.
template <typename F>
bool WaitFor(F done) {
  const auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Holds the warmer at one page in one phase.
class Gate {
 public:
  Gate(size_t page, PageWarmer::Phase phase) : page_(page), phase_(phase) {}
  void BeforeRead(size_t page, PageWarmer::Phase phase) {
    if (page != page_ || phase != phase_)
      return;
    std::unique_lock<std::mutex> lock(mutex_);
    held_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  void WaitHeld() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return held_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  const size_t page_;
  const PageWarmer::Phase phase_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool held_ = false;
  bool open_ = false;
};

// A warmer over a fresh 4 MiB mapping, held by a gate at one page.
struct Gated {
  static constexpr size_t kSize = 4 << 20;
  Gated(size_t page, PageWarmer::Phase phase, size_t lookahead)
      : mapping(kSize),
        gate(page, phase),
        warmer(mapping.base(),
               kSize,
               lookahead,
               [this](size_t p, PageWarmer::Phase ph) {
                 gate.BeforeRead(p, ph);
               }) {}
  Mapping mapping;
  Gate gate;
  PageWarmer warmer;
};

// The warmer commits and reads the pages from one step past the claim to
// the lookahead beyond that, and no further: the rest of the mapping stays
// unbacked. A claim moves the window; the first step is the owner's.
TEST(PageWarmerTest, WarmsTheLookaheadPastTheClaimAndNoFurther) {
  if (!KernelCommitsAhead())
    GTEST_SKIP() << "MADV_POPULATE_WRITE unsupported: nothing to warm";
  constexpr size_t kSize = 16 << 20;
  constexpr size_t kAhead = 1 << 20;
  Mapping m(kSize);
  ASSERT_TRUE(m.base());
  PageWarmer warmer(m.base(), kSize, kAhead);
  ASSERT_TRUE(WaitFor([&] { return warmer.warm_end() == kStep + kAhead; }));
  EXPECT_EQ(m.Resident(0, kStep), 0u);
  EXPECT_EQ(m.Resident(kStep, kStep + kAhead), kAhead / kPage);
  EXPECT_EQ(m.Resident(kStep + kAhead, kSize), 0u);

  warmer.Claim(4 << 20);
  const size_t want = (4 << 20) + kStep + kAhead;
  ASSERT_TRUE(WaitFor([&] { return warmer.warm_end() == want; }));
  EXPECT_EQ(m.Resident(want, kSize), 0u);
  // The pages between the old window and the new floor were the owner's.
  EXPECT_EQ(m.Resident(kStep + kAhead, (4 << 20) + kStep), 0u);
  const PageWarmer::Stats s = warmer.stats();
  EXPECT_EQ(s.pages_read, 2 * kAhead / kPage);
  EXPECT_EQ(s.pages_skipped, ((4 << 20) - kAhead) / kPage);
  EXPECT_EQ(s.claim_waits, 0u);

  // A claim near the end: the warmer reaches the end and its thread ends
  // (the destructor then joins a finished thread).
  warmer.Claim(kSize - kStep);
  ASSERT_TRUE(WaitFor([&] { return warmer.warm_end() == kSize; }));
}

// [PW-1], the owner's side: a claim over the page being read waits for the
// read to end.
TEST(PageWarmerTest, AClaimOverAPageBeingReadWaitsForTheRead) {
  if (!KernelCommitsAhead())
    GTEST_SKIP() << "MADV_POPULATE_WRITE unsupported: nothing to warm";
  const size_t page = kStep + 3 * kPage;
  Gated g(page, PageWarmer::Phase::kChecked, Gated::kSize);
  ASSERT_TRUE(g.mapping.base());
  PageWarmer& warmer = g.warmer;
  g.gate.WaitHeld();
  std::atomic<bool> claimed{false};
  PageWarmer::Stats stats;
  std::thread owner([&] {
    warmer.Claim(2 * kStep);  // [0, 2 * kStep) holds |page|
    claimed.store(true);
    stats = warmer.stats();
  });
  // Not a timing assertion: the claim cannot return while the gate holds
  // the read, however long this waits.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(claimed.load());
  g.gate.Open();
  owner.join();
  EXPECT_TRUE(claimed.load());
  EXPECT_EQ(stats.claim_waits, 1u);
  // The held page was read (the claim came after the check), and the
  // three before it.
  EXPECT_GE(stats.pages_read, 4u);
}

// [PW-1], the warmer's side: a claim made while the warmer published a
// page but before it checked the claim makes it leave the page unread.
TEST(PageWarmerTest, APageClaimedBeforeTheCheckIsNotRead) {
  if (!KernelCommitsAhead())
    GTEST_SKIP() << "MADV_POPULATE_WRITE unsupported: nothing to warm";
  const size_t page = kStep + 3 * kPage;
  Gated g(page, PageWarmer::Phase::kPublished, kStep);
  ASSERT_TRUE(g.mapping.base());
  PageWarmer& warmer = g.warmer;
  g.gate.WaitHeld();
  // [0, kStep) does not hold the page: no wait, but the page is now within
  // one step of the claim.
  warmer.Claim(kStep);
  EXPECT_EQ(warmer.stats().claim_waits, 0u);
  g.gate.Open();
  // It resumes past the claim: pages from 2 * kStep on.
  ASSERT_TRUE(WaitFor([&] { return warmer.warm_end() == 3 * kStep; }));
  const PageWarmer::Stats s = warmer.stats();
  EXPECT_EQ(s.pages_read, 3u + kStep / kPage);
  EXPECT_EQ(g.mapping.Resident(page, page + kPage), 1u);  // committed only
}

// The owner writing every byte of a mapping in claimed steps, racing the
// warmer: the data is whole (the warmer only reads), and over the runs both
// outcomes of the race happen: pages the warmer read ahead of the owner,
// and pages it left because the owner came too close.
TEST(PageWarmerTest, AnOwnerRacingTheWarmerKeepsItsData) {
  if (!KernelCommitsAhead())
    GTEST_SKIP() << "MADV_POPULATE_WRITE unsupported: nothing to warm";
  constexpr size_t kSize = 8 << 20;
  uint64_t read = 0;
  uint64_t skipped = 0;
  for (int run = 0; run < 8 && (read == 0 || skipped == 0); run++) {
    Mapping m(kSize);
    ASSERT_TRUE(m.base());
    {
      PageWarmer warmer(m.base(), kSize, 2 * kStep);
      for (size_t end = kStep; end <= kSize; end += kStep) {
        warmer.Claim(end);
        for (size_t off = end - kStep; off < end; off += kPage)
          memset(m.base() + off, static_cast<int>((off / kPage) & 0xff), kPage);
      }
      const PageWarmer::Stats s = warmer.stats();
      read += s.pages_read;
      skipped += s.pages_skipped;
    }
    for (size_t off = 0; off < kSize; off += kPage) {
      ASSERT_EQ(m.base()[off], static_cast<uint8_t>((off / kPage) & 0xff));
      ASSERT_EQ(m.base()[off + kPage - 1], m.base()[off]);
    }
  }
  EXPECT_GT(read, 0u);
  EXPECT_GT(skipped, 0u);
}

// Destroyed while asleep, or at once: the thread ends and is joined.
TEST(PageWarmerTest, DestructionEndsTheThread) {
  constexpr size_t kSize = 4 << 20;
  Mapping m(kSize);
  ASSERT_TRUE(m.base());
  { PageWarmer warmer(m.base(), kSize, kStep); }
  {
    PageWarmer warmer(m.base(), kSize, kStep);
    if (KernelCommitsAhead()) {
      ASSERT_TRUE(WaitFor([&] { return warmer.warm_end() == 2 * kStep; }));
    }
  }
}

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
