/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/ring_drainer.h"

#include <gtest/gtest.h>

#include <string.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "src/tracing/core/shm_ring/ring_wait.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/test/recording_sink.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::ChunkState;
using shm_ring::MakeDataWord;
using shm_ring::MakeFreeForWrap;
using shm_ring::TestRing;
using test::FakeWriter;
using test::RecordedChunk;
using test::RecordingSink;
using Frags = std::vector<std::string>;

// Writes one Complete chunk with |frags| for |target|.
void WriteChunk(FakeWriter* w,
                const Frags& frags,
                shm_ring::ChunkFlags abi_flags = shm_ring::kNoChunkFlags) {
  w->ReserveAndClaim(abi_flags);
  for (const std::string& f : frags)
    w->Append(f);
  ASSERT_TRUE(w->Publish(true));
}

RingConfig MakeConfig(const TestRing& ring,
                      ProducerID producer,
                      std::vector<TargetBuffer> buffers) {
  RingConfig c;
  c.view = ring.view();
  c.producer_id = producer;
  c.identity.uid = 1000 + producer;
  c.identity.pid = 4000 + producer;
  c.allowed_buffers = std::move(buffers);
  return c;
}

std::vector<ChunkID> ChunkIds(const std::vector<RecordedChunk>& chunks,
                              WriterID writer) {
  std::vector<ChunkID> ids;
  for (const RecordedChunk& c : chunks) {
    if (c.writer_id == writer)
      ids.push_back(c.chunk_id);
  }
  return ids;
}

TEST(RingDrainerTest, RoutesByBufferIdWithContiguousChunkIdsPerWriter) {
  TestRing ring(512, 8);
  RecordingSink sink_a, sink_b;
  RingDrainer drainer;
  const RingId id =
      drainer.AddRing(MakeConfig(ring, 3, {{10, &sink_a}, {20, &sink_b}}));
  FakeWriter w1(ring.view(), 1, /*target=*/10);
  FakeWriter w2(ring.view(), 2, /*target=*/20);
  FakeWriter w1b(ring.view(), 1, /*target=*/20);  // Writer 1, other buffer.
  WriteChunk(&w1, {"a"});
  WriteChunk(&w2, {"b"});
  WriteChunk(&w1, {"c", "d"}, shm_ring::kFlagContinuesOnNext);
  WriteChunk(&w1b, {"e"}, shm_ring::kFlagContinuesFromPrev);
  WriteChunk(&w2, {"f"}, shm_ring::kFlagDataLoss);

  const PassResult r = drainer.DrainRing(id);
  EXPECT_EQ(r.positions_resolved, 5u);
  EXPECT_EQ(r.bytes_emitted, 6u);
  EXPECT_FALSE(r.more);

  ASSERT_EQ(sink_a.chunks.size(), 2u);
  ASSERT_EQ(sink_b.chunks.size(), 3u);
  EXPECT_EQ(sink_a.chunks[0].fragments, Frags{"a"});
  EXPECT_EQ(sink_a.chunks[1].fragments, (Frags{"c", "d"}));
  EXPECT_EQ(sink_a.chunks[1].flags, shm_ring::kFlagContinuesOnNext);
  EXPECT_EQ(sink_b.chunks[1].fragments, Frags{"e"});
  EXPECT_EQ(sink_b.chunks[1].flags, shm_ring::kFlagContinuesFromPrev);
  // A data-loss chunk keeps its payload and carries the flag.
  EXPECT_EQ(sink_b.chunks[2].fragments, Frags{"f"});
  EXPECT_EQ(sink_b.chunks[2].flags, shm_ring::kFlagDataLoss);
  for (const RecordedChunk& c : sink_a.chunks) {
    EXPECT_EQ(c.producer_id, 3);
    EXPECT_EQ(c.identity.uid, 1003);
    EXPECT_EQ(c.identity.pid, 4003);
  }
  // ChunkIDs per {producer, writer} in emission order, across buffers.
  EXPECT_EQ(ChunkIds(sink_a.chunks, 1), (std::vector<ChunkID>{0, 1}));
  EXPECT_EQ(ChunkIds(sink_b.chunks, 1), (std::vector<ChunkID>{2}));
  EXPECT_EQ(ChunkIds(sink_b.chunks, 2), (std::vector<ChunkID>{0, 1}));

  const RingStats s = drainer.ring_stats(id);
  EXPECT_EQ(s.reader.chunks_emitted, 5u);
  EXPECT_EQ(s.reader.bytes_emitted, 6u);
  EXPECT_EQ(s.passes, 1u);
}

