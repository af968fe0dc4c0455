/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ServiceCore: the part of the tracing service that knows producers, rings,
// sessions and their buffers, but no sockets (tracing_service.h adds
// those). Unit tests drive it directly. It owns the DrainLoop (the drain
// thread) and composes the pieces, which callers reach directly:
//
//   producers()      ProducerTable (producer_table.h): admission, the
//                    rings, registered data sources and declared
//                    categories, rings stopped on protocol errors.
//   session_table()  SessionTable (session_table.h): the sessions, their
//                    buffers and BufferIDs, the limits, which rings may
//                    write which buffers, the loss tables.
//   sessions()       TracingSessions (tracing_sessions.h): the sessions'
//                    protocol: start, stop, flush, the acks, the
//                    deadlines, the commands and events for the owner.
//                    SessionWriter (session_writer.h) writes the traces,
//                    session_export.h builds their bytes.
//
// What crosses the pieces goes through ServiceCore:
//   Admit(hello, identity)   ProducerTable::Admit with the sessions'
//                            routing: the new ring may write the default
//                            session's buffer (if any) and, once its data
//                            sources start, the sessions'. Returns the
//                            HelloReply to send and the memfd to attach.
//   RegisterDataSource       the producer's registration, then the
//                            instances of the running sessions that want
//                            it.
//   OnLossReport             a loss report routed to the sessions' tables.
//   RemoveProducer(id)       the producer left or misbehaved: one last
//                            DrainMode::kFlush drain of its ring (what it
//                            wrote before is kept), RemoveRing, its loss
//                            area read, then unmap; its instances and
//                            flush waits are dropped.
//   Finish()                 ends every session (EndAllSessions), removes
//                            every producer the same way and stops the
//                            DrainLoop.
//
// Lifetime: the pieces hold pointers to the DrainLoop and to each other;
// ServiceCore creates them in dependency order and stops the drain thread
// before any ring is unmapped or buffer freed.
//
// Thread model: one thread (the service thread, or a test) calls every
// method, of ServiceCore and of its pieces; the DrainLoop runs its own
// thread. A session's TraceBufferV2s are touched only by the drain thread
// while rings may write them.

#ifndef SRC_TRACING_SERVICE_TRACED_SERVICE_CORE_H_
#define SRC_TRACING_SERVICE_TRACED_SERVICE_CORE_H_

#include <stdint.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "ringtrace/status.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/ring_drainer/drain_loop.h"
#include "src/tracing/service/traced/producer_table.h"
#include "src/tracing/service/traced/ring_limits.h"
#include "src/tracing/service/traced/service_stats.h"
#include "src/tracing/service/traced/session.h"
#include "src/tracing/service/traced/session_table.h"
#include "src/tracing/service/traced/session_writer.h"
#include "src/tracing/service/traced/stopped_rings.h"
#include "src/tracing/service/traced/tracing_sessions.h"
#include "src/tracing/service/traced/user_limits.h"

namespace ringtrace {
namespace traced {

class ServiceCore {
 public:
  struct Options {
    RingLimits ring_limits;
    uint32_t max_producers = 256;  // connected at once; 1..65535
    // Every connected producer's ring bytes together.
    uint64_t max_total_ring_bytes = uint64_t{2} << 30;
    // What one uid may hold (user_limits.h); |service_uid| is the uid the
    // service runs as (UserLimits::privileged_factor applies to it).
    UserLimits user_limits;
    uint32_t service_uid = static_cast<uint32_t>(geteuid());
    uint64_t drain_tick_ns = 100'000'000;
    // RingDrainerOptions::head_grace_ns: an open chunk at a ring's head is
    // left to its writer this long before a (non-flush) pass scrapes it.
    // 1 ms: long enough that the drainer does not chase the writers (no
    // scrapes in the ring_drainer stress shapes, docs/ring_drainer.md),
    // short enough that a ring whose pass stopped at such a chunk is visited
    // again soon. With 50 ms, a 1 KiB-packet producer under the stall policy
    // moved 3.7 GB/s through the service instead of 6.7
    // (BM_EndToEnd_ProducerToService): its DrainRequest stays "in flight"
    // while read_pos does not move, so the service's next pass waited for
    // the grace or the producer's retry interval.
    uint64_t head_grace_ns = 1'000'000;
    // Sessions at once, and the sum of every session's buffer bytes (the
    // default session's included).
    uint32_t max_sessions = 32;
    uint64_t max_total_buffer_bytes = uint64_t{1} << 30;
    // write_into_file writes this many packet bytes per drain-thread task
    // (SessionWriter::AppendToFile); > 0.
    uint64_t file_write_slice_bytes = kDefaultFileWriteSliceBytes;
  };
  using Clock = SessionClock;
  using Admission = ProducerTable::Admission;
  using SessionOwner = SessionTable::SessionOwner;
  using DefaultSessionEnd = TracingSessions::DefaultSessionEnd;

