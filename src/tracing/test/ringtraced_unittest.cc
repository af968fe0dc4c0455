/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtraced as a real process against what a careless or hostile local
// user can put in its way: files at its paths, a second service, signals,
// edge flag values. Each test starts the real binaries.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "ringtrace/producer.h"
#include "src/base/test/other_user.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/trace_processor_stats.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/service/traced/service_core.h"
#include "src/tracing/service/traced/test/test_client.h"
#include "src/tracing/test/ringtraced_process.h"

namespace ringtrace {
namespace test {
namespace {

using base::Subprocess;

// Deadlines against hangs on a loaded machine, not timing assertions.
constexpr int kProcessTimeoutMs = 120000;

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return "<missing>";
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  ASSERT_TRUE(out.good()) << path;
}

class RingtracedTest : public EndToEndFixture {
 protected:
  std::vector<std::string> ServiceArgs(const std::string& socket,
                                       const std::string& out,
                                       std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {bin_ + "/ringtraced", "--socket", socket,
                                     "--out", out};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  // Starts |service| and waits until it accepts connections on |socket|.
  void StartService(Subprocess* service, const std::string& socket) {
    const std::string error =
        StartRingtraced(service, socket, kProcessTimeoutMs);
    ASSERT_TRUE(error.empty()) << error;
  }

  // Runs a process to completion; returns its exit code.
  int RunToEnd(Subprocess* p) {
    std::string error;
    EXPECT_TRUE(p->Start(&error)) << error;
    EXPECT_TRUE(p->Wait(kProcessTimeoutMs)) << p->output();
    return p->exit_code();
  }

  std::vector<std::string> AppArgs(const std::string& socket,
                                   int threads,
                                   int events) {
    return {bin_ + "/ringtrace_example_app",
            "--socket",
            socket,
            "--name",
            "ringtraced_test_app",
            "--threads",
            std::to_string(threads),
            "--events",
            std::to_string(events),
            "--policy",
            "stall",
            "--stall-timeout-ms",
            "30000"};
  }

  // TrackEvents in |path| written by the worker threads of example app
  // |pid| (its main thread's "run" slice, two events, left out).
  uint64_t TrackEventsOf(const std::string& path, pid_t pid) {
    perfetto::protos::Trace trace;
    EXPECT_TRUE(trace.ParseFromString(ReadFile(path))) << path;
    uint64_t n = 0;
    for (const auto& p : trace.packet())
      n += p.trusted_pid() == pid && p.has_track_event() ? 1 : 0;
    return n >= 2 ? n - 2 : 0;
  }

  // The TraceStats of the trace at |path|.
  perfetto::protos::TraceStats StatsOf(const std::string& path) {
    perfetto::protos::Trace trace;
    EXPECT_TRUE(trace.ParseFromString(ReadFile(path))) << path;
    for (const auto& p : trace.packet()) {
      if (p.has_trace_stats())
        return p.trace_stats();
    }
    ADD_FAILURE() << "no TraceStats in " << path;
    return perfetto::protos::TraceStats();
  }
};

// A child process running as |uid| that opens |count| connections to
// |socket| and never says Hello; it reports on |ready_fd| once connected
// and then waits to be killed. Only async-signal-safe calls after fork().
pid_t SpawnIdleConnections(const std::string& socket_path,
                           uid_t uid,
                           int count,
                           int ready_fd) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, socket_path.c_str(), sizeof(addr.sun_path) - 1);
  const pid_t pid = fork();
  if (pid != 0)
    return pid;
  if (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0)
    _exit(3);
  char ok = 1;
  for (int i = 0; i < count; ++i) {
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&addr),
                          sizeof(addr)) != 0) {
      ok = 0;
      break;
    }
  }
  if (write(ready_fd, &ok, 1) != 1)
    _exit(4);
  for (;;)
    pause();
}