TEST(RingDrainerTest, UnroutableRejectedAndMalformedChunksLeaveChunkIdGaps) {
  TestRing ring(512, 16);
  RecordingSink sink, rejecting;
  rejecting.reject_all = true;
  RingDrainer drainer;
  const RingId id =
      drainer.AddRing(MakeConfig(ring, 1, {{1, &sink}, {2, &rejecting}}));
  FakeWriter to_sink(ring.view(), 7, 1);
  FakeWriter to_unknown(ring.view(), 7, 99);  // Not allowed for producer 1.
  FakeWriter to_rejecting(ring.view(), 7, 2);
  WriteChunk(&to_sink, {"id0"});
  WriteChunk(&to_unknown, {"dropped: unroutable"});
  WriteChunk(&to_sink, {"id2"});
  WriteChunk(&to_rejecting, {"dropped: rejected"});
  WriteChunk(&to_sink, {"id4"});
  // A malformed directory from the same writer: entry larger than capacity.
  const uint32_t pos = to_sink.ReserveAndClaim();
  ring.chunk(ring.geometry().ChunkIndex(pos))[511] = 0xff;
  ring.chunk(ring.geometry().ChunkIndex(pos))[510] = 0xff;
  ring.set_word(
      ring.geometry().ChunkIndex(pos),
      MakeDataWord(ChunkState::kComplete, 0, shm_ring::kNoChunkFlags, 1, 7));
  // An unknown format from the same writer.
  const uint32_t pos2 = to_sink.ReserveAndClaim();
  ring.set_word(
      ring.geometry().ChunkIndex(pos2),
      MakeDataWord(ChunkState::kComplete, 2, shm_ring::kNoChunkFlags, 1, 7));
  WriteChunk(&to_sink, {"id7"});
  // An empty scrape consumes no ID.
  to_sink.ReserveAndClaim();

  const PassResult r = drainer.DrainRing(id);
  EXPECT_EQ(r.positions_resolved, 9u);
  EXPECT_EQ(ChunkIds(sink.chunks, 7), (std::vector<ChunkID>{0, 2, 4, 7}));
  const RingStats s = drainer.ring_stats(id);
  EXPECT_EQ(s.chunks_unroutable, 1u);
  // The rejected chunk is counted by the sink that refused it, once.
  EXPECT_EQ(rejecting.rejects, 1u);
  EXPECT_EQ(rejecting.begins, 1u);
  EXPECT_TRUE(rejecting.chunks.empty());
  EXPECT_EQ(s.reader.malformed_directories, 1u);
  EXPECT_EQ(s.reader.unknown_formats, 1u);
  // Both lost their payload before any buffer (TraceStats.chunks_discarded).
  EXPECT_EQ(s.chunks_dropped, 2u);
  EXPECT_EQ(s.reader.chunks_emitted, 4u);
  EXPECT_EQ(s.reader.scrapes, 1u);
  EXPECT_EQ(s.reader.holes, 5u);

  // The next chunk of writer 7 continues after the empty scrape: no gap.
  FakeWriter next(ring.view(), 7, 1);
  WriteChunk(&next, {"id8"});
  drainer.DrainRing(id);
  EXPECT_EQ(sink.chunks.back().chunk_id, 8u);
}

