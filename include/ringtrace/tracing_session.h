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
// 100 ms while the session runs), or the caller of the blocking call that
// saw it (StopBlocking(), WaitForEndBlocking(), any call whose round trip
// read the end or found the connection broken). A callback must not
// destroy the TracingSession; it may call the blocking methods.
//
// Thread model: any thread may call any method; calls are serialized
// (Abort() excepted: it never waits). The destructor waits for the
// callbacks in progress, then stops a session still running (its trace is
// written); a detached one goes on.
//
// For tools (the `ringtrace` CLI is built on this class): session_id(),
// the service's state (QueryServiceStateBlocking: producers, their data
// sources and declared categories, sessions, buffers), detached sessions
// (DetachBlocking, AttachBlocking, IsDetachedBlocking: Perfetto's Detach
// and Attach) and Abort(). A broken connection ends the session as far as
// this object can tell (the service frees the session of a consumer that
// is gone): ended() is true, summary().connection_lost says why, and the
// on-stop callback is called.

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
namespace protos {
class ServiceState;  // protos/ringtrace/ipc/consumer_port.proto
}  // namespace protos

struct TracingSessionOptions {
  // The service's consumer socket; empty: the default path (docs/
  // sessions.md, "Sockets and who may use them").
  std::string consumer_socket_path;
  // The longest wait of one call (connecting included), > 0.
  int timeout_ms = 30000;

  // StopBlocking()'s longest wait (the data sources' stop acks, then the
  // whole trace written: a large trace takes a while); 0: timeout_ms.
  int stop_timeout_ms = 0;

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

  // Set when the session ended without a complete trace: the service's
  // error (it could not write the trace), or why the connection to the
  // service broke (then |connection_lost|). Empty: the trace is whole.
  std::string error;
  bool connection_lost = false;
  // A compressed trace (TraceConfig.compression_type): the packet bytes
  // before compression and the service's CPU time compressing them.
  bool compressed = false;
  uint64_t uncompressed_bytes = 0;
  uint64_t compression_cpu_ns = 0;
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
  // set up without an output_fd, and one that has a whole trace
  // (summary().error empty).
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

  // ---- For tools: the session's id, the service's state, detached
  // sessions, abort (see the file comment). ----

  // The service's id of the session (what `ringtrace --query` lists and
  // `ringtrace --clone` takes); 0 before the start or the attach.
  uint64_t session_id() const;
  // The service's state now: the producers connected (name, pid, uid, data
  // sources, the categories those declared), this user's sessions (root:
  // every user's) with their buffers' fill, the service's limits. Needs no
  // Setup(). Its strings come from other processes: replace control bytes
  // before showing them on a terminal.
  base::Status QueryServiceStateBlocking(protos::ServiceState* state);
  // Leaves the running session to the service under |key| (1..64 of
  // [A-Za-z0-9._-], unique among this user's detached sessions): it goes on
  // into the output_fd given to Setup() after this object is gone, until
  // its duration or an AttachBlocking() owner stops it. This object has no
  // session any more (its calls say so). A session set up without an
  // output_fd cannot be detached (its trace would have no reader).
  base::Status DetachBlocking(const std::string& key);
  // Instead of Setup() and StartBlocking(): becomes the owner of this
  // user's session detached under |key|, as if this object had started it.
  // Its trace goes to the file of the detacher (ReadTraceBlocking() does
  // not apply). If it ended while detached, its end follows at once
  // (ended(), the on-stop callback, WaitForEndBlocking()).
  base::Status AttachBlocking(const std::string& key);
  // Whether this user has a session detached under |key|; nothing changes.
  base::Status IsDetachedBlocking(const std::string& key, bool* detached);
  // Shuts the connection down now, from any thread, also while another
  // thread waits in a call (it returns an error at once): the service frees
  // this connection's session without writing its trace. The session then
  // ends as one whose connection broke, once this object sees it (at the
  // next call, or within 0.1 s on its own thread); every later call fails.
  void Abort();

 private:
  class Impl;
  explicit TracingSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_TRACING_SESSION_H_
