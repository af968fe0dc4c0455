/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2: patches, scraped chunks and recommits, the ring drainer
// admission path, lazy cleanup of sequences, hostile input.

#include <gtest/gtest.h>

#include <string.h>

#include <string>
#include <vector>

#include "src/tracing/service/trace_buffer_v2/frag_iterator.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2_test_utils.h"

namespace ringtrace {
namespace trace_buffer {
namespace {

using test::Data;
using test::MakePayload;
using test::Pkt;
using test::ReadPacket;
using test::RP;
using Policy = TraceBufferV2::OverwritePolicy;
using TraceBufferV2WriteTest = test::TraceBufferV2TestBase;

constexpr TBChunkFlags kFromPrev = kChunkContinuesFromPrev;
constexpr TBChunkFlags kOnNext = kChunkContinuesOnNext;
constexpr TBChunkFlags kPatch = kChunkNeedsPatching;

TraceBufferV2::Patch MakePatch(uint32_t offset, const char (&data)[5]) {
  TraceBufferV2::Patch p;
  p.offset_untrusted = offset;
  memcpy(p.data, data, 4);
  return p;
}

// ---- Patches ----------------------------------------------------------------

// Sequence 1: chunk 0 = {"A0", "A1a" + 4 placeholder bytes} needing a patch
// at payload offset 4 + 2 + 4 + 3 = 13; chunk 1 = {"A1b", "A2"}.
class TraceBufferV2PatchTest : public test::TraceBufferV2TestBase {
 protected:
  static constexpr uint32_t kPatchOffset = 13;

  void SetUp() override {
    Create(4096);
    ASSERT_TRUE(Commit(1, 1, 0, {"A0", std::string("A1a\0\0\0\0", 7)},
                       kOnNext | kPatch));
    ASSERT_TRUE(Commit(1, 1, 1, {"A1b", "A2"}, kFromPrev));
    ASSERT_TRUE(Commit(2, 1, 0, {"B0"}));
  }
};

TEST_F(TraceBufferV2PatchTest, PendingPatchStallsOnlyItsSequence) {
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(2, 1, "B0")}));
  const TraceBufferV2::Patch patch = MakePatch(kPatchOffset, "WXYZ");
  EXPECT_TRUE(tb_->TryPatchChunkContents(1, 1, 0, &patch, 1, false));
  EXPECT_EQ(Read(),
            (std::vector<ReadPacket>{RP(1, 1, "A0"), RP(1, 1, "A1aWXYZA1b"),
                                     RP(1, 1, "A2")}));
  EXPECT_EQ(tb_->stats().patches_succeeded, 1u);
  EXPECT_EQ(tb_->stats().patches_failed, 0u);
}

TEST_F(TraceBufferV2PatchTest, OtherPatchesPendingKeepsTheStall) {
  const TraceBufferV2::Patch p1 = MakePatch(kPatchOffset, "WX\0\0");
  EXPECT_TRUE(tb_->TryPatchChunkContents(1, 1, 0, &p1, 1, true));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(2, 1, "B0")}));
  // A later patch of the same bytes wins.
  const TraceBufferV2::Patch p2 = MakePatch(kPatchOffset, "WXYZ");
  EXPECT_TRUE(tb_->TryPatchChunkContents(1, 1, 0, &p2, 1, false));
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"A0", "A1aWXYZA1b", "A2"}));
  EXPECT_EQ(tb_->stats().patches_succeeded, 2u);
}

TEST_F(TraceBufferV2PatchTest, PatchReleasesStallWithinTheSameReadPass) {
  tb_->BeginRead();
  TracePacket packet;
  PacketSequenceProperties props;
  uint32_t loss = 0;
  ASSERT_TRUE(tb_->ReadNextTracePacket(&packet, &props, &loss));
  EXPECT_EQ(packet.GetRawBytesForTesting(), "B0");
  EXPECT_FALSE(tb_->ReadNextTracePacket(&packet, &props, &loss));
  const TraceBufferV2::Patch patch = MakePatch(kPatchOffset, "WXYZ");
  EXPECT_TRUE(tb_->TryPatchChunkContents(1, 1, 0, &patch, 1, false));
  tb_->BeginRead();
  ASSERT_TRUE(tb_->ReadNextTracePacket(&packet, &props, &loss));
  EXPECT_EQ(packet.GetRawBytesForTesting(), "A0");
}

