/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/trace_clock.h"

#include <stdint.h>

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "src/base/time.h"

namespace ringtrace {
namespace base {
namespace {

// How far a reading may lie outside the CLOCK_BOOTTIME readings around it:
// the rate's error over one anchor period (~1 us here, see trace_clock.h)
// with a wide margin. A wrong scale or anchor is off by far more: a 1%
// scale error is 100 us after one 10 ms period, and grows from there.
constexpr uint64_t kToleranceNs = 50 * 1000;

struct Agreement {
  uint64_t readings = 0;
  uint64_t outside = 0;
  uint64_t decreases = 0;
  uint64_t worst_ns = 0;  // the largest distance outside [before, after]
};

// Reads TraceClockNs() between two CLOCK_BOOTTIME readings for |duration_ns|.
Agreement CheckAgainstBootTime(uint64_t duration_ns) {
  Agreement result;
  uint64_t previous = 0;
  const uint64_t end = BootTimeNs() + duration_ns;
  for (;;) {
    const uint64_t before = BootTimeNs();
    const uint64_t reading = TraceClockNs();
    const uint64_t after = BootTimeNs();
    result.readings++;
    if (reading < previous)
      result.decreases++;
    previous = reading;
    uint64_t distance = 0;
    if (reading < before)
      distance = before - reading;
    else if (reading > after)
      distance = reading - after;
    if (distance > kToleranceNs)
      result.outside++;
    if (distance > result.worst_ns)
      result.worst_ns = distance;
    if (after >= end)
      break;
  }
  return result;
}

class TraceClockTest : public testing::Test {
 protected:
  void TearDown() override {
    // Back to what the process chose (the TSC where usable).
    if (!SetTraceClockSourceForTesting(TraceClockSource::kTsc))
      SetTraceClockSourceForTesting(TraceClockSource::kBootTime);
  }
};

TEST_F(TraceClockTest, TscReadingsAgreeWithBootTimeAcrossAnchorRenewals) {
  if (!SetTraceClockSourceForTesting(TraceClockSource::kTsc))
    GTEST_SKIP() << "no invariant TSC used by the kernel here";
  // 25 anchor periods: calibration, then extrapolated readings and renewals.
  const Agreement a = CheckAgainstBootTime(25 * kTraceClockAnchorPeriodNs);
  EXPECT_TRUE(TraceClockCalibrated());
  EXPECT_EQ(GetTraceClockSource(), TraceClockSource::kTsc);
  EXPECT_GT(a.readings, 1000u);
  EXPECT_EQ(a.outside, 0u) << "worst " << a.worst_ns << " ns";
  EXPECT_EQ(a.decreases, 0u);
}

TEST_F(TraceClockTest, ThreadsAgreeWithBootTimeAndNeverGoBack) {
  if (!SetTraceClockSourceForTesting(TraceClockSource::kTsc))
    GTEST_SKIP() << "no invariant TSC used by the kernel here";
  constexpr int kThreads = 4;
  std::vector<Agreement> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; i++) {
    threads.emplace_back([&results, i] {
      results[static_cast<size_t>(i)] =
          CheckAgainstBootTime(5 * kTraceClockAnchorPeriodNs);
    });
  }
  for (std::thread& t : threads)
    t.join();
  for (const Agreement& a : results) {
    EXPECT_GT(a.readings, 100u);
    EXPECT_EQ(a.outside, 0u) << "worst " << a.worst_ns << " ns";
    EXPECT_EQ(a.decreases, 0u);
  }
}

TEST_F(TraceClockTest, BootTimeSourceReadsBootTimeExactly) {
  ASSERT_TRUE(SetTraceClockSourceForTesting(TraceClockSource::kBootTime));
  EXPECT_EQ(GetTraceClockSource(), TraceClockSource::kBootTime);
  for (int i = 0; i < 10000; i++) {
    const uint64_t before = BootTimeNs();
    const uint64_t reading = TraceClockNs();
    const uint64_t after = BootTimeNs();
    ASSERT_GE(reading, before);
    ASSERT_LE(reading, after);
  }
}

}  // namespace
}  // namespace base
}  // namespace ringtrace
