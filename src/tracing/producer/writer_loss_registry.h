/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// WriterLossRegistry: the loss counters of every writer a producer ever
// created, and what the producer has told the service about them.
//
// Each TraceWriterV2 the producer hands out gets a slot here
// (AttachProducerControls): the writer's thread keeps the slot's
// WriterLossCounters equal to its own counters. The slot outlives the
// writer, so the counters of a writer the app destroyed are still reported.
// Slots are freed only with the registry (the Producer), at most one per
// WriterID (65535).
//
// Reporting (docs/service.md, "Loss reports"):
//   - CollectChanged() picks up to kMaxLossEntriesPerMessage writers whose
//     counters changed since they were last reported, for a DrainRequest.
//     When nothing changed since the last complete sweep it costs two
//     relaxed/acquire loads, so every DrainRequest may call it.
//   - MarkReported() records that the entries went out (the send
//     succeeded). A report that could not be sent is simply collected again
//     next time: the counters are cumulative, so only the latest matters.
//   - CollectAll() walks every writer that ever lost anything, for the final
//     report on an orderly disconnect.
// Two threads may collect concurrently (two DrainRequests racing): then an
// entry may go out twice, which the service ignores (a report that does not
// increase a counter changes nothing). No change is ever missed: a slot is
// marked reported with the version it was read at, and the registry-wide
// "nothing changed" mark is set only to the change count read before a
// complete sweep began.
//
// Shared area: the first writers' counters also live in the ring's writer
// loss area (AttachSharedArea), which the service reads when the producer
// is gone, so a producer killed before its final report loses no report.
//
// Thread model: Add() from any thread (lock-free push); CollectChanged(),
// MarkReported() and CollectAll() from any thread, concurrently with Add()
// and with the writers' updates; lock-free, no allocation.

#ifndef SRC_TRACING_PRODUCER_WRITER_LOSS_REGISTRY_H_
#define SRC_TRACING_PRODUCER_WRITER_LOSS_REGISTRY_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "ringtrace/shm_ring_abi.h"
#include "ringtrace/trace_writer_v2.h"
#include "src/tracing/core/shm_ring/writer_loss_counters.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace producer {

class WriterLossRegistry {
 public:
  struct Slot {
    shm_ring::WriterID writer_id = 0;
    shm_ring::BufferID target_buffer = 0;  // the buffer the writer writes
    shm_ring::WriterLossCounters counters;
    // counters.version when this slot was last sent.
    std::atomic<uint32_t> reported_version{0};
    Slot* next = nullptr;  // immutable once the slot is published
  };

  // What CollectChanged() put in a message, for MarkReported().
  struct Batch {
    size_t size = 0;
    Slot* slots[ipc::kMaxLossEntriesPerMessage] = {};
    uint32_t versions[ipc::kMaxLossEntriesPerMessage] = {};
    // The sweep saw every changed slot: after the send, the registry may be
    // marked clean up to |changes_at_start|.
    bool complete = false;
    uint64_t changes_at_start = 0;
  };

  WriterLossRegistry();
  ~WriterLossRegistry();
  WriterLossRegistry(const WriterLossRegistry&) = delete;
  WriterLossRegistry& operator=(const WriterLossRegistry&) = delete;

  // Gives the first |size| / 64 writers a slot of the ring's writer loss
  // area (writer_loss_area.h) at |area| (64-byte aligned, mapped as long as
  // the registry lives), so that the service reads their counters even if
  // the producer dies before its final report. Before the first Add().
  void AttachSharedArea(uint8_t* area, size_t size);

  // A new slot for |writer_id| writing |target_buffer|; never fails
  // (allocates once per writer, on the thread creating it).
  Slot* Add(shm_ring::WriterID writer_id, shm_ring::BufferID target_buffer);

  // Fills |msg| (flags untouched) with up to kMaxLossEntriesPerMessage
  // changed writers and |batch| with what to mark. Returns the number of
  // entries (0: nothing to report).
  size_t CollectChanged(ipc::DrainRequestMsg* msg, Batch* batch);
  void MarkReported(const Batch& batch);

  // Calls |fn(const ipc::WriterLossEntry&)| for every writer whose counters
  // are not all zero, in no particular order.
  template <typename Fn>
  void ForEachLoss(Fn fn) const {
    // acquire: pairs with the release push in Add(), so each slot's
    // writer_id and next are seen initialized.
    for (const Slot* s = head_.load(std::memory_order_acquire); s;
         s = s->next) {
      ipc::WriterLossEntry e;
      if (Read(*s, &e))
        fn(e);
    }
  }

  uint32_t size() const {
    // relaxed: a count for tests and stats.
    return count_.load(std::memory_order_relaxed);
  }

 private:
  // Reads |slot| into |e|; false if every counter is zero.
  static bool Read(const Slot& slot, ipc::WriterLossEntry* e);

  // The writer loss area, set before any Add(); then read-only.
  shm_ring::WriterLossSlot* shared_slots_ = nullptr;
  size_t num_shared_slots_ = 0;
  std::atomic<size_t> next_shared_slot_{0};
  std::atomic<Slot*> head_{nullptr};
  std::atomic<uint32_t> count_{0};
  // Bumped by the writers (WriterLossCounters::changes) after every update.
  std::atomic<uint64_t> changes_{0};
  // changes_ as of the start of the last complete sweep that was sent.
  std::atomic<uint64_t> reported_changes_{0};
};

}  // namespace producer
}  // namespace ringtrace

#endif  // SRC_TRACING_PRODUCER_WRITER_LOSS_REGISTRY_H_
