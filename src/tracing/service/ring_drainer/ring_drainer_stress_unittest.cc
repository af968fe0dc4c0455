/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// MPSC stress: several writer threads with real RingWriters and one drainer
// thread feeding a TraceBufferV2. Payloads verify themselves (writer tag,
// sequence number, length, checksum). Checks, per writer: every delivered
// packet is intact, delivered at most once and in order; every packet missing
// before a delivered one is covered by a loss report on that packet; packets
// missing at the end only if the writer recorded a loss; so delivered +
// dropped-with-loss-reported == written. Fixed iteration counts.

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/base/logging.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/test/packet_util.h"
#include "src/tracing/service/ring_drainer/trace_buffer_v2_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::BufferExhaustedPolicy;
using shm_ring::RingWriter;
using trace_buffer::TraceBufferV2;

constexpr BufferID kBufferId = 1;

struct StressParams {
  const char* name;
  uint32_t chunk_size;
  uint32_t num_chunks;
  uint32_t num_writers;
  uint32_t packets_per_writer;
  uint32_t max_body;
  uint32_t start_position;
  // Every n-th packet yields inside each of its open fragments (0: never).
  uint32_t yield_every;
  BufferExhaustedPolicy policy;
  uint64_t head_grace_ns = 0;  // RingDrainerOptions::head_grace_ns.
};

struct WriterResult {
  shm_ring::RingWriterStats stats;
  uint32_t written = 0;
};

void RunStress(const StressParams& p) {
  SCOPED_TRACE(p.name);
  test::FakeRing ring(p.chunk_size, p.num_chunks);
  ring.SeedPositions(p.start_position);
  auto tb =
      TraceBufferV2::Create(16 << 20, TraceBufferV2::OverwritePolicy::kDiscard);
  ASSERT_TRUE(tb);
  TraceBufferV2Sink sink(tb.get());
  RingDrainerOptions options;
  options.head_grace_ns = p.head_grace_ns;
  RingDrainer drainer(options);
  RingConfig config;
  config.view = ring.view();
  config.initial_read_pos = p.start_position;
  config.producer_id = 9;
  config.allowed_buffers = {{kBufferId, &sink}};
  const RingId id = drainer.AddRing(config);

  std::atomic<uint32_t> writers_done{0};
  std::vector<WriterResult> results(p.num_writers);
  std::vector<std::thread> writers;
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    writers.emplace_back([&, w] {
      RingWriter::Options o;
      o.writer_id = static_cast<WriterID>(w + 1);
      o.target_buffer = kBufferId;
      o.policy = p.policy;
      o.stall_timeout_ms = 2000;
      RingWriter writer(ring.view(), o);
      uint32_t rng = 0x2545'f491u * (w + 1);
      for (uint32_t seq = 0; seq < p.packets_per_writer; ++seq) {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        const std::string packet =
            test::MakeTestPacket(o.writer_id, seq, rng % (p.max_body + 1));
        const bool yield = p.yield_every && seq % p.yield_every == 0;
        test::WriteRingPacket(&writer, packet, [yield] {
          if (yield)
            std::this_thread::yield();
        });
        if (seq % 8 == 7)
          writer.Flush(nullptr);
      }
      writer.Flush(nullptr);
      results[w].stats = writer.stats();
      results[w].written = p.packets_per_writer;
      // release; pairs with the drainer's acquire load below: the writer's
      // last publication happens before the final drain.
      writers_done.fetch_add(1, std::memory_order_release);
    });
  }

  std::thread drain_thread([&] {
    // Drains while writers run, then until the ring is empty. Bounded: once
    // every writer is done, each pass makes progress or ends the loop.
    for (;;) {
      // acquire; pairs with the writers' release increment.
      const bool done =
          writers_done.load(std::memory_order_acquire) == p.num_writers;
      const PassResult r =
          drainer.DrainRing(id, done ? DrainMode::kFlush : DrainMode::kNormal);
      if (r.rings_stopped)
        break;
      if (r.positions_resolved == 0 && !r.more) {
        if (done)
          break;
        std::this_thread::yield();
      }
    }
  });
  for (std::thread& t : writers)
    t.join();
  drain_thread.join();

  const RingStats s = drainer.ring_stats(id);
  EXPECT_EQ(s.reader.protocol_errors, 0u);
  EXPECT_EQ(s.reader.malformed_directories, 0u);
  EXPECT_EQ(s.reader.unknown_formats, 0u);
  EXPECT_EQ(s.chunks_unroutable, 0u);
  EXPECT_EQ(s.chunks_rejected_by_sink, 0u);
  EXPECT_EQ(tb->stats().abi_violations, 0u);
  EXPECT_EQ(tb->stats().chunks_discarded, 0u);

  // Per writer: next expected sequence number and counters.
  std::vector<uint32_t> next(p.num_writers, 0);
  std::vector<uint32_t> delivered(p.num_writers, 0);
  std::vector<uint32_t> reported_missing(p.num_writers, 0);
  uint32_t bad = 0;
  for (const test::ReadBackPacket& rp : test::ReadAllPackets(tb.get())) {
    test::ParsedPacket parsed;
    if (!test::ParseTestPacket(rp.data, &parsed)) {
      ++bad;
      continue;
    }
    ASSERT_EQ(rp.producer_id, 9);
    ASSERT_EQ(parsed.tag, rp.writer_id);
    ASSERT_GE(parsed.tag, 1u);
    ASSERT_LE(parsed.tag, p.num_writers);
    const uint32_t w = parsed.tag - 1u;
    // Exactly once and in order.
    ASSERT_GE(parsed.seq, next[w]) << "writer " << w << " duplicate/reorder";
    if (parsed.seq > next[w]) {
      // Missing packets must be reported on the next delivered one.
      EXPECT_NE(rp.loss, 0u)
          << "writer " << w << " seq " << parsed.seq << ": unreported loss of "
          << parsed.seq - next[w] << " packets";
      reported_missing[w] += parsed.seq - next[w];
    }
    next[w] = parsed.seq + 1;
    ++delivered[w];
  }
  EXPECT_EQ(bad, 0u) << "corrupted packets";

  uint64_t total_delivered = 0, total_missing = 0, relocations = 0;
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    const uint32_t trailing = results[w].written - next[w];
    if (reported_missing[w] + trailing > 0) {
      EXPECT_GT(results[w].stats.loss_events, 0u)
          << "writer " << w << " lost packets it did not record";
    }
    EXPECT_EQ(delivered[w] + reported_missing[w] + trailing,
              results[w].written);
    total_delivered += delivered[w];
    total_missing += reported_missing[w] + trailing;
    relocations += results[w].stats.relocations;
  }
  RT_LOG(
      "%s: delivered %llu, lost %llu, scrapes %llu, holes %llu, "
      "relocations %llu, retries %llu, deferrals %llu",
      p.name, static_cast<unsigned long long>(total_delivered),
      static_cast<unsigned long long>(total_missing),
      static_cast<unsigned long long>(s.reader.scrapes),
      static_cast<unsigned long long>(s.reader.holes),
      static_cast<unsigned long long>(relocations),
      static_cast<unsigned long long>(s.reader.retries),
      static_cast<unsigned long long>(s.reader.deferrals));
  // A dropping writer may legitimately lose everything on a busy machine;
  // a stalling one always gets through.
  if (p.policy != BufferExhaustedPolicy::kDrop) {
    EXPECT_GT(total_delivered, 0u);
  }
}

