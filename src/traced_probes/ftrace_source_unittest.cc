/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The linux.ftrace source against the running kernel: its own tracefs
// instance, periodic drains into a real TraceWriterV2, and the packets as
// a trace file read by Perfetto's trace_processor (when
// $TRACE_PROCESSOR_SHELL names one). Skipped, with what is missing and how
// to get it, where tracefs is not available or the test is not root.

#include "src/traced_probes/ftrace_source.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protos/perfetto/trace/trace.pb.h"
#include "src/base/test/temp_dir.h"
#include "src/base/time.h"
#include "src/traced_probes/ftrace/test/real_tracefs.h"
#include "src/traced_probes/ftrace/tracefs.h"
#include "src/tracing/core/encoding/test/packet_capture.h"
#include "src/tracing/test/trace_processor_stats.h"

namespace ringtrace {
namespace probes {
namespace {

namespace pb = perfetto::protos;
using ftrace::test::PinToFirstCpu;
using ::testing::HasSubstr;

constexpr uint64_t kMs = 1000 * 1000;

uint64_t ThreadCpuNs() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

void SleepMs(uint32_t ms) {
  const struct timespec ts = {0, static_cast<long>(ms) * 1000 * 1000};
  nanosleep(&ts, nullptr);
}

// Writes |text| with one write() to |path| (a trace_marker).
bool WriteMarker(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  const bool ok =
      write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

class FtraceSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!ftrace::test::RealTracefs(&root_, &why))
      GTEST_SKIP() << why;
    base::Status s = ftrace::CleanStaleInstances(
        root_, ftrace::test::kTestInstancePrefix, nullptr);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  std::unique_ptr<FtraceSource> Start(const FtraceOptions& options,
                                      encoding::PacketCapture* capture,
                                      std::vector<std::string>* notes) {
    std::unique_ptr<FtraceSource> source;
    base::Status s =
        FtraceSource::Create(options, capture->writer(), root_,
                             ftrace::test::kTestInstancePrefix, &source, notes);
    EXPECT_TRUE(s.ok()) << s.message();
    return source;
  }

  // What the loop does: Run() when due, until |done| (checked between
  // runs); the packets read back after each run.
  void Pump(FtraceSource* source,
            encoding::PacketCapture* capture,
            const std::function<bool()>& done) {
    const std::atomic<bool> stop{false};
    uint64_t next = 0;
    while (!done()) {
      const uint64_t now = base::MonotonicMs();
      if (now >= next) {
        next = source->Run(now, stop);
        Collect(capture);
      }
      SleepMs(2);
    }
  }

  void Collect(encoding::PacketCapture* capture) {
    uint64_t lost = 0;
    for (const std::string& grouped : capture->Drain(&lost)) {
      std::string flat;
      ASSERT_TRUE(encoding::PacketCapture::Ungroup(grouped, &flat));
      pb::TracePacket* packet = trace_.add_packet();
      ASSERT_TRUE(packet->ParseFromString(flat));
      packet->set_trusted_packet_sequence_id(1);
    }
    EXPECT_EQ(lost, 0u);
  }

  void Stop(std::unique_ptr<FtraceSource> source,
            encoding::PacketCapture* capture) {
    source->Finish();
    Collect(capture);
    const std::string path = root_ + "/instances/" + source->instance_name();
    source.reset();
    struct stat st;
    EXPECT_NE(stat(path.c_str(), &st), 0) << path << " was not removed";
  }

  std::vector<const pb::FtraceStats*> Stats() const {
    std::vector<const pb::FtraceStats*> out;
    for (const pb::TracePacket& p : trace_.packet())
      if (p.has_ftrace_stats())
        out.push_back(&p.ftrace_stats());
    return out;
  }

  std::string WriteTrace() {
    const std::string file = dir_.File("ftrace.pftrace");
    std::ofstream out(file, std::ios::binary);
    EXPECT_TRUE(trace_.SerializeToOstream(&out));
    return file;
  }

