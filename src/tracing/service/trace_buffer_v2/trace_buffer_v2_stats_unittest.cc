/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2: where loss bits land, every stats() counter, memory
// accounting, clone depth and the debug-build chunk checksum.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ringtrace/logging.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2_test_utils.h"

namespace ringtrace {
namespace trace_buffer {
namespace {

using test::Data;
using test::Pkt;
using test::ReadPacket;
using test::RP;
using Policy = TraceBufferV2::OverwritePolicy;

constexpr TBChunkFlags kOnNext = kChunkContinuesOnNext;
constexpr TBChunkFlags kFromPrev = kChunkContinuesFromPrev;
constexpr TBChunkFlags kPatch = kChunkNeedsPatching;
constexpr uint32_t kCorruptedGap =
    kDataLossPresent | kDataLossChunkCorrupted | kDataLossReadGap;

// Fragment bytes so that a chunk with one fragment has outer size |outer|.
std::string OneFragChunk(const std::string& tag, size_t outer) {
  return Pkt(tag, outer - 16 - 4);
}

class TraceBufferV2StatsTest : public test::TraceBufferV2TestBase {
 protected:
  // A drainer-path chunk the buffer must reject (fragment size too big).
  bool CommitRejected(ProducerID p, WriterID w, ChunkID id) {
    const uint8_t byte = 0;
    FragmentRef frag{&byte, kPacketSizeDropPacket};
    return tb_->CopyChunkFragments(p, {}, w, id, &frag, 1, kNoTBChunkFlags);
  }

  // Reads at most |n| packets of a new pass.
  std::vector<ReadPacket> ReadN(size_t n) {
    std::vector<ReadPacket> out;
    tb_->BeginRead();
    TracePacket packet;
    PacketSequenceProperties props;
    uint32_t loss = 0;
    while (out.size() < n && tb_->ReadNextTracePacket(&packet, &props, &loss))
      out.push_back(RP(props.producer_id_trusted, props.writer_id,
                       packet.GetRawBytesForTesting(), loss));
    return out;
  }
};

// ---- Where loss bits land ---------------------------------------------------

// Weak point (a): the loss of a rejected chunk used to be reported on the
// next packet read, which was written before it.
TEST_F(TraceBufferV2StatsTest, RejectedChunkLossLandsAfterEarlierPackets) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b"}));
  EXPECT_FALSE(CommitRejected(1, 1, 1));
  ASSERT_TRUE(Commit(1, 1, 2, {"c"}));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(1, 1, "a"), RP(1, 1, "b"),
                                             RP(1, 1, "c", kCorruptedGap)}));
  EXPECT_EQ(tb_->stats().abi_violations, 1u);
}

TEST_F(TraceBufferV2StatsTest, RejectedChunkInAnOutOfOrderBatch) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  // Batch (scraping order): 3, rejected 2 (too big for the v1 path), 1.
  ASSERT_TRUE(Commit(1, 1, 3, {"d"}));
  std::vector<uint8_t> huge(kMaxChunkPayloadSize + 1, 0);
  EXPECT_FALSE(CommitRaw(1, 1, 2, huge, 1));
  ASSERT_TRUE(Commit(1, 1, 1, {"b"}));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(1, 1, "a"), RP(1, 1, "b"),
                                             RP(1, 1, "d", kCorruptedGap)}));
}

TEST_F(TraceBufferV2StatsTest, RejectedChunkLossCarriedThroughReassembly) {
  Create(4096);
  // Duplicate of chunk 1 rejected (drainer path): reported from chunk 2 on,
  // which here completes a packet started in chunk 1.
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  ASSERT_TRUE(Commit(1, 1, 1, {"b", "P1"}, kOnNext));
  const std::string x = "x";
  FragmentRef frag{reinterpret_cast<const uint8_t*>(x.data()), 1};
  EXPECT_FALSE(tb_->CopyChunkFragments(1, {}, 1, 1, &frag, 1, kNoTBChunkFlags));
  ASSERT_TRUE(Commit(1, 1, 2, {"P2"}, kFromPrev));
  EXPECT_EQ(Read(),
            (std::vector<ReadPacket>{
                RP(1, 1, "a"), RP(1, 1, "b"),
                RP(1, 1, "P1P2", kDataLossPresent | kDataLossChunkCorrupted)}));
}

