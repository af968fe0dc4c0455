/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ProducerTable: the connected producers and their rings. It admits a
// producer (a validated Hello from a peer whose identity the kernel
// vouched for), creates its sealed memfd ring with the SERVICE's geometry
// (the request is a hint, clamped by ChooseRingGeometry and what the
// limits leave), assigns its ProducerID, registers the ring with the
// DrainLoop's RingDrainer, keeps the data sources it registered and the
// categories it declared, and removes it again (a final DrainMode::kFlush
// drain, RemoveRing, then the unmapping).
//
// It knows nothing of sessions: what a new ring may write and what its
// HelloReply names as target_buffer come in with Admit(); which ids still
// have data in a buffer comes from the SequenceScan given at construction;
// which buffers a ring may write later is set by SetAllowedBuffers().
//
// ProducerIDs come from a ProducerIdAllocator (producer_id_allocator.h:
// fresh first, a departed one only once no buffer holds a sequence of it).
// A Hello gets kTooManyProducers only while max_producers are connected or
// every id is connected or still has data in a buffer (counted and
// logged); kUserLimit when the peer's uid is at one of its limits
// (user_limits.h) or no ring fits what is left of max_total_ring_bytes.
//
// Ring protocol errors: the drainer stops a ring whose shared words break
// the protocol; StoppedRings (stopped_rings.h) queues it and signals
// stopped_rings_fd(); TakeStoppedProducers() names the producers to
// disconnect.
//
// Invariants: a producer's SharedRingRegion is destroyed only after
// RingDrainer::RemoveRing ran on the drain thread (DetachRing(), then
// Erase()), so the drainer never reads an unmapped ring. Every connected
// producer has a ring in the drainer; stats().producers_connected is the
// table's size.
//
// Thread model: one thread (the service thread, or a test) calls every
// method; the drainer is reached through DrainLoop::RunSync / Notify. The
// DrainLoop and the StoppedRings outlive the table.

#ifndef SRC_TRACING_SERVICE_TRACED_PRODUCER_TABLE_H_
#define SRC_TRACING_SERVICE_TRACED_PRODUCER_TABLE_H_

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/ring_drainer/drain_loop.h"
#include "src/tracing/service/traced/declared_categories.h"
#include "src/tracing/service/traced/producer_id_allocator.h"
#include "src/tracing/service/traced/ring_limits.h"
#include "src/tracing/service/traced/service_stats.h"
#include "src/tracing/service/traced/stopped_rings.h"
#include "src/tracing/service/traced/user_limits.h"

namespace ringtrace {
namespace traced {

// A connected producer as QueryServiceState lists it.
struct ProducerInfo {
  trace_buffer::ProducerID id = 0;
  std::string name;
  ring_drainer::ClientIdentity identity;
  std::vector<std::string> data_sources;
  uint64_t ring_bytes = 0;
};

// Drains ring |id| with |mode| passes until one makes no progress. Bounded
// even if the producer keeps writing: the positions that existed when the
// drain began are at most |num_chunks|, so the drain stops once that many
// were resolved, and after num_chunks + 2 passes in any case (passes that
// only retry). Drain thread.
void DrainBounded(ring_drainer::RingDrainer* drainer,
                  ring_drainer::RingId id,
                  uint32_t num_chunks,
                  ring_drainer::DrainMode mode);

class ProducerTable {
 public:
  // The admission limits (ServiceCore::Options has their meaning).
  struct Options {
    RingLimits ring_limits;
    uint32_t max_producers = 0;
    uint64_t max_total_ring_bytes = 0;
    UserLimits user_limits;
    uint32_t service_uid = 0;
  };
  struct Producer {
    std::unique_ptr<shm_ring::SharedRingRegion> region;
    ring_drainer::RingId ring_id = 0;
    ring_drainer::ClientIdentity identity;
    std::string name;
    std::vector<std::string> data_sources;  // registered, distinct
  };
  struct Admission {
    ipc::HelloReplyMsg reply;
    // reply.status != kOk: why, for the service's log.
    std::string refusal;
    // reply.status == kOk: the ring's memfd, to attach to the reply. Owned
    // by the table (valid until the producer is erased).
    int ring_fd = -1;
  };
  // Sets (*held)[id] for every ProducerID some buffer still holds a
  // sequence of (ProducerIdAllocator's scan).
  using SequenceScan = std::function<void(std::vector<bool>* held)>;

  ProducerTable(const Options& options,
                ring_drainer::DrainLoop* loop,
                StoppedRings* stopped,
                SequenceScan scan);
  ProducerTable(const ProducerTable&) = delete;
  ProducerTable& operator=(const ProducerTable&) = delete;

