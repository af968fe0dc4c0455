/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "src/tracing/service/trace_buffer_v2/frag_iterator.h"
#include "src/tracing/service/trace_buffer_v2/tb_chunk.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2_test_utils.h"

namespace ringtrace {
namespace trace_buffer {
namespace {

using test::Data;
using test::MakePayload;
using test::OuterSize;
using test::Pkt;
using test::ReadAll;
using test::ReadPacket;
using test::RP;
using Policy = TraceBufferV2::OverwritePolicy;
using TraceBufferV2Test = test::TraceBufferV2TestBase;

constexpr TBChunkFlags kFromPrev = kChunkContinuesFromPrev;
constexpr TBChunkFlags kOnNext = kChunkContinuesOnNext;

// ---- Basics and storage -----------------------------------------------------

TEST(TraceBufferV2FillPolicyTest, NamesRoundTrip) {
  EXPECT_STREQ(FillPolicyName(Policy::kOverwrite), "ring_buffer");
  EXPECT_STREQ(FillPolicyName(Policy::kDiscard), "discard");
  Policy p = Policy::kDiscard;
  EXPECT_TRUE(ParseFillPolicy("ring_buffer", &p));
  EXPECT_EQ(p, Policy::kOverwrite);
  EXPECT_TRUE(ParseFillPolicy("discard", &p));
  EXPECT_EQ(p, Policy::kDiscard);
  for (const char* bad : {"", "RING_BUFFER", "DISCARD", "ring-buffer",
                          "overwrite", "discard ", "sometimes"}) {
    p = Policy::kDiscard;
    EXPECT_FALSE(ParseFillPolicy(bad, &p)) << bad;
    EXPECT_EQ(p, Policy::kDiscard) << bad;
  }
}

TEST_F(TraceBufferV2Test, CreateRoundsUpAndRejectsZero) {
  EXPECT_EQ(TraceBufferV2::Create(0, Policy::kOverwrite), nullptr);
  Create(5000);
  EXPECT_EQ(tb_->size(), 8192u);
  EXPECT_EQ(tb_->used_size(), 0u);
  EXPECT_FALSE(tb_->has_data());
  EXPECT_TRUE(Read().empty());
}

TEST_F(TraceBufferV2Test, SingleChunkPacketsInOrder) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 2, 0, {"p0", "p1", "p2"}));
  EXPECT_TRUE(tb_->has_data());
  std::vector<ReadPacket> expected = {RP(1, 2, "p0"), RP(1, 2, "p1"),
                                      RP(1, 2, "p2")};
  EXPECT_EQ(Read(), expected);
  EXPECT_FALSE(tb_->has_data());
  EXPECT_TRUE(Read().empty());  // Reads are destructive.
  EXPECT_EQ(tb_->stats().chunks_read, 1u);
  EXPECT_EQ(tb_->stats().bytes_read, 6u);
}

TEST_F(TraceBufferV2Test, SequencePropertiesCarryTrustedIdentity) {
  Create(4096);
  ASSERT_TRUE(Commit(7, 9, 0, {"x"}));
  tb_->BeginRead();
  TracePacket packet;
  PacketSequenceProperties props;
  uint32_t loss = 123;
  ASSERT_TRUE(tb_->ReadNextTracePacket(&packet, &props, &loss));
  EXPECT_EQ(props.producer_id_trusted, 7);
  EXPECT_EQ(props.writer_id, 9);
  EXPECT_EQ(props.client_identity_trusted.uid, 1007);
  EXPECT_EQ(props.client_identity_trusted.pid, 2007);
  EXPECT_EQ(loss, 0u);
}

TEST_F(TraceBufferV2Test, ChunksAreStoredBackToBack4ByteAligned) {
  Create(4096);
  // Payloads of 5, 6 and 8 bytes: outer sizes 24, 24, 24.
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  ASSERT_TRUE(Commit(1, 1, 1, {"ab"}));
  ASSERT_TRUE(Commit(1, 1, 2, {"abcd"}));
  EXPECT_EQ(OuterSize({"a"}), 24u);
  EXPECT_EQ(tb_->used_size(), 72u);
  EXPECT_EQ(tb_->stats().bytes_written, 72u);
  EXPECT_EQ(tb_->stats().chunks_written, 3u);
  EXPECT_GE(tb_->GetMemoryUsageBytes(), 72u);
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"a", "ab", "abcd"}));
}

