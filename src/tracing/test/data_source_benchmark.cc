/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// DataSource<T>::Trace() with one running instance, in one process: a
// TracingService on its sockets, the data source registered through
// ringtrace::Tracing, a session started by a ConsumerClient. One iteration
// is one Trace() call writing one small packet of the app's own proto (a
// TracePacket extension with an interned name, 3 of 64 names, so the
// interning lookup runs and an entry is rarely new), and without the
// interning (TraceEnabledNoInterning). The baseline is the
// same packet written straight into a TraceWriterV2 of the same producer
// and buffer (no Trace(), no interning): the difference is what the data
// source machinery costs (the thread's state lookup, the stop protocol's
// seq_cst store and load, the incremental-state checks). Stall policy and
// a buffer that holds everything: nothing is lost (checked). Items: the
// packets written.
//
// CONTENDED on a 2-vCPU VM: the writer, the drain thread and the service's
// poll thread share two cores.

#include <benchmark/benchmark.h>
#include <fcntl.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "protos/perfetto/config/trace_config.pb.h"
#include "ringtrace/data_source.h"
#include "ringtrace/intern_table.h"
#include "ringtrace/tracing.h"
#include "src/base/test/benchmark_utils.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/consumer/consumer_client.h"
#include "src/tracing/data_source/test/test_data_source.rtzero.h"
#include "src/tracing/service/traced/tracing_service.h"

