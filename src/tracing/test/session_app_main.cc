/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. ringtrace_session_app: an app on ringtrace::Tracing with the
// "track_event" data source whose threads write numbered counter events, and
// which prints on stdout exactly which numbers each data-source instance
// must hold, so that the session end-to-end tests can check a trace packet
// by packet.
//
//   --socket PATH     the producer socket (required)
//   --threads T       writing threads (default 2, at most 16)
//   --policy P        drop | stall | stall_then_drop (default stall)
//   --pause-us U      sleep between bursts of 16 events (default 200)
//   --count N         0 (default): write until SIGTERM. N > 0: each thread
//                     waits for the first instance to start, writes events
//                     0..N-1, then the app prints DONE
//   --rate R          with --count: R events per second per thread, paced
//                     in bursts of 16 (0, the default: as fast as it can)
//
// Thread k's event number n is the counter value (k << 32) | n of an
// RT_TRACE_COUNTER("e2e", "seq", ...): one packet per event, one packet
// sequence per thread and instance. Each thread writes its events under its
// own mutex and counts them in |next| (the number of the next event). The
// handler reads |next| under that mutex around the real data source's
// OnStart/OnStop, which yields exact bounds (the mutex orders the handler's
// reads with the events; the instance's mask store happens before any event
// that takes the mutex after the handler released it):
//
//   START <gen> <instance> <buffer> <before>,<first> ...   (one per thread)
//       events n < before began before the instance existed: not in it;
//       events n >= first began after it started: in it (until its stop).
//   STOP <gen> <instance> <last>,<after> ...
//       events n < last ended before the stop began: in it;
//       events n >= after began after OnStop returned: not in it.
//   MARK <seq> <next> ...   on SIGUSR1: events n < next have ended.
//   CONNECTED <gen>         each new connection to the service.
//   DONE <next> ...         (--count) every thread wrote its N events.
//   TOTAL <next> ...        at SIGTERM, after the threads stopped.
// The app exits 0 after TOTAL; a stopped service never ends it.
//
// The periodic clears of incremental state (by time and by bytes) are off,
// so that each sequence holds exactly three packets besides its events
// (process, thread and counter track descriptors) and a test can count
// every packet the app wrote.

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ringtrace/tracing.h"
#include "ringtrace/track_event.h"
#include "ringtrace/track_event_data_source.h"

RT_DEFINE_CATEGORIES("e2e");

namespace ringtrace {
namespace test {
namespace {

constexpr uint32_t kMaxThreads = 16;
constexpr uint32_t kBurst = 16;

struct AppConfig {
  std::string socket;
  uint32_t threads = 2;
  std::string policy = "stall";
  uint32_t pause_us = 200;
  uint64_t count = 0;
  uint64_t rate = 0;
};

bool ParseArgs(int argc, char** argv, AppConfig* config) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--socket") {
      config->socket = value;
    } else if (flag == "--threads") {
      config->threads = static_cast<uint32_t>(strtoul(value, nullptr, 10));
    } else if (flag == "--policy") {
      config->policy = value;
    } else if (flag == "--pause-us") {
      config->pause_us = static_cast<uint32_t>(strtoul(value, nullptr, 10));
    } else if (flag == "--count") {
      config->count = strtoull(value, nullptr, 10);
    } else if (flag == "--rate") {
      config->rate = strtoull(value, nullptr, 10);
    } else {
      fprintf(stderr, "ringtrace_session_app: unknown flag %s\n", flag.c_str());
      return false;
    }
  }
  return !config->socket.empty() && config->threads >= 1 &&
         config->threads <= kMaxThreads;
}

std::mutex g_print_mutex;

void PrintLine(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_print_mutex);
  fputs(line.c_str(), stdout);
  fputc('\n', stdout);
  fflush(stdout);
}

struct ThreadState {
  std::mutex mutex;
  uint64_t next = 0;  // guarded by mutex: the number of the next event
};

class App {
 public:
  explicit App(const AppConfig& config) : config_(config) {
    for (uint32_t k = 0; k < config.threads; k++)
      threads_.emplace_back(new ThreadState);
  }

  // " <a>" per thread, each read under the thread's mutex.
  std::string ReadNext() {
    std::string out;
    for (auto& t : threads_) {
      std::lock_guard<std::mutex> lock(t->mutex);
      out += " " + std::to_string(t->next);
    }
    return out;
  }
  std::vector<uint64_t> NextValues() {
    std::vector<uint64_t> out;
    for (auto& t : threads_) {
      std::lock_guard<std::mutex> lock(t->mutex);
      out.push_back(t->next);
    }
    return out;
  }

  void WaitForFirstStart() {
    std::unique_lock<std::mutex> lock(start_mutex_);
    start_cv_.wait(lock, [&] { return started_ || stop_.load(); });
  }
  void NotifyStarted() {
    std::lock_guard<std::mutex> lock(start_mutex_);
    started_ = true;
    start_cv_.notify_all();
  }
  void RequestStop() {
    std::lock_guard<std::mutex> lock(start_mutex_);
    // Release: pairs with the acquire loads in the writing loop.
    stop_.store(true, std::memory_order_release);
    start_cv_.notify_all();
  }

