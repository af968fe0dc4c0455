/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Single-threaded behaviour of RingReader: one test per dispatch branch of
// spec 5.3, directory validation (6.4), scraping (7) and cursor rollover
// (4.1/4.2). Races are in ring_reader_race_unittest.cc, hostile producers in
// ring_reader_adversarial_unittest.cc.

#include "src/tracing/service/ring_drainer/ring_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/test/recording_sink.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::ChunkState;
using shm_ring::MakeAcknowledged;
using shm_ring::MakeDataWord;
using shm_ring::MakeFreeForWrap;
using shm_ring::TestRing;
using test::FakeWriter;
using test::RecordingConsumer;

using Frags = std::vector<std::string>;

TEST(RingReaderTest, EmptyRingHasNoData) {
  TestRing ring(256, 4);
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kNoData);
  EXPECT_EQ(reader.read_pos(), 0u);
  EXPECT_EQ(reader.stats().positions_resolved, 0u);
  EXPECT_EQ(consumer.begins, 0u);
}

TEST(RingReaderTest, CompleteChunkIsEmittedAndFreedForNextWrap) {
  TestRing ring(512, 4);
  FakeWriter writer(ring.view(), /*writer_id=*/7, /*target=*/0x0102);
  const uint32_t pos = writer.ReserveAndClaim(shm_ring::kFlagContinuesFromPrev);
  writer.Append("hello");
  writer.Append("");
  writer.Append(std::string(300, 'x'));
  ASSERT_TRUE(writer.Publish(/*complete=*/true));

  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);
  ASSERT_EQ(consumer.chunks.size(), 1u);
  const test::ConsumedChunk& c = consumer.chunks[0];
  EXPECT_EQ(c.desc.position, pos);
  EXPECT_EQ(c.desc.writer_id, 7);
  EXPECT_EQ(c.desc.target_buffer, 0x0102);
  EXPECT_EQ(c.desc.abi_flags, shm_ring::kFlagContinuesFromPrev);
  EXPECT_EQ(c.desc.payload_size, 305u);
  EXPECT_FALSE(c.desc.scraped);
  EXPECT_EQ(c.fragments, (Frags{"hello", "", std::string(300, 'x')}));

  // Position 0 of a 4-chunk ring: next_wrap(0) = wrap_count(4) = 1.
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
  EXPECT_EQ(ring.read_pos(), 1u);
  EXPECT_EQ(reader.read_pos(), 1u);
  EXPECT_EQ(reader.stats().chunks_emitted, 1u);
  EXPECT_EQ(reader.stats().fragments_emitted, 3u);
  EXPECT_EQ(reader.stats().bytes_emitted, 305u);
  EXPECT_EQ(reader.stats().holes, 0u);
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kNoData);
}

TEST(RingReaderTest, WorkedExampleOfSection61) {
  // 256-byte chunk, one-byte entries, fragments of 5, 200 and 3 bytes.
  TestRing ring(256, 2);
  FakeWriter writer(ring.view(), 1);
  writer.ReserveAndClaim();
  writer.Append("abcde");
  writer.Append(std::string(200, 'm'));
  writer.Append("xyz");
  ASSERT_TRUE(writer.Publish(true));
  EXPECT_EQ(ring.chunk(0)[255], 0x05);
  EXPECT_EQ(ring.chunk(0)[254], 0xc8);
  EXPECT_EQ(ring.chunk(0)[253], 0x03);

  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  ASSERT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);
  EXPECT_EQ(consumer.chunks[0].fragments,
            (Frags{"abcde", std::string(200, 'm'), "xyz"}));
}

TEST(RingReaderTest, UnclaimedPositionIsAHoleAndBumpsTheTag) {
  TestRing ring(256, 4);
  FakeWriter writer(ring.view(), 1);
  uint32_t pos;
  ASSERT_TRUE(writer.Reserve(&pos));  // Reserved, never claimed.

  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
  EXPECT_EQ(ring.read_pos(), 1u);
  EXPECT_EQ(reader.stats().holes, 1u);
  EXPECT_EQ(consumer.begins, 0u);

  // The late claim expected FreeForWrap(0) and fails (spec 2.2).
  shm_ring::StateWord seen = 0;
  EXPECT_FALSE(writer.Claim(pos, shm_ring::kNoChunkFlags, &seen));
  EXPECT_EQ(seen, MakeFreeForWrap(1));
}

