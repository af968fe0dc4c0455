/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_export/packet_compressor.h"

#include <gtest/gtest.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "ringtrace/proto_wire.h"
#include "src/base/test/temp_dir.h"
#include "src/base/test/trace_processor_stats.h"
#include "src/tracing/service/trace_export/test/inflate.h"
#include "src/tracing/service/trace_export/test/read_fd.h"
#include "src/tracing/service/trace_export/trace_exporter.h"

namespace ringtrace {
namespace trace_export {
namespace {

using perfetto::protos::Trace;
using perfetto::protos::TracePacket;
using trace_buffer::FragmentRef;
using trace_buffer::TraceBufferV2;

using encoding::EncodeVarInt;
using encoding::kMaxVarIntSize;
using encoding::kWireEndGroup;
using encoding::kWireLengthDelimited;
using encoding::kWireStartGroup;
using encoding::kWireVarInt;
using encoding::MakeTag;
using test::Inflate;
using test::ReadWholeFd;

// A framed Trace.packet holding a for_testing payload of |size| bytes of
// text-like content (compressible, not trivially).
std::string FramedPacket(std::mt19937* rng, size_t size, uint64_t ts) {
  static const char* const kWords[] = {"frame", "draw",  "io",    "read",
                                       "write", "mutex", "lock",  "queue",
                                       "task",  "gpu",   "vsync", "input"};
  std::string text;
  while (text.size() < size) {
    text += kWords[(*rng)() % 12];
    text += std::to_string((*rng)() % 1000);
    text += ' ';
  }
  text.resize(size);
  TracePacket p;
  p.set_timestamp(ts);
  p.mutable_for_testing()->set_str(text);
  p.set_trusted_packet_sequence_id(2);
  Trace t;
  *t.add_packet() = p;
  return t.SerializeAsString();
}

// The inflated content of every batch of |file|, checking that each packet
// of the file is a compressed batch and nothing else.
std::vector<std::string> Batches(const std::string& file) {
  Trace trace;
  EXPECT_TRUE(trace.ParseFromString(file));
  std::vector<std::string> out;
  for (const TracePacket& p : trace.packet()) {
    EXPECT_TRUE(p.has_compressed_packets());
    // The batch and nothing else.
    TracePacket only;
    only.set_compressed_packets(p.compressed_packets());
    EXPECT_EQ(p.SerializeAsString(), only.SerializeAsString());
    // A zlib stream: deflate (CM 8), the header check bits.
    const std::string& z = p.compressed_packets();
    EXPECT_GE(z.size(), 2u);
    if (z.size() >= 2) {
      EXPECT_EQ(static_cast<uint8_t>(z[0]) & 0x0f, 8);
      EXPECT_EQ(
          ((static_cast<uint8_t>(z[0]) << 8) | static_cast<uint8_t>(z[1])) % 31,
          0);
    }
    out.push_back(Inflate(z));
  }
  return out;
}

class PacketCompressorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fd_ = memfd_create("packet_compressor_unittest", 0);
    ASSERT_GE(fd_, 0);
    writer_.reset(new TraceFileWriter(fd_));
  }
  void TearDown() override { close(fd_); }

