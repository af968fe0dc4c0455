/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Test support: a ChunkSink that admits the drainer's chunks into a
// TraceBufferV2, for the drainer's tests and benchmarks that read packets
// back from a real buffer (the pipeline, stress, drain-loop and
// cross-process tests, the drain benchmarks).
//
// It is a plain forward to TraceBufferV2's two-phase fragment admission
// (BeginChunkFragments / CommitPendingChunk / AbortPendingChunk), with the
// ring's state word flags translated to the buffer's admission flags bit by
// bit by name. It keeps no loss bookkeeping: the production sink, the
// service's TraceBufferV2Sink, adds the count of packets a full DISCARD
// buffer loses on top of the same forward, and has its own tests in the
// service. The drainer sits below the service, so its tests use this one;
// for a RING_BUFFER the two do the same work per chunk.
//
// Thread model: TraceBufferV2 is not thread-safe; the sink is used on the
// thread that drains into the buffer.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_TEST_TRACE_BUFFER_SINK_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_TEST_TRACE_BUFFER_SINK_H_

#include <stddef.h>
#include <stdint.h>

#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/service/ring_drainer/chunk_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

// State word flags (spec 3.3) -> TraceBufferV2 admission flags.
trace_buffer::AdmissionFlags ToAdmissionFlags(shm_ring::ChunkFlags flags);

class TraceBufferSink : public ChunkSink {
 public:
  // |buffer| is not owned and must outlive the sink.
  explicit TraceBufferSink(trace_buffer::TraceBufferV2* buffer)
      : buffer_(buffer) {}
  ~TraceBufferSink() override;

  uint8_t* BeginChunkFragments(ProducerID producer_id,
                               const ClientIdentity& identity,
                               WriterID writer_id,
                               ChunkID chunk_id,
                               const uint32_t* sizes,
                               size_t num_fragments,
                               shm_ring::ChunkFlags flags) override;
  void CommitPendingChunk() override;
  void AbortPendingChunk() override;

  trace_buffer::TraceBufferV2* buffer() const { return buffer_; }

 private:
  trace_buffer::TraceBufferV2* const buffer_;
};

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_TEST_TRACE_BUFFER_SINK_H_
