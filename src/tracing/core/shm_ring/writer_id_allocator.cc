/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/shm_ring/writer_id_allocator.h"

namespace ringtrace {
namespace shm_ring {

bool WriterIdAllocator::Allocate(WriterID* id) {
  // relaxed: uniqueness needs only the atomicity of the RMW below (all RMWs
  // on next_ form one modification order); no other data is handed over
  // through this counter. Not a ring word, so the spec 8 table does not
  // apply.
  uint32_t next = next_.load(std::memory_order_relaxed);
  // Bounded: a failed CAS means another thread allocated an ID, and at most
  // kLastId IDs are ever allocated, so all threads together fail at most
  // kLastId times. A CAS (not fetch_add) so that the counter never moves
  // past kLastId + 1 and can never wrap around to an old ID.
  for (;;) {
    if (next > kLastId)
      return false;
    // relaxed/relaxed; see above.
    if (next_.compare_exchange_weak(next, next + 1, std::memory_order_relaxed,
                                    std::memory_order_relaxed)) {
      *id = static_cast<WriterID>(next);
      return true;
    }
  }
}

uint32_t WriterIdAllocator::allocated() const {
  // relaxed: a statistic.
  return next_.load(std::memory_order_relaxed) - kFirstId;
}

}  // namespace shm_ring
}  // namespace ringtrace
