/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Many writers, one ring, one drainer: aggregate throughput.
//
//  BM_Ring_MultiWriter/N/S       N writer threads, each with its own
//                                RingWriter (kStall), write S-byte packets
//                                into one 256 KiB ring of 4 KiB chunks while
//                                one thread runs the RingDrainer (1 ms head
//                                grace, the service's default) into a real
//                                64 MiB TraceBufferV2 (RING_BUFFER) through
//                                TraceBufferV2Sink, the service's own sink
//                                (trace_buffer_v2_sink.h). The drain
//                                thread polls: pass after pass, yielding
//                                after a pass that found nothing. items/s
//                                and bytes/s count only packets that arrived
//                                in the buffer (a packet arrives with its
//                                last fragment); "arrived" is the fraction
//                                of ended packets that did.
//  BM_Ring_MultiWriter_NotifiedDrain/N/S
//                                the same, with the drain thread asleep
//                                until a writer's delegate wakes it (a chunk
//                                the writer is done with was published, or
//                                it needs room) or a 1 ms tick: how
//                                ringtraced's drain loop is driven.
//  BM_Ring_MultiWriter_BatchedDrain/N/S
//                                the same, with a 50 us sleep after a pass
//                                that found nothing: the drainer takes the
//                                chunks in bursts.
//  BM_MultiThreadMemcpy/N/S      the baseline: N threads memcpy the same
//                                number of S-byte packets into private
//                                256 KiB buffers. No sharing, no protocol.
//
// All are wall-clock (UseRealTime) and create their threads once per
// iteration. Read the ratio to the baseline at the same N and S (and, for
// one writer, to BM_RingWriter_SmallPackets, the writer alone); on a machine
// with fewer cores than N + 1 threads none of them scales.
// "passes_per_chunk" is drain passes per chunk claimed: how often the drain
// thread looked at the ring for each chunk the writers filled.

#include <benchmark/benchmark.h>

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "src/base/test/benchmark_utils.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/service/ring_drainer/chunk_sink.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/trace_buffer_v2_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::RingWriter;

constexpr uint32_t kChunkSize = 4096;
constexpr uint32_t kNumChunks = 64;  // 256 KiB, Perfetto's default SMB size
constexpr BufferID kBufferId = 1;
constexpr size_t kPrivateBytes = 256u << 10;
constexpr size_t kTraceBufferSize = 64u << 20;

uint64_t PacketsPerWriter(size_t size) {
  if (bench::IsBenchmarkFunctionalOnly())
    return 64;
  return size <= 64 ? 40'000 : 4'000;
}

// The buffer sink (TraceBufferV2Sink into a real TraceBufferV2) with a
// count on top: on each commit, the packets whose last fragment arrived and
// the fragment bytes. The drainer may offer an open chunk again as it grows
// (a scrape, then the whole chunk); per writer, the last chunk committed and
// what of it was counted are remembered, so each fragment counts once.
class CountingTraceBufferSink : public ChunkSink {
 public:
  explicit CountingTraceBufferSink(trace_buffer::TraceBufferV2* buffer)
      : sink_(buffer) {}
  uint8_t* BeginChunkFragments(ProducerID producer_id,
                               const ClientIdentity& identity,
                               WriterID writer_id,
                               ChunkID chunk_id,
                               const uint32_t* sizes,
                               size_t num_fragments,
                               shm_ring::ChunkFlags flags) override {
    pending_ = Counted{};
    pending_.writer_id = writer_id;
    pending_.chunk_id = chunk_id;
    pending_.fragments = num_fragments;
    pending_.packets =
        num_fragments -
        ((flags & shm_ring::kFlagContinuesOnNext) && num_fragments ? 1 : 0);
    for (size_t i = 0; i < num_fragments; ++i)
      pending_.bytes += sizes[i];
    return sink_.BeginChunkFragments(producer_id, identity, writer_id, chunk_id,
                                     sizes, num_fragments, flags);
  }
  void CommitPendingChunk() override {
    sink_.CommitPendingChunk();
    if (pending_.writer_id >= last_.size())
      last_.resize(pending_.writer_id + 1u);
    Counted& last = last_[pending_.writer_id];
    if (last.chunk_id == pending_.chunk_id && last.fragments != 0) {
      // A re-offer: its first fragments were counted before (and it never
      // holds fewer).
      packets += pending_.packets - std::min(pending_.packets, last.packets);
      bytes += pending_.bytes - std::min(pending_.bytes, last.bytes);
    } else {
      packets += pending_.packets;
      bytes += pending_.bytes;
    }
    last = pending_;
  }
  void AbortPendingChunk() override { sink_.AbortPendingChunk(); }

  uint64_t packets = 0;
  uint64_t bytes = 0;

 private:
  struct Counted {
    WriterID writer_id = 0;
    ChunkID chunk_id = 0;
    size_t fragments = 0;
    uint64_t packets = 0;
    uint64_t bytes = 0;
  };
  TraceBufferV2Sink sink_;
  Counted pending_;
  std::vector<Counted> last_;  // by writer ID
};

