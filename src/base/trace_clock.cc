/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/trace_clock.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

#include "ringtrace/logging.h"
#include "src/base/thread_annotations.h"
#include "src/base/time.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace ringtrace {
namespace base {
namespace {

// A TSC reading and a CLOCK_BOOTTIME reading taken together.
struct Pair {
  uint64_t tsc = 0;
  uint64_t ns = 0;
};

// A pair whose two TSC reads are at most this far apart is taken at once
// (1-5 us at a TSC rate of 1-5 GHz; an uninterrupted pair takes ~100 ns); a
// wider one is taken again.
constexpr uint64_t kTightPairTicks = 5000;
constexpr int kPairAttempts = 8;

inline uint64_t ReadTsc() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return 0;  // never called: TscUsable() is false
#endif
}

Pair ReadPair() {
  Pair best;
  uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < kPairAttempts; i++) {
    const uint64_t before = ReadTsc();
    const uint64_t ns = BootTimeNs();
    const uint64_t after = ReadTsc();
    if (after < before)
      continue;  // moved to a CPU whose counter is behind: try again
    const uint64_t width = after - before;
    if (width < best_width) {
      best_width = width;
      best.tsc = before + width / 2;
      best.ns = ns;
    }
    if (width <= kTightPairTicks)
      break;
  }
  if (best_width == UINT64_MAX) {
    best.tsc = ReadTsc();
    best.ns = BootTimeNs();
  }
  return best;
}

bool CpuHasInvariantTsc() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u)
    return false;
  if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx))
    return false;
  return (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}

