/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// StoppedRings: the rings the drainer stopped on a protocol error, handed
// from the drain thread to the service thread. The drainer stops a ring
// whose shared words break the protocol (RingDrainerOptions::
// on_ring_stopped, drain thread); Push() queues its RingId and signals an
// eventfd the owner polls; Take() returns the queued ids and clears the
// eventfd. ProducerTable maps the ids to the producers still connected.
//
// Invariant: every id pushed is returned by exactly one Take().
//
// Thread model: Push() on the drain thread, Take() and fd() on the
// service thread. The queue is guarded by a mutex (its lock and unlock
// order the ids between the threads); the eventfd carries only a wakeup.

#ifndef SRC_TRACING_SERVICE_TRACED_STOPPED_RINGS_H_
#define SRC_TRACING_SERVICE_TRACED_STOPPED_RINGS_H_

#include <memory>
#include <vector>

#include "ringtrace/status.h"
#include "src/base/scoped_fd.h"
#include "src/base/thread_annotations.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"

namespace ringtrace {
namespace traced {

class StoppedRings {
 public:
  // Null (|status| says why) if the eventfd cannot be created.
  static std::unique_ptr<StoppedRings> Create(base::Status* status);

  StoppedRings(const StoppedRings&) = delete;
  StoppedRings& operator=(const StoppedRings&) = delete;

  // Drain thread: queues ring |id| and signals fd().
  void Push(ring_drainer::RingId id);
  // Service thread: the ids queued since the last call; clears fd().
  std::vector<ring_drainer::RingId> Take();
  // An eventfd, readable while ids are queued.
  int fd() const { return fd_.get(); }

 private:
  explicit StoppedRings(base::ScopedFd fd);

  const base::ScopedFd fd_;  // EFD_NONBLOCK
  base::Mutex mutex_;
  std::vector<ring_drainer::RingId> rings_ RT_GUARDED_BY(mutex_);
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_STOPPED_RINGS_H_