  std::string root_;
  base::TempDir dir_;
  pb::Trace trace_;
};

// The config's events: "group/*" expanded, each once; the ones tracefs
// lacks listed in the START_OF_TRACE stats with a note; the instance named
// with the prefix and removed at the end.
TEST_F(FtraceSourceTest, EventsOfTheConfig) {
  encoding::PacketCapture capture(4096, 1024);
  FtraceOptions options;
  options.events = {"sched/sched_switch", "sched/*", "nosuch/event", "nosuch/*",
                    "../../tracing_on"};
  options.buffer_size_kb = 256;
  std::vector<std::string> notes;
  std::unique_ptr<FtraceSource> source = Start(options, &capture, &notes);
  ASSERT_TRUE(source);
  pid_t pid = 0;
  EXPECT_TRUE(ftrace::ParseInstanceName(
      source->instance_name(), ftrace::test::kTestInstancePrefix, &pid));
  EXPECT_EQ(pid, getpid());
  const std::vector<std::string>& enabled = source->enabled_events();
  ASSERT_FALSE(enabled.empty());
  EXPECT_EQ(enabled[0], "sched/sched_switch");
  EXPECT_EQ(std::count(enabled.begin(), enabled.end(), "sched/sched_switch"),
            1);
  EXPECT_NE(std::find(enabled.begin(), enabled.end(), "sched/sched_waking"),
            enabled.end());
  for (const std::string& e : enabled)
    EXPECT_EQ(e.rfind("sched/", 0), 0u) << e;
  const std::string all = ::testing::PrintToString(notes);
  EXPECT_THAT(all, HasSubstr("ftrace_events \\\"nosuch/event\\\""));
  EXPECT_THAT(all, HasSubstr("ftrace_events \\\"nosuch/*\\\""));
  EXPECT_THAT(all, HasSubstr("not group/name"));
  Collect(&capture);
  Stop(std::move(source), &capture);

  const auto stats = Stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0]->phase(), pb::FtraceStats::START_OF_TRACE);
  EXPECT_EQ(stats[1]->phase(), pb::FtraceStats::END_OF_TRACE);
  EXPECT_THAT(stats[0]->unknown_ftrace_events(),
              ::testing::UnorderedElementsAre("nosuch/event", "nosuch/*",
                                              "../../tracing_on"));
  EXPECT_EQ(stats[0]->failed_ftrace_events_size(), 0);
  EXPECT_GT(stats[0]->cpu_buffer_size_pages(), 0u);
  EXPECT_GT(stats[0]->cpu_stats_size(), 0);
  EXPECT_EQ(stats[0]->cpu_stats_size(), stats[1]->cpu_stats_size());
}

// Two instances at once (two sessions): each its own tracefs instance and
// its own events; stopping one leaves the other recording.
TEST_F(FtraceSourceTest, TwoInstancesDoNotFight) {
  encoding::PacketCapture capture_a(4096, 1024);
  encoding::PacketCapture capture_b(4096, 1024);
  FtraceOptions a;
  a.events = {"ftrace/print"};
  a.buffer_size_kb = 64;
  FtraceOptions b = a;
  std::vector<std::string> notes;
  std::unique_ptr<FtraceSource> sa = Start(a, &capture_a, &notes);
  std::unique_ptr<FtraceSource> sb = Start(b, &capture_b, &notes);
  ASSERT_TRUE(sa && sb);
  EXPECT_NE(sa->instance_name(), sb->instance_name());
  const std::string marker_a =
      root_ + "/instances/" + sa->instance_name() + "/trace_marker";
  const std::string marker_b =
      root_ + "/instances/" + sb->instance_name() + "/trace_marker";
  ASSERT_TRUE(WriteMarker(marker_a, "only-in-a"));
  ASSERT_TRUE(WriteMarker(marker_b, "only-in-b"));
  Stop(std::move(sa), &capture_a);
  const pb::Trace trace_a = trace_;
  trace_.Clear();
  ASSERT_TRUE(WriteMarker(marker_b, "b-after-a-stopped"));
  Stop(std::move(sb), &capture_b);

  // This test's markers only: with ftrace/print the instances also get
  // what any process writes to the top-level trace_marker
  // (copy_trace_marker), which another user of this machine may do.
  auto prints = [](const pb::Trace& t) {
    std::vector<std::string> out;
    for (const auto& p : t.packet()) {
      for (const auto& e : p.ftrace_events().event()) {
        if (e.has_print() && (e.print().buf().rfind("only-in-", 0) == 0 ||
                              e.print().buf().rfind("b-after-", 0) == 0)) {
          out.push_back(e.print().buf());
        }
      }
    }
    return out;
  };
  // The kernel ends each marker with a newline.
  EXPECT_THAT(prints(trace_a), ::testing::ElementsAre("only-in-a\n"));
  // Written from whichever CPU this thread was on: bundles of two CPUs.
  EXPECT_THAT(prints(trace_), ::testing::UnorderedElementsAre(
                                  "only-in-b\n", "b-after-a-stopped\n"));
}

