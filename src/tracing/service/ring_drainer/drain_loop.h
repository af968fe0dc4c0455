/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// DrainLoop: runs a RingDrainer on its own thread, driven by notifications
// and a periodic tick.
//
//  - Notify(ring) (any thread; e.g. the IPC handler of a producer's "chunk
//    published / position burned / ring full" message, or an in-process
//    RingWriterDelegate) marks the ring pending and wakes the loop. Each
//    wake-up gives every pending ring one bounded pass; a ring whose pass
//    reports `more` stays pending and gets another pass after the others
//    (round robin), so one busy producer cannot starve the rest.
//  - The tick (Options::tick_ns) drains every ring, so chunks whose
//    notification was lost, or a ring that only holds head positions under
//    grace, are drained anyway. After a pass that deferred a head position
//    the loop also wakes once the head grace has run out.
//  - Flush() resolves every reserved position of every ring
//    (DrainMode::kFlush) and returns when done.
//  - RunSync(fn) runs |fn| on the loop thread with the drainer: the only way
//    to add or remove rings, read stats, or touch the trace buffers the sinks
//    write (TraceBufferV2 is not thread-safe, so its readers go through here
//    too).
//
// Thread model: every RingDrainer and ChunkSink call happens on the loop
// thread. Notify/Flush/RunSync may be called from any thread other than the
// loop thread (RunSync and Flush block until the loop ran them). Start() and
// Stop() are called by the owner.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_DRAIN_LOOP_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_DRAIN_LOOP_H_

#include <stdint.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "src/base/thread_annotations.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"

namespace ringtrace {
namespace ring_drainer {

class DrainLoop {
 public:
  struct Options {
    RingDrainerOptions drainer;
    uint64_t tick_ns = 100'000'000;  // 100 ms.
    // Passes over one pending ring per wake-up before it goes to the back
    // of the queue.
    uint32_t passes_per_turn = 4;
  };

  explicit DrainLoop(const Options& options);
  ~DrainLoop();  // Stops the loop.

  DrainLoop(const DrainLoop&) = delete;
  DrainLoop& operator=(const DrainLoop&) = delete;

  void Start();
  // Returns after the loop thread exited (it finishes its current pass).
  void Stop();

  // Any thread: ring |id| may have data. Unknown ids are ignored.
  void Notify(RingId id);
  // Any thread but the loop's: resolves every reserved position of every
  // ring; returns when done.
  void Flush();
  // Any thread but the loop's: runs |fn| on the loop thread and waits.
  void RunSync(const std::function<void(RingDrainer*)>& fn);

  // Completed wake-ups by cause, for tests and stats.
  struct LoopStats {
    uint64_t wakeups = 0;
    uint64_t ticks = 0;
    uint64_t notified_passes = 0;
    uint64_t flushes = 0;
  };
  LoopStats loop_stats();

 private:
  void Run();
  // Drains the pending rings once around; returns true if some ring still
  // has work. Called on the loop thread without the lock.
  bool ServePending(std::vector<RingId>* pending, LoopStats* delta);

  const Options options_;
  RingDrainer drainer_;  // Loop thread only (after Start()).
  std::thread thread_;
  // Loop thread only: rings whose last pass stopped at a head position
  // under grace.
  std::vector<RingId> deferred_rings_;

  base::Mutex mutex_;
  std::condition_variable cv_;       // Wakes the loop.
  std::condition_variable done_cv_;  // Wakes RunSync/Flush callers.
  bool running_ RT_GUARDED_BY(mutex_) = false;
  bool stop_ RT_GUARDED_BY(mutex_) = false;
  std::set<RingId> pending_ RT_GUARDED_BY(mutex_);
  std::deque<std::function<void()>> tasks_ RT_GUARDED_BY(mutex_);
  uint64_t flush_requests_ RT_GUARDED_BY(mutex_) = 0;
  uint64_t flushes_done_ RT_GUARDED_BY(mutex_) = 0;
  uint64_t tasks_done_ RT_GUARDED_BY(mutex_) = 0;
  LoopStats stats_ RT_GUARDED_BY(mutex_);
};

}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_DRAIN_LOOP_H_
