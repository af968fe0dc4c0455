/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2Sink: the production ChunkSink, the adapter between the ring
// drainer and TraceBufferV2. It belongs to the service (the composition
// root): the ring drainer knows only the ChunkSink interface and the IDs,
// TraceBufferV2 knows nothing of rings, and this is the one place where the
// two meet:
//  - flags: the ring state word's flags (shm_ring::ChunkFlags) become
//    TraceBufferV2's chunk flags (trace_buffer::TBChunkFlags, which its
//    admission calls take as AdmissionFlags and store as they are) through
//    MapChunkFlags(), the only conversion between the two vocabularies;
//  - admission: a thin forward to TraceBufferV2's two-phase fragment
//    admission (BeginChunkFragments / CommitPendingChunk /
//    AbortPendingChunk). The ring reader copies each fragment straight from
//    shared memory into the buffer: one copy;
//  - loss in packets: a chunk a full DISCARD buffer rejects
//    (TraceBufferStats::chunks_discarded) loses packets the buffer does not
//    count one by one. The sink counts them (packets_discarded()): every
//    packet that begins and ends in the chunk, the packet whose head the
//    buffer took from the writer's previous chunk when this one, its
//    continuation, is rejected, and a packet begun in a rejected chunk
//    once the writer's next chunk continues and ends it. A packet is
//    counted when its end is offered, never before: when the writer's next
//    chunk does not continue it, the writer lost the packet's end and
//    counts the packet as dropped itself (its producer reports it), and a
//    packet still open at the end of the trace is no finished packet. The
//    drainer offers an open chunk again as it grows (a scrape, then the
//    whole chunk; or a copy aborted after its ownership CAS lost), so the
//    sink remembers, per writer, the last chunk it saw committed or
//    rejected, how many fragments it had and whether a packet goes on past
//    it, and counts only fragments not seen before. With
//    TraceBufferStats::packets_overwritten (RING_BUFFER) this makes the
//    packets a buffer lost exact, and disjoint from the packets the
//    writers count as dropped.
//
// Thread model: TraceBufferV2 is not thread-safe; the sink must be used on
// the thread that owns the buffer (the drain thread).

#ifndef SRC_TRACING_SERVICE_TRACED_TRACE_BUFFER_V2_SINK_H_
#define SRC_TRACING_SERVICE_TRACED_TRACE_BUFFER_V2_SINK_H_

#include <stdint.h>

#include <unordered_map>

#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/service/ring_drainer/chunk_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace traced {

// State word flags (spec 3.3) -> TraceBufferV2's chunk flags (tb_chunk.h),
// bit by bit by name (the two vocabularies put different meanings on the same
// bits). The one translation on a chunk's way from the ring into the buffer.
constexpr trace_buffer::AdmissionFlags MapChunkFlags(
    shm_ring::ChunkFlags abi_flags) {
  return ((abi_flags & shm_ring::kFlagContinuesFromPrev)
              ? trace_buffer::kChunkContinuesFromPrev
              : trace_buffer::kNoAdmissionFlags) |
         ((abi_flags & shm_ring::kFlagContinuesOnNext)
              ? trace_buffer::kChunkContinuesOnNext
              : trace_buffer::kNoAdmissionFlags) |
         ((abi_flags & shm_ring::kFlagDataLoss)
              ? trace_buffer::kChunkDataLoss
              : trace_buffer::kNoAdmissionFlags);
}

class TraceBufferV2Sink : public ring_drainer::ChunkSink {
 public:
  // |buffer| is not owned and must outlive the sink.
  explicit TraceBufferV2Sink(trace_buffer::TraceBufferV2* buffer)
      : buffer_(buffer),
        discard_(buffer->overwrite_policy() ==
                 trace_buffer::TraceBufferV2::OverwritePolicy::kDiscard) {}
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
  uint64_t packets_discarded() const { return packets_discarded_; }

 private:
  // The last chunk of a writer that was committed or rejected.
  struct LastChunk {
    ChunkID chunk_id = 0;
    size_t fragments = 0;
    bool rejected = false;
    // Its last fragment continues on the next chunk: a packet goes on.
    bool continues_on_next = false;
    // That packet lost a part in a rejected chunk: it counts in
    // packets_discarded once its end is offered.
    bool open_lost = false;
  };
  // The packets of a rejected chunk of |num_fragments| fragments with
  // |flags| whose fragments from |first_new| on were not offered before,
  // counted now: those that begin and end in them, and fragment 0's if it
  // ends a packet that goes on from the writer's previous chunk
  // (|chain_in|). *open: the chunk's last packet goes on past it,
  // uncounted.
  static uint64_t RejectedPackets(size_t first_new,
                                  size_t num_fragments,
                                  shm_ring::ChunkFlags flags,
                                  bool chain_in,
                                  bool* open);
  // Rejected by the full buffer: counts what it loses.
  void OnDiscarded(uint32_t key,
                   ChunkID chunk_id,
                   size_t num_fragments,
                   shm_ring::ChunkFlags flags);
  // Admitted: what its commit will count (pending_lost_) and remember.
  void OnAdmitted(uint32_t key,
                  ChunkID chunk_id,
                  size_t num_fragments,
                  shm_ring::ChunkFlags flags);
  static uint32_t Key(ProducerID producer_id, WriterID writer_id) {
    return trace_buffer::SequenceKey(producer_id, writer_id).value();
  }

  trace_buffer::TraceBufferV2* const buffer_;
  // Only a DISCARD buffer rejects chunks for want of room: the bookkeeping
  // below is kept for those alone (the drain path of a RING_BUFFER pays
  // nothing for it).
  const bool discard_;
  uint64_t packets_discarded_ = 0;
  // By Key(); one entry per writer that wrote this buffer.
  std::unordered_map<uint32_t, LastChunk> last_chunks_;
  // The chunk Begin admitted, until its commit or abort, and the packet
  // its commit ends (1: a packet that lost a part in a rejected chunk).
  uint64_t pending_key_ = 0;
  LastChunk pending_;
  uint64_t pending_lost_ = 0;
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_TRACE_BUFFER_V2_SINK_H_
