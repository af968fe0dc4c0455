/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2: RING_BUFFER overwrite (erase-mode readback, the overwrite
// observer, padding), DISCARD, and CloneReadOnly().

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2_test_utils.h"

namespace ringtrace {
namespace trace_buffer {
namespace {

using test::Data;
using test::OuterSize;
using test::Pkt;
using test::ReadPacket;
using test::RP;
using Policy = TraceBufferV2::OverwritePolicy;
using TraceBufferV2OverwriteTest = test::TraceBufferV2TestBase;

constexpr TBChunkFlags kFromPrev = kChunkContinuesFromPrev;
constexpr TBChunkFlags kOnNext = kChunkContinuesOnNext;

// Fragment bytes so that a chunk with one fragment has outer size |outer|.
std::string OneFragChunk(const std::string& tag, size_t outer) {
  return Pkt(tag, outer - 16 - 4);
}

TEST_F(TraceBufferV2OverwriteTest, ObserverSeesPacketsInOrderBeforeReuse) {
  Create(4096);
  struct Seen {
    uint16_t producer;
    std::string data;
  };
  std::vector<Seen> seen;
  tb_->set_overwrite_observer(
      [&](const PacketSequenceProperties& props, const TracePacket& p) {
        // The bytes are still intact when the observer runs.
        seen.push_back({props.producer_id_trusted, p.GetRawBytesForTesting()});
      });
  // Two 2048-byte chunks fill the buffer: seq 1 = {a0, a1}, seq 2 = {b0}.
  const std::string a1 = Pkt("a1", 2048 - 16 - 4 - 4 - 2);
  ASSERT_TRUE(Commit(1, 1, 0, {"a0", a1}));
  ASSERT_TRUE(Commit(2, 1, 0, {OneFragChunk("b0", 2048)}));
  ASSERT_EQ(tb_->used_size(), 4096u);
  EXPECT_TRUE(seen.empty());
  // A 1024-byte chunk wraps over seq 1's chunk.
  ASSERT_TRUE(Commit(3, 1, 0, {OneFragChunk("c0", 1024)}));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].producer, 1);
  EXPECT_EQ(seen[0].data, "a0");
  EXPECT_EQ(seen[1].data, a1);
  const TraceBufferStats& st = tb_->stats();
  EXPECT_EQ(st.write_wrap_count, 1u);
  EXPECT_EQ(st.chunks_overwritten, 1u);
  EXPECT_EQ(st.bytes_overwritten, 2048u);
  // The 1024 bytes left of the erased chunk became padding.
  EXPECT_EQ(st.padding_bytes_written, 1024u);
  // The next chunk clears that padding.
  ASSERT_TRUE(Commit(3, 1, 1, {OneFragChunk("c1", 1024)}));
  EXPECT_EQ(st.padding_bytes_cleared, 1024u);
  EXPECT_EQ(st.chunks_overwritten, 1u);
  // Sequence 1 lost data; the reader is told on its next packet.
  ASSERT_TRUE(Commit(1, 1, 1, {"a2"}));
  std::vector<ReadPacket> got = Read();
  EXPECT_EQ(got.size(), 3u);  // c0, c1, a2 (a2 overwrote b0).
  EXPECT_EQ(got.back(), RP(1, 1, "a2", kDataLossPresent | kDataLossOverwrite));
}

TEST_F(TraceBufferV2OverwriteTest, ReadChunksAreOverwrittenSilently) {
  Create(4096);
  int observed = 0;
  tb_->set_overwrite_observer(
      [&](const PacketSequenceProperties&, const TracePacket&) { observed++; });
  ChunkID id = 0;
  for (int round = 0; round < 10; round++) {
    for (int i = 0; i < 3; i++)
      ASSERT_TRUE(Commit(1, 1, id++, {OneFragChunk("x", 1000)}));
    for (const ReadPacket& p : Read())
      EXPECT_EQ(p.loss, 0u);
  }
  EXPECT_GT(tb_->stats().write_wrap_count, 0u);
  EXPECT_EQ(observed, 0);
  EXPECT_EQ(tb_->stats().chunks_overwritten, 0u);
  EXPECT_EQ(tb_->stats().chunks_read, 30u);
}

TEST_F(TraceBufferV2OverwriteTest,
       EraseReassemblesFragmentedPacketForObserver) {
  Create(4096);
  std::vector<std::string> seen;
  tb_->set_overwrite_observer(
      [&](const PacketSequenceProperties& props, const TracePacket& p) {
        if (props.producer_id_trusted == 1)
          seen.push_back(p.GetRawBytesForTesting());
      });
  // [c0 32][B0 1000][c1 32][B1][B2][B3] = 4064 bytes; B4 wraps and erases
  // [0, 1000): c0 and B0, but not c1.
  ASSERT_TRUE(Commit(1, 1, 0, {"A0", "A1a"}, kOnNext));
  ASSERT_TRUE(Commit(2, 1, 0, {OneFragChunk("B", 1000)}));
  ASSERT_TRUE(Commit(1, 1, 1, {"A1b", "A2"}, kFromPrev));
  for (ChunkID id = 1; id < 5; id++)
    ASSERT_TRUE(Commit(2, 1, id, {OneFragChunk("B", 1000)}));
  // A1 was finished by reading past the erased chunk, consuming only the
  // first fragment of chunk 1; A2 stays for the reader.
  EXPECT_EQ(seen, (std::vector<std::string>{"A0", "A1aA1b"}));
  std::vector<ReadPacket> seq1;
  for (const ReadPacket& p : Read()) {
    if (p.producer_id == 1)
      seq1.push_back(p);
  }
  EXPECT_EQ(seq1, (std::vector<ReadPacket>{
                      RP(1, 1, "A2", kDataLossPresent | kDataLossOverwrite)}));
}

TEST_F(TraceBufferV2OverwriteTest, FragmentChainAcrossWrapAround) {
  Create(4096);
  // Chunks of 1300, 1300 and 1400 bytes end at 4000; the 4th (116 bytes)
  // does not fit and goes to offset 0. A packet starts in chunk 2 (the last
  // before the end) and ends in chunk 3.
  ASSERT_TRUE(Commit(1, 1, 0, {OneFragChunk("x0", 1300)}));
  ASSERT_TRUE(Commit(1, 1, 1, {OneFragChunk("x1", 1300)}));
  EXPECT_EQ(Read().size(), 2u);
  const std::string head = Pkt("P", 1400 - 16 - 4 - 4 - 2);
  const std::string tail = Pkt("tail", 90);
  ASSERT_TRUE(Commit(1, 1, 2, {"x2", head}, kOnNext));
  ASSERT_TRUE(Commit(1, 1, 3, {tail, "x3"}, kFromPrev));
  EXPECT_EQ(tb_->stats().write_wrap_count, 1u);
  EXPECT_EQ(Read(),
            (std::vector<ReadPacket>{RP(1, 1, "x2"), RP(1, 1, head + tail),
                                     RP(1, 1, "x3")}));
  EXPECT_EQ(tb_->stats().chunks_overwritten, 0u);
}

TEST_F(TraceBufferV2OverwriteTest, CloneWhileWrappedWithPadding) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {OneFragChunk("a0", 2048)}));
  ASSERT_TRUE(Commit(2, 1, 0, {OneFragChunk("b0", 2048)}));
  ASSERT_TRUE(Commit(1, 1, 1, {OneFragChunk("a1", 1024)}));  // Wraps, pads.
  ASSERT_TRUE(Commit(2, 1, 1, {"b1", "b2a"}, kOnNext));      // Stalls.
  ASSERT_GT(tb_->stats().padding_bytes_written, 0u);
  ASSERT_EQ(tb_->stats().write_wrap_count, 1u);

  std::unique_ptr<TraceBufferV2> clone = tb_->CloneReadOnly();
  ASSERT_NE(clone, nullptr);
  EXPECT_EQ(clone->size(), tb_->size());
  EXPECT_EQ(clone->used_size(), tb_->used_size());
  EXPECT_EQ(clone->stats().padding_bytes_written,
            tb_->stats().padding_bytes_written);
  // Clones are read-only.
  EXPECT_FALSE(clone->CopyChunkUntrusted(9, {}, 9, 0, 0, kNoTBChunkFlags, true,
                                         nullptr, 0));

  const std::vector<ReadPacket> from_clone = test::ReadAll(clone.get());
  const std::vector<ReadPacket> from_original = Read();
  EXPECT_EQ(from_clone, from_original);
  EXPECT_EQ(Data(from_clone).size(), 3u);  // b0, a1 (with loss), b1.
  // The clone's reads did not consume the original, nor vice versa: both
  // resume independently once the fragmented packet completes.
  ASSERT_TRUE(Commit(2, 1, 2, {"b2b"}, kFromPrev));
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"b2ab2b"}));
  EXPECT_TRUE(test::ReadAll(clone.get()).empty());
}

