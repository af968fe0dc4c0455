/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Partial-scrape relocation (spec 7, 7.1): cases (a) finalized suffix only,
// (b) open fragment only, (c) both; each flag rule; no replacement; bounded
// attempts; protocol errors; the publish-versus-scrape race both ways.

#include <gtest/gtest.h>

#include <string.h>

#include <string>
#include <vector>

#include "src/tracing/core/shm_ring/ring_reader_ops.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"

namespace ringtrace {
namespace shm_ring {
namespace {

constexpr WriterID kWid = 11;

RingWriter::Options MakeOptions() {
  RingWriter::Options o;
  o.writer_id = kWid;
  o.target_buffer = 2;
  return o;
}

// Deferred publication: closed fragments stay unpublished until the chunk
// retires or Flush(), so the reader can scrape a chunk holding several
// finalized, unpublished fragments (relocation cases (a) and (c) with more
// than one fragment). With the default per-packet publication a finalized
// suffix is at most the fragment EndPacket() or ContinuePacket() is
// publishing; ring_writer_publication_unittest.cc covers that.
RingWriter::Options MakePerChunkOptions() {
  RingWriter::Options o = MakeOptions();
  o.publication = Publication::kPerChunkRisksLossOnCrash;
  return o;
}

StateWord Word(ChunkState s, ChunkFlags flags, uint32_t n) {
  return MakeDataWord(s, kFormatTargetBuffer, flags, n, kWid);
}

// Records a loss so the writer's next chunk carries data-loss: the ring looks
// Full once (write_pos pushed by "other writers"), then the positions are
// given back. Only valid while nothing else uses the ring.
void ForceLossOnce(TestRing* ring, RingWriter* w, uint32_t num_chunks) {
  const uint32_t wp = ring->write_pos();
  ring->set_write_pos(ring->read_pos() + num_chunks);
  RingWriter::Span span;
  ASSERT_FALSE(w->BeginPacket(&span));
  ring->set_write_pos(wp);
}

// (a), n == 0: the reader took nothing; the whole suffix carries data-loss.
TEST(RingWriterRelocationTest, FinalizedSuffixEmptyPrefixCarriesDataLoss) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakePerChunkOptions());
  ForceLossOnce(&ring, &w, 8);
  ASSERT_TRUE(WritePacket(&w, "p0"));
  ASSERT_TRUE(WritePacket(&w, "p1"));
  EXPECT_EQ(ring.word(0), Word(ChunkState::kAcquired, kFlagDataLoss, 0));
  TestRingReader reader(ring.view());
  ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kSkipped);  // scrape
  EXPECT_EQ(ring.word(0),
            Word(ChunkState::kRewriteRequested, kFlagDataLoss, 0));
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(ring.word(0), MakeAcknowledged());
  EXPECT_EQ(ring.word(1), Word(ChunkState::kComplete, kFlagDataLoss, 2));
  EXPECT_EQ(w.stats().relocations, 1u);
  // Not reused for another packet (7.1).
  ASSERT_TRUE(WritePacket(&w, "p2"));
  EXPECT_EQ(w.held_position(), 2u);
  EXPECT_EQ(w.stats().chunks_reused, 0u);
  ASSERT_TRUE(w.Flush(nullptr));
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].flags, kFlagDataLoss);
  EXPECT_EQ(chunks[1].flags, kNoChunkFlags);
  EXPECT_EQ(Reassemble(chunks, kWid),
            (std::vector<std::string>{"p0", "p1", "p2"}));
}

// (a), n == 0: continues-from-prev moves with the whole suffix.
TEST(RingWriterRelocationTest, FinalizedSuffixEmptyPrefixCarriesFromPrev) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakePerChunkOptions());
  const std::string big = Pattern(300, 'b');
  ASSERT_TRUE(WritePacket(&w, big));  // chunk 0 (on-next), chunk 1 (from-prev)
  ASSERT_TRUE(WritePacket(&w, "tail"));
  EXPECT_EQ(ring.word(1),
            Word(ChunkState::kAcquired, kFlagContinuesFromPrev, 0));
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  ReadChunk c;
  ASSERT_EQ(reader.ResolveOne(&c), ResolveResult::kEmitted);  // chunk 0
  chunks.push_back(c);
  ASSERT_EQ(reader.ResolveOne(&c), ResolveResult::kSkipped);  // scrape n=0
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(ring.word(2),
            Word(ChunkState::kComplete, kFlagContinuesFromPrev, 2));
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid), (std::vector<std::string>{big, "tail"}));
}

