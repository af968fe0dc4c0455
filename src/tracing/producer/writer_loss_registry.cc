/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/writer_loss_registry.h"

#include "ringtrace/logging.h"

namespace ringtrace {
namespace producer {

WriterLossRegistry::WriterLossRegistry() = default;

WriterLossRegistry::~WriterLossRegistry() {
  // relaxed: no other thread uses the registry any more (every writer is
  // gone before its Producer).
  Slot* s = head_.load(std::memory_order_relaxed);
  while (s) {
    Slot* next = s->next;
    delete s;
    s = next;
  }
}

void WriterLossRegistry::AttachSharedArea(uint8_t* area, size_t size) {
  RT_CHECK(count_.load(std::memory_order_relaxed) == 0);
  RT_CHECK(reinterpret_cast<uintptr_t>(area) % shm_ring::kWriterLossSlotSize ==
           0);
  shared_slots_ = reinterpret_cast<shm_ring::WriterLossSlot*>(area);
  num_shared_slots_ = size / shm_ring::kWriterLossSlotSize;
}

WriterLossRegistry::Slot* WriterLossRegistry::Add(
    shm_ring::WriterID writer_id,
    shm_ring::BufferID target_buffer) {
  Slot* slot = new Slot();
  slot->writer_id = writer_id;
  slot->target_buffer = target_buffer;
  slot->counters.changes = &changes_;
  // relaxed: a ticket; each index is handed out once.
  const size_t index =
      next_shared_slot_.fetch_add(1, std::memory_order_relaxed);
  if (index < num_shared_slots_) {
    shm_ring::WriterLossSlot* shared = &shared_slots_[index];
    // relaxed: read by the service only (pread, after the producer is
    // gone); the writer cannot lose anything before it exists.
    shared->ids.store(shm_ring::PackLossSlotIds(writer_id, target_buffer),
                      std::memory_order_relaxed);
    slot->counters.shared = shared;
  }
  // relaxed load; the CAS below validates it.
  Slot* head = head_.load(std::memory_order_relaxed);
  do {
    slot->next = head;
    // release on success: pairs with the acquire loads of head_ in the
    // walks, which then see the slot's fields. relaxed on failure: |head|
    // is only a new guess.
  } while (!head_.compare_exchange_weak(head, slot, std::memory_order_release,
                                        std::memory_order_relaxed));
  // relaxed: a statistic.
  count_.fetch_add(1, std::memory_order_relaxed);
  return slot;
}

bool WriterLossRegistry::Read(const Slot& slot, ipc::WriterLossEntry* e) {
  const shm_ring::WriterLossCounters& c = slot.counters;
  e->writer_id = slot.writer_id;
  e->target_buffer = slot.target_buffer;
  // relaxed: ordered after the caller's acquire load of the version (or of
  // the registry's change count), see WriterLossCounters.
  e->packets_dropped_before_end =
      c.packets_dropped_before_end.load(std::memory_order_relaxed);
  e->packets_dropped_after_end =
      c.packets_dropped_after_end.load(std::memory_order_relaxed);
  e->bytes_dropped = c.bytes_dropped.load(std::memory_order_relaxed);
  e->stall_timeouts = c.stall_timeouts.load(std::memory_order_relaxed);
  return e->packets_dropped_before_end != 0 ||
         e->packets_dropped_after_end != 0 || e->bytes_dropped != 0 ||
         e->stall_timeouts != 0;
}

size_t WriterLossRegistry::CollectChanged(ipc::DrainRequestMsg* msg,
                                          Batch* batch) {
  *batch = Batch();
  msg->num_entries = 0;
  // acquire: pairs with the writers' release increments of changes_, so the
  // versions read below are at least as new as the change count.
  const uint64_t changes = changes_.load(std::memory_order_acquire);
  // relaxed: only compared; the sweep re-reads everything it sends.
  if (changes == reported_changes_.load(std::memory_order_relaxed))
    return 0;
  batch->changes_at_start = changes;
  batch->complete = true;
  // acquire: pairs with the release push in Add().
  for (Slot* s = head_.load(std::memory_order_acquire); s; s = s->next) {
    // acquire: pairs with the writer's release increment of the version, so
    // the counters read next are the ones of that version or newer.
    const uint32_t version =
        s->counters.version.load(std::memory_order_acquire);
    // relaxed: only this registry's collectors store it, and a stale value
    // costs a duplicate entry at worst.
    if (version == s->reported_version.load(std::memory_order_relaxed))
      continue;
    if (batch->size == ipc::kMaxLossEntriesPerMessage) {
      batch->complete = false;  // more to send with the next request
      break;
    }
    ipc::WriterLossEntry e;
    Read(*s, &e);  // a changed slot has a non-zero counter
    msg->entries[msg->num_entries++] = e;
    batch->slots[batch->size] = s;
    batch->versions[batch->size] = version;
    batch->size++;
  }
  if (batch->size == 0) {
    // Every change was reported by a concurrent collector already.
    MarkReported(*batch);
  }
  return batch->size;
}

void WriterLossRegistry::MarkReported(const Batch& batch) {
  for (size_t i = 0; i < batch.size; i++) {
    // relaxed: see CollectChanged(). A collector that sent an older version
    // concurrently may overwrite a newer mark; the slot then goes out once
    // more.
    batch.slots[i]->reported_version.store(batch.versions[i],
                                           std::memory_order_relaxed);
  }
  if (batch.complete) {
    // relaxed: compared only (see CollectChanged()); a change after
    // changes_at_start keeps changes_ different from it.
    reported_changes_.store(batch.changes_at_start, std::memory_order_relaxed);
  }
}

}  // namespace producer
}  // namespace ringtrace
