/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TracingService: the tracing service of ringtraced. A ServiceCore
// (service_core.h: rings, drain loop, sessions, export) behind a Unix
// SOCK_SEQPACKET listening socket speaking the wire protocol of
// src/tracing/ipc/wire_protocol.h. Design: docs/service.md.
//
// One service thread runs a poll(2) loop over two eventfds (Stop()'s wake-up
// and Snapshot()'s request), the listening socket and every connection, all
// non-blocking:
//   - accept: up to kAcceptsPerRound new connections per round. The peer's
//     pid and uid come from SO_PEERCRED. A connection still owing its Hello
//     is "pending"; a new one is closed at once if its uid already has
//     Options::max_pending_per_uid pending (so one local user cannot lock
//     the others out) or Options::max_pending_connections are pending in
//     all. Refusals are counted (connections_refused, of which
//     connections_refused_per_uid) and logged (the first of a uid and then
//     every power of two, so a flood cannot flood the log);
//   - with Options::own_uid_only (the in-process backend's service), a
//     peer of another uid than the service's is closed at once (counted in
//     connections_refused);
//   - a connection must send its Hello within Options::hello_timeout_ms, else
//     it is closed (ConnectionStats::hello_timeouts);
//   - per round at most Options::messages_per_round datagrams are read from
//     one connection, so a flooding peer cannot starve the others;
//   - Hello -> ServiceCore::Admit -> HelloReply (+ the ring's memfd on kOk).
//     A rejected Hello (version, producer limit, ring creation) gets its
//     HelloReply and the connection is closed;
//   - DrainRequest -> ProducerTable::OnDrainRequest (DrainLoop::Notify);
//   - a ring the drainer stopped on a protocol error (ProducerTable::
//     stopped_rings_fd, polled) disconnects its producer: logged, counted
//     (producers_disconnected_ring_error). Keeping it connected would let
//     it write into a ring nobody reads while thinking it is traced;
//   - EOF, a receive error, or any protocol violation (undecodable datagram,
//     datagram the transport refused, an fd attached, a second Hello, a
//     DrainRequest before the Hello, a HelloReply) closes only that
//     connection, after the final kFlush drain of its ring, and is counted.
//
// The consumer socket (Options::consumer_socket_path; tracing_service_
// consumer.cc): connections of the service's uid, root or consumer_group;
// each datagram is a ConsumerRequest (ipc::DecodeConsumerRequest) served on
// the core's sessions. Answers, tracing_ended events and the producers'
// StartDataSource / StopDataSource / Flush are sent non-blocking: a peer
// whose socket buffer is full is disconnected, never waited for. The core's
// deadlines are part of the poll timeout. A consumer that hangs up frees its
// sessions unwritten; Stop() writes every live session first.
//
// With Options::out_path (`ringtraced --out`), Start() opens the trace file
// (unnamed, mode 0600) and starts the default session on it
// (TracingSessions::StartDefaultSession, Options::out_config): a session like
// any consumer's, whose first buffer is also where the producers' own
// writers write.
//
// Snapshot(path) puts a request in a one-request slot (a mutex) and signals
// the snapshot eventfd; the service thread, which owns the ServiceCore, opens
// the file, runs TracingSessions::CloneSession on the default session (a drain,
// a copy of its buffers, their export; tracing goes on) and answers through
// the slot (a condition variable). Connections wait meanwhile: the export
// runs on the service thread.
//
// Stop() wakes the loop; the service thread stops every session
// (TracingSessions::StopAllSessions: StopDataSource to each instance) and goes
// on serving until each ended (its instances acked, its rings drained, its
// trace written) or Options::stop_grace_ms passed; the rest are ended
// without waiting (TracingSessions::EndAllSessions), every connection closes,
// ServiceCore::Finish() removes the producers, and the default session's
// file is put in place at out_path (base::PendingFile,
// src/base/safe_file.h).
//
// Thread model: Start(), Snapshot() and Stop() are called by the owner (one
// thread). stats() and WaitForStats() may be called from any thread; they
// see the counters as of the end of the service thread's last poll round (or
// its last snapshot).

#ifndef SRC_TRACING_SERVICE_TRACED_TRACING_SERVICE_H_
#define SRC_TRACING_SERVICE_TRACED_TRACING_SERVICE_H_

