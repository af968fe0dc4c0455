/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2: no silent loss. Every way a packet can leave the buffer
// unread is counted in stats() and flagged (previous_packet_dropped) on the
// next packet read from its sequence: packets whose continuation had not
// arrived when their start was overwritten (both admission paths, with and
// without an overwrite observer, at the wrap point and in the middle of the
// buffer), middle fragments of such packets, forgotten sequences, clones.

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <set>
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

constexpr TBChunkFlags kFromPrev = kChunkContinuesFromPrev;
constexpr TBChunkFlags kOnNext = kChunkContinuesOnNext;
constexpr uint32_t kOverwriteLoss = kDataLossPresent | kDataLossOverwrite;

// Fragment bytes so that a chunk with one fragment has outer size |outer|.
std::string OneFragChunk(const std::string& tag, size_t outer) {
  return Pkt(tag, outer - 16 - 4);
}

class TraceBufferV2LossTest : public test::TraceBufferV2TestBase,
                              public ::testing::WithParamInterface<bool> {
 protected:
  // The parameter: whether an overwrite observer is set (the erase path
  // then tokenizes and reassembles instead of dropping the front chunk).
  void SetUp() override {
    Create(4096);
    if (GetParam()) {
      tb_->set_overwrite_observer(
          [this](const PacketSequenceProperties& props, const TracePacket& p) {
            observed_.push_back(RP(props.producer_id_trusted, props.writer_id,
                                   p.GetRawBytesForTesting()));
          });
    }
  }

  // Drainer path: one chunk of |frags| for sequence {p, w}.
  bool CommitFrags(ProducerID p,
                   WriterID w,
                   ChunkID id,
                   const std::vector<std::string>& frags,
                   TBChunkFlags flags = kNoTBChunkFlags) {
    std::vector<FragmentRef> refs;
    for (const std::string& f : frags) {
      refs.push_back(FragmentRef{reinterpret_cast<const uint8_t*>(f.data()),
                                 static_cast<uint32_t>(f.size())});
    }
    return tb_->CopyChunkFragments(p, ClientIdentity{}, w, id, refs.data(),
                                   refs.size(), flags);
  }

  // Packets of sequence {p, 1} in one read pass.
  std::vector<ReadPacket> ReadSeq(ProducerID p) {
    std::vector<ReadPacket> out;
    for (const ReadPacket& rp : Read()) {
      if (rp.producer_id == p)
        out.push_back(rp);
    }
    return out;
  }

  // Sequence 2 writes three 1000-byte chunks, then one of |last| bytes
  // (v1 path). Starting at |start| = 4096 - 3000 - x with x > |last|, the
  // last chunk wraps and erases [0, last) only.
  void Fill(size_t last) {
    for (ChunkID id = 0; id < 3; id++)
      ASSERT_TRUE(Commit(2, 1, id, {OneFragChunk("B", 1000)}));
    ASSERT_TRUE(Commit(2, 1, 3, {OneFragChunk("L", last)}));
    ASSERT_EQ(tb_->stats().write_wrap_count, 1u);
  }

  std::vector<ReadPacket> observed_;
};

// The packet P starts in chunk A (its last fragment continues on the next
// chunk); A is read up to P, then overwritten before B, which ends P,
// arrives. P is lost: A counts in chunks_overwritten (its fragment was
// unread) and the first packet read after P carries OVERWRITE. P counts in
// packets_overwritten when B arrives and ends it (until then its writer
// might still lose its end, and count it itself). P's tail in B is dropped
// without a second report (no ORPHAN_CONTINUATION).
TEST_P(TraceBufferV2LossTest, StartOverwrittenBeforeContinuationArrives) {
  const std::string head = Pkt("P-head", 900);
  ASSERT_TRUE(Commit(1, 1, 0, {"a0", head}, kOnNext));
  const size_t a_outer = OuterSize({"a0", head});
  EXPECT_EQ(Data(Read()), (std::vector<std::string>{"a0"}));  // Stalls on P.
  Fill(800);  // Erases A (928 bytes): [800, 928) becomes padding.
  const TraceBufferStats& st = tb_->stats();
  EXPECT_EQ(st.chunks_overwritten, 1u);
  EXPECT_EQ(st.bytes_overwritten, a_outer);
  // With an observer the erase path tried to finish P and gave up.
  EXPECT_EQ(st.readaheads_failed, GetParam() ? 1u : 0u);
  EXPECT_EQ(st.readaheads_succeeded, 0u);
  EXPECT_EQ(st.packets_overwritten, 0u);  // P's end is still to come.
  EXPECT_TRUE(observed_.empty());  // P was incomplete: nothing to observe.

  ASSERT_TRUE(Commit(1, 1, 1, {"P-tail", "a2", "a3"}, kFromPrev));
  EXPECT_EQ(st.packets_overwritten, 1u);  // P, once its end arrived.
  EXPECT_EQ(ReadSeq(1), (std::vector<ReadPacket>{RP(1, 1, "a2", kOverwriteLoss),
                                                 RP(1, 1, "a3")}));
  EXPECT_EQ(st.chunks_overwritten, 1u);
  EXPECT_EQ(st.abi_violations, 0u);
}

