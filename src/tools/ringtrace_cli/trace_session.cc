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
#include <climits>
#include <memory>
#include <thread>

#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "src/base/scoped_fd.h"
#include "src/base/time.h"
#include "src/tools/ringtrace_cli/cli_options.h"
#include "src/tools/ringtrace_cli/output_file.h"
#include "src/tools/ringtrace_cli/service_state_format.h"

namespace ringtrace {
namespace cli {

namespace {

using perfetto::protos::TraceConfig;
using ringtrace::protos::ServiceState;
using ringtrace::protos::SessionSummary;

constexpr uint32_t kDefaultDataSourceStopTimeoutMs = 5000;
// The longest wait of one call to the service (a start, a clone, a query):
// ConsumerClient's default.
constexpr int kCallTimeoutMs = consumer::ConsumerClient::kDefaultTimeoutMs;
// --stop's wait beyond the data sources' stop timeout.
constexpr uint32_t kStopSlackMs = 5 * 60 * 1000;

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

// A pipe whose read end becomes readable once a byte was written into it.
struct WakePipe {
  WakePipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
      read_end.reset(fds[0]);
      write_end.reset(fds[1]);
    }
  }
  void Wake() const {
    const char byte = 1;
    ssize_t ignored = write(write_end.get(), &byte, 1);
    (void)ignored;  // a full pipe is readable already
  }
  base::ScopedFd read_end;
  base::ScopedFd write_end;
};

// The session's end as a readable fd, for poll(2) beside |signal_fd|: the
// TracingSession's on-stop callback (on the session's own thread) wakes a
// pipe. The callback shares the pipe, so a late call (the session's
// destructor) never writes into a closed fd; the callback is removed when
// this goes.
class EndNotifier {
 public:
  explicit EndNotifier(TracingSession* session)
      : session_(session), pipe_(std::make_shared<WakePipe>()) {
    std::shared_ptr<const WakePipe> pipe = pipe_;
    session_->SetOnStopCallback([pipe] { pipe->Wake(); });
  }
  ~EndNotifier() { session_->SetOnStopCallback(nullptr); }
  EndNotifier(const EndNotifier&) = delete;
  EndNotifier& operator=(const EndNotifier&) = delete;

  bool ok() const { return pipe_->read_end.valid(); }
  int fd() const { return pipe_->read_end.get(); }

