/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_demo/demo.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "src/base/logging.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/core/shm_ring/trace_writer_v2.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_export/proto_wire.h"
#include "src/tracing/service/trace_export/trace_file_writer.h"
#include "src/tracing/service/traced/trace_buffer_v2_sink.h"

namespace ringtrace {
namespace demo {

namespace {

using shm_ring::Message;
using shm_ring::TraceWriterV2;
using trace_buffer::TraceBufferV2;

// The one buffer of the demo's trace config (TraceConfig.buffers[0]); the
// chunks' target BufferID.
constexpr trace_buffer::BufferID kBufferId = 0;
constexpr trace_buffer::ProducerID kProducerId = 1;
// Drain tick while nobody asks for room.
constexpr int kDrainTickMs = 1;

// TrackEvent.Type
constexpr uint32_t kSliceBegin = 1;
constexpr uint32_t kSliceEnd = 2;
constexpr uint32_t kCounter = 4;

uint64_t BootTimeNs() {
  struct timespec ts = {};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

// Asks the drain thread for a pass when a writer could not get a chunk.
class DrainRequester : public shm_ring::RingWriterDelegate {
 public:
  void OnDrainRequested() override {
    // relaxed: a hint; the drain thread also runs on its tick, and the ring
    // words carry the real synchronization. Pairs with the exchange in
    // WaitForRequest().
    requested_.store(true, std::memory_order_relaxed);
    cv_.notify_one();
  }

  // Waits for a request or |ms|, whichever comes first.
  void WaitForRequest(int ms) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] {
      // relaxed: see OnDrainRequested().
      return requested_.exchange(false, std::memory_order_relaxed);
    });
  }

  void Wake() { cv_.notify_one(); }

 private:
  std::atomic<bool> requested_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
};

// One producer thread's writing.
class Producer {
 public:
  Producer(const shm_ring::RingView& view,
           const DemoConfig& config,
           uint32_t index,
           int32_t pid,
           shm_ring::RingWriterDelegate* delegate,
           DemoThreadResult* result)
      : config_(config), index_(index), pid_(pid), result_(result) {
    TraceWriterV2::Options options;
    options.writer_id = static_cast<shm_ring::WriterID>(index + 1);
    options.target_buffer = kBufferId;
    options.policy = config.writer_policy;
    options.stall_timeout_ms = config.stall_timeout_ms;
    options.delegate = delegate;
    writer_.reset(new TraceWriterV2(view, options));
    result_->writer_id = options.writer_id;
  }

  void Run(std::chrono::steady_clock::time_point deadline) {
    result_->tid = static_cast<int64_t>(syscall(SYS_gettid));
    const std::string thread_name = "worker-" + std::to_string(index_);
    for (uint64_t it = 0;; ++it) {
      if (config_.iterations_per_thread > 0) {
        if (it >= config_.iterations_per_thread)
          break;
      } else if (std::chrono::steady_clock::now() >= deadline) {
        break;
      }
      if (it % kDescriptorPeriod == 0)
        WriteDescriptors(thread_name, it == 0);
      const uint64_t thread_track = ThreadTrackUuid(pid_, index_);
      SliceEvent(kSliceBegin, thread_track, "frame", "demo", nullptr);
      SliceEvent(kSliceBegin, thread_track, it % 2 ? "step_b" : "step_a",
                 "demo", "detail");
      Work();
      SliceEvent(kSliceEnd, thread_track, nullptr, nullptr, nullptr);
      SliceEvent(kSliceEnd, thread_track, nullptr, nullptr, nullptr);
      CounterEvent(static_cast<int64_t>((it * 37 + index_ * 11) % 100));
      result_->iterations++;
      if (config_.interval_us > 0)
        std::this_thread::sleep_for(
            std::chrono::microseconds(config_.interval_us));
    }
    writer_->Flush();
    const shm_ring::TraceWriterV2Stats s = writer_->stats();
    result_->packets_dropped = s.packets_dropped;
    result_->relocations = s.relocations;
    result_->suffixes_dropped = writer_->ring_writer().stats().suffixes_dropped;
    result_->dropped_suffix_bytes =
        writer_->ring_writer().stats().dropped_suffix_bytes;
    bytes_written_ = s.bytes_written;
    writer_.reset();  // flushes again (nothing left) and releases the ring
  }