TEST_F(TraceBufferV2Test, EmptyPacketsAreSkippedWithoutLoss) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"", "a", ""}));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(1, 1, "a")}));
}

TEST_F(TraceBufferV2Test, WritesDuringAReadPassRestartItWithoutDuplicates) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"a0", "a1"}));
  ASSERT_TRUE(Commit(2, 1, 0, {"b0"}));
  tb_->BeginRead();
  TracePacket packet;
  PacketSequenceProperties props;
  uint32_t loss = 0;
  ASSERT_TRUE(tb_->ReadNextTracePacket(&packet, &props, &loss));
  EXPECT_EQ(packet.GetRawBytesForTesting(), "a0");
  // A write between two reads of the same pass: the pass restarts at the
  // oldest data, already consumed packets are not returned again.
  ASSERT_TRUE(Commit(1, 1, 1, {"a2"}));
  std::vector<std::string> rest;
  while (tb_->ReadNextTracePacket(&packet, &props, &loss))
    rest.push_back(packet.GetRawBytesForTesting());
  EXPECT_EQ(rest, (std::vector<std::string>{"a1", "b0", "a2"}));
}

TEST_F(TraceBufferV2Test, MemoryUsageGrowsWithDataAndSequences) {
  Create(1 << 20);
  // No page touched yet: bookkeeping only.
  const size_t empty = tb_->GetMemoryUsageBytes();
  EXPECT_GT(empty, 0u);
  EXPECT_LT(empty, 4096u);
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  const size_t one = tb_->GetMemoryUsageBytes();
  // The whole first page is committed, plus bookkeeping.
  EXPECT_GE(one, empty + 4096u);
  for (WriterID w = 2; w < 100; w++)
    ASSERT_TRUE(Commit(1, w, 0, {"a"}));
  EXPECT_GT(tb_->GetMemoryUsageBytes(), one + 98 * 24);
  EXPECT_EQ(tb_->num_sequences_for_testing(), 99u);
}

// Whether this kernel commits pages on MADV_POPULATE_WRITE (Linux 5.14+).
bool KernelCommitsAhead() {
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED)
    return false;
  const bool ok = madvise(page, 4096, MADV_POPULATE_WRITE) == 0;
  munmap(page, 4096);
  return ok;
}

// The first pass commits the mapping one 256 KiB step ahead of the writes,
// never more; a buffer smaller than a step is committed whole at the first
// write, and the memory usage counts what was committed.
TEST_F(TraceBufferV2Test, CommitsTheFirstPassOneStepAhead) {
  if (!KernelCommitsAhead())
    GTEST_SKIP() << "MADV_POPULATE_WRITE unsupported: pages fault in lazily";
  constexpr size_t kStep = 256 * 1024;
  Create(1 << 20);
  EXPECT_EQ(tb_->committed_ahead(), 0u);
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  EXPECT_EQ(tb_->committed_ahead(), kStep);
  EXPECT_GE(tb_->GetMemoryUsageBytes(), kStep);
  const std::string big(4000, 'x');
  ChunkID id = 1;
  // Bounded: each chunk adds about 4 KiB.
  while (tb_->used_size() <= kStep) {
    EXPECT_EQ(tb_->committed_ahead(), kStep);
    ASSERT_TRUE(Commit(1, 1, id++, {big}));
  }
  EXPECT_EQ(tb_->committed_ahead(), 2 * kStep);
  EXPECT_GE(tb_->GetMemoryUsageBytes(), 2 * kStep);

  Create(64 * 1024);
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  EXPECT_EQ(tb_->committed_ahead(), 64u * 1024);

  Create(1 << 20);
  tb_->SetCommitAheadForTesting(false);
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  EXPECT_EQ(tb_->committed_ahead(), 0u);
  EXPECT_EQ(Data(Read()), std::vector<std::string>{"a"});
}

