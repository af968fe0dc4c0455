/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Exact packet-loss accounting (TraceWriterV2Stats, RingWriterStats): after
// the writer is quiescent and the reader drained the ring,
//   packets reassembled intact + packets_dropped == packets_begun
// and the intact ones are exactly packets_committed, also when finished
// packets are lost later with a relocated suffix (no replacement chunk, or
// the per-packet relocation bound). Each test drives the reader's scrape at
// a chosen point and makes the replacement unavailable at the exact step
// where the writer looks for it (RingWriter::SetStepHookForTesting).
//
// PacketLossAccountingTest runs the writer with deferred publication
// (Publication::kPerChunkRisksLossOnCrash), where a scrape can catch several
// finished, unpublished packets; PerPacketLossAccountingTest runs the
// default, where a finished packet is published when it ends and the only
// finished packet a scrape can put at risk is the one being published.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ringtrace/trace_writer_v2.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"

namespace ringtrace {
namespace shm_ring {
namespace {

constexpr WriterID kWid = 7;
constexpr uint32_t kChunkSize = 256;
constexpr uint32_t kNumChunks = 8;

// The encoding of a packet holding one bytes field 1 of |size| < 128 bytes.
std::string Encoded(size_t size, char seed) {
  std::string s = "\x0a";
  s.push_back(static_cast<char>(size));
  return s + Pattern(size, seed);
}

class PacketLossAccountingTest : public ::testing::Test {
 protected:
  explicit PacketLossAccountingTest(
      Publication publication = Publication::kPerChunkRisksLossOnCrash)
      : reader_(ring_.view()) {
    TraceWriterV2::Options o;
    o.writer_id = kWid;
    o.target_buffer = 1;
    o.publication = publication;
    writer_ = TraceWriterV2Owner::Create(ring_.view(), o);
    TraceWriterV2Owner::ring_writer_for_testing(writer_.get())
        ->SetStepHookForTesting(&PacketLossAccountingTest::Hook, this);
  }

  // Runs at the writer's protocol steps.
  static void Hook(void* arg, RingWriter::TestStep step, uint32_t) {
    auto* self = static_cast<PacketLossAccountingTest*>(arg);
    if (step == RingWriter::TestStep::kBeforeAcknowledge &&
        self->no_replacement_) {
      // The suffix is in scratch, the old chunk about to be acknowledged:
      // other writers reserve every free position now, so the writer finds
      // the ring Full (kDrop) and must drop the suffix. The reader later
      // skips these positions as holes.
      self->ring_.set_write_pos(self->ring_.read_pos() + kNumChunks);
      self->no_replacement_ = false;
    }
    if (step == RingWriter::TestStep::kClaimed && self->scrape_on_claim_) {
      // The reader reaches every fresh replacement before it is published
      // (a scrape at n = 0), again and again: the relocation bound.
      EXPECT_EQ(self->reader_.DrainAll(&self->chunks_), ResolveResult::kNoData);
      self->claims_scraped_++;
    }
  }

  // A finished packet with a bytes field of |size| bytes.
  void WritePacket(size_t size, char seed) {
    auto p = writer_->NewTracePacket();
    p->AppendBytes(1, Pattern(size, seed).data(), size);
  }

  // The reader resolves positions until it has scraped the writer's
  // Acquired chunk (a prefix, if any, is emitted and kept).
  void ScrapeWritersChunk() {
    const uint32_t target =
        TraceWriterV2Owner::ring_writer(*writer_).held_position();
    ASSERT_TRUE(
        TraceWriterV2Owner::ring_writer(*writer_).holds_acquired_chunk());
    while (reader_.read_pos() != target + 1) {
      ReadChunk c;
      const ResolveResult r = reader_.ResolveOne(&c);
      ASSERT_TRUE(r == ResolveResult::kEmitted || r == ResolveResult::kSkipped)
          << ResolveResultToString(r);
      if (r == ResolveResult::kEmitted)
        chunks_.push_back(c);
    }
    ASSERT_EQ(GetState(ring_.word(ring_.view().geometry().ChunkIndex(target))),
              ChunkState::kRewriteRequested);
  }

  // Writes one more packet after the loss, makes the writer quiescent and
  // drains the ring. Returns the packets the reader reassembled intact.
  std::vector<std::string> FinishAndDrain() {
    no_replacement_ = false;
    scrape_on_claim_ = false;
    EXPECT_EQ(reader_.DrainAll(&chunks_), ResolveResult::kNoData);
    WritePacket(10, 'z');
    writer_->Flush();
    EXPECT_FALSE(writer_->packet_open());
    EXPECT_EQ(reader_.DrainAll(&chunks_), ResolveResult::kNoData);
    TestPacketReassembler r;
    for (const auto& c : chunks_)
      r.Add(c);
    reassembled_ = r.writer(kWid);
    return reassembled_.packets;
  }