// The same through the ring drainer path, with A the newest chunk when the
// write cursor wraps (a writer's unfinished packet at the wrap point), erased
// once the cursor comes around again. A was never read: a0 and P are lost.
TEST_P(TraceBufferV2LossTest, UnfinishedPacketAtTheWrapPoint) {
  for (ChunkID id = 0; id < 3; id++)
    ASSERT_TRUE(CommitFrags(2, 1, id, {OneFragChunk("B", 1000)}));
  EXPECT_EQ(Read().size(), 3u);
  // A: [3000, 3000 + 16 + 4+2 + 4+900) = [3000, 3928).
  const std::string head = Pkt("P-head", 900);
  ASSERT_TRUE(CommitFrags(1, 1, 7, {"a0", head}, kChunkContinuesOnNext));
  // 200 bytes do not fit in the 168 left: the cursor wraps to 0.
  ASSERT_TRUE(CommitFrags(2, 1, 3, {OneFragChunk("C", 200)}));
  EXPECT_EQ(tb_->stats().write_wrap_count, 1u);
  EXPECT_EQ(tb_->stats().chunks_overwritten, 0u);
  // [200, 3200): the third chunk erases A (the chunks of sequence 2 it
  // erases were read: recycled silently).
  for (ChunkID id = 4; id < 7; id++)
    ASSERT_TRUE(CommitFrags(2, 1, id, {OneFragChunk("C", 1000)}));
  const TraceBufferStats& st = tb_->stats();
  EXPECT_EQ(st.chunks_overwritten, 1u);
  EXPECT_EQ(st.bytes_overwritten, 928u);
  EXPECT_EQ(st.packets_overwritten, 1u);  // a0; P's end is still to come.
  EXPECT_EQ(st.readaheads_failed, GetParam() ? 1u : 0u);
  // The observer got the complete packet a0, never the unfinished P.
  if (GetParam()) {
    EXPECT_EQ(observed_, (std::vector<ReadPacket>{RP(1, 1, "a0")}));
  }
  // P's end and the next packet arrive after the wrap.
  ASSERT_TRUE(CommitFrags(1, 1, 8, {"P-tail", "a2"}, kChunkContinuesFromPrev));
  EXPECT_EQ(st.packets_overwritten, 2u);  // a0 and P.
  EXPECT_EQ(ReadSeq(1),
            (std::vector<ReadPacket>{RP(1, 1, "a2", kOverwriteLoss)}));
  EXPECT_EQ(st.chunks_overwritten, 1u);
}

