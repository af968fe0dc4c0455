/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_example_app: an instrumented app for a running ringtraced. See
// example_app.h.
//
// Exit status: 0 after a complete run (the summary on stdout); 1 on a usage
// error or when the service cannot be reached or refuses the producer (the
// reason on stderr); 3 when the service went away during the run (summary
// printed, with a warning; classic mode only: the sessions mode reconnects).
//
// The sessions mode prints "connected as producer N" on stdout once
// connected (scripts wait for it), a line "worker-I masks: example=0xM
// io=0xM detail=0xM" whenever a worker wrote its first cycle under new
// instance masks
// (a session started or stopped; tests wait for these), and runs until
// --duration-ms or SIGINT or SIGTERM. The two signals are blocked before any
// thread exists (every thread inherits the mask) and taken by sigtimedwait() on
// the main thread.

#include <signal.h>
#include <stdio.h>
#include <time.h>

#include <string>

#include "ringtrace/track_event.h"
#include "src/examples/example_app.h"

namespace ringtrace {
namespace examples {
namespace {

// Blocks until |duration_ms| passed (0: no limit) or a signal of |set|
// came.
void WaitForStop(const sigset_t& set, uint32_t duration_ms) {
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += duration_ms / 1000;
  deadline.tv_nsec += static_cast<long>(duration_ms % 1000) * 1000000;
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000;
  }
  for (;;) {
    struct timespec wait = {3600, 0};
    if (duration_ms != 0) {
      struct timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      int64_t left_ns = (deadline.tv_sec - now.tv_sec) * 1000000000LL +
                        (deadline.tv_nsec - now.tv_nsec);
      if (left_ns <= 0)
        return;
      wait.tv_sec = static_cast<time_t>(left_ns / 1000000000LL);
      wait.tv_nsec = static_cast<long>(left_ns % 1000000000LL);
    }
    if (sigtimedwait(&set, nullptr, &wait) > 0)
      return;
    // EAGAIN: the wait (or an hour) passed; EINTR: another signal.
  }
}

int RunSessions(const ExampleConfig& config) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) {
    perror("ringtrace_example_app: sigprocmask");
    return 1;
  }
  SessionExampleHooks hooks;
  hooks.on_connected = [&](uint64_t producer_id) {
    printf("ringtrace_example_app %s: connected as producer %llu\n",
           config.name.c_str(), static_cast<unsigned long long>(producer_id));
    fflush(stdout);
  };
  hooks.wait_for_end = [&] { WaitForStop(set, config.duration_ms); };
  hooks.on_masks_changed = [&](uint32_t index, const CycleMasks& masks) {
    // One call per line: stdio locks the stream for each.
    printf(
        "ringtrace_example_app %s: worker-%u masks: example=0x%x io=0x%x "
        "detail=0x%x\n",
        config.name.c_str(), index, masks.example, masks.io, masks.detail);
    fflush(stdout);
  };
  SessionExampleResult result;
  const base::Status status = RunSessionExample(config, hooks, &result);
  if (!status.ok()) {
    fprintf(stderr, "ringtrace_example_app: %s\n", status.message().c_str());
    return 1;
  }
  fputs(FormatSessionExampleSummary(config, result).c_str(), stdout);
  return 0;
}

int Main(int argc, char** argv) {
  ExampleConfig config;
  std::string error;
  switch (ParseExampleArgs(argc, argv, &config, &error)) {
    case ParseResult::kRun:
      break;
    case ParseResult::kHelp:
      fputs(ExampleUsage().c_str(), stdout);
      return 0;
    case ParseResult::kError:
      fprintf(stderr, "ringtrace_example_app: %s\n%s", error.c_str(),
              ExampleUsage().c_str());
      return 1;
  }
  track_event::SetProcessName(config.name);
  if (config.sessions)
    return RunSessions(config);
  // The process name is process-wide state of the TrackEvent API: set by
  // the program, not by RunExample(), which tests call beside other tracers.
  ExampleResult result;
  const base::Status status = RunExample(config, &result);
  if (!status.ok()) {
    fprintf(stderr, "ringtrace_example_app: %s\n", status.message().c_str());
    return 1;
  }
  fputs(FormatExampleSummary(config, result).c_str(), stdout);
  return result.connected_at_end ? 0 : 3;
}

}  // namespace
}  // namespace examples
}  // namespace ringtrace

int main(int argc, char** argv) {
  return ringtrace::examples::Main(argc, argv);
}
