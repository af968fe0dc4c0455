/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Per-packet publication (spec 6.2 step 5, the default) and the stall
// policies' losslessness, driven deterministically through the test reader
// (a spec 5.3 reader) and the writer's test hooks:
//  - a writer that ends packets and goes idle: the reader takes all of them,
//    no Flush();
//  - publish versus scrape at EndPacket(), both winners;
//  - reuse versus consume at the next BeginPacket(), both winners;
//  - the opt-in per-chunk publication and what it risks;
//  - kStall: NoChunkAvailable and the relocation bound wait instead of
//    dropping, until the stall timeout (then the loss is counted exactly).

#include <gtest/gtest.h>

#include <string.h>

#include <string>
#include <vector>

#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"

namespace ringtrace {
namespace shm_ring {
namespace {

constexpr WriterID kWid = 5;

RingWriter::Options MakeOptions() {
  RingWriter::Options o;
  o.writer_id = kWid;
  o.target_buffer = 1;
  return o;
}

StateWord Word(ChunkState s, uint32_t n) {
  return MakeDataWord(s, kFormatTargetBuffer, shm_ring::kNoChunkFlags, n, kWid);
}

void Append(RingWriter::Span* span, const std::string& s) {
  memcpy(span->wptr, s.data(), s.size());
  span->wptr += s.size();
}

TEST(RingWriterPublicationTest, IdleWriterPacketsReachTheReaderWithoutFlush) {
  TestRing ring(4096, 4);
  RingWriter w(ring.view(), MakeOptions());
  std::vector<std::string> written;
  for (int i = 0; i < 5; i++) {
    written.push_back(Pattern(10 + static_cast<size_t>(i), 'a'));
    ASSERT_TRUE(WritePacket(&w, written.back()));
    // Published when EndPacket() returned: Complete(w, i + 1).
    EXPECT_EQ(ring.word(0), Word(ChunkState::kComplete, i + 1));
  }
  // The writer goes idle (or is SIGKILLed): no Flush(), no destructor.
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_FALSE(chunks[0].scraped);  // consumed whole: Complete
  EXPECT_EQ(Reassemble(chunks, kWid), written);
  EXPECT_EQ(w.stats().publications, 5u);
  EXPECT_EQ(w.stats().chunks_claimed, 1u);
  EXPECT_EQ(w.stats().chunks_reused, 4u);
  EXPECT_EQ(w.stats().loss_events, 0u);
}

// The same across chunks and with a scrape of the open packet in between:
// every ended packet is taken, each exactly once, without Flush().
TEST(RingWriterPublicationTest, IdleWriterAfterSpanningPacketsAndScrape) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakeOptions());
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  std::vector<std::string> written;
  for (int i = 0; i < 6; i++) {
    written.push_back(Pattern(i % 2 ? 300 : 40, static_cast<char>('a' + i)));
    RingWriter::Span span;
    ASSERT_TRUE(w.BeginPacket(&span));
    ASSERT_TRUE(AppendToPacket(&w, &span, written.back()));
    if (i == 3) {  // the reader scrapes the open packet's chunk
      ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
    }
    w.EndPacket(span.wptr);
  }
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid), written);
  EXPECT_GE(w.stats().relocations, 1u);
  EXPECT_EQ(w.stats().loss_events, 0u);
}

// Spec 5.2 "publish versus scrape" at EndPacket(), writer wins: the reader
// snapshots Acquired(w,1), the writer publishes before the reader's CAS, the
// CAS fails and the reader redispatches on Complete(w,2): it takes both
// packets whole and the writer relocates nothing.
TEST(RingWriterPublicationTest, PublishWinsAgainstScrapeAtEndPacket) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, "one"));
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));  // reuse: Acquired(w,1)
  Append(&span, "two");
  TestRingReader reader(ring.view());
  bool published = false;
  reader.set_before_cas_hook([&](uint32_t, StateWord seen) {
    if (!published && seen == Word(ChunkState::kAcquired, 1)) {
      published = true;
      w.EndPacket(span.wptr);  // publication CAS wins
    }
  });
  ReadChunk chunk;
  ASSERT_EQ(reader.ResolveOne(&chunk), ResolveResult::kEmitted);
  EXPECT_TRUE(published);
  EXPECT_FALSE(chunk.scraped);
  EXPECT_EQ(chunk.fragments, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
  EXPECT_EQ(w.stats().relocations, 0u);
  EXPECT_EQ(w.stats().publications, 2u);
}

