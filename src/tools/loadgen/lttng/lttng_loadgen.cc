/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// lttng_loadgen: the LTTng-UST twin of ringtrace_loadgen for
// tools/compare-lttng. |threads| threads emit the ringtrace_loadgen:counter
// tracepoint as fast as they can for |duration_ms|, then it prints how many
// events were emitted in the same key=value form as ringtrace_loadgen.
//
// Not part of the GN build (the project does not depend on LTTng):
// tools/compare-lttng compiles it with the system compiler when
// liblttng-ust-dev is installed:
//   g++ -O2 -I. lttng_loadgen.cc -o lttng_loadgen -llttng-ust -ldl -lpthread
//
//   lttng_loadgen THREADS DURATION_MS

#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_loadgen_tp.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "src/base/time.h"

namespace {

// Polled once per batch, like ringtrace_loadgen.
constexpr uint32_t kEventsPerStopCheck = 64;

struct ThreadResult {
  uint64_t events = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

void RunThread(const std::atomic<bool>* stop, ThreadResult* result) {
  const uint64_t track =
      (uint64_t{3} << 62) | static_cast<uint64_t>(syscall(SYS_gettid));
  uint64_t events = 0;
  result->start_ns = ringtrace::base::MonotonicNs();
  // A pure signal, no data rides on it: relaxed, paired with the relaxed
  // store in main().
  while (!stop->load(std::memory_order_relaxed)) {
    for (uint32_t i = 0; i < kEventsPerStopCheck; ++i) {
      lttng_ust_tracepoint(ringtrace_loadgen, counter, track, 4,
                           static_cast<int64_t>(events & 0xffff));
      ++events;
    }
  }
  result->end_ns = ringtrace::base::MonotonicNs();
  result->events = events;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "Usage: %s THREADS DURATION_MS\n", argv[0]);
    return 2;
  }
  const long threads = strtol(argv[1], nullptr, 10);
  const long duration_ms = strtol(argv[2], nullptr, 10);
  if (threads < 1 || threads > 1024 || duration_ms < 1 ||
      duration_ms > 3600 * 1000) {
    fprintf(stderr, "%s: THREADS in [1, 1024], DURATION_MS in [1, 3600000]\n",
            argv[0]);
    return 2;
  }
  std::atomic<bool> stop{false};
  std::vector<ThreadResult> results(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  for (long i = 0; i < threads; ++i)
    workers.emplace_back(RunThread, &stop, &results[static_cast<size_t>(i)]);
  usleep(static_cast<useconds_t>(duration_ms) * 1000u);
  stop.store(true, std::memory_order_relaxed);  // see RunThread
  for (std::thread& t : workers)
    t.join();
  uint64_t events = 0;
  uint64_t first = UINT64_MAX;
  uint64_t last = 0;
  for (const ThreadResult& r : results) {
    events += r.events;
    first = r.start_ns < first ? r.start_ns : first;
    last = r.end_ns > last ? r.end_ns : last;
  }
  const double secs =
      last > first ? static_cast<double>(last - first) / 1e9 : 0.0;
  printf("events_emitted=%llu elapsed_s=%.3f events_per_s=%.0f\n",
         static_cast<unsigned long long>(events), secs,
         secs > 0 ? static_cast<double>(events) / secs : 0.0);
  return 0;
}
