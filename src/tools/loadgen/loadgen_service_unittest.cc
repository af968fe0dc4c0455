/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_loadgen's RunLoad against a real ringtraced process started with
// the drain-tuning flags, and those flags' validation. The load runs under
// the drop policy through a small ring, so packets are usually lost; what is
// checked is that every loss is counted exactly: emitted - in the trace ==
// the writers' drop count == the trace's TraceStats. With a trace buffer
// too small for the load, packets are also overwritten (RING_BUFFER) or
// discarded (DISCARD) in the service: every packet committed is in the
// file or counted there.

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "src/tools/loadgen/loadgen.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/test/ringtraced_process.h"

namespace ringtrace {
namespace loadgen {
namespace {

// Deadlines against hangs on a loaded machine, not timing assertions.
constexpr int kTimeoutMs = 120000;

class LoadgenServiceTest : public test::EndToEndFixture {
 protected:
  std::vector<std::string> ServiceArgs(std::vector<std::string> extra) {
    std::vector<std::string> args = {bin_ + "/ringtraced", "--socket", socket_,
                                     "--out", trace_};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  // Runs ringtraced with |extra| flags and returns its exit code; for flags
  // that must be refused before it listens.
  int RunServiceToExit(std::vector<std::string> extra) {
    base::Subprocess service(ServiceArgs(extra));
    std::string error;
    EXPECT_TRUE(service.Start(&error)) << error;
    EXPECT_TRUE(service.Wait(kTimeoutMs)) << service.output();
    return service.exit_code();
  }

  // What the trace buffer may lose besides the writers' drops.
  enum class BufferLoss { kNone, kOverwrites, kDiscards };

  // Runs the load against ringtraced started with |flags| and checks that
  // every loss is counted exactly in the trace it writes.
  void RunLoadAndCheckExactLoss(std::vector<std::string> flags,
                                BufferLoss buffer_loss = BufferLoss::kNone);
};

void LoadgenServiceTest::RunLoadAndCheckExactLoss(
    std::vector<std::string> flags,
    BufferLoss buffer_loss) {
  base::Subprocess service(ServiceArgs(flags));
  const std::string error =
      test::StartRingtraced(&service, socket_, kTimeoutMs);
  ASSERT_TRUE(error.empty()) << error;

  LoadConfig config;
  config.socket_path = socket_;
  config.threads = 2;
  config.duration_ms = 200;
  config.ring_kb = 64;
  config.policy = shm_ring::BufferExhaustedPolicy::kDrop;
  LoadResult result;
  const base::Status status = RunLoad(config, &result);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(result.connected_at_end);

  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kTimeoutMs)) << service.output();
  ASSERT_EQ(service.exit_code(), 0) << service.output();