// P spans A -> B -> C. A is overwritten after B arrived, before C: B's
// middle fragment is dropped with P, and P is reported once, on the first
// packet after it (in C), and counted once, when C ends it.
TEST_P(TraceBufferV2LossTest, ThreeChunkPacketLosesItsStart) {
  ASSERT_TRUE(Commit(1, 1, 0, {OneFragChunk("P0", 1000)}, kOnNext));
  ASSERT_TRUE(Commit(1, 1, 1, {Pkt("P1", 200)}, kFromPrev | kOnNext));
  EXPECT_TRUE(ReadSeq(1).empty());  // Stalls: C is missing.
  // A [0, 1000), B [1000, 1220), sequence 2's chunks [1220, 3220), then
  // 900 bytes wrap and erase A only.
  for (ChunkID id = 0; id < 2; id++)
    ASSERT_TRUE(Commit(2, 1, id, {OneFragChunk("B", 1000)}));
  ASSERT_TRUE(Commit(2, 1, 2, {OneFragChunk("L", 900)}));
  const TraceBufferStats& st = tb_->stats();
  EXPECT_EQ(st.write_wrap_count, 1u);
  EXPECT_EQ(st.chunks_overwritten, 1u);
  EXPECT_EQ(st.bytes_overwritten, 1000u);
  EXPECT_EQ(st.packets_overwritten, 0u);  // B carries P on; C is to come.
  EXPECT_TRUE(observed_.empty());
  ASSERT_TRUE(Commit(1, 1, 2, {"P2", "c1"}, kFromPrev));
  EXPECT_EQ(st.packets_overwritten, 1u);
  EXPECT_EQ(ReadSeq(1),
            (std::vector<ReadPacket>{RP(1, 1, "c1", kOverwriteLoss)}));
  // B (read for P's middle fragment only) is consumed, not overwritten.
  EXPECT_EQ(st.chunks_overwritten, 1u);
  EXPECT_EQ(st.abi_violations, 0u);
}

// Complete unread packets overwritten: counted per chunk, handed to the
// observer when there is one, flagged on the next packet.
TEST_P(TraceBufferV2LossTest, CompleteUnreadPacketsOverwritten) {
  ASSERT_TRUE(Commit(1, 1, 0, {"a0", "a1", Pkt("a2", 900)}));
  const size_t a_outer = OuterSize({"a0", "a1", Pkt("a2", 900)});
  Fill(800);
  const TraceBufferStats& st = tb_->stats();
  EXPECT_EQ(st.chunks_overwritten, 1u);
  EXPECT_EQ(st.bytes_overwritten, a_outer);
  EXPECT_EQ(st.packets_overwritten, 3u);
  if (GetParam()) {
    EXPECT_EQ(Data(observed_),
              (std::vector<std::string>{"a0", "a1", Pkt("a2", 900)}));
  }
  ASSERT_TRUE(Commit(1, 1, 1, {"a3"}));
  EXPECT_EQ(ReadSeq(1),
            (std::vector<ReadPacket>{RP(1, 1, "a3", kOverwriteLoss)}));
}

// packets_overwritten is exact whichever way it is counted: from the count
// taken at admission (up to 62 packets), by walking the fragments (more
// packets, a drop marker, empty packets in between), through the observer.
TEST_P(TraceBufferV2LossTest, ManyPacketsAndDropMarkersOverwritten) {
  std::vector<std::string> many;
  for (int i = 0; i < 70; i++)
    many.push_back(i % 10 == 9 ? std::string() : "p" + std::to_string(i));
  ASSERT_TRUE(Commit(1, 1, 0, many));  // 63 non-empty packets.
  std::vector<uint8_t> payload = test::MakePayload({"q0", ""});
  test::AppendDropMarker(&payload);
  test::AppendFragment(&payload, "q1");
  ASSERT_TRUE(CommitRaw(1, 1, 1, payload, 4));
  // Stored: [0, 472) (16 + 70 headers + 180 bytes, the trailing empty
  // packet left out) and [472, 508). Sequence 2 then fills [508, 3908);
  // 500 bytes do not fit in the 188 left: they wrap and erase [0, 500), both
  // chunks of sequence 1, unread.
  for (ChunkID id = 0; id < 3; id++)
    ASSERT_TRUE(Commit(2, 1, id, {OneFragChunk("B", 1000)}));
  ASSERT_TRUE(Commit(2, 1, 3, {OneFragChunk("B", 400)}));
  ASSERT_EQ(tb_->stats().write_wrap_count, 0u);
  ASSERT_TRUE(Commit(2, 1, 4, {OneFragChunk("L", 500)}));
  const TraceBufferStats& st = tb_->stats();
  ASSERT_EQ(st.write_wrap_count, 1u);
  EXPECT_EQ(st.chunks_overwritten, 2u);
  EXPECT_EQ(st.bytes_overwritten, 508u);
  EXPECT_EQ(st.packets_overwritten, 63u + 2u);
  EXPECT_EQ(st.trace_writer_packet_loss, 1u);
  if (GetParam()) {
    EXPECT_EQ(observed_.size(), 65u);
  }
  ASSERT_TRUE(Commit(1, 1, 2, {"r"}));
  EXPECT_EQ(ReadSeq(1),
            (std::vector<ReadPacket>{RP(1, 1, "r",
                                        kDataLossPresent | kDataLossOverwrite |
                                            kDataLossWriterAbort)}));
}

