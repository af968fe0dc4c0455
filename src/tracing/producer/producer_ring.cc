/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/producer_ring.h"

#include <utility>

#include "src/base/logging.h"

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
  writer_options.target_buffer = options_.target_buffer;
  writer_options.policy = options_.policy;
  writer_options.stall_timeout_ms = options_.stall_timeout_ms;
  writer_options.delegate = options_.delegate;
  if (status)
    *status = base::OkStatus();
  return std::make_unique<shm_ring::TraceWriterV2>(view_, writer_options);
}

}  // namespace producer
}  // namespace ringtrace