TEST(RingDrainerTest, AbortedSpeculativeCopyConsumesNoChunkId) {
  TestRing ring(512, 4);
  RecordingSink sink;
  RingDrainer drainer;
  const RingId id = drainer.AddRing(MakeConfig(ring, 1, {{1, &sink}}));
  FakeWriter w(ring.view(), 5, 1);
  w.ReserveAndClaim();
  w.Append("x");
  ASSERT_TRUE(w.Publish(false));  // Acquired(5, 1).
  w.Append("y");
  // The writer publishes between the reader's copy and its CAS.
  bool once = false;
  drainer.GetReaderForTesting(id)->SetTestHookForTesting(
      [&](RingReader::HookPoint p, uint32_t, uint32_t) {
        if (p == RingReader::HookPoint::kBeforeMarkRewrite && !once) {
          once = true;
          ASSERT_TRUE(w.Publish(true));
        }
      });
  drainer.DrainRing(id);
  EXPECT_TRUE(once);
  EXPECT_EQ(sink.begins, 2u);
  EXPECT_EQ(sink.aborts, 1u);
  ASSERT_EQ(sink.chunks.size(), 1u);
  EXPECT_EQ(sink.chunks[0].fragments, (Frags{"x", "y"}));
  EXPECT_EQ(sink.chunks[0].chunk_id, 0u);
  EXPECT_EQ(drainer.ring_stats(id).chunks_aborted, 1u);
  EXPECT_EQ(drainer.ring_stats(id).reader.retries, 1u);
}

TEST(RingDrainerTest, PassIsBoundedInPositionsAndBytes) {
  TestRing ring(1024, 16);
  RecordingSink sink;
  RingDrainerOptions opts;
  opts.max_positions_per_pass = 5;
  opts.max_bytes_per_pass = 2500;
  RingDrainer drainer(opts);
  const RingId id = drainer.AddRing(MakeConfig(ring, 1, {{1, &sink}}));
  FakeWriter w(ring.view(), 1, 1);
  for (int i = 0; i < 12; ++i)
    WriteChunk(&w, {std::string(i < 6 ? 10 : 1000, 'p')});

  PassResult r = drainer.DrainRing(id);  // Positions budget.
  EXPECT_EQ(r.positions_resolved, 5u);
  EXPECT_TRUE(r.more);
  r = drainer.DrainRing(id);  // 1 x 10 B, then 1000 B x 3 > 2500 B.
  EXPECT_EQ(r.positions_resolved, 4u);
  EXPECT_EQ(r.bytes_emitted, 3010u);
  EXPECT_TRUE(r.more);
  r = drainer.DrainRing(id);
  EXPECT_EQ(r.positions_resolved, 3u);
  r = drainer.DrainRing(id);
  EXPECT_EQ(r.positions_resolved, 0u);
  EXPECT_FALSE(r.more);
  EXPECT_EQ(sink.chunks.size(), 12u);
}

TEST(RingDrainerTest, BufferOfAnotherProducerIsForbidden) {
  // Buffer 2 exists (producer 2 may write it) but producer 1 may not: its
  // chunks for buffer 2 are dropped, counted and never reach that sink.
  TestRing ring1(256, 4), ring2(256, 4);
  RecordingSink sink1, sink2;
  RingDrainer drainer;
  const RingId id1 = drainer.AddRing(MakeConfig(ring1, 1, {{1, &sink1}}));
  const RingId id2 = drainer.AddRing(MakeConfig(ring2, 2, {{2, &sink2}}));
  FakeWriter intruder(ring1.view(), 1, /*target=*/2);
  FakeWriter honest(ring2.view(), 1, /*target=*/2);
  WriteChunk(&intruder, {"not yours"});
  WriteChunk(&honest, {"mine"});
  drainer.DrainAll();
  EXPECT_TRUE(sink1.chunks.empty());
  EXPECT_EQ(sink1.begins + sink2.begins, 1u);
  ASSERT_EQ(sink2.chunks.size(), 1u);
  EXPECT_EQ(sink2.chunks[0].fragments, Frags{"mine"});
  EXPECT_EQ(sink2.chunks[0].producer_id, 2);
  EXPECT_EQ(drainer.ring_stats(id1).chunks_unroutable, 1u);
  EXPECT_EQ(drainer.ring_stats(id2).chunks_unroutable, 0u);
  EXPECT_EQ(drainer.TotalStats().chunks_unroutable, 1u);
  // The ring still resolved the position.
  EXPECT_EQ(ring1.read_pos(), 1u);
  EXPECT_EQ(ring1.word(0), MakeFreeForWrap(1));
}

