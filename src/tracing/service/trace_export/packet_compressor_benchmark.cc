/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Deflate compression of a trace file's packets (PacketCompressor), in MB/s
// of uncompressed packet bytes, with the ratio of bytes on disk
// (compressed / uncompressed) as a counter. The input is ~8 MiB of framed
// TrackEvent packets shaped like the SDK's output as exported: slice
// begin/end pairs on 8 threads, interned names and categories (iids), a
// debug annotation on each begin, timestamps a few hundred ns apart, the
// trusted fields the exporter stamps, and the interned data and track
// descriptors a sequence starts with. BM_PacketCompressor_MemcpyBaseline
// writes the same bytes, in the same packets, uncompressed through the same
// TraceFileWriter to /dev/null: the cost of the path compression replaces.

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "ringtrace/logging.h"
#include "src/tracing/service/trace_export/packet_compressor.h"
#include "src/tracing/service/trace_export/trace_file_writer.h"

namespace ringtrace {
namespace trace_export {
namespace {

using perfetto::protos::Trace;
using perfetto::protos::TracePacket;
using perfetto::protos::TrackEvent;

constexpr size_t kInputBytes = 8 * 1024 * 1024;
constexpr uint32_t kThreads = 8;
constexpr uint32_t kNames = 40;

// Framed Trace.packet fields, one string per packet.
std::vector<std::string> MakeTrackEventTrace() {
  std::mt19937_64 rng(42);
  std::vector<std::string> packets;
  size_t total = 0;
  auto add = [&](const TracePacket& p) {
    Trace t;
    *t.add_packet() = p;
    packets.push_back(t.SerializeAsString());
    total += packets.back().size();
  };
  uint64_t ts[kThreads];
  for (uint32_t t = 0; t < kThreads; t++) {
    ts[t] = 1'000'000'000ull + t * 137;
    TracePacket d;
    d.set_timestamp(ts[t]);
    d.mutable_track_descriptor()->set_uuid(0xabc000 + t);
    d.mutable_track_descriptor()->mutable_thread()->set_pid(4242);
    d.mutable_track_descriptor()->mutable_thread()->set_tid(4242 + t);
    d.mutable_track_descriptor()->mutable_thread()->set_thread_name(
        "worker-" + std::to_string(t));
    d.set_sequence_flags(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    for (uint32_t n = 0; n < kNames; n++) {
      auto* name = d.mutable_interned_data()->add_event_names();
      name->set_iid(n + 1);
      name->set_name("Frame::Step" + std::to_string(n));
    }
    d.set_trusted_uid(1000);
    d.set_trusted_pid(4242);
    d.set_trusted_packet_sequence_id(2 + t);
    add(d);
  }
  for (uint64_t i = 0; total < kInputBytes; i++) {
    const uint32_t t = static_cast<uint32_t>(rng() % kThreads);
    const uint32_t name = static_cast<uint32_t>(rng() % kNames);
    for (int end = 0; end < 2; end++) {
      ts[t] += 150 + rng() % 600;
      TracePacket p;
      p.set_timestamp(ts[t]);
      TrackEvent* e = p.mutable_track_event();
      e->set_type(end ? TrackEvent::TYPE_SLICE_END
                      : TrackEvent::TYPE_SLICE_BEGIN);
      e->set_track_uuid(0xabc000 + t);
      if (!end) {
        e->set_name_iid(name + 1);
        e->add_category_iids(1 + name % 4);
        auto* arg = e->add_debug_annotations();
        arg->set_name_iid(1);
        arg->set_int_value(static_cast<int64_t>(rng() % 100000));
      }
      p.set_sequence_flags(TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
      p.set_trusted_uid(1000);
      p.set_trusted_pid(4242);
      p.set_trusted_packet_sequence_id(2 + t);
      add(p);
    }
  }
  return packets;
}

const std::vector<std::string>& Packets() {
  static const std::vector<std::string>* const packets =
      new std::vector<std::string>(MakeTrackEventTrace());
  return *packets;
}

size_t TotalBytes() {
  size_t n = 0;
  for (const std::string& p : Packets())
    n += p.size();
  return n;
}

int OpenDevNull() {
  const int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  RT_CHECK(fd >= 0);
  return fd;
}

// Arg: the zlib level.
void BM_PacketCompressor_Deflate(benchmark::State& state) {
  const std::vector<std::string>& packets = Packets();
  const int fd = OpenDevNull();
  uint64_t in = 0;
  uint64_t out = 0;
  uint64_t cpu_ns = 0;
  for (auto _ : state) {
    TraceFileWriter writer(fd);
    PacketCompressor::Options options;
    options.level = static_cast<int>(state.range(0));
    PacketCompressor compressor(&writer, options);
    for (const std::string& p : packets) {
      compressor.Append(p.data(), p.size());
      compressor.EndPacket();
    }
    RT_CHECK(compressor.Flush().ok());
    RT_CHECK(writer.Flush().ok());
    in += compressor.stats().input_bytes;
    out += compressor.stats().output_bytes;
    cpu_ns += compressor.stats().cpu_ns;
  }
  close(fd);
  state.SetBytesProcessed(static_cast<int64_t>(in));
  state.counters["ratio"] =
      in ? static_cast<double>(out) / static_cast<double>(in) : 0;
  state.counters["zlib_cpu_ns_per_KiB"] =
      in ? static_cast<double>(cpu_ns) * 1024 / static_cast<double>(in) : 0;
}
BENCHMARK(BM_PacketCompressor_Deflate)
    ->Arg(1)
    ->Arg(6)
    ->Arg(9)
    ->Unit(benchmark::kMillisecond);

void BM_PacketCompressor_MemcpyBaseline(benchmark::State& state) {
  const std::vector<std::string>& packets = Packets();
  const int fd = OpenDevNull();
  uint64_t in = 0;
  for (auto _ : state) {
    TraceFileWriter writer(fd);
    for (const std::string& p : packets)
      writer.Append(p.data(), p.size());
    RT_CHECK(writer.Flush().ok());
    in += writer.stats().bytes_written;
  }
  close(fd);
  state.SetBytesProcessed(static_cast<int64_t>(in));
  state.counters["ratio"] = 1.0;
  state.counters["packets"] = static_cast<double>(packets.size());
  state.counters["bytes_per_packet"] =
      static_cast<double>(TotalBytes()) / static_cast<double>(packets.size());
}
BENCHMARK(BM_PacketCompressor_MemcpyBaseline)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trace_export
}  // namespace ringtrace
