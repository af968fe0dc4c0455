/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_probes: the system probes of ringtrace, like Perfetto's
// traced_probes. A producer like any app: it connects to ringtraced's
// producer socket (the SDK's default, or --producer-socket), reconnects
// when the service restarts, and serves the data sources "linux.ftrace",
// "linux.process_stats" and "linux.sys_stats" to every session that asks
// for them (docs/probes.md, docs/ftrace.md).
//
// Output: "ringtrace_probes: connected as producer N" on stdout at each
// connection (tests and scripts wait for it); on stderr, a line per
// instance started (with each config field it does not implement) and
// stopped (what it did). It runs until SIGINT or SIGTERM (blocked before
// any thread exists, taken by sigtimedwait() on the main thread), then
// stops its instances and exits 0.
//
// Exit status: 0 after a signal; 1 on a usage error or if it cannot start.

#include <signal.h>
#include <stdio.h>
#include <time.h>

#include <memory>
#include <string>

#include "ringtrace/tracing.h"
#include "src/base/flags.h"
#include "src/base/version.h"
#include "src/traced_probes/probes_data_sources.h"
#include "src/traced_probes/probes_loop.h"

namespace ringtrace {
namespace probes {
namespace {

constexpr int kExitUsage = 1;

const char kUsage[] =
    "usage: ringtrace_probes [--producer-socket PATH] [--name NAME]\n"
    "\n"
    "Serves the data sources linux.ftrace, linux.process_stats and\n"
    "linux.sys_stats to ringtraced's sessions (docs/probes.md). Runs until\n"
    "SIGINT or SIGTERM. linux.ftrace needs tracefs and root (each start\n"
    "without them fails, saying what is missing).\n"
    "\n"
    "  --producer-socket PATH  ringtraced's producer socket (default:\n"
    "                          $RINGTRACE_PRODUCER_SOCK, else the default\n"
    "                          path ringtraced uses, docs/sessions.md)\n"
    "  --name NAME             the producer's name (default "
    "ringtrace_probes)\n"
    "  --version               print the version\n";

int Main(int argc, char** argv) {
  TracingOptions options;
  options.producer.name = "ringtrace_probes";
  // linux.ftrace writes in bursts (a drain of every CPU's pages, the whole
  // buffers at the stop): a ring larger than an app's, and writers that
  // wait for the service to take chunks rather than drop packets when it
  // is full (a wait only delays the next drain; the kernel's buffers hold
  // the events meanwhile). The service clamps the size to its limits.
  options.producer.requested_ring_bytes = 8u << 20;
  options.producer.buffer_exhausted_policy =
      shm_ring::BufferExhaustedPolicy::kStall;
  base::FlagReader reader(argc, argv);
  base::Flag flag;
  while (reader.Next(&flag)) {
    if (flag.Is("--producer-socket")) {
      options.producer.socket_path = flag.value;
    } else if (flag.Is("--name")) {
      options.producer.name = flag.value;
    } else {
      fprintf(stderr, "ringtrace_probes: unknown flag %s\n%s",
              flag.name.c_str(), kUsage);
      return kExitUsage;
    }
  }
  if (reader.help()) {
    fputs(kUsage, stdout);
    return 0;
  }
  if (reader.version()) {
    printf("ringtrace_probes %s\n", base::kRingtraceVersion);
    return 0;
  }
  if (!reader.error().empty()) {
    fprintf(stderr, "ringtrace_probes: %s\n%s", reader.error().c_str(), kUsage);
    return kExitUsage;
  }

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) {
    perror("ringtrace_probes: sigprocmask");
    return 1;
  }

  // Declared in this order so that they are destroyed in the reverse one:
  // the connection first (every instance gets OnStop), then the data
  // sources, then the loop, then the tids linux.ftrace hands to
  // linux.process_stats.
  SeenPids seen_pids;
  ProbesLoop loop;
  ProbesDataSource ftrace(ProbesDataSource::Kind::kFtrace, &loop, "/proc", {},
                          &seen_pids);
  ProbesDataSource process_stats(ProbesDataSource::Kind::kProcessStats, &loop,
                                 "/proc", {}, &seen_pids);
  ProbesDataSource sys_stats(ProbesDataSource::Kind::kSysStats, &loop, "/proc");
  auto tracing = std::make_unique<Tracing>(options);
  base::Status status = tracing->RegisterDataSource(ftrace.name(), &ftrace);
  if (status.ok())
    status = tracing->RegisterDataSource(process_stats.name(), &process_stats);
  if (status.ok())
    status = tracing->RegisterDataSource(sys_stats.name(), &sys_stats);
  if (status.ok())
    status = tracing->Start();
  if (!status.ok()) {
    fprintf(stderr, "ringtrace_probes: %s\n", status.message().c_str());
    return 1;
  }

  uint64_t generation = 0;
  for (;;) {
    // Wakes every 100 ms to report new connections.
    struct timespec wait = {0, 100 * 1000 * 1000};
    if (sigtimedwait(&set, nullptr, &wait) > 0)
      break;
    uint64_t current = 0;
    std::shared_ptr<Producer> producer = tracing->GetProducer(&current);
    if (producer && current != generation) {
      generation = current;
      printf("ringtrace_probes: connected as producer %llu\n",
             static_cast<unsigned long long>(producer->producer_id()));
      fflush(stdout);
    }
  }
  const TracingStats stats = tracing->stats();
  tracing.reset();
  printf(
      "ringtrace_probes: stopped; %llu connections, %llu lost; instances "
      "that failed to start: %llu linux.ftrace, %llu linux.process_stats, "
      "%llu linux.sys_stats\n",
      static_cast<unsigned long long>(stats.connections),
      static_cast<unsigned long long>(stats.disconnects),
      static_cast<unsigned long long>(ftrace.start_failures()),
      static_cast<unsigned long long>(process_stats.start_failures()),
      static_cast<unsigned long long>(sys_stats.start_failures()));
  return 0;
}

}  // namespace
}  // namespace probes
}  // namespace ringtrace

int main(int argc, char** argv) {
  return ringtrace::probes::Main(argc, argv);
}
