/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. ringtrace_exact_loss_app: an app whose threads write TrackEvent
// counters through writers it owns (ScopedThreadWriter), so that it knows
// every packet it wrote, the TrackEvent SDK's own included (the clear
// packets with the sequence defaults, the process, thread and counter
// track descriptors, written again after every loss and every
// incremental-state clear), and prints its writers' own statistics. The
// exact-accounting end-to-end tests check a trace against them:
// written = in the trace + reported lost.
//
//   --socket PATH     the producer socket (required)
//   --mode M          session (default): register the "track_event" data
//                     source and write into the buffer of the first
//                     instance started; single: write at once into the
//                     ring's default buffer (ringtraced --out)
//   --threads T       writing threads (default 4, at most 16)
//   --count N         events per thread (default 100000)
//   --policy P        drop (default) | stall | stall_then_drop
//   --ring-kb K       the ring size asked of the service (0: its default)
//
// Each thread writes its N events as fast as it can, then flushes and
// destroys its writer and records the writer's TraceWriterV2Stats. Then the
// app prints
//   WRITER <k> <begun> <committed> <dropped>    (one per thread)
//   STATS <begun> <committed> <dropped>         (their sums)
// destroys its Producer (the final loss report goes to the service, which
// drains the ring one last time), prints CLOSED and exits 0. A stop of the
// instance before the end makes the threads stop early (their counts stay
// exact).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ringtrace/producer.h"
#include "ringtrace/trace_writer_v2.h"
#include "ringtrace/track_event.h"

RT_DEFINE_CATEGORIES("exact");

namespace ringtrace {
namespace test {
namespace {

constexpr uint32_t kMaxThreads = 16;

struct AppConfig {
  std::string socket;
  std::string mode = "session";
  uint32_t threads = 4;
  uint64_t count = 100000;
  std::string policy = "drop";
  uint32_t ring_kb = 0;
};

bool ParseArgs(int argc, char** argv, AppConfig* config) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--socket") {
      config->socket = value;
    } else if (flag == "--mode") {
      config->mode = value;
    } else if (flag == "--threads") {
      config->threads = static_cast<uint32_t>(strtoul(value, nullptr, 10));
    } else if (flag == "--count") {
      config->count = strtoull(value, nullptr, 10);
    } else if (flag == "--policy") {
      config->policy = value;
    } else if (flag == "--ring-kb") {
      config->ring_kb = static_cast<uint32_t>(strtoul(value, nullptr, 10));
    } else {
      fprintf(stderr, "ringtrace_exact_loss_app: unknown flag %s\n",
              flag.c_str());
      return false;
    }
  }
  return !config->socket.empty() && config->threads >= 1 &&
         config->threads <= kMaxThreads &&
         (config->mode == "session" || config->mode == "single");
}

// The "track_event" handler: the first instance's buffer is where the
// threads write; a stop makes them stop and returns once none writes.
class Handler : public DataSourceHandler {
 public:
  void OnStart(const DataSourceInstanceConfig& config) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (started_)
      return;
    started_ = true;
    instance_id_ = config.instance_id;
    target_buffer_ = config.target_buffer;
    cv_.notify_all();
  }
  void OnStop(uint32_t instance_id) override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!started_ || instance_id != instance_id_)
      return;
    // Relaxed: a pure signal; the wait below (under the mutex) is what
    // orders the threads' last packets before the return.
    stop_.store(true, std::memory_order_relaxed);
    cv_.wait(lock, [&] { return writing_ == 0; });
  }
  void OnFlush(uint32_t) override {}

  // Blocks until an instance started; its buffer.
  shm_ring::BufferID WaitStart() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return started_; });
    return target_buffer_;
  }
  // Around a thread's writing: false if the instance stopped already.
  bool BeginWriting() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_.load(std::memory_order_relaxed))
      return false;
    writing_++;
    return true;
  }
  void EndWriting() {
    std::lock_guard<std::mutex> lock(mutex_);
    writing_--;
    cv_.notify_all();
  }
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool started_ = false;                  // guarded by mutex_
  uint32_t instance_id_ = 0;              // guarded by mutex_
  shm_ring::BufferID target_buffer_ = 0;  // guarded by mutex_
  uint32_t writing_ = 0;                  // guarded by mutex_
  std::atomic<bool> stop_{false};
};

