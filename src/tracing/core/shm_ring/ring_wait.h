/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The writer-wait protocol of the shared ring: how a writer that found the
// ring Full (spec 5.4) sleeps until the reader advances read_pos, and how the
// reader wakes it. Both halves live here so that they cannot drift apart; the
// reader (ring_drainer, another process) calls WakeStalledWriters().
//
// Words (ringtrace ABI, see include/ringtrace/shm_ring_abi.h):
//   read_pos             the futex word. The writer sleeps while it still
//                        holds the value the writer sampled when it saw Full.
//   num_writers_waiting  registration counter: how many writers are inside
//                        WaitForReadPosChange(). The reader skips the wake-up
//                        system call while it is zero.
//
// Protocol (W = writer, R = reader):
//   W1 num_writers_waiting.fetch_add(1, relaxed)
//   W2 atomic_thread_fence(seq_cst)                        [fence F_W]
//   W3 if read_pos.load(acquire) != sampled: done
//   W4 FUTEX_WAIT(&read_pos, sampled, remaining time)      (shared futex)
//   W5 loop to W3 until read_pos moved or the deadline passed
//   W6 num_writers_waiting.fetch_sub(1, relaxed)
//
//   R1 read_pos.store(p + 1, release)                      (spec 8)
//   R2 atomic_thread_fence(seq_cst)                        [fence F_R]
//   R3 if num_writers_waiting.load(relaxed) != 0: FUTEX_WAKE(&read_pos, all)
//
// No lost wake-up: F_W and F_R are the one fence pair this project allows
// outside the table of spec section 8 (which needs no seq_cst). The two
// fences order W1 before W3 and R1 before R3 in a single total order, so
// either W3 observes the new read_pos (the writer never sleeps) or R3
// observes the registration (the reader issues FUTEX_WAKE). In the latter
// case the kernel compares read_pos with |sampled| atomically with queueing
// the waiter (W4), so a wake-up that happens before the writer is queued
// makes FUTEX_WAIT return EAGAIN instead of sleeping.
//
// When the reader must wake: at least once after the LAST release store of
// read_pos of a pass (a bounded run of resolutions, e.g. one drain of the
// ring), before it goes idle. Calling it after every store is correct too,
// but not needed: R1 above stands for the pass's last store. Why that is
// sufficient: a writer stalled on a sampled value older than the pass's
// final value either has its fence F_W before F_R in the fence order (then
// R3 sees its registration W1 and the reader issues FUTEX_WAKE) or after it
// (then W3 reads the final value or a later one, which differs from its
// sample, and it never sleeps; a FUTEX_WAIT already queued ends at that
// FUTEX_WAKE, and one not yet queued returns EAGAIN because the word
// changed). A writer that sampled the final value itself saw the ring Full
// after the pass and waits for the next pass, which ends with its own
// wake-up. Intermediate stores of a pass need no wake-up because nothing a
// writer does depends on which of them it saw.
//
// The futex is SHARED (no FUTEX_PRIVATE_FLAG): the reader lives in another
// process that maps the same memfd. Every wait is bounded by a deadline, so a
// reader that never comes back (or never wakes) cannot hang the host app.
//
// On non-Linux systems the wait degrades to bounded polling with sleeps.

#ifndef SRC_TRACING_CORE_SHM_RING_RING_WAIT_H_
#define SRC_TRACING_CORE_SHM_RING_RING_WAIT_H_

#include <stdint.h>

#include "ringtrace/shm_ring_abi.h"
#include "src/base/time.h"

namespace ringtrace {
namespace shm_ring {

// Test hook: runs after the writer registered in num_writers_waiting and
// executed its fence, before its first read_pos re-check (between W2 and W3).
// Lets a test force the order "reader advances before the writer sleeps".
using StallHook = void (*)(void* arg);

// Writer side (W1..W6). Returns true if read_pos differs from |sampled|
// before |deadline_ns| (base::MonotonicNs() time base), false on timeout.
// If |futex_wakes| is not null, it receives how many of the writer's
// FUTEX_WAITs ended by a FUTEX_WAKE (rather than a timeout, a signal or a
// changed word); tests use it to prove that a wake-up through ANOTHER mapping
// of the same memory reaches the sleeper, i.e. that the futex is shared.
bool WaitForReadPosChange(const RingView& ring,
                          uint32_t sampled,
                          uint64_t deadline_ns,
                          StallHook hook = nullptr,
                          void* hook_arg = nullptr,
                          uint32_t* futex_wakes = nullptr);

// Reader side (R2..R3). Call at least once after the last release store of
// read_pos of each pass (see "When the reader must wake" above); calling it
// after every store is also correct. Returns true if a FUTEX_WAKE was issued
// (some writer was registered).
bool WakeStalledWriters(const RingView& ring);

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_SHM_RING_RING_WAIT_H_