  uint64_t bytes_written() const { return bytes_written_; }

 private:
  TraceWriterV2::TracePacketHandle NewPacket() {
    result_->packets_started++;
    return writer_->NewTracePacket();
  }

  void WriteDescriptors(const std::string& thread_name, bool first) {
    const uint64_t ts = BootTimeNs();
    if (index_ == 0) {
      auto packet = NewPacket();
      packet->AppendVarInt(8, ts);
      if (first)
        packet->AppendVarInt(13, 1);  // SEQ_INCREMENTAL_STATE_CLEARED
      Message* td = packet->BeginNestedMessage(60);  // track_descriptor
      td->AppendVarInt(1, ProcessTrackUuid(pid_));
      Message* process = td->BeginNestedMessage(3);
      process->AppendVarInt(1, pid_);
      process->AppendString(6, "ringtrace_demo");
      first = false;
    }
    {
      auto packet = NewPacket();
      packet->AppendVarInt(8, ts);
      if (first)
        packet->AppendVarInt(13, 1);
      Message* td = packet->BeginNestedMessage(60);
      td->AppendVarInt(1, ThreadTrackUuid(pid_, index_));
      td->AppendVarInt(5, ProcessTrackUuid(pid_));  // parent_uuid
      Message* thread = td->BeginNestedMessage(4);
      thread->AppendVarInt(1, pid_);
      thread->AppendVarInt(2, result_->tid);
      thread->AppendString(5, thread_name);
    }
    {
      auto packet = NewPacket();
      packet->AppendVarInt(8, ts);
      Message* td = packet->BeginNestedMessage(60);
      td->AppendVarInt(1, CounterTrackUuid(pid_, index_));
      td->AppendVarInt(5, ProcessTrackUuid(pid_));
      td->AppendString(2, thread_name + " queue depth");
      Message* counter = td->BeginNestedMessage(8);
      counter->AppendVarInt(3, 2);  // UNIT_COUNT
    }
  }

  // |cat2| is a second category, or null.
  void SliceEvent(uint32_t type,
                  uint64_t track,
                  const char* name,
                  const char* cat,
                  const char* cat2) {
    auto packet = NewPacket();
    packet->AppendVarInt(8, BootTimeNs());
    Message* ev = packet->BeginNestedMessage(11);  // track_event
    ev->AppendVarInt(9, type);
    ev->AppendVarInt(11, track);
    if (cat)
      ev->AppendString(22, cat);
    if (cat2)
      ev->AppendString(22, cat2);
    if (name)
      ev->AppendString(23, name);
    AppendEventSeq(ev);
  }

  void CounterEvent(int64_t value) {
    auto packet = NewPacket();
    packet->AppendVarInt(8, BootTimeNs());
    Message* ev = packet->BeginNestedMessage(11);
    ev->AppendVarInt(9, kCounter);
    ev->AppendVarInt(11, CounterTrackUuid(pid_, index_));
    ev->AppendVarInt(30, value);  // counter_value
    AppendEventSeq(ev);
  }

  void AppendEventSeq(Message* ev) {
    Message* annotation = ev->BeginNestedMessage(4);  // debug_annotations
    annotation->AppendString(10, kEventSeqAnnotation);
    annotation->AppendVarInt(4, result_->events_started++);  // int_value
  }

  void Work() {
    volatile uint64_t x = index_;
    for (uint32_t i = 0; i < config_.work_per_step; ++i)
      x = x * 2862933555777941757ull + 3037000493ull;
  }

