/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The reader against a writer on another thread, with every interleaving
// forced deterministically: the reader's test hook stops it right before the
// contested CAS (after its speculative copy) and a step sequencer lets the
// writer thread run its own CAS either there (writer first) or after the
// reader returned (reader first). Each race of spec 5.2 is run in both orders
// and the test asserts which side won each time and that both outcomes were
// reached. Also: the section 2.1 scenario, a writer suspended between
// reserve and claim, and a stalled writer pinning a chunk.

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "src/tracing/service/ring_drainer/ring_reader.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/test/recording_sink.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using HookPoint = RingReader::HookPoint;
using shm_ring::ChunkState;
using shm_ring::MakeAcknowledged;
using shm_ring::MakeDataWord;
using shm_ring::MakeFreeForWrap;
using shm_ring::StateWord;
using shm_ring::TestRing;
using test::FakeWriter;
using test::RecordingConsumer;
using Frags = std::vector<std::string>;

// Two threads taking turns: WaitFor(n) blocks until someone Signal()ed a
// step >= n. The mutex also gives the happens-before edges between turns.
class Sequencer {
 public:
  void Signal(int step) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (step > reached_)
      reached_ = step;
    cv_.notify_all();
  }
  void WaitFor(int step) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return reached_ >= step; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int reached_ = 0;
};

enum class Order { kWriterFirst, kReaderFirst };
enum class Winner { kWriter, kReader };

struct RaceResult {
  ReadResult read_result;
  bool writer_cas_won;
  StateWord writer_observed;  // Word found by a losing writer CAS.
};

// Runs |writer_step| on its own thread, ordered against the reader's CAS at
// |point|: inside the hook (the reader has copied and is about to CAS) for
// kWriterFirst, after ReadOne() returned for kReaderFirst.
RaceResult RunRace(RingReader* reader,
                   ChunkConsumer* consumer,
                   HookPoint point,
                   Order order,
                   std::function<bool(StateWord*)> writer_step) {
  Sequencer seq;
  constexpr int kWriterGo = 1;
  constexpr int kWriterDone = 2;
  RaceResult result{};
  std::thread writer([&] {
    seq.WaitFor(kWriterGo);
    result.writer_cas_won = writer_step(&result.writer_observed);
    seq.Signal(kWriterDone);
  });
  bool fired = false;
  reader->SetTestHookForTesting([&](HookPoint p, uint32_t, uint32_t) {
    if (p != point || fired)
      return;
    fired = true;
    if (order == Order::kWriterFirst) {
      seq.Signal(kWriterGo);
      seq.WaitFor(kWriterDone);
    }
  });
  result.read_result = reader->ReadOne(consumer);
  seq.Signal(kWriterGo);
  seq.WaitFor(kWriterDone);
  writer.join();
  reader->SetTestHookForTesting(nullptr);
  EXPECT_TRUE(fired) << "the reader never reached the contested CAS";
  return result;
}

// Who won, from what both sides observed (not from the order the test
// asked for): the writer's CAS result, cross-checked against the reader's
// own account (a lost reader CAS is counted as a retry).
Winner ObservedWinner(const RaceResult& r, const RingReader& reader) {
  EXPECT_EQ(r.writer_cas_won, reader.stats().retries != 0)
      << "writer and reader disagree about who won the state word";
  return r.writer_cas_won ? Winner::kWriter : Winner::kReader;
}

Winner ExpectedWinner(Order order) {
  return order == Order::kWriterFirst ? Winner::kWriter : Winner::kReader;
}

// --- Race 1: claim versus resolving an unclaimed position ----------------

