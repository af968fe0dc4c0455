/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The generated typed writer against the hand-written Message calls, writing
// the same TrackEvent packet into the same kind of ring in the same binary
// (GoldenBytesEqualHandWrittenPath in typed_writer_unittest.cc proves the
// bytes are identical). The typed writer is meant to cost nothing: the two
// should report the same ns/packet within noise. Chunk turnover is included:
// a delegate plays the reader (state transitions only, no payload copy)
// whenever half of the ring has been published.

#include <benchmark/benchmark.h>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/trace_writer_v2.h"
#include "src/tracing/core/encoding/test/bench_writer.h"

namespace ringtrace {
namespace encoding {
namespace {

namespace rt = perfetto::protos::rtzero;

void Report(benchmark::State& state, shm_ring::TraceWriterV2* writer) {
  writer->Flush();
  const shm_ring::TraceWriterV2Stats s = writer->stats();
  if (s.packets_dropped != 0)
    state.SkipWithError("unexpected loss");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(s.bytes_written));
  state.counters["bytes_per_packet"] = static_cast<double>(s.bytes_written) /
                                       static_cast<double>(state.iterations());
}

// A slice begin with interned name and category, a track, one debug
// annotation and a flow: the packet of typed_writer_unittest.cc's golden
// test without the descriptor.
void BM_TypedWriter_TrackEvent(benchmark::State& state) {
  BenchWriter bench;
  uint64_t ts = 1000000;
  for (auto _ : state) {
    auto handle = bench.writer->NewTracePacket();
    rt::TracePacket packet(handle);
    packet.set_timestamp(ts++);
    packet.set_sequence_flags(2);
    rt::TrackEvent event = packet.set_track_event();
    event.set_type(rt::TrackEvent::Type::TYPE_SLICE_BEGIN);
    event.set_name_iid(5);
    event.add_category_iids(1);
    event.set_track_uuid(77);
    rt::DebugAnnotation annotation = event.add_debug_annotations();
    annotation.set_name("arg");
    annotation.set_int_value(-1);
    event.add_flow_ids(9);
  }
  Report(state, bench.writer.get());
}
BENCHMARK(BM_TypedWriter_TrackEvent);

// The same packet with literal field numbers (the baseline).
void BM_HandWritten_TrackEvent(benchmark::State& state) {
  BenchWriter bench;
  uint64_t ts = 1000000;
  for (auto _ : state) {
    auto packet = bench.writer->NewTracePacket();
    packet->AppendVarInt(8, ts++);
    packet->AppendVarInt(13, 2u);
    encoding::Message* event = packet->BeginNestedMessage(11);
    event->AppendVarInt(9, 1);
    event->AppendVarInt(10, 5u);
    event->AppendVarInt(3, 1u);
    event->AppendVarInt(11, 77u);
    encoding::Message* annotation = event->BeginNestedMessage(4);
    annotation->AppendString(10, "arg");
    annotation->AppendVarInt(4, int64_t{-1});
    event->AppendFixed64(47, 9u);
  }
  Report(state, bench.writer.get());
}
BENCHMARK(BM_HandWritten_TrackEvent);

}  // namespace
}  // namespace encoding
}  // namespace ringtrace
