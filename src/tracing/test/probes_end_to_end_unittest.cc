/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_probes against real processes: a ringtraced daemon on private
// sockets, the ringtrace_probes binary as its producer, and two consumer
// sessions at once (ConsumerClient), one with linux.process_stats and
// linux.sys_stats, one with a different linux.sys_stats config; and a
// session of linux.ftrace (the running kernel's events; root and tracefs). The
// trace files are decoded with the generated perfetto::protos::Trace classes
// and, when $TRACE_PROCESSOR_SHELL names one, loaded into trace_processor.
//
// The sessions record for about 1.5 s (the window the probes get to poll
// in); what is checked is what the trace holds, never how many polls fit
// in the window beyond the first, which every instance writes when it
// starts.

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/trace_processor_stats.h"
#include "src/traced_probes/ftrace/test/real_tracefs.h"
#include "src/tracing/test/sessions_lifecycle_fixture.h"

namespace ringtrace {
namespace test {
namespace {

using perfetto::protos::TraceConfig;
using perfetto::protos::TracePacket;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// /proc/self/cmdline split at its NULs.
std::vector<std::string> OwnCmdline() {
  const std::string raw = ReadFile("/proc/self/cmdline");
  std::vector<std::string> args;
  size_t pos = 0;
  while (pos < raw.size()) {
    size_t end = raw.find('\0', pos);
    if (end == std::string::npos)
      end = raw.size();
    args.push_back(raw.substr(pos, end - pos));
    pos = end + 1;
  }
  return args;
}

// The "cpuN" lines of /proc/stat.
size_t CpuLines() {
  std::istringstream stat(ReadFile("/proc/stat"));
  size_t n = 0;
  for (std::string line; std::getline(stat, line);)
    n += line.size() > 3 && line.compare(0, 3, "cpu") == 0 && line[3] != ' ';
  return n;
}

std::vector<TracePacket> ReadTrace(const std::string& path) {
  perfetto::protos::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(ReadFile(path))) << path;
  return {trace.packet().begin(), trace.packet().end()};
}

class ProbesEndToEndTest : public SessionsLifecycleFixture {
 protected:
  // Starts ringtrace_probes on socket_ and waits until the service lists it
  // with its three data sources.
  std::unique_ptr<base::Subprocess> StartProbes(consumer::ConsumerClient* c) {
    auto probes = std::make_unique<base::Subprocess>(std::vector<std::string>{
        bin_ + "/ringtrace_probes", "--producer-socket", socket_});
    std::string error;
    EXPECT_TRUE(probes->Start(&error)) << error;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(kTimeoutMs);
    while (std::chrono::steady_clock::now() < deadline && !probes->Ended()) {
      protos::ServiceState state;
      EXPECT_TRUE(c->QueryServiceState(&state).ok());
      for (const auto& p : state.producers()) {
        std::set<std::string> names(p.data_sources().begin(),
                                    p.data_sources().end());
        if (p.pid() == probes->pid() && p.name() == "ringtrace_probes" &&
            names == std::set<std::string>{"linux.ftrace",
                                           "linux.process_stats",
                                           "linux.sys_stats"}) {
          return probes;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "ringtrace_probes did not register: " << probes->output();
    return nullptr;
  }
};

TEST_F(ProbesEndToEndTest, ProcessAndSystemStatsOfRealProcesses) {
  std::unique_ptr<base::Subprocess> service = StartService({});
  ASSERT_TRUE(service);
  std::unique_ptr<consumer::ConsumerClient> c = ConnectConsumer();
  ASSERT_TRUE(c);
  std::unique_ptr<base::Subprocess> probes = StartProbes(c.get());
  ASSERT_TRUE(probes);

  // Session A: the process tree, process counters, meminfo and /proc/stat.
  TraceConfig a;
  a.add_buffers()->set_size_kb(8192);
  auto* ps = a.add_data_sources()->mutable_config();
  ps->set_name("linux.process_stats");
  ps->mutable_process_stats_config()->set_scan_all_processes_on_start(true);
  ps->mutable_process_stats_config()->set_record_thread_names(true);
  ps->mutable_process_stats_config()->set_proc_stats_poll_ms(100);
  auto* ss = a.add_data_sources()->mutable_config();
  ss->set_name("linux.sys_stats");
  ss->mutable_sys_stats_config()->set_meminfo_period_ms(100);
  ss->mutable_sys_stats_config()->add_meminfo_counters(
      perfetto::protos::MEMINFO_MEM_TOTAL);
  ss->mutable_sys_stats_config()->add_meminfo_counters(
      perfetto::protos::MEMINFO_MEM_AVAILABLE);
  ss->mutable_sys_stats_config()->set_stat_period_ms(100);
  // Session B at the same time: another instance of linux.sys_stats with a
  // config of its own (vmstat only).
  TraceConfig b;
  b.add_buffers()->set_size_kb(1024);
  auto* vs = b.add_data_sources()->mutable_config();
  vs->set_name("linux.sys_stats");
  vs->mutable_sys_stats_config()->set_vmstat_period_ms(200);
  vs->mutable_sys_stats_config()->add_vmstat_counters(
      perfetto::protos::VMSTAT_PGFAULT);

  const std::string path_a = dir_ + "/probes_a.pftrace";
  const std::string path_b = dir_ + "/probes_b.pftrace";
  base::ScopedFd fd_a = CreateTraceFile(path_a);
  base::ScopedFd fd_b = CreateTraceFile(path_b);
  uint64_t id_a = 0, id_b = 0;
  ASSERT_TRUE(c->EnableTracing(a, fd_a.get(), &id_a).ok());
  ASSERT_TRUE(c->EnableTracing(b, fd_b.get(), &id_b).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  protos::SessionSummary summary;
  ASSERT_TRUE(c->DisableTracing(id_b, kTimeoutMs, &summary).ok());
  ASSERT_TRUE(c->DisableTracing(id_a, kTimeoutMs, &summary).ok());

  probes->Signal(SIGTERM);
  ASSERT_TRUE(probes->Wait(kTimeoutMs));
  EXPECT_EQ(probes->exit_code(), 0) << probes->output();
  const std::string log = probes->output();
  EXPECT_NE(log.find("linux.process_stats instance"), std::string::npos) << log;
  EXPECT_EQ(log.find("config:"), std::string::npos) << log;  // all honoured
  c.reset();
  StopService(service.get(), "ringtraced");

  // Session A.
  const pid_t me = getpid();
  bool me_described = false, me_thread = false, me_counters = false;
  size_t trees = 0, process_stats = 0, sys_stats = 0;
  size_t with_meminfo = 0, with_cpu_stat = 0;
  for (const TracePacket& p : ReadTrace(path_a)) {
    if (!p.has_process_tree() && !p.has_process_stats() && !p.has_sys_stats()) {
      continue;
    }
    EXPECT_EQ(p.trusted_pid(), probes->pid());
    EXPECT_GT(p.timestamp(), 0u);
    if (p.has_process_tree()) {
      ++trees;
      for (const auto& proc : p.process_tree().processes()) {
        if (proc.pid() != me)
          continue;
        me_described = true;
        EXPECT_EQ(proc.ppid(), getppid());
        EXPECT_EQ(proc.uid(), static_cast<int32_t>(getuid()));
        EXPECT_EQ(std::vector<std::string>(proc.cmdline().begin(),
                                           proc.cmdline().end()),
                  OwnCmdline());
      }
      for (const auto& thread : p.process_tree().threads()) {
        if (thread.tid() == me) {
          me_thread = true;
          EXPECT_EQ(thread.tgid(), me);
          EXPECT_FALSE(thread.name().empty());
        }
      }
    }
    if (p.has_process_stats()) {
      ++process_stats;
      for (const auto& proc : p.process_stats().processes()) {
        if (proc.pid() == me) {
          me_counters = true;
          EXPECT_GT(proc.vm_rss_kb(), 0u);
          EXPECT_GT(proc.vm_size_kb(), proc.vm_rss_kb());
          EXPECT_TRUE(proc.has_oom_score_adj());
        }
      }
    }
    if (p.has_sys_stats()) {
      ++sys_stats;
      const auto& s = p.sys_stats();
      EXPECT_EQ(s.vmstat_size(), 0);  // session B's, not this one's
      if (s.meminfo_size() > 0) {
        ++with_meminfo;
        ASSERT_EQ(s.meminfo_size(), 2);
        EXPECT_EQ(s.meminfo(0).key(), perfetto::protos::MEMINFO_MEM_TOTAL);
        EXPECT_GT(s.meminfo(0).value(), 0u);
        EXPECT_EQ(s.meminfo(1).key(), perfetto::protos::MEMINFO_MEM_AVAILABLE);
        EXPECT_LE(s.meminfo(1).value(), s.meminfo(0).value());
      }
      if (s.cpu_stat_size() > 0) {
        ++with_cpu_stat;
        EXPECT_EQ(static_cast<size_t>(s.cpu_stat_size()), CpuLines());
        EXPECT_GT(s.cpu_stat(0).idle_ns() + s.cpu_stat(0).user_ns(), 0u);
        EXPECT_GT(s.num_forks(), 0u);
        EXPECT_GT(s.num_irq_total(), 0u);
        EXPECT_GT(s.ringtrace_num_context_switches(), 0u);
      }
    }
  }
  EXPECT_TRUE(me_described);
  EXPECT_TRUE(me_thread);
  EXPECT_TRUE(me_counters);
  EXPECT_GE(trees, 1u);
  EXPECT_GE(process_stats, 1u);
  EXPECT_GE(with_meminfo, 1u);
  EXPECT_GE(with_cpu_stat, 1u);

  // Session B: its own instance, its own config.
  size_t b_sys_stats = 0;
  for (const TracePacket& p : ReadTrace(path_b)) {
    EXPECT_FALSE(p.has_process_tree());
    EXPECT_FALSE(p.has_process_stats());
    if (!p.has_sys_stats())
      continue;
    ++b_sys_stats;
    ASSERT_EQ(p.sys_stats().vmstat_size(), 1);
    EXPECT_EQ(p.sys_stats().vmstat(0).key(), perfetto::protos::VMSTAT_PGFAULT);
    EXPECT_GT(p.sys_stats().vmstat(0).value(), 0u);
    EXPECT_EQ(p.sys_stats().meminfo_size(), 0);
    EXPECT_EQ(p.sys_stats().cpu_stat_size(), 0);
  }
  EXPECT_GE(b_sys_stats, 1u);

  const std::string tp = TraceProcessorShellPath();
  if (tp.empty()) {
    GTEST_SKIP() << "no trace_processor_shell: set TRACE_PROCESSOR_SHELL to "
                    "Perfetto's trace_processor_shell";
  }
  std::string csv, error;
  ASSERT_TRUE(RunTraceProcessorQuery(
      tp, path_a, dir_,
      "select pid, name, cmdline from process where pid = " +
          std::to_string(me) + ";",
      &csv, &error))
      << error;
  // trace_processor names a process by its first argument.
  EXPECT_NE(
      csv.find("\n" + std::to_string(me) + ",\"" + OwnCmdline()[0] + "\","),
      std::string::npos)
      << csv;
  // The thread's name from its ProcessTree entry.
  ASSERT_TRUE(RunTraceProcessorQuery(
      tp, path_a, dir_,
      "select count(*) as n from thread where name is not null and tid = " +
          std::to_string(me) + ";",
      &csv, &error))
      << error;
  EXPECT_NE(csv.find("\"n\"\n1\n"), std::string::npos) << csv;
  // Counters of each kind, on the tracks trace_processor names them by:
  // this process's resident set, the system's memory total, CPU times.
  ASSERT_TRUE(RunTraceProcessorQuery(
      tp, path_a, dir_,
      "select (select count(*) from counter c join process_counter_track t "
      "on c.track_id = t.id join process p using (upid) where p.pid = " +
          std::to_string(me) +
          " and t.name = 'mem.rss' and c.value > 0) > 0 as rss, (select "
          "count(*) from counter c join counter_track t on c.track_id = t.id "
          "where t.name = 'MemTotal' and c.value > 0) > 0 as mem_total, "
          "(select count(*) from counter c join counter_track t on "
          "c.track_id = t.id where t.name = 'cpu.times.idle_ns') > 0 as "
          "cpu;",
      &csv, &error))
      << error;
  EXPECT_NE(csv.find("\"rss\",\"mem_total\",\"cpu\"\n1,1,1\n"),
            std::string::npos)
      << csv;
  std::vector<TraceProcessorStat> stats;
  ASSERT_TRUE(QueryNonZeroStats(tp, path_a, dir_, &stats, &error)) << error;
  for (const TraceProcessorStat& stat : stats) {
    EXPECT_NE(stat.severity, "error") << Describe(stat);
    EXPECT_NE(stat.severity, "data_loss") << Describe(stat);
  }
}

// The instances of tracefs named for ringtrace_probes process |pid|.
std::vector<std::string> ProbesInstances(const std::string& root, pid_t pid) {
  std::vector<std::string> out;
  const std::string prefix = "ringtrace_probes_" + std::to_string(pid) + "_";
  DIR* d = opendir((root + "/instances").c_str());
  if (!d)
    return out;
  while (struct dirent* e = readdir(d)) {
    if (std::string(e->d_name).rfind(prefix, 0) == 0)
      out.push_back(e->d_name);
  }
  closedir(d);
  return out;
}

bool WriteMarker(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  const bool ok =
      write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// linux.ftrace through the service: the instance exists while the session
// runs and is gone when its stop returns, the trace has the START and END
// stats (the last drain happened before the stop was acknowledged), the
// sched events in compact form, and an atrace slice this test wrote to the
// top-level trace_marker. Without tracefs (or not root) the instance's
// start fails with the fix named, and the session still ends normally.
TEST_F(ProbesEndToEndTest, KernelSchedEventsThroughTheService) {
  std::string root, why;
  const bool tracefs = ftrace::test::RealTracefs(&root, &why);
  std::unique_ptr<base::Subprocess> service = StartService({});
  ASSERT_TRUE(service);
  std::unique_ptr<consumer::ConsumerClient> c = ConnectConsumer();
  ASSERT_TRUE(c);
  std::unique_ptr<base::Subprocess> probes = StartProbes(c.get());
  ASSERT_TRUE(probes);

  TraceConfig config;
  config.add_buffers()->set_size_kb(16384);
  auto* ds = config.add_data_sources()->mutable_config();
  ds->set_name("linux.ftrace");
  auto* ftrace = ds->mutable_ftrace_config();
  ftrace->add_ftrace_events("sched/sched_switch");
  ftrace->add_ftrace_events("sched/sched_waking");
  ftrace->add_ftrace_events("ftrace/print");
  ftrace->set_buffer_size_kb(1024);
  ftrace->set_drain_period_ms(100);
  ftrace->mutable_compact_sched()->set_enabled(true);
  const std::string path = dir_ + "/ftrace.pftrace";
  base::ScopedFd fd = CreateTraceFile(path);
  uint64_t id = 0;
  ASSERT_TRUE(c->EnableTracing(config, fd.get(), &id).ok());
  const std::string pid = std::to_string(getpid());
  if (tracefs) {
    // The instance is made when the service starts it.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(kTimeoutMs);
    while (ProbesInstances(root, probes->pid()).empty() &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(ProbesInstances(root, probes->pid()).size(), 1u);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_TRUE(
        WriteMarker(root + "/trace_marker", "B|" + pid + "|e2e_marker"));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_TRUE(WriteMarker(root + "/trace_marker", "E|" + pid));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  protos::SessionSummary summary;
  ASSERT_TRUE(c->DisableTracing(id, kTimeoutMs, &summary).ok());
  if (tracefs) {
    EXPECT_TRUE(ProbesInstances(root, probes->pid()).empty());
  }

  probes->Signal(SIGTERM);
  ASSERT_TRUE(probes->Wait(kTimeoutMs));
  EXPECT_EQ(probes->exit_code(), 0) << probes->output();
  const std::string log = probes->output();
  c.reset();
  StopService(service.get(), "ringtraced");
  if (!tracefs) {
    EXPECT_NE(log.find("linux.ftrace instance"), std::string::npos) << log;
    EXPECT_NE(log.find("not started"), std::string::npos) << log;
    EXPECT_NE(log.find("1 linux.ftrace"), std::string::npos) << log;
    GTEST_SKIP() << "linux.ftrace did not start, as it must not: " << why;
  }
  EXPECT_NE(log.find("linux.ftrace instance"), std::string::npos) << log;
  EXPECT_NE(log.find("0 linux.ftrace"), std::string::npos) << log;

  size_t start_stats = 0, end_stats = 0, bundles = 0, compact = 0;
  bool end_last = false;
  for (const TracePacket& p : ReadTrace(path)) {
    if (p.has_ftrace_stats()) {
      EXPECT_EQ(p.trusted_pid(), probes->pid());
      start_stats += p.ftrace_stats().phase() ==
                     perfetto::protos::FtraceStats::START_OF_TRACE;
      if (p.ftrace_stats().phase() ==
          perfetto::protos::FtraceStats::END_OF_TRACE) {
        end_stats++;
        end_last = true;
      }
      EXPECT_GT(p.ftrace_stats().cpu_stats_size(), 0);
    }
    if (p.has_ftrace_events()) {
      EXPECT_EQ(p.trusted_pid(), probes->pid());
      EXPECT_FALSE(end_last) << "a bundle after the END_OF_TRACE stats";
      bundles++;
      compact += static_cast<size_t>(
          p.ftrace_events().compact_sched().switch_timestamp_size());
    }
  }
  EXPECT_EQ(start_stats, 1u);
  EXPECT_EQ(end_stats, 1u);
  EXPECT_GE(bundles, 2u);
  EXPECT_GT(compact, 0u);

  const std::string tp = TraceProcessorShellPath();
  if (tp.empty()) {
    GTEST_SKIP() << "no trace_processor_shell: set TRACE_PROCESSOR_SHELL to "
                    "Perfetto's trace_processor_shell";
  }
  std::string csv, error;
  ASSERT_TRUE(RunTraceProcessorQuery(
      tp, path, dir_,
      "select (select count(*) from sched) > 0 as sched, (select count(*) "
      "from thread_state) > 0 as states, (select count(*) from slice where "
      "name = 'e2e_marker' and dur >= 300000000) as marker;",
      &csv, &error))
      << error;
  EXPECT_NE(csv.find("\"sched\",\"states\",\"marker\"\n1,1,1\n"),
            std::string::npos)
      << csv;
  std::vector<TraceProcessorStat> stats;
  ASSERT_TRUE(QueryNonZeroStats(tp, path, dir_, &stats, &error)) << error;
  for (const TraceProcessorStat& stat : stats) {
    EXPECT_NE(stat.severity, "error") << Describe(stat);
    EXPECT_NE(stat.severity, "data_loss") << Describe(stat);
  }
}

// The print events of a trace, in order.
std::vector<std::string> Prints(const std::vector<TracePacket>& packets) {
  std::vector<std::string> out;
  for (const TracePacket& p : packets)
    for (const auto& e : p.ftrace_events().event())
      if (e.has_print())
        out.push_back(e.print().buf());
  return out;
}

// A consumer's flush drains linux.ftrace before it is acknowledged: with a
// drain period of a minute, a marker written after the first drain is not
// in a clone taken without a flush, and is in the clone taken after one
// (the service's clone itself does not flush); the final trace has it
// once.
TEST_F(ProbesEndToEndTest, AFlushHoldsWhatTheKernelHad) {
  std::string root, why;
  if (!ftrace::test::RealTracefs(&root, &why))
    GTEST_SKIP() << why;
  std::unique_ptr<base::Subprocess> service = StartService({});
  ASSERT_TRUE(service);
  std::unique_ptr<consumer::ConsumerClient> c = ConnectConsumer();
  ASSERT_TRUE(c);
  std::unique_ptr<base::Subprocess> probes = StartProbes(c.get());
  ASSERT_TRUE(probes);

  TraceConfig config;
  config.add_buffers()->set_size_kb(4096);
  auto* ds = config.add_data_sources()->mutable_config();
  ds->set_name("linux.ftrace");
  ds->mutable_ftrace_config()->add_ftrace_events("ftrace/print");
  ds->mutable_ftrace_config()->set_buffer_size_kb(256);
  ds->mutable_ftrace_config()->set_drain_period_ms(60000);
  const std::string path = dir_ + "/flush.pftrace";
  base::ScopedFd fd = CreateTraceFile(path);
  uint64_t id = 0;
  ASSERT_TRUE(c->EnableTracing(config, fd.get(), &id).ok());
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  while (ProbesInstances(root, probes->pid()).empty() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::vector<std::string> instances =
      ProbesInstances(root, probes->pid());
  ASSERT_EQ(instances.size(), 1u);
  // The first drain runs as soon as the instance is on the probes' loop,
  // right after the instance is made; the next one would be in a minute.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(WriteMarker(root + "/instances/" + instances[0] + "/trace_marker",
                          "flushed-marker"));

  const std::string before = dir_ + "/clone_before_flush.pftrace";
  base::ScopedFd before_fd = CreateTraceFile(before);
  ASSERT_TRUE(c->CloneSession(id, before_fd.get()).ok());
  ASSERT_TRUE(c->Flush(id, 0).ok());
  const std::string after = dir_ + "/clone_after_flush.pftrace";
  base::ScopedFd after_fd = CreateTraceFile(after);
  ASSERT_TRUE(c->CloneSession(id, after_fd.get()).ok());
  protos::SessionSummary summary;
  ASSERT_TRUE(c->DisableTracing(id, kTimeoutMs, &summary).ok());
  probes->Signal(SIGTERM);
  ASSERT_TRUE(probes->Wait(kTimeoutMs));
  EXPECT_EQ(probes->exit_code(), 0) << probes->output();
  const std::string log = probes->output();
  c.reset();
  StopService(service.get(), "ringtraced");

  EXPECT_TRUE(Prints(ReadTrace(before)).empty());
  EXPECT_EQ(Prints(ReadTrace(after)),
            std::vector<std::string>{"flushed-marker\n"});
  EXPECT_EQ(Prints(ReadTrace(path)),
            std::vector<std::string>{"flushed-marker\n"});
  EXPECT_NE(log.find("(1 at a flush"), std::string::npos) << log;
}

// On demand: a process started after the session's scan appears in the
// kernel's sched events, and linux.process_stats (with
// scan_all_processes_on_start, no polls) describes it from /proc: its
// ProcessTree entry (ppid, uid, cmdline, threads) is in the trace and
// trace_processor's process table names it with its cmdline. The child
// is a shell that execs /bin/sleep a while after it started, so it is
// first seen (and most often described) as the shell: its exec's
// task/task_rename event has it described again, as /bin/sleep.
TEST_F(ProbesEndToEndTest, AProcessStartedLaterIsDescribedOnDemand) {
  std::string root, why;
  if (!ftrace::test::RealTracefs(&root, &why))
    GTEST_SKIP() << why;
  std::unique_ptr<base::Subprocess> service = StartService({});
  ASSERT_TRUE(service);
  std::unique_ptr<consumer::ConsumerClient> c = ConnectConsumer();
  ASSERT_TRUE(c);
  std::unique_ptr<base::Subprocess> probes = StartProbes(c.get());
  ASSERT_TRUE(probes);

  TraceConfig config;
  config.add_buffers()->set_size_kb(16384);
  auto* ft = config.add_data_sources()->mutable_config();
  ft->set_name("linux.ftrace");
  ft->mutable_ftrace_config()->add_ftrace_events("sched/sched_switch");
  ft->mutable_ftrace_config()->add_ftrace_events("sched/sched_waking");
  ft->mutable_ftrace_config()->add_ftrace_events("task/task_rename");
  ft->mutable_ftrace_config()->set_buffer_size_kb(1024);
  ft->mutable_ftrace_config()->set_drain_period_ms(100);
  auto* ps = config.add_data_sources()->mutable_config();
  ps->set_name("linux.process_stats");
  ps->mutable_process_stats_config()->set_scan_all_processes_on_start(true);
  ps->mutable_process_stats_config()->set_record_thread_names(true);
  const std::string path = dir_ + "/on_demand.pftrace";
  base::ScopedFd fd = CreateTraceFile(path);
  uint64_t id = 0;
  ASSERT_TRUE(c->EnableTracing(config, fd.get(), &id).ok());
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  while (ProbesInstances(root, probes->pid()).empty() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(ProbesInstances(root, probes->pid()).size(), 1u);
  // After the start's scan (its first run, right after the start).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  base::Subprocess child(
      {"/bin/sh", "-c", "sleep 0.25; exec /bin/sleep 30.0625"});
  std::string error;
  ASSERT_TRUE(child.Start(&error)) << error;
  // Several drains after the child exec'd.
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  protos::SessionSummary summary;
  ASSERT_TRUE(c->DisableTracing(id, kTimeoutMs, &summary).ok());
  child.Signal(SIGKILL);
  child.Wait(kTimeoutMs);
  probes->Signal(SIGTERM);
  ASSERT_TRUE(probes->Wait(kTimeoutMs));
  EXPECT_EQ(probes->exit_code(), 0) << probes->output();
  const std::string log = probes->output();
  c.reset();
  StopService(service.get(), "ringtraced");

  // At most three times: when first seen between its fork and its exec
  // (the parent's copy, when the machine is slow to exec), as the shell,
  // then as /bin/sleep; two renames drained together make one entry. The
  // last entry is what it is.
  size_t entries = 0;
  std::vector<std::string> cmdline;
  std::string thread_name;
  for (const TracePacket& p : ReadTrace(path)) {
    for (const auto& proc : p.process_tree().processes()) {
      if (proc.pid() != child.pid())
        continue;
      entries++;
      EXPECT_EQ(proc.ppid(), getpid());
      EXPECT_EQ(proc.uid(), static_cast<int32_t>(getuid()));
      cmdline.assign(proc.cmdline().begin(), proc.cmdline().end());
    }
    for (const auto& t : p.process_tree().threads()) {
      if (t.tid() == child.pid()) {
        EXPECT_EQ(t.tgid(), child.pid());
        thread_name = t.name();
      }
    }
  }
  EXPECT_GE(entries, 1u) << log;
  EXPECT_LE(entries, 3u) << log;
  EXPECT_EQ(cmdline, (std::vector<std::string>{"/bin/sleep", "30.0625"}))
      << log;
  EXPECT_EQ(thread_name, "sleep") << log;
  EXPECT_NE(log.find("on demand: "), std::string::npos) << log;
  // The exec's rename reached the instance.
  EXPECT_EQ(log.find(" 0 renamed tids"), std::string::npos) << log;

  const std::string tp = TraceProcessorShellPath();
  if (tp.empty()) {
    GTEST_SKIP() << "no trace_processor_shell: set TRACE_PROCESSOR_SHELL to "
                    "Perfetto's trace_processor_shell";
  }
  std::string csv;
  ASSERT_TRUE(RunTraceProcessorQuery(
      tp, path, dir_,
      "select pid, name, cmdline from process where pid = " +
          std::to_string(child.pid()) + ";",
      &csv, &error))
      << error;
  EXPECT_NE(csv.find("\n" + std::to_string(child.pid()) +
                     ",\"/bin/sleep\",\"/bin/sleep 30.0625\""),
            std::string::npos)
      << csv;
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
