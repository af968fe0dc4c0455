/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_export/trace_exporter.h"

#include <gtest/gtest.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "ringtrace/proto_wire.h"
#include "src/tracing/service/trace_export/test/read_fd.h"

namespace ringtrace {
namespace trace_export {
namespace {

using encoding::EncodeVarInt;
using encoding::kMaxVarIntSize;
using encoding::kWireEndGroup;
using encoding::kWireLengthDelimited;
using encoding::kWireStartGroup;
using encoding::kWireVarInt;
using encoding::MakeTag;
using perfetto::protos::Trace;
using perfetto::protos::TracePacket;
using trace_buffer::ClientIdentity;
using trace_buffer::FragmentRef;
using trace_buffer::TraceBufferV2;

// Group-encoded packets, the way TraceWriterV2 writes them.
class GroupPacket {
 public:
  GroupPacket& VarInt(uint32_t field, uint64_t v) {
    Raw(MakeTag(field, kWireVarInt));
    Raw(v);
    return *this;
  }
  GroupPacket& String(uint32_t field, const std::string& s) {
    Raw(MakeTag(field, kWireLengthDelimited));
    Raw(s.size());
    bytes_ += s;
    return *this;
  }
  GroupPacket& Begin(uint32_t field) {
    Raw(MakeTag(field, kWireStartGroup));
    return *this;
  }
  GroupPacket& End(uint32_t field) {
    Raw(MakeTag(field, kWireEndGroup));
    return *this;
  }
  // TracePacket{for_testing: {str: s, seq_value: seq}}
  GroupPacket& ForTesting(const std::string& s, uint32_t seq) {
    return Begin(900).String(1, s).VarInt(2, seq).End(900);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  void Raw(uint64_t v) {
    uint8_t buf[kMaxVarIntSize];
    uint8_t* end = EncodeVarInt(v, buf);
    bytes_.append(reinterpret_cast<char*>(buf), static_cast<size_t>(end - buf));
  }
  std::string bytes_;
};

std::string TestPacket(const std::string& s, uint32_t seq) {
  return GroupPacket().VarInt(8, 1000 + seq).ForTesting(s, seq).bytes();
}

class TraceExporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tb_ = TraceBufferV2::Create(256 * 1024,
                                TraceBufferV2::OverwritePolicy::kDiscard);
    ASSERT_TRUE(tb_);
    fd_ = memfd_create("trace_exporter_unittest", 0);
    ASSERT_GE(fd_, 0);
    writer_.reset(new TraceFileWriter(fd_));
    TraceExporter::Options options;
    options.service_uid = 4242;
    options.service_pid = 77;
    exporter_.reset(new TraceExporter(writer_.get(), options));
  }
  void TearDown() override { close(fd_); }

  // One chunk holding |packets| as whole fragments.
  void AddChunk(
      uint16_t producer,
      uint16_t writer,
      uint32_t chunk_id,
      const std::vector<std::string>& packets,
      trace_buffer::TBChunkFlags flags = trace_buffer::kNoTBChunkFlags,
      ClientIdentity identity = {1000, 321}) {
    ASSERT_TRUE(AddChunkTo(tb_.get(), producer, writer, chunk_id, packets,
                           flags, identity));
  }
  // The same into |tb|; false if |tb| rejected the chunk.
  static bool AddChunkTo(
      TraceBufferV2* tb,
      uint16_t producer,
      uint16_t writer,
      uint32_t chunk_id,
      const std::vector<std::string>& packets,
      trace_buffer::TBChunkFlags flags = trace_buffer::kNoTBChunkFlags,
      ClientIdentity identity = {1000, 321}) {
    std::vector<FragmentRef> frags;
    for (const std::string& p : packets) {
      frags.push_back(FragmentRef{reinterpret_cast<const uint8_t*>(p.data()),
                                  static_cast<uint32_t>(p.size())});
    }
    return tb->CopyChunkFragments(producer, identity, writer, chunk_id,
                                  frags.data(), frags.size(), flags);
  }

  // Finishes the file and parses it.
  Trace ReadTrace() {
    EXPECT_TRUE(exporter_->Finish().ok());
    const std::string bytes = test::ReadWholeFd(fd_);
    Trace trace;
    EXPECT_TRUE(trace.ParseFromString(bytes));
    return trace;
  }

  // The producer packets (those not on the service's sequence) of |trace|.
  static std::vector<TracePacket> ProducerPackets(const Trace& trace) {
    std::vector<TracePacket> out;
    for (const TracePacket& p : trace.packet()) {
      if (p.trusted_packet_sequence_id() != kServiceSequenceId)
        out.push_back(p);
    }
    return out;
  }