// One model of recording: an app on the sessions model (the track_event
// data source, no writer of its own) records into `ringtraced --out` as
// into a consumer's session: the service starts its data source with no
// category lists (Perfetto's default: all but slow/debug-tagged ones), and
// both of the app's categories' events are in FILE.
TEST_F(RingtracedTest, SessionsModelAppRecordsIntoTheOutTrace) {
  Subprocess service(ServiceArgs(socket_, trace_));
  ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
  Subprocess app({bin_ + "/ringtrace_example_app", "--mode", "sessions",
                  "--socket", socket_, "--name", "sessions_under_out",
                  "--threads", "2", "--cycle-interval-us", "2000"});
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  // Both workers wrote a cycle with both categories enabled (nonzero
  // instance masks).
  static const std::regex kWorker0(
      "worker-0 masks: example=0x[1-9a-f][0-9a-f]* io=0x[1-9a-f]");
  static const std::regex kWorker1(
      "worker-1 masks: example=0x[1-9a-f][0-9a-f]* io=0x[1-9a-f]");
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(kProcessTimeoutMs);
  bool both = false;
  while (!both && !app.Ended() && std::chrono::steady_clock::now() < deadline) {
    const std::string out = app.output();
    both = std::regex_search(out, kWorker0) && std::regex_search(out, kWorker1);
    if (!both)
      usleep(5000);
  }
  ASSERT_TRUE(both) << app.output();
  app.Signal(SIGTERM);
  ASSERT_TRUE(app.Wait(kProcessTimeoutMs));
  EXPECT_EQ(app.exit_code(), 0) << app.output();
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs)) << service.output();
  ASSERT_EQ(service.exit_code(), 0) << service.output();

  perfetto::protos::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(ReadFile(trace_)));
  uint64_t events = 0;
  std::set<std::string> categories;
  for (const auto& p : trace.packet()) {
    if (p.trusted_pid() != app.pid())
      continue;
    events += p.has_track_event() ? 1 : 0;
    if (p.has_interned_data()) {
      for (const auto& c : p.interned_data().event_categories())
        categories.insert(c.name());
    }
  }
  EXPECT_GT(events, 0u);
  EXPECT_TRUE(categories.count("example")) << events;
  EXPECT_TRUE(categories.count("io")) << events;
}

// `ringtraced --out` is a session like a consumer's: an app on the
// sessions model and an app writing its own writers record into the same
// file, and the service's stop stops the data source (the app acks it:
// the final flush succeeded) before the trace is written, which
// trace_processor imports with no health issue.
TEST_F(RingtracedTest, OutSessionHoldsBothAppModesAndItsStopIsAcked) {
  Subprocess service(ServiceArgs(socket_, trace_));
  ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
  Subprocess sessions_app({bin_ + "/ringtrace_example_app", "--mode",
                           "sessions", "--socket", socket_, "--name",
                           "sessions_app", "--threads", "1",
                           "--cycle-interval-us", "2000"});
  std::string error;
  ASSERT_TRUE(sessions_app.Start(&error)) << error;
  static const std::regex kEnabled("worker-0 masks: example=0x[1-9a-f]");
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(kProcessTimeoutMs);
  while (!std::regex_search(sessions_app.output(), kEnabled) &&
         !sessions_app.Ended() && std::chrono::steady_clock::now() < deadline)
    usleep(5000);
  ASSERT_TRUE(std::regex_search(sessions_app.output(), kEnabled))
      << sessions_app.output();
  Subprocess own_writers_app(AppArgs(socket_, 2, 100));
  EXPECT_EQ(RunToEnd(&own_writers_app), 0) << own_writers_app.output();

  // The service stops while the sessions app runs: it is told to stop its
  // instance, acks, and the trace is written after.
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs)) << service.output();
  ASSERT_EQ(service.exit_code(), 0) << service.output();
  sessions_app.Signal(SIGTERM);
  ASSERT_TRUE(sessions_app.Wait(kProcessTimeoutMs));
  EXPECT_EQ(sessions_app.exit_code(), 0) << sessions_app.output();

  EXPECT_EQ(TrackEventsOf(trace_, own_writers_app.pid()), 2u * 100u);
  perfetto::protos::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(ReadFile(trace_)));
  uint64_t session_events = 0;
  const perfetto::protos::TraceStats* stats = nullptr;
  for (const auto& p : trace.packet()) {
    if (p.trusted_pid() == sessions_app.pid() && p.has_track_event())
      ++session_events;
    if (p.has_trace_stats())
      stats = &p.trace_stats();
  }
  EXPECT_GT(session_events, 0u);
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->final_flush_outcome(),
            perfetto::protos::TraceStats::FINAL_FLUSH_SUCCEEDED);
  EXPECT_EQ(stats->ringtrace_data_source_stop_timeouts(), 0u);

  const std::string tp = test::TraceProcessorShellPath();
  if (tp.empty()) {
    GTEST_SKIP() << "set TRACE_PROCESSOR_SHELL to check the trace's health";
  }
  std::vector<test::TraceProcessorStat> tp_stats;
  ASSERT_TRUE(test::QueryNonZeroStats(tp, trace_, dir_, &tp_stats, &error))
      << error;
  for (const test::TraceProcessorStat& stat : tp_stats) {
    EXPECT_TRUE(stat.severity != "error" && stat.severity != "data_loss")
        << test::Describe(stat);
  }
}

