/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/trace_session.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "src/base/scoped_fd.h"
#include "src/base/time.h"
#include "src/tools/ringtrace_cli/cli_options.h"
#include "src/tools/ringtrace_cli/output_file.h"
#include "src/tools/ringtrace_cli/service_state_format.h"

namespace ringtrace {
namespace cli {

ConsumerConnection::~ConsumerConnection() = default;

namespace {

using perfetto::protos::TraceConfig;
using ringtrace::protos::ConsumerResponse;
using ringtrace::protos::ServiceState;
using ringtrace::protos::SessionSummary;

constexpr uint32_t kDefaultDataSourceStopTimeoutMs = 5000;

// Messages on stderr, and the progress line that they replace.
class Reporter {
 public:
  explicit Reporter(FILE* err) : err_(err) {}

  void Print(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    ClearProgress();
    fputs("ringtrace: ", err_);
    va_list args;
    va_start(args, fmt);
    vfprintf(err_, fmt, args);
    va_end(args);
    fputc('\n', err_);
    fflush(err_);
  }

  // Overwrites the current line (a terminal is assumed).
  void Progress(const std::string& line) {
    fprintf(err_, "\r\033[K%s", line.c_str());
    fflush(err_);
    progress_shown_ = true;
  }

  void ClearProgress() {
    if (!progress_shown_)
      return;
    fputs("\r\033[K", err_);
    progress_shown_ = false;
  }

 private:
  FILE* const err_;
  bool progress_shown_ = false;
};

// Reads the signal records of |fd| (see the header); stops watching an fd
// that failed or reached its end, so that a broken one cannot spin a loop.
class SignalRecords {
 public:
  explicit SignalRecords(int fd) : fd_(fd) {}

  // The fd for poll(2); -1 (ignored by poll) once it failed.
  int fd() const { return fd_; }

  // Called when poll(2) reported |revents| for fd(): reads ONE record, so
  // that a second one stays pending for the next wait. Returns its signal
  // number, 0 if none was read.
  uint32_t Consume(short revents) {
    if (revents == 0 || fd_ < 0)
      return 0;
    signalfd_siginfo record = {};
    const ssize_t n = read(fd_, &record, sizeof(record));
    if (n == static_cast<ssize_t>(sizeof(record)))
      return record.ssi_signo != 0 ? record.ssi_signo : SIGTERM;
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      return 0;
    fd_ = -1;
    return 0;
  }

