/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/shm_ring/ring_wait.h"

#include <errno.h>
#include <time.h>

#include <atomic>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "src/base/scoped_errno.h"

namespace ringtrace {
namespace shm_ring {

namespace {

using base::kNsPerSec;

// Sleeps while *word == expected, at most |timeout_ns|. Spurious returns are
// fine: the caller re-checks. Returns true if a FUTEX_WAKE ended the sleep.
bool FutexWait(std::atomic<uint32_t>* word,
               uint32_t expected,
               uint64_t timeout_ns) {
  // A stalled writer sleeps inside the app's code: ETIMEDOUT or EAGAIN from
  // the futex must not leak into the app's errno.
  const base::ScopedPreserveErrno preserve_errno;
#if defined(__linux__)
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout_ns / kNsPerSec);
  ts.tv_nsec = static_cast<long>(timeout_ns % kNsPerSec);
  // FUTEX_WAIT without FUTEX_PRIVATE_FLAG: the word is in a MAP_SHARED
  // mapping and the waker is another process. The timeout is relative.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT,
                 expected, &ts, nullptr, 0) == 0;
#else
  (void)word;
  (void)expected;
  struct timespec ts = {
      0, static_cast<long>(timeout_ns < 1000000 ? timeout_ns : 1000000)};
  nanosleep(&ts, nullptr);
  return false;
#endif
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT32_MAX,
          nullptr, nullptr, 0);
#else
  (void)word;
#endif
}

}  // namespace

bool WaitForReadPosChange(const RingView& ring,
                          uint32_t sampled,
                          uint64_t deadline_ns,
                          StallHook hook,
                          void* hook_arg,
                          uint32_t* futex_wakes) {
  std::atomic<uint32_t>* const read_pos = ring.read_pos();
  std::atomic<uint32_t>* const waiting = ring.num_writers_waiting();

  // W1. relaxed; ordered against the re-check below by fence F_W, and read by
  // the reader's relaxed load in WakeStalledWriters (R3) after fence F_R.
  waiting->fetch_add(1, std::memory_order_relaxed);
  // W2: fence F_W, the documented writer-wait fence (see ring_wait.h); fence
  // F_W pairs with fence F_R in WakeStalledWriters.
  std::atomic_thread_fence(std::memory_order_seq_cst);

  if (hook)
    hook(hook_arg);

  bool moved = false;
  // Bounded: every iteration either returns or sleeps until the deadline,
  // which is strictly in the future when FutexWait is called.
  for (;;) {
    // W3: (8.3 W-load-read-pos) pairs with (8.13 R-store-read-pos), so the
    // capacity it advertises is usable.
    if (WriterLoadReadPos(*read_pos) != sampled) {
      moved = true;
      break;
    }
    const uint64_t now = base::MonotonicNs();
    if (now >= deadline_ns)
      break;
    if (FutexWait(read_pos, sampled, deadline_ns - now) && futex_wakes)  // W4
      ++*futex_wakes;
  }

  // W6. relaxed: deregistration only saves the reader a system call.
  waiting->fetch_sub(1, std::memory_order_relaxed);
  return moved;
}

bool WakeStalledWriters(const RingView& ring) {
  // R2: fence F_R; pairs with fence F_W in WaitForReadPosChange. Orders the
  // caller's release stores of read_pos (R1, the last of its pass and every
  // earlier one) before the load below.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // R3. relaxed; it observes the writer's registration (W1) because of the
  // fence pair F_W / F_R, not by itself.
  if (ring.num_writers_waiting()->load(std::memory_order_relaxed) == 0)
    return false;
  FutexWakeAll(ring.read_pos());
  return true;
}

}  // namespace shm_ring
}  // namespace ringtrace
