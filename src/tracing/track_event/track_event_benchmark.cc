/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Cost of the TrackEvent macros. Baselines in the same binary: an empty loop
// body (what a disabled event is compared with), the bound-writer path (bit
// 0) for the instance paths, and the typed writer of
// src/tracing/core/encoding writing the same slice begin by hand is
// BM_TypedWriter_TrackEvent. Timestamps (NowNs(): the TSC where usable,
// else clock_gettime; RINGTRACE_TRACE_CLOCK=boottime compares the two) are
// included in the enabled figures.

#define RT_TRACK_EVENT_NAMESPACE rt_track_event_benchmark_categories

#include <benchmark/benchmark.h>

#include <string.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ringtrace/track_event.h"
#include "src/base/time.h"
#include "src/tracing/core/encoding/test/bench_writer.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"
#include "src/tracing/core/shm_ring/writer_loss_counters.h"
#include "src/tracing/track_event/track_event_instances.h"

RT_DEFINE_CATEGORIES("bench.on", "bench.off");

namespace ringtrace {
namespace track_event {
namespace {

// The end of a benchmark on the bound writer: flushes it, fails the run if
// it lost a packet, and reports one item per iteration.
void FinishBound(benchmark::State& state, encoding::BenchWriter* bench) {
  bench->writer->Flush();
  if (bench->writer->stats().packets_dropped != 0)
    state.SkipWithError("unexpected loss");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void BM_TrackEvent_EmptyLoopBaseline(benchmark::State& state) {
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(i);
    i++;
  }
}
BENCHMARK(BM_TrackEvent_EmptyLoopBaseline);

// A disabled category while an instance runs (enabling another category):
// still one relaxed load and a branch.
void BM_TrackEvent_Disabled(benchmark::State& state) {
  SetCategoriesEnabled("-bench.off");
  InstanceConfig config;
  config.categories.enabled_categories = {"bench.on"};
  config.categories.disabled_categories = {"*"};
  base::Status status;
  const InstanceHandle instance = StartInstance(std::move(config), &status);
  if (!instance.valid())
    state.SkipWithError(status.message().c_str());
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(i);
    RT_TRACE_EVENT("bench.off", "Disabled", "i", i);
    i++;
  }
  StopInstance(instance);
}
BENCHMARK(BM_TrackEvent_Disabled);

// A disabled category named at run time: the per-thread lookup of the name,
// then the load and the branch.
void BM_TrackEvent_DynamicDisabled(benchmark::State& state) {
  const std::string category = std::string("bench.dynamic.") + "off";
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(i);
    RT_TRACE_EVENT_DYNAMIC(category, "Disabled", "i", i);
    i++;
  }
}
BENCHMARK(BM_TrackEvent_DynamicDisabled);

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
  FinishBound(state, &bench);
}
BENCHMARK(BM_TrackEvent_ScopedSlicePair);

// The floor of BM_TrackEvent_ScopedSlicePair: the same two packets, byte
// for byte (timestamp delta, sequence flags, the event with its type,
// category and name iids and one interned-name annotation; the end with its
// type), written with the typed writer straight into the same kind of
// writer, with the same two NowNs() readings; no category check, no
// target, no interning, no incremental-state check. What ScopedSlicePair
// costs above this is the TrackEvent layer's own.
void BM_TrackEvent_SlicePairFloor(benchmark::State& state) {
  namespace rt = perfetto::protos::rtzero;
  constexpr uint32_t kNeedsState = static_cast<uint32_t>(
      rt::TracePacket::SequenceFlags::SEQ_NEEDS_INCREMENTAL_STATE);
  encoding::BenchWriter bench;
  uint64_t clock = NowNs();
  int64_t i = 0;
  for (auto _ : state) {
    {
      const uint64_t now = NowNs();
      auto handle = bench.writer->NewTracePacket();
      rt::TracePacket packet(handle);
      packet.set_timestamp(now - clock);
      clock = now;
      packet.set_sequence_flags(kNeedsState);
      rt::TrackEvent event = packet.set_track_event();
      event.set_type(rt::TrackEvent::Type::TYPE_SLICE_BEGIN);
      event.add_category_iids(1);
      event.set_name_iid(2);
      rt::DebugAnnotation annotation = event.add_debug_annotations();
      annotation.set_name_iid(3);
      annotation.set_int_value(i);
    }
    {
      const uint64_t now = NowNs();
      auto handle = bench.writer->NewTracePacket();
      rt::TracePacket packet(handle);
      packet.set_timestamp(now - clock);
      clock = now;
      packet.set_sequence_flags(kNeedsState);
      packet.set_track_event().set_type(rt::TrackEvent::Type::TYPE_SLICE_END);
    }
    i++;
  }
  FinishBound(state, &bench);
}
BENCHMARK(BM_TrackEvent_SlicePairFloor);

