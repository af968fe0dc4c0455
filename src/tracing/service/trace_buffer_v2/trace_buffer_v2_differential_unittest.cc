/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Randomized differential test of TraceBufferV2 against a reference model.
// Chunks go through either admission path (v1 CopyChunkUntrusted or the ring
// drainer's CopyChunkFragments).
//
// Random writers produce packets of random sizes, fragmented over chunks of
// random capacity. The test commits them in batches (shuffled within a batch,
// as SMB scraping does), scrapes chunks (incomplete commit, recommit later),
// holds back patches, drops chunks (lost before the buffer, or sent in a form
// the buffer rejects), and reads (whole or partial passes). The model checks,
// per sequence:
//  - every packet read (and every packet handed to the overwrite observer) is
//    a packet the writer wrote, byte for byte (so never an unpatched one);
//  - reader + observer streams together are strictly FIFO: nothing twice;
//  - every packet missing from the reader's stream (overwritten, handed to
//    the observer, in a dropped or rejected chunk, cut by a gap) is accounted
//    for by a loss bit on the NEXT packet read from its sequence: a packet
//    read right after missing ones carries a loss bit, and a packet with a
//    loss bit does follow missing ones (no false alarm, and no loss reported
//    early on a packet written before the lost data);
//  - in the lossless configuration, everything is read, without loss bits.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "src/tracing/service/trace_buffer_v2/frag_iterator.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2_test_utils.h"

namespace ringtrace {
namespace trace_buffer {
namespace {

using Policy = TraceBufferV2::OverwritePolicy;

std::string PacketContent(uint32_t seq, uint32_t idx, size_t len) {
  std::string s = "s" + std::to_string(seq) + "#" + std::to_string(idx) + ";";
  const char fill = static_cast<char>('a' + (seq * 7 + idx) % 26);
  while (s.size() < len)
    s.push_back(fill);
  return s;
}

// Parses "s<seq>#<idx>;" at the start of a packet.
bool ParsePacket(const std::string& s, uint32_t* seq, uint32_t* idx) {
  return sscanf(s.c_str(), "s%u#%u;", seq, idx) == 2;
}

struct ModelChunk {
  ProducerID producer_id;
  WriterID writer_id;
  ChunkID chunk_id;
  std::vector<uint8_t> payload;  // As committed (patch bytes zeroed).
  uint16_t num_frags;
  TBChunkFlags flags;
  uint32_t first_packet;  // Index of the packet its first fragment is of.
  bool needs_patch = false;
  TraceBufferV2::Patch patch;
};

struct ModelWriter {
  ProducerID producer_id;
  WriterID writer_id;
  uint32_t key;
  ChunkID next_chunk_id;
  uint32_t next_packet = 0;
  std::string in_progress;  // Remaining bytes of a fragmented packet.
  std::map<uint32_t, size_t> packet_len;

  // Stream checks.
  int64_t last_consumed = -1;  // Reader + observer.
  int64_t last_read = -1;      // Reader only.
};

struct Config {
  size_t buffer_size;
  Policy policy;
  bool lossless;  // No drops, buffer never full.
  int steps;
  bool observer = true;
  // A hostile producer also commits garbage: the honest sequences must not
  // notice (their checks, including completeness when lossless, still hold).
  bool hostile = false;
};

constexpr ProducerID kHostileProducer = 7;

class Model {
 public:
  Model(const Config& cfg, uint32_t seed) : cfg_(cfg), rng_(seed) {
    tb_ = TraceBufferV2::Create(cfg.buffer_size, cfg.policy);
    if (cfg.observer) {
      tb_->set_overwrite_observer(
          [this](const PacketSequenceProperties& props, const TracePacket& p) {
            OnConsumed(props, p.GetRawBytesForTesting(), 0, /*observer=*/true);
          });
    }
    const int num_writers = 1 + static_cast<int>(rng_() % 5);
    for (int i = 0; i < num_writers; i++) {
      ModelWriter w;
      w.producer_id = static_cast<ProducerID>(1 + rng_() % 2);
      w.writer_id = static_cast<WriterID>(i + 1);
      w.key = SequenceKey(w.producer_id, w.writer_id).value();
      // Some sequences start just before the 2^32 ChunkID wrap.
      w.next_chunk_id = (rng_() % 2) ? 0xfffffff0u + rng_() % 16 : 0;
      first_chunk_id_[w.writer_id] = w.next_chunk_id;
      writers_.push_back(w);
    }
  }

