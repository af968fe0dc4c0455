/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// A producer killed during a session is marked in that session's trace
// (TraceExporter::WriteProducerEnd): an instant on the service's
// "ringtrace: producers that died" track naming it and its pid, when the
// service saw its connection close; the slice it left open stays open
// (trace_processor: dur -1), and nothing else is flagged.

// Categories for this test only (see RT_TRACK_EVENT_NAMESPACE).
#define RT_TRACK_EVENT_NAMESPACE rt_producer_death_end_to_end_categories

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "ringtrace/tracing.h"
#include "ringtrace/track_event.h"
#include "ringtrace/track_event_data_source.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/trace_processor_stats.h"
#include "src/tracing/service/trace_export/trace_exporter.h"
#include "src/tracing/test/sessions_lifecycle_fixture.h"

RT_DEFINE_CATEGORIES("death");

namespace ringtrace {
namespace test {
namespace {

using trace_export::TraceExporter;

class ProducerDeathEndToEndTest : public SessionsLifecycleFixture {
 protected:
  // Forks an app that records "death" slices through the sessions model:
  // once a session enables the category it begins "left_open", writes one
  // byte to |ready| and waits to be killed.
  pid_t ForkApp(int ready) {
    const pid_t pid = fork();
    if (pid != 0)
      return pid;
    TracingOptions options;
    options.producer.socket_path = socket_;
    options.producer.name = "doomed_app";
    Tracing tracing(options);
    if (!track_event::RegisterTrackEventDataSource(&tracing).ok() ||
        !tracing.Start().ok()) {
      _exit(3);
    }
    while (track_event::CategoryMask("death") == 0)
      usleep(1000);
    RT_TRACE_EVENT_BEGIN("death", "left_open");
    RT_TRACE_EVENT_BEGIN("death", "closed");
    RT_TRACE_EVENT_END("death");
    const char byte = 1;
    if (write(ready, &byte, 1) != 1)
      _exit(4);
    for (;;)
      pause();
  }

  // The service no longer lists |pid| among its producers.
  bool WaitUntilGone(consumer::ConsumerClient* c, pid_t pid) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(kTimeoutMs);
    while (std::chrono::steady_clock::now() < deadline) {
      protos::ServiceState state;
      if (!c->QueryServiceState(&state).ok())
        return false;
      bool listed = false;
      for (const auto& p : state.producers())
        listed = listed || p.pid() == pid;
      if (!listed)
        return true;
      usleep(2000);
    }
    return false;
  }
};

TEST_F(ProducerDeathEndToEndTest, KilledProducerIsMarkedInItsSessionsTrace) {
  std::unique_ptr<base::Subprocess> service = StartService({});
  ASSERT_TRUE(service);
  std::unique_ptr<consumer::ConsumerClient> c = ConnectConsumer();
  ASSERT_TRUE(c);
  perfetto::protos::TraceConfig config;
  config.add_buffers()->set_size_kb(1024);
  auto* ds = config.add_data_sources()->mutable_config();
  ds->set_name("track_event");
  ds->mutable_track_event_config()->add_enabled_categories("death");
  const std::string path = dir_ + "/death.pftrace";
  base::ScopedFd fd = CreateTraceFile(path);
  uint64_t id = 0;
  ASSERT_TRUE(c->EnableTracing(config, fd.get(), &id).ok());

  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  const pid_t app = ForkApp(pipe_fds[1]);
  ASSERT_GT(app, 0);
  close(pipe_fds[1]);
  char byte = 0;
  ASSERT_EQ(read(pipe_fds[0], &byte, 1), 1) << "the app did not record";
  close(pipe_fds[0]);
  ASSERT_EQ(kill(app, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(app, &wstatus, 0), app);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << wstatus;
  ASSERT_TRUE(WaitUntilGone(c.get(), app));
  protos::SessionSummary summary;
  ASSERT_TRUE(c->DisableTracing(id, kTimeoutMs, &summary).ok());
  c.reset();
  StopService(service.get(), "ringtraced");

  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  perfetto::protos::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(bytes.str()));
  int descriptors = 0;
  int marks = 0;
  for (const auto& p : trace.packet()) {
    if (p.has_track_descriptor() &&
        p.track_descriptor().uuid() == TraceExporter::kProducerEndsTrackUuid) {
      ++descriptors;
      EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
      EXPECT_EQ(p.track_descriptor().name(), "ringtrace: producers that died");
    }
    if (!p.has_track_event() ||
        p.track_event().track_uuid() != TraceExporter::kProducerEndsTrackUuid)
      continue;
    ++marks;
    EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
    EXPECT_EQ(p.track_event().type(),
              perfetto::protos::TrackEvent::TYPE_INSTANT);
    EXPECT_EQ(p.track_event().name(),
              "producer \"doomed_app\" (pid " + std::to_string(app) +
                  ") died: its connection closed without a final report; "
                  "slices it left open did not end");
    ASSERT_EQ(p.track_event().debug_annotations_size(), 3);
    EXPECT_EQ(p.track_event().debug_annotations(0).name(), "pid");
    EXPECT_EQ(p.track_event().debug_annotations(0).int_value(), app);
    EXPECT_EQ(p.track_event().debug_annotations(1).int_value(),
              static_cast<int64_t>(getuid()));
    EXPECT_GT(p.timestamp(), 0u);
  }
  EXPECT_EQ(descriptors, 1);
  EXPECT_EQ(marks, 1);

  const std::string tp = TraceProcessorShellPath();
  if (tp.empty()) {
    GTEST_SKIP() << "no trace_processor_shell: set TRACE_PROCESSOR_SHELL to "
                    "Perfetto's trace_processor_shell";
  }
  std::string csv, error;
  ASSERT_TRUE(RunTraceProcessorQuery(
      tp, path, dir_,
      "select s.name, s.dur, t.name as track from slice s join track t on "
      "s.track_id = t.id order by s.ts;",
      &csv, &error))
      << error;
  EXPECT_NE(csv.find("\"left_open\",-1,"), std::string::npos) << csv;
  EXPECT_EQ(csv.find("\"closed\",-1,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("(pid " + std::to_string(app) +
                     ") died: its connection closed without a final report; "
                     "slices it left open did not end\",0,\"ringtrace: "
                     "producers that died\""),
            std::string::npos)
      << csv;
  std::vector<TraceProcessorStat> stats;
  ASSERT_TRUE(QueryNonZeroStats(tp, path, dir_, &stats, &error)) << error;
  for (const TraceProcessorStat& stat : stats) {
    EXPECT_NE(stat.severity, "error") << Describe(stat);
    EXPECT_NE(stat.severity, "data_loss") << Describe(stat);
  }
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