// With a warm-ahead setting, a new buffer's PageWarmer reads the pages
// ahead of the writes; what is written reads back the same, the memory
// usage counts what the warmer committed, and a read-only clone has no
// warmer. The setting applies to the buffers created after it.
TEST_F(TraceBufferV2Test, AWarmerRunsAheadOfTheFirstPass) {
  if (!KernelCommitsAhead())
    GTEST_SKIP() << "MADV_POPULATE_WRITE unsupported: nothing to warm";
  TraceBufferV2::SetWarmAheadForNewBuffers(1 << 20);
  Create(8 << 20);
  TraceBufferV2::SetWarmAheadForNewBuffers(0);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // Bounded by the deadline (not a timing assertion).
  while (tb_->warmer_stats().pages_read < 16 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GE(tb_->warmer_stats().pages_read, 16u);
  EXPECT_GE(tb_->GetMemoryUsageBytes(), PageWarmer::kStep + 16 * 4096);
  std::vector<std::string> want;
  ChunkID id = 0;
  // Bounded: each chunk adds about 4 KiB.
  while (tb_->used_size() < (3 << 20)) {
    want.push_back(std::string(4000, static_cast<char>('a' + id % 26)));
    ASSERT_TRUE(Commit(1, 1, id++, {want.back()}));
  }
  // Memory grows with the data: the lookahead and a step past it at most
  // (and the bookkeeping, well under 64 KiB here).
  EXPECT_LE(tb_->GetMemoryUsageBytes(),
            tb_->used_size() + (1 << 20) + 2 * PageWarmer::kStep + 65536);
  std::unique_ptr<TraceBufferV2> clone = tb_->CloneReadOnly();
  ASSERT_TRUE(clone);
  EXPECT_EQ(clone->warmer_stats().pages_read, 0u);
  EXPECT_EQ(Data(Read()), want);

  Create(8 << 20);  // created after the reset: no warmer
  EXPECT_EQ(tb_->warmer_stats().pages_read, 0u);
  EXPECT_EQ(tb_->warmer_stats().steps_committed, 0u);
}

// With huge pages the first pass commits one 2 MiB step ahead; the data
// reads back as with small pages. The setting applies to the buffers
// created after it. A kernel without transparent huge pages refuses the
// advice, and the buffer says it uses small pages.
TEST_F(TraceBufferV2Test, HugePagesCommitTwoMiBAhead) {
  TraceBufferV2::SetPagesForNewBuffers(TraceBufferV2::Pages::kHuge);
  Create(8 << 20);
  TraceBufferV2::SetPagesForNewBuffers(TraceBufferV2::Pages::kSmall);
  if (tb_->pages() != TraceBufferV2::Pages::kHuge)
    GTEST_SKIP() << "MADV_HUGEPAGE refused: no transparent huge pages";
  if (!KernelCommitsAhead())
    GTEST_SKIP() << "MADV_POPULATE_WRITE unsupported: pages fault in lazily";
  constexpr size_t kStep = size_t{2} << 20;
  ASSERT_TRUE(Commit(1, 1, 0, {"a"}));
  EXPECT_EQ(tb_->committed_ahead(), kStep);
  const std::string big(4000, 'x');
  std::vector<std::string> want = {"a"};
  ChunkID id = 1;
  // Bounded: each chunk adds about 4 KiB.
  while (tb_->used_size() <= kStep) {
    EXPECT_EQ(tb_->committed_ahead(), kStep);
    ASSERT_TRUE(Commit(1, 1, id++, {big}));
    want.push_back(big);
  }
  EXPECT_EQ(tb_->committed_ahead(), 2 * kStep);
  EXPECT_EQ(Data(Read()), want);

  Create(1 << 20);  // created after the reset: small pages again
  EXPECT_EQ(tb_->pages(), TraceBufferV2::Pages::kSmall);
}

// ---- Fragmentation ----------------------------------------------------------

TEST_F(TraceBufferV2Test, FragmentChainAcrossThreeChunks) {
  // The example of docs/trace-buffer-design.md 3.2: Packet2 = [Begin] ->
  // [Continue] -> [End].
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 100, {"P1", "P2a"}, kOnNext));
  ASSERT_TRUE(Commit(1, 1, 101, {"P2b"}, kFromPrev | kOnNext));
  ASSERT_TRUE(Commit(1, 1, 102, {"P2c", "P3"}, kFromPrev));
  EXPECT_EQ(Read(),
            (std::vector<ReadPacket>{RP(1, 1, "P1"), RP(1, 1, "P2aP2bP2c"),
                                     RP(1, 1, "P3")}));
  EXPECT_EQ(tb_->stats().readaheads_succeeded, 1u);
  EXPECT_FALSE(tb_->has_data());
}

