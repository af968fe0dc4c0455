/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/cross_process_harness.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"

#include <gtest/gtest.h>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "src/tracing/core/encoding/ungrouper.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {
namespace {
namespace pz = ::perfetto::protos::rtzero;
}  // namespace

using base::MonotonicNs;

// Body length of packet |seq|: every fourth packet is 4-12 KiB, so it spans
// two to four 4 KiB chunks; the others are 0-600 bytes.
uint32_t BodyLen(uint32_t writer, uint32_t seq) {
  if (seq % 4 == 3)
    return 4096 + (seq * 977 + writer * 131) % 8192;
  return (seq * 131 + writer * 17) % 600;
}

std::string BodyFor(uint32_t writer, uint32_t seq, uint32_t len) {
  std::string s(len, '\0');
  for (uint32_t i = 0; i < len; ++i)
    s[i] = static_cast<char>('a' + (writer * 7 + seq + i) % 26);
  return s;
}

// FNV-1a over the writer, the sequence number and the body.
uint32_t Checksum(uint32_t writer, uint32_t seq, const std::string& body) {
  uint32_t h = 2166136261u;
  auto mix = [&h](uint8_t b) { h = (h ^ b) * 16777619u; };
  for (int i = 0; i < 4; ++i)
    mix(static_cast<uint8_t>(writer >> (8 * i)));
  for (int i = 0; i < 4; ++i)
    mix(static_cast<uint8_t>(seq >> (8 * i)));
  for (char c : body)
    mix(static_cast<uint8_t>(c));
  return h;
}

// Writes packet |seq| of |writer| with a body of |len| bytes: the timestamp,
// then TestEvent { seq_value, str = body, payload { single_int = writer,
// repeated_ints = seq, nested { single_string }, single_string }, counter =
// seq << 32 | checksum }, nested messages as groups. With a |ledger| every
// call into |w| is reported to it (test/loss_ledger.h); the nested messages
// are finalized before the packet is finished, so finishing it is the only
// call that ends the packet.
void WritePacket(TraceWriterV2* w,
                 test::LossLedger* ledger,
                 uint32_t writer,
                 uint32_t seq,
                 uint32_t len) {
  const std::string body = BodyFor(writer, seq, len);
  // Without a ledger the calls simply run.
  auto step = [&](auto&& call) {
    if (ledger)
      ledger->Step(call);
    else
      call();
  };
  auto new_packet = [w] { return w->NewTracePacket(); };
  auto packet = ledger ? ledger->Open(seq, new_packet) : new_packet();
  encoding::Message* ev = nullptr;
  encoding::Message* payload = nullptr;
  encoding::Message* nested = nullptr;
  step([&] {
    packet->AppendVarInt(pz::TracePacket::kTimestampFieldNumber, 1000 + seq);
  });
  step([&] {
    ev = packet->BeginNestedMessage(pz::TracePacket::kForTestingFieldNumber);
  });
  step([&] { ev->AppendVarInt(pz::TestEvent::kSeqValueFieldNumber, seq); });
  step([&] { ev->AppendString(pz::TestEvent::kStrFieldNumber, body); });
  step([&] {
    payload = ev->BeginNestedMessage(pz::TestEvent::kPayloadFieldNumber);
  });
  step([&] {
    payload->AppendVarInt(pz::TestEvent_TestPayload::kSingleIntFieldNumber,
                          writer);
  });
  step([&] {
    payload->AppendVarInt(pz::TestEvent_TestPayload::kRepeatedIntsFieldNumber,
                          seq);
  });
  step([&] {
    nested = payload->BeginNestedMessage(
        pz::TestEvent_TestPayload::kNestedFieldNumber);
  });
  step([&] {
    nested->AppendString(pz::TestEvent_TestPayload::kSingleStringFieldNumber,
                         "deep");
  });
  step([&] {
    payload->AppendString(pz::TestEvent_TestPayload::kSingleStringFieldNumber,
                          "after-nested");
  });
  step([&] {
    ev->AppendVarInt(
        pz::TestEvent::kCounterFieldNumber,
        static_cast<uint64_t>(seq) << 32 | Checksum(writer, seq, body));
  });
  step([&] { ev->Finalize(); });
  if (ledger && ledger->packet_open())
    ledger->PacketFinished();
  packet.Finish();
  if (ledger)
    ledger->AfterCall();
}

void FlushWriter(TraceWriterV2* w, test::LossLedger* ledger) {
  w->Flush();
  if (ledger)
    ledger->AfterCall();
}