TEST(RingReaderTest, AcquiredChunkIsScrapedKeepingTheSuffixWithTheWriter) {
  TestRing ring(1024, 2);
  FakeWriter writer(ring.view(), 9, 3);
  writer.ReserveAndClaim(shm_ring::kFlagDataLoss);
  writer.Append("one");
  writer.Append("two");
  ASSERT_TRUE(writer.Publish(/*complete=*/false));  // Acquired(9, 2).
  writer.Append("three");                           // Appended, not published.

  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);
  ASSERT_EQ(consumer.chunks.size(), 1u);
  EXPECT_EQ(consumer.chunks[0].fragments, (Frags{"one", "two"}));
  EXPECT_TRUE(consumer.chunks[0].desc.scraped);
  EXPECT_EQ(consumer.chunks[0].desc.abi_flags, shm_ring::kFlagDataLoss);

  // Only the state bits changed (spec 7 step 3).
  const shm_ring::StateWord expected = MakeDataWord(
      ChunkState::kRewriteRequested, 0, shm_ring::kFlagDataLoss, 2, 9);
  EXPECT_EQ(ring.word(0), expected);
  EXPECT_EQ(reader.stats().scrapes, 1u);

  // The writer's publication fails with exactly that word; it acknowledges.
  shm_ring::StateWord seen = 0;
  EXPECT_FALSE(writer.Publish(true, &seen));
  EXPECT_EQ(seen, expected);
  ASSERT_TRUE(writer.Acknowledge());

  // Next traversal: position 2 maps to chunk 0 and reclaims Acknowledged.
  FakeWriter other(ring.view(), 10);
  other.ReserveAndClaim();  // Position 1.
  other.Append("p1");
  ASSERT_TRUE(other.Publish(true));
  uint32_t pos2;
  ASSERT_TRUE(other.Reserve(&pos2));
  EXPECT_EQ(pos2, 2u);
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);  // Position 1.
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);  // Position 2.
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(2));  // next_wrap(2) = 4 / 2.
  // The reservation of position 2 never got the chunk.
  EXPECT_FALSE(other.Claim(pos2));
}

TEST(RingReaderTest, EmptyAcquiredChunkIsMarkedButNothingIsEmitted) {
  TestRing ring(256, 2);
  FakeWriter writer(ring.view(), 4);
  writer.ReserveAndClaim();  // Acquired(4, 0).

  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kRewriteRequested, 0,
                                       shm_ring::kNoChunkFlags, 0, 4));
  EXPECT_EQ(consumer.begins, 0u);
  EXPECT_TRUE(consumer.dropped.empty());
  EXPECT_EQ(reader.stats().scrapes, 1u);
  EXPECT_EQ(reader.stats().holes, 1u);
}

TEST(RingReaderTest, RewriteRequestedIsLeftAloneAndIsAHole) {
  TestRing ring(256, 2);
  const shm_ring::StateWord r = MakeDataWord(ChunkState::kRewriteRequested, 0,
                                             shm_ring::kNoChunkFlags, 3, 5);
  ring.set_word(0, r);
  ring.set_write_pos(1);

  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(0), r);
  EXPECT_EQ(ring.read_pos(), 1u);
}

TEST(RingReaderTest, AcknowledgedIsReclaimedForTheNextWrap) {
  TestRing ring(256, 2);
  ring.set_word(0, MakeAcknowledged());
  ring.set_write_pos(1);

  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
}

TEST(RingReaderTest, UnknownFormatStillTransitionsButDropsTheBytes) {
  TestRing ring(512, 2);
  ring.WriteBody(0, 1, {"abc"});
  ring.WriteBody(1, 1, {"def"});
  ring.set_word(
      0, MakeDataWord(ChunkState::kComplete, shm_ring::kFormatPacketRouting,
                      shm_ring::kNoChunkFlags, 1, 11));
  ring.set_word(1, MakeDataWord(ChunkState::kAcquired, 3,
                                shm_ring::kNoChunkFlags, 1, 12));
  ring.set_write_pos(2);

  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(1), MakeDataWord(ChunkState::kRewriteRequested, 3,
                                       shm_ring::kNoChunkFlags, 1, 12));
  EXPECT_EQ(consumer.begins, 0u);
  ASSERT_EQ(consumer.dropped.size(), 2u);
  EXPECT_EQ(consumer.dropped[0].writer_id, 11);
  EXPECT_EQ(consumer.dropped[0].reason, DropReason::kUnknownFormat);
  EXPECT_EQ(consumer.dropped[1].writer_id, 12);
  EXPECT_EQ(reader.stats().unknown_formats, 2u);
  EXPECT_EQ(reader.stats().holes, 2u);
}

