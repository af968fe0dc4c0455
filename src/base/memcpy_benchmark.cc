/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// BM_Memcpy: the copy-limit baseline every ringtrace benchmark is read
// against. Same byte sizes as the component benchmarks, same binary, so a
// ratio can be read from one run. Source and destination are distinct,
// cache-warm buffers; the destination is clobbered so the copy is not elided.

#include <benchmark/benchmark.h>

#include <string.h>

#include <vector>

namespace {

void BM_Memcpy(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  std::vector<char> src(size, 'x');
  std::vector<char> dst(size);
  for (auto _ : state) {
    memcpy(dst.data(), src.data(), size);
    benchmark::ClobberMemory();
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(size));
}

BENCHMARK(BM_Memcpy)
    ->Arg(16)
    ->Arg(32)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(4096)
    ->Arg(16 * 1024)
    ->Arg(64 * 1024);

}  // namespace
