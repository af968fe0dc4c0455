/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The in-process backend with real threads and real files: this process
// runs the service, is the producer (its TrackEvent macros through the
// backend's "track_event" data source) and the consumer (TracingSession on
// the backend's consumer socket). Each trace is decoded with libprotobuf
// and, where there is a trace_processor_shell, loaded into trace_processor
// with no health issue.

// Categories for this test only (see RT_TRACK_EVENT_NAMESPACE).
#define RT_TRACK_EVENT_NAMESPACE rt_in_process_backend_unittest_categories

#include "ringtrace/in_process_backend.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "ringtrace/track_event.h"
#include "src/base/scoped_fd.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/in_process/test/trace_checks.h"

RT_DEFINE_CATEGORIES("inproc.app", "inproc.other");

namespace ringtrace {
namespace {

namespace pb = perfetto::protos;
using test::DecodedEvents;
using test::DecodeEvents;

constexpr char kAppOnly[] = R"(
buffers { size_kb: 4096 }
data_sources {
  config {
    name: "track_event"
    track_event_config {
      disabled_categories: "*"
      enabled_categories: "inproc.app"
    }
  }
}
)";

std::unique_ptr<InProcessBackend> NewBackend(
    InProcessBackendOptions options = {}) {
  options.producer.name = "in_process_unittest";
  base::Status status;
  std::unique_ptr<InProcessBackend> backend =
      InProcessBackend::Create(options, &status);
  EXPECT_TRUE(backend) << status.message();
  return backend;
}

std::unique_ptr<TracingSession> NewSession(InProcessBackend* backend) {
  base::Status status;
  std::unique_ptr<TracingSession> session = backend->NewSession(&status);
  EXPECT_TRUE(session) << status.message();
  return session;
}

base::ScopedFd CreateFile(const std::string& path) {
  return base::ScopedFd(
      open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
}

// |n| "Work" slices (one argument) and as many "Never" instants of a
// category the session does not enable, on each of |threads| threads.
void WriteWork(int threads, int n) {
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; t++) {
    workers.emplace_back([n, t] {
      for (int i = 0; i < n; i++) {
        RT_TRACE_EVENT("inproc.app", "Work", "i", t * n + i);
        RT_TRACE_INSTANT("inproc.other", "Never");
      }
    });
  }
  for (std::thread& w : workers)
    w.join();
}

// A blocking session end to end, the trace into memory: the start barrier
// (the category is on when StartBlocking returns), two threads' slices, the
// stop, the trace decoded. The private directory and its sockets are the
// app user's alone while the backend lives.
TEST(InProcessBackendTest, RecordsTrackEventsIntoMemory) {
  std::unique_ptr<InProcessBackend> backend = NewBackend();
  ASSERT_TRUE(backend);
  struct stat st = {};
  ASSERT_EQ(lstat(backend->directory().c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, geteuid());
  for (const std::string& socket :
       {backend->producer_socket_path(), backend->consumer_socket_path()}) {
    ASSERT_EQ(lstat(socket.c_str(), &st), 0) << socket;
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }

  std::unique_ptr<TracingSession> session = NewSession(backend.get());
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->SetupFromText(kAppOnly).ok());
  EXPECT_FALSE(RT_TRACE_EVENT_CATEGORY_ENABLED("inproc.app"));
  const base::Status status = session->StartBlocking();
  ASSERT_TRUE(status.ok()) << status.message();
  // No wait: StartBlocking returned after the data source's start.
  EXPECT_TRUE(RT_TRACE_EVENT_CATEGORY_ENABLED("inproc.app"));
  EXPECT_FALSE(RT_TRACE_EVENT_CATEGORY_ENABLED("inproc.other"));
  EXPECT_TRUE(session->start_warnings().empty())
      << session->start_warnings()[0];

  constexpr int kThreads = 2;
  constexpr int kSlices = 500;
  WriteWork(kThreads, kSlices);
  ASSERT_TRUE(session->StopBlocking().ok());
  EXPECT_FALSE(RT_TRACE_EVENT_CATEGORY_ENABLED("inproc.app"));
  const TracingSessionSummary summary = session->summary();
  EXPECT_GT(summary.packets_written, 2u * kThreads * kSlices);
  EXPECT_EQ(summary.packets_lost, 0u);
  EXPECT_TRUE(summary.ended_by_service.empty()) << summary.ended_by_service;

  std::string trace;
  ASSERT_TRUE(session->ReadTraceBlocking(&trace).ok());
  const DecodedEvents events = DecodeEvents(trace, getpid());
  ASSERT_TRUE(events.parsed);
  EXPECT_TRUE(events.has_config);
  ASSERT_TRUE(events.has_stats);
  EXPECT_EQ(events.begins("Work"), uint64_t{kThreads} * kSlices);
  EXPECT_EQ(events.slice_ends, uint64_t{kThreads} * kSlices);
  EXPECT_EQ(events.instants_of("Never"), 0u);
  EXPECT_EQ(test::PacketsLostInStats(events.stats), 0u);
  EXPECT_EQ(events.stats.buffer_stats(0).chunks_discarded(), 0u);
  EXPECT_EQ(events.stats.buffer_stats(0).chunks_overwritten(), 0u);
}

// Two sessions at once on one backend: each gets the categories it enables
// and nothing else.
TEST(InProcessBackendTest, TwoSessionsEachGetTheirCategories) {
  std::unique_ptr<InProcessBackend> backend = NewBackend();
  ASSERT_TRUE(backend);
  std::unique_ptr<TracingSession> app = NewSession(backend.get());
  std::unique_ptr<TracingSession> other = NewSession(backend.get());
  ASSERT_TRUE(app && other);
  ASSERT_TRUE(app->SetupFromText(kAppOnly).ok());
  pb::TraceConfig config;
  config.add_buffers()->set_size_kb(1024);
  pb::DataSourceConfig* ds = config.add_data_sources()->mutable_config();
  ds->set_name("track_event");
  ds->mutable_track_event_config()->add_disabled_categories("*");
  ds->mutable_track_event_config()->add_enabled_categories("inproc.other");
  ASSERT_TRUE(other->Setup(config).ok());
  ASSERT_TRUE(app->StartBlocking().ok());
  ASSERT_TRUE(other->StartBlocking().ok());
  WriteWork(1, 100);
  ASSERT_TRUE(app->StopBlocking().ok());
  ASSERT_TRUE(other->StopBlocking().ok());
  std::string app_trace, other_trace;
  ASSERT_TRUE(app->ReadTraceBlocking(&app_trace).ok());
  ASSERT_TRUE(other->ReadTraceBlocking(&other_trace).ok());
  const DecodedEvents a = DecodeEvents(app_trace, getpid());
  const DecodedEvents o = DecodeEvents(other_trace, getpid());
  EXPECT_EQ(a.begins("Work"), 100u);
  EXPECT_EQ(a.instants_of("Never"), 0u);
  EXPECT_EQ(o.begins("Work"), 0u);
  EXPECT_EQ(o.slice_ends, 0u);
  EXPECT_EQ(o.instants_of("Never"), 100u);
}

// Waits for a callback's status.
class Done {
 public:
  TracingSession::DoneCallback callback() {
    return [this](base::Status status) {
      std::lock_guard<std::mutex> lock(mutex_);
      status_ = status;
      calls_++;
      cv_.notify_all();
    };
  }
  base::Status Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::seconds(60),
                             [&] { return calls_ > 0; }));
    return status_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  base::Status status_;
  int calls_ = 0;
};

