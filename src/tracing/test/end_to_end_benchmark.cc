/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Throughput of the whole production path in one process: a TraceWriterV2
// from ringtrace::Producer (connected over the real Unix socket, writing
// into the sealed memfd ring the service handed out) on the benchmark
// thread, and a TracingService draining that ring into its TraceBufferV2 on
// its own threads. The only difference from two processes is the process
// boundary itself; the shared memory, the cache-line traffic between the
// writer's core and the drainer's, the DrainRequests and the futex wake-ups
// are the same.
//
// One packet per iteration (a payload of the given size in one string
// field, TracePacket.for_testing.str), stall policy, so the writer waits for
// the drainer instead of dropping. Bytes counted: the encoded packet bytes the
// drainer took out of the ring (bytes_emitted), checked against what the writer
// put in (bytes_written) and the packet count against the iterations: a run
// with any loss is reported as an error, not as a figure. The timed loop is the
// writing; the drainer runs concurrently, and with the stall policy the
// writer is never more than one ring (1 MiB) ahead of it, so the drain of
// that last ring after the loop (untimed, like the export of the trace
// file) is a bounded tail.
//
// CONTENDED on this 2-vCPU VM: the writer, the drain thread and the
// service's poll thread share two cores. Read it beside BM_Memcpy of the
// same size (src/base) in the same run.

#include <benchmark/benchmark.h>

#include <string.h>

#include <memory>
#include <string>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/producer.h"
#include "src/base/test/benchmark_utils.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/service/traced/test/test_client.h"
#include "src/tracing/service/traced/tracing_service.h"

namespace ringtrace {
namespace {

namespace rt = perfetto::protos::rtzero;

void BM_EndToEnd_ProducerToService(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  base::TempDir dir;
  traced::TracingService::Options options;
  options.socket_path = dir.File("e2e.sock");
  options.out_path = dir.File("e2e.pftrace");
  options.out_config = traced::DefaultOutConfig(
      bench::IsBenchmarkFunctionalOnly() ? 1024 : 65536);
  traced::TracingService service(options);
  if (!service.Start().ok()) {
    state.SkipWithError("service did not start");
    return;
  }

  ProducerOptions producer_options;
  producer_options.socket_path = options.socket_path;
  producer_options.name = "bench";
  producer_options.buffer_exhausted_policy =
      shm_ring::BufferExhaustedPolicy::kStall;
  producer_options.stall_timeout_ms = 10000;
  base::Status status;
  std::unique_ptr<Producer> producer =
      Producer::Connect(producer_options, &status);
  std::unique_ptr<shm_ring::TraceWriterV2> writer =
      producer ? producer->NewTraceWriter(&status) : nullptr;
  if (!writer) {
    state.SkipWithError(status.message().c_str());
    (void)service.Stop(nullptr);
    return;
  }
  const std::string payload(size, 'Z');

  for (auto _ : state) {
    auto handle = writer->NewTracePacket();
    rt::TracePacket packet(handle);
    packet.set_for_testing().set_str(payload);
  }
  writer->Flush();
  const shm_ring::TraceWriterV2Stats stats = writer->stats();
  writer.reset();
  producer.reset();  // the service drains the ring one last time
  const bool drained = service.WaitForStats(
      [](const traced::ServiceStats& s) {
        return s.producers.producers_connected == 0;
      },
      60000);

  traced::ServiceSummary summary;
  const bool stopped = service.Stop(&summary).ok();
  const uint64_t emitted =
      summary.export_summary.drainer_stats.reader.bytes_emitted;
  if (!drained || !stopped) {
    state.SkipWithError("the service did not drain or stop");
  } else if (stats.packets_dropped != 0 ||
             stats.packets_committed !=
                 static_cast<uint64_t>(state.iterations()) ||
             emitted != stats.bytes_written) {
    state.SkipWithError("data was lost");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(emitted));
  state.counters["drain_requests"] =
      static_cast<double>(summary.stats.producers.drain_requests);
}
BENCHMARK(BM_EndToEnd_ProducerToService)
    ->Arg(32)
    ->Arg(1024)
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace ringtrace
