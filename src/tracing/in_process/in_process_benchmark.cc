/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The in-process backend against the system one, per event and end to end.
//
// BM_Backend_ScopedSlice/backend:B/round:R: one iteration is one scoped
// TrackEvent slice with one argument (RT_TRACE_EVENT: a begin and an end
// packet) written by the benchmark thread while a session that enables its
// category runs on backend B: 0 the in-process backend (TracingBackends with
// kInProcessBackend: the service's threads in this process), 1 the system
// backend (TracingBackends with kSystemBackend, connected to a ringtraced
// child started for the run on private sockets). The same public API, the
// same producer options (the stall policy: a full ring makes the writer
// wait for the drainer, so every event reaches the service and no loss
// makes a run cheaper), the same 64 MiB buffer, which holds every run
// whole. The runs alternate, B = 0, 1, 0, 1, ... (R = 1..5), so a drift
// of the machine shows in both.
//
// Figures: the time per iteration is the per-event cost on the writing
// thread, the drainer running concurrently (on the 2-vCPU VM the drainer
// and the service's poll thread share the cores with it; in-process they
// are threads of this process, for the system backend of the child).
// e2e_slices_per_s is the end-to-end rate: the slices per second from the
// loop's start until every slice is in the session's buffer, i.e. the loop
// plus the FlushBlocking() after it (the producer's ack and the service's
// drain of the ring), measured with the steady clock around both. The
// session is then stopped and its summary checked: no packet lost, at
// least two packets per slice written, else the run fails. Read beside
// BM_TrackEvent_SlicePairFloor (the same two packets into a bound writer,
// no service) and BM_Memcpy of the same run.

// Categories for this benchmark only (see RT_TRACK_EVENT_NAMESPACE).
#define RT_TRACK_EVENT_NAMESPACE rt_in_process_benchmark_categories

#include <benchmark/benchmark.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "ringtrace/tracing_backends.h"
#include "ringtrace/track_event.h"
#include "src/base/test/benchmark_utils.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/test/ringtraced_process.h"
#include "src/tracing/track_event/track_event_instances.h"

RT_DEFINE_CATEGORIES("bench.backend");

namespace ringtrace {
namespace {

constexpr int kTimeoutMs = 60000;

constexpr char kConfig[] = R"(
buffers { size_kb: 65536 fill_policy: DISCARD }
data_sources {
  config {
    name: "track_event"
    track_event_config {
      disabled_categories: "*"
      enabled_categories: "bench.backend"
    }
  }
}
)";

// One million slices (about 40 MB of packets: what the buffer holds whole);
// one in the functional mode.
int64_t SliceIterations() {
  return bench::IsBenchmarkFunctionalOnly() ? 1 : 1000 * 1000;
}

// What one run stands on: the backend (and the ringtraced child of the
// system backend) and a running session.
class Rig {
 public:
  Rig(bool system, base::Status* status) {
    TracingInitArgs args;
    ProducerOptions producer;
    producer.name = "backend_benchmark";
    producer.buffer_exhausted_policy = shm_ring::BufferExhaustedPolicy::kStall;
    producer.stall_timeout_ms = 10000;
    if (system) {
      *status = StartDaemon();
      if (!status->ok())
        return;
      args.backends = kSystemBackend;
      args.system.producer = producer;
      args.system.producer.socket_path = dir_.File("producer.sock");
      args.system_consumer_socket_path = dir_.File("consumer.sock");
    } else {
      args.backends = kInProcessBackend;
      args.in_process.producer = producer;
    }
    backends_ = TracingBackends::Initialize(args, status);
    if (!backends_)
      return;
    const BackendType backend = system ? kSystemBackend : kInProcessBackend;
    if (backends_->tracing(backend)->WaitForConnection(0, kTimeoutMs) == 0) {
      *status = base::ErrStatus("no connection to the service");
      return;
    }
    TracingSessionOptions options;
    options.timeout_ms = kTimeoutMs;
    options.wait_for_data_source_start = true;
    session_ = backends_->NewSession(backend, options, status);
    if (!session_)
      return;
    *status = session_->SetupFromText(kConfig);
    if (status->ok())
      *status = session_->StartBlocking();
    if (!status->ok())
      return;
    // The system connection may have registered its data source after the
    // start reached ringtraced, which then starts it on its own.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(kTimeoutMs);
    while (!RT_TRACE_EVENT_CATEGORY_ENABLED("bench.backend")) {
      if (std::chrono::steady_clock::now() >= deadline) {
        *status = base::ErrStatus("the session never enabled the category");
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  ~Rig() {
    session_.reset();
    // This thread's writer of the stopped instance holds its connection.
    track_event::ReleaseStoppedInstanceWriters();
    backends_.reset();
    if (daemon_ && daemon_->running()) {
      daemon_->Signal(SIGTERM);
      if (!daemon_->Wait(kTimeoutMs))
        daemon_->Kill();
    }
  }

  TracingSession* session() { return session_.get(); }

 private:
  base::Status StartDaemon() {
    daemon_.reset(new base::Subprocess(
        {base::ExecutableDir() + "/ringtraced", "--producer-socket",
         dir_.File("producer.sock"), "--consumer-socket",
         dir_.File("consumer.sock")}));
    const std::string error = test::StartRingtraced(
        daemon_.get(), dir_.File("producer.sock"), kTimeoutMs);
    return error.empty() ? base::OkStatus()
                         : base::ErrStatus("%s", error.c_str());
  }

  base::TempDir dir_{"ringtrace_backend_bench"};
  std::unique_ptr<base::Subprocess> daemon_;
  std::unique_ptr<TracingBackends> backends_;
  std::unique_ptr<TracingSession> session_;
};

void BM_Backend_ScopedSlice(benchmark::State& state) {
  const bool system = state.range(0) == 1;
  base::Status status;
  Rig rig(system, &status);
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  int64_t i = 0;
  const auto loop_start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    RT_TRACE_EVENT("bench.backend", "Slice", "i", i);
    i++;
  }
  status = rig.session()->FlushBlocking();
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - loop_start)
                             .count();
  if (status.ok())
    status = rig.session()->StopBlocking();
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  const TracingSessionSummary summary = rig.session()->summary();
  const uint64_t slices = static_cast<uint64_t>(state.iterations());
  if (summary.packets_lost != 0 || summary.packets_written < 2 * slices) {
    state.SkipWithError("the session lost packets or missed slices");
    return;
  }
  state.SetItemsProcessed(static_cast<int64_t>(slices));
  state.SetBytesProcessed(static_cast<int64_t>(summary.bytes_written));
  state.counters["e2e_slices_per_s"] = static_cast<double>(slices) / seconds;
  state.counters["packets_written"] =
      static_cast<double>(summary.packets_written);
}
BENCHMARK(BM_Backend_ScopedSlice)
    ->ArgNames({"backend", "round"})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({0, 2})
    ->Args({1, 2})
    ->Args({0, 3})
    ->Args({1, 3})
    ->Args({0, 4})
    ->Args({1, 4})
    ->Args({0, 5})
    ->Args({1, 5})
    ->Iterations(SliceIterations())
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace ringtrace
