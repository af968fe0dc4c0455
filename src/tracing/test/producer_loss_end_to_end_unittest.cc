/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// End to end over a real ringtraced process, with this test process as the
// app (the producer library in-process): what happens to an app's packets
// when the service is killed or stopped under it, and how every loss the
// app counted reaches the trace's TraceStats.

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/producer.h"
#include "src/base/test/subprocess.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/test/ringtraced_process.h"

namespace ringtrace {
namespace test {
namespace {

using base::Subprocess;

namespace rtzero = perfetto::protos::rtzero;

// Deadlines against hangs (sanitizer builds on a loaded machine), not
// timing assertions.
constexpr int kProcessTimeoutMs = 120000;

using shm_ring::TraceWriterV2;
using shm_ring::TraceWriterV2Stats;

class EndToEndLossTest : public EndToEndFixture {
 protected:
  std::unique_ptr<Subprocess> StartService() {
    auto service = std::make_unique<Subprocess>(std::vector<std::string>{
        bin_ + "/ringtraced", "--socket", socket_, "--out", trace_});
    const std::string error =
        StartRingtraced(service.get(), socket_, kProcessTimeoutMs);
    if (!error.empty()) {
      ADD_FAILURE() << error;
      return nullptr;
    }
    return service;
  }

  ProducerOptions Options(shm_ring::BufferExhaustedPolicy policy) {
    ProducerOptions options;
    options.socket_path = socket_;
    options.name = "loss_e2e_app";
    options.requested_ring_bytes = 16 << 10;
    options.requested_chunk_size = 1024;
    options.buffer_exhausted_policy = policy;
    return options;
  }

  perfetto::protos::Trace ReadTrace() {
    std::ifstream in(trace_, std::ios::binary);
    EXPECT_TRUE(in) << trace_;
    std::stringstream bytes;
    bytes << in.rdbuf();
    perfetto::protos::Trace trace;
    EXPECT_TRUE(trace.ParseFromString(bytes.str())) << trace_;
    return trace;
  }