// --socket naming a regular file, a directory or a symlink: refused with
// the path and its kind; nothing is removed or truncated.
TEST_F(RingtracedTest, SocketPathHoldingAnythingButAStaleSocketIsKept) {
  WriteFile(socket_, "not a socket");
  Subprocess on_file(ServiceArgs(socket_, trace_));
  EXPECT_EQ(RunToEnd(&on_file), 1) << on_file.output();
  EXPECT_NE(on_file.output().find(socket_ + " exists and is a regular file"),
            std::string::npos)
      << on_file.output();
  EXPECT_EQ(ReadFile(socket_), "not a socket");
  EXPECT_FALSE(Exists(trace_));
  EXPECT_TRUE(base::TempFilesBeside(trace_).empty());

  const std::string link = dir_ + "/link.sock";
  ASSERT_EQ(symlink(socket_.c_str(), link.c_str()), 0);
  Subprocess on_link(ServiceArgs(link, trace_));
  EXPECT_EQ(RunToEnd(&on_link), 1) << on_link.output();
  EXPECT_NE(on_link.output().find("is a symbolic link"), std::string::npos)
      << on_link.output();
  EXPECT_TRUE(Exists(link));
  EXPECT_EQ(ReadFile(socket_), "not a socket");

  const std::string subdir = dir_ + "/subdir";
  ASSERT_EQ(mkdir(subdir.c_str(), 0700), 0);
  Subprocess on_dir(ServiceArgs(subdir, trace_));
  EXPECT_EQ(RunToEnd(&on_dir), 1) << on_dir.output();
  EXPECT_NE(on_dir.output().find(subdir + " exists and is a directory"),
            std::string::npos)
      << on_dir.output();

  // The same path for both: refused before anything is created.
  WriteFile(trace_, "previous trace");
  Subprocess same(ServiceArgs(trace_, trace_));
  EXPECT_EQ(RunToEnd(&same), 2) << same.output();
  EXPECT_NE(same.output().find("same path"), std::string::npos)
      << same.output();
  EXPECT_EQ(ReadFile(trace_), "previous trace");
}

// A stale socket (its service was killed) is replaced.
TEST_F(RingtracedTest, StaleSocketOfAKilledServiceIsReplaced) {
  Subprocess first(ServiceArgs(socket_, trace_));
  ASSERT_NO_FATAL_FAILURE(StartService(&first, socket_));
  first.Signal(SIGKILL);
  ASSERT_TRUE(first.Wait(kProcessTimeoutMs));
  struct stat st;
  ASSERT_EQ(lstat(socket_.c_str(), &st), 0);
  ASSERT_TRUE(S_ISSOCK(st.st_mode));
  // The killed service's temporary file is its own business: use another
  // output.
  const std::string out2 = dir_ + "/second.pftrace";
  Subprocess second(ServiceArgs(socket_, out2));
  ASSERT_NO_FATAL_FAILURE(StartService(&second, socket_));
  second.Signal(SIGTERM);
  ASSERT_TRUE(second.Wait(kProcessTimeoutMs));
  EXPECT_EQ(second.exit_code(), 0) << second.output();
  EXPECT_FALSE(Exists(socket_)) << "the socket is removed on exit";
}

// A start that fails leaves an existing --out exactly as it was; a live
// service is not disturbed.
TEST_F(RingtracedTest, FailedStartLeavesTheOutputFileUntouched) {
  const std::string other_out = dir_ + "/live.pftrace";
  Subprocess live(ServiceArgs(socket_, other_out));
  ASSERT_NO_FATAL_FAILURE(StartService(&live, socket_));

  WriteFile(trace_, "previous trace");
  Subprocess taken(ServiceArgs(socket_, trace_));
  EXPECT_EQ(RunToEnd(&taken), 1) << taken.output();
  EXPECT_NE(
      taken.output().find("another ringtraced is listening on " + socket_),
      std::string::npos)
      << taken.output();
  EXPECT_EQ(ReadFile(trace_), "previous trace");
  EXPECT_TRUE(base::TempFilesBeside(trace_).empty());

  Subprocess no_dir(ServiceArgs(dir_ + "/no/such/dir/s.sock", trace_));
  EXPECT_EQ(RunToEnd(&no_dir), 1) << no_dir.output();
  EXPECT_EQ(ReadFile(trace_), "previous trace");
  EXPECT_TRUE(base::TempFilesBeside(trace_).empty());

  live.Signal(SIGTERM);
  ASSERT_TRUE(live.Wait(kProcessTimeoutMs));
  EXPECT_EQ(live.exit_code(), 0) << live.output();
}