  // The exact identity, plus: the intact packets are the committed ones.
  void ExpectExactAccounting(const std::vector<std::string>& delivered,
                             uint64_t expected_dropped) {
    const TraceWriterV2Stats s = writer_->stats();
    EXPECT_EQ(s.packets_dropped, expected_dropped);
    EXPECT_EQ(delivered.size() + s.packets_dropped, s.packets_begun);
    EXPECT_EQ(s.packets_committed, delivered.size());
    const RingWriterStats& r =
        TraceWriterV2Owner::ring_writer(*writer_).stats();
    EXPECT_EQ(r.open_packets_dropped + r.ended_packets_dropped,
              s.packets_dropped);
    // The loss is visible to the reader: the writer's next chunk carries
    // data-loss.
    EXPECT_EQ(reassembled_.data_loss_flags, 1u);
  }

  TestRing ring_{kChunkSize, kNumChunks};
  TestRingReader reader_;
  std::unique_ptr<TraceWriterV2> writer_;
  std::vector<ReadChunk> chunks_;
  TestPacketReassembler::WriterState reassembled_;
  bool no_replacement_ = false;
  bool scrape_on_claim_ = false;
  int claims_scraped_ = 0;
};

// Suffix of one finalized fragment, no open fragment.
TEST_F(PacketLossAccountingTest, OneFinalizedFragment) {
  WritePacket(20, 'a');
  ScrapeWritersChunk();
  no_replacement_ = true;
  writer_->Flush();  // publish fails; relocation finds no chunk
  EXPECT_EQ(TraceWriterV2Owner::ring_writer(*writer_).stats().suffixes_dropped,
            1u);
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().ended_packets_dropped,
      1u);
  EXPECT_EQ(writer_->stats().packets_committed, 0u);
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered, std::vector<std::string>{Encoded(10, 'z')});
  ExpectExactAccounting(delivered, 1);
}

// Suffix of several finalized fragments (one per packet), no open fragment.
TEST_F(PacketLossAccountingTest, SeveralFinalizedFragments) {
  WritePacket(20, 'a');
  WritePacket(30, 'b');
  WritePacket(40, 'c');
  ScrapeWritersChunk();
  no_replacement_ = true;
  writer_->Flush();
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().ended_packets_dropped,
      3u);
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().open_packets_dropped,
      0u);
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered, std::vector<std::string>{Encoded(10, 'z')});
  ExpectExactAccounting(delivered, 3);
}

// Only an open fragment: the open packet is lost (and not counted again when
// the app finishes it).
TEST_F(PacketLossAccountingTest, OpenFragmentOnly) {
  {
    auto p = writer_->NewTracePacket();
    p->AppendBytes(1, "open", 4);
    ScrapeWritersChunk();
    no_replacement_ = true;
    writer_->Flush();
    EXPECT_EQ(writer_->stats().packets_dropped, 1u);
    p->AppendBytes(2, "more", 4);  // swallowed
  }
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().open_packets_dropped,
      1u);
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().ended_packets_dropped,
      0u);
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered, std::vector<std::string>{Encoded(10, 'z')});
  ExpectExactAccounting(delivered, 1);
}

// Several finalized fragments and an open fragment (Flush() with a packet
// open publishes around it; the publication loses to the scrape).
TEST_F(PacketLossAccountingTest, SeveralFinalizedAndOpenFragment) {
  WritePacket(20, 'a');
  WritePacket(30, 'b');
  WritePacket(40, 'c');
  {
    auto p = writer_->NewTracePacket();
    p->AppendBytes(1, "open", 4);
    ScrapeWritersChunk();
    no_replacement_ = true;
    writer_->Flush();
  }
  EXPECT_EQ(TraceWriterV2Owner::ring_writer(*writer_).stats().suffixes_dropped,
            1u);
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().ended_packets_dropped,
      3u);
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().open_packets_dropped,
      1u);
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered, std::vector<std::string>{Encoded(10, 'z')});
  ExpectExactAccounting(delivered, 4);
}

// The reader took a published prefix (n > 0): only the suffix is lost.
TEST_F(PacketLossAccountingTest, PublishedPrefixIsDeliveredSuffixDropped) {
  WritePacket(20, 'a');
  writer_->Flush();      // Complete(1), cached
  WritePacket(30, 'b');  // reuse: Acquired(1)
  WritePacket(40, 'c');
  {
    auto p = writer_->NewTracePacket();
    p->AppendBytes(1, "open", 4);
    ScrapeWritersChunk();  // emits "a"
    no_replacement_ = true;
    writer_->Flush();
  }
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered,
            (std::vector<std::string>{Encoded(20, 'a'), Encoded(10, 'z')}));
  ExpectExactAccounting(delivered, 3);
}