inline bool WriteOne(RingWriter* w, const uint8_t* data, size_t size) {
  RingWriter::Span span;
  if (!w->BeginPacket(&span))
    return false;
  for (;;) {
    const size_t room = static_cast<size_t>(span.end - span.wptr);
    if (RT_LIKELY(room >= size)) {
      memcpy(span.wptr, data, size);
      span.wptr += size;
      break;
    }
    memcpy(span.wptr, data, room);
    span.wptr += room;
    data += room;
    size -= room;
    if (!w->ContinuePacket(&span))
      return false;
  }
  w->EndPacket(span.wptr);
  return true;
}

// How the drain thread is driven.
enum class DrainSchedule {
  // Sleep until a writer's delegate says there is work (a chunk it is done
  // with was published, a position was burned, or it needs room), or a
  // 1 ms tick: ringtraced's drain loop, fed by the producers'
  // DrainNotifier, without the socket in between.
  kNotified,
  // Pass after pass, yielding when a pass finds nothing: a drain thread that
  // polls one ring and takes each chunk as soon as it is published.
  kPolling,
  // Pass after pass while passes find work; a pass that finds nothing is
  // followed by a 50 us sleep, so the writers publish many chunks between
  // passes and the drainer takes them in bursts.
  kBatched,
};

// The writers' delegate for kNotified: a coalescing wake-up. The first
// notification after the drain thread took the previous one wakes it; the
// others find one already pending and cost one atomic exchange (one per
// 4 KiB chunk, not per packet: per-packet publications of a chunk the
// writer keeps are not signalled, see RingWriterDelegate).
class DrainWakeup : public shm_ring::RingWriterDelegate {
 public:
  void OnChunkPublished(uint32_t) override { Wake(); }
  void OnPositionBurned(uint32_t) override { Wake(); }
  void OnDrainRequested() override { Wake(); }

  void Wake() {
    // acq_rel: the release half pairs with Take()'s acquire exchange, so a
    // pass that follows Take() sees the writer's chunk publication (made
    // before this call); the acquire half orders nothing and is free.
    if (pending_.exchange(true, std::memory_order_acq_rel))
      return;
    // The lock orders this notify after a waiter's predicate check.
    std::lock_guard<std::mutex> lock(mutex_);
    cv_.notify_one();
  }

  // Returns once a wake-up is pending or |timeout| passed.
  void Wait(std::chrono::microseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_for(lock, timeout, [this] {
      // relaxed: Take() is the acquire that orders the pass.
      return pending_.load(std::memory_order_relaxed);
    });
  }

  // Consumes the pending wake-up before a pass: a publication after this
  // point wakes the drain thread again.
  void Take() {
    // acq_rel; the acquire half pairs with Wake()'s release exchange.
    pending_.exchange(false, std::memory_order_acq_rel);
  }

 private:
  std::atomic<bool> pending_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
};

