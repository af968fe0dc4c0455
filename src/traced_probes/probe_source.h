/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ProbeSource: one data source instance's work, run by ProbesLoop on its
// thread (probes_loop.h); Schedule: a period's next due time.
//
// Thread model: a ProbeSource is used by one thread at a time (the loop's,
// then, after ProbesLoop::Remove(), its owner's).

#ifndef SRC_TRACED_PROBES_PROBE_SOURCE_H_
#define SRC_TRACED_PROBES_PROBE_SOURCE_H_

#include <stdint.h>

#include <atomic>
#include <limits>

namespace ringtrace {
namespace probes {

// "Not due again."
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

class ProbeSource {
 public:
  virtual ~ProbeSource() = default;

  // Does the work due at |now_ms| (CLOCK_MONOTONIC): reads /proc, writes
  // packets. Between packets it checks |stop| (relaxed loads) and, once it
  // reads true, returns without beginning another packet. Returns when it
  // is due next (kNever: not again).
  virtual uint64_t Run(uint64_t now_ms, const std::atomic<bool>& stop) = 0;

  // The service asked for a flush: writes what the source has pending (for
  // linux.ftrace, what the kernel's buffers hold) and flushes its writer,
  // before the flush is acknowledged. Called by ProbesLoop::Flush(), never
  // while Run() is in progress; |stop| as for Run() (a Remove() meanwhile
  // ends it early: the owner then finishes the source). Default: nothing
  // is pending (every Run() ends with a flush of its writer).
  virtual void Flush(const std::atomic<bool>& stop) { (void)stop; }
};

// A period: due first at the start, then every period_ms after. A run late
// by more than a period skips the times it missed (counted) rather than
// running them in a burst.
class Schedule {
 public:
  Schedule() = default;
  Schedule(uint32_t period_ms, uint64_t start_ms)
      : period_ms_(period_ms), next_ms_(period_ms ? start_ms : kNever) {}

  bool enabled() const { return period_ms_ != 0; }
  bool Due(uint64_t now_ms) const { return now_ms >= next_ms_; }
  uint64_t next_ms() const { return next_ms_; }
  uint64_t missed() const { return missed_; }

  // After the run the loop called at |now_ms|: the next due time after it.
  void Advance(uint64_t now_ms) {
    if (!period_ms_)
      return;
    next_ms_ += period_ms_;
    if (next_ms_ <= now_ms) {
      const uint64_t behind = now_ms - next_ms_;
      missed_ += behind / period_ms_ + 1;
      next_ms_ += (behind / period_ms_ + 1) * period_ms_;
    }
  }

 private:
  uint32_t period_ms_ = 0;
  uint64_t next_ms_ = kNever;
  uint64_t missed_ = 0;
};

}  // namespace probes
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_PROBE_SOURCE_H_