TEST_F(TraceBufferV2PatchTest, PatchOnMissingChunkFailsAndIsCounted) {
  const TraceBufferV2::Patch patch = MakePatch(0, "WXYZ");
  EXPECT_FALSE(tb_->TryPatchChunkContents(1, 1, 7, &patch, 1, false));
  EXPECT_FALSE(tb_->TryPatchChunkContents(9, 9, 0, &patch, 1, false));
  // Chunk 0 of sequence 2 exists but does not need patches.
  EXPECT_FALSE(tb_->TryPatchChunkContents(2, 1, 0, &patch, 1, false));
  EXPECT_EQ(tb_->stats().patches_failed, 3u);
  EXPECT_EQ(tb_->stats().abi_violations, 0u);
}

// All-or-nothing: a call with one patch outside the chunk applies none of
// its patches and leaves the chunk exactly as it was (bytes, pending
// patches, stall); a later valid patch applies and the packet is complete.
TEST_F(TraceBufferV2PatchTest, RefusedPatchLeavesTheChunkUntouched) {
  // The payload is 4+2+4+7 = 17 bytes: offset 14 does not fit 4 bytes.
  const TraceBufferV2::Patch bad[2] = {MakePatch(kPatchOffset, "QQQQ"),
                                       MakePatch(14, "WXYZ")};
  EXPECT_FALSE(tb_->TryPatchChunkContents(1, 1, 0, bad, 2, false));
  const TraceBufferV2::Patch huge = MakePatch(0xffffffff, "WXYZ");
  EXPECT_FALSE(tb_->TryPatchChunkContents(1, 1, 0, &huge, 1, false));
  EXPECT_EQ(tb_->stats().patches_failed, 2u);
  EXPECT_EQ(tb_->stats().patches_succeeded, 0u);
  EXPECT_EQ(tb_->stats().abi_violations, 2u);
  // Still stalled: only sequence 2 is read, sequence 1 reports nothing.
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(2, 1, "B0")}));
  // The correct patch still applies; the refused "QQQQ" was not written.
  const TraceBufferV2::Patch good = MakePatch(kPatchOffset, "WXYZ");
  EXPECT_TRUE(tb_->TryPatchChunkContents(1, 1, 0, &good, 1, false));
  EXPECT_EQ(tb_->stats().patches_succeeded, 1u);
  EXPECT_EQ(tb_->stats().patches_failed, 2u);
  EXPECT_EQ(Read(),
            (std::vector<ReadPacket>{RP(1, 1, "A0"), RP(1, 1, "A1aWXYZA1b"),
                                     RP(1, 1, "A2")}));
  EXPECT_EQ(tb_->stats().abi_violations, 2u);
}

// A refused patch that is never followed by a valid one: the chunk is
// erased with its unpatched last fragment, which is counted and reported
// like any unpatched chunk forced out.
TEST_F(TraceBufferV2PatchTest, RefusedPatchThenOverwriteIsReported) {
  const TraceBufferV2::Patch bad = MakePatch(14, "WXYZ");
  EXPECT_FALSE(tb_->TryPatchChunkContents(1, 1, 0, &bad, 1, false));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(2, 1, "B0")}));
  // [0, 36) A0's chunk, [36, 68) A1b's, [68, 92) B0's, then four chunks of
  // 1000 bytes end at 4092: a 36-byte chunk wraps and erases exactly the
  // first chunk, unread.
  for (ChunkID id = 1; id < 5; id++)
    ASSERT_TRUE(Commit(2, 1, id, {Pkt("B", 1000 - 20)}));
  ASSERT_TRUE(Commit(2, 1, 5, {Pkt("b", 16)}));
  EXPECT_EQ(tb_->stats().write_wrap_count, 1u);
  EXPECT_EQ(tb_->stats().chunks_overwritten, 1u);
  EXPECT_EQ(tb_->stats().bytes_overwritten, 36u);
  // A0 and the unpatched A1 start: two packets erased unread.
  EXPECT_EQ(tb_->stats().packets_overwritten, 2u);
  std::vector<ReadPacket> seq1;
  for (const ReadPacket& p : Read()) {
    if (p.producer_id == 1)
      seq1.push_back(p);
  }
  // A1's tail in chunk 1 is dropped with it; A2 carries the loss.
  EXPECT_EQ(seq1, (std::vector<ReadPacket>{
                      RP(1, 1, "A2", kDataLossPresent | kDataLossOverwrite)}));
}