TEST(RingReaderRaceTest, ClaimVersusResolveUnclaimedBothOrders) {
  std::set<Winner> outcomes;
  for (Order order : {Order::kWriterFirst, Order::kReaderFirst}) {
    SCOPED_TRACE(order == Order::kWriterFirst ? "writer first"
                                              : "reader first");
    TestRing ring(256, 4);
    FakeWriter writer(ring.view(), 5);
    uint32_t pos = 0;
    ASSERT_TRUE(writer.Reserve(&pos));  // Reserved, claim pending.
    RingReader reader(ring.view(), 0);
    RecordingConsumer consumer;

    const RaceResult r =
        RunRace(&reader, &consumer, HookPoint::kBeforeAdvanceFree, order,
                [&](StateWord* seen) {
                  return writer.Claim(pos, shm_ring::kNoChunkFlags, seen);
                });
    const Winner winner = ObservedWinner(r, reader);
    EXPECT_EQ(winner, ExpectedWinner(order));
    outcomes.insert(winner);

    // Either way the reader resolved the position as a hole.
    EXPECT_EQ(r.read_result, ReadResult::kSkipped);
    EXPECT_EQ(reader.read_pos(), 1u);
    if (order == Order::kWriterFirst) {
      // Writer wins: the reader redispatches on Acquired(5, 0) and marks it.
      EXPECT_TRUE(r.writer_cas_won);
      EXPECT_EQ(reader.stats().retries, 1u);
      EXPECT_EQ(reader.stats().scrapes, 1u);
      EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kRewriteRequested, 0,
                                           shm_ring::kNoChunkFlags, 0, 5));
      // The writer then learns it must relocate everything.
      writer.Append("late");
      StateWord seen = 0;
      EXPECT_FALSE(writer.Publish(true, &seen));
      EXPECT_EQ(seen, MakeDataWord(ChunkState::kRewriteRequested, 0,
                                   shm_ring::kNoChunkFlags, 0, 5));
    } else {
      // Reader wins: the claim fails against FreeForWrap(next_wrap(0)).
      EXPECT_FALSE(r.writer_cas_won);
      EXPECT_EQ(r.writer_observed, MakeFreeForWrap(1));
      EXPECT_EQ(reader.stats().retries, 0u);
      EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
    }
    EXPECT_EQ(consumer.begins, 0u);
  }
  EXPECT_EQ(outcomes, (std::set<Winner>{Winner::kWriter, Winner::kReader}));
}

// --- Race 2: publish versus scrape ----------------------------------------

TEST(RingReaderRaceTest, PublishVersusScrapeBothOrders) {
  std::set<Winner> outcomes;
  for (Order order : {Order::kWriterFirst, Order::kReaderFirst}) {
    SCOPED_TRACE(order == Order::kWriterFirst ? "writer first"
                                              : "reader first");
    TestRing ring(512, 4);
    FakeWriter writer(ring.view(), 8);
    writer.ReserveAndClaim();
    writer.Append("published");
    ASSERT_TRUE(writer.Publish(/*complete=*/false));  // Acquired(8, 1).
    writer.Append("suffix");                          // Not yet published.
    const StateWord acquired = writer.word();
    RingReader reader(ring.view(), 0);
    RecordingConsumer consumer;

    const RaceResult r =
        RunRace(&reader, &consumer, HookPoint::kBeforeMarkRewrite, order,
                [&](StateWord* seen) { return writer.Publish(true, seen); });
    const Winner winner = ObservedWinner(r, reader);
    EXPECT_EQ(winner, ExpectedWinner(order));
    outcomes.insert(winner);

    EXPECT_EQ(r.read_result, ReadResult::kEmitted);
    ASSERT_EQ(consumer.chunks.size(), 1u);
    if (order == Order::kWriterFirst) {
      // Writer wins: Complete(8, 2). The reader discards its copy of the
      // 1-fragment prefix and consumes the whole chunk instead.
      EXPECT_TRUE(r.writer_cas_won);
      EXPECT_EQ(consumer.aborts, 1u);
      EXPECT_EQ(consumer.chunks[0].fragments, (Frags{"published", "suffix"}));
      EXPECT_FALSE(consumer.chunks[0].desc.scraped);
      EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
      EXPECT_EQ(reader.stats().scrapes, 0u);
    } else {
      // Reader wins: RewriteRequested(8, 1); the writer relocates only the
      // unpublished suffix and acknowledges.
      EXPECT_FALSE(r.writer_cas_won);
      const StateWord requested =
          shm_ring::WithState(acquired, ChunkState::kRewriteRequested);
      EXPECT_EQ(r.writer_observed, requested);
      EXPECT_EQ(consumer.aborts, 0u);
      EXPECT_EQ(consumer.chunks[0].fragments, Frags{"published"});
      EXPECT_TRUE(consumer.chunks[0].desc.scraped);
      ASSERT_TRUE(writer.Acknowledge());
      EXPECT_EQ(ring.word(0), MakeAcknowledged());
      writer.ReserveAndClaim();
      writer.Append("suffix");
      ASSERT_TRUE(writer.Publish(true));
      EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);
      ASSERT_EQ(consumer.chunks.size(), 2u);
      EXPECT_EQ(consumer.chunks[1].fragments, Frags{"suffix"});
    }
  }
  EXPECT_EQ(outcomes, (std::set<Winner>{Winner::kWriter, Winner::kReader}));
}

