/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ServiceCore: the part of the tracing service that knows producers, rings
// and the trace buffer, but no sockets (tracing_service.h adds those). Unit
// tests drive it directly.
//
//   Admit(hello, identity)   a validated Hello from a peer whose identity the
//                            kernel vouched for: creates a sealed memfd ring
//                            with the SERVICE's geometry (the request is a
//                            hint, clamped by ChooseRingGeometry), assigns a
//                            ProducerID and registers the ring with the
//                            DrainLoop's RingDrainer, allowed to write the
//                            default session's buffer (if any) and, once
//                            their data sources start, the sessions'.
//                            Returns the HelloReply to send and the memfd to
//                            attach to it.
//   OnDrainRequest(id)       DrainLoop::Notify (coalesced there).
//   RemoveProducer(id)       the producer left or misbehaved: one last
//                            DrainMode::kFlush drain of its ring (what it
//                            wrote before is kept), RemoveRing, then unmap.
//   Finish()                 ends every session (EndAllSessions), removes
//                            every producer the same way and stops the
//                            DrainLoop.
//
// Sessions (docs/sessions.md, "How the service implements it"): each owns
// 1..8 buffers with service-wide BufferIDs, an output fd and data source
// instances on the producers that registered a matching data source. One
// of them may be the default session (StartDefaultSession: the session
// `ringtraced --out` starts itself), whose first buffer is also what a
// producer's own writers write (HelloReply.target_buffer): every ring may
// write it. StartSession, StopSession,
// FlushSession, CloneSession, GetSessionTraceStats and the producers'
// RegisterDataSource / OnDataSourceStopped / OnFlushAck drive them; the
// waits are deadlines (NextDeadline / AdvanceSessions), never sleeps. What
// the owner must send goes out through TakeCommands() (to producers) and
// TakeEvents() (to consumers).
//
// ProducerIDs come from a ProducerIdAllocator (producer_id_allocator.h:
// fresh first, a departed one only once no buffer holds a sequence of it).
// A Hello gets kTooManyProducers only while max_producers are connected or
// every id is connected or still has data in a buffer (counted and
// logged).
//
// Ring protocol errors: the drainer stops a ring whose shared words break
// the protocol (RingDrainerOptions::on_ring_stopped, drain thread); the
// core queues that ProducerID and signals stopped_rings_fd(); the owner
// takes them with TakeStoppedProducers() and disconnects them.
//
// Lifetime of a ring's mapping: the SharedRingRegion is destroyed only after
// RingDrainer::RemoveRing ran on the drain thread (DrainLoop::RunSync), so
// the drainer never reads an unmapped ring.
//
// Thread model: one thread (the service thread, or a test) calls every
// method; the DrainLoop runs its own thread. A session's TraceBufferV2s are
// touched only by the drain thread while rings may write them
// (CloneSession copies them there).

#ifndef SRC_TRACING_SERVICE_TRACED_SERVICE_CORE_H_
#define SRC_TRACING_SERVICE_TRACED_SERVICE_CORE_H_

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ringtrace/shm_ring_abi.h"
#include "ringtrace/status.h"
#include "src/base/scoped_fd.h"
#include "src/base/thread_annotations.h"
#include "src/base/time.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/ring_drainer/drain_loop.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_export/trace_exporter.h"
#include "src/tracing/service/trace_export/trace_file_writer.h"
#include "src/tracing/service/traced/declared_categories.h"
#include "src/tracing/service/traced/producer_id_allocator.h"
#include "src/tracing/service/traced/producer_loss_table.h"
#include "src/tracing/service/traced/ring_limits.h"
#include "src/tracing/service/traced/service_stats.h"
#include "src/tracing/service/traced/session_config.h"
#include "src/tracing/service/traced/session_export.h"
#include "src/tracing/service/traced/trace_buffer_v2_sink.h"
#include "src/tracing/service/traced/user_limits.h"

