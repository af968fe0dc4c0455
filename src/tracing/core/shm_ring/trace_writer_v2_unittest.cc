/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/trace_writer_v2.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "src/tracing/core/encoding/ungrouper.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"

namespace ringtrace {
namespace shm_ring {
namespace {

using encoding::Message;

using ungrouper::ConstBytes;
using ungrouper::Ungrouper;
using ungrouper::UngroupErrorName;

constexpr WriterID kWid = 5;

TraceWriterV2::Options MakeOptions(RingWriterDelegate* delegate = nullptr) {
  TraceWriterV2::Options o;
  o.writer_id = kWid;
  o.target_buffer = 1;
  o.delegate = delegate;
  return o;
}

// Converts the group encoding back to standard protobuf with the service's
// Ungrouper (src/tracing/core/encoding/) and parses it with libprotobuf.
bool ParsePacket(const std::string& grouped, perfetto::protos::TracePacket* p) {
  Ungrouper ungrouper;
  ConstBytes flat;
  const base::Status status = ungrouper.Ungroup(
      reinterpret_cast<const uint8_t*>(grouped.data()), grouped.size(), &flat);
  EXPECT_TRUE(status.ok()) << UngroupErrorName(ungrouper.last_error());
  if (!status.ok())
    return false;
  return p->ParseFromArray(flat.data, static_cast<int>(flat.size));
}

std::vector<std::string> DrainPackets(
    const TestRing& ring,
    std::vector<ReadChunk>* chunks_out = nullptr) {
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  if (chunks_out)
    *chunks_out = chunks;
  return Reassemble(chunks, kWid);
}

std::string Hex(const std::string& s) {
  static const char* kDigits = "0123456789abcdef";
  std::string h;
  for (unsigned char c : s) {
    h.push_back(kDigits[c >> 4]);
    h.push_back(kDigits[c & 15]);
  }
  return h;
}

// --- Tests -------------------------------------------------------------------

TEST(TraceWriterV2Test, EncodesEveryFieldTypeByteExact) {
  TestRing ring(512, 4);
  {
    std::unique_ptr<TraceWriterV2> w_owned =
        TraceWriterV2Owner::Create(ring.view(), MakeOptions());
    TraceWriterV2& w = *w_owned;
    auto p = w.NewTracePacket();
    p->AppendVarInt(1, 150u);
    p->AppendSignedVarInt(2, -1);
    p->AppendSignedVarInt(2, 1);
    p->AppendVarInt(8, -1);  // int64 -1: ten bytes
    p->AppendFixed32(3, 0x01020304u);
    p->AppendFixed64(4, 1u);
    p->AppendFloat(5, 1.0f);
    p->AppendDouble(6, 1.0);
    p->AppendString(7, "hi");
    const uint8_t raw[] = {0x00, 0xff};
    p->AppendBytes(7, raw, 2);
    Message* n = p->BeginNestedMessage(9);
    n->AppendVarInt(1, true);
    p->AppendVarInt(1, 0);  // closes the group first
  }
  const auto packets = DrainPackets(ring);
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(Hex(packets[0]),
            "089601"  // 1: 150
            "1001"
            "1002"                    // 2: zigzag(-1), zigzag(1)
            "40ffffffffffffffffff01"  // 8: -1
            "1d04030201"              // 3: fixed32
            "210100000000000000"      // 4: fixed64
            "2d0000803f"              // 5: float 1.0
            "31000000000000f03f"      // 6: double 1.0
            "3a026869"
            "3a0200ff"  // 7: string, bytes
            "4b"
            "0801"
            "4c"  // 9: start group, 1: 1, end
            "0800");
}

TEST(TraceWriterV2Test, NestedMessagesSeveralLevelsDeepRoundTrip) {
  TestRing ring(1024, 8);
  {
    std::unique_ptr<TraceWriterV2> w_owned =
        TraceWriterV2Owner::Create(ring.view(), MakeOptions());
    TraceWriterV2& w = *w_owned;
    auto p = w.NewTracePacket();
    p->AppendVarInt(8, 123456789u);            // timestamp
    Message* ev = p->BeginNestedMessage(900);  // for_testing
    ev->AppendString(1, "top");
    Message* payload = ev->BeginNestedMessage(5);  // TestEvent.payload
    Message* m = payload;
    for (int level = 0; level < 6; level++) {
      m->AppendString(4, "level" + std::to_string(level));
      m->AppendVarInt(3, 6 - level);
      m->AppendVarInt(6, -level);    // repeated_ints
      m = m->BeginNestedMessage(2);  // nested
    }
    m->AppendString(1, "deepest");
    ev->AppendVarInt(2, 77u);  // closes all six nested groups first
  }
  const auto packets = DrainPackets(ring);
  ASSERT_EQ(packets.size(), 1u);
  perfetto::protos::TracePacket tp;
  ASSERT_TRUE(ParsePacket(packets[0], &tp));
  EXPECT_EQ(tp.timestamp(), 123456789u);
  ASSERT_TRUE(tp.has_for_testing());
  EXPECT_EQ(tp.for_testing().str(), "top");
  EXPECT_EQ(tp.for_testing().seq_value(), 77u);
  const auto* pl = &tp.for_testing().payload();
  for (int level = 0; level < 6; level++) {
    EXPECT_EQ(pl->single_string(), "level" + std::to_string(level));
    EXPECT_EQ(pl->remaining_nesting_depth(), static_cast<uint32_t>(6 - level));
    ASSERT_EQ(pl->repeated_ints_size(), 1);
    EXPECT_EQ(pl->repeated_ints(0), -level);
    ASSERT_EQ(pl->nested_size(), 1) << level;
    pl = &pl->nested(0);
  }
  ASSERT_EQ(pl->str_size(), 1);
  EXPECT_EQ(pl->str(0), "deepest");
}

TEST(TraceWriterV2Test, TrackEventRoundTripIntoLibprotobuf) {
  TestRing ring(512, 8);
  {
    std::unique_ptr<TraceWriterV2> w_owned =
        TraceWriterV2Owner::Create(ring.view(), MakeOptions());
    TraceWriterV2& w = *w_owned;
    for (int i = 0; i < 3; i++) {
      auto p = w.NewTracePacket();
      p->AppendVarInt(8, 1000u + i);
      Message* te = p->BeginNestedMessage(11);
      te->AppendVarInt(9, 1);  // TYPE_SLICE_BEGIN
      te->AppendString(23, "event" + std::to_string(i));
      te->AppendVarInt(11, 42u);
      te->AppendDouble(44, 2.5);
      te->AppendFixed64(47, 0xdeadbeefcafef00dull);
      Message* da = te->BeginNestedMessage(4);
      da->AppendString(10, "arg");
      da->AppendVarInt(4, -7);
      Message* da2 = te->BeginNestedMessage(4);  // closes |da|
      da2->AppendString(10, "arg2");
      da2->AppendDouble(5, 0.25);
    }
  }
  const auto packets = DrainPackets(ring);
  ASSERT_EQ(packets.size(), 3u);
  for (int i = 0; i < 3; i++) {
    perfetto::protos::TracePacket tp;
    ASSERT_TRUE(ParsePacket(packets[i], &tp));
    EXPECT_EQ(tp.timestamp(), 1000u + i);
    const auto& te = tp.track_event();
    EXPECT_EQ(te.type(), perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN);
    EXPECT_EQ(te.name(), "event" + std::to_string(i));
    EXPECT_EQ(te.track_uuid(), 42u);
    EXPECT_EQ(te.double_counter_value(), 2.5);
    ASSERT_EQ(te.flow_ids_size(), 1);
    EXPECT_EQ(te.flow_ids(0), 0xdeadbeefcafef00dull);
    ASSERT_EQ(te.debug_annotations_size(), 2);
    EXPECT_EQ(te.debug_annotations(0).name(), "arg");
    EXPECT_EQ(te.debug_annotations(0).int_value(), -7);
    EXPECT_EQ(te.debug_annotations(1).name(), "arg2");
    EXPECT_EQ(te.debug_annotations(1).double_value(), 0.25);
  }
}

// Writes a packet whose for_testing.str has |size| bytes, inside two groups.
void WriteSizedPacket(TraceWriterV2* w, size_t size, char seed) {
  auto p = w->NewTracePacket();
  p->AppendVarInt(8, size);
  Message* ev = p->BeginNestedMessage(900);
  Message* pl = ev->BeginNestedMessage(5);
  pl->AppendString(4, Pattern(size, seed));
  pl->AppendVarInt(5, 9);
}

void ExpectSizedPacket(const std::string& grouped, size_t size, char seed) {
  perfetto::protos::TracePacket tp;
  ASSERT_TRUE(ParsePacket(grouped, &tp));
  EXPECT_EQ(tp.timestamp(), size);
  EXPECT_EQ(tp.for_testing().payload().single_string(), Pattern(size, seed));
  EXPECT_EQ(tp.for_testing().payload().single_int(), 9);
}

TEST(TraceWriterV2Test, PacketsSpanningOneTwoAndManyChunks) {
  TestRing ring(256, 32);
  {
    std::unique_ptr<TraceWriterV2> w_owned =
        TraceWriterV2Owner::Create(ring.view(), MakeOptions());
    TraceWriterV2& w = *w_owned;
    WriteSizedPacket(&w, 100, 'a');   // one chunk
    WriteSizedPacket(&w, 300, 'b');   // two chunks
    WriteSizedPacket(&w, 3000, 'c');  // many chunks
    EXPECT_EQ(w.stats().packets_committed, 3u);
    EXPECT_EQ(w.stats().packets_dropped, 0u);
  }
  std::vector<ReadChunk> chunks;
  const auto packets = DrainPackets(ring, &chunks);
  ASSERT_EQ(packets.size(), 3u);
  ExpectSizedPacket(packets[0], 100, 'a');
  ExpectSizedPacket(packets[1], 300, 'b');
  ExpectSizedPacket(packets[2], 3000, 'c');
  EXPECT_GE(chunks.size(), 14u);  // 3000 bytes need >= 13 chunks of 249
  for (size_t i = 1; i + 1 < chunks.size(); i++) {
    EXPECT_TRUE(chunks[i].flags & kFlagContinuesFromPrev) << i;
    EXPECT_TRUE(chunks[i].flags & kFlagContinuesOnNext) << i;
  }
}

// A synchronous reader: drains as soon as a chunk is published.
struct DrainOnPublish : public RingWriterDelegate {
  explicit DrainOnPublish(const RingView& ring) : reader(ring) {}
  void OnChunkPublished(uint32_t) override {
    EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  }
  TestRingReader reader;
  std::vector<ReadChunk> chunks;
};

TEST(TraceWriterV2Test, PacketLargerThanTheRingStreamsWhileReaderKeepsUp) {
  TestRing ring(256, 4);  // 1 KiB of chunks
  DrainOnPublish delegate(ring.view());
  {
    std::unique_ptr<TraceWriterV2> w_owned =
        TraceWriterV2Owner::Create(ring.view(), MakeOptions(&delegate));
    TraceWriterV2& w = *w_owned;
    WriteSizedPacket(&w, 10000, 'L');
    WriteSizedPacket(&w, 10, 's');
    EXPECT_EQ(w.stats().packets_dropped, 0u);
  }
  const auto packets = Reassemble(delegate.chunks, kWid);
  ASSERT_EQ(packets.size(), 2u);
  ExpectSizedPacket(packets[0], 10000, 'L');
  ExpectSizedPacket(packets[1], 10, 's');
}

TEST(TraceWriterV2Test, PacketLargerThanTheRingIsDroppedCleanly) {
  TestRing ring(256, 4);
  std::unique_ptr<TraceWriterV2> w_owned =
      TraceWriterV2Owner::Create(ring.view(), MakeOptions());
  TraceWriterV2& w = *w_owned;
  WriteSizedPacket(&w, 10000, 'L');
  TraceWriterV2Stats s = w.stats();
  EXPECT_EQ(s.packets_dropped, 1u);
  EXPECT_EQ(s.packets_committed, 0u);
  EXPECT_GT(s.bytes_dropped, 10000u - 4 * 249u);
  // timestamp 1+2, two start groups 2+1, string tag+len 1+2, single_int
  // 1+1, two end groups 1+2: 14 bytes around the string.
  EXPECT_EQ(s.bytes_written + s.bytes_dropped, 10000u + 14);
  // The reader frees the ring; writing resumes by itself.
  std::vector<ReadChunk> chunks;
  TestRingReader reader(ring.view());
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  WriteSizedPacket(&w, 20, 'n');
  w.Flush();
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  TestPacketReassembler r;
  for (const auto& c : chunks)
    r.Add(c);
  const auto& ws = r.writer(kWid);
  ASSERT_EQ(ws.packets.size(), 1u);
  ExpectSizedPacket(ws.packets[0], 20, 'n');
  EXPECT_EQ(ws.data_loss_flags, 1u);
  EXPECT_EQ(ws.broken_chains, 1u);
  EXPECT_EQ(w.stats().packets_committed, 1u);
}

TEST(TraceWriterV2Test, NestingBeyondTheLimitIsDroppedButWellFormed) {
  TestRing ring(4096, 4);
  {
    std::unique_ptr<TraceWriterV2> w_owned =
        TraceWriterV2Owner::Create(ring.view(), MakeOptions());
    TraceWriterV2& w = *w_owned;
    auto p = w.NewTracePacket();
    Message* m = p.get();
    for (uint32_t i = 0; i < TraceWriterV2::kMaxNestingDepth + 5; i++)
      m = m->BeginNestedMessage(2);
    m->AppendVarInt(3, 1u);
    p.Finish();
    EXPECT_EQ(w.stats().nesting_overflows, 5u);
  }
  const auto packets = DrainPackets(ring);
  ASSERT_EQ(packets.size(), 1u);
  // Well-formed: the Ungrouper accepts it and libprotobuf parses it.
  perfetto::protos::TracePacket tp;
  EXPECT_TRUE(ParsePacket(packets[0], &tp));
}

// Relocation of an open packet through the encoder: the reader scrapes the
// chunk mid-packet; Flush() moves the open fragment and rebases the encoder.
TEST(TraceWriterV2Test, FlushRelocatesAnOpenPacketAfterAScrape) {
  TestRing ring(512, 8);
  std::unique_ptr<TraceWriterV2> w_owned =
      TraceWriterV2Owner::Create(ring.view(), MakeOptions());
  TraceWriterV2& w = *w_owned;
  WriteSizedPacket(&w, 30, 'a');
  w.Flush();  // published, cached
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  {
    auto p = w.NewTracePacket();
    p->AppendVarInt(8, 40u);
    Message* ev = p->BeginNestedMessage(900);
    Message* pl = ev->BeginNestedMessage(5);
    const std::string s = Pattern(40, 'b');
    pl->AppendString(4, s.substr(0, 0));  // an empty string field
    ReadChunk c;
    ASSERT_EQ(reader.ResolveOne(&c), ResolveResult::kEmitted);  // scrape
    chunks.push_back(c);
    w.Flush();
    EXPECT_EQ(w.stats().relocations, 1u);
    pl->AppendString(4, s);
    pl->AppendVarInt(5, 9);
  }
  w.Flush();
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  const auto packets = Reassemble(chunks, kWid);
  ASSERT_EQ(packets.size(), 2u);
  ExpectSizedPacket(packets[0], 30, 'a');
  perfetto::protos::TracePacket tp;
  ASSERT_TRUE(ParsePacket(packets[1], &tp));
  EXPECT_EQ(tp.for_testing().payload().single_string(), Pattern(40, 'b'));
}

// Deterministic random interleavings of writer steps (appends spanning
// chunks, packet ends, flushes with and without an open packet) and reader
// steps (one position at a time, so chunks get scraped at every stage). The
// reader must see an in-order subsequence of intact packets, never a protocol
// error; without a recorded loss it must see all of them.
TEST(TraceWriterV2Test, RandomInterleavingsKeepPacketsIntactAndOrdered) {
  for (uint32_t seed = 1; seed <= 20; seed++) {
    TestRing ring(256, 8);
    TestRingReader reader(ring.view());
    std::vector<ReadChunk> chunks;
    std::mt19937 rng(seed);
    std::unique_ptr<TraceWriterV2> w_owned =
        TraceWriterV2Owner::Create(ring.view(), MakeOptions());
    TraceWriterV2& w = *w_owned;
    uint32_t next_seq = 0;
    std::vector<std::string> sent;
    for (int step = 0; step < 400; step++) {
      const uint32_t op = rng() % 8;
      if (op < 3) {
        // A packet written in pieces, with reader steps in between.
        std::string body = Pattern(rng() % 400, static_cast<char>(rng()));
        auto p = w.NewTracePacket();
        p->AppendVarInt(8, next_seq);
        Message* ev = p->BeginNestedMessage(900);
        ev->AppendVarInt(2, next_seq);
        Message* pl = ev->BeginNestedMessage(5);  // payload
        for (size_t off = 0; off < body.size();) {
          const size_t n = std::min<size_t>(1 + rng() % 120, body.size() - off);
          pl->AppendString(1, body.substr(off, n));  // repeated str
          off += n;
          if (rng() % 4 == 0) {
            ReadChunk c;
            if (reader.ResolveOne(&c) == ResolveResult::kEmitted)
              chunks.push_back(c);
          }
          if (rng() % 6 == 0)
            w.Flush();
        }
        sent.push_back(body);
        next_seq++;
      } else if (op < 5) {
        w.Flush();
      } else {
        ReadChunk c;
        const ResolveResult r = reader.ResolveOne(&c);
        ASSERT_NE(r, ResolveResult::kProtocolError);
        if (r == ResolveResult::kEmitted)
          chunks.push_back(c);
      }
    }
    w.Flush();
    ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
    const auto packets = Reassemble(chunks, kWid);
    int64_t last = -1;
    for (const auto& pk : packets) {
      perfetto::protos::TracePacket tp;
      ASSERT_TRUE(ParsePacket(pk, &tp)) << seed;
      const int64_t seq = static_cast<int64_t>(tp.timestamp());
      ASSERT_GT(seq, last) << seed;
      ASSERT_LT(seq, static_cast<int64_t>(sent.size()));
      last = seq;
      EXPECT_EQ(tp.for_testing().seq_value(), static_cast<uint32_t>(seq));
      std::string body;
      for (const auto& piece : tp.for_testing().payload().str())
        body += piece;
      EXPECT_EQ(body, sent[static_cast<size_t>(seq)]) << seed;
    }
    const RingWriterStats& rs =
        shm_ring::TraceWriterV2Owner::ring_writer(w).stats();
    EXPECT_EQ(rs.protocol_errors, 0u);
    if (rs.loss_events == 0) {
      EXPECT_EQ(packets.size(), sent.size()) << seed;
    }
  }
}

// Cross-thread smoke test: a reader thread drains while the writer writes.
// Every packet received is intact and in order; without a recorded loss all
// of them arrive.
TEST(TraceWriterV2Test, ConcurrentReaderReceivesIntactPackets) {
  TestRing ring(256, 8);
  constexpr int kPackets = 200;
  std::atomic<bool> writer_done{false};
  std::vector<ReadChunk> chunks;
  std::thread reader_thread([&] {
    TestRingReader reader(ring.view());
    for (;;) {
      const bool done = writer_done.load(std::memory_order_acquire);
      const ResolveResult r = reader.DrainAll(&chunks);
      ASSERT_NE(r, ResolveResult::kProtocolError);
      if (done && r == ResolveResult::kNoData)
        break;
      std::this_thread::yield();
    }
  });
  TraceWriterV2::Options opts = MakeOptions();
  opts.policy = BufferExhaustedPolicy::kStall;
  opts.stall_timeout_ms = 10000;
  std::unique_ptr<TraceWriterV2> w_owned =
      TraceWriterV2Owner::Create(ring.view(), opts);
  TraceWriterV2& w = *w_owned;
  for (int i = 0; i < kPackets; i++) {
    WriteSizedPacket(&w, static_cast<size_t>(1 + (i * 37) % 600),
                     static_cast<char>('a' + i % 26));
    if (i % 16 == 0)
      w.Flush();
  }
  w.Flush();
  writer_done.store(true, std::memory_order_release);
  reader_thread.join();
  const auto packets = Reassemble(chunks, kWid);
  size_t next = 0;
  for (const auto& pk : packets) {
    perfetto::protos::TracePacket tp;
    ASSERT_TRUE(ParsePacket(pk, &tp));
    // Find it at or after |next| (losses may skip some).
    while (next < kPackets &&
           tp.timestamp() != static_cast<uint64_t>(1 + (next * 37) % 600))
      next++;
    ASSERT_LT(next, static_cast<size_t>(kPackets));
    ExpectSizedPacket(pk, 1 + (next * 37) % 600,
                      static_cast<char>('a' + next % 26));
    next++;
  }
  if (shm_ring::TraceWriterV2Owner::ring_writer(w).stats().loss_events == 0) {
    EXPECT_EQ(packets.size(), static_cast<size_t>(kPackets));
  }
}

// The service's path: a packet spanning many chunks is handed to the
// Ungrouper as one slice per fragment, straight from the chunks (tags and
// varints straddle the fragment boundaries), without reassembling it first.
TEST(TraceWriterV2Test, SpanningPacketRoundTripsThroughUngroupSlices) {
  TestRing ring(256, 32);
  {
    std::unique_ptr<TraceWriterV2> w_owned =
        TraceWriterV2Owner::Create(ring.view(), MakeOptions());
    TraceWriterV2& w = *w_owned;
    WriteSizedPacket(&w, 3000, 'm');
  }
  std::vector<ReadChunk> chunks;
  DrainPackets(ring, &chunks);
  std::vector<ConstBytes> slices;
  for (const ReadChunk& c : chunks) {
    for (const std::string& f : c.fragments)
      slices.push_back({reinterpret_cast<const uint8_t*>(f.data()), f.size()});
  }
  ASSERT_GE(slices.size(), 13u);
  Ungrouper ungrouper;
  Ungrouper::SlicesResult result;
  ASSERT_TRUE(
      ungrouper.UngroupSlices(slices.data(), slices.size(), &result).ok());
  ASSERT_FALSE(result.pass_through);
  perfetto::protos::TracePacket tp;
  ASSERT_TRUE(tp.ParseFromArray(result.converted.data,
                                static_cast<int>(result.converted.size)));
  EXPECT_EQ(tp.timestamp(), 3000u);
  EXPECT_EQ(tp.for_testing().payload().single_string(), Pattern(3000, 'm'));
  EXPECT_EQ(tp.for_testing().payload().single_int(), 9);
}

#if !RT_DCHECK_IS_ON
// Every call that takes a field id, with |id|.
void CallEveryAppender(Message* m, uint32_t id) {
  m->AppendVarInt(id, 1u);
  m->AppendSignedVarInt(id, -1);
  m->AppendFixed32(id, 1u);
  m->AppendFixed64(id, 1u);
  m->AppendFloat(id, 1.0f);
  m->AppendDouble(id, 1.0);
  m->AppendString(id, "s");
  m->AppendBytes(id, "b", 1);
  Message* sink = m->BeginNestedMessage(id);
  sink->AppendVarInt(1, 7u);  // writes nothing, is not counted
  sink->Finalize();
}
#endif

const uint32_t kInvalidFieldIds[] = {0, Message::kMaxFieldId + 1, 0xffffffffu};

// Field ids outside [1, 2^29 - 1] cannot be encoded. Release builds: every
// such call is a counted no-op, the packet stays exactly the valid fields.
TEST(TraceWriterV2Test, InvalidFieldIdIsACountedNoOpInRelease) {
#if RT_DCHECK_IS_ON
  GTEST_SKIP() << "release builds only (debug builds RT_DCHECK)";
#else
  TestRing ring(4096, 4);
  {
    std::unique_ptr<TraceWriterV2> w_owned =
        TraceWriterV2Owner::Create(ring.view(), MakeOptions());
    TraceWriterV2& w = *w_owned;
    auto p = w.NewTracePacket();
    Message* open = p->BeginNestedMessage(3);  // stays open across them
    open->AppendVarInt(1, 5u);
    for (uint32_t id : kInvalidFieldIds) {
      CallEveryAppender(p.get(), id);
      CallEveryAppender(open, id);
    }
    open->AppendVarInt(2, 6u);
    // The limits themselves are valid, and so is the reserved 19000 range.
    p->AppendVarInt(Message::kMaxFieldId, 1u);
    p->AppendVarInt(19000, 2u);
    p.Finish();
    EXPECT_EQ(w.stats().invalid_field_ids, 3u * 2u * 9u);
    EXPECT_EQ(w.stats().nesting_overflows, 0u);
  }
  const auto packets = DrainPackets(ring);
  ASSERT_EQ(packets.size(), 1u);
  // 3 start-group, 1=5, 2=6, 3 end-group; (2^29-1) varint 1; 19000 varint 2.
  EXPECT_EQ(Hex(packets[0]),
            "1b"
            "0805"
            "1006"
            "1c"
            "f8ffffff0f01"
            "c0a30902");
#endif
}

// Debug builds: an invalid field id is a programming error.
TEST(TraceWriterV2Test, InvalidFieldIdIsADcheckInDebug) {
#if !RT_DCHECK_IS_ON
  GTEST_SKIP() << "debug builds only";
#else
  for (uint32_t id : kInvalidFieldIds) {
    SCOPED_TRACE(id);
    auto write = [id](int which) {
      TestRing ring(4096, 4);
      std::unique_ptr<TraceWriterV2> w_owned =
          TraceWriterV2Owner::Create(ring.view(), MakeOptions());
      TraceWriterV2& w = *w_owned;
      auto p = w.NewTracePacket();
      switch (which) {
        case 0:
          p->AppendVarInt(id, 1u);
          break;
        case 1:
          p->AppendFixed32(id, 1u);
          break;
        case 2:
          p->AppendFixed64(id, 1u);
          break;
        case 3:
          p->AppendBytes(id, "b", 1);
          break;
        default:
          p->BeginNestedMessage(id);
          break;
      }
    };
    for (int which = 0; which < 5; which++)
      EXPECT_DEATH_IF_SUPPORTED(write(which), "IsValidFieldId") << which;
  }
#endif
}

// Encoded size of WriteSizedPacket(size), measured on a ring of its own.
uint64_t EncodedSize(size_t size) {
  TestRing ring(4096, 8);
  std::unique_ptr<TraceWriterV2> w_owned =
      TraceWriterV2Owner::Create(ring.view(), MakeOptions());
  TraceWriterV2& w = *w_owned;
  WriteSizedPacket(&w, size, 'e');
  return w.stats().bytes_written;
}

// Every encoded byte is counted once, in bytes_written or bytes_dropped, also
// when the ring drops bytes it had already taken: here a scraped chunk whose
// finished packet and open packet find no replacement.
TEST(TraceWriterV2Test, DroppedSuffixMovesBytesFromWrittenToDropped) {
  const uint64_t expected = 2 * EncodedSize(20);
  TestRing ring(256, 2);
  TraceWriterV2::Options opts = MakeOptions();
  opts.claim_budget = 1;
  // Deferred publication, so that a finished packet is still unpublished.
  opts.publication = Publication::kPerChunkRisksLossOnCrash;
  std::unique_ptr<TraceWriterV2> w_owned =
      TraceWriterV2Owner::Create(ring.view(), opts);
  TraceWriterV2& w = *w_owned;
  WriteSizedPacket(&w, 20, 'a');  // closed, unpublished, in chunk 0
  {
    auto p = w.NewTracePacket();
    p->AppendVarInt(8, 20u);
    Message* ev = p->BeginNestedMessage(900);
    // Another writer holds position 1; the reader scrapes chunk 0 at n = 0.
    ring.set_write_pos(2);
    ring.set_word(1, MakeDataWord(ChunkState::kComplete, 0,
                                  shm_ring::kNoChunkFlags, 0, 99));
    TestRingReader reader(ring.view());
    ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kSkipped);
    w.Flush();  // relocation finds no chunk: both packets' bytes are lost
    Message* pl = ev->BeginNestedMessage(5);
    pl->AppendString(4, Pattern(20, 'e'));
    pl->AppendVarInt(5, 9);
  }
  const TraceWriterV2Stats s = w.stats();
  EXPECT_EQ(
      shm_ring::TraceWriterV2Owner::ring_writer(w).stats().suffixes_dropped,
      1u);
  EXPECT_EQ(s.burned_positions, 1u);  // position 2: chunk 0 is Acknowledged
  EXPECT_EQ(s.relocations, 0u);
  // Both packets are lost: the finished one moved from committed to dropped.
  EXPECT_EQ(s.packets_begun, 2u);
  EXPECT_EQ(s.packets_dropped, 2u);
  EXPECT_EQ(s.packets_committed, 0u);
  EXPECT_EQ(s.bytes_written, 0u);
  EXPECT_EQ(s.bytes_dropped, expected);
}

// The same on a protocol error with a packet open: the open fragment's bytes
// are counted as dropped, not forgotten.
TEST(TraceWriterV2Test, ProtocolErrorCountsTheOpenPacketsBytes) {
  const uint64_t expected = EncodedSize(20) + EncodedSize(30);
  TestRing ring(256, 4);
  std::unique_ptr<TraceWriterV2> w_owned =
      TraceWriterV2Owner::Create(ring.view(), MakeOptions());
  TraceWriterV2& w = *w_owned;
  WriteSizedPacket(&w, 20, 'a');
  w.Flush();  // published: stays counted as written
  {
    auto p = w.NewTracePacket();
    p->AppendVarInt(8, 30u);
    Message* ev = p->BeginNestedMessage(900);
    // A hostile reader writes another writer's word into our chunk.
    ring.set_word(0, MakeDataWord(ChunkState::kRewriteRequested, 0,
                                  shm_ring::kNoChunkFlags, 1, kWid + 1));
    w.Flush();
    EXPECT_EQ(
        shm_ring::TraceWriterV2Owner::ring_writer(w).stats().protocol_errors,
        1u);
    Message* pl = ev->BeginNestedMessage(5);
    pl->AppendString(4, Pattern(30, 'e'));
    pl->AppendVarInt(5, 9);
  }
  const TraceWriterV2Stats s = w.stats();
  EXPECT_EQ(s.packets_committed, 1u);
  EXPECT_EQ(s.packets_dropped, 1u);
  EXPECT_EQ(s.bytes_written, EncodedSize(20));
  EXPECT_EQ(s.bytes_written + s.bytes_dropped, expected);
}

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
