/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/drain_loop.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/test/packet_util.h"
#include "src/tracing/service/ring_drainer/trace_buffer_v2_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::RingWriter;
using trace_buffer::TraceBufferV2;

constexpr BufferID kBufferId = 3;
constexpr uint64_t kOneHourNs = 3600ull * 1000 * 1000 * 1000;

// Forwards the writer's notifications to the loop, as the service's IPC
// handler would.
class NotifyingDelegate : public shm_ring::RingWriterDelegate {
 public:
  NotifyingDelegate(DrainLoop* loop, RingId id) : loop_(loop), id_(id) {}
  void OnPositionBurned(uint32_t) override { loop_->Notify(id_); }
  void OnChunkPublished(uint32_t) override { loop_->Notify(id_); }
  void OnDrainRequested() override { loop_->Notify(id_); }

 private:
  DrainLoop* loop_;
  RingId id_;
};

// Polls |cond| on the loop thread until it holds; bounded (the bound is a
// safety net, not a timing assertion).
bool Eventually(DrainLoop* loop,
                const std::function<bool(RingDrainer*)>& cond) {
  for (int i = 0; i < 20000; ++i) {
    bool ok = false;
    loop->RunSync([&](RingDrainer* d) { ok = cond(d); });
    if (ok)
      return true;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return false;
}

RingConfig Config(const shm_ring::TestRing& ring, TraceBufferV2Sink* sink) {
  RingConfig c;
  c.view = ring.view();
  c.producer_id = 5;
  c.allowed_buffers = {{kBufferId, sink}};
  return c;
}

TEST(DrainLoopTest, NotificationsDriveTheDrain) {
  shm_ring::TestRing ring(256, 4);
  auto tb =
      TraceBufferV2::Create(1 << 20, TraceBufferV2::OverwritePolicy::kDiscard);
  TraceBufferV2Sink sink(tb.get());
  DrainLoop::Options opts;
  opts.tick_ns = kOneHourNs;  // No tick during the test.
  DrainLoop loop(opts);
  RingId id = 0;
  loop.RunSync([&](RingDrainer* d) { id = d->AddRing(Config(ring, &sink)); });
  loop.Start();

  // A stalling writer on a 4-chunk ring can only finish if notifications
  // make the loop drain.
  NotifyingDelegate delegate(&loop, id);
  std::vector<std::string> written;
  std::thread writer_thread([&] {
    RingWriter::Options o;
    o.writer_id = 1;
    o.target_buffer = kBufferId;
    o.policy = shm_ring::BufferExhaustedPolicy::kStall;
    o.stall_timeout_ms = 10000;
    o.delegate = &delegate;
    RingWriter w(ring.view(), o);
    for (uint32_t i = 0; i < 100; ++i) {
      written.push_back(test::MakeTestPacket(1, i, 150));
      ASSERT_TRUE(test::WriteRingPacket(&w, written.back()));
    }
    ASSERT_TRUE(w.Flush(nullptr));
  });
  writer_thread.join();
  loop.Flush();

  std::vector<test::ReadBackPacket> read;
  loop.RunSync([&](RingDrainer*) { read = test::ReadAllPackets(tb.get()); });
  loop.Stop();
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i)
    EXPECT_EQ(read[i].data, written[i]);
  const DrainLoop::LoopStats s = loop.loop_stats();
  EXPECT_EQ(s.ticks, 0u);
  EXPECT_GT(s.notified_passes, 0u);
  EXPECT_EQ(s.flushes, 1u);
}

TEST(DrainLoopTest, TickDrainsWithoutNotifications) {
  shm_ring::TestRing ring(256, 8);
  auto tb =
      TraceBufferV2::Create(1 << 20, TraceBufferV2::OverwritePolicy::kDiscard);
  TraceBufferV2Sink sink(tb.get());
  test::FakeWriter w(ring.view(), 2, kBufferId);
  for (int i = 0; i < 5; ++i) {
    w.ReserveAndClaim();
    w.Append("tick" + std::to_string(i));
    ASSERT_TRUE(w.Publish(true));
  }
  DrainLoop::Options opts;
  opts.tick_ns = 1'000'000;  // 1 ms.
  DrainLoop loop(opts);
  RingId id = 0;
  loop.Start();
  loop.RunSync([&](RingDrainer* d) { id = d->AddRing(Config(ring, &sink)); });
  EXPECT_TRUE(Eventually(&loop, [&](RingDrainer* d) {
    return d->ring_stats(id).reader.chunks_emitted == 5;
  }));
  loop.Stop();
  const DrainLoop::LoopStats s = loop.loop_stats();
  EXPECT_GT(s.ticks, 0u);
  EXPECT_EQ(s.notified_passes, 0u);
}

TEST(DrainLoopTest, DeferredHeadIsRevisitedAfterTheGrace) {
  shm_ring::TestRing ring(256, 8);
  auto tb =
      TraceBufferV2::Create(1 << 20, TraceBufferV2::OverwritePolicy::kDiscard);
  TraceBufferV2Sink sink(tb.get());
  DrainLoop::Options opts;
  opts.tick_ns = kOneHourNs;
  opts.drainer.head_grace_ns = 1'000'000;  // 1 ms.
  DrainLoop loop(opts);
  RingId id = 0;
  loop.RunSync([&](RingDrainer* d) { id = d->AddRing(Config(ring, &sink)); });
  loop.Start();
  test::FakeWriter w(ring.view(), 4, kBufferId);
  w.ReserveAndClaim();  // An open chunk the writer never publishes.
  loop.Notify(id);
  // No tick and no further notification: the loop comes back to the
  // deferred ring on its own and scrapes once the grace has run out.
  EXPECT_TRUE(Eventually(&loop, [&](RingDrainer* d) {
    return d->ring_stats(id).reader.scrapes == 1;
  }));
  loop.Stop();
  EXPECT_EQ(loop.loop_stats().ticks, 0u);
}

TEST(DrainLoopTest, RemovedRingNotificationsAreIgnored) {
  shm_ring::TestRing ring(256, 4);
  auto tb =
      TraceBufferV2::Create(1 << 20, TraceBufferV2::OverwritePolicy::kDiscard);
  TraceBufferV2Sink sink(tb.get());
  DrainLoop::Options opts;
  opts.tick_ns = kOneHourNs;
  DrainLoop loop(opts);
  loop.Start();
  RingId id = 0;
  loop.RunSync([&](RingDrainer* d) { id = d->AddRing(Config(ring, &sink)); });
  loop.RunSync([&](RingDrainer* d) { d->RemoveRing(id); });
  loop.Notify(id);
  loop.Notify(12345);
  loop.Flush();
  size_t rings = 1;
  loop.RunSync([&](RingDrainer* d) { rings = d->num_rings(); });
  EXPECT_EQ(rings, 0u);
  loop.Stop();
}

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