// A flush reads what the kernel holds at once: with a drain period of a
// minute, a marker written after the first drain is not in the packets of
// a Run() (not due), and is in those of the Flush() that follows, before
// the source is finished.
TEST_F(FtraceSourceTest, FlushDrainsWhatTheKernelHolds) {
  encoding::PacketCapture capture(4096, 1024);
  FtraceOptions options;
  options.events = {"ftrace/print"};
  options.buffer_size_kb = 64;
  options.drain_period_ms = kMaxFtraceDrainPeriodMs;
  std::vector<std::string> notes;
  std::unique_ptr<FtraceSource> source = Start(options, &capture, &notes);
  ASSERT_TRUE(source);
  const std::atomic<bool> stop{false};
  // The first drain is due at the start; the next one in a minute.
  source->Run(base::MonotonicMs(), stop);
  const std::string marker =
      root_ + "/instances/" + source->instance_name() + "/trace_marker";
  ASSERT_TRUE(WriteMarker(marker, "flush-marker-1"));
  auto prints = [&] {
    std::vector<std::string> out;
    for (const auto& p : trace_.packet())
      for (const auto& e : p.ftrace_events().event())
        if (e.has_print())
          out.push_back(e.print().buf());
    return out;
  };
  source->Run(base::MonotonicMs(), stop);
  Collect(&capture);
  EXPECT_THAT(prints(), ::testing::IsEmpty());
  source->Flush(stop);
  Collect(&capture);
  EXPECT_THAT(prints(), ::testing::ElementsAre("flush-marker-1\n"));
  ASSERT_TRUE(WriteMarker(marker, "flush-marker-2"));
  source->Flush(stop);
  Collect(&capture);
  EXPECT_THAT(prints(),
              ::testing::ElementsAre("flush-marker-1\n", "flush-marker-2\n"));
  EXPECT_EQ(source->counters().flush_drains, 2u);
  // Nothing twice at the end.
  Stop(std::move(source), &capture);
  EXPECT_EQ(prints().size(), 2u);
}

struct PatternResult {
  pid_t tid = 0;
  std::vector<uint64_t> sleeps_ns;  // each nanosleep's wall time
};

// Runs on the first CPU: |kCycles| times, a spin of 20 ms of CPU time
// between atrace markers "B|pid|spin" and "E|pid", then a 30 ms sleep.
constexpr int kCycles = 7;
constexpr uint64_t kSpinNs = 20 * kMs;
constexpr uint32_t kSleepMs = 30;

void SleepAndSpin(const std::string& trace_marker, PatternResult* out) {
  const PinToFirstCpu pin;
  if (!pin.ok())
    return;
  out->tid = static_cast<pid_t>(syscall(SYS_gettid));
  const std::string pid = std::to_string(getpid());
  for (int i = 0; i < kCycles; i++) {
    WriteMarker(trace_marker, "B|" + pid + "|spin");
    const uint64_t begin = ThreadCpuNs();
    while (ThreadCpuNs() - begin < kSpinNs) {
    }
    WriteMarker(trace_marker, "E|" + pid);
    WriteMarker(trace_marker, "C|" + pid + "|cycles|" + std::to_string(i + 1));
    const uint64_t t0 = base::MonotonicNs();
    SleepMs(kSleepMs);
    out->sleeps_ns.push_back(base::MonotonicNs() - t0);
  }
}

class FtraceSourcePatternTest : public FtraceSourceTest,
                                public ::testing::WithParamInterface<bool> {};

