/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/seen_pids.h"

#include <utility>

namespace ringtrace {
namespace probes {

SeenPids::Subscriber SeenPids::Subscribe(std::function<void()> wake) {
  base::MutexLock lock(&mutex_);
  const Subscriber s = next_++;
  queues_[s].wake = std::move(wake);
  return s;
}

void SeenPids::SetWaker(Subscriber s, std::function<void()> wake) {
  base::MutexLock lock(&mutex_);
  auto it = queues_.find(s);
  if (it != queues_.end())
    it->second.wake = std::move(wake);
}

void SeenPids::Unsubscribe(Subscriber s) {
  std::function<void()> wake;  // destroyed after the lock is released
  base::MutexLock lock(&mutex_);
  auto it = queues_.find(s);
  if (it == queues_.end())
    return;
  wake = std::move(it->second.wake);
  queues_.erase(it);
}

void SeenPids::Offer(const std::vector<int32_t>& tids) {
  std::vector<std::function<void()>> wakes;
  {
    base::MutexLock lock(&mutex_);
    for (auto& [s, q] : queues_) {
      bool added = false;
      for (int32_t tid : tids) {
        if (tid <= 0 || q.pending.count(tid))
          continue;
        if (q.pending.size() >= kMaxPendingTids) {
          q.dropped++;
          continue;
        }
        q.pending.insert(tid);
        added = true;
      }
      if (added && q.wake)
        wakes.push_back(q.wake);
    }
  }
  for (const auto& wake : wakes)
    wake();
}

void SeenPids::Take(Subscriber s,
                    std::vector<int32_t>* out,
                    uint64_t* dropped) {
  out->clear();
  base::MutexLock lock(&mutex_);
  auto it = queues_.find(s);
  if (it == queues_.end())
    return;
  out->assign(it->second.pending.begin(), it->second.pending.end());
  it->second.pending.clear();
  *dropped += it->second.dropped;
  it->second.dropped = 0;
}

size_t SeenPids::subscribers() const {
  base::MutexLock lock(&mutex_);
  return queues_.size();
}

}  // namespace probes
}  // namespace ringtrace