  ModelChunk MakeChunk(ModelWriter* w, bool finish) {
    ModelChunk c;
    c.producer_id = w->producer_id;
    c.writer_id = w->writer_id;
    c.chunk_id = w->next_chunk_id++;
    c.first_packet =
        w->in_progress.empty() ? w->next_packet : w->next_packet - 1;
    c.flags = kNoTBChunkFlags;
    c.num_frags = 0;
    size_t space = 32 + rng_() % 600;
    if (!w->in_progress.empty())
      c.flags |= kChunkContinuesFromPrev;
    std::string last_frag;
    for (;;) {
      if (w->in_progress.empty()) {
        if (finish || space < 5 || (c.num_frags > 0 && rng_() % 3 == 0))
          break;
        const size_t len = 12 + rng_() % 300;
        w->packet_len[w->next_packet] = len;
        w->in_progress = PacketContent(w->key, w->next_packet++, len);
      }
      if (space < 5)
        break;
      const size_t take = std::min(w->in_progress.size(), space - 4);
      last_frag = w->in_progress.substr(0, take);
      test::AppendFragment(&c.payload, last_frag);
      c.num_frags++;
      w->in_progress.erase(0, take);
      space -= 4 + take;
      if (!w->in_progress.empty()) {
        c.flags |= kChunkContinuesOnNext;
        break;
      }
    }
    // Only the last fragment of a chunk can need patching.
    if ((c.flags & kChunkContinuesOnNext) && last_frag.size() >= 4 &&
        rng_() % 3 == 0) {
      const size_t frag_data = c.payload.size() - last_frag.size();
      const size_t at = frag_data + rng_() % (last_frag.size() - 3);
      c.needs_patch = true;
      c.flags |= kChunkNeedsPatching;
      c.patch.offset_untrusted = static_cast<uint32_t>(at);
      memcpy(c.patch.data, &c.payload[at], 4);
      memset(&c.payload[at], 0, 4);
    }
    return c;
  }

  void CommitChunk(const ModelChunk& c, bool complete, bool scraped = false) {
    if (complete && !scraped && !c.needs_patch && rng_() % 2) {
      // The ring drainer path: the same fragments, without size headers.
      std::vector<FragmentRef> frags;
      FragIterator it(c.payload.data(), 0, c.payload.size());
      FragIterator::Frag f;
      while (it.Next(&f) == FragIterator::Result::kOk)
        frags.push_back({c.payload.data() + f.data_offset, f.size});
      TBChunkFlags flags;
      if (c.flags & kChunkContinuesFromPrev)
        flags |= kChunkContinuesFromPrev;
      if (c.flags & kChunkContinuesOnNext)
        flags |= kChunkContinuesOnNext;
      tb_->CopyChunkFragments(c.producer_id, ClientIdentity{}, c.writer_id,
                              c.chunk_id, frags.data(), frags.size(), flags);
      return;
    }
    tb_->CopyChunkUntrusted(c.producer_id, ClientIdentity{}, c.writer_id,
                            c.chunk_id, c.num_frags, c.flags, complete,
                            c.payload.data(), c.payload.size());
  }

  // Sends |c| in a form the buffer must reject: its packets are lost, and
  // the loss must be reported after them, not on earlier unread packets.
  void CommitRejected(const ModelChunk& c) {
    std::vector<FragmentRef> frags;
    FragIterator it(c.payload.data(), 0, c.payload.size());
    FragIterator::Frag f;
    while (it.Next(&f) == FragIterator::Result::kOk)
      frags.push_back({c.payload.data() + f.data_offset, f.size});
    if (rng_() % 2) {
      frags.push_back({nullptr, kPacketSizeDropPacket});  // Size too big.
      EXPECT_FALSE(tb_->CopyChunkFragments(
          c.producer_id, ClientIdentity{}, c.writer_id, c.chunk_id,
          frags.data(), frags.size(), kNoTBChunkFlags));
    } else {
      std::vector<uint8_t> huge(kMaxChunkPayloadSize + 1, 0);
      memcpy(huge.data(), c.payload.data(), c.payload.size());
      EXPECT_FALSE(tb_->CopyChunkUntrusted(
          c.producer_id, ClientIdentity{}, c.writer_id, c.chunk_id, c.num_frags,
          c.flags, true, huge.data(), huge.size()));
    }
    rejected_++;
    // Earlier packets of the sequence not consumed yet (unread in the buffer,
    // or lost): the loss must not be reported on them.
    ModelWriter* w = Find(SequenceKey(c.producer_id, c.writer_id).value());
    if (w->last_consumed + 1 < static_cast<int64_t>(c.first_packet))
      rejected_behind_unconsumed_++;
  }

