/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Asymmetric fences: a pair of fences that together order like two seq_cst
// fences, where one side runs on every trace event and the other rarely
// (an instance's stop). The hot side pays a compiler barrier instead of a
// locked instruction; the rare side pays a membarrier(2) system call that
// makes every running thread of the process execute a full barrier.
//
// The pattern they serve (store buffering, "Dekker"):
//
//   hot thread T                       rare thread S
//   x.store(1, relaxed)                y.store(1, seq_cst)
//   AsymmetricLightFence()             AsymmetricHeavyFence()
//   r1 = y.load(...)                   r2 = x.load(...)
//
// Guarantee: not both r1 == 0 and r2 == 0. membarrier's
// MEMBARRIER_CMD_PRIVATE_EXPEDITED returns only after every thread of the
// process executed a full memory barrier at a point of its program between
// the call's start and its return (threads not running get one at their
// next context switch). If that point lies after T's load, T's store is
// visible to S's load (r2 == 1); if it lies before T's load, S's store is
// visible to T's load (r1 == 1). The light fence keeps the compiler from
// moving T's load above its store; the CPU may not move it across the
// barrier point.
//
// Availability. The heavy side needs the process registered for private
// expedited membarrier (Linux 4.14 or later, not refused by a seccomp
// filter). EnableAsymmetricFences() registers once per process; until it
// succeeds, and where it fails, the light fence is a seq_cst fence and the
// heavy one too: always correct, at the old price. Every mode the light side
// can observe is one the heavy side also honours (see the .cc).
//
// Thread model: free functions, safe from any thread.

#ifndef SRC_BASE_ASYMMETRIC_FENCE_H_
#define SRC_BASE_ASYMMETRIC_FENCE_H_

#include <atomic>

namespace ringtrace {
namespace base {

namespace internal {
// True once the process is registered for private expedited membarrier.
// Stored once (relaxed) by EnableAsymmetricFences() after the registration
// succeeded; never reset (the registration lasts as long as the process's
// memory map, fork included, see the .cc).
extern std::atomic<bool> g_heavy_fence_is_membarrier;
}  // namespace internal

// Registers the process (once); returns whether the heavy fence is
// membarrier from now on. Call before the hot side starts relying on the
// light fence being cheap, e.g. when a tracing instance starts.
bool EnableAsymmetricFences();

// The hot side's fence, between its store and its load.
inline void AsymmetricLightFence() {
  // Relaxed: a standalone flag. Seeing true implies the registration was
  // done, and the heavy side then always uses membarrier (see the .cc).
  if (internal::g_heavy_fence_is_membarrier.load(std::memory_order_relaxed))
    std::atomic_signal_fence(std::memory_order_seq_cst);
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

// The rare side's fence, between its store and its loads. A system call
// (about 1 us) where membarrier is in use.
void AsymmetricHeavyFence();

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_ASYMMETRIC_FENCE_H_
