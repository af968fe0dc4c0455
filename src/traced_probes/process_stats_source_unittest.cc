/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/process_stats_source.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "src/traced_probes/test/fake_proc.h"

namespace ringtrace {
namespace probes {
namespace {

using namespace std::string_literals;  // "a\0b"s keeps the NUL
using perfetto::protos::ProcessStats;
using perfetto::protos::ProcessTree;
using perfetto::protos::TracePacket;
using test::DrainPackets;
using test::FakeProc;

constexpr uint64_t kNsPerTick = 10000000;

struct Tree {
  std::map<int32_t, ProcessTree::Process> processes;
  std::map<int32_t, ProcessTree::Thread> threads;
  size_t packets = 0;
  size_t process_entries = 0;  // repeated ones included
};

Tree TreeOf(const std::vector<TracePacket>& packets) {
  Tree t;
  for (const TracePacket& p : packets) {
    if (!p.has_process_tree())
      continue;
    t.packets++;
    EXPECT_GT(p.timestamp(), 0u);
    EXPECT_GE(p.process_tree().collection_end_timestamp(), p.timestamp());
    EXPECT_LE(static_cast<size_t>(p.process_tree().processes_size() +
                                  p.process_tree().threads_size()),
              kMaxEntriesPerPacket);
    for (const auto& proc : p.process_tree().processes()) {
      t.processes[proc.pid()] = proc;
      t.process_entries++;
    }
    for (const auto& thread : p.process_tree().threads())
      t.threads[thread.tid()] = thread;
  }
  return t;
}

std::map<int32_t, ProcessStats::Process> StatsOf(
    const std::vector<TracePacket>& packets,
    size_t* stats_packets = nullptr) {
  std::map<int32_t, ProcessStats::Process> out;
  size_t n = 0;
  for (const TracePacket& p : packets) {
    if (!p.has_process_stats())
      continue;
    n++;
    EXPECT_GT(p.timestamp(), 0u);
    EXPECT_GE(p.process_stats().collection_end_timestamp(), p.timestamp());
    for (const auto& proc : p.process_stats().processes()) {
      EXPECT_EQ(out.count(proc.pid()), 0u) << proc.pid();
      out[proc.pid()] = proc;
    }
  }
  if (stats_packets)
    *stats_packets = n;
  return out;
}

std::vector<std::string> Cmdline(const ProcessTree::Process& p) {
  return {p.cmdline().begin(), p.cmdline().end()};
}

class ProcessStatsSourceTest : public ::testing::Test {
 protected:
  ProcessStatsSourceTest() {
    // What every /proc has besides the processes.
    proc_.Write("meminfo", "MemTotal: 1 kB\n");
    proc_.MakeDir("self");
    proc_.MakeDir("sys");
    proc_.AddProcess(1, 0, "init", "/sbin/init\0splash\0"s, 5000, {1});
    proc_.AddProcess(2, 0, "kthreadd", "", 0, {2});
    proc_.AddProcess(50, 2, "kworker/0:1", "", 0, {50});
    proc_.AddProcess(300, 1, "app", "/usr/bin/app\0--flag\0"s, 12000,
                     {300, 301, 302});
  }

  ProcessStatsOptions Options() {
    ProcessStatsOptions o;
    o.ns_per_tick = kNsPerTick;
    return o;
  }