// (a), n > 0: the prefix keeps data-loss; the relocated suffix does not
// repeat it.
TEST(RingWriterRelocationTest, FinalizedSuffixAfterNonEmptyPrefix) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakePerChunkOptions());
  ForceLossOnce(&ring, &w, 8);
  ASSERT_TRUE(WritePacket(&w, "p0"));
  ASSERT_TRUE(w.Flush(nullptr));       // Complete(DL, 1), cached
  ASSERT_TRUE(WritePacket(&w, "p1"));  // reuse: Acquired(DL, 1)
  ASSERT_TRUE(WritePacket(&w, "p2"));
  TestRingReader reader(ring.view());
  ReadChunk prefix;
  ASSERT_EQ(reader.ResolveOne(&prefix), ResolveResult::kEmitted);
  EXPECT_TRUE(prefix.scraped);
  EXPECT_EQ(prefix.flags, kFlagDataLoss);
  EXPECT_EQ(prefix.fragments, std::vector<std::string>{"p0"});
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(ring.word(1), Word(ChunkState::kComplete, kNoChunkFlags, 2));
  std::vector<ReadChunk> chunks;
  chunks.push_back(prefix);
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid),
            (std::vector<std::string>{"p0", "p1", "p2"}));
}

// (a) with a tail that continues on the next chunk: continues-on-next is set
// when the relocated tail is published, not on the prefix already taken.
TEST(RingWriterRelocationTest, RelocatedTailCarriesContinuesOnNext) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, "p0"));
  ASSERT_TRUE(w.Flush(nullptr));
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));  // reuse: Acquired(0, 1)
  TestRingReader reader(ring.view());
  ReadChunk prefix;
  ASSERT_EQ(reader.ResolveOne(&prefix), ResolveResult::kEmitted);
  EXPECT_EQ(prefix.flags, kNoChunkFlags);  // no continues-on-next on the prefix
  const std::string big = Pattern(500, 'g');
  ASSERT_TRUE(AppendToPacket(&w, &span, big));  // publish fails: relocate
  w.EndPacket(span.wptr);
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(w.stats().relocations, 1u);
  EXPECT_EQ(GetFlags(ring.word(1)), kFlagContinuesOnNext);
  std::vector<ReadChunk> chunks{prefix};
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid), (std::vector<std::string>{"p0", big}));
}

// (b), n > 0: only the open fragment moves; the encoder's pointer and range
// end are rebased; the replacement stays Acquired until the fragment closes.
TEST(RingWriterRelocationTest, OpenFragmentOnly) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, "one"));
  ASSERT_TRUE(w.Flush(nullptr));
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  memcpy(span.wptr, "tw", 2);
  span.wptr += 2;
  TestRingReader reader(ring.view());
  ReadChunk prefix;
  ASSERT_EQ(reader.ResolveOne(&prefix), ResolveResult::kEmitted);
  ASSERT_TRUE(w.Flush(&span));
  EXPECT_EQ(ring.word(0), MakeAcknowledged());
  EXPECT_EQ(ring.word(1), Word(ChunkState::kAcquired, kNoChunkFlags, 0));
  EXPECT_EQ(span.wptr, ring.chunk(1) + kPayloadStartFormat00 + 2);
  EXPECT_EQ(span.end, ring.chunk(1) + 256 - 1);  // one entry reserved
  *span.wptr++ = 'o';
  w.EndPacket(span.wptr);
  // Published when the fragment closes, and not reused afterwards.
  EXPECT_EQ(ring.word(1), Word(ChunkState::kComplete, kNoChunkFlags, 1));
  ASSERT_TRUE(WritePacket(&w, "three"));
  EXPECT_EQ(w.held_position(), 2u);
  ASSERT_TRUE(w.Flush(nullptr));
  std::vector<ReadChunk> chunks{prefix};
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid),
            (std::vector<std::string>{"one", "two", "three"}));
}

