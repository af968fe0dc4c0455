/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/shm_ring_abi.h"

#include <gtest/gtest.h>

#include <string.h>

#include <vector>

namespace ringtrace {
namespace shm_ring {
namespace {

TEST(ShmRingAbiTest, StateWordRoundTrip) {
  const StateWord w =
      MakeDataWord(ChunkState::kAcquired, kFormatTargetBuffer,
                   kFlagContinuesFromPrev | kFlagDataLoss, 42, 0xbeef);
  EXPECT_EQ(GetState(w), ChunkState::kAcquired);
  EXPECT_EQ(GetFormat(w), kFormatTargetBuffer);
  EXPECT_EQ(GetFlags(w), kFlagContinuesFromPrev | kFlagDataLoss);
  EXPECT_EQ(GetNumFragments(w), 42u);
  EXPECT_EQ(GetWriterId(w), 0xbeef);
  // Bits 26 and 24 set, bit 25 clear.
  EXPECT_EQ((w >> 24) & 0x7, 0x5u);
  const StateWord r = WithState(w, ChunkState::kRewriteRequested);
  EXPECT_EQ(GetState(r), ChunkState::kRewriteRequested);
  EXPECT_EQ(r & kPayloadBitsMask, w & kPayloadBitsMask);
  const StateWord c = WithNumFragmentsAndFlags(w, 43, kFlagContinuesOnNext);
  EXPECT_EQ(GetNumFragments(c), 43u);
  EXPECT_EQ(GetFlags(c), kFlagContinuesOnNext);
  EXPECT_EQ(GetWriterId(c), 0xbeef);
  EXPECT_EQ(GetState(c), ChunkState::kAcquired);
}

TEST(ShmRingAbiTest, FreeForWrapAndReservedStates) {
  EXPECT_EQ(GetState(MakeFreeForWrap(5)), ChunkState::kFreeForWrap);
  EXPECT_EQ(GetWrapCount(MakeFreeForWrap(5)), 5u);
  EXPECT_EQ(GetWrapCount(MakeFreeForWrap(0xffff'ffffu)), 0x1fff'ffffu);
  for (uint32_t s = 5; s < 8; s++)
    EXPECT_TRUE(IsReservedState(s << 29));
  for (uint32_t s = 0; s < 5; s++)
    EXPECT_FALSE(IsReservedState(s << 29));
  EXPECT_EQ(GetPayloadBits(MakeAcknowledged()), 0u);
}

TEST(ShmRingAbiTest, GeometryValidation) {
  EXPECT_EQ(ValidateGeometry(256, 2), GeometryError::kOk);
  EXPECT_EQ(ValidateGeometry(32768, 1u << 30), GeometryError::kOk);
  EXPECT_EQ(ValidateGeometry(128, 4), GeometryError::kChunkSizeOutOfRange);
  EXPECT_EQ(ValidateGeometry(65536, 4), GeometryError::kChunkSizeOutOfRange);
  EXPECT_EQ(ValidateGeometry(300, 4), GeometryError::kChunkSizeNotPowerOfTwo);
  EXPECT_EQ(ValidateGeometry(256, 1), GeometryError::kNumChunksOutOfRange);
  EXPECT_EQ(ValidateGeometry(256, 1u << 31),
            GeometryError::kNumChunksOutOfRange);
  EXPECT_EQ(ValidateGeometry(256, 6), GeometryError::kNumChunksNotPowerOfTwo);
  EXPECT_EQ(ValidateGeometry(256, 0), GeometryError::kNumChunksNotPowerOfTwo);
  EXPECT_STREQ(GeometryErrorToString(GeometryError::kNumChunksOutOfRange),
               "num_chunks is outside [2, 2^31)");
}

TEST(ShmRingAbiTest, PositionTablesForFourChunks) {
  const RingGeometry g(256, 4);
  const uint32_t kIndex[] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0};
  const uint32_t kWrap[] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3};
  for (uint32_t p = 0; p < 13; p++) {
    EXPECT_EQ(g.ChunkIndex(p), kIndex[p]) << p;
    EXPECT_EQ(g.WrapCount(p), kWrap[p]) << p;
  }
  EXPECT_EQ(g.NextWrap(8), 3u);
}

TEST(ShmRingAbiTest, RolloverArithmetic) {
  EXPECT_EQ(RingGeometry::Distance(2, 0xffff'fffcu), 6u);
  const RingGeometry g16(256, 16);
  EXPECT_EQ(g16.NextWrap(0xffff'fff0u), 0u);
  // A blind increment of the tag would give this instead.
  EXPECT_NE(g16.WrapCount(0xffff'fff0u) + 1, g16.NextWrap(0xffff'fff0u));
  EXPECT_TRUE(g16.IsFull(0x0000'000cu, 0xffff'fffcu));
  EXPECT_FALSE(g16.IsFull(0x0000'000bu, 0xffff'fffcu));
  EXPECT_TRUE(RingGeometry::IsEmpty(7, 7));
}

TEST(ShmRingAbiTest, WorkedExampleSection61) {
  // Fragments of 5, 200 and 3 bytes in a 256-byte format-00 chunk.
  std::vector<uint8_t> chunk(256, 0);
  const uint32_t w = SizeEntryWidth(256);
  const uint32_t sizes[] = {5, 200, 3};
  uint32_t payload_cursor = kPayloadStartFormat00;
  uint32_t dir_cursor = 256;
  for (uint32_t i = 0; i < 3; i++) {
    memset(&chunk[payload_cursor], static_cast<int>(0xa0 + i), sizes[i]);
    WriteSizeEntry(&chunk[SizeEntryOffset(256, i)], w, sizes[i]);
    dir_cursor -= w;
    payload_cursor += sizes[i];
  }
  EXPECT_EQ(chunk[255], 0x05);
  EXPECT_EQ(chunk[254], 0xc8);
  EXPECT_EQ(chunk[253], 0x03);
  EXPECT_EQ(payload_cursor, 214u);
  EXPECT_EQ(dir_cursor, 253u);
  EXPECT_EQ(dir_cursor - payload_cursor, 39u);
  EXPECT_EQ(chunk[10], 0xa0);
  EXPECT_EQ(chunk[11], 0xa1);
  EXPECT_EQ(chunk[210], 0xa1);
  EXPECT_EQ(chunk[211], 0xa2);
  EXPECT_EQ(chunk[214], 0);
}

TEST(ShmRingAbiTest, TwoByteEntriesAreLittleEndian) {
  uint8_t entry[2] = {};
  WriteSizeEntry(entry, 2, 0x1234);
  EXPECT_EQ(entry[0], 0x34);
  EXPECT_EQ(entry[1], 0x12);
  EXPECT_EQ(ReadSizeEntry(entry, 2), 0x1234u);
  EXPECT_EQ(ReadSizeEntry(entry, 1), 0x34u);
}

TEST(ShmRingAbiTest, ZeroFilledMappingIsAnEmptyRing) {
  const RingGeometry g(256, 4);
  alignas(64) static uint8_t mapping[kControlHeaderSize + 4 * 256] = {};
  ASSERT_EQ(sizeof(mapping), g.MappingSize());
  RingView view(mapping, g);
  EXPECT_EQ(view.read_pos()->load(std::memory_order_relaxed), 0u);
  EXPECT_EQ(view.write_pos()->load(std::memory_order_relaxed), 0u);
  for (uint32_t i = 0; i < 4; i++) {
    EXPECT_EQ(view.chunk_state(i)->load(std::memory_order_relaxed),
              MakeFreeForWrap(g.WrapCount(i)));
  }
  EXPECT_EQ(view.chunk(1) - mapping, 512);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(view.write_pos()) - mapping, 64);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(view.num_writers_waiting()) - mapping,
            68);
}

// Spec 5.1, written out independently of IsLegalStateTransition(): the eight
// edges of the graph.
struct Edge {
  ChunkState from;
  ChunkState to;
  Actor actor;
};
constexpr Edge kGraph[] = {
    {ChunkState::kFreeForWrap, ChunkState::kAcquired, Actor::kWriter},
    {ChunkState::kAcquired, ChunkState::kComplete, Actor::kWriter},
    {ChunkState::kComplete, ChunkState::kAcquired, Actor::kWriter},
    {ChunkState::kRewriteRequested, ChunkState::kAcknowledged, Actor::kWriter},
    {ChunkState::kFreeForWrap, ChunkState::kFreeForWrap, Actor::kReader},
    {ChunkState::kAcquired, ChunkState::kRewriteRequested, Actor::kReader},
    {ChunkState::kComplete, ChunkState::kFreeForWrap, Actor::kReader},
    {ChunkState::kAcknowledged, ChunkState::kFreeForWrap, Actor::kReader},
};

bool InGraph(ChunkState from, ChunkState to, Actor actor) {
  for (const Edge& e : kGraph) {
    if (e.from == from && e.to == to && e.actor == actor)
      return true;
  }
  return false;
}

// Every (from, to, actor) triple: 8 x 8 x 2.
TEST(ShmRingAbiTest, StateTransitionGraphIsExactlySpec51) {
  int legal = 0;
  for (uint32_t f = 0; f < 8; ++f) {
    for (uint32_t t = 0; t < 8; ++t) {
      for (Actor a : {Actor::kWriter, Actor::kReader}) {
        const auto from = static_cast<ChunkState>(f);
        const auto to = static_cast<ChunkState>(t);
        EXPECT_EQ(IsLegalStateTransition(from, to, a), InGraph(from, to, a))
            << "from " << f << " to " << t << " actor " << static_cast<int>(a);
        legal += IsLegalStateTransition(from, to, a) ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(legal, 8);
}

// A word of each state with varied payload bits.
std::vector<StateWord> SampleWords() {
  std::vector<StateWord> words;
  for (uint32_t k : {0u, 1u, 2u, 0x1fff'fffeu, 0x1fff'ffffu})
    words.push_back(MakeFreeForWrap(k));
  for (ChunkState s : {ChunkState::kAcquired, ChunkState::kComplete,
                       ChunkState::kRewriteRequested}) {
    for (ChunkFlags flags : {kNoChunkFlags, kFlagContinuesOnNext,
                             kFlagContinuesFromPrev | kFlagDataLoss}) {
      for (uint32_t n : {0u, 1u, 7u, 255u}) {
        for (WriterID w : {WriterID{1}, WriterID{0xffff}}) {
          words.push_back(MakeDataWord(s, kFormatTargetBuffer, flags, n, w));
          words.push_back(MakeDataWord(s, kFormatPacketRouting, flags, n, w));
        }
      }
    }
  }
  words.push_back(MakeAcknowledged());
  words.push_back(MakeAcknowledged() | 1u);  // forged payload bits
  for (uint32_t s = 5; s < 8; ++s)
    words.push_back(s << kStateShift);
  return words;
}

// The word-level check refines the state-level graph and pins the payload
// rules of each edge, for every pair of sample words and both actors.
TEST(ShmRingAbiTest, WordTransitionsFollowSpec51Payload) {
  const std::vector<StateWord> words = SampleWords();
  size_t legal_writer = 0;
  size_t legal_reader = 0;
  for (StateWord from : words) {
    for (StateWord to : words) {
      for (Actor a : {Actor::kWriter, Actor::kReader}) {
        const ChunkState fs = GetState(from);
        const ChunkState ts = GetState(to);
        bool expected = InGraph(fs, ts, a);
        if (expected && fs == ChunkState::kFreeForWrap &&
            ts == ChunkState::kAcquired) {
          expected = GetNumFragments(to) == 0;
        } else if (expected && fs == ChunkState::kFreeForWrap) {
          expected =
              GetWrapCount(to) == ((GetWrapCount(from) + 1) & kWrapCountMask) ||
              GetWrapCount(to) == 0;
        } else if (expected && fs == ChunkState::kAcquired &&
                   ts == ChunkState::kComplete) {
          expected = GetFormat(to) == GetFormat(from) &&
                     GetWriterId(to) == GetWriterId(from) &&
                     GetNumFragments(to) >= GetNumFragments(from) &&
                     (GetFlags(to) | kFlagContinuesOnNext) ==
                         (GetFlags(from) | kFlagContinuesOnNext);
        } else if (expected && ((fs == ChunkState::kAcquired &&
                                 ts == ChunkState::kRewriteRequested) ||
                                (fs == ChunkState::kComplete &&
                                 ts == ChunkState::kAcquired))) {
          expected = (to & kPayloadBitsMask) == (from & kPayloadBitsMask);
        } else if (expected && ts == ChunkState::kAcknowledged) {
          expected = to == MakeAcknowledged();
        }
        EXPECT_EQ(IsLegalTransition(from, to, a), expected)
            << std::hex << from << " -> " << to << " actor "
            << static_cast<int>(a);
        if (IsLegalTransition(from, to, a))
          ++(a == Actor::kWriter ? legal_writer : legal_reader);
      }
    }
  }
  // Both actors have legal word pairs among the samples, so neither half of
  // the check is vacuous.
  EXPECT_GT(legal_writer, 0u);
  EXPECT_GT(legal_reader, 0u);
}

// The concrete transitions the writer and the reader make.
TEST(ShmRingAbiTest, ProtocolStepsAreLegalAndMisattributionIsNot) {
  const RingGeometry g(256, 4);
  const uint32_t p = 9;  // lap 2, chunk 1
  const StateWord free_w = MakeFreeForWrap(g.WrapCount(p));
  const StateWord next = MakeFreeForWrap(g.NextWrap(p));
  const StateWord acq = MakeDataWord(ChunkState::kAcquired, kFormatTargetBuffer,
                                     shm_ring::kNoChunkFlags, 0, 5);
  const StateWord acq3 =
      WithNumFragmentsAndFlags(acq, 3, shm_ring::kNoChunkFlags);
  const StateWord cpl3 = WithState(acq3, ChunkState::kComplete);
  const StateWord cpl4_on_next = MakeDataWord(
      ChunkState::kComplete, kFormatTargetBuffer, kFlagContinuesOnNext, 4, 5);
  const StateWord rwr3 = WithState(acq3, ChunkState::kRewriteRequested);

  EXPECT_TRUE(IsLegalTransition(free_w, acq, Actor::kWriter));
  EXPECT_TRUE(IsLegalTransition(free_w, next, Actor::kReader));
  EXPECT_TRUE(IsLegalTransition(acq3, cpl3, Actor::kWriter));
  EXPECT_TRUE(IsLegalTransition(acq3, cpl4_on_next, Actor::kWriter));
  EXPECT_TRUE(IsLegalTransition(cpl3, acq3, Actor::kWriter));
  EXPECT_TRUE(IsLegalTransition(acq3, rwr3, Actor::kReader));
  EXPECT_TRUE(IsLegalTransition(cpl3, next, Actor::kReader));
  EXPECT_TRUE(IsLegalTransition(rwr3, MakeAcknowledged(), Actor::kWriter));
  EXPECT_TRUE(IsLegalTransition(MakeAcknowledged(), next, Actor::kReader));

  // The same edges by the other side, and edges the graph does not have.
  EXPECT_FALSE(IsLegalTransition(free_w, acq, Actor::kReader));
  EXPECT_FALSE(IsLegalTransition(acq3, rwr3, Actor::kWriter));
  EXPECT_FALSE(IsLegalTransition(cpl3, next, Actor::kWriter));
  EXPECT_FALSE(IsLegalTransition(acq3, acq3, Actor::kWriter));
  EXPECT_FALSE(IsLegalTransition(rwr3, next, Actor::kReader));
  EXPECT_FALSE(IsLegalTransition(free_w, free_w, Actor::kReader));
  EXPECT_FALSE(IsLegalTransition(free_w, MakeFreeForWrap(g.WrapCount(p) + 2),
                                 Actor::kReader));
  // Publication may not lose fragments or change the writer.
  EXPECT_FALSE(IsLegalTransition(
      acq3, WithNumFragmentsAndFlags(cpl3, 2, shm_ring::kNoChunkFlags),
      Actor::kWriter));
  EXPECT_FALSE(
      IsLegalTransition(acq3,
                        MakeDataWord(ChunkState::kComplete, kFormatTargetBuffer,
                                     shm_ring::kNoChunkFlags, 3, 6),
                        Actor::kWriter));
}

// The reader's next free word is legal for every geometry and position,
// across the 32-bit rollover of the position and the 29-bit wrap count.
TEST(ShmRingAbiTest, SettlingAHoleIsLegalAtEveryLapAndGeometry) {
  for (uint32_t bits = 1; bits <= 30; ++bits) {
    const RingGeometry g(256, 1u << bits);
    for (uint32_t p : {0u, 1u << bits, 0x7fff'ffffu,
                       0xffff'ffffu - (1u << bits), 0xffff'ffffu}) {
      const StateWord free_w = MakeFreeForWrap(g.WrapCount(p));
      const StateWord next = MakeFreeForWrap(g.NextWrap(p));
      EXPECT_TRUE(IsLegalTransition(free_w, next, Actor::kReader))
          << "bits " << bits << " position " << p;
    }
  }
}

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
