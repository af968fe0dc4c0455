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

// A streamed session's drain thread: chunks written into a 64 MiB
// RING_BUFFER buffer as a drain pass writes them, and a periodic write of
// the backlog into the file in 1 MiB slices, each after a drain pass of 64
// more chunks (docs/sessions.md, "write_into_file"). Each iteration is one
// period: a 16 MiB backlog, then slices until the exporter has caught up.
// Per packet exported: the copy into the buffer and the export. Arg:
// whether read passes start after the chunks already consumed ([TB-4] in
// trace_buffer_v2.cc); 0 is the same run's baseline, whose every pass
// walks again over the consumed chunks at the oldest end.
void BM_TraceExportStreamed(benchmark::State& state) {
  const bool functional = bench::IsBenchmarkFunctionalOnly();
  const size_t buffer_bytes = (functional ? 1 : 64) * size_t{1024} * 1024;
  const size_t backlog_chunks = functional ? 64 : 4096;
  constexpr size_t kChunksPerPass = 64;
  constexpr uint64_t kSliceBytes = 1024 * 1024;
  auto tb = TraceBufferV2::Create(buffer_bytes,
                                  TraceBufferV2::OverwritePolicy::kOverwrite);
  RT_CHECK(tb);
  tb->SetSkipConsumedPrefixForTesting(state.range(0) != 0);
  // One 4 KiB chunk of counter packets, written over and over by 8 writers
  // with consecutive ChunkIDs.
  std::vector<std::string> packets;
  std::vector<FragmentRef> frags;
  for (size_t bytes = 0; bytes < 3900; bytes += packets.back().size() + 4)
    packets.push_back(MakeCounterPacket(static_cast<uint32_t>(packets.size())));
  for (const std::string& p : packets) {
    frags.push_back(FragmentRef{reinterpret_cast<const uint8_t*>(p.data()),
                                static_cast<uint32_t>(p.size())});
  }
  uint32_t chunk_ids[8] = {};
  size_t next_writer = 0;
  auto write_chunks = [&](size_t n) {
    for (size_t i = 0; i < n; i++) {
      const uint16_t w = static_cast<uint16_t>(next_writer++ % 8);
      RT_CHECK(tb->CopyChunkFragments(1, {1000, 42}, w + 1, chunk_ids[w]++,
                                      frags.data(), frags.size(),
                                      trace_buffer::kNoTBChunkFlags));
    }
  };
  const int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  RT_CHECK(fd >= 0);
  TraceFileWriter writer(fd);
  TraceExporter exporter(&writer);
  // Fill the buffer once, exported, so that every period starts in the
  // steady state: consumed chunks at the oldest end, overwritten by the
  // new ones.
  for (size_t filled = 0; filled < buffer_bytes; filled += 4096 * 64) {
    write_chunks(64);
    exporter.ExportBuffer(tb.get());
  }
  uint64_t slices = 0;
  const uint64_t packets_before = exporter.stats().packets_exported;
  for (auto _ : state) {
    write_chunks(backlog_chunks);
    // Bounded: each slice exports at least one packet of the backlog, and
    // the writes between slices (64 chunks) are fewer than it exports.
    while (!exporter.ExportBufferSlice(tb.get(), kSliceBytes)) {
      write_chunks(kChunksPerPass);
      slices++;
    }
  }
  RT_CHECK(exporter.Finish().ok());
  close(fd);
  RT_CHECK(tb->stats().chunks_overwritten == 0);  // The export kept up.
  const uint64_t exported = exporter.stats().packets_exported - packets_before;
  state.SetItemsProcessed(static_cast<int64_t>(exported));
  state.SetBytesProcessed(static_cast<int64_t>(exported * packets[0].size()));
  state.counters["slices"] = benchmark::Counter(
      static_cast<double>(slices), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_TraceExportStreamed)
    ->ArgName("skip_consumed")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trace_export
}  // namespace ringtrace