namespace ringtrace {
namespace traced {

// HelloReply.target_buffer while there is no default session: no buffer
// has BufferID 0, so chunks written to it are unroutable (counted in the
// chunks_discarded of every session's TraceStats that runs meanwhile).
constexpr trace_buffer::BufferID kNoDefaultBuffer = 0;
// Consumer sessions' buffers get BufferIDs 1..kMaxSessionBufferId.
constexpr uint32_t kMaxSessionBufferId = 0xffff;

using SessionId = uint64_t;

// Drains ring |id| with |mode| passes until one makes no progress. Bounded
// even if the producer keeps writing: the positions that existed when the
// drain began are at most |num_chunks|, so the drain stops once that many
// were resolved, and after num_chunks + 2 passes in any case (passes that
// only retry). Drain thread.
void DrainBounded(ring_drainer::RingDrainer* drainer,
                  ring_drainer::RingId id,
                  uint32_t num_chunks,
                  ring_drainer::DrainMode mode);

// What the core asks the owner to send to a producer (the owner encodes it
// with src/tracing/ipc/wire_protocol.h). Start and stop carry an instance
// id, flush a flush id.
struct ProducerCommand {
  enum class Type { kStartDataSource, kStopDataSource, kFlush };
  Type type = Type::kStartDataSource;
  trace_buffer::ProducerID producer_id = 0;
  uint32_t id = 0;  // instance id (start, stop) or flush id
  // kStartDataSource only.
  trace_buffer::BufferID target_buffer = 0;
  uint32_t clear_period_ms = 0;
  std::string data_source_name;
  std::vector<std::string> enabled_categories;
  std::vector<std::string> disabled_categories;
  std::vector<std::string> enabled_tags;
  std::vector<std::string> disabled_tags;
  // The instance's DataSourceConfig, serialized as the consumer gave it
  // (SessionConfig::DataSource::config).
  std::string config;
};

// What happened to a session, for the owner to tell its consumer.
struct SessionEvent {
  enum class Type {
    // The session ended and its trace was written (or writing it failed:
    // |status|). |by_service|: duration_ms elapsed or the service stopped,
    // not DisableTracing.
    kEnded,
    // A FlushSession() completed (|status| says whether every producer
    // acked in time).
    kFlushed,
  };
  Type type = Type::kEnded;
  SessionId session_id = 0;
  uint64_t consumer_id = 0;  // as given to StartSession
  uint64_t tag = 0;          // the request's tag (DisableTracing, Flush)
  bool by_service = false;
  base::Status status;
  ExportSummary summary;
  uint64_t duration_ms = 0;
  uint64_t packets_lost = 0;
};

// A session as QueryServiceState lists it.
struct SessionInfo {
  SessionId id = 0;
  std::string unique_name;
  int32_t consumer_uid = -1;
  bool stopping = false;
  struct Buffer {
    trace_buffer::BufferID id = 0;
    uint64_t size_bytes = 0;
    trace_buffer::TraceBufferV2::OverwritePolicy policy =
        trace_buffer::TraceBufferV2::OverwritePolicy::kOverwrite;
    // Bytes of the buffer written so far (its high-water mark: a buffer
    // that wrapped reads as full).
    uint64_t used_bytes = 0;
  };
  std::vector<Buffer> buffers;
  uint32_t num_data_source_instances = 0;
  uint64_t elapsed_ms = 0;
};

struct ProducerInfo {
  trace_buffer::ProducerID id = 0;
  std::string name;
  ring_drainer::ClientIdentity identity;
  std::vector<std::string> data_sources;
  uint64_t ring_bytes = 0;
};

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
  };
  using Clock = std::chrono::steady_clock;

  // Validates |options| and starts the DrainLoop.
  static std::unique_ptr<ServiceCore> Create(const Options& options,
                                             base::Status* status);
  ~ServiceCore();  // Removes the producers left; no export.

  ServiceCore(const ServiceCore&) = delete;
  ServiceCore& operator=(const ServiceCore&) = delete;

  struct Admission {
    ipc::HelloReplyMsg reply;
    // reply.status != kOk: why, for the service's log.
    std::string refusal;
    // reply.status == kOk: the ring's memfd, to attach to the reply. Owned
    // by the core (valid until RemoveProducer).
    int ring_fd = -1;
  };
  // |hello| was decoded by ipc::DecodeMessage; |identity| comes from the
  // kernel (SO_PEERCRED), never from the message.
  Admission Admit(const ipc::HelloMsg& hello,
                  const ring_drainer::ClientIdentity& identity);

