/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_in_process_example_app --out FILE [--threads N] [--frames N]:
// an app that traces itself into a Perfetto trace file with no daemon. It
// starts the in-process backend (ringtrace/tracing_backends.h), records a
// session from a text config into FILE while N threads (default 2) each
// render N frames (default 50: a "Frame" slice with a nested "Draw", a
// counter), stops it and prints what the service said. Open FILE in
// https://ui.perfetto.dev. Built from include/ alone by
// tools/check-public-api.

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ringtrace/tracing_backends.h"
#include "ringtrace/tracing_session.h"
#include "ringtrace/track_event.h"

RT_DEFINE_CATEGORIES("example.frame", "example.debug");

namespace {

constexpr char kConfig[] = R"(
buffers { size_kb: 8192 fill_policy: RING_BUFFER }
data_sources {
  config {
    name: "track_event"
    track_event_config { enabled_categories: "example.frame" }
  }
}
)";

void RenderFrames(int thread, int frames) {
  for (int i = 0; i < frames; i++) {
    RT_TRACE_EVENT("example.frame", "Frame", "thread", thread, "frame", i);
    {
      RT_TRACE_EVENT("example.frame", "Draw");
      usleep(100);
    }
    RT_TRACE_COUNTER("example.frame", "frames_left", frames - i - 1);
    RT_TRACE_INSTANT("example.debug", "not recorded");  // not enabled
  }
}

int Fail(const char* what, const ringtrace::base::Status& status) {
  fprintf(stderr, "in_process_example_app: %s: %s\n", what,
          status.message().c_str());
  return 1;
}

bool ParseCount(const char* s, int* out) {
  char* end = nullptr;
  const long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 1 || v > 1000000)
    return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  int threads = 2;
  int frames = 50;
  bool usage = false;
  // Each flag takes a value: the pairs (argv[i], argv[i + 1]).
  for (int i = 1; i < argc && !usage; i += 2) {
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (strcmp(argv[i], "--out") == 0 && value) {
      out = value;
    } else if (strcmp(argv[i], "--threads") == 0 && value) {
      usage = !ParseCount(value, &threads);
    } else if (strcmp(argv[i], "--frames") == 0 && value) {
      usage = !ParseCount(value, &frames);
    } else {
      usage = true;
    }
  }
  if (usage || out.empty()) {
    fprintf(stderr,
            "Usage: %s --out FILE [--threads N] [--frames N]\n"
            "Traces itself into FILE (a Perfetto trace) with the in-process "
            "backend: no daemon.\n",
            argv[0]);
    return 2;
  }

  // The in-process backend alone: no ringtraced needed.
  ringtrace::TracingInitArgs args;
  args.backends = ringtrace::kInProcessBackend;
  args.in_process.producer.name = "in_process_example_app";
  ringtrace::base::Status status;
  std::unique_ptr<ringtrace::TracingBackends> backends =
      ringtrace::TracingBackends::Initialize(args, &status);
  if (!backends)
    return Fail("initialize", status);

  const int fd =
      open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    fprintf(stderr, "in_process_example_app: %s: %s\n", out.c_str(),
            strerror(errno));
    return 1;
  }
  std::unique_ptr<ringtrace::TracingSession> session =
      backends->NewSession(ringtrace::kInProcessBackend, &status);
  if (!session)
    return Fail("session", status);
  status = session->SetupFromText(kConfig, fd);
  close(fd);  // the service has its own copy
  if (!status.ok())
    return Fail("config", status);
  status = session->StartBlocking();
  if (!status.ok())
    return Fail("start", status);

  std::vector<std::thread> workers;
  for (int t = 0; t < threads; t++)
    workers.emplace_back(RenderFrames, t, frames);
  for (std::thread& w : workers)
    w.join();

  status = session->StopBlocking();
  if (!status.ok())
    return Fail("stop", status);
  const ringtrace::TracingSessionSummary summary = session->summary();
  printf(
      "in_process_example_app: wrote %s: %llu packets (%llu bytes), %llu "
      "lost\n",
      out.c_str(), static_cast<unsigned long long>(summary.packets_written),
      static_cast<unsigned long long>(summary.bytes_written),
      static_cast<unsigned long long>(summary.packets_lost));
  return 0;
}
