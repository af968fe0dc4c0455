/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// What `ringtrace` does once its command line is read: the tracing session
// from the start to the renamed output file, and the one-shot commands
// (--query, --clone, --stop, --attach, --is_detached). main() connects, sets
// up the stop signals and calls one of these.
//
// Sessions, --query and the detached sessions go through the public
// consumer API, ringtrace::TracingSession (include/ringtrace/
// tracing_session.h), as any app's would. --clone and --stop act on a
// session of another process by its id, which the public API does not
// offer (a TracingSession acts on its own session): they use the internal
// ConsumerClient beneath it.
//
// The session (RunTraceSession):
//   1. Setup() with the config and the fd of OUT's unnamed file, or of the
//      spool of -o - (output_file.h); StartBlocking().
//   2. Waits for the first of: the session's end as the TracingSession
//      reports it (its on-stop callback: the service ended it, by
//      duration_ms, max_file_size_bytes or a write error, or the
//      connection broke), a stop request on |signal_fd| (SIGINT, SIGTERM,
//      SIGHUP), or a deadline (duration_ms plus the stop timeout plus a
//      minute) past which the service should have ended the session and
//      ringtrace stops it itself. Meanwhile, when asked, a progress line on
//      |err| once a second (QueryServiceStateBlocking), and on each SIGUSR1
//      a snapshot of the session (CloneBlocking) into OUT.snapshot-N
//      (N = 1, 2, ...), written like OUT (output_file.h; a symbolic link
//      there is always refused); the session goes on. With -o - a snapshot
//      is refused (reported).
//   3. On a stop request or the deadline: StopBlocking(), on a second
//      thread, so that the main thread still watches |signal_fd|: a second
//      stop request aborts (TracingSession::Abort(): the service frees the
//      session without writing it, the file is discarded).
//   4. Only when the session ended with a whole trace is the file committed
//      onto OUT (or copied to stdout). Any failure leaves a previous OUT
//      untouched and writes nothing to stdout; a session without a trace is
//      aborted, never left to the TracingSession's destructor to stop.
//
// |signal_fd| delivers one signalfd_siginfo record per signal (a signalfd;
// tests write such records into a pipe): SIGUSR1 asks for a snapshot, any
// other signal to stop. An fd that fails or reaches its end is no longer
// watched.
//
// Thread model: everything runs on the caller's thread except the one
// StopBlocking() call, which runs on a thread of its own while the caller
// only watches |signal_fd| and may call Abort(), and the TracingSession's
// on-stop callback (its own thread: it writes to a pipe the caller polls).

#ifndef SRC_TOOLS_RINGTRACE_CLI_TRACE_SESSION_H_
#define SRC_TOOLS_RINGTRACE_CLI_TRACE_SESSION_H_

#include <stdint.h>
#include <stdio.h>

#include <string>

#include "protos/perfetto/config/trace_config.pb.h"
#include "ringtrace/status.h"
#include "ringtrace/tracing_session.h"
#include "src/tools/ringtrace_cli/output_file.h"
#include "src/tracing/consumer/consumer_client.h"

namespace ringtrace {
namespace cli {

struct TraceSessionOptions {
  // A progress line every |progress_period_ms| (only meant for a terminal).
  bool show_progress = false;
  uint32_t progress_period_ms = 1000;
  // Extra time the stop may take beyond the data sources' stop timeout: the
  // service drains and writes the whole trace first.
  uint32_t disable_slack_ms = 5 * 60 * 1000;
  // How long after duration_ms (plus the stop timeout) ringtrace waits for
  // tracing_ended before it stops the session itself.
  uint32_t end_grace_ms = 60 * 1000;
  // A session that recorded no producer packet is always reported; with
  // this, it also makes the exit status kExitEmpty.
  bool fail_on_empty = false;
  // --no-clobber: the SIGUSR1 snapshots replace nothing either.
  bool no_clobber = false;
};

// The TracingSession options of a command: the socket (empty: the default
// path), the timeout of one call, and the stop's wait: the config's data
// source stop timeout plus options.disable_slack_ms.
TracingSessionOptions CliSessionOptions(
    const std::string& consumer_socket,
    const perfetto::protos::TraceConfig& config,
    const TraceSessionOptions& options);

// Runs the session described above on |session| (connected, not set up);
// returns the exit code (kExitOk, kExitFailure, or kExitEmpty under
// fail_on_empty) after printing what happened on |err|: the service's start
// warnings (a data source no producer provides, ...), progress, and the
// summary. |file| is committed or discarded.
int RunTraceSession(TracingSession* session,
                    const perfetto::protos::TraceConfig& config,
                    TraceOutput* file,
                    int signal_fd,
                    const TraceSessionOptions& options,
                    FILE* err);

// --clone: a snapshot of |session_id| into |file|, committed on success.
int RunClone(consumer::ConsumerClient* client,
             uint64_t session_id,
             TraceOutput* file,
             FILE* err);

// --query: the service's state as tables on |out|.
int RunQuery(TracingSession* session, FILE* out, FILE* err);

// --stop: DisableTracing of |session_id|, which any connection of the
// user that started it (or root) may send; waits until the trace is written
// (into the file of the ringtrace that started it, which gets
// tracing_ended) and prints the summary.
int RunStop(consumer::ConsumerClient* client, uint64_t session_id, FILE* err);

// --detach KEY: RunTraceSession's start, then the session is detached under
// |key| and |file| put in place (the service writes the trace into it).
int RunDetachedSession(TracingSession* session,
                       const perfetto::protos::TraceConfig& config,
                       const std::string& key,
                       TraceOutput* file,
                       FILE* err);
// --attach KEY [--stop]: owns the session detached under |key|, stops it
// now if |stop|, waits for its end (Ctrl-C stops it, as for a trace
// command) and reports it; kExitEmpty with options.fail_on_empty as there.
int RunAttach(TracingSession* session,
              const std::string& key,
              bool stop,
              int signal_fd,
              const TraceSessionOptions& options,
              FILE* err);
// --is_detached KEY: kExitOk, kExitNotDetached, or kExitFailure.
int RunIsDetached(TracingSession* session, const std::string& key, FILE* err);

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_TRACE_SESSION_H_