// The floor of BM_TrackEvent_Counter, as SlicePairFloor for the pair: the
// same packet (timestamp delta, sequence flags, the event with its type,
// track uuid, category iid and value) with one NowNs() reading, and nothing
// else.
void BM_TrackEvent_CounterFloor(benchmark::State& state) {
  namespace rt = perfetto::protos::rtzero;
  constexpr uint32_t kNeedsState = static_cast<uint32_t>(
      rt::TracePacket::SequenceFlags::SEQ_NEEDS_INCREMENTAL_STATE);
  const uint64_t track = CounterTrackUuid("value");
  encoding::BenchWriter bench;
  uint64_t clock = NowNs();
  int64_t i = 0;
  for (auto _ : state) {
    const uint64_t now = NowNs();
    auto handle = bench.writer->NewTracePacket();
    rt::TracePacket packet(handle);
    packet.set_timestamp(now - clock);
    clock = now;
    packet.set_sequence_flags(kNeedsState);
    rt::TrackEvent event = packet.set_track_event();
    event.set_type(rt::TrackEvent::Type::TYPE_COUNTER);
    event.set_track_uuid(track);
    event.add_category_iids(1);
    event.set_counter_value(i);
    i++;
  }
  FinishBound(state, &bench);
}
BENCHMARK(BM_TrackEvent_CounterFloor);

void BM_TrackEvent_Counter(benchmark::State& state) {
  SetCategoriesEnabled("bench.on");
  encoding::BenchWriter bench;
  ScopedThreadWriter bind(bench.writer.get());
  int64_t i = 0;
  for (auto _ : state) {
    RT_TRACE_COUNTER("bench.on", "value", i);
    i++;
  }
  FinishBound(state, &bench);
}
BENCHMARK(BM_TrackEvent_Counter);

// Writers for instances over one private ring, drained as BenchWriter's.
struct BenchInstanceRing {
  BenchInstanceRing()
      : ring(encoding::BenchWriter::kChunkSize,
             encoding::BenchWriter::kNumChunks),
        drainer(ring.view(), encoding::BenchWriter::kNumChunks) {}
  WriterFactory Factory() {
    return [this](base::Status*) {
      shm_ring::TraceWriterV2::Options options;
      options.writer_id = ++last_id;
      options.target_buffer = options.writer_id;
      options.delegate = &drainer;
      auto writer = shm_ring::TraceWriterV2Owner::Create(ring.view(), options);
      losses.push_back(std::make_unique<shm_ring::WriterLossCounters>());
      shm_ring::TraceWriterV2Owner::AttachProducerControls(
          writer.get(), nullptr, losses.back().get());
      return writer;
    };
  }
  shm_ring::TestRing ring;
  encoding::HalfRingDrainer drainer;
  // One per writer (the benchmark thread creates them; read after).
  std::vector<std::unique_ptr<shm_ring::WriterLossCounters>> losses;
  shm_ring::WriterID last_id = 0;
};

