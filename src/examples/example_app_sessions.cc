/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The sessions mode of ringtrace_example_app (example_app.h).

#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ringtrace/track_event.h"
#include "ringtrace/track_event_data_source.h"
#include "src/examples/example_app.h"
#include "src/examples/example_categories.h"

namespace ringtrace {
namespace examples {
namespace {

// What one worker did, read by the main thread after join().
struct WorkerCounts {
  uint64_t cycles = 0;
  uint64_t cycles_example = 0;
  uint64_t cycles_io = 0;
  uint64_t cycles_detail = 0;
};

// One cycle of worker |index| (example_app.h, "The sessions mode").
void WriteCycle(uint32_t index,
                uint64_t cycle,
                const std::string& queue_counter,
                const std::string& io_counter) {
  const int64_t depth = static_cast<int64_t>((cycle * 37 + index) % 100);
  // One flow per worker links its frames, each to the next.
  RT_TRACE_EVENT_BEGIN("example", "frame", "cycle", cycle,
                       ringtrace::track_event::Flow::ProcessScoped(index));
  RT_TRACE_EVENT_BEGIN("example", cycle % 2 ? "step_b" : "step_a");
  RT_TRACE_COUNTER("example", queue_counter.c_str(), depth);
  RT_TRACE_EVENT_END("example");
  RT_TRACE_EVENT_END("example");
  const int64_t bytes = static_cast<int64_t>(512 + (cycle * 97 + index) % 4096);
  {
    // On a track of the worker's reads, beside its thread's.
    RT_TRACE_EVENT("io", "read",
                   ringtrace::track_event::Track::Named("reads", index),
                   "bytes", bytes);
  }
  // A track id both copies of the app use: each process gets its own
  // track (Track ids are process-scoped, as Perfetto's).
  constexpr ringtrace::track_event::Track kRequests(0xabc123, "requests");
  RT_TRACE_INSTANT("io", "request", kRequests, "worker", index);
  RT_TRACE_COUNTER(
      "io",
      ringtrace::track_event::CounterTrack(
          io_counter.c_str(),
          ringtrace::track_event::CounterTrack::Unit::UNIT_SIZE_BYTES),
      bytes);
  // Tagged "slow": off unless a session asks for it.
  RT_TRACE_INSTANT(
      "example.detail", "checksum", "value",
      static_cast<uint64_t>(depth) * 31 + static_cast<uint64_t>(bytes));
}

// Worker |index|: names its thread and writes cycles until |*stop|. The
// TrackEvent library gives the thread its writer per session and releases
// them when the thread exits.
void RunSessionWorker(uint32_t index,
                      uint32_t interval_us,
                      const SessionExampleHooks* hooks,
                      const std::atomic<bool>* stop,
                      WorkerCounts* counts) {
  const std::string thread_name = "worker-" + std::to_string(index);
  prctl(PR_SET_NAME, thread_name.c_str(), 0, 0, 0);
  const std::string queue_counter = thread_name + " queue depth";
  const std::string io_counter = thread_name + " io bytes";
  uint32_t reported_example = 0;
  uint32_t reported_io = 0;
  uint32_t reported_detail = 0;
  // relaxed: the flag only ends the loop; join() publishes |*counts|.
  while (!stop->load(std::memory_order_relaxed)) {
    const uint32_t example = track_event::CategoryMask("example");
    const uint32_t io = track_event::CategoryMask("io");
    const uint32_t detail = track_event::CategoryMask("example.detail");
    counts->cycles_example += example != 0;
    counts->cycles_io += io != 0;
    counts->cycles_detail += detail != 0;
    WriteCycle(index, counts->cycles, queue_counter, io_counter);
    ++counts->cycles;
    if ((example != reported_example || io != reported_io ||
         detail != reported_detail) &&
        hooks->on_masks_changed) {
      hooks->on_masks_changed(index, {example, io, detail});
    }
    reported_example = example;
    reported_io = io;
    reported_detail = detail;
    if (interval_us != 0)
      usleep(interval_us);
  }
}

}  // namespace

base::Status RunSessionExample(const ExampleConfig& config,
                               const SessionExampleHooks& hooks,
                               SessionExampleResult* result) {
  *result = SessionExampleResult();
  if (config.threads == 0 || config.threads > kMaxExampleThreads)
    return base::ErrStatus("--threads must be in [1, %u]", kMaxExampleThreads);
  TracingOptions options;
  options.producer.socket_path = config.socket_path;
  options.producer.name = config.name;
  options.producer.requested_ring_bytes = config.ring_kb * 1024;
  options.producer.requested_chunk_size = config.chunk_size;
  options.producer.connect_timeout_ms = config.connect_timeout_ms;
  options.producer.buffer_exhausted_policy = config.policy;
  options.producer.stall_timeout_ms = config.stall_timeout_ms;
  Tracing tracing(options);
  base::Status status = track_event::RegisterTrackEventDataSource(&tracing);
  if (status.ok())
    status = tracing.Start();
  if (!status.ok())
    return status;
  if (tracing.WaitForConnection(
          0, static_cast<int>(config.connect_timeout_ms)) == 0) {
    return base::ErrStatus("no connection to %s within %u ms",
                           config.socket_path.c_str(),
                           config.connect_timeout_ms);
  }
  if (std::shared_ptr<Producer> producer = tracing.GetProducer())
    result->producer_id = producer->producer_id();
  if (hooks.on_connected)
    hooks.on_connected(result->producer_id);

  std::atomic<bool> stop{false};
  std::vector<WorkerCounts> counts(config.threads);
  std::vector<std::thread> workers;
  workers.reserve(config.threads);
  for (uint32_t i = 0; i < config.threads; ++i) {
    workers.emplace_back(RunSessionWorker, i, config.cycle_interval_us, &hooks,
                         &stop, &counts[i]);
  }
  if (hooks.wait_for_end)
    hooks.wait_for_end();
  stop.store(true, std::memory_order_relaxed);
  // Each worker's exit flushes and releases its writers.
  for (std::thread& t : workers)
    t.join();
  for (const WorkerCounts& c : counts) {
    result->cycles += c.cycles;
    result->cycles_example += c.cycles_example;
    result->cycles_io += c.cycles_io;
    result->cycles_detail += c.cycles_detail;
  }
  const track_event::TrackEventStats te = track_event::Stats();
  result->instance_writers_created = te.instance_writers_created;
  result->instance_writers_released = te.instance_writers_released;
  result->events_without_writer = te.events_without_writer;
  result->tracing = tracing.stats();
  uint64_t generation = 0;
  if (std::shared_ptr<Producer> producer = tracing.GetProducer(&generation)) {
    result->producer_id = producer->producer_id();
    result->producer = producer->stats();
  }
  return base::OkStatus();  // ~Tracing stops the instances still running
}

std::string FormatSessionExampleSummary(const ExampleConfig& config,
                                        const SessionExampleResult& r) {
  char buf[1024];
  snprintf(buf, sizeof(buf),
           "ringtrace_example_app %s: producer %llu on %s (sessions mode)\n"
           "  threads %u, cycles %llu: %llu while a session enabled example, "
           "%llu while one enabled io, %llu while one enabled example.detail\n"
           "  session instances started %llu, stopped %llu; per-thread writers "
           "created %llu, released %llu; events without a writer %llu\n"
           "  connections %llu, disconnects %llu; drain requests sent %llu, "
           "coalesced %llu, dropped (socket full) %llu\n",
           config.name.c_str(), static_cast<unsigned long long>(r.producer_id),
           config.socket_path.c_str(), config.threads,
           static_cast<unsigned long long>(r.cycles),
           static_cast<unsigned long long>(r.cycles_example),
           static_cast<unsigned long long>(r.cycles_io),
           static_cast<unsigned long long>(r.cycles_detail),
           static_cast<unsigned long long>(r.producer.instances_started),
           static_cast<unsigned long long>(r.producer.instances_stopped),
           static_cast<unsigned long long>(r.instance_writers_created),
           static_cast<unsigned long long>(r.instance_writers_released),
           static_cast<unsigned long long>(r.events_without_writer),
           static_cast<unsigned long long>(r.tracing.connections),
           static_cast<unsigned long long>(r.tracing.disconnects),
           static_cast<unsigned long long>(r.producer.drain_requests_sent),
           static_cast<unsigned long long>(r.producer.drain_requests_coalesced),
           static_cast<unsigned long long>(r.producer.drain_requests_dropped));
  return buf;
}

}  // namespace examples
}  // namespace ringtrace