  std::unique_ptr<TraceBufferV2> tb_;
  int fd_ = -1;
  std::unique_ptr<TraceFileWriter> writer_;
  std::unique_ptr<TraceExporter> exporter_;
};

TEST_F(TraceExporterTest, WritesConfigPacketsStatsAndClockSnapshot) {
  perfetto::protos::TraceConfig config;
  config.set_duration_ms(1234);
  config.add_buffers()->set_size_kb(256);
  const std::string config_bytes = config.SerializeAsString();
  exporter_->WriteTraceConfig(config_bytes.data(), config_bytes.size());

  AddChunk(1, 5, 0, {TestPacket("a0", 0), TestPacket("a1", 1)});
  AddChunk(2, 9, 0, {TestPacket("b0", 0)}, trace_buffer::kNoTBChunkFlags,
           {2000, 654});
  AddChunk(1, 5, 1, {TestPacket("a2", 2)});
  exporter_->ExportBuffer(tb_.get());
  exporter_->WriteTraceStats({tb_.get()}, {3, 4, 5});
  exporter_->WriteClockSnapshot();
  const Trace trace = ReadTrace();

  ASSERT_EQ(trace.packet_size(), 1 + 4 + 2);
  const TracePacket& first = trace.packet(0);
  ASSERT_TRUE(first.has_trace_config());
  EXPECT_EQ(first.trace_config().duration_ms(), 1234u);
  EXPECT_EQ(first.trusted_uid(), 4242);
  EXPECT_EQ(first.trusted_pid(), 77);
  EXPECT_EQ(first.trusted_packet_sequence_id(), kServiceSequenceId);

  const uint32_t seq_a = exporter_->SequenceIdFor(1, 5);
  const uint32_t seq_b = exporter_->SequenceIdFor(2, 9);
  EXPECT_EQ(std::min(seq_a, seq_b), 2u);  // 1 is the service's
  EXPECT_EQ(std::max(seq_a, seq_b), 3u);

  std::vector<std::string> a_strs;
  int b_count = 0;
  for (const TracePacket& p : ProducerPackets(trace)) {
    ASSERT_TRUE(p.has_for_testing());
    EXPECT_FALSE(p.has_previous_packet_dropped());
    if (p.trusted_packet_sequence_id() == seq_a) {
      EXPECT_EQ(p.trusted_uid(), 1000);
      EXPECT_EQ(p.trusted_pid(), 321);
      EXPECT_EQ(p.first_packet_on_sequence(), a_strs.empty());
      EXPECT_EQ(p.timestamp(), 1000 + a_strs.size());
      EXPECT_EQ(p.for_testing().seq_value(), a_strs.size());
      a_strs.push_back(p.for_testing().str());
    } else {
      ASSERT_EQ(p.trusted_packet_sequence_id(), seq_b);
      EXPECT_EQ(p.trusted_uid(), 2000);
      EXPECT_EQ(p.trusted_pid(), 654);
      EXPECT_TRUE(p.first_packet_on_sequence());
      EXPECT_EQ(p.for_testing().str(), "b0");
      ++b_count;
    }
  }
  EXPECT_EQ(a_strs, (std::vector<std::string>{"a0", "a1", "a2"}));
  EXPECT_EQ(b_count, 1);

  const TracePacket& stats_packet = trace.packet(5);
  ASSERT_TRUE(stats_packet.has_trace_stats());
  EXPECT_EQ(stats_packet.trusted_uid(), 4242);
  const auto& ts = stats_packet.trace_stats();
  EXPECT_EQ(ts.producers_connected(), 3u);
  EXPECT_EQ(ts.producers_seen(), 4u);
  EXPECT_EQ(ts.chunks_discarded(), 5u);
  EXPECT_EQ(ts.invalid_packets(), 0u);
  ASSERT_EQ(ts.buffer_stats_size(), 1);
  const auto& bs = ts.buffer_stats(0);
  const trace_buffer::TraceBufferStats& s = tb_->stats();
  EXPECT_EQ(bs.buffer_size(), tb_->size());
  EXPECT_EQ(bs.bytes_written(), s.bytes_written);
  EXPECT_EQ(bs.bytes_read(), s.chunk_bytes_read);  // Perfetto's meaning
  EXPECT_EQ(bs.chunks_written(), 3u);
  EXPECT_EQ(bs.chunks_read(), s.chunks_read);
  EXPECT_GT(bs.bytes_read(), 0u);

  const TracePacket& clock_packet = trace.packet(6);
  ASSERT_TRUE(clock_packet.has_clock_snapshot());
  const auto& cs = clock_packet.clock_snapshot();
  EXPECT_EQ(cs.primary_trace_clock(), 6u);
  ASSERT_EQ(cs.clocks_size(), 3);
  EXPECT_EQ(cs.clocks(0).clock_id(), 6u);
  EXPECT_EQ(cs.clocks(0).timestamp(), clock_packet.timestamp());
  EXPECT_EQ(cs.clocks(1).clock_id(), 3u);
  EXPECT_EQ(cs.clocks(2).clock_id(), 1u);
  EXPECT_GT(cs.clocks(2).timestamp(), cs.clocks(1).timestamp());

  EXPECT_EQ(exporter_->stats().packets_exported, 4u);
  EXPECT_EQ(exporter_->stats().service_packets, 3u);
  EXPECT_EQ(exporter_->stats().sequences, 2u);
}

TEST_F(TraceExporterTest, ForgedTrustedFieldsAreOverridden) {
  // The producer sets every service-only field, on the first packet and on a
  // later one (where the service itself would write neither 42 nor 87).
  auto forged = [](uint32_t seq) {
    return GroupPacket()
        .VarInt(3, 666)   // trusted_uid
        .VarInt(79, 777)  // trusted_pid
        .VarInt(10, 99)   // trusted_packet_sequence_id
        .VarInt(42, 5)    // previous_packet_dropped
        .VarInt(87, 1)    // first_packet_on_sequence
        .ForTesting("forged", seq)
        .bytes();
  };
  AddChunk(3, 1, 0, {forged(0), forged(1), TestPacket("honest", 2)},
           trace_buffer::kNoTBChunkFlags, {-5, 4321});
  exporter_->ExportBuffer(tb_.get());
  const std::vector<TracePacket> packets = ProducerPackets(ReadTrace());
  ASSERT_EQ(packets.size(), 3u);
  for (size_t i = 0; i < packets.size(); ++i) {
    const TracePacket& p = packets[i];
    EXPECT_EQ(p.trusted_uid(), -5) << i;
    EXPECT_EQ(p.trusted_pid(), 4321) << i;
    EXPECT_EQ(p.trusted_packet_sequence_id(), 2u) << i;
    EXPECT_EQ(p.previous_packet_dropped(), 0u) << i;
    EXPECT_EQ(p.first_packet_on_sequence(), i == 0) << i;
    EXPECT_EQ(p.for_testing().seq_value(), i);
  }
  // The honest later packet carries neither field at all.
  EXPECT_FALSE(packets[2].has_previous_packet_dropped());
  EXPECT_FALSE(packets[2].has_first_packet_on_sequence());
  EXPECT_EQ(exporter_->stats().forged_trusted_fields, 2u);
  EXPECT_EQ(exporter_->stats().invalid_packets, 0u);
}

TEST_F(TraceExporterTest, PacketsImpersonatingTheServiceAreDropped) {
  const std::string fake_stats =
      GroupPacket().Begin(35).VarInt(10, 0).End(35).bytes();
  const std::string fake_config =
      GroupPacket().Begin(33).VarInt(3, 1).End(33).bytes();
  AddChunk(1, 1, 0, {fake_stats, TestPacket("ok", 1), fake_config});
  exporter_->ExportBuffer(tb_.get());
  exporter_->WriteTraceStats({tb_.get()}, {});
  const Trace trace = ReadTrace();
  const std::vector<TracePacket> packets = ProducerPackets(trace);
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(packets[0].for_testing().str(), "ok");
  // The dropped packet before it is reported as a loss on the sequence.
  EXPECT_EQ(
      packets[0].previous_packet_dropped(),
      trace_buffer::kDataLossPresent | trace_buffer::kDataLossChunkCorrupted);
  EXPECT_EQ(exporter_->stats().invalid_packets, 2u);
  ASSERT_TRUE(trace.packet(trace.packet_size() - 1).has_trace_stats());
  EXPECT_EQ(
      trace.packet(trace.packet_size() - 1).trace_stats().invalid_packets(),
      2u);
}

// The direct path (small one-slice packets framed in the file batch) and
// the general path write the same bytes, for every kind of packet: small
// and large, with and without groups, forged trusted fields, impersonation,
// malformed ones, multi-slice ones, and losses to report.
TEST_F(TraceExporterTest, DirectAndGeneralPathsWriteTheSameBytes) {
  const std::string forged = GroupPacket()
                                 .VarInt(8, 5)
                                 .VarInt(10, 999)  // trusted_packet_sequence_id
                                 .VarInt(42, 1)
                                 .VarInt(87, 1)
                                 .bytes();
  const std::string flat = GroupPacket().VarInt(8, 6).String(5000, "f").bytes();
  const std::string fake_stats =
      GroupPacket().Begin(35).VarInt(10, 0).End(35).bytes();
  const std::string unterminated =
      GroupPacket().Begin(900).String(1, "x").bytes();
  const std::string deep = GroupPacket()
                               .Begin(900)
                               .Begin(5)
                               .Begin(5)
                               .Begin(5)
                               .Begin(5)
                               .Begin(5)
                               .Begin(5)
                               .Begin(5)
                               .Begin(5)
                               .VarInt(1, 1)
                               .End(5)
                               .End(5)
                               .End(5)
                               .End(5)
                               .End(5)
                               .End(5)
                               .End(5)
                               .End(5)
                               .End(900)
                               .bytes();  // 9 deep: the general path
  AddChunk(1, 1, 0,
           {TestPacket("a", 0), forged, flat, fake_stats, TestPacket("b", 1),
            unterminated, deep, TestPacket(std::string(70, 'L'), 2),
            TestPacket(std::string(200, 'M'), 3)});
  const std::string spanning = TestPacket(std::string(40, 's'), 4);
  AddChunk(1, 1, 1, {spanning.substr(0, 10)},
           trace_buffer::kChunkContinuesOnNext);
  AddChunk(1, 1, 2, {spanning.substr(10), TestPacket("c", 5)},
           trace_buffer::kChunkContinuesFromPrev);
  AddChunk(1, 2, 3, {TestPacket("gap", 0)});  // ChunkID 3: not the first
  std::unique_ptr<TraceBufferV2> copy = tb_->CloneReadOnly();
  ASSERT_TRUE(copy);
  std::unique_ptr<TraceBufferV2> unbatched_copy = tb_->CloneReadOnly();
  ASSERT_TRUE(unbatched_copy);

  exporter_->ExportBuffer(tb_.get());
  ASSERT_TRUE(exporter_->Finish().ok());
  TraceExporter::Options options;
  options.service_uid = 4242;
  options.service_pid = 77;
  // The same buffer through the direct path one packet at a time, and
  // through the general path one packet at a time.
  auto export_copy = [&options](TraceBufferV2* buffer, bool direct,
                                ExportStats* stats) {
    const int fd = memfd_create("other", 0);
    EXPECT_GE(fd, 0);
    TraceFileWriter writer(fd);
    TraceExporter::Options o = options;
    o.direct_path = direct;
    o.batched_runs = false;
    TraceExporter exporter(&writer, o);
    exporter.ExportBuffer(buffer);
    EXPECT_TRUE(exporter.Finish().ok());
    *stats = exporter.stats();
    const std::string bytes = test::ReadWholeFd(fd);
    close(fd);
    return bytes;
  };
  ExportStats g;
  ExportStats u;
  const std::string general_bytes = export_copy(copy.get(), false, &g);
  const std::string unbatched_bytes =
      export_copy(unbatched_copy.get(), true, &u);

  const std::string direct_bytes = test::ReadWholeFd(fd_);
  EXPECT_FALSE(direct_bytes.empty());
  EXPECT_EQ(direct_bytes, general_bytes);
  EXPECT_EQ(direct_bytes, unbatched_bytes);
  const ExportStats& d = exporter_->stats();
  EXPECT_EQ(d.packets_read, g.packets_read);
  EXPECT_EQ(d.packets_read, u.packets_read);
  // The batches were taken (a run after the first packet of the chunk),
  // and only where asked for.
  EXPECT_GT(d.packets_read_in_runs, 0u);
  EXPECT_EQ(g.packets_read_in_runs, 0u);
  EXPECT_EQ(u.packets_read_in_runs, 0u);
  EXPECT_EQ(u.packets_exported_direct, d.packets_exported_direct);
  EXPECT_EQ(d.packets_exported, g.packets_exported);
  EXPECT_EQ(d.invalid_packets, 2u);
  EXPECT_EQ(g.invalid_packets, 2u);
  EXPECT_EQ(d.forged_trusted_fields, 1u);
  EXPECT_EQ(g.forged_trusted_fields, 1u);
  EXPECT_EQ(d.packet_bytes_exported, g.packet_bytes_exported);
  // Both paths were taken: the small one-slice packets directly, the rest
  // (70 and 200 bytes of payload, 9 deep, spanning chunks) not.
  EXPECT_EQ(g.packets_exported_direct, 0u);
  EXPECT_GE(d.packets_exported_direct, 5u);
  EXPECT_LE(d.packets_exported_direct + 4, d.packets_exported);
}

TEST_F(TraceExporterTest, MalformedPacketIsDroppedCountedAndReported) {
  const std::string unterminated =
      GroupPacket().Begin(900).String(1, "x").bytes();
  const std::string mismatched =
      GroupPacket().Begin(900).String(1, "x").End(11).bytes();
  const std::string truncated = TestPacket("t", 9).substr(0, 5);
  AddChunk(4, 2, 0,
           {TestPacket("p0", 0), unterminated, TestPacket("p1", 1), mismatched,
            truncated, TestPacket("p2", 2), TestPacket("p3", 3)});
  exporter_->ExportBuffer(tb_.get());
  exporter_->WriteTraceStats({tb_.get()}, {});
  const Trace trace = ReadTrace();
  const std::vector<TracePacket> packets = ProducerPackets(trace);
  ASSERT_EQ(packets.size(), 4u);
  const uint32_t kCorrupt =
      trace_buffer::kDataLossPresent | trace_buffer::kDataLossChunkCorrupted;
  EXPECT_FALSE(packets[0].has_previous_packet_dropped());
  EXPECT_EQ(packets[1].previous_packet_dropped(), kCorrupt);
  EXPECT_EQ(packets[2].previous_packet_dropped(), kCorrupt);
  EXPECT_FALSE(packets[3].has_previous_packet_dropped());
  for (size_t i = 0; i < packets.size(); ++i)
    EXPECT_EQ(packets[i].for_testing().seq_value(), i);
  EXPECT_EQ(exporter_->stats().invalid_packets, 3u);
  EXPECT_EQ(exporter_->stats().packets_read, 7u);
  EXPECT_EQ(exporter_->stats().loss_reason_packets[2], 2u);  // CORRUPTED
  EXPECT_EQ(
      trace.packet(trace.packet_size() - 1).trace_stats().invalid_packets(),
      3u);
}

TEST_F(TraceExporterTest, LossBitsFromTheBufferArePropagated) {
  AddChunk(1, 1, 0, {TestPacket("c0", 0)});
  // ChunkID 1 never arrives: a gap before chunk 2.
  AddChunk(1, 1, 2, {TestPacket("c2", 2)});
  // The writer lost data before chunk 3 (the ring's data-loss flag).
  AddChunk(1, 1, 3, {TestPacket("c3", 3)}, trace_buffer::kChunkDataLoss);
  AddChunk(1, 1, 4, {TestPacket("c4", 4)});

  // What the buffer itself reports, from a clone read directly.
  std::unique_ptr<TraceBufferV2> clone = tb_->CloneReadOnly();
  ASSERT_TRUE(clone);
  std::vector<uint32_t> expected_loss;
  {
    trace_buffer::TracePacket packet;
    trace_buffer::PacketSequenceProperties props;
    uint32_t loss = 0;
    clone->BeginRead();
    while (clone->ReadNextTracePacket(&packet, &props, &loss))
      expected_loss.push_back(loss);
  }
  ASSERT_EQ(expected_loss.size(), 4u);
  EXPECT_EQ(expected_loss[0], 0u);
  EXPECT_NE(expected_loss[1], 0u);  // the ChunkID gap
  EXPECT_EQ(expected_loss[2],
            trace_buffer::kDataLossPresent | trace_buffer::kDataLossSmbFull);
  EXPECT_EQ(expected_loss[3], 0u);

  exporter_->ExportBuffer(tb_.get());
  const std::vector<TracePacket> packets = ProducerPackets(ReadTrace());
  ASSERT_EQ(packets.size(), 4u);
  for (size_t i = 0; i < packets.size(); ++i) {
    EXPECT_EQ(packets[i].previous_packet_dropped(), expected_loss[i]) << i;
    EXPECT_EQ(packets[i].has_previous_packet_dropped(), expected_loss[i] != 0)
        << i;
  }
  EXPECT_EQ(exporter_->stats().packets_with_loss, 2u);
  EXPECT_EQ(exporter_->stats().loss_reason_packets[8], 1u);  // SMB_FULL
  EXPECT_EQ(exporter_->stats().loss_reason_packets[0], 2u);  // PRESENT
}

// Every BufferStats field, per buffer and in the buffers' order, as
// Perfetto's traced fills it: a RING_BUFFER that wrapped over unread chunks
// and a DISCARD buffer that filled up, each read out.
TEST_F(TraceExporterTest, BufferStatsCarryPerfettosFieldsPerBuffer) {
  std::unique_ptr<TraceBufferV2> ring =
      TraceBufferV2::Create(4096, TraceBufferV2::OverwritePolicy::kOverwrite);
  std::unique_ptr<TraceBufferV2> discard =
      TraceBufferV2::Create(4096, TraceBufferV2::OverwritePolicy::kDiscard);
  ASSERT_TRUE(ring && discard);
  // About 1 KiB per chunk: the 4 KiB ring wraps over unread chunks.
  for (uint32_t i = 0; i < 10; ++i) {
    ASSERT_TRUE(AddChunkTo(
        ring.get(), 1, 1, i, {TestPacket(std::string(900, 'r'), i)},
        i == 7 ? trace_buffer::kChunkDataLoss : trace_buffer::kNoTBChunkFlags));
  }
  uint32_t discarded = 0;
  for (uint32_t i = 0; i < 10; ++i) {
    if (!AddChunkTo(discard.get(), 2, 1, i,
                    {TestPacket(std::string(900, 'd'), i)})) {
      ++discarded;
    }
  }
  ASSERT_GT(discarded, 0u);
  exporter_->ExportBuffer(ring.get());
  exporter_->ExportBuffer(discard.get());
  TraceExporter::ServiceStats service;
  service.chunks_discarded = 3;  // lost before any buffer
  exporter_->WriteTraceStats({ring.get(), discard.get()}, service);
  const Trace trace = ReadTrace();
  const auto& ts = trace.packet(trace.packet_size() - 1).trace_stats();
  ASSERT_EQ(ts.buffer_stats_size(), 2);

  const TraceBufferV2* buffers[] = {ring.get(), discard.get()};
  for (int i = 0; i < 2; ++i) {
    const auto& bs = ts.buffer_stats(i);
    const trace_buffer::TraceBufferStats& s = buffers[i]->stats();
    EXPECT_EQ(bs.buffer_size(), buffers[i]->size()) << i;
    EXPECT_EQ(bs.bytes_written(), s.bytes_written) << i;
    EXPECT_EQ(bs.bytes_overwritten(), s.bytes_overwritten) << i;
    // The chunks read, headers included (not the packet bytes).
    EXPECT_EQ(bs.bytes_read(), s.chunk_bytes_read) << i;
    EXPECT_EQ(bs.padding_bytes_written(), s.padding_bytes_written) << i;
    EXPECT_EQ(bs.padding_bytes_cleared(), s.padding_bytes_cleared) << i;
    EXPECT_EQ(bs.chunks_written(), s.chunks_written) << i;
    EXPECT_EQ(bs.chunks_rewritten(), s.chunks_rewritten) << i;
    EXPECT_EQ(bs.chunks_overwritten(), s.chunks_overwritten) << i;
    EXPECT_EQ(bs.chunks_discarded(), s.chunks_discarded) << i;
    EXPECT_EQ(bs.chunks_read(), s.chunks_read) << i;
    EXPECT_EQ(bs.chunks_committed_out_of_order(),
              s.chunks_committed_out_of_order)
        << i;
    EXPECT_EQ(bs.write_wrap_count(), s.write_wrap_count) << i;
    EXPECT_EQ(bs.patches_succeeded(), s.patches_succeeded) << i;
    EXPECT_EQ(bs.patches_failed(), s.patches_failed) << i;
    EXPECT_EQ(bs.readaheads_succeeded(), s.readaheads_succeeded) << i;
    EXPECT_EQ(bs.readaheads_failed(), s.readaheads_failed) << i;
    EXPECT_EQ(bs.abi_violations(), s.abi_violations) << i;
    EXPECT_EQ(bs.trace_writer_packet_loss(), s.trace_writer_packet_loss) << i;
    EXPECT_FALSE(bs.has_chunks_relocated()) << i;  // no such counter
    // Everything left was read: what was written is read, overwritten or
    // padding, as Perfetto's utilization formula has it.
    EXPECT_EQ(bs.bytes_written() - bs.bytes_read() - bs.bytes_overwritten(), 0u)
        << i;
  }
  const auto& ring_stats = ts.buffer_stats(0);
  EXPECT_GT(ring_stats.chunks_overwritten(), 0u);
  EXPECT_GT(ring_stats.bytes_overwritten(), 0u);
  EXPECT_GT(ring_stats.write_wrap_count(), 0u);
  EXPECT_EQ(ring_stats.chunks_discarded(), 0u);
  EXPECT_EQ(ring_stats.trace_writer_packet_loss(), 1u);  // chunk 7's flag
  const auto& discard_stats = ts.buffer_stats(1);
  EXPECT_EQ(discard_stats.chunks_discarded(), discarded);
  EXPECT_EQ(discard_stats.chunks_overwritten(), 0u);
  EXPECT_EQ(discard_stats.trace_writer_packet_loss(), 0u);
  // The buffers' rejected chunks are theirs alone: TraceStats'
  // chunks_discarded holds only the chunks no buffer saw.
  EXPECT_EQ(ts.chunks_discarded(), 3u);
}

// trace_writer_packet_loss, per buffer: the packets the producers reported
// dropped for that buffer, or the buffer's own count of flagged chunks
// where that is larger (reports missing); never the sum.
TEST_F(TraceExporterTest, TraceWriterPacketLossIsTheReportedPacketsPerBuffer) {
  std::vector<std::unique_ptr<TraceBufferV2>> owned;
  std::vector<const TraceBufferV2*> buffers;
  for (int i = 0; i < 4; ++i) {
    owned.push_back(TraceBufferV2::Create(
        64 * 1024, TraceBufferV2::OverwritePolicy::kOverwrite));
    ASSERT_TRUE(owned.back());
    buffers.push_back(owned.back().get());
  }
  // Buffer 0: 1 flagged chunk, 210161 packets reported. Buffer 1: 3
  // flagged chunks, nothing reported (the producer died). Buffer 2: no
  // loss at all. Buffer 3: 2 flagged chunks, no entry in the list.
  const uint32_t flagged[] = {1, 3, 0, 2};
  for (int b = 0; b < 4; ++b) {
    for (uint32_t i = 0; i < 4; ++i) {
      ASSERT_TRUE(AddChunkTo(owned[static_cast<size_t>(b)].get(), 1, 1, i,
                             {TestPacket("p", i)},
                             i < flagged[b] ? trace_buffer::kChunkDataLoss
                                            : trace_buffer::kNoTBChunkFlags));
    }
    ASSERT_EQ(buffers[static_cast<size_t>(b)]->stats().trace_writer_packet_loss,
              flagged[b]);
  }
  TraceExporter::ServiceStats service;
  service.producer_packets_dropped = {210161, 0, 0};
  exporter_->WriteTraceStats(buffers, service);
  const Trace trace = ReadTrace();
  const auto& ts = trace.packet(trace.packet_size() - 1).trace_stats();
  ASSERT_EQ(ts.buffer_stats_size(), 4);
  EXPECT_EQ(ts.buffer_stats(0).trace_writer_packet_loss(), 210161u);
  EXPECT_EQ(ts.buffer_stats(1).trace_writer_packet_loss(), 3u);
  EXPECT_EQ(ts.buffer_stats(2).trace_writer_packet_loss(), 0u);
  EXPECT_EQ(ts.buffer_stats(3).trace_writer_packet_loss(), 2u);
  // The rule itself.
  trace_buffer::TraceBufferStats s;
  s.trace_writer_packet_loss = 5;
  EXPECT_EQ(TraceExporter::TraceWriterPacketLoss(s, 4), 5u);
  EXPECT_EQ(TraceExporter::TraceWriterPacketLoss(s, 6), 6u);
  EXPECT_EQ(TraceExporter::TraceWriterPacketLoss(s, UINT64_MAX), UINT64_MAX);
}

// The TraceStats-level fields Perfetto's traced writes besides the buffers:
// the service's state, the flushes and the final flush's outcome (left out
// when there was none, e.g. a clone).
TEST_F(TraceExporterTest, TraceStatsCarryServiceStateAndFlushes) {
  using perfetto::protos::TraceStats;
  TraceExporter::ServiceStats service;
  service.producers_connected = 2;
  service.producers_seen = 5;
  service.data_sources_registered = 3;
  service.data_sources_seen = 7;
  service.tracing_sessions = 2;
  service.total_buffers = 4;
  service.flushes_requested = 6;
  service.flushes_succeeded = 4;
  service.flushes_failed = 2;
  service.final_flush = TraceExporter::FinalFlush::kFailed;
  TraceStats ts;
  ASSERT_TRUE(ts.ParseFromString(
      TraceExporter::EncodeTraceStats({tb_.get()}, service, 9)));
  EXPECT_EQ(ts.producers_connected(), 2u);
  EXPECT_EQ(ts.producers_seen(), 5u);
  EXPECT_EQ(ts.data_sources_registered(), 3u);
  EXPECT_EQ(ts.data_sources_seen(), 7u);
  EXPECT_EQ(ts.tracing_sessions(), 2u);
  EXPECT_EQ(ts.total_buffers(), 4u);
  EXPECT_EQ(ts.invalid_packets(), 9u);
  EXPECT_TRUE(ts.has_patches_discarded());
  EXPECT_EQ(ts.patches_discarded(), 0u);
  EXPECT_EQ(ts.flushes_requested(), 6u);
  EXPECT_EQ(ts.flushes_succeeded(), 4u);
  EXPECT_EQ(ts.flushes_failed(), 2u);
  EXPECT_EQ(ts.final_flush_outcome(), TraceStats::FINAL_FLUSH_FAILED);

  service.final_flush = TraceExporter::FinalFlush::kSucceeded;
  ASSERT_TRUE(ts.ParseFromString(
      TraceExporter::EncodeTraceStats({tb_.get()}, service, 0)));
  EXPECT_EQ(ts.final_flush_outcome(), TraceStats::FINAL_FLUSH_SUCCEEDED);

  service.final_flush = TraceExporter::FinalFlush::kUnspecified;
  ASSERT_TRUE(ts.ParseFromString(
      TraceExporter::EncodeTraceStats({tb_.get()}, service, 0)));
  EXPECT_FALSE(ts.has_final_flush_outcome());
}

TEST_F(TraceExporterTest, PacketsSpanningChunksAreReassembled) {
  // One packet with groups and one without, each split across two chunks.
  const std::string grouped = TestPacket(std::string(300, 'g'), 7);
  const std::string flat = GroupPacket()
                               .VarInt(8, 5)
                               .String(13000, std::string(200, 'f'))
                               .bytes();  // unknown field: kept
  AddChunk(6, 3, 0, {grouped.substr(0, 100)},
           trace_buffer::kChunkContinuesOnNext);
  AddChunk(6, 3, 1, {grouped.substr(100), flat.substr(0, 50)},
           trace_buffer::kChunkContinuesFromPrev |
               trace_buffer::kChunkContinuesOnNext);
  AddChunk(6, 3, 2, {flat.substr(50)}, trace_buffer::kChunkContinuesFromPrev);
  exporter_->ExportBuffer(tb_.get());
  const std::vector<TracePacket> packets = ProducerPackets(ReadTrace());
  ASSERT_EQ(packets.size(), 2u);
  EXPECT_EQ(packets[0].for_testing().str(), std::string(300, 'g'));
  EXPECT_EQ(packets[0].for_testing().seq_value(), 7u);
  EXPECT_EQ(packets[1].timestamp(), 5u);
  EXPECT_EQ(packets[1].trusted_packet_sequence_id(), 2u);
  EXPECT_EQ(exporter_->stats().invalid_packets, 0u);
  EXPECT_EQ(exporter_->stats().packet_bytes_exported,
            grouped.size() - 4 /* start and end group tags, 2 bytes each */ +
                4 /* field 900 tag: 2 bytes, length > 127: 2 bytes */ +
                flat.size());
}

TEST_F(TraceExporterTest, SequenceIdsAreStableAcrossExports) {
  AddChunk(1, 1, 0, {TestPacket("x0", 0)});
  AddChunk(1, 2, 0, {TestPacket("y0", 0)});
  exporter_->ExportBuffer(tb_.get());
  const uint32_t x = exporter_->SequenceIdFor(1, 1);
  const uint32_t y = exporter_->SequenceIdFor(1, 2);
  AddChunk(1, 2, 1, {TestPacket("y1", 1)});
  AddChunk(1, 3, 0, {TestPacket("z0", 0)});
  AddChunk(1, 1, 1, {TestPacket("x1", 1)});
  exporter_->ExportBuffer(tb_.get());
  EXPECT_EQ(exporter_->SequenceIdFor(1, 1), x);
  EXPECT_EQ(exporter_->SequenceIdFor(1, 2), y);
  EXPECT_EQ(exporter_->SequenceIdFor(1, 3), 4u);
  EXPECT_EQ(exporter_->SequenceIdFor(9, 9), 0u);

  const std::vector<TracePacket> packets = ProducerPackets(ReadTrace());
  ASSERT_EQ(packets.size(), 5u);
  int firsts = 0;
  for (const TracePacket& p : packets) {
    const bool first = p.first_packet_on_sequence();
    firsts += first;
    EXPECT_EQ(first, p.for_testing().seq_value() == 0) << p.for_testing().str();
    const char w = p.for_testing().str()[0];
    EXPECT_EQ(p.trusted_packet_sequence_id(), w == 'x' ? x : w == 'y' ? y : 4u);
  }
  EXPECT_EQ(firsts, 3);
}

// A write in slices (write_into_file's on the drain thread) with chunks
// written between the slices: every packet once, each sequence in order,
// no loss reported.
TEST_F(TraceExporterTest, SlicesWithWritesBetweenThemExportEachPacketOnce) {
  uint32_t next_chunk[3] = {0, 0, 0};
  uint32_t next_seq[3] = {0, 0, 0};
  auto add = [&](uint16_t writer) {
    std::vector<std::string> packets;
    for (int i = 0; i < 4; i++) {
      packets.push_back(TestPacket(
          std::string(1, static_cast<char>('a' + writer)), next_seq[writer]++));
    }
    AddChunk(1, writer, next_chunk[writer]++, packets);
  };
  for (int c = 0; c < 6; c++) {
    add(1);
    add(2);
  }
  size_t slices = 0;
  size_t writes_between = 0;
  // A small budget: a slice ends within the first chunk's run crossing it.
  while (!exporter_->ExportBufferSlice(tb_.get(), 30)) {
    slices++;
    if (writes_between < 5) {
      add(static_cast<uint16_t>(1 + writes_between % 2));
      writes_between++;
    }
    ASSERT_LT(slices, 1000u);
  }
  EXPECT_GT(slices, 5u);  // Both outcomes reached: slices, then the end.
  EXPECT_EQ(writes_between, 5u);
  // The end means the end: nothing is left.
  EXPECT_TRUE(exporter_->ExportBufferSlice(tb_.get(), 100));

  const std::vector<TracePacket> packets = ProducerPackets(ReadTrace());
  ASSERT_EQ(packets.size(), size_t{4} * (next_chunk[1] + next_chunk[2]));
  int64_t last[3] = {-1, -1, -1};
  for (const TracePacket& p : packets) {
    const int writer = p.for_testing().str()[0] - 'a';
    ASSERT_TRUE(writer == 1 || writer == 2);
    EXPECT_EQ(static_cast<int64_t>(p.for_testing().seq_value()),
              last[writer] + 1);
    last[writer] = p.for_testing().seq_value();
    EXPECT_FALSE(p.has_previous_packet_dropped());
  }
  EXPECT_EQ(last[1] + 1, static_cast<int64_t>(next_seq[1]));
  EXPECT_EQ(last[2] + 1, static_cast<int64_t>(next_seq[2]));
}

// first_packet_on_sequence is written only where it is true: on a writer's
// first packet with nothing lost before it. A sequence whose first packets
// were overwritten gets previous_packet_dropped on its first exported packet
// and no first_packet_on_sequence; so does one first seen at ChunkID 3.
TEST_F(TraceExporterTest, FirstPacketOnSequenceOnlyWhenNothingWasLost) {
  tb_ = TraceBufferV2::Create(4096, TraceBufferV2::OverwritePolicy::kOverwrite);
  ASSERT_TRUE(tb_);
  // Sequence 2's chunk 0 is at [0, 1016); sequence 1's chunks after it;
  // the chunk of 900 bytes wraps and erases sequence 2's chunk 0 only.
  AddChunk(2, 1, 0, {TestPacket(std::string(980, 'b'), 0)});
  AddChunk(1, 1, 0, {TestPacket(std::string(980, 'a'), 0)});
  AddChunk(1, 1, 1, {TestPacket(std::string(980, 'a'), 1)});
  AddChunk(1, 1, 2, {TestPacket(std::string(980, 'a'), 2)});
  AddChunk(1, 1, 3, {TestPacket(std::string(860, 'a'), 3)});
  ASSERT_EQ(tb_->stats().chunks_overwritten, 1u);
  ASSERT_EQ(tb_->stats().packets_overwritten, 1u);
  AddChunk(2, 1, 1, {TestPacket("b", 1), TestPacket("b", 2)});
  AddChunk(3, 1, 3, {TestPacket("c", 3)});
  exporter_->ExportBuffer(tb_.get());
  const std::vector<TracePacket> packets = ProducerPackets(ReadTrace());
  ASSERT_EQ(packets.size(), 7u);
  constexpr uint32_t kOverwrite =
      trace_buffer::kDataLossPresent | trace_buffer::kDataLossOverwrite;
  for (const TracePacket& p : packets) {
    const char w = p.for_testing().str()[0];
    const uint32_t seq = p.for_testing().seq_value();
    SCOPED_TRACE(std::string(1, w) + std::to_string(seq));
    if (w == 'a') {
      // The writer's first packet, nothing lost: the only one marked.
      EXPECT_EQ(p.has_first_packet_on_sequence(), seq == 0);
      EXPECT_EQ(p.first_packet_on_sequence(), seq == 0);
      EXPECT_FALSE(p.has_previous_packet_dropped());
    } else if (w == 'b') {
      EXPECT_FALSE(p.has_first_packet_on_sequence());
      EXPECT_EQ(p.previous_packet_dropped(), seq == 1 ? kOverwrite : 0u);
      EXPECT_EQ(p.has_previous_packet_dropped(), seq == 1);
    } else {
      EXPECT_FALSE(p.has_first_packet_on_sequence());
      EXPECT_FALSE(p.has_previous_packet_dropped());
    }
  }
  EXPECT_EQ(exporter_->stats().packets_with_loss, 1u);
}

TEST_F(TraceExporterTest, SystemInfoIsUnameOnTheServiceSequence) {
  const TraceExporter::SystemInfo info = TraceExporter::ReadSystemInfo();
  exporter_->WriteSystemInfo(info);
  const Trace trace = ReadTrace();

  ASSERT_EQ(trace.packet_size(), 1);
  const TracePacket& p = trace.packet(0);
  EXPECT_EQ(p.trusted_packet_sequence_id(), kServiceSequenceId);
  EXPECT_EQ(p.trusted_uid(), 4242);
  EXPECT_EQ(p.trusted_pid(), 77);
  ASSERT_TRUE(p.has_system_info());
  struct utsname uts = {};
  ASSERT_EQ(uname(&uts), 0);
  const perfetto::protos::Utsname& u = p.system_info().utsname();
  EXPECT_EQ(u.sysname(), uts.sysname);
  EXPECT_EQ(u.version(), uts.version);
  EXPECT_EQ(u.release(), uts.release);
  EXPECT_EQ(u.machine(), uts.machine);
  EXPECT_EQ(p.system_info().page_size(),
            static_cast<uint32_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(p.system_info().num_cpus(),
            static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_CONF)));
  ASSERT_TRUE(info.has_timezone);
  EXPECT_EQ(p.system_info().timezone_off_mins(), info.timezone_off_mins);
  EXPECT_EQ(exporter_->stats().service_packets, 1u);
}

TEST_F(TraceExporterTest, TraceUuidIsRandomVersion4AndRoundTrips) {
  const TraceExporter::TraceUuid a = TraceExporter::NewTraceUuid();
  const TraceExporter::TraceUuid b = TraceExporter::NewTraceUuid();
  EXPECT_TRUE(a.msb != b.msb || a.lsb != b.lsb);
  for (const TraceExporter::TraceUuid& u : {a, b}) {
    // Version 4, variant 10.
    EXPECT_EQ((static_cast<uint64_t>(u.msb) >> 12) & 0xf, 4u);
    EXPECT_EQ(static_cast<uint64_t>(u.lsb) >> 62, 2u);
  }
  exporter_->WriteTraceUuid(a);
  TraceExporter::TraceUuid negative;
  negative.msb = -2;
  negative.lsb = INT64_MIN;
  exporter_->WriteTraceUuid(negative);
  const Trace trace = ReadTrace();

  ASSERT_EQ(trace.packet_size(), 2);
  for (const TracePacket& p : trace.packet()) {
    EXPECT_EQ(p.trusted_packet_sequence_id(), kServiceSequenceId);
    ASSERT_TRUE(p.has_trace_uuid());
  }
  EXPECT_EQ(trace.packet(0).trace_uuid().msb(), a.msb);
  EXPECT_EQ(trace.packet(0).trace_uuid().lsb(), a.lsb);
  EXPECT_EQ(trace.packet(1).trace_uuid().msb(), -2);
  EXPECT_EQ(trace.packet(1).trace_uuid().lsb(), INT64_MIN);
}

TEST_F(TraceExporterTest, ServiceEventsCarryTheirMemberAndTimestamp) {
  using Event = TraceExporter::ServiceEvent;
  using perfetto::protos::TracingServiceEvent;
  const struct {
    Event event;
    TracingServiceEvent::EventTypeCase expected;
  } kEvents[] = {
      {Event::kTracingStarted, TracingServiceEvent::kTracingStarted},
      {Event::kAllDataSourcesStarted,
       TracingServiceEvent::kAllDataSourcesStarted},
      {Event::kAllDataSourcesFlushed,
       TracingServiceEvent::kAllDataSourcesFlushed},
      {Event::kTracingDisabled, TracingServiceEvent::kTracingDisabled},
      {Event::kReadTracingBuffersCompleted,
       TracingServiceEvent::kReadTracingBuffersCompleted},
  };
  uint64_t ts = 5000;
  for (const auto& e : kEvents)
    exporter_->WriteServiceEvent(e.event, ts++);
  const Trace trace = ReadTrace();

  ASSERT_EQ(trace.packet_size(), 5);
  ts = 5000;
  for (int i = 0; i < trace.packet_size(); ++i) {
    const TracePacket& p = trace.packet(i);
    SCOPED_TRACE(i);
    EXPECT_EQ(p.trusted_packet_sequence_id(), kServiceSequenceId);
    EXPECT_EQ(p.timestamp(), ts++);
    ASSERT_TRUE(p.has_service_event());
    EXPECT_EQ(p.service_event().event_type_case(), kEvents[i].expected);
  }
  EXPECT_TRUE(trace.packet(0).service_event().tracing_started());
  EXPECT_EQ(exporter_->stats().service_packets, 5u);
}

}  // namespace
}  // namespace trace_export
}  // namespace ringtrace