  int fd_ = -1;
  std::unique_ptr<TraceFileWriter> writer_;
};

TEST_F(PacketCompressorTest, BatchesHoldExactlyThePacketsInOrder) {
  PacketCompressor::Options options;
  options.batch_size = 8 * 1024;
  PacketCompressor compressor(writer_.get(), options);
  std::mt19937 rng(7);
  std::string input;
  std::vector<size_t> ends;  // offset after each packet
  for (uint64_t i = 0; i < 2000; i++) {
    const std::string p = FramedPacket(&rng, 10 + rng() % 300, 1000 + i);
    // In pieces, as the exporter appends a packet.
    const size_t cut = p.size() / 3;
    compressor.Append(p.data(), cut);
    compressor.Append(p.data() + cut, p.size() - cut);
    compressor.EndPacket();
    input += p;
    ends.push_back(input.size());
  }
  ASSERT_TRUE(compressor.Flush().ok());
  ASSERT_TRUE(writer_->Flush().ok());
  const std::string file = ReadWholeFd(fd_);

  const std::vector<std::string> batches = Batches(file);
  ASSERT_GT(batches.size(), 10u);
  std::string joined;
  for (size_t b = 0; b < batches.size(); b++) {
    // Every batch but the last reached the batch size, and stopped at the
    // first packet end past it; each one alone is a whole Trace.
    if (b + 1 < batches.size()) {
      EXPECT_GE(batches[b].size(), options.batch_size);
    }
    joined += batches[b];
    const auto end = std::lower_bound(ends.begin(), ends.end(), joined.size());
    ASSERT_TRUE(end != ends.end() && *end == joined.size())
        << "batch " << b << " ends inside a packet";
    if (b + 1 < batches.size()) {
      ASSERT_TRUE(end != ends.begin());
      EXPECT_LT(*(end - 1) - (joined.size() - batches[b].size()),
                options.batch_size)
          << "batch " << b << " went on after reaching the batch size";
    }
    Trace t;
    EXPECT_TRUE(t.ParseFromString(batches[b]));
  }
  EXPECT_EQ(joined, input);

  const PacketCompressorStats& s = compressor.stats();
  EXPECT_EQ(s.packets, 2000u);
  EXPECT_EQ(s.input_bytes, input.size());
  EXPECT_EQ(s.batches, batches.size());
  EXPECT_EQ(s.output_bytes, file.size());
  EXPECT_LT(s.compressed_bytes, s.output_bytes);
  EXPECT_LT(s.output_bytes, input.size() / 2);  // text: well compressible
  EXPECT_EQ(s.packets_dropped, 0u);
}

TEST_F(PacketCompressorTest, APacketLargerThanTheBatchStaysWhole) {
  PacketCompressor::Options options;
  options.batch_size = 4096;
  PacketCompressor compressor(writer_.get(), options);
  std::mt19937 rng(3);
  const std::string small = FramedPacket(&rng, 100, 1);
  const std::string big = FramedPacket(&rng, 300 * 1024, 2);
  const std::string after = FramedPacket(&rng, 100, 3);
  for (const std::string* p : {&small, &big, &after}) {
    compressor.Append(p->data(), p->size());
    compressor.EndPacket();
  }
  ASSERT_TRUE(compressor.Flush().ok());
  ASSERT_TRUE(writer_->Flush().ok());
  const std::vector<std::string> batches = Batches(ReadWholeFd(fd_));
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0], small + big);
  EXPECT_EQ(batches[1], after);
}

TEST_F(PacketCompressorTest, NothingAppendedWritesNothing) {
  PacketCompressor compressor(writer_.get());
  ASSERT_TRUE(compressor.Flush().ok());
  ASSERT_TRUE(writer_->Flush().ok());
  EXPECT_EQ(ReadWholeFd(fd_).size(), 0u);
  EXPECT_EQ(compressor.stats().batches, 0u);
}

// ---- Through the exporter --------------------------------------------------

std::string TestPacket(uint32_t seq, const std::string& s) {
  // TracePacket{timestamp, for_testing{str, seq_value}}, group-encoded as
  // TraceWriterV2 writes it.
  std::string out;
  auto raw = [&out](uint64_t v) {
    uint8_t buf[kMaxVarIntSize];
    uint8_t* end = EncodeVarInt(v, buf);
    out.append(reinterpret_cast<char*>(buf), static_cast<size_t>(end - buf));
  };
  const uint32_t for_testing =
      static_cast<uint32_t>(TracePacket::kForTestingFieldNumber);
  raw(MakeTag(static_cast<uint32_t>(TracePacket::kTimestampFieldNumber),
              kWireVarInt));
  raw(1000 + seq);
  raw(MakeTag(for_testing, kWireStartGroup));
  raw(MakeTag(
      static_cast<uint32_t>(perfetto::protos::TestEvent::kStrFieldNumber),
      kWireLengthDelimited));
  raw(s.size());
  out += s;
  raw(MakeTag(
      static_cast<uint32_t>(perfetto::protos::TestEvent::kSeqValueFieldNumber),
      kWireVarInt));
  raw(seq);
  raw(MakeTag(for_testing, kWireEndGroup));
  return out;
}

