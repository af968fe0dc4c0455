/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Cost of one TraceClockNs() reading, beside its baselines in the same run:
// clock_gettime(CLOCK_BOOTTIME) (what it replaces, and its fallback) and a
// bare RDTSC (the floor of the TSC path).

#include <benchmark/benchmark.h>

#include <stdint.h>

#include "src/base/time.h"
#include "src/base/trace_clock.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace ringtrace {
namespace base {
namespace {

void BM_TraceClock_Now(benchmark::State& state) {
  // Past the calibration baseline, so that the TSC path is measured where
  // the process has one.
  const uint64_t until = BootTimeNs() + 2 * kTraceClockMinBaselineNs;
  while (BootTimeNs() < until)
    benchmark::DoNotOptimize(TraceClockNs());
  for (auto _ : state)
    benchmark::DoNotOptimize(TraceClockNs());
  state.SetLabel(GetTraceClockSource() == TraceClockSource::kTsc
                     ? "tsc"
                     : "boottime (no usable TSC)");
}
BENCHMARK(BM_TraceClock_Now);

void BM_TraceClock_BootTimeBaseline(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(BootTimeNs());
}
BENCHMARK(BM_TraceClock_BootTimeBaseline);

#if defined(__x86_64__)
void BM_TraceClock_RdtscBaseline(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(__rdtsc());
}
BENCHMARK(BM_TraceClock_RdtscBaseline);
#endif

}  // namespace
}  // namespace base
}  // namespace ringtrace
