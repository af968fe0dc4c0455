/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Differential test: RingReader (the service's reader) against
// shm_ring::TestRingReader, the straight-line transcription of spec 5.3 that
// the tests below ring_drainer use as their reader. The two are written
// independently; this test ties them together so that the tests built on the
// oracle say something about the real reader.
//
// Each trial builds a random ring state (every chunk in a random state word:
// unclaimed reservations, free chunks with a stale tag, Acquired / Complete
// chunks with valid, empty or corrupt directories and unknown formats,
// RewriteRequested, Acknowledged with and without stray bits, reserved
// states; cursors anywhere in the 32-bit space, wrap included), copies it
// byte for byte into a second ring, and drains one copy with each reader.
// A random script of "writer" interferences, applied at the same hook call
// in both (right before the reader's CAS, the window of the spec 5.2 races),
// makes CASes fail and exercises the redispatch and the retry budget.
// Compared after every step: the result, read_pos, every byte of the two
// mappings (state words included), and each emitted chunk (position, writer,
// flags, BufferID, scrape, fragments); at the end, the number of holes.

#include <gtest/gtest.h>
#include <string.h>

#include <random>
#include <string>
#include <vector>

#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"
#include "src/tracing/service/ring_drainer/ring_reader.h"
#include "src/tracing/service/ring_drainer/test/recording_sink.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::ChunkState;
using shm_ring::MakeDataWord;
using shm_ring::MakeFreeForWrap;
using shm_ring::ReadChunk;
using shm_ring::RingGeometry;
using shm_ring::StateWord;
using shm_ring::TestRing;
using shm_ring::TestRingReader;
using test::RecordingConsumer;

constexpr uint32_t kRetryBudget = 2;

// A random state word for the chunk at logical position |q| of |g|, writing
// a body into |ring| where the word publishes fragments.
StateWord RandomChunk(std::mt19937* rng,
                      TestRing* ring,
                      const RingGeometry& g,
                      uint32_t q) {
  std::uniform_int_distribution<uint32_t> pick(0, 99);
  const uint32_t index = g.ChunkIndex(q);
  const uint32_t kind = pick(*rng);
  if (kind < 15)  // Reserved, not claimed yet.
    return MakeFreeForWrap(g.WrapCount(q));
  if (kind < 18)  // A tag that is not the position's: corrupt.
    return MakeFreeForWrap(g.WrapCount(q) + 1 + pick(*rng) % 3);
  if (kind < 21)  // Reserved states 5..7.
    return (5u + pick(*rng) % 3) << shm_ring::kStateShift;
  if (kind < 28) {  // Acknowledged, rarely with stray payload bits.
    return shm_ring::MakeAcknowledged() | (pick(*rng) < 20 ? 0x10u : 0u);
  }
  // Data-bearing: a body of 0..6 fragments.
  const uint32_t n = pick(*rng) % 7;
  std::vector<std::string> frags;
  for (uint32_t i = 0; i < n; ++i) {
    const size_t size = pick(*rng) % (g.chunk_size / 16);
    frags.push_back(std::string(size, static_cast<char>('a' + (q + i) % 26)));
  }
  ring->WriteBody(index, static_cast<shm_ring::BufferID>(pick(*rng) + 1),
                  frags);
  uint32_t count = n;
  const uint32_t corruption = pick(*rng);
  if (corruption < 8 && n > 0) {
    // A size entry too large for the chunk: a malformed directory.
    shm_ring::WriteSizeEntry(
        ring->chunk(index) + shm_ring::SizeEntryOffset(g.chunk_size, 0),
        g.size_entry_width(), g.size_entry_width() == 1 ? 0xff : 0xffff);
  } else if (corruption < 12) {
    count = 255;  // More fragments than the chunk can hold.
  }
  const uint32_t format = pick(*rng) < 8 ? shm_ring::kFormatPacketRouting
                                         : shm_ring::kFormatTargetBuffer;
  const shm_ring::ChunkFlags flags =
      shm_ring::ChunkFlags::FromBits(pick(*rng) % 8);
  const shm_ring::WriterID writer =
      static_cast<shm_ring::WriterID>(1 + pick(*rng) % 4);
  const uint32_t state = pick(*rng) % 3;
  const ChunkState cs = state == 0   ? ChunkState::kAcquired
                        : state == 1 ? ChunkState::kComplete
                                     : ChunkState::kRewriteRequested;
  if (cs == ChunkState::kRewriteRequested) {
    return shm_ring::WithState(
        MakeDataWord(ChunkState::kAcquired, format, flags, count, writer), cs);
  }
  return MakeDataWord(cs, format, flags, count, writer);
}

// A word a racing writer might store between the reader's snapshot and its
// CAS (spec 5.2): its claim, a publication, a reuse, an acknowledge.
StateWord RandomInterference(std::mt19937* rng,
                             const RingGeometry& g,
                             uint32_t position,
                             StateWord seen) {
  std::uniform_int_distribution<uint32_t> pick(0, 5);
  const uint32_t n = shm_ring::GetNumFragments(seen);
  const shm_ring::WriterID w = shm_ring::GetWriterId(seen);
  switch (pick(*rng)) {
    case 0:  // A writer claims the free chunk.
      return MakeDataWord(ChunkState::kAcquired, shm_ring::kFormatTargetBuffer,
                          shm_ring::kNoChunkFlags, 0, 1);
    case 1:  // The writer publishes its chunk complete.
      return shm_ring::WithState(seen, ChunkState::kComplete);
    case 2:  // It reuses a Complete chunk (Complete -> Acquired).
      return shm_ring::WithState(seen, ChunkState::kAcquired);
    case 3:  // It acknowledges a rewrite request.
      return shm_ring::MakeAcknowledged();
    case 4:  // It publishes more fragments of the same chunk.
      return MakeDataWord(ChunkState::kAcquired, shm_ring::GetFormat(seen),
                          shm_ring::GetFlags(seen), n == 0 ? 0 : n - 1, w);
    default:  // Another wrap's tag.
      return MakeFreeForWrap(g.NextWrap(position));
  }
}

// Plays the same interference script for one reader: at hook call number k
// (counted from the reader's construction), if the script has an entry for
// k, stores that word into the chunk of the position.
class Interference {
 public:
  Interference(const shm_ring::RingView& view, std::vector<int64_t> script)
      : view_(view), script_(std::move(script)) {}
  void OnHook(uint32_t position) {
    const size_t k = calls_++;
    if (k < script_.size() && script_[k] >= 0) {
      view_.chunk_state(view_.geometry().ChunkIndex(position))
          ->store(static_cast<StateWord>(script_[k]),
                  std::memory_order_relaxed);
    }
  }

 private:
  shm_ring::RingView view_;
  std::vector<int64_t> script_;
  size_t calls_ = 0;
};

// What the trials reached, to prove they cover every outcome.
struct Coverage {
  uint64_t results[5] = {};  // by shm_ring::ResolveResult
  uint64_t failed_cas = 0;
  uint64_t scrapes = 0;
};

void RunTrial(uint32_t seed, Coverage* coverage) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  static const RingGeometry kGeometries[] = {
      {256, 4}, {256, 8}, {1024, 4}, {4096, 2}, {512, 16}};
  const RingGeometry g = kGeometries[rng() % 5];
  ASSERT_TRUE(g.IsValid());
  TestRing a(g.chunk_size, g.num_chunks);
  TestRing b(g.chunk_size, g.num_chunks);

  // Cursors anywhere, often near the 2^32 wrap.
  const uint32_t read_pos =
      rng() % 2 ? static_cast<uint32_t>(rng())
                : static_cast<uint32_t>(0u - g.num_chunks + rng() % 8);
  a.SeedPositions(read_pos);
  const uint32_t outstanding = rng() % (g.num_chunks + 1);
  for (uint32_t k = 0; k < outstanding; ++k) {
    const uint32_t q = read_pos + k;
    a.set_word(g.ChunkIndex(q), RandomChunk(&rng, &a, g, q));
  }
  a.set_write_pos(read_pos + outstanding);
  const size_t size = static_cast<size_t>(g.MappingSize());
  memcpy(b.view().base(), a.view().base(), size);

  // The interference script: -1 = no interference at that hook call. The
  // words depend only on the seed, so both readers get the same ones.
  std::vector<int64_t> script;
  for (uint32_t k = 0; k < 4 * g.num_chunks; ++k) {
    const uint32_t q = read_pos + k % g.num_chunks;
    script.push_back(rng() % 3 == 0 ? static_cast<int64_t>(RandomInterference(
                                          &rng, g, q, b.word(g.ChunkIndex(q))))
                                    : -1);
  }

  // The oracle allows |retry_budget| dispatches, RingReader |retry_budget|
  // failed CASes plus the first: the same number of CAS attempts.
  TestRingReader oracle(a.view(), kRetryBudget + 1);
  Interference oracle_writer(a.view(), script);
  oracle.set_before_cas_hook(
      [&](uint32_t position, StateWord) { oracle_writer.OnHook(position); });

  RingReader reader(b.view(), read_pos, kRetryBudget);
  Interference reader_writer(b.view(), script);
  reader.SetTestHookForTesting(
      [&](RingReader::HookPoint point, uint32_t position, uint32_t) {
        if (point != RingReader::HookPoint::kAfterResolve)
          reader_writer.OnHook(position);
      });
  RecordingConsumer consumer;

  std::vector<ReadChunk> oracle_chunks;
  // Bounded: each step resolves a position or ends the trial, except
  // RetryLater, of which the script can cause only a few.
  for (uint32_t step = 0; step < 4 * g.num_chunks; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    ReadChunk chunk;
    const shm_ring::ResolveResult want = oracle.ResolveOne(&chunk);
    const ReadResult got = reader.ReadOne(&consumer);
    ASSERT_STREQ(ReadResultToString(got), ResolveResultToString(want));
    ASSERT_EQ(reader.read_pos(), oracle.read_pos());
    ASSERT_EQ(memcmp(a.view().base(), b.view().base(), size), 0)
        << "the readers left different ring words";
    coverage->results[static_cast<size_t>(want)]++;
    if (want == shm_ring::ResolveResult::kEmitted)
      oracle_chunks.push_back(chunk);
    ASSERT_EQ(consumer.chunks.size(), oracle_chunks.size());
    if (want == shm_ring::ResolveResult::kNoData ||
        want == shm_ring::ResolveResult::kProtocolError) {
      break;
    }
  }

  for (size_t i = 0; i < oracle_chunks.size(); ++i) {
    const ReadChunk& want = oracle_chunks[i];
    const test::ConsumedChunk& got = consumer.chunks[i];
    EXPECT_EQ(got.desc.position, want.position);
    EXPECT_EQ(got.desc.writer_id, want.writer_id);
    EXPECT_EQ(got.desc.abi_flags, want.flags);
    EXPECT_EQ(got.desc.target_buffer, want.buffer_id);
    EXPECT_EQ(got.desc.scraped, want.scraped);
    EXPECT_EQ(got.fragments, want.fragments);
  }
  EXPECT_EQ(reader.stats().holes, oracle.holes());
  EXPECT_EQ(reader.stats().chunks_emitted, oracle.emitted());
  coverage->failed_cas += reader.stats().retries;
  coverage->scrapes += reader.stats().scrapes;
}

TEST(RingReaderOracleTest, RandomRingStatesAndRacesMatchTheOracle) {
  Coverage coverage;
  for (uint32_t seed = 1; seed <= 3000; ++seed) {
    RunTrial(seed, &coverage);
    if (::testing::Test::HasFatalFailure())
      return;
  }
  // The comparison proves something only if the trials reached every
  // outcome of both readers, failed CASes (redispatch) and scrapes included.
  using R = shm_ring::ResolveResult;
  for (R r : {R::kNoData, R::kSkipped, R::kEmitted, R::kRetryLater,
              R::kProtocolError}) {
    EXPECT_GT(coverage.results[static_cast<size_t>(r)], 0u)
        << ResolveResultToString(r);
  }
  EXPECT_GT(coverage.failed_cas, 0u);
  EXPECT_GT(coverage.scrapes, 0u);
}

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
