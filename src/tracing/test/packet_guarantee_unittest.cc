/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The packet guarantee of include/ringtrace/producer.h, checked with real
// processes: ringtraced and ringtrace_loss_probe (loss_probe_main.cc), an
// app that writes packets numbered 0..N-1 (TracePacket.timestamp) and then
// stops in a state the test chooses. Once a packet has ended (its handle
// went out of scope), it is in
//   - the final trace, although the app never flushes and stays alive;
//   - a snapshot taken after that moment;
//   - the trace of the app SIGKILLed after that moment;
// or its loss is counted and reported. With the drop policy and a ring that
// nobody drains, the newest packets are the ones dropped: every packet the
// writer counted committed is in the trace, and the next packet that gets
// through carries previous_packet_dropped.

#include <gtest/gtest.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
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

// Deadlines against hangs on a loaded machine, not timing assertions.
constexpr int kTimeoutMs = 120000;

struct ProbeReport {
  uint64_t committed = 0;
  uint64_t dropped = 0;
  uint64_t begun = 0;
};

// The probe's packets as found in a trace file.
struct ProbeView {
  std::vector<uint64_t> numbers;  // timestamps, in file order
  uint64_t packets_with_loss = 0;
  uint64_t first_number_with_loss = UINT64_MAX;
  // From the TraceStats: the probe's loss reports.
  uint64_t loss_records = 0;
  bool final_report = false;
  uint64_t reported_dropped = 0;  // before + after end, every writer
};

class PacketGuaranteeTest : public EndToEndFixture {
 protected:
  std::vector<std::string> ServiceArgs() {
    return {bin_ + "/ringtraced", "--socket", socket_, "--out", trace_};
  }

  void StartService(Subprocess* service) {
    const std::string error = StartRingtraced(service, socket_, kTimeoutMs);
    ASSERT_TRUE(error.empty()) << error;
  }

  std::vector<std::string> ProbeArgs(uint32_t packets,
                                     uint32_t size,
                                     const std::string& policy,
                                     const std::string& then) {
    return {bin_ + "/ringtrace_loss_probe",
            "--socket",
            socket_,
            "--packets",
            std::to_string(packets),
            "--size",
            std::to_string(size),
            "--policy",
            policy,
            "--then",
            then};
  }

  // Waits until the probe printed |line|.
  void WaitForLine(Subprocess* probe, const std::string& line) {
    for (int i = 0; i < kTimeoutMs / 10; i++) {
      if (probe->output().find(line) != std::string::npos)
        return;
      ASSERT_FALSE(probe->Wait(10)) << "the probe exited:\n" << probe->output();
    }
    FAIL() << "the probe never printed " << line << probe->output();
  }

  // Waits until the probe connected and waits for SIGUSR1 to start.
  void WaitForConnected(Subprocess* probe) {
    WaitForLine(probe, "PROBE connected\n");
  }

  // Waits for the probe's |nth| (1-based) report line and parses it.
  void WaitForReport(Subprocess* probe, int nth, ProbeReport* report) {
    for (int i = 0; i < kTimeoutMs / 10; i++) {
      const std::string out = probe->output();
      size_t pos = 0;
      int seen = 0;
      while ((pos = out.find("PROBE committed=", pos)) != std::string::npos) {
        const size_t eol = out.find('\n', pos);
        if (eol == std::string::npos)
          break;
        if (++seen == nth) {
          unsigned long long c = 0, d = 0, b = 0;
          ASSERT_EQ(sscanf(out.c_str() + pos,
                           "PROBE committed=%llu dropped=%llu begun=%llu", &c,
                           &d, &b),
                    3)
              << out;
          report->committed = c;
          report->dropped = d;
          report->begun = b;
          return;
        }
        pos = eol;
      }
      ASSERT_FALSE(probe->Wait(10)) << "the probe exited:\n" << probe->output();
    }
    FAIL() << "no report " << nth << " from the probe:\n" << probe->output();
  }

  void StopService(Subprocess* service) {
    service->Signal(SIGTERM);
    ASSERT_TRUE(service->Wait(kTimeoutMs)) << service->output();
    ASSERT_EQ(service->exit_code(), 0) << service->output();
  }

  // Waits for ringtraced to report its first snapshot written.
  void WaitForSnapshot(Subprocess* service) {
    const std::string written = "snapshot 1 written to ";
    for (int i = 0; i < kTimeoutMs / 10; i++) {
      if (service->output().find(written) != std::string::npos)
        return;
      ASSERT_FALSE(service->Wait(10)) << "ringtraced exited:\n"
                                      << service->output();
    }
    FAIL() << "no snapshot:\n" << service->output();
  }

