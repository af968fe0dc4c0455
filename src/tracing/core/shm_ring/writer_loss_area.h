/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The writer loss area: every writer's loss counters in memory the service
// can read without the producer's cooperation, so that the last losses of a
// producer killed before its final loss report (docs/service.md, "Loss
// reports") are still counted.
//
// Where: a trailer of kWriterLossAreaSize bytes after a ring's mapping, in
// the same memfd (the file is RingGeometry::MappingSize() +
// kWriterLossAreaSize bytes). It is not part of the ring: the ring's bytes
// are exactly those the ring protocol lays out, and nothing of the ring
// protocol reads the trailer. Keeping it in the ring's file gives it the
// ring's lifetime, sealing and fork handling (ProducerRing::
// MakeInertAfterFork replaces the whole mapping, trailer included, so a
// forked child never writes its parent's counters).
//
// Layout: kWriterLossSlots slots of 64 bytes, one cache line each (writers
// on different threads never share a line), in the host's byte order (the
// producer stores them as atomics; both ends run on the same machine).
//   u32 ids        writer_id (low 16 bits, 1..65535) | target_buffer << 16;
//                  0: the slot is unused
//   u32 reserved   0
//   u64 packets_dropped_before_end, packets_dropped_after_end,
//       bytes_dropped, stall_timeouts (the WriterLossEntry counters)
//
// Producer side (WriterLossRegistry): the n-th writer the producer creates
// gets slot n - 1 while n <= kWriterLossSlots; later writers are reported
// over the socket only. The slot's ids are stored when the writer is
// created, before it can lose anything; its counters by the writer's thread
// (TraceWriterV2::SyncLosses) BEFORE the producer-private copy the socket
// reports are read from, so the area is never behind a report the service
// received.
//
// Service side: reads the area once, with pread(2) on the memfd, when the
// producer is removed (after its final drain), and treats every slot as an
// untrusted loss report (ProducerLossTable's rules: monotonic, bounded,
// owned by the session of its target buffer). Torn values are harmless:
// each counter is monotonic on its own, and the service never acts on a
// relation between two of them.

#ifndef SRC_TRACING_CORE_SHM_RING_WRITER_LOSS_AREA_H_
#define SRC_TRACING_CORE_SHM_RING_WRITER_LOSS_AREA_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>

namespace ringtrace {
namespace shm_ring {

constexpr size_t kWriterLossSlots = 1024;
constexpr size_t kWriterLossSlotSize = 64;
constexpr size_t kWriterLossAreaSize = kWriterLossSlots * kWriterLossSlotSize;

// One slot as the producer writes it. Every field is written by one thread
// only (ids by the thread creating the writer, the counters by the writer's
// thread), relaxed: nobody in the producer reads them, and the service reads
// the bytes with pread(2) after the producer is gone.
struct alignas(kWriterLossSlotSize) WriterLossSlot {
  std::atomic<uint32_t> ids{0};
  uint32_t reserved = 0;
  std::atomic<uint64_t> packets_dropped_before_end{0};
  std::atomic<uint64_t> packets_dropped_after_end{0};
  std::atomic<uint64_t> bytes_dropped{0};
  std::atomic<uint64_t> stall_timeouts{0};
};
static_assert(sizeof(WriterLossSlot) == kWriterLossSlotSize,
              "one slot per cache line");
static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "shared-memory atomics must be lock-free");

// Byte offsets inside a slot, for the service's parse of a copy.
constexpr size_t kLossSlotIdsOffset = 0;
constexpr size_t kLossSlotCountersOffset = 8;

constexpr uint32_t PackLossSlotIds(uint32_t writer_id, uint32_t buffer) {
  return (writer_id & 0xffffu) | (buffer & 0xffffu) << 16;
}

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_SHM_RING_WRITER_LOSS_AREA_H_
