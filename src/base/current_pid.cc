/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/current_pid.h"

#include <pthread.h>
#include <unistd.h>

namespace ringtrace {
namespace base {
namespace internal {

std::atomic<int32_t> g_current_pid{0};

namespace {
void ResetInChild() {
  // The child runs this alone, before fork() returns in it.
  g_current_pid.store(0, std::memory_order_relaxed);
}
}  // namespace

int32_t ReadCurrentPid() {
  // Registered before the first pid is cached, so that every fork() after
  // a cached value resets it in the child.
  static const bool registered =
      pthread_atfork(nullptr, nullptr, &ResetInChild) == 0;
  const int32_t pid = static_cast<int32_t>(getpid());
  if (registered)
    g_current_pid.store(pid, std::memory_order_relaxed);
  return pid;
}

}  // namespace internal
}  // namespace base
}  // namespace ringtrace