  static ProbeView ViewOf(const std::string& path, pid_t probe_pid) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in) << path;
    std::stringstream bytes;
    bytes << in.rdbuf();
    perfetto::protos::Trace trace;
    EXPECT_TRUE(trace.ParseFromString(bytes.str())) << path;
    ProbeView view;
    for (const perfetto::protos::TracePacket& p : trace.packet()) {
      if (p.has_trace_stats()) {
        for (const auto& loss : p.trace_stats().ringtrace_producer_loss()) {
          if (loss.pid() != probe_pid)
            continue;
          view.loss_records++;
          view.final_report = loss.final_report();
          for (const auto& w : loss.writers()) {
            view.reported_dropped +=
                w.packets_dropped_before_end() + w.packets_dropped_after_end();
          }
        }
      }
      if (!p.has_trusted_pid() || p.trusted_pid() != probe_pid ||
          !p.has_track_event() || !p.has_timestamp()) {
        continue;
      }
      view.numbers.push_back(p.timestamp());
      if (p.previous_packet_dropped() != 0) {
        view.packets_with_loss++;
        if (view.first_number_with_loss == UINT64_MAX)
          view.first_number_with_loss = p.timestamp();
      }
    }
    return view;
  }

  // Starts |probe| and waits for its first report.
  void StartProbe(Subprocess* probe, ProbeReport* report) {
    std::string error;
    ASSERT_TRUE(probe->Start(&error)) << error;
    ASSERT_NO_FATAL_FAILURE(WaitForReport(probe, 1, report));
  }

  // |view| holds packets 0..n-1 in order, and no loss is flagged or
  // reported.
  static void ExpectAllAndNoLoss(const ProbeView& view, uint64_t n) {
    EXPECT_EQ(view.numbers, Numbers(n));
    EXPECT_EQ(view.packets_with_loss, 0u);
    EXPECT_EQ(view.reported_dropped, 0u);
  }

  static std::vector<uint64_t> Numbers(uint64_t n) {
    std::vector<uint64_t> numbers;
    for (uint64_t i = 0; i < n; i++)
      numbers.push_back(i);
    return numbers;
  }
};

// An app ends 5 packets and goes idle without Flush(): the service's final
// drain at SIGTERM takes them although the writer never gave up its chunk.
TEST_F(PacketGuaranteeTest, EndedPacketsOfAnIdleAppAreInTheFinalTrace) {
  Subprocess service(ServiceArgs());
  ASSERT_NO_FATAL_FAILURE(StartService(&service));
  Subprocess probe(ProbeArgs(5, 40, "stall", "idle"));
  ProbeReport report;
  ASSERT_NO_FATAL_FAILURE(StartProbe(&probe, &report));
  EXPECT_EQ(report.committed, 5u);
  EXPECT_EQ(report.dropped, 0u);

  ASSERT_NO_FATAL_FAILURE(StopService(&service));
  const ProbeView view = ViewOf(trace_, probe.pid());
  ExpectAllAndNoLoss(view, 5);
}

// A snapshot taken after the packets ended holds them, and so does the
// final trace.
TEST_F(PacketGuaranteeTest, EndedPacketsAreInASnapshotTakenAfterwards) {
  Subprocess service(ServiceArgs());
  ASSERT_NO_FATAL_FAILURE(StartService(&service));
  Subprocess probe(ProbeArgs(7, 100, "stall", "idle"));
  ProbeReport report;
  ASSERT_NO_FATAL_FAILURE(StartProbe(&probe, &report));
  ASSERT_EQ(report.committed, 7u);

  service.Signal(SIGUSR1);
  ASSERT_NO_FATAL_FAILURE(WaitForSnapshot(&service));
  const ProbeView snapshot = ViewOf(trace_ + ".snapshot-1", probe.pid());
  EXPECT_EQ(snapshot.numbers, Numbers(7));
  EXPECT_EQ(snapshot.packets_with_loss, 0u);

  ASSERT_NO_FATAL_FAILURE(StopService(&service));
  const ProbeView final_trace = ViewOf(trace_, probe.pid());
  EXPECT_EQ(final_trace.numbers, Numbers(7));
}

