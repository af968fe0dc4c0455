/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/shm_ring/ring_writer.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "src/tracing/core/shm_ring/ring_reader_ops.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"

namespace ringtrace {
namespace shm_ring {
namespace {

constexpr WriterID kWid = 7;
constexpr BufferID kBid = 0x1234;

RingWriter::Options MakeOptions(RingWriterDelegate* delegate = nullptr) {
  RingWriter::Options o;
  o.writer_id = kWid;
  o.target_buffer = kBid;
  o.delegate = delegate;
  return o;
}

// Spec 6.2 step 5: EndPacket() publishes. The chunk stays cached for reuse,
// so the delegate hears of it at the next Flush() (one signal per chunk).
TEST(RingWriterTest, PublishesOnEndPacketAndReaderTakesIt) {
  TestRing ring(256, 4);
  RecordingDelegate delegate;
  RingWriter w(ring.view(), MakeOptions(&delegate));
  ASSERT_TRUE(WritePacket(&w, "hello"));
  EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kComplete, 0,
                                       shm_ring::kNoChunkFlags, 1, kWid));
  EXPECT_TRUE(delegate.published.empty());
  EXPECT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kComplete, 0,
                                       shm_ring::kNoChunkFlags, 1, kWid));
  EXPECT_EQ(delegate.published, std::vector<uint32_t>{0});
  EXPECT_EQ(delegate.flushed, std::vector<uint32_t>{0}) << "as a flush";
  EXPECT_TRUE(w.Flush(nullptr));  // nothing new: no second signal
  EXPECT_EQ(delegate.published, std::vector<uint32_t>{0});

  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].writer_id, kWid);
  EXPECT_EQ(chunks[0].buffer_id, kBid);
  EXPECT_EQ(chunks[0].flags, kNoChunkFlags);
  EXPECT_EQ(chunks[0].fragments, std::vector<std::string>{"hello"});
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
  EXPECT_EQ(w.stats().chunks_claimed, 1u);
  EXPECT_EQ(w.stats().publications, 1u);
}

// Spec 6.1: fragments of 5, 200 and 3 bytes in a 256-byte chunk, byte-exact.
TEST(RingWriterTest, Spec61WorkedExampleByteLayout) {
  TestRing ring(256, 2);
  RingWriter w(ring.view(), MakeOptions());
  const std::string a = Pattern(5, 'a'), b = Pattern(200, 'b'),
                    c = Pattern(3, 'c');
  ASSERT_TRUE(WritePacket(&w, a));
  ASSERT_TRUE(WritePacket(&w, b));
  ASSERT_TRUE(WritePacket(&w, c));
  ASSERT_TRUE(w.Flush(nullptr));
  const uint8_t* chunk = ring.chunk(0);
  EXPECT_EQ(chunk[4], 0x34);  // BufferID little-endian at bytes 4-5
  EXPECT_EQ(chunk[5], 0x12);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(chunk + 6), 5), a);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(chunk + 11), 200), b);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(chunk + 211), 3), c);
  EXPECT_EQ(chunk[255], 0x05);
  EXPECT_EQ(chunk[254], 0xc8);
  EXPECT_EQ(chunk[253], 0x03);
  // The 39 free bytes [214, 253) were never written.
  for (int i = 214; i < 253; i++)
    EXPECT_EQ(chunk[i], 0) << i;
  EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kComplete, 0,
                                       shm_ring::kNoChunkFlags, 3, kWid));
}

TEST(RingWriterTest, TwoByteSizeEntriesLittleEndian) {
  TestRing ring(1024, 2);
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, Pattern(300, 'x')));
  ASSERT_TRUE(WritePacket(&w, Pattern(2, 'y')));
  ASSERT_TRUE(w.Flush(nullptr));
  const uint8_t* chunk = ring.chunk(0);
  EXPECT_EQ(chunk[1022], 0x2c);  // 300 = 0x012c, fragment 0 at [1022, 1024)
  EXPECT_EQ(chunk[1023], 0x01);
  EXPECT_EQ(chunk[1020], 0x02);
  EXPECT_EQ(chunk[1021], 0x00);
}

