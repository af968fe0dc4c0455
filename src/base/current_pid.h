/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// CurrentPid(): getpid() without the system call on every use.
//
// glibc stopped caching the pid (2.25), so each getpid() is a real system
// call: about 1 us on the development VM, more than the nine packets of the
// example app's whole cycle, which computed its process track's uuid twice
// per cycle. The pid is read once and kept; a child of fork() starts with
// the cache emptied by a pthread_atfork() handler and reads its own.
// A child created by a raw clone() system call (not fork(), vfork() or
// posix_spawn(), which run the handlers or exec) would keep the parent's
// pid: no code of this project does that.
//
// Thread model: safe from any thread.

#ifndef SRC_BASE_CURRENT_PID_H_
#define SRC_BASE_CURRENT_PID_H_

#include <stdint.h>

#include <atomic>

namespace ringtrace {
namespace base {

namespace internal {
// The cached pid; 0: not read yet (or reset in a fork child). Relaxed: a
// standalone value, and every value stored is the process's pid.
extern std::atomic<int32_t> g_current_pid;
int32_t ReadCurrentPid();
}  // namespace internal

inline int32_t CurrentPid() {
  const int32_t pid = internal::g_current_pid.load(std::memory_order_relaxed);
  return pid != 0 ? pid : internal::ReadCurrentPid();
}

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_CURRENT_PID_H_
