/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TracingSessions: the tracing sessions' protocol with producers and
// consumers (docs/sessions.md, "How the service implements it"). It starts
// a session (SessionTable creates it) and an instance of each of its data
// sources on every producer that registered a matching data source, stops
// a session (StopDataSource, the acks or their timeout, then its trace
// written by SessionWriter), flushes it (Flush, the acks or their timeout),
// runs the deadlines (duration_ms, the stop and flush timeouts, periodic
// flushes, write_into_file's writes) and ends every session when the
// service stops.
//
// The waits are deadlines (NextDeadline / AdvanceSessions), never sleeps.
// What the owner must send goes out through TakeCommands() (to producers)
// and TakeEvents() (to consumers). A producer that let an answer time out
// is overdue (producer_answers.h): later stops and flushes do not wait for
// it.
//
// Invariants: a ring may write a session's buffer only while an instance
// of the session on its producer targets that buffer (or the buffer is the
// default session's first): the allowed sets are updated before the
// StartDataSource commands go out, and a session's buffers leave every set
// (after a final kFlush drain) before its trace is written. Every instance
// told to stop is either acked, waited for, or owed late
// (ProducerAnswers).
//
// Thread model: one thread (the service thread, or a test) calls every
// method; times are passed in (|now|) so that tests drive the deadlines.
// The buffers are touched on the drain thread (DrainLoop::RunSync) while
// rings may write them.

#ifndef SRC_TRACING_SERVICE_TRACED_TRACING_SESSIONS_H_
#define SRC_TRACING_SERVICE_TRACED_TRACING_SESSIONS_H_

#include <stddef.h>
#include <stdint.h>

#include <set>
#include <string>
#include <vector>

#include "ringtrace/status.h"
#include "src/base/scoped_fd.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/ring_drainer/drain_loop.h"
#include "src/tracing/service/traced/producer_answers.h"
#include "src/tracing/service/traced/producer_table.h"
#include "src/tracing/service/traced/session.h"
#include "src/tracing/service/traced/session_table.h"
#include "src/tracing/service/traced/session_writer.h"

namespace perfetto {
namespace protos {
class TraceConfig;
}  // namespace protos
}  // namespace perfetto

namespace ringtrace {
namespace traced {

class TracingSessions {
 public:
  using Clock = SessionClock;
  // How the last default session ended (what its kEnded event says), for
  // the owner's summary.
  struct DefaultSessionEnd {
    bool ended = false;
    base::Status status;
    ExportSummary summary;
  };

  // |service_uid|: the uid the default session is started for.
  TracingSessions(uint32_t service_uid,
                  ring_drainer::DrainLoop* loop,
                  ProducerTable* producers,
                  SessionTable* table,
                  SessionWriter* writer);
  TracingSessions(const TracingSessions&) = delete;
  TracingSessions& operator=(const TracingSessions&) = delete;

  // ---- Consumer requests.

  // Starts a session: SessionTable::Create (validation, limits, buffers),
  // then an instance of every data source on every producer that
  // registered it (and passes producer_name_filter): StartDataSource
  // commands (TakeCommands) and the producers' rings allowed to write the
  // session's buffers. |out_fd| is owned by the session from here on
  // (closed when it ends). |consumer_id| is the owner's handle of the
  // consumer, echoed in the session's events.
  base::Status StartSession(const perfetto::protos::TraceConfig& config,
                            base::ScopedFd out_fd,
                            int32_t consumer_uid,
                            uint64_t consumer_id,
                            Clock::time_point now,
                            SessionId* id);
  // The default session: the one `ringtraced --out` records (docs/
  // sessions.md, "One model of recording"). A session like a consumer's
  // (consumer id 0, the service's uid, no buffer limits), except that its
  // first buffer is also where a producer's own writers write: every
  // HelloReply's target_buffer names it while it runs, every ring may write
  // it, and loss entries of any producer for it go to its table. Errors:
  // StartSession's; a default session runs already.
  base::Status StartDefaultSession(const perfetto::protos::TraceConfig& config,
                                   base::ScopedFd out_fd,
                                   Clock::time_point now,
                                   SessionId* id);
  // What the session will not record as its config asks, one line each
  // (session_start_warnings.h): data sources no connected producer serves,
  // enabled category and tag patterns nothing they declare matches, a
  // linux.process_stats describing processes on demand without
  // task/task_rename in the session's linux.ftrace; at most
  // kMaxStartWarnings. Empty for an unknown id. Called right after
  // StartSession for the EnableTracing reply.
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
  // while the head grace lets a normal pass leave it (ServiceCore::
  // Options::head_grace_ns): those packets come with a later drain and
  // reach the session's trace. No kFlush: scraping every chunk live
  // writers are filling would make them relocate their open packets. The
  // copies have their own read state and the live buffers are not read, so
  // the session's trace still holds every packet a clone held (unless
  // RING_BUFFER overwrote it since). Cost: a copy of the buffers' used
  // bytes. Errors: no such session; a copy cannot be allocated (nothing
  // written); a write error.
  base::Status CloneSession(SessionId id, int out_fd, ExportSummary* summary);
  // The session's TraceStats (a serialized perfetto.protos.TraceStats), as
  // its trace would end with now.
  base::Status GetSessionTraceStats(SessionId id, std::string* trace_stats);

