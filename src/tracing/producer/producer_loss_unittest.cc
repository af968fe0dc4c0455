/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Loss reports: the writers' loss counters reach the service, piggybacked on
// DrainRequests and in the final report of an orderly disconnect. The
// FakeService never drains the ring, so a small ring fills and the writers
// drop (kDrop); every count is checked exactly against the writer's stats.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/producer.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"
#include "src/tracing/producer/test/fake_service.h"
#include "src/tracing/producer/writer_loss_registry.h"

namespace ringtrace {
namespace producer {
namespace {

namespace rtzero = perfetto::protos::rtzero;

using shm_ring::TraceWriterV2;
using shm_ring::TraceWriterV2Stats;
using shm_ring::WriterID;

ProducerOptions SmallRing(const std::string& socket_path) {
  ProducerOptions options;
  options.socket_path = socket_path;
  options.name = "loss_test";
  // The test services do not close their end at the producer's EOF as
  // ringtraced does, so a teardown would wait all of DisconnectInOrder's
  // default second for them.
  options.disconnect_timeout_ms = 100;
  options.drain_request_retry_ms = 0;  // every notification sends
  return options;
}

void WritePackets(TraceWriterV2* w, uint32_t n, size_t size = 100) {
  for (uint32_t i = 0; i < n; ++i) {
    auto packet = w->NewTracePacket();
    rtzero::TracePacket typed(packet);
    typed.set_timestamp(i);
    typed.set_for_testing().set_str(std::string(size, 'p'));
  }
  w->Flush();
}

// Losses go out with the DrainRequests that follow them, while the producer
// runs, and the final report carries the exact final counters.
TEST(ProducerLossReportTest, DropsAreReportedWhileRunningAndAtDisconnect) {
  FakeConnection conn;
  FakeService::Config config;
  config.geometry = shm_ring::RingGeometry(1024, 8);
  const base::Status status = conn.Connect(config, SmallRing(""));
  ASSERT_TRUE(status.ok()) << status.message();
  FakeService* service = conn.service.get();
  std::unique_ptr<Producer>& producer = conn.producer;
  std::unique_ptr<TraceWriterV2> lossy = producer->NewTraceWriter();
  std::unique_ptr<TraceWriterV2> idle = producer->NewTraceWriter();
  const WriterID lossy_id = lossy->writer_id();
  const WriterID idle_id = idle->writer_id();

  WritePackets(lossy.get(), 300);  // ~33 KB into an 8 KiB ring
  const TraceWriterV2Stats first = lossy->stats();
  ASSERT_GT(first.packets_dropped, 0u);
  // Every drop asks for a drain, and with retry_ms 0 every such request is
  // sent (or dropped, counted, if the socket buffer is full): the ones after
  // the first recorded loss carry it.
  ASSERT_TRUE(
      service->WaitForDrainRequests(producer->stats().drain_requests_sent));
  {
    const std::map<uint32_t, ipc::WriterLossEntry> seen = service->losses();
    ASSERT_EQ(seen.count(lossy_id), 1u);
    const ipc::WriterLossEntry& e = seen.at(lossy_id);
    EXPECT_GT(e.packets_dropped_before_end + e.packets_dropped_after_end, 0u);
    EXPECT_LE(e.packets_dropped_before_end + e.packets_dropped_after_end,
              first.packets_dropped);
    EXPECT_LE(e.bytes_dropped, first.bytes_dropped);
    EXPECT_EQ(seen.count(idle_id), 0u);  // lost nothing, never reported
    EXPECT_EQ(service->final_reports(), 0u);
  }

  const shm_ring::RingWriterStats lossy_ring =
      shm_ring::TraceWriterV2Owner::ring_writer(*lossy).stats();
  const TraceWriterV2Stats lossy_final = lossy->stats();
  lossy.reset();  // nothing held: the destructor changes no counter
  idle.reset();
  producer.reset();
  ASSERT_TRUE(service->WaitForProducerGone());
  EXPECT_EQ(service->final_reports(), 1u);
  const std::map<uint32_t, ipc::WriterLossEntry> seen = service->losses();
  ASSERT_EQ(seen.count(lossy_id), 1u);
  const ipc::WriterLossEntry& e = seen.at(lossy_id);
  EXPECT_EQ(e.packets_dropped_before_end, lossy_ring.open_packets_dropped);
  EXPECT_EQ(e.packets_dropped_after_end, lossy_ring.ended_packets_dropped);
  EXPECT_EQ(e.packets_dropped_before_end + e.packets_dropped_after_end,
            lossy_final.packets_dropped);
  EXPECT_EQ(e.bytes_dropped, lossy_final.bytes_dropped);
  EXPECT_EQ(e.stall_timeouts, 0u);
  EXPECT_EQ(seen.count(idle_id), 0u);
}

// A packet bigger than the whole ring, with nobody draining, can never be
// placed: it is dropped, counted (all of its bytes) and reported, even as
// the writer's last packet.
TEST(ProducerLossReportTest, OversizedLastPacketIsCountedAndReported) {
  FakeConnection conn;
  FakeService::Config config;
  config.geometry = shm_ring::RingGeometry(1024, 8);
  const base::Status status = conn.Connect(config, SmallRing(""));
  ASSERT_TRUE(status.ok()) << status.message();
  FakeService* service = conn.service.get();
  std::unique_ptr<Producer>& producer = conn.producer;
  std::unique_ptr<TraceWriterV2> w = producer->NewTraceWriter();
  const WriterID id = w->writer_id();
  WritePackets(w.get(), 3);  // fit
  EXPECT_EQ(w->stats().packets_dropped, 0u);
  {
    auto packet = w->NewTracePacket();
    // > 8 KiB ring
    rtzero::TracePacket(packet).set_for_testing().set_str(
        std::string(20000, 'x'));
  }
  w->Flush();
  const TraceWriterV2Stats s = w->stats();
  EXPECT_EQ(s.packets_begun, 4u);
  EXPECT_EQ(s.packets_committed, 3u);
  EXPECT_EQ(s.packets_dropped, 1u);
  // Every byte the encoder produced was either written or dropped.
  EXPECT_GT(s.bytes_dropped, 0u);
  w.reset();
  producer.reset();
  ASSERT_TRUE(service->WaitForProducerGone());
  EXPECT_EQ(service->final_reports(), 1u);
  const std::map<uint32_t, ipc::WriterLossEntry> seen = service->losses();
  ASSERT_EQ(seen.count(id), 1u);
  EXPECT_EQ(seen.at(id).packets_dropped_before_end, 1u);
  EXPECT_EQ(seen.at(id).packets_dropped_after_end, 0u);
  EXPECT_EQ(seen.at(id).bytes_dropped, s.bytes_dropped);
}

// More lossy writers than one message holds: the final report spans several
// datagrams, each flagged final, and every writer arrives exactly once.
TEST(ProducerLossReportTest, FinalReportSpansDatagrams) {
  constexpr uint32_t kWriters = 2 * ipc::kMaxLossEntriesPerMessage + 1;
  FakeConnection conn;
  FakeService::Config config;
  config.geometry = shm_ring::RingGeometry(1024, 8);
  ProducerOptions options = SmallRing("");
  options.drain_request_retry_ms = 60000;  // no piggybacked report
  const base::Status status = conn.Connect(config, options);
  ASSERT_TRUE(status.ok()) << status.message();
  FakeService* service = conn.service.get();
  std::unique_ptr<Producer>& producer = conn.producer;
  std::map<uint32_t, uint64_t> dropped;
  for (uint32_t i = 0; i < kWriters; i++) {
    std::unique_ptr<TraceWriterV2> w = producer->NewTraceWriter();
    WritePackets(w.get(), 100);
    dropped[w->writer_id()] = w->stats().packets_dropped;
    ASSERT_GT(w->stats().packets_dropped, 0u);
  }
  const uint64_t piggybacked = service->loss_entries_received();
  producer.reset();
  ASSERT_TRUE(service->WaitForProducerGone());
  EXPECT_EQ(service->final_reports(), 3u);  // 6 + 6 + 1 entries
  EXPECT_EQ(service->loss_entries_received() - piggybacked, kWriters);
  const std::map<uint32_t, ipc::WriterLossEntry> seen = service->losses();
  ASSERT_EQ(seen.size(), kWriters);
  for (const auto& kv : dropped) {
    ASSERT_EQ(seen.count(kv.first), 1u);
    const ipc::WriterLossEntry& e = seen.at(kv.first);
    EXPECT_EQ(e.packets_dropped_before_end + e.packets_dropped_after_end,
              kv.second);
  }
}

// A producer that lost nothing still sends one (empty) final report: the
// service can tell "nothing lost" from "died before reporting".
TEST(ProducerLossReportTest, NoLossSendsAnEmptyFinalReport) {
  FakeConnection conn;
  FakeService::Config config;
  const base::Status status = conn.Connect(config, SmallRing(""));
  ASSERT_TRUE(status.ok()) << status.message();
  FakeService* service = conn.service.get();
  std::unique_ptr<Producer>& producer = conn.producer;
  std::unique_ptr<TraceWriterV2> w = producer->NewTraceWriter();
  WritePackets(w.get(), 10);
  EXPECT_EQ(w->stats().packets_dropped, 0u);
  w.reset();
  producer.reset();
  ASSERT_TRUE(service->WaitForProducerGone());
  EXPECT_EQ(service->final_reports(), 1u);
  EXPECT_EQ(service->loss_entries_received(), 0u);
}

// The registry under concurrent writers and collectors: whatever the
// interleaving, once everyone stopped, one more collection leaves every
// writer's latest counters reported (no change is ever lost), and a sweep
// with nothing changed reports nothing.
TEST(WriterLossRegistryTest, ConcurrentUpdatesAndCollectionsLoseNoChange) {
  constexpr uint32_t kThreads = 4;
  constexpr uint64_t kUpdates = 2000;
  WriterLossRegistry registry;
  std::vector<WriterLossRegistry::Slot*> slots;
  for (uint32_t t = 0; t < kThreads; t++)
    slots.push_back(registry.Add(static_cast<WriterID>(t + 1), 0));
  std::map<uint32_t, uint64_t> latest;  // as the "service" saw them
  std::atomic<bool> stop{false};
  std::mutex latest_mutex;
  auto collect = [&] {
    ipc::DrainRequestMsg msg;
    WriterLossRegistry::Batch batch;
    const size_t n = registry.CollectChanged(&msg, &batch);
    std::lock_guard<std::mutex> lock(latest_mutex);
    for (size_t i = 0; i < n; i++) {
      uint64_t& v = latest[msg.entries[i].writer_id];
      v = std::max(v, msg.entries[i].packets_dropped_before_end);
    }
    registry.MarkReported(batch);
    return n;
  };
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      shm_ring::WriterLossCounters& c = slots[t]->counters;
      for (uint64_t i = 1; i <= kUpdates; i++) {
        // The writer's side of TraceWriterV2::SyncLosses().
        c.packets_dropped_before_end.store(i, std::memory_order_relaxed);
        c.version.fetch_add(1, std::memory_order_release);
        c.changes->fetch_add(1, std::memory_order_release);
      }
    });
  }
  std::thread collector_a([&] {
    while (!stop.load(std::memory_order_relaxed))
      collect();
  });
  std::thread collector_b([&] {
    while (!stop.load(std::memory_order_relaxed))
      collect();
  });
  for (std::thread& t : threads)
    t.join();
  stop.store(true, std::memory_order_relaxed);
  collector_a.join();
  collector_b.join();
  while (collect() > 0) {
  }
  for (uint32_t t = 0; t < kThreads; t++)
    EXPECT_EQ(latest[t + 1], kUpdates) << "writer " << t + 1;
  EXPECT_EQ(collect(), 0u);
  EXPECT_EQ(registry.size(), kThreads);
}

}  // namespace
}  // namespace producer
}  // namespace ringtrace
