/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The `ringtrace` binary against real processes: a ringtraced daemon on
// private sockets, ringtrace_example_app processes in their sessions mode
// (ringtrace::Tracing + the track_event data source; categories "example"
// and "io") and `ringtrace` processes. Two sessions at once, Ctrl-C,
// snapshots and --clone, --query, a malformed config. The trace files are
// decoded with the generated perfetto::protos::Trace classes.
//
// Waiting is polling against bounded deadlines (the service's state through
// a ConsumerClient, a process's output), never a fixed sleep.

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "src/base/scoped_fd.h"
#include "src/base/test/other_user.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/temp_dir.h"
#include "src/base/test/trace_processor_stats.h"
#include "src/base/time.h"
#include "src/tools/ringtrace_cli/cli_options.h"
#include "src/tools/ringtrace_cli/service_state_format.h"
#include "src/tools/ringtrace_cli/test/pipe_capture.h"
#include "src/tracing/consumer/consumer_client.h"
#include "src/tracing/service/trace_export/test/inflate.h"

namespace ringtrace {
namespace cli {
namespace {

using base::Subprocess;
using perfetto::protos::TracePacket;
using ringtrace::protos::ServiceState;

// Deadlines against hangs on a loaded machine, not timing assertions.
constexpr int kTimeoutMs = 60000;
constexpr uint32_t kSeqIncrementalStateCleared = 1;

// What a trace file holds, decoded.
struct TraceContents {
  bool parsed = false;
  std::vector<TracePacket> packets;
  // TrackEvents with a category, by their category's name (resolved
  // through the sequence's interned data); events whose iid does not
  // resolve count as "<unresolved>".
  std::map<std::string, uint64_t> events_by_category;
  std::set<std::string> thread_names;   // thread TrackDescriptors
  std::set<std::string> process_names;  // process TrackDescriptors
  std::set<int32_t> event_pids;         // trusted_pid of TrackEvent packets
  size_t trace_configs = 0;
  size_t trace_stats = 0;
};

TraceContents ReadTraceBytes(const std::string& bytes) {
  TraceContents contents;
  perfetto::protos::Trace trace;
  contents.parsed = trace.ParseFromString(bytes);
  // Interned categories per sequence, as a reader resolves them.
  std::map<uint32_t, std::map<uint64_t, std::string>> categories;
  for (const TracePacket& p : trace.packet()) {
    contents.packets.push_back(p);
    contents.trace_configs += p.has_trace_config();
    contents.trace_stats += p.has_trace_stats();
    auto& seq = categories[p.trusted_packet_sequence_id()];
    if (p.sequence_flags() & kSeqIncrementalStateCleared)
      seq.clear();
    for (const auto& c : p.interned_data().event_categories())
      seq[c.iid()] = c.name();
    if (p.has_track_descriptor()) {
      const auto& d = p.track_descriptor();
      if (d.has_thread())
        contents.thread_names.insert(d.thread().thread_name());
      if (d.has_process())
        contents.process_names.insert(d.process().process_name());
    }
    if (!p.has_track_event())
      continue;
    contents.event_pids.insert(p.trusted_pid());
    for (uint64_t iid : p.track_event().category_iids()) {
      auto it = seq.find(iid);
      ++contents
            .events_by_category[it == seq.end() ? "<unresolved>" : it->second];
    }
  }
  return contents;
}

TraceContents ReadTrace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return TraceContents();
  std::stringstream bytes;
  bytes << in.rdbuf();
  return ReadTraceBytes(bytes.str());
}

// Reads a varint at |*pos| of |bytes|; false past the end or over 10 bytes.
bool ReadVarInt(const std::string& bytes, size_t* pos, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 70 && *pos < bytes.size(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>(bytes[(*pos)++]);
    *value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80))
      return true;
  }
  return false;
}

// True if |bytes| is nothing but Trace.packet fields (field 1, length
// delimited) end to end: not a byte of text mixed in, none missing at the
// end. ParseFromString alone would take unknown fields.
bool OnlyTracePackets(const std::string& bytes, size_t* packets) {
  *packets = 0;
  size_t pos = 0;
  while (pos < bytes.size()) {
    uint64_t tag = 0, size = 0;
    if (!ReadVarInt(bytes, &pos, &tag) || tag != ((1u << 3) | 2u) ||
        !ReadVarInt(bytes, &pos, &size) || size > bytes.size() - pos) {
      return false;
    }
    pos += static_cast<size_t>(size);
    ++*packets;
  }
  return true;
}

std::set<std::string> Categories(const TraceContents& t) {
  std::set<std::string> names;
  for (const auto& [name, count] : t.events_by_category)
    names.insert(name);
  return names;
}

