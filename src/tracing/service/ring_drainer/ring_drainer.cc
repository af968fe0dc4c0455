/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/ring_drainer.h"

#include <chrono>
#include <utility>

#include "ringtrace/logging.h"
#include "src/tracing/core/shm_ring/ring_wait.h"

namespace ringtrace {
namespace ring_drainer {

namespace {

uint64_t SteadyNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

}  // namespace

ChunkSink::~ChunkSink() = default;

// Every counter is a uint64_t; a new one must be added below (and the
// sizes here updated), or the totals would silently miss it.
static_assert(sizeof(RingReaderStats) == 12 * sizeof(uint64_t),
              "a RingReaderStats counter was added: update AddRingStats");
static_assert(sizeof(RingStats) ==
                  sizeof(RingReaderStats) + 6 * sizeof(uint64_t),
              "a RingStats counter was added: update AddRingStats");

void AddRingStats(const RingStats& s, RingStats* t) {
  RingReaderStats& r = t->reader;
  r.positions_resolved += s.reader.positions_resolved;
  r.holes += s.reader.holes;
  r.scrapes += s.reader.scrapes;
  r.chunks_emitted += s.reader.chunks_emitted;
  r.fragments_emitted += s.reader.fragments_emitted;
  r.bytes_emitted += s.reader.bytes_emitted;
  r.malformed_directories += s.reader.malformed_directories;
  r.unknown_formats += s.reader.unknown_formats;
  r.protocol_errors += s.reader.protocol_errors;
  r.retries += s.reader.retries;
  r.retry_later += s.reader.retry_later;
  r.deferrals += s.reader.deferrals;
  t->chunks_unroutable += s.chunks_unroutable;
  t->chunks_aborted += s.chunks_aborted;
  t->chunks_dropped += s.chunks_dropped;
  t->passes += s.passes;
  t->writer_wakeups += s.writer_wakeups;
  t->early_writer_wakeups += s.early_writer_wakeups;
}

// One registered ring: its reader, routing table and the consumer side of
// the one-copy admission.
class RingDrainer::Ring : public ChunkConsumer {
 public:
  Ring(RingDrainer* drainer, const RingConfig& config, uint32_t retry_budget)
      : drainer_(drainer),
        config_(config),
        reader_(config.view, config.initial_read_pos, retry_budget) {}

  RingReader& reader() { return reader_; }
  const RingConfig& config() const { return config_; }
  void set_allowed_buffers(std::vector<TargetBuffer> buffers) {
    RT_DCHECK(pending_ == Pending::kNone);
    config_.allowed_buffers = std::move(buffers);
  }
  RingStats& stats() { return stats_; }
  // The drainer's counters plus the reader's.
  RingStats Snapshot() const {
    RingStats s = stats_;
    s.reader = reader_.stats();
    return s;
  }
  bool error_logged = false;
  // Head grace (RingDrainerOptions::head_grace_ns): the position the reader
  // last deferred and since when.
  bool deferring = false;
  uint32_t deferred_position = 0;
  uint64_t deferred_since_ns = 0;

  // ChunkConsumer.
  uint8_t* BeginChunk(const ChunkDescriptor& desc,
                      const uint32_t* sizes) override {
    RT_DCHECK(pending_ == Pending::kNone);
    pending_chunk_id_ = ChunkIdSlot(desc.writer_id);
    ChunkSink* sink = FindSink(desc.target_buffer);
    if (!sink) {
      pending_ = Pending::kUnroutable;
      return nullptr;
    }
    uint8_t* const dst = sink->BeginChunkFragments(
        config_.producer_id, config_.identity, desc.writer_id,
        *pending_chunk_id_, sizes, desc.num_fragments, desc.abi_flags);
    if (!dst) {
      pending_ = Pending::kRejected;
      return nullptr;
    }
    pending_ = Pending::kBegun;
    pending_sink_ = sink;
    return dst;
  }