  FakeProc proc_;
  encoding::PacketCapture capture_{4096, 512};
  std::atomic<bool> stop_{false};
};

TEST_F(ProcessStatsSourceTest, ScanAllDescribesEveryProcessAndThread) {
  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  o.record_thread_names = true;
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  EXPECT_EQ(source.Run(1000, stop_), kNever);  // no polls
  const Tree t = TreeOf(DrainPackets(&capture_));
  EXPECT_EQ(t.packets, 1u);
  ASSERT_EQ(t.processes.size(), 4u);

  const ProcessTree::Process& init = t.processes.at(1);
  EXPECT_EQ(init.ppid(), 0);
  EXPECT_EQ(init.uid(), 1000);
  EXPECT_EQ(Cmdline(init), (std::vector<std::string>{"/sbin/init", "splash"}));
  EXPECT_FALSE(init.cmdline_is_comm());
  EXPECT_FALSE(init.is_kthread());
  EXPECT_FALSE(init.has_process_start_from_boot());  // not asked for

  // Kernel threads: no command line, their name instead.
  for (int32_t pid : {2, 50}) {
    const ProcessTree::Process& k = t.processes.at(pid);
    EXPECT_TRUE(k.cmdline_is_comm()) << pid;
    EXPECT_TRUE(k.is_kthread()) << pid;
  }
  EXPECT_EQ(Cmdline(t.processes.at(50)),
            (std::vector<std::string>{"kworker/0:1"}));

  const ProcessTree::Process& app = t.processes.at(300);
  EXPECT_EQ(app.ppid(), 1);
  EXPECT_EQ(Cmdline(app), (std::vector<std::string>{"/usr/bin/app", "--flag"}));
  // Every thread, the main one included, named.
  ASSERT_EQ(t.threads.size(), 6u);
  for (int32_t tid : {300, 301, 302}) {
    EXPECT_EQ(t.threads.at(tid).tgid(), 300);
    EXPECT_EQ(t.threads.at(tid).name(), "app-" + std::to_string(tid));
  }
  EXPECT_EQ(t.threads.at(1).tgid(), 1);

  const ProcessStatsCounters& c = source.counters();
  EXPECT_EQ(c.processes_described, 4u);
  EXPECT_EQ(c.threads_described, 6u);
  EXPECT_EQ(c.packets, 1u);
  EXPECT_EQ(c.scan.vanished + c.scan.unreadable + c.scan.malformed +
                c.scan.truncated + c.scan.over_limit,
            0u);
}

TEST_F(ProcessStatsSourceTest, ThreadsWithoutNamesAndWithoutTheMainThread) {
  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  o.skip_main_thread_message = true;
  o.record_process_age = true;
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  source.Run(1000, stop_);
  const Tree t = TreeOf(DrainPackets(&capture_));
  // Only 301 and 302: every other process has only its main thread.
  ASSERT_EQ(t.threads.size(), 2u);
  EXPECT_FALSE(t.threads.at(301).has_name());
  EXPECT_EQ(t.threads.at(302).tgid(), 300);
  EXPECT_EQ(t.processes.at(300).process_start_from_boot(), 100 * kNsPerTick);
}

TEST_F(ProcessStatsSourceTest,
       HostileAndVanishingProcessesAreSkippedAndCounted) {
  // A directory whose process ended before its files were read.
  proc_.MakeDir("400");
  // Garbage instead of a status.
  proc_.Write("401/status", std::string(3000, '\xff') + "\n");
  // Another process's status (a pid reused between listing and reading
  // would look like this with a path-based read).
  proc_.AddProcess(402, 1, "liar", "liar\0"s, 10, {402});
  proc_.Write("402/status", "Name:\tliar\nPid:\t9999\n");
  // A status far longer than any real one, a huge command line and a
  // status whose counters are cut off mid-line.
  proc_.AddProcess(403, 1, "big", std::string(100000, 'a'), 10, {403});
  proc_.Write("403/status", "Name:\tbig\nPid:\t403\nPPid:\t1\n" +
                                std::string(kMaxStatusBytes * 2, '\n'));
  proc_.AddProcess(404, 1, "cut", "cut\0"s, 10, {404, 405});
  proc_.Write("404/status", "Name:\tcut\nPid:\t404\nPPid:\t1\nVmRSS:\t 12");
  // A thread that ended between the listing of task/ and its comm.
  proc_.Remove("404/task/405/comm");
  // Names that are not pids.
  proc_.MakeDir("0");
  proc_.MakeDir("-3");
  proc_.MakeDir("12abc");
  proc_.MakeDir("99999999999");

  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  o.record_thread_names = true;
  o.proc_stats_poll_ms = 100;
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  source.Run(1000, stop_);
  const std::vector<TracePacket> packets = DrainPackets(&capture_);
  const Tree t = TreeOf(packets);
  EXPECT_EQ(t.processes.count(400), 0u);
  EXPECT_EQ(t.processes.count(401), 0u);
  EXPECT_EQ(t.processes.count(402), 0u);
  ASSERT_EQ(t.processes.count(403), 1u);
  ASSERT_EQ(Cmdline(t.processes.at(403)).size(), 1u);
  EXPECT_EQ(Cmdline(t.processes.at(403))[0].size(), kMaxCmdlineBytes);
  ASSERT_EQ(t.processes.count(404), 1u);
  EXPECT_EQ(t.threads.count(404), 1u);
  EXPECT_EQ(t.threads.count(405), 0u);
  // The good ones are all there.
  for (int32_t pid : {1, 2, 50, 300})
    EXPECT_EQ(t.processes.count(pid), 1u) << pid;
  // The cut-off VmRSS is not a counter; 403 and 404 have none at all.
  const auto stats = StatsOf(packets);
  EXPECT_EQ(stats.count(403), 0u);
  EXPECT_EQ(stats.count(404), 0u);
  EXPECT_EQ(stats.count(300), 1u);

  const ScanCounters& s = source.counters().scan;
  // 400's status, in the scan and in the poll; 405's comm.
  EXPECT_EQ(s.vanished, 3u);
  // 401 (no pid), 402 (another pid), 404 (a line cut off), each in the
  // scan and in the poll.
  EXPECT_EQ(s.malformed, 6u);
  // 403's status twice and its command line once.
  EXPECT_EQ(s.truncated, 3u);
  EXPECT_EQ(s.unreadable, 0u);
}

TEST_F(ProcessStatsSourceTest, PollWritesTheCountersOfProcessesWithMemory) {
  ProcessStatsOptions o = Options();
  o.proc_stats_poll_ms = 250;
  o.record_process_runtime = true;
  proc_.Write("300/oom_score_adj", "-900\n");
  proc_.Write("1/oom_score_adj", "oops\n");
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  EXPECT_EQ(source.Run(1000, stop_), 1250u);
  std::vector<TracePacket> packets = DrainPackets(&capture_);
  // No ProcessTree without scan_all_processes_on_start.
  EXPECT_EQ(TreeOf(packets).packets, 0u);
  size_t n = 0;
  auto stats = StatsOf(packets, &n);
  EXPECT_EQ(n, 1u);
  // Kernel threads have no memory counters: not written.
  ASSERT_EQ(stats.size(), 2u);
  const ProcessStats::Process& app = stats.at(300);
  EXPECT_EQ(app.vm_rss_kb(), 12000u);
  EXPECT_EQ(app.vm_size_kb(), 48000u);
  EXPECT_EQ(app.rss_anon_kb(), 6000u);
  EXPECT_EQ(app.rss_file_kb(), 6000u);
  EXPECT_TRUE(app.has_vm_swap_kb());
  EXPECT_EQ(app.vm_swap_kb(), 0u);
  EXPECT_FALSE(app.has_vm_locked_kb());  // not in its status
  EXPECT_EQ(app.oom_score_adj(), -900);
  EXPECT_EQ(app.runtime_user_mode(), 7 * kNsPerTick);
  EXPECT_EQ(app.runtime_kernel_mode(), 3 * kNsPerTick);
  EXPECT_FALSE(stats.at(1).has_oom_score_adj());  // malformed: left out
  EXPECT_EQ(source.counters().scan.malformed, 1u);

  // The next poll sees the new value; a late run skips the periods it
  // missed.
  proc_.AddProcess(300, 1, "app", "/usr/bin/app\0"s, 13000, {300});
  EXPECT_EQ(source.Run(1250, stop_), 1500u);
  stats = StatsOf(DrainPackets(&capture_));
  EXPECT_EQ(stats.at(300).vm_rss_kb(), 13000u);
  EXPECT_EQ(source.Run(2300, stop_), 2500u);
  EXPECT_EQ(source.counters().polls, 3u);
  EXPECT_EQ(source.counters().polls_missed, 3u);  // 1750, 2000, 2250
  EXPECT_EQ(StatsOf(DrainPackets(&capture_)).size(), 2u);
}

TEST_F(ProcessStatsSourceTest, PollsDescribeNewcomersAndReusedPids) {
  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  o.proc_stats_poll_ms = 100;
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  source.Run(1000, stop_);
  // The scan, then a poll that finds nobody new.
  EXPECT_EQ(TreeOf(DrainPackets(&capture_)).process_entries, 4u);

  proc_.AddProcess(500, 300, "child", "child\0"s, 100, {500});
  source.Run(1100, stop_);
  std::vector<TracePacket> packets = DrainPackets(&capture_);
  Tree t = TreeOf(packets);
  ASSERT_EQ(t.process_entries, 1u);
  EXPECT_EQ(Cmdline(t.processes.at(500)), (std::vector<std::string>{"child"}));
  EXPECT_EQ(StatsOf(packets).count(500), 1u);
  // The description comes before the counters.
  ASSERT_GE(packets.size(), 2u);
  EXPECT_TRUE(packets[0].has_process_tree());
  EXPECT_TRUE(packets.back().has_process_stats());

  // 500 exits and its pid goes to a new process (another start time).
  proc_.AddProcess(500, 1, "other", "other\0"s, 100, {500}, 777);
  source.Run(1200, stop_);
  t = TreeOf(DrainPackets(&capture_));
  ASSERT_EQ(t.process_entries, 1u);
  EXPECT_EQ(Cmdline(t.processes.at(500)), (std::vector<std::string>{"other"}));
  source.Run(1300, stop_);
  EXPECT_EQ(TreeOf(DrainPackets(&capture_)).process_entries, 0u);
}

TEST_F(ProcessStatsSourceTest, ManyProcessesMakeSeveralBoundedPackets) {
  for (int32_t pid = 1000; pid < 1300; pid++)
    proc_.AddProcess(pid, 1, "many", "many\0"s, 10, {pid});
  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  o.proc_stats_poll_ms = 100;
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  source.Run(1000, stop_);
  const std::vector<TracePacket> packets = DrainPackets(&capture_);
  const Tree t = TreeOf(packets);  // checks the bound per packet
  EXPECT_EQ(t.processes.size(), 304u);
  EXPECT_EQ(t.threads.size(), 306u);
  EXPECT_GE(t.packets, 3u);  // 610 entries
  size_t stats_packets = 0;
  const auto stats = StatsOf(packets, &stats_packets);
  EXPECT_EQ(stats.size(), 302u);  // not the two kernel threads
  EXPECT_GE(stats_packets, 2u);
}

// A thread's /proc/TID (there, not listed, in a real /proc): its status
// with its process's Tgid and its own name.
void AddThreadDir(FakeProc* proc,
                  int32_t tid,
                  int32_t tgid,
                  const std::string& name) {
  proc->Write(std::to_string(tid) + "/status",
              "Name:\t" + name + "\nTgid:\t" + std::to_string(tgid) +
                  "\nPid:\t" + std::to_string(tid) + "\nPPid:\t1\n");
}

// On demand: tids from the kernel's events that name a process started
// after the scan describe it once (cmdline, threads); a new thread of a
// described process gets its thread entry; known tids, a tid that is gone
// and a repeat write nothing; a flush describes what is pending.
TEST_F(ProcessStatsSourceTest, OnDemandDescribesNewcomersOnce) {
  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  o.record_thread_names = true;
  o.on_demand = true;
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  EXPECT_EQ(source.Run(1000, stop_), kNever);
  EXPECT_EQ(TreeOf(DrainPackets(&capture_)).processes.size(), 4u);

  // Started after the scan: process 400 (threads 400, 401), and thread
  // 303 of the described app 300.
  proc_.AddProcess(400, 300, "late", "/usr/bin/late\0--x\0"s, 800, {400, 401});
  AddThreadDir(&proc_, 401, 400, "late-401");
  AddThreadDir(&proc_, 303, 300, "worker");
  source.AddPending({1, 300, 401, 303, 999}, 0);
  EXPECT_EQ(source.Run(1001, stop_), kNever);
  Tree t = TreeOf(DrainPackets(&capture_));
  ASSERT_EQ(t.processes.size(), 1u);
  const ProcessTree::Process& late = t.processes.at(400);
  EXPECT_EQ(late.ppid(), 300);
  EXPECT_EQ(Cmdline(late), (std::vector<std::string>{"/usr/bin/late", "--x"}));
  ASSERT_EQ(t.threads.size(), 3u);
  EXPECT_EQ(t.threads.at(400).tgid(), 400);
  EXPECT_EQ(t.threads.at(401).tgid(), 400);
  EXPECT_EQ(t.threads.at(401).name(), "late-401");
  EXPECT_EQ(t.threads.at(303).tgid(), 300);
  EXPECT_EQ(t.threads.at(303).name(), "worker");
  const ProcessStatsCounters& c = source.counters();
  EXPECT_EQ(c.on_demand_lookups, 5u);
  EXPECT_EQ(c.on_demand_processes, 1u);
  EXPECT_EQ(c.on_demand_threads, 1u);
  EXPECT_EQ(c.scan.vanished, 1u);  // 999

  // Again: nothing new.
  source.AddPending({400, 401, 303}, 0);
  source.Run(1002, stop_);
  EXPECT_EQ(TreeOf(DrainPackets(&capture_)).packets, 0u);

  // A flush describes what is pending at once.
  proc_.AddProcess(500, 1, "later", "/usr/bin/later\0"s, 800, {500});
  source.AddPending({500}, 0);
  source.Flush(stop_);
  t = TreeOf(DrainPackets(&capture_));
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(Cmdline(t.processes.at(500)),
            (std::vector<std::string>{"/usr/bin/later"}));
  EXPECT_EQ(source.counters().on_demand_processes, 2u);
}

// The race an exec makes: a process described on demand between its fork
// and its exec has its parent's command line. Seen again, it is not looked
// up again; renamed (task/task_rename), it is described again as it is
// now, and a renamed thread gets its thread entry again with its new
// name. A renamed tid of a process not described yet is described once,
// as any newcomer.
TEST_F(ProcessStatsSourceTest, OnDemandDescribesARenamedProcessAgain) {
  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  o.record_thread_names = true;
  o.on_demand = true;
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  source.Run(1000, stop_);
  DrainPackets(&capture_);

  // Forked by app 300, not exec'd yet: app's command line.
  proc_.AddProcess(400, 300, "app", "/usr/bin/app\0--flag\0"s, 800, {400});
  source.AddPending({400}, 0);
  source.Run(1001, stop_);
  Tree t = TreeOf(DrainPackets(&capture_));
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(Cmdline(t.processes.at(400)),
            (std::vector<std::string>{"/usr/bin/app", "--flag"}));

  // It execs /usr/bin/late (same pid, same start time).
  proc_.AddProcess(400, 300, "late", "/usr/bin/late\0"s, 800, {400});
  source.AddPending({400}, 0);
  source.Run(1002, stop_);
  EXPECT_EQ(TreeOf(DrainPackets(&capture_)).packets, 0u);
  source.AddRenamed({400});
  EXPECT_EQ(source.pending(), 1u);
  source.Run(1003, stop_);
  t = TreeOf(DrainPackets(&capture_));
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.process_entries, 1u);
  EXPECT_EQ(t.processes.at(400).ppid(), 300);
  EXPECT_EQ(Cmdline(t.processes.at(400)),
            (std::vector<std::string>{"/usr/bin/late"}));
  ASSERT_EQ(t.threads.size(), 1u);
  EXPECT_EQ(t.threads.at(400).name(), "late");

