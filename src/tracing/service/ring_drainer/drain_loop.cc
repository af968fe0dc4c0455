/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/drain_loop.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace ring_drainer {

namespace {

using Clock = std::chrono::steady_clock;

// Upper bound on the kFlush passes of one Flush(): producers that keep
// writing must not keep the loop in a flush forever.
constexpr uint32_t kMaxFlushPasses = 1024;

}  // namespace

DrainLoop::DrainLoop(const Options& options)
    : options_(options), drainer_(options.drainer) {
  RT_CHECK(options_.tick_ns > 0);
  RT_CHECK(options_.passes_per_turn > 0);
}

DrainLoop::~DrainLoop() {
  Stop();
}

void DrainLoop::Start() {
  base::MutexLock lock(&mutex_);
  RT_CHECK(!running_);
  running_ = true;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void DrainLoop::Stop() {
  {
    base::MutexLock lock(&mutex_);
    if (!running_)
      return;
    stop_ = true;
    cv_.notify_all();
  }
  thread_.join();
  base::MutexLock lock(&mutex_);
  running_ = false;
  done_cv_.notify_all();
}

void DrainLoop::Notify(RingId id) {
  base::MutexLock lock(&mutex_);
  if (pending_.insert(id).second)
    cv_.notify_all();
}

void DrainLoop::Flush() {
  base::MutexLock lock(&mutex_);
  if (!running_) {
    lock.Unlock();
    for (uint32_t i = 0; i < kMaxFlushPasses; ++i) {
      if (!drainer_.DrainAll(DrainMode::kFlush).more)
        break;
    }
    return;
  }
  RT_CHECK(std::this_thread::get_id() != thread_.get_id());
  const uint64_t ticket = ++flush_requests_;
  cv_.notify_all();
  done_cv_.wait(lock.native(), [&] {
    mutex_.AssertHeld();
    return flushes_done_ >= ticket || !running_;
  });
}

void DrainLoop::RunSync(const std::function<void(RingDrainer*)>& fn) {
  base::MutexLock lock(&mutex_);
  if (!running_) {
    lock.Unlock();
    fn(&drainer_);
    return;
  }
  RT_CHECK(std::this_thread::get_id() != thread_.get_id());
  tasks_.push_back([&] { fn(&drainer_); });
  const uint64_t ticket = tasks_done_ + tasks_.size();
  cv_.notify_all();
  done_cv_.wait(lock.native(), [&] {
    mutex_.AssertHeld();
    return tasks_done_ >= ticket || !running_;
  });
  // Stop() with RunSync callers in flight is a caller bug.
  RT_CHECK(tasks_done_ >= ticket);
}

DrainLoop::LoopStats DrainLoop::loop_stats() {
  base::MutexLock lock(&mutex_);
  return stats_;
}

bool DrainLoop::ServePending(std::vector<RingId>* pending, LoopStats* delta) {
  std::vector<RingId> still_busy;
  for (RingId id : *pending) {
    if (!drainer_.has_ring(id))
      continue;  // Removed after it was notified.
    bool more = false;
    for (uint32_t i = 0; i < options_.passes_per_turn; ++i) {
      const PassResult r = drainer_.DrainRing(id);
      ++delta->notified_passes;
      if (r.deferred)
        deferred_rings_.push_back(id);
      more = r.more;
      if (!more)
        break;
    }
    if (more)
      still_busy.push_back(id);
  }
  pending->swap(still_busy);
  return !pending->empty();
}

void DrainLoop::Run() {
  const auto tick = std::chrono::nanoseconds(options_.tick_ns);
  const auto grace = std::chrono::nanoseconds(
      std::max<uint64_t>(options_.drainer.head_grace_ns, 1));
  Clock::time_point next_tick = Clock::now() + tick;
  Clock::time_point wake_at = next_tick;

  base::MutexLock lock(&mutex_);
  // Bounded per iteration; the loop ends when Stop() sets stop_.
  while (!stop_) {
    cv_.wait_until(lock.native(), wake_at, [&] {
      mutex_.AssertHeld();
      return stop_ || !pending_.empty() || !tasks_.empty() ||
             flush_requests_ > flushes_done_;
    });
    if (stop_)
      break;
    std::deque<std::function<void()>> tasks;
    tasks.swap(tasks_);
    std::vector<RingId> pending(pending_.begin(), pending_.end());
    pending_.clear();
    const uint64_t flush_target = flush_requests_;
    // Read under the lock although only this thread writes it: the state
    // the loop works from is taken in one locked snapshot.
    const bool flush = flush_target > flushes_done_;
    ++stats_.wakeups;
    lock.Unlock();

    // Everything below runs on the loop thread without the lock; the
    // counters go into stats_ after re-locking.
    LoopStats delta;
    for (auto& task : tasks)
      task();
    // Rings that deferred a head position last time get another pass: the
    // drainer resolves the position once its grace has run out.
    for (RingId id : deferred_rings_) {
      if (std::find(pending.begin(), pending.end(), id) == pending.end())
        pending.push_back(id);
    }
    deferred_rings_.clear();

    const Clock::time_point now = Clock::now();
    if (now >= next_tick) {
      ++delta.ticks;
      // Every ring gets a pass; those with more work join the pending ones.
      for (RingId id : drainer_.ring_ids()) {
        const PassResult r = drainer_.DrainRing(id);
        if (r.deferred)
          deferred_rings_.push_back(id);
        if (r.more &&
            std::find(pending.begin(), pending.end(), id) == pending.end()) {
          pending.push_back(id);
        }
      }
      next_tick = now + tick;
    }
    ServePending(&pending, &delta);

    if (flush) {
      for (uint32_t i = 0; i < kMaxFlushPasses; ++i) {
        if (!drainer_.DrainAll(DrainMode::kFlush).more)
          break;
      }
      ++delta.flushes;
    }

    lock.Lock();
    stats_.ticks += delta.ticks;
    stats_.notified_passes += delta.notified_passes;
    stats_.flushes += delta.flushes;
    // Rings with work left come back right away (cv predicate), after the
    // ones notified meanwhile.
    pending_.insert(pending.begin(), pending.end());
    tasks_done_ += tasks.size();
    if (flush)
      flushes_done_ = flush_target;
    done_cv_.notify_all();
    wake_at = next_tick;
    if (!deferred_rings_.empty())
      wake_at = std::min(wake_at, Clock::now() + grace);
  }
  // Release any RunSync/Flush callers; running_ is cleared by Stop().
  done_cv_.notify_all();
}

}  // namespace ring_drainer
}  // namespace ringtrace
