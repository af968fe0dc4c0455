/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/probes_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace ringtrace {
namespace probes {
namespace {

// Deadlines against hangs on a loaded machine, not timing assertions.
constexpr auto kTimeout = std::chrono::seconds(60);

template <typename Fn>
bool WaitFor(Fn done) {
  const auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Counts its runs; due again |period_ms| after each (kNever: 0).
class CountingSource : public ProbeSource {
 public:
  CountingSource(uint64_t period_ms, std::atomic<bool>* destroyed = nullptr)
      : period_ms_(period_ms), destroyed_(destroyed) {}
  ~CountingSource() override {
    if (destroyed_)
      destroyed_->store(true);
  }
  uint64_t Run(uint64_t now_ms, const std::atomic<bool>&) override {
    runs.fetch_add(1);
    return period_ms_ ? now_ms + period_ms_ : kNever;
  }
  std::atomic<uint64_t> runs{0};

 private:
  const uint64_t period_ms_;
  std::atomic<bool>* const destroyed_;
};

// Stays in Run() until the loop's stop flag for it is set.
class BlockingSource : public ProbeSource {
 public:
  uint64_t Run(uint64_t, const std::atomic<bool>& stop) override {
    in_run.store(true);
    while (!stop.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    saw_stop.store(true);
    in_run.store(false);
    return kNever;
  }
  std::atomic<bool> in_run{false};
  std::atomic<bool> saw_stop{false};
};

// Run() and Flush() each wait for their own gate (when closed), and record
// whether they ever overlapped and on which thread Flush() ran.
class GatedSource : public ProbeSource {
 public:
  uint64_t Run(uint64_t now_ms, const std::atomic<bool>& stop) override {
    in_run.store(true);
    overlapped.store(overlapped.load() || in_flush.load());
    while (!run_gate.load() && !stop.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    runs.fetch_add(1);
    in_run.store(false);
    return never_again.load() ? kNever : now_ms + 1;
  }
  void Flush(const std::atomic<bool>& stop) override {
    in_flush.store(true);
    overlapped.store(overlapped.load() || in_run.load());
    flush_thread = std::this_thread::get_id();
    while (!flush_gate.load() && !stop.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    flushes.fetch_add(1);
    in_flush.store(false);
  }
  std::atomic<bool> never_again{false};  // Run() returns kNever
  std::atomic<bool> run_gate{true};
  std::atomic<bool> flush_gate{true};
  std::atomic<bool> in_run{false};
  std::atomic<bool> in_flush{false};
  std::atomic<bool> overlapped{false};
  std::atomic<uint64_t> runs{0};
  std::atomic<uint64_t> flushes{0};
  std::thread::id flush_thread;
};

TEST(ScheduleTest, DueAtTheStartThenEveryPeriodSkippingWhatWasMissed) {
  Schedule off;
  EXPECT_FALSE(off.enabled());
  EXPECT_FALSE(off.Due(kNever - 1));
  EXPECT_EQ(Schedule(0, 5).next_ms(), kNever);

  Schedule s(100, 1000);
  EXPECT_TRUE(s.enabled());
  EXPECT_FALSE(s.Due(999));
  EXPECT_TRUE(s.Due(1000));
  s.Advance(1000);
  EXPECT_EQ(s.next_ms(), 1100u);
  s.Advance(1130);  // a little late: no period missed
  EXPECT_EQ(s.next_ms(), 1200u);
  EXPECT_EQ(s.missed(), 0u);
  s.Advance(1200);
  EXPECT_EQ(s.next_ms(), 1300u);
  s.Advance(1650);  // due at 1300: 1400, 1500 and 1600 were missed
  EXPECT_EQ(s.next_ms(), 1700u);
  EXPECT_EQ(s.missed(), 3u);
}

TEST(ProbesLoopTest, RunsAnAddedSourceAtOnceAndAgainWhenDue) {
  ProbesLoop loop;
  auto owned = std::make_unique<CountingSource>(1);
  CountingSource* source = owned.get();
  const ProbesLoop::Handle handle = loop.Add(std::move(owned));
  EXPECT_NE(handle, 0u);
  EXPECT_EQ(loop.size(), 1u);
  ASSERT_TRUE(WaitFor([&] { return source->runs.load() >= 3; }));
  std::unique_ptr<ProbeSource> back = loop.Remove(handle);
  EXPECT_EQ(back.get(), source);
  EXPECT_EQ(loop.size(), 0u);
  EXPECT_EQ(loop.Remove(handle), nullptr);
  EXPECT_EQ(loop.Remove(12345), nullptr);
}

TEST(ProbesLoopTest, RemoveWaitsForTheRunInProgressAndStopsIt) {
  ProbesLoop loop;
  auto owned = std::make_unique<BlockingSource>();
  BlockingSource* source = owned.get();
  const ProbesLoop::Handle handle = loop.Add(std::move(owned));
  ASSERT_TRUE(WaitFor([&] { return source->in_run.load(); }));
  std::unique_ptr<ProbeSource> back = loop.Remove(handle);
  ASSERT_EQ(back.get(), source);
  // Returned only once Run() saw the flag and ended.
  EXPECT_TRUE(source->saw_stop.load());
  EXPECT_FALSE(source->in_run.load());
}

TEST(ProbesLoopTest, SourcesAreIndependent) {
  ProbesLoop loop;
  auto a_owned = std::make_unique<CountingSource>(1);
  auto b_owned = std::make_unique<CountingSource>(1);
  CountingSource* a = a_owned.get();
  CountingSource* b = b_owned.get();
  const ProbesLoop::Handle ha = loop.Add(std::move(a_owned));
  const ProbesLoop::Handle hb = loop.Add(std::move(b_owned));
  EXPECT_NE(ha, hb);
  ASSERT_TRUE(
      WaitFor([&] { return a->runs.load() > 0 && b->runs.load() > 0; }));
  std::unique_ptr<ProbeSource> a_back = loop.Remove(ha);
  const uint64_t a_runs = a->runs.load();
  const uint64_t b_runs = b->runs.load();
  // b goes on after a is gone; a is not run again (it is ours now).
  ASSERT_TRUE(WaitFor([&] { return b->runs.load() > b_runs + 2; }));
  EXPECT_EQ(a->runs.load(), a_runs);
  loop.Remove(hb);
}

TEST(ProbesLoopTest, ASourceDueNeverAgainRunsOnceAndOthersGoOn) {
  ProbesLoop loop;
  auto once_owned = std::make_unique<CountingSource>(0);
  CountingSource* once = once_owned.get();
  auto often_owned = std::make_unique<CountingSource>(1);
  CountingSource* often = often_owned.get();
  const ProbesLoop::Handle h1 = loop.Add(std::move(once_owned));
  ASSERT_TRUE(WaitFor([&] { return once->runs.load() == 1; }));
  const ProbesLoop::Handle h2 = loop.Add(std::move(often_owned));
  ASSERT_TRUE(WaitFor([&] { return often->runs.load() >= 5; }));
  EXPECT_EQ(once->runs.load(), 1u);
  loop.Remove(h1);
  loop.Remove(h2);
}

// A Flush() asked for during a run waits for the run to end, then runs on
// the caller's thread.
TEST(ProbesLoopTest, FlushWaitsForTheRunInProgress) {
  ProbesLoop loop;
  auto owned = std::make_unique<GatedSource>();
  GatedSource* source = owned.get();
  source->run_gate.store(false);
  const ProbesLoop::Handle handle = loop.Add(std::move(owned));
  ASSERT_TRUE(WaitFor([&] { return source->in_run.load(); }));
  std::atomic<bool> flushed{false};
  std::thread::id caller;
  std::thread flusher([&] {
    caller = std::this_thread::get_id();
    EXPECT_TRUE(loop.Flush(handle));
    flushed.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(flushed.load());
  EXPECT_EQ(source->flushes.load(), 0u);
  source->run_gate.store(true);
  flusher.join();
  EXPECT_EQ(source->flushes.load(), 1u);
  EXPECT_EQ(source->flush_thread, caller);
  EXPECT_FALSE(source->overlapped.load());
  loop.Remove(handle);
}

// The other order: while a Flush() is in progress the loop does not run
// the source (it is due every millisecond), and Remove() waits for the
// flush; a removed source is not flushed.
TEST(ProbesLoopTest, TheLoopLeavesAFlushingSourceAlone) {
  ProbesLoop loop;
  auto owned = std::make_unique<GatedSource>();
  GatedSource* source = owned.get();
  source->flush_gate.store(false);
  const ProbesLoop::Handle handle = loop.Add(std::move(owned));
  ASSERT_TRUE(WaitFor([&] { return source->runs.load() >= 2; }));
  std::thread flusher([&] { EXPECT_TRUE(loop.Flush(handle)); });
  ASSERT_TRUE(WaitFor([&] { return source->in_flush.load(); }));
  const uint64_t runs = source->runs.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(source->runs.load(), runs);
  source->flush_gate.store(true);
  flusher.join();
  ASSERT_TRUE(WaitFor([&] { return source->runs.load() > runs + 2; }));
  EXPECT_FALSE(source->overlapped.load());

  // Remove() during a flush: the flush sees the stop flag, ends, and only
  // then Remove() returns the source.
  source->flush_gate.store(false);
  std::thread flusher2([&] { loop.Flush(handle); });
  ASSERT_TRUE(WaitFor([&] { return source->in_flush.load(); }));
  std::unique_ptr<ProbeSource> back = loop.Remove(handle);
  EXPECT_EQ(back.get(), source);
  EXPECT_FALSE(source->in_flush.load());
  flusher2.join();
  const uint64_t flushes = source->flushes.load();
  EXPECT_FALSE(loop.Flush(handle));
  EXPECT_FALSE(loop.Flush(12345));
  EXPECT_EQ(source->flushes.load(), flushes);
}

// Flushes beside a source due every millisecond (at least 50 runs of it):
// each one runs, none during a run.
TEST(ProbesLoopTest, FlushesAndRunsNeverOverlap) {
  ProbesLoop loop;
  auto owned = std::make_unique<GatedSource>();
  GatedSource* source = owned.get();
  const ProbesLoop::Handle handle = loop.Add(std::move(owned));
  uint64_t flushes = 0;
  const auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (source->runs.load() < 50 || flushes < 500) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    ASSERT_TRUE(loop.Flush(handle));
    flushes++;
    if (flushes % 16 == 0)
      std::this_thread::yield();
  }
  EXPECT_EQ(source->flushes.load(), flushes);
  EXPECT_FALSE(source->overlapped.load());
  loop.Remove(handle);
}

// Wake() makes a source due now: one never due again runs once more, and a
// Wake() during its run is another run after it (not lost).
TEST(ProbesLoopTest, WakeRunsASourceAheadOfItsSchedule) {
  ProbesLoop loop;
  auto owned = std::make_unique<GatedSource>();
  GatedSource* source = owned.get();
  source->run_gate.store(false);
  source->never_again.store(true);
  const ProbesLoop::Handle handle = loop.Add(std::move(owned));
  // Never due again after its first run, held in it; woken meanwhile.
  ASSERT_TRUE(WaitFor([&] { return source->in_run.load(); }));
  loop.Wake(handle);
  source->run_gate.store(true);
  ASSERT_TRUE(WaitFor([&] { return source->runs.load() == 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(source->runs.load(), 2u);
  loop.Remove(handle);
  loop.Wake(handle);  // removed: nothing

  auto once_owned = std::make_unique<CountingSource>(0);  // kNever
  CountingSource* once = once_owned.get();
  const ProbesLoop::Handle h = loop.Add(std::move(once_owned));
  ASSERT_TRUE(WaitFor([&] { return once->runs.load() == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(once->runs.load(), 1u);
  loop.Wake(h);
  ASSERT_TRUE(WaitFor([&] { return once->runs.load() == 2; }));
  loop.Remove(h);
}

TEST(ProbesLoopTest, DestroyingTheLoopDestroysItsSources) {
  std::atomic<bool> destroyed{false};
  {
    ProbesLoop loop;
    loop.Add(std::make_unique<CountingSource>(1, &destroyed));
    EXPECT_FALSE(destroyed.load());
  }
  EXPECT_TRUE(destroyed.load());
}

}  // namespace
}  // namespace probes
}  // namespace ringtrace