TEST(RingReaderTest, EmptyScrapeOfAnUnknownFormatDropsNothing) {
  // Acquired(w, 0) in an unknown format: the transition still happens and the
  // format is counted, but nothing was published, so nothing is reported as
  // dropped (a drop would open a false gap in the writer's ChunkIDs).
  TestRing ring(512, 2);
  ring.set_word(
      0, MakeDataWord(ChunkState::kAcquired, shm_ring::kFormatPacketRouting,
                      shm_ring::kNoChunkFlags, 0, 13));
  ring.set_write_pos(1);
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kRewriteRequested,
                                       shm_ring::kFormatPacketRouting,
                                       shm_ring::kNoChunkFlags, 0, 13));
  EXPECT_EQ(reader.stats().unknown_formats, 1u);
  EXPECT_EQ(reader.stats().scrapes, 1u);
  EXPECT_TRUE(consumer.dropped.empty());
  EXPECT_EQ(consumer.begins, 0u);
}

struct DirectoryCase {
  const char* name;
  uint32_t chunk_size;
  uint32_t num_fragments;
  std::vector<uint32_t> sizes;  // Size entries to plant, in payload order.
  bool valid;
};

TEST(RingReaderTest, DirectoryValidationPerSection64) {
  const std::vector<DirectoryCase> cases = {
      // capacity = 250, 1-byte entries.
      {"exactly full 256", 256, 2, {124, 124}, true},
      {"one byte too many 256", 256, 2, {125, 124}, false},
      {"250 zero-size entries", 256, 250, std::vector<uint32_t>(250, 0), true},
      {"directory beyond capacity", 256, 251, std::vector<uint32_t>(251, 0),
       false},
      // capacity = 506, 2-byte entries.
      {"exactly full 512", 512, 1, {504}, true},
      {"max entry value", 512, 1, {0xffff}, false},
      {"sum overflows capacity late", 512, 3, {100, 100, 303}, false},
      {"255 max entries 32K", 32768, 255, std::vector<uint32_t>(255, 0xffff),
       false},
      {"255 entries fit 32K", 32768, 255, std::vector<uint32_t>(255, 126),
       true},
  };
  for (const DirectoryCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    TestRing ring(tc.chunk_size, 2);
    const uint32_t w = ring.geometry().size_entry_width();
    uint8_t* c = ring.chunk(0);
    for (uint32_t i = 0; i < tc.num_fragments; ++i) {
      shm_ring::WriteSizeEntry(c + tc.chunk_size - (i + 1) * w, w, tc.sizes[i]);
    }
    ring.set_word(
        0, MakeDataWord(ChunkState::kComplete, 0, shm_ring::kNoChunkFlags,
                        tc.num_fragments, 2));
    ring.set_write_pos(1);
    RingReader reader(ring.view(), 0);
    RecordingConsumer consumer;
    const ReadResult r = reader.ReadOne(&consumer);
    // The transition happens either way.
    EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
    if (tc.valid) {
      EXPECT_EQ(r, ReadResult::kEmitted);
      ASSERT_EQ(consumer.chunks.size(), 1u);
      ASSERT_EQ(consumer.chunks[0].fragments.size(), tc.num_fragments);
      for (uint32_t i = 0; i < tc.num_fragments; ++i)
        EXPECT_EQ(consumer.chunks[0].fragments[i].size(), tc.sizes[i]);
      EXPECT_EQ(reader.stats().malformed_directories, 0u);
    } else {
      EXPECT_EQ(r, ReadResult::kSkipped);
      EXPECT_EQ(consumer.begins, 0u);
      EXPECT_EQ(reader.stats().malformed_directories, 1u);
      ASSERT_EQ(consumer.dropped.size(), 1u);
      EXPECT_EQ(consumer.dropped[0].reason, DropReason::kMalformedDirectory);
    }
  }
}

TEST(RingReaderTest, CompleteWithZeroFragmentsIsMalformed) {
  TestRing ring(256, 2);
  ring.set_word(
      0, MakeDataWord(ChunkState::kComplete, 0, shm_ring::kNoChunkFlags, 0, 3));
  ring.set_write_pos(1);
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
  EXPECT_EQ(reader.stats().malformed_directories, 1u);
}