  void Write(uint32_t k) {
    ThreadState* t = threads_[k].get();
    if (config_.count > 0)
      WaitForFirstStart();
    const auto start = std::chrono::steady_clock::now();
    // Acquire: pairs with RequestStop()'s release store.
    while (!stop_.load(std::memory_order_acquire)) {
      for (uint32_t i = 0; i < kBurst; i++) {
        std::lock_guard<std::mutex> lock(t->mutex);
        if (config_.count > 0 && t->next == config_.count)
          break;
        const int64_t value =
            static_cast<int64_t>((static_cast<uint64_t>(k) << 32) | t->next);
        RT_TRACE_COUNTER("e2e", "seq", value);
        t->next++;
      }
      if (config_.count > 0) {
        uint64_t written = 0;
        {
          std::lock_guard<std::mutex> lock(t->mutex);
          written = t->next;
        }
        if (written == config_.count)
          break;
        if (config_.rate > 0) {
          std::this_thread::sleep_until(
              start +
              std::chrono::microseconds(written * 1000000 / config_.rate));
        }
      } else if (config_.pause_us > 0) {
        usleep(config_.pause_us);
      }
    }
  }

  const AppConfig& config() const { return config_; }

 private:
  const AppConfig config_;
  std::vector<std::unique_ptr<ThreadState>> threads_;
  std::mutex start_mutex_;
  std::condition_variable start_cv_;
  bool started_ = false;  // guarded by start_mutex_
  std::atomic<bool> stop_{false};
};

// The "track_event" handler: the real data source, with the bounds printed
// around its OnStart and OnStop.
class BoundsHandler : public DataSourceHandler {
 public:
  BoundsHandler(App* app, Tracing* tracing) : app_(app), tracing_(tracing) {}

  void OnStart(const DataSourceInstanceConfig& config) override {
    const std::vector<uint64_t> before = app_->NextValues();
    data_source_.OnStart(config);
    const std::vector<uint64_t> first = app_->NextValues();
    std::string line = "START " + std::to_string(tracing_->generation()) + " " +
                       std::to_string(config.instance_id) + " " +
                       std::to_string(config.target_buffer);
    for (size_t k = 0; k < before.size(); k++)
      line += " " + std::to_string(before[k]) + "," + std::to_string(first[k]);
    PrintLine(line);
    app_->NotifyStarted();
  }
  void OnStop(uint32_t instance_id) override {
    const std::vector<uint64_t> last = app_->NextValues();
    data_source_.OnStop(instance_id);
    const std::vector<uint64_t> after = app_->NextValues();
    std::string line = "STOP " + std::to_string(tracing_->generation()) + " " +
                       std::to_string(instance_id);
    for (size_t k = 0; k < last.size(); k++)
      line += " " + std::to_string(last[k]) + "," + std::to_string(after[k]);
    PrintLine(line);
  }
  void OnFlush(uint32_t flush_id) override { data_source_.OnFlush(flush_id); }

 private:
  App* const app_;
  Tracing* const tracing_;
  track_event::TrackEventDataSource data_source_;
};

int Main(int argc, char** argv) {
  AppConfig config;
  if (!ParseArgs(argc, argv, &config)) {
    fprintf(stderr,
            "usage: ringtrace_session_app --socket PATH [--threads T] "
            "[--policy P] [--pause-us U] [--count N] [--rate R]\n");
    return 1;
  }
  // Blocked before any thread exists: sigwait() below is the only taker.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGUSR1);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  TracingOptions options;
  options.producer.socket_path = config.socket;
  options.producer.name = "session_app";
  options.producer.stall_timeout_ms = 30000;
  options.min_backoff_ms = 20;
  options.max_backoff_ms = 200;
  if (!shm_ring::ParseBufferExhaustedPolicy(
          config.policy, &options.producer.buffer_exhausted_policy)) {
    fprintf(stderr, "ringtrace_session_app: bad policy %s\n",
            config.policy.c_str());
    return 1;
  }
  track_event::IncrementalStateConfig incremental;
  incremental.period_ms = 0;
  incremental.period_bytes = 0;
  track_event::SetIncrementalStateConfig(incremental);
  App app(config);
  Tracing tracing(options);
  BoundsHandler handler(&app, &tracing);
  base::Status status = tracing.RegisterDataSource(
      track_event::TrackEventDataSource::kName, &handler);
  if (status.ok())
    status = tracing.Start();
  if (!status.ok()) {
    fprintf(stderr, "ringtrace_session_app: %s\n", status.message().c_str());
    return 1;
  }
  std::atomic<bool> quit{false};
  std::thread watcher([&] {
    uint64_t gen = 0;
    // Acquire: pairs with the release store before the join below.
    while (!quit.load(std::memory_order_acquire)) {
      const uint64_t g = tracing.WaitForConnection(gen, 50);
      if (g > gen) {
        gen = g;
        PrintLine("CONNECTED " + std::to_string(g));
      }
    }
  });
  std::vector<std::thread> writers;
  for (uint32_t k = 0; k < config.threads; k++)
    writers.emplace_back([&app, k] { app.Write(k); });
  if (config.count > 0) {
    std::thread done([&] {
      for (auto& w : writers)
        w.join();
      PrintLine("DONE" + app.ReadNext());
    });
    done.detach();
  }
  uint64_t marks = 0;
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0)
      return 1;
    if (sig == SIGUSR1) {
      PrintLine("MARK " + std::to_string(++marks) + app.ReadNext());
      continue;
    }
    break;
  }
  app.RequestStop();
  if (config.count == 0) {
    for (auto& w : writers)
      w.join();
  }
  PrintLine("TOTAL" + app.ReadNext());
  // Release: pairs with the watcher's acquire load.
  quit.store(true, std::memory_order_release);
  watcher.join();
  if (config.count > 0) {
    // The joining thread may still run: leave without destructors.
    fflush(stdout);
    _exit(0);
  }
  return 0;
}

}  // namespace
}  // namespace test
}  // namespace ringtrace

int main(int argc, char** argv) {
  return ringtrace::test::Main(argc, argv);
}
