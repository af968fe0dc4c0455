/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtraced: the tracing service. Listens on a Unix socket for producers,
// drains their shared rings into one trace buffer and, when the duration
// elapsed or SIGINT/SIGTERM/SIGHUP/SIGQUIT arrived, writes a Perfetto trace
// file. Each SIGUSR1 meanwhile writes a snapshot of the buffer to
// <out>.snapshot-<N> and tracing goes on. See docs/service.md ("Signals").

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "src/base/checked_math.h"
#include "src/base/flags.h"
#include "src/base/scoped_fd.h"
#include "src/base/time.h"
#include "src/base/version.h"
#include "src/tracing/ipc/consumer_protocol.h"
#include "src/tracing/ipc/default_socket_paths.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/traced/tracing_service.h"

namespace ringtrace {
namespace traced {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // the service could not run or write
constexpr int kExitUsage = 2;
constexpr int kNiceUnchanged = 100;  // outside [-20, 19]
// --warm-ahead-kb: the default, and the bound (1 GiB).
constexpr uint32_t kDefaultWarmAheadKb = 16384;
constexpr uint32_t kMaxWarmAheadKb = 1 << 20;

void PrintUsage(FILE* out, const char* argv0) {
  fprintf(out,
          "Usage: %s [--out FILE] [flags]\n"
          "Without --out: a daemon; consumers (the ringtrace CLI) start and "
          "stop\n"
          "tracing sessions on the consumer socket. With --out: one session "
          "into\n"
          "FILE from start to stop (the consumer socket only if given).\n"
          "  --producer-socket PATH Unix socket producers connect to (alias "
          "--socket;\n"
          "                         default here: %s)\n"
          "  --consumer-socket PATH Unix socket consumers connect to "
          "(default\n"
          "                         here: %s; $RINGTRACE_PRODUCER_SOCK and\n"
          "                         $RINGTRACE_CONSUMER_SOCK override both "
          "defaults)\n"
          "  --version              the version and the producer protocol\n"
          "  --consumer-group GROUP members of GROUP may use the consumer "
          "socket\n"
          "                         (its mode becomes 0660)\n"
          "  --max-sessions N       consumer sessions at once, 1..1024 (32)\n"
          "  --max-buffer-mb N      all sessions' buffers together, MiB "
          "(1024)\n"
          "  --out FILE             Perfetto trace file to write (mode "
          "0600)\n"
          "  --out-symlink follow|refuse  follow: write through a symbolic "
          "link at\n"
          "                         FILE (the file it names is created or "
          "replaced);\n"
          "                         refuse (default): fail\n"
          "  --out-group GROUP      FILE and its snapshots get GROUP, mode "
          "0640\n"
          "  --duration-ms N        stop after N ms (default: until SIGINT "
          "or SIGTERM)\n"
          "  --buffer-kb N          trace buffer size in KiB, 1..4194240 "
          "(16384)\n"
          "  --fill-policy P        ring_buffer | discard (ring_buffer)\n"
          "  --file-write-period-ms N  stream the buffer into FILE every N "
          "ms,\n"
          "                         100..86400000 (TraceConfig's "
          "write_into_file;\n"
          "                         default: FILE is written at the stop)\n"
          "  --ring-kb N            default ring per producer in KiB, power "
          "of two,\n"
          "                         1..65536 (1024)\n"
          "  --chunk-size N         default chunk size, power of two in "
          "[256, 32768] (4096)\n"
          "  --max-producers N      producers connected at once, 1..65535 "
          "(256)\n"
          "  --max-total-ring-mb N  every producer's ring together, MiB "
          "(2048)\n"
          "Per-user limits (what one uid may hold at once; docs/service.md):\n"
          "  --max-producers-per-uid N  producers (32)\n"
          "  --max-ring-mb-per-uid N    their rings, MiB (128); a ring is "
          "served\n"
          "                             smaller to fit what is left\n"
          "  --max-consumers-per-uid N  consumer connections (16)\n"
          "  --max-sessions-per-uid N   sessions (8)\n"
          "  --max-buffer-mb-per-uid N  their sessions' buffers, MiB (512)\n"
          "  --privileged-limit-factor N  root and the service's own user "
          "get N\n"
          "                             times each per-user limit; 0: none "
          "(1)\n"
          "  --drain-tick-us N      every ring is drained at least this "
          "often, in\n"
          "                         microseconds, 100..60000000 (100000)\n"
          "  --head-grace-us N      an open chunk at a ring's head is left "
          "to its\n"
          "                         writer this long, 0..1000000 (1000)\n"
          "  --buffer-pages P       the trace buffers' pages: small (4 KiB) "
          "or huge\n"
          "                         (transparent huge pages; "
          "docs/trace_buffer_v2.md)\n"
          "                         (small)\n"
          "  --warm-ahead-kb N      a thread commits and touches a new "
          "trace buffer's\n"
          "                         pages up to N KiB ahead of the drain's "
          "writes,\n"
          "                         0..1048576; 0: none (docs/"
          "trace_buffer_v2.md) (16384)\n"
          "  --nice N               scheduling niceness of the service's "
          "threads,\n"
          "                         -20..19 (unchanged); below 0 needs "
          "CAP_SYS_NICE\n"
          "  --socket-mode MODE     octal permissions of the socket file; "
          "who may\n"
          "                         connect (0600: this user only; 0666: "
          "everyone)\n"
          "  --socket-group GROUP   group (name or number) of the socket "
          "file\n"
          "Flags take '--flag value' or '--flag=value'; '_' works for '-'.\n"
          "FILE is written as an unnamed file in its directory and put in "
          "place\n"
          "when complete; a file there is replaced, never written into. A "
          "device or\n"
          "FIFO (/dev/stdout) is written directly.\n"
          "Signals: SIGINT/SIGTERM/SIGHUP/SIGQUIT stop tracing and write "
          "FILE\n"
          "(run under nohup to keep tracing when the terminal closes).\n"
          "SIGUSR1 writes a snapshot of the trace buffer to\n"
          "FILE.snapshot-N (N = 1, 2, ...); tracing goes on. It holds the\n"
          "chunks producers had published, not those their writers still\n"
          "hold open (a later snapshot and FILE have them). Send SIGUSR1\n"
          "only once ringtraced is listening.\n",
          argv0, ipc::DefaultProducerSocketPath().c_str(),
          ipc::DefaultConsumerSocketPath().c_str());
}

// Octal digits only, at most 0777.
bool ParseSocketMode(const std::string& s, mode_t* mode) {
  if (s.empty() || s.size() > 4)
    return false;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '7')
      return false;
    v = v * 8 + static_cast<unsigned>(c - '0');
  }
  if (v > 0777)
    return false;
  *mode = static_cast<mode_t>(v);
  return true;
}