  void CommitChunk() override {
    switch (pending_) {
      case Pending::kBegun:
        pending_sink_->CommitPendingChunk();
        break;
      case Pending::kRejected:
        // The sink refused the chunk and counted it (ChunkSink's contract;
        // the service's TraceBufferV2 in chunks_discarded or
        // abi_violations): counting it here too would count one loss twice.
        break;
      case Pending::kUnroutable:
        ++stats_.chunks_unroutable;
        break;
      case Pending::kNone:
        RT_DCHECK(false);
        return;
    }
    // The chunk is resolved, delivered or not: consume its ChunkID so that a
    // dropped chunk leaves a gap (contract: contiguous in emission order).
    ++*pending_chunk_id_;
    pending_ = Pending::kNone;
    pending_sink_ = nullptr;
  }

  void AbortChunk() override {
    if (pending_ == Pending::kBegun)
      pending_sink_->AbortPendingChunk();
    ++stats_.chunks_aborted;
    pending_ = Pending::kNone;
    pending_sink_ = nullptr;
  }

  void OnChunkDropped(uint32_t /*position*/,
                      shm_ring::WriterID writer_id,
                      DropReason /*reason*/) override {
    // Counted by the reader (malformed_directories / unknown_formats); the
    // writer's data is lost, so its ChunkID sequence gets a gap.
    ++stats_.chunks_dropped;
    ++*ChunkIdSlot(writer_id);
  }

 private:
  enum class Pending { kNone, kBegun, kRejected, kUnroutable };

  ChunkSink* FindSink(BufferID id) const {
    // A producer writes a handful of buffers: a linear scan beats hashing.
    for (const TargetBuffer& t : config_.allowed_buffers) {
      if (t.id == id)
        return t.sink;
    }
    return nullptr;
  }

  ChunkID* ChunkIdSlot(WriterID writer_id) {
    if (!cached_slot_ || cached_writer_ != writer_id) {
      bool inserted = false;
      cached_slot_ =
          drainer_->ChunkIdSlot(config_.producer_id, writer_id, &inserted);
      cached_writer_ = writer_id;
      if (inserted)
        writer_ids_.push_back(writer_id);
    }
    return cached_slot_;
  }

 public:
  // The writers whose ChunkID slots this ring created (freed with it).
  std::vector<WriterID>& writer_ids() { return writer_ids_; }

 private:
  std::vector<WriterID> writer_ids_;

  RingDrainer* const drainer_;
  RingConfig config_;
  RingReader reader_;
  RingStats stats_;

  Pending pending_ = Pending::kNone;
  ChunkSink* pending_sink_ = nullptr;
  ChunkID* pending_chunk_id_ = nullptr;