#include <stddef.h>
#include <stdint.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "ringtrace/status.h"
#include "src/base/safe_file.h"
#include "src/base/thread_annotations.h"
#include "src/tracing/ipc/consumer_protocol.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/traced/detached_sessions.h"
#include "src/tracing/service/traced/service_core.h"

namespace ringtrace {
namespace protos {
class ConsumerRequest;
class ConsumerResponse;
}  // namespace protos

namespace traced {

// TracingService's counters, per connection event.
struct ConnectionStats {
  uint64_t connections_accepted = 0;
  // Closed right after accept(): too many connections owing their Hello, or
  // the peer's credentials could not be read.
  uint64_t connections_refused = 0;
  // Of connections_refused: the peer's uid had max_pending_per_uid pending.
  uint64_t connections_refused_per_uid = 0;
  uint64_t hello_timeouts = 0;  // no Hello before the deadline
  // The drainer stopped the producer's ring on a protocol error.
  uint64_t producers_disconnected_ring_error = 0;
  uint64_t peer_disconnects = 0;  // EOF (or reset) from the peer
  // Protocol violations. Each closes its connection, after the final drain
  // of its ring if it had one.
  uint64_t violations_malformed = 0;  // ipc::DecodeMessage rejected it
  // Datagrams the transport refused (UnixSocket::Receive): longer than
  // ipc::kMaxMessageSize, or with more than one fd attached.
  uint64_t violations_oversized_datagram = 0;
  uint64_t violations_too_many_fds = 0;
  uint64_t violations_fd_attached = 0;  // one fd on a producer message
  uint64_t violations_second_hello = 0;
  // A DrainRequest while the Hello was not answered, i.e. instead of it.
  uint64_t violations_early_drain_request = 0;
  // A well-formed message producers never send (HelloReply).
  uint64_t violations_unexpected_type = 0;
  uint64_t send_errors = 0;  // a HelloReply could not be sent
  // recv(2) failed on a connection (not the peer's doing as far as we can
  // tell; the connection is closed after the final drain all the same).
  uint64_t receive_errors = 0;

  // Consumer connections (the consumer socket).
  uint64_t consumers_accepted = 0;
  // Closed at accept: not the service's uid nor in --consumer-group, or
  // max_consumers connected.
  uint64_t consumers_refused = 0;
  uint64_t consumer_requests = 0;
  // Requests answered with ok = false (invalid config, limits, unknown
  // session, a file that is not a regular file...).
  uint64_t consumer_request_errors = 0;
  // Datagrams that do not frame or parse as a request at all: the
  // connection is closed (its sessions are freed).
  uint64_t consumer_violations = 0;
  // A consumer whose socket buffer was full when the service had something
  // to send (it does not read): closed, its sessions freed.
  uint64_t consumers_dropped_not_reading = 0;
  uint64_t consumer_disconnects = 0;
  // Producer messages about data sources the core refused (an unknown
  // instance id, a second ack...): protocol violations, the producer is
  // disconnected.
  uint64_t violations_data_source = 0;
  // A StartDataSource, StopDataSource or Flush could not be sent (the
  // producer's socket buffer was full or the send failed): the producer is
  // disconnected (after its final drain), as it could no longer follow its
  // sessions.
  uint64_t producer_command_send_failures = 0;

