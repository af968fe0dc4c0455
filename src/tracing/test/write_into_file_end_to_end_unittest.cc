/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// write_into_file with the real processes: a streamed session through a
// buffer far smaller than what an app writes. The app writes a known number
// of packets (ringtrace_session_app --count), and the file plus the loss the
// service reports must account for every one of them exactly: each packet is
// in the file or counted in SessionSummary.packets_lost, and every gap in a
// sequence is flagged with previous_packet_dropped.

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

#include <string>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "src/tracing/test/sessions_lifecycle_fixture.h"

namespace ringtrace {
namespace test {
namespace {

using perfetto::protos::TraceConfig;

// What one streamed session is made of.
struct StreamParams {
  TraceConfig::BufferConfig::FillPolicy policy =
      TraceConfig::BufferConfig::RING_BUFFER;
  uint32_t buffer_kb = 256;
  uint32_t period_ms = 100;
  uint32_t threads = 2;
  uint64_t events_per_thread = 100000;
  uint64_t rate = 0;  // events per second per thread; 0: as fast as it can
};
struct StreamResult {
  uint64_t written = 0;  // the app's packets: events and descriptors
  uint64_t in_file = 0;
  uint64_t lost = 0;  // SessionSummary.packets_lost
};

class WriteIntoFileEndToEndTest : public SessionsLifecycleFixture,
                                  public ::testing::WithParamInterface<
                                      TraceConfig::BufferConfig::FillPolicy> {
 protected:
  void RunStreamed(const StreamParams& p, StreamResult* result);
  void ExpectSequencesConsistent(const DecodedTrace& trace,
                                 const StreamParams& p);
};

// Each thread's numbers in the file rise, with a gap only where
// previous_packet_dropped says so. A thread may have no packet left at all:
// in RING_BUFFER the other thread's later data can overwrite all of it; in
// DISCARD the buffer takes nothing once it was full, read or not
// (Perfetto's semantics).
void WriteIntoFileEndToEndTest::ExpectSequencesConsistent(
    const DecodedTrace& trace,
    const StreamParams& p) {
  for (uint32_t k = 0; k < p.threads; k++) {
    const std::vector<const AppSequence*> seqs = SequencesOf(trace, k);
    ASSERT_LE(seqs.size(), 1u) << "thread " << k;
    if (seqs.empty())
      continue;
    const AppSequence& s = *seqs[0];
    for (size_t i = 1; i < s.numbers.size(); i++) {
      ASSERT_GT(s.numbers[i], s.numbers[i - 1]) << "thread " << k;
      if (s.numbers[i] != s.numbers[i - 1] + 1) {
        EXPECT_TRUE(s.dropped_before[i])
            << "thread " << k << ": " << s.numbers[i - 1] << " then "
            << s.numbers[i] << " without previous_packet_dropped";
      }
    }
    EXPECT_LT(s.numbers.back(), p.events_per_thread);
  }
}

// One streamed session while the app writes its events; checks that every
// packet is in the file or reported lost, exactly.
void WriteIntoFileEndToEndTest::RunStreamed(const StreamParams& p,
                                            StreamResult* result) {
  std::unique_ptr<base::Subprocess> service = StartService({});
  ASSERT_TRUE(service);
  SessionApp app;
  ASSERT_TRUE(StartApp(&app, p.threads,
                       {"--count", std::to_string(p.events_per_thread),
                        "--rate", std::to_string(p.rate), "--pause-us", "0"}));
  std::unique_ptr<consumer::ConsumerClient> consumer = ConnectConsumer();
  ASSERT_TRUE(consumer);
  const std::string path = dir_ + "/streamed";
  base::ScopedFd fd = CreateTraceFile(path);
  TraceConfig config = AppConfig(p.buffer_kb, p.policy);
  config.set_write_into_file(true);
  config.set_file_write_period_ms(p.period_ms);
  uint64_t session = 0;
  ASSERT_TRUE(consumer->EnableTracing(config, fd.get(), &session).ok());
  InstanceBounds bounds;
  ASSERT_TRUE(app.WaitStart(1, kTimeoutMs, &bounds));
  std::vector<std::string> done;
  const int wait_ms =
      kTimeoutMs +
      (p.rate ? static_cast<int>(p.events_per_thread * 1000 / p.rate) : 0);
  ASSERT_TRUE(app.WaitLine("DONE", 1, wait_ms, &done));
  ASSERT_EQ(done.size(), p.threads);
  for (const std::string& n : done)
    ASSERT_EQ(n, std::to_string(p.events_per_thread));
  protos::SessionSummary summary;
  ASSERT_TRUE(consumer->DisableTracing(session, kTimeoutMs, &summary).ok());

  const DecodedTrace trace = DecodeTrace(path, app.pid());
  ASSERT_TRUE(trace.parsed);
  ASSERT_TRUE(trace.has_stats);
  result->written = p.threads * (p.events_per_thread + kDescriptorsPerSequence);
  result->in_file = trace.app_packets;
  result->lost = summary.packets_lost();
  EXPECT_EQ(result->in_file + result->lost, result->written)
      << "in file " << result->in_file << ", reported lost " << result->lost
      << ", stats " << trace.stats.ShortDebugString();
  EXPECT_EQ(trace.stats.ringtrace_packets_dropped_by_producers(), 0u);
  // The trace reports the same loss itself.
  EXPECT_EQ(trace.stats.ringtrace_packets_overwritten() +
                trace.stats.ringtrace_packets_discarded(),
            result->lost);
  ExpectSequencesConsistent(trace, p);
  StopService(service.get(), "1 started, 1 written");
}

// A 256 KiB buffer streamed every 100 ms while the app writes about 16
// times that as fast as it can.
TEST_P(WriteIntoFileEndToEndTest, EveryPacketInFileOrReportedLost) {
  StreamParams p;
  p.policy = GetParam();
  StreamResult r;
  RunStreamed(p, &r);
  printf(
      "write_into_file %s: %llu packets written, %llu in the file, %llu "
      "reported lost\n",
      TraceConfig::BufferConfig::FillPolicy_Name(p.policy).c_str(),
      static_cast<unsigned long long>(r.written),
      static_cast<unsigned long long>(r.in_file),
      static_cast<unsigned long long>(r.lost));
}

INSTANTIATE_TEST_SUITE_P(
    Policies,
    WriteIntoFileEndToEndTest,
    ::testing::Values(TraceConfig::BufferConfig::RING_BUFFER,
                      TraceConfig::BufferConfig::DISCARD));

// The default session (ringtraced --out) through a 64 KiB RING_BUFFER:
// two ringtrace_loss_probe processes write 10000 packets of about 1500
// bytes each at once, most packets across a chunk boundary, so a chunk
// holding a packet's head can be erased while its continuation is still on
// its way. The packets in the file plus the packets ringtraced reports
// overwritten (its summary and the trace's TraceStats) are exactly the
// packets written.
TEST_F(WriteIntoFileEndToEndTest, SingleSessionBufferCountsOverwrittenPackets) {
  constexpr uint64_t kPackets = 10000;
  base::Subprocess service({bin_ + "/ringtraced", "--socket", socket_, "--out",
                            trace_, "--buffer-kb", "64"});
  const std::string error = StartRingtraced(&service, socket_, kTimeoutMs);
  ASSERT_TRUE(error.empty()) << error;
  std::unique_ptr<base::Subprocess> probes[2];
  for (auto& probe : probes) {
    probe.reset(new base::Subprocess(
        {bin_ + "/ringtrace_loss_probe", "--socket", socket_, "--packets",
         std::to_string(kPackets), "--size", "1500", "--policy", "stall",
         "--then", "exit"}));
    std::string probe_error;
    ASSERT_TRUE(probe->Start(&probe_error)) << probe_error;
  }
  for (auto& probe : probes) {
    ASSERT_TRUE(probe->Wait(kTimeoutMs)) << probe->output();
    ASSERT_NE(probe->output().find("PROBE committed=10000 dropped=0"),
              std::string::npos)
        << probe->output();
  }
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kTimeoutMs)) << service.output();
  ASSERT_EQ(service.exit_code(), 0) << service.output();

