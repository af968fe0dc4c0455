/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Doubles for DrainNotifier's collaborators and a thread barrier.

#ifndef SRC_TRACING_PRODUCER_TEST_FAKE_DRAIN_TRANSPORT_H_
#define SRC_TRACING_PRODUCER_TEST_FAKE_DRAIN_TRANSPORT_H_

#include <stdint.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "src/tracing/producer/drain_notifier.h"

namespace ringtrace {
namespace producer {

// Counts calls and answers with a settable result.
class FakeDrainTransport : public DrainRequestTransport {
 public:
  SendResult SendDrainRequest() override {
    // relaxed: test counters; the test reads them after joining the threads
    // (or from the calling thread).
    calls_.fetch_add(1, std::memory_order_relaxed);
    return result_.load(std::memory_order_relaxed);
  }
  uint32_t calls() const { return calls_.load(std::memory_order_relaxed); }
  void set_result(SendResult r) { result_.store(r, std::memory_order_relaxed); }

 private:
  std::atomic<uint32_t> calls_{0};
  std::atomic<SendResult> result_{SendResult::kSent};
};

// A clock that only moves when told.
class FakeNotifierClock : public NotifierClock {
 public:
  uint32_t NowMs() override { return now_.load(std::memory_order_relaxed); }
  void Set(uint32_t ms) { now_.store(ms, std::memory_order_relaxed); }

 private:
  std::atomic<uint32_t> now_{0};
};

// A reusable barrier for |n| threads (C++17 has no std::barrier). Blocking,
// so that it behaves on a 2-core machine under TSan.
class ThreadBarrier {
 public:
  explicit ThreadBarrier(uint32_t n) : n_(n) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  const uint32_t n_;
  std::mutex mutex_;
  std::condition_variable cv_;
  uint32_t waiting_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace producer
}  // namespace ringtrace

#endif  // SRC_TRACING_PRODUCER_TEST_FAKE_DRAIN_TRANSPORT_H_