  // Unknown ids are ignored.
  void OnDrainRequest(trace_buffer::ProducerID id);

  // An eventfd, readable when the drainer stopped a ring on a protocol error
  // since the last TakeStoppedProducers(). The owner polls it.
  int stopped_rings_fd() const { return stopped_fd_.get(); }
  // The connected producers whose rings stopped since the last call, each
  // once (counted in rings_stopped_protocol_error, with those of producers
  // already removed); clears the eventfd.
  std::vector<trace_buffer::ProducerID> TakeStoppedProducers();

  // What the layers above counted, for the TraceStats of the next export.
  void set_service_counters(const ServiceCounters& c) { counters_ = c; }

  // A DrainRequest that carried a loss report (producer_loss_table.h).
  // Each entry goes to the loss table of the session owning its target
  // buffer if this producer serves that session (an instance of it writes
  // that buffer, or the buffer is the default session's, which every
  // producer serves); any other entry is counted in
  // loss_entries_unattributed and nowhere else. A final report marks the
  // producer's records in every table it serves. Unknown ids are ignored.
  void OnLossReport(trace_buffer::ProducerID id,
                    const ipc::DrainRequestMsg& report);
  // A session's loss table (null: no such session).
  const ProducerLossTable* session_loss_table(SessionId id) const;
  void RemoveProducer(trace_buffer::ProducerID id);

  // The service stops: ends every session still running (EndAllSessions:
  // each is written), removes every producer (a final drain of its ring),
  // stops the drain thread and returns the drainer's totals in
  // |*drainer_stats|. Call once; afterwards the core admits nobody and
  // starts no session.
  base::Status Finish(ring_drainer::RingStats* drainer_stats);

  const ProducerStats& stats() const { return stats_; }
  // The drainer's totals, read on the drain thread (waits for it).
  ring_drainer::RingStats DrainerStats();
  size_t num_producers() const { return producers_.size(); }
  bool has_producer(trace_buffer::ProducerID id) const {
    return producers_.count(id) != 0;
  }

  // ---- Sessions (docs/sessions.md). Every call is the owner's thread's.
  // Times are passed in (|now|) so that tests drive the deadlines.

  // Starts a session: validates |config| (ValidateTraceConfig), checks the
  // limits (max_sessions, max_total_buffer_bytes, BufferIDs free, a
  // unique_session_name not in use), creates its buffers with fresh
  // BufferIDs, and starts an instance of every data source on every
  // producer that registered it (and passes producer_name_filter):
  // StartDataSource commands (TakeCommands) and the producers' rings allowed
  // to write the session's buffers. |out_fd| is owned by the session from
  // here on (closed when it ends). |consumer_id| is the owner's handle of
  // the consumer, echoed in the session's events.
  base::Status StartSession(const perfetto::protos::TraceConfig& config,
                            base::ScopedFd out_fd,
                            int32_t consumer_uid,
                            uint64_t consumer_id,
                            Clock::time_point now,
                            SessionId* id);
  // What the session will not record as its config asks, one line each
  // (session_start_warnings.h): data sources no connected producer serves,
  // enabled category and tag patterns nothing they declare matches.
  // Empty for an unknown id. Called right after StartSession for the
  // EnableTracing reply.
  std::vector<std::string> StartWarnings(SessionId id) const;
  // Begins the end of a session: StopDataSource to every instance; once
  // each acked (DataSourceStopped) or data_source_stop_timeout_ms passed
  // (counted), the rings that wrote its buffers are drained (kFlush), the
  // buffers leave every ring's allowed set and the trace is written into
  // the session's fd; then a kEnded event with |tag|. Errors: unknown id, a
  // session already stopping.
  base::Status StopSession(SessionId id, uint64_t tag, Clock::time_point now);
  // The consumer left: the session is freed at once and nothing is written
  // (StopDataSource still goes to its instances; their acks are accepted).
  void AbortSession(SessionId id);
  // Flush to every producer with an instance of the session; once each
  // acked (or |timeout_ms|, 0: the config's flush_timeout_ms, passed:
  // counted), its rings are drained and a kFlushed event with |tag| follows,
  // addressed to |requester| (a consumer id as StartSession's; 0: the
  // session's own consumer). Errors: unknown id, a session stopping, too
  // many flushes waiting, |timeout_ms| over ipc::kMaxTimeoutMs.
  base::Status FlushSession(SessionId id,
                            uint32_t timeout_ms,
                            uint64_t tag,
                            Clock::time_point now,
                            uint64_t requester = 0);
  // Writes what the session's buffers hold now to |out_fd| (not owned, not
  // closed) as a complete trace of its own (own uuid, the service events so
  // far), without stopping anything (the design's CLONE_SNAPSHOT):
  //  1. On the drain thread (DrainLoop::RunSync; the loop's own passes wait
  //     meanwhile): every ring that may write the session gets
  //     DrainMode::kNormal passes (DrainBounded), then each buffer is copied
  //     (TraceBufferV2::CloneReadOnly) and the drainer totals are read.
  //  2. On the calling thread, while the drain thread goes on filling the
  //     live buffers: the copies are exported.
  // What a clone holds: every chunk a normal pass takes, i.e. what the
  // producers had published. A chunk a writer still holds (its packet in
  // progress, or packets whose publication it defers until the chunk is
  // full or flushed) is NOT taken, nor anything behind it in that ring,
  // while the head grace lets a normal pass leave it (Options::
  // head_grace_ns): those packets come with a later drain and reach the
  // session's trace. No kFlush: scraping every chunk live writers are
  // filling would make them relocate their open packets. The copies have
  // their own read state and the live buffers are not read, so the
  // session's trace still holds every packet a clone held (unless
  // RING_BUFFER overwrote it since). Cost: a copy of the buffers' used
  // bytes. Errors: no such session; a copy cannot be allocated (nothing
  // written); a write error.
  base::Status CloneSession(SessionId id, int out_fd, ExportSummary* summary);
  // The session's TraceStats (a serialized perfetto.protos.TraceStats), as
  // its trace would end with now.
  base::Status GetSessionTraceStats(SessionId id, std::string* trace_stats);