// The same chunks into |tb|: |chunks| chunks of 20 packets per writer.
void Fill(TraceBufferV2* tb, uint32_t chunks) {
  std::mt19937 rng(11);
  for (uint32_t c = 0; c < chunks; c++) {
    for (uint16_t w = 1; w <= 3; w++) {
      std::vector<std::string> packets;
      for (uint32_t i = 0; i < 20; i++) {
        std::string s = "slice " + std::to_string(rng() % 500) + " on " +
                        std::to_string(w) + " arg " + std::to_string(rng());
        packets.push_back(TestPacket(c * 20 + i, s));
      }
      std::vector<FragmentRef> frags;
      for (const std::string& p : packets) {
        frags.push_back(FragmentRef{reinterpret_cast<const uint8_t*>(p.data()),
                                    static_cast<uint32_t>(p.size())});
      }
      ASSERT_TRUE(tb->CopyChunkFragments(1, {1000, 321}, w, c, frags.data(),
                                         frags.size(),
                                         trace_buffer::kNoTBChunkFlags));
    }
  }
}

struct Exported {
  std::string file;
  ExportStats stats;
};

Exported Export(TraceExporter::Compression compression,
                size_t batch_size,
                uint32_t chunks) {
  std::unique_ptr<TraceBufferV2> tb = TraceBufferV2::Create(
      8 * 1024 * 1024, TraceBufferV2::OverwritePolicy::kDiscard);
  EXPECT_TRUE(tb);
  Fill(tb.get(), chunks);
  const int fd = memfd_create("packet_compressor_unittest", 0);
  EXPECT_GE(fd, 0);
  TraceFileWriter writer(fd);
  TraceExporter::Options options;
  options.service_uid = 4242;
  options.service_pid = 77;
  options.compression = compression;
  options.compressor.batch_size = batch_size;
  TraceExporter exporter(&writer, options);
  const std::string config = "\x18\x0a";  // any bytes: the service's own
  exporter.WriteTraceConfig(config.data(), config.size());
  exporter.ExportBuffer(tb.get());
  exporter.WriteServiceEvent(
      TraceExporter::ServiceEvent::kReadTracingBuffersCompleted, 12345);
  exporter.WriteTraceStats({tb.get()}, TraceExporter::ServiceStats());
  exporter.WriteClockSnapshot(TraceExporter::ClockReadings{1, 2, 3});
  EXPECT_TRUE(exporter.Finish().ok());
  Exported out{ReadWholeFd(fd), exporter.stats()};
  close(fd);
  return out;
}

TEST(PacketCompressorExportTest, DeflateHoldsTheUncompressedFileExactly) {
  const Exported plain =
      Export(TraceExporter::Compression::kNone, 512 * 1024, 400);
  const Exported deflated =
      Export(TraceExporter::Compression::kDeflate, 64 * 1024, 400);
  ASSERT_GT(plain.file.size(), 4 * 64 * 1024u);

  std::string joined;
  for (const std::string& b : Batches(deflated.file))
    joined += b;
  // The packets inside are byte for byte those of the uncompressed export.
  EXPECT_EQ(joined, plain.file);
  Trace a, b;
  ASSERT_TRUE(a.ParseFromString(plain.file));
  ASSERT_TRUE(b.ParseFromString(joined));
  EXPECT_EQ(a.packet_size(), 400 * 3 * 20 + 4);
  EXPECT_EQ(b.packet_size(), a.packet_size());

  EXPECT_EQ(plain.stats.uncompressed_bytes, 0u);
  EXPECT_EQ(plain.stats.compressed_batches, 0u);
  EXPECT_EQ(deflated.stats.uncompressed_bytes, plain.file.size());
  EXPECT_EQ(deflated.stats.compressed_bytes, deflated.file.size());
  EXPECT_GE(deflated.stats.compressed_batches, 4u);
  EXPECT_LT(deflated.file.size(), plain.file.size() / 2);
  EXPECT_EQ(deflated.stats.packets_exported, plain.stats.packets_exported);
  EXPECT_EQ(deflated.stats.compression_dropped_packets, 0u);
}

