/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// MPSC stress: several writer threads with real RingWriters and one drainer
// thread feeding a TraceBufferV2. Payloads verify themselves (writer tag,
// sequence number, length, checksum). Checks, per writer and packet by
// packet: every delivered packet is intact, delivered at most once and in
// order; the packets that did not arrive are exactly the ones the writer
// lost (test::LossLedger works that out from the writer's side), and each
// loss is reported on the writer's next delivered packet (an end marker per
// writer makes sure there is one). So delivered + lost == written, exactly.
// Fixed iteration counts; the assertions hold for every interleaving.

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ringtrace/logging.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/background_drainer.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/test/loss_ledger.h"
#include "src/tracing/service/ring_drainer/test/packet_util.h"
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

void RunStress(const StressParams& p) {
  SCOPED_TRACE(p.name);
  test::DrainedRing env({p.chunk_size, p.num_chunks, p.start_position, 16 << 20,
                         /*producer_id=*/9, kBufferId, p.head_grace_ns});
  shm_ring::TestRing& ring = env.ring;
  std::unique_ptr<TraceBufferV2>& tb = env.tb;
  RingDrainer& drainer = env.drainer;
  const RingId id = env.id;

  // The writers outlive their threads: the main thread adds end markers.
  std::vector<std::unique_ptr<RingWriter>> ring_writers;
  std::vector<std::unique_ptr<test::LossLedger>> ledgers;
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    RingWriter::Options o;
    o.writer_id = static_cast<WriterID>(w + 1);
    o.target_buffer = kBufferId;
    o.policy = p.policy;
    o.stall_timeout_ms = 2000;
    ring_writers.push_back(std::make_unique<RingWriter>(ring.view(), o));
    ledgers.push_back(
        std::make_unique<test::LossLedger>(ring_writers.back().get()));
  }

  test::BackgroundDrainer background(&drainer, id);
  std::vector<std::thread> writers;
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    writers.emplace_back([&, w] {
      RingWriter* writer = ring_writers[w].get();
      test::LossLedger* ledger = ledgers[w].get();
      const uint16_t tag = static_cast<uint16_t>(w + 1);
      uint32_t rng = 0x2545'f491u * (w + 1);
      for (uint32_t seq = 0; seq < p.packets_per_writer; ++seq) {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        const std::string packet =
            test::MakeTestPacket(tag, seq, rng % (p.max_body + 1));
        const bool yield = p.yield_every && seq % p.yield_every == 0;
        const bool kept = test::WriteRingPacket(
            writer, packet,
            [yield] {
              if (yield)
                std::this_thread::yield();
            },
            ledger, seq);
        // A dropping writer on a full ring gives the drainer a chance,
        // rather than dropping the whole run in one time slice.
        if (!kept)
          std::this_thread::yield();
        if (seq % 8 == 7)
          test::FlushRingWriter(writer, ledger);
      }
      test::FlushRingWriter(writer, ledger);
    });
  }

  for (std::thread& t : writers)
    t.join();
  background.WritersDone();
  background.Stop();

  // End markers, so that a loss at the very end of a writer's run is
  // reported too (on its marker). One writer at a time, on the drained and
  // swept ring with nobody draining concurrently: the claim succeeds at once
  // and nothing scrapes the marker, so it cannot be lost, whatever the
  // scheduling.
  std::vector<uint32_t> written(p.num_writers, 0);
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    const uint16_t tag = static_cast<uint16_t>(w + 1);
    const uint32_t seq = p.packets_per_writer;
    test::SweepRing(ring, &drainer, id);
    EXPECT_TRUE(test::WriteRingPacket(ring_writers[w].get(),
                                      test::MakeTestPacket(tag, seq, 4), {},
                                      ledgers[w].get(), seq));
    test::FlushRingWriter(ring_writers[w].get(), ledgers[w].get());
    test::DrainUntilEmpty(&drainer, id);
    EXPECT_EQ(ledgers[w]->lost().count(seq), 0u) << "writer " << w;
    written[w] = seq + 1;
    // Every finished packet was published or dropped by the last flush.
    EXPECT_EQ(ledgers[w]->at_risk(), 0u);
    EXPECT_FALSE(ledgers[w]->packet_open());
  }

  const RingStats s = drainer.ring_stats(id);
  EXPECT_EQ(s.reader.protocol_errors, 0u);
  EXPECT_EQ(s.reader.malformed_directories, 0u);
  EXPECT_EQ(s.reader.unknown_formats, 0u);
  EXPECT_EQ(s.chunks_unroutable, 0u);
  EXPECT_EQ(s.chunks_rejected_by_sink, 0u);
  EXPECT_EQ(tb->stats().abi_violations, 0u);
  EXPECT_EQ(tb->stats().chunks_discarded, 0u);

  // Per writer, packet by packet: delivered at most once, in order, intact;
  // every packet that did not arrive is one the writer lost (the ledger),
  // and its loss is reported on the writer's next delivered packet; every
  // packet the writer did not lose arrived. Hence, exactly,
  // delivered + lost == written.
  std::vector<uint32_t> next(p.num_writers, 0);
  std::vector<uint32_t> delivered(p.num_writers, 0);
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
    const std::set<uint32_t>& lost = ledgers[w]->lost();
    ASSERT_GE(parsed.seq, next[w]) << "writer " << w << " duplicate/reorder";
    EXPECT_EQ(lost.count(parsed.seq), 0u)
        << "writer " << w << " seq " << parsed.seq
        << " arrived although the writer lost it";
    for (uint32_t missing = next[w]; missing < parsed.seq; ++missing) {
      EXPECT_EQ(lost.count(missing), 1u)
          << "writer " << w << " seq " << missing
          << " vanished although the writer kept it";
    }
    if (parsed.seq > next[w]) {
      EXPECT_NE(rp.loss & trace_buffer::kDataLossPresent, 0u)
          << "writer " << w << " seq " << parsed.seq << ": unreported loss of "
          << parsed.seq - next[w] << " packets";
    }
    next[w] = parsed.seq + 1;
    ++delivered[w];
  }
  EXPECT_EQ(bad, 0u) << "corrupted packets";

  uint64_t total_delivered = 0, total_lost = 0, lost_after_finish = 0;
  uint64_t relocations = 0;
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    // The marker arrived, so nothing is missing at the end.
    EXPECT_EQ(next[w], written[w]) << "writer " << w;
    const test::LossLedger& ledger = *ledgers[w];
    EXPECT_EQ(delivered[w] + ledger.lost().size(), written[w])
        << "writer " << w;
    if (!ledger.lost().empty()) {
      EXPECT_GT(ring_writers[w]->stats().loss_events, 0u) << "writer " << w;
    }
    total_delivered += delivered[w];
    total_lost += ledger.lost().size();
    lost_after_finish += ledger.lost_after_finish();
    relocations += ring_writers[w]->stats().relocations;
  }
  RT_LOG(
      "%s: delivered %llu, lost %llu (%llu after the packet was finished), "
      "scrapes %llu, holes %llu, relocations %llu, retries %llu, "
      "deferrals %llu",
      p.name, static_cast<unsigned long long>(total_delivered),
      static_cast<unsigned long long>(total_lost),
      static_cast<unsigned long long>(lost_after_finish),
      static_cast<unsigned long long>(s.reader.scrapes),
      static_cast<unsigned long long>(s.reader.holes),
      static_cast<unsigned long long>(relocations),
      static_cast<unsigned long long>(s.reader.retries),
      static_cast<unsigned long long>(s.reader.deferrals));
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