  // Producer messages about data sources. An error is a protocol violation
  // of the producer (the owner disconnects it): a second registration of a
  // name, more than ipc::kMaxDataSourcesPerProducer, an invalid name; an
  // instance id or flush id this producer does not owe an answer for.
  base::Status RegisterDataSource(trace_buffer::ProducerID id,
                                  const std::string& name,
                                  Clock::time_point now);
  base::Status OnDataSourceStopped(trace_buffer::ProducerID id,
                                   uint32_t instance_id,
                                   Clock::time_point now);
  base::Status OnFlushAck(trace_buffer::ProducerID id,
                          uint32_t flush_id,
                          Clock::time_point now);
  // DataSourceCategories: stored in DeclaredCategories (declared_categories.h,
  // its errors), for a data source the producer registered (else an
  // error).
  base::Status DeclareCategories(trace_buffer::ProducerID id,
                                 const ipc::DataSourceCategoriesMsg& msg);
  // Every connected producer's data sources with their declared
  // categories (declared_categories.h).
  std::vector<ProducerDataSources> ListDataSources() const;

  // Runs what is due at |now|: duration_ms ends, stop and flush timeouts,
  // periodic flushes. The owner calls it when NextDeadline() passed (and
  // may call it any time).
  void AdvanceSessions(Clock::time_point now);
  // The earliest pending deadline; Clock::time_point::max() if none.
  Clock::time_point NextDeadline() const;
  // What to send to producers / tell consumers since the last call.
  std::vector<ProducerCommand> TakeCommands();
  std::vector<SessionEvent> TakeEvents();

  // The service's stop, first step: StopSession for every session not
  // stopping yet (by_service, tag 0); from now on no session starts. The
  // owner goes on serving the producers' stop acks until num_sessions() is
  // 0 or its own grace ran out, then calls EndAllSessions().
  void StopAllSessions(Clock::time_point now);
  // Ends every session now, without waiting for acks, and writes each
  // (kEnded events, by_service). For the service's own stop.
  void EndAllSessions(Clock::time_point now);