TEST(PacketCompressorExportTest, DefaultBatchesAreAbout512KiB) {
  const Exported deflated = Export(TraceExporter::Compression::kDeflate,
                                   PacketCompressor::kDefaultBatchSize, 1500);
  const std::vector<std::string> batches = Batches(deflated.file);
  ASSERT_GE(batches.size(), 3u);
  for (size_t i = 0; i + 1 < batches.size(); i++) {
    EXPECT_GE(batches[i].size(), PacketCompressor::kDefaultBatchSize);
    EXPECT_LT(batches[i].size(), PacketCompressor::kDefaultBatchSize + 1024);
  }
}

TEST(PacketCompressorExportTest, AProducersCompressedPacketsAreDropped) {
  std::unique_ptr<TraceBufferV2> tb = TraceBufferV2::Create(
      64 * 1024, TraceBufferV2::OverwritePolicy::kDiscard);
  ASSERT_TRUE(tb);
  // A producer packet smuggling a compressed batch, then a normal one.
  std::string smuggled;
  uint8_t buf[2 * kMaxVarIntSize];
  uint8_t* e = EncodeVarInt(
      MakeTag(static_cast<uint32_t>(TracePacket::kCompressedPacketsFieldNumber),
              kWireLengthDelimited),
      buf);
  e = EncodeVarInt(3, e);
  smuggled.assign(reinterpret_cast<char*>(buf), static_cast<size_t>(e - buf));
  smuggled += "abc";
  const std::string normal = TestPacket(1, "ok");
  FragmentRef frags[] = {{reinterpret_cast<const uint8_t*>(smuggled.data()),
                          static_cast<uint32_t>(smuggled.size())},
                         {reinterpret_cast<const uint8_t*>(normal.data()),
                          static_cast<uint32_t>(normal.size())}};
  ASSERT_TRUE(tb->CopyChunkFragments(1, {1000, 321}, 1, 0, frags, 2,
                                     trace_buffer::kNoTBChunkFlags));
  const int fd = memfd_create("packet_compressor_unittest", 0);
  ASSERT_GE(fd, 0);
  TraceFileWriter writer(fd);
  TraceExporter exporter(&writer);
  exporter.ExportBuffer(tb.get());
  ASSERT_TRUE(exporter.Finish().ok());
  EXPECT_EQ(exporter.stats().invalid_packets, 1u);
  Trace trace;
  ASSERT_TRUE(trace.ParseFromString(ReadWholeFd(fd)));
  close(fd);
  ASSERT_EQ(trace.packet_size(), 1);
  EXPECT_FALSE(trace.packet(0).has_compressed_packets());
  EXPECT_EQ(trace.packet(0).for_testing().str(), "ok");
}

// ---- trace_processor -------------------------------------------------------

