/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Cost of the TrackEvent macros. Baselines in the same binary: an empty loop
// body (what a disabled event is compared with) and the typed writer of
// src/tracing/core/encoding writing the same slice begin by hand is
// BM_TypedWriter_TrackEvent. Timestamps (clock_gettime) are included in the
// enabled figures.

#define RT_TRACK_EVENT_NAMESPACE rt_track_event_benchmark_categories

#include <benchmark/benchmark.h>

#include "ringtrace/track_event.h"
#include "src/tracing/core/encoding/test/bench_writer.h"

RT_DEFINE_CATEGORIES("bench.on", "bench.off");

namespace ringtrace {
namespace track_event {
namespace {

void BM_TrackEvent_EmptyLoopBaseline(benchmark::State& state) {
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(i);
    i++;
  }
}
BENCHMARK(BM_TrackEvent_EmptyLoopBaseline);

void BM_TrackEvent_Disabled(benchmark::State& state) {
  SetCategoriesEnabled("-bench.off");
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(i);
    RT_TRACE_EVENT("bench.off", "Disabled", "i", i);
    i++;
  }
}
BENCHMARK(BM_TrackEvent_Disabled);

// Begin + end of one slice with one argument, per iteration.
void BM_TrackEvent_ScopedSlicePair(benchmark::State& state) {
  SetCategoriesEnabled("bench.on");
  encoding::BenchWriter bench;
  ScopedThreadWriter bind(bench.writer.get());
  int64_t i = 0;
  for (auto _ : state) {
    RT_TRACE_EVENT("bench.on", "Slice", "i", i);
    i++;
  }
  bench.writer->Flush();
  if (bench.writer->stats().packets_dropped != 0)
    state.SkipWithError("unexpected loss");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_TrackEvent_ScopedSlicePair);

void BM_TrackEvent_Counter(benchmark::State& state) {
  SetCategoriesEnabled("bench.on");
  encoding::BenchWriter bench;
  ScopedThreadWriter bind(bench.writer.get());
  int64_t i = 0;
  for (auto _ : state) {
    RT_TRACE_COUNTER("bench.on", "value", i);
    i++;
  }
  bench.writer->Flush();
  if (bench.writer->stats().packets_dropped != 0)
    state.SkipWithError("unexpected loss");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_TrackEvent_Counter);

}  // namespace
}  // namespace track_event
}  // namespace ringtrace