// A thread that sleeps and spins in a known pattern, recorded through the
// source with its periodic drains, full or compact_sched: its sched slices
// and thread states in trace_processor have the pattern's durations, its
// atrace markers (written to the top-level trace_marker, as any process
// does) are slices and a counter, and nothing is an import error but the
// kernel's missing idle switches (PinToFirstCpu).
TEST_P(FtraceSourcePatternTest, SleepAndSpinInSchedAndThreadState) {
  const std::string tp = ringtrace::test::TraceProcessorShellPath();
  if (tp.empty())
    GTEST_SKIP() << "no trace_processor_shell: set TRACE_PROCESSOR_SHELL to "
                    "Perfetto's trace_processor_shell";
  const bool compact = GetParam();
  encoding::PacketCapture capture(4096, 4096);
  FtraceOptions options;
  options.events = {"sched/sched_switch", "sched/sched_waking", "ftrace/print"};
  options.buffer_size_kb = 4096;
  options.drain_period_ms = 50;
  options.compact_sched = compact;
  std::vector<std::string> notes;
  std::unique_ptr<FtraceSource> source = Start(options, &capture, &notes);
  ASSERT_TRUE(source);
  const bool copies_markers =
      std::none_of(notes.begin(), notes.end(), [](const std::string& n) {
        return n.find("copy_trace_marker") != std::string::npos;
      });

  PatternResult pattern;
  std::atomic<bool> done{false};
  std::thread worker([&] {
    SleepAndSpin(copies_markers ? root_ + "/trace_marker"
                                : root_ + "/instances/" +
                                      source->instance_name() + "/trace_marker",
                 &pattern);
    done.store(true, std::memory_order_release);  // pairs with the load
  });
  Pump(source.get(), &capture,
       [&] { return done.load(std::memory_order_acquire); });
  worker.join();
  ASSERT_NE(pattern.tid, 0) << "could not pin the worker";
  Stop(std::move(source), &capture);

  size_t bundles = 0;
  size_t compact_switches = 0;
  size_t full_switches = 0;
  std::set<uint32_t> compact_cpus;
  for (const pb::TracePacket& p : trace_.packet()) {
    if (!p.has_ftrace_events())
      continue;
    bundles++;
    if (p.ftrace_events().compact_sched().switch_timestamp_size() > 0)
      compact_cpus.insert(p.ftrace_events().cpu());
    EXPECT_FALSE(p.ftrace_events().lost_events());
    compact_switches += static_cast<size_t>(
        p.ftrace_events().compact_sched().switch_timestamp_size());
    for (const auto& e : p.ftrace_events().event())
      full_switches += e.has_sched_switch();
  }
  // Several drains, not one at the end.
  EXPECT_GE(bundles, 3u);
  if (compact) {
    EXPECT_GT(compact_switches, 0u);
    EXPECT_EQ(full_switches, 0u);
  } else {
    EXPECT_EQ(compact_switches, 0u);
    EXPECT_GT(full_switches, 0u);
  }

  const std::string file = WriteTrace();
  const std::string tid = std::to_string(pattern.tid);
  std::string csv;
  std::string error;
  ASSERT_TRUE(ringtrace::test::RunTraceProcessorQuery(
      tp, file, dir_.path(),
      "select 'switches', count(*) from sched;\n"
      "select 'S', dur from thread_state join thread using(utid) where tid = " +
          tid +
          " and state = 'S' order by ts;\n"
          "select 'running', sum(dur) from sched join thread using(utid) "
          "where tid = " +
          tid +
          ";\n"
          "select case when state = 'S' then 'sleep' when state = 'Running' "
          "then 'run' else 'wait' end, dur from thread_state join thread "
          "using(utid) where tid = " +
          tid +
          " order by ts;\n"
          "select 'spin', dur from slice where name = 'spin' order by ts;\n"

          "select 'cycles', cast(max(value) as int) from counter join "
          "process_counter_track t on counter.track_id = t.id where t.name = "
          "'cycles';\n"
          "select 'skipped', coalesce(sum(value), 0) from stats where name = "
          "'compact_sched_switch_skipped';",
      &csv, &error))
      << error;
  std::istringstream lines(csv);
  std::vector<uint64_t> sleeps;
  std::vector<uint64_t> spins;
  uint64_t running = 0;
  int64_t switches = -1;
  int64_t cycles = -1;
  int64_t skipped = -1;
  // The Running time between one S state of the pattern and the next: the
  // spins of cycles 2..kCycles.
  std::vector<uint64_t> cycle_running;
  bool after_sleep = false;
  for (std::string line; std::getline(lines, line);) {
    std::string key;
    int64_t value = 0;
    const size_t comma = line.find(',');
    if (comma == std::string::npos || line[0] != '"')
      continue;
    key = line.substr(1, comma - 2);
    if (sscanf(line.c_str() + comma + 1, "%" SCNd64, &value) != 1)
      continue;
    if (key == "S")
      sleeps.push_back(static_cast<uint64_t>(value));
    else if (key == "spin")
      spins.push_back(static_cast<uint64_t>(value));
    else if (key == "running")
      running = static_cast<uint64_t>(value);
    else if (key == "switches")
      switches = value;
    else if (key == "cycles")
      cycles = value;
    else if (key == "skipped")
      skipped = value;
    else if (key == "sleep" && value >= static_cast<int64_t>(20 * kMs)) {
      after_sleep = true;
      cycle_running.push_back(0);  // the spin after this sleep
    } else if (key == "run" && after_sleep) {
      cycle_running.back() += static_cast<uint64_t>(value);
    }
  }
  // The states after the last sleep are the thread's end, not a spin.
  if (!cycle_running.empty())
    cycle_running.pop_back();
  if (compact) {
    // The first compact switch of each CPU has no previous switch to take
    // its prev_* from: trace_processor skips it, and says so.
    EXPECT_EQ(switches + skipped, static_cast<int64_t>(compact_switches))
        << csv;
    EXPECT_LE(skipped, static_cast<int64_t>(compact_cpus.size()));
  } else {
    EXPECT_EQ(switches, static_cast<int64_t>(full_switches)) << csv;
  }
  // Each 30 ms sleep is one S state as long as the sleep (the wakeup comes
  // before nanosleep returns), and each spin between two sleeps 20 ms of
  // Running (its CPU time; a little more for the markers). The pattern's
  // sleeps are the S states of 20..200 ms (a last S may be open-ended when
  // the thread ends); the first spin is left out (the thread starts
  // unpinned and moves to its CPU, where its switch in may be one the
  // kernel did not record, PinToFirstCpu).
  //
  // Single cycles are noisy on a shared VM: the host's steal time counts as
  // Running but not as CPU time, and a switch the kernel did not record
  // gives a slice to the wrong task (in compact form more so: a switch has
  // no prev_pid, trace_processor takes the previous switch's next_pid). So
  // the medians are held to tight bounds, and at most one sleep may be
  // missing.
  auto median = [](std::vector<uint64_t> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
  };
  std::vector<uint64_t> pattern_sleeps;
  for (uint64_t d : sleeps)
    if (d >= 20 * kMs && d <= 200 * kMs)
      pattern_sleeps.push_back(d);
  ASSERT_LE(pattern_sleeps.size(), static_cast<size_t>(kCycles)) << csv;
  ASSERT_GE(pattern_sleeps.size(), static_cast<size_t>(kCycles - 1)) << csv;
  EXPECT_GE(median(pattern_sleeps), kSleepMs * kMs - kMs) << csv;
  EXPECT_LE(median(pattern_sleeps), median(pattern.sleeps_ns) + kMs) << csv;
  ASSERT_EQ(cycle_running.size(), pattern_sleeps.size() - 1) << csv;
  EXPECT_GE(median(cycle_running), kSpinNs * 975 / 1000) << csv;
  EXPECT_LE(median(cycle_running), kSpinNs + 5 * kMs) << csv;
  // All its sched slices: about the spins after the first.
  EXPECT_GE(running, (kCycles - 1) * kSpinNs * 9 / 10) << csv;
  // B/E markers: one slice per spin, at least its CPU time long.
  ASSERT_EQ(spins.size(), static_cast<size_t>(kCycles)) << csv;
  for (uint64_t d : spins) {
    EXPECT_GE(d, kSpinNs);
    EXPECT_LE(d, kSpinNs + 100 * kMs);  // preemption on a shared VM
  }
  EXPECT_EQ(cycles, kCycles) << csv;

  std::vector<ringtrace::test::TraceProcessorStat> stats;
  ASSERT_TRUE(
      ringtrace::test::QueryNonZeroStats(tp, file, dir_.path(), &stats, &error))
      << error;
  for (const auto& stat : stats) {
    if (stat.name == "mismatched_sched_switch_tids")
      continue;  // the kernel's idle switches, see PinToFirstCpu
    EXPECT_TRUE(stat.severity != "error" && stat.severity != "data_loss")
        << ringtrace::test::Describe(stat);
  }
  EXPECT_EQ(ringtrace::test::StatValue(stats, "compact_sched_has_parse_errors"),
            0);
}