 private:
  TracingSession* const session_;
  const std::shared_ptr<WakePipe> pipe_;
};

enum class EndReason {
  kEnded,        // the TracingSession says so (the service, a broken link)
  kStopRequest,  // Ctrl-C, SIGTERM
  kDeadline,     // the service did not end it in time
};

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
void WriteSnapshot(TracingSession* session,
                   const TraceOutput* out,
                   uint32_t number,
                   bool no_clobber,
                   Reporter* reporter) {
  const uint64_t session_id = session->session_id();
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
    status = session->CloneBlocking(file->fd());
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

// Step 2 of the header: waits until the session should end. |end_fd|
// becomes readable once the session ended (EndNotifier); ended() is the
// truth, also after a call here that read the end from the socket.
EndReason WaitForEnd(TracingSession* session,
                     const TraceConfig& config,
                     const TraceOutput* out,
                     int end_fd,
                     SignalRecords* signals,
                     const TraceSessionOptions& options,
                     Reporter* reporter) {
  const uint64_t start_ms = base::MonotonicMs();
  const bool has_deadline = config.duration_ms() != 0;
  const uint64_t deadline_ms = start_ms + config.duration_ms() +
                               StopTimeoutMs(config) + options.end_grace_ms;
  uint64_t next_progress_ms = start_ms + options.progress_period_ms;
  uint32_t snapshots = 0;
  for (;;) {
    if (session->ended())
      return EndReason::kEnded;
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
    pollfd fds[2] = {{signals->fd(), POLLIN, 0}, {end_fd, POLLIN, 0}};
    Poll(fds, 2, timeout);
    const uint32_t signo = signals->Consume(fds[0].revents);
    if (signo == SIGUSR1) {
      WriteSnapshot(session, out, ++snapshots, options.no_clobber, reporter);
      continue;  // the clone may have seen the end: ended() says
    }
    if (signo != 0)
      return EndReason::kStopRequest;
    if (session->ended())
      return EndReason::kEnded;
    const uint64_t after = base::MonotonicMs();
    if (has_deadline && after >= deadline_ms)
      return EndReason::kDeadline;
    if (options.show_progress && after >= next_progress_ms) {
      next_progress_ms = after + options.progress_period_ms;
      ServiceState state;
      base::Status status = session->QueryServiceStateBlocking(&state);
      // The query's round trip may have read the session's end (when the
      // duration is a whole number of progress periods), or broken the
      // connection: that is the session's end, not a progress line.
      if (session->ended())
        return EndReason::kEnded;
      if (status.ok())
        reporter->Progress(FormatProgressLine(state, session->session_id()));
      // Else a failed query is not the session's failure.
    }
  }
}

// Step 3: StopBlocking() on its own thread while the stop requests are
// watched. False if a second stop request aborted it; else its status.
bool StopSession(TracingSession* session,
                 SignalRecords* signals,
                 base::Status* stop_status) {
  WakePipe done;
  if (!done.read_end.valid()) {
    // No way to watch both: stop without the abort path.
    *stop_status = session->StopBlocking();
    return true;
  }
  base::Status status;
  std::thread worker([&] {
    status = session->StopBlocking();
    done.Wake();  // join() publishes |status|
  });
  for (;;) {
    pollfd fds[2] = {{done.read_end.get(), POLLIN, 0},
                     {signals->fd(), POLLIN, 0}};
    Poll(fds, 2, -1);
    if (fds[0].revents != 0)
      break;
    const uint32_t signo = signals->Consume(fds[1].revents);
    if (signo != 0 && signo != SIGUSR1) {
      session->Abort();
      worker.join();
      return false;
    }
  }
  worker.join();
  *stop_status = status;
  return true;
}

void PrintSummary(Reporter* reporter,
                  const std::string& out_name,
                  uint64_t file_bytes,
                  const TracingSessionSummary& summary) {
  reporter->Print("wrote %s: %s, %" PRIu64 " packets in %s", out_name.c_str(),
                  FormatBytes(file_bytes).c_str(), summary.packets_written,
                  FormatDurationMs(summary.duration_ms).c_str());
  if (summary.compressed) {
    const uint64_t ms = summary.compression_cpu_ns / 1000000;
    reporter->Print(
        "compressed (deflate): %s of packets, %.1fx smaller, %" PRIu64
        " ms of the service's CPU",
        FormatBytes(summary.uncompressed_bytes).c_str(),
        file_bytes ? static_cast<double>(summary.uncompressed_bytes) /
                         static_cast<double>(file_bytes)
                   : 0.0,
        ms);
  }
  if (summary.packets_lost != 0) {
    reporter->Print("warning: %" PRIu64
                    " packets were lost (the trace's TraceStats says where)",
                    summary.packets_lost);
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
           const TracingSessionSummary& summary,
           const TraceSessionOptions& options,
           Reporter* reporter) {
  uint64_t bytes = 0;
  base::Status size = file->Size(&bytes);
  if (!size.ok())
    bytes = summary.bytes_written;
  base::Status status = file->Commit();
  if (!status.ok()) {
    reporter->Print("%s", status.message().c_str());
    return kExitFailure;
  }
  PrintSummary(reporter, file->name(), bytes, summary);
  if (summary.packets_written == 0) {
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

// Step 1: Setup() into |file| and StartBlocking(), then the start line
// (|announce|) and the service's warnings. False (|file| discarded,
// reported) if refused.
bool StartSession(TracingSession* session,
                  const TraceConfig& config,
                  TraceOutput* file,
                  bool announce,
                  Reporter* reporter) {
  base::Status status = session->Setup(config, file->fd());
  if (status.ok())
    status = session->StartBlocking();
  if (!status.ok()) {
    file->Discard();
    reporter->Print("the service refused the session: %s",
                    status.message().c_str());
    return false;
  }
  const uint64_t session_id = session->session_id();
  if (announce && config.duration_ms() != 0) {
    reporter->Print("session %" PRIu64 " tracing for %s (Ctrl-C stops early)",
                    session_id, FormatDurationMs(config.duration_ms()).c_str());
  } else if (announce) {
    reporter->Print("session %" PRIu64 " tracing until Ctrl-C", session_id);
  }
  for (const std::string& warning : session->start_warnings())
    reporter->Print("warning: %s", warning.c_str());
  return true;
}

// Steps 2 and 3: waits for the session's end (or a stop request, which
// stops it; |stop_now|: stops it at once unless it ended). False, with the
// reason printed, when there is no whole trace: the connection was lost,
// the stop was aborted or failed, or the session failed; the caller then
// aborts the session.
bool AwaitEnd(TracingSession* session,
              const TraceConfig& config,
              const TraceOutput* out,
              int end_fd,
              SignalRecords* signals,
              const TraceSessionOptions& options,
              bool stop_now,
              Reporter* reporter) {
  EndReason reason = EndReason::kStopRequest;
  if (!stop_now) {
    reason =
        WaitForEnd(session, config, out, end_fd, signals, options, reporter);
  }
  if (reason == EndReason::kDeadline) {
    reporter->Print("the service did not end session %" PRIu64
                    " after its duration; stopping it",
                    session->session_id());
  } else if (reason == EndReason::kStopRequest && !stop_now) {
    reporter->Print("stopping (Ctrl-C again to abort)");
  }
  // A session that ended already makes StopBlocking() return at once.
  if (reason != EndReason::kEnded) {
    base::Status status;
    if (!StopSession(session, signals, &status)) {
      reporter->Print("aborted: no trace written");
      return false;
    }
    if (!status.ok()) {
      reporter->Print("stopping the session failed: %s",
                      status.message().c_str());
      return false;
    }
  }
  const TracingSessionSummary summary = session->summary();
  if (summary.connection_lost) {
    reporter->Print("lost the connection to the service: %s",
                    summary.error.c_str());
    return false;
  }
  if (!summary.error.empty()) {
    reporter->Print("the session failed: %s", summary.error.c_str());
    return false;
  }
  return true;
}

}  // namespace

TracingSessionOptions CliSessionOptions(const std::string& consumer_socket,
                                        const TraceConfig& config,
                                        const TraceSessionOptions& options) {
  TracingSessionOptions out;
  out.consumer_socket_path = consumer_socket;
  out.timeout_ms = kCallTimeoutMs;
  const uint64_t stop_ms =
      uint64_t{StopTimeoutMs(config)} + options.disable_slack_ms;
  out.stop_timeout_ms = static_cast<int>(std::min<uint64_t>(stop_ms, INT_MAX));
  return out;
}

int RunTraceSession(TracingSession* session,
                    const TraceConfig& config,
                    TraceOutput* file,
                    int signal_fd,
                    const TraceSessionOptions& options,
                    FILE* err) {
  Reporter reporter(err);
  EndNotifier end(session);
  if (!end.ok()) {
    file->Discard();
    reporter.Print("cannot create a pipe: %s", strerror(errno));
    return kExitFailure;
  }
  if (!StartSession(session, config, file, /*announce=*/true, &reporter))
    return kExitFailure;
  SignalRecords signals(signal_fd);
  if (!AwaitEnd(session, config, file, end.fd(), &signals, options,
                /*stop_now=*/false, &reporter)) {
    session->Abort();
    file->Discard();
    return kExitFailure;
  }
  return Finish(file, config, session->summary(), options, &reporter);
}

int RunClone(consumer::ConsumerClient* client,
             uint64_t session_id,
             TraceOutput* file,
             FILE* err) {
  Reporter reporter(err);
  base::Status status = client->CloneSession(session_id, file->fd());
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

int RunQuery(TracingSession* session, FILE* out, FILE* err) {
  ServiceState state;
  base::Status status = session->QueryServiceStateBlocking(&state);
  if (!status.ok()) {
    Reporter(err).Print("query failed: %s", status.message().c_str());
    return kExitFailure;
  }
  fputs(FormatServiceState(state).c_str(), out);
  fflush(out);
  return ferror(out) ? kExitFailure : kExitOk;
}

int RunStop(consumer::ConsumerClient* client, uint64_t session_id, FILE* err) {
  Reporter reporter(err);
  SessionSummary summary;
  base::Status status = client->DisableTracing(
      session_id, kDefaultDataSourceStopTimeoutMs + kStopSlackMs, &summary);
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

int RunDetachedSession(TracingSession* session,
                       const TraceConfig& config,
                       const std::string& key,
                       TraceOutput* file,
                       FILE* err) {
  Reporter reporter(err);
  if (!StartSession(session, config, file, /*announce=*/false, &reporter))
    return kExitFailure;
  const uint64_t session_id = session->session_id();
  base::Status status = session->DetachBlocking(key);
  if (!status.ok()) {
    // Still ours: aborted, the service frees it unwritten.
    session->Abort();
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

int RunAttach(TracingSession* session,
              const std::string& key,
              bool stop,
              int signal_fd,
              const TraceSessionOptions& options,
              FILE* err) {
  Reporter reporter(err);
  EndNotifier end(session);
  if (!end.ok()) {
    reporter.Print("cannot create a pipe: %s", strerror(errno));
    return kExitFailure;
  }
  base::Status status = session->AttachBlocking(key);
  if (!status.ok()) {
    reporter.Print("attaching to %s failed: %s", key.c_str(),
                   status.message().c_str());
    return kExitFailure;
  }
  const uint64_t session_id = session->session_id();
  reporter.Print("attached to session %" PRIu64 " (%s)%s", session_id,
                 key.c_str(), stop ? "" : "; Ctrl-C stops it");
  SignalRecords signals(signal_fd);
  // No config here: the session's duration is the service's to keep.
  if (!AwaitEnd(session, TraceConfig(), nullptr, end.fd(), &signals, options,
                stop, &reporter)) {
    session->Abort();
    return kExitFailure;
  }
  const TracingSessionSummary summary = session->summary();
  reporter.Print("session %" PRIu64 " ended: %" PRIu64
                 " packets (%s) in %s, "
                 "in the file its --detach named",
                 session_id, summary.packets_written,
                 FormatBytes(summary.bytes_written).c_str(),
                 FormatDurationMs(summary.duration_ms).c_str());
  if (summary.packets_lost != 0) {
    reporter.Print("warning: %" PRIu64
                   " packets were lost (the trace's TraceStats says where)",
                   summary.packets_lost);
  }
  if (summary.packets_written == 0) {
    reporter.Print(
        "warning: the session recorded no packet from any producer; "
        "`ringtrace --query` lists the connected producers and what they "
        "provide");
    if (options.fail_on_empty)
      return kExitEmpty;
  }
  return kExitOk;
}

int RunIsDetached(TracingSession* session, const std::string& key, FILE* err) {
  bool detached = false;
  base::Status status = session->IsDetachedBlocking(key, &detached);
  if (!status.ok()) {
    Reporter(err).Print("%s", status.message().c_str());
    return kExitFailure;
  }
  return detached ? kExitOk : kExitNotDetached;
}

}  // namespace cli
}  // namespace ringtrace