  void StopService(Subprocess* service) {
    service->Signal(SIGTERM);
    ASSERT_TRUE(service->Wait(kProcessTimeoutMs)) << service->output();
    ASSERT_EQ(service->exit_code(), 0) << service->output();
  }
};

// One test event: TracePacket.for_testing { str }.
void WriteEvents(TraceWriterV2* w, uint32_t n, size_t size) {
  const std::string body(size, 'e');
  for (uint32_t i = 0; i < n; i++) {
    auto handle = w->NewTracePacket();
    rtzero::TracePacket packet(handle);
    packet.set_for_testing().set_str(body);
  }
}

const perfetto::protos::TraceStats* FindTraceStats(
    const perfetto::protos::Trace& trace) {
  for (const perfetto::protos::TracePacket& p : trace.packet()) {
    if (p.has_trace_stats())
      return &p.trace_stats();
  }
  return nullptr;
}

// The service is SIGKILLed under an app using the stall policy: the app
// learns it is disconnected from its next DrainRequest, and from then on
// its writers drop at once instead of stalling 100 ms per chunk. The old
// behaviour took about 450 s for these 5,000 events; the bound below is a
// generous deadline against that, not a timing measurement.
TEST_F(EndToEndLossTest, KilledServiceMakesStallingWritersDropAtOnce) {
  std::unique_ptr<Subprocess> service = StartService();
  ASSERT_TRUE(service);
  ProducerOptions options = Options(shm_ring::BufferExhaustedPolicy::kStall);
  options.stall_timeout_ms = 100;
  base::Status status;
  auto producer = Producer::Connect(options, &status);
  ASSERT_TRUE(producer) << status.message();
  std::unique_ptr<TraceWriterV2> w = producer->NewTraceWriter();
  WriteEvents(w.get(), 100, 100);
  w->Flush();

  service->Signal(SIGKILL);
  ASSERT_TRUE(service->Wait(kProcessTimeoutMs));

  const auto start = std::chrono::steady_clock::now();
  WriteEvents(w.get(), 5000, 100);
  w->Flush();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  EXPECT_LT(seconds, 20);
  EXPECT_FALSE(producer->connected());
  const TraceWriterV2Stats s = w->stats();
  EXPECT_EQ(s.packets_begun, 5100u);
  EXPECT_EQ(s.packets_begun, s.packets_committed + s.packets_dropped);
  // 5,000 events of ~105 bytes cannot fit a 16 KiB ring: once it filled,
  // every packet was refused at once, without a stall.
  EXPECT_GT(s.packets_refused, 4000u);
  w.reset();
  producer.reset();  // no final report: the service is gone; no hang
}

// The service is SIGSTOPped: the app (drop policy) loses most of its
// packets, and its last packet is larger than the whole ring. After SIGCONT
// and an orderly disconnect, the trace's TraceStats carries the writer's
// exact loss counters, and the trace holds exactly the packets the writer
// committed: delivered + reported lost == written.
TEST_F(EndToEndLossTest, LossesOfAStoppedServiceReachTraceStats) {
  std::unique_ptr<Subprocess> service = StartService();
  ASSERT_TRUE(service);
  base::Status status;
  auto producer = Producer::Connect(
      Options(shm_ring::BufferExhaustedPolicy::kDrop), &status);
  ASSERT_TRUE(producer) << status.message();
  std::unique_ptr<TraceWriterV2> w = producer->NewTraceWriter();
  const uint32_t writer_id = w->writer_id();
  WriteEvents(w.get(), 50, 100);
  w->Flush();

  ASSERT_TRUE(service->StopAndWait(kProcessTimeoutMs));
  WriteEvents(w.get(), 2000, 200);    // ~420 KB into a 16 KiB ring
  WriteEvents(w.get(), 1, 64 << 10);  // larger than the ring
  w->Flush();
  service->Signal(SIGCONT);

  const TraceWriterV2Stats s = w->stats();
  const shm_ring::RingWriterStats r =
      shm_ring::TraceWriterV2Owner::ring_writer(*w).stats();
  ASSERT_EQ(s.packets_begun, 2051u);
  ASSERT_GT(s.packets_dropped, 1000u);
  ASSERT_EQ(s.packets_begun, s.packets_committed + s.packets_dropped);
  w.reset();
  producer.reset();  // the final report, then the close
  StopService(service.get());

  const perfetto::protos::Trace trace = ReadTrace();
  uint64_t delivered = 0;
  uint32_t sequence_id = 0;
  for (const perfetto::protos::TracePacket& p : trace.packet()) {
    if (p.has_for_testing() && p.trusted_pid() == getpid()) {
      delivered++;
      sequence_id = p.trusted_packet_sequence_id();
    }
  }
  EXPECT_EQ(delivered, s.packets_committed);

  const perfetto::protos::TraceStats* stats = FindTraceStats(trace);
  ASSERT_NE(stats, nullptr);
  ASSERT_EQ(stats->ringtrace_producer_loss_size(), 1);
  const auto& producer_loss = stats->ringtrace_producer_loss(0);
  EXPECT_EQ(producer_loss.pid(), getpid());
  EXPECT_EQ(producer_loss.producer_name(), "loss_e2e_app");
  EXPECT_TRUE(producer_loss.final_report());
  EXPECT_FALSE(producer_loss.connected());
  EXPECT_EQ(producer_loss.entries_ignored(), 0u);
  ASSERT_EQ(producer_loss.writers_size(), 1);
  const auto& writer = producer_loss.writers(0);
  EXPECT_EQ(writer.writer_id(), writer_id);
  EXPECT_EQ(writer.trusted_packet_sequence_id(), sequence_id);
  EXPECT_EQ(writer.packets_dropped_before_end(), r.open_packets_dropped);
  EXPECT_EQ(writer.packets_dropped_after_end(), r.ended_packets_dropped);
  EXPECT_EQ(
      writer.packets_dropped_before_end() + writer.packets_dropped_after_end(),
      s.packets_dropped);
  EXPECT_EQ(writer.bytes_dropped(), s.bytes_dropped);
  EXPECT_EQ(stats->ringtrace_packets_dropped_by_producers(), s.packets_dropped);
  EXPECT_EQ(stats->ringtrace_bytes_dropped_by_producers(), s.bytes_dropped);
}

// An app SIGKILLed while connected never sends its final report: its record
// in TraceStats says so (final_report false), so a reader knows that the
// app's last losses may be missing from the counts.
TEST_F(EndToEndLossTest, KilledAppIsMarkedWithoutAFinalReport) {
  std::unique_ptr<Subprocess> service = StartService();
  ASSERT_TRUE(service);
  const pid_t app = fork();
  ASSERT_GE(app, 0);
  if (app == 0) {
    base::Status status;
    auto producer = Producer::Connect(
        Options(shm_ring::BufferExhaustedPolicy::kDrop), &status);
    if (!producer)
      _exit(1);
    std::unique_ptr<TraceWriterV2> w = producer->NewTraceWriter();
    WriteEvents(w.get(), 10, 100);
    w->Flush();
    raise(SIGKILL);
    _exit(2);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(app, &wstatus, 0), app);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << wstatus;
  StopService(service.get());

  const perfetto::protos::Trace trace = ReadTrace();
  uint64_t delivered = 0;
  for (const perfetto::protos::TracePacket& p : trace.packet()) {
    if (p.has_for_testing() && p.trusted_pid() == app)
      delivered++;
  }
  EXPECT_EQ(delivered, 10u);  // flushed before the kill
  const perfetto::protos::TraceStats* stats = FindTraceStats(trace);
  ASSERT_NE(stats, nullptr);
  ASSERT_EQ(stats->ringtrace_producer_loss_size(), 1);
  EXPECT_EQ(stats->ringtrace_producer_loss(0).pid(), app);
  EXPECT_FALSE(stats->ringtrace_producer_loss(0).final_report());
  EXPECT_EQ(stats->ringtrace_producer_loss(0).writers_size(), 0);
}

// An app SIGKILLed while its writer drops (the service stopped, the ring
// full) cannot send the reports of its last losses: the service reads them
// from the ring's writer loss area when it removes the producer. Every
// packet the app wrote is in the trace or counted, exactly.
TEST_F(EndToEndLossTest, KilledAppsLastLossesAreReadFromItsLossArea) {
  std::unique_ptr<Subprocess> service = StartService();
  ASSERT_TRUE(service);
  // What the app counted, where it survives the app's SIGKILL.
  struct Counts {
    uint64_t begun, committed, dropped, before_end, after_end, bytes;
    uint32_t writer_id;
  };
  void* shared = mmap(nullptr, sizeof(Counts), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  Counts* counts = new (shared) Counts();
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  const pid_t app = fork();
  ASSERT_GE(app, 0);
  if (app == 0) {
    base::Status status;
    auto producer = Producer::Connect(
        Options(shm_ring::BufferExhaustedPolicy::kDrop), &status);
    if (!producer)
      _exit(1);
    std::unique_ptr<TraceWriterV2> w = producer->NewTraceWriter();
    WriteEvents(w.get(), 50, 100);
    w->Flush();
    char c = 0;
    if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
      _exit(3);
    WriteEvents(w.get(), 2000, 200);    // ~420 KB into a 16 KiB ring
    WriteEvents(w.get(), 1, 64 << 10);  // larger than the ring: the last loss
    w->Flush();
    const TraceWriterV2Stats st = w->stats();
    const shm_ring::RingWriterStats r =
        shm_ring::TraceWriterV2Owner::ring_writer(*w).stats();
    counts->begun = st.packets_begun;
    counts->committed = st.packets_committed;
    counts->dropped = st.packets_dropped;
    counts->before_end = r.open_packets_dropped;
    counts->after_end = r.ended_packets_dropped;
    counts->bytes = st.bytes_dropped;
    counts->writer_id = w->writer_id();
    if (write(ready[1], &c, 1) != 1)
      _exit(4);
    raise(SIGKILL);
    _exit(2);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_TRUE(service->StopAndWait(kProcessTimeoutMs));
  ASSERT_EQ(write(go[1], &c, 1), 1);
  int wstatus = 0;
  ASSERT_EQ(waitpid(app, &wstatus, 0), app);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << wstatus;
  service->Signal(SIGCONT);
  StopService(service.get());
  for (int fd : {ready[0], ready[1], go[0], go[1]})
    close(fd);

  ASSERT_EQ(counts->begun, 2051u);
  ASSERT_GT(counts->dropped, 1000u);
  ASSERT_EQ(counts->begun, counts->committed + counts->dropped);
  const perfetto::protos::Trace trace = ReadTrace();
  uint64_t delivered = 0;
  for (const perfetto::protos::TracePacket& p : trace.packet()) {
    if (p.has_for_testing() && p.trusted_pid() == app)
      delivered++;
  }
  EXPECT_EQ(delivered, counts->committed);
  const perfetto::protos::TraceStats* stats = FindTraceStats(trace);
  ASSERT_NE(stats, nullptr);
  ASSERT_EQ(stats->ringtrace_producer_loss_size(), 1);
  const auto& producer_loss = stats->ringtrace_producer_loss(0);
  EXPECT_EQ(producer_loss.pid(), app);
  EXPECT_FALSE(producer_loss.final_report());
  ASSERT_EQ(producer_loss.writers_size(), 1);
  const auto& writer = producer_loss.writers(0);
  EXPECT_EQ(writer.writer_id(), counts->writer_id);
  EXPECT_EQ(writer.packets_dropped_before_end(), counts->before_end);
  EXPECT_EQ(writer.packets_dropped_after_end(), counts->after_end);
  EXPECT_EQ(writer.bytes_dropped(), counts->bytes);
  EXPECT_NE(writer.trusted_packet_sequence_id(), 0u);
  // written == in the trace + reported lost, exactly.
  EXPECT_EQ(delivered + stats->ringtrace_packets_dropped_by_producers(),
            counts->begun);
  EXPECT_EQ(producer_loss.claims_clamped(), 0u);
  printf(
      "killed app: %llu written, %llu in the trace, %llu lost (%llu "
      "writer(s) raised by the loss area)\n",
      static_cast<unsigned long long>(counts->begun),
      static_cast<unsigned long long>(delivered),
      static_cast<unsigned long long>(
          stats->ringtrace_packets_dropped_by_producers()),
      static_cast<unsigned long long>(producer_loss.writers_from_loss_area()));
  munmap(shared, sizeof(Counts));
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
