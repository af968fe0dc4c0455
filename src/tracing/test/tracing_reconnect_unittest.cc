/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace::Tracing with the real ringtraced binary: an app that starts
// before the service is picked up when it comes, and after the service
// restarts it connects again. Each service's trace holds exactly the
// packets written while the app was connected to it; a writer of the first
// connection refuses (and counts) what it is asked for afterwards.

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "ringtrace/tracing.h"
#include "src/base/test/subprocess.h"
#include "src/base/time.h"
#include "src/tracing/test/ringtraced_process.h"
#include "src/tracing/test/tagged_packets.h"

namespace ringtrace {
namespace test {
namespace {

using base::Subprocess;
using shm_ring::TraceWriterV2;
using test::CountTagged;
using test::WriteTagged;

// Deadlines against hangs on a loaded machine, not timing assertions.
constexpr int kProcessTimeoutMs = 120000;

// Registered as "track_event": the service accepts the registration (and,
// without sessions, never starts it).
class NoopHandler : public DataSourceHandler {
 public:
  void OnStart(const DataSourceInstanceConfig&) override { starts++; }
  void OnStop(uint32_t) override { stops++; }
  void OnFlush(uint32_t) override {}
  std::atomic<int> starts{0};
  std::atomic<int> stops{0};
};

template <typename F>
bool Eventually(F done) {
  const uint64_t deadline = base::MonotonicMs() + kProcessTimeoutMs;
  while (!done()) {
    if (base::MonotonicMs() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

class TracingReconnectTest : public EndToEndFixture {
 protected:
  void Stop(Subprocess* service) {
    service->Signal(SIGTERM);
    ASSERT_TRUE(service->Wait(kProcessTimeoutMs)) << service->output();
    ASSERT_EQ(service->exit_code(), 0) << service->output();
    EXPECT_NE(service->output().find(" 0 protocol violations"),
              std::string::npos)
        << service->output();
  }
};

TEST_F(TracingReconnectTest, AppStartedFirstIsPickedUpAndSurvivesARestart) {
  TracingOptions options;
  options.producer.socket_path = socket_;
  options.producer.name = "reconnect_app";
  options.min_backoff_ms = 10;
  options.max_backoff_ms = 200;
  Tracing tracing(options);
  NoopHandler handler;
  ASSERT_TRUE(tracing.RegisterDataSource("track_event", &handler).ok());
  ASSERT_TRUE(tracing.Start().ok());
  ASSERT_TRUE(
      Eventually([&] { return tracing.stats().connect_failures >= 1; }));

  const std::string trace1 = dir_ + "/first.pftrace";
  Subprocess first(
      {bin_ + "/ringtraced", "--socket", socket_, "--out", trace1});
  std::string error = StartRingtraced(&first, socket_, kProcessTimeoutMs);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(tracing.WaitForConnection(0, kProcessTimeoutMs), 1u);
  std::unique_ptr<TraceWriterV2> old_writer;
  {
    std::shared_ptr<Producer> producer = tracing.GetProducer();
    ASSERT_TRUE(producer);
    old_writer = producer->NewTraceWriter();
  }
  WriteTagged(old_writer.get(), "first-", 100);
  // The --out service starts track_event on each connection.
  ASSERT_TRUE(Eventually([&] { return handler.starts.load() == 1; }));
  Stop(&first);
  ASSERT_TRUE(Eventually([&] { return tracing.stats().disconnects == 1; }));
  WriteTagged(old_writer.get(), "late-", 10);
  EXPECT_EQ(old_writer->stats().packets_committed, 100u);
  EXPECT_EQ(old_writer->stats().packets_refused, 10u);

  const std::string trace2 = dir_ + "/second.pftrace";
  Subprocess second(
      {bin_ + "/ringtraced", "--socket", socket_, "--out", trace2});
  error = StartRingtraced(&second, socket_, kProcessTimeoutMs);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(tracing.WaitForConnection(1, kProcessTimeoutMs), 2u);
  {
    std::shared_ptr<Producer> producer = tracing.GetProducer();
    ASSERT_TRUE(producer);
    std::unique_ptr<TraceWriterV2> writer = producer->NewTraceWriter();
    WriteTagged(writer.get(), "second-", 50);
  }
  ASSERT_TRUE(Eventually([&] { return handler.starts.load() == 2; }));
  old_writer.reset();  // the first connection's Producer goes with it
  Stop(&second);

  EXPECT_EQ(CountTagged(trace1, "first-"), 100u);
  EXPECT_EQ(CountTagged(trace1, "second-"), 0u);
  EXPECT_EQ(CountTagged(trace1, "late-"), 0u);
  EXPECT_EQ(CountTagged(trace2, "second-"), 50u);
  EXPECT_EQ(CountTagged(trace2, "first-"), 0u);
  EXPECT_EQ(CountTagged(trace2, "late-"), 0u);
  // Each --out service started the track_event data source once on its
  // connection (docs/sessions.md, "One model of recording"); each instance
  // ended with its connection.
  EXPECT_EQ(handler.starts.load(), 2);
  EXPECT_TRUE(Eventually([&] { return handler.stops.load() == 2; }));
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
