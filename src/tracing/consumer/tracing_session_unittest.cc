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
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace.pb.h"
#include "protos/ringtrace/ipc/consumer_port.pb.h"
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
    // Its data source and categories are registered after the connection:
    // until the service lists them, a session would warn about them.
    std::unique_ptr<TracingSession> observer = Connect();
    ASSERT_TRUE(observer);
    while (!FindThisProducer(observer.get(), &state_) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_TRUE(FindThisProducer(observer.get(), &state_))
        << "the service never listed this process's data source: "
        << state_.DebugString();
  }

  // This process as a producer in the service's state (into |*state|), once
  // it declared its categories; null before.
  static const protos::ServiceState::Producer* FindThisProducer(
      TracingSession* session,
      protos::ServiceState* state) {
    EXPECT_TRUE(session->QueryServiceStateBlocking(state).ok());
    for (const auto& p : state->producers()) {
      if (p.pid() == getpid() && p.categories_size() > 0)
        return &p;
    }
    return nullptr;
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

  // Waits until the session's data source instance in this process runs.
  static void WaitForCategory() {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(kTimeoutMs);
    while (!RT_TRACE_EVENT_CATEGORY_ENABLED("session.app") &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(RT_TRACE_EVENT_CATEGORY_ENABLED("session.app"));
  }

  // A trace file of the test's directory, open for writing (-1 on failure).
  int OpenTraceFile(const std::string& name) {
    const std::string path = dir_ + "/" + name;
    return open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  }

  // Whether the service lists session |id| (asked on |session|).
  static bool ServiceLists(TracingSession* session, uint64_t id) {
    protos::ServiceState state;
    EXPECT_TRUE(session->QueryServiceStateBlocking(&state).ok());
    for (const auto& s : state.sessions()) {
      if (s.id() == id)
        return true;
    }
    return false;
  }

  // Polls until the service no longer lists session |id|.
  static bool WaitUntilUnlisted(TracingSession* session, uint64_t id) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(kTimeoutMs);
    while (ServiceLists(session, id)) {
      if (std::chrono::steady_clock::now() > deadline)
        return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  std::string consumer_socket_;
  std::unique_ptr<base::Subprocess> service_;
  std::unique_ptr<Tracing> tracing_;
  protos::ServiceState state_;  // SetUp's last look
};

// Counts the on-stop callback's calls and lets a test wait for the first.
class OnStopCounter {
 public:
  std::function<void()> Callback() {
    return [this] {
      std::lock_guard<std::mutex> lock(mutex_);
      calls_++;
      cv_.notify_all();
    };
  }
  bool WaitForCall() {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, std::chrono::milliseconds(kTimeoutMs),
                        [&] { return calls_ > 0; });
  }
  int calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int calls_ = 0;
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

// The service's state as a tool shows it: this process as a producer with
// its data source and the categories it declared; the session by its id
// while it runs, gone once stopped.
TEST_F(TracingSessionTest, QueryServiceStateListsThisProducerAndTheSession) {
  std::unique_ptr<TracingSession> session = Connect();
  ASSERT_TRUE(session);
  EXPECT_EQ(session->session_id(), 0u);
  protos::ServiceState state;
  const protos::ServiceState::Producer* me =
      FindThisProducer(session.get(), &state);
  ASSERT_NE(me, nullptr) << state.DebugString();
  EXPECT_EQ(me->name(), "tracing_session_unittest");
  EXPECT_EQ(me->uid(), static_cast<uint32_t>(getuid()));
  ASSERT_EQ(me->data_sources_size(), 1);
  EXPECT_EQ(me->data_sources(0), "track_event");
  std::vector<std::string> categories;
  for (const auto& ds : me->categories()) {
    EXPECT_EQ(ds.data_source(), "track_event");
    for (const auto& c : ds.categories())
      categories.push_back(c.name());
  }
  EXPECT_NE(std::find(categories.begin(), categories.end(), "session.app"),
            categories.end());
  EXPECT_NE(std::find(categories.begin(), categories.end(), "session.other"),
            categories.end());
  EXPECT_EQ(state.sessions_size(), 0);

  ASSERT_TRUE(session->SetupFromText(kAppConfig).ok());
  ASSERT_TRUE(session->StartBlocking().ok());
  const uint64_t id = session->session_id();
  EXPECT_NE(id, 0u);
  ASSERT_TRUE(session->QueryServiceStateBlocking(&state).ok());
  ASSERT_EQ(state.sessions_size(), 1);
  EXPECT_EQ(state.sessions(0).id(), id);
  ASSERT_EQ(state.sessions(0).buffers_size(), 1);
  EXPECT_EQ(state.sessions(0).buffers(0).size_bytes(), 4096u * 1024);
  ASSERT_TRUE(session->StopBlocking().ok());
  EXPECT_EQ(session->session_id(), id) << "kept after the end";
  EXPECT_FALSE(ServiceLists(session.get(), id));
}

// Detach, then attach from another TracingSession (as another process
// would) and stop: one trace in the detacher's file, with what was
// recorded while no consumer owned the session.
TEST_F(TracingSessionTest, DetachThenAttachAndStop) {
  const int fd = OpenTraceFile("detached.pftrace");
  ASSERT_GE(fd, 0);
  std::unique_ptr<TracingSession> first = Connect();
  ASSERT_TRUE(first);
  ASSERT_TRUE(first->SetupFromText(kAppConfig, fd).ok());
  close(fd);
  ASSERT_TRUE(first->StartBlocking().ok());
  const uint64_t id = first->session_id();
  bool detached = true;
  ASSERT_TRUE(first->IsDetachedBlocking("ts.key", &detached).ok());
  EXPECT_FALSE(detached);
  base::Status status = first->DetachBlocking("ts.key");
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_FALSE(first->StopBlocking().ok()) << "not this object's any more";
  EXPECT_FALSE(first->ended());
  first.reset();  // no stop: the session goes on

  WaitForCategory();
  for (int i = 0; i < 20; ++i)
    RT_TRACE_EVENT("session.app", "WhileDetached", "i", i);

  std::unique_ptr<TracingSession> second = Connect();
  ASSERT_TRUE(second);
  EXPECT_TRUE(ServiceLists(second.get(), id));
  ASSERT_TRUE(second->IsDetachedBlocking("ts.key", &detached).ok());
  EXPECT_TRUE(detached);
  OnStopCounter on_stop;
  second->SetOnStopCallback(on_stop.Callback());
  status = second->AttachBlocking("ts.key");
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_FALSE(second->AttachBlocking("ts.key").ok()) << "attached twice";
  EXPECT_EQ(second->session_id(), id);
  EXPECT_TRUE(second->started());
  EXPECT_FALSE(second->ended());
  ASSERT_TRUE(second->StopBlocking().ok());
  EXPECT_EQ(on_stop.calls(), 1);
  EXPECT_TRUE(second->summary().error.empty()) << second->summary().error;
  EXPECT_GT(second->summary().packets_written, 0u);
  ASSERT_TRUE(second->IsDetachedBlocking("ts.key", &detached).ok());
  EXPECT_FALSE(detached);
  std::string trace;
  EXPECT_FALSE(second->ReadTraceBlocking(&trace).ok())
      << "the trace is in the detacher's file";
  EXPECT_EQ(
      CountEvents(ReadWholeFile(dir_ + "/detached.pftrace"), "WhileDetached"),
      20u);
}

// What cannot be detached, and a key the client refuses before asking.
TEST_F(TracingSessionTest, DetachRefusals) {
  std::unique_ptr<TracingSession> session = Connect();
  ASSERT_TRUE(session);
  EXPECT_FALSE(session->DetachBlocking("k").ok()) << "nothing started";
  bool detached = true;
  EXPECT_FALSE(session->IsDetachedBlocking("bad key!", &detached).ok());
  ASSERT_TRUE(session->SetupFromText(kAppConfig).ok());
  ASSERT_TRUE(session->StartBlocking().ok());
  const base::Status status = session->DetachBlocking("k");
  EXPECT_FALSE(status.ok()) << "its anonymous file would have no reader";
  EXPECT_NE(status.message().find("output fd"), std::string::npos)
      << status.message();
  EXPECT_FALSE(session->DetachBlocking("bad key!").ok());
  ASSERT_TRUE(session->StopBlocking().ok());
}

// A session that ended (duration_ms) while detached: the attach gets its
// end, and the on-stop callback is called once.
TEST_F(TracingSessionTest, AttachToASessionThatEndedWhileDetached) {
  const int fd = OpenTraceFile("ended.pftrace");
  ASSERT_GE(fd, 0);
  std::unique_ptr<TracingSession> first = Connect();
  ASSERT_TRUE(first);
  ASSERT_TRUE(
      first->SetupFromText(std::string(kAppConfig) + "duration_ms: 100\n", fd)
          .ok());
  close(fd);
  ASSERT_TRUE(first->StartBlocking().ok());
  const uint64_t id = first->session_id();
  ASSERT_TRUE(first->DetachBlocking("ended.key").ok());
  first.reset();

  std::unique_ptr<TracingSession> second = Connect();
  ASSERT_TRUE(second);
  ASSERT_TRUE(WaitUntilUnlisted(second.get(), id)) << "never ended";
  bool detached = false;
  ASSERT_TRUE(second->IsDetachedBlocking("ended.key", &detached).ok());
  EXPECT_TRUE(detached) << "an ended detached session waits for its owner";
  OnStopCounter on_stop;
  second->SetOnStopCallback(on_stop.Callback());
  ASSERT_TRUE(second->AttachBlocking("ended.key").ok());
  EXPECT_EQ(second->session_id(), id);
  bool ended = false;
  ASSERT_TRUE(second->WaitForEndBlocking(kTimeoutMs, &ended).ok());
  ASSERT_TRUE(ended);
  EXPECT_TRUE(on_stop.WaitForCall());
  EXPECT_TRUE(second->summary().error.empty()) << second->summary().error;
  EXPECT_FALSE(second->summary().connection_lost);
  EXPECT_GE(second->summary().duration_ms, 100u);
  EXPECT_TRUE(second->StopBlocking().ok()) << "ended: nothing to stop";
  EXPECT_EQ(on_stop.calls(), 1);
  pb::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(ReadWholeFile(dir_ + "/ended.pftrace")));
  EXPECT_GT(trace.packet_size(), 0);
}

// Abort(): the connection is shut down, the session ends without a trace
// (the service frees it and writes nothing), later calls fail.
TEST_F(TracingSessionTest, AbortEndsTheSessionUnwritten) {
  const int fd = OpenTraceFile("aborted.pftrace");
  ASSERT_GE(fd, 0);
  std::unique_ptr<TracingSession> session = Connect();
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->SetupFromText(kAppConfig, fd).ok());
  close(fd);
  OnStopCounter on_stop;
  session->SetOnStopCallback(on_stop.Callback());
  ASSERT_TRUE(session->StartBlocking().ok());
  const uint64_t id = session->session_id();
  session->Abort();
  bool ended = false;
  EXPECT_FALSE(session->WaitForEndBlocking(kTimeoutMs, &ended).ok());
  EXPECT_TRUE(ended);
  EXPECT_TRUE(session->summary().connection_lost);
  EXPECT_NE(session->summary().error.find("consumer socket"), std::string::npos)
      << session->summary().error;
  EXPECT_TRUE(on_stop.WaitForCall());
  const int clone_fd = OpenTraceFile("clone.pftrace");
  ASSERT_GE(clone_fd, 0);
  EXPECT_FALSE(session->CloneBlocking(clone_fd).ok());
  close(clone_fd);
  EXPECT_TRUE(session->StopBlocking().ok()) << "ended: nothing to stop";
  EXPECT_EQ(on_stop.calls(), 1);

  std::unique_ptr<TracingSession> other = Connect();
  ASSERT_TRUE(other);
  ASSERT_TRUE(WaitUntilUnlisted(other.get(), id));
  struct stat st = {};
  ASSERT_EQ(stat((dir_ + "/aborted.pftrace").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0) << "an aborted session is not written";
}

// The service going away ends a running session: the on-stop callback is
// called without any call waiting, and the summary says why.
TEST_F(TracingSessionTest, TheServiceGoingAwayEndsTheSession) {
  std::unique_ptr<TracingSession> session = Connect();
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->SetupFromText(kAppConfig).ok());
  OnStopCounter on_stop;
  session->SetOnStopCallback(on_stop.Callback());
  ASSERT_TRUE(session->StartBlocking().ok());
  service_->Signal(SIGKILL);
  ASSERT_TRUE(service_->Wait(kTimeoutMs));
  ASSERT_TRUE(on_stop.WaitForCall()) << "the broken connection was not seen";
  EXPECT_TRUE(session->ended());
  EXPECT_TRUE(session->summary().connection_lost);
  EXPECT_FALSE(session->summary().error.empty());
  std::string trace;
  EXPECT_FALSE(session->ReadTraceBlocking(&trace).ok()) << "no whole trace";
  EXPECT_FALSE(session->FlushBlocking(100).ok());
  EXPECT_EQ(on_stop.calls(), 1);
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