  const DemoConfig& config_;
  const uint32_t index_;
  const int32_t pid_;
  DemoThreadResult* const result_;
  std::unique_ptr<TraceWriterV2> writer_;
  uint64_t bytes_written_ = 0;
};

std::string MakeTraceConfig(const DemoConfig& config) {
  using trace_export::ProtoBuilder;
  std::string buffer;
  ProtoBuilder(&buffer).AppendVarInt(1, config.buffer_kb);  // size_kb
  ProtoBuilder(&buffer).AppendVarInt(
      4,
      config.fill_policy == TraceBufferV2::OverwritePolicy::kOverwrite ? 1 : 2);
  std::string ds_config;
  ProtoBuilder(&ds_config).AppendString(1, "track_event");  // name
  ProtoBuilder(&ds_config).AppendVarInt(2, kBufferId);      // target_buffer
  std::string data_source;
  ProtoBuilder(&data_source).AppendMessage(1, ds_config);
  std::string out;
  ProtoBuilder b(&out);
  b.AppendMessage(1, buffer);       // buffers
  b.AppendMessage(2, data_source);  // data_sources
  if (config.iterations_per_thread == 0)
    b.AppendVarInt(3, config.duration_ms);
  return out;
}

base::Status ValidateConfig(const DemoConfig& c, shm_ring::RingGeometry* g) {
  if (c.threads == 0 || c.threads > 1024)
    return base::ErrStatus("--threads must be in [1, 1024]");
  if (c.chunk_size == 0 || c.ring_kb == 0 ||
      (uint64_t{c.ring_kb} * 1024) % c.chunk_size != 0) {
    return base::ErrStatus(
        "--ring_kb * 1024 must be a multiple of --chunk_size");
  }
  *g = shm_ring::RingGeometry(
      c.chunk_size,
      static_cast<uint32_t>(uint64_t{c.ring_kb} * 1024 / c.chunk_size));
  if (!g->IsValid()) {
    return base::ErrStatus(
        "invalid ring: chunk_size %u (power of two in [256, 32768]) x %u "
        "chunks (power of two >= 2)",
        g->chunk_size, g->num_chunks);
  }
  if (c.buffer_kb == 0)
    return base::ErrStatus("--buffer_kb must be > 0");
  return base::OkStatus();
}

// Creates the parent directory of |path| if it is missing (one level).
void MakeParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0)
    return;
  mkdir(path.substr(0, slash).c_str(), 0755);  // EEXIST is fine
}

}  // namespace

uint64_t ProcessTrackUuid(int32_t pid) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 20) | 0xfffff;
}
uint64_t ThreadTrackUuid(int32_t pid, uint32_t thread) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 20) |
         (thread << 1);
}
uint64_t CounterTrackUuid(int32_t pid, uint32_t thread) {
  return ThreadTrackUuid(pid, thread) | 1;
}