  void OnConsumed(const PacketSequenceProperties& props,
                  const std::string& data,
                  uint32_t loss,
                  bool observer) {
    if (props.producer_id_trusted == kHostileProducer) {
      hostile_packets_++;  // Anything goes, as long as nothing breaks.
      return;
    }
    uint32_t key = 0, idx = 0;
    ASSERT_TRUE(ParsePacket(data, &key, &idx)) << data.substr(0, 16);
    ASSERT_EQ(key,
              SequenceKey(props.producer_id_trusted, props.writer_id).value());
    ModelWriter* w = Find(key);
    ASSERT_NE(w, nullptr);
    ASSERT_TRUE(w->packet_len.count(idx));
    ASSERT_EQ(data, PacketContent(key, idx, w->packet_len[idx]));
    // FIFO over reader + observer: nothing twice, nothing backwards.
    ASSERT_GT(static_cast<int64_t>(idx), w->last_consumed)
        << "seq " << key << (observer ? " observer" : " reader");
    w->last_consumed = idx;
    if (observer) {
      observed_++;
      return;
    }
    const bool gap = static_cast<int64_t>(idx) != w->last_read + 1;
    if (gap) {
      lossy_reads_++;
      ASSERT_NE(loss, 0u) << "missing packets before " << idx << " of " << key;
      ASSERT_TRUE(loss & kDataLossPresent);
    } else {
      ASSERT_EQ(loss, 0u) << "false loss " << loss << " on " << idx << " of "
                          << key;
    }
    w->last_read = idx;
    read_++;
  }

  ModelWriter* Find(uint32_t key) {
    for (ModelWriter& w : writers_)
      if (w.key == key)
        return &w;
    return nullptr;
  }

  void ReadSome(bool whole) {
    tb_->BeginRead();
    TracePacket packet;
    PacketSequenceProperties props;
    uint32_t loss = 0;
    size_t limit = whole ? SIZE_MAX : rng_() % 20;
    while (limit-- && tb_->ReadNextTracePacket(&packet, &props, &loss)) {
      OnConsumed(props, packet.GetRawBytesForTesting(), loss, false);
      if (::testing::Test::HasFatalFailure())
        return;
    }
  }

  // The real commits after the scrape (patches, if any, come after them).
  void CommitScraped() {
    for (const ModelChunk& c : scraped_) {
      CommitChunk(c, true, /*scraped=*/true);  // v1 path: a recommit.
      if (c.needs_patch)
        unpatched_.push_back(c);
    }
    scraped_.clear();
  }

  void ApplyPatch(const ModelChunk& c) {
    tb_->TryPatchChunkContents(c.producer_id, c.writer_id, c.chunk_id, &c.patch,
                               1, false);
  }

  // One malicious operation on the hostile producer's own sequences.
  void HostileStep() {
    const WriterID w = static_cast<WriterID>(rng_() % 3);
    const ChunkID id =
        (rng_() % 4) ? rng_() % 12 : static_cast<ChunkID>(rng_());
    std::vector<uint8_t> bytes;
    const uint32_t op = rng_() % 4;
    if (op == 0 || op == 1) {
      // Random bytes, or a valid payload with bytes flipped.
      if (op == 0) {
        bytes.resize(rng_() % 600);
        for (uint8_t& b : bytes)
          b = static_cast<uint8_t>(rng_());
      } else {
        for (int i = 0, n = 1 + static_cast<int>(rng_() % 6); i < n; i++)
          test::AppendFragment(&bytes, std::string(rng_() % 80, 'h'));
        for (int i = 0; i < 3; i++)
          bytes[rng_() % bytes.size()] ^= static_cast<uint8_t>(rng_());
      }
      tb_->CopyChunkUntrusted(
          kHostileProducer, ClientIdentity{}, w, id,
          static_cast<uint16_t>(rng_() % 20),
          TBChunkFlags::FromBits(static_cast<uint8_t>(rng_() % 8)), rng_() % 2,
          bytes.data(), bytes.size());
    } else if (op == 2) {
      TraceBufferV2::Patch patch;
      patch.offset_untrusted = rng_() % 700;
      memset(patch.data, static_cast<int>(rng_()), 4);
      tb_->TryPatchChunkContents(kHostileProducer, w, id, &patch, 1,
                                 rng_() % 2);
    } else {
      std::vector<std::string> data(rng_() % 5, std::string(rng_() % 50, 'h'));
      std::vector<FragmentRef> frags;
      for (const std::string& d : data)
        frags.push_back({reinterpret_cast<const uint8_t*>(d.data()),
                         static_cast<uint32_t>(d.size())});
      tb_->CopyChunkFragments(kHostileProducer, ClientIdentity{}, w, id,
                              frags.data(), frags.size(),
                              TBChunkFlags::FromBits(rng_() % 8));
    }
  }

