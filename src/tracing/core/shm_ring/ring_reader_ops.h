/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The reader's rows of spec section 8: the accesses of the ring's one
// reader (the service's RingReader, and the tests' reader) to the shared
// words, each with the fixed memory order(s) of its row. The writer's rows
// and the pairings of every row are in ringtrace/shm_ring_abi.h; these are
// kept out of the public headers, so an app never includes an operation of
// the reader's side.

#ifndef SRC_TRACING_CORE_SHM_RING_RING_READER_OPS_H_
#define SRC_TRACING_CORE_SHM_RING_RING_READER_OPS_H_

#include <stdint.h>

#include <atomic>

#include "ringtrace/shm_ring_abi.h"

namespace ringtrace {
namespace shm_ring {

// (8.1 R-load-state) acquire.
inline StateWord ReaderLoadState(const std::atomic<uint32_t>& state) {
  return state.load(std::memory_order_acquire);
}
// (8.2 R-load-write-pos) relaxed: a stale value only delays one pass.
inline uint32_t ReaderLoadWritePos(const std::atomic<uint32_t>& write_pos) {
  return write_pos.load(std::memory_order_relaxed);
}
// (8.6 R-settle-hole) Free(k) -> Free(next): release / acquire.
inline bool ReaderSettleHole(std::atomic<uint32_t>& state,
                             StateWord& expected,
                             StateWord desired) {
  return state.compare_exchange_strong(
      expected, desired, std::memory_order_release, std::memory_order_acquire);
}
// (8.9 R-scrape) Acq -> RwR: release / acquire.
inline bool ReaderScrape(std::atomic<uint32_t>& state,
                         StateWord& expected,
                         StateWord desired) {
  return state.compare_exchange_strong(
      expected, desired, std::memory_order_release, std::memory_order_acquire);
}
// (8.11 R-consume) Cpl -> Free(next): release / acquire.
inline bool ReaderConsume(std::atomic<uint32_t>& state,
                          StateWord& expected,
                          StateWord desired) {
  return state.compare_exchange_strong(
      expected, desired, std::memory_order_release, std::memory_order_acquire);
}
// (8.12 R-reclaim) Ack -> Free(next): acq_rel / relaxed.
inline bool ReaderReclaim(std::atomic<uint32_t>& state,
                          StateWord& expected,
                          StateWord desired) {
  return state.compare_exchange_strong(
      expected, desired, std::memory_order_acq_rel, std::memory_order_relaxed);
}
// (8.13 R-store-read-pos) release.
inline void ReaderStoreReadPos(std::atomic<uint32_t>& read_pos,
                               uint32_t value) {
  read_pos.store(value, std::memory_order_release);
}

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_SHM_RING_RING_READER_OPS_H_
