/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// RingWriter throughput, chunk turnover included (see bench_ring.h for how
// the benchmark plays the reader). Each iteration writes one packet, so time
// per iteration is ns/packet; bytes/s counts packet payload bytes only.
//
// Baselines in the same binary: BM_Memcpy (src/base, cache-warm buffers) and
// BM_RingMemcpy below, which copies the same packets back to back through a
// buffer of the ring's size (the shape of the writer's stores, no protocol).

#include <benchmark/benchmark.h>

#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <memory>
#include <vector>

#include "src/base/test/benchmark_utils.h"
#include "src/tracing/core/shm_ring/bench_ring.h"
#include "src/tracing/core/shm_ring/ring_writer.h"

namespace ringtrace {
namespace shm_ring {
namespace {

inline void WriteOne(RingWriter* w, const uint8_t* data, size_t size) {
  RingWriter::Span span;
  if (RT_UNLIKELY(!w->BeginPacket(&span)))
    abort();  // the drainer keeps the ring from filling
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
      abort();
  }
  w->EndPacket(span.wptr);
}

void RunRingWriter(benchmark::State& state, uint32_t chunk_size) {
  const size_t size = static_cast<size_t>(state.range(0));
  BenchRing ring(chunk_size, kBenchRingBytes);
  RingWriter writer(ring.region->view(), ring.options());
  std::vector<uint8_t> packet(size, 0x5a);
  for (auto _ : state) {
    WriteOne(&writer, packet.data(), size);
  }
  writer.Flush(nullptr);
  if (writer.stats().loss_events != 0)
    state.SkipWithError("unexpected loss");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(size));
  state.counters["chunks"] = static_cast<double>(writer.stats().chunks_claimed +
                                                 writer.stats().chunks_reused);
}

// 4 KiB chunks: small packets fill up to 255 fragments per chunk.
void BM_RingWriter_SmallPackets(benchmark::State& state) {
  RunRingWriter(state, 4096);
}
BENCHMARK(BM_RingWriter_SmallPackets)->Arg(16)->Arg(32)->Arg(64);

// 32 KiB chunks: 1 KiB and 16 KiB packets, and 128 KiB packets that span
// four or five chunks.
void BM_RingWriter_LargePackets(benchmark::State& state) {
  RunRingWriter(state, 32768);
}
BENCHMARK(BM_RingWriter_LargePackets)
    ->Arg(1024)
    ->Arg(16 * 1024)
    ->Arg(128 * 1024);

// memcpy of the same packets back to back through a buffer of the ring's
// size. Second argument: the destination's offset from 64-byte alignment.
// Offset 6 reproduces the writer's shape: format-00 payload starts at byte 6
// of a chunk, so every packet copy is misaligned the same way.
void BM_RingMemcpy(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  const size_t offset = static_cast<size_t>(state.range(1));
  const size_t ring_bytes = kBenchRingBytes;
  const size_t alloc = ring_bytes + 64;
  std::unique_ptr<uint8_t, decltype(&free)> ring(
      static_cast<uint8_t*>(aligned_alloc(64, alloc)), &free);
  memset(ring.get(), 0, alloc);
  std::vector<uint8_t> packet(size, 0x5a);
  size_t off = 0;
  for (auto _ : state) {
    if (off + size > ring_bytes)
      off = 0;
    memcpy(ring.get() + offset + off, packet.data(), size);
    off += size;
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(ring.get());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(size));
}
BENCHMARK(BM_RingMemcpy)
    ->Args({16, 0})
    ->Args({32, 0})
    ->Args({64, 0})
    ->Args({1024, 0})
    ->Args({1024, 6})
    ->Args({16 * 1024, 0})
    ->Args({16 * 1024, 6})
    ->Args({128 * 1024, 0})
    ->Args({128 * 1024, 6});

// The two state-word CASes per-packet publication adds to every packet
// (spec 6.2 step 5 and the reuse of 5.4), alone: Complete -> Acquired
// (relaxed) and Acquired -> Complete (release / acquire on failure) on a
// chunk state word of the same memfd mapping, uncontended. Read against
// BM_RingWriter_* to see how much of a packet's time is these two
// instructions.
void BM_StateWordCasPair(benchmark::State& state) {
  BenchRing ring(4096, kBenchRingBytes);
  std::atomic<uint32_t>* const word = ring.region->view().chunk_state(0);
  const StateWord acquired =
      MakeDataWord(ChunkState::kAcquired, 0, kNoChunkFlags, 1, 1);
  const StateWord complete =
      MakeDataWord(ChunkState::kComplete, 0, kNoChunkFlags, 1, 1);
  word->store(complete, std::memory_order_relaxed);
  for (auto _ : state) {
    StateWord expected = complete;
    word->compare_exchange_strong(expected, acquired, std::memory_order_relaxed,
                                  std::memory_order_relaxed);
    expected = acquired;
    word->compare_exchange_strong(expected, complete, std::memory_order_release,
                                  std::memory_order_acquire);
  }
  if (word->load(std::memory_order_relaxed) != complete)
    state.SkipWithError("a CAS failed");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_StateWordCasPair);

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
