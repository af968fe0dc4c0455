/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The whole pipeline with protobuf packets: several TraceWriterV2 threads
// (group-encoded nested messages) -> shared ring -> RingDrainer thread ->
// TraceBufferV2 -> reassembled packets -> Ungrouper -> libprotobuf. Every
// packet names its writer and sequence number and carries content derived
// from them, so the test checks exactly-once, in-order, intact delivery after
// the ungrouper, that the missing packets are exactly the ones the writers
// lost (test::LossLedger), each reported on the writer's next packet, so
// delivered + lost == written exactly. Fixed iteration counts.

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/logging.h"
#include "ringtrace/trace_writer_v2.h"
#include "src/tracing/core/encoding/ungrouper.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/background_drainer.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/test/loss_ledger.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::TraceWriterV2;
using trace_buffer::TraceBufferV2;

constexpr BufferID kBufferId = 2;

namespace rt = perfetto::protos::rtzero;

std::string ContentFor(uint32_t writer, uint32_t seq) {
  // 0 .. ~700 bytes: packets often span 512-byte chunks.
  const uint32_t len = (seq * 131 + writer * 17) % 700;
  std::string s(len, '\0');
  for (uint32_t i = 0; i < len; ++i)
    s[i] = static_cast<char>('a' + (writer + seq + i) % 26);
  return s;
}

// Writes packet |seq| of |writer|, telling |ledger| about every call into
// the TraceWriterV2 (see test/loss_ledger.h). The nested messages are
// finalized before the packet is finished, so that finishing it makes only
// the EndPacket call into the ring writer.
void WritePacket(TraceWriterV2* w,
                 test::LossLedger* ledger,
                 uint32_t writer,
                 uint32_t seq) {
  auto step = [&](auto&& call) { ledger->Step(call); };
  auto packet = ledger->Open(seq, [w] { return w->NewTracePacket(); });
  rt::TracePacket tp(packet);
  // The nested writers, set by the step that begins them.
  encoding::Message* ev = nullptr;
  encoding::Message* payload = nullptr;
  encoding::Message* nested = nullptr;
  step([&] { tp.set_timestamp(1000 + seq); });
  step([&] { ev = tp.set_for_testing().message(); });
  step([&] { rt::TestEvent(ev).set_seq_value(seq); });
  step([&] { rt::TestEvent(ev).set_str(ContentFor(writer, seq)); });
  step([&] { payload = rt::TestEvent(ev).set_payload().message(); });
  step([&] {
    rt::TestEvent::TestPayload(payload).set_single_int(
        static_cast<int32_t>(writer));
  });
  step([&] {
    nested = rt::TestEvent::TestPayload(payload).add_nested().message();
  });
  step([&] { rt::TestEvent::TestPayload(nested).set_single_string("deep"); });
  step([&] {
    rt::TestEvent::TestPayload(payload).set_single_string("after-nested");
  });
  step([&] {
    rt::TestEvent(ev).set_counter(static_cast<uint64_t>(writer) << 32 | seq);
  });
  step([&] { ev->Finalize(); });
  if (ledger->packet_open())
    ledger->PacketFinished();
  packet.Finish();
  ledger->AfterCall();
}

void FlushWriter(TraceWriterV2* w, test::LossLedger* ledger) {
  w->Flush();
  ledger->AfterCall();
}

struct Params {
  const char* name;
  uint32_t chunk_size;
  uint32_t num_chunks;
  uint32_t start_position;
  uint64_t head_grace_ns;
};

