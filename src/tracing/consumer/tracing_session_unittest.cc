/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace::TracingSession against a real ringtraced: this process is the
// consumer and, through ringtrace::Tracing and the track_event data source,
// the producer too, as an app that traces itself through the system
// service does.

// Categories for this test only (see RT_TRACK_EVENT_NAMESPACE).
#define RT_TRACK_EVENT_NAMESPACE rt_tracing_session_unittest_categories

#include "ringtrace/tracing_session.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace.pb.h"
#include "ringtrace/tracing.h"
#include "ringtrace/track_event.h"
#include "ringtrace/track_event_data_source.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/test/ringtraced_process.h"

RT_DEFINE_CATEGORIES("session.app", "session.other");

namespace ringtrace {
namespace {

namespace pb = perfetto::protos;

constexpr int kTimeoutMs = 20000;

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

class TracingSessionTest : public test::EndToEndFixture {
 protected:
  TracingSessionTest() : consumer_socket_(dir_ + "/consumer.sock") {}

  void SetUp() override {
    service_.reset(
        new base::Subprocess({bin_ + "/ringtraced", "--producer-socket",
                              socket_, "--consumer-socket", consumer_socket_}));
    const std::string error =
        test::StartRingtraced(service_.get(), socket_, kTimeoutMs);
    ASSERT_TRUE(error.empty()) << error;
    TracingOptions options;
    options.producer.socket_path = socket_;
    options.producer.name = "tracing_session_unittest";
    tracing_.reset(new Tracing(options));
    ASSERT_TRUE(track_event::RegisterTrackEventDataSource(tracing_.get()).ok());
    ASSERT_TRUE(tracing_->Start().ok());
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(kTimeoutMs);
    while (!tracing_->GetProducer() &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_TRUE(tracing_->GetProducer()) << "the app never connected";
  }

  void TearDown() override {
    tracing_.reset();
    if (service_ && service_->running()) {
      service_->Signal(SIGTERM);
      ASSERT_TRUE(service_->Wait(kTimeoutMs)) << service_->output();
      EXPECT_EQ(service_->exit_code(), 0) << service_->output();
    }
  }

  std::unique_ptr<TracingSession> Connect() {
    TracingSessionOptions options;
    options.consumer_socket_path = consumer_socket_;
    options.timeout_ms = kTimeoutMs;
    base::Status status;
    std::unique_ptr<TracingSession> s =
        TracingSession::Connect(options, &status);
    EXPECT_TRUE(s) << status.message();
    return s;
  }

  // The track events named |name| in |trace_bytes| (names interned or
  // inline), with the pid of this process.
  static size_t CountEvents(const std::string& trace_bytes,
                            const std::string& name) {
    pb::Trace trace;
    EXPECT_TRUE(trace.ParseFromString(trace_bytes));
    std::map<uint64_t, std::string> names;  // interned event names
    size_t n = 0;
    for (const pb::TracePacket& p : trace.packet()) {
      if (p.has_interned_data()) {
        for (const auto& e : p.interned_data().event_names())
          names[e.iid()] = e.name();
      }
      if (!p.has_track_event() || p.trusted_pid() != getpid())
        continue;
      const pb::TrackEvent& ev = p.track_event();
      const std::string got = ev.has_name() ? ev.name() : names[ev.name_iid()];
      n += got == name && ev.type() == pb::TrackEvent::TYPE_SLICE_BEGIN;
    }
    return n;
  }

  std::string consumer_socket_;
  std::unique_ptr<base::Subprocess> service_;
  std::unique_ptr<Tracing> tracing_;
};

constexpr char kAppConfig[] = R"(
buffers { size_kb: 4096 }
data_sources {
  config {
    name: "track_event"
    track_event_config {
      disabled_categories: "*"
      enabled_categories: "session.app"
    }
  }
}
)";

// The blocking form end to end: a text config, start, events, stop, the
// trace read back from the session's own anonymous file.
TEST_F(TracingSessionTest, RecordsThisProcessIntoMemory) {
  std::unique_ptr<TracingSession> session = Connect();
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->SetupFromText(kAppConfig).ok());
  EXPECT_FALSE(session->SetupFromText(kAppConfig).ok()) << "set up twice";
  std::string trace;
  EXPECT_FALSE(session->ReadTraceBlocking(&trace).ok()) << "not ended yet";
  base::Status status = session->StartBlocking();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(session->start_warnings().empty());
  // The instance starts on this process's reader thread right after.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  while (!RT_TRACE_EVENT_CATEGORY_ENABLED("session.app") &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(RT_TRACE_EVENT_CATEGORY_ENABLED("session.app"));
  EXPECT_FALSE(RT_TRACE_EVENT_CATEGORY_ENABLED("session.other"));
  for (int i = 0; i < 50; ++i) {
    RT_TRACE_EVENT("session.app", "Work", "i", i);
    RT_TRACE_EVENT("session.other", "NotRecorded");
  }
  ASSERT_TRUE(session->FlushBlocking(5000).ok());
  std::string stats;
  ASSERT_TRUE(session->GetTraceStatsBlocking(&stats).ok());
  pb::TraceStats parsed;
  EXPECT_TRUE(parsed.ParseFromString(stats));
  status = session->StopBlocking();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(session->ended());
  EXPECT_GT(session->summary().packets_written, 0u);
  EXPECT_EQ(session->summary().packets_lost, 0u);
  EXPECT_TRUE(session->summary().ended_by_service.empty());
  ASSERT_TRUE(session->ReadTraceBlocking(&trace).ok());
  EXPECT_EQ(CountEvents(trace, "Work"), 50u);
  EXPECT_EQ(CountEvents(trace, "NotRecorded"), 0u);
  EXPECT_TRUE(session->StopBlocking().ok()) << "a second stop is a no-op";
}

// A typed config into the caller's file; a clone while it runs; what the
// service warns about at the start; a bad text config names the line.
TEST_F(TracingSessionTest, TypedConfigIntoAFileWithAClone) {
  std::unique_ptr<TracingSession> bad = Connect();
  ASSERT_TRUE(bad);
  const base::Status parse =
      bad->SetupFromText("buffers { size_kb: 4096 }\nno_such_field: 1\n");
  ASSERT_FALSE(parse.ok());
  EXPECT_NE(parse.message().find(":2:"), std::string::npos) << parse.message();

  pb::TraceConfig config;
  config.add_buffers()->set_size_kb(4096);
  auto* ds = config.add_data_sources()->mutable_config();
  ds->set_name("track_event");
  ds->mutable_track_event_config()->add_disabled_categories("*");
  ds->mutable_track_event_config()->add_enabled_categories("session.app");
  config.add_data_sources()->mutable_config()->set_name("nobody.provides");
  const std::string path = dir_ + "/typed.pftrace";
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  std::unique_ptr<TracingSession> session = Connect();
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->Setup(config, fd).ok());
  close(fd);  // the session holds its own duplicate
  ASSERT_TRUE(session->StartBlocking().ok());
  const std::vector<std::string> warnings = session->start_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("nobody.provides"), std::string::npos)
      << warnings[0];
  const std::string clone_path = dir_ + "/clone.pftrace";
  const int clone_fd =
      open(clone_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(clone_fd, 0);
  EXPECT_TRUE(session->CloneBlocking(clone_fd).ok());
  close(clone_fd);
  ASSERT_TRUE(session->StopBlocking().ok());
  std::string trace;
  EXPECT_FALSE(session->ReadTraceBlocking(&trace).ok())
      << "the trace went to the caller's file";
  pb::Trace file, clone;
  EXPECT_TRUE(file.ParseFromString(ReadWholeFile(path)));
  EXPECT_GT(file.packet_size(), 0);
  EXPECT_TRUE(clone.ParseFromString(ReadWholeFile(clone_path)));
  EXPECT_GT(clone.packet_size(), 0);
}