// A hostile producer sending endless rejected chunks: the deferred losses of
// its sequence stay bounded, and are merged (reported early), never lost.
TEST_F(TraceBufferV2StatsTest, DeferredLossesAreBounded) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  for (ChunkID id = 1; id <= 20; id++)
    EXPECT_FALSE(CommitRejected(1, 1, id));
  const size_t usage = tb_->GetMemoryUsageBytes();
  for (ChunkID id = 21; id <= 1000; id++)
    EXPECT_FALSE(CommitRejected(1, 1, id));
  EXPECT_EQ(tb_->GetMemoryUsageBytes(), usage);
  ASSERT_TRUE(Commit(1, 1, 1001, {"z"}));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(1, 1, "a"),
                                             RP(1, 1, "z", kCorruptedGap)}));
  EXPECT_EQ(tb_->stats().abi_violations, 1000u);
}

// A chunk that sorts before one the reader already started on is dropped;
// with no chunk consumed before, no ChunkID gap reported it: the next packet
// (after the lost data) does.
TEST_F(TraceBufferV2StatsTest, LateChunkBeforeTheFirstChunkReadIsReported) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 5, {"x", "y"}));
  EXPECT_EQ(ReadN(1), (std::vector<ReadPacket>{RP(1, 1, "x")}));
  EXPECT_FALSE(Commit(1, 1, 4, {"w"}));  // Too late to be read in order.
  EXPECT_EQ(tb_->stats().late_chunks_dropped, 1u);
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{
                        RP(1, 1, "y", kDataLossPresent | kDataLossReadGap)}));
}

// Weak point (d): ChunkIDs need not start at 0, so chunks lost before the
// first one that reached the buffer leave no trace. Documented limitation.
TEST_F(TraceBufferV2StatsTest, LossOfTheFirstChunksIsUndetectable) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 5, {"x"}));  // Chunks 0..4 never arrived.
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(1, 1, "x")}));
  // From then on, gaps are detected.
  ASSERT_TRUE(Commit(1, 1, 7, {"z"}));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{
                        RP(1, 1, "z", kDataLossPresent | kDataLossReadGap)}));
}

// Weak point (b): erasing a chunk whose unread fragments are only empty
// packets loses nothing, with or without observer, on both write paths.
TEST_F(TraceBufferV2StatsTest, ErasingOnlyEmptyUnreadPacketsIsNoLoss) {
  // drainer: 0 = v1 commit, 1 = drainer path, 2 = v1 scrape + recommit.
  for (int drainer = 0; drainer < 3; drainer++) {
    for (int observer = 0; observer < 2; observer++) {
      SCOPED_TRACE(testing::Message() << drainer << observer);
      Create(4096);
      size_t observed = 0;
      if (observer) {
        tb_->set_overwrite_observer([&](const PacketSequenceProperties&,
                                        const TracePacket&) { observed++; });
      }
      // Chunk 0: 16 + 44 + 4 + 4 bytes (or 60 if the empty ones are not
      // stored).
      const std::string a = Pkt("a", 40);
      if (drainer == 2) {
        ASSERT_TRUE(Commit(1, 1, 0, {a, "", ""}, kNoTBChunkFlags, false));
        ASSERT_TRUE(Commit(1, 1, 0, {a, "", ""}, kNoTBChunkFlags, true));
      } else if (drainer) {
        FragmentRef frags[] = {{reinterpret_cast<const uint8_t*>(a.data()), 40},
                               {nullptr, 0},
                               {nullptr, 0}};
        ASSERT_TRUE(
            tb_->CopyChunkFragments(1, {}, 1, 0, frags, 3, kNoTBChunkFlags));
      } else {
        ASSERT_TRUE(Commit(1, 1, 0, {a, "", ""}));
      }
      EXPECT_EQ(ReadN(1), (std::vector<ReadPacket>{RP(1, 1, a)}));
      // Does not fit after chunk 0: wraps and erases it. Then "b" fits in
      // [4072, 4096).
      ASSERT_TRUE(Commit(2, 1, 0, {OneFragChunk("B", 4072)}));
      EXPECT_EQ(tb_->stats().write_wrap_count, 1u);
      ASSERT_TRUE(Commit(1, 1, 1, {"b"}));
      EXPECT_EQ(tb_->stats().write_wrap_count, 1u);
      EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(2, 1, Pkt("B", 4052)),
                                                 RP(1, 1, "b")}));
      EXPECT_EQ(tb_->stats().chunks_overwritten, 0u);
      EXPECT_EQ(tb_->stats().bytes_overwritten, 0u);
      EXPECT_EQ(observed, 0u);
    }
  }
}