uint64_t Count(const TraceContents& t, const std::string& category) {
  auto it = t.events_by_category.find(category);
  return it == t.events_by_category.end() ? 0 : it->second;
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Polls |done| every 10 ms until it holds or |timeout_ms| passed.
bool PollUntil(const std::function<bool()>& done, int timeout_ms = kTimeoutMs) {
  const uint64_t deadline = base::MonotonicMs() + timeout_ms;
  while (!done()) {
    if (base::MonotonicMs() >= deadline)
      return false;
    usleep(10 * 1000);
  }
  return true;
}

class RingtraceCliEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    service_ = std::make_unique<Subprocess>(std::vector<std::string>{
        bin_ + "/ringtraced", "--producer-socket", producer_socket_,
        "--consumer-socket", consumer_socket_});
    std::string error;
    ASSERT_TRUE(service_->Start(&error)) << error;
    // Connected once the service listens (or it exited).
    ASSERT_TRUE(PollUntil([&] {
      base::Status status;
      query_ =
          consumer::ConsumerClient::Connect(consumer_socket_, 1000, &status);
      return query_ != nullptr || service_->Ended();
    }));
    ASSERT_TRUE(query_) << service_->output();
  }

  void TearDown() override {
    for (auto& app : apps_) {
      if (!app->running())
        continue;
      app->Signal(SIGTERM);
      EXPECT_TRUE(app->Wait(kTimeoutMs));
      EXPECT_EQ(app->exit_code(), 0) << app->output();
    }
    query_.reset();
    if (service_ && service_->running()) {
      service_->Signal(SIGTERM);
      EXPECT_TRUE(service_->Wait(kTimeoutMs));
      EXPECT_EQ(service_->exit_code(), 0) << service_->output();
      EXPECT_NE(service_->output().find(" 0 protocol violations"),
                std::string::npos)
          << service_->output();
    }
  }

  // Starts an example app in its sessions mode and waits until the service
  // lists it with its track_event data source.
  Subprocess* StartApp(const std::string& name, uint32_t threads) {
    apps_.push_back(std::make_unique<Subprocess>(std::vector<std::string>{
        bin_ + "/ringtrace_example_app", "--mode", "sessions", "--socket",
        producer_socket_, "--name", name, "--threads", std::to_string(threads),
        "--cycle-interval-us", "5000"}));
    Subprocess* app = apps_.back().get();
    std::string error;
    EXPECT_TRUE(app->Start(&error)) << error;
    EXPECT_TRUE(PollUntil([&] {
      ServiceState state = State();
      for (const auto& p : state.producers()) {
        if (p.name() == name && p.pid() == app->pid() &&
            p.data_sources_size() == 1 && p.data_sources(0) == "track_event") {
          return true;
        }
      }
      return app->Ended();
    }));
    EXPECT_FALSE(app->Ended()) << app->output();
    return app;
  }

  // Starts `ringtrace ARGS --consumer-socket ... --no-progress`; its stdout
  // is |stdout_fd| when one is given (output() then has stderr alone).
  std::unique_ptr<Subprocess> StartCli(std::vector<std::string> args,
                                       int stdout_fd = -1) {
    args.insert(args.begin(), bin_ + "/ringtrace");
    args.insert(args.end(),
                {"--consumer-socket", consumer_socket_, "--no-progress"});
    auto cli = std::make_unique<Subprocess>(args);
    if (stdout_fd >= 0)
      cli->set_stdout_fd(stdout_fd);
    std::string error;
    EXPECT_TRUE(cli->Start(&error)) << error;
    return cli;
  }

  // Runs `ringtrace ARGS --consumer-socket ...` with a pseudo-terminal as
  // its stdin, stdout and stderr, until it exits (killed past kTimeoutMs);
  // its exit status (-1 if killed or not started), what it wrote on the
  // terminal in |*output|.
  int RunOnATerminal(const std::vector<std::string>& args,
                     std::string* output) {
    output->clear();
    int master = -1, slave = -1;
    if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0)
      return -1;
    std::vector<std::string> argv = {bin_ + "/ringtrace"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--consumer-socket", consumer_socket_});
    std::vector<char*> exec_args;
    for (std::string& a : argv)
      exec_args.push_back(&a[0]);
    exec_args.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
      close(master);
      close(slave);
      return -1;
    }
    if (pid == 0) {
      close(master);
      if (dup2(slave, STDIN_FILENO) < 0 || dup2(slave, STDOUT_FILENO) < 0 ||
          dup2(slave, STDERR_FILENO) < 0) {
        _exit(126);
      }
      execv(exec_args[0], exec_args.data());
      _exit(127);
    }
    close(slave);
    // Everything the CLI writes on its terminal, until it closes it.
    const uint64_t deadline = base::MonotonicMs() + kTimeoutMs;
    for (;;) {
      const uint64_t now = base::MonotonicMs();
      if (now >= deadline)
        break;
      pollfd pfd = {master, POLLIN, 0};
      if (poll(&pfd, 1, static_cast<int>(deadline - now)) <= 0)
        continue;
      char buf[4096];
      const ssize_t n = read(master, buf, sizeof(buf));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;  // EIO: every copy of the terminal's slave side is closed
      output->append(buf, static_cast<size_t>(n));
    }
    close(master);
    int wstatus = 0;
    if (waitpid(pid, &wstatus, WNOHANG) != pid) {
      // Still running past the deadline (or it closed its terminal early).
      if (base::MonotonicMs() >= deadline)
        kill(pid, SIGKILL);
      while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
      }
    }
    return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  }

  // Runs `ringtrace ARGS` to its end; its exit code, its output in
  // |*output|.
  int RunCli(std::vector<std::string> args, std::string* output) {
    std::unique_ptr<Subprocess> cli = StartCli(std::move(args));
    EXPECT_TRUE(cli->Wait(kTimeoutMs));
    *output = cli->output();
    return cli->exit_code();
  }

  // Waits for "session N tracing" in |cli|'s output; returns N (0: never).
  static uint64_t WaitForSessionId(Subprocess* cli) {
    static const std::regex kLine("ringtrace: session ([0-9]+) tracing");
    std::smatch match;
    std::string output;
    PollUntil([&] {
      output = cli->output();
      return std::regex_search(output, match, kLine) || cli->Ended();
    });
    return match.empty() ? 0 : std::stoull(match[1].str());
  }

  ServiceState State() {
    ServiceState state;
    base::Status status = query_->QueryServiceState(&state);
    EXPECT_TRUE(status.ok()) << status.message();
    return state;
  }

  // Waits until workers 0..|workers|-1 of |app| each reported a cycle
  // written while the categories asked for were enabled by some session
  // (the app's "worker-I masks: example=0xM io=0xM" lines): from then on
  // those packets are in the ring, so every trace or snapshot taken later
  // holds them.
  static bool WaitForCycles(Subprocess* app,
                            uint32_t workers,
                            bool example,
                            bool io) {
    static const std::regex kLine(
        "worker-([0-9]+) masks: example=0x([0-9a-f]+) io=0x([0-9a-f]+)");
    return PollUntil([&] {
             const std::string output = app->output();
             std::set<uint32_t> done;
             for (std::sregex_iterator it(output.begin(), output.end(), kLine),
                  end;
                  it != end; ++it) {
               const bool example_on = (*it)[2].str() != "0";
               const bool io_on = (*it)[3].str() != "0";
               if ((!example || example_on) && (!io || io_on))
                 done.insert(static_cast<uint32_t>(std::stoul((*it)[1].str())));
             }
             return done.size() == workers || app->Ended();
           }) &&
           !app->Ended();
  }

  // Sends SIGINT to a session's `ringtrace` and expects it to write |out|.
  static void StopWithCtrlC(Subprocess* cli, const std::string& out) {
    cli->Signal(SIGINT);
    ASSERT_TRUE(cli->Wait(kTimeoutMs));
    EXPECT_EQ(cli->exit_code(), kExitOk) << cli->output();
    EXPECT_NE(cli->output().find("ringtrace: wrote " + out + ": "),
              std::string::npos)
        << cli->output();
    EXPECT_TRUE(base::TempFilesBeside(out).empty());
  }

  // The service's metadata of a complete trace file: one SystemInfo (this
  // machine's uname()) and one non-zero TraceUuid, on the service's
  // sequence; the service events start with tracing_started,
  // all_data_sources_started and end with read_tracing_buffers_completed,
  // preceded by tracing_disabled iff the session had stopped (a clone's
  // has not). Returns the uuid.
  static std::pair<int64_t, int64_t> ExpectServiceMetadata(
      const TraceContents& t,
      bool stopped) {
    using Event = perfetto::protos::TracingServiceEvent;
    struct utsname uts = {};
    EXPECT_EQ(uname(&uts), 0);
    int system_infos = 0;
    int uuids = 0;
    std::pair<int64_t, int64_t> uuid;
    std::vector<Event::EventTypeCase> events;
    for (const TracePacket& p : t.packets) {
      if (p.has_system_info()) {
        ++system_infos;
        EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
        EXPECT_EQ(p.system_info().utsname().sysname(), uts.sysname);
        EXPECT_EQ(p.system_info().utsname().release(), uts.release);
        EXPECT_EQ(p.system_info().utsname().version(), uts.version);
        EXPECT_EQ(p.system_info().utsname().machine(), uts.machine);
      }
      if (p.has_trace_uuid()) {
        ++uuids;
        EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
        uuid = {p.trace_uuid().msb(), p.trace_uuid().lsb()};
      }
      if (p.has_service_event()) {
        EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
        events.push_back(p.service_event().event_type_case());
      }
    }
    EXPECT_EQ(system_infos, 1);
    EXPECT_EQ(uuids, 1);
    EXPECT_NE(uuid, std::make_pair(int64_t{0}, int64_t{0}));
    EXPECT_GE(events.size(), 3u);
    if (events.size() < 3)
      return uuid;
    EXPECT_EQ(events[0], Event::kTracingStarted);
    EXPECT_EQ(events[1], Event::kAllDataSourcesStarted);
    EXPECT_EQ(events.back(), Event::kReadTracingBuffersCompleted);
    const bool disabled = events[events.size() - 2] == Event::kTracingDisabled;
    EXPECT_EQ(disabled, stopped);
    return uuid;
  }

  // Checks the structure every complete trace file has: TraceConfig first,
  // one TraceStats with |buffers| BufferStats, a ClockSnapshot last, the
  // service's metadata (ExpectServiceMetadata; |stopped|: the session's own
  // file, not a clone), and every TrackEvent resolved and written by |app|.
  static void ExpectCompleteTrace(const TraceContents& t,
                                  size_t buffers,
                                  const Subprocess& app,
                                  bool stopped = true) {
    ASSERT_TRUE(t.parsed);
    ASSERT_GE(t.packets.size(), 3u);
    EXPECT_TRUE(t.packets.front().has_trace_config());
    EXPECT_EQ(t.trace_configs, 1u);
    EXPECT_EQ(t.trace_stats, 1u);
    EXPECT_TRUE(t.packets[t.packets.size() - 2].has_trace_stats());
    EXPECT_EQ(t.packets[t.packets.size() - 2].trace_stats().buffer_stats_size(),
              static_cast<int>(buffers));
    EXPECT_TRUE(t.packets.back().has_clock_snapshot());
    ExpectServiceMetadata(t, stopped);
    EXPECT_EQ(t.events_by_category.count("<unresolved>"), 0u);
    EXPECT_EQ(t.event_pids, std::set<int32_t>{app.pid()});
  }

  const std::string bin_ = base::ExecutableDir();
  base::TempDir dir_{"ringtrace_cli_e2e"};
  const std::string producer_socket_ = dir_.File("producer.sock");
  const std::string consumer_socket_ = dir_.File("consumer.sock");
  std::unique_ptr<Subprocess> service_;
  std::unique_ptr<consumer::ConsumerClient> query_;
  std::vector<std::unique_ptr<Subprocess>> apps_;
};

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  ASSERT_TRUE(out.good()) << path;
}

