/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Export throughput: TraceBufferV2 readback + ungrouping + trusted-field
// stamping + 64 KiB batched writes to /dev/null, in bytes of producer packets
// per second. BM_TraceExportMemcpyBaseline copies the same packets (same
// sizes, same order) into a 64 KiB staging buffer with memcpy and nothing
// else: the floor any exporter that copies once is measured against.

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/logging.h"
#include "ringtrace/proto_wire.h"
#include "src/base/test/benchmark_utils.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_export/trace_exporter.h"
#include "src/tracing/service/trace_export/trace_file_writer.h"

namespace ringtrace {
namespace trace_export {
namespace {

using encoding::EncodeVarInt;
using encoding::kMaxVarIntSize;
using encoding::kWireEndGroup;
using encoding::kWireLengthDelimited;
using encoding::kWireStartGroup;
using encoding::kWireVarInt;
using encoding::MakeTag;
using trace_buffer::FragmentRef;
using trace_buffer::TraceBufferV2;

namespace rt = perfetto::protos::rtzero;

void AppendVarInt(uint64_t v, std::string* out) {
  uint8_t buf[kMaxVarIntSize];
  uint8_t* end = EncodeVarInt(v, buf);
  out->append(reinterpret_cast<char*>(buf), static_cast<size_t>(end - buf));
}

// A TrackEvent packet as TraceWriterV2 encodes it: timestamp, then
// track_event as a group with type, track_uuid, name and a category. Built
// by hand (with the generated field numbers) because the input is the
// buffer's content, which no ring is needed to produce.
std::string MakeTrackEventPacket(uint64_t ts, uint32_t i) {
  using rt::TracePacket;
  using rt::TrackEvent;
  std::string out;
  auto raw = [&out](uint64_t v) { AppendVarInt(v, &out); };
  auto str = [&](uint32_t field, const std::string& s) {
    raw(MakeTag(field, kWireLengthDelimited));
    raw(s.size());
    out += s;
  };
  raw(MakeTag(TracePacket::kTimestampFieldNumber, kWireVarInt));
  raw(ts);
  raw(MakeTag(TracePacket::kTrackEventFieldNumber, kWireStartGroup));
  raw(MakeTag(TrackEvent::kTypeFieldNumber, kWireVarInt));
  raw(static_cast<uint64_t>(i & 1 ? TrackEvent::Type::TYPE_SLICE_END
                                  : TrackEvent::Type::TYPE_SLICE_BEGIN));
  raw(MakeTag(TrackEvent::kTrackUuidFieldNumber, kWireVarInt));
  raw(0x1234567890ull + (i % 8));
  str(TrackEvent::kNameFieldNumber, "slice_name_" + std::to_string(i % 50));
  str(TrackEvent::kCategoriesFieldNumber, i % 3 ? "renderer" : "gpu,input");
  raw(MakeTag(TracePacket::kTrackEventFieldNumber, kWireEndGroup));
  return out;
}

// A counter TrackEvent as the SDK writes it in a loop (ringtrace_loadgen's
// event): a delta timestamp, sequence flags, and track_event as a group
// with type, track_uuid and counter_value.
std::string MakeCounterPacket(uint32_t i) {
  using rt::TracePacket;
  using rt::TrackEvent;
  std::string out;
  auto raw = [&out](uint64_t v) { AppendVarInt(v, &out); };
  raw(MakeTag(TracePacket::kTimestampFieldNumber, kWireVarInt));
  raw(60 + i % 20);
  raw(MakeTag(TracePacket::kSequenceFlagsFieldNumber, kWireVarInt));
  raw(2);
  raw(MakeTag(TracePacket::kTrackEventFieldNumber, kWireStartGroup));
  raw(MakeTag(TrackEvent::kTypeFieldNumber, kWireVarInt));
  raw(static_cast<uint64_t>(TrackEvent::Type::TYPE_COUNTER));
  raw(MakeTag(TrackEvent::kTrackUuidFieldNumber, kWireVarInt));
  raw(0xfdabcdef01234567ull);
  raw(MakeTag(TrackEvent::kCounterValueFieldNumber, kWireVarInt));
  raw(200 + i % 16000);
  raw(MakeTag(TracePacket::kTrackEventFieldNumber, kWireEndGroup));
  return out;
}

// The packets a buffer is filled with.
enum class Packets { kSlices = 0, kCounters = 1 };

// A buffer of ~|size| bytes full of 4 KiB chunks of TrackEvent packets from
// 8 writers.
std::unique_ptr<TraceBufferV2> MakeFilledBuffer(
    size_t size,
    Packets kind = Packets::kSlices) {
  auto tb = TraceBufferV2::Create(size + 64 * 1024,
                                  TraceBufferV2::OverwritePolicy::kDiscard);
  RT_CHECK(tb);
  std::vector<std::string> packets;
  std::vector<FragmentRef> frags;
  uint32_t i = 0;
  uint32_t chunk_ids[8] = {};
  for (size_t filled = 0; filled + 4096 <= size; filled += 4096) {
    packets.clear();
    frags.clear();
    size_t bytes = 0;
    while (bytes < 3900) {
      packets.push_back(kind == Packets::kSlices
                            ? MakeTrackEventPacket(1000000 + i * 100ull, i)
                            : MakeCounterPacket(i));
      bytes += packets.back().size() + 4;
      ++i;
    }
    for (const std::string& p : packets) {
      frags.push_back(FragmentRef{reinterpret_cast<const uint8_t*>(p.data()),
                                  static_cast<uint32_t>(p.size())});
    }
    const uint16_t writer = static_cast<uint16_t>(i % 8);
    RT_CHECK(tb->CopyChunkFragments(
        1, {1000, 42}, writer + 1, chunk_ids[writer]++, frags.data(),
        frags.size(), trace_buffer::kNoTBChunkFlags));
  }
  return tb;
}

// The benchmark's argument in MiB: 1 stays in the caches (the CPU per
// packet), 8 does not (the memory's part too).
size_t BufferBytes(const benchmark::State& state) {
  return bench::IsBenchmarkFunctionalOnly()
             ? 128 * 1024
             : static_cast<size_t>(state.range(0)) * 1024 * 1024;
}

void BM_TraceExport(benchmark::State& state) {
  const std::unique_ptr<TraceBufferV2> source = MakeFilledBuffer(
      BufferBytes(state), static_cast<Packets>(state.range(1)));
  const int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  RT_CHECK(fd >= 0);
  uint64_t bytes = 0;
  uint64_t packets = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<TraceBufferV2> tb = source->CloneReadOnly();
    RT_CHECK(tb);
    TraceFileWriter writer(fd);
    TraceExporter exporter(&writer);
    state.ResumeTiming();
    exporter.ExportBuffer(tb.get());
    RT_CHECK(exporter.Finish().ok());
    bytes += exporter.stats().packet_bytes_exported;
    packets += exporter.stats().packets_exported;
    RT_CHECK(exporter.stats().invalid_packets == 0);
  }
  close(fd);
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(static_cast<int64_t>(packets));
}
// Args: the buffer in MiB; its packets (0: slices with names and
// categories, several shapes; 1: counters, ringtrace_loadgen's event).
BENCHMARK(BM_TraceExport)
    ->Args({1, 0})
    ->Args({8, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMicrosecond);

void BM_TraceExportMemcpyBaseline(benchmark::State& state) {
  // The same packets as the buffer returns them, laid out contiguously. (For
  // these packets the ungrouped form the exporter writes has the same size:
  // track_event's 1-byte group tags become a 1-byte tag and a 1-byte length.)
  const std::unique_ptr<TraceBufferV2> source =
      MakeFilledBuffer(BufferBytes(state));
  std::string all;
  std::vector<size_t> sizes;
  {
    std::unique_ptr<TraceBufferV2> tb = source->CloneReadOnly();
    trace_buffer::TracePacket packet;
    trace_buffer::PacketSequenceProperties props;
    uint32_t loss;
    tb->BeginRead();
    while (tb->ReadNextTracePacket(&packet, &props, &loss)) {
      const std::string raw = packet.GetRawBytesForTesting();
      all += raw;
      sizes.push_back(raw.size());
    }
  }
  std::unique_ptr<uint8_t[]> staging(new uint8_t[64 * 1024]);
  uint64_t bytes = 0;
  for (auto _ : state) {
    size_t off = 0;
    size_t used = 0;
    for (size_t n : sizes) {
      if (used + n > 64 * 1024)
        used = 0;
      memcpy(staging.get() + used, all.data() + off, n);
      used += n;
      off += n;
    }
    benchmark::DoNotOptimize(staging.get());
    benchmark::ClobberMemory();
    bytes += off;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(
      static_cast<int64_t>(sizes.size() * state.iterations()));
}
BENCHMARK(BM_TraceExportMemcpyBaseline)
    ->Arg(1)
    ->Arg(8)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trace_export
}  // namespace ringtrace
