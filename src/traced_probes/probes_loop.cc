/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/probes_loop.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "ringtrace/logging.h"
#include "src/base/time.h"

namespace ringtrace {
namespace probes {

ProbesLoop::ProbesLoop() : thread_([this] { ThreadMain(); }) {}

ProbesLoop::~ProbesLoop() {
  {
    base::MutexLock lock(&mutex_);
    quit_ = true;
    for (auto& [handle, entry] : entries_)
      entry->stop.store(true, std::memory_order_relaxed);
  }
  wake_.notify_all();
  thread_.join();
  // The loop thread has ended: the sources are this thread's now.
  std::map<Handle, std::unique_ptr<Entry>> left;
  {
    base::MutexLock lock(&mutex_);
    left.swap(entries_);
  }
}

ProbesLoop::Handle ProbesLoop::Add(std::unique_ptr<ProbeSource> source) {
  RT_CHECK(source);
  auto entry = std::make_unique<Entry>();
  entry->source = std::move(source);
  entry->next_ms = base::MonotonicMs();
  Handle handle = 0;
  {
    base::MutexLock lock(&mutex_);
    handle = next_handle_++;
    entries_[handle] = std::move(entry);
  }
  wake_.notify_all();
  return handle;
}

std::unique_ptr<ProbeSource> ProbesLoop::Remove(Handle handle) {
  RT_CHECK(std::this_thread::get_id() != thread_.get_id());
  std::unique_ptr<Entry> entry;
  {
    base::MutexLock lock(&mutex_);
    auto it = entries_.find(handle);
    if (it == entries_.end())
      return nullptr;
    // relaxed: see Entry::stop.
    it->second->stop.store(true, std::memory_order_relaxed);
    // The loop never starts a stopped entry; wait for the run (or flush)
    // in progress.
    run_done_.wait(lock.native(), [&] {
      mutex_.AssertHeld();
      it = entries_.find(handle);
      return it == entries_.end() ||
             (running_ != handle && !it->second->flushing);
    });
    if (it == entries_.end())
      return nullptr;  // another Remove() of the same handle took it
    entry = std::move(it->second);
    entries_.erase(it);
  }
  wake_.notify_all();
  return std::move(entry->source);
}

bool ProbesLoop::Flush(Handle handle) {
  RT_CHECK(std::this_thread::get_id() != thread_.get_id());
  Entry* entry = nullptr;
  {
    base::MutexLock lock(&mutex_);
    // The entry by its handle at each wake: Remove() may take it meanwhile
    // (handles are never reused). One Flush() of an entry at a time, after
    // its run in progress.
    run_done_.wait(lock.native(), [&] {
      mutex_.AssertHeld();
      auto it = entries_.find(handle);
      entry = it == entries_.end() ? nullptr : it->second.get();
      return !entry || (running_ != handle && !entry->flushing);
    });
    // relaxed: see Entry::stop. A source being removed is not flushed: its
    // owner finishes it.
    if (!entry || entry->stop.load(std::memory_order_relaxed))
      return false;
    entry->flushing = true;
  }
  // The entry stays in entries_ (Remove() waits for flushing to clear) and
  // the loop does not run it: until then the source is this thread's.
  entry->source->Flush(entry->stop);
  {
    base::MutexLock lock(&mutex_);
    entry->flushing = false;
  }
  run_done_.notify_all();
  wake_.notify_all();
  return true;
}

void ProbesLoop::Wake(Handle handle) {
  {
    base::MutexLock lock(&mutex_);
    auto it = entries_.find(handle);
    if (it == entries_.end())
      return;
    if (running_ == handle)
      it->second->woken = true;
    else
      it->second->next_ms = std::min(it->second->next_ms, base::MonotonicMs());
  }
  wake_.notify_all();
}

size_t ProbesLoop::size() const {
  base::MutexLock lock(&mutex_);
  return entries_.size();
}

void ProbesLoop::ThreadMain() {
  base::MutexLock lock(&mutex_);
  while (!quit_) {
    // The entry due first, among those not being stopped.
    Handle due = 0;
    uint64_t due_ms = kNever;
    for (const auto& [handle, entry] : entries_) {
      if (entry->stop.load(std::memory_order_relaxed) || entry->flushing)
        continue;
      if (entry->next_ms < due_ms) {
        due = handle;
        due_ms = entry->next_ms;
      }
    }
    const uint64_t now_ms = base::MonotonicMs();
    if (due == 0 || due_ms > now_ms) {
      if (due == 0) {
        wake_.wait(lock.native());
      } else {
        wake_.wait_for(lock.native(),
                       std::chrono::milliseconds(due_ms - now_ms));
      }
      continue;  // re-read everything: entries may have come or gone
    }
    Entry* entry = entries_[due].get();
    running_ = due;
    // The entry stays in entries_ while it runs: Remove() waits for
    // running_ to change before it takes it out.
    lock.Unlock();
    const uint64_t next_ms = entry->source->Run(now_ms, entry->stop);
    lock.Lock();
    entry->next_ms =
        entry->woken ? std::min(next_ms, base::MonotonicMs()) : next_ms;
    entry->woken = false;
    running_ = 0;
    run_done_.notify_all();
  }
}

}  // namespace probes
}  // namespace ringtrace
