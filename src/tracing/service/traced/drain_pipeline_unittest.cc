/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The service's drain path, single-threaded: RingWriter -> shared ring ->
// RingDrainer -> TraceBufferV2Sink -> TraceBufferV2 -> reassembled packets.
// The production sink joins the drainer to the buffer here, as ServiceCore
// does; the drainer's own tests use a test sink (ring_drainer/test/).

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/test/packet_util.h"
#include "src/tracing/service/ring_drainer/trace_buffer_v2_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace traced {
namespace {

using ring_drainer::DrainMode;
using ring_drainer::RingConfig;
using ring_drainer::RingDrainer;
using ring_drainer::RingId;
using ring_drainer::RingStats;
using ring_drainer::TraceBufferV2Sink;
namespace drainer_test = ring_drainer::test;

using drainer_test::MakeTestPacket;
using drainer_test::ReadAllPackets;
using drainer_test::ReadBackPacket;
using drainer_test::WriteRingPacket;
using shm_ring::RingWriter;
using shm_ring::TestRing;
using trace_buffer::TraceBufferV2;

constexpr BufferID kBufferId = 7;

struct Harness {
  Harness(uint32_t chunk_size, uint32_t num_chunks, size_t tb_size = 1 << 20)
      : ring(chunk_size, num_chunks),
        tb(TraceBufferV2::Create(tb_size,
                                 TraceBufferV2::OverwritePolicy::kDiscard)),
        sink(tb.get()) {
    RingConfig config;
    config.view = ring.view();
    config.producer_id = 42;
    config.identity.uid = 1000;
    config.allowed_buffers = {{kBufferId, &sink}};
    ring_id = drainer.AddRing(config);
  }

  RingWriter::Options WriterOptions(WriterID id) const {
    RingWriter::Options o;
    o.writer_id = id;
    o.target_buffer = kBufferId;
    return o;
  }

  TestRing ring;
  std::unique_ptr<TraceBufferV2> tb;
  TraceBufferV2Sink sink;
  RingDrainer drainer;
  RingId ring_id = 0;
};

TEST(DrainPipelineTest, PacketsRoundTripIncludingMultiChunkOnes) {
  Harness h(512, 32);
  RingWriter writer(h.ring.view(), h.WriterOptions(3));
  std::vector<std::string> written;
  for (uint32_t i = 0; i < 60; ++i) {
    // 0 .. ~2.3 KiB: many span several 512-byte chunks.
    written.push_back(MakeTestPacket(3, i, (i * 397) % 2300));
    ASSERT_TRUE(WriteRingPacket(&writer, written.back()));
    if (i % 3 == 2)
      h.drainer.DrainRing(h.ring_id);
  }
  ASSERT_TRUE(writer.Flush(nullptr));
  while (h.drainer.DrainRing(h.ring_id).positions_resolved > 0) {
  }

  const std::vector<ReadBackPacket> read = ReadAllPackets(h.tb.get());
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].data, written[i]) << i;
    EXPECT_EQ(read[i].producer_id, 42);
    EXPECT_EQ(read[i].writer_id, 3);
    EXPECT_EQ(read[i].loss, 0u) << i;
  }
  EXPECT_EQ(writer.stats().loss_events, 0u);
  const RingStats s = h.drainer.ring_stats(h.ring_id);
  EXPECT_EQ(s.reader.protocol_errors, 0u);
  EXPECT_EQ(s.chunks_unroutable, 0u);
  // What the buffer refused it counts itself: nothing.
  EXPECT_EQ(h.tb->stats().chunks_discarded + h.tb->stats().abi_violations, 0u);
}

// A writer that ends packets and goes idle (no Flush(), writer still alive,
// as in a final drain, a snapshot, or a SIGKILLed producer): the drainer
// gets every packet it ended, since EndPacket() published it.
TEST(DrainPipelineTest, IdleWriterPacketsArriveWithoutFlush) {
  Harness h(1024, 8);
  RingWriter writer(h.ring.view(), h.WriterOptions(5));
  std::vector<std::string> written;
  for (uint32_t i = 0; i < 5; ++i) {
    written.push_back(MakeTestPacket(5, i, 20 + i * 300));  // some span
    ASSERT_TRUE(WriteRingPacket(&writer, written.back()));
  }
  EXPECT_TRUE(writer.holds_chunk());  // the last chunk is cached for reuse
  while (h.drainer.DrainRing(h.ring_id, DrainMode::kFlush).positions_resolved >
         0) {
  }
  const std::vector<ReadBackPacket> read = ReadAllPackets(h.tb.get());
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].data, written[i]) << i;
    EXPECT_EQ(read[i].loss, 0u) << i;
  }
  EXPECT_EQ(h.drainer.ring_stats(h.ring_id).reader.scrapes, 0u);
  EXPECT_EQ(writer.stats().loss_events, 0u);
}

