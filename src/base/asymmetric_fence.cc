/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/asymmetric_fence.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace base {

namespace internal {
std::atomic<bool> g_heavy_fence_is_membarrier{false};
}  // namespace internal

namespace {

long Membarrier(int cmd) {
  return syscall(__NR_membarrier, cmd, 0u, 0);
}

// The registration, done once per process by whichever side comes first.
// A function-local static: every caller sees its result, and the result
// is final before any caller returns, so the heavy side never reads a mode
// older than one the light side has seen (the light side sees true only
// after this initialization stored it).
bool Registered() {
  static const bool registered = [] {
    const long supported = Membarrier(MEMBARRIER_CMD_QUERY);
    if (supported < 0 || !(supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
        !(supported & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)) {
      return false;
    }
    if (Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0)
      return false;
    internal::g_heavy_fence_is_membarrier.store(true,
                                                std::memory_order_relaxed);
    return true;
  }();
  return registered;
}

}  // namespace

bool EnableAsymmetricFences() {
  return Registered();
}

void AsymmetricHeavyFence() {
  if (!Registered()) {
    // The light side has only ever seen false: both are seq_cst fences.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return;
  }
  // The registration is a property of the memory map: a forked child
  // shares none with its parent, and on kernels that do not carry the
  // state over the call fails with EPERM; registering again is allowed
  // (idempotent) and restores it. No other failure is documented.
  if (Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
    return;
  const int error = errno;
  RT_CHECK(error == EPERM &&
           Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
           Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0);
}

}  // namespace base
}  // namespace ringtrace
