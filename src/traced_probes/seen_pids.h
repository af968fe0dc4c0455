/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// SeenPids: the thread ids linux.ftrace instances saw in the kernel's
// events, handed to the linux.process_stats instances that describe
// processes on demand (docs/probes.md, "linux.process_stats"): as in
// Perfetto's traced_probes, a process that started after the session's
// scan is described when the kernel's events first name one of its
// threads.
//
// The producer is told no session id, so it cannot tell which ftrace
// instance shares a session with which process_stats instance: every
// subscriber gets every tid offered (each instance describes what it has
// not described yet, so the cost is one /proc lookup per new tid).
//
// A tid can also be offered as renamed (a task/task_rename event: an exec,
// or a thread naming itself): the subscriber then describes it again even
// if it described it before, since a process described between its fork
// and its exec was described with its parent's command line.
//
// Bounds: a subscriber holds at most kMaxPendingTids tids not taken yet
// (renamed ones among them); more are dropped and counted (a fork bomb
// makes the queue full, never long). Offers of a tid already pending cost
// nothing.
//
// Thread model: every method from any thread (one mutex). The waker runs
// on the thread that offers, with no lock of SeenPids held.

#ifndef SRC_TRACED_PROBES_SEEN_PIDS_H_
#define SRC_TRACED_PROBES_SEEN_PIDS_H_

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <map>
#include <set>
#include <vector>

#include "src/base/thread_annotations.h"

namespace ringtrace {
namespace probes {

constexpr size_t kMaxPendingTids = 4096;

class SeenPids {
 public:
  using Subscriber = uint64_t;

  SeenPids() = default;
  SeenPids(const SeenPids&) = delete;
  SeenPids& operator=(const SeenPids&) = delete;

  // A new subscriber (never 0); |wake| (may be empty) is called after an
  // offer gave it a tid it did not have pending.
  Subscriber Subscribe(std::function<void()> wake);
  // Replaces the subscriber's waker (an instance learns its loop handle
  // after it subscribed).
  void SetWaker(Subscriber s, std::function<void()> wake);
  void Unsubscribe(Subscriber s);

  // Tids seen (tid <= 0 is ignored): added to every subscriber's pending
  // set, up to kMaxPendingTids each.
  void Offer(const std::vector<int32_t>& tids);
  // The same, each marked renamed (until taken).
  void OfferRenamed(const std::vector<int32_t>& tids);

  // Moves the subscriber's pending tids (ascending) into |*out|, those of
  // them marked renamed into |*renamed| (ascending), and adds to |*dropped|
  // the tids dropped for it since the last Take().
  void Take(Subscriber s,
            std::vector<int32_t>* out,
            std::vector<int32_t>* renamed,
            uint64_t* dropped);

  size_t subscribers() const;

 private:
  struct Queue {
    std::set<int32_t> pending;
    std::set<int32_t> renamed;  // a subset of |pending|
    uint64_t dropped = 0;
    std::function<void()> wake;
  };

  void Add(const std::vector<int32_t>& tids, bool renamed);

  mutable base::Mutex mutex_;
  std::map<Subscriber, Queue> queues_ RT_GUARDED_BY(mutex_);
  Subscriber next_ RT_GUARDED_BY(mutex_) = 1;
};

}  // namespace probes
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_SEEN_PIDS_H_
