/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/trace_buffer_v2_sink.h"

#include <gtest/gtest.h>

#include <string.h>

#include <memory>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::ChunkFlags;
using trace_buffer::TBChunkFlags;
using ChunkID = ::ringtrace::ChunkID;
using WriterID = ::ringtrace::WriterID;

// Two flag vocabularies, the ring's and TraceBufferV2's (whose admission
// flags are its chunk flags). They do not convert into each other, nor from
// integers: the only way across is MapChunkFlags().
static_assert(std::is_same<trace_buffer::TBChunkFlags, TBChunkFlags>::value,
              "");
static_assert(!std::is_convertible<ChunkFlags, TBChunkFlags>::value, "");
static_assert(!std::is_convertible<TBChunkFlags, ChunkFlags>::value, "");
static_assert(!std::is_convertible<uint32_t, ChunkFlags>::value, "");
static_assert(!std::is_convertible<uint16_t, TBChunkFlags>::value, "");
static_assert(!std::is_convertible<ChunkFlags, uint32_t>::value, "");
static_assert(!std::is_constructible<TBChunkFlags, ChunkFlags>::value, "");

TEST(TraceBufferV2SinkTest, MapChunkFlagsMapsEachBitByName) {
  static_assert(
      MapChunkFlags(shm_ring::kNoChunkFlags) == trace_buffer::kNoTBChunkFlags,
      "");
  EXPECT_TRUE(MapChunkFlags(shm_ring::kFlagContinuesFromPrev) ==
              trace_buffer::kChunkContinuesFromPrev);
  EXPECT_TRUE(MapChunkFlags(shm_ring::kFlagContinuesOnNext) ==
              trace_buffer::kChunkContinuesOnNext);
  EXPECT_TRUE(MapChunkFlags(shm_ring::kFlagDataLoss) ==
              trace_buffer::kChunkDataLoss);
  EXPECT_TRUE(MapChunkFlags(ChunkFlags::FromBits(7u)) ==
              (trace_buffer::kChunkContinuesFromPrev |
               trace_buffer::kChunkContinuesOnNext |
               trace_buffer::kChunkDataLoss));
  // The vocabularies really differ: the same bit means different things.
  EXPECT_NE(MapChunkFlags(shm_ring::kFlagDataLoss).bits(),
            shm_ring::kFlagDataLoss.bits());
  EXPECT_NE(MapChunkFlags(shm_ring::kFlagContinuesFromPrev).bits(),
            shm_ring::kFlagContinuesFromPrev.bits());
  // Every ring flag lands on a bit the drainer path admits: none is lost.
  for (uint32_t bits = 0; bits < 8; bits++) {
    const TBChunkFlags mapped = MapChunkFlags(ChunkFlags::FromBits(bits));
    EXPECT_TRUE((mapped & trace_buffer::kFragmentAdmissionMask) == mapped);
  }
}

// Offers one chunk of |n| 64-byte fragments; commits it if admitted (or
// aborts it, with |abort|). Returns whether it was admitted.
bool Offer(TraceBufferV2Sink* sink,
           WriterID writer,
           ChunkID chunk,
           size_t n,
           ChunkFlags flags,
           bool abort = false) {
  std::vector<uint32_t> sizes(n, 64);
  uint8_t* const dst = sink->BeginChunkFragments(
      1, trace_buffer::ClientIdentity(), writer, chunk, sizes.data(), n, flags);
  if (!dst)
    return false;
  std::fill(dst, dst + 64 * n, 0x08);
  if (abort)
    sink->AbortPendingChunk();
  else
    sink->CommitPendingChunk();
  return true;
}

// A full DISCARD buffer loses whole chunks; the sink counts their packets,
// each once, whether a chunk is offered again as it grows, continues a
// packet whose head the buffer holds, or was aborted before. A packet that
// goes on past a rejected chunk counts once its end is offered.
TEST(TraceBufferV2SinkTest, CountsEveryPacketOfDiscardedChunksOnce) {
  using trace_buffer::TraceBufferV2;
  std::unique_ptr<TraceBufferV2> buffer =
      TraceBufferV2::Create(4096, TraceBufferV2::OverwritePolicy::kDiscard);
  ASSERT_TRUE(buffer);
  TraceBufferV2Sink sink(buffer.get());
  const ChunkFlags cont =
      shm_ring::kFlagContinuesFromPrev | shm_ring::kFlagContinuesOnNext;
  // Writer 2's chunk is copied, then the copy is aborted: not in the buffer.
  ASSERT_TRUE(Offer(&sink, 2, 1, 3, shm_ring::kNoChunkFlags, /*abort=*/true));
  // Writer 1 fills the buffer: 3 fragments per chunk, the last one
  // continuing into the next chunk.
  ChunkID chunk = 1;
  ASSERT_TRUE(Offer(&sink, 1, chunk, 3, shm_ring::kFlagContinuesOnNext));
  while (Offer(&sink, 1, ++chunk, 3, cont)) {
    ASSERT_LT(chunk, 100u);
  }
  EXPECT_EQ(buffer->stats().chunks_discarded, 1u);
  // The first rejected chunk: the packet whose head the buffer holds (it
  // ends here) and the one that begins and ends in it; the third goes on.
  EXPECT_EQ(sink.packets_discarded(), 2u);
  // Offered again, grown to 5 fragments: the third ended after all, the
  // fourth is new, the fifth goes on.
  EXPECT_FALSE(Offer(&sink, 1, chunk, 5, cont));
  EXPECT_EQ(sink.packets_discarded(), 4u);
  // The next chunk ends the packet going on, then one more; its last goes
  // on.
  EXPECT_FALSE(Offer(&sink, 1, chunk + 1, 3, cont));
  EXPECT_EQ(sink.packets_discarded(), 6u);
  // Writer 2's aborted chunk comes again: all 3 are lost.
  EXPECT_FALSE(Offer(&sink, 2, 1, 3, shm_ring::kNoChunkFlags));
  EXPECT_EQ(sink.packets_discarded(), 9u);
  EXPECT_EQ(buffer->stats().chunks_discarded, 4u);
}

