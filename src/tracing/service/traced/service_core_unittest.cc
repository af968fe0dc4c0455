/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ServiceCore without sockets: geometry clamping, admission, ProducerIDs,
// the sealed memfd, the final drain of a removed producer and the export.
// Snapshots and stats: service_core_snapshot_unittest.cc.

#include "src/tracing/service/traced/service_core.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/core/shm_ring/writer_loss_area.h"
#include "src/tracing/service/traced/test/core_fixture.h"
#include "src/tracing/service/traced/test/test_client.h"

namespace ringtrace {
namespace traced {
namespace {

using base::TempDir;
using shm_ring::RingGeometry;
using test::CollectTestPackets;
using test::CoreOptions;
using test::DefaultSessionCore;
using test::Identity;
using test::MakeHello;
using test::ProducerSide;
using test::ReadTraceFile;
using test::Seqs;
using test::WriteTestPackets;

TEST(TracingServiceGeometryTest, DefaultsWhenNothingIsRequested) {
  const RingLimits limits;
  const RingGeometry g = ChooseRingGeometry(limits, 0, 0);
  EXPECT_EQ(g.chunk_size, limits.default_chunk_size);
  EXPECT_EQ(uint64_t{g.chunk_size} * g.num_chunks, limits.default_ring_bytes);
}

TEST(TracingServiceGeometryTest, RequestsAreRoundedAndClamped) {
  RingLimits limits;
  limits.min_ring_bytes = 16 << 10;
  limits.max_ring_bytes = 1 << 20;
  limits.min_chunk_size = 512;
  limits.max_chunk_size = 8192;
  ASSERT_TRUE(ValidateRingLimits(limits).ok());
  struct Case {
    uint32_t ring_bytes, chunk_size;
    uint32_t want_chunk_size, want_num_chunks;
  } cases[] = {
      {65536, 1024, 1024, 64},              // served as asked
      {100000, 3000, 4096, 32},             // both rounded up to powers of two
      {1, 1, 512, 32},                      // raised to the minimums (16 KiB)
      {0xffffffff, 0xffffffff, 8192, 128},  // cut to the maximums (1 MiB)
      {0, 100, 512, 2048},                  // default ring (1 MiB), min chunk
  };
  for (const Case& c : cases) {
    const RingGeometry g =
        ChooseRingGeometry(limits, c.ring_bytes, c.chunk_size);
    EXPECT_EQ(g.chunk_size, c.want_chunk_size)
        << c.ring_bytes << " " << c.chunk_size;
    EXPECT_EQ(g.num_chunks, c.want_num_chunks)
        << c.ring_bytes << " " << c.chunk_size;
    EXPECT_TRUE(g.IsValid());
  }
}

TEST(TracingServiceGeometryTest, RingGrowsToTwoChunks) {
  RingLimits limits;
  limits.min_ring_bytes = 1024;
  ASSERT_TRUE(ValidateRingLimits(limits).ok());
  const RingGeometry g = ChooseRingGeometry(limits, 1024, 32768);
  EXPECT_EQ(g.chunk_size, 32768u);
  EXPECT_EQ(g.num_chunks, 2u);
}

TEST(TracingServiceGeometryTest, InvalidLimitsAreRejected) {
  EXPECT_TRUE(ValidateRingLimits(RingLimits()).ok());
  RingLimits l;
  l.default_chunk_size = 3000;  // not a power of two
  EXPECT_FALSE(ValidateRingLimits(l).ok());
  l = RingLimits();
  l.min_chunk_size = 128;  // below the ABI
  EXPECT_FALSE(ValidateRingLimits(l).ok());
  l = RingLimits();
  l.max_chunk_size = 65536;  // above the ABI
  EXPECT_FALSE(ValidateRingLimits(l).ok());
  l = RingLimits();
  l.default_ring_bytes = 32u << 20;  // above max_ring_bytes
  EXPECT_FALSE(ValidateRingLimits(l).ok());
  l = RingLimits();
  l.max_ring_bytes = 32768;  // below two chunks of max_chunk_size
  l.min_ring_bytes = l.default_ring_bytes = 16384;
  EXPECT_FALSE(ValidateRingLimits(l).ok());
}

TEST(TracingServiceCoreTest, CreateRejectsBadOptions) {
  base::Status status;
  ServiceCore::Options o = CoreOptions();
  o.max_producers = 0;
  EXPECT_FALSE(ServiceCore::Create(o, &status));
  o = CoreOptions();
  o.max_producers = 65536;
  EXPECT_FALSE(ServiceCore::Create(o, &status));
  o = CoreOptions();
  o.ring_limits.min_ring_bytes = 3;
  EXPECT_FALSE(ServiceCore::Create(o, &status));
  EXPECT_FALSE(status.ok());
}

TEST(TracingServiceCoreTest, AdmitServesTheClampedGeometryOnASealedMemfd) {
  DefaultSessionCore core(CoreOptions());
  const ServiceCore::Admission a =
      core->Admit(MakeHello(1, 100), Identity(1, 2));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  const RingLimits limits;
  EXPECT_EQ(a.reply.chunk_size, limits.min_chunk_size);
  EXPECT_EQ(uint64_t{a.reply.chunk_size} * a.reply.num_chunks,
            limits.min_ring_bytes);
  // The default session's first buffer: the producer's own writers' target.
  EXPECT_NE(a.reply.target_buffer, kNoDefaultBuffer);
  EXPECT_EQ(a.reply.target_buffer, core->session_table()->default_buffer());
  ASSERT_GE(a.ring_fd, 0);

  struct stat st = {};
  ASSERT_EQ(fstat(a.ring_fd, &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size),
            RingGeometry(a.reply.chunk_size, a.reply.num_chunks).MappingSize() +
                shm_ring::kWriterLossAreaSize);
  const int seals = fcntl(a.ring_fd, F_GET_SEALS);
  ASSERT_GE(seals, 0);
  EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  // Neither shrinking (SIGBUS in the service) nor growing is possible.
  int rc = ftruncate(a.ring_fd, 0);
  int err = errno;
  EXPECT_NE(rc, 0);
  EXPECT_EQ(err, EPERM);
  rc = ftruncate(a.ring_fd, st.st_size * 2);
  err = errno;
  EXPECT_NE(rc, 0);
  EXPECT_EQ(err, EPERM);
  // And the seals cannot be removed or added to.
  EXPECT_NE(fcntl(a.ring_fd, F_ADD_SEALS, F_SEAL_WRITE), 0);
}

TEST(TracingServiceCoreTest, FreshProducerIdsComeFirst) {
  DefaultSessionCore core(CoreOptions());
  std::vector<uint32_t> ids;
  for (int i = 0; i < 3; ++i) {
    const ServiceCore::Admission a = core->Admit(MakeHello(), Identity(1, 2));
    ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
    ids.push_back(a.reply.producer_id);
  }
  EXPECT_EQ(ids, (std::vector<uint32_t>{1, 2, 3}));
  core->RemoveProducer(2);
  EXPECT_FALSE(core->producers()->has_producer(2));
  EXPECT_EQ(core->producers()->num_producers(), 2u);
  const ServiceCore::Admission a = core->Admit(MakeHello(), Identity(1, 2));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  EXPECT_EQ(a.reply.producer_id, 4u);
  EXPECT_EQ(core->producers()->stats().producers_seen, 4u);
  EXPECT_EQ(core->producers()->stats().producers_connected, 3u);
  core->RemoveProducer(2);  // unknown now: ignored
  core->producers()->OnDrainRequest(2);
  EXPECT_EQ(core->producers()->stats().drain_requests, 0u);
}

TEST(TracingServiceCoreTest, RejectsAnotherProtocolVersion) {
  DefaultSessionCore core(CoreOptions());
  ipc::HelloMsg hello = MakeHello();
  hello.protocol_version = ipc::kProtocolVersion + 1;
  const ServiceCore::Admission a = core->Admit(hello, Identity(1, 2));
  EXPECT_EQ(a.reply.status, ipc::HelloStatus::kVersionMismatch);
  EXPECT_EQ(a.ring_fd, -1);
  EXPECT_EQ(core->producers()->num_producers(), 0u);
  EXPECT_EQ(core->producers()->stats().hellos_rejected_version, 1u);
  EXPECT_EQ(core->producers()->stats().producers_seen, 0u);
}

TEST(TracingServiceCoreTest, EnforcesMaxProducers) {
  ServiceCore::Options options = CoreOptions();
  options.max_producers = 2;
  DefaultSessionCore core(options);
  EXPECT_EQ(core->Admit(MakeHello(), Identity(1, 2)).reply.status,
            ipc::HelloStatus::kOk);
  EXPECT_EQ(core->Admit(MakeHello(), Identity(1, 2)).reply.status,
            ipc::HelloStatus::kOk);
  const ServiceCore::Admission refused =
      core->Admit(MakeHello(), Identity(1, 2));
  EXPECT_EQ(refused.reply.status, ipc::HelloStatus::kTooManyProducers);
  EXPECT_EQ(refused.ring_fd, -1);
  EXPECT_EQ(core->producers()->stats().hellos_rejected_too_many, 1u);
  core->RemoveProducer(1);
  EXPECT_EQ(core->Admit(MakeHello(), Identity(1, 2)).reply.status,
            ipc::HelloStatus::kOk);
}

// Writes |count| tagged packets through a fresh writer of |a|'s ring and
// removes the producer (its final drain puts them in the buffer).
void WriteAndLeave(ServiceCore* core,
                   const ServiceCore::Admission& a,
                   const std::string& tag,
                   uint32_t count) {
  ProducerSide side(a);
  std::unique_ptr<shm_ring::TraceWriterV2> w = side.NewWriter();
  WriteTestPackets(w.get(), tag, 0, count);
  w->Flush();
  core->RemoveProducer(
      static_cast<trace_buffer::ProducerID>(a.reply.producer_id));
}

perfetto::protos::Trace FinishInto(DefaultSessionCore* core,
                                   const std::string& path,
                                   ExportSummary* summary) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0);
  EXPECT_TRUE(core->Finish(fd, summary).ok());
  close(fd);
  perfetto::protos::Trace trace;
  EXPECT_TRUE(ReadTraceFile(path, &trace));
  return trace;
}

// Once every id was used, a departed producer's id is reused only when the
// buffer keeps no sequence of it: the id of a producer that wrote nothing
// comes back at once; one whose packets are in the buffer does not.
TEST(TracingServiceCoreTest, ProducerIdWithDataInTheBufferIsNotReused) {
  TempDir dir;
  ServiceCore::Options options = CoreOptions();
  options.drain_tick_ns = 3'600'000'000'000;  // only final drains read
  DefaultSessionCore core(options);
  core->producers()->set_next_producer_id_for_testing(0xfffe);
  const ServiceCore::Admission writer =
      core->Admit(MakeHello(), Identity(7, 70));
  const ServiceCore::Admission idle = core->Admit(MakeHello(), Identity(8, 80));
  ASSERT_EQ(writer.reply.producer_id, 0xfffeu);
  ASSERT_EQ(idle.reply.producer_id, 0xffffu);
  WriteAndLeave(core.get(), writer, "kept", 40);
  core->RemoveProducer(0xffff);

  // Only the idle producer's id may come back, and only once.
  const ServiceCore::Admission again =
      core->Admit(MakeHello(), Identity(9, 90));
  ASSERT_EQ(again.reply.status, ipc::HelloStatus::kOk);
  EXPECT_EQ(again.reply.producer_id, 0xffffu);
  EXPECT_EQ(core->producers()->stats().producer_ids_reused, 1u);
  const ServiceCore::Admission refused =
      core->Admit(MakeHello(), Identity(10, 100));
  EXPECT_EQ(refused.reply.status, ipc::HelloStatus::kTooManyProducers);
  EXPECT_NE(refused.refusal.find("still has data"), std::string::npos)
      << refused.refusal;
  EXPECT_EQ(core->producers()->stats().hellos_rejected_too_many, 1u);
  WriteAndLeave(core.get(), again, "newcomer", 25);

  ExportSummary summary;
  const perfetto::protos::Trace trace =
      FinishInto(&core, dir.File("trace.pftrace"), &summary);
  const auto tagged = CollectTestPackets(trace);
  ASSERT_EQ(tagged.size(), 2u);
  EXPECT_EQ(tagged.at("kept").seqs, Seqs(0, 40));
  EXPECT_EQ(tagged.at("kept").trusted_pids, std::set<int32_t>{7});
  EXPECT_EQ(tagged.at("newcomer").seqs, Seqs(0, 25));
  EXPECT_EQ(tagged.at("newcomer").trusted_pids, std::set<int32_t>{9});
}

// More producer lifetimes than there are ProducerIDs: Hello+close cycles
// never exhaust the ids, the producers that wrote keep their own ids until
// the export, and every packet is attributed to the process that wrote it.
TEST(TracingServiceCoreTest, MoreProducerLifetimesThanProducerIds) {
  TempDir dir;
  ServiceCore::Options options = CoreOptions();
  options.drain_tick_ns = 3'600'000'000'000;
  options.ring_limits.default_ring_bytes = 16 << 10;  // cheap rings
  DefaultSessionCore core(options);
  const ServiceCore::Admission first =
      core->Admit(MakeHello(), Identity(100, 1));
  ASSERT_EQ(first.reply.producer_id, 1u);
  WriteAndLeave(core.get(), first, "first", 30);

  constexpr uint32_t kLifetimes = 65600;
  uint32_t refused = 0;
  for (uint32_t i = 0; i < kLifetimes; ++i) {
    const ServiceCore::Admission a =
        core->Admit(MakeHello(), Identity(1000, 1));
    if (a.reply.status != ipc::HelloStatus::kOk) {
      ++refused;
      continue;
    }
    ASSERT_NE(a.reply.producer_id, 1u) << "id 1 still has data";
    core->RemoveProducer(
        static_cast<trace_buffer::ProducerID>(a.reply.producer_id));
  }
  EXPECT_EQ(refused, 0u);
  EXPECT_EQ(core->producers()->stats().producers_seen, 1u + kLifetimes);
  // 65534 fresh ids after id 1; the rest reused.
  EXPECT_EQ(core->producers()->stats().producer_ids_reused,
            kLifetimes - 65534u);

  const ServiceCore::Admission last =
      core->Admit(MakeHello(), Identity(200, 2));
  ASSERT_EQ(last.reply.status, ipc::HelloStatus::kOk);
  WriteAndLeave(core.get(), last, "last", 20);
  ExportSummary summary;
  const perfetto::protos::Trace trace =
      FinishInto(&core, dir.File("trace.pftrace"), &summary);
  const auto tagged = CollectTestPackets(trace);
  ASSERT_EQ(tagged.size(), 2u);
  EXPECT_EQ(tagged.at("first").seqs, Seqs(0, 30));
  EXPECT_EQ(tagged.at("first").trusted_pids, std::set<int32_t>{100});
  EXPECT_EQ(tagged.at("last").seqs, Seqs(0, 20));
  EXPECT_EQ(tagged.at("last").trusted_pids, std::set<int32_t>{200});
  EXPECT_EQ(summary.export_stats.packets_with_loss, 0u);
}

// Puts a reserved state word at position 0 of |a|'s ring and publishes it.
void BreakRing(const ServiceCore::Admission& a) {
  base::Status status;
  std::unique_ptr<shm_ring::SharedRingRegion> region =
      shm_ring::SharedRingRegion::MapFd(
          dup(a.ring_fd), RingGeometry(a.reply.chunk_size, a.reply.num_chunks),
          &status);
  ASSERT_TRUE(region) << status.message();
  region->view().chunk_state(0)->store(0xbad00000u, std::memory_order_relaxed);
  // Release: pairs with the reader's acquire load of write_pos.
  region->view().write_pos()->store(1, std::memory_order_release);
}

// A ring the drainer stops is reported through stopped_rings_fd() with its
// producer; one that stops in the final drain of a producer already gone is
// counted but names nobody (its id may be someone else's by then).
TEST(TracingServiceCoreTest, StoppedRingsAreReportedByRing) {
  DefaultSessionCore core(CoreOptions());
  const ServiceCore::Admission a = core->Admit(MakeHello(), Identity(1, 2));
  const ServiceCore::Admission b = core->Admit(MakeHello(), Identity(3, 4));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  ASSERT_EQ(b.reply.status, ipc::HelloStatus::kOk);
  ASSERT_NO_FATAL_FAILURE(BreakRing(a));
  core->producers()->OnDrainRequest(
      static_cast<trace_buffer::ProducerID>(a.reply.producer_id));
  pollfd p = {core->producers()->stopped_rings_fd(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, test::kTestTimeoutMs), 1);
  EXPECT_EQ(core->producers()->TakeStoppedProducers(),
            std::vector<trace_buffer::ProducerID>{
                static_cast<trace_buffer::ProducerID>(a.reply.producer_id)});
  EXPECT_EQ(core->producers()->stats().rings_stopped_protocol_error, 1u);
  EXPECT_EQ(poll(&p, 1, 0), 0) << "the eventfd was cleared";

  ASSERT_NO_FATAL_FAILURE(BreakRing(b));
  core->RemoveProducer(
      static_cast<trace_buffer::ProducerID>(b.reply.producer_id));
  EXPECT_TRUE(core->producers()->TakeStoppedProducers().empty());
  EXPECT_EQ(core->producers()->stats().rings_stopped_protocol_error, 2u);
}

TEST(TracingServiceCoreTest, DrainRequestWakesTheDrainLoop) {
  ServiceCore::Options options = CoreOptions();
  options.drain_tick_ns = 3'600'000'000'000;  // no tick during the test
  options.head_grace_ns = 0;
  DefaultSessionCore core(options);
  const ServiceCore::Admission a = core->Admit(MakeHello(), Identity(1, 2));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  ProducerSide producer(a);
  std::unique_ptr<shm_ring::TraceWriterV2> writer = producer.NewWriter();
  WriteTestPackets(writer.get(), "x", 0, 10);
  writer->Flush();
  EXPECT_EQ(core->DrainerStats().reader.chunks_emitted, 0u);
  core->producers()->OnDrainRequest(
      static_cast<trace_buffer::ProducerID>(a.reply.producer_id));
  EXPECT_EQ(core->producers()->stats().drain_requests, 1u);
  // The pass runs on the drain thread; wait for it (bounded).
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(test::kTestTimeoutMs);
  while (core->DrainerStats().reader.chunks_emitted == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_GT(core->DrainerStats().reader.chunks_emitted, 0u);
}

TEST(TracingServiceCoreTest,
     RemovedProducerIsDrainedAndExportedWithItsIdentity) {
  TempDir dir;
  ServiceCore::Options options = CoreOptions();
  options.drain_tick_ns = 3'600'000'000'000;  // only final drains read
  DefaultSessionCore core(options);
  const ServiceCore::Admission a =
      core->Admit(MakeHello(), Identity(/*pid=*/4321, /*uid=*/1234));
  const ServiceCore::Admission b =
      core->Admit(MakeHello(), Identity(/*pid=*/4322, /*uid=*/1235));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  ASSERT_EQ(b.reply.status, ipc::HelloStatus::kOk);
  {
    ProducerSide pa(a);
    ProducerSide pb(b);
    std::unique_ptr<shm_ring::TraceWriterV2> a1 = pa.NewWriter();
    std::unique_ptr<shm_ring::TraceWriterV2> a2 = pa.NewWriter();
    std::unique_ptr<shm_ring::TraceWriterV2> b1 = pb.NewWriter();
    WriteTestPackets(a1.get(), "a1", 0, 100);
    WriteTestPackets(a2.get(), "a2", 0, 7);
    WriteTestPackets(b1.get(), "b1", 0, 50);
    a1->Flush();
    a2->Flush();
    b1->Flush();
    EXPECT_EQ(core->DrainerStats().reader.chunks_emitted, 0u);
    // Producer a leaves: its ring is drained once more, then unmapped.
    core->RemoveProducer(
        static_cast<trace_buffer::ProducerID>(a.reply.producer_id));
    EXPECT_GT(core->DrainerStats().reader.chunks_emitted, 0u);
    // Producer b is still there at Finish().
  }
  const std::string out = dir.File("trace.pftrace");
  const int fd =
      open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ExportSummary summary;
  ASSERT_TRUE(core.Finish(fd, &summary).ok());
  close(fd);
  EXPECT_EQ(summary.export_stats.packets_exported, 157u);
  EXPECT_EQ(core->producers()->num_producers(), 0u);
  // Finish() runs once; nobody is admitted afterwards.
  EXPECT_FALSE(core.Finish(-1, &summary).ok());
  EXPECT_EQ(core->Admit(MakeHello(), Identity(1, 2)).reply.status,
            ipc::HelloStatus::kServiceError);

  perfetto::protos::Trace trace;
  ASSERT_TRUE(ReadTraceFile(out, &trace));
  const auto tagged = CollectTestPackets(trace);
  ASSERT_EQ(tagged.size(), 3u);
  EXPECT_EQ(tagged.at("a1").seqs, Seqs(0, 100));
  EXPECT_EQ(tagged.at("a2").seqs, Seqs(0, 7));
  EXPECT_EQ(tagged.at("b1").seqs, Seqs(0, 50));
  EXPECT_EQ(tagged.at("a1").trusted_pids, (std::set<int32_t>{4321}));
  EXPECT_EQ(tagged.at("a1").trusted_uids, (std::set<int32_t>{1234}));
  EXPECT_EQ(tagged.at("a2").trusted_pids, (std::set<int32_t>{4321}));
  EXPECT_EQ(tagged.at("b1").trusted_pids, (std::set<int32_t>{4322}));
  EXPECT_EQ(tagged.at("b1").trusted_uids, (std::set<int32_t>{1235}));

  // The service's packets: config first, system info, uuid, a clock
  // snapshot and the service events; ... the end of the read, the stats and
  // a closing clock snapshot.
  const test::ServiceMetadata md = test::ExpectServiceMetadata(trace);
  EXPECT_EQ(md.events,
            (std::vector<test::ServiceEventCase>{
                test::kEvStarted, test::kEvAllStarted, test::kEvFlushed,
                test::kEvDisabled, test::kEvReadDone}));
  ASSERT_EQ(md.event_timestamps.size(), 5u);
  // Started when the default session was, whose clocks the first snapshot
  // holds; its data sources were told to start right after (no start ack).
  EXPECT_EQ(md.event_timestamps[0], md.first_clock_boottime);
  EXPECT_GE(md.event_timestamps[1], md.first_clock_boottime);
  EXPECT_GT(md.event_timestamps[2], md.first_clock_boottime);
  ASSERT_GE(trace.packet_size(), 4);
  EXPECT_TRUE(trace.packet(0).has_trace_config());
  // The default session's config (DefaultOutConfig(1024)).
  ASSERT_EQ(trace.packet(0).trace_config().buffers_size(), 1);
  EXPECT_EQ(trace.packet(0).trace_config().buffers(0).size_kb(), 1024u);
  ASSERT_EQ(trace.packet(0).trace_config().data_sources_size(), 1);
  EXPECT_EQ(trace.packet(0).trace_config().data_sources(0).config().name(),
            "track_event");
  const auto& stats_packet = trace.packet(trace.packet_size() - 2);
  ASSERT_TRUE(stats_packet.has_trace_stats());
  EXPECT_EQ(stats_packet.trace_stats().producers_seen(), 2u);
  EXPECT_EQ(stats_packet.trace_stats().producers_connected(), 1u);
  EXPECT_EQ(stats_packet.trace_stats().buffer_stats_size(), 1);
  EXPECT_TRUE(trace.packet(trace.packet_size() - 1).has_clock_snapshot());
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