  // App's thread 301 names itself; process 500 is renamed before it was
  // ever described.
  AddThreadDir(&proc_, 301, 300, "renamed-301");
  proc_.AddProcess(500, 1, "later", "/usr/bin/later\0"s, 800, {500});
  source.AddRenamed({301, 500});
  source.Run(1004, stop_);
  t = TreeOf(DrainPackets(&capture_));
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(Cmdline(t.processes.at(500)),
            (std::vector<std::string>{"/usr/bin/later"}));
  EXPECT_EQ(t.threads.at(301).tgid(), 300);
  EXPECT_EQ(t.threads.at(301).name(), "renamed-301");

  const ProcessStatsCounters& c = source.counters();
  EXPECT_EQ(c.on_demand_lookups, 5u);
  EXPECT_EQ(c.on_demand_renamed, 3u);
  EXPECT_EQ(c.on_demand_redescribed, 1u);
  EXPECT_EQ(c.on_demand_processes, 2u);  // 400 (once), 500
  EXPECT_EQ(c.on_demand_threads, 1u);    // 301

  // Without on_demand, renamed tids are ignored too.
  ProcessStatsOptions off = Options();
  off.scan_all_processes_on_start = true;
  ProcessStatsSource quiet(off, capture_.writer(), proc_.root());
  quiet.AddRenamed({400});
  EXPECT_EQ(quiet.pending(), 0u);
}

TEST_F(ProcessStatsSourceTest, WithoutOnDemandTidsAreIgnored) {
  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  source.Run(1000, stop_);
  DrainPackets(&capture_);
  proc_.AddProcess(400, 300, "late", "/usr/bin/late\0"s, 800, {400});
  source.AddPending({400}, 0);
  EXPECT_EQ(source.pending(), 0u);
  source.Run(1001, stop_);
  EXPECT_EQ(TreeOf(DrainPackets(&capture_)).packets, 0u);
  EXPECT_EQ(source.counters().on_demand_lookups, 0u);
}

// A burst of new processes (a fork bomb): at most kMaxOnDemandTidsPerSecond
// lookups per second, the rest deferred (counted) and described in the
// next seconds, each once; at most kMaxPendingTids wait, more are dropped
// (counted).
TEST_F(ProcessStatsSourceTest, OnDemandIsBoundedPerSecond) {
  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  o.on_demand = true;
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  source.Run(1000, stop_);
  DrainPackets(&capture_);
  constexpr int32_t kNew = 300;
  std::vector<int32_t> tids;
  for (int32_t pid = 1000; pid < 1000 + kNew; pid++) {
    proc_.AddProcess(pid, 1, "bomb", "bomb\0"s, 10, {pid});
    tids.push_back(pid);
  }
  source.AddPending(tids, 0);
  constexpr uint32_t kRate = kMaxOnDemandTidsPerSecond;
  // Due again when the second is over, not before.
  EXPECT_EQ(source.Run(5000, stop_), 5000 + kOnDemandWindowMs);
  EXPECT_EQ(source.counters().on_demand_processes, kRate);
  EXPECT_EQ(source.counters().on_demand_deferred, kNew - kRate);
  source.Run(5500, stop_);  // the same second: nothing more
  EXPECT_EQ(source.counters().on_demand_processes, kRate);
  EXPECT_EQ(source.counters().on_demand_deferred, 2 * (kNew - kRate));
  source.Run(6000, stop_);
  EXPECT_EQ(source.counters().on_demand_processes, 2 * kRate);
  EXPECT_EQ(source.Run(7000, stop_), kNever);
  EXPECT_EQ(source.counters().on_demand_processes, static_cast<uint64_t>(kNew));
  EXPECT_EQ(TreeOf(DrainPackets(&capture_)).processes.size(),
            static_cast<size_t>(kNew));

  std::vector<int32_t> flood;
  for (int32_t tid = 100000; tid < 100000 + 5000; tid++)
    flood.push_back(tid);
  source.AddPending(flood, 7);
  EXPECT_EQ(source.pending(), kMaxPendingTids);
  EXPECT_EQ(source.counters().on_demand_dropped, 5000 - kMaxPendingTids + 7);
}

// Processes that rename themselves over and over (any user's can): each
// rename is a lookup under the same rate and the same bound as a new tid,
// so a flood of renames makes the producer describe at most
// kMaxOnDemandTidsPerSecond processes again per second, and a queue past
// kMaxPendingTids drops (counted) instead of growing.
TEST_F(ProcessStatsSourceTest, RenamesAreBoundedLikeNewcomers) {
  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  o.on_demand = true;
  constexpr int32_t kRenamers = 200;
  std::vector<int32_t> tids;
  for (int32_t pid = 1000; pid < 1000 + kRenamers; pid++) {
    proc_.AddProcess(pid, 1, "renamer", "renamer\0"s, 10, {pid});
    tids.push_back(pid);
  }
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  source.Run(1000, stop_);  // the scan describes them all
  DrainPackets(&capture_);
  source.AddRenamed(tids);
  source.AddRenamed(tids);  // renamed again before the lookup: once
  EXPECT_EQ(source.pending(), static_cast<size_t>(kRenamers));
  constexpr uint32_t kRate = kMaxOnDemandTidsPerSecond;
  EXPECT_EQ(source.Run(5000, stop_), 5000 + kOnDemandWindowMs);
  EXPECT_EQ(source.counters().on_demand_redescribed, kRate);
  EXPECT_EQ(source.counters().on_demand_deferred, kRenamers - kRate);
  EXPECT_EQ(source.Run(6000, stop_), kNever);
  EXPECT_EQ(source.counters().on_demand_redescribed,
            static_cast<uint64_t>(kRenamers));
  EXPECT_EQ(TreeOf(DrainPackets(&capture_)).process_entries,
            static_cast<size_t>(kRenamers));

  std::vector<int32_t> flood;
  for (int32_t tid = 100000; tid < 100000 + 5000; tid++)
    flood.push_back(tid);
  source.AddRenamed(flood);
  EXPECT_EQ(source.pending(), kMaxPendingTids);
  EXPECT_EQ(source.counters().on_demand_dropped, 5000 - kMaxPendingTids);
}

TEST_F(ProcessStatsSourceTest, NoPacketBeginsOnceStopIsSet) {
  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  o.proc_stats_poll_ms = 100;
  ProcessStatsSource source(o, capture_.writer(), proc_.root());
  stop_.store(true);
  source.Run(1000, stop_);
  EXPECT_TRUE(DrainPackets(&capture_).empty());
  EXPECT_EQ(source.counters().runs_cut_short, 1u);
  EXPECT_EQ(source.counters().packets, 0u);
}

TEST_F(ProcessStatsSourceTest, ANonexistentRootIsCountedNotFatal) {
  ProcessStatsOptions o = Options();
  o.scan_all_processes_on_start = true;
  o.proc_stats_poll_ms = 100;
  ProcessStatsSource source(o, capture_.writer(), proc_.root() + "/nothing");
  EXPECT_EQ(source.Run(1000, stop_), 1100u);
  EXPECT_TRUE(DrainPackets(&capture_).empty());
  EXPECT_EQ(source.counters().scan.vanished, 2u);  // the scan and the poll
}

}  // namespace
}  // namespace probes
}  // namespace ringtrace