  void Step() {
    if (cfg_.hostile && rng_() % 3 == 0)
      HostileStep();
    const uint32_t op = rng_() % 10;
    if (op < 6) {
      // A batch: a few chunks of random writers, shuffled (scraping order).
      std::vector<ModelChunk> batch;
      const size_t n = 1 + rng_() % 4;
      for (size_t i = 0; i < n; i++) {
        ModelWriter* w = &writers_[rng_() % writers_.size()];
        batch.push_back(MakeChunk(w, false));
      }
      std::shuffle(batch.begin(), batch.end(), rng_);
      for (ModelChunk& c : batch) {
        // Lost before reaching the buffer. Not the first chunk of a writer:
        // nothing could tell that it ever existed.
        if (!cfg_.lossless && c.chunk_id != first_chunk_id_[c.writer_id] &&
            rng_() % 25 == 0) {
          continue;
        }
        // Rejected by the buffer: detectable even for a first chunk (the
        // buffer saw it).
        if (!cfg_.lossless && rng_() % 25 == 0) {
          CommitRejected(c);
          continue;
        }
        if (rng_() % 6 == 0) {
          CommitChunk(c, /*complete=*/false);  // Scraped.
          scraped_.push_back(c);
          continue;
        }
        CommitChunk(c, true);
        if (c.needs_patch)
          unpatched_.push_back(c);
      }
    } else if (op < 7) {
      CommitScraped();
    } else if (op < 8) {
      for (const ModelChunk& c : unpatched_)
        ApplyPatch(c);
      unpatched_.clear();
    } else {
      ReadSome(op == 9);
    }
  }

  void Finish() {
    // Every writer completes its in-progress packet.
    for (ModelWriter& w : writers_) {
      while (!w.in_progress.empty()) {
        ModelChunk c = MakeChunk(&w, true);
        CommitChunk(c, true);
        if (c.needs_patch)
          unpatched_.push_back(c);
      }
    }
    CommitScraped();
    for (const ModelChunk& c : unpatched_)
      ApplyPatch(c);
    unpatched_.clear();
    ReadSome(true);
  }

  void Run() {
    for (int i = 0; i < cfg_.steps; i++) {
      Step();
      if (::testing::Test::HasFatalFailure())
        return;
    }
    Finish();
    if (::testing::Test::HasFatalFailure())
      return;
    if (!cfg_.hostile) {
      EXPECT_EQ(tb_->stats().abi_violations, rejected_);
    }
    if (cfg_.lossless) {
      for (const ModelWriter& w : writers_) {
        EXPECT_EQ(w.last_read + 1, static_cast<int64_t>(w.next_packet))
            << "seq " << w.key << " chunk " << w.next_chunk_id << " stats "
            << tb_->stats().chunks_written << " " << tb_->stats().chunks_read
            << " rewr " << tb_->stats().chunks_rewritten << " late "
            << tb_->stats().late_chunks_dropped << " pf "
            << tb_->stats().patches_failed << " ps "
            << tb_->stats().patches_succeeded;
      }
      EXPECT_EQ(observed_, 0u);
      // (A hostile sequence may stay stalled forever: only itself.)
      if (!cfg_.hostile) {
        EXPECT_FALSE(tb_->has_data());
      }
    }
    // Nothing is left readable after a full pass.
    tb_->BeginRead();
    TracePacket packet;
    PacketSequenceProperties props;
    uint32_t loss = 0;
    EXPECT_FALSE(tb_->ReadNextTracePacket(&packet, &props, &loss));
  }

  size_t read() const { return read_; }
  size_t lossy_reads() const { return lossy_reads_; }
  size_t rejected() const { return rejected_; }
  size_t rejected_behind_unconsumed() const {
    return rejected_behind_unconsumed_;
  }
  size_t observed() const { return observed_; }
  const TraceBufferV2& tb() const { return *tb_; }

