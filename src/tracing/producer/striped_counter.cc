/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/striped_counter.h"

namespace ringtrace {
namespace producer {

uint32_t StripedCounter::AssignStripe() {
  static std::atomic<uint32_t> next_thread{0};
  // relaxed: only spreads threads over the stripes; any interleaving is
  // correct (pairs with nothing).
  return next_thread.fetch_add(1, std::memory_order_relaxed) % kStripes;
}

}  // namespace producer
}  // namespace ringtrace