TEST_F(TraceBufferV2WriteTest, PendingPatchChunkOverwrittenEndsStallWithLoss) {
  Create(4096);
  std::vector<std::string> observed;
  tb_->set_overwrite_observer(
      [&](const PacketSequenceProperties& props, const TracePacket& p) {
        if (props.producer_id_trusted == 1)
          observed.push_back(p.GetRawBytesForTesting());
      });
  ASSERT_TRUE(Commit(1, 1, 0, {"A0", "A1a...."}, kOnNext | kPatch));
  EXPECT_TRUE(Read().empty());  // Stalled.
  // Sequence 2 fills the buffer and wraps over chunk 0 of sequence 1.
  for (ChunkID id = 0; id < 4; id++)
    ASSERT_TRUE(Commit(2, 1, id, {Pkt("B", 1000)}));
  // Chunk 0 of sequence 1 and the first of sequence 2 were overwritten.
  EXPECT_EQ(tb_->stats().chunks_overwritten, 2u);
  // The complete packet went to the observer; the unpatched one is lost.
  EXPECT_EQ(observed, (std::vector<std::string>{"A0"}));
  ASSERT_TRUE(Commit(1, 1, 1, {"A1b", "A2"}, kFromPrev));
  std::vector<ReadPacket> got = Read();
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back(), RP(1, 1, "A2", kDataLossPresent | kDataLossOverwrite));
  const TraceBufferV2::Patch patch = MakePatch(13, "WXYZ");
  EXPECT_FALSE(tb_->TryPatchChunkContents(1, 1, 0, &patch, 1, false));
}

// ---- Scraped chunks and recommits -------------------------------------------

TEST_F(TraceBufferV2WriteTest, ScrapedChunkLastFragmentIsNeverRead) {
  Create(4096);
  ASSERT_TRUE(
      Commit(1, 1, 0, {"a", "b", "c"}, kNoTBChunkFlags, /*complete=*/false));
  ASSERT_TRUE(Commit(1, 1, 1, {"d"}));
  ASSERT_TRUE(Commit(2, 1, 0, {"x"}));
  // "c" may still be being written; the sequence stalls (not sequence 2).
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"a", "b", "x"}));
  EXPECT_TRUE(Read().empty());
  EXPECT_TRUE(tb_->has_data());
  // The real commit replaces it: "c" and what follows become readable.
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b", "c"}));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(1, 1, "c"), RP(1, 1, "d")}));
  EXPECT_EQ(tb_->stats().chunks_rewritten, 1u);
  EXPECT_EQ(tb_->stats().abi_violations, 0u);
}

TEST_F(TraceBufferV2WriteTest, RecommitMayExtendTheScrapedChunk) {
  Create(4096);
  // Scraped with 2 fragments in a 64-byte payload; committed with 4.
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b"}, kNoTBChunkFlags, false, 64));
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"a"}));
  const size_t used = tb_->used_size();
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b", "c", "dd"}, kOnNext, true, 64));
  EXPECT_EQ(tb_->used_size(), used);  // Replaced in place.
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"b", "c"}));
  ASSERT_TRUE(Commit(1, 1, 1, {"ee"}, kFromPrev));
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"ddee"}));
}

TEST_F(TraceBufferV2WriteTest, ScrapedChunkCanBeScrapedAgain) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b"}, kNoTBChunkFlags, false, 64));
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b", "c"}, kNoTBChunkFlags, false, 64));
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b", "c"}, kNoTBChunkFlags, true, 64));
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"c"}));
  EXPECT_EQ(tb_->stats().chunks_rewritten, 2u);
}

TEST_F(TraceBufferV2WriteTest, RecommitOfCompleteChunkIsRejected) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  ASSERT_TRUE(Commit(2, 1, 0, {"x"}));
  EXPECT_FALSE(Commit(1, 1, 0, {"z"}));
  EXPECT_EQ(tb_->stats().abi_violations, 1u);
  EXPECT_EQ(tb_->stats().chunks_rewritten, 0u);
  ASSERT_TRUE(Commit(1, 1, 1, {"b"}));
  // The loss is reported after chunk 0, never on its own (earlier) packet.
  std::vector<ReadPacket> got = Read();
  EXPECT_EQ(got,
            (std::vector<ReadPacket>{
                RP(1, 1, "a"), RP(2, 1, "x"),
                RP(1, 1, "b", kDataLossPresent | kDataLossChunkCorrupted)}));
}

