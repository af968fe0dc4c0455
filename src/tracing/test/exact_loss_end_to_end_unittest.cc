/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Exact loss accounting with the real processes, in packets: a ringtraced
// child (daemon with a consumer session, or one session into --out) and a
// ringtrace_exact_loss_app child whose threads write TrackEvent counters
// through a small ring under the drop policy into a 256 KiB buffer, far
// less than they write, RING_BUFFER and DISCARD. The app prints its
// writers' own statistics (packets begun: its events and the TrackEvent
// SDK's clear and descriptor packets alike), and
//
//   written == the app's packets in the trace + the packets reported lost
//
// exactly, where reported lost is SessionSummary.packets_lost (the daemon)
// and, in the trace's TraceStats, ringtrace_packets_overwritten +
// ringtrace_packets_discarded + ringtrace_packets_dropped_by_producers +
// invalid_packets. The writers count a packet they could not finish as
// dropped even when its head reached the ring, and the buffer must not
// count that packet again (docs/trace_buffer_v2.md, "Packets
// overwritten").
//
// With $TRACE_PROCESSOR_SHELL (Perfetto's trace_processor_shell), the same
// traces are loaded into trace_processor: its stats (what the Perfetto UI
// shows) must show the loss, in Perfetto's own fields
// (docs/trace_export.md, "Perfetto's stats from ringtrace's counters").

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <sstream>
#include <string>
#include <vector>

#include "src/base/test/trace_processor_stats.h"
#include "src/tracing/test/sessions_lifecycle_fixture.h"