// A packet partly published and then cut off: the head of a two-chunk packet
// was published (and taken by the reader), its last fragment is the first
// one of the dropped suffix. It counts as dropped, once.
TEST_F(PacketLossAccountingTest, TailOfSpanningPacketDropped) {
  {
    auto p = writer_->NewTracePacket();
    const std::string big = Pattern(400, 'L');
    p->AppendBytes(1, big.data(), big.size());
  }
  WritePacket(20, 'b');
  EXPECT_EQ(TraceWriterV2Owner::ring_writer(*writer_).held_position(), 1u);
  ScrapeWritersChunk();  // emits the head at position 0, scrapes position 1
  no_replacement_ = true;
  writer_->Flush();
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().ended_packets_dropped,
      2u);
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered, std::vector<std::string>{Encoded(10, 'z')});
  EXPECT_EQ(reassembled_.broken_chains, 1u);
  ExpectExactAccounting(delivered, 2);
}

// The scrape hits while the open packet moves to the next chunk
// (ContinuePacket): the suffix's last finalized fragment belongs to the open
// packet, which is counted once, as open, not also as ended.
TEST_F(PacketLossAccountingTest, SuffixDroppedWhileContinuing) {
  WritePacket(20, 'a');
  {
    auto p = writer_->NewTracePacket();
    p->AppendBytes(1, "head", 4);
    ScrapeWritersChunk();
    no_replacement_ = true;
    const std::string big = Pattern(400, 'L');
    p->AppendBytes(2, big.data(), big.size());  // overflows the chunk
    EXPECT_EQ(writer_->stats().packets_dropped, 2u);
  }
  EXPECT_EQ(TraceWriterV2Owner::ring_writer(*writer_).stats().suffixes_dropped,
            1u);
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().ended_packets_dropped,
      1u);
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().open_packets_dropped,
      1u);
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered, std::vector<std::string>{Encoded(10, 'z')});
  ExpectExactAccounting(delivered, 2);
}

// The per-packet relocation bound: every replacement is scraped at n = 0
// before it is published, until the suffix is dropped.
TEST_F(PacketLossAccountingTest, RelocationBoundDropsFinalizedFragments) {
  WritePacket(20, 'a');
  WritePacket(30, 'b');
  ScrapeWritersChunk();
  scrape_on_claim_ = true;
  writer_->Flush();
  const RingWriterStats& r = TraceWriterV2Owner::ring_writer(*writer_).stats();
  EXPECT_EQ(r.relocations, 3u);
  EXPECT_EQ(claims_scraped_, 3);
  EXPECT_EQ(r.suffixes_dropped, 1u);
  EXPECT_EQ(r.ended_packets_dropped, 2u);
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered, std::vector<std::string>{Encoded(10, 'z')});
  ExpectExactAccounting(delivered, 2);
}

// The same with an open fragment: each Flush() finds the replacement scraped
// and relocates again, until the bound drops the finished and open packets.
TEST_F(PacketLossAccountingTest, RelocationBoundDropsFinalizedAndOpen) {
  WritePacket(20, 'a');
  {
    auto p = writer_->NewTracePacket();
    p->AppendBytes(1, "open", 4);
    ScrapeWritersChunk();
    scrape_on_claim_ = true;
    for (int i = 0; i < 10 && writer_->stats().packets_dropped == 0; i++)
      writer_->Flush();
    EXPECT_EQ(TraceWriterV2Owner::ring_writer(*writer_).stats().relocations,
              3u);
  }
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().ended_packets_dropped,
      1u);
  EXPECT_EQ(
      TraceWriterV2Owner::ring_writer(*writer_).stats().open_packets_dropped,
      1u);
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered, std::vector<std::string>{Encoded(10, 'z')});
  ExpectExactAccounting(delivered, 2);
}

// A protocol error abandons the chunk: its unpublished finished packets are
// dropped with the open one, each counted once.
TEST_F(PacketLossAccountingTest, ProtocolErrorDropsUnpublishedPackets) {
  WritePacket(20, 'a');
  writer_->Flush();  // published: stays committed
  WritePacket(30, 'b');
  WritePacket(40, 'c');
  {
    auto p = writer_->NewTracePacket();
    p->AppendBytes(1, "open", 4);
    // A hostile reader writes another writer's word into our chunk.
    ring_.set_word(0, MakeDataWord(ChunkState::kRewriteRequested, 0,
                                   shm_ring::kNoChunkFlags, 1, kWid + 1));
    writer_->Flush();
  }
  const RingWriterStats& r = TraceWriterV2Owner::ring_writer(*writer_).stats();
  EXPECT_EQ(r.protocol_errors, 1u);
  EXPECT_EQ(r.ended_packets_dropped, 2u);
  EXPECT_EQ(r.open_packets_dropped, 1u);
  const TraceWriterV2Stats s = writer_->stats();
  EXPECT_EQ(s.packets_begun, 4u);
  EXPECT_EQ(s.packets_dropped, 3u);
  EXPECT_EQ(s.packets_committed, 1u);
}