// The callback forms, the trace into the caller's file, the stats and a
// clone while the session runs; the trace and the clone load into
// trace_processor with no health issue.
TEST(InProcessBackendTest, CallbacksFileStatsAndClone) {
  base::TempDir dir("ringtrace_inproc");
  std::unique_ptr<InProcessBackend> backend = NewBackend();
  ASSERT_TRUE(backend);
  std::unique_ptr<TracingSession> session = NewSession(backend.get());
  ASSERT_TRUE(session);
  const std::string trace_path = dir.File("trace.pftrace");
  const std::string clone_path = dir.File("clone.pftrace");
  base::ScopedFd fd = CreateFile(trace_path);
  base::ScopedFd clone_fd = CreateFile(clone_path);
  ASSERT_TRUE(fd.valid() && clone_fd.valid());
  ASSERT_TRUE(session->SetupFromText(kAppOnly, fd.get()).ok());
  std::mutex mutex;
  int on_stop_calls = 0;
  session->SetOnStopCallback([&] {
    std::lock_guard<std::mutex> lock(mutex);
    on_stop_calls++;
  });

  Done started;
  session->Start(started.callback());
  ASSERT_TRUE(started.Wait().ok());
  EXPECT_TRUE(RT_TRACE_EVENT_CATEGORY_ENABLED("inproc.app"));
  WriteWork(1, 200);
  Done flushed;
  session->Flush(0, flushed.callback());
  ASSERT_TRUE(flushed.Wait().ok());
  std::string stats_bytes;
  ASSERT_TRUE(session->GetTraceStatsBlocking(&stats_bytes).ok());
  pb::TraceStats stats;
  ASSERT_TRUE(stats.ParseFromString(stats_bytes));
  ASSERT_EQ(stats.buffer_stats_size(), 1);
  EXPECT_GT(stats.buffer_stats(0).bytes_written(), 0u);
  ASSERT_TRUE(session->CloneBlocking(clone_fd.get()).ok());
  WriteWork(1, 100);
  Done stopped;
  session->Stop(stopped.callback());
  ASSERT_TRUE(stopped.Wait().ok());
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(on_stop_calls, 1);
  }
  std::string trace;
  EXPECT_FALSE(session->ReadTraceBlocking(&trace).ok())
      << "the trace went to the caller's file";

  const DecodedEvents all =
      DecodeEvents(test::ReadFileBytes(trace_path), getpid());
  const DecodedEvents clone =
      DecodeEvents(test::ReadFileBytes(clone_path), getpid());
  ASSERT_TRUE(all.parsed && clone.parsed);
  EXPECT_EQ(all.begins("Work"), 300u);
  EXPECT_EQ(clone.begins("Work"), 200u);  // flushed before the clone
  EXPECT_TRUE(clone.has_stats && clone.has_config);

  const std::string tp = test::TraceProcessorForTests();
  if (tp.empty())
    return;
  EXPECT_EQ(test::CheckWithTraceProcessor(tp, trace_path, dir.path(), "Work"),
            300);
  EXPECT_EQ(test::CheckWithTraceProcessor(tp, clone_path, dir.path(), "Work"),
            200);
}