TEST_F(TraceBufferV2WriteTest, RecommitWithDifferentSizeIsRejected) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b", "c"}, kNoTBChunkFlags, false, 64));
  EXPECT_FALSE(Commit(1, 1, 0, {"a", "b", "c"}, kNoTBChunkFlags, true, 128));
  EXPECT_EQ(tb_->stats().abi_violations, 1u);
  // The stall ends: what was readable is read, the rest reported lost.
  ASSERT_TRUE(Commit(1, 1, 1, {"d"}));
  std::vector<ReadPacket> got = Read();
  // "a", "b" were written before the lost fragment: no loss on them.
  EXPECT_EQ(got,
            (std::vector<ReadPacket>{
                RP(1, 1, "a"), RP(1, 1, "b"),
                RP(1, 1, "d", kDataLossPresent | kDataLossChunkCorrupted)}));
}

TEST_F(TraceBufferV2WriteTest, RecommitChangingConsumedBytesIsRejected) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b", "c"}, kNoTBChunkFlags, false, 64));
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"a", "b"}));
  // Same size, but the fragments already read differ.
  EXPECT_FALSE(Commit(1, 1, 0, {"a", "X", "c"}, kNoTBChunkFlags, true, 64));
  EXPECT_EQ(tb_->stats().abi_violations, 1u);
  EXPECT_FALSE(
      Commit(1, 1, 0, {"aa", "c"}, kNoTBChunkFlags, true, 64));  // Not on a
                                                                 // boundary.
  ASSERT_TRUE(Commit(1, 1, 1, {"d"}));
  std::vector<ReadPacket> got = Read();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, "d");
  EXPECT_TRUE(got[0].loss & kDataLossChunkCorrupted);
}

TEST_F(TraceBufferV2WriteTest, ScrapedChunkOverwrittenEndsStallWithLoss) {
  Create(4096);
  std::vector<std::string> observed;
  tb_->set_overwrite_observer(
      [&](const PacketSequenceProperties& props, const TracePacket& p) {
        if (props.producer_id_trusted == 1)
          observed.push_back(p.GetRawBytesForTesting());
      });
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "b"}, kNoTBChunkFlags, false));
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"a"}));
  for (ChunkID id = 0; id < 5; id++)
    ASSERT_TRUE(Commit(2, 1, id, {Pkt("B", 1000)}));
  // Erasing is forced: the unread last fragment "b" is simply lost.
  EXPECT_TRUE(observed.empty());
  // A late real commit of chunk 0 is dropped.
  EXPECT_FALSE(Commit(1, 1, 0, {"a", "b"}));
  EXPECT_EQ(tb_->stats().late_chunks_dropped, 1u);
  ASSERT_TRUE(Commit(1, 1, 1, {"c"}));
  std::vector<ReadPacket> got = Read();
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back(), RP(1, 1, "c", kDataLossPresent | kDataLossOverwrite));
}

// ---- Ring drainer path ------------------------------------------------------

TEST_F(TraceBufferV2WriteTest, CopyChunkFragmentsRoundTrip) {
  Create(4096);
  const std::string p0 = "p0", p1a = "p1a", p1b = "p1b", p2 = "p2";
  FragmentRef c0[] = {
      {reinterpret_cast<const uint8_t*>(p0.data()), 2},
      {reinterpret_cast<const uint8_t*>(p1a.data()), 3},
  };
  FragmentRef c1[] = {
      {reinterpret_cast<const uint8_t*>(p1b.data()), 3},
      {reinterpret_cast<const uint8_t*>(p2.data()), 2},
  };
  ClientIdentity id{10, 20};
  ASSERT_TRUE(
      tb_->CopyChunkFragments(3, id, 4, 0, c0, 2, kChunkContinuesOnNext));
  ASSERT_TRUE(
      tb_->CopyChunkFragments(3, id, 4, 1, c1, 2, kChunkContinuesFromPrev));
  EXPECT_EQ(test::ReadAll(tb_.get()),
            (std::vector<ReadPacket>{RP(3, 4, "p0"), RP(3, 4, "p1ap1b"),
                                     RP(3, 4, "p2")}));
  // 4-byte size headers are added: 16 + 4+2 + 4+3 = 29 -> 32.
  EXPECT_EQ(tb_->stats().bytes_written, 32u + 32u);
}

