/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_loadgen's RunLoad against a real ringtraced process started with
// the drain-tuning flags, and those flags' validation. The load runs under
// the drop policy through a small ring, so packets are usually lost; what is
// checked is that every loss is counted exactly: emitted - in the trace ==
// the writers' drop count == the trace's TraceStats.

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "src/tools/loadgen/loadgen.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/test/subprocess.h"

namespace ringtrace {
namespace loadgen {
namespace {

// Deadlines against hangs on a loaded machine, not timing assertions.
constexpr int kTimeoutMs = 120000;

class LoadgenServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ringtrace_loadgen_XXXXXX";
    const char* dir = mkdtemp(tmpl);
    ASSERT_NE(dir, nullptr);
    dir_ = dir;
    socket_ = dir_ + "/traced.sock";
    trace_ = dir_ + "/trace.pftrace";
    bin_ = test::ExecutableDir();
  }
  void TearDown() override {
    unlink(trace_.c_str());
    unlink(socket_.c_str());
    rmdir(dir_.c_str());
  }

  std::vector<std::string> ServiceArgs(std::vector<std::string> extra) {
    std::vector<std::string> args = {bin_ + "/ringtraced", "--socket", socket_,
                                     "--out", trace_};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  // Runs ringtraced with |extra| flags and returns its exit code; for flags
  // that must be refused before it listens.
  int RunServiceToExit(std::vector<std::string> extra) {
    test::Subprocess service(ServiceArgs(extra));
    std::string error;
    EXPECT_TRUE(service.Start(&error)) << error;
    EXPECT_TRUE(service.Wait(kTimeoutMs)) << service.output();
    return service.exit_code();
  }

  std::string dir_, socket_, trace_, bin_;
};

TEST_F(LoadgenServiceTest, EveryLossIsCountedExactlyWithTunedDrain) {
  // Raising the niceness needs no privilege.
  test::Subprocess service(
      ServiceArgs({"--drain-tick-us", "500", "--head-grace-us", "0", "--nice",
                   "19", "--fill-policy", "discard", "--buffer-kb", "262144"}));
  std::string error;
  ASSERT_TRUE(service.Start(&error)) << error;
  bool listening = false;
  for (int i = 0; i < kTimeoutMs / 10 && !listening; i++) {
    base::Status status;
    listening = ipc::UnixSocket::Connect(socket_, &status) != nullptr;
    if (!listening) {
      ASSERT_FALSE(service.Wait(10)) << service.output();
    }
  }
  ASSERT_TRUE(listening) << service.output();

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
  // Each thread also wrote 2-3 descriptor packets (not TrackEvents).
  EXPECT_EQ(result.packets_begun - result.events_emitted, 2u * 2u + 1u);
  EXPECT_EQ(result.packets_committed + result.packets_dropped,
            result.packets_begun);
  EXPECT_EQ(count.packets_dropped_by_producers, result.packets_dropped);
  EXPECT_EQ(count.chunks_discarded, 0u);
  // No silent loss: every packet the writers did not count as dropped is in
  // the trace (the descriptors too: with a 64 KiB ring one thread may fill
  // it before the other wrote its own).
  EXPECT_EQ(result.packets_begun - count.track_events - count.track_descriptors,
            result.packets_dropped);
  EXPECT_LE(count.track_events, result.events_emitted);
}

TEST_F(LoadgenServiceTest, DrainFlagsOutOfRangeAreRefused) {
  EXPECT_EQ(RunServiceToExit({"--drain-tick-us", "99"}), 2);
  EXPECT_EQ(RunServiceToExit({"--drain-tick-us", "60000001"}), 2);
  EXPECT_EQ(RunServiceToExit({"--head-grace-us", "1000001"}), 2);
  EXPECT_EQ(RunServiceToExit({"--nice", "20"}), 2);
  EXPECT_EQ(RunServiceToExit({"--nice=-21"}), 2);
  EXPECT_EQ(RunServiceToExit({"--nice", "x"}), 2);
}

}  // namespace
}  // namespace loadgen
}  // namespace ringtrace
