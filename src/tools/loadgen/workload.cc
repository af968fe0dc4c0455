/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/loadgen/workload.h"

#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "ringtrace/tracing.h"
#include "ringtrace/track_event_data_source.h"
#include "src/base/time.h"

// The workload's categories live in a namespace of their own: the library
// is linked beside loadgen.cc's (and, in the tests, the example app's).
#define RT_TRACK_EVENT_NAMESPACE loadgen_workload_categories
#include "ringtrace/track_event.h"

RT_DEFINE_CATEGORIES("cat", "cat.disabled");

namespace ringtrace {
namespace loadgen {

namespace {

constexpr Phase kCostPhases[] = {Phase::kSlice, Phase::kInstant,
                                 Phase::kCounter, Phase::kDisabled};
constexpr Phase kTputPhases[] = {Phase::kTput};
constexpr uint32_t kPollMs = 1;

uint64_t ThreadCpuNs() {
  return base::ClockNs(CLOCK_THREAD_CPUTIME_ID);
}

// Emits |n| events of |phase|, numbered from |first|. The switch is outside
// the loops so that each loop is the macro alone.
void EmitBlock(Phase phase, uint64_t first, uint64_t n) {
  switch (phase) {
    case Phase::kSlice:
    case Phase::kTput:
      for (uint64_t i = first; i < first + n; ++i) {
        RT_TRACE_EVENT("cat", "name", "n", static_cast<int64_t>(i));
      }
      return;
    case Phase::kInstant:
      for (uint64_t i = 0; i < n; ++i) {
        RT_TRACE_INSTANT("cat", "name");
      }
      return;
    case Phase::kCounter:
      for (uint64_t i = first; i < first + n; ++i) {
        RT_TRACE_COUNTER("cat", "name", static_cast<int64_t>(i));
      }
      return;
    case Phase::kDisabled:
      for (uint64_t i = first; i < first + n; ++i) {
        RT_TRACE_EVENT("cat.disabled", "name", "n", static_cast<int64_t>(i));
      }
      return;
  }
}

// One phase on the calling thread: blocks of |burst| until |total| events
// (cost) or until |duration_ms| passed (tput).
PhaseResult RunPhase(Phase phase, const WorkloadConfig& config) {
  PhaseResult r;
  r.phase = phase;
  const bool timed = phase == Phase::kTput;
  const uint64_t wall0 = base::MonotonicNs();
  const uint64_t cpu0 = ThreadCpuNs();
  const uint64_t deadline =
      wall0 + uint64_t{config.duration_ms} * base::kNsPerMs;
  uint64_t done = 0;
  while (timed ? base::MonotonicNs() < deadline : done < config.total) {
    const uint64_t n =
        timed ? config.burst
              : std::min<uint64_t>(config.burst, config.total - done);
    EmitBlock(phase, done, n);
    done += n;
    if (config.pause_us != 0 && (timed || done < config.total))
      usleep(config.pause_us);
  }
  r.cpu_ns = ThreadCpuNs() - cpu0;
  r.wall_ns = base::MonotonicNs() - wall0;
  r.events = done;
  return r;
}

void RunWorkloadThread(uint32_t index,
                       const WorkloadConfig& config,
                       std::vector<PhaseResult>* results) {
  const std::string name = "w" + std::to_string(index);
  prctl(PR_SET_NAME, name.c_str(), 0, 0, 0);
  if (config.mode == WorkloadMode::kCost) {
    for (Phase phase : kCostPhases)
      results->push_back(RunPhase(phase, config));
  } else {
    for (Phase phase : kTputPhases)
      results->push_back(RunPhase(phase, config));
  }
  track_event::Flush();
}

// Polls |enabled| every kPollMs until it returns |want| or |timeout_ms|
// passed; returns whether it did.
template <typename Fn>
bool WaitFor(Fn enabled, bool want, uint32_t timeout_ms) {
  const uint64_t deadline = base::MonotonicMs() + timeout_ms;
  while (enabled() != want) {
    if (base::MonotonicMs() >= deadline)
      return false;
    usleep(kPollMs * 1000);
  }
  return true;
}

}  // namespace

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kSlice:
      return "slice";
    case Phase::kInstant:
      return "instant";
    case Phase::kCounter:
      return "counter";
    case Phase::kDisabled:
      return "disabled";
    case Phase::kTput:
      return "tput";
  }
  return "?";
}

bool ParseWorkloadMode(const std::string& name, WorkloadMode* mode) {
  if (name == "cost") {
    *mode = WorkloadMode::kCost;
    return true;
  }
  if (name == "tput") {
    *mode = WorkloadMode::kTput;
    return true;
  }
  return false;
}

