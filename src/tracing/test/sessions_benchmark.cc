/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Sessions in one process: a TracingService with its consumer socket, one
// ringtrace::Producer connected over the real producer socket with a
// "bench" data source, and a ConsumerClient, all as in the daemon.
//
// BM_Session_StartStop: one iteration is a whole session: EnableTracing,
// the producer's OnStart (the instance started), DisableTracing until the
// trace is written (StopDataSource and its ack, the final drain, the export
// into a file, the SessionSummary). Latency per iteration.
// BM_Session_QueryBaseline is its floor: one consumer round trip
// (QueryServiceState) on the same connection. Read them side by side.
//
// BM_EndToEnd_InMemory and BM_EndToEnd_WriteIntoFile: the same workload,
// one packet with a 1 KiB for_testing string per iteration written by the
// benchmark thread into the session's instance (stall policy), the service
// draining concurrently; InMemory keeps the trace in a 64 MiB RING_BUFFER
// written at the end, WriteIntoFile streams it through a 4 MiB RING_BUFFER
// appended to the file every 100 ms. Both write the same 48 MiB (a fixed
// iteration count, which the in-memory buffer holds whole). The timed loop is
// the writing; the stop and the final write are untimed. Bytes counted: the
// packets that reached the trace (the iterations minus the packets the session
// reports lost), times their size; the loss is a counter. Read beside
// BM_Memcpy/1024 (src/base) of the same run.
//
// CONTENDED on a 2-vCPU VM: the writer, the drain thread and the service's
// poll thread share two cores.

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/producer.h"
#include "src/base/scoped_fd.h"
#include "src/base/test/benchmark_utils.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/consumer/consumer_client.h"
#include "src/tracing/service/traced/tracing_service.h"

namespace ringtrace {
namespace {

using perfetto::protos::TraceConfig;
using traced::TracingService;

constexpr int kTimeoutMs = 60000;
constexpr size_t kPacketPayload = 1024;

// Remembers the last instance started; counts starts.
class BenchHandler : public DataSourceHandler {
 public:
  void OnStart(const DataSourceInstanceConfig& config) override {
    std::lock_guard<std::mutex> lock(mutex_);
    started_++;
    buffer_ = config.target_buffer;
    cv_.notify_all();
  }
  void OnStop(uint32_t) override {}
  void OnFlush(uint32_t) override {}
  // Waits until |n| instances started; the last one's buffer.
  bool WaitStarted(uint64_t n, shm_ring::BufferID* buffer) {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool ok = cv_.wait_for(lock, std::chrono::milliseconds(kTimeoutMs),
                                 [&] { return started_ >= n; });
    *buffer = buffer_;
    return ok;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  uint64_t started_ = 0;
  shm_ring::BufferID buffer_ = 0;
};

// The service, a producer with the handler, a consumer.
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
    ProducerOptions producer_options;
    producer_options.socket_path = options.socket_path;
    producer_options.name = "bench";
    producer_options.buffer_exhausted_policy =
        shm_ring::BufferExhaustedPolicy::kStall;
    producer_options.stall_timeout_ms = 10000;
    producer_ = Producer::Connect(producer_options, status);
    if (!producer_)
      return;
    *status = producer_->RegisterDataSource("bench", &handler_);
    if (!status->ok())
      return;
    consumer_ = consumer::ConsumerClient::Connect(options.consumer_socket_path,
                                                  kTimeoutMs, status);
  }
  ~Rig() {
    consumer_.reset();
    producer_.reset();
    if (service_)
      (void)service_->Stop(nullptr);
  }