// --- Race 3: reuse versus consume ------------------------------------------

TEST(RingReaderRaceTest, ReuseVersusConsumeBothOrders) {
  std::set<Winner> outcomes;
  for (Order order : {Order::kWriterFirst, Order::kReaderFirst}) {
    SCOPED_TRACE(order == Order::kWriterFirst ? "writer first"
                                              : "reader first");
    TestRing ring(512, 4);
    FakeWriter writer(ring.view(), 3);
    writer.ReserveAndClaim();
    writer.Append("first");
    ASSERT_TRUE(writer.Publish(true));  // Complete(3, 1), cached by writer.
    RingReader reader(ring.view(), 0);
    RecordingConsumer consumer;

    const RaceResult r =
        RunRace(&reader, &consumer, HookPoint::kBeforeReclaimComplete, order,
                [&](StateWord* seen) { return writer.Reuse(seen); });
    const Winner winner = ObservedWinner(r, reader);
    EXPECT_EQ(winner, ExpectedWinner(order));
    outcomes.insert(winner);

    EXPECT_EQ(r.read_result, ReadResult::kEmitted);
    ASSERT_EQ(consumer.chunks.size(), 1u);
    EXPECT_EQ(consumer.chunks[0].fragments, Frags{"first"});
    if (order == Order::kWriterFirst) {
      // Writer wins: Acquired(3, 1). The reader aborts its copy and follows
      // the scrape path on the returned word.
      EXPECT_TRUE(r.writer_cas_won);
      EXPECT_EQ(consumer.aborts, 1u);
      EXPECT_TRUE(consumer.chunks[0].desc.scraped);
      EXPECT_EQ(reader.stats().scrapes, 1u);
      EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kRewriteRequested, 0,
                                           shm_ring::kNoChunkFlags, 1, 3));
      // The writer's next publication sees the rewrite request.
      writer.Append("second");
      StateWord seen = 0;
      EXPECT_FALSE(writer.Publish(true, &seen));
      EXPECT_EQ(seen, MakeDataWord(ChunkState::kRewriteRequested, 0,
                                   shm_ring::kNoChunkFlags, 1, 3));
    } else {
      // Reader wins: FreeForWrap(next_wrap(0)); the writer drops its handle.
      EXPECT_FALSE(r.writer_cas_won);
      EXPECT_EQ(r.writer_observed, MakeFreeForWrap(1));
      EXPECT_EQ(consumer.aborts, 0u);
      EXPECT_FALSE(consumer.chunks[0].desc.scraped);
      EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
    }
  }
  EXPECT_EQ(outcomes, (std::set<Winner>{Winner::kWriter, Winner::kReader}));
}

// --- Section 2.1, replayed step by step --------------------------------------

