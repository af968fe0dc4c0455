/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/producer_id_allocator.h"

namespace ringtrace {
namespace traced {

uint32_t ProducerIdAllocator::Allocate(const HeldScan& scan, bool* reused) {
  *reused = false;
  if (next_ <= kMaxProducerID)
    return next_++;
  if (reusable_.empty() && !departed_.empty() &&
      (!scanned_since_departure_ ||
       ++allocations_since_scan_ >= kRecycleScanInterval)) {
    Refill(scan);
  }
  if (reusable_.empty())
    return 0;
  const uint32_t id = reusable_.back();
  reusable_.pop_back();
  *reused = true;
  return id;
}

void ProducerIdAllocator::Release(uint32_t id) {
  departed_.push_back(id);
  scanned_since_departure_ = false;
}

void ProducerIdAllocator::Refill(const HeldScan& scan) {
  ++scans_;
  allocations_since_scan_ = 0;
  scanned_since_departure_ = true;
  std::vector<bool> held(kMaxProducerID + 1, false);
  scan(&held);
  size_t kept = 0;
  for (uint32_t id : departed_) {
    if (held[id])
      departed_[kept++] = id;
    else
      reusable_.push_back(id);
  }
  departed_.resize(kept);
}

}  // namespace traced
}  // namespace ringtrace