// (b), n == 0: the open continuation fragment carries continues-from-prev.
TEST(RingWriterRelocationTest, OpenFragmentOnlyEmptyPrefixCarriesFromPrev) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakeOptions());
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  const std::string head = Pattern(270, 'h');
  ASSERT_TRUE(AppendToPacket(&w, &span, head));  // now open in chunk 1
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  ReadChunk c;
  ASSERT_EQ(reader.ResolveOne(&c), ResolveResult::kEmitted);
  chunks.push_back(c);
  ASSERT_EQ(reader.ResolveOne(&c), ResolveResult::kSkipped);  // scrape n=0
  ASSERT_TRUE(w.Flush(&span));
  EXPECT_EQ(ring.word(2),
            Word(ChunkState::kAcquired, kFlagContinuesFromPrev, 0));
  const std::string rest = Pattern(10, 'r');
  ASSERT_TRUE(AppendToPacket(&w, &span, rest));
  w.EndPacket(span.wptr);
  EXPECT_EQ(ring.word(2),
            Word(ChunkState::kComplete, kFlagContinuesFromPrev, 1));
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid), std::vector<std::string>{head + rest});
}

// (c): finalized suffix and open fragment together, n > 0.
TEST(RingWriterRelocationTest, FinalizedSuffixAndOpenFragment) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakePerChunkOptions());
  ASSERT_TRUE(WritePacket(&w, "p0"));
  ASSERT_TRUE(w.Flush(nullptr));
  ASSERT_TRUE(WritePacket(&w, "p1"));  // closed, unpublished
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  memcpy(span.wptr, "p2-", 3);
  span.wptr += 3;
  TestRingReader reader(ring.view());
  ReadChunk prefix;
  ASSERT_EQ(reader.ResolveOne(&prefix), ResolveResult::kEmitted);
  EXPECT_EQ(prefix.fragments, std::vector<std::string>{"p0"});
  ASSERT_TRUE(w.Flush(&span));
  EXPECT_EQ(ring.word(1), Word(ChunkState::kAcquired, kNoChunkFlags, 0));
  // p1 sits before the open fragment, its entry at the top of the chunk.
  EXPECT_EQ(ring.chunk(1)[255], 2);
  EXPECT_EQ(span.wptr, ring.chunk(1) + kPayloadStartFormat00 + 2 + 3);
  ASSERT_TRUE(AppendToPacket(&w, &span, "end"));
  w.EndPacket(span.wptr);
  EXPECT_EQ(ring.word(1), Word(ChunkState::kComplete, kNoChunkFlags, 2));
  std::vector<ReadChunk> chunks{prefix};
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid),
            (std::vector<std::string>{"p0", "p1", "p2-end"}));
}

// (c) with n == 0: both carried flags move with the suffix.
TEST(RingWriterRelocationTest, FinalizedAndOpenEmptyPrefixCarriesDataLoss) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakePerChunkOptions());
  ForceLossOnce(&ring, &w, 8);
  ASSERT_TRUE(WritePacket(&w, "p0"));
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  *span.wptr++ = 'x';
  TestRingReader reader(ring.view());
  ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kSkipped);
  ASSERT_TRUE(w.Flush(&span));
  EXPECT_EQ(ring.word(1), Word(ChunkState::kAcquired, kFlagDataLoss, 0));
  w.EndPacket(span.wptr);
  EXPECT_EQ(ring.word(1), Word(ChunkState::kComplete, kFlagDataLoss, 2));
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid), (std::vector<std::string>{"p0", "x"}));
}

// Flush with an open fragment, nothing closed before it and no scrape
// changes nothing.
TEST(RingWriterRelocationTest, FlushWithOnlyAnOpenFragmentIsNoop) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  *span.wptr++ = 'x';
  uint8_t* const before = span.wptr;
  ASSERT_TRUE(w.Flush(&span));
  EXPECT_EQ(span.wptr, before);
  EXPECT_EQ(ring.word(0), Word(ChunkState::kAcquired, kNoChunkFlags, 0));
  EXPECT_EQ(w.stats().publications, 0u);
  w.EndPacket(span.wptr);
}

// Flush with a packet open publishes the packets finished before it (so the
// reader can take them by a scrape, spec 7) and continues the open fragment
// in place after reusing the chunk.
TEST(RingWriterRelocationTest, FlushWithOpenPacketPublishesFinishedOnes) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakePerChunkOptions());
  ASSERT_TRUE(WritePacket(&w, "p0"));
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  memcpy(span.wptr, "op", 2);
  span.wptr += 2;
  uint8_t* const before = span.wptr;
  ASSERT_TRUE(w.Flush(&span));
  EXPECT_EQ(span.wptr, before);  // continues in place
  EXPECT_EQ(ring.word(0), Word(ChunkState::kAcquired, kNoChunkFlags, 1));
  EXPECT_EQ(w.stats().publications, 1u);
  EXPECT_EQ(w.stats().chunks_reused, 1u);
  TestRingReader reader(ring.view());
  ReadChunk prefix;
  ASSERT_EQ(reader.ResolveOne(&prefix), ResolveResult::kEmitted);
  EXPECT_EQ(prefix.fragments, std::vector<std::string>{"p0"});
  memcpy(span.wptr, "en", 2);
  span.wptr += 2;
  w.EndPacket(span.wptr);
  ASSERT_TRUE(w.Flush(nullptr));  // relocates only "open" (7, case a)
  EXPECT_EQ(w.stats().relocations, 1u);
  std::vector<ReadChunk> chunks{prefix};
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid), (std::vector<std::string>{"p0", "open"}));
}

// The reader consumes the chunk between Flush's publication and its reuse
// CAS: the open fragment moves to a new chunk (from scratch, since the old
// chunk may already be someone else's), or is lost if there is none.
struct ConsumeAfterFlushPublish {
  TestRing* ring;
  TestRingReader* reader;
  bool fill_ring;
  int calls = 0;
  static void Hook(void* arg, RingWriter::TestStep step, uint32_t) {
    auto* self = static_cast<ConsumeAfterFlushPublish*>(arg);
    if (step != RingWriter::TestStep::kFlushPublished)
      return;
    self->calls++;
    ASSERT_EQ(self->reader->ResolveOne(nullptr), ResolveResult::kEmitted);
    if (self->fill_ring)  // other writers take every free position
      self->ring->set_write_pos(self->ring->read_pos() + 4);
  }
};

TEST(RingWriterRelocationTest, FlushReuseLosesToReaderConsume) {
  for (const bool fill_ring : {false, true}) {
    SCOPED_TRACE(fill_ring);
    TestRing ring(256, 4);
    RingWriter w(ring.view(), MakePerChunkOptions());
    TestRingReader reader(ring.view());
    ASSERT_TRUE(WritePacket(&w, "p0"));
    RingWriter::Span span;
    ASSERT_TRUE(w.BeginPacket(&span));
    memcpy(span.wptr, "op", 2);
    span.wptr += 2;
    ConsumeAfterFlushPublish hook{&ring, &reader, fill_ring};
    w.SetStepHookForTesting(&ConsumeAfterFlushPublish::Hook, &hook);
    const bool ok = w.Flush(&span);
    EXPECT_EQ(hook.calls, 1);
    EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));  // never touched again
    EXPECT_EQ(w.stats().chunks_reused, 0u);
    if (fill_ring) {
      EXPECT_FALSE(ok);
      EXPECT_FALSE(w.fragment_open());
      EXPECT_EQ(w.stats().suffixes_dropped, 1u);
      EXPECT_EQ(w.stats().dropped_suffix_bytes, 2u);
      EXPECT_EQ(w.stats().loss_events, 1u);
      continue;
    }
    ASSERT_TRUE(ok);
    EXPECT_EQ(w.stats().open_fragments_moved, 1u);
    EXPECT_EQ(w.held_position(), 1u);
    EXPECT_EQ(span.wptr, ring.chunk(1) + kPayloadStartFormat00 + 2);
    EXPECT_EQ(ring.word(1), Word(ChunkState::kAcquired, kNoChunkFlags, 0));
    memcpy(span.wptr, "en", 2);
    span.wptr += 2;
    w.EndPacket(span.wptr);
    ASSERT_TRUE(w.Flush(nullptr));
    std::vector<ReadChunk> chunks;
    EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
    ASSERT_EQ(chunks.size(), 1u);
    EXPECT_EQ(chunks[0].flags, kNoChunkFlags);
    EXPECT_EQ(chunks[0].fragments, std::vector<std::string>{"open"});
    EXPECT_EQ(w.stats().loss_events, 0u);
  }
}