// An empty packet that starts a fragmented one is not trimmed: losing it
// loses the packet.
TEST_F(TraceBufferV2StatsTest, EmptyStartOfAFragmentedPacketStillCounts) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {Pkt("a", 40), ""}, kOnNext));  // 64 bytes.
  EXPECT_EQ(ReadN(1).size(), 1u);
  ASSERT_TRUE(Commit(2, 1, 0, {OneFragChunk("B", 4064)}));  // Erases it.
  ASSERT_TRUE(Commit(1, 1, 1, {"tail", "b"}, kFromPrev));   // 32 bytes.
  EXPECT_EQ(tb_->stats().write_wrap_count, 1u);
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{
                        RP(2, 1, Pkt("B", 4044)),
                        RP(1, 1, "b", kDataLossPresent | kDataLossOverwrite)}));
  EXPECT_EQ(tb_->stats().chunks_overwritten, 1u);
}

// ---- One test per counter ---------------------------------------------------

TEST_F(TraceBufferV2StatsTest, BytesWrittenAndChunksWritten) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"abc"}));  // 16 + 4 + 3 -> 24.
  const std::string de = "de";
  FragmentRef frag{reinterpret_cast<const uint8_t*>(de.data()), 2};
  ASSERT_TRUE(tb_->CopyChunkFragments(1, {}, 1, 1, &frag, 1,
                                      kNoTBChunkFlags));  // 24.
  EXPECT_FALSE(CommitRejected(1, 1, 2));
  EXPECT_EQ(tb_->stats().bytes_written, 48u);
  EXPECT_EQ(tb_->stats().chunks_written, 2u);
  // A scraped chunk stores its whole payload; its recommit rewrites the
  // payload bytes not consumed yet (all 32 here).
  ASSERT_TRUE(Commit(1, 1, 3, {"x", "y"}, kNoTBChunkFlags, false, 32));
  ASSERT_TRUE(Commit(1, 1, 3, {"x", "y"}, kNoTBChunkFlags, true, 32));
  EXPECT_EQ(tb_->stats().bytes_written, 48u + 48u + 32u);
  EXPECT_EQ(tb_->stats().chunks_written, 3u);
  EXPECT_EQ(tb_->stats().chunks_rewritten, 1u);
}

TEST_F(TraceBufferV2StatsTest, ChunksRewritten) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b"}, kNoTBChunkFlags, false, 64));
  EXPECT_EQ(tb_->stats().chunks_rewritten, 0u);
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b"}, kNoTBChunkFlags, false,
                     64));  // Scraped again.
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b"}, kNoTBChunkFlags, true, 64));
  EXPECT_EQ(tb_->stats().chunks_rewritten, 2u);
  EXPECT_FALSE(Commit(1, 1, 0, {"a", "b"}, kNoTBChunkFlags, true,
                      64));  // Now complete.
  EXPECT_EQ(tb_->stats().chunks_rewritten, 2u);
}

