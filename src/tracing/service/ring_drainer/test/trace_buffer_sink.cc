/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/trace_buffer_sink.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

trace_buffer::AdmissionFlags ToAdmissionFlags(shm_ring::ChunkFlags flags) {
  trace_buffer::AdmissionFlags out = trace_buffer::kNoAdmissionFlags;
  if (flags & shm_ring::kFlagContinuesFromPrev)
    out = out | trace_buffer::kChunkContinuesFromPrev;
  if (flags & shm_ring::kFlagContinuesOnNext)
    out = out | trace_buffer::kChunkContinuesOnNext;
  if (flags & shm_ring::kFlagDataLoss)
    out = out | trace_buffer::kChunkDataLoss;
  return out;
}

TraceBufferSink::~TraceBufferSink() = default;

uint8_t* TraceBufferSink::BeginChunkFragments(ProducerID producer_id,
                                              const ClientIdentity& identity,
                                              WriterID writer_id,
                                              ChunkID chunk_id,
                                              const uint32_t* sizes,
                                              size_t num_fragments,
                                              shm_ring::ChunkFlags flags) {
  return buffer_->BeginChunkFragments(producer_id, identity, writer_id,
                                      chunk_id, sizes, num_fragments,
                                      ToAdmissionFlags(flags));
}

void TraceBufferSink::CommitPendingChunk() {
  buffer_->CommitPendingChunk();
}

void TraceBufferSink::AbortPendingChunk() {
  buffer_->AbortPendingChunk();
}

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace
