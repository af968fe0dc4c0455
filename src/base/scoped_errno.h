/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ScopedPreserveErrno: restores errno when it goes out of scope.
//
// For the producer-side code that runs inside an app's own code (a trace
// point that ends up in a system call: a DrainRequest send, a futex wait of
// a stalled writer). An app that traces between a failing call and its read
// of errno must find errno as it left it:
//
//   int r = write(fd, buf, n);
//   TRACE_SOMETHING();  // may send a DrainRequest
//   if (r < 0 && errno == EAGAIN) ...
//
// Thread model: errno is per thread; so is this object.

#ifndef SRC_BASE_SCOPED_ERRNO_H_
#define SRC_BASE_SCOPED_ERRNO_H_

#include <errno.h>

namespace ringtrace {
namespace base {

class ScopedPreserveErrno {
 public:
  ScopedPreserveErrno() : saved_(errno) {}
  ~ScopedPreserveErrno() { errno = saved_; }
  ScopedPreserveErrno(const ScopedPreserveErrno&) = delete;
  ScopedPreserveErrno& operator=(const ScopedPreserveErrno&) = delete;

 private:
  const int saved_;
};

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_SCOPED_ERRNO_H_