// A group name from the group database, or a number.
bool ParseGroup(const std::string& s, gid_t* gid) {
  uint32_t n = 0;
  if (base::ParseUint32(s, &n) && n != static_cast<uint32_t>(-1)) {
    *gid = static_cast<gid_t>(n);
    return true;
  }
  std::vector<char> buf(16384);
  group grp = {};
  group* found = nullptr;
  if (getgrnam_r(s.c_str(), &grp, buf.data(), buf.size(), &found) != 0 ||
      !found) {
    return false;
  }
  *gid = found->gr_gid;
  return true;
}

// A niceness in [-20, 19].
bool ParseNice(const std::string& s, int32_t* out) {
  const bool negative = !s.empty() && s[0] == '-';
  uint32_t magnitude = 0;
  if (!base::ParseUint32(negative ? s.substr(1) : s, &magnitude) ||
      magnitude > (negative ? 20u : 19u)) {
    return false;
  }
  *out = negative ? -static_cast<int32_t>(magnitude)
                  : static_cast<int32_t>(magnitude);
  return true;
}

// The per-user limit flags (user_limits.h). Returns false if |flag| is none
// of them; else sets |*error| when its value is invalid.
bool ParseUserLimitFlag(const base::Flag& flag,
                        ServiceCore::Options* core,
                        const char** error) {
  UserLimits& limits = core->user_limits;
  struct Entry {
    const char* name;
    uint64_t* field;
    uint64_t unit;  // the value's unit in the field's
  };
  const Entry entries[] = {
      {"--max-producers-per-uid", &limits.max_producers, 1},
      {"--max-ring-mb-per-uid", &limits.max_ring_bytes, 1 << 20},
      {"--max-consumers-per-uid", &limits.max_consumers, 1},
      {"--max-sessions-per-uid", &limits.max_sessions, 1},
      {"--max-buffer-mb-per-uid", &limits.max_buffer_bytes, 1 << 20},
      {"--max-total-ring-mb", &core->max_total_ring_bytes, 1 << 20},
  };
  uint32_t n = 0;
  if (flag.Is("--privileged-limit-factor")) {
    if (!base::ParseUint32(flag.value, &n) || n > 1024)
      *error = "must be in [0, 1024]";
    else
      limits.privileged_factor = n;
    return true;
  }
  for (const Entry& e : entries) {
    if (!flag.Is(e.name))
      continue;
    if (!base::ParseUint32(flag.value, &n) || n == 0 || n > (1u << 20))
      *error = "must be in [1, 1048576]";
    else
      *e.field = uint64_t{n} * e.unit;
    return true;
  }
  return false;
}

