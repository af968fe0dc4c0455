/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// SessionTable: the tracing sessions that exist and their buffers
// (session.h). It checks a new session against the limits (max_sessions,
// max_total_buffer_bytes, the consumer uid's UserLimits, a
// unique_session_name in use) and creates its buffers with fresh
// BufferIDs; it keeps the default session's id (the session `ringtraced
// --out` starts itself, whose first buffer every ring may write); it
// answers which buffers a ring may write (AllowedBuffersFor), which
// producers serve or write a session, and routes the producers' loss
// entries to the loss table of the session they belong to.
//
// It sends nothing and starts no data source: TracingSessions
// (tracing_sessions.h) drives the sessions, SessionWriter
// (session_writer.h) writes their traces.
//
// BufferIDs: fresh ones first (1..kMaxSessionBufferId); after the counter
// wrapped, an id is reused only when no live session holds it. A late
// chunk of an ended session then targets an id no ring is allowed to write
// (unroutable, counted) until the counter comes round again.
//
// Invariants: BufferIDs are unique among the live sessions;
// total_buffer_bytes() is the sum of their buffers' sizes; the default
// session, while there is one, is in the table.
//
// Thread model: one thread (the service thread, or a test) calls every
// method; the buffers are read on the drain thread (DrainLoop::RunSync)
// where noted.

#ifndef SRC_TRACING_SERVICE_TRACED_SESSION_TABLE_H_
#define SRC_TRACING_SERVICE_TRACED_SESSION_TABLE_H_

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "ringtrace/status.h"
#include "src/base/scoped_fd.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/ring_drainer/drain_loop.h"
#include "src/tracing/service/traced/producer_table.h"
#include "src/tracing/service/traced/session.h"
#include "src/tracing/service/traced/user_limits.h"

namespace perfetto {
namespace protos {
class TraceConfig;
}  // namespace protos
}  // namespace perfetto

namespace ringtrace {
namespace traced {

class SessionTable {
 public:
  using Clock = SessionClock;
  using Map = std::map<SessionId, std::unique_ptr<Session>>;
  // The session limits (ServiceCore::Options has their meaning).
  struct Options {
    uint32_t max_sessions = 0;
    uint64_t max_total_buffer_bytes = 0;
    UserLimits user_limits;
  };
  // What a new session is started for.
  struct Request {
    int32_t consumer_uid = -1;
    uint64_t consumer_id = 0;
    // Whether max_total_buffer_bytes and the consumer uid's limits apply
    // (not to the default session).
    bool peer_limits = true;
  };
  // Who started a session and whether it is stopping, for the owner's
  // access checks.
  struct SessionOwner {
    int32_t consumer_uid = -1;
    uint64_t consumer_id = 0;
    bool stopping = false;
  };

  SessionTable(const Options& options,
               uint32_t service_uid,
               ring_drainer::DrainLoop* loop,
               const ProducerTable* producers);
  SessionTable(const SessionTable&) = delete;
  SessionTable& operator=(const SessionTable&) = delete;

  // A new session, not in the table yet: validates |config|
  // (MakeSessionConfig), checks the limits and creates its buffers; sets
  // its id, fd, owner, clocks, uuid and deadlines. Errors: the config's,
  // the limits', a closed table, no output file, no BufferID or memory
  // left.
  base::Status Create(const perfetto::protos::TraceConfig& config,
                      base::ScopedFd out_fd,
                      const Request& request,
                      Clock::time_point now,
                      std::unique_ptr<Session>* session);
  Session* Insert(std::unique_ptr<Session> session);
  // Frees session |id| (the default session's end too).
  void Erase(SessionId id);
  // Makes session |id| (in the table) the default session.
  void SetDefault(SessionId id);
  // From now on no session is created ("the service is stopping").
  void Close() { closed_ = true; }

  // Null for an unknown id.
  Session* Find(SessionId id) const;
  // The session a consumer request names: "no session N" if there is none.
  base::Status FindSession(SessionId id, Session** session) const;
  // FindSession() for a request that changes the session (stop, flush):
  // also "session N is stopping" if it is.
  base::Status FindRunningSession(SessionId id, Session** session) const;
  // The ids of the sessions now, for loops whose steps may end (erase) a
  // session.
  std::vector<SessionId> SessionIds() const;
  // The sessions, by id (the sessions may be changed through it, not the
  // map).
  const Map& sessions() const { return sessions_; }
  size_t num_sessions() const { return sessions_.size(); }
  bool has_session(SessionId id) const { return sessions_.count(id) != 0; }
  size_t num_buffers() const;
  // The default session's id (0: none running).
  SessionId default_session() const { return default_session_; }
  // Its first buffer's BufferID (kNoDefaultBuffer: none running).
  trace_buffer::BufferID default_buffer() const { return default_buffer_; }

