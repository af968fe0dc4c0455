/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/stopped_rings.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <utility>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace traced {

// static
std::unique_ptr<StoppedRings> StoppedRings::Create(base::Status* status) {
  base::ScopedFd fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!fd.valid()) {
    *status = base::ErrStatus("eventfd: %s", strerror(errno));
    return nullptr;
  }
  *status = base::OkStatus();
  return std::unique_ptr<StoppedRings>(new StoppedRings(std::move(fd)));
}

StoppedRings::StoppedRings(base::ScopedFd fd) : fd_(std::move(fd)) {}

void StoppedRings::Push(ring_drainer::RingId id) {
  base::MutexLock lock(&mutex_);
  rings_.push_back(id);
  const uint64_t one = 1;
  // Cannot block (EFD_NONBLOCK) nor fail short of 2^64 - 2 pending signals.
  if (write(fd_.get(), &one, sizeof(one)) != sizeof(one))
    RT_ELOG("cannot signal a stopped ring: %s", strerror(errno));
}

std::vector<ring_drainer::RingId> StoppedRings::Take() {
  uint64_t count = 0;
  if (read(fd_.get(), &count, sizeof(count)) < 0 && errno != EAGAIN)
    RT_ELOG("stopped-ring eventfd: %s", strerror(errno));
  std::vector<ring_drainer::RingId> rings;
  base::MutexLock lock(&mutex_);
  rings.swap(rings_);
  return rings;
}

}  // namespace traced
}  // namespace ringtrace