// The private directory: under the parent asked for, removed at the end
// with the sockets; a file someone else put there is never removed (and
// the directory stays with it). A parent that does not exist fails the
// start and leaves nothing.
TEST(InProcessBackendTest, RemovesOnlyWhatItCreated) {
  base::TempDir parent("ringtrace_inproc_parent");
  InProcessBackendOptions options;
  options.parent_directory = parent.path();
  std::string dir;
  {
    std::unique_ptr<InProcessBackend> backend = NewBackend(options);
    ASSERT_TRUE(backend);
    dir = backend->directory();
    EXPECT_EQ(dir.rfind(parent.path() + "/ringtrace-inproc-", 0), 0u) << dir;
  }
  struct stat st = {};
  EXPECT_NE(lstat(dir.c_str(), &st), 0) << dir << " was left";

  std::string producer_socket, consumer_socket, stranger;
  {
    std::unique_ptr<InProcessBackend> backend = NewBackend(options);
    ASSERT_TRUE(backend);
    dir = backend->directory();
    producer_socket = backend->producer_socket_path();
    consumer_socket = backend->consumer_socket_path();
    stranger = dir + "/stranger";
    base::ScopedFd f = CreateFile(stranger);
    ASSERT_TRUE(f.valid());
  }
  EXPECT_NE(lstat(producer_socket.c_str(), &st), 0);
  EXPECT_NE(lstat(consumer_socket.c_str(), &st), 0);
  EXPECT_EQ(lstat(stranger.c_str(), &st), 0) << "a file it did not create";
  EXPECT_EQ(lstat(dir.c_str(), &st), 0);

  options.parent_directory = parent.File("missing");
  base::Status status;
  EXPECT_FALSE(InProcessBackend::Create(options, &status));
  EXPECT_NE(status.message().find("mkdtemp"), std::string::npos)
      << status.message();
  EXPECT_NE(lstat(options.parent_directory.c_str(), &st), 0);

  InProcessBackendOptions bad;
  bad.drain_period_ms = 0;
  EXPECT_FALSE(InProcessBackend::Create(bad, &status));
  EXPECT_NE(status.message().find("drain_period_ms"), std::string::npos);
}

// The example app traces itself into a file with no daemon: the file
// decodes and loads into trace_processor.
TEST(InProcessBackendTest, ExampleAppTracesItselfWithNoDaemon) {
  base::TempDir dir("ringtrace_inproc_example");
  const std::string out = dir.File("example.pftrace");
  base::Subprocess app(
      {base::ExecutableDir() + "/ringtrace_in_process_example_app", "--out",
       out, "--threads", "2", "--frames", "20"});
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  ASSERT_TRUE(app.Wait(60000)) << app.output();
  ASSERT_TRUE(app.ExitedOk()) << app.DescribeStatus() << app.output();
  EXPECT_NE(app.output().find("0 lost"), std::string::npos) << app.output();
  const DecodedEvents events =
      DecodeEvents(test::ReadFileBytes(out), app.pid());
  ASSERT_TRUE(events.parsed);
  EXPECT_EQ(events.begins("Frame"), 40u);
  EXPECT_EQ(events.counters, 40u);
  EXPECT_EQ(test::PacketsLostInStats(events.stats), 0u);
  const std::string tp = test::TraceProcessorForTests();
  if (!tp.empty()) {
    EXPECT_EQ(test::CheckWithTraceProcessor(tp, out, dir.path(), "Frame"), 40);
  }
}

}  // namespace
}  // namespace ringtrace