// No replacement: the suffix is dropped and counted; the next publication
// carries data-loss.
TEST(RingWriterRelocationTest, NoReplacementDropsSuffix) {
  TestRing ring(256, 2);
  RingWriter::Options opts = MakePerChunkOptions();
  opts.claim_budget = 1;
  RingWriter w(ring.view(), opts);
  ASSERT_TRUE(WritePacket(&w, "lost!"));  // position 0
  // Another writer holds position 1 (its chunk is empty Complete).
  ring.set_write_pos(2);
  ring.set_word(1, MakeDataWord(ChunkState::kComplete, 0,
                                shm_ring::kNoChunkFlags, 0, 99));
  TestRingReader reader(ring.view());
  ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kSkipped);  // scrape
  ASSERT_TRUE(w.Flush(nullptr));  // the packet was closed; only it is lost
  EXPECT_EQ(w.stats().suffixes_dropped, 1u);
  EXPECT_EQ(w.stats().dropped_suffix_bytes, 5u);
  EXPECT_EQ(w.stats().relocations, 0u);
  // Position 2 maps to chunk 0, still Acknowledged: burned.
  EXPECT_EQ(w.stats().burned_positions, 1u);
  EXPECT_EQ(w.stats().no_chunk_available, 1u);
  EXPECT_EQ(ring.word(0), MakeAcknowledged());
  EXPECT_FALSE(w.holds_chunk());
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_TRUE(chunks.empty());
  ASSERT_TRUE(WritePacket(&w, "next"));
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].flags, kFlagDataLoss);
  EXPECT_EQ(chunks[0].fragments, std::vector<std::string>{"next"});
}

// No replacement for an open fragment: the open packet is lost too.
TEST(RingWriterRelocationTest, NoReplacementDropsOpenPacket) {
  TestRing ring(256, 2);
  RingWriter::Options opts = MakeOptions();
  opts.claim_budget = 1;
  RingWriter w(ring.view(), opts);
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  *span.wptr++ = 'z';
  ring.set_write_pos(2);
  ring.set_word(1, MakeDataWord(ChunkState::kComplete, 0,
                                shm_ring::kNoChunkFlags, 0, 99));
  TestRingReader reader(ring.view());
  ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kSkipped);
  EXPECT_FALSE(w.Flush(&span));
  EXPECT_FALSE(w.fragment_open());
  EXPECT_EQ(w.stats().suffixes_dropped, 1u);
  EXPECT_EQ(w.stats().dropped_suffix_bytes, 1u);
  EXPECT_GE(w.stats().loss_events, 1u);
}

struct ScrapeOnClaim {
  TestRingReader* reader;
  bool enabled = false;
  int scrapes = 0;
  static void Hook(void* arg, RingWriter::TestStep step, uint32_t) {
    auto* self = static_cast<ScrapeOnClaim*>(arg);
    if (!self->enabled || step != RingWriter::TestStep::kClaimed)
      return;
    // The reader reaches the fresh replacement before its publication.
    while (self->reader->ResolveOne(nullptr) == ResolveResult::kSkipped) {
    }
    self->scrapes++;
  }
};