  // ---- Producer messages about data sources. An error is a protocol
  // violation of the producer (the owner disconnects it): an instance id or
  // flush id this producer does not owe an answer for. Unknown producers
  // are ignored.

  // Connected producer |id| registered a data source: instances of the
  // running sessions that want it start there.
  void OnDataSourceRegistered(trace_buffer::ProducerID id);
  base::Status OnDataSourceStopped(trace_buffer::ProducerID id,
                                   uint32_t instance_id,
                                   Clock::time_point now);
  base::Status OnFlushAck(trace_buffer::ProducerID id,
                          uint32_t flush_id,
                          Clock::time_point now);
  // Producer |id| is being removed, after its final drain and before it
  // leaves the ProducerTable: what its writer loss area says goes to the
  // sessions' loss tables, and they record its removal.
  void OnProducerRemoving(trace_buffer::ProducerID id);
  // Producer |id| left the ProducerTable: its instances and flush waits are
  // dropped from every session (what only waited for it completes), and it
  // owes nothing any more.
  void ForgetProducer(trace_buffer::ProducerID id);

  // ---- Time and output.

  // Runs what is due at |now|: duration_ms ends, stop and flush timeouts,
  // periodic flushes, write_into_file's writes. The owner calls it when
  // NextDeadline() passed (and may call it any time).
  void AdvanceSessions(Clock::time_point now);
  // The earliest pending deadline; Clock::time_point::max() if none.
  Clock::time_point NextDeadline() const;
  // What to send to producers / tell consumers since the last call.
  std::vector<ProducerCommand> TakeCommands();
  std::vector<SessionEvent> TakeEvents();

  // ---- The service's stop.

  // First step: StopSession for every session not stopping yet
  // (by_service, tag 0); from now on no session starts. The owner goes on
  // serving the producers' stop acks until no session is left or its own
  // grace ran out, then calls EndAllSessions().
  void StopAllSessions(Clock::time_point now);
  // Ends every session now, without waiting for acks, and writes each
  // (kEnded events, by_service). For the service's own stop.
  void EndAllSessions(Clock::time_point now);

  const DefaultSessionEnd& default_session_end() const {
    return default_session_end_;
  }
  const SessionStats& session_stats() const { return session_stats_; }

 private:
  // Flushes of one session waiting for acks (a consumer cannot pile up
  // more).
  static constexpr size_t kMaxPendingFlushes = 64;

  // StartSession(), with or without the peer limits (SessionTable::
  // Request).
  base::Status StartSessionFor(const perfetto::protos::TraceConfig& config,
                               base::ScopedFd out_fd,
                               const SessionTable::Request& request,
                               Clock::time_point now,
                               SessionId* id);
  // Starts instances of |session|'s data sources on |producer_id| (those
  // not started yet); returns whether it started any.
  bool StartInstances(Session* session, trace_buffer::ProducerID producer_id);
  // Sends SetAllowedBuffers for |ids| (drain thread, one RunSync).
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
  // Drains the rings that wrote the session (kFlush), takes its buffers out
  // of every allowed set, writes the trace (if |write|: a kEnded event),
  // frees the session.
  void FinalizeSession(SessionId id, bool write, Clock::time_point now);
  // FinalizeSession()'s drain and unrouting (one RunSync); returns the
  // drainer's totals after it.
  ring_drainer::RingStats DrainAndUnroute(const Session& session, bool drain);
  // FinalizeSession()'s trace and kEnded event, the buffers unrouted.
  void WriteEndedSession(Session* session,
                         const ring_drainer::RingStats& drainer_stats,
                         Clock::time_point now);
  // Routes what producer |id|'s writer loss area says (ProducerTable::
  // ReadLossArea) to the sessions' loss tables (SessionTable::
  // RouteLossArea; |only| as there).
  void ReadLossArea(trace_buffer::ProducerID id, const Session* only);
  // At the stop, after the final drain: the final flush's outcome,
  // all_data_sources_flushed when every instance acked its stop, then
  // tracing_disabled.
  void RecordStopEvents(Session* session);
  // write_into_file: SessionWriter::AppendToFile, ending the session if it
  // must; returns true then (|session| may be gone).
  bool WriteIntoFile(Session* session, Clock::time_point now);
  // |requester|: the consumer id the kFlushed event goes to (unused when
  // |periodic|).
  void IssueFlush(Session* session,
                  uint64_t tag,
                  uint64_t requester,
                  bool periodic,
                  uint32_t timeout_ms,
                  Clock::time_point now);
  void CompleteFlush(Session* session, size_t index, bool timed_out);
  // A stop or flush of connected producer |id| timed out.
  void MarkOverdue(trace_buffer::ProducerID id);
  // Stops and flushes waiting only for producers made overdue since they
  // began end now (AdvanceSessions(), while any was marked).
  void ReleaseWaitsOnOverdue(Clock::time_point now);

  const uint32_t service_uid_;
  ring_drainer::DrainLoop* const loop_;
  ProducerTable* const producers_;
  SessionTable* const table_;
  SessionWriter* const writer_;
  ProducerAnswers answers_;
  DefaultSessionEnd default_session_end_;
  uint32_t next_flush_id_ = 1;
  std::vector<ProducerCommand> commands_;
  std::vector<SessionEvent> events_;
  SessionStats session_stats_;
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_TRACING_SESSIONS_H_
