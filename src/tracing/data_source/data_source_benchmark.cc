/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The cost of DataSource<T>::Trace() when no instance of the type runs: the
// fast path every call site pays while nobody traces (one acquire load and
// a branch). Read it beside BM_DataSource_EmptyLoopBaseline (the loop with
// the same DoNotOptimize and nothing else) and BM_TrackEvent_Disabled of
// the same run.

#include <benchmark/benchmark.h>

#include <stdint.h>

#include "ringtrace/data_source.h"
#include "src/tracing/data_source/test/test_data_source.rtzero.h"

namespace ringtrace {
namespace {

namespace rtt = ringtrace::data_source_test::rtzero;

class BenchSource : public DataSource<BenchSource> {};

void BM_DataSource_EmptyLoopBaseline(benchmark::State& state) {
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(i);
    i++;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DataSource_EmptyLoopBaseline);

// Never registered, so never enabled: the lambda must not run.
void BM_DataSource_TraceDisabled(benchmark::State& state) {
  int64_t i = 0;
  int64_t ran = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(i);
    BenchSource::Trace([&](BenchSource::TraceContext ctx) {
      auto packet = ctx.NewTracePacket<rtt::TestSourcePacket>();
      packet->set_test_source_event().set_seq(static_cast<uint64_t>(i));
      ran++;
    });
    i++;
  }
  if (ran != 0)
    state.SkipWithError("the lambda ran without an instance");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DataSource_TraceDisabled);

}  // namespace
}  // namespace ringtrace