// The callback forms, and the on-stop callback of a session the service
// ends on its own (duration_ms) without any call waiting.
TEST_F(TracingSessionTest, CallbacksAndAnEndByTheService) {
  std::unique_ptr<TracingSession> session = Connect();
  ASSERT_TRUE(session);
  ASSERT_TRUE(
      session->SetupFromText(std::string(kAppConfig) + "duration_ms: 300\n")
          .ok());
  std::mutex mutex;
  std::condition_variable cv;
  bool started = false, stopped = false;
  base::Status start_status = base::ErrStatus("not called");
  session->SetOnStopCallback([&] {
    std::lock_guard<std::mutex> lock(mutex);
    stopped = true;
    cv.notify_all();
  });
  session->Start([&](base::Status status) {
    std::lock_guard<std::mutex> lock(mutex);
    started = true;
    start_status = status;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mutex);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::milliseconds(kTimeoutMs),
                          [&] { return started; }));
  EXPECT_TRUE(start_status.ok()) << start_status.message();
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::milliseconds(kTimeoutMs), [&] {
    return stopped;
  })) << "the service's end was not seen";
  lock.unlock();
  EXPECT_TRUE(session->ended());
  EXPECT_FALSE(session->summary().ended_by_service.empty());
  EXPECT_GE(session->summary().duration_ms, 300u);
  // Stopping an ended session is no error; the trace is there.
  EXPECT_TRUE(session->StopBlocking().ok());
  std::string trace;
  ASSERT_TRUE(session->ReadTraceBlocking(&trace).ok());
  pb::Trace parsed;
  EXPECT_TRUE(parsed.ParseFromString(trace));
  EXPECT_GT(parsed.packet_size(), 0);
}

// No service: a clear error, no crash, no hang past the timeout.
TEST(TracingSessionConnectTest, NoServiceIsAnError) {
  base::TempDir dir;
  TracingSessionOptions options;
  options.consumer_socket_path = dir.File("nothing.sock");
  options.timeout_ms = 200;
  base::Status status;
  EXPECT_FALSE(TracingSession::Connect(options, &status));
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("nothing.sock"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace ringtrace