// A sequence whose data was overwritten becomes empty; more than
// 2 * kKeepLastEmptySeq other sequences empty after it, so its state is
// deleted. Its pending OVERWRITE must not be forgotten with it.
TEST_P(TraceBufferV2LossTest, PendingLossSurvivesSequenceCleanup) {
  ASSERT_TRUE(Commit(1, 1, 0, {OneFragChunk("a0", 1000)}));
  Fill(800);
  ASSERT_EQ(tb_->stats().chunks_overwritten, 1u);
  ASSERT_EQ(tb_->stats().packets_overwritten, 1u);
  // Many short-lived sequences (one small chunk each, read at once).
  for (uint32_t i = 0; i < 3 * kKeepLastEmptySeq; i++) {
    const ProducerID p = static_cast<ProducerID>(100 + i / 1000);
    const WriterID w = static_cast<WriterID>(1 + i % 1000);
    ASSERT_TRUE(Commit(p, w, 0, {"x"}));
    if (i % 64 == 63)
      Read();
  }
  Read();
  EXPECT_LE(tb_->num_sequences_for_testing(), 2 * kKeepLastEmptySeq + 8);
  EXPECT_EQ(tb_->stats().sequence_losses_forgotten, 0u);
  ASSERT_TRUE(Commit(1, 1, 1, {"a1"}));
  EXPECT_EQ(ReadSeq(1),
            (std::vector<ReadPacket>{RP(1, 1, "a1", kOverwriteLoss)}));
}

// A clone carries the pending loss: both the clone and the original report
// it on their next packet of the sequence.
TEST_P(TraceBufferV2LossTest, CloneReportsTheSameLoss) {
  const std::string head = Pkt("P-head", 900);
  ASSERT_TRUE(Commit(1, 1, 0, {head}, kOnNext));
  Fill(800);
  ASSERT_TRUE(Commit(1, 1, 1, {"P-tail", "a1"}, kFromPrev));
  std::unique_ptr<TraceBufferV2> clone = tb_->CloneReadOnly();
  ASSERT_NE(clone, nullptr);
  EXPECT_EQ(clone->stats().chunks_overwritten, 1u);
  EXPECT_EQ(clone->stats().packets_overwritten, 1u);
  std::vector<ReadPacket> from_clone;
  for (const ReadPacket& rp : test::ReadAll(clone.get())) {
    if (rp.producer_id == 1)
      from_clone.push_back(rp);
  }
  const std::vector<ReadPacket> want = {RP(1, 1, "a1", kOverwriteLoss)};
  EXPECT_EQ(from_clone, want);
  EXPECT_EQ(ReadSeq(1), want);
}

// ---- Packets whose writer lost their end -------------------------------
//
// A writer that cannot get its next chunk (ring full, drop policy) loses
// the rest of the packet it is writing and counts that packet as dropped
// (TraceWriterV2Stats::packets_dropped, reported by its producer), even
// though the packet's head is in a chunk already published; its next chunk
// then carries the data-loss flag and does not continue the packet. When
// the buffer erases that head unread, the packet must not be counted a
// second time in packets_overwritten: the buffer counts an erased packet
// whose end lies beyond the erased chunk only once the chunk that ends it
// arrives.

// The head's chunk is erased before the writer's next chunk arrives; that
// chunk does not continue the packet.
TEST_P(TraceBufferV2LossTest, WriterLostTheEndOfAnErasedPacket) {
  ASSERT_TRUE(
      CommitFrags(1, 1, 0, {"a0", Pkt("P-head", 900)}, kChunkContinuesOnNext));
  Fill(800);  // Erases A: a0 is lost; P's end is still to come.
  const TraceBufferStats& st = tb_->stats();
  EXPECT_EQ(st.chunks_overwritten, 1u);
  EXPECT_EQ(st.packets_overwritten, 1u);
  // The writer's next chunk: data loss, a new packet.
  ASSERT_TRUE(CommitFrags(1, 1, 1, {"b0"}, kChunkDataLoss));
  EXPECT_EQ(st.packets_overwritten, 1u);  // a0 only: P is the writer's.
  EXPECT_EQ(ReadSeq(1), (std::vector<ReadPacket>{RP(
                            1, 1, "b0", kOverwriteLoss | kDataLossSmbFull)}));
}