INSTANTIATE_TEST_SUITE_P(FullAndCompact,
                         FtraceSourcePatternTest,
                         ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "CompactSched" : "Full";
                         });

// A buffer of one page per CPU written far past its size between two
// drains: the bundle after the loss says lost_events, and the END_OF_TRACE
// stats count the overrun exactly as the kernel's per_cpu stats do (and
// trace_processor shows that count).
TEST_F(FtraceSourceTest, OverrunIsCountedAsTheKernelCountedIt) {
  encoding::PacketCapture capture(4096, 1024);
  FtraceOptions options;
  options.events = {"ftrace/print"};
  options.buffer_size_kb = 4;
  std::vector<std::string> notes;
  std::unique_ptr<FtraceSource> source = Start(options, &capture, &notes);
  ASSERT_TRUE(source);
  const std::string instance = root_ + "/instances/" + source->instance_name();

  // Every marker from one CPU, in a child so this thread keeps its
  // affinity.
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed))
    cpu++;
  ASSERT_LT(cpu, CPU_SETSIZE);
  constexpr int kMarkers = 2000;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0)
      _exit(2);
    for (int i = 0; i < kMarkers; i++) {
      if (!WriteMarker(instance + "/trace_marker",
                       "overrun marker " + std::to_string(i) +
                           " padding-padding-padding-padding"))
        _exit(3);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  Collect(&capture);
  source->Finish();
  Collect(&capture);

  // The kernel's own count, read after the source's last drain.
  std::stringstream text;
  {
    // Closed before the instance is removed (an open file keeps it).
    std::ifstream in(instance + "/per_cpu/cpu" + std::to_string(cpu) +
                     "/stats");
    text << in.rdbuf();
  }
  ftrace::CpuStats kernel;
  base::Status s = ftrace::ParseCpuStats(text.str(), &kernel);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_GT(kernel.overrun, 0u);
  EXPECT_EQ(source->counters().overrun, kernel.overrun);
  source.reset();

  const auto stats = Stats();
  ASSERT_EQ(stats.size(), 2u);
  const pb::FtraceCpuStats* start = nullptr;
  const pb::FtraceCpuStats* end = nullptr;
  for (const auto& c : stats[0]->cpu_stats())
    if (c.cpu() == static_cast<uint64_t>(cpu))
      start = &c;
  for (const auto& c : stats[1]->cpu_stats())
    if (c.cpu() == static_cast<uint64_t>(cpu))
      end = &c;
  ASSERT_TRUE(start && end);
  EXPECT_EQ(start->overrun(), 0u);
  EXPECT_EQ(end->overrun(), kernel.overrun);
  EXPECT_EQ(end->dropped_events(), kernel.dropped_events);

  size_t lost_bundles = 0;
  uint64_t markers = 0;
  for (const pb::TracePacket& p : trace_.packet()) {
    if (!p.has_ftrace_events() || p.ftrace_events().cpu() != uint32_t(cpu))
      continue;
    lost_bundles += p.ftrace_events().lost_events();
    for (const auto& e : p.ftrace_events().event())
      markers += e.has_print();
  }
  EXPECT_EQ(lost_bundles, 1u);
  // What was not overwritten was read: written = read + overrun.
  EXPECT_EQ(markers + kernel.overrun, static_cast<uint64_t>(kMarkers));

  const std::string tp = ringtrace::test::TraceProcessorShellPath();
  if (tp.empty())
    return;
  const std::string file = WriteTrace();
  std::vector<ringtrace::test::TraceProcessorStat> tp_stats;
  std::string error;
  ASSERT_TRUE(ringtrace::test::QueryNonZeroStats(tp, file, dir_.path(),
                                                 &tp_stats, &error))
      << error;
  EXPECT_EQ(ringtrace::test::StatValue(tp_stats, "ftrace_cpu_overrun_end", cpu),
            static_cast<int64_t>(kernel.overrun));
  EXPECT_EQ(
      ringtrace::test::StatValue(tp_stats, "ftrace_cpu_overrun_delta", cpu),
      static_cast<int64_t>(kernel.overrun));
}

}  // namespace
}  // namespace probes
}  // namespace ringtrace