// A writer that gets no next chunk loses the rest of the packet it is
// writing and counts it as dropped itself (its producer reports it); its
// next chunk carries the data-loss flag and does not continue the packet.
// The sink must not count that packet too, whether its head was in a
// discarded chunk or in the buffer.
TEST(TraceBufferV2SinkTest, PacketsTheWriterLostAreNotCountedAgain) {
  using trace_buffer::TraceBufferV2;
  std::unique_ptr<TraceBufferV2> buffer =
      TraceBufferV2::Create(4096, TraceBufferV2::OverwritePolicy::kDiscard);
  ASSERT_TRUE(buffer);
  TraceBufferV2Sink sink(buffer.get());
  // Writer 1: its last admitted chunk ends with a packet going on; its next
  // chunk (rejected) does not continue it.
  ChunkID chunk = 0;
  while (Offer(&sink, 1, chunk, 3, shm_ring::kFlagContinuesOnNext)) {
    ASSERT_LT(++chunk, 100u);
  }
  // The first rejected chunk was offered as a fresh chunk by the loop;
  // writer 1 offers its real next chunk: data loss, not continuing.
  EXPECT_EQ(sink.packets_discarded(), 2u);  // the third goes on
  EXPECT_FALSE(Offer(&sink, 1, chunk + 1, 2, shm_ring::kFlagDataLoss));
  EXPECT_EQ(sink.packets_discarded(), 4u);  // not 5: the writer's loss
  // A packet beginning in a rejected chunk, carried on by a second one,
  // then lost by the writer: not counted.
  EXPECT_FALSE(Offer(&sink, 1, chunk + 2, 1, shm_ring::kFlagContinuesOnNext));
  EXPECT_FALSE(
      Offer(&sink, 1, chunk + 3, 1,
            shm_ring::kFlagContinuesFromPrev | shm_ring::kFlagContinuesOnNext));
  EXPECT_FALSE(Offer(&sink, 1, chunk + 4, 1, shm_ring::kFlagDataLoss));
  EXPECT_EQ(sink.packets_discarded(), 5u);
  // The same packet shape finished by the writer: counted once, at its end.
  EXPECT_FALSE(Offer(&sink, 1, chunk + 5, 1, shm_ring::kFlagContinuesOnNext));
  EXPECT_FALSE(
      Offer(&sink, 1, chunk + 6, 1,
            shm_ring::kFlagContinuesFromPrev | shm_ring::kFlagContinuesOnNext));
  EXPECT_EQ(sink.packets_discarded(), 5u);
  EXPECT_FALSE(Offer(&sink, 1, chunk + 7, 1, shm_ring::kFlagContinuesFromPrev));
  EXPECT_EQ(sink.packets_discarded(), 6u);
  // Writer 2: a continuation whose start this buffer never had (an
  // orphan) is not this buffer's loss; the packet after it is.
  EXPECT_FALSE(Offer(&sink, 2, 5, 2, shm_ring::kFlagContinuesFromPrev));
  EXPECT_EQ(sink.packets_discarded(), 7u);
}

// A writer as the ring writer behaves (include/ringtrace/trace_writer_v2.h):
// packets of random sizes split across chunks of up to kCapacity bytes;
// with probability 1/10 it gets no next chunk, loses the packet it is
// writing (counted dropped; its head may be offered already) and flags its
// next chunk with data loss. Each packet is "<writer>:<number>" padded with
// dots. The drainer offers some chunks twice: first their finished packets
// (a scrape whose copy is then aborted, or which the full buffer rejects),
// then the whole chunk.
class ModelWriter {
 public:
  static constexpr size_t kCapacity = 512;

  ModelWriter(TraceBufferV2Sink* sink, WriterID w) : sink_(sink), w_(w) {}

  void WritePacket(std::minstd_rand* rng, size_t size) {
    std::string packet = std::to_string(w_) + ":" + std::to_string(number_++);
    packet.resize(std::max(size, packet.size() + 1), '.');
    if (!have_chunk_ || used_ == kCapacity) {
      if (have_chunk_)
        Publish(rng, false);
      if (!Acquire(rng, false)) {
        dropped_++;
        return;
      }
    }
    // Bounded: every round takes at least one byte of the packet.
    for (size_t off = 0;;) {
      const size_t n = std::min(kCapacity - used_, packet.size() - off);
      frags_.push_back(packet.substr(off, n));
      used_ += n;
      off += n;
      if (off == packet.size()) {
        committed_.insert(packet);
        return;
      }
      Publish(rng, true);
      if (!Acquire(rng, true)) {
        dropped_++;
        return;
      }
    }
  }
  void Finish(std::minstd_rand* rng) {
    if (have_chunk_ && !frags_.empty())
      Publish(rng, false);
  }
  const std::set<std::string>& committed() const { return committed_; }
  uint64_t dropped() const { return dropped_; }

 private:
  bool Acquire(std::minstd_rand* rng, bool continuing) {
    if ((*rng)() % 10 == 0) {
      lost_ = true;
      return false;
    }
    have_chunk_ = true;
    from_prev_ = continuing;
    used_ = 0;
    frags_.clear();
    return true;
  }
  // Offers |n| fragments with |flags|; commits (or aborts) if admitted.
  bool OfferFrags(size_t n, ChunkFlags flags, bool abort) {
    std::vector<uint32_t> sizes;
    for (size_t i = 0; i < n; i++)
      sizes.push_back(static_cast<uint32_t>(frags_[i].size()));
    uint8_t* dst =
        sink_->BeginChunkFragments(1, trace_buffer::ClientIdentity(), w_,
                                   next_id_, sizes.data(), n, flags);
    if (!dst)
      return false;
    for (size_t i = 0; i < n; i++) {
      memcpy(dst, frags_[i].data(), frags_[i].size());
      dst += frags_[i].size();
    }
    if (abort)
      sink_->AbortPendingChunk();
    else
      sink_->CommitPendingChunk();
    return true;
  }
  void Publish(std::minstd_rand* rng, bool on_next) {
    ChunkFlags flags;
    if (from_prev_)
      flags |= shm_ring::kFlagContinuesFromPrev;
    if (lost_)
      flags |= shm_ring::kFlagDataLoss;
    // A scrape: the finished packets only (not the last one if it goes on,
    // nor a first fragment that is not the end of its packet).
    const size_t scraped = frags_.size() - (on_next ? 1 : 0);
    if (scraped > 0 && (*rng)() % 4 == 0)
      OfferFrags(scraped, flags, /*abort=*/true);
    if (on_next)
      flags |= shm_ring::kFlagContinuesOnNext;
    OfferFrags(frags_.size(), flags, /*abort=*/false);
    lost_ = false;
    next_id_++;
    have_chunk_ = false;
  }

  TraceBufferV2Sink* const sink_;
  const WriterID w_;
  uint64_t number_ = 0;
  bool have_chunk_ = false;
  bool from_prev_ = false;
  bool lost_ = false;
  size_t used_ = 0;
  ChunkID next_id_ = 0;
  std::vector<std::string> frags_;
  std::set<std::string> committed_;
  uint64_t dropped_ = 0;
};

// Exact accounting through a small DISCARD buffer: every packet the
// writers finished and did not count as dropped is read or counted in
// packets_discarded, never both (written = read + packets_discarded + the
// writers' own drops).
TEST(TraceBufferV2SinkTest, WrittenEqualsReadPlusDiscardedPlusDropped) {
  using trace_buffer::TraceBufferV2;
  for (uint32_t seed = 1; seed <= 20; seed++) {
    std::unique_ptr<TraceBufferV2> buffer =
        TraceBufferV2::Create(16384, TraceBufferV2::OverwritePolicy::kDiscard);
    ASSERT_TRUE(buffer);
    TraceBufferV2Sink sink(buffer.get());
    std::minstd_rand rng(seed);
    std::vector<ModelWriter> writers;
    for (WriterID w = 1; w <= 3; w++)
      writers.emplace_back(&sink, w);
    std::multiset<std::string> read;
    auto read_pass = [&] {
      buffer->BeginRead();
      trace_buffer::TracePacket packet;
      trace_buffer::PacketSequenceProperties props;
      uint32_t loss = 0;
      while (buffer->ReadNextTracePacket(&packet, &props, &loss))
        read.insert(packet.GetRawBytesForTesting());
    };
    for (int i = 0; i < 1000; i++) {
      writers[rng() % writers.size()].WritePacket(&rng, 20 + rng() % 700);
      if (rng() % 40 == 0)
        read_pass();
    }
    for (ModelWriter& w : writers)
      w.Finish(&rng);
    read_pass();
    uint64_t committed = 0;
    uint64_t dropped = 0;
    for (const ModelWriter& w : writers) {
      committed += w.committed().size();
      dropped += w.dropped();
      for (const std::string& packet : w.committed())
        ASSERT_LE(read.count(packet), 1u) << "read twice";
    }
    ASSERT_GT(buffer->stats().chunks_discarded, 0u);
    ASSERT_GT(dropped, 0u);
    EXPECT_EQ(committed, read.size() + sink.packets_discarded())
        << "seed " << seed << " dropped " << dropped;
  }
}

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