// Two services with the same --out: each writes through a file of its
// own (no name two writers could share), so each stop puts one complete
// trace in place; the last one stays.
TEST_F(RingtracedTest, TwoServicesWithTheSameOutputNeverMixTheirTraces) {
  WriteFile(trace_, "previous trace");
  Subprocess first(ServiceArgs(socket_, trace_));
  ASSERT_NO_FATAL_FAILURE(StartService(&first, socket_));
  const std::string second_socket = dir_ + "/second.sock";
  Subprocess second(ServiceArgs(second_socket, trace_));
  ASSERT_NO_FATAL_FAILURE(StartService(&second, second_socket));
  // Until one finishes, the previous trace is in place.
  EXPECT_EQ(ReadFile(trace_), "previous trace");

  Subprocess app_one(AppArgs(socket_, 2, 200));
  ASSERT_EQ(RunToEnd(&app_one), 0) << app_one.output();
  Subprocess app_two(AppArgs(second_socket, 1, 100));
  ASSERT_EQ(RunToEnd(&app_two), 0) << app_two.output();
  first.Signal(SIGTERM);
  ASSERT_TRUE(first.Wait(kProcessTimeoutMs));
  ASSERT_EQ(first.exit_code(), 0) << first.output();
  EXPECT_EQ(TrackEventsOf(trace_, app_one.pid()), 2u * 200);
  EXPECT_EQ(TrackEventsOf(trace_, app_two.pid()), 0u);
  second.Signal(SIGTERM);
  ASSERT_TRUE(second.Wait(kProcessTimeoutMs));
  ASSERT_EQ(second.exit_code(), 0) << second.output();
  EXPECT_EQ(TrackEventsOf(trace_, app_two.pid()), 100u);
  EXPECT_EQ(TrackEventsOf(trace_, app_one.pid()), 0u);
  EXPECT_TRUE(base::TempFilesBeside(trace_).empty());
}

// A service killed outright leaves the previous trace in place and nothing
// beside it (its file had no name); the next start with the same output
// writes a complete trace.
TEST_F(RingtracedTest, KilledServiceLeavesThePreviousTraceIntact) {
  WriteFile(trace_, "previous trace");
  Subprocess killed(ServiceArgs(socket_, trace_));
  ASSERT_NO_FATAL_FAILURE(StartService(&killed, socket_));
  killed.Signal(SIGKILL);
  ASSERT_TRUE(killed.Wait(kProcessTimeoutMs));
  EXPECT_EQ(ReadFile(trace_), "previous trace");
  EXPECT_TRUE(base::TempFilesBeside(trace_).empty());

  Subprocess next(ServiceArgs(socket_, trace_));
  ASSERT_NO_FATAL_FAILURE(StartService(&next, socket_));
  EXPECT_EQ(ReadFile(trace_), "previous trace");
  Subprocess app(AppArgs(socket_, 1, 100));
  ASSERT_EQ(RunToEnd(&app), 0) << app.output();
  next.Signal(SIGTERM);
  ASSERT_TRUE(next.Wait(kProcessTimeoutMs));
  ASSERT_EQ(next.exit_code(), 0) << next.output();
  EXPECT_EQ(TrackEventsOf(trace_, app.pid()), 100u);
  EXPECT_TRUE(base::TempFilesBeside(trace_).empty());
}

// Trace files (docs/sessions.md, "Trace files"): the trace and
// its SIGUSR1 snapshot are 0600 and ours even under umask 0 (they used to
// be 0644); with --out-group they are 0640 and that group's.
TEST_F(RingtracedTest, TraceAndSnapshotsAreMode0600UnderUmask0) {
  for (bool group : {false, true}) {
    SCOPED_TRACE(group ? "--out-group" : "no group");
    const gid_t gid = base::CanActAsOtherUser() ? base::kNobodyGid : getegid();
    std::vector<std::string> extra;
    if (group)
      extra = {"--out-group", std::to_string(gid)};
    Subprocess service(ServiceArgs(socket_, trace_, extra));
    const mode_t old_mask = umask(0);  // inherited by the service
    const std::string error =
        StartRingtraced(&service, socket_, kProcessTimeoutMs);
    umask(old_mask);
    ASSERT_TRUE(error.empty()) << error;
    Subprocess app(AppArgs(socket_, 1, 50));
    ASSERT_EQ(RunToEnd(&app), 0) << app.output();
    service.Signal(SIGUSR1);
    const std::string snapshot = trace_ + ".snapshot-1";
    for (int i = 0; i < kProcessTimeoutMs / 10; ++i) {
      if (service.output().find("snapshot 1 written to " + snapshot) !=
          std::string::npos) {
        break;
      }
      usleep(10 * 1000);
    }
    service.Signal(SIGTERM);
    ASSERT_TRUE(service.Wait(kProcessTimeoutMs));
    ASSERT_EQ(service.exit_code(), 0) << service.output();
    for (const std::string& path : {trace_, snapshot}) {
      SCOPED_TRACE(path);
      const base::FileFacts facts = base::Inspect(path);
      ASSERT_TRUE(facts.is_regular) << service.output();
      EXPECT_EQ(facts.mode, group ? 0640u : 0600u);
      EXPECT_EQ(facts.uid, geteuid());
      if (group) {
        EXPECT_EQ(facts.gid, gid);
      }
      perfetto::protos::Trace trace;
      EXPECT_TRUE(trace.ParseFromString(facts.data));
      EXPECT_GT(trace.packet_size(), 0);
      ASSERT_EQ(unlink(path.c_str()), 0);
    }
  }
}

