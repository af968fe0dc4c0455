/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ServiceCore snapshots (the buffer written while tracing goes on) and the
// accounting of rejected chunks.

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
#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/service/traced/test/core_fixture.h"
#include "src/tracing/service/traced/test/test_client.h"

namespace ringtrace {
namespace traced {
namespace {

using base::TempDir;
using test::CollectTestPackets;
using test::CoreOptions;
using test::DefaultSessionCore;
using test::Identity;
using test::MakeHello;
using test::ProducerSide;
using test::ReadTraceFile;
using test::Seqs;
using test::WriteTestPackets;

// ---- Snapshots -------------------------------------------------------------

enum class Export { kSnapshot, kFinish };

// Writes a snapshot or the final trace of |core| to |path| and parses it.
base::Status ExportTo(DefaultSessionCore* core,
                      Export what,
                      const std::string& path,
                      ExportSummary* summary,
                      perfetto::protos::Trace* trace) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return base::ErrStatus("open %s failed", path.c_str());
  const base::Status status = what == Export::kSnapshot
                                  ? core->Snapshot(fd, summary)
                                  : core->Finish(fd, summary);
  close(fd);
  if (status.ok() && !ReadTraceFile(path, trace))
    return base::ErrStatus("%s does not parse", path.c_str());
  return status;
}

base::Status SnapshotTo(DefaultSessionCore* core,
                        const std::string& path,
                        ExportSummary* summary,
                        perfetto::protos::Trace* trace) {
  return ExportTo(core, Export::kSnapshot, path, summary, trace);
}

base::Status FinishTo(DefaultSessionCore* core,
                      const std::string& path,
                      ExportSummary* summary,
                      perfetto::protos::Trace* trace) {
  return ExportTo(core, Export::kFinish, path, summary, trace);
}

// trusted_packet_sequence_id of every for_testing packet tagged |tag|.
std::set<uint32_t> SequenceIdsOf(const perfetto::protos::Trace& trace,
                                 const std::string& tag) {
  std::set<uint32_t> ids;
  for (const perfetto::protos::TracePacket& p : trace.packet()) {
    if (p.has_for_testing() && p.for_testing().str() == tag)
      ids.insert(p.trusted_packet_sequence_id());
  }
  return ids;
}

// The service's framing of a complete trace (ExpectServiceMetadata): the
// header (config, system info, uuid, clock snapshot, service events), ...,
// read_tracing_buffers_completed, stats, clock snapshot. A snapshot's
// events: the buffer's start, no stop.
test::ServiceMetadata ExpectServicePackets(const perfetto::protos::Trace& trace,
                                           Export what) {
  const test::ServiceMetadata md = test::ExpectServiceMetadata(trace);
  if (what == Export::kSnapshot) {
    EXPECT_EQ(md.events,
              (std::vector<test::ServiceEventCase>{
                  test::kEvStarted, test::kEvAllStarted, test::kEvReadDone}));
  } else {
    EXPECT_EQ(md.events,
              (std::vector<test::ServiceEventCase>{
                  test::kEvStarted, test::kEvAllStarted, test::kEvFlushed,
                  test::kEvDisabled, test::kEvReadDone}));
  }
  // Tracing started when the session did: the first clock snapshot.
  if (!md.event_timestamps.empty()) {
    EXPECT_EQ(md.event_timestamps[0], md.first_clock_boottime);
  }
  return md;
}

ServiceCore::Options SnapshotOptions() {
  ServiceCore::Options options = CoreOptions();
  // Only the snapshots' and the final drains read the rings.
  options.drain_tick_ns = 3'600'000'000'000;
  return options;
}

TEST(TracingServiceCoreSnapshotTest,
     HoldsTwoProducersPacketsAndLeavesThemForTheFinalTrace) {
  TempDir dir;
  DefaultSessionCore core(SnapshotOptions());
  const ServiceCore::Admission a =
      core->Admit(MakeHello(), Identity(/*pid=*/4321, /*uid=*/1234));
  const ServiceCore::Admission b =
      core->Admit(MakeHello(), Identity(/*pid=*/4322, /*uid=*/1235));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  ASSERT_EQ(b.reply.status, ipc::HelloStatus::kOk);
  ProducerSide pa(a);
  ProducerSide pb(b);
  std::unique_ptr<shm_ring::TraceWriterV2> a1 = pa.NewWriter();
  std::unique_ptr<shm_ring::TraceWriterV2> b1 = pb.NewWriter();
  WriteTestPackets(a1.get(), "a1", 0, 100);
  WriteTestPackets(b1.get(), "b1", 0, 50);
  a1->Flush();
  b1->Flush();
  EXPECT_EQ(core->DrainerStats().reader.chunks_emitted, 0u);

  ExportSummary s1;
  perfetto::protos::Trace t1;
  base::Status status = SnapshotTo(&core, dir.File("s1"), &s1, &t1);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(s1.export_stats.packets_exported, 150u);
  EXPECT_GT(s1.drainer_stats.reader.chunks_emitted, 0u);
  EXPECT_GT(s1.file_size, 0u);
  const test::ServiceMetadata md1 = ExpectServicePackets(t1, Export::kSnapshot);
  const auto& stats1 = t1.packet(t1.packet_size() - 2).trace_stats();
  EXPECT_EQ(stats1.producers_connected(), 2u);
  EXPECT_EQ(stats1.producers_seen(), 2u);
  auto tagged = CollectTestPackets(t1);
  ASSERT_EQ(tagged.size(), 2u);
  EXPECT_EQ(tagged.at("a1").seqs, Seqs(0, 100));
  EXPECT_EQ(tagged.at("b1").seqs, Seqs(0, 50));
  EXPECT_EQ(tagged.at("a1").trusted_pids, (std::set<int32_t>{4321}));
  EXPECT_EQ(tagged.at("b1").trusted_pids, (std::set<int32_t>{4322}));
  EXPECT_EQ(tagged.at("b1").trusted_uids, (std::set<int32_t>{1235}));

  // The producers stay; the writers go on in the same sequences.
  EXPECT_EQ(core->producers()->num_producers(), 2u);
  WriteTestPackets(a1.get(), "a1", 100, 50);
  a1->Flush();
  ExportSummary s2;
  perfetto::protos::Trace t2;
  status = SnapshotTo(&core, dir.File("s2"), &s2, &t2);
  ASSERT_TRUE(status.ok()) << status.message();
  tagged = CollectTestPackets(t2);
  EXPECT_EQ(tagged.at("a1").seqs, Seqs(0, 150));
  EXPECT_EQ(tagged.at("b1").seqs, Seqs(0, 50));
  EXPECT_EQ(SequenceIdsOf(t2, "a1").size(), 1u);
  const test::ServiceMetadata md2 = ExpectServicePackets(t2, Export::kSnapshot);

  // The copies had their own read state: the final trace still holds every
  // packet the snapshots held, as single sequences without loss.
  WriteTestPackets(b1.get(), "b1", 50, 10);
  a1.reset();
  b1.reset();
  ExportSummary final_summary;
  perfetto::protos::Trace final_trace;
  status = FinishTo(&core, dir.File("final"), &final_summary, &final_trace);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(final_summary.export_stats.packets_exported, 210u);
  EXPECT_EQ(final_summary.export_stats.packets_with_loss, 0u);
  const test::ServiceMetadata md_final =
      ExpectServicePackets(final_trace, Export::kFinish);
  // Every snapshot is a trace file of its own, with its own uuid; the
  // clocks of tracing's start are the same in all three.
  EXPECT_TRUE(md1.uuid_msb != md2.uuid_msb || md1.uuid_lsb != md2.uuid_lsb);
  EXPECT_TRUE(md1.uuid_msb != md_final.uuid_msb ||
              md1.uuid_lsb != md_final.uuid_lsb);
  EXPECT_TRUE(md2.uuid_msb != md_final.uuid_msb ||
              md2.uuid_lsb != md_final.uuid_lsb);
  EXPECT_EQ(md1.first_clock_boottime, md_final.first_clock_boottime);
  EXPECT_EQ(md2.first_clock_boottime, md_final.first_clock_boottime);
  tagged = CollectTestPackets(final_trace);
  EXPECT_EQ(tagged.at("a1").seqs, Seqs(0, 150));
  EXPECT_EQ(tagged.at("b1").seqs, Seqs(0, 60));
  EXPECT_EQ(SequenceIdsOf(final_trace, "a1").size(), 1u);
  EXPECT_EQ(SequenceIdsOf(final_trace, "b1").size(), 1u);
  EXPECT_EQ(tagged.at("a1").trusted_pids, (std::set<int32_t>{4321}));
}

TEST(TracingServiceCoreSnapshotTest, LeavesAnOpenChunkToItsWriter) {
  TempDir dir;
  ServiceCore::Options options = SnapshotOptions();
  // The open chunk stays within its grace for the whole test: only a flush
  // (or a full ring) would take it.
  options.head_grace_ns = 3'600'000'000'000;
  DefaultSessionCore core(options);
  const ServiceCore::Admission a = core->Admit(MakeHello(), Identity(1, 2));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  ProducerSide producer(a);
  std::unique_ptr<shm_ring::TraceWriterV2> w = producer.NewWriter();
  WriteTestPackets(w.get(), "w", 0, 10);
  w->Flush();  // published

  ExportSummary s;
  perfetto::protos::Trace t;
  base::Status status = SnapshotTo(&core, dir.File("s1"), &s, &t);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(CollectTestPackets(t).at("w").seqs, Seqs(0, 10));

  // Packets 10..14 finished but unpublished (publication is deferred to the
  // chunk's retirement or a Flush), packet 15 in progress.
  WriteTestPackets(w.get(), "w", 10, 5);
  {
    auto handle = w->NewTracePacket();
    perfetto::protos::rtzero::TracePacket packet(handle);
    packet.set_timestamp(15);
    perfetto::protos::rtzero::TestEvent ev = packet.set_for_testing();
    ev.set_str("w");

    status = SnapshotTo(&core, dir.File("s2"), &s, &t);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(CollectTestPackets(t).at("w").seqs, Seqs(0, 10));
    EXPECT_EQ(s.export_stats.packets_exported, 10u);

    ev.set_seq_value(15);  // the packet ends with the handle
  }
  WriteTestPackets(w.get(), "w", 16, 4);
  w->Flush();
  // Nothing was scraped under the writer.
  EXPECT_EQ(w->stats().relocations, 0u);
  EXPECT_EQ(w->stats().packets_dropped, 0u);
  EXPECT_EQ(w->stats().packets_committed, 20u);
  EXPECT_EQ(core->DrainerStats().reader.holes, 0u);

  w.reset();
  perfetto::protos::Trace final_trace;
  status = FinishTo(&core, dir.File("final"), &s, &final_trace);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(CollectTestPackets(final_trace).at("w").seqs, Seqs(0, 20));
  EXPECT_EQ(s.export_stats.packets_with_loss, 0u);
}

TEST(TracingServiceCoreSnapshotTest, OfAnEmptyBufferAndNotAfterFinish) {
  TempDir dir;
  DefaultSessionCore core(SnapshotOptions());
  ExportSummary s;
  perfetto::protos::Trace t;
  base::Status status = SnapshotTo(&core, dir.File("s1"), &s, &t);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(s.export_stats.packets_exported, 0u);
  ExpectServicePackets(t, Export::kSnapshot);

  perfetto::protos::Trace final_trace;
  status = FinishTo(&core, dir.File("final"), &s, &final_trace);
  ASSERT_TRUE(status.ok()) << status.message();
  const int fd = open(dir.File("s2").c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  status = core.Snapshot(fd, &s);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no session"), std::string::npos)
      << status.message();
  struct stat st = {};
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 0);  // nothing written
  close(fd);
}

TEST(TracingServiceCoreSnapshotTest, RingBufferOverwriteShowsBetweenSnapshots) {
  TempDir dir;
  DefaultSessionCore core(
      SnapshotOptions(),
      DefaultOutConfig(
          64, trace_buffer::TraceBufferV2::OverwritePolicy::kOverwrite));
  const ServiceCore::Admission a = core->Admit(MakeHello(), Identity(1, 2));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  // 1 MiB ring: it holds everything written below, so nothing is lost
  // before the buffer.
  ASSERT_EQ(uint64_t{a.reply.chunk_size} * a.reply.num_chunks, 1u << 20);
  ProducerSide producer(a);
  std::unique_ptr<shm_ring::TraceWriterV2> w = producer.NewWriter();
  const std::string tag(200, 'o');  // ~215-byte packets
  WriteTestPackets(w.get(), tag, 0, 100);
  w->Flush();

  ExportSummary s1;
  perfetto::protos::Trace t1;
  base::Status status = SnapshotTo(&core, dir.File("s1"), &s1, &t1);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(CollectTestPackets(t1).at(tag).seqs, Seqs(0, 100));
  EXPECT_EQ(s1.packets_overwritten, 0u);
  EXPECT_EQ(s1.buffer_stats.chunks_overwritten, 0u);

  // About 215 KB more into the 64 KiB buffer: the oldest packets go.
  constexpr uint32_t kTotal = 1100;
  WriteTestPackets(w.get(), tag, 100, kTotal - 100);
  w->Flush();
  EXPECT_EQ(w->stats().packets_dropped, 0u);
  ExportSummary s2;
  perfetto::protos::Trace t2;
  status = SnapshotTo(&core, dir.File("s2"), &s2, &t2);
  ASSERT_TRUE(status.ok()) << status.message();
  const std::vector<uint32_t> seqs = CollectTestPackets(t2).at(tag).seqs;
  ASSERT_FALSE(seqs.empty());
  // The newest packets, in order; the oldest (the whole first snapshot)
  // are gone, and counted.
  const uint32_t first = seqs.front();
  EXPECT_GE(first, 100u);
  EXPECT_EQ(seqs, Seqs(first, kTotal - first));
  // Every packet missing from the snapshot was counted as overwritten.
  EXPECT_EQ(s2.packets_overwritten, first);
  // And the gap is marked on the first packet after it (only there).
  EXPECT_EQ(s2.export_stats.packets_with_loss, 1u);
  for (const perfetto::protos::TracePacket& p : t2.packet()) {
    if (p.has_for_testing()) {
      EXPECT_EQ(
          p.previous_packet_dropped(),
          trace_buffer::kDataLossPresent | trace_buffer::kDataLossOverwrite);
      break;
    }
  }
  EXPECT_GT(s2.buffer_stats.chunks_overwritten, 0u);
  ExpectServicePackets(t2, Export::kSnapshot);
  const auto& stats2 = t2.packet(t2.packet_size() - 2).trace_stats();
  ASSERT_EQ(stats2.buffer_stats_size(), 1);
  EXPECT_EQ(stats2.buffer_stats(0).chunks_overwritten(),
            s2.buffer_stats.chunks_overwritten);
  EXPECT_GT(stats2.buffer_stats(0).bytes_overwritten(), 0u);
}

// DISCARD: once the buffer is full, every further chunk the drainer hands
// it is rejected. Each such chunk is counted once, by the buffer that
// rejected it (BufferStats.chunks_discarded; neither the drainer nor the
// ring reader counts it). TraceStats.chunks_discarded holds only the chunks
// lost before any buffer (none here), as Perfetto's field means.
TEST(ServiceCoreStatsTest, DiscardCountsEachRejectedChunkOnce) {
  TempDir dir;
  DefaultSessionCore core(
      SnapshotOptions(),
      DefaultOutConfig(64,
                       trace_buffer::TraceBufferV2::OverwritePolicy::kDiscard));
  const ServiceCore::Admission a = core->Admit(MakeHello(), Identity(1, 2));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  // The 1 MiB ring holds all of it: nothing is lost before the buffer.
  ASSERT_EQ(uint64_t{a.reply.chunk_size} * a.reply.num_chunks, 1u << 20);
  {
    ProducerSide producer(a);
    std::unique_ptr<shm_ring::TraceWriterV2> w = producer.NewWriter();
    WriteTestPackets(w.get(), std::string(200, 'd'), 0, 2000);  // ~430 KB
    w->Flush();
    EXPECT_EQ(w->stats().packets_dropped, 0u);
  }
  ExportSummary s;
  perfetto::protos::Trace trace;
  const base::Status status = FinishTo(&core, dir.File("trace"), &s, &trace);
  ASSERT_TRUE(status.ok()) << status.message();
  const ring_drainer::RingStats& d = s.drainer_stats;
  const trace_buffer::TraceBufferStats& b = s.buffer_stats;
  EXPECT_EQ(d.chunks_unroutable, 0u);
  EXPECT_GT(b.chunks_discarded, 0u);
  // Every chunk the reader committed to the buffer is written (or, arriving
  // late, dropped and counted); the chunks the buffer refused are in its
  // own count only.
  EXPECT_EQ(d.reader.chunks_emitted, b.chunks_written + b.late_chunks_dropped);
  EXPECT_EQ(b.abi_violations, 0u);
  ExpectServicePackets(trace, Export::kFinish);
  const auto& ts = trace.packet(trace.packet_size() - 2).trace_stats();
  ASSERT_EQ(ts.buffer_stats_size(), 1);
  EXPECT_EQ(ts.buffer_stats(0).chunks_discarded(), b.chunks_discarded);
  EXPECT_EQ(ts.chunks_discarded(), 0u);
  // What reached the buffer is in the file, from the first packet on.
  const std::vector<uint32_t> seqs =
      CollectTestPackets(trace).at(std::string(200, 'd')).seqs;
  ASSERT_FALSE(seqs.empty());
  EXPECT_EQ(seqs, Seqs(0, static_cast<uint32_t>(seqs.size())));
  EXPECT_LT(seqs.size(), 2000u);
  // Every packet the writer finished is in the file or in the buffer's
  // count of what it discarded, once.
  EXPECT_EQ(seqs.size() + b.packets_discarded, 2000u);
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
