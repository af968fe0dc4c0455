/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/producer_ring.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "src/tracing/core/encoding/test/proto_test_encoder.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"
#include "src/tracing/producer/drain_notifier.h"
#include "src/tracing/producer/test/fake_drain_transport.h"

namespace ringtrace {
namespace producer {
namespace {

using encoding::ProtoTestEncoder;
using shm_ring::ReadChunk;
using shm_ring::ResolveResult;
using shm_ring::RingGeometry;
using shm_ring::SharedRingRegion;
using shm_ring::TestPacketReassembler;
using shm_ring::TestRingReader;
using shm_ring::TraceWriterV2;
using shm_ring::WriterID;

namespace rt = perfetto::protos::rtzero;

std::unique_ptr<SharedRingRegion> MakeRegion(uint32_t chunk_size,
                                             uint32_t num_chunks) {
  base::Status status;
  auto region = SharedRingRegion::CreateMemfd(
      RingGeometry(chunk_size, num_chunks), &status);
  EXPECT_TRUE(status.ok()) << status.message();
  return region;
}

WriterID IdOf(const TraceWriterV2& w) {
  return w.writer_id();
}

TEST(ProducerRingTest, WritersGetFreshIdsAndTheRingOptions) {
  ProducerRing::Options options;
  options.target_buffer = 3;
  options.policy = shm_ring::BufferExhaustedPolicy::kStallThenDrop;
  options.stall_timeout_ms = 7;
  ProducerRing ring(MakeRegion(4096, 4), options);
  EXPECT_EQ(ring.writers_created(), 0u);
  std::vector<std::unique_ptr<TraceWriterV2>> writers;
  for (uint32_t i = 0; i < 3; ++i) {
    base::Status status = base::ErrStatus("unset");
    writers.push_back(ring.NewTraceWriter(&status));
    ASSERT_TRUE(writers.back());
    EXPECT_TRUE(status.ok());
    const auto& o =
        shm_ring::TraceWriterV2Owner::ring_writer(*writers.back()).options();
    EXPECT_EQ(o.writer_id, i + 1);
    EXPECT_EQ(o.target_buffer, 3u);
    EXPECT_EQ(o.policy, shm_ring::BufferExhaustedPolicy::kStallThenDrop);
    EXPECT_EQ(o.stall_timeout_ms, 7u);
  }
  // A destroyed writer's ID is not handed out again.
  writers.clear();
  auto w = ring.NewTraceWriter(nullptr);
  ASSERT_TRUE(w);
  EXPECT_EQ(IdOf(*w), 4u);
  EXPECT_EQ(ring.writers_created(), 4u);
}

TEST(ProducerRingTest, IdsRunOutCleanlyAfter65535Writers) {
  ProducerRing ring(MakeRegion(256, 2), ProducerRing::Options());
  for (uint32_t i = 1; i <= 0xffff; ++i) {
    auto w = ring.NewTraceWriter(nullptr);
    ASSERT_TRUE(w) << i;
    ASSERT_EQ(IdOf(*w), i);
  }
  for (int attempt = 0; attempt < 3; ++attempt) {
    base::Status status;
    EXPECT_FALSE(ring.NewTraceWriter(&status));
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("65535"), std::string::npos)
        << status.message();
  }
  EXPECT_FALSE(ring.NewTraceWriter(nullptr));  // a null status is fine
  EXPECT_EQ(ring.writers_created(), 0xffffu);
}

TEST(ProducerRingTest, ConcurrentWriterCreationHandsOutUniqueIds) {
  constexpr uint32_t kThreads = 4;
  constexpr uint32_t kPerThread = 100;
  ProducerRing ring(MakeRegion(256, 2), ProducerRing::Options());
  std::vector<std::vector<WriterID>> ids(kThreads);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&ring, &ids, t] {
      for (uint32_t i = 0; i < kPerThread; ++i) {
        auto w = ring.NewTraceWriter(nullptr);
        if (w)
          ids[t].push_back(IdOf(*w));
      }
    });
  }
  for (std::thread& t : threads)
    t.join();
  std::set<WriterID> all;
  for (const auto& v : ids) {
    EXPECT_EQ(v.size(), kPerThread);
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.size(), kThreads * kPerThread);
  EXPECT_EQ(*all.begin(), 1u);
  EXPECT_EQ(*all.rbegin(), kThreads * kPerThread);
}

std::string PacketBody(uint32_t thread, uint32_t i) {
  return "t" + std::to_string(thread) + "-p" + std::to_string(i) +
         std::string(i % 40, 'x');
}

// App threads write through the ring's writers, with a DrainNotifier as the
// delegate; the "service" (TestRingReader over the same memfd) then reads
// every packet back, in order per writer, and every delegate call is
// accounted for in the notifier.
TEST(ProducerRingTest, PacketsRoundTripAndWritersNotify) {
  constexpr uint32_t kThreads = 3;
  constexpr uint32_t kPackets = 300;
  auto region = MakeRegion(1024, 64);
  ASSERT_TRUE(region);
  FakeDrainTransport transport;
  FakeNotifierClock clock;
  DrainNotifier::Options notifier_options;
  notifier_options.read_pos = region->view().read_pos();
  notifier_options.transport = &transport;
  notifier_options.clock = &clock;
  DrainNotifier notifier(notifier_options);
  ProducerRing::Options options;
  options.target_buffer = 1;
  options.delegate = &notifier;
  ProducerRing ring(std::move(region), options);

  std::vector<WriterID> ids(kThreads);
  std::vector<shm_ring::TraceWriterV2Stats> stats(kThreads);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto w = ring.NewTraceWriter(nullptr);
      ids[t] = IdOf(*w);
      for (uint32_t i = 0; i < kPackets; ++i) {
        auto handle = w->NewTracePacket();
        rt::TracePacket packet(handle);
        packet.set_timestamp(i);
        packet.set_for_testing().set_str(PacketBody(t, i));
      }
      w->Flush();
      stats[t] = w->stats();
    });
  }
  for (std::thread& t : threads)
    t.join();

  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  TestPacketReassembler reassembler;
  for (const ReadChunk& c : chunks) {
    EXPECT_EQ(c.buffer_id, 1u);
    reassembler.Add(c);
  }
  for (uint32_t t = 0; t < kThreads; ++t) {
    EXPECT_EQ(stats[t].packets_committed, kPackets);
    const auto packets = reassembler.packets(ids[t]);
    ASSERT_EQ(packets.size(), kPackets) << "thread " << t;
    for (uint32_t i = 0; i < kPackets; ++i) {
      ProtoTestEncoder expected;
      expected.VarIntField(rt::TracePacket::kTimestampFieldNumber, i)
          .Group(rt::TracePacket::kForTestingFieldNumber,
                 ProtoTestEncoder().BytesField(rt::TestEvent::kStrFieldNumber,
                                               PacketBody(t, i)));
      EXPECT_EQ(packets[i], expected.str()) << t << "/" << i;
    }
  }
  // ~20 KiB in 1 KiB chunks: many publications, each a notification. The
  // clock and read_pos stood still, so exactly one request went out.
  const DrainNotifierStats s = notifier.stats();
  EXPECT_EQ(s.requests_sent, 1u);
  EXPECT_EQ(transport.calls(), 1u);
  EXPECT_GE(s.requests_coalesced, 10u);
}

}  // namespace
}  // namespace producer
}  // namespace ringtrace