TEST(RingWriterTest, ReusesCachedCompleteChunk) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, "one"));
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  // Complete(w,1) -> Acquired(w,1): same payload bits, only the state.
  EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kAcquired, 0,
                                       shm_ring::kNoChunkFlags, 1, kWid));
  memcpy(span.wptr, "two", 3);
  w.EndPacket(span.wptr + 3);
  EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kComplete, 0,
                                       shm_ring::kNoChunkFlags, 2, kWid));
  EXPECT_EQ(w.stats().chunks_reused, 1u);
  EXPECT_EQ(w.stats().chunks_claimed, 1u);
  EXPECT_EQ(ring.write_pos(), 1u);
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  reader.DrainAll(&chunks);
  EXPECT_EQ(Reassemble(chunks, kWid), (std::vector<std::string>{"one", "two"}));
}

// Spec 5.2 "reuse versus consume", reader wins: the reuse CAS fails and the
// writer drops its handle and claims a new position.
TEST(RingWriterTest, ReuseLosesToReaderConsume) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, "one"));
  ASSERT_TRUE(w.Flush(nullptr));
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  reader.DrainAll(&chunks);
  ASSERT_EQ(ring.word(0), MakeFreeForWrap(1));
  ASSERT_TRUE(WritePacket(&w, "two"));
  EXPECT_EQ(w.stats().chunks_reused, 0u);
  EXPECT_EQ(w.stats().chunks_claimed, 2u);
  EXPECT_EQ(w.held_position(), 1u);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));  // never touched again
  ASSERT_TRUE(w.Flush(nullptr));
  reader.DrainAll(&chunks);
  EXPECT_EQ(Reassemble(chunks, kWid), (std::vector<std::string>{"one", "two"}));
}

// Spec 5.2 "reuse versus consume", writer wins: the reader's reclaim CAS
// fails, it redispatches on Acquired(w,n) and scrapes the published prefix.
TEST(RingWriterTest, ReuseWinsAgainstReaderConsume) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, "one"));
  ASSERT_TRUE(w.Flush(nullptr));
  TestRingReader reader(ring.view());
  RingWriter::Span span;
  bool reused = false;
  reader.set_before_cas_hook([&](uint32_t, StateWord seen) {
    if (GetState(seen) == ChunkState::kComplete && !reused) {
      reused = true;
      ASSERT_TRUE(w.BeginPacket(&span));  // reuse CAS wins
    }
  });
  ReadChunk chunk;
  ASSERT_EQ(reader.ResolveOne(&chunk), ResolveResult::kEmitted);
  EXPECT_TRUE(reused);
  EXPECT_TRUE(chunk.scraped);
  EXPECT_EQ(chunk.fragments, std::vector<std::string>{"one"});
  EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kRewriteRequested, 0,
                                       shm_ring::kNoChunkFlags, 1, kWid));
  EXPECT_EQ(w.stats().chunks_reused, 1u);
  // The writer finishes its packet and relocates it when it publishes.
  memcpy(span.wptr, "two", 3);
  span.wptr += 3;
  w.EndPacket(span.wptr);
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(ring.word(0), MakeAcknowledged());
  EXPECT_EQ(w.stats().relocations, 1u);
  std::vector<ReadChunk> chunks;
  reader.DrainAll(&chunks);
  EXPECT_EQ(Reassemble(chunks, kWid), std::vector<std::string>{"two"});
}

TEST(RingWriterTest, ReuseRefusedAfterContinuesOnNext) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakeOptions());
  const std::string big = Pattern(400, 'p');
  ASSERT_TRUE(WritePacket(&w, big));
  // Chunk 0 was published with continues-on-next and is never reused.
  const StateWord c0 = ring.word(0);
  EXPECT_EQ(GetState(c0), ChunkState::kComplete);
  EXPECT_EQ(GetFlags(c0), kFlagContinuesOnNext);
  ASSERT_TRUE(w.Flush(nullptr));
  ASSERT_TRUE(WritePacket(&w, "after"));
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(ring.word(0), c0);
  EXPECT_EQ(w.stats().chunks_reused, 1u);  // chunk 1, not chunk 0
  EXPECT_EQ(w.held_position(), 1u);
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  reader.DrainAll(&chunks);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[1].flags, kFlagContinuesFromPrev);
  EXPECT_EQ(Reassemble(chunks, kWid), (std::vector<std::string>{big, "after"}));
}