  TraceCount count;
  const base::Status counted = CountTraceFile(trace_, &count);
  ASSERT_TRUE(counted.ok()) << counted.message();
  EXPECT_GT(result.events_emitted, 0u);
  EXPECT_GT(count.track_events, 0u);
  // Besides its events, each thread wrote descriptor packets (again after
  // every incremental-state clear of the TrackEvent API).
  EXPECT_GT(result.packets_begun, result.events_emitted);
  EXPECT_EQ(result.packets_committed + result.packets_dropped,
            result.packets_begun);
  EXPECT_EQ(count.packets_dropped_by_producers, result.packets_dropped);
  // No silent loss: every packet the writers did not count as dropped is in
  // the trace, events and descriptors alike, or counted as lost by the
  // buffer.
  EXPECT_EQ(count.track_events + count.track_descriptors + count.clear_packets +
                count.packets_overwritten + count.packets_discarded,
            result.packets_committed)
      << FormatTraceCount(count);
  if (buffer_loss == BufferLoss::kOverwrites) {
    EXPECT_GT(count.packets_overwritten, 0u) << FormatTraceCount(count);
    EXPECT_GT(count.chunks_overwritten, 0u);
    EXPECT_EQ(count.packets_discarded, 0u);
    return;
  }
  if (buffer_loss == BufferLoss::kDiscards) {
    EXPECT_GT(count.packets_discarded, 0u) << FormatTraceCount(count);
    EXPECT_GT(count.chunks_discarded, 0u);
    EXPECT_EQ(count.packets_overwritten, 0u);
    return;
  }
  EXPECT_EQ(count.chunks_discarded, 0u);
  EXPECT_EQ(count.packets_overwritten + count.packets_discarded, 0u);
  EXPECT_LE(count.track_events, result.events_emitted);
  // One counted loss per missing event: an event whose incremental-state
  // clear could not be written is skipped, the clear's lost packet standing
  // for it. The only loss without an event behind it is a sequence's first
  // clear, lost when the thread binds its writer to a full ring: at most
  // one per thread.
  const uint64_t missing = result.events_emitted - count.track_events;
  EXPECT_GE(count.packets_dropped_by_producers, missing);
  EXPECT_LE(count.packets_dropped_by_producers - missing,
            uint64_t{config.threads});
  EXPECT_EQ(count.chunks_overwritten, 0u);
}

TEST_F(LoadgenServiceTest, EveryLossIsCountedExactlyWithTunedDrain) {
  // Raising the niceness needs no privilege. Huge pages where the kernel
  // has them (small ones where it refuses the advice); no page warmer (the
  // other runs have the default one).
  RunLoadAndCheckExactLoss({"--drain-tick-us", "500", "--head-grace-us", "0",
                            "--nice", "19", "--buffer-pages", "huge",
                            "--fill-policy", "discard", "--buffer-kb", "262144",
                            "--warm-ahead-kb", "0"});
}

TEST_F(LoadgenServiceTest, EveryLossIsCountedExactlyWhenStreamedToTheFile) {
  // write_into_file: the buffer goes to the file every 100 ms (and once
  // more at the stop); a RING_BUFFER that is never overrun.
  RunLoadAndCheckExactLoss(
      {"--file-write-period-ms", "100", "--buffer-kb", "131072"});
}

TEST_F(LoadgenServiceTest, OverwritesOfAStreamedSessionAreCountedExactly) {
  // A 256 KiB RING_BUFFER written to the file every 100 ms: between two
  // writes the load fills it many times over, and what was not written yet
  // is overwritten.
  RunLoadAndCheckExactLoss({"--file-write-period-ms", "100", "--buffer-kb",
                            "256", "--fill-policy", "ring_buffer"},
                           BufferLoss::kOverwrites);
}

TEST_F(LoadgenServiceTest, DiscardsOfAStreamedSessionAreCountedExactly) {
  // The same with DISCARD: the buffer takes nothing more once full, and a
  // streamed write frees it.
  RunLoadAndCheckExactLoss({"--file-write-period-ms", "100", "--buffer-kb",
                            "256", "--fill-policy", "discard"},
                           BufferLoss::kDiscards);
}

TEST_F(LoadgenServiceTest, DrainFlagsOutOfRangeAreRefused) {
  EXPECT_EQ(RunServiceToExit({"--drain-tick-us", "99"}), 2);
  EXPECT_EQ(RunServiceToExit({"--drain-tick-us", "60000001"}), 2);
  EXPECT_EQ(RunServiceToExit({"--head-grace-us", "1000001"}), 2);
  EXPECT_EQ(RunServiceToExit({"--nice", "20"}), 2);
  EXPECT_EQ(RunServiceToExit({"--nice=-21"}), 2);
  EXPECT_EQ(RunServiceToExit({"--nice", "x"}), 2);
  EXPECT_EQ(RunServiceToExit({"--buffer-pages", "medium"}), 2);
  EXPECT_EQ(RunServiceToExit({"--file-write-period-ms", "99"}), 2);
  EXPECT_EQ(RunServiceToExit({"--file-write-period-ms", "0"}), 2);
  EXPECT_EQ(RunServiceToExit({"--warm-ahead-kb", "1048577"}), 2);
  EXPECT_EQ(RunServiceToExit({"--warm-ahead-kb", "-1"}), 2);
}

}  // namespace
}  // namespace loadgen
}  // namespace ringtrace
