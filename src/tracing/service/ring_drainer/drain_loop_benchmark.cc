/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The TrackEvent slice pair with the service's drain loop attached.
//
//  BM_TrackEvent_ScopedSlicePairDrained/K
//      the loop of BM_TrackEvent_ScopedSlicePair
//      (src/tracing/track_event/track_event_benchmark.cc, the detached
//      figure, in the same binary): RT_TRACE_EVENT("...", "Slice", "i", i),
//      a begin and an end packet with one debug annotation, into a
//      TraceWriterV2 bound to the thread with ScopedThreadWriter, over a
//      ring of K KiB in 4 KiB chunks (256: the detached benchmark's ring;
//      1024: ringtraced's default ring). Here the ring is not drained on
//      the writer's thread but by a real DrainLoop thread (the service's:
//      100 ms tick, 1 ms head grace) into a real 16 MiB RING_BUFFER
//      TraceBufferV2 (configs/demo.pbtx's size) through TraceBufferV2Sink,
//      the production sink: one copy of every chunk out of the ring, on
//      another core. The writer's delegate turns each of its notifications
//      (a chunk retired, a position burned, no room) into
//      DrainLoop::Notify(), as ringtraced's IPC thread does with a
//      producer's DrainRequest; the socket between them (the producer's
//      DrainNotifier, a send() per request it does not coalesce) is not in
//      this process: its system calls are counted on the real example app
//      in docs/performance.md. The writer's policy is the producer's
//      default, kDrop.
//
// Counters, per event (one RT_TRACE_EVENT scope: its begin and its end
// packet):
//   drains          drain passes over the ring (notified, tick, flush)
//   loop_wakeups    wake-ups of the drain loop thread
//   chunks          chunks turned over: committed by the reader into the
//                   trace buffer
//   scrapes         open chunks the reader took a prefix of
//   drain_requests  the writer's notifications (DrainLoop::Notify calls)
//   dropped         packets the writer lost (kDrop: the drain thread fell
//                   more than a ring behind); 0 in a figure worth reading
// Bytes are what the writer put into the ring (TraceWriterV2Stats).
//
// What the difference to the detached figure holds: the drain thread's
// reads of every chunk and state word the writer just wrote (the cache
// lines move to the other core and back when the writer reuses the chunk),
// the writer's Notify() (a mutex and, when the loop sleeps, a futex wake),
// and a writer that finds no free chunk (dropped). The detached benchmark's
// reader runs on the writer's thread and copies nothing.

#define RT_TRACK_EVENT_NAMESPACE rt_drain_loop_benchmark_categories

#include <benchmark/benchmark.h>

#include <stdint.h>

#include <memory>

#include "ringtrace/trace_writer_v2.h"
#include "ringtrace/track_event.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"
#include "src/tracing/service/ring_drainer/drain_loop.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/trace_buffer_v2_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

RT_DEFINE_CATEGORIES("bench.drained");

namespace ringtrace {
namespace ring_drainer {
namespace {

using trace_buffer::TraceBufferV2;

constexpr uint32_t kChunkSize = 4096;
constexpr BufferID kBufferId = 1;
constexpr ProducerID kProducerId = 1;
constexpr size_t kTraceBufferBytes = 16u << 20;  // configs/demo.pbtx

// The writer's delegate: every notification becomes a DrainLoop::Notify()
// of the ring, counted. Called on the writer's thread only.
class LoopNotifier : public shm_ring::RingWriterDelegate {
 public:
  LoopNotifier(DrainLoop* loop, RingId ring) : loop_(loop), ring_(ring) {}

  void OnPositionBurned(uint32_t) override { Request(); }
  void OnChunkPublished(uint32_t) override { Request(); }
  void OnDrainRequested() override { Request(); }

  // Read on the writer's thread.
  uint64_t requests() const { return requests_; }

 private:
  void Request() {
    ++requests_;
    loop_->Notify(ring_);
  }