// A replacement scraped at n = 0 again and again: relocation is bounded per
// packet, then the suffix is dropped with the loss recorded.
TEST(RingWriterRelocationTest, RelocationIsBoundedPerPacket) {
  TestRing ring(256, 16);
  RingWriter::Options opts = MakePerChunkOptions();
  opts.max_relocations_per_packet = 3;
  RingWriter w(ring.view(), opts);
  TestRingReader reader(ring.view());
  ScrapeOnClaim scraper{&reader};
  w.SetStepHookForTesting(&ScrapeOnClaim::Hook, &scraper);
  ASSERT_TRUE(WritePacket(&w, "doomed"));
  ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kSkipped);
  scraper.enabled = true;
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(w.stats().relocations, 3u);
  EXPECT_EQ(scraper.scrapes, 3);
  EXPECT_EQ(w.stats().suffixes_dropped, 1u);
  EXPECT_EQ(w.stats().dropped_suffix_bytes, 6u);
  EXPECT_FALSE(w.holds_chunk());
  for (uint32_t i = 0; i < 4; i++)
    EXPECT_EQ(ring.word(i), MakeAcknowledged()) << i;
  scraper.enabled = false;
  ASSERT_TRUE(WritePacket(&w, "ok"));
  ASSERT_TRUE(w.Flush(nullptr));
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].flags, kFlagDataLoss);
  EXPECT_EQ(Reassemble(chunks, kWid), std::vector<std::string>{"ok"});
}

// A CAS returning anything but RewriteRequested(us, n) is a protocol error:
// stop using the chunk, record the loss, never touch it again.
TEST(RingWriterRelocationTest, UnexpectedWordIsAProtocolError) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakePerChunkOptions());
  ASSERT_TRUE(WritePacket(&w, "p0"));
  const StateWord bogus =
      Word(ChunkState::kRewriteRequested, kNoChunkFlags, 5);  // n!=0
  ring.set_word(0, bogus);
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(w.stats().protocol_errors, 1u);
  EXPECT_EQ(w.stats().loss_events, 1u);
  EXPECT_EQ(ring.word(0), bogus);
  EXPECT_FALSE(w.holds_chunk());
  ASSERT_TRUE(WritePacket(&w, "p1"));
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(ring.word(0), bogus);
  EXPECT_EQ(ring.word(1), Word(ChunkState::kComplete, kFlagDataLoss, 1));
}

TEST(RingWriterRelocationTest, OtherWritersWordIsAProtocolError) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakeOptions());
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  const StateWord other = MakeDataWord(ChunkState::kRewriteRequested, 0,
                                       shm_ring::kNoChunkFlags, 0, kWid + 1);
  ring.set_word(0, other);
  EXPECT_FALSE(w.Flush(&span));
  EXPECT_EQ(w.stats().protocol_errors, 1u);
  EXPECT_FALSE(w.fragment_open());
  EXPECT_EQ(ring.word(0), other);
}

// Spec 5.2 "publish versus scrape", writer wins: the reader's mark CAS fails
// and it redispatches on Complete; nothing is relocated, nothing duplicated.
TEST(RingWriterRelocationTest, PublishWinsAgainstScrape) {
  TestRing ring(256, 4);
  RingWriter w(ring.view(), MakePerChunkOptions());
  ASSERT_TRUE(WritePacket(&w, "p0"));
  TestRingReader reader(ring.view());
  bool published = false;
  reader.set_before_cas_hook([&](uint32_t, StateWord seen) {
    if (GetState(seen) == ChunkState::kAcquired && !published) {
      published = true;
      ASSERT_TRUE(w.Flush(nullptr));
    }
  });
  ReadChunk c;
  ASSERT_EQ(reader.ResolveOne(&c), ResolveResult::kEmitted);
  EXPECT_TRUE(published);
  EXPECT_FALSE(c.scraped);
  EXPECT_EQ(c.fragments, std::vector<std::string>{"p0"});
  EXPECT_EQ(w.stats().relocations, 0u);
  EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
}