// Returns kExitOk to run, kExitUsage on a bad flag (message printed), -1
// for --help or -2 for --version.
int ParseFlags(int argc,
               char** argv,
               TracingService::Options* options,
               uint32_t* duration_ms,
               int* nice_value) {
  RingLimits& limits = options->core.ring_limits;
  bool socket_mode_set = false;
  std::string out_flag;  // the last flag that only means something with --out
  // The --out session's buffer (DefaultOutConfig).
  uint32_t buffer_kb = 16384;
  trace_buffer::TraceBufferV2::OverwritePolicy fill_policy =
      trace_buffer::TraceBufferV2::OverwritePolicy::kOverwrite;
  uint32_t file_write_period_ms = 0;  // 0: written at the stop only
  trace_buffer::TraceBufferV2::SetWarmAheadForNewBuffers(
      size_t{kDefaultWarmAheadKb} * 1024);
  base::FlagReader reader(argc, argv);
  base::Flag flag;
  while (reader.Next(&flag)) {
    const std::string& value = flag.value;
    uint32_t n = 0;
    const char* error = nullptr;
    if (ParseUserLimitFlag(flag, &options->core, &error)) {
      // Handled (|error| set on a bad value).
    } else if (flag.Is("--socket") || flag.Is("--producer-socket")) {
      options->socket_path = value;
      if (value.empty())
        error = "must not be empty";
    } else if (flag.Is("--consumer-socket")) {
      options->consumer_socket_path = value;
      if (value.empty())
        error = "must not be empty";
    } else if (flag.Is("--consumer-group")) {
      if (!ParseGroup(value, &options->consumer_group)) {
        error = "must name an existing group (or be a group number)";
      } else {
        options->consumer_socket_options.group = options->consumer_group;
        options->consumer_socket_options.mode = 0660;
      }
    } else if (flag.Is("--max-sessions")) {
      if (!base::ParseUint32(value, &options->core.max_sessions) ||
          options->core.max_sessions == 0 || options->core.max_sessions > 1024)
        error = "must be in [1, 1024]";
    } else if (flag.Is("--max-buffer-mb")) {
      if (!base::ParseUint32(value, &n) || n == 0 || n > (1u << 20))
        error = "must be in [1, 1048576]";
      else
        options->core.max_total_buffer_bytes = uint64_t{n} << 20;
    } else if (flag.Is("--out")) {
      options->out_path = value;
      if (value.empty())
        error = "must not be empty";
    } else if (flag.Is("--out-symlink")) {
      out_flag = flag.name;
      if (value != "follow" && value != "refuse")
        error = "must be follow or refuse";
      else
        options->follow_symlink = value == "follow";
    } else if (flag.Is("--out-group")) {
      out_flag = flag.name;
      if (!ParseGroup(value, &options->out_group))
        error = "must name an existing group (or be a group number)";
    } else if (flag.Is("--duration-ms")) {
      if (!base::ParseUint32(value, duration_ms) || *duration_ms == 0)
        error = "must be a number of milliseconds > 0";
    } else if (flag.Is("--buffer-kb")) {
      out_flag = flag.name;
      if (!base::ParseUint32(value, &buffer_kb) || buffer_kb == 0 ||
          buffer_kb > kMaxBufferKb)
        error = "must be in [1, 4194240]";
    } else if (flag.Is("--fill-policy")) {
      out_flag = flag.name;
      if (!trace_buffer::ParseFillPolicy(value, &fill_policy))
        error = "must be ring_buffer or discard";
    } else if (flag.Is("--file-write-period-ms")) {
      out_flag = flag.name;
      // The consumer protocol's floor for the same TraceConfig field; a
      // day at most.
      if (!base::ParseUint32(value, &file_write_period_ms) ||
          file_write_period_ms < ipc::kMinPeriodMs ||
          file_write_period_ms > 86400000)
        error = "must be in [100, 86400000]";
    } else if (flag.Is("--ring-kb")) {
      // The served default; the limits widen to include it.
      if (!base::ParseUint32(value, &n) || n == 0 || n > kMaxRingKb ||
          !base::IsPowerOfTwo(n)) {
        error = "must be a power of two in [1, 65536]";
      } else {
        limits.default_ring_bytes = n * 1024;
        if (limits.min_ring_bytes > n * 1024)
          limits.min_ring_bytes = n * 1024;
        if (limits.max_ring_bytes < n * 1024)
          limits.max_ring_bytes = n * 1024;
      }
    } else if (flag.Is("--chunk-size")) {
      if (!base::ParseUint32(value, &n) || n < shm_ring::kMinChunkSize ||
          n > shm_ring::kMaxChunkSize || !base::IsPowerOfTwo(n)) {
        error = "must be a power of two in [256, 32768]";
      } else {
        limits.default_chunk_size = n;
      }
    } else if (flag.Is("--max-producers")) {
      if (!base::ParseUint32(value, &options->core.max_producers) ||
          options->core.max_producers == 0 ||
          options->core.max_producers > 65535)
        error = "must be in [1, 65535]";
    } else if (flag.Is("--drain-tick-us")) {
      if (!base::ParseUint32(value, &n) || n < 100 || n > 60000000)
        error = "must be in [100, 60000000]";
      else
        options->core.drain_tick_ns = uint64_t{n} * 1000;
    } else if (flag.Is("--head-grace-us")) {
      if (!base::ParseUint32(value, &n) || n > 1000000)
        error = "must be in [0, 1000000]";
      else
        options->core.head_grace_ns = uint64_t{n} * 1000;
    } else if (flag.Is("--buffer-pages")) {
      if (value == "small")
        trace_buffer::TraceBufferV2::SetPagesForNewBuffers(
            trace_buffer::TraceBufferV2::Pages::kSmall);
      else if (value == "huge")
        trace_buffer::TraceBufferV2::SetPagesForNewBuffers(
            trace_buffer::TraceBufferV2::Pages::kHuge);
      else
        error = "must be small or huge";
    } else if (flag.Is("--warm-ahead-kb")) {
      if (!base::ParseUint32(value, &n) || n > kMaxWarmAheadKb)
        error = "must be in [0, 1048576]";
      else
        trace_buffer::TraceBufferV2::SetWarmAheadForNewBuffers(size_t{n} *
                                                               1024);
    } else if (flag.Is("--nice")) {
      int32_t v = 0;
      if (!ParseNice(value, &v))
        error = "must be in [-20, 19]";
      else
        *nice_value = v;
    } else if (flag.Is("--socket-mode") || flag.Is("--producer-socket-mode")) {
      socket_mode_set = true;
      if (!ParseSocketMode(value, &options->socket_options.mode))
        error = "must be octal permission bits in [0, 0777], e.g. 0660";
    } else if (flag.Is("--socket-group")) {
      if (!ParseGroup(value, &options->socket_options.group))
        error = "must name an existing group (or be a group number)";
    } else {
      fprintf(stderr, "ringtraced: unknown flag %s\n", flag.name.c_str());
      return kExitUsage;
    }
    if (error) {
      fprintf(stderr, "ringtraced: %s %s\n", flag.name.c_str(), error);
      return kExitUsage;
    }
  }
  if (reader.help())
    return -1;
  if (reader.version())
    return -2;
  if (!reader.error().empty()) {
    fprintf(stderr, "ringtraced: %s\n", reader.error().c_str());
    return kExitUsage;
  }
  options->out_config = DefaultOutConfig(buffer_kb, fill_policy);
  if (file_write_period_ms != 0) {
    options->out_config.set_write_into_file(true);
    options->out_config.set_file_write_period_ms(file_write_period_ms);
  }
  // Daemon mode (no --out): the default sockets, a producer socket every
  // local app may reach. With --out only the sockets given.
  if (options->out_path.empty() && !out_flag.empty()) {
    fprintf(stderr, "ringtraced: %s needs --out\n", out_flag.c_str());
    return kExitUsage;
  }
  if (options->out_path.empty()) {
    if (options->socket_path.empty())
      options->socket_path = ipc::DefaultProducerSocketPath();
    if (options->consumer_socket_path.empty())
      options->consumer_socket_path = ipc::DefaultConsumerSocketPath();
    if (!socket_mode_set)
      options->socket_options.mode = 0666;
  } else if (options->socket_path.empty()) {
    fprintf(stderr, "ringtraced: --out needs --socket (--producer-socket)\n");
    return kExitUsage;
  }
  if (options->socket_path == options->out_path) {
    fprintf(stderr, "ringtraced: --socket and --out are the same path (%s)\n",
            options->out_path.c_str());
    return kExitUsage;
  }
  return kExitOk;
}