TEST_F(RingtraceCliEndToEndTest, TwoSessionsAtOnceEachFileHoldsItsCategories) {
  Subprocess* app = StartApp("cli_e2e_app", 2);
  const std::string out_a = dir_.File("a.pftrace");
  const std::string out_b = dir_.File("b.pftrace");
  const std::string config_b = dir_.File("b.pbtx");
  WriteFile(config_b,
            "buffers { size_kb: 2048 fill_policy: DISCARD }\n"
            "data_sources { config { name: \"track_event\"\n"
            "  track_event_config { disabled_categories: \"*\"\n"
            "                       enabled_categories: \"io\" } } }\n");
  // A: shortcuts, 1 MiB ring buffer, "example"; B: a config file.
  std::unique_ptr<Subprocess> cli_a =
      StartCli({"-t", "0", "-b", "1mb", "-o", out_a, "example"});
  std::unique_ptr<Subprocess> cli_b =
      StartCli({"--txt", "-c", config_b, "-o", out_b});
  const uint64_t id_a = WaitForSessionId(cli_a.get());
  const uint64_t id_b = WaitForSessionId(cli_b.get());
  ASSERT_NE(id_a, 0u) << cli_a->output();
  ASSERT_NE(id_b, 0u) << cli_b->output();
  ASSERT_NE(id_a, id_b);
  // Both run at once, and both workers wrote into both.
  ASSERT_TRUE(WaitForCycles(app, 2, true, true)) << app->output();
  EXPECT_EQ(State().sessions_size(), 2);
  StopWithCtrlC(cli_a.get(), out_a);
  StopWithCtrlC(cli_b.get(), out_b);

  const TraceContents a = ReadTrace(out_a);
  ExpectCompleteTrace(a, 1, *app);
  EXPECT_EQ(Categories(a), std::set<std::string>{"example"});
  EXPECT_EQ(a.packets.front().trace_config().buffers(0).size_kb(), 1024u);
  const TraceContents b = ReadTrace(out_b);
  ExpectCompleteTrace(b, 1, *app);
  EXPECT_EQ(Categories(b), std::set<std::string>{"io"});
  EXPECT_EQ(b.packets.front().trace_config().buffers(0).size_kb(), 2048u);
  EXPECT_EQ(b.packets.front().trace_config().buffers(0).fill_policy(),
            perfetto::protos::TraceConfig::BufferConfig::DISCARD);
  // Both workers wrote into both sessions; nobody else did.
  const std::set<std::string> workers = {"worker-0", "worker-1"};
  EXPECT_EQ(a.thread_names, workers);
  EXPECT_EQ(b.thread_names, workers);
  EXPECT_EQ(a.process_names, std::set<std::string>{"cli_e2e_app"});
  EXPECT_EQ(State().sessions_size(), 0);
}

