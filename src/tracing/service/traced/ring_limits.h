/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The ring sizes the service serves (RingLimits) and the geometry it
// chooses for a producer's Hello: a policy with no state, used at admission
// (ServiceCore::Admit) and by ringtraced's flags.

#ifndef SRC_TRACING_SERVICE_TRACED_RING_LIMITS_H_
#define SRC_TRACING_SERVICE_TRACED_RING_LIMITS_H_

#include <stdint.h>

#include "ringtrace/shm_ring_abi.h"
#include "ringtrace/status.h"

namespace ringtrace {
namespace traced {

// The largest ring the service serves, in KiB: what a producer accepts by
// default (ProducerOptions::max_ring_bytes, 64 MiB). A larger ring would be
// refused by every default producer.
constexpr uint32_t kMaxRingKb = 65536;

// Ring sizes the service hands out. Sizes are payload bytes (num_chunks *
// chunk_size; the mapping adds the 256-byte control header). Every value is
// a power of two, min <= default <= max, chunk sizes within the ABI's
// [kMinChunkSize, kMaxChunkSize] and max_ring_bytes at least two chunks of
// max_chunk_size, and at most kMaxRingKb KiB (ValidateRingLimits).
struct RingLimits {
  uint32_t default_ring_bytes = 1u << 20;  // 1 MiB
  uint32_t min_ring_bytes = 16u << 10;     // 16 KiB
  uint32_t max_ring_bytes = 16u << 20;     // 16 MiB
  uint32_t default_chunk_size = 4096;
  uint32_t min_chunk_size = shm_ring::kMinChunkSize;
  uint32_t max_chunk_size = shm_ring::kMaxChunkSize;
};

base::Status ValidateRingLimits(const RingLimits& limits);

// The geometry the service serves for a Hello's requested sizes (0: the
// default). Never fails; a request is clamped, never rejected:
//   chunk_size = requested (or default), rounded up to a power of two,
//                clamped to [min_chunk_size, max_chunk_size];
//   ring bytes = requested (or default), rounded up to a power of two,
//                clamped to [min_ring_bytes, max_ring_bytes];
//   num_chunks = ring bytes / chunk_size; a ring smaller than two chunks
//                grows to two (within max_ring_bytes by
//                ValidateRingLimits).
// |limits| must be valid.
shm_ring::RingGeometry ChooseRingGeometry(const RingLimits& limits,
                                          uint32_t requested_ring_bytes,
                                          uint32_t requested_chunk_size);
// |limits| (valid) narrowed so that no ring exceeds |budget_bytes|: its
// max_ring_bytes (and default, largest chunk) at most the largest power of
// two <= |budget_bytes|. False if not even a smallest ring fits.
bool FitRingLimitsToBudget(uint64_t budget_bytes, RingLimits* limits);

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_RING_LIMITS_H_