int64_t MonotonicMs() {
  return static_cast<int64_t>(base::MonotonicMs());
}

// Writes snapshot |n| to <out>.snapshot-<n> and reports it on stderr.
void WriteSnapshot(TracingService* service, uint32_t n) {
  const std::string path =
      service->options().out_path + ".snapshot-" + std::to_string(n);
  ServiceSummary summary;
  const base::Status status = service->Snapshot(path, &summary);
  if (!status.ok()) {
    // "snapshot PATH: why".
    fprintf(stderr, "ringtraced: %s\n", status.message().c_str());
    return;
  }
  fprintf(stderr,
          "ringtraced: snapshot %u written to %s (%llu packets, %llu bytes)\n",
          n, path.c_str(),
          static_cast<unsigned long long>(
              summary.export_summary.export_stats.packets_exported),
          static_cast<unsigned long long>(summary.export_summary.file_size));
}

const char* StopSignalName(uint32_t signo) {
  switch (signo) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGQUIT:
      return "SIGQUIT";
    default:
      return "signal";
  }
}

// Blocks until |duration_ms| elapsed (0: forever) or a stop signal came
// through |signal_fd|; each SIGUSR1 meanwhile writes a snapshot (several
// SIGUSR1 sent while one is written may merge into one: the kernel keeps one
// pending). Returns the signal's name, or null for the duration.
const char* WaitForEnd(int signal_fd,
                       uint32_t duration_ms,
                       TracingService* service) {
  uint32_t snapshots = 0;
  const int64_t deadline = MonotonicMs() + duration_ms;
  for (;;) {
    int timeout = -1;
    if (duration_ms > 0) {
      const int64_t left = deadline - MonotonicMs();
      if (left <= 0)
        return nullptr;
      timeout = static_cast<int>(left);
    }
    pollfd p = {signal_fd, POLLIN, 0};
    const int rc = poll(&p, 1, timeout);
    if (rc < 0 && errno != EINTR) {
      fprintf(stderr, "ringtraced: poll: %s; stopping\n", strerror(errno));
      return "error";
    }
    if (rc > 0) {
      signalfd_siginfo info;
      if (read(signal_fd, &info, sizeof(info)) != sizeof(info))
        continue;
      if (info.ssi_signo == SIGUSR1) {
        if (service->options().out_path.empty()) {
          fprintf(stderr,
                  "ringtraced: SIGUSR1 ignored: no --out (clone a session "
                  "with the ringtrace CLI instead)\n");
          continue;
        }
        WriteSnapshot(service, ++snapshots);
        continue;
      }
      return StopSignalName(info.ssi_signo);
    }
  }
}