TEST_F(TraceBufferV2StatsTest, BytesAndChunksOverwritten) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {OneFragChunk("a", 2048)}));
  ASSERT_TRUE(Commit(1, 1, 1, {OneFragChunk("b", 2048)}));
  ASSERT_TRUE(Commit(2, 1, 0, {OneFragChunk("c", 1024)}));  // Erases (1,1,0).
  EXPECT_EQ(tb_->stats().chunks_overwritten, 1u);
  EXPECT_EQ(tb_->stats().bytes_overwritten, 2048u);
  // Chunks fully read are recycled without counting, also when the read pass
  // stopped right after their last packet (not popped yet).
  EXPECT_EQ(ReadN(1).size(), 1u);  // (1,1,1)'s only packet.
  ASSERT_TRUE(Commit(2, 1, 1, {OneFragChunk("d", 2048)}));  // Erases it.
  EXPECT_EQ(tb_->stats().chunks_overwritten, 1u);
  EXPECT_EQ(tb_->stats().bytes_overwritten, 2048u);
}

TEST_F(TraceBufferV2StatsTest, BytesRead) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"abc", "de", "P1"}, kOnNext));
  ASSERT_TRUE(Commit(1, 1, 1, {"P22"}, kFromPrev));
  EXPECT_EQ(Read().size(), 3u);
  EXPECT_EQ(tb_->stats().bytes_read, 3u + 2u + 5u);
}

TEST_F(TraceBufferV2StatsTest, PaddingBytesWrittenAndCleared) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {OneFragChunk("a", 2048)}));
  ASSERT_TRUE(Commit(1, 1, 1, {OneFragChunk("b", 2048)}));
  EXPECT_EQ(tb_->stats().padding_bytes_written, 0u);
  // Wraps; erases 2048 bytes for 1024: the other 1024 become padding.
  ASSERT_TRUE(Commit(1, 1, 2, {OneFragChunk("c", 1024)}));
  EXPECT_EQ(tb_->stats().padding_bytes_written, 1024u);
  EXPECT_EQ(tb_->stats().padding_bytes_cleared, 0u);
  // [1024, 3072): clears that padding, cuts "b" (1024 more of padding).
  ASSERT_TRUE(Commit(1, 1, 3, {OneFragChunk("d", 2048)}));
  EXPECT_EQ(tb_->stats().padding_bytes_cleared, 1024u);
  EXPECT_EQ(tb_->stats().padding_bytes_written, 2048u);
  // An aborted two-phase chunk becomes padding too.
  uint32_t size = 10;  // 16 + 4 + 10 -> 32 bytes.
  ASSERT_NE(tb_->BeginChunkFragments(1, {}, 1, 4, &size, 1, kNoTBChunkFlags),
            nullptr);
  const uint64_t before_abort = tb_->stats().padding_bytes_written;
  tb_->AbortPendingChunk();
  EXPECT_EQ(tb_->stats().padding_bytes_written, before_abort + 32u);
}

TEST_F(TraceBufferV2StatsTest, ChunksDiscarded) {
  Create(4096, Policy::kDiscard);
  ASSERT_TRUE(Commit(1, 1, 0, {OneFragChunk("a", 4000)}));
  EXPECT_EQ(tb_->stats().chunks_discarded, 0u);
  EXPECT_FALSE(Commit(1, 1, 1, {OneFragChunk("b", 200)}));
  EXPECT_FALSE(Commit(1, 1, 2, {"c"}));
  EXPECT_EQ(tb_->stats().chunks_discarded, 2u);
}