// Reader wins: the scrape takes the published prefix ("one"); the writer's
// publication at EndPacket() fails on RewriteRequested(w,1), and it
// relocates and publishes the ended packet in a replacement, which is not
// cached for reuse (7.1).
TEST(RingWriterPublicationTest, ScrapeWinsAgainstPublishAtEndPacket) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, "one"));
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  Append(&span, "two");
  TestRingReader reader(ring.view());
  ReadChunk chunk;
  ASSERT_EQ(reader.ResolveOne(&chunk), ResolveResult::kEmitted);
  EXPECT_TRUE(chunk.scraped);
  EXPECT_EQ(chunk.fragments, std::vector<std::string>{"one"});
  EXPECT_EQ(ring.word(0), Word(ChunkState::kRewriteRequested, 1));
  w.EndPacket(span.wptr);
  EXPECT_EQ(ring.word(0), MakeAcknowledged());
  EXPECT_EQ(w.stats().relocations, 1u);
  EXPECT_FALSE(w.holds_chunk());
  EXPECT_EQ(ring.word(1), Word(ChunkState::kComplete, 1));
  std::vector<ReadChunk> chunks;
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].fragments, std::vector<std::string>{"two"});
  EXPECT_EQ(chunks[0].flags, kNoChunkFlags);  // the prefix was not empty (7.1)
  // The next packet claims a new chunk.
  ASSERT_TRUE(WritePacket(&w, "three"));
  EXPECT_EQ(w.held_position(), 2u);
  EXPECT_EQ(w.stats().loss_events, 0u);
}

// Spec 5.2 "reuse versus consume" at the next BeginPacket(), reader wins:
// the reader consumed the cached Complete chunk; the reuse CAS fails, the
// writer never touches the chunk again and claims a new one.
TEST(RingWriterPublicationTest, ConsumeWinsAgainstReuseAtBeginPacket) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, "one"));
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(ring.word(0), MakeFreeForWrap(1));
  ASSERT_TRUE(WritePacket(&w, "two"));
  EXPECT_EQ(w.stats().chunks_reused, 0u);
  EXPECT_EQ(w.stats().chunks_claimed, 2u);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
  EXPECT_EQ(ring.word(1), Word(ChunkState::kComplete, 1));
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid), (std::vector<std::string>{"one", "two"}));
}

// Writer wins: the reuse CAS lands between the reader's snapshot of
// Complete(w,1) and its reclaim CAS; the reader redispatches on
// Acquired(w,1) and scrapes the prefix; the packet the writer then ends is
// relocated by its publication.
TEST(RingWriterPublicationTest, ReuseWinsAgainstConsumeAtBeginPacket) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, "one"));
  TestRingReader reader(ring.view());
  RingWriter::Span span;
  bool reused = false;
  reader.set_before_cas_hook([&](uint32_t, StateWord seen) {
    if (!reused && seen == Word(ChunkState::kComplete, 1)) {
      reused = true;
      ASSERT_TRUE(w.BeginPacket(&span));  // reuse CAS wins
    }
  });
  ReadChunk chunk;
  ASSERT_EQ(reader.ResolveOne(&chunk), ResolveResult::kEmitted);
  EXPECT_TRUE(reused);
  EXPECT_TRUE(chunk.scraped);
  EXPECT_EQ(chunk.fragments, std::vector<std::string>{"one"});
  EXPECT_EQ(w.stats().chunks_reused, 1u);
  Append(&span, "two");
  w.EndPacket(span.wptr);
  EXPECT_EQ(w.stats().relocations, 1u);
  std::vector<ReadChunk> chunks;
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid), std::vector<std::string>{"two"});
  EXPECT_EQ(w.stats().loss_events, 0u);
}

// The opt-in per-chunk publication: EndPacket() does not publish, and an
// idle (or dead) writer's ended packets are invisible to the reader; its
// scrape takes nothing. Flush() (or retirement) publishes them.
TEST(RingWriterPublicationTest, PerChunkModeDefersPublication) {
  TestRing ring(4096, 4);
  RecordingDelegate delegate;
  RingWriter::Options o = MakeOptions();
  o.publication = Publication::kPerChunkRisksLossOnCrash;
  o.delegate = &delegate;
  RingWriter w(ring.view(), o);
  for (int i = 0; i < 5; i++)
    ASSERT_TRUE(WritePacket(&w, Pattern(12, static_cast<char>('a' + i))));
  EXPECT_EQ(ring.word(0), Word(ChunkState::kAcquired, 0));
  EXPECT_EQ(w.stats().publications, 0u);
  EXPECT_TRUE(delegate.published.empty());
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(ring.word(0), Word(ChunkState::kComplete, 5));
  EXPECT_EQ(delegate.published, std::vector<uint32_t>{0});
  // The next packet reuses the chunk and stays unpublished until Flush().
  ASSERT_TRUE(WritePacket(&w, "late"));
  EXPECT_EQ(ring.word(0), Word(ChunkState::kAcquired, 5));
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_TRUE(chunks[0].scraped);
  EXPECT_EQ(chunks[0].fragments.size(), 5u);  // "late" is not there
  ASSERT_TRUE(w.Flush(nullptr));  // relocates "late" and publishes it
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[1].fragments, std::vector<std::string>{"late"});
}

