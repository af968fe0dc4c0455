/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2: the fragment index (tb_chunk.h) that final v1 chunks with
// large enough fragments, and every chunk of the drainer path, store before
// their fragments. Which chunks get one (and what it costs in buffer bytes),
// and that reading through it returns exactly what tokenizing returns: whole
// chunks, reads interrupted by writes, reassembly into an indexed chunk, the
// drainer's bare payloads with empty fragments, erase (whole and after a
// partial read), clone.

#include <gtest/gtest.h>

#include <string.h>

#include <string>
#include <vector>

#include "src/base/checked_math.h"
#include "src/tracing/service/trace_buffer_v2/tb_chunk.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2_test_utils.h"

namespace ringtrace {
namespace trace_buffer {
namespace {

using test::Data;
using test::MakePayload;
using test::OuterSize;
using test::Pkt;
using test::ReadPacket;
using test::RP;

constexpr TBChunkFlags kFromPrev = kChunkContinuesFromPrev;
constexpr TBChunkFlags kOnNext = kChunkContinuesOnNext;

// Outer size of a chunk storing |payload_bytes| of fragments and an index of
// |n| entries.
size_t IndexedOuterSize(size_t payload_bytes, size_t n) {
  return TBChunk::OuterSizeForPayload(
      TBChunk::StoredSizeWithIndex(payload_bytes, n));
}

// |n| distinct packets of 100-250 bytes: well above 64 bytes per fragment.
std::vector<std::string> BigPackets(const std::string& tag, size_t n) {
  std::vector<std::string> v;
  for (size_t i = 0; i < n; i++)
    v.push_back(Pkt(tag + std::to_string(i), 100 + (i * 37) % 151));
  return v;
}

// The v1 payload: every fragment with its size header.
size_t PayloadBytes(const std::vector<std::string>& frags) {
  return MakePayload(frags).size();
}

// A drainer chunk's bare payload: the fragments' bytes only.
size_t BareBytes(const std::vector<std::string>& frags) {
  size_t n = 0;
  for (const std::string& f : frags)
    n += f.size();
  return n;
}

class TraceBufferV2FragIndexTest : public test::TraceBufferV2TestBase {
 protected:
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
};

// A v1 chunk of 6 large fragments stores 4 bytes per fragment more, and
// reads back exactly.
TEST_F(TraceBufferV2FragIndexTest, V1ChunkStoresIndexAndReadsBack) {
  Create(64 * 1024);
  const std::vector<std::string> pkts = BigPackets("a", 6);
  ASSERT_TRUE(Commit(1, 1, 0, pkts));
  EXPECT_EQ(tb_->stats().bytes_written,
            IndexedOuterSize(PayloadBytes(pkts), 6));
  EXPECT_EQ(Data(Read()), pkts);
  EXPECT_FALSE(tb_->has_data());
}

// Chunks below the thresholds keep the plain format: fewer than 4
// fragments, or fewer than 64 bytes per fragment.
TEST_F(TraceBufferV2FragIndexTest, SmallChunksHaveNoIndex) {
  Create(64 * 1024);
  const std::vector<std::string> three = BigPackets("t", 3);
  ASSERT_TRUE(Commit(1, 1, 0, three));
  EXPECT_EQ(tb_->stats().bytes_written, OuterSize(three));
  const std::vector<std::string> tiny = {Pkt("s0", 40), Pkt("s1", 40),
                                         Pkt("s2", 40), Pkt("s3", 40),
                                         Pkt("s4", 40)};
  ASSERT_TRUE(Commit(1, 1, 1, tiny));
  EXPECT_EQ(tb_->stats().bytes_written, OuterSize(three) + OuterSize(tiny));
  std::vector<std::string> all = three;
  all.insert(all.end(), tiny.begin(), tiny.end());
  EXPECT_EQ(Data(Read()), all);
}

// 1- and 2-byte (minimal) varint headers, as Perfetto writers send them:
// the index points past headers of any length.
TEST_F(TraceBufferV2FragIndexTest, ShortVarIntHeaders) {
  Create(64 * 1024);
  std::vector<uint8_t> payload;
  std::vector<std::string> pkts;
  for (size_t i = 0; i < 5; i++) {
    const size_t size = i % 2 ? 100 : 300;  // 1-byte, 2-byte header.
    std::string p = Pkt("v" + std::to_string(i), size);
    if (size < 128) {
      payload.push_back(static_cast<uint8_t>(size));
    } else {
      payload.push_back(static_cast<uint8_t>(0x80 | (size & 0x7f)));
      payload.push_back(static_cast<uint8_t>(size >> 7));
    }
    payload.insert(payload.end(), p.begin(), p.end());
    pkts.push_back(p);
  }
  ASSERT_TRUE(CommitRaw(1, 1, 0, payload, 5));
  EXPECT_EQ(tb_->stats().bytes_written, IndexedOuterSize(payload.size(), 5));
  EXPECT_EQ(Data(Read()), pkts);
}

// A drop marker after enough large fragments: the chunk gets no index (an
// index must cover every fragment up to valid_size; one covering only the
// fragments before the marker made readers search it and fall back), and
// reads back with WRITER_ABORT on the packet after the marker.
TEST_F(TraceBufferV2FragIndexTest, DropMarkerAfterLargeFragmentsNoIndex) {
  Create(64 * 1024);
  const std::vector<std::string> before = BigPackets("a", 5);
  const std::vector<std::string> after = BigPackets("b", 2);
  std::vector<uint8_t> payload = MakePayload(before);
  test::AppendDropMarker(&payload);
  for (const std::string& p : after)
    test::AppendFragment(&payload, p);
  ASSERT_TRUE(CommitRaw(1, 1, 0, payload, 8));
  EXPECT_EQ(tb_->stats().bytes_written,
            TBChunk::OuterSizeForPayload(payload.size()));
  const std::vector<ReadPacket> got = Read();
  ASSERT_EQ(got.size(), 7u);
  for (size_t i = 0; i < 7; i++) {
    EXPECT_EQ(got[i].data, i < 5 ? before[i] : after[i - 5]);
    EXPECT_EQ(got[i].loss,
              i == 5 ? (kDataLossPresent | kDataLossWriterAbort) : 0u);
  }
  EXPECT_EQ(tb_->stats().trace_writer_packet_loss, 1u);
}

// A read pass interrupted by writes restarts in the middle of an indexed
// chunk (the reader finds its place from read_offset alone).
TEST_F(TraceBufferV2FragIndexTest, ReadInterruptedByWrites) {
  Create(64 * 1024);
  const std::vector<std::string> pkts = BigPackets("a", 8);
  ASSERT_TRUE(Commit(1, 1, 0, pkts));
  std::vector<std::string> got;
  TracePacket packet;
  PacketSequenceProperties props;
  uint32_t loss = 0;
  tb_->BeginRead();
  for (int i = 0; i < 3; i++) {
    ASSERT_TRUE(tb_->ReadNextTracePacket(&packet, &props, &loss));
    EXPECT_EQ(loss, 0u);
    got.push_back(packet.GetRawBytesForTesting());
  }
  // Another sequence writes: the pass restarts at the oldest data.
  ASSERT_TRUE(Commit(2, 1, 0, BigPackets("b", 4)));
  ASSERT_TRUE(tb_->ReadNextTracePacket(&packet, &props, &loss));
  got.push_back(packet.GetRawBytesForTesting());
  ASSERT_TRUE(Commit(1, 1, 1, BigPackets("c", 5)));
  for (const ReadPacket& rp : Read()) {
    EXPECT_EQ(rp.loss, 0u);
    if (rp.producer_id == 1)
      got.push_back(rp.data);
  }
  std::vector<std::string> want = pkts;
  for (const std::string& c : BigPackets("c", 5))
    want.push_back(c);
  EXPECT_EQ(got, want);
}

// A packet continuing into an indexed chunk: reassembly consumes the
// chunk's first fragment, the reader then continues at its second entry.
TEST_F(TraceBufferV2FragIndexTest, ReassemblyIntoIndexedChunk) {
  Create(64 * 1024);
  std::vector<std::string> first = BigPackets("a", 4);
  first.push_back(Pkt("P-head", 200));
  ASSERT_TRUE(Commit(1, 1, 0, first, kOnNext));
  std::vector<std::string> second = {Pkt("P-tail", 150)};
  for (const std::string& b : BigPackets("b", 5))
    second.push_back(b);
  ASSERT_TRUE(Commit(1, 1, 1, second, kFromPrev | kOnNext));
  ASSERT_TRUE(Commit(1, 1, 2, {Pkt("Q-tail", 90), "end"}, kFromPrev));
  std::vector<std::string> want(first.begin(), first.end() - 1);
  want.push_back(Pkt("P-head", 200) + Pkt("P-tail", 150));
  for (size_t i = 1; i + 1 < second.size(); i++)
    want.push_back(second[i]);
  want.push_back(second.back() + Pkt("Q-tail", 90));
  want.push_back("end");
  const std::vector<ReadPacket> got = Read();
  EXPECT_EQ(Data(got), want);
  for (const ReadPacket& rp : got)
    EXPECT_EQ(rp.loss, 0u);
  EXPECT_FALSE(tb_->has_data());
}

// The drainer path: the index covers the fragments up to the last one that
// matters; the trailing empty fragments are not stored at all.
TEST_F(TraceBufferV2FragIndexTest, DrainerChunkWithTrailingEmptyFragments) {
  Create(64 * 1024);
  std::vector<std::string> frags = BigPackets("d", 5);
  const size_t payload = BareBytes(frags);
  frags.push_back("");
  frags.push_back("");
  ASSERT_TRUE(CommitFrags(1, 1, 0, frags));
  EXPECT_EQ(tb_->stats().bytes_written, IndexedOuterSize(payload, 5));
  EXPECT_EQ(Data(Read()), BigPackets("d", 5));
  EXPECT_FALSE(tb_->has_data());
}

// Every drainer chunk is indexed, however small its fragments, and costs
// exactly what the v1 format would (an entry instead of a 4-byte header).
// Its fragments lie back to back, as in the ring: packets are read in place.
TEST_F(TraceBufferV2FragIndexTest, DrainerChunksAreIndexedWithBarePayloads) {
  Create(64 * 1024);
  const std::vector<std::string> small = {Pkt("s0", 10), Pkt("s1", 20),
                                          Pkt("s2", 7)};
  ASSERT_TRUE(CommitFrags(1, 1, 0, small));
  EXPECT_EQ(tb_->stats().bytes_written, IndexedOuterSize(BareBytes(small), 3));
  EXPECT_EQ(tb_->stats().bytes_written, OuterSize(small));
  std::vector<const uint8_t*> where;
  TracePacket packet;
  PacketSequenceProperties props;
  uint32_t loss = 0;
  tb_->BeginRead();
  std::vector<std::string> got;
  while (tb_->ReadNextTracePacket(&packet, &props, &loss)) {
    ASSERT_EQ(packet.slices().size(), 1u);
    where.push_back(packet.slices()[0].data);
    got.push_back(packet.GetRawBytesForTesting());
    EXPECT_EQ(loss, 0u);
  }
  EXPECT_EQ(got, small);
  ASSERT_EQ(where.size(), 3u);
  EXPECT_EQ(where[1], where[0] + 10);
  EXPECT_EQ(where[2], where[1] + 20);
}

// Empty fragments have no bytes in a bare payload but keep their place
// ([TB-IDX]: positions count entries): an empty packet between two others
// is skipped, and an empty first fragment still ends the packet continued
// from the previous chunk.
TEST_F(TraceBufferV2FragIndexTest, DrainerEmptyFragmentsKeepTheirPlace) {
  Create(64 * 1024);
  ASSERT_TRUE(CommitFrags(1, 1, 0, {"", Pkt("a", 30), "", Pkt("head", 40)},
                          kChunkContinuesOnNext));
  ASSERT_TRUE(CommitFrags(1, 1, 1, {"", "", Pkt("b", 12), Pkt("mid", 9)},
                          kChunkContinuesFromPrev | kChunkContinuesOnNext));
  ASSERT_TRUE(
      CommitFrags(1, 1, 2, {Pkt("tail", 5), ""}, kChunkContinuesFromPrev));
  const std::vector<ReadPacket> got = Read();
  EXPECT_EQ(Data(got), (std::vector<std::string>{
                           Pkt("a", 30), Pkt("head", 40), Pkt("b", 12),
                           Pkt("mid", 9) + Pkt("tail", 5)}));
  for (const ReadPacket& rp : got)
    EXPECT_EQ(rp.loss, 0u);
  EXPECT_FALSE(tb_->has_data());
}

// A drainer chunk erased after part of it was read: exactly its unread
// packets are counted, and handed to the observer, from where the reader
// stopped.
TEST_F(TraceBufferV2FragIndexTest, DrainerChunkErasedAfterPartialRead) {
  for (const bool observe : {false, true}) {
    SCOPED_TRACE(observe);
    Create(8192);
    std::vector<std::string> observed;
    if (observe) {
      tb_->set_overwrite_observer(
          [&observed](const PacketSequenceProperties&, const TracePacket& p) {
            observed.push_back(p.GetRawBytesForTesting());
          });
    }
    std::vector<std::string> a = {Pkt("a0", 30), "", Pkt("a1", 60),
                                  Pkt("a2", 90), "", Pkt("a3", 20)};
    ASSERT_TRUE(CommitFrags(1, 1, 0, a));
    TracePacket packet;
    PacketSequenceProperties props;
    uint32_t loss = 0;
    tb_->BeginRead();
    ASSERT_TRUE(tb_->ReadNextTracePacket(&packet, &props, &loss));
    EXPECT_EQ(packet.GetRawBytesForTesting(), a[0]);
    ASSERT_TRUE(tb_->ReadNextTracePacket(&packet, &props, &loss));
    EXPECT_EQ(packet.GetRawBytesForTesting(), a[2]);
    // Sequence 2 fills the buffer; the 8th of its ~1.1 KiB chunks erases
    // chunk 0 of sequence 1 (2 packets unread) and its own chunk 0 (6).
    const std::vector<std::string> b = BigPackets("b", 6);
    for (ChunkID id = 0; id < 8; id++) {
      EXPECT_EQ(tb_->stats().chunks_overwritten, 0u);
      ASSERT_TRUE(CommitFrags(2, 1, id, b));
    }
    EXPECT_EQ(tb_->stats().chunks_overwritten, 2u);
    EXPECT_EQ(tb_->stats().packets_overwritten, 2u + 6u);
    if (observe) {
      std::vector<std::string> want = {a[3], a[5]};
      want.insert(want.end(), b.begin(), b.end());
      EXPECT_EQ(observed, want);
    }
  }
}

// An indexed chunk never needed patches: a patch on it fails and changes
// nothing. A chunk that needs patches has no index and reads its patched
// bytes.
TEST_F(TraceBufferV2FragIndexTest, PatchesAndIndexNeverMeet) {
  Create(64 * 1024);
  const std::vector<std::string> pkts = BigPackets("a", 5);
  ASSERT_TRUE(Commit(1, 1, 0, pkts));
  TraceBufferV2::Patch patch;
  patch.offset_untrusted = 8;
  memcpy(patch.data, "XXXX", 4);
  EXPECT_FALSE(tb_->TryPatchChunkContents(1, 1, 0, &patch, 1, false));
  EXPECT_EQ(tb_->stats().patches_failed, 1u);
  EXPECT_EQ(tb_->stats().abi_violations, 0u);

  std::vector<std::string> patched = BigPackets("p", 5);
  ASSERT_TRUE(Commit(1, 1, 1, patched, kChunkNeedsPatching));
  EXPECT_EQ(tb_->stats().bytes_written,
            IndexedOuterSize(PayloadBytes(pkts), 5) + OuterSize(patched));
  EXPECT_TRUE(tb_->TryPatchChunkContents(1, 1, 1, &patch, 1, false));
  memcpy(&patched[0][4], "XXXX", 4);  // Offset 8 = 4-byte header + 4.
  std::vector<std::string> want = pkts;
  want.insert(want.end(), patched.begin(), patched.end());
  EXPECT_EQ(Data(Read()), want);
}

// Erasing unread indexed chunks counts and hands over exactly their packets,
// with and without an observer; a clone reads indexed chunks too.
TEST_F(TraceBufferV2FragIndexTest, EraseAndClone) {
  for (const bool observe : {false, true}) {
    SCOPED_TRACE(observe);
    Create(8192);
    std::vector<std::string> observed;
    if (observe) {
      tb_->set_overwrite_observer(
          [&observed](const PacketSequenceProperties&, const TracePacket& p) {
            observed.push_back(p.GetRawBytesForTesting());
          });
    }
    const std::vector<std::string> a = BigPackets("a", 6);  // ~1.1 KiB
    ASSERT_TRUE(Commit(1, 1, 0, a));
    std::unique_ptr<TraceBufferV2> clone = tb_->CloneReadOnly();
    ASSERT_NE(clone, nullptr);
    // Sequence 2 fills the buffer and erases chunk 0 of sequence 1.
    for (ChunkID id = 0; id < 7; id++)
      ASSERT_TRUE(Commit(2, 1, id, BigPackets("b", 6)));
    EXPECT_EQ(tb_->stats().chunks_overwritten, 1u);
    EXPECT_EQ(tb_->stats().packets_overwritten, 6u);
    if (observe) {
      EXPECT_EQ(observed, a);
    }
    EXPECT_EQ(Data(test::ReadAll(clone.get())), a);
  }
}

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