TEST_F(TraceBufferV2OverwriteTest, DiscardFillsExactlyThenDiscards) {
  Create(4096, Policy::kDiscard);
  for (ChunkID id = 0; id < 4; id++)
    ASSERT_TRUE(Commit(1, 1, id, {OneFragChunk("d", 1024)}));
  EXPECT_EQ(tb_->used_size(), 4096u);
  EXPECT_FALSE(Commit(1, 1, 4, {"x"}));
  EXPECT_EQ(tb_->stats().chunks_discarded, 1u);
  EXPECT_EQ(Read().size(), 4u);
  // Stops at the end of the buffer, whether read or not.
  EXPECT_FALSE(Commit(1, 1, 5, {"y"}));
  EXPECT_EQ(tb_->stats().chunks_discarded, 2u);
  EXPECT_EQ(tb_->stats().chunks_overwritten, 0u);
  EXPECT_EQ(tb_->stats().write_wrap_count, 0u);
  EXPECT_TRUE(Read().empty());
}

TEST_F(TraceBufferV2OverwriteTest, DiscardRejectsChunkThatDoesNotFitTheTail) {
  Create(4096, Policy::kDiscard);
  ASSERT_TRUE(Commit(1, 1, 0, {OneFragChunk("d", 4000)}));
  EXPECT_FALSE(Commit(1, 1, 1, {OneFragChunk("e", 200)}));
  // Once full, even a chunk that would fit is rejected (no reordering).
  EXPECT_FALSE(Commit(1, 1, 2, {"f"}));
  EXPECT_EQ(tb_->stats().chunks_discarded, 2u);
  EXPECT_EQ(Read().size(), 1u);
}