// Another user puts a symbolic link at --out, in a sticky shared
// directory, to a file of ours. ringtraced refuses it with a message that
// says why and how to follow it; the file and the link stay as they are.
// A dangling link too. With --out-symlink follow the trace goes into the
// file the link names (0600, ours), and the link stays.
TEST_F(RingtracedTest, SymlinkAtOutIsRefusedUnlessOutSymlinkFollow) {
  if (!base::CanActAsOtherUser())
    GTEST_SKIP() << base::kNeedsRootMessage;
  const std::string shared = base::MakeSharedStickyDir(dir_);
  ASSERT_FALSE(shared.empty());
  const std::string precious = dir_ + "/precious";
  WriteFile(precious, "my file");
  const std::string link = shared + "/trace.pftrace";
  const std::string dangling = shared + "/dangling.pftrace";
  const std::string nowhere = dir_ + "/nowhere";
  ASSERT_EQ(base::RunAsNobody([&] {
              return symlink(precious.c_str(), link.c_str()) |
                     symlink(nowhere.c_str(), dangling.c_str());
            }),
            0);
  Subprocess refused(ServiceArgs(socket_, link));
  EXPECT_EQ(RunToEnd(&refused), 1) << refused.output();
  EXPECT_NE(refused.output().find(
                "ringtraced: refusing to write " + link +
                ": it is a symbolic link (to " + precious +
                ", owned by uid 65534); a trace file is not written through "
                "a symbolic link; --out-symlink follow writes through it"),
            std::string::npos)
      << refused.output();
  Subprocess refused_dangling(ServiceArgs(socket_, dangling));
  EXPECT_EQ(RunToEnd(&refused_dangling), 1) << refused_dangling.output();
  EXPECT_NE(refused_dangling.output().find("refusing to write " + dangling +
                                           ": it is a symbolic link (to " +
                                           nowhere + ", which does not exist"),
            std::string::npos)
      << refused_dangling.output();
  EXPECT_FALSE(Exists(nowhere));
  EXPECT_EQ(ReadFile(precious), "my file");
  EXPECT_EQ(base::Inspect(link).link_target, precious);
  EXPECT_FALSE(Exists(socket_));

  Subprocess follows(ServiceArgs(socket_, link, {"--out-symlink", "follow"}));
  ASSERT_NO_FATAL_FAILURE(StartService(&follows, socket_));
  Subprocess app(AppArgs(socket_, 1, 100));
  ASSERT_EQ(RunToEnd(&app), 0) << app.output();
  follows.Signal(SIGTERM);
  ASSERT_TRUE(follows.Wait(kProcessTimeoutMs));
  ASSERT_EQ(follows.exit_code(), 0) << follows.output();
  EXPECT_TRUE(base::Inspect(link).is_link);
  const base::FileFacts written = base::Inspect(precious);
  EXPECT_EQ(written.mode, 0600u);
  EXPECT_EQ(written.uid, geteuid());
  EXPECT_EQ(TrackEventsOf(precious, app.pid()), 100u);
  EXPECT_TRUE(base::TempFilesBeside(precious).empty());
}

