/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/producer_ring.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"

#include <sys/mman.h>

#include <utility>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace producer {

ProducerRing::ProducerRing(std::unique_ptr<shm_ring::SharedRingRegion> region,
                           const Options& options)
    : region_(std::move(region)), view_(region_->view()), options_(options) {
  RT_CHECK(view_.geometry().IsValid());
}

ProducerRing::~ProducerRing() = default;

std::unique_ptr<shm_ring::TraceWriterV2> ProducerRing::NewTraceWriter(
    base::Status* status) {
  return NewTraceWriter(options_.target_buffer, status);
}

std::unique_ptr<shm_ring::TraceWriterV2> ProducerRing::NewTraceWriter(
    shm_ring::BufferID target_buffer,
    base::Status* status) {
  shm_ring::WriterID id = 0;
  if (!ids_.Allocate(&id)) {
    if (status) {
      *status = base::ErrStatus(
          "all %u writer IDs of this ring are used (IDs are never reused on "
          "a ring; a new ring needs a new connection)",
          shm_ring::WriterIdAllocator::kLastId);
    }
    return nullptr;
  }
  shm_ring::TraceWriterV2::Options writer_options;
  writer_options.writer_id = id;
  writer_options.target_buffer = target_buffer;
  writer_options.policy = options_.policy;
  writer_options.stall_timeout_ms = options_.stall_timeout_ms;
  writer_options.delegate = options_.delegate;
  if (status)
    *status = base::OkStatus();
  auto writer = shm_ring::TraceWriterV2Owner::Create(view_, writer_options);
  if (options_.refuse || options_.losses) {
    shm_ring::TraceWriterV2Owner::AttachProducerControls(
        writer.get(), options_.refuse,
        options_.losses ? &options_.losses->Add(id, target_buffer)->counters
                        : nullptr);
  }
  return writer;
}

bool ProducerRing::MakeInertAfterFork() {
  // Fresh private zero pages at the same address, atomically replacing the
  // shared ones (MAP_FIXED). No writer thread exists in the child but the
  // caller's, which is inside fork().
  void* const base = region_->base();
  const size_t size = region_->size();
  if (mmap(base, size, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != base) {
    return false;
  }
  // Zero pages: every chunk word reads FreeForWrap(0), which no writer that
  // holds a chunk expects (its publish or reuse CAS fails: a protocol error,
  // the unpublished packets are counted lost). Only a new claim could match
  // FreeForWrap(0), at a position of wrap count 0; put both positions at
  // num_chunks (wrap count 1), so a claim, if any writer ever tried one,
  // would find FreeForWrap(0) != FreeForWrap(1) and burn the position. The
  // refuse switch keeps them from trying in the first place.
  // relaxed: private memory, this thread only.
  view_.read_pos()->store(view_.geometry().num_chunks,
                          std::memory_order_relaxed);
  view_.write_pos()->store(view_.geometry().num_chunks,
                           std::memory_order_relaxed);
  return true;
}

}  // namespace producer
}  // namespace ringtrace