TEST_F(TraceBufferV2OverwriteTest, OutOfOrderChunksErasedInSequenceOrder) {
  Create(4096);
  std::vector<std::string> seen;
  tb_->set_overwrite_observer(
      [&](const PacketSequenceProperties& props, const TracePacket& p) {
        if (props.producer_id_trusted == 1)
          seen.push_back(p.GetRawBytesForTesting().substr(0, 2));
      });
  // Buffer order: c2, c1 (scraping order). Erasing c2 (the oldest in the
  // buffer) first passes c1's packets, which precede it in sequence order.
  ASSERT_TRUE(Commit(1, 1, 2, {OneFragChunk("c2", 1000)}));
  ASSERT_TRUE(Commit(1, 1, 1, {OneFragChunk("c1", 1000)}));
  for (ChunkID id = 0; id < 3; id++)
    ASSERT_TRUE(Commit(2, 1, id, {OneFragChunk("B", 1000)}));
  EXPECT_EQ(seen, (std::vector<std::string>{"c1", "c2"}));
  // Both were erased unread (c1 in sequence order, before c2's space was
  // reused).
  EXPECT_EQ(tb_->stats().chunks_overwritten, 2u);
  EXPECT_EQ(tb_->stats().bytes_overwritten, 2000u);
}

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