// Writes |word| into the chunk at the step |when|: a hostile (or broken)
// reader acting between two writer steps.
struct HostileAtStep {
  TestRing* ring;
  RingWriter::TestStep when;
  StateWord word;
  int calls = 0;
  static void Hook(void* arg, RingWriter::TestStep step, uint32_t position) {
    auto* self = static_cast<HostileAtStep*>(arg);
    if (step != self->when)
      return;
    self->calls++;
    self->ring->set_word(self->ring->view().geometry().ChunkIndex(position),
                         self->word);
  }
};

// Spec 5.4 "Acknowledge -- CAS fails --> protocol error": after the writer
// copied its suffix, the word is no longer RewriteRequested(us, n). The
// writer records the loss, never touches the chunk again, and the next
// packet starts in a new chunk carrying data-loss. (The other outcome, the
// acknowledge succeeding, is FinalizedSuffixAfterNonEmptyPrefix.)
TEST(RingWriterRelocationTest, FailedAcknowledgeIsAProtocolError) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakePerChunkOptions());
  ASSERT_TRUE(WritePacket(&w, "p0"));
  ASSERT_TRUE(w.Flush(nullptr));
  ASSERT_TRUE(WritePacket(&w, "p1"));  // reuse; closed, unpublished
  TestRingReader reader(ring.view());
  ReadChunk prefix;
  ASSERT_EQ(reader.ResolveOne(&prefix), ResolveResult::kEmitted);  // RR(w,1)
  const StateWord hostile = MakeFreeForWrap(5);
  HostileAtStep hook{&ring, RingWriter::TestStep::kBeforeAcknowledge, hostile};
  w.SetStepHookForTesting(&HostileAtStep::Hook, &hook);
  ASSERT_TRUE(w.Flush(nullptr));  // publish fails: copy, then the ack fails
  EXPECT_EQ(hook.calls, 1);
  EXPECT_EQ(w.stats().protocol_errors, 1u);
  EXPECT_EQ(w.stats().relocations, 0u);
  EXPECT_EQ(w.stats().loss_events, 1u);
  EXPECT_EQ(w.stats().dropped_suffix_bytes, 2u);
  EXPECT_EQ(w.stats().dropped_closed_bytes, 2u);
  EXPECT_FALSE(w.holds_chunk());
  EXPECT_EQ(ring.word(0), hostile);
  w.SetStepHookForTesting(nullptr, nullptr);
  ASSERT_TRUE(WritePacket(&w, "p2"));
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(ring.word(0), hostile);  // never touched again
  EXPECT_EQ(w.held_position(), 1u);
  EXPECT_EQ(ring.word(1), Word(ChunkState::kComplete, kFlagDataLoss, 1));
}

// The same with an open fragment (Flush while a packet is open): the open
// packet is lost with the chunk and the encoder must drop the rest.
TEST(RingWriterRelocationTest, FailedAcknowledgeWithOpenFragment) {
  TestRing ring(256, 8);
  RingWriter w(ring.view(), MakeOptions());
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  memcpy(span.wptr, "abc", 3);
  span.wptr += 3;
  TestRingReader reader(ring.view());
  ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kSkipped);  // RR(w,0)
  HostileAtStep hook{&ring, RingWriter::TestStep::kBeforeAcknowledge,
                     MakeAcknowledged()};
  w.SetStepHookForTesting(&HostileAtStep::Hook, &hook);
  EXPECT_FALSE(w.Flush(&span));
  EXPECT_EQ(hook.calls, 1);
  EXPECT_FALSE(w.fragment_open());
  EXPECT_EQ(w.stats().protocol_errors, 1u);
  EXPECT_EQ(w.stats().dropped_suffix_bytes, 3u);
  EXPECT_EQ(w.stats().dropped_closed_bytes, 0u);
  EXPECT_EQ(w.stats().chunks_claimed, 1u);  // no replacement was sought
}

// Loses the write_pos CAS |races| times: "another writer" reserves between
// the writer's sample and its CAS.
struct ReserveRacer {
  TestRing* ring;
  uint32_t races;
  uint32_t calls = 0;
  static void Hook(void* arg, RingWriter::TestStep step, uint32_t) {
    auto* self = static_cast<ReserveRacer*>(arg);
    if (step != RingWriter::TestStep::kBeforeReserveCas)
      return;
    if (self->calls++ < self->races)
      self->ring->set_write_pos(self->ring->write_pos() + 1);
  }
};