TEST(DrainPipelineTest, ScrapedOpenPacketIsRelocatedAndReassembled) {
  Harness h(512, 8);
  RingWriter writer(h.ring.view(), h.WriterOptions(4));
  std::vector<std::string> written;
  for (uint32_t i = 0; i < 20; ++i) {
    written.push_back(MakeTestPacket(4, i, 100 + i * 50));
    // The drainer runs while every fragment is open: it scrapes the chunk
    // and the writer relocates its open fragment.
    ASSERT_TRUE(WriteRingPacket(&writer, written.back(),
                                [&] { h.drainer.DrainRing(h.ring_id); }));
  }
  ASSERT_TRUE(writer.Flush(nullptr));
  while (h.drainer.DrainRing(h.ring_id).positions_resolved > 0) {
  }
  const RingStats s = h.drainer.ring_stats(h.ring_id);
  EXPECT_GT(s.reader.scrapes, 0u);
  EXPECT_GT(writer.stats().relocations, 0u);

  const std::vector<ReadBackPacket> read = ReadAllPackets(h.tb.get());
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].data, written[i]) << i;
    EXPECT_EQ(read[i].loss, 0u) << i;
  }
}

TEST(DrainPipelineTest, WriterLossIsReportedOnTheNextPacket) {
  Harness h(256, 2);
  RingWriter writer(h.ring.view(), h.WriterOptions(5));  // kDrop.
  // Fill both chunks without draining until the writer has to drop.
  uint32_t seq = 0;
  std::vector<std::string> delivered_expected;
  for (; seq < 100; ++seq) {
    const std::string p = MakeTestPacket(5, seq, 60);
    if (!WriteRingPacket(&writer, p))
      break;
    delivered_expected.push_back(p);
  }
  ASSERT_LT(seq, 100u);  // The ring filled up and a packet was dropped.
  EXPECT_GT(writer.stats().loss_events, 0u);
  const uint32_t lost_seq = seq;
  ASSERT_TRUE(writer.Flush(nullptr));
  while (h.drainer.DrainRing(h.ring_id).positions_resolved > 0) {
  }
  const std::string after = MakeTestPacket(5, lost_seq + 1, 10);
  ASSERT_TRUE(WriteRingPacket(&writer, after));
  ASSERT_TRUE(writer.Flush(nullptr));
  while (h.drainer.DrainRing(h.ring_id).positions_resolved > 0) {
  }

  const std::vector<ReadBackPacket> read = ReadAllPackets(h.tb.get());
  ASSERT_EQ(read.size(), delivered_expected.size() + 1);
  for (size_t i = 0; i < delivered_expected.size(); ++i) {
    EXPECT_EQ(read[i].data, delivered_expected[i]);
    EXPECT_EQ(read[i].loss, 0u);
  }
  // The chunk after the loss carries the data-loss flag: SMB_FULL.
  EXPECT_EQ(read.back().data, after);
  EXPECT_NE(read.back().loss & trace_buffer::kDataLossSmbFull, 0u);
  EXPECT_NE(read.back().loss & trace_buffer::kDataLossPresent, 0u);
}

TEST(DrainPipelineTest, TwoProducersTwoRingsOneBuffer) {
  TestRing ring_a(512, 4), ring_b(512, 4);
  auto tb =
      TraceBufferV2::Create(1 << 20, TraceBufferV2::OverwritePolicy::kDiscard);
  TraceBufferV2Sink sink(tb.get());
  RingDrainer drainer;
  RingConfig ca;
  ca.view = ring_a.view();
  ca.producer_id = 1;
  ca.allowed_buffers = {{kBufferId, &sink}};
  RingConfig cb = ca;
  cb.view = ring_b.view();
  cb.producer_id = 2;
  drainer.AddRing(ca);
  drainer.AddRing(cb);
  RingWriter::Options oa;
  oa.writer_id = 1;  // Same WriterID in both producers: distinct sequences.
  oa.target_buffer = kBufferId;
  RingWriter wa(ring_a.view(), oa), wb(ring_b.view(), oa);
  for (uint32_t i = 0; i < 10; ++i) {
    ASSERT_TRUE(WriteRingPacket(&wa, MakeTestPacket(0xa, i, 300)));
    ASSERT_TRUE(WriteRingPacket(&wb, MakeTestPacket(0xb, i, 200)));
    drainer.DrainAll();
  }
  ASSERT_TRUE(wa.Flush(nullptr));
  ASSERT_TRUE(wb.Flush(nullptr));
  drainer.DrainAll();
  uint32_t next[3] = {0, 0, 0};
  for (const ReadBackPacket& p : ReadAllPackets(tb.get())) {
    drainer_test::ParsedPacket parsed;
    ASSERT_TRUE(drainer_test::ParseTestPacket(p.data, &parsed));
    ASSERT_TRUE(p.producer_id == 1 || p.producer_id == 2);
    EXPECT_EQ(parsed.tag, p.producer_id == 1 ? 0xa : 0xb);
    EXPECT_EQ(parsed.seq, next[p.producer_id]++);
    EXPECT_EQ(p.loss, 0u);
  }
  EXPECT_EQ(next[1], 10u);
  EXPECT_EQ(next[2], 10u);
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