TEST_F(TraceBufferV2Test, IncompleteFragmentChainStallsOnlyItsSequence) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"A0", "A1a"}, kOnNext));
  ASSERT_TRUE(Commit(2, 1, 0, {"B0"}));
  // Sequence 1 waits for the rest of A1; sequence 2 is not held back.
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{RP(1, 1, "A0"), RP(2, 1, "B0")}));
  ASSERT_TRUE(Commit(1, 1, 1, {"A1b", "A2"}, kFromPrev));
  EXPECT_EQ(Read(),
            (std::vector<ReadPacket>{RP(1, 1, "A1aA1b"), RP(1, 1, "A2")}));
}

TEST_F(TraceBufferV2Test, ReassemblyGapDropsPacketAndReportsLoss) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"A0", "A1a"}, kOnNext));
  // Chunk 1 (the middle of A1) never arrives.
  ASSERT_TRUE(Commit(1, 1, 2, {"A1c", "A2"}, kFromPrev));
  std::vector<ReadPacket> got = Read();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], RP(1, 1, "A0"));
  EXPECT_EQ(got[1].data, "A2");
  EXPECT_TRUE(got[1].loss & kDataLossReassemblyGap);
  EXPECT_TRUE(got[1].loss & kDataLossReadGap);
  EXPECT_TRUE(got[1].loss & kDataLossPresent);
  // The continuation of the dropped packet is not reported as an orphan.
  EXPECT_FALSE(got[1].loss & kDataLossOrphanContinuation);
}

TEST_F(TraceBufferV2Test, BrokenChainWhenNextChunkDoesNotContinue) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"A0a"}, kOnNext));
  ASSERT_TRUE(Commit(1, 1, 1, {"A1", "A2"}));  // No kFromPrev.
  std::vector<ReadPacket> got = Read();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].data, "A1");
  EXPECT_EQ(got[0].loss, kDataLossPresent | kDataLossReassemblyBrokenChain);
  EXPECT_EQ(got[1], RP(1, 1, "A2"));
}

TEST_F(TraceBufferV2Test, OrphanContinuationIsDroppedAndReported) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 5, {"tail", "A1"}, kFromPrev));
  ASSERT_TRUE(Commit(2, 1, 0, {"B0"}));
  std::vector<ReadPacket> got = Read();
  EXPECT_EQ(got,
            (std::vector<ReadPacket>{
                RP(1, 1, "A1", kDataLossPresent | kDataLossOrphanContinuation),
                RP(2, 1, "B0")}));
}

TEST_F(TraceBufferV2Test, ReadGapOnMissingChunkId) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 1, {"a"}));
  ASSERT_TRUE(Commit(1, 1, 3, {"b"}));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{
                        RP(1, 1, "a"),
                        RP(1, 1, "b", kDataLossPresent | kDataLossReadGap)}));
}

TEST_F(TraceBufferV2Test, ChunkIdWrapsAt2To32) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0xfffffffe, {"a"}));
  // Out of order across the wrap, in one batch.
  ASSERT_TRUE(Commit(1, 1, 0, {"c2", "d1"}, kFromPrev | kOnNext));
  ASSERT_TRUE(Commit(1, 1, 0xffffffff, {"b", "c1"}, kOnNext));
  ASSERT_TRUE(Commit(1, 1, 1, {"d2"}, kFromPrev));
  EXPECT_EQ(Read(),
            (std::vector<ReadPacket>{RP(1, 1, "a"), RP(1, 1, "b"),
                                     RP(1, 1, "c1c2"), RP(1, 1, "d1d2")}));
  EXPECT_EQ(tb_->stats().chunks_committed_out_of_order, 1u);
  // A gap across the wrap is still a gap.
  ASSERT_TRUE(Commit(1, 1, 3, {"e"}));
  EXPECT_EQ(Read(), (std::vector<ReadPacket>{
                        RP(1, 1, "e", kDataLossPresent | kDataLossReadGap)}));
}

// ---- Out-of-order commits and buffer vs sequence order ----------------------

TEST_F(TraceBufferV2Test, OutOfOrderBatchIsReadInChunkIdOrder) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 3, {"c"}));
  ASSERT_TRUE(Commit(1, 1, 1, {"a"}));
  ASSERT_TRUE(Commit(1, 1, 2, {"b"}));
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(tb_->stats().chunks_committed_out_of_order, 2u);
}

TEST_F(TraceBufferV2Test, LateChunkAfterItsSuccessorWasReadIsDropped) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 1, {"a"}));
  ASSERT_TRUE(Commit(1, 1, 3, {"c"}));
  EXPECT_EQ(Read().size(), 2u);
  EXPECT_FALSE(Commit(1, 1, 2, {"b"}));
  EXPECT_EQ(tb_->stats().late_chunks_dropped, 1u);
  EXPECT_TRUE(Read().empty());
}