TEST(RingDrainerStressTest, TinyRingManyWritersDrop) {
  RunStress({"tiny ring, drop", 256, 4, 4, 150, 300, 0, 1,
             BufferExhaustedPolicy::kDrop});
}

TEST(RingDrainerStressTest, TinyRingManyWritersStall) {
  RunStress({"tiny ring, stall", 256, 4, 4, 150, 300, 0, 3,
             BufferExhaustedPolicy::kStall});
}

TEST(RingDrainerStressTest, CursorRolloverNearUint32Max) {
  // 16 chunks seeded at 0xffff'fff0: the cursors cross 2^32 early on.
  RunStress({"rollover", 512, 16, 3, 200, 900, 0xffff'fff0u, 5,
             BufferExhaustedPolicy::kStall});
}

TEST(RingDrainerStressTest, RolloverWithTwoChunks) {
  // Two chunks: the 29-bit wrap count itself wraps (spec 9) near the top.
  RunStress({"two chunks", 256, 2, 3, 150, 200, 0xffff'ffe0u, 2,
             BufferExhaustedPolicy::kStall});
}

TEST(RingDrainerStressTest, LargerRingYieldingWriters) {
  RunStress({"larger ring", 1024, 32, 4, 200, 2000, 0, 2,
             BufferExhaustedPolicy::kStall});
}

// The same shapes with head grace: the drainer leaves unpublished head
// positions alone while the ring has room.
TEST(RingDrainerStressTest, HeadGraceTinyRingDrop) {
  RunStress({"grace, tiny ring, drop", 256, 4, 4, 150, 300, 0, 1,
             BufferExhaustedPolicy::kDrop, 200'000});
}

TEST(RingDrainerStressTest, HeadGraceRolloverStall) {
  RunStress({"grace, rollover", 512, 16, 3, 200, 900, 0xffff'fff0u, 5,
             BufferExhaustedPolicy::kStall, 200'000});
}

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