namespace ringtrace {
namespace {

namespace rtt = ringtrace::data_source_test::rtzero;
using perfetto::protos::TraceConfig;
using traced::TracingService;

constexpr int kTimeoutMs = 60000;
constexpr char kName[] = "ringtrace.bench_source";

struct BenchState {
  InternTable<std::string> names;
};
struct BenchTraits : DefaultDataSourceTraits {
  using IncrementalStateType = BenchState;
};
class BenchSource : public DataSource<BenchSource, BenchTraits> {};

const std::string& NameOf(uint64_t i) {
  static const std::string* names = [] {
    auto* n = new std::string[64];
    for (int k = 0; k < 64; k++)
      n[k] = "name-" + std::to_string(k);
    return n;
  }();
  return names[(i / 1024) % 64];
}

// The service, the app's Tracing with the data source, a session on it.
class Rig {
 public:
  explicit Rig(base::Status* status) {
    TracingService::Options options;
    options.socket_path = dir_.File("producer.sock");
    options.consumer_socket_path = dir_.File("consumer.sock");
    service_.reset(new TracingService(options));
    *status = service_->Start();
    if (!status->ok())
      return;
    TracingOptions tracing_options;
    tracing_options.producer.socket_path = options.socket_path;
    tracing_options.producer.name = "bench";
    tracing_options.producer.buffer_exhausted_policy =
        shm_ring::BufferExhaustedPolicy::kStall;
    tracing_options.producer.stall_timeout_ms = 10000;
    tracing_.reset(new Tracing(tracing_options));
    DataSourceDescriptor descriptor;
    descriptor.name = kName;
    *status = BenchSource::Register(tracing_.get(), descriptor);
    if (status->ok())
      *status = tracing_->Start();
    if (status->ok() && tracing_->WaitForConnection(0, kTimeoutMs) == 0)
      *status = base::ErrStatus("no connection");
    if (!status->ok())
      return;
    consumer_ = consumer::ConsumerClient::Connect(options.consumer_socket_path,
                                                  kTimeoutMs, status);
    if (!consumer_)
      return;
    TraceConfig config;
    config.add_buffers()->set_size_kb(65536);
    config.add_data_sources()->mutable_config()->set_name(kName);
    fd_ = base::ScopedFd(open(dir_.File("bench.pftrace").c_str(),
                              O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    const uint64_t started = BenchSource::stats().instances_started;
    *status = consumer_->EnableTracing(config, fd_.get(), &session_);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(kTimeoutMs);
    while (status->ok() && BenchSource::stats().instances_started == started) {
      if (std::chrono::steady_clock::now() >= deadline)
        *status = base::ErrStatus("the instance did not start");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  // Stops the session; the packets it lost.
  base::Status Stop(uint64_t* lost) {
    protos::SessionSummary summary;
    base::Status status =
        consumer_->DisableTracing(session_, kTimeoutMs, &summary);
    *lost = summary.packets_lost();
    return status;
  }
  ~Rig() {
    consumer_.reset();
    tracing_.reset();
    if (service_)
      (void)service_->Stop(nullptr);
  }

  base::TempDir dir_;
  std::unique_ptr<TracingService> service_;
  std::unique_ptr<Tracing> tracing_;
  std::unique_ptr<consumer::ConsumerClient> consumer_;
  base::ScopedFd fd_;
  uint64_t session_ = 0;
};

// One packet in the functional mode (tools/test).
int64_t Iterations() {
  return bench::IsBenchmarkFunctionalOnly() ? 1 : 200000;
}

void Finish(benchmark::State& state, Rig* rig, uint64_t written) {
  uint64_t lost = 0;
  const base::Status status = rig->Stop(&lost);
  if (!status.ok())
    state.SkipWithError(status.message().c_str());
  else if (lost != 0 || written != static_cast<uint64_t>(state.iterations()))
    state.SkipWithError("packets were lost or not written");
  state.SetItemsProcessed(static_cast<int64_t>(written));
}

// Runs |emit(ctx, i)| inside BenchSource::Trace() once per iteration
// against a fresh Rig; every call writes one packet.
template <typename Emit>
void RunTrace(benchmark::State& state, Emit emit) {
  base::Status status;
  Rig rig(&status);
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  uint64_t i = 0;
  uint64_t written = 0;
  for (auto _ : state) {
    BenchSource::Trace([&](BenchSource::TraceContext ctx) {
      emit(ctx, i);
      written++;
    });
    i++;
  }
  Finish(state, &rig, written);
}

void BM_DataSource_TraceEnabled(benchmark::State& state) {
  RunTrace(state, [](BenchSource::TraceContext& ctx, uint64_t i) {
    auto packet = ctx.NewTracePacket<rtt::TestSourcePacket>();
    packet->set_timestamp(i);
    bool is_new = false;
    const std::string& name = NameOf(i);
    const uint64_t iid = ctx.GetIncrementalState()->names.Intern(name, &is_new);
    if (is_new) {
      rtt::TestSourceInternedData interned(
          packet->set_interned_data().message());
      rtt::TestSourceName entry = interned.add_test_source_names();
      entry.set_iid(iid);
      entry.set_name(name);
    }
    rtt::TestSourceEvent event = packet->set_test_source_event();
    event.set_seq(i);
    event.set_name_iid(iid);
  });
}
BENCHMARK(BM_DataSource_TraceEnabled)
    ->Iterations(Iterations())
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

// The baseline's packet through Trace(): the machinery alone, without the
// interning lookup.
void BM_DataSource_TraceEnabledNoInterning(benchmark::State& state) {
  RunTrace(state, [](BenchSource::TraceContext& ctx, uint64_t i) {
    auto packet = ctx.NewTracePacket<rtt::TestSourcePacket>();
    packet->set_timestamp(i);
    rtt::TestSourceEvent event = packet->set_test_source_event();
    event.set_seq(i);
    event.set_name_iid(1 + (i / 1024) % 64);
  });
}
BENCHMARK(BM_DataSource_TraceEnabledNoInterning)
    ->Iterations(Iterations())
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

// The same packet (without the interning lookup) straight into a writer of
// the same producer and buffer.
void BM_DataSource_RawWriterBaseline(benchmark::State& state) {
  base::Status status;
  Rig rig(&status);
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  // The instance's writer of this thread, taken from a first Trace().
  shm_ring::TraceWriterV2* writer = nullptr;
  BenchSource::Trace(
      [&](BenchSource::TraceContext ctx) { writer = ctx.writer(); });
  if (!writer) {
    state.SkipWithError("no writer");
    return;
  }
  uint64_t i = 0;
  for (auto _ : state) {
    auto handle = writer->NewTracePacket();
    rtt::TestSourcePacket packet(handle);
    packet.set_timestamp(i);
    rtt::TestSourceEvent event = packet.set_test_source_event();
    event.set_seq(i);
    event.set_name_iid(1 + (i / 1024) % 64);
    i++;
  }
  Finish(state, &rig, i);
}
BENCHMARK(BM_DataSource_RawWriterBaseline)
    ->Iterations(Iterations())
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace ringtrace
