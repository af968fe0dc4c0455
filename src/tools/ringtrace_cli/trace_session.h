/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// What `ringtrace` does once its command line is read: the tracing session
// from EnableTracing to the renamed output file, and the one-shot commands
// (--query, --clone, --stop). main() connects, sets up the stop signals and
// calls one of these.
//
// The session (RunTraceSession):
//   1. EnableTracing with the config and the fd of OUT's unnamed file, or
//      of the spool of -o - (output_file.h).
//   2. Waits for the first of: the service's tracing_ended event (it ended
//      the session: duration_ms, max_file_size_bytes, a write error), a stop
//      request on |signal_fd| (SIGINT, SIGTERM, SIGHUP), the connection
//      failing, or a
//      deadline (duration_ms plus the stop timeout plus a minute) past which
//      the service should have ended the session and ringtrace stops it
//      itself. Meanwhile, when asked, a progress line on |err| once a
//      second (QueryServiceState), and on each SIGUSR1 a snapshot of the
//      session (CloneSession) into OUT.snapshot-N (N = 1, 2, ...), written
//      like OUT (output_file.h; a symbolic link there is always refused);
//      the session goes on. With -o - a snapshot is refused (reported).
//   3. On a stop request or the deadline: DisableTracing, on a second
//      thread, so that the main thread still watches |signal_fd|: a second
//      stop request aborts (the connection is shut down, the service frees the
//      session without writing it, the file is discarded).
//   4. Only when the service reported the trace complete and successful is
//      the file committed onto OUT (or copied to stdout). Any failure
//      leaves a previous OUT untouched and writes nothing to stdout.
//
// |signal_fd| delivers one signalfd_siginfo record per signal (a signalfd;
// tests write such records into a pipe): SIGUSR1 asks for a snapshot, any
// other signal to stop. An fd that fails or reaches its end is no longer
// watched.
//
// Thread model: everything runs on the caller's thread except the one
// DisableTracing call, which runs on a thread of its own while the caller
// only watches |signal_fd| and may call Abort().

#ifndef SRC_TOOLS_RINGTRACE_CLI_TRACE_SESSION_H_
#define SRC_TOOLS_RINGTRACE_CLI_TRACE_SESSION_H_

#include <stdint.h>
#include <stdio.h>

#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "ringtrace/status.h"
#include "src/tools/ringtrace_cli/output_file.h"

namespace ringtrace {
namespace cli {

// The consumer connection as the CLI uses it. The production implementation
// forwards to ConsumerClient (consumer_connection.h); tests use a fake.
class ConsumerConnection {
 public:
  virtual ~ConsumerConnection();

  virtual base::Status EnableTracing(
      const perfetto::protos::TraceConfig& config,
      int out_fd,
      uint64_t* session_id,
      std::vector<std::string>* warnings) = 0;
  // Blocks until the trace is written (or |timeout_ms|). May run on another
  // thread than the other calls, but never at the same time as one.
  virtual base::Status DisableTracing(
      uint64_t session_id,
      uint32_t timeout_ms,
      ringtrace::protos::SessionSummary* summary) = 0;
  virtual base::Status CloneSession(uint64_t session_id, int out_fd) = 0;
  // Detached sessions (docs/sessions.md, "Detached sessions").
  virtual base::Status Detach(uint64_t session_id, const std::string& key) = 0;
  // A tracing_ended event may follow (TakeEvent) if the session ended while
  // detached.
  virtual base::Status Attach(const std::string& key,
                              bool probe,
                              uint64_t* session_id) = 0;
  virtual base::Status QueryServiceState(
      ringtrace::protos::ServiceState* state) = 0;

  // Readable when an event may be pending or the connection failed.
  virtual int event_fd() = 0;
  // Without blocking: true and |*event| set if the service sent an event
  // (a ConsumerResponse with tracing_ended); false if none is pending.
  // |*status| is an error once the connection failed.
  virtual bool TakeEvent(ringtrace::protos::ConsumerResponse* event,
                         base::Status* status) = 0;

  // Shuts the connection down from any thread: a blocked DisableTracing
  // returns (with an error) and the service sees the consumer hang up.
  virtual void Abort() = 0;
};

struct TraceSessionOptions {
  // A progress line every |progress_period_ms| (only meant for a terminal).
  bool show_progress = false;
  uint32_t progress_period_ms = 1000;
  // Extra time DisableTracing may take beyond the data sources' stop
  // timeout: the service drains and writes the whole trace first.
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

// Runs the session described above; returns the exit code (kExitOk,
// kExitFailure, or kExitEmpty under fail_on_empty) after printing what
// happened on |err|: the service's start warnings (a data source no
// producer provides, ...), progress, and the summary. |file| is committed
// or discarded.
int RunTraceSession(ConsumerConnection* connection,
                    const perfetto::protos::TraceConfig& config,
                    TraceOutput* file,
                    int signal_fd,
                    const TraceSessionOptions& options,
                    FILE* err);

// --clone: a snapshot of |session_id| into |file|, committed on success.
int RunClone(ConsumerConnection* connection,
             uint64_t session_id,
             TraceOutput* file,
             FILE* err);

// --query: the service's state as tables on |out|.
int RunQuery(ConsumerConnection* connection, FILE* out, FILE* err);

// --stop: DisableTracing of |session_id|, which any connection of the
// user that started it (or root) may send; waits until the trace is written
// (into the file of the ringtrace that started it, which gets
// tracing_ended) and prints the summary.
int RunStop(ConsumerConnection* connection, uint64_t session_id, FILE* err);

// --detach KEY: RunTraceSession's start, then the session is detached under
// |key| and |file| put in place (the service writes the trace into it).
int RunDetachedSession(ConsumerConnection* connection,
                       const perfetto::protos::TraceConfig& config,
                       const std::string& key,
                       TraceOutput* file,
                       FILE* err);
// --attach KEY [--stop]: owns the session detached under |key|, stops it
// now if |stop|, waits for its end (Ctrl-C stops it, as for a trace
// command) and reports it; kExitEmpty with options.fail_on_empty as there.
int RunAttach(ConsumerConnection* connection,
              const std::string& key,
              bool stop,
              int signal_fd,
              const TraceSessionOptions& options,
              FILE* err);
// --is_detached KEY: kExitOk, kExitNotDetached, or kExitFailure.
int RunIsDetached(ConsumerConnection* connection,
                  const std::string& key,
                  FILE* err);

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_TRACE_SESSION_H_
