/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The side-by-side workload's loop and output (workload.h). The end-to-end
// run, through ringtraced and the ringtrace CLI, is tools/compare-perfetto's
// (its --quick run checks every count against the trace file).

#include "src/tools/loadgen/workload.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ringtrace/track_event.h"

namespace ringtrace {
namespace loadgen {
namespace {

TEST(WorkloadTest, ResultLinesHavePerfettoLoadgensFormat) {
  PhaseResult r;
  r.phase = Phase::kSlice;
  r.events = 200000;
  r.wall_ns = 111886000;  // 559.43 ns per event
  r.cpu_ns = 77402000;    // 387.01
  EXPECT_EQ(FormatResult(r, WorkloadMode::kCost, 1),
            "RESULT phase=slice events=200000 wall_ns_per_ev=559.43 "
            "cpu_ns_per_ev=387.01\n");
  r.phase = Phase::kTput;
  r.events = 600000;
  r.wall_ns = 400000000;  // two threads of 200 ms each
  r.cpu_ns = 300000000;
  EXPECT_EQ(FormatResult(r, WorkloadMode::kTput, 2),
            "RESULT phase=tput events=600000 wall_ns_per_ev=666.67 "
            "cpu_ns_per_ev=500.00 events_per_s=3000000\n");
  r.events = 0;
  EXPECT_EQ(FormatResult(r, WorkloadMode::kTput, 2),
            "RESULT phase=tput events=0 wall_ns_per_ev=0.00 "
            "cpu_ns_per_ev=0.00 events_per_s=0\n");
}

TEST(WorkloadTest, ParsesTheModes) {
  WorkloadMode mode = WorkloadMode::kCost;
  EXPECT_TRUE(ParseWorkloadMode("tput", &mode));
  EXPECT_EQ(mode, WorkloadMode::kTput);
  EXPECT_TRUE(ParseWorkloadMode("cost", &mode));
  EXPECT_EQ(mode, WorkloadMode::kCost);
  EXPECT_FALSE(ParseWorkloadMode("Cost", &mode));
  EXPECT_FALSE(ParseWorkloadMode("", &mode));
}

TEST(WorkloadTest, CostModeRunsTheFourPhasesInOrderOnEveryThread) {
  WorkloadConfig config;
  config.threads = 3;
  config.total = 5001;  // not a multiple of the burst: a short last block
  config.burst = 1000;
  std::vector<PhaseResult> results;
  ASSERT_TRUE(RunWorkload(config, &results).ok());
  ASSERT_EQ(results.size(), 4u);
  const Phase order[] = {Phase::kSlice, Phase::kInstant, Phase::kCounter,
                         Phase::kDisabled};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(results[i].phase, order[i]);
    EXPECT_EQ(results[i].events, 3u * 5001u);
    // Each thread's CPU interval lies inside its wall interval.
    EXPECT_GT(results[i].cpu_ns, 0u);
    EXPECT_LE(results[i].cpu_ns, results[i].wall_ns);
  }
}

TEST(WorkloadTest, OnlyTheEnabledPhasesWriteEvents) {
  // Statically enabled and no writer bound: each event that would be
  // written is counted once (a slice's begin; its end then has nothing to
  // end), and the disabled phase's none.
  ASSERT_EQ(track_event::SetCategoriesEnabled(kWorkloadCategory), 1u);
  ASSERT_FALSE(track_event::IsCategoryEnabled(kWorkloadDisabledCategory));
  WorkloadConfig config;
  config.threads = 2;
  config.total = 700;
  config.burst = 64;
  const uint64_t before = track_event::Stats().events_without_writer;
  std::vector<PhaseResult> results;
  const base::Status status = RunWorkload(config, &results);
  track_event::SetCategoriesEnabled(std::string("-") + kWorkloadCategory);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(track_event::Stats().events_without_writer - before,
            3u * 2u * 700u);
}

TEST(WorkloadTest, TputModeEmitsWholeBlocksForTheDuration) {
  WorkloadConfig config;
  config.mode = WorkloadMode::kTput;
  config.threads = 2;
  config.duration_ms = 30;
  config.burst = 100;
  std::vector<PhaseResult> results;
  ASSERT_TRUE(RunWorkload(config, &results).ok());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].phase, Phase::kTput);
  EXPECT_GT(results[0].events, 0u);
  EXPECT_EQ(results[0].events % 100, 0u);
  EXPECT_GE(results[0].wall_ns, 2u * 30u * 1000000u);
}

TEST(WorkloadTest, PausesSeparateTheBlocks) {
  WorkloadConfig config;
  config.total = 1000;
  config.burst = 100;
  config.pause_us = 2000;  // 9 pauses: none after the last block
  std::vector<PhaseResult> results;
  ASSERT_TRUE(RunWorkload(config, &results).ok());
  ASSERT_EQ(results.size(), 4u);
  for (const PhaseResult& r : results) {
    EXPECT_EQ(r.events, 1000u);
    EXPECT_GE(r.wall_ns, 9u * 2000u * 1000u);
  }
}

TEST(WorkloadTest, RefusesNoThreadsAndEmptyBlocks) {
  WorkloadConfig config;
  std::vector<PhaseResult> results;
  config.threads = 0;
  EXPECT_FALSE(RunWorkload(config, &results).ok());
  config.threads = kMaxWorkloadThreads + 1;
  EXPECT_FALSE(RunWorkload(config, &results).ok());
  config.threads = 1;
  config.burst = 0;
  EXPECT_FALSE(RunWorkload(config, &results).ok());
  EXPECT_TRUE(results.empty());
}

}  // namespace
}  // namespace loadgen
}  // namespace ringtrace