  uint64_t protocol_violations() const {
    return violations_malformed + violations_oversized_datagram +
           violations_too_many_fds + violations_fd_attached +
           violations_second_hello + violations_early_drain_request +
           violations_unexpected_type + violations_data_source;
  }
};

struct ServiceStats {
  ProducerStats producers;
  ConnectionStats connections;
  SessionStats sessions;
  uint32_t sessions_active = 0;
  uint64_t snapshots_written = 0;  // Snapshot() calls that succeeded
  // Snapshot() requests the service thread failed (the file could not be
  // opened or written, the buffer could not be copied), or left unanswered
  // because the service stopped first.
  uint64_t snapshot_errors = 0;
};

// What a traced session did, for ringtraced's summary; or what a snapshot
// wrote.
struct ServiceSummary {
  ServiceStats stats;
  ExportSummary export_summary;
  std::string out_path;  // the trace file, or the snapshot's file
  // The file is complete and in place. False after a write error: the
  // file was discarded and |out_path| holds what it held before.
  bool written = false;
  double elapsed_s = 0;  // Start() to Stop() (or to the snapshot)
};

// One paragraph: producers, packets exported, losses, violations.
std::string FormatSummary(const ServiceSummary& summary);

// Whether a consumer connected as |consumer_uid| (SO_PEERCRED) may see and
// act on a session started by a consumer of |session_uid|: list it in
// QueryServiceState, stop, flush, clone it, read its TraceStats. The same
// uid, or root. Other uids' sessions are left out of QueryServiceState and
// are "no session N of this user" to every request (docs/sessions.md).
bool ConsumerMayAccessSession(int32_t consumer_uid, int32_t session_uid);

// The config of `ringtraced --out`'s session when none is given: one buffer
// of |buffer_kb| KiB with |fill_policy|, and the track_event data source
// with no category lists (Perfetto's default rule: every category not
// tagged slow or debug).
perfetto::protos::TraceConfig DefaultOutConfig(
    uint32_t buffer_kb = 16384,
    trace_buffer::TraceBufferV2::OverwritePolicy fill_policy =
        trace_buffer::TraceBufferV2::OverwritePolicy::kOverwrite);

class TracingService {
 public:
  struct Options {
    // The producer socket.
    std::string socket_path;
    // Mode and group of the socket file: who may connect.
    ipc::ListenOptions socket_options;
    // The default session's trace file (base::PendingFile: an unnamed file
    // in its directory put in place by Stop(), or a device/FIFO written
    // directly). Empty: no default session; consumers start sessions.
    std::string out_path;
    // The default session's config (DefaultOutConfig() unless given).
    perfetto::protos::TraceConfig out_config = DefaultOutConfig();
    // A symbolic link at out_path is written through (the file it names is
    // created or replaced); refused otherwise. Not for the snapshots.
    bool follow_symlink = false;
    // The group of the trace file and the snapshots, mode 0640; (gid_t)-1:
    // none, mode 0600.
    gid_t out_group = static_cast<gid_t>(-1);
    // The consumer socket (docs/sessions.md); empty: none.
    std::string consumer_socket_path;
    ipc::ListenOptions consumer_socket_options;
    // Besides the service's own uid (and root), peers whose primary or
    // supplementary group is this one may use the consumer socket;
    // (gid_t)-1: none.
    gid_t consumer_group = static_cast<gid_t>(-1);
    uint32_t max_consumers = 64;  // consumer connections at once
    // Only peers of the service's own effective uid, on both sockets (root
    // and consumer_group refused too; counted in connections_refused and
    // consumers_refused): the in-process backend's private service
    // (include/ringtrace/in_process_backend.h).
    bool own_uid_only = false;
    ServiceCore::Options core;
    // Connections owing their Hello: in all, and per peer uid.
    uint32_t max_pending_connections = 256;
    uint32_t max_pending_per_uid = 8;
    uint32_t hello_timeout_ms = 5000;
    uint32_t messages_per_round = 16;  // per connection and poll round
    // How long Snapshot() waits for the service thread (> 0). Only reached
    // when something is badly wrong, e.g. a hung file system.
    uint32_t snapshot_timeout_ms = 120000;
    // Stop(): how long the sessions' data sources have to acknowledge their
    // stop (each session's own data_source_stop_timeout_ms applies within
    // it) before the rest are ended without waiting.
    uint32_t stop_grace_ms = 2000;
  };
  static constexpr uint32_t kAcceptsPerRound = 16;
  // After accept(2) failed (e.g. EMFILE), the listening socket is left out
  // of the poll set this long instead of spinning on it.
  static constexpr uint32_t kAcceptBackoffMs = 100;

  explicit TracingService(const Options& options);
  ~TracingService();  // Stop() if running (the summary is dropped).

  TracingService(const TracingService&) = delete;
  TracingService& operator=(const TracingService&) = delete;

  // Creates the core, the temporary trace file and the listening sockets
  // (the consumer socket first, so that a client that sees the producer
  // socket accept finds the consumer socket listening too), then starts
  // the service thread. On failure nothing is left behind: the
  // trace file is discarded, out_path is untouched.
  base::Status Start();
  // Stops accepting and serving, drains every ring, writes the trace and
  // puts it in place. |summary| may be null. Fails if not running or on
  // an I/O error (the message names out_path; the partial file is
  // discarded).
  base::Status Stop(ServiceSummary* summary);