TEST_F(TraceBufferV2WriteTest, DrainerDataLossFlagReportsSmbFull) {
  Create(4096);
  const std::string a = "a", b = "b";
  FragmentRef fa[] = {{reinterpret_cast<const uint8_t*>(a.data()), 1}};
  FragmentRef fb[] = {{reinterpret_cast<const uint8_t*>(b.data()), 1},
                      {reinterpret_cast<const uint8_t*>(b.data()), 1}};
  ASSERT_TRUE(tb_->CopyChunkFragments(1, {}, 1, 0, fa, 1, kNoTBChunkFlags));
  ASSERT_TRUE(tb_->CopyChunkFragments(1, {}, 1, 1, fb, 2, kChunkDataLoss));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{
                        RP(1, 1, "a"),
                        RP(1, 1, "b", kDataLossPresent | kDataLossSmbFull),
                        RP(1, 1, "b")}));
}

// Admission stores the bits of its path as they are and ignores every other
// TBChunkFlags bit: a caller cannot set the buffer's local flags (padding,
// consumed, ...), and each path keeps only its own ABI bits.
TEST_F(TraceBufferV2WriteTest, AdmissionKeepsOnlyThePathsBits) {
  static_assert((kV1AdmissionMask & kChunkDataLoss) == kNoTBChunkFlags, "");
  static_assert(
      (kFragmentAdmissionMask & kChunkNeedsPatching) == kNoTBChunkFlags, "");
  static_assert((kFragmentAdmissionMask &
                 (kTBIncomplete | kTBPadding | kTBCorrupted | kTBEntered |
                  kTBConsumed | kTBPending | kTBFragIndex)) == kNoTBChunkFlags,
                "");
  Create(4096);
  const TBChunkFlags local = kTBIncomplete | kTBPadding | kTBCorrupted |
                             kTBEntered | kTBConsumed | kTBPending |
                             kTBFragIndex | kPacketCountMask;
  const std::string a = "a";
  FragmentRef fa[] = {{reinterpret_cast<const uint8_t*>(a.data()), 1}};
  // Drainer path: the local bits and NeedsPatching are dropped.
  ASSERT_TRUE(
      tb_->CopyChunkFragments(1, {}, 1, 0, fa, 1, local | kChunkNeedsPatching));
  // v1 path: DataLoss is not one of its bits.
  ASSERT_TRUE(Commit(2, 1, 0, {"v"}, local | kChunkDataLoss));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(1, 1, "a"), RP(2, 1, "v")}));
  EXPECT_EQ(tb_->stats().abi_violations, 0u);
}

TEST_F(TraceBufferV2WriteTest, BeginCommitCopiesStraightIntoTheBuffer) {
  Create(4096);
  const uint32_t sizes[] = {3, 5};
  uint8_t* dst =
      tb_->BeginChunkFragments(1, {}, 1, 0, sizes, 2, kNoTBChunkFlags);
  ASSERT_NE(dst, nullptr);
  // Back to back, as in a ring chunk: one copy.
  memcpy(dst, "abcdefgh", 8);
  tb_->CommitPendingChunk();
  tb_->BeginRead();
  TracePacket packet;
  PacketSequenceProperties props;
  uint32_t loss = 0;
  ASSERT_TRUE(tb_->ReadNextTracePacket(&packet, &props, &loss));
  ASSERT_EQ(packet.slices().size(), 1u);
  // The packet is read in place, where the drainer copied it.
  EXPECT_EQ(packet.slices()[0].data, dst);
  EXPECT_EQ(packet.GetRawBytesForTesting(), "abc");
  ASSERT_TRUE(tb_->ReadNextTracePacket(&packet, &props, &loss));
  EXPECT_EQ(packet.slices()[0].data, dst + 3);
  EXPECT_EQ(packet.GetRawBytesForTesting(), "defgh");
  EXPECT_FALSE(tb_->ReadNextTracePacket(&packet, &props, &loss));
}