  // The default session: the one `ringtraced --out` records (docs/
  // sessions.md, "One model of recording"). A session like a consumer's
  // (StartSession with consumer id 0 and the service's uid), except that
  // its first buffer is also where a producer's own writers write: every
  // HelloReply's target_buffer names it while it runs, every ring may write
  // it, and loss entries of any producer for it go to its table. Errors:
  // StartSession's; a default session runs already.
  base::Status StartDefaultSession(const perfetto::protos::TraceConfig& config,
                                   base::ScopedFd out_fd,
                                   Clock::time_point now,
                                   SessionId* id);
  // The default session's id (0: none running).
  SessionId default_session() const { return default_session_; }
  // Its first buffer's BufferID (kNoDefaultBuffer: none running).
  trace_buffer::BufferID default_buffer() const { return default_buffer_; }
  // How the last default session ended (what its kEnded event says), for
  // the owner's summary.
  struct DefaultSessionEnd {
    bool ended = false;
    base::Status status;
    ExportSummary summary;
  };
  const DefaultSessionEnd& default_session_end() const {
    return default_session_end_;
  }

  size_t num_sessions() const { return sessions_.size(); }
  bool has_session(SessionId id) const { return sessions_.count(id) != 0; }
  // Who started session |id| and whether it is stopping, for the owner's
  // access checks; false if there is no such session.
  struct SessionOwner {
    int32_t consumer_uid = -1;
    uint64_t consumer_id = 0;
    bool stopping = false;
  };
  bool GetSessionOwner(SessionId id, SessionOwner* owner) const;
  // Makes |consumer_id| the owner of session |id| (0: none, a detached
  // session): its events name that consumer from now on. False if there is
  // no such session.
  bool SetSessionConsumer(SessionId id, uint64_t consumer_id);
  std::vector<SessionInfo> ListSessions(Clock::time_point now) const;
  std::vector<ProducerInfo> ListProducers() const;
  const SessionStats& session_stats() const { return session_stats_; }
  const Options& options() const { return options_; }

  // The BufferID the next session buffer gets (tests of the counter's wrap).
  void set_next_buffer_id_for_testing(uint32_t id) { next_buffer_id_ = id; }

  // Makes |id| the next ProducerID to assign (tests of id exhaustion).
  void set_next_producer_id_for_testing(uint32_t id) {
    producer_ids_.set_next_for_testing(id);
  }

 private:
  // Answers a producer may still owe after their stop or flush timed out.
  static constexpr size_t kMaxOwedAcks = 1024;
  // Flushes of one session waiting for acks (a consumer cannot pile up
  // more).
  static constexpr size_t kMaxPendingFlushes = 64;

  struct Producer {
    std::unique_ptr<shm_ring::SharedRingRegion> region;
    ring_drainer::RingId ring_id = 0;
    ring_drainer::ClientIdentity identity;
    std::string name;
    std::vector<std::string> data_sources;  // registered, distinct
    uint32_t next_instance_id = 1;
    // Instances stopped whose DataSourceStopped is still owed (their
    // session ended without it): a late ack is accepted, not a violation.
    // The value: whether the stop timed out (rather than its session being
    // aborted or the service ending).
    std::map<uint32_t, bool> late_stop_acks;
    // It let a stop or a flush time out and still owes that answer
    // (IsOverdue()): later stops and flushes send it their command but do
    // not wait for it, and count its missing answer as a timeout at once,
    // so one stuck producer delays one stop or flush, not every session's.
    // Cleared when it has answered everything that timed out.
    bool overdue = false;
    // Flushes sent and not acked, by flush id.
    struct OwedFlushAck {
      // Whether the flush still waits for it (false: it timed out; a late
      // ack is accepted and counted).
      bool waited = true;
      SessionId session = 0;  // whose late_acks count it
    };
    std::map<uint32_t, OwedFlushAck> owed_flush_acks;
  };

