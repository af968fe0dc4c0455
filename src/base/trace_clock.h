/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceClockNs(): CLOCK_BOOTTIME nanoseconds for the timestamps of events an
// app writes at a high rate, read from the CPU's time-stamp counter where
// that is safe.
//
// Why. clock_gettime(CLOCK_BOOTTIME) costs about 30 ns on the development
// VM (a vDSO call that reads the TSC and the kernel's conversion data under
// a sequence lock, slower again under a hypervisor); RDTSC alone costs
// about 12 ns there and a few ns on bare metal. A scoped slice reads the
// clock twice, so the clock was most of its cost.
//
// How. A reading is anchor_ns + ((rdtsc - anchor_tsc) * mult >> 32):
//   - Availability, decided once per process: x86-64; CPUID reports an
//     invariant TSC (leaf 0x80000007, EDX bit 8: constant rate, runs in
//     every C-state); the kernel's current clocksource is "tsc" (the kernel
//     switches away from the TSC when it finds it unstable or unsynchronised
//     across CPUs, and then so do we); the environment does not say
//     RINGTRACE_TRACE_CLOCK=boottime. Otherwise every reading is
//     CLOCK_BOOTTIME.
//   - Paired readings: rdtsc, clock_gettime(CLOCK_BOOTTIME), rdtsc; a pair
//     whose two TSC reads are far apart (the thread was interrupted) is
//     taken again, up to a few times, and the tightest kept.
//   - Rate (mult, process-wide): from the first pair of the process to the
//     latest anchor of any thread, so the baseline grows and the rate's
//     error shrinks with it (the pair error, ~1 us, over the baseline).
//     Readings are CLOCK_BOOTTIME until the baseline is kMinBaselineNs long.
//     A new estimate more than kMaxRateChange away from the current one is
//     a discontinuity (a system suspend, where BOOTTIME counts and the TSC
//     may not), and restarts the baseline from that pair.
//   - Anchor (per thread): a paired reading, renewed when kAnchorPeriodNs
//     of TSC time passed since the last one (one clock_gettime per 10 ms
//     per thread), so a reading is at most 10 ms of extrapolation away from
//     a true CLOCK_BOOTTIME reading.
//   - Per thread, readings never decrease: after a renewal the fresh anchor
//     may lie below the last extrapolated reading, which is then returned
//     again until time passes it.
// Error against CLOCK_BOOTTIME: the rate's error times at most 10 ms (about
// 1 us with a 10 ms baseline and well under that after a second), plus the
// monotonic hold. After a system suspend, up to 10 ms of TSC time may pass
// before the thread's anchor catches up with the suspended time.
//
// Thread model: free functions, safe from any thread. The process-wide rate
// is one relaxed atomic (a standalone value: any published estimate is
// valid); the anchors are thread-local.

#ifndef SRC_BASE_TRACE_CLOCK_H_
#define SRC_BASE_TRACE_CLOCK_H_

#include <stdint.h>

namespace ringtrace {
namespace base {

enum class TraceClockSource {
  kBootTime,  // clock_gettime(CLOCK_BOOTTIME) on every reading
  kTsc,       // the TSC scaled and anchored as above
};

// Anchors are renewed after this much time; rate estimates start after a
// baseline this long; a rate estimate this far (relative) from the current
// one restarts the baseline.
constexpr uint64_t kTraceClockAnchorPeriodNs = 10 * 1000 * 1000;
constexpr uint64_t kTraceClockMinBaselineNs = 10 * 1000 * 1000;
constexpr double kTraceClockMaxRateChange = 1e-3;

// CLOCK_BOOTTIME in ns, from the TSC where available (see above).
uint64_t TraceClockNs();

// The source TraceClockNs() uses in this process (decided at the first
// call of either function).
TraceClockSource GetTraceClockSource();

// Whether the process has a TSC rate estimate (TSC readings are served).
bool TraceClockCalibrated();

// Tests only: use |source| from now on (kTsc only where available; returns
// whether the source is now |source|). Not thread-safe against readers.
bool SetTraceClockSourceForTesting(TraceClockSource source);

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_TRACE_CLOCK_H_