TEST_F(TraceBufferV2WriteTest, AbortedChunkBecomesPaddingAndLeavesAGap) {
  Create(4096);
  const uint32_t sizes[] = {100};
  const std::string a = "a";
  FragmentRef fa[] = {{reinterpret_cast<const uint8_t*>(a.data()), 1}};
  ASSERT_TRUE(tb_->CopyChunkFragments(1, {}, 1, 0, fa, 1, kNoTBChunkFlags));
  ASSERT_NE(tb_->BeginChunkFragments(1, {}, 1, 1, sizes, 1, kNoTBChunkFlags),
            nullptr);
  tb_->AbortPendingChunk();
  EXPECT_EQ(tb_->stats().padding_bytes_written, 16u + 104u);
  ASSERT_TRUE(tb_->CopyChunkFragments(1, {}, 1, 2, fa, 1, kNoTBChunkFlags));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{
                        RP(1, 1, "a"),
                        RP(1, 1, "a", kDataLossPresent | kDataLossReadGap)}));
}

TEST_F(TraceBufferV2WriteTest, DrainerPathRejectsOversizedAndDuplicates) {
  Create(4096);
  const uint32_t too_big[] = {kMaxChunkPayloadSize};
  EXPECT_EQ(tb_->BeginChunkFragments(1, {}, 1, 0, too_big, 1, kNoTBChunkFlags),
            nullptr);
  const uint32_t bigger_than_buffer[] = {5000};
  EXPECT_EQ(tb_->BeginChunkFragments(1, {}, 1, 0, bigger_than_buffer, 1,
                                     kNoTBChunkFlags),
            nullptr);
  const std::string a = "a";
  FragmentRef fa[] = {{reinterpret_cast<const uint8_t*>(a.data()), 1}};
  ASSERT_TRUE(tb_->CopyChunkFragments(1, {}, 1, 0, fa, 1, kNoTBChunkFlags));
  EXPECT_FALSE(tb_->CopyChunkFragments(1, {}, 1, 0, fa, 1, kNoTBChunkFlags));
  EXPECT_EQ(tb_->stats().abi_violations, 3u);
}

// ---- Lazy cleanup of empty sequences
// -----------------------------------------

TEST_F(TraceBufferV2WriteTest, EmptySequencesAreBoundedButRecentOnesKept) {
  Create(1 << 20);
  // 3000 short-lived writers, one chunk each, all read.
  for (WriterID w = 1; w <= 3000; w++)
    ASSERT_TRUE(Commit(1, w, 0, {"x"}));
  EXPECT_EQ(Read().size(), 3000u);
  // Cleanup runs at safe points: a read pass starts with at most
  // kKeepLastEmptySeq empty sequences.
  tb_->BeginRead();
  EXPECT_EQ(tb_->num_sequences_for_testing(), kKeepLastEmptySeq);
  // The most recent ones still detect a ChunkID gap.
  ASSERT_TRUE(Commit(1, 3000, 2, {"y"}));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(
                        1, 3000, "y", kDataLossPresent | kDataLossReadGap)}));
  // The oldest ones were forgotten: a gap on them goes unnoticed (the price
  // of bounded memory).
  ASSERT_TRUE(Commit(1, 1, 2, {"z"}));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(1, 1, "z")}));
}

TEST_F(TraceBufferV2WriteTest, WritesAloneKeepEmptySequencesBounded) {
  // No reads: sequences are emptied by overwrites only.
  Create(64 * 1024);
  for (WriterID w = 1; w <= 6000; w++)
    ASSERT_TRUE(Commit(1, w, 0, {Pkt("x", 100)}));
  EXPECT_GT(tb_->stats().chunks_overwritten, 5000u);
  // At most 2 * kKeepLastEmptySeq empty ones, plus those with data.
  EXPECT_LE(tb_->num_sequences_for_testing(),
            2 * kKeepLastEmptySeq + 64 * 1024 / 120 + 1);
}

// ---- Hostile input
// -----------------------------------------------------------

// Each case: the malformed chunk is on sequence 1, sequence 2 must read clean.
class TraceBufferV2HostileTest : public test::TraceBufferV2TestBase {
 protected:
  void SetUp() override { Create(4096); }