base::Status RunWorkload(const WorkloadConfig& config,
                         std::vector<PhaseResult>* results) {
  results->clear();
  if (config.threads == 0 || config.threads > kMaxWorkloadThreads)
    return base::ErrStatus("threads must be in [1, %u]", kMaxWorkloadThreads);
  if (config.burst == 0)
    return base::ErrStatus("burst must be at least 1");
  std::vector<std::vector<PhaseResult>> per_thread(config.threads);
  {
    std::vector<std::thread> threads;
    threads.reserve(config.threads);
    for (uint32_t i = 0; i < config.threads; ++i) {
      threads.emplace_back(RunWorkloadThread, i, std::cref(config),
                           &per_thread[i]);
    }
    for (std::thread& t : threads)
      t.join();
  }
  // Every thread ran the same phases in the same order.
  *results = per_thread[0];
  for (uint32_t t = 1; t < config.threads; ++t) {
    for (size_t p = 0; p < results->size(); ++p) {
      (*results)[p].events += per_thread[t][p].events;
      (*results)[p].wall_ns += per_thread[t][p].wall_ns;
      (*results)[p].cpu_ns += per_thread[t][p].cpu_ns;
    }
  }
  return base::OkStatus();
}

std::string FormatResult(const PhaseResult& r,
                         WorkloadMode mode,
                         uint32_t threads) {
  const double events = static_cast<double>(r.events);
  const double wall = r.events ? static_cast<double>(r.wall_ns) / events : 0;
  const double cpu = r.events ? static_cast<double>(r.cpu_ns) / events : 0;
  char buf[256];
  int n = snprintf(buf, sizeof(buf),
                   "RESULT phase=%s events=%llu wall_ns_per_ev=%.2f "
                   "cpu_ns_per_ev=%.2f",
                   PhaseName(r.phase),
                   static_cast<unsigned long long>(r.events), wall, cpu);
  std::string line(buf, static_cast<size_t>(std::max(n, 0)));
  if (mode == WorkloadMode::kTput) {
    // All threads' events over the mean thread wall time.
    const double mean_wall_s =
        threads ? static_cast<double>(r.wall_ns) / threads / 1e9 : 0;
    n = snprintf(buf, sizeof(buf), " events_per_s=%.0f",
                 mean_wall_s > 0 ? events / mean_wall_s : 0.0);
    line.append(buf, static_cast<size_t>(std::max(n, 0)));
  }
  line += '\n';
  return line;
}

base::Status RunSessionWorkload(const SessionWorkloadConfig& config,
                                FILE* out,
                                FILE* log) {
  TracingOptions options;
  options.producer.socket_path = config.socket_path;
  options.producer.name = config.name;
  options.producer.requested_ring_bytes = config.ring_kb * 1024;
  Tracing tracing(options);
  base::Status status = track_event::RegisterTrackEventDataSource(&tracing);
  if (status.ok())
    status = tracing.Start();
  if (!status.ok())
    return status;
  auto enabled = [] {
    return track_event::IsCategoryEnabled(kWorkloadCategory);
  };
  if (!WaitFor(enabled, true, config.start_timeout_ms)) {
    return base::ErrStatus("no session enabled \"%s\" within %u ms",
                           kWorkloadCategory, config.start_timeout_ms);
  }
  fputs("STARTED\n", out);
  fflush(out);
  std::vector<PhaseResult> results;
  status = RunWorkload(config.workload, &results);
  if (!status.ok())
    return status;
  for (const PhaseResult& r : results) {
    fputs(
        FormatResult(r, config.workload.mode, config.workload.threads).c_str(),
        out);
  }
  fputs("DONE\n", out);
  fflush(out);

  const track_event::TrackEventStats te = track_event::Stats();
  ProducerStats producer;
  if (std::shared_ptr<Producer> p = tracing.GetProducer())
    producer = p->stats();
  fprintf(log,
          "ringtrace_loadgen: per-thread writers created %llu, released %llu; "
          "events without a writer %llu; drain requests sent %llu, coalesced "
          "%llu, dropped %llu; connections %llu, disconnects %llu\n",
          static_cast<unsigned long long>(te.instance_writers_created),
          static_cast<unsigned long long>(te.instance_writers_released),
          static_cast<unsigned long long>(te.events_without_writer),
          static_cast<unsigned long long>(producer.drain_requests_sent),
          static_cast<unsigned long long>(producer.drain_requests_coalesced),
          static_cast<unsigned long long>(producer.drain_requests_dropped),
          static_cast<unsigned long long>(tracing.stats().connections),
          static_cast<unsigned long long>(tracing.stats().disconnects));
  if (!WaitFor(enabled, false, config.end_timeout_ms)) {
    return base::ErrStatus("the session did not end within %u ms of DONE",
                           config.end_timeout_ms);
  }
  return base::OkStatus();  // ~Tracing: the service drains one last time
}

}  // namespace loadgen
}  // namespace ringtrace