  struct SessionBuffer {
    trace_buffer::BufferID id = 0;
    std::unique_ptr<trace_buffer::TraceBufferV2> buffer;
    // Drain thread while the buffer is routed; the owner's afterwards.
    std::unique_ptr<TraceBufferV2Sink> sink;
  };
  struct Instance {
    trace_buffer::ProducerID producer_id = 0;
    size_t ds_index = 0;  // into SessionConfig::data_sources
    uint32_t instance_id = 0;
    trace_buffer::BufferID target = 0;
    bool stop_sent = false;
    bool stop_acked = false;
  };
  struct PendingFlush {
    uint32_t flush_id = 0;
    uint64_t tag = 0;
    uint64_t requester = 0;  // the consumer id the kFlushed event goes to
    bool periodic = false;   // no event
    std::set<trace_buffer::ProducerID> waiting;
    // Producers sent the flush but not waited for (Producer::overdue):
    // timeouts, counted when the flush completes.
    size_t not_awaited = 0;
    Clock::time_point deadline;
  };
  struct Session {
    SessionId id = 0;
    SessionConfig config;
    base::ScopedFd fd;
    int32_t consumer_uid = -1;
    uint64_t consumer_id = 0;
    trace_export::TraceExporter::ClockReadings start_clocks;
    // The trace's id (the session's file; clones get their own).
    trace_export::TraceExporter::TraceUuid uuid;
    TraceLifecycle lifecycle;
    Clock::time_point started;
    Clock::time_point duration_deadline = Clock::time_point::max();
    Clock::time_point stop_deadline = Clock::time_point::max();
    Clock::time_point next_periodic_flush = Clock::time_point::max();
    bool stopping = false;
    bool stop_by_service = false;
    SessionCounters counters;  // this session's own, for its TraceStats
    // The losses its producers reported for its buffers (LossTableFor).
    ProducerLossTable losses{base::MonotonicNs()};
    uint64_t stop_tag = 0;
    // ChunksLostBeforeBuffers() of the drainer when it started.
    uint64_t lost_before_buffers_at_start = 0;
    std::vector<std::unique_ptr<SessionBuffer>> buffers;
    std::vector<Instance> instances;
    std::vector<PendingFlush> flushes;
    // write_into_file: the trace is appended to |fd| as it goes, by one
    // exporter for the session's life (sequence ids persist). Its header
    // (WriteTraceHeader) is written at the start, the later service events
    // when they happen.
    std::unique_ptr<trace_export::TraceFileWriter> stream_file;
    std::unique_ptr<trace_export::TraceExporter> stream;
    Clock::time_point next_file_write = Clock::time_point::max();
    base::Status stream_status;  // the first write error
  };