 private:
  int fd_;
};

// poll(2) on |fds| for at most |timeout_ms| (-1: no limit); EINTR is a
// timeout of zero.
int Poll(pollfd* fds, nfds_t count, int64_t timeout_ms) {
  for (nfds_t i = 0; i < count; i++)
    fds[i].revents = 0;
  const int timeout =
      timeout_ms < 0
          ? -1
          : static_cast<int>(std::min<int64_t>(timeout_ms, 24 * 3600 * 1000));
  const int r = poll(fds, count, timeout);
  return r < 0 && errno == EINTR ? 0 : r;
}

enum class EndReason {
  kServiceEnded,  // tracing_ended
  kStopRequest,   // Ctrl-C, SIGTERM
  kDeadline,      // the service did not end it in time
  kConnectionLost,
};

struct WaitResult {
  EndReason reason = EndReason::kConnectionLost;
  ConsumerResponse event;  // kServiceEnded
  base::Status status;     // kConnectionLost
};

// True and |*event| set if a tracing_ended event for |session_id| is
// pending. A failed connection sets |*status|.
bool TakeTracingEnded(ConsumerConnection* connection,
                      uint64_t session_id,
                      ConsumerResponse* event,
                      base::Status* status) {
  ConsumerResponse candidate;
  while (connection->TakeEvent(&candidate, status)) {
    if (!candidate.tracing_ended())
      continue;
    if (candidate.has_session_id() && candidate.session_id() != session_id)
      continue;
    *event = candidate;
    return true;
  }
  return false;
}

uint32_t StopTimeoutMs(const TraceConfig& config) {
  return config.data_source_stop_timeout_ms() != 0
             ? config.data_source_stop_timeout_ms()
             : kDefaultDataSourceStopTimeoutMs;
}

// SIGUSR1: a snapshot of the session into OUT.snapshot-N, written like OUT
// (never through a symbolic link). A failure is reported; the session goes
// on.
// With -o - there is no OUT to name it after: the snapshot is refused (the
// trace on stdout is one trace, not several one after the other).
// |out| null: an attached session, whose file is the one its --detach gave.
void WriteSnapshot(ConsumerConnection* connection,
                   uint64_t session_id,
                   const TraceOutput* out,
                   uint32_t number,
                   bool no_clobber,
                   Reporter* reporter) {
  if (!out) {
    reporter->Print(
        "snapshot %u not written: an attached session has no FILE of this "
        "command; `ringtrace --clone %" PRIu64 " -o FILE` writes one",
        number, session_id);
    return;
  }
  if (out->to_stdout()) {
    reporter->Print(
        "snapshot %u not written: the trace goes to stdout (-o -), so there "
        "is no FILE.snapshot-N; `ringtrace --clone %" PRIu64
        " -o FILE` writes one",
        number, session_id);
    return;
  }
  const std::string path = out->path() + ".snapshot-" + std::to_string(number);
  std::unique_ptr<base::PendingFile> file;
  base::Status status =
      CreateOutputFile(path, /*follow_symlink=*/false, &file, no_clobber);
  if (status.ok())
    status = connection->CloneSession(session_id, file->fd());
  uint64_t bytes = 0;
  if (status.ok())
    status = file->Size(&bytes);
  if (status.ok())
    status = file->Commit();
  if (!status.ok()) {
    reporter->Print("snapshot %u failed: %s", number, status.message().c_str());
    return;
  }
  reporter->Print("wrote snapshot %s: %s", path.c_str(),
                  FormatBytes(bytes).c_str());
}

// Takes pending events: true with |*result| set when the session ended
// (tracing_ended) or the connection failed. |revents|: what poll(2) said of
// event_fd (a hang-up without an error from the connection is a failure
// too).
bool CheckEvents(ConsumerConnection* connection,
                 uint64_t session_id,
                 short revents,
                 WaitResult* result) {
  base::Status status;
  if (TakeTracingEnded(connection, session_id, &result->event, &status)) {
    result->reason = EndReason::kServiceEnded;
    return true;
  }
  if (status.ok() && (revents & (POLLHUP | POLLERR | POLLNVAL)))
    status = base::ErrStatus("the service closed the connection");
  if (status.ok())
    return false;
  result->reason = EndReason::kConnectionLost;
  result->status = status;
  return true;
}

// Step 2 of the header: waits until the session should end.
WaitResult WaitForEnd(ConsumerConnection* connection,
                      const TraceConfig& config,
                      uint64_t session_id,
                      const TraceOutput* out,
                      SignalRecords* signals,
                      const TraceSessionOptions& options,
                      Reporter* reporter) {
  const uint64_t start_ms = base::MonotonicMs();
  const bool has_deadline = config.duration_ms() != 0;
  const uint64_t deadline_ms = start_ms + config.duration_ms() +
                               StopTimeoutMs(config) + options.end_grace_ms;
  uint64_t next_progress_ms = start_ms + options.progress_period_ms;
  uint32_t snapshots = 0;
  WaitResult result;
  for (;;) {
    const uint64_t now = base::MonotonicMs();
    int64_t timeout = -1;
    if (has_deadline)
      timeout = deadline_ms > now ? static_cast<int64_t>(deadline_ms - now) : 0;
    if (options.show_progress) {
      const int64_t to_progress =
          next_progress_ms > now ? static_cast<int64_t>(next_progress_ms - now)
                                 : 0;
      timeout = timeout < 0 ? to_progress : std::min(timeout, to_progress);
    }
    pollfd fds[2] = {{signals->fd(), POLLIN, 0},
                     {connection->event_fd(), POLLIN, 0}};
    Poll(fds, 2, timeout);
    const uint32_t signo = signals->Consume(fds[0].revents);
    if (signo == SIGUSR1) {
      WriteSnapshot(connection, session_id, out, ++snapshots,
                    options.no_clobber, reporter);
      // The clone's round trip may have read the session's end from the
      // socket: it waits in the connection, and event_fd shows nothing.
      if (CheckEvents(connection, session_id, 0, &result))
        return result;
    } else if (signo != 0) {
      result.reason = EndReason::kStopRequest;
      return result;
    }
    if (fds[1].revents != 0 &&
        CheckEvents(connection, session_id, fds[1].revents, &result)) {
      return result;
    }
    const uint64_t after = base::MonotonicMs();
    if (has_deadline && after >= deadline_ms) {
      result.reason = EndReason::kDeadline;
      return result;
    }
    if (options.show_progress && after >= next_progress_ms) {
      next_progress_ms = after + options.progress_period_ms;
      ServiceState state;
      base::Status status = connection->QueryServiceState(&state);
      // Whether or not the query worked, its round trip may have read an
      // event (the session's end, when the duration is a whole number of
      // progress periods) from the socket: it waits in the connection now,
      // and event_fd shows nothing. Take it before anything else.
      if (CheckEvents(connection, session_id, 0, &result))
        return result;
      if (status.ok())
        reporter->Progress(FormatProgressLine(state, session_id));
      // Else a failed query is not the session's failure.
    }
  }
}

struct DisableResult {
  bool completed = false;  // false: aborted by a second stop request
  base::Status status;
  SessionSummary summary;
};

// Step 3: DisableTracing on its own thread while the stop requests are
// watched.
DisableResult StopSession(ConsumerConnection* connection,
                          uint64_t session_id,
                          uint32_t timeout_ms,
                          SignalRecords* signals) {
  DisableResult result;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    // No way to watch both: stop without the abort path.
    result.completed = true;
    result.status =
        connection->DisableTracing(session_id, timeout_ms, &result.summary);
    return result;
  }
  base::ScopedFd done_read(pipe_fds[0]);
  base::ScopedFd done_write(pipe_fds[1]);
  base::Status status;
  SessionSummary summary;
  std::thread worker([&] {
    status = connection->DisableTracing(session_id, timeout_ms, &summary);
    // Wakes the poll below; join() publishes |status| and |summary|.
    const char byte = 1;
    ssize_t ignored = write(done_write.get(), &byte, 1);
    (void)ignored;
  });
  for (;;) {
    pollfd fds[2] = {{done_read.get(), POLLIN, 0}, {signals->fd(), POLLIN, 0}};
    Poll(fds, 2, -1);
    if (fds[0].revents != 0)
      break;
    const uint32_t signo = signals->Consume(fds[1].revents);
    if (signo != 0 && signo != SIGUSR1) {
      connection->Abort();
      worker.join();
      return result;  // completed = false
    }
  }
  worker.join();
  result.completed = true;
  result.status = status;
  result.summary = summary;
  return result;
}

void PrintSummary(Reporter* reporter,
                  const std::string& out_name,
                  uint64_t file_bytes,
                  const SessionSummary& summary) {
  reporter->Print("wrote %s: %s, %" PRIu64 " packets in %s", out_name.c_str(),
                  FormatBytes(file_bytes).c_str(), summary.packets_written(),
                  FormatDurationMs(summary.duration_ms()).c_str());
  if (summary.has_uncompressed_bytes()) {
    const uint64_t ms = summary.compression_cpu_ns() / 1000000;
    reporter->Print(
        "compressed (deflate): %s of packets, %.1fx smaller, %" PRIu64
        " ms of the service's CPU",
        FormatBytes(summary.uncompressed_bytes()).c_str(),
        file_bytes ? static_cast<double>(summary.uncompressed_bytes()) /
                         static_cast<double>(file_bytes)
                   : 0.0,
        ms);
  }
  if (summary.packets_lost() != 0) {
    reporter->Print("warning: %" PRIu64
                    " packets were lost (the trace's TraceStats says where)",
                    summary.packets_lost());
  }
}

// "track_event, linux.ftrace": the config's data source names, for the
// empty-session message.
std::string DataSourceNames(const TraceConfig& config) {
  std::string names;
  for (const auto& ds : config.data_sources()) {
    if (!names.empty())
      names += ", ";
    names += ds.config().name();
  }
  return names.empty() ? "none" : names;
}

// Step 4.
int Finish(TraceOutput* file,
           const TraceConfig& config,
           const SessionSummary& summary,
           const TraceSessionOptions& options,
           Reporter* reporter) {
  uint64_t bytes = 0;
  base::Status size = file->Size(&bytes);
  if (!size.ok())
    bytes = summary.bytes_written();
  base::Status status = file->Commit();
  if (!status.ok()) {
    reporter->Print("%s", status.message().c_str());
    return kExitFailure;
  }
  PrintSummary(reporter, file->name(), bytes, summary);
  if (summary.packets_written() == 0) {
    reporter->Print(
        "warning: the session recorded no packet from any producer (data "
        "sources: %s); `ringtrace --query` lists the connected producers and "
        "what they provide",
        DataSourceNames(config).c_str());
    if (options.fail_on_empty)
      return kExitEmpty;
  }
  return kExitOk;
}

// Step 1: EnableTracing into |file|, then the start line (|announce|) and
// the service's warnings. False (|file| discarded, reported) if refused.
bool StartSession(ConsumerConnection* connection,
                  const TraceConfig& config,
                  TraceOutput* file,
                  bool announce,
                  Reporter* reporter,
                  uint64_t* session_id) {
  std::vector<std::string> warnings;
  base::Status status =
      connection->EnableTracing(config, file->fd(), session_id, &warnings);
  if (!status.ok()) {
    file->Discard();
    reporter->Print("the service refused the session: %s",
                    status.message().c_str());
    return false;
  }
  if (announce && config.duration_ms() != 0) {
    reporter->Print("session %" PRIu64 " tracing for %s (Ctrl-C stops early)",
                    *session_id,
                    FormatDurationMs(config.duration_ms()).c_str());
  } else if (announce) {
    reporter->Print("session %" PRIu64 " tracing until Ctrl-C", *session_id);
  }
  for (const std::string& warning : warnings)
    reporter->Print("warning: %s", warning.c_str());
  return true;
}

// Steps 2 and 3: waits for the session's end (or a stop request, which
// stops it; |stop_now|: stops it at once) and gets its summary. False, with
// the reason printed, when there is no trace: the connection was lost, the
// stop was aborted or failed, or the session failed.
bool AwaitSummary(ConsumerConnection* connection,
                  const TraceConfig& config,
                  uint64_t session_id,
                  const TraceOutput* out,
                  SignalRecords* signals,
                  const TraceSessionOptions& options,
                  bool stop_now,
                  Reporter* reporter,
                  SessionSummary* summary) {
  WaitResult wait;
  if (stop_now) {
    // The end may be queued already (it ended while detached).
    base::Status status;
    if (TakeTracingEnded(connection, session_id, &wait.event, &status))
      wait.reason = EndReason::kServiceEnded;
    else if (!status.ok())
      wait.status = status;  // kConnectionLost
    else
      wait.reason = EndReason::kStopRequest;
  } else {
    wait = WaitForEnd(connection, config, session_id, out, signals, options,
                      reporter);
  }
  switch (wait.reason) {
    case EndReason::kConnectionLost:
      reporter->Print("lost the connection to the service: %s",
                      wait.status.message().c_str());
      return false;
    case EndReason::kServiceEnded:
      break;
    case EndReason::kDeadline:
      reporter->Print("the service did not end session %" PRIu64
                      " after its duration; stopping it",
                      session_id);
      [[fallthrough]];
    case EndReason::kStopRequest: {
      if (wait.reason == EndReason::kStopRequest)
        reporter->Print("stopping (Ctrl-C again to abort)");
      const uint32_t timeout_ms =
          StopTimeoutMs(config) + options.disable_slack_ms;
      DisableResult disabled =
          StopSession(connection, session_id, timeout_ms, signals);
      if (!disabled.completed) {
        reporter->Print("aborted: no trace written");
        return false;
      }
      if (disabled.status.ok()) {
        *summary = disabled.summary;
        break;
      }
      // The service may have ended the session just before the request.
      base::Status ignored;
      if (TakeTracingEnded(connection, session_id, &wait.event, &ignored)) {
        wait.reason = EndReason::kServiceEnded;
        break;
      }
      reporter->Print("stopping the session failed: %s",
                      disabled.status.message().c_str());
      return false;
    }
  }
  if (wait.reason == EndReason::kServiceEnded) {
    if (wait.event.has_ok() && !wait.event.ok()) {
      reporter->Print("the session failed: %s", wait.event.error().c_str());
      return false;
    }
    if (!wait.event.error().empty())
      reporter->Print("session ended: %s", wait.event.error().c_str());
    *summary = wait.event.summary();
  }
  return true;
}

}  // namespace

int RunTraceSession(ConsumerConnection* connection,
                    const TraceConfig& config,
                    TraceOutput* file,
                    int signal_fd,
                    const TraceSessionOptions& options,
                    FILE* err) {
  Reporter reporter(err);
  uint64_t session_id = 0;
  if (!StartSession(connection, config, file, /*announce=*/true, &reporter,
                    &session_id)) {
    return kExitFailure;
  }

  SignalRecords signals(signal_fd);
  SessionSummary summary;
  if (!AwaitSummary(connection, config, session_id, file, &signals, options,
                    /*stop_now=*/false, &reporter, &summary)) {
    file->Discard();
    return kExitFailure;
  }
  return Finish(file, config, summary, options, &reporter);
}

int RunClone(ConsumerConnection* connection,
             uint64_t session_id,
             TraceOutput* file,
             FILE* err) {
  Reporter reporter(err);
  base::Status status = connection->CloneSession(session_id, file->fd());
  if (!status.ok()) {
    file->Discard();
    reporter.Print("cloning session %" PRIu64 " failed: %s", session_id,
                   status.message().c_str());
    return kExitFailure;
  }
  uint64_t bytes = 0;
  base::Status size = file->Size(&bytes);
  status = file->Commit();
  if (!status.ok()) {
    reporter.Print("%s", status.message().c_str());
    return kExitFailure;
  }
  if (size.ok()) {
    reporter.Print("wrote a snapshot of session %" PRIu64 " to %s: %s",
                   session_id, file->name().c_str(),
                   FormatBytes(bytes).c_str());
  }
  return kExitOk;
}

int RunQuery(ConsumerConnection* connection, FILE* out, FILE* err) {
  ServiceState state;
  base::Status status = connection->QueryServiceState(&state);
  if (!status.ok()) {
    Reporter(err).Print("query failed: %s", status.message().c_str());
    return kExitFailure;
  }
  fputs(FormatServiceState(state).c_str(), out);
  fflush(out);
  return ferror(out) ? kExitFailure : kExitOk;
}

int RunStop(ConsumerConnection* connection, uint64_t session_id, FILE* err) {
  Reporter reporter(err);
  SessionSummary summary;
  base::Status status = connection->DisableTracing(
      session_id, kDefaultDataSourceStopTimeoutMs + 5 * 60 * 1000, &summary);
  if (!status.ok()) {
    reporter.Print("stopping session %" PRIu64 " failed: %s", session_id,
                   status.message().c_str());
    return kExitFailure;
  }
  reporter.Print("stopped session %" PRIu64 ": %" PRIu64 " packets, %" PRIu64
                 " lost",
                 session_id, summary.packets_written(), summary.packets_lost());
  return kExitOk;
}

int RunDetachedSession(ConsumerConnection* connection,
                       const TraceConfig& config,
                       const std::string& key,
                       TraceOutput* file,
                       FILE* err) {
  Reporter reporter(err);
  uint64_t session_id = 0;
  if (!StartSession(connection, config, file, /*announce=*/false, &reporter,
                    &session_id)) {
    return kExitFailure;
  }
  base::Status status = connection->Detach(session_id, key);
  if (!status.ok()) {
    // Still ours: this connection's close frees it, unwritten.
    file->Discard();
    reporter.Print("detaching session %" PRIu64 " failed: %s; it is freed",
                   session_id, status.message().c_str());
    return kExitFailure;
  }
  // In place now: the service keeps writing into it after this exits.
  status = file->Commit();
  if (!status.ok()) {
    reporter.Print("%s; session %" PRIu64
                   " goes on detached, `ringtrace --attach %s --stop` ends it",
                   status.message().c_str(), session_id, key.c_str());
    return kExitFailure;
  }
  reporter.Print("session %" PRIu64
                 " detached as %s, tracing into %s (whole once it ended); "
                 "`ringtrace --attach %s` waits for its end, `--attach %s "
                 "--stop` ends it",
                 session_id, key.c_str(), file->name().c_str(), key.c_str(),
                 key.c_str());
  return kExitOk;
}

int RunAttach(ConsumerConnection* connection,
              const std::string& key,
              bool stop,
              int signal_fd,
              const TraceSessionOptions& options,
              FILE* err) {
  Reporter reporter(err);
  uint64_t session_id = 0;
  base::Status status = connection->Attach(key, /*probe=*/false, &session_id);
  if (!status.ok()) {
    reporter.Print("attaching to %s failed: %s", key.c_str(),
                   status.message().c_str());
    return kExitFailure;
  }
  reporter.Print("attached to session %" PRIu64 " (%s)%s", session_id,
                 key.c_str(), stop ? "" : "; Ctrl-C stops it");
  SignalRecords signals(signal_fd);
  SessionSummary summary;
  // No config here: the session's duration is the service's to keep.
  if (!AwaitSummary(connection, TraceConfig(), session_id, nullptr, &signals,
                    options, stop, &reporter, &summary)) {
    return kExitFailure;
  }
  reporter.Print("session %" PRIu64 " ended: %" PRIu64
                 " packets (%s) in %s, "
                 "in the file its --detach named",
                 session_id, summary.packets_written(),
                 FormatBytes(summary.bytes_written()).c_str(),
                 FormatDurationMs(summary.duration_ms()).c_str());
  if (summary.packets_lost() != 0) {
    reporter.Print("warning: %" PRIu64
                   " packets were lost (the trace's TraceStats says where)",
                   summary.packets_lost());
  }
  if (summary.packets_written() == 0) {
    reporter.Print(
        "warning: the session recorded no packet from any producer; "
        "`ringtrace --query` lists the connected producers and what they "
        "provide");
    if (options.fail_on_empty)
      return kExitEmpty;
  }
  return kExitOk;
}

int RunIsDetached(ConsumerConnection* connection,
                  const std::string& key,
                  FILE* err) {
  uint64_t session_id = 0;
  base::Status status = connection->Attach(key, /*probe=*/true, &session_id);
  if (status.ok())
    return kExitOk;
  // The service answers an unknown key with this error; anything else
  // (no service, a broken connection) is a failure.
  if (status.message().find("no detached session") != std::string::npos)
    return kExitNotDetached;
  Reporter(err).Print("%s", status.message().c_str());
  return kExitFailure;
}

}  // namespace cli
}  // namespace ringtrace