TEST(RingDrainerTest, AllowedBuffersCanChange) {
  TestRing ring(256, 8);
  RecordingSink first, second;
  RingDrainer drainer;
  const RingId id = drainer.AddRing(MakeConfig(ring, 1, {{1, &first}}));
  FakeWriter w(ring.view(), 1, 1);
  WriteChunk(&w, {"to first"});
  drainer.DrainRing(id);
  // The session writing buffer 1 ends; buffer 1 now goes to |second|.
  drainer.SetAllowedBuffers(id, {{1, &second}});
  WriteChunk(&w, {"to second"});
  drainer.DrainRing(id);
  drainer.SetAllowedBuffers(id, {});
  WriteChunk(&w, {"nowhere"});
  drainer.DrainRing(id);
  ASSERT_EQ(first.chunks.size(), 1u);
  ASSERT_EQ(second.chunks.size(), 1u);
  EXPECT_EQ(second.chunks[0].fragments, Frags{"to second"});
  EXPECT_EQ(second.chunks[0].chunk_id, 1u);
  EXPECT_EQ(drainer.ring_stats(id).chunks_unroutable, 1u);
}

TEST(RingDrainerTest, ProtocolErrorStopsOnlyThatRing) {
  TestRing good(256, 4), bad(256, 4);
  RecordingSink sink;
  RingDrainer drainer;
  const RingId good_id = drainer.AddRing(MakeConfig(good, 1, {{1, &sink}}));
  const RingId bad_id = drainer.AddRing(MakeConfig(bad, 2, {{1, &sink}}));
  FakeWriter gw(good.view(), 1, 1);
  FakeWriter bw(bad.view(), 1, 1);
  WriteChunk(&bw, {"before"});
  bad.set_word(1, 0xbad0'0000u);  // Reserved state at position 1.
  bad.set_write_pos(2);
  for (int round = 0; round < 3; ++round) {
    WriteChunk(&gw, {"g" + std::to_string(round)});
    const PassResult r = drainer.DrainAll();
    EXPECT_EQ(r.rings_stopped, 1u);
  }
  EXPECT_EQ(sink.chunks.size(), 4u);  // "before" + 3 from the good ring.
  const ProtocolError& e = drainer.protocol_error(bad_id);
  EXPECT_EQ(e.kind, ProtocolErrorKind::kReservedState);
  EXPECT_EQ(e.position, 1u);
  EXPECT_EQ(e.word, 0xbad0'0000u);
  EXPECT_EQ(bad.word(1), 0xbad0'0000u);
  EXPECT_EQ(bad.read_pos(), 1u);
  EXPECT_EQ(drainer.protocol_error(good_id).kind, ProtocolErrorKind::kNone);
  const RingStats total = drainer.TotalStats();
  EXPECT_EQ(total.reader.protocol_errors, 1u);
  EXPECT_EQ(total.reader.chunks_emitted, 4u);
}

// The service learns of a stopped ring through on_ring_stopped, once.
TEST(RingDrainerTest, ProtocolErrorIsReportedOnceThroughTheCallback) {
  TestRing bad(256, 4);
  RecordingSink sink;
  RingDrainerOptions options;
  std::vector<std::pair<uint32_t, ProducerID>> stopped;
  options.on_ring_stopped = [&](uint32_t ring, ProducerID producer,
                                const ProtocolError& e) {
    EXPECT_EQ(e.kind, ProtocolErrorKind::kReservedState);
    stopped.emplace_back(ring, producer);
  };
  RingDrainer drainer(options);
  const RingId id = drainer.AddRing(MakeConfig(bad, 7, {{1, &sink}}));
  bad.set_word(0, 0xbad0'0000u);
  bad.set_write_pos(1);
  for (int round = 0; round < 3; ++round)
    drainer.DrainAll();
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_EQ(stopped[0].first, id);
  EXPECT_EQ(stopped[0].second, 7u);
}

// A producer's ChunkID counters go with its ring: after 10,000 producer
// lifetimes (3 writers each) the map is back at its baseline, and a
// ProducerID registered again starts its writers at ChunkID 0.
TEST(RingDrainerTest, ChunkIdEntriesReturnToBaselineAfterProducersLeave) {
  RecordingSink sink;
  RingDrainer drainer;
  TestRing resident(256, 4);
  drainer.AddRing(MakeConfig(resident, 1, {{1, &sink}}));
  FakeWriter r1(resident.view(), 1, 1), r2(resident.view(), 2, 1);
  WriteChunk(&r1, {"r"});
  WriteChunk(&r2, {"r"});
  drainer.DrainAll();
  const size_t baseline = drainer.num_chunk_id_entries();
  ASSERT_EQ(baseline, 2u);

  size_t peak = 0;
  for (int i = 0; i < 10000; ++i) {
    TestRing ring(256, 4);
    // Ids 2..1001, each used ten times.
    const ProducerID producer = static_cast<ProducerID>(2 + i % 1000);
    const RingId id = drainer.AddRing(MakeConfig(ring, producer, {{1, &sink}}));
    for (WriterID w = 1; w <= 3; ++w) {
      FakeWriter writer(ring.view(), w, 1);
      WriteChunk(&writer, {"x"});
    }
    drainer.DrainRing(id);
    peak = std::max(peak, drainer.num_chunk_id_entries());
    drainer.RemoveRing(id);
    ASSERT_EQ(drainer.num_chunk_id_entries(), baseline) << i;
  }
  EXPECT_EQ(peak, baseline + 3);
  // Every one of the 30,000 chunks got ChunkID 0: a fresh start per
  // lifetime, not a continuation of the previous owner's sequence.
  size_t from_leavers = 0;
  for (const RecordedChunk& c : sink.chunks) {
    if (c.producer_id == 1)
      continue;
    ++from_leavers;
    EXPECT_EQ(c.chunk_id, 0u);
  }
  EXPECT_EQ(from_leavers, 30000u);
}

TEST(RingDrainerTest, WakesWritersOnlyWhenSomeoneWaits) {
  TestRing ring(256, 4);
  RecordingSink sink;
  RingDrainer drainer;
  const RingId id = drainer.AddRing(MakeConfig(ring, 1, {{1, &sink}}));
  FakeWriter w(ring.view(), 1, 1);
  WriteChunk(&w, {"a"});
  drainer.DrainRing(id);
  EXPECT_EQ(drainer.ring_stats(id).writer_wakeups, 0u);

  ring.view().num_writers_waiting()->store(2, std::memory_order_relaxed);
  drainer.DrainRing(id);  // No progress: nobody to wake for.
  EXPECT_EQ(drainer.ring_stats(id).writer_wakeups, 0u);
  WriteChunk(&w, {"b"});
  drainer.DrainRing(id);
  EXPECT_EQ(drainer.ring_stats(id).writer_wakeups, 1u);
}

TEST(RingDrainerTest, RemovedRingsStayInTotals) {
  TestRing a(256, 4), b(256, 4);
  RecordingSink sink;
  RingDrainer drainer;
  const RingId ia = drainer.AddRing(MakeConfig(a, 1, {{1, &sink}}));
  const RingId ib = drainer.AddRing(MakeConfig(b, 2, {{1, &sink}}));
  FakeWriter wa(a.view(), 1, 1), wb(b.view(), 1, 1);
  WriteChunk(&wa, {"aa"});
  WriteChunk(&wb, {"bbb"});
  drainer.DrainAll();
  drainer.RemoveRing(ia);
  EXPECT_EQ(drainer.num_rings(), 1u);
  const RingStats t = drainer.TotalStats();
  EXPECT_EQ(t.reader.chunks_emitted, 2u);
  EXPECT_EQ(t.reader.bytes_emitted, 5u);
  EXPECT_EQ(t.passes, 2u);
  EXPECT_EQ(drainer.ring_stats(ib).reader.bytes_emitted, 3u);
}

TEST(RingDrainerTest, AddRingStatsSumsEveryCounter) {
  // Every counter of RingStats (all uint64_t, see the static_asserts next to
  // AddRingStats) gets a distinct value; the totals must add each one to its
  // own field. A counter AddRingStats forgot (or added to the wrong field)
  // fails here.
  constexpr size_t kCounters = sizeof(RingStats) / sizeof(uint64_t);
  uint64_t a[kCounters], b[kCounters], sum[kCounters];
  for (size_t i = 0; i < kCounters; ++i) {
    a[i] = 1u + i;
    b[i] = 1000u * (1u + i);
  }
  RingStats sa, total;
  memcpy(&sa, a, sizeof(sa));
  memcpy(&total, b, sizeof(total));
  AddRingStats(sa, &total);
  memcpy(sum, &total, sizeof(sum));
  for (size_t i = 0; i < kCounters; ++i)
    EXPECT_EQ(sum[i], a[i] + b[i]) << "counter #" << i;
}

TEST(RingDrainerTest, InitialReadPosComesFromTheService) {
  TestRing ring(256, 4);
  ring.SeedPositions(0x7fff'fffeu);
  RecordingSink sink;
  RingDrainer drainer;
  RingConfig config = MakeConfig(ring, 1, {{1, &sink}});
  config.initial_read_pos = 0x7fff'fffeu;
  const RingId id = drainer.AddRing(config);
  FakeWriter w(ring.view(), 1, 1);
  for (int i = 0; i < 4; ++i)
    WriteChunk(&w, {std::to_string(i)});
  EXPECT_EQ(drainer.DrainRing(id).positions_resolved, 4u);
  EXPECT_EQ(ring.read_pos(), 0x8000'0002u);
  EXPECT_EQ(ring.word(ring.geometry().ChunkIndex(0x7fff'fffeu)),
            MakeFreeForWrap(ring.geometry().NextWrap(0x7fff'fffeu)));
}

// Bounded wait until a writer thread registered in num_writers_waiting
// (W1 of ring_wait.h); true if exactly one did.
bool WaitUntilAWriterRegistered(const TestRing& ring) {
  for (int i = 0; i < 10'000'000 && ring.view().num_writers_waiting()->load(
                                        std::memory_order_relaxed) == 0;
       ++i) {
    std::this_thread::yield();
  }
  // relaxed: the count alone is asserted.
  return ring.view().num_writers_waiting()->load(std::memory_order_relaxed) ==
         1u;
}

TEST(RingDrainerTest, WakesAWriterBlockedInTheWaitProtocol) {
  // A real writer thread blocked in shm_ring::WaitForReadPosChange (the
  // writer half of ring_wait.h) is released by the drainer's pass.
  TestRing ring(256, 4);
  RecordingSink sink;
  RingDrainer drainer;
  const RingId id = drainer.AddRing(MakeConfig(ring, 1, {{1, &sink}}));
  FakeWriter w(ring.view(), 1, 1);
  WriteChunk(&w, {"x"});
  std::atomic<bool> moved{false};
  std::thread waiter([&] {
    // The deadline is only a safety net; the test asserts no timing.
    moved = shm_ring::WaitForReadPosChange(
        ring.view(), 0, base::MonotonicNs() + 60'000'000'000ull);
  });
  ASSERT_TRUE(WaitUntilAWriterRegistered(ring));
  EXPECT_EQ(drainer.DrainRing(id).positions_resolved, 1u);
  waiter.join();
  EXPECT_TRUE(moved);
  EXPECT_EQ(drainer.ring_stats(id).writer_wakeups, 1u);
  EXPECT_EQ(ring.view().num_writers_waiting()->load(), 0u);
}

uint64_t g_fake_now_ns = 0;
uint64_t FakeNowNs() {
  return g_fake_now_ns;
}

TEST(RingDrainerTest, WakesStalledWritersEarlyOncePerPass) {
  // A writer waiting for room is woken at the first position a pass frees
  // and again after the pass's last store (the wake the protocol relies
  // on); nobody waiting, no wake at all.
  TestRing ring(256, 8);
  RecordingSink sink;
  RingDrainer drainer;
  const RingId id = drainer.AddRing(MakeConfig(ring, 1, {{1, &sink}}));
  FakeWriter w(ring.view(), 1, 1);
  for (const char* payload : {"a", "b", "c"})
    WriteChunk(&w, {payload});
  ring.view().num_writers_waiting()->store(1, std::memory_order_relaxed);
  EXPECT_EQ(drainer.DrainRing(id).positions_resolved, 3u);
  EXPECT_EQ(drainer.ring_stats(id).writer_wakeups, 2u);
  EXPECT_EQ(drainer.ring_stats(id).early_writer_wakeups, 1u);

  // A pass of one position: the early wake is also the last one.
  WriteChunk(&w, {"d"});
  EXPECT_EQ(drainer.DrainRing(id).positions_resolved, 1u);
  EXPECT_EQ(drainer.ring_stats(id).writer_wakeups, 3u);
  EXPECT_EQ(drainer.ring_stats(id).early_writer_wakeups, 2u);

  ring.view().num_writers_waiting()->store(0, std::memory_order_relaxed);
  WriteChunk(&w, {"e"});
  WriteChunk(&w, {"f"});
  EXPECT_EQ(drainer.DrainRing(id).positions_resolved, 2u);
  EXPECT_EQ(drainer.ring_stats(id).writer_wakeups, 3u);
  EXPECT_EQ(drainer.ring_stats(id).early_writer_wakeups, 2u);
  EXPECT_EQ(sink.chunks.size(), 6u);
}

// Runs |hook| inside the drain pass, when the pass begins the copy of its
// |at|-th chunk, then records the chunk.
class HookedSink : public ChunkSink {
 public:
  HookedSink(uint32_t at, std::function<void()> hook)
      : at_(at), hook_(std::move(hook)) {}
  uint8_t* BeginChunkFragments(ProducerID producer_id,
                               const ClientIdentity& identity,
                               WriterID writer_id,
                               ChunkID chunk_id,
                               const uint32_t* sizes,
                               size_t num_fragments,
                               shm_ring::ChunkFlags flags) override {
    if (++begins_ == at_)
      hook_();
    return inner.BeginChunkFragments(producer_id, identity, writer_id, chunk_id,
                                     sizes, num_fragments, flags);
  }
  void CommitPendingChunk() override { inner.CommitPendingChunk(); }
  void AbortPendingChunk() override { inner.AbortPendingChunk(); }

  RecordingSink inner;

 private:
  const uint32_t at_;
  const std::function<void()> hook_;
  uint32_t begins_ = 0;
};

TEST(RingDrainerTest, ReleasesAStalledWriterBeforeThePassEnds) {
  // A real writer blocked in shm_ring::WaitForReadPosChange returns while
  // the pass that freed room for it is still copying: the pass is held in
  // its second chunk until the writer has returned, so without the early
  // wake this test fails at the safety deadline.
  TestRing ring(256, 4);
  std::atomic<bool> writer_returned{false};
  bool returned_mid_pass = false;
  HookedSink sink(/*at=*/2, [&] {
    const uint64_t deadline = base::MonotonicNs() + 60'000'000'000ull;
    // acquire; pairs with the waiter thread's release store.
    while (!writer_returned.load(std::memory_order_acquire) &&
           base::MonotonicNs() < deadline) {
      std::this_thread::yield();
    }
    returned_mid_pass = writer_returned.load(std::memory_order_acquire);
  });
  RingDrainer drainer;
  const RingId id = drainer.AddRing(MakeConfig(ring, 1, {{1, &sink}}));
  FakeWriter w(ring.view(), 1, 1);
  WriteChunk(&w, {"x"});
  WriteChunk(&w, {"y"});
  bool moved = false;
  std::thread waiter([&] {
    moved = shm_ring::WaitForReadPosChange(
        ring.view(), 0, base::MonotonicNs() + 60'000'000'000ull);
    // release; pairs with the hook's acquire load.
    writer_returned.store(true, std::memory_order_release);
  });
  ASSERT_TRUE(WaitUntilAWriterRegistered(ring));
  EXPECT_EQ(drainer.DrainRing(id).positions_resolved, 2u);
  waiter.join();
  EXPECT_TRUE(moved);
  EXPECT_TRUE(returned_mid_pass);
  // The writer deregistered before the pass's last check: one wake only.
  EXPECT_EQ(drainer.ring_stats(id).early_writer_wakeups, 1u);
  EXPECT_EQ(drainer.ring_stats(id).writer_wakeups, 1u);
  EXPECT_EQ(sink.inner.chunks.size(), 2u);
}

TEST(RingDrainerTest, WaitersDoNotMakeAPassScrapeChunksOpenedDuringIt) {
  // A pass that starts while a writer waits for room resolves at once the
  // positions reserved before it began; a chunk opened while it runs (here
  // by a writer claiming in the middle of the pass, as a woken writer does)
  // gets the head grace like any other.
  TestRing ring(256, 8);
  FakeWriter early(ring.view(), 1, 1);
  FakeWriter late(ring.view(), 2, 1);
  HookedSink sink(/*at=*/1, [&] {
    late.ReserveAndClaim();
    late.Append("open");
  });
  RingDrainerOptions opts;
  opts.head_grace_ns = 1000;
  opts.now_ns = &FakeNowNs;
  g_fake_now_ns = 5000;
  RingDrainer drainer(opts);
  const RingId id = drainer.AddRing(MakeConfig(ring, 1, {{1, &sink}}));
  WriteChunk(&early, {"a"});
  WriteChunk(&early, {"b"});
  ring.view().num_writers_waiting()->store(1, std::memory_order_relaxed);
  const PassResult r = drainer.DrainRing(id);
  EXPECT_EQ(r.positions_resolved, 2u);
  EXPECT_TRUE(r.deferred);
  EXPECT_EQ(drainer.ring_stats(id).reader.scrapes, 0u);
  EXPECT_EQ(sink.inner.chunks.size(), 2u);

  // The next pass starts with the open chunk reserved and the writer still
  // counted as waiting: that chunk is resolved at once.
  const PassResult r2 = drainer.DrainRing(id);
  EXPECT_EQ(r2.positions_resolved, 1u);
  EXPECT_EQ(drainer.ring_stats(id).reader.scrapes, 1u);
}

TEST(RingDrainerTest, HeadGraceDefersThenInsists) {
  TestRing ring(256, 8);
  RecordingSink sink;
  RingDrainerOptions opts;
  opts.head_grace_ns = 1000;
  opts.now_ns = &FakeNowNs;
  g_fake_now_ns = 5000;
  RingDrainer drainer(opts);
  const RingId id = drainer.AddRing(MakeConfig(ring, 1, {{1, &sink}}));
  FakeWriter w(ring.view(), 1, 1);
  WriteChunk(&w, {"done"});
  w.ReserveAndClaim();  // Open chunk at the head.
  w.Append("open");

  PassResult r = drainer.DrainRing(id);
  EXPECT_EQ(r.positions_resolved, 1u);
  EXPECT_TRUE(r.deferred);
  g_fake_now_ns += 999;  // Still within the grace.
  r = drainer.DrainRing(id);
  EXPECT_EQ(r.positions_resolved, 0u);
  EXPECT_TRUE(r.deferred);
  EXPECT_EQ(drainer.ring_stats(id).reader.scrapes, 0u);
  g_fake_now_ns += 1;  // Grace over: the open chunk is scraped (n = 0).
  r = drainer.DrainRing(id);
  EXPECT_EQ(r.positions_resolved, 1u);
  EXPECT_FALSE(r.deferred);
  EXPECT_EQ(drainer.ring_stats(id).reader.scrapes, 1u);

  // A new head position gets its own grace period.
  FakeWriter w2(ring.view(), 2, 1);
  w2.ReserveAndClaim();
  EXPECT_TRUE(drainer.DrainRing(id).deferred);
  // A flush insists at once.
  r = drainer.DrainRing(id, DrainMode::kFlush);
  EXPECT_EQ(r.positions_resolved, 1u);
  EXPECT_EQ(drainer.ring_stats(id).reader.scrapes, 2u);

  // So does a writer waiting for room.
  FakeWriter w3(ring.view(), 3, 1);
  w3.ReserveAndClaim();
  EXPECT_TRUE(drainer.DrainRing(id).deferred);
  ring.view().num_writers_waiting()->store(1, std::memory_order_relaxed);
  EXPECT_EQ(drainer.DrainRing(id).positions_resolved, 1u);
  EXPECT_EQ(drainer.ring_stats(id).writer_wakeups, 1u);
  EXPECT_EQ(sink.chunks.size(), 1u);
}

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