TEST_F(RingtraceCliEndToEndTest, DeflateConfigWritesCompressedPackets) {
  Subprocess* app = StartApp("cli_e2e_app", 2);
  const std::string out = dir_.File("deflate.pftrace");
  const std::string config = dir_.File("deflate.pbtx");
  WriteFile(config,
            "buffers { size_kb: 4096 }\n"
            "data_sources { config { name: \"track_event\" } }\n"
            "compression_type: COMPRESSION_TYPE_DEFLATE\n");
  std::unique_ptr<Subprocess> cli =
      StartCli({"--txt", "-c", config, "-o", out});
  ASSERT_NE(WaitForSessionId(cli.get()), 0u) << cli->output();
  ASSERT_TRUE(WaitForCycles(app, 2, true, true)) << app->output();
  StopWithCtrlC(cli.get(), out);
  EXPECT_NE(cli->output().find("ringtrace: compressed (deflate): "),
            std::string::npos)
      << cli->output();

  // Every packet of the file is a compressed batch; inflated, they are a
  // complete trace.
  const TraceContents file = ReadTrace(out);
  ASSERT_TRUE(file.parsed);
  ASSERT_GE(file.packets.size(), 1u);
  std::string inflated;
  for (const TracePacket& p : file.packets) {
    ASSERT_TRUE(p.has_compressed_packets());
    inflated += test::Inflate(p.compressed_packets());
  }
  size_t packets = 0;
  EXPECT_TRUE(OnlyTracePackets(inflated, &packets));
  const TraceContents t = ReadTraceBytes(inflated);
  ExpectCompleteTrace(t, 1, *app);
  EXPECT_EQ(t.packets.front().trace_config().compression_type(),
            perfetto::protos::TraceConfig::COMPRESSION_TYPE_DEFLATE);
  EXPECT_EQ(Categories(t), (std::set<std::string>{"example", "io"}));
  struct stat st = {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_LT(static_cast<size_t>(st.st_size), inflated.size());

  // trace_processor reads it: slices, no error or data-loss stat.
  const std::string tp = test::TraceProcessorShellPath();
  if (tp.empty()) {
    GTEST_SKIP() << "no trace_processor_shell: set TRACE_PROCESSOR_SHELL to "
                    "Perfetto's trace_processor_shell";
  }
  std::string csv, error;
  ASSERT_TRUE(test::RunTraceProcessorQuery(
      tp, out, dir_.path(), "select count(*) as n from slice;", &csv, &error))
      << error;
  const size_t nl = csv.find('\n');
  ASSERT_NE(nl, std::string::npos) << csv;
  EXPECT_GT(atoll(csv.c_str() + nl + 1), 0) << csv;
  std::vector<test::TraceProcessorStat> stats;
  ASSERT_TRUE(test::QueryNonZeroStats(tp, out, dir_.path(), &stats, &error))
      << error;
  for (const test::TraceProcessorStat& s : stats)
    EXPECT_NE(s.severity, "error") << test::Describe(s);
}

TEST_F(RingtraceCliEndToEndTest, CtrlCMidSessionWritesACompleteTrace) {
  Subprocess* app = StartApp("cli_e2e_app", 1);
  const std::string out = dir_.File("ctrl_c.pftrace");
  // 10 minutes: only Ctrl-C ends it within the test's deadlines.
  std::unique_ptr<Subprocess> cli =
      StartCli({"-t", "10m", "-o", out, "example,io"});
  const uint64_t id = WaitForSessionId(cli.get());
  ASSERT_NE(id, 0u) << cli->output();
  ASSERT_TRUE(WaitForCycles(app, 1, true, true)) << app->output();
  EXPECT_FALSE(Exists(out));
  StopWithCtrlC(cli.get(), out);
  EXPECT_NE(cli->output().find("ringtrace: stopping (Ctrl-C again to abort)"),
            std::string::npos)
      << cli->output();

  const TraceContents t = ReadTrace(out);
  ExpectCompleteTrace(t, 1, *app);
  EXPECT_EQ(Categories(t), (std::set<std::string>{"example", "io"}));
  EXPECT_EQ(t.packets.front().trace_config().duration_ms(), 600000u);
  EXPECT_EQ(t.thread_names, std::set<std::string>{"worker-0"});
  // The CLI's count is the file's: every packet but the service's own
  // (config, stats, clock snapshots, system info, uuid, service events),
  // which are on the service's sequence, 1.
  size_t service_packets = 0;
  for (const TracePacket& p : t.packets)
    service_packets += p.trusted_packet_sequence_id() == 1;
  EXPECT_NE(cli->output().find(
                ", " + std::to_string(t.packets.size() - service_packets) +
                " packets in "),
            std::string::npos)
      << cli->output() << " file: " << t.packets.size() << " packets, "
      << service_packets << " of the service";
}

TEST_F(RingtraceCliEndToEndTest, SnapshotsWhileTheSessionGoesOn) {
  Subprocess* app = StartApp("cli_e2e_app", 2);
  const std::string out = dir_.File("s.pftrace");
  std::unique_ptr<Subprocess> cli = StartCli({"-t", "10m", "-o", out, "io"});
  const uint64_t id = WaitForSessionId(cli.get());
  ASSERT_NE(id, 0u) << cli->output();
  ASSERT_TRUE(WaitForCycles(app, 2, false, true)) << app->output();

  // --clone from another process of the same user writes a snapshot; a
  // session that does not exist is refused and leaves nothing behind.
  const std::string clone = dir_.File("clone.pftrace");
  std::string output;
  ASSERT_EQ(RunCli({"--clone", std::to_string(id), "-o", clone}, &output),
            kExitOk)
      << output;
  const TraceContents c = ReadTrace(clone);
  ExpectCompleteTrace(c, 1, *app, /*stopped=*/false);
  EXPECT_EQ(Categories(c), std::set<std::string>{"io"});
  const std::string missing = std::to_string(id + 1000);
  const std::string bad_clone = dir_.File("bad_clone.pftrace");
  EXPECT_EQ(RunCli({"--clone", missing, "-o", bad_clone}, &output),
            kExitFailure);
  EXPECT_NE(output.find("ringtrace: cloning session " + missing +
                        " failed: session_id: no session " + missing +
                        " of this user"),
            std::string::npos)
      << output;
  EXPECT_FALSE(Exists(bad_clone));
  EXPECT_TRUE(base::TempFilesBeside(bad_clone).empty());

  // SIGUSR1 to the session's own ringtrace clones it into OUT.snapshot-1.
  cli->Signal(SIGUSR1);
  const std::string snapshot = out + ".snapshot-1";
  ASSERT_TRUE(PollUntil([&] {
    return cli->output().find("ringtrace: wrote snapshot " + snapshot) !=
               std::string::npos ||
           cli->Ended();
  })) << cli->output();
  const TraceContents s = ReadTrace(snapshot);
  ExpectCompleteTrace(s, 1, *app, /*stopped=*/false);
  EXPECT_EQ(Categories(s), std::set<std::string>{"io"});
  // The session goes on, and still writes its own file at the end.
  ASSERT_FALSE(cli->Ended()) << cli->output();
  ASSERT_EQ(State().sessions_size(), 1);
  EXPECT_EQ(State().sessions(0).state(), "started");
  StopWithCtrlC(cli.get(), out);
  const TraceContents t = ReadTrace(out);
  ExpectCompleteTrace(t, 1, *app);
  EXPECT_EQ(Categories(t), std::set<std::string>{"io"});
  // Each clone is a trace of its own: three files, three uuids.
  const auto uuid_c = ExpectServiceMetadata(c, false);
  const auto uuid_s = ExpectServiceMetadata(s, false);
  const auto uuid_t = ExpectServiceMetadata(t, true);
  EXPECT_NE(uuid_c, uuid_s);
  EXPECT_NE(uuid_c, uuid_t);
  EXPECT_NE(uuid_s, uuid_t);
  EXPECT_GT(Count(s, "io"), 0u);
  EXPECT_GE(Count(t, "io"), Count(s, "io"));
}

// `ringtrace --stop` from another process of the same user stops a session
// another `ringtrace` records: that one gets tracing_ended, renames its
// complete file and reports the same packet count as the stopper.
TEST_F(RingtraceCliEndToEndTest, StopFromAnotherProcessCompletesTheOwnersFile) {
  Subprocess* app = StartApp("cli_e2e_app", 1);
  const std::string out = dir_.File("stopped.pftrace");
  std::unique_ptr<Subprocess> cli = StartCli({"-t", "0", "-o", out, "example"});
  const uint64_t id = WaitForSessionId(cli.get());
  ASSERT_NE(id, 0u) << cli->output();
  ASSERT_TRUE(WaitForCycles(app, 1, true, false)) << app->output();

  std::string output;
  const std::string missing = std::to_string(id + 1000);
  EXPECT_EQ(RunCli({"--stop", missing}, &output), kExitFailure);
  EXPECT_NE(output.find("ringtrace: stopping session " + missing +
                        " failed: session_id: no session " + missing +
                        " of this user"),
            std::string::npos)
      << output;
  ASSERT_FALSE(cli->Ended()) << cli->output();

  ASSERT_EQ(RunCli({"--stop", std::to_string(id)}, &output), kExitOk) << output;
  std::smatch stopped;
  ASSERT_TRUE(std::regex_search(
      output, stopped,
      std::regex("ringtrace: stopped session " + std::to_string(id) +
                 ": ([0-9]+) packets, [0-9]+ lost")))
      << output;
  ASSERT_TRUE(cli->Wait(kTimeoutMs));
  EXPECT_EQ(cli->exit_code(), kExitOk) << cli->output();
  EXPECT_NE(cli->output().find("ringtrace: wrote " + out + ": "),
            std::string::npos)
      << cli->output();
  EXPECT_NE(cli->output().find(", " + stopped[1].str() + " packets in "),
            std::string::npos)
      << cli->output() << "\nstopper: " << output;
  EXPECT_TRUE(base::TempFilesBeside(out).empty());
  const TraceContents t = ReadTrace(out);
  ExpectCompleteTrace(t, 1, *app);
  EXPECT_EQ(Categories(t), std::set<std::string>{"example"});
  EXPECT_GT(Count(t, "example"), 0u);
  EXPECT_EQ(State().sessions_size(), 0);
}

// On a terminal the CLI shows a progress line, queried from the service
// once a second. A whole-second duration makes the last query coincide
// with the session's end: the end must still be taken at once (it used to
// wait, printing "session N: not found" every second, until the CLI's own
// deadline a minute later). Runs the CLI under a pseudo-terminal.
TEST_F(RingtraceCliEndToEndTest, OnATerminalAWholeSecondSessionEndsOnTime) {
  StartApp("cli_e2e_app", 1);
  const std::string out = dir_.File("tty.pftrace");
  std::string output;
  EXPECT_EQ(RunOnATerminal({"-t", "2s", "-o", out, "example"}, &output),
            kExitOk)
      << output;
  EXPECT_EQ(output.find("not found"), std::string::npos) << output;
  EXPECT_EQ(output.find("did not end session"), std::string::npos) << output;
  EXPECT_NE(output.find("ringtrace: wrote " + out + ": "), std::string::npos)
      << output;
  EXPECT_GT(Count(ReadTrace(out), "example"), 0u);
}

// -o - on a terminal is refused before anything starts: no session (its
// 10 minutes would outlast the test's deadline), nothing but the message
// on the terminal.
TEST_F(RingtraceCliEndToEndTest, OutDashOnATerminalIsRefusedAtOnce) {
  StartApp("cli_e2e_app", 1);
  std::string output;
  EXPECT_EQ(RunOnATerminal({"-t", "10m", "-o", "-", "example"}, &output),
            kExitFailure)
      << output;
  EXPECT_NE(output.find("ringtrace: -o -: refusing to write the trace to "
                        "stdout: it is a terminal, and a trace is binary "
                        "data; redirect stdout"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("tracing"), std::string::npos) << output;
  EXPECT_EQ(State().sessions_size(), 0);
}

// -o - into a pipe, as `ringtrace -o - ... | consumer`: the pipe gets the
// trace and nothing else (a complete trace of the app, packet fields end to
// end), every message goes to stderr, and SIGUSR1, which has no
// FILE.snapshot-N to write, is refused while the session goes on.
TEST_F(RingtraceCliEndToEndTest, OutDashPipesTheTraceAndKeepsMessagesOnStderr) {
  Subprocess* app = StartApp("cli_e2e_app", 2);
  PipeCapture pipe;
  ASSERT_TRUE(pipe.ok());
  std::unique_ptr<Subprocess> cli =
      StartCli({"-t", "10m", "-o", "-", "example"}, pipe.write_fd());
  pipe.CloseWriteEnd();
  const uint64_t id = WaitForSessionId(cli.get());
  ASSERT_NE(id, 0u) << cli->output();
  ASSERT_TRUE(WaitForCycles(app, 2, true, false)) << app->output();
  cli->Signal(SIGUSR1);
  ASSERT_TRUE(PollUntil([&] {
    return cli->output().find(
               "ringtrace: snapshot 1 not written: the trace "
               "goes to stdout (-o -)") != std::string::npos ||
           cli->Ended();
  })) << cli->output();
  ASSERT_FALSE(cli->Ended()) << cli->output();
  EXPECT_EQ(State().sessions_size(), 1);
  cli->Signal(SIGINT);
  ASSERT_TRUE(cli->Wait(kTimeoutMs));
  const std::string bytes = pipe.Finish();
  const std::string err = cli->output();
  EXPECT_EQ(cli->exit_code(), kExitOk) << err;

  size_t packets = 0;
  EXPECT_TRUE(OnlyTracePackets(bytes, &packets)) << bytes.size() << " bytes";
  const TraceContents t = ReadTraceBytes(bytes);
  ExpectCompleteTrace(t, 1, *app);
  EXPECT_EQ(t.packets.size(), packets);
  EXPECT_EQ(Categories(t), std::set<std::string>{"example"});
  EXPECT_EQ(t.thread_names, (std::set<std::string>{"worker-0", "worker-1"}));
  EXPECT_GT(Count(t, "example"), 0u);
  // stderr: the start line, the stop, the summary with what the pipe got
  // (the app's packets: every packet off the service's sequence, 1).
  size_t service_packets = 0;
  for (const TracePacket& p : t.packets)
    service_packets += p.trusted_packet_sequence_id() == 1;
  EXPECT_NE(err.find("ringtrace: session " + std::to_string(id) + " tracing"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("ringtrace: stopping (Ctrl-C again to abort)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("ringtrace: wrote stdout: " + FormatBytes(bytes.size()) +
                     ", " + std::to_string(t.packets.size() - service_packets) +
                     " packets in "),
            std::string::npos)
      << err;
  EXPECT_FALSE(Exists("-"));
  EXPECT_FALSE(Exists("-.snapshot-1"));
  EXPECT_EQ(State().sessions_size(), 0);
}

TEST_F(RingtraceCliEndToEndTest, QueryListsProducersDataSourcesAndSession) {
  Subprocess* app_a = StartApp("cli_e2e_query_a", 1);
  Subprocess* app_b = StartApp("cli_e2e_query_b", 1);
  const std::string config = dir_.File("q.pbtx");
  WriteFile(config,
            "unique_session_name: \"e2e_query\"\n"
            "buffers { size_kb: 512 }\n"
            "data_sources { config { name: \"track_event\"\n"
            "  track_event_config { enabled_categories: \"*\" } } }\n");
  const std::string out = dir_.File("q.pftrace");
  std::unique_ptr<Subprocess> cli =
      StartCli({"--txt", "-c", config, "-o", out});
  const uint64_t id = WaitForSessionId(cli.get());
  ASSERT_NE(id, 0u) << cli->output();
  ASSERT_TRUE(WaitForCycles(app_a, 1, true, true)) << app_a->output();
  ASSERT_TRUE(WaitForCycles(app_b, 1, true, true)) << app_b->output();

  std::string output;
  ASSERT_EQ(RunCli({"--query"}, &output), kExitOk) << output;
  const std::string uid = std::to_string(getuid());
  const std::string n = "[0-9]+";
  const std::string id_s = std::to_string(id);
  // One row per producer: id, name, pid, uid, ring, data sources.
  const std::vector<std::string> rows = {
      "Producers \\(2\\):",
      n + " +cli_e2e_query_a +" + std::to_string(app_a->pid()) + " +" + uid +
          " +[0-9.]+ [KMG]?i?B +track_event",
      n + " +cli_e2e_query_b +" + std::to_string(app_b->pid()) + " +" + uid +
          " +[0-9.]+ [KMG]?i?B +track_event",
      "Sessions \\(1\\):",
      id_s + " +e2e_query +" + uid + " +started +[0-9.]+s +2 +" + n,
      id_s + " +" + n + " +[0-9.]+ [KMG]?i?B/512\\.0 KiB \\([0-9]+%\\) +ring",
  };
  for (const std::string& row : rows) {
    EXPECT_TRUE(std::regex_search(output, std::regex("(^|\n)" + row + "\n")))
        << row << "\nin:\n"
        << output;
  }
  StopWithCtrlC(cli.get(), out);
}

// Nothing silent (docs/sessions.md): a data source no producer provides is
// named at the start, and a session that recorded nothing says so at the
// end; --fail-on-empty makes that exit 3, the file still written.
TEST_F(RingtraceCliEndToEndTest, UnprovidedDataSourceAndEmptySessionAreTold) {
  Subprocess* app = StartApp("cli_e2e_silent", 1);
  const std::string config = dir_.File("s.pbtx");
  WriteFile(config,
            "duration_ms: 300\n"
            "buffers { size_kb: 512 }\n"
            "data_sources { config { name: \"linux.process_stats\" } }\n"
            "data_sources { config { name: \"track_event\"\n"
            "  track_event_config { enabled_categories: \"*\"\n"
            "    enabled_categories: \"exampel\" } } }\n");
  const std::string out = dir_.File("s.pftrace");
  std::string output;
  ASSERT_EQ(RunCli({"--txt", "-c", config, "-o", out}, &output), kExitOk)
      << output;
  EXPECT_NE(output.find("ringtrace: warning: data source "
                        "\"linux.process_stats\": no connected producer "
                        "provides it"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("\"track_event\": no connected"), std::string::npos)
      << output;
  // A misspelled category, against what the app declared.
  EXPECT_NE(output.find("ringtrace: warning: data source \"track_event\": "
                        "enabled_categories \"exampel\" matches no category "
                        "the connected producers declare (\"example\""),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("recorded no packet"), std::string::npos) << output;
  EXPECT_TRUE(Exists(out));

  // Only a data source nobody provides: the session records no packet.
  const std::string empty_config = dir_.File("e.pbtx");
  WriteFile(empty_config,
            "duration_ms: 200\n"
            "buffers { size_kb: 256 }\n"
            "data_sources { config { name: \"linux.ftrace\" } }\n");
  const std::string empty_out = dir_.File("e.pftrace");
  ASSERT_EQ(RunCli({"--txt", "-c", empty_config, "-o", empty_out}, &output),
            kExitOk)
      << output;
  const std::string empty_line =
      "ringtrace: warning: the session recorded no packet from any producer "
      "(data sources: linux.ftrace)";
  EXPECT_NE(output.find(empty_line), std::string::npos) << output;
  EXPECT_TRUE(Exists(empty_out));

  const std::string failed_out = dir_.File("f.pftrace");
  EXPECT_EQ(
      RunCli({"--txt", "-c", empty_config, "-o", failed_out, "--fail-on-empty"},
             &output),
      kExitEmpty)
      << output;
  EXPECT_NE(output.find(empty_line), std::string::npos) << output;
  EXPECT_TRUE(Exists(failed_out));
  EXPECT_FALSE(app->Ended()) << app->output();
}

TEST_F(RingtraceCliEndToEndTest, MalformedConfigNamesTheLineAndStartsNothing) {
  StartApp("cli_e2e_app", 1);
  const std::string config = dir_.File("bad.pbtx");
  WriteFile(config,
            "buffers { size_kb: 1024 }\n"
            "data_sources {\n"
            "  config {\n"
            "    name: \"track_event\"\n"
            "    track_event_config { enabled_categoriez: \"io\" }\n"
            "  }\n"
            "}\n");
  const std::string out = dir_.File("bad.pftrace");
  std::string output;
  EXPECT_EQ(RunCli({"--txt", "-c", config, "-o", out}, &output), kExitUsage);
  EXPECT_NE(output.find("ringtrace: " + config +
                        ":5:26: data_sources.config.track_event_config."
                        "enabled_categoriez: "),
            std::string::npos)
      << output;
  // Nothing was sent: no session, no instance, no file.
  const ServiceState state = State();
  EXPECT_EQ(state.sessions_size(), 0);
  EXPECT_FALSE(Exists(out));
  EXPECT_TRUE(base::TempFilesBeside(out).empty());
  service_->Signal(SIGTERM);
  ASSERT_TRUE(service_->Wait(kTimeoutMs));
  EXPECT_EQ(service_->exit_code(), 0) << service_->output();
  EXPECT_NE(service_->output().find("0 started, 0 written"), std::string::npos)
      << service_->output();
}

// Trace files (docs/sessions.md, "Trace files"): every file the CLI writes
// -- the session's, a SIGUSR1 snapshot, a --clone, a write_into_file
// stream -- is created 0600 and owned by the user who ran it, even under
// umask 0 (they used to be 0666 minus the umask).
TEST_F(RingtraceCliEndToEndTest, EveryTraceFileIsMode0600UnderUmask0) {
  Subprocess* app = StartApp("cli_e2e_app", 1);
  const std::string out = dir_.File("private.pftrace");
  const std::string clone = dir_.File("private_clone.pftrace");
  const std::string streamed = dir_.File("streamed.pftrace");
  const std::string config = dir_.File("streamed.pbtx");
  WriteFile(config,
            "buffers { size_kb: 1024 }\n"
            "write_into_file: true\n"
            "file_write_period_ms: 100\n"
            "duration_ms: 1000\n"
            "data_sources { config { name: \"track_event\"\n"
            "  track_event_config { disabled_categories: \"*\"\n"
            "                       enabled_categories: \"example\" } } }\n");
  const mode_t old_mask = umask(0);  // inherited by every CLI started here
  std::unique_ptr<Subprocess> cli = StartCli({"-t", "10m", "-o", out, "io"});
  const uint64_t id = WaitForSessionId(cli.get());
  std::string clone_output;
  const int clone_rc =
      id == 0
          ? -1
          : RunCli({"--clone", std::to_string(id), "-o", clone}, &clone_output);
  std::string streamed_output;
  const int streamed_rc =
      RunCli({"--txt", "-c", config, "-o", streamed}, &streamed_output);
  umask(old_mask);
  ASSERT_NE(id, 0u) << cli->output();
  EXPECT_EQ(clone_rc, kExitOk) << clone_output;
  EXPECT_EQ(streamed_rc, kExitOk) << streamed_output;
  ASSERT_TRUE(WaitForCycles(app, 1, false, true)) << app->output();
  cli->Signal(SIGUSR1);
  const std::string snapshot = out + ".snapshot-1";
  ASSERT_TRUE(PollUntil([&] {
    return cli->output().find("ringtrace: wrote snapshot " + snapshot) !=
               std::string::npos ||
           cli->Ended();
  })) << cli->output();
  StopWithCtrlC(cli.get(), out);
  for (const std::string& path : {out, snapshot, clone, streamed}) {
    SCOPED_TRACE(path);
    const base::FileFacts facts = base::Inspect(path);
    ASSERT_TRUE(facts.is_regular);
    EXPECT_EQ(facts.mode, 0600u);
    EXPECT_EQ(facts.uid, geteuid());
    EXPECT_TRUE(ReadTrace(path).parsed);
    EXPECT_TRUE(base::TempFilesBeside(path).empty());
  }
}

// In a sticky shared directory (like /tmp) another user
// pre-creates OUT.ringtrace-tmp (the CLI's old fixed temporary name), mode
// 0666. `ringtrace -o OUT` must not write into it (the old CLI opened it
// with O_TRUNC and the finished trace was the other user's, mode 0666):
// OUT is ours and 0600, their file stays as they left it.
TEST_F(RingtraceCliEndToEndTest, AnotherUsersPreexistingTempIsNeverWritten) {
  if (!base::CanActAsOtherUser())
    GTEST_SKIP() << base::kNeedsRootMessage;
  const std::string shared = base::MakeSharedStickyDir(dir_.path());
  ASSERT_FALSE(shared.empty());
  const std::string out = shared + "/out.pftrace";
  const std::string clone = shared + "/clone.pftrace";
  ASSERT_EQ(base::RunAsNobody([&] {
              return base::PlantFile((out + ".ringtrace-tmp").c_str(),
                                     "attacker", 0666) |
                     base::PlantFile((clone + ".ringtrace-tmp").c_str(),
                                     "attacker", 0666) |
                     base::PlantFile(
                         (out + ".snapshot-1.ringtrace-tmp").c_str(),
                         "attacker", 0666);
            }),
            0);
  Subprocess* app = StartApp("cli_e2e_app", 1);
  std::unique_ptr<Subprocess> cli = StartCli({"-t", "10m", "-o", out, "io"});
  const uint64_t id = WaitForSessionId(cli.get());
  ASSERT_NE(id, 0u) << cli->output();
  ASSERT_TRUE(WaitForCycles(app, 1, false, true)) << app->output();
  std::string output;
  EXPECT_EQ(RunCli({"--clone", std::to_string(id), "-o", clone}, &output),
            kExitOk)
      << output;
  cli->Signal(SIGUSR1);
  ASSERT_TRUE(PollUntil([&] {
    return cli->output().find("ringtrace: wrote snapshot ") !=
               std::string::npos ||
           cli->Ended();
  })) << cli->output();
  StopWithCtrlC(cli.get(), out);
  for (const std::string& path : {out, clone, out + ".snapshot-1"}) {
    SCOPED_TRACE(path);
    const base::FileFacts mine = base::Inspect(path);
    EXPECT_EQ(mine.uid, geteuid());
    EXPECT_EQ(mine.mode, 0600u);
    EXPECT_TRUE(ReadTrace(path).parsed);
    const base::FileFacts theirs = base::Inspect(path + ".ringtrace-tmp");
    EXPECT_EQ(theirs.uid, base::kNobodyUid);
    EXPECT_EQ(theirs.mode, 0666u);
    EXPECT_EQ(theirs.data, "attacker");
  }
  ExpectCompleteTrace(ReadTrace(out), 1, *app);
}

// Another user's symbolic link at -o OUT, to a file
// of ours. Refused before anything is sent, the file and the link
// untouched; --out-symlink follow writes the trace into the file it names.
TEST_F(RingtraceCliEndToEndTest, SymlinkAtOutIsRefusedUnlessOutSymlinkFollow) {
  if (!base::CanActAsOtherUser())
    GTEST_SKIP() << base::kNeedsRootMessage;
  const std::string shared = base::MakeSharedStickyDir(dir_.path());
  ASSERT_FALSE(shared.empty());
  const std::string precious = dir_.File("precious");
  WriteFile(precious, "my file");
  const std::string link = shared + "/out.pftrace";
  const std::string dangling = shared + "/dangling.pftrace";
  const std::string nowhere = dir_.File("nowhere");
  ASSERT_EQ(base::RunAsNobody([&] {
              return symlink(precious.c_str(), link.c_str()) |
                     symlink(nowhere.c_str(), dangling.c_str());
            }),
            0);
  Subprocess* app = StartApp("cli_e2e_app", 1);
  std::string output;
  EXPECT_EQ(RunCli({"-t", "1s", "-o", link, "example"}, &output), kExitFailure);
  EXPECT_NE(output.find("ringtrace: refusing to write " + link +
                        ": it is a symbolic link (to " + precious +
                        ", owned by uid 65534); a trace file is not written "
                        "through a symbolic link; --out-symlink follow "
                        "writes through it"),
            std::string::npos)
      << output;
  EXPECT_EQ(RunCli({"-t", "1s", "-o", dangling, "example"}, &output),
            kExitFailure);
  EXPECT_NE(output.find("refusing to write " + dangling +
                        ": it is a symbolic link (to " + nowhere +
                        ", which does not exist"),
            std::string::npos)
      << output;
  EXPECT_FALSE(Exists(nowhere));
  EXPECT_EQ(base::Inspect(precious).data, "my file");
  EXPECT_EQ(base::Inspect(link).link_target, precious);
  EXPECT_EQ(State().sessions_size(), 0);

  std::unique_ptr<Subprocess> cli =
      StartCli({"-t", "10m", "-o", link, "--out-symlink", "follow", "example"});
  ASSERT_NE(WaitForSessionId(cli.get()), 0u) << cli->output();
  ASSERT_TRUE(WaitForCycles(app, 1, true, false)) << app->output();
  StopWithCtrlC(cli.get(), link);
  ASSERT_TRUE(base::Inspect(link).is_link);
  const base::FileFacts written = base::Inspect(precious);
  EXPECT_EQ(written.mode, 0600u);
  EXPECT_EQ(written.uid, geteuid());
  ExpectCompleteTrace(ReadTrace(precious), 1, *app);
  EXPECT_TRUE(base::TempFilesBeside(precious).empty());
  EXPECT_TRUE(base::TempFilesBeside(link).empty());
}

// The CLI writes regular files only (the service takes nothing else): a
// FIFO at -o is refused and stays a FIFO, instead of being replaced.
TEST_F(RingtraceCliEndToEndTest, FifoAtOutIsRefusedAndKept) {
  const std::string fifo = dir_.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string output;
  EXPECT_EQ(RunCli({"-t", "1s", "-o", fifo}, &output), kExitFailure);
  EXPECT_NE(output.find("cannot write " + fifo +
                        ": it is a FIFO (only a "
                        "regular file can be written here)"),
            std::string::npos)
      << output;
  struct stat st = {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// Which of the app's three categories a session enables.
struct Wanted {
  bool example;
  bool io;
  bool detail;  // "example.detail", tagged "slow"
};

// Waits until worker 0 of |app| reported, in its output after byte
// |from|, a cycle whose masks enable exactly |wanted| (example_app.h,
// on_masks_changed): from then on such a cycle's packets are in the ring.
bool WaitForMasks(Subprocess* app, size_t from, Wanted wanted) {
  static const std::regex kLine(
      "worker-0 masks: example=0x([0-9a-f]+) io=0x([0-9a-f]+) "
      "detail=0x([0-9a-f]+)");
  return PollUntil([&] {
           const std::string output = app->output();
           if (output.size() <= from)
             return app->Ended();
           const std::string fresh = output.substr(from);
           for (std::sregex_iterator it(fresh.begin(), fresh.end(), kLine), end;
                it != end; ++it) {
             if (((*it)[1].str() != "0") == wanted.example &&
                 ((*it)[2].str() != "0") == wanted.io &&
                 ((*it)[3].str() != "0") == wanted.detail) {
               return true;
             }
           }
           return app->Ended();
         }) &&
         !app->Ended();
}

// Perfetto's TrackEventConfig idioms mean here what they mean there: no
// track_event_config records every category but the slow one;
// disabled_categories "*" with one enabled category records that one; the
// "slow"-tagged category is recorded only when enabled_tags asks for it.
// One session at a time, each recorded until its categories were written.
TEST_F(RingtraceCliEndToEndTest,
       TrackEventConfigIdiomsSelectTheAppsCategories) {
  Subprocess* app = StartApp("cli_e2e_idioms", 1);
  const std::string buffer = "buffers { size_kb: 1024 }\n";
  const std::string source = "data_sources { config { name: \"track_event\"";
  struct Case {
    const char* name;
    std::string config;
    Wanted wanted;
    std::set<std::string> categories;
  };
  const std::vector<Case> cases = {
      {"no track_event_config",
       buffer + source + " } }\n",
       {true, true, false},
       {"example", "io"}},
      {"disabled * and one enabled",
       buffer + source +
           " track_event_config { disabled_categories: \"*\" "
           "enabled_categories: \"io\" } } }\n",
       {false, true, false},
       {"io"}},
      {"enabled_tags slow",
       buffer + source + " track_event_config { enabled_tags: \"slow\" } } }\n",
       {true, true, true},
       {"example", "io", "example.detail"}},
      {"disabled * and enabled_tags slow",
       buffer + source +
           " track_event_config { disabled_categories: \"*\" "
           "enabled_tags: \"slow\" } } }\n",
       {false, false, true},
       {"example.detail"}},
      {"its name enables the slow category",
       buffer + source +
           " track_event_config { disabled_categories: \"*\" "
           "enabled_categories: \"example.*\" "
           "enabled_categories: \"example.detail\" } } }\n",
       {false, false, true},
       {"example.detail"}},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string config = dir_.File("idiom" + std::to_string(n) + ".pbtx");
    const std::string out = dir_.File("idiom" + std::to_string(n) + ".pftrace");
    n++;
    WriteFile(config, c.config);
    const size_t from = app->output().size();
    std::unique_ptr<Subprocess> cli =
        StartCli({"--txt", "-c", config, "-o", out});
    ASSERT_NE(WaitForSessionId(cli.get()), 0u) << cli->output();
    ASSERT_TRUE(WaitForMasks(app, from, c.wanted)) << app->output();
    StopWithCtrlC(cli.get(), out);
    const TraceContents t = ReadTrace(out);
    ExpectCompleteTrace(t, 1, *app);
    EXPECT_EQ(Categories(t), c.categories);
    // The session is gone before the next one starts (its masks with it).
    ASSERT_TRUE(PollUntil([&] { return State().sessions_size() == 0; }));
  }
}

// The app's declared categories (names, descriptions, tags) reach the
// service and `ringtrace --query` lists them.
TEST_F(RingtraceCliEndToEndTest, QueryListsTheAppsDeclaredCategories) {
  Subprocess* app = StartApp("cli_e2e_categories", 1);
  ServiceState state;
  ASSERT_TRUE(PollUntil([&] {
    state = State();
    return state.producers_size() == 1 &&
           state.producers(0).categories_size() == 1 &&
           state.producers(0).categories(0).categories_size() == 3;
  })) << state.DebugString();
  EXPECT_EQ(state.producers(0).pid(), app->pid());
  const auto& list = state.producers(0).categories(0);
  EXPECT_EQ(list.data_source(), "track_event");
  std::map<std::string, ServiceState::Category> by_name;
  for (const auto& c : list.categories())
    by_name[c.name()] = c;
  ASSERT_EQ(by_name.count("example.detail"), 1u);
  EXPECT_EQ(by_name["example.detail"].description(),
            "A checksum instant per cycle (verbose)");
  ASSERT_EQ(by_name["example.detail"].tags_size(), 1);
  EXPECT_EQ(by_name["example.detail"].tags(0), "slow");
  EXPECT_EQ(by_name["io"].tags_size(), 0);
  EXPECT_FALSE(by_name["io"].description().empty());

  std::string output;
  ASSERT_EQ(RunCli({"--query"}, &output), kExitOk) << output;
  const std::string id = std::to_string(state.producers(0).id());
  for (const std::string& row :
       {std::string("Categories \\(3\\):"),
        id + " +track_event +example +- +Frames of the example workers",
        id + " +track_event +io +- +Reads of the example workers",
        id + " +track_event +example\\.detail +slow +A checksum instant per "
             "cycle \\(verbose\\)"}) {
    EXPECT_TRUE(std::regex_search(output, std::regex("(^|\n)" + row)))
        << row << "\nin:\n"
        << output;
  }
}

// Perfetto's detach mode with real processes: `--detach` starts the
// session and exits; the app keeps recording into it; `--is_detached`
// finds it; `--attach --stop` from another ringtrace ends it; the file
// given at the detach holds the app's events.
TEST_F(RingtraceCliEndToEndTest, DetachThenAttachStopWritesTheTrace) {
  Subprocess* app = StartApp("detached_app", 2);
  const std::string out = dir_.File("detached.pftrace");
  std::string output;
  ASSERT_EQ(
      RunCli({"--detach", "e2e.key", "-t", "0", "-o", out, "example"}, &output),
      kExitOk)
      << output;
  EXPECT_NE(output.find("detached as e2e.key"), std::string::npos) << output;
  EXPECT_TRUE(Exists(out)) << "in place at the detach";
  EXPECT_TRUE(WaitForCycles(app, 2, /*example=*/true, /*io=*/false));
  EXPECT_EQ(RunCli({"--is_detached", "e2e.key"}, &output), kExitOk) << output;
  EXPECT_EQ(RunCli({"--is_detached", "other"}, &output), kExitNotDetached)
      << output;
  ASSERT_EQ(RunCli({"--attach", "e2e.key", "--stop"}, &output), kExitOk)
      << output;
  EXPECT_NE(output.find("attached to session"), std::string::npos) << output;
  EXPECT_NE(output.find(" ended: "), std::string::npos) << output;
  EXPECT_EQ(RunCli({"--is_detached", "e2e.key"}, &output), kExitNotDetached);
  const TraceContents t = ReadTrace(out);
  EXPECT_GT(Count(t, "example"), 0u);
  EXPECT_EQ(Count(t, "io"), 0u);
  ExpectServiceMetadata(t, /*stopped=*/true);
}

// A detached session that ends by its duration: `--attach` reports the
// end it missed, at once.
TEST_F(RingtraceCliEndToEndTest, AttachToASessionThatEndedReportsIt) {
  StartApp("ended_app", 1);
  const std::string out = dir_.File("ended.pftrace");
  std::string output;
  ASSERT_EQ(
      RunCli({"--detach", "short", "-t", "1s", "-o", out, "example"}, &output),
      kExitOk)
      << output;
  ASSERT_TRUE(PollUntil([&] { return State().sessions_size() == 0; }));
  ASSERT_EQ(RunCli({"--attach", "short"}, &output), kExitOk) << output;
  EXPECT_NE(output.find(" ended: "), std::string::npos) << output;
  EXPECT_GT(Count(ReadTrace(out), "example"), 0u);
}

// --background: the command prints the tracing process's pid and returns;
// SIGTERM to that pid writes the trace.
TEST_F(RingtraceCliEndToEndTest, BackgroundPrintsThePidAndTracesOn) {
  Subprocess* app = StartApp("bg_app", 1);
  const std::string out = dir_.File("bg.pftrace");
  const std::string pid_file = dir_.File("bg.pid");
  const base::ScopedFd pid_fd(
      open(pid_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  ASSERT_TRUE(pid_fd.valid());
  std::unique_ptr<Subprocess> cli =
      StartCli({"--background", "-t", "0", "-o", out, "example"}, pid_fd.get());
  ASSERT_TRUE(cli->Wait(kTimeoutMs));
  ASSERT_EQ(cli->exit_code(), kExitOk) << cli->output();
  std::ifstream pid_in(pid_file);
  long pid_value = 0;
  ASSERT_TRUE(pid_in >> pid_value) << "no pid on stdout";
  const pid_t pid = static_cast<pid_t>(pid_value);
  ASSERT_GT(pid, 0);
  // Whatever happens below, the tracing process does not outlive the test.
  struct KillAtExit {
    pid_t pid;
    ~KillAtExit() {
      if (kill(pid, 0) == 0)
        kill(pid, SIGKILL);
    }
  } kill_at_exit{pid};
  ASSERT_TRUE(PollUntil([&] { return State().sessions_size() == 1; }));
  // The app wrote a cycle into the session before it is stopped.
  ASSERT_TRUE(WaitForCycles(app, 1, /*example=*/true, /*io=*/false));
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  // Not our child: its end shows as the trace in place and no session.
  ASSERT_TRUE(PollUntil([&] {
    return Exists(out) && State().sessions_size() == 0 && kill(pid, 0) != 0;
  }));
  EXPECT_GT(Count(ReadTrace(out), "example"), 0u);
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
