/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The project's clocks, in one place. Every reading of a clock in product
// code goes through one of these helpers, so the choice of clock for each
// purpose is visible here:
//   - BootTimeNs(): CLOCK_BOOTTIME, the timestamp clock of trace packets
//     (Perfetto's default trace clock; it keeps counting across suspend).
//   - MonotonicNs() / MonotonicMs(): CLOCK_MONOTONIC, for deadlines and
//     timeouts (never jumps, stops during suspend).
//   - CoarseMonotonicMs(): CLOCK_MONOTONIC_COARSE where the platform has it
//     (a vDSO read without the TSC; tick resolution), for rate limits on hot
//     paths.
//   - ClockNs(id): any clock by id, for clock snapshots.
// clock_gettime(2) cannot fail for these ids on Linux; a failure leaves the
// zero-initialised timespec and reads as 0.
//
// Thread model: free functions, safe from any thread.

#ifndef SRC_BASE_TIME_H_
#define SRC_BASE_TIME_H_

#include <stdint.h>
#include <time.h>

namespace ringtrace {
namespace base {

constexpr uint64_t kNsPerSec = 1000000000u;
constexpr uint64_t kNsPerMs = 1000000u;

inline uint64_t ClockNs(clockid_t clock) {
  struct timespec ts = {};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerSec +
         static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t BootTimeNs() {
  return ClockNs(CLOCK_BOOTTIME);
}

inline uint64_t MonotonicNs() {
  return ClockNs(CLOCK_MONOTONIC);
}

inline uint64_t MonotonicMs() {
  return MonotonicNs() / kNsPerMs;
}

inline uint64_t CoarseMonotonicMs() {
#if defined(CLOCK_MONOTONIC_COARSE)
  return ClockNs(CLOCK_MONOTONIC_COARSE) / kNsPerMs;
#else
  return MonotonicMs();
#endif
}

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_TIME_H_