TEST(RingWriterTest, ReuseRefusedAt255Fragments) {
  TestRing ring(1024, 4);  // the directory could take more: the cap binds
  RingWriter w(ring.view(), MakeOptions());
  for (int i = 0; i < 254; i++)
    ASSERT_TRUE(WritePacket(&w, std::string(1, static_cast<char>(i))));
  EXPECT_EQ(w.held_position(), 0u);
  EXPECT_TRUE(w.holds_chunk());  // cached: it can take one more
  ASSERT_TRUE(WritePacket(&w, "z"));
  EXPECT_FALSE(w.holds_chunk());  // retired at the cap
  EXPECT_EQ(GetNumFragments(ring.word(0)), 255u);
  ASSERT_TRUE(WritePacket(&w, "x"));
  EXPECT_EQ(w.held_position(), 1u);
  EXPECT_EQ(w.stats().chunks_reused, 254u);  // one per packet after the first
  EXPECT_EQ(GetState(ring.word(0)), ChunkState::kComplete);
}

TEST(RingWriterTest, RetiresChunkAt255FragmentsWithoutFlush) {
  TestRing ring(1024, 4);
  RecordingDelegate delegate;
  RingWriter w(ring.view(), MakeOptions(&delegate));
  for (int i = 0; i < 256; i++)
    ASSERT_TRUE(WritePacket(&w, "y"));
  EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kComplete, 0,
                                       shm_ring::kNoChunkFlags, 255, kWid));
  EXPECT_EQ(w.held_position(), 1u);
  // A retirement, not a flush.
  EXPECT_EQ(delegate.published, std::vector<uint32_t>{0});
  EXPECT_TRUE(delegate.flushed.empty());
}

TEST(RingWriterTest, ReuseRefusedWhenDirectoryCannotTakeAnEntry) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  // 249 payload bytes: payload_cursor 255, dir_cursor 255: no room for an
  // entry (6.2 "fail if dir_cursor - payload_cursor < w").
  ASSERT_TRUE(WritePacket(&w, Pattern(249, 'd')));
  ASSERT_TRUE(w.Flush(nullptr));
  ASSERT_TRUE(WritePacket(&w, "next"));
  EXPECT_EQ(w.stats().chunks_reused, 0u);
  EXPECT_EQ(w.held_position(), 1u);
  EXPECT_EQ(GetFlags(ring.word(0)), kNoChunkFlags);  // not continues-on-next
}

TEST(RingWriterTest, MaxFragmentsPerChunkMatchesSpec35) {
  // Spec 3.5 limits, as the writer applies them.
  EXPECT_EQ(MaxFragmentsFor(256), 250u);
  EXPECT_EQ(MaxFragmentsFor(512), 253u);
  EXPECT_EQ(MaxFragmentsFor(4096), 255u);
  // With one-byte packets a 256-byte chunk takes 125 (1 payload + 1 entry).
  TestRing ring(256, 2);
  RingWriter w(ring.view(), MakeOptions());
  for (int i = 0; i < 125; i++)
    ASSERT_TRUE(WritePacket(&w, "z"));
  EXPECT_EQ(w.held_position(), 0u);
  ASSERT_TRUE(WritePacket(&w, "z"));
  EXPECT_EQ(w.held_position(), 1u);
  EXPECT_EQ(GetNumFragments(ring.word(0)), 125u);
}

TEST(RingWriterTest, FullIsDistinctFromNoChunkAvailable) {
  TestRing ring(256, 4);
  RecordingDelegate delegate;
  RingWriter w(ring.view(), MakeOptions(&delegate));
  // Full: the logical distance reached num_chunks. Nothing is reserved.
  ring.set_write_pos(4);
  RingWriter::Span span;
  EXPECT_FALSE(w.BeginPacket(&span));
  EXPECT_EQ(w.stats().full, 1u);
  EXPECT_EQ(w.stats().no_chunk_available, 0u);
  EXPECT_EQ(w.stats().burned_positions, 0u);
  EXPECT_EQ(ring.write_pos(), 4u);
  EXPECT_EQ(delegate.drain_requests, 1);
  EXPECT_EQ(w.stats().loss_events, 1u);
}