 private:
  Config cfg_;
  std::minstd_rand rng_;
  std::unique_ptr<TraceBufferV2> tb_;
  std::vector<ModelWriter> writers_;
  std::map<WriterID, ChunkID> first_chunk_id_;
  std::vector<ModelChunk> scraped_;
  std::vector<ModelChunk> unpatched_;
  size_t read_ = 0;
  size_t observed_ = 0;
  size_t lossy_reads_ = 0;
  size_t hostile_packets_ = 0;
  size_t rejected_ = 0;
  size_t rejected_behind_unconsumed_ = 0;
};

TEST(TraceBufferV2DifferentialTest, LosslessLargeBuffer) {
  for (uint32_t seed = 1; seed <= 20; seed++) {
    SCOPED_TRACE(seed);
    Model m(Config{1 << 20, Policy::kOverwrite, true, 200}, seed);
    m.Run();
    if (HasFatalFailure())
      return;
    EXPECT_GT(m.read(), 0u);
  }
}

TEST(TraceBufferV2DifferentialTest, RingBufferWithOverwritesAndDrops) {
  size_t observed = 0, lossy_reads = 0, rejected_behind = 0;
  TraceBufferStats sum;
  for (uint32_t seed = 1; seed <= 40; seed++) {
    SCOPED_TRACE(seed);
    Model m(Config{8192, Policy::kOverwrite, false, 300}, seed);
    m.Run();
    if (HasFatalFailure())
      return;
    observed += m.observed();
    lossy_reads += m.lossy_reads();
    rejected_behind += m.rejected_behind_unconsumed();
    const TraceBufferStats& st = m.tb().stats();
    sum.write_wrap_count += st.write_wrap_count;
    sum.chunks_committed_out_of_order += st.chunks_committed_out_of_order;
    sum.chunks_rewritten += st.chunks_rewritten;
    sum.patches_succeeded += st.patches_succeeded;
    sum.readaheads_succeeded += st.readaheads_succeeded;
    sum.readaheads_failed += st.readaheads_failed;
    sum.padding_bytes_written += st.padding_bytes_written;
  }
  // The configuration does exercise every path it is meant to.
  EXPECT_GT(observed, 0u);
  EXPECT_GT(lossy_reads, 0u);
  EXPECT_GT(rejected_behind, 0u);
  EXPECT_GT(sum.write_wrap_count, 0u);
  EXPECT_GT(sum.chunks_committed_out_of_order, 0u);
  EXPECT_GT(sum.chunks_rewritten, 0u);
  EXPECT_GT(sum.patches_succeeded, 0u);
  EXPECT_GT(sum.readaheads_succeeded, 0u);
  EXPECT_GT(sum.readaheads_failed, 0u);
  EXPECT_GT(sum.padding_bytes_written, 0u);
}

// Without an observer, erasing takes a fast path that does not tokenize.
TEST(TraceBufferV2DifferentialTest, RingBufferWithoutObserver) {
  uint64_t overwritten = 0;
  size_t lossy_reads = 0;
  for (uint32_t seed = 1; seed <= 40; seed++) {
    SCOPED_TRACE(seed);
    Config cfg{8192, Policy::kOverwrite, false, 300};
    cfg.observer = false;
    Model m(cfg, seed);
    m.Run();
    if (HasFatalFailure())
      return;
    overwritten += m.tb().stats().chunks_overwritten;
    lossy_reads += m.lossy_reads();
  }
  EXPECT_GT(overwritten, 0u);
  EXPECT_GT(lossy_reads, 0u);
}

TEST(TraceBufferV2DifferentialTest, HostileProducerDoesNotAffectOthers) {
  uint64_t violations = 0;
  for (uint32_t seed = 1; seed <= 20; seed++) {
    SCOPED_TRACE(seed);
    Config lossless{1 << 20, Policy::kOverwrite, true, 200};
    lossless.hostile = true;
    Model m(lossless, seed);
    m.Run();
    if (HasFatalFailure())
      return;
    violations += m.tb().stats().abi_violations;
    Config ring{8192, Policy::kOverwrite, false, 200};
    ring.hostile = true;
    Model m2(ring, seed);
    m2.Run();
    if (HasFatalFailure())
      return;
  }
  EXPECT_GT(violations, 0u);
}

TEST(TraceBufferV2DifferentialTest, DiscardSmallBuffer) {
  uint64_t discarded = 0;
  for (uint32_t seed = 1; seed <= 20; seed++) {
    SCOPED_TRACE(seed);
    Model m(Config{8192, Policy::kDiscard, false, 200}, seed);
    m.Run();
    if (HasFatalFailure())
      return;
    EXPECT_EQ(m.observed(), 0u);
    discarded += m.tb().stats().chunks_discarded;
  }
  EXPECT_GT(discarded, 0u);
}

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