int Main(int argc, char** argv) {
  TracingService::Options options;
  uint32_t duration_ms = 0;
  int nice_value = kNiceUnchanged;
  const int parsed =
      ParseFlags(argc, argv, &options, &duration_ms, &nice_value);
  if (parsed == -2) {
    printf("ringtraced %s (producer protocol %u)\n", base::kRingtraceVersion,
           ipc::kProtocolVersion);
    return kExitOk;
  }
  if (parsed < 0) {
    PrintUsage(stdout, argv[0]);
    return kExitOk;
  }
  if (parsed != kExitOk) {
    PrintUsage(stderr, argv[0]);
    return parsed;
  }

  // The stop signals and SIGUSR1 are blocked in every thread (the service's
  // threads inherit the mask) and read from a signalfd: no signal handler at
  // all. SIGHUP (the terminal closed) and SIGQUIT stop tracing like SIGTERM:
  // the trace is written, never left empty. A SIGHUP that was already
  // ignored when ringtraced started (nohup) stays ignored. SIGPIPE is
  // ignored: writing to a FIFO whose reader left is a reported error.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGQUIT);
  sigaddset(&signals, SIGUSR1);
  struct sigaction hup = {};
  if (sigaction(SIGHUP, nullptr, &hup) != 0 || hup.sa_handler != SIG_IGN)
    sigaddset(&signals, SIGHUP);
  signal(SIGPIPE, SIG_IGN);
  if (sigprocmask(SIG_BLOCK, &signals, nullptr) != 0) {
    fprintf(stderr, "ringtraced: sigprocmask: %s\n", strerror(errno));
    return kExitFailure;
  }
  const base::ScopedFd signal_fd(signalfd(-1, &signals, SFD_CLOEXEC));
  if (!signal_fd.valid()) {
    fprintf(stderr, "ringtraced: signalfd: %s\n", strerror(errno));
    return kExitFailure;
  }

  // Before any thread exists: Linux keeps a niceness per thread, and the
  // service's threads inherit this one's.
  if (nice_value != kNiceUnchanged &&
      setpriority(PRIO_PROCESS, 0, nice_value) != 0) {
    fprintf(stderr, "ringtraced: --nice %d: %s\n", nice_value, strerror(errno));
    return kExitFailure;
  }

  // The default directory of the sockets is created and checked (a
  // directory someone else controls could swap the sockets). A path given
  // by a flag is the user's choice: Listen() reports a missing directory.
  for (const std::string* path :
       {&options.socket_path, &options.consumer_socket_path}) {
    if (*path != ipc::DefaultProducerSocketPath() &&
        *path != ipc::DefaultConsumerSocketPath()) {
      continue;
    }
    const base::Status dir_status = ipc::EnsureSocketDirectory(*path);
    if (!dir_status.ok()) {
      fprintf(stderr, "ringtraced: %s\n", dir_status.message().c_str());
      return kExitFailure;
    }
  }
  TracingService service(options);
  base::Status status = service.Start();
  if (!status.ok()) {
    fprintf(stderr, "ringtraced: %s\n", status.message().c_str());
    return kExitFailure;
  }
  if (options.out_path.empty()) {
    fprintf(stderr, "ringtraced: producers on %s, consumers on %s\n",
            options.socket_path.c_str(), options.consumer_socket_path.c_str());
  } else {
    fprintf(stderr, "ringtraced: listening on %s, writing %s\n",
            options.socket_path.c_str(), options.out_path.c_str());
  }
  const char* why = WaitForEnd(signal_fd.get(), duration_ms, &service);
  fprintf(stderr, "ringtraced: stopping (%s)\n", why ? why : "duration");

  ServiceSummary summary;
  status = service.Stop(&summary);
  fputs(FormatSummary(summary).c_str(), stdout);
  if (!status.ok()) {
    fprintf(stderr, "ringtraced: %s\n", status.message().c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace

int main(int argc, char** argv) {
  return ringtrace::traced::Main(argc, argv);
}