void RunMultiWriter(benchmark::State& state, DrainSchedule schedule) {
  const uint32_t num_writers = static_cast<uint32_t>(state.range(0));
  const size_t size = static_cast<size_t>(state.range(1));
  const uint64_t per_writer = PacketsPerWriter(size);
  shm_ring::TestRing ring(kChunkSize, kNumChunks);
  auto buffer = trace_buffer::TraceBufferV2::Create(
      kTraceBufferSize,
      trace_buffer::TraceBufferV2::OverwritePolicy::kOverwrite);
  CountingTraceBufferSink sink(buffer.get());
  // The service's default head grace (1 ms): open chunks at the head are
  // left to their writers for a while instead of being scraped at once.
  RingDrainerOptions drainer_options;
  drainer_options.head_grace_ns = 1'000'000;
  RingDrainer drainer(drainer_options);
  RingConfig config;
  config.view = ring.view();
  config.allowed_buffers = {{kBufferId, &sink}};
  const RingId id = drainer.AddRing(config);
  DrainWakeup wakeup;
  std::vector<std::unique_ptr<RingWriter>> writers;
  for (uint32_t w = 0; w < num_writers; ++w) {
    RingWriter::Options o;
    if (schedule == DrainSchedule::kNotified)
      o.delegate = &wakeup;
    o.writer_id = static_cast<WriterID>(w + 1);
    o.target_buffer = kBufferId;
    o.policy = shm_ring::BufferExhaustedPolicy::kStall;
    o.stall_timeout_ms = 10'000;
    writers.push_back(std::make_unique<RingWriter>(ring.view(), o));
  }
  std::vector<uint8_t> packet(size, 0x5a);
  uint64_t ended = 0;
  uint64_t passes = 0;  // drain passes, written by the drain thread only
  for (auto _ : state) {
    std::atomic<bool> writers_done{false};
    std::thread drain_thread([&] {
      // Bounded: once the writers are done every pass makes progress until
      // the ring is empty.
      for (;;) {
        // acquire; pairs with the release store below.
        const bool done = writers_done.load(std::memory_order_acquire);
        if (schedule == DrainSchedule::kNotified)
          wakeup.Take();
        const PassResult r = drainer.DrainRing(
            id, done ? DrainMode::kFlush : DrainMode::kNormal);
        passes++;
        if (r.positions_resolved == 0 && !r.more) {
          if (done)
            break;
          switch (schedule) {
            case DrainSchedule::kNotified:
              wakeup.Wait(std::chrono::milliseconds(1));
              break;
            case DrainSchedule::kPolling:
              std::this_thread::yield();
              break;
            case DrainSchedule::kBatched:
              std::this_thread::sleep_for(std::chrono::microseconds(50));
              break;
          }
        }
      }
    });
    std::vector<std::thread> threads;
    std::vector<uint64_t> kept(num_writers, 0);
    for (uint32_t w = 0; w < num_writers; ++w) {
      threads.emplace_back([&, w] {
        for (uint64_t i = 0; i < per_writer; ++i)
          kept[w] += WriteOne(writers[w].get(), packet.data(), size) ? 1 : 0;
      });
    }
    for (std::thread& t : threads)
      t.join();
    for (uint64_t k : kept)
      ended += k;
    // release; pairs with the drain thread's acquire load.
    writers_done.store(true, std::memory_order_release);
    wakeup.Wake();
    drain_thread.join();
  }
  uint64_t loss_events = 0, stall_timeouts = 0, claimed = 0, stalls = 0;
  for (const auto& w : writers) {
    loss_events += w->stats().loss_events;
    stall_timeouts += w->stats().stall_timeouts;
    claimed += w->stats().chunks_claimed;
    stalls += w->stats().stalls;
  }
  const uint64_t attempted = per_writer * num_writers * state.iterations();
  state.SetItemsProcessed(static_cast<int64_t>(sink.packets));
  state.SetBytesProcessed(static_cast<int64_t>(sink.bytes));
  state.counters["arrived"] =
      attempted ? static_cast<double>(sink.packets) / attempted : 0.0;
  state.counters["ended"] = static_cast<double>(ended);
  state.counters["loss_events"] = static_cast<double>(loss_events);
  state.counters["stall_timeouts"] = static_cast<double>(stall_timeouts);
  // Chunk turnover: new chunks claimed per arrived packet (a 4 KiB chunk
  // holds up to 255 32-byte packets or 3 1-KiB ones), and writer stalls.
  state.counters["claims_per_packet"] =
      sink.packets ? static_cast<double>(claimed) / sink.packets : 0.0;
  state.counters["stalls"] = static_cast<double>(stalls);
  state.counters["passes_per_chunk"] =
      claimed ? static_cast<double>(passes) / claimed : 0.0;
}

void BM_Ring_MultiWriter(benchmark::State& state) {
  RunMultiWriter(state, DrainSchedule::kPolling);
}

void BM_Ring_MultiWriter_NotifiedDrain(benchmark::State& state) {
  RunMultiWriter(state, DrainSchedule::kNotified);
}

void BM_Ring_MultiWriter_BatchedDrain(benchmark::State& state) {
  RunMultiWriter(state, DrainSchedule::kBatched);
}

void BM_MultiThreadMemcpy(benchmark::State& state) {
  const uint32_t num_threads = static_cast<uint32_t>(state.range(0));
  const size_t size = static_cast<size_t>(state.range(1));
  const uint64_t per_thread = PacketsPerWriter(size);
  std::vector<std::unique_ptr<uint8_t[]>> dst;
  for (uint32_t t = 0; t < num_threads; ++t) {
    dst.emplace_back(new uint8_t[kPrivateBytes]);
    memset(dst.back().get(), 0, kPrivateBytes);
  }
  std::vector<uint8_t> packet(size, 0x5a);
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < num_threads; ++t) {
      threads.emplace_back([&, t] {
        uint8_t* const d = dst[t].get();
        size_t off = 0;
        for (uint64_t i = 0; i < per_thread; ++i) {
          if (off + size > kPrivateBytes)
            off = 0;
          memcpy(d + off, packet.data(), size);
          off += size;
          benchmark::ClobberMemory();
        }
        benchmark::DoNotOptimize(d);
      });
    }
    for (std::thread& th : threads)
      th.join();
  }
  const int64_t items =
      static_cast<int64_t>(per_thread * num_threads) * state.iterations();
  state.SetItemsProcessed(items);
  state.SetBytesProcessed(items * static_cast<int64_t>(size));
}

void MultiWriterArgs(benchmark::internal::Benchmark* b) {
  for (int64_t size : {32, 1024}) {
    for (int64_t n : {1, 2, 4, 8, 15})
      b->Args({n, size});
  }
  b->UseRealTime();
}
BENCHMARK(BM_Ring_MultiWriter)->Apply(MultiWriterArgs);
BENCHMARK(BM_MultiThreadMemcpy)->Apply(MultiWriterArgs);
void ScheduleArgs(benchmark::internal::Benchmark* b) {
  b->Args({1, 32})->Args({1, 1024})->Args({2, 32})->Args({15, 32});
  b->UseRealTime();
}
BENCHMARK(BM_Ring_MultiWriter_NotifiedDrain)->Apply(ScheduleArgs);
BENCHMARK(BM_Ring_MultiWriter_BatchedDrain)->Apply(ScheduleArgs);

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
