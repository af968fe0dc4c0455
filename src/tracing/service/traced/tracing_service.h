/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TracingService: the tracing service of ringtraced. A ServiceCore
// (service_core.h: rings, drain loop, trace buffer, export) behind a Unix
// SOCK_SEQPACKET listening socket speaking the wire protocol of
// src/tracing/ipc/wire_protocol.h. Design: docs/service.md.
//
// One service thread runs a poll(2) loop over an eventfd (Stop()'s wake-up),
// the listening socket and every connection, all non-blocking:
//   - accept: up to kAcceptsPerRound new connections per round; a connection
//     beyond Options::max_pending_connections (connections still owing their
//     Hello) is closed at once. The peer's pid and uid come from SO_PEERCRED.
//   - a connection must send its Hello within Options::hello_timeout_ms, else
//     it is closed (ConnectionStats::hello_timeouts);
//   - per round at most Options::messages_per_round datagrams are read from
//     one connection, so a flooding peer cannot starve the others;
//   - Hello -> ServiceCore::Admit -> HelloReply (+ the ring's memfd on kOk).
//     A rejected Hello (version, producer limit, ring creation) gets its
//     HelloReply and the connection is closed;
//   - DrainRequest -> ServiceCore::OnDrainRequest (DrainLoop::Notify);
//   - EOF, a receive error, or any protocol violation (undecodable datagram,
//     datagram the transport refused, an fd attached, a second Hello, a
//     DrainRequest before the Hello, a HelloReply) closes only that
//     connection, after the final kFlush drain of its ring, and is counted.
//
// Stop() wakes the loop, joins the thread (which closes every connection),
// then ServiceCore::Finish() drains every ring one last time and writes the
// trace file opened by Start().
//
// Thread model: Start() and Stop() are called by the owner (one thread).
// stats() and WaitForStats() may be called from any thread; they see the
// counters as of the end of the service thread's last poll round.

#ifndef SRC_TRACING_SERVICE_TRACED_TRACING_SERVICE_H_
#define SRC_TRACING_SERVICE_TRACED_TRACING_SERVICE_H_

#include <stddef.h>
#include <stdint.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/base/status.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/service/traced/service_core.h"

namespace ringtrace {
namespace traced {

// TracingService's counters, per connection event.
struct ConnectionStats {
  uint64_t connections_accepted = 0;
  // Closed right after accept(): too many connections owing their Hello, or
  // the peer's credentials could not be read.
  uint64_t connections_refused = 0;
  uint64_t hello_timeouts = 0;    // no Hello before the deadline
  uint64_t peer_disconnects = 0;  // EOF (or reset) from the peer
  // Protocol violations. Each closes its connection, after the final drain
  // of its ring if it had one.
  uint64_t violations_malformed = 0;  // ipc::DecodeMessage rejected it
  // UnixSocket::Receive returned kError: a datagram longer than
  // ipc::kMaxMessageSize or with more than one fd attached (the transport
  // does not tell these apart, nor from the rare recv(2) failure).
  uint64_t violations_refused_datagram = 0;
  uint64_t violations_fd_attached = 0;  // one fd on a producer message
  uint64_t violations_second_hello = 0;
  // A DrainRequest while the Hello was not answered, i.e. instead of it.
  uint64_t violations_early_drain_request = 0;
  // A well-formed message producers never send (HelloReply).
  uint64_t violations_unexpected_type = 0;
  uint64_t send_errors = 0;  // a HelloReply could not be sent

  uint64_t protocol_violations() const {
    return violations_malformed + violations_refused_datagram +
           violations_fd_attached + violations_second_hello +
           violations_early_drain_request + violations_unexpected_type;
  }
};

struct ServiceStats {
  ProducerStats producers;
  ConnectionStats connections;
};

// What a traced session did, for ringtraced's summary.
struct ServiceSummary {
  ServiceStats stats;
  ExportSummary export_summary;
  std::string out_path;
  double elapsed_s = 0;  // Start() to Stop()
};

// One paragraph: producers, packets exported, losses, violations.
std::string FormatSummary(const ServiceSummary& summary);

class TracingService {
 public:
  struct Options {
    std::string socket_path;
    std::string out_path;  // the trace file, created by Start()
    ServiceCore::Options core;
    uint32_t max_pending_connections = 32;  // connections owing their Hello
    uint32_t hello_timeout_ms = 5000;
    uint32_t messages_per_round = 16;  // per connection and poll round
  };
  static constexpr uint32_t kAcceptsPerRound = 16;
  // After accept(2) failed (e.g. EMFILE), the listening socket is left out
  // of the poll set this long instead of spinning on it.
  static constexpr uint32_t kAcceptBackoffMs = 100;

  explicit TracingService(const Options& options);
  ~TracingService();  // Stop() if running (the summary is dropped).

  TracingService(const TracingService&) = delete;
  TracingService& operator=(const TracingService&) = delete;

  // Creates the trace file, the core and the listening socket, then starts
  // the service thread. Fails without side effects beyond a created (empty)
  // trace file.
  base::Status Start();
  // Stops accepting and serving, drains every ring, writes the trace.
  // |summary| may be null. Fails if not running or on an I/O error.
  base::Status Stop(ServiceSummary* summary);

  ServiceStats stats() const;
  // Waits until |pred| holds for the published stats or |timeout_ms|
  // passed; returns whether it holds. For tests and tools.
  bool WaitForStats(const std::function<bool(const ServiceStats&)>& pred,
                    int timeout_ms) const;

  const Options& options() const { return options_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    std::unique_ptr<ipc::UnixSocket> socket;  // null once closed
    ring_drainer::ClientIdentity identity;    // from SO_PEERCRED
    // Set once the Hello was answered with kOk.
    trace_buffer::ProducerID producer_id = 0;
    Clock::time_point hello_deadline;
  };

  void Run();
  // poll(2) timeout until the nearest Hello deadline or the end of the
  // accept back-off; -1 if none.
  int NextTimeoutMs(Clock::time_point now) const;
  void AcceptNew(Clock::time_point now);
  void Serve(Connection* c);
  void HandleHello(Connection* c, const ipc::HelloMsg& hello);
  // Closes |c|; if it is a producer, drains its ring one last time and
  // removes it first.
  void Close(Connection* c);
  void Publish();

  const Options options_;
  std::unique_ptr<ServiceCore> core_;
  std::unique_ptr<ipc::UnixSocket> listener_;
  ipc::ScopedFd wake_fd_;  // eventfd: Stop() wakes the loop
  ipc::ScopedFd out_fd_;   // the trace file
  std::thread thread_;
  bool running_ = false;  // owner thread only
  Clock::time_point start_time_;

  // Service thread only while it runs.
  std::vector<std::unique_ptr<Connection>> connections_;
  Clock::time_point accept_backoff_until_;
  ConnectionStats conn_stats_;

  mutable std::mutex stats_mutex_;
  mutable std::condition_variable stats_cv_;
  ServiceStats published_;  // guarded by stats_mutex_
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_TRACING_SERVICE_H_