base::Status RunDemo(const DemoConfig& config, DemoResult* result) {
  *result = DemoResult();
  shm_ring::RingGeometry geometry;
  base::Status status = ValidateConfig(config, &geometry);
  if (!status.ok())
    return status;

  std::unique_ptr<shm_ring::SharedRingRegion> region =
      shm_ring::SharedRingRegion::CreateMemfd(geometry, &status);
  if (!region)
    return status;
  std::unique_ptr<TraceBufferV2> buffer = TraceBufferV2::Create(
      size_t{config.buffer_kb} * 1024, config.fill_policy);
  if (!buffer)
    return base::ErrStatus("cannot create a %u KiB trace buffer",
                           config.buffer_kb);
  MakeParentDir(config.out_path);
  const int fd = open(config.out_path.c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return base::ErrStatus("cannot open %s: %s", config.out_path.c_str(),
                           strerror(errno));
  }

  const int32_t pid = static_cast<int32_t>(getpid());
  result->pid = static_cast<uint32_t>(pid);
  uint64_t overwritten = 0;  // drain thread only, read after join
  buffer->set_overwrite_observer(
      [&overwritten](const trace_buffer::PacketSequenceProperties&,
                     const trace_buffer::TracePacket&) { ++overwritten; });

  // The service side of the ring.
  traced::TraceBufferV2Sink sink(buffer.get());
  ring_drainer::RingDrainerOptions drainer_options;
  drainer_options.head_grace_ns = uint64_t{config.head_grace_ms} * 1000000;
  ring_drainer::RingDrainer drainer(drainer_options);
  ring_drainer::RingConfig ring_config;
  ring_config.view = region->view();
  ring_config.producer_id = kProducerId;
  ring_config.identity.uid = static_cast<int32_t>(getuid());
  ring_config.identity.pid = pid;
  ring_config.allowed_buffers = {{kBufferId, &sink}};
  const ring_drainer::RingId ring_id = drainer.AddRing(ring_config);

  DrainRequester requester;
  result->threads.resize(config.threads);
  std::vector<std::unique_ptr<Producer>> producers;
  for (uint32_t t = 0; t < config.threads; ++t) {
    producers.emplace_back(new Producer(region->view(), config, t, pid,
                                        &requester, &result->threads[t]));
  }

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(config.duration_ms);
  std::atomic<bool> stop{false};
  std::thread drain_thread([&] {
    // acquire; pairs with the release store after the producers joined.
    while (!stop.load(std::memory_order_acquire)) {
      if (drainer.DrainAll().more)
        continue;
      requester.WaitForRequest(kDrainTickMs);
    }
  });
  std::vector<std::thread> threads;
  for (auto& p : producers)
    threads.emplace_back([&p, deadline] { p->Run(deadline); });
  for (std::thread& t : threads)
    t.join();
  // release; pairs with the drain thread's acquire load of |stop|.
  stop.store(true, std::memory_order_release);
  requester.Wake();
  drain_thread.join();

  // Every writer is gone: resolve every position left (bounded: each pass
  // resolves at least one position while any is left, and there are at most
  // num_chunks).
  for (uint32_t i = 0; i <= geometry.num_chunks + 1; ++i) {
    const ring_drainer::PassResult r =
        drainer.DrainAll(ring_drainer::DrainMode::kFlush);
    if (r.positions_resolved == 0 && !r.more)
      break;
  }
  result->elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  // Export.
  trace_export::TraceFileWriter file_writer(fd);
  trace_export::TraceExporter exporter(&file_writer);
  const std::string trace_config = MakeTraceConfig(config);
  exporter.WriteTraceConfig(trace_config.data(), trace_config.size());
  exporter.WriteClockSnapshot();
  exporter.ExportBuffer(buffer.get());
  const ring_drainer::RingStats ring_stats = drainer.ring_stats(ring_id);
  trace_export::TraceExporter::ServiceStats service_stats;
  service_stats.producers_connected = 1;
  service_stats.producers_seen = 1;
  service_stats.chunks_discarded =
      ring_stats.chunks_unroutable + ring_stats.chunks_rejected_by_sink;
  exporter.WriteTraceStats({buffer.get()}, service_stats);
  exporter.WriteClockSnapshot();
  status = exporter.Finish();
  struct stat st = {};
  if (fstat(fd, &st) == 0)
    result->file_size = static_cast<uint64_t>(st.st_size);
  close(fd);
  if (!status.ok())
    return status;

  // Accounting.
  for (size_t t = 0; t < producers.size(); ++t) {
    const DemoThreadResult& tr = result->threads[t];
    result->packets_written += tr.packets_started;
    result->lost_dropped_by_writers += tr.packets_dropped;
    result->bytes_written_by_writers += producers[t]->bytes_written();
    result->relocations += tr.relocations;
    result->suffixes_dropped += tr.suffixes_dropped;
    result->dropped_suffix_bytes += tr.dropped_suffix_bytes;
  }
  result->export_stats = exporter.stats();
  result->buffer_stats = buffer->stats();
  result->packets_delivered = exporter.stats().packets_exported;
  result->packets_lost = result->packets_written - result->packets_delivered;
  result->lost_overwritten = overwritten;
  result->lost_invalid = exporter.stats().invalid_packets;
  const uint64_t known = result->lost_dropped_by_writers +
                         result->lost_overwritten + result->lost_invalid;
  result->lost_other =
      result->packets_lost > known ? result->packets_lost - known : 0;
  result->drainer_chunks = ring_stats.reader.chunks_emitted;
  result->drainer_scrapes = ring_stats.reader.scrapes;
  result->drainer_holes = ring_stats.reader.holes;
  result->drainer_protocol_errors = ring_stats.reader.protocol_errors;
  return base::OkStatus();
}

