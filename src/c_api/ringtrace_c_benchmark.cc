/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The C API's per-event cost beside the C++ macros doing the same, in the
// same binary and on the same writer setup (a bound writer over a private
// ring drained synchronously, as the TrackEvent benchmarks): a slice pair
// with one int argument (RT_TRACE_EVENT_BEGIN/END, the explicit begin and
// end the C API has), a counter, and a disabled category. The C events go
// through the C header's macros (the enabled check inline, then the call,
// names interned by address); BM_CApi_SlicePairByContentNames is the
// function with names interned by content, the path of the Python package.

// Categories for this benchmark only (see RT_TRACK_EVENT_NAMESPACE).
#define RT_TRACK_EVENT_NAMESPACE rt_c_api_benchmark_categories

#include <benchmark/benchmark.h>

#include "ringtrace/c/ringtrace.h"
#include "ringtrace/track_event.h"
#include "src/tracing/core/encoding/test/bench_writer.h"

RT_DEFINE_CATEGORIES("bench.capi.cpp", "bench.capi.cpp.off");

namespace ringtrace {
namespace {

ringtrace_category* CCategory(const char* name) {
  ringtrace_category* category = nullptr;
  if (ringtrace_category_register(name, nullptr, nullptr, 0, &category) !=
      RINGTRACE_OK) {
    return nullptr;
  }
  return category;
}

// Enables the C++ and the C categories of the enabled benchmarks (bit 0)
// and binds a writer for the benchmark's scope.
class EnabledBench {
 public:
  explicit EnabledBench(benchmark::State& state)
      : state_(state),
        c_(CCategory("bench.capi.c")),
        bind_(bench_.writer.get()) {
    track_event::SetCategoriesEnabled("bench.capi.cpp,bench.capi.c");
    if (c_ == nullptr || !RINGTRACE_CATEGORY_ENABLED(c_))
      state.SkipWithError("the C category is not enabled");
  }
  ~EnabledBench() {
    bench_.writer->Flush();
    if (bench_.writer->stats().packets_dropped != 0)
      state_.SkipWithError("unexpected loss");
    state_.SetItemsProcessed(static_cast<int64_t>(state_.iterations()));
    track_event::SetCategoriesEnabled("-bench.capi.cpp,-bench.capi.c");
  }
  const ringtrace_category* c() const { return c_; }

 private:
  benchmark::State& state_;
  ringtrace_category* const c_;
  encoding::BenchWriter bench_;
  track_event::ScopedThreadWriter bind_;
};

void BM_CApi_CppMacroSlicePair(benchmark::State& state) {
  EnabledBench bench(state);
  int64_t i = 0;
  for (auto _ : state) {
    RT_TRACE_EVENT_BEGIN("bench.capi.cpp", "Slice", "i", i);
    RT_TRACE_EVENT_END("bench.capi.cpp");
    i++;
  }
}
BENCHMARK(BM_CApi_CppMacroSlicePair);

void BM_CApi_SlicePair(benchmark::State& state) {
  EnabledBench bench(state);
  const ringtrace_category* c = bench.c();
  int64_t i = 0;
  for (auto _ : state) {
    ringtrace_arg arg;
    arg.name = "i";
    arg.type = RINGTRACE_ARG_INT64;
    arg.value.int64_value = i;
    RINGTRACE_SLICE_BEGIN(c, "Slice", &arg, 1);
    RINGTRACE_SLICE_END(c);
    i++;
  }
}
BENCHMARK(BM_CApi_SlicePair);

void BM_CApi_SlicePairByContentNames(benchmark::State& state) {
  EnabledBench bench(state);
  const ringtrace_category* c = bench.c();
  int64_t i = 0;
  for (auto _ : state) {
    ringtrace_arg arg;
    arg.name = "i";
    arg.type = RINGTRACE_ARG_INT64;
    arg.value.int64_value = i;
    ringtrace_slice_begin(c, "Slice", 0, &arg, 1);
    ringtrace_slice_end(c);
    i++;
  }
}
BENCHMARK(BM_CApi_SlicePairByContentNames);

void BM_CApi_CppMacroCounter(benchmark::State& state) {
  EnabledBench bench(state);
  int64_t i = 0;
  for (auto _ : state) {
    RT_TRACE_COUNTER("bench.capi.cpp", "count", i);
    i++;
  }
}
BENCHMARK(BM_CApi_CppMacroCounter);

void BM_CApi_Counter(benchmark::State& state) {
  EnabledBench bench(state);
  const ringtrace_category* c = bench.c();
  int64_t i = 0;
  for (auto _ : state) {
    RINGTRACE_COUNTER_INT64(c, "count", i);
    i++;
  }
}
BENCHMARK(BM_CApi_Counter);

void BM_CApi_CppMacroDisabled(benchmark::State& state) {
  track_event::SetCategoriesEnabled("-bench.capi.cpp.off");
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(i);
    RT_TRACE_EVENT_BEGIN("bench.capi.cpp.off", "Disabled", "i", i);
    RT_TRACE_EVENT_END("bench.capi.cpp.off");
    i++;
  }
}
BENCHMARK(BM_CApi_CppMacroDisabled);

void BM_CApi_Disabled(benchmark::State& state) {
  const ringtrace_category* c = CCategory("bench.capi.c.off");
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(i);
    ringtrace_arg arg;
    arg.name = "i";
    arg.type = RINGTRACE_ARG_INT64;
    arg.value.int64_value = i;
    RINGTRACE_SLICE_BEGIN(c, "Disabled", &arg, 1);
    RINGTRACE_SLICE_END(c);
    i++;
  }
}
BENCHMARK(BM_CApi_Disabled);

// The disabled event through the function (a call, the load, the branch):
// what a caller without the inline check (another language) pays.
void BM_CApi_DisabledFunction(benchmark::State& state) {
  const ringtrace_category* c = CCategory("bench.capi.c.off");
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(i);
    benchmark::DoNotOptimize(
        ringtrace_slice_begin(c, "Disabled", 0, nullptr, 0));
    i++;
  }
}
BENCHMARK(BM_CApi_DisabledFunction);

}  // namespace
}  // namespace ringtrace