  explicit ServiceCore(const Options& options);
  // Sessions (service_core_sessions.cc).
  // StartSession(); |peer_limits|: whether max_total_buffer_bytes and the
  // consumer uid's limits apply (not to the default session).
  base::Status StartSessionWithLimits(
      const perfetto::protos::TraceConfig& config,
      base::ScopedFd out_fd,
      int32_t consumer_uid,
      uint64_t consumer_id,
      Clock::time_point now,
      bool peer_limits,
      SessionId* id);
  // The session a consumer request names: "no session N" if there is none.
  base::Status FindSession(SessionId id, Session** session);
  // FindSession() for a request that changes the session (stop, flush):
  // also "session N is stopping" if it is.
  base::Status FindRunningSession(SessionId id, Session** session);
  // The rings that may write |session|'s buffers (SessionWriters) with
  // their chunk counts, for DrainBounded on the drain thread.
  std::vector<std::pair<ring_drainer::RingId, uint32_t>> SessionRings(
      const Session& session) const;
  trace_buffer::BufferID AllocateBufferId();
  bool BufferIdInUse(uint32_t id) const;
  // Starts instances of |session|'s data sources on |producer| (those not
  // started yet); returns whether it started any.
  bool StartInstances(Session* session,
                      trace_buffer::ProducerID producer_id,
                      Producer* producer);
  // The buffers ring |producer_id| may write now: the default session's
  // first buffer, plus the target buffer of every instance on it of a
  // session whose buffers are still routed (neither of them |except|'s).
  std::vector<ring_drainer::TargetBuffer> AllowedBuffersFor(
      trace_buffer::ProducerID producer_id,
      const Session* except) const;
  // Sends SetAllowedBuffers for |producers| (drain thread, one RunSync).
  void UpdateAllowedBuffers(const std::set<trace_buffer::ProducerID>& ids);
  // StopDataSource to every instance not yet told.
  void SendStops(Session* session);
  // The instances told to stop and not acked: their producers may still
  // answer (accepted, counted in late_acks). |timed_out|: the stop waited
  // its timeout for them (their producers become overdue).
  void OweLateStopAcks(Session* session, bool timed_out);
  void BeginStop(Session* session,
                 uint64_t tag,
                 bool by_service,
                 Clock::time_point now);
  // Finalizes session |id| if it is stopping and every instance acked (an
  // overdue producer's instance is not waited for), or its stop deadline
  // passed (the missing acks counted, their producers made overdue).
  void MaybeFinishStop(SessionId id, Clock::time_point now);
  // StartSession(): whether |consumer_uid| may start one more session with
  // |wanted| buffer bytes (UserLimits).
  base::Status CheckSessionUserLimits(int32_t consumer_uid,
                                      uint64_t wanted) const;
  // Admit(): refuses (false, |admission| says why) a producer whose uid is
  // at its producer or ring-bytes limit, or when no ring fits what is left
  // of the total; else narrows |ring_limits| to what is left.
  bool AdmitWithinUserLimits(const ring_drainer::ClientIdentity& identity,
                             RingLimits* ring_limits,
                             Admission* admission);
  // The ids of the sessions now, for loops whose steps may end (erase) a
  // session.
  std::vector<SessionId> SessionIds() const;
  // Producer::overdue, false for a producer that is gone.
  bool IsOverdue(trace_buffer::ProducerID id) const;
  // A stop or flush of |p| timed out: it is overdue from now on.
  void MarkOverdue(Producer* p);
  // After an answer: |p| stays overdue while it owes any timed-out answer.
  static void RefreshOverdue(Producer* p);
  // Stops and flushes waiting only for producers made overdue since they
  // began end now (AdvanceSessions(), while any was marked).
  void ReleaseWaitsOnOverdue(Clock::time_point now);
  // Drains the rings that wrote the session (kFlush), takes its buffers out
  // of every allowed set, writes the trace (if |write|: a kEnded event),
  // frees the session.
  void FinalizeSession(SessionId id, bool write, Clock::time_point now);
  void CompleteFlush(Session* session, size_t index, bool timed_out);
  // Sets |*slot| (a field of session->lifecycle) to now (BOOTTIME) and,
  // when the session streams its file, writes the event there.
  void RecordServiceEvent(Session* session,
                          trace_export::TraceExporter::ServiceEvent event,
                          uint64_t* slot);
  // At the stop, after the final drain: all_data_sources_flushed when every
  // instance acked its stop, then tracing_disabled.
  void RecordStopEvents(Session* session);
  // write_into_file: the session's exporter on its fd, with the header
  // (WriteTraceHeader) in its batch; the first file write is due a period
  // after |now|.
  void OpenStream(Session* session, Clock::time_point now);
  // write_into_file: drains the session's rings and appends what its
  // buffers hold to its file (on the drain thread: the buffers are only
  // readable there). A write error or max_file_size_bytes reached ends the
  // session: then it returns true and |session| may be gone.
  bool WriteIntoFile(Session* session, Clock::time_point now);
  // |requester|: the consumer id the kFlushed event goes to (unused when
  // |periodic|).
  void IssueFlush(Session* session,
                  uint64_t tag,
                  uint64_t requester,
                  bool periodic,
                  uint32_t timeout_ms,
                  Clock::time_point now);
  // The producers ring |session|'s instances run on (connected ones): who
  // gets its flushes.
  std::set<trace_buffer::ProducerID> SessionProducers(
      const Session& session) const;
  // The producers whose rings may write |session|'s buffers: those of
  // SessionProducers, and every connected one for the default session.
  std::set<trace_buffer::ProducerID> SessionWriters(
      const Session& session) const;

