/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2Sink: the production ChunkSink, a thin adapter over
// TraceBufferV2's two-phase fragment admission (BeginChunkFragments /
// CommitPendingChunk / AbortPendingChunk). The ring reader copies each
// fragment straight from shared memory into the buffer: one copy.
//
// Thread model: TraceBufferV2 is not thread-safe; the sink must be used on
// the thread that owns the buffer (the drain thread).

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_TRACE_BUFFER_V2_SINK_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_TRACE_BUFFER_V2_SINK_H_

#include "src/tracing/service/ring_drainer/chunk_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {

class TraceBufferV2Sink : public ChunkSink {
 public:
  // |buffer| is not owned and must outlive the sink.
  explicit TraceBufferV2Sink(trace_buffer::TraceBufferV2* buffer)
      : buffer_(buffer) {}
  ~TraceBufferV2Sink() override;

  bool BeginChunkFragments(ProducerID producer_id,
                           const ClientIdentity& identity,
                           WriterID writer_id,
                           ChunkID chunk_id,
                           const uint32_t* sizes,
                           size_t num_fragments,
                           uint32_t flags,
                           uint8_t** frag_dst) override {
    return buffer_->BeginChunkFragments(producer_id, identity, writer_id,
                                        chunk_id, sizes, num_fragments, flags,
                                        frag_dst);
  }
  void CommitPendingChunk() override { buffer_->CommitPendingChunk(); }
  void AbortPendingChunk() override { buffer_->AbortPendingChunk(); }

  trace_buffer::TraceBufferV2* buffer() const { return buffer_; }

 private:
  trace_buffer::TraceBufferV2* const buffer_;
};

}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_TRACE_BUFFER_V2_SINK_H_
