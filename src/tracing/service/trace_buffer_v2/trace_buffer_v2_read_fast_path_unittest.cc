/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2: the readback fast path (ChunkSeqReader::TakeFromRun(),
// packets taken straight from a chunk's fragment index) against the general
// path. Two buffers get the same operations, one with the fast path
// disabled (SetReadFastPathForTesting(false)); every read must return the
// same packet byte for byte, with the same sequence, loss bits and
// first_packet_on_sequence, and both must end with the same stats() and the
// same packets handed to the overwrite observer. The operations mix what
// the fast path must leave to the general path: chunks without an index
// (small fragments, drop markers, pending patches), reassembly across
// chunks, ChunkID gaps, reads interrupted by writes, overwrites, clones.
// The general path's buffer also starts every pass at the oldest data, where
// the other skips the chunks consumed there ([TB-4]).
// With batched runs, the fast buffer also takes packets in batches
// (ReadMorePacketsOfRun()) after each ReadNextTracePacket(), and each must
// be the packet the general path returns next, with no loss and not first.

#include <gtest/gtest.h>

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2_test_utils.h"

namespace ringtrace {
namespace trace_buffer {
namespace {

using test::AppendDropMarker;
using test::AppendFragment;

struct Got {
  bool ok = false;
  ProducerID producer_id = 0;
  WriterID writer_id = 0;
  std::string data;
  uint32_t loss = 0;
  bool first = false;

  bool operator==(const Got& o) const {
    return ok == o.ok && producer_id == o.producer_id &&
           writer_id == o.writer_id && data == o.data && loss == o.loss &&
           first == o.first;
  }
};

Got ReadOne(TraceBufferV2* tb) {
  TracePacket packet;
  PacketSequenceProperties props;
  Got g;
  g.ok = tb->ReadNextTracePacket(&packet, &props, &g.loss, &g.first);
  if (g.ok) {
    g.producer_id = props.producer_id_trusted;
    g.writer_id = props.writer_id;
    g.data = packet.GetRawBytesForTesting();
  }
  return g;
}

void ExpectSameStats(const TraceBufferStats& a, const TraceBufferStats& b) {
  static_assert(sizeof(TraceBufferStats) % sizeof(uint64_t) == 0,
                "only uint64_t fields, no padding");
  EXPECT_EQ(memcmp(&a, &b, sizeof(a)), 0);
  EXPECT_EQ(a.bytes_read, b.bytes_read);
  EXPECT_EQ(a.packets_overwritten, b.packets_overwritten);
  EXPECT_EQ(a.chunks_read, b.chunks_read);
}

// One writer's state in the generated stream.
struct Writer {
  ProducerID producer_id;
  WriterID writer_id;
  ChunkID next_id = 0;
  bool carry = false;  // Its last chunk ended with a packet cut in two.
  std::vector<std::pair<ChunkID, uint32_t>> to_patch;  // id, payload size
};

class FastPathPair {
 public:
  FastPathPair(size_t size, TraceBufferV2::OverwritePolicy policy, bool observe)
      : fast_(TraceBufferV2::Create(size, policy)),
        slow_(TraceBufferV2::Create(size, policy)) {
    slow_->SetReadFastPathForTesting(false);
    slow_->SetSkipConsumedPrefixForTesting(false);
    if (observe) {
      fast_->set_overwrite_observer(
          [this](const PacketSequenceProperties&, const TracePacket& p) {
            observed_fast_.push_back(p.GetRawBytesForTesting());
          });
      slow_->set_overwrite_observer(
          [this](const PacketSequenceProperties&, const TracePacket& p) {
            observed_slow_.push_back(p.GetRawBytesForTesting());
          });
    }
  }

  // The fast buffer (and its clones) also reads with ReadMorePacketsOfRun().
  void set_batched(bool batched) { batched_ = batched; }
  // Packets ReadMorePacketsOfRun() returned.
  size_t batched_packets() const { return batched_packets_; }
  // The largest consumed prefix the fast buffer had between operations.
  size_t max_prefix() const { return max_prefix_; }

  TraceBufferV2* fast() { return fast_.get(); }
  TraceBufferV2* slow() { return slow_.get(); }

  // Runs |ops| random operations from |seed| on both buffers, comparing
  // every packet read.
  void Run(uint32_t seed, size_t ops);

  // Reads both until the end of a pass; the packets must match.
  void DrainAndCompare(TraceBufferV2* a, TraceBufferV2* b) {
    // Bounded: every packet read is consumed.
    for (;;) {
      const Got ga = ReadOne(a);
      const Got gb = ReadOne(b);
      ASSERT_EQ(ga, gb);
      if (!ga.ok)
        return;
      packets_read_++;
      CompareBatch(ga, a, b, SIZE_MAX);
    }
  }

  // With batched runs: the packets of |a|'s run after |after| (at most
  // |max|, and at most 8) against |b|'s next ones. Returns how many.
  size_t CompareBatch(const Got& after,
                      TraceBufferV2* a,
                      TraceBufferV2* b,
                      size_t max) {
    if (!batched_)
      return 0;
    TracePacket::Slice run[8];
    const size_t n = a->ReadMorePacketsOfRun(run, std::min<size_t>(max, 8));
    EXPECT_LE(n, max);
    for (size_t i = 0; i < n; i++) {
      Got ga;
      ga.ok = true;
      ga.producer_id = after.producer_id;
      ga.writer_id = after.writer_id;
      ga.data.assign(reinterpret_cast<const char*>(run[i].data), run[i].size);
      EXPECT_EQ(ga, ReadOne(b));
    }
    packets_read_ += n;
    batched_packets_ += n;
    return n;
  }

  void ExpectSameEnd() {
    ExpectSameStats(fast_->stats(), slow_->stats());
    EXPECT_EQ(observed_fast_, observed_slow_);
    EXPECT_EQ(fast_->has_data(), slow_->has_data());
  }

  size_t packets_read() const { return packets_read_; }

 private:
  void Commit(std::minstd_rand* rng, Writer* w);
  void Patch(std::minstd_rand* rng, Writer* w);

  std::unique_ptr<TraceBufferV2> fast_;
  std::unique_ptr<TraceBufferV2> slow_;
  std::vector<std::string> observed_fast_;
  std::vector<std::string> observed_slow_;
  size_t packets_read_ = 0;
  bool batched_ = false;
  size_t batched_packets_ = 0;
  size_t max_prefix_ = 0;
};

// A chunk of 1-12 fragments: empty, small (under the index threshold) or
// large ones, sometimes a drop marker, sometimes a ChunkID gap, cut packets
// at either end, pending patches; half through the v1 path, half through
// the drainer path.
void FastPathPair::Commit(std::minstd_rand* rng, Writer* w) {
  const bool v1 = (*rng)() % 2;
  std::vector<std::string> frags;
  const size_t n = 1 + (*rng)() % 12;
  for (size_t i = 0; i < n; i++) {
    const uint32_t kind = (*rng)() % 10;
    const size_t len = kind == 0  ? 0
                       : kind < 4 ? 5 + (*rng)() % 56
                                  : 64 + (*rng)() % 240;
    std::string f(len, '\0');
    for (char& c : f)
      c = static_cast<char>('a' + (*rng)() % 26);
    frags.push_back(std::move(f));
  }
  if ((*rng)() % 20 == 0)
    w->next_id++;  // A chunk lost before the buffer.
  const ChunkID id = w->next_id++;
  const bool from_prev = w->carry;
  const bool on_next = (*rng)() % 3 == 0;
  w->carry = on_next;
  const ClientIdentity client{1000 + w->producer_id, 2000 + w->producer_id};
  if (v1) {
    TBChunkFlags flags;
    if (from_prev)
      flags |= kChunkContinuesFromPrev;
    if (on_next)
      flags |= kChunkContinuesOnNext;
    const bool patch = (*rng)() % 8 == 0;
    if (patch)
      flags |= kChunkNeedsPatching;
    std::vector<uint8_t> payload;
    const size_t drop_at = (*rng)() % 16 == 0 ? (*rng)() % n : n;
    for (size_t i = 0; i < n; i++) {
      if (i == drop_at)
        AppendDropMarker(&payload);
      else
        AppendFragment(&payload, frags[i]);
    }
    for (TraceBufferV2* tb : {fast_.get(), slow_.get()}) {
      tb->CopyChunkUntrusted(w->producer_id, client, w->writer_id, id,
                             static_cast<uint16_t>(n), flags, true,
                             payload.data(), payload.size());
    }
    if (patch)
      w->to_patch.emplace_back(id, static_cast<uint32_t>(payload.size()));
    return;
  }
  TBChunkFlags flags;
  if (from_prev)
    flags |= kChunkContinuesFromPrev;
  if (on_next)
    flags |= kChunkContinuesOnNext;
  std::vector<FragmentRef> refs;
  for (const std::string& f : frags) {
    refs.push_back(FragmentRef{reinterpret_cast<const uint8_t*>(f.data()),
                               static_cast<uint32_t>(f.size())});
  }
  for (TraceBufferV2* tb : {fast_.get(), slow_.get()}) {
    tb->CopyChunkFragments(w->producer_id, client, w->writer_id, id,
                           refs.data(), refs.size(), flags);
  }
}

// Patches the last 4 payload bytes of the oldest chunk waiting for patches
// (which may corrupt a short last fragment's size header: the same loss
// for both buffers).
void FastPathPair::Patch(std::minstd_rand* rng, Writer* w) {
  if (w->to_patch.empty())
    return;
  const auto target = w->to_patch.front();
  w->to_patch.erase(w->to_patch.begin());
  TraceBufferV2::Patch patch;
  patch.offset_untrusted = target.second >= 4 ? target.second - 4 : 0;
  memcpy(patch.data, "PTCH", 4);
  const bool more = (*rng)() % 4 == 0;
  const bool a = fast_->TryPatchChunkContents(w->producer_id, w->writer_id,
                                              target.first, &patch, 1, more);
  const bool b = slow_->TryPatchChunkContents(w->producer_id, w->writer_id,
                                              target.first, &patch, 1, more);
  EXPECT_EQ(a, b);
}

void FastPathPair::Run(uint32_t seed, size_t ops) {
  std::minstd_rand rng(seed);
  Writer writers[] = {{1, 1}, {1, 2}, {2, 1}};
  fast_->BeginRead();
  slow_->BeginRead();
  for (size_t op = 0; op < ops; op++) {
    Writer* w = &writers[rng() % 3];
    const uint32_t what = rng() % 16;
    if (what < 8) {
      Commit(&rng, w);
    } else if (what < 9) {
      Patch(&rng, w);
    } else if (what < 14) {
      // A few packets, possibly in the middle of a chunk; the next write
      // restarts the pass there.
      // Batches never take more than the k: the buffers stay in step.
      const size_t k = 1 + rng() % 20;
      for (size_t i = 0; i < k; i++) {
        const Got a = ReadOne(fast_.get());
        const Got b = ReadOne(slow_.get());
        ASSERT_EQ(a, b) << "seed " << seed << " op " << op;
        if (!a.ok)
          break;
        packets_read_++;
        i += CompareBatch(a, fast_.get(), slow_.get(),
                          std::min<size_t>(k - 1 - i, 1 + rng() % 8));
      }
    } else if (what < 15) {
      fast_->BeginRead();
      slow_->BeginRead();
      EXPECT_EQ(slow_->consumed_prefix_for_testing(), 0u);
    } else {
      std::unique_ptr<TraceBufferV2> ca = fast_->CloneReadOnly();
      std::unique_ptr<TraceBufferV2> cb = slow_->CloneReadOnly();
      ASSERT_TRUE(ca && cb);
      cb->SetReadFastPathForTesting(false);
      cb->SetSkipConsumedPrefixForTesting(false);
      DrainAndCompare(ca.get(), cb.get());
      ExpectSameStats(ca->stats(), cb->stats());
    }
    max_prefix_ = std::max(max_prefix_, fast_->consumed_prefix_for_testing());
  }
  fast_->BeginRead();
  slow_->BeginRead();
  DrainAndCompare(fast_.get(), slow_.get());
}

// The fast path is taken (and never by the disabled buffer), and both
// paths agree on every packet, loss bit and counter.
TEST(TraceBufferV2ReadFastPathTest, SameOutputAsGeneralPath) {
  for (uint32_t seed = 1; seed <= 6; seed++) {
    SCOPED_TRACE(seed);
    FastPathPair pair(48 * 1024, TraceBufferV2::OverwritePolicy::kOverwrite,
                      /*observe=*/seed % 2 == 0);
    pair.Run(seed, 4000);
    pair.ExpectSameEnd();
    EXPECT_GT(pair.fast()->ReadFastPathPacketsForTesting(), 100u);
    EXPECT_EQ(pair.slow()->ReadFastPathPacketsForTesting(), 0u);
    EXPECT_GT(pair.fast()->stats().chunks_overwritten, 0u);
    EXPECT_GT(pair.fast()->stats().readaheads_succeeded, 0u);
    EXPECT_GT(pair.packets_read(), 1000u);
    EXPECT_GT(pair.max_prefix(), 0u);  // Passes skipped consumed chunks.
  }
}

// Batches: the same packets, stats and observed packets again, and most of
// the packets came in batches.
TEST(TraceBufferV2ReadFastPathTest, BatchedRunsSameOutputAsGeneralPath) {
  for (uint32_t seed = 21; seed <= 26; seed++) {
    SCOPED_TRACE(seed);
    const bool discard = seed % 3 == 0;
    FastPathPair pair(discard ? 256 * 1024 : 48 * 1024,
                      discard ? TraceBufferV2::OverwritePolicy::kDiscard
                              : TraceBufferV2::OverwritePolicy::kOverwrite,
                      /*observe=*/seed % 2 == 0);
    pair.set_batched(true);
    pair.Run(seed, 4000);
    if (discard) {
      EXPECT_GT(pair.fast()->stats().chunks_discarded, 0u);
    }
    pair.ExpectSameEnd();
    EXPECT_GT(pair.batched_packets(), 100u);
    // A full DISCARD buffer takes no more chunks: fewer packets to read.
    EXPECT_GT(pair.packets_read(), discard ? 300u : 1000u);
  }
}

TEST(TraceBufferV2ReadFastPathTest, SameOutputAsGeneralPathDiscard) {
  for (uint32_t seed = 11; seed <= 13; seed++) {
    SCOPED_TRACE(seed);
    FastPathPair pair(256 * 1024, TraceBufferV2::OverwritePolicy::kDiscard,
                      /*observe=*/false);
    pair.Run(seed, 1500);
    pair.ExpectSameEnd();
    EXPECT_GT(pair.fast()->ReadFastPathPacketsForTesting(), 50u);
    EXPECT_GT(pair.fast()->stats().chunks_discarded, 0u);
    EXPECT_EQ(pair.slow()->ReadFastPathPacketsForTesting(), 0u);
  }
}

// A buffer holding one indexed chunk of eight packets and, fourth, an
// empty one; |pkts| gets the eight, in order.
std::unique_ptr<TraceBufferV2> OneIndexedChunk(std::vector<std::string>* pkts) {
  auto tb = TraceBufferV2::Create(64 * 1024,
                                  TraceBufferV2::OverwritePolicy::kOverwrite);
  std::vector<std::string> all;
  for (size_t i = 0; i < 8; i++)
    all.push_back(test::Pkt("p" + std::to_string(i), 100 + 13 * i));
  all.insert(all.begin() + 3, std::string());  // An empty packet: skipped.
  std::vector<uint8_t> payload;
  for (const std::string& p : all)
    AppendFragment(&payload, p);
  EXPECT_TRUE(tb->CopyChunkUntrusted(
      1, ClientIdentity{}, 1, 0, static_cast<uint16_t>(all.size()),
      kNoTBChunkFlags, true, payload.data(), payload.size()));
  all.erase(all.begin() + 3);
  *pkts = all;
  return tb;
}

// A whole indexed chunk read in one pass: all packets but the first come
// from the fast path, and the output is the written packets.
TEST(TraceBufferV2ReadFastPathTest, WholeIndexedChunk) {
  std::vector<std::string> pkts;
  auto tb = OneIndexedChunk(&pkts);
  tb->BeginRead();
  std::vector<std::string> got;
  for (Got g = ReadOne(tb.get()); g.ok; g = ReadOne(tb.get())) {
    EXPECT_EQ(g.loss, 0u);
    EXPECT_EQ(g.first, got.empty());
    got.push_back(g.data);
  }
  EXPECT_EQ(got, pkts);
  EXPECT_EQ(tb->ReadFastPathPacketsForTesting(), 7u);
  EXPECT_EQ(tb->stats().chunks_read, 1u);
  EXPECT_FALSE(tb->has_data());
}

// A buffer read in many short passes, as a streamed session reads it:
// each pass starts after the chunks the previous ones consumed ([TB-4]),
// the prefix follows the oldest data as writes erase it, a wrap clears it,
// and every packet is read once, in order.
TEST(TraceBufferV2ReadFastPathTest, PassesStartAfterTheConsumedChunks) {
  auto tb = TraceBufferV2::Create(64 * 1024,
                                  TraceBufferV2::OverwritePolicy::kOverwrite);
  uint32_t next_id = 0;
  uint32_t next_read = 0;
  size_t outer_size = 0;
  auto write_chunk = [&] {
    std::vector<uint8_t> payload;
    for (int i = 0; i < 4; i++)
      AppendFragment(&payload,
                     test::Pkt("k" + std::to_string(next_id * 4 + i), 200));
    ASSERT_TRUE(tb->CopyChunkUntrusted(1, ClientIdentity{}, 1, next_id, 4,
                                       kNoTBChunkFlags, true, payload.data(),
                                       payload.size()));
    next_id++;
  };
  auto read_all = [&] {
    tb->BeginRead();
    for (Got g = ReadOne(tb.get()); g.ok; g = ReadOne(tb.get())) {
      EXPECT_EQ(g.data, test::Pkt("k" + std::to_string(next_read), 200));
      next_read++;
    }
  };
  write_chunk();
  read_all();
  outer_size = tb->consumed_prefix_for_testing();
  ASSERT_GT(outer_size, 0u);  // The one chunk, read.
  for (int i = 0; i < 9; i++)
    write_chunk();
  read_all();
  EXPECT_EQ(tb->consumed_prefix_for_testing(), 10 * outer_size);
  EXPECT_EQ(next_read, 40u);
  // Fill the buffer until it wraps, reading every chunk as it comes: the
  // prefix never covers more than the buffer, and the wrap clears it.
  bool wrapped = false;
  bool shortened = false;
  for (int i = 0; i < 200; i++) {
    const size_t before = tb->consumed_prefix_for_testing();
    const uint64_t wraps = tb->stats().write_wrap_count;
    write_chunk();
    const size_t after = tb->consumed_prefix_for_testing();
    if (tb->stats().write_wrap_count != wraps) {
      EXPECT_EQ(after, 0u);
      wrapped = true;
    } else if (after < before) {
      shortened = true;  // The write erased the oldest chunk.
    }
    read_all();
    EXPECT_LE(tb->consumed_prefix_for_testing(), 64u * 1024);
  }
  EXPECT_TRUE(wrapped);
  EXPECT_TRUE(shortened);
  EXPECT_EQ(next_read, 4 * next_id);
  EXPECT_EQ(tb->stats().chunks_overwritten, 0u);  // All read in time.
}

// The same chunk read as one packet and one batch: the batch holds the
// other seven, and the state after it is the state after eight reads.
TEST(TraceBufferV2ReadFastPathTest, WholeIndexedChunkInOneBatch) {
  std::vector<std::string> pkts;
  auto tb = OneIndexedChunk(&pkts);
  tb->BeginRead();
  TracePacket::Slice run[16];
  EXPECT_EQ(tb->ReadMorePacketsOfRun(run, 16), 0u);  // Nothing read yet.
  const Got g = ReadOne(tb.get());
  ASSERT_TRUE(g.ok);
  EXPECT_TRUE(g.first);
  EXPECT_EQ(g.data, pkts[0]);
  ASSERT_EQ(tb->ReadMorePacketsOfRun(run, 16), 7u);
  size_t bytes = g.data.size();
  for (size_t i = 0; i < 7; i++) {
    EXPECT_EQ(
        std::string(reinterpret_cast<const char*>(run[i].data), run[i].size),
        pkts[i + 1]);
    bytes += run[i].size;
  }
  EXPECT_EQ(tb->ReadMorePacketsOfRun(run, 16), 0u);
  EXPECT_FALSE(ReadOne(tb.get()).ok);
  EXPECT_EQ(tb->stats().bytes_read, bytes);
  EXPECT_EQ(tb->stats().chunks_read, 1u);
  EXPECT_FALSE(tb->has_data());
}

// A write between the packet and the batch restarts the pass: no batch.
TEST(TraceBufferV2ReadFastPathTest, NoBatchAfterAWrite) {
  auto tb = TraceBufferV2::Create(64 * 1024,
                                  TraceBufferV2::OverwritePolicy::kOverwrite);
  std::vector<uint8_t> payload;
  for (size_t i = 0; i < 4; i++)
    AppendFragment(&payload, test::Pkt("q" + std::to_string(i), 120));
  ASSERT_TRUE(tb->CopyChunkUntrusted(1, ClientIdentity{}, 1, 0, 4,
                                     kNoTBChunkFlags, true, payload.data(),
                                     payload.size()));
  tb->BeginRead();
  ASSERT_TRUE(ReadOne(tb.get()).ok);
  ASSERT_TRUE(tb->CopyChunkUntrusted(2, ClientIdentity{}, 1, 0, 4,
                                     kNoTBChunkFlags, true, payload.data(),
                                     payload.size()));
  TracePacket::Slice run[4];
  EXPECT_EQ(tb->ReadMorePacketsOfRun(run, 4), 0u);
  size_t packets = 1;
  while (ReadOne(tb.get()).ok)
    packets++;
  EXPECT_EQ(packets, 8u);
}

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
