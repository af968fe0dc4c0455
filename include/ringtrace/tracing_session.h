/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace::TracingSession: an app (or a tool, a test) records a trace
// through the system service, as Perfetto's Tracing::NewTrace() does:
//
//   ringtrace::base::Status status;
//   auto session = ringtrace::TracingSession::Connect({}, &status);
//   if (!session) { fprintf(stderr, "%s\n", status.message().c_str()); ... }
//   status = session->SetupFromText(
//       "buffers { size_kb: 4096 }\n"
//       "data_sources { config { name: \"track_event\" } }\n");
//   status = session->StartBlocking();     // the data sources are started
//   ... RT_TRACE_EVENT(...) here or in any process ...
//   status = session->StopBlocking();      // the trace is written
//   std::string trace;
//   status = session->ReadTraceBlocking(&trace);  // a Perfetto trace file
//
// One session per TracingSession. Its config is a TraceConfig (protos/
// perfetto/config/trace_config.proto: Perfetto's field numbers), typed or
// in the protobuf text format Perfetto's configs use; the service validates
// it (an error names the field) and says at the start what it will not
// record as asked (start_warnings(): a data source no producer provides, a
// category nobody declares). The trace goes to a file descriptor the caller
// gives (a regular file), or, without one, into an anonymous file the
// session keeps, read back with ReadTraceBlocking().
//
// Every call talks to the service over its consumer socket
// (docs/sessions.md, "Consumer protocol": default path resolved like the
// SDK's and the CLI's, $RINGTRACE_CONSUMER_SOCK first) and waits at most
// TracingSessionOptions::timeout_ms (a flush: its timeout plus a margin).
// The service is a peer: what it sends is validated, and a broken
// connection is an error of every later call, never a crash or a hang.
//
// Callback forms: Start(), Flush() and Stop() run the blocking call on the
// session's own thread, in the order posted, and call |done| there with its
// status. The on-stop callback (SetOnStopCallback) is called once when the
// session ended, however it ended (StopBlocking, Stop, or the service on
// its own: duration_ms, max_file_size_bytes, its own stop), on the thread
// that saw the end: the session's own (it watches the connection every
// 100 ms while the session runs), or the caller of StopBlocking() /
// WaitForEndBlocking(). A callback must not destroy the TracingSession; it
// may call the blocking methods.
//
// Thread model: any thread may call any method; calls are serialized. The
// destructor waits for the callbacks in progress, then stops a session
// still running (its trace is written).

#ifndef INCLUDE_RINGTRACE_TRACING_SESSION_H_
#define INCLUDE_RINGTRACE_TRACING_SESSION_H_

#include <stdint.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ringtrace/status.h"

namespace perfetto {
namespace protos {
class TraceConfig;
}  // namespace protos
}  // namespace perfetto

namespace ringtrace {

struct TracingSessionOptions {
  // The service's consumer socket; empty: the default path (docs/
  // sessions.md, "Sockets and who may use them").
  std::string consumer_socket_path;
  // The longest wait of one call (connecting included), > 0.
  int timeout_ms = 30000;
  // StartBlocking() returns only once every producer's data source instance
  // of the session got its start (OnStart returned): after the start, a
  // flush round trip, which the service sends each producer after its
  // StartDataSource on the same connection. A producer that does not ack
  // within the config's flush_timeout_ms makes StartBlocking() fail (the
  // session runs). The in-process backend's sessions set it (an app's event
  // right after the start is then recorded); for the system backend it
  // waits for every producer of the session, the slowest included.
  bool wait_for_data_source_start = false;
};

// What the service says about a session that ended.
struct TracingSessionSummary {
  uint64_t packets_written = 0;
  uint64_t bytes_written = 0;
  // Every packet known lost in the session (the sums of its TraceStats).
  uint64_t packets_lost = 0;
  uint64_t duration_ms = 0;
  // Why it ended, when not by StopBlocking()/Stop() (e.g. "duration_ms");
  // the service's error if writing the trace failed.
  std::string ended_by_service;
};

class TracingSession {
 public:
  using DoneCallback = std::function<void(base::Status)>;

  // Connects to the service. Null and an error in |status| if it cannot
  // (no service, not this user's or root's, a timeout).
  static std::unique_ptr<TracingSession> Connect(
      const TracingSessionOptions& options,
      base::Status* status);
  ~TracingSession();
  TracingSession(const TracingSession&) = delete;
  TracingSession& operator=(const TracingSession&) = delete;

  // The config, once, before the start. |output_fd| (not owned; the
  // service gets a duplicate): a regular file open for writing the trace
  // goes to; -1: an anonymous file of the session's (ReadTraceBlocking).
  // The config is checked here first; the service checks it again.
  base::Status Setup(const perfetto::protos::TraceConfig& config,
                     int output_fd = -1);
  // The same from Perfetto's text format (as `ringtrace --txt -c FILE`):
  // an unknown field, a bad value or a syntax error is an error naming its
  // line, column and field path.
  base::Status SetupFromText(const std::string& text, int output_fd = -1);

  // Starts the session: once this returns, the service has told every
  // connected producer's matching data source to start (and, with
  // TracingSessionOptions::wait_for_data_source_start, they have started).
  base::Status StartBlocking();
  // What the service said the session will not record as asked.
  std::vector<std::string> start_warnings() const;
  // Asks every producer of the session to flush, waits for their acks
  // (|timeout_ms|; 0: the config's flush_timeout_ms) and the drain.
  base::Status FlushBlocking(uint32_t timeout_ms = 0);
  // Stops the session and waits until its trace is written. A session the
  // service already ended is not an error: the summary says how it ended.
  base::Status StopBlocking();
  // Waits at most |timeout_ms| for the session to end on its own
  // (duration_ms); |*ended| says whether it did.
  base::Status WaitForEndBlocking(int timeout_ms, bool* ended);
  // The trace file's bytes, once the session ended. Only for a session
  // set up without an output_fd.
  base::Status ReadTraceBlocking(std::string* trace);
  // The session's TraceStats now: a serialized perfetto.protos.TraceStats.
  base::Status GetTraceStatsBlocking(std::string* trace_stats);
  // A snapshot of the session written into |fd| (a regular file) while it
  // goes on: a complete trace of its own.
  base::Status CloneBlocking(int fd);

  // Callback forms (see the file comment).
  void Start(DoneCallback done);
  void Flush(uint32_t timeout_ms, DoneCallback done);
  void Stop(DoneCallback done);
  // Called once when the session ended (set before the start).
  void SetOnStopCallback(std::function<void()> on_stop);

  // After the end: the service's summary.
  TracingSessionSummary summary() const;
  bool started() const;
  bool ended() const;

 private:
  class Impl;
  explicit TracingSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_TRACING_SESSION_H_
