/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/loadgen/loadgen.h"

#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <thread>
#include <vector>

#include <pthread.h>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"

// The load generator's categories live in a namespace of their own: the
// library is linked into test binaries beside the example app's.
#define RT_TRACK_EVENT_NAMESPACE loadgen_categories
#include "ringtrace/track_event.h"
#include "src/base/time.h"
#include "src/tracing/core/encoding/wire_reader.h"

RT_DEFINE_CATEGORIES("loadgen");

namespace ringtrace {
namespace loadgen {

namespace {

using shm_ring::TraceWriterV2;

constexpr uint32_t kMaxThreads = 1024;
// The stop flag is polled once per this many events: one relaxed load per
// batch keeps it off the per-event cost.
constexpr uint32_t kEventsPerStopCheck = 64;

struct ThreadResult {
  std::string error;
  bool ok = false;
  uint64_t events = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  shm_ring::TraceWriterV2Stats stats;
};

void RunThread(Producer* producer,
               const std::string& name,
               uint32_t index,
               const std::atomic<bool>* stop,
               ThreadResult* result) {
  base::Status status;
  std::unique_ptr<TraceWriterV2> writer = producer->NewTraceWriter(&status);
  if (!writer) {
    result->error = status.message();
    return;
  }
  // The kernel's thread name is what the API writes into the descriptor.
  const std::string thread_name = "loadgen-" + std::to_string(index);
  pthread_setname_np(pthread_self(), thread_name.c_str());
  uint64_t events = 0;
  result->start_ns = base::MonotonicNs();
  {
    track_event::ScopedThreadWriter bind(writer.get());
    // The stop flag is a pure signal (no data rides on it): relaxed, paired
    // with the relaxed store in RunLoad.
    while (!stop->load(std::memory_order_relaxed)) {
      for (uint32_t i = 0; i < kEventsPerStopCheck; ++i) {
        RT_TRACE_COUNTER("loadgen", "loadgen value",
                         static_cast<int64_t>(events & 0xffff));
        ++events;
      }
    }
  }
  writer->Flush();
  result->end_ns = base::MonotonicNs();
  result->events = events;
  result->stats = writer->stats();
  result->ok = true;
}

using encoding::ContiguousReader;
using encoding::WireError;
using perfetto::protos::Trace;
using perfetto::protos::TracePacket;

// Skips the value of one field of |wire_type| whose tag was read. Groups
// are not expected in a Perfetto trace and fail.
bool SkipValue(ContiguousReader* r, uint32_t wire_type) {
  uint64_t v = 0;
  uint32_t len = 0;
  switch (wire_type) {
    case encoding::kWireVarInt:
      return r->SkipVarInt() == WireError::kNone;
    case encoding::kWireFixed64:
      return r->Skip(8) == WireError::kNone;
    case encoding::kWireLengthDelimited:
      return r->ReadVarInt(encoding::kMaxVarIntSize, &v, &len) ==
                 WireError::kNone &&
             r->Skip(v) == WireError::kNone;
    case encoding::kWireFixed32:
      return r->Skip(4) == WireError::kNone;
    default:
      return false;
  }
}

bool ReadTag(ContiguousReader* r, uint64_t* tag) {
  uint32_t len = 0;
  return r->ReadVarInt(encoding::kMaxTagSize, tag, &len) == WireError::kNone;
}

// True for a length-delimited |field| (a nested message or bytes).
constexpr bool IsMessageField(uint64_t tag, uint32_t field) {
  return tag == encoding::MakeTag(field, encoding::kWireLengthDelimited);
}

base::Status CountPacket(const uint8_t* p,
                         const uint8_t* end,
                         TraceCount* count) {
  bool track_event = false;
  bool stats = false;
  bool descriptor = false;
  bool clear = false;
  ContiguousReader r(p, static_cast<size_t>(end - p));
  while (!r.AtEnd()) {
    uint64_t tag = 0;
    if (!ReadTag(&r, &tag) || !SkipValue(&r, static_cast<uint32_t>(tag & 7)))
      return base::ErrStatus("malformed packet %llu",
                             static_cast<unsigned long long>(count->packets));
    track_event |= IsMessageField(tag, TracePacket::kTrackEventFieldNumber);
    stats |= IsMessageField(tag, TracePacket::kTraceStatsFieldNumber);
    descriptor |= IsMessageField(tag, TracePacket::kTrackDescriptorFieldNumber);
    clear |= IsMessageField(tag, TracePacket::kTracePacketDefaultsFieldNumber);
  }
  ++count->packets;
  count->track_events += track_event ? 1 : 0;
  count->track_descriptors += descriptor ? 1 : 0;
  count->clear_packets += clear ? 1 : 0;
  if (stats) {
    TracePacket packet;
    if (!packet.ParseFromArray(p, static_cast<int>(end - p)))
      return base::ErrStatus("unparsable TraceStats packet");
    const perfetto::protos::TraceStats& s = packet.trace_stats();
    ++count->trace_stats_packets;
    count->packets_dropped_by_producers =
        s.ringtrace_packets_dropped_by_producers();
    count->packets_overwritten = s.ringtrace_packets_overwritten();
    count->packets_discarded = s.ringtrace_packets_discarded();
    count->chunks_overwritten = 0;
    count->chunks_discarded = 0;
    count->bytes_overwritten = 0;
    for (const auto& b : s.buffer_stats()) {
      count->chunks_overwritten += b.chunks_overwritten();
      count->chunks_discarded += b.chunks_discarded();
      count->bytes_overwritten += b.bytes_overwritten();
    }
  }
  return base::OkStatus();
}

}  // namespace

base::Status RunLoad(const LoadConfig& config, LoadResult* result) {
  *result = LoadResult();
  if (config.threads == 0 || config.threads > kMaxThreads)
    return base::ErrStatus("--threads must be in [1, %u]", kMaxThreads);
  ProducerOptions options;
  options.socket_path = config.socket_path;
  options.name = config.name;
  options.requested_ring_bytes = config.ring_kb * 1024;
  options.requested_chunk_size = config.chunk_size;
  options.connect_timeout_ms = config.connect_timeout_ms;
  options.buffer_exhausted_policy = config.policy;
  options.stall_timeout_ms = config.stall_timeout_ms;
  base::Status status;
  std::unique_ptr<Producer> producer = Producer::Connect(options, &status);
  if (!producer)
    return status;

  std::atomic<bool> stop{false};
  track_event::SetCategoriesEnabled("loadgen");
  std::vector<ThreadResult> threads(config.threads);
  {
    std::vector<std::thread> workers;
    workers.reserve(config.threads);
    for (uint32_t i = 0; i < config.threads; ++i) {
      workers.emplace_back(RunThread, producer.get(), std::cref(config.name), i,
                           &stop, &threads[i]);
    }
    usleep(config.duration_ms * 1000u);
    stop.store(true, std::memory_order_relaxed);  // see RunThread
    for (std::thread& t : workers)
      t.join();
  }
  uint64_t first_start = UINT64_MAX;
  uint64_t last_end = 0;
  for (const ThreadResult& t : threads) {
    if (!t.ok)
      return base::ErrStatus("a thread had no writer: %s", t.error.c_str());
    result->events_emitted += t.events;
    result->packets_begun += t.stats.packets_begun;
    result->packets_committed += t.stats.packets_committed;
    result->packets_dropped += t.stats.packets_dropped;
    result->bytes_written += t.stats.bytes_written;
    first_start = std::min(first_start, t.start_ns);
    last_end = std::max(last_end, t.end_ns);
  }
  result->elapsed_ns = last_end > first_start ? last_end - first_start : 0;
  result->producer = producer->stats();
  result->connected_at_end = producer->connected();
  return base::OkStatus();  // ~Producer: the service drains one last time
}

std::string FormatLoadResult(const LoadResult& r) {
  char buf[1024];
  const double secs = static_cast<double>(r.elapsed_ns) / 1e9;
  snprintf(buf, sizeof(buf),
           "events_emitted=%llu packets_begun=%llu packets_committed=%llu "
           "packets_dropped=%llu bytes_written=%llu elapsed_s=%.3f "
           "events_per_s=%.0f drain_requests_sent=%llu "
           "drain_requests_coalesced=%llu drain_requests_dropped=%llu "
           "connected_at_end=%d\n",
           static_cast<unsigned long long>(r.events_emitted),
           static_cast<unsigned long long>(r.packets_begun),
           static_cast<unsigned long long>(r.packets_committed),
           static_cast<unsigned long long>(r.packets_dropped),
           static_cast<unsigned long long>(r.bytes_written), secs,
           secs > 0 ? static_cast<double>(r.events_emitted) / secs : 0.0,
           static_cast<unsigned long long>(r.producer.drain_requests_sent),
           static_cast<unsigned long long>(r.producer.drain_requests_coalesced),
           static_cast<unsigned long long>(r.producer.drain_requests_dropped),
           r.connected_at_end ? 1 : 0);
  return buf;
}

base::Status CountTraceBytes(const std::string& data, TraceCount* count) {
  *count = TraceCount();
  const uint8_t* const begin = reinterpret_cast<const uint8_t*>(data.data());
  ContiguousReader r(begin, data.size());
  while (!r.AtEnd()) {
    uint64_t tag = 0;
    if (!ReadTag(&r, &tag))
      return base::ErrStatus("malformed trace framing");
    if (!IsMessageField(tag, Trace::kPacketFieldNumber)) {
      if (!SkipValue(&r, static_cast<uint32_t>(tag & 7)))
        return base::ErrStatus("malformed trace framing");
      continue;
    }
    uint64_t size = 0;
    uint32_t len = 0;
    const uint64_t at = r.offset();
    if (r.ReadVarInt(encoding::kMaxVarIntSize, &size, &len) !=
            WireError::kNone ||
        r.Skip(size) != WireError::kNone)
      return base::ErrStatus("truncated packet");
    const uint8_t* const packet = begin + at + len;
    base::Status status = CountPacket(packet, packet + size, count);
    if (!status.ok())
      return status;
  }
  return base::OkStatus();
}

base::Status CountTraceFile(const std::string& path, TraceCount* count) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return base::ErrStatus("cannot open %s", path.c_str());
  std::string data((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  return CountTraceBytes(data, count);
}

std::string FormatTraceCount(const TraceCount& c) {
  char buf[640];
  snprintf(buf, sizeof(buf),
           "trace_packets=%llu track_events=%llu track_descriptors=%llu "
           "clear_packets=%llu trace_stats_packets=%llu "
           "packets_dropped_by_producers=%llu chunks_overwritten=%llu "
           "chunks_discarded=%llu bytes_overwritten=%llu "
           "packets_overwritten=%llu packets_discarded=%llu\n",
           static_cast<unsigned long long>(c.packets),
           static_cast<unsigned long long>(c.track_events),
           static_cast<unsigned long long>(c.track_descriptors),
           static_cast<unsigned long long>(c.clear_packets),
           static_cast<unsigned long long>(c.trace_stats_packets),
           static_cast<unsigned long long>(c.packets_dropped_by_producers),
           static_cast<unsigned long long>(c.chunks_overwritten),
           static_cast<unsigned long long>(c.chunks_discarded),
           static_cast<unsigned long long>(c.bytes_overwritten),
           static_cast<unsigned long long>(c.packets_overwritten),
           static_cast<unsigned long long>(c.packets_discarded));
  return buf;
}

}  // namespace loadgen
}  // namespace ringtrace