  // While running, from the owner thread: writes a snapshot of what the
  // default session's buffers hold now to |path| (created or replaced, mode
  // 0600), a complete Perfetto trace like the final one (TracingSessions::
  // CloneSession says what it holds: the published chunks, not the ones
  // writers hold open). Errors besides the file's: no default session.
  // Tracing goes on; producers stay connected; the final trace is
  // unaffected. Written like the trace file (base::PendingFile): complete
  // or not at all, never through a symbolic link. Waits for the service thread
  // at most Options::snapshot_timeout_ms; after a timeout the request may still
  // complete, and the next Snapshot() fails until it did. |path| must not
  // be the trace file. |summary| may be null; it gets the snapshot's
  // ExportSummary, the stats after it and |path|. Counted in
  // ServiceStats::snapshots_written / snapshot_errors.
  base::Status Snapshot(const std::string& path, ServiceSummary* summary);

  ServiceStats stats() const;
  // Waits until |pred| holds for the published stats or |timeout_ms|
  // passed; returns whether it holds. For tests and tools.
  bool WaitForStats(const std::function<bool(const ServiceStats&)>& pred,
                    int timeout_ms) const;

  const Options& options() const { return options_; }

  // Runs on the service thread before each snapshot is written (tests of
  // the slow-snapshot paths). Set before Start().
  void set_snapshot_hook_for_testing(std::function<void()> hook) {
    snapshot_hook_for_testing_ = std::move(hook);
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    std::unique_ptr<ipc::UnixSocket> socket;  // null once closed
    ring_drainer::ClientIdentity identity;    // from SO_PEERCRED
    // Set once the Hello was answered with kOk.
    trace_buffer::ProducerID producer_id = 0;
    Clock::time_point hello_deadline;
    // A connection of the consumer socket (never owes a Hello).
    bool consumer = false;
    uint64_t consumer_id = 0;      // ServiceCore's handle of it
    std::set<SessionId> sessions;  // started by this consumer, live
    // DisableTracing requests waiting for a session's end: one that was
    // stopping already, or another connection's (its owner gets the
    // tracing_ended event). Answered when it ends; with an error if its
    // owner hangs up and it is freed unwritten.
    std::map<SessionId, std::vector<uint64_t>> waiting_disable;
  };
  bool IsPending(const Connection& c) const {
    return c.socket && !c.consumer && c.producer_id == 0;
  }

  void Run();
  // poll(2) timeout until the nearest Hello deadline or the end of the
  // accept back-off; -1 if none.
  int NextTimeoutMs(Clock::time_point now) const;
  void AcceptNew(Clock::time_point now);
  // Whether a connection from |creds| may wait for its Hello; counts and
  // logs a refusal.
  bool AdmitPending(const base::ClientIdentity& creds);
  // Disconnects the producers whose rings the drainer stopped.
  void DisconnectStoppedProducers();
  // The connection counters for ServiceCore's TraceStats.
  ServiceCounters MakeServiceCounters() const;
  void Serve(Connection* c);
  // The consumer side (tracing_service_consumer.cc).
  void AcceptConsumers();
  bool ConsumerAllowed(const Connection& c) const;
  void ServeConsumer(Connection* c);
  void HandleConsumerRequest(Connection* c,
                             const protos::ConsumerRequest& request,
                             base::ScopedFd fd);
  // The session a request names: any connection of the uid that started
  // it, or root, may stop, flush, clone it or read its stats (that is how
  // `ringtrace --stop` and `--clone` act on a session another process
  // records). A session of another user is not named: it does not exist
  // for this consumer ("session_id: no session N of this user").
  base::Status FindAccessibleSession(const Connection& c,
                                     SessionId id,
                                     ServiceCore::SessionOwner* owner) const;
  // DisableTracingRequest: ok when the answer comes later (the kEnded
  // event, or |waiting_disable|).
  base::Status DisableTracing(Connection* c,
                              const protos::ConsumerRequest& request,
                              Clock::time_point now);
  base::Status CloneSession(const Connection& c,
                            SessionId id,
                            int fd,
                            protos::ConsumerResponse* response);
  // DetachRequest / AttachRequest (docs/sessions.md, "Detached sessions").
  // Attach may leave a tracing_ended event in |*ended| to send after the
  // answer.
  base::Status Detach(Connection* c, const protos::DetachRequest& request);
  base::Status Attach(Connection* c,
                      const protos::AttachRequest& request,
                      protos::ConsumerResponse* response,
                      protos::ConsumerResponse* ended);
  // Sends |response|; a consumer whose socket buffer is full, or a send
  // error, closes the connection. Returns whether it was sent.
  bool SendToConsumer(Connection* c, const protos::ConsumerResponse& response);
  // Sends what the core has for producers and consumers (commands, session
  // events) until it has nothing more.
  void DispatchCore();
  void DeliverEvent(const SessionEvent& event);
  void SendCommand(const ProducerCommand& command);
  Connection* FindConsumer(uint64_t consumer_id);
  Connection* FindProducer(trace_buffer::ProducerID id);
  // The producers, |c|'s sessions (ConsumerMayAccessSession) and the
  // limits.
  void FillServiceState(const Connection& c,
                        protos::ConsumerResponse* response);
  // Answers every DisableTracing that waits for session |id| (any
  // connection's) with |response| under each request's id.
  void AnswerWaitingDisables(SessionId id, protos::ConsumerResponse response);
  // At stop: reads what the producers already sent (bounded).
  void ServeQueuedBeforeStop();
  void HandleHello(Connection* c, const ipc::HelloMsg& hello);
  // RegisterDataSource, DataSourceStopped, FlushAck: to the core; a refusal
  // is a protocol violation. Returns false if |c| was closed.
  bool HandleDataSourceMessage(Connection* c, const ipc::Message& msg);
  // Closes |c|; if it is a producer, drains its ring one last time and
  // removes it first.
  void Close(Connection* c);
  void Publish();
  // Service thread: runs the request in the snapshot slot, if any, and
  // answers it.
  void ServeSnapshotRequest();
  base::Status WriteSnapshot(const std::string& path, ExportSummary* summary);
  // Service thread, when it stops: fails a request nobody served.
  void FailPendingSnapshot();
  // After an export into |file|: commits it if |export_status| is ok. The
  // error names the file's path. |*written|: the file is in place.
  // How the trace file and the snapshots are created.
  base::PendingFileOptions OutputFileOptions(bool follow_symlink) const;
  static base::Status FinishOutput(base::PendingFile* file,
                                   base::Status export_status,
                                   bool* written);

