/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceWriterV2 throughput, chunk turnover included (see bench_ring.h for how
// the benchmark plays the reader). One packet per iteration: time per
// iteration is ns/packet; bytes/s counts the encoded packet bytes.

#include <benchmark/benchmark.h>

#include "ringtrace/trace_writer_v2.h"
#include "src/tracing/core/shm_ring/bench_ring.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"

namespace ringtrace {
namespace shm_ring {
namespace {

using encoding::Message;

// timestamp + nested track_event { name, type }, 4 KiB chunks.
void BM_TraceWriterV2_TrackEventLike(benchmark::State& state) {
  BenchRing ring(4096, kBenchRingBytes);
  std::unique_ptr<TraceWriterV2> writer_owned =
      TraceWriterV2Owner::Create(ring.region->view(), ring.options());
  TraceWriterV2& writer = *writer_owned;
  uint64_t ts = 1000000;
  for (auto _ : state) {
    auto packet = writer.NewTracePacket();
    packet->AppendVarInt(8, ts++);                 // TracePacket.timestamp
    Message* ev = packet->BeginNestedMessage(11);  // track_event
    ev->AppendString(23, "my_event_name");         // name
    ev->AppendVarInt(9, 3);                        // type = INSTANT
  }
  writer.Flush();
  const TraceWriterV2Stats s = writer.stats();
  if (s.packets_dropped != 0)
    state.SkipWithError("unexpected loss");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(s.bytes_written));
  state.counters["bytes_per_packet"] = static_cast<double>(s.bytes_written) /
                                       static_cast<double>(state.iterations());
}
BENCHMARK(BM_TraceWriterV2_TrackEventLike);

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
