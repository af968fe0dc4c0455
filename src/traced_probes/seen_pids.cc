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
  Add(tids, /*renamed=*/false);
}

void SeenPids::OfferRenamed(const std::vector<int32_t>& tids) {
  Add(tids, /*renamed=*/true);
}

void SeenPids::Add(const std::vector<int32_t>& tids, bool renamed) {
  std::vector<std::function<void()>> wakes;
  {
    base::MutexLock lock(&mutex_);
    for (auto& [s, q] : queues_) {
      bool added = false;
      for (int32_t tid : tids) {
        if (tid <= 0)
          continue;
        if (!q.pending.count(tid)) {
          if (q.pending.size() >= kMaxPendingTids) {
            q.dropped++;
            continue;
          }
          q.pending.insert(tid);
          added = true;
        }
        if (renamed && q.renamed.insert(tid).second)
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
                    std::vector<int32_t>* renamed,
                    uint64_t* dropped) {
  out->clear();
  renamed->clear();
  base::MutexLock lock(&mutex_);
  auto it = queues_.find(s);
  if (it == queues_.end())
    return;
  Queue& q = it->second;
  out->assign(q.pending.begin(), q.pending.end());
  renamed->assign(q.renamed.begin(), q.renamed.end());
  q.pending.clear();
  q.renamed.clear();
  *dropped += q.dropped;
  q.dropped = 0;
}

size_t SeenPids::subscribers() const {
  base::MutexLock lock(&mutex_);
  return queues_.size();
}

}  // namespace probes
}  // namespace ringtrace