bool KernelClocksourceIsTsc() {
  const int fd =
      open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
           O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char buf[16] = {};
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  return n >= 3 && memcmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

bool TscUsable() {
  const char* env = getenv("RINGTRACE_TRACE_CLOCK");
  if (env && strcmp(env, "boottime") == 0)
    return false;
  return CpuHasInvariantTsc() && KernelClocksourceIsTsc();
}

// Whether readings come from the TSC: Calibration's source, mirrored here
// so that the hot path tests one flag before it reads the counter. Relaxed:
// a standalone value (false until the first call constructs Calibration,
// which sends that call, and any concurrent one, to Renew()).
std::atomic<bool> g_use_tsc{false};
// Whether every reading is CLOCK_BOOTTIME (the source was decided and is
// kBootTime): such a reading is served inline, without Renew(). Relaxed, as
// g_use_tsc: a standalone value, false until the decision (Renew() then
// decides), and a stale value only sends a reading the longer way.
std::atomic<bool> g_boottime_only{false};

// The process-wide state.
class Calibration {
 public:
  Calibration() : usable_(TscUsable()) {
    if (usable_) {
      MutexLock lock(&mutex_);
      RestartLocked(ReadPair());
    }
    set_source(usable_ ? TraceClockSource::kTsc : TraceClockSource::kBootTime);
  }

  bool usable() const { return usable_; }
  // Relaxed: a standalone value, read on every call; a change (tests only)
  // needs no ordering with anything else.
  TraceClockSource source() const {
    return static_cast<TraceClockSource>(
        source_.load(std::memory_order_relaxed));
  }
  void set_source(TraceClockSource source) {
    source_.store(static_cast<int>(source), std::memory_order_relaxed);
    g_use_tsc.store(source == TraceClockSource::kTsc,
                    std::memory_order_relaxed);
    g_boottime_only.store(source == TraceClockSource::kBootTime,
                          std::memory_order_relaxed);
  }
  // Relaxed, as source_: CLOCK_BOOTTIME time before which no rate estimate
  // is attempted.
  uint64_t calibrate_after_ns() const {
    return calibrate_after_ns_.load(std::memory_order_relaxed);
  }

  bool calibrated() {
    MutexLock lock(&mutex_);
    return mult_ != 0;
  }

  // Folds |p| (a fresh pair) into the rate estimate; returns the rate to
  // use from |p| on (0: none yet).
  uint64_t Update(const Pair& p) {
    MutexLock lock(&mutex_);
    if (p.tsc <= base_.tsc || p.ns <= base_.ns) {
      RestartLocked(p);  // a counter went back: start over
      return 0;
    }
    const uint64_t dns = p.ns - base_.ns;
    if (dns < kTraceClockMinBaselineNs)
      return mult_;
    const uint64_t dticks = p.tsc - base_.tsc;
    const unsigned __int128 wide =
        (static_cast<unsigned __int128>(dns) << 32) / dticks;
    if (wide == 0 || wide > UINT64_MAX) {
      RestartLocked(p);  // not a rate a TSC has: start over
      return 0;
    }
    const uint64_t estimate = static_cast<uint64_t>(wide);
    if (mult_ != 0) {
      const double change =
          (static_cast<double>(estimate) - static_cast<double>(mult_)) /
          static_cast<double>(mult_);
      if (change > kTraceClockMaxRateChange ||
          change < -kTraceClockMaxRateChange) {
        RestartLocked(p);  // a discontinuity (suspend): start over
        return 0;
      }
    }
    mult_ = estimate;
    return mult_;
  }

 private:
  void RestartLocked(const Pair& p) RT_REQUIRES(mutex_) {
    base_ = p;
    mult_ = 0;
    calibrate_after_ns_.store(p.ns + kTraceClockMinBaselineNs,
                              std::memory_order_relaxed);
  }

  const bool usable_;
  std::atomic<int> source_{0};
  std::atomic<uint64_t> calibrate_after_ns_{0};
  Mutex mutex_;
  Pair base_ RT_GUARDED_BY(mutex_);
  // ns per tick, times 2^32.
  uint64_t mult_ RT_GUARDED_BY(mutex_) = 0;
};

Calibration& GetCalibration() {
  static Calibration* calibration = new Calibration();  // never destroyed
  return *calibration;
}

// The calling thread's anchor. max_ticks == 0: none (the next reading
// renews it).
struct Anchor {
  uint64_t tsc = 0;
  uint64_t ns = 0;
  uint64_t mult = 0;
  uint64_t max_ticks = 0;
  uint64_t last = 0;  // the thread's latest reading
};
thread_local Anchor t_anchor;

inline uint64_t Hold(Anchor* a, uint64_t ns) {
  if (ns < a->last)
    return a->last;
  a->last = ns;
  return ns;
}

__attribute__((noinline)) uint64_t Renew(Anchor* a) {
  Calibration& c = GetCalibration();
  a->max_ticks = 0;
  uint64_t now = 0;
  if (c.source() != TraceClockSource::kTsc ||
      (now = BootTimeNs()) < c.calibrate_after_ns()) {
    return Hold(a, now != 0 ? now : BootTimeNs());
  }
  const Pair p = ReadPair();
  const uint64_t mult = c.Update(p);
  if (mult != 0) {
    a->tsc = p.tsc;
    a->ns = p.ns;
    a->mult = mult;
    // Ticks in one anchor period; at least 1, so that a reading renews
    // only when it is due.
    const uint64_t ticks = (kTraceClockAnchorPeriodNs << 32) / mult;
    a->max_ticks = ticks != 0 ? ticks : 1;
  }
  return Hold(a, p.ns);
}

}  // namespace

uint64_t TraceClockNs() {
  Anchor* a = &t_anchor;
  if (RT_UNLIKELY(!g_use_tsc.load(std::memory_order_relaxed))) {
    if (RT_LIKELY(g_boottime_only.load(std::memory_order_relaxed)))
      return Hold(a, BootTimeNs());
    return Renew(a);
  }
  const uint64_t tsc = ReadTsc();
  const uint64_t delta = tsc - a->tsc;
  // Unsigned compare: also renews when the counter is behind the anchor.
  if (RT_UNLIKELY(delta >= a->max_ticks))
    return Renew(a);
  // delta < max_ticks keeps the product below 2^64: max_ticks * mult is
  // about kTraceClockAnchorPeriodNs * 2^32 < 2^56.
  return Hold(a, a->ns + ((delta * a->mult) >> 32));
}

TraceClockSource GetTraceClockSource() {
  return GetCalibration().source();
}

bool TraceClockCalibrated() {
  return GetCalibration().calibrated();
}

bool SetTraceClockSourceForTesting(TraceClockSource source) {
  Calibration& c = GetCalibration();
  if (source == TraceClockSource::kTsc && !c.usable())
    return false;
  c.set_source(source);
  t_anchor = Anchor();
  return true;
}

}  // namespace base
}  // namespace ringtrace