  // Validates |options| and starts the DrainLoop.
  static std::unique_ptr<ServiceCore> Create(const Options& options,
                                             base::Status* status);
  ~ServiceCore();  // Removes the producers left; no export.

  ServiceCore(const ServiceCore&) = delete;
  ServiceCore& operator=(const ServiceCore&) = delete;

  // |hello| was decoded by ipc::DecodeMessage; |identity| comes from the
  // kernel (SO_PEERCRED), never from the message. ProducerTable::Admit,
  // with the default session's buffer as the reply's target_buffer.
  Admission Admit(const ipc::HelloMsg& hello,
                  const ring_drainer::ClientIdentity& identity);
  // A producer's RegisterDataSource. An error is a protocol violation (the
  // owner disconnects it): ProducerTable::AddDataSource's. Unknown ids are
  // ignored.
  base::Status RegisterDataSource(trace_buffer::ProducerID id,
                                  const std::string& name,
                                  Clock::time_point now);
  // A DrainRequest that carried a loss report (producer_loss_table.h),
  // routed as SessionTable::RouteLossReport says; the entries no table
  // takes are counted in loss_entries_unattributed and nowhere else.
  // Unknown ids are ignored.
  void OnLossReport(trace_buffer::ProducerID id,
                    const ipc::DrainRequestMsg& report);
  // Unknown ids are ignored.
  void RemoveProducer(trace_buffer::ProducerID id);

  // The service stops: ends every session still running (EndAllSessions:
  // each is written), removes every producer (a final drain of its ring),
  // stops the drain thread and returns the drainer's totals in
  // |*drainer_stats|. Call once; afterwards the core admits nobody and
  // starts no session.
  base::Status Finish(ring_drainer::RingStats* drainer_stats);

  // The drainer's totals, read on the drain thread (waits for it).
  ring_drainer::RingStats DrainerStats();
  // What the layers above counted, for the TraceStats of the next export.
  void set_service_counters(const ServiceCounters& c) {
    writer_->set_service_counters(c);
  }
  const Options& options() const { return options_; }

  ProducerTable* producers() { return producers_.get(); }
  const ProducerTable* producers() const { return producers_.get(); }
  SessionTable* session_table() { return table_.get(); }
  const SessionTable* session_table() const { return table_.get(); }
  TracingSessions* sessions() { return sessions_.get(); }
  const SessionWriter* session_writer() const { return writer_.get(); }
  const TracingSessions* sessions() const { return sessions_.get(); }

 private:
  explicit ServiceCore(const Options& options);

  const Options options_;
  std::unique_ptr<StoppedRings> stopped_rings_;
  std::unique_ptr<ring_drainer::DrainLoop> loop_;
  std::unique_ptr<ProducerTable> producers_;
  std::unique_ptr<SessionTable> table_;
  std::unique_ptr<SessionWriter> writer_;
  std::unique_ptr<TracingSessions> sessions_;
  bool finished_ = false;
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_SERVICE_CORE_H_