// Reads every packet of |tb| back and checks it: exactly once and in order
// per writer; what is missing is exactly what the writer lost (|ledgers|,
// indexed by WriterID - 1), and the loss is reported on the next packet;
// every packet intact. Fills, per writer, the next expected sequence number
// and the packets delivered.
void ReadBackAndCheck(
    TraceBufferV2* tb,
    const std::vector<std::unique_ptr<test::LossLedger>>& ledgers,
    std::vector<uint32_t>* next,
    std::vector<uint32_t>* delivered) {
  ungrouper::Ungrouper converter;
  tb->BeginRead();
  trace_buffer::TracePacket packet;
  trace_buffer::PacketSequenceProperties props;
  uint32_t loss = 0;
  std::vector<ungrouper::ConstBytes> slices;
  while (tb->ReadNextTracePacket(&packet, &props, &loss)) {
    slices.clear();
    for (const auto& s : packet.slices())
      slices.push_back({s.data, s.size});
    ungrouper::Ungrouper::SlicesResult converted;
    ASSERT_TRUE(
        converter.UngroupSlices(slices.data(), slices.size(), &converted).ok());
    ASSERT_FALSE(converted.pass_through);  // Every packet has groups.
    perfetto::protos::TracePacket proto;
    ASSERT_TRUE(proto.ParseFromArray(
        converted.converted.data, static_cast<int>(converted.converted.size)));
    ASSERT_TRUE(proto.has_for_testing());
    const auto& ev = proto.for_testing();
    const uint32_t writer = ev.payload().single_int();
    ASSERT_EQ(writer, props.writer_id);
    ASSERT_GE(writer, 1u);
    ASSERT_LE(writer, ledgers.size());
    const uint32_t seq = ev.seq_value();
    const uint32_t w = writer - 1;
    const std::set<uint32_t>& lost = ledgers[w]->lost();
    // Exactly once, in order; what is missing is exactly what the writer
    // lost, and the loss is reported on this packet.
    ASSERT_GE(seq, (*next)[w]);
    EXPECT_EQ(lost.count(seq), 0u) << "seq " << seq << " arrived, yet lost";
    for (uint32_t missing = (*next)[w]; missing < seq; ++missing)
      EXPECT_EQ(lost.count(missing), 1u) << "seq " << missing << " vanished";
    if (seq > (*next)[w]) {
      EXPECT_NE(loss & trace_buffer::kDataLossPresent, 0u)
          << "unreported loss before seq " << seq;
    }
    (*next)[w] = seq + 1;
    ++(*delivered)[w];
    // Intact.
    EXPECT_EQ(proto.timestamp(), 1000u + seq);
    EXPECT_EQ(ev.str(), ContentFor(writer, seq));
    EXPECT_EQ(ev.counter(), static_cast<uint64_t>(writer) << 32 | seq);
    EXPECT_EQ(ev.payload().single_string(), "after-nested");
    ASSERT_EQ(ev.payload().nested_size(), 1);
    EXPECT_EQ(ev.payload().nested(0).single_string(), "deep");
  }
}

void RunPipeline(const Params& p) {
  SCOPED_TRACE(p.name);
  constexpr uint32_t kWriters = 3;
  constexpr uint32_t kPackets = 200;
  test::DrainedRing env({p.chunk_size, p.num_chunks, p.start_position, 8 << 20,
                         /*producer_id=*/77, kBufferId, p.head_grace_ns});
  shm_ring::TestRing& ring = env.ring;
  std::unique_ptr<TraceBufferV2>& tb = env.tb;
  RingDrainer& drainer = env.drainer;
  const RingId id = env.id;

  // The writers outlive their threads: the main thread adds end markers.
  std::vector<std::unique_ptr<TraceWriterV2>> trace_writers;
  std::vector<std::unique_ptr<test::LossLedger>> ledgers;
  for (uint32_t w = 0; w < kWriters; ++w) {
    TraceWriterV2::Options o;
    o.writer_id = static_cast<WriterID>(w + 1);
    o.target_buffer = kBufferId;
    o.policy = shm_ring::BufferExhaustedPolicy::kStall;
    o.stall_timeout_ms = 5000;
    trace_writers.push_back(
        shm_ring::TraceWriterV2Owner::Create(ring.view(), o));
    ledgers.push_back(std::make_unique<test::LossLedger>(
        &shm_ring::TraceWriterV2Owner::ring_writer(*trace_writers.back())));
  }
  test::BackgroundDrainer background(&drainer, id);
  std::vector<std::thread> writers;
  for (uint32_t w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      TraceWriterV2* writer = trace_writers[w].get();
      for (uint32_t seq = 0; seq < kPackets; ++seq) {
        WritePacket(writer, ledgers[w].get(), w + 1, seq);
        if (seq % 5 == 4)
          FlushWriter(writer, ledgers[w].get());
      }
      FlushWriter(writer, ledgers[w].get());
    });
  }
  for (std::thread& t : writers)
    t.join();
  background.WritersDone();
  background.Stop();

  // One end marker per writer, so that a loss at the very end of a run is
  // reported (on the marker). One writer at a time, on the drained and swept
  // ring with nobody draining concurrently: its claims succeed at once and
  // nothing scrapes it, so it cannot be lost, whatever the scheduling.
  std::vector<uint32_t> written(kWriters, 0);
  for (uint32_t w = 0; w < kWriters; ++w) {
    const uint32_t seq = kPackets;
    test::SweepRing(ring, &drainer, id);
    WritePacket(trace_writers[w].get(), ledgers[w].get(), w + 1, seq);
    FlushWriter(trace_writers[w].get(), ledgers[w].get());
    test::DrainUntilEmpty(&drainer, id);
    EXPECT_EQ(ledgers[w]->lost().count(seq), 0u) << "writer " << w;
    written[w] = seq + 1;
    EXPECT_EQ(ledgers[w]->at_risk(), 0u);
    EXPECT_FALSE(ledgers[w]->packet_open());
  }
  EXPECT_EQ(drainer.ring_stats(id).reader.protocol_errors, 0u);
  EXPECT_EQ(tb->stats().abi_violations, 0u);
  EXPECT_EQ(tb->stats().chunks_discarded, 0u);

  std::vector<uint32_t> next(kWriters, 0);
  std::vector<uint32_t> delivered(kWriters, 0);
  ReadBackAndCheck(tb.get(), ledgers, &next, &delivered);
  for (uint32_t w = 0; w < kWriters; ++w) {
    const test::LossLedger& ledger = *ledgers[w];
    EXPECT_EQ(next[w], written[w]) << w;  // The marker arrived.
    // Exact: delivered + lost == written.
    EXPECT_EQ(delivered[w] + ledger.lost().size(), written[w]) << w;
    // The writer's own accounting agrees exactly with what the service saw:
    // packets_dropped counts the packets lost while open AND the finished
    // ones lost later with a dropped relocated suffix
    // (ledger.lost_after_finish()), and the writer is quiescent here.
    const shm_ring::TraceWriterV2Stats st = trace_writers[w]->stats();
    EXPECT_EQ(st.packets_begun, written[w]) << w;
    EXPECT_EQ(st.packets_dropped, ledger.lost().size()) << w;
    EXPECT_EQ(st.packets_committed, delivered[w]) << w;
    if (ledger.lost_after_finish() != 0) {
      RT_LOG("writer %u: %llu packets lost after they were finished", w,
             static_cast<unsigned long long>(ledger.lost_after_finish()));
    }
  }
}

