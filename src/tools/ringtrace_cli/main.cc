/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace: the command-line consumer of ringtraced (docs/cli.md). Reads
// the command line and the config, blocks the signals it handles (before any
// thread exists, so that every thread inherits the mask) and hands them to a
// signalfd, connects (a ringtrace::TracingSession, the public consumer API;
// --clone and --stop: the internal ConsumerClient, see trace_session.h), and
// runs the command (trace_session.h).

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "ringtrace/tracing_session.h"
#include "src/base/scoped_fd.h"
#include "src/tools/ringtrace_cli/cli_options.h"
#include "src/tools/ringtrace_cli/load_config.h"
#include "src/tools/ringtrace_cli/output_file.h"
#include "src/tools/ringtrace_cli/trace_session.h"
#include "src/tracing/consumer/consumer_client.h"
#include "src/tracing/ipc/default_socket_paths.h"

namespace ringtrace {
namespace cli {
namespace {

constexpr int kConnectTimeoutMs = 5000;

void PrintError(const std::string& message) {
  fprintf(stderr, "ringtrace: %s\n", message.c_str());
}

// --clone and --stop: a session of another process, by its id.
int RunOnSessionById(const CliOptions& options, TraceOutput* file) {
  const std::string socket = options.consumer_socket.empty()
                                 ? ipc::DefaultConsumerSocketPath()
                                 : options.consumer_socket;
  base::Status status;
  std::unique_ptr<consumer::ConsumerClient> client =
      consumer::ConsumerClient::Connect(socket, kConnectTimeoutMs, &status);
  if (!client) {
    // The message names the socket and asks whether ringtraced runs.
    PrintError(status.message());
    return kExitFailure;  // |file| is discarded
  }
  if (options.command == Command::kClone)
    return RunClone(client.get(), options.session_id, file, stderr);
  return RunStop(client.get(), options.session_id, stderr);
}

// Blocks SIGINT, SIGTERM, SIGHUP (stop) and SIGUSR1 (snapshot) and returns
// a signalfd that reads them; invalid on failure.
base::ScopedFd BlockSignalsIntoFd() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  sigaddset(&mask, SIGUSR1);
  if (sigprocmask(SIG_BLOCK, &mask, nullptr) != 0)
    return base::ScopedFd();
  return base::ScopedFd(signalfd(-1, &mask, SFD_CLOEXEC));
}

// --background: the parent prints the child's pid and leaves (without
// running destructors: the output file and the signal fd are the child's);
// the child goes on in a session of its own, stdin and stdout on
// /dev/null. Returns false (reported) if the fork failed.
bool GoToBackground() {
  fflush(stdout);
  fflush(stderr);
  const pid_t child = fork();
  if (child < 0) {
    PrintError(std::string("--background: fork: ") + strerror(errno));
    return false;
  }
  if (child > 0) {
    printf("%d\n", static_cast<int>(child));
    fflush(stdout);
    _exit(kExitOk);
  }
  setsid();
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    dup2(null_fd, STDIN_FILENO);
    dup2(null_fd, STDOUT_FILENO);
    if (null_fd > STDERR_FILENO)
      close(null_fd);
  }
  return true;
}

int Run(int argc, char** argv) {
  CliOptions options;
  base::Status status = ParseCliOptions(argc, argv, &options);
  if (!status.ok()) {
    PrintError(status.message() + " (ringtrace --help for the usage)");
    return kExitUsage;
  }
  if (options.command == Command::kHelp) {
    fputs(kUsageText, stdout);
    return kExitOk;
  }
  perfetto::protos::TraceConfig config;
  if (options.command == Command::kTrace) {
    status = LoadTraceConfig(options, &config);
    if (!status.ok()) {
      PrintError(status.message());
      return kExitUsage;
    }
  }

  // Neither a dead service nor a reader of stdout (-o -) that went away
  // may kill us with SIGPIPE mid-write.
  signal(SIGPIPE, SIG_IGN);
  base::ScopedFd signal_fd = BlockSignalsIntoFd();
  if (!signal_fd.valid()) {
    PrintError(std::string("cannot set up signal handling: ") +
               strerror(errno));
    return kExitFailure;
  }

  // Before connecting: a refused output (a terminal at -o -, a symbolic
  // link at FILE, ...) starts nothing.
  std::unique_ptr<TraceOutput> file;
  if (options.command == Command::kTrace ||
      options.command == Command::kClone) {
    status =
        options.out_path == kStdoutPath
            ? TraceOutput::ForStdout(STDOUT_FILENO, &file)
            : TraceOutput::ForFile(options.out_path, options.follow_symlink,
                                   options.no_clobber, &file);
    if (!status.ok()) {
      PrintError(status.message());
      return kExitFailure;
    }
  }

  if (options.background && !GoToBackground())
    return kExitFailure;

  if (options.command == Command::kClone || options.command == Command::kStop)
    return RunOnSessionById(options, file.get());

  TraceSessionOptions session_options;
  session_options.show_progress =
      !options.no_progress && !options.background && isatty(STDERR_FILENO);
  session_options.fail_on_empty = options.fail_on_empty;
  session_options.no_clobber = options.no_clobber;
  // After the fork of --background: the session's thread is the child's.
  std::unique_ptr<TracingSession> session = TracingSession::Connect(
      CliSessionOptions(options.consumer_socket, config, session_options),
      &status);
  if (!session) {
    // The message names the socket and asks whether ringtraced runs.
    PrintError(status.message());
    return kExitFailure;  // |file| is discarded
  }

  switch (options.command) {
    case Command::kTrace:
      if (!options.detach_key.empty()) {
        return RunDetachedSession(session.get(), config, options.detach_key,
                                  file.get(), stderr);
      }
      return RunTraceSession(session.get(), config, file.get(), signal_fd.get(),
                             session_options, stderr);
    case Command::kAttach:
      return RunAttach(session.get(), options.detach_key, options.stop_attached,
                       signal_fd.get(), session_options, stderr);
    case Command::kIsDetached:
      return RunIsDetached(session.get(), options.detach_key, stderr);
    case Command::kQuery:
      return RunQuery(session.get(), stdout, stderr);
    case Command::kClone:
    case Command::kStop:
    case Command::kHelp:
      break;
  }
  return kExitUsage;
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace

int main(int argc, char** argv) {
  return ringtrace::cli::Run(argc, argv);
}