TEST(RingReaderRaceTest, Section21DelayedWriterCannotPublishBehindReader) {
  TestRing ring(256, 4);
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  FakeWriter writer_a(ring.view(), 0xa);
  FakeWriter writer_b(ring.view(), 0xb);
  FakeWriter writer_c(ring.view(), 0xc);

  // writer_a owns chunk 0 (position 0) with one published fragment and an
  // open one; positions 1..3 are reserved and never claimed.
  ASSERT_EQ(writer_a.ReserveAndClaim(), 0u);
  writer_a.Append("a0");
  ASSERT_TRUE(writer_a.Publish(/*complete=*/false));
  writer_a.Append("a1-open");
  for (int i = 0; i < 3; ++i) {
    uint32_t pos;
    ASSERT_TRUE(writer_c.Reserve(&pos));
  }
  // The reader takes a's committed prefix and moves to position 4.
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  const StateWord r_a = MakeDataWord(ChunkState::kRewriteRequested, 0,
                                     shm_ring::kNoChunkFlags, 1, 0xa);
  EXPECT_EQ(ring.word(0), r_a);  // | R(a) | F | F | F |
  for (uint32_t i = 1; i < 4; ++i)
    EXPECT_EQ(ring.word(i), MakeFreeForWrap(1));
  EXPECT_EQ(ring.read_pos(), 4u);
  EXPECT_EQ(ring.write_pos(), 4u);

  // writer_b reserves position 4 (chunk 0) and is descheduled before claim.
  uint32_t pos_b;
  ASSERT_TRUE(writer_b.Reserve(&pos_b));
  ASSERT_EQ(pos_b, 4u);
  EXPECT_EQ(ring.write_pos(), 5u);

  // The reader resolves position 4: only writer_a can leave R(a): a hole.
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(0), r_a);
  EXPECT_EQ(ring.read_pos(), 5u);

  // writer_a wakes, copies its suffix, acknowledges (K), relocates.
  StateWord seen = 0;
  EXPECT_FALSE(writer_a.Publish(true, &seen));
  EXPECT_EQ(seen, r_a);
  ASSERT_TRUE(writer_a.Acknowledge());
  EXPECT_EQ(ring.word(0), MakeAcknowledged());
  ASSERT_EQ(writer_a.ReserveAndClaim(), 5u);
  writer_a.Append("a1");
  ASSERT_TRUE(writer_a.Publish(true));

  // Traffic takes the cursors around: positions 6 and 7 carry data;
  // position 8 maps to chunk 0, whose claim fails (K), so it is a hole.
  for (uint32_t expect_pos = 6; expect_pos <= 7; ++expect_pos) {
    ASSERT_EQ(writer_c.ReserveAndClaim(), expect_pos);
    writer_c.Append("c" + std::to_string(expect_pos));
    ASSERT_TRUE(writer_c.Publish(true));
  }
  uint32_t pos8;
  ASSERT_TRUE(writer_c.Reserve(&pos8));
  ASSERT_EQ(pos8, 8u);
  EXPECT_FALSE(writer_c.Claim(pos8, shm_ring::kNoChunkFlags, &seen));
  EXPECT_EQ(seen, MakeAcknowledged());
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);  // 5, 6, 7
  // Position 8: the reader turns K into FreeForWrap(wrap_count(12)) = 3.
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(3));
  EXPECT_EQ(ring.read_pos(), 9u);

  // writer_b finally runs the claim it prepared for position 4. With an
  // all-zero Free it would succeed here and publish behind the reader; with
  // the wrap count it expects FreeForWrap(1) and fails.
  EXPECT_FALSE(writer_b.Claim(pos_b, shm_ring::kNoChunkFlags, &seen));
  EXPECT_EQ(seen, MakeFreeForWrap(3));
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(3));

  std::vector<Frags> emitted;
  for (const auto& c : consumer.chunks)
    emitted.push_back(c.fragments);
  EXPECT_EQ(emitted, (std::vector<Frags>{{"a0"}, {"a1"}, {"c6"}, {"c7"}}));
}

// --- A writer suspended between reserve and claim ---------------------------