TEST(RingWriterTest, NoChunkAvailableAfterClaimBudget) {
  TestRing ring(256, 8);
  RecordingDelegate delegate;
  RingWriter::Options opts = MakeOptions(&delegate);
  opts.claim_budget = 2;
  RingWriter w(ring.view(), opts);
  // Chunks 0 and 1 are pinned by another writer's scraped chunks.
  const StateWord pinned = MakeDataWord(ChunkState::kRewriteRequested, 0,
                                        shm_ring::kNoChunkFlags, 0, 99);
  ring.set_word(0, pinned);
  ring.set_word(1, pinned);
  RingWriter::Span span;
  EXPECT_FALSE(w.BeginPacket(&span));
  EXPECT_EQ(w.stats().no_chunk_available, 1u);
  EXPECT_EQ(w.stats().full, 0u);
  EXPECT_EQ(w.stats().burned_positions, 2u);
  EXPECT_EQ(delegate.burned, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(delegate.drain_requests, 1);
  EXPECT_EQ(ring.write_pos(), 2u);  // both positions reserved: holes
  EXPECT_EQ(ring.word(0), pinned);  // claims never change another's word
  EXPECT_EQ(ring.word(1), pinned);
  // The reader resolves the holes.
  TestRingReader reader(ring.view());
  EXPECT_EQ(reader.DrainAll(nullptr), ResolveResult::kNoData);
  EXPECT_EQ(reader.holes(), 2u);
}

// Spec 5.2 "claim versus resolving an unclaimed position", reader wins: the
// chunk already carries FreeForWrap(next_wrap(p)); the one claim fails, the
// position is burned and never retried, the next position is claimed.
TEST(RingWriterTest, StaleClaimBurnsThePositionAndMovesOn) {
  TestRing ring(256, 4);
  RecordingDelegate delegate;
  RingWriter w(ring.view(), MakeOptions(&delegate));
  ring.set_word(0, MakeFreeForWrap(1));  // the reader resolved position 0
  ASSERT_TRUE(WritePacket(&w, "data"));
  EXPECT_EQ(delegate.burned, std::vector<uint32_t>{0});
  EXPECT_EQ(w.held_position(), 1u);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
  EXPECT_EQ(ring.word(1), MakeDataWord(ChunkState::kComplete, 0,
                                       shm_ring::kNoChunkFlags, 1, kWid));
}

// Spec 2.1 / 2.2 with its numbers: four chunks; writer_b reserved position 4
// (expects FreeForWrap(1)) and slept; meanwhile the reader resolved position
// 8 on chunk 0, writing FreeForWrap(wrap_count(8 + 4)) = FreeForWrap(3). The
// delayed claim fails and cannot publish behind the reader.
TEST(RingWriterTest, Spec22DelayedClaimCannotPublishBehindTheReader) {
  TestRing ring(256, 4);
  RecordingDelegate delegate;
  RingWriter w(ring.view(), MakeOptions(&delegate));
  ring.view().read_pos()->store(4, std::memory_order_relaxed);
  ring.set_write_pos(4);
  ring.set_word(0, MakeFreeForWrap(3));
  for (uint32_t i = 1; i < 4; i++)
    ring.set_word(i, MakeFreeForWrap(1));  // positions 1..3 resolved
  ASSERT_TRUE(WritePacket(&w, "b"));
  EXPECT_EQ(delegate.burned, std::vector<uint32_t>{4});
  EXPECT_EQ(w.held_position(), 5u);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(3));
  // The claim expected exactly FreeForWrap(wrap_count(4)) = FreeForWrap(1).
  EXPECT_EQ(RingGeometry(256, 4).WrapCount(4), 1u);
  EXPECT_EQ(RingGeometry(256, 4).NextWrap(8), 3u);
}