// TrackEvent slices on 4 thread tracks, standard-encoded (the Ungrouper
// passes such packets through): a descriptor per thread, then nested
// begin/end pairs with names inline.
void FillSlices(TraceBufferV2* tb, uint32_t pairs_per_thread) {
  using perfetto::protos::TrackEvent;
  for (uint16_t w = 1; w <= 4; w++) {
    std::vector<std::string> packets;
    TracePacket d;
    d.set_timestamp(1'000'000);
    d.set_sequence_flags(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    d.mutable_track_descriptor()->set_uuid(0x5000 + w);
    d.mutable_track_descriptor()->mutable_thread()->set_pid(777);
    d.mutable_track_descriptor()->mutable_thread()->set_tid(777 + w);
    d.mutable_track_descriptor()->mutable_thread()->set_thread_name(
        "t" + std::to_string(w));
    packets.push_back(d.SerializeAsString());
    uint64_t ts = 2'000'000;
    uint32_t chunk = 0;
    for (uint32_t i = 0; i < pairs_per_thread; i++) {
      for (int end = 0; end < 2; end++) {
        TracePacket p;
        p.set_timestamp(ts += 100 + (i * 7 + w) % 300);
        TrackEvent* e = p.mutable_track_event();
        e->set_type(end ? TrackEvent::TYPE_SLICE_END
                        : TrackEvent::TYPE_SLICE_BEGIN);
        e->set_track_uuid(0x5000 + w);
        if (!end)
          e->set_name("step " + std::to_string(i % 37));
        packets.push_back(p.SerializeAsString());
      }
      if (packets.size() >= 40 || i + 1 == pairs_per_thread) {
        std::vector<FragmentRef> frags;
        for (const std::string& p : packets) {
          frags.push_back(
              FragmentRef{reinterpret_cast<const uint8_t*>(p.data()),
                          static_cast<uint32_t>(p.size())});
        }
        ASSERT_TRUE(tb->CopyChunkFragments(1, {1000, 321}, w, chunk++,
                                           frags.data(), frags.size(),
                                           trace_buffer::kNoTBChunkFlags));
        packets.clear();
      }
    }
  }
}

// The trace of |tb|'s slices, written with |compression| to |path|.
void WriteSliceTrace(TraceExporter::Compression compression,
                     uint32_t pairs_per_thread,
                     const std::string& path) {
  std::unique_ptr<TraceBufferV2> tb = TraceBufferV2::Create(
      16 * 1024 * 1024, TraceBufferV2::OverwritePolicy::kDiscard);
  ASSERT_TRUE(tb);
  FillSlices(tb.get(), pairs_per_thread);
  const int fd = memfd_create("packet_compressor_unittest", 0);
  ASSERT_GE(fd, 0);
  TraceFileWriter writer(fd);
  TraceExporter::Options options;
  options.compression = compression;
  TraceExporter exporter(&writer, options);
  perfetto::protos::TraceConfig config;
  config.add_buffers()->set_size_kb(16 * 1024);
  config.add_data_sources()->mutable_config()->set_name("track_event");
  if (compression == TraceExporter::Compression::kDeflate) {
    config.set_compression_type(
        perfetto::protos::TraceConfig::COMPRESSION_TYPE_DEFLATE);
  }
  const std::string c = config.SerializeAsString();
  exporter.WriteTraceConfig(c.data(), c.size());
  exporter.WriteClockSnapshot();
  exporter.ExportBuffer(tb.get());
  exporter.WriteTraceStats({tb.get()}, TraceExporter::ServiceStats());
  exporter.WriteClockSnapshot();
  ASSERT_TRUE(exporter.Finish().ok());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << ReadWholeFd(fd);
  ASSERT_TRUE(out.good());
  close(fd);
}

int64_t SliceCount(const std::string& tp,
                   const std::string& trace,
                   const std::string& dir) {
  std::string csv, error;
  EXPECT_TRUE(test::RunTraceProcessorQuery(
      tp, trace, dir, "select count(*) as n from slice;", &csv, &error))
      << error;
  const size_t nl = csv.find('\n');
  return nl == std::string::npos ? -1 : atoll(csv.c_str() + nl + 1);
}

// Every stat of severity error or data_loss trace_processor reports.
std::vector<std::string> Problems(const std::string& tp,
                                  const std::string& trace,
                                  const std::string& dir) {
  std::vector<test::TraceProcessorStat> stats;
  std::string error;
  EXPECT_TRUE(test::QueryNonZeroStats(tp, trace, dir, &stats, &error)) << error;
  std::vector<std::string> out;
  for (const test::TraceProcessorStat& s : stats) {
    if (s.severity == "error" || s.severity == "data_loss")
      out.push_back(test::Describe(s));
  }
  return out;
}

TEST(PacketCompressorTraceProcessorTest, ReadsTheSameSlicesCompressed) {
  const std::string tp = test::TraceProcessorShellPath();
  if (tp.empty()) {
    GTEST_SKIP() << "no trace_processor_shell: set TRACE_PROCESSOR_SHELL to "
                    "Perfetto's trace_processor_shell";
  }
  base::TempDir dir("packet_compressor_tp");
  const std::string plain = dir.File("plain.pftrace");
  const std::string deflated = dir.File("deflated.pftrace");
  // 4 x 6000 pairs: about 1.3 MB uncompressed, several 512 KiB batches.
  WriteSliceTrace(TraceExporter::Compression::kNone, 6000, plain);
  WriteSliceTrace(TraceExporter::Compression::kDeflate, 6000, deflated);
  EXPECT_EQ(SliceCount(tp, plain, dir.path()), 4 * 6000);
  EXPECT_EQ(SliceCount(tp, deflated, dir.path()), 4 * 6000);
  EXPECT_EQ(Problems(tp, plain, dir.path()), std::vector<std::string>());
  EXPECT_EQ(Problems(tp, deflated, dir.path()), std::vector<std::string>());
}

}  // namespace
}  // namespace trace_export
}  // namespace ringtrace
