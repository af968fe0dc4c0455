/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// End to end over the real binaries: ringtraced and two instrumented apps
// (ringtrace_example_app) as separate processes, talking over the Unix
// socket and the shared rings exactly as in production. The trace file is
// then parsed with libprotobuf and checked against what the apps wrote.
//
// The apps use the stall policy with a long deadline, so no packet may be
// lost: every count below is exact.

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "src/base/test/subprocess.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/test/ringtraced_process.h"

namespace ringtrace {
namespace test {
namespace {

using base::Subprocess;

// Generous: the sanitizer builds on a loaded 2-vCPU machine are slow. These
// are deadlines against hangs, not timing assertions.
constexpr int kProcessTimeoutMs = 120000;

class EndToEndTest : public EndToEndFixture {
 protected:
  // Starts ringtraced and waits until it accepts connections.
  void StartService(Subprocess* service) {
    const std::string error =
        StartRingtraced(service, socket_, kProcessTimeoutMs);
    ASSERT_TRUE(error.empty()) << error;
  }

  std::vector<std::string> AppArgs(const std::string& name,
                                   int threads,
                                   int events) {
    return {bin_ + "/ringtrace_example_app",
            "--socket",
            socket_,
            "--name",
            name,
            "--threads",
            std::to_string(threads),
            "--events",
            std::to_string(events),
            "--policy",
            "stall",
            "--stall-timeout-ms",
            "30000"};
  }

  perfetto::protos::Trace ReadTrace() { return ReadTraceAt(trace_); }

  perfetto::protos::Trace ReadTraceAt(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in) << path;
    std::stringstream bytes;
    bytes << in.rdbuf();
    perfetto::protos::Trace trace;
    EXPECT_TRUE(trace.ParseFromString(bytes.str())) << path;
    return trace;
  }
};

// What the trace holds for one app process.
struct AppView {
  uint64_t track_events = 0;
  uint64_t slice_begins = 0;
  uint64_t slice_ends = 0;
  uint64_t counters = 0;
  uint64_t packets_with_loss = 0;
  std::set<uint32_t> sequences;
  std::set<int32_t> uids;
  std::string process_name;
  // tid -> thread_name, from the thread TrackDescriptors.
  std::map<int64_t, std::string> threads;
};

// Per producer process; the service's own packets (config, stats, clock
// snapshots) carry |service_pid| and are left out.
std::map<int32_t, AppView> ViewByPid(const perfetto::protos::Trace& trace,
                                     pid_t service_pid) {
  std::map<int32_t, AppView> apps;
  for (const perfetto::protos::TracePacket& p : trace.packet()) {
    if (!p.has_trusted_pid() || p.trusted_pid() == service_pid)
      continue;
    AppView& app = apps[p.trusted_pid()];
    app.sequences.insert(p.trusted_packet_sequence_id());
    app.uids.insert(p.trusted_uid());
    if (p.previous_packet_dropped() != 0)
      app.packets_with_loss++;
    if (p.has_track_descriptor() && p.track_descriptor().has_process())
      app.process_name = p.track_descriptor().process().process_name();
    if (p.has_track_descriptor() && p.track_descriptor().has_thread()) {
      app.threads[p.track_descriptor().thread().tid()] =
          p.track_descriptor().thread().thread_name();
    }
    if (!p.has_track_event())
      continue;
    app.track_events++;
    switch (p.track_event().type()) {
      case perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN:
        app.slice_begins++;
        break;
      case perfetto::protos::TrackEvent::TYPE_SLICE_END:
        app.slice_ends++;
        break;
      case perfetto::protos::TrackEvent::TYPE_COUNTER:
        app.counters++;
        break;
      default:
        break;
    }
  }
  return apps;
}

TEST_F(EndToEndTest, TwoAppsThroughRingtracedLoseNothing) {
  Subprocess service(
      {bin_ + "/ringtraced", "--socket", socket_, "--out", trace_});
  ASSERT_NO_FATAL_FAILURE(StartService(&service));

  Subprocess app_a(AppArgs("e2e_app_a", 2, 500));
  Subprocess app_b(AppArgs("e2e_app_b", 3, 301));  // a short last cycle
  std::string error;
  ASSERT_TRUE(app_a.Start(&error)) << error;
  ASSERT_TRUE(app_b.Start(&error)) << error;
  ASSERT_TRUE(app_a.Wait(kProcessTimeoutMs)) << app_a.output();
  ASSERT_TRUE(app_b.Wait(kProcessTimeoutMs)) << app_b.output();
  EXPECT_EQ(app_a.exit_code(), 0) << app_a.output();
  EXPECT_EQ(app_b.exit_code(), 0) << app_b.output();
  EXPECT_NE(app_a.output().find("dropped 0)"), std::string::npos)
      << app_a.output();

  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs)) << service.output();
  ASSERT_EQ(service.exit_code(), 0) << service.output();
  EXPECT_NE(service.output().find("2 producers seen"), std::string::npos)
      << service.output();

  const std::map<int32_t, AppView> apps = ViewByPid(ReadTrace(), service.pid());
  ASSERT_EQ(apps.size(), 2u);
  ASSERT_EQ(apps.count(app_a.pid()), 1u);
  ASSERT_EQ(apps.count(app_b.pid()), 1u);
  const AppView& a = apps.at(app_a.pid());
  const AppView& b = apps.at(app_b.pid());