// The same with the writer's next chunk already in the buffer (unread) when
// the head's chunk is erased.
TEST_P(TraceBufferV2LossTest, WriterLostTheEndWithItsNextChunkQueued) {
  // A [0, 928), B [928, 952); Fill then erases A only.
  ASSERT_TRUE(
      CommitFrags(1, 1, 0, {"a0", Pkt("P-head", 900)}, kChunkContinuesOnNext));
  ASSERT_TRUE(CommitFrags(1, 1, 1, {"b0"}, kChunkDataLoss));
  Fill(800);
  const TraceBufferStats& st = tb_->stats();
  EXPECT_EQ(st.chunks_overwritten, 1u);
  EXPECT_EQ(st.packets_overwritten, 1u);  // a0.
  const std::vector<ReadPacket> read = ReadSeq(1);
  ASSERT_EQ(Data(read), (std::vector<std::string>{"b0"}));
  EXPECT_TRUE(read[0].loss & kDataLossOverwrite);
  EXPECT_TRUE(read[0].loss & kDataLossSmbFull);
  EXPECT_EQ(st.packets_overwritten, 1u);
}

// P spans A -> B -> (lost): A is erased after B, which carries P on,
// arrived; the writer's next chunk C does not continue P.
TEST_P(TraceBufferV2LossTest, ThreeChunkPacketWhoseWriterLostTheEnd) {
  ASSERT_TRUE(
      CommitFrags(1, 1, 0, {OneFragChunk("P0", 1000)}, kChunkContinuesOnNext));
  ASSERT_TRUE(CommitFrags(1, 1, 1, {Pkt("P1", 200)},
                          kChunkContinuesFromPrev | kChunkContinuesOnNext));
  EXPECT_TRUE(ReadSeq(1).empty());  // Stalls: P's end is missing.
  for (ChunkID id = 0; id < 2; id++)
    ASSERT_TRUE(Commit(2, 1, id, {OneFragChunk("B", 1000)}));
  ASSERT_TRUE(Commit(2, 1, 2, {OneFragChunk("L", 900)}));  // Erases A.
  const TraceBufferStats& st = tb_->stats();
  EXPECT_EQ(st.chunks_overwritten, 1u);
  EXPECT_EQ(st.packets_overwritten, 0u);
  ASSERT_TRUE(CommitFrags(1, 1, 2, {"c0"}, kChunkDataLoss));
  EXPECT_EQ(st.packets_overwritten, 0u);
  const std::vector<ReadPacket> read = ReadSeq(1);
  ASSERT_EQ(Data(read), (std::vector<std::string>{"c0"}));
  EXPECT_TRUE(read[0].loss & kDataLossOverwrite);
  EXPECT_EQ(st.packets_overwritten, 0u);
}

// The chunks after the erased head were lost before the buffer (a ChunkID
// gap): the packet's end may have been among them, so the buffer counts it.
TEST_P(TraceBufferV2LossTest, ErasedPacketBeforeAGapCounts) {
  ASSERT_TRUE(
      CommitFrags(1, 1, 0, {"a0", Pkt("P-head", 900)}, kChunkContinuesOnNext));
  Fill(800);
  EXPECT_EQ(tb_->stats().packets_overwritten, 1u);
  ASSERT_TRUE(CommitFrags(1, 1, 3, {"d0"}));
  EXPECT_EQ(tb_->stats().packets_overwritten, 2u);
  const std::vector<ReadPacket> read = ReadSeq(1);
  ASSERT_EQ(Data(read), (std::vector<std::string>{"d0"}));
  EXPECT_TRUE(read[0].loss & kDataLossReadGap);
}