TEST(RingReaderTest, MalformedAcquiredDirectoryStillBlocksTheWriter) {
  // Spec 5.3: mark Acquired even if the directory is malformed.
  TestRing ring(256, 2);
  ring.chunk(0)[255] = 251;  // One entry larger than the capacity (250).
  const shm_ring::StateWord a =
      MakeDataWord(ChunkState::kAcquired, 0, shm_ring::kNoChunkFlags, 1, 6);
  ring.set_word(0, a);
  ring.set_write_pos(1);
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(0),
            shm_ring::WithState(a, ChunkState::kRewriteRequested));
  EXPECT_EQ(reader.stats().malformed_directories, 1u);
  EXPECT_EQ(reader.stats().scrapes, 1u);
}

TEST(RingReaderTest, RejectedChunkIsResolvedAndCounted) {
  TestRing ring(256, 2);
  FakeWriter writer(ring.view(), 1);
  writer.ReserveAndClaim();
  writer.Append("payload");
  ASSERT_TRUE(writer.Publish(true));
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  consumer.reject_all = true;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
  EXPECT_EQ(consumer.begins, 1u);
  EXPECT_EQ(consumer.commits, 1u);
  // Counted once, by the consumer that refused it; to the reader it is a
  // resolved position that emitted nothing.
  EXPECT_EQ(consumer.rejects, 1u);
  EXPECT_TRUE(consumer.chunks.empty());
  EXPECT_EQ(reader.stats().positions_resolved, 1u);
  EXPECT_EQ(reader.stats().holes, 1u);
  EXPECT_EQ(reader.stats().chunks_emitted, 0u);
}

TEST(RingReaderTest, ReusedCompleteChunkKeepsGrowing) {
  // A writer reuses its Complete chunk (spec 5.4) between two reader visits
  // of other positions; the reader sees the final Complete word once.
  TestRing ring(1024, 2);
  FakeWriter writer(ring.view(), 2);
  writer.ReserveAndClaim();
  writer.Append("a");
  ASSERT_TRUE(writer.Publish(true));
  ASSERT_TRUE(writer.Reuse());
  writer.Append("b");
  ASSERT_TRUE(writer.Publish(true));
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);
  EXPECT_EQ(consumer.chunks[0].fragments, (Frags{"a", "b"}));
  // The writer's next reuse loses against the reader's reclaim.
  shm_ring::StateWord seen = 0;
  EXPECT_FALSE(writer.Reuse(&seen));
  EXPECT_EQ(seen, MakeFreeForWrap(1));
}

TEST(RingReaderTest, RetryBudgetExhaustionLeavesReadPosUnchanged) {
  TestRing ring(256, 2);
  FakeWriter writer(ring.view(), 1);
  writer.ReserveAndClaim();
  writer.Append("x");
  ASSERT_TRUE(writer.Publish(/*complete=*/false));  // Acquired(1, 1).

  // A "writer" that publishes one more fragment before every reader CAS.
  RingReader reader(ring.view(), 0, /*retry_budget=*/2);
  int interleaved = 0;
  reader.SetTestHookForTesting(
      [&](RingReader::HookPoint point, uint32_t, uint32_t) {
        if (point != RingReader::HookPoint::kBeforeMarkRewrite ||
            interleaved >= 3) {
          return;
        }
        ++interleaved;
        writer.Append("y");
        ASSERT_TRUE(writer.Publish(/*complete=*/false));
      });
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kRetryLater);
  EXPECT_EQ(interleaved, 3);  // One initial attempt plus two retries.
  EXPECT_EQ(reader.read_pos(), 0u);
  EXPECT_EQ(ring.read_pos(), 0u);
  // The reader wrote nothing: the word is the writer's last publication.
  EXPECT_EQ(ring.word(0), writer.word());
  EXPECT_EQ(shm_ring::GetState(ring.word(0)), ChunkState::kAcquired);
  EXPECT_EQ(consumer.aborts, 3u);
  EXPECT_TRUE(consumer.chunks.empty());
  EXPECT_EQ(reader.stats().retries, 3u);
  EXPECT_EQ(reader.stats().retry_later, 1u);

  // Next call: no more interference, the 4-fragment prefix is taken once.
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);
  ASSERT_EQ(consumer.chunks.size(), 1u);
  EXPECT_EQ(consumer.chunks[0].fragments, (Frags{"x", "y", "y", "y"}));
}