// Another user's files at the temporary names, old (FILE.ringtraced-tmp,
// which the service used to refuse to start over) and new
// (FILE.ringtrace-tmp), are never opened or removed: the trace is ours and
// 0600, theirs stay as they were.
TEST_F(RingtracedTest, AnotherUsersFilesAtTempNamesAreLeftAlone) {
  if (!base::CanActAsOtherUser())
    GTEST_SKIP() << base::kNeedsRootMessage;
  const std::string shared = base::MakeSharedStickyDir(dir_);
  ASSERT_FALSE(shared.empty());
  const std::string out = shared + "/trace.pftrace";
  const std::vector<std::string> planted = {out + ".ringtraced-tmp",
                                            out + ".ringtrace-tmp"};
  ASSERT_EQ(base::RunAsNobody([&] {
              return base::PlantFile(planted[0].c_str(), "attacker", 0666) |
                     base::PlantFile(planted[1].c_str(), "attacker", 0666);
            }),
            0);
  Subprocess service(ServiceArgs(socket_, out));
  ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
  Subprocess app(AppArgs(socket_, 1, 100));
  ASSERT_EQ(RunToEnd(&app), 0) << app.output();
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs));
  ASSERT_EQ(service.exit_code(), 0) << service.output();
  const base::FileFacts mine = base::Inspect(out);
  EXPECT_EQ(mine.uid, geteuid());
  EXPECT_EQ(mine.mode, 0600u);
  EXPECT_EQ(TrackEventsOf(out, app.pid()), 100u);
  for (const std::string& path : planted) {
    SCOPED_TRACE(path);
    const base::FileFacts theirs = base::Inspect(path);
    EXPECT_EQ(theirs.uid, base::kNobodyUid);
    EXPECT_EQ(theirs.mode, 0666u);
    EXPECT_EQ(theirs.data, "attacker");
  }
}

// A FIFO at --out is written directly (with a reader at the start), as
// before: nothing is created or renamed, the FIFO stays.
TEST_F(RingtracedTest, FifoOutputIsWrittenDirectly) {
  const std::string fifo = dir_ + "/trace.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  std::string received;
  Subprocess service(ServiceArgs(socket_, fifo));
  ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
  // Drained while the service writes (more than a pipe holds).
  std::thread drain([&] {
    for (;;) {
      pollfd p = {reader, POLLIN, 0};
      if (poll(&p, 1, kProcessTimeoutMs) <= 0)
        return;
      char buf[65536];
      const ssize_t n = read(reader, buf, sizeof(buf));
      if (n > 0)
        received.append(buf, static_cast<size_t>(n));
      else if (n == 0 || errno != EAGAIN)
        return;  // the service closed its end
    }
  });
  Subprocess app(AppArgs(socket_, 1, 100));
  EXPECT_EQ(RunToEnd(&app), 0) << app.output();
  service.Signal(SIGTERM);
  EXPECT_TRUE(service.Wait(kProcessTimeoutMs));
  drain.join();
  close(reader);
  ASSERT_EQ(service.exit_code(), 0) << service.output();
  perfetto::protos::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(received));
  uint64_t events = 0;
  for (const auto& p : trace.packet())
    events += p.trusted_pid() == app.pid() && p.has_track_event() ? 1 : 0;
  EXPECT_EQ(events, 100u + 2);  // the main thread's "run" slice: 2 more
  struct stat st = {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_TRUE(base::TempFilesBeside(fifo).empty());
}

// A write error is a failure that names the path.
TEST_F(RingtracedTest, WriteErrorFailsAndNamesThePath) {
  Subprocess service(ServiceArgs(socket_, "/dev/full"));
  ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
  Subprocess app(AppArgs(socket_, 1, 100));
  ASSERT_EQ(RunToEnd(&app), 0) << app.output();
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs));
  EXPECT_EQ(service.exit_code(), 1) << service.output();
  const std::string out = service.output();
  EXPECT_NE(out.find("cannot write /dev/full: write: No space left on device"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("NOT written"), std::string::npos) << out;
  EXPECT_EQ(out.find("fd="), std::string::npos) << out;
  EXPECT_FALSE(Exists(socket_));
}

// SIGHUP (the terminal closed) and SIGQUIT stop tracing like SIGTERM: the
// trace is complete, the socket removed.
TEST_F(RingtracedTest, SighupAndSigquitWriteTheTraceAndRemoveTheSocket) {
  for (int sig : {SIGHUP, SIGQUIT}) {
    SCOPED_TRACE(sig);
    Subprocess service(ServiceArgs(socket_, trace_));
    ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
    Subprocess app(AppArgs(socket_, 2, 150));
    ASSERT_EQ(RunToEnd(&app), 0) << app.output();
    service.Signal(sig);
    ASSERT_TRUE(service.Wait(kProcessTimeoutMs));
    EXPECT_EQ(service.exit_code(), 0) << service.output();
    EXPECT_NE(service.output().find(sig == SIGHUP ? "stopping (SIGHUP)"
                                                  : "stopping (SIGQUIT)"),
              std::string::npos)
        << service.output();
    EXPECT_EQ(TrackEventsOf(trace_, app.pid()), 2u * 150);
    EXPECT_FALSE(Exists(socket_));
    ASSERT_EQ(unlink(trace_.c_str()), 0);
  }
}