  // One-entry cache in front of the ChunkID map: chunks of one writer tend
  // to come in runs.
  ChunkID* cached_slot_ = nullptr;
  WriterID cached_writer_ = 0;
};

RingDrainer::RingDrainer(const RingDrainerOptions& options)
    : options_(options) {
  RT_CHECK(options_.max_positions_per_pass > 0);
}

RingDrainer::~RingDrainer() = default;

RingId RingDrainer::AddRing(const RingConfig& config) {
  const RingId id = next_ring_id_++;
  rings_.emplace(id,
                 std::make_unique<Ring>(this, config, options_.retry_budget));
  return id;
}

void RingDrainer::SetAllowedBuffers(RingId id,
                                    std::vector<TargetBuffer> buffers) {
  FindRing(id)->set_allowed_buffers(std::move(buffers));
}

void RingDrainer::RemoveRing(RingId id) {
  auto it = rings_.find(id);
  RT_CHECK(it != rings_.end());
  AddRingStats(it->second->Snapshot(), &removed_rings_stats_);
  const ProducerID producer = it->second->config().producer_id;
  std::vector<WriterID>& writers = it->second->writer_ids();
  // Another ring of the same producer shares the slots: it inherits them.
  Ring* heir = nullptr;
  for (const auto& kv : rings_) {
    if (kv.first != id && kv.second->config().producer_id == producer) {
      heir = kv.second.get();
      break;
    }
  }
  if (heir) {
    heir->writer_ids().insert(heir->writer_ids().end(), writers.begin(),
                              writers.end());
  } else {
    for (WriterID w : writers)
      next_chunk_id_.erase(SequenceKey(producer, w).value());
  }
  rings_.erase(it);
}

RingDrainer::Ring* RingDrainer::FindRing(RingId id) const {
  auto it = rings_.find(id);
  RT_CHECK(it != rings_.end());
  return it->second.get();
}

ChunkID* RingDrainer::ChunkIdSlot(ProducerID producer_id,
                                  WriterID writer_id,
                                  bool* inserted) {
  const uint32_t key = SequenceKey(producer_id, writer_id).value();
  auto result = next_chunk_id_.emplace(key, ChunkID{0});
  *inserted = result.second;
  return &result.first->second;
}

PassResult RingDrainer::DrainRing(RingId id, DrainMode mode) {
  Ring* ring = FindRing(id);
  RingReader& reader = ring->reader();
  RingStats& stats = ring->stats();
  ++stats.passes;

  // The head policy without writers waiting: the grace, or a flush.
  const HeadPolicy calm_policy = ChooseHeadPolicy(ring, mode);
  HeadPolicy head_policy = calm_policy;
  // Writers waiting for room make the pass resolve the head at once (they
  // want room now), but only for the positions they are blocked behind:
  // those reserved when the pass began, and only until the early wake below
  // released them. A released writer claims fresh chunks while the pass goes
  // on, and resolving those at once would scrape each chunk it opens; from
  // then on the head is treated as if nobody waited.
  uint32_t write_pos_at_start = 0;
  if (calm_policy != HeadPolicy::kResolve && WritersWaiting(ring)) {
    // relaxed; a hint like the waiters' count (a hostile value changes only
    // how eagerly its own ring is drained). Loaded before the count is read
    // again, and before the pass's first release store of read_pos: a writer
    // that left the wait (W6, its count decremented) and then reserved
    // cannot be counted as waiting by this pass if its reservation is
    // already below the value. Where loads may be reordered the worst a
    // stale value does is one scrape of an open chunk, which the protocol
    // makes safe (spec 7).
    write_pos_at_start =
        reader.view().write_pos()->load(std::memory_order_relaxed);
    if (WritersWaiting(ring))
      head_policy = HeadPolicy::kResolve;
  }
  PassResult result;
  const uint64_t bytes_before = reader.stats().bytes_emitted;
  bool stopped_by_budget = true;
  bool woke_early = false;
  // positions_resolved when the pass last woke stalled writers.
  uint32_t resolved_at_wake = 0;
  // Bounded by max_positions_per_pass.
  for (uint32_t i = 0; i < options_.max_positions_per_pass; ++i) {
    if (head_policy != calm_policy) {
      // Unsigned distance (spec 4.1): 0 at write_pos_at_start, above
      // num_chunks past it (or for a hostile write_pos).
      const uint32_t to_start_pos = write_pos_at_start - reader.read_pos();
      if (woke_early || to_start_pos == 0 ||
          to_start_pos > reader.view().geometry().num_chunks) {
        head_policy = calm_policy;
      }
    }
    const ReadResult r = reader.ReadOne(ring, head_policy);
    if (r == ReadResult::kSkipped || r == ReadResult::kEmitted) {
      ++result.positions_resolved;
      ring->deferring = false;
      // The early wake: a writer stalled for room gets it as soon as the
      // pass frees a position, not when the pass ends, so its wake-up
      // latency overlaps the rest of the pass. Once per pass: the woken
      // writer stays registered until it runs, and one FUTEX_WAKE per
      // resolved position meanwhile would only cost system calls.
      // The wake that the protocol relies on is the one after the pass's
      // last store (below). Until a writer waits, this costs a load of the
      // cache line ReadOne() just loaded write_pos from (the count shares
      // it, see shm_ring_abi.h).
      if (options_.wake_writers_early && !woke_early && WritersWaiting(ring)) {
        woke_early = true;
        if (shm_ring::WakeStalledWriters(reader.view())) {
          resolved_at_wake = result.positions_resolved;
          ++stats.writer_wakeups;
          ++stats.early_writer_wakeups;
        }
      }
      if (reader.stats().bytes_emitted - bytes_before >=
          options_.max_bytes_per_pass) {
        break;
      }
      continue;
    }
    stopped_by_budget = false;
    if (r == ReadResult::kRetryLater)
      result.more = true;
    if (r == ReadResult::kDeferred) {
      result.deferred = true;
      NoteDeferral(ring);
    }
    break;
  }
  if (stopped_by_budget)
    result.more = true;
  result.bytes_emitted = reader.stats().bytes_emitted - bytes_before;

  if (reader.stopped()) {
    ++result.rings_stopped;
    result.more = false;
    ReportStopped(id, ring);
  }

  // The writer-wait protocol (shm_ring/ring_wait.h): after the release
  // stores of read_pos (R1, in the reader), fence + check
  // num_writers_waiting + FUTEX_WAKE on read_pos (R2, R3). Once per pass is
  // enough: a writer waits for read_pos to differ from the value it sampled,
  // and the last store of the pass is ordered before the fence like all
  // earlier ones (docs/ring-model.md, decision D8: the model checks this
  // weakest schedule for lost wake-ups). The early wake above only adds a
  // wake; it replaces this one when it followed the pass's last store.
  if (result.positions_resolved > resolved_at_wake &&
      shm_ring::WakeStalledWriters(reader.view())) {
    ++stats.writer_wakeups;
  }
  return result;
}

void RingDrainer::NoteDeferral(Ring* ring) {
  // The grace runs from when this position was first deferred.
  const uint32_t read_pos = ring->reader().read_pos();
  if (!ring->deferring || ring->deferred_position != read_pos) {
    ring->deferring = true;
    ring->deferred_position = read_pos;
    ring->deferred_since_ns = NowNs();
  }
}

void RingDrainer::ReportStopped(RingId id, Ring* ring) {
  if (ring->error_logged)
    return;
  const ProtocolError& e = ring->reader().protocol_error();
  RT_ELOG("ring %u (producer %u) stopped: %s at position %u, word 0x%08x", id,
          ring->config().producer_id, ProtocolErrorKindToString(e.kind),
          e.position, e.word);
  ring->error_logged = true;
  if (options_.on_ring_stopped)
    options_.on_ring_stopped(id, ring->config().producer_id, e);
}

uint64_t RingDrainer::NowNs() const {
  return options_.now_ns ? options_.now_ns() : SteadyNowNs();
}

HeadPolicy RingDrainer::ChooseHeadPolicy(Ring* ring, DrainMode mode) const {
  if (mode == DrainMode::kFlush || options_.head_grace_ns == 0)
    return HeadPolicy::kResolve;
  if (ring->deferring &&
      NowNs() - ring->deferred_since_ns >= options_.head_grace_ns) {
    return HeadPolicy::kResolve;
  }
  return HeadPolicy::kDeferUnpublished;
}

bool RingDrainer::WritersWaiting(Ring* ring) {
  // relaxed; only a hint (a stalled writer wants room now), the count the
  // writers' registration in shm_ring::WaitForReadPosChange maintains; a
  // hostile value only changes how eagerly its own ring is drained, and
  // costs at most one more FUTEX_WAKE per pass.
  return ring->reader().view().num_writers_waiting()->load(
             std::memory_order_relaxed) != 0;
}

PassResult RingDrainer::DrainAll(DrainMode mode) {
  PassResult total;
  for (auto& it : rings_) {
    const PassResult r = DrainRing(it.first, mode);
    total.positions_resolved += r.positions_resolved;
    total.bytes_emitted += r.bytes_emitted;
    total.more |= r.more;
    total.deferred |= r.deferred;
    total.rings_stopped += r.rings_stopped;
  }
  return total;
}

RingStats RingDrainer::ring_stats(RingId id) const {
  return FindRing(id)->Snapshot();
}

const ProtocolError& RingDrainer::protocol_error(RingId id) const {
  return FindRing(id)->reader().protocol_error();
}

RingStats RingDrainer::TotalStats() const {
  RingStats total = removed_rings_stats_;
  for (const auto& it : rings_)
    AddRingStats(it.second->Snapshot(), &total);
  return total;
}

std::vector<RingId> RingDrainer::ring_ids() const {
  std::vector<RingId> ids;
  ids.reserve(rings_.size());
  for (const auto& it : rings_)
    ids.push_back(it.first);
  return ids;
}

RingReader* RingDrainer::GetReaderForTesting(RingId id) {
  return &FindRing(id)->reader();
}

}  // namespace ring_drainer
}  // namespace ringtrace
