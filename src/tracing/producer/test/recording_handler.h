/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. A DataSourceHandler that records every call (and the thread it
// came on), can run a hook in OnStart, and can hold an OnStop or OnFlush
// call until the test releases it; it declares |categories|. Every wait is
// bounded by kWaitMs.

#ifndef SRC_TRACING_PRODUCER_TEST_RECORDING_HANDLER_H_
#define SRC_TRACING_PRODUCER_TEST_RECORDING_HANDLER_H_

#include <stdint.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ringtrace/producer.h"

namespace ringtrace {
namespace producer {

class RecordingHandler : public DataSourceHandler {
 public:
  static constexpr int kWaitMs = 10000;

  enum class Kind { kStart, kStop, kFlush };
  struct Event {
    Kind kind;
    uint32_t id;                      // instance id (start, stop) or flush id
    DataSourceInstanceConfig config;  // kStart only
    std::thread::id thread;
  };

  void OnStart(const DataSourceInstanceConfig& config) override {
    if (on_start)
      on_start(config);
    Record(Event{Kind::kStart, config.instance_id, config,
                 std::this_thread::get_id()});
  }
  void OnStop(uint32_t instance_id) override {
    MaybeHold(Kind::kStop);
    Record(Event{Kind::kStop, instance_id, DataSourceInstanceConfig(),
                 std::this_thread::get_id()});
  }
  void OnFlush(uint32_t flush_id) override {
    MaybeHold(Kind::kFlush);
    Record(Event{Kind::kFlush, flush_id, DataSourceInstanceConfig(),
                 std::this_thread::get_id()});
  }
  std::vector<DataSourceCategory> Categories() const override {
    return categories;
  }
  // Set before the handler is registered.
  std::vector<DataSourceCategory> categories;

  std::vector<Event> events() {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_;
  }
  size_t count(Kind kind) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = 0;
    for (const Event& e : events_)
      n += e.kind == kind;
    return n;
  }
  // Waits until |n| calls of |kind| were recorded.
  bool WaitFor(Kind kind, size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, std::chrono::milliseconds(kWaitMs), [&] {
      size_t seen = 0;
      for (const Event& e : events_)
        seen += e.kind == kind;
      return seen >= n;
    });
  }

  // The next call of |kind| waits inside the handler until Release().
  void HoldNext(Kind kind) {
    std::lock_guard<std::mutex> lock(mutex_);
    hold_ = true;
    hold_kind_ = kind;
    held_ = false;
  }
  // Waits until the held call is inside the handler.
  bool WaitHeld() {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, std::chrono::milliseconds(kWaitMs),
                        [&] { return held_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    hold_ = false;
    cv_.notify_all();
  }

  // Runs first in OnStart, on the reader thread.
  std::function<void(const DataSourceInstanceConfig&)> on_start;

 private:
  void Record(const Event& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(e);
    cv_.notify_all();
  }
  void MaybeHold(Kind kind) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!hold_ || hold_kind_ != kind)
      return;
    held_ = true;
    cv_.notify_all();
    cv_.wait_for(lock, std::chrono::milliseconds(kWaitMs),
                 [&] { return !hold_; });
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Event> events_;
  bool hold_ = false;
  Kind hold_kind_ = Kind::kStop;
  bool held_ = false;
};

}  // namespace producer
}  // namespace ringtrace

#endif  // SRC_TRACING_PRODUCER_TEST_RECORDING_HANDLER_H_
