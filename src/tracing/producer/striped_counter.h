/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// StripedCounter: an event counter that many threads increment often and
// somebody reads rarely (stats).
//
// One std::atomic<uint64_t> incremented by every app thread would put a
// cache line that every increment writes on every core: the increments of
// different threads would serialize on it. Here each thread increments one
// of kStripes cache-line-sized stripes (chosen once per thread, round
// robin), so threads only share a stripe beyond kStripes threads, and the
// reader sums the stripes.
//
// Thread model: Increment() and Sum() from any thread, concurrently.
// Sum() is a snapshot that may miss increments running concurrently with it;
// once the incrementing threads are done (joined) it is exact.

#ifndef SRC_TRACING_PRODUCER_STRIPED_COUNTER_H_
#define SRC_TRACING_PRODUCER_STRIPED_COUNTER_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace producer {

class StripedCounter {
 public:
  static constexpr uint32_t kStripes = 16;

  StripedCounter() = default;
  StripedCounter(const StripedCounter&) = delete;
  StripedCounter& operator=(const StripedCounter&) = delete;

  void Increment() {
    // relaxed: a pure event count; it orders nothing and pairs with the
    // relaxed loads in Sum().
    stripes_[ThisThreadStripe()].value.fetch_add(1, std::memory_order_relaxed);
  }

  uint64_t Sum() const {
    uint64_t sum = 0;
    for (const Stripe& stripe : stripes_) {
      // relaxed: pairs with the relaxed fetch_add in Increment(); a stats
      // snapshot needs no ordering with anything else.
      sum += stripe.value.load(std::memory_order_relaxed);
    }
    return sum;
  }

 private:
  struct alignas(64) Stripe {
    std::atomic<uint64_t> value{0};
  };

  // The calling thread's stripe, assigned on its first call (process-wide,
  // shared by every StripedCounter).
  static uint32_t ThisThreadStripe() {
    // Constant-initialized (no guard on access); 0 means "not assigned yet",
    // else the stripe index + 1.
    static thread_local uint32_t stripe_plus_one = 0;
    if (RT_UNLIKELY(stripe_plus_one == 0))
      stripe_plus_one = AssignStripe() + 1;
    return stripe_plus_one - 1;
  }
  static uint32_t AssignStripe();

  Stripe stripes_[kStripes];
};

}  // namespace producer
}  // namespace ringtrace

#endif  // SRC_TRACING_PRODUCER_STRIPED_COUNTER_H_