  // |hello| was decoded by ipc::DecodeMessage; |identity| comes from the
  // kernel (SO_PEERCRED), never from the message. The new ring may write
  // |allowed| (its ProducerID is known only here: |allowed| is asked for
  // it) and the reply names |target_buffer|.
  Admission Admit(const ipc::HelloMsg& hello,
                  const ring_drainer::ClientIdentity& identity,
                  trace_buffer::BufferID target_buffer,
                  const std::function<std::vector<ring_drainer::TargetBuffer>(
                      trace_buffer::ProducerID)>& allowed);
  // From now on every Hello gets kServiceError (the trace was written).
  void Close() { closed_ = true; }

  // Null for an id not connected.
  const Producer* Find(trace_buffer::ProducerID id) const;
  bool has_producer(trace_buffer::ProducerID id) const {
    return producers_.count(id) != 0;
  }
  size_t num_producers() const { return producers_.size(); }
  const std::map<trace_buffer::ProducerID, Producer>& producers() const {
    return producers_;
  }
  // Every connected producer's registered data sources, counted.
  size_t num_data_sources() const;

  // A DrainRequest: DrainLoop::Notify (coalesced there). Unknown ids are
  // ignored.
  void OnDrainRequest(trace_buffer::ProducerID id);
  // Readable when the drainer stopped a ring since the last
  // TakeStoppedProducers(). The owner polls it.
  int stopped_rings_fd() const { return stopped_->fd(); }
  // The connected producers whose rings stopped since the last call, each
  // once (counted in rings_stopped_protocol_error, with those of producers
  // already removed); clears the eventfd.
  std::vector<trace_buffer::ProducerID> TakeStoppedProducers();

  // A RegisterDataSource of connected producer |id|. Errors (a protocol
  // violation): an invalid name, a second registration of it, more than
  // ipc::kMaxDataSourcesPerProducer.
  base::Status AddDataSource(trace_buffer::ProducerID id,
                             const std::string& name);
  // DataSourceCategories: stored in DeclaredCategories (its errors), for a
  // data source the producer registered (else an error). Unknown ids are
  // ignored.
  base::Status DeclareCategories(trace_buffer::ProducerID id,
                                 const ipc::DataSourceCategoriesMsg& msg);
  // Every connected producer's data sources with their declared
  // categories (declared_categories.h).
  std::vector<ProducerDataSources> ListDataSources() const;
  std::vector<ProducerInfo> ListProducers() const;

  // Replaces the allowed buffers of each listed connected producer's ring
  // (one RunSync; ids not connected are skipped).
  void SetAllowedBuffers(
      std::vector<std::pair<trace_buffer::ProducerID,
                            std::vector<ring_drainer::TargetBuffer>>> updates);
  // Connected producer |id|'s ring and its chunk count (DrainBounded's
  // bound).
  std::pair<ring_drainer::RingId, uint32_t> RingOf(
      trace_buffer::ProducerID id) const;

  // The entries of connected producer |id|'s writer loss area
  // (writer_loss_area.h) that record a loss: one copy of its bytes
  // (pread), parsed from the copy; untrusted, like a loss report. A read
  // error is counted (loss_area_read_errors) and yields nothing.
  std::vector<ipc::WriterLossEntry> ReadLossArea(trace_buffer::ProducerID id);

  // Removal, first step: one last DrainMode::kFlush drain of the ring
  // (what the producer wrote before is kept), then RemoveRing (drain
  // thread). The producer stays in the table (its loss area readable)
  // until Erase().
  void DetachRing(trace_buffer::ProducerID id);
  // Removal, last step: unmaps the ring, forgets the producer's declared
  // categories and releases its ProducerID.
  void Erase(trace_buffer::ProducerID id);

  const ProducerStats& stats() const { return stats_; }
  // For the loss entries the sessions could not attribute
  // (loss_entries_unattributed).
  ProducerStats* mutable_stats() { return &stats_; }

  // Makes |id| the next ProducerID to assign (tests of id exhaustion).
  void set_next_producer_id_for_testing(uint32_t id) {
    producer_ids_.set_next_for_testing(id);
  }

 private:
  // The refusals before any limit of the peer's: protocol version, a
  // closed table, max_producers. True if |hello| passes.
  bool CheckHello(const ipc::HelloMsg& hello, Admission* admission);
  // Refuses (false, |admission| says why) a producer whose uid is at its
  // producer or ring-bytes limit, or when no ring fits what is left of the
  // total; else narrows |ring_limits| to what is left.
  bool AdmitWithinUserLimits(const ring_drainer::ClientIdentity& identity,
                             RingLimits* ring_limits,
                             Admission* admission);
  // The id for a new producer (ProducerIdAllocator, whose scan runs the
  // SequenceScan); 0 if none may be given now.
  trace_buffer::ProducerID AllocateProducerId();

  const Options options_;
  ring_drainer::DrainLoop* const loop_;
  StoppedRings* const stopped_;
  const SequenceScan scan_;
  std::map<trace_buffer::ProducerID, Producer> producers_;
  // The connected producers' declared categories (Erase() forgets).
  DeclaredCategories declared_categories_;
  ProducerIdAllocator producer_ids_;
  ProducerStats stats_;
  bool closed_ = false;
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_PRODUCER_TABLE_H_