// Reads every packet of |tb| (one read pass), ungroups it, parses it with
// libprotobuf and checks that it is intact: its writer matches the
// sequence's WriterID, its checksum matches its body, and body, timestamp
// and nested messages are exactly what the writer wrote. Intact packets are
// returned per WriterID in read order; a broken one is a test failure.
std::map<WriterID, std::vector<Received>> ReadBack(TraceBufferV2* tb) {
  std::map<WriterID, std::vector<Received>> out;
  ungrouper::Ungrouper converter;
  std::vector<ungrouper::ConstBytes> slices;
  trace_buffer::TracePacket packet;
  trace_buffer::PacketSequenceProperties props;
  uint32_t loss = 0;
  tb->BeginRead();
  while (tb->ReadNextTracePacket(&packet, &props, &loss)) {
    slices.clear();
    for (const auto& s : packet.slices())
      slices.push_back({s.data, s.size});
    ungrouper::Ungrouper::SlicesResult converted;
    if (!converter.UngroupSlices(slices.data(), slices.size(), &converted)
             .ok() ||
        converted.pass_through) {
      ADD_FAILURE() << "writer " << props.writer_id << ": bad groups ("
                    << ungrouper::UngroupErrorName(converter.last_error())
                    << ")";
      continue;
    }
    perfetto::protos::TracePacket proto;
    if (!proto.ParseFromArray(converted.converted.data,
                              static_cast<int>(converted.converted.size)) ||
        !proto.has_for_testing()) {
      ADD_FAILURE() << "writer " << props.writer_id << ": unparsable packet";
      continue;
    }
    const auto& ev = proto.for_testing();
    const uint32_t writer = static_cast<uint32_t>(ev.payload().single_int());
    const uint32_t seq = ev.seq_value();
    SCOPED_TRACE(testing::Message() << "writer " << writer << " seq " << seq);
    const bool intact =
        writer == props.writer_id &&
        ev.counter() == (static_cast<uint64_t>(seq) << 32 |
                         Checksum(writer, seq, ev.str())) &&
        ev.str() ==
            BodyFor(writer, seq, static_cast<uint32_t>(ev.str().size())) &&
        proto.timestamp() == 1000u + seq &&
        ev.payload().repeated_ints_size() == 1 &&
        ev.payload().repeated_ints(0) == static_cast<int32_t>(seq) &&
        ev.payload().single_string() == "after-nested" &&
        ev.payload().nested_size() == 1 &&
        ev.payload().nested(0).single_string() == "deep";
    if (!intact) {
      ADD_FAILURE() << "damaged packet: " << proto.ShortDebugString();
      continue;
    }
    out[props.writer_id].push_back({seq, loss});
  }
  return out;
}

void PublishState(SharedResults* results, ChildState state) {
  // release; pairs with the parent's acquire load in WaitFor() or after the
  // child ended: the reports written before are visible.
  results->state.store(state, std::memory_order_release);
}

void Report(const TraceWriterV2& w, WriterReport* out) {
  out->trace = w.stats();
  out->ring = shm_ring::TraceWriterV2Owner::ring_writer(w).stats();
}

TraceWriterV2::Options WriterOptions(WriterID id, BufferExhaustedPolicy p) {
  TraceWriterV2::Options o;
  o.writer_id = id;
  o.target_buffer = kBufferId;
  o.policy = p;
  o.stall_timeout_ms = kStallTimeoutMs;
  return o;
}

// The producer's ring: a memfd mapped MAP_SHARED (the child inherits this
// mapping across fork(), as a producer process holds its own).
std::unique_ptr<shm_ring::SharedRingRegion> CreateProducerRing() {
  base::Status status;
  auto region = shm_ring::SharedRingRegion::CreateMemfd(
      RingGeometry(kChunkSize, kNumChunks), &status);
  RT_CHECK(region);
  return region;
}

// Waits until |word| holds |value| (true), or the deadline passes or, in
// the parent, |child| ends first (false). acquire; pairs with the other
// process's release store of the word (PublishState(), parent_draining).
bool WaitFor(const std::atomic<uint32_t>& word,
             uint32_t value,
             Subprocess* child) {
  const uint64_t deadline = MonotonicNs() + kDeadlineNs;
  while (word.load(std::memory_order_acquire) != value) {
    if ((child && child->Ended()) || MonotonicNs() > deadline)
      return false;
    usleep(50);
  }
  return true;
}

std::vector<uint32_t> Seqs(const std::vector<Received>& packets) {
  std::vector<uint32_t> seqs;
  for (const Received& p : packets)
    seqs.push_back(p.seq);
  return seqs;
}

std::vector<uint32_t> Iota(uint32_t n) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i)
    v[i] = i;
  return v;
}

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace
