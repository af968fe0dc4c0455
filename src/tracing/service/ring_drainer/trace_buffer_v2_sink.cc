/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/trace_buffer_v2_sink.h"

namespace ringtrace {
namespace ring_drainer {

TraceBufferV2Sink::~TraceBufferV2Sink() = default;

uint8_t* TraceBufferV2Sink::BeginChunkFragments(
    ProducerID producer_id,
    const trace_buffer::ClientIdentity& identity,
    WriterID writer_id,
    ChunkID chunk_id,
    const uint32_t* sizes,
    size_t num_fragments,
    shm_ring::ChunkFlags flags) {
  return buffer_->BeginChunkFragments(producer_id, identity, writer_id,
                                      chunk_id, sizes, num_fragments,
                                      MapChunkFlags(flags));
}

void TraceBufferV2Sink::CommitPendingChunk() {
  buffer_->CommitPendingChunk();
}

void TraceBufferV2Sink::AbortPendingChunk() {
  buffer_->AbortPendingChunk();
}

}  // namespace ring_drainer
}  // namespace ringtrace