// kStall: the claim budget is spent on chunks the reader has not freed yet
// (positions 0 and 1 hold other writers' scraped chunks). Instead of
// NoChunkAvailable and a loss, the writer waits for read_pos to move; the
// reader skips the two holes and the retry claims position 2.
TEST(RingWriterPublicationTest, StallWaitsAfterClaimBudgetInsteadOfDropping) {
  for (const BufferExhaustedPolicy policy :
       {BufferExhaustedPolicy::kStall, BufferExhaustedPolicy::kStallThenDrop}) {
    SCOPED_TRACE(BufferExhaustedPolicyName(policy));
    TestRing ring(256, 8);
    const StateWord pinned = MakeDataWord(ChunkState::kRewriteRequested, 0,
                                          shm_ring::kNoChunkFlags, 0, kWid + 1);
    ring.set_word(0, pinned);
    ring.set_word(1, pinned);
    RingWriter::Options o = MakeOptions();
    o.policy = policy;
    o.claim_budget = 2;
    o.stall_timeout_ms = 60'000;  // never reached: the reader moves
    RingWriter w(ring.view(), o);
    struct Reader {
      TestRingReader reader;
      int calls = 0;
      static void Hook(void* arg) {
        auto* self = static_cast<Reader*>(arg);
        self->calls++;
        EXPECT_EQ(self->reader.DrainAll(nullptr), ResolveResult::kNoData);
      }
    } r{TestRingReader(ring.view())};
    w.SetStallHookForTesting(&Reader::Hook, &r);
    ASSERT_TRUE(WritePacket(&w, "kept"));
    EXPECT_EQ(r.calls, 1);
    EXPECT_EQ(r.reader.holes(), 2u);
    EXPECT_EQ(w.held_position(), 2u);
    EXPECT_EQ(w.stats().burned_positions, 2u);
    EXPECT_EQ(w.stats().no_chunk_available, 1u);
    EXPECT_EQ(w.stats().stalls, 1u);
    EXPECT_EQ(w.stats().stall_timeouts, 0u);
    EXPECT_EQ(w.stats().loss_events, 0u);
    EXPECT_EQ(w.stats().open_packets_dropped, 0u);
  }
}

// The same ring under kDrop drops at once, and under kStall with a reader
// that never comes the stall times out: each loses exactly the one packet.
TEST(RingWriterPublicationTest, ClaimBudgetLossUnderDropAndAfterStallTimeout) {
  for (const BufferExhaustedPolicy policy :
       {BufferExhaustedPolicy::kDrop, BufferExhaustedPolicy::kStall}) {
    SCOPED_TRACE(BufferExhaustedPolicyName(policy));
    TestRing ring(256, 8);
    const StateWord pinned = MakeDataWord(ChunkState::kRewriteRequested, 0,
                                          shm_ring::kNoChunkFlags, 0, kWid + 1);
    ring.set_word(0, pinned);
    ring.set_word(1, pinned);
    RingWriter::Options o = MakeOptions();
    o.policy = policy;
    o.claim_budget = 2;
    o.stall_timeout_ms = 1;
    RingWriter w(ring.view(), o);
    EXPECT_FALSE(WritePacket(&w, "lost"));
    EXPECT_EQ(w.stats().open_packets_dropped, 1u);
    EXPECT_EQ(w.stats().loss_events, 1u);
    const bool stall = policy == BufferExhaustedPolicy::kStall;
    EXPECT_EQ(w.stats().stall_timeouts, stall ? 1u : 0u);
    EXPECT_EQ(w.stats().stalls, stall ? 1u : 0u);
    EXPECT_EQ(w.stats().burned_positions, 2u);
  }
}

// The relocation bound under kStall: the reader scrapes every fresh
// replacement five times in a row (past the bound of 3). The writer keeps
// relocating within the stall deadline; nothing is lost.
TEST(RingWriterPublicationTest, StallRelocatesPastTheBoundInsteadOfDropping) {
  TestRing ring(256, 16);
  RingWriter::Options o = MakeOptions();
  o.policy = BufferExhaustedPolicy::kStall;
  o.stall_timeout_ms = 60'000;
  RingWriter w(ring.view(), o);
  struct Scraper {
    TestRingReader reader;
    std::vector<ReadChunk> chunks;
    int scrapes_left = 0;
    static void Hook(void* arg, RingWriter::TestStep step, uint32_t) {
      auto* self = static_cast<Scraper*>(arg);
      if (step == RingWriter::TestStep::kClaimed && self->scrapes_left > 0) {
        self->scrapes_left--;
        EXPECT_EQ(self->reader.DrainAll(&self->chunks), ResolveResult::kNoData);
      }
    }
  } s{TestRingReader(ring.view())};
  w.SetStepHookForTesting(&Scraper::Hook, &s);
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  Append(&span, "survivor");
  ASSERT_EQ(s.reader.DrainAll(&s.chunks), ResolveResult::kNoData);  // scrape
  s.scrapes_left = 5;
  w.EndPacket(span.wptr);
  EXPECT_EQ(s.scrapes_left, 0);
  EXPECT_EQ(w.stats().relocations, 6u);
  EXPECT_EQ(w.stats().relocations_past_bound, 3u);
  EXPECT_EQ(w.stats().loss_events, 0u);
  EXPECT_EQ(w.stats().ended_packets_dropped, 0u);
  ASSERT_EQ(s.reader.DrainAll(&s.chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(s.chunks, kWid), std::vector<std::string>{"survivor"});
  for (const ReadChunk& c : s.chunks)
    EXPECT_FALSE(c.flags & kFlagDataLoss);
}

// Past the bound with a reader that scrapes every replacement forever: the
// stall deadline ends it; one stall timeout, the ended packet counted lost.
TEST(RingWriterPublicationTest, StallRelocationPastBoundTimesOut) {
  TestRing ring(256, 16);
  RingWriter::Options o = MakeOptions();
  o.policy = BufferExhaustedPolicy::kStall;
  o.stall_timeout_ms = 1;
  RingWriter w(ring.view(), o);
  struct Scraper {
    TestRingReader reader;
    static void Hook(void* arg, RingWriter::TestStep step, uint32_t) {
      if (step == RingWriter::TestStep::kClaimed) {
        EXPECT_EQ(static_cast<Scraper*>(arg)->reader.DrainAll(nullptr),
                  ResolveResult::kNoData);
      }
    }
  } s{TestRingReader(ring.view())};
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  Append(&span, "doomed");
  ASSERT_EQ(s.reader.DrainAll(nullptr), ResolveResult::kNoData);
  w.SetStepHookForTesting(&Scraper::Hook, &s);
  w.EndPacket(span.wptr);
  w.SetStepHookForTesting(nullptr, nullptr);
  EXPECT_GT(w.stats().relocations_past_bound, 0u);
  EXPECT_EQ(w.stats().stall_timeouts, 1u);
  EXPECT_EQ(w.stats().suffixes_dropped, 1u);
  EXPECT_EQ(w.stats().ended_packets_dropped, 1u);
  EXPECT_EQ(w.stats().loss_events, 1u);
  // Every relocation left an Acknowledged chunk that the reader frees only
  // when it reaches that chunk's next position: the next claims burn
  // positions until the claim budget is spent, and kStall then waits for
  // the reader (played by the stall hook) instead of dropping.
  struct Drain {
    static void Hook(void* arg) {
      EXPECT_EQ(static_cast<TestRingReader*>(arg)->DrainAll(nullptr),
                ResolveResult::kNoData);
    }
  };
  w.SetStallHookForTesting(&Drain::Hook, &s.reader);
  // The next packet's chunk carries data-loss.
  ASSERT_TRUE(WritePacket(&w, "next"));
  EXPECT_EQ(w.stats().stall_timeouts, 1u);
  EXPECT_EQ(w.stats().loss_events, 1u);
  std::vector<ReadChunk> chunks;
  ASSERT_EQ(s.reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_FALSE(chunks.empty());
  EXPECT_TRUE(chunks.back().flags & kFlagDataLoss);
  EXPECT_EQ(Reassemble(chunks, kWid), std::vector<std::string>{"next"});
}

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