// The sequence of an erased packet whose end is still to come is deleted by
// the cleanup of empty sequences; the packet is still counted once its end
// arrives, and that end is no orphan.
TEST_P(TraceBufferV2LossTest, OpenErasedPacketSurvivesSequenceCleanup) {
  ASSERT_TRUE(Commit(1, 1, 0, {Pkt("P-head", 900)}, kOnNext));
  Fill(800);
  ASSERT_EQ(tb_->stats().packets_overwritten, 0u);
  for (uint32_t i = 0; i < 3 * kKeepLastEmptySeq; i++) {
    const ProducerID p = static_cast<ProducerID>(100 + i / 1000);
    const WriterID w = static_cast<WriterID>(1 + i % 1000);
    ASSERT_TRUE(Commit(p, w, 0, {"x"}));
    if (i % 64 == 63)
      Read();
  }
  Read();
  EXPECT_LE(tb_->num_sequences_for_testing(), 2 * kKeepLastEmptySeq + 8);
  EXPECT_EQ(tb_->stats().sequence_losses_forgotten, 0u);
  // (Sequence 2's unread chunks were overwritten meanwhile.)
  const uint64_t before = tb_->stats().packets_overwritten;
  ASSERT_TRUE(Commit(1, 1, 1, {"P-tail", "a1"}, kFromPrev));
  EXPECT_EQ(tb_->stats().packets_overwritten, before + 1);
  EXPECT_EQ(ReadSeq(1),
            (std::vector<ReadPacket>{RP(1, 1, "a1", kOverwriteLoss)}));
}

// A writer as the ring writer behaves (include/ringtrace/trace_writer_v2.h):
// packets of random sizes split across chunks of kCapacity payload bytes;
// with probability drop_per_mille / 1000 it gets no next chunk, and then
// loses the packet it is writing (counted dropped; its head may be
// published already) and flags its next chunk with data loss. Each packet
// is "<writer>:<number>" padded with dots. |publish| gets every chunk.
class ModelWriter {
 public:
  static constexpr size_t kCapacity = 512;
  using Publish = std::function<
      void(WriterID, ChunkID, const std::vector<std::string>&, TBChunkFlags)>;

  ModelWriter(WriterID w, uint32_t drop_per_mille, Publish publish)
      : w_(w), drop_per_mille_(drop_per_mille), publish_(std::move(publish)) {}

  void WritePacket(std::minstd_rand* rng, size_t size) {
    std::string packet = std::to_string(w_) + ":" + std::to_string(number_++);
    packet.resize(std::max(size, packet.size() + 1), '.');
    if (!have_chunk_ || used_ == kCapacity) {
      if (have_chunk_)
        PublishChunk(false);
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
      PublishChunk(true);
      if (!Acquire(rng, true)) {
        dropped_++;
        return;
      }
    }
  }

  // The writer goes quiescent: its last chunk is published.
  void Finish() {
    if (have_chunk_ && !frags_.empty())
      PublishChunk(false);
  }

  const std::set<std::string>& committed() const { return committed_; }
  uint64_t dropped() const { return dropped_; }

 private:
  bool Acquire(std::minstd_rand* rng, bool continuing) {
    if ((*rng)() % 1000 < drop_per_mille_) {
      lost_ = true;
      return false;
    }
    have_chunk_ = true;
    from_prev_ = continuing;
    used_ = 0;
    frags_.clear();
    return true;
  }
  void PublishChunk(bool on_next) {
    TBChunkFlags flags;
    if (from_prev_)
      flags |= kChunkContinuesFromPrev;
    if (on_next)
      flags |= kChunkContinuesOnNext;
    if (lost_)
      flags |= kChunkDataLoss;
    lost_ = false;
    publish_(w_, next_id_++, frags_, flags);
    have_chunk_ = false;
  }