// Same race, writer wins: the reader's advance CAS fails, it redispatches on
// Acquired(w,0) and marks it (nothing to emit); the writer relocates on its
// next publication.
TEST(RingWriterTest, ClaimWinsAgainstReaderAdvance) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  TestRingReader reader(ring.view());
  // The writer reserved position 0 but has not claimed yet: emulate by
  // bumping write_pos for it and claiming from the reader's hook.
  RingWriter::Span span;
  bool claimed = false;
  reader.set_before_cas_hook([&](uint32_t, StateWord seen) {
    if (GetState(seen) == ChunkState::kFreeForWrap && !claimed) {
      claimed = true;
      ring.set_write_pos(0);  // give the writer its reservation back
      ASSERT_TRUE(w.BeginPacket(&span));
    }
  });
  ring.set_write_pos(1);
  ReadChunk chunk;
  EXPECT_EQ(reader.ResolveOne(&chunk), ResolveResult::kSkipped);
  EXPECT_TRUE(claimed);
  EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kRewriteRequested, 0,
                                       shm_ring::kNoChunkFlags, 0, kWid));
  memcpy(span.wptr, "late", 4);
  span.wptr += 4;
  w.EndPacket(span.wptr);
  ASSERT_TRUE(w.Flush(nullptr));
  std::vector<ReadChunk> chunks;
  reader.DrainAll(&chunks);
  EXPECT_EQ(Reassemble(chunks, kWid), std::vector<std::string>{"late"});
}

TEST(RingWriterTest, PacketSpanningChunksCarriesContinuationFlags) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakeOptions());
  const std::string big = Pattern(600, 'q');
  ASSERT_TRUE(WritePacket(&w, big));
  ASSERT_TRUE(w.Flush(nullptr));
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  reader.DrainAll(&chunks);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].flags, kFlagContinuesOnNext);
  EXPECT_EQ(chunks[1].flags, kFlagContinuesFromPrev | kFlagContinuesOnNext);
  EXPECT_EQ(chunks[2].flags, kFlagContinuesFromPrev);
  EXPECT_EQ(Reassemble(chunks, kWid), std::vector<std::string>{big});
}

// Loss rules (spec 11.7): a loss drops the cached chunk; the next packet starts
// in a new chunk whose first publication carries data-loss; writing resumes
// by itself when space frees.
TEST(RingWriterTest, LossInvalidatesCacheAndFlagsNextChunk) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, "before"));
  ASSERT_TRUE(w.Flush(nullptr));  // cached Complete at position 0
  // Other writers fill the ring.
  const uint32_t wp = ring.write_pos();
  ring.set_write_pos(wp + 3);
  for (uint32_t i = 1; i < 4; i++)
    ring.set_word(i, MakeDataWord(ChunkState::kComplete, 0,
                                  shm_ring::kNoChunkFlags, 0, 99));
  // The next packet reuses chunk 0, then needs another chunk: Full.
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  EXPECT_FALSE(w.ContinuePacket(&span));
  EXPECT_EQ(w.stats().full, 1u);
  EXPECT_FALSE(w.holds_chunk());
  // The reader frees space.
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  reader.DrainAll(&chunks);
  ASSERT_TRUE(WritePacket(&w, "after"));
  EXPECT_EQ(w.held_position(), 4u);
  EXPECT_EQ(GetFlags(ring.word(0)), kFlagDataLoss);
  ASSERT_TRUE(w.Flush(nullptr));
  reader.DrainAll(&chunks);
  TestPacketReassembler r;
  for (const auto& c : chunks)
    r.Add(c);
  // "before"; the cut packet is abandoned at the data-loss chunk; "after".
  const auto& ws = r.writer(kWid);
  EXPECT_EQ(ws.data_loss_flags, 1u);
  EXPECT_EQ(ws.packets.back(), "after");
  EXPECT_EQ(ws.packets.front(), "before");
}

// While the writer sleeps between reserving position 0 and claiming, others
// reserve positions 1..q and the reader resolves all of them; position q
// (same chunk as 0) is resolved last, as a hole, by the real spec 5.3 reader.
struct SleepAfterReserve {
  TestRing* ring;
  uint32_t q;
  bool done = false;
  static void Hook(void* arg, RingWriter::TestStep step, uint32_t position) {
    auto* self = static_cast<SleepAfterReserve*>(arg);
    if (step != RingWriter::TestStep::kReserved || self->done)
      return;
    self->done = true;
    ASSERT_EQ(position, 0u);
    const RingGeometry g = self->ring->view().geometry();  // a copy
    ASSERT_EQ(g.ChunkIndex(self->q), 0u);
    // The chunk as the reader left it after resolving q - num_chunks.
    self->ring->set_word(0, MakeFreeForWrap(g.WrapCount(self->q)));
    self->ring->view().read_pos()->store(self->q, std::memory_order_relaxed);
    self->ring->set_write_pos(self->q + 1);
    TestRingReader reader(self->ring->view());
    ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kSkipped);
  }
};