  // Drops |producer_id|'s instances and flush waits from every session
  // (it left); completes what only waited for it.
  void ForgetProducerInSessions(trace_buffer::ProducerID producer_id);
  // The chunks the drainer lost before any buffer saw them, in all
  // (TraceStats.chunks_discarded): unroutable, or dropped by the reader
  // (malformed, unknown format). A session's trace counts those since it
  // started.
  // Whole milliseconds from |from| to |to| (0 if not later).
  static uint64_t ElapsedMs(Clock::time_point from, Clock::time_point to);
  static uint64_t ChunksLostBeforeBuffers(const ring_drainer::RingStats& d) {
    return d.chunks_unroutable + d.chunks_dropped;
  }
  // The service's side of a trace's TraceStats now (session_export.h).
  ServiceState CurrentServiceState() const;
  // What |session|'s trace holds: its buffers (|buffers|: the live ones or
  // copies, in the session's order), its counters and losses.
  // chunks_discarded and packets_discarded are the caller's (read on the
  // drain thread).
  static TraceContents ContentsOf(
      const Session& session,
      const std::vector<trace_buffer::TraceBufferV2*>& buffers);
  // The loss table an entry of producer |id| for |buffer| belongs to, or
  // null (see OnLossReport).
  ProducerLossTable* LossTableFor(trace_buffer::ProducerID id, uint32_t buffer);
  // Calls |fn| with every loss table producer |id| serves.
  void ForEachLossTableOf(trace_buffer::ProducerID id,
                          const std::function<void(ProducerLossTable*)>& fn);
  // At the removal of producer |id| (after its final drain), and at the end
  // of each session it wrote (|only|: then the slots of that session's
  // buffers only, the others are left for their own sessions' ends): reads
  // its ring's writer loss area once (a copy, pread) and routes every slot
  // as an untrusted loss entry (writer_loss_area.h). A slot read twice
  // raises nothing: a writer's counters only grow, and a table keeps the
  // larger.
  void ReadLossArea(trace_buffer::ProducerID id,
                    const Producer& producer,
                    const Session* only);
  // The id for a new producer (ProducerIdAllocator, whose scan reads the
  // sessions' buffers on the drain thread); 0 if none may be given now.
  trace_buffer::ProducerID AllocateProducerId();
  // Drain thread (on_ring_stopped): queues ring |id| and signals
  // stopped_fd_.
  void OnRingStopped(ring_drainer::RingId id);
  // Marks every producer of |losses| that died (removed without a final
  // report) in the trace (TraceExporter::WriteProducerEnd).
  static void WriteProducerEnds(trace_export::TraceExporter* exporter,
                                const ProducerLossTable& losses);
  // Export()'s second half, also the end of a streamed session: every
  // packet of |buffers|, the marks of producers that died
  // (WriteProducerEnds), read_tracing_buffers_completed, TraceStats, the
  // closing ClockSnapshot, Finish().
  // Sets summary's export_stats and buffer_stats.
  base::Status ExportTail(
      trace_export::TraceExporter* exporter,
      const std::vector<trace_buffer::TraceBufferV2*>& buffers,
      const std::vector<trace_buffer::BufferID>& buffer_ids,
      uint32_t producers_connected,
      uint64_t chunks_discarded,
      const SessionCounters& session_counters,
      const ProducerLossTable& losses,
      ExportSummary* summary) const;

  const Options options_;
  std::unique_ptr<ring_drainer::DrainLoop> loop_;
  std::map<trace_buffer::ProducerID, Producer> producers_;
  // The connected producers' declared categories (RemoveProducer forgets).
  DeclaredCategories declared_categories_;
  ProducerIdAllocator producer_ids_;
  // Ring-stopped notifications: filled on the drain thread.
  base::ScopedFd stopped_fd_;  // eventfd
  base::Mutex stopped_mutex_;
  std::vector<ring_drainer::RingId> stopped_ RT_GUARDED_BY(stopped_mutex_);
  ServiceCounters counters_;
  bool finished_ = false;
  bool stopping_ = false;  // StopAllSessions() ran
  ProducerStats stats_;

  // Sessions.
  std::map<SessionId, std::unique_ptr<Session>> sessions_;
  SessionId next_session_id_ = 1;
  SessionId default_session_ = 0;
  trace_buffer::BufferID default_buffer_ = kNoDefaultBuffer;
  DefaultSessionEnd default_session_end_;
  uint32_t next_buffer_id_ = 1;  // 1..kMaxSessionBufferId, then wraps
  bool buffer_ids_wrapped_ = false;
  uint32_t next_flush_id_ = 1;
  // A producer was made overdue since ReleaseWaitsOnOverdue() last ran.
  bool overdue_marked_ = false;
  uint64_t session_buffer_bytes_ = 0;  // every session's buffers
  std::vector<ProducerCommand> commands_;
  std::vector<SessionEvent> events_;
  SessionStats session_stats_;
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_SERVICE_CORE_H_