namespace ringtrace {
namespace test {
namespace {

using perfetto::protos::TraceConfig;

constexpr uint32_t kThreads = 4;
constexpr uint64_t kEventsPerThread = 100000;

struct WriterTotals {
  uint64_t begun = 0;
  uint64_t committed = 0;
  uint64_t dropped = 0;
};

// The STATS line of the app's output.
bool ParseStats(const std::string& output, WriterTotals* totals) {
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long b = 0, c = 0, d = 0;
    if (sscanf(line.c_str(), "STATS %llu %llu %llu", &b, &c, &d) == 3) {
      totals->begun = b;
      totals->committed = c;
      totals->dropped = d;
      return true;
    }
  }
  return false;
}

// The loss a trace's TraceStats report, in packets.
uint64_t LostInStats(const perfetto::protos::TraceStats& s) {
  return s.ringtrace_packets_overwritten() + s.ringtrace_packets_discarded() +
         s.ringtrace_packets_dropped_by_producers() + s.invalid_packets();
}

class ExactLossEndToEndTest : public SessionsLifecycleFixture,
                              public ::testing::WithParamInterface<
                                  TraceConfig::BufferConfig::FillPolicy> {
 protected:
  bool policy_is_ring_buffer() const {
    return GetParam() == TraceConfig::BufferConfig::RING_BUFFER;
  }

  // Runs the app (|mode|) to its end; its writers' totals.
  void RunApp(const std::string& mode, WriterTotals* totals, pid_t* pid) {
    base::Subprocess app({bin_ + "/ringtrace_exact_loss_app", "--socket",
                          socket_, "--mode", mode, "--threads",
                          std::to_string(kThreads), "--count",
                          std::to_string(kEventsPerThread), "--policy", "drop",
                          "--ring-kb", "64"});
    std::string error;
    ASSERT_TRUE(app.Start(&error)) << error;
    *pid = app.pid();
    ASSERT_TRUE(app.Wait(kTimeoutMs)) << app.output();
    ASSERT_TRUE(app.ExitedOk()) << app.DescribeStatus() << app.output();
    ASSERT_TRUE(ParseStats(app.output(), totals)) << app.output();
    ASSERT_NE(app.output().find("CLOSED"), std::string::npos) << app.output();
    EXPECT_EQ(totals->committed + totals->dropped, totals->begun);
  }

  // What every run must show: the equation, with loss in the buffer.
  void ExpectExact(const WriterTotals& w,
                   const DecodedTrace& trace,
                   uint64_t reported_lost) {
    ASSERT_TRUE(trace.parsed);
    ASSERT_TRUE(trace.has_stats);
    const perfetto::protos::TraceStats& s = trace.stats;
    printf(
        "exact loss %s: written %llu (committed %llu, dropped %llu), in "
        "trace %llu, overwritten %llu, discarded %llu, dropped by producers "
        "%llu, reported lost %llu\n",
        policy_is_ring_buffer() ? "RING_BUFFER" : "DISCARD",
        static_cast<unsigned long long>(w.begun),
        static_cast<unsigned long long>(w.committed),
        static_cast<unsigned long long>(w.dropped),
        static_cast<unsigned long long>(trace.app_packets),
        static_cast<unsigned long long>(s.ringtrace_packets_overwritten()),
        static_cast<unsigned long long>(s.ringtrace_packets_discarded()),
        static_cast<unsigned long long>(
            s.ringtrace_packets_dropped_by_producers()),
        static_cast<unsigned long long>(reported_lost));
    // The buffer lost packets (the app writes megabytes into 256 KiB).
    if (policy_is_ring_buffer())
      EXPECT_GT(s.ringtrace_packets_overwritten(), 0u);
    else
      EXPECT_GT(s.ringtrace_packets_discarded(), 0u);
    EXPECT_EQ(s.ringtrace_packets_dropped_by_producers(), w.dropped);
    EXPECT_EQ(LostInStats(s), reported_lost);
    EXPECT_EQ(trace.app_packets + reported_lost, w.begun)
        << "in trace " << trace.app_packets << ", reported lost "
        << reported_lost << ", stats " << s.ShortDebugString();
  }

  // The daemon: a consumer session with a 256 KiB buffer into |path|; the
  // app writes into it and exits, then the session ends. Its
  // SessionSummary.packets_lost in |*packets_lost|.
  void RunDaemonSession(const std::string& path,
                        WriterTotals* w,
                        pid_t* pid,
                        uint64_t* packets_lost) {
    std::unique_ptr<base::Subprocess> service = StartService({});
    ASSERT_TRUE(service);
    std::unique_ptr<consumer::ConsumerClient> consumer = ConnectConsumer();
    ASSERT_TRUE(consumer);
    base::ScopedFd fd = CreateTraceFile(path);
    uint64_t session = 0;
    ASSERT_TRUE(
        consumer->EnableTracing(AppConfig(256, GetParam()), fd.get(), &session)
            .ok());
    RunApp("session", w, pid);
    if (HasFatalFailure())
      return;
    protos::SessionSummary summary;
    ASSERT_TRUE(consumer->DisableTracing(session, kTimeoutMs, &summary).ok());
    *packets_lost = summary.packets_lost();
    StopService(service.get(), "1 started, 1 written");
  }

  // One session into --out |path| (ringtraced's default session).
  void RunSingleSession(const std::string& path, WriterTotals* w, pid_t* pid) {
    base::Subprocess service(
        {bin_ + "/ringtraced", "--socket", socket_, "--out", path,
         "--buffer-kb", "256", "--fill-policy",
         policy_is_ring_buffer() ? "ring_buffer" : "discard"});
    const std::string error = StartRingtraced(&service, socket_, kTimeoutMs);
    ASSERT_TRUE(error.empty()) << error;
    RunApp("single", w, pid);
    if (HasFatalFailure())
      return;
    service.Signal(SIGTERM);
    ASSERT_TRUE(service.Wait(kTimeoutMs)) << service.output();
    ASSERT_EQ(service.exit_code(), 0) << service.output();
  }

  // trace_processor's stats of the trace at |path| show its loss as
  // Perfetto's traced would: the writers' drops in the buffer's
  // traced_buf_trace_writer_packet_loss, the buffer's own in its
  // chunks_overwritten / chunks_discarded, no import error, and no data
  // loss but the one declared.
  void ExpectTraceProcessorShowsTheLoss(const std::string& tp,
                                        const std::string& path,
                                        const WriterTotals& w,
                                        const DecodedTrace& trace) {
    std::vector<TraceProcessorStat> stats;
    std::string error;
    ASSERT_TRUE(QueryNonZeroStats(tp, path, dir_, &stats, &error)) << error;
    for (const TraceProcessorStat& stat : stats)
      printf("trace_processor: %s\n", Describe(stat).c_str());
    ASSERT_GT(w.dropped, 0u);  // the ring is far too small for the app
    // Every packet the writers dropped, in the buffer they wrote.
    EXPECT_EQ(StatValue(stats, "traced_buf_trace_writer_packet_loss", 0),
              static_cast<int64_t>(w.dropped));
    const perfetto::protos::TraceStats::BufferStats& b =
        trace.stats.buffer_stats(0);
    if (policy_is_ring_buffer()) {
      EXPECT_GT(StatValue(stats, "traced_buf_chunks_overwritten", 0), 0);
      EXPECT_EQ(StatValue(stats, "traced_buf_chunks_overwritten", 0),
                static_cast<int64_t>(b.chunks_overwritten()));
      EXPECT_EQ(StatValue(stats, "traced_buf_bytes_overwritten", 0),
                static_cast<int64_t>(b.bytes_overwritten()));
    } else {
      EXPECT_GT(StatValue(stats, "traced_buf_chunks_discarded", 0), 0);
      EXPECT_EQ(StatValue(stats, "traced_buf_chunks_discarded", 0),
                static_cast<int64_t>(b.chunks_discarded()));
    }
    // Nothing was lost before the buffer, and a buffer's own rejected
    // chunks are not repeated at the top level.
    EXPECT_EQ(StatValue(stats, "traced_chunks_discarded"), 0);
    for (const TraceProcessorStat& stat : stats) {
      EXPECT_NE(stat.severity, "error") << Describe(stat);
      if (stat.severity == "data_loss") {
        EXPECT_EQ(stat.name, "traced_buf_trace_writer_packet_loss")
            << Describe(stat);
      }
    }
  }
};

TEST_P(ExactLossEndToEndTest, SessionWrittenEqualsInTracePlusLost) {
  const std::string path = dir_ + "/session.pftrace";
  WriterTotals w;
  pid_t pid = 0;
  uint64_t packets_lost = 0;
  ASSERT_NO_FATAL_FAILURE(RunDaemonSession(path, &w, &pid, &packets_lost));
  ExpectExact(w, DecodeTrace(path, pid), packets_lost);
}

TEST_P(ExactLossEndToEndTest, SingleSessionWrittenEqualsInTracePlusLost) {
  WriterTotals w;
  pid_t pid = 0;
  ASSERT_NO_FATAL_FAILURE(RunSingleSession(trace_, &w, &pid));
  const DecodedTrace trace = DecodeTrace(trace_, pid);
  ExpectExact(w, trace, LostInStats(trace.stats));
}

// Both modes' traces in trace_processor (the Perfetto UI's importer): the
// loss is in its stats table, in Perfetto's own fields. Needs
// $TRACE_PROCESSOR_SHELL.
TEST_P(ExactLossEndToEndTest, TraceProcessorShowsTheLoss) {
  const std::string tp = TraceProcessorShellPath();
  if (tp.empty()) {
    GTEST_SKIP() << "no trace_processor_shell: set TRACE_PROCESSOR_SHELL to "
                    "Perfetto's trace_processor_shell";
  }
  {
    const std::string path = dir_ + "/session.pftrace";
    WriterTotals w;
    pid_t pid = 0;
    uint64_t packets_lost = 0;
    ASSERT_NO_FATAL_FAILURE(RunDaemonSession(path, &w, &pid, &packets_lost));
    const DecodedTrace trace = DecodeTrace(path, pid);
    ASSERT_NO_FATAL_FAILURE(ExpectExact(w, trace, packets_lost));
    ExpectTraceProcessorShowsTheLoss(tp, path, w, trace);
  }
  {
    WriterTotals w;
    pid_t pid = 0;
    ASSERT_NO_FATAL_FAILURE(RunSingleSession(trace_, &w, &pid));
    const DecodedTrace trace = DecodeTrace(trace_, pid);
    ASSERT_NO_FATAL_FAILURE(ExpectExact(w, trace, LostInStats(trace.stats)));
    ExpectTraceProcessorShowsTheLoss(tp, trace_, w, trace);
  }
}

INSTANTIATE_TEST_SUITE_P(
    FillPolicies,
    ExactLossEndToEndTest,
    ::testing::Values(TraceConfig::BufferConfig::RING_BUFFER,
                      TraceConfig::BufferConfig::DISCARD),
    [](const ::testing::TestParamInfo<TraceConfig::BufferConfig::FillPolicy>&
           param_info) {
      return param_info.param == TraceConfig::BufferConfig::RING_BUFFER
                 ? "RingBuffer"
                 : "Discard";
    });

}  // namespace
}  // namespace test
}  // namespace ringtrace