TEST(RingReaderRaceTest, WriterSuspendedBetweenReserveAndClaim) {
  // A writer thread reserves position 0 and stops; meanwhile the reader and
  // another writer take the ring around twice, so chunk 0 is FreeForWrap
  // again when the suspended writer claims, but for a later traversal.
  TestRing ring(256, 2);
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  Sequencer seq;
  constexpr int kReserved = 1;
  constexpr int kResume = 2;
  constexpr int kDone = 3;
  bool claimed = true;
  StateWord seen = 0;
  std::thread suspended([&] {
    FakeWriter w(ring.view(), 1);
    uint32_t pos;
    ASSERT_TRUE(w.Reserve(&pos));
    seq.Signal(kReserved);
    seq.WaitFor(kResume);
    claimed = w.Claim(pos, shm_ring::kNoChunkFlags, &seen);
    seq.Signal(kDone);
  });
  seq.WaitFor(kReserved);
  FakeWriter other(ring.view(), 2);
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);  // Position 0.
  for (uint32_t pos = 1; pos <= 4; ++pos) {
    ASSERT_EQ(other.ReserveAndClaim(), pos);
    other.Append(std::to_string(pos));
    ASSERT_TRUE(other.Publish(true));
    EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);
  }
  // Chunk 0 was last resolved at position 4: FreeForWrap(wrap_count(6)).
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(3));
  seq.Signal(kResume);
  seq.WaitFor(kDone);
  suspended.join();
  EXPECT_FALSE(claimed);
  EXPECT_EQ(seen, MakeFreeForWrap(3));
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(3));
  EXPECT_EQ(consumer.chunks.size(), 4u);
}

// --- A stalled writer pins one chunk; the reader keeps going ----------------

TEST(RingReaderRaceTest, StalledWriterPinsOneChunkReaderKeepsGoing) {
  constexpr uint32_t kNumChunks = 4;
  TestRing ring(256, kNumChunks);
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;

  // The stalled writer: claims position 0, publishes one fragment, then
  // stops forever inside an open fragment (its thread is parked below).
  Sequencer seq;
  std::thread stalled([&] {
    FakeWriter w(ring.view(), 0x51);
    w.ReserveAndClaim();
    w.Append("before-stall");
    ASSERT_TRUE(w.Publish(/*complete=*/false));
    seq.Signal(1);
    seq.WaitFor(2);  // Never touches the ring again.
  });
  seq.WaitFor(1);

  // Another writer produces 40 chunks; positions that map to chunk 0 burn.
  FakeWriter writer(ring.view(), 0x77);
  uint32_t delivered = 0;
  uint32_t burned = 0;
  for (uint32_t n = 0; n < 40;) {
    uint32_t pos;
    if (!writer.Reserve(&pos)) {
      // Full: drain one position (the reader never waits for the staller).
      const ReadResult r = reader.ReadOne(&consumer);
      ASSERT_TRUE(r == ReadResult::kEmitted || r == ReadResult::kSkipped);
      continue;
    }
    if (!writer.Claim(pos)) {
      EXPECT_EQ(ring.geometry().ChunkIndex(pos), 0u);
      ++burned;
      continue;
    }
    writer.Append("n" + std::to_string(n++));
    ASSERT_TRUE(writer.Publish(true));
  }
  while (reader.ReadOne(&consumer) != ReadResult::kNoData) {
  }
  seq.Signal(2);
  stalled.join();

  // Chunk 0 stays pinned by the staller's rewrite request.
  EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kRewriteRequested, 0,
                                       shm_ring::kNoChunkFlags, 1, 0x51));
  EXPECT_GT(burned, 0u);
  // Every data chunk arrived, in order; each burned position was a hole.
  ASSERT_EQ(consumer.chunks.size(), 41u);
  EXPECT_EQ(consumer.chunks[0].fragments, Frags{"before-stall"});
  for (uint32_t i = 0; i < 40; ++i) {
    EXPECT_EQ(consumer.chunks[i + 1].fragments, Frags{"n" + std::to_string(i)});
    ++delivered;
  }
  EXPECT_EQ(delivered, 40u);
  EXPECT_EQ(reader.stats().holes, burned);
  EXPECT_EQ(reader.stats().positions_resolved, 41u + burned);
}

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
