/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Many writers, one ring, one drainer: aggregate throughput.
//
//  BM_Ring_MultiWriter/N/S       N writer threads, each with its own
//                                RingWriter (kStall), write S-byte packets
//                                into one 256 KiB ring of 4 KiB chunks while
//                                one thread runs the RingDrainer (1 ms head
//                                grace, the service's default) into a sink
//                                that copies every fragment out (as
//                                TraceBufferV2 would) and counts what
//                                arrived. items/s and bytes/s count only
//                                packets that arrived (a packet arrives with
//                                its last fragment); "arrived" is the
//                                fraction of ended packets that did.
//  BM_MultiThreadMemcpy/N/S      the baseline: N threads memcpy the same
//                                number of S-byte packets into private
//                                256 KiB buffers. No sharing, no protocol.
//
// Both are wall-clock (UseRealTime) and create their threads once per
// iteration. Read the ratio of the two at the same N and S; on a machine
// with fewer cores than N + 1 threads neither scales.

#include <benchmark/benchmark.h>

#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "src/base/test/benchmark_utils.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/service/ring_drainer/chunk_sink.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::RingWriter;

constexpr uint32_t kChunkSize = 4096;
constexpr uint32_t kNumChunks = 64;  // 256 KiB, Perfetto's default SMB size
constexpr BufferID kBufferId = 1;
constexpr size_t kPrivateBytes = 256u << 10;

uint64_t PacketsPerWriter(size_t size) {
  if (bench::IsBenchmarkFunctionalOnly())
    return 64;
  return size <= 64 ? 40'000 : 4'000;
}

// Copies each fragment into a private chunk-sized buffer (the copy the
// drainer would make into a trace buffer) and counts, on commit, the
// packets whose last fragment arrived and the fragment bytes.
class CountingSink : public ChunkSink {
 public:
  CountingSink() : scratch_(new uint8_t[kChunkSize]) {}
  uint8_t* BeginChunkFragments(ProducerID,
                               const ClientIdentity&,
                               WriterID,
                               ChunkID,
                               const uint32_t* sizes,
                               size_t num_fragments,
                               shm_ring::ChunkFlags flags) override {
    uint64_t off = 0;
    for (size_t i = 0; i < num_fragments; ++i)
      off += sizes[i];
    if (off > kChunkSize)
      return nullptr;  // cannot happen for a validated 4 KiB chunk
    pending_bytes_ = off;
    pending_packets_ =
        num_fragments -
        ((flags & shm_ring::kFlagContinuesOnNext) && num_fragments ? 1 : 0);
    return scratch_.get();
  }
  void CommitPendingChunk() override {
    packets += pending_packets_;
    bytes += pending_bytes_;
  }
  void AbortPendingChunk() override {}

  uint64_t packets = 0;
  uint64_t bytes = 0;

 private:
  std::unique_ptr<uint8_t[]> scratch_;
  uint64_t pending_packets_ = 0;
  uint64_t pending_bytes_ = 0;
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

void BM_Ring_MultiWriter(benchmark::State& state) {
  const uint32_t num_writers = static_cast<uint32_t>(state.range(0));
  const size_t size = static_cast<size_t>(state.range(1));
  const uint64_t per_writer = PacketsPerWriter(size);
  shm_ring::TestRing ring(kChunkSize, kNumChunks);
  CountingSink sink;
  // The service's default head grace (1 ms): open chunks at the head are
  // left to their writers for a while instead of being scraped at once.
  RingDrainerOptions drainer_options;
  drainer_options.head_grace_ns = 1'000'000;
  RingDrainer drainer(drainer_options);
  RingConfig config;
  config.view = ring.view();
  config.allowed_buffers = {{kBufferId, &sink}};
  const RingId id = drainer.AddRing(config);
  std::vector<std::unique_ptr<RingWriter>> writers;
  for (uint32_t w = 0; w < num_writers; ++w) {
    RingWriter::Options o;
    o.writer_id = static_cast<WriterID>(w + 1);
    o.target_buffer = kBufferId;
    o.policy = shm_ring::BufferExhaustedPolicy::kStall;
    o.stall_timeout_ms = 10'000;
    writers.push_back(std::make_unique<RingWriter>(ring.view(), o));
  }
  std::vector<uint8_t> packet(size, 0x5a);
  uint64_t ended = 0;
  for (auto _ : state) {
    std::atomic<bool> writers_done{false};
    std::thread drain_thread([&] {
      // Bounded: once the writers are done every pass makes progress until
      // the ring is empty.
      for (;;) {
        // acquire; pairs with the release store below.
        const bool done = writers_done.load(std::memory_order_acquire);
        const PassResult r = drainer.DrainRing(
            id, done ? DrainMode::kFlush : DrainMode::kNormal);
        if (r.positions_resolved == 0 && !r.more) {
          if (done)
            break;
          std::this_thread::yield();
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

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