  const std::string out = service.output();
  const size_t at = out.find("Loss: ");
  ASSERT_NE(at, std::string::npos) << out;
  const uint64_t overwritten = strtoull(out.c_str() + at + 6, nullptr, 10);
  std::ifstream in(trace_, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  perfetto::protos::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(bytes.str()));
  uint64_t in_file = 0;
  uint64_t stats_overwritten = UINT64_MAX;
  for (const perfetto::protos::TracePacket& p : trace.packet()) {
    if (p.has_trace_stats())
      stats_overwritten = p.trace_stats().ringtrace_packets_overwritten();
    if ((p.trusted_pid() == probes[0]->pid() ||
         p.trusted_pid() == probes[1]->pid()) &&
        p.has_track_event()) {
      in_file++;
    }
  }
  EXPECT_GT(overwritten, 0u);
  EXPECT_EQ(in_file + overwritten, 2 * kPackets) << out;
  EXPECT_EQ(stats_overwritten, overwritten);
}

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = getenv(name);
  return v && *v ? strtoull(v, nullptr, 10) : fallback;
}

// The long measurement of tools/measure-write-into-file (disabled: about a
// minute). Parameters from the environment: RT_MEASURE_SECONDS (60),
// RT_MEASURE_BUFFER_KB (4096), RT_MEASURE_PERIOD_MS (1000),
// RT_MEASURE_THREADS (2), RT_MEASURE_RATE (events per second per thread,
// 50000).
TEST_F(WriteIntoFileEndToEndTest, DISABLED_SteadyRateMeasurement) {
  StreamParams p;
  p.buffer_kb = static_cast<uint32_t>(EnvOr("RT_MEASURE_BUFFER_KB", 4096));
  p.period_ms = static_cast<uint32_t>(EnvOr("RT_MEASURE_PERIOD_MS", 1000));
  p.threads = static_cast<uint32_t>(EnvOr("RT_MEASURE_THREADS", 2));
  p.rate = EnvOr("RT_MEASURE_RATE", 50000);
  p.events_per_thread = EnvOr("RT_MEASURE_SECONDS", 60) * p.rate;
  StreamResult r;
  RunStreamed(p, &r);
  printf(
      "MEASURE seconds=%llu buffer_kb=%u period_ms=%u threads=%u "
      "rate=%llu written=%llu in_file=%llu reported_lost=%llu\n",
      static_cast<unsigned long long>(p.events_per_thread / p.rate),
      p.buffer_kb, p.period_ms, p.threads,
      static_cast<unsigned long long>(p.rate),
      static_cast<unsigned long long>(r.written),
      static_cast<unsigned long long>(r.in_file),
      static_cast<unsigned long long>(r.lost));
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