// Every accepted flag value works, at both ends of each range; one past
// each end is refused at parse time.
TEST_F(RingtracedTest, EdgeFlagValuesWorkAndOnePastIsRefused) {
  const std::vector<std::vector<std::string>> edges = {
      {"--ring-kb", "1", "--chunk-size", "256"},
      {"--ring-kb", "65536", "--chunk-size", "256"},
      {"--ring-kb", "65536", "--chunk-size", "32768"},
      {"--ring-kb", "1", "--chunk-size", "32768"},
      {"--buffer-kb", "1"},
      {"--buffer-kb", "4194240"},
      {"--max-producers", "1"},
      {"--max-producers", "65535"},
  };
  for (const auto& flags : edges) {
    SCOPED_TRACE(flags[0] + " " + flags[1]);
    Subprocess service(ServiceArgs(socket_, trace_, flags));
    ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
    Subprocess app(AppArgs(socket_, 1, 50));
    EXPECT_EQ(RunToEnd(&app), 0) << app.output();
    service.Signal(SIGTERM);
    ASSERT_TRUE(service.Wait(kProcessTimeoutMs));
    EXPECT_EQ(service.exit_code(), 0) << service.output();
    EXPECT_NE(service.output().find("1 producers seen"), std::string::npos)
        << service.output();
    ASSERT_EQ(unlink(trace_.c_str()), 0);
  }
  const std::vector<std::vector<std::string>> past = {
      {"--ring-kb", "131072"},  {"--buffer-kb", "4194241"},
      {"--buffer-kb", "0"},     {"--chunk-size", "65536"},
      {"--max-producers", "0"}, {"--socket-mode", "1777"},
      {"--socket-mode", "8"},   {"--socket-group", "no_such_group_xyz"},
      {"--out-symlink", "yes"}, {"--out-group", "no_such_group_xyz"},
  };
  for (const auto& flags : past) {
    SCOPED_TRACE(flags[0] + " " + flags[1]);
    Subprocess service(ServiceArgs(socket_, trace_, flags));
    EXPECT_EQ(RunToEnd(&service), 2) << service.output();
    EXPECT_NE(service.output().find(flags[0]), std::string::npos)
        << service.output();
    EXPECT_FALSE(Exists(trace_));
  }
}

// The largest ring the service may serve is what a default producer
// accepts: --ring-kb cannot make every producer refuse its ring.
TEST(RingtracedLimitsTest, LargestServedRingIsWhatAProducerAccepts) {
  EXPECT_EQ(ProducerOptions().max_ring_bytes,
            uint64_t{traced::kMaxRingKb} * 1024);
  traced::RingLimits limits;
  limits.max_ring_bytes = traced::kMaxRingKb * 1024;
  EXPECT_TRUE(traced::ValidateRingLimits(limits).ok());
  limits.max_ring_bytes *= 2;
  EXPECT_FALSE(traced::ValidateRingLimits(limits).ok());
}

// --socket-mode / --socket-group set who may connect; the default is the
// owner only.
TEST_F(RingtracedTest, SocketModeAndGroupAreApplied) {
  {
    Subprocess service(ServiceArgs(socket_, trace_));
    ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
    struct stat st;
    ASSERT_EQ(lstat(socket_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    service.Signal(SIGTERM);
    ASSERT_TRUE(service.Wait(kProcessTimeoutMs));
    ASSERT_EQ(unlink(trace_.c_str()), 0);
  }
  Subprocess service(ServiceArgs(
      socket_, trace_,
      {"--socket-mode", "0660", "--socket-group", std::to_string(getegid())}));
  ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
  struct stat st;
  ASSERT_EQ(lstat(socket_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, getegid());
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs));
  EXPECT_EQ(service.exit_code(), 0) << service.output();
}

// Idle connections of one uid (no Hello) cannot lock other users out: each
// uid may keep 8 pending, the rest are refused, logged and counted, and an
// app of another uid is served meanwhile.
TEST_F(RingtracedTest, IdleConnectionsOfOneUserDoNotLockOthersOut) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to connect as another uid";
  constexpr uid_t kNobody = 65534;
  constexpr int kIdle = 40;
  ASSERT_EQ(chmod(dir_.c_str(), 0711), 0);
  Subprocess service(ServiceArgs(socket_, trace_, {"--socket-mode", "0666"}));
  ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));

  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t idler = SpawnIdleConnections(socket_, kNobody, kIdle, ready[1]);
  ASSERT_GT(idler, 0);
  close(ready[1]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  ASSERT_EQ(ok, 1) << "the idle client could not connect";

  // Another user's app (ours, root) is admitted while they idle.
  Subprocess app(AppArgs(socket_, 2, 100));
  EXPECT_EQ(RunToEnd(&app), 0) << app.output();

  kill(idler, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(idler, &status, 0), idler);
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs));
  ASSERT_EQ(service.exit_code(), 0) << service.output();
  const std::string out = service.output();
  EXPECT_NE(out.find("refused a connection from pid " + std::to_string(idler) +
                     " uid 65534: 8 of its connections (limit 8)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("32 connections refused (32 by the per-uid limit)"),
            std::string::npos)
      << out;
  EXPECT_EQ(TrackEventsOf(trace_, app.pid()), 2u * 100);
  const perfetto::protos::TraceStats stats = StatsOf(trace_);
  EXPECT_EQ(stats.ringtrace_connections_refused(), 32u);
  EXPECT_EQ(stats.ringtrace_connections_refused_per_uid(), 32u);
}