  DrainLoop* const loop_;
  const RingId ring_;
  uint64_t requests_ = 0;
};

// What the drain thread did for the ring so far (read on its thread).
struct DrainFigures {
  RingStats ring;
  DrainLoop::LoopStats loop;
};

DrainFigures ReadFigures(DrainLoop* loop, RingId id) {
  DrainFigures f;
  loop->RunSync([&](RingDrainer* d) { f.ring = d->ring_stats(id); });
  f.loop = loop->loop_stats();
  return f;
}

void BM_TrackEvent_ScopedSlicePairDrained(benchmark::State& state) {
  const uint32_t num_chunks =
      static_cast<uint32_t>(state.range(0)) * 1024u / kChunkSize;
  shm_ring::TestRing ring(kChunkSize, num_chunks);
  std::unique_ptr<TraceBufferV2> buffer = TraceBufferV2::Create(
      kTraceBufferBytes, TraceBufferV2::OverwritePolicy::kOverwrite);
  if (!buffer) {
    state.SkipWithError("no trace buffer");
    return;
  }
  TraceBufferV2Sink sink(buffer.get());

  // ringtraced's drain loop (ServiceCore::Options' defaults).
  DrainLoop::Options loop_options;
  loop_options.tick_ns = 100'000'000;
  loop_options.drainer.head_grace_ns = 1'000'000;
  DrainLoop loop(loop_options);
  RingConfig config;
  config.view = ring.view();
  config.producer_id = kProducerId;
  config.allowed_buffers = {{kBufferId, &sink}};
  RingId id = 0;
  // Before Start(): runs on this thread.
  loop.RunSync([&](RingDrainer* d) { id = d->AddRing(config); });
  loop.Start();

  LoopNotifier notifier(&loop, id);
  shm_ring::TraceWriterV2::Options writer_options;
  writer_options.writer_id = 1;
  writer_options.target_buffer = kBufferId;
  writer_options.delegate = &notifier;
  std::unique_ptr<shm_ring::TraceWriterV2> writer =
      shm_ring::TraceWriterV2Owner::Create(ring.view(), writer_options);

  track_event::SetCategoriesEnabled("bench.drained");
  uint64_t requests = 0;
  shm_ring::TraceWriterV2Stats written;
  DrainFigures before, after;
  {
    track_event::ScopedThreadWriter bind(writer.get());
    // Only the loop is timed: the descriptors the binding wrote and their
    // drain are not in the figures.
    writer->Flush();
    loop.Flush();
    before = ReadFigures(&loop, id);
    const uint64_t requests_before = notifier.requests();
    const shm_ring::TraceWriterV2Stats written_before = writer->stats();
    int64_t i = 0;
    for (auto _ : state) {
      RT_TRACE_EVENT("bench.drained", "Slice", "i", i);
      i++;
    }
    // Untimed from here on.
    writer->Flush();
    loop.Flush();
    after = ReadFigures(&loop, id);
    requests = notifier.requests() - requests_before;
    const shm_ring::TraceWriterV2Stats w = writer->stats();
    written.bytes_written = w.bytes_written - written_before.bytes_written;
    written.packets_dropped =
        w.packets_dropped - written_before.packets_dropped;
  }
  loop.Stop();

  const auto per_event = [](uint64_t n) {
    return benchmark::Counter(static_cast<double>(n),
                              benchmark::Counter::kAvgIterations);
  };
  state.counters["drains"] = per_event(after.ring.passes - before.ring.passes);
  state.counters["loop_wakeups"] =
      per_event(after.loop.wakeups - before.loop.wakeups);
  state.counters["chunks"] = per_event(after.ring.reader.chunks_emitted -
                                       before.ring.reader.chunks_emitted);
  state.counters["scrapes"] =
      per_event(after.ring.reader.scrapes - before.ring.reader.scrapes);
  state.counters["drain_requests"] = per_event(requests);
  state.counters["dropped"] = per_event(written.packets_dropped);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(written.bytes_written));
  // Everything the writer kept went through the drainer into the buffer.
  if (after.ring.reader.protocol_errors != 0 ||
      after.ring.reader.bytes_emitted - before.ring.reader.bytes_emitted <
          written.bytes_written) {
    state.SkipWithError("the drainer did not take what the writer wrote");
  }
}
BENCHMARK(BM_TrackEvent_ScopedSlicePairDrained)->Arg(256)->Arg(1024);

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
