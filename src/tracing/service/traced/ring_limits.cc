/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/ring_limits.h"

#include <algorithm>

#include "ringtrace/logging.h"
#include "src/base/checked_math.h"

namespace ringtrace {
namespace traced {

namespace {

// The smallest power of two >= |x| (x <= 2^32: at most 33 steps).
uint64_t RoundUpToPowerOfTwo(uint64_t x) {
  uint64_t p = 1;
  while (p < x)
    p <<= 1;
  return p;
}

uint32_t Clamp(uint64_t v, uint32_t lo, uint32_t hi) {
  return static_cast<uint32_t>(
      std::min<uint64_t>(std::max<uint64_t>(v, lo), hi));
}

}  // namespace

base::Status ValidateRingLimits(const RingLimits& l) {
  const uint32_t values[] = {l.default_ring_bytes, l.min_ring_bytes,
                             l.max_ring_bytes,     l.default_chunk_size,
                             l.min_chunk_size,     l.max_chunk_size};
  for (uint32_t v : values) {
    if (!base::IsPowerOfTwo(v))
      return base::ErrStatus("ring sizes must be powers of two (got %u)", v);
  }
  if (l.min_chunk_size < shm_ring::kMinChunkSize ||
      l.max_chunk_size > shm_ring::kMaxChunkSize) {
    return base::ErrStatus("chunk sizes must be in [%u, %u]",
                           shm_ring::kMinChunkSize, shm_ring::kMaxChunkSize);
  }
  if (l.default_chunk_size < l.min_chunk_size ||
      l.default_chunk_size > l.max_chunk_size) {
    return base::ErrStatus("default chunk size %u not in [%u, %u]",
                           l.default_chunk_size, l.min_chunk_size,
                           l.max_chunk_size);
  }
  if (l.default_ring_bytes < l.min_ring_bytes ||
      l.default_ring_bytes > l.max_ring_bytes) {
    return base::ErrStatus("default ring size %u not in [%u, %u]",
                           l.default_ring_bytes, l.min_ring_bytes,
                           l.max_ring_bytes);
  }
  if (l.max_ring_bytes > kMaxRingKb * 1024u) {
    return base::ErrStatus(
        "max ring size %u above %u KiB, the most a default producer accepts",
        l.max_ring_bytes, kMaxRingKb);
  }
  // Every served ring has at least two chunks (ChooseRingGeometry grows a
  // ring to two chunks), which must fit the maximum.
  if (uint64_t{l.max_ring_bytes} < 2 * uint64_t{l.max_chunk_size}) {
    return base::ErrStatus("max ring size %u below two chunks of %u",
                           l.max_ring_bytes, l.max_chunk_size);
  }
  return base::OkStatus();
}

shm_ring::RingGeometry ChooseRingGeometry(const RingLimits& limits,
                                          uint32_t requested_ring_bytes,
                                          uint32_t requested_chunk_size) {
  RT_DCHECK(ValidateRingLimits(limits).ok());
  const uint32_t chunk_size = Clamp(
      RoundUpToPowerOfTwo(requested_chunk_size ? requested_chunk_size
                                               : limits.default_chunk_size),
      limits.min_chunk_size, limits.max_chunk_size);
  uint32_t ring_bytes = Clamp(
      RoundUpToPowerOfTwo(requested_ring_bytes ? requested_ring_bytes
                                               : limits.default_ring_bytes),
      limits.min_ring_bytes, limits.max_ring_bytes);
  // <= max_ring_bytes by ValidateRingLimits.
  ring_bytes = std::max(ring_bytes, 2 * chunk_size);
  const shm_ring::RingGeometry g(chunk_size, ring_bytes / chunk_size);
  RT_CHECK(g.IsValid());
  return g;
}

bool FitRingLimitsToBudget(uint64_t budget_bytes, RingLimits* limits) {
  RT_DCHECK(ValidateRingLimits(*limits).ok());
  if (budget_bytes >= limits->max_ring_bytes)
    return true;
  uint32_t fit = limits->max_ring_bytes;
  while (fit > budget_bytes)
    fit /= 2;  // stays a power of two; ends: budget_bytes < max_ring_bytes
  if (fit < limits->min_ring_bytes || fit < 2 * limits->min_chunk_size)
    return false;
  limits->max_ring_bytes = fit;
  limits->default_ring_bytes = std::min(limits->default_ring_bytes, fit);
  limits->max_chunk_size = std::min(limits->max_chunk_size, fit / 2);
  limits->default_chunk_size =
      std::min(limits->default_chunk_size, limits->max_chunk_size);
  RT_DCHECK(ValidateRingLimits(*limits).ok());
  return true;
}

}  // namespace traced
}  // namespace ringtrace