// The packets a full DISCARD buffer loses in the drainer-path chunks it
// rejects, counted where it rejects them: whole packets at once, a packet
// going on past a rejected chunk once its end is offered, a packet its
// rejected continuation belonged to (its head was admitted), and only the
// fragments not offered before when the drainer offers a chunk again.
TEST_F(TraceBufferV2StatsTest, PacketsDiscarded) {
  Create(4096, Policy::kDiscard);
  const std::string big = OneFragChunk("a", 4096);  // The whole buffer.
  const std::string x = "x";
  FragmentRef head = {reinterpret_cast<const uint8_t*>(big.data()),
                      static_cast<uint32_t>(big.size())};
  FragmentRef small[] = {{reinterpret_cast<const uint8_t*>(x.data()), 1},
                         {reinterpret_cast<const uint8_t*>(x.data()), 1},
                         {reinterpret_cast<const uint8_t*>(x.data()), 1}};
  // Writer 1: its packet's head is admitted and fills the buffer.
  ASSERT_TRUE(tb_->CopyChunkFragments(1, {}, 1, 0, &head, 1, kOnNext));
  const TraceBufferStats& st = tb_->stats();
  // Its continuation is rejected: that packet, and one more whole.
  EXPECT_FALSE(tb_->CopyChunkFragments(1, {}, 1, 1, small, 2, kFromPrev));
  EXPECT_EQ(st.chunks_discarded, 1u);
  EXPECT_EQ(st.packets_discarded, 2u);
  // Writer 2: two whole packets and one going on, rejected: 2 now.
  EXPECT_FALSE(tb_->CopyChunkFragments(2, {}, 1, 0, small, 3, kOnNext));
  EXPECT_EQ(st.packets_discarded, 4u);
  // Offered again, grown by nothing: nothing more.
  EXPECT_FALSE(tb_->CopyChunkFragments(2, {}, 1, 0, small, 3, kOnNext));
  EXPECT_EQ(st.packets_discarded, 4u);
  // Its next chunk ends the open packet: it counts now, once.
  EXPECT_FALSE(tb_->CopyChunkFragments(2, {}, 1, 1, small, 1, kFromPrev));
  EXPECT_EQ(st.packets_discarded, 5u);
  EXPECT_EQ(st.chunks_discarded, 4u);
}

TEST_F(TraceBufferV2StatsTest, PacketsDiscardedIsDiscardOnly) {
  Create(4096, Policy::kOverwrite);
  const std::string a = OneFragChunk("a", 2000);
  FragmentRef frag = {reinterpret_cast<const uint8_t*>(a.data()),
                      static_cast<uint32_t>(a.size())};
  for (ChunkID id = 0; id < 4; id++)
    ASSERT_TRUE(
        tb_->CopyChunkFragments(1, {}, 1, id, &frag, 1, kNoTBChunkFlags));
  EXPECT_EQ(tb_->stats().chunks_discarded, 0u);
  EXPECT_EQ(tb_->stats().packets_discarded, 0u);
}

TEST_F(TraceBufferV2StatsTest, ChunksRead) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b"}));
  ASSERT_TRUE(Commit(1, 1, 1, {"c"}));
  EXPECT_EQ(ReadN(1).size(), 1u);
  EXPECT_EQ(tb_->stats().chunks_read, 0u);  // Chunk 0 is half read.
  EXPECT_EQ(Read().size(), 2u);
  EXPECT_EQ(tb_->stats().chunks_read, 2u);
}

// The chunks' stored size, headers included, once fully read (Perfetto's
// BufferStats.bytes_read); not the packet bytes of bytes_read.
TEST_F(TraceBufferV2StatsTest, ChunkBytesRead) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"abc"}));  // 16 + 4 + 3 -> 24.
  ASSERT_TRUE(Commit(1, 1, 1, {"a", "b"}));
  const uint64_t second = tb_->stats().bytes_written - 24u;
  EXPECT_EQ(ReadN(2).size(), 2u);
  EXPECT_EQ(tb_->stats().chunk_bytes_read, 24u);  // Chunk 1 is half read.
  EXPECT_EQ(Read().size(), 1u);
  EXPECT_EQ(tb_->stats().chunk_bytes_read, 24u + second);
  EXPECT_EQ(tb_->stats().chunk_bytes_read, tb_->stats().bytes_written);
  EXPECT_EQ(tb_->stats().bytes_read, 5u);
}