void WriteEvents(Producer* producer,
                 bool session,
                 shm_ring::BufferID target_buffer,
                 uint64_t count,
                 Handler* handler,
                 shm_ring::TraceWriterV2Stats* stats) {
  base::Status status;
  std::unique_ptr<shm_ring::TraceWriterV2> writer =
      session ? producer->NewTraceWriter(target_buffer, &status)
              : producer->NewTraceWriter(&status);
  if (!writer) {
    fprintf(stderr, "ringtrace_exact_loss_app: no writer: %s\n",
            status.message().c_str());
    return;
  }
  if (!handler->BeginWriting())
    return;
  {
    track_event::ScopedThreadWriter bind(writer.get());
    for (uint64_t i = 0; i < count; i++) {
      if (i % 256 == 0 && handler->stopped())
        break;
      RT_TRACE_COUNTER("exact", "n", static_cast<int64_t>(i));
    }
  }
  writer->Flush();
  *stats = writer->stats();
  writer.reset();
  handler->EndWriting();
}

int Main(int argc, char** argv) {
  AppConfig config;
  if (!ParseArgs(argc, argv, &config)) {
    fprintf(stderr,
            "usage: ringtrace_exact_loss_app --socket PATH [--mode M] "
            "[--threads T] [--count N] [--policy P] [--ring-kb K]\n");
    return 1;
  }
  ProducerOptions options;
  options.socket_path = config.socket;
  options.name = "exact_loss_app";
  options.requested_ring_bytes = uint64_t{config.ring_kb} * 1024;
  if (!shm_ring::ParseBufferExhaustedPolicy(config.policy,
                                            &options.buffer_exhausted_policy)) {
    fprintf(stderr, "ringtrace_exact_loss_app: bad policy %s\n",
            config.policy.c_str());
    return 1;
  }
  track_event::SetCategoriesEnabled("exact");
  Handler handler;
  base::Status status;
  std::unique_ptr<Producer> producer = Producer::Connect(options, &status);
  if (!producer) {
    fprintf(stderr, "ringtrace_exact_loss_app: %s\n", status.message().c_str());
    return 1;
  }
  const bool session = config.mode == "session";
  shm_ring::BufferID target_buffer = 0;
  if (session) {
    status = producer->RegisterDataSource("track_event", &handler);
    if (!status.ok()) {
      fprintf(stderr, "ringtrace_exact_loss_app: %s\n",
              status.message().c_str());
      return 1;
    }
    target_buffer = handler.WaitStart();
  }
  std::vector<shm_ring::TraceWriterV2Stats> stats(config.threads);
  std::vector<std::thread> threads;
  for (uint32_t k = 0; k < config.threads; k++) {
    threads.emplace_back(WriteEvents, producer.get(), session, target_buffer,
                         config.count, &handler, &stats[k]);
  }
  for (std::thread& t : threads)
    t.join();
  shm_ring::TraceWriterV2Stats total;
  for (uint32_t k = 0; k < config.threads; k++) {
    const shm_ring::TraceWriterV2Stats& s = stats[k];
    printf("WRITER %u %llu %llu %llu\n", k,
           static_cast<unsigned long long>(s.packets_begun),
           static_cast<unsigned long long>(s.packets_committed),
           static_cast<unsigned long long>(s.packets_dropped));
    total.packets_begun += s.packets_begun;
    total.packets_committed += s.packets_committed;
    total.packets_dropped += s.packets_dropped;
  }
  printf("STATS %llu %llu %llu\n",
         static_cast<unsigned long long>(total.packets_begun),
         static_cast<unsigned long long>(total.packets_committed),
         static_cast<unsigned long long>(total.packets_dropped));
  fflush(stdout);
  producer.reset();  // the final loss report; the service drains the ring
  printf("CLOSED\n");
  fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace test
}  // namespace ringtrace

int main(int argc, char** argv) {
  return ringtrace::test::Main(argc, argv);
}