// Begin + end of one slice with one argument, per iteration, written once
// per instance (state.range(0) instances enable the category), into the
// thread's lazily created writer of each. Compare with
// BM_TrackEvent_ScopedSlicePair (the bound writer).
void BM_TrackEvent_InstanceSlicePair(benchmark::State& state) {
  SetCategoriesEnabled("-*");
  BenchInstanceRing ring;
  std::vector<InstanceHandle> instances;
  for (int64_t n = 0; n < state.range(0); n++) {
    InstanceConfig config;
    config.categories.enabled_categories = {"bench.on"};
    config.categories.disabled_categories = {"*"};
    config.new_writer = ring.Factory();
    base::Status status;
    instances.push_back(StartInstance(std::move(config), &status));
    if (!instances.back().valid())
      state.SkipWithError(status.message().c_str());
  }
  int64_t i = 0;
  for (auto _ : state) {
    RT_TRACE_EVENT("bench.on", "Slice", "i", i);
    i++;
  }
  for (const InstanceHandle& instance : instances)
    StopInstance(instance);
  ReleaseStoppedInstanceWriters();  // destroys (flushes) the writers
  for (const auto& losses : ring.losses) {
    // Relaxed: the writers were this thread's.
    if (losses->packets_dropped_before_end.load(std::memory_order_relaxed) +
            losses->packets_dropped_after_end.load(std::memory_order_relaxed) !=
        0) {
      state.SkipWithError("unexpected loss");
    }
  }
  if (ring.losses.size() != instances.size())
    state.SkipWithError("one writer per instance expected");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_TrackEvent_InstanceSlicePair)->Arg(1)->Arg(2);

// A thread's first event for an instance, timed inside a new thread (manual
// time, CLOCK_MONOTONIC around the macro): it creates the thread's writer
// through the instance's factory and writes the sequence's first packets
// (the clear packet, the process and thread descriptors) before the event.
// Baseline in the same iteration: the thread's second event, the counter
// "later_event_ns". The thread exits after it, flushing and releasing its
// writer (not timed).
void BM_TrackEvent_FirstEventOfAThread(benchmark::State& state) {
  SetCategoriesEnabled("-*");
  BenchInstanceRing ring;
  InstanceConfig config;
  config.categories.enabled_categories = {"bench.on"};
  config.categories.disabled_categories = {"*"};
  config.new_writer = ring.Factory();
  base::Status status;
  const InstanceHandle instance = StartInstance(std::move(config), &status);
  if (!instance.valid())
    state.SkipWithError(status.message().c_str());
  uint64_t later_ns = 0;
  for (auto _ : state) {
    uint64_t first = 0, second = 0;
    std::thread([&first, &second] {
      const uint64_t t0 = base::MonotonicNs();
      RT_TRACE_INSTANT("bench.on", "First");
      const uint64_t t1 = base::MonotonicNs();
      RT_TRACE_INSTANT("bench.on", "Second");
      const uint64_t t2 = base::MonotonicNs();
      first = t1 - t0;
      second = t2 - t1;
    }).join();
    state.SetIterationTime(static_cast<double>(first) * 1e-9);
    later_ns += second;
  }
  StopInstance(instance);
  ReleaseStoppedInstanceWriters();
  const size_t threads = static_cast<size_t>(state.iterations());
  if (ring.losses.size() != threads)
    state.SkipWithError("one writer per thread expected");
  for (const auto& losses : ring.losses) {
    // Relaxed: each thread was joined.
    if (losses->packets_dropped_before_end.load(std::memory_order_relaxed) +
            losses->packets_dropped_after_end.load(std::memory_order_relaxed) !=
        0) {
      state.SkipWithError("unexpected loss");
    }
  }
  state.counters["later_event_ns"] = benchmark::Counter(
      static_cast<double>(later_ns) / static_cast<double>(threads));
}
// Bounded: each thread takes a WriterID (16 bits) of its own.
BENCHMARK(BM_TrackEvent_FirstEventOfAThread)->UseManualTime()->Iterations(5000);

}  // namespace
}  // namespace track_event
}  // namespace ringtrace