  const WriterID w_;
  const uint32_t drop_per_mille_;
  const Publish publish_;
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

// Exact accounting through a small RING_BUFFER with random reads: every
// packet the writers finished and did not count as dropped is read once
// or counted in packets_overwritten, never both, and nothing else is
// (written = read + packets_overwritten + the writers' own drops).
TEST_P(TraceBufferV2LossTest, WrittenEqualsReadPlusOverwrittenPlusDropped) {
  for (uint32_t seed = 1; seed <= 20; seed++) {
    Create(8192);
    if (GetParam()) {
      tb_->set_overwrite_observer(
          [](const PacketSequenceProperties&, const TracePacket&) {});
    }
    std::minstd_rand rng(seed);
    const ModelWriter::Publish publish =
        [this](WriterID w, ChunkID id, const std::vector<std::string>& frags,
               TBChunkFlags flags) {
          ASSERT_TRUE(CommitFrags(1, w, id, frags, flags));
        };
    std::vector<ModelWriter> writers;
    for (WriterID w = 1; w <= 3; w++)
      writers.emplace_back(w, 100, publish);
    std::multiset<std::string> read;
    auto read_pass = [&] {
      for (const ReadPacket& rp : Read())
        read.insert(rp.data);
    };
    for (int i = 0; i < 3000; i++) {
      writers[rng() % writers.size()].WritePacket(&rng, 20 + rng() % 700);
      if (rng() % 40 == 0)
        read_pass();
    }
    for (ModelWriter& w : writers)
      w.Finish();
    read_pass();
    uint64_t committed = 0;
    uint64_t dropped = 0;
    for (const ModelWriter& w : writers) {
      committed += w.committed().size();
      dropped += w.dropped();
      for (const std::string& packet : w.committed())
        ASSERT_LE(read.count(packet), 1u) << "read twice";
    }
    for (const std::string& packet : read) {
      bool known = false;
      for (const ModelWriter& w : writers)
        known |= w.committed().count(packet) != 0;
      ASSERT_TRUE(known) << "not a finished packet: " << packet.substr(0, 16);
    }
    const TraceBufferStats& st = tb_->stats();
    ASSERT_GT(st.packets_overwritten, 0u) << "seed " << seed;
    ASSERT_GT(dropped, 0u) << "seed " << seed;
    EXPECT_EQ(committed, read.size() + st.packets_overwritten)
        << "seed " << seed << " dropped " << dropped;
  }
}

// A refused patch is all-or-nothing and the packet it concerned is counted
// when its chunk is erased: see the patch tests in
// trace_buffer_v2_write_unittest.cc.

// ---- first_packet_on_sequence ------------------------------------------

using TraceBufferV2FirstPacketTest = test::TraceBufferV2TestBase;

struct FirstRead {
  ProducerID producer;
  std::string data;
  uint32_t loss;
  bool first;
  bool operator==(const FirstRead& o) const {
    return producer == o.producer && data == o.data && loss == o.loss &&
           first == o.first;
  }
};

void PrintTo(const FirstRead& r, std::ostream* os) {
  *os << "{" << r.producer << " \"" << r.data.substr(0, 8)
      << "\" loss=" << r.loss << " first=" << r.first << "}";
}

std::vector<FirstRead> ReadWithFirst(TraceBufferV2* tb) {
  std::vector<FirstRead> out;
  tb->BeginRead();
  TracePacket packet;
  PacketSequenceProperties props;
  uint32_t loss = 0;
  bool first = true;
  while (tb->ReadNextTracePacket(&packet, &props, &loss, &first)) {
    out.push_back(FirstRead{props.producer_id_trusted,
                            packet.GetRawBytesForTesting(), loss, first});
  }
  return out;
}

TEST_F(TraceBufferV2FirstPacketTest, OnlyTheWritersFirstPacketWithNoLoss) {
  Create(4096);
  // Sequence 1: chunks 0 and 1, read in two passes.
  ASSERT_TRUE(Commit(1, 1, 0, {"a0", "a1"}));
  // Sequence 2: its first chunk seen is 5 (chunks 0-4 may have been lost
  // before the buffer): no packet of it is the first.
  ASSERT_TRUE(Commit(2, 1, 5, {"b5"}));
  // Sequence 3: chunk 0 starts with an empty packet (skipped, no loss).
  ASSERT_TRUE(Commit(3, 1, 0, {"", "c0"}));
  // Sequence 4: chunk 0 continues a packet whose start is gone.
  ASSERT_TRUE(Commit(4, 1, 0, {"tail", "d0"}, kFromPrev));
  EXPECT_EQ(
      ReadWithFirst(tb_.get()),
      (std::vector<FirstRead>{
          {1, "a0", 0, true},
          {1, "a1", 0, false},
          {2, "b5", 0, false},
          {3, "c0", 0, true},
          {4, "d0", kDataLossPresent | kDataLossOrphanContinuation, false}}));
  ASSERT_TRUE(Commit(1, 1, 1, {"a2"}));
  EXPECT_EQ(ReadWithFirst(tb_.get()),
            (std::vector<FirstRead>{{1, "a2", 0, false}}));
}

// The first packets of a sequence were overwritten: the first packet read
// carries OVERWRITE and is not the first on the sequence.
TEST_F(TraceBufferV2FirstPacketTest, NotFirstAfterOverwrite) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {Pkt("a0", 1000 - 20)}));
  for (ChunkID id = 0; id < 3; id++)
    ASSERT_TRUE(Commit(2, 1, id, {Pkt("B", 1000 - 20)}));
  ASSERT_TRUE(Commit(2, 1, 3, {Pkt("L", 800 - 20)}));  // Erases chunk 0.
  ASSERT_EQ(tb_->stats().packets_overwritten, 1u);
  ASSERT_TRUE(Commit(1, 1, 1, {"a1", "a2"}));
  std::vector<FirstRead> seq1;
  for (const FirstRead& r : ReadWithFirst(tb_.get())) {
    if (r.producer == 1)
      seq1.push_back(r);
  }
  EXPECT_EQ(seq1, (std::vector<FirstRead>{{1, "a1", kOverwriteLoss, false},
                                          {1, "a2", 0, false}}));
}

