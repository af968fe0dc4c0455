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

// One writer of a stress run: its RingWriter (which outlives its thread:
// the main thread adds end markers) and the ledger of what it lost.
struct StressWriter {
  std::unique_ptr<RingWriter> writer;
  std::unique_ptr<test::LossLedger> ledger;
};

std::vector<StressWriter> MakeWriters(const StressParams& p,
                                      shm_ring::TestRing* ring) {
  std::vector<StressWriter> writers;
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    RingWriter::Options o;
    o.writer_id = static_cast<WriterID>(w + 1);
    o.target_buffer = kBufferId;
    o.policy = p.policy;
    o.stall_timeout_ms = 2000;
    StressWriter sw;
    sw.writer = std::make_unique<RingWriter>(ring->view(), o);
    sw.ledger = std::make_unique<test::LossLedger>(sw.writer.get());
    writers.push_back(std::move(sw));
  }
  return writers;
}

// Writer |w|'s thread: packets_per_writer packets of random sizes, a flush
// every 8.
void WriteStressPackets(const StressParams& p, uint32_t w, StressWriter* sw) {
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
        sw->writer.get(), packet,
        [yield] {
          if (yield)
            std::this_thread::yield();
        },
        sw->ledger.get(), seq);
    // A dropping writer on a full ring gives the drainer a chance, rather
    // than dropping the whole run in one time slice.
    if (!kept)
      std::this_thread::yield();
    if (seq % 8 == 7)
      test::FlushRingWriter(sw->writer.get(), sw->ledger.get());
  }
  test::FlushRingWriter(sw->writer.get(), sw->ledger.get());
}

// End markers, so that a loss at the very end of a writer's run is reported
// too (on its marker). One writer at a time, on the drained and swept ring
// with nobody draining concurrently: the claim succeeds at once and nothing
// scrapes the marker, so it cannot be lost, whatever the scheduling.
// Returns the packets each writer wrote, marker included.
std::vector<uint32_t> WriteEndMarkers(const StressParams& p,
                                      test::DrainedRing* env,
                                      std::vector<StressWriter>* writers) {
  std::vector<uint32_t> written(p.num_writers, 0);
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    StressWriter& sw = (*writers)[w];
    const uint16_t tag = static_cast<uint16_t>(w + 1);
    const uint32_t seq = p.packets_per_writer;
    test::SweepRing(env->ring, &env->drainer, env->id);
    EXPECT_TRUE(test::WriteRingPacket(sw.writer.get(),
                                      test::MakeTestPacket(tag, seq, 4), {},
                                      sw.ledger.get(), seq));
    test::FlushRingWriter(sw.writer.get(), sw.ledger.get());
    test::DrainUntilEmpty(&env->drainer, env->id);
    EXPECT_EQ(sw.ledger->lost().count(seq), 0u) << "writer " << w;
    written[w] = seq + 1;
    // Every finished packet was published or dropped by the last flush.
    EXPECT_EQ(sw.ledger->at_risk(), 0u);
    EXPECT_FALSE(sw.ledger->packet_open());
  }
  return written;
}

// Per writer, packet by packet: delivered at most once, in order, intact;
// every packet that did not arrive is one the writer lost (the ledger), and
// its loss is reported on the writer's next delivered packet. Fills, per
// writer, the next expected sequence number and the packets delivered.
void CheckReadBack(const StressParams& p,
                   TraceBufferV2* tb,
                   const std::vector<StressWriter>& writers,
                   std::vector<uint32_t>* next,
                   std::vector<uint32_t>* delivered) {
  next->assign(p.num_writers, 0);
  delivered->assign(p.num_writers, 0);
  uint32_t bad = 0;
  for (const test::ReadBackPacket& rp : test::ReadAllPackets(tb)) {
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
    const std::set<uint32_t>& lost = writers[w].ledger->lost();
    uint32_t& expected = (*next)[w];
    ASSERT_GE(parsed.seq, expected) << "writer " << w << " duplicate/reorder";
    EXPECT_EQ(lost.count(parsed.seq), 0u)
        << "writer " << w << " seq " << parsed.seq
        << " arrived although the writer lost it";
    for (uint32_t missing = expected; missing < parsed.seq; ++missing) {
      EXPECT_EQ(lost.count(missing), 1u)
          << "writer " << w << " seq " << missing
          << " vanished although the writer kept it";
    }
    if (parsed.seq > expected) {
      EXPECT_NE(rp.loss & trace_buffer::kDataLossPresent, 0u)
          << "writer " << w << " seq " << parsed.seq << ": unreported loss of "
          << parsed.seq - expected << " packets";
    }
    expected = parsed.seq + 1;
    ++(*delivered)[w];
  }
  EXPECT_EQ(bad, 0u) << "corrupted packets";
}

void RunStress(const StressParams& p) {
  SCOPED_TRACE(p.name);
  test::DrainedRing env({p.chunk_size, p.num_chunks, p.start_position, 16 << 20,
                         /*producer_id=*/9, kBufferId, p.head_grace_ns});
  std::vector<StressWriter> writers = MakeWriters(p, &env.ring);
  {
    test::BackgroundDrainer background(&env.drainer, env.id);
    std::vector<std::thread> threads;
    for (uint32_t w = 0; w < p.num_writers; ++w)
      threads.emplace_back(WriteStressPackets, std::cref(p), w, &writers[w]);
    for (std::thread& t : threads)
      t.join();
    background.WritersDone();
    background.Stop();
  }
  const std::vector<uint32_t> written = WriteEndMarkers(p, &env, &writers);

  const RingStats s = env.drainer.ring_stats(env.id);
  EXPECT_EQ(s.reader.protocol_errors, 0u);
  EXPECT_EQ(s.reader.malformed_directories, 0u);
  EXPECT_EQ(s.reader.unknown_formats, 0u);
  EXPECT_EQ(s.chunks_unroutable, 0u);
  // What the buffer refused it counts itself: nothing.
  EXPECT_EQ(env.tb->stats().abi_violations, 0u);
  EXPECT_EQ(env.tb->stats().chunks_discarded, 0u);

  std::vector<uint32_t> next, delivered;
  CheckReadBack(p, env.tb.get(), writers, &next, &delivered);

  // Hence, exactly, delivered + lost == written.
  uint64_t total_delivered = 0, total_lost = 0, lost_after_finish = 0;
  uint64_t relocations = 0;
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    // The marker arrived, so nothing is missing at the end.
    EXPECT_EQ(next[w], written[w]) << "writer " << w;
    const test::LossLedger& ledger = *writers[w].ledger;
    EXPECT_EQ(delivered[w] + ledger.lost().size(), written[w])
        << "writer " << w;
    if (!ledger.lost().empty()) {
      EXPECT_GT(writers[w].writer->stats().loss_events, 0u) << "writer " << w;
    }
    total_delivered += delivered[w];
    total_lost += ledger.lost().size();
    lost_after_finish += ledger.lost_after_finish();
    relocations += writers[w].writer->stats().relocations;
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
