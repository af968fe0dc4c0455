/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The cost of a ring writer's notification when it is coalesced, i.e. what
// an app thread pays per chunk publication while a DrainRequest is in flight
// (the common case: DrainNotifier's fast path). The real clock
// (CoarseMonotonicClock) is used and the retry interval is long, so every
// timed call takes the coalesced path: two relaxed loads (state word,
// read_pos), a clock read through the vDSO, two compares and an increment of
// the thread's counter stripe.
//
// Baselines in the same run:
//   BM_ProducerBaselineAtomicExchange  one uncontended atomic exchange (each
//       thread on its own cache line): the cost of the cheapest "claim a
//       flag" a notifier could do with one RMW.
//   BM_ProducerBaselineCoarseClock     the clock read alone, the largest
//       part of the fast path.
// ->Threads(2) runs show that concurrent notifications do not contend: they
// only read the shared state word and each thread increments its own stripe.
// No bytes move, so items/s (notifications) is reported, not bytes/s.

#include <benchmark/benchmark.h>

#include <atomic>

#include "src/tracing/producer/drain_notifier.h"
#include "src/tracing/producer/test/fake_drain_transport.h"

namespace ringtrace {
namespace producer {
namespace {

// Shared by the benchmark threads; the first notification (untimed, before
// the loop of the first run) claims the one request, the rest coalesce.
struct CoalescedNotifier {
  CoalescedNotifier() : notifier(MakeOptions(this)) { notifier.Notify(); }
  static DrainNotifier::Options MakeOptions(CoalescedNotifier* self) {
    DrainNotifier::Options options;
    options.read_pos = &self->read_pos;
    options.retry_ms = DrainNotifier::kMaxRetryMs;
    options.transport = &self->transport;
    return options;
  }
  std::atomic<uint32_t> read_pos{0};
  FakeDrainTransport transport;
  DrainNotifier notifier;
};

CoalescedNotifier* GetCoalescedNotifier() {
  static CoalescedNotifier* const instance = new CoalescedNotifier();
  return instance;
}

void BM_ProducerDrainNotifierCoalesced(benchmark::State& state) {
  CoalescedNotifier* n = GetCoalescedNotifier();
  for (auto _ : state)
    n->notifier.Notify();
  if (n->transport.calls() != 1)
    state.SkipWithError("a notification was not coalesced");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_ProducerDrainNotifierCoalesced)->Threads(1)->Threads(2);

void BM_ProducerBaselineAtomicExchange(benchmark::State& state) {
  struct alignas(64) Line {
    std::atomic<uint64_t> word{0};
  };
  Line line;  // on this thread's stack: uncontended
  uint64_t i = 0;
  for (auto _ : state) {
    // relaxed: a baseline; the value is only kept alive.
    benchmark::DoNotOptimize(
        line.word.exchange(++i, std::memory_order_relaxed));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_ProducerBaselineAtomicExchange)->Threads(1)->Threads(2);

void BM_ProducerBaselineCoarseClock(benchmark::State& state) {
  CoarseMonotonicClock clock;
  for (auto _ : state)
    benchmark::DoNotOptimize(clock.NowMs());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_ProducerBaselineCoarseClock);

}  // namespace
}  // namespace producer
}  // namespace ringtrace
