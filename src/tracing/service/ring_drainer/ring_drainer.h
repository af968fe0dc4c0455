/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// RingDrainer: drains many shared rings (one per producer) into the trace
// buffers the producers may write.
//
// For every ring it owns a RingReader (ring_reader.h) and acts as that
// reader's ChunkConsumer:
//  - routing: a chunk's target BufferID (format 00, bytes 4-5) selects one of
//    the sinks the service allowed for this producer. An unknown or forbidden
//    BufferID drops the chunk and counts it (chunks_unroutable). A chunk the
//    sink refuses is the sink's to count (ChunkSink), not the drainer's nor
//    the reader's: each loss is counted in one place;
//  - ChunkIDs: assigned per {ProducerID, WriterID}, contiguous in emission
//    order (wrapping at 2^32). An ID is consumed by every chunk the reader
//    resolved with a writer's payload in it, whether delivered or dropped
//    (unroutable, rejected by the sink, malformed directory, unknown format),
//    so the sink sees a gap exactly where data was lost. A scraped empty
//    prefix (Acquired(w, 0)) and a speculative copy that was aborted consume
//    nothing;
//  - flags: the sink gets the state word's continues-from-prev /
//    continues-on-next / data-loss bits as they are (shm_ring::ChunkFlags);
//    a sink that speaks another vocabulary maps them itself (the service's
//    TraceBufferV2 adapter does). A data-loss chunk keeps its payload.
//
// Fairness: DrainRing() resolves at most max_positions_per_pass positions and
// stops once max_bytes_per_pass payload bytes were emitted, so one busy
// producer cannot starve the others; DrainAll() gives each ring one such
// pass. A ring whose reader hit a protocol error is stopped for good (its
// error is logged once, reported by protocol_error() and, once, through
// RingDrainerOptions::on_ring_stopped); the others go on.
//
// Per-producer state: the ChunkID counters of a producer's writers live
// while a ring of that producer is registered; RemoveRing of its last ring
// frees them (num_chunk_id_entries() returns to where it was), so memory
// does not grow with the number of producers that ever came and went. A
// ProducerID registered again later starts its writers at ChunkID 0.
//
// Stalled writers: after a pass that advanced a ring's read_pos, the drainer
// runs the reader half of the writer-wait protocol
// (shm_ring::WakeStalledWriters, src/tracing/core/shm_ring/ring_wait.h): a
// fence, then a FUTEX_WAKE on read_pos only if num_writers_waiting > 0.
// It also wakes them early, once per pass: at the first position the pass
// frees while num_writers_waiting > 0, so a stalled writer's wake-up latency
// overlaps the rest of the pass instead of following it. A hostile count
// costs at most that one more system call per pass.
//
// Thread model: single-threaded (the service's drain thread). Writers run
// concurrently in other threads / processes and interact only through the
// shared ring. DrainLoop (drain_loop.h) adds notification-driven scheduling.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_RING_DRAINER_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_RING_DRAINER_H_

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/service/ring_drainer/chunk_sink.h"
#include "src/tracing/service/ring_drainer/ring_reader.h"