// Control: with replacements available nothing is lost and every packet is
// committed and delivered.
TEST_F(PacketLossAccountingTest, RelocatedPacketsStayCommitted) {
  WritePacket(20, 'a');
  WritePacket(30, 'b');
  ScrapeWritersChunk();
  writer_->Flush();
  EXPECT_EQ(TraceWriterV2Owner::ring_writer(*writer_).stats().relocations, 1u);
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered,
            (std::vector<std::string>{Encoded(20, 'a'), Encoded(30, 'b'),
                                      Encoded(10, 'z')}));
  const TraceWriterV2Stats s = writer_->stats();
  EXPECT_EQ(s.packets_begun, 3u);
  EXPECT_EQ(s.packets_committed, 3u);
  EXPECT_EQ(s.packets_dropped, 0u);
}

class PerPacketLossAccountingTest : public PacketLossAccountingTest {
 protected:
  PerPacketLossAccountingTest()
      : PacketLossAccountingTest(Publication::kPerPacket) {}
};

// The packet ends while the reader has scraped its chunk and no replacement
// is to be had: the end of the packet (EndPacket()'s publication) finds the
// scrape, and the finished packet is dropped and counted as ended, once.
TEST_F(PerPacketLossAccountingTest, ScrapedAtPacketEndNoReplacement) {
  WritePacket(20, 'a');  // published at its end
  {
    auto p = writer_->NewTracePacket();  // reuses the chunk: Acquired(1)
    p->AppendBytes(1, Pattern(30, 'b').data(), 30);
    ScrapeWritersChunk();  // takes "a", leaves the open packet
    no_replacement_ = true;
  }  // EndPacket(): publish fails, relocation finds no chunk
  const RingWriterStats& r = TraceWriterV2Owner::ring_writer(*writer_).stats();
  EXPECT_EQ(r.relocations, 0u);
  EXPECT_EQ(r.suffixes_dropped, 1u);
  EXPECT_EQ(r.ended_packets_dropped, 1u);
  EXPECT_EQ(r.open_packets_dropped, 0u);
  EXPECT_EQ(writer_->stats().packets_committed, 1u);
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered,
            (std::vector<std::string>{Encoded(20, 'a'), Encoded(10, 'z')}));
  ExpectExactAccounting(delivered, 1);
}

// The relocation bound hit at the end of a packet (kDrop): every
// replacement is scraped at n = 0 before its publication.
TEST_F(PerPacketLossAccountingTest, RelocationBoundAtPacketEnd) {
  {
    auto p = writer_->NewTracePacket();
    p->AppendBytes(1, "open", 4);
    ScrapeWritersChunk();
    scrape_on_claim_ = true;
  }
  const RingWriterStats& r = TraceWriterV2Owner::ring_writer(*writer_).stats();
  EXPECT_EQ(r.relocations, 3u);
  EXPECT_EQ(claims_scraped_, 3);
  EXPECT_EQ(r.suffixes_dropped, 1u);
  EXPECT_EQ(r.ended_packets_dropped, 1u);
  const auto delivered = FinishAndDrain();
  EXPECT_EQ(delivered, std::vector<std::string>{Encoded(10, 'z')});
  ExpectExactAccounting(delivered, 1);
}

// Control: with a replacement the scraped packet is relocated at its end,
// published there, and delivered; nothing needs Flush().
TEST_F(PerPacketLossAccountingTest, ScrapedAtPacketEndIsRelocated) {
  WritePacket(20, 'a');
  {
    auto p = writer_->NewTracePacket();
    p->AppendBytes(1, Pattern(30, 'b').data(), 30);
    ScrapeWritersChunk();
  }
  EXPECT_EQ(TraceWriterV2Owner::ring_writer(*writer_).stats().relocations, 1u);
  EXPECT_FALSE(TraceWriterV2Owner::ring_writer(*writer_)
                   .holds_chunk());  // never reused (7.1)
  std::vector<ReadChunk> more;
  EXPECT_EQ(reader_.DrainAll(&more), ResolveResult::kNoData);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].fragments, std::vector<std::string>{Encoded(30, 'b')});
  EXPECT_EQ(writer_->stats().packets_committed, 2u);
  EXPECT_EQ(writer_->stats().packets_dropped, 0u);
}

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