// A producer whose ring breaks the protocol is disconnected, logged and
// counted, not left connected to a ring nobody reads.
TEST_F(RingtracedTest, RingProtocolErrorDisconnectsTheProducer) {
  Subprocess service(ServiceArgs(socket_, trace_));
  ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
  traced::test::TestClient client;
  ASSERT_TRUE(client.Connect(socket_));
  ASSERT_TRUE(client.Hello("ring_breaker"));
  const shm_ring::RingView& view = client.region()->view();
  // A reserved state at position 0, published by moving write_pos (release:
  // pairs with the reader's acquire load of write_pos).
  view.chunk_state(0)->store(0xbad00000u, std::memory_order_relaxed);
  view.write_pos()->store(1, std::memory_order_release);
  ASSERT_TRUE(client.SendDrainRequest());
  EXPECT_TRUE(client.WaitForClose()) << service.output();

  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs));
  ASSERT_EQ(service.exit_code(), 0) << service.output();
  const std::string out = service.output();
  EXPECT_NE(out.find("broke the ring protocol and is no longer read; "
                     "disconnecting"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("1 producers disconnected for a ring protocol error"),
            std::string::npos)
      << out;
  const perfetto::protos::TraceStats stats = StatsOf(trace_);
  EXPECT_EQ(stats.ringtrace_producers_disconnected_ring_error(), 1u);
  EXPECT_EQ(stats.ringtrace_rings_stopped_protocol_error(), 1u);
}

// A refused Hello is logged with its reason.
TEST_F(RingtracedTest, RefusedProducerIsLoggedWithTheReason) {
  Subprocess service(ServiceArgs(socket_, trace_, {"--max-producers", "1"}));
  ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
  traced::test::TestClient holder;
  ASSERT_TRUE(holder.Connect(socket_));
  ASSERT_TRUE(holder.Hello("holder"));
  Subprocess app(AppArgs(socket_, 1, 10));
  EXPECT_EQ(RunToEnd(&app), 1) << app.output();
  holder.Disconnect();
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs));
  EXPECT_EQ(service.exit_code(), 0) << service.output();
  EXPECT_NE(service.output().find(
                "pid " + std::to_string(app.pid()) + " uid " +
                std::to_string(getuid()) +
                ": Hello refused (too many producers): max_producers (1) are "
                "connected"),
            std::string::npos)
      << service.output();
  EXPECT_EQ(StatsOf(trace_).ringtrace_hellos_rejected(), 1u);
}

// Short-lived producers as real processes: more lifetimes than the
// connection limits, every one admitted, each with its own packets.
TEST_F(RingtracedTest, ManyShortLivedProducersAreAllServed) {
  Subprocess service(ServiceArgs(socket_, trace_, {"--max-producers", "2"}));
  ASSERT_NO_FATAL_FAILURE(StartService(&service, socket_));
  constexpr int kApps = 20;
  std::vector<pid_t> pids;
  for (int i = 0; i < kApps; ++i) {
    Subprocess app(AppArgs(socket_, 1, 20));
    ASSERT_EQ(RunToEnd(&app), 0) << app.output();
    pids.push_back(app.pid());
  }
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs));
  ASSERT_EQ(service.exit_code(), 0) << service.output();
  EXPECT_NE(service.output().find(std::to_string(kApps) + " producers seen"),
            std::string::npos)
      << service.output();
  for (pid_t pid : pids)
    EXPECT_EQ(TrackEventsOf(trace_, pid), 20u) << pid;
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