namespace ringtrace {
namespace ring_drainer {

struct RingDrainerOptions {
  // Per ring and per DrainRing() call.
  uint32_t max_positions_per_pass = 256;
  uint64_t max_bytes_per_pass = 1u << 20;
  // Failed CAS attempts per position and ReadOne() call (spec 5.3).
  uint32_t retry_budget = RingReader::kDefaultRetryBudget;
  // Head grace. 0: every position up to write_pos is resolved at once, as in
  // spec 5.3 (a reserved-but-unclaimed position is burned, an Acquired chunk
  // is scraped). > 0: such a position at the head is left alone (the pass
  // ends there, PassResult::deferred) until it has been seen for this long,
  // unless more than half the ring is reserved, a writer is stalled waiting
  // for room (for the positions reserved when the pass began, until the
  // pass wakes it), or the pass is a DrainMode::kFlush. A drain loop that
  // chases the writers then stops burning their reservations and splitting
  // their chunks. See docs/ring_drainer.md.
  uint64_t head_grace_ns = 0;
  // Writers stalled for room (policy kStall, asleep on read_pos): true, a
  // pass wakes them at the first position it frees, so their wake-up
  // latency overlaps the rest of the pass and they write while it runs;
  // false, only after the pass's last store, so a stalled writer sleeps
  // through the whole pass (tests that drain in lock step with a stalled
  // writer rely on that). The wake after the pass is issued either way.
  bool wake_writers_early = true;
  // Monotonic clock in ns for the head grace; null: std::chrono's
  // steady_clock. Tests inject their own.
  uint64_t (*now_ns)() = nullptr;
  // Called once per ring, on the draining thread, in the pass in which the
  // ring's reader stopped on a protocol error (the service disconnects that
  // producer). May be empty.
  std::function<void(uint32_t ring_id, ProducerID, const ProtocolError&)>
      on_ring_stopped;
};

enum class DrainMode {
  kNormal,
  // Resolve every reserved position (scrape open chunks, burn unclaimed
  // positions), whatever the head grace: for flushes and for draining a
  // ring whose producer is gone.
  kFlush,
};

struct TargetBuffer {
  BufferID id = 0;
  ChunkSink* sink = nullptr;  // Not owned; must outlive the ring.
};

struct RingConfig {
  // Mapping and geometry from the service's own configuration (validated);
  // never from the shared header.
  shm_ring::RingView view;
  // The service's record of the first unresolved position (0 for a fresh,
  // zero-filled ring). Never loaded from the mapping.
  uint32_t initial_read_pos = 0;
  ProducerID producer_id = 0;
  ClientIdentity identity;
  // The buffers this producer may write. Chunks for any other id are dropped.
  std::vector<TargetBuffer> allowed_buffers;
};

struct RingStats {
  RingReaderStats reader;
  uint64_t chunks_unroutable = 0;  // Unknown or forbidden BufferID.
  // A chunk the sink refused (its Begin returned nullptr) is counted by the
  // sink alone (ChunkSink's contract): the service's TraceBufferV2 counts it
  // in chunks_discarded or abi_violations, once.
  uint64_t chunks_aborted = 0;  // Speculative copies discarded (CAS lost).
  // Chunks whose published payload was dropped unread, no buffer seeing it
  // (a malformed directory, an unknown format with fragments): the reader
  // counts them by cause, this is the loss (OnChunkDropped).
  uint64_t chunks_dropped = 0;
  uint64_t passes = 0;
  uint64_t writer_wakeups = 0;  // Futex wakes issued.
  // Of those, wakes issued mid-pass, at the first position the pass freed
  // while a writer was waiting for room.
  uint64_t early_writer_wakeups = 0;
};

// Accumulates |s| into |total|.
void AddRingStats(const RingStats& s, RingStats* total);

using RingId = uint32_t;

struct PassResult {
  uint32_t positions_resolved = 0;
  uint64_t bytes_emitted = 0;
  // More work may be pending right now: a budget ran out or the reader
  // returned kRetryLater. Call again (after serving the other rings).
  bool more = false;
  // The pass stopped at a position under head grace: call again later (or
  // with DrainMode::kFlush).
  bool deferred = false;
  uint32_t rings_stopped = 0;  // Rings that are stopped by a protocol error.
};

class RingDrainer {
 public:
  explicit RingDrainer(const RingDrainerOptions& options = {});
  ~RingDrainer();

  RingDrainer(const RingDrainer&) = delete;
  RingDrainer& operator=(const RingDrainer&) = delete;

  RingId AddRing(const RingConfig& config);
  // Replaces the buffers ring |id| may write (e.g. a trace session started
  // or ended). Sinks no longer listed are never called again for this ring.
  void SetAllowedBuffers(RingId id, std::vector<TargetBuffer> buffers);
  // Forgets a ring; its stats stay in TotalStats().
  void RemoveRing(RingId id);

  // One bounded pass over one ring. |id| must be registered.
  PassResult DrainRing(RingId id, DrainMode mode = DrainMode::kNormal);
  // One bounded pass over every ring.
  PassResult DrainAll(DrainMode mode = DrainMode::kNormal);

  RingStats ring_stats(RingId id) const;
  // kind == kNone unless the ring is stopped.
  const ProtocolError& protocol_error(RingId id) const;
  RingStats TotalStats() const;
  size_t num_rings() const { return rings_.size(); }
  bool has_ring(RingId id) const { return rings_.count(id) != 0; }
  std::vector<RingId> ring_ids() const;
  // ChunkID counters held, one per {ProducerID, WriterID} of a registered
  // ring that emitted or dropped a chunk.
  size_t num_chunk_id_entries() const { return next_chunk_id_.size(); }

  RingReader* GetReaderForTesting(RingId id);

 private:
  class Ring;

  Ring* FindRing(RingId id) const;
  // The head policy of a pass when no writer waits for room: kResolve for
  // a flush, without a head grace, or once the grace ran out.
  HeadPolicy ChooseHeadPolicy(Ring* ring, DrainMode mode) const;
  // Whether writers of |ring| are waiting for room (a hint).
  static bool WritersWaiting(Ring* ring);
  // A pass stopped at a head position under grace: starts its grace
  // period unless that position was already being deferred.
  void NoteDeferral(Ring* ring);
  // Logs the ring's protocol error and tells on_ring_stopped, once.
  void ReportStopped(RingId id, Ring* ring);
  uint64_t NowNs() const;
  // The next ChunkID slot for {producer, writer}; stable address.
  // |*inserted|: the slot was created by this call.
  ChunkID* ChunkIdSlot(ProducerID producer_id,
                       WriterID writer_id,
                       bool* inserted);

  const RingDrainerOptions options_;
  RingId next_ring_id_ = 1;
  std::map<RingId, std::unique_ptr<Ring>> rings_;
  RingStats removed_rings_stats_;
  // Keyed by SequenceKey::value(). Element addresses are stable.
  std::unordered_map<uint32_t, ChunkID> next_chunk_id_;
};

}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_RING_DRAINER_H_