// The app is SIGKILLed right after its packets ended: the service scrapes
// its ring without its cooperation.
TEST_F(PacketGuaranteeTest, EndedPacketsOfASigkilledAppAreInTheTrace) {
  Subprocess service(ServiceArgs());
  ASSERT_NO_FATAL_FAILURE(StartService(&service));
  Subprocess probe(ProbeArgs(5, 40, "stall", "idle"));
  ProbeReport report;
  ASSERT_NO_FATAL_FAILURE(StartProbe(&probe, &report));
  ASSERT_EQ(report.committed, 5u);
  const pid_t probe_pid = probe.pid();
  probe.Signal(SIGKILL);
  ASSERT_TRUE(probe.Wait(kTimeoutMs));

  ASSERT_NO_FATAL_FAILURE(StopService(&service));
  const ProbeView view = ViewOf(trace_, probe_pid);
  ExpectAllAndNoLoss(view, 5);
}

// Same, but the process ends itself with _exit() right after the packets:
// no destructor, no flush, no goodbye on the socket.
TEST_F(PacketGuaranteeTest, EndedPacketsOfAnAppThatExitsAtOnceAreInTheTrace) {
  Subprocess service(ServiceArgs());
  ASSERT_NO_FATAL_FAILURE(StartService(&service));
  Subprocess probe(ProbeArgs(300, 200, "stall", "exit"));
  std::string error;
  ASSERT_TRUE(probe.Start(&error)) << error;
  ASSERT_TRUE(probe.Wait(kTimeoutMs)) << probe.output();
  ASSERT_EQ(probe.exit_code(), 0) << probe.output();
  ProbeReport report;
  ASSERT_NO_FATAL_FAILURE(WaitForReport(&probe, 1, &report));
  ASSERT_EQ(report.committed, 300u);

  ASSERT_NO_FATAL_FAILURE(StopService(&service));
  const ProbeView view = ViewOf(trace_, probe.pid());
  ExpectAllAndNoLoss(view, 300);
}

// Drop policy, and the service frozen (SIGSTOP) while the app writes far
// more than its ring holds: the newest packets are dropped, never one the
// writer counted committed, and once the service runs again the next packet
// that gets through says that packets were dropped before it.
TEST_F(PacketGuaranteeTest, DropPolicyWithAFullRingDropsTheNewestPackets) {
  std::vector<std::string> args = ServiceArgs();
  args.insert(args.end(), {"--ring-kb", "16", "--chunk-size", "1024"});
  Subprocess service(args);
  ASSERT_NO_FATAL_FAILURE(StartService(&service));
  constexpr uint32_t kPackets = 2000;  // 400 KB into a 16 KiB ring
  std::vector<std::string> probe_args =
      ProbeArgs(kPackets, 200, "drop", "wait-usr1");
  probe_args.insert(probe_args.end(), {"--start-on-usr1", "1"});
  Subprocess frozen_writer(probe_args);
  std::string error;
  ASSERT_TRUE(frozen_writer.Start(&error)) << error;
  ASSERT_NO_FATAL_FAILURE(WaitForConnected(&frozen_writer));

  ASSERT_TRUE(service.StopAndWait(kTimeoutMs));
  frozen_writer.Signal(SIGUSR1);
  ProbeReport report;
  ASSERT_NO_FATAL_FAILURE(WaitForReport(&frozen_writer, 1, &report));
  EXPECT_EQ(report.begun, kPackets);
  EXPECT_EQ(report.committed + report.dropped, kPackets);
  EXPECT_GT(report.dropped, 0u);
  // Each packet takes at least 195 bytes of the 16 KiB ring.
  EXPECT_LE(report.committed, 16u * 1024 / 195);

  service.Signal(SIGCONT);
  // The probe retries its last packet until it gets through (each failed
  // attempt is one more dropped packet, counted).
  frozen_writer.Signal(SIGUSR1);
  ProbeReport second;
  ASSERT_NO_FATAL_FAILURE(WaitForReport(&frozen_writer, 2, &second));
  EXPECT_EQ(second.committed, report.committed + 1);
  // The probe closes in order: its final loss report reaches the service.
  frozen_writer.Signal(SIGUSR1);
  ASSERT_NO_FATAL_FAILURE(WaitForLine(&frozen_writer, "PROBE closed\n"));

  ASSERT_NO_FATAL_FAILURE(StopService(&service));
  const ProbeView view = ViewOf(trace_, frozen_writer.pid());
  std::vector<uint64_t> expected = Numbers(report.committed);
  expected.push_back(kPackets);
  EXPECT_EQ(view.numbers, expected);
  EXPECT_EQ(view.packets_with_loss, 1u);
  EXPECT_EQ(view.first_number_with_loss, kPackets);
  // ... and the TraceStats report exactly the packets the writer dropped.
  EXPECT_EQ(view.loss_records, 1u);
  EXPECT_TRUE(view.final_report);
  EXPECT_EQ(view.reported_dropped, second.dropped);
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