TEST_F(TraceBufferV2StatsTest, ChunksCommittedOutOfOrder) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 2, {"c"}));
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));  // Before the front.
  ASSERT_TRUE(Commit(1, 1, 1, {"b"}));  // In the middle.
  ASSERT_TRUE(Commit(1, 1, 3, {"d"}));  // In order.
  EXPECT_EQ(tb_->stats().chunks_committed_out_of_order, 2u);
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST_F(TraceBufferV2StatsTest, WriteWrapCount) {
  Create(4096);
  for (ChunkID id = 0; id < 4; id++)
    ASSERT_TRUE(Commit(1, 1, id, {OneFragChunk("a", 1024)}));
  EXPECT_EQ(tb_->stats().write_wrap_count, 0u);  // Exactly full.
  ASSERT_TRUE(Commit(1, 1, 4, {OneFragChunk("a", 1024)}));
  EXPECT_EQ(tb_->stats().write_wrap_count, 1u);
  for (ChunkID id = 5; id < 9; id++)
    ASSERT_TRUE(Commit(1, 1, id, {OneFragChunk("a", 1024)}));
  EXPECT_EQ(tb_->stats().write_wrap_count, 2u);
}

TEST_F(TraceBufferV2StatsTest, PatchesSucceededAndFailed) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {std::string(12, '\0')}, kOnNext | kPatch));
  TraceBufferV2::Patch patches[2];
  patches[0].offset_untrusted = 4;
  memcpy(patches[0].data, "ABCD", 4);
  patches[1].offset_untrusted = 12;
  memcpy(patches[1].data, "EFGH", 4);
  ASSERT_TRUE(tb_->TryPatchChunkContents(1, 1, 0, patches, 2, false));
  EXPECT_EQ(tb_->stats().patches_succeeded, 2u);  // Patches, not calls.
  EXPECT_EQ(tb_->stats().patches_failed, 0u);
  EXPECT_FALSE(tb_->TryPatchChunkContents(1, 1, 9, patches, 1, false));
  EXPECT_EQ(tb_->stats().patches_failed, 1u);
  ASSERT_TRUE(Commit(1, 1, 1, {"tail"}, kFromPrev));
  EXPECT_EQ(
      Data(Read()),
      (std::vector<std::string>{std::string("ABCD\0\0\0\0EFGH", 12) + "tail"}));
  // Read: the chunk is gone.
  EXPECT_FALSE(tb_->TryPatchChunkContents(1, 1, 0, patches, 1, false));
  EXPECT_EQ(tb_->stats().patches_failed, 2u);
  EXPECT_EQ(tb_->stats().patches_succeeded, 2u);
}

TEST_F(TraceBufferV2StatsTest, AbiViolations) {
  Create(4096);
  std::vector<uint8_t> payload = test::MakePayload({"good"});
  payload.push_back(0x7f);  // Declares 127 bytes, has none.
  ASSERT_TRUE(CommitRaw(1, 1, 0, payload, 2));
  EXPECT_EQ(tb_->stats().abi_violations, 1u);
  EXPECT_FALSE(CommitRejected(1, 1, 1));
  EXPECT_EQ(tb_->stats().abi_violations, 2u);
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(1, 1, "good")}));
}

TEST_F(TraceBufferV2StatsTest, TraceWriterPacketLoss) {
  Create(4096);
  std::vector<uint8_t> payload = test::MakePayload({"a"});
  test::AppendDropMarker(&payload);
  test::AppendFragment(&payload, "b");
  ASSERT_TRUE(CommitRaw(1, 1, 0, payload, 3));
  EXPECT_EQ(tb_->stats().trace_writer_packet_loss, 0u);  // Counted on read.
  EXPECT_EQ(Read(),
            (std::vector<ReadPacket>{
                RP(1, 1, "a"),
                RP(1, 1, "b", kDataLossPresent | kDataLossWriterAbort)}));
  EXPECT_EQ(tb_->stats().trace_writer_packet_loss, 1u);
}

