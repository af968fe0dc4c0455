/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Sessions with the real pieces: a ringtraced daemon (no --out), an app on
// ringtrace::Tracing with a "track_event" data source, and ConsumerClient
// starting and stopping two sessions at once. Each session's file holds
// exactly the packets written for its instance while it ran.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace.pb.h"
#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "ringtrace/tracing.h"
#include "src/base/scoped_fd.h"
#include "src/base/test/subprocess.h"
#include "src/tracing/consumer/consumer_client.h"
#include "src/tracing/test/ringtraced_process.h"
#include "src/tracing/test/tagged_packets.h"

namespace ringtrace {
namespace test {
namespace {

using base::Subprocess;
using consumer::ConsumerClient;
using perfetto::protos::TraceConfig;
using shm_ring::TraceWriterV2;
using test::CountTagged;
using test::WriteTagged;

// Deadlines against hangs on a loaded machine, not timing assertions.
constexpr int kTimeoutMs = 120000;

// Records the instances the service starts and stops.
class RecordingHandler : public DataSourceHandler {
 public:
  void OnStart(const DataSourceInstanceConfig& config) override {
    std::lock_guard<std::mutex> lock(mutex_);
    started_.push_back(config);
    cv_.notify_all();
  }
  void OnStop(uint32_t instance_id) override {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_.insert(instance_id);
    cv_.notify_all();
  }
  void OnFlush(uint32_t) override {}

  // The |n|th instance started (1-based), once it is.
  bool WaitForStart(size_t n, DataSourceInstanceConfig* config) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!cv_.wait_for(lock, std::chrono::milliseconds(kTimeoutMs),
                      [&] { return started_.size() >= n; })) {
      return false;
    }
    *config = started_[n - 1];
    return true;
  }
  bool stopped(uint32_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopped_.count(id) != 0;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<DataSourceInstanceConfig> started_;
  std::set<uint32_t> stopped_;
};

TraceConfig Config(uint32_t size_kb, const std::string& producer_filter) {
  TraceConfig config;
  config.add_buffers()->set_size_kb(size_kb);
  TraceConfig::DataSource* ds = config.add_data_sources();
  ds->mutable_config()->set_name("track_event");
  if (!producer_filter.empty())
    ds->add_producer_name_filter(producer_filter);
  return config;
}

class SessionsEndToEndTest : public EndToEndFixture {};

TEST_F(SessionsEndToEndTest, TwoSessionsAtOnceEachGetsItsInstancesPackets) {
  const std::string consumer_socket = dir_ + "/consumer.sock";
  Subprocess service({bin_ + "/ringtraced", "--producer-socket", socket_,
                      "--consumer-socket", consumer_socket});
  std::string error = StartRingtraced(&service, socket_, kTimeoutMs);
  ASSERT_TRUE(error.empty()) << error;

  TracingOptions options;
  options.producer.socket_path = socket_;
  options.producer.name = "sessions_app";
  Tracing tracing(options);
  RecordingHandler handler;
  ASSERT_TRUE(tracing.RegisterDataSource("track_event", &handler).ok());
  ASSERT_TRUE(tracing.Start().ok());
  ASSERT_EQ(tracing.WaitForConnection(0, kTimeoutMs), 1u);

  base::Status status;
  std::unique_ptr<ConsumerClient> consumer =
      ConsumerClient::Connect(consumer_socket, kTimeoutMs, &status);
  ASSERT_TRUE(consumer) << status.message();
  const std::string path_a = dir_ + "/a.pftrace";
  const std::string path_b = dir_ + "/b.pftrace";
  base::ScopedFd fd_a(
      open(path_a.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  base::ScopedFd fd_b(
      open(path_b.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  uint64_t session_a = 0, session_b = 0;
  // The registration may reach the service after the session started: the
  // instance starts then.
  ASSERT_TRUE(
      consumer->EnableTracing(Config(1024, ""), fd_a.get(), &session_a).ok());
  DataSourceInstanceConfig inst_a, inst_b;
  ASSERT_TRUE(handler.WaitForStart(1, &inst_a));
  status = consumer->EnableTracing(Config(512, "sessions_app"), fd_b.get(),
                                   &session_b);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(handler.WaitForStart(2, &inst_b));
  EXPECT_NE(inst_a.target_buffer, inst_b.target_buffer);
  EXPECT_NE(inst_a.instance_id, inst_b.instance_id);

  std::shared_ptr<Producer> producer = tracing.GetProducer();
  ASSERT_TRUE(producer);
  std::unique_ptr<TraceWriterV2> wa =
      producer->NewTraceWriter(inst_a.target_buffer, &status);
  std::unique_ptr<TraceWriterV2> wb =
      producer->NewTraceWriter(inst_b.target_buffer, &status);
  ASSERT_TRUE(wa && wb);
  WriteTagged(wa.get(), "a-", 1000);
  WriteTagged(wb.get(), "b-", 500);

  protos::SessionSummary summary_a;
  status = consumer->DisableTracing(session_a, kTimeoutMs, &summary_a);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(handler.stopped(inst_a.instance_id));
  EXPECT_EQ(summary_a.packets_written(), 1000u);
  // B goes on; A's writer now writes into a buffer nobody may fill.
  WriteTagged(wb.get(), "b2-", 300);
  WriteTagged(wa.get(), "late-", 10);
  protos::SessionSummary summary_b;
  status = consumer->DisableTracing(session_b, kTimeoutMs, &summary_b);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(summary_b.packets_written(), 800u);

  EXPECT_EQ(CountTagged(path_a, "a-"), 1000u);
  EXPECT_EQ(CountTagged(path_a, "b"), 0u);
  EXPECT_EQ(CountTagged(path_b, "b-"), 500u);
  EXPECT_EQ(CountTagged(path_b, "b2-"), 300u);
  EXPECT_EQ(CountTagged(path_b, "a-"), 0u);
  EXPECT_EQ(CountTagged(path_b, "late-"), 0u);

  wa.reset();
  wb.reset();
  producer.reset();
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kTimeoutMs)) << service.output();
  EXPECT_EQ(service.exit_code(), 0) << service.output();
  EXPECT_NE(service.output().find("2 started, 2 written"), std::string::npos)
      << service.output();
  EXPECT_NE(service.output().find(" 0 protocol violations"), std::string::npos)
      << service.output();
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