// max_reserve_races bounds the lost reservation races of one acquisition
// exactly: that many are tolerated; one more ends it as NoChunkAvailable
// without reserving, burning or spending claim budget.
TEST(RingWriterRelocationTest, ReserveRacesAreBoundedExactly) {
  for (const uint32_t races : {3u, 4u}) {
    SCOPED_TRACE(races);
    TestRing ring(256, 16);
    RingWriter::Options opts = MakeOptions();
    opts.max_reserve_races = 3;
    RingWriter w(ring.view(), opts);
    ReserveRacer racer{&ring, races};
    w.SetStepHookForTesting(&ReserveRacer::Hook, &racer);
    RingWriter::Span span;
    const bool ok = w.BeginPacket(&span);
    EXPECT_EQ(w.stats().reserve_races, races);
    EXPECT_EQ(w.stats().burned_positions, 0u);
    if (races == 3) {
      // The fourth CAS wins: the position after the racers' three.
      ASSERT_TRUE(ok);
      EXPECT_EQ(racer.calls, 4u);
      EXPECT_EQ(w.held_position(), 3u);
      EXPECT_EQ(ring.write_pos(), 4u);
      w.EndPacket(span.wptr);
    } else {
      EXPECT_FALSE(ok);
      EXPECT_EQ(racer.calls, 4u);  // gave up after the fourth lost race
      EXPECT_EQ(w.stats().no_chunk_available, 1u);
      EXPECT_EQ(w.stats().loss_events, 1u);
      EXPECT_EQ(ring.write_pos(), 4u);  // only the racers reserved
      EXPECT_FALSE(w.holds_chunk());
    }
  }
}

// Scrapes the first |budget| fresh chunks right after their claim.
struct ScrapeFirstClaims {
  TestRingReader* reader;
  int budget;
  static void Hook(void* arg, RingWriter::TestStep step, uint32_t) {
    auto* self = static_cast<ScrapeFirstClaims*>(arg);
    if (step != RingWriter::TestStep::kClaimed || self->budget == 0)
      return;
    self->budget--;
    while (self->reader->ResolveOne(nullptr) == ResolveResult::kSkipped) {
    }
  }
};

// The relocation bound is per packet: relocations spent while BeginPacket()
// retires the previous chunk (they move earlier packets) do not count
// against the new packet.
TEST(RingWriterRelocationTest, RetireRelocationsDoNotCountAgainstNextPacket) {
  TestRing ring(256, 16);
  RingWriter::Options opts = MakePerChunkOptions();
  opts.max_relocations_per_packet = 2;
  RingWriter w(ring.view(), opts);
  TestRingReader reader(ring.view());
  ASSERT_TRUE(WritePacket(&w, Pattern(249, 'f')));  // fills chunk 0
  ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kSkipped);  // scrape
  ScrapeFirstClaims scraper{&reader, 1};
  w.SetStepHookForTesting(&ScrapeFirstClaims::Hook, &scraper);
  // Retiring chunk 0 relocates its packet twice (the first replacement is
  // scraped too), then the new packet opens in a fresh chunk.
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  EXPECT_EQ(w.stats().relocations, 2u);
  EXPECT_EQ(w.stats().suffixes_dropped, 0u);
  memcpy(span.wptr, "new", 3);
  span.wptr += 3;
  // The reader scrapes the new packet's chunk: its first relocation is
  // within its own allowance.
  ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kEmitted);  // 249 B
  ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kSkipped);  // n = 0
  ASSERT_TRUE(w.Flush(&span));
  EXPECT_EQ(w.stats().relocations, 3u);
  EXPECT_EQ(w.stats().suffixes_dropped, 0u);
  w.EndPacket(span.wptr);
  ASSERT_TRUE(w.Flush(nullptr));
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid), std::vector<std::string>{"new"});
  EXPECT_EQ(w.stats().loss_events, 0u);
}

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