// Spec 9, as documented in ring_writer.h: the stale claim of position p
// succeeds once others made (identity period - num_chunks) reservations, not
// a whole period; one traversal fewer and it still fails.
TEST(RingWriterTest, Spec9StaleClaimSucceedsAfterPeriodMinusNumChunks) {
  for (const uint32_t num_chunks : {2u, 4u, 8u, 64u}) {
    const uint64_t period =
        std::min<uint64_t>(uint64_t{num_chunks} << 29, uint64_t{1} << 32);
    for (const uint64_t traversals_short : {0u, 1u}) {
      SCOPED_TRACE(testing::Message() << num_chunks << " chunks, "
                                      << traversals_short << " short");
      // Positions 1..q reserved by others: q = period - num_chunks (minus
      // whole traversals).
      const uint32_t q =
          static_cast<uint32_t>(period - num_chunks * (1 + traversals_short));
      TestRing ring(256, num_chunks);
      RecordingDelegate delegate;
      RingWriter::Options opts = MakeOptions(&delegate);
      opts.claim_budget = 1;
      RingWriter w(ring.view(), opts);
      SleepAfterReserve sleeper{&ring, q};
      w.SetStepHookForTesting(&SleepAfterReserve::Hook, &sleeper);
      RingWriter::Span span;
      const bool claimed = w.BeginPacket(&span);
      ASSERT_TRUE(sleeper.done);
      if (traversals_short == 0) {
        // The finite identity repeats: the claim matches FreeForWrap(0) and
        // the writer now owns a chunk whose position the reader passed.
        ASSERT_TRUE(claimed);
        EXPECT_EQ(w.held_position(), 0u);
        EXPECT_EQ(ring.word(0), MakeDataWord(ChunkState::kAcquired, 0,
                                             shm_ring::kNoChunkFlags, 0, kWid));
        EXPECT_TRUE(delegate.burned.empty());
        w.EndPacket(span.wptr);
      } else {
        EXPECT_FALSE(claimed);
        EXPECT_EQ(delegate.burned, std::vector<uint32_t>{0});
        EXPECT_EQ(GetState(ring.word(0)), ChunkState::kFreeForWrap);
      }
    }
  }
}

// The test reader's spec 6.4 validation (the benchmarks' reader relies on
// it): a directory whose sizes reach exactly the free capacity is accepted;
// one byte more drops the payload but still performs the transition.
TEST(RingWriterTest, TestReaderValidatesTheDirectory) {
  for (const uint32_t chunk_size : {256u, 1024u}) {
    for (const uint32_t excess : {0u, 1u}) {
      SCOPED_TRACE(testing::Message() << chunk_size << " excess " << excess);
      TestRing ring(chunk_size, 2);
      const uint32_t w = SizeEntryWidth(chunk_size);
      const uint32_t capacity = chunk_size - kPayloadStartFormat00 - 2 * w;
      const uint32_t first = capacity / 2;
      WriteSizeEntry(ring.chunk(0) + SizeEntryOffset(chunk_size, 0), w, first);
      WriteSizeEntry(ring.chunk(0) + SizeEntryOffset(chunk_size, 1), w,
                     capacity - first + excess);
      ring.set_word(0, MakeDataWord(ChunkState::kComplete, 0,
                                    shm_ring::kNoChunkFlags, 2, kWid));
      ring.set_write_pos(1);
      TestRingReader reader(ring.view());
      ReadChunk c;
      EXPECT_EQ(reader.ResolveOne(&c),
                excess ? ResolveResult::kSkipped : ResolveResult::kEmitted);
      EXPECT_EQ(reader.malformed(), excess);
      EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
      if (!excess) {
        ASSERT_EQ(c.fragments.size(), 2u);
        EXPECT_EQ(c.fragments[0].size(), first);
        EXPECT_EQ(c.fragments[1].size(), capacity - first);
      }
    }
  }
}

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