// A finished packet lost with a dropped relocated suffix counts in
// TraceWriterV2Stats::packets_dropped, so delivered + packets_dropped ==
// packets_begun holds exactly. Forced deterministically: the reader scrapes
// the writer's Acquired chunk at n = 0 while the packet is open and another
// writer fills the ring, so the relocation at the packet's end (its
// publication fails) finds no replacement under kDrop.
TEST(RingDrainerTraceWriterTest,
     PacketsDroppedCountsFinishedPacketsLostWithASuffix) {
  test::DrainedRing env({/*chunk_size=*/256, /*num_chunks=*/2,
                         /*start_position=*/0, 1 << 20, /*producer_id=*/1,
                         kBufferId, /*head_grace_ns=*/0});
  shm_ring::TestRing& ring = env.ring;
  RingDrainer& drainer = env.drainer;
  const RingId id = env.id;
  TraceWriterV2::Options o;
  o.writer_id = 1;
  o.target_buffer = kBufferId;
  o.policy = shm_ring::BufferExhaustedPolicy::kDrop;
  std::unique_ptr<TraceWriterV2> writer_owned =
      shm_ring::TraceWriterV2Owner::Create(ring.view(), o);
  TraceWriterV2& writer = *writer_owned;
  // Another writer's position: created before the scrape so it is ready.
  test::FakeWriter other(ring.view(), 2, kBufferId);
  {
    auto packet = writer.NewTracePacket();  // Position 0, chunk 0.
    rt::TracePacket tp(packet);
    tp.set_timestamp(1);
    // Open, unpublished: Acquired(1, 0). Scrape, n = 0.
    ASSERT_EQ(drainer.DrainRing(id).positions_resolved, 1u);
    // The other writer takes position 1; position 2 (chunk 0, pinned)
    // burns.
    other.ReserveAndClaim();
    uint32_t pos = 0;
    ASSERT_TRUE(other.Reserve(&pos));
    ASSERT_FALSE(other.Claim(pos));
  }  // The packet ends: its publication finds the scrape; relocation is
     // acknowledged, finds no room, and drops the finished packet.
  const shm_ring::TraceWriterV2Stats st = writer.stats();
  ASSERT_GT(st.bytes_dropped, 0u);
  EXPECT_EQ(st.packets_begun, 1u);
  EXPECT_EQ(st.packets_dropped, 1u);
  EXPECT_EQ(st.packets_committed, 0u);
}

TEST(RingDrainerTraceWriterTest, ProtobufPacketsSurviveThePipeline) {
  RunPipeline({"eager", 512, 8, 0, 0});
}

TEST(RingDrainerTraceWriterTest, WithHeadGraceAcrossTheRollover) {
  RunPipeline({"grace, rollover", 1024, 16, 0xffff'fff0u, 500'000});
}

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