TEST(RingReaderTest, CursorRolloverAcrossZero) {
  // 16 chunks seeded at 0xffff'fff0: the 16th position is 0 again and
  // next_wrap is computed from the position (spec 4.2), not incremented.
  constexpr uint32_t kStart = 0xffff'fff0u;
  TestRing ring(256, 16);
  ring.SeedPositions(kStart);
  RingReader reader(ring.view(), kStart);
  FakeWriter writer(ring.view(), 3);
  RecordingConsumer consumer;
  for (uint32_t i = 0; i < 40; ++i) {
    const uint32_t pos = writer.ReserveAndClaim();
    EXPECT_EQ(pos, kStart + i);
    writer.Append(std::to_string(i));
    ASSERT_TRUE(writer.Publish(true));
    ASSERT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted) << i;
    EXPECT_EQ(ring.word(ring.geometry().ChunkIndex(pos)),
              MakeFreeForWrap(ring.geometry().NextWrap(pos)));
  }
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(ring.geometry().NextWrap(16)));
  EXPECT_EQ(reader.read_pos(), kStart + 40);  // == 24 after the rollover.
  EXPECT_EQ(ring.read_pos(), 24u);
  ASSERT_EQ(consumer.chunks.size(), 40u);
  for (uint32_t i = 0; i < 40; ++i)
    EXPECT_EQ(consumer.chunks[i].fragments, Frags{std::to_string(i)});
  // Position 0xffff'fff0 resolved with next_wrap 0 (not tag + 1).
  EXPECT_EQ(ring.geometry().NextWrap(kStart), 0u);
}

TEST(RingReaderTest, SharedReadPosIsNeverTrusted) {
  TestRing ring(256, 4);
  FakeWriter writer(ring.view(), 1);
  writer.ReserveAndClaim();
  writer.Append("a");
  ASSERT_TRUE(writer.Publish(true));
  // The producer forges read_pos; the reader keeps its own.
  ring.view().read_pos()->store(1234, std::memory_order_relaxed);
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);
  EXPECT_EQ(reader.read_pos(), 1u);
  EXPECT_EQ(ring.read_pos(), 1u);  // Overwritten with the true value.
}

TEST(RingReaderTest, HeadPolicyDefersUnpublishedPositionsWhileThereIsRoom) {
  TestRing ring(256, 4);
  FakeWriter writer(ring.view(), 1);
  uint32_t pos;
  ASSERT_TRUE(writer.Reserve(&pos));  // Reserved, not yet claimed.
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  const auto kDefer = HeadPolicy::kDeferUnpublished;
  EXPECT_EQ(reader.ReadOne(&consumer, kDefer), ReadResult::kDeferred);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(0));  // Untouched.
  EXPECT_EQ(reader.read_pos(), 0u);
  // The writer's claim therefore still succeeds.
  ASSERT_TRUE(writer.Claim(pos));
  writer.Append("kept whole");
  EXPECT_EQ(reader.ReadOne(&consumer, kDefer), ReadResult::kDeferred);
  EXPECT_EQ(reader.stats().deferrals, 2u);
  ASSERT_TRUE(writer.Publish(true));
  EXPECT_EQ(reader.ReadOne(&consumer, kDefer), ReadResult::kEmitted);
  EXPECT_EQ(consumer.chunks[0].fragments, Frags{"kept whole"});
  EXPECT_EQ(reader.stats().scrapes, 0u);

  // Under pressure (more than half the ring reserved) it resolves.
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(writer.Reserve(&pos));
  EXPECT_EQ(reader.ReadOne(&consumer, kDefer), ReadResult::kSkipped);
  // Back to two reserved (half): deferred again.
  EXPECT_EQ(reader.ReadOne(&consumer, kDefer), ReadResult::kDeferred);
  // The default policy always resolves (spec 5.3).
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kSkipped);
}

TEST(RingReaderTest, HeadPolicyNeverDefersOtherStatesOrErrors) {
  TestRing ring(256, 4);
  ring.set_word(0, MakeDataWord(ChunkState::kRewriteRequested, 0,
                                shm_ring::kNoChunkFlags, 0, 1));
  ring.set_word(1, MakeAcknowledged());
  ring.set_word(2, MakeFreeForWrap(7));  // Wrong tag.
  ring.set_write_pos(3);
  RingReader reader(ring.view(), 0);
  RecordingConsumer consumer;
  const auto kDefer = HeadPolicy::kDeferUnpublished;
  EXPECT_EQ(reader.ReadOne(&consumer, kDefer), ReadResult::kSkipped);
  EXPECT_EQ(reader.ReadOne(&consumer, kDefer), ReadResult::kSkipped);
  EXPECT_EQ(reader.ReadOne(&consumer, kDefer), ReadResult::kProtocolError);
  EXPECT_EQ(reader.protocol_error().kind, ProtocolErrorKind::kFreeTagMismatch);
}

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