  // Every TrackEvent arrived, attributed to the right process by the
  // kernel's credentials, one sequence per writer thread (the workers and
  // the main thread with its "run" slice, two events).
  EXPECT_EQ(a.track_events, 2u * 500 + 2);
  EXPECT_EQ(b.track_events, 3u * 301 + 2);
  EXPECT_EQ(a.sequences.size(), 3u);
  EXPECT_EQ(b.sequences.size(), 4u);
  for (uint32_t seq : a.sequences)
    EXPECT_EQ(b.sequences.count(seq), 0u) << "sequence ids must not collide";
  EXPECT_EQ(a.uids, std::set<int32_t>{static_cast<int32_t>(getuid())});
  EXPECT_EQ(a.process_name, "e2e_app_a");
  EXPECT_EQ(b.process_name, "e2e_app_b");
  // Every thread is described and named, the main thread (tid == pid) too.
  EXPECT_EQ(a.threads.size(), 3u);
  EXPECT_EQ(b.threads.size(), 4u);
  EXPECT_EQ(a.threads.count(app_a.pid()), 1u);
  EXPECT_EQ(b.threads.count(app_b.pid()), 1u);
  for (const AppView* app : {&a, &b}) {
    for (const auto& [tid, name] : app->threads)
      EXPECT_FALSE(name.empty()) << tid;
  }
  std::set<std::string> a_names;
  for (const auto& [tid, name] : a.threads)
    a_names.insert(name);
  EXPECT_EQ(a_names.count("worker-0"), 1u);
  EXPECT_EQ(a_names.count("worker-1"), 1u);

  // Slices are balanced and nothing was reported lost.
  EXPECT_EQ(a.slice_begins, a.slice_ends);
  EXPECT_EQ(b.slice_begins, b.slice_ends);
  EXPECT_GT(a.counters, 0u);
  EXPECT_EQ(a.packets_with_loss, 0u);
  EXPECT_EQ(b.packets_with_loss, 0u);
}

// SIGUSR1 writes a snapshot of the buffer while ringtraced goes on; the
// final trace at SIGTERM still holds everything the snapshot held.
TEST_F(EndToEndTest, Sigusr1WritesASnapshotAndTracingGoesOn) {
  const std::string snapshot = trace_ + ".snapshot-1";
  Subprocess service(
      {bin_ + "/ringtraced", "--socket", socket_, "--out", trace_});
  ASSERT_NO_FATAL_FAILURE(StartService(&service));

  Subprocess app(AppArgs("e2e_snapshot_app", 2, 300));
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  ASSERT_TRUE(app.Wait(kProcessTimeoutMs)) << app.output();
  ASSERT_EQ(app.exit_code(), 0) << app.output();

  service.Signal(SIGUSR1);
  // Bounded polling of ringtraced's stderr for its report.
  const std::string written = "snapshot 1 written to " + snapshot + " (";
  bool reported = false;
  for (int i = 0; i < kProcessTimeoutMs / 10 && !reported; i++) {
    reported = service.output().find(written) != std::string::npos;
    if (!reported) {
      ASSERT_FALSE(service.Wait(10)) << "ringtraced exited:\n"
                                     << service.output();
    }
  }
  ASSERT_TRUE(reported) << service.output();

  const std::map<int32_t, AppView> in_snapshot =
      ViewByPid(ReadTraceAt(snapshot), service.pid());
  ASSERT_EQ(in_snapshot.count(app.pid()), 1u);
  EXPECT_EQ(in_snapshot.at(app.pid()).track_events, 2u * 300 + 2);
  EXPECT_EQ(in_snapshot.at(app.pid()).packets_with_loss, 0u);
  EXPECT_EQ(in_snapshot.at(app.pid()).process_name, "e2e_snapshot_app");

  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs)) << service.output();
  ASSERT_EQ(service.exit_code(), 0) << service.output();
  EXPECT_NE(service.output().find("1 snapshots written, 0 failed"),
            std::string::npos)
      << service.output();
  const std::map<int32_t, AppView> in_trace =
      ViewByPid(ReadTrace(), service.pid());
  ASSERT_EQ(in_trace.count(app.pid()), 1u);
  EXPECT_EQ(in_trace.at(app.pid()).track_events, 2u * 300 + 2);
  // One sequence per writer thread (and the main thread) in both files.
  EXPECT_EQ(in_snapshot.at(app.pid()).sequences.size(), 3u);
  EXPECT_EQ(in_trace.at(app.pid()).sequences.size(), 3u);
  EXPECT_EQ(in_trace.at(app.pid()).packets_with_loss, 0u);
}

TEST_F(EndToEndTest, AppWithoutServiceFailsClearly) {
  Subprocess app(AppArgs("lonely", 1, 10));
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  ASSERT_TRUE(app.Wait(kProcessTimeoutMs));
  EXPECT_EQ(app.exit_code(), 1) << app.output();
  EXPECT_NE(app.output().find(socket_), std::string::npos) << app.output();
}

TEST_F(EndToEndTest, RingtracedRejectsBadFlagsAndUnwritableOutput) {
  Subprocess bad_flag({bin_ + "/ringtraced", "--socket", socket_, "--out",
                       trace_, "--fill-policy", "sometimes"});
  std::string error;
  ASSERT_TRUE(bad_flag.Start(&error)) << error;
  ASSERT_TRUE(bad_flag.Wait(kProcessTimeoutMs));
  EXPECT_EQ(bad_flag.exit_code(), 2) << bad_flag.output();
  EXPECT_NE(bad_flag.output().find("fill-policy"), std::string::npos)
      << bad_flag.output();

  Subprocess bad_out({bin_ + "/ringtraced", "--socket", socket_, "--out",
                      dir_ + "/no/such/dir/trace.pftrace"});
  ASSERT_TRUE(bad_out.Start(&error)) << error;
  ASSERT_TRUE(bad_out.Wait(kProcessTimeoutMs));
  EXPECT_EQ(bad_out.exit_code(), 1) << bad_out.output();
  struct stat st;
  EXPECT_NE(stat(socket_.c_str(), &st), 0) << "no socket left behind";
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