  const Options options_;
  std::unique_ptr<ServiceCore> core_;
  std::unique_ptr<ipc::UnixSocket> listener_;
  std::unique_ptr<ipc::UnixSocket> consumer_listener_;  // may be null
  uint64_t next_consumer_id_ = 1;
  std::vector<uint8_t> consumer_buf_;  // one received consumer datagram
  std::vector<uint8_t> producer_buf_;  // one received producer datagram
  base::ScopedFd wake_fd_;             // eventfd: Stop() wakes the loop
  base::ScopedFd snapshot_fd_;         // eventfd: a request is in snapshot_
  std::unique_ptr<base::PendingFile> out_file_;
  std::thread thread_;
  bool running_ = false;  // owner thread only
  Clock::time_point start_time_;

  // Service thread only while it runs.
  std::vector<std::unique_ptr<Connection>> connections_;
  Clock::time_point accept_backoff_until_;
  DetachedSessions detached_;
  ConnectionStats conn_stats_;
  // Refusals per uid, for log rate limiting: pending connections, Hellos
  // over a user limit, consumer connections.
  std::map<uint32_t, uint64_t> refusals_per_uid_;
  std::map<uint32_t, uint64_t> hello_refusals_per_uid_;
  std::map<uint32_t, uint64_t> consumer_refusals_per_uid_;
  uint64_t snapshots_written_ = 0;
  uint64_t snapshot_errors_ = 0;
  std::function<void()> snapshot_hook_for_testing_;

  mutable base::Mutex stats_mutex_;
  mutable std::condition_variable stats_cv_;
  ServiceStats published_ RT_GUARDED_BY(stats_mutex_);

  // The snapshot slot: one request at a time. Requests are numbered; the
  // owner waits until |done| reaches its number.
  struct SnapshotSlot {
    uint64_t requested = 0;  // number of the last request
    uint64_t done = 0;       // number of the last request answered
    std::string path;        // of request |requested|
    base::Status status;     // of request |done|
    ExportSummary summary;   // of request |done|
  };
  base::Mutex snapshot_mutex_;
  std::condition_variable snapshot_cv_;  // |done| moved
  SnapshotSlot snapshot_ RT_GUARDED_BY(snapshot_mutex_);
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_TRACING_SERVICE_H_