  // Reads everything; checks sequence 2 got "ok" without loss and returns
  // sequence 1's packets.
  std::vector<ReadPacket> ReadCheckingOthers() {
    EXPECT_TRUE(Commit(2, 1, 0, {"ok"}));
    std::vector<ReadPacket> seq1;
    bool saw_other = false;
    for (const ReadPacket& p : Read()) {
      if (p.producer_id == 2) {
        EXPECT_EQ(p, RP(2, 1, "ok"));
        saw_other = true;
      } else {
        seq1.push_back(p);
      }
    }
    EXPECT_TRUE(saw_other);
    return seq1;
  }
};

TEST_F(TraceBufferV2HostileTest, FragmentSizeOutOfBounds) {
  std::vector<uint8_t> payload = MakePayload({"good"});
  test::AppendFragment(&payload, "0123456789");
  payload.resize(payload.size() - 5);  // The size claims 5 more bytes.
  EXPECT_TRUE(CommitRaw(1, 1, 0, payload, 2));
  ASSERT_TRUE(Commit(1, 1, 1, {"next"}));
  EXPECT_EQ(tb_->stats().abi_violations, 1u);
  EXPECT_EQ(ReadCheckingOthers(),
            (std::vector<ReadPacket>{
                RP(1, 1, "good"),
                RP(1, 1, "next", kDataLossPresent | kDataLossChunkCorrupted)}));
}

