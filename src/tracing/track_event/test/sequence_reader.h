/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Reading TrackEvent sequences back the way a trace reader does.
//
// ResolveIncrementalState() resolves the incremental state of one sequence
// in place: interned strings, timestamps on the sequence's incremental
// clock, default track uuids.
// RingCapture is a private test ring shared by many writers, each with its
// own WriterID and target BufferID (what the producer's NewTraceWriter
// hands out per instance): Factory(buffer) is an instance's WriterFactory,
// Drain() reads the ring and returns every writer's packets, parsed.

#ifndef SRC_TRACING_TRACK_EVENT_TEST_SEQUENCE_READER_H_
#define SRC_TRACING_TRACK_EVENT_TEST_SEQUENCE_READER_H_

#include <stdint.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "ringtrace/ring_writer_types.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/writer_loss_counters.h"
#include "src/tracing/track_event/track_event_instances.h"

namespace ringtrace {
namespace track_event {

// Resolves the incremental state of |packets| (one sequence) in place, as a
// reader does: state reset at SEQ_INCREMENTAL_STATE_CLEARED, whose packet
// carries the TracePacketDefaults and the snapshot of the incremental
// clock; every timestamp becomes absolute CLOCK_BOOTTIME (no
// timestamp_clock_id left); each event gets its default track uuid if it
// names none, and its name, categories and debug annotation names back as
// strings from interned_data. Every event must carry
// SEQ_NEEDS_INCREMENTAL_STATE and every iid and clock must resolve within
// its generation (gtest failures otherwise). Each generation's clear packet
// (snapshot and defaults) is then removed and its
// SEQ_INCREMENTAL_STATE_CLEARED moved to the process descriptor after it,
// so a generation reads as its descriptors, then its events. Returns the
// number of generations (clears).
int ResolveIncrementalState(
    std::vector<perfetto::protos::TracePacket>* packets);

class RingCapture {
 public:
  // Large enough that no test of this component needs a reader running.
  explicit RingCapture(uint32_t chunk_size = 4096, uint32_t num_chunks = 1024);

  // A WriterFactory for buffer |target|. Thread-safe; the RingCapture must
  // outlive the writers. |publication|: the writers' (a deferred one
  // publishes only at Flush(), a chunk's end or the writer's destruction).
  WriterFactory Factory(
      shm_ring::BufferID target,
      shm_ring::Publication publication = shm_ring::Publication::kPerPacket);

  struct Sequence {
    shm_ring::BufferID buffer = 0;
    std::vector<perfetto::protos::TracePacket> packets;  // strings resolved
    int clears = 0;
  };
  // Reads every chunk published so far. Call once the writers are released
  // (or idle): packets of every writer created, by WriterID. A loss (a
  // writer's loss counters, a data-loss flag), a broken chain or an
  // unparsable packet is a gtest failure.
  std::map<shm_ring::WriterID, Sequence> Drain();

  uint32_t writers_created();

 private:
  shm_ring::TestRing ring_;
  std::mutex mutex_;
  shm_ring::WriterID next_id_ = 1;                        // guarded
  std::map<shm_ring::WriterID, shm_ring::BufferID> ids_;  // guarded
  // Each writer's loss counters (AttachProducerControls), read by Drain().
  std::map<shm_ring::WriterID, std::unique_ptr<shm_ring::WriterLossCounters>>
      losses_;  // guarded
};

}  // namespace track_event
}  // namespace ringtrace

#endif  // SRC_TRACING_TRACK_EVENT_TEST_SEQUENCE_READER_H_