// Design doc: buffer order A1, B1, B3, A2, B2 with the write cursor just
// before B3. Only FIFO-preserving linearisations are acceptable.
TEST_F(TraceBufferV2Test, BufferOrderVsSequenceOrderWorkedCase) {
  Create(4096);
  const std::string big = Pkt("F", 1024 - 16 - 4 - 4 - 4);
  // Filler (seq 9) at [0, 1024); then B3, A2, B2 of 1024 bytes each, up to
  // the end; then A1, B1 (512 each) wrap over the filler: wr_ = 1024 = B3.
  ASSERT_TRUE(Commit(9, 9, 0, {"F", big}));
  const std::string k = Pkt("k", 1024 - 16 - 4 - 4 - 4);
  const std::string h = Pkt("h", 512 - 16 - 4 - 4 - 4);
  ASSERT_EQ(OuterSize({"F", big}), 1024u);
  ASSERT_TRUE(Commit(2, 1, 3, {"B3", k}));
  ASSERT_TRUE(Commit(1, 1, 2, {"A2", k}));
  ASSERT_TRUE(Commit(2, 1, 2, {"B2", k}));
  ASSERT_EQ(tb_->used_size(), 4096u);
  ASSERT_TRUE(Commit(1, 1, 1, {"A1", h}));
  ASSERT_TRUE(Commit(2, 1, 1, {"B1", h}));
  ASSERT_EQ(OuterSize({"A1", h}), 512u);
  EXPECT_EQ(tb_->stats().write_wrap_count, 1u);
  EXPECT_EQ(tb_->stats().chunks_overwritten, 1u);

  std::vector<std::string> got;
  for (const ReadPacket& p : Read()) {
    EXPECT_EQ(p.loss, 0u);
    if (p.data.size() < 4)
      got.push_back(p.data);
  }
  // Per-sequence FIFO: A1 < A2 and B1 < B2 < B3, and everything once.
  auto pos = [&](const std::string& s) {
    return std::find(got.begin(), got.end(), s) - got.begin();
  };
  ASSERT_EQ(got.size(), 5u);
  EXPECT_LT(pos("A1"), pos("A2"));
  EXPECT_LT(pos("B1"), pos("B2"));
  EXPECT_LT(pos("B2"), pos("B3"));
  // The walk starts at the oldest chunk (B3): sequence B comes first.
  EXPECT_EQ(got, (std::vector<std::string>{"B1", "B2", "B3", "A1", "A2"}));
}

// The same case as docs/trace-buffer-design.md 6.3 states it: A1 and B1 already
// read, B3 A2 B2 written in one (scraping) batch, the write cursor just before
// B3. The only valid outputs are [A2 B2 B3], [B2 B3 A2] and [B2 A2 B3].
TEST_F(TraceBufferV2Test, WorkedCaseOnlyFifoPreservingLinearisations) {
  Create(4096);
  const std::string k = Pkt("k", 1024 - 16 - 4 - 4 - 4);
  ASSERT_TRUE(Commit(1, 1, 1, {"A1", k}));
  ASSERT_TRUE(Commit(2, 1, 1, {"B1", k}));
  EXPECT_EQ(Read().size(), 4u);
  // B3, A2 fill the buffer; B2 wraps to 0: the cursor ends at 1024, before
  // B1 (consumed) and B3.
  ASSERT_TRUE(Commit(2, 1, 3, {"B3", k}));
  ASSERT_TRUE(Commit(1, 1, 2, {"A2", k}));
  ASSERT_TRUE(Commit(2, 1, 2, {"B2", k}));
  EXPECT_EQ(tb_->stats().write_wrap_count, 1u);
  EXPECT_EQ(tb_->stats().chunks_overwritten, 0u);  // A1 was read.
  std::vector<std::string> got;
  for (const ReadPacket& p : Read()) {
    EXPECT_EQ(p.loss, 0u);
    if (p.data.size() == 2)
      got.push_back(p.data);
  }
  const std::vector<std::vector<std::string>> valid = {
      {"A2", "B2", "B3"}, {"B2", "B3", "A2"}, {"B2", "A2", "B3"}};
  EXPECT_NE(std::find(valid.begin(), valid.end(), got), valid.end())
      << ::testing::PrintToString(got);
}

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