// ---- Memory, sequences, clone, checksum -------------------------------------

TEST_F(TraceBufferV2StatsTest, ManyShortLivedSequencesStayBounded) {
  Create(1 << 20);
  // The memory usage less the buffer pages committed (they grow with the
  // data: 1 MiB, not wrapped yet): the bookkeeping.
  auto bookkeeping = [this] {
    return tb_->GetMemoryUsageBytes() -
           std::max(tb_->used_size(), tb_->committed_ahead());
  };
  size_t bookkeeping_after_round_2 = 0;
  WriterID w = 0;
  for (int round = 0; round < 10; round++) {
    for (int i = 0; i < 3000; i++) {
      w++;  // A new writer each time (30000 in all).
      ASSERT_TRUE(Commit(1, w, 0, {"x"}));
    }
    ASSERT_EQ(Read().size(), 3000u);
    tb_->BeginRead();
    EXPECT_LE(tb_->num_sequences_for_testing(), kKeepLastEmptySeq);
    if (round == 2)
      bookkeeping_after_round_2 = bookkeeping();
  }
  // Up to the rounding of the pages to 4 KiB.
  EXPECT_LE(bookkeeping(), bookkeeping_after_round_2 + 4096);
  // The most recent one still detects a gap.
  ASSERT_TRUE(Commit(1, w, 2, {"y"}));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{
                        RP(1, w, "y", kDataLossPresent | kDataLossReadGap)}));
}

TEST_F(TraceBufferV2StatsTest, CloneIsADeepCopyWithIdenticalReads) {
  Create(8192);
  ASSERT_TRUE(Commit(1, 1, 0, {"a0", "a1"}));
  ASSERT_TRUE(Commit(1, 1, 2, {"a2"}));  // Gap: READ_GAP on a2.
  ASSERT_TRUE(Commit(2, 1, 0, {"b0", "B"}, kOnNext));
  ASSERT_TRUE(Commit(2, 1, 1, {"B", "b2"}, kFromPrev));
  ASSERT_TRUE(Commit(3, 1, 0, {"c0", std::string(8, '\0')}, kOnNext | kPatch));
  EXPECT_EQ(ReadN(1).size(), 1u);  // Half-read chunk.
  std::unique_ptr<TraceBufferV2> clone1 = tb_->CloneReadOnly();
  std::unique_ptr<TraceBufferV2> clone2 = tb_->CloneReadOnly();
  ASSERT_NE(clone1, nullptr);
  ASSERT_NE(clone2, nullptr);
  const std::vector<ReadPacket> expected = Read();
  EXPECT_EQ(expected.size(), 5u);  // a1, a2 (gap), b0, BB, b2 (c0 stalls).
  EXPECT_EQ(test::ReadAll(clone1.get()), expected);
  // Wipe the original: overwrite all of it, twice.
  for (ChunkID id = 0; id < 16; id++)
    ASSERT_TRUE(Commit(9, 9, id, {OneFragChunk("W", 1024)}));
  EXPECT_EQ(test::ReadAll(clone2.get()), expected);
  EXPECT_EQ(clone2->stats().bytes_written, clone1->stats().bytes_written);
}

// Weak point (c): the design's per-chunk checksum, in debug builds only.
TEST_F(TraceBufferV2StatsTest, DebugChecksumCatchesAStrayWrite) {
#if !RT_DCHECK_IS_ON
  GTEST_SKIP() << "debug builds only";
#else
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"abcd"}));
  tb_->buffer_memory_for_testing()[16 + 4] ^= 1;  // First payload byte.
  EXPECT_DEATH_IF_SUPPORTED(Read(), "");
#endif
}

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