// A clone answers like the original would (the state is copied), and
// reading the clone does not make the original's first packet "not first".
TEST_F(TraceBufferV2FirstPacketTest, CloneAndOriginalAgree) {
  Create(4096);
  ASSERT_TRUE(Commit(1, 1, 0, {"a0", "a1"}));
  std::unique_ptr<TraceBufferV2> clone = tb_->CloneReadOnly();
  ASSERT_NE(clone, nullptr);
  const std::vector<FirstRead> want = {{1, "a0", 0, true}, {1, "a1", 0, false}};
  EXPECT_EQ(ReadWithFirst(clone.get()), want);
  EXPECT_EQ(ReadWithFirst(tb_.get()), want);
}

// ---- trace_writer_packet_loss -------------------------------------------

using TraceBufferV2WriterLossTest = test::TraceBufferV2TestBase;

// Counted per chunk admitted with the writer's data-loss flag (at
// admission, read or not), plus every drop marker met by a reader.
TEST_F(TraceBufferV2WriterLossTest, CountsFlaggedChunksAndDropMarkers) {
  Create(4096);
  const std::string x = "x";
  const FragmentRef frag{reinterpret_cast<const uint8_t*>(x.data()), 1};
  ASSERT_TRUE(tb_->CopyChunkFragments(1, {}, 1, 0, &frag, 1, kNoTBChunkFlags));
  ASSERT_TRUE(tb_->CopyChunkFragments(1, {}, 1, 1, &frag, 1, kChunkDataLoss));
  ASSERT_TRUE(tb_->CopyChunkFragments(2, {}, 1, 0, &frag, 1, kChunkDataLoss));
  ASSERT_TRUE(tb_->CopyChunkFragments(1, {}, 1, 2, &frag, 1, kChunkDataLoss));
  // A flagged chunk rejected (duplicate ChunkID) was not admitted.
  ASSERT_FALSE(tb_->CopyChunkFragments(1, {}, 1, 2, &frag, 1, kChunkDataLoss));
  EXPECT_EQ(tb_->stats().trace_writer_packet_loss, 3u);
  // A v1 drop marker adds one when it is read.
  std::vector<uint8_t> payload = test::MakePayload({"y"});
  test::AppendDropMarker(&payload);
  ASSERT_TRUE(CommitRaw(3, 1, 0, payload, 2));
  EXPECT_EQ(tb_->stats().trace_writer_packet_loss, 3u);
  constexpr uint32_t kSmbFull = kDataLossPresent | kDataLossSmbFull;
  EXPECT_EQ(Read(),
            (std::vector<ReadPacket>{RP(1, 1, "x"), RP(1, 1, "x", kSmbFull),
                                     RP(2, 1, "x", kSmbFull),
                                     RP(1, 1, "x", kSmbFull), RP(3, 1, "y")}));
  EXPECT_EQ(tb_->stats().trace_writer_packet_loss, 4u);
}

INSTANTIATE_TEST_SUITE_P(TraceBufferV2,
                         TraceBufferV2LossTest,
                         ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return param_info.param ? "WithObserver"
                                                   : "NoObserver";
                         });

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