  base::ScopedFd NewFile(const std::string& name) {
    return base::ScopedFd(open(dir_.File(name).c_str(),
                               O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  }

  base::TempDir dir_;
  std::unique_ptr<TracingService> service_;
  BenchHandler handler_;
  std::unique_ptr<Producer> producer_;
  std::unique_ptr<consumer::ConsumerClient> consumer_;
};

TraceConfig BenchConfig(uint32_t size_kb) {
  TraceConfig config;
  auto* buffer = config.add_buffers();
  buffer->set_size_kb(size_kb);
  buffer->set_fill_policy(TraceConfig::BufferConfig::RING_BUFFER);
  config.add_data_sources()->mutable_config()->set_name("bench");
  return config;
}

void BM_Session_StartStop(benchmark::State& state) {
  base::Status status;
  Rig rig(&status);
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  const TraceConfig config = BenchConfig(1024);
  uint64_t sessions = 0;
  for (auto _ : state) {
    base::ScopedFd fd = rig.NewFile("session.pftrace");
    uint64_t id = 0;
    shm_ring::BufferID buffer = 0;
    status = rig.consumer_->EnableTracing(config, fd.get(), &id);
    if (status.ok() && !rig.handler_.WaitStarted(++sessions, &buffer))
      status = base::ErrStatus("the instance did not start");
    if (status.ok())
      status = rig.consumer_->DisableTracing(id, kTimeoutMs, nullptr);
    if (!status.ok()) {
      state.SkipWithError(status.message().c_str());
      break;
    }
  }
}
BENCHMARK(BM_Session_StartStop)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_Session_QueryBaseline(benchmark::State& state) {
  base::Status status;
  Rig rig(&status);
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  for (auto _ : state) {
    protos::ServiceState service_state;
    status = rig.consumer_->QueryServiceState(&service_state);
    if (!status.ok()) {
      state.SkipWithError(status.message().c_str());
      break;
    }
  }
}
BENCHMARK(BM_Session_QueryBaseline)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// One session of |config| around the timed loop (see the top).
void RunEndToEnd(benchmark::State& state, const TraceConfig& config) {
  base::Status status;
  Rig rig(&status);
  base::ScopedFd fd = rig.NewFile("e2e.pftrace");
  uint64_t id = 0;
  shm_ring::BufferID buffer = 0;
  if (status.ok())
    status = rig.consumer_->EnableTracing(config, fd.get(), &id);
  if (status.ok() && !rig.handler_.WaitStarted(1, &buffer))
    status = base::ErrStatus("the instance did not start");
  std::unique_ptr<shm_ring::TraceWriterV2> writer =
      status.ok() ? rig.producer_->NewTraceWriter(buffer, &status) : nullptr;
  if (!writer) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  const std::string payload(kPacketPayload, 'p');
  for (auto _ : state) {
    auto handle = writer->NewTracePacket();
    perfetto::protos::rtzero::TracePacket packet(handle);
    packet.set_for_testing().set_str(payload);
  }
  writer->Flush();
  const shm_ring::TraceWriterV2Stats writer_stats = writer->stats();
  writer.reset();
  protos::SessionSummary summary;
  status = rig.consumer_->DisableTracing(id, kTimeoutMs, &summary);
  const uint64_t iterations = static_cast<uint64_t>(state.iterations());
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
  } else if (writer_stats.packets_dropped != 0 ||
             writer_stats.packets_committed != iterations ||
             summary.packets_lost() > iterations) {
    state.SkipWithError("the accounting does not add up");
  }
  const uint64_t kept =
      iterations - std::min(iterations, summary.packets_lost());
  state.SetItemsProcessed(static_cast<int64_t>(kept));
  state.SetBytesProcessed(static_cast<int64_t>(kept * kPacketPayload));
  state.counters["packets_lost"] = static_cast<double>(summary.packets_lost());
  state.counters["file_bytes"] = static_cast<double>(summary.bytes_written());
}

// 48 MiB of packets: what the in-memory buffer holds whole, 12 times the
// streamed one's buffer. One packet in the functional mode.
int64_t EndToEndIterations() {
  return bench::IsBenchmarkFunctionalOnly() ? 1 : 48 * 1024;
}

void BM_EndToEnd_InMemory(benchmark::State& state) {
  RunEndToEnd(state, BenchConfig(65536));
}
BENCHMARK(BM_EndToEnd_InMemory)
    ->Iterations(EndToEndIterations())
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

void BM_EndToEnd_WriteIntoFile(benchmark::State& state) {
  TraceConfig config = BenchConfig(4096);
  config.set_write_into_file(true);
  config.set_file_write_period_ms(100);
  RunEndToEnd(state, config);
}
BENCHMARK(BM_EndToEnd_WriteIntoFile)
    ->Iterations(EndToEndIterations())
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace ringtrace