std::string FormatSummary(const DemoConfig& config, const DemoResult& r) {
  char line[512];
  std::string out;
  auto add = [&out, &line](int n) {
    if (n > 0)
      out.append(line, std::min(static_cast<size_t>(n), sizeof(line) - 1));
  };
  add(snprintf(line, sizeof(line),
               "ringtrace_demo: %u threads, %.2f s, ring %u x %u B, buffer "
               "%u KiB (%s)\n",
               config.threads, r.elapsed_s,
               config.ring_kb * 1024 / config.chunk_size, config.chunk_size,
               config.buffer_kb,
               config.fill_policy == TraceBufferV2::OverwritePolicy::kOverwrite
                   ? "RING_BUFFER"
                   : "DISCARD"));
  add(snprintf(line, sizeof(line),
               "  packets written   %llu (%llu bytes into the ring)\n",
               static_cast<unsigned long long>(r.packets_written),
               static_cast<unsigned long long>(r.bytes_written_by_writers)));
  add(snprintf(line, sizeof(line), "  packets delivered %llu\n",
               static_cast<unsigned long long>(r.packets_delivered)));
  add(snprintf(line, sizeof(line),
               "  packets lost      %llu: dropped by writers %llu, "
               "overwritten in the buffer %llu, invalid %llu, other "
               "(discarded chunks, broken reassembly) %llu\n",
               static_cast<unsigned long long>(r.packets_lost),
               static_cast<unsigned long long>(r.lost_dropped_by_writers),
               static_cast<unsigned long long>(r.lost_overwritten),
               static_cast<unsigned long long>(r.lost_invalid),
               static_cast<unsigned long long>(r.lost_other)));
  std::string reasons;
  for (size_t b = 1; b < trace_export::kNumDataLossReasons; ++b) {
    const uint64_t n = r.export_stats.loss_reason_packets[b];
    if (n == 0)
      continue;
    reasons += std::string(reasons.empty() ? "" : ", ") +
               trace_export::DataLossReasonName(b) + " " + std::to_string(n);
  }
  add(snprintf(
      line, sizeof(line),
      "  loss reported in the trace: %llu packets with "
      "previous_packet_dropped%s%s\n",
      static_cast<unsigned long long>(r.export_stats.packets_with_loss),
      reasons.empty() ? "" : ": ", reasons.c_str()));
  add(snprintf(
      line, sizeof(line),
      "  drainer: %llu chunks, %llu scrapes, %llu holes, %llu "
      "protocol errors; buffer: %llu chunks overwritten, %llu "
      "discarded\n",
      static_cast<unsigned long long>(r.drainer_chunks),
      static_cast<unsigned long long>(r.drainer_scrapes),
      static_cast<unsigned long long>(r.drainer_holes),
      static_cast<unsigned long long>(r.drainer_protocol_errors),
      static_cast<unsigned long long>(r.buffer_stats.chunks_overwritten),
      static_cast<unsigned long long>(r.buffer_stats.chunks_discarded)));
  add(snprintf(line, sizeof(line),
               "  writers: %llu relocations, %llu relocated suffixes dropped "
               "(%llu bytes)\n",
               static_cast<unsigned long long>(r.relocations),
               static_cast<unsigned long long>(r.suffixes_dropped),
               static_cast<unsigned long long>(r.dropped_suffix_bytes)));
  add(snprintf(line, sizeof(line), "  trace file        %s (%llu bytes)\n",
               config.out_path.c_str(),
               static_cast<unsigned long long>(r.file_size)));
  return out;
}

}  // namespace demo
}  // namespace ringtrace
