/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2Sink: the production ChunkSink, the adapter between the ring
// drainer and TraceBufferV2, in a target of its own
// (//src/tracing/service/ring_drainer:trace_buffer_v2_sink) so that the
// drainer library knows only the ChunkSink interface and the IDs, and
// TraceBufferV2 knows nothing of rings. This is the one place where the two
// meet (the service and the drainer's own tests and benchmarks use it):
//  - flags: the ring state word's flags (shm_ring::ChunkFlags) become
//    TraceBufferV2's chunk flags (trace_buffer::TBChunkFlags, which its
//    admission calls take as TBChunkFlags and store as they are) through
//    MapChunkFlags(), the only conversion between the two vocabularies;
//  - admission: a thin forward to TraceBufferV2's two-phase fragment
//    admission (BeginChunkFragments / CommitPendingChunk /
//    AbortPendingChunk). The ring reader copies each fragment straight from
//    shared memory into the buffer: one copy;
//  - loss in packets: a chunk a full DISCARD buffer rejects loses packets;
//    the buffer counts them where it rejects the chunk
//    (TraceBufferStats::packets_discarded), and packets_discarded() reads
//    that count.
//
// Thread model: TraceBufferV2 is not thread-safe; the sink must be used on
// the thread that owns the buffer (the drain thread).

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_TRACE_BUFFER_V2_SINK_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_TRACE_BUFFER_V2_SINK_H_

#include <stdint.h>

#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/service/ring_drainer/chunk_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {

// State word flags (spec 3.3) -> TraceBufferV2's chunk flags (tb_chunk.h),
// bit by bit by name (the two vocabularies put different meanings on the same
// bits). The one translation on a chunk's way from the ring into the buffer.
constexpr trace_buffer::TBChunkFlags MapChunkFlags(
    shm_ring::ChunkFlags abi_flags) {
  return ((abi_flags & shm_ring::kFlagContinuesFromPrev)
              ? trace_buffer::kChunkContinuesFromPrev
              : trace_buffer::kNoTBChunkFlags) |
         ((abi_flags & shm_ring::kFlagContinuesOnNext)
              ? trace_buffer::kChunkContinuesOnNext
              : trace_buffer::kNoTBChunkFlags) |
         ((abi_flags & shm_ring::kFlagDataLoss)
              ? trace_buffer::kChunkDataLoss
              : trace_buffer::kNoTBChunkFlags);
}

class TraceBufferV2Sink : public ChunkSink {
 public:
  // |buffer| is not owned and must outlive the sink.
  explicit TraceBufferV2Sink(trace_buffer::TraceBufferV2* buffer)
      : buffer_(buffer) {}
  ~TraceBufferV2Sink() override;

  uint8_t* BeginChunkFragments(ProducerID producer_id,
                               const trace_buffer::ClientIdentity& identity,
                               WriterID writer_id,
                               ChunkID chunk_id,
                               const uint32_t* sizes,
                               size_t num_fragments,
                               shm_ring::ChunkFlags flags) override;
  void CommitPendingChunk() override;
  void AbortPendingChunk() override;

  trace_buffer::TraceBufferV2* buffer() const { return buffer_; }
  // Packets lost in chunks the buffer discarded (see the top). Read on the
  // buffer's thread.
  uint64_t packets_discarded() const {
    return buffer_->stats().packets_discarded;
  }

 private:
  trace_buffer::TraceBufferV2* const buffer_;
};

}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_TRACE_BUFFER_V2_SINK_H_
