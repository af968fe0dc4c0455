/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ChunkSink: where the drain loop delivers the chunks of one target buffer.
//
// It mirrors the two-phase fragment admission of TraceBufferV2 (see
// src/tracing/service/trace_buffer_v2/trace_buffer_v2.h) without depending
// on it: the drainer reserves room for the
// fragments (Begin), the ring reader copies them straight from shared memory
// into that room (one copy: a ring chunk's fragments lie back to back, and
// so they go), and the drainer then either commits the chunk (the reader
// won the ownership CAS) or aborts it (the CAS lost; the copy was
// speculative). At most one chunk is pending per sink at a time.
//
// The production sink is the service's TraceBufferV2Sink
// (src/tracing/service/ring_drainer/trace_buffer_v2_sink.h), which maps the
// ring's flags to TraceBufferV2's; tests use a recording sink.
//
// Thread model: called from the drain thread only.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_CHUNK_SINK_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_CHUNK_SINK_H_

#include <stddef.h>
#include <stdint.h>

#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2_types.h"

namespace ringtrace {
namespace ring_drainer {

// The project's identifiers (ringtrace/ids.h) and the trusted identity.
using ::ringtrace::BufferID;
using ::ringtrace::ChunkID;
using ::ringtrace::ProducerID;
using ::ringtrace::WriterID;
using trace_buffer::ClientIdentity;
using trace_buffer::SequenceKey;

class ChunkSink {
 public:
  virtual ~ChunkSink();

  // Reserves room for |num_fragments| fragments of |sizes[i]| bytes and
  // returns where they go, back to back (the sum of |sizes| bytes: fragment
  // 0's, then fragment 1's, ...). |flags| are the chunk's state word flags
  // (continues-from-prev, continues-on-next, data-loss). Returns nullptr if
  // the chunk is rejected (the sink counts it; nothing is pending then).
  virtual uint8_t* BeginChunkFragments(ProducerID producer_id,
                                       const ClientIdentity& identity,
                                       WriterID writer_id,
                                       ChunkID chunk_id,
                                       const uint32_t* sizes,
                                       size_t num_fragments,
                                       shm_ring::ChunkFlags flags) = 0;

  // The pending chunk becomes readable.
  virtual void CommitPendingChunk() = 0;

  // The pending chunk's room becomes padding; nothing is read from it.
  virtual void AbortPendingChunk() = 0;
};

}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_CHUNK_SINK_H_