TEST_F(TraceBufferV2HostileTest, TooManyDeclaredFragments) {
  EXPECT_TRUE(CommitRaw(1, 1, 0, MakePayload({"a", "b"}), 200));
  ASSERT_TRUE(Commit(1, 1, 1, {"c"}));
  EXPECT_EQ(tb_->stats().abi_violations, 1u);
  std::vector<ReadPacket> got = ReadCheckingOthers();
  EXPECT_EQ(Data(got), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(got[2].loss, kDataLossPresent | kDataLossChunkCorrupted);
}

TEST_F(TraceBufferV2HostileTest, TruncatedAndOverlongVarInts) {
  std::vector<uint8_t> truncated = MakePayload({"a"});
  truncated.push_back(0x81);  // Continuation bit, then the payload ends.
  EXPECT_TRUE(CommitRaw(1, 1, 0, truncated, 2));
  std::vector<uint8_t> overlong = MakePayload({"b"});
  for (int i = 0; i < 5; i++)
    overlong.push_back(0x80);  // A 5+ byte varint.
  overlong.push_back(0x01);
  overlong.push_back('x');
  EXPECT_TRUE(CommitRaw(1, 1, 1, overlong, 2));
  EXPECT_EQ(tb_->stats().abi_violations, 2u);
  std::vector<ReadPacket> got = ReadCheckingOthers();
  ASSERT_EQ(Data(got), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(got[1].loss, kDataLossPresent | kDataLossChunkCorrupted);
}

TEST_F(TraceBufferV2HostileTest, ChunksTooLargeAreRejected) {
  std::vector<uint8_t> huge(kMaxChunkPayloadSize + 1, 0);
  EXPECT_FALSE(CommitRaw(1, 1, 0, huge, 1));
  std::vector<uint8_t> bigger_than_buffer = MakePayload({Pkt("x", 5000)});
  EXPECT_FALSE(CommitRaw(1, 1, 0, bigger_than_buffer, 1));
  EXPECT_FALSE(tb_->CopyChunkUntrusted(1, {}, 1, 0, 1, kNoTBChunkFlags, true,
                                       nullptr, 10));
  EXPECT_EQ(tb_->stats().abi_violations, 3u);
  EXPECT_EQ(tb_->stats().chunks_written, 0u);
  ASSERT_TRUE(Commit(1, 1, 1, {"a"}));
  std::vector<ReadPacket> got = ReadCheckingOthers();
  EXPECT_EQ(got, (std::vector<ReadPacket>{RP(
                     1, 1, "a", kDataLossPresent | kDataLossChunkCorrupted)}));
}

TEST_F(TraceBufferV2HostileTest, ContinuationWithoutStartIsAnOrphan) {
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  ASSERT_TRUE(Commit(1, 1, 1, {"tail", "b"}, kFromPrev));
  EXPECT_EQ(
      ReadCheckingOthers(),
      (std::vector<ReadPacket>{
          RP(1, 1, "a"),
          RP(1, 1, "b", kDataLossPresent | kDataLossOrphanContinuation)}));
}

TEST_F(TraceBufferV2HostileTest, WriterDroppedPacketMarker) {
  std::vector<uint8_t> payload = MakePayload({"a"});
  test::AppendDropMarker(&payload);
  test::AppendFragment(&payload, "b");
  EXPECT_TRUE(CommitRaw(1, 1, 0, payload, 3));
  EXPECT_EQ(tb_->stats().abi_violations, 0u);
  EXPECT_EQ(ReadCheckingOthers(),
            (std::vector<ReadPacket>{
                RP(1, 1, "a"),
                RP(1, 1, "b", kDataLossPresent | kDataLossWriterAbort)}));
  EXPECT_EQ(tb_->stats().trace_writer_packet_loss, 1u);
}

TEST_F(TraceBufferV2HostileTest, DroppedMarkerEndingAFragmentedPacket) {
  ASSERT_TRUE(Commit(1, 1, 0, {"a", "p1a"}, kOnNext));
  std::vector<uint8_t> payload;
  test::AppendDropMarker(&payload);
  test::AppendFragment(&payload, "b");
  EXPECT_TRUE(CommitRaw(1, 1, 1, payload, 2, kFromPrev));
  EXPECT_EQ(ReadCheckingOthers(),
            (std::vector<ReadPacket>{
                RP(1, 1, "a"),
                RP(1, 1, "b", kDataLossPresent | kDataLossWriterAbort)}));
}

TEST_F(TraceBufferV2HostileTest, ChunkIdsTooFarApartAreRejected) {
  // Before anything is consumed, IDs must stay within 2^29 of the first one,
  // so that ordering modulo 2^32 stays consistent.
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  EXPECT_FALSE(Commit(1, 1, 0x80000005, {"far"}));
  EXPECT_FALSE(Commit(1, 1, 0xC0000000, {"far2"}));
  ASSERT_TRUE(Commit(1, 1, 1, {"b"}));
  EXPECT_EQ(tb_->stats().abi_violations, 2u);
  EXPECT_EQ(ReadCheckingOthers(),
            (std::vector<ReadPacket>{
                RP(1, 1, "a", kDataLossPresent | kDataLossChunkCorrupted),
                RP(1, 1, "b")}));
  // After a chunk was consumed, only IDs after it are accepted; one that
  // compares before it (modulo 2^32) is late.
  EXPECT_FALSE(Commit(1, 1, 0x80000002, {"late"}));
  EXPECT_EQ(tb_->stats().late_chunks_dropped, 1u);
}

// ---- FragIterator
// ------------------------------------------------------------

TEST(FragIteratorTest, TokenizesAndDetectsMalformedFragments) {
  std::vector<uint8_t> p = {0x02, 'a', 'b', 0x80, 0x00, 0x81, 0x00, 'x'};
  FragIterator it(p.data(), 0, p.size());
  FragIterator::Frag f;
  ASSERT_EQ(it.Next(&f), FragIterator::Result::kOk);
  EXPECT_EQ(f.data_offset, 1u);
  EXPECT_EQ(f.size, 2u);
  ASSERT_EQ(it.Next(&f), FragIterator::Result::kOk);  // Redundant zero.
  EXPECT_EQ(f.size, 0u);
  ASSERT_EQ(it.Next(&f), FragIterator::Result::kOk);
  EXPECT_EQ(f.size, 1u);
  EXPECT_EQ(it.Next(&f), FragIterator::Result::kEnd);

  std::vector<uint8_t> overflow = {0xff, 0xff, 0xff, 0x7e};  // Past the end.
  FragIterator it2(overflow.data(), 0, overflow.size());
  EXPECT_EQ(it2.Next(&f), FragIterator::Result::kCorrupted);
  EXPECT_EQ(it2.pos(), 0u);

  std::vector<uint8_t> drop(4);
  WriteRedundantVarInt(FragIterator::kDropPacketSize, drop.data());
  FragIterator it3(drop.data(), 0, drop.size());
  ASSERT_EQ(it3.Next(&f), FragIterator::Result::kOk);
  EXPECT_TRUE(f.dropped);
  EXPECT_TRUE(it3.at_end());
}

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