  // False if there is no such session.
  bool GetSessionOwner(SessionId id, SessionOwner* owner) const;
  // Makes |consumer_id| the owner of session |id| (0: none, a detached
  // session): its events name that consumer from now on. False if there is
  // no such session.
  bool SetSessionConsumer(SessionId id, uint64_t consumer_id);
  // What QueryServiceState lists (the buffers' fill read on the drain
  // thread).
  std::vector<SessionInfo> ListSessions(Clock::time_point now) const;

  // The buffers ring |producer_id| may write now: the default session's
  // first buffer, plus the target buffer of every instance on it of a
  // session whose buffers are still routed (neither of them |except|'s).
  std::vector<ring_drainer::TargetBuffer> AllowedBuffersFor(
      trace_buffer::ProducerID producer_id,
      const Session* except) const;
  // The connected producers |session|'s instances run on: who gets its
  // flushes.
  std::set<trace_buffer::ProducerID> SessionProducers(
      const Session& session) const;
  // The producers whose rings may write |session|'s buffers: those of
  // SessionProducers, and every connected one for the default session.
  std::set<trace_buffer::ProducerID> SessionWriters(
      const Session& session) const;
  // SessionWriters' rings with their chunk counts, for DrainBounded on the
  // drain thread.
  std::vector<std::pair<ring_drainer::RingId, uint32_t>> SessionRings(
      const Session& session) const;
  // ProducerIdAllocator's scan: sets (*held)[id] for every ProducerID a
  // session's buffer holds a sequence of (read on the drain thread).
  void CollectSequenceProducers(std::vector<bool>* held) const;

  // A session's loss table (null: no such session).
  const ProducerLossTable* session_loss_table(SessionId id) const;
  // A DrainRequest's loss report of connected producer |id|. Each entry
  // goes to the loss table of the session owning its target buffer if this
  // producer serves that session (an instance of it writes that buffer, or
  // the buffer is the default session's, which every producer serves); a
  // final report marks the producer's records in every table it serves.
  // Returns the entries no table took (loss_entries_unattributed).
  uint64_t RouteLossReport(trace_buffer::ProducerID id,
                           const ProducerTable::Producer& producer,
                           const ipc::DrainRequestMsg& report);
  // Entries of producer |id|'s writer loss area (ProducerTable::
  // ReadLossArea), routed as RouteLossReport's; |only|: the entries for
  // that session's buffers only, the others are left for their own
  // sessions' ends. A slot read twice raises nothing: a writer's counters
  // only grow, and a table keeps the larger. Returns the entries no table
  // took.
  uint64_t RouteLossArea(trace_buffer::ProducerID id,
                         const ProducerTable::Producer& producer,
                         const std::vector<ipc::WriterLossEntry>& entries,
                         const Session* only);
  // Producer |id| was removed at |removed_at| (BOOTTIME): marked in every
  // loss table it serves (before its instances are forgotten).
  void MarkProducerRemoved(trace_buffer::ProducerID id,
                           const ProducerTable::Producer& producer,
                           uint64_t removed_at);

  // The BufferID the next session buffer gets (tests of the counter's wrap).
  void set_next_buffer_id_for_testing(uint32_t id) { next_buffer_id_ = id; }

 private:
  // Create()'s checks before any buffer: the table open, an fd, the
  // session count, the unique name, the byte limits.
  base::Status CheckStart(const Session& session,
                          const base::ScopedFd& out_fd,
                          const Request& request) const;
  // Whether |consumer_uid| may start one more session with |wanted| buffer
  // bytes (UserLimits).
  base::Status CheckSessionUserLimits(int32_t consumer_uid,
                                      uint64_t wanted) const;
  // Creates |session|'s buffers with fresh BufferIDs.
  base::Status CreateBuffers(Session* session);
  trace_buffer::BufferID AllocateBufferId();
  bool BufferIdInUse(uint32_t id) const;
  // The loss table an entry of producer |id| for |buffer| belongs to, or
  // null (see RouteLossReport).
  ProducerLossTable* LossTableFor(trace_buffer::ProducerID id,
                                  uint32_t buffer) const;
  // Calls |fn| with every loss table producer |id| serves.
  void ForEachLossTableOf(
      trace_buffer::ProducerID id,
      const std::function<void(ProducerLossTable*)>& fn) const;

  const Options options_;
  const uint32_t service_uid_;
  ring_drainer::DrainLoop* const loop_;
  const ProducerTable* const producers_;
  Map sessions_;
  SessionId next_session_id_ = 1;
  SessionId default_session_ = 0;
  trace_buffer::BufferID default_buffer_ = kNoDefaultBuffer;
  uint32_t next_buffer_id_ = 1;  // 1..kMaxSessionBufferId, then wraps
  uint64_t buffer_bytes_ = 0;    // every session's buffers
  bool closed_ = false;
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_SESSION_TABLE_H_
